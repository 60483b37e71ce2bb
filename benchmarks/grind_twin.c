/* benchmarks/grind_twin.c: the CPU twin of the 1-D grinding model over the mesh, benchmarks/grind_cost's own code
 * (see grind_twin.h; docs/design.md section 5).
 *
 * State: arc length s, tool depth z and its rate z' (positive into the surface), contact phase.
 * Between samples k and k+1 every input is linear in s (p, n, offset u, speed v, effective mass,
 * weight), so the arc length is exact in time: ds/dt = v_k + a (s - s_k), a = dv/ds, gives
 * s(t) = s_k + v_k expm1(a t)/a and the interval's duration log1p(a ds/v_k)/a.
 *
 * Sub-step (docs/design.md 2.2-2.3, paper eq. 3-4): about the sub-step's start the contact force is
 * linearised along the path, F_N ~ F0 + k_t (d - d0) + c_t (d' - d0') with the depth
 * d(z, s) ~ d0 + g (z - z0) + d_s t, g = n_c . n (how the depth follows z) and d_s the rate at which
 * the surface comes up under the moving tool (-n_c . dc/ds v, exact for the closest feature);
 * (k_t, c_t) the tangent of the contact law (kernels/kl_impact.h, kl_contact_tangent). With the
 * holder's command u0 + u0' t the tool axis obeys
 *   m z'' + (D_h + g^2 c_t) z' + (K_h + g^2 k_t) z = f0 + f1 t + remainder,
 * and the sub-step is the exponential Rosenbrock step of kernels/kl_xrb.h (the linear system exact,
 * the remainder, evaluated with fresh mesh queries at the middle and the end, as a quartic force; order
 * 5 where the geometry is smooth), accepted when its error estimate, as a force on the tool axis, is
 * below ftol times the force scale. A mesh query is made for each stage (middle and end); the
 * corrector's states differ from the stages' by the step's error only, so their geometry is the
 * stages' moved along z (d + g dz), without a new query.
 * Events: contact loss (force rule: F_N <= 0, or d <= 0) and onset (d > 0 with F_N > 0) are looked for
 * at the middle and the end of the step, located on the step's dense output on the true mesh depth
 * (Illinois), and the step is taken again to end just past the event and split there. The contact
 * impulse of a sub-step is the momentum balance along the dense output. */
#include "benchmarks/grind_twin.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kl_contact_static.h"
#include "kernels/kl_impact.h"
#include "kernels/kl_xrb.h"

#define MAX_SUBSTEPS 200000000L /* per pass: a runaway event storm is reported, not looped on */

/* The path between samples k and k+1 and the pass's commands there */
typedef struct seg {
  int k;
  double s0, ds;            /* s_k, s_{k+1} - s_k */
  double v0, a;             /* speed at s_k, dv/ds */
  double p0[3], dp[3];      /* p_k, (p_{k+1} - p_k)/ds */
  double p1[3], t0[3], t1[3]; /* p_{k+1} and the unit tangents (cubic Hermite path when herm) */
  int herm;
  double n0[3], dn[3];      /* n_k, dn/ds (of the linear interpolant) */
  double u0, du;            /* offset at s_k, du/ds */
  double m0, dm, fg0, dfg;  /* effective mass and weight, and their s-derivatives */
} seg;

/* Geometry and force at one state */
typedef struct geo {
  double d;     /* depth R - dist [m] (R - rmax when nothing is within rmax) */
  double g;     /* n_c . n */
  double dpath; /* d' at fixed z: how fast the surface rises under the moving tool [m/s] */
  double rate;  /* d' = g z' + dpath */
  double F;     /* model force at (d, rate), before the contact test */
  double kt, ct; /* tangent stiffness and damping of the force law */
} geo;

typedef struct pass {
  const kl_grind_scene *g;
  const double *off, *spd;
  double rmax;  /* closest-point search radius */
  double fref;  /* force floor of the relative tolerance [N] */
  double kref, dref; /* contact tangent at the force fref */
  double ftol;
  seg sg;
} pass;

typedef struct state {
  double tau; /* time since the interval's start [s] */
  double z, zd;
} state;

//------------------------------------------------------------------------------------------------------
// path and commands inside an interval

