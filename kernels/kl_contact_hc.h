/* kernels/kl_contact_hc.h: the Hunt-Crossley family F_N = K d^n (1 + chi d'), closed forms in the
 * phase plane (no external force), and the paper's approximate Emden-Fowler form (eq. 11-13).
 * With a = 1 + chi v0, Q(d) = chi^2 K d^{n+1} / (m (n+1)) and w = 1 + chi d':
 *   w - ln w = a - ln a - Q(d),  i.e.  g(w - 1) = g(chi v0) - Q(d)  with g(y) = y - log1p(y),
 * so the speed on each branch is an inverse of g (kernels/kl_math.h): compression on the upper
 * branch (the Lambert W-1 branch), restitution on the lower one (W0). All quantities near the
 * maximum penetration come from u with d = d_max (1 - u^2), never from d_max - d.
 * Common subset of C17 and OpenCL C 1.2. */
#ifndef KL_CONTACT_HC_H
#define KL_CONTACT_HC_H
#include "kl_common.h"
#include "kl_math.h"
#include "kl_quad.h"

/* Damping laws chi(cr, v0) */
#define KL_LAW_HUNT_CROSSLEY 0       /* Hunt & Crossley 1975: chi = 3(1-cr)/(2 v0) */
#define KL_LAW_LANKARANI_NIKRAVESH 1 /* Lankarani & Nikravesh 1990: chi = 3(1-cr^2)/(4 v0) */
#define KL_LAW_FLORES 2              /* Flores et al. 2011: chi = 8(1-cr)/(5 cr v0) */
#define KL_LAW_GONTHIER 3            /* Gonthier et al. 2004: chi = (1-cr^2)/(cr v0) */
#define KL_LAW_EXACT 4               /* chi such that the effective restitution is exactly cr */
#define KL_NLAWS 5

/* The contact law F = K d^n (1 + chi d') for d > 0, 0 for d <= 0 (no clamping of tension: the
 * separation rule decides about it). With chi = 0 it is Hertz, and the Emden-Fowler reading's phases. */
KL_FN kl_real kl_hc_force(kl_real K, kl_real n, kl_real chi, kl_real d, kl_real dd)
{
  if (!(d > 0.0)) return 0.0;
  return K * kl_pown(d, n) * (1.0 + chi * dd);
}

/* The same force and its tangent: kt = dF/dd = n K d^{n-1} (1 + chi d'), kept >= 0 (where it would be
 * negative the force is tensile and the contact is ending), and ct = dF/dd' = chi K d^n; all 0 for
 * d <= 0 (docs/design.md section 2.3). */
KL_FN kl_real kl_hc_tangent(kl_real K, kl_real n, kl_real chi, kl_real d, kl_real dd, kl_real *kt, kl_real *ct)
{
  if (!(d > 0.0)) {
    *kt = 0.0;
    *ct = 0.0;
    return 0.0;
  }
  const kl_real dn = kl_pown(d, n);
  const kl_real w = 1.0 + chi * dd;
  const kl_real k = n * K * (dn / d) * w;
  *kt = k > 0.0 ? k : 0.0;
  *ct = chi * K * dn;
  return K * dn * w;
}

/* G(d) = (g(-cr d) - g(d)) / d^2, whose positive root is the exact-restitution d = chi v0.
 * Series sum_{k>=2} (cr^k - (-1)^k) d^{k-2} / k for small d keeps (cr^2 - 1)/2 exact as cr -> 1. */
KL_FN kl_real kl_hc_exact_G(kl_real cr, kl_real d)
{
  if (d < 0.2) {
    kl_real sum = 0.0, sabs = 0.0;
    kl_real crk = 1.0, sgn = 1.0;
    kl_real dk = 1.0;
    for (int k = 2; k <= 40; ++k) {
      crk = (k == 2) ? cr * cr : crk * cr;
      sgn = (k % 2 == 0) ? 1.0 : -1.0;
      const kl_real coef = (k == 2) ? (cr - 1.0) * (cr + 1.0) : crk - sgn;
      const kl_real term = coef * dk / (kl_real)k;
      sum += term;
      sabs += fabs(term);
      dk *= d;
      /* the rest is below 2 d^{k-1} / (1 - d) <= 2.5 d^{k-1}: stop once that is negligible against the
       * terms' scale (G itself is ~0 near the root, so its own size cannot be the yardstick) */
      if (2.5 * dk <= 1e-17 * sabs) break;
    }
    return sum;
  }
  return (kl_g(-cr * d) - kl_g(d)) / (d * d);
}

