/* optimiser/scenario_test.c: the scenario sets of robust passes (optimiser/scenario.h): common random numbers (the
 * same seed, the same set bit for bit), the moments and ranges of the draws against the configured distributions
 * computed here, the out-of-sample set disjoint from the optimisation set (every pair checked, and a forced
 * collision drawn again), each parameter landing on its setting in its unit, the scenario problem against the
 * nominal by hand (a registration along z, a stiffer holder, a shifted bead) and the parallel pack against the
 * problems one by one. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>

#include "core/clock.h"
#include "io/settings.h"
#include "optimiser/scenario.h"
#include "optimiser/schema.h"

#define S256 256

/* settings with spreads on several parameters, each distribution once */
static void spread_settings(kl_settings *s)
{
  kl_settings_default(s);
  s->unc_scenarios = S256;
  s->unc_reg_z = 1e-4; /* normal */
  s->unc_bead_h = 5e-5;
  s->unc_bead_h_dist = KL_DIST_UNIFORM;
  s->unc_holder_K = 0.1;
  s->unc_holder_K_dist = KL_DIST_TRUNCATED;
  s->unc_cr = 0.05;
  s->unc_cr_dist = KL_DIST_TRUNCATED;
  s->unc_bead_x = 1e-3; /* normal */
}

static double *draw(const kl_settings *s, int which, int S)
{
  double *dev = malloc((size_t)S * KL_UNC_N * sizeof *dev);
  assert_non_null(dev);
  char msg[1024];
  const kelvin_status st = kl_scenarios_draw(s, which, S, dev, msg, sizeof msg);
  if (st != KELVIN_OK) fail_msg("%s", msg);
  return dev;
}

/* Common random numbers: the same seed gives the same set bit for bit, another seed another set. */
static void test_same_seed_same_set(void **state)
{
  (void)state;
  kl_settings s;
  spread_settings(&s);
  s.unc_rough = 1;
  for (int which = 0; which < 2; ++which) {
    double *a = draw(&s, which, S256), *b = draw(&s, which, S256);
    assert_memory_equal(a, b, (size_t)S256 * KL_UNC_N * sizeof *a);
    kl_settings t = s;
    if (which == 0) t.unc_seed = 5;
    else t.unc_verify_seed = 5;
    double *c = draw(&t, which, S256);
    assert_true(memcmp(a, c, (size_t)S256 * KL_UNC_N * sizeof *a) != 0);
    /* another seed: not one row alike */
    for (int i = 0; i < S256; ++i) assert_true(memcmp(a + i * KL_UNC_N, c + i * KL_UNC_N, KL_UNC_N * sizeof *a) != 0);
    free(a);
    free(b);
    free(c);
  }
  assert_int_equal(kl_unc_active(&s), 6);
  assert_string_equal(kl_unc_name(KL_UNC_REG_X), "registration_x");
  assert_string_equal(kl_unc_name(KL_UNC_TOOL_R), "tool_radius");
  assert_null(kl_unc_name(KL_UNC_N));
  /* every key named by kl_unc_name is in the settings table, with its _dist except roughness */
  for (int i = 0; i < KL_UNC_N; ++i) {
    char key[96];
    snprintf(key, sizeof key, "uncertainty.%s", kl_unc_name(i));
    assert_non_null(kl_settings_key(key));
    snprintf(key, sizeof key, "uncertainty.%s_dist", kl_unc_name(i));
    assert_true((kl_settings_key(key) != NULL) == (i != KL_UNC_ROUGH));
  }
}

/* The optimisation set's sample mean and standard deviation of each parameter against the configured ones,
 * within what 256 points allow: three standard errors of plain Monte Carlo (sigma / sqrt(N) for the mean,
 * sigma / sqrt(2 N) for the standard deviation of a normal; the uniform's and the truncated normal's are smaller),
 * which randomised QMC meets with room (its errors on these one-dimensional integrals are O(1/N)). A spread taken
 * as a full width instead of a half-width (std halved), or a missed inverse CDF, is far outside. The uniform stays
 * within +- its half-width and reaches 0.95 of it; the truncated normal within +- c spreads. */
