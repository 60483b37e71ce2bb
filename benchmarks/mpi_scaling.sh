#!/usr/bin/env bash
# benchmarks/mpi_scaling.sh: kelvin across MPI ranks on this machine (issue 35, docs/design.md section 11).
# Strong scaling of a 1e6-scenario sweep and of the robust example (examples/optimise_robust.yaml) from 1 to 2
# ranks, and weak scaling of the sweep (5e5 scenarios a rank), each rank on one core (the OpenMP twin, --cpu,
# OMP_NUM_THREADS=1: a rank per core, as a cluster job places them); then 3 and 4 ranks oversubscribed, for
# correctness only. Every run's outputs are compared with the one-rank run's before its time is printed: byte for
# byte, report.json and summary.json after removing their wall times. Per run: the whole command's wall time
# (median of the repeats), the sharded stage's (the sweep's batch as kelvin prints it; the optimisation and the
# out-of-sample check: report.json's time_s total + check_device + check_3d), the parallel efficiency T1 / (N TN)
# of both, and what kelvin counts of its collectives on rank 0 ("across N ranks: C collectives, B MB received,
# S s in them"). From these, the communication model (docs/design.md section 11.5) predicts the efficiency on 64
# nodes (printed with its inputs).
#   benchmarks/mpi_scaling.sh [--kelvin PATH] [--repeats R] [--mpirun PATH]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kelvin="$root/build/kelvin"
repeats=3
mpirun=$(command -v mpirun || true)
while [ $# -gt 0 ]; do
  case "$1" in
    --kelvin) kelvin=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --mpirun) mpirun=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "mpi_scaling.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
if [ -z "$mpirun" ] || ! "$kelvin" --version 2>&1 | grep -q "^MPI: "; then
  echo "mpi_scaling.sh: needs mpirun and a kelvin built with -DKELVIN_MPI=ON (scripts/install-deps.sh --mpi)" >&2
  exit 1
fi
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# as root in a container: OpenMPI's two confirmations, and the shared-memory transport only
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=1 # a rank per core

# a sweep config of about P scenarios: the built-in mix (8 model combinations) over a cr x v0 product
config() {
  local P=$1 ncr nv
  ncr=$(awk -v p="$P" 'BEGIN {printf "%d", sqrt(p / 8) + 0.5}')
  nv=$(awk -v p="$P" -v c="$ncr" 'BEGIN {printf "%d", p / 8 / c + 0.5}')
  printf 'sweep:\n  model: [kv, hc, ef]\n  law: [hunt-crossley, lankarani-nikravesh, flores, gonthier, exact]\n'
  printf '  rule: [penetration, force]\n  m: 1\n  K: 1.0e9\n  n: 1.5\n  cr: {min: 0.05, max: 1, n: %d}\n' "$ncr"
  printf '  v0: {min: 0.01, max: 10, n: %d, scale: log}\n' "$nv"
}
config 1000000 > "$tmp/sweep1e6.yaml"
config 500000 > "$tmp/sweep5e5.yaml"

