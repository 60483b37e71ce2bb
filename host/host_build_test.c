/* host/host_build_test.c: forced OpenCL program build failures give clear messages: a broken source
 * through the internal entry point kl_host_build, and a bad -D through KELVIN_CL_BUILD_OPTIONS that
 * breaks kernels/impact.cl, or kernels/rollout.cl on a rollout's first device batch. Needs an OpenCL device with fp64: returns 77 (skipped) without one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "host/host.h"
#include "host/impact_batch.h"
#include "host/rollout_batch.h"

/* Open the default OpenCL device into *h with extra build options (NULL: the env var). */
static kelvin_status open_cl(kl_host **h, const char *extra_options)
{
  kl_host_opts o;
  kl_host_opts_default(&o);
  o.build_options = extra_options;
  if (!*h && kl_host_create(h) != KELVIN_OK) return KELVIN_ERR_NOMEM;
  return kl_host_open(*h, &o);
}

/* A broken program source through the internal entry point: KELVIN_ERR_BUILD with the compiler log,
 * which points at the file named by the #line marker. */
static void test_broken_source(void **state)
{
  (void)state;
  kl_host *h = NULL;
  assert_int_equal(open_cl(&h, ""), KELVIN_OK);
  const char *src = "#line 1 \"kernels/broken.cl\"\n"
                    "__kernel void broken(__global double *x)\n"
                    "{\n"
                    "  x[0] = no_such_function(x[1]);\n"
                    "}\n";
  cl_program prog = (cl_program)1;
  assert_int_equal(kl_host_build(h, "kernels/broken.cl", src, &prog), KELVIN_ERR_BUILD);
  assert_null(prog);
  const char *m = kl_host_errmsg(h);
  printf("message: %.600s\n", m);
  assert_non_null(strstr(m, "OpenCL build of kernels/broken.cl failed"));
  assert_non_null(strstr(m, "CL_BUILD_PROGRAM_FAILURE"));
  assert_non_null(strstr(m, "no_such_function"));
  /* #line 1 names the line after it: where the compiler gives a location, it is x[0] = ... as
   * "broken.cl:3" (pocl; NVIDIA's "<kernel>:4:10:" mapped by kl_cl_log_map). NVIDIA's driver (580),
   * building the same source again from its cache, logs only ptxas's "Unresolved extern function
   * 'no_such_function'", with no location at all. */
  assert_null(strstr(m, "<kernel>:"));
  assert_true(strstr(m, "broken.cl:3") || (strstr(m, "ptxas") && !strstr(m, "broken.cl:")));
  /* the handle still works after a failed build */
  assert_int_equal(kl_host_build(h, "ok.cl", "__kernel void ok(__global double *x) { x[0] = 1.0; }", &prog),
                   KELVIN_OK);
  clReleaseProgram(prog);
  kl_host_destroy(h);
}

/* A bad -D through the build-options env var breaks the real program. Opening builds nothing (each
 * program is built when first needed); the impact program's build, asked for directly or by the first
 * impact batch, fails with the log and leaves the handle open; reopening with good options works. */
static void test_bad_build_option(void **state)
{
  (void)state;
  kl_host *h = NULL;
  assert_int_equal(open_cl(&h, ""), KELVIN_OK);
  kl_host_opts o;
  kl_host_opts_default(&o);
  setenv("KELVIN_CL_BUILD_OPTIONS", "-DKL_WGS=banana", 1);
  const kelvin_status so = kl_host_open(h, &o);
  unsetenv("KELVIN_CL_BUILD_OPTIONS");
  assert_int_equal(so, KELVIN_OK);
  assert_true(kl_host_build_seconds(h) == 0.0); /* nothing built yet */
  kl_impact_batch *b = NULL;
  assert_int_equal(kl_impact_batch_create(100, 0, &b), KELVIN_OK);
  for (size_t i = 0; i < 100; ++i) {
    kl_impact_in in;
    memset(&in, 0, sizeof in);
    in.model = KL_MODEL_KV;
    in.m = 1.0;
    in.K = 1e6;
    in.n = 1.0;
    in.cr = 0.5;
    in.v0 = 1.0;
    kl_impact_batch_set(b, i, in);
  }
  for (int attempt = 0; attempt < 2; ++attempt) { /* the batch's build, then the direct one again */
    const kelvin_status st = attempt == 0 ? kl_impact_run(h, b, NULL, NULL) : kl_host_build_impact(h);
    assert_int_equal(st, KELVIN_ERR_BUILD);
    const char *m = kl_host_errmsg(h);
    printf("message: %.700s\n", m);
    assert_non_null(strstr(m, "OpenCL build of kernels/impact.cl failed"));
    assert_non_null(strstr(m, "-DKL_WGS=banana"));
    assert_non_null(strstr(m, "banana")); /* and the compiler's complaint */
    assert_non_null(strstr(m, "kernels/impact.cl:"));
    assert_true(kl_host_is_opencl(h)); /* a failed build leaves the handle open */
  }
  /* reopening with good options works */
  assert_int_equal(kl_host_open(h, &o), KELVIN_OK);
  assert_true(kl_host_is_opencl(h));
  assert_int_equal(kl_impact_run(h, b, NULL, NULL), KELVIN_OK);
  assert_true(kl_host_build_seconds(h) > 0.0);
  assert_true(b->y[KL_OUT_DMAX * 100] > 0.0 && b->status[0] == KL_OK); /* the run filled the table */
  kl_impact_batch_destroy(b);
  kl_host_destroy(h);
}

