/* tests/cli_robot_test.c: `kelvin robot` end to end as a user runs it: the built-in arm, the YAML and
 * the URDF of the same arm give the same numbers; a path CSV and --base work; bad robot and path files
 * give one line naming the file, line and field, exit 2 and nothing written; an unreachable path
 * exits 1 naming the sample, with the CSV still written. */
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

/* whole file into a malloc'd string; it must exist */
static char *slurp(const char *path)
{
  char *s = kl_test_read(NULL, path);
  assert_non_null(s);
  return s;
}

/* write text to path */
static void spit(const char *path, const char *text) { kl_test_write(NULL, path, text); }

/* the m_eff, vmax, reach columns of robot_path.csv in dir; returns the sample count */
static int read_result(const char *dir, double *meff, double *vmax, int *reach, int cap)
{
  char path[700], line[4096];
  snprintf(path, sizeof path, "%s/robot_path.csv", dir);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  int n = 0, row = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || row++ == 0) continue; /* comment, header */
    double v[11];
    char *p = line;
    for (int k = 0; k < 11; ++k) {
      v[k] = strtod(p, &p);
      if (*p == ',') ++p;
    }
    assert_true(n < cap);
    meff[n] = v[7], vmax[n] = v[8], reach[n] = (int)v[9];
    ++n;
  }
  fclose(f);
  return n;
}

static void test_same_arm_three_ways(void **state)
{
  (void)state;
  char out[3][512], args[2048], err[8192];
  const char *src[3] = {"", KELVIN_SOURCE_DIR "/examples/robot_er10.yaml", KELVIN_SOURCE_DIR "/examples/robot_er10.urdf"};
  static double meff[3][400], vmax[3][400];
  static int reach[3][400];
  for (int i = 0; i < 3; ++i) {
    snprintf(out[i], sizeof out[i], "%s/same%d", tmpdir, i);
    snprintf(args, sizeof args, "robot %s%s%s --quiet --out '%s'", i ? "'" : "", src[i], i ? "'" : "", out[i]);
    const int rc = kelvin(args, err, sizeof err);
    if (rc) printf("# %s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(kl_test_lines(err), 0);
    assert_int_equal(read_result(out[i], meff[i], vmax[i], reach[i], 400), 200);
  }
  double dm = 0, dv = 0, mlo = INFINITY, mhi = 0, vlo = INFINITY, vhi = 0;
  for (int k = 0; k < 200; ++k) {
    for (int i = 0; i < 3; ++i) assert_int_equal(reach[i][k], 1);
    assert_true(meff[1][k] == meff[0][k] && vmax[1][k] == vmax[0][k]); /* YAML = built-in, the same numbers */
    dm = fmax(dm, fabs(meff[2][k] - meff[0][k]) / meff[0][k]);
    dv = fmax(dv, fabs(vmax[2][k] - vmax[0][k]) / vmax[0][k]);
    mlo = fmin(mlo, meff[0][k]), mhi = fmax(mhi, meff[0][k]), vlo = fmin(vlo, vmax[0][k]), vhi = fmax(vhi, vmax[0][k]);
  }
  printf("# default path: m_eff %.4g..%.4g kg, vmax %.4g..%.4g m/s; URDF vs DH: max relative difference m_eff %.3g, "
         "vmax %.3g\n", mlo, mhi, vlo, vhi, dm, dv);
  assert_true(dm < 1e-10 && dv < 1e-10); /* round-off of two frame conventions, ~1e-15; CSV keeps 12 digits */
  char png[700];
  snprintf(png, sizeof png, "%s/robot_path.png", out[0]);
  if (kl_test_have("gnuplot")) assert_int_equal(access(png, R_OK), 0);
}

static void test_path_file_and_base(void **state)
{
  (void)state;
  char path[600], out[512], args[2048], err[8192];
  snprintf(path, sizeof path, "%s/line.csv", tmpdir);
  /* a 100 mm line along y on a flat table 0.1 m below the base, base moved by --base */
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "# a flat pass\ns, x ,y,z,nx,ny,nz\n");
  for (int k = 0; k < 11; ++k) fprintf(f, "%g,1.5,%g,0.1,0,0,1\n", 0.01 * k, -0.05 + 0.01 * k);
  fclose(f);
  snprintf(out, sizeof out, "%s/line", tmpdir);
  snprintf(args, sizeof args, "robot --path '%s' --base 1.0,0,0.2 --out '%s'", path, out);
  assert_int_equal(kelvin(args, err, sizeof err), 0);
  double meff[20], vmax[20];
  int reach[20];
  assert_int_equal(read_result(out, meff, vmax, reach, 20), 11);
  for (int k = 0; k < 11; ++k) assert_true(reach[k] == 1 && meff[k] > 0 && vmax[k] > 0);
}