median() { sort -g | awk '{a[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# 0 if folders $1 and $2 hold the same files with the same bytes (report.json, summary.json: without wall times)
same_outputs() {
  "$py" - "$1" "$2" <<'EOF'
import json, os, sys
a, b = sys.argv[1:3]
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("time_s", "verification_seconds")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
fa, fb = sorted(os.listdir(a)), sorted(os.listdir(b))
if fa != fb:
    sys.exit(1)
for f in fa:
    pa, pb = os.path.join(a, f), os.path.join(b, f)
    if f.endswith(".json"):
        if strip(json.load(open(pa))) != strip(json.load(open(pb))):
            sys.exit(1)
    elif open(pa, "rb").read() != open(pb, "rb").read():
        sys.exit(1)
EOF
}

# run JOB (sweep1e6, sweep5e5, robust) on N ranks R times; append "job n whole stage calls MB coll_s same" to rows
rows="$tmp/rows"
: > "$rows"
run() {
  local job=$1 n=$2 reps=$3 out args stage
  : > "$tmp/w" && : > "$tmp/s"
  for ((r = 0; r < reps; ++r)); do
    out="$tmp/out" # one name for every run: the outputs record their command line
    rm -rf "$out"
    case "$job" in
      sweep*) args=(sweep "$tmp/$job.yaml" --cpu --format hdf5 --no-plot --progress 1000 --out "$out") ;;
      robust) args=(optimise "$root/examples/optimise_robust.yaml" --cpu --out "$out") ;;
    esac
    s=$(date +%s.%N)
    if ! (cd "$root" && "$mpirun" -n "$n" "$kelvin" "${args[@]}") > "$tmp/log" 2> "$tmp/err"; then
      echo "mpi_scaling.sh: $job on $n ranks failed: $(tail -2 "$tmp/err")" >&2
      return 1
    fi
    e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN {printf "%.3f\n", e - s}' >> "$tmp/w"
    case "$job" in
      sweep*) stage=$(sed -n 's/^kelvin sweep: [0-9]* scenarios .* in \([0-9.]*\) s .*/\1/p' "$tmp/log" | tail -1) ;;
      robust) stage=$("$py" -c 'import json,sys; t=json.load(open(sys.argv[1]))["time_s"]; print(t["total"] + t.get("check_device", 0) + t.get("check_3d", 0))' "$out/report.json") ;;
    esac
    echo "$stage" >> "$tmp/s"
  done
  # kelvin's count of its collectives on rank 0 (absent on one rank)
  local coll
  coll=$(sed -n 's/.*across [0-9]* ranks: \([0-9]*\) collectives, \([0-9.e+]*\) MB received, \([0-9.e+-]*\) s in them.*/\1 \2 \3/p' "$tmp/err" | tail -1)
  [ -n "$coll" ] || coll="0 0 0"
  local same=ref
  if [ "$n" != 1 ]; then
    same=equal
    same_outputs "$tmp/ref-$job" "$out" || { same=DIFFERENT; diff -rq "$tmp/ref-$job" "$out" >&2 || true; }
  else
    rm -rf "$tmp/ref-$job" && cp -r "$out" "$tmp/ref-$job"
  fi
  echo "$job $n $(median < "$tmp/w") $(median < "$tmp/s") $coll $same" >> "$rows"
}

load0=$(cut -d' ' -f1 /proc/loadavg)
# the ranks interleaved within each repeat would share the machine's two cores unevenly; each count's repeats
# run back to back instead, the one-rank run first (its outputs are the reference)
for job in sweep1e6 robust; do
  run "$job" 1 "$repeats"
  run "$job" 2 "$repeats"
done
run sweep5e5 1 "$repeats"
run sweep1e6 3 1
run sweep1e6 4 1
run robust 3 1

"$py" - "$rows" "$load0" "$(cut -d' ' -f1 /proc/loadavg)" "$repeats" <<'EOF'
import math, sys
rows = [l.split() for l in open(sys.argv[1])]
load0, load1, reps = sys.argv[2], sys.argv[3], sys.argv[4]
R = {(r[0], int(r[1])): dict(whole=float(r[2]), stage=float(r[3]), calls=int(r[4]), mb=float(r[5]), cs=float(r[6]), same=r[7]) for r in rows}
names = {"sweep1e6": "sweep, 1e6 scenarios (strong)", "sweep5e5": "sweep, 5e5 scenarios a rank (weak: 1 rank 5e5, 2 ranks 1e6)",
         "robust": "robust example (optimise_robust.yaml)"}
print(f"Each rank one core (--cpu, OMP_NUM_THREADS=1); medians of {reps} repeats (3 and 4 ranks: one run, oversubscribed on 2 cores: "
      f"correctness, not speed); load average {load0} at start, {load1} at end.\n")