/* the path, commands and their s-derivatives on interval k (linear in s) */
static void set_seg(pass *P, int k)
{
  const kl_grind_scene *g = P->g;
  seg *q = &P->sg;
  q->k = k;
  q->s0 = g->s[k];
  q->ds = g->s[k + 1] - g->s[k];
  q->v0 = P->spd[k];
  q->a = (P->spd[k + 1] - P->spd[k]) / q->ds;
  double tt0 = 0, tt1 = 0, pr0 = 0, pr1 = 0;
  for (int c = 0; c < 3; ++c) {
    q->p0[c] = g->p[3 * k + c];
    q->p1[c] = g->p[3 * k + 3 + c];
    q->t0[c] = g->tan[3 * k + c];
    q->t1[c] = g->tan[3 * k + 3 + c];
    tt0 += q->t0[c] * q->t0[c];
    tt1 += q->t1[c] * q->t1[c];
    pr0 += q->t0[c] * (q->p1[c] - q->p0[c]);
    pr1 += q->t1[c] * (q->p1[c] - q->p0[c]);
    q->dp[c] = (g->p[3 * k + 3 + c] - g->p[3 * k + c]) / q->ds;
    q->n0[c] = g->nrm[3 * k + c];
    q->dn[c] = (g->nrm[3 * k + 3 + c] - g->nrm[3 * k + c]) / q->ds;
  }
  /* the tool follows the cubic Hermite curve through the samples with the given unit tangents (C1, so
   * a curved path is not a polygon whose corners shake the holder at the sample rate); a segment whose
   * tangents are not unit or point against the chord falls back to the straight chord */
  q->herm = fabs(tt0 - 1) < 1e-6 && fabs(tt1 - 1) < 1e-6 && pr0 > 0 && pr1 > 0;
  q->u0 = P->off[k];
  q->du = (P->off[k + 1] - P->off[k]) / q->ds;
  q->m0 = g->meff[k];
  q->dm = (g->meff[k + 1] - g->meff[k]) / q->ds;
  q->fg0 = g->fg[k];
  q->dfg = (g->fg[k + 1] - g->fg[k]) / q->ds;
}

/* s - s_k after time tau from s_k: v_k expm1(a tau)/a (exact for v linear in s) */
static double seg_x(const seg *q, double tau)
{
  const double at = q->a * tau;
  if (fabs(at) < 1e-300) return q->v0 * tau;
  return q->v0 * expm1(at) / q->a;
}

/* duration of the whole interval: log1p(a ds / v_k)/a */
static double seg_T(const seg *q)
{
  const double x = q->a * q->ds / q->v0;
  if (fabs(x) < 1e-300) return q->ds / q->v0;
  return q->ds / q->v0 * (log1p(x) / x);
}

/* contact force law F(d, d') and its partial derivatives (kernels/: the one contact law) */
static void force_law(const kl_grind_scene *g, double d, double rate, double *F, double *kt, double *ct)
{
  *F = kl_contact_tangent(g->model, g->K, g->n, g->D, g->chi, d, rate, kt, ct);
}

/* geometry at arc offset x = s - s_k with tool depth z, rate zd */
static void geometry(const pass *P, double x, double z, double zd, geo *o)
{
  const kl_grind_scene *g = P->g;
  const seg *q = &P->sg;
  double n[3], c[3], dc[3];
  double nn = 0;
  for (int i = 0; i < 3; ++i) {
    n[i] = q->n0[i] + x * q->dn[i];
    nn += n[i] * n[i];
  }
  nn = 1.0 / sqrt(nn);
  double hp[4] = {0, 0, 0, 0}, hd[4] = {0, 0, 0, 0}; /* Hermite basis and its s-derivative */
  if (q->herm) {
    const double w = x / q->ds, w2 = w * w, w3 = w2 * w;
    hp[0] = 2 * w3 - 3 * w2 + 1, hp[1] = (w3 - 2 * w2 + w) * q->ds, hp[2] = -2 * w3 + 3 * w2, hp[3] = (w3 - w2) * q->ds;
    hd[0] = (6 * w2 - 6 * w) / q->ds, hd[1] = 3 * w2 - 4 * w + 1, hd[2] = (-6 * w2 + 6 * w) / q->ds, hd[3] = 3 * w2 - 2 * w;
  }
  for (int i = 0; i < 3; ++i) {
    n[i] *= nn;
    double p, dp;
    if (q->herm) {
      p = hp[0] * q->p0[i] + hp[1] * q->t0[i] + hp[2] * q->p1[i] + hp[3] * q->t1[i];
      dp = hd[0] * q->p0[i] + hd[1] * q->t0[i] + hd[2] * q->p1[i] + hd[3] * q->t1[i];
    } else {
      p = q->p0[i] + x * q->dp[i];
      dp = q->dp[i];
    }
    c[i] = p + (g->tool_R - z) * n[i];
    dc[i] = dp + (g->tool_R - z) * q->dn[i] * nn;
  }
  const double v = q->v0 + q->a * x;
  double dist, cp[3], nc[3];
  if (kl_mesh_closest(g->actual, c, P->rmax, &dist, cp, nc)) {
    o->d = g->tool_R - dist;
    o->g = nc[0] * n[0] + nc[1] * n[1] + nc[2] * n[2];
    o->dpath = -(nc[0] * dc[0] + nc[1] * dc[1] + nc[2] * dc[2]) * v;
  } else {
    o->d = g->tool_R - P->rmax;
    o->g = 1.0;
    o->dpath = 0.0;
  }
  o->rate = o->g * zd + o->dpath;
  force_law(g, o->d, o->rate, &o->F, &o->kt, &o->ct);
}

