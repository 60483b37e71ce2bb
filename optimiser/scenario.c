/* optimiser/scenario.c: the scenario sets of robust passes and each scenario's problem (scenario.h; docs/design.md
 * section 10). */
#include "optimiser/scenario.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_qrng.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "engine/gsl_guard.h"
#include "optimiser/schema.h"

#define PI 3.14159265358979323846
#define NONE ((size_t)-1)

/* One uncertain parameter: its key, its spread and distribution fields, whether relative, and the setting it
 * moves (its key for the bounds, and the element of a list). */
typedef struct par {
  const char *name;
  size_t spread, dist; /* offsetof in kl_settings (NONE: roughness, an int spread without a distribution) */
  int rel;
  const char *key;     /* the setting it moves */
  int elem;            /* its element in a list setting (workpiece.shift) */
  const char *unit;    /* of the deviation ("" relative or dimensionless) */
} par;

#define OFF(f) offsetof(kl_settings, f)
static const par pars[KL_UNC_N] = {
  {"registration_x", OFF(unc_reg_x), OFF(unc_reg_x_dist), 0, "workpiece.shift", 0, "m"},
  {"registration_y", OFF(unc_reg_y), OFF(unc_reg_y_dist), 0, "workpiece.shift", 1, "m"},
  {"registration_z", OFF(unc_reg_z), OFF(unc_reg_z_dist), 0, "workpiece.shift", 2, "m"},
  {"registration_tilt", OFF(unc_reg_tilt), OFF(unc_reg_tilt_dist), 0, "workpiece.tilt_deg", 0, "deg"},
  {"bead_height", OFF(unc_bead_h), OFF(unc_bead_h_dist), 0, "workpiece.bead.height", 0, "m"},
  {"bead_width", OFF(unc_bead_w), OFF(unc_bead_w_dist), 0, "workpiece.bead.width", 0, "m"},
  {"bead_position", OFF(unc_bead_x), OFF(unc_bead_x_dist), 0, "workpiece.bead.x", 0, "m"},
  {"step_height", OFF(unc_step_h), OFF(unc_step_h_dist), 0, "workpiece.step.height", 0, "m"},
  {"roughness", NONE, NONE, 0, "workpiece.roughness.seed", 0, ""},
  {"work_modulus", OFF(unc_work_E), OFF(unc_work_E_dist), 1, "workpiece.E", 0, ""},
  {"tool_modulus", OFF(unc_tool_E), OFF(unc_tool_E_dist), 1, "tool.E", 0, ""},
  {"holder_stiffness", OFF(unc_holder_K), OFF(unc_holder_K_dist), 1, "holder.stiffness", 0, ""},
  {"holder_damping", OFF(unc_holder_D), OFF(unc_holder_D_dist), 1, "holder.damping", 0, ""},
  {"tool_mass", OFF(unc_tool_mass), OFF(unc_tool_mass_dist), 1, "tool.mass", 0, ""},
  {"restitution", OFF(unc_cr), OFF(unc_cr_dist), 0, "contact.cr", 0, ""},
  {"tool_radius", OFF(unc_tool_R), OFF(unc_tool_R_dist), 0, "tool.radius", 0, "m"},
};
#undef OFF

static const char *const dist_names[] = {"normal", "uniform", "truncated"};

const char *kl_unc_name(int i)
{
  return i >= 0 && i < KL_UNC_N ? pars[i].name : NULL;
}

double kl_unc_spread(const kl_settings *s, int i)
{
  if (i == KL_UNC_ROUGH) return (double)s->unc_rough;
  return *(const double *)(const void *)((const char *)s + pars[i].spread);
}

int kl_unc_dist(const kl_settings *s, int i)
{
  if (i == KL_UNC_ROUGH) return KL_DIST_NORMAL;
  return *(const int *)(const void *)((const char *)s + pars[i].dist);
}

int kl_unc_relative(int i)
{
  return i >= 0 && i < KL_UNC_N && pars[i].rel;
}

