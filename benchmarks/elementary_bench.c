/* benchmarks/elementary_bench.c: the elementary functions the closed forms call in their hot loops --
 * the library's (glibc on the host, the OpenCL implementation's on the device) against kelvin's own
 * (kernels/kl_math.h: kl_exp, kl_log, kl_log1p, kl_expm1, kl_sincos, kl_powr, kl_atan2) -- on the
 * OpenCL device (pocl's CPU device here) and on the host with OpenMP, in one run. Prints a Markdown
 * table.
 *
 * What is timed: each of N work-items (host: OpenMP iterations) runs a chain of ITERS calls in which
 * each argument depends on the previous result (as in the closed forms' iterations, where latency
 * rather than throughput counts), over arguments spread across the function's working range; ns per
 * call per core = wall time x cores / (N x ITERS). Medians of REPS repeats, OpenCL and host
 * interleaved, with a 20 ms pause after each host run: idle OpenMP workers spin-wait for a while
 * after a parallel region and would otherwise take cores from the device's threads.
 * The device program is kernels/impact.cl as embedded (it carries kl_math.h) plus the kernel below.
 *
 * Checked before anything is printed: every chain's result (N per function, device results read back)
 * against the same chain run on the host with glibc, to 1e-14 relative (a sum of 1000 results of
 * ~1 ulp each; measured worst 5.7e-16 for kl_* and for the device); a function that disagrees is not
 * timed, gets no rate, the program says why on stderr and exits 1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "benchmarks/bench_host.h"
#include "benchmarks/bench_util.h"
#include "host/host.h"
#include "kernels/kl_math.h"
#include "kl_kernel_sources.h"

#define N 4096
#define ITERS 1000
#define REPS 7
#define NF 14

/* One chain step of function f at argument x; acc carries the dependence (acc * 1e-300 is 0 in value
 * but not to the compiler). The same text is the OpenCL kernel below (KL_BENCH_BODY). */
#define KL_BENCH_BODY                                                                                          \
  kl_real acc = 0.0, x = 0.1 + 1e-7 * (kl_real)i;                                                              \
  for (int k = 0; k < iters; ++k) {                                                                            \
    const kl_real a = x + acc * 1e-300;                                                                        \
    kl_real y, s1, c1;                                                                                         \
    switch (f) {                                                                                               \
    case 0: y = exp(-a); break;                                                                                \
    case 1: y = kl_exp(-a); break;                                                                             \
    case 2: y = log(a); break;                                                                                 \
    case 3: y = kl_log(a); break;                                                                              \
    case 4: y = log1p(a); break;                                                                               \
    case 5: y = kl_log1p(a); break;                                                                            \
    case 6: y = expm1(a - 1.5); break;                                                                         \
    case 7: y = kl_expm1(a - 1.5); break;                                                                      \
    case 8: y = sin(a) + cos(a); break;                                                                        \
    case 9: kl_sincos(a, &s1, &c1); y = s1 + c1; break;                                                        \
    case 10: y = pow(a, 0.4); break;                                                                           \
    case 11: y = kl_powr(a, 0.4); break;                                                                       \
    case 12: y = atan2(a, 0.7); break;                                                                         \
    default: y = kl_atan2(a, 0.7); break;                                                                      \
    }                                                                                                          \
    acc += y;                                                                                                  \
    x += 0.37;                                                                                                 \
    if (x > 3.0) x -= 2.9;                                                                                     \
  }

#define KL_STR2(...) #__VA_ARGS__
#define KL_STR(...) KL_STR2(__VA_ARGS__)

static const char *kernel_src = "\n__kernel void kl_elem_bench(const int f, const int iters, __global double *out)\n"
                                "{\n  const int i = (int)get_global_id(0);\n" KL_STR(KL_BENCH_BODY) "\n  out[i] = acc;\n}\n";

static const char *names[NF / 2] = {"exp", "log", "log1p", "expm1", "sin + cos", "pow(x, 0.4)", "atan2"};

/* One chain on the host (work-item i), for the checks. */
static double chain_host(int f, int iters, int i)
{
  KL_BENCH_BODY
  return acc;
}

