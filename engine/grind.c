/* engine/grind.c: the grinding verification scene (see grind.h; docs/design.md section 5).
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
 * k_t = K, c_t = D for Kelvin-Voigt and the tangent pair k_t = n K d^{n-1} (1 + chi d'),
 * c_t = chi K d^n for Hunt-Crossley. With the holder's affine command u0 + u0' t the tool axis obeys
 *   m z'' + (D_h + g^2 c_t) z' + (K_h + g^2 k_t) z = f0 + f1 t,
 * a kl_kv_sys advanced exactly by kl_kv_step. Step doubling (one step of h against two of h/2, the
 * second re-linearised at the midpoint with a fresh mesh query) estimates the force error; sub-steps
 * are accepted when it is below ftol times the force scale, and grow by the cube-root rule.
 * Events: contact loss (force rule: F_N <= 0, or d <= 0) and onset (d > 0 with F_N > 0) are first
 * bracketed with the linear model (kl_kv_first_root) and the true mesh depth at the midpoint and the
 * end, then located on the true depth along the sub-step trajectory (Illinois) and the step is
 * split there. */
#include "engine/grind.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kl_impact.h"

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

/* contact force law F(d, d') and its partial derivatives (docs/design.md 2.2, 2.3) */
static void force_law(const kl_grind_scene *g, double d, double rate, double *F, double *kt, double *ct)
{
  if (g->model == KL_MODEL_KV) {
    *F = g->K * d + g->D * rate;
    *kt = g->K;
    *ct = g->D;
    return;
  }
  if (!(d > 0)) {
    *F = 0;
    *kt = 0;
    *ct = 0;
    return;
  }
  const double dn = pow(d, g->n);
  const double w = 1.0 + g->chi * rate;
  *F = g->K * dn * w;
  *kt = g->n * g->K * (dn / d) * w;
  if (*kt < 0) *kt = 0; /* F < 0 there: the contact is ending anyway */
  *ct = g->chi * g->K * dn;
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
  double F0, kt, ct, g, dpath, d0, z0, zd0; /* the contact linearisation (kt = ct = F0 = 0 out of contact) */
  int contact;
} lin;

/* the sub-step system about the state (x = s - s_k, z, zd) with geometry o */
static lin linearise(const pass *P, double x, double z, double zd, const geo *o, int contact)
{
  const kl_grind_scene *g = P->g;
  const seg *q = &P->sg;
  lin L;
  L.contact = contact;
  L.g = o->g;
  L.dpath = o->dpath;
  L.d0 = o->d;
  L.z0 = z;
  L.zd0 = zd;
  if (contact) {
    L.F0 = o->F;
    L.kt = o->kt;
    L.ct = o->ct;
  } else {
    L.F0 = L.kt = L.ct = 0;
  }
  const double v = q->v0 + q->a * x;
  const double u = q->u0 + q->du * x, ud = q->du * v;
  const double m = q->m0 + q->dm * x;
  const double fg = q->fg0 + q->dfg * x, fgd = q->dfg * v;
  const double g2 = L.g * L.g;
  L.sys.m = m;
  L.sys.K = g->holder_K + g2 * L.kt;
  L.sys.D = g->holder_D + g2 * L.ct;
  L.sys.f0 = g->holder_K * u + g->holder_D * ud + fg - L.g * L.F0 + g2 * L.kt * z + g2 * L.ct * zd;
  L.sys.f1 = g->holder_K * ud + fgd - L.g * L.kt * L.dpath;
  return L;
}

