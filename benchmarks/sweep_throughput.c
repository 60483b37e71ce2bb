/* benchmarks/sweep_throughput.c: impact scenarios per second on the three paths of host/impact_batch.h
 * (docs/design.md section 7): the OpenCL kernel (pocl's CPU device here, or a GPU), the OpenMP twin on all
 * cores and a plain serial loop, in one run, for P = 10^3 ... 10^max; kernel build time reported apart;
 * medians over repeats (a 20 ms pause after each OpenMP run: its idle workers spin-wait for a while
 * and would take cores from the next path); OpenCL / OpenMP and each path's ratio to serial; the arithmetic rate reached
 * against the machine's peak; and the same three paths per model (Kelvin-Voigt, Hunt-Crossley,
 * Emden-Fowler) at the largest P up to 1e6, with each model's own flop count. Prints Markdown tables.
 *
 * Scenarios: the mix of the built-in `kelvin sweep`: the 8 model/law/rule variants in equal shares
 * (kv x 2 rules, hc x 5 laws, ef), m = 1 kg, K = 1e9, n = 1.5 (hc, ef), cr uniform in [0.05, 1],
 * v0 log-uniform in [0.01, 10] m/s, fixed seed.
 * Flops per scenario: counted, not estimated: benchmarks/flop_count.cpp runs the same headers with a
 * counting number type over 20000 scenarios of the mix (+ - * / sqrt = 1 flop each; library transcendental
 * calls counted apart and weighted TRANSC_FLOPS flops each, a typical polynomial-plus-reduction cost).
 * Peak: cores x clock (the "cpu MHz" of /proc/cpuinfo) x doubles per FMA operation (8 with avx512f,
 * except AMD family 25, Zen 4, whose 512-bit operations run as two halves on 256-bit pipes: 4; 4 with
 * avx2, else 2) x 2 FMA pipes x 2 flops per FMA. The closed forms are compiled without contraction, so
 * the scalar non-FMA rate (cores x clock x 2) is printed too. The flops counted are those of the code
 * as it runs (Hunt-Crossley's master curves included, kernels/kl_hc_master.h); scenarios per second
 * is the measure of speed, the flop rate that of how busy the units are. The
 * device compiler's ceiling (function ceiling below) is printed beside the peak, and after the by-model
 * table the memory ceiling (function memory_ceiling): a copy-only kernel and loop over the same bytes a
 * scenario reads and writes, in place, with transfers and on the twin, and the cost of one launch. How to
 * see what pocl generates: benchmarks/README.md. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <omp.h>

#include "benchmarks/bench_host.h"
#include "benchmarks/bench_util.h"
#include "benchmarks/flop_count.h"
#include "host/host.h"
#include "host/impact_batch.h"

#define TRANSC_FLOPS 20.0
#define MAXREP 15

static uint64_t rng = 0x2545F4914F6CDD1Du;
/* uniform in [0, 1) (xorshift64*) */
static double unif(void)
{
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (double)((rng * 0x2545F4914F6CDD1Du) >> 11) * 0x1.0p-53;
}

/* A scenario of variant v (0, 1: kv by rule; 2..6: hc by law; 7: ef) with random cr and v0. */
static kl_impact_in scenario_of(int v)
{
  kl_impact_in in;
  in.model = v < 2 ? KL_MODEL_KV : v < 7 ? KL_MODEL_HC : KL_MODEL_EF;
  in.rule = v < 2 ? v : KL_SEP_PENETRATION;
  in.law = (v >= 2 && v < 7) ? v - 2 : KL_LAW_EXACT;
  in.m = 1.0;
  in.K = 1e9;
  in.n = in.model == KL_MODEL_KV ? 1.0 : 1.5;
  in.cr = 0.05 + 0.95 * unif();
  in.v0 = 0.01 * pow(1000.0, unif());
  in.fe = 0.0;
  in.c = in.n2 = in.rate_exp = 0.0;
  return in;
}

/* A scenario of the mix (see the header comment): the 8 variants in equal shares. */
static kl_impact_in scenario(void) { return scenario_of((int)(unif() * 8.0)); }

/* CPU clock [GHz] from /proc/cpuinfo ("cpu MHz"), 0 if unknown; *simd: doubles per FMA operation of the
 * execution units (not of the registers: AMD's Zen 4, family 25 with avx512f, runs a 512-bit operation
 * as two 256-bit halves on its two 256-bit FMA pipes, so its double-precision peak is that of AVX2). */
static double cpu_ghz(int *simd, char *model, size_t cap)
{
  FILE *f = fopen("/proc/cpuinfo", "r");
  double mhz = 0.0;
  int family = 0, amd = 0;
  *simd = 2;
  snprintf(model, cap, "?");
  if (!f) return 0.0;
  char line[8192];
  while (fgets(line, sizeof line, f)) {
    if (mhz == 0.0 && strncmp(line, "cpu MHz", 7) == 0) mhz = atof(strchr(line, ':') + 1);
    if (strncmp(line, "model name", 10) == 0) {
      snprintf(model, cap, "%s", strchr(line, ':') + 2);
      model[strcspn(model, "\n")] = '\0';
    }
    if (strncmp(line, "cpu family", 10) == 0) family = atoi(strchr(line, ':') + 1);
    if (strncmp(line, "vendor_id", 9) == 0) amd = strstr(line, "AuthenticAMD") != NULL;
    if (strncmp(line, "flags", 5) == 0) {
      if (strstr(line, " avx512f")) *simd = 8;
      else if (strstr(line, " avx2")) *simd = 4;
    }
  }
  fclose(f);
  if (amd && family == 25 && *simd == 8) *simd = 4; /* Zen 4: 512-bit operations double-pumped on 256-bit pipes */
  return mhz / 1000.0;
}

