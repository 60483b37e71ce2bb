/* tests/shard_rollout_test.c: rollout batches shared by a group of ranks (host/rollout_batch.h, "Runs across
 * processes"; docs/design.md section 11), ranks as threads (tests/tshard.h). kl_rollout_eval, kl_rollout_tangent
 * and kl_rollout_eval_scenarios on 1, 2 and 3 ranks, each rank with its own handle: every rank's objective terms,
 * per-sample outputs and derivatives must be bit for bit those of the one-rank batch, for batches smaller than the
 * group (P = 1, 2) and larger; kl_rollout_count is the whole batch on every rank and kl_rollout_count_local the
 * rank's share, by hand (kl_shard_start's blocks, the larger first). host_below is decided on the whole batch (a
 * batch of 5 with host_below 4 runs on the device on every rank of 3, whose shares are 2, 2, 1). A stop asked on
 * rank 2 alone (kl_rollout_stop_flag) ends the next batch on every rank with KELVIN_ERR_STOPPED and "rank 2: ...".
 * On the OpenMP twin, and on OpenCL when there is a device with double precision (else that part is skipped).
 *
 * `shard_rollout_test --measure P S NS` (no cmocka) times a scenario batch of P candidates x S scenarios of NS samples
 * on the twin (one OpenMP thread per rank) on 1 and 2 ranks, and on 2 ranks the collectives it ends with (the
 * agreement and the gather of its KL_OBJ_N x P S objective terms) alone, repeated the same way: their share of the
 * batch's time.
 *
 * `shard_rollout_test --oclgrind` (silent on success; run it under Oclgrind with KELVIN_DEVICE=Oclgrind) runs the
 * three batches of 2 candidates x 2 scenarios on one handle as each rank of 3 in turn, with hooks that keep only the
 * rank's own columns (one thread: Oclgrind is not run from several threads), so that the kernels run at a global
 * offset up to `end` (rank 2's share of 2 candidates is empty), and checks each rank's columns against the whole
 * batch's bit for bit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/shard.h"
#include "host/host.h"
#include "host/rollout_batch.h"
#include "optimiser/problem.h"
#include "tests/tshard.h"

#define S 3   /* scenarios */
#define ND 2  /* tangent directions */
#define NR 3  /* most ranks */

static kl_host *cl[NR], *twin[NR]; /* cl[0] NULL without an OpenCL device */
static kl_problem *spline, *samples;
static int nsamples = 24; /* samples of the test problems (--measure sets it) */

/* the small plane problem of tests/scen_batch_test.c; spline: a spline basis (nlopt), else per-sample commands */
static kl_problem *problem(int sp)
{
  kl_settings s;
  kl_settings_default(&s);
  s.surface = KL_SURF_PLANE;
  s.bead_h = 0.0;
  s.tilt_deg = 0.0;
  s.rough_a = 0.0;
  s.shift[2] = 1.5e-4;
  s.extent[0] = 0.06;
  s.extent[1] = 0.02;
  s.resolution = 1e-3;
  s.path_x0 = -0.02;
  s.path_x1 = 0.02;
  s.ns = nsamples;
  s.method = sp ? KL_METHOD_NLOPT : KL_METHOD_LM;
  s.n_o = 9;
  s.n_v = 5;
  s.model = KL_MODEL_HC;
  s.law = KL_LAW_HUNT_CROSSLEY;
  s.cr = 0.5;
  s.approach_speed = 0.01;
  s.target_F = 6.0;
  s.tool_weight = 2.0;
  s.measure = KL_MEASURE_SENSOR;
  kl_problem *pb = NULL;
  char msg[1024];
  if (kl_problem_build(&s, NULL, &pb, msg, sizeof msg) != KELVIN_OK) fprintf(stderr, "shard_rollout_test: %s\n", msg);
  return pb;
}