/* exit 2, one line naming the things in must[], output folder untouched */
static void expect_usage(const char *args, const char *const *must, const char *out)
{
  char err[8192];
  const int rc = kelvin(args, err, sizeof err);
  printf("# kelvin %s\n#   -> %d: %s", args, rc, err);
  assert_int_equal(rc, 2);
  assert_int_equal(kl_test_lines(err), 1);
  assert_non_null(strstr(err, "kelvin: "));
  for (int i = 0; must[i]; ++i) {
    if (!strstr(err, must[i])) printf("# missing '%s'\n", must[i]);
    assert_non_null(strstr(err, must[i]));
  }
  assert_int_equal(kl_test_count_files(out), 1);
}

/* line number (1-based) of the first occurrence of needle in text */
static int line_of(const char *text, const char *needle)
{
  const char *p = strstr(text, needle);
  assert_non_null(p);
  int n = 1;
  for (const char *c = text; c < p; ++c) n += *c == '\n';
  return n;
}

static void test_bad_robot_files(void **state)
{
  (void)state;
  char *yaml = slurp(KELVIN_SOURCE_DIR "/examples/robot_er10.yaml");
  char out[512], keep[600], args[2048];
  snprintf(out, sizeof out, "%s/bad", tmpdir);
  mkdir(out, 0777);
  snprintf(keep, sizeof keep, "%s/robot_path.csv", out);
  spit(keep, "precious\n");
  /* one edit of the example per case: what it becomes, and the field the message must name */
  struct {
    const char *from, *to, *field;
  } cases[] = {
    {"stiffness: 1.2e5, mass: 9.0", "stiffness: 1.2e5, masss: 9.0", "robot.joints[1].masss: unknown key"},
    {"mass: 6.0", "mass: -3", "robot.joints[2].mass: must be > 0 kg, got -3"},
    {"[0.0055, 0.0055, 0.0015, 0, 0, 0]", "[0.0055, 0.0055, -0.0015, 0, 0, 0]", "robot.tool.inertia: not positive definite"},
    {"[0.03, 0.006, 0.03, 0, 0, 0]", "[0.03, 0.006, 0.09, 0, 0, 0]", "robot.joints[3].inertia: not a rigid body's inertia"},
    {"convention: dh", "convention: xyz", "robot.convention: must be dh"},
    {"limits_deg: [-130, 130]", "limits_deg: [130, -130]", "robot.joints[4].limits_deg: need lower < upper"},
    {"speed_deg_s: 600", "speed_deg_s: fast", "robot.joints[5].speed_deg_s: must be a finite number, got 'fast'"},
    {"home_deg: [0, 20, 30, 0, 40, 0]", "home_deg: [0, 20, 30, 0, 40]", "robot.home_deg: must have one angle per joint"},
    {"  name: er10-illustrative", "  name: er10-illustrative\n  colour: orange", "robot.colour: unknown key"},
    {"com: [0, 0, 0.06]", "com: [0, 0]", "robot.tool.com: must be a list of 3 numbers, got 2"},
  };
  char path[600], field[300];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const char *at = strstr(yaml, cases[i].from);
    assert_non_null(at);
    const size_t pre = (size_t)(at - yaml);
    char *t = malloc(strlen(yaml) + strlen(cases[i].to) + 1);
    assert_non_null(t);
    memcpy(t, yaml, pre);
    strcpy(t + pre, cases[i].to);
    strcat(t, at + strlen(cases[i].from));
    snprintf(path, sizeof path, "%s/case%zu.yaml", tmpdir, i);
    spit(path, t);
    /* the line of the offending value (the key's line for unknown keys) */
    const char *key = strstr(cases[i].to, "masss") ? "masss" : strstr(cases[i].to, "colour") ? "colour" : cases[i].to;
    char loc[700];
    snprintf(loc, sizeof loc, "%s:%d: ", path, line_of(t, key));
    snprintf(field, sizeof field, "%s", cases[i].field);
    snprintf(args, sizeof args, "robot '%s' --out '%s'", path, out);
    const char *must[] = {loc, field, NULL};
    expect_usage(args, must, out);
    free(t);
  }
  free(yaml);
  /* files that cannot be used at all */
  snprintf(path, sizeof path, "%s/nothing-here.yaml", tmpdir);
  snprintf(args, sizeof args, "robot '%s' --out '%s'", path, out);
  const char *m1[] = {path, "cannot read", NULL};
  expect_usage(args, m1, out);
  snprintf(path, sizeof path, "%s/robot.txt", tmpdir);
  spit(path, "robot: {}\n");
  snprintf(args, sizeof args, "robot '%s' --out '%s'", path, out);
  const char *m2[] = {path, "unknown robot file type", NULL};
  expect_usage(args, m2, out);
  snprintf(path, sizeof path, "%s/syntax.yaml", tmpdir);
  spit(path, "robot:\n  convention: dh\n  joints: [\n");
  snprintf(args, sizeof args, "robot '%s' --out '%s'", path, out);
  const char *m3[] = {path, "malformed YAML", NULL};
  expect_usage(args, m3, out);
  snprintf(path, sizeof path, "%s/neg.urdf", tmpdir);
  spit(path, "<robot name='x'>\n<link name='a'/>\n<joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
             "<limit lower='-1' upper='1' velocity='1'/></joint>\n<link name='b'><inertial>\n<mass value='-1'/>\n"
             "<inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>\n</robot>\n");
  snprintf(args, sizeof args, "robot '%s' --out '%s'", path, out);
  char loc[700];
  snprintf(loc, sizeof loc, "%s:5: ", path);
  const char *m4[] = {loc, "<mass> value: must be >= 0 kg, got -1", NULL};
  expect_usage(args, m4, out);
  /* options */
  snprintf(args, sizeof args, "robot --base 1,2 --out '%s'", out);
  const char *m5[] = {"--base", "1,2", NULL};
  expect_usage(args, m5, out);
  snprintf(args, sizeof args, "robot a.yaml b.yaml --out '%s'", out);
  const char *m6[] = {"b.yaml", NULL};
  expect_usage(args, m6, out);
  char *k = slurp(keep);
  assert_string_equal(k, "precious\n");
  free(k);
}