/* The 1-minute load average (other processes share the cores: a load near the core count halves the
 * rates), -1 if unknown. */
static double loadavg(void)
{
  FILE *f = fopen("/proc/loadavg", "r");
  double l = -1.0;
  if (f && fscanf(f, "%lf", &l) != 1) l = -1.0;
  if (f) fclose(f);
  return l;
}

/* The device compiler's ceiling: a kernel that is nothing but independent multiply-add chains (16 per
 * work-item, 8 rounds each, straight-line code, one load and one store), once with a separate multiply
 * and add under FP_CONTRACT OFF, as the closed forms are compiled, and once with fma(). What it reaches
 * is the most any kernel of ours could reach on this device with this compiler; the peak above is the
 * hardware's. Each result is checked against the same chains on the host, bit for bit (every operation
 * is correctly rounded in IEEE arithmetic, fma included), on every 997th work-item, before a rate is
 * printed. */
#define CEIL_CHAINS 16
#define CEIL_ROUNDS 8
#define CEIL_FLOPS (CEIL_CHAINS * CEIL_ROUNDS * 2 + CEIL_CHAINS - 1)
static const char *ceiling_src =
  "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
  "#pragma OPENCL FP_CONTRACT OFF\n"
  "#define S1(x) x = x * a + b;\n"
  "#define S2(x) x = fma(x, a, b);\n"
  "#define ROUND(S) S(x0) S(x1) S(x2) S(x3) S(x4) S(x5) S(x6) S(x7) S(x8) S(x9) S(x10) S(x11) S(x12) S(x13) S(x14) S(x15)\n"
  "#define R8(S) ROUND(S) ROUND(S) ROUND(S) ROUND(S) ROUND(S) ROUND(S) ROUND(S) ROUND(S)\n"
  "#define BODY(S) const size_t g = get_global_id(0); const double a = in[g], b = 1e-3 * a;"
  " double x0 = a, x1 = a + 1, x2 = a + 2, x3 = a + 3, x4 = a + 4, x5 = a + 5, x6 = a + 6, x7 = a + 7;"
  " double x8 = a + 8, x9 = a + 9, x10 = a + 10, x11 = a + 11, x12 = a + 12, x13 = a + 13, x14 = a + 14, x15 = a + 15;"
  " R8(S)"
  " out[g] = (((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7))) + (((x8 + x9) + (x10 + x11)) + ((x12 + x13) + (x14 + x15)));\n"
  "__kernel void kl_ceiling_muladd(__global const double *in, __global double *out) { BODY(S1) }\n"
  "__kernel void kl_ceiling_fma(__global const double *in, __global double *out) { BODY(S2) }\n";

/* the chains of work-item with input a, on the host (the build has -ffp-contract=off) */
static double ceiling_host(double a, int use_fma)
{
  const double b = 1e-3 * a;
  double x[CEIL_CHAINS];
  for (int c = 0; c < CEIL_CHAINS; ++c) x[c] = c == 0 ? a : a + (double)c;
  for (int r = 0; r < CEIL_ROUNDS; ++r)
    for (int c = 0; c < CEIL_CHAINS; ++c) x[c] = use_fma ? fma(x[c], a, b) : x[c] * a + b;
  return (((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]))) +
         (((x[8] + x[9]) + (x[10] + x[11])) + ((x[12] + x[13]) + (x[14] + x[15])));
}

/* Median GFLOP/s of the two ceiling kernels (muladd, fma) over reps launches on h's device (cpu: a CPU
 * device, sized for it); 0 on success, 1 with a message on stderr (a failed build, launch or check). */
