/* optimiser/problem_test.c: what kl_problem_build prepares, against values computed here:
 *   - the clamped cubic B-spline basis of the offsets and speeds (pb->basis) against the Cox-de Boor
 *     recursion written out below, on the knots the design names (uniform breakpoints on the
 *     normalised arc length, end knots repeated four times), and kl_problem_expand against the sum;
 *   - the contact constants: Hertz K worked by hand, chi from the published law, the Kelvin-Voigt
 *     linearisation (the Hertz tangent at the mean target force) and eq. (10) damping written out;
 *   - the geometry and the packed constants on a part whose answer is known: a plane raised by a
 *     known height (protrusion = that height), weight and target per sample, the naive offset from the
 *     static equilibrium written out. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "optimiser/problem.h"

static double rel(double a, double b) { return fabs(a - b) / fabs(b); }

/* Cox-de Boor: B_{j,p}(x) on knots t (p = degree), with the half-open convention [t_j, t_{j+1}) and the
 * right end x = t_last taken by the last non-empty interval (so the clamped basis ends with B = 1). */
static double bspline(const double *t, int nt, int j, int p, double x)
{
  if (p == 0) {
    if (t[j] < t[j + 1] && ((x >= t[j] && x < t[j + 1]) || (x == t[nt - 1] && t[j + 1] == t[nt - 1])))
      return 1.0;
    return 0.0;
  }
  double a = 0, b = 0;
  if (t[j + p] > t[j]) a = (x - t[j]) / (t[j + p] - t[j]) * bspline(t, nt, j, p - 1, x);
  if (t[j + p + 1] > t[j + 1]) b = (t[j + p + 1] - x) / (t[j + p + 1] - t[j + 1]) * bspline(t, nt, j + 1, p - 1, x);
  return a + b;
}

/* clamped cubic knots for nco functions on [0, 1]: 0 0 0 | 0, 1/(nco-3), ..., 1 | 1 1 1 */
static int knots(int nco, double *t)
{
  const int nint = nco - 3, nt = nco + 4;
  for (int i = 0; i < 3; ++i) t[i] = 0.0, t[nt - 1 - i] = 1.0;
  for (int i = 0; i <= nint; ++i) t[3 + i] = (double)i / nint;
  return nt;
}

static void small_settings(kl_settings *s)
{
  kl_settings_default(s);
  s->surface = KL_SURF_PLANE;
  s->bead_h = 0.0;
  s->tilt_deg = 0.0;
  s->rough_a = 0.0;
  s->shift[2] = 1.5e-4; /* the actual part stands 0.15 mm proud of its CAD everywhere */
  s->extent[0] = 0.06;
  s->extent[1] = 0.02;
  s->resolution = 1e-3;
  s->path_x0 = -0.02;
  s->path_x1 = 0.02;
  s->ns = 61;
  s->method = KL_METHOD_NLOPT; /* the spline parametrisation (method lm puts a command at every sample) */
  s->n_o = 9;
  s->n_v = 5;
  s->model = KL_MODEL_HC;
  s->law = KL_LAW_HUNT_CROSSLEY;
  s->cr = 0.5;
  s->approach_speed = 0.01;
  s->target_F = 6.0;
  s->tool_weight = 2.0;
}

/* The basis against Cox-de Boor at the samples s_k = k/(ns - 1) of the normalised arc length, for the
 * offsets (9 functions) and the speeds (5); every row a partition of unity; the offset block of a speed
 * row and the speed block of an offset row zero. Tolerance 4e-15 absolute (values in [0, 1]; the two
 * recursions round differently, measured worst 3.3e-16), the same relative for the expansion (4e-16). */
