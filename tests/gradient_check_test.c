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
#include <time.h>
#include <cmocka.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "host/host.h"
#include "host/rollout_batch.h"
#include "optimiser/lm.h"
#include "optimiser/problem.h"

static kl_host *host;

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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
    const kl_rollout_def def = {ns, nc, pb->gp, pb->geo, NULL};
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
        double t0 = now();
        assert_int_equal(kl_rollout_tangent(ro, 1, x, ND, dir, obj, NULL, dS), KELVIN_OK);
        b_tl = fmin(b_tl, now() - t0);
        t0 = now();
        assert_int_equal(kl_rollout_eval(ro, 1, x, obj, NULL), KELVIN_OK);
        b_one = fmin(b_one, now() - t0);
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
          double xo[2 * 121];
          for (int j = 0; j < nc; ++j) xo[j] = ctrl[(size_t)j * P + c];
          for (int f = 0; f < KL_SO_N; ++f)
            for (int k = 0; k < ns; ++k) tmp[f * ns + k] = so[((size_t)f * ns + k) * P + c];
          kl_problem_measure(pb, meas, tmp, xo, xo + ns, side ? Sm : Sp);
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

/* one Levenberg-Marquardt step with the offsets' Jacobian by differences and by the tangent-linear rollout */
static void lm_step(void **state)
{
  (void)state;
  kl_settings s;
  stiff_step(&s);
  s.measure = KL_MEASURE_SENSOR;
  double x0[2 * 121], xs[2][2 * 121];
  int band[2];
  for (int jac = 0; jac < 2; ++jac) {
    s.jacobian = jac ? KL_JACOBIAN_TANGENT : KL_JACOBIAN_DIFFERENCES;
    kl_problem *pb = NULL;
    char msg[1024];
    assert_int_equal(kl_problem_build(&s, NULL, &pb, msg, sizeof msg), KELVIN_OK);
    assert_true(pb->nc == 2 * 121 && pb->ns == 121);
    const kl_rollout_def def = {pb->ns, pb->nc, pb->gp, pb->geo, NULL};
    kl_rollout *ro = NULL;
    assert_int_equal(kl_rollout_create(host, &def, &ro), KELVIN_OK);
    kl_problem_guess(pb, x0);
    for (int k = 0; k < pb->ns; ++k) x0[k] += 3e-6 * sin(0.2 * k); /* away from the guess: a real first step */
    memcpy(xs[jac], x0, sizeof x0);
    kl_lm_stats st;
    assert_int_equal(kl_lm_solve(pb, host, ro, xs[jac], 1, 0, NULL, NULL, &st, msg, sizeof msg), KELVIN_OK);
    assert_int_equal(st.iterations, 1);
    band[jac] = st.band;
    kl_rollout_destroy(ro);
    kl_problem_free(pb);
  }
  assert_int_equal(band[0], band[1]);
  double dmax = 0, smax = 0;
  for (int k = 0; k < 121; ++k) {
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
