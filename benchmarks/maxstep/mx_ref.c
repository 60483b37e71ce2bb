/* benchmarks/maxstep/mx_ref.c: the independent exact bounce sequences of the benchmark ball, gravity
 * included (README.md here, "Exact references").
 *
 * Every contact -- Kelvin-Voigt and Hunt-Crossley, either separation rule -- is integrated with GSL's
 * rk8pd at relative tolerance 1e-13 as the 1-D ODE  m x'' = m g - F(x, x')  of the penetration x, with
 * its own parameters written out here (paper eq. 10 for D, the Hunt-Crossley law for chi): nothing of
 * kelvin's closed forms or contact code enters it. The contact end (x = 0, or F = 0 for the no-tension
 * rule), the maximum penetration (x' = 0) and the peak force are located by bisection and golden-section
 * search on fresh re-integrations from the grid point before them. Flights between contacts are exact
 * parabolas. kelvin's closed form (kl_impact, kernels/kl_impact.h) is evaluated only as a second,
 * labelled reference: the largest difference between the two sequences is reported beside them. */
#include <math.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <gsl/gsl_roots.h>

#include "benchmarks/maxstep/mx_eval.h"
#include "kernels/kl_impact.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Outcome of one contact from impact speed vin > 0 */
typedef struct contact {
  double vout;  /* exit speed (upwards) [m/s]; 0 if the ball stays in contact */
  double xsep;  /* penetration left at separation (no-tension rule) [m] */
  double tc;    /* contact duration [s] */
  double fpeak; /* peak force [N] */
  double dmax;  /* maximum penetration [m] */
} contact;

/* the contact law of one impact */
typedef struct law {
  double m, K, n; /* mass, stiffness, exponent */
  int hc;         /* 0: F = K x + D x'; 1: F = K x^n (1 + chi x') */
  double damp;    /* D [N s/m] or chi [s/m] */
  int force_rule; /* contact ends at F = 0 (no tension) instead of x = 0 */
  double g;       /* gravity pushing into the contact [m/s^2] */
} law;

/* paper eq. (10), written out: D = -2 ln(cr) sqrt(m K) / sqrt(pi^2 + ln^2 cr) */
static double eq10_damping(double cr, double K, double m)
{
  const double l = log(cr);
  return -2.0 * l * sqrt(m * K) / sqrt(M_PI * M_PI + l * l);
}

/* the Hunt-Crossley damping law, written out: chi = 3 (1 - cr) / (2 v_in) */
static double hc_law_chi(double cr, double vin) { return 1.5 * (1.0 - cr) / vin; }

/* contact force at penetration x > 0 and rate v (no clipping: the tension of the paper's rule) */
static double force(const law *p, double x, double v)
{
  if (!(x > 0)) return 0.0;
  return p->hc ? p->K * pow(x, p->n) * (1.0 + p->damp * v) : p->K * x + p->damp * v;
}

/* m x'' = m g - F(x, x') */
static int rhs(double t, const double y[], double dy[], void *params)
{
  (void)t;
  const law *p = params;
  dy[0] = y[1];
  dy[1] = p->g - force(p, y[0], y[1]) / p->m;
  return GSL_SUCCESS;
}

/* state at t0 + tau from y0 (a fresh integration: exact restarts for the searches) */
static void state_at(gsl_odeiv2_driver *drv, const double y0[2], double t0, double tau, double y[2])
{
  double t = t0;
  y[0] = y0[0];
  y[1] = y0[1];
  gsl_odeiv2_driver_reset(drv);
  if (tau > 0) gsl_odeiv2_driver_apply(drv, &t, t0 + tau, y);
}

/* the event that ends the contact: x (penetration rule) or F (no-tension rule); <= 0 = ended */
static double end_fn(const law *p, const double y[2]) { return p->force_rule ? force(p, y[0], y[1]) : y[0]; }

