/* optimiser/robust_test.c: the robust objectives and the report's statistics (optimiser/robust.h) on five
 * listed scenarios, every expectation worked out by hand in the comments. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernels/kl_rollout.h"
#include "optimiser/robust.h"

#define S 5
#define P 2

/* two candidates of five scenarios each in the batch's layout obj[t (P S) + p S + s]; candidate 1 is the one the
 * tests score; candidate 0 holds other values, so a stride or offset mistake reads them */
static double obj[KL_OBJ_N * P * S];
static const double J1[S] = {0.1, 0.4, 0.2, 0.3, 0.5};
static const double FMAX1[S] = {9.0, 11.0, 8.0, 10.5, 9.5};
static const double FMIN1[S] = {5.0, 6.0, 3.0, 4.5, 4.2};
static const double LOSS1[S] = {0.0, 0.0, 0.0, 0.0, 0.1};

static void fill(void)
{
  for (int i = 0; i < KL_OBJ_N * P * S; ++i) obj[i] = 7.0; /* candidate 0 and unused terms */
  for (int s = 0; s < S; ++s) {
    obj[KL_OBJ_J * P * S + S + s] = J1[s];
    obj[KL_OBJ_FMAX * P * S + S + s] = FMAX1[s];
    obj[KL_OBJ_FMIN * P * S + S + s] = FMIN1[s];
    obj[KL_OBJ_LOSS * P * S + S + s] = LOSS1[s];
    obj[KL_OBJ_LOSS * P * S + s] = 0.0;
  }
}

static double robust(int kind, double k, double alpha, double prob)
{
  const kl_robust_spec sp = {kind, k, alpha, prob, 4.0, 10.0, 5.0};
  double work[2 * S];
  fill();
  return kl_robust_objective(&sp, obj + S, (long)P * S, S, work);
}

static void test_mean_std(void **state)
{
  (void)state;
  /* mean (0.1 + 0.4 + 0.2 + 0.3 + 0.5) / 5 = 0.3; deviations -0.2, 0.1, -0.1, 0, 0.2: squares sum 0.1, sd
   * sqrt(0.1 / 5) = 0.1414213562373095 */
  assert_true(fabs(robust(KL_ROBUST_MEAN, 0, 0, 0) - 0.3) < 1e-15);
  assert_true(fabs(kl_robust_sd(J1, S) - 0.1414213562373095) < 1e-15);
  assert_true(fabs(robust(KL_ROBUST_MEAN_STD, 2.0, 0, 0) - (0.3 + 2 * 0.1414213562373095)) < 1e-15);
}

static void test_cvar_worst(void **state)
{
  (void)state;
  /* alpha 0.7: m = 1.5 worst values, 0.5 whole and half of 0.4: (0.5 + 0.2) / 1.5 */
  assert_true(fabs(robust(KL_ROBUST_CVAR, 0, 0.7, 0) - 0.7 / 1.5) < 1e-15);
  /* alpha 0.4: m = 3: (0.5 + 0.4 + 0.3) / 3 = 0.4 */
  assert_true(fabs(robust(KL_ROBUST_CVAR, 0, 0.4, 0) - 0.4) < 1e-15);
  /* alpha 0: the mean; alpha 0.9: m = 0.5 <= 1, the worst */
  assert_true(fabs(robust(KL_ROBUST_CVAR, 0, 0.0, 0) - 0.3) < 1e-15);
  assert_true(robust(KL_ROBUST_CVAR, 0, 0.9, 0) == 0.5);
  assert_true(robust(KL_ROBUST_WORST, 0, 0, 0) == 0.5);
}

static void test_chance(void **state)
{
  (void)state;
  /* band [4, 10] N, F_ref 5 N. Violations max(Fmax - 10, 4 - Fmin) / 5: s0 max(-1, -1) = -0.2; s1 max(1, -2) = 0.2;
   * s2 max(-2, 1) = 0.2; s3 max(0.5, -0.5) = 0.1; s4 max(-0.5, -0.2) = -0.04 but it loses contact: 4 / 5 = 0.8.
   * Sorted -0.2, 0.1, 0.2, 0.2, 0.8. p 0.6: the 3rd, 0.2: 0.3 + 100 0.2^2 = 4.3; p 0.4: the 2nd, 0.1: 0.3 + 1;
   * p 0.2: the 1st, -0.2 (in the band): the mean alone */
  assert_true(fabs(robust(KL_ROBUST_CHANCE, 0, 0, 0.6) - 4.3) < 1e-13);
  assert_true(fabs(robust(KL_ROBUST_CHANCE, 0, 0, 0.4) - 1.3) < 1e-13);
  assert_true(fabs(robust(KL_ROBUST_CHANCE, 0, 0, 0.2) - 0.3) < 1e-15);
  const kl_robust_spec sp = {KL_ROBUST_CHANCE, 0, 0, 0.5, 4.0, 10.0, 5.0};
  assert_true(fabs(kl_robust_violation(&sp, 9.5, 4.2, 0.0) + 0.04) < 1e-15);
  assert_true(fabs(kl_robust_violation(&sp, 9.5, 4.2, 0.1) - 0.8) < 1e-15);
}

static void test_failed(void **state)
{
  (void)state;
  /* one failed rollout fails the candidate whatever the statistic */
  fill();
  obj[KL_OBJ_J * P * S + S + 2] = KL_HUGE;
  const kl_robust_spec sp = {KL_ROBUST_CVAR, 0, 0.9, 0, 4, 10, 5};
  double work[2 * S];
  assert_true(kl_robust_objective(&sp, obj + S, (long)P * S, S, work) >= KL_HUGE);
}

