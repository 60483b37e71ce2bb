/* kernels/kl_contact_static_test.c: the static relations of kernels/kl_contact_static.h against hand
 * computations written out here: Hertz, delta = (F/K)^(2/3) (as a cube root of a square, not pow),
 * d(delta)/dF = delta / (1.5 F) and a central difference of that depth; Kelvin-Voigt, F/K and 1/K; the
 * disc's line contact (Hunt-Crossley with n = 1), 1/K at any force; the share c / (c + 1/K_h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kernels/kl_contact_static.h"

static void close_to(double got, double want, double rel)
{
  if (!(fabs(got - want) <= rel * fabs(want))) fail_msg("got %.17g, want %.17g (rel %.3g)", got, want, rel);
}

static void test_hertz(void **state)
{
  (void)state;
  const kl_contact_desc c = {KL_MODEL_HC, KL_LAW_HUNT_CROSSLEY, 1.2e10, 1.5, 0.0, 0.3, {0, 0, 0, 0, 0}};
  const double F = 7.0, Kh = 5000.0;
  const double d = cbrt((F / 1.2e10) * (F / 1.2e10));
  close_to(kl_contact_static_depth(c, F), d, 1e-14);
  close_to(kl_contact_static_force(c, d), F, 1e-14);
  const double cc = d / (1.5 * F), h = 1e-4 * F;
  const double up = (F + h) / 1.2e10, dn = (F - h) / 1.2e10, fd = (cbrt(up * up) - cbrt(dn * dn)) / (2 * h);
  close_to(kl_contact_compliance(c, F), cc, 1e-14);
  close_to(kl_contact_compliance(c, F), fd, 1e-7);
  close_to(kl_contact_share(c, F, Kh), cc / (cc + 1.0 / Kh), 1e-14);
  /* at rest: no depth, a vertical tangent, the contact the whole compliance */
  assert_true(kl_contact_static_depth(c, 0.0) == 0.0 && kl_contact_static_force(c, -1e-6) == 0.0);
  assert_true(kl_contact_compliance(c, 0.0) >= 1e299);
  close_to(kl_contact_share(c, 0.0, Kh), 1.0, 1e-12);
}

static void test_kelvin_voigt(void **state)
{
  (void)state;
  const kl_contact_desc c = {KL_MODEL_KV, 0, 2.0e5, 1.0, 40.0, 0.0, {0, 0, 0, 0, 0}};
  close_to(kl_contact_static_depth(c, 10.0), 5e-5, 1e-15);
  close_to(kl_contact_static_force(c, 5e-5), 10.0, 1e-15);
  close_to(kl_contact_compliance(c, 10.0), 5e-6, 1e-15);
  close_to(kl_contact_share(c, 10.0, 5e4), 5e-6 / (5e-6 + 2e-5), 1e-14); /* 20 % */
}

/* a disc across the path: a line contact, linear (n = 1), whatever the model's damping */
static void test_line_contact(void **state)
{
  (void)state;
  const kl_contact_desc c = {KL_MODEL_HC, KL_LAW_FLORES, 3.0e8, 1.0, 0.0, 0.2, {0, 0, 0, 0, 0}};
  close_to(kl_contact_static_depth(c, 6.0), 2e-8, 1e-15);
  close_to(kl_contact_compliance(c, 6.0), 1.0 / 3.0e8, 1e-15);
  close_to(kl_contact_compliance(c, 0.0), 1.0 / 3.0e8, 1e-15);
  const double cc = 1.0 / 3.0e8, ch = 1.0 / 5000.0;
  close_to(kl_contact_share(c, 6.0, 5000.0), cc / (cc + ch), 1e-14);
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_hertz), cmocka_unit_test(test_kelvin_voigt),
                                     cmocka_unit_test(test_line_contact)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
