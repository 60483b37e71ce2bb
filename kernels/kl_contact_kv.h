/* kernels/kl_contact_kv.h: the Kelvin-Voigt (linear spring-damper) contact in closed form.
 * Paper eq. (1) F_N = K d + D d', eq. (3) m d'' + D d' + K d = F_e, eq. (4) its solution, eq. (5) the
 * impulse over a step, eq. (10) the damping that reproduces a coefficient of restitution.
 * Common subset of C17 and OpenCL C 1.2. */
#ifndef KL_CONTACT_KV_H
#define KL_CONTACT_KV_H
#include "kl_common.h"
#include "kl_math.h"

/* Contact ends (separation rules, docs/design.md 2.2) */
#define KL_SEP_PENETRATION 0 /* the paper: contact ends at d = 0 (force may turn tensile just before) */
#define KL_SEP_FORCE 1       /* no tension: contact ends when K d + D d' = 0 (a wheel cannot pull) */

/* Damping from the coefficient of restitution, paper eq. (10); cr in (0, 1], K > 0, m > 0.
 * D = -2 ln(cr) sqrt(K m) / sqrt(pi^2 + ln^2 cr): with separation at d = 0 and F_e = 0 the exit speed
 * is exactly cr times the impact speed. kl_kv_damping_of_log takes l = -ln cr >= 0 (straight-line). */
KL_FN_VEC kl_real kl_kv_damping_of_log(kl_real l, kl_real K, kl_real m)
{
  return 2.0 * l * sqrt(K * m) / sqrt(KL_PI * KL_PI + l * l);
}

/* The same from cr: l = |ln cr| (kl_log = kl_log_reduced(cr, 0) for the cr in (0, 1] of a valid scenario,
 * which the fast path, kernels/kl_kv_fast.h, calls directly). */
KL_FN kl_real kl_kv_damping(kl_real cr, kl_real K, kl_real m)
{
  const kl_real l = fabs(kl_log(cr)); /* = -ln cr; fabs, not negation, so cr = 1 gives +0 */
  return kl_kv_damping_of_log(l, K, m);
}

/* The contact law F = K d + D d' (paper eq. 1), with no clamping: the separation rule decides about
 * tension. Its tangent is (K, D) everywhere. */
KL_FN kl_real kl_kv_force(kl_real K, kl_real D, kl_real d, kl_real dd) { return K * d + D * dd; }

/* One linear system m x'' + D x' + K x = f0 + f1 t (m > 0, K >= 0, D >= 0; K = 0 needs D = 0 or a short
 * step). The contact case has x = penetration; the grinding holder adds its spring and damper. */
typedef struct kl_kv_sys {
  kl_real m, K, D, f0, f1;
} kl_kv_sys;

/* The same system under a quartic force f0 + f1 t + f2 t^2 + f3 t^3 + f4 t^4: the terms from t^2 on carry
 * the nonlinear remainder of a Hunt-Crossley step, and the result is that step's dense output
 * (kernels/kl_xrb.h). */
typedef struct kl_kv_poly {
  kl_kv_sys s;
  kl_real f2, f3, f4;
} kl_kv_poly;

/* The affine system as a cubic one. */
KL_FN kl_kv_poly kl_kv_poly_of(kl_kv_sys s)
{
  kl_kv_poly c;
  c.s = s;
  c.f2 = 0.0;
  c.f3 = 0.0;
  c.f4 = 0.0;
  return c;
}

/* Result of advancing a kl_kv_sys by t from (x0, v0). */
typedef struct kl_kv_out {
  kl_real x, v; /* state at t */
  kl_real dx, dv; /* x(t) - x0, v(t) - v0, without cancellation */
  kl_real J;      /* impulse of the spring-damper force, int_0^t (K x + D x') dt (paper eq. 5) */
} kl_kv_out;

/* int_0^t of the external force f0 + f1 t + ... + f4 t^4 */
KL_FN kl_real kl_kv_force_integral(kl_kv_poly c, kl_real t)
{
  return c.s.f0 * t + 0.5 * c.s.f1 * t * t + t * t * t * (c.f2 / 3.0 + t * (0.25 * c.f3 + 0.2 * c.f4 * t));
}