/* nP candidates around the guess, each different (offsets shifted and waved) */
static double *candidates(const kl_problem *pb, int nP)
{
  const int nc = pb->nc, no = pb->basis ? pb->set.n_o : pb->ns;
  double *x = malloc((size_t)nc * sizeof *x), *ctrl = malloc((size_t)nc * nP * sizeof *ctrl);
  kl_problem_guess(pb, x);
  for (int p = 0; p < nP; ++p)
    for (int j = 0; j < nc; ++j)
      ctrl[(size_t)j * nP + p] = x[j] + (j < no ? 1e-5 * (p % 7 - 3) + 1e-5 * sin(6.283 * j / no + p) : 0.0);
  free(x);
  return ctrl;
}

/* scenario s: the holder's and the contact's stiffness and the protrusion changed by hand */
static void scenarios(const kl_problem *pb, double *gp, double *geo)
{
  const int ns = pb->ns;
  for (int s = 0; s < S; ++s) {
    double *g = gp + (size_t)s * KL_GP_N, *q = geo + (size_t)s * ns * KL_GG_N;
    memcpy(g, pb->gp, KL_GP_N * sizeof *g);
    memcpy(q, pb->geo, (size_t)ns * KL_GG_N * sizeof *q);
    g[KL_GP_KH] *= 1.0 + 0.3 * s;
    g[KL_GP_KC] *= 1.0 - 0.2 * s;
    for (int k = 0; k < ns; ++k) q[k * KL_GG_N + KL_GG_H] += 1e-5 * s;
  }
}

/* what one rank computed */
typedef struct out {
  const kl_problem *pb;
  kl_host *h;
  int P;
  long host_below;
  int stop_rank; /* this rank asks to stop before its batches if its rank is stop_rank (-1: none) */
  double *obj, *so, *tobj, *tso, *dS, *sobj, *sso;
  size_t count, local, count_host;
  kelvin_status st;
  char msg[1024];
} out;

static void alloc_out(out *o, const kl_problem *pb, kl_host *h, int P, long hb)
{
  memset(o, 0, sizeof *o);
  const size_t ns = (size_t)pb->ns, nP = (size_t)P, Q = nP * S;
  o->pb = pb, o->h = h, o->P = P, o->host_below = hb, o->stop_rank = -1;
  o->obj = malloc(KL_OBJ_N * nP * sizeof(double));
  o->so = malloc(KL_SO_N * ns * nP * sizeof(double));
  o->tobj = malloc(KL_OBJ_N * nP * sizeof(double));
  o->tso = malloc(KL_SO_N * ns * nP * sizeof(double));
  o->dS = malloc(ND * ns * nP * sizeof(double));
  o->sobj = malloc(KL_OBJ_N * Q * sizeof(double));
  o->sso = malloc(KL_SO_N * ns * Q * sizeof(double));
  /* NaN everywhere: a column nobody fills stays NaN, and NaN never compares equal bit for bit to a result */
  for (size_t i = 0; i < KL_OBJ_N * nP; ++i) o->obj[i] = o->tobj[i] = NAN;
  for (size_t i = 0; i < KL_SO_N * ns * nP; ++i) o->so[i] = o->tso[i] = NAN;
  for (size_t i = 0; i < ND * ns * nP; ++i) o->dS[i] = NAN;
  for (size_t i = 0; i < KL_OBJ_N * Q; ++i) o->sobj[i] = NAN;
  for (size_t i = 0; i < KL_SO_N * ns * Q; ++i) o->sso[i] = NAN;
}

static void free_out(out *o)
{
  free(o->obj), free(o->so), free(o->tobj), free(o->tso), free(o->dS), free(o->sobj), free(o->sso);
}