int kl_unc_active(const kl_settings *s)
{
  int n = 0;
  for (int i = 0; i < KL_UNC_N; ++i) n += kl_unc_spread(s, i) > 0;
  return n;
}

/* the setting parameter i moves (NULL: roughness, an unsigned long) */
static double *target(kl_settings *s, int i)
{
  return i == KL_UNC_ROUGH ? NULL : (double *)(void *)((char *)s + kl_settings_key(pars[i].key)->offset) + pars[i].elem;
}

static double target_value(const kl_settings *s, int i)
{
  return *((const double *)(const void *)((const char *)s + kl_settings_key(pars[i].key)->offset) + pars[i].elem);
}

/* the bounds of the setting parameter i moves, as deviations from nominal value v0: [*dlo, *dhi] */
static void dev_bounds(int i, double v0, double *dlo, double *dhi)
{
  const kl_key *k = kl_settings_key(pars[i].key);
  if (pars[i].rel) { /* v0 (1 + d) in [lo, hi], v0 > 0 for every relative setting */
    *dlo = k->lo / v0 - 1.0;
    *dhi = k->hi / v0 - 1.0;
  } else {
    *dlo = k->lo - v0;
    *dhi = k->hi - v0;
  }
}

#define CFGFAIL(...)                                                                                         \
  do {                                                                                                       \
    snprintf(msg, (size_t)cap, __VA_ARGS__);                                                                 \
    return KELVIN_ERR_CONFIG;                                                                                \
  } while (0)

kelvin_status kl_uncertainty_check(const kl_settings *s, char *msg, int cap)
{
  if (s->unc_scenarios > 0 && s->unc_seed == s->unc_verify_seed)
    CFGFAIL("uncertainty.verify_seed: must differ from uncertainty.seed (both %lu), so that the out-of-sample set is "
            "drawn independently of the optimisation set", s->unc_seed);
  if (s->surface == KL_SURF_MESH)
    for (int i = KL_UNC_BEAD_H; i <= KL_UNC_ROUGH; ++i)
      if (kl_unc_spread(s, i) > 0)
        CFGFAIL("uncertainty.%s: a mesh part (workpiece.mesh, a scan) has no %s setting to vary; it takes the "
                "registration and process spreads only", pars[i].name, pars[i].key);
  if (s->unc_rough && !(s->rough_a > 0))
    CFGFAIL("uncertainty.roughness: realisations of the roughness need workpiece.roughness.amplitude > 0");
  for (int i = 0; i < KL_UNC_N; ++i) {
    const double sp = kl_unc_spread(s, i);
    const int dist = kl_unc_dist(s, i);
    if (i == KL_UNC_ROUGH || !(sp > 0) || dist == KL_DIST_NORMAL) continue;
    const double r = dist == KL_DIST_UNIFORM ? sp : s->unc_trunc * sp, v0 = target_value(s, i);
    double dlo, dhi;
    dev_bounds(i, v0, &dlo, &dhi);
    if (-r < dlo || r > dhi) {
      const kl_key *k = kl_settings_key(pars[i].key);
      const double a = pars[i].rel ? v0 * (1 - r) : v0 - r, b = pars[i].rel ? v0 * (1 + r) : v0 + r;
      char rule[128];
      CFGFAIL("uncertainty.%s: a %s spread of %g%s%s takes %s (%g) to [%g, %g]; it must stay %s; use a smaller "
              "spread", pars[i].name, dist_names[dist], sp, pars[i].unit[0] ? " " : "", pars[i].unit, pars[i].key, v0,
              a, b, kl_key_rule(k, rule, sizeof rule));
    }
  }
  return KELVIN_OK;
}

