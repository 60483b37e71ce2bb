/* kernels/kl_math.h: special functions for the closed forms, in the common subset of C17 and OpenCL C.
 *   kl_log1p, kl_log, kl_exp, kl_expm1, kl_sincos, kl_atan2, kl_powr: the elementary functions of the
 *     hot loops, as short polynomials (kernels/kl_poly.h), the same arithmetic on host and device
 *   g(y) = y - log(1 + y) and its inverse on both branches (the Hunt-Crossley phase plane)
 *   Lambert W on the principal branch W0 and the lower branch W-1, in double precision.
 * The last two are built on one idea: near the branch point z = -1/e (equivalently g = 0) every
 * quantity is computed from the distance to the branch point, never as a difference of nearly equal
 * numbers. */
#ifndef KL_MATH_H
#define KL_MATH_H
#include "kl_common.h"
#include "kl_poly.h"

/* The polynomial P of log(1 + f) = 2 atanh(s) = 2s + 2 s w P(w), w = s^2 <= (3 - 2 sqrt 2)^2
 * (kernels/kl_poly.h), in Estrin's form: the terms in w, w^2 and w^4 are formed side by side, so the
 * chain of dependent multiply-adds is 4 long instead of 7 (these functions sit inside iterations). */
KL_FN_VEC kl_real kl_logP(kl_real w)
{
  const kl_real w2 = w * w;
  const kl_real w4 = w2 * w2;
  return (KL_LOGP_0 + KL_LOGP_1 * w) + w2 * (KL_LOGP_2 + KL_LOGP_3 * w) +
         w4 * ((KL_LOGP_4 + KL_LOGP_5 * w) + w2 * KL_LOGP_6);
}

/* log(1 + f) for f in [sqrt(2)/2 - 1, sqrt(2) - 1]: with s = f / (2 + f), |s| <= 0.1716, and
 * 2s = f - f s, log(1 + f) = f - (f s - 2 s w P(w)). f is exact and the correction is at most 0.2 of
 * the result, so the rounding of s reaches the result at a fraction of an ulp. */
KL_FN_VEC kl_real kl_log1p_core(kl_real f)
{
  const kl_real s = f / (2.0 + f);
  const kl_real w = s * s;
  return f - (f * s - 2.0 * s * w * kl_logP(w));
}

/* log(x + c) for finite x > 0 and a small correction c (|c| << x): x = 2^k m with m in
 * [sqrt(2)/2, sqrt(2)) read from the bits (subnormal x scaled by 2^54 first), then
 * log(x + c) = k ln 2 + log(1 + (m - 1)) + c / x. */
KL_FN_VEC kl_real kl_log_reduced(kl_real x, kl_real c)
{
  kl_i64 b = kl_bits(x);
  int k = (int)((b >> 52) & 0x7ff);
  if (k == 0) { /* subnormal */
    b = kl_bits(x * 0x1p54);
    k = (int)((b >> 52) & 0x7ff) - 54;
  }
  k -= 1023;
  kl_real m = kl_from_bits((b & (kl_i64)0x000fffffffffffff) | (kl_i64)0x3ff0000000000000); /* [1, 2) */
  if (m > 1.41421356237309504880) {
    m *= 0.5;
    k += 1;
  }
  const kl_real lm = kl_log1p_core(m - 1.0); /* m - 1 is exact */
  const kl_real kd = (kl_real)k;
  return kd * KL_LN2_HI + (lm + (kd * KL_LN2_LO + c / x));
}

/* log1p, log, exp, expm1, sincos, atan2 and x^p for the hot loops of the closed forms. Why not the
 * library's: pocl 3.1's double-precision exp, log, log1p, expm1, sin, cos and atan2 measured 1.6-2.6
 * times slower than glibc's and its pow 4.9 times (benchmarks/elementary_bench), and these loops call
 * them hundreds of times per impact and per rollout; the polynomials here run at about the same speed
 * on both, and the OpenCL kernel, the OpenMP twin and the serial loop then round alike. Within 1 ulp
 * (log1p, log, exp), 2 (expm1), 2.5 (atan2), 3 (sincos) and 2 |p log x| + 2 (powr);
 * kernels/kl_math_test.c checks them against long double. Arguments outside the finite working range
 * go to the library. */
