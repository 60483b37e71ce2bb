/* tests/cli_removal_test.c: `kelvin optimise` / `kelvin evaluate` on a config with a removal: section
 * (docs/design.md section 9) end to end on a short path and a coarse grid: the files exist with the
 * documented headers; removal.csv holds one row per grid cell, its per-pass columns add up to removed_m, and
 * removed_m (and each pass's column) summed over the cells x the cell area is the volume report.json gives
 * for the plan (and the pass); surface.csv's error is what profile.csv and report.json say of the track; bad
 * removal keys give one "FILE:LINE: removal.xxx: ..." line, exit 2 and no output folder; evaluate --pass
 * writes the same files for the given pass (plan "user"); profile.png.gp plots the profile.csv columns its
 * curves' titles name. */
#include <math.h>
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

#include <cjson/cJSON.h>

#include "tests/cli_util.h"

static char tmp[256];

/* a short path over a low weld bead (50 um) on the built-in part, registered (no tilt, no roughness: the track
 * outside the bead is on its target), a coarse grid (0.1 mm cells) and a fast spindle: a few passes */
#define SMALL                                                                                                  \
  "path: {samples: 61, start: -0.012, end: 0.012}\n"                                                           \
  "workpiece: {extent: [0.04, 0.02], resolution: 5e-4, tilt_deg: 0, roughness: {amplitude: 0},\n"              \
  "            bead: {x: 0, height: 5e-5}}\n"                                                                  \
  "verify: {count: 1}\n"
#define REMOVAL "tool: {lead_deg: 30, spindle_rpm: 30000}\nremoval: {preston: 1e-12, resolution: 1e-4, max_passes: 6}\n"

static void write_file(const char *name, const char *text) { kl_test_write(tmp, name, text); }
static char *slurp(const char *name) { return kl_test_read(tmp, name); }
static int kelvin(const char *args, char *err, size_t cap) { return kl_test_kelvin(tmp, NULL, args, err, cap); }

static cJSON *report(const char *dir)
{
  char name[256];
  snprintf(name, sizeof name, "%s/report.json", dir);
  char *t = slurp(name);
  assert_non_null(t);
  cJSON *j = cJSON_Parse(t);
  free(t);
  assert_non_null(j);
  return j;
}

