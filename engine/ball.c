/* engine/ball.c: sphere on a plane under gravity, variable time step (see ball.h).
 * Coordinates: z is the height of the sphere's lowest point, positive up; in contact the penetration
 * x = -z and its rate v = -vz obey m x'' = m g - F(x, v) (paper eq. 3 with F_e = m g). */
#include "engine/ball.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kl_impact.h"
#include "kernels/kl_xrb.h"

void kl_ball_default(kl_ball_model *m)
{
  m->m = 1.0;
  m->R = 0.1;
  m->g = 9.81;
  m->K = 140e6;
  m->n = 1.0;
  m->cr = 1.0;
  m->model = KL_MODEL_KV;
  m->law = KL_LAW_HUNT_CROSSLEY;
  m->rule = KL_SEP_PENETRATION;
  m->tol = 1e-9;
  m->gen.k = m->K;
  m->gen.c = 0.0;
  m->gen.n1 = m->n;
  m->gen.n2 = m->n;
  m->gen.m = 1.0;
}

kelvin_status kl_ball_check(const kl_ball_model *m, char *msg, int cap)
{
#define BAD(...)                                                                                             \
  do {                                                                                                       \
    snprintf(msg, (size_t)cap, __VA_ARGS__);                                                                 \
    return KELVIN_ERR_ARG;                                                                                   \
  } while (0)
  if (!(isfinite(m->m) && m->m > 0)) BAD("mass: must be > 0 kg, got %g", m->m);
  if (!(isfinite(m->R) && m->R > 0)) BAD("radius: must be > 0 m, got %g", m->R);
  if (!(isfinite(m->g) && m->g >= 0)) BAD("gravity: must be >= 0 m/s^2, got %g", m->g);
  if (!(isfinite(m->K) && m->K > 0)) BAD("stiffness: must be > 0, got %g", m->K);
  if (!(isfinite(m->cr) && m->cr > 0 && m->cr <= 1)) BAD("cr: must be in (0, 1], got %g", m->cr);
  if ((m->model < 0 || m->model >= KL_NMODELS) && m->model != KL_MODEL_GEN) BAD("model: unknown model code %d", m->model);
  if (m->law < 0 || m->law >= KL_NLAWS) BAD("law: unknown damping law code %d", m->law);
  if (m->rule != KL_SEP_PENETRATION && m->rule != KL_SEP_FORCE) BAD("separation: unknown rule %d", m->rule);
  if (m->model == KL_MODEL_KV && m->n != 1.0) BAD("exponent: Kelvin-Voigt is linear (n = 1), got %g", m->n);
  if (m->model == KL_MODEL_GEN) {
    /* the general law (kernels/kl_contact_gen.h): K is k, n is n1 */
    kl_gen_law L = m->gen;
    L.k = m->K;
    L.n1 = m->n;
    char w[160];
    if (kl_gen_law_bad(L, w, sizeof w)) BAD("general law: %s", w);
  } else if (!(isfinite(m->n) && m->n >= 1 && m->n <= 3)) {
    BAD("exponent: must be in [1, 3], got %g", m->n);
  }
  if (!(isfinite(m->tol) && m->tol >= 1e-14 && m->tol <= 1e-2)) BAD("tolerance: must be in [1e-14, 1e-2], got %g", m->tol);
  return KELVIN_OK;
#undef BAD
}

void kl_ball_reset(const kl_ball_model *m, kl_ball_data *d, double z0, double vz0)
{
  (void)m;
  memset(d, 0, sizeof *d);
  d->z = z0;
  d->vz = vz0;
  d->phase = KL_BALL_FREE;
}

//------------------------------------------------------------------------------------------------------
// logs

static void log_apex(kl_ball_data *d, double t, double z)
{
  if (d->napex < KL_BALL_MAXLOG) {
    d->apex[d->napex] = z;
    d->apex_t[d->napex] = t;
    d->napex++;
  } else {
    d->apex_overflow++;
  }
}

static void log_contact(kl_ball_data *d)
{
  if (d->ncontact < KL_BALL_MAXLOG)
    d->contact[d->ncontact++] = d->cur;
  else
    d->contact_overflow++;
}

//------------------------------------------------------------------------------------------------------
// contact force law on the current contact

