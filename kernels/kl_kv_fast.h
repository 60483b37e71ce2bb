/* kernels/kl_kv_fast.h: the Kelvin-Voigt impact without an external force (paper eq. 3, 4 and 10; kl_impact_kv
 * in kernels/kl_impact.h) as one straight-line function, for a loop over scenarios that the compiler
 * vectorises across them (the fast path, docs/design.md section 4): no loop, no call the compiler keeps, no
 * branch, only selects between values that are safe to compute on every lane. kl_impact_kv calls it first
 * (through kl_impact_kv_fast, kernels/kl_impact.h) and computes what it declines by the general code, with the
 * same helpers of kernels/kl_contact_kv.h in the same order (kl_kv_damping_of_log, kl_kv_free_start,
 * kl_kv_free_root_ud, kl_kv_free_state_ud), so that where it answers its metrics are those of the general path
 * bit for bit.
 * Measured: clang 14 -O3 -mavx2 -fno-math-errno vectorises a `#pragma omp simd` loop over it 4 wide (host C's
 * sqrt may set errno, so without -fno-math-errno sqrt stays a library call; OpenCL C has no errno). pocl 3.1
 * leaves its own loop over work-items scalar on it: its first -O3 pass, run on the one-work-item kernel, lets the
 * straight-line (SLP) vectoriser pack pairs of the same shape into 2-wide vectors (the three roots' atan2
 * polynomials, |a| and |c| of kl_atan2_in, y and y', P0 and P1, the validity tests), and the loop vectoriser
 * then refuses that loop ("instruction return type cannot be vectorized"); the fast kernel's own loop over a
 * work-item's rows (kernels/impact.cl, KL_FAST_LOOP) is vectorised 4 wide: 1.9e7 scenarios/s on 2 cores against
 * 7.1e6 for the OpenMP twin (benchmarks/RESULTS.md, section sweep).
 * It uses nothing of kernels/kl_impact.h, which includes it: cmake/KlEmbedKernels.cmake puts an included
 * header's text before its includer's in the OpenCL program, so kl_impact_in and kl_impact_out are not yet
 * defined here on the device. Common subset of C17 and OpenCL C 1.2. */
#ifndef KL_KV_FAST_H
#define KL_KV_FAST_H
#include "kl_common.h"
#include "kl_math.h"
#include "kl_contact_kv.h"

/* The metrics of kl_impact_out (kernels/kl_impact.h), and ok = 1 where they are computed. */
typedef struct kl_kv_impact {
  kl_real dmax, tmax, fpeak, tc, cr_eff, ediss, damp;
  int ok;
} kl_kv_impact;

/* A Kelvin-Voigt impact of mass m, stiffness K, restitution cr (D by paper eq. 10), speed v0, fe = 0, the
 * force separation rule if force, else the penetration rule (kl_impact_kv): ok = 1 and the metrics, or ok = 0
 * and zeros where it declines: admit = 0 (the caller's own checks), m, K or v0 not finite and > 0, cr outside
 * (0, 1], fe != 0, damping that is not under-damped (lam <= 0: w0^2 - r^2 rounds to 0 or below), a contact
 * end beyond the horizon, a maximum penetration after it, an atan2 or exp argument outside kl_atan2_fin's or
 * kl_exp_fin's range (e^{-r t} below e^-708: cr below ~1e-307), and any metric that is not finite
 * (kl_impact_final would reject it). Any input is safe: the arguments of a declined scenario are replaced by
 * harmless ones before the arithmetic. */
