/* tests/impact_shard_test.c: an impact batch shared by a group of ranks (docs/design.md section 11;
 * kelvin_impact_batch_run with a shard on the device, kelvin/batch.h), the ranks being threads of this
 * process (tests/tshard.h), so that no MPI is needed. A mixed batch (every model, law and rule, invalid
 * rows, 4 samples each) on 1, 2 and 3 ranks, on the OpenMP twin and on the OpenCL device (skipped with a
 * message without one):
 * - rank 0's results equal those of the same batch run by one process without a shard, bit for bit;
 * - every other rank computed its own share only (kl_shard_start's blocks, recomputed here by hand: sizes
 *   differing by at most one, the larger first): its share equals the reference, every other row still
 *   holds the zeros of a new batch (every reference row has a nonzero flag or a nonzero dmax, so a
 *   computed row cannot pass for an untouched one);
 * - a progress callback that stops on rank 1 only fails every rank with KELVIN_ERR_STOPPED and the
 *   message "rank 1: ...", and nobody waits forever. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <kelvin/batch.h>
#include <kelvin/shard.h>

#include "tests/tshard.h"

#define NSCEN 20000
#define NSMP 4
#define NV (8 + 3 * NSMP) /* doubles per row of a result: 7 metrics, the flags, the samples */

static kelvin_impact_in scen[NSCEN];