static void test_basis_de_boor(void **state)
{
  (void)state;
  kl_settings s;
  small_settings(&s);
  kl_problem *pb = NULL;
  char msg[512];
  if (kl_problem_build(&s, NULL, &pb, msg, sizeof msg) != KELVIN_OK) fail_msg("build: %s", msg);
  const int ns = pb->ns, nc = pb->nc;
  assert_int_equal(nc, s.n_o + s.n_v);
  double worst = 0;
  for (int part = 0; part < 2; ++part) {
    const int nco = part ? s.n_v : s.n_o, col0 = part ? s.n_o : 0;
    double t[64];
    const int nt = knots(nco, t);
    for (int k = 0; k < ns; ++k) {
      const double x = (double)k / (ns - 1);
      const double *row = pb->basis + (size_t)(part * ns + k) * nc;
      double sum = 0;
      for (int j = 0; j < nc; ++j) {
        const int mine = j >= col0 && j < col0 + nco;
        const double want = mine ? bspline(t, nt, j - col0, 3, x) : 0.0;
        const double e = fabs(row[j] - want);
        worst = fmax(worst, e);
        if (!(e <= 4e-15)) fail_msg("part %d sample %d function %d: basis %.17g, de Boor %.17g", part, k, j, row[j], want);
        sum += row[j];
      }
      if (!(fabs(sum - 1.0) <= 4e-15)) fail_msg("part %d sample %d: row sums to %.17g", part, k, sum);
    }
  }
  /* kl_problem_expand is the sum of the basis times the control points, both blocks */
  double x[64], o[KL_PATH_MAX], v[KL_PATH_MAX];
  for (int j = 0; j < nc; ++j) x[j] = j < s.n_o ? 1e-4 * (1 + j * j % 7) : 0.01 + 0.002 * (j - s.n_o);
  kl_problem_expand(pb, x, o, v);
  double worst_x = 0;
  for (int part = 0; part < 2; ++part) {
    const int nco = part ? s.n_v : s.n_o, col0 = part ? s.n_o : 0;
    double t[64];
    const int nt = knots(nco, t);
    for (int k = 0; k < ns; ++k) {
      double want = 0;
      for (int j = 0; j < nco; ++j) want += bspline(t, nt, j, 3, (double)k / (ns - 1)) * x[col0 + j];
      const double got = part ? v[k] : o[k];
      const double e = rel(got, want);
      worst_x = fmax(worst_x, e);
      if (!(e <= 4e-15)) fail_msg("expand part %d sample %d: %.17g, de Boor sum %.17g", part, k, got, want);
    }
  }
  /* clamped ends: the first and last samples are the first and last control points */
  assert_true(rel(o[0], x[0]) <= 1e-15 && rel(o[ns - 1], x[s.n_o - 1]) <= 1e-15);
  assert_true(rel(v[0], x[s.n_o]) <= 1e-15 && rel(v[ns - 1], x[nc - 1]) <= 1e-15);
  printf("  B-spline basis vs Cox-de Boor: worst %.2e; expansion worst relative %.2e (tolerance 4e-15)\n", worst,
         worst_x);
  kl_problem_free(pb);
}

/* Contact constants and the packed problem against values worked here.
 * Tool 200 GPa / 0.22 on aluminium 70 GPa / 0.33, R = 6 mm (the worked example of kernels/kl_laws_test.c):
 *   E* = 1 / ((1 - 0.22^2)/200e9 + (1 - 0.33^2)/70e9) = 57.18206770356816e9 Pa,
 *   K = 4/3 E* sqrt(0.006) = 5.9057385578033194e9 N/m^1.5.
 * Hunt & Crossley (1975), cr 0.5 at 0.01 m/s: chi = 3 (1 - 0.5) / (2 x 0.01) = 75 s/m.
 * Kelvin-Voigt: the Hertz tangent at the mean target F: dF/dd = 1.5 K d^0.5 at d = (F/K)^(2/3), i.e.
 * 1.5 K^(2/3) F^(1/3); D by eq. (10) with the tool mass: -2 ln cr sqrt(K m) / sqrt(pi^2 + ln^2 cr).
 * Geometry: a plane raised by 0.15 mm -> protrusion 0.15 mm at every sample; weight 2 N on a horizontal
 * part pushes in fully; naive offset = static penetration + (F - F_g)/K_h.
 * Tolerances: 1e-14 relative for the constants (a few roundings, measured 1.2e-15), 1e-13 of the height
 * for the protrusion (closest point on a triangle mesh, measured 6e-15). */