KL_FN kl_real kl_log1p(kl_real y)
{
  if (y >= -0.29289321881345247560 && y < 0.41421356237309504880) return kl_log1p_core(y);
  if (!(y > -1.0 && y <= 1.0e300)) return log1p(y); /* -1, below, inf, NaN */
  const kl_real x = 1.0 + y;
  /* 1 + y = x + c exactly: x - 1 is exact for x < 2^53, and so is y - (x - 1) */
  const kl_real c = (x < 9.0e15) ? y - (x - 1.0) : 0.0;
  return kl_log_reduced(x, c);
}

KL_FN kl_real kl_log(kl_real x)
{
  if (!(x > 0.0 && x <= 1.0e300)) return log(x);
  return kl_log_reduced(x, 0.0);
}

/* x rounded to the nearest integer (ties to even), |x| < 2^51: adding and subtracting 1.5 * 2^52 leaves
 * no fraction bits (strict IEEE arithmetic keeps the two operations; no library call). */
KL_FN_VEC kl_real kl_round(kl_real x) { return (x + 6755399441055744.0) - 6755399441055744.0; }

/* e^r - 1 for |r| <= ln(2)/2 (and somewhat beyond): r + (r^2/2 + r^3 Q(r)), kernels/kl_poly.h in
 * Estrin's form; r leads, so there is no cancellation at small r. */
KL_FN_VEC kl_real kl_expm1_reduced(kl_real r)
{
  const kl_real r2 = r * r, r4 = r2 * r2;
  const kl_real q = ((KL_EXPQ_0 + KL_EXPQ_1 * r) + r2 * (KL_EXPQ_2 + KL_EXPQ_3 * r)) +
                    r4 * (((KL_EXPQ_4 + KL_EXPQ_5 * r) + r2 * (KL_EXPQ_6 + KL_EXPQ_7 * r)) +
                          r4 * (KL_EXPQ_8 + KL_EXPQ_9 * r));
  return r + (0.5 * r2 + r2 * r * q);
}

/* x = k ln 2 + r for |x| < 708: k = round(x / ln 2), r = x - k ln 2 (Cody-Waite: k KL_LN2_HI exact) in
 * [-ln2/2, ln2/2]; returns 2^k, built from the exponent bits, and r in *r. */
KL_FN_VEC kl_real kl_exp_reduce(kl_real x, kl_real *r)
{
  const kl_real kd = kl_round(x * 1.44269504088896340736);
  *r = (x - kd * KL_LN2_HI) - kd * KL_LN2_LO;
  const kl_i64 k = (kl_i64)(int)kd;
  return kl_from_bits((k + 1023) << 52);
}

/* e^x = 2^k (1 + (e^r - 1)) for |x| < 708, without a library fallback (the caller guarantees the range;
 * see kl_log1p_fin below for why); outside it e^0, so that no out-of-range value is converted to int */
KL_FN_VEC kl_real kl_exp_fin(kl_real x)
{
  kl_real r;
  const kl_real tk = kl_exp_reduce(fabs(x) < 708.0 ? x : 0.0, &r);
  return (1.0 + kl_expm1_reduced(r)) * tk;
}

/* e^x: kl_exp_fin; |x| >= 708 (overflow, subnormal results) and NaN go to the library. */
KL_FN kl_real kl_exp(kl_real x)
{
  if (!(fabs(x) < 708.0)) return exp(x);
  return kl_exp_fin(x);
}

/* e^x - 1: directly below ln(2)/2, else 2^k (e^r - 1) + (2^k - 1) (2^k - 1 exact for the k of
 * |x| < 708; the two terms cancel by at most a bit). */
KL_FN_HOT kl_real kl_expm1(kl_real x)
{
  if (fabs(x) <= 0.34657359027997265471) return kl_expm1_reduced(x);
  if (!(fabs(x) < 708.0)) return expm1(x);
  kl_real r;
  const kl_real tk = kl_exp_reduce(x, &r);
  return tk * kl_expm1_reduced(r) + (tk - 1.0);
}

