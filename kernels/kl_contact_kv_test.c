/* kernels/kl_contact_kv_test.c: the Kelvin-Voigt closed forms (kernels/kl_contact_kv.h, paper eq. 1,
 * 3, 4, 5, 10) against independent references:
 *   - GSL's adaptive integrators on m x'' + D x' + K x = f0 + f1 t (gsl_odeiv2: rk8pd, and msbdf with
 *     the exact Jacobian for a stiff over-damped case), eps_rel 1e-13;
 *   - GSL adaptive quadrature (gsl_integration_qag, 61-point Gauss-Kronrod) of the force for the impulse;
 *   - GSL root bracketing (Brent) for the contact end, on the closed form and on the integrated state;
 *   - the analytic facts of eq. (10): the exit speed is exactly cr v0 and the contact lasts pi/omega.
 *
 * "Relative" for a quantity that crosses zero along a trajectory (x, v, the force K x + D x', the
 * impulse) means relative to its scale on that trajectory: the largest |value| over the sampled
 * times (for J over [0, t]: max |F| times t, which bounds |J| and int |F|). A pointwise relative
 * error is meaningless at a zero crossing, and an absolute one depends on units. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_odeiv2.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_roots.h>

#include "kernels/kl_impact.h"

/* The integrator runs at eps_rel 1e-13 (eps_abs 1e-15 of the trajectory scale), so its own error is
 * ~1e-12 of the scale over the few hundred steps used (measured worst 5.2e-12, the stiff over-damped
 * case integrated by msbdf; 7e-14 for the others); 5e-11 is ten times that. */
#define TOL_STATE 5e-11

/*------- reference: GSL integrator on the linear system -------*/

static int kv_rhs(double t, const double y[], double f[], void *params)
{
  const kl_kv_sys *s = params;
  f[0] = y[1];
  f[1] = (s->f0 + s->f1 * t - s->D * y[1] - s->K * y[0]) / s->m;
  return GSL_SUCCESS;
}

static int kv_jac(double t, const double y[], double *dfdy, double dfdt[], void *params)
{
  (void)t;
  (void)y;
  const kl_kv_sys *s = params;
  dfdy[0] = 0.0;
  dfdy[1] = 1.0;
  dfdy[2] = -s->K / s->m;
  dfdy[3] = -s->D / s->m;
  dfdt[0] = 0.0;
  dfdt[1] = s->f1 / s->m;
  return GSL_SUCCESS;
}

/* a scale for x and v along a trajectory of length T (amplitude of the free motion plus the forced
 * displacement): the absolute tolerance of the integrator is 1e-15 of it */
static void traj_scale(kl_kv_sys s, double x0, double v0, double T, double *X, double *V)
{
  const double w0 = sqrt(s.K / s.m);
  *X = fabs(x0) + fabs(v0) / w0 + fabs(s.f0) / s.K + fabs(s.f1) * T / s.K;
  *V = fabs(v0) + w0 * (fabs(x0) + fabs(s.f0) / s.K) + fabs(s.f1) / s.K;
}

static gsl_odeiv2_driver *make_driver(gsl_odeiv2_system *sys, kl_kv_sys *s, double x0, double v0, double T,
                                      int stiff)
{
  static double scale[2];
  traj_scale(*s, x0, v0, T, &scale[0], &scale[1]);
  sys->function = kv_rhs;
  sys->jacobian = kv_jac;
  sys->dimension = 2;
  sys->params = s;
  const double h0 = 1e-3 / (s->D / s->m + sqrt(s->K / s->m));
  return gsl_odeiv2_driver_alloc_scaled_new(sys, stiff ? gsl_odeiv2_step_msbdf : gsl_odeiv2_step_rk8pd, h0, 1e-15,
                                            1e-13, 1.0, 0.0, scale);
}

/*------- test cases -------*/

typedef struct kv_case {
  const char *name;
  double m, K, Dfac; /* D = Dfac * 2 sqrt(K m) (critical damping times Dfac) */
  double f0, f1, x0, v0;
  double Tw; /* duration in units of 1/w0 */
  int stiff; /* integrate with msbdf */
} kv_case;