/* one rank: the three batches on its handle with its shard */
static void rank_main(const kelvin_shard *sh, void *arg)
{
  out *o = arg;
  const kl_problem *pb = o->pb;
  const int ns = pb->ns, P = o->P;
  kl_host_set_shard(o->h, sh);
  const kl_rollout_def def = {ns, pb->nc, pb->gp, pb->geo, pb->basis, o->host_below, NULL, NULL};
  kl_rollout *r = NULL;
  o->st = kl_rollout_create(o->h, &def, &r);
  double *ctrl = candidates(pb, P), *gp = malloc(S * KL_GP_N * sizeof *gp);
  double *geo = malloc((size_t)S * ns * KL_GG_N * sizeof *geo), *dir = malloc((size_t)ND * ns * P * sizeof *dir);
  scenarios(pb, gp, geo);
  for (int p = 0; p < P; ++p)
    for (int i = 0; i < ND; ++i)
      for (int k = 0; k < ns; ++k) dir[((size_t)p * ND + i) * ns + k] = (k % ND == i) ? 1.0 + 0.1 * p : 0.0;
  int stop = sh && sh->rank == o->stop_rank;
  if (r) kl_rollout_stop_flag(r, &stop);
  if (o->st == KELVIN_OK) o->st = kl_rollout_eval(r, (size_t)P, ctrl, o->obj, o->so);
  if (o->st == KELVIN_OK) o->st = kl_rollout_tangent(r, (size_t)P, ctrl, ND, dir, o->tobj, o->tso, o->dS);
  if (o->st == KELVIN_OK) o->st = kl_rollout_set_scenarios(r, S, gp, geo);
  if (o->st == KELVIN_OK) o->st = kl_rollout_eval_scenarios(r, (size_t)P, ctrl, o->sobj, o->sso);
  snprintf(o->msg, sizeof o->msg, "%s", kl_host_errmsg(o->h));
  if (r) {
    o->count = kl_rollout_count(r);
    o->local = kl_rollout_count_local(r);
    o->count_host = kl_rollout_count_host(r);
  }
  kl_rollout_destroy(r);
  kl_host_set_shard(o->h, NULL);
  free(ctrl), free(gp), free(geo), free(dir);
}

/* the batches on n ranks (handles hs[0..n-1]) into o[0..n-1] */
static void run_group(int n, kl_host **hs, const kl_problem *pb, int P, long hb, int stop_rank, out *o)
{
  void *arg[NR];
  for (int r = 0; r < n; ++r) {
    alloc_out(&o[r], pb, hs[r], P, hb);
    o[r].stop_rank = stop_rank;
    arg[r] = &o[r];
  }
  if (n == 1)
    rank_main(NULL, &o[0]);
  else
    assert_int_equal(tshard_run(n, rank_main, arg), 0);
}

#define SAME(a, b, n, what)                                                                                           \
  do {                                                                                                                \
    if (memcmp((a), (b), (n) * sizeof(double)) != 0) fail_msg("%s: not bit-identical to one rank", what);           \
  } while (0)

/* a rank's share of n items on a group of size ranks, by hand: blocks in rank order, the larger first */
static size_t share_of(size_t n, int size, int rank) { return n / size + ((size_t)rank < n % size ? 1 : 0); }

