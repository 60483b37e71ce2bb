/* tests/scen_batch_test.c: candidates x scenarios in one batch (host/rollout_batch.h,
 * kl_rollout_eval_scenarios; kernels/rollout.cl, kl_grind_scen_batch) against an independent route: each
 * scenario's own kl_rollout (created with that scenario's gp and geo as its problem) and kl_rollout_eval.
 * Three scenarios of a small problem that differ in the holder's stiffness, the contact stiffness and the
 * part's protrusion; four candidates. On the OpenMP twin the batch must give every objective term and
 * every per-sample output of every rollout bit for bit (the same header function on the same inputs); on
 * OpenCL within 1e-12 relative, against the device's own rollouts and against the twin's batch (the
 * problem without a basis: the control points are the samples, so no GEMM orders sums differently; see
 * tests/rollout_parity_test.c for what a spline basis adds). The objective terms KL_OBJ_FMAX and
 * KL_OBJ_FMIN against the largest and smallest scored measure computed here from the per-sample outputs
 * (kl_problem_measure). The OpenCL part is skipped with a message without an OpenCL device with double
 * precision.
 *
 * Other modes (no cmocka): `scen_batch_test --oclgrind` runs one small scenario batch on the chosen device
 * (KELVIN_DEVICE) and prints nothing unless it fails (tests/oclgrind_test.sh runs it under Oclgrind);
 * `scen_batch_test --measure P S` times a batch of P candidates x S scenarios on the device and the download
 * of its objective terms (the figures of host/rollout_batch.c, eval_scen_cl). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/clock.h"
#include "host/host.h"
#include "host/rollout_batch.h"
#include "optimiser/problem.h"

#define P 4
#define S 3

static kl_host *cl, *twin; /* cl NULL without an OpenCL device */

/* The small plane problem of optimiser/problem_test.c; spline: 1 for the spline basis (method nlopt), 0 for
 * control points that are the samples (method lm). The scored measure is the averaged wrist sensor, which
 * kl_problem_measure computes from the per-sample outputs and the problem's masses alone (the instantaneous
 * sensor reads the settings' holder stiffness, which the scenarios change). */
static kl_problem *problem(int spline, int ns)
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
  s.ns = ns;
  s.method = spline ? KL_METHOD_NLOPT : KL_METHOD_LM;
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
  const kelvin_status st = kl_problem_build(&s, NULL, &pb, msg, sizeof msg);
  if (st != KELVIN_OK) fprintf(stderr, "scen_batch_test: %s\n", msg);
  return pb;
}

/* Scenario s of nS: the problem's constants and geometry with the holder stiffness, the contact stiffness
 * and the protrusion changed by hand (scenario 0 is the problem itself) */
static void scenarios(const kl_problem *pb, int nS, double *gp, double *geo)
{
  const int ns = pb->ns;
  static const double kh[] = {1.0, 0.6, 1.5, 0.8}, kc[] = {1.0, 1.4, 0.7, 1.1}, dh[] = {0.0, 2e-5, -3e-5, 1e-5};
  for (int s = 0; s < nS; ++s) {
    double *g = gp + (size_t)s * KL_GP_N, *q = geo + (size_t)s * ns * KL_GG_N;
    memcpy(g, pb->gp, KL_GP_N * sizeof *g);
    memcpy(q, pb->geo, (size_t)ns * KL_GG_N * sizeof *q);
    g[KL_GP_KH] *= kh[s % 4];
    g[KL_GP_KC] *= kc[s % 4];
    /* a constant shift, and on scenario 2 a bump of 20 um in the middle as well (with its slope dh/ds; the
     * samples are equally spaced in arc length) */
    const double dsdk = (pb->s[ns - 1] - pb->s[0]) / (ns - 1);
    for (int k = 0; k < ns; ++k) {
      const double x = (k - 0.5 * ns) / (0.1 * ns), b = s % 4 == 2 ? 2e-5 * exp(-0.5 * x * x) : 0.0;
      q[k * KL_GG_N + KL_GG_H] += dh[s % 4] + b;
      q[k * KL_GG_N + KL_GG_DH] += -b * x / (0.1 * ns) / dsdk;
    }
  }
}

/* P candidates around the problem's initial guess: offsets shifted by -20, 0, 20, 40 um, and a wave of 10 um
 * along the path (so that the force varies along each pass) */
