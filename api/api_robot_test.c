/* api/api_robot_test.c: the arm through the public API alone (kelvin/robot.h, linked with libkelvin.so),
 * each expectation computed here by hand: the example arm's moving mass, the effective mass and
 * stiffness of a one-link arm, the demonstration path's length as a circular arc, FK after IK, and the
 * messages and statuses of misuse and unreachable samples. */
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

#include <kelvin/robot.h>

static char tmpdir[256];

static const char *write_tmp(const char *name, const char *text)
{
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

/* the example arm three ways: 12 + 9 + 6 + 3.5 + 1.5 + 0.3 kg of links and the 2.5 kg spindle */
static void test_example_arm(void **state)
{
  (void)state;
  const char *files[] = {NULL, KELVIN_SOURCE_DIR "/examples/robot_er10.yaml",
                         KELVIN_SOURCE_DIR "/examples/robot_er10.urdf"};
  for (int i = 0; i < 3; ++i) {
    kelvin_robot *r = NULL;
    assert_int_equal(kelvin_robot_create(&r), KELVIN_OK);
    assert_int_equal(kelvin_robot_joints(r), 0);
    assert_int_equal(files[i] ? kelvin_robot_load(r, files[i]) : kelvin_robot_builtin(r), KELVIN_OK);
    assert_string_equal(kelvin_robot_name(r), "er10-illustrative");
    assert_int_equal(kelvin_robot_joints(r), 6);
    assert_true(fabs(kelvin_robot_mass(r) - 34.8) < 1e-12);
    assert_int_equal(kelvin_robot_closed_ik(r), 1);
    assert_int_equal(kelvin_robot_compliant(r), i < 2); /* the URDF gives no joint stiffness */
    kelvin_robot_free(r);
  }
}

/* one link of length L = 0.5 m turning about z, mass m = 2 kg at its middle with I_zz = 0.01 kg m^2 about
 * the centre of mass, a joint stiffness k = 1000 N m/rad: along the tip's velocity (y at q = 0) the
 * effective mass is (m (L/2)^2 + I_zz) / L^2 = 0.54 kg and the stiffness k / L^2 = 4000 N/m; along the
 * link (x) the joint cannot move the tip: infinite. FK at q: the tip at L (cos q, sin q, 0). */
static void test_one_link(void **state)
{
  (void)state;
  const char *f = write_tmp("one.yaml", "robot:\n  name: one-link\n  convention: dh\n  joints:\n"
                                        "    - {name: j1, a: 0.5, alpha_deg: 0, d: 0, theta_deg: 0,\n"
                                        "       limits_deg: [-170, 170], speed_deg_s: 90, stiffness: 1000,\n"
                                        "       mass: 2.0, com: [-0.25, 0, 0], inertia: [1e-4, 0.01, 0.01, 0, 0, 0]}\n");
  kelvin_robot *r = NULL;
  assert_int_equal(kelvin_robot_create(&r), KELVIN_OK);
  assert_int_equal(kelvin_robot_load(r, f), KELVIN_OK);
  const double q0 = 0.0, y[3] = {0, 1, 0}, x[3] = {1, 0, 0};
  double meff, kn;
  assert_int_equal(kelvin_robot_effective_mass(r, &q0, y, &meff, &kn), KELVIN_OK);
  assert_true(fabs(meff - 0.54) < 1e-12 && fabs(kn - 4000.0) < 1e-9);
  assert_int_equal(kelvin_robot_effective_mass(r, &q0, x, &meff, &kn), KELVIN_OK);
  assert_true(meff > 1e12 && kn > 1e12);
  const double q = 0.7;
  double R[9], p[3];
  assert_int_equal(kelvin_robot_fk(r, &q, R, p), KELVIN_OK);
  assert_true(fabs(p[0] - 0.5 * cos(0.7)) < 1e-14 && fabs(p[1] - 0.5 * sin(0.7)) < 1e-14 && fabs(p[2]) < 1e-14);
  kelvin_robot_free(r);
}

/* FK of what IK found is the pose asked for, on the 6-joint arm from a pose in its limits */
static void test_ik_fk(void **state)
{
  (void)state;
  kelvin_robot *r = NULL;
  assert_int_equal(kelvin_robot_create(&r), KELVIN_OK);
  assert_int_equal(kelvin_robot_builtin(r), KELVIN_OK);
  const double q0[6] = {0.3, 0.4, 0.5, -0.2, 0.6, 0.1};
  double R[9], p[3], q[6], R2[9], p2[3];
  assert_int_equal(kelvin_robot_fk(r, q0, R, p), KELVIN_OK);
  assert_int_equal(kelvin_robot_ik(r, R, p, q0, q), 1);
  assert_int_equal(kelvin_robot_fk(r, q, R2, p2), KELVIN_OK);
  for (int i = 0; i < 3; ++i) assert_true(fabs(p2[i] - p[i]) < 1e-9);
  for (int i = 0; i < 9; ++i) assert_true(fabs(R2[i] - R[i]) < 1e-9);
  for (int i = 0; i < 6; ++i) assert_true(fabs(q[i] - q0[i]) < 1e-6); /* the branch closest to q0 is q0 */
  assert_int_equal(kelvin_robot_ik(NULL, R, p, NULL, q), -1);
  kelvin_robot_free(r);
}

/* the demonstration path is a 0.2 m line in plan over a circle of radius R = 0.4 m, symmetric about the
 * crest: its arc length is R theta, theta = 2 asin(0.1 / R), and 199 chords of about theta / 199 each fall
 * short of it by R dtheta^3 / 24 apiece, 5.4e-8 m in all (equal in x, not quite in angle: within 10 %
 * of that); every sample in reach of the example arm, with a finite positive effective mass, speed bound
 * and (the arm has joint stiffnesses) stiffness */
static void test_demo_path(void **state)
{
  (void)state;
  kelvin_robot *r = NULL;
  assert_int_equal(kelvin_robot_create(&r), KELVIN_OK);
  assert_int_equal(kelvin_robot_demo_path(r, 200), KELVIN_OK); /* a path needs no arm */
  assert_int_equal(kelvin_robot_samples(r), 200);
  assert_int_equal(kelvin_robot_evaluate(r), KELVIN_ERR_ARG);
  assert_non_null(strstr(kelvin_robot_errmsg(r), "no arm"));
  assert_int_equal(kelvin_robot_builtin(r), KELVIN_OK);
  double s[200], meff[200], vmax[200], reach[200], kn[200], q[200 * 6], pts[600];
  assert_int_equal(kelvin_robot_series(r, KELVIN_ROBOT_MEFF, meff), KELVIN_ERR_ARG); /* not evaluated yet */
  assert_int_equal(kelvin_robot_evaluate(r), KELVIN_OK);
  assert_int_equal(kelvin_robot_series(r, KELVIN_ROBOT_S, s), KELVIN_OK);
  assert_int_equal(kelvin_robot_series(r, KELVIN_ROBOT_POINTS, pts), KELVIN_OK);
  assert_int_equal(kelvin_robot_series(r, KELVIN_ROBOT_MEFF, meff), KELVIN_OK);
  assert_int_equal(kelvin_robot_series(r, KELVIN_ROBOT_VMAX, vmax), KELVIN_OK);
  assert_int_equal(kelvin_robot_series(r, KELVIN_ROBOT_REACH, reach), KELVIN_OK);
  assert_int_equal(kelvin_robot_series(r, KELVIN_ROBOT_KN, kn), KELVIN_OK);
  assert_int_equal(kelvin_robot_series(r, KELVIN_ROBOT_Q, q), KELVIN_OK);
  assert_int_equal(kelvin_robot_series(r, KELVIN_ROBOT_NSERIES, s), KELVIN_ERR_ARG);
  const double th = 2 * asin(0.1 / 0.4), len = 0.4 * th, chords = len - 0.4 * th * th * th / (24.0 * 199 * 199);
  printf("# demo path %.12g m; arc %.12g m, less the chords' shortfall %.12g m\n", s[199], len, chords);
  assert_true(fabs(s[199] - chords) < 1e-8);
  assert_true(fabs(pts[0] - 0.45) < 1e-12 && fabs(pts[597] - 0.65) < 1e-12);
  for (int k = 0; k < 200; ++k) {
    assert_true(reach[k] == 1.0);
    assert_true(meff[k] > 0 && isfinite(meff[k]) && vmax[k] > 0 && isfinite(vmax[k]) && kn[k] > 0 && isfinite(kn[k]));
    /* the joints found reproduce the sample's point */
    double R[9], p[3];
    assert_int_equal(kelvin_robot_fk(r, q + 6 * k, R, p), KELVIN_OK);
    for (int i = 0; i < 3; ++i) assert_true(fabs(p[i] - pts[3 * k + i]) < 1e-9);
  }
  /* moving the base drops the results */
  const double base[3] = {0.05, 0, 0}, bad[3] = {NAN, 0, 0};
  assert_int_equal(kelvin_robot_set_base(r, bad, NULL), KELVIN_ERR_ARG);
  assert_int_equal(kelvin_robot_set_base(r, base, NULL), KELVIN_OK);
  double got[3], rpy[3];
  assert_int_equal(kelvin_robot_base(r, got, rpy), KELVIN_OK);
  assert_true(got[0] == 0.05 && got[1] == 0 && rpy[0] == 0);
  assert_int_equal(kelvin_robot_series(r, KELVIN_ROBOT_MEFF, meff), KELVIN_ERR_ARG);
  kelvin_robot_free(r);
}

/* bad paths: a repeated point, a normal not of unit length, a CSV naming file and line; an unreachable
 * sample: KELVIN_ERR_ARG naming it, the series filled (that sample NaN, not reachable) */
static void test_bad_paths(void **state)
{
  (void)state;
  kelvin_robot *r = NULL;
  assert_int_equal(kelvin_robot_create(&r), KELVIN_OK);
  assert_int_equal(kelvin_robot_builtin(r), KELVIN_OK);
  double p[12] = {0.5, 0, 0.2, 0.51, 0, 0.2, 0.51, 0, 0.2, 0.53, 0, 0.2}, n[12] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
  assert_int_equal(kelvin_robot_set_path(r, p, n, 4), KELVIN_ERR_ARG);
  assert_non_null(strstr(kelvin_robot_errmsg(r), "sample 2 repeats the previous one"));
  assert_int_equal(kelvin_robot_samples(r), 0);
  p[6] = 0.52;
  n[5] = 1.1;
  assert_int_equal(kelvin_robot_set_path(r, p, n, 4), KELVIN_ERR_ARG);
  assert_non_null(strstr(kelvin_robot_errmsg(r), "sample 1: the normal must be unit length"));
  n[5] = 1;
  assert_int_equal(kelvin_robot_set_path(r, p, n, 1), KELVIN_ERR_ARG);
  const char *f = write_tmp("rep.csv", "# two\nx,y,z,nx,ny,nz\n0.5,0,0.2,0,0,1\n0.5,0,0.2,0,0,1\n");
  assert_int_equal(kelvin_robot_load_path(r, f), KELVIN_ERR_CONFIG);
  char want[600];
  snprintf(want, sizeof want, "%s:4: columns x,y,z: the point repeats the previous sample", f);
  assert_non_null(strstr(kelvin_robot_errmsg(r), want));
  /* sample 2 at 2.5 m: out of the 0.9 m arm's reach */
  p[6] = 2.5;
  assert_int_equal(kelvin_robot_set_path(r, p, n, 4), KELVIN_OK);
  assert_int_equal(kelvin_robot_evaluate(r), KELVIN_ERR_ARG);
  assert_non_null(strstr(kelvin_robot_errmsg(r), "sample 2 of 4"));
  double reach[4], meff[4];
  assert_int_equal(kelvin_robot_series(r, KELVIN_ROBOT_REACH, reach), KELVIN_OK);
  assert_int_equal(kelvin_robot_series(r, KELVIN_ROBOT_MEFF, meff), KELVIN_OK);
  assert_true(reach[0] == 1 && reach[1] == 1 && reach[2] == 0 && reach[3] == 1);
  assert_true(isnan(meff[2]) && meff[0] > 0);
  /* a bad arm file keeps the arm there was, and names the file */
  f = write_tmp("bad.yaml", "robot:\n  name: x\n  convention: xyz\n");
  assert_int_equal(kelvin_robot_load(r, f), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(kelvin_robot_errmsg(r), "bad.yaml:3"));
  assert_int_equal(kelvin_robot_joints(r), 6);
  kelvin_robot_free(r);
  kelvin_robot_free(NULL);
  assert_non_null(kelvin_robot_errmsg(NULL));
}

/* A call that succeeds leaves no message ("" from kelvin_robot_errmsg), whatever an earlier failure left:
 * a CSV path with a repeated point refused, then a good one loaded. */
static void test_message_cleared(void **state)
{
  (void)state;
  kelvin_robot *r = NULL;
  assert_int_equal(kelvin_robot_create(&r), KELVIN_OK);
  assert_int_equal(kelvin_robot_builtin(r), KELVIN_OK);
  const char *f = write_tmp("rep2.csv", "x,y,z,nx,ny,nz\n0.5,0,0.2,0,0,1\n0.5,0,0.2,0,0,1\n");
  assert_int_equal(kelvin_robot_load_path(r, f), KELVIN_ERR_CONFIG);
  assert_true(strlen(kelvin_robot_errmsg(r)) > 1);
  f = write_tmp("good.csv", "x,y,z,nx,ny,nz\n0.5,0,0.2,0,0,1\n0.51,0,0.2,0,0,1\n");
  assert_int_equal(kelvin_robot_load_path(r, f), KELVIN_OK);
  assert_string_equal(kelvin_robot_errmsg(r), "");
  assert_int_equal(kelvin_robot_samples(r), 2);
  kelvin_robot_free(r);
}

int main(void)
{
  snprintf(tmpdir, sizeof tmpdir, "/tmp/kelvin-api-robot-XXXXXX");
  if (!mkdtemp(tmpdir)) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_example_arm), cmocka_unit_test(test_one_link),
                                     cmocka_unit_test(test_ik_fk), cmocka_unit_test(test_demo_path),
                                     cmocka_unit_test(test_bad_paths), cmocka_unit_test(test_message_cleared)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
