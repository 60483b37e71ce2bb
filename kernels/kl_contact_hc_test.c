/* kernels/kl_contact_hc_test.c: the Hunt-Crossley closed forms (kernels/kl_contact_hc.h, docs/design.md 2.3)
 * and the impact metrics of kernels/kl_impact.h against independent references:
 *   - the impact ODE m x'' = -K x^n (1 + chi x'), x(0) = 0, x'(0) = v0, integrated by GSL (rk8pd,
 *     eps_rel 1e-13). The two singular places are handled by changing the independent variable
 *     (Henon's trick), so no event has to be located by interpolation:
 *       start and end, x -> 0:  xi = sqrt(x) is the variable; x^n dx = 2 xi^(2n+1) dxi is then
 *                               polynomial for n = 1 and n = 3/2, so the integrand is analytic there;
 *       maximum penetration:    v is the variable (dt/dv = 1/x'', dx/dv = v/x''), integrated from the
 *                               first output with v < 0 up to v = 0 exactly;
 *       in between:             time, x stays >= 2% of d_max, where x^n is smooth;
 *     the peak force by Brent minimisation (GSL) of -F(t) along the integrated trajectory;
 *   - mpmath values of the Emden-Fowler time factor, and the analytic facts of the exact law and of
 *     the undamped linear and Hertz contacts;
 *   - the input checks of kl_impact (status bits, zeros, never NaN). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_min.h>
#include <gsl/gsl_odeiv2.h>

#include "kernels/kl_impact.h"

/*------- reference: the impact ODE, integrated by GSL -------*/

typedef struct hcp {
  double m, K, n, chi;
} hcp;

static double accel(const hcp *p, double x, double v) { return -p->K * pow(x, p->n) * (1.0 + p->chi * v) / p->m; }

/* time is the variable: y = (x, v) */
static int rhs_time(double t, const double y[], double f[], void *params)
{
  (void)t;
  f[0] = y[1];
  f[1] = accel(params, y[0], y[1]);
  return GSL_SUCCESS;
}

/* xi = sqrt(x) is the variable: y = (t, v); dt/dxi = 2 xi / v, dv/dxi = 2 xi x'' / v, x^n = xi^(2n) */
static int rhs_xi(double xi, const double y[], double f[], void *params)
{
  const hcp *p = params;
  const double acc = -p->K * pow(xi, 2.0 * p->n) * (1.0 + p->chi * y[1]) / p->m;
  f[0] = 2.0 * xi / y[1];
  f[1] = 2.0 * xi * acc / y[1];
  return GSL_SUCCESS;
}

/* v is the variable: y = (t, x); dt/dv = 1 / x'', dx/dv = v / x'' */
static int rhs_v(double v, const double y[], double f[], void *params)
{
  const double acc = accel(params, y[1], v);
  f[0] = 1.0 / acc;
  f[1] = v / acc;
  return GSL_SUCCESS;
}

/* Integrate one leg y(s0) -> y(s1) of a 2-D system at eps_rel 1e-13 (eps_abs 1e-16 of the scales). */
static void leg(int (*rhs)(double, const double[], double[], void *), hcp *p, double s0, double s1, double *y,
                double sc0, double sc1)
{
  gsl_odeiv2_system sys = {rhs, NULL, 2, p};
  const double scale[2] = {sc0, sc1};
  gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_scaled_new(&sys, gsl_odeiv2_step_rk8pd, 1e-4 * (s1 - s0), 1e-16,
                                                            1e-13, 1.0, 0.0, scale);
  double s = s0;
  const int st = gsl_odeiv2_driver_apply(d, &s, s1, y);
  gsl_odeiv2_driver_free(d);
  if (st != GSL_SUCCESS) fail_msg("GSL leg failed: %s", gsl_strerror(st));
}

typedef struct hc_ref {
  double dmax, tmax, fpeak, tc, vexit;
} hc_ref;

