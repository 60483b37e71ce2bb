/* kernels/kl_xrb.h: the step of every nonlinear (Hunt-Crossley) contact in kelvin: the ball, the 3-D
 * engine, the grinding rollout and its verification. One step of the exponential Rosenbrock method
 * exprb43 (Hochbruck, Ostermann and Schweitzer, SIAM J. Numer. Anal. 47 (2009) 786-803: order 4, with an
 * embedded order-3 solution for the error estimate) for a 1-D second-order system
 *     m x'' = F(t, x, x').
 * About the step start (t0, x0, v0) the caller linearises F as f0 + f1 tau - K x - D x' (tau = t - t0;
 * K, D the partial derivatives of -F, f1 its time derivative at fixed state), so that the remainder
 *     r(tau, x, x') = F(t0 + tau, x, x') - (f0 + f1 tau - K x - D x')
 * vanishes with its first derivatives at the start. The linear part is advanced exactly (kl_kv_step,
 * paper eq. 4); along the step the remainder is replaced by the cubic p(tau) with p(0) = p'(0) = 0 that
 * takes its values r2 and r3 at two stages:
 *     U2 = the linear solution at h/2,  U3 = the linear solution with the constant extra force r2, at h,
 *     p(s h) = r2 (8 s^2 - 8 s^3) + r3 (2 s^3 - s^2),   s in [0, 1].
 * This is exprb43's weights 16 phi3 - 48 phi4 and 12 phi4 - 2 phi3 of the stage remainders, written as
 * the force whose exact response they are (h phi_k(hJ) b is the response to b s^{k-1}/(k-1)!). The
 * embedded order-3 solution has (8 r2 - r3) s^2 instead, so the error estimate is the response from rest
 * to the difference (2 r3 - 8 r2) s^3. The solution at any tau in [0, h] is the linear system under the
 * cubic force at tau: the step's dense output, of the same order (the cubic matches the remainder along
 * the step to O(h^4)); events and extrema inside the step are located on it. A linear F (Kelvin-Voigt)
 * has no remainder and the step is exact. Common subset of C17 and OpenCL C 1.2.
 *
 * Use: U2 = kl_xrb_begin(&w, sys, x0, v0, h); r2 = remainder at (h/2, U2);
 *      U3 = kl_xrb_stage3(&w, r2);           r3 = remainder at (h, U3);
 *      end = kl_xrb_end(&w, r3, &dense, &err);   then kl_kv_cub_step(dense, x0, v0, tau) for tau <= h. */
#ifndef KL_XRB_H
#define KL_XRB_H
#include "kl_common.h"
#include "kl_contact_kv.h"
#include "kl_contact_hc.h"

/* One step in progress. */
typedef struct kl_xrb {
  kl_kv_sys s;    /* the linearised system about the start (affine force) */
  kl_real x0, v0; /* start state */
  kl_real h;      /* step length */
  kl_real r2;     /* remainder at stage 2 */
  kl_kv_bas bh;   /* the basis at h, shared by stage 3, the solution and the error */
} kl_xrb;

/* Start a step of length h > 0 from (x0, v0) on the linearised system s: returns stage 2,
 * the state at h/2, where the caller evaluates the remainder r2. */
KL_FN kl_kv_out kl_xrb_begin(kl_xrb *w, kl_kv_sys s, kl_real x0, kl_real v0, kl_real h)
{
  w->s = s;
  w->x0 = x0;
  w->v0 = v0;
  w->h = h;
  w->r2 = 0.0;
  w->bh = kl_kv_bas_at(s, h);
  return kl_kv_step(s, x0, v0, 0.5 * h);
}

/* Stage 3, the state at h under the extra constant force r2 (the remainder at stage 2), where the caller
 * evaluates the remainder r3. */
KL_FN kl_kv_out kl_xrb_stage3(kl_xrb *w, kl_real r2)
{
  w->r2 = r2;
  kl_kv_cub c3 = kl_kv_cub_of(w->s);
  c3.s.f0 += r2;
  return kl_kv_apply(c3, w->bh, w->x0, w->v0);
}

