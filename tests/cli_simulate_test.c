/* tests/cli_simulate_test.c: `kelvin simulate` end to end: the examples run and write every output,
 * the paper's ball gives the same events on the analytic and the meshed plane, and bad scenes and
 * meshes give one line naming the file and the field, exit status 2, and leave the output folder alone. */
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

static void put(const char *name, const char *text) { kl_test_write(tmpdir, name, text); }

/* read a whole small file; it must exist */
static char *slurp(const char *path)
{
  char *s = kl_test_read(NULL, path);
  assert_non_null(s);
  return s;
}

/* the four examples run (shortened where they are long) and write every output */
static void test_examples(void **state)
{
  (void)state;
  const char *ex[] = {"ball_plane", "ball_mesh", "box_mesh", "grind_pass", "ball_general"};
  char args[2048], err[8192], path[1024];
  for (int i = 0; i < 5; ++i) {
    snprintf(args, sizeof args, "simulate --quiet --out '%s/%s' '%s/examples/%s.yaml'", tmpdir, ex[i], KELVIN_SOURCE_DIR, ex[i]);
    const int rc = kelvin(args, err, sizeof err);
    printf("# %s -> %d %s\n", ex[i], rc, err);
    assert_int_equal(rc, 0);
    const char *files[] = {"contacts.csv", "events.csv", "energy.csv", "summary.json"};
    for (int k = 0; k < 4; ++k) {
      snprintf(path, sizeof path, "%s/%s/%s", tmpdir, ex[i], files[k]);
      assert_int_equal(access(path, R_OK), 0);
    }
  }
  /* the ball's events on the analytic and on the meshed plane: the same to 1e-6 relative */
  snprintf(path, sizeof path, "%s/ball_plane/events.csv", tmpdir);
  char *a = slurp(path);
  snprintf(path, sizeof path, "%s/ball_mesh/events.csv", tmpdir);
  char *b = slurp(path);
  char *sa, *sb;
  char *la = strtok_r(a, "\n", &sa), *lb = strtok_r(b, "\n", &sb);
  int rows = 0;
  while ((la = strtok_r(NULL, "\n", &sa)) && (lb = strtok_r(NULL, "\n", &sb))) {
    double x[10], y[10];
    char n1[64], n2[64], n3[64], n4[64];
    assert_int_equal(sscanf(la, "%lf,%lf,%63[^,],%63[^,],%lf,%lf,%lf,%lf,%lf,%lf", &x[0], &x[1], n1, n2, &x[4], &x[5], &x[6], &x[7], &x[8], &x[9]), 10);
    assert_int_equal(sscanf(lb, "%lf,%lf,%63[^,],%63[^,],%lf,%lf,%lf,%lf,%lf,%lf", &y[0], &y[1], n3, n4, &y[4], &y[5], &y[6], &y[7], &y[8], &y[9]), 10);
    for (int k = 0; k < 10; ++k)
      if (k != 2 && k != 3 && k != 4 && k != 5) assert_true(fabs(x[k] - y[k]) <= 1e-6 * fabs(y[k]));
    ++rows;
  }
  assert_true(rows >= 5);
  free(a);
  free(b);
  /* the force figure shows every contact, also those between output instants: its script plots the
   * contact log (events.csv) beside the output samples */
  snprintf(path, sizeof path, "%s/ball_plane/contact_forces.png.gp", tmpdir);
  char *gp = slurp(path);
  assert_non_null(strstr(gp, "'events.csv'"));
  free(gp);
}