/* in contact by the `force` separation rule: penetrating and pushing (no tension) */
static int touching(const geo *o) { return o->d > 0 && o->F > 0; }

/* signed indicator: > 0 in contact, <= 0 out (continuous where it matters for bracketing) */
static double indicator(const geo *o, double kscale)
{
  if (o->d > 0) return o->F;
  return kscale * o->d;
}

//------------------------------------------------------------------------------------------------------
// the linear sub-step system

typedef struct lin {
  kl_kv_sys sys;
  double m;   /* the effective mass at the start, the step's fixed mass: m0 z'' = F m0 / m(s) */
} lin;

/* the right-hand side F of m(s) z'' = F at arc offset x with geometry o of the state (z, zd): holder,
 * weight and (in contact) the contact force along the tool axis */
static double rhs_force(const pass *P, double x, double z, double zd, const geo *o, int contact)
{
  const kl_grind_scene *g = P->g;
  const seg *q = &P->sg;
  const double v = q->v0 + q->a * x;
  const double u = q->u0 + q->du * x, ud = q->du * v;
  const double fg = q->fg0 + q->dfg * x;
  return g->holder_K * (u - z) + g->holder_D * (ud - zd) + fg - (contact ? o->g * o->F : 0.0);
}

/* its explicit time derivative at fixed (z, zd), with the geometry moving as the linearisation has it
 * (d rising at dpath, g and dpath fixed): K_h u' + D_h u'' + F_g' - g k_t dpath */
static double rhs_dt(const pass *P, double x, const geo *o, int contact)
{
  const kl_grind_scene *g = P->g;
  const seg *q = &P->sg;
  const double v = q->v0 + q->a * x;
  return g->holder_K * q->du * v + g->holder_D * q->du * q->a * v + q->dfg * v - (contact ? o->g * o->kt * o->dpath : 0.0);
}

/* the sub-step system about the state (x = s - s_k, z, zd) with geometry o, for the step's fixed mass
 * m0 = m(x): m0 z'' = F m0/m(s(t)) ~ f0 + f1 t - K z - D z' (kernels/kl_xrb.h) */
static lin linearise(const pass *P, double x, double z, double zd, const geo *o, int contact)
{
  const kl_grind_scene *g = P->g;
  const seg *q = &P->sg;
  lin L;
  const double v = q->v0 + q->a * x;
  const double kt = contact ? o->kt : 0.0, ct = contact ? o->ct : 0.0;
  const double g2 = o->g * o->g;
  L.m = q->m0 + q->dm * x;
  const double F0 = rhs_force(P, x, z, zd, o, contact);
  L.sys.m = L.m;
  L.sys.K = g->holder_K + g2 * kt;
  L.sys.D = g->holder_D + g2 * ct;
  L.sys.f0 = F0 + L.sys.K * z + L.sys.D * zd;
  L.sys.f1 = rhs_dt(P, x, o, contact) - F0 * q->dm * v / L.m;
  return L;
}

