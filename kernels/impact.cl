/* kernels/impact.cl: impact metrics for a batch of P scenarios (docs/design.md section 4).
 * One work-item per scenario: load its columns, compute kl_impact (kernels/kl_impact.h, what the OpenMP
 * twin and the serial loop call), store the metrics, the status word and optionally M samples of force
 * and penetration (kl_impact_sample). Layout and column order: kl_impact_batch.h.
 * Built with no fast-math options; the headers switch FP_CONTRACT off. */
/* Only the vectorised quadrature's functions are forced inline here (KL_FN_VEC): forcing the whole
 * scalar remainder too made pocl 3.1's compile of this kernel ~7x slower (90 s against 13 s cold on a
 * loaded 2-core machine) for no measured gain (Hunt-Crossley OpenCL / OpenMP 2.28 forced, 2.44 not). */
#ifndef KL_NO_FORCE_INLINE
#define KL_NO_FORCE_INLINE
#endif
#include "kl_impact_batch.h"

/* The work after the quadrature's barriers, kept out of line (docs/design.md section 4): with every model's
 * closed forms inlined after the barrier loop, pocl 3.1's compile of the work-group function took 62 s of
 * CPU on an empty cache (65 s with clBuildProgram), against 1.5 s (3.3 s) with these calls. The fast
 * Hunt-Crossley finish stays inline (it is small, and as a call it cost that model ~13 % of its
 * scenarios/s in benchmarks/sweep_throughput). The arithmetic is the same, so are the numbers
 * (impact_parity_test). Inline under KL_INLINE_ALL (Oclgrind, kernels/kl_common.h). */
#ifdef KL_INLINE_ALL
#define KL_REST static inline __attribute__((always_inline))
#else
#define KL_REST __attribute__((noinline)) static
#endif
KL_REST kl_impact_out kl_impact_rest(kl_impact_in in) { return kl_impact(in); }

KL_FN_VEC kl_impact_out kl_impact_fast_rest(kl_impact_in in, kl_real chi, kl_real dmax, kl_real tc, kl_real ts)
{
  return kl_impact_final(kl_impact_hc_done(in, chi, dmax, tc, ts - tc));
}

KL_REST void kl_impact_sample_rest(kl_impact_in in, kl_impact_out o, int j, int M, kl_real *s, kl_real *d,
                                  kl_real *f)
{
  kl_impact_sample(in, o, j, M, s, d, f);
}

#ifndef KL_WGS
#define KL_WGS 64 /* work-group size; the host passes -DKL_WGS from its per-device table */
#endif

/* Metrics of scenario p = get_global_id(0) < P.
 * x: (KL_NIN x P) real inputs, ix: (KL_NIIN x P) integer inputs, y: (KL_NOUT x P) metrics,
 * status: (P) status words, smp: (KL_NSMP x M x P) samples (unused when M = 0).
 * The contact-time quadrature of the fast Hunt-Crossley scenarios (kl_impact_hc_fast) runs node by node
 * with a barrier in each step of the node loop: pocl (and any compiler that makes one loop over the
 * work-items of each region between barriers) then has the work-items innermost and vectorises one node
 * across them; the node's work has no data-dependent branch or loop. The loop runs in a work-group only
 * if one of its scenarios needs it (a uniform decision, as barriers require); the host groups the
 * scenarios by model (host/impact_batch.c) so that most work-groups are all one or all the other. The
 * arithmetic is that of kl_impact, in the same order: the OpenMP twin gives the same numbers.
 * Work-items past P repeat the last scenario and store nothing (no early return: barriers follow). */
__kernel __attribute__((reqd_work_group_size(KL_WGS, 1, 1))) void
kl_impact_batch(const int P, const int M, __global const double *x, __global const int *ix,
                __global double *y, __global int *status, __global double *smp)
{
  const int gid = (int)get_global_id(0);
  const int p = gid < P ? gid : P - 1;
  const size_t P_ = (size_t)P;
  kl_impact_in in;
  in.m = x[KL_IN_M * P_ + p];
  in.K = x[KL_IN_K * P_ + p];
  in.n = x[KL_IN_N * P_ + p];
  in.cr = x[KL_IN_CR * P_ + p];
  in.v0 = x[KL_IN_V0 * P_ + p];
  in.fe = x[KL_IN_FE * P_ + p];
  in.model = ix[KL_IIN_MODEL * P_ + p];
  in.law = ix[KL_IIN_LAW * P_ + p];
  in.rule = ix[KL_IIN_RULE * P_ + p];
  /* the general law's columns, read only by its scenarios */
  const int gen = in.model == KL_MODEL_GEN;
  in.c = gen ? x[KL_IN_C * P_ + p] : 0.0;
  in.n2 = gen ? x[KL_IN_N2 * P_ + p] : 0.0;
  in.rate_exp = gen ? x[KL_IN_REXP * P_ + p] : 0.0;
  kl_real chi, dmax, gd;
  const int fast = kl_impact_hc_fast(in, &chi, &dmax, &gd);
  __local int any;
  if (get_local_id(0) == 0) any = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (fast) atomic_or(&any, 1);
  barrier(CLK_LOCAL_MEM_FENCE);
  kl_real tc = 0.0, ts = 0.0;
  if (any) {
    for (int i = 0; i < KL_GL32_HALF; ++i) {
      barrier(CLK_LOCAL_MEM_FENCE);
      if (fast) kl_hc_quad_node(dmax, chi, in.v0, gd, i, &tc, &ts);
    }
  }
  const kl_impact_out o = fast ? kl_impact_fast_rest(in, chi, dmax, tc, ts) : kl_impact_rest(in);
  if (gid >= P) return;
  y[KL_OUT_DMAX * P_ + p] = o.dmax;
  y[KL_OUT_TMAX * P_ + p] = o.tmax;
  y[KL_OUT_FPEAK * P_ + p] = o.fpeak;
  y[KL_OUT_TC * P_ + p] = o.tc;
  y[KL_OUT_CREFF * P_ + p] = o.cr_eff;
  y[KL_OUT_EDISS * P_ + p] = o.ediss;
  y[KL_OUT_DAMP * P_ + p] = o.damp;
  status[p] = o.status;
  for (int j = 0; j < M; ++j) {
    double s, d, f;
    kl_impact_sample_rest(in, o, j, M, &s, &d, &f);
    smp[((size_t)(KL_SMP_S * M + j)) * P_ + p] = s;
    smp[((size_t)(KL_SMP_D * M + j)) * P_ + p] = d;
    smp[((size_t)(KL_SMP_F * M + j)) * P_ + p] = f;
  }
}
