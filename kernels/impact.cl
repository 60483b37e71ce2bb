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

/* The inputs of row p of a table with P rows (the general law's columns left 0) */
KL_FN_VEC kl_impact_in kl_impact_load(__global const double *x, __global const int *ix, size_t P_, size_t p)
{
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
  in.c = 0.0;
  in.n2 = 0.0;
  in.rate_exp = 0.0;
  return in;
}

/* The metrics and status of row p */
KL_FN_VEC void kl_impact_store(__global double *y, __global int *status, size_t P_, size_t p, kl_impact_out o)
{
  y[KL_OUT_DMAX * P_ + p] = o.dmax;
  y[KL_OUT_TMAX * P_ + p] = o.tmax;
  y[KL_OUT_FPEAK * P_ + p] = o.fpeak;
  y[KL_OUT_TC * P_ + p] = o.tc;
  y[KL_OUT_CREFF * P_ + p] = o.cr_eff;
  y[KL_OUT_EDISS * P_ + p] = o.ediss;
  y[KL_OUT_DAMP * P_ + p] = o.damp;
  status[p] = o.status;
}

/* The fast path (docs/design.md section 4): work-item g takes the entries [g R, (g + 1) R) below cnt of the list idx
 * the host made of the rows of the fast kinds (kl_impact_fast_kind), R = KL_FAST_ROWS, computes each one's impact in
 * straight-line code and stores its metrics and status, KL_PENDING where it declines (kl_impact_batch then computes
 * the row). A block's rows are of one class (kl_impact_fast_class: the host sorts the list by class and pads each
 * class's run with -1 to whole blocks), its first row's, so that the block takes one loop, Kelvin-Voigt, Emden-Fowler
 * or Hunt-Crossley of either kind of law, compiled with its own path alone, and a Hunt-Crossley coefficient is one
 * load for the block instead of a gather. The block's inputs are first copied into private arrays, the loop over
 * them is the one the device compiler is asked to vectorise (KL_FAST_WIDTH rows to an operation), and the metrics
 * are copied out from private arrays, as the twin does (host/twin_fast.c): pocl 3.1 (LLVM 15) leaves its own loop
 * over work-items scalar here, its cost model pricing the tables' gathers above the gain; a loop of our own
 * vectorises when the pragma says its iterations are independent (they are: the list names each row once), and
 * over contiguous arrays it loads and stores whole vectors, where on the tables it gathered and scattered. Every row
 * computes (a pad, or a row past the list's end, on the block's first row), only the copy out is conditional.
 * R is a constant of the build (host/host_impl.h, kl_device_fast_rows): 16 on a CPU device, so the loop has no
 * remainder; 1 on a GPU, whose work-items are its vector lanes (the arrays are then single values).
 * pocl on 2 AMD EPYC cores with AVX-512, 1e6 rows of the mix: 39 ns a row with R a kernel argument and the loop on
 * the tables, 35-36 with R a constant, 33-35 with the private arrays besides. */
#ifdef __clang__ /* pocl, Oclgrind: the loop pragma; the program build (before the work-group functions are made,
                  * where the loop is vectorised) would otherwise log that it could not yet honour it */
#pragma clang diagnostic ignored "-Wpass-failed"
#ifndef KL_FAST_WIDTH /* the host passes the device's (host/host_impl.h, kl_device_fast_width) */
#define KL_FAST_WIDTH 4
#endif
#define KL_FAST_LOOP _Pragma("clang loop vectorize(assume_safety) vectorize_width(KL_FAST_WIDTH) interleave_count(1)")
#else
#define KL_FAST_LOOP
#endif
#ifndef KL_FAST_ROWS /* the host passes the device's (host/host_impl.h, kl_device_fast_rows) */
#define KL_FAST_ROWS 1
#endif
/* A block's rows with the fast path `call` of its row `in`; nd counts the rows it declined */
#define KL_FAST_ROWS_LOOP(call)                                                                                    \
  {                                                                                                                 \
    double m[KL_FAST_ROWS], K[KL_FAST_ROWS], n[KL_FAST_ROWS], cr[KL_FAST_ROWS], v0[KL_FAST_ROWS];                   \
    int model[KL_FAST_ROWS], law[KL_FAST_ROWS], rule[KL_FAST_ROWS], at[KL_FAST_ROWS], st[KL_FAST_ROWS];             \
    double out[KL_NOUT][KL_FAST_ROWS];                                                                              \
    for (int k = 0; k < KL_FAST_ROWS; ++k) {                                                                        \
      const int e = idx[lo + k < cnt ? lo + k : cnt - 1];                                                           \
      const size_t p = (size_t)(e >= 0 ? e : b0);                                                                   \
      at[k] = ((lo + k < cnt) & (e >= 0)) ? (int)p : -1;                                                            \
      m[k] = x[KL_IN_M * P_ + p];                                                                                   \
      K[k] = x[KL_IN_K * P_ + p];                                                                                   \
      n[k] = x[KL_IN_N * P_ + p];                                                                                   \
      cr[k] = x[KL_IN_CR * P_ + p];                                                                                 \
      v0[k] = x[KL_IN_V0 * P_ + p];                                                                                 \
      model[k] = ix[KL_IIN_MODEL * P_ + p];                                                                         \
      law[k] = ix[KL_IIN_LAW * P_ + p];                                                                             \
      rule[k] = ix[KL_IIN_RULE * P_ + p];                                                                           \
    }                                                                                                               \
    KL_FAST_LOOP                                                                                                    \
    for (int k = 0; k < KL_FAST_ROWS; ++k) {                                                                        \
      kl_impact_in in;                                                                                              \
      in.m = m[k];                                                                                                  \
      in.K = K[k];                                                                                                  \
      in.n = n[k];                                                                                                  \
      in.cr = cr[k];                                                                                                \
      in.v0 = v0[k];                                                                                                \
      in.fe = in.c = in.n2 = in.rate_exp = 0.0; /* a fast kind's fe is 0 (kl_impact_fast_kind) */                 \
      in.model = model[k];                                                                                          \
      in.law = law[k];                                                                                              \
      in.rule = rule[k];                                                                                            \
      const kl_impact_out o = call;                                                                                 \
      out[KL_OUT_DMAX][k] = o.dmax;                                                                                 \
      out[KL_OUT_TMAX][k] = o.tmax;                                                                                 \
      out[KL_OUT_FPEAK][k] = o.fpeak;                                                                               \
      out[KL_OUT_TC][k] = o.tc;                                                                                     \
      out[KL_OUT_CREFF][k] = o.cr_eff;                                                                              \
      out[KL_OUT_EDISS][k] = o.ediss;                                                                               \
      out[KL_OUT_DAMP][k] = o.damp;                                                                                 \
      st[k] = o.status;                                                                                             \
    }                                                                                                               \
    for (int k = 0; k < KL_FAST_ROWS; ++k) {                                                                        \
      if (at[k] < 0) continue;                                                                                      \
      const size_t p = (size_t)at[k];                                                                               \
      for (int c = 0; c < KL_NOUT; ++c) y[c * P_ + p] = out[c][k];                                                  \
      status[p] = st[k];                                                                                            \
      nd += st[k] == KL_PENDING;                                                                                    \
    }                                                                                                               \
  }

