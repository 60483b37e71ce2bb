/* tests/shard_opt_test.c: the optimiser run by a group of ranks (docs/design.md section 11: a replicated
 * optimiser over sharded rollout batches), ranks as threads (tests/tshard.h), each rank with its own handle and
 * the shard on it. The same optimisation on 1, 2 and 3 ranks, on the OpenMP twin and on OpenCL (skipped without a
 * device): NLopt with screening and a 3-D verification, Levenberg-Marquardt with the tangent-linear Jacobian (a
 * tangent batch of one candidate, smaller than the group), and a robust Levenberg-Marquardt over 16 scenarios (one
 * candidate x 16 scenarios split by rollout). Every rank's result must be bit for bit the one-rank run's: every
 * pass's control points, objective terms, robust objective and verified terms, the rollout counts, the best pass;
 * each rank's own rollouts (local_rollouts) sum to the one rank's. A stop asked by rank 2's progress callback alone
 * (in the refinement: acted on at the next batch; in the 3-D verification: at the agreement after it) ends all three
 * ranks with KELVIN_ERR_STOPPED and "rank 2: ..."; that the test finishes at all shows no rank was left in a
 * collective (a hang fails on ctest's timeout). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "host/host.h"
#include "optimiser/pipeline.h"
#include "optimiser/plan.h"
#include "optimiser/problem.h"
#include "optimiser/scenario.h"
#include "tests/tshard.h"

#define NR 3
#define NS 16 /* scenarios of the robust case */
#define D 2e-6

static kl_host *cl[NR], *twin[NR];

enum { NLOPT, LM, ROBUST };

/* the flat part of tests/robust_pipeline_test.c; maxtime > 0: optimiser.maxtime, and no screening or verification */
static kl_problem *problem_t(int kind, double maxtime)
{
  kl_settings s;
  kl_settings_default(&s);
  s.surface = KL_SURF_PLANE;
  s.bead_h = 0, s.step_h = 0, s.tilt_deg = 0, s.rough_a = 0;
  s.path_x0 = -0.005, s.path_x1 = 0.005, s.ns = 41;
  s.extent[0] = 0.04, s.extent[1] = 0.02, s.resolution = 2e-4;
  s.tool_R = 0.01, s.tool_E = 200e6, s.tool_nu = 0.3, s.tool_mass = 3.0, s.tool_weight = 5.0;
  s.holder_K = 5e5, s.holder_D = 245, s.cr = 0.3, s.target_F = 8.0, s.max_F = 16.0;
  s.v_min = 0.001, s.v_max = 0.002, s.v_init = 0.0015;
  s.method = kind == NLOPT ? KL_METHOD_NLOPT : KL_METHOD_LM;
  s.verify = kind == NLOPT ? 1 : 0;
  s.n_o = 6, s.n_v = 4, s.screening = kind == NLOPT ? 40 : 0, s.keep = 2, s.maxeval = kind == NLOPT ? 60 : 12;
  s.jacobian = kind == LM ? KL_JACOBIAN_TANGENT : KL_JACOBIAN_DIFFERENCES;
  snprintf(s.algorithm, sizeof s.algorithm, "LN_BOBYQA");
  snprintf(s.correct, sizeof s.correct, "off");
  if (maxtime > 0) s.maxtime = maxtime, s.screening = 0, s.verify = 0;
  kl_problem *pb = NULL;
  char msg[1024];
  if (kl_problem_build(&s, NULL, &pb, msg, sizeof msg) != KELVIN_OK) fprintf(stderr, "shard_opt_test: %s\n", msg);
  return pb;
}

static kl_problem *problem(int kind) { return problem_t(kind, 0.0); }

