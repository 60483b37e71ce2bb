/* host/blas_test.c: the CLBlast DGEMM helper (host/blas.h) against a plain triple loop, on the OpenCL
 * device and on the OpenMP twin, for the optimiser's shape (P candidates x n control points) . (n x Ns
 * samples) and for odd small shapes. Needs an OpenCL device with fp64 for the CLBlast part: returns 77
 * (skipped) without one.
 *
 * Tolerance: CLBlast sums the k products in its own order (tiled, possibly with fma), so each entry may
 * differ from the in-order loop by the classical dot-product bound |c - c_ref| <= k u sum_p |a_ip b_pj|
 * (u = 2^-53, Higham, Accuracy and Stability, eq. 3.5); we allow 2 k u sum|a||b|. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "host/blas.h"

static kl_host *gpu; /* OpenCL path */
static kl_host *cpu; /* OpenMP twin */

static uint64_t seed = 88172645463325252u;
/* deterministic values in [-1, 1) (xorshift64) */
static double rnd(void)
{
  seed ^= seed << 13;
  seed ^= seed >> 7;
  seed ^= seed << 17;
  return (double)(seed >> 11) * 0x1.0p-52 - 1.0;
}

/* C = A B, row-major, the reference triple loop; also sum_p |a_ip b_pj| into S. */
static void ref_gemm(size_t m, size_t n, size_t k, const double *A, const double *B, double *C, double *S)
{
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      double c = 0.0, s = 0.0;
      for (size_t p = 0; p < k; ++p) {
        c += A[i * k + p] * B[p * n + j];
        s += fabs(A[i * k + p] * B[p * n + j]);
      }
      C[i * n + j] = c;
      S[i * n + j] = s;
    }
}

/* One shape on one handle. */
static void check(kl_host *h, size_t m, size_t n, size_t k)
{
  double *A = malloc(m * k * sizeof *A), *B = malloc(k * n * sizeof *B);
  double *C = malloc(m * n * sizeof *C), *R = malloc(m * n * sizeof *R), *S = malloc(m * n * sizeof *S);
  assert_true(A && B && C && R && S);
  for (size_t i = 0; i < m * k; ++i) A[i] = rnd();
  for (size_t i = 0; i < k * n; ++i) B[i] = rnd();
  for (size_t i = 0; i < m * n; ++i) C[i] = NAN; /* every entry must be written */
  ref_gemm(m, n, k, A, B, R, S);
  const kelvin_status st = kl_blas_dgemm(h, m, n, k, A, B, C);
  if (st != KELVIN_OK) print_error("%s\n", kl_host_errmsg(h));
  assert_int_equal(st, KELVIN_OK);
  double worst = 0.0;
  for (size_t i = 0; i < m * n; ++i) {
    const double bound = 2.0 * (double)k * 0x1.0p-53 * S[i];
    assert_true(isfinite(C[i]));
    if (fabs(C[i] - R[i]) > bound) fail_msg("C[%zu] = %.17g, loop %.17g, bound %.3g", i, C[i], R[i], bound);
    if (S[i] > 0 && fabs(C[i] - R[i]) / S[i] > worst) worst = fabs(C[i] - R[i]) / S[i];
  }
  printf("%s %zu x %zu x %zu: worst |c - c_ref| / sum|a b| = %.2g\n", kl_host_is_opencl(h) ? "CLBlast" : "host",
         m, n, k, worst);
  free(A);
  free(B);
  free(C);
  free(R);
  free(S);
}

/* The optimiser's expansion: P = 1000 candidates x 12 control points . 12 x 257 samples. */
static void test_expand_shape(void **state)
{
  (void)state;
  check(gpu, 1000, 257, 12);
  check(cpu, 1000, 257, 12);
}

/* Odd and degenerate shapes, and bad arguments. */
static void test_small_shapes(void **state)
{
  (void)state;
  check(gpu, 1, 1, 1);
  check(gpu, 7, 5, 3);
  check(gpu, 33, 65, 17);
  check(cpu, 7, 5, 3);
  double a = 1.0, b = 2.0, c = 0.0;
  assert_int_equal(kl_blas_dgemm(gpu, 0, 1, 1, &a, &b, &c), KELVIN_ERR_ARG);
  assert_non_null(kl_host_errmsg(gpu)[0] ? kl_host_errmsg(gpu) : NULL);
  assert_int_equal(kl_blas_dgemm_mem(cpu, 1, 1, 1, NULL, NULL, NULL), KELVIN_ERR_ARG);
}

/* CLBlast's own failures arrive as KELVIN_ERR_OPENCL with its status name. */
static void test_clblast_error(void **state)
{
  (void)state;
  assert_int_equal(kl_blas_dgemm_mem(gpu, 4, 4, 4, NULL, NULL, NULL), KELVIN_ERR_OPENCL);
  printf("message: %s\n", kl_host_errmsg(gpu));
  assert_non_null(strstr(kl_host_errmsg(gpu), "CLBlastDgemm (4 x 4 x 4) failed: CLBlastInvalidMatrixA"));
}

int main(void)
{
  kl_host_opts o;
  kl_host_opts_default(&o);
  if (kl_host_create(&gpu) != KELVIN_OK || kl_host_create(&cpu) != KELVIN_OK) return 1;
  const kelvin_status st = kl_host_open(gpu, &o);
  if (st != KELVIN_OK || !kl_host_is_opencl(gpu)) {
    fprintf(stderr, "blas_test: skipped: no OpenCL device with double precision (%s%s)\n",
            st == KELVIN_OK ? kl_host_notice(gpu) : "", st == KELVIN_OK ? "" : kl_host_errmsg(gpu));
    kl_host_destroy(gpu);
    kl_host_destroy(cpu);
    return 77;
  }
  o.cpu = 1;
  if (kl_host_open(cpu, &o) != KELVIN_OK) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_expand_shape),
    cmocka_unit_test(test_small_shapes),
    cmocka_unit_test(test_clblast_error),
  };
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  kl_host_destroy(gpu);
  kl_host_destroy(cpu);
  return rc;
}
