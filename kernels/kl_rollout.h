/* kernels/kl_rollout.h: the grinding-pass rollout of docs/design.md section 5 for one candidate, shared by
 * kernels/rollout.cl (P candidates at once), the OpenMP twin and the tests. Common subset of C17 and
 * OpenCL C 1.2.
 *
 * Normal dynamics along the path: z is the tool depth along -n relative to touching the nominal
 * surface, u = o(s) the commanded depth (path offset), h(s) the protrusion of the actual surface into
 * the ball-end tool, so the penetration is d = z + h(s) and its rate d' = z' + v h'(s). With the holder
 * F_h = K_h (u - z) + D_h (u' - z') and the contact force F_N(d, d') of section 2 (no tension: zero
 * unless d > 0 and F_N > 0),
 *     m z'' = F_h - kappa F_N + F_g,   ds/dt = v(s),
 * where kappa (per sample, from the part: optimiser/problem.c) is the share of the contact force that
 * acts along the tool axis: the contact normal n_c inclined against the axis a on a flank, step or bead,
 * and the friction mu F_N against the motion along the contact's tangent t, kappa = (n_c - mu t) . a
 * (1 on a flat part; below 1 climbing a flank, above 1 descending one). The contact force reported and
 * scored is the axial one, kappa F_N, as the 3-D verification measures it.
 * Between path samples s_{k-1}, s_k the offset and speed are linear in s and h is the cubic Hermite
 * interpolant of the sampled h and h'. Each interval is sub-stepped by the exponential Rosenbrock step of
 * kernels/kl_xrb.h: about the sub-step start the right-hand side is linearised (contact tangent stiffness
 * and damping, kernels/kl_contact_hc.h; the time derivative of the holder command and of the surface
 * * under the tool), the linear system is advanced exactly and the remainder enters as a quartic force
 * (order 5). What the tolerance bounds: each sub-step's error estimate (of its order-4 solution), as a
 * force through the stiffest of the holder + contact tangents at its start, its end and at the
 * reference force, is kept below KL_GP_FTOL x KL_GP_FREF x min(1, r h) (r = D/2m the decay rate of the
 * tool-axis mode, h the sub-step), so that the errors of the sub-steps before a sample, decaying as
 * e^{-r t}, add up to about that bound; the propagated order-5 solution is more accurate still. Measured
 * against a tight reference integration (tests/rollout_reference_test.c) at the default 1e-3, the
 * instantaneous and step-averaged forces at every sample are within 1e-3 of F_ref (worst 3.3e-4, on a
 * pass that lifts off and lands; 9e-8 on a weld bead). Contact onset and loss are located on the
 * sub-step's dense output on the true penetration and force (Illinois), the sub-step is taken again to
 * end just past the event, and split there. */
#ifndef KL_ROLLOUT_H
#define KL_ROLLOUT_H
#include "kl_common.h"
#include "kl_contact_kv.h"
#include "kl_impact.h"
#include "kl_xrb.h"
#include "kl_contact_static.h"

/* Problem constants, packed in a real array (KL_GP_N) so host and device agree on the layout. */
#define KL_GP_KH 0      /* holder stiffness [N/m] > 0 */
#define KL_GP_DH 1      /* holder damping [N s/m] */
#define KL_GP_KC 2      /* contact stiffness [N/m^n] */
#define KL_GP_NC 3      /* contact exponent n */
#define KL_GP_DC 4      /* Kelvin-Voigt contact damping D [N s/m] */
#define KL_GP_CHI 5     /* Hunt-Crossley damping factor chi [s/m] */
#define KL_GP_MODEL 6   /* KL_MODEL_KV, KL_MODEL_HC or KL_MODEL_GEN (then KC is the law's k, NC its n1) */
#define KL_GP_FTOL 7    /* force tolerance relative to KL_GP_FREF (default 1e-3), see below */
#define KL_GP_FREF 8    /* force scale of the objective and of the tolerance [N] */
#define KL_GP_FMAX 9    /* force above which the over-force penalty starts [N] */
#define KL_GP_AMAX 10   /* feed acceleration limit |v dv/ds| [m/s^2] */
#define KL_GP_OSCALE 11 /* offset scale of the roughness term [m] */
#define KL_GP_VSCALE 12 /* speed scale of the roughness term [m/s] */
#define KL_GP_TREF 13   /* time scale of the productivity term [s] */
#define KL_GP_AVG 14    /* the scored measure, KL_MEASURE_*: bit 0 step-averaged (else at the samples), bit 1 the
                         * wrist sensor (else the contact force) */
#define KL_GP_MAXSUB 15 /* most sub-steps per sample interval */
#define KL_GP_W_RMS 16  /* weights of the objective terms */
#define KL_GP_W_LOSS 17
#define KL_GP_W_OVER 18
#define KL_GP_W_TIME 19
#define KL_GP_W_ROUGH 20
#define KL_GP_W_ACC 21
#define KL_GP_GC 22     /* KL_MODEL_GEN: the law's c [N (s/m)^m / m^n2] (kernels/kl_contact_gen.h) */
#define KL_GP_GN2 23    /* KL_MODEL_GEN: n2 */
#define KL_GP_GM 24     /* KL_MODEL_GEN: the rate exponent m */
#define KL_GP_GDF 25    /* KL_MODEL_GEN: the depth floor of the linearisation's tangents [m] (kl_gen_lin_tangent) */
#define KL_GP_GVF 26    /* KL_MODEL_GEN: the rate floor of the linearisation's tangents [m/s] */
#define KL_GP_N 27

/* What the objective scores (KL_GP_AVG): the contact force or the wrist sensor's reading, at the samples
 * or averaged over each sample interval. The sensor on the robot's side of the holder reads the holder
 * force plus the weight, F_h + F_g = F_N + m z'' (the equation of motion): the contact force plus the
 * tool's inertia. Averaged over an interval of duration T that is the contact force's average plus
 * m (z'_k - z'_{k-1}) / T; at a sample K_h (u - z) + D_h (u' - z') + F_g (u' the interval's own rate).
 * The 3-D verification reads the same sensor (optimiser/verify3d.h). */
#define KL_MEASURE_INSTANT 0 /* contact force at the samples */
#define KL_MEASURE_AVERAGED 1 /* contact force averaged over each interval */
#define KL_MEASURE_SENSOR_INSTANT 2 /* wrist sensor at the samples */
#define KL_MEASURE_SENSOR 3 /* wrist sensor averaged over each interval (what a force sensor reports) */
#define KL_MEASURE_AVG_BIT 1
#define KL_MEASURE_SENSOR_BIT 2