/* stiffness of the current phase: the Emden-Fowler reading restitutes with cr^2 K (kl_contact_hc.h) */
static double stiffness(const kl_ball_model *m, const kl_ball_data *d)
{
  return (m->model == KL_MODEL_EF && d->restitution) ? m->cr * m->cr * m->K : m->K;
}

/* the general law of the model: k = K, n1 = n, the rest from m->gen */
static kl_gen_law gen_law(const kl_ball_model *m)
{
  kl_gen_law L = m->gen;
  L.k = m->K;
  L.n1 = m->n;
  return L;
}

/* F(x, v) of the current contact; x > 0 penetration, v its rate (kernels/: the one contact law) */
static double force(const kl_ball_model *m, const kl_ball_data *d, double x, double v)
{
  if (m->model == KL_MODEL_KV) return kl_kv_force(m->K, d->damp, x, v);
  if (m->model == KL_MODEL_GEN) return kl_gen_force_in(gen_law(m), x, v);
  return kl_hc_force(stiffness(m, d), m->n, d->damp, x, v);
}

double kl_ball_force(const kl_ball_model *m, const kl_ball_data *d)
{
  if (d->phase != KL_BALL_CONTACT) return 0.0;
  return force(m, d, -d->z, -d->vz);
}

double kl_ball_energy(const kl_ball_model *m, const kl_ball_data *d)
{
  double e = 0.5 * m->m * d->vz * d->vz + m->m * m->g * d->z;
  const double x = -d->z;
  if (d->phase == KL_BALL_CONTACT && x > 0) e += stiffness(m, d) * pow(x, m->n + 1.0) / (m->n + 1.0); /* general: k d^n1 */
  return e;
}

//------------------------------------------------------------------------------------------------------
// free flight: exact ballistic motion, exact time of impact (a quadratic)

/* advance the ballistic state by tau */
static void fly(const kl_ball_model *m, kl_ball_data *d, double tau)
{
  d->z += d->vz * tau - 0.5 * m->g * tau * tau;
  d->vz -= m->g * tau;
  d->t += tau;
}

/* time until the lowest point reaches the plane moving down, from z >= 0; INFINITY if never */
static double time_to_plane(const kl_ball_model *m, double z, double vz)
{
  if (m->g == 0 && z == 0 && vz == 0) return INFINITY; /* at rest, touching, nothing pressing it in */
  if (z <= 0 && vz <= 0) return 0.0;
  if (m->g == 0) return vz < 0 ? z / -vz : INFINITY;
  const double sq = sqrt(vz * vz + 2.0 * m->g * z);
  /* positive root of z + vz t - g t^2/2 = 0 without cancellation */
  return vz >= 0 ? (vz + sq) / m->g : 2.0 * z / (sq - vz);
}

static void begin_contact(const kl_ball_model *m, kl_ball_data *d)
{
  d->phase = KL_BALL_CONTACT;
  d->restitution = 0;
  d->pend = 0;
  const double vin = -d->vz;
  memset(&d->cur, 0, sizeof d->cur);
  d->cur.t0 = d->t;
  d->cur.v_in = vin;
  if (m->model == KL_MODEL_KV) {
    d->damp = kl_kv_damping(m->cr, m->K, m->m);
  } else if (m->model == KL_MODEL_HC) {
    d->damp = vin > 0 ? kl_hc_chi(m->law, m->cr, vin) : 0.0;
  } else {
    d->damp = 0.0;
  }
  if (m->model != KL_MODEL_KV) {
    /* first sub-step: 1/100 of the contact time of the closed form without gravity, or shorter where the
     * step's error estimate for the start of the force, -K (v t)^n, would exceed the tolerance: in the
     * rate it is about 0.2 K v^n h^{n+1} / m (the response to the misfit of the cubic to t^n), against
     * tol v */
    const double v = vin > 0 ? vin : sqrt(2.0 * m->g * 1e-6);
    const double dmax = kl_hc_delta_max(m->m, m->K, m->n, d->damp, v);
    d->xscale = fmax(dmax, 1e-12);
    const double hacc = pow(m->tol * m->m / (0.2 * m->K * pow(v, m->n - 1.0)), 1.0 / (m->n + 1.0));
    d->h = fmin(0.03 * dmax / v, hacc);
    d->hend = hacc;
  }
}