/* Finish with the remainder r3 at stage 3: returns the order-4 state at h; *dense receives the system whose
 * solution from (x0, v0) is the step's dense output on [0, h], *err the difference between the order-4 and
 * the order-3 solution at h (its x, v, and J: the impulse part). */
KL_FN kl_kv_out kl_xrb_end(kl_xrb *w, kl_real r3, kl_kv_cub *dense, kl_kv_out *err)
{
  const kl_real h = w->h, ih = 1.0 / h;
  const kl_real ih2 = ih * ih;
  kl_kv_cub d = kl_kv_cub_of(w->s);
  d.f2 = (8.0 * w->r2 - r3) * ih2;
  d.f3 = (2.0 * r3 - 8.0 * w->r2) * ih2 * ih;
  *dense = d;
  kl_kv_cub e = d;
  e.s.f0 = 0.0;
  e.s.f1 = 0.0;
  e.f2 = 0.0;
  *err = kl_kv_apply(e, w->bh, 0.0, 0.0);
  return kl_kv_apply(d, w->bh, w->x0, w->v0);
}

/* Acceleration of the dense output at the state (x, v) reached at tau: (f(tau) - K x - D v) / m. */
KL_FN kl_real kl_xrb_acc(kl_kv_cub c, kl_real tau, kl_real x, kl_real v)
{
  return (c.s.f0 + tau * (c.s.f1 + tau * (c.f2 + tau * c.f3)) - c.s.K * x - c.s.D * v) / c.s.m;
}

/* The peak of the Hunt-Crossley force F = K x^n (1 + chi x') along a step's dense output (dense, from
 * (x0, v0), tau in [0, h], ending at (xe, ve)): where dF/dtau = K x^{n-1} [n x' (1 + chi x') + chi x x''] turns from
 * positive to not positive inside the step. Returns 1 with the force and penetration there, else 0.
 * Illinois on G = n x' (1 + chi x') + chi x x'' (the sign of dF/dtau for x > 0) to a relative 1e-12 of h:
 * the force is flat at its peak, so the time's error enters the force squared. */
KL_FN int kl_xrb_hc_peak(kl_kv_cub dense, kl_real x0, kl_real v0, kl_real h, kl_real xe, kl_real ve, kl_real K,
                         kl_real n, kl_real chi, kl_real *Fpk, kl_real *xpk)
{
  if (!(x0 > 0.0 && xe > 0.0)) return 0;
  const kl_real g0 = n * v0 * (1.0 + chi * v0) + chi * x0 * kl_xrb_acc(dense, 0.0, x0, v0);
  if (!(g0 > 0.0)) return 0;
  const kl_real gh = n * ve * (1.0 + chi * ve) + chi * xe * kl_xrb_acc(dense, h, xe, ve);
  if (gh > 0.0) return 0;
  kl_real a = 0.0, fa = g0, b = h, fb = gh;
  int side = 0;
  for (int it = 0; it < 100 && b - a > 1e-12 * h; ++it) {
    const kl_real c = kl_illinois_point(a, fa, b, fb);
    const kl_kv_out o = kl_kv_cub_step(dense, x0, v0, c);
    const kl_real fc = n * o.v * (1.0 + chi * o.v) + chi * o.x * kl_xrb_acc(dense, c, o.x, o.v);
    kl_illinois_update(&a, &fa, &b, &fb, c, fc, fc > 0.0, &side);
  }
  const kl_real tp = (fabs(fa) < fabs(fb)) ? a : b;
  const kl_kv_out e = kl_kv_cub_step(dense, x0, v0, tp);
  *xpk = e.x;
  *Fpk = kl_hc_force(K, n, chi, e.x, e.v);
  return 1;
}

/* Next step length from an accepted (or rejected) step of length h with error norm err (1 = at the
 * tolerance): the order-3 estimate scales as h^4; safety 0.9, growth at most 4, shrinking at most 5. */
KL_FN kl_real kl_xrb_next_h(kl_real h, kl_real err)
{
  const kl_real e = err > 1e-300 ? err : 1e-300;
  kl_real f = 0.9 * sqrt(sqrt(1.0 / e));
  if (f > 4.0) f = 4.0;
  if (f < 0.2) f = 0.2;
  return h * f;
}

#endif