/* The paper's ball (m = 1 kg, K = 140e6 N/m) and a soft contact (0.2 kg, 2e4 N/m); impacts from
 * x = 0, starts from rest off equilibrium, moving away, gravity and an affine (ramp) force. */
static const kv_case cases[] = {
  {"under cr=0.8 impact", 1.0, 140e6, 0.0708, 0.0, 0.0, 0.0, 1.0, 30.0, 0},
  {"under light, gravity", 1.0, 140e6, 0.01, 9.81, 0.0, 1e-5, -0.3, 60.0, 0},
  {"under, ramp", 0.2, 2e4, 0.3, -1.0, 50.0, 2e-3, 0.1, 25.0, 0},
  {"under strong, ramp", 1.0, 140e6, 0.9, 9.81, 2e6, -3e-6, 2.0, 20.0, 0},
  {"undamped, ramp", 0.2, 2e4, 0.0, 0.5, -20.0, 0.0, 0.4, 40.0, 0},
  {"critical impact", 1.0, 140e6, 1.0, 0.0, 0.0, 0.0, 1.0, 30.0, 0},
  {"critical, ramp", 0.2, 2e4, 1.0, 2.0, 100.0, 1e-3, -0.2, 30.0, 0},
  {"over x3, gravity", 1.0, 140e6, 3.0, 9.81, 0.0, 2e-5, 0.5, 60.0, 0},
  {"over x1.2, ramp", 0.2, 2e4, 1.2, -0.5, 80.0, 0.0, 0.3, 40.0, 0},
  {"over x1000 stiff, ramp (msbdf)", 1.0, 140e6, 1000.0, 9.81, 1e5, 1e-5, 1.0, 8000.0, 1},
};
#define NCASES (int)(sizeof cases / sizeof cases[0])

static kl_kv_sys case_sys(const kv_case *c)
{
  kl_kv_sys s;
  s.m = c->m;
  s.K = c->K;
  s.D = c->Dfac * 2.0 * sqrt(c->K * c->m);
  s.f0 = c->f0;
  s.f1 = c->f1;
  return s;
}

/* sample times: geometric from 1e-4/w0 (inside the Taylor branch, (r + w0) t <= 1/2) to T */
#define NT 240
static void sample_times(double w0, double T, double *ts)
{
  const double t0 = 1e-4 / w0;
  for (int i = 0; i < NT; ++i) ts[i] = t0 * pow(T / t0, (double)i / (double)(NT - 1));
  ts[NT - 1] = T;
}

/*------- the exact step against the integrator -------*/

