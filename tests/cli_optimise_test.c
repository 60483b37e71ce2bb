/* tests/cli_optimise_test.c: `kelvin optimise` / `kelvin evaluate` end to end on small problems: outputs,
 * same seed -> same result, and bad or infeasible input (malformed config, unknown key, path off the
 * workpiece, unreachable target, unreadable mesh): a clear message and a non-zero exit. */
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

static char tmp[256];

/* a small problem: 81 samples, 8 + 4 control points, a short screening and refinement */
static const char *small = "path: {samples: 81, start: -0.03, end: 0.03}\n"
                           "workpiece: {extent: [0.08, 0.03], resolution: 5e-4, bead: {x: 0.0}}\n"
                           "offset: {control_points: 8}\nspeed: {control_points: 4}\n"
                           "optimiser: {screening: 64, keep: 1, maxeval: 3}\nverify: {count: 1}\n";

static void write_file(const char *name, const char *text) { kl_test_write(tmp, name, text); }

/* run kelvin with args (paths relative to tmp), stderr into err; exit status */
static int kelvin(const char *args, char *err, size_t cap) { return kl_test_kelvin(tmp, NULL, args, err, cap); }

static char *slurp(const char *name) { return kl_test_read(tmp, name); }

static void test_run_and_reproduce(void **state)
{
  (void)state;
  char err[16384];
  write_file("small.yaml", small);
  assert_int_equal(kelvin("optimise small.yaml --cpu --quiet --out a", err, sizeof err), 0);
  assert_int_equal(kelvin("optimise small.yaml --cpu --quiet --out b", err, sizeof err), 0);
  const char *files[] = {"trajectory.csv", "waypoints.csv", "report.json", "optimise.png"};
  for (size_t i = 0; i < 4; ++i) {
    char name[64];
    snprintf(name, sizeof name, "a/%s", files[i]);
    char *t = slurp(name);
    assert_non_null(t);
    free(t);
  }
  char *a = slurp("a/trajectory.csv"), *b = slurp("b/trajectory.csv");
  assert_string_equal(a, b); /* same seed, same result */
  /* the verified force column is filled */
  assert_non_null(strstr(a, "verified_N"));
  free(a);
  free(b);
  char *j = slurp("a/report.json");
  assert_non_null(strstr(j, "\"verified\""));
  assert_non_null(strstr(j, "\"agreement\""));
  free(j);
}

static void test_evaluate(void **state)
{
  (void)state;
  char err[16384];
  write_file("small.yaml", small);
  write_file("pass.csv", "s,offset,speed\n0,0.0006,0.015\n0.2,0.0006,0.015\n");
  assert_int_equal(kelvin("evaluate small.yaml --pass pass.csv --cpu --quiet --out ev", err, sizeof err), 0);
  char *t = slurp("ev/trajectory.csv");
  assert_non_null(t);
  free(t);
  write_file("bad_pass.csv", "s,offset\n0,0.0006\n");
  assert_int_equal(kelvin("evaluate small.yaml --pass bad_pass.csv --cpu --quiet --out ev2", err, sizeof err), 2);
  assert_non_null(strstr(err, "missing column 'speed_m_s' or 'speed'"));
}

static void expect(const char *args, int status, const char *must)
{
  char err[16384];
  const int rc = kelvin(args, err, sizeof err);
  printf("# kelvin %s -> %d: %s", args, rc, strrchr(err, '\n') && strlen(err) > 1 ? err : "\n");
  assert_int_equal(rc, status);
  assert_non_null(strstr(err, must));
}