print("| job | ranks | outputs vs 1 rank | whole command s | sharded stage s | efficiency, whole | efficiency, stage | collectives | MB received (rank 0) | s in collectives |")
print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
def row(job, n, ref, weak=False):
    x = R[(job, n)]
    if weak:  # weak: the same work per rank, efficiency T1 / TN
        ew, es = ref["whole"] / x["whole"], ref["stage"] / x["stage"]
    else:
        ew, es = ref["whole"] / (n * x["whole"]), ref["stage"] / (n * x["stage"])
    eff = lambda e: f"{e:.2f}" if n <= 2 else "-"
    print(f"| {names[job] if n == 1 or weak else ''} | {n} | {x['same']} | {x['whole']:.2f} | {x['stage']:.3f} | {eff(ew) if n > 1 else ''} | "
          f"{eff(es) if n > 1 else ''} | {x['calls']} | {x['mb']:.1f} | {x['cs']:.3f} |")
for job in ("sweep1e6", "robust"):
    for n in (1, 2, 3, 4):
        if (job, n) in R:
            row(job, n, R[(job, 1)])
print(f"| {names['sweep5e5']} | 1 | ref | {R[('sweep5e5', 1)]['whole']:.2f} | {R[('sweep5e5', 1)]['stage']:.3f} | | | 0 | 0.0 | 0.000 |")
row("sweep1e6", 2, R[("sweep5e5", 1)], weak=True)
bad = [k for k, v in R.items() if v["same"] == "DIFFERENT"]
if bad:
    print(f"\nOUTPUTS DIFFER from one rank's for {bad}: the times above are not results.")
    sys.exit(1)

# the model (docs/design.md section 11.5), fitted to the one- and two-rank runs:
#   T(p) = Ts + Tp / p + K alpha log2(p) + V (p - 1) / p / beta
# Ts the part every rank runs alike (setup, meshing, replicated stages, rank 0's writing) and Tp the shared part:
# Tp is the one-rank run's sharded stage as kelvin times it (the sweep's batch; the optimisation and the
# out-of-sample check, report.json's time_s total + check_device + check_3d) and Ts the rest of the command; K the
# collectives of a run and V the bytes gathered in all (the two-rank run's rank 0 receives half of each table).
# A node of c cores runs the shared part c times faster (the twin's parallel efficiency on a node taken as 1).
alpha, beta = 2e-6, 12.5e9  # an InfiniBand HDR link: 2 us a collective step, 12.5 GB/s
print(f"\nThe communication model (docs/design.md 11.5) fitted to the runs above, for p nodes on a network of alpha = "
      f"{alpha*1e6:.0f} us a collective step and beta = {beta/1e9:.1f} GB/s (InfiniBand HDR); a node of c cores runs the "
      "shared part c times faster:\n")
print("| job | Ts s (replicated) | Tp s (shared, one core) | collectives K | gathered V MB | shared part's efficiency, 64 nodes of 1 core | ... of 32 cores | whole job, 64 nodes of 1 core | nodes (1 core) while the shared part stays >= 0.85 | nodes (32 cores) likewise | nodes (32 cores) while the whole job stays >= 0.85 |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for job in ("sweep1e6", "robust"):
    one, two = R[(job, 1)], R[(job, 2)]
    Tp = one["stage"]  # the shared part as kelvin times it; the rest of the command runs alike on every rank
    Ts = one["whole"] - Tp
    K, V = two["calls"], two["mb"] * 1e6 * 2
    comm = lambda p: K * alpha * math.log2(p) + V * (p - 1) / p / beta
    part = lambda p, c: (Tp / c / p) / (Tp / c / p + comm(p))
    whole = lambda p, c: (Ts + Tp / c) / (p * (Ts + Tp / c / p + comm(p)))
    def reach(f):
        p = 1
        while p < 1 << 20 and f(p * 2) >= 0.85:
            p *= 2
        return p
    print(f"| {names[job]} | {Ts:.2f} | {Tp:.2f} | {K} | {V/1e6:.1f} | {part(64, 1):.2f} | {part(64, 32):.2f} | "
          f"{whole(64, 1):.2f} | {reach(lambda p: part(p, 1))} | {reach(lambda p: part(p, 32))} | "
          f"{reach(lambda p: whole(p, 32))} |")
EOF