/* declined: the rows this launch declined are added to it (the host skips the general kernel where a chunk's rows
 * are all of the fast kinds and none was declined) */
__kernel __attribute__((reqd_work_group_size(KL_WGS, 1, 1))) void
kl_impact_batch_fast(const int P, __global const double *restrict x, __global const int *restrict ix,
                     __global double *restrict y, __global int *restrict status, __global const int *restrict idx,
                     const int cnt, __global int *restrict declined)
{
  const size_t P_ = (size_t)P;
  /* the block's first entry (past the list's end, the list's), never a pad, and its class */
  const int lo = (int)get_global_id(0) * KL_FAST_ROWS, b0 = idx[lo < cnt ? lo : 0];
  const kl_impact_in in0 = kl_impact_load(x, ix, P_, (size_t)b0);
  const int cls = kl_impact_fast_class(in0, kl_impact_fast_kind(in0.model, in0.fe));
  int nd = 0;
  KL_FAST_BY_CLASS(cls, KL_FAST_ROWS_LOOP)
  if (nd) atomic_add(declined, nd);
}

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
 * The chunks of a batch run in place are launched at a global offset. With fast = 1 a row the fast kernel has
 * computed (kl_impact_fast_kind >= 0, its status not KL_PENDING) is left as it is; with fast = 2 (tests) every row
 * of a fast kind is. */
__kernel __attribute__((reqd_work_group_size(KL_WGS, 1, 1))) void
kl_impact_batch(const int P, const int M, __global const double *x, __global const int *ix,
                __global double *y, __global int *status, __global double *smp, const int end, const int rows,
                const int fast)
{
  const size_t P_ = (size_t)P, off = get_global_offset(0);
  const size_t lo = off + (get_global_id(0) - off) * (size_t)rows;
  const size_t hi = lo + (size_t)rows < (size_t)end ? lo + (size_t)rows : (size_t)end;
  for (size_t p = lo; p < hi; ++p) {
    if (fast && kl_impact_fast_kind(ix[KL_IIN_MODEL * P_ + p], x[KL_IN_FE * P_ + p]) >= 0 &&
        (fast == 2 || status[p] != KL_PENDING))
      continue; /* before the other columns are read: a fast kernel computed the row */
    kl_impact_in in = kl_impact_load(x, ix, P_, p);
    /* the general law's columns, read only by its scenarios */
    const int gen = in.model == KL_MODEL_GEN;
    in.c = gen ? x[KL_IN_C * P_ + p] : 0.0;
    in.n2 = gen ? x[KL_IN_N2 * P_ + p] : 0.0;
    in.rate_exp = gen ? x[KL_IN_REXP * P_ + p] : 0.0;
    const kl_impact_out o = kl_impact(in);
    kl_impact_store(y, status, P_, p, o);
    for (int j = 0; j < M; ++j) {
      double s, d, f;
      kl_impact_sample_rest(in, o, j, M, &s, &d, &f);
      smp[((size_t)(KL_SMP_S * M + j)) * P_ + p] = s;
      smp[((size_t)(KL_SMP_D * M + j)) * P_ + p] = d;
      smp[((size_t)(KL_SMP_F * M + j)) * P_ + p] = f;
    }
  }
}
