/* api/api_checks_test.c: the magnitude and unit checks of a grinding problem (docs/design.md section 8)
 * through the public API, as a program sees it (libkelvin.so, public headers only): each wrong magnitude
 * that issue 30 lists is refused by kelvin_grind_prepare or kelvin_grind_evaluate, quickly, with a message
 * naming the key, the value and the likely unit; the numbers in the messages are checked against values
 * written out here (the holder's deflection (F - w) / K_h, Hertz's static depth (F / K)^(2/3) with
 * K = 4/3 E* sqrt(R), a plate's diagonal, a path's length), and values just inside the limits pass. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <kelvin/grind.h>
#include <kelvin/kelvin.h>

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the message must hold each of the fragments */
static void has(const kelvin_grind *g, const char *frag)
{
  if (!strstr(kelvin_grind_errmsg(g), frag)) fail_msg("message '%s' lacks '%s'", kelvin_grind_errmsg(g), frag);
}

/* the number after lead in g's message */
static double number_after(const kelvin_grind *g, const char *lead)
{
  const char *p = strstr(kelvin_grind_errmsg(g), lead);
  if (!p) fail_msg("message '%s' lacks '%s'", kelvin_grind_errmsg(g), lead);
  return strtod(p + strlen(lead), NULL);
}

/* prepare must fail with status want within a (loose) 10 s: the checks come before any long work */
static void refused(kelvin_grind *g, kelvin_status want)
{
  const double t0 = now();
  const kelvin_status st = kelvin_grind_prepare(g);
  const double dt = now() - t0;
  printf("# %.3f s: %s\n", dt, kelvin_grind_errmsg(g));
  assert_int_equal(st, want);
  assert_true(dt < 10.0);
  assert_int_equal(kelvin_grind_nsamples(g), 0);
}

/* A flat plate 0.2 x 0.06 m (times unit: 1 in metres, 1000 in millimetres) and a straight path on it along x,
 * 0.1 m long (times path_unit), a small problem. */
static kelvin_grind *plate(double unit, double path_unit)
{
  enum { NX = 81, NY = 13 };
  static double vert[NX * NY * 3];
  static int tri[(NX - 1) * (NY - 1) * 6];
  int nt = 0;
  for (int j = 0; j < NY; ++j)
    for (int i = 0; i < NX; ++i) {
      double *p = &vert[3 * (j * NX + i)];
      p[0] = unit * (-0.1 + 0.2 * i / (NX - 1));
      p[1] = unit * (-0.03 + 0.06 * j / (NY - 1));
      p[2] = 0;
    }
  for (int j = 0; j + 1 < NY; ++j)
    for (int i = 0; i + 1 < NX; ++i) {
      const int a = j * NX + i, b = a + 1, c = a + NX, d = c + 1;
      const int t[6] = {a, b, d, a, d, c};
      memcpy(&tri[3 * nt], t, sizeof t);
      nt += 2;
    }
  double pts[3 * 11], nrm[3 * 11];
  for (int k = 0; k < 11; ++k) {
    pts[3 * k] = path_unit * (-0.05 + 0.01 * k);
    pts[3 * k + 1] = pts[3 * k + 2] = 0;
    nrm[3 * k] = nrm[3 * k + 1] = 0;
    nrm[3 * k + 2] = 1;
  }
  kelvin_grind *g = NULL;
  assert_int_equal(kelvin_grind_create(&g), KELVIN_OK);
  assert_int_equal(kelvin_grind_set_mesh(g, vert, NX * NY, tri, nt), KELVIN_OK);
  assert_int_equal(kelvin_grind_set_path(g, pts, nrm, 11), KELVIN_OK);
  assert_int_equal(kelvin_grind_set(g, "path.samples", 41), KELVIN_OK);
  return g;
}

/* the defaults: target 5 N, tool weight 2 N, holder 5000 N/m, Hertz K = 4/3 E* sqrt(R) of a 6 mm steel-like
 * ball (200 GPa, 0.22) on aluminium (70 GPa, 0.33) */
#define F0 5.0
#define W0 2.0
static double hertz_K(void)
{
  const double es = 1 / ((1 - 0.22 * 0.22) / 200e9 + (1 - 0.33 * 0.33) / 70e9);
  return 4.0 / 3.0 * es * sqrt(6e-3);
}

