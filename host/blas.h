/* host/blas.h: dense algebra on the handle's device through CLBlast, on the same context and queue
 * (docs/design.md section 4), with a host loop on the OpenMP path. The optimiser expands P candidates'
 * spline control points into per-sample values with one GEMM: (P x n) . (n x Ns). */
#ifndef KL_HOST_BLAS_H
#define KL_HOST_BLAS_H

#include <stddef.h>

#include "host/host.h"

/* C = A B with A (m x k), B (k x n), C (m x n), row-major and packed, as device buffers of h's
 * context (OpenCL path only; KELVIN_ERR_ARG on the twin). Blocks until C is ready. CLBlast failures
 * are KELVIN_ERR_OPENCL with the CLBlast status name in the message. */
kelvin_status kl_blas_dgemm_mem(kl_host *h, size_t m, size_t n, size_t k, cl_mem A, cl_mem B, cl_mem C);

/* C = A B as above on host arrays: upload, CLBlast DGEMM, download on the OpenCL path; an OpenMP loop
 * over rows of C on the twin. m, n, k >= 1 (KELVIN_ERR_ARG otherwise). */
kelvin_status kl_blas_dgemm(kl_host *h, size_t m, size_t n, size_t k, const double *A, const double *B, double *C);

/* The same on the host whatever h's path (the twin's loop, threads OpenMP threads, 0: the default), for
 * work the host does beside an open device (host/rollout_batch.c's small batches). */
kelvin_status kl_blas_dgemm_host(kl_host *h, size_t m, size_t n, size_t k, const double *A, const double *B, double *C,
                                 int threads);

#endif