static double *candidates(const kl_problem *pb, int nP)
{
  const int nc = pb->nc;
  double *x = malloc((size_t)nc * sizeof *x), *ctrl = malloc((size_t)nc * nP * sizeof *ctrl);
  kl_problem_guess(pb, x);
  const int no = pb->basis ? pb->set.n_o : pb->ns;
  for (int p = 0; p < nP; ++p)
    for (int j = 0; j < nc; ++j)
      ctrl[(size_t)j * nP + p] = x[j] + (j < no ? 2e-5 * (p - 1) + 1e-5 * sin(6.283 * j / no + p) : 0.0);
  free(x);
  return ctrl;
}

/* What a test compares: the batch on handle h against each scenario's own rollout on h2. exact: bit for
 * bit, else within tol relative (of the larger magnitude, at least 1e-300). */
typedef struct run {
  double *obj, *so; /* the batch: KL_OBJ_N x P S, KL_SO_N x ns x P S */
  double *own_obj, *own_so; /* each scenario's own rollouts, in the batch's layout */
} run;

static double rel(double a, double b)
{
  if (a == b) return 0.0;
  return fabs(a - b) / fmax(fmax(fabs(a), fabs(b)), 1e-300);
}

/* the batch on h (one rollout created with the problem, then the scenarios) and the scenarios' own rollouts
 * on h2 */
static run roll(const kl_problem *pb, kl_host *h, kl_host *h2, const double *gp, const double *geo, const double *ctrl)
{
  const int ns = pb->ns, nc = pb->nc;
  const size_t Q = (size_t)P * S;
  run o;
  o.obj = malloc(KL_OBJ_N * Q * sizeof *o.obj);
  o.so = malloc((size_t)KL_SO_N * ns * Q * sizeof *o.so);
  o.own_obj = malloc(KL_OBJ_N * Q * sizeof *o.obj);
  o.own_so = malloc((size_t)KL_SO_N * ns * Q * sizeof *o.so);
  for (size_t i = 0; i < KL_OBJ_N * Q; ++i) o.obj[i] = o.own_obj[i] = NAN;
  for (size_t i = 0; i < KL_SO_N * ns * Q; ++i) o.so[i] = o.own_so[i] = NAN;
  const kl_rollout_def def = {ns, nc, pb->gp, pb->geo, pb->basis, 0, NULL, NULL}; /* 0: every batch on h's device */
  kl_rollout *r = NULL;
  assert_int_equal(kl_rollout_create(h, &def, &r), KELVIN_OK);
  assert_int_equal(kl_rollout_nscenarios(r), 0);
  assert_int_equal(kl_rollout_set_scenarios(r, S, gp, geo), KELVIN_OK);
  assert_int_equal(kl_rollout_nscenarios(r), S);
  assert_int_equal(kl_rollout_eval_scenarios(r, P, ctrl, o.obj, o.so), KELVIN_OK);
  assert_int_equal((int)kl_rollout_count(r), P * S);
  kl_rollout_destroy(r);
  double *obj = malloc(KL_OBJ_N * P * sizeof *obj), *so = malloc((size_t)KL_SO_N * ns * P * sizeof *so);
  for (int s = 0; s < S; ++s) {
    const kl_rollout_def ds = {ns, nc, gp + (size_t)s * KL_GP_N, geo + (size_t)s * ns * KL_GG_N, pb->basis, 0, NULL,
                               NULL};
    kl_rollout *rs = NULL;
    assert_int_equal(kl_rollout_create(h2, &ds, &rs), KELVIN_OK);
    assert_int_equal(kl_rollout_eval(rs, P, ctrl, obj, so), KELVIN_OK);
    kl_rollout_destroy(rs);
    for (int p = 0; p < P; ++p) {
      const size_t q = (size_t)p * S + s;
      for (int t = 0; t < KL_OBJ_N; ++t) o.own_obj[t * Q + q] = obj[t * P + p];
      for (int i = 0; i < KL_SO_N * ns; ++i) o.own_so[i * Q + q] = so[(size_t)i * P + p];
    }
  }
  free(obj);
  free(so);
  return o;
}

static void run_free(run *o)
{
  free(o->obj);
  free(o->so);
  free(o->own_obj);
  free(o->own_so);
}