/* 1 / ((k + 2)(k + 1)), k = 0 ... 39: the Taylor recurrence multiplies instead of dividing */
KL_CONSTANT kl_real kl_kv_inv_k2k1[40] = {
  1.0 / 2.0,    1.0 / 6.0,    1.0 / 12.0,   1.0 / 20.0,   1.0 / 30.0,   1.0 / 42.0,   1.0 / 56.0,   1.0 / 72.0,
  1.0 / 90.0,   1.0 / 110.0,  1.0 / 132.0,  1.0 / 156.0,  1.0 / 182.0,  1.0 / 210.0,  1.0 / 240.0,  1.0 / 272.0,
  1.0 / 306.0,  1.0 / 342.0,  1.0 / 380.0,  1.0 / 420.0,  1.0 / 462.0,  1.0 / 506.0,  1.0 / 552.0,  1.0 / 600.0,
  1.0 / 650.0,  1.0 / 702.0,  1.0 / 756.0,  1.0 / 812.0,  1.0 / 870.0,  1.0 / 930.0,  1.0 / 992.0,  1.0 / 1056.0,
  1.0 / 1122.0, 1.0 / 1190.0, 1.0 / 1260.0, 1.0 / 1332.0, 1.0 / 1406.0, 1.0 / 1482.0, 1.0 / 1560.0, 1.0 / 1640.0};

/* Taylor series of the solution about t = 0, in scaled coefficients b_k = a_k t^k:
 * (k+2)(k+1) b_{k+2} = f_k t^{k+2}/m - (D t/m) (k+1) b_{k+1} - (K t^2/m) b_k, b_0 = x0, b_1 = v0 t.
 * Used while (r + w0) t <= 1/2, where terms fall faster than 2^-k/k! and no damping regime exists. */
KL_FN kl_kv_out kl_kv_taylor(kl_kv_poly c, kl_real x0, kl_real v0, kl_real t)
{
  const kl_kv_sys s = c.s;
  kl_real bk = x0, bk1 = v0 * t;
  kl_real dxs = bk1;               /* sum_{k>=1} b_k */
  kl_real dvs = 0.0;               /* sum_{k>=2} k b_k */
  kl_real sabs = fabs(x0) + fabs(bk1);
  const kl_real im = 1.0 / s.m, t2 = t * t;
  const kl_real dt = s.D * t * im, kt2 = s.K * t2 * im;
  /* forcing terms f_k t^{k+2} / m, k = 0 ... 4 */
  const kl_real g0 = s.f0 * t2 * im, g1 = s.f1 * t2 * t * im, g2 = c.f2 * t2 * t2 * im, g3 = c.f3 * t2 * t2 * t * im,
                g4 = c.f4 * t2 * t2 * t2 * im;
  for (int k = 0; k < 40; ++k) {
    const kl_real fk = (k == 0) ? g0 : ((k == 1) ? g1 : ((k == 2) ? g2 : ((k == 3) ? g3 : ((k == 4) ? g4 : 0.0))));
    const kl_real b2 = (fk - dt * (kl_real)(k + 1) * bk1 - kt2 * bk) * kl_kv_inv_k2k1[k];
    dxs += b2;
    dvs += (kl_real)(k + 2) * b2;
    sabs += fabs(b2);
    bk = bk1;
    bk1 = b2;
    /* from k = 4 on every forcing term is in (b_6 holds f4) */
    if (k >= 4 && fabs(bk) + fabs(bk1) <= 1e-18 * sabs) break;
  }
  kl_kv_out o;
  o.dx = dxs;
  o.x = x0 + dxs;
  o.dv = (t > 0.0) ? dvs / t : 0.0;
  o.v = v0 + o.dv;
  o.J = kl_kv_force_integral(c, t) - s.m * o.dv;
  return o;
}

/* e^{-rt} C(t), e^{-rt} S(t) and e^{-rt} C(t) - 1 for the homogeneous solution
 * y(t) = e^{-rt} [y0 C + (y0' + r y0) S], C'' = -lam C, S = int C, lam = w0^2 - r^2.
 * One formula for all three regimes: the series in x = lam t^2 joins them smoothly (docs/design.md 2.2). */
