/* kernels/kl_impact.h: metrics of one normal impact, from the closed forms (docs/design.md sections 2.2-2.3;
 * batches of them: section 4).
 * A scenario is an impact at speed v0 > 0 onto a compliant contact of stiffness K (exponent n),
 * restitution cr, optional constant external force fe pushing into the contact. The same function runs
 * in the OpenCL kernel, the OpenMP twin and the plain serial loop. Common subset of C17 and OpenCL C. */
#ifndef KL_IMPACT_H
#define KL_IMPACT_H
#include "kl_common.h"
#include "kl_contact_kv.h"
#include "kl_contact_hc.h"
#include "kl_impact_step.h"
#include "kl_hc_master.h"
#include "kl_hc_exact.h"

#define KL_MODEL_KV 0 /* Kelvin-Voigt, D from cr by paper eq. (10) */
#define KL_MODEL_HC 1 /* Hunt-Crossley family, chi from cr and v0 by a damping law */
#define KL_MODEL_EF 2 /* the paper's approximate Emden-Fowler form, eq. (11)-(13) */
#define KL_MODEL_GEN 3 /* the generalised law F = k d^n1 + c sgn(d')|d'|^m d^n2 (kl_contact_gen.h), by the step */
#define KL_NMODELS 4

#define KL_NO_SEPARATION 256 /* the contact did not end within 1000 natural periods */
#define KL_UNSUPPORTED 512   /* Emden-Fowler with an external force (no model of it) */
#define KL_PENDING 1024 /* declined by a fast path: the general path computes the row (never in a result) */

/* The contact law of a model at penetration d and rate dd, and its tangent kt = dF/dd, ct = dF/dd'
 * (docs/design.md sections 2.2-2.3): Kelvin-Voigt K d + D d' everywhere (tangent K, D); Hunt-Crossley and
 * Emden-Fowler K d^n (1 + chi d') for d > 0 and 0 otherwise (kl_hc_tangent; chi = 0 for Emden-Fowler,
 * whose caller passes the phase's stiffness as K). No clamping of tension: the separation rule decides. */
KL_FN kl_real kl_contact_tangent(int model, kl_real K, kl_real n, kl_real D, kl_real chi, kl_real d, kl_real dd,
                                 kl_real *kt, kl_real *ct)
{
  if (model == KL_MODEL_KV) {
    *kt = K;
    *ct = D;
    return kl_kv_force(K, D, d, dd);
  }
  return kl_hc_tangent(K, n, chi, d, dd, kt, ct);
}

/* The force alone. */
KL_FN kl_real kl_contact_force(int model, kl_real K, kl_real n, kl_real D, kl_real chi, kl_real d, kl_real dd)
{
  if (model == KL_MODEL_KV) return kl_kv_force(K, D, d, dd);
  return kl_hc_force(K, n, chi, d, dd);
}

typedef struct kl_impact_in {
  kl_real m, K, n, cr, v0, fe; /* kg, N/m^n, -, -, m/s, N */
  int model, law, rule;
  /* the general law (KL_MODEL_GEN, kernels/kl_contact_gen.h) only, where K is its k and n its n1 (cr and law
   * unused): damping coefficient c [N (s/m)^rate_exp / m^n2], exponent n2 of d in the damping term and the
   * rate exponent (the law's m, not the mass). Last, so that {m, K, n, cr, v0, fe, model, law, rule}
   * initialisers leave them 0. */
  kl_real c, n2, rate_exp;
} kl_impact_in;

typedef struct kl_impact_out {
  kl_real dmax;   /* maximum penetration [m] */
  kl_real tmax;   /* time from impact to dmax [s] */
  kl_real fpeak;  /* peak contact force [N] */
  kl_real tc;     /* contact time [s] */
  kl_real cr_eff; /* exit speed / impact speed */
  kl_real ediss;  /* dissipated fraction of the impact kinetic energy, 1 - cr_eff^2 */
  kl_real damp;   /* D [N s/m] for Kelvin-Voigt, chi [s/m] for Hunt-Crossley, 0 otherwise */
  int status;     /* KL_OK or KL_BAD_* / KL_NO_* bits; outputs are 0 unless status is KL_OK */
} kl_impact_out;

