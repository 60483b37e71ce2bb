/* io/robot_urdf_test.c: the URDF reader. The example URDF of the built-in arm gives the same inertia,
 * Jacobian and forward kinematics as its DH description over random poses; bad URDF input gives one
 * message naming the file, line and field. Every robot reader (URDF and YAML) leaves a message buffer of
 * capacity 0 alone. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/robot.h"
#include "io/robot_yaml.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

/* uniform in [0, 1) (xorshift64*: reproducible, no global libc state) */
static double urand(void)
{
  rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}

/* a random pose within the limits (unlimited joints: [-pi, pi]) */
static void random_q(const kl_robot *r, double *q)
{
  for (int i = 0; i < r->ndof; ++i) {
    const double lo = isfinite(r->jnt_range[i][0]) ? r->jnt_range[i][0] : -3.14159;
    const double hi = isfinite(r->jnt_range[i][1]) ? r->jnt_range[i][1] : 3.14159;
    q[i] = lo + (hi - lo) * urand();
  }
}

/* the URDF of the same arm in other link frames: same kinematics and the same M(q) */
static void test_urdf_matches_dh(void **state)
{
  (void)state;
  kl_robot *a = NULL, *b = NULL;
  char msg[600];
  assert_int_equal(kl_robot_builtin_er10(&a), KELVIN_OK);
  const kelvin_status st = kl_robot_load_urdf(KELVIN_SOURCE_DIR "/examples/robot_er10.urdf", &b, msg, sizeof msg);
  if (st != KELVIN_OK) printf("# %s\n", msg);
  assert_int_equal(st, KELVIN_OK);
  assert_int_equal(b->ndof, 6);
  assert_int_equal(b->ik_closed, 1);
  double dM = 0, maxM = 0, dJ = 0, dT = 0;
  for (int t = 0; t < 2000; ++t) {
    double q[6], Ma[36], Mb[36], Ja[36], Jb[36], Ra[9], Rb[9], pa[3], pb[3];
    random_q(a, q);
    kl_robot_inertia(a, q, Ma);
    kl_robot_inertia(b, q, Mb);
    kl_robot_jacobian(a, q, Ja);
    kl_robot_jacobian(b, q, Jb);
    kl_robot_fk(a, q, Ra, pa);
    kl_robot_fk(b, q, Rb, pb);
    for (int i = 0; i < 36; ++i) {
      dM = fmax(dM, fabs(Ma[i] - Mb[i])), maxM = fmax(maxM, fabs(Ma[i]));
      dJ = fmax(dJ, fabs(Ja[i] - Jb[i]));
    }
    for (int i = 0; i < 9; ++i) dT = fmax(dT, fabs(Ra[i] - Rb[i]));
    for (int i = 0; i < 3; ++i) dT = fmax(dT, fabs(pa[i] - pb[i]));
  }
  printf("# URDF vs DH over 2000 poses: max |dM| %.3g kg m^2 = %.3g of max |M|; max |dJ| %.3g; max |dT| %.3g\n", dM,
         dM / maxM, dJ, dT);
  /* the two descriptions differ only by round-off in their frame products (cos(pi/2) = 6e-17) */
  assert_true(dM <= 1e-12 * maxM);
  assert_true(dJ <= 1e-12 && dT <= 1e-12);
  for (int i = 0; i < 6; ++i) {
    assert_true(fabs(a->jnt_range[i][0] - b->jnt_range[i][0]) == 0);
    assert_true(fabs(a->jnt_vmax[i] - b->jnt_vmax[i]) == 0);
  }
  kl_robot_free(a);
  kl_robot_free(b);
}

