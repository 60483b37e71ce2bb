/* tests/cli_bounce_test.c: `kelvin bounce` end to end as a user runs it: good runs write every
 * output, bad input gives one line naming the value, exit status 2, and nothing in the output folder. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "tests/cli_util.h"

static char tmpdir[256];

static int kelvin(const char *args, char *err, size_t cap) { return kl_test_kelvin(NULL, NULL, args, err, cap); }

/* each bad input: exit 2, exactly one line on stderr naming the offending value, folder untouched */
static void test_bad_input(void **state)
{
  (void)state;
  struct {
    const char *args, *must;
  } cases[] = {
    {"--cr 1.5", "1.5"},          {"--cr 0.5,0", "0"},       {"--mass -1", "-1"},
    {"--mass nan", "nan"},        {"--radius NaN", "NaN"},   {"--bogus", "--bogus"},
    {"--model xyz", "xyz"},       {"--dt 0", "--dt"},        {"--cr", "--cr"},
    {"--height 1e999", "1e999"},  {"--law nope --model hc", "nope"}, {"extra", "extra"},
    /* values only the engine's own check (kl_ball_check) refuses */
    {"--model hc --exponent 4", "exponent: must be in [1, 3], got 4"},
    {"--tol 0.5", "tolerance: must be in [1e-14, 1e-2], got 0.5"},
    /* an elastic Hunt-Crossley ball for 1e6 s: 1.1e6 impacts of 78 sub-steps, over the work limit (docs/design.md
     * section 8, "Bounded physics"), refused up front */
    {"--model hc --cr 1 --duration 1e6 --dt 100", "sub-steps over 1e+06 s (1.11e+06 impacts of about 78 sub-steps each"},
  };
  char out[512], args[1024], err[4096];
  snprintf(out, sizeof out, "%s/bad", tmpdir);
  mkdir(out, 0777);
  char keep[600];
  snprintf(keep, sizeof keep, "%s/summary.csv", out);
  kl_test_write(NULL, keep, "precious\n");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    snprintf(args, sizeof args, "bounce %s --out '%s'", cases[i].args, out);
    const int rc = kelvin(args, err, sizeof err);
    printf("# kelvin %s -> %d: %s", cases[i].args, rc, err);
    assert_int_equal(rc, 2);
    assert_int_equal(kl_test_lines(err), 1);
    assert_non_null(strstr(err, "kelvin: "));
    assert_non_null(strstr(err, cases[i].must));
    assert_int_equal(kl_test_count_files(out), 1);
  }
  char *k = kl_test_read(NULL, keep);
  assert_non_null(k);
  assert_string_equal(k, "precious\n");
  free(k);
}