/* holder.stiffness given in N/mm (5 for 5000 N/m): a static offset of (F - w) / K_h = 0.6 m on the flat
 * plate, refused with the N/mm hint; 3/0.0195 N/m (19.5 mm, a soft but possible holder) passes, 3/0.0205 does
 * not (the limit is 20 mm) */
static void test_holder_in_n_per_mm(void **state)
{
  (void)state;
  kelvin_grind *g = plate(1, 1);
  assert_int_equal(kelvin_grind_set(g, "holder.stiffness", 5), KELVIN_OK);
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "holder.stiffness: 5 N/m gives a static offset of ");
  has(g, "is it in N/mm? the key takes N/m (5 N/mm = 5000 N/m)");
  const double want = (F0 - W0) / 5 + pow(F0 / hertz_K(), 2.0 / 3.0);
  const double got = number_after(g, "a static offset of ");
  printf("# static offset: printed %.6g m, written out here %.6g m\n", got, want);
  assert_true(fabs(got - want) <= 5e-3 * want); /* printed to 3 digits */
  assert_int_equal(kelvin_grind_set(g, "holder.stiffness", 3 / 0.0195), KELVIN_OK);
  if (kelvin_grind_prepare(g) != KELVIN_OK) fail_msg("19.5 mm refused: %s", kelvin_grind_errmsg(g));
  assert_int_equal(kelvin_grind_set(g, "holder.stiffness", 3 / 0.0205), KELVIN_OK);
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "more than 0.02 m");
  kelvin_grind_free(g);
}

/* a target 1000x too large on a holder in N/m (5000 N with max_force raised to match): 1 m of offset,
 * refused naming target.force and both likely mistakes */
static void test_target_too_large(void **state)
{
  (void)state;
  kelvin_grind *g = plate(1, 1);
  assert_int_equal(kelvin_grind_set(g, "target.max_force", 10000), KELVIN_OK);
  assert_int_equal(kelvin_grind_set(g, "target.force", 5000), KELVIN_OK);
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "target.force: 5000 N on holder.stiffness 5000 N/m gives a static offset of ");
  has(g, "is the force in mN (the key takes N), or holder.stiffness in N/mm (it takes N/m)?");
  const double want = (5000 - W0) / 5000 + pow(5000 / hertz_K(), 2.0 / 3.0);
  assert_true(fabs(number_after(g, "a static offset of ") - want) <= 5e-3 * want);
  kelvin_grind_free(g);
}

/* target.force above target.max_force (5000 N against 10 N exited 0 before): refused, both values and the
 * mN hint named; a target just at max_force passes, and a profile above it is refused at its sample */
static void test_target_above_max(void **state)
{
  (void)state;
  kelvin_grind *g = plate(1, 1);
  assert_int_equal(kelvin_grind_set(g, "target.force", 5000), KELVIN_OK);
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "target.force: 5000 N is above target.max_force (10 N)");
  has(g, "is target.force in mN? both keys take N");
  assert_int_equal(kelvin_grind_set(g, "target.force", 12), KELVIN_OK); /* not a unit mistake: a plain hint */
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "target.force: 12 N is above target.max_force (10 N)");
  has(g, "lower target.force or raise target.max_force");
  assert_int_equal(kelvin_grind_set(g, "target.force", 10), KELVIN_OK);
  if (kelvin_grind_prepare(g) != KELVIN_OK) fail_msg("target = max_force refused: %s", kelvin_grind_errmsg(g));
  const double s[3] = {0, 0.05, 0.1}, F[3] = {3, 12, 7};
  assert_int_equal(kelvin_grind_set_target(g, s, F, 3), KELVIN_OK);
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "target.max_force: 10 N is below the target profile's largest force, 12 N (sample 1)");
  kelvin_grind_free(g);
}

/* feed speeds in mm/s: speed.max 30 refused when prepared (the key's bounds allow it), 2.5 m/s too; 2 m/s
 * (the limit) passes */
