/* kernels/kl_impact_batch.h: the structure-of-arrays layout of an impact batch (docs/design.md section 4)
 * and the sampled force / penetration along one impact. Shared by kernels/impact.cl, the OpenMP twin
 * and the serial loop of host/impact_batch.c. Common subset of C17 and OpenCL C 1.2.
 *
 * Layout: column c of a table with P rows is the slice [c*P, (c+1)*P), scenario index fastest, so
 * neighbouring work-items read neighbouring addresses (docs/style.md section 2). */
#ifndef KL_IMPACT_BATCH_H
#define KL_IMPACT_BATCH_H
#include "kl_common.h"
#include "kl_contact_kv.h"
#include "kl_contact_hc.h"
#include "kl_impact.h"

/* real inputs (KL_NIN x P) */
#define KL_IN_M 0  /* mass [kg] */
#define KL_IN_K 1  /* stiffness [N/m^n] */
#define KL_IN_N 2  /* force exponent */
#define KL_IN_CR 3 /* coefficient of restitution */
#define KL_IN_V0 4 /* impact speed [m/s] */
#define KL_IN_FE 5 /* external force [N] */
#define KL_IN_C 6    /* general law only (KL_MODEL_GEN): damping coefficient c */
#define KL_IN_N2 7   /* general law only: exponent n2 of d in the damping term */
#define KL_IN_REXP 8 /* general law only: the rate exponent (the law's m) */
#define KL_NIN 9
/* integer inputs (KL_NIIN x P) */
#define KL_IIN_MODEL 0 /* KL_MODEL_* */
#define KL_IIN_LAW 1   /* KL_LAW_* */
#define KL_IIN_RULE 2  /* KL_SEP_* */
#define KL_NIIN 3
/* real outputs (KL_NOUT x P), the fields of kl_impact_out; the status word is a column of its own */
#define KL_OUT_DMAX 0
#define KL_OUT_TMAX 1
#define KL_OUT_FPEAK 2
#define KL_OUT_TC 3
#define KL_OUT_CREFF 4
#define KL_OUT_EDISS 5
#define KL_OUT_DAMP 6
#define KL_NOUT 7
/* samples (KL_NSMP x M x P): sample j of quantity q of scenario p at [(q*M + j)*P + p] */
#define KL_SMP_S 0 /* abscissa: time [s] (Kelvin-Voigt, general, HC under a force) or phase in [0, 2] (HC, EF) */
#define KL_SMP_D 1 /* penetration [m] */
#define KL_SMP_F 2 /* contact force [N] */
#define KL_NSMP 3

/* The fast path (kernels/impact.cl, docs/design.md section 4) and the rows it takes, by kind: 0, a Hunt-Crossley
 * impact without external force (of either kind of law: kl_impact_hc_fast); 1, a Kelvin-Voigt impact without
 * external force (kl_impact_kv_fast); 2, Emden-Fowler (kl_impact_ef_fast); -1 for a row only the general kernel
 * computes. The host lists the rows of the kinds (when no samples are asked for), the fast kernel computes them or
 * leaves KL_PENDING, and the general kernel skips the listed rows whose status is not KL_PENDING: one function decides
 * for all three. */
KL_FN_VEC int kl_impact_fast_kind(int model, kl_real fe)
{
  const int hc = model == KL_MODEL_HC && fe == 0.0, kv = model == KL_MODEL_KV && fe == 0.0;
  const int ef = model == KL_MODEL_EF && fe == 0.0;
  return hc ? 0 : kv ? 1 : ef ? 2 : -1;
}

/* The class of a row of the fast kernel, which runs a block of rows of one class with one loop: a Hunt-Crossley
 * row's the coefficients it reads (kl_impact_hc_class, below KL_HC_NCLASS), then one class for each other kind */
#define KL_FAST_KV KL_HC_NCLASS
#define KL_FAST_EF (KL_HC_NCLASS + 1)
#define KL_FAST_NCLASS (KL_HC_NCLASS + 2)
KL_FN_VEC int kl_impact_fast_class(kl_impact_in in, int kind)
{
  return kind == 0 ? kl_impact_hc_class(in, in.law == KL_LAW_EXACT) : kind == 1 ? KL_FAST_KV : KL_FAST_EF;
}

/* The fast path of a block of rows of class cls, for the fast kernel (kernels/impact.cl) and the twin
 * (host/twin_fast.c): LOOP(call) is their loop over the block's rows with `call` the fast path of its row `in`, one
 * loop for each class of loop, so that each is compiled with its own path alone */