static double jnum(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItem(o, key);
  assert_non_null(v);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* the plan labelled label in report.json */
static const cJSON *plan(const cJSON *rep, const char *label)
{
  const cJSON *p;
  cJSON_ArrayForEach(p, cJSON_GetObjectItem(rep, "plans"))
  if (strcmp(cJSON_GetObjectItem(p, "label")->valuestring, label) == 0) return p;
  fail_msg("no plan '%s' in report.json", label);
  return NULL;
}

/* the first line of a file */
static void header(const char *name, const char *want)
{
  char *t = slurp(name);
  assert_non_null(t);
  const size_t n = strcspn(t, "\n");
  printf("# %s: %.*s\n", name, (int)n, t);
  assert_int_equal(n, strlen(want));
  assert_memory_equal(t, want, n);
  free(t);
}

/* removal.csv of dir against report.json's plan label: the header, a row per cell, the passes' columns
 * adding up to removed_m, the volumes; surface.csv's rows beside it */
static void check_grid(const char *dir, const char *label, int npass_min)
{
  cJSON *rep = report(dir);
  const cJSON *p = plan(rep, label);
  const int np = (int)jnum(p, "passes");
  printf("# %s: plan '%s', %d pass%s\n", dir, label, np, np == 1 ? "" : "es");
  assert_true(np >= npass_min);
  /* removal.csv is the 3-D engine's run of the plan when it ran it, else the device model's */
  const int ver = cJSON_IsTrue(cJSON_GetObjectItem(p, "verified_3d"));
  const char *level = ver ? "verified" : "predicted";
  printf("# %s: removal.csv of the %s plan\n", dir, level);
  const cJSON *grid = cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "removal"), "grid");
  const int nu = (int)jnum(grid, "cells_along"), nw = (int)jnum(grid, "cells_across");
  const double du = jnum(grid, "du_m"), dw = jnum(grid, "dw_m"), area = jnum(grid, "cell_area_m2");
  assert_true(nu > 1 && nw > 1 && du > 0 && dw > 0);
  assert_true(fabs(area - du * dw) <= 1e-12 * area);
  char want[4096] = "x_m,y_m,removed_m", name[256];
  for (int k = 0; k < np; ++k) snprintf(want + strlen(want), sizeof want - strlen(want), ",pass%d_m", k + 1);
  snprintf(name, sizeof name, "%s/removal.csv", dir);
  header(name, want);
  char *t = slurp(name);
  assert_int_equal(kl_test_lines(t), 1 + nu * nw);
  double vol = 0, *vp = calloc((size_t)np, sizeof *vp), worst = 0;
  assert_non_null(vp);
  const char *l = strchr(t, '\n') + 1;
  for (int r = 0; r < nu * nw; ++r) {
    char *e;
    strtod(l, &e); /* x, y */
    strtod(e + 1, &e);
    const double rem = strtod(e + 1, &e);
    assert_true(rem >= 0);
    double sum = 0;
    for (int k = 0; k < np; ++k) {
      assert_int_equal(*e, ',');
      const double d = strtod(e + 1, &e);
      sum += d;
      vp[k] += d;
    }
    assert_int_equal(*e, '\n');
    /* the passes add up to the plan (to the 9 digits written) */
    const double dev = fabs(sum - rem);
    if (dev > worst) worst = dev;
    assert_true(dev <= 1e-7 * (np + 1) * rem + 1e-300); /* (a pass's depths are kept in single precision) */
    vol += rem;
    l = e + 1;
  }
  free(t);
  vol *= area;
  const double vr = jnum(cJSON_GetObjectItem(p, level), "volume_m3");
  printf("# %s: sum removed_m x du dw = %.9g m^3, report.json %.9g m^3 (passes: worst |sum - removed| %.3g m)\n", dir, vol,
         vr, worst);
  assert_true(vr > 0);
  assert_true(fabs(vol - vr) <= 1e-7 * vr);
  const cJSON *q;
  int k = 0;
  cJSON_ArrayForEach(q, cJSON_GetObjectItem(p, "pass"))
  {
    const double v = jnum(cJSON_GetObjectItem(q, level), "volume_m3");
    printf("#   pass %d: %.9g m^3 (removal.csv %.9g)\n", k + 1, v, vp[k] * area);
    assert_true(fabs(vp[k] * area - v) <= 1e-6 * vr);
    ++k;
  }
  assert_int_equal(k, np);
  free(vp);
  /* surface.csv: a row per cell; its largest error above the target on the path's row is the track's
   * residual at most (the track is the path's row and its neighbours) */
  snprintf(name, sizeof name, "%s/surface.csv", dir);
  header(name, "x_m,y_m,error_m");
  t = slurp(name);
  assert_int_equal(kl_test_lines(t), 1 + nu * nw);
  double emax = -INFINITY;
  l = strchr(t, '\n') + 1;
  for (int r = 0; r < nu * nw; ++r) {
    char *e;
    strtod(l, &e);
    strtod(e + 1, &e);
    const double err = strtod(e + 1, &e);
    if (r % nw == (nw - 1) / 2 && err > emax) emax = err;
    l = e + 1;
  }
  free(t);
  const double rmax = jnum(cJSON_GetObjectItem(p, level), "residual_max_m");
  printf("# %s: the path's row's largest error %.3g um, the track's residual max %.3g um\n", dir, 1e6 * emax, 1e6 * rmax);
  assert_true(emax <= rmax + 1e-12);
  cJSON_Delete(rep);
}

/* the index (1-based, as gnuplot counts) of column name in the CSV header line t; 0 if absent */
static int column_of(const char *t, const char *name)
{
  const size_t n = strlen(name);
  int col = 1;
  for (const char *l = t; *l && *l != '\n'; ++col) {
    const size_t w = strcspn(l, ",\n");
    if (w == n && strncmp(l, name, n) == 0) return col;
    l += w;
    if (*l == ',') ++l;
  }
  return 0;
}

/* profile.png.gp of dir against profile.csv's header (the figure plots profile.csv's columns): every curve's column
 * is the one its title names, a plan's pass curves the 3-D engine's columns where report.json says the plan was
 * verified, the device model's where it was not and for the "(device)" curve; want curves in all */