static void test_bad_input(void **state)
{
  (void)state;
  write_file("malformed.yaml", "workpiece: [1, 2\n");
  expect("optimise malformed.yaml --cpu --quiet --out x1", 2, "malformed.yaml:");
  write_file("unknown.yaml", "workpiece:\n  colour: red\n");
  expect("optimise unknown.yaml --cpu --quiet --out x2", 2, "colour");
  write_file("badval.yaml", "speed:\n  max: -3\n");
  expect("optimise badval.yaml --cpu --quiet --out x3", 2, "speed.max");
  write_file("nomesh.yaml", "workpiece: {surface: mesh, mesh: missing.stl}\n");
  expect("optimise nomesh.yaml --cpu --quiet --out x4", 2, "missing.stl");
  write_file("garbage.stl", "this is not a mesh\n");
  write_file("garbage.yaml", "workpiece: {surface: mesh, mesh: garbage.stl}\n");
  expect("optimise garbage.yaml --cpu --quiet --out x5", 2, "garbage.stl");
  /* a path that runs off the part */
  char yaml[1024];
  snprintf(yaml, sizeof yaml, "workpiece: {surface: mesh, mesh: %s/examples/part/plate_weld_mm.stl, mesh_scale: 1e-3}\n"
                              "path: {csv: off.csv, samples: 41}\n", KELVIN_SOURCE_DIR);
  write_file("off.yaml", yaml);
  write_file("off.csv", "x,y,z,nx,ny,nz\n0,0,0,0,0,1\n0.2,0,0,0,0,1\n");
  expect("optimise off.yaml --cpu --quiet --out x6", 2, "off.csv:3: the path point (0.2, 0, 0) m is 0.11 m outside the mesh");
  /* a target the offset bounds cannot reach: best achievable and what limits it, exit 1 */
  char big[2048];
  snprintf(big, sizeof big, "path: {samples: 81, start: -0.03, end: 0.03}\n"
                            "workpiece: {extent: [0.08, 0.03], resolution: 5e-4}\n"
                            "offset: {min: 0, max: 0.002, control_points: 8}\nspeed: {control_points: 4}\n"
                            "optimiser: {screening: 32, keep: 1, maxeval: 2}\nverify: {count: 1}\n"
                            "target: {force: 60, max_force: 100}\n");
  write_file("far.yaml", big);
  expect("optimise far.yaml --cpu --quiet --out x7", 2, "naive offset");
  expect("optimise --bogus", 2, "--bogus");
  expect("optimise a.yaml b.yaml", 2, "b.yaml");
}

static double report_num(const char *json, const char *key);

/* the naive offset inside the bounds but the bounds too tight for the target: exit 1, outputs kept */
static void test_unreachable(void **state)
{
  (void)state;
  write_file("tight.yaml", "path: {samples: 81, start: -0.03, end: 0.03}\n"
                           "workpiece: {extent: [0.08, 0.03], resolution: 5e-4}\n"
                           "offset: {min: 0.00095, max: 0.00105, control_points: 8}\nspeed: {control_points: 4}\n"
                           "optimiser: {screening: 32, keep: 1, maxeval: 2}\nverify: {count: 1}\n"
                           "target: {csv: ramp.csv, max_force: 15}\n"); /* the ramp tops 12 N: above the 10 N default, refused */
  write_file("ramp.csv", "s,force\n0,2\n0.06,12\n");
  expect("optimise tight.yaml --cpu --quiet --out x8", 1, "target not reachable: the best pass ('refined-1') still "
                                                         "misses the target by");
  char *t = slurp("x8/trajectory.csv");
  assert_non_null(t);
  free(t);
  /* reachable for the device but not in the 3-D engine (a 40 degree lead and friction 2: the 1-D model's
   * axial share of the contact force leaves out the tilted holder, 11 % RMS apart on the built-in
   * example): without the correction stage the message says so instead of blaming a bound */
  const char *lead = "path: {samples: 81, start: -0.03, end: 0.03}\n"
                     "workpiece: {extent: [0.08, 0.03], resolution: 5e-4}\n"
                     "tool: {lead_deg: 40}\ncontact: {friction: 2}\nverify: {count: 1}\n";
  char yaml[1024];
  snprintf(yaml, sizeof yaml, "%soptimiser: {correct: off}\n", lead);
  write_file("lead.yaml", yaml);
  expect("optimise lead.yaml --cpu --quiet --out x9", 1, "in the 3-D engine while the device model reaches");
  /* with it (optimiser.correct auto: the verified error is 11 % above the predicted) the pass handed over
   * reaches the target in the 3-D engine at reference accuracy: exit 0, the report says how */
  write_file("lead_auto.yaml", lead);
  expect("optimise lead_auto.yaml --cpu --quiet --out x9a", 0, "");
  char *rep = slurp("x9a/report.json");
  assert_non_null(rep);
  const char *cj = strstr(rep, "\"correction\":");
  assert_non_null(cj);
  const double before = report_num(cj, "verified_rms_before"), after = report_num(cj, "verified_rms_after");
  const double its = report_num(cj, "iterations");
  printf("# lead 40 deg, friction 2: verified %.3f %% -> %.3f %% RMS in %g iterations\n", 100 * before, 100 * after, its);
  assert_true(before > 0.05 && after <= 0.003 && its >= 1);
  assert_non_null(strstr(rep, "\"best\":\t\"corrected\""));
  free(rep);
}