/* free flight until the output instant or contact onset */
static void free_step(const kl_ball_model *m, kl_ball_data *d, double T)
{
  if (d->z < 0) {
    /* inside the surface after a no-tension (force-rule) separation: contact resumes where
     * phi = K x + D v turns positive while x > 0; otherwise the ball leaves through z = 0 */
    const double K = m->K, D = d->damp, g = m->g;
    const double c0 = -K * d->z - D * d->vz, c1 = -K * d->vz + D * g, c2 = 0.5 * K * g;
    if (c0 > 0) {
      begin_contact(m, d);
      return;
    }
    /* ascending exit through z = 0: root of z + vz t - g t^2 / 2 */
    double t_up = INFINITY;
    if (d->vz > 0) {
      const double sq = sqrt(d->vz * d->vz + 2.0 * g * d->z); /* z < 0: sq < vz */
      if (isfinite(sq)) t_up = (g > 0) ? 2.0 * -d->z / (d->vz + sq) : -d->z / d->vz;
    }
    /* phi(t) = c0 + c1 t + c2 t^2 with c0 <= 0, c2 >= 0: the larger root is where it turns positive */
    double t_phi = INFINITY;
    const double disc = c1 * c1 - 4.0 * c2 * c0;
    if (c2 > 0 && disc >= 0) {
      const double q = -0.5 * (c1 - sqrt(disc)); /* c1 - sqrt <= 0 */
      t_phi = (q > 0) ? q / c2 : c0 / q;
      if (!(t_phi > 0)) t_phi = (q != 0) ? c0 / q : INFINITY;
    } else if (c2 == 0 && c1 > 0) {
      t_phi = -c0 / c1;
    }
    const double tau = fmin(fmin(t_up, t_phi), T);
    fly(m, d, tau);
    d->nsub++;
    if (tau == t_phi && t_phi <= t_up) {
      begin_contact(m, d);
    } else if (tau == t_up) {
      d->z = 0.0;
    }
    return;
  }
  const double tstar = time_to_plane(m, d->z, d->vz);
  const double tau = fmin(tstar, T);
  if (d->vz > 0 && m->g > 0) { /* apex inside this flight: exact */
    const double ta = d->vz / m->g;
    if (ta <= tau) log_apex(d, d->t + ta, d->z + d->vz * d->vz / (2.0 * m->g));
  }
  if (tstar <= T) {
    fly(m, d, tstar);
    d->z = 0.0; /* the impact is exactly on the plane */
    d->nsub++;
    begin_contact(m, d);
  } else {
    fly(m, d, T);
    d->nsub++;
  }
}

//------------------------------------------------------------------------------------------------------
// contact: closed form (Kelvin-Voigt) or exponential sub-steps of kernels/kl_xrb.h (nonlinear)

/* track max penetration and peak force of a sub-step of the linear system s from (x, v) over tau:
 * end points, the root of v (max penetration) and the root of dF/dt of the linear force
 * F = c + Kf x + Df v (with m x'' = f0 - D x' - K x) */
static void track_extrema(const kl_ball_model *m, kl_ball_data *d, kl_kv_sys s, double x, double v,
                          double tau, double Kf, double Df)
{
  kl_kv_out e = kl_kv_step(s, x, v, tau);
  /* the extremes of an impact come within its first oscillation (constant forcing, decaying
   * transient): past four natural periods of the contact only the end points are looked at */
  const double young = d->cur.t0 + 8.0 * KL_PI * sqrt(s.m / fmax(s.K, 1e-300)) - d->t;
  if (young < tau) tau = young > 0 ? young : 0.0;
  if (!(tau > 0)) {
    d->cur.dmax = fmax(d->cur.dmax, fmax(x, e.x));
    d->cur.fpeak = fmax(d->cur.fpeak, fmax(force(m, d, x, v), force(m, d, e.x, e.v)));
    return;
  }
  d->cur.dmax = fmax(d->cur.dmax, fmax(x, e.x));
  d->cur.fpeak = fmax(d->cur.fpeak, fmax(force(m, d, x, v), force(m, d, e.x, e.v)));
  double tr;
  if (v > 0 && kl_kv_first_root(s, x, v, 0.0, 1.0, 0.0, 0.0, tau, &tr)) {
    const kl_kv_out o = kl_kv_step(s, x, v, tr);
    d->cur.dmax = fmax(d->cur.dmax, o.x);
  }
  /* dF/dt = Kf v + Df a, a = (f0 - D v - K x)/m: al x + be v + g0 */
  const double al = -Df * s.K / s.m, be = Kf - Df * s.D / s.m, g0 = Df * s.f0 / s.m;
  if (al * x + be * v + g0 > 0 && kl_kv_first_root(s, x, v, al, be, g0, 0.0, tau, &tr)) {
    const kl_kv_out o = kl_kv_step(s, x, v, tr);
    d->cur.fpeak = fmax(d->cur.fpeak, force(m, d, o.x, o.v));
  }
}

