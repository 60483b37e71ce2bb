/* tests/cli_roundtrip_test.c: kelvin's outputs read back as inputs. `kelvin optimise` writes
 * trajectory.csv; `kelvin evaluate --pass trajectory.csv` (the same file, unedited: the pass reader
 * accepts the output's column names with units) must reproduce the optimised pass's verified figures:
 * the CPU-engine verification of the same offsets and speeds at the same samples. Both report.json files
 * are parsed back with cJSON (which also proves them valid JSON). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "tests/cli_util.h"

static char tmp[256];

static const char *small = "path: {samples: 81, start: -0.03, end: 0.03}\n"
                           "workpiece: {extent: [0.08, 0.03], resolution: 5e-4, bead: {x: 0.0}}\n"
                           "offset: {control_points: 8}\nspeed: {control_points: 4}\n"
                           "optimiser: {screening: 64, keep: 1, maxeval: 3}\nverify: {count: 1}\n";

static cJSON *report(const char *dir)
{
  char name[256];
  snprintf(name, sizeof name, "%s/report.json", dir);
  char *t = kl_test_read(tmp, name);
  assert_non_null(t);
  cJSON *j = cJSON_Parse(t);
  free(t);
  assert_non_null(j);
  return j;
}

/* the verified term `key` of the pass labelled `label` */
static double verified(cJSON *rep, const char *label, const char *key)
{
  cJSON *p;
  cJSON_ArrayForEach(p, cJSON_GetObjectItem(rep, "passes"))
  {
    if (strcmp(cJSON_GetObjectItem(p, "label")->valuestring, label) != 0) continue;
    cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(p, "verified"), key);
    assert_non_null(v);
    return v->valuedouble;
  }
  fail_msg("no pass '%s'", label);
  return NAN;
}

static void test_optimise_then_evaluate(void **state)
{
  (void)state;
  char err[16384];
  kl_test_write(tmp, "small.yaml", small);
  assert_int_equal(kl_test_kelvin(tmp, NULL, "optimise small.yaml --cpu --quiet --out opt", err, sizeof err), 0);
  const int rc = kl_test_kelvin(tmp, NULL, "evaluate small.yaml --pass opt/trajectory.csv --cpu --quiet --out ev", err,
                                sizeof err);
  printf("# evaluate --pass opt/trajectory.csv -> %d %s\n", rc, err);
  assert_int_equal(rc, 0);
  cJSON *a = report("opt"), *b = report("ev");
  const char *best = cJSON_GetObjectItem(a, "best")->valuestring;
  static const char *const keys[] = {"rms_force_error", "contact_loss", "over_force", "pass_time_s"};
  for (int i = 0; i < 4; ++i) {
    const double x = verified(a, best, keys[i]), y = verified(b, "user", keys[i]);
    printf("# verified %-16s optimise (%s) %.9g, evaluate --pass %.9g\n", keys[i], best, x, y);
    /* the same offsets and speeds at the same samples, held in trajectory.csv to 9 significant digits. The
     * engine's sub-steps are chosen by step doubling to a relative force tolerance (optimiser.force_tol,
     * 1e-3), so a change of 1e-9 in the commands can move the verified forces by up to that tolerance:
     * measured 4.5e-6 on the RMS error fraction (0.0720581 vs 0.0720536) and 0 on the pass time. Allowed:
     * 1e-4 on the fractions (about 20x the measured, 10x below the engine's tolerance), 1e-6 relative on
     * the pass time (set by the speeds alone). */
    if (i == 3)
      assert_true(fabs(x - y) <= 1e-6 * fabs(x));
    else
      assert_true(fabs(x - y) <= 1e-4);
  }
  /* and the metadata is there */
  assert_non_null(cJSON_GetObjectItem(b, "kelvin_version"));
  assert_non_null(cJSON_GetObjectItem(b, "config_fnv1a64"));
  cJSON_Delete(a);
  cJSON_Delete(b);
}

int main(void)
{
  snprintf(tmp, sizeof tmp, "/tmp/kelvin-cli-roundtrip-XXXXXX");
  if (!mkdtemp(tmp)) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_optimise_then_evaluate)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  kl_test_rmtree(tmp);
  return rc;
}