/* NS scenarios: scenario s its part 2 D s / (NS - 1) prouder (tests/robust_pipeline_test.c) */
static void scenarios(const kl_problem *pb, double *gp, double *geo)
{
  const size_t ng = (size_t)pb->ns * KL_GG_N;
  for (int s = 0; s < NS; ++s) {
    memcpy(gp + s * KL_GP_N, pb->gp, KL_GP_N * sizeof *gp);
    memcpy(geo + s * ng, pb->geo, ng * sizeof *geo);
    for (int k = 0; k < pb->ns; ++k) geo[s * ng + (size_t)k * KL_GG_N + KL_GG_H] += 2 * D * s / (NS - 1);
  }
}

typedef struct job {
  const kl_problem *pb;
  const kl_scen_set *sc;
  kl_host *h;
  int rank;              /* set by the thread */
  int stop_rank;         /* this rank's callback asks to stop ... */
  const char *stop_at;   /* ... at the first line containing this */
  int asked;
  kl_opt_result res;
  kelvin_status st;
  char msg[1024];
} job;

static int progress(void *ctx, double fraction, const char *line)
{
  (void)fraction;
  job *j = ctx;
  if (j->rank == j->stop_rank && strstr(line, j->stop_at)) j->asked = 1;
  return j->asked;
}

static void rank_main(const kelvin_shard *sh, void *arg)
{
  job *j = arg;
  j->rank = sh ? sh->rank : 0;
  kl_host_set_shard(j->h, sh);
  j->st = kl_optimise_robust(j->pb, j->h, j->sc, j->stop_at ? progress : NULL, j, &j->res, j->msg, sizeof j->msg);
  kl_host_set_shard(j->h, NULL);
}

static void run_group(int n, kl_host **hs, const kl_problem *pb, const kl_scen_set *sc, int stop_rank,
                      const char *stop_at, job *j)
{
  void *arg[NR];
  for (int r = 0; r < n; ++r) {
    memset(&j[r], 0, sizeof j[r]);
    j[r].pb = pb, j[r].sc = sc, j[r].h = hs[r], j[r].stop_rank = stop_rank, j[r].stop_at = stop_at;
    arg[r] = &j[r];
  }
  if (n == 1)
    rank_main(NULL, &j[0]);
  else
    assert_int_equal(tshard_run(n, rank_main, arg), 0);
}

static void same_bits(const void *a, const void *b, size_t n, const char *what, int r, int n_ranks)
{
  if (memcmp(a, b, n) != 0) fail_msg("%s: rank %d of %d not bit-identical to one rank", what, r, n_ranks);
}

/* a result against the one-rank run's */
static void same_result(const kl_opt_result *a, const kl_opt_result *one, int r, int n)
{
  assert_int_equal(a->npass, one->npass);
  assert_int_equal(a->best, one->best);
  assert_int_equal(a->robust, one->robust);
  assert_int_equal(a->nominal, one->nominal);
  assert_int_equal(a->evaluations, one->evaluations);
  assert_int_equal(a->host_rollouts, one->host_rollouts);
  assert_int_equal(a->screened, one->screened);
  same_bits(&a->screen_best, &one->screen_best, sizeof a->screen_best, "screening's best", r, n);
  for (int i = 0; i < a->npass; ++i) {
    const kl_pass *p = &a->pass[i], *q = &one->pass[i];
    assert_string_equal(p->label, q->label);
    assert_int_equal(p->nx, q->nx);
    assert_int_equal(p->evals, q->evals);
    assert_int_equal(p->verified, q->verified);
    same_bits(p->x, q->x, (size_t)p->nx * sizeof *p->x, p->label, r, n);
    same_bits(p->obj, q->obj, sizeof p->obj, p->label, r, n);
    same_bits(&p->robj, &q->robj, sizeof p->robj, p->label, r, n);
    if (p->verified) same_bits(p->vobj, q->vobj, sizeof p->vobj, p->label, r, n);
  }
}