/* Geometry per path sample, sample-major (every candidate reads the same): geo[k*KL_GG_N + field] */
#define KL_GG_S 0  /* arc length [m] */
#define KL_GG_H 1  /* protrusion of the actual surface into the tool at z = 0 [m] */
#define KL_GG_DH 2 /* dh/ds */
#define KL_GG_M 3  /* effective mass along n [kg] */
#define KL_GG_FG 4 /* tool weight component pushing into the surface [N] */
#define KL_GG_FT 5 /* target normal force [N] */
#define KL_GG_KAP 6 /* kappa - 1: the contact force's share along the tool axis, less 1 (0 on a flat part) */
#define KL_GG_N 7

/* Objective terms per rollout (KL_OBJ_N x Q): obj[term*Q + q] (Q = P candidates, or P x S in a scenario batch,
 * host/rollout_batch.h) */
#define KL_OBJ_J 0      /* weighted objective */
#define KL_OBJ_RMS 1    /* RMS of (F_k - F*_k)/F_ref */
#define KL_OBJ_LOSS 2   /* fraction of the pass time out of contact */
#define KL_OBJ_OVER 3   /* mean of (max(0, F_k - F_max)/F_ref)^2 */
#define KL_OBJ_TIME 4   /* pass time / reference time */
#define KL_OBJ_ROUGH 5  /* mean squared second differences of the commands, scaled */
#define KL_OBJ_ACC 6    /* mean of max(0, |v dv/ds|/a_max - 1)^2 */
#define KL_OBJ_T 7      /* pass time [s] */
#define KL_OBJ_NSUB 8   /* sub-steps taken */
#define KL_OBJ_STATUS 9 /* KL_OK, or status bits (non-finite, sub-step limit) */
#define KL_OBJ_FMAX 10  /* largest scored force F_k over the samples the RMS term sums [N] (0 if none) */
#define KL_OBJ_FMIN 11  /* smallest scored force F_k over those samples [N] (0 if none) */
#define KL_OBJ_N 12

/* Per-sample outputs (KL_SO_N x ns x Q), optional: out[(field*ns + k)*Q + q] */
#define KL_SO_F 0    /* instantaneous contact force at the sample [N] */
#define KL_SO_FAVG 1 /* step-averaged contact force over the interval ending at the sample [N] */
#define KL_SO_T 2    /* time [s] */
#define KL_SO_Z 3    /* tool depth [m] */
#define KL_SO_D 4    /* penetration [m] (0 out of contact) */
#define KL_SO_C 5    /* 1 in contact at the sample */
#define KL_SO_ZD 6   /* tool depth rate dz/dt at the sample [m/s] (with F and the holder, a wrist sensor's reading) */
#define KL_SO_N 7

typedef struct kl_grind_state {
  kl_real z, zd;  /* tool depth [m] and its rate [m/s] */
  kl_real t;      /* time [s] */
  kl_real h;      /* current sub-step [s] */
  int contact;    /* 1 while the contact carries force */
  int nsub;       /* sub-steps so far */
  int status;     /* KL_OK or status bits */
} kl_grind_state;

/* One sample interval [s_{k-1}, s_k]: everything the sub-steps need, by value. */
typedef struct kl_grind_iv {
  kl_real ds;             /* s_k - s_{k-1} > 0 */
  kl_real o0, o1, v0, v1; /* offset [m] and speed [m/s] at both ends */
  kl_real h0, h1;         /* protrusion at both ends [m] */
  kl_real g0, g1;         /* dh/ds at both ends */
  kl_real m, fg;          /* effective mass [kg] and weight component [N] on the interval */
  kl_real kap;            /* the contact force's share along the tool axis on the interval (kappa) */
} kl_grind_iv;

/* Result of one interval. */
typedef struct kl_grind_ivout {
  kl_real F;     /* instantaneous contact force at the end [N] */
  kl_real J;     /* impulse of the contact force over the interval [N s] */
  kl_real dt;    /* duration [s] */
  kl_real tfree; /* time out of contact [s] */
  kl_real d;     /* penetration at the end [m] */
} kl_grind_ivout;

/* Contact force F(d, d') of the model with its partial derivatives kt = dF/dd, dt = dF/dd' (the one law of
 * kernels/, kl_contact_tangent; the general law's bounded tangents, kl_gen_lin_tangent, 0 for d <= 0: the
 * rollout's own indicator decides about contact). */
KL_FN kl_real kl_grind_force(const KL_GLOBAL kl_real *gp, kl_real d, kl_real dd, kl_real *kt, kl_real *dt)
{
  if ((int)gp[KL_GP_MODEL] == KL_MODEL_GEN) {
    *kt = 0.0;
    *dt = 0.0;
    if (!(d > 0.0)) return 0.0;
    kl_gen_law L;
    L.k = gp[KL_GP_KC];
    L.c = gp[KL_GP_GC];
    L.n1 = gp[KL_GP_NC];
    L.n2 = gp[KL_GP_GN2];
    L.m = gp[KL_GP_GM];
    return kl_gen_lin_tangent(L, d, dd, gp[KL_GP_GDF], gp[KL_GP_GVF], kt, dt);
  }
  return kl_contact_tangent((int)gp[KL_GP_MODEL], gp[KL_GP_KC], gp[KL_GP_NC], gp[KL_GP_DC], gp[KL_GP_CHI], d, dd, kt,
                            dt);
}

/* The contact carries force: d > 0 and F > 0 (no tension: a grinding wheel cannot pull). */
KL_FN int kl_grind_active(const KL_GLOBAL kl_real *gp, kl_real d, kl_real dd)
{
  kl_real kt, dt;
  return (d > 0.0 && kl_grind_force(gp, d, dd, &kt, &dt) > 0.0) ? 1 : 0;
}