static void test_problem_constants(void **state)
{
  (void)state;
  const double Khand = 5.9057385578033194e9;
  double worst = 0;
  for (int model = 0; model <= 1; ++model) {
    kl_settings s;
    small_settings(&s);
    s.model = model ? KL_MODEL_HC : KL_MODEL_KV;
    kl_problem *pb = NULL;
    char msg[512];
    if (kl_problem_build(&s, NULL, &pb, msg, sizeof msg) != KELVIN_OK) fail_msg("build: %s", msg);
    const double F = s.target_F, Kh = s.holder_K, fg = s.tool_weight;
    double Kc, pen;
    if (model) {
      Kc = Khand;
      const double e1 = rel(pb->Kc, Khand), e2 = rel(pb->chi, 75.0);
      worst = fmax(worst, fmax(e1, e2));
      if (!(e1 <= 1e-14 && e2 <= 1e-14)) fail_msg("HC: K %.17g (hand %.17g), chi %.17g (75)", pb->Kc, Khand, pb->chi);
      assert_true(pb->gp[KL_GP_NC] == 1.5 && pb->gp[KL_GP_CHI] == pb->chi && (int)pb->gp[KL_GP_MODEL] == KL_MODEL_HC);
      pen = pow(F / Khand, 2.0 / 3.0);
    } else {
      Kc = 1.5 * cbrt(Khand * Khand * F);
      const double l = -log(s.cr);
      const double D = 2.0 * l * sqrt(Kc * s.tool_mass) / sqrt(M_PI * M_PI + l * l);
      const double e1 = rel(pb->Kc, Kc), e2 = rel(pb->Dc, D);
      worst = fmax(worst, fmax(e1, e2));
      if (!(e1 <= 1e-14 && e2 <= 1e-14)) fail_msg("KV: K %.17g (%.17g), D %.17g (%.17g)", pb->Kc, Kc, pb->Dc, D);
      assert_true(pb->gp[KL_GP_NC] == 1.0 && pb->gp[KL_GP_DC] == pb->Dc && (int)pb->gp[KL_GP_MODEL] == KL_MODEL_KV);
      pen = F / Kc;
    }
    const double naive = pen + (F - fg) / Kh;
    const double en = rel(pb->naive_o, naive);
    worst = fmax(worst, en);
    if (!(en <= 1e-14)) fail_msg("model %d: naive offset %.17g, by hand %.17g", model, pb->naive_o, naive);
    /* the path: a straight line of length x1 - x0 on the plane, normals +z */
    assert_true(rel(pb->length, s.path_x1 - s.path_x0) <= 1e-14);
    double worst_h = 0;
    for (int k = 0; k < pb->ns; ++k) {
      const double *g = pb->geo + (size_t)k * KL_GG_N;
      worst_h = fmax(worst_h, fabs(pb->h[k] - s.shift[2]) / s.shift[2]);
      if (!(fabs(pb->h[k] - s.shift[2]) <= 1e-13 * s.shift[2]))
        fail_msg("sample %d: protrusion %.17g, the part stands %.17g proud", k, pb->h[k], s.shift[2]);
      assert_true(fabs(pb->dh[k]) <= 1e-9);
      assert_true(rel(pb->s[k], (s.path_x1 - s.path_x0) * k / (pb->ns - 1)) <= 1e-12 || k == 0);
      assert_true(pb->fg[k] == fg && pb->ft[k] == F && pb->meff[k] == s.tool_mass);
      assert_true(g[KL_GG_S] == pb->s[k] && g[KL_GG_H] == pb->h[k] && g[KL_GG_DH] == pb->dh[k] &&
                  g[KL_GG_M] == pb->meff[k] && g[KL_GG_FG] == pb->fg[k] && g[KL_GG_FT] == pb->ft[k]);
    }
    /* packed constants */
    const double *gp = pb->gp;
    assert_true(gp[KL_GP_KH] == Kh && gp[KL_GP_DH] == s.holder_D && gp[KL_GP_KC] == pb->Kc);
    assert_true(rel(gp[KL_GP_FREF], F) <= 1e-14 && gp[KL_GP_FMAX] == s.max_F && gp[KL_GP_AMAX] == s.a_max);
    assert_true(rel(gp[KL_GP_TREF], (s.path_x1 - s.path_x0) / s.v_init) <= 1e-14);
    assert_true(gp[KL_GP_VSCALE] == s.v_max && gp[KL_GP_AVG] == s.measure && gp[KL_GP_FTOL] == s.ftol);
    assert_true(gp[KL_GP_W_RMS] == s.w_rms && gp[KL_GP_W_LOSS] == s.w_loss && gp[KL_GP_W_OVER] == s.w_over &&
                gp[KL_GP_W_TIME] == s.w_time && gp[KL_GP_W_ROUGH] == s.w_rough && gp[KL_GP_W_ACC] == s.w_acc);
    /* bounds: the offsets span the static offsets along the path (here all naive - h, the part standing
     * h proud everywhere, the contact along the tool axis) and the naive offset, offset.margin either
     * side; speeds [v_min, v_max] */
    const double olo = naive - s.shift[2] - s.o_margin, ohi = naive + s.o_margin;
    for (int j = 0; j < pb->nc; ++j) {
      if (j < s.n_o) assert_true(fabs(pb->lo[j] - olo) <= 1e-15 && fabs(pb->hi[j] - ohi) <= 1e-15);
      else assert_true(pb->lo[j] == s.v_min && pb->hi[j] == s.v_max);
    }
    printf("  %s: constants worst relative %.2e (tolerance 1e-14); protrusion worst %.2e of the height (1e-13)\n",
           model ? "HC" : "KV", worst, worst_h);
    (void)Kc;
    kl_problem_free(pb);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_basis_de_boor),
    cmocka_unit_test(test_problem_constants),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