static int ceiling(kl_host *h, int cpu, int reps, double gf[2])
{
  /* 8 rounds: pocl 3.1 on 2 Xeon cores reached 50, 42, 35, 26 and 20 GFLOP/s with a separate multiply
   * and add at 4, 8, 16, 32 and 64 rounds (longer blocks ran slower), 72, 80, 78, 84 GFLOP/s with fma() at
   * 4 to 32 */
  const size_t N = cpu ? (size_t)1 << 21 : (size_t)1 << 25; /* ~10 ms on 2 cores; ~1 ms on a large GPU */
  cl_program prog = NULL;
  cl_kernel k[2] = {NULL, NULL};
  cl_mem din = NULL, dout = NULL;
  double *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
  int bad = 1;
  cl_int err = CL_SUCCESS;
  if (!in || !out) goto done;
  for (size_t i = 0; i < N; ++i) in[i] = 0.5 + 0.4 * (double)i / (double)N; /* |a| < 1: the chains stay bounded */
  if (kl_host_build(h, "benchmarks/sweep_throughput.c", ceiling_src, &prog) != KELVIN_OK) {
    fprintf(stderr, "sweep_throughput: ceiling kernel: %s\n", kl_host_errmsg(h));
    goto done;
  }
  k[0] = clCreateKernel(prog, "kl_ceiling_muladd", &err);
  if (err == CL_SUCCESS) k[1] = clCreateKernel(prog, "kl_ceiling_fma", &err);
  if (err == CL_SUCCESS) din = clCreateBuffer(kl_host_context(h), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * sizeof(double), in, &err);
  if (err == CL_SUCCESS) dout = clCreateBuffer(kl_host_context(h), CL_MEM_WRITE_ONLY, N * sizeof(double), NULL, &err);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "sweep_throughput: ceiling kernel: OpenCL error %d creating kernels or buffers\n", (int)err);
    goto done;
  }
  cl_command_queue q = kl_host_queue(h);
  for (int v = 0; v < 2; ++v) {
    double t[MAXREP];
    const size_t wg = 64;
    if (clSetKernelArg(k[v], 0, sizeof din, &din) != CL_SUCCESS || clSetKernelArg(k[v], 1, sizeof dout, &dout) != CL_SUCCESS) goto done;
    for (int r = -1; r < reps; ++r) { /* r = -1: a first launch (pocl compiles the work-group function), then checked */
      const double a = kl_bench_now();
      if (clEnqueueNDRangeKernel(q, k[v], 1, NULL, &N, &wg, 0, NULL, NULL) != CL_SUCCESS || clFinish(q) != CL_SUCCESS) {
        fprintf(stderr, "sweep_throughput: ceiling kernel: launch failed\n");
        goto done;
      }
      if (r >= 0) t[r] = kl_bench_now() - a;
    }
    if (clEnqueueReadBuffer(q, dout, CL_TRUE, 0, N * sizeof(double), out, 0, NULL, NULL) != CL_SUCCESS) goto done;
    for (size_t i = 0; i < N; i += 997)
      if (out[i] != ceiling_host(in[i], v)) {
        fprintf(stderr, "sweep_throughput: ceiling kernel (%s): work-item %zu gives %.17g, the host %.17g\n",
                v ? "fma" : "multiply-add", i, out[i], ceiling_host(in[i], v));
        goto done;
      }
    gf[v] = (double)N * CEIL_FLOPS / kl_bench_median(t, reps) * 1e-9;
  }
  bad = 0;
done:
  if (dout) clReleaseMemObject(dout);
  if (din) clReleaseMemObject(din);
  for (int v = 0; v < 2; ++v)
    if (k[v]) clReleaseKernel(k[v]);
  if (prog) clReleaseProgram(prog);
  free(in);
  free(out);
  return bad;
}

/* The memory ceiling: the same bytes a scenario's row reads (KL_NIN doubles, KL_NIIN ints: 60 B) and
 * writes (KL_NOUT doubles and the status word: 60 B) with no arithmetic to speak of: a copy-only kernel
 * (the sum of the row's inputs into each output column, the sum of its integers into the status), run
 * (a) on the batch's own tables in place, as host/impact_batch.c runs a CPU device (CL_MEM_USE_HOST_PTR,
 * launch, map and unmap the results, release), (b) through device buffers with explicit write and read
 * transfers, as a GPU is run, and (c) as an OpenMP loop on all cores, the twin's ceiling; plus (d) the
 * cost of one launch of one work-group by (a), the per-launch cost. Every result is checked (every 997th
 * row, each column, exactly: the sums are the same additions in the same order) before a rate is
 * printed. */
_Static_assert(KL_NIN == 9 && KL_IN_C == 6 && KL_NIIN == 3 && KL_NOUT == 7, "copy-only kernel: the batch's columns changed");
/* the columns a row of the built-in mix reads: the first six real inputs (the general law's own three, KL_IN_C
 * and after, are read by its rows alone, kernels/impact.cl) */
#define ROW_BYTES ((double)(KL_IN_C * 8 + KL_NIIN * 4 + KL_NOUT * 8 + 4))
static const char *copy_src =
  "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
  "#pragma OPENCL FP_CONTRACT OFF\n"
  "__kernel void kl_copy_only(const int P, __global const double *x, __global const int *ix, __global double *y,\n"
  "                           __global int *st)\n"
  "{\n"
  "  const int p = (int)get_global_id(0);\n"
  "  if (p >= P) return;\n"
  "  const size_t P_ = (size_t)P;\n"
  "  const double s = ((((x[p] + x[P_ + p]) + x[2 * P_ + p]) + x[3 * P_ + p]) + x[4 * P_ + p]) + x[5 * P_ + p];\n"
  "  for (int c = 0; c < 7; ++c) y[c * P_ + p] = s + (double)c;\n"
  "  st[p] = (ix[p] + ix[P_ + p]) + ix[2 * P_ + p];\n"
  "}\n";

/* row p of the copy on the host (the build has -ffp-contract=off) */
static void copy_row(kl_impact_batch *b, size_t p)
{
  const size_t P = b->P;
  const double *x = b->x;
  const double s = ((((x[p] + x[P + p]) + x[2 * P + p]) + x[3 * P + p]) + x[4 * P + p]) + x[5 * P + p];
  for (size_t c = 0; c < 7; ++c) b->y[c * P + p] = s + (double)c;
  b->status[p] = (b->ix[p] + b->ix[P + p]) + b->ix[2 * P + p];
}