/* Cubic Hermite interpolant of h on the interval at sigma in [0, 1], and dh/ds there. */
KL_FN kl_real kl_grind_h(kl_grind_iv iv, kl_real sg, kl_real *hs)
{
  const kl_real s2 = sg * sg, s3 = s2 * sg;
  const kl_real a00 = 2.0 * s3 - 3.0 * s2 + 1.0, a10 = s3 - 2.0 * s2 + sg, a01 = -2.0 * s3 + 3.0 * s2, a11 = s3 - s2;
  const kl_real b00 = 6.0 * s2 - 6.0 * sg, b10 = 3.0 * s2 - 4.0 * sg + 1.0, b01 = -6.0 * s2 + 6.0 * sg,
                b11 = 3.0 * s2 - 2.0 * sg;
  *hs = (b00 * iv.h0 + b01 * iv.h1) / iv.ds + b10 * iv.g0 + b11 * iv.g1;
  return a00 * iv.h0 + a10 * iv.ds * iv.g0 + a01 * iv.h1 + a11 * iv.ds * iv.g1;
}

/* The same with the second derivative d2h/ds2 in *hss. */
KL_FN kl_real kl_grind_h2(kl_grind_iv iv, kl_real sg, kl_real *hs, kl_real *hss)
{
  const kl_real c00 = 12.0 * sg - 6.0, c10 = 6.0 * sg - 4.0, c11 = 6.0 * sg - 2.0;
  *hss = (c00 * (iv.h0 - iv.h1) / iv.ds + c10 * iv.g0 + c11 * iv.g1) / iv.ds;
  return kl_grind_h(iv, sg, hs);
}

/* Duration of the interval with v linear in s: int ds/v = ds log(v1/v0)/(v1 - v0). */
KL_FN kl_real kl_grind_duration(kl_grind_iv iv)
{
  const kl_real r = (iv.v1 - iv.v0) / iv.v0;
  if (fabs(r) < 1e-8) return iv.ds / iv.v0 * (1.0 - 0.5 * r + r * r / 3.0);
  return iv.ds * kl_log1p(r) / (iv.v1 - iv.v0);
}

/* Path position sigma = (s - s_{k-1})/ds after time tau: s = s0 + v0 (e^{a tau} - 1)/a, a = dv/ds. */
KL_FN_HOT kl_real kl_grind_sigma(kl_grind_iv iv, kl_real tau)
{
  const kl_real a = (iv.v1 - iv.v0) / iv.ds;
  const kl_real x = a * tau;
  const kl_real e = (fabs(x) < 1e-8) ? tau * (1.0 + 0.5 * x) : kl_expm1(x) / a;
  kl_real sg = iv.v0 * e / iv.ds;
  if (sg > 1.0) sg = 1.0;
  return sg;
}

/* The path under the tool at one instant of an interval: position sigma, feed speed v, the commanded
 * depth u and its time derivatives, the protrusion h and its time derivatives (v linear in s, so
 * dv/dt = a v with a = dv/ds; u linear in s; h the cubic Hermite interpolant). */
typedef struct kl_grind_pt {
  kl_real sg, v, u, ud, udd, h, hd, hdd;
} kl_grind_pt;

KL_FN kl_grind_pt kl_grind_at(kl_grind_iv iv, kl_real sg)
{
  kl_grind_pt p;
  const kl_real a = (iv.v1 - iv.v0) / iv.ds, os = (iv.o1 - iv.o0) / iv.ds;
  kl_real hs, hss;
  p.sg = sg;
  p.v = iv.v0 + (iv.v1 - iv.v0) * sg;
  p.u = iv.o0 + (iv.o1 - iv.o0) * sg;
  p.ud = os * p.v;
  p.udd = os * a * p.v;
  p.h = kl_grind_h2(iv, sg, &hs, &hss);
  p.hd = hs * p.v;
  p.hdd = hss * p.v * p.v + hs * a * p.v;
  return p;
}

/* Right-hand side of m z'' = F at the path point p and state (z, z'): holder, weight, and the contact
 * force (when `contact`); *Fc receives the contact force. */
KL_FN kl_real kl_grind_rhs(const KL_GLOBAL kl_real *gp, kl_grind_iv iv, kl_grind_pt p, kl_real z, kl_real zd,
                           int contact, kl_real *Fc)
{
  kl_real kt, ct;
  *Fc = contact ? iv.kap * kl_grind_force(gp, z + p.h, zd + p.hd, &kt, &ct) : 0.0;
  return gp[KL_GP_KH] * (p.u - z) + gp[KL_GP_DH] * (p.ud - zd) + iv.fg - *Fc;
}

/* The linearisation of the right-hand side about (z0, z0') at p (kernels/kl_xrb.h):
 * m z'' + (D_h + c_t) z' + (K_h + k_t) z = f0 + f1 tau, with k_t, c_t the contact tangent (0 out of
 * contact) and f1 the time derivative at fixed state: K_h u' + D_h u'' - k_t h' - c_t h''. */
KL_FN kl_kv_sys kl_grind_lin(const KL_GLOBAL kl_real *gp, kl_grind_iv iv, kl_grind_pt p, kl_real z0, kl_real zd0,
                             int contact)
{
  kl_real kt = 0.0, ct = 0.0, F0 = 0.0;
  if (contact) {
    F0 = iv.kap * kl_grind_force(gp, z0 + p.h, zd0 + p.hd, &kt, &ct);
    kt *= iv.kap;
    ct *= iv.kap;
  }
  const kl_real Kh = gp[KL_GP_KH], Dh = gp[KL_GP_DH];
  kl_kv_sys s;
  s.m = iv.m;
  s.K = Kh + kt;
  s.D = Dh + ct;
  s.f0 = Kh * p.u + Dh * p.ud + iv.fg - F0 + kt * z0 + ct * zd0;
  s.f1 = Kh * p.ud + Dh * p.udd - kt * p.hd - ct * p.hdd;
  return s;
}

/* The remainder of the linearisation s at tau along the step: the true right-hand side less the linear one. */
KL_FN kl_real kl_grind_rest(const KL_GLOBAL kl_real *gp, kl_grind_iv iv, kl_kv_sys s, kl_grind_pt p, kl_real tau,
                            kl_real z, kl_real zd, int contact)
{
  kl_real Fc;
  return kl_grind_rhs(gp, iv, p, z, zd, contact, &Fc) - (s.f0 + s.f1 * tau - s.K * z - s.D * zd);
}

/* The rate of the remainder along a solution at (tau, z, z') (kl_xrb_rate): the true right-hand side's
 * partial derivatives at p there, whose stiffness and damping go to *ke, *de. */