KL_FN void kl_kv_basis(kl_real r, kl_real w02, kl_real t, kl_real *ec, kl_real *es, kl_real *ec1)
{
  const kl_real lam = w02 - r * r;
  const kl_real x = lam * t * t;
  if (fabs(x) < 1.0) {
    /* C = sum (-x)^k/(2k)!, S = t sum (-x)^k/(2k+1)!; 14 terms: 1/28! < 1e-29 */
    kl_real c1 = 0.0, sser = 0.0, term = 1.0;
    for (int k = 1; k <= 14; ++k) {
      term *= -x / (kl_real)((2 * k - 1) * (2 * k));
      c1 += term;
    }
    term = 1.0;
    sser = 1.0;
    for (int k = 1; k <= 14; ++k) {
      term *= -x / (kl_real)((2 * k) * (2 * k + 1));
      sser += term;
    }
    const kl_real em1 = kl_expm1(-r * t);
    const kl_real e = 1.0 + em1;
    *ec = e * (1.0 + c1);
    *es = e * sser * t;
    *ec1 = em1 * (1.0 + c1) + c1;
  } else if (lam > 0.0) {
    /* cos(wt) and sin(wt) from one sincos of wt/2: cos = (ch - sh)(ch + sh) keeps its relative accuracy
     * near wt = pi/2 (ch - sh exact there), sin = 2 sh ch, and 1 - cos = 2 sh^2 without cancellation */
    const kl_real w = sqrt(lam);
    const kl_real em1 = kl_expm1(-r * t);
    const kl_real e = 1.0 + em1;
    kl_real sh, ch;
    kl_sincos(0.5 * w * t, &sh, &ch);
    const kl_real c = (ch - sh) * (ch + sh);
    *ec = e * c;
    *es = e * (2.0 * sh * ch) / w;
    *ec1 = em1 * c - 2.0 * sh * sh;
  } else {
    /* over-damped: e^{-rt} cosh(bt) = (e^{-(r-b)t} + e^{-(r+b)t})/2, r - b = w0^2/(r + b) without cancellation */
    const kl_real b = sqrt(-lam);
    const kl_real rp = r + b, rm = w02 / rp;
    const kl_real e1m = kl_expm1(-rm * t), e2m = kl_expm1(-rp * t);
    *ec = 1.0 + 0.5 * (e1m + e2m);
    *es = (e1m - e2m) / (2.0 * b);
    *ec1 = 0.5 * (e1m + e2m);
  }
}

/* The homogeneous basis of a system (m, K, D) at one time t, so that several forcings and starts can be
 * advanced by the same t for the price of one (kl_kv_apply): series = 1 where the Taylor branch is taken. */
typedef struct kl_kv_bas {
  kl_real t, r, w02, ec, es, ec1;
  int series;
} kl_kv_bas;

KL_FN_HOT kl_kv_bas kl_kv_bas_at(kl_kv_sys s, kl_real t)
{
  kl_kv_bas b;
  b.t = t;
  b.r = s.D / (2.0 * s.m);
  b.w02 = s.K / s.m;
  b.series = ((b.r + sqrt(b.w02)) * t <= 0.5 || !(s.K > 0.0)) ? 1 : 0;
  b.ec = 1.0;
  b.es = t;
  b.ec1 = 0.0;
  if (!b.series) kl_kv_basis(b.r, b.w02, t, &b.ec, &b.es, &b.ec1);
  return b;
}

/* Advance c from (x0, v0) by the basis' time (b from kl_kv_bas_at with the same m, K, D). Particular
 * solution of the quartic force: x_p = a0 + a1 t + ... + a4 t^4 with K a4 = f4, K a3 + 4 D a4 = f3,
 * K a2 + 3 D a3 + 12 m a4 = f2, K a1 + 2 D a2 + 6 m a3 = f1, K a0 + D a1 + 2 m a2 = f0; then y = x - x_p
 * is free motion. */
KL_FN_HOT kl_kv_out kl_kv_apply(kl_kv_poly c, kl_kv_bas b, kl_real x0, kl_real v0)
{
  if (b.series) return kl_kv_taylor(c, x0, v0, b.t);
  const kl_kv_sys s = c.s;
  const kl_real t = b.t, r = b.r, w02 = b.w02;
  const kl_real iK = 1.0 / s.K;
  const kl_real a4 = c.f4 * iK;
  const kl_real a3 = (c.f3 - 4.0 * s.D * a4) * iK;
  const kl_real a2 = (c.f2 - 3.0 * s.D * a3 - 12.0 * s.m * a4) * iK;
  const kl_real a1 = (s.f1 - 2.0 * s.D * a2 - 6.0 * s.m * a3) * iK;
  const kl_real a0 = (s.f0 - s.D * a1 - 2.0 * s.m * a2) * iK;
  const kl_real y0 = x0 - a0, yd0 = v0 - a1;
  kl_kv_out o;
  o.dx = t * (a1 + t * (a2 + t * (a3 + t * a4))) + b.ec1 * y0 + (yd0 + r * y0) * b.es;
  o.dv = t * (2.0 * a2 + t * (3.0 * a3 + 4.0 * a4 * t)) + b.ec1 * yd0 - (r * yd0 + w02 * y0) * b.es;
  o.x = x0 + o.dx;
  o.v = v0 + o.dv;
  /* momentum balance: int (K x + D x') = int F_e - m (v(t) - v0); dv has no cancellation */
  o.J = kl_kv_force_integral(c, t) - s.m * o.dv;
  return o;
}