/* 1 (with a message) unless every 997th row of b holds the copy's results; then clears them */
static int copy_check(kl_impact_batch *b, const char *what)
{
  const size_t P = b->P;
  for (size_t i = 0; i <= P / 997; ++i) {
    const size_t p = i < P / 997 ? i * 997 : P - 1; /* every 997th row and the last */
    const double *x = b->x;
    const double s = ((((x[p] + x[P + p]) + x[2 * P + p]) + x[3 * P + p]) + x[4 * P + p]) + x[5 * P + p];
    for (size_t c = 0; c < 7; ++c)
      if (b->y[c * P + p] != s + (double)c) {
        fprintf(stderr, "sweep_throughput: copy-only (%s): row %zu column %zu gives %.17g, the host %.17g\n", what, p,
                c, b->y[c * P + p], s + (double)c);
        return 1;
      }
    if (b->status[p] != (b->ix[p] + b->ix[P + p]) + b->ix[2 * P + p]) {
      fprintf(stderr, "sweep_throughput: copy-only (%s): row %zu status %d\n", what, p, b->status[p]);
      return 1;
    }
  }
  memset(b->y, 0, KL_NOUT * P * sizeof(double));
  memset(b->status, 0, P * sizeof(int));
  return 0;
}

/* One copy-only launch over b: in place (inplace = 1) or through device buffers and transfers. */
static int copy_launch(kl_host *h, cl_kernel k, kl_impact_batch *b, int inplace)
{
  const size_t P = b->P, wg = 64, global = (P + wg - 1) / wg * wg;
  const size_t bx = KL_NIN * P * sizeof(double), bix = KL_NIIN * P * sizeof(int), by = KL_NOUT * P * sizeof(double),
               bst = P * sizeof(int);
  cl_context c = kl_host_context(h);
  cl_command_queue q = kl_host_queue(h);
  cl_int err = CL_SUCCESS, e2 = CL_SUCCESS;
  const cl_mem_flags fi = CL_MEM_READ_ONLY | (inplace ? CL_MEM_USE_HOST_PTR : 0);
  const cl_mem_flags fo = CL_MEM_WRITE_ONLY | (inplace ? CL_MEM_USE_HOST_PTR : 0);
  cl_mem m[4] = {clCreateBuffer(c, fi, bx, inplace ? b->x : NULL, &err), NULL, NULL, NULL};
  if (err == CL_SUCCESS) m[1] = clCreateBuffer(c, fi, bix, inplace ? b->ix : NULL, &err);
  if (err == CL_SUCCESS) m[2] = clCreateBuffer(c, fo, by, inplace ? b->y : NULL, &err);
  if (err == CL_SUCCESS) m[3] = clCreateBuffer(c, fo, bst, inplace ? b->status : NULL, &err);
  const cl_int iP = (cl_int)P;
  if (err == CL_SUCCESS) err = clSetKernelArg(k, 0, sizeof iP, &iP);
  for (int i = 0; i < 4 && err == CL_SUCCESS; ++i) err = clSetKernelArg(k, (cl_uint)i + 1, sizeof m[i], &m[i]);
  if (err == CL_SUCCESS && !inplace) err = clEnqueueWriteBuffer(q, m[0], CL_FALSE, 0, bx, b->x, 0, NULL, NULL);
  if (err == CL_SUCCESS && !inplace) err = clEnqueueWriteBuffer(q, m[1], CL_FALSE, 0, bix, b->ix, 0, NULL, NULL);
  if (err == CL_SUCCESS) err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &wg, 0, NULL, NULL);
  if (err == CL_SUCCESS && !inplace) err = clEnqueueReadBuffer(q, m[2], CL_FALSE, 0, by, b->y, 0, NULL, NULL);
  if (err == CL_SUCCESS && !inplace) err = clEnqueueReadBuffer(q, m[3], CL_FALSE, 0, bst, b->status, 0, NULL, NULL);
  for (int i = 2; i < 4 && err == CL_SUCCESS && inplace; ++i) {
    void *ptr = clEnqueueMapBuffer(q, m[i], CL_TRUE, CL_MAP_READ, 0, i == 2 ? by : bst, 0, NULL, NULL, &err);
    if (err == CL_SUCCESS) err = clEnqueueUnmapMemObject(q, m[i], ptr, 0, NULL, NULL);
  }
  e2 = clFinish(q);
  for (int i = 0; i < 4; ++i)
    if (m[i]) clReleaseMemObject(m[i]);
  if (err != CL_SUCCESS || e2 != CL_SUCCESS) {
    fprintf(stderr, "sweep_throughput: copy-only kernel: OpenCL error %d\n", (int)(err != CL_SUCCESS ? err : e2));
    return 1;
  }
  return 0;
}

/* The ceilings above over b (its inputs; its results are overwritten): rate[0] in place, rate[1] with
 * transfers, rate[2] the OpenMP loop [scenarios/s]; *launch the seconds of one one-work-group launch in
 * place. rate[0], rate[1] and *launch are 0 without OpenCL. 0 on success. */