/* d = chi v0 of the exact-restitution law: the root in (0, 1/cr) of d (1 + cr) = ln((1+d)/(1-cr d)),
 * i.e. of g(-cr d) = g(d). cr = 1 gives 0 (no damping). Illinois on a bracket, relative 1e-15. Impacts
 * (kl_impact_hc) take the fit of kernels/kl_hc_exact.h inside its domain (docs/design.md section 2.3). */
KL_FN kl_real kl_hc_exact_d(kl_real cr)
{
  if (!(cr < 1.0)) return 0.0;
  kl_real a = 0.0, fa = kl_hc_exact_G(cr, 0.0);
  /* first guess near cr -> 1: 3(1 - cr^2) / (2 (1 + cr^3)); grow towards 1/cr until G > 0 */
  kl_real b = 3.0 * (1.0 - cr * cr) / (2.0 * (1.0 + cr * cr * cr));
  const kl_real dlim = 1.0 / cr;
  if (b >= dlim) b = 0.5 * dlim;
  kl_real fb = kl_hc_exact_G(cr, b);
  for (int i = 0; i < 2000 && fb <= 0.0; ++i) {
    a = b;
    fa = fb;
    b = (b < 0.5 * dlim) ? 2.0 * b : 0.5 * (b + dlim);
    fb = kl_hc_exact_G(cr, b);
  }
  int side = 0;
  for (int it = 0; it < 300; ++it) {
    if (b - a <= 1e-15 * b) break;
    const kl_real c = kl_illinois_point(a, fa, b, fb);
    const kl_real fc = kl_hc_exact_G(cr, c);
    kl_illinois_update(&a, &fa, &b, &fb, c, fc, fc <= 0.0, &side);
  }
  return 0.5 * (a + b);
}

/* Damping factor chi [s/m] of one of the four laws in closed form (law 0 ... 3) for restitution cr in (0, 1] and
 * impact speed v0 > 0: all four formed, one selected by comparisons on the law as a double, not a switch (the fast
 * kernel vectorises it, kernels/kl_impact.h); any other law gives Gonthier's. */
KL_FN_VEC kl_real kl_hc_chi_closed(int law, kl_real cr, kl_real v0)
{
  const kl_real hc = 3.0 * (1.0 - cr) / (2.0 * v0);       /* KL_LAW_HUNT_CROSSLEY */
  const kl_real ln = 3.0 * (1.0 - cr * cr) / (4.0 * v0);  /* KL_LAW_LANKARANI_NIKRAVESH */
  const kl_real fl = 8.0 * (1.0 - cr) / (5.0 * cr * v0);  /* KL_LAW_FLORES */
  const kl_real go = (1.0 - cr * cr) / (cr * v0);         /* KL_LAW_GONTHIER */
  const kl_real l = (kl_real)law;
  return l < 0.5 ? hc : l < 1.5 ? ln : l < 2.5 ? fl : go;
}

/* Damping factor chi [s/m] of a law for restitution cr in (0, 1] and impact speed v0 > 0.
 * Returns a negative value for an unknown law. */
KL_FN kl_real kl_hc_chi(int law, kl_real cr, kl_real v0)
{
  if (law == KL_LAW_EXACT) return kl_hc_exact_d(cr) / v0;
  if (law < 0 || law >= KL_NLAWS) return -1.0;
  return kl_hc_chi_closed(law, cr, v0);
}

/* Effective restitution of a Hunt-Crossley impact as a function of d = chi v0 alone:
 * exit w = b = -W0(-a e^{-a}), cr_eff = (1 - b)/d = -y/d with y the lower branch of g^{-1}(g(d)). */
KL_FN kl_real kl_hc_cr_eff(kl_real d)
{
  if (!(d > 0.0)) return 1.0;
  kl_real u;
  const kl_real y = kl_ginv_lower(kl_g(d), &u);
  return -y / d;
}