static void end_contact(kl_ball_data *d, double x, double v)
{
  d->phase = KL_BALL_FREE;
  d->z = -x;
  d->vz = -v;
  d->cur.t1 = d->t;
  d->cur.v_out = -v;
  log_contact(d);
}

/* Kelvin-Voigt: one exact sub-step to the end of contact or the output instant */
static void contact_kv(const kl_ball_model *m, kl_ball_data *d, double T)
{
  const kl_kv_sys s = {m->m, m->K, d->damp, m->m * m->g, 0.0};
  const double x = -d->z, v = -d->vz;
  double te;
  const int ended = (m->rule == KL_SEP_FORCE) ? kl_kv_first_root(s, x, v, m->K, d->damp, 0.0, 0.0, T, &te)
                                              : kl_kv_first_root(s, x, v, 1.0, 0.0, 0.0, 0.0, T, &te);
  const double tau = ended ? te : T;
  track_extrema(m, d, s, x, v, tau, m->K, d->damp);
  const kl_kv_out o = kl_kv_step(s, x, v, tau);
  d->nsub++;
  d->cur.nsub++;
  d->t += tau;
  if (ended) {
    end_contact(d, o.x, o.v);
  } else {
    d->z = -o.x;
    d->vz = -o.v;
  }
}

/* the force and its tangent at (x, v): kl_hc_tangent, or the general law's bounded tangents
 * (kl_gen_lin_tangent: taken at d >= 1e-6 of the contact's depth scale and |d'| >= 1e-3 of the impact speed) */
static double tangent(const kl_ball_model *m, const kl_ball_data *d, double x, double v, double *kt, double *ct)
{
  if (m->model == KL_MODEL_GEN) {
    const double vin = d->cur.v_in > 0 ? d->cur.v_in : 1e-3;
    return kl_gen_lin_tangent(gen_law(m), x, v, 1e-6 * d->xscale, 1e-3 * vin, kt, ct);
  }
  return kl_hc_tangent(stiffness(m, d), m->n, d->damp, x, v, kt, ct);
}

/* the contact force linearised about (x0, v0) as a kl_kv_sys, m x'' = m g - F(x, v) ~ f0 - Kt x - Dt v
 * (the tangent of kernels/kl_contact_hc.h, docs/design.md section 2.3); F0 receives F(x0, v0) */
static kl_kv_sys linearise(const kl_ball_model *m, const kl_ball_data *d, double x0, double v0, double *F0)
{
  double kt, ct;
  *F0 = tangent(m, d, x0, v0, &kt, &ct);
  const kl_kv_sys s = {m->m, kt, ct, m->m * m->g - *F0 + kt * x0 + ct * v0, 0.0};
  return s;
}

/* the remainder of the linearisation s (about (x0, v0), force F0 there) at (x, v): the true force
 * m g - F(x, v) less the linear one (kernels/kl_xrb.h) */
static double lin_rest(const kl_ball_model *m, const kl_ball_data *d, kl_kv_sys s, double F0, double x0,
                        double v0, double x, double v)
{
  return F0 - force(m, d, x, v) + s.K * (x - x0) + s.D * (v - v0);
}

/* the rate of that remainder along a solution passing (x, v): kl_xrb_rate with the true force's tangent */
static double lin_rest_rate(const kl_ball_model *m, const kl_ball_data *d, kl_kv_sys s, double x, double v)
{
  double kt, ct;
  const double F = tangent(m, d, x, v, &kt, &ct);
  return kl_xrb_rate(s, v, m->g - F / m->m, -kt, -ct, 0.0);
}

/* one nonlinear sub-step from the current state (d->t, x = -z, v = -vz) by the exponential Rosenbrock
 * step (kernels/kl_xrb.h) under error control; separation (x <= 0) and, for Emden-Fowler, maximum
 * penetration (v <= 0, where the restoring law takes over) end it where they occur, located on its
 * dense output. The sub-step becomes the pending one (d->pend); its extrema go into the contact log. */
