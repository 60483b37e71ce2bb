/* tests/gradient_check_test.c: the tangent-linear rollout (kernels/kl_rollout.h, kl_grind_rollout_tl;
 * host/rollout_batch.h, kl_rollout_tangent) against central differences of the rollout itself, on the
 * OpenMP twin and on the OpenCL path. Problem: the stiff spindle of examples/optimise_stiff.yaml (the
 * contact 64 % of the compliance, Hunt-Crossley damping) over the 0.25 mm sheet step, 12 mm sampled
 * every 0.1 mm, at random points (offsets about the static guess plus random smooth and rough parts,
 * speeds random within the bounds) and along random offset directions, for every scored measure.
 * The rollouts run at force_tol 1e-9 so that the differences' truncation and the integrator's error are
 * far below what is compared. Central differences with a relative step of 1e-4 of the offset scale. The
 * agreement is the largest |dS_TL - dS_CD| over the samples, relative to the largest |dS_CD|: the
 * tangent-linear rollout is the continuous model's derivative integrated by an order-4 stage on the
 * solution's own sub-steps, so it differs from the discrete rollout's derivative by about the
 * integrator's tolerance. Also the cost: one tangent-linear rollout with 16 directions against one
 * rollout (printed, not asserted: wall times on a shared machine).
 * Second test: the Jacobian Levenberg-Marquardt builds by coloured forward differences (the default,
 * optimiser.jacobian differences) against the one it builds from the tangent-linear rollout: one step of
 * kl_lm_solve from the same start with each, the offsets' steps compared (the speeds' columns are
 * differences in both). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "core/clock.h"
#include "host/host.h"
#include "host/rollout_batch.h"
#include "optimiser/lm.h"
#include "optimiser/problem.h"

static kl_host *host;

static void stiff_step(kl_settings *s)
{
  kl_settings_default(s);
  s->surface = KL_SURF_SPHERE, s->radius = 0.8;
  s->bead_h = 0;
  s->step_h = 2.5e-4, s->step_w = 3e-4, s->step_x = -0.002;
  s->tilt_deg = 0.1, s->rough_a = 1e-6;
  s->path_x0 = -0.006, s->path_x1 = 0.006, s->ns = 121;
  s->extent[0] = 0.04, s->extent[1] = 0.02, s->resolution = 5e-5;
  s->tool_R = 0.01, s->tool_E = 200e6, s->tool_nu = 0.3, s->tool_mass = 3.0, s->tool_weight = 5.0;
  s->holder_K = 5e5, s->holder_D = 245;
  s->cr = 0.3, s->target_F = 8.0, s->max_F = 16.0;
  s->method = KL_METHOD_LM;
  s->ftol = getenv("KL_GC_FTOL") ? atof(getenv("KL_GC_FTOL")) : 1e-9;
}

/* the scored measure `meas` of candidate c of a batch of P (commands ctrl, nc x P; outputs so, KL_SO_N x ns x
 * P) into S (ns); tmp holds KL_SO_N x ns */
static void measure_at(const kl_problem *pb, int meas, const double *ctrl, const double *so, int P, int c, double *tmp,
                       double *S)
{
  const int ns = pb->ns, nc = pb->nc;
  double x[2 * 121];
  assert_true(nc <= 2 * 121);
  for (int j = 0; j < nc; ++j) x[j] = ctrl[(size_t)j * P + c];
  for (int f = 0; f < KL_SO_N; ++f)
    for (int k = 0; k < ns; ++k) tmp[f * ns + k] = so[((size_t)f * ns + k) * P + c];
  kl_problem_measure(pb, meas, tmp, x, x + ns, S);
}

#define ND 16   /* directions */
#define NPT 3   /* random points */