/* Advance m x'' + D x' + K x = f0 + f1 t + ... + f4 t^4 exactly by t >= 0 from (x0, v0) (paper eq. 4
 * generalised to all damping regimes and a quartic force). */
KL_FN_HOT kl_kv_out kl_kv_poly_step(kl_kv_poly c, kl_real x0, kl_real v0, kl_real t)
{
  return kl_kv_apply(c, kl_kv_bas_at(c.s, t), x0, v0);
}

/* The same for the affine force f0 + f1 t. */
KL_FN kl_kv_out kl_kv_step(kl_kv_sys s, kl_real x0, kl_real v0, kl_real t)
{
  return kl_kv_poly_step(kl_kv_poly_of(s), x0, v0, t);
}

/* phi(t) = al x(t) + be x'(t) + g0 + g1 t along the solution of c from (x0, v0). */
KL_FN kl_real kl_kv_poly_phi(kl_kv_poly c, kl_real x0, kl_real v0, kl_real t, kl_real al, kl_real be, kl_real g0,
                            kl_real g1)
{
  const kl_kv_out o = kl_kv_poly_step(c, x0, v0, t);
  return al * o.x + be * o.v + g0 + g1 * t;
}

/* The same along the solution of the affine system s. */
KL_FN kl_real kl_kv_phi(kl_kv_sys s, kl_real x0, kl_real v0, kl_real t, kl_real al, kl_real be, kl_real g0,
                        kl_real g1)
{
  return kl_kv_poly_phi(kl_kv_poly_of(s), x0, v0, t, al, be, g0, g1);
}

/* First t in (0, T] where phi (above) goes from > 0 to <= 0; returns 1 and sets *troot, else 0.
 * phi(0) = 0 with phi'(0) > 0 counts as positive (a contact that has just begun).
 * Bracketing: samples no further apart than a quarter radian of the fastest motion (1/4 of
 * 1/(r + w0)) near the start, growing geometrically by 1.2 but never beyond a quarter radian of the
 * oscillation; then the Illinois method to full precision, returning the <= 0 end of the bracket. */