static void take_step(const kl_ball_model *m, kl_ball_data *d)
{
  const double x = -d->z, v = -d->vz;
  const double vin = d->cur.v_in > 0 ? d->cur.v_in : 1e-3;
  const double xs = fmax(d->xscale, fabs(x));
  /* speed scale: the impact speed, or the speed of the linearised oscillation of amplitude xs */
  const double vs = fmax(fmax(vin, fabs(v)), sqrt(m->n * stiffness(m, d) * kl_pown(xs, m->n + 1.0) / m->m));
  const double hmin = 1e-15 * (1.0 + d->t);
  double F0;
  const kl_kv_sys s = linearise(m, d, x, v, &F0);
  double h = d->h, hnext = d->h;
  /* leaving: the force's t^n singularity at separation, time x/|v| ahead, sets the step as at the start
   * (mirrored): half that time per step, and once it is as near as the first step was long, straight
   * to it (the step is then taken again to land on it) */
  if (v < 0 && x > 0) {
    const double tsep = x / -v;
    h = tsep < d->hend ? 2.0 * tsep : fmin(h, fmax(0.5 * tsep, d->hend));
  }
  int landing = 0;
  kl_kv_poly dense;
  kl_kv_out fin;
  double te = 0.0;
  int ev = 0;
  for (;;) {
    kl_xrb w;
    const kl_kv_out u2 = kl_xrb_begin(&w, s, x, v, h);
    const kl_kv_out u3 = kl_xrb_stage3(&w, lin_rest(m, d, s, F0, x, v, u2.x, u2.v));
    const kl_kv_out x3 = kl_xrb_order4(&w, lin_rest(m, d, s, F0, x, v, u3.x, u3.v));
    const kl_kv_out xm = kl_xrb_mid(&w);
    kl_kv_out er;
    fin = kl_xrb_end(&w, lin_rest(m, d, s, F0, x, v, xm.x, xm.v), lin_rest(m, d, s, F0, x, v, x3.x, x3.v),
                     lin_rest_rate(m, d, s, x3.x, x3.v), &dense, &er);
    const double err = fmax(fabs(er.x) / xs, fabs(er.v) / vs) / m->tol;
    if (!(err <= 1.0) && h > hmin && !landing) {
      h = fmax(kl_xrb_next_h(h, err), hmin);
      d->nrejected++;
      continue;
    }
    if (!landing) hnext = kl_xrb_next_h(h, err);
    /* events inside the step, earliest first, on its dense output */
    ev = 0;
    te = h;
    double tr;
    if ((fin.x <= 0 || u2.x <= 0 || u3.x <= 0) && kl_kv_poly_first_root(dense, x, v, 1.0, 0.0, 0.0, 0.0, h, &tr)) {
      te = tr;
      ev = 1;
    }
    if (m->model == KL_MODEL_EF && !d->restitution && v > 0 && (fin.v <= 0 || u2.v <= 0) &&
        kl_kv_poly_first_root(dense, x, v, 0.0, 1.0, 0.0, 0.0, h, &tr) && (!ev || tr < te)) {
      te = tr;
      ev = 2;
    }
    /* an event well inside: the force law is not smooth there (separation, the Emden-Fowler switch), so
     * the step is taken again to end just past it, and the event located on that step */
    if (ev && !landing && te > 0 && te < h * (1.0 - 1e-9)) {
      h = te * (1.0 + 1e-9);
      landing = 1;
      continue;
    }
    break;
  }
  const kl_kv_out e = ev ? kl_kv_poly_step(dense, x, v, te) : fin;
  const double hc = ev ? te : h;
  /* extrema of the contact over [0, hc]: ends, maximum penetration (v = 0), interior force peak */
  double tr, Fp, xp;
  d->cur.dmax = fmax(d->cur.dmax, fmax(x, e.x));
  d->cur.fpeak = fmax(d->cur.fpeak, fmax(force(m, d, x, v), force(m, d, e.x, e.v)));
  if (v > 0 && e.v <= 0 && kl_kv_poly_first_root(dense, x, v, 0.0, 1.0, 0.0, 0.0, hc, &tr))
    d->cur.dmax = fmax(d->cur.dmax, kl_kv_poly_step(dense, x, v, tr).x);
  if (m->model == KL_MODEL_GEN) {
    if (kl_xrb_gen_peak(dense, x, v, hc, e.x, e.v, gen_law(m), &Fp)) d->cur.fpeak = fmax(d->cur.fpeak, Fp);
  } else if (kl_xrb_hc_peak(dense, x, v, hc, e.x, e.v, stiffness(m, d), m->n, d->damp, &Fp, &xp)) {
    d->cur.fpeak = fmax(d->cur.fpeak, Fp);
  }
  d->nsub++;
  d->cur.nsub++;
  d->h = hnext;
  d->pend = 1;
  d->step_event = ev;
  d->step_t0 = d->t;
  d->step_h = hc;
  d->step_x0 = x;
  d->step_v0 = v;
  d->step_x1 = e.x;
  d->step_v1 = e.v;
  d->step_sys = dense;
}