/* worst relative difference between two batches' outputs (NaN anywhere: infinity) */
static double worst(const double *a, const double *b, size_t n)
{
  double e = 0.0;
  for (size_t i = 0; i < n; ++i) e = (isnan(a[i]) || isnan(b[i])) ? INFINITY : fmax(e, rel(a[i], b[i]));
  return e;
}

/* The scenarios really differ: every candidate's objective and time out of contact or pass force differ
 * between any two scenarios; and no rollout failed. */
static void check_distinct(const double *obj)
{
  const size_t Q = (size_t)P * S;
  for (int p = 0; p < P; ++p)
    for (int s = 0; s < S; ++s) {
      const size_t q = (size_t)p * S + s;
      assert_true(obj[KL_OBJ_STATUS * Q + q] == 0.0);
      for (int s2 = 0; s2 < s; ++s2) {
        const size_t q2 = (size_t)p * S + s2;
        assert_true(rel(obj[KL_OBJ_J * Q + q], obj[KL_OBJ_J * Q + q2]) > 1e-3);
        assert_true(rel(obj[KL_OBJ_FMAX * Q + q], obj[KL_OBJ_FMAX * Q + q2]) > 1e-3);
      }
    }
}

/* KL_OBJ_FMAX and KL_OBJ_FMIN of every rollout against the scored measure (kl_problem_measure on its
 * per-sample outputs and its candidate's commands) at the samples the RMS term sums (1 .. ns - 1): the
 * largest and the smallest, to 1e-10 of F_ref (the measure here divides by the difference of the sampled
 * times, the rollout by the interval's duration) */
static void check_extremes(const kl_problem *pb, const double *ctrl, const double *obj, const double *so)
{
  const int ns = pb->ns, nc = pb->nc;
  const size_t Q = (size_t)P * S;
  double *x = malloc((size_t)nc * sizeof *x), *o = malloc((size_t)ns * sizeof *o), *v = malloc((size_t)ns * sizeof *v);
  double *one = malloc((size_t)KL_SO_N * ns * sizeof *one), *F = malloc((size_t)ns * sizeof *F);
  const double fref = pb->gp[KL_GP_FREF];
  int spread = 0;
  double e = 0.0;
  for (int p = 0; p < P; ++p) {
    for (int j = 0; j < nc; ++j) x[j] = ctrl[(size_t)j * P + p];
    kl_problem_expand(pb, x, o, v);
    for (int s = 0; s < S; ++s) {
      const size_t q = (size_t)p * S + s;
      for (int i = 0; i < KL_SO_N * ns; ++i) one[i] = so[(size_t)i * Q + q];
      kl_problem_measure(pb, (int)pb->gp[KL_GP_AVG], one, o, v, F);
      double hi = F[1], lo = F[1];
      for (int k = 2; k < ns; ++k) hi = fmax(hi, F[k]), lo = fmin(lo, F[k]);
      e = fmax(e, fmax(fabs(obj[KL_OBJ_FMAX * Q + q] - hi), fabs(obj[KL_OBJ_FMIN * Q + q] - lo)) / fref);
      assert_true(fabs(obj[KL_OBJ_FMAX * Q + q] - hi) <= 1e-10 * fref);
      assert_true(fabs(obj[KL_OBJ_FMIN * Q + q] - lo) <= 1e-10 * fref);
      spread += hi - lo > 1e-3 * fref; /* a pass whose force varies: max and min not the same number */
    }
  }
  printf("# F max and F min against the measure from the per-sample outputs: worst %.2e of F_ref\n", e);
  assert_int_equal(spread, P * S);
  free(x);
  free(o);
  free(v);
  free(one);
  free(F);
}

/* The twin: the batch gives each scenario's own rollouts bit for bit, objective terms and per-sample outputs,
 * on the spline problem (the same host GEMM of the same candidates) and on the per-sample one */
