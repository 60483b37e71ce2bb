/* engine/ball_ef_test.c: the ball engine (engine/ball.c) run with the paper's Emden-Fowler form
 * (eq. 11-13, as kernels/kl_contact_hc.h reads it: compression m d'' = -K d^n, restitution
 * m d'' = -cr^2 K d^n), without gravity, against what that form gives by hand:
 *   the exit speed is cr v0 (the energy K d_max^(n+1)/(n+1) = m v0^2/2 comes back through cr^2 K),
 *   d_max = ((n+1) m v0^2 / (2K))^(1/(n+1)),
 *   the contact lasts (d_max / v0) f(n) (1 + 1/cr), f(n) = sqrt(pi) Gamma(1 + p) / Gamma(1/2 + p),
 *   p = 1/(n+1) (each phase is a quarter of an undamped oscillation, the second one slower by 1/cr).
 * Gamma from the C library here, not the kernels' stored constants. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "engine/ball.h"
#include "kernels/kl_impact.h"

#define VTOL 1.5e-8
#define TTOL 5e-9
#define DTOL 2e-9

/* Tolerances, relative, about ten times the measured worst: the engine integrates the nonlinear contact
 * by linearised sub-steps at its tolerance 1e-9; measured exit speed 1.4e-9, contact time 4.8e-10,
 * d_max 1.8e-10. */
static void test_ball_emden_fowler(void **state)
{
  (void)state;
  const double ns[2] = {1.5, 1.0}, crs[3] = {0.3, 0.6, 0.95};
  double worst_v = 0, worst_t = 0, worst_d = 0;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b) {
      kl_ball_model m;
      kl_ball_default(&m);
      m.m = 0.2, m.g = 0.0, m.n = ns[a], m.K = ns[a] == 1.0 ? 5e5 : 1e8, m.cr = crs[b];
      m.model = KL_MODEL_EF, m.rule = KL_SEP_PENETRATION;
      char msg[256];
      if (kl_ball_check(&m, msg, sizeof msg) != KELVIN_OK) fail_msg("model: %s", msg);
      kl_ball_data *d = calloc(1, sizeof *d);
      assert_non_null(d);
      const double v0 = 1.0;
      kl_ball_reset(&m, d, 0.01, -v0);
      assert_int_equal(kl_ball_advance(&m, d, 0.05), KELVIN_OK);
      assert_true(d->ncontact == 1);
      const kl_ball_contact *c = &d->contact[0];
      const double p = 1.0 / (m.n + 1.0);
      const double dmax = pow((m.n + 1.0) * m.m * v0 * v0 / (2.0 * m.K), p);
      const double f = sqrt(M_PI) * tgamma(1.0 + p) / tgamma(0.5 + p);
      const double tc = dmax / v0 * f * (1.0 + 1.0 / m.cr);
      const double ev = fabs(c->v_out / c->v_in - m.cr) / m.cr, et = fabs((c->t1 - c->t0) / tc - 1.0),
                   ed = fabs(c->dmax / dmax - 1.0);
      worst_v = fmax(worst_v, ev), worst_t = fmax(worst_t, et), worst_d = fmax(worst_d, ed);
      if (!(ev <= VTOL && et <= TTOL && ed <= DTOL))
        fail_msg("n %g cr %g: v_out/v_in %.15g, contact %.15g s (by hand %.15g), d_max %.15g (%.15g)", m.n, m.cr,
                 c->v_out / c->v_in, c->t1 - c->t0, tc, c->dmax, dmax);
      free(d);
    }
  printf("# Emden-Fowler ball, n 1.5 and 1 x cr 0.3 0.6 0.95: exit speed / v0 vs cr %.2e, contact time %.2e, d_max "
         "%.2e (relative)\n",
         worst_v, worst_t, worst_d);
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_ball_emden_fowler)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