/* one contact from impact speed vin by rk8pd at 1e-13 with event location */
static contact gsl_contact(const law *p, double vin)
{
  /* time and length scales: the undamped linear period, or the Hertz impact's */
  double T, X;
  if (!p->hc) {
    T = M_PI * sqrt(p->m / p->K);
    X = vin * sqrt(p->m / p->K);
  } else {
    X = pow((p->n + 1.0) * p->m * vin * vin / (2.0 * p->K), 1.0 / (p->n + 1.0)); /* undamped dmax */
    T = 3.0 * X / vin;
  }
  gsl_odeiv2_system sys = {rhs, NULL, 2, (void *)p};
  const double scale[2] = {X, vin};
  gsl_odeiv2_driver *drv =
      gsl_odeiv2_driver_alloc_scaled_new(&sys, gsl_odeiv2_step_rk8pd, 1e-4 * T, 1e-14, 1e-13, 1.0, 0.0, scale);
  const int N = 4000;
  const double dt = 1.2 * T / N;
  double y[2] = {0.0, vin}, t = 0.0;
  double yprev[2] = {0.0, vin}, tprev = 0.0;
  double ypk[2] = {0.0, vin}, tpk = 0.0; /* grid point before the largest force */
  double ymx[2] = {0.0, vin}, tmx = 0.0; /* grid point before x' turns <= 0 */
  int found_mx = 0, ended = 0;
  double fbest = -1;
  gsl_odeiv2_driver_reset(drv);
  for (int i = 1; i < 200 * N; ++i) {
    gsl_odeiv2_driver_apply(drv, &t, i * dt, y);
    const double f = force(p, y[0], y[1]);
    if (f > fbest) {
      fbest = f;
      memcpy(ypk, yprev, sizeof ypk);
      tpk = tprev;
    }
    if (!found_mx && y[1] <= 0) {
      memcpy(ymx, yprev, sizeof ymx);
      tmx = tprev;
      found_mx = 1;
    }
    if (end_fn(p, y) <= 0) {
      ended = 1;
      break;
    }
    memcpy(yprev, y, sizeof y);
    tprev = t;
  }
  contact ct = {0.0, 0.0, t, fbest, 0.0};
  double ys[2], a, b;
  if (found_mx) { /* maximum penetration: bisection on x' */
    a = 0.0;
    b = dt;
    for (int it = 0; it < 200 && b - a > 1e-18; ++it) {
      const double mid = 0.5 * (a + b);
      state_at(drv, ymx, tmx, mid, ys);
      if (ys[1] > 0) a = mid; else b = mid;
    }
    state_at(drv, ymx, tmx, a, ys);
    ct.dmax = ys[0];
  }
  /* peak force: golden section over the two grid intervals around the largest sample */
  const double gr = 0.5 * (sqrt(5.0) - 1.0);
  a = 0.0;
  b = 2 * dt;
  double x1 = b - gr * (b - a), x2 = a + gr * (b - a), f1, f2;
  state_at(drv, ypk, tpk, x1, ys);
  f1 = force(p, ys[0], ys[1]);
  state_at(drv, ypk, tpk, x2, ys);
  f2 = force(p, ys[0], ys[1]);
  for (int it = 0; it < 90 && b - a > 1e-18; ++it) {
    if (f1 < f2) {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + gr * (b - a);
      state_at(drv, ypk, tpk, x2, ys);
      f2 = force(p, ys[0], ys[1]);
    } else {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - gr * (b - a);
      state_at(drv, ypk, tpk, x1, ys);
      f1 = force(p, ys[0], ys[1]);
    }
  }
  ct.fpeak = fmax(fmax(f1, f2), fbest);
  if (ended) { /* the end: bisection on the event function over the last grid interval */
    a = 0.0;
    b = t - tprev;
    for (int it = 0; it < 200 && b - a > 1e-18; ++it) {
      const double mid = 0.5 * (a + b);
      state_at(drv, yprev, tprev, mid, ys);
      if (end_fn(p, ys) > 0) a = mid; else b = mid;
    }
    state_at(drv, yprev, tprev, b, ys);
    ct.tc = tprev + b;
    ct.vout = -ys[1];
    ct.xsep = p->force_rule ? fmax(ys[0], 0.0) : 0.0;
  }
  gsl_odeiv2_driver_free(drv);
  return ct;
}

