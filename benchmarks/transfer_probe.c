/* benchmarks/transfer_probe.c: what moving an impact batch to an OpenCL device and back costs, from
 * pageable (malloc) and from pinned (CL_MEM_ALLOC_HOST_PTR, mapped) host memory.
 *
 *   transfer_probe [--device SPEC] [--scenarios P]
 *
 * Per repeat: one clEnqueueWriteBuffer of the batch's inputs (P x (6 doubles + 3 ints), as
 * host/impact_batch.c sends them) and one clEnqueueReadBuffer of its outputs (P x (7 doubles + 1 int)),
 * then clFinish; medians of 9. Before any time is printed, each path's round trip is checked: what was
 * written is read back and compared byte for byte. On a GPU this bounds the sweep of the cheap models
 * (benchmarks/RESULTS.md, "On a GPU"); on pocl the device shares host memory and the batch runs in place
 * (no copy), so the figures there say little. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/bench_host.h"
#include "benchmarks/bench_util.h"
#include "host/host.h"
#include "kernels/kl_impact_batch.h"

#define REPS 9

/* median seconds of REPS write + read round trips from src / into dst; 0 on success */
static int time_path(cl_command_queue q, cl_mem din, cl_mem dout, size_t in_b, size_t out_b, void *src, void *dst,
                     double *sec)
{
  double t[REPS];
  for (int r = 0; r < REPS; ++r) {
    const double a = kl_bench_now();
    if (clEnqueueWriteBuffer(q, din, CL_FALSE, 0, in_b, src, 0, NULL, NULL) != CL_SUCCESS ||
        clEnqueueReadBuffer(q, dout, CL_FALSE, 0, out_b, dst, 0, NULL, NULL) != CL_SUCCESS || clFinish(q) != CL_SUCCESS)
      return 1;
    t[r] = kl_bench_now() - a;
  }
  *sec = kl_bench_median(t, REPS);
  return 0;
}

/* write src to buf, read it back into back, compare: 0 if equal */
static int round_trip(cl_command_queue q, cl_mem buf, size_t n, const void *src, void *back)
{
  memset(back, 0, n);
  if (clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, n, src, 0, NULL, NULL) != CL_SUCCESS ||
      clEnqueueReadBuffer(q, buf, CL_TRUE, 0, n, back, 0, NULL, NULL) != CL_SUCCESS)
    return 1;
  return memcmp(src, back, n) != 0;
}

int main(int argc, char **argv)
{
  const char *device = NULL;
  size_t P = 1000000;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
    else if (strcmp(argv[i], "--scenarios") == 0 && i + 1 < argc) P = strtoul(argv[++i], NULL, 10);
    else {
      return kl_bench_usage(argv[i], "usage: transfer_probe [--device SPEC] [--scenarios P (1e6)]\n");
    }
  }
  if (P < 1 || P > 100000000) {
    fprintf(stderr, "transfer_probe: --scenarios must be in [1, 1e8]\n");
    return 2;
  }
  kl_host *h = kl_bench_open("transfer_probe", device);
  if (!h) return 1;
  if (!kl_host_is_opencl(h)) {
    fprintf(stderr, "transfer_probe: no OpenCL device (%s)\n", kl_host_notice(h));
    kl_host_destroy(h);
    return 1;
  }
  const size_t in_b = P * (KL_NIN * sizeof(double) + KL_NIIN * sizeof(int));
  const size_t out_b = P * (KL_NOUT * sizeof(double) + sizeof(int));
  const size_t big = in_b > out_b ? in_b : out_b;
  cl_context ctx = kl_host_context(h);
  cl_command_queue q = kl_host_queue(h);
  cl_int err = CL_SUCCESS;
  int bad = 1;
  char *hin = malloc(in_b), *hout = malloc(out_b), *back = malloc(big), *pi = NULL, *po = NULL;
  cl_mem din = clCreateBuffer(ctx, CL_MEM_READ_WRITE, in_b, NULL, &err);
  cl_mem dout = err == CL_SUCCESS ? clCreateBuffer(ctx, CL_MEM_READ_WRITE, out_b, NULL, &err) : NULL;
  cl_mem pin = err == CL_SUCCESS ? clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR, in_b, NULL, &err) : NULL;
  cl_mem pout = err == CL_SUCCESS ? clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR, out_b, NULL, &err) : NULL;
  if (err == CL_SUCCESS) pi = clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, in_b, 0, NULL, NULL, &err);
  if (err == CL_SUCCESS) po = clEnqueueMapBuffer(q, pout, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, out_b, 0, NULL, NULL, &err);
  if (err != CL_SUCCESS || !hin || !hout || !back || !pi || !po) {
    fprintf(stderr, "transfer_probe: out of memory for %zu scenarios (OpenCL error %d)\n", P, (int)err);
    goto done;
  }
  for (size_t i = 0; i < in_b; ++i) hin[i] = pi[i] = (char)(i * 2654435761u >> 24);
  for (size_t i = 0; i < out_b; ++i) hout[i] = po[i] = (char)(i * 40503u >> 8);
  if (round_trip(q, din, in_b, hin, back) || round_trip(q, dout, out_b, hout, back) || round_trip(q, din, in_b, pi, back) ||
      round_trip(q, dout, out_b, po, back)) {
    fprintf(stderr, "transfer_probe: a round trip through the device did not give back what was written\n");
    goto done;
  }
  double tp, tq;
  if (time_path(q, din, dout, in_b, out_b, hin, hout, &tp) || time_path(q, din, dout, in_b, out_b, pi, po, &tq)) {
    fprintf(stderr, "transfer_probe: a transfer failed\n");
    goto done;
  }
  printf("transfer_probe: %s; a batch of %zu scenarios, %zu bytes in and %zu out, medians of %d (round trips "
         "checked byte for byte)\n",
         kl_host_notice(h), P, in_b, out_b, REPS);
  printf("| host memory | in + out [ms] | GB/s | scenarios/s at that cost alone |\n|---|---:|---:|---:|\n");
  printf("| pageable (malloc) | %.2f | %.1f | %.3g |\n", 1e3 * tp, (double)(in_b + out_b) / tp * 1e-9, (double)P / tp);
  printf("| pinned (CL_MEM_ALLOC_HOST_PTR) | %.2f | %.1f | %.3g |\n", 1e3 * tq, (double)(in_b + out_b) / tq * 1e-9, (double)P / tq);
  bad = 0;
done:
  if (po) clEnqueueUnmapMemObject(q, pout, po, 0, NULL, NULL);
  if (pi) clEnqueueUnmapMemObject(q, pin, pi, 0, NULL, NULL);
  if (q) clFinish(q);
  if (pout) clReleaseMemObject(pout);
  if (pin) clReleaseMemObject(pin);
  if (dout) clReleaseMemObject(dout);
  if (din) clReleaseMemObject(din);
  free(hin);
  free(hout);
  free(back);
  kl_host_destroy(h);
  return bad;
}
