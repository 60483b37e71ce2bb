/* tests/impact_shard_staged_test.c: the copying path of an impact batch (kl_impact_run_staged: the path a
 * GPU takes, each chunk's scenarios grouped by model before the launch, host/impact_batch.c) on a sharded
 * handle (docs/design.md section 11), ranks as threads (tests/tshard.h). A share starts where the one
 * process's chunks do not, so the chunks, their grouping by model and the lane each scenario runs in all
 * differ from one process's; rank 0's results must still equal one process's bit for bit (each row is
 * kl_impact of its own inputs, kernels/impact.cl). A mixed batch (every model, law and rule, samples),
 * 1000-row chunks, 2 and 3 ranks. Skipped without an OpenCL device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "host/host.h"
#include "host/impact_batch.h"
#include "tests/tshard.h"

#define P 20011 /* not a multiple of the chunk nor of 2 or 3: every share starts inside a chunk */
#define M 3

static uint64_t rng = 0x13198A2E03707344u;
static uint64_t rnd64(void)
{
  uint64_t z = (rng += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}
static double unif(void) { return (double)(rnd64() >> 11) * 0x1.0p-53; }

static kl_impact_in scen[P]; /* drawn once, before any thread starts (rnd64 is not thread-safe) */

static kl_impact_batch *make(void)
{
  kl_impact_batch *b = NULL;
  if (kl_impact_batch_create(P, M, &b) != KELVIN_OK) abort();
  for (size_t p = 0; p < P; ++p) kl_impact_batch_set(b, p, scen[p]);
  return b;
}

static void draw(void)
{
  for (size_t p = 0; p < P; ++p) {
    kl_impact_in in;
    memset(&in, 0, sizeof in);
    const uint64_t r = rnd64() % 100;
    in.model = r == 0 ? KL_MODEL_GEN : (int)(r % 3);
    in.law = (int)(rnd64() % 5);
    in.rule = (int)(rnd64() % 2);
    in.m = 0.01 + unif();
    in.K = in.model == KL_MODEL_KV ? 1e6 * (1 + 100 * unif()) : 1e8 * (1 + 100 * unif());
    in.n = in.model == KL_MODEL_KV ? 1.0 : 1.5;
    in.cr = 0.05 + 0.95 * unif();
    in.v0 = 0.01 + 5 * unif();
    if (in.model == KL_MODEL_GEN) in.c = 1e4 * unif(), in.n2 = 1.0, in.rate_exp = 1.0;
    scen[p] = in;
  }
}

static kl_host *open_host(const kelvin_shard *sh)
{
  kl_host *h = NULL;
  if (kl_host_create(&h) != KELVIN_OK) abort();
  kl_host_set_shard(h, sh);
  kl_host_opts o;
  kl_host_opts_default(&o);
  o.chunk = 1000;
  if (kl_host_open(h, &o) != KELVIN_OK) {
    kl_host_destroy(h);
    return NULL;
  }
  return h;
}

typedef struct job {
  kl_impact_batch *b;
  kelvin_status st;
} job;

static void run(const kelvin_shard *sh, void *arg)
{
  job *j = arg;
  kl_host *h = open_host(sh);
  if (!h) abort();
  j->b = make();
  j->st = kl_impact_run_staged(h, j->b, NULL, NULL);
  kl_host_destroy(h);
}

static void staged_shards(void **state)
{
  (void)state;
  kl_host *h = open_host(NULL);
  if (!h || !kl_host_is_opencl(h)) {
    printf("impact_shard_staged_test: no OpenCL device: skipped\n");
    kl_host_destroy(h);
    skip();
  }
  kl_impact_batch *ref = make();
  assert_int_equal(kl_impact_run_staged(h, ref, NULL, NULL), KELVIN_OK);
  kl_host_destroy(h);
  for (int size = 2; size <= 3; ++size) {
    job jobs[3];
    void *args[3] = {&jobs[0], &jobs[1], &jobs[2]};
    assert_int_equal(tshard_run(size, run, args), 0);
    for (int r = 0; r < size; ++r) assert_int_equal(jobs[r].st, KELVIN_OK);
    assert_memory_equal(jobs[0].b->y, ref->y, (size_t)KL_NOUT * P * sizeof(double));
    assert_memory_equal(jobs[0].b->status, ref->status, P * sizeof(int));
    assert_memory_equal(jobs[0].b->smp, ref->smp, (size_t)KL_NSMP * M * P * sizeof(double));
    for (int r = 0; r < size; ++r) kl_impact_batch_destroy(jobs[r].b);
    printf("impact_shard_staged_test: %d ranks, 1000-row chunks grouped by model: rank 0 bit for bit\n", size);
  }
  kl_impact_batch_destroy(ref);
}

int main(void)
{
  draw();
  const struct CMUnitTest tests[] = {cmocka_unit_test(staged_shards)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