KL_FN kl_real kl_grind_rest_rate(const KL_GLOBAL kl_real *gp, kl_grind_iv iv, kl_kv_sys s, kl_grind_pt p, kl_real z,
                                 kl_real zd, int contact, kl_real *ke, kl_real *de)
{
  kl_real kt = 0.0, ct = 0.0, Fc = 0.0;
  if (contact) {
    Fc = iv.kap * kl_grind_force(gp, z + p.h, zd + p.hd, &kt, &ct);
    kt *= iv.kap;
    ct *= iv.kap;
  }
  const kl_real Kh = gp[KL_GP_KH], Dh = gp[KL_GP_DH];
  const kl_real zdd = (Kh * (p.u - z) + Dh * (p.ud - zd) + iv.fg - Fc) / iv.m;
  *ke = Kh + kt;
  *de = Dh + ct;
  const kl_real dFdt = Kh * p.ud + Dh * p.udd - kt * p.hd - ct * p.hdd;
  return kl_xrb_rate(s, zd, zdd, -(Kh + kt), -(Dh + ct), dFdt);
}

/* Event indicator of the phase: > 0 while it holds. In contact: the force where d > 0, the approach rate
 * where d = 0 (a contact located exactly at its onset has begun), else ks d (< 0); out of contact its
 * negative (contact resumes where d > 0 and the force turns positive). */
KL_FN kl_real kl_grind_indicator(const KL_GLOBAL kl_real *gp, kl_grind_pt p, kl_real z, kl_real zd, int contact,
                                 kl_real ks)
{
  const kl_real d = z + p.h;
  kl_real kt, ct;
  const kl_real ind = d > 0.0 ? kl_grind_force(gp, d, zd + p.hd, &kt, &ct) : (d == 0.0 ? zd + p.hd : ks * d);
  return contact ? ind : -ind;
}

/* int of (e^{a t} - 1) dt over [0, t] = t^2 (e^x - 1 - x)/x^2 with x = a t (series below |x| = 1e-2) */
KL_FN_HOT kl_real kl_grind_e2(kl_real a, kl_real t)
{
  const kl_real x = a * t;
  if (fabs(x) < 1e-2) return t * t * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 + x / 720.0))));
  return (kl_expm1(x) - x) / (a * a);
}

/* The tangent-linear rollout (forward sensitivities): the derivatives of the state with respect to
 * the commanded offsets along nd directions at once (a direction: an offset change delta o_k per sample;
 * the speeds are held). Along the solution the sensitivity (y, y') = d(z, z')/d(direction) obeys the
 * linear, time-varying equation
 *     m y'' + (D_h + c_t(t)) y' + (K_h + k_t(t)) y = K_h du + D_h du',
 * with k_t, c_t the contact's tangent stiffness and damping along the solution (0 out of contact) and du
 * the offset change linear in s between samples. Each accepted sub-step advances it over the same
 * interval by the exponential integrator's order-4 stage (kernels/kl_xrb.h, exprb43): linearised about
 * the sub-step start (the same K and D as the solution's own step), the remainder (the change of k_t,
 * c_t and of du along the step) taken at the middle and the end on the solution's dense output. The
 * force law is continuous where a contact starts or ends (F = 0 there), so the sensitivities carry across
 * the events unchanged. The derivative of the discrete rollout differs from this one by the integrator's
 * error (it is the continuous model's derivative); tests/gradient_check_test.c measures the agreement
 * with central differences. */
#define KL_TL_MAX 32 /* most directions per tangent-linear rollout */

typedef struct kl_grind_tl {
  int nd;                                  /* directions */
  kl_real y[KL_TL_MAX], yd[KL_TL_MAX];     /* sensitivities of z, z' */
  kl_real do0[KL_TL_MAX], do1[KL_TL_MAX];  /* offset changes at the interval's two samples (input) */
  kl_real iy[KL_TL_MAX];                   /* int y dt over the interval (output) */
  kl_real isig;                            /* int sigma dt over the interval (output) */
} kl_grind_tl;

/* The solution at one instant of a sub-step, as the sensitivity equation needs it: the path position
 * sigma, the speed, and the holder + contact tangents K_h + kappa k_t, D_h + kappa c_t there. */
typedef struct kl_grind_tlpt {
  kl_real sg, v, K, D;
} kl_grind_tlpt;

KL_FN kl_grind_tlpt kl_grind_tl_at(const KL_GLOBAL kl_real *gp, kl_grind_iv iv, kl_kv_poly dense, kl_real z0,
                                   kl_real zd0, kl_real tau0, kl_real tau, int contact)
{
  const kl_grind_pt p = kl_grind_at(iv, kl_grind_sigma(iv, tau0 + tau));
  kl_real kt = 0.0, ct = 0.0;
  if (contact) {
    const kl_kv_out b = kl_kv_poly_step(dense, z0, zd0, tau);
    kl_grind_force(gp, b.x + p.h, b.v + p.hd, &kt, &ct);
  }
  kl_grind_tlpt q;
  q.sg = p.sg;
  q.v = p.v;
  q.K = gp[KL_GP_KH] + iv.kap * kt;
  q.D = gp[KL_GP_DH] + iv.kap * ct;
  return q;
}

/* The sensitivity equation's remainder at tau (from the sub-step start), the solution there q, for the
 * offset change ddo0 + ddo sigma and the state (y, y'): the true right-hand side less the linearisation
 * lin. */
KL_FN kl_real kl_grind_tl_rest(const KL_GLOBAL kl_real *gp, kl_grind_iv iv, kl_kv_sys lin, kl_grind_tlpt q, kl_real tau,
                               kl_real ddo0, kl_real ddo, kl_real y, kl_real yd)
{
  const kl_real g = gp[KL_GP_KH] * (ddo0 + ddo * q.sg) + gp[KL_GP_DH] * ddo / iv.ds * q.v;
  return (g - q.K * y - q.D * yd) - (lin.f0 + lin.f1 * tau - lin.K * y - lin.D * yd);
}

/* Advance the sensitivities over an accepted sub-step [tau0, tau0 + hc] of the solution (linearisation s
 * at its start (z0, z0'), dense output dense, phase contact, path point p0 at its start). */