static void test_kv_step_vs_gsl(void **state)
{
  (void)state;
  gsl_set_error_handler_off();
  double worst_all = 0;
  for (int ic = 0; ic < NCASES; ++ic) {
    const kv_case *c = &cases[ic];
    kl_kv_sys s = case_sys(c);
    const double w0 = sqrt(s.K / s.m), T = c->Tw / w0;
    double ts[NT], xr[NT], vr[NT];
    sample_times(w0, T, ts);
    gsl_odeiv2_system sys;
    gsl_odeiv2_driver *d = make_driver(&sys, &s, c->x0, c->v0, T, c->stiff);
    double t = 0.0, y[2] = {c->x0, c->v0};
    double Xs = 0, Vs = 0, Fs = 0;
    for (int i = 0; i < NT; ++i) {
      const int st = gsl_odeiv2_driver_apply(d, &t, ts[i], y);
      assert_int_equal(st, GSL_SUCCESS);
      xr[i] = y[0];
      vr[i] = y[1];
      Xs = fmax(Xs, fabs(y[0]));
      Vs = fmax(Vs, fabs(y[1]));
      Fs = fmax(Fs, fabs(s.K * y[0] + s.D * y[1]));
    }
    gsl_odeiv2_driver_free(d);
    double ex = 0, ev = 0, ef = 0, ec = 0;
    for (int i = 0; i < NT; ++i) {
      const kl_kv_out o = kl_kv_step(s, c->x0, c->v0, ts[i]);
      ex = fmax(ex, fabs(o.x - xr[i]) / Xs);
      ev = fmax(ev, fabs(o.v - vr[i]) / Vs);
      ef = fmax(ef, fabs((s.K * o.x + s.D * o.v) - (s.K * xr[i] + s.D * vr[i])) / Fs);
      /* dx, dv are x - x0, v - v0 without cancellation: consistent with x, v to rounding */
      assert_true(fabs(o.x - (c->x0 + o.dx)) <= 4 * KL_EPS * Xs);
    }
    /* chained: the same trajectory in 37 unequal exact steps, the force restarted at each step's
     * start (f0 + f1 t0) as the engine does */
    double x = c->x0, v = c->v0, tc = 0.0;
    uint64_t seed = 42u + (uint64_t)ic;
    for (int k = 0; k < 37; ++k) {
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      const double frac = (k == 36) ? 1.0 : fmin(1.0, tc / T + 0.05 * (double)(seed >> 11) * 0x1.0p-53);
      const double h = frac * T - tc;
      kl_kv_sys sk = s;
      sk.f0 = s.f0 + s.f1 * tc;
      const kl_kv_out o = kl_kv_step(sk, x, v, h);
      x = o.x;
      v = o.v;
      tc += h;
    }
    ec = fmax(fabs(x - xr[NT - 1]) / Xs, fabs(v - vr[NT - 1]) / Vs);
    printf("  %-32s x %.1e  v %.1e  F %.1e  chained %.1e\n", c->name, ex, ev, ef, ec);
    worst_all = fmax(worst_all, fmax(fmax(ex, ev), fmax(ef, ec)));
    if (!(ex <= TOL_STATE && ev <= TOL_STATE && ef <= TOL_STATE && ec <= TOL_STATE))
      fail_msg("%s: closed form vs GSL beyond %.0e", c->name, TOL_STATE);
  }
  printf("  worst over all cases: %.2e (tolerance %.0e)\n", worst_all, TOL_STATE);
}

/*------- impulse (paper eq. 5) against quadrature -------*/

typedef struct fq {
  kl_kv_sys s;
  double x0, v0;
} fq;

static double force_along(double t, void *p)
{
  const fq *q = p;
  const kl_kv_out o = kl_kv_step(q->s, q->x0, q->v0, t);
  return q->s.K * o.x + q->s.D * o.v;
}

/* J = int_0^t (K x + D x') dt from the closed form (momentum balance) against 61-point adaptive
 * Gauss-Kronrod quadrature of the closed-form force, asked for 1e-13 relative. Tolerance 1e-10 of
 * max|F| t: the quadrature meets ~1e-13, and J = f0 t + f1 t^2/2 - m (v - v0) carries the rounding
 * of m dv, which is ~eps of m max|v| <= eps max|F| t / (w0 t) near t ~ 1/w0. The step-averaged force
 * J/t (what a force sensor reports) is then checked to 1e-14 of max|F|, the same statement (measured
 * worst 8.7e-16 for both). */
#define TOL_J 1e-14

static void test_kv_impulse_vs_quadrature(void **state)
{
  (void)state;
  gsl_set_error_handler_off();
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(2000);
  double worst = 0, worst_avg = 0;
  for (int ic = 0; ic < NCASES; ++ic) {
    const kv_case *c = &cases[ic];
    fq q;
    q.s = case_sys(c);
    q.x0 = c->x0;
    q.v0 = c->v0;
    const double w0 = sqrt(q.s.K / q.s.m), T = c->Tw / w0;
    double ts[NT];
    sample_times(w0, fmin(T, 30.0 / w0), ts);
    double Fs = 0;
    for (int i = 0; i < NT; ++i) Fs = fmax(Fs, fabs(force_along(ts[i], &q)));
    gsl_function F = {force_along, &q};
    for (int i = 0; i < NT; i += 6) {
      const double t = ts[i];
      double res, abserr;
      gsl_integration_qag(&F, 0.0, t, 1e-15 * Fs * t, 1e-13, 2000, GSL_INTEG_GAUSS61, ws, &res, &abserr);
      const kl_kv_out o = kl_kv_step(q.s, q.x0, q.v0, t);
      const double e = fabs(o.J - res) / (Fs * t);
      const double eavg = fabs(o.J / t - res / t) / Fs;
      worst = fmax(worst, e);
      worst_avg = fmax(worst_avg, eavg);
      if (!(e <= TOL_J && eavg <= TOL_J))
        fail_msg("%s t = %.3g: J = %.17g, quadrature %.17g (err %.2g)", c->name, t, o.J, res, abserr);
    }
  }
  gsl_integration_workspace_free(ws);
  printf("  impulse vs qag: worst %.2e of max|F| t; step-averaged force J/t worst %.2e of max|F|\n", worst,
         worst_avg);
}