/* write text to a file in a temporary folder; returns the path in buf */
static const char *tmpfile_with(const char *dir, const char *name, const char *text, char *buf, size_t cap)
{
  snprintf(buf, cap, "%s/%s", dir, name);
  FILE *f = fopen(buf, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return buf;
}

static void test_urdf_bad_input(void **state)
{
  (void)state;
  char dir[] = "/tmp/kelvin-robot-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  /* a one-joint arm, with one thing wrong per case */
#define HEAD "<robot name='x'>\n<link name='a'/>\n"
#define JOINT(type, lim) "<joint name='j' type='" type "'>\n<parent link='a'/>\n<child link='b'/>\n<axis xyz='0 0 1'/>\n" lim "</joint>\n"
#define LIM "<limit lower='-1' upper='1' velocity='2'/>\n"
#define LINK(mass, inertia) "<link name='b'>\n<inertial>\n<mass value='" mass "'/>\n<inertia " inertia "/>\n</inertial>\n</link>\n"
#define GOODI "ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'"
  struct {
    const char *text, *must1, *must2;
    kelvin_status st;
  } cases[] = {
    {HEAD JOINT("revolute", LIM) LINK("1", GOODI) "</robot>\n", NULL, NULL, KELVIN_OK},
    {HEAD JOINT("revolute", LIM) LINK("-2", GOODI) "</robot>\n", ":11:", "<mass> value: must be >= 0 kg, got -2", KELVIN_ERR_CONFIG},
    {HEAD JOINT("revolute", LIM) LINK("1", "ixx='0.1' iyy='0.1' izz='-0.1' ixy='0' ixz='0' iyz='0'") "</robot>\n", ":12:",
     "<inertia>: not positive definite", KELVIN_ERR_CONFIG},
    {HEAD JOINT("revolute", LIM) LINK("1", "ixx='0.1' iyy='0.1' izz='0.5' ixy='0' ixz='0' iyz='0'") "</robot>\n", ":12:",
     "triangle inequality", KELVIN_ERR_CONFIG},
    {HEAD JOINT("revolute", LIM) LINK("1", "ixx='0.1' iyy='zero' izz='0.1' ixy='0' ixz='0' iyz='0'") "</robot>\n", ":12:",
     "iyy: expected 1 finite number, got 'zero'", KELVIN_ERR_CONFIG},
    {HEAD JOINT("prismatic", LIM) LINK("1", GOODI) "</robot>\n", ":3:", "type 'prismatic' is not supported", KELVIN_ERR_CONFIG},
    {HEAD JOINT("revolute", "<limit lower='-1' upper='1'/>\n") LINK("1", GOODI) "</robot>\n", ":7:",
     "missing attribute 'velocity'", KELVIN_ERR_CONFIG},
    {HEAD JOINT("revolute", LIM "<wobble/>\n") LINK("1", GOODI) "</robot>\n", ":8:", "unknown element <wobble>", KELVIN_ERR_CONFIG},
    {HEAD JOINT("revolute", LIM) "<link name='b'/>\n</robot>\n", ":3:", "have no mass", KELVIN_ERR_CONFIG},
    {HEAD JOINT("revolute", LIM) LINK("1", GOODI) "</robot\n", ":", "not well-formed XML", KELVIN_ERR_CONFIG},
    {HEAD JOINT("revolute", LIM) LINK("1", GOODI)
     "<joint name='k' type='revolute'><parent link='a'/><child link='c'/>" LIM "</joint><link name='c'/>\n</robot>\n",
     ":15:", "two child joints", KELVIN_ERR_CONFIG},
    /* a name given twice: the second definition (its 100 kg) would be silently ignored (issue 31) */
    {HEAD JOINT("revolute", LIM) LINK("1", GOODI) LINK("100", GOODI) "</robot>\n", ":15:",
     "duplicate <link> name 'b' (first defined at line 9)", KELVIN_ERR_CONFIG},
    {HEAD JOINT("revolute", LIM) LINK("1", GOODI) JOINT("revolute", LIM) "</robot>\n", ":15:",
     "duplicate <joint> name 'j' (first defined at line 3)", KELVIN_ERR_CONFIG},
    {HEAD JOINT("revolute", LIM) LINK("1", GOODI) "<link name='a'/>\n</robot>\n", ":15:",
     "duplicate <link> name 'a' (first defined at line 2)", KELVIN_ERR_CONFIG},
  };
  char path[400], msg[600];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char name[32];
    snprintf(name, sizeof name, "case%zu.urdf", i);
    tmpfile_with(dir, name, cases[i].text, path, sizeof path);
    kl_robot *r = (kl_robot *)1;
    const kelvin_status st = kl_robot_load_urdf(path, &r, msg, sizeof msg);
    printf("# case %zu: %s\n", i, st ? msg : "ok");
    assert_int_equal(st, cases[i].st);
    if (st == KELVIN_OK) {
      assert_non_null(r);
      kl_robot_free(r);
      continue;
    }
    assert_null(r);
    assert_non_null(strstr(msg, path));
    assert_non_null(strstr(msg, cases[i].must1));
    assert_non_null(strstr(msg, cases[i].must2));
    assert_null(strchr(msg, '\n'));
    unlink(path);
  }
  kl_robot *r = NULL;
  snprintf(path, sizeof path, "%s/missing.urdf", dir);
  assert_int_equal(kl_robot_load_urdf(path, &r, msg, sizeof msg), KELVIN_ERR_IO);
  printf("# missing: %s\n", msg);
  assert_non_null(strstr(msg, path));
  assert_null(r);
  snprintf(path, sizeof path, "%s/case0.urdf", dir);
  unlink(path);
  rmdir(dir);
}

/* A message capacity of 0 means no message: every robot reader, on a good file and on a missing one,
 * must leave the caller's buffer alone (the callers' convention, msg && cap > 0, for a buffer of size 0
 * or one they do not want written). The byte after msg[0] guards against a write past it. */
static void test_msg_capacity_zero(void **state)
{
  (void)state;
  const char *good[] = {KELVIN_SOURCE_DIR "/examples/robot_er10.yaml", KELVIN_SOURCE_DIR "/examples/robot_er10.urdf"};
  const char *missing[] = {KELVIN_SOURCE_DIR "/examples/no-such-robot.yaml", KELVIN_SOURCE_DIR "/examples/no-such-robot.urdf"};
  for (int f = 0; f < 2; ++f)
    for (int fn = 0; fn < 2; ++fn) { /* kl_robot_load, then the reader for the file's type */
      for (int bad = 0; bad < 2; ++bad) {
        char msg[2] = {'#', '#'};
        kl_robot *r = NULL;
        const char *path = bad ? missing[f] : good[f];
        const kelvin_status st = fn == 0 ? kl_robot_load(path, &r, msg, 0)
                                 : f == 0 ? kl_robot_load_yaml(path, &r, msg, 0)
                                          : kl_robot_load_urdf(path, &r, msg, 0);
        if (bad) {
          assert_int_equal(st, KELVIN_ERR_IO);
          assert_null(r);
        } else {
          assert_int_equal(st, KELVIN_OK);
          assert_non_null(r);
          kl_robot_free(r);
        }
        if (msg[0] != '#' || msg[1] != '#') fail_msg("%s, %s: msg written with capacity 0", path, fn ? "its reader" : "kl_robot_load");
      }
    }
  char msg[2] = {'#', '#'};
  kl_robot *r = NULL;
  const char text[] = "robot: {convention: xx}\n";
  assert_int_equal(kl_robot_load_yaml_mem("m.yaml", text, sizeof text - 1, &r, msg, 0), KELVIN_ERR_CONFIG);
  assert_null(r);
  assert_true(msg[0] == '#' && msg[1] == '#');
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_urdf_matches_dh), cmocka_unit_test(test_urdf_bad_input),
                                     cmocka_unit_test(test_msg_capacity_zero)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
