/* kernels/kl_material.h: contact stiffness from materials and per-pair parameter blending.
 * Common subset of C17 and OpenCL C 1.2. */
#ifndef KL_MATERIAL_H
#define KL_MATERIAL_H
#include "kl_common.h"

/* sigma_l = (1 - nu_l^2) / E_l, paper eq. (2); E [Pa], nu in (-1, 0.5]. */
KL_FN kl_real kl_sigma(kl_real E, kl_real nu) { return (1.0 - nu * nu) / E; }

/* Effective modulus E* = 1 / (sigma_i + sigma_j) [Pa]. */
KL_FN kl_real kl_estar(kl_real Ei, kl_real nui, kl_real Ej, kl_real nuj)
{
  return 1.0 / (kl_sigma(Ei, nui) + kl_sigma(Ej, nuj));
}

/* Hertz stiffness of a sphere of radius R on a plane, paper eq. (2): K = (4/3) E* sqrt(R)
 * [N/m^1.5] for F = K d^{3/2}. Two spheres: pass the effective radius of kl_radius_eff. */
KL_FN kl_real kl_hertz_K(kl_real estar, kl_real R) { return 4.0 / 3.0 * estar * sqrt(R); }

/* 1/R = 1/R_i + 1/R_j; a plane has R = infinity (pass 0 to mean "plane"). */
KL_FN kl_real kl_radius_eff(kl_real Ri, kl_real Rj)
{
  if (!(Rj > 0.0)) return Ri;
  if (!(Ri > 0.0)) return Rj;
  return Ri * Rj / (Ri + Rj);
}

/* Blending of per-body parameters (Klamp't practice, docs/design.md 2.4): restitution by arithmetic mean,
 * stiffness, damping and friction by harmonic mean (a zero on either side gives zero). */
KL_FN kl_real kl_blend_mean(kl_real a, kl_real b) { return 0.5 * (a + b); }
KL_FN kl_real kl_blend_harmonic(kl_real a, kl_real b)
{
  if (!(a > 0.0) || !(b > 0.0)) return 0.0;
  return 2.0 * a * b / (a + b);
}

#endif
