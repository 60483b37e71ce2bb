/* kernels/kl_contact_gen.h: the generalised soft-contact law (docs/design.md section 2.5)
 *     F = k d^n1 + c sgn(d') |d'|^m d^n2   for d > 0, kept >= 0 (no tension); 0 for d <= 0,
 * as used for soft and granular contacts (e.g. Ding et al., Simulation Modelling Practice and Theory 2016,
 * the foot-terrain model of a hexapod on soft terrain). Hunt-Crossley is m = 1, n2 = n1, c = k chi;
 * Kelvin-Voigt n1 = 1, m = 1, n2 = 0 (with no tension: the force separation rule).
 * The one place of the law: force and partial derivatives, shared by C and OpenCL C (common subset of C17
 * and OpenCL C 1.2). */
#ifndef KL_CONTACT_GEN_H
#define KL_CONTACT_GEN_H
#include "kl_common.h"
#include "kl_math.h"
#include "kl_xrb.h" /* kl_xrb_gen_peak: the step's dense output */

/* x^n for x > 0 (1 for n = 0): kl_pown's exact shortcuts (1, 1.5, 2, 2.5), else kl_powr, whose arithmetic
 * is the same on the host and the device (kernels/kl_math.h), so that a step through the law takes the same
 * decisions in the OpenCL kernel and the OpenMP twin (library pow differs by ulps between them). */
KL_FN kl_real kl_gen_pow(kl_real x, kl_real n)
{
  if (n == 0.0) return 1.0;
  if (n == 1.0 || n == 1.5 || n == 2.0 || n == 2.5) return kl_pown(x, n);
  return kl_powr(x, n);
}

/* The law's constants: k [N/m^n1], c [N (s/m)^m / m^n2], exponents n1 > 0, n2 >= 0, m > 0. */
typedef struct kl_gen_law {
  kl_real k, c, n1, n2, m;
} kl_gen_law;

/* sgn(v) |v|^m */
KL_FN kl_real kl_gen_rate_pow(kl_real v, kl_real m)
{
  if (v == 0.0) return 0.0;
  const kl_real a = kl_gen_pow(v < 0.0 ? -v : v, m);
  return v < 0.0 ? -a : a;
}

/* The force at penetration d and rate dd. The elastic part k d^n1 and the dissipative part
 * c sgn(dd) |dd|^m d^n2 are summed, then clamped at 0 (the law pulls no tension). */
KL_FN kl_real kl_gen_force(kl_gen_law L, kl_real d, kl_real dd)
{
  if (!(d > 0.0)) return 0.0;
  const kl_real f = L.k * kl_gen_pow(d, L.n1) + L.c * kl_gen_rate_pow(dd, L.m) * kl_gen_pow(d, L.n2);
  return f > 0.0 ? f : 0.0;
}

/* The force and its partial derivatives kt = dF/dd, ct = dF/dd' where the force is positive (0 where it is
 * clamped or d <= 0): kt = k n1 d^(n1-1) + c n2 sgn(dd)|dd|^m d^(n2-1), ct = c m |dd|^(m-1) d^n2.
 * ct is unbounded at dd = 0 for m < 1 and kt at d -> 0 for n1 < 1 or n2 < 1: a step that linearises the
 * law (kernels/kl_xrb.h) must bound what it takes from them; these are the exact derivatives. */
KL_FN kl_real kl_gen_tangent(kl_gen_law L, kl_real d, kl_real dd, kl_real *kt, kl_real *ct)
{
  *kt = 0.0;
  *ct = 0.0;
  if (!(d > 0.0)) return 0.0;
  const kl_real dn1 = kl_gen_pow(d, L.n1), dn2 = kl_gen_pow(d, L.n2);
  const kl_real rp = kl_gen_rate_pow(dd, L.m);
  const kl_real f = L.k * dn1 + L.c * rp * dn2;
  if (!(f > 0.0)) return 0.0;
  *kt = L.k * L.n1 * dn1 / d + L.c * L.n2 * rp * dn2 / d;
  const kl_real ad = dd < 0.0 ? -dd : dd;
  *ct = ad > 0.0 ? L.c * L.m * (rp < 0.0 ? -rp : rp) / ad * dn2 : (L.m == 1.0 ? L.c * dn2 : (L.m > 1.0 ? 0.0 : INFINITY));
  return f;
}

