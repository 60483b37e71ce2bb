/* kernels/kl_impact_step.h: one normal impact by the step, where no closed form exists (docs/design.md
 * section 2.5): the generalised law F = k d^n1 + c sgn(d')|d'|^m d^n2 (kernels/kl_contact_gen.h, kept >= 0),
 * which includes Hunt-Crossley under a constant external force (a preloaded impact: k = K, c = K chi,
 * n1 = n2 = n, m = 1). It integrates
 *     m_b d'' = fe - F(d, d'),   d(0) = 0, d'(0) = v0 > 0,
 * with the exponential Rosenbrock step of kernels/kl_xrb.h (the step of every nonlinear contact in kelvin)
 * under error control on the penetration, its rate and the reported force, and locates on each step's dense
 * output: the maximum penetration (d' = 0), the peak force (dF/dt from > 0 to <= 0), the kinks of the
 * no-tension law (the unclamped force crossing 0: the step lands on them) and the end of contact (d = 0, or
 * under the force separation rule the unclamped force reaching 0). Common subset of C17 and OpenCL C 1.2;
 * the loops are data-dependent (this is not the device's fast path).
 *
 * The linearisation about each step's start takes the law's bounded tangent (kl_gen_lin_tangent) at the start
 * with d and |d'| floored at 1e-6 of their scales, clamped to >= 0: the tangent is unbounded at d' = 0 for
 * m < 1 and at d = 0 for n1, n2 < 1, and may be negative where damping dominates; any finite linearisation
 * keeps the step correct (the remainder carries the rest), only the step length depends on it. At the
 * impact the law is taken as its limit from inside (d -> 0+, kl_gen_force_in): with n2 = 0 the force jumps to
 * c v0^m. The force peak is located by this step's own search (kl_istep_dfdt), not kl_xrb_gen_peak: see there
 * (kernels/kl_contact_gen.h) why the two differ. */
#ifndef KL_IMPACT_STEP_H
#define KL_IMPACT_STEP_H
#include "kl_common.h"
#include "kl_contact_kv.h"
#include "kl_contact_gen.h"
#include "kl_xrb.h"

#define KL_ISTEP_TOL 1e-10       /* relative error per step (scales: see kl_impact_step_run) */
#define KL_ISTEP_MAXSTEPS 100000 /* accepted and rejected steps of one impact, then KL_ISTEP_NOCONV */
#define KL_ISTEP_HORIZON 1.0e3   /* natural times before an impact that has not separated is given up */
#define KL_ISTEP_OK 0
#define KL_ISTEP_SETTLES 1 /* no separation: pressed in (energy below that of separation) or past the horizon */
#define KL_ISTEP_NOCONV 2  /* the step count ran out */

/* The outcome of one stepped impact. */
typedef struct kl_istep_out {
  kl_real dmax, tmax, fpeak, tc; /* as kl_impact_out */
  kl_real vexit;                 /* d' at the end of contact (< 0) */
  kl_real xq, vq;                /* the state at the query time (kl_impact_step_run's tq) */
  int status;                    /* KL_ISTEP_* */
  int nsteps, nrej;              /* accepted and rejected steps */
} kl_istep_out;

KL_FN kl_real kl_istep_max(kl_real a, kl_real b) { return a > b ? a : b; }
KL_FN kl_real kl_istep_min(kl_real a, kl_real b) { return a < b ? a : b; }

/* The law's force with its limit at d = 0 (kl_gen_force_in), and none below the surface: the step's stages
 * and dense output reach d < 0 after the contact has ended (where an n2 = 0 law entering would otherwise
 * push with c v^m), while the engine's contact, located at d <= 0 by rounding, takes the limit there. */
KL_FN kl_real kl_istep_force(kl_gen_law L, kl_real x, kl_real v) { return x < 0.0 ? 0.0 : kl_gen_force_in(L, x, v); }

/* 1 where the unclamped force is positive (in contact and pushing), else 0; at d = 0 entering: 1. */
KL_FN int kl_istep_pushing(kl_gen_law L, kl_real x, kl_real v)
{
  if (x == 0.0) return v > 0.0 ? 1 : 0;
  if (!(x > 0.0)) return 0;
  return (L.k * kl_gen_pow(x, L.n1) + L.c * kl_gen_rate_pow(v, L.m) * kl_gen_pow(x, L.n2)) > 0.0 ? 1 : 0;
}

/* dF/dt along a motion at (x, v) with acceleration a (0 where the force is clamped or out of contact); at
 * v = 0 with m < 1 the rate term is infinite: +-KL_HUGE by the sign of a (only the sign is used). */