/* verify.time_limit on the built-in example: a limit of 1 ms stops the first pass's 3-D verification (each
 * takes 10-30 ms here): exit 1, the message names the setting, nothing is written */
static void test_time_limit(void **state)
{
  (void)state;
  write_file("limit.yaml", "verify: {time_limit: 0.001}\n");
  expect("optimise limit.yaml --cpu --quiet --out x10", 1, "over verify.time_limit (0.001 s)");
  char out[512];
  snprintf(out, sizeof out, "%s/x10", tmp);
  assert_int_equal(kl_test_count_files(out), -1);
  write_file("nolimit.yaml", "verify: {time_limit: 0}\n"); /* 0: none */
  expect("optimise nolimit.yaml --cpu --quiet --out x11", 0, "");
}

/* Bounded physics (docs/design.md section 8, "Bounded physics"), on the built-in example: a 1 g tool
 * on a 1e9 N/m holder, and a disc of inertia 1e-12 kg m^2, are refused up front (exit 1, the message names
 * the time scale, nothing written); restitution 1e-6 diverges within a second (holder forces of 1e21 N)
 * and says so, exit 1, where the run used to end with the target "not reachable by the 1-D model". */
static void test_bounded(void **state)
{
  (void)state;
  char out[512];
  write_file("stiff_holder.yaml", "tool: {mass: 1e-3}\nholder: {stiffness: 1e9}\n");
  expect("optimise stiff_holder.yaml --cpu --quiet --out x20", 1, "refused up front");
  expect("optimise stiff_holder.yaml --cpu --quiet --out x20", 1, "1/40 of the holder period 2 pi sqrt(m/K) of 'the "
                                                                 "tool': mass 0.001 kg on holder stiffness 1e+09 N/m");
  snprintf(out, sizeof out, "%s/x20", tmp);
  assert_int_equal(kl_test_count_files(out), -1);
  write_file("light_disc.yaml", "tool: {shape: disc, inertia: [1e-12, 1e-12, 1e-12]}\n");
  expect("optimise light_disc.yaml --cpu --quiet --out x21", 1, "refused up front");
  expect("optimise light_disc.yaml --cpu --quiet --out x21", 1, "of the contact period 2 pi sqrt(m/K) of 'the tool'");
  write_file("cr.yaml", "contact: {cr: 1e-6}\n");
  char err[16384];
  assert_int_equal(kelvin("optimise cr.yaml --cpu --quiet --out x22", err, sizeof err), 1);
  printf("# cr 1e-6: %s", err);
  /* both passes diverge; the naive and the initial pass run side by side, and the one that diverges first
   * stops the other (under AddressSanitizer it can be either) */
  assert_true(strstr(err, "3-D verification of 'naive' diverged") || strstr(err, "3-D verification of 'initial' diverged"));
  assert_non_null(strstr(err, "a holder force of"));
  assert_non_null(strstr(err, "the contact damping (contact.cr 1e-06"));
  assert_null(strstr(err, "not reachable"));
  assert_int_equal(kl_test_lines(err), 1);
  snprintf(out, sizeof out, "%s/x22", tmp);
  assert_int_equal(kl_test_count_files(out), -1);
}

/* a number field of report.json ("key":<tab>value), NAN if absent */
static double report_num(const char *json, const char *key)
{
  char pat[96];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *at = json ? strstr(json, pat) : NULL;
  return at ? strtod(at + strlen(pat), NULL) : NAN;
}

/* Small rollout batches sent from the device to the host (KELVIN_ROLLOUT_HOST_BELOW): with every batch
 * below the threshold the run is the --cpu run, byte for byte, and the report counts every rollout as
 * the host's; a bad value is an input error naming the variable, with nothing written. Needs an OpenCL
 * device (the variable means nothing on the twin). */