static void test_summary(void **state)
{
  (void)state;
  double v[20], work[20];
  for (int i = 0; i < 20; ++i) v[i] = 20 - i; /* 20, 19, ..., 1 */
  /* median: the ceil(10)-th smallest = 10; P95: the ceil(19)-th = 19; worst 20; mean 10.5. P95's interval: binomial
   * (20, 0.95) has sd sqrt(20 0.95 0.05) = 0.9747, 1.96 of it 1.9104: ranks floor(19 - 1.91) = 17 and
   * ceil(19 + 1.91) + 1 = 22, clamped to 20 */
  const kl_robust_summary r = kl_robust_summarise(v, 20, work);
  assert_true(r.mean == 10.5 && r.p50 == 10 && r.p95 == 19 && r.worst == 20);
  assert_true(r.p95_lo == 17 && r.p95_hi == 20);
  assert_true(kl_robust_quantile(J1, S, 0.5, work) == 0.3); /* the 3rd smallest of five */
  /* Wilson's interval of 8 in 10 at 95 %: (0.4902, 0.9433) (the textbook's table) */
  double p, lo, hi;
  kl_robust_wilson(8, 10, &p, &lo, &hi);
  assert_true(p == 0.8 && fabs(lo - 0.4902) < 1e-4 && fabs(hi - 0.9433) < 1e-4);
}

static void test_weights(void **state)
{
  (void)state;
  double w[S], work[2 * S];
  /* cvar 0.7: m = 1.5: 1/1.5 on the worst (s4, 0.5), 0.5/1.5 on the next (s1, 0.4), 0 elsewhere */
  const kl_robust_spec cv = {KL_ROBUST_CVAR, 0, 0.7, 0, 0, 0, 1};
  assert_true(fabs(kl_robust_stat(&cv, J1, S, w, work) - 0.7 / 1.5) < 1e-15);
  const double wc[S] = {0, 0.5 / 1.5, 0, 0, 1 / 1.5};
  for (int s = 0; s < S; ++s) assert_true(fabs(w[s] - wc[s]) < 1e-15);
  /* mean_std k = 2: 1/5 + 2 (v - 0.3) / (5 0.1414213562) = 0.2 + 2.828427125 (v - 0.3), clamped at 0 */
  const kl_robust_spec ms = {KL_ROBUST_MEAN_STD, 2.0, 0, 0, 0, 0, 1};
  kl_robust_stat(&ms, J1, S, w, work);
  const double wm[S] = {0, 0.2 + 0.2828427124746190, 0, 0.2, 0.2 + 0.5656854249492381};
  for (int s = 0; s < S; ++s) assert_true(fabs(w[s] - wm[s]) < 1e-14);
  /* worst: 1 on the largest; a tie goes to the first */
  const kl_robust_spec wo = {KL_ROBUST_WORST, 0, 0, 0, 0, 0, 1};
  const double tie[3] = {1.0, 1.0, 0.0};
  assert_true(kl_robust_stat(&wo, tie, 3, w, work) == 1.0 && w[0] == 1.0 && w[1] == 0.0 && w[2] == 0.0);
  /* mean: 1/S each */
  const kl_robust_spec me = {KL_ROBUST_MEAN, 0, 0, 0, 0, 0, 1};
  kl_robust_stat(&me, J1, S, w, work);
  for (int s = 0; s < S; ++s) assert_true(w[s] == 0.2);
}

/* the q-quantile is the ceil(q S)-th smallest: q S = 1.0000008 (a part in a million above a whole number, more than
 * the 1e-9 the rank allows for rounding) is the 2nd of two, q S = 1 + 2.2e-16 (a rounding) the 1st */
static void test_quantile_rank(void **state)
{
  (void)state;
  const double v[2] = {5.0, 3.0};
  double work[2];
  assert_true(kl_robust_quantile(v, 2, 0.5000004, work) == 5.0);
  assert_true(kl_robust_quantile(v, 2, 0.5, work) == 3.0);
  assert_true(kl_robust_quantile(v, 2, nextafter(0.5, 1.0), work) == 3.0);
  assert_true(kl_robust_quantile(v, 2, 0.4999996, work) == 3.0);
}

/* the standard deviation does not move with a common offset: 0.1, 0.2, 0.4 have mean 7/30, deviations -4/30, -1/30,
 * 5/30, squares summing 42/900, sd sqrt(42 / 2700) = sqrt(7 / 450); the same values 1e6 higher (a large term every
 * scenario shares) within the 1e-10 their representation allows, not the 3e-4 a sum of v^2 - m^2 loses */
static void test_sd_offset(void **state)
{
  (void)state;
  const double v[3] = {0.1, 0.2, 0.4}, w[3] = {1e6 + 0.1, 1e6 + 0.2, 1e6 + 0.4};
  assert_true(fabs(kl_robust_sd(v, 3) - sqrt(7.0 / 450.0)) < 1e-15);
  assert_true(fabs(kl_robust_sd(w, 3) - sqrt(7.0 / 450.0)) < 1e-9);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_mean_std), cmocka_unit_test(test_cvar_worst), cmocka_unit_test(test_chance),
    cmocka_unit_test(test_failed),   cmocka_unit_test(test_summary),   cmocka_unit_test(test_weights),
    cmocka_unit_test(test_quantile_rank), cmocka_unit_test(test_sd_offset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