/* every P and group size on the handles hs: every rank equal to one rank bit for bit */
static void check_all(kl_host **hs, const char *name)
{
  static const int Ps[] = {1, 2, 5, 13};
  const kl_problem *pbs[2] = {spline, samples};
  for (int b = 0; b < 2; ++b)
    for (size_t i = 0; i < sizeof Ps / sizeof *Ps; ++i) {
      const kl_problem *pb = pbs[b];
      const int P = Ps[i];
      const size_t ns = (size_t)pb->ns, nP = (size_t)P, Q = nP * S;
      out one[1];
      run_group(1, hs, pb, P, 0, -1, one);
      assert_int_equal(one[0].st, KELVIN_OK);
      for (size_t k = 0; k < KL_OBJ_N * Q; ++k) assert_false(isnan(one[0].sobj[k]));
      for (int n = 2; n <= NR; ++n) {
        out o[NR];
        run_group(n, hs, pb, P, 0, -1, o);
        size_t sum = 0;
        for (int r = 0; r < n; ++r) {
          char what[160];
          snprintf(what, sizeof what, "%s, %s, P = %d, rank %d of %d", name, b ? "samples" : "spline", P, r, n);
          if (o[r].st != KELVIN_OK) fail_msg("%s: %s", what, o[r].msg);
          SAME(o[r].obj, one[0].obj, KL_OBJ_N * nP, what);
          SAME(o[r].so, one[0].so, KL_SO_N * ns * nP, what);
          SAME(o[r].tobj, one[0].tobj, KL_OBJ_N * nP, what);
          SAME(o[r].tso, one[0].tso, KL_SO_N * ns * nP, what);
          SAME(o[r].dS, one[0].dS, ND * ns * nP, what);
          SAME(o[r].sobj, one[0].sobj, KL_OBJ_N * Q, what);
          SAME(o[r].sso, one[0].sso, KL_SO_N * ns * Q, what);
          /* the whole batches: P + P + P S on every rank; the rank's own: its shares of P, P and P S */
          assert_int_equal(o[r].count, 2 * nP + Q);
          assert_int_equal(o[r].count, one[0].count);
          assert_int_equal(o[r].local, 2 * share_of(nP, n, r) + share_of(Q, n, r));
          sum += o[r].local;
        }
        assert_int_equal(sum, one[0].count);
        for (int r = 0; r < n; ++r) free_out(&o[r]);
      }
      free_out(&one[0]);
    }
}

static void test_twin(void **state)
{
  (void)state;
  check_all(twin, "twin");
}

static void test_opencl(void **state)
{
  (void)state;
  if (!cl[0]) {
    printf("# shard_rollout_test: no OpenCL device with double precision: skipped\n");
    skip();
  }
  check_all(cl, "OpenCL");
}

/* host_below on the whole batch: 5 >= 4 runs on the device on every rank of 3 (shares 2, 2, 1, each below 4), and
 * 3 < 4 on the host's twin on every rank; both as one rank does it, bit for bit, with the same host count */
static void test_host_below(void **state)
{
  (void)state;
  if (!cl[0]) skip();
  const int Ps[] = {5, 3};
  for (int i = 0; i < 2; ++i) {
    const int P = Ps[i];
    out one[1], o[NR];
    run_group(1, cl, spline, P, 4, -1, one);
    run_group(NR, cl, spline, P, 4, -1, o);
    assert_int_equal(one[0].st, KELVIN_OK);
    /* on the device (P = 5): none on the host; P = 3: the batch and the tangent batch on the host (3 + 3), the
     * scenario batch of 3 x 3 = 9 >= 4 on the device */
    assert_int_equal(one[0].count_host, P >= 4 ? 0 : 2 * (size_t)P);
    for (int r = 0; r < NR; ++r) {
      assert_int_equal(o[r].st, KELVIN_OK);
      assert_int_equal(o[r].count_host, one[0].count_host);
      SAME(o[r].obj, one[0].obj, KL_OBJ_N * (size_t)P, "host_below");
      SAME(o[r].sobj, one[0].sobj, KL_OBJ_N * (size_t)P * S, "host_below");
      free_out(&o[r]);
    }
    free_out(&one[0]);
  }
}

/* what sharding relies on: a rollout's results do not depend on where in a batch it runs. Candidates 0..4 in a batch
 * of 5 and in a batch of 13 (the same candidates, candidates() does not depend on the batch's size): bit for bit on
 * the twin (its GEMM sums each column alone, in the same order). On OpenCL the sharded batches above run each
 * rank's share of the whole batch at a global offset (all P columns expanded by one GEMM of P columns, as one
 * rank does), and are checked there; a GEMM of fewer columns may order CLBlast's sums differently, which is
 * printed, not asserted. */