static int memory_ceiling(kl_host *h, int have_cl, kl_impact_batch *b, int reps, double rate[3], double *launch)
{
  const size_t P = b->P;
  double t[4][MAXREP];
  cl_program prog = NULL;
  cl_kernel k = NULL;
  kl_impact_batch *one = NULL;
  int bad = 1;
  rate[0] = rate[1] = rate[2] = *launch = 0.0;
  if (have_cl) {
    cl_int err = CL_SUCCESS;
    if (kl_host_build(h, "benchmarks/sweep_throughput.c", copy_src, &prog) != KELVIN_OK) {
      fprintf(stderr, "sweep_throughput: copy-only kernel: %s\n", kl_host_errmsg(h));
      goto done;
    }
    k = clCreateKernel(prog, "kl_copy_only", &err);
    if (err != CL_SUCCESS || kl_impact_batch_create(64, 0, &one) != KELVIN_OK) goto done;
    for (size_t p = 0; p < 64; ++p) kl_impact_batch_set(one, p, kl_impact_batch_get(b, p));
  }
  for (int r = -1; r < reps; ++r) /* r = -1: a first run of each (pocl compiles the work-group function) */
    for (int v = 0; v < 4; ++v) {
      if (v != 2 && !have_cl) continue;
      const double a = kl_bench_now();
      if (v == 2) {
#pragma omp parallel for schedule(static)
        for (size_t p = 0; p < P; ++p) copy_row(b, p);
      } else if (copy_launch(h, k, v == 3 ? one : b, v != 1))
        goto done;
      if (r >= 0) t[v][r] = kl_bench_now() - a;
      if (v == 2) kl_bench_settle();
      static const char *what[4] = {"OpenCL in place", "OpenCL with transfers", "OpenMP", "one work-group"};
      if (copy_check(v == 3 ? one : b, what[v])) goto done;
    }
  for (int v = 0; v < 3; ++v)
    if (v == 2 || have_cl) rate[v] = (double)P / kl_bench_median(t[v], reps);
  if (have_cl) *launch = kl_bench_median(t[3], reps);
  bad = 0;
done:
  kl_impact_batch_destroy(one);
  if (k) clReleaseKernel(k);
  if (prog) clReleaseProgram(prog);
  return bad;
}

typedef enum { PATH_CL, PATH_OMP, PATH_SERIAL, NPATH } path_t;

/* Median rate [scenarios/s] of each path that is on, over reps repeats that interleave the paths (so
 * a change in the machine's load hits all three alike). 0 on success. */
static int measure(kl_host *h, kl_impact_batch *b, int reps, const int on[NPATH], double rate[NPATH])
{
  double t[NPATH][MAXREP];
  for (int r = 0; r < reps; ++r)
    for (int path = 0; path < NPATH; ++path) {
      if (!on[path]) continue;
      const double a = kl_bench_now();
      if (path == PATH_CL) {
        if (kl_impact_run(h, b, NULL, NULL) != KELVIN_OK) {
          fprintf(stderr, "sweep_throughput: %s\n", kl_host_errmsg(h));
          return 1;
        }
      } else if (path == PATH_OMP)
        kl_impact_run_omp(b, 0, b->P, 0);
      else
        kl_impact_run_serial(b, 0, b->P);
      t[path][r] = kl_bench_now() - a;
      if (path == PATH_OMP) kl_bench_settle();
    }
  for (int path = 0; path < NPATH; ++path) rate[path] = on[path] ? (double)b->P / kl_bench_median(t[path], reps) : 0.0;
  return 0;
}