static void test_speed_bound_in_mm_per_s(void **state)
{
  (void)state;
  kelvin_grind *g = plate(1, 1);
  assert_int_equal(kelvin_grind_set(g, "speed.max", 30), KELVIN_OK);
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "speed.max: 30 m/s is above 2 m/s");
  has(g, "is it in mm/s? the key takes m/s (30 mm/s = 0.03 m/s)");
  assert_int_equal(kelvin_grind_set(g, "speed.max", 2.5), KELVIN_OK); /* just above the limit */
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "speed.max: 2.5 m/s is above 2 m/s");
  assert_int_equal(kelvin_grind_set(g, "speed.max", 2), KELVIN_OK);
  if (kelvin_grind_prepare(g) != KELVIN_OK) fail_msg("speed.max 2 m/s refused: %s", kelvin_grind_errmsg(g));
  kelvin_grind_free(g);
}

/* a pass given to kelvin_grind_evaluate at 15 m/s (accepted before, with a 2424 % force error): refused
 * before any rollout, naming the sample, the value and the bounds; an offset in millimetres likewise; the
 * naive pass itself is accepted */
static void test_evaluate_pass_units(void **state)
{
  (void)state;
  kelvin_grind *g = plate(1, 1);
  assert_int_equal(kelvin_grind_prepare(g), KELVIN_OK);
  const int ns = kelvin_grind_nsamples(g);
  assert_int_equal(ns, 41);
  double *o = malloc(41 * sizeof *o), *v = malloc(41 * sizeof *v);
  const double naive = (F0 - W0) / 5000 + pow(F0 / hertz_K(), 2.0 / 3.0);
  for (int k = 0; k < ns; ++k) o[k] = naive, v[k] = 15;
  kelvin_device *dev = NULL;
  assert_int_equal(kelvin_device_create(&dev), KELVIN_OK);
  assert_int_equal(kelvin_device_open(dev, NULL, KELVIN_DEVICE_CPU), KELVIN_OK);
  double t0 = now();
  assert_int_equal(kelvin_grind_evaluate(g, dev, o, v), KELVIN_ERR_ARG);
  printf("# %.3f s: %s\n", now() - t0, kelvin_grind_errmsg(g));
  assert_true(now() - t0 < 10.0);
  has(g, "pass sample 0 (s = 0 m): speed 15 m/s is outside [speed.min, speed.max] = [0.005, 0.03] m/s; is it in mm/s?");
  assert_int_equal(kelvin_grind_npass(g), 0);
  for (int k = 0; k < ns; ++k) v[k] = 0.015;
  v[7] = 0.031; /* just above the bound, no unit hint */
  assert_int_equal(kelvin_grind_evaluate(g, dev, o, v), KELVIN_ERR_ARG);
  has(g, "pass sample 7 (s = 0.0175 m): speed 0.031 m/s is outside [speed.min, speed.max] = [0.005, 0.03] m/s");
  assert_null(strstr(kelvin_grind_errmsg(g), "mm/s"));
  v[7] = 0.015;
  o[4] = 1e3 * naive; /* 0.6 mm given as 0.6 */
  t0 = now();
  assert_int_equal(kelvin_grind_evaluate(g, dev, o, v), KELVIN_ERR_ARG);
  printf("# %.3f s: %s\n", now() - t0, kelvin_grind_errmsg(g));
  has(g, "pass sample 4 (s = 0.01 m): offset ");
  has(g, "is outside [offset.min, offset.max]");
  has(g, "is it in millimetres? offsets are taken in metres");
  free(o);
  free(v);
  kelvin_device_free(dev);
  kelvin_grind_free(g);
}

/* a mesh and a path in millimetres through kelvin_grind_set_mesh / set_path: the plate's diagonal
 * sqrt(200^2 + 60^2) = 208.8 "m", refused with the hint that the API takes metres and the factor 0.001;
 * the path alone in millimetres, 100 "m" long (a 6667 s pass at 0.015 m/s), likewise */