/*------- continuity across regimes and branch switches -------*/

/* Largest deviation of y[k], k = -5..5 (index k + 5), from its least-squares line in k. The true
 * x(t) is analytic in D and t, so over a relative change of 5e-9 its curvature contributes ~1e-17;
 * a jump between two formulas shows up in full. */
static double line_residual(const double *y)
{
  double sy = 0, sky = 0, skk = 0;
  for (int k = -5; k <= 5; ++k) {
    sy += y[k + 5];
    sky += k * y[k + 5];
    skk += k * k;
  }
  const double a = sy / 11.0, b = sky / skk;
  double r = 0;
  for (int k = -5; k <= 5; ++k) r = fmax(r, fabs(y[k + 5] - (a + b * k)));
  return r;
}

/* Tolerance 1e-14 relative to the trajectory scale: each formula is accurate to ~1e-15 (measured worst
 * jump 6.6e-16), so anything above 1e-14 is a branch that does not join its neighbour. */
#define TOL_SMOOTH 1e-14

static void check_smooth(const char *what, const double *xs, const double *vs, double X, double V, double *worst)
{
  const double ex = line_residual(xs) / X, ev = line_residual(vs) / V;
  *worst = fmax(*worst, fmax(ex, ev));
  if (!(ex <= TOL_SMOOTH && ev <= TOL_SMOOTH)) fail_msg("%s: x jumps %.2e, v jumps %.2e of scale", what, ex, ev);
}

static void test_kv_regime_continuity(void **state)
{
  (void)state;
  const double m = 1.0, K = 140e6, w0 = sqrt(K / m), Dc = 2.0 * sqrt(K * m);
  const double starts[3][4] = {/* x0, v0, f0, f1 */ {0.0, 1.0, 0.0, 0.0}, {1e-5, -0.3, 9.81, 0.0}, {-2e-6, 0.5, 5.0, 3e6}};
  double worst_D = 0, worst_taylor = 0, worst_series = 0;
  for (int is = 0; is < 3; ++is) {
    const double x0 = starts[is][0], v0 = starts[is][1];
    kl_kv_sys s = {m, K, Dc, starts[is][2], starts[is][3]};
    double X, V;
    traj_scale(s, x0, v0, 30.0 / w0, &X, &V);
    /* (a) D = Dc (1 + k 1e-9): under-damped for k < 0, critical at 0, over-damped for k > 0 */
    const double tw[] = {0.3, 0.6, 1.0, 2.0, 5.0, 12.0, 30.0};
    for (int it = 0; it < 7; ++it) {
      double xs[11], vs[11];
      for (int k = -5; k <= 5; ++k) {
        kl_kv_sys sk = s;
        sk.D = Dc * (1.0 + k * 1e-9);
        const kl_kv_out o = kl_kv_step(sk, x0, v0, tw[it] / w0);
        xs[k + 5] = o.x;
        vs[k + 5] = o.v;
      }
      check_smooth("D through critical", xs, vs, X, V, &worst_D);
    }
    /* (b) the Taylor branch ends at (r + w0) t = 1/2; (c) the series in lam t^2 ends at |lam t^2| = 1.
     * Both in t = t* (1 + k 1e-9), for under-, critically and over-damped systems. */
    const double dfac[] = {0.05, 0.5, 1.0, 1.5, 4.0};
    for (int id = 0; id < 5; ++id) {
      kl_kv_sys sd = s;
      sd.D = dfac[id] * Dc;
      const double r = sd.D / (2.0 * m), lam = w0 * w0 - r * r;
      double xs[11], vs[11];
      const double tt = 0.5 / (r + w0);
      for (int k = -5; k <= 5; ++k) {
        const kl_kv_out o = kl_kv_step(sd, x0, v0, tt * (1.0 + k * 1e-9));
        xs[k + 5] = o.x;
        vs[k + 5] = o.v;
      }
      check_smooth("Taylor switch", xs, vs, X, V, &worst_taylor);
      if (dfac[id] == 1.0) continue; /* lam = 0: no series switch */
      const double ts = 1.0 / sqrt(fabs(lam));
      assert_true((r + w0) * ts > 0.5); /* the switch is reached outside the Taylor branch */
      for (int k = -5; k <= 5; ++k) {
        const kl_kv_out o = kl_kv_step(sd, x0, v0, ts * (1.0 + k * 1e-9));
        xs[k + 5] = o.x;
        vs[k + 5] = o.v;
      }
      check_smooth("series switch", xs, vs, X, V, &worst_series);
    }
  }
  printf("  largest jump off a straight line (of the trajectory scale): D through Dc %.1e, Taylor switch %.1e, "
         "series switch %.1e\n",
         worst_D, worst_taylor, worst_series);
}

