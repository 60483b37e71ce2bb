/* tests/impact_step_test.c: impacts by the step (kernels/kl_impact_step.h, docs/design.md section 2.5) against
 * the closed forms where the law has one (Hunt-Crossley, Kelvin-Voigt) and against an independent reference
 * elsewhere: GSL's rk8pd (gsl_odeiv2) at tight tolerance on the equation m d'' = fe - F(d, d'), written here
 * from the law (F = k d^n1 + c sgn(d')|d'|^m d^n2 for d > 0, kept >= 0), with the events located by bisection
 * on re-integrations from stored states. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>

#include "kernels/kl_impact.h"
#include "kernels/kl_impact_batch.h"

/* ---- the reference, in scaled variables X = d / xs, V = d' / v0, T = t v0 / xs ---- */
typedef struct prob {
  double k, c, n1, n2, mr, mb, v0, fe, xs;
  int force_rule;
} prob;

/* the law's force, unclamped (0 out of contact; at d = 0 entering, its limit from inside) */
static double force_u(const prob *p, double d, double v)
{
  if (d < 0 || (d == 0 && !(v > 0))) return 0;
  const double rate = v == 0 ? 0 : copysign(pow(fabs(v), p->mr), v);
  const double dn2 = p->n2 == 0 ? 1.0 : pow(d, p->n2);
  return p->k * pow(d, p->n1) + p->c * rate * dn2;
}
static double force(const prob *p, double d, double v) { return fmax(force_u(p, d, v), 0.0); }

static int rhs(double t, const double y[], double f[], void *vp)
{
  (void)t;
  const prob *p = vp;
  const double d = y[0] * p->xs, v = y[1] * p->v0;
  f[0] = y[1];
  f[1] = (p->fe - force(p, d, v)) / p->mb * p->xs / (p->v0 * p->v0);
  return GSL_SUCCESS;
}

/* the state at scaled time T1 from (T0, y0) */
static void advance(const prob *p, double T0, const double y0[2], double T1, double y[2])
{
  gsl_odeiv2_system sys = {rhs, NULL, 2, (void *)p};
  gsl_odeiv2_driver *drv = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-6, 1e-15, 1e-14);
  double T = T0;
  y[0] = y0[0];
  y[1] = y0[1];
  if (T1 > T0) assert_int_equal(gsl_odeiv2_driver_apply(drv, &T, T1, y), GSL_SUCCESS);
  gsl_odeiv2_driver_free(drv);
}

typedef struct metrics {
  double dmax, tmax, fpeak, tc, cr;
  int separated;
} metrics;

/* event predicates on a state */
static int ended(const prob *p, const double y[2])
{
  const double d = y[0] * p->xs, v = y[1] * p->v0;
  return d <= 0 || (p->force_rule && v < 0 && force_u(p, d, v) <= 0);
}
static double fof(const prob *p, const double y[2]) { return force(p, y[0] * p->xs, y[1] * p->v0); }

/* the reference metrics: a grid of N intervals up to Tmax, bisection (60 halvings) on each event's interval,
 * golden-section on the force around its largest grid value */
