#!/usr/bin/env bash
# benchmarks/examples_table.sh: `kelvin optimise` on the built-in example and every examples/optimise_*.yaml,
# one run each, and the table of them in docs/examples.md: the contact's share of the compliance at the target force,
# naive and optimised RMS force error (device prediction / 3-D verification), the device-vs-3-D
# disagreement of the optimised pass, the samples and variables, the run time and the 3-D
# verification's share of it. Run from anywhere; the examples are read from the repository.
#   benchmarks/examples_table.sh [--kelvin PATH] [--cpu]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kelvin="$root/build/kelvin"
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --kelvin) kelvin=$2; shift 2 ;;
    --cpu) extra+=(--cpu); shift ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "examples_table.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| example | contact's share | samples / variables | naive: predicted / 3-D verified | optimised: predicted / 3-D verified | device vs 3-D (optimised) | run time s | 3-D verification's share |"
echo "|---|---|---|---|---|---|---|---|"
cd "$root"
for cfg in built-in examples/optimise_*.yaml; do
  if [ "$cfg" = built-in ]; then args=(); name="built-in (\`kelvin optimise\`)"; else args=("$cfg"); name="\`$cfg\`"; fi
  # (a removal: section plans passes instead of tracking a force: benchmarks/removal_bench.c's table)
  [ "$cfg" != built-in ] && grep -q '^removal:' "$cfg" && continue
  if ! "$kelvin" optimise "${args[@]}" --out "$tmp/out" "${extra[@]}" > "$tmp/log.txt" 2>&1; then
    echo "| $name | failed: $(tail -1 "$tmp/log.txt") | | | | | | |"
    continue
  fi
  share=$(sed -n 's/.*the contact \([0-9.e+-]*\) % of the compliance.*/\1 %/p' "$tmp/log.txt")
  ns=$(sed -n 's/.* in \([0-9]*\) samples.*/\1/p' "$tmp/log.txt")
  nc=$(sed -n 's/.*refinement (Levenberg-Marquardt, \([0-9]*\) per-sample.*/\1/p' "$tmp/log.txt")
  naive=$(awk -F'|' '$2 ~ /^ naive/ {gsub(/ /, "", $4); gsub(/ /, "", $5); print $4 " / " $5}' "$tmp/log.txt")
  best=$(awk -F'|' '$2 ~ /\(best\)/ {gsub(/ /, "", $4); gsub(/ /, "", $5); gsub(/^ +| +$/, "", $6); print $4 " / " $5 " | " $6}' "$tmp/log.txt")
  total=$(sed -n 's/.*, total \([0-9.]*\) s$/\1/p' "$tmp/log.txt")
  vshare=$(sed -n 's/.*3-D verification [0-9.]* s (\([0-9.]*\) %).*/\1 %/p' "$tmp/log.txt")
  echo "| $name | $share | $ns / ${nc:-spline} | $naive | $best | $total | $vshare |"
done