KL_FN kl_real kl_istep_dfdt(kl_gen_law L, kl_real x, kl_real v, kl_real a)
{
  if (!(x > 0.0)) return 0.0;
  const kl_real dn1 = kl_gen_pow(x, L.n1), dn2 = kl_gen_pow(x, L.n2), rp = kl_gen_rate_pow(v, L.m);
  if (!(L.k * dn1 + L.c * rp * dn2 > 0.0)) return 0.0;
  const kl_real av = v < 0.0 ? -v : v;
  kl_real ma;
  if (av > 0.0)
    ma = L.m * kl_gen_pow(av, L.m - 1.0) * a;
  else
    ma = (L.m == 1.0) ? a : ((L.m > 1.0) ? 0.0 : (a > 0.0 ? KL_HUGE : (a < 0.0 ? -KL_HUGE : 0.0)));
  return (L.k * L.n1 * dn1 + L.c * L.n2 * rp * dn2) * v / x + L.c * dn2 * ma;
}

/* The linearisation about (x, v): m x'' = fe - F ~ f0 - kt x - ct v (kl_xrb.h); *F0 the force there (the law's
 * bounded tangent, kl_gen_lin_tangent, floors 1e-6 of the scales xs, vs). */
KL_FN kl_kv_sys kl_istep_linearise(kl_gen_law L, kl_real mb, kl_real fe, kl_real x, kl_real v, kl_real xs,
                                   kl_real vs, kl_real *F0)
{
  kl_real kt, ct;
  *F0 = kl_gen_lin_tangent(L, x, v, 1e-6 * xs, 1e-6 * vs, &kt, &ct);
  kl_kv_sys s;
  s.m = mb;
  s.K = kt;
  s.D = ct;
  s.f0 = fe - *F0 + kt * x + ct * v;
  s.f1 = 0.0;
  return s;
}

/* The remainder of the linearisation s (about (x0, v0), force F0 there) at (x, v). */
KL_FN kl_real kl_istep_rest(kl_gen_law L, kl_kv_sys s, kl_real F0, kl_real x0, kl_real v0, kl_real x, kl_real v)
{
  return F0 - kl_istep_force(L, x, v) + s.K * (x - x0) + s.D * (v - v0);
}

/* Its rate along the motion through (x, v) (kl_xrb_rate with the floored tangent there). */
KL_FN kl_real kl_istep_rest_rate(kl_gen_law L, kl_kv_sys s, kl_real mb, kl_real fe, kl_real x, kl_real v, kl_real xs,
                                 kl_real vs)
{
  kl_real F;
  const kl_kv_sys t = kl_istep_linearise(L, mb, fe, x, v, xs, vs, &F);
  return kl_xrb_rate(s, v, (fe - F) / mb, -t.K, -t.D, 0.0);
}

/* The impact of a body of mass mb at speed v0 > 0 under the constant force fe (pushing in: > 0) on the law L:
 * force_rule 0 ends contact at d = 0 (the law pulls no tension, so the body may fly inside the surface
 * where the force is clamped), 1 where the unclamped force reaches 0 (d' < 0). With tq >= 0 the run stops
 * at time tq and returns the state there in xq, vq (the end state if the contact ends first; status as
 * met so far); tq < 0: to the end. Error scales: penetration max(d so far, 1e-2 x*), rate max(v0, v*),
 * force max(F so far, 1e-2 F*), with x* the larger of the elastic depth ((n1+1) mb v0^2 / 2k)^(1/(n1+1))
 * and the static one (fe/k)^(1/n1), F* = max(k x*^n1, |fe|), v* = sqrt(F* x* / mb). */