typedef struct fctx {
  hcp *p;
  double t0, x0, v0, T, X, V;
} fctx;

/* -F(t) = -K x^n (1 + chi x') along the trajectory, integrated from the stored state (t0, x0, v0) */
static double minus_force(double t, void *params)
{
  const fctx *c = params;
  double y[2] = {c->x0, c->v0};
  if (t > c->t0) leg(rhs_time, c->p, c->t0, t, y, c->X, c->V);
  return -c->p->K * pow(y[0], c->p->n) * (1.0 + c->p->chi * y[1]);
}

#define MAXGRID 100000 /* the cases below need <= ~2500 */

/* The reference impact. dhint only places the switches between the legs (at 2% of d_max on the way
 * in, 30% on the way out) and the output spacing; the results do not depend on it. */
static hc_ref hc_reference(double m, double K, double n, double chi, double v0, double dhint)
{
  hcp p = {m, K, n, chi};
  hc_ref r;
  const double tau = dhint / v0;
  /* leg A: xi from 0 to sqrt(0.02 dhint) */
  double ya[2] = {0.0, v0};
  const double xi1 = sqrt(0.02 * dhint);
  leg(rhs_xi, &p, 0.0, xi1, ya, tau, v0);
  /* leg B: time, outputs every tau/400 or so, until the restitution reaches x < 0.3 dhint; keep them
   * for the peak and the d_max legs (v decreases monotonically through the whole contact, so v is a
   * valid variable from any output with v < 0 back to v = 0) */
  static double gt[MAXGRID], gx[MAXGRID], gv[MAXGRID];
  int ng = 0;
  gt[0] = ya[0];
  gx[0] = xi1 * xi1;
  gv[0] = ya[1];
  ng = 1;
  {
    double y[2] = {gx[0], gv[0]}, t = gt[0];
    gsl_odeiv2_system sys = {rhs_time, NULL, 2, &p};
    const double scale[2] = {dhint, v0};
    gsl_odeiv2_driver *d =
      gsl_odeiv2_driver_alloc_scaled_new(&sys, gsl_odeiv2_step_rk8pd, 1e-4 * tau, 1e-16, 1e-13, 1.0, 0.0, scale);
    while (!(y[1] < 0.0 && y[0] < 0.3 * dhint)) {
      if (ng >= MAXGRID) fail_msg("reference: too many output points");
      /* compression: tau/400; restitution (slow when damping is heavy, x' ~ -1/chi): more, as long as x
       * moves by < 0.25% and x' changes by < 25% per output */
      const double dt = (y[1] >= 0.0) ? tau / 400.0
                                      : tau / 400.0 + fmin(0.0025 * y[0] / fabs(y[1]),
                                                           0.25 * fabs(y[1]) / fabs(accel(&p, y[0], y[1])));
      const int st = gsl_odeiv2_driver_apply(d, &t, t + dt, y);
      if (st != GSL_SUCCESS) fail_msg("GSL time leg failed: %s", gsl_strerror(st));
      gt[ng] = t;
      gx[ng] = y[0];
      gv[ng] = y[1];
      ++ng;
    }
    gsl_odeiv2_driver_free(d);
  }
  /* leg C: from the first output with v < 0, v up to 0 exactly: t_max and d_max */
  int k = 0;
  while (gv[k] >= 0.0) ++k;
  double yc[2] = {gt[k], gx[k]};
  leg(rhs_v, &p, gv[k], 0.0, yc, tau, dhint);
  r.tmax = yc[0];
  r.dmax = yc[1];
  /* peak force: the largest output F, refined by Brent on -F(t) over its two neighbours */
  if (chi == 0.0) {
    r.fpeak = K * pow(r.dmax, n); /* undamped: F = K x^n peaks at d_max */
  } else {
    int j = 0;
    double fmaxg = -1.0;
    for (int i = 0; i < ng; ++i) {
      const double f = K * pow(gx[i], n) * (1.0 + chi * gv[i]);
      if (f > fmaxg) {
        fmaxg = f;
        j = i;
      }
    }
    if (j == 0 || j == ng - 1) fail_msg("reference: peak force at the edge of the time leg (j = %d)", j);
    fctx c = {&p, gt[j - 1], gx[j - 1], gv[j - 1], tau, dhint, v0};
    gsl_function F = {minus_force, &c};
    gsl_min_fminimizer *mn = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
    gsl_min_fminimizer_set(mn, &F, gt[j], gt[j - 1], gt[j + 1]);
    for (int it = 0; it < 100; ++it) {
      gsl_min_fminimizer_iterate(mn);
      if (gsl_min_test_interval(gsl_min_fminimizer_x_lower(mn), gsl_min_fminimizer_x_upper(mn), 1e-9 * tau, 0.0) ==
          GSL_SUCCESS)
        break;
    }
    r.fpeak = -gsl_min_fminimizer_f_minimum(mn);
    gsl_min_fminimizer_free(mn);
  }
  /* leg D: from the last output, xi = sqrt(x) down to 0: contact time and exit speed */
  double yd[2] = {gt[ng - 1], gv[ng - 1]};
  leg(rhs_xi, &p, sqrt(gx[ng - 1]), 0.0, yd, tau, v0);
  r.tc = yd[0];
  r.vexit = -yd[1];
  return r;
}