static void test_good_run(void **state)
{
  (void)state;
  char out[512], args[1024], err[8192], path[700];
  snprintf(out, sizeof out, "%s/good", tmpdir);
  snprintf(args, sizeof args, "bounce --cr 0.8,1 --duration 2 --dt 0.01 --quiet --out '%s'", out);
  assert_int_equal(kelvin(args, err, sizeof err), 0);
  const char *files[] = {"bounce_cr0.80.csv", "bounce_cr1.00.csv", "first_contact_cr0.80.csv",
                         "first_contact_cr1.00.csv", "summary.csv", "summary.json"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
    snprintf(path, sizeof path, "%s/%s", out, files[i]);
    assert_int_equal(access(path, R_OK), 0);
  }
  assert_false(kl_test_has_tmp(out));
  /* summary: header + 2 rows; cr_eff of cr = 1 is 1 */
  snprintf(path, sizeof path, "%s/summary.csv", out);
  FILE *f = fopen(path, "r");
  char line[1024];
  int n = 0;
  double cr = 0, v = 0, dm = 0, fp = 0, tc = 0, ce = 0;
  while (fgets(line, sizeof line, f)) {
    if (n == 2) assert_int_equal(sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf", &cr, &v, &dm, &fp, &tc, &ce), 6);
    ++n;
  }
  fclose(f);
  assert_int_equal(n, 3);
  assert_true(cr == 1.0);
  assert_true(ce > 1 - 1e-9 && ce < 1 + 1e-9);
  /* the time series has one row per output instant: 2 s / 0.01 s + 1, plus the header line (no comments) */
  snprintf(path, sizeof path, "%s/bounce_cr1.00.csv", out);
  f = fopen(path, "r");
  n = 0;
  while (fgets(line, sizeof line, f)) ++n;
  fclose(f);
  assert_int_equal(n, 201 + 1);
}

/* the number after "key": in a JSON text (the first occurrence) */
static double json_number(const char *text, const char *key)
{
  char pat[128];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(text, pat);
  assert_non_null(p);
  return strtod(p + strlen(pat), NULL);
}

/* --model hc without --stiffness: Hunt-Crossley with the documented defaults (--help): exponent 1.5 and the
 * Hertz stiffness K = 4/3 E* sqrt(R) of two steel bodies (E = 210e9, nu = 0.3, R = 0.1), worked by hand:
 * E* = 1 / (2 (1 - 0.09) / 210e9) = 1.1538e11 Pa, K = 4.8650e10 N/m^1.5. The first contact's maximum
 * penetration is at most the undamped Hertz value ((n + 1) m v^2 / (2 K))^(1/(n + 1)) = 1.91e-4 m (damping
 * only takes energy during compression; gravity adds m g / F_peak ~ 1e-4 relative, hence 1.001) and at
 * least 0.8 of it (the compression loses at most all of the 1 - cr^2 = 36 %, and d_max^(n+1) scales with
 * the stored energy: 0.64^0.4 = 0.84). Kelvin-Voigt at its default 140e6 N/m would give 3.7e-4 m. */
static void test_model_hc(void **state)
{
  (void)state;
  char out[512], args[1024], err[8192], path[700];
  snprintf(out, sizeof out, "%s/hc", tmpdir);
  snprintf(args, sizeof args, "bounce --model hc --cr 0.8 --duration 0.5 --dt 0.01 --quiet --out '%s'", out);
  assert_int_equal(kelvin(args, err, sizeof err), 0);
  snprintf(path, sizeof path, "%s/summary.json", out);
  char *js = kl_test_read(NULL, path);
  assert_non_null(js);
  const char *mp = strstr(js, "\"model\":");
  assert_non_null(mp);
  mp += strlen("\"model\":");
  while (*mp == ' ' || *mp == '\t') ++mp;
  assert_int_equal(strncmp(mp, "\"hc\"", 4), 0);
  const double estar = 1.0 / (2.0 * (1.0 - 0.3 * 0.3) / 210e9), K = 4.0 / 3.0 * estar * sqrt(0.1);
  const double Kout = json_number(js, "stiffness"), n = json_number(js, "exponent");
  const double v = json_number(js, "impact_speed_m_s"), dmax = json_number(js, "max_penetration_m");
  const double dhertz = pow(2.5 * 1.0 * v * v / (2.0 * K), 1.0 / 2.5);
  printf("# hc: K %.10g (hand %.10g), n %g, dmax %.6g = %.4f of undamped Hertz\n", Kout, K, n, dmax, dmax / dhertz);
  assert_true(fabs(Kout / K - 1.0) < 1e-12); /* a few roundings apart */
  assert_true(n == 1.5);
  assert_true(fabs(v - sqrt(2.0 * 9.81)) < 1e-9);
  assert_true(dmax <= 1.001 * dhertz && dmax >= 0.8 * dhertz);
  free(js);
}

/* --material E,NU and --plane-material E,NU set the Hertz stiffness of --model hc: an aluminium ball
 * (70e9 Pa, 0.33) on a glass plane (62e9 Pa, 0.24) with the default R = 0.1 m, worked by hand:
 * E* = 1 / ((1 - 0.33^2) / 70e9 + (1 - 0.24^2) / 62e9) = 3.5804e10 Pa, K = 4/3 E* sqrt(0.1) = 1.5096e10
 * N/m^1.5 (the default steel pair gives 4.8650e10). The summary's stiffness is a few roundings from the
 * hand value (as in test_model_hc). */
static void test_materials(void **state)
{
  (void)state;
  char out[512], args[1024], err[8192], path[700];
  snprintf(out, sizeof out, "%s/mat", tmpdir);
  snprintf(args, sizeof args,
           "bounce --model hc --material 70e9,0.33 --plane-material 62e9,0.24 --cr 0.8 --duration 0.5 --dt 0.01 "
           "--quiet --out '%s'", out);
  const int rc = kelvin(args, err, sizeof err);
  if (rc != 0) printf("# %s", err);
  assert_int_equal(rc, 0);
  snprintf(path, sizeof path, "%s/summary.json", out);
  char *js = kl_test_read(NULL, path);
  assert_non_null(js);
  const double estar = 1.0 / ((1.0 - 0.33 * 0.33) / 70e9 + (1.0 - 0.24 * 0.24) / 62e9), K = 4.0 / 3.0 * estar * sqrt(0.1);
  const double Kout = json_number(js, "stiffness");
  printf("# materials: K %.10g (hand %.10g)\n", Kout, K);
  assert_true(fabs(Kout / K - 1.0) < 1e-12);
  free(js);
}

/* A run that ends before the ball reaches the plane (1 m drop: 0.45 s; --duration 0.2): no contact, so the
 * summary has no first contact to report. Its columns must say so (0 today, or nan as the missing apex
 * heights are written; either is accepted), never a value from uninitialised memory; contacts 0, no apex. */
static void test_no_contact(void **state)
{
  (void)state;
  char out[512], args[1024], err[8192], path[700], line[1024];
  snprintf(out, sizeof out, "%s/nocontact", tmpdir);
  snprintf(args, sizeof args, "bounce --cr 0.5 --duration 0.2 --dt 0.01 --quiet --out '%s'", out);
  assert_int_equal(kelvin(args, err, sizeof err), 0);
  snprintf(path, sizeof path, "%s/summary.csv", out);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  assert_non_null(fgets(line, sizeof line, f)); /* header */
  assert_non_null(fgets(line, sizeof line, f));
  fclose(f);
  printf("# no contact: %s", line);
  double v[12];
  char *p = line;
  for (int k = 0; k < 12; ++k) {
    v[k] = strtod(p, &p);
    if (*p == ',') ++p;
  }
  assert_true(v[0] == 0.5);
  for (int k = 1; k <= 6; ++k) /* impact speed .. energy dissipated: no first contact, so nan as for the apexes */
    if (!isnan(v[k])) fail_msg("column %d: %.17g without a contact", k + 1, v[k]);
  for (int k = 7; k <= 9; ++k) assert_true(isnan(v[k])); /* apex heights */
  assert_true(v[10] == 0.0); /* contacts */
}

/* lines of s that contain pat */
static int count_lines(const char *s, const char *pat)
{
  int n = 0;
  for (const char *p = s; (p = strstr(p, pat)); ++p) ++n;
  return n;
}

/* progress on stderr, as kelvin sweep gives it: none for a case shorter than a second (2 s of a Kelvin-Voigt
 * ball, ~0.01 s of wall time), at least a line a second with the share done for a longer one (the
 * Emden-Fowler ball for 60 s, some 8e5 sub-steps, ~1.5 s here: asserted when the case took more than 1.2 s
 * of wall time by its own summary, else reported); the height figure from its 200001 rows (--dt 0.3 ms) is
 * announced with an estimate (gnuplot reads ~4e5 rows a second) */
static void test_progress(void **state)
{
  (void)state;
  char out[512], args[1024], err[8192], path[700];
  snprintf(out, sizeof out, "%s/short", tmpdir);
  snprintf(args, sizeof args, "bounce --cr 0.8 --duration 2 --dt 0.01 --out '%s'", out);
  assert_int_equal(kelvin(args, err, sizeof err), 0);
  printf("# short run:\n%s", err);
  assert_int_equal(count_lines(err, "% (t = "), 0);
  assert_non_null(strstr(err, "bounce: cr 0.80 done"));
  snprintf(out, sizeof out, "%s/long", tmpdir);
  snprintf(args, sizeof args, "bounce --model ef --cr 0.2 --duration 60 --dt 0.0003 --out '%s'", out);
  assert_int_equal(kelvin(args, err, sizeof err), 0);
  printf("# long run:\n%s", err);
  snprintf(path, sizeof path, "%s/summary.json", out);
  char *js = kl_test_read(NULL, path);
  assert_non_null(js);
  const double wall = json_number(js, "wall_s");
  free(js);
  const int n = count_lines(err, "% (t = ");
  printf("# %.2f s of wall time, %d progress lines\n", wall, n);
  if (wall > 1.2)
    assert_true(n >= 1 && strstr(err, "bounce: cr 0.20: ") != NULL);
  else if (wall < 0.9)
    assert_int_equal(n, 0);
  assert_non_null(strstr(err, "bounce: drawing bounce_height.png from 200001 rows (~0.5 s)"));
}

static void test_help_version(void **state)
{
  (void)state;
  char err[4096];
  assert_int_equal(kelvin("--version", err, sizeof err), 0);
  assert_int_equal(kelvin("--help", err, sizeof err), 0);
  assert_int_equal(kelvin("bounce --help", err, sizeof err), 0);
  assert_int_equal(kelvin("frobnicate", err, sizeof err), 2);
  assert_non_null(strstr(err, "frobnicate"));
  assert_int_equal(kelvin("", err, sizeof err), 2);
}

int main(void)
{
  snprintf(tmpdir, sizeof tmpdir, "/tmp/kelvin-cli-test-XXXXXX");
  if (!mkdtemp(tmpdir)) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_bad_input), cmocka_unit_test(test_good_run),
                                     cmocka_unit_test(test_help_version),
                                     cmocka_unit_test(test_model_hc), cmocka_unit_test(test_materials),
                                     cmocka_unit_test(test_no_contact), cmocka_unit_test(test_progress)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  if (kl_test_rmtree(tmpdir) != 0) return 1;
  return rc;
}