/* the remainder of L at (x, z, zd) with geometry o, tau into the step: m0/m(x) F less the linear force */
static double lin_rest(const pass *P, const lin *L, double x, double tau, double z, double zd, const geo *o, int contact)
{
  const seg *q = &P->sg;
  const double mf = L->m / (q->m0 + q->dm * x);
  return mf * rhs_force(P, x, z, zd, o, contact) - (L->sys.f0 + L->sys.f1 * tau - L->sys.K * z - L->sys.D * zd);
}

/* the rate of that remainder along a solution through (x, z, zd) (kl_xrb_rate) */
static double lin_rest_rate(const pass *P, const lin *L, double x, double z, double zd, const geo *o, int contact)
{
  const kl_grind_scene *g = P->g;
  const seg *q = &P->sg;
  const double v = q->v0 + q->a * x;
  const double m = q->m0 + q->dm * x, mf = L->m / m;
  const double kt = contact ? o->kt : 0.0, ct = contact ? o->ct : 0.0, g2 = o->g * o->g;
  const double F = rhs_force(P, x, z, zd, o, contact);
  const double dFdt = mf * rhs_dt(P, x, o, contact) - mf * F * q->dm * v / m;
  return kl_xrb_rate(L->sys, zd, F / m, -mf * (g->holder_K + g2 * kt), -mf * (g->holder_D + g2 * ct), dFdt);
}

/* geometry o of one state moved along the tool axis to (z + dz, zd): the closest feature kept */
static void geo_move(const kl_grind_scene *g, geo *o, double dz, double zd)
{
  o->d += o->g * dz;
  o->rate = o->g * zd + o->dpath;
  force_law(g, o->d, o->rate, &o->F, &o->kt, &o->ct);
}

/* int of (e^{a t} - 1) dt over [0, t] = t^2 (e^x - 1 - x)/x^2, x = a t (series below |x| = 1e-2) */
static double e2int(double a, double t)
{
  const double x = a * t;
  if (fabs(x) < 1e-2) return t * t * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 + x / 720.0))));
  return (expm1(x) - x) / (a * a);
}

/* impulse of the contact force along the tool axis over [0, tau] of the step o from (z0, zd0) at arc
 * offset x0: the momentum balance int (holder + weight) - m dz', with int z from the step's impulse
 * J = int (K z + D z') (the mass taken as the mean of the step's ends) */
static double axis_impulse(const pass *P, const lin *L, double x0, double x1, double z0, const kl_kv_out *o, double tau)
{
  const kl_grind_scene *g = P->g;
  const seg *q = &P->sg;
  const double v0 = q->v0 + q->a * x0;
  const double e2 = v0 * e2int(q->a, tau); /* int (s - s0) dt */
  const double intz = (o->J - L->sys.D * o->dx) / L->sys.K;
  const double intu = (q->u0 + q->du * x0) * tau + q->du * e2;
  const double intfg = (q->fg0 + q->dfg * x0) * tau + q->dfg * e2;
  const double mmean = q->m0 + q->dm * 0.5 * (x0 + x1);
  (void)z0;
  return g->holder_K * (intu - intz) + g->holder_D * (q->du * (x1 - x0) - o->dx) + intfg - mmean * o->dv;
}

//------------------------------------------------------------------------------------------------------
// checks

#define BAD(...)                                                                                             \
  do {                                                                                                       \
    if (msg && cap > 0) snprintf(msg, (size_t)cap, __VA_ARGS__);                                             \
    return KELVIN_ERR_ARG;                                                                                   \
  } while (0)