/* Check a scenario; returns the status bits of what is wrong (KL_OK if none). */
KL_FN int kl_impact_check(kl_impact_in in)
{
  int st = KL_OK;
  if (!(kl_finite(in.m) && in.m > 0.0)) st |= KL_BAD_MASS;
  if (!(kl_finite(in.K) && in.K > 0.0)) st |= KL_BAD_STIFFNESS;
  if (in.model != KL_MODEL_GEN && !(kl_finite(in.cr) && in.cr > 0.0 && in.cr <= 1.0)) st |= KL_BAD_CR;
  if (!(kl_finite(in.v0) && in.v0 > 0.0)) st |= KL_BAD_SPEED;
  if (!(kl_finite(in.n) && in.n > 0.0 && in.n < 10.0)) st |= KL_BAD_EXPONENT;
  if (!kl_finite(in.fe)) st |= KL_BAD_INPUT;
  if (in.model < 0 || in.model >= KL_NMODELS || in.law < 0 || in.law >= KL_NLAWS || in.rule < 0 ||
      in.rule > 1)
    st |= KL_BAD_LAW;
  if (in.model == KL_MODEL_GEN) { /* the law's one domain check (kernels/kl_contact_gen.h, kl_gen_law_check) */
    const kl_gen_law L = {in.K, in.c, in.n, in.n2, in.rate_exp};
    const int bad = kl_gen_law_check(L);
    if (bad == KL_GEN_BAD_K) st |= KL_BAD_STIFFNESS;
    if (bad == KL_GEN_BAD_C) st |= KL_BAD_INPUT;
    if (bad >= KL_GEN_BAD_N1) st |= KL_BAD_EXPONENT;
  }
  if (st == KL_OK && in.model == KL_MODEL_EF && in.fe != 0.0) st |= KL_UNSUPPORTED;
  if (st == KL_OK && in.model == KL_MODEL_KV && in.n != 1.0) st |= KL_BAD_EXPONENT;
  return st;
}

KL_FN_VEC kl_impact_out kl_impact_zero(int status)
{
  kl_impact_out o;
  o.dmax = 0.0;
  o.tmax = 0.0;
  o.fpeak = 0.0;
  o.tc = 0.0;
  o.cr_eff = 0.0;
  o.ediss = 0.0;
  o.damp = 0.0;
  o.status = status;
  return o;
}

/* 1 if the metrics kl_impact_final checks are finite (selects: the fast paths call it too) */
KL_FN_VEC int kl_impact_finite(kl_impact_out o)
{
  return kl_finite(o.dmax) && kl_finite(o.tmax) && kl_finite(o.fpeak) && kl_finite(o.tc) && kl_finite(o.cr_eff);
}

/* kl_impact_check's conditions shared by the fast paths of Hunt-Crossley and Emden-Fowler (docs/design.md 4): no
 * external force, a known law and rule, m, K and v0 finite and > 0, cr in (0, 1]; the model, the exponent and the
 * path's own domain are each path's */
KL_FN_VEC int kl_impact_fast_valid(kl_impact_in in)
{
  return in.fe == 0.0 && in.rule >= 0 && in.rule <= 1 && in.law >= 0 && in.law < KL_NLAWS && kl_finite(in.m) &&
         in.m > 0.0 && kl_finite(in.K) && in.K > 0.0 && in.cr > 0.0 && in.cr <= 1.0 && kl_finite(in.v0) && in.v0 > 0.0;
}

/* A fast path's answer: o with KL_OK where good and its metrics finite, else zeros and KL_PENDING; field by field (a
 * select of the whole structure is one the device compiler does not vectorise) */
KL_FN_VEC kl_impact_out kl_impact_fast_answer(kl_impact_out o, int good)
{
  const int g = good && kl_impact_finite(o);
  kl_impact_out r;
  r.dmax = g ? o.dmax : 0.0;
  r.tmax = g ? o.tmax : 0.0;
  r.fpeak = g ? o.fpeak : 0.0;
  r.tc = g ? o.tc : 0.0;
  r.cr_eff = g ? o.cr_eff : 0.0;
  r.ediss = g ? o.ediss : 0.0;
  r.damp = g ? o.damp : 0.0;
  r.status = g ? KL_OK : KL_PENDING;
  return r;
}

#include "kl_kv_fast.h"