KL_FN void kl_grind_tl_step(const KL_GLOBAL kl_real *gp, kl_grind_iv iv, kl_kv_sys s, kl_kv_poly dense, kl_real z0,
                            kl_real zd0, kl_grind_pt p0, kl_real tau0, kl_real hc, int contact, kl_grind_tl *tl)
{
  const kl_real Kh = gp[KL_GP_KH], Dh = gp[KL_GP_DH];
  const kl_real a = (iv.v1 - iv.v0) / iv.ds;
  tl->isig += p0.sg * hc + p0.v / iv.ds * kl_grind_e2(a, hc);
  /* the solution at the middle and the end, shared by the directions */
  const kl_grind_tlpt qm = kl_grind_tl_at(gp, iv, dense, z0, zd0, tau0, 0.5 * hc, contact);
  const kl_grind_tlpt qe = kl_grind_tl_at(gp, iv, dense, z0, zd0, tau0, hc, contact);
  kl_xrb w;
  for (int i = 0; i < tl->nd; ++i) {
    const kl_real ddo0 = tl->do0[i], ddo = tl->do1[i] - tl->do0[i], us = ddo / iv.ds;
    kl_kv_sys ls = s;
    ls.f0 = Kh * (ddo0 + ddo * p0.sg) + Dh * us * p0.v;
    ls.f1 = Kh * us * p0.v + Dh * us * a * p0.v;
    kl_kv_out u2;
    if (i == 0) {
      u2 = kl_xrb_begin(&w, ls, tl->y[i], tl->yd[i], hc);
    } else { /* the bases depend on m, K, D and hc alone: shared by the directions */
      w.s = ls;
      w.x0 = tl->y[i];
      w.v0 = tl->yd[i];
      w.r2 = 0.0;
      u2 = kl_kv_apply(kl_kv_poly_of(ls), w.bh2, w.x0, w.v0);
    }
    const kl_kv_out u3 = kl_xrb_stage3(&w, kl_grind_tl_rest(gp, iv, ls, qm, 0.5 * hc, ddo0, ddo, u2.x, u2.v));
    const kl_kv_out x3 = kl_xrb_order4(&w, kl_grind_tl_rest(gp, iv, ls, qe, hc, ddo0, ddo, u3.x, u3.v));
    tl->iy[i] += (x3.J - ls.D * x3.dx) / ls.K; /* int y = (int (K y + D y') - D dy) / K */
    tl->y[i] = x3.x;
    tl->yd[i] = x3.v;
  }
}

/* Advance the state across one sample interval with controlled sub-steps (tl: the sensitivities carried
 * along, or NULL). */
KL_FN kl_grind_ivout kl_grind_interval_tl(const KL_GLOBAL kl_real *gp, kl_grind_iv iv, kl_grind_state *st,
                                          kl_grind_tl *tl)
{
  kl_grind_ivout out;
  out.J = 0.0;
  out.tfree = 0.0;
  const kl_real T = kl_grind_duration(iv);
  out.dt = T;
  const kl_real ftol = gp[KL_GP_FTOL] * gp[KL_GP_FREF];
  const kl_real Kh = gp[KL_GP_KH], Dh = gp[KL_GP_DH];
  const kl_real a = (iv.v1 - iv.v0) / iv.ds, os = (iv.o1 - iv.o0) / iv.ds;
  const int maxsub = (int)gp[KL_GP_MAXSUB];
  /* the contact's tangent at the reference force: the scale at which a state error becomes a force error
   * once the tool is (back) in contact, used out of contact too */
  kl_real kref, dref;
  {
    const kl_real n = gp[KL_GP_NC], K = gp[KL_GP_KC];
    const kl_real dF = (int)gp[KL_GP_MODEL] == KL_MODEL_KV ? gp[KL_GP_FREF] / K : kl_powr(gp[KL_GP_FREF] / K, 1.0 / n);
    kl_grind_force(gp, dF, 0.0, &kref, &dref);
  }
  kl_real tau = 0.0;
  int nsub = 0, flips = 0;
  if (!(st->h > 0.0) || st->h > T) st->h = T;
  kl_grind_pt p0 = kl_grind_at(iv, 0.0);
  while (tau < T && st->status == KL_OK) {
    if (nsub >= maxsub) {
      st->status |= KL_NO_CONVERGE;
      break;
    }
    const kl_real z0 = st->z, zd0 = st->zd;
    const kl_kv_sys s = kl_grind_lin(gp, iv, p0, z0, zd0, st->contact);
    /* the phase changes now: switch, take no step */
    if (kl_grind_indicator(gp, p0, z0, zd0, st->contact, s.K) <= 0.0 && flips < 4) {
      st->contact = !st->contact;
      ++flips;
      continue;
    }
    kl_real h = st->h;
    if (h > T - tau) h = T - tau;
    kl_kv_poly dense;
    kl_kv_out fin;
    kl_grind_pt pe, p2;
    int landing = 0, ev = 0;
    kl_real te = 0.0;
    for (;;) {
      const int last = h >= T - tau;
      kl_xrb w;
      p2 = kl_grind_at(iv, kl_grind_sigma(iv, tau + 0.5 * h));
      pe = kl_grind_at(iv, last ? 1.0 : kl_grind_sigma(iv, tau + h));
      const kl_kv_out u2 = kl_xrb_begin(&w, s, z0, zd0, h);
      const kl_kv_out u3 = kl_xrb_stage3(&w, kl_grind_rest(gp, iv, s, p2, 0.5 * h, u2.x, u2.v, st->contact));
      const kl_kv_out x3 = kl_xrb_order4(&w, kl_grind_rest(gp, iv, s, pe, h, u3.x, u3.v, st->contact));
      const kl_kv_out xm = kl_xrb_mid(&w);
      kl_real ke, de;
      const kl_real C = kl_grind_rest_rate(gp, iv, s, pe, x3.x, x3.v, st->contact, &ke, &de);
      kl_kv_out er;
      fin = kl_xrb_end(&w, kl_grind_rest(gp, iv, s, p2, 0.5 * h, xm.x, xm.v, st->contact),
                       kl_grind_rest(gp, iv, s, pe, h, x3.x, x3.v, st->contact), C, &dense, &er);
      /* force error of the order-4 solution, through the stiffest of the holder + contact tangents at the
       * start, at the end and at the reference force (out of contact, and at a contact's onset, a state
       * error becomes a force error when the contact resumes); out of contact also how far the surface
       * bends away from its chord over the step, which the event checks at the middle and the end would
       * not see */
      kl_real err = fabs(fmax(fmax(s.K, ke), Kh + kref) * er.x) + fabs(fmax(fmax(s.D, de), Dh + dref) * er.v);
      /* per unit of decay: an error made now decays as e^{-r t} (r = D / 2m), so errors of steps shorter than
       * 1/r add up; bounding each by ftol r h bounds their sum at a sample by about ftol */
      const kl_real rh = fmax(s.D, de) / (2.0 * s.m) * h;
      err /= fmin(1.0, fmax(rh, 1e-3));
      if (!st->contact) err = fmax(err, Kh * fabs(p2.h - 0.5 * (p0.h + pe.h)));
      if (err > ftol && h > 1e-12 * T) { /* reject (a step landing on an event too: it then falls short) */
        h = kl_xrb_next_h(h, err / ftol);
        landing = 0;
        continue;
      }
      if (!landing) st->h = kl_xrb_next_h(h, err / ftol);
      /* the next contact change on the dense output: the indicator at the middle (stage 2) and the end */
      ev = 0;
      te = h;
      if (kl_grind_indicator(gp, p2, u2.x, u2.v, st->contact, s.K) <= 0.0 ||
          kl_grind_indicator(gp, pe, fin.x, fin.v, st->contact, s.K) <= 0.0) {
        kl_real lo = 0.0, flo = 1.0, hi = h;
        {
          const kl_kv_out om = kl_kv_poly_step(dense, z0, zd0, 0.5 * h);
          const kl_real fm = kl_grind_indicator(gp, p2, om.x, om.v, st->contact, s.K);
          if (fm <= 0.0) {
            hi = 0.5 * h;
          } else {
            lo = 0.5 * h;
            flo = fm;
          }
        }
        kl_kv_out oh = kl_kv_poly_step(dense, z0, zd0, hi);
        kl_real fhi = kl_grind_indicator(gp, kl_grind_at(iv, kl_grind_sigma(iv, tau + hi)), oh.x, oh.v, st->contact, s.K);
        if (fhi <= 0.0) {
          ev = 1;
          if (lo == 0.0) flo = kl_grind_indicator(gp, p0, z0, zd0, st->contact, s.K);
          int side = 0;
          for (int it = 0; it < 100 && hi - lo > 1e-13 * h; ++it) {
            const kl_real c = kl_illinois_point(lo, flo, hi, fhi);
            const kl_kv_out oc = kl_kv_poly_step(dense, z0, zd0, c);
            const kl_real fc = kl_grind_indicator(gp, kl_grind_at(iv, kl_grind_sigma(iv, tau + c)), oc.x, oc.v,
                                                  st->contact, s.K);
            kl_illinois_update(&lo, &flo, &hi, &fhi, c, fc, fc > 0.0, &side);
          }
          te = hi;
        }
      }
      /* an event inside: the force law is not smooth there, so the step is taken again to end just
       * past it, and the event located on that step */
      if (ev && !landing && te < h * (1.0 - 1e-9)) {
        h = te * (1.0 + 1e-9);
        landing = 1;
        continue;
      }
      break;
    }
    const kl_real hc = ev ? te : h;
    const int to_end = !ev && h >= T - tau;
    const kl_kv_out o = ev ? kl_kv_poly_step(dense, z0, zd0, hc) : fin;
    const kl_grind_pt pc = ev ? kl_grind_at(iv, kl_grind_sigma(iv, tau + hc)) : pe;
    if (tl) kl_grind_tl_step(gp, iv, s, dense, z0, zd0, p0, tau, hc, st->contact, tl);
    ++nsub;
    flips = 0;
    if (st->contact) {
      /* contact impulse from the momentum balance along the dense output: int (holder + weight) - m dz';
       * int z = (J - D dz)/K from the step's impulse of K z + D z' */
      const kl_real intz = (o.J - s.D * o.dx) / s.K;
      const kl_real intu = p0.u * hc + os * p0.v * kl_grind_e2(a, hc);
      out.J += Kh * (intu - intz) + Dh * ((pc.u - p0.u) - o.dx) + iv.fg * hc - iv.m * o.dv;
    } else {
      out.tfree += hc;
    }
    st->z = o.x;
    st->zd = o.v;
    if (ev) st->contact = !st->contact;
    tau = to_end ? T : tau + hc;
    p0 = pc;
    if (!(kl_finite(st->z) && kl_finite(st->zd))) st->status |= KL_BAD_INPUT;
  }
  st->t += T;
  st->nsub += nsub;
  const kl_real d = st->z + p0.h, dd = st->zd + p0.hd;
  kl_real k1, d1;
  out.d = d;
  out.F = (st->contact && d > 0.0) ? iv.kap * kl_grind_force(gp, d, dd, &k1, &d1) : 0.0;
  if (out.F < 0.0) out.F = 0.0;
  return out;
}

