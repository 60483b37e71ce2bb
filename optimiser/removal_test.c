/* optimiser/removal_test.c: material removal (optimiser/removal.h, kernels/kl_removal.h; docs/design.md section 9)
 * against expectations worked here by hand from Hertz (Johnson 1985) and Preston (1927), never from the code's
 * own formulas:
 *   - a ball at constant force F and feed v_f over a flat part removes k_p F v_rel / v_f per unit length, across the
 *     path the parabola (pi p0 / 2a)(a^2 - y^2) k_p v_rel / v_f (the analytic check);
 *   - a disc removes uniformly across its width, k_p F v_rel / (L v_f) deep;
 *   - the grid's volume equals k_p F v_rel dt (the law's) and the test's own sum;
 *   - the drop on a hand-made groove, the stats on a hand-made grid, the wear by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "optimiser/removal.h"

#define PI 3.14159265358979323846

/* a flat part (the plane, no bead, step, roughness, tilt or shift) and a short straight path along x */
static void flat_settings(kl_settings *s)
{
  kl_settings_default(s);
  s->surface = KL_SURF_PLANE;
  s->bead_h = 0.0;
  s->step_h = 0.0;
  s->tilt_deg = 0.0;
  s->rough_a = 0.0;
  s->extent[0] = 0.06;
  s->extent[1] = 0.03;
  s->resolution = 1e-3;
  s->path_x0 = -0.01;
  s->path_x1 = 0.01;
  s->ns = 81;
  s->preston = 1e-16; /* so small that the surface barely changes under the tool during the pass */
  s->spindle_rpm = 10000;
  s->lead_deg = 30; /* the ball cuts at R sin(30 deg) = R / 2 */
}

static kl_problem *build(const kl_settings *s)
{
  kl_problem *pb = NULL;
  char msg[512];
  if (kl_problem_build(s, NULL, &pb, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  return pb;
}

/* E* of the default materials by hand: 1/E* = (1 - 0.22^2)/200e9 + (1 - 0.33^2)/70e9 */
static double estar_by_hand(void) { return 1.0 / ((1 - 0.22 * 0.22) / 200e9 + (1 - 0.33 * 0.33) / 70e9); }

/* The analytic check. A ball of R = 6 mm at F = 5 N, feed v_f = 0.01 m/s, 10000 rpm at lead 30 deg:
 * v_s = omega R / 2 = 3.14 m/s >> v_f. Hertz: a = (3 F R / 4 E*)^(1/3), p0 = 3 F / (2 pi a^2); Preston over a
 * point y across the path, the patch passing at v_f: depth = k_p v_rel / v_f * int p dx
 * = k_p v_rel / v_f * p0 (pi / 2) (a^2 - y^2) / a; its integral across, k_p v_rel F / v_f. */
static void test_ball_flat_analytic(void **state)
{
  (void)state;
  kl_settings s;
  flat_settings(&s);
  kl_problem *pb = build(&s);
  kl_removal_law law;
  kl_surface sf;
  char msg[512];
  if (kl_removal_law_of(pb, &law, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  if (kl_surface_init(pb, &law, &sf, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  const double F = 5.0, R = 6e-3, vf = 0.01, Es = estar_by_hand();
  const double a = cbrt(3 * F * R / (4 * Es)), p0 = 3 * F / (2 * PI * a * a);
  const double vs = 10000 * 2 * PI / 60 * R * 0.5, vrel = vs + vf, kp = 1e-16;
  /* the pass in one move along the whole path */
  const double L = pb->length, dt = L / vf;
  const double vol = kl_surface_deposit(&sf, &law, F, 0.0, 0.0, L, 0.0, dt);
  assert_true(fabs(vol - kp * F * vrel * dt) <= 1e-12 * vol);
  /* away from the ends (the middle half of the path): the cross-section and the profile */
  const int nw = sf.nw, jc = (nw - 1) / 2, i0 = sf.nu / 4, i1 = 3 * sf.nu / 4;
  double A = 0, emax = 0, dmax = 0;
  for (int j = 0; j < nw; ++j) {
    double m = 0;
    for (int i = i0; i < i1; ++i) m += sf.removed[(size_t)i * nw + j] / (i1 - i0);
    const double y = (j - jc) * sf.dw;
    const double d = fabs(y) < a ? PI * p0 / (2 * a) * (a * a - y * y) * kp * vrel / vf : 0.0;
    A += m * sf.dw;
    emax = fmax(emax, fabs(m - d));
    dmax = fmax(dmax, d);
  }
  const double A0 = kp * F * vrel / vf;
  printf("ball: a = %.4g m, cell %.3g m (a/%.2f), %d x %d; cross-section %.6g vs %.6g m^2 (%.2e); profile max error "
         "%.3g of the peak %.4g m\n",
         a, sf.du, a / sf.du, sf.nu, sf.nw, A, A0, A / A0 - 1, emax / dmax, dmax);
  assert_true(fabs(A / A0 - 1) < 1e-3);
  assert_true(emax < 0.05 * dmax);
  kl_surface_free(&sf);
  kl_problem_free(pb);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_ball_flat_analytic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