static void test_moments_and_ranges(void **state)
{
  (void)state;
  kl_settings s;
  spread_settings(&s);
  double *dev = draw(&s, 0, S256);
  const double c = s.unc_trunc;
  /* the truncated normal's standard deviation: sigma sqrt(1 - 2 c phi(c) / (2 Phi(c) - 1)) */
  const double phi = exp(-0.5 * c * c) / sqrt(2 * M_PI), Z = 2 * gsl_cdf_ugaussian_P(c) - 1;
  const double tstd = sqrt(1 - 2 * c * phi / Z);
  const struct {
    int i;
    double sd; /* the distribution's standard deviation, in spreads */
  } p[] = {{KL_UNC_REG_Z, 1.0}, {KL_UNC_BEAD_H, 1.0 / sqrt(3.0)}, {KL_UNC_HOLDER_K, tstd}, {KL_UNC_CR, tstd},
           {KL_UNC_BEAD_X, 1.0}};
  for (size_t q = 0; q < sizeof p / sizeof p[0]; ++q) {
    const int i = p[q].i;
    const double sp = kl_unc_spread(&s, i), sd = p[q].sd * sp;
    double m = 0, v = 0, lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < S256; ++k) m += dev[k * KL_UNC_N + i] / S256;
    for (int k = 0; k < S256; ++k) {
      const double d = dev[k * KL_UNC_N + i];
      v += (d - m) * (d - m) / (S256 - 1);
      lo = fmin(lo, d);
      hi = fmax(hi, d);
    }
    const double sdev = sqrt(v);
    printf("  %-18s mean %+.3e (tol %.2e)  std %.4e (expected %.4e, tol %.2e)  range [%+.3e, %+.3e]\n", kl_unc_name(i),
           m, 3 * sd / 16.0, sdev, sd, 3 * sd / sqrt(2.0 * S256), lo, hi);
    assert_true(fabs(m) <= 3 * sd / 16.0);
    assert_true(fabs(sdev - sd) <= 3 * sd / sqrt(2.0 * S256));
    if (kl_unc_dist(&s, i) == KL_DIST_UNIFORM) {
      assert_true(lo >= -sp && hi <= sp);
      assert_true(lo <= -0.95 * sp && hi >= 0.95 * sp);
    }
    if (kl_unc_dist(&s, i) == KL_DIST_TRUNCATED) assert_true(lo >= -c * sp && hi <= c * sp);
  }
  /* parameters without a spread stay at 0 */
  for (int k = 0; k < S256; ++k)
    assert_true(dev[k * KL_UNC_N + KL_UNC_REG_X] == 0 && dev[k * KL_UNC_N + KL_UNC_TOOL_R] == 0 &&
                dev[k * KL_UNC_N + KL_UNC_ROUGH] == 0);
  /* a uniform too wide for its setting is refused before drawing: bead.width 1.5e-3 - 2e-3 < 1e-5 */
  kl_settings t = s;
  t.unc_bead_w = 2e-3;
  t.unc_bead_w_dist = KL_DIST_UNIFORM;
  char msg[1024];
  assert_int_equal(kl_scenarios_draw(&t, 0, S256, dev, msg, sizeof msg), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(msg, "uncertainty.bead_width: a uniform spread of 0.002 m"));
  /* ... and a normal one is refused at the scenario that leaves the bounds, with the probability */
  t.unc_bead_w_dist = KL_DIST_NORMAL;
  assert_int_equal(kl_scenarios_draw(&t, 0, S256, dev, msg, sizeof msg), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(msg, "uncertainty.bead_width: the draw -"));
  /* Phi((1e-5 - 1.5e-3) / 2e-3) = Phi(-0.745) = 0.228 */
  if (!strstr(msg, "with probability 0.228")) fail_msg("%s", msg);
  free(dev);
}

/* The first points by hand: the optimisation set is Sobol's points from index 1 ((1/2, 1/2), (3/4, 1/4), (1/4, 3/4)
 * in two dimensions; index 0, all zero, is not one of them) shifted by two uniforms of mt19937(uncertainty.seed)
 * modulo 1; the out-of-sample set's first scenario is two uniforms of mt19937(uncertainty.verify_seed) in (0, 1).
 * Then the inverse CDFs: a uniform of half-width a is a (2u - 1), a normal of spread s is s Phi^-1(u). */