/* Maximum penetration: d_max^{n+1} = (n+1) m [chi v0 - ln(1 + chi v0)] / (K chi^2); chi = 0 is Hertz. */
KL_FN kl_real kl_hc_delta_max(kl_real m, kl_real K, kl_real n, kl_real chi, kl_real v0)
{
  kl_real e; /* = (n+1) m [g(chi v0)/chi^2] / K, with g(d)/chi^2 -> v0^2/2 as chi -> 0 */
  const kl_real d = chi * v0;
  if (d > 1e-8) {
    e = (n + 1.0) * m * (kl_g(d) / (chi * chi)) / K;
  } else {
    e = (n + 1.0) * m * v0 * v0 * (0.5 - d / 3.0 + d * d / 4.0) / K;
  }
  return kl_powr(e, 1.0 / (n + 1.0));
}

/* S = 1 - (d/d_max)^{n+1} at d = d_max (1 - u^2), i.e. 1 - x^q with x = 1 - u^2, q = n + 1.
 * Where 2q = p is an integer (the contact laws' n = 1, 1.5, 2, ...): 1 - x^q = (1 - x^p) / (1 + x^q) and
 * 1 - x^p = u^2 (1 + x + ... + x^{p-1}), all terms positive: full relative accuracy as u -> 0 with one
 * sqrt at most. Other exponents: through expm1/log1p as u -> 0, where S is small; from u^2 >= 0.3 on
 * S >= 0.59 and the direct form is as accurate. */
KL_FN kl_real kl_hc_sfrac(kl_real n, kl_real u)
{
  const kl_real p2 = 2.0 * (n + 1.0);
  const kl_real x = (1.0 - u) * (1.0 + u);
  if (p2 <= 24.0 && p2 == floor(p2)) {
    const int p = (int)p2;
    kl_real sum = 1.0, xq = (p % 2) ? sqrt(x) : 1.0;
    for (int j = 1; j < p; ++j) sum = sum * x + 1.0;
    for (int j = 0; j < p / 2; ++j) xq *= x;
    return u * u * sum / (1.0 + xq);
  }
  if (u * u >= 0.3) return 1.0 - pow(x, n + 1.0);
  return -expm1((n + 1.0) * log1p(-u * u));
}

/* Speed |d'| at d = d_max (1 - u^2), u in [0, 1]; branch +1 compression, -1 restitution. */
/* The same with S = kl_hc_sfrac(n, u) and gd = g(chi v0) given, for loops that reuse them. */
KL_FN kl_real kl_hc_speed_s(kl_real chi, kl_real v0, kl_real gd, kl_real S, int branch)
{
  if (!(chi * v0 > 1e-12)) return v0 * sqrt(S); /* undamped: energy conservation */
  const kl_real s = gd * S;
  if (branch > 0) return kl_ginv_upper(s) / chi;
  kl_real w;
  return -kl_ginv_lower(s, &w) / chi;
}

KL_FN kl_real kl_hc_speed_u(kl_real chi, kl_real v0, kl_real n, kl_real u, int branch)
{
  return kl_hc_speed_s(chi, v0, kl_g(chi * v0), kl_hc_sfrac(n, u), branch);
}

/* The Hertz exponent's S = 1 - x^{5/2} (kl_hc_sfrac with n = 3/2, the same arithmetic, unrolled). */
KL_FN_VEC kl_real kl_hc_sfrac15(kl_real u)
{
  const kl_real x = (1.0 - u) * (1.0 + u);
  const kl_real sum = (((x + 1.0) * x + 1.0) * x + 1.0) * x + 1.0;
  const kl_real xq = sqrt(x) * x * x;
  return u * u * sum / (1.0 + xq);
}

/* The contact-time quadrature's fast case: Hertz (n = 3/2) with chi v0 <= 30, where the node's work
 * has no data-dependent branch or loop (kl_ginv_upper_fx, kl_ginv_lower_fx) and the device compiler can
 * run one node for several impacts at once (kernels/impact.cl). */
KL_FN int kl_hc_quad_fast(kl_real chi, kl_real v0, kl_real n) { return n == 1.5 && chi * v0 <= 30.0; }

/* One node u of weight wi of the fast case: adds its share of the compression time to *tc and of the
 * whole contact time to *ts. (Not the restitution time beside the compression time: two accumulations of
 * the same shape get packed into one 2-wide vector by the device compiler's straight-line vectoriser,
 * which then keeps the loop over work-items from being vectorised.) */