kelvin_status kl_scenario_settings(const kl_settings *nominal, const double *dev, kl_settings *out, char *msg, int cap)
{
  *out = *nominal;
  for (int i = 0; i < KL_UNC_N; ++i) {
    const double d = dev[i];
    if (d == 0) continue;
    if (i == KL_UNC_ROUGH) {
      if (!(d >= 1 && d <= 1e9 && d == floor(d)))
        CFGFAIL("uncertainty.roughness: the realisation's seed %g is not a seed", d);
      out->rough_seed = (unsigned long)d;
      continue;
    }
    double *f = target(out, i);
    const double v0 = *f;
    *f = pars[i].rel ? v0 * (1.0 + d) : v0 + d;
    const kl_key *k = kl_settings_key(pars[i].key);
    if (!kl_key_number_ok(k, *f)) {
      char rule[128], prob[160] = "";
      const double sp = kl_unc_spread(nominal, i);
      if (sp > 0 && kl_unc_dist(nominal, i) == KL_DIST_NORMAL) {
        double dlo, dhi;
        dev_bounds(i, v0, &dlo, &dhi);
        snprintf(prob, sizeof prob, " (a normal draw of spread %g leaves them with probability %.3g)", sp,
                 gsl_cdf_ugaussian_P(dlo / sp) + gsl_cdf_ugaussian_Q(dhi / sp));
      }
      CFGFAIL("uncertainty.%s: the draw %+g%s%s%s makes %s %g, outside its bounds (%s)%s; use a truncated distribution "
              "(uncertainty.%s_dist: truncated) or a smaller spread", pars[i].name, d, pars[i].rel ? " (relative)" : "",
              pars[i].rel ? "" : pars[i].unit[0] ? " " : "", pars[i].rel ? "" : pars[i].unit, pars[i].key, *f,
              kl_key_rule(k, rule, sizeof rule), prob, pars[i].name);
    }
  }
  return KELVIN_OK;
}

/* the uniform u in (0, 1) mapped to the distribution dist of spread sp (inverse CDFs, scenario.h) */
static double map_u(double u, int dist, double sp, double c)
{
  if (!(u > 0)) u = 0x1p-53;
  if (!(u < 1)) u = 1.0 - 0x1p-53;
  switch (dist) {
  case KL_DIST_UNIFORM: return sp * (2.0 * u - 1.0);
  case KL_DIST_TRUNCATED: {
    const double a = gsl_cdf_ugaussian_P(-c), b = gsl_cdf_ugaussian_P(c);
    const double z = gsl_cdf_ugaussian_Pinv(a + u * (b - a));
    return sp * fmin(c, fmax(-c, z));
  }
  default: return sp * gsl_cdf_ugaussian_Pinv(u);
  }
}

/* the roughness realisation's seed of scenario i of a set (which) drawn with seed: splitmix64 of the three, in
 * [1, 999999999] (a legal workpiece.roughness.seed, exact as a double) */
static double rough_seed(unsigned long seed, int which, int i)
{
  uint64_t z = (uint64_t)seed * 0x9E3779B97F4A7C15ull + ((uint64_t)which << 32) + (uint64_t)i + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(1 + z % 999999999ull);
}

/* the parameters that take dimensions (spread > 0, roughness excepted): their indices in dims, the count */
static int dimensions(const kl_settings *s, int *dims)
{
  int n = 0;
  for (int i = 0; i < KL_UNC_N; ++i)
    if (i != KL_UNC_ROUGH && kl_unc_spread(s, i) > 0) dims[n++] = i;
  return n;
}

/* row of KL_UNC_N deviations from the uniforms u (one per dimension) */
static void fill_row(const kl_settings *s, const int *dims, int nd, const double *u, double rseed, double *row)
{
  for (int i = 0; i < KL_UNC_N; ++i) row[i] = 0.0;
  for (int j = 0; j < nd; ++j)
    row[dims[j]] = map_u(u[j], kl_unc_dist(s, dims[j]), kl_unc_spread(s, dims[j]), s->unc_trunc);
  if (s->unc_rough) row[KL_UNC_ROUGH] = rseed;
}

