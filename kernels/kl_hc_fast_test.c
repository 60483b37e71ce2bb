/* kernels/kl_hc_fast_test.c: the straight-line Hunt-Crossley path of the fast kernels (kl_impact_hc_fast,
 * kernels/kl_impact.h; kernels/kl_cheb.h; docs/design.md section 4) against references that do not share its
 * assembly:
 *   - the same master curves assembled the old way, as scaled metrics (kl_hc_master) times d* = e^(1/(n+1)),
 *     t* = d* / v0 and F* = K d*^n taken with the C library's pow: checks that d* and F* folded into the
 *     exponentials (dmax = e^(p (log e + A)), the peak's e^(a (log e + .))) are the same numbers;
 *   - the phase-plane closed forms of kernels/kl_contact_hc.h (kl_hc_delta_max, kl_hc_phase_times' quadrature,
 *     kl_hc_peak_force, kl_hc_cr_eff), which use no fitted table;
 *   - the damping laws' chi written out here from their papers' formulas (kernels/kl_contact_hc.h cites them);
 *   - T_k(x) = cos(k acos x) for the Chebyshev basis by doubling.
 * And every input the fast path must decline gives KL_PENDING with zeros, never a wrong number. Also Emden-Fowler's
 * straight-line path (kl_impact_ef_fast) against the paper's eq. (11)-(13) written out with libm (pow, tgamma).
 * Tolerances (relative): the old assembly 1e-13 (two exponentials and a pow, each within a few ulps, on
 * arguments up to |log e| ~ 50: measured 1.4e-14, see the printout); the closed forms 1e-13 for dmax, fpeak and
 * cr_eff (the fit is within a few 1e-15 of mpmath and the closed forms within ~3e-15, kl_hc_master_test) and 1e-10
 * for tmax and tc (the quadrature's documented error is 2e-11, docs/design.md 2.3). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/kl_cheb.h"
#include "kernels/kl_impact.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Du;
static double unif(void)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) * 0x1.0p-53;
}
static double logu(double lo, double hi) { return lo * pow(hi / lo, unif()); }

static double rel(double a, double b) { return fabs(a - b) / fabs(b); }

/* zeta = chi v0 of each law from its formula (Hunt & Crossley 1975, Lankarani & Nikravesh 1990, Flores et al. 2011,
 * Gonthier et al. 2004); the exact law's by the root find of kl_hc_exact_d (not the fit the fast path uses) */
static double zeta_of(int law, double cr)
{
  switch (law) {
  case 0: return 1.5 * (1.0 - cr);
  case 1: return 0.75 * (1.0 - cr * cr);
  case 2: return 1.6 * (1.0 - cr) / cr;
  case 3: return (1.0 - cr * cr) / cr;
  default: return kl_hc_exact_d(cr);
  }
}

/* A random Hunt-Crossley scenario of a usual exponent over many decades of m, K and v0 */
static kl_impact_in scenario(void)
{
  static const double ns[4] = {1.0, 1.5, 2.0, 2.5};
  kl_impact_in in;
  memset(&in, 0, sizeof in);
  in.model = KL_MODEL_HC;
  in.law = (int)(unif() * KL_NLAWS);
  in.rule = (int)(unif() * 2.0);
  in.n = ns[(int)(unif() * 4.0)];
  const double u = unif();
  in.cr = u < 0.1 ? logu(0.0078125, 0.05) : u < 0.2 ? 1.0 : 0.01 + 0.99 * unif();
  in.m = logu(1e-6, 1e3);
  in.K = logu(1e3, 1e15);
  in.v0 = logu(1e-4, 1e2);
  return in;
}

static kl_impact_out fast(kl_impact_in in) { return kl_impact_hc_fast(in, in.law == KL_LAW_EXACT); }

/* The fast path on 2e5 random scenarios: taken exactly where zeta <= 32 (the master curves' domain), and then
 * equal to the old assembly and to the closed forms; kl_impact returns its result bit for bit. */