/*------- kl_impact(HC) against the reference -------*/

/* Tolerances, all relative: what is reached, with margin (far below the 1e-9 first asked for):
 *   d_max, cr_eff, peak force: 4e-14. Closed forms to a few ulp (measured worst 3.4e-15); the reference
 *     integrates at eps_rel 1e-13 over ~1e3 steps, and the peak is a flat maximum (Brent error in t
 *     enters squared).
 *   contact time, time to d_max: 2e-10. The closed forms integrate dd/|d'| by Gauss-Legendre
 *     (docs/design.md section 2.3) with 32 nodes up to chi v0 = 100: measured worst 1.6e-11 (contact time) and
 *     2.0e-11 (time to d_max) for n = 3/2, set by the (1 - u)^{5/2} branch of the integrand at d = 0
 *     (the same 1.6e-11 as in the undamped test below, where the exact value is known); above it with
 *     64 nodes, where the restitution speed jumps to -1/chi within a thin layer in u (32 nodes gave
 *     6e-8 at chi v0 = 2500, 64 give 2.7e-12). */
#define TOL_HC 4e-14
#define TOL_HC_TIME 2e-10

static const char *law_name[KL_NLAWS] = {"Hunt-Crossley", "Lankarani-Nik.", "Flores", "Gonthier", "exact"};

typedef struct hc_set {
  double m, K, n, v0;
} hc_set;