static void check_profile_script(const char *dir, int want)
{
  cJSON *rep = report(dir);
  char name[256];
  snprintf(name, sizeof name, "%s/profile.csv", dir);
  char *csv = slurp(name);
  snprintf(name, sizeof name, "%s/profile.png.gp", dir);
  char *gp = slurp(name);
  assert_non_null(csv);
  assert_non_null(gp);
  int curves = 0;
  for (const char *u = strstr(gp, "using ($1*1e3):($"); u; u = strstr(u + 1, "using ($1*1e3):($")) {
    const int col = atoi(u + strlen("using ($1*1e3):($"));
    const char *ti = strstr(u, " title ");
    assert_non_null(ti);
    ti += strlen(" title ");
    /* the title without its quotes and gnuplot's concatenation: "planned pass 2 (device)", "naive after 3 passes" */
    char title[128], col_name[160];
    size_t n = 0;
    for (; *ti && *ti != '\n' && !(ti[0] == ',' && ti[1] == ' ') && n + 1 < sizeof title; ++ti)
      if (*ti != '\'' && *ti != '.') title[n++] = *ti;
    title[n] = '\0';
    char label[64];
    int k, ver = 0;
    if ((strstr(title, " pass ") || strstr(title, " after ")) && sscanf(title, "%63s", label) == 1)
      ver = cJSON_IsTrue(cJSON_GetObjectItem(plan(rep, label), "verified_3d"));
    if (strcmp(title, "target") == 0 || strcmp(title, "before") == 0)
      snprintf(col_name, sizeof col_name, "%s_m", title);
    else if (sscanf(title, "%63s pass %d", label, &k) == 2)
      snprintf(col_name, sizeof col_name, "%s_pass%d%s_m", label, k,
               ver && !strstr(title, "(device)") ? "_verified" : "");
    else if (sscanf(title, "%63s after %d pass", label, &k) == 2) /* the naive plan's last pass */
      snprintf(col_name, sizeof col_name, "%s_pass%d%s_m", label, k, ver ? "_verified" : "");
    else
      fail_msg("%s: a curve titled '%s'", name, title);
    printf("# %s: '%s' plots column %d, profile.csv's '%s' is column %d\n", name, title, col, col_name,
           column_of(csv, col_name));
    assert_int_equal(col, column_of(csv, col_name));
    ++curves;
  }
  assert_int_equal(curves, want);
  cJSON_Delete(rep);
  free(gp);
  free(csv);
}

static void test_optimise(void **state)
{
  (void)state;
  char err[16384];
  write_file("small.yaml", SMALL REMOVAL);
  const int rc = kelvin("optimise small.yaml --cpu --quiet --out a", err, sizeof err);
  printf("# %s", err);
  assert_int_equal(rc, 0);
  check_grid("a", "planned", 1);
  cJSON *rep = report("a");
  const cJSON *naive = plan(rep, "naive");
  assert_true(jnum(naive, "passes") >= 1);
  cJSON_Delete(rep);
  header("a/passes.csv", "plan,pass,s_m,offset_m,speed_m_s,force_N,force_verified_N");
  header("a/naive_grid.csv", "x_m,y_m,removed_m,error_m");
  char *t = slurp("a/profile.csv");
  assert_non_null(t);
  assert_true(strncmp(t, "s_m,target_m,before_m,planned_pass1_m,planned_pass1_verified_m", 62) == 0);
  assert_non_null(strstr(t, ",naive_pass1_m,naive_pass1_verified_m"));
  assert_int_equal(kl_test_lines(t), 1 + 61);
  free(t);
  /* the figures, where gnuplot is there (else its scripts) */
  const char *figs[] = {"removal.png", "surface.png", "profile.png"};
  for (int i = 0; i < 3; ++i) {
    char name[64];
    snprintf(name, sizeof name, "a/%s%s", figs[i], kl_test_have("gnuplot") ? "" : ".gp");
    t = slurp(name);
    assert_non_null(t);
    free(t);
  }
  /* the profile's figure plots the columns its titles name: per plot target, before, the planned passes, the last
   * one's device-model curve where the plan was verified, the naive plan's last pass; two plots (the whole, the
   * finish) */
  rep = report("a");
  const cJSON *pl = plan(rep, "planned");
  const int np = (int)jnum(pl, "passes"), ver = cJSON_IsTrue(cJSON_GetObjectItem(pl, "verified_3d"));
  cJSON_Delete(rep);
  check_profile_script("a", 2 * (2 + np + ver + 1));
  /* no force-tracking outputs beside them */
  assert_null(slurp("a/trajectory.csv"));
  /* the summary on stdout: planned and naive, each by the device model and the 3-D engine */
  char exe[1024], out[16384];
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  char *const argv[] = {exe, (char *)"optimise", (char *)"small.yaml", (char *)"--cpu", (char *)"--out", (char *)"b", NULL};
  assert_int_equal(kl_test_run(tmp, NULL, argv, 1, out, sizeof out), 0);
  printf("%s", out);
  assert_non_null(strstr(out, "| planned | device model |"));
  assert_non_null(strstr(out, "| naive | device model |"));
  cJSON *rb = report("b");
  if (cJSON_IsTrue(cJSON_GetObjectItem(plan(rb, "planned"), "verified_3d"))) {
    assert_non_null(strstr(out, "| planned | 3-D engine |"));
    assert_non_null(strstr(out, "| naive | 3-D engine |"));
  }
  cJSON_Delete(rb);
}