static uint64_t rng = 0x243F6A8885A308D3u;
static uint64_t rnd64(void)
{
  uint64_t z = (rng += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}
static double unif(void) { return (double)(rnd64() >> 11) * 0x1.0p-53; }

/* Every model, law and rule; the general law (by a step, ~1000x a closed form) on ~1 % of the rows; ~2 %
 * invalid (a negative mass). */
static void make_scenarios(void)
{
  for (int p = 0; p < NSCEN; ++p) {
    kelvin_impact_in *in = &scen[p];
    memset(in, 0, sizeof *in);
    const uint64_t r = rnd64() % 100;
    in->model = r == 0 ? KELVIN_MODEL_GEN : (kelvin_model)(r % 3);
    in->law = (kelvin_law)(rnd64() % 5);
    in->rule = (kelvin_rule)(rnd64() % 2);
    in->m = 0.01 + unif();
    in->K = in->model == KELVIN_MODEL_KV ? 1e6 * (1 + 100 * unif()) : 1e8 * (1 + 100 * unif());
    in->n = in->model == KELVIN_MODEL_KV ? 1.0 : 1.5;
    in->cr = 0.05 + 0.95 * unif();
    in->v0 = 0.01 + 5 * unif();
    in->fe = 0;
    if (in->model == KELVIN_MODEL_GEN) {
      in->c = 1e4 * unif();
      in->n2 = 1.0;
      in->rate_exp = 1.0;
    }
    if (rnd64() % 50 == 0) in->m = -1;
  }
}

/* Row p of b into v (NV doubles). */
static void row(const kelvin_impact_batch *b, size_t p, double *v)
{
  kelvin_impact_out o;
  if (kelvin_impact_batch_get(b, p, &o) != KELVIN_OK) abort();
  const double m[8] = {o.dmax, o.tmax, o.fpeak, o.tc, o.cr_eff, o.ediss, o.damp, (double)o.flags};
  memcpy(v, m, sizeof m);
  for (int j = 0; j < NSMP; ++j)
    if (kelvin_impact_batch_sample(b, p, j, &v[8 + 3 * j], &v[9 + 3 * j], &v[10 + 3 * j]) != KELVIN_OK) abort();
}

static kelvin_impact_batch *new_batch(void)
{
  kelvin_impact_batch *b = NULL;
  if (kelvin_impact_batch_create(NSCEN, NSMP, &b) != KELVIN_OK) abort();
  for (size_t p = 0; p < NSCEN; ++p)
    if (kelvin_impact_batch_set(b, p, &scen[p]) != KELVIN_OK) abort();
  return b;
}

/* One rank's run (or the reference's, sh = NULL). On a thread of tshard_run: cmocka's assertions (longjmp)
 * belong to the main thread, so trouble here aborts, and the checks come after the group is done. */
typedef struct job {
  int cpu;           /* KELVIN_DEVICE_CPU, or 0 for the default (OpenCL) device */
  int stop_rank;     /* the rank whose progress callback stops (-1: none) */
  kelvin_status st;  /* of kelvin_impact_batch_run */
  char msg[512];
  size_t done;
  double *v;         /* NSCEN x NV results */
  int rank, size;
  int opencl;        /* the device opened was an OpenCL device */
} job;

static int stop_progress(void *ctx, double fraction, const char *text)
{
  (void)fraction, (void)text;
  const job *j = ctx;
  return j->rank == j->stop_rank;
}

static void run_job(const kelvin_shard *sh, void *arg)
{
  job *j = arg;
  kelvin_device *dev = NULL;
  if (kelvin_device_create(&dev) != KELVIN_OK) abort();
  if (sh && kelvin_device_set_shard(dev, sh) != KELVIN_OK) abort();
  kelvin_status st = kelvin_device_open(dev, NULL, j->cpu);
  char msg[512];
  snprintf(msg, sizeof msg, "%s", kelvin_device_errmsg(dev));
  if (kelvin_shard_agree(sh, st, msg, sizeof msg) != KELVIN_OK) abort();
  j->opencl = strstr(kelvin_device_describe(dev), "OpenMP") == NULL;
  kelvin_device_shard(dev, &j->rank, &j->size);
  kelvin_impact_batch *b = new_batch();
  if (j->stop_rank >= 0) kelvin_impact_batch_set_progress(b, stop_progress, j);
  j->st = kelvin_impact_batch_run(b, dev);
  snprintf(j->msg, sizeof j->msg, "%s", kelvin_impact_batch_errmsg(b));
  j->done = kelvin_impact_batch_done(b);
  j->v = malloc((size_t)NSCEN * NV * sizeof(double));
  if (!j->v) abort();
  for (size_t p = 0; p < NSCEN; ++p) row(b, p, j->v + p * NV);
  kelvin_impact_batch_free(b);
  kelvin_device_free(dev);
}

/* Start of rank r's share of n rows among size ranks, by hand: blocks differing by at most one row, the
 * larger first. */
static size_t share_start(size_t n, int size, int r)
{
  size_t s = 0;
  for (int k = 0; k < r; ++k) s += n / (size_t)size + ((size_t)k < n % (size_t)size);
  return s;
}

static void check_group(int cpu)
{
  job ref = {.cpu = cpu, .stop_rank = -1};
  run_job(NULL, &ref);
  assert_int_equal(ref.st, KELVIN_OK);
  if (!cpu && !ref.opencl) {
    printf("impact_shard_test: no OpenCL device: the OpenCL case is skipped\n");
    free(ref.v);
    return;
  }
  for (size_t p = 0; p < NSCEN; ++p) assert_true(ref.v[p * NV] != 0.0 || ref.v[p * NV + 7] != 0.0);
  for (int size = 1; size <= 3; ++size) {
    job jobs[3];
    void *args[3];
    for (int r = 0; r < size; ++r) {
      jobs[r] = (job){.cpu = cpu, .stop_rank = -1};
      args[r] = &jobs[r];
    }
    assert_int_equal(tshard_run(size, run_job, args), 0);
    for (int r = 0; r < size; ++r) {
      const job *j = &jobs[r];
      assert_int_equal(j->st, KELVIN_OK);
      assert_int_equal(j->rank, size > 1 ? r : 0);
      const size_t lo = share_start(NSCEN, size, r), hi = share_start(NSCEN, size, r + 1);
      if (r == 0) { /* every row, as one process */
        assert_int_equal(j->done, NSCEN);
        assert_memory_equal(j->v, ref.v, (size_t)NSCEN * NV * sizeof(double));
        continue;
      }
      assert_int_equal(j->done, hi - lo);
      assert_memory_equal(j->v + lo * NV, ref.v + lo * NV, (hi - lo) * NV * sizeof(double));
      for (size_t p = 0; p < NSCEN; ++p)
        if (p < lo || p >= hi)
          for (int k = 0; k < NV; ++k) assert_true(j->v[p * NV + k] == 0.0);
    }
    for (int r = 0; r < size; ++r) free(jobs[r].v);
    printf("impact_shard_test: %s, %d rank%s: rank 0 equals one process bit for bit, each rank its own share\n",
           cpu ? "OpenMP twin" : "OpenCL", size, size > 1 ? "s" : "");
  }
  free(ref.v);
}

static void group_twin(void **state)
{
  (void)state;
  check_group(KELVIN_DEVICE_CPU);
}

static void group_opencl(void **state)
{
  (void)state;
  check_group(0);
}

/* A stop on rank 1 only: every rank fails with rank 1's message; rank 0 finished its share and waited. */
static void stop_on_rank1(void **state)
{
  (void)state;
  for (int size = 2; size <= 3; ++size) {
    job jobs[3];
    void *args[3];
    for (int r = 0; r < size; ++r) {
      jobs[r] = (job){.cpu = KELVIN_DEVICE_CPU, .stop_rank = 1};
      args[r] = &jobs[r];
    }
    assert_int_equal(tshard_run(size, run_job, args), 0);
    for (int r = 0; r < size; ++r) {
      assert_int_equal(jobs[r].st, KELVIN_ERR_STOPPED);
      assert_true(strncmp(jobs[r].msg, "rank 1: stopped by the progress callback", 40) == 0);
      free(jobs[r].v);
    }
  }
}

/* The same stop on the OpenCL device (skipped with a message without one), and on both paths the numbers of the
 * message: rank 1 counts the rows of its own share, computed here by hand (share_start), done out of all of them
 * (more than none, at most all). */
static void stop_on_rank1_counts(void **state)
{
  (void)state;
  for (int cpu = 0; cpu <= 1; ++cpu)
    for (int size = 2; size <= 3; ++size) {
      job jobs[3];
      void *args[3];
      for (int r = 0; r < size; ++r) {
        jobs[r] = (job){.cpu = cpu ? KELVIN_DEVICE_CPU : 0, .stop_rank = 1};
        args[r] = &jobs[r];
      }
      assert_int_equal(tshard_run(size, run_job, args), 0);
      if (!cpu && !jobs[0].opencl) {
        printf("impact_shard_test: no OpenCL device: the OpenCL stop is skipped\n");
        for (int r = 0; r < size; ++r) free(jobs[r].v);
        break;
      }
      const size_t share = share_start(NSCEN, size, 2) - share_start(NSCEN, size, 1);
      for (int r = 0; r < size; ++r) {
        assert_int_equal(jobs[r].st, KELVIN_ERR_STOPPED);
        size_t done = 0, of = 0;
        assert_int_equal(sscanf(jobs[r].msg, "rank 1: stopped by the progress callback after %zu of %zu scenarios",
                                &done, &of),
                         2);
        assert_int_equal(of, share);
        assert_true(done > 0 && done <= share);
        free(jobs[r].v);
      }
    }
}

/* Fewer rows than ranks: one scenario on 3 ranks of the twin, ranks 1 and 2 with empty shares. The progress
 * callback still comes once on each of them, and says what was done by hand: none of none. */
typedef struct empty_job {
  int calls;
  double fraction;
  char text[128];
  kelvin_status st;
} empty_job;

static int record_progress(void *ctx, double fraction, const char *text)
{
  empty_job *e = ctx;
  e->calls++;
  e->fraction = fraction;
  snprintf(e->text, sizeof e->text, "%s", text);
  return 0;
}

static void run_empty(const kelvin_shard *sh, void *arg)
{
  empty_job *e = arg;
  kelvin_device *dev = NULL;
  if (kelvin_device_create(&dev) != KELVIN_OK || kelvin_device_set_shard(dev, sh) != KELVIN_OK ||
      kelvin_device_open(dev, NULL, KELVIN_DEVICE_CPU) != KELVIN_OK)
    abort();
  kelvin_impact_batch *b = NULL;
  if (kelvin_impact_batch_create(1, NSMP, &b) != KELVIN_OK || kelvin_impact_batch_set(b, 0, &scen[0]) != KELVIN_OK)
    abort();
  kelvin_impact_batch_set_progress(b, record_progress, e);
  e->st = kelvin_impact_batch_run(b, dev);
  kelvin_impact_batch_free(b);
  kelvin_device_free(dev);
}

static void empty_shares(void **state)
{
  (void)state;
  empty_job e[3];
  void *args[3];
  for (int r = 0; r < 3; ++r) {
    e[r] = (empty_job){0};
    args[r] = &e[r];
  }
  assert_int_equal(tshard_run(3, run_empty, args), 0);
  for (int r = 0; r < 3; ++r) {
    assert_int_equal(e[r].st, KELVIN_OK);
    assert_true(e[r].calls >= 1);
    assert_true(e[r].fraction == 1.0);
    assert_string_equal(e[r].text, r == 0 ? "impact batch: 1 of 1 scenarios" : "impact batch: 0 of 0 scenarios");
  }
}

int main(void)
{
  make_scenarios();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(group_twin),
    cmocka_unit_test(group_opencl),
    cmocka_unit_test(stop_on_rank1),
    cmocka_unit_test(stop_on_rank1_counts),
    cmocka_unit_test(empty_shares),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