KL_FN kl_grind_ivout kl_grind_interval(const KL_GLOBAL kl_real *gp, kl_grind_iv iv, kl_grind_state *st)
{
  return kl_grind_interval_tl(gp, iv, st, 0);
}

/* Static equilibrium depth at a sample: K_h (o - z) + F_g = kappa F_N(z + h, 0) (monotone in z). */
KL_FN kl_real kl_grind_equilibrium(const KL_GLOBAL kl_real *gp, kl_real o, kl_real h, kl_real fg, kl_real kap)
{
  const kl_real Kh = gp[KL_GP_KH];
  const kl_real zfree = o + fg / Kh;
  if (zfree + h <= 0.0) return zfree;
  kl_real a = -h, b = zfree; /* G(a) > 0 >= G(b) */
  for (int it = 0; it < 200; ++it) {
    const kl_real c = 0.5 * (a + b);
    if (c <= a || c >= b) break;
    kl_real k1, d1;
    const kl_real G = Kh * (o - c) + fg - kap * kl_grind_force(gp, c + h, 0.0, &k1, &d1);
    if (G > 0.0)
      a = c;
    else
      b = c;
  }
  return 0.5 * (a + b);
}

/* Running sums of the objective terms along a pass (docs/design.md section 5, "Objective"). The device
 * rollout, the OpenMP twin and the CPU-engine verification all score a pass with these functions. */
typedef struct kl_grind_acc {
  kl_real se, over, rough, acc, tfree;
  kl_real fhi, flo; /* the largest and smallest scored force so far */
  int n, nr;
} kl_grind_acc;

KL_FN void kl_grind_acc_init(kl_grind_acc *a)
{
  a->se = 0.0;
  a->over = 0.0;
  a->rough = 0.0;
  a->acc = 0.0;
  a->tfree = 0.0;
  a->fhi = 0.0;
  a->flo = 0.0;
  a->n = 0;
  a->nr = 0;
}

/* Add the interval ending at a sample: scored force fk against target ft, offsets o0 -> o1 and speeds
 * v0 -> v1 over ds, with (om, vm) the sample before o0 for the second differences (has_m = 0 if none),
 * and the time spent out of contact on the interval. */
