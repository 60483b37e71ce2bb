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

#endif