static metrics reference(const prob *p, double Tmax, int N)
{
  metrics m = {0, 0, 0, 0, 0, 0};
  double *Ts = malloc(sizeof(double) * (size_t)(N + 1)), (*Y)[2] = malloc(sizeof(double[2]) * (size_t)(N + 1));
  const double dT = Tmax / N;
  Ts[0] = 0;
  Y[0][0] = 0;
  Y[0][1] = 1;
  int iend = -1, ipk = 0, ivz = -1;
  double fbest = fof(p, Y[0]);
  for (int i = 1; i <= N && iend < 0; ++i) {
    Ts[i] = i * dT;
    advance(p, Ts[i - 1], Y[i - 1], Ts[i], Y[i]);
    if (ivz < 0 && Y[i][1] <= 0) ivz = i;
    if (fof(p, Y[i]) > fbest) {
      fbest = fof(p, Y[i]);
      ipk = i;
    }
    if (ended(p, Y[i])) iend = i;
  }
  if (iend < 0) {
    free(Ts);
    free(Y);
    return m;
  }
  m.separated = 1;
  double y[2];
  /* end of contact */
  double a = Ts[iend - 1], b = Ts[iend];
  for (int it = 0; it < 60; ++it) {
    const double c = 0.5 * (a + b);
    advance(p, Ts[iend - 1], Y[iend - 1], c, y);
    if (ended(p, y))
      b = c;
    else
      a = c;
  }
  advance(p, Ts[iend - 1], Y[iend - 1], b, y);
  m.tc = b;
  m.cr = -y[1];
  /* maximum penetration: v from > 0 to <= 0 */
  if (ivz > 0) {
    a = Ts[ivz - 1];
    b = Ts[ivz];
    for (int it = 0; it < 60; ++it) {
      const double c = 0.5 * (a + b);
      advance(p, Ts[ivz - 1], Y[ivz - 1], c, y);
      if (y[1] <= 0)
        b = c;
      else
        a = c;
    }
    advance(p, Ts[ivz - 1], Y[ivz - 1], 0.5 * (a + b), y);
    m.tmax = 0.5 * (a + b);
    m.dmax = y[0];
  }
  /* peak force: golden section on [T(ipk-1), T(ipk+1)] */
  m.fpeak = fbest;
  if (ipk > 0) {
    const int i0 = ipk - 1, i1 = ipk + 1 <= iend ? ipk + 1 : iend;
    const double g = 0.5 * (sqrt(5.0) - 1.0);
    double lo = Ts[i0], hi = Ts[i1];
    for (int it = 0; it < 80; ++it) {
      const double c1 = hi - g * (hi - lo), c2 = lo + g * (hi - lo);
      double y1[2], y2[2];
      advance(p, Ts[i0], Y[i0], c1, y1);
      advance(p, Ts[i0], Y[i0], c2, y2);
      if (fof(p, y1) > fof(p, y2))
        hi = c2;
      else
        lo = c1;
      m.fpeak = fmax(m.fpeak, fmax(fof(p, y1), fof(p, y2)));
    }
  }
  free(Ts);
  free(Y);
  /* back to physical units */
  m.dmax *= p->xs;
  m.tmax *= p->xs / p->v0;
  m.tc *= p->xs / p->v0;
  return m;
}

static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1e-300); }

/* worst errors over a grid, by quantity */
typedef struct worst {
  double dmax, tmax, fpeak, tc, cr;
} worst;

static void compare(const char *what, const prob *p, const kl_impact_out o, worst *w)
{
  const double ds = pow((p->n1 + 1) * p->mb * p->v0 * p->v0 / (2 * p->k), 1 / (p->n1 + 1));
  prob q = *p;
  q.xs = ds;
  const metrics r = reference(&q, 40.0, 4000);
  if (!r.separated) fail_msg("%s: the reference does not separate", what);
  if (o.status != KL_OK) fail_msg("%s: status %d", what, o.status);
  const double e[5] = {rel(o.dmax, r.dmax), rel(o.tmax, r.tmax), rel(o.fpeak, r.fpeak), rel(o.tc, r.tc),
                       fabs(o.cr_eff - r.cr)};
  printf("  %-44s dmax %.2e tmax %.2e fpeak %.2e tc %.2e cr %.2e (cr %.4f)\n", what, e[0], e[1], e[2], e[3], e[4],
         r.cr);
  w->dmax = fmax(w->dmax, e[0]);
  w->tmax = fmax(w->tmax, e[1]);
  w->fpeak = fmax(w->fpeak, e[2]);
  w->tc = fmax(w->tc, e[3]);
  w->cr = fmax(w->cr, e[4]);
}

/* The grid of exponents: n1 in {1, 1.5, 2.2}, n2 in {0, 0.5, n1, 2}, rate exponent in {0.4, 1, 1.7}, at a
 * damping number z (the damping force at v0 and the elastic depth over the elastic force there) of 0.05 and
 * 0.5 (half the grid); both separation rules at n1 = 1.5. Tolerances ~10x the worst error measured (the
 * step's tolerance is 1e-10 per step, the reference's 1e-14 relative): docs/design.md section 2.5. */