/* sin x and cos x for |x| <= 1e5 (beyond, and NaN, the library's): x = k pi/2 + r, |r| <= pi/4, with
 * pi/2 in three parts (k times each of the first two is exact), then sin r = r + r^3 S(r^2) and
 * cos r = 1 - r^2/2 + r^4 C(r^2) (kernels/kl_poly.h), the 1 - r^2/2 split so its rounding error is kept,
 * and the quadrant k mod 4 picks signs and roles. Within ~1 ulp where r is not tiny; near a multiple
 * of pi/2 the reduction's absolute error (~1e-21 |k|) bounds the error of the small result. */
KL_FN void kl_sincos(kl_real x, kl_real *sn, kl_real *cs)
{
  if (!(fabs(x) <= 1.0e5)) {
    *sn = sin(x);
    *cs = cos(x);
    return;
  }
  const kl_real kd = kl_round(x * 0.63661977236758134308);
  const kl_real r = ((x - kd * KL_PIO2_1) - kd * KL_PIO2_2) - kd * KL_PIO2_3;
  const kl_real w = r * r, w2 = w * w;
  const kl_real S = (KL_SINS_0 + KL_SINS_1 * w) + w2 * ((KL_SINS_2 + KL_SINS_3 * w) + w2 * (KL_SINS_4 + KL_SINS_5 * w));
  const kl_real C = (KL_COSC_0 + KL_COSC_1 * w) + w2 * ((KL_COSC_2 + KL_COSC_3 * w) + w2 * (KL_COSC_4 + KL_COSC_5 * w));
  const kl_real sr = r + r * w * S;
  const kl_real hz = 0.5 * w, one_hz = 1.0 - hz;
  const kl_real cr = one_hz + (((1.0 - one_hz) - hz) + w2 * C);
  const int q = ((int)kd) & 3;
  *sn = (q == 0) ? sr : (q == 1) ? cr : (q == 2) ? -sr : -cr;
  *cs = (q == 0) ? cr : (q == 1) ? -sr : (q == 2) ? -cr : sr;
}

/* atan u for |u| <= tan(pi/8): u + u^3 A(u^2) (kernels/kl_poly.h), Estrin's form. */
KL_FN_VEC kl_real kl_atan_reduced(kl_real u)
{
  const kl_real w = u * u, w2 = w * w, w4 = w2 * w2;
  const kl_real A = ((KL_ATANA_0 + KL_ATANA_1 * w) + w2 * (KL_ATANA_2 + KL_ATANA_3 * w)) +
                    w4 * (((KL_ATANA_4 + KL_ATANA_5 * w) + w2 * (KL_ATANA_6 + KL_ATANA_7 * w)) +
                          w4 * ((KL_ATANA_8 + KL_ATANA_9 * w) + w2 * KL_ATANA_10));
  return u + u * w * A;
}

/* atan2(y, x): with t = min/max of |y|, |x| in [0, 1], atan t directly below tan(pi/8), else
 * pi/4 + atan((t - 1)/(t + 1)); then pi/2 - . when |y| > |x|, pi - . when x < 0, and y's sign. The
 * constants pi/4, pi/2, pi are added as two parts. kl_atan2_fin is that alone, selects only, for the
 * arguments kl_atan2_in accepts (finite, magnitudes up to 1e300, not both zero); kl_atan2 sends the others
 * (zeros, infinities, NaN, magnitudes beyond 1e300) to the library. */
KL_FN_VEC int kl_atan2_in(kl_real y, kl_real x)
{
  const kl_real ay = fabs(y), ax = fabs(x);
  return (ax <= 1.0e300) & (ay <= 1.0e300) & ((ax != 0.0) | (ay != 0.0));
}

KL_FN_VEC kl_real kl_atan2_fin(kl_real y, kl_real x)
{
  const kl_real ay = fabs(y), ax = fabs(x);
  const int swap = ay > ax;
  const kl_real mn = swap ? ax : ay, mx = swap ? ay : ax;
  const kl_real t = mn / mx;
  const int big = t > 0.41421356237309504880; /* (t - 1)/(t + 1) from mn and mx themselves: t's rounding stays out */
  const kl_real a = kl_atan_reduced(big ? (mn - mx) / (mn + mx) : t);
  const kl_real r0 = big ? 7.85398163397448278999e-01 + (a + 3.06161699786838301793e-17) : a;
  const kl_real r1 = swap ? 1.57079632679489655800e+00 - (r0 - 6.12323399573676603587e-17) : r0;
  const kl_real r = (x < 0.0) ? 3.14159265358979311600e+00 - (r1 - 1.22464679914735320717e-16) : r1;
  return copysign(r, y); /* y = -0 too */
}

