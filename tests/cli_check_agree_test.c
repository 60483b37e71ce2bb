/* tests/cli_check_agree_test.c: `kelvin check` and `kelvin optimise` agree on the contact's share of the
 * compliance for every examples/optimise*.yaml (issue 30, "once means once"). The optimise side is the
 * problem `kelvin optimise` prepares (kl_settings_load, kl_inputs_load, kl_problem_build): its
 * contact_share is the figure the program prints in its headline and report.json writes; preparing it
 * here instead of running the optimisation keeps the test to a second. The two must print alike at
 * the check's precision (%.3g). And the disc example against a hand computation: a line contact of
 * width b = 0.01 m, K = (pi/4) E* b with 1/E* = (1 - 0.3^2)/50 MPa + (1 - 0.33^2)/70 GPa, linear, so
 * d(delta)/dF = 1/K, against the holder's 1/(5e5 N/m): 53.7 % (the check printed 96.7 % with a Hertz
 * exponent of 1.5 before). */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli_util.h"
#include "io/settings.h"
#include "optimiser/problem.h"

/* the share `kelvin check FILE` prints [%], NAN if none */
static double check_share(const char *file)
{
  char exe[1024], out[16384];
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  char *argv[] = {exe, (char *)"check", (char *)file, NULL};
  const int rc = kl_test_run(NULL, NULL, argv, 1, out, sizeof out);
  if (rc != 0) {
    printf("# check %s -> %d: %s", file, rc, out);
    return NAN;
  }
  const char *key = "the contact's share is ", *p = strstr(out, key);
  return p ? strtod(p + strlen(key), NULL) : NAN;
}

/* the share of the problem `kelvin optimise` prepares from FILE [%] */
static double optimise_share(const char *file)
{
  kl_settings s;
  kl_settings_default(&s);
  char msg[4096];
  kl_inputs in;
  memset(&in, 0, sizeof in);
  kl_problem *pb = NULL;
  kelvin_status st = kl_settings_load(&s, file, msg, sizeof msg);
  if (st == KELVIN_OK) st = kl_inputs_load(&s, &in, msg, sizeof msg);
  if (st == KELVIN_OK) st = kl_problem_build(&s, &in.in, &pb, msg, sizeof msg);
  if (st != KELVIN_OK) printf("# %s: %s\n", file, msg);
  const double share = st == KELVIN_OK ? 100.0 * pb->contact_share : NAN;
  kl_problem_free(pb);
  kl_inputs_free(&in);
  return share;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void test_every_example(void **state)
{
  (void)state;
  char *names[64];
  int n = 0;
  DIR *d = opendir(KELVIN_SOURCE_DIR "/examples");
  assert_non_null(d);
  for (struct dirent *e; (e = readdir(d)) != NULL && n < 64;) {
    const size_t len = strlen(e->d_name);
    if (strncmp(e->d_name, "optimise", 8) == 0 && len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0)
      names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof names[0], by_name);
  assert_true(n >= 7); /* optimise, _disc, _long, _part, _ramp, _robot, _stiff */
  int disc = 0;
  for (int i = 0; i < n; ++i) {
    char file[1024], a[32], b[32];
    snprintf(file, sizeof file, "%s/examples/%s", KELVIN_SOURCE_DIR, names[i]);
    const double c = check_share(file), o = optimise_share(file);
    snprintf(a, sizeof a, "%.3g", c);
    snprintf(b, sizeof b, "%.3g", o);
    printf("# %-22s check %s %%, optimise %s %% (%.6g)\n", names[i], a, b, o);
    assert_true(isfinite(c) && isfinite(o));
    assert_string_equal(a, b);
    if (strcmp(names[i], "optimise_disc.yaml") == 0) {
      const double Es = 1.0 / ((1 - 0.3 * 0.3) / 50e6 + (1 - 0.33 * 0.33) / 70e9);
      const double K = 0.25 * 3.14159265358979 * Es * 0.01;
      const double cc = 1.0 / K, share = 100.0 * cc / (cc + 1.0 / 5e5);
      printf("# disc: line contact by hand K = %.6g N/m, share %.4g %%\n", K, share);
      assert_true(fabs(c - share) <= 5e-3 * share); /* printed to 3 digits */
      assert_true(fabs(o - share) <= 1e-9 * share);
      disc = 1;
    }
    free(names[i]);
  }
  assert_true(disc);
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_example)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
