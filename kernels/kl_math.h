/* kernels/kl_math.h: special functions for the closed forms, in the common subset of C17 and OpenCL C.
 *   g(y) = y - log(1 + y) and its inverse on both branches (the Hunt-Crossley phase plane)
 *   Lambert W on the principal branch W0 and the lower branch W-1, in double precision.
 * Both are built on one idea: near the branch point z = -1/e (equivalently g = 0) every quantity is
 * computed from the distance to the branch point, never as a difference of nearly equal numbers. */
#ifndef KL_MATH_H
#define KL_MATH_H
#include "kl_common.h"

/* g(y) = y - log1p(y) for y > -1; >= 0 with a double root at 0. Accurate to a few ulp everywhere:
 * the Taylor series sum_{k>=2} (-1)^k y^k / k near 0, where the direct form cancels. */
KL_FN kl_real kl_g(kl_real y)
{
  if (fabs(y) < 0.25) {
    /* 30 terms: 0.25^30/30 < 1e-19, far below one ulp of g ~ y^2/2 (relative) */
    kl_real sum = 0.0;
    for (int k = 31; k >= 2; --k) sum = sum * (-y) + 1.0 / (kl_real)k;
    return y * y * sum;
  }
  return y - log1p(y);
}

/* Solve g(y) = s for y >= 0 (upper branch); s >= 0. Returns 0 for s <= 0. */
KL_FN kl_real kl_ginv_upper(kl_real s)
{
  if (!(s > 0.0)) return 0.0;
  if (isinf(s)) return s;
  kl_real y;
  if (s < 1.5) { /* branch-point series in p = sqrt(2 s): y = p + p^2/3 + 11 p^3/72 + 43 p^4/540 + ... */
    const kl_real p = sqrt(2.0 * s);
    y = p * (1.0 + p * (1.0 / 3.0 + p * (11.0 / 72.0 + p * (43.0 / 540.0 + p * (769.0 / 17280.0)))));
  } else { /* y = s + log1p(y), two fixed-point sweeps */
    y = s + log1p(s);
    y = s + log1p(y);
  }
  for (int it = 0; it < 40; ++it) { /* Halley on g(y) - s; g' = y/(1+y), g'' = 1/(1+y)^2 */
    const kl_real f = kl_g(y) - s;
    const kl_real fp = y / (1.0 + y);
    const kl_real fpp = 1.0 / ((1.0 + y) * (1.0 + y));
    const kl_real step = (f / fp) / (1.0 - 0.5 * f * fpp / (fp * fp));
    kl_real yn = y - step;
    if (yn <= 0.0) yn = 0.5 * y; /* stay on the branch */
    const int done = fabs(yn - y) <= 2.0 * KL_EPS * fabs(yn);
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
    const kl_real p = sqrt(2.0 * s);
    kl_real y = p * (-1.0 + p * (1.0 / 3.0 + p * (-11.0 / 72.0 + p * (43.0 / 540.0 + p * (-769.0 / 17280.0)))));
    if (y < -0.95) y = -0.95;
    for (int it = 0; it < 40; ++it) {
      const kl_real f = kl_g(y) - s;
      const kl_real fp = y / (1.0 + y);
      const kl_real fpp = 1.0 / ((1.0 + y) * (1.0 + y));
      const kl_real step = (f / fp) / (1.0 - 0.5 * f * fpp / (fp * fp));
      kl_real yn = y - step;
      if (yn >= 0.0) yn = 0.5 * y;
      if (yn <= -1.0) yn = 0.5 * (y - 1.0);
      const int done = fabs(yn - y) <= 2.0 * KL_EPS * fabs(yn);
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
  kl_real v = exp(-1.0 - s);
  v = exp(v - 1.0 - s);
  for (int it = 0; it < 40; ++it) {
    /* Halley with f' = (v - 1)/v, f'' = 1/v^2, so f f''/f'^2 = f/(v - 1)^2: written that way, since
     * 1/v^2 overflows once v < 1e-154 (s > ~353) */
    const kl_real f = v - log(v) - (1.0 + s);
    const kl_real vm1 = v - 1.0;
    const kl_real step = (f * v / vm1) / (1.0 - 0.5 * f / (vm1 * vm1));
    kl_real vn = v - step;
    if (vn <= 0.0) vn = 0.5 * v;
    if (vn >= 1.0) vn = 0.5 * (v + 1.0);
    const int done = fabs(vn - v) <= 2.0 * KL_EPS * vn;
    v = vn;
    if (done) break;
  }
  *u = v;
  return v - 1.0;
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
    (void)kl_ginv_lower(-log1p(-t), &u);
    return -u;
  }
  kl_real w;
  if (z < 3.0) {
    w = log1p(z);
  } else {
    const kl_real l1 = log(z), l2 = log(l1);
    w = l1 - l2 + l2 / l1;
  }
  if (z > KL_HUGE) { /* w e^w would overflow: Newton on w + log(w) = log(z) */
    const kl_real lz = log(z);
    for (int it = 0; it < 40; ++it) {
      const kl_real wn = w - (w + log(w) - lz) * w / (w + 1.0);
      const int done = fabs(wn - w) <= 2.0 * KL_EPS * fabs(wn);
      w = wn;
      if (done) break;
    }
    return w;
  }
  for (int it = 0; it < 40; ++it) {
    const kl_real ew = exp(w);
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
  const kl_real sigma = (t < 0.5) ? -log1p(-t) : -1.0 - log(-z);
  return -1.0 - kl_ginv_upper(sigma);
}

#endif