/* Options, the build, the flop count, then the table over P. */
int main(int argc, char **argv)
{
  long maxp = 10000000, minp = 1000, serial_maxp = -1;
  int reps_small = 7, reps_large = 5;
  const char *device = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--max-p") == 0 && i + 1 < argc) maxp = atol(argv[++i]);
    else if (strcmp(argv[i], "--min-p") == 0 && i + 1 < argc) minp = atol(argv[++i]);
    else if (strcmp(argv[i], "--serial-max-p") == 0 && i + 1 < argc) serial_maxp = atol(argv[++i]);
    else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) reps_small = reps_large = atoi(argv[++i]);
    else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
    else {
      return kl_bench_usage(argv[i],
                            "usage: sweep_throughput [--min-p N] [--max-p N] [--serial-max-p N] [--repeats R] [--device SPEC]\n"
                            "  P runs over powers of ten from --min-p [1e3] to --max-p [1e7: ~6 min on 2 cores];\n"
                            "  serial stops at --serial-max-p [= max-p]; medians of R repeats [7 below 1e6, 5 from 1e6]\n");
    }
  }
  if (serial_maxp < 0) serial_maxp = maxp;
  if (minp < 1 || maxp < minp || reps_small < 1 || reps_small > MAXREP) {
    fprintf(stderr, "sweep_throughput: bad sizes or repeats (1 ... %d)\n", MAXREP);
    return 2;
  }

  /* the OpenCL path: open, build, and the first launch (pocl compiles the work-group function then) */
  const double t0 = kl_bench_now();
  kl_host *h = kl_bench_open("sweep_throughput", device);
  if (!h) return 1;
  const kelvin_status st = kl_host_build_impact(h); /* built on first use otherwise */
  const double t_open = kl_bench_now() - t0;
  if (st != KELVIN_OK) {
    fprintf(stderr, "sweep_throughput: %s\n", kl_host_errmsg(h));
    kl_host_destroy(h);
    return 1;
  }
  const int have_cl = kl_host_is_opencl(h);
  double t_first = 0.0;
  {
    kl_impact_batch *w = NULL;
    if (kl_impact_batch_create(1000, 0, &w) != KELVIN_OK) return 1;
    for (size_t p = 0; p < 1000; ++p) kl_impact_batch_set(w, p, scenario());
    if (have_cl) {
      const double a = kl_bench_now();
      if (kl_impact_run(h, w, NULL, NULL) != KELVIN_OK) {
        fprintf(stderr, "sweep_throughput: %s\n", kl_host_errmsg(h));
        return 1;
      }
      t_first = kl_bench_now() - a;
    }
    kl_impact_batch_destroy(w);
  }

  /* flops per scenario of the mix */
  enum { NCOUNT = 20000 };
  kl_flop_scenario *fs = malloc(NCOUNT * sizeof *fs);
  if (!fs) return 1;
  rng = 12345;
  for (int i = 0; i < NCOUNT; ++i) {
    const kl_impact_in in = scenario();
    fs[i] = (kl_flop_scenario){in.m, in.K, in.n, in.cr, in.v0, in.fe, in.model, in.law, in.rule};
  }
  double arith, transc;
  kl_flop_count(fs, NCOUNT, &arith, &transc);
  free(fs);
  const double flops = arith + TRANSC_FLOPS * transc;

  int simd;
  char model[256];
  const double ghz = cpu_ghz(&simd, model, sizeof model);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const int threads = omp_get_max_threads();
  const double peak = (double)cores * ghz * (double)simd * 2.0 * 2.0; /* GFLOP/s */
  const double scalar_peak = (double)cores * ghz * 2.0;

  /* the peak is this machine's CPU's: an OpenCL device that is not the CPU (a GPU) is not set against it */
  const kl_device_info *dev = have_cl ? kl_host_device(h) : NULL;
  const int cl_on_cpu = dev && (dev->type & CL_DEVICE_TYPE_CPU);
  const int cl_in_best = have_cl && cl_on_cpu;
  printf("## kelvin sweep throughput\n\n");
  printf("- machine: %s, %ld cores at %.3f GHz; peak %.1f GFLOP/s (cores x GHz x %d doubles per FMA x 2 FMA pipes x 2), "
         "scalar non-FMA %.1f GFLOP/s (cores x GHz x 2)\n",
         model, cores, ghz, peak, simd, scalar_peak);
  printf("- OpenCL: %s\n", have_cl ? kl_host_notice(h) : "none (OpenMP twin only)");
  if (have_cl)
    printf("- kernel build: clBuildProgram %.3f s (%s caches binaries: a cold cache takes longer); open incl. "
           "build %.3f s; first launch of 1000 scenarios %.3f s%s\n",
           kl_host_build_seconds(h), cl_on_cpu ? "pocl" : "the driver", t_open, t_first,
           cl_on_cpu ? " (pocl compiles the work-group function then)" : "");
  if (have_cl && !cl_on_cpu)
    printf("- the OpenCL device is not the CPU: 'best GFLOP/s' and 'of peak' are the CPU paths' (OpenMP, serial) "
           "against the CPU's peak; the device's own rate is its scenarios/s x the flops per scenario\n");
  if (have_cl) {
    double gf[2];
    if (ceiling(h, cl_on_cpu, reps_small, gf) != 0) return 1;
    if (cl_on_cpu)
      printf("- this device compiler's ceiling: a kernel of independent multiply-add chains only (straight-line, %d "
             "flops a work-item) runs at %.1f GFLOP/s (%.1f %% of peak) with a separate multiply and add, as our "
             "kernels are compiled (no contraction), and %.1f GFLOP/s (%.1f %%) with fma(); results checked bit for "
             "bit against the host\n",
             CEIL_FLOPS, gf[0], 100.0 * gf[0] / peak, gf[1], 100.0 * gf[1] / peak);
    else
      printf("- this device's ceiling: a kernel of independent multiply-add chains only (straight-line, %d flops a "
             "work-item) runs at %.1f GFLOP/s with a separate multiply and add, as our kernels are compiled (no "
             "contraction), and %.1f GFLOP/s with fma(); results checked bit for bit against the host\n",
             CEIL_FLOPS, gf[0], gf[1]);
  }
  printf("- OpenMP: %d threads; flops per scenario (counted, mix of the built-in sweep): %.0f arithmetic + %.1f "
         "library transcendental calls x %.0f = %.0f\n",
         threads, arith, transc, TRANSC_FLOPS, flops);
  printf("- medians of %d repeats (%d from P = 1e6), the paths interleaved; times exclude the build, include "
         "transfers; load average "
         "at start %.2f\n\n",
         reps_small, reps_large, loadavg());
  printf("| P | OpenCL [scen/s] | OpenMP %dT [scen/s] | serial [scen/s] | OpenCL / OpenMP | OpenCL / serial | "
         "OpenMP / serial | best GFLOP/s | of peak | of scalar peak |\n",
         threads);
  printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  fflush(stdout);

  for (long P = minp; P <= maxp; P *= 10) {
    kl_impact_batch *b = NULL;
    if (kl_impact_batch_create((size_t)P, 0, &b) != KELVIN_OK) {
      fprintf(stderr, "sweep_throughput: out of memory at P = %ld\n", P);
      break;
    }
    rng = 0x2545F4914F6CDD1Du + (uint64_t)P;
    for (long p = 0; p < P; ++p) kl_impact_batch_set(b, (size_t)p, scenario());
    const int reps = P >= 1000000 ? reps_large : reps_small;
    double rate[NPATH];
    int on[NPATH];
    for (int path = 0; path < NPATH; ++path)
      on[path] = !(path == PATH_CL && !have_cl) && !(path == PATH_SERIAL && P > serial_maxp);
    if (measure(h, b, reps, on, rate) != 0) return 1;
    double best = 0.0;
    for (int path = 0; path < NPATH; ++path)
      if (rate[path] > best && (path != PATH_CL || cl_in_best)) best = rate[path];
    const double gf = best * flops * 1e-9;
    char c0[32] = "-", c2[32] = "-", r0[32] = "-", r1[32] = "-", rco[32] = "-";
    if (rate[PATH_CL] > 0) {
      snprintf(c0, sizeof c0, "%.3g", rate[PATH_CL]);
      snprintf(rco, sizeof rco, "%.2f", rate[PATH_CL] / rate[PATH_OMP]);
    }
    if (rate[PATH_SERIAL] > 0) {
      snprintf(c2, sizeof c2, "%.3g", rate[PATH_SERIAL]);
      if (rate[PATH_CL] > 0) snprintf(r0, sizeof r0, "%.2f", rate[PATH_CL] / rate[PATH_SERIAL]);
      snprintf(r1, sizeof r1, "%.2f", rate[PATH_OMP] / rate[PATH_SERIAL]);
    }
    printf("| 10^%.0f | %s | %.3g | %s | %s | %s | %s | %.2f | %.2f %% | %.1f %% |\n", log10((double)P), c0,
           rate[PATH_OMP], c2, rco, r0, r1, gf, 100.0 * gf / peak, 100.0 * gf / scalar_peak);
    fflush(stdout);
    kl_impact_batch_destroy(b);
  }

  /* by model: where the time goes, each model's OpenCL / OpenMP ratio, and its own flop rate (its
   * scenarios' flops counted apart) */
  const long Pm = maxp < 1000000 ? maxp : 1000000;
  const int reps_m = Pm >= 1000000 ? reps_large : reps_small;
  printf("\nBy model, P = %ld scenarios of each (same random cr and v0 ranges), medians of %d repeats; flops per "
         "scenario counted over 20000 of the model's own scenarios:\n\n",
         Pm, reps_m);
  printf("| model | flops per scenario | OpenCL [scen/s] | OpenMP [scen/s] | serial [scen/s] | OpenCL / OpenMP | "
         "OpenMP / serial | best GFLOP/s | of peak |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  const char *mname[3] = {"Kelvin-Voigt (2 separation rules)", "Hunt-Crossley (5 damping laws)", "Emden-Fowler"};
  const int vlo[3] = {0, 2, 7}, vhi[3] = {2, 7, 8};
  for (int mi = 0; mi < 3; ++mi) {
    kl_flop_scenario *fm = malloc(NCOUNT * sizeof *fm);
    if (!fm) return 1;
    rng = 777u + (uint64_t)mi;
    for (int i = 0; i < NCOUNT; ++i) {
      const kl_impact_in in = scenario_of(vlo[mi] + i % (vhi[mi] - vlo[mi]));
      fm[i] = (kl_flop_scenario){in.m, in.K, in.n, in.cr, in.v0, in.fe, in.model, in.law, in.rule};
    }
    double am, tm;
    kl_flop_count(fm, NCOUNT, &am, &tm);
    free(fm);
    const double flops_m = am + TRANSC_FLOPS * tm;
    kl_impact_batch *b = NULL;
    if (kl_impact_batch_create((size_t)Pm, 0, &b) != KELVIN_OK) return 1;
    rng = 0x9E3779B97F4A7C15u + (uint64_t)mi;
    for (long p = 0; p < Pm; ++p)
      kl_impact_batch_set(b, (size_t)p, scenario_of(vlo[mi] + (int)(p % (vhi[mi] - vlo[mi]))));
    const int on[NPATH] = {have_cl, 1, 1};
    double rate[NPATH];
    if (measure(h, b, reps_m, on, rate) != 0) return 1;
    char c0[32] = "-", rco[32] = "-", fl[32] = "-", gfs[32] = "-", pk[32] = "-";
    if (have_cl) {
      snprintf(c0, sizeof c0, "%.3g", rate[PATH_CL]);
      snprintf(rco, sizeof rco, "%.2f", rate[PATH_CL] / rate[PATH_OMP]);
    }
    if (flops_m > 0) {
      const double best = (cl_in_best && rate[PATH_CL] > rate[PATH_OMP]) ? rate[PATH_CL] : rate[PATH_OMP];
      snprintf(fl, sizeof fl, "%.0f", flops_m);
      snprintf(gfs, sizeof gfs, "%.2f", best * flops_m * 1e-9);
      snprintf(pk, sizeof pk, "%.2f %%", 100.0 * best * flops_m * 1e-9 / peak);
    }
    printf("| %s | %s | %s | %.3g | %.3g | %s | %.2f | %s | %s |\n", mname[mi], fl, c0, rate[PATH_OMP],
           rate[PATH_SERIAL], rco, rate[PATH_OMP] / rate[PATH_SERIAL], gfs, pk);
    fflush(stdout);
    kl_impact_batch_destroy(b);
  }
  { /* the general law (issue 36): no closed form, so its impacts are stepped (kernels/kl_impact_step.h); far
     * slower per scenario, so a smaller P; the OpenCL results equal the serial loop's, bit for bit, before a
     * rate is printed (the flop counter of benchmarks/flop_count.cpp does not know the law: no flop rate) */
    const long Pg = Pm < 10000 ? Pm : 10000;
    kl_impact_batch *b = NULL;
    if (kl_impact_batch_create((size_t)Pg, 0, &b) != KELVIN_OK) return 1;
    rng = 0x51ED2701u;
    for (long p = 0; p < Pg; ++p) {
      kl_impact_in in = scenario_of(0);
      in.model = KL_MODEL_GEN;
      in.n = 1.5;                                  /* k d^1.5 (K = 1e9) */
      in.n2 = (double)(p % 3) * 0.5 + 0.5;         /* 0.5, 1, 1.5 */
      in.rate_exp = 0.5 + 0.6 * (double)(p % 4) / 3.0; /* 0.5 .. 1.1 */
      in.c = 1e7 * unif();
      kl_impact_batch_set(b, (size_t)p, in);
    }
    const int on[NPATH] = {have_cl, 1, 1};
    double rate[NPATH];
    if (measure(h, b, 3, on, rate) != 0) return 1; /* the serial loop runs last: its results stay in b */
    size_t ok = 0, differ = 0;
    double *ys = malloc((size_t)Pg * KL_NOUT * sizeof *ys);
    int *ss = malloc((size_t)Pg * sizeof *ss);
    if (!ys || !ss) return 1;
    memcpy(ys, b->y, (size_t)Pg * KL_NOUT * sizeof *ys);
    memcpy(ss, b->status, (size_t)Pg * sizeof *ss);
    if (have_cl && kl_impact_run(h, b, NULL, NULL) != KELVIN_OK) return 1;
    for (long p = 0; p < Pg; ++p) {
      ok += ss[p] == 0;
      differ += ss[p] != b->status[p] || memcmp(ys + p, b->y + p, sizeof(double)) != 0;
      for (int q = 1; q < KL_NOUT; ++q) differ += memcmp(ys + (size_t)q * Pg + p, b->y + (size_t)q * Pg + p, 8) != 0;
    }
    free(ys);
    free(ss);
    if (differ) {
      fprintf(stderr, "sweep_throughput: general law: %zu OpenCL results differ from the serial loop's\n", differ);
      return 1;
    }
    printf("\nThe general law F = k d^1.5 + c sgn(d')|d'|^m d^n2 (n2 0.5, 1, 1.5; m 0.5 .. 1.1; c up to 1e7; the same cr "
           "and v0 ranges), stepped with error control; P = %ld, medians of 3; %zu of them separate (the others "
           "settle: KL_NO_SEPARATION); OpenCL equal to the serial loop bit for bit:\n\n",
           Pg, ok);
    printf("| model | OpenCL [scen/s] | OpenMP [scen/s] | serial [scen/s] | OpenCL / OpenMP | OpenMP / serial |\n");
    printf("|---|---:|---:|---:|---:|---:|\n");
    char c0[32] = "-", rco[32] = "-";
    if (have_cl) {
      snprintf(c0, sizeof c0, "%.3g", rate[PATH_CL]);
      snprintf(rco, sizeof rco, "%.2f", rate[PATH_CL] / rate[PATH_OMP]);
    }
    printf("| general law (by the step) | %s | %.3g | %.3g | %s | %.2f |\n", c0, rate[PATH_OMP], rate[PATH_SERIAL], rco,
           rate[PATH_OMP] / rate[PATH_SERIAL]);
    fflush(stdout);
    kl_impact_batch_destroy(b);
  }
  { /* the memory ceiling (see memory_ceiling) at the same P, on a batch of the mix */
    kl_impact_batch *b = NULL;
    if (kl_impact_batch_create((size_t)Pm, 0, &b) != KELVIN_OK) return 1;
    rng = 0x2545F4914F6CDD1Du + (uint64_t)Pm;
    for (long p = 0; p < Pm; ++p) kl_impact_batch_set(b, (size_t)p, scenario());
    double cr[3], launch;
    if (memory_ceiling(h, have_cl, b, reps_m, cr, &launch) != 0) return 1;
    printf("\nMemory ceiling, P = %ld, medians of %d repeats: a copy-only kernel that reads and writes a scenario's "
           "%.0f bytes (inputs, metrics, status) and computes nothing; results checked:\n\n",
           Pm, reps_m, ROW_BYTES);
    printf("| path | [scen/s] | GB/s |\n|---|---:|---:|\n");
    if (have_cl) {
      printf("| OpenCL, the batch's tables in place (as a CPU device is run) | %.3g | %.2f |\n", cr[0],
             cr[0] * ROW_BYTES * 1e-9);
      printf("| OpenCL, device buffers with write and read transfers (as a GPU is run) | %.3g | %.2f |\n", cr[1],
             cr[1] * ROW_BYTES * 1e-9);
    }
    printf("| OpenMP %dT loop (the twin's) | %.3g | %.2f |\n", threads, cr[2], cr[2] * ROW_BYTES * 1e-9);
    if (have_cl)
      printf("\nper-launch cost (one work-group in place: buffers, launch, map, release): %.1f us\n", launch * 1e6);
    kl_impact_batch_destroy(b);
  }
  printf("\nload average at end %.2f\n", loadavg());
  kl_host_destroy(h);
  return 0;
}