/* impulse of the linearised contact force over [0, tau] along the step o from (z0, zd0) */
static double lin_impulse(const lin *L, const kl_kv_out *o, double tau)
{
  if (!L->contact) return 0.0;
  const double iz = (o->J - L->sys.D * o->dx) / L->sys.K; /* int z dt, from J = int (K z + D z') */
  return L->F0 * tau + L->kt * L->g * (iz - L->z0 * tau) + 0.5 * L->kt * L->dpath * tau * tau +
         L->ct * L->g * (o->dx - L->zd0 * tau);
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

/* state at tau in (0, h] along the two half-steps (L0 from s0, Lm from the midpoint sm) */
static kl_kv_out along(const lin *L0, const lin *Lm, const state *X0, const state *Xm, double h, double tau,
                       const lin **Lused)
{
  if (tau <= 0.5 * h) {
    *Lused = L0;
    return kl_kv_step(L0->sys, X0->z, X0->zd, tau);
  }
  *Lused = Lm;
  return kl_kv_step(Lm->sys, Xm->z, Xm->zd, tau - 0.5 * h);
}

/* first time in [0, h] where the linear model's event function crosses, over both halves; -1 if none */
static double lin_root(const lin *L0, const lin *Lm, const state *X0, const state *Xm, double h, int contact)
{
  const lin *Ls[2] = {L0, Lm};
  const state *Xs[2] = {X0, Xm};
  for (int i = 0; i < 2; ++i) {
    const lin *L = Ls[i];
    const state *X = Xs[i];
    double al, be, g0, g1, tr;
    if (contact) { /* F_lin = F0 + kt g (z - z0) + kt dpath t + ct g (z' - z0') <= 0 */
      al = L->kt * L->g;
      be = L->ct * L->g;
      g0 = L->F0 - al * L->z0 - be * L->zd0;
      g1 = L->kt * L->dpath;
    } else { /* -d_lin = -(d0 + g (z - z0) + dpath t) <= 0 */
      al = -L->g;
      be = 0;
      g0 = -(L->d0 - L->g * L->z0);
      g1 = -L->dpath;
    }
    if (kl_kv_first_root(L->sys, X->z, X->zd, al, be, g0, g1, 0.5 * h, &tr)) return (i ? 0.5 * h : 0.0) + tr;
  }
  return -1;
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
      lin Lm;
      state Xm, Xe;
      geo om, oe;
      kl_kv_out full, half, two;
      double err = 0, tol = 0;
      for (;;) { /* step doubling */
        full = kl_kv_step(L0.sys, X.z, X.zd, hh);
        half = kl_kv_step(L0.sys, X.z, X.zd, 0.5 * hh);
        Xm = (state){X.tau + 0.5 * hh, half.x, half.v};
        const double xm = seg_x(&P.sg, Xm.tau);
        geometry(&P, xm, Xm.z, Xm.zd, &om);
        Lm = linearise(&P, xm, Xm.z, Xm.zd, &om, contact);
        two = kl_kv_step(Lm.sys, Xm.z, Xm.zd, 0.5 * hh);
        Xe = (state){hh == rest ? T : X.tau + hh, two.x, two.v};
        const double xe = (hh == rest) ? P.sg.ds : seg_x(&P.sg, Xe.tau);
        geometry(&P, xe, Xe.z, Xe.zd, &oe);
        /* force error of the full step against the two halves: holder and (linearised) contact */
        const double dz = full.x - two.x, dzd = full.v - two.v;
        err = fabs(g->holder_K * dz + g->holder_D * dzd);
        if (contact || touching(&oe)) err += fabs(oe.g * (oe.kt * oe.g * dz + oe.ct * oe.g * dzd));
        tol = P.ftol * fmax(fmax(touching(&oe) ? oe.F : 0.0, contact ? o.F : 0.0), P.fref);
        if (err <= tol || hh <= hmin) break;
        hh *= fmax(0.1, 0.9 * cbrt(tol / err));
        if (hh < hmin) hh = hmin;
      }
      out->nsub++;
      /* events inside the accepted step */
      const double ks = g->holder_K + o.kt;
      const double tl = lin_root(&L0, &Lm, &X, &Xm, hh, contact);
      const int mid_flip = touching(&om) != contact, end_flip = touching(&oe) != contact;
      double hi = -1;
      if (tl >= 0 && tl < hh) { /* confirm the linear model's event on the true depth */
        const lin *Lu;
        const kl_kv_out ot = along(&L0, &Lm, &X, &Xm, hh, tl, &Lu);
        geo og;
        geometry(&P, seg_x(&P.sg, X.tau + tl), ot.x, ot.v, &og);
        if (touching(&og) != contact) hi = tl;
      }
      if (hi < 0 && mid_flip) hi = 0.5 * hh;
      if (hi < 0 && end_flip) hi = hh;
      if (hi > 0) {
        /* Illinois on the indicator (sign s: > 0 before the event) over [lo, hi] */
        const double sgn = contact ? 1.0 : -1.0;
        double lo = 0.0, flo = sgn * indicator(&o, ks);
        if (!(flo > 0)) flo = 1e-300; /* at an event already: step just past it */
        const lin *Lu;
        kl_kv_out oh = along(&L0, &Lm, &X, &Xm, hh, hi, &Lu);
        geo og;
        geometry(&P, seg_x(&P.sg, X.tau + hi), oh.x, oh.v, &og);
        double fhi = sgn * indicator(&og, ks);
        if (fhi > 0) fhi = -1e-300;
        int side = 0;
        for (int it = 0; it < 100 && hi - lo > 1e-13 * hh; ++it) {
          const double c = kl_illinois_point(lo, flo, hi, fhi);
          const kl_kv_out oc = along(&L0, &Lm, &X, &Xm, hh, c, &Lu);
          geometry(&P, seg_x(&P.sg, X.tau + c), oc.x, oc.v, &og);
          const double fc = (touching(&og) == contact) ? fmax(sgn * indicator(&og, ks), 1e-300)
                                                        : fmin(sgn * indicator(&og, ks), -1e-300);
          kl_illinois_update(&lo, &flo, &hi, &fhi, c, fc, fc > 0, &side);
        }
        /* advance to hi (just past the event), impulse of the contact part */
        const lin *Lh;
        const kl_kv_out oe2 = along(&L0, &Lm, &X, &Xm, hh, hi, &Lh);
        if (Lh == &L0) {
          imp += lin_impulse(&L0, &oe2, hi);
        } else {
          imp += lin_impulse(&L0, &half, 0.5 * hh) + lin_impulse(&Lm, &oe2, hi - 0.5 * hh);
        }
        X.tau += hi;
        X.z = oe2.x;
        X.zd = oe2.v;
        contact = !contact;
        out->nevents++;
        geometry(&P, seg_x(&P.sg, X.tau), X.z, X.zd, &o);
        /* the next sub-step starts small: the force law just switched */
        h = fmax(hi, 0.05 * hh);
        continue;
      }
      imp += lin_impulse(&L0, &half, 0.5 * hh) + lin_impulse(&Lm, &two, 0.5 * hh);
      X = Xe;
      o = oe;
      if (hh < rest || h <= hh) h = hh * fmin(4.0, 0.9 * cbrt(tol / fmax(err, 1e-300)));
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