KL_FN kl_real kl_atan2(kl_real y, kl_real x)
{
  if (!kl_atan2_in(y, x)) return atan2(y, x);
  return kl_atan2_fin(y, x);
}

/* x^p for x > 0 as e^{p log x}: within 2 |p log x| + 2 ulp (e.g. 4e-15 relative for x = 1e-10,
 * p = 0.4, the Hertz d_max root), where the library's pow is within one; other x to the library. */
KL_FN_HOT kl_real kl_powr(kl_real x, kl_real p)
{
  if (!(x > 0.0 && x <= 1.0e300)) return pow(x, p);
  return kl_exp(p * kl_log(x));
}

/* g(y) = y - log1p(y) for y > -1; >= 0 with a double root at 0. Where y - log1p(y) would cancel,
 * g = y - f + (f s - 2 s w P) = s (y - 2 w P) with the terms of kl_log1p_core (f = y, y - f s = 2s):
 * no difference of nearly equal numbers (2 w P ~ y^2/6). Elsewhere the direct form loses at most
 * ~3 bits (|y / g| <= 7.6 at the ends of the interval). */
KL_FN kl_real kl_g(kl_real y)
{
  if (y >= -0.29289321881345247560 && y < 0.41421356237309504880) {
    const kl_real s = y / (2.0 + y);
    const kl_real w = s * s;
    return s * (y - 2.0 * w * kl_logP(w));
  }
  return y - kl_log1p(y);
}

/* Halley's iteration converges cubically: with e the relative error before a step, after it
 * e' = C e^3, where for g(y) - s the constant C = |y/3 + 1/4| / (1 + y)^2 is below 3 on the ranges
 * iterated here (y >= 0 on the upper branch, 1 + y >= 0.3 on the lower one; the iteration in u = 1 + y
 * near y = -1 has C < 0.2). The step approximates e, so once a step is below 1e-6 relative the point
 * it reached is within 3e-18 and the iteration stops there, instead of paying one more evaluation
 * to see a step below an ulp. */
#define KL_HALLEY_STOP 1e-6

/* Halley's step for g(y) - s = f at y: g' = y/q, g'' = 1/q^2 with q = 1 + y, so
 * (f/g') / (1 - f g''/(2 g'^2)) = 2 f q y / (2 y^2 - f), with one division. */
KL_FN_VEC kl_real kl_ginv_halley_step(kl_real y, kl_real f) { return 2.0 * f * (1.0 + y) * y / (2.0 * y * y - f); }

/* g^-1 near its branch point: g(y) = p^2/2 has the solution y(p) analytic in p, the upper branch for
 * p = sqrt(2 s) > 0 and the lower one for p = -sqrt(2 s); its series, by reversion of
 * p = y sqrt(2 g(y) / y^2) in exact rationals (tools/gen_elementary_poly.py, KL_GINV_k in kl_poly.h):
 *   y = p + p^2/3 + p^3/36 - p^4/270 + p^5/4320 + p^6/17010 - 139 p^7/5443200 + p^8/204120
 *       - 571 p^9/2351462400 - 281 p^10/1515591000 + 163879 p^11/2172751257600 - ...
 * (radius of convergence sqrt(4 pi): the singularities of 1 - e^{-s} = 0 at s = +-2 pi i). Cut after
 * p^10, the relative error is about 7.5e-8 |p|^10: below 1e-7 for |p| <= 1, so one Halley step
 * (KL_HALLEY_STOP) finishes most solves, 2e-5 at the upper end p = sqrt(3) of its use. */
KL_FN kl_real kl_ginv_series(kl_real p)
{
  const kl_real p2 = p * p, p4 = p2 * p2, p8 = p4 * p4;
  const kl_real lo = (KL_GINV_0 + p * KL_GINV_1) + p2 * (KL_GINV_2 + p * KL_GINV_3);
  const kl_real mid = (KL_GINV_4 + p * KL_GINV_5) + p2 * (KL_GINV_6 + p * KL_GINV_7);
  const kl_real hi = KL_GINV_8 + p * KL_GINV_9;
  return p * ((lo + p4 * mid) + p8 * hi);
}

