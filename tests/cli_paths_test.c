/* tests/cli_paths_test.c: no shell and no gnuplot code from user text. Every command that writes a
 * figure is run with input files and an output folder whose names hold shell and gnuplot
 * metacharacters, spaces, quotes, an apostrophe and unicode, and with a robot whose name is a shell
 * and gnuplot command. Each run must succeed, draw its figure, and leave no trace of the commands the
 * names carry: the marker files they would create must not exist anywhere under the test folder or
 * in the working folder. */
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

#include "tests/cli_util.h"

static char tmp[256];

/* A folder name a careless or hostile user could give: each command substitution, backquote and
 * separator would create a marker file if any shell (or gnuplot's backquote substitution) saw it. */
#define HOSTILE "o'brien \"q\" $(touch MARK1) `touch MARK2`; touch MARK3 & @x ü"

static int markers_left(void)
{
  char p[1024];
  const char *names[] = {"MARK1", "MARK2", "MARK3"};
  const char *dirs[] = {".", tmp};
  for (size_t d = 0; d < 2; ++d)
    for (size_t i = 0; i < 3; ++i) {
      snprintf(p, sizeof p, "%s/%s", dirs[d], names[i]);
      if (access(p, F_OK) == 0) return 1;
    }
  return 0;
}

/* run kelvin with an argument vector in tmp; stderr into err; exit status */
static int run(char *const *args, char *err, size_t cap)
{
  char exe[1024];
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  char *argv[32];
  argv[0] = exe;
  int n = 1;
  while (args[n - 1]) {
    argv[n] = args[n - 1];
    ++n;
  }
  argv[n] = NULL;
  const int rc = kl_test_run(tmp, NULL, argv, 2, err, cap);
  if (rc != 0) printf("kelvin %s: exit %d: %s\n", args[0], rc, err);
  return rc;
}

static void expect_png(const char *dir, const char *png)
{
  char p[2048];
  snprintf(p, sizeof p, "%s/%s/%s", tmp, dir, png);
  if (kl_test_have("gnuplot")) {
    if (access(p, R_OK) != 0) fail_msg("no figure %s", p);
  }
  assert_false(kl_test_has_tmp(dir));
}

static void test_hostile_paths(void **state)
{
  (void)state;
  char err[16384], in[512], out[512], scene[1024], robot[1024], path[1024], src[1024];
  snprintf(in, sizeof in, "%s/%s", tmp, HOSTILE);
  assert_int_equal(mkdir(in, 0700), 0);

  /* bounce: --out */
  snprintf(out, sizeof out, HOSTILE "/bounce");
  {
    char *a[] = {"bounce", "--cr", "0.8", "--duration", "1", "--quiet", "--out", out, NULL};
    assert_int_equal(run(a, err, sizeof err), 0);
  }
  expect_png(out, "bounce.png");

  /* simulate: the scene file and --out */
  snprintf(src, sizeof src, "%s/examples/ball_plane.yaml", KELVIN_SOURCE_DIR);
  char *text = kl_test_read(NULL, src);
  assert_non_null(text);
  snprintf(scene, sizeof scene, "%s/scene 'x' ü.yaml", in);
  kl_test_write(NULL, scene, text);
  free(text);
  snprintf(out, sizeof out, HOSTILE "/simulate");
  {
    char *a[] = {"simulate", "--quiet", "--out", out, scene, NULL};
    assert_int_equal(run(a, err, sizeof err), 0);
  }
  expect_png(out, "contact_forces.png");

  /* robot: a robot file whose name field is a command, a path file, --out */
  snprintf(robot, sizeof robot, "%s/arm $(touch MARK1).yaml", in);
  snprintf(src, sizeof src, "%s/examples/robot_er10.yaml", KELVIN_SOURCE_DIR);
  text = kl_test_read(NULL, src);
  assert_non_null(text);
  char *nm = strstr(text, "  name: ");
  assert_non_null(nm);
  char *eol = strchr(nm, '\n');
  char *mod = malloc(strlen(text) + 256);
  assert_non_null(mod);
  snprintf(mod, strlen(text) + 256, "%.*s  name: \"`touch MARK2` $(touch MARK3) o'brien ü\"%s", (int)(nm - text), text, eol);
  kl_test_write(NULL, robot, mod);
  free(mod);
  free(text);
  snprintf(out, sizeof out, HOSTILE "/robot");
  {
    char *a[] = {"robot", robot, "--quiet", "--out", out, NULL};
    assert_int_equal(run(a, err, sizeof err), 0);
  }
  expect_png(out, "robot_path.png");
  snprintf(path, sizeof path, "%s/%s/robot_path.csv", tmp, out);
  assert_int_equal(access(path, R_OK), 0);

  /* sweep: the config file and --out */
  snprintf(src, sizeof src, "%s/examples/sweep.yaml", KELVIN_SOURCE_DIR);
  text = kl_test_read(NULL, src);
  assert_non_null(text);
  snprintf(scene, sizeof scene, "%s/sweep `x`.yaml", in);
  kl_test_write(NULL, scene, text);
  free(text);
  snprintf(out, sizeof out, HOSTILE "/sweep");
  {
    char *a[] = {"sweep", "--cpu", "--quiet", "--out", out, scene, NULL};
    assert_int_equal(run(a, err, sizeof err), 0);
  }
  expect_png(out, "sweep.png");

  /* optimise: a small config and --out */
  snprintf(scene, sizeof scene, "%s/small $(touch MARK3).yaml", in);
  kl_test_write(NULL, scene,
                "path: {samples: 41, start: -0.02, end: 0.02}\n"
                "workpiece: {extent: [0.06, 0.03], resolution: 5e-4, bead: {x: 0.0}}\n"
                "offset: {control_points: 6}\nspeed: {control_points: 4}\n"
                "optimiser: {screening: 16, keep: 1, maxeval: 2}\nverify: {count: 1}\n");
  snprintf(out, sizeof out, HOSTILE "/optimise");
  {
    char *a[] = {"optimise", scene, "--cpu", "--quiet", "--out", out, NULL};
    assert_int_equal(run(a, err, sizeof err), 0);
  }
  expect_png(out, "optimise.png");

  assert_false(markers_left());
}

int main(void)
{
  snprintf(tmp, sizeof tmp, "/tmp/kelvin-cli-paths-XXXXXX");
  if (!mkdtemp(tmp)) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_hostile_paths)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  if (rc == 0 && kl_test_rmtree(tmp) != 0) return 1;
  return rc;
}
