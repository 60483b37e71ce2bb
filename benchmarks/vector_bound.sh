#!/usr/bin/env bash
# benchmarks/vector_bound.sh: what the device compiler made of the impact kernel, and the most its
# vectorised loop could reach. Builds kernels/impact.cl through sweep_throughput on the default OpenCL
# device with pocl's kernel cache kept, disassembles the work-group function, takes the loop with the
# most vector instructions (the Hunt-Crossley quadrature node, kernels/kl_contact_hc.h), and prints its
# vector width, its floating-point instructions by kind, the flops one pass of the loop does (each
# lane's add, subtract, multiply, divide, square root, min and max, an FMA as two), and llvm-mca's
# throughput bound for the loop on the device's CPU model: the fewest cycles one pass can take with
# every instruction on a free port and no dependency waits. Against the peak sweep_throughput uses
# (8 doubles per FMA x 2 FMA pipes x 2 = 32 flops per cycle per core, AVX-512), that bound is the most
# the loop could reach. Needs pocl, objdump, llvm-mca (Debian: llvm) and python3.
#   benchmarks/vector_bound.sh [--build DIR] [--mcpu CPU]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
mcpu=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --mcpu) mcpu=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "vector_bound.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
for tool in objdump llvm-mca python3; do
  command -v "$tool" > /dev/null || { echo "vector_bound.sh: needs $tool (Debian: binutils, llvm, python3)" >&2; exit 2; }
done
[ -x "$build/benchmarks/sweep_throughput" ] || { echo "vector_bound.sh: no $build/benchmarks/sweep_throughput; build it first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
POCL_CACHE_DIR="$tmp/cache" POCL_LEAVE_KERNEL_COMPILER_TEMP_FILES=1 \
  "$build/benchmarks/sweep_throughput" --min-p 1000 --max-p 1000 --repeats 1 > "$tmp/sweep.md" 2>&1
so=$(find "$tmp/cache" -name kl_impact_batch.so | head -n 1)
[ -n "$so" ] || { echo "vector_bound.sh: no kl_impact_batch.so in pocl's cache (is the device pocl?)" >&2; exit 1; }
device=$(sed -n "s/.*OpenCL: .*'\(pthread-[^']*\)'.*/\1/p" "$tmp/sweep.md" | head -n 1)
if [ -z "$mcpu" ]; then # pocl names its CPU device after the LLVM CPU it compiles for: pthread-<cpu>-<model name>
  mcpu=$(echo "$device" | sed -n 's/^pthread-\([a-z0-9]*\(-avx512\)\{0,1\}\).*/\1/p')
fi
[ -n "$mcpu" ] || { echo "vector_bound.sh: cannot tell the CPU model from the device name '$device'; give --mcpu" >&2; exit 2; }
objdump -d --no-show-raw-insn "$so" > "$tmp/kernel.s"
python3 - "$tmp/kernel.s" "$tmp/loop.s" > "$tmp/counts.txt" << 'EOF'
import re, sys, collections
lines = open(sys.argv[1]).read().split('\n')
fn, ins = None, []
for l in lines:  # the work-group function pocl calls: _pocl_kernel_<name>_workgroup
    m = re.match(r'[0-9a-f]+ <(.*)>:$', l)
    if m:
        fn = m.group(1)
        continue
    m = re.match(r'\s*([0-9a-f]+):\s+(.*)', l)
    if m and fn == '_pocl_kernel_kl_impact_batch_workgroup':
        ins.append((int(m.group(1), 16), re.sub(r'\s+#.*', '', m.group(2)).strip()))
vec = lambda t: re.search(r'%[yz]mm', t) is not None
best = None  # the backward branch whose body holds the most vector instructions
for i, (a, t) in enumerate(ins):
    m = re.match(r'j\w+\s+([0-9a-f]+)', t)
    if m and int(m.group(1), 16) < a:
        body = [u for (b, u) in ins if int(m.group(1), 16) <= b < a]
        n = sum(vec(u) for u in body)
        if n and (best is None or n > best[0]):
            best = (n, body)
if best is None:
    print('novec 1')
    sys.exit(0)
body = [u for u in best[1] if not re.match(r'(j\w+|call)\b', u)]
open(sys.argv[2], 'w').write('\n'.join(body) + '\n')
width = {'xmm': 2, 'ymm': 4, 'zmm': 8}
kinds = collections.Counter()
flops = 0
for u in body:
    m = re.match(r'v(add|sub|mul|div|sqrt|min|max|fn?m(?:add|sub)\d*)(p|s)d\s+(.*)', u)
    if not m:
        continue
    op = 'fma' if m.group(1).startswith(('fm', 'fnm')) else m.group(1)
    reg = re.search(r'%([xyz]mm)', m.group(3))
    lanes = width[reg.group(1)] if m.group(2) == 'p' else 1
    kinds[(op, lanes)] += 1
    flops += lanes * (2 if op == 'fma' else 1)
wide = max(width[r] for u in body for r in re.findall(r'%([xyz]mm)', u))
print('instructions', len(body))
print('vector_instructions', best[0])
print('lanes', wide)
print('flops', flops)
print('kinds', ', '.join('%d %s%s' % (n, op, '' if l == 1 else ' x%d' % l) for (op, l), n in sorted(kinds.items(), key=lambda x: -x[1])))
EOF
if grep -q '^novec' "$tmp/counts.txt"; then
  echo "vector_bound.sh: the work-group function has no vector loop (not vectorised on this device)"
  exit 0
fi
get() { sed -n "s/^$1 //p" "$tmp/counts.txt"; }
llvm-mca -mcpu="$mcpu" -iterations=100 "$tmp/loop.s" > "$tmp/mca.txt" 2>&1 || { cat "$tmp/mca.txt" >&2; exit 1; }
rt=$(sed -n 's/^Block RThroughput: *//p' "$tmp/mca.txt")
cyc=$(awk '/^Iterations:/ {it = $2} /^Total Cycles:/ {print $3 / it}' "$tmp/mca.txt")
echo "- device: $device (llvm-mca -mcpu=$mcpu); work-group function of kl_impact_batch"
echo "- its loop with the most vector instructions: $(get instructions) instructions, $(get vector_instructions) of them on vector registers, $(get lanes) doubles wide"
echo "- floating-point instructions: $(get kinds)"
echo "- flops per pass of the loop: $(get flops)"
awk -v f="$(get flops)" -v rt="$rt" -v c="$cyc" 'BEGIN {
  printf "- llvm-mca: throughput bound %.1f cycles per pass (%.2f flops per cycle, %.1f %% of 32); simulated with its dependencies %.0f cycles (%.2f flops per cycle, %.1f %%)\n",
    rt, f / rt, 100 * f / rt / 32, c, f / c, 100 * f / c / 32 }'