KL_FN int kl_kv_poly_first_root(kl_kv_poly c, kl_real x0, kl_real v0, kl_real al, kl_real be, kl_real g0,
                               kl_real g1, kl_real T, kl_real *troot)
{
  const kl_kv_sys s = c.s;
  *troot = T;
  const kl_real r = s.D / (2.0 * s.m);
  const kl_real w02 = s.K / s.m;
  const kl_real w0 = sqrt(w02);
  kl_real f0 = al * x0 + be * v0 + g0;
  if (f0 <= 0.0) {
    /* slope al v + be a + g1, and curvature al a + be (da/dt) for a start with zero slope */
    const kl_real acc = (s.f0 - s.D * v0 - s.K * x0) / s.m;
    const kl_real jerk = (s.f1 - s.D * acc - s.K * v0) / s.m;
    const kl_real d0 = al * v0 + be * acc + g1;
    const kl_real d2 = al * acc + be * jerk;
    if (!(f0 == 0.0 && (d0 > 0.0 || (d0 == 0.0 && d2 > 0.0)))) {
      *troot = 0.0;
      return 1;
    }
  }
  const kl_real lam = w02 - r * r;
  const kl_real hmax = (lam > 0.0) ? 0.25 / sqrt(lam) : KL_HUGE;
  /* Under the constant force f0 alone, phi tends to phi_inf = al x_inf + g0, x_inf = f0/K, and the
   * transient obeys |phi - phi_inf| <= M e^{-q t}. The rest of the force, p(t) = f1 t + ... + f4 t^4,
   * moves x and x' by its response from rest, the convolution with the impulse response G: with
   * P = |f1| T + ... + |f4| T^4 >= |p| on [0, T], |x_p| <= P int|G| and |x_p'| <= P int|G'|, where
   * under-damped (G = e^{-rt} sin(wt)/(m w)) int|G| <= 1/(m w r), int|G'| <= w0/(m w r), and
   * over-damped (G >= 0, int G = 1/K) int|G'| <= 2/(m (rp - rm)). So phi >= phi_inf - B - M e^{-q t},
   * B = |al| P int|G| + |be| P int|G'|, and if phi_inf > B no root exists past
   * t* = log(M/(phi_inf - B))/q: a decayed (resting) contact is not scanned to the end of a long step
   * (for a Hunt-Crossley contact p is the remainder of its linearisation, near zero at rest). */
  kl_real tscan = T;
  if (g1 == 0.0 && s.K > 0.0 && r > 0.0 && lam != 0.0) {
    const kl_real xinf = s.f0 / s.K;
    const kl_real P = T * (fabs(s.f1) + T * (fabs(c.f2) + T * (fabs(c.f3) + T * fabs(c.f4))));
    const kl_real gx = (lam > 0.0) ? 1.0 / (s.m * sqrt(lam) * r) : 1.0 / s.K;
    const kl_real gv = (lam > 0.0) ? w0 / (s.m * sqrt(lam) * r) : 1.0 / (s.m * sqrt(-lam)); /* rp - rm = 2 sqrt(-lam) */
    /* (a term with a zero weight is zero: an infinite gx or gv must not make it 0 * inf) */
    const kl_real wsum = (al != 0.0 ? fabs(al) * gx : 0.0) + (be != 0.0 ? fabs(be) * gv : 0.0);
    const kl_real pinf = al * xinf + g0 - (P > 0.0 ? P * wsum : 0.0);
    if (pinf > 0.0) {
      const kl_real y0 = x0 - xinf;
      kl_real M, q;
      if (lam > 0.0) { /* under-damped: amplitudes of y and y' */
        const kl_real w = sqrt(lam);
        const kl_real A = sqrt(y0 * y0 + kl_sq((v0 + r * y0) / w));
        const kl_real B = sqrt(v0 * v0 + kl_sq((r * v0 + w02 * y0) / w));
        M = fabs(al) * A + fabs(be) * B;
        q = r;
      } else { /* over-damped: y = c1 e^{-rm t} + c2 e^{-rp t}, rm < rp */
        const kl_real rp = r + sqrt(-lam), rm = w02 / rp;
        const kl_real c1 = (v0 + rp * y0) / (rp - rm), c2 = y0 - c1;
        M = fabs(al) * (fabs(c1) + fabs(c2)) + fabs(be) * (rm * fabs(c1) + rp * fabs(c2));
        q = rm;
      }
      const kl_real ts = (M > pinf) ? kl_log(M / pinf) / q : 0.0;
      if (ts < tscan) tscan = ts;
    }
  }
  kl_real h = 0.25 / (r + w0 + 1e-300);
  if (h > hmax) h = hmax;
  if (!(h > 0.0) || h > T) h = T;
  kl_real a = 0.0, fa = f0, b = 0.0, fb = 0.0;
  int found = 0;
  for (int i = 0; i < 200000; ++i) {
    b = a + h;
    if (b >= T) b = T;
    fb = kl_kv_poly_phi(c, x0, v0, b, al, be, g0, g1);
    if (fb <= 0.0) {
      found = 1;
      break;
    }
    if (b >= T || b > tscan) break;
    a = b;
    fa = fb;
    h *= 1.2;
    if (h > hmax) h = hmax;
  }
  if (!found) return 0;
  if (fa <= 0.0) { /* a = 0 with phi(0) = 0: find a positive point first */
    kl_real m = b;
    for (int i = 0; i < 60; ++i) {
      m *= 0.5;
      const kl_real fm = kl_kv_poly_phi(c, x0, v0, m, al, be, g0, g1);
      if (fm > 0.0) {
        a = m;
        fa = fm;
        break;
      }
      b = m;
      fb = fm;
    }
    if (fa <= 0.0) {
      *troot = b;
      return 1;
    }
  }
  int side = 0;
  for (int it = 0; it < 200; ++it) { /* Illinois: regula falsi that halves the stale end's value */
    if (b - a <= 2.0 * KL_EPS * b) break;
    const kl_real tc = kl_illinois_point(a, fa, b, fb);
    const kl_real fc = kl_kv_poly_phi(c, x0, v0, tc, al, be, g0, g1);
    kl_illinois_update(&a, &fa, &b, &fb, tc, fc, fc > 0.0, &side);
  }
  *troot = b;
  return 1;
}