/* bad scenes and meshes: exit 2, one line naming the file and the field, the output folder untouched */
static void test_bad_input(void **state)
{
  (void)state;
  const char *ball = "  - name: ball\n    mass: 1\n    position: [0, 0, 1]\n    shapes:\n      - type: sphere\n        radius: 0.1\n";
  char text[4096];
  struct {
    const char *scene, *ground, *must1, *must2;
  } cases[] = {
    {"unknown_key.yaml", "      - type: plane\n        colour: red\n", "unknown_key.yaml:7", "bodies[0].shapes[0].colour: unknown key"},
    {"missing_mesh.yaml", "      - type: mesh\n        file: nowhere.obj\n", "bodies[0].shapes[0].file", "nowhere.obj: cannot read"},
    {"empty_mesh.yaml", "      - type: mesh\n        file: empty.obj\n", "bodies[0].shapes[0].file", "empty.obj: mesh is empty"},
    {"nan_mesh.yaml", "      - type: mesh\n        file: nan.obj\n", "bodies[0].shapes[0].file", "nan.obj: vertex 1 has a non-finite"},
    {"normal.yaml", "      - type: plane\n        normal: [0, 0, 2]\n", "normal.yaml:7", "bodies[0].shapes[0].normal: must be a unit vector"},
  };
  put("empty.obj", "");
  put("nan.obj", "v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n");
  char out[512], keep[700], args[2048], err[4096];
  snprintf(out, sizeof out, "%s/bad", tmpdir);
  mkdir(out, 0777);
  snprintf(keep, sizeof keep, "%s/summary.json", out);
  kl_test_write(NULL, keep, "precious\n");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    snprintf(text, sizeof text, "duration: 1\nbodies:\n  - name: ground\n    type: static\n    shapes:\n%s%s", cases[i].ground, ball);
    put(cases[i].scene, text);
    snprintf(args, sizeof args, "simulate --out '%s' '%s/%s'", out, tmpdir, cases[i].scene);
    const int rc = kelvin(args, err, sizeof err);
    printf("# %s -> %d: %s", cases[i].scene, rc, err);
    assert_int_equal(rc, 2);
    assert_int_equal(kl_test_lines(err), 1);
    assert_non_null(strstr(err, "kelvin: "));
    assert_non_null(strstr(err, cases[i].must1));
    assert_non_null(strstr(err, cases[i].must2));
    assert_int_equal(kl_test_count_files(out), 1);
  }
  /* the general law's constants: the library's check (kl_gen_law_bad), at the key's line, in the contact section
   * and in a pair; its keys under another model */
  const char *gball = "bodies:\n  - name: ground\n    type: static\n    shapes:\n      - type: plane\n"
                      "  - name: ball\n    position: [0, 0, 1]\n    shapes:\n      - type: sphere\n        radius: 0.1\n";
  struct {
    const char *scene, *head, *tail, *must;
  } gcases[] = {
    {"gen_n2.yaml", "contact:\n  model: general\n  k: 1e9\n  n2: -1\n", "",
     "gen_n2.yaml:5: contact.n2: the damping's exponent of d must be in [0, 5], got -1"},
    {"gen_k.yaml", "contact:\n  model: general\n  c: 10\n", "", "gen_k.yaml:3: contact.k: missing"},
    {"gen_pair.yaml", "contact:\n  model: general\n  k: 1e9\n", "pairs:\n  - bodies: [ball, ground]\n    m: 0\n",
     "gen_pair.yaml:17: pairs[0].m: the rate exponent must be in (0, 5], got 0"},
    {"gen_hc.yaml", "contact:\n  model: hc\n  c: 1e3\n", "",
     "gen_hc.yaml:4: contact.c: only the general law takes it (contact.model: general)"},
  };
  for (size_t i = 0; i < sizeof gcases / sizeof gcases[0]; ++i) {
    snprintf(text, sizeof text, "duration: 1\n%s%s%s", gcases[i].head, gball, gcases[i].tail);
    put(gcases[i].scene, text);
    snprintf(args, sizeof args, "simulate --out '%s' '%s/%s'", out, tmpdir, gcases[i].scene);
    const int rc = kelvin(args, err, sizeof err);
    printf("# %s -> %d: %s", gcases[i].scene, rc, err);
    assert_int_equal(rc, 2);
    assert_int_equal(kl_test_lines(err), 1);
    assert_non_null(strstr(err, gcases[i].must));
    assert_int_equal(kl_test_count_files(out), 1);
  }
  /* zero mass: the field and the value, with the line */
  put("mass.yaml", "duration: 1\nbodies:\n  - name: ground\n    type: static\n    shapes:\n      - type: plane\n"
                   "  - name: ball\n    mass: 0\n    shapes:\n      - type: sphere\n        radius: 0.1\n");
  snprintf(args, sizeof args, "simulate --out '%s' '%s/mass.yaml'", out, tmpdir);
  assert_int_equal(kelvin(args, err, sizeof err), 2);
  printf("# mass.yaml: %s", err);
  assert_non_null(strstr(err, "mass.yaml:8: bodies[1].mass: must be > 0 kg, got 0"));
  /* a missing scene, a YAML syntax error, an unknown option, a missing argument */
  put("syntax.yaml", "duration: [1\nbodies: x\n");
  const char *more[][2] = {{"simulate '/nonexistent/scene.yaml'", "scene.yaml: cannot read"},
                           {"simulate SYNTAX", "malformed YAML"},
                           {"simulate --bogus x.yaml", "--bogus"},
                           {"simulate", "missing scene file"}};
  for (int i = 0; i < 4; ++i) {
    char a2[1024];
    if (strcmp(more[i][0], "simulate SYNTAX") == 0)
      snprintf(a2, sizeof a2, "simulate --out '%s' '%s/syntax.yaml'", out, tmpdir);
    else
      snprintf(a2, sizeof a2, "%s --out '%s'", more[i][0], out);
    assert_int_equal(kelvin(a2, err, sizeof err), 2);
    printf("# %s: %s", more[i][0], err);
    assert_int_equal(kl_test_lines(err), 1);
    assert_non_null(strstr(err, more[i][1]));
  }
  assert_int_equal(kl_test_count_files(out), 1);
  char *k = slurp(keep);
  assert_string_equal(k, "precious\n");
  free(k);
}