/* every scene field in range; msg names the first that is not */
static kelvin_status check_scene(const kl_grind_scene *g, char *msg, int cap)
{
  if (!g) BAD("scene is NULL");
  if (!g->actual) BAD("actual: workpiece mesh is NULL");
  if (g->ns < 2) BAD("ns: need at least 2 path samples, got %d", g->ns);
  if (!g->s || !g->p || !g->nrm || !g->tan || !g->meff || !g->fg) BAD("s, p, nrm, tan, meff, fg: an array is NULL");
  for (int k = 0; k < g->ns; ++k) {
    if (!isfinite(g->s[k])) BAD("s[%d]: must be finite, got %g", k, g->s[k]);
    if (k > 0 && !(g->s[k] > g->s[k - 1])) BAD("s[%d]: must increase, got %g after %g", k, g->s[k], g->s[k - 1]);
    double nn = 0;
    for (int c = 0; c < 3; ++c) {
      if (!isfinite(g->p[3 * k + c]) || !isfinite(g->nrm[3 * k + c]) || !isfinite(g->tan[3 * k + c]))
        BAD("p, nrm, tan at sample %d: must be finite", k);
      nn += g->nrm[3 * k + c] * g->nrm[3 * k + c];
    }
    if (!(fabs(sqrt(nn) - 1.0) <= 1e-6)) BAD("nrm[%d]: must be a unit vector, |n| = %.9g", k, sqrt(nn));
    if (!(isfinite(g->meff[k]) && g->meff[k] > 0)) BAD("meff[%d]: must be > 0 kg, got %g", k, g->meff[k]);
    if (!isfinite(g->fg[k])) BAD("fg[%d]: must be finite, got %g", k, g->fg[k]);
  }
  if (!(isfinite(g->tool_R) && g->tool_R > 0)) BAD("tool_R: must be > 0 m, got %g", g->tool_R);
  if (!(isfinite(g->holder_K) && g->holder_K > 0)) BAD("holder_K: must be > 0 N/m, got %g", g->holder_K);
  if (!(isfinite(g->holder_D) && g->holder_D >= 0)) BAD("holder_D: must be >= 0 N s/m, got %g", g->holder_D);
  if (g->model != KL_MODEL_KV && g->model != KL_MODEL_HC) BAD("model: must be KL_MODEL_KV or KL_MODEL_HC, got %d", g->model);
  if (!(isfinite(g->K) && g->K > 0)) BAD("K: contact stiffness must be > 0, got %g", g->K);
  if (g->model == KL_MODEL_KV && g->n != 1.0) BAD("n: Kelvin-Voigt is linear (n = 1), got %g", g->n);
  if (!(isfinite(g->n) && g->n >= 1 && g->n <= 3)) BAD("n: exponent must be in [1, 3], got %g", g->n);
  if (!(isfinite(g->D) && g->D >= 0)) BAD("D: damping must be >= 0, got %g", g->D);
  if (!(isfinite(g->chi) && g->chi >= 0)) BAD("chi: damping factor must be >= 0, got %g", g->chi);
  if (!(g->ftol == 0 || (isfinite(g->ftol) && g->ftol >= 1e-12 && g->ftol <= 0.1)))
    BAD("ftol: must be 0 (default 1e-3) or in [1e-12, 0.1], got %g", g->ftol);
  return KELVIN_OK;
}

/* a pass's commands and output arrays */
static kelvin_status check_pass(const kl_grind_scene *g, const double *off, const double *spd,
                                const kl_grind_result *out, char *msg, int cap)
{
  if (!off || !spd) BAD("offset, speed: NULL");
  if (!out || !out->force || !out->favg || !out->time || !out->z || !out->depth || !out->contact)
    BAD("result: every output array must be allocated (ns = %d)", g->ns);
  for (int k = 0; k < g->ns; ++k) {
    if (!isfinite(off[k])) BAD("offset[%d]: must be finite, got %g", k, off[k]);
    if (!(isfinite(spd[k]) && spd[k] > 0)) BAD("speed[%d]: must be > 0 m/s, got %g", k, spd[k]);
  }
  return KELVIN_OK;
}
#undef BAD

//------------------------------------------------------------------------------------------------------
// the pass