static void test_first_points_by_hand(void **state)
{
  (void)state;
  kl_settings s;
  kl_settings_default(&s);
  s.unc_scenarios = 3;
  s.unc_reg_x = 2e-4;
  s.unc_reg_x_dist = KL_DIST_UNIFORM;
  s.unc_reg_z = 1e-4;
  double *opt = draw(&s, 0, 3), *mc = draw(&s, 1, 1);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  assert_non_null(r);
  gsl_rng_set(r, s.unc_seed);
  const double s0 = gsl_rng_uniform(r), s1 = gsl_rng_uniform(r);
  const double sob[3][2] = {{0.5, 0.5}, {0.75, 0.25}, {0.25, 0.75}};
  for (int i = 0; i < 3; ++i) {
    const double u0 = fmod(sob[i][0] + s0, 1.0), u1 = fmod(sob[i][1] + s1, 1.0);
    const double *row = opt + i * KL_UNC_N;
    const double hx = 2e-4 * (2 * u0 - 1), hz = 1e-4 * gsl_cdf_ugaussian_Pinv(u1);
    if (fabs(row[KL_UNC_REG_X] - hx) > 1e-18 || fabs(row[KL_UNC_REG_Z] - hz) > 1e-18)
      fail_msg("point %d: %.17g %.17g, by hand %.17g %.17g", i, row[KL_UNC_REG_X], row[KL_UNC_REG_Z], hx, hz);
  }
  gsl_rng_set(r, s.unc_verify_seed);
  const double v0 = gsl_rng_uniform_pos(r), v1 = gsl_rng_uniform_pos(r);
  assert_true(fabs(mc[KL_UNC_REG_X] - 2e-4 * (2 * v0 - 1)) <= 1e-18);
  assert_true(fabs(mc[KL_UNC_REG_Z] - 1e-4 * gsl_cdf_ugaussian_Pinv(v1)) <= 1e-18);
  gsl_rng_free(r);
  free(opt);
  free(mc);
}

/* The out-of-sample set shares no point with the optimisation set (every pair), and a draw forced to collide is
 * drawn again; equal seeds are refused. */
static void test_disjoint(void **state)
{
  (void)state;
  kl_settings s;
  spread_settings(&s);
  const int V = 1000;
  double *opt = draw(&s, 0, S256), *mc = draw(&s, 1, V);
  for (int i = 0; i < V; ++i)
    for (int j = 0; j < S256; ++j) {
      int same = 1;
      for (int k = 0; k < KL_UNC_N; ++k) same &= mc[i * KL_UNC_N + k] == opt[j * KL_UNC_N + k];
      if (same) fail_msg("out-of-sample scenario %d equals optimisation scenario %d", i, j);
    }
  /* a collision forced: avoid the first 5 points of the stream itself. Scenario 0 is drawn again until it is the
   * stream's point 5, and every later one is the stream's point i + 5 */
  char msg[1024];
  const int K = 5, N = 40;
  double *ref = malloc((size_t)(N + K) * KL_UNC_N * sizeof *ref), *got = malloc((size_t)N * KL_UNC_N * sizeof *got);
  assert_non_null(ref);
  assert_non_null(got);
  int redrawn = -1;
  assert_int_equal(kl_scenarios_draw_mc(&s, N + K, NULL, 0, ref, &redrawn, msg, sizeof msg), KELVIN_OK);
  assert_int_equal(redrawn, 0);
  assert_int_equal(kl_scenarios_draw_mc(&s, N, ref, K, got, &redrawn, msg, sizeof msg), KELVIN_OK);
  assert_int_equal(redrawn, K);
  assert_memory_equal(got, ref + K * KL_UNC_N, (size_t)N * KL_UNC_N * sizeof *got);
  /* the same seed for both sets is refused */
  s.unc_verify_seed = s.unc_seed;
  assert_int_equal(kl_scenarios_draw(&s, 1, V, mc, msg, sizeof msg), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(msg, "uncertainty.verify_seed: must differ from uncertainty.seed"));
  free(opt);
  free(mc);
  free(ref);
  free(got);
}

