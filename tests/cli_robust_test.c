/* tests/cli_robust_test.c: `kelvin optimise` with an uncertainty: section and `kelvin evaluate --scenarios N` end to
 * end (docs/design.md section 10) on a small version of examples/optimise_robust.yaml: the files and their rows;
 * report.json's out-of-sample figures (mean, P95 as the ceil(0.95 S)-th smallest, the worst, the share in the band
 * and its Wilson interval) recomputed here from robust.csv's per-scenario rows; the table on stdout; bad options and
 * settings give one message naming the option or FILE:LINE, exit 2, no output; a later run without a check leaves no
 * stale robust.* files. The rollouts run on the OpenMP twin (--cpu). */
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

static char tmp[256];

#define BASE                                                                                                   \
  "workpiece: {surface: sphere, radius: 0.8, bead: {height: 2e-4, width: 1.0e-3, x: 0.01}, tilt_deg: 0.1,\n"   \
  "            extent: [0.04, 0.01], resolution: 2e-4, roughness: {amplitude: 0}}\n"                           \
  "tool: {radius: 0.01, E: 200e6, nu: 0.3, mass: 3.0, weight: 5.0, inertia: [0.04, 0.04, 0.002]}\n"           \
  "holder: {stiffness: 5e5, damping: 245, lateral_stiffness: 1e6, lateral_damping: 350,\n"                     \
  "         rotational_stiffness: 1e4, rotational_damping: 4}\n"                                              \
  "contact: {model: hc, law: exact, cr: 0.3}\n"                                                                \
  "target: {force: 8.0, max_force: 16.0}\n"                                                                    \
  "path: {start: 0.002, end: 0.018, samples: 41}\n"                                                            \
  "speed: {max: 0.1, max_accel: 1.0}\n"                                                                        \
  "objective: {time: 1.0}\n"                                                                                   \
  "verify: {count: 1}\n"
#define UNC(obj)                                                                                               \
  "uncertainty:\n"                                                                                             \
  "  scenarios: 16\n"                                                                                          \
  "  verify_scenarios: 40\n"                                                                                   \
  "  objective: " obj "\n"                                                                                     \
  "  force_min: 7\n"                                                                                           \
  "  force_max: 9\n"                                                                                           \
  "  holder_stiffness: 0.2\n"                                                                                  \
  "  holder_stiffness_dist: truncated\n"                                                                       \
  "  tool_mass: 0.2\n"                                                                                         \
  "  tool_mass_dist: truncated\n"

static void write_file(const char *name, const char *text) { kl_test_write(tmp, name, text); }
static char *slurp(const char *name) { return kl_test_read(tmp, name); }
/* run kelvin in tmp with its stdout into out */
static int kelvin(const char *args, char *out, size_t cap)
{
  static char abuf[4096];
  char *argv[64], exe[1024];
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  argv[0] = exe;
  kl_test_split(args, abuf, sizeof abuf, argv + 1, 63);
  return kl_test_run(tmp, NULL, argv, 1, out, cap);
}

static int exists(const char *name)
{
  char p[512];
  struct stat st;
  snprintf(p, sizeof p, "%s/%s", tmp, name);
  return stat(p, &st) == 0;
}