/* A Kelvin-Voigt impact with fe = 0 by the straight-line kl_kv_impact_fast (kernels/kl_kv_fast.h), for loops
 * vectorised across scenarios: status KL_OK and the metrics kl_impact would give, bit for bit, or KL_PENDING
 * and zeros where it declines (kl_impact_check rejects the input, it is not Kelvin-Voigt with fe = 0, or one
 * of the rare cases listed there). Any input is safe. */
KL_FN_VEC kl_impact_out kl_impact_kv_fast(kl_impact_in in)
{
  /* kl_impact_check's conditions beyond those kl_kv_impact_fast makes (n = 1 is a valid exponent) */
  const int admit = (in.n == 1.0) & (in.model == KL_MODEL_KV) & (in.law >= 0) & (in.law < KL_NLAWS) & (in.rule >= 0) &
                    (in.rule <= 1);
  const kl_kv_impact f = kl_kv_impact_fast(in.m, in.K, in.cr, in.v0, in.fe, in.rule == KL_SEP_FORCE, admit);
  kl_impact_out o;
  o.dmax = f.dmax;
  o.tmax = f.tmax;
  o.fpeak = f.fpeak;
  o.tc = f.tc;
  o.cr_eff = f.cr_eff;
  o.ediss = f.ediss;
  o.damp = f.damp;
  o.status = f.ok ? KL_OK : KL_PENDING;
  return o;
}

/* Kelvin-Voigt impact: the exact solution of paper eq. (3)-(4) from d = 0, d' = v0 under F_e = fe. The
 * general path, for what kl_impact_kv_fast declines. */
KL_FN kl_impact_out kl_impact_kv_general(kl_impact_in in)
{
  kl_impact_out o = kl_impact_zero(KL_OK);
  const kl_real D = kl_kv_damping(in.cr, in.K, in.m);
  kl_kv_sys s;
  s.m = in.m;
  s.K = in.K;
  s.D = D;
  s.f0 = in.fe;
  s.f1 = 0.0;
  o.damp = D;
  const kl_real horizon = 2000.0 * KL_PI * sqrt(in.m / in.K);
  /* the free motion about the static deflection xs = fe/K: y = d - xs, y(0) = -xs, y'(0) = v0 */
  const kl_real xs = in.fe / in.K;
  /* end of contact: d = 0 (penetration rule) or K d + D d' = 0 (force rule); without an external force
   * in closed form, with one by the bracketing scan (the level is then not the free motion's zero) */
  const kl_real al = (in.rule == KL_SEP_FORCE) ? in.K : 1.0, be = (in.rule == KL_SEP_FORCE) ? D : 0.0;
  kl_real tc, ye, vexit;
  if (in.fe == 0.0) {
    kl_kv_root rc;
    if (!kl_kv_free_root(s, 0.0, in.v0, al, be, horizon, &rc)) return kl_impact_zero(KL_NO_SEPARATION);
    tc = rc.t;
    kl_kv_free_state(s, 0.0, in.v0, rc, &ye, &vexit);
  } else {
    if (!kl_kv_first_root(s, 0.0, in.v0, al, be, 0.0, 0.0, horizon, &tc)) return kl_impact_zero(KL_NO_SEPARATION);
    vexit = kl_kv_step(s, 0.0, in.v0, tc).v;
  }
  /* maximum penetration: d' = y' = 0 */
  kl_kv_root rm;
  if (!kl_kv_free_root(s, -xs, in.v0, 0.0, 1.0, tc, &rm)) rm.t = tc;
  kl_real ym, vm;
  kl_kv_free_state(s, -xs, in.v0, rm, &ym, &vm);
  /* peak force: dF/dt = K d' + D d'' = 0, with m d'' = fe - D d' - K d, i.e. -(D K/m) y + (K - D^2/m) y' */
  kl_kv_root rp;
  const int hp = kl_kv_free_root(s, -xs, in.v0, -D * in.K / in.m, in.K - D * D / in.m, tc, &rp);
  kl_real fpk = D * in.v0; /* the force at impact, the peak when damping dominates */
  if (hp && rp.t > 0.0) {
    kl_real yp, vp;
    kl_kv_free_state(s, -xs, in.v0, rp, &yp, &vp);
    const kl_real f = in.K * (yp + xs) + D * vp;
    if (f > fpk) fpk = f;
  }
  o.dmax = ym + xs;
  o.tmax = rm.t;
  o.fpeak = fpk;
  o.tc = tc;
  o.cr_eff = -vexit / in.v0;
  o.ediss = 1.0 - o.cr_eff * o.cr_eff;
  return o;
}

