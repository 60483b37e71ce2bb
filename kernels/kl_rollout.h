/* kernels/kl_rollout.h: the grinding-pass rollout of docs/design.md section 5 for one candidate, shared by
 * kernels/rollout.cl (P candidates at once), the OpenMP twin and the tests. Common subset of C17 and
 * OpenCL C 1.2.
 *
 * Normal dynamics along the path: z is the tool depth along -n relative to touching the nominal
 * surface, u = o(s) the commanded depth (path offset), h(s) the protrusion of the actual surface into
 * the ball-end tool, so the penetration is d = z + h(s) and its rate d' = z' + v h'(s). With the holder
 * F_h = K_h (u - z) + D_h (u' - z') and the contact force F_N(d, d') of section 2 (no tension: zero
 * unless d > 0 and F_N > 0),
 *     m z'' = F_h - F_N + F_g,   ds/dt = v(s).
 * Between path samples s_{k-1}, s_k the offset and speed are linear in s and h is the cubic Hermite
 * interpolant of the sampled h and h'. Each interval is sub-stepped: on a sub-step the contact force is
 * linearised about the sub-step start (exact for Kelvin-Voigt; tangent stiffness n K d^{n-1}(1 + chi d')
 * and damping chi K d^n for Hunt-Crossley), h and u are affine in time, and the resulting linear system
 * is advanced exactly (kl_kv_step, paper eq. 4 with affine forcing). Sub-steps are controlled by step
 * doubling to a force tolerance; contact onset and loss are located inside a sub-step
 * (kl_kv_first_root) and the sub-step is split there. */
#ifndef KL_ROLLOUT_H
#define KL_ROLLOUT_H
#include "kl_common.h"
#include "kl_contact_kv.h"
#include "kl_impact.h"

/* Problem constants, packed in a real array (KL_GP_N) so host and device agree on the layout. */
#define KL_GP_KH 0      /* holder stiffness [N/m] > 0 */
#define KL_GP_DH 1      /* holder damping [N s/m] */
#define KL_GP_KC 2      /* contact stiffness [N/m^n] */
#define KL_GP_NC 3      /* contact exponent n */
#define KL_GP_DC 4      /* Kelvin-Voigt contact damping D [N s/m] */
#define KL_GP_CHI 5     /* Hunt-Crossley damping factor chi [s/m] */
#define KL_GP_MODEL 6   /* KL_MODEL_KV or KL_MODEL_HC */
#define KL_GP_FTOL 7    /* relative force tolerance of the sub-step control (default 1e-3) */
#define KL_GP_FREF 8    /* force scale of the objective and of the tolerance [N] */
#define KL_GP_FMAX 9    /* force above which the over-force penalty starts [N] */
#define KL_GP_AMAX 10   /* feed acceleration limit |v dv/ds| [m/s^2] */
#define KL_GP_OSCALE 11 /* offset scale of the roughness term [m] */
#define KL_GP_VSCALE 12 /* speed scale of the roughness term [m/s] */
#define KL_GP_TREF 13   /* time scale of the productivity term [s] */
#define KL_GP_AVG 14    /* 1: the objective uses the step-averaged force, 0: the instantaneous one */
#define KL_GP_MAXSUB 15 /* most sub-steps per sample interval */
#define KL_GP_W_RMS 16  /* weights of the objective terms */
#define KL_GP_W_LOSS 17
#define KL_GP_W_OVER 18
#define KL_GP_W_TIME 19
#define KL_GP_W_ROUGH 20
#define KL_GP_W_ACC 21
#define KL_GP_N 22

/* Geometry per path sample, sample-major (every candidate reads the same): geo[k*KL_GG_N + field] */
#define KL_GG_S 0  /* arc length [m] */
#define KL_GG_H 1  /* protrusion of the actual surface into the tool at z = 0 [m] */
#define KL_GG_DH 2 /* dh/ds */
#define KL_GG_M 3  /* effective mass along n [kg] */
#define KL_GG_FG 4 /* tool weight component pushing into the surface [N] */
#define KL_GG_FT 5 /* target normal force [N] */
#define KL_GG_N 6

/* Objective terms per candidate (KL_OBJ_N x P): obj[term*P + p] */
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
#define KL_OBJ_N 10

/* Per-sample outputs (KL_SO_N x ns x P), optional: out[(field*ns + k)*P + p] */
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
} kl_grind_iv;