/* The same series in Horner's form, for the fixed-step solves below: one chain, which the device
 * compiler's straight-line (SLP) vectoriser leaves alone; Estrin's independent pairs it packs into
 * 2-wide vectors, which then keep the loop over work-items from being vectorised 4 wide. */
KL_FN_VEC kl_real kl_ginv_series_h(kl_real p)
{
  kl_real q = KL_GINV_9;
  q = q * p + KL_GINV_8;
  q = q * p + KL_GINV_7;
  q = q * p + KL_GINV_6;
  q = q * p + KL_GINV_5;
  q = q * p + KL_GINV_4;
  q = q * p + KL_GINV_3;
  q = q * p + KL_GINV_2;
  q = q * p + KL_GINV_1;
  q = q * p + KL_GINV_0;
  return p * q;
}

/* Solve g(y) = s for y >= 0 (upper branch); s >= 0. Returns 0 for s <= 0. */
KL_FN kl_real kl_ginv_upper(kl_real s)
{
  if (!(s > 0.0)) return 0.0;
  if (isinf(s)) return s;
  kl_real y;
  if (s < 1.5) { /* branch-point series in p = sqrt(2 s) (kl_ginv_series) */
    y = kl_ginv_series(sqrt(2.0 * s));
  } else {
    /* the asymptotic series of W-1 (y = -1 - W-1(-e^{-1-s})) in a = 1 + s and L = log a:
     * y = s + L + L/a - L (L - 2)/(2 a^2) + L (6 - 9 L + 2 L^2)/(6 a^3) + ..., 2e-3 relative at s = 1.5
     * and better beyond, so two Halley steps finish */
    const kl_real a = 1.0 + s, L = kl_log1p(s), ia = 1.0 / a;
    y = s + L + L * ia * (1.0 + ia * (-0.5 * (L - 2.0) + ia * (L * (2.0 * L - 9.0) + 6.0) / 6.0));
  }
  for (int it = 0; it < 40; ++it) { /* Halley on g(y) - s, see kl_ginv_halley_step */
    const kl_real f = kl_g(y) - s;
    kl_real yn = y - kl_ginv_halley_step(y, f);
    if (!(yn > 0.0)) yn = 0.5 * y; /* stay on the branch (and off a NaN step) */
    const int done = fabs(yn - y) <= KL_HALLEY_STOP * fabs(yn);
    y = yn;
    if (done) break;
  }
  return y;
}

/* Solve g(y) = s for y in (-1, 0] (lower branch); s >= 0. Returns y, and u = 1 + y in *u with full
 * relative accuracy even when u is tiny (where y = u - 1 would have lost it). */
KL_FN kl_real kl_ginv_lower(kl_real s, kl_real *u)
{
  if (!(s > 0.0)) {
    *u = 1.0;
    return 0.0;
  }
  if (s < 0.5) { /* u > 0.3: iterate on y */
    kl_real y = kl_ginv_series(-sqrt(2.0 * s));
    if (y < -0.95) y = -0.95;
    for (int it = 0; it < 40; ++it) {
      const kl_real f = kl_g(y) - s;
      kl_real yn = y - kl_ginv_halley_step(y, f);
      if (!(yn < 0.0)) yn = 0.5 * y;
      if (!(yn > -1.0)) yn = 0.5 * (y - 1.0);
      const int done = fabs(yn - y) <= KL_HALLEY_STOP * fabs(yn);
      y = yn;
      if (done) break;
    }
    *u = 1.0 + y;
    return y;
  }
  /* u <= 0.3: iterate on u, f(u) = u - 1 - log(u) - s, so u keeps its relative accuracy */
  if (isinf(s)) {
    *u = 0.0;
    return -1.0;
  }
  if (s > 700.0) { /* u = e^{-1-s} e^u with e^u = 1 to double precision; the iteration would meet
                     * subnormal u (halving the smallest one gives 0, then log(0)) */
    *u = exp(-1.0 - s);
    return -1.0;
  }
  kl_real v = kl_exp(-1.0 - s);
  v *= kl_exp(v); /* = e^{v - 1 - s}: the second fixed-point sweep */
  for (int it = 0; it < 40; ++it) {
    /* Halley with f' = (v - 1)/v, f'' = 1/v^2: step (f/f') / (1 - f f''/(2 f'^2)) = f v (v - 1) /
     * ((v - 1)^2 - f/2), one division, and no 1/v^2 (which overflows once v < 1e-154, s > ~353) */
    const kl_real f = v - kl_log(v) - (1.0 + s);
    const kl_real vm1 = v - 1.0;
    kl_real vn = v - f * v * vm1 / (vm1 * vm1 - 0.5 * f);
    if (!(vn > 0.0)) vn = 0.5 * v;
    if (!(vn < 1.0)) vn = 0.5 * (v + 1.0);
    const int done = fabs(vn - v) <= KL_HALLEY_STOP * vn;
    v = vn;
    if (done) break;
  }
  *u = v;
  return v - 1.0;
}