/* the caller's check between sub-steps (kl_ball_advance_checked): due every KL_BALL_CHECK_EVERY sub-steps */
typedef struct checker {
  int (*fn)(void *ctx, const kl_ball_data *d); /* NULL: none */
  void *ctx;
  long next; /* the sub-step count at which it is due */
} checker;

/* 1 if the check is due and asks to stop (the state is then that of a completed sub-step) */
static int stop_here(checker *c, const kl_ball_data *d, double t_out)
{
  if (!c->fn || d->nsub < c->next || !(d->t < t_out)) return 0;
  c->next = d->nsub + KL_BALL_CHECK_EVERY;
  return c->fn(c->ctx, d) != 0;
}

/* nonlinear contact until the output instant t_out or separation: sub-steps are taken whole, and an
 * output inside one reads its dense output, so the steps do not depend on the output instants. Returns
 * 1 if the check asked to stop (at the end of a sub-step), else 0. */
static int contact_nl(const kl_ball_model *m, kl_ball_data *d, double t_out, checker *ck)
{
  for (;;) {
    if (!d->pend) take_step(m, d);
    const double tau = t_out - d->step_t0;
    if (tau < d->step_h) { /* the output lies inside the sub-step */
      const kl_kv_out o = kl_kv_poly_step(d->step_sys, d->step_x0, d->step_v0, tau);
      d->t = t_out;
      d->z = -o.x;
      d->vz = -o.v;
      return 0;
    }
    d->pend = 0; /* the sub-step ends at or before the output: take its end */
    d->t = d->step_t0 + d->step_h;
    if (d->step_event == 1) {
      end_contact(d, d->step_x1, d->step_v1);
      return 0;
    }
    d->z = -d->step_x1;
    d->vz = -d->step_v1;
    if (d->step_event == 2) d->restitution = 1;
    if (!(d->t < t_out)) return 0;
    if (stop_here(ck, d, t_out)) return 1;
  }
}

//------------------------------------------------------------------------------------------------------

kelvin_status kl_ball_advance(const kl_ball_model *m, kl_ball_data *d, double t_out)
{
  return kl_ball_advance_checked(m, d, t_out, NULL, NULL);
}

kelvin_status kl_ball_advance_checked(const kl_ball_model *m, kl_ball_data *d, double t_out,
                                      int (*check)(void *ctx, const kl_ball_data *d), void *ctx)
{
  long guard = 0;
  checker ck = {check, ctx, d->nsub + KL_BALL_CHECK_EVERY};
  while (d->t < t_out) {
    if (stop_here(&ck, d, t_out)) return KELVIN_ERR_STOPPED;
    const double T = t_out - d->t;
    if (d->phase == KL_BALL_FREE)
      free_step(m, d, T);
    else if (m->model == KL_MODEL_KV)
      contact_kv(m, d, T);
    else if (contact_nl(m, d, t_out, &ck))
      return isfinite(d->z) && isfinite(d->vz) && isfinite(d->t) ? KELVIN_ERR_STOPPED : KELVIN_ERR_NUMERIC;
    if (!(isfinite(d->z) && isfinite(d->vz) && isfinite(d->t))) return KELVIN_ERR_NUMERIC;
    if (++guard > 100000000L) return KELVIN_ERR_NUMERIC; /* Zeno-like event storm */
  }
  d->t = t_out;
  return KELVIN_OK;
}