/* the law of contact number k of case c in reference mode `mode` from impact speed vin */
static law law_of(const mx_case *c, int mode, double vin, double g)
{
  law p = {c->m, c->K, c->n, c->model == MX_HC, 0.0, 0, g};
  switch (mode) {
  case MX_REF_KV_FORCE:
    p.force_rule = 1;
    /* fall through */
  case MX_REF_KV_PEN:
  case MX_REF_RIGID: p.damp = eq10_damping(c->cr, c->K, c->m); break;
  case MX_REF_HC_LAW: p.damp = hc_law_chi(c->cr, vin); break;
  case MX_REF_HC_FIXED: p.damp = hc_law_chi(c->cr, sqrt(2.0 * c->g * c->z0)); break; /* the first impact's */
  default: break;
  }
  if (c->cr == 1.0 && !p.hc) p.damp = 0.0; /* eq. (10) at cr = 1 (ln 1 = 0), exactly */
  return p;
}

/* one contact of case c in reference mode `mode` from impact speed vin (GSL) */
static contact one_contact(const mx_case *c, int mode, double vin, double g)
{
  if (mode == MX_REF_RIGID) {
    const contact ct = {c->cr * vin, 0.0, 0.0, 0.0, 0.0};
    return ct;
  }
  const law p = law_of(c, mode, vin, g);
  return gsl_contact(&p, vin);
}

/* the same contact from kelvin's closed form (kl_impact): the second, labelled reference */
static contact cf_contact(const mx_case *c, int mode, double vin, double g)
{
  if (mode == MX_REF_RIGID) return one_contact(c, mode, vin, g);
  const int hc = (mode == MX_REF_HC_LAW || mode == MX_REF_HC_FIXED);
  const double fe = hc ? 0.0 : c->m * g; /* no closed form for Hunt-Crossley under gravity */
  const double v0 = (mode == MX_REF_HC_FIXED) ? sqrt(2.0 * c->g * c->z0) : vin;
  kl_impact_in in = {c->m, c->K, c->n, c->cr, v0, fe, hc ? KL_MODEL_HC : KL_MODEL_KV, c->law,
                     mode == MX_REF_KV_FORCE ? KL_SEP_FORCE : KL_SEP_PENETRATION, 0.0, 0.0, 0.0};
  const kl_impact_out o = kl_impact(in);
  contact ct = {o.cr_eff * v0, 0.0, o.tc, o.fpeak, o.dmax};
  if (mode == MX_REF_HC_FIXED) ct.vout = o.cr_eff * vin; /* not exact: chi fixed at v0 (rows not compared) */
  if (mode == MX_REF_KV_FORCE) {
    const kl_kv_sys s = {c->m, c->K, o.damp, c->m * g, 0.0};
    ct.xsep = kl_kv_step(s, 0.0, vin, o.tc).x;
  }
  return ct;
}

/* the apexes (and times) after successive contacts from a first impact at v1, up to t_until */
static int sequence(const mx_case *c, int mode, double t_until, contact (*one)(const mx_case *, int, double, double),
                    const contact *first, double *apex, double *tapex)
{
  const double g = c->g;
  double t = sqrt(2.0 * c->z0 / g);
  contact ct = *first;
  int n = 0;
  while (n < MX_REF_MAX) {
    const double a = ct.vout * ct.vout / (2.0 * g) - ct.xsep;
    const double tap = t + ct.tc + ct.vout / g;
    if (!(a > 1e-5) || tap > t_until) break; /* 10 um: far below the checked 1 cm */
    apex[n] = a;
    if (tapex) tapex[n] = tap;
    n++;
    t = tap + sqrt(2.0 * a / g);
    ct = one(c, mode, sqrt(2.0 * g * a), g);
  }
  return n;
}

