#!/usr/bin/env bash
# tests/build_programs.sh KELVIN SOURCE_DIR: the ctest fixture kl_programs (tests/CMakeLists.txt). Builds the
# OpenCL programs once, on the default device, into the OpenCL driver's cache (pocl's POCL_CACHE_DIR)
# before the tests that use them, so that none of those pays a cold build under its own timeout on a busy
# machine: kelvin on the three small inputs of tests/oclgrind_test.sh, which between them run every kernel
# (impact.cl with samples, rollout.cl and its tangent-linear kernel, CLBlast's GEMM). Without an OpenCL
# device they run on the OpenMP twin and build nothing. Any failure or output fails the fixture.
set -euo pipefail
kelvin=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/kelvin-programs-XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
"$kelvin" sweep "$src/tests/data/oclgrind/sweep.yaml" --quiet --out "$work/sweep"
"$kelvin" optimise "$src/tests/data/oclgrind/optimise_lm.yaml" --quiet --out "$work/lm"
"$kelvin" optimise "$src/tests/data/oclgrind/optimise_nlopt.yaml" --quiet --out "$work/nlopt"
echo "build_programs: the OpenCL programs built or found in the cache in $(($(date +%s) - start)) s"