KL_FN kl_istep_out kl_impact_step_run(kl_gen_law L, kl_real mb, kl_real v0, kl_real fe, int force_rule, kl_real tq)
{
  kl_istep_out o;
  o.dmax = 0.0;
  o.tmax = 0.0;
  o.fpeak = 0.0;
  o.tc = 0.0;
  o.vexit = 0.0;
  o.xq = 0.0;
  o.vq = v0;
  o.status = KL_ISTEP_OK;
  o.nsteps = 0;
  o.nrej = 0;
  const kl_real de = kl_powr((L.n1 + 1.0) * mb * v0 * v0 / (2.0 * L.k), 1.0 / (L.n1 + 1.0));
  const kl_real dst = fe > 0.0 ? kl_powr(fe / L.k, 1.0 / L.n1) : 0.0;
  const kl_real xs = de > dst ? de : dst;
  const kl_real fel = L.k * kl_gen_pow(xs, L.n1);
  const kl_real fs = fel > fabs(fe) ? fel : fabs(fe);
  const kl_real vn0 = sqrt(fs * xs / mb);
  const kl_real vs = v0 > vn0 ? v0 : vn0;
  const kl_real ts = xs / vs;
  const kl_real horizon = KL_ISTEP_HORIZON * ts;
  kl_real t = 0.0, x = 0.0, v = v0;
  o.fpeak = kl_istep_force(L, 0.0, v0);
  /* first step: 1e-3 of the natural time, or of the time the force at impact takes to stop the body */
  kl_real h = 1e-3 * ts;
  if (o.fpeak > 0.0 && mb * v0 / o.fpeak < ts) h = 1e-3 * mb * v0 / o.fpeak;
  const kl_real hmin = 1e-14 * ts;
  kl_real hend = 0.0;
  for (;;) {
    if (o.nsteps + o.nrej >= KL_ISTEP_MAXSTEPS) {
      o.status = KL_ISTEP_NOCONV;
      return o;
    }
    if (t > horizon) {
      o.status = KL_ISTEP_SETTLES;
      return o;
    }
    const kl_real xn = o.dmax > 1e-2 * xs ? o.dmax : 1e-2 * xs;
    const kl_real fn = o.fpeak > 1e-2 * fs ? o.fpeak : 1e-2 * fs;
    kl_real F0;
    const kl_kv_sys s = kl_istep_linearise(L, mb, fe, x, v, xs, vs, &F0);
    /* at most half a radian of the linearised oscillation per step: the events and the force peak are found
     * from signs at a step's ends and middle, which one sign change in a step keeps exact (a linear law has
     * no remainder and would otherwise take arbitrarily long steps past them) */
    if (s.K > 0.0 && h * sqrt(s.K / mb) > 0.5) h = 0.5 / sqrt(s.K / mb);
    /* leaving through d = 0: the force's singularity there (d^n1, d^n2) sets the step as at the start,
     * mirrored (engine/ball.c): half the time to it per step, and once that is as short as the first step,
     * straight past it (the step is then taken again to land on it) */
    if (v < 0.0 && x > 0.0 && hend > 0.0) {
      const kl_real tsep = x / -v;
      h = tsep < hend ? 2.0 * tsep : kl_istep_min(h, kl_istep_max(0.5 * tsep, hend));
    }
    int landing = 0, ev = 0;
    kl_real hnext = h, te = h;
    kl_kv_poly dense;
    kl_kv_out fin;
    for (;;) {
      kl_xrb w;
      const kl_kv_out u2 = kl_xrb_begin(&w, s, x, v, h);
      const kl_kv_out u3 = kl_xrb_stage3(&w, kl_istep_rest(L, s, F0, x, v, u2.x, u2.v));
      const kl_kv_out x3 = kl_xrb_order4(&w, kl_istep_rest(L, s, F0, x, v, u3.x, u3.v));
      const kl_kv_out xm = kl_xrb_mid(&w);
      kl_kv_out er;
      fin = kl_xrb_end(&w, kl_istep_rest(L, s, F0, x, v, xm.x, xm.v), kl_istep_rest(L, s, F0, x, v, x3.x, x3.v),
                       kl_istep_rest_rate(L, s, mb, fe, x3.x, x3.v, xs, vs), &dense, &er);
      const kl_real ef = fabs(kl_istep_force(L, fin.x, fin.v) - kl_istep_force(L, x3.x, x3.v)) / fn;
      kl_real err = kl_istep_max(kl_istep_max(fabs(er.x) / xn, fabs(er.v) / vs), ef) / KL_ISTEP_TOL;
      if (!kl_finite(err)) err = 1e30;
      if (!(err <= 1.0) && !landing) {
        if (!(h > hmin)) { /* the shortest step still misses the tolerance: no result rather than a wrong one */
          o.status = KL_ISTEP_NOCONV;
          return o;
        }
        h = kl_istep_max(kl_xrb_next_h(h, err), hmin);
        o.nrej++;
        if (o.nsteps + o.nrej >= KL_ISTEP_MAXSTEPS) break;
        continue;
      }
      if (!landing) hnext = kl_xrb_next_h(h, err);
      /* events inside the step, earliest first, on its dense output */
      ev = 0;
      te = h;
      kl_real tr;
      if ((fin.x <= 0.0 || u2.x <= 0.0 || u3.x <= 0.0) &&
          kl_kv_poly_first_root(dense, x, v, 1.0, 0.0, 0.0, 0.0, h, &tr)) {
        te = tr;
        ev = 1;
      }
      /* the unclamped force changing sign (checked at 0, h/2, h; bisection on the first change) */
      const int p0 = kl_istep_pushing(L, x, v);
      const kl_kv_out md = kl_kv_apply(dense, w.bh2, x, v);
      const int pm = kl_istep_pushing(L, md.x, md.v), ph = kl_istep_pushing(L, fin.x, fin.v);
      if (pm != p0 || ph != p0) {
        kl_real a = 0.0, b = pm != p0 ? 0.5 * h : h;
        for (int it = 0; it < 80 && b - a > 1e-13 * h; ++it) {
          const kl_real c = 0.5 * (a + b);
          const kl_kv_out q = kl_kv_poly_step(dense, x, v, c);
          if (kl_istep_pushing(L, q.x, q.v) == p0)
            a = c;
          else
            b = c;
        }
        if (b < te) {
          te = b;
          ev = p0 ? 2 : 3;
        }
      }
      /* an event well inside: the law is not smooth there, so the step is taken again to end just past it */
      if (ev && !landing && te > 0.0 && te < h * (1.0 - 1e-9)) {
        h = te * (1.0 + 1e-9);
        landing = 1;
        continue;
      }
      break;
    }
    if (o.nsteps + o.nrej >= KL_ISTEP_MAXSTEPS) {
      o.status = KL_ISTEP_NOCONV;
      return o;
    }
    o.nsteps++;
    const int ends = ev == 1 || (ev == 2 && force_rule);
    const kl_real hc = ends ? te : h;
    const kl_kv_out e = ends ? kl_kv_poly_step(dense, x, v, te) : fin;
    if (tq >= 0.0 && tq <= t + hc) {
      const kl_kv_out q = kl_kv_poly_step(dense, x, v, tq - t > 0.0 ? tq - t : 0.0);
      o.xq = q.x;
      o.vq = q.v;
      return o;
    }
    /* extrema over [0, hc]: ends, maximum penetration (v = 0), an interior force peak */
    if (e.x > o.dmax) {
      o.dmax = e.x;
      o.tmax = t + hc;
    }
    kl_real tr;
    if (v > 0.0 && e.v <= 0.0 && kl_kv_poly_first_root(dense, x, v, 0.0, 1.0, 0.0, 0.0, hc, &tr)) {
      const kl_real xr = kl_kv_poly_step(dense, x, v, tr).x;
      if (xr >= o.dmax) {
        o.dmax = xr;
        o.tmax = t + tr;
      }
    }
    const kl_real Fe = kl_istep_force(L, e.x, e.v);
    if (Fe > o.fpeak) o.fpeak = Fe;
    const kl_real g0 = kl_istep_dfdt(L, x, v, (fe - F0) / mb);
    const kl_real gh = kl_istep_dfdt(L, e.x, e.v, (fe - Fe) / mb);
    if (g0 > 0.0 && !(gh > 0.0)) {
      kl_real a = 0.0, b = hc;
      for (int it = 0; it < 80 && b - a > 1e-13 * hc; ++it) {
        const kl_real c = 0.5 * (a + b);
        const kl_kv_out q = kl_kv_poly_step(dense, x, v, c);
        const kl_real fq = kl_istep_force(L, q.x, q.v);
        if (kl_istep_dfdt(L, q.x, q.v, (fe - fq) / mb) > 0.0)
          a = c;
        else
          b = c;
      }
      const kl_kv_out q = kl_kv_poly_step(dense, x, v, 0.5 * (a + b));
      const kl_real fq = kl_istep_force(L, q.x, q.v);
      if (fq > o.fpeak) o.fpeak = fq;
    }
    if (ends) {
      o.tc = t + te;
      o.vexit = e.v;
      o.xq = e.x;
      o.vq = e.v;
      return o;
    }
    t += hc;
    x = e.x;
    v = e.v;
    if (hend == 0.0) hend = hc;
    h = hnext;
    /* pressed in: the energy 1/2 mb v^2 + k d^(n1+1)/(n1+1) - fe d never increases (the law dissipates) and is
     * >= 0 at d = 0, so once below 0 the body cannot leave (penetration rule) */
    if (!force_rule && fe > 0.0 &&
        0.5 * mb * v * v + L.k * kl_gen_pow(x, L.n1 + 1.0) / (L.n1 + 1.0) - fe * x < -1e-12 * fe * xs) {
      o.status = KL_ISTEP_SETTLES;
      return o;
    }
  }
}

#endif