/* the optimisation set: randomised QMC (scenario.h) */
static kelvin_status draw_rqmc(const kl_settings *s, int S, double *dev, char *msg, int cap)
{
  int dims[KL_UNC_N];
  const int nd = dimensions(s, dims);
  double x[KL_UNC_N], shift[KL_UNC_N], u[KL_UNC_N];
  gsl_qrng *q = nd > 0 ? gsl_qrng_alloc(nd <= 40 ? gsl_qrng_sobol : gsl_qrng_halton, (unsigned)nd) : NULL;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  if ((nd > 0 && !q) || !r) {
    if (q) gsl_qrng_free(q);
    if (r) gsl_rng_free(r);
    snprintf(msg, (size_t)cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  gsl_rng_set(r, s->unc_seed);
  for (int j = 0; j < nd; ++j) shift[j] = gsl_rng_uniform(r); /* Cranley-Patterson: one shift for the whole set */
  for (int i = 0; i < S; ++i) {
    int zero = nd > 0;
    while (zero) { /* the all-zero point (never the first of GSL's Sobol, which starts at 1/2) is skipped */
      gsl_qrng_get(q, x);
      zero = 0;
      for (int j = 0; j < nd; ++j) zero |= x[j] != 0.0;
      zero = !zero;
    }
    for (int j = 0; j < nd; ++j) {
      u[j] = x[j] + shift[j];
      if (u[j] >= 1.0) u[j] -= 1.0;
    }
    fill_row(s, dims, nd, u, rough_seed(s->unc_seed, 0, i), dev + (size_t)i * KL_UNC_N);
  }
  if (q) gsl_qrng_free(q);
  gsl_rng_free(r);
  return KELVIN_OK;
}

static int row_cmp(const void *a, const void *b)
{
  const double *x = a, *y = b;
  for (int i = 0; i < KL_UNC_N; ++i)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

kelvin_status kl_scenarios_draw_mc(const kl_settings *s, int S, const double *avoid, int navoid, double *dev,
                                   int *redrawn, char *msg, int cap)
{
  if (redrawn) *redrawn = 0;
  int dims[KL_UNC_N];
  const int nd = dimensions(s, dims);
  double *sorted = navoid > 0 ? malloc((size_t)navoid * KL_UNC_N * sizeof *sorted) : NULL;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  if ((navoid > 0 && !sorted) || !r) {
    free(sorted);
    if (r) gsl_rng_free(r);
    snprintf(msg, (size_t)cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  if (navoid > 0) {
    memcpy(sorted, avoid, (size_t)navoid * KL_UNC_N * sizeof *sorted);
    qsort(sorted, (size_t)navoid, KL_UNC_N * sizeof *sorted, row_cmp);
  }
  gsl_rng_set(r, s->unc_verify_seed);
  kelvin_status st = KELVIN_OK;
  double u[KL_UNC_N];
  for (int i = 0; i < S && st == KELVIN_OK; ++i) {
    double *row = dev + (size_t)i * KL_UNC_N;
    for (int tries = 0;; ++tries) {
      if (tries == 1000) { /* only a set that holds every point of the stream gets here */
        snprintf(msg, (size_t)cap, "uncertainty: out-of-sample scenario %d equals a point of the optimisation set "
                 "after 1000 draws", i);
        st = KELVIN_ERR_CONFIG;
        break;
      }
      for (int j = 0; j < nd; ++j) u[j] = gsl_rng_uniform_pos(r);
      fill_row(s, dims, nd, u, rough_seed(s->unc_verify_seed, 1, i), row);
      if (!sorted || !bsearch(row, sorted, (size_t)navoid, KL_UNC_N * sizeof *sorted, row_cmp)) break;
      if (redrawn) ++*redrawn;
    }
  }
  free(sorted);
  gsl_rng_free(r);
  return st;
}

kelvin_status kl_scenarios_draw(const kl_settings *s, int which, int S, double *dev, char *msg, int cap)
{
  if (S < 0 || (which != 0 && which != 1) || (S > 0 && !dev)) {
    snprintf(msg, (size_t)cap, "kl_scenarios_draw: S %d >= 0 scenarios of set 0 or 1 (got %d) into dev", S, which);
    return KELVIN_ERR_ARG;
  }
  kelvin_status st = kl_uncertainty_check(s, msg, cap);
  if (st != KELVIN_OK) return st;
  kl_gsl_guard();
  if (which == 0) {
    st = draw_rqmc(s, S, dev, msg, cap);
  } else {
    const int P = s->unc_scenarios;
    double *opt = P > 0 ? malloc((size_t)P * KL_UNC_N * sizeof *opt) : NULL;
    if (P > 0 && !opt) {
      snprintf(msg, (size_t)cap, "out of memory for %d scenarios", P);
      return KELVIN_ERR_NOMEM;
    }
    st = P > 0 ? draw_rqmc(s, P, opt, msg, cap) : KELVIN_OK;
    if (st == KELVIN_OK) st = kl_scenarios_draw_mc(s, S, opt, P, dev, NULL, msg, cap);
    free(opt);
  }
  if (st == KELVIN_OK && kl_gsl_error()) {
    snprintf(msg, (size_t)cap, "uncertainty: drawing the scenarios failed: %s", kl_gsl_error());
    st = KELVIN_ERR_NUMERIC;
  }
  /* every scenario within its settings' bounds */
  for (int i = 0; i < S && st == KELVIN_OK; ++i) {
    kl_settings t;
    char m[768];
    if ((st = kl_scenario_settings(s, dev + (size_t)i * KL_UNC_N, &t, m, sizeof m)) != KELVIN_OK)
      snprintf(msg, (size_t)cap, "scenario %d of the %s set: %s", i, which ? "out-of-sample" : "optimisation", m);
  }
  return st;
}

/* the mesh m moved rigidly by motion (kl_problem_protrusion's: {theta, o[3], t[3]}) */
static kelvin_status moved_mesh(const kl_mesh *m, const double *motion, kl_mesh **out, char *msg, int cap)
{
  const int nv = kl_mesh_nvert(m), nt = kl_mesh_ntri(m);
  const double *v = kl_mesh_vertices(m);
  double *w = malloc((size_t)nv * 3 * sizeof *w);
  if (!w) {
    snprintf(msg, (size_t)cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  const double c = cos(motion[0]), sn = sin(motion[0]), *o = motion + 1, *t = motion + 4;
  for (int i = 0; i < nv; ++i) {
    const double *p = v + 3 * i, x = p[0] - o[0], z = p[2] - o[2];
    w[3 * i] = c * x + sn * z + o[0] + t[0];
    w[3 * i + 1] = p[1] + t[1];
    w[3 * i + 2] = -sn * x + c * z + o[2] + t[2];
  }
  const kelvin_status st = kl_mesh_from_arrays(w, nv, kl_mesh_indices(m), nt, out, msg, cap);
  free(w);
  return st;
}

static int differs(const double *a, const double *b, int n)
{
  return memcmp(a, b, (size_t)n * sizeof *a) != 0;
}

/* The scenario problem (kl_scenario_problem); with_part 0 (kl_scenarios_pack): a part moved only by the
 * registration is not meshed (its protrusion does not need it), the problem's actual is then the nominal's. */
static kelvin_status make(const kl_problem *nominal, const kl_problem_inputs *in, const double *dev, int with_part,
                          kl_problem **out, char *msg, int cap)
{
  *out = NULL;
  kl_settings sc;
  kelvin_status st = kl_scenario_settings(&nominal->set, dev, &sc, msg, cap);
  if (st != KELVIN_OK) return st;
  int shape = 0, reg = 0;
  for (int i = KL_UNC_BEAD_H; i <= KL_UNC_ROUGH; ++i) shape |= dev[i] != 0;
  for (int i = KL_UNC_REG_X; i <= KL_UNC_REG_TILT; ++i) reg |= dev[i] != 0;
  if (shape && sc.surface == KL_SURF_MESH) {
    snprintf(msg, (size_t)cap, "uncertainty: a mesh part (workpiece.mesh, a scan) takes no bead, step or roughness "
             "deviation");
    return KELVIN_ERR_CONFIG;
  }
  /* the nominal's bounds are put back after the build: wide here, so that the build's check of the naive offset
   * against them judges the scenario's own statics, which are not the ones the candidates share */
  sc.o_min = -1.0;
  sc.o_max = 1.0;
  const kl_problem_inputs none = {0};
  kl_problem_inputs in2 = in ? *in : none;
  in2.robot = NULL; /* the arm's mass along the path is the nominal's (the path is) */
  kl_problem *pb = NULL;
  double motion[7] = {0};
  if (shape) { /* a part of another shape (analytic): meshed by the build, registration included */
    st = kl_problem_build(&sc, &in2, &pb, msg, cap);
  } else { /* the nominal's part, moved by the registration: the tool moved back instead (kl_problem_protrusion) */
    st = kl_problem_build_on(&sc, &in2, nominal->actual, &pb, msg, cap);
    motion[0] = dev[KL_UNC_REG_TILT] * PI / 180.0;
    for (int i = 0; i < 3; ++i) {
      motion[1 + i] = sc.surface == KL_SURF_MESH ? 0.0 : nominal->set.shift[i]; /* an analytic part turns about it */
      motion[4 + i] = dev[KL_UNC_REG_X + i];
    }
  }
  if (st != KELVIN_OK) return st;
  if (pb->ns != nominal->ns || pb->nc != nominal->nc) { /* the same settings' counts: cannot happen */
    snprintf(msg, (size_t)cap, "scenario: %d samples and %d controls, the nominal %d and %d", pb->ns, pb->nc,
             nominal->ns, nominal->nc);
    kl_problem_free(pb);
    return KELVIN_ERR_ARG;
  }
  const int ns = nominal->ns, nc = nominal->nc;
  /* shared with the nominal: the path (the scenario's part is measured against the nominal path) */
  const int moved = !shape && reg;
  const int repath = moved || differs(pb->s, nominal->s, ns) || differs(pb->p, nominal->p, 3 * ns) ||
                     differs(pb->nrm, nominal->nrm, 3 * ns) || differs(pb->tan, nominal->tan, 3 * ns);
  memcpy(pb->s, nominal->s, (size_t)ns * sizeof(double));
  memcpy(pb->p, nominal->p, (size_t)ns * 3 * sizeof(double));
  memcpy(pb->nrm, nominal->nrm, (size_t)ns * 3 * sizeof(double));
  memcpy(pb->tan, nominal->tan, (size_t)ns * 3 * sizeof(double));
  pb->length = nominal->length;
  if (repath && (st = kl_problem_protrusion(pb, moved ? motion : NULL, msg, cap)) != KELVIN_OK) {
    kl_problem_free(pb);
    return st;
  }
  if (moved && with_part) { /* the moved part itself, for whoever simulates on it (the 3-D engine) */
    kl_mesh *m = NULL;
    if ((st = moved_mesh(nominal->actual, motion, &m, msg, cap)) != KELVIN_OK) {
      kl_problem_free(pb);
      return st;
    }
    pb->actual = m;
    pb->own_actual = 1;
  }
  memcpy(pb->ft, nominal->ft, (size_t)ns * sizeof(double));
  memcpy(pb->fg, nominal->fg, (size_t)ns * sizeof(double));
  if (nominal->robot_vmax > 0) { /* the arm: its mass along the normal, its speed bound */
    memcpy(pb->meff, nominal->meff, (size_t)ns * sizeof(double));
    pb->robot_vmax = nominal->robot_vmax;
  }
  if (nominal->basis) memcpy(pb->basis, nominal->basis, (size_t)2 * ns * nc * sizeof(double));
  memcpy(pb->lo, nominal->lo, (size_t)nc * sizeof(double));
  memcpy(pb->hi, nominal->hi, (size_t)nc * sizeof(double));
  pb->set.o_min = nominal->set.o_min;
  pb->set.o_max = nominal->set.o_max;
  pb->set.v_min = nominal->set.v_min;
  pb->set.v_max = nominal->set.v_max;
  pb->set.v_init = nominal->set.v_init;
  pb->naive_o = nominal->naive_o;
  static const int shared[] = {KL_GP_FTOL,   KL_GP_FREF,   KL_GP_FMAX,   KL_GP_AMAX,   KL_GP_OSCALE, KL_GP_VSCALE,
                               KL_GP_TREF,   KL_GP_AVG,    KL_GP_MAXSUB, KL_GP_W_RMS,  KL_GP_W_LOSS, KL_GP_W_OVER,
                               KL_GP_W_TIME, KL_GP_W_ROUGH, KL_GP_W_ACC};
  for (size_t j = 0; j < sizeof shared / sizeof shared[0]; ++j) pb->gp[shared[j]] = nominal->gp[shared[j]];
  kl_problem_pack_geo(pb);
  *out = pb;
  return KELVIN_OK;
}

kelvin_status kl_scenario_problem(const kl_problem *nominal, const kl_problem_inputs *in, const double *dev,
                                  kl_problem **out, char *msg, int cap)
{
  return make(nominal, in, dev, 1, out, msg, cap);
}

kelvin_status kl_scenarios_pack(const kl_problem *nominal, const kl_problem_inputs *in, int S, const double *dev,
                                double *gp, double *geo, kl_progress *progress, char *msg, int cap)
{
  const int ns = nominal->ns;
  int stop = 0, done = 0, first = S;
  kelvin_status fst = KELVIN_OK;
  char fmsg[1100] = "";
  if (kl_progress_say(progress, 0, 0.0, "scenarios: preparing %d scenario problems", S)) {
    snprintf(msg, (size_t)cap, "stopped while preparing the scenarios");
    return KELVIN_ERR_STOPPED;
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (int i = 0; i < S; ++i) {
    int quit;
#pragma omp atomic read
    quit = stop;
    if (quit) continue;
    char m[1024];
    kl_problem *pb = NULL;
    const kelvin_status st = make(nominal, in, dev + (size_t)i * KL_UNC_N, 0, &pb, m, sizeof m);
    if (st == KELVIN_OK) {
      memcpy(gp + (size_t)i * KL_GP_N, pb->gp, KL_GP_N * sizeof(double));
      memcpy(geo + (size_t)i * ns * KL_GG_N, pb->geo, (size_t)ns * KL_GG_N * sizeof(double));
      kl_problem_free(pb);
    }
#pragma omp critical(kl_scenarios_pack)
    {
      ++done;
      int halt = st != KELVIN_OK;
      if (halt && i < first) { /* schedule(dynamic, 1) hands out the scenarios in order: the lowest failure is seen */
        first = i;
        fst = st;
        snprintf(fmsg, sizeof fmsg, "scenario %d: %s", i, m);
      }
#ifdef _OPENMP
      const int master = omp_get_thread_num() == 0;
#else
      const int master = 1;
#endif
      /* the caller's thread reports (the callback is never called from another thread) */
      if (master && !halt && kl_progress_say(progress, 1, (double)done / S, "scenarios: %d/%d prepared", done, S))
        halt = 1;
      if (halt) {
#pragma omp atomic write
        stop = 1;
      }
    }
  }
  if (fst != KELVIN_OK) {
    snprintf(msg, (size_t)cap, "%s", fmsg);
    return fst;
  }
  if (stop) {
    snprintf(msg, (size_t)cap, "stopped while preparing the scenarios");
    return KELVIN_ERR_STOPPED;
  }
  return KELVIN_OK;
}