static void test_hc_vs_gsl(void **state)
{
  (void)state;
  gsl_set_error_handler_off();
  const hc_set sets[] = {
    {1.0, 1.0e9, 1.5, 1.0},  /* steel-like Hertz: K = 4/3 E* sqrt(R) ~ 1e9 N/m^1.5 */
    {0.05, 3.0e6, 1.5, 4.0}, /* light, fast, soft */
    {0.2, 2.0e4, 1.0, 0.3},  /* linear spring (n = 1) with the HC damping */
  };
  const double crs[] = {0.01, 0.1, 0.5, 0.9, 0.99};
  /* very heavy damping, chi v0 = 360 ... 2500: the exit state u = 1 + chi x' ~ e^{-chi v0} leaves the
   * normal range of doubles (the iteration for u used to return NaN there) */
  const struct {
    int law;
    double cr;
  } heavy[] = {{KL_LAW_FLORES, 0.0044}, {KL_LAW_FLORES, 0.002}, {KL_LAW_GONTHIER, 0.001}, {KL_LAW_EXACT, 0.0004}};
  const int nheavy = (int)(sizeof heavy / sizeof heavy[0]);
  double worst[5] = {0, 0, 0, 0, 0}; /* dmax, cr_eff, fpeak, tc, tmax */
  int count = 0;
  for (int is = 0; is < 3; ++is) {
    for (int ilc = 0; ilc < KL_NLAWS * 5 + nheavy; ++ilc) {
      const int law = (ilc < KL_NLAWS * 5) ? ilc / 5 : heavy[ilc - KL_NLAWS * 5].law;
      const double cr = (ilc < KL_NLAWS * 5) ? crs[ilc % 5] : heavy[ilc - KL_NLAWS * 5].cr;
      const hc_set *S = &sets[is];
      const kl_impact_in in = {S->m, S->K, S->n, cr, S->v0, 0.0, KL_MODEL_HC, law, KL_SEP_PENETRATION, 0.0, 0.0, 0.0};
      const kl_impact_out o = kl_impact(in);
      if (o.status != KL_OK) fail_msg("n %.1f %s cr %.4f: status %d", S->n, law_name[law], cr, o.status);
      const hc_ref r = hc_reference(S->m, S->K, S->n, o.damp, S->v0, o.dmax);
      const double e[5] = {fabs(o.dmax - r.dmax) / r.dmax, fabs(o.cr_eff - r.vexit / S->v0) / (r.vexit / S->v0),
                           fabs(o.fpeak - r.fpeak) / r.fpeak, fabs(o.tc - r.tc) / r.tc, fabs(o.tmax - r.tmax) / r.tmax};
      for (int q = 0; q < 5; ++q) worst[q] = fmax(worst[q], e[q]);
      ++count;
      if (!(e[0] <= TOL_HC && e[1] <= TOL_HC && e[2] <= TOL_HC && e[3] <= TOL_HC_TIME && e[4] <= TOL_HC_TIME))
        fail_msg("n %.1f %s cr %.4f (chi v0 = %.3g): dmax %.1e cr_eff %.1e fpeak %.1e tc %.1e tmax %.1e", S->n,
                 law_name[law], cr, o.damp * S->v0, e[0], e[1], e[2], e[3], e[4]);
    }
  }
  printf("  %d impacts (3 parameter sets x (5 laws x cr 0.01 0.1 0.5 0.9 0.99 + 4 with chi v0 360..2500)) vs GSL:\n",
         count);
  printf("  worst relative: d_max %.1e, cr_eff %.1e, peak force %.1e, contact time %.1e, time to d_max %.1e\n",
         worst[0], worst[1], worst[2], worst[3], worst[4]);
}

/*------- the exact-restitution law -------*/

/* chi of the exact law solves d (1 + cr) = ln((1 + d)/(1 - cr d)) (d = chi v0) so that the effective
 * restitution is cr. Tolerance 1e-12 relative: the root is found to 1e-15 in d and
 * dcr_eff/dd is O(1), so ~1e-15 is expected; the same through kl_impact at two speeds (cr_eff does
 * not depend on v0 for this law); d = chi v0 itself by the backward error of its equation (1e-13:
 * the root finder stops at 1e-15 relative). */