static void check(void **state)
{
  (void)state;
  kl_settings s;
  stiff_step(&s);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 20261123);
  double worst_all = 0;
  for (int meas = 0; meas < 4; ++meas) {
    s.measure = meas;
    kl_problem *pb = NULL;
    char msg[1024];
    assert_int_equal(kl_problem_build(&s, NULL, &pb, msg, sizeof msg), KELVIN_OK);
    const int ns = pb->ns, nc = pb->nc;
    const kl_rollout_def def = {ns, nc, pb->gp, pb->geo, NULL, 0, NULL, NULL};
    kl_rollout *ro = NULL;
    assert_int_equal(kl_rollout_create(host, &def, &ro), KELVIN_OK);
    double *x = malloc((size_t)nc * sizeof *x), *dir = malloc((size_t)ND * ns * sizeof *dir);
    double *dS = malloc((size_t)ND * ns * sizeof *dS), *obj = malloc((size_t)KL_OBJ_N * (2 * ND + 1) * sizeof *obj);
    double *ctrl = malloc((size_t)nc * (2 * ND + 1) * sizeof *ctrl);
    double *so = malloc((size_t)KL_SO_N * ns * (2 * ND + 1) * sizeof *so), *tmp = malloc((size_t)KL_SO_N * ns * sizeof *tmp);
    double *Sp = malloc((size_t)ns * sizeof *Sp), *Sm = malloc((size_t)ns * sizeof *Sm);
    assert_non_null(x && dir && dS && obj && ctrl && so && tmp && Sp && Sm);
    const double eps = getenv("KL_GC_EPS") ? atof(getenv("KL_GC_EPS")) : 1e-8;
    double worst = 0, t_tl = 0, t_one = 0;
    for (int pt = 0; pt < NPT; ++pt) {
      kl_problem_guess(pb, x);
      const double ph = 2 * M_PI * gsl_rng_uniform(rng), vv = pb->set.v_min + (pb->set.v_max - pb->set.v_min) * gsl_rng_uniform(rng);
      for (int k = 0; k < ns; ++k) {
        x[k] += 2e-6 * sin(ph + 0.3 * k) + 3e-7 * gsl_ran_gaussian(rng, 1.0);
        x[ns + k] = vv * (1 + 0.05 * sin(ph + 0.05 * k));
      }
      for (int i = 0; i < ND; ++i)
        for (int k = 0; k < ns; ++k) dir[i * ns + k] = gsl_ran_gaussian(rng, 1.0);
      /* the tangent-linear rollout, one candidate with ND directions; its cost against one rollout's, the
       * fastest of 5 each after a first call of each */
      assert_int_equal(kl_rollout_tangent(ro, 1, x, ND, dir, obj, NULL, dS), KELVIN_OK);
      assert_int_equal(kl_rollout_eval(ro, 1, x, obj, NULL), KELVIN_OK);
      double b_tl = HUGE_VAL, b_one = HUGE_VAL;
      for (int rep = 0; rep < 5; ++rep) {
        double t0 = kl_now();
        assert_int_equal(kl_rollout_tangent(ro, 1, x, ND, dir, obj, NULL, dS), KELVIN_OK);
        b_tl = fmin(b_tl, kl_now() - t0);
        t0 = kl_now();
        assert_int_equal(kl_rollout_eval(ro, 1, x, obj, NULL), KELVIN_OK);
        b_one = fmin(b_one, kl_now() - t0);
      }
      t_tl += b_tl;
      t_one += b_one;
      /* central differences: 2 ND candidates in one batch */
      const int P = 2 * ND;
      for (int c = 0; c < P; ++c) {
        const int i = c / 2;
        const double sg = c % 2 ? -1.0 : 1.0;
        for (int j = 0; j < nc; ++j) ctrl[(size_t)j * P + c] = x[j] + (j < ns ? sg * eps * dir[i * ns + j] : 0.0);
      }
      assert_int_equal(kl_rollout_eval(ro, (size_t)P, ctrl, obj, so), KELVIN_OK);
      for (int i = 0; i < ND; ++i) {
        for (int side = 0; side < 2; ++side) {
          const int c = 2 * i + side;
          assert_true(obj[KL_OBJ_STATUS * P + c] == 0.0);
          measure_at(pb, meas, ctrl, so, P, c, tmp, side ? Sm : Sp);
        }
        double emax = 0, dmax = 0;
        for (int k = 0; k < ns; ++k) {
          const double cd = (Sp[k] - Sm[k]) / (2 * eps);
          emax = fmax(emax, fabs(dS[i * ns + k] - cd));
          dmax = fmax(dmax, fabs(cd));
        }
        worst = fmax(worst, emax / dmax);
      }
    }
    printf("# %s, measure %d: tangent-linear vs central differences, worst relative %.2e over %d points x %d "
           "directions x %d samples; one tangent-linear rollout with %d directions %.2f ms, one rollout %.2f ms (%.2fx)\n",
           kl_host_is_opencl(host) ? "OpenCL" : "OpenMP twin", meas, worst, NPT, ND, ns, ND, 1e3 * t_tl / NPT,
           1e3 * t_one / NPT, t_tl / t_one);
    /* measured (OpenMP twin and OpenCL alike) 5.9e-5 for the contact force at the samples (measure 0), 8.8e-6,
     * 5.2e-6 and 4.7e-6 for the others; the same at a difference step 10x larger, and falling with the
     * rollout's tolerance (about 1.7e-4 at force_tol 1e-7, 1.0e-5 at 1e-11): the integrator's error, not
     * the differences'. Asserted 10x the worst. */
    assert_true(worst < 6e-4);
    worst_all = fmax(worst_all, worst);
    kl_rollout_destroy(ro);
    free(x), free(dir), free(dS), free(obj), free(ctrl), free(so), free(tmp), free(Sp), free(Sm);
    kl_problem_free(pb);
  }
  gsl_rng_free(rng);
  printf("# worst over the measures: %.2e\n", worst_all);
}