#define KL_FAST_BY_CLASS(cls, LOOP)                                                                                 \
  if ((cls) == KL_FAST_KV) {                                                                                        \
    LOOP(kl_impact_kv_fast(in))                                                                                     \
  } else if ((cls) == KL_FAST_EF) {                                                                                 \
    LOOP(kl_impact_ef_fast(in))                                                                                     \
  } else if ((cls) >= KL_HC_NCLOSED) {                                                                              \
    LOOP(kl_impact_hc_fast_at(in, 1, (cls)))                                                                        \
  } else {                                                                                                          \
    LOOP(kl_impact_hc_fast_at(in, 0, (cls)))                                                                        \
  }

/* The fast path of a row of kind `kind` with the row's own class: what kl_impact tries first (the tests hold the fast
 * kernel and the twin's runs of one class to it) */
KL_FN_VEC kl_impact_out kl_impact_fast(kl_impact_in in, int kind)
{
  if (kind == 2) return kl_impact_ef_fast(in);
  if (kind == 1) return kl_impact_kv_fast(in);
  return kl_impact_hc_fast(in, in.law == KL_LAW_EXACT);
}

/* Sample j of M (j = 0 ... M-1) along the impact `in` whose metrics are `o`: abscissa *s, penetration
 * *d and contact force *f. Kelvin-Voigt: at time s = t_c j/(M-1), the exact state of paper eq. (4)
 * (kl_kv_step), F = K d + D d' (paper eq. 1). Hunt-Crossley and Emden-Fowler have no closed form in
 * time, so they are sampled at M equally spaced phase points s = 2j/(M-1): s <= 1 on compression at
 * d = s d_max, s > 1 on restitution at d = (2 - s) d_max; F = K d^n (1 + chi d') with d' from the phase
 * plane (kl_hc_speed_u), and F = C_i K d^n for Emden-Fowler (C = 1 compressing, cr^2 restoring, paper
 * eq. 11-13). The general law and Hunt-Crossley under an external force are sampled in time like Kelvin-Voigt,
 * s = t_c j/(M-1), on the step's dense output (kl_impact_step_run up to s; the force F of the law kept >= 0,
 * with its limit from inside at d = 0). M = 1 gives the impact instant. A scenario with a status gives
 * zeros. */
KL_FN void kl_impact_sample(kl_impact_in in, kl_impact_out o, int j, int M, kl_real *s, kl_real *d, kl_real *f)
{
  *s = 0.0;
  *d = 0.0;
  *f = 0.0;
  if (o.status != KL_OK) return;
  const kl_real frac = (M > 1) ? (kl_real)j / (kl_real)(M - 1) : 0.0;
  if (in.model == KL_MODEL_KV) {
    kl_kv_sys sys;
    sys.m = in.m;
    sys.K = in.K;
    sys.D = o.damp;
    sys.f0 = in.fe;
    sys.f1 = 0.0;
    const kl_real t = o.tc * frac;
    const kl_kv_out st = kl_kv_step(sys, 0.0, in.v0, t);
    *s = t;
    *d = st.x;
    *f = in.K * st.x + o.damp * st.v;
    return;
  }
  if (in.model == KL_MODEL_GEN || (in.model == KL_MODEL_HC && in.fe != 0.0)) {
    /* by the step (kernels/kl_impact_step.h), at time s = t_c j/(M-1), from its dense output */
    kl_gen_law L;
    L.k = in.K;
    L.n1 = in.n;
    L.c = in.model == KL_MODEL_GEN ? in.c : in.K * o.damp;
    L.n2 = in.model == KL_MODEL_GEN ? in.n2 : in.n;
    L.m = in.model == KL_MODEL_GEN ? in.rate_exp : 1.0;
    const kl_real t = o.tc * frac;
    const kl_istep_out r = kl_impact_step_run(L, in.m, in.v0, in.fe, in.rule == KL_SEP_FORCE, t);
    *s = t;
    *d = r.xq;
    *f = kl_istep_force(L, r.xq, r.vq);
    return;
  }
  const kl_real ph = 2.0 * frac;
  const int comp = ph <= 1.0;
  const kl_real q = comp ? ph : 2.0 - ph; /* d / d_max */
  const kl_real dd = o.dmax * q;
  *s = ph;
  *d = dd;
  if (in.model == KL_MODEL_EF) {
    *f = (comp ? 1.0 : in.cr * in.cr) * in.K * kl_pown(dd, in.n);
    return;
  }
  /* u with d = d_max (1 - u^2), from 1 - q without cancellation on restitution (q = 2 - ph) */
  const kl_real u = sqrt(comp ? 1.0 - ph : ph - 1.0);
  const kl_real sp = kl_hc_speed_u(o.damp, in.v0, in.n, u, comp ? 1 : -1);
  *f = in.K * kl_pown(dd, in.n) * (1.0 + o.damp * (comp ? sp : -sp));
}

#endif
