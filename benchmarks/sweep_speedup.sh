#!/usr/bin/env bash
# benchmarks/sweep_speedup.sh: the sweep's speed-up since issue 37 was filed, like for like. The same benchmark
# (benchmarks/sweep_throughput: the mix of the 8 model combinations at P = 1e6 scenarios, each binary checking its
# results before it prints a rate) built from the sources of the commit before the issue's work (--base, default
# 4cff698: the issue measured its mix) and from this build, run on the same machine one after the other, alternating,
# R rounds. Per path (OpenCL, the OpenMP twin) the median over the rounds of each binary's rate (itself a median of
# 3 repeats), the ratio of the medians, and the best path's against the best path's (the issue: >= 30x).
#   benchmarks/sweep_speedup.sh [--kelvin PATH] [--base REV] [--rounds R] [--p P]
# The base is built once beside the build folder of PATH (BUILD-base-REV/, so that nothing looking for a benchmark
# inside BUILD finds the base's), from `git archive REV`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kelvin="$root/build/kelvin"
base=4cff698
rounds=3
P=1000000
while [ $# -gt 0 ]; do
  case "$1" in
    --kelvin) kelvin=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --p) P=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sweep_speedup.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
build=$(cd "$(dirname "$kelvin")" && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
say() { echo "sweep_speedup.sh: $*" >&2; }

rev=$(git -C "$root" rev-parse --short "$base^{commit}") || { say "no commit '$base' in $root"; exit 1; }
dir="$build-base-$rev"
if [ ! -d "$dir/src" ]; then
  say "sources of $rev into $dir/src"
  rm -rf "$dir" && mkdir -p "$dir/src"
  git -C "$root" archive "$rev" | tar -x -C "$dir/src"
fi
say "building sweep_throughput of $rev and of this build"
cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DKELVIN_BENCHMARKS=ON > "$dir/configure.log" 2>&1 ||
  { tail -20 "$dir/configure.log" >&2; exit 1; }
cmake --build "$dir/build" -j"$jobs" --target sweep_throughput > "$dir/build.log" 2>&1 || { tail -20 "$dir/build.log" >&2; exit 1; }
cmake --build "$build" -j"$jobs" --target sweep_throughput > "$dir/build-head.log" 2>&1 ||
  { tail -20 "$dir/build-head.log" >&2; exit 1; }
exe_base=$(find "$dir/build" -type f -name sweep_throughput -perm -u+x | head -n 1)
exe_head=$(find "$build" -type f -name sweep_throughput -perm -u+x | head -n 1)
[ -n "$exe_base" ] && [ -n "$exe_head" ] || { say "a sweep_throughput binary is missing"; exit 1; }

# the mix row of P: its OpenCL and OpenMP rates (columns 2 and 3 of the first table)
label=$P
[[ $P =~ ^10+$ ]] && label="10^$((${#P} - 1))" # sweep_throughput writes a power of ten as 10^k
mixrow() {
  (cd "$2" && "$1" --min-p "$P" --max-p "$P" --serial-max-p 1000 --repeats 3) 2> /dev/null |
    awk -F'|' -v l="$label" '{ gsub(/ /, "", $2) } $2 == l && !seen { gsub(/ /, "", $3); gsub(/ /, "", $4); print $3, $4; seen = 1 }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

rows=()
: > "$dir/rates"
for r in $(seq 1 "$rounds"); do
  say "round $r of $rounds: $rev"
  b=$(mixrow "$exe_base" "$dir/src")
  say "round $r of $rounds: this build"
  h=$(mixrow "$exe_head" "$root")
  [ -n "$b" ] && [ -n "$h" ] || { say "a run printed no mix row for P = $P"; exit 1; }
  echo "$b $h" >> "$dir/rates"
  rows+=("| $r | $(echo "$b $h" | awk '{ printf "%.3g | %.3g | %.3g | %.3g", $1, $2, $3, $4 }') |")
done
mb_cl=$(awk '{ print $1 }' "$dir/rates" | median); mb_mp=$(awk '{ print $2 }' "$dir/rates" | median)
mh_cl=$(awk '{ print $3 }' "$dir/rates" | median); mh_mp=$(awk '{ print $4 }' "$dir/rates" | median)
head_rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "this build")

echo "The mix at P = $P (the 8 model combinations in equal shares), scenarios/s, this machine, alternating runs of"
echo "benchmarks/sweep_throughput built at $rev (before issue 37's work) and at $head_rev; each rate a median of 3 repeats:"
echo
echo "| round | $rev OpenCL | $rev OpenMP twin | $head_rev OpenCL | $head_rev OpenMP twin |"
echo "|---:|---:|---:|---:|---:|"
for row in "${rows[@]}"; do echo "$row"; done
awk -v a="$mb_cl" -v b="$mb_mp" -v c="$mh_cl" -v d="$mh_mp" 'BEGIN {
  printf "| median | %.3g | %.3g | %.3g | %.3g |\n\n", a, b, c, d
  bb = a > b ? a : b; bh = c > d ? c : d
  printf "Speed-up of the medians: OpenCL %.1fx, OpenMP twin %.1fx; best path to best path %.1fx (%s %.3g against %s %.3g).\n",
    c / a, d / b, bh / bb, (c > d ? "OpenCL" : "twin"), bh, (a > b ? "OpenCL" : "twin"), bb }'
