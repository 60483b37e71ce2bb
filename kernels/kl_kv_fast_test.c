/* kernels/kl_kv_fast_test.c: the straight-line Kelvin-Voigt impact kl_impact_kv_fast (kernels/kl_kv_fast.h)
 *   - against the general path kl_impact_kv_general over random scenarios on three ranges (the sweep
 *     benchmark's, a wide one, an extreme one): where it answers, the metrics are the same bits; the share
 *     it declines is printed, and on the benchmark's and the wide range bounded;
 *   - on invalid and odd inputs (NaN, infinities, zeros, negative values, cr > 1, fe != 0, other models,
 *     rules and laws out of range): KL_PENDING with zeros, or KL_OK only for a valid Kelvin-Voigt scenario
 *     with fe = 0 and finite metrics;
 *   - by hand: cr = 1 (D = 0, harmonic motion), and cr = 0.5 against the paper's closed form (eq. 4 with
 *     eq. 10) written out here with libm's log, exp, sin, cos and atan2. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/kl_impact.h"

/*------- deterministic random numbers (splitmix64) -------*/

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void)
{
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double u01(void) { return (double)(rng_next() >> 11) * 0x1.0p-53; } /* [0, 1) */

static double log_uniform(double a, double b) { return exp(log(a) + (log(b) - log(a)) * u01()); }

/* the metrics (not the padding after status) */
static int same_metrics(kl_impact_out a, kl_impact_out b)
{
  const double x[7] = {a.dmax, a.tmax, a.fpeak, a.tc, a.cr_eff, a.ediss, a.damp};
  const double y[7] = {b.dmax, b.tmax, b.fpeak, b.tc, b.cr_eff, b.ediss, b.damp};
  return memcmp(x, y, sizeof x) == 0;
}

static int all_finite(kl_impact_out o)
{
  return isfinite(o.dmax) && isfinite(o.tmax) && isfinite(o.fpeak) && isfinite(o.tc) && isfinite(o.cr_eff) &&
         isfinite(o.ediss) && isfinite(o.damp);
}

static kl_impact_in kv_in(double m, double K, double cr, double v0, int rule)
{
  const kl_impact_in in = {m, K, 1.0, cr, v0, 0.0, KL_MODEL_KV, 0, rule, 0.0, 0.0, 0.0};
  return in;
}

/*------- (a) the fast function against the general path -------*/

enum { RANGE_BENCH, RANGE_WIDE, RANGE_EXTREME };

static kl_impact_in draw(int range)
{
  const int rule = (int)(rng_next() & 1);
  if (range == RANGE_BENCH) /* benchmarks/sweep_throughput's Kelvin-Voigt rows */
    return kv_in(1.0, 1e9, 0.05 + 0.95 * u01(), log_uniform(0.01, 10.0), rule);
  const double pick = u01();
  if (range == RANGE_WIDE) {
    /* cr: 10 % exactly 1, 10 % tiny (log-uniform down to 1e-300), the rest uniform in (0, 1] */
    const double cr = pick < 0.1 ? 1.0 : pick < 0.2 ? log_uniform(1e-300, 1e-3) : 1.0 - u01();
    return kv_in(log_uniform(1e-8, 1e8), log_uniform(1e-3, 1e15), cr, log_uniform(1e-8, 1e6), rule);
  }
  /* extreme: every magnitude the type holds, cr to subnormal values, fe = -0 now and then */
  const double cr = pick < 0.1 ? 1.0 : log_uniform(1e-320, 1.0);
  kl_impact_in in = kv_in(log_uniform(1e-300, 1e300), log_uniform(1e-300, 1e300), cr, log_uniform(1e-300, 1e300), rule);
  if (u01() < 0.05) in.fe = -0.0;
  return in;
}

/* N scenarios of a range: every answer of the fast function is KL_OK with the general path's metrics bit
 * for bit (the general path then says KL_OK too, finite), or KL_PENDING with zeros. Returns the share
 * declined; *declined_ok counts the declined ones the general path computes. */
static double check_range(int range, long N, long *declined_ok)
{
  long declined = 0;
  *declined_ok = 0;
  for (long i = 0; i < N; ++i) {
    const kl_impact_in in = draw(range);
    const kl_impact_out f = kl_impact_kv_fast(in);
    const kl_impact_out g = kl_impact_final(kl_impact_kv_general(in));
    if (f.status == KL_PENDING) {
      ++declined;
      if (g.status == KL_OK) ++*declined_ok;
      if (!same_metrics(f, kl_impact_zero(KL_PENDING)))
        fail_msg("range %d: declined with metrics (m %.17g K %.17g cr %.17g v0 %.17g rule %d)", range, in.m, in.K,
                 in.cr, in.v0, in.rule);
      continue;
    }
    if (f.status != KL_OK || g.status != KL_OK || !same_metrics(f, g) || !all_finite(f))
      fail_msg("range %d: m %.17g K %.17g cr %.17g v0 %.17g rule %d: fast status %d, general %d\n"
               "  dmax %.17g / %.17g, tmax %.17g / %.17g, fpeak %.17g / %.17g\n"
               "  tc %.17g / %.17g, cr_eff %.17g / %.17g, ediss %.17g / %.17g, damp %.17g / %.17g",
               range, in.m, in.K, in.cr, in.v0, in.rule, f.status, g.status, f.dmax, g.dmax, f.tmax, g.tmax, f.fpeak,
               g.fpeak, f.tc, g.tc, f.cr_eff, g.cr_eff, f.ediss, g.ediss, f.damp, g.damp);
    /* kl_impact answers with the fast function's result */
    const kl_impact_out k = kl_impact(in);
    assert_true(k.status == KL_OK && same_metrics(k, f));
  }
  return (double)declined / (double)N;
}

static void test_fast_vs_general(void **state)
{
  (void)state;
  long dok;
  const long N = 200000;
  const double sb = check_range(RANGE_BENCH, N, &dok);
  printf("  benchmark range (cr in [0.05, 1], v0 in [0.01, 10], m 1, K 1e9): %ld scenarios, %.4f %% declined\n", N,
         100.0 * sb);
  assert_true(sb < 1e-3); /* measured 0 */
  const double sw = check_range(RANGE_WIDE, N, &dok);
  printf("  wide range (m 1e-8..1e8, K 1e-3..1e15, v0 1e-8..1e6, cr (0, 1] down to 1e-300): %.4f %% declined\n",
         100.0 * sw);
  assert_true(sw < 1e-3); /* measured 0 */
  const double se = check_range(RANGE_EXTREME, N, &dok);
  printf("  extreme range (m, K, v0 1e-300..1e300, cr down to 1e-320): %.2f %% declined, %.2f %% of all declined"
         " though the general path computes them\n",
         100.0 * se, 100.0 * (double)dok / (double)N);
  /* most of the extreme range overflows or underflows somewhere (the general path then fails too);
   * measured 65 % declined, 7 % computed by the general path */
  assert_true(se < 0.8 && (double)dok / (double)N < 0.15);
}

/*------- (b) invalid and odd inputs -------*/

static void test_fast_odd_inputs(void **state)
{
  (void)state;
  const double vals[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, -1.0, 1e-320, 1e-300, 0.5, 1.0, 1.5, 2.0, 1e300, DBL_MAX};
  const int nv = (int)(sizeof vals / sizeof vals[0]);
  const int ints[] = {-1, 0, 1, 2, 3, 4, 5, 100};
  long nok = 0;
  const long N = 200000;
  for (long i = 0; i < N; ++i) {
    /* each field an odd value or a valid one, so that some draws are valid and most are not */
    kl_impact_in in = kv_in(log_uniform(1e-3, 1e3), log_uniform(1.0, 1e12), 1.0 - u01(), log_uniform(1e-3, 1e3),
                            (int)(rng_next() & 1));
    double *fields[6] = {&in.m, &in.K, &in.n, &in.cr, &in.v0, &in.fe};
    for (int k = 0; k < 6; ++k)
      if (u01() < 0.2) *fields[k] = vals[rng_next() % (uint64_t)nv];
    if (u01() < 0.1) in.model = ints[rng_next() % 8];
    if (u01() < 0.1) in.law = ints[rng_next() % 8];
    if (u01() < 0.1) in.rule = ints[rng_next() % 8];
    const kl_impact_out f = kl_impact_kv_fast(in);
    if (f.status == KL_PENDING) {
      assert_true(same_metrics(f, kl_impact_zero(KL_PENDING)));
      continue;
    }
    assert_int_equal(f.status, KL_OK);
    ++nok;
    if (!(kl_impact_check(in) == KL_OK && in.model == KL_MODEL_KV && in.fe == 0.0 && all_finite(f)))
      fail_msg("KL_OK for m %g K %g n %g cr %g v0 %g fe %g model %d law %d rule %d", in.m, in.K, in.n, in.cr, in.v0,
               in.fe, in.model, in.law, in.rule);
    assert_true(same_metrics(f, kl_impact_kv_general(in)));
  }
  printf("  %ld odd inputs: %ld valid ones answered, the rest declined\n", N, nok);
  assert_true(nok > N / 100); /* the valid draws are exercised too */
  /* one of each kind by name */
  const kl_impact_in good = kv_in(1.0, 1e9, 0.5, 1.0, KL_SEP_PENETRATION);
  assert_int_equal(kl_impact_kv_fast(good).status, KL_OK);
  kl_impact_in b = good;
  b.m = NAN;
  assert_int_equal(kl_impact_kv_fast(b).status, KL_PENDING);
  b = good;
  b.m = -1.0;
  assert_int_equal(kl_impact_kv_fast(b).status, KL_PENDING);
  b = good;
  b.cr = 1.0 + KL_EPS;
  assert_int_equal(kl_impact_kv_fast(b).status, KL_PENDING);
  b = good;
  b.fe = 1.0;
  assert_int_equal(kl_impact_kv_fast(b).status, KL_PENDING);
  b = good;
  b.model = KL_MODEL_HC;
  assert_int_equal(kl_impact_kv_fast(b).status, KL_PENDING);
  b = good;
  b.rule = 2;
  assert_int_equal(kl_impact_kv_fast(b).status, KL_PENDING);
  b = good;
  b.v0 = INFINITY;
  assert_int_equal(kl_impact_kv_fast(b).status, KL_PENDING);
}

/*------- (c) by hand -------*/

static double rel(double a, double b) { return fabs(a - b) / fabs(b); }

/* cr = 1: D = 0, d = v0/w sin(wt), w = sqrt(K/m): the contact lasts pi/w, the maximum penetration v0/w at
 * pi/(2w), the peak force K v0/w, the exit speed v0; both rules (the force rule is the penetration rule
 * when D = 0). Tolerance 4 ulp (the atan2 polynomial and the divisions). */
static void test_fast_elastic(void **state)
{
  (void)state;
  const double ms[] = {1.0, 0.05, 3e-4};
  const double Ks[] = {1e9, 2e4, 7.5e12};
  const double v0s[] = {1.0, 0.01, 42.0};
  for (int i = 0; i < 3; ++i) {
    for (int rule = 0; rule <= 1; ++rule) {
      const kl_impact_in in = kv_in(ms[i], Ks[i], 1.0, v0s[i], rule);
      const kl_impact_out o = kl_impact_kv_fast(in);
      assert_int_equal(o.status, KL_OK);
      const double s = sqrt(ms[i] / Ks[i]);
      const double tol = 4.0 * KL_EPS;
      if (!(rel(o.tc, KL_PI * s) <= tol && rel(o.tmax, 0.5 * KL_PI * s) <= tol && rel(o.dmax, v0s[i] * s) <= tol &&
            rel(o.fpeak, Ks[i] * v0s[i] * s) <= tol && rel(o.cr_eff, 1.0) <= tol && o.damp == 0.0 &&
            fabs(o.ediss) <= 2.0 * tol))
        fail_msg("cr = 1, m %g K %g v0 %g rule %d: tc %.17g (%.17g), tmax %.17g, dmax %.17g (%.17g), fpeak %.17g,"
                 " cr_eff %.17g",
                 ms[i], Ks[i], v0s[i], rule, o.tc, KL_PI * s, o.tmax, o.dmax, v0s[i] * s, o.fpeak, o.cr_eff);
    }
  }
}

/* cr = 0.5 under the penetration rule (the paper's): D from eq. (10), r = D/(2m), w = sqrt(K/m - r^2),
 * d = (v0/w) e^{-rt} sin(wt) (eq. 4 from d = 0, d' = v0). Contact ends at wt = pi, with exit speed
 * v0 e^{-r pi/w} (= cr v0); d' = 0 at tan(wt) = w/r; the force F = K d + D d' = v0 e^{-rt} (A sin wt +
 * B cos wt), A = (K - D r)/w, B = D, peaks where tan(wt) = (w A - r B)/(r A + w B), or is D v0 at impact
 * if that is larger. Tolerance 1e-14 relative (libm and the kernel's polynomials, a few ulp each). */
static void test_fast_paper_cr_half(void **state)
{
  (void)state;
  const double m = 2.0, K = 3e7, v0 = 1.7, cr = 0.5;
  const kl_impact_out o = kl_impact_kv_fast(kv_in(m, K, cr, v0, KL_SEP_PENETRATION));
  assert_int_equal(o.status, KL_OK);
  const double l = -log(cr);
  const double D = 2.0 * l * sqrt(K * m) / sqrt(KL_PI * KL_PI + l * l);
  const double r = D / (2.0 * m), w = sqrt(K / m - r * r);
  const double tc = KL_PI / w, vexit = v0 * exp(-r * tc);
  const double tm = atan2(w, r) / w, dm = v0 / w * exp(-r * tm) * sin(w * tm);
  const double A = (K - D * r) / w, B = D;
  const double tp = atan2(w * A - r * B, r * A + w * B) / w;
  const double fp = fmax(v0 * exp(-r * tp) * (A * sin(w * tp) + B * cos(w * tp)), D * v0);
  const double tol = 1e-14;
  printf("  cr = 0.5: tc %.3e (%.1e), tmax %.1e, dmax %.1e, fpeak %.1e, cr_eff %.1e, D %.1e relative\n", o.tc,
         rel(o.tc, tc), rel(o.tmax, tm), rel(o.dmax, dm), rel(o.fpeak, fp), rel(o.cr_eff, vexit / v0),
         rel(o.damp, D));
  assert_true(rel(o.damp, D) <= tol);
  assert_true(rel(o.tc, tc) <= tol);
  assert_true(rel(o.cr_eff, vexit / v0) <= tol && rel(o.cr_eff, cr) <= tol);
  assert_true(rel(o.tmax, tm) <= tol);
  assert_true(rel(o.dmax, dm) <= tol);
  assert_true(rel(o.fpeak, fp) <= tol);
  assert_true(fp > D * v0); /* the peak is inside the contact at cr = 0.5 (zeta = 0.215) */
  assert_true(rel(o.ediss, 1.0 - cr * cr) <= tol);
}

/*------- the straight-line elementary functions against the ones with library fallbacks -------*/

/* kl_atan2_fin and kl_exp_fin are what kl_atan2 and kl_exp compute in their range (kernels/kl_math.h):
 * the same bits on random arguments of every magnitude and sign, and kl_atan2_in says which are in range. */
static void test_fin_functions(void **state)
{
  (void)state;
  for (long i = 0; i < 200000; ++i) {
    const double y = (u01() < 0.5 ? -1.0 : 1.0) * (u01() < 0.05 ? 0.0 : log_uniform(1e-300, 1e300));
    const double x = (u01() < 0.5 ? -1.0 : 1.0) * (u01() < 0.05 ? 0.0 : log_uniform(1e-300, 1e300));
    const int in = kl_atan2_in(y, x);
    assert_int_equal(in, !(x == 0.0 && y == 0.0));
    if (in) {
      const double a = kl_atan2_fin(y, x), b = kl_atan2(y, x);
      assert_memory_equal(&a, &b, sizeof a);
    }
    const double e = 700.0 * (2.0 * u01() - 1.0);
    const double ea = kl_exp_fin(e), eb = kl_exp(e);
    assert_memory_equal(&ea, &eb, sizeof ea);
  }
  assert_int_equal(kl_atan2_in(1e301, 1.0), 0);
  assert_int_equal(kl_atan2_in(1.0, NAN), 0);
  assert_int_equal(kl_atan2_in(0.0, -0.0), 0);
  assert_int_equal(kl_atan2_in(0.0, -1.0), 1);
  assert_true(kl_atan2_fin(0.0, -1.0) == atan2(0.0, -1.0) && kl_atan2_fin(-0.0, -1.0) == atan2(-0.0, -1.0));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fast_vs_general),  cmocka_unit_test(test_fast_odd_inputs),
    cmocka_unit_test(test_fast_elastic),     cmocka_unit_test(test_fast_paper_cr_half),
    cmocka_unit_test(test_fin_functions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