KL_FN void kl_grind_acc_add(kl_grind_acc *a, const KL_GLOBAL kl_real *gp, kl_real fk, kl_real ft, kl_real ds,
                            kl_real o0, kl_real o1, kl_real v0, kl_real v1, int has_m, kl_real om, kl_real vm,
                            kl_real tfree)
{
  const kl_real fref = gp[KL_GP_FREF];
  const kl_real e = (fk - ft) / fref;
  a->se += e * e;
  const kl_real ov1 = fmax(0.0, fk - gp[KL_GP_FMAX]) / fref;
  a->over += ov1 * ov1;
  a->tfree += tfree;
  if (has_m) {
    const kl_real d2o = (o1 - 2.0 * o0 + om) / gp[KL_GP_OSCALE];
    const kl_real d2v = (v1 - 2.0 * v0 + vm) / gp[KL_GP_VSCALE];
    a->rough += d2o * d2o + d2v * d2v;
    a->nr++;
  }
  const kl_real x = fabs(0.5 * (v0 + v1) * (v1 - v0) / ds) / gp[KL_GP_AMAX] - 1.0;
  if (x > 0.0) a->acc += x * x;
  a->fhi = a->n > 0 ? fmax(a->fhi, fk) : fk;
  a->flo = a->n > 0 ? fmin(a->flo, fk) : fk;
  a->n++;
}

/* Objective terms of a finished pass of duration T into obj[term*P + p] (KL_OBJ_*; P, p the output's count and
 * index: a scenario batch passes its Q, q). */
KL_FN void kl_grind_acc_finish(const kl_grind_acc *a, const KL_GLOBAL kl_real *gp, kl_real T, int nsub, int status,
                               int P, int p, KL_GLOBAL kl_real *obj)
{
  const kl_real nk = a->n > 0 ? (kl_real)a->n : 1.0;
  const kl_real rms = sqrt(a->se / nk);
  const kl_real loss = T > 0.0 ? a->tfree / T : 1.0;
  const kl_real tt = T / gp[KL_GP_TREF];
  const kl_real over = a->over / nk;
  const kl_real rough = a->rough / (a->nr > 0 ? (kl_real)a->nr : 1.0);
  const kl_real acc = a->acc / nk;
  kl_real J = gp[KL_GP_W_RMS] * rms + gp[KL_GP_W_LOSS] * loss + gp[KL_GP_W_OVER] * over + gp[KL_GP_W_TIME] * tt +
              gp[KL_GP_W_ROUGH] * rough + gp[KL_GP_W_ACC] * acc;
  if (status != KL_OK || !kl_finite(J)) J = KL_HUGE;
  obj[KL_OBJ_J * P + p] = J;
  obj[KL_OBJ_RMS * P + p] = rms;
  obj[KL_OBJ_LOSS * P + p] = loss;
  obj[KL_OBJ_OVER * P + p] = over;
  obj[KL_OBJ_TIME * P + p] = tt;
  obj[KL_OBJ_ROUGH * P + p] = rough;
  obj[KL_OBJ_ACC * P + p] = acc;
  obj[KL_OBJ_T * P + p] = T;
  obj[KL_OBJ_NSUB * P + p] = (kl_real)nsub;
  obj[KL_OBJ_STATUS * P + p] = (kl_real)status;
  obj[KL_OBJ_FMAX * P + p] = a->fhi;
  obj[KL_OBJ_FMIN * P + p] = a->flo;
}

/* Roll out candidate p of P: offsets o_k = ov[k*P + p], speeds v_k = ov[(ns + k)*P + p]; writes the
 * objective terms obj[term*Q + q] and, if want, the per-sample outputs so[(field*ns + k)*Q + q], rollout q of
 * Q (Q = P, q = p for a batch of candidates; a scenario batch writes q = p S + s of Q = P S). With
 * nd > 0 (at most KL_TL_MAX) also the tangent-linear rollout along the offset directions dir[i*ns + k]
 * (i < nd): the derivative of the scored measure (KL_GP_AVG) at each sample along each direction into
 * dS[i*ns + k] (for candidate p; the caller gives each candidate its own dir and dS). */
