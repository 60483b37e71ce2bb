#!/usr/bin/env bash
# tests/oclgrind_test.sh KELVIN SOURCE_DIR [SCEN_TEST]: kelvin's OpenCL kernels on small batches under
# Oclgrind, the OpenCL device simulator (Debian package oclgrind), with its API, uninitialised-value and data-race
# checks: kelvin sweep (kernels/impact.cl, its fast kernels too) and kelvin optimise with both methods (kernels/rollout.cl,
# the tangent-linear kernel, CLBlast's GEMM) and, given SCEN_TEST, the scenario batch (kl_grind_scen_batch,
# through tests/scen_batch_test.c's --oclgrind mode: no kelvin command runs it yet). Portability to
# devices we cannot run: a read of uninitialised memory, a race between work-items or a misused API call that pocl forgives shows here.
# Every command runs with --quiet, which prints nothing on success, so any output is a report: the test
# fails on any output or a non-zero exit. Exit 77 (skipped) without oclgrind.
set -euo pipefail
kelvin=$1
src=$2
if ! command -v oclgrind >/dev/null 2>&1; then
  echo "oclgrind_test: oclgrind not found (scripts/install-deps.sh installs it): skipped"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/kelvin-oclgrind-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0
run() { # NAME ARGS...: kelvin ARGS under oclgrind; its output must be empty
  local name=$1 rc=0
  shift
  oclgrind --check-api --uninitialized --data-races "$kelvin" "$@" --device Oclgrind --quiet \
    --out "$work/$name" >"$work/$name.log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] || [ -s "$work/$name.log" ]; then
    echo "oclgrind_test: $name: exit $rc, Oclgrind or kelvin said:"
    head -60 "$work/$name.log"
    fail=1
  else
    echo "oclgrind_test: $name: no report"
  fi
}
run sweep sweep "$src/tests/data/oclgrind/sweep.yaml"
run sweep_general sweep "$src/tests/data/oclgrind/sweep_general.yaml"
run sweep_fast sweep "$src/tests/data/oclgrind/sweep_fast.yaml"
run optimise_lm optimise "$src/tests/data/oclgrind/optimise_lm.yaml"
run optimise_nlopt optimise "$src/tests/data/oclgrind/optimise_nlopt.yaml"
if [ -n "${3:-}" ]; then # the scenario batch: 2 candidates x 2 scenarios, silent on success
  rc=0
  KELVIN_DEVICE=Oclgrind oclgrind --check-api --uninitialized --data-races "$3" --oclgrind >"$work/scen.log" 2>&1 ||
    rc=$?
  if [ "$rc" -ne 0 ] || [ -s "$work/scen.log" ]; then
    echo "oclgrind_test: scen_batch: exit $rc, Oclgrind or the test said:"
    head -60 "$work/scen.log"
    fail=1
  else
    echo "oclgrind_test: scen_batch: no report"
  fi
fi
exit "$fail"
