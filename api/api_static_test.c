/* api/api_static_test.c: kelvin_static_depth and kelvin_static_compliance (kelvin/contact.h) through
 * libkelvin.so against values written out here: Hertz K = 1e10 N/m^1.5 at 10 N is 1 um deep (1e-9 squared,
 * cube root) with compliance 1 um / 15 N; Kelvin-Voigt 10 N on 2e5 N/m is 50 um with compliance 1/K;
 * n = 2.5 through exp(log(F/K) / n); at rest and outside the domain. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <kelvin/contact.h>

static void test_static(void **state)
{
  (void)state;
  assert_true(fabs(kelvin_static_depth(1e10, 1.5, 10.0) - 1e-6) < 1e-20);
  assert_true(fabs(kelvin_static_compliance(1e10, 1.5, 10.0) - 1e-6 / 15.0) < 1e-21);
  assert_true(fabs(kelvin_static_depth(2e5, 1.0, 10.0) - 5e-5) < 1e-19);
  assert_true(fabs(kelvin_static_compliance(2e5, 1.0, 10.0) - 5e-6) < 1e-20);
  assert_true(fabs(kelvin_static_compliance(2e5, 1.0, 0.0) - 5e-6) < 1e-20);
  const double d = exp(log(3.0 / 1e12) / 2.5);
  assert_true(fabs(kelvin_static_depth(1e12, 2.5, 3.0) - d) < 1e-14 * d);
  assert_true(fabs(kelvin_static_compliance(1e12, 2.5, 3.0) - d / 7.5) < 1e-14 * d);
  assert_true(kelvin_static_depth(1e10, 1.5, 0.0) == 0.0 && kelvin_static_depth(1e10, 1.5, -1.0) == 0.0);
  assert_true(kelvin_static_compliance(1e10, 1.5, 0.0) >= 1e299);
  assert_true(isnan(kelvin_static_depth(0.0, 1.5, 1.0)) && isnan(kelvin_static_depth(1e10, -1.0, 1.0)));
  assert_true(isnan(kelvin_static_compliance(NAN, 1.5, 1.0)) && isnan(kelvin_static_depth(1e10, 1.5, NAN)));
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_static)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