/* contacts.csv: a ball set down at rest on the plane away from the origin, at (0.3, -0.2): nothing pushes it
 * sideways, so every contact row's point lies below its centre, px = 0.3 and py = -0.2 (1e-9: a few
 * roundings of numbers of order 1), on the plane (|pz| far below the radius: the static penetration is
 * m g / K = 7e-8 m, 1e-6 allows for where the point is placed inside it), with the plane's normal
 * (|nz| = 1). Each column must be its own coordinate (a swapped or repeated column moves px or py by 0.5). */
static void test_contact_point(void **state)
{
  (void)state;
  put("rest.yaml", "duration: 0.02\noutput_step: 0.001\ngravity: [0, 0, -9.81]\ncontact:\n  model: kv\n"
                   "bodies:\n  - name: ground\n    type: static\n    material: {stiffness: 140e6, restitution: 0.8}\n"
                   "    shapes:\n      - type: plane\n        normal: [0, 0, 1]\n        point: [0, 0, 0]\n"
                   "  - name: ball\n    mass: 1.0\n    position: [0.3, -0.2, 0.1]\n"
                   "    material: {stiffness: 140e6, restitution: 0.8}\n    shapes:\n      - type: sphere\n        radius: 0.1\n");
  char args[2048], err[4096], path[1024];
  snprintf(args, sizeof args, "simulate --quiet --out '%s/rest' '%s/rest.yaml'", tmpdir, tmpdir);
  const int rc = kelvin(args, err, sizeof err);
  printf("# rest.yaml -> %d %s\n", rc, err);
  assert_int_equal(rc, 0);
  snprintf(path, sizeof path, "%s/rest/contacts.csv", tmpdir);
  char *text = slurp(path), *save;
  char *line = strtok_r(text, "\n", &save); /* the header */
  assert_non_null(strstr(line, "px_m,py_m,pz_m,nx,ny,nz"));
  int rows = 0;
  while ((line = strtok_r(NULL, "\n", &save))) {
    double t, p[3], n[3];
    char a[64], b[64];
    int sa, sb, key;
    assert_int_equal(sscanf(line, "%lf,%63[^,],%63[^,],%d,%d,%d,%lf,%lf,%lf,%lf,%lf,%lf", &t, a, b, &sa, &sb, &key, &p[0],
                            &p[1], &p[2], &n[0], &n[1], &n[2]),
                     12);
    if (rows == 0) printf("# first contact row: p = (%.12g, %.12g, %.3g), n = (%g, %g, %g)\n", p[0], p[1], p[2], n[0], n[1], n[2]);
    assert_true(fabs(p[0] - 0.3) <= 1e-9);
    assert_true(fabs(p[1] + 0.2) <= 1e-9);
    assert_true(fabs(p[2]) <= 1e-6);
    assert_true(fabs(fabs(n[2]) - 1.0) <= 1e-9);
    ++rows;
  }
  assert_true(rows >= 10); /* in contact at every output instant of the 0.02 s */
  free(text);
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

/* lines of s that contain pat */
static int count_lines(const char *s, const char *pat)
{
  int n = 0;
  for (const char *p = s; (p = strstr(p, pat)); ++p) ++n;
  return n;
}

/* progress on stderr, as kelvin sweep gives it: none for a run shorter than a second (a 0.2 s box drop,
 * 20 outputs, ~0.02 s of wall time: only the "wrote" line), and at least a line a second with the share
 * done for a longer one (a ball flying for 100 s written every 0.5 ms, 2e5 outputs, ~1.5 s here: asserted
 * when the run took more than 1.2 s of wall time by its own summary, else reported); the figure from its
 * 200001 rows is announced with an estimate (gnuplot reads ~4e5 rows a second) */
static void test_progress(void **state)
{
  (void)state;
  const char *box = "bodies:\n  - name: ground\n    type: static\n"
                    "    material: {stiffness: 1e6, restitution: 0.5}\n    shapes:\n      - type: plane\n"
                    "  - name: box\n    position: [0, 0, 0.11]\n    material: {stiffness: 1e6, restitution: 0.5}\n"
                    "    shapes:\n      - type: box\n        half_extents: [0.1, 0.1, 0.1]\n";
  char text[1024], args[2048], err[8192], path[1024];
  snprintf(text, sizeof text, "duration: 0.2\noutput_step: 0.01\n%s", box);
  put("box_short.yaml", text);
  put("box_long.yaml", "duration: 100\noutput_step: 0.0005\ngravity: [0, 0, 0]\nbodies:\n  - name: ball\n"
                       "    velocity: [1, 0, 0]\n    shapes:\n      - type: sphere\n        radius: 0.1\n");
  snprintf(args, sizeof args, "simulate --out '%s/box_short' '%s/box_short.yaml'", tmpdir, tmpdir);
  assert_int_equal(kelvin(args, err, sizeof err), 0);
  printf("# short run: %s", err);
  assert_int_equal(kl_test_lines(err), 1);
  assert_non_null(strstr(err, "simulate: wrote"));
  snprintf(args, sizeof args, "simulate --out '%s/box_long' '%s/box_long.yaml'", tmpdir, tmpdir);
  assert_int_equal(kelvin(args, err, sizeof err), 0);
  printf("# long run:\n%s", err);
  snprintf(path, sizeof path, "%s/box_long/summary.json", tmpdir);
  char *js = slurp(path);
  const double wall = json_number(js, "wall_s");
  free(js);
  const int n = count_lines(err, "% (t = ");
  printf("# %.2f s of wall time, %d progress lines\n", wall, n);
  if (wall > 1.2) {
    assert_true(n >= 1);
    assert_non_null(strstr(err, "simulate: 100.0% (t = 100 s of 100 s")); /* the last line at the end */
  } else if (wall < 0.9) {
    assert_int_equal(n, 0);
  }
  assert_non_null(strstr(err, "simulate: drawing contact_forces.png from 200001 rows (~0.5 s)"));
}

/* Bounded work (docs/design.md section 8, "Bounded physics"): the paper's ball over 1e6 s (outputs
 * every 100 s) is estimated at 1e6 s / (0.05 of 2 pi sqrt(1 kg / 1.4e8 N/m)) = 3.8e10 sub-steps, refused up
 * front: exit 2, one line naming the scene, the estimate, the limit, the ball and --max-substeps, and no
 * output folder; --max-substeps 1e11 lets it run (the ball at rest takes some 1e4 sub-steps); a bad
 * --max-substeps is a usage error. */
static void test_work_limit(void **state)
{
  (void)state;
  put("long.yaml", "duration: 1e6\noutput_step: 100\nbodies:\n  - name: ground\n    type: static\n"
                   "    material: {stiffness: 140e6, restitution: 0.8}\n    shapes:\n      - type: plane\n"
                   "  - name: ball\n    position: [0, 0, 1.1]\n    material: {stiffness: 140e6, restitution: 0.8}\n"
                   "    shapes:\n      - type: sphere\n        radius: 0.1\n");
  char args[2048], err[8192], out[1024], want[128];
  snprintf(out, sizeof out, "%s/long", tmpdir);
  snprintf(args, sizeof args, "simulate --out '%s' '%s/long.yaml'", out, tmpdir);
  assert_int_equal(kelvin(args, err, sizeof err), 2);
  printf("# %s", err);
  assert_int_equal(kl_test_lines(err), 1);
  snprintf(want, sizeof want, "about %.3g sub-steps", 1e6 / (0.05 * 2 * 3.14159265358979 * sqrt(1 / 140e6)) + 1e4);
  assert_non_null(strstr(err, want));
  assert_non_null(strstr(err, "long.yaml: "));
  assert_non_null(strstr(err, "over the work limit 1e+07 sub-steps"));
  assert_non_null(strstr(err, "of 'ball'"));
  assert_non_null(strstr(err, "--max-substeps"));
  assert_int_equal(kl_test_count_files(out), -1);
  snprintf(args, sizeof args, "simulate --quiet --max-substeps 1e11 --out '%s' '%s/long.yaml'", out, tmpdir);
  assert_int_equal(kelvin(args, err, sizeof err), 0);
  snprintf(args, sizeof args, "simulate --max-substeps 0 --out '%s' '%s/long.yaml'", out, tmpdir);
  assert_int_equal(kelvin(args, err, sizeof err), 2);
  assert_non_null(strstr(err, "--max-substeps: must be a number in [1, 1e15], got '0'"));
}

int main(void)
{
  snprintf(tmpdir, sizeof tmpdir, "/tmp/kl_cli_simulate_XXXXXX");
  if (!mkdtemp(tmpdir)) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_examples), cmocka_unit_test(test_bad_input),
                                     cmocka_unit_test(test_contact_point), cmocka_unit_test(test_progress),
                                     cmocka_unit_test(test_work_limit)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  if (kl_test_rmtree(tmpdir) != 0) return 1;
  return rc;
}