/* The same along the solution of the affine system s. */
KL_FN int kl_kv_first_root(kl_kv_sys s, kl_real x0, kl_real v0, kl_real al, kl_real be, kl_real g0, kl_real g1,
                           kl_real T, kl_real *troot)
{
  return kl_kv_poly_first_root(kl_kv_poly_of(s), x0, v0, al, be, g0, g1, T, troot);
}

/* Where the first zero of a free-motion combination lies (kl_kv_free_root): the time, and for an
 * under-damped system the basis there, C = cos(wt), S = sin(wt)/w and the decay e^{-rt}, so the state
 * follows without new transcendental calls (kl_kv_free_state). */
typedef struct kl_kv_root {
  kl_real t;
  int phase;            /* 1: C, S, decay are set (under-damped) */
  kl_real C, S, decay;
} kl_kv_root;

/* The start of the free root below (kl_kv_free_root), straight-line: r = D/(2m), w0^2 = K/m,
 * phi(0) = P0 and phi'(0) = P1 of phi = al y + be y', Q = P1 + r P0 and lam = w0^2 - r^2. go = 1 where a zero
 * is sought (P0 > 0, or P0 = 0 with P1 > 0: P0 is then +0), 0 where phi(0) <= 0 makes it t = 0. */
typedef struct kl_kv_fr {
  kl_real r, w02, P0, Q, lam;
  int go;
} kl_kv_fr;

KL_FN_VEC kl_kv_fr kl_kv_free_start(kl_kv_sys s, kl_real y0, kl_real yd0, kl_real al, kl_real be)
{
  kl_kv_fr f;
  f.r = s.D / (2.0 * s.m);
  f.w02 = s.K / s.m;
  const kl_real ydd0 = -(s.D * yd0 + s.K * y0) / s.m;
  const kl_real P0 = al * y0 + be * yd0;
  const kl_real P1 = al * yd0 + be * ydd0;
  /* P0 > 0, or P0 = 0 and P1 > 0, as one compare of a select (gcc 12 made the conjunction a select between
   * booleans of different widths, which it cannot vectorise: the twin's Kelvin-Voigt loop, host/twin_fast.c) */
  f.go = (P0 == 0.0 ? P1 : P0) > 0.0;
  f.P0 = (P0 > 0.0) ? P0 : 0.0; /* +0: atan2(+0, -Q) = pi below */
  f.Q = P1 + f.r * f.P0;
  f.lam = f.w02 - f.r * f.r;
  return f;
}

/* The under-damped zero (lam > 0, w = sqrt(lam)) of a started root, and the basis there, straight-line:
 * wt = atan2(a, c), a = P0 w, c = -Q; the cos and sin of that phase are c/R and a/R, R > 0 (a = 0 needs
 * Q > 0), and the decay e^{-rt}. The time is not compared with the root's horizon here. fin, a constant
 * at each call: 1 (the fast path, kernels/kl_kv_fast.h) takes atan2 and exp from kl_atan2_fin and
 * kl_exp_fin on arguments made safe, and clears *ok where they lie outside those functions' range (the
 * result is then not that of fin = 0); 0 (the general path) from kl_atan2 and kl_exp, which call the same
 * two in that range: the results agree bit for bit wherever *ok is 1. */
KL_FN_VEC kl_kv_root kl_kv_free_root_ud(kl_real P0, kl_real Q, kl_real r, kl_real w, int fin, int *ok)
{
  const kl_real a = P0 * w, c = -Q;
  const int ina = kl_atan2_in(a, c);
  const kl_real phase = fin ? kl_atan2_fin(ina ? a : 0.0, ina ? c : 1.0) : kl_atan2(a, c);
  kl_kv_root rt;
  rt.t = phase / w;
  const kl_real x = -r * rt.t;
  const int ine = fabs(x) < 708.0;
  rt.decay = fin ? kl_exp_fin(ine ? x : 0.0) : kl_exp(x);
  const kl_real R = sqrt(a * a + c * c);
  rt.phase = 1;
  rt.C = c / R;
  rt.S = (a / R) / w;
  *ok = ina & ine;
  return rt;
}

