/* benchmarks/maxstep/mx_ref.c: exact bounce sequences for the benchmark ball, gravity included.
 * Kelvin-Voigt contacts use the closed form of kernels/kl_impact.h with the constant external force
 * m g (paper eq. 3-4). Hunt-Crossley contacts with gravity have no closed form: they are integrated
 * with GSL's rk8pd at relative tolerance 1e-13, their peak force and ends located by golden-section
 * search and bisection on re-integrated sub-intervals; with g = 0 the same routine is checked against
 * the closed form (kl_impact, model HC), and the difference is reported. */
#include <math.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>

#include "benchmarks/maxstep/mx_eval.h"
#include "kernels/kl_impact.h"

/* Outcome of one contact from impact speed vin > 0 */
typedef struct contact {
  double vout;  /* exit speed (upwards) [m/s] */
  double xsep;  /* penetration left at separation (force rule only) [m] */
  double tc;    /* contact duration [s] */
  double fpeak; /* peak force [N] */
  double dmax;  /* maximum penetration [m] */
} contact;

//------------------------------------------------------------------------------------------------------
// Kelvin-Voigt: closed form under F_e = m g

/* one Kelvin-Voigt contact with gravity, separation rule `rule` */
static contact kv_contact(const mx_case *c, int rule, double vin, double g)
{
  kl_impact_in in = {c->m, c->K, 1.0, c->cr, vin, c->m * g, KL_MODEL_KV, 0, rule};
  const kl_impact_out o = kl_impact(in);
  contact ct = {o.cr_eff * vin, 0.0, o.tc, o.fpeak, o.dmax};
  if (rule == KL_SEP_FORCE) {
    const kl_kv_sys s = {c->m, c->K, o.damp, c->m * g, 0.0};
    ct.xsep = kl_kv_step(s, 0.0, vin, o.tc).x; /* still inside the surface where the force vanishes */
  }
  return ct;
}

//------------------------------------------------------------------------------------------------------
// Hunt-Crossley: GSL rk8pd with event location

typedef struct hc_par {
  double m, K, n, chi, g;
} hc_par;

/* force K x^n (1 + chi v) on penetration x > 0 and its rate v */
static double hc_force(const hc_par *p, double x, double v)
{
  return x > 0 ? p->K * pow(x, p->n) * (1.0 + p->chi * v) : 0.0;
}

/* m x'' = m g - F(x, x') for the penetration x */
static int hc_rhs(double t, const double y[], double dy[], void *params)
{
  (void)t;
  const hc_par *p = params;
  dy[0] = y[1];
  dy[1] = p->g - hc_force(p, y[0], y[1]) / p->m;
  return GSL_SUCCESS;
}

/* state at t0 + tau from y0 (a fresh integration: exact restarts for the searches below) */
static void hc_state(gsl_odeiv2_driver *drv, const double y0[2], double t0, double tau, double y[2])
{
  double t = t0;
  y[0] = y0[0];
  y[1] = y0[1];
  gsl_odeiv2_driver_reset(drv);
  if (tau > 0) gsl_odeiv2_driver_apply(drv, &t, t0 + tau, y);
}

/* one Hunt-Crossley contact with gravity g from impact speed vin, damping factor chi */
static contact hc_contact(const mx_case *c, double chi, double vin, double g)
{
  hc_par p = {c->m, c->K, c->n, chi, g};
  const double dm0 = kl_hc_delta_max(c->m, c->K, c->n, chi, vin);
  gsl_odeiv2_system sys = {hc_rhs, NULL, 2, &p};
  const double scale[2] = {dm0, vin};
  gsl_odeiv2_driver *drv =
      gsl_odeiv2_driver_alloc_scaled_new(&sys, gsl_odeiv2_step_rk8pd, 1e-3 * dm0 / vin, 1e-14, 1e-13, 1.0, 0.0, scale);
  const int N = 4000;
  const double dt = 3.5 * dm0 / vin / N; /* contact time ~ 2.94 dm0 / vin: the grid outlasts it */
  double y[2] = {0.0, vin}, t = 0.0;
  double yprev[2] = {0.0, vin}, tprev = 0.0;
  double ypk[2] = {0.0, vin}, tpk = 0.0, fpk = 0.0; /* grid point before the largest force */
  double ymx[2] = {0.0, vin}, tmx = 0.0;             /* grid point before v turns <= 0 */
  int found_mx = 0;
  double fbest = -1;
  int separated = 0;
  gsl_odeiv2_driver_reset(drv);
  for (int i = 1; i < 100 * N; ++i) {
    const double ti = i * dt;
    gsl_odeiv2_driver_apply(drv, &t, ti, y);
    const double f = hc_force(&p, y[0], y[1]);
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
    if (y[0] < 0) { /* separated inside (tprev, ti] */
      separated = 1;
      break;
    }
    memcpy(yprev, y, sizeof y);
    tprev = ti;
  }
  if (!separated) { /* resting contact: no exit speed */
    gsl_odeiv2_driver_free(drv);
    contact none = {0.0, 0.0, t, fbest, 0.0};
    return none;
  }
  /* separation: bisection on x over the last interval */
  double a = 0.0, b = t - tprev, ys[2];
  for (int it = 0; it < 80 && b - a > 1e-16 * t; ++it) {
    const double mid = 0.5 * (a + b);
    hc_state(drv, yprev, tprev, mid, ys);
    if (ys[0] > 0) a = mid; else b = mid;
  }
  hc_state(drv, yprev, tprev, b, ys);
  contact ct = {-ys[1], 0.0, tprev + b, 0.0, 0.0};
  /* maximum penetration: bisection on v */
  a = 0.0;
  b = 2 * dt;
  for (int it = 0; it < 80; ++it) {
    const double mid = 0.5 * (a + b);
    hc_state(drv, ymx, tmx, mid, ys);
    if (ys[1] > 0) a = mid; else b = mid;
  }
  hc_state(drv, ymx, tmx, a, ys);
  ct.dmax = ys[0];
  /* peak force: golden-section search over the two grid intervals around the largest sample */
  const double gr = 0.5 * (sqrt(5.0) - 1.0);
  a = 0.0;
  b = 2 * dt;
  double x1 = b - gr * (b - a), x2 = a + gr * (b - a), f1, f2;
  hc_state(drv, ypk, tpk, x1, ys);
  f1 = hc_force(&p, ys[0], ys[1]);
  hc_state(drv, ypk, tpk, x2, ys);
  f2 = hc_force(&p, ys[0], ys[1]);
  for (int it = 0; it < 90; ++it) {
    if (f1 < f2) {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + gr * (b - a);
      hc_state(drv, ypk, tpk, x2, ys);
      f2 = hc_force(&p, ys[0], ys[1]);
    } else {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - gr * (b - a);
      hc_state(drv, ypk, tpk, x1, ys);
      f1 = hc_force(&p, ys[0], ys[1]);
    }
  }
  fpk = fmax(fmax(f1, f2), fbest);
  ct.fpeak = fpk;
  gsl_odeiv2_driver_free(drv);
  return ct;
}

