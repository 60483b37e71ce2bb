/* tests/shard_check_test.c: the out-of-sample check (kelvin_grind_check) shared over ranks (docs/design.md section
 * 11), ranks as threads (tests/tshard.h): examples/optimise_robust.yaml's naive pass checked on 7 fresh scenarios,
 * on the device and in the 3-D engine, by 1, 2 and 3 ranks on the OpenMP twin. Every rank's values and forces must
 * equal the one-rank run's bit for bit (each rank ran only its share of the 3-D runs: the others' came through the
 * gather), and a stop asked on one rank only must end every rank with that rank's message. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <kelvin/batch.h>
#include <kelvin/grind.h>
#include <kelvin/robust.h>
#include <kelvin/shard.h>

#include "tests/tshard.h"

enum { S = 7, NSRC = 2, NM = 5 };

typedef struct rank_out {
  kelvin_status st;
  char msg[512];
  int ns, failed, local, stop_on; /* stop_on: the rank whose progress callback asks to stop (-1: none) */
  const char *stop_at;             /* ... at the first line that contains this */
  int rank;
  double *val;             /* NSRC x NM x S */
  double *F;               /* NSRC x S x ns */
} rank_out;

static int stop_cb(void *ctx, double fraction, const char *text)
{
  (void)fraction;
  const rank_out *o = ctx;
  return o->rank == o->stop_on && strstr(text, o->stop_at) != NULL;
}

static void one_rank(const kelvin_shard *sh, void *arg)
{
  rank_out *o = arg;
  o->rank = sh ? sh->rank : 0;
  kelvin_grind *g = NULL;
  kelvin_device *dev = NULL;
  double *x = NULL, *off = NULL, *spd = NULL;
  o->st = kelvin_grind_create(&g);
  if (o->st == KELVIN_OK) o->st = kelvin_grind_load(g, KELVIN_SOURCE_DIR "/examples/optimise_robust.yaml");
  if (o->st == KELVIN_OK) o->st = kelvin_grind_prepare(g);
  if (o->st != KELVIN_OK) {
    snprintf(o->msg, sizeof o->msg, "%s", kelvin_grind_errmsg(g));
    goto done;
  }
  const int ns = kelvin_grind_nsamples(g), nc = kelvin_grind_ncontrol(g);
  o->ns = ns;
  x = malloc((size_t)nc * sizeof *x), off = malloc((size_t)ns * sizeof *off), spd = malloc((size_t)ns * sizeof *spd);
  o->val = malloc((size_t)NSRC * NM * S * sizeof *o->val);
  o->F = malloc((size_t)NSRC * S * ns * sizeof *o->F);
  if (!x || !off || !spd || !o->val || !o->F) {
    o->st = KELVIN_ERR_NOMEM;
    goto done;
  }
  kelvin_grind_control(g, x, NULL, NULL, NULL);
  kelvin_grind_expand(g, x, off, spd);
  if ((o->st = kelvin_device_create(&dev)) != KELVIN_OK) goto done;
  if (sh && (o->st = kelvin_device_set_shard(dev, sh)) != KELVIN_OK) goto done;
  if ((o->st = kelvin_device_open(dev, NULL, KELVIN_DEVICE_CPU)) != KELVIN_OK) goto done;
  o->st = kelvin_grind_evaluate(g, dev, off, spd);
  if (o->stop_on >= 0) kelvin_grind_set_progress(g, stop_cb, o); /* the check's own progress */
  if (o->st == KELVIN_OK) o->st = kelvin_grind_check(g, dev, S, 1);
  if (o->st != KELVIN_OK) {
    snprintf(o->msg, sizeof o->msg, "%s", kelvin_grind_errmsg(g));
    goto done;
  }
  o->failed = kelvin_grind_check_failed(g, NULL);
  o->local = kelvin_grind_check_local(g);
  /* what the check cost: both parts timed, nothing for a source that does not exist */
  if (!(kelvin_grind_check_seconds(g, 0) > 0 && kelvin_grind_check_seconds(g, 1) > 0 &&
        kelvin_grind_check_seconds(g, 2) == 0)) {
    o->st = KELVIN_ERR_ARG;
    snprintf(o->msg, sizeof o->msg, "check seconds %g %g", kelvin_grind_check_seconds(g, 0),
             kelvin_grind_check_seconds(g, 1));
    goto done;
  }
  int passes[KELVIN_CHECK_MAXPASS];
  if (kelvin_grind_check_passes(g, passes) != 1 || kelvin_grind_check_scenarios(g) != S) {
    o->st = KELVIN_ERR_ARG;
    snprintf(o->msg, sizeof o->msg, "the check covers %d passes, %d scenarios", kelvin_grind_check_passes(g, NULL),
             kelvin_grind_check_scenarios(g));
    goto done;
  }
  for (int src = 0; src < NSRC && o->st == KELVIN_OK; ++src) {
    for (int m = 0; m < NM && o->st == KELVIN_OK; ++m)
      o->st = kelvin_grind_check_values(g, passes[0], src, (kelvin_check_metric)m,
                                        o->val + ((size_t)src * NM + (size_t)m) * S);
    if (o->st == KELVIN_OK) o->st = kelvin_grind_check_force(g, passes[0], src, o->F + (size_t)src * S * ns);
  }
done:
  free(x), free(off), free(spd);
  kelvin_device_free(dev);
  kelvin_grind_free(g);
}