/* The force inside a contact: kl_gen_force for d > 0, and at d <= 0 its limit d -> 0+, so that a contact
 * starting at d = 0 starts with the law's force there: c sgn(dd)|dd|^m for n2 = 0 (the force jumps at contact),
 * else 0 (docs/design.md section 3). The one force-with-limit of every caller: the engine, the ball, the
 * rollout and the sweep's step (kernels/kl_impact_step.h). */
KL_FN kl_real kl_gen_force_in(kl_gen_law L, kl_real d, kl_real dd)
{
  if (d > 0.0) return kl_gen_force(L, d, dd);
  if (L.n2 != 0.0) return 0.0;
  const kl_real f = L.c * kl_gen_rate_pow(dd, L.m);
  return f > 0.0 ? f : 0.0;
}

/* The force (kl_gen_force_in) and the tangents a linearisation takes from it: kl_gen_tangent's exact
 * derivatives, bounded. ct is unbounded at dd = 0 for m < 1, and kt at d -> 0 for n1 < 1 or n2 < 1 (and
 * undefined at d = 0, where an n2 = 0 contact starts with a jump): they are taken at |dd| >= vfloor and
 * d >= dfloor (the caller's scales, > 0), and kept >= 0 (the linear system stays an oscillator, as
 * kl_hc_tangent does; where damping dominates the exact kt may be negative); 0 where the force is 0. Any finite
 * tangent keeps the step correct: the remainder carries the rest, and the error control keeps the step honest;
 * these bounds only keep the linear part finite. The one bounded tangent of every caller (floors: the engine's
 * and the ball's in engine/, the rollout's in optimiser/problem.c, the sweep's in kernels/kl_impact_step.h). */
KL_FN kl_real kl_gen_lin_tangent(kl_gen_law L, kl_real d, kl_real dd, kl_real dfloor, kl_real vfloor, kl_real *kt,
                                 kl_real *ct)
{
  const kl_real F = kl_gen_force_in(L, d, dd);
  const kl_real de = d > dfloor ? d : dfloor;
  kl_real ve = dd;
  if (!(fabs(ve) >= vfloor)) ve = dd < 0.0 ? -vfloor : vfloor;
  kl_real a, b;
  kl_gen_tangent(L, de, ve, &a, &b);
  if (!(F > 0.0)) a = b = 0.0;
  *kt = (a > 0.0 && kl_finite(a)) ? a : 0.0;
  *ct = (b > 0.0 && kl_finite(b)) ? b : 0.0;
  return F;
}

/* The peak of the general law's force along a step's dense output (kernels/kl_xrb.h: dense, from (x0, v0),
 * tau in [0, h], ending at (xe, ve)): where dF/dtau = kt x' + ct x'' turns from positive to not positive
 * inside the step (exact tangents; where ct is infinite, x' = 0 for m < 1, the sign is that of x''). Illinois
 * to a relative 1e-12 of h, as kl_xrb_hc_peak does for Hunt-Crossley. Returns 1 with the force there, else 0.
 * The engine and the ball use it. The sweep's step (kernels/kl_impact_step.h) locates its peak differently in
 * substance and keeps its own: it takes the acceleration from the equation of motion, (fe - F)/m, not from the
 * dense output, evaluates dF/dt with |d'|^(m-1) rather than kl_gen_tangent's |d'|^m/|d'|, and bisects to 1e-13
 * of the step; the two agree to the step's tolerance, not to the bit, and the sweep's results (and its
 * parity with the OpenCL kernel) are those of its own. */
KL_FN kl_real kl_gen_rate_sign_(kl_gen_law L, kl_kv_poly dense, kl_real tau, kl_real x, kl_real v)
{
  kl_real kt, ct;
  const kl_real a = kl_xrb_acc(dense, tau, x, v);
  kl_gen_tangent(L, x, v, &kt, &ct);
  if (!kl_finite(ct)) return a;
  return kt * v + ct * a;
}

