/* kernels/impact.cl: impact metrics for a batch of P scenarios (docs/design.md section 4).
 * One work-item per scenario: load its columns, compute kl_impact (kernels/kl_impact.h, what the OpenMP
 * twin and the serial loop call), store the metrics, the status word and optionally M samples of force
 * and penetration (kl_impact_sample). Layout and column order: kl_impact_batch.h.
 * Built with no fast-math options; the headers switch FP_CONTRACT off. */
/* Inlining is left to the device compiler (KL_NO_FORCE_INLINE): forcing every closed form inline made
 * pocl 3.1's compile of this kernel ~7x slower (90 s against 13 s cold on a loaded 2-core machine) for no
 * measured gain. */
#ifndef KL_NO_FORCE_INLINE
#define KL_NO_FORCE_INLINE
#endif
#include "kl_impact_batch.h"

/* The sampling is kept out of line (docs/design.md section 4): it runs only when samples are asked for, and
 * inlined it would lengthen pocl's compile of the work-group function for every batch. Inline under
 * KL_INLINE_ALL (Oclgrind, kernels/kl_common.h). */
#ifdef KL_INLINE_ALL
#define KL_REST static inline __attribute__((always_inline))
#else
#define KL_REST __attribute__((noinline)) static
#endif
KL_REST void kl_impact_sample_rest(kl_impact_in in, kl_impact_out o, int j, int M, kl_real *s, kl_real *d,
                                  kl_real *f)
{
  kl_impact_sample(in, o, j, M, s, d, f);
}

#ifndef KL_WGS
#define KL_WGS 64 /* work-group size; the host passes -DKL_WGS from its per-device table */
#endif

/* Metrics of the rows [lo, lo + rows) of work-item g = get_global_id(0), lo = o + (g - o) rows with o the
 * launch's global offset, that are < end <= P.
 * x: (KL_NIN x P) real inputs, ix: (KL_NIIN x P) integer inputs, y: (KL_NOUT x P) metrics,
 * status: (P) status words, smp: (KL_NSMP x M x P) samples (unused when M = 0).
 * Every model's common path is loop-free and of fixed length (Hunt-Crossley from its master curves,
 * Kelvin-Voigt's end of contact and extrema in closed form, Emden-Fowler's closed form), so no barrier and
 * no node loop in step across work-items is needed: each row is kl_impact, what the OpenMP twin and the
 * serial loop call, with the same text. A GPU gets one row per work-item (rows = 1, neighbouring
 * work-items on neighbouring rows) and its scenarios grouped by model, so that a work-group takes one
 * branch; a CPU device gets a few work-groups per core, each work-item a block of rows, so that starting
 * a work-group is paid a few times per launch, not once per 64 rows (host/impact_batch.c, cpu_global).
 * The chunks of a batch run in place are launched at a global offset. */
__kernel __attribute__((reqd_work_group_size(KL_WGS, 1, 1))) void
kl_impact_batch(const int P, const int M, __global const double *x, __global const int *ix,
                __global double *y, __global int *status, __global double *smp, const int end, const int rows)
{
  const size_t P_ = (size_t)P, off = get_global_offset(0);
  const size_t lo = off + (get_global_id(0) - off) * (size_t)rows;
  const size_t hi = lo + (size_t)rows < (size_t)end ? lo + (size_t)rows : (size_t)end;
  for (size_t p = lo; p < hi; ++p) {
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
    const kl_impact_out o = kl_impact(in);
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
}
