#!/usr/bin/env bash
# benchmarks/sweep_e2e.sh: `kelvin sweep` end to end, as a user runs it: compute, write the table, draw the
# figure. The built-in sweep's mix of models (Kelvin-Voigt with both separation rules, Hunt-Crossley with its
# five damping laws, Emden-Fowler: 8 combinations, n = 1.5) over a cr x v0 product of 1e6 scenarios written as
# CSV and 1e7 written as HDF5 (issue 37: under 15 s and under 20 s on 2 cores). Per size: the wall time of the
# whole command (median of the repeats), the table's size, and the write and figure times kelvin reports.
# Before a rate is printed its table is read back with pandas (the HDF5 through h5py, as docs/api.md says):
# P rows, every status 0, and 20 rows drawn at random recomputed from their inputs by the OpenMP twin
# (--cpu, a scenarios file) -- equal to the last bit, since both paths evaluate the same text.
#   benchmarks/sweep_e2e.sh [--kelvin PATH] [--repeats R] [--sizes "1e6:csv 1e7:hdf5"]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kelvin="$root/build/kelvin"
repeats=3
sizes="1e6:csv 1e7:hdf5"
while [ $# -gt 0 ]; do
  case "$1" in
    --kelvin) kelvin=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sweep_e2e.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
py=/usr/bin/python3
if ! "$py" -c 'import h5py, pandas' 2>/dev/null; then
  echo "sweep_e2e.sh: needs Debian's python3-h5py and python3-pandas (scripts/install-deps.sh)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a sweep config of about P scenarios: 8 model combinations x ncr x nv0
config() {
  local P=$1 ncr nv
  ncr=$(awk -v p="$P" 'BEGIN {printf "%d", sqrt(p / 8) + 0.5}')
  nv=$(awk -v p="$P" -v c="$ncr" 'BEGIN {printf "%d", p / 8 / c + 0.5}')
  cat <<EOF
sweep:
  model: [kv, hc, ef]
  law: [hunt-crossley, lankarani-nikravesh, flores, gonthier, exact]
  rule: [penetration, force]
  m: 1
  K: 1.0e9
  n: 1.5
  cr: {min: 0.05, max: 1, n: $ncr}
  v0: {min: 0.01, max: 10, n: $nv, scale: log}
EOF
}

# read a table back with pandas (HDF5 through h5py): print its rows and how many have a status, and write 20
# rows drawn at random (seeded) as a scenarios file (the input columns) and their metrics
readback() {
  "$py" - "$1" "$2" "$tmp" <<'EOF'
import sys, h5py, numpy as np, pandas as pd
path, fmt, tmp = sys.argv[1:4]
rng = np.random.default_rng(20261128)
if fmt == "hdf5":
    with h5py.File(path, "r") as f:
        cols = f.attrs["columns"]
        names = (cols.decode() if isinstance(cols, bytes) else str(cols)).split(",")
        status = f["status"][:]
        idx = np.sort(rng.choice(len(status), size=min(20, len(status)), replace=False))
        col = lambda k: f[k][idx] if f[k].dtype.kind != "O" else f[k].asstr()[idx]
        pick = pd.DataFrame({k: col(k) for k in names})
else:
    df = pd.read_csv(path, float_precision="round_trip")
    status = df["status"].values
    idx = np.sort(rng.choice(len(status), size=min(20, len(status)), replace=False))
    pick = df.iloc[idx].copy()
for c in ("model", "law", "rule"):
    pick[c] = [v.decode() if isinstance(v, bytes) else v for v in pick[c]]
pick[["m_kg", "K", "n", "cr", "v0_m_s", "fe_N", "model", "law", "rule"]].to_csv(tmp + "/pick.csv", index=False)
pick.to_pickle(tmp + "/pick.pkl")
print(len(status), int((status != 0).sum()))
EOF
}
# the 20 rows recomputed by the OpenMP twin (--cpu): 0 if every metric is equal to the last bit
recheck() {
  printf 'sweep:\n  scenarios: pick.csv\n' > "$tmp/pick.yaml"
  "$kelvin" sweep "$tmp/pick.yaml" --cpu --no-plot --quiet --out "$tmp/pick" > /dev/null 2>&1 || return 1
  "$py" - "$tmp" <<'EOF'
import sys, pandas as pd
tmp = sys.argv[1]
a = pd.read_pickle(tmp + "/pick.pkl").reset_index(drop=True)
b = pd.read_csv(tmp + "/pick/sweep.csv", float_precision="round_trip")
cols = ["dmax_m", "tmax_s", "fpeak_N", "tc_s", "cr_eff", "ediss", "damp", "status"]
sys.exit(0 if all((a[c].values == b[c].values).all() for c in cols) else 1)
EOF
}

median() { sort -g | awk '{a[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
# seconds kelvin reports for the write ("sweep.h5: 139.4 MB in 19.2 s") and the figure ("the figure took 2.4 s")
said() { sed -n "$2" "$1" | tail -1; }

echo "| scenarios | format | whole command s (median of $repeats) | table MB | write s | figure s | rows read back | scenarios/s end to end |"
echo "|---:|---|---:|---:|---:|---:|---|---:|"
for sz in $sizes; do
  P=${sz%%:*} fmt=${sz##*:}
  config "$P" > "$tmp/sweep.yaml"
  ext=csv; [ "$fmt" = hdf5 ] && ext=h5
  : > "$tmp/times"
  for ((r = 0; r < repeats; ++r)); do
    rm -rf "$tmp/out"
    s=$(date +%s.%N)
    if ! "$kelvin" sweep "$tmp/sweep.yaml" --format "$fmt" --out "$tmp/out" --progress 1000 > "$tmp/log" 2> "$tmp/err"; then
      echo "| $P | $fmt | exit status $?: $(tail -1 "$tmp/err") | | | | | |"
      continue 2
    fi
    e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN {printf "%.3f\n", e - s}' >> "$tmp/times"
  done
  read -r rows bad < <(readback "$tmp/out/sweep.$ext" "$fmt")
  same="20 rows equal to the twin's"
  recheck || same="20 rows NOT equal to the twin's: not counted"
  total=$(median < "$tmp/times")
  mb=$(du -m --apparent-size "$tmp/out/sweep.$ext" | cut -f1)
  w=$(said "$tmp/err" "s/.*sweep\.$ext: .* in \([0-9.]*\) s.*/\1/p")
  f=$(said "$tmp/err" 's/.*the figure took \([0-9.]*\) s.*/\1/p')
  if [ "$bad" != 0 ] || [ "${same#*NOT}" != "$same" ]; then
    echo "| $P | $fmt | $total | $mb | ${w:--} | ${f:--} | $rows rows, $bad with a status; $same | - |"
  else
    echo "| $P | $fmt | $total | $mb | ${w:--} | ${f:--} | $rows, all status 0, $same | $(awk -v p="$rows" -v t="$total" 'BEGIN {printf "%.3g", p / t}') |"
  fi
done
