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
#include "optimiser/schema.h"

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

/* The disc (R = 6 mm, L = 10 mm, its axis across the path) on the flat part: its line contact presses uniformly
 * across its width, so every cell under it loses k_p F v_rel / (L v_f), v_rel = omega R + v_f; none beyond it. */
static void test_disc_flat_uniform(void **state)
{
  (void)state;
  kl_settings s;
  flat_settings(&s);
  s.tool_shape = KL_TOOL_DISC;
  s.lead_deg = 0;
  s.spindle_rpm = 6000;
  kl_problem *pb = build(&s);
  kl_removal_law law;
  kl_surface sf;
  char msg[512];
  if (kl_removal_law_of(pb, &law, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  if (kl_surface_init(pb, &law, &sf, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  const double F = 5.0, R = 6e-3, L = 0.01, vf = 0.01, kp = 1e-16;
  const double vrel = 6000 * 2 * PI / 60 * R + vf, d0 = kp * F * vrel / (L * vf);
  const double len = pb->length, dt = len / vf;
  const double vol = kl_surface_deposit(&sf, &law, F, 0.0, 0.0, len, 0.0, dt);
  assert_true(fabs(vol - kp * F * vrel * dt) <= 1e-12 * vol);
  const int nw = sf.nw, jc = (nw - 1) / 2, i0 = sf.nu / 4, i1 = 3 * sf.nu / 4;
  double emax = 0, outside = 0;
  for (int j = 0; j < nw; ++j) {
    const double y = (j - jc) * sf.dw;
    double m = 0;
    for (int i = i0; i < i1; ++i) m += sf.removed[(size_t)i * nw + j] / (i1 - i0);
    if (fabs(y) + 0.5 * sf.dw <= 0.5 * L + 1e-12)
      emax = fmax(emax, fabs(m / d0 - 1));
    else if (fabs(y) - 0.5 * sf.dw >= 0.5 * L - 1e-12)
      outside = fmax(outside, m);
  }
  printf("disc: cells %.3g x %.3g m, %d x %d; depth %.4g m, the cells under it within %.2e of it\n", sf.du, sf.dw,
         sf.nu, sf.nw, d0, emax);
  assert_true(emax < 1e-3);
  assert_true(outside == 0.0);
  kl_surface_free(&sf);
  kl_problem_free(pb);
}

/* Fast removal: at k_p = 1e-10 the law removes per sub-step far more than the material inside the tool lowered by
 * the Hertz approach; the rigid tool cannot remove what it does not reach, so the pass leaves a groove of its own
 * shape: across the path delta - y^2 / (2R), its cross-section (4/3) sqrt(2R) delta^1.5 = k_p F v_rel / v_f. */
static void test_fast_removal_groove(void **state)
{
  (void)state;
  kl_settings s;
  flat_settings(&s);
  s.preston = 1e-10;
  s.spindle_rpm = 3000;
  s.rm_width = 3e-3;
  s.rm_resolution = 2e-5;
  kl_problem *pb = build(&s);
  kl_removal_law law;
  kl_surface sf;
  char msg[512];
  if (kl_removal_law_of(pb, &law, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  if (kl_surface_init(pb, &law, &sf, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  const double F = 5.0, R = 6e-3, vf = 0.01, kp = 1e-10, vrel = 3000 * 2 * PI / 60 * R * 0.5 + vf;
  const double A = kp * F * vrel / vf, delta = pow(3 * A / (4 * sqrt(2 * R)), 2.0 / 3.0);
  const double len = pb->length, dt = len / vf;
  const double vol = kl_surface_deposit(&sf, &law, F, 0.0, 0.0, len, 0.0, dt);
  const int nw = sf.nw, jc = (nw - 1) / 2, i0 = sf.nu / 4, i1 = 3 * sf.nu / 4;
  double emax = 0, Am = 0, total = 0, deepest = 0;
  for (size_t c = 0; c < (size_t)sf.nu * nw; ++c) total += sf.removed[c] * sf.du * sf.dw;
  for (size_t c = (size_t)i0 * nw; c < (size_t)i1 * nw; ++c) deepest = fmax(deepest, sf.removed[c]);
  for (int j = 0; j < nw; ++j) {
    double m = 0;
    for (int i = i0; i < i1; ++i) m += sf.removed[(size_t)i * nw + j] / (i1 - i0);
    const double y = (j - jc) * sf.dw, d = fmax(0.0, delta - y * y / (2 * R));
    emax = fmax(emax, fabs(m - d));
    Am += m * sf.dw;
  }
  printf("fast: groove %.4g m deep by hand, cross-section %.5g vs %.5g m^2, profile within %.3g of the depth; deepest "
         "cell (middle half) %.4g m; volume %.6g vs the law's %.6g m^3\n",
         delta, Am, A, emax / delta, deepest, total, vol);
  assert_true(fabs(total / vol - 1) < 1e-9);
  assert_true(fabs(Am / A - 1) < 0.01);
  assert_true(emax < 0.01 * delta);
  assert_true(deepest < 1.01 * delta);
  kl_surface_free(&sf);
  kl_problem_free(pb);
}

/* Volume conservation over passes on the bead (the device model's pass: force favg and times t at the samples): the
 * grid's volume, summed here, equals the law's k_p sum favg_k (omega rc + ds_k / dt_k) dt_k written out here, pass
 * after pass on the evolving surface; the protrusion drops where the removal went, and the device model's problem
 * on the evolved part carries it (kl_problem_with_protrusion), with the worn radius's Hertz constant by hand. */
static void test_passes_on_the_bead(void **state)
{
  (void)state;
  kl_settings s;
  flat_settings(&s);
  s.bead_h = 4e-4;
  s.bead_w = 1.5e-3;
  s.bead_x = 0.01;
  s.resolution = 1e-4;
  s.path_x0 = -0.005;
  s.path_x1 = 0.025;
  s.ns = 121;
  s.preston = 2e-11;
  s.spindle_rpm = 6000;
  kl_problem *pb = build(&s);
  kl_removal_law law;
  kl_surface sf;
  char msg[512];
  if (kl_removal_law_of(pb, &law, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  if (kl_surface_init(pb, &law, &sf, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  const int ns = pb->ns;
  double *favg = calloc((size_t)ns, sizeof(double)), *tt = calloc((size_t)ns, sizeof(double));
  double *h = calloc((size_t)ns, sizeof(double)), *dh = calloc((size_t)ns, sizeof(double));
  assert_true(favg && tt && h && dh);
  const double vs = 6000 * 2 * PI / 60 * 6e-3 * 0.5;
  double law_total = 0;
  for (int pass = 0; pass < 3; ++pass) {
    double want = 0;
    for (int k = 0; k < ns; ++k) {
      favg[k] = 4.0 + sin(0.1 * k + pass);
      const double v0 = 0.008 + 0.004 * cos((k - 1) / 7.0), v1 = 0.008 + 0.004 * cos(k / 7.0);
      tt[k] = k ? tt[k - 1] + 2 * (pb->s[k] - pb->s[k - 1]) / (v0 + v1) : 0.0;
      if (k) {
        const double T = tt[k] - tt[k - 1];
        want += s.preston * favg[k] * (vs + (pb->s[k] - pb->s[k - 1]) / T) * T;
      }
    }
    const double got = kl_surface_deposit_pass(&sf, &law, pb, favg, tt);
    law_total += want;
    double grid = 0;
    for (size_t c = 0; c < (size_t)sf.nu * sf.nw; ++c) grid += sf.removed[c] * sf.du * sf.dw;
    kl_surface_stats st;
    kl_surface_stats_of(&sf, &law, pb, &st);
    printf("pass %d: law %.6g m^3 (by hand %.6g), grid %.6g m^3 (stats %.6g); deepest %.4g m, residual max %.4g m\n",
           pass + 1, got, want, grid, st.volume, st.removed_max, st.residual_max);
    assert_true(fabs(got / want - 1) < 1e-12);
    assert_true(fabs(grid / law_total - 1) < 1e-9 && fabs(st.volume / grid - 1) < 1e-12);
  }
  kl_surface_drops(pb, &sf, &law, h);
  kl_protrusion_of_drop(pb, h, h, dh);
  int kb = 0; /* the sample on the bead's top: x = 0.01, s = 0.015 */
  for (int k = 0; k < ns; ++k)
    if (fabs(pb->s[k] - 0.015) < fabs(pb->s[kb] - 0.015)) kb = k;
  double hmax = -INFINITY;
  for (int k = 0; k < ns; ++k) {
    assert_true(h[k] <= pb->h[k]);
    hmax = fmax(hmax, pb->h[k] - h[k]);
    const int a = k ? k - 1 : 0, b = k + 1 < ns ? k + 1 : ns - 1;
    assert_true(dh[k] == (h[b] - h[a]) / (pb->s[b] - pb->s[a]));
  }
  printf("protrusion: the bead's top %.4g m lower (removed there %.4g m); the largest drop %.4g m\n", pb->h[kb] - h[kb],
         sf.removed[(size_t)lround(pb->s[kb] / sf.du) * sf.nw + (sf.nw - 1) / 2], hmax);
  assert_true(pb->h[kb] - h[kb] > 1e-5);
  /* the device model's problem on the evolved part, the tool worn to R' = 5.9 mm: K = 4/3 E* sqrt(R') */
  kl_problem *ev = NULL;
  if (kl_problem_with_protrusion(pb, h, dh, 5.9e-3, &ev, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  for (int k = 0; k < ns; ++k) {
    assert_true(ev->h[k] == h[k] && ev->geo[k * KL_GG_N + KL_GG_H] == h[k] && ev->geo[k * KL_GG_N + KL_GG_DH] == dh[k]);
    assert_true(ev->s[k] == pb->s[k] && ev->ft[k] == pb->ft[k] && ev->s != pb->s);
  }
  const double Kw = 4.0 / 3.0 * estar_by_hand() * sqrt(5.9e-3);
  assert_true(fabs(ev->Kc / Kw - 1) < 1e-12 && ev->gp[KL_GP_KC] == ev->Kc && ev->set.tool_R == 5.9e-3);
  assert_true(ev->actual == pb->actual && ev->own_actual == 0);
  kl_problem_free(ev);
  h[3] = NAN;
  assert_int_equal(kl_problem_with_protrusion(pb, h, dh, 6e-3, &ev, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_null(ev);
  free(favg);
  free(tt);
  free(h);
  free(dh);
  kl_surface_free(&sf);
  kl_problem_free(pb);
}

/* a hand-made surface, nu x nw cells of size d, stock 0, removed 0 (no cached bounds: removal.c computes them) */
static kl_surface hand_surface(int nu, int nw, double d, double R)
{
  kl_surface sf;
  memset(&sf, 0, sizeof sf);
  sf.nu = nu, sf.nw = nw, sf.du = sf.dw = d, sf.tool_R = R;
  sf.stock = calloc((size_t)nu * nw, sizeof(double));
  sf.removed = calloc((size_t)nu * nw, sizeof(double));
  assert_non_null(sf.stock);
  assert_non_null(sf.removed);
  return sf;
}

/* The stock sampled from the part: a plane standing 0.1 mm proud of its CAD with a 0.4 mm Gaussian bead across the
 * path at x = 10 mm (width 1.5 mm, 1 sigma), less a 0.05 mm allowance; the defaults: the cell a quarter of the
 * Hertz radius at target.force, the width the chord of the ball at the highest stock plus 4 a at max_force. */
static void test_stock_and_defaults(void **state)
{
  (void)state;
  kl_settings s;
  flat_settings(&s);
  s.bead_h = 4e-4;
  s.bead_w = 1.5e-3;
  s.bead_x = 0.01;
  s.shift[2] = 1e-4;
  s.rm_allowance = 5e-5;
  s.resolution = 5e-5; /* the part's mesh, fine enough for the bead: its linear interpolation errs < 1e-7 m */
  s.path_x0 = -0.005;
  s.path_x1 = 0.025;
  kl_problem *pb = build(&s);
  kl_removal_law law;
  kl_surface sf;
  char msg[512];
  if (kl_removal_law_of(pb, &law, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  if (kl_surface_init(pb, &law, &sf, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  const double R = 6e-3, Es = estar_by_hand(), a5 = cbrt(3 * 5.0 * R / (4 * Es)), a10 = cbrt(3 * 10.0 * R / (4 * Es));
  assert_true(fabs(sf.du - 0.25 * a5) < 1e-12 * a5 && sf.dw == sf.du);
  const double smax = 1e-4 + 4e-4 - 5e-5, width = 2 * sqrt(2 * R * (smax + a10 * a10 / R)) + 4 * a10;
  const int nw = 2 * (int)ceil(0.5 * width / sf.dw) + 1;
  printf("stock: cell %.4g m, %d x %d cells, width %.4g m\n", sf.du, sf.nu, sf.nw, width);
  assert_int_equal(sf.nw, nw);
  assert_int_equal(sf.nu, (int)floor(0.03 / sf.du + 1e-9) + 1);
  double emax = 0;
  for (int i = 0; i < sf.nu; ++i)
    for (int j = 0; j < sf.nw; j += 7) {
      const double x = -0.005 + i * sf.du, g = (x - 0.01) / 1.5e-3;
      emax = fmax(emax, fabs(sf.stock[(size_t)i * sf.nw + j] - (1e-4 + 4e-4 * exp(-0.5 * g * g) - 5e-5)));
    }
  printf("stock: largest error against the bead by hand %.3g m\n", emax);
  assert_true(emax < 1e-7);
  kl_surface_free(&sf);
  kl_problem_free(pb);
}

/* The drop on a hand-made trench along the path (depth D, removed where |w| < W): the ball of R above the path
 * rests on the trench's edges, the first cells outside it at w1, if w1^2 / (2R) < D (drop -w1^2 / (2R)); on its
 * floor otherwise (drop -D). Nothing removed: drop 0. The disc (width wider than the trench) bridges it: 0. */
static void test_drop_on_a_trench(void **state)
{
  (void)state;
  const double d = 1e-4, R = 6e-3, D = 1e-4;
  kl_removal_law law = {1e-12, 1000, R, R, 0.0, 5e10, 0.0};
  for (int pass = 0; pass < 2; ++pass) {
    kl_surface sf = hand_surface(101, 61, d, R);
    const int W = pass ? 25 : 5; /* trench cells |j - jc| < W: the first outside at w1 = W d */
    assert_true(kl_surface_drop(&sf, &law, 50 * d) == 0.0);
    for (int i = 0; i < sf.nu; ++i)
      for (int j = 0; j < sf.nw; ++j)
        if (abs(j - 30) < W) sf.removed[(size_t)i * sf.nw + j] = D;
    const double w1 = W * d, edge = w1 * w1 / (2 * R), want = edge < D ? -edge : -D;
    const double got = kl_surface_drop(&sf, &law, 50 * d);
    printf("trench of %d cells: drop %.6g m, by hand %.6g m\n", 2 * W - 1, got, want);
    assert_true(fabs(got - want) < 1e-12);
    law.L = 3 * W * d; /* a disc wider than the trench */
    assert_true(kl_surface_drop(&sf, &law, 50 * d) == 0.0);
    law.L = 0.0;
    kl_surface_free(&sf);
  }
}

/* The drop's slope (kl_surface_drop_slope, the engine's depth-correction gradient: docs/design.md section 9.3) at
 * the end of a trench along the path (cells i < 50 lowered by D = 0.1 mm, flat stock): the ball (R = 6 mm) at
 * s = 48 cells first touches the unworn cell i = 50 ahead, -(2d)^2 / 2R above the trench floor's -D, where the
 * unworn surface touched it at its own place: drop -(2d)^2 / 2R, slope d/ds of -(50 d - s)^2 / 2R = 2d / R, by
 * hand; in the trench's middle (s = 20 cells) the drop is -D and its slope 0; nothing removed: 0 and 0. */
static void test_drop_slope(void **state)
{
  (void)state;
  const double d = 1e-4, R = 6e-3, D = 1e-4;
  kl_removal_law law = {1e-12, 1000, R, R, 0.0, 5e10, 0.0};
  kl_surface sf = hand_surface(101, 61, d, R);
  double slope = 1;
  assert_true(kl_surface_drop_slope(&sf, &law, 48 * d, &slope) == 0.0 && slope == 0.0);
  for (int i = 0; i < 50; ++i)
    for (int j = 0; j < sf.nw; ++j) sf.removed[(size_t)i * sf.nw + j] = D;
  const double got = kl_surface_drop_slope(&sf, &law, 48 * d, &slope), want = -4 * d * d / (2 * R);
  printf("trench end: drop %.9g m (by hand %.9g), slope %.9g (by hand %.9g)\n", got, want, slope, 2 * d / R);
  assert_true(fabs(got - want) < 1e-15);
  assert_true(fabs(slope - 2 * d / R) < 1e-12);
  assert_true(got == kl_surface_drop(&sf, &law, 48 * d));
  assert_true(fabs(kl_surface_drop_slope(&sf, &law, 20 * d, &slope) + D) < 1e-15 && fabs(slope) < 1e-12);
  kl_surface_free(&sf);
}

/* The stats on a 3 x 5 hand-made grid: the track is the path's row and its neighbours within a at target.force. */
static void test_stats_by_hand(void **state)
{
  (void)state;
  kl_settings s;
  flat_settings(&s);
  kl_problem *pb = build(&s);
  const double R = 6e-3, Es = estar_by_hand(), a = cbrt(3 * 5.0 * R / (4 * Es));
  kl_removal_law law = {1e-12, 1000, R, R, 0.0, Es, 0.0};
  const double d = 0.6 * a; /* the track: rows |j - 2| <= 1 (a / d = 1.67) */
  kl_surface sf = hand_surface(3, 5, d, R);
  const double stock[15] = {1e-5, 2e-5, 3e-5, 4e-5, -1e-5, /**/ 0, 5e-6, -2e-6, 0, 0, /**/ 1e-6, 1e-6, 1e-6, 1e-6, 1e-6};
  const double removed[15] = {0, 0, 4e-5, 0, 3e-6, /**/ 1e-6, 0, 1e-6, 0, 0, /**/ 0, 0, 0, 0, 2e-5};
  memcpy(sf.stock, stock, sizeof stock);
  memcpy(sf.removed, removed, sizeof removed);
  kl_surface_stats st;
  kl_surface_stats_of(&sf, &law, pb, &st);
  /* track cells j = 1..3: errors 2e-5, -1e-5, 4e-5 | 5e-6, -3e-6, 0 | 1e-6, 1e-6, 1e-6: positive parts squared */
  const double ss = 2e-5 * 2e-5 + 4e-5 * 4e-5 + 5e-6 * 5e-6 + 3 * 1e-6 * 1e-6, rms = sqrt(ss / 9);
  /* gouge: removed - max(stock, 0): 4e-5 - 3e-5 = 1e-5 (0, 2); 3e-6 - 0 (0, 4); 1e-6 (1, 0); 1e-6 (1, 2); 1.9e-5 (2, 4) */
  assert_true(fabs(st.residual_rms - rms) < 1e-18);
  assert_true(st.residual_max == 4e-5);
  assert_true(fabs(st.gouge - 1.9e-5) < 1e-18);
  assert_true(fabs(st.volume - (4e-5 + 3e-6 + 1e-6 + 1e-6 + 2e-5) * d * d) < 1e-12 * st.volume);
  assert_true(st.removed_max == 4e-5);
  kl_surface_free(&sf);
  kl_problem_free(pb);
}

/* Wear by hand: a ball of G = 50 loses volume V / G, spread over its working band 2 pi R^2: R' = R - V / (G 2 pi R^2)
 * (to first order in the small wear here), and its cutting radius rc = R' sin(lead) with it; the disc's band is its
 * periphery 2 pi R L. */
static void test_wear_by_hand(void **state)
{
  (void)state;
  const double d = 2e-5, R = 6e-3, Es = estar_by_hand(), G = 50, kp = 1e-13, F = 5, omega = 1000, vf = 0.01;
  for (int disc = 0; disc < 2; ++disc) {
    const double L = disc ? 1e-3 : 0.0, rc = disc ? R : 0.5 * R;
    kl_removal_law law = {kp, omega, rc, R, L, Es, G};
    kl_surface sf = hand_surface(301, disc ? 61 : 31, d, R);
    const double len = 280 * d, dt = len / vf, V = kp * F * (omega * rc + vf) * dt;
    const double vol = kl_surface_deposit(&sf, &law, F, 10 * d, 0.0, 10 * d + len, 0.0, dt);
    const double band = disc ? 2 * PI * R * L : 2 * PI * R * R, want = V / G / band;
    printf("wear (%s): R - R' = %.6g m, by hand %.6g m; removed %.6g m^3 (no wear: %.6g)\n", disc ? "disc" : "ball",
           R - sf.tool_R, want, vol, V);
    assert_true(fabs((R - sf.tool_R) / want - 1) < 1e-3);
    assert_true(law.R == sf.tool_R && fabs(law.rc - rc * sf.tool_R / R) < 1e-15);
    kl_surface_free(&sf);
  }
}

/* kl_removal_law_of refuses what cannot cut, naming the key; E* and rc by hand. */
static void test_law_of(void **state)
{
  (void)state;
  kl_settings s;
  flat_settings(&s);
  kl_problem *pb = build(&s);
  kl_removal_law law;
  char msg[512];
  assert_int_equal(kl_removal_law_of(pb, &law, msg, sizeof msg), KELVIN_OK);
  assert_true(fabs(law.Es / estar_by_hand() - 1) < 1e-14);
  assert_true(fabs(law.rc - 6e-3 * sin(30 * PI / 180)) < 1e-18 && fabs(law.omega - 10000 * 2 * PI / 60) < 1e-9);
  assert_true(law.L == 0 && law.kp == 1e-16 && law.G == 0 && law.R == 6e-3);
  pb->set.lead_deg = 0;
  assert_int_equal(kl_removal_law_of(pb, &law, msg, sizeof msg), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(msg, "tool.lead_deg"));
  assert_non_null(strstr(msg, "R sin(lead)"));
  pb->set.spindle_rpm = 0;
  assert_int_equal(kl_removal_law_of(pb, &law, msg, sizeof msg), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(msg, "tool.spindle_rpm"));
  pb->set.preston = 0;
  assert_int_equal(kl_removal_law_of(pb, &law, msg, sizeof msg), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(msg, "removal.preston"));
  kl_problem_free(pb);
}

/* What the grid refuses, naming the key: more than 4e6 cells (removal.resolution), a cell off the part
 * (removal.width); the settings' bounds (the loader's file:line:field messages carry these); a deep copy is
 * independent of its original. */
static void test_refusals_and_copy(void **state)
{
  (void)state;
  kl_settings s;
  flat_settings(&s);
  kl_problem *pb = build(&s);
  kl_removal_law law;
  kl_surface sf, cp;
  char msg[512];
  if (kl_removal_law_of(pb, &law, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  pb->set.rm_resolution = 2e-6; /* 0.02 m / 2 um = 10001 rows x 401 across 0.8 mm: 4.01e6 cells */
  pb->set.rm_width = 8e-4;
  assert_int_equal(kl_surface_init(pb, &law, &sf, msg, sizeof msg), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(msg, "removal.resolution"));
  assert_null(sf.stock);
  pb->set.rm_resolution = 1e-4;
  pb->set.rm_width = 0.05; /* the part is 0.03 m across */
  assert_int_equal(kl_surface_init(pb, &law, &sf, msg, sizeof msg), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(msg, "removal.width"));
  assert_non_null(strstr(msg, "off the part"));
  pb->set.rm_width = 2e-3;
  if (kl_surface_init(pb, &law, &sf, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  assert_int_equal(sf.nw, 21);
  assert_int_equal(kl_surface_copy(&sf, &cp), KELVIN_OK);
  kl_removal_law l2 = law;
  l2.kp = 1e-12;
  assert_true(kl_surface_deposit(&cp, &l2, 5.0, 0.0, 0.0, 0.01, 0.0, 1.0) > 0);
  double a = 0, b = 0;
  for (size_t c = 0; c < (size_t)sf.nu * sf.nw; ++c) a += sf.removed[c], b += cp.removed[c];
  assert_true(a == 0.0 && b > 0.0 && cp.stock != sf.stock);
  kl_surface_free(&cp);
  assert_null(cp.stock);
  kl_surface_free(&sf);
  kl_surface_free(NULL);
  kl_problem_free(pb);
  /* the settings' bounds */
  kl_settings_default(&s);
  assert_true(s.preston == 0 && s.spindle_rpm == 0 && s.rm_tolerance == 20e-6 && s.rm_gouge == 10e-6 &&
              isnan(s.rm_resolution) && isnan(s.rm_width) && s.grinding_ratio == 0 && s.rm_max_passes == 20 &&
              s.rm_allowance == 0);
  const double big = 1e-3, neg = -1, rpm = 2e5;
  assert_int_equal(kl_settings_set_numbers(&s, "removal.preston", &big, 1, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "removal.preston: must be in [0, 1e-6] m^2/N"));
  assert_int_equal(kl_settings_set_numbers(&s, "tool.spindle_rpm", &rpm, 1, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "tool.spindle_rpm: must be in [0, 100000] rpm"));
  assert_int_equal(kl_settings_set_numbers(&s, "removal.grinding_ratio", &neg, 1, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "removal.grinding_ratio"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_ball_flat_analytic),
    cmocka_unit_test(test_disc_flat_uniform),
    cmocka_unit_test(test_fast_removal_groove),
    cmocka_unit_test(test_stock_and_defaults),
    cmocka_unit_test(test_passes_on_the_bead),
    cmocka_unit_test(test_drop_on_a_trench),
    cmocka_unit_test(test_drop_slope),
    cmocka_unit_test(test_stats_by_hand),
    cmocka_unit_test(test_wear_by_hand),
    cmocka_unit_test(test_law_of),
    cmocka_unit_test(test_refusals_and_copy),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