static void compare(kl_host **hs, int kind, const char *name)
{
  kl_problem *pb = problem(kind);
  assert_non_null(pb);
  double *gp = malloc(NS * KL_GP_N * sizeof *gp), *geo = malloc((size_t)NS * pb->ns * KL_GG_N * sizeof *geo);
  scenarios(pb, gp, geo);
  kl_scen_set sc = {NS, gp, geo, {KL_ROBUST_MEAN, 0.0, 0.5, 0.9, 4.0, 16.0, pb->gp[KL_GP_FREF]}};
  const kl_scen_set *scp = kind == ROBUST ? &sc : NULL;
  job *one = calloc(1, sizeof *one), *j = calloc(NR, sizeof *j);
  run_group(1, hs, pb, scp, -1, NULL, one);
  if (one->st != KELVIN_OK) fail_msg("%s: %s", name, one->msg);
  assert_true(one->res.evaluations > 0);
  assert_int_equal(one->res.local_rollouts >= one->res.evaluations, 1);
  printf("# %s: %d passes, %ld rollouts (the device's %ld), best '%s'\n", name, one->res.npass, one->res.evaluations,
         one->res.local_rollouts, one->res.pass[one->res.best].label);
  for (int n = 2; n <= NR; ++n) {
    run_group(n, hs, pb, scp, -1, NULL, j);
    long sum = 0;
    for (int r = 0; r < n; ++r) {
      if (j[r].st != KELVIN_OK) fail_msg("%s, rank %d of %d: %s", name, r, n, j[r].msg);
      same_result(&j[r].res, &one->res, r, n);
      assert_true(j[r].res.local_rollouts < one->res.local_rollouts); /* a share, not the whole */
      sum += j[r].res.local_rollouts;
    }
    assert_int_equal(sum, one->res.local_rollouts);
    for (int r = 0; r < n; ++r) kl_opt_result_free(&j[r].res);
  }
  kl_opt_result_free(&one->res);
  free(one), free(j), free(gp), free(geo);
  kl_problem_free(pb);
}

static void test_twin(void **state)
{
  (void)state;
  compare(twin, NLOPT, "twin, nlopt");
  compare(twin, LM, "twin, lm (tangent)");
  compare(twin, ROBUST, "twin, robust lm, 16 scenarios");
}

static void test_opencl(void **state)
{
  (void)state;
  if (!cl[0]) {
    printf("# shard_opt_test: no OpenCL device with double precision: skipped\n");
    skip();
  }
  compare(cl, NLOPT, "OpenCL, nlopt");
  compare(cl, LM, "OpenCL, lm (tangent)");
  compare(cl, ROBUST, "OpenCL, robust lm, 16 scenarios");
}

/* rank 2's callback asks to stop at the first line containing at; every rank ends with KELVIN_ERR_STOPPED and rank
 * 2's message; only rank 2 was asked */
static void stop_case(int kind, const char *at)
{
  kl_problem *pb = problem(kind);
  job *j = calloc(NR, sizeof *j);
  run_group(NR, twin, pb, NULL, 2, at, j);
  for (int r = 0; r < NR; ++r) {
    printf("# stop at '%s': rank %d: %s\n", at, r, j[r].msg);
    assert_int_equal(j[r].st, KELVIN_ERR_STOPPED);
    assert_int_equal(strncmp(j[r].msg, "rank 2: ", 8), 0);
    assert_non_null(strstr(j[r].msg, "stopped by the caller"));
    assert_int_equal(j[r].asked, r == 2);
    kl_opt_result_free(&j[r].res);
  }
  free(j);
  kl_problem_free(pb);
}

static void test_stop(void **state)
{
  (void)state;
  alarm(120); /* a rank left waiting in a collective hangs the group: SIGALRM ends the test (a failure) */
  stop_case(LM, "refinement"); /* the notice before the refinement: the next batch (LM's first) stops all */
  stop_case(NLOPT, "screening"); /* after the screening's one batch: acted on at the refinement's first */
  stop_case(NLOPT, "verification"); /* inside the replicated 3-D stage: the agreement after it stops all */
  alarm(0);
}