/* The rollout program is built by the first batch that runs on the device: creating a rollout builds
 * nothing, a bad build option then fails that batch with the log (KELVIN_ERR_BUILD), and the next batch
 * tries again and fails the same way (nothing half-made is kept; ASan would see a double release). The
 * build fails before any candidate is rolled out, so the problem's data can be zeros. */
static void test_rollout_build_failure(void **state)
{
  (void)state;
  kl_host *h = NULL;
  setenv("KELVIN_CL_BUILD_OPTIONS", "-DKL_ROLLOUT_H=banana", 1); /* kernels/kl_rollout.h left out */
  const kelvin_status so = open_cl(&h, NULL);
  unsetenv("KELVIN_CL_BUILD_OPTIONS");
  assert_int_equal(so, KELVIN_OK);
  double gp[KL_GP_N], geo[2 * KL_GG_N], ctrl[4], obj[KL_OBJ_N];
  memset(gp, 0, sizeof gp);
  memset(geo, 0, sizeof geo);
  memset(ctrl, 0, sizeof ctrl);
  const kl_rollout_def def = {2, 4, gp, geo, NULL, 0, NULL, NULL}; /* every batch on the device */
  kl_rollout *r = NULL;
  assert_int_equal(kl_rollout_create(h, &def, &r), KELVIN_OK);
  assert_true(kl_host_build_seconds(h) == 0.0); /* nothing built yet */
  for (int attempt = 0; attempt < 2; ++attempt) {
    assert_int_equal(kl_rollout_eval(r, 1, ctrl, obj, NULL), KELVIN_ERR_BUILD);
    const char *m = kl_host_errmsg(h);
    printf("message: %.300s\n", m);
    assert_non_null(strstr(m, "OpenCL build of kernels/rollout.cl failed"));
    assert_non_null(strstr(m, "-DKL_ROLLOUT_H=banana"));
    /* the compiler's complaint: located on pocl ("kernels/rollout.cl:16:3: use of undeclared
     * identifier"); NVIDIA's driver (580) takes the call as an implicit declaration and its log has only
     * ptxas's "Unresolved extern function 'kl_grind_rollout_tl'", with no location, on a first build too */
    assert_null(strstr(m, "<kernel>:"));
    assert_true(strstr(m, "kernels/rollout.cl:") || (strstr(m, "ptxas") && strstr(m, "kl_grind_rollout")));
  }
  assert_int_equal((int)kl_rollout_count(r), 0);
  kl_rollout_destroy(r);
  kl_host_destroy(h);
}

int main(void)
{
  kl_host *h = NULL;
  const kelvin_status st = open_cl(&h, "");
  if (st != KELVIN_OK || !kl_host_is_opencl(h)) {
    fprintf(stderr, "host_build_test: skipped: no OpenCL device with double precision (%s%s)\n",
            st == KELVIN_OK ? kl_host_notice(h) : "", st == KELVIN_OK ? "" : kl_host_errmsg(h));
    kl_host_destroy(h);
    return 77;
  }
  kl_host_destroy(h);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_broken_source),
    cmocka_unit_test(test_bad_build_option),
    cmocka_unit_test(test_rollout_build_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