static void twin_case(int spline)
{
  kl_problem *pb = problem(spline, 61);
  assert_non_null(pb);
  const int ns = pb->ns;
  double *gp = malloc(S * KL_GP_N * sizeof *gp), *geo = malloc((size_t)S * ns * KL_GG_N * sizeof *geo);
  scenarios(pb, S, gp, geo);
  double *ctrl = candidates(pb, P);
  run o = roll(pb, twin, twin, gp, geo, ctrl);
  const size_t Q = (size_t)P * S;
  for (size_t i = 0; i < KL_OBJ_N * Q; ++i) assert_true(o.obj[i] == o.own_obj[i]);
  for (size_t i = 0; i < KL_SO_N * ns * Q; ++i) assert_true(o.so[i] == o.own_so[i]);
  check_distinct(o.obj);
  check_extremes(pb, ctrl, o.obj, o.so);
  printf("# twin, %s: %d x %d rollouts identical bit for bit to the scenarios' own; J of candidate 0 on the "
         "scenarios %.6g %.6g %.6g, F max %.4g %.4g %.4g N, F min %.4g %.4g %.4g N\n",
         spline ? "splines" : "per-sample commands", P, S, o.obj[0], o.obj[1], o.obj[2], o.obj[KL_OBJ_FMAX * Q],
         o.obj[KL_OBJ_FMAX * Q + 1], o.obj[KL_OBJ_FMAX * Q + 2], o.obj[KL_OBJ_FMIN * Q], o.obj[KL_OBJ_FMIN * Q + 1],
         o.obj[KL_OBJ_FMIN * Q + 2]);
  run_free(&o);
  free(ctrl);
  free(gp);
  free(geo);
  kl_problem_free(pb);
}

static void test_twin_spline(void **state)
{
  (void)state;
  twin_case(1);
}

static void test_twin_samples(void **state)
{
  (void)state;
  twin_case(0);
}

/* OpenCL: the device's batch against the device's own rollouts of each scenario (spline problem: the same
 * device GEMM) and against the twin's batch (per-sample commands: no GEMM), within 1e-12 relative */
static void test_opencl(void **state)
{
  (void)state;
  if (!cl) {
    printf("# scen_batch_test: no OpenCL device with double precision: the OpenCL case skipped\n");
    skip();
  }
  for (int spline = 1; spline >= 0; --spline) {
    kl_problem *pb = problem(spline, 61);
    assert_non_null(pb);
    const int ns = pb->ns;
    const size_t Q = (size_t)P * S;
    double *gp = malloc(S * KL_GP_N * sizeof *gp), *geo = malloc((size_t)S * ns * KL_GG_N * sizeof *geo);
    scenarios(pb, S, gp, geo);
    double *ctrl = candidates(pb, P);
    run d = roll(pb, cl, cl, gp, geo, ctrl); /* the device's batch and its own rollouts */
    const double e_own = fmax(worst(d.obj, d.own_obj, KL_OBJ_N * Q), worst(d.so, d.own_so, KL_SO_N * ns * Q));
    double e_twin = 0.0;
    if (!spline) {
      run t = roll(pb, twin, twin, gp, geo, ctrl);
      e_twin = fmax(worst(d.obj, t.obj, KL_OBJ_N * Q), worst(d.so, t.so, KL_SO_N * ns * Q));
      run_free(&t);
    }
    printf("# OpenCL, %s: worst relative difference of the batch against the device's own rollouts %.2e%s",
           spline ? "splines" : "per-sample commands", e_own, spline ? "\n" : "");
    if (!spline) printf(", against the twin's batch %.2e\n", e_twin);
    assert_true(e_own <= 1e-12 && e_twin <= 1e-12);
    check_distinct(d.obj);
    check_extremes(pb, ctrl, d.obj, d.so);
    run_free(&d);
    free(ctrl);
    free(gp);
    free(geo);
    kl_problem_free(pb);
  }
}

/* Errors: a scenario batch before any scenarios, S < 1, NULL arrays: KELVIN_ERR_ARG with a message; a new set
 * replaces the old one, on the device too (the set reversed gives the rollouts reversed; a set of one
 * scenario gives that scenario's rollouts); P S counts in
 * kl_rollout_count and host_below applies to P S (3 candidates x 3 scenarios against host_below 8: the
 * device; 2 x 3 = 6: the host) */