/* restitution (exit / impact speed) of a no-tension Kelvin-Voigt contact with damping D, no gravity */
static double noten_cr(double D, void *params)
{
  const mx_case *c = params;
  const law p = {c->m, c->K, 1.0, 0, D, 1, 0.0};
  const double v = sqrt(2.0 * c->g * c->z0);
  return gsl_contact(&p, v).vout / v - c->cr;
}

/* the damping with which a no-tension Kelvin-Voigt contact restitutes cr (Brent's method) */
static double noten_damping(const mx_case *c)
{
  if (c->model != MX_KV || c->cr >= 1.0) return 0.0;
  gsl_function F = {noten_cr, (void *)c};
  gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  /* eq. (10)'s D restitutes more than cr without tension (0.808 for 0.8): the root lies above it */
  double lo = eq10_damping(c->cr, c->K, c->m), hi = 4.0 * lo, D = lo;
  gsl_root_fsolver_set(s, &F, lo, hi);
  for (int it = 0; it < 100; ++it) {
    gsl_root_fsolver_iterate(s);
    D = gsl_root_fsolver_root(s);
    lo = gsl_root_fsolver_x_lower(s);
    hi = gsl_root_fsolver_x_upper(s);
    if (gsl_root_test_interval(lo, hi, 0.0, 1e-12) == GSL_SUCCESS) break;
  }
  gsl_root_fsolver_free(s);
  return D;
}

/* the exact sequence of case c in reference mode `mode` (mx_eval.h) */
void mx_ref_build(const mx_case *c, int mode, double t_until, mx_ref *r)
{
  memset(r, 0, sizeof *r);
  r->mode = mode;
  gsl_set_error_handler_off();
  const double g = c->g;
  const double v1 = sqrt(2.0 * g * c->z0);
  /* first contact: the force and penetration references of every row (rigid rows get the
   * Kelvin-Voigt values of the paper's rule: the contact their impulse stands for) */
  const int fmode = (mode == MX_REF_RIGID) ? MX_REF_KV_PEN : mode;
  const contact c1 = one_contact(c, fmode, v1, g);
  r->fpeak = c1.fpeak;
  r->dmax = c1.dmax;
  r->tc = c1.tc;
  const contact c0 = one_contact(c, fmode, v1, 0.0);
  r->fpeak_nog = c0.fpeak;
  r->dmax_nog = c0.dmax;
  r->D_noten = noten_damping(c);
  const contact s1 = (mode == fmode) ? c1 : one_contact(c, mode, v1, g); /* Newton rows: a rigid first bounce */
  r->n = sequence(c, mode, t_until, one_contact, &s1, r->apex, r->tapex);

  /* the closed form, second reference: with gravity for Kelvin-Voigt; Hunt-Crossley only at g = 0
   * (first contact) since it has no closed form under gravity */
  const int hc = (fmode == MX_REF_HC_LAW || fmode == MX_REF_HC_FIXED);
  r->cf_diff = 0.0;
  if (!hc) {
    const contact k1 = cf_contact(c, fmode, v1, g);
    r->cf_diff = fmax(fabs(k1.fpeak / c1.fpeak - 1), fabs(k1.dmax / c1.dmax - 1));
    const contact ks1 = (mode == fmode) ? k1 : cf_contact(c, mode, v1, g);
    double apex[MX_REF_MAX];
    const int n = sequence(c, mode, t_until, cf_contact, &ks1, apex, NULL);
    for (int k = 0; k < n && k < r->n; ++k)
      if (r->apex[k] > 0.01) r->cf_diff = fmax(r->cf_diff, fabs(apex[k] / r->apex[k] - 1));
    r->cf_n = n;
  } else {
    const contact k0 = cf_contact(c, fmode, v1, 0.0);
    r->cf_diff = fmax(fabs(k0.fpeak / c0.fpeak - 1), fabs(k0.dmax / c0.dmax - 1));
    r->cf_n = -1;
  }
}
