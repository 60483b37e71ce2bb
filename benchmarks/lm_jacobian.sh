#!/usr/bin/env bash
# benchmarks/lm_jacobian.sh: the per-sample optimiser's two Jacobians measured against each other on the
# examples (built-in, stiff spindle with the step and the bead, the 0.96 m pass): coloured forward
# differences (2B + 1 rollouts in one batch) and the tangent-linear rollout (the B offset colours' exact
# derivatives in one rollout, the B speed colours by differences in a second batch). Prints per example
# and Jacobian: the band B, the device RMS error and the Levenberg-Marquardt residuals reached, the
# steps, rollouts and the medians (over --runs, default 3) of the wall time in the Jacobians and in the
# whole refinement. No 3-D verification (verify.count 0): this compares the search alone.
#   benchmarks/lm_jacobian.sh [--kelvin PATH] [--runs N] [--cpu]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kelvin="$root/build/kelvin"
runs=3
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --kelvin) kelvin=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --cpu) extra+=(--cpu); shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "lm_jacobian.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : 0.5*(a[NR/2]+a[NR/2+1])}'; }
echo "| example | Jacobian | band B | steps | rollouts | device RMS error | residuals | Jacobians s (median of $runs) | refinement s |"
echo "|---|---|---|---|---|---|---|---|---|"
for ex in built-in optimise_stiff optimise_long; do
  for jac in differences tangent; do
    cfg="$tmp/$ex-$jac.yaml"
    if [ "$ex" = built-in ]; then : > "$cfg"; else grep -v '^verify:' "$root/examples/$ex.yaml" | grep -v '^optimiser:' > "$cfg"; fi
    printf 'optimiser: {jacobian: %s}\nverify: {count: 0}\n' "$jac" >> "$cfg"
    tj=() tr=()
    for r in $(seq "$runs"); do
      "$kelvin" optimise "$cfg" --out "$tmp/out" "${extra[@]}" > "$tmp/log.txt" 2>&1
      line=$(grep 'refinement: .* steps' "$tmp/log.txt")
      tj+=("$(echo "$line" | sed -n 's/.*(Jacobians \([0-9.]*\) s.*/\1/p')")
      tr+=("$(echo "$line" | sed -n 's/.* rollouts in \([0-9.]*\) s.*/\1/p')")
    done
    steps=$(echo "$line" | sed -n 's/.*refinement: \([0-9]*\) steps.*/\1/p')
    roll=$(echo "$line" | sed -n 's/.* steps, \([0-9]*\) rollouts.*/\1/p')
    band=$(echo "$line" | sed -n 's/.*band \([0-9]*\),.*/\1/p')
    resid=$(grep 'kelvin: lm ' "$tmp/log.txt" | tail -1 | sed -n 's/.*residuals \([0-9.e+-]*\).*/\1/p')
    rms=$(awk -F'|' '$2 ~ /refined-1/ {gsub(/ /, "", $4); print $4}' "$tmp/log.txt")
    printf '| %s | %s | %s | %s | %s | %s | %s | %.3f | %.3f |\n' "$ex" "$jac" "$band" "$steps" "$roll" "$rms" "$resid" \
      "$(printf '%s\n' "${tj[@]}" | median)" "$(printf '%s\n' "${tr[@]}" | median)"
  done
done
