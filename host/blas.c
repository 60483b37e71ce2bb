/* host/blas.c: CLBlast DGEMM on the handle's context and queue, and its host twin. */
#include <stdint.h>
#include <string.h>

#include <clblast_c.h>
#include <omp.h>

#include "host/blas.h"
#include "host/clerr.h"
#include "host/host_impl.h"

kelvin_status kl_blas_dgemm_mem(kl_host *h, size_t m, size_t n, size_t k, cl_mem A, cl_mem B, cl_mem C)
{
  kelvin_status st = KELVIN_OK;
  if (!h->opencl) return kl_host_fail(h, KELVIN_ERR_ARG, "kl_blas_dgemm_mem: the handle runs the OpenMP twin");
  if (!m || !n || !k) return kl_host_fail(h, KELVIN_ERR_ARG, "kl_blas_dgemm: empty matrix (%zu x %zu x %zu)", m, n, k);
  cl_event ev = NULL;
  h->blas_used = 1; /* CLBlast now caches programs for our context: cleared in close */
  const CLBlastStatusCode bs = CLBlastDgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, m, n, k,
                                            1.0, A, 0, k, B, 0, n, 0.0, C, 0, n, &h->q, &ev);
  if (bs != CLBlastSuccess) {
    const kl_device_info *d = kl_host_device(h);
    return kl_host_fail(h, KELVIN_ERR_OPENCL, "CLBlastDgemm (%zu x %zu x %zu) failed: %s (%d) on '%s'", m, n, k,
                        kl_clblast_errname(bs), (int)bs, d ? d->name : "?");
  }
  KL_CL(h, clWaitForEvents(1, &ev));
cleanup:
  if (ev) clReleaseEvent(ev);
  return st;
}

/* C = A B on the host, rows of C in parallel; the sum runs over p in order, as the reference loop. */
static void host_gemm(size_t m, size_t n, size_t k, const double *A, const double *B, double *C, int threads)
{
#pragma omp parallel for schedule(static) num_threads(threads)
  for (size_t i = 0; i < m; ++i) {
    double *c = C + i * n;
    for (size_t j = 0; j < n; ++j) c[j] = 0.0;
    for (size_t p = 0; p < k; ++p) {
      const double a = A[i * k + p];
      const double *b = B + p * n;
      for (size_t j = 0; j < n; ++j) c[j] += a * b[j];
    }
  }
}

kelvin_status kl_blas_dgemm_host(kl_host *h, size_t m, size_t n, size_t k, const double *A, const double *B, double *C,
                                 int threads)
{
  if (!m || !n || !k) return kl_host_fail(h, KELVIN_ERR_ARG, "kl_blas_dgemm_host: empty matrix (%zu x %zu x %zu)", m, n, k);
  host_gemm(m, n, k, A, B, C, threads > 0 ? threads : omp_get_max_threads());
  return KELVIN_OK;
}

kelvin_status kl_blas_dgemm(kl_host *h, size_t m, size_t n, size_t k, const double *A, const double *B, double *C)
{
  kelvin_status st = KELVIN_OK;
  cl_int err = CL_SUCCESS;
  cl_mem dA = NULL, dB = NULL, dC = NULL;
  if (!m || !n || !k) return kl_host_fail(h, KELVIN_ERR_ARG, "kl_blas_dgemm: empty matrix (%zu x %zu x %zu)", m, n, k);
  if (m > SIZE_MAX / sizeof(double) / k || k > SIZE_MAX / sizeof(double) / n || m > SIZE_MAX / sizeof(double) / n)
    return kl_host_fail(h, KELVIN_ERR_ARG, "kl_blas_dgemm: matrix too large (%zu x %zu x %zu)", m, n, k);
  if (!h->opencl) {
    host_gemm(m, n, k, A, B, C, h->threads);
    return KELVIN_OK;
  }
  const size_t sa = m * k * sizeof(double), sb = k * n * sizeof(double), sc = m * n * sizeof(double);
  KL_CL(h, (dA = clCreateBuffer(h->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sa, (void *)A, &err), err));
  KL_CL(h, (dB = clCreateBuffer(h->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sb, (void *)B, &err), err));
  KL_CL(h, (dC = clCreateBuffer(h->ctx, CL_MEM_WRITE_ONLY, sc, NULL, &err), err));
  st = kl_blas_dgemm_mem(h, m, n, k, dA, dB, dC);
  if (st != KELVIN_OK) goto cleanup;
  KL_CL(h, clEnqueueReadBuffer(h->q, dC, CL_TRUE, 0, sc, C, 0, NULL, NULL));
cleanup:
  if (dC) clReleaseMemObject(dC);
  if (dB) clReleaseMemObject(dB);
  if (dA) clReleaseMemObject(dA);
  return st;
}
