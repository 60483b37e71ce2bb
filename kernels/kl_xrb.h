/* kernels/kl_xrb.h: the step of every nonlinear (Hunt-Crossley) contact in kelvin: the ball, the 3-D
 * engine, the grinding rollout and its verification. An exponential integrator of a 1-D second-order
 * system
 *     m x'' = F(t, x, x'),
 * linearised about the step start (t0, x0, v0) as f0 + f1 tau - K x - D x' (tau = t - t0; K, D the
 * partial derivatives of -F, f1 its time derivative at fixed state), so that the remainder
 *     r(tau, x, x') = F(t0 + tau, x, x') - (f0 + f1 tau - K x - D x')
 * vanishes with its first derivatives at the start. The linear part is advanced exactly (kl_kv_step,
 * paper eq. 4) and the remainder along the step enters as a polynomial force p(tau) with p(0) = p'(0) = 0:
 *   1. exprb43 (Hochbruck, Ostermann and Schweitzer, SIAM J. Numer. Anal. 47 (2009) 786-803), order 4:
 *      stage U2 = the linear solution at h/2, U3 = the linear solution under the extra constant force r2,
 *      at h, with r2, r3 the remainders there, and the cubic
 *        p3(s h) = r2 (8 s^2 - 8 s^3) + r3 (2 s^3 - s^2),   s in [0, 1]
 *      (exprb43's weights 16 phi3 - 48 phi4 and 12 phi4 - 2 phi3 written as the force whose exact
 *      response they are: h phi_k(hJ) b is the response to b s^{k-1}/(k-1)!). Its solution X3 is of
 *      order 4 on all of [0, h].
 *   2. A correction to order 5: the remainder is evaluated again along X3, at h/2 (value A) and at h
 *      (value B and rate C = dr/dtau), where X3 is accurate to O(h^5) and r, flat at the start, is
 *      O(h) sensitive to the state; the quartic p4 with p4(0) = p4'(0) = 0, p4(h/2) = A, p4(h) = B,
 *      p4'(h) = C matches the remainder along the step to O(h^5), so its solution X4 is of order 5.
 * The difference X4 - X3 at h is the error estimate (of the order-4 solution: it sees both the
 * interpolation error and exprb43's stage errors, which its own embedded order-3 estimate does not);
 * X4 is propagated. The solution at any tau in [0, h] is the linear system under p4 at tau: the step's
 * dense output, of the same order; events and extrema inside the step are located on it. A linear F
 * (Kelvin-Voigt) has no remainder and the step is exact. Common subset of C17 and OpenCL C 1.2.
 *
 * Use: U2 = kl_xrb_begin(&w, sys, x0, v0, h);   r2 = remainder at (h/2, U2);
 *      U3 = kl_xrb_stage3(&w, r2);               r3 = remainder at (h, U3);
 *      X3 = kl_xrb_order4(&w, r3);  M = kl_xrb_mid(&w);
 *                                    A = remainder at (h/2, M); B, C = remainder and its rate at (h, X3);
 *      X4 = kl_xrb_end(&w, A, B, C, &dense, &err);   then kl_kv_poly_step(dense, x0, v0, tau), tau <= h. */
#ifndef KL_XRB_H
#define KL_XRB_H
#include "kl_common.h"
#include "kl_contact_kv.h"
#include "kl_contact_hc.h"

/* One step in progress. */
typedef struct kl_xrb {
  kl_kv_sys s;     /* the linearised system about the start (affine force) */
  kl_real x0, v0;  /* start state */
  kl_real h;       /* step length */
  kl_real r2;      /* remainder at stage 2 */
  kl_kv_bas bh2, bh; /* the bases at h/2 and h, shared by the stages, the solutions and the error */
  kl_kv_poly p3;   /* exprb43's force (order 4) */
  kl_kv_out x3;    /* its solution at h */
} kl_xrb;

/* Start a step of length h > 0 from (x0, v0) on the linearised system s: returns stage 2, the state at
 * h/2, where the caller evaluates the remainder r2. */
KL_FN_HOT kl_kv_out kl_xrb_begin(kl_xrb *w, kl_kv_sys s, kl_real x0, kl_real v0, kl_real h)
{
  w->s = s;
  w->x0 = x0;
  w->v0 = v0;
  w->h = h;
  w->r2 = 0.0;
  w->bh2 = kl_kv_bas_at(s, 0.5 * h);
  w->bh = kl_kv_bas_at(s, h);
  return kl_kv_apply(kl_kv_poly_of(s), w->bh2, x0, v0);
}

/* Stage 3, the state at h under the extra constant force r2 (the remainder at stage 2), where the caller
 * evaluates the remainder r3. */
KL_FN_HOT kl_kv_out kl_xrb_stage3(kl_xrb *w, kl_real r2)
{
  w->r2 = r2;
  kl_kv_poly c3 = kl_kv_poly_of(w->s);
  c3.s.f0 += r2;
  return kl_kv_apply(c3, w->bh, w->x0, w->v0);
}