/* static equilibrium of the holder at the interval start: K_h (u - z) + F_g = g F(d(z)) at rest */
static double equilibrium(const pass *P, int *contact)
{
  const kl_grind_scene *g = P->g;
  const seg *q = &P->sg;
  const double zfree = q->u0 + q->fg0 / g->holder_K;
  geo o;
  /* static force: rate 0 */
  geometry(P, 0.0, zfree, 0.0, &o);
  double F, kt, ct;
  force_law(g, o.d, 0.0, &F, &kt, &ct);
  if (!(o.d > 0 && F > 0)) {
    *contact = 0;
    return zfree;
  }
  /* G(z) = K_h (u - z) + F_g - g F(d(z)) decreases in z; G(zfree) < 0. Find zlo with d <= 0 (G > 0) */
  double step = o.d / fmax(o.g, 0.1) * 1.01 + 1e-12;
  double zlo = zfree - step;
  for (int i = 0; i < 200; ++i) {
    geometry(P, 0.0, zlo, 0.0, &o);
    if (!(o.d > 0)) break;
    step *= 2;
    zlo = zfree - step;
  }
  double a = zlo, b = zfree;
  double fa = g->holder_K * (q->u0 - a) + q->fg0; /* out of contact at a */
  geometry(P, 0.0, b, 0.0, &o);
  force_law(g, o.d, 0.0, &F, &kt, &ct);
  double fb = g->holder_K * (q->u0 - b) + q->fg0 - o.g * F;
  int side = 0;
  for (int it = 0; it < 200 && b - a > 1e-15 * (fabs(a) + fabs(b) + g->tool_R); ++it) {
    const double c = kl_illinois_point(a, fa, b, fb);
    geometry(P, 0.0, c, 0.0, &o);
    force_law(g, o.d, 0.0, &F, &kt, &ct);
    const double fc = g->holder_K * (q->u0 - c) + q->fg0 - (o.d > 0 && F > 0 ? o.g * F : 0.0);
    kl_illinois_update(&a, &fa, &b, &fb, c, fc, fc > 0, &side);
  }
  const double z = 0.5 * (a + b);
  geometry(P, 0.0, z, 0.0, &o);
  force_law(g, o.d, 0.0, &F, &kt, &ct);
  *contact = o.d > 0 && F > 0;
  return z;
}