/* The same without the library fallbacks, for loops the device compiler should vectorise across
 * work-items (a call in a branch keeps it from doing so): valid only on the finite working range, which
 * the caller guarantees. kl_log1p_fin: y > -1 finite; kl_log_fin: 0 < x <= 1e300; kl_exp_fin (above kl_exp):
 * |x| < 708; kl_g_fin: y > -1; kl_atan2_fin (above kl_atan2): kl_atan2_in(y, x). Outside it the value is
 * meaningless but the behaviour defined (no conversion of an out-of-range value to int: kl_exp_fin takes e^0
 * there), so that lanes whose result is not used are safe. */
KL_FN_VEC kl_real kl_log1p_fin(kl_real y)
{
  const kl_real x = 1.0 + y;
  const kl_real c = (x < 9.0e15) ? y - (x - 1.0) : 0.0;
  const kl_real lr = kl_log_reduced(x, c);
  const kl_real lc = kl_log1p_core(y);
  /* two selects, not one on a conjunction: gcc's vectoriser (the twin, host/twin_fast.c) took that with a select
   * of its caller's for a mix of boolean widths it does not support */
  const kl_real below = y < 0.41421356237309504880 ? lc : lr;
  return y >= -0.29289321881345247560 ? below : lr;
}

KL_FN_VEC kl_real kl_log_fin(kl_real x) { return kl_log_reduced(x, 0.0); }

KL_FN_VEC kl_real kl_g_fin(kl_real y)
{
  const kl_real s = y / (2.0 + y);
  const kl_real w = s * s;
  const kl_real gc = s * (y - 2.0 * w * kl_logP(w)), gl = y - kl_log1p_fin(y);
  return (y >= -0.29289321881345247560 && y < 0.41421356237309504880) ? gc : gl;
}

/* g^-1 on both branches with a fixed number of Halley steps and no data-dependent branch or exit, for
 * 0 < s <= 30 (the contact-time quadrature of an impact with chi v0 <= 30, kernels/kl_contact_hc.h):
 * upper from the branch-point series (s < 1.5, relative error <= 2e-5) or the asymptotic series (2e-3),
 * then two Halley steps (error after them below 3 (3 (2e-3)^3)^3 ~ 1e-23; one step leaves 3e-14 and
 * fails kernels/kl_math_test.c); lower from the series (s < 0.5, <= 7.5e-8) or from two sweeps of
 * u = e^{-1-s} e^u (u = 1 + y), then two steps (measured within 2.3e-16 of kl_ginv_lower's converged
 * loop on 2e5 s, whose last step only confirms). The lower solve returns y,
 * accurate to an ulp of 1 (absolute) even where u = 1 + y is tiny (from s ~ 36 on u is below an ulp of
 * 1, hence the bound on s): the contact speed -y/chi needs no more. */
/* One Halley step on g(y) - s (kl_g_fin), kept on the branch y > -1; the fixed-step solves below call it
 * written out, not in a loop: the device compiler vectorises across work-items only a loop-free body,
 * and does not unroll a loop of this size by itself. */
KL_FN_VEC kl_real kl_ginv_halley_fx(kl_real y, kl_real s)
{
  const kl_real yn = y - kl_ginv_halley_step(y, kl_g_fin(y) - s);
  return yn > -1.0 ? yn : 0.5 * (y - 1.0);
}