/* exprb43's solution at h from the remainder r3 at stage 3 (order 4). */
KL_FN_HOT kl_kv_out kl_xrb_order4(kl_xrb *w, kl_real r3)
{
  const kl_real ih = 1.0 / w->h;
  const kl_real ih2 = ih * ih;
  kl_kv_poly d = kl_kv_poly_of(w->s);
  d.f2 = (8.0 * w->r2 - r3) * ih2;
  d.f3 = (2.0 * r3 - 8.0 * w->r2) * ih2 * ih;
  w->p3 = d;
  w->x3 = kl_kv_apply(d, w->bh, w->x0, w->v0);
  return w->x3;
}

/* exprb43's dense output at h/2 (after kl_xrb_order4). */
KL_FN kl_kv_out kl_xrb_mid(const kl_xrb *w) { return kl_kv_apply(w->p3, w->bh2, w->x0, w->v0); }

/* The rate C = dr/dtau of the remainder along a solution at (tau, v, a), from the partial derivatives of
 * the true F there: dFdx = dF/dx, dFdv = dF/dx', dFdt its explicit time derivative. */
KL_FN kl_real kl_xrb_rate(kl_kv_sys s, kl_real v, kl_real a, kl_real dFdx, kl_real dFdv, kl_real dFdt)
{
  return (dFdt - s.f1) + (dFdx + s.K) * v + (dFdv + s.D) * a;
}

/* The order-5 solution at h from the remainder A at h/2 and B, C (value and rate) at h along
 * exprb43's solution: returns it; *dense receives the system whose solution from (x0, v0) is the step's
 * dense output on [0, h], *err the order-5 less the order-4 solution at h (x, v, J). */
KL_FN kl_kv_out kl_xrb_end(kl_xrb *w, kl_real A, kl_real B, kl_real C, kl_kv_poly *dense, kl_kv_out *err)
{
  /* p4(s h) = c2 s^2 + c3 s^3 + c4 s^4 through p4(h/2) = A, p4(h) = B, h p4'(h) = C h */
  const kl_real h = w->h, ih = 1.0 / h, Ch = C * h;
  const kl_real ih2 = ih * ih;
  const kl_real c4 = 2.0 * Ch - 8.0 * B + 16.0 * A;
  const kl_real c3 = -3.0 * Ch + 14.0 * B - 32.0 * A;
  const kl_real c2 = Ch - 5.0 * B + 16.0 * A;
  kl_kv_poly d = kl_kv_poly_of(w->s);
  d.f2 = c2 * ih2;
  d.f3 = c3 * ih2 * ih;
  d.f4 = c4 * ih2 * ih2;
  *dense = d;
  const kl_kv_out x4 = kl_kv_apply(d, w->bh, w->x0, w->v0);
  err->x = x4.x - w->x3.x;
  err->v = x4.v - w->x3.v;
  err->dx = x4.dx - w->x3.dx;
  err->dv = x4.dv - w->x3.dv;
  err->J = x4.J - w->x3.J;
  return x4;
}

/* Acceleration of the dense output at the state (x, v) reached at tau: (f(tau) - K x - D v) / m. */
KL_FN kl_real kl_xrb_acc(kl_kv_poly c, kl_real tau, kl_real x, kl_real v)
{
  return (c.s.f0 + tau * (c.s.f1 + tau * (c.f2 + tau * (c.f3 + tau * c.f4))) - c.s.K * x - c.s.D * v) / c.s.m;
}

/* The peak of the Hunt-Crossley force F = K x^n (1 + chi x') along a step's dense output (dense, from
 * (x0, v0), tau in [0, h], ending at (xe, ve)): where dF/dtau = K x^{n-1} [n x' (1 + chi x') + chi x x''] turns from
 * positive to not positive inside the step. Returns 1 with the force and penetration there, else 0.
 * Illinois on G = n x' (1 + chi x') + chi x x'' (the sign of dF/dtau for x > 0) to a relative 1e-12 of h:
 * the force is flat at its peak, so the time's error enters the force squared. */
KL_FN int kl_xrb_hc_peak(kl_kv_poly dense, kl_real x0, kl_real v0, kl_real h, kl_real xe, kl_real ve, kl_real K,
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
    const kl_kv_out o = kl_kv_poly_step(dense, x0, v0, c);
    const kl_real fc = n * o.v * (1.0 + chi * o.v) + chi * o.x * kl_xrb_acc(dense, c, o.x, o.v);
    kl_illinois_update(&a, &fa, &b, &fb, c, fc, fc > 0.0, &side);
  }
  const kl_real tp = (fabs(fa) < fabs(fb)) ? a : b;
  const kl_kv_out e = kl_kv_poly_step(dense, x0, v0, tp);
  *xpk = e.x;
  *Fpk = kl_hc_force(K, n, chi, e.x, e.v);
  return 1;
}

/* Next step length from an accepted (or rejected) step of length h with error norm err (1 = at the
 * tolerance): the estimate (of the order-4 solution) scales as h^5; safety 0.9, growth at most 4,
 * shrinking at most 5. */
KL_FN kl_real kl_xrb_next_h(kl_real h, kl_real err)
{
  const kl_real e = err > 1e-300 ? err : 1e-300;
  kl_real f = 0.9 * kl_powr(e, -0.2);
  if (f > 4.0) f = 4.0;
  if (f < 0.2) f = 0.2;
  return h * f;
}

#endif