KL_FN void kl_grind_rollout_tl(const KL_GLOBAL kl_real *gp, int ns, const KL_GLOBAL kl_real *geo,
                               const KL_GLOBAL kl_real *ov, int P, int p, int Q, int q, KL_GLOBAL kl_real *obj,
                               int want, KL_GLOBAL kl_real *so, int nd, const KL_GLOBAL kl_real *dir,
                               KL_GLOBAL kl_real *dS)
{
  kl_grind_state st;
  const kl_real kap0 = 1.0 + geo[KL_GG_KAP];
  st.z = kl_grind_equilibrium(gp, ov[p], geo[KL_GG_H], geo[KL_GG_FG], kap0);
  st.zd = 0.0;
  st.t = 0.0;
  st.h = 0.0;
  st.nsub = 0;
  st.status = KL_OK;
  st.contact = kl_grind_active(gp, st.z + geo[KL_GG_H], 0.0);
  kl_real F = 0.0;
  if (st.contact) {
    kl_real k1, d1;
    F = kap0 * kl_grind_force(gp, st.z + geo[KL_GG_H], 0.0, &k1, &d1);
  }
  const int measure = (int)gp[KL_GP_AVG];
  kl_grind_tl tl;
  if (nd > KL_TL_MAX) nd = KL_TL_MAX;
  tl.nd = nd > 0 ? nd : 0;
  {
    /* the start's equilibrium moves with o_0 by K_h / (K_h + k_t) in contact, 1 out of it */
    kl_real kt = 0.0, ct = 0.0;
    if (st.contact) kl_grind_force(gp, st.z + geo[KL_GG_H], 0.0, &kt, &ct);
    const kl_real dz0 = gp[KL_GP_KH] / (gp[KL_GP_KH] + kap0 * kt);
    for (int i = 0; i < tl.nd; ++i) {
      tl.y[i] = dz0 * dir[i * ns];
      tl.yd[i] = 0.0;
      dS[i * ns] = (measure & KL_MEASURE_SENSOR_BIT) || st.contact ? gp[KL_GP_KH] * (dir[i * ns] - tl.y[i]) : 0.0;
    }
  }
  kl_grind_acc a;
  kl_grind_acc_init(&a);
  if (want) {
    so[(KL_SO_F * ns + 0) * Q + q] = F;
    so[(KL_SO_FAVG * ns + 0) * Q + q] = F;
    so[(KL_SO_T * ns + 0) * Q + q] = 0.0;
    so[(KL_SO_Z * ns + 0) * Q + q] = st.z;
    so[(KL_SO_D * ns + 0) * Q + q] = st.contact ? st.z + geo[KL_GG_H] : 0.0;
    so[(KL_SO_C * ns + 0) * Q + q] = (kl_real)st.contact;
    so[(KL_SO_ZD * ns + 0) * Q + q] = 0.0;
  }
  kl_real zd_prev = st.zd;
  for (int k = 1; k < ns && st.status == KL_OK; ++k) {
    kl_grind_iv iv;
    iv.ds = geo[k * KL_GG_N + KL_GG_S] - geo[(k - 1) * KL_GG_N + KL_GG_S];
    iv.o0 = ov[(k - 1) * P + p];
    iv.o1 = ov[k * P + p];
    iv.v0 = ov[(ns + k - 1) * P + p];
    iv.v1 = ov[(ns + k) * P + p];
    iv.h0 = geo[(k - 1) * KL_GG_N + KL_GG_H];
    iv.h1 = geo[k * KL_GG_N + KL_GG_H];
    iv.g0 = geo[(k - 1) * KL_GG_N + KL_GG_DH];
    iv.g1 = geo[k * KL_GG_N + KL_GG_DH];
    iv.m = 0.5 * (geo[(k - 1) * KL_GG_N + KL_GG_M] + geo[k * KL_GG_N + KL_GG_M]);
    iv.fg = 0.5 * (geo[(k - 1) * KL_GG_N + KL_GG_FG] + geo[k * KL_GG_N + KL_GG_FG]);
    iv.kap = 1.0 + 0.5 * (geo[(k - 1) * KL_GG_N + KL_GG_KAP] + geo[k * KL_GG_N + KL_GG_KAP]);
    if (!(iv.ds > 0.0 && iv.v0 > 0.0 && iv.v1 > 0.0 && iv.m > 0.0)) {
      st.status |= KL_BAD_INPUT;
      break;
    }
    kl_real y_prev[KL_TL_MAX], yd_prev[KL_TL_MAX];
    for (int i = 0; i < tl.nd; ++i) {
      tl.do0[i] = dir[i * ns + k - 1];
      tl.do1[i] = dir[i * ns + k];
      tl.iy[i] = 0.0;
      y_prev[i] = tl.y[i];
      yd_prev[i] = tl.yd[i];
    }
    tl.isig = 0.0;
    const kl_grind_ivout r = kl_grind_interval_tl(gp, iv, &st, tl.nd ? &tl : 0);
    /* the scored measure's derivatives: the sensor averaged is the holder force's average,
     * (K_h int (du - y) + D_h (ddu - dy)) / T; the contact force's average less m dy' / T; at the sample
     * the holder force, or the contact tangent's k_t y + c_t y' */
    for (int i = 0; i < tl.nd; ++i) {
      const kl_real ddo = tl.do1[i] - tl.do0[i];
      const kl_real Kh = gp[KL_GP_KH], Dh = gp[KL_GP_DH];
      kl_real d;
      if (measure & KL_MEASURE_AVG_BIT) { /* the holder's impulse: K_h int (du - y) + D_h (ddo - dy) */
        d = (Kh * (tl.do0[i] * r.dt + ddo * tl.isig - tl.iy[i]) + Dh * (ddo - (tl.y[i] - y_prev[i]))) / r.dt;
        if (!(measure & KL_MEASURE_SENSOR_BIT)) d -= iv.m * (tl.yd[i] - yd_prev[i]) / r.dt;
      } else if (measure & KL_MEASURE_SENSOR_BIT) {
        d = Kh * (tl.do1[i] - tl.y[i]) + Dh * (ddo / iv.ds * iv.v1 - tl.yd[i]);
      } else {
        kl_real kt = 0.0, ct = 0.0;
        if (st.contact && r.F > 0.0) kl_grind_force(gp, r.d, st.zd + (iv.g1) * iv.v1, &kt, &ct);
        d = iv.kap * (kt * tl.y[i] + ct * tl.yd[i]);
      }
      dS[i * ns + k] = d;
    }
    const kl_real favg = r.J / r.dt;
    kl_real fk = (measure & KL_MEASURE_AVG_BIT) ? favg : r.F;
    if (measure == KL_MEASURE_SENSOR) fk = favg + iv.m * (st.zd - zd_prev) / r.dt;
    if (measure == KL_MEASURE_SENSOR_INSTANT)
      fk = gp[KL_GP_KH] * (iv.o1 - st.z) + gp[KL_GP_DH] * ((iv.o1 - iv.o0) / iv.ds * iv.v1 - st.zd) +
           geo[k * KL_GG_N + KL_GG_FG];
    zd_prev = st.zd;
    const int has_m = k >= 2;
    kl_grind_acc_add(&a, gp, fk, geo[k * KL_GG_N + KL_GG_FT], iv.ds, iv.o0, iv.o1, iv.v0, iv.v1, has_m,
                     has_m ? ov[(k - 2) * P + p] : 0.0, has_m ? ov[(ns + k - 2) * P + p] : 0.0, r.tfree);
    if (want) {
      so[(KL_SO_F * ns + k) * Q + q] = r.F;
      so[(KL_SO_FAVG * ns + k) * Q + q] = favg;
      so[(KL_SO_T * ns + k) * Q + q] = st.t;
      so[(KL_SO_Z * ns + k) * Q + q] = st.z;
      so[(KL_SO_D * ns + k) * Q + q] = (st.contact && r.d > 0.0) ? r.d : 0.0;
      so[(KL_SO_C * ns + k) * Q + q] = (kl_real)st.contact;
      so[(KL_SO_ZD * ns + k) * Q + q] = st.zd;
    }
  }
  kl_grind_acc_finish(&a, gp, st.t, st.nsub, st.status, Q, q, obj);
}

KL_FN void kl_grind_rollout(const KL_GLOBAL kl_real *gp, int ns, const KL_GLOBAL kl_real *geo,
                            const KL_GLOBAL kl_real *ov, int P, int p, KL_GLOBAL kl_real *obj, int want,
                            KL_GLOBAL kl_real *so)
{
  kl_grind_rollout_tl(gp, ns, geo, ov, P, p, P, p, obj, want, so, 0, 0, 0);
}

#endif