static void test_evaluate(void **state)
{
  (void)state;
  char err[16384];
  write_file("small.yaml", SMALL REMOVAL);
  write_file("pass.csv", "s,offset,speed\n0,0.0006,0.01\n0.1,0.0006,0.01\n");
  const int rc = kelvin("evaluate small.yaml --pass pass.csv --cpu --quiet --out ev", err, sizeof err);
  printf("# %s", err);
  assert_int_equal(rc, 0);
  check_grid("ev", "user", 1);
  header("ev/removal.csv", "x_m,y_m,removed_m,pass1_m");
  header("ev/passes.csv", "plan,pass,s_m,offset_m,speed_m_s,force_N,force_verified_N");
  header("ev/profile.csv", "s_m,target_m,before_m,user_pass1_m,user_pass1_verified_m");
  assert_null(slurp("ev/naive_grid.csv"));
  char *t = slurp("ev/passes.csv");
  assert_non_null(strstr(t, "\nuser,1,0,0.0006,0.01,"));
  free(t);
}

/* a bad removal key: one line naming the file, the line and the key; exit 2; no output folder */
static void bad(const char *name, const char *yaml, const char *want)
{
  char err[16384], args[512], out[64];
  write_file(name, yaml);
  snprintf(out, sizeof out, "bad-%s", name);
  snprintf(args, sizeof args, "optimise %s --cpu --quiet --out %s", name, out);
  const int rc = kelvin(args, err, sizeof err);
  printf("# kelvin %s -> %d: %s", args, rc, err);
  assert_int_equal(rc, 2);
  assert_non_null(strstr(err, want));
  assert_int_equal(kl_test_lines(err), 1);
  assert_int_equal(kl_test_count_files(out), -1);
}

static void test_bad_keys(void **state)
{
  (void)state;
  bad("neg.yaml", SMALL "tool: {lead_deg: 30, spindle_rpm: 30000}\nremoval:\n  preston: -1e-12\n",
      "neg.yaml:7: removal.preston:");
  bad("unknown.yaml", SMALL "tool: {lead_deg: 30, spindle_rpm: 30000}\nremoval:\n  preston: 1e-12\n  tolerence: 2e-5\n",
      "unknown.yaml:8: removal.tolerence:");
  bad("word.yaml", SMALL "tool: {lead_deg: 30, spindle_rpm: 30000}\nremoval:\n  preston: 1e-12\n  gouge: ten\n",
      "word.yaml:8: removal.gouge:");
  /* found by the library when it plans: no cutting speed (a ball-end at lead 0 does not cut at its tip) */
  bad("lead0.yaml", SMALL "tool: {spindle_rpm: 30000}\nremoval:\n  preston: 1e-12\n", "lead0.yaml:");
  bad("norpm.yaml", SMALL "tool: {lead_deg: 30}\nremoval:\n  preston: 1e-12\n", "norpm.yaml:");
}

/* On an OpenCL device each pass the planner opens (and reopens on its own carving) builds its rollouts: the build's
 * notice is said once per plan, not once per pass (a plan of twenty passes said it a hundred times) */
static void test_opencl_notices(void **state)
{
  (void)state;
  if (!kl_test_have_opencl()) {
    printf("no OpenCL device with fp64: skipped\n");
    skip();
  }
  char err[65536];
  write_file("small.yaml", SMALL REMOVAL);
  const int rc = kelvin("optimise small.yaml --out ocl", err, sizeof err);
  assert_int_equal(rc, 0);
  int n = 0;
  for (const char *q = err; (q = strstr(q, "building the rollout program")) != NULL; ++q) ++n;
  int np = 0;
  for (const char *q = err; (q = strstr(q, "planned pass ")) != NULL; ++q) ++np;
  printf("# the build's notice said %d times over %d progress lines of planned passes\n", n, np);
  assert_true(np >= 2);
  assert_true(n <= 2); /* the planned plan's, the naive plan's */
}

int main(void)
{
  snprintf(tmp, sizeof tmp, "/tmp/kelvin-removal-test-XXXXXX");
  if (!mkdtemp(tmp)) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_bad_keys), cmocka_unit_test(test_optimise),
                                     cmocka_unit_test(test_evaluate), cmocka_unit_test(test_opencl_notices)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  if (kl_test_rmtree(tmp) != 0) return 1;
  return rc;
}