//------------------------------------------------------------------------------------------------------

/* one contact of case c in reference mode `mode` from impact speed vin */
static contact one_contact(const mx_case *c, int mode, double vin, double g)
{
  switch (mode) {
  case MX_REF_KV_PEN: return kv_contact(c, KL_SEP_PENETRATION, vin, g);
  case MX_REF_KV_FORCE: return kv_contact(c, KL_SEP_FORCE, vin, g);
  case MX_REF_HC_LAW: return hc_contact(c, kl_hc_chi(c->law, c->cr, vin), vin, g);
  case MX_REF_HC_FIXED: return hc_contact(c, c->chi, vin, g);
  default: {
    contact ct = {c->cr * vin, 0.0, 0.0, 0.0, 0.0};
    return ct;
  }
  }
}

/* the exact bounce sequence of case c in reference mode `mode` (mx_eval.h) */
void mx_ref_build(const mx_case *c, int mode, double t_until, mx_ref *r)
{
  memset(r, 0, sizeof *r);
  r->mode = mode;
  gsl_set_error_handler_off();
  const double g = c->g;
  const double v1 = sqrt(2.0 * g * c->z0);
  /* first contact: the force and penetration references of every row (rigid rows get the
   * Kelvin-Voigt values: the contact their impulse stands for) */
  const int fmode = (mode == MX_REF_RIGID) ? MX_REF_KV_PEN : mode;
  const contact c1 = one_contact(c, fmode, v1, g);
  r->fpeak = c1.fpeak;
  r->dmax = c1.dmax;
  r->tc = c1.tc;
  kl_impact_in in = {c->m, c->K, c->n, c->cr, v1, 0.0, c->model == MX_HC ? KL_MODEL_HC : KL_MODEL_KV,
                     c->law, KL_SEP_PENETRATION};
  if (mode == MX_REF_HC_FIXED) { /* the fixed chi is the law's chi at v1: same first contact */
    in.law = c->law;
  }
  const kl_impact_out o0 = kl_impact(in);
  r->fpeak_nog = o0.fpeak;
  r->dmax_nog = o0.dmax;
  if (c->model == MX_HC) {
    const contact cg0 = one_contact(c, fmode, v1, 0.0);
    r->gsl_check = fabs(cg0.fpeak - o0.fpeak) / o0.fpeak;
  }
  /* the sequence: fall, contact, flight to the apex, fall, ... */
  double t = sqrt(2.0 * c->z0 / g), vin = v1;
  contact ct = (mode == fmode) ? c1 : one_contact(c, mode, v1, g); /* Newton rows: a rigid first bounce */
  while (r->n < MX_REF_MAX) {
    const double apex = ct.vout * ct.vout / (2.0 * g) - ct.xsep;
    const double tap = t + ct.tc + ct.vout / g;
    if (!(apex > 1e-5) || tap > t_until) break; /* 10 um: far below the checked 1 cm */
    r->apex[r->n] = apex;
    r->tapex[r->n] = tap;
    r->n++;
    t = tap + sqrt(2.0 * apex / g);
    vin = sqrt(2.0 * g * apex);
    ct = one_contact(c, mode, vin, g);
  }
}