static void test_mesh_and_path_in_mm(void **state)
{
  (void)state;
  kelvin_grind *g = plate(1000, 1000);
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "workpiece.mesh: the mesh is 209 m across, more than 10 m; the mesh is taken in metres");
  has(g, "is it in millimetres? scaled by 0.001 it is 0.209 m across");
  kelvin_grind_free(g);
  g = plate(1, 1000);
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "path: the path is 100 m long (a 6667 s pass at speed.initial 0.015 m/s), more than 10 m; the path is taken "
         "in metres");
  has(g, "is it in millimetres? scaled by 0.001 it is 0.1 m long");
  kelvin_grind_free(g);
  /* a mesh scaled twice (metres times 1e-3): smaller than the tool, the factor 1000 */
  g = plate(1e-3, 1);
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "workpiece.mesh: the mesh is 0.000209 m across, smaller than the tool, diameter 0.012 m");
  has(g, "is it in kilometres? scaled by 1000 it is 0.209 m across");
  kelvin_grind_free(g);
}

/* workpiece.mesh_scale: 1000 on a mesh file in millimetres (examples/part/plate_weld_mm.stl, 124 mm across):
 * 1.24e5 m, and the hint names the scale that makes it a part, 0.001 (it said "set 1" before) */
static void test_mesh_scale_hint(void **state)
{
  (void)state;
  kelvin_grind *g = NULL;
  char mesh[1024], path[1024];
  snprintf(mesh, sizeof mesh, "%s/examples/part/plate_weld_mm.stl", KELVIN_SOURCE_DIR);
  snprintf(path, sizeof path, "%s/examples/part/path.csv", KELVIN_SOURCE_DIR);
  assert_int_equal(kelvin_grind_create(&g), KELVIN_OK);
  assert_int_equal(kelvin_grind_set_string(g, "workpiece.surface", "mesh"), KELVIN_OK);
  assert_int_equal(kelvin_grind_set_string(g, "workpiece.mesh", mesh), KELVIN_OK);
  assert_int_equal(kelvin_grind_set_string(g, "path.csv", path), KELVIN_OK);
  assert_int_equal(kelvin_grind_set(g, "workpiece.mesh_scale", 1000), KELVIN_OK);
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "(mesh_scale 1000); is it in millimetres? set workpiece.mesh_scale: 0.001");
  assert_int_equal(kelvin_grind_set(g, "workpiece.mesh_scale", 1), KELVIN_OK);
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "(mesh_scale 1); is it in millimetres? set workpiece.mesh_scale: 0.001");
  assert_int_equal(kelvin_grind_set(g, "workpiece.mesh_scale", 1e-6), KELVIN_OK);
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "smaller than the tool (radius 0.006 m); is it in millimetres? set workpiece.mesh_scale: 0.001");
  assert_int_equal(kelvin_grind_set(g, "workpiece.mesh_scale", 1e-3), KELVIN_OK);
  if (kelvin_grind_prepare(g) != KELVIN_OK) fail_msg("the right scale refused: %s", kelvin_grind_errmsg(g));
  kelvin_grind_free(g);
}

/* contact.stiffness in N/mm^1.5 (5000 for 1.58e8 N/m^1.5): a static depth (5 / 5000)^(2/3) = 0.01 m, more than
 * a quarter of the 6 mm tool radius, refused with the conversion factor 1000^1.5 */
static void test_contact_stiffness_in_n_per_mm(void **state)
{
  (void)state;
  kelvin_grind *g = plate(1, 1);
  assert_int_equal(kelvin_grind_set(g, "contact.stiffness", 5000), KELVIN_OK);
  refused(g, KELVIN_ERR_CONFIG);
  has(g, "contact.stiffness: 5000 N/m^1.5 gives a static depth of ");
  has(g, "more than a quarter of tool.radius (0.0015 m); is it in N/mm^1.5? the key takes N/m^1.5 (5000 N/mm^1.5 = "
         "1.58e+08 N/m^1.5)");
  const double want = pow(F0 / 5000, 2.0 / 3.0);
  assert_true(fabs(number_after(g, "a static depth of ") - want) <= 5e-3 * want);
  kelvin_grind_free(g);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_holder_in_n_per_mm),     cmocka_unit_test(test_target_too_large),
    cmocka_unit_test(test_target_above_max),       cmocka_unit_test(test_speed_bound_in_mm_per_s),
    cmocka_unit_test(test_evaluate_pass_units),    cmocka_unit_test(test_mesh_and_path_in_mm),
    cmocka_unit_test(test_mesh_scale_hint),        cmocka_unit_test(test_contact_stiffness_in_n_per_mm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