KL_FN_VEC kl_kv_impact kl_kv_impact_fast(kl_real m_in, kl_real K_in, kl_real cr_in, kl_real v0_in, kl_real fe_in,
                                         int force, int admit)
{
  /* kl_impact_check's conditions on these (cr in (0, 1] and fe = 0 are finite) */
  const int valid = admit & kl_finite(m_in) & (m_in > 0.0) & kl_finite(K_in) & (K_in > 0.0) &
                    (cr_in > 0.0) & (cr_in <= 1.0) & kl_finite(v0_in) & (v0_in > 0.0) & (fe_in == 0.0);
  const kl_real m = valid ? m_in : 1.0, K = valid ? K_in : 1.0, cr = valid ? cr_in : 1.0;
  const kl_real v0 = valid ? v0_in : 1.0, fe = valid ? fe_in : 0.0;
  /* kl_kv_damping: kl_log(cr) is kl_log_reduced(cr, 0) for cr in (0, 1] */
  const kl_real D = kl_kv_damping_of_log(fabs(kl_log_reduced(cr, 0.0)), K, m);
  kl_kv_sys s;
  s.m = m;
  s.K = K;
  s.D = D;
  s.f0 = fe;
  s.f1 = 0.0;
  const kl_real horizon = 2000.0 * KL_PI * sqrt(m / K);
  const kl_real xs = fe / K; /* +-0: kept, for the signs of zero in what follows */
  const kl_real al = force ? K : 1.0, be = force ? D : 0.0;
  /* end of contact: the free root of al d + be d' from (0, v0), within the horizon */
  const kl_kv_fr fc = kl_kv_free_start(s, 0.0, v0, al, be);
  const int ud = fc.lam > 0.0; /* the same lam for the three roots (one system) */
  const kl_real w = sqrt(ud ? fc.lam : 1.0);
  int okc, okm, okp;
  const kl_kv_root rc = kl_kv_free_root_ud(fc.P0, fc.Q, fc.r, w, 1, &okc);
  const kl_real tc = rc.t;
  kl_real ye, vexit;
  kl_kv_free_state_ud(fc.r, fc.w02, 0.0, v0, rc, &ye, &vexit);
  /* maximum penetration: y' = 0 from (-xs, v0), before the contact ends */
  const kl_kv_fr fm = kl_kv_free_start(s, -xs, v0, 0.0, 1.0);
  const kl_kv_root rm = kl_kv_free_root_ud(fm.P0, fm.Q, fm.r, w, 1, &okm);
  kl_real ym, vm;
  kl_kv_free_state_ud(fm.r, fm.w02, -xs, v0, rm, &ym, &vm);
  /* peak force: dF/dt = 0, or the force at impact D v0 where that root is at 0, after the end or absent */
  const kl_kv_fr fp = kl_kv_free_start(s, -xs, v0, -D * K / m, K - D * D / m);
  const kl_kv_root rp = kl_kv_free_root_ud(fp.P0, fp.Q, fp.r, w, 1, &okp);
  kl_real yp, vp;
  kl_kv_free_state_ud(fp.r, fp.w02, -xs, v0, rp, &yp, &vp);
  const kl_real f = K * (yp + xs) + D * vp;
  const kl_real fi = D * v0;
  const kl_real fpk = (fp.go & (rp.t <= tc) & (rp.t > 0.0) & (f > fi)) ? f : fi;
  const kl_real dmax = ym + xs, cre = -vexit / v0;
  const kl_real ediss = 1.0 - cre * cre;
  const int ok = valid & ud & fc.go & okc & (tc <= horizon) & fm.go & okm & (rm.t <= tc) & ((fp.go ^ 1) | okp) &
                 kl_finite(dmax) & kl_finite(rm.t) & kl_finite(fpk) & kl_finite(tc) &
                 kl_finite(cre) & kl_finite(ediss) & kl_finite(D);
  kl_kv_impact o;
  o.dmax = ok ? dmax : 0.0;
  o.tmax = ok ? rm.t : 0.0;
  o.fpeak = ok ? fpk : 0.0;
  o.tc = ok ? tc : 0.0;
  o.cr_eff = ok ? cre : 0.0;
  o.ediss = ok ? ediss : 0.0;
  o.damp = ok ? D : 0.0;
  o.ok = ok;
  return o;
}

#endif