static int by_value(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* robust.csv's rows of pass `label` and source `src`: the column col (0 rms, 1 peak, 2 least, 3 loss, 4 in_band)
 * into v; the count */
static int column(const char *csv, const char *label, const char *src, int col, double *v, int cap)
{
  int n = 0;
  const char *line = strchr(csv, '\n') + 1; /* after the header */
  while (*line) {
    char pass[64], source[16];
    int sc;
    double x[5];
    if (sscanf(line, "%63[^,],%15[^,],%d,%lf,%lf,%lf,%lf,%lf", pass, source, &sc, x, x + 1, x + 2, x + 3, x + 4) == 8 &&
        strcmp(pass, label) == 0 && strcmp(source, src) == 0) {
      assert_true(n < cap);
      v[n++] = x[col];
    }
    const char *nl = strchr(line, '\n');
    if (!nl) break;
    line = nl + 1;
  }
  return n;
}

static double jnum(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItem(o, key);
  assert_non_null(v);
  return v->valuedouble;
}

/* report.json's figures of pass `label` against robust.csv's rows, recomputed here */
static void check_pass(const cJSON *check, const char *csv, const char *label, int S)
{
  const cJSON *passes = cJSON_GetObjectItem(check, "passes"), *p = NULL;
  for (int i = 0; i < cJSON_GetArraySize(passes); ++i)
    if (strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(passes, i), "pass")->valuestring, label) == 0)
      p = cJSON_GetArrayItem(passes, i);
  assert_non_null(p);
  static const char *const src[2] = {"device", "3-D"}, *const key[2] = {"device", "engine_3d"};
  for (int k = 0; k < 2; ++k) {
    double v[256];
    const cJSON *sj = cJSON_GetObjectItem(p, key[k]);
    assert_non_null(sj);
    assert_int_equal(column(csv, label, src[k], 0, v, 256), S);
    double mean = 0;
    for (int s = 0; s < S; ++s) mean += v[s] / S;
    qsort(v, (size_t)S, sizeof *v, by_value);
    const int r95 = (int)ceil(0.95 * S); /* the ceil(0.95 S)-th smallest */
    const double p95 = v[r95 - 1];
    const cJSON *rms = cJSON_GetObjectItem(sj, "rms");
    /* (robust.csv holds 6 significant digits) */
    assert_true(fabs(jnum(rms, "mean") - mean) <= 1e-5 * mean);
    assert_true(fabs(jnum(rms, "p95") - v[r95 - 1]) <= 1e-5 * v[r95 - 1]);
    assert_true(fabs(jnum(rms, "worst") - v[S - 1]) <= 1e-5 * v[S - 1]);
    assert_int_equal(column(csv, label, src[k], 4, v, 256), S);
    int in = 0;
    for (int s = 0; s < S; ++s) in += v[s] == 1.0;
    /* Wilson's score interval at 95 %: (p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n) */
    const double z = 1.96, n = S, ph = in / n, d = 1 + z * z / n, c = (ph + z * z / (2 * n)) / d;
    const double h = z / d * sqrt(ph * (1 - ph) / n + z * z / (4 * n * n));
    const cJSON *b = cJSON_GetObjectItem(sj, "in_band");
    assert_true(fabs(jnum(b, "share") - ph) < 1e-12);
    assert_true(fabs(jnum(b, "ci_lo") - fmax(0, c - h)) < 1e-4 && fabs(jnum(b, "ci_hi") - fmin(1, c + h)) < 1e-4);
    printf("# %s, %s: RMS mean %.4f P95 %.4f, in the band %d/%d\n", label, src[k], mean, p95, in, S);
  }
}

static void test_optimise(void **state)
{
  (void)state;
  write_file("r.yaml", BASE UNC("mean_std"));
  char out[16384];
  assert_int_equal(kelvin("optimise r.yaml --cpu --out o", out, sizeof out), 0);
  assert_non_null(strstr(out, "out of sample: 40 fresh scenarios"));
  assert_non_null(strstr(out, "| robust (best) |"));
  char *csv = slurp("o/robust.csv"), *bands = slurp("o/robust_bands.csv"), *rep = slurp("o/report.json");
  assert_non_null(csv);
  assert_non_null(bands);
  assert_non_null(rep);
  assert_int_equal(kl_test_lines(csv), 1 + 2 * 2 * 40); /* header, 2 passes x 2 sources x 40 scenarios */
  assert_int_equal(kl_test_lines(bands), 1 + 40);       /* header, samples 1 .. 40 */
  assert_true(strncmp(bands, "s_mm,target_N,refined-1_p5_N,", 29) == 0);
  cJSON *j = cJSON_Parse(rep);
  assert_non_null(j);
  const cJSON *check = cJSON_GetObjectItem(j, "check");
  assert_non_null(check);
  assert_int_equal((int)jnum(check, "scenarios"), 40);
  check_pass(check, csv, "refined-1", 40);
  check_pass(check, csv, "robust", 40);
  cJSON_Delete(j);
  free(csv);
  free(bands);
  free(rep);
  /* a run without uncertainty into the same folder leaves no robust.* of the first */
  write_file("n.yaml", BASE);
  assert_int_equal(kelvin("optimise n.yaml --cpu --quiet --out o", out, sizeof out), 0);
  assert_false(exists("o/robust.csv") || exists("o/robust_bands.csv") || exists("o/robust_peak.csv") ||
               exists("o/robust.png"));
  assert_true(exists("o/trajectory.csv"));
}