/* First t in (0, T] where phi = al y + be y' goes from > 0 to <= 0 along the free motion
 * m y'' + D y' + K y = 0 from (y0, yd0), in closed form (no scan): phi obeys the same equation, so
 * phi(t) = e^{-rt} [P0 C(t) + Q S(t)], P0 = phi(0), Q = phi'(0) + r P0, with C = cos(wt), S = sin(wt)/w,
 * w^2 = lam = w0^2 - r^2 (cosh and sinh for lam < 0, 1 and t at lam = 0). Its first zero:
 *   under-damped:  wt = atan2(P0 w, -Q) in (0, pi]
 *   over-damped:   tanh(bt) = P0 b / (-Q), b = sqrt(-lam), if that is in (0, 1); else none
 *   critical:      t = P0 / (-Q) if Q < 0; else none
 * each of which tends to the critical one as lam -> 0. phi(0) = 0 with phi'(0) > 0 counts as positive
 * (a contact that has just begun: the zero is then wt = pi); phi(0) <= 0 otherwise gives t = 0.
 * Forced motion with a constant force is free motion about the static deflection, so the impact's
 * maximum penetration (y' = 0) and peak force (dF/dt = 0) use this with any external force, and its
 * contact end when there is none. Returns 1 and fills *rt, else 0 with rt->t = T. The start and the
 * under-damped case are the straight-line kl_kv_free_start and kl_kv_free_root_ud. */
KL_FN int kl_kv_free_root(kl_kv_sys s, kl_real y0, kl_real yd0, kl_real al, kl_real be, kl_real T, kl_kv_root *rt)
{
  rt->t = T;
  rt->phase = 0;
  rt->C = 1.0;
  rt->S = 0.0;
  rt->decay = 1.0;
  const kl_kv_fr f = kl_kv_free_start(s, y0, yd0, al, be);
  if (!f.go) {
    rt->t = 0.0;
    return 1;
  }
  const kl_real P0 = f.P0, Q = f.Q, lam = f.lam;
  if (lam > 0.0) {
    int ok;
    const kl_kv_root u = kl_kv_free_root_ud(P0, Q, f.r, sqrt(lam), 0, &ok);
    if (!(u.t <= T)) return 0;
    *rt = u;
    return 1;
  }
  kl_real t;
  if (lam < 0.0) {
    if (!(Q < 0.0)) return 0;
    const kl_real b = sqrt(-lam);
    const kl_real z = P0 * b / -Q;
    if (!(z < 1.0)) return 0;
    t = 0.5 * kl_log1p(2.0 * z / (1.0 - z)) / b; /* atanh(z) / b */
  } else {
    if (!(Q < 0.0)) return 0;
    t = P0 / -Q;
  }
  if (!(t <= T)) return 0;
  rt->t = t;
  return 1;
}

/* The free motion's state at an under-damped root's basis (straight-line):
 * y = e^{-rt} [y0 C + (yd0 + r y0) S], y' = e^{-rt} [yd0 C - (r yd0 + w0^2 y0) S], r = D/(2m), w0^2 = K/m. */
KL_FN_VEC void kl_kv_free_state_ud(kl_real r, kl_real w02, kl_real y0, kl_real yd0, kl_kv_root rt, kl_real *y,
                                   kl_real *yd)
{
  *y = rt.decay * (y0 * rt.C + (yd0 + r * y0) * rt.S);
  *yd = rt.decay * (yd0 * rt.C - (r * yd0 + w02 * y0) * rt.S);
}

/* The free motion's state (y, y') at a root found by kl_kv_free_root from the same (y0, yd0): from the
 * root's basis when it has one (kl_kv_free_state_ud), else by kl_kv_step. */
KL_FN void kl_kv_free_state(kl_kv_sys s, kl_real y0, kl_real yd0, kl_kv_root rt, kl_real *y, kl_real *yd)
{
  if (!rt.phase) {
    kl_kv_sys f = s;
    f.f0 = 0.0;
    f.f1 = 0.0;
    const kl_kv_out o = kl_kv_step(f, y0, yd0, rt.t);
    *y = o.x;
    *yd = o.v;
    return;
  }
  kl_kv_free_state_ud(s.D / (2.0 * s.m), s.K / s.m, y0, yd0, rt, y, yd);
}

#endif