static void positions(kl_host **hs, const char *name, int exact)
{
  const kl_problem *pbs[2] = {spline, samples};
  for (int b = 0; b < 2; ++b) {
    out a[1], c[1];
    run_group(1, hs, pbs[b], 5, 0, -1, a);
    run_group(1, hs, pbs[b], 13, 0, -1, c);
    int same = 1;
    for (int t = 0; t < KL_OBJ_N; ++t)
      same &= memcmp(a[0].obj + t * 5, c[0].obj + t * 13, 5 * sizeof(double)) == 0;
    printf("# %s, %s: candidates 0-4 in a batch of 5 and of 13 %s\n", name, b ? "samples" : "spline",
           same ? "bit-identical" : "differ");
    if (exact) assert_true(same);
    free_out(&a[0]), free_out(&c[0]);
  }
}

static void test_positions(void **state)
{
  (void)state;
  positions(twin, "twin", 1);
  if (cl[0]) positions(cl, "OpenCL", 0);
}

/* a stop asked on rank 2 alone: every rank's first batch ends with KELVIN_ERR_STOPPED and rank 2's message; the
 * test returning at all shows no rank was left in a collective */
static void test_stop(void **state)
{
  (void)state;
  out o[NR];
  run_group(NR, twin, spline, 5, 0, 2, o);
  for (int r = 0; r < NR; ++r) {
    assert_int_equal(o[r].st, KELVIN_ERR_STOPPED);
    assert_string_equal(o[r].msg, "rank 2: stopped by the caller");
    assert_int_equal(o[r].count, 0);
    free_out(&o[r]);
  }
}

/* --measure: each rank's batch time and the collectives' time, best of reps */
typedef struct meas {
  kl_host *h;
  int np, nsc, reps;
  double t_batch, t_coll, cpu_batch; /* wall s, wall s, the rank's thread's CPU s (of the best batch) */
} meas;

