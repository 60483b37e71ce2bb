#!/usr/bin/env bash
# Fuzz kelvin's readers with libFuzzer (clang; scripts/install-deps.sh --fuzz installs it).
#   tests/fuzz/run.sh --smoke            CI: every harness for 20 s from the committed corpus (2 at a time)
#   tests/fuzz/run.sh --runs N [NAMES]   a campaign: N executions per harness (e.g. --runs 1000000)
#   tests/fuzz/run.sh --time S [NAMES]   a campaign: S seconds per harness
#   --merge                              afterwards, minimise the grown corpus into tests/fuzz/corpus (-merge=1)
# Builds build-fuzz/ (clang, ASan + UBSan + libFuzzer coverage) when needed. Prints one line per harness:
# executions, and the crash/leak/timeout/oom artifacts it left (in build-fuzz/artifacts/NAME). Exit 1 if
# any harness found something, 0 otherwise; 77 if clang is missing (the smoke run is then skipped).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
all=(settings sweep_config scenarios scene robot_yaml urdf mesh path_csv target_csv pass_csv ply urdf_dup)
mode=time; amount=20; merge=0; smoke=0; names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1; mode=time; amount=20 ;;
    --runs) mode=runs; amount=$2; shift ;;
    --time) mode=time; amount=$2; shift ;;
    --merge) merge=1 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "fuzz: unknown option '$1' (try --help)" >&2; exit 2 ;;
    *) names+=("$1") ;;
  esac
  shift
done
[ ${#names[@]} -gt 0 ] || names=("${all[@]}")
if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz: clang not found: skipping the fuzz run (scripts/install-deps.sh --fuzz installs it)"
  exit 77
fi
echo "fuzz: building build-fuzz (clang, ASan + UBSan, libFuzzer)"
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKELVIN_FUZZ=ON \
  -DKELVIN_SANITIZE=ON -DKELVIN_BENCHMARKS=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzzers >/dev/null
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0"
work=$(mktemp -d "${TMPDIR:-/tmp}/kelvin-fuzz-XXXXXX")
trap 'rm -rf "$work"' EXIT
one() { # NAME: fuzz it, print its line
  local n=$1 exe="$root/build-fuzz/tests/fuzz/fuzz_$1" art="$root/build-fuzz/artifacts/$1"
  mkdir -p "$work/$n" "$art"
  cp "$root/tests/fuzz/corpus/$n/"* "$work/$n/" 2>/dev/null || true
  local lim=(-timeout=10 -rss_limit_mb=2048 -max_len=8192 -artifact_prefix="$art/" -print_final_stats=1)
  if [ "$mode" = runs ]; then lim+=(-runs="$amount"); else lim+=(-max_total_time="$amount"); fi
  local rc=0
  "$exe" "${lim[@]}" "$work/$n" >"$work/$n.log" 2>&1 || rc=$?
  local execs found
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$n.log" | grep -o '[0-9]*$' || echo 0)
  found=$(ls "$art" | grep -cE '^(crash|leak|timeout|oom|slow-unit)-' || true)
  printf 'fuzz: %-13s %10s executions, %s artifacts%s\n' "$n" "${execs:-0}" "$found" \
    "$([ $rc -ne 0 ] && echo " (exit $rc; log: $(grep -m1 -E 'ERROR|SUMMARY' "$work/$n.log" || true))")"
  if [ "$merge" = 1 ]; then
    mkdir -p "$work/$n.min"
    "$exe" -merge=1 -timeout=10 -rss_limit_mb=2048 -max_len=8192 "$work/$n.min" "$root/tests/fuzz/corpus/$n" "$work/$n" \
      >/dev/null 2>&1
    rm -rf "$root/tests/fuzz/corpus/$n" && mv "$work/$n.min" "$root/tests/fuzz/corpus/$n"
  fi
  [ $rc -eq 0 ] && [ "$found" -eq 0 ]
}
status=0
if [ "$smoke" = 1 ]; then # two at a time: the machine's two cores
  pids=()
  for n in "${names[@]}"; do
    one "$n" & pids+=($!)
    if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}" || status=1; pids=("${pids[@]:1}"); fi
  done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
else
  for n in "${names[@]}"; do one "$n" || status=1; done
fi
exit $status
