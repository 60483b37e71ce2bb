/* tests/optimise_lm_test.c: the per-sample pipeline (optimiser.method lm, optimiser/lm.h) on a small
 * problem where the contact physics matters, on the OpenMP twin and on the OpenCL path: the stiff
 * spindle of examples/optimise_stiff.yaml (holder 5e5 N/m, a resin ball E = 200 MPa, the contact about
 * 64 % of the compliance at 8 N) over a 0.25 mm sheet step rising over 0.3 mm, on a 30 mm path sampled
 * every 0.1 mm (301 samples, 602 variables). The optimised pass, verified in the 3-D engine (the
 * judge, optimiser/verify3d.h), must miss the 8 N target by far less than the naive constant-offset
 * pass and by at most 1 % RMS (measured 0.61 %), its wrist-sensor force must stay within 20 % of the target at every
 * sample, and the commanded normal acceleration within the robot's limit (offset.max_accel).
 * The OpenCL part is skipped (exit 77 after the twin's) without an OpenCL device. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "host/host.h"
#include "optimiser/pipeline.h"
#include "optimiser/problem.h"

static kl_host *host; /* the path under test */

/* the stiff spindle of examples/optimise_stiff.yaml over a step */
static void stiff_step(kl_settings *s)
{
  kl_settings_default(s);
  s->surface = KL_SURF_SPHERE, s->radius = 0.8;
  s->bead_h = 0;
  s->step_h = 2.5e-4, s->step_w = 3e-4, s->step_x = -0.005;
  s->tilt_deg = 0.1, s->rough_a = 1e-6;
  s->path_x0 = -0.015, s->path_x1 = 0.015, s->ns = 301;
  s->extent[0] = 0.06, s->extent[1] = 0.02, s->resolution = 5e-5;
  s->tool_R = 0.01, s->tool_E = 200e6, s->tool_nu = 0.3, s->tool_mass = 3.0, s->tool_weight = 5.0;
  s->tool_inertia[0] = s->tool_inertia[1] = 0.04, s->tool_inertia[2] = 0.002;
  s->holder_K = 5e5, s->holder_D = 245, s->holder_Klat = 1e6, s->holder_Dlat = 350;
  s->holder_Krot = 1e4, s->holder_Drot = 4;
  s->cr = 0.3, s->target_F = 8.0, s->max_F = 16.0;
  s->method = KL_METHOD_LM, s->verify = 1;
  snprintf(s->correct, sizeof s->correct, "off"); /* the refinement's pass (the correction: optimiser/correct_test.c) */
}

static void outcome(void **state)
{
  (void)state;
  kl_settings s;
  stiff_step(&s);
  kl_problem *pb = NULL;
  char msg[1024];
  assert_int_equal(kl_problem_build(&s, NULL, &pb, msg, sizeof msg), KELVIN_OK);
  assert_int_equal(pb->nc, 2 * 301); /* a variable per sample: offset and speed */
  kl_opt_result *res = calloc(1, sizeof *res);
  const kelvin_status st = kl_optimise(pb, host, NULL, NULL, res, msg, sizeof msg);
  if (st != KELVIN_OK) printf("# %s\n", msg);
  assert_int_equal(st, KELVIN_OK);
  const kl_pass *b = &res->pass[res->best], *nv = &res->pass[res->naive];
  assert_true(b->verified && nv->verified);
  const int ns = pb->ns;
  double fmin3 = INFINITY, fmax3 = -INFINITY, amax = 0;
  for (int k = 1; k < ns; ++k) {
    fmin3 = fmin(fmin3, b->vFavg[k]);
    fmax3 = fmax(fmax3, b->vFavg[k]);
  }
  const double *o = b->x, *v = b->x + ns;
  for (int k = 1; k + 1 < ns; ++k) {
    const double ds = 0.5 * (pb->s[k + 1] - pb->s[k - 1]);
    amax = fmax(amax, fabs(o[k + 1] - 2 * o[k] + o[k - 1]) / (ds * ds) * v[k] * v[k]);
  }
  printf("# %s: naive %.2f %% predicted, %.2f %% verified; best '%s' %.3f %% predicted, %.3f %% verified (3-D); "
         "device vs 3-D %.3f %%; verified force %.3f..%.3f N; command acceleration <= %.3g m/s^2; %ld rollouts, "
         "%.2f s\n",
         kl_host_is_opencl(host) ? "OpenCL" : "OpenMP twin", 100 * nv->obj[KL_OBJ_RMS], 100 * nv->vobj[KL_OBJ_RMS],
         b->label, 100 * b->obj[KL_OBJ_RMS], 100 * b->vobj[KL_OBJ_RMS], 100 * b->agree_rms, fmin3, fmax3, amax,
         res->evaluations, res->time.total);
  assert_true(strcmp(b->label, "refined-1") == 0 || strcmp(b->label, "initial") == 0);
  assert_true(b->vobj[KL_OBJ_RMS] < 0.05 * nv->vobj[KL_OBJ_RMS]); /* far below the naive pass's */
  assert_true(b->vobj[KL_OBJ_RMS] < 0.01);                         /* bound: see the header */
  assert_true(fmin3 > 0.8 * 8.0 && fmax3 < 1.2 * 8.0);             /* within 20 % at every sample */
  assert_true(b->vobj[KL_OBJ_LOSS] == 0.0);
  assert_true(amax <= 1.05 * s.o_acc); /* the hinge is a penalty: 5 % over the limit allowed */
  /* the refinement did its part on the device: far below the static initial guess */
  int ref = -1;
  for (int i = 0; i < res->npass; ++i)
    if (strcmp(res->pass[i].label, "refined-1") == 0) ref = i;
  assert_true(ref >= 0);
  printf("# device RMS: initial %.4f %%, refined %.4f %%\n", 100 * res->pass[res->initial].obj[KL_OBJ_RMS],
         100 * res->pass[ref].obj[KL_OBJ_RMS]);
  assert_true(res->pass[ref].obj[KL_OBJ_RMS] < 0.2 * res->pass[res->initial].obj[KL_OBJ_RMS]);
  kl_opt_result_free(res);
  free(res);
  kl_problem_free(pb);
}

int main(void)
{
  kl_host_opts o;
  kl_host_opts_default(&o);
  o.cpu = 1;
  if (kl_host_create(&host) != KELVIN_OK || kl_host_open(host, &o) != KELVIN_OK) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(outcome)};
  int rc = cmocka_run_group_tests_name("OpenMP twin", tests, NULL, NULL);
  kl_host_destroy(host);
  if (rc) return rc;
  kl_host_opts_default(&o);
  if (kl_host_create(&host) != KELVIN_OK) return 1;
  const kelvin_status st = kl_host_open(host, &o);
  if (st != KELVIN_OK || !kl_host_is_opencl(host)) {
    fprintf(stderr, "optimise_lm_test: no OpenCL device with double precision (%s): the OpenCL path skipped\n",
            st == KELVIN_OK ? kl_host_notice(host) : kl_host_errmsg(host));
    kl_host_destroy(host);
    return 77;
  }
  printf("device: %s\n", kl_host_notice(host));
  rc = cmocka_run_group_tests_name("OpenCL", tests, NULL, NULL);
  kl_host_destroy(host);
  return rc;
}