/*------- restitution (paper eq. 10) through kl_impact -------*/

/* With separation at d = 0 and no external force, the exit speed of the eq. (10) damping is exactly
 * cr v0 (the solution is e^{-rt} sin(wt) v0/w and separation is at t = pi/w, so the ratio is
 * e^{-r pi / w} = cr). Tolerance 3e-14 relative (measured worst 3.1e-15); the contact time is checked
 * against pi/w to 1e-14 (the closed-form root is atan2-exact: measured 0). */
static void test_kv_restitution(void **state)
{
  (void)state;
  const double crs[] = {0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99, 1.0};
  const double Ks[] = {140e6, 2e4};
  const double ms[] = {1.0, 0.05};
  double worst = 0, worst_tc = 0;
  for (int ik = 0; ik < 2; ++ik) {
    for (int ic = 0; ic < 12; ++ic) {
      kl_impact_in in = {ms[ik], Ks[ik], 1.0, crs[ic], 0.7, 0.0, KL_MODEL_KV, 0, KL_SEP_PENETRATION, 0.0, 0.0, 0.0};
      const kl_impact_out o = kl_impact(in);
      assert_int_equal(o.status, KL_OK);
      const double e = fabs(o.cr_eff - crs[ic]) / crs[ic];
      const double D = kl_kv_damping(crs[ic], in.K, in.m);
      const double r = D / (2.0 * in.m), w = sqrt(in.K / in.m - r * r);
      const double etc = fabs(o.tc - KL_PI / w) / (KL_PI / w);
      worst = fmax(worst, e);
      worst_tc = fmax(worst_tc, etc);
      if (!(e <= 3e-14)) fail_msg("cr %.2f: cr_eff %.17g", crs[ic], o.cr_eff);
      if (!(etc <= 1e-14)) fail_msg("cr %.2f: tc %.17g, pi/w %.17g", crs[ic], o.tc, KL_PI / w);
      assert_true(fabs(o.ediss - (1.0 - o.cr_eff * o.cr_eff)) <= 1e-15);
    }
  }
  printf("  cr_eff vs cr: worst %.2e relative; contact time vs pi/w: worst %.2e\n", worst, worst_tc);
}

/*------- contact end: the first-root finder -------*/

typedef struct root_case {
  const char *name;
  double m, K, Dfac, f0, f1, x0, v0;
  double al, be, g0, g1; /* phi = al x + be x' + g0 + g1 t; al = K, be = D: force rule (be from D) */
  int force_rule;
} root_case;