static void test_args(void **state)
{
  (void)state;
  kl_problem *pb = problem(0, 21);
  assert_non_null(pb);
  const int ns = pb->ns, nc = pb->nc;
  double *gp = malloc(S * KL_GP_N * sizeof *gp), *geo = malloc((size_t)S * ns * KL_GG_N * sizeof *geo);
  scenarios(pb, S, gp, geo);
  double *ctrl = candidates(pb, P);
  double *obj = malloc(KL_OBJ_N * P * S * sizeof *obj), *obj1 = malloc(KL_OBJ_N * P * sizeof *obj1);
  kl_host *h = cl ? cl : twin;
  const kl_rollout_def def = {ns, nc, pb->gp, pb->geo, pb->basis, 8, NULL, NULL};
  kl_rollout *r = NULL;
  assert_int_equal(kl_rollout_create(h, &def, &r), KELVIN_OK);
  assert_int_equal(kl_rollout_eval_scenarios(r, P, ctrl, obj, NULL), KELVIN_ERR_ARG);
  assert_non_null(strstr(kl_host_errmsg(h), "without scenarios"));
  assert_int_equal(kl_rollout_set_scenarios(r, 0, gp, geo), KELVIN_ERR_ARG);
  assert_non_null(strstr(kl_host_errmsg(h), "S = 0"));
  assert_int_equal(kl_rollout_set_scenarios(r, S, NULL, geo), KELVIN_ERR_ARG);
  assert_int_equal(kl_rollout_set_scenarios(r, S, gp, NULL), KELVIN_ERR_ARG);
  assert_non_null(strstr(kl_host_errmsg(h), "NULL"));
  assert_int_equal(kl_rollout_nscenarios(r), 0);
  assert_int_equal(kl_rollout_set_scenarios(r, S, gp, geo), KELVIN_OK);
  assert_int_equal(kl_rollout_eval_scenarios(r, 0, ctrl, obj, NULL), KELVIN_ERR_ARG);
  assert_int_equal(kl_rollout_eval_scenarios(r, 3, ctrl, obj, NULL), KELVIN_OK); /* 9 >= 8: the device */
  assert_int_equal((int)kl_rollout_count(r), 9);
  assert_int_equal((int)kl_rollout_count_host(r), 0);
  /* the set in reverse order, on the device again (uploaded anew): the same rollouts, scenarios reversed */
  double *rgp = malloc(S * KL_GP_N * sizeof *rgp), *rgeo = malloc((size_t)S * ns * KL_GG_N * sizeof *rgeo);
  double *objr = malloc(KL_OBJ_N * 3 * S * sizeof *objr);
  for (int i = 0; i < S; ++i) {
    memcpy(rgp + (size_t)i * KL_GP_N, gp + (size_t)(S - 1 - i) * KL_GP_N, KL_GP_N * sizeof *rgp);
    memcpy(rgeo + (size_t)i * ns * KL_GG_N, geo + (size_t)(S - 1 - i) * ns * KL_GG_N,
           (size_t)ns * KL_GG_N * sizeof *rgeo);
  }
  assert_int_equal(kl_rollout_set_scenarios(r, S, rgp, rgeo), KELVIN_OK);
  assert_int_equal(kl_rollout_eval_scenarios(r, 3, ctrl, objr, NULL), KELVIN_OK);
  for (int t = 0; t < KL_OBJ_N; ++t)
    for (int p = 0; p < 3; ++p)
      for (int i = 0; i < S; ++i) assert_true(objr[t * 3 * S + p * S + i] == obj[t * 3 * S + p * S + S - 1 - i]);
  free(rgp);
  free(rgeo);
  free(objr);
  assert_int_equal((int)kl_rollout_count(r), 18);
  assert_int_equal(kl_rollout_eval_scenarios(r, 2, ctrl, obj, NULL), KELVIN_OK); /* 6 < 8: the host */
  assert_int_equal((int)kl_rollout_count(r), 24);
  assert_int_equal((int)kl_rollout_count_host(r), cl ? 6 : 0);
  /* a new set of one scenario, the old set's last: the batch is that scenario's own rollouts (on the host: P
   * = 4 < 8) */
  assert_int_equal(kl_rollout_set_scenarios(r, 1, gp + 2 * KL_GP_N, geo + (size_t)2 * ns * KL_GG_N), KELVIN_OK);
  assert_int_equal(kl_rollout_nscenarios(r), 1);
  assert_int_equal(kl_rollout_eval_scenarios(r, P, ctrl, obj, NULL), KELVIN_OK);
  const kl_rollout_def d2 = {ns, nc, gp + 2 * KL_GP_N, geo + (size_t)2 * ns * KL_GG_N, pb->basis, 0, NULL, NULL};
  kl_rollout *r2 = NULL;
  assert_int_equal(kl_rollout_create(twin, &d2, &r2), KELVIN_OK);
  assert_int_equal(kl_rollout_eval(r2, P, ctrl, obj1, NULL), KELVIN_OK);
  for (int i = 0; i < KL_OBJ_N * P; ++i) assert_true(obj[i] == obj1[i]);
  kl_rollout_destroy(r2);
  kl_rollout_destroy(r);
  free(obj);
  free(obj1);
  free(ctrl);
  free(gp);
  free(geo);
  kl_problem_free(pb);
}