/* kl_scenario_settings by hand: each parameter on its setting, relative ones as factors, absolute ones added. */
static void test_settings_by_hand(void **state)
{
  (void)state;
  kl_settings s, o;
  kl_settings_default(&s);
  double dev[KL_UNC_N];
  for (int i = 0; i < KL_UNC_N; ++i) dev[i] = 1e-4 * (i + 1);
  dev[KL_UNC_REG_TILT] = 0.05;
  dev[KL_UNC_ROUGH] = 12345;
  dev[KL_UNC_WORK_E] = 0.1;
  dev[KL_UNC_TOOL_E] = -0.2;
  dev[KL_UNC_HOLDER_K] = 0.3;
  dev[KL_UNC_HOLDER_D] = -0.4;
  dev[KL_UNC_TOOL_MASS] = 0.5;
  dev[KL_UNC_CR] = -0.1;
  char msg[1024];
  if (kl_scenario_settings(&s, dev, &o, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  assert_true(o.shift[0] == s.shift[0] + dev[0] && o.shift[1] == s.shift[1] + dev[1] &&
              o.shift[2] == s.shift[2] + dev[2]);
  assert_true(o.tilt_deg == s.tilt_deg + 0.05);
  assert_true(o.bead_h == s.bead_h + dev[4] && o.bead_w == s.bead_w + dev[5] && o.bead_x == s.bead_x + dev[6]);
  assert_true(o.step_h == s.step_h + dev[7]);
  assert_true(o.rough_seed == 12345UL);
  assert_true(o.work_E == s.work_E * 1.1 && o.tool_E == s.tool_E * 0.8);
  assert_true(o.holder_K == s.holder_K * 1.3 && o.holder_D == s.holder_D * (1 - 0.4));
  assert_true(o.tool_mass == s.tool_mass * 1.5);
  assert_true(o.cr == s.cr - 0.1);
  assert_true(o.tool_R == s.tool_R + dev[15]);
  /* everything else as it was */
  kl_settings back = o;
  back.shift[0] = s.shift[0], back.shift[1] = s.shift[1], back.shift[2] = s.shift[2];
  back.tilt_deg = s.tilt_deg, back.bead_h = s.bead_h, back.bead_w = s.bead_w, back.bead_x = s.bead_x;
  back.step_h = s.step_h, back.rough_seed = s.rough_seed, back.work_E = s.work_E, back.tool_E = s.tool_E;
  back.holder_K = s.holder_K, back.holder_D = s.holder_D, back.tool_mass = s.tool_mass, back.cr = s.cr;
  back.tool_R = s.tool_R;
  assert_memory_equal(&back, &s, sizeof s);
  /* out of the bounds: named, with the draw */
  double bad[KL_UNC_N] = {0};
  bad[KL_UNC_CR] = 0.6; /* cr 1.1 > 1 */
  assert_int_equal(kl_scenario_settings(&s, bad, &o, msg, sizeof msg), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(msg, "uncertainty.restitution: the draw +0.6 makes contact.cr 1.1, outside its bounds"));
  assert_non_null(strstr(msg, "truncated"));
  /* a mesh part takes no bead, step or roughness spread */
  s.surface = KL_SURF_MESH;
  s.unc_step_h = 1e-5;
  assert_int_equal(kl_uncertainty_check(&s, msg, sizeof msg), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(msg, "uncertainty.step_height: a mesh part"));
}

/* a flat plane part (no tilt, no roughness), with or without the default bead */
static kl_problem *plane(int bead, int ns, kl_settings *s)
{
  kl_settings_default(s);
  s->surface = KL_SURF_PLANE;
  s->tilt_deg = 0;
  s->rough_a = 0;
  if (!bead) s->bead_h = 0;
  s->ns = ns;
  kl_problem *pb = NULL;
  char msg[1024];
  if (kl_problem_build(s, NULL, &pb, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  return pb;
}

static kl_problem *scenario(const kl_problem *nom, const kl_problem_inputs *in, int i, double d)
{
  double dev[KL_UNC_N] = {0};
  dev[i] = d;
  kl_problem *pb = NULL;
  char msg[1024];
  if (kl_scenario_problem(nom, in, dev, &pb, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  /* what every scenario shares with the nominal */
  assert_memory_equal(pb->s, nom->s, (size_t)nom->ns * sizeof(double));
  assert_memory_equal(pb->lo, nom->lo, (size_t)nom->nc * sizeof(double));
  assert_memory_equal(pb->hi, nom->hi, (size_t)nom->nc * sizeof(double));
  assert_true(pb->gp[KL_GP_FREF] == nom->gp[KL_GP_FREF] && pb->gp[KL_GP_TREF] == nom->gp[KL_GP_TREF]);
  assert_true(pb->set.o_min == nom->set.o_min && pb->set.o_max == nom->set.o_max);
  return pb;
}

/* The scenario problem against the nominal by hand on a flat plane: the part raised by d raises the protrusion by
 * d (the plane z = d, the ball's centre R above the path: h = R - (R - d)); a holder stiffness 0.1 higher is 1.1
 * K in gp and nothing else; a bead moved by one sample spacing ds gives h(s) = h_nominal(s - ds) within the mesh's
 * error: a Gaussian of height a and width w meshed at spacing r is off by at most (a / w^2) r^2 / 8, the two
 * meshes by twice that. */
static void test_scenario_problem(void **state)
{
  (void)state;
  kl_settings s;
  kl_problem *nom = plane(0, 241, &s);
  const int ns = nom->ns;
  const double d = 1e-4;
  kl_problem *up = scenario(nom, NULL, KL_UNC_REG_Z, d);
  for (int k = 0; k < ns; ++k)
    if (fabs(up->h[k] - (nom->h[k] + d)) > 1e-12)
      fail_msg("sample %d: h %.9g, nominal %.9g + %g", k, up->h[k], nom->h[k], d);
  assert_memory_equal(up->gp, nom->gp, sizeof nom->gp);
  kl_problem *stiff = scenario(nom, NULL, KL_UNC_HOLDER_K, 0.1);
  assert_true(fabs(stiff->gp[KL_GP_KH] - 1.1 * s.holder_K) <= 1e-12 * s.holder_K);
  assert_memory_equal(stiff->h, nom->h, (size_t)ns * sizeof(double));
  for (int j = 0; j < KL_GP_N; ++j)
    if (j != KL_GP_KH) assert_true(stiff->gp[j] == nom->gp[j]);
  kl_problem_free(up);
  kl_problem_free(stiff);
  kl_problem_free(nom);

  nom = plane(1, 301, &s);
  const double ds = nom->s[1] - nom->s[0]; /* 0.4 mm: 1.6 mesh cells, not a whole number of them */
  kl_problem *moved = scenario(nom, NULL, KL_UNC_BEAD_X, ds);
  const double tol = 2 * (s.bead_h / (s.bead_w * s.bead_w)) * s.resolution * s.resolution / 8;
  double worst = 0, moved_most = 0;
  for (int k = 1; k < nom->ns; ++k) {
    worst = fmax(worst, fabs(moved->h[k] - nom->h[k - 1]));
    moved_most = fmax(moved_most, fabs(moved->h[k] - nom->h[k]));
  }
  printf("  bead moved by %.3g m: |h(s) - h_nominal(s - ds)| <= %.3g m (tolerance %.3g m); |h(s) - h_nominal(s)| "
         "up to %.3g m\n", ds, worst, tol, moved_most);
  assert_true(worst <= tol);
  assert_true(moved_most > 10 * tol); /* the bead did move */
  kl_problem_free(moved);
  kl_problem_free(nom);
}

/* A registration moves the nominal's part rigidly (the tool moved back, kl_problem_protrusion): on the built-in part
 * (curved, tilted, a bead, rough) the scenario's protrusion equals that of kl_problem_build of the scenario's settings,
 * whose part is meshed tilted and shifted, to rounding (1e-12 m against h ~ 1e-4 m); a sign or a pivot wrong is
 * ~1e-6 m off or more. */
static void test_registration_against_build(void **state)
{
  (void)state;
  kl_settings s;
  kl_settings_default(&s);
  s.shift[0] = 2e-3; /* a pivot away from the origin */
  s.shift[2] = 1e-4;
  char msg[1024];
  kl_problem *nom = NULL;
  if (kl_problem_build(&s, NULL, &nom, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  double dev[KL_UNC_N] = {0};
  dev[KL_UNC_REG_X] = 3e-4;
  dev[KL_UNC_REG_Y] = -2e-4;
  dev[KL_UNC_REG_Z] = 5e-5;
  dev[KL_UNC_REG_TILT] = 0.2;
  kl_problem *sc = NULL, *ref = NULL;
  if (kl_scenario_problem(nom, NULL, dev, &sc, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  kl_settings t = s;
  t.shift[0] += dev[KL_UNC_REG_X];
  t.shift[1] += dev[KL_UNC_REG_Y];
  t.shift[2] += dev[KL_UNC_REG_Z];
  t.tilt_deg += dev[KL_UNC_REG_TILT];
  if (kl_problem_build(&t, NULL, &ref, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  double worst = 0, moved = 0;
  for (int k = 0; k < nom->ns; ++k) {
    worst = fmax(worst, fabs(sc->h[k] - ref->h[k]));
    worst = fmax(worst, 1e-3 * fabs(sc->kap[k] - ref->kap[k])); /* kappa ~1, weighed as a mm */
    moved = fmax(moved, fabs(sc->h[k] - nom->h[k]));
  }
  printf("  registration: |h - h(build)| <= %.3g m, the part moved h by up to %.3g m\n", worst, moved);
  assert_true(worst <= 1e-12);
  assert_true(moved > 1e-5);
  /* the scenario's own part is the nominal's moved: its height at a point equals the build's part's */
  const double p[3] = {0.01, 0.0, 0.05}, down[3] = {0, 0, -1};
  double ta, tb, na[3], nb[3];
  assert_true(kl_mesh_raycast(sc->actual, p, down, 0, 1, &ta, na));
  assert_true(kl_mesh_raycast(ref->actual, p, down, 0, 1, &tb, nb));
  assert_true(fabs(ta - tb) <= 1e-12);
  kl_problem_free(sc);
  kl_problem_free(ref);
  kl_problem_free(nom);
}

/* A mesh part (a scan) is moved by the registration: a flat grid raised by d raises h by d; moved along x, a flat
 * part gives the same h. */
static void test_mesh_registration(void **state)
{
  (void)state;
  const int nx = 160, ny = 8;
  double *v = malloc((size_t)(nx + 1) * (ny + 1) * 3 * sizeof *v);
  assert_non_null(v);
  for (int j = 0; j <= ny; ++j)
    for (int i = 0; i <= nx; ++i) {
      double *p = v + 3 * (j * (nx + 1) + i);
      p[0] = -0.08 + 0.16 * i / nx;
      p[1] = -0.02 + 0.04 * j / ny;
      p[2] = 0;
    }
  kl_mesh *m = NULL;
  char msg[1024];
  assert_int_equal(kl_mesh_from_grid(v, nx, ny, &m, msg, sizeof msg), KELVIN_OK);
  free(v);
  kl_settings s;
  kl_settings_default(&s);
  s.surface = KL_SURF_MESH;
  kl_problem_inputs in = {0};
  in.mesh = m;
  kl_problem *nom = NULL;
  if (kl_problem_build(&s, &in, &nom, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  kl_problem *up = scenario(nom, &in, KL_UNC_REG_Z, 2e-4), *along = scenario(nom, &in, KL_UNC_REG_X, 1e-3);
  for (int k = 0; k < nom->ns; ++k) {
    assert_true(fabs(up->h[k] - (nom->h[k] + 2e-4)) <= 1e-12);
    assert_true(fabs(along->h[k] - nom->h[k]) <= 1e-12);
  }
  assert_true(up->actual != m && up->own_actual);
  kl_problem_free(up);
  kl_problem_free(along);
  kl_problem_free(nom);
  kl_mesh_free(m);
}

static int stop_at_once(void *ctx, double fraction, const char *text)
{
  (void)ctx, (void)fraction, (void)text;
  return 1;
}

/* kl_scenarios_pack, in parallel, matches the scenario problems packed one by one, bit for bit (the first ncheck of
 * S; spreads that mesh a new part, bead: 1, and spreads that do not: 0); the time per scenario is printed. */
static void pack_against_one_by_one(const kl_settings *set, const kl_problem_inputs *in, int S, int ncheck, int bead,
                                    const char *name)
{
  kl_settings s = *set;
  s.unc_scenarios = S;
  s.unc_reg_z = 2e-5;
  s.unc_reg_x = 2e-4;
  s.unc_reg_tilt = 0.05;
  s.unc_holder_K = 0.1;
  s.unc_holder_K_dist = KL_DIST_TRUNCATED;
  s.unc_tool_R = 1e-5;
  s.unc_cr = 0.02;
  s.unc_cr_dist = KL_DIST_UNIFORM;
  if (bead) {
    s.unc_bead_x = 5e-4;
    s.unc_bead_h = 2e-5;
  }
  char msg[1024];
  kl_problem *nom = NULL;
  if (kl_problem_build(&s, in, &nom, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  const int ns = nom->ns;
  double *dev = draw(&s, 0, S);
  double *gp = malloc((size_t)S * KL_GP_N * sizeof *gp), *geo = malloc((size_t)S * ns * KL_GG_N * sizeof *geo);
  assert_non_null(gp);
  assert_non_null(geo);
  const double t0 = kl_now();
  if (kl_scenarios_pack(nom, in, S, dev, gp, geo, NULL, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  const double t1 = kl_now();
  for (int i = 0; i < ncheck; ++i) {
    kl_problem *pb = NULL;
    if (kl_scenario_problem(nom, in, dev + i * KL_UNC_N, &pb, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
    assert_memory_equal(gp + i * KL_GP_N, pb->gp, sizeof pb->gp);
    assert_memory_equal(geo + (size_t)i * ns * KL_GG_N, pb->geo, (size_t)ns * KL_GG_N * sizeof(double));
    kl_problem_free(pb);
  }
  const double t2 = kl_now();
  printf("  %s (%d samples), %s: %d scenarios packed in %.3f s (%.2f ms each); kl_scenario_problem one by one %.2f "
         "ms each\n", name, ns, bead ? "bead + registration + process (a part meshed each)" : "registration + process",
         S, t1 - t0, 1e3 * (t1 - t0) / S, 1e3 * (t2 - t1) / ncheck);
  /* a stop asked at once */
  kl_progress p = kl_progress_of(stop_at_once, NULL);
  assert_int_equal(kl_scenarios_pack(nom, in, S, dev, gp, geo, &p, msg, sizeof msg), KELVIN_ERR_STOPPED);
  free(dev);
  free(gp);
  free(geo);
  kl_problem_free(nom);
}

static void test_pack(void **state)
{
  (void)state;
  kl_settings s;
  kl_settings_default(&s);
  pack_against_one_by_one(&s, NULL, 64, 64, 0, "built-in example");
  pack_against_one_by_one(&s, NULL, 16, 16, 1, "built-in example");
  char msg[1024];
  kl_inputs in = {0};
  kl_settings_default(&s);
  if (kl_settings_load(&s, KELVIN_SOURCE_DIR "/examples/optimise_stiff.yaml", msg, sizeof msg) != KELVIN_OK ||
      kl_inputs_load(&s, &in, msg, sizeof msg) != KELVIN_OK)
    fail_msg("%s", msg);
  pack_against_one_by_one(&s, &in.in, 64, 4, 0, "optimise_stiff.yaml"); /* the first 4 checked one by one */
  pack_against_one_by_one(&s, &in.in, 4, 4, 1, "optimise_stiff.yaml");
  kl_inputs_free(&in);
}

/* uncertainty.roughness is a switch (0: the nominal roughness everywhere, 1: each scenario its own realisation):
 * 0 and 1 are set through the table, 2 and 0.5 refused with the key named */
static void test_roughness_switch(void **state)
{
  (void)state;
  kl_settings s;
  kl_settings_default(&s);
  char msg[1024];
  for (int v = 0; v <= 1; ++v) {
    const double d = v;
    if (kl_settings_set_numbers(&s, "uncertainty.roughness", &d, 1, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
    assert_int_equal(s.unc_rough, v);
  }
  const double bad[2] = {2.0, 0.5};
  for (int i = 0; i < 2; ++i) {
    assert_int_equal(kl_settings_set_numbers(&s, "uncertainty.roughness", &bad[i], 1, msg, sizeof msg), KELVIN_ERR_ARG);
    assert_non_null(strstr(msg, "uncertainty.roughness: must be"));
    assert_int_equal(s.unc_rough, 1);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_same_seed_same_set),
    cmocka_unit_test(test_moments_and_ranges),
    cmocka_unit_test(test_first_points_by_hand),
    cmocka_unit_test(test_disjoint),
    cmocka_unit_test(test_settings_by_hand),
    cmocka_unit_test(test_scenario_problem),
    cmocka_unit_test(test_registration_against_build),
    cmocka_unit_test(test_mesh_registration),
    cmocka_unit_test(test_pack),
    cmocka_unit_test(test_roughness_switch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