static const root_case rcases[] = {
  {"penetration, impact, cr=0.5", 1.0, 140e6, 0.2154, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0},
  {"penetration, pushed in (fe>0)", 1.0, 140e6, 0.1, 3e3, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0},
  {"penetration, pulled out (fe<0)", 0.2, 2e4, 0.3, -2.0, 0.0, 0.0, 0.1, 1.0, 0.0, 0.0, 0.0, 0},
  {"penetration, ramp force", 0.2, 2e4, 0.05, 1.0, -200.0, 1e-4, 0.05, 1.0, 0.0, 0.0, 0.0, 0},
  {"force rule, impact, cr=0.5", 1.0, 140e6, 0.2154, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1},
  {"force rule, over-damped x2", 1.0, 140e6, 2.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1},
  {"force rule, critical, gravity", 0.2, 2e4, 1.0, 0.2, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 0.0, 1},
  {"holder-like phi, under", 0.2, 2e4, 0.2, 0.5, 30.0, 1e-3, -0.1, 1.0, 1e-3, -2e-4, -1e-3, 0},
};
#define NRCASES (int)(sizeof rcases / sizeof rcases[0])

typedef struct phi_ctx {
  kl_kv_sys s;
  double x0, v0, al, be, g0, g1;
  /* integrator state at the left end of the bracket, for the event-time reference */
  gsl_odeiv2_driver *d;
  double ta, ya[2];
} phi_ctx;

static double phi_closed(double t, void *p)
{
  const phi_ctx *c = p;
  return kl_kv_phi(c->s, c->x0, c->v0, t, c->al, c->be, c->g0, c->g1);
}

static double phi_integrated(double t, void *p)
{
  phi_ctx *c = p;
  double tt = c->ta, y[2] = {c->ya[0], c->ya[1]};
  gsl_odeiv2_driver_reset(c->d);
  if (t > tt) gsl_odeiv2_driver_apply(c->d, &tt, t, y);
  return c->al * y[0] + c->be * y[1] + c->g0 + c->g1 * t;
}

static double brent(gsl_function *F, double a, double b)
{
  gsl_root_fsolver *so = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  gsl_root_fsolver_set(so, F, a, b);
  double r = 0.5 * (a + b);
  for (int it = 0; it < 200; ++it) {
    gsl_root_fsolver_iterate(so);
    r = gsl_root_fsolver_root(so);
    const double lo = gsl_root_fsolver_x_lower(so), hi = gsl_root_fsolver_x_upper(so);
    if (gsl_root_test_interval(lo, hi, 0.0, 4 * KL_EPS) == GSL_SUCCESS) break;
  }
  gsl_root_fsolver_free(so);
  return r;
}

/* Contact end from kl_kv_first_root against (1) Brent on the same closed form, bracketed by a uniform
 * scan of 20000 points per natural period (independent of the finder's own geometric bracketing,
 * so a skipped early root would show), tolerance 1e-14 relative (measured 6.5e-16): both converge to a few ulp of a
 * simple root; (2) the integrator's event time: the rk8pd state scanned on the same grid, the sign
 * change refined by Brent with the state integrated from the bracket's left end, tolerance 4e-14
 * relative (integrator error divided by the slope of phi at the root; measured worst 4.0e-15). */