/* the set's size bound: 2^24 + 1 scenarios refused on their count alone, before anything is read from gp and geo
 * (here arrays of one scenario: reading 2^24 + 1 of them would run far past them), the set before it kept */
static void test_scenario_bound(void **state)
{
  (void)state;
  kl_problem *pb = problem(0, 21);
  assert_non_null(pb);
  const kl_rollout_def def = {pb->ns, pb->nc, pb->gp, pb->geo, pb->basis, 0, NULL, NULL};
  kl_rollout *r = NULL;
  assert_int_equal(kl_rollout_create(twin, &def, &r), KELVIN_OK);
  assert_int_equal(kl_rollout_set_scenarios(r, 1, pb->gp, pb->geo), KELVIN_OK);
  assert_int_equal(kl_rollout_set_scenarios(r, (1 << 24) + 1, pb->gp, pb->geo), KELVIN_ERR_ARG);
  assert_non_null(strstr(kl_host_errmsg(twin), "S <= 2^24"));
  assert_non_null(strstr(kl_host_errmsg(twin), "S = 16777217"));
  assert_int_equal(kl_rollout_nscenarios(r), 1);
  kl_rollout_destroy(r);
  kl_problem_free(pb);
}

/* --oclgrind: one small scenario batch (2 candidates x 2 scenarios, 21 samples, per-sample outputs) on the
 * device KELVIN_DEVICE names; silent unless it fails */
static int oclgrind_mode(void)
{
  if (!cl) {
    fprintf(stderr, "scen_batch_test --oclgrind: no OpenCL device (%s)\n", kl_host_errmsg(cl ? cl : twin));
    return 1;
  }
  kl_problem *pb = problem(0, 21);
  if (!pb) return 1;
  const int ns = pb->ns, nc = pb->nc, nP = 2, nS = 2;
  double *gp = malloc(nS * KL_GP_N * sizeof *gp), *geo = malloc((size_t)nS * ns * KL_GG_N * sizeof *geo);
  scenarios(pb, nS, gp, geo);
  double *ctrl = candidates(pb, nP);
  double *obj = malloc(KL_OBJ_N * nP * nS * sizeof *obj), *so = malloc((size_t)KL_SO_N * ns * nP * nS * sizeof *so);
  const kl_rollout_def def = {ns, nc, pb->gp, pb->geo, pb->basis, 0, NULL, NULL};
  kl_rollout *r = NULL;
  int rc = kl_rollout_create(cl, &def, &r) != KELVIN_OK || kl_rollout_set_scenarios(r, nS, gp, geo) != KELVIN_OK ||
           kl_rollout_eval_scenarios(r, (size_t)nP, ctrl, obj, so) != KELVIN_OK;
  if (rc) fprintf(stderr, "scen_batch_test --oclgrind: %s\n", kl_host_errmsg(cl));
  for (int q = 0; !rc && q < nP * nS; ++q)
    if (obj[KL_OBJ_STATUS * nP * nS + q] != 0.0 || !isfinite(obj[KL_OBJ_J * nP * nS + q])) {
      fprintf(stderr, "scen_batch_test --oclgrind: rollout %d failed\n", q);
      rc = 1;
    }
  kl_rollout_destroy(r);
  free(obj);
  free(so);
  free(ctrl);
  free(gp);
  free(geo);
  kl_problem_free(pb);
  return rc;
}

/* --measure P S: a batch of P candidates x S scenarios (the spline problem, 61 samples) on the device, its
 * wall time, and the download of KL_OBJ_N x P S doubles from a device buffer (what a reduction over the
 * scenarios on the device would save, but for KL_OBJ_N x P of them), best of 20 */
