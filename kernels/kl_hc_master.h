/* kernels/kl_hc_master.h: the Hunt-Crossley master curves (docs/design.md section 2.3).
 * In the units d* = ((n+1) m v0^2 / (2K))^(1/(n+1)), t* = d* / v0, F* = K d*^n every Hunt-Crossley impact
 * without external force is a function of (n, zeta = chi v0) alone.
 * FIRST VERSION: the interface only; the values come from the closed forms and the quadrature of
 * kernels/kl_contact_hc.h in scaled units (m = v0 = 1, K = (n+1)/2, so d* = t* = 1). The fitted tables
 * (tools/gen_hc_master.py) replace the body.
 * Common subset of C17 and OpenCL C 1.2. */
#ifndef KL_HC_MASTER_H
#define KL_HC_MASTER_H
#include "kl_common.h"
#include "kl_contact_hc.h"

#define KL_HCM_N_LO 1.0
#define KL_HCM_N_HI 2.5
#define KL_HCM_ZETA_HI 32.0

/* 1 inside the domain of the master curves: n in [1, 2.5], zeta in [0, 32] */
KL_FN int kl_hc_master_in(kl_real n, kl_real zeta)
{
  return n >= KL_HCM_N_LO && n <= KL_HCM_N_HI && zeta >= 0.0 && zeta <= KL_HCM_ZETA_HI;
}

typedef struct kl_hc_scaled {
  kl_real dmax, tmax, fpeak, tc, cr_eff; /* dmax / d*, tmax / t*, fpeak / F*, tc / t*, cr_eff */
} kl_hc_scaled;

/* The scaled metrics at (n, zeta), inside the domain (kl_hc_master_in). */
KL_FN kl_hc_scaled kl_hc_master(kl_real n, kl_real zeta)
{
  kl_hc_scaled r;
  const kl_real K = 0.5 * (n + 1.0);
  kl_real trest, dpk;
  r.dmax = kl_hc_delta_max(1.0, K, n, zeta, 1.0);
  r.tmax = kl_hc_phase_times(r.dmax, zeta, 1.0, n, &trest);
  r.tc = r.tmax + trest;
  r.fpeak = kl_hc_peak_force(1.0, K, n, zeta, 1.0, r.dmax, &dpk) / K;
  r.cr_eff = kl_hc_cr_eff(zeta);
  return r;
}

#endif