/* The Jacobian Levenberg-Marquardt builds (optimiser.jacobian differences: forward differences of coloured
 * samples; tangent: the offsets' columns from the tangent-linear rollout) against central differences of
 * the scored measure taken here, one sample's offset or speed at a time; and one step with each. */
static void lm_step(void **state)
{
  (void)state;
  kl_settings s;
  stiff_step(&s);
  s.measure = KL_MEASURE_SENSOR;
  enum { NS_ = 121, NC_ = 2 * NS_ };
  double x0[NC_], xs[2][NC_];
  int band[2];
  for (int jac = 0; jac < 2; ++jac) {
    s.jacobian = jac ? KL_JACOBIAN_TANGENT : KL_JACOBIAN_DIFFERENCES;
    kl_problem *pb = NULL;
    char msg[1024];
    assert_int_equal(kl_problem_build(&s, NULL, &pb, msg, sizeof msg), KELVIN_OK);
    assert_true(pb->nc == NC_ && pb->ns == NS_);
    const kl_rollout_def def = {pb->ns, pb->nc, pb->gp, pb->geo, NULL, 0, NULL, NULL};
    kl_rollout *ro = NULL;
    assert_int_equal(kl_rollout_create(host, &def, &ro), KELVIN_OK);
    kl_problem_guess(pb, x0);
    for (int k = 0; k < NS_; ++k) x0[k] += 3e-6 * sin(0.2 * k); /* away from the guess: a real first step */
    memcpy(xs[jac], x0, sizeof x0);
    const int B = kl_lm_band(pb);
    double *J = calloc((size_t)2 * NS_ * B, sizeof *J);
    assert_non_null(J);
    kl_lm_stats st;
    memset(&st, 0, sizeof st);
    st.jac_out = J;
    assert_int_equal(kl_lm_solve(pb, host, ro, xs[jac], 1, 0, NULL, &st, msg, sizeof msg), KELVIN_OK);
    assert_int_equal(st.iterations, 1);
    band[jac] = st.band;
    /* what that one accepted step cost (the rollouts the report counts): the start, the Jacobian (2B + 1
     * rollouts of one batch by differences; one tangent-linear rollout and the B speed colours with the
     * tangent), and the four dampings tried in one batch (docs/examples.md, "The pipeline") */
    const long want = 1 + (jac ? 1 + st.band : 2 * st.band + 1) + 4;
    if (st.rollouts != want) fail_msg("jacobian %s: %ld rollouts for one step, want %ld", jac ? "tangent" : "differences",
                                      st.rollouts, want);
    /* central differences at x0: each sample's offset (step 1e-8 m) and speed (1e-6 m/s) alone, both sides,
     * all in one batch */
    const int P = 4 * NS_;
    double *ctrl = malloc((size_t)NC_ * P * sizeof *ctrl), *obj = malloc((size_t)KL_OBJ_N * P * sizeof *obj);
    double *so = malloc((size_t)KL_SO_N * NS_ * P * sizeof *so), *tmp = malloc((size_t)KL_SO_N * NS_ * sizeof *tmp);
    double *Sc = malloc((size_t)P * NS_ * sizeof *Sc);
    assert_non_null(ctrl && obj && so && tmp && Sc);
    const double eo = 1e-8, ev = 1e-6;
    for (int c = 0; c < P; ++c) {
      const int var = c / 2, j = var % NS_, isv = var >= NS_;
      for (int i = 0; i < NC_; ++i) ctrl[(size_t)i * P + c] = x0[i];
      ctrl[(size_t)(isv ? NS_ + j : j) * P + c] += (c % 2 ? -1.0 : 1.0) * (isv ? ev : eo);
    }
    assert_int_equal(kl_rollout_eval(ro, (size_t)P, ctrl, obj, so), KELVIN_OK);
    for (int c = 0; c < P; ++c) {
      assert_true(obj[KL_OBJ_STATUS * P + c] == 0.0);
      measure_at(pb, pb->set.measure, ctrl, so, P, c, tmp, Sc + (size_t)c * NS_);
    }
    double err[2] = {0, 0}, big[2] = {0, 0}; /* offsets, speeds */
    for (int isv = 0; isv < 2; ++isv)
      for (int k = 1; k < NS_; ++k)
        for (int j = k - B + 1 > 0 ? k - B + 1 : 0; j <= k; ++j) {
          const int var = isv * NS_ + j;
          const double cd = (Sc[(size_t)(2 * var) * NS_ + k] - Sc[(size_t)(2 * var + 1) * NS_ + k]) / (2 * (isv ? ev : eo));
          const double lm = J[(size_t)isv * NS_ * B + (size_t)k * B + (size_t)(k - j)];
          err[isv] = fmax(err[isv], fabs(lm - cd));
          big[isv] = fmax(big[isv], fabs(cd));
        }
    printf("# %s, jacobian %s: the band of dS_k/do_j, dS_k/dv_j against central differences: worst %.2e and %.2e of "
           "the largest entry (%.3g N/m, %.3g N s/m), B = %d\n",
           kl_host_is_opencl(host) ? "OpenCL" : "OpenMP twin", jac ? "tangent" : "differences", err[0] / big[0],
           err[1] / big[1], big[0], big[1], B);
    /* measured (both paths): offsets 3.5e-3 by differences (forward, a step of 2 % of the reference force
     * through the static compliance, and the colours' cut of the memory at 1e-2) and 3.4e-5 from the
     * tangent-linear rollout; speeds 1.0e-2 (forward, 1 % of the top speed). Asserted about 10x */
    assert_true(err[0] / big[0] < (jac ? 4e-4 : 4e-2));
    assert_true(err[1] / big[1] < 0.1);
    free(ctrl), free(obj), free(so), free(tmp), free(Sc), free(J);
    kl_rollout_destroy(ro);
    kl_problem_free(pb);
  }
  assert_int_equal(band[0], band[1]);
  double dmax = 0, smax = 0;
  for (int k = 0; k < NS_; ++k) {
    dmax = fmax(dmax, fabs(xs[0][k] - xs[1][k]));
    smax = fmax(smax, fabs(xs[1][k] - x0[k]));
  }
  printf("# %s: one Levenberg-Marquardt step, offsets by differences vs tangent-linear: largest difference %.2e "
         "of the largest offset step %.2e m (%.2e)\n",
         kl_host_is_opencl(host) ? "OpenCL" : "OpenMP twin", dmax, smax, dmax / smax);
  assert_true(smax > 1e-7);
  /* measured 1.3e-2 on both paths (the forward differences' truncation: a step of 2 % of the reference
   * force); asserted 10x */
  assert_true(dmax / smax < 0.13);
}

int main(void)
{
  kl_host_opts o;
  kl_host_opts_default(&o);
  o.cpu = 1;
  if (kl_host_create(&host) != KELVIN_OK || kl_host_open(host, &o) != KELVIN_OK) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(check), cmocka_unit_test(lm_step)};
  int rc = cmocka_run_group_tests_name("OpenMP twin", tests, NULL, NULL);
  kl_host_destroy(host);
  if (rc) return rc;
  kl_host_opts_default(&o);
  if (kl_host_create(&host) != KELVIN_OK) return 1;
  const kelvin_status st = kl_host_open(host, &o);
  if (st != KELVIN_OK || !kl_host_is_opencl(host)) {
    fprintf(stderr, "gradient_check_test: no OpenCL device with double precision: the OpenCL path skipped\n");
    kl_host_destroy(host);
    return 77;
  }
  rc = cmocka_run_group_tests_name("OpenCL", tests, NULL, NULL);
  kl_host_destroy(host);
  return rc;
}