static void test_against_references(void **state)
{
  (void)state;
  double worst_old = 0.0, worst_cf[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
  long taken = 0, declined = 0;
  for (int k = 0; k < 200000; ++k) {
    const kl_impact_in in = scenario();
    const double zeta = zeta_of(in.law, in.cr);
    const kl_impact_out f = fast(in);
    if (zeta > 32.0 * (1.0 + 1e-12)) {
      if (f.status != KL_PENDING) fail_msg("law %d cr %.17g: zeta %g > 32 taken", in.law, in.cr, zeta);
      ++declined;
      continue;
    }
    if (zeta > 32.0 * (1.0 - 1e-12)) continue; /* at the edge either way */
    if (f.status != KL_OK) fail_msg("law %d cr %.17g n %g m %g K %g v0 %g: declined", in.law, in.cr, in.n, in.m, in.K, in.v0);
    ++taken;
    const kl_impact_out g = kl_impact(in);
    assert_int_equal(g.status, KL_OK);
    assert_memory_equal(&g.dmax, &f.dmax, sizeof f.dmax);
    assert_memory_equal(&g.tc, &f.tc, sizeof f.tc);
    assert_memory_equal(&g.fpeak, &f.fpeak, sizeof f.fpeak);
    /* the old assembly: scaled master curves times the scales by pow */
    const double chi = f.damp, z = chi * in.v0;
    assert_true(fabs(z - zeta) <= 1e-13 * zeta);
    const kl_hc_scaled s = kl_hc_master(in.n, z);
    const double ds = pow((in.n + 1.0) * in.m * in.v0 * in.v0 / (2.0 * in.K), 1.0 / (in.n + 1.0));
    const double ts = ds / in.v0, fs = in.K * pow(ds, in.n);
    const double eo[5] = {rel(f.dmax, s.dmax * ds), rel(f.tmax, s.tmax * ts), rel(f.fpeak, s.fpeak * fs),
                          rel(f.tc, s.tc * ts), rel(f.cr_eff, s.cr_eff)};
    for (int i = 0; i < 5; ++i) {
      if (eo[i] > worst_old) worst_old = eo[i];
      if (!(eo[i] <= 1e-13)) fail_msg("law %d cr %.17g n %g: metric %d off the old assembly by %.3g", in.law, in.cr, in.n, i, eo[i]);
    }
    /* the closed forms (every 20th: the quadrature is slow) */
    if (k % 20 == 0) {
      const double dmax = kl_hc_delta_max(in.m, in.K, in.n, chi, in.v0);
      double trest;
      const double tmax = kl_hc_phase_times(dmax, chi, in.v0, in.n, &trest);
      double dpk;
      const double fpk = kl_hc_peak_force(in.m, in.K, in.n, chi, in.v0, dmax, &dpk);
      const double cre = kl_hc_cr_eff(z);
      const double ec[5] = {rel(f.dmax, dmax), rel(f.tmax, tmax), rel(f.fpeak, fpk), rel(f.tc, tmax + trest),
                            fabs(f.cr_eff - cre)};
      const double tol[5] = {1e-13, 1e-10, 1e-13, 1e-10, 1e-13};
      for (int i = 0; i < 5; ++i) {
        if (ec[i] > worst_cf[i]) worst_cf[i] = ec[i];
        if (!(ec[i] <= tol[i])) fail_msg("law %d cr %.17g n %g: metric %d off the closed form by %.3g", in.law, in.cr, in.n, i, ec[i]);
      }
    }
  }
  printf("fast path: %ld taken, %ld declined (zeta > 32); worst against the old assembly %.3g; against the closed "
         "forms dmax %.3g tmax %.3g fpeak %.3g tc %.3g cr_eff %.3g\n",
         taken, declined, worst_old, worst_cf[0], worst_cf[1], worst_cf[2], worst_cf[3], worst_cf[4]);
  assert_true(taken > 150000);
  assert_true(declined > 1000); /* Flores and Gonthier below cr ~ 0.05 */
}

/* Inputs outside the fast path: KL_PENDING and zeros, and kl_impact still answers them (the general path) */
static void test_declines(void **state)
{
  (void)state;
  kl_impact_in base;
  memset(&base, 0, sizeof base);
  base.model = KL_MODEL_HC;
  base.law = KL_LAW_HUNT_CROSSLEY;
  base.n = 1.5;
  base.m = 1.0;
  base.K = 1e9;
  base.cr = 0.6;
  base.v0 = 1.0;
  assert_int_equal(fast(base).status, KL_OK);
  struct {
    const char *what;
    int field;
    double v;
  } cases[] = {
    {"Kelvin-Voigt", 0, KL_MODEL_KV}, {"Emden-Fowler", 0, KL_MODEL_EF}, {"general law", 0, KL_MODEL_GEN},
    {"external force", 1, 2.0}, {"n = 1.7 (tensor series)", 2, 1.7}, {"n = 3", 2, 3.0}, {"n = 1.5 + ulp", 2, 1.5000000000000002},
    {"cr = 0", 3, 0.0}, {"cr > 1", 3, 1.5}, {"cr NaN", 3, NAN}, {"m = 0", 4, 0.0}, {"m NaN", 4, NAN},
    {"m subnormal e", 4, 1e-320}, {"K inf", 5, INFINITY}, {"K < 0", 5, -1.0}, {"e > 1e300", 5, 1e-300},
    {"v0 = 0", 6, 0.0}, {"v0 inf", 6, INFINITY}, {"law 7", 7, 7}, {"law -1", 7, -1}, {"rule 2", 8, 2},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k) {
    kl_impact_in in = base;
    const double v = cases[k].v;
    switch (cases[k].field) {
    case 0: in.model = (int)v; break;
    case 1: in.fe = v; break;
    case 2: in.n = v; break;
    case 3: in.cr = v; break;
    case 4: in.m = v; break;
    case 5: in.K = v; break;
    case 6: in.v0 = v; break;
    case 7: in.law = (int)v; break;
    default: in.rule = (int)v; break;
    }
    const kl_impact_out f = fast(in);
    if (f.status != KL_PENDING) fail_msg("%s: status %d, not KL_PENDING", cases[k].what, f.status);
    const double z[7] = {f.dmax, f.tmax, f.fpeak, f.tc, f.cr_eff, f.ediss, f.damp};
    for (int i = 0; i < 7; ++i) assert_true(z[i] == 0.0);
    assert_int_not_equal(kl_impact(in).status, KL_PENDING); /* never leaks out of kl_impact */
  }
  /* the other kind of law, the exact law outside its fit, zeta beyond the domain (Flores at cr = 0.04: 38.4) */
  kl_impact_in in = base;
  assert_int_equal(kl_impact_hc_fast(in, 1).status, KL_PENDING);
  in.law = KL_LAW_EXACT;
  assert_int_equal(kl_impact_hc_fast(in, 0).status, KL_PENDING);
  assert_int_equal(kl_impact_hc_fast(in, 1).status, KL_OK);
  in.cr = 0.005;
  assert_int_equal(kl_impact_hc_fast(in, 1).status, KL_PENDING);
  assert_int_equal(kl_impact(in).status, KL_OK);
  in = base;
  in.law = KL_LAW_FLORES;
  in.cr = 0.04;
  assert_int_equal(fast(in).status, KL_PENDING);
  assert_int_equal(kl_impact(in).status, KL_OK); /* the phase-plane closed forms */
  in.cr = 0.06; /* zeta 25.1: inside */
  assert_int_equal(fast(in).status, KL_OK);
}

/* The pieces: T_k by doubling against cos(k acos x); the sum against a plain loop; the exponent rows; the laws' chi */
static void test_pieces(void **state)
{
  (void)state;
  double worst = 0.0;
  for (int i = 0; i <= 200; ++i) {
    const double x = -1.0 + i / 100.0;
    double t[KL_CHEB_NMAX];
    kl_cheb_basis(x, KL_CHEB_NMAX, t);
    for (int k = 0; k < KL_CHEB_NMAX; ++k) {
      const double e = fabs(t[k] - cos(k * acos(x)));
      if (e > worst) worst = e;
    }
    /* kl_cheb_sum of N terms = the plain sum (the same products, other order: within a few ulps of sum |c T|) */
    static const double c[KL_CHEB_NMAX] = {1.0,  -0.5, 0.25,  0.125, -2.0, 3.0,  0.7, -0.3, 0.11, 0.05, -0.02, 0.9,
                                           -0.8, 0.6,  -0.45, 0.33,  0.21, -0.1, 0.4, 0.01, -0.6, 0.3,  0.2,   -0.7};
    for (int N = 1; N <= KL_CHEB_NMAX; ++N) {
      double s = 0.0, a = 0.0;
      for (int k = 0; k < N; ++k) {
        s += c[k] * t[k];
        a += fabs(c[k] * t[k]);
      }
      assert_true(fabs(kl_cheb_sum(c, N, t) - s) <= 8.0 * KL_EPS * a);
    }
  }
  printf("T_k by doubling: worst |T_k - cos(k acos x)| %.3g over k < %d\n", worst, KL_CHEB_NMAX);
  assert_true(worst < 1e-13);
  assert_int_equal(kl_hcm_kn(1.0), 0);
  assert_int_equal(kl_hcm_kn(1.5), 1);
  assert_int_equal(kl_hcm_kn(2.0), 2);
  assert_int_equal(kl_hcm_kn(2.5), 3);
  assert_int_equal(kl_hcm_kn(1.25), -1);
  assert_int_equal(kl_hcm_kn(nextafter(2.0, 3.0)), -1);
  assert_int_equal(kl_hcm_kn(NAN), -1);
  for (int law = 0; law < KL_LAW_EXACT; ++law)
    for (double cr = 0.05; cr <= 1.0; cr += 0.05) {
      const double v0 = 2.5;
      assert_true(rel(kl_hc_chi_closed(law, cr, v0) * v0, zeta_of(law, cr)) < 1e-15 || zeta_of(law, cr) == 0.0);
      assert_true(kl_hc_chi(law, cr, v0) == kl_hc_chi_closed(law, cr, v0));
    }
  assert_true(kl_hc_chi(7, 0.5, 1.0) < 0.0);
  assert_true(kl_hc_chi(-1, 0.5, 1.0) < 0.0);
}

/* Emden-Fowler for n = 1 and 1.5: d_max = ((n+1) m v0^2 / (2K))^(1/(n+1)), t_max = sqrt(pi) Gamma(1 + p) /
 * Gamma(0.5 + p) d_max / v0 (p = 1/(n+1); pi/2 at n = 1), t_c = t_max (1 + 1/cr), F_peak = K d_max^n, cr_eff = cr,
 * by libm; within 5e-14 (pow and the exponential of a log, each a few ulps, on |p log x| up to ~40: measured 5.0e-15),
 * bit for bit with kl_impact; other n, a force or another model: KL_PENDING */
static void test_ef(void **state)
{
  (void)state;
  double worst = 0.0;
  for (int k = 0; k < 100000; ++k) {
    kl_impact_in in;
    memset(&in, 0, sizeof in);
    in.model = KL_MODEL_EF;
    in.n = unif() < 0.5 ? 1.0 : 1.5;
    in.cr = unif() < 0.1 ? 1.0 : 0.001 + 0.999 * unif();
    in.m = logu(1e-6, 1e3);
    in.K = logu(1e3, 1e15);
    in.v0 = logu(1e-4, 1e2);
    const kl_impact_out f = kl_impact_ef_fast(in);
    assert_int_equal(f.status, KL_OK);
    const double p = 1.0 / (in.n + 1.0);
    const double dmax = pow((in.n + 1.0) * in.m * in.v0 * in.v0 / (2.0 * in.K), p);
    const double tf = sqrt(3.14159265358979323846) * tgamma(1.0 + p) / tgamma(0.5 + p);
    const double tmax = tf * dmax / in.v0;
    const double e[5] = {rel(f.dmax, dmax), rel(f.tmax, tmax), rel(f.tc, tmax * (1.0 + 1.0 / in.cr)),
                         rel(f.fpeak, in.K * pow(dmax, in.n)), fabs(f.cr_eff - in.cr)};
    for (int i = 0; i < 5; ++i) {
      if (e[i] > worst) worst = e[i];
      if (!(e[i] <= 5e-14)) fail_msg("n %g m %g K %g v0 %g cr %g: metric %d off by %.3g", in.n, in.m, in.K, in.v0, in.cr, i, e[i]);
    }
    assert_true(fabs(f.ediss - (1.0 - in.cr * in.cr)) <= 1e-15);
    const kl_impact_out g = kl_impact(in);
    assert_memory_equal(&g.tc, &f.tc, sizeof f.tc);
    assert_memory_equal(&g.fpeak, &f.fpeak, sizeof f.fpeak);
  }
  printf("Emden-Fowler fast path against the paper's formulas by libm: worst %.3g\n", worst);
  kl_impact_in in;
  memset(&in, 0, sizeof in);
  in.model = KL_MODEL_EF;
  in.n = 1.5;
  in.cr = 0.5;
  in.m = 1.0;
  in.K = 1e9;
  in.v0 = 1.0;
  assert_int_equal(kl_impact_ef_fast(in).status, KL_OK);
  in.n = 2.0;
  assert_int_equal(kl_impact_ef_fast(in).status, KL_PENDING);
  assert_int_equal(kl_impact(in).status, KL_OK); /* the general path, tgamma */
  in.n = 1.5;
  in.model = KL_MODEL_HC;
  assert_int_equal(kl_impact_ef_fast(in).status, KL_PENDING);
  in.model = KL_MODEL_EF;
  in.cr = 0.0;
  assert_int_equal(kl_impact_ef_fast(in).status, KL_PENDING);
  in.cr = 0.5;
  in.K = 1e-310; /* x beyond 1e300 */
  assert_int_equal(kl_impact_ef_fast(in).status, KL_PENDING);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_against_references),
    cmocka_unit_test(test_declines),
    cmocka_unit_test(test_pieces),
    cmocka_unit_test(test_ef),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