KL_FN_VEC kl_real kl_ginv_upper_fx(kl_real s)
{
  const kl_real ys = kl_ginv_series_h(sqrt(2.0 * s));
  const kl_real a = 1.0 + s, L = kl_log1p_fin(s), ia = 1.0 / a;
  const kl_real ya = s + L + L * ia * (1.0 + ia * (-0.5 * (L - 2.0) + ia * (L * (2.0 * L - 9.0) + 6.0) / 6.0));
  const kl_real y = s < 1.5 ? ys : ya;
  return kl_ginv_halley_fx(kl_ginv_halley_fx(y, s), s);
}

KL_FN_VEC kl_real kl_ginv_lower_fx(kl_real s)
{
  const kl_real ys0 = kl_ginv_series_h(-sqrt(2.0 * s));
  const kl_real ys = ys0 > -0.95 ? ys0 : -0.95;
  kl_real v = kl_exp_fin(-1.0 - s);
  v *= kl_exp_fin(v);
  const kl_real y = s < 0.5 ? ys : v - 1.0;
  return kl_ginv_halley_fx(kl_ginv_halley_fx(y, s), s);
}

/* Distance of z to the branch point, times e: t = e (z + 1/e) = 1 + e z, exact to rounding. */
KL_FN kl_real kl_lambertw_t(kl_real z) { return KL_E * ((z + KL_INV_E_HI) + KL_INV_E_LO); }

/* Lambert W, principal branch: w e^w = z, w >= -1, for z >= -1/e. NaN below -1/e.
 * Near the branch point: with W = -1 - y, (1 + y) e^{-y} = 1 - t, i.e. g(y) = -log1p(-t), so W0 is
 * -u from the lower branch of g^{-1}; elsewhere Halley's iteration on w e^w - z. */
KL_FN kl_real kl_lambert_w0(kl_real z)
{
  if (isnan(z)) return z;
  if (z == 0.0) return z;
  if (isinf(z)) return z > 0.0 ? z : NAN;
  const kl_real t = kl_lambertw_t(z);
  if (t < 0.0) return t > -4.0 * KL_EPS ? -1.0 : NAN; /* rounding of a z given as -1/e */
  if (t < 0.5) {
    kl_real u;
    (void)kl_ginv_lower(-kl_log1p(-t), &u);
    return -u;
  }
  kl_real w;
  if (z < 3.0) {
    w = kl_log1p(z);
  } else {
    const kl_real l1 = kl_log(z), l2 = kl_log(l1);
    w = l1 - l2 + l2 / l1;
  }
  if (z > KL_HUGE) { /* w e^w would overflow: Newton on w + log(w) = log(z) */
    const kl_real lz = kl_log(z);
    for (int it = 0; it < 40; ++it) {
      const kl_real wn = w - (w + kl_log(w) - lz) * w / (w + 1.0);
      const int done = fabs(wn - w) <= 2.0 * KL_EPS * fabs(wn);
      w = wn;
      if (done) break;
    }
    return w;
  }
  for (int it = 0; it < 40; ++it) {
    const kl_real ew = kl_exp(w);
    const kl_real f = w * ew - z;
    const kl_real wn = w - f / (ew * (w + 1.0) - (w + 2.0) * f / (2.0 * w + 2.0));
    const int done = fabs(wn - w) <= 2.0 * KL_EPS * fabs(wn);
    w = wn;
    if (done) break;
  }
  return w;
}

/* Lambert W, lower branch: w e^w = z, w <= -1, for -1/e <= z < 0; -inf at 0; NaN elsewhere.
 * W-1 = -1 - y with y the upper branch of g^{-1}(sigma), sigma = -log(1 - t) = -1 - log(-z). */
KL_FN kl_real kl_lambert_wm1(kl_real z)
{
  if (isnan(z)) return z;
  if (z == 0.0) return -INFINITY;
  if (z > 0.0) return NAN;
  const kl_real t = kl_lambertw_t(z);
  if (t < 0.0) return t > -4.0 * KL_EPS ? -1.0 : NAN;
  const kl_real sigma = (t < 0.5) ? -kl_log1p(-t) : -1.0 - kl_log(-z);
  return -1.0 - kl_ginv_upper(sigma);
}

#endif