KL_FN int kl_xrb_gen_peak(kl_kv_poly dense, kl_real x0, kl_real v0, kl_real h, kl_real xe, kl_real ve, kl_gen_law L,
                          kl_real *Fpk)
{
  if (!(x0 > 0.0 && xe > 0.0)) return 0;
  const kl_real g0 = kl_gen_rate_sign_(L, dense, 0.0, x0, v0);
  if (!(g0 > 0.0)) return 0;
  const kl_real gh = kl_gen_rate_sign_(L, dense, h, xe, ve);
  if (gh > 0.0) return 0;
  kl_real a = 0.0, fa = g0, b = h, fb = gh;
  int side = 0;
  for (int it = 0; it < 100 && b - a > 1e-12 * h; ++it) {
    const kl_real c = kl_illinois_point(a, fa, b, fb);
    const kl_kv_out o = kl_kv_poly_step(dense, x0, v0, c);
    const kl_real fc = kl_gen_rate_sign_(L, dense, c, o.x, o.v);
    kl_illinois_update(&a, &fa, &b, &fb, c, fc, fc > 0.0, &side);
  }
  const kl_real tp = (fabs(fa) < fabs(fb)) ? a : b;
  const kl_kv_out e = kl_kv_poly_step(dense, x0, v0, tp);
  *Fpk = kl_gen_force_in(L, e.x, e.v);
  return 1;
}

/* The domain of the law's five constants, the one check of every reader (docs/design.md section 2.5): k > 0
 * and c >= 0 finite; n1 in (0, 5], n2 in [0, 5], m in (0, 5] (Hunt-Crossley has n1 = n2 = 1.5 or 1, m = 1;
 * soft contacts go up to about 3). Device-safe: returns 0 if all are good, else the first bad one's
 * KL_GEN_BAD_* (its index in k, c, n1, n2, m, from 1). The sweep (kl_impact_check), the ball, the engine, the
 * rollout's preparation, the config readers and the fit all call it (the host through kl_gen_law_bad). */
#define KL_GEN_BAD_K 1
#define KL_GEN_BAD_C 2
#define KL_GEN_BAD_N1 3
#define KL_GEN_BAD_N2 4
#define KL_GEN_BAD_M 5
#define KL_GEN_EXP_MAX 5.0 /* the exponents' upper bound */
KL_FN int kl_gen_law_check(kl_gen_law L)
{
  if (!(kl_finite(L.k) && L.k > 0.0)) return KL_GEN_BAD_K;
  if (!(kl_finite(L.c) && L.c >= 0.0)) return KL_GEN_BAD_C;
  if (!(kl_finite(L.n1) && L.n1 > 0.0 && L.n1 <= KL_GEN_EXP_MAX)) return KL_GEN_BAD_N1;
  if (!(kl_finite(L.n2) && L.n2 >= 0.0 && L.n2 <= KL_GEN_EXP_MAX)) return KL_GEN_BAD_N2;
  if (!(kl_finite(L.m) && L.m > 0.0 && L.m <= KL_GEN_EXP_MAX)) return KL_GEN_BAD_M;
  return 0;
}

#if !defined(__OPENCL_VERSION__) && !defined(__cplusplus) /* C hosts (benchmarks/flop_count.cpp redefines double) */
#include <stdio.h>
/* Host only: kl_gen_law_check with its message, msg "<field>: <why>, got <value>" (every reader names its file,
 * line and field around it; magnitudes are checked by optimiser/problem.c); returns the same code. */
static inline int kl_gen_law_bad(kl_gen_law L, char *msg, int cap)
{
  const int bad = kl_gen_law_check(L);
  switch (bad) {
  case KL_GEN_BAD_K: snprintf(msg, (size_t)cap, "k: the stiffness must be > 0, got %g", L.k); break;
  case KL_GEN_BAD_C: snprintf(msg, (size_t)cap, "c: the damping must be >= 0, got %g", L.c); break;
  case KL_GEN_BAD_N1:
    snprintf(msg, (size_t)cap, "n1: the elastic exponent must be in (0, %g], got %g", KL_GEN_EXP_MAX, L.n1);
    break;
  case KL_GEN_BAD_N2:
    snprintf(msg, (size_t)cap, "n2: the damping's exponent of d must be in [0, %g], got %g", KL_GEN_EXP_MAX, L.n2);
    break;
  case KL_GEN_BAD_M:
    snprintf(msg, (size_t)cap, "m: the rate exponent must be in (0, %g], got %g", KL_GEN_EXP_MAX, L.m);
    break;
  default: break;
  }
  return bad;
}
#endif

#endif
