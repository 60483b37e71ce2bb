/* optimiser/pipeline_test.c: what kl_optimise reports about its passes, recomputed here from the passes'
 * own data (docs/design.md section 5, "Pipeline"):
 *   - the objective terms of each verified pass, from its verified forces, times and contact flags and
 *     the commands expanded from its control points, with the objective written out here;
 *   - the device/CPU agreement (RMS and max of the difference on the scored force measure, over F_ref);
 *   - the winner: the verified pass of lowest verified objective (the naive pass never wins), found here
 *     by a plain scan;
 *   - the device objective of every pass against a serial rollout of its control points.
 * Runs on the OpenMP twin (no OpenCL device needed), on a small plane with a weld bead. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "optimiser/pipeline.h"

static void small_settings(kl_settings *s)
{
  kl_settings_default(s);
  s->surface = KL_SURF_PLANE;
  s->tilt_deg = 0.0;
  s->rough_a = 0.0;
  s->extent[0] = 0.06;
  s->extent[1] = 0.02;
  s->resolution = 5e-4;
  s->path_x0 = -0.02;
  s->path_x1 = 0.02;
  s->ns = 61;
  s->n_o = 8;
  s->n_v = 4; /* clamped cubic: at least 4, as the settings loader demands (3 aborts inside GSL) */
  s->screening = 64;
  s->keep = 2;
  s->maxeval = 6;
  s->verify = 2;
}

/* the objective of a verified pass, written out (see tests/rollout_score_test.c for the definitions) */
static void direct_vobj(const kl_problem *pb, const kl_pass *ps, const double *o, const double *v, double *J,
                        double *rms)
{
  const double *gp = pb->gp;
  const int ns = pb->ns, n = ns - 1;
  double se = 0, over = 0, rough = 0, acc = 0, tfree = 0;
  for (int k = 1; k < ns; ++k) {
    const double F = (pb->set.measure & KL_MEASURE_AVG_BIT) ? ps->vFavg[k] : ps->vF[k];
    const double e = (F - pb->ft[k]) / gp[KL_GP_FREF];
    se += e * e;
    const double ov = F > gp[KL_GP_FMAX] ? (F - gp[KL_GP_FMAX]) / gp[KL_GP_FREF] : 0.0;
    over += ov * ov;
    const double a = fabs(0.5 * (v[k - 1] + v[k]) * (v[k] - v[k - 1]) / (pb->s[k] - pb->s[k - 1])) / gp[KL_GP_AMAX] - 1;
    if (a > 0) acc += a * a;
    if (k >= 2) {
      const double d2o = (o[k] - 2 * o[k - 1] + o[k - 2]) / gp[KL_GP_OSCALE];
      const double d2v = (v[k] - 2 * v[k - 1] + v[k - 2]) / gp[KL_GP_VSCALE];
      rough += d2o * d2o + d2v * d2v;
    }
    if (!ps->vc[k]) tfree += ps->vt[k] - ps->vt[k - 1];
  }
  const double T = ps->vt[ns - 1];
  *rms = sqrt(se / n);
  *J = gp[KL_GP_W_RMS] * *rms + gp[KL_GP_W_LOSS] * tfree / T + gp[KL_GP_W_OVER] * over / n +
       gp[KL_GP_W_TIME] * T / gp[KL_GP_TREF] + gp[KL_GP_W_ROUGH] * rough / (n - 1) + gp[KL_GP_W_ACC] * acc / n;
}

/* the small problem (small_settings) and a host handle on the OpenMP twin */
static void open_small(kl_settings *s, kl_problem **pb, kl_host **h)
{
  char msg[1024];
  small_settings(s);
  if (kl_problem_build(s, NULL, pb, msg, sizeof msg) != KELVIN_OK) fail_msg("build: %s", msg);
  kl_host_opts op;
  kl_host_opts_default(&op);
  op.cpu = 1;
  assert_int_equal(kl_host_create(h), KELVIN_OK);
  assert_int_equal(kl_host_open(*h, &op), KELVIN_OK);
}

/* Tolerances: the verified objective and RMS 2e-15 relative (the same sums in another order, measured
 * 1.3e-16); the agreement measure and the device objective against a serial rollout 1e-15 relative (the
 * same operations; the OpenMP twin runs the same code: measured 0). */