static void test_bad_path_files(void **state)
{
  (void)state;
  char out[512], keep[600], path[600], args[2048], loc[700];
  snprintf(out, sizeof out, "%s/badpath", tmpdir);
  mkdir(out, 0777);
  snprintf(keep, sizeof keep, "%s/robot_path.csv", out);
  spit(keep, "precious\n");
  struct {
    const char *text;
    int line;
    const char *must;
  } cases[] = {
    {"x,y,z,nx,ny\n0.5,0,0.2,0,0,1\n", 1, "missing column 'nz'"},
    {"x,y,z,nx,ny,nz\n0.5,0,0.2,0,0,1\n0.51,0,0.2,0,0.1,1\n", 3, "columns nx,ny,nz: the normal must be unit length"},
    {"# comment\nx,y,z,nx,ny,nz\n0.5,0,0.2,0,0,1\n0.51,oops,0.2,0,0,1\n", 4, "column 'y': must be a finite number, got 'oops'"},
    {"x,y,z,nx,ny,nz\n0.5,0,0.2,0,0,1\n0.51,0,0.2,0,0\n", 3, "5 fields, but the header has 6"},
    {"x,y,z,nx,ny,nz\n0.5,0,0.2,0,0,1\n0.5,0,0.2,0,0,1\n", 3, "repeats the previous sample"},
    {"x,y,z,nx,ny,nz\n0.5,0,0.2,0,0,1\n", 0, "needs at least 2 points"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    snprintf(path, sizeof path, "%s/path%zu.csv", tmpdir, i);
    spit(path, cases[i].text);
    if (cases[i].line)
      snprintf(loc, sizeof loc, "%s:%d: ", path, cases[i].line);
    else
      snprintf(loc, sizeof loc, "%s: ", path);
    snprintf(args, sizeof args, "robot --path '%s' --out '%s'", path, out);
    const char *must[] = {loc, cases[i].must, NULL};
    expect_usage(args, must, out);
  }
  snprintf(args, sizeof args, "robot --path '%s/none.csv' --out '%s'", tmpdir, out);
  const char *m[] = {"none.csv", "cannot read", NULL};
  expect_usage(args, m, out);
  char *k = slurp(keep);
  assert_string_equal(k, "precious\n");
  free(k);
}

/* kelvin robot on the path CSV text csv (written as NAME.csv), out to NAME in the temporary folder:
 * its exit status, the output folder in out, stderr in err (echoed) */
static int robot_on(const char *name, const char *csv, char *out, size_t cap, char *err, size_t ecap)
{
  char path[600], args[2048];
  snprintf(path, sizeof path, "%s/%s.csv", tmpdir, name);
  spit(path, csv);
  snprintf(out, cap, "%s/%s", tmpdir, name);
  snprintf(args, sizeof args, "robot --path '%s' --quiet --out '%s'", path, out);
  const int rc = kelvin(args, err, ecap);
  printf("# %s", err);
  return rc;
}

/* a sample out of reach: exit 1, the message names it, the CSV marks it */
static void test_unreachable(void **state)
{
  (void)state;
  char out[512], err[8192];
  assert_int_equal(robot_on("far", "x,y,z,nx,ny,nz\n0.5,0,0.2,0,0,1\n0.51,0,0.2,0,0,1\n2.5,0,0.2,0,0,1\n0.53,0,0.2,0,0,1\n",
                            out, sizeof out, err, sizeof err),
                   1);
  assert_int_equal(kl_test_lines(err), 1);
  assert_non_null(strstr(err, "sample 2 of 4"));
  double meff[8], vmax[8];
  int reach[8];
  assert_int_equal(read_result(out, meff, vmax, reach, 8), 4);
  assert_true(reach[0] == 1 && reach[1] == 1 && reach[2] == 0 && reach[3] == 1);
  assert_true(isnan(meff[2]));
  /* no sample in reach: the same, the CSV written and no figure (there is nothing to plot; gnuplot's
   * "x range is invalid" used to fail the run with nothing written) */
  assert_int_equal(robot_on("farall", "x,y,z,nx,ny,nz\n5,0,0.25,0,0,1\n5.01,0,0.25,0,0,1\n5.02,0,0.25,0,0,1\n", out,
                            sizeof out, err, sizeof err),
                   1);
  assert_int_equal(kl_test_lines(err), 1);
  assert_non_null(strstr(err, "sample 0 of 3"));
  assert_non_null(strstr(err, "no sample is reachable, so no figure"));
  assert_int_equal(read_result(out, meff, vmax, reach, 8), 3);
  assert_true(reach[0] == 0 && reach[1] == 0 && reach[2] == 0);
  char png[600];
  snprintf(png, sizeof png, "%s/robot_path.png", out);
  assert_true(access(png, F_OK) != 0);
}

/* `kelvin check` on a robot file prints its joints and moving mass: the example arm's links, 12 + 9 + 6 +
 * 3.5 + 1.5 + 0.3 kg, and the 2.5 kg spindle merged into the last one, 34.8 kg, from the YAML and from the
 * URDF alike (printed with %.6g, so exactly "34.8"). */
static void test_check_robot(void **state)
{
  (void)state;
  const char *files[2] = {KELVIN_SOURCE_DIR "/examples/robot_er10.yaml", KELVIN_SOURCE_DIR "/examples/robot_er10.urdf"};
  for (int i = 0; i < 2; ++i) {
    char exe[1024], out[4096];
    snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
    char *argv[] = {exe, (char *)"check", (char *)files[i], NULL};
    assert_int_equal(kl_test_run(NULL, NULL, argv, 1, out, sizeof out), 0);
    printf("# %s", out);
    assert_non_null(strstr(out, "a robot: er10-illustrative, 6 revolute joints, moving mass 34.8 kg"));
  }
}

/* A robot whose name carries ESC and BEL (a terminal title and a colour): `kelvin check` and `kelvin robot`
 * print it with those bytes written as \x1b and \x07, so nothing reaches the user's terminal as a control
 * sequence (the bytes, counted here, must not be in stdout; the escaped text, written out here, must). */
static void test_terminal_safe(void **state)
{
  (void)state;
  char *yaml = slurp(KELVIN_SOURCE_DIR "/examples/robot_er10.yaml");
  const char *old = "name: er10-illustrative";
  char *at = strstr(yaml, old);
  assert_non_null(at);
  char path[512], text[16384];
  snprintf(text, sizeof text, "%.*sname: \"evil\\e]0;pwned\\a\\e[31mred\"%s", (int)(at - yaml), yaml, at + strlen(old));
  free(yaml);
  snprintf(path, sizeof path, "%s/evil.yaml", tmpdir);
  spit(path, text);
  char exe[1024], out[8192], dir[512];
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  snprintf(dir, sizeof dir, "%s/evil-out", tmpdir);
  char *check[] = {exe, (char *)"check", path, NULL}, *robot[] = {exe, (char *)"robot", path, (char *)"--out", dir, NULL};
  char *const *runs[2] = {check, robot};
  for (int i = 0; i < 2; ++i) {
    assert_int_equal(kl_test_run(NULL, NULL, runs[i], 1, out, sizeof out), 0);
    assert_null(strchr(out, 0x1b));
    assert_null(strchr(out, 0x07));
    if (!strstr(out, "evil\\x1b]0;pwned\\x07\\x1b[31mred, ")) fail_msg("%s: the name not escaped: '%s'", runs[i][1], out);
  }
}

static void test_help(void **state)
{
  (void)state;
  char err[4096];
  assert_int_equal(kelvin("robot --help", err, sizeof err), 0);
  assert_int_equal(kelvin("robot --frob", err, sizeof err), 2);
  assert_non_null(strstr(err, "--frob"));
}

int main(void)
{
  snprintf(tmpdir, sizeof tmpdir, "/tmp/kelvin-cli-robot-XXXXXX");
  if (!mkdtemp(tmpdir)) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_same_arm_three_ways), cmocka_unit_test(test_path_file_and_base),
                                     cmocka_unit_test(test_bad_robot_files), cmocka_unit_test(test_bad_path_files),
                                     cmocka_unit_test(test_unreachable), cmocka_unit_test(test_help),
                                     cmocka_unit_test(test_check_robot), cmocka_unit_test(test_terminal_safe)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  if (kl_test_rmtree(tmpdir) != 0) return 1;
  return rc;
}
