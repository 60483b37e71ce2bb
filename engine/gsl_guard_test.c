/* engine/gsl_guard_test.c: a GSL error after kl_gsl_guard is recorded for the caller and returned as
 * GSL's error code; the process goes on (GSL's default handler would abort()). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_vector.h>

#include "engine/gsl_guard.h"

static void test_recorded(void **state)
{
  (void)state;
  kl_gsl_guard();
  assert_null(kl_gsl_error());
  /* the error that aborted kelvin optimise (too few path samples for the control points): an SVD of a
   * matrix with fewer rows (3) than columns (5) */
  gsl_matrix *A = gsl_matrix_calloc(3, 5), *V = gsl_matrix_calloc(5, 5);
  gsl_vector *S = gsl_vector_calloc(5), *W = gsl_vector_calloc(5);
  const int rc = gsl_linalg_SV_decomp(A, V, S, W);
  assert_int_not_equal(rc, GSL_SUCCESS);
  assert_non_null(kl_gsl_error());
  assert_non_null(strstr(kl_gsl_error(), "M<N"));
  gsl_matrix_free(A);
  gsl_matrix_free(V);
  gsl_vector_free(S);
  gsl_vector_free(W);
  kl_gsl_guard(); /* cleared for the next entry point */
  assert_null(kl_gsl_error());
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_recorded)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
