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

#endif