static void test_hc_exact_law(void **state)
{
  (void)state;
  const double crs[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 0.9999, 1.0};
  const int ncr = (int)(sizeof crs / sizeof crs[0]);
  double worst = 0, worst_res = 0;
  for (int i = 0; i < ncr; ++i) {
    for (int iv = 0; iv < 2; ++iv) {
      const double v0 = iv ? 7.5 : 0.02;
      const kl_impact_in in = {0.3, 5e7, 1.5, crs[i], v0, 0.0, KL_MODEL_HC, KL_LAW_EXACT, KL_SEP_FORCE, 0.0, 0.0, 0.0};
      const kl_impact_out o = kl_impact(in);
      assert_int_equal(o.status, KL_OK);
      const double e = fabs(o.cr_eff - crs[i]) / crs[i];
      worst = fmax(worst, e);
      if (!(e <= 4e-15)) fail_msg("exact law, cr %.4f: cr_eff %.17g", crs[i], o.cr_eff); /* measured 3.3e-16 */
    }
    /* the defining equation g(d) = g(-cr d), as a backward error in d: the residual divided by
     * d |d/dd (g(d) - g(-cr d))| = d (g'(d) + cr |g'(-cr d)|), g'(y) = y/(1 + y). Near cr d = 1 (small
     * cr) g(-cr d) is steep and the root sits within a few ulp of 1/cr; for cr <= 0.02 the double
     * nearest the root is 1/cr itself (1 - cr d = (1 + d) e^{-d (1 + cr)} < 1e-20), where g(-cr d) is
     * infinite: there d must be 1/cr to rounding. */
    const double cr = crs[i];
    const double d = kl_hc_exact_d(cr);
    if (cr < 1.0) {
      assert_true(d > 0.0 && d <= 1.0 / cr);
      if (1.0 - cr * d > 1e-300) {
        const double gp = d / (1.0 + d), gm = cr * (cr * d) / (1.0 - cr * d);
        const double res = fabs(kl_g(d) - kl_g(-cr * d)) / (d * (gp + gm));
        worst_res = fmax(worst_res, res);
        if (!(res <= 3e-15)) fail_msg("exact law cr %.4f: d %.17g, backward error %.3g", cr, d, res); /* measured 2.6e-16 */
      } else {
        assert_true((1.0 + d) * exp(-d * (1.0 + cr)) < 1e-20 && fabs(d - 1.0 / cr) <= 4 * KL_EPS / cr);
      }
    } else {
      assert_true(d == 0.0);
    }
  }
  printf("  exact law: |cr_eff - cr|/cr worst %.2e over %d cr x 2 speeds; backward error of d %.2e\n", worst, ncr,
         worst_res);
}

/*------- undamped contacts: Hertz and linear -------*/

/* Undamped (cr = 1): tc = 2 kl_ef_time_factor(n) d_max / v0 exactly. Checked for n = 3/2 to 2e-10
 * relative: the 32-node rule on sqrt(1 - (1 - u^2)^{5/2}) (its end-point branch (1 - u)^{5/2}
 * limits Gauss-Legendre: measured 1.6e-11; 1.3e-13 with 64 nodes); the factor itself against mpmath (sqrt(pi) Gamma(1.4)/Gamma(0.9)
 * = 1.47163759216235232869..., stored; n = 2 through tgamma: 1.40218210532545426118...) to 1e-14; 2 x 1.4716 = 2.9433, i.e.
 * the 2.94 d_max / v0 of the literature to three digits; and n = 1 gives the half period pi sqrt(m/K)
 * to 1e-12. d_max is checked against the energy balance K d^{n+1}/(n+1) = m v0^2 / 2 to 1e-14. */