static double thread_cpu(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void measure_rank(const kelvin_shard *sh, void *arg)
{
  meas *m = arg;
  const kl_problem *pb = spline;
  const int ns = pb->ns;
  const size_t Q = (size_t)m->np * m->nsc;
  kl_host_set_shard(m->h, sh);
  const kl_rollout_def def = {ns, pb->nc, pb->gp, pb->geo, pb->basis, 0, NULL, NULL};
  kl_rollout *r = NULL;
  double *ctrl = candidates(pb, m->np), *gp = malloc((size_t)m->nsc * KL_GP_N * sizeof *gp);
  double *geo = malloc((size_t)m->nsc * ns * KL_GG_N * sizeof *geo), *obj = malloc(KL_OBJ_N * Q * sizeof *obj);
  for (int s = 0; s < m->nsc; ++s) { /* the test's three scenarios over and over */
    double g3[S * KL_GP_N], *q3 = malloc((size_t)S * ns * KL_GG_N * sizeof *q3);
    scenarios(pb, g3, q3);
    memcpy(gp + (size_t)s * KL_GP_N, g3 + (s % S) * KL_GP_N, KL_GP_N * sizeof *gp);
    memcpy(geo + (size_t)s * ns * KL_GG_N, q3 + (size_t)(s % S) * ns * KL_GG_N, (size_t)ns * KL_GG_N * sizeof *geo);
    free(q3);
  }
  m->t_batch = m->t_coll = 1e300;
  if (kl_rollout_create(m->h, &def, &r) == KELVIN_OK && kl_rollout_set_scenarios(r, m->nsc, gp, geo) == KELVIN_OK) {
    for (int k = 0; k < m->reps; ++k) {
      const double t0 = kl_now(), c0 = thread_cpu();
      if (kl_rollout_eval_scenarios(r, (size_t)m->np, ctrl, obj, NULL) != KELVIN_OK) break;
      if (kl_now() - t0 < m->t_batch) m->t_batch = kl_now() - t0, m->cpu_batch = thread_cpu() - c0;
    }
    char msg[256];
    for (int k = 0; k < m->reps; ++k) { /* what the batch's end does: agree, gather the objective terms */
      const double t0 = kl_now();
      kl_shard_agree(sh, KELVIN_OK, msg, sizeof msg);
      kl_shard_gather_cols(sh, obj, KL_OBJ_N, Q, sizeof *obj, -1, msg, sizeof msg);
      m->t_coll = fmin(m->t_coll, kl_now() - t0);
    }
  }
  kl_rollout_destroy(r);
  kl_host_set_shard(m->h, NULL);
  free(ctrl), free(gp), free(geo), free(obj);
}

static int measure_mode(int P, int nS, int ns)
{
  nsamples = ns;
  spline = problem(1);
  if (!spline || P < 1 || nS < 1) return 1;
  kl_host_opts o;
  kl_host_opts_default(&o);
  o.cpu = 1;
  o.threads = 1;
  meas m[2];
  for (int r = 0; r < 2; ++r) {
    m[r] = (meas){NULL, P, nS, 3, 0, 0, 0};
    if (kl_host_create(&m[r].h) != KELVIN_OK || kl_host_open(m[r].h, &o) != KELVIN_OK) return 1;
  }
  measure_rank(NULL, &m[0]);
  const double t1 = m[0].t_batch, m1cpu = m[0].cpu_batch;
  void *arg[2] = {&m[0], &m[1]};
  if (tshard_run(2, measure_rank, arg) != 0) return 1;
  const double t2 = fmax(m[0].t_batch, m[1].t_batch), tc = fmax(m[0].t_coll, m[1].t_coll);
  printf("scenario batch %d x %d, %d samples, twin, 1 OpenMP thread per rank (best of 3):\n", P, nS, ns);
  printf("  1 rank: %.4f s\n  2 ranks: %.4f s (rank 0 %.4f, rank 1 %.4f): speed-up %.2f, efficiency %.2f\n", t1, t2,
         m[0].t_batch, m[1].t_batch, t1 / t2, t1 / t2 / 2);
  printf("  CPU time of the batch (the rank's thread; one OpenMP thread runs on the caller's): 1 rank %.4f s, 2 ranks "
         "%.4f + %.4f s\n", m1cpu, m[0].cpu_batch, m[1].cpu_batch);
  printf("  the agreement and the gather of %d x %d objective terms (%.2f MB) alone: %.5f s, %.2f %% of the 2-rank "
         "batch\n", KL_OBJ_N, P * nS, KL_OBJ_N * (double)P * nS * 8 / 1e6, tc, 100 * tc / t2);
  for (int r = 0; r < 2; ++r) kl_host_destroy(m[r].h);
  kl_problem_free(spline);
  return 0;
}

/* --oclgrind: hooks of a rank that is alone (the others' columns are left as they were) */
typedef struct lone {
  int rank, size;
} lone;

static int lone_gather(void *ctx, const void *send, void *recv, const size_t *counts, int root)
{
  const lone *l = ctx;
  size_t off = 0;
  for (int r = 0; r < l->rank; ++r) off += counts[r];
  if (recv && (root < 0 || root == l->rank)) memcpy((char *)recv + off, send, counts[l->rank]);
  return 0;
}

static int lone_agree(void *ctx, int *code, char *msg, size_t cap)
{
  (void)ctx, (void)code, (void)msg, (void)cap;
  return 0;
}

/* columns [lo, hi) of rows x n tables a and b the same, bit for bit */
static int same_cols(const double *a, const double *b, size_t rows, size_t n, size_t lo, size_t hi)
{
  for (size_t t = 0; t < rows; ++t)
    if (hi > lo && memcmp(a + t * n + lo, b + t * n + lo, (hi - lo) * sizeof *a) != 0) return 0;
  return 1;
}

static int oclgrind_mode(void)
{
  kl_host_opts o;
  kl_host_opts_default(&o);
  nsamples = 12;
  samples = problem(0);
  kl_host *h = NULL;
  if (!samples || kl_host_create(&h) != KELVIN_OK || kl_host_open(h, &o) != KELVIN_OK || !kl_host_is_opencl(h)) {
    fprintf(stderr, "shard_rollout_test --oclgrind: no OpenCL device (%s)\n", h ? kl_host_errmsg(h) : "");
    return 1;
  }
  const int P = 2;
  const size_t ns = (size_t)samples->ns, Q = (size_t)P * S;
  out whole[1];
  run_group(1, &h, samples, P, 0, -1, whole);
  int rc = whole[0].st != KELVIN_OK;
  for (int r = 0; r < NR && !rc; ++r) {
    lone l = {r, NR};
    const kelvin_shard sh = {r, NR, r, NR, &l, lone_gather, lone_agree};
    out o1;
    alloc_out(&o1, samples, h, P, 0);
    kl_host_set_shard(h, &sh);
    rank_main(&sh, &o1);
    size_t lo, hi, qlo, qhi;
    kl_shard_range(&sh, (size_t)P, &lo, &hi);
    kl_shard_range(&sh, Q, &qlo, &qhi);
    rc = o1.st != KELVIN_OK || !same_cols(o1.obj, whole[0].obj, KL_OBJ_N, (size_t)P, lo, hi) ||
         !same_cols(o1.so, whole[0].so, KL_SO_N * ns, (size_t)P, lo, hi) ||
         !same_cols(o1.tobj, whole[0].tobj, KL_OBJ_N, (size_t)P, lo, hi) ||
         !same_cols(o1.dS, whole[0].dS, 1, (size_t)P * ND * ns, lo * ND * ns, hi * ND * ns) ||
         !same_cols(o1.sobj, whole[0].sobj, KL_OBJ_N, Q, qlo, qhi) || !same_cols(o1.sso, whole[0].sso, KL_SO_N * ns, Q, qlo, qhi);
    if (rc) fprintf(stderr, "shard_rollout_test --oclgrind: rank %d of %d differs from the whole batch (%s)\n", r, NR,
                    o1.msg);
    free_out(&o1);
  }
  if (whole[0].st != KELVIN_OK) fprintf(stderr, "shard_rollout_test --oclgrind: %s\n", whole[0].msg);
  free_out(&whole[0]);
  kl_host_destroy(h);
  kl_problem_free(samples);
  return rc;
}

int main(int argc, char **argv)
{
  if (argc == 2 && !strcmp(argv[1], "--oclgrind")) return oclgrind_mode();
  if (argc == 5 && !strcmp(argv[1], "--measure")) return measure_mode(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
  kl_host_opts o;
  kl_host_opts_default(&o);
  spline = problem(1);
  samples = problem(0);
  if (!spline || !samples) return 1;
  for (int r = 0; r < NR; ++r)
    if (kl_host_create(&cl[r]) != KELVIN_OK || kl_host_create(&twin[r]) != KELVIN_OK) return 1;
  for (int r = 0; r < NR; ++r) {
    const kelvin_status st = kl_host_open(cl[r], &o);
    if (st != KELVIN_OK || !kl_host_is_opencl(cl[r])) {
      if (r == 0) printf("# shard_rollout_test: no OpenCL device with double precision: the OpenCL cases are skipped\n");
      for (int q = 0; q < NR; ++q) kl_host_destroy(cl[q]), cl[q] = NULL;
      break;
    }
  }
  o.cpu = 1;
  o.threads = 1; /* ranks are threads already */
  for (int r = 0; r < NR; ++r)
    if (kl_host_open(twin[r], &o) != KELVIN_OK) return 1;
  if (cl[0]) printf("device: %s\n", kl_host_notice(cl[0]));
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_twin), cmocka_unit_test(test_opencl),
                                     cmocka_unit_test(test_host_below), cmocka_unit_test(test_stop),
                                     cmocka_unit_test(test_positions)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  for (int r = 0; r < NR; ++r) kl_host_destroy(cl[r]), kl_host_destroy(twin[r]);
  kl_problem_free(spline);
  kl_problem_free(samples);
  return rc;
}