static void test_optimise_report(void **state)
{
  (void)state;
  kl_settings s;
  kl_problem *pb = NULL;
  kl_host *h = NULL;
  char msg[1024];
  open_small(&s, &pb, &h);
  /* the passes as the verification leaves them, ranked by it: without the correction stage (its passes and
   * their reference check are optimiser/correct_test.c's) */
  snprintf(pb->set.correct, sizeof pb->set.correct, "off");
  kl_opt_result *res = calloc(1, sizeof *res);
  assert_non_null(res);
  if (kl_optimise(pb, h, NULL, NULL, res, msg, sizeof msg) != KELVIN_OK) fail_msg("optimise: %s", msg);
  const int ns = pb->ns;
  double o[KL_PATH_MAX], v[KL_PATH_MAX];
  double worst_v = 0, worst_a = 0, worst_d = 0;
  int nver = 0, best = -1;
  assert_true(res->naive >= 0 && res->pass[res->naive].verified);
  for (int i = 0; i < res->npass; ++i) {
    const kl_pass *ps = &res->pass[i];
    kl_problem_expand(pb, ps->x, o, v);
    /* the device objective: one serial rollout of the same commands */
    double ov[2 * KL_PATH_MAX], obj[KL_OBJ_N];
    for (int k = 0; k < ns; ++k) ov[k] = o[k], ov[ns + k] = v[k];
    kl_grind_rollout(pb->gp, ns, pb->geo, ov, 1, 0, obj, 0, NULL);
    const double ed = fabs(ps->obj[KL_OBJ_J] - obj[KL_OBJ_J]) / obj[KL_OBJ_J];
    worst_d = fmax(worst_d, ed);
    if (!(ed <= 1e-15)) fail_msg("pass %s: device objective %.17g, serial rollout %.17g", ps->label, ps->obj[KL_OBJ_J],
                                 obj[KL_OBJ_J]);
    if (!ps->verified) continue;
    ++nver;
    double J, rms;
    direct_vobj(pb, ps, o, v, &J, &rms);
    const double ev = fmax(fabs(ps->vobj[KL_OBJ_J] - J) / J, fabs(ps->vobj[KL_OBJ_RMS] - rms) / rms);
    worst_v = fmax(worst_v, ev);
    if (!(ev <= 2e-15))
      fail_msg("pass %s: verified objective %.17g (rms %.17g), direct %.17g (%.17g)", ps->label, ps->vobj[KL_OBJ_J],
               ps->vobj[KL_OBJ_RMS], J, rms);
    /* agreement of the device prediction with the 3-D engine on what a wrist sensor reads: the holder
     * force plus the weight, F_h + F_g = F_N + m z'' by the tool's equation of motion, averaged over the
     * sample interval: the device's averaged contact force plus m (z'_k - z'_{k-1}) / T */
    assert_true(pb->set.measure == KL_MEASURE_SENSOR);
    double se = 0, mx = 0;
    for (int k = 1; k < ns; ++k) {
      const double T = ps->so[KL_SO_T * ns + k] - ps->so[KL_SO_T * ns + k - 1], m = 0.5 * (pb->meff[k - 1] + pb->meff[k]);
      const double sensor = ps->so[KL_SO_FAVG * ns + k] + m * (ps->so[KL_SO_ZD * ns + k] - ps->so[KL_SO_ZD * ns + k - 1]) / T;
      const double e = fabs(sensor - ps->vFavg[k]) / pb->gp[KL_GP_FREF];
      se += e * e;
      mx = fmax(mx, e);
    }
    const double arms = sqrt(se / (ns - 1));
    const double ea = fmax(fabs(ps->agree_rms - arms) / arms, fabs(ps->agree_max - mx) / mx);
    worst_a = fmax(worst_a, ea);
    if (!(ea <= 1e-15)) fail_msg("pass %s: agreement %.17g / %.17g, direct %.17g / %.17g", ps->label, ps->agree_rms,
                                 ps->agree_max, arms, mx);
    assert_true(ps->disagree == (arms > pb->set.agree_tol));
    if (i != res->naive && (best < 0 || ps->vobj[KL_OBJ_J] < res->pass[best].vobj[KL_OBJ_J])) best = i;
  }
  assert_true(nver == 1 + s.verify);
  /* the stage times (monotonic clock, disjoint stages inside the whole run): none negative, the 3-D
   * verification of 3 passes a real span of time, and together no longer than the run (1e-9 s: the
   * rounding of the differences of clock readings) */
  const kl_stage_time *T = &res->time;
  assert_true(T->setup >= 0 && T->screening >= 0 && T->refinement >= 0 && T->verification > 0);
  assert_true(T->setup + T->screening + T->refinement + T->verification <= T->total + 1e-9);
  if (res->best != best) fail_msg("winner %d (%s), the lowest verified objective is pass %d (%s)", res->best,
                                  res->best >= 0 ? res->pass[res->best].label : "-", best, res->pass[best].label);
  printf("  %d passes, %d verified: verified objective vs direct %.2e, agreement vs direct %.2e, device objective vs "
         "serial rollout %.2e (tolerances 2e-15, 1e-15, 1e-15); winner %s\n",
         res->npass, nver, worst_v, worst_a, worst_d, res->pass[res->best].label);
  kl_opt_result_free(res);
  free(res);
  kl_host_destroy(h);
  kl_problem_free(pb);
}

/* kl_verify of a pass the 3-D engine cannot run (a non-finite offset poked into an evaluated pass) fails
 * with KELVIN_ERR_ARG and says why in msg, as every kl_* call does: the sample and "offset must be
 * finite" (optimiser/verify3d.c), not an empty or stale message. */
static void test_verify_message(void **state)
{
  (void)state;
  kl_settings s;
  kl_problem *pb = NULL;
  kl_host *h = NULL;
  char msg[1024];
  open_small(&s, &pb, &h);
  kl_opt_result *res = calloc(1, sizeof *res);
  assert_non_null(res);
  const int ns = pb->ns;
  double o[KL_PATH_MAX], v[KL_PATH_MAX];
  for (int k = 0; k < ns; ++k) o[k] = pb->naive_o, v[k] = s.v_init;
  if (kl_evaluate(pb, h, o, v, NULL, NULL, res, msg, sizeof msg) != KELVIN_OK) fail_msg("evaluate: %s", msg);
  const int user = res->initial;
  assert_true(user >= 0 && res->pass[user].verified);
  res->pass[user].x[3] = NAN; /* sample 3's offset (control points = the samples) */
  res->pass[user].verified = 0;
  msg[0] = '\0';
  assert_int_equal(kl_verify(pb, NULL, res, &user, 1, NULL, NULL, msg, sizeof msg), KELVIN_ERR_ARG);
  printf("# %s\n", msg);
  assert_non_null(strstr(msg, "sample 3: offset must be finite"));
  kl_opt_result_free(res);
  free(res);
  kl_host_destroy(h);
  kl_problem_free(pb);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_optimise_report),
    cmocka_unit_test(test_verify_message),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