/* Largest relative difference over the N chains between res (f's results) and the chains of the
 * reference function fref on the host. */
static double chain_diff(const double *res, int fref, int iters)
{
  double worst = 0.0;
  for (int i = 0; i < N; ++i) {
    const double r = chain_host(fref, iters, i);
    const double e = fabs(res[i] - r) / fmax(fabs(r), 1e-300);
    worst = (e > worst || e != e) ? e : worst;
  }
  return worst;
}

/* The host chain over all work-items, OpenMP across them; returns a checksum. */
static double run_host(int f, int iters)
{
  double tot = 0.0;
#pragma omp parallel for reduction(+ : tot) schedule(static)
  for (int i = 0; i < N; ++i) {
    KL_BENCH_BODY
    tot += acc;
  }
  return tot;
}

int main(int argc, char **argv)
{
  const char *device = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
    else {
      return kl_bench_usage(argv[i], "usage: elementary_bench [--device SPEC]\n");
    }
  }
  kl_host *h = kl_bench_open("elementary_bench", device);
  if (!h) return 1;
  const int have_cl = kl_host_is_opencl(h);
  cl_program prog = NULL;
  cl_kernel kern = NULL;
  cl_mem out = NULL;
  if (have_cl) {
    const size_t len = strlen(kl_cl_src_impact) + strlen(kernel_src) + 1;
    char *src = malloc(len);
    if (!src) return 1;
    snprintf(src, len, "%s%s", kl_cl_src_impact, kernel_src);
    const kelvin_status st = kl_host_build(h, "benchmarks/elementary_bench.c", src, &prog);
    free(src);
    cl_int err = CL_SUCCESS;
    if (st == KELVIN_OK) kern = clCreateKernel(prog, "kl_elem_bench", &err);
    if (st == KELVIN_OK && err == CL_SUCCESS)
      out = clCreateBuffer(kl_host_context(h), CL_MEM_WRITE_ONLY, N * sizeof(double), NULL, &err);
    if (st != KELVIN_OK || err != CL_SUCCESS) {
      fprintf(stderr, "elementary_bench: %s\n", st != KELVIN_OK ? kl_host_errmsg(h) : "kernel or buffer creation failed");
      return 1;
    }
  }
  /* verify before timing: kl_* and the device against glibc chain by chain (ITERS calls each) */
  int bad = 0;
  double worst_kl = 0.0, worst_dev = 0.0;
  double *res = malloc(N * sizeof *res);
  if (!res) return 1;
  for (int f = 0; f < NF; ++f) {
    const int fref = f & ~1; /* the glibc function of the pair */
    for (int i = 0; i < N; ++i) res[i] = chain_host(f, ITERS, i);
    const double eh = chain_diff(res, fref, ITERS);
    if (f & 1) worst_kl = fmax(worst_kl, eh);
    if (!(eh <= 1e-14)) {
      fprintf(stderr, "elementary_bench: host %s%s differs from glibc by %.2e relative (limit 1e-14)\n",
              (f & 1) ? "kl_" : "", names[f / 2], eh);
      bad |= 1 << (f / 2);
    }
    if (have_cl) {
      const cl_int fi = f, it = ITERS;
      const size_t g = N;
      cl_command_queue q = kl_host_queue(h);
      if (clSetKernelArg(kern, 0, sizeof fi, &fi) != CL_SUCCESS || clSetKernelArg(kern, 1, sizeof it, &it) != CL_SUCCESS ||
          clSetKernelArg(kern, 2, sizeof out, &out) != CL_SUCCESS ||
          clEnqueueNDRangeKernel(q, kern, 1, NULL, &g, NULL, 0, NULL, NULL) != CL_SUCCESS ||
          clEnqueueReadBuffer(q, out, CL_TRUE, 0, N * sizeof(double), res, 0, NULL, NULL) != CL_SUCCESS) {
        fprintf(stderr, "elementary_bench: check launch failed\n");
        return 1;
      }
      const double ed = chain_diff(res, fref, ITERS);
      worst_dev = fmax(worst_dev, ed);
      if (!(ed <= 1e-14)) {
        fprintf(stderr, "elementary_bench: device %s%s differs from host glibc by %.2e relative (limit 1e-14)\n",
                (f & 1) ? "kl_" : "", names[f / 2], ed);
        bad |= 1 << (f / 2);
      }
    }
  }
  free(res);
  fprintf(stderr, "elementary_bench: checked %d x %d chains per function: kl_* vs glibc worst %.2e, device vs host "
                  "glibc worst %.2e (limit 1e-14)\n", N, ITERS, worst_kl, worst_dev);
  const int threads = omp_get_max_threads();
  printf("Elementary functions in a dependent chain (%d chains x %d calls; ns per call per core, medians of %d; "
         "host: glibc and kl_* with OpenMP, %d threads; device: %s)\n\n",
         N, ITERS, REPS, threads, have_cl ? kl_host_notice(h) : "none");
  printf("| function | host library | host kl_* | device library | device kl_* | device / host, library | device / "
         "host, kl_* |\n|---|---:|---:|---:|---:|---:|---:|\n");
  double check = 0.0;
  for (int fp = 0; fp < NF / 2; ++fp) {
    if (bad & (1 << fp)) { /* wrong results are not timed */
      printf("| %s | wrong results: no rate (see stderr) | | | | | |\n", names[fp]);
      continue;
    }
    double ns[2][2] = {{0, 0}, {0, 0}}; /* [host, device][library, kl] */
    for (int which = 0; which < 2; ++which) {
      const int f = 2 * fp + which;
      double th[REPS], td[REPS];
      for (int r = 0; r < REPS; ++r) {
        if (have_cl) {
          const cl_int fi = f, it = ITERS;
          const size_t g = N;
          cl_command_queue q = kl_host_queue(h);
          if (clSetKernelArg(kern, 0, sizeof fi, &fi) != CL_SUCCESS || clSetKernelArg(kern, 1, sizeof it, &it) != CL_SUCCESS ||
              clSetKernelArg(kern, 2, sizeof out, &out) != CL_SUCCESS) {
            fprintf(stderr, "elementary_bench: clSetKernelArg failed\n");
            return 1;
          }
          if (r == 0 && (clEnqueueNDRangeKernel(q, kern, 1, NULL, &g, NULL, 0, NULL, NULL) != CL_SUCCESS ||
                         clFinish(q) != CL_SUCCESS)) { /* warm-up: pocl compiles the work-group function */
            fprintf(stderr, "elementary_bench: kernel launch failed\n");
            return 1;
          }
          const double a = kl_bench_now();
          if (clEnqueueNDRangeKernel(q, kern, 1, NULL, &g, NULL, 0, NULL, NULL) != CL_SUCCESS || clFinish(q) != CL_SUCCESS) {
            fprintf(stderr, "elementary_bench: kernel launch failed\n");
            return 1;
          }
          td[r] = kl_bench_now() - a;
        }
        const double a = kl_bench_now();
        check += run_host(f, ITERS);
        th[r] = kl_bench_now() - a;
        kl_bench_settle();
      }
      const double scale = 1e9 / ((double)N * ITERS);
      ns[0][which] = kl_bench_median(th, REPS) * threads * scale;
      if (have_cl) ns[1][which] = kl_bench_median(td, REPS) * (double)kl_host_device(h)->compute_units * scale;
    }
    if (have_cl)
      printf("| %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |\n", names[fp], ns[0][0], ns[0][1], ns[1][0], ns[1][1],
             ns[1][0] / ns[0][0], ns[1][1] / ns[0][1]);
    else
      printf("| %s | %.1f | %.1f | - | - | - | - |\n", names[fp], ns[0][0], ns[0][1]);
    fflush(stdout);
  }
  printf("\n(checksum %.6g)\n", check);
  if (out) clReleaseMemObject(out);
  if (kern) clReleaseKernel(kern);
  if (prog) clReleaseProgram(prog);
  kl_host_destroy(h);
  return bad ? 1 : 0;
}
