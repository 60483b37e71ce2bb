/* kernels/kl_hc_exact_test.c: the fit of the exact-restitution law's d = chi v0 (kernels/kl_hc_exact.h,
 * docs/design.md 2.3) against references that do not use its table:
 *   - spot values written out from tools/gen_hc_exact.py --spot (mpmath roots, 20 digits);
 *   - kl_hc_exact_d (kernels/kl_contact_hc.h), the root finder (Illinois to 1e-15 relative), on a dense grid;
 *   - the defining equation g(d) = g(-cr d) as a backward error, and the effective restitution of kl_impact.
 * Tolerances (relative): the generator's dense check finds the fit within 1.1e-16 of mpmath; the C evaluation
 * adds a few roundings (the basis by doubling, the sums, (1 - cr) / cr, the product): 1e-15 against mpmath;
 * 4e-15 against kl_hc_exact_d (its own stop is 1e-15); the backward error 3e-15 as kl_contact_hc_test's. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "kernels/kl_contact_hc.h"
#include "kernels/kl_hc_exact.h"
#include "kernels/kl_impact.h"

static double rel(double a, double b) { return fabs(a - b) / fabs(b); }

/* tools/gen_hc_exact.py --spot: cr, d (mpmath, 80 digits, printed to 20) */
static const double spot[][2] = {
  {0.0078125, 128.0},
  {0.01, 99.999999999999997918},
  {0.05, 19.999999681532359254},
  {0.1, 9.9981593974956672619},
  {0.3, 3.0870819811296243805},
  {0.5, 1.4327505332713750281},
  {0.7, 0.63482828126641687416},
  {0.9, 0.1664819506853080639},
  {0.99, 0.015151362109441018723},
  {0.999999, 1.5000015000444835842e-6},
};

static void test_spot(void **state)
{
  (void)state;
  double worst = 0;
  for (size_t i = 0; i < sizeof spot / sizeof spot[0]; ++i) {
    const double cr = spot[i][0];
    assert_true(kl_hc_exact_in(cr));
    const double e = rel(kl_hc_exact_fit(cr), spot[i][1]);
    worst = fmax(worst, e);
    if (!(e <= 1e-15)) fail_msg("cr %.17g: fit %.17g, mpmath %.17g (rel %.3g)", cr, kl_hc_exact_fit(cr), spot[i][1], e);
    /* impacts take the fit: damping d / v0 */
    const kl_impact_in in = {0.3, 5e7, 1.5, cr, 2.0, 0.0, KL_MODEL_HC, KL_LAW_EXACT, KL_SEP_FORCE, 0.0, 0.0, 0.0};
    assert_true(kl_impact(in).damp == kl_hc_exact_fit(cr) / 2.0);
  }
  printf("  spot values (mpmath): worst relative %.3g\n", worst);
}

/* a dense grid over the domain, geometric in cr near 0 and in 1 - cr near 1: against the root finder and
 * the backward error of the equation */
static void test_dense(void **state)
{
  (void)state;
  double worst = 0, worst_res = 0;
  int count = 0;
  for (int i = 0; i <= 20000; ++i) {
    const double t = i / 20000.0;
    for (int side = 0; side < 2; ++side) {
      const double cr = side ? 1.0 - exp2(-40.0 * t) * (1.0 - KL_HCX_CR_LO) : KL_HCX_CR_LO * exp2(7.0 * t);
      if (!kl_hc_exact_in(cr) || cr == 1.0) continue;
      const double d = kl_hc_exact_fit(cr), r = kl_hc_exact_d(cr);
      const double e = rel(d, r);
      worst = fmax(worst, e);
      if (!(e <= 4e-15)) fail_msg("cr %.17g: fit %.17g, root finder %.17g (rel %.3g)", cr, d, r, e);
      /* where 1 - cr d = (1 + d) e^{-d (1 + cr)} is near the rounding of cr d the residual cannot be evaluated
       * in doubles (kl_contact_hc_test says so): there the equation's fixed-point form
       * d = (1 - (1 + d) e^{-d (1 + cr)}) / cr, a strong contraction, must hold to rounding */
      const double tiny = (1.0 + d) * exp(-d * (1.0 + cr));
      if (tiny > 1e-12) {
        const double gp = d / (1.0 + d), gm = cr * (cr * d) / (1.0 - cr * d);
        const double res = fabs(kl_g(d) - kl_g(-cr * d)) / (d * (gp + gm));
        worst_res = fmax(worst_res, res);
        if (!(res <= 3e-15)) fail_msg("cr %.17g: d %.17g, backward error %.3g", cr, d, res);
      } else if (!(rel(d, (1.0 - tiny) / cr) <= 4 * KL_EPS)) {
        fail_msg("cr %.17g: d %.17g, fixed point %.17g", cr, d, (1.0 - tiny) / cr);
      }
      ++count;
    }
  }
  printf("  %d points: against kl_hc_exact_d worst relative %.3g, backward error %.3g\n", count, worst, worst_res);
}

/* the ends and outside the domain: cr = 1 gives 0, below 2^-7 impacts take the root finder; through
 * kl_impact the effective restitution is cr */
static void test_domain(void **state)
{
  (void)state;
  assert_true(kl_hc_exact_fit(1.0) == 0.0);
  assert_true(kl_hc_chi(KL_LAW_EXACT, 1.0, 3.0) == 0.0);
  assert_false(kl_hc_exact_in(0.0078));
  assert_false(kl_hc_exact_in(1.0000001));
  assert_false(kl_hc_exact_in(NAN));
  const kl_impact_in out = {0.3, 5e7, 1.5, 0.005, 2.0, 0.0, KL_MODEL_HC, KL_LAW_EXACT, KL_SEP_FORCE, 0.0, 0.0, 0.0};
  assert_true(kl_impact(out).damp == kl_hc_exact_d(0.005) / 2.0);
  const double crs[] = {0.0078125, 0.02, 0.2, 0.6, 0.95, 0.9999};
  for (int i = 0; i < 6; ++i) {
    const kl_impact_in in = {0.3, 5e7, 1.5, crs[i], 1.3, 0.0, KL_MODEL_HC, KL_LAW_EXACT, KL_SEP_FORCE, 0.0, 0.0, 0.0};
    const kl_impact_out o = kl_impact(in);
    assert_int_equal(o.status, KL_OK);
    if (!(rel(o.cr_eff, crs[i]) <= 4e-15)) fail_msg("cr %g: cr_eff %.17g", crs[i], o.cr_eff);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_spot),
    cmocka_unit_test(test_dense),
    cmocka_unit_test(test_domain),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
