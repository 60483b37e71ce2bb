/* kernels/kl_hc_master_test.c: the Hunt-Crossley master curves (kernels/kl_hc_master.h, docs/design.md 2.3):
 *   - the scaling: kl_hc_master(n, chi v0) times d*, t*, F* against kl_impact_hc in physical units. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "kernels/kl_hc_master.h"
#include "kernels/kl_impact.h"

static double rel(double a, double b) { return fabs(a - b) / fabs(b); }

/* m, K, v0 chosen far from 1, every law: the scaled metrics times the units are the physical ones */
static void test_scaling(void **state)
{
  (void)state;
  const double ns[] = {1.0, 1.5, 2.0, 2.5};
  const double crs[] = {0.05, 0.3, 0.8, 1.0};
  double worst = 0.0;
  for (int in_ = 0; in_ < 4; ++in_)
    for (int law = 0; law < KL_NLAWS; ++law)
      for (int ic = 0; ic < 4; ++ic) {
        kl_impact_in p = {0};
        p.m = 0.37;
        p.K = 3.3e9;
        p.n = ns[in_];
        p.cr = crs[ic];
        p.v0 = 2.7;
        p.model = KL_MODEL_HC;
        p.law = law;
        const kl_impact_out o = kl_impact(p);
        assert_int_equal(o.status, KL_OK);
        const double zeta = o.damp * p.v0;
        assert_true(kl_hc_master_in(p.n, zeta));
        const kl_hc_scaled s = kl_hc_master(p.n, zeta);
        const double ds = pow((p.n + 1.0) * p.m * p.v0 * p.v0 / (2.0 * p.K), 1.0 / (p.n + 1.0));
        const double ts = ds / p.v0, fs = p.K * pow(ds, p.n);
        const double e[5] = {rel(s.dmax * ds, o.dmax), rel(s.tmax * ts, o.tmax), rel(s.fpeak * fs, o.fpeak),
                             rel(s.tc * ts, o.tc), rel(s.cr_eff, o.cr_eff)};
        for (int k = 0; k < 5; ++k) {
          if (e[k] > worst) worst = e[k];
          if (!(e[k] <= 1e-10)) fail_msg("n %g law %d cr %g metric %d: rel %.3g", p.n, law, p.cr, k, e[k]);
        }
      }
  printf("scaling: worst %.3g\n", worst);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_scaling),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