/* a refinement out of time (optimiser.maxtime 1 us: over after the first evaluation) on 3 ranks: the time limit is
 * read on rank 0's clock (optimiser/progress.h, kl_progress_clock) so every rank stops at the same evaluation: the
 * same results on every rank, each time-limited (NLopt's "maxtime reached", LM's "maxtime") */
static void test_time(void **state)
{
  (void)state;
  for (int kind = NLOPT; kind <= LM; ++kind) {
    kl_problem *pb = problem_t(kind, 1e-6);
    job *j = calloc(NR, sizeof *j);
    run_group(NR, twin, pb, NULL, -1, NULL, j);
    for (int r = 0; r < NR; ++r) {
      if (j[r].st != KELVIN_OK) fail_msg("rank %d: %s", r, j[r].msg);
      same_result(&j[r].res, &j[0].res, r, NR);
      const kl_pass *p = &j[r].res.pass[j[r].res.npass - 1];
      assert_string_equal(p->stop, kind == NLOPT ? "maxtime reached" : "maxtime");
      if (kind == NLOPT) assert_int_equal(j[r].res.time_limited, 1);
    }
    printf("# maxtime 1 us, %s: %d rollouts on every rank, stop '%s'\n", kind == NLOPT ? "nlopt" : "lm",
           (int)j[0].res.evaluations, j[0].res.pass[j[0].res.npass - 1].stop);
    for (int r = 0; r < NR; ++r) kl_opt_result_free(&j[r].res);
    free(j);
    kl_problem_free(pb);
  }
}

/* a failure every rank meets alike in replicated work (each rank's 3-D verification over verify.time_limit 1 ns):
 * KELVIN_ERR_LIMIT on every rank, each with its own message, as one rank gives it (no "rank R: " in front: rank 0's
 * message is the one a caller reports) */
static void test_alike(void **state)
{
  (void)state;
  kl_problem *pb = problem(NLOPT);
  pb->set.verify_time_limit = 1e-9;
  pb->set.screening = 0;
  job *j = calloc(NR, sizeof *j);
  run_group(1, twin, pb, NULL, -1, NULL, j);
  assert_int_equal(j[0].st, KELVIN_ERR_LIMIT);
  assert_non_null(strstr(j[0].msg, "verify.time_limit"));
  kl_opt_result_free(&j[0].res);
  run_group(NR, twin, pb, NULL, -1, NULL, j);
  for (int r = 0; r < NR; ++r) {
    printf("# verify.time_limit 1 ns, rank %d: %.100s...\n", r, j[r].msg);
    assert_int_equal(j[r].st, KELVIN_ERR_LIMIT);
    assert_int_not_equal(strncmp(j[r].msg, "rank ", 5), 0);
    assert_non_null(strstr(j[r].msg, "verify.time_limit"));
    kl_opt_result_free(&j[r].res);
  }
  free(j);
  kl_problem_free(pb);
}

/* A removal plan (optimiser/plan.c, open loop; the bead of optimiser/plan_test.c) on 3 ranks of the twin, rank 2's
 * callback asking to stop at its first line: every rank ends with KELVIN_ERR_STOPPED and rank 2's message, and the
 * stop is acted on by the next rollout batch (kl_rollout_stop_flag on the plan's own flag), in the first pass: the
 * batch's message "rank 2: stopped by the caller" and at most that one pass on any rank (not after the last pass,
 * where the closing agreement would catch it too, as "removal plan: stopped by the caller"). */
typedef struct plan_job {
  const kl_problem *pb;
  kl_host *h;
  int rank, asked;
  kelvin_status st;
  kl_plan pl;
  char msg[1024];
} plan_job;

static int plan_progress(void *ctx, double fraction, const char *line)
{
  (void)fraction, (void)line;
  plan_job *j = ctx;
  if (j->rank == 2) j->asked = 1;
  return j->asked;
}