static void test_general_vs_gsl(void **state)
{
  (void)state;
  const double n1s[] = {1.0, 1.5, 2.2}, mrs[] = {0.4, 1.0, 1.7}, zs[] = {0.05, 0.5};
  worst w = {0, 0, 0, 0, 0};
  int nrun = 0;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 3; ++c)
        for (int d = 0; d < 2; ++d) {
          const double n1 = n1s[a], n2s[] = {0.0, 0.5, n1, 2.0}, n2 = n2s[b], mr = mrs[c], z = zs[d];
          if ((b + c + d + a) % 2) continue; /* half the grid: the reference is slow */
          const double mb = 0.5, K = 1e8, v0 = 0.8;
          const double ds = pow((n1 + 1) * mb * v0 * v0 / (2 * K), 1 / (n1 + 1));
          const double cc = z * K * pow(ds, n1 - n2) / pow(v0, mr);
          for (int rule = 0; rule < (a == 1 ? 2 : 1); ++rule) {
            kl_impact_in in = {mb, K, n1, 1.0, v0, 0.0, KL_MODEL_GEN, 0, rule, cc, n2, mr};
            const prob p = {K, cc, n1, n2, mr, mb, v0, 0.0, ds, rule};
            char what[96];
            snprintf(what, sizeof what, "n1 %.1f n2 %.1f m %.1f z %.2f %s", n1, n2, mr, z, rule ? "force" : "pen");
            /* the step itself, also where the law is Hunt-Crossley (kl_impact would dispatch there) */
            compare(what, &p, kl_impact_by_step(in), &w);
            ++nrun;
          }
        }
  printf("  worst over %d: dmax %.2e tmax %.2e fpeak %.2e tc %.2e cr_eff %.2e (abs)\n", nrun, w.dmax, w.tmax, w.fpeak,
         w.tc, w.cr);
  /* measured at 1e-10 per step: worst 1.6e-10, 1.3e-10, 2.8e-10, 1.4e-10, 1.8e-10 */
  assert_true(w.dmax < 2e-9);
  assert_true(w.tmax < 2e-9);
  assert_true(w.fpeak < 3e-9);
  assert_true(w.tc < 2e-9);
  assert_true(w.cr < 2e-9);
}

/* Hunt-Crossley under an external force (a preloaded impact, issue 37) against the reference: pushing in
 * (fe > 0, still separating) and pulling out (fe < 0), exact damping law, both rules */
static void test_hc_force_vs_gsl(void **state)
{
  (void)state;
  worst w = {0, 0, 0, 0, 0};
  const double fes[] = {-0.5, -0.1, 0.05, 0.2};
  for (int i = 0; i < 4; ++i)
    for (int rule = 0; rule < 2; ++rule) {
      const double mb = 2.0, K = 5e9, n = 1.5, v0 = 1.3, cr = 0.6;
      const double ds = pow((n + 1) * mb * v0 * v0 / (2 * K), 1 / (n + 1));
      const double fe = fes[i] * K * pow(ds, n);
      kl_impact_in in = {mb, K, n, cr, v0, fe, KL_MODEL_HC, KL_LAW_EXACT, rule, 0.0, 0.0, 0.0};
      const kl_impact_out o = kl_impact(in);
      const double chi = kl_hc_chi(KL_LAW_EXACT, cr, v0);
      assert_true(fabs(o.damp - chi) <= 1e-15 * chi);
      const prob p = {K, K * chi, n, n, 1.0, mb, v0, fe, ds, rule};
      char what[96];
      snprintf(what, sizeof what, "HC fe %+.2f F* %s", fes[i], rule ? "force" : "pen");
      compare(what, &p, o, &w);
    }
  printf("  worst: dmax %.2e tmax %.2e fpeak %.2e tc %.2e cr_eff %.2e (abs)\n", w.dmax, w.tmax, w.fpeak, w.tc, w.cr);
  /* measured: worst 7.3e-11, 2.1e-11, 1.2e-10, 1.7e-11, 3.2e-11 */
  assert_true(w.dmax < 1e-9);
  assert_true(w.tmax < 1e-9);
  assert_true(w.fpeak < 1e-9);
  assert_true(w.tc < 1e-9);
  assert_true(w.cr < 1e-9);
}

/* Special cases with closed forms. Hunt-Crossley (rate exponent 1, n2 = n1, c = K chi, fe = 0): kl_impact
 * dispatches to the closed form (identical), and the step agrees with it to its tolerance; Kelvin-Voigt
 * (n1 = 1, n2 = 0, rate exponent 1, c = D, force rule: the law pulls no tension) has no remainder, so the
 * step is exact but for rounding and the located events, with and without an external force. */