static void test_evaluate(void **state)
{
  (void)state;
  write_file("e.yaml", BASE UNC("nominal"));
  char out[16384];
  assert_int_equal(kelvin("optimise e.yaml --cpu --quiet --out e0", out, sizeof out), 0);
  assert_false(exists("e0/robust.csv")); /* objective nominal: no robust run, no check */
  assert_int_equal(kelvin("evaluate e.yaml --pass e0/trajectory.csv --scenarios 30 --cpu --out e1", out, sizeof out), 0);
  assert_non_null(strstr(out, "out of sample: 30 fresh scenarios"));
  char *csv = slurp("e1/robust.csv"), *rep = slurp("e1/report.json");
  assert_int_equal(kl_test_lines(csv), 1 + 2 * 30); /* the pass "user" on both sources */
  cJSON *j = cJSON_Parse(rep);
  check_pass(cJSON_GetObjectItem(j, "check"), csv, "user", 30);
  cJSON_Delete(j);
  free(csv);
  free(rep);
}

static void test_bad(void **state)
{
  (void)state;
  char err[4096];
  write_file("b.yaml", BASE UNC("mean"));
  assert_int_equal(kl_test_kelvin(tmp, NULL, "evaluate b.yaml --pass x.csv --scenarios -1 --out b1", err, sizeof err), 2);
  assert_non_null(strstr(err, "--scenarios"));
  assert_false(exists("b1"));
  write_file("b2.yaml", BASE UNC("often"));
  assert_int_equal(kl_test_kelvin(tmp, NULL, "optimise b2.yaml --cpu --out b2", err, sizeof err), 2);
  assert_non_null(strstr(err, "b2.yaml:"));
  assert_non_null(strstr(err, "uncertainty.objective"));
  assert_false(exists("b2"));
  /* the same seed for both sets: refused, naming the key where the file gives it */
  write_file("b3.yaml", BASE UNC("mean") "  seed: 5\n  verify_seed: 5\n");
  assert_int_equal(kl_test_kelvin(tmp, NULL, "optimise b3.yaml --cpu --out b3", err, sizeof err), 2);
  printf("# %s", err);
  assert_non_null(strstr(err, "seed"));
  assert_false(exists("b3"));
  /* chance with Levenberg-Marquardt */
  write_file("b4.yaml", BASE UNC("chance"));
  assert_int_equal(kl_test_kelvin(tmp, NULL, "optimise b4.yaml --cpu --out b4", err, sizeof err), 2);
  printf("# %s", err);
  assert_non_null(strstr(err, "optimiser.method nlopt"));
  assert_false(exists("b4"));
}

/* a robust objective without uncertainty.scenarios (its default 0: "no uncertainty, the nominal problem only",
 * optimiser/schema.c) is a nominal run: exit 0, no robust pass, no check and no robust.csv */
static void test_no_scenarios(void **state)
{
  (void)state;
  write_file("n.yaml", BASE "uncertainty: {objective: mean, verify_scenarios: 5}\n");
  char out[16384];
  assert_int_equal(kelvin("optimise n.yaml --cpu --out n0", out, sizeof out), 0);
  assert_null(strstr(out, "robust"));
  assert_null(strstr(out, "out of sample"));
  assert_true(exists("n0/report.json"));
  assert_false(exists("n0/robust.csv"));
}

int main(void)
{
  snprintf(tmp, sizeof tmp, "/tmp/kelvin-robust-test-XXXXXX");
  if (!mkdtemp(tmp)) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_bad), cmocka_unit_test(test_optimise),
                                     cmocka_unit_test(test_evaluate), cmocka_unit_test(test_no_scenarios)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  if (kl_test_rmtree(tmp) != 0) return 1;
  return rc;
}