static void free_out(rank_out *o)
{
  free(o->val);
  free(o->F);
}

/* 1 if a and b hold the same bits (NaN included) */
static int same(const double *a, const double *b, size_t n) { return memcmp(a, b, n * sizeof *a) == 0; }

static void identical_for_any_ranks(void **state)
{
  (void)state;
  rank_out ref = {.stop_on = -1};
  one_rank(NULL, &ref);
  assert_int_equal(ref.st, KELVIN_OK);
  assert_int_equal(ref.local, S);
  /* the reference is a real check: 3-D values present and different from the device's */
  assert_true(isfinite(ref.val[NM * S]) && ref.val[NM * S] != ref.val[0]);
  for (int p = 2; p <= 3; ++p) {
    rank_out o[3] = {{.stop_on = -1}, {.stop_on = -1}, {.stop_on = -1}};
    void *arg[3] = {&o[0], &o[1], &o[2]};
    assert_int_equal(tshard_run(p, one_rank, arg), 0);
    for (int r = 0; r < p; ++r) {
      if (o[r].st != KELVIN_OK) fail_msg("%d ranks, rank %d: %s", p, r, o[r].msg);
      assert_int_equal(o[r].failed, ref.failed);
      /* its share of the 7 scenarios, by hand: 4 + 3 on two ranks, 3 + 2 + 2 on three */
      const int share[2][3] = {{4, 3, 0}, {3, 2, 2}};
      assert_int_equal(o[r].local, share[p - 2][r]);
      for (size_t i = 0; i < (size_t)NSRC * NM * S; ++i)
        if (!same(o[r].val + i, ref.val + i, 1))
          fail_msg("%d ranks, rank %d: check value %zu (source %zu, metric %zu, scenario %zu) %.17g, one rank %.17g", p,
                   r, i, i / (NM * S), i / S % NM, i % S, o[r].val[i], ref.val[i]);
      if (!same(o[r].F, ref.F, (size_t)NSRC * S * ref.ns)) fail_msg("%d ranks, rank %d: check forces differ", p, r);
      free_out(&o[r]);
    }
  }
  free_out(&ref);
}

static void stop_on_one_rank(void **state)
{
  (void)state;
  /* at the check's first line (before the device's rollouts) and at its second (before the 3-D runs) */
  const char *at[2] = {"fresh scenarios", "in the 3-D engine"};
  for (int i = 0; i < 2; ++i) {
    rank_out o[3] = {{.stop_on = 2, .stop_at = at[i]}, {.stop_on = 2, .stop_at = at[i]}, {.stop_on = 2, .stop_at = at[i]}};
    void *arg[3] = {&o[0], &o[1], &o[2]};
    assert_int_equal(tshard_run(3, one_rank, arg), 0);
    for (int r = 0; r < 3; ++r) {
      assert_int_equal(o[r].st, KELVIN_ERR_STOPPED);
      if (strncmp(o[r].msg, "rank 2: ", 8) != 0) fail_msg("stop at '%s': rank %d's message '%s'", at[i], r, o[r].msg);
      free_out(&o[r]);
    }
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(identical_for_any_ranks), cmocka_unit_test(stop_on_one_rank)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