static void test_special_cases(void **state)
{
  (void)state;
  double worst_hc = 0, worst_kv = 0;
  const double crs[] = {0.2, 0.5, 0.9}, ns[] = {1.0, 1.5, 2.0};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const kl_impact_in hc = {1.5, 3e9, ns[j], crs[i], 0.9, 0.0, KL_MODEL_HC, KL_LAW_FLORES, 0, 0.0, 0.0, 0.0};
      const kl_impact_out a = kl_impact(hc);
      const kl_impact_in g = {1.5, 3e9, ns[j], 1.0, 0.9, 0.0, KL_MODEL_GEN, 0, 0, 3e9 * a.damp, ns[j], 1.0};
      const kl_impact_out b = kl_impact(g), s = kl_impact_by_step(g);
      assert_int_equal(b.status, KL_OK);
      assert_int_equal(s.status, KL_OK);
      /* c / K = chi to rounding, so the dispatched closed form is the same to a few ulps */
      assert_true(rel(b.dmax, a.dmax) < 1e-14 && rel(b.tc, a.tc) < 1e-14 && rel(b.fpeak, a.fpeak) < 1e-14 &&
                  rel(b.cr_eff, a.cr_eff) < 1e-14);
      worst_hc = fmax(worst_hc, fmax(fmax(rel(s.dmax, a.dmax), rel(s.tc, a.tc)),
                                     fmax(fmax(rel(s.fpeak, a.fpeak), rel(s.tmax, a.tmax)), fabs(s.cr_eff - a.cr_eff))));
      const double fes[] = {0.0, -200.0, 150.0};
      for (int f = 0; f < 3; ++f) {
        const kl_impact_in kv = {1.5, 1e6, 1.0, crs[i], 0.9, fes[f], KL_MODEL_KV, 0, KL_SEP_FORCE, 0.0, 0.0, 0.0};
        const kl_impact_out k = kl_impact(kv);
        const kl_impact_in gk = {1.5, 1e6, 1.0, 1.0, 0.9, fes[f], KL_MODEL_GEN, 0, KL_SEP_FORCE, k.damp, 0.0, 1.0};
        const kl_impact_out q = kl_impact(gk);
        assert_int_equal(k.status, q.status);
        if (k.status != KL_OK) continue;
        worst_kv = fmax(worst_kv, fmax(fmax(rel(q.dmax, k.dmax), rel(q.tc, k.tc)),
                                       fmax(fmax(rel(q.fpeak, k.fpeak), rel(q.tmax, k.tmax)), fabs(q.cr_eff - k.cr_eff))));
      }
    }
  printf("  step vs Hunt-Crossley closed form: worst %.2e; vs Kelvin-Voigt (force rule): worst %.2e\n", worst_hc,
         worst_kv);
  assert_true(worst_hc < 1e-9);  /* measured 1.2e-10 */
  assert_true(worst_kv < 1e-14); /* measured 6.4e-16 */
}

/* The awkward corners: m < 1 (dF/dd' unbounded at d' = 0, at the maximum penetration) with n2 = 0 (the force
 * jumps to c v0^m at contact), n1 < 1 (dF/dd unbounded at d = 0): finite metrics, the force at impact is the
 * jump, and the samples start there and end at d = 0 */
static void test_corners(void **state)
{
  (void)state;
  worst w = {0, 0, 0, 0, 0};
  const double mb = 1.0, K = 1e7, v0 = 0.5;
  const struct {
    double n1, n2, mr, z;
  } cs[] = {{1.5, 0.0, 0.3, 0.1}, {0.7, 0.0, 0.5, 0.3}, {0.6, 0.4, 0.6, 0.2}, {1.2, 0.0, 2.5, 0.4}};
  for (int i = 0; i < 4; ++i) {
    const double ds = pow((cs[i].n1 + 1) * mb * v0 * v0 / (2 * K), 1 / (cs[i].n1 + 1));
    const double cc = cs[i].z * K * pow(ds, cs[i].n1 - cs[i].n2) / pow(v0, cs[i].mr);
    const kl_impact_in in = {mb, K, cs[i].n1, 1.0, v0, 0.0, KL_MODEL_GEN, 0, 0, cc, cs[i].n2, cs[i].mr};
    const kl_impact_out o = kl_impact(in);
    const prob p = {K, cc, cs[i].n1, cs[i].n2, cs[i].mr, mb, v0, 0.0, ds, 0};
    char what[96];
    snprintf(what, sizeof what, "corner n1 %.1f n2 %.1f m %.1f", cs[i].n1, cs[i].n2, cs[i].mr);
    compare(what, &p, o, &w);
    double s, d, f;
    kl_impact_sample(in, o, 0, 5, &s, &d, &f);
    assert_true(s == 0 && d == 0);
    assert_true(fabs(f - (cs[i].n2 == 0 ? cc * pow(v0, cs[i].mr) : 0.0)) <= 1e-12 * o.fpeak);
    kl_impact_sample(in, o, 4, 5, &s, &d, &f);
    assert_true(s == o.tc && fabs(d) <= 1e-9 * o.dmax);
    kl_impact_sample(in, o, 2, 5, &s, &d, &f);
    assert_true(d > 0 && d <= o.dmax && f >= 0 && f <= o.fpeak);
  }
  assert_true(w.dmax < 3e-9 && w.fpeak < 3e-9 && w.tc < 3e-9 && w.cr < 3e-9); /* measured <= 2.2e-10 */
}