static void test_hc_undamped(void **state)
{
  (void)state;
  const double f15 = 1.4716375921623523286908936500414613631;
  assert_true(fabs(kl_ef_time_factor(1.5) - f15) / f15 <= 1e-14);
  assert_true(fabs(kl_ef_time_factor(1.0) - KL_PI / 2.0) / (KL_PI / 2.0) <= 1e-14);
  /* the tgamma path, for exponents without a stored constant: n = 2 against mpmath */
  const double f2 = 1.40218210532545426117501907905;
  assert_true(fabs(kl_ef_time_factor(2.0) - f2) / f2 <= 1e-14);
  double worst_h = 0, worst_l = 0;
  for (int law = 0; law < KL_NLAWS; ++law) {
    const double v0s[] = {0.01, 1.0, 30.0};
    for (int iv = 0; iv < 3; ++iv) {
      const double v0 = v0s[iv];
      const kl_impact_in in = {2.0, 7e9, 1.5, 1.0, v0, 0.0, KL_MODEL_HC, law, KL_SEP_PENETRATION, 0.0, 0.0, 0.0};
      const kl_impact_out o = kl_impact(in);
      assert_int_equal(o.status, KL_OK);
      assert_true(o.damp == 0.0 && o.cr_eff == 1.0);
      const double dE = pow(2.5 * in.m * v0 * v0 / (2.0 * in.K), 1.0 / 2.5);
      assert_true(fabs(o.dmax - dE) / dE <= 1e-14);
      const double ratio = o.tc * v0 / o.dmax;
      assert_true(fabs(ratio - 2.94) < 0.005); /* three digits */
      const double e = fabs(o.tc - 2.0 * kl_ef_time_factor(1.5) * o.dmax / v0) / o.tc;
      worst_h = fmax(worst_h, e);
      if (!(e <= 2e-10)) fail_msg("Hertz tc %.17g vs 2 f(1.5) dmax/v0 %.17g", o.tc, 2.0 * f15 * o.dmax / v0);
      assert_true(fabs(o.tmax - 0.5 * o.tc) <= 1e-15 * o.tc);
      const kl_impact_in il = {2.0, 7e5, 1.0, 1.0, v0, 0.0, KL_MODEL_HC, law, KL_SEP_PENETRATION, 0.0, 0.0, 0.0};
      const kl_impact_out ol = kl_impact(il);
      const double half = KL_PI * sqrt(il.m / il.K);
      const double el = fabs(ol.tc - half) / half;
      worst_l = fmax(worst_l, el);
      assert_true(el <= 5e-15); /* measured 4.9e-16 */
      if (iv == 1 && law == 0) printf("  Hertz: tc v0 / d_max = %.15f (2.94 to three digits)\n", ratio);
    }
  }
  printf("  undamped: Hertz tc vs 2 f(1.5) d_max/v0 worst %.2e; linear tc vs pi sqrt(m/K) worst %.2e\n", worst_h,
         worst_l);
}

/*------- invalid inputs -------*/

static int all_zero(kl_impact_out o)
{
  return o.dmax == 0.0 && o.tmax == 0.0 && o.fpeak == 0.0 && o.tc == 0.0 && o.cr_eff == 0.0 && o.ediss == 0.0 &&
         o.damp == 0.0;
}

static int any_nan(kl_impact_out o)
{
  return isnan(o.dmax) || isnan(o.tmax) || isnan(o.fpeak) || isnan(o.tc) || isnan(o.cr_eff) || isnan(o.ediss) ||
         isnan(o.damp);
}

/* A bad scenario returns all-zero outputs and exactly the status bits of what is wrong (docs/design.md 8:
 * bad input never silently produces numbers). */
