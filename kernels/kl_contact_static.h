/* kernels/kl_contact_static.h: one contact description (model, law, K, n, D, chi) and its static
 * relations, written once for every caller: the device model's preparation (optimiser/problem.c), the
 * Levenberg-Marquardt steps (optimiser/lm.c), the 3-D verification (optimiser/verify3d.c), the engine's
 * tolerance scale (benchmarks/grind_twin.c), `kelvin check` and the report (through kelvin_grind_contact).
 *
 * At rest a contact carries F = K delta^n (Kelvin-Voigt: n = 1, F = K delta; Hunt-Crossley: the damping
 * term vanishes at rest, docs/design.md section 2.1), so its static depth at a force F > 0 is
 * delta = (F/K)^(1/n) and its compliance d(delta)/dF = delta / (n F) (Hertz, n = 1.5: (F/K)^(2/3) / (1.5 F);
 * a disc's line contact, n = 1: 1/K). In series with a holder of stiffness K_h the contact's share of the
 * compliance is c / (c + 1/K_h).
 *
 * Common subset of C17 and OpenCL C 1.2 (kl_common.h), like the other closed-form headers. */
#ifndef KL_CONTACT_STATIC_H
#define KL_CONTACT_STATIC_H
#include "kl_common.h"
#include "kl_impact.h" /* KL_MODEL_* */
#include "kl_contact_gen.h"
#include "kl_xrb.h"

/* A contact as the static relations and the dynamics need it. */
typedef struct kl_contact_desc {
  int model;   /* KL_MODEL_KV or KL_MODEL_HC */
  int law;     /* damping law of the Hunt-Crossley family (KL_LAW_*; unused for Kelvin-Voigt) */
  kl_real K;   /* stiffness [N/m^n] */
  kl_real n;   /* exponent: 1 for Kelvin-Voigt, 1.5 for a Hertz point, 1 for a disc's line contact */
  kl_real D;   /* Kelvin-Voigt damping [N s/m] (0 for Hunt-Crossley) */
  kl_real chi; /* Hunt-Crossley damping factor [s/m] (0 for Kelvin-Voigt) */
  kl_gen_law gen; /* KL_MODEL_GEN: the law's five constants (k, c, n1, n2, m); then K = gen.k and n = gen.n1, so
                   * the static relations below are those of its elastic part k d^n1 (the rate term vanishes at
                   * rest) */
} kl_contact_desc;

/* Static depth delta [m] at the force F [N]: (F/K)^(1/n), F/K for Kelvin-Voigt; 0 for F <= 0. */
KL_FN kl_real kl_contact_static_depth(kl_contact_desc c, kl_real F)
{
  if (!(F > 0.0)) return 0.0;
  return c.model == KL_MODEL_KV ? F / c.K : pow(F / c.K, 1.0 / c.n);
}

/* Static force F [N] at the depth d [m]: K d^n, K d for Kelvin-Voigt; 0 for d <= 0. */
KL_FN kl_real kl_contact_static_force(kl_contact_desc c, kl_real d)
{
  if (!(d > 0.0)) return 0.0;
  return c.model == KL_MODEL_KV ? c.K * d : c.K * pow(d, c.n);
}

/* Compliance d(delta)/dF [m/N] at the force F [N]: delta / (n F); 1/K for Kelvin-Voigt and n = 1; for
 * n > 1 and F <= 0 the tangent is vertical: KL_HUGE. */
KL_FN kl_real kl_contact_compliance(kl_contact_desc c, kl_real F)
{
  if (c.model == KL_MODEL_KV || c.n == 1.0) return 1.0 / c.K;
  if (!(F > 0.0)) return KL_HUGE;
  return kl_contact_static_depth(c, F) / (c.n * F);
}

/* The contact's share of the compliance at the force F in series with a holder of stiffness Kh [N/m]:
 * c / (c + 1/Kh), c = kl_contact_compliance(c, F); in [0, 1]. */
KL_FN kl_real kl_contact_share(kl_contact_desc c, kl_real F, kl_real Kh)
{
  const kl_real cc = kl_contact_compliance(c, F);
  return cc / (cc + 1.0 / Kh);
}

/* The general law inside a contact (kernels/kl_contact_gen.h), for the exponential step of kernels/kl_xrb.h.
 * The force at d <= 0 is the limit d -> 0+, so that a contact starting at d = 0 starts with the law's force
 * there: c sgn(dd)|dd|^m for n2 = 0 (the force jumps at contact), else 0 (docs/design.md section 3). */
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
 * d >= dfloor (the caller's scales, > 0), kt is kept >= 0 (the linear system stays an oscillator, as
 * kl_hc_tangent does). Any finite tangent keeps the step correct: the remainder carries the rest, and the
 * error control keeps the step honest; these bounds only keep the linear part finite. */
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
 * to a relative 1e-12 of h, as kl_xrb_hc_peak does for Hunt-Crossley. Returns 1 with the force there, else 0. */
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

#ifndef __OPENCL_VERSION__
#include <stdio.h>
/* Host only: what is wrong with the general law's constants, the library's one check of them (every reader
 * names its file, line and field around it; magnitudes are checked by optimiser/problem.c): 0 if nothing, else
 * the field (1 k, 2 c, 3 n1, 4 n2, 5 m) with msg "<field>: <why>, got <value>". k > 0 and c >= 0 finite;
 * n1 in (0, 5], n2 in [0, 5], m in (0, 5] (Hunt-Crossley has n1 = n2 = 1.5 or 1, m = 1; soft contacts up to
 * about 3). */
static inline int kl_gen_law_bad(kl_gen_law L, char *msg, int cap)
{
  if (!(isfinite(L.k) && L.k > 0)) return snprintf(msg, (size_t)cap, "k: the stiffness must be > 0, got %g", L.k), 1;
  if (!(isfinite(L.c) && L.c >= 0)) return snprintf(msg, (size_t)cap, "c: the damping must be >= 0, got %g", L.c), 2;
  if (!(isfinite(L.n1) && L.n1 > 0 && L.n1 <= 5))
    return snprintf(msg, (size_t)cap, "n1: the elastic exponent must be in (0, 5], got %g", L.n1), 3;
  if (!(isfinite(L.n2) && L.n2 >= 0 && L.n2 <= 5))
    return snprintf(msg, (size_t)cap, "n2: the damping's exponent of d must be in [0, 5], got %g", L.n2), 4;
  if (!(isfinite(L.m) && L.m > 0 && L.m <= 5))
    return snprintf(msg, (size_t)cap, "m: the rate exponent must be in (0, 5], got %g", L.m), 5;
  return 0;
}
#endif

#endif
