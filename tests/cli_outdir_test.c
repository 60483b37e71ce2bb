/* tests/cli_outdir_test.c: (issue 31, item 6) messages that name the file and line and carry no
 * non-finite number: a path CSV at 1e300 m or of one repeated point, a drop of 1e308 m. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <cmocka.h>

#include "tests/cli_util.h"

static char tmp[256];

/* one line on stderr, "kelvin: ..." with must in it, and no non-finite number where a number was meant */
static int one_line(const char *err, const char *must)
{
  return strncmp(err, "kelvin: ", 8) == 0 && kl_test_lines(err) == 1 && err[strlen(err) - 1] == '\n' && strstr(err, must) &&
         !strstr(err, "nan") && !strstr(err, "inf ") && !strstr(err, "inf,") && !strstr(err, "Sanitizer");
}

/* a case's own folder under tmp */
static void casedir(char *dir, size_t cap, const char *name)
{
  snprintf(dir, cap, "%s/%s", tmp, name);
  assert_int_equal(mkdir(dir, 0777), 0);
}

/* Messages naming the file and line, with no nan or inf: a path CSV at 1e300 m or of one repeated point
 * through every command that reads one, and a drop of 1e308 m */
static void test_messages(void **state)
{
  (void)state;
  char dir[512], err[4096], args[1024];
  casedir(dir, sizeof dir, "messages");
  kl_test_write(dir, "big.csv", "x_m,y_m,z_m,nx,ny,nz\n-0.02,0,0,0,0,1\n0,0,0,0,0,1\n1e300,0,0,0,0,1\n");
  kl_test_write(dir, "rep.csv", "x_m,y_m,z_m,nx,ny,nz\n0.01,0,0,0,0,1\n0.01,0,0,0,0,1\n0.01,0,0,0,0,1\n");
  kl_test_write(dir, "big.yaml", "path: {csv: big.csv, samples: 41}\nworkpiece: {extent: [0.06, 0.02], resolution: 1e-3}\n");
  kl_test_write(dir, "rep.yaml", "path: {csv: rep.csv, samples: 41}\nworkpiece: {extent: [0.06, 0.02], resolution: 1e-3}\n");
  kl_test_write(dir, "pass.csv", "s_m,offset_m,speed_m_s\n0,0.0006,0.015\n0.04,0.0006,0.015\n");
  static const struct {
    const char *args;
    int rc;
    const char *must;
  } cases[] = {
    {"optimise big.yaml --cpu --out prev --quiet", 2, "big.csv:4: column 'x_m': must be within +-1000 m (the limit; the path is read in metres), got 1e+300"},
    {"evaluate big.yaml --cpu --out prev --quiet", 2, "big.csv:4: column 'x_m': must be within +-1000 m"},
    {"check big.csv", 2, "big.csv:4: column 'x_m': must be within +-1000 m"},
    {"robot @ROBOT --path big.csv --out prev --quiet", 2, "big.csv:4: column 'x_m': must be within +-1000 m"},
    {"optimise rep.yaml --cpu --out prev --quiet", 2, "rep.csv:3: columns x,y,z: the point repeats the previous sample (line 2), as every point does"},
    {"check rep.csv", 2, "rep.csv:3: columns x,y,z: the point repeats the previous sample (line 2)"},
    {"robot @ROBOT --path rep.csv --out prev --quiet", 2, "rep.csv:3: columns x,y,z: the point repeats the previous sample (line 2)"},
    {"bounce --height 1e308 --out prev --quiet", 2, "height: 1e+308 m at 0 m/s gives an impact speed sqrt(v^2 + 2 g h) beyond double precision"},
    {"bounce --height 1e308 --cr 0.5 --out prev --quiet", 2, "bounce: height: 1e+308 m"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const char *at = strstr(cases[i].args, "@ROBOT");
    if (at)
      snprintf(args, sizeof args, "%.*s%s/examples/robot_er10.yaml%s", (int)(at - cases[i].args), cases[i].args,
               KELVIN_SOURCE_DIR, at + 6);
    else
      snprintf(args, sizeof args, "%s", cases[i].args);
    if (strncmp(args, "evaluate", 8) == 0) strcat(args, " --pass pass.csv");
    const int rc = kl_test_kelvin(dir, NULL, args, err, sizeof err);
    printf("# %s -> %d: %s", cases[i].args, rc, err);
    assert_int_equal(rc, cases[i].rc);
    assert_true(one_line(err, cases[i].must));
    assert_int_equal(kl_test_count_files(dir), 5); /* no output folder made */
  }
}

static int setup(void **state)
{
  (void)state;
  snprintf(tmp, sizeof tmp, "/tmp/kl_cli_outdir_XXXXXX");
  assert_non_null(mkdtemp(tmp));
  assert_int_equal(chdir(tmp), 0);
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  assert_int_equal(chdir("/"), 0);
  kl_test_rmtree(tmp);
  return 0;
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_messages)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