/* Kelvin-Voigt impact: without an external force the straight-line kl_impact_kv_fast (kernels/kl_kv_fast.h),
 * the same arithmetic; what it declines, and every impact with one, by kl_impact_kv_general. */
KL_FN kl_impact_out kl_impact_kv(kl_impact_in in)
{
  if (in.fe == 0.0) {
    const kl_impact_out f = kl_impact_kv_fast(in);
    if (f.status == KL_OK) return f;
  }
  return kl_impact_kv_general(in);
}

/* Hunt-Crossley impact (fe = 0) from its damping factor chi, maximum penetration dmax and phase times:
 * the peak force and the restitution (kernels/kl_contact_hc.h). No tension arises (w = 1 + chi d' > 0
 * on restitution), so both separation rules agree. */
KL_FN kl_impact_out kl_impact_hc_done(kl_impact_in in, kl_real chi, kl_real dmax, kl_real tmax, kl_real trest)
{
  kl_impact_out o = kl_impact_zero(KL_OK);
  kl_real dpk;
  o.damp = chi;
  o.dmax = dmax;
  o.fpeak = kl_hc_peak_force(in.m, in.K, in.n, chi, in.v0, dmax, &dpk);
  o.tmax = tmax;
  o.tc = tmax + trest;
  o.cr_eff = kl_hc_cr_eff(chi * in.v0);
  o.ediss = 1.0 - o.cr_eff * o.cr_eff;
  return o;
}

/* Hunt-Crossley metrics (fe = 0) of damping factor chi from the master curves' series S at (n, zeta = chi v0)
 * (kernels/kl_hc_master.h, docs/design.md section 2.3), with le = log e, e = d*^(n+1) = (n+1) m v0^2 / (2K): the scales
 * d* = e^(1/(n+1)), t* = d* / v0 and F* = K d*^n fold into kl_hcm_metrics' exponentials (dmax = e^(p (le + A)), the
 * peak's e^(a (le + .))), so that no pow is taken. |le| < 709 (e a normal double <= 1e300). Straight-line. */
KL_FN_VEC kl_impact_out kl_impact_hc_master(kl_impact_in in, kl_real chi, kl_hcm_series S, kl_real le)
{
  const kl_hc_scaled r = kl_hcm_metrics(S, 1.0 / (in.n + 1.0), chi * in.v0, le);
  kl_impact_out o = kl_impact_zero(KL_OK);
  o.damp = chi;
  o.dmax = r.dmax;
  o.tmax = r.tmax / in.v0;
  o.fpeak = in.K * r.fpeak;
  o.tc = r.tc / in.v0;
  o.cr_eff = r.cr_eff;
  o.ediss = 1.0 - o.cr_eff * o.cr_eff;
  return o;
}

/* Hunt-Crossley impact (fe = 0) of damping factor chi. Inside the master curves' domain (kl_hc_master_in: n
 * and zeta = chi v0) and for e = d*^(n+1) a normal double <= 1e300, kl_impact_hc_master: no quadrature, no
 * iteration. Outside it the phase-plane closed forms of kernels/kl_contact_hc.h. */
KL_FN kl_impact_out kl_impact_hc_of(kl_impact_in in, kl_real chi)
{
  const kl_real zeta = chi * in.v0;
  const kl_real e = (in.n + 1.0) * in.m * in.v0 * in.v0 / (2.0 * in.K); /* d*^(n+1) */
  if (kl_hc_master_in(in.n, zeta) && e >= KL_DBL_MIN && e <= KL_HUGE)
    return kl_impact_hc_master(in, chi, kl_hcm_series_of(in.n, zeta), kl_log_fin(e));
  const kl_real dmax = kl_hc_delta_max(in.m, in.K, in.n, chi, in.v0);
  kl_real trest;
  const kl_real tmax = kl_hc_phase_times(dmax, chi, in.v0, in.n, &trest);
  return kl_impact_hc_done(in, chi, dmax, tmax, trest);
}