static void test_kv_first_root(void **state)
{
  (void)state;
  gsl_set_error_handler_off();
  double worst_cf = 0, worst_ode = 0;
  for (int ic = 0; ic < NRCASES; ++ic) {
    const root_case *rc = &rcases[ic];
    phi_ctx c;
    c.s.m = rc->m;
    c.s.K = rc->K;
    c.s.D = rc->Dfac * 2.0 * sqrt(rc->K * rc->m);
    c.s.f0 = rc->f0;
    c.s.f1 = rc->f1;
    c.x0 = rc->x0;
    c.v0 = rc->v0;
    c.al = rc->force_rule ? rc->K : rc->al;
    c.be = rc->force_rule ? c.s.D : rc->be;
    c.g0 = rc->g0;
    c.g1 = rc->g1;
    const double w0 = sqrt(rc->K / rc->m), T = 200.0 / w0;
    double troot;
    const int found = kl_kv_first_root(c.s, c.x0, c.v0, c.al, c.be, c.g0, c.g1, T, &troot);
    assert_int_equal(found, 1);
    /* (1) uniform scan + Brent on the closed form */
    const int nscan = (int)(20000.0 * 200.0 / (2.0 * KL_PI));
    const double dt = T / nscan;
    /* every case starts in contact: phi(0) > 0, or phi(0) = 0 and rising (an impact at d = 0) */
    assert_true(phi_closed(0.0, &c) > 0.0 || (phi_closed(0.0, &c) == 0.0 && phi_closed(1e-3 / w0, &c) > 0.0));
    double ta = 0.0;
    int k;
    for (k = 1; k <= nscan; ++k) {
      const double fb = phi_closed(k * dt, &c);
      if (fb <= 0.0) break;
      ta = k * dt;
    }
    assert_true(k <= nscan);
    gsl_function Fc = {phi_closed, &c};
    const double tref = brent(&Fc, ta, ta + dt);
    const double e1 = fabs(troot - tref) / tref;
    /* (2) integrator event time */
    gsl_odeiv2_system sys;
    c.d = make_driver(&sys, &c.s, c.x0, c.v0, T, 0);
    double t = 0.0, y[2] = {c.x0, c.v0};
    c.ta = 0.0;
    c.ya[0] = c.x0;
    c.ya[1] = c.v0;
    for (int j = 1; j <= nscan; ++j) {
      gsl_odeiv2_driver_apply(c.d, &t, j * dt, y);
      if (c.al * y[0] + c.be * y[1] + c.g0 + c.g1 * t <= 0.0) break;
      c.ta = t;
      c.ya[0] = y[0];
      c.ya[1] = y[1];
    }
    gsl_function Fi = {phi_integrated, &c};
    const double tode = brent(&Fi, c.ta, c.ta + dt);
    gsl_odeiv2_driver_free(c.d);
    const double e2 = fabs(troot - tode) / tode;
    printf("  %-32s t_end w0 = %-9.6f vs Brent %.1e, vs integrator event %.1e\n", rc->name, troot * w0, e1, e2);
    worst_cf = fmax(worst_cf, e1);
    worst_ode = fmax(worst_ode, e2);
    if (!(e1 <= 1e-14 && e2 <= 4e-14)) fail_msg("%s: root %.17g, Brent %.17g, event %.17g", rc->name, troot, tref, tode);
  }
  /* no root: an over-damped impact never returns to d = 0 (e^{-rt} sinh(bt) > 0) within 200/w0
   * (over much longer horizons d underflows to 0 after ~1e3 slow time constants, which counts) */
  kl_kv_sys so = {1.0, 140e6, 4.0 * 2.0 * sqrt(140e6), 0.0, 0.0};
  const double Tn = 200.0 / sqrt(140e6);
  double tr;
  assert_int_equal(kl_kv_first_root(so, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, Tn, &tr), 0);
  assert_true(tr == Tn);
  printf("  worst: vs Brent on the closed form %.2e (tol 1e-14), vs integrator event %.2e (tol 4e-14)\n", worst_cf,
         worst_ode);
}

/*------- contact end under a quartic force: a resting contact is not scanned past its last root -------*/

typedef struct poly_ctx {
  double m, K, D, f[5];
} poly_ctx;

static int poly_rhs(double t, const double y[], double f[], void *params)
{
  const poly_ctx *c = params;
  const double F = c->f[0] + t * (c->f[1] + t * (c->f[2] + t * (c->f[3] + t * c->f[4])));
  f[0] = y[1];
  f[1] = (F - c->D * y[1] - c->K * y[0]) / c->m;
  return GSL_SUCCESS;
}

/* kl_kv_poly_first_root over long intervals (T = 60 natural periods) on contacts near rest under a
 * quartic force p(t) that may pull them out late, against GSL rk8pd (eps_rel 1e-12) sampled 400 times
 * per period: both must agree on whether phi reaches 0 in (0, T] and the root must lie in the
 * integrator's bracket (one grid step, widened by 1e-9 of T for the integrator's error). The finder
 * stops scanning where a bound on the transient and on p's response (kl_contact_kv.h) proves phi > 0
 * to the end; cases where p crosses that bound late (roots in the last fifth of T) fail if the bound
 * leaves p out or understates it. Under- and over-damped; penetration, force and rate-weighted phi. */