KL_FN_VEC void kl_hc_quad_at(kl_real dmax, kl_real chi, kl_real v0, kl_real gd, kl_real u, kl_real wi, kl_real *tc,
                         kl_real *ts)
{
  const kl_real S = kl_hc_sfrac15(u);
  const kl_real wt = 0.5 * wi * 2.0 * dmax * u;
  const kl_real s = gd * S;
  const int damped = chi * v0 > 1e-12;
  const kl_real und = v0 * sqrt(S); /* undamped: energy conservation */
  const kl_real up = damped ? kl_ginv_upper_fx(s) / chi : und;
  const kl_real lo = damped ? -kl_ginv_lower_fx(s) / chi : und;
  const kl_real dc = wt / up;
  *tc += dc;
  *ts += dc + wt / lo;
}

/* Node pair i (u and 1 - u) of the 32-node rule in the fast case: adds to the compression time *tc and
 * the contact time *ts. gd = g(chi v0). Written out, not as a loop over the pair: the device compiler
 * vectorises across work-items only a loop-free body. */
KL_FN_VEC void kl_hc_quad_node(kl_real dmax, kl_real chi, kl_real v0, kl_real gd, int i, kl_real *tc, kl_real *ts)
{
  kl_hc_quad_at(dmax, chi, v0, gd, 0.5 * (1.0 - kl_gl32_x[i]), kl_gl32_w[i], tc, ts);
  kl_hc_quad_at(dmax, chi, v0, gd, 0.5 * (1.0 + kl_gl32_x[i]), kl_gl32_w[i], tc, ts);
}

/* Contact-phase times by Gauss-Legendre quadrature in u after d = d_max (1 - u^2), which removes the
 * 1/sqrt end-point singularity at d_max: t = int_0^1 2 d_max u / |d'(u)| du (docs/design.md 2.3). Both
 * phases in one loop: they share the node's S(u) and g(chi v0). 32 nodes: contact time and time to
 * d_max within 2e-11 of a tight-tolerance integration up to chi v0 = 100 (kernels/kl_contact_hc_test.c;
 * the end-point branch (1 - u)^{5/2} of the integrand at d = 0 sets it); above, the restitution speed
 * jumps to -1/chi within a thin layer in u, which 32 nodes resolve to 6e-8 only, so 64 are taken there
 * (2.7e-12). The fast case (kl_hc_quad_fast) is the node loop of kl_hc_quad_node, the restitution time
 * the contact time less the compression time. *trest may be NULL. */
KL_FN kl_real kl_hc_phase_times(kl_real dmax, kl_real chi, kl_real v0, kl_real n, kl_real *trest)
{
  const kl_real gd = kl_g(chi * v0);
  kl_real tc = 0.0, tr = 0.0;
  if (kl_hc_quad_fast(chi, v0, n)) {
    kl_real ts = 0.0;
    for (int i = 0; i < KL_GL32_HALF; ++i) kl_hc_quad_node(dmax, chi, v0, gd, i, &tc, &ts);
    if (trest) *trest = ts - tc;
    return tc;
  }
  const int wide = chi * v0 > 100.0;
  const int nh = wide ? KL_GL64_HALF : KL_GL32_HALF;
  for (int i = 0; i < nh; ++i) {
    const kl_real xi = wide ? kl_gl64_x[i] : kl_gl32_x[i];
    const kl_real wi = wide ? kl_gl64_w[i] : kl_gl32_w[i];
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      const kl_real u = 0.5 * (1.0 + (kl_real)sgn * xi);
      const kl_real S = kl_hc_sfrac(n, u);
      const kl_real wt = 0.5 * wi * 2.0 * dmax * u;
      tc += wt / kl_hc_speed_s(chi, v0, gd, S, 1);
      if (trest) tr += wt / kl_hc_speed_s(chi, v0, gd, S, -1);
    }
  }
  if (trest) *trest = tr;
  return tc;
}

/* One phase: branch +1 compression, -1 restitution. */
KL_FN kl_real kl_hc_phase_time(kl_real dmax, kl_real chi, kl_real v0, kl_real n, int branch)
{
  kl_real tr;
  const kl_real tc = kl_hc_phase_times(dmax, chi, v0, n, branch > 0 ? (kl_real *)0 : &tr);
  return branch > 0 ? tc : tr;
}