/* The common case of a Hunt-Crossley sweep in straight-line code (docs/design.md section 4): no external force,
 * a usual exponent n = 1, 1.5, 2, 2.5 (the master curves' collapsed series), chi from the exact law's fit (exact = 1)
 * or from a closed-form law (exact = 0), zeta and e as kl_impact_hc_of needs them: kl_impact_hc_master, the same
 * operations as the general path, so the same bits. Any other input (a law of the other kind included), or a metric
 * that is not finite, gives zeros and KL_PENDING (the general path then computes it). No branch, loop or call but
 * selects and inlined functions, and any input is safe (the lanes declined compute on harmless values), so that the
 * fast kernels (kernels/impact.cl) vectorise it; with exact a constant there, the other law's chi is not computed. */
KL_FN_VEC kl_impact_out kl_impact_hc_fast(kl_impact_in in, int exact);

/* chi of the fast path: from the exact law's fit with the coefficients of octave oct (exact = 1), or from a
 * closed-form law (kernels/kl_contact_hc.h) */
KL_FN_VEC kl_real kl_impact_hc_chi_fast(kl_impact_in in, int exact, int oct)
{
  const int fit = kl_hc_exact_in(in.cr);
  /* exact is a constant in the fast kernels, so one side is compiled away there; a branch in the scalar path */
  return exact ? kl_hc_exact_fit_at(fit ? in.cr : 1.0, oct) / in.v0 : kl_hc_chi_closed(in.law, in.cr, in.v0);
}

/* The coefficients a Hunt-Crossley row of the fast path reads, its class: for a closed-form law kn NU + iu, for the
 * exact law KL_HC_NCLOSED + (oct 4 + kn) NU + iu, with oct the octave of cr (kl_hcx_octave), kn the row of the
 * usual exponent (kl_hcm_kn, 0 for another n) and iu the u piece of zeta (kl_hcm_uindex). The fast kernel takes one
 * class per block of rows, its first row's, so that each coefficient is one load for the block instead of a gather
 * row by row; the host sorts the rows by class (host/impact_batch.c, docs/design.md section 4). */
#define KL_HC_NCLOSED (4 * KL_HCM_NU)
#define KL_HC_NCLASS (KL_HC_NCLOSED + KL_HCX_NOCT * 4 * KL_HCM_NU)
KL_FN_VEC int kl_impact_hc_class_of(int exact, int oct, int kn, int iu)
{
  return (exact ? KL_HC_NCLOSED + oct * 4 * KL_HCM_NU : 0) + (kn >= 0 ? kn : 0) * KL_HCM_NU + iu;
}

KL_FN_VEC int kl_impact_hc_class(kl_impact_in in, int exact)
{
  const int oct = exact ? kl_hcx_octave(kl_hc_exact_in(in.cr) ? in.cr : 1.0) : 0;
  const kl_real zeta = kl_impact_hc_chi_fast(in, exact, oct) * in.v0;
  return kl_impact_hc_class_of(exact, oct, kl_hcm_kn(in.n), kl_hcm_uindex(kl_log1p_fin(zeta)));
}

/* kl_impact_hc_fast with the coefficients of class cls (own = 0) or of the row's own class (own = 1, cls unused); a
 * row of another class than cls gives zeros and KL_PENDING. Any cls is safe. */
KL_FN_VEC kl_impact_out kl_impact_hc_fast_of(kl_impact_in in, int exact, int cls, int own)
{
  const int c0 = exact ? cls - KL_HC_NCLOSED : cls;
  /* c >= 0, its pieces by unsigned division (shifts): a signed division and remainder of the same c became, in
   * Oclgrind's LLVM 14, a pair with a `freeze` its uninitialised-value check cannot run */
  const unsigned c = c0 >= 0 && c0 < (exact ? KL_HC_NCLASS - KL_HC_NCLOSED : KL_HC_NCLOSED) ? (unsigned)c0 : 0u;
  const int fit = kl_hc_exact_in(in.cr);
  const int octr = exact ? kl_hcx_octave(fit ? in.cr : 1.0) : 0, oct = own ? octr : (int)(c / (4u * KL_HCM_NU));
  const kl_real chi = kl_impact_hc_chi_fast(in, exact, oct);
  const kl_real zeta = chi * in.v0, u = kl_log1p_fin(zeta);
  const int iur = kl_hcm_uindex(u), knr = kl_hcm_kn(in.n);
  const int iu = own ? iur : (int)(c % KL_HCM_NU), kn = own ? (knr >= 0 ? knr : 0) : (int)(c / KL_HCM_NU % 4u);
  const kl_real e = (in.n + 1.0) * in.m * in.v0 * in.v0 / (2.0 * in.K);
  /* kl_impact_check's conditions for such a scenario, the law's domain, the master curves' and e's; and the class */
  const int ok = in.model == KL_MODEL_HC && kl_impact_fast_valid(in) && (in.law == KL_LAW_EXACT) == (exact != 0) &&
                 (fit || !exact) && knr == kn && kl_hc_master_in(in.n, zeta) && e >= KL_DBL_MIN && e <= KL_HUGE &&
                 iur == iu && octr == oct && (own || (int)c == c0);
  kl_real tu[KL_HCM_DUMAX];
  kl_hcm_ubasis(u, iu, tu);
  const kl_impact_out o = kl_impact_hc_master(in, chi, kl_hcm_series1(kn, iu, tu), kl_log_fin(e));
  return kl_impact_fast_answer(o, ok);
}

