/* tests/shard_test.c: the collectives of a sharded run (core/shard.h) on ranks that are threads
 * (tests/tshard.h): each rank's share worked out by hand, the agreement naming the lowest failing rank, and
 * a table's columns gathered in order, on every rank and on one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/shard.h"
#include "tests/tshard.h"

static void ranges(void **state)
{
  (void)state;
  /* 10 items over 3 ranks: 4, 3, 3 (the larger blocks first) */
  kelvin_shard sh = {0, 3, 0, 1, NULL, NULL, NULL};
  const size_t want[4] = {0, 4, 7, 10};
  for (int r = 0; r <= 3; ++r) assert_int_equal(kl_shard_start(&sh, 10, r), want[r]);
  size_t lo, hi;
  sh.rank = 1;
  kl_shard_range(&sh, 10, &lo, &hi);
  assert_int_equal(lo, 4);
  assert_int_equal(hi, 7);
  /* fewer items than ranks: 2 over 3 gives 1, 1, 0 */
  sh.rank = 2;
  kl_shard_range(&sh, 2, &lo, &hi);
  assert_int_equal(lo, 2);
  assert_int_equal(hi, 2);
  /* no shard, or a group of one: everything */
  kl_shard_range(NULL, 10, &lo, &hi);
  assert_int_equal(lo, 0);
  assert_int_equal(hi, 10);
  kelvin_shard one = {0, 1, 0, 1, NULL, NULL, NULL};
  kl_shard_range(&one, 10, &lo, &hi);
  assert_int_equal(hi, 10);
}

typedef struct agree_arg {
  kelvin_status mine, got;
  char msg[64];
} agree_arg;

static void agree_rank(const kelvin_shard *sh, void *p)
{
  agree_arg *a = p;
  snprintf(a->msg, sizeof a->msg, "trouble on %d", sh->rank);
  a->got = kl_shard_agree(sh, a->mine, a->msg, sizeof a->msg);
}

static void agreement(void **state)
{
  (void)state;
  /* ranks 1 and 2 fail with different statuses: every rank gets rank 1's */
  agree_arg a[3] = {{KELVIN_OK, 0, ""}, {KELVIN_ERR_STOPPED, 0, ""}, {KELVIN_ERR_IO, 0, ""}};
  void *arg[3] = {&a[0], &a[1], &a[2]};
  assert_int_equal(tshard_run(3, agree_rank, arg), 0);
  for (int r = 0; r < 3; ++r) {
    assert_int_equal(a[r].got, KELVIN_ERR_STOPPED);
    assert_string_equal(a[r].msg, "rank 1: trouble on 1");
  }
  /* nobody fails: KELVIN_OK, messages untouched */
  agree_arg b[2] = {{KELVIN_OK, -1, ""}, {KELVIN_OK, -1, ""}};
  void *brg[2] = {&b[0], &b[1]};
  assert_int_equal(tshard_run(2, agree_rank, brg), 0);
  for (int r = 0; r < 2; ++r) {
    assert_int_equal(b[r].got, KELVIN_OK);
    char want[64];
    snprintf(want, sizeof want, "trouble on %d", r);
    assert_string_equal(b[r].msg, want);
  }
}

enum { ROWS = 3, N = 11 };

typedef struct gather_arg {
  int root;
  double t[ROWS * N];
  kelvin_status st;
} gather_arg;

static void gather_rank(const kelvin_shard *sh, void *p)
{
  gather_arg *a = p;
  for (int i = 0; i < ROWS * N; ++i) a->t[i] = -1;
  size_t lo, hi;
  kl_shard_range(sh, N, &lo, &hi);
  for (size_t k = lo; k < hi; ++k)
    for (int r = 0; r < ROWS; ++r) a->t[r * N + (int)k] = 100.0 * r + (double)k;
  char msg[128] = "";
  a->st = kl_shard_gather_cols(sh, a->t, ROWS, N, sizeof(double), a->root, msg, sizeof msg);
}

static void gather_columns(void **state)
{
  (void)state;
  for (int root = -1; root < 3; ++root) {
    gather_arg a[3];
    void *arg[3];
    for (int r = 0; r < 3; ++r) a[r].root = root, arg[r] = &a[r];
    assert_int_equal(tshard_run(3, gather_rank, arg), 0);
    for (int r = 0; r < 3; ++r) {
      assert_int_equal(a[r].st, KELVIN_OK);
      if (root >= 0 && r != root) continue; /* only root receives */
      for (int t = 0; t < ROWS; ++t)
        for (int k = 0; k < N; ++k) assert_true(a[r].t[t * N + k] == 100.0 * t + k);
    }
    /* a rank that does not receive keeps its own columns only */
    if (root == 0) assert_true(a[1].t[0] == -1 && a[1].t[4] == 4);
  }
}

/* rows of 40000 doubles (320 KB: gathered row by row, in place) */
enum { BROWS = 2, BN = 40000 };

typedef struct big_arg {
  int root;
  double *t;
  kelvin_status st;
} big_arg;

static void big_rank(const kelvin_shard *sh, void *p)
{
  big_arg *a = p;
  for (int i = 0; i < BROWS * BN; ++i) a->t[i] = -1;
  size_t lo, hi;
  kl_shard_range(sh, BN, &lo, &hi);
  for (size_t k = lo; k < hi; ++k)
    for (int r = 0; r < BROWS; ++r) a->t[r * BN + (int)k] = 1e6 * r + (double)k;
  char msg[128] = "";
  a->st = kl_shard_gather_cols(sh, a->t, BROWS, BN, sizeof(double), a->root, msg, sizeof msg);
}

static void gather_long_rows(void **state)
{
  (void)state;
  for (int root = -1; root < 3; root += 2) { /* to all, and to rank 1 */
    big_arg a[3];
    void *arg[3];
    for (int r = 0; r < 3; ++r) {
      a[r].root = root, arg[r] = &a[r];
      a[r].t = malloc(sizeof(double) * BROWS * BN);
      assert_non_null(a[r].t);
    }
    assert_int_equal(tshard_run(3, big_rank, arg), 0);
    for (int r = 0; r < 3; ++r) {
      assert_int_equal(a[r].st, KELVIN_OK);
      if (root < 0 || r == root)
        for (int t = 0; t < BROWS; ++t)
          for (int k = 0; k < BN; ++k)
            if (a[r].t[t * BN + k] != 1e6 * t + k)
              fail_msg("root %d, rank %d: t[%d][%d] = %g", root, r, t, k, a[r].t[t * BN + k]);
      free(a[r].t);
    }
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(ranges), cmocka_unit_test(agreement),
                                     cmocka_unit_test(gather_columns), cmocka_unit_test(gather_long_rows)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
