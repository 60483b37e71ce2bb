/* host/twin_fast.c: the OpenMP twin's fast path (docs/design.md section 4) on rows of one class gathered into
 * contiguous arrays, in loops gcc vectorises, like the device compiler vectorises the fast kernel's loop
 * (kernels/impact.cl): the same functions (kl_impact_hc_fast_at, kl_impact_kv_fast, kl_impact_ef_fast), always
 * inlined here (KL_TWIN_VEC, kernels/kl_common.h), a loop for each class of loop, the class's coefficients loaded
 * once, not gathered. What gcc 12 needs besides (tests/impact_parity_test.c holds the twin to the serial loop bit
 * for bit): rows in contiguous arrays (AVX2 has no scatter for the batch's columns), -fno-trapping-math (else its
 * if-conversion will not compute both sides of a select: "tree could trap"), and AVX2 for the 64-bit integer
 * operations of kl_math.h's reductions and their selects: on x86-64 the loops are compiled for AVX-512 (F, DQ, VL,
 * 512-bit vectors preferred), for AVX2 and for the baseline, and the processor's features pick one (2 cores of an
 * AMD EPYC with AVX-512, 1e6 rows, ns a row AVX2 -> AVX-512: Emden-Fowler 15.4 -> 11.8, Hunt-Crossley 30.7 ->
 * 26.9). Neither option changes a rounding: -fno-trapping-math
 * only lets operations run whose results are then not selected, and no contraction into FMA
 * (-ffp-contract=off) for the versions whose processors have it. */
#define KL_TWIN_VEC
#include "host/twin_fast.h"

/* The loop over rows [0, cnt) of r with the fast path `call` of its row `in` */
#define KL_TWIN_LOOP(call)                                                                                         \
  _Pragma("omp simd") for (int k = 0; k < cnt; ++k)                                                                \
  {                                                                                                                 \
    kl_impact_in in;                                                                                                \
    in.m = r->m[k];                                                                                                 \
    in.K = r->K[k];                                                                                                 \
    in.n = r->n[k];                                                                                                 \
    in.cr = r->cr[k];                                                                                               \
    in.v0 = r->v0[k];                                                                                               \
    in.fe = in.c = in.n2 = in.rate_exp = 0.0;                                                                       \
    in.model = r->model[k];                                                                                         \
    in.law = r->law[k];                                                                                             \
    in.rule = r->rule[k];                                                                                           \
    const kl_impact_out o = call;                                                                                   \
    r->y[KL_OUT_DMAX][k] = o.dmax;                                                                                  \
    r->y[KL_OUT_TMAX][k] = o.tmax;                                                                                  \
    r->y[KL_OUT_FPEAK][k] = o.fpeak;                                                                                \
    r->y[KL_OUT_TC][k] = o.tc;                                                                                      \
    r->y[KL_OUT_CREFF][k] = o.cr_eff;                                                                               \
    r->y[KL_OUT_EDISS][k] = o.ediss;                                                                                \
    r->y[KL_OUT_DAMP][k] = o.damp;                                                                                  \
    r->status[k] = o.status;                                                                                        \
  }

/* the same source compiled for AVX-512, AVX2 and the baseline (not target_clones: the indirect function it makes is
 * exported whatever the visibility, libkelvin_symbols_test) */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f,avx512dq,avx512vl,prefer-vector-width=512"))) static void rows_avx512(kl_twin_rows *r,
                                                                                                 int cnt, int cls)
{
  KL_FAST_BY_CLASS(cls, KL_TWIN_LOOP)
}
__attribute__((target("avx2"))) static void rows_avx2(kl_twin_rows *r, int cnt, int cls)
{
  KL_FAST_BY_CLASS(cls, KL_TWIN_LOOP)
}
#endif

static void rows_base(kl_twin_rows *r, int cnt, int cls) { KL_FAST_BY_CLASS(cls, KL_TWIN_LOOP) }

void kl_twin_fast_rows(kl_twin_rows *r, int cnt, int cls)
{
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
    rows_avx512(r, cnt, cls);
    return;
  }
  if (__builtin_cpu_supports("avx2")) {
    rows_avx2(r, cnt, cls);
    return;
  }
#endif
  rows_base(r, cnt, cls);
}