/* The fast kernel's: the coefficients of class cls */
KL_FN_VEC kl_impact_out kl_impact_hc_fast_at(kl_impact_in in, int exact, int cls)
{
  return kl_impact_hc_fast_of(in, exact, cls, 0);
}

KL_FN_VEC kl_impact_out kl_impact_hc_fast(kl_impact_in in, int exact) { return kl_impact_hc_fast_of(in, exact, 0, 1); }

/* A Hunt-Crossley impact (fe = 0) of its damping law: the fast path where it applies, else chi from the law (the
 * exact law's from its fit inside cr in [2^-7, 1], kernels/kl_hc_exact.h, docs/design.md 2.3), then
 * kl_impact_hc_of. */
KL_FN kl_impact_out kl_impact_hc(kl_impact_in in)
{
  const kl_impact_out f = kl_impact_hc_fast(in, in.law == KL_LAW_EXACT);
  if (f.status == KL_OK) return f;
  const int fit = in.law == KL_LAW_EXACT && kl_hc_exact_in(in.cr);
  const kl_real chi = fit ? kl_hc_exact_fit(in.cr) / in.v0 : kl_hc_chi(in.law, in.cr, in.v0);
  if (!(chi >= 0.0) || !kl_finite(chi)) return kl_impact_zero(KL_BAD_LAW);
  return kl_impact_hc_of(in, chi);
}

/* The paper's Emden-Fowler approximation (fe = 0) from its maximum penetration dmax, its time factor tf
 * (kl_ef_time_factor) and dmax^n: t_max = tf dmax / v0, t_c = t_max (1 + 1/cr), F_peak = K dmax^n. */
KL_FN_VEC kl_impact_out kl_impact_ef_of(kl_impact_in in, kl_real dmax, kl_real tf, kl_real dmaxn)
{
  kl_impact_out o = kl_impact_zero(KL_OK);
  o.dmax = dmax;
  o.tmax = tf * dmax / in.v0;
  o.tc = o.tmax * (1.0 + 1.0 / in.cr);
  o.fpeak = in.K * dmaxn;
  o.cr_eff = in.cr;
  o.ediss = 1.0 - in.cr * in.cr;
  return o;
}

/* Emden-Fowler without external force for n = 1 and 1.5 (the time factor a constant there) in straight-line code
 * (docs/design.md section 4): kl_impact_ef's operations (kl_powr as e^(p log x), kl_pown as x or x sqrt x), so its
 * bits; any other input, or a metric that is not finite, gives zeros and KL_PENDING. */
KL_FN_VEC kl_impact_out kl_impact_ef_fast(kl_impact_in in)
{
  const kl_real x = (in.n + 1.0) * in.m * in.v0 * in.v0 / (2.0 * in.K); /* dmax^(n+1) */
  const int lin = in.n == 1.0, hertz = in.n == 1.5;
  const int ok = in.model == KL_MODEL_EF && kl_impact_fast_valid(in) && (lin || hertz) && x > 0.0 && x <= KL_HUGE;
  /* |p log x| <= 372 for x in (0, 1e300]: kl_exp's range, where it is kl_exp_fin */
  const kl_real dmax = kl_exp_fin((1.0 / (in.n + 1.0)) * kl_log_fin(ok ? x : 1.0));
  const kl_real tf = lin ? KL_EF_TF_LINEAR : KL_EF_TF_HERTZ;
  const kl_real d1 = dmax, d15 = dmax * sqrt(dmax);
  const kl_impact_out o = kl_impact_ef_of(in, dmax, tf, lin ? d1 : d15);
  return kl_impact_fast_answer(o, ok);
}