static void test_kv_poly_first_root_late(void **state)
{
  (void)state;
  gsl_set_error_handler_off();
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 4242);
  int nfound = 0, nlate = 0, nnone = 0;
  for (int ic = 0; ic < 240; ++ic) {
    poly_ctx c;
    c.m = 0.2 + gsl_rng_uniform(rng);
    c.K = 1e4 * (1.0 + 9.0 * gsl_rng_uniform(rng));
    const double w0 = sqrt(c.K / c.m), T = 60.0 * 2.0 * KL_PI / w0;
    const double zeta = ((ic / 3) % 2) ? 1.3 + 2.0 * gsl_rng_uniform(rng) : 0.05 + 0.5 * gsl_rng_uniform(rng);
    c.D = zeta * 2.0 * sqrt(c.K * c.m);
    const double xinf = 1e-3;
    c.f[0] = c.K * xinf;
    /* p at T: 0 ... 2.2 times the static load against it, mostly in the quartic term */
    const double pT = -c.f[0] * 2.2 * gsl_rng_uniform(rng);
    const double share[4] = {0.05 * gsl_rng_uniform(rng), 0.05 * gsl_rng_uniform(rng), 0.1 * gsl_rng_uniform(rng), 0};
    c.f[1] = share[0] * pT / T;
    c.f[2] = share[1] * pT / (T * T);
    c.f[3] = share[2] * pT / (T * T * T);
    c.f[4] = (1.0 - share[0] - share[1] - share[2]) * pT / (T * T * T * T);
    /* near rest: a small transient */
    const double x0 = xinf * (1.0 + 0.2 * (gsl_rng_uniform(rng) - 0.5));
    double v0 = xinf * w0 * 0.1 * (gsl_rng_uniform(rng) - 0.5);
    /* phi: the penetration x, the force K x + D x', and a rate-weighted 0.02 K x + D x' (where the
     * bound on p's effect on x' is most of the bound) */
    const int rule = ic % 3;
    const double al = rule == 0 ? 1.0 : rule == 1 ? c.K : 0.02 * c.K, be = rule == 0 ? 0.0 : c.D;
    if (rule == 2) v0 = fabs(v0); /* phi(0) > 0: every case starts in contact */
    kl_kv_poly pc = {{c.m, c.K, c.D, c.f[0], c.f[1]}, c.f[2], c.f[3], c.f[4]};
    double troot;
    const int found = kl_kv_poly_first_root(pc, x0, v0, al, be, 0.0, 0.0, T, &troot);
    /* reference */
    gsl_odeiv2_system sys = {poly_rhs, NULL, 2, &c};
    gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-3 / w0, 1e-15, 1e-12);
    const int nscan = 60 * 400;
    const double dt = T / nscan;
    double t = 0.0, y[2] = {x0, v0}, ta = -1.0;
    for (int j = 1; j <= nscan; ++j) {
      if (gsl_odeiv2_driver_apply(d, &t, j * dt, y) != GSL_SUCCESS) fail_msg("case %d: the integrator failed", ic);
      if (al * y[0] + be * y[1] <= 0.0) {
        ta = (j - 1) * dt;
        break;
      }
    }
    gsl_odeiv2_driver_free(d);
    const double slack = 1e-9 * T;
    if (ta < 0.0) {
      nnone++;
      if (found) fail_msg("case %d: a root at %.9g T where the integrator sees none", ic, troot / T);
    } else {
      nfound++;
      if (ta > 0.8 * T) nlate++;
      if (!found) fail_msg("case %d: no root found; the integrator has one in [%.9g, %.9g] T", ic, ta / T, (ta + dt) / T);
      if (!(troot >= ta - slack && troot <= ta + dt + slack))
        fail_msg("case %d: root %.12g T outside the integrator's bracket [%.12g, %.12g] T", ic, troot / T, ta / T,
                 (ta + dt) / T);
    }
  }
  gsl_rng_free(rng);
  printf("  240 cases: %d with a root (%d in the last fifth of T), %d without\n", nfound, nlate, nnone);
  assert_true(nlate >= 20 && nnone >= 20); /* both outcomes, and late roots, are exercised */
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_kv_step_vs_gsl),        cmocka_unit_test(test_kv_impulse_vs_quadrature),
    cmocka_unit_test(test_kv_regime_continuity),  cmocka_unit_test(test_kv_restitution),
    cmocka_unit_test(test_kv_first_root),        cmocka_unit_test(test_kv_poly_first_root_late),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