static void plan_rank(const kelvin_shard *sh, void *arg)
{
  plan_job *j = arg;
  j->rank = sh->rank;
  kl_host_set_shard(j->h, sh);
  j->st = kl_plan_run(j->pb, j->h, 0, plan_progress, j, &j->pl, j->msg, sizeof j->msg);
  kl_host_set_shard(j->h, NULL);
}

static void test_plan_stop(void **state)
{
  (void)state;
  kl_settings s;
  kl_settings_default(&s);
  s.surface = KL_SURF_PLANE;
  s.tilt_deg = 0.0, s.rough_a = 0.0, s.extent[0] = 0.06, s.extent[1] = 0.02, s.resolution = 2.5e-4;
  s.path_x0 = -0.02, s.path_x1 = 0.02, s.ns = 81, s.bead_h = 2e-4, s.bead_x = 0.0, s.lead_deg = 30.0;
  s.tool_E = 1e8, s.tool_nu = 0.45, s.target_F = 2.0, s.o_max = 5e-3;
  s.spindle_rpm = 60.0 / (2.0 * 3.14159265358979323846 * 3e-3);
  s.preston = 2e-11, s.rm_tolerance = 20e-6, s.rm_gouge = 10e-6, s.rm_max_passes = 16;
  kl_problem *pb = NULL;
  char msg[1024];
  if (kl_problem_build(&s, NULL, &pb, msg, sizeof msg) != KELVIN_OK) fail_msg("build: %s", msg);
  alarm(120); /* a rank left waiting in a collective hangs the group: SIGALRM ends the test (a failure) */
  plan_job j[NR];
  void *arg[NR];
  for (int r = 0; r < NR; ++r) {
    memset(&j[r], 0, sizeof j[r]);
    j[r].pb = pb, j[r].h = twin[r];
    arg[r] = &j[r];
  }
  assert_int_equal(tshard_run(NR, plan_rank, arg), 0);
  alarm(0);
  for (int r = 0; r < NR; ++r) {
    printf("# removal plan stopped on rank 2: rank %d: %s (%d passes)\n", r, j[r].msg, j[r].pl.npass);
    assert_int_equal(j[r].st, KELVIN_ERR_STOPPED);
    assert_string_equal(j[r].msg, "rank 2: stopped by the caller"); /* the batch's, not "removal plan: ..." */
    assert_true(j[r].pl.npass <= 1);
    assert_int_equal(j[r].asked, r == 2);
    kl_plan_free(&j[r].pl);
  }
  kl_problem_free(pb);
}

int main(void)
{
  kl_host_opts o;
  kl_host_opts_default(&o);
  for (int r = 0; r < NR; ++r)
    if (kl_host_create(&cl[r]) != KELVIN_OK || kl_host_create(&twin[r]) != KELVIN_OK) return 1;
  for (int r = 0; r < NR; ++r) {
    const kelvin_status st = kl_host_open(cl[r], &o);
    if (st != KELVIN_OK || !kl_host_is_opencl(cl[r])) {
      if (r == 0) printf("# shard_opt_test: no OpenCL device with double precision: the OpenCL case is skipped\n");
      for (int q = 0; q < NR; ++q) kl_host_destroy(cl[q]), cl[q] = NULL;
      break;
    }
  }
  o.cpu = 1;
  o.threads = 1; /* ranks are threads already */
  for (int r = 0; r < NR; ++r)
    if (kl_host_open(twin[r], &o) != KELVIN_OK) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_twin), cmocka_unit_test(test_opencl),
                                     cmocka_unit_test(test_stop), cmocka_unit_test(test_time),
                                     cmocka_unit_test(test_alike), cmocka_unit_test(test_plan_stop)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  for (int r = 0; r < NR; ++r) kl_host_destroy(cl[r]), kl_host_destroy(twin[r]);
  return rc;
}