/* The paper's Emden-Fowler approximation (fe = 0), see kl_ef_time_factor: the fast path where it applies. */
KL_FN kl_impact_out kl_impact_ef(kl_impact_in in)
{
  const kl_impact_out f = kl_impact_ef_fast(in);
  if (f.status == KL_OK) return f;
  const kl_real dmax = kl_powr((in.n + 1.0) * in.m * in.v0 * in.v0 / (2.0 * in.K), 1.0 / (in.n + 1.0));
  return kl_impact_ef_of(in, dmax, kl_ef_time_factor(in.n), kl_pown(dmax, in.n));
}

/* A finished scenario's metrics, or zeros and KL_NO_CONVERGE where one is not finite. */
KL_FN kl_impact_out kl_impact_final(kl_impact_out o)
{
  if (o.status == KL_OK && !kl_impact_finite(o)) return kl_impact_zero(KL_NO_CONVERGE);
  return o;
}

/* An impact by the step (kernels/kl_impact_step.h, docs/design.md section 2.5): the general law, or
 * Hunt-Crossley under an external force as the general law k = K, c = K chi, n1 = n2 = n, m = 1 (kept >= 0).
 * An impact that does not separate (pressed in by fe > 0, or past the horizon) gives KL_NO_SEPARATION and
 * zeros, as Kelvin-Voigt does. damp: c for the general law, chi for Hunt-Crossley. */
KL_FN kl_impact_out kl_impact_by_step(kl_impact_in in)
{
  kl_gen_law L;
  L.k = in.K;
  L.n1 = in.n;
  if (in.model == KL_MODEL_GEN) {
    L.c = in.c;
    L.n2 = in.n2;
    L.m = in.rate_exp;
  } else {
    const kl_real chi = kl_hc_chi(in.law, in.cr, in.v0);
    if (!(chi >= 0.0) || !kl_finite(chi)) return kl_impact_zero(KL_BAD_LAW);
    L.c = in.K * chi;
    L.n2 = in.n;
    L.m = 1.0;
  }
  const kl_istep_out r = kl_impact_step_run(L, in.m, in.v0, in.fe, in.rule == KL_SEP_FORCE, -1.0);
  if (r.status != KL_ISTEP_OK) return kl_impact_zero(r.status == KL_ISTEP_SETTLES ? KL_NO_SEPARATION : KL_NO_CONVERGE);
  kl_impact_out o = kl_impact_zero(KL_OK);
  o.dmax = r.dmax;
  o.tmax = r.tmax;
  o.fpeak = r.fpeak;
  o.tc = r.tc;
  o.cr_eff = -r.vexit / in.v0;
  o.ediss = 1.0 - o.cr_eff * o.cr_eff;
  o.damp = in.model == KL_MODEL_GEN ? in.c : L.c / in.K;
  if (!kl_finite(o.ediss) || !kl_finite(o.damp)) return kl_impact_zero(KL_NO_CONVERGE);
  return o;
}

/* The general law: Hunt-Crossley's closed forms where it is that law (rate exponent 1, n2 = n1, no external
 * force: chi = c/k, no tension arises, both separation rules agree), else the step. */
KL_FN kl_impact_out kl_impact_gen(kl_impact_in in)
{
  if (in.rate_exp == 1.0 && in.n2 == in.n && in.fe == 0.0) {
    kl_impact_out o = kl_impact_hc_of(in, in.c / in.K);
    o.damp = in.c;
    return o;
  }
  return kl_impact_by_step(in);
}

/* Metrics of one scenario; never NaN: a bad scenario returns zeros and its status bits. */
KL_FN kl_impact_out kl_impact(kl_impact_in in)
{
  const int st = kl_impact_check(in);
  if (st != KL_OK) return kl_impact_zero(st);
  kl_impact_out o;
  if (in.model == KL_MODEL_KV)
    o = kl_impact_kv(in);
  else if (in.model == KL_MODEL_HC)
    o = in.fe == 0.0 ? kl_impact_hc(in) : kl_impact_by_step(in);
  else if (in.model == KL_MODEL_EF)
    o = kl_impact_ef(in);
  else
    o = kl_impact_gen(in);
  return kl_impact_final(o);
}

#endif