/* Result of one interval. */
typedef struct kl_grind_ivout {
  kl_real F;     /* instantaneous contact force at the end [N] */
  kl_real J;     /* impulse of the contact force over the interval [N s] */
  kl_real dt;    /* duration [s] */
  kl_real tfree; /* time out of contact [s] */
  kl_real d;     /* penetration at the end [m] */
} kl_grind_ivout;

/* Contact force F(d, d') of the model with its partial derivatives kt = dF/dd, dt = dF/dd'. */
KL_FN kl_real kl_grind_force(const KL_GLOBAL kl_real *gp, kl_real d, kl_real dd, kl_real *kt, kl_real *dt)
{
  if ((int)gp[KL_GP_MODEL] == KL_MODEL_KV) {
    *kt = gp[KL_GP_KC];
    *dt = gp[KL_GP_DC];
    return gp[KL_GP_KC] * d + gp[KL_GP_DC] * dd;
  }
  const kl_real dc = d > 0.0 ? d : 0.0;
  const kl_real n = gp[KL_GP_NC], K = gp[KL_GP_KC], chi = gp[KL_GP_CHI];
  const kl_real dn = kl_pown(dc, n);
  const kl_real w = 1.0 + chi * dd;
  *kt = (dc > 0.0) ? n * K * (dn / dc) * w : 0.0;
  *dt = chi * K * dn;
  if (*kt < 0.0) *kt = 0.0;
  return K * dn * w;
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

/* Duration of the interval with v linear in s: int ds/v = ds log(v1/v0)/(v1 - v0). */
KL_FN kl_real kl_grind_duration(kl_grind_iv iv)
{
  const kl_real r = (iv.v1 - iv.v0) / iv.v0;
  if (fabs(r) < 1e-8) return iv.ds / iv.v0 * (1.0 - 0.5 * r + r * r / 3.0);
  return iv.ds * kl_log1p(r) / (iv.v1 - iv.v0);
}

/* Path position sigma = (s - s_{k-1})/ds after time tau: s = s0 + v0 (e^{a tau} - 1)/a, a = dv/ds. */
KL_FN kl_real kl_grind_sigma(kl_grind_iv iv, kl_real tau)
{
  const kl_real a = (iv.v1 - iv.v0) / iv.ds;
  const kl_real x = a * tau;
  const kl_real e = (fabs(x) < 1e-8) ? tau * (1.0 + 0.5 * x) : kl_expm1(x) / a;
  kl_real sg = iv.v0 * e / iv.ds;
  if (sg > 1.0) sg = 1.0;
  return sg;
}

/* The linear system of one sub-step from (z0, zd0) at path position sg (see the file comment):
 * m z'' + (D_h + Dt) z' + (K_h + Kt) z = f0 + f1 t. Also returns the affine penetration d0 + hr t
 * offset (hh, hr) and the linearised contact force at the start. */
KL_FN kl_kv_sys kl_grind_sys(const KL_GLOBAL kl_real *gp, kl_grind_iv iv, kl_real sg, kl_real z0, kl_real zd0,
                             int contact, kl_real *hh, kl_real *hr, kl_real *F0, kl_real *Kt, kl_real *Dt)
{
  kl_real hs;
  const kl_real v = iv.v0 + (iv.v1 - iv.v0) * sg;
  const kl_real u = iv.o0 + (iv.o1 - iv.o0) * sg;
  const kl_real ur = (iv.o1 - iv.o0) / iv.ds * v;
  *hh = kl_grind_h(iv, sg, &hs);
  *hr = hs * v;
  *F0 = 0.0;
  *Kt = 0.0;
  *Dt = 0.0;
  if (contact) *F0 = kl_grind_force(gp, z0 + *hh, zd0 + *hr, Kt, Dt);
  const kl_real Kh = gp[KL_GP_KH], Dh = gp[KL_GP_DH];
  kl_kv_sys s;
  s.m = iv.m;
  s.K = Kh + *Kt;
  s.D = Dh + *Dt;
  s.f0 = Kh * u + Dh * ur + iv.fg - *F0 + *Kt * z0 + *Dt * zd0;
  s.f1 = Kh * ur - *Kt * *hr;
  return s;
}

/* Event function coefficients phi = al z + be z' + c0 + c1 t for the next contact change:
 * in contact, loss where d <= 0 (which = 0) or the linearised force <= 0 (which = 1);
 * out of contact, onset where d > 0 (d <= 0 now) or, with d > 0, where the force turns positive. */
KL_FN void kl_grind_event(const KL_GLOBAL kl_real *gp, int contact, int which, kl_real z0, kl_real zd0, kl_real hh,
                          kl_real hr, kl_real F0, kl_real Kt, kl_real Dt, kl_real *al, kl_real *be, kl_real *c0,
                          kl_real *c1)
{
  if (contact) {
    if (which == 0) { /* d = z + hh + hr t */
      *al = 1.0;
      *be = 0.0;
      *c0 = hh;
      *c1 = hr;
    } else { /* F = F0 + Kt (z - z0 + hr t) + Dt (z' - zd0) */
      *al = Kt;
      *be = Dt;
      *c0 = F0 - Kt * z0 - Dt * zd0;
      *c1 = Kt * hr;
    }
    return;
  }
  if (z0 + hh <= 0.0) { /* -d */
    *al = -1.0;
    *be = 0.0;
    *c0 = -hh;
    *c1 = -hr;
  } else if ((int)gp[KL_GP_MODEL] == KL_MODEL_KV) { /* -(K d + D d') */
    const kl_real K = gp[KL_GP_KC], D = gp[KL_GP_DC];
    *al = -K;
    *be = -D;
    *c0 = -(K * hh + D * hr);
    *c1 = -K * hr;
  } else { /* -(1 + chi d') */
    const kl_real chi = gp[KL_GP_CHI];
    *al = 0.0;
    *be = -chi;
    *c0 = -(1.0 + chi * hr);
    *c1 = 0.0;
  }
}

/* impulse of the linearised contact force over a sub-step of length tau of system s from (z0, zd0):
 * int F0 + Kt (z - z0 + hr t) + Dt (z' - zd0) dt, with int z dt = (J - D dz)/K from the step's J */
KL_FN kl_real kl_grind_impulse(kl_kv_sys s, kl_kv_out o, kl_real z0, kl_real zd0, kl_real tau, kl_real F0,
                               kl_real Kt, kl_real Dt, kl_real hr)
{
  const kl_real intz = (o.J - s.D * o.dx) / s.K;
  return F0 * tau + Kt * (intz - z0 * tau + 0.5 * hr * tau * tau) + Dt * (o.dx - zd0 * tau);
}

/* Advance the state across one sample interval with controlled sub-steps. */
KL_FN kl_grind_ivout kl_grind_interval(const KL_GLOBAL kl_real *gp, kl_grind_iv iv, kl_grind_state *st)
{
  kl_grind_ivout out;
  out.J = 0.0;
  out.tfree = 0.0;
  const kl_real T = kl_grind_duration(iv);
  out.dt = T;
  const kl_real ftol = gp[KL_GP_FTOL] * gp[KL_GP_FREF];
  const kl_real Kh = gp[KL_GP_KH];
  const int maxsub = (int)gp[KL_GP_MAXSUB];
  kl_real tau = 0.0;
  int nsub = 0, flips = 0;
  if (!(st->h > 0.0) || st->h > T) st->h = T;
  while (tau < T && st->status == KL_OK) {
    if (nsub >= maxsub) {
      st->status |= KL_NO_CONVERGE;
      break;
    }
    const kl_real sg = kl_grind_sigma(iv, tau);
    kl_real hh, hr, F0, Kt, Dt;
    const kl_kv_sys s = kl_grind_sys(gp, iv, sg, st->z, st->zd, st->contact, &hh, &hr, &F0, &Kt, &Dt);
    kl_real h = st->h;
    if (h > T - tau) h = T - tau;
    /* next contact change along the start-linearised solution. The root search runs only where an
     * event function is not positive at the start, the middle and the end of the step: a double
     * crossing inside one half of a step the error control accepts would be a graze too short to
     * carry force at the tolerance. */
    kl_real te = KL_HUGE, tr;
    const int nw = st->contact ? 2 : 1;
    {
      const kl_kv_out e1 = kl_kv_step(s, st->z, st->zd, 0.5 * h), e2 = kl_kv_step(s, st->z, st->zd, h);
      for (int w = 0; w < nw; ++w) {
        kl_real al, be, c0, c1;
        kl_grind_event(gp, st->contact, w, st->z, st->zd, hh, hr, F0, Kt, Dt, &al, &be, &c0, &c1);
        const int quiet = al * st->z + be * st->zd + c0 > 0.0 && al * e1.x + be * e1.v + c0 + c1 * 0.5 * h > 0.0 &&
                          al * e2.x + be * e2.v + c0 + c1 * h > 0.0;
        if (!quiet && kl_kv_first_root(s, st->z, st->zd, al, be, c0, c1, h, &tr) && tr < te) te = tr;
      }
    }
    if (te <= 0.0 && flips < 4) { /* the change is now: switch, take no step */
      st->contact = !st->contact;
      ++flips;
      continue;
    }
    int switching = 0;
    if (te < h) {
      h = te > 0.0 ? te : h * 1e-6;
      switching = te > 0.0;
    }
    /* step doubling: one step of h against two of h/2, the second re-linearised at the midpoint */
    const kl_kv_out full = kl_kv_step(s, st->z, st->zd, h);
    const kl_kv_out mid = kl_kv_step(s, st->z, st->zd, 0.5 * h);
    kl_real hh2, hr2, F02, Kt2, Dt2;
    const kl_real sgm = kl_grind_sigma(iv, tau + 0.5 * h);
    const kl_kv_sys s2 = kl_grind_sys(gp, iv, sgm, mid.x, mid.v, st->contact, &hh2, &hr2, &F02, &Kt2, &Dt2);
    const kl_kv_out two = kl_kv_step(s2, mid.x, mid.v, 0.5 * h);
    const kl_real sge = kl_grind_sigma(iv, tau + h);
    kl_real hse;
    const kl_real he = kl_grind_h(iv, sge, &hse);
    const kl_real ve = iv.v0 + (iv.v1 - iv.v0) * sge;
    kl_real k1, d1;
    kl_real err = Kh * fabs(full.x - two.x);
    if (st->contact) {
      const kl_real Ff = kl_grind_force(gp, full.x + he, full.v + hse * ve, &k1, &d1);
      const kl_real Ft = kl_grind_force(gp, two.x + he, two.v + hse * ve, &k1, &d1);
      err = fmax(err, fabs(Ff - Ft));
    } else {
      /* out of contact: the affine h must not miss the surface by more than the tolerance allows */
      err = fmax(err, Kh * fabs(he - (hh + hr * h)));
    }
    if (err > ftol && h > 1e-12 * T) { /* reject; an event is looked for again in the shorter step */
      st->h = h * fmax(0.1, 0.9 * kl_powr(ftol / err, 1.0 / 3.0));
      continue;
    }
    ++nsub;
    flips = 0;
    if (st->contact) {
      out.J += kl_grind_impulse(s, mid, st->z, st->zd, 0.5 * h, F0, Kt, Dt, hr) +
               kl_grind_impulse(s2, two, mid.x, mid.v, 0.5 * h, F02, Kt2, Dt2, hr2);
    } else {
      out.tfree += h;
    }
    if (switching) {
      /* land on the event with the solution that located it, then switch */
      st->z = full.x;
      st->zd = full.v;
      st->contact = !st->contact;
    } else {
      /* local extrapolation: the linearisation error of one step is O(h^2), halved by two mid steps */
      st->z = (4.0 * two.x - full.x) / 3.0;
      st->zd = (4.0 * two.v - full.v) / 3.0;
      st->h = h * fmin(4.0, 0.9 * kl_powr(ftol / fmax(err, 1e-300), 1.0 / 3.0));
    }
    tau += h;
    if (!(kl_finite(st->z) && kl_finite(st->zd))) st->status |= KL_BAD_INPUT;
  }
  st->t += T;
  st->nsub += nsub;
  kl_real hs;
  const kl_real he = kl_grind_h(iv, 1.0, &hs);
  const kl_real d = st->z + he, dd = st->zd + hs * iv.v1;
  kl_real k1, d1;
  out.d = d;
  out.F = (st->contact && d > 0.0) ? kl_grind_force(gp, d, dd, &k1, &d1) : 0.0;
  if (out.F < 0.0) out.F = 0.0;
  return out;
}

/* Static equilibrium depth at a sample: K_h (o - z) + F_g = F_N(z + h, 0) (monotone in z). */
KL_FN kl_real kl_grind_equilibrium(const KL_GLOBAL kl_real *gp, kl_real o, kl_real h, kl_real fg)
{
  const kl_real Kh = gp[KL_GP_KH];
  const kl_real zfree = o + fg / Kh;
  if (zfree + h <= 0.0) return zfree;
  kl_real a = -h, b = zfree; /* G(a) > 0 >= G(b) */
  for (int it = 0; it < 200; ++it) {
    const kl_real c = 0.5 * (a + b);
    if (c <= a || c >= b) break;
    kl_real k1, d1;
    const kl_real G = Kh * (o - c) + fg - kl_grind_force(gp, c + h, 0.0, &k1, &d1);
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
  int n, nr;
} kl_grind_acc;

KL_FN void kl_grind_acc_init(kl_grind_acc *a)
{
  a->se = 0.0;
  a->over = 0.0;
  a->rough = 0.0;
  a->acc = 0.0;
  a->tfree = 0.0;
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
  a->n++;
}

/* Objective terms of a finished pass of duration T into obj[term*P + p] (KL_OBJ_*). */
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
}

/* Roll out candidate p of P: offsets o_k = ov[k*P + p], speeds v_k = ov[(ns + k)*P + p]; writes the
 * objective terms obj[term*P + p] and, if want, the per-sample outputs so[(field*ns + k)*P + p]. */
KL_FN void kl_grind_rollout(const KL_GLOBAL kl_real *gp, int ns, const KL_GLOBAL kl_real *geo,
                            const KL_GLOBAL kl_real *ov, int P, int p, KL_GLOBAL kl_real *obj, int want,
                            KL_GLOBAL kl_real *so)
{
  kl_grind_state st;
  st.z = kl_grind_equilibrium(gp, ov[p], geo[KL_GG_H], geo[KL_GG_FG]);
  st.zd = 0.0;
  st.t = 0.0;
  st.h = 0.0;
  st.nsub = 0;
  st.status = KL_OK;
  st.contact = kl_grind_active(gp, st.z + geo[KL_GG_H], 0.0);
  kl_real F = 0.0;
  if (st.contact) {
    kl_real k1, d1;
    F = kl_grind_force(gp, st.z + geo[KL_GG_H], 0.0, &k1, &d1);
  }
  const int avg = (int)gp[KL_GP_AVG];
  kl_grind_acc a;
  kl_grind_acc_init(&a);
  if (want) {
    so[(KL_SO_F * ns + 0) * P + p] = F;
    so[(KL_SO_FAVG * ns + 0) * P + p] = F;
    so[(KL_SO_T * ns + 0) * P + p] = 0.0;
    so[(KL_SO_Z * ns + 0) * P + p] = st.z;
    so[(KL_SO_D * ns + 0) * P + p] = st.contact ? st.z + geo[KL_GG_H] : 0.0;
    so[(KL_SO_C * ns + 0) * P + p] = (kl_real)st.contact;
    so[(KL_SO_ZD * ns + 0) * P + p] = 0.0;
  }
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
    if (!(iv.ds > 0.0 && iv.v0 > 0.0 && iv.v1 > 0.0 && iv.m > 0.0)) {
      st.status |= KL_BAD_INPUT;
      break;
    }
    const kl_grind_ivout r = kl_grind_interval(gp, iv, &st);
    const kl_real favg = r.J / r.dt;
    const int has_m = k >= 2;
    kl_grind_acc_add(&a, gp, avg ? favg : r.F, geo[k * KL_GG_N + KL_GG_FT], iv.ds, iv.o0, iv.o1, iv.v0, iv.v1, has_m,
                     has_m ? ov[(k - 2) * P + p] : 0.0, has_m ? ov[(ns + k - 2) * P + p] : 0.0, r.tfree);
    if (want) {
      so[(KL_SO_F * ns + k) * P + p] = r.F;
      so[(KL_SO_FAVG * ns + k) * P + p] = favg;
      so[(KL_SO_T * ns + k) * P + p] = st.t;
      so[(KL_SO_Z * ns + k) * P + p] = st.z;
      so[(KL_SO_D * ns + k) * P + p] = (st.contact && r.d > 0.0) ? r.d : 0.0;
      so[(KL_SO_C * ns + k) * P + p] = (kl_real)st.contact;
      so[(KL_SO_ZD * ns + k) * P + p] = st.zd;
    }
  }
  kl_grind_acc_finish(&a, gp, st.t, st.nsub, st.status, P, p, obj);
}

#endif
