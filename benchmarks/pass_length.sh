#!/usr/bin/env bash
# benchmarks/pass_length.sh: `kelvin optimise` on passes 1, 2, 4 and 8 times the built-in example's
# length (120 mm) at its sample spacing (0.5 mm), on a cylinder of radius 2 m tilted 0.3 degrees against
# its CAD (the tilt's deviation grows with the length: 0.3 mm at x1, 2.5 mm at x8), with the built-in
# holder, tool, weld bead and roughness. Prints a Markdown table: samples, variables, naive and
# optimised RMS error (device prediction and 3-D verification), run time and its ratio to x1 (the time
# must grow no faster than the length). Repeats each length --runs times (default 5) and reports the
# medians of the times: the run total; the process's CPU time over all its threads (bash's `time`),
# which does not depend on how the passes share the cores; the refinement; and the 3-D verification
# of the optimised and of the naive pass (the naive pass loses contact and bounces on the longer,
# tilted parts, which costs the engine more per metre).
#   benchmarks/pass_length.sh [--kelvin PATH] [--runs N] [--cpu] [--lengths "1 2 4 8"]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kelvin="$root/build/kelvin"
runs=5
lengths="1 2 4 8"
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --kelvin) kelvin=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --lengths) lengths=$2; shift 2 ;;
    --cpu) extra+=(--cpu); shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "pass_length.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : 0.5*(a[NR/2]+a[NR/2+1])}'; }
# a number from report.json: the time_s entry NAME, or the verification_seconds of pass LABEL
rtime() { sed -n "s/^[[:space:]]*\"$2\":[[:space:]]*\([0-9.eE+-]*\),\{0,1\}$/\1/p" "$1" | head -1; }
vtime() { awk -v L="\"$2\"," '$1 == "\"label\":" {cur = $2} $1 == "\"verification_seconds\":" && cur == L {print $2}' "$1"; }
echo "| length | path | samples | variables | naive predicted / verified | optimised predicted / verified | device vs 3-D | pass time s | refinement s | 3-D verification of the optimised pass s | of the naive pass s | run total s | total / (x1 x length) | process CPU s (all threads) | CPU / (x1 x length) | optimiser (refinement + optimised pass's verification) / (x1 x length) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
t1=""
o1=""
c1=""
for m in $lengths; do
  half=$(awk -v m="$m" 'BEGIN {printf "%.6g", 0.06 * m}')
  ns=$(awk -v m="$m" 'BEGIN {printf "%d", 240 * m + 1}')
  ext=$(awk -v m="$m" 'BEGIN {printf "%.6g", 0.12 * m + 0.04}')
  cat > "$tmp/x$m.yaml" <<YAML
workpiece:
  surface: cylinder
  radius: 2.0
  extent: [$ext, 0.04]
  bead: {height: 4e-4, width: 1.5e-3, x: 0.01}
  tilt_deg: 0.3
path:
  start: -$half
  end: $half
  samples: $ns
YAML
  tt=() tr=() tv=() tn=() tc=()
  for r in $(seq "$runs"); do
    TIMEFORMAT='%3U %3S' # bash's own accounting of the child: user and system CPU seconds, all threads
    { time "$kelvin" optimise "$tmp/x$m.yaml" --out "$tmp/out$m" "${extra[@]}" > "$tmp/log$m.txt" 2> /dev/null; } 2> "$tmp/cpu$m"
    tc+=("$(awk '{print $1 + $2}' "$tmp/cpu$m")")
    js="$tmp/out$m/report.json"
    tt+=("$(rtime "$js" total)")
    tr+=("$(rtime "$js" refinement)")
    tv+=("$(vtime "$js" refined-1)")
    tn+=("$(vtime "$js" naive)")
  done
  t=$(printf '%s\n' "${tt[@]}" | median)
  cpu=$(printf '%s\n' "${tc[@]}" | median)
  rf=$(printf '%s\n' "${tr[@]}" | median)
  vo=$(printf '%s\n' "${tv[@]}" | median)
  vn=$(printf '%s\n' "${tn[@]}" | median)
  opt=$(awk -v a="$rf" -v b="$vo" 'BEGIN {print a + b}')
  [ -z "$t1" ] && t1=$t && o1=$opt && c1=$cpu
  naive=$(awk -F'|' '$2 ~ /naive/ {gsub(/ /, "", $4); gsub(/ /, "", $5); print $4 " / " $5}' "$tmp/log$m.txt")
  best=$(awk -F'|' '$2 ~ /\(best\)/ {gsub(/ /, "", $4); gsub(/ /, "", $5); gsub(/^ +| +$/, "", $6); gsub(/^ +| +$/, "", $8); print $4 " / " $5 " | " $6 " | " $8}' "$tmp/log$m.txt")
  len=$(sed -n 's/.*path \([0-9.]*\) mm in.*/\1/p' "$tmp/log$m.txt")
  printf '| x%s | %s mm | %s | %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f | %.2f |\n' "$m" "$len" "$ns" "$((2 * ns))" \
    "$naive" "$best" "$rf" "$vo" "$vn" "$t" "$(awk -v a="$t" -v b="$t1" -v m="$m" 'BEGIN {print a / b / m}')" \
    "$cpu" "$(awk -v a="$cpu" -v b="$c1" -v m="$m" 'BEGIN {print a / b / m}')" \
    "$(awk -v a="$opt" -v b="$o1" -v m="$m" 'BEGIN {print a / b / m}')"
done