static int measure_mode(int nP, int nS)
{
  if (!cl || nP < 1 || nS < 1) {
    fprintf(stderr, "scen_batch_test --measure P S: needs an OpenCL device and P, S >= 1\n");
    return 1;
  }
  kl_problem *pb = problem(1, 61);
  if (!pb) return 1;
  const int ns = pb->ns, nc = pb->nc;
  const size_t Q = (size_t)nP * nS;
  double *gp = malloc((size_t)nS * KL_GP_N * sizeof *gp), *geo = malloc((size_t)nS * ns * KL_GG_N * sizeof *geo);
  for (int s = 0; s < nS; s += 4) /* the four variants of scenarios() over and over */
    scenarios(pb, nS - s < 4 ? nS - s : 4, gp + (size_t)s * KL_GP_N, geo + (size_t)s * ns * KL_GG_N);
  double *ctrl = candidates(pb, nP), *obj = malloc(KL_OBJ_N * Q * sizeof *obj);
  const kl_rollout_def def = {ns, nc, pb->gp, pb->geo, pb->basis, 0, NULL, NULL};
  kl_rollout *r = NULL;
  int rc = kl_rollout_create(cl, &def, &r) != KELVIN_OK || kl_rollout_set_scenarios(r, nS, gp, geo) != KELVIN_OK;
  rc = rc || kl_rollout_eval_scenarios(r, 1, ctrl, obj, NULL) != KELVIN_OK; /* the build, and the upload */
  const double t0 = kl_now();
  rc = rc || kl_rollout_eval_scenarios(r, (size_t)nP, ctrl, obj, NULL) != KELVIN_OK;
  const double tb = kl_now() - t0;
  cl_int err = CL_SUCCESS;
  cl_mem m = rc ? NULL : clCreateBuffer(kl_host_context(cl), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                         KL_OBJ_N * Q * sizeof(double), obj, &err);
  double td = INFINITY;
  for (int i = 0; m && i < 20; ++i) {
    const double t1 = kl_now();
    err |= clEnqueueReadBuffer(kl_host_queue(cl), m, CL_TRUE, 0, KL_OBJ_N * Q * sizeof(double), obj, 0, NULL, NULL);
    td = fmin(td, kl_now() - t1);
  }
  if (m) clReleaseMemObject(m);
  if (rc || err != CL_SUCCESS) {
    fprintf(stderr, "scen_batch_test --measure: failed: %s (OpenCL %d)\n", kl_host_errmsg(cl), (int)err);
    rc = 1;
  } else {
    printf("device: %s\n%d candidates x %d scenarios (%zu rollouts, %d samples): batch %.3f s (%.1f us a rollout); "
           "download of the objective terms (%zu doubles, %.2f MB) %.3f ms, %.2e of the batch\n",
           kl_host_notice(cl), nP, nS, Q, ns, tb, 1e6 * tb / (double)Q, KL_OBJ_N * Q,
           (double)(KL_OBJ_N * Q) * 8.0 / 1048576.0, 1e3 * td, td / tb);
  }
  kl_rollout_destroy(r);
  free(obj);
  free(ctrl);
  free(gp);
  free(geo);
  kl_problem_free(pb);
  return rc;
}

int main(int argc, char **argv)
{
  kl_host_opts o;
  kl_host_opts_default(&o);
  if (kl_host_create(&cl) != KELVIN_OK || kl_host_create(&twin) != KELVIN_OK) return 1;
  const kelvin_status st = kl_host_open(cl, &o);
  if (st != KELVIN_OK || !kl_host_is_opencl(cl)) {
    if (argc == 1)
      printf("# scen_batch_test: no OpenCL device with double precision (%s): the OpenCL case is skipped\n",
             st == KELVIN_OK ? kl_host_notice(cl) : kl_host_errmsg(cl));
    kl_host_destroy(cl);
    cl = NULL;
  }
  o.cpu = 1;
  if (kl_host_open(twin, &o) != KELVIN_OK) return 1;
  int rc;
  if (argc == 2 && !strcmp(argv[1], "--oclgrind")) {
    rc = oclgrind_mode();
  } else if (argc == 4 && !strcmp(argv[1], "--measure")) {
    rc = measure_mode(atoi(argv[2]), atoi(argv[3]));
  } else {
    if (cl) printf("device: %s\n", kl_host_notice(cl));
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_twin_spline), cmocka_unit_test(test_twin_samples),
                                       cmocka_unit_test(test_opencl), cmocka_unit_test(test_args),
                                       cmocka_unit_test(test_scenario_bound)};
    rc = cmocka_run_group_tests(tests, NULL, NULL);
  }
  if (cl) kl_host_destroy(cl);
  kl_host_destroy(twin);
  return rc;
}