kelvin_status kl_grind_run(const kl_grind_scene *g, const double *offset, const double *speed, kl_grind_result *out,
                           char *msg, int cap)
{
  if (msg && cap > 0) msg[0] = '\0';
  kelvin_status st = check_scene(g, msg, cap);
  if (st != KELVIN_OK) return st;
  st = check_pass(g, offset, speed, out, msg, cap);
  if (st != KELVIN_OK) return st;
  out->nsub = 0;
  out->nevents = 0;

  pass P;
  P.g = g;
  P.off = offset;
  P.spd = speed;
  P.rmax = 2.0 * g->tool_R;
  P.ftol = g->ftol > 0 ? g->ftol : 1e-3;
  set_seg(&P, 0);

  /* start: the holder's static equilibrium at s[0], at rest */
  int contact = 0;
  state X = {0.0, 0.0, 0.0};
  X.z = equilibrium(&P, &contact);
  geo o;
  geometry(&P, 0.0, X.z, X.zd, &o);
  contact = touching(&o);
  /* force floor of the relative tolerance: the larger of the start force, the weight and the holder
   * force of a micrometre (a pass that starts out of contact still needs a scale) */
  double fgmax = 0;
  for (int k = 0; k < g->ns; ++k) fgmax = fmax(fgmax, fabs(g->fg[k]));
  P.fref = fmax(fmax(contact ? o.F : 0.0, fgmax), g->holder_K * 1e-6);
  {
    const kl_contact_desc cd = {g->model, 0, g->K, g->n, g->D, g->chi, {0, 0, 0, 0, 0}};
    const double dF = kl_contact_static_depth(cd, P.fref);
    double Fk;
    force_law(g, dF, 0.0, &Fk, &P.kref, &P.dref);
  }
  double t = 0.0;
  out->time[0] = 0.0;
  out->z[0] = X.z;
  out->force[0] = contact ? o.F : 0.0;
  out->favg[0] = out->force[0];
  out->depth[0] = contact ? o.d : 0.0;
  out->contact[0] = contact;

  double h = -1; /* current sub-step; chosen at the first interval */
  long guard = 0;
  for (int k = 0; k + 1 < g->ns; ++k) {
    set_seg(&P, k);
    const double T = seg_T(&P.sg);
    if (!(T > 0 && isfinite(T))) {
      if (msg && cap > 0) snprintf(msg, (size_t)cap, "interval %d: duration not finite (speed %g, %g)", k, speed[k], speed[k + 1]);
      return KELVIN_ERR_ARG;
    }
    X.tau = 0.0;
    geometry(&P, 0.0, X.z, X.zd, &o);
    double imp = 0.0; /* contact impulse over the interval */
    /* no sub-step longer than it takes to cross a quarter of the tool radius */
    const double hgeo = 0.25 * g->tool_R / fmax(speed[k], speed[k + 1]);
    if (h <= 0) {
      const double w = sqrt((g->holder_K + (contact ? o.kt * o.g * o.g : 0.0)) / P.sg.m0);
      h = fmin(T, 0.05 / w);
    }
    while (X.tau < T) {
      if (++guard > MAX_SUBSTEPS) {
        if (msg && cap > 0) snprintf(msg, (size_t)cap, "sub-step limit (%ld) reached at sample %d (t = %g s)", MAX_SUBSTEPS, k, t + X.tau);
        return KELVIN_ERR_NUMERIC;
      }
      const double rest = T - X.tau;
      double hh = fmin(fmin(h, rest), hgeo);
      const double hmin = 1e-14 * (1.0 + t + X.tau);
      if (hh > rest - hmin) hh = rest; /* no sliver at the interval end */
      const double x0 = seg_x(&P.sg, X.tau);
      const lin L0 = linearise(&P, x0, X.z, X.zd, &o, contact);
      const double ks = L0.sys.K;
      kl_kv_poly dense;
      kl_kv_out fin;
      geo om, oe;
      double xm = 0, xe = 0, err = 0, tol = 0, hnext = h, te = 0;
      int landing = 0, ev = 0;
      for (;;) {
        const int last = hh >= rest;
        kl_xrb w;
        xm = seg_x(&P.sg, X.tau + 0.5 * hh);
        xe = last ? P.sg.ds : seg_x(&P.sg, X.tau + hh);
        const kl_kv_out u2 = kl_xrb_begin(&w, L0.sys, X.z, X.zd, hh);
        geometry(&P, xm, u2.x, u2.v, &om);
        const kl_kv_out u3 = kl_xrb_stage3(&w, lin_rest(&P, &L0, xm, 0.5 * hh, u2.x, u2.v, &om, contact));
        geometry(&P, xe, u3.x, u3.v, &oe);
        const kl_kv_out x3 = kl_xrb_order4(&w, lin_rest(&P, &L0, xe, hh, u3.x, u3.v, &oe, contact));
        const kl_kv_out x3m = kl_xrb_mid(&w);
        geo_move(g, &om, x3m.x - u2.x, x3m.v);
        geo_move(g, &oe, x3.x - u3.x, x3.v);
        kl_kv_out er;
        fin = kl_xrb_end(&w, lin_rest(&P, &L0, xm, 0.5 * hh, x3m.x, x3m.v, &om, contact),
                         lin_rest(&P, &L0, xe, hh, x3.x, x3.v, &oe, contact),
                         lin_rest_rate(&P, &L0, xe, x3.x, x3.v, &oe, contact), &dense, &er);
        geo_move(g, &oe, fin.x - x3.x, fin.v);
        /* force error on the tool axis, through the stiffest of the holder + contact tangents at the start,
         * the end and the reference force (as kernels/kl_rollout.h), per unit of decay of the axis mode */
        const double ke = fmax(fmax(L0.sys.K, g->holder_K + oe.g * oe.g * oe.kt), g->holder_K + P.kref);
        const double de = fmax(fmax(L0.sys.D, g->holder_D + oe.g * oe.g * oe.ct), g->holder_D + P.dref);
        err = fabs(ke * er.x) + fabs(de * er.v);
        err /= fmin(1.0, fmax(de / (2.0 * L0.m) * hh, 1e-3));
        tol = P.ftol * fmax(fmax(touching(&oe) ? oe.F : 0.0, contact ? o.F : 0.0), P.fref);
        if (err > tol && hh > hmin && !landing) {
          hh = fmax(kl_xrb_next_h(hh, err / tol), hmin);
          continue;
        }
        if (!landing) hnext = kl_xrb_next_h(hh, err / tol);
        /* the next contact change: the indicator at the middle and the end, located on the dense output
         * with the true mesh depth */
        ev = 0;
        te = hh;
        const double sgn = contact ? 1.0 : -1.0;
        if (touching(&om) != contact || touching(&oe) != contact) {
          double lo = 0.0, flo = sgn * indicator(&o, ks), hi = hh, fhi;
          if (!(flo > 0)) flo = 1e-300; /* at an event already: step just past it */
          geo og;
          if (touching(&om) != contact) {
            hi = 0.5 * hh;
            fhi = fmin(sgn * indicator(&om, ks), -1e-300);
          } else {
            lo = 0.5 * hh;
            flo = fmax(sgn * indicator(&om, ks), 1e-300);
            fhi = fmin(sgn * indicator(&oe, ks), -1e-300);
          }
          int side = 0;
          for (int it = 0; it < 100 && hi - lo > 1e-13 * hh; ++it) {
            const double c = kl_illinois_point(lo, flo, hi, fhi);
            const kl_kv_out oc = kl_kv_poly_step(dense, X.z, X.zd, c);
            geometry(&P, seg_x(&P.sg, X.tau + c), oc.x, oc.v, &og);
            const double fc = (touching(&og) == contact) ? fmax(sgn * indicator(&og, ks), 1e-300)
                                                          : fmin(sgn * indicator(&og, ks), -1e-300);
            kl_illinois_update(&lo, &flo, &hi, &fhi, c, fc, fc > 0, &side);
          }
          ev = 1;
          te = hi;
        }
        /* an event inside: the force law is not smooth there, so the step is taken again to end just past
         * it, and the event located on that step */
        if (ev && !landing && te < hh * (1.0 - 1e-9)) {
          hh = te * (1.0 + 1e-9);
          landing = 1;
          continue;
        }
        break;
      }
      out->nsub++;
      const double hc = ev ? te : hh;
      const int to_end = !ev && hh >= rest;
      const kl_kv_out oc = ev ? kl_kv_poly_step(dense, X.z, X.zd, hc) : fin;
      const double xc = ev ? seg_x(&P.sg, X.tau + hc) : xe;
      if (contact) {
        const double ge = ev ? o.g : 0.5 * (o.g + oe.g);
        imp += axis_impulse(&P, &L0, x0, xc, X.z, &oc, hc) / (ge > 0.1 ? ge : 0.1);
      }
      X.tau = to_end ? T : X.tau + hc;
      X.z = oc.x;
      X.zd = oc.v;
      if (ev) {
        contact = !contact;
        out->nevents++;
        geometry(&P, xc, X.z, X.zd, &o);
        /* the next sub-step starts small: the force law just switched */
        h = fmax(hc, 0.05 * hh);
      } else {
        o = oe;
        h = hnext;
      }
      if (!(isfinite(X.z) && isfinite(X.zd))) {
        if (msg && cap > 0) snprintf(msg, (size_t)cap, "state went non-finite at sample %d (t = %g s)", k, t + X.tau);
        return KELVIN_ERR_NUMERIC;
      }
    }
    t += T;
    /* sample k+1: exactly at s_{k+1} */
    geometry(&P, P.sg.ds, X.z, X.zd, &o);
    const int k1 = k + 1;
    out->time[k1] = t;
    out->z[k1] = X.z;
    out->contact[k1] = contact;
    out->force[k1] = contact ? fmax(o.F, 0.0) : 0.0;
    out->depth[k1] = contact ? o.d : 0.0;
    out->favg[k1] = imp / T;
  }
  return KELVIN_OK;
}

kelvin_status kl_grind_run_many(const kl_grind_scene *g, int npass, const double *offsets, const double *speeds,
                                kl_grind_result *out, char *msg, int cap)
{
  if (msg && cap > 0) msg[0] = '\0';
  kelvin_status st = check_scene(g, msg, cap);
  if (st != KELVIN_OK) return st;
  if (npass < 0 || (npass > 0 && (!offsets || !speeds || !out))) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "npass, offsets, speeds, out: bad arguments (npass %d)", npass);
    return KELVIN_ERR_ARG;
  }
  kelvin_status first = KELVIN_OK;
  int first_i = npass;
  const size_t ns = (size_t)g->ns;
#pragma omp parallel for schedule(dynamic, 1)
  for (int i = 0; i < npass; ++i) {
    char m[512];
    const kelvin_status s = kl_grind_run(g, offsets + (size_t)i * ns, speeds + (size_t)i * ns, &out[i], m, sizeof m);
    if (s != KELVIN_OK) {
#pragma omp critical(kl_grind_first_failure)
      {
        if (i < first_i) {
          first_i = i;
          first = s;
          if (msg && cap > 0) snprintf(msg, (size_t)cap, "pass %d: %s", i, m);
        }
      }
    }
  }
  return first;
}
