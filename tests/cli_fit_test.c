/* tests/cli_fit_test.c: `kelvin fit` end to end as a user runs it (docs/design.md section 2.6): the example
 * trace (synthetic: k 1e6, c 1.5e4, n1 1.5, n2 1, m 0.8, noise 0.5 N; its preamble) is fitted within 3 standard
 * errors of that truth and its outputs written; the metrics example with n2 and m fixed; an under-determined
 * fit and bad fit files exit 2 with one line naming the file, line and field, and nothing written. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "tests/cli_util.h"

static char tmpdir[256];
static const double TRUTH[5] = {1e6, 1.5e4, 1.5, 1.0, 0.8};
static const char *const NAMES[5] = {"k", "c", "n1", "n2", "m"};

static int kelvin(const char *args, char *err, size_t cap) { return kl_test_kelvin(NULL, NULL, args, err, cap); }

static cJSON *report(const char *dir)
{
  char *s = kl_test_read(dir, "report.json");
  assert_non_null(s);
  cJSON *j = cJSON_Parse(s);
  free(s);
  assert_non_null(j);
  return j;
}

static double num(const cJSON *o, const char *a, const char *b)
{
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
  if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
  assert_true(cJSON_IsNumber(x) || cJSON_IsBool(x));
  return cJSON_IsBool(x) ? cJSON_IsTrue(x) : x->valuedouble;
}

static void test_trace_example(void **state)
{
  (void)state;
  char out[512], args[1024], err[8192];
  snprintf(out, sizeof out, "%s/trace", tmpdir);
  snprintf(args, sizeof args, "fit '%s/examples/fit_trace.yaml' --quiet --out '%s'", KELVIN_SOURCE_DIR, out);
  const int rc = kelvin(args, err, sizeof err);
  if (rc) printf("# %s\n", err);
  assert_int_equal(rc, 0);
  cJSON *j = report(out);
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(j, "parameters");
  for (int i = 0; i < 5; ++i) {
    const double v = num(ps, NAMES[i], "value"), se = num(ps, NAMES[i], "se");
    printf("  %-2s truth %-8g fitted %-10.6g se %-9.3g (%+.2f se)\n", NAMES[i], TRUTH[i], v, se, (v - TRUTH[i]) / se);
    assert_true(se > 0 && fabs(v - TRUTH[i]) < 3 * se);
    assert_int_equal((int)num(ps, NAMES[i], "fixed"), 0);
  }
  assert_int_equal((int)num(j, "residuals", NULL), 150);
  assert_int_equal((int)num(j, "dof", NULL), 145);
  assert_true(fabs(num(j, "chi2", NULL) / 145 - 1) < 0.35);
  assert_true(fabs(num(j, "trace", "rms_residual_N") / 0.5 - 1) < 0.2);
  cJSON_Delete(j);
  /* the trace CSV: 150 rows, times from the contact's start (the file's 0.0100 s is 0.2 ms before it) */
  char *csv = kl_test_read(out, "fit_trace.csv");
  assert_non_null(csv);
  assert_int_equal(kl_test_lines(csv), 151);
  assert_true(!strncmp(csv, "t_s,measured_N,fitted_N,residual_N\n-0.0002,", 42));
  free(csv);
  char *pc = kl_test_read(out, "fit_params.csv");
  assert_non_null(pc);
  assert_true(!strncmp(pc, "parameter,value,se,fixed\nk,", 27));
  free(pc);
}

static void test_metrics_example(void **state)
{
  (void)state;
  char out[512], args[1024], err[8192];
  snprintf(out, sizeof out, "%s/metrics", tmpdir);
  snprintf(args, sizeof args, "fit '%s/examples/fit_metrics.yaml' --quiet --out '%s'", KELVIN_SOURCE_DIR, out);
  const int rc = kelvin(args, err, sizeof err);
  if (rc) printf("# %s\n", err);
  assert_int_equal(rc, 0);
  cJSON *j = report(out);
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(j, "parameters");
  for (int i = 0; i < 5; ++i) {
    const double v = num(ps, NAMES[i], "value"), se = num(ps, NAMES[i], "se");
    if (i >= 3) {
      assert_true(v == TRUTH[i] && se == 0 && num(ps, NAMES[i], "fixed") == 1);
      continue;
    }
    assert_true(se > 0 && fabs(v - TRUTH[i]) < 3 * se);
  }
  assert_int_equal((int)num(j, "dof", NULL), 0);
  cJSON_Delete(j);
  /* no trace: no trace outputs */
  struct stat sb;
  char p[700];
  snprintf(p, sizeof p, "%s/fit_trace.csv", out);
  assert_int_not_equal(stat(p, &sb), 0);
}

/* exit 2 with one line naming what is wrong; nothing written */
static void test_refused(void **state)
{
  (void)state;
  const struct {
    const char *yaml, *want;
  } bad[] = {
      {"mass: 0.05\nv0: 1\nmeasured:\n  peak_force: {value: 42, sd: 1}\n  contact_time: {value: 4e-3, sd: 1e-4}\n"
       "  restitution: {value: 0.7, sd: 0.01}\n",
       "under-determined: 3 measured numbers (metrics) for 5 free parameters (k, c, n1, n2, m)"},
      {"mass: 0.05\nv0: 1\nparameters:\n  m: {fixed: 0}\nmeasured:\n  restitution: {value: 0.7, sd: 0.01}\n",
       "bad.yaml:4: parameters.m.fixed: the rate exponent must be in (0, 5], got 0"}, /* the law's one domain */
      {"mass: 0.05\nv0: 1\nparameters:\n  n2: {start: 1, min: 0, max: 6}\nmeasured:\n  restitution: {value: 0.7, sd: 0.01}\n",
       "bad.yaml:4: parameters.n2.max: the damping's exponent of d must be in [0, 5], got 6"},
      {"mass: 0.05\nv0: 1\nmeasured:\n  peak_force: {value: 42}\n",
       "bad.yaml:4: measured.peak_force: needs value and sd"},
      {"mass: 0.05\nmeasured:\n  peak_force: {value: 42, sd: 1}\n", "bad.yaml: v0: missing"},
  };
  char out[512], args[2048], err[8192], path[512];
  snprintf(out, sizeof out, "%s/refused", tmpdir);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    kl_test_write(tmpdir, "bad.yaml", bad[i].yaml);
    snprintf(path, sizeof path, "%s/bad.yaml", tmpdir);
    snprintf(args, sizeof args, "fit '%s' --quiet --out '%s'", path, out);
    assert_int_equal(kelvin(args, err, sizeof err), 2);
    printf("# %s", err);
    assert_int_equal(kl_test_lines(err), 1);
    assert_non_null(strstr(err, bad[i].want));
    struct stat sb;
    assert_int_not_equal(stat(out, &sb), 0);
  }
  assert_int_equal(kelvin("fit --help", err, sizeof err), 0);
  assert_int_equal(kelvin("fit", err, sizeof err), 2);
  assert_int_equal(kelvin("fit a.yaml --frob", err, sizeof err), 2);
  assert_non_null(strstr(err, "--frob"));
}

int main(void)
{
  snprintf(tmpdir, sizeof tmpdir, "/tmp/kelvin-cli-fit-XXXXXX");
  if (!mkdtemp(tmpdir)) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_trace_example), cmocka_unit_test(test_metrics_example),
                                     cmocka_unit_test(test_refused)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  if (kl_test_rmtree(tmpdir) != 0) return 1;
  return rc;
}