/* kelvin optimise with the general law (contact.model general, a soft contact k 3e7 with c 3e5, n2 1, m 0.5) runs
 * end to end, on the device model and in its 3-D verification with the same law: the naive pass's device vs 3-D
 * agreement (the report's first "rms") within 0.2 % of the target (measured 0.093 %); a bad constant is named by
 * its key with the file and line. Broken: the device's law with n2 read as 0 (kl_grind_force): the report's
 * agreement read 0 (no verified comparison), the test failed once it asserted rms > 0 (before that it passed: a
 * hole, now closed). */
static void test_general(void **state)
{
  (void)state;
  char err[16384], cfg[4096];
  snprintf(cfg, sizeof cfg, "%scontact: {model: general, stiffness: 3e7, c: 3e5, n2: 1.0, m: 0.5}\n", small);
  write_file("general.yaml", cfg);
  assert_int_equal(kelvin("optimise general.yaml --cpu --quiet --out gen", err, sizeof err), 0);
  char *j = slurp("gen/report.json");
  assert_non_null(j);
  assert_non_null(strstr(j, "\"contact_model\":\t\"general\""));
  const double rms = report_num(j, "rms");
  printf("# general law: naive pass device vs 3-D %.4f %% RMS\n", 100 * rms);
  assert_true(rms > 0 && rms < 2e-3); /* 0: no verified pass to compare */
  free(j);
  snprintf(cfg, sizeof cfg, "%scontact: {model: general, c: 3e5, m: -1}\n", small);
  write_file("general_bad.yaml", cfg);
  assert_int_equal(kelvin("optimise general_bad.yaml --cpu --quiet --out genbad", err, sizeof err), 2);
  printf("# %s", err);
  assert_non_null(strstr(err, "contact.m"));
}

static void test_host_below(void **state)
{
  (void)state;
  if (!kl_test_have_opencl()) {
    printf("no OpenCL device with fp64: skipped\n");
    skip();
  }
  write_file("small.yaml", small);
  char err[16384];
  assert_int_equal(kl_test_kelvin(tmp, "KELVIN_ROLLOUT_HOST_BELOW=100000", "optimise small.yaml --quiet --out hb", err, sizeof err), 0);
  assert_int_equal(kelvin("optimise small.yaml --cpu --quiet --out hc", err, sizeof err), 0);
  const char *files[] = {"trajectory.csv", "waypoints.csv"};
  for (size_t i = 0; i < 2; ++i) {
    char fa[64], fb[64];
    snprintf(fa, sizeof fa, "hb/%s", files[i]);
    snprintf(fb, sizeof fb, "hc/%s", files[i]);
    char *a = slurp(fa), *b = slurp(fb);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, b);
    free(a);
    free(b);
  }
  char *rep = slurp("hb/report.json");
  const double n = report_num(rep, "evaluations"), nh = report_num(rep, "rollouts_on_host");
  printf("# KELVIN_ROLLOUT_HOST_BELOW=100000: %g rollouts, %g on the host\n", n, nh);
  assert_true(n > 0 && nh >= n); /* every batch on the host (the predictions of the passes included) */
  assert_true(report_num(rep, "host_below") == 100000);
  free(rep);
  assert_int_equal(kl_test_kelvin(tmp, "KELVIN_ROLLOUT_HOST_BELOW=7x", "optimise small.yaml --quiet --out hx", err, sizeof err), 2);
  printf("# %s", err);
  assert_non_null(strstr(err, "KELVIN_ROLLOUT_HOST_BELOW must be a whole number >= 0, got '7x'"));
  assert_int_equal(kl_test_count_files("hx"), -1);
}

int main(void)
{
  snprintf(tmp, sizeof tmp, "/tmp/kelvin-opt-test-XXXXXX");
  if (!mkdtemp(tmp)) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_run_and_reproduce), cmocka_unit_test(test_evaluate),
                                     cmocka_unit_test(test_bad_input), cmocka_unit_test(test_unreachable),
                                     cmocka_unit_test(test_host_below), cmocka_unit_test(test_time_limit),
                                     cmocka_unit_test(test_bounded), cmocka_unit_test(test_general)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  if (kl_test_rmtree(tmp) != 0) return 1;
  return rc;
}