/* A preloaded impact that cannot leave (fe > 0 large against the impact): KL_NO_SEPARATION and zeros, as
 * Kelvin-Voigt reports it; the same impact with a small push separates */
static void test_pressed_in(void **state)
{
  (void)state;
  kl_impact_in in = {1.0, 1e9, 1.5, 0.5, 0.1, 1e5, KL_MODEL_HC, KL_LAW_HUNT_CROSSLEY, 0, 0.0, 0.0, 0.0};
  kl_impact_out o = kl_impact(in);
  assert_int_equal(o.status, KL_NO_SEPARATION);
  assert_true(o.dmax == 0 && o.tc == 0);
  in.fe = 1.0;
  o = kl_impact(in);
  assert_int_equal(o.status, KL_OK);
  assert_true(o.tc > 0 && o.cr_eff > 0 && o.cr_eff < 1);
}

/* The law's one domain (kernels/kl_contact_gen.h, docs/design.md section 2.5): k > 0, c >= 0, n1 in (0, 5],
 * n2 in [0, 5], m in (0, 5], by hand at each edge; kl_impact_check's general-law bits come from it (the sweep's
 * old domain took n2, rate_exp up to 10: 5.5 and 6 are now refused). */
static void test_law_domain(void **state)
{
  (void)state;
  const kl_gen_law ok = {1e8, 10.0, 5.0, 5.0, 5.0};
  assert_int_equal(kl_gen_law_check(ok), 0);
  kl_gen_law L = ok;
  L.k = 0.0;
  assert_int_equal(kl_gen_law_check(L), KL_GEN_BAD_K);
  L = ok, L.c = -1e-9;
  assert_int_equal(kl_gen_law_check(L), KL_GEN_BAD_C);
  L = ok, L.c = 0.0, L.n2 = 0.0;
  assert_int_equal(kl_gen_law_check(L), 0);
  L = ok, L.n1 = 0.0;
  assert_int_equal(kl_gen_law_check(L), KL_GEN_BAD_N1);
  L = ok, L.n1 = 5.0000001;
  assert_int_equal(kl_gen_law_check(L), KL_GEN_BAD_N1);
  L = ok, L.n2 = -1e-12;
  assert_int_equal(kl_gen_law_check(L), KL_GEN_BAD_N2);
  L = ok, L.n2 = 5.5;
  assert_int_equal(kl_gen_law_check(L), KL_GEN_BAD_N2);
  L = ok, L.m = 0.0;
  assert_int_equal(kl_gen_law_check(L), KL_GEN_BAD_M);
  L = ok, L.m = NAN;
  assert_int_equal(kl_gen_law_check(L), KL_GEN_BAD_M);
  char msg[160];
  L = ok, L.m = 6.0;
  assert_int_equal(kl_gen_law_bad(L, msg, sizeof msg), KL_GEN_BAD_M);
  assert_string_equal(msg, "m: the rate exponent must be in (0, 5], got 6");
  /* the sweep's check */
  kl_impact_in in = {1.0, 1e8, 1.5, 0.5, 1.0, 0.0, KL_MODEL_GEN, 0, 0, 10.0, 5.0, 5.0};
  assert_int_equal(kl_impact_check(in), KL_OK);
  in.n2 = 5.5;
  assert_int_equal(kl_impact_check(in), KL_BAD_EXPONENT);
  in.n2 = 1.5, in.rate_exp = 6.0;
  assert_int_equal(kl_impact_check(in), KL_BAD_EXPONENT);
  in.rate_exp = 1.0, in.n = 6.0;
  assert_int_equal(kl_impact_check(in), KL_BAD_EXPONENT);
  in.n = 1.5, in.c = -1.0;
  assert_int_equal(kl_impact_check(in), KL_BAD_INPUT);
}

int main(void)
{
  gsl_set_error_handler_off();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_law_domain), cmocka_unit_test(test_special_cases), cmocka_unit_test(test_pressed_in), cmocka_unit_test(test_corners),
    cmocka_unit_test(test_hc_force_vs_gsl), cmocka_unit_test(test_general_vs_gsl),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