static void test_impact_invalid(void **state)
{
  (void)state;
  const kl_impact_in good = {1.0, 1e9, 1.5, 0.7, 1.0, 0.0, KL_MODEL_HC, KL_LAW_HUNT_CROSSLEY, KL_SEP_PENETRATION,
                             0.0, 0.0, 0.0};
  assert_int_equal(kl_impact(good).status, KL_OK);
  struct bad {
    const char *what;
    kl_impact_in in;
    int status;
  };
  const struct bad cases[] = {
    {"cr = 0", {1.0, 1e9, 1.5, 0.0, 1.0, 0.0, KL_MODEL_HC, 0, 0, 0.0, 0.0, 0.0}, KL_BAD_CR},
    {"cr > 1", {1.0, 1e9, 1.5, 1.2, 1.0, 0.0, KL_MODEL_HC, 0, 0, 0.0, 0.0, 0.0}, KL_BAD_CR},
    {"cr < 0 (KV)", {1.0, 1e9, 1.0, -0.5, 1.0, 0.0, KL_MODEL_KV, 0, 0, 0.0, 0.0, 0.0}, KL_BAD_CR},
    {"cr NaN", {1.0, 1e9, 1.5, NAN, 1.0, 0.0, KL_MODEL_EF, 0, 0, 0.0, 0.0, 0.0}, KL_BAD_CR},
    {"NaN mass", {NAN, 1e9, 1.5, 0.7, 1.0, 0.0, KL_MODEL_HC, 0, 0, 0.0, 0.0, 0.0}, KL_BAD_MASS},
    {"zero mass (KV)", {0.0, 1e9, 1.0, 0.7, 1.0, 0.0, KL_MODEL_KV, 0, 0, 0.0, 0.0, 0.0}, KL_BAD_MASS},
    {"negative K", {1.0, -1e9, 1.5, 0.7, 1.0, 0.0, KL_MODEL_HC, 0, 0, 0.0, 0.0, 0.0}, KL_BAD_STIFFNESS},
    {"infinite K (KV)", {1.0, INFINITY, 1.0, 0.7, 1.0, 0.0, KL_MODEL_KV, 0, 0, 0.0, 0.0, 0.0}, KL_BAD_STIFFNESS},
    {"unknown law 5", {1.0, 1e9, 1.5, 0.7, 1.0, 0.0, KL_MODEL_HC, KL_NLAWS, 0, 0.0, 0.0, 0.0}, KL_BAD_LAW},
    {"unknown law -1", {1.0, 1e9, 1.5, 0.7, 1.0, 0.0, KL_MODEL_HC, -1, 0, 0.0, 0.0, 0.0}, KL_BAD_LAW},
    {"unknown model", {1.0, 1e9, 1.5, 0.7, 1.0, 0.0, KL_NMODELS, 0, 0, 0.0, 0.0, 0.0}, KL_BAD_LAW},
    {"general: rate exponent 0", {1.0, 1e9, 1.5, 0.7, 1.0, 0.0, KL_MODEL_GEN, 0, 0, 1e3, 1.5, 0.0}, KL_BAD_EXPONENT},
    {"general: n2 < 0", {1.0, 1e9, 1.5, 0.7, 1.0, 0.0, KL_MODEL_GEN, 0, 0, 1e3, -0.5, 1.0}, KL_BAD_EXPONENT},
    {"general: c < 0", {1.0, 1e9, 1.5, 0.7, 1.0, 0.0, KL_MODEL_GEN, 0, 0, -1.0, 1.5, 1.0}, KL_BAD_INPUT},
    {"general: c NaN", {1.0, 1e9, 1.5, 0.7, 1.0, 0.0, KL_MODEL_GEN, 0, 0, NAN, 1.5, 1.0}, KL_BAD_INPUT},
    {"unknown rule", {1.0, 1e9, 1.0, 0.7, 1.0, 0.0, KL_MODEL_KV, 0, 2, 0.0, 0.0, 0.0}, KL_BAD_LAW},
    {"v0 = 0", {1.0, 1e9, 1.5, 0.7, 0.0, 0.0, KL_MODEL_HC, 0, 0, 0.0, 0.0, 0.0}, KL_BAD_SPEED},
    {"v0 NaN", {1.0, 1e9, 1.5, 0.7, NAN, 0.0, KL_MODEL_HC, 0, 0, 0.0, 0.0, 0.0}, KL_BAD_SPEED},
    {"n = 0", {1.0, 1e9, 0.0, 0.7, 1.0, 0.0, KL_MODEL_HC, 0, 0, 0.0, 0.0, 0.0}, KL_BAD_EXPONENT},
    {"KV with n = 1.5", {1.0, 1e9, 1.5, 0.7, 1.0, 0.0, KL_MODEL_KV, 0, 0, 0.0, 0.0, 0.0}, KL_BAD_EXPONENT},
    {"fe NaN", {1.0, 1e9, 1.0, 0.7, 1.0, NAN, KL_MODEL_KV, 0, 0, 0.0, 0.0, 0.0}, KL_BAD_INPUT},
    {"EF with fe (no model of it)", {1.0, 1e9, 1.5, 0.7, 1.0, 5.0, KL_MODEL_EF, 0, 0, 0.0, 0.0, 0.0}, KL_UNSUPPORTED},
    {"NaN mass, cr = 0, K < 0, law 9",
     {NAN, -1.0, 1.5, 0.0, 1.0, 0.0, KL_MODEL_HC, 9, 0, 0.0, 0.0, 0.0},
     KL_BAD_MASS | KL_BAD_CR | KL_BAD_STIFFNESS | KL_BAD_LAW},
  };
  const int nb = (int)(sizeof cases / sizeof cases[0]);
  for (int i = 0; i < nb; ++i) {
    const kl_impact_out o = kl_impact(cases[i].in);
    if (o.status != cases[i].status || !all_zero(o))
      fail_msg("%s: status %d (expected %d), outputs zero: %d", cases[i].what, o.status, cases[i].status, all_zero(o));
  }
  /* never NaN: 20000 fixed-seed scenarios, valid and invalid mixed (log-uniform m, K, v0 over many
   * decades, cr in [0, 1.1], n in {1, 1.5, 2}, every model, law and rule, a constant force for some
   * KV ones): either status OK with finite outputs, or status bits with zeros (KV pushed in by a
   * large force may legitimately report KL_NO_SEPARATION) */
  uint64_t seed = 2024;
  int nok = 0;
  for (int i = 0; i < 20000; ++i) {
    double u[6];
    for (int q = 0; q < 6; ++q) {
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      u[q] = (double)(seed >> 11) * 0x1.0p-53;
    }
    kl_impact_in in;
    in.m = pow(10.0, -4.0 + 6.0 * u[0]);
    in.K = pow(10.0, 2.0 + 10.0 * u[1]);
    in.v0 = pow(10.0, -3.0 + 5.0 * u[2]);
    in.cr = 1.1 * u[3];
    in.model = (int)(seed >> 60) % KL_NMODELS;
    in.law = (int)((seed >> 40) % KL_NLAWS);
    in.rule = (int)((seed >> 30) & 1u);
    in.n = (in.model == KL_MODEL_KV) ? 1.0 : ((u[4] < 0.5) ? 1.5 : ((u[4] < 0.75) ? 1.0 : 2.0));
    in.fe = (in.model == KL_MODEL_KV && u[5] < 0.3) ? in.K * 1e-4 * (u[5] - 0.15) : 0.0;
    in.c = in.model == KL_MODEL_GEN ? in.K * u[5] : 0.0; /* the general law: c k, n2 n, rate exponent 1 */
    in.n2 = in.n;
    in.rate_exp = 1.0;
    const kl_impact_out o = kl_impact(in);
    if (any_nan(o) || (o.status != KL_OK && !all_zero(o)))
      fail_msg("scenario %d: m %g K %g v0 %g cr %g model %d law %d: status %d, NaN %d", i, in.m, in.K, in.v0, in.cr,
               in.model, in.law, o.status, any_nan(o));
    /* a scenario that passes the input checks must not fail inside (e.g. chi v0 > ~353 once made the
     * restitution branch NaN, reported as KL_NO_CONVERGE) */
    if (kl_impact_check(in) == KL_OK && (o.status & KL_NO_CONVERGE))
      fail_msg("scenario %d: valid input, no convergence: m %g K %g n %g v0 %g cr %g model %d law %d", i, in.m, in.K,
               in.n, in.v0, in.cr, in.model, in.law);
    if (o.status == KL_OK) ++nok;
  }
  printf("  random scenarios: %d of 20000 valid, none NaN or unconverged, invalid ones all-zero\n", nok);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_hc_vs_gsl),
    cmocka_unit_test(test_hc_exact_law),
    cmocka_unit_test(test_hc_undamped),
    cmocka_unit_test(test_impact_invalid),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