/* Peak force on the compression branch. dF/dt = 0 where n m d' = chi K d^{n+1}; there Q(d) =
 * chi^2 K d^{n+1} / (m (n+1)) = n y / (n+1) with y = chi d', and the phase-plane relation
 * g(y) = g(chi v0) - Q(d) turns into one equation in y alone:
 *   F(y) = g(y) + n y / (n + 1) = g(chi v0),  y in (0, chi v0),
 * F increasing and convex (F' = n/(n+1) + y/(1+y) > 0, F'' = 1/(1+y)^2), F(0) = 0 and
 * F(chi v0) > g(chi v0): one root. Halley's iteration, kept inside the bracket, from the root of the
 * quadratic a y + y^2/2 = g(chi v0) that F is near y = 0. Then d^{n+1} = n m y / (chi^2 K) and
 * F_peak = K d^n (1 + y). Returns F_peak and the penetration at it in *dpk. */
KL_FN kl_real kl_hc_peak_force(kl_real m, kl_real K, kl_real n, kl_real chi, kl_real v0, kl_real dmax,
                               kl_real *dpk)
{
  const kl_real d = chi * v0;
  if (!(d > 1e-12)) {
    *dpk = dmax;
    return K * kl_pown(dmax, n);
  }
  const kl_real gd = kl_g(d);
  const kl_real a = n / (n + 1.0);
  kl_real lo = 0.0, hi = d;
  kl_real y = 2.0 * gd / (a + sqrt(a * a + 2.0 * gd));
  if (!(y > lo && y < hi)) y = 0.5 * (lo + hi);
  for (int it = 0; it < 60; ++it) {
    const kl_real f = kl_g(y) + a * y - gd;
    if (f == 0.0) break;
    if (f > 0.0) hi = y;
    else lo = y;
    const kl_real fp = a + y / (1.0 + y);
    const kl_real fpp = 1.0 / ((1.0 + y) * (1.0 + y));
    const kl_real step = (f / fp) / (1.0 - 0.5 * f * fpp / (fp * fp));
    kl_real yn = y - step;
    if (!(yn >= lo && yn <= hi)) yn = 0.5 * (lo + hi);
    const int done = fabs(yn - y) <= 2.0 * KL_EPS * yn;
    y = yn;
    if (done) break;
  }
  /* d^{n+1} = n m (y / chi) / (chi K), taken as a fraction of dmax^{n+1} (<= 1, near 1): kl_powr's error
   * grows with |log x|, so the root of the fraction is more accurate than the root of d^{n+1} itself */
  const kl_real frac = n * m * (y / chi) / (chi * K) / kl_pown(dmax, n + 1.0);
  const kl_real dd = dmax * kl_powr(frac, 1.0 / (n + 1.0));
  *dpk = dd;
  return K * kl_pown(dd, n) * (1.0 + y);
}

/* The paper's approximate Emden-Fowler form (eq. 11-13), as read here: each phase is undamped,
 * m d'' = -C_i K d^n, with C1 = 1 on compression and C2 = cr^2 on restitution, so the impact reaches the
 * Hertz d_max and leaves at cr v0. Phase time of y'' = -A y^n from y' = v to rest (eq. 13 integrated):
 * (d_max / v) sqrt(pi) Gamma(1 + 1/(n+1)) / Gamma(1/2 + 1/(n+1)); undamped Hertz total ~ 2.94 d_max/v0. */
#define KL_EF_TF_LINEAR 1.57079632679489661923 /* pi / 2 */
#define KL_EF_TF_HERTZ 1.47163759216235232869  /* sqrt(pi) Gamma(1.4) / Gamma(0.9) */
KL_FN kl_real kl_ef_time_factor(kl_real n)
{
  /* the linear and the Hertz exponent without tgamma (slow in OpenCL CPU libraries): pi/2 and
   * sqrt(pi) Gamma(1.4) / Gamma(0.9) (mpmath, 30 digits) */
  if (n == 1.0) return KL_EF_TF_LINEAR;
  if (n == 1.5) return KL_EF_TF_HERTZ;
  const kl_real p = 1.0 / (n + 1.0);
  return sqrt(KL_PI) * tgamma(1.0 + p) / tgamma(0.5 + p);
}

#endif
