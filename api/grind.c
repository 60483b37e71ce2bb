/* api/grind.c: grinding problems of the public API (include/kelvin/grind.h) over optimiser/ (settings
 * schema, problem, pipeline) and io/ (the config file and the files it names). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/grind_impl.h"
#include "io/table.h"
#include "optimiser/schema.h"

//------------------------------------------------------------------------------------------------------
// handle

kelvin_status kelvin_grind_create(kelvin_grind **out)
{
  if (!out) return KELVIN_ERR_ARG;
  *out = calloc(1, sizeof **out);
  if (!*out) return KELVIN_ERR_NOMEM;
  kl_settings_default(&(*out)->set);
  return KELVIN_OK;
}

/* Discard the results of the last run. */
static void drop_results(kelvin_grind *g)
{
  if (g->res) kl_opt_result_free(g->res);
  free(g->res);
  g->res = NULL;
  g->identity = 0;
  for (int i = 0; i < KL_MAXPASS; ++i) {
    free(g->warn[i]);
    g->warn[i] = NULL;
  }
  free(g->diagnosis);
  g->diagnosis = NULL;
  kl_rm_results_free(g->rm);
  g->rm = NULL;
  kl_grind_check_drop(g);
}

/* A key set after the config file was loaded: its messages are about the value given, not the file's line. */
static void given(kelvin_grind *g, const char *key)
{
  if (!g->cfg[0] || !key) return;
  const size_t n = strlen(g->given), k = strlen(key);
  if (n + k + 2 > sizeof g->given)
    g->given_full = 1;
  else
    snprintf(g->given + n, sizeof g->given - n, "%s\n", key);
}

/* The message on g about a setting, named where the loaded config file gives it: "FILE:LINE: ..." (the
 * line kl_settings_line finds), else, with always, "FILE: ..."; nothing without a config file, or for a
 * message about a key set after the load (io/settings.h). */
static void locate(kelvin_grind *g, int always)
{
  if (!g->cfg[0] || !g->msg[0]) return;
  char first[128];
  size_t n = strcspn(g->msg, ": ");
  if (n >= sizeof first) n = sizeof first - 1;
  memcpy(first, g->msg, n);
  first[n] = '\0';
  int line = 0;
  if (!g->given_full) {
    int set_after = 0;
    for (const char *p = g->given; *p && !set_after;) {
      const size_t k = strcspn(p, "\n");
      set_after = k == n && strncmp(p, first, n) == 0;
      p += k + (p[k] ? 1 : 0);
    }
    if (!set_after) line = kl_settings_line(g->cfg, g->msg);
  }
  if (line <= 0 && !always) return;
  char pre[sizeof g->cfg + 32];
  int np = line > 0 ? snprintf(pre, sizeof pre, "%s:%d: ", g->cfg, line) : snprintf(pre, sizeof pre, "%s: ", g->cfg);
  if (np < 0 || np >= (int)sizeof pre) return;
  size_t lm = strlen(g->msg);
  if ((size_t)np + lm >= KL_API_MSG) lm = KL_API_MSG - 1 - (size_t)np;
  memmove(g->msg + np, g->msg, lm);
  memcpy(g->msg, pre, (size_t)np);
  g->msg[(size_t)np + lm] = '\0';
}

/* Discard the prepared problem (and the results computed on it). */
static void drop_problem(kelvin_grind *g)
{
  drop_results(g);
  kl_problem_free(g->pb);
  g->pb = NULL;
  kl_inputs_free(&g->files);
}

static void drop_mesh(kelvin_grind *g)
{
  kl_mesh_free(g->mesh);
  g->mesh = NULL;
}

static void drop_path(kelvin_grind *g)
{
  free(g->path_p);
  free(g->path_n);
  g->path_p = g->path_n = NULL;
  g->npath = 0;
}

static void drop_target(kelvin_grind *g)
{
  free(g->target_s);
  free(g->target_F);
  g->target_s = g->target_F = NULL;
  g->ntarget = 0;
}

void kelvin_grind_free(kelvin_grind *g)
{
  if (!g) return;
  drop_problem(g);
  drop_mesh(g);
  drop_path(g);
  drop_target(g);
  free(g);
}

const char *kelvin_grind_errmsg(const kelvin_grind *g) { return g ? g->msg : ""; }

//------------------------------------------------------------------------------------------------------
// settings

kelvin_status kelvin_grind_set_array(kelvin_grind *g, const char *key, const double *values, int n)
{
  if (!g) return KELVIN_ERR_ARG;
  g->msg[0] = '\0';
  kl_settings s = g->set;
  const kelvin_status st = kl_settings_set_numbers(&s, key, values, n, g->msg, KL_API_MSG);
  if (st != KELVIN_OK) return st;
  drop_problem(g);
  g->set = s;
  given(g, key);
  return KELVIN_OK;
}

kelvin_status kelvin_grind_set(kelvin_grind *g, const char *key, double value)
{
  return kelvin_grind_set_array(g, key, &value, 1);
}

kelvin_status kelvin_grind_set_string(kelvin_grind *g, const char *key, const char *value)
{
  if (!g) return KELVIN_ERR_ARG;
  g->msg[0] = '\0';
  kl_settings s = g->set;
  const kelvin_status st = kl_settings_set_text(&s, key, value, g->msg, KL_API_MSG);
  if (st != KELVIN_OK) return st;
  drop_problem(g);
  g->set = s;
  given(g, key);
  /* a file key takes over from the input given in memory */
  if (strcmp(key, "workpiece.mesh") == 0) drop_mesh(g);
  if (strcmp(key, "path.csv") == 0) drop_path(g);
  if (strcmp(key, "target.csv") == 0) drop_target(g);
  return KELVIN_OK;
}

kelvin_status kelvin_grind_get(const kelvin_grind *g, const char *key, double *value)
{
  if (value) *value = NAN;
  if (!g || !value) return KELVIN_ERR_ARG;
  double v[3];
  if (kl_settings_get_numbers(&g->set, key, v, 3) < 1) return KELVIN_ERR_ARG;
  *value = v[0];
  return KELVIN_OK;
}

const char *kelvin_grind_get_string(const kelvin_grind *g, const char *key)
{
  return g ? kl_settings_get_text(&g->set, key) : NULL;
}

kelvin_status kelvin_grind_load(kelvin_grind *g, const char *path)
{
  if (!g) return KELVIN_ERR_ARG;
  g->msg[0] = '\0';
  if (!path) return kl_api_fail(g->msg, KELVIN_ERR_ARG, "kelvin_grind_load: the path is NULL");
  kl_settings s;
  kl_settings_default(&s);
  const kelvin_status st = kl_settings_load(&s, path, g->msg, KL_API_MSG);
  if (st != KELVIN_OK) return st;
  drop_problem(g);
  drop_mesh(g);
  drop_path(g);
  drop_target(g);
  g->set = s;
  snprintf(g->cfg, sizeof g->cfg, "%s", strlen(path) < sizeof g->cfg ? path : "");
  g->given[0] = '\0';
  g->given_full = 0;
  return KELVIN_OK;
}

//------------------------------------------------------------------------------------------------------
// inputs from memory

kelvin_status kelvin_grind_set_mesh(kelvin_grind *g, const double *vert, int nvert, const int *tri, int ntri)
{
  if (!g) return KELVIN_ERR_ARG;
  g->msg[0] = '\0';
  if (!vert || !tri || nvert < 3 || ntri < 1)
    return kl_api_fail(g->msg, KELVIN_ERR_ARG, "kelvin_grind_set_mesh: needs >= 3 vertices and >= 1 triangle, got %d and %d",
                       vert ? nvert : 0, tri ? ntri : 0);
  kl_mesh *m = NULL;
  char m2[1024];
  const kelvin_status st = kl_mesh_from_arrays(vert, nvert, tri, ntri, &m, m2, sizeof m2);
  if (st != KELVIN_OK) return kl_api_fail(g->msg, st, "kelvin_grind_set_mesh: %s", m2);
  drop_problem(g);
  drop_mesh(g);
  g->mesh = m;
  g->set.surface = KL_SURF_MESH;
  g->set.mesh[0] = '\0';
  return KELVIN_OK;
}

/* a copy of n doubles, or NULL */
static double *copy(const double *a, size_t n)
{
  double *b = malloc(n * sizeof *b);
  if (b) memcpy(b, a, n * sizeof *b);
  return b;
}

kelvin_status kelvin_grind_set_path(kelvin_grind *g, const double *points, const double *normals, int n)
{
  if (!g) return KELVIN_ERR_ARG;
  g->msg[0] = '\0';
  if (!points || !normals || n < 2)
    return kl_api_fail(g->msg, KELVIN_ERR_ARG, "kelvin_grind_set_path: needs >= 2 points and their normals, got %d",
                       points && normals ? n : 0);
  double *p = copy(points, (size_t)n * 3), *nn = copy(normals, (size_t)n * 3);
  if (!p || !nn) {
    free(p);
    free(nn);
    return kl_api_fail(g->msg, KELVIN_ERR_NOMEM, "out of memory");
  }
  drop_problem(g);
  drop_path(g);
  g->path_p = p;
  g->path_n = nn;
  g->npath = n;
  g->set.path_csv[0] = '\0';
  return KELVIN_OK;
}

kelvin_status kelvin_grind_set_target(kelvin_grind *g, const double *s, const double *force, int n)
{
  if (!g) return KELVIN_ERR_ARG;
  g->msg[0] = '\0';
  if (!s || !force || n < 1)
    return kl_api_fail(g->msg, KELVIN_ERR_ARG, "kelvin_grind_set_target: needs >= 1 sample of s and force, got %d",
                       s && force ? n : 0);
  double *a = copy(s, (size_t)n), *b = copy(force, (size_t)n);
  if (!a || !b) {
    free(a);
    free(b);
    return kl_api_fail(g->msg, KELVIN_ERR_NOMEM, "out of memory");
  }
  drop_problem(g);
  drop_target(g);
  g->target_s = a;
  g->target_F = b;
  g->ntarget = n;
  g->set.target_csv[0] = '\0';
  return KELVIN_OK;
}

//------------------------------------------------------------------------------------------------------
// the prepared problem

kl_problem_inputs kl_grind_inputs(const kelvin_grind *g)
{
  kl_problem_inputs in = g->files.in;
  if (g->mesh) in.mesh = g->mesh;
  if (g->npath) {
    in.npath = g->npath;
    in.path_p = g->path_p;
    in.path_n = g->path_n;
  }
  if (g->ntarget) {
    in.ntarget = g->ntarget;
    in.target_s = g->target_s;
    in.target_F = g->target_F;
  }
  return in;
}

kelvin_status kelvin_grind_prepare(kelvin_grind *g)
{
  if (!g) return KELVIN_ERR_ARG;
  if (g->pb) return KELVIN_OK;
  g->msg[0] = '\0';
  drop_problem(g);
  kelvin_status st = kl_inputs_load(&g->set, &g->files, g->msg, KL_API_MSG);
  if (st != KELVIN_OK) {
    locate(g, 1);
    return st;
  }
  const kl_problem_inputs in = kl_grind_inputs(g);
  if ((st = kl_problem_build(&g->set, &in, &g->pb, g->msg, KL_API_MSG)) != KELVIN_OK) kl_inputs_free(&g->files);
  if (st != KELVIN_OK) locate(g, 1);
  return st;
}

int kelvin_grind_nsamples(const kelvin_grind *g) { return g && g->pb ? g->pb->ns : 0; }
int kelvin_grind_ncontrol(const kelvin_grind *g) { return g && g->pb ? g->pb->nc : 0; }
double kelvin_grind_length(const kelvin_grind *g) { return g && g->pb ? g->pb->length : 0.0; }

kelvin_status kelvin_grind_control(const kelvin_grind *g, double *naive, double *guess, double *lo, double *hi)
{
  if (!g || !g->pb) return KELVIN_ERR_ARG;
  const kl_problem *pb = g->pb;
  if (naive) kl_problem_naive(pb, naive);
  if (guess) kl_problem_guess(pb, guess);
  for (int j = 0; j < pb->nc; ++j) {
    if (lo) lo[j] = pb->lo[j];
    if (hi) hi[j] = pb->hi[j];
  }
  return KELVIN_OK;
}

kelvin_status kelvin_grind_expand(const kelvin_grind *g, const double *x, double *offset, double *speed)
{
  if (!g || !g->pb || !x || !offset || !speed) return KELVIN_ERR_ARG;
  kl_problem_expand(g->pb, x, offset, speed);
  return KELVIN_OK;
}

double kelvin_grind_problem_value(const kelvin_grind *g, kelvin_problem_value what)
{
  if (!g || !g->pb) return NAN;
  const kl_problem *pb = g->pb;
  double lo = INFINITY, hi = -INFINITY;
  const double *range = what == KELVIN_PROBLEM_PROTRUSION_MIN || what == KELVIN_PROBLEM_PROTRUSION_MAX ? pb->h
                        : what == KELVIN_PROBLEM_MASS_MIN || what == KELVIN_PROBLEM_MASS_MAX         ? pb->meff
                                                                                                     : NULL;
  for (int k = 0; range && k < pb->ns; ++k) {
    lo = fmin(lo, range[k]);
    hi = fmax(hi, range[k]);
  }
  switch (what) {
  case KELVIN_PROBLEM_LENGTH: return pb->length;
  case KELVIN_PROBLEM_SAMPLES: return pb->ns;
  case KELVIN_PROBLEM_CONTROLS: return pb->nc;
  case KELVIN_PROBLEM_FORCE_REF: return pb->gp[KL_GP_FREF];
  case KELVIN_PROBLEM_CONTACT_SHARE: return pb->contact_share;
  case KELVIN_PROBLEM_CONTACT_STIFFNESS: return pb->Kc;
  case KELVIN_PROBLEM_CHI: return pb->chi;
  case KELVIN_PROBLEM_KV_DAMPING: return pb->Dc;
  case KELVIN_PROBLEM_NAIVE_OFFSET: return pb->naive_o;
  case KELVIN_PROBLEM_PROTRUSION_MIN:
  case KELVIN_PROBLEM_MASS_MIN: return lo;
  case KELVIN_PROBLEM_PROTRUSION_MAX:
  case KELVIN_PROBLEM_MASS_MAX: return hi;
  case KELVIN_PROBLEM_ROBOT_SPEED: return pb->robot_vmax;
  }
  return NAN;
}

kelvin_status kelvin_grind_problem_get(const kelvin_grind *g, const char *key, double *value)
{
  if (value) *value = NAN;
  if (!g || !g->pb || !value) return KELVIN_ERR_ARG;
  double v[3];
  if (kl_settings_get_numbers(&g->pb->set, key, v, 3) < 1) return KELVIN_ERR_ARG;
  *value = v[0];
  return KELVIN_OK;
}

kelvin_status kelvin_grind_read_pass(kelvin_grind *g, const char *path, double *offset, double *speed)
{
  if (!g) return KELVIN_ERR_ARG;
  if (!path || !offset || !speed)
    return kl_api_fail(g->msg, KELVIN_ERR_ARG, "kelvin_grind_read_pass: the path, offset and speed are needed");
  kelvin_status st = kelvin_grind_prepare(g);
  if (st != KELVIN_OK) return st;
  g->msg[0] = '\0';
  const kl_problem *pb = g->pb;
  int n = 0;
  double *S = NULL, *O = NULL, *V = NULL;
  long *L = NULL;
  if ((st = kl_read_pass_csv(path, &n, &S, &O, &V, &L, g->msg, KL_API_MSG)) != KELVIN_OK) return st;
  /* within the bounds, over the whole path; a value 100 times off is named as the likely unit mistake */
  const double olo = pb->lo[0], ohi = pb->hi[0], vlo = pb->set.v_min, vhi = pb->set.v_max;
  for (int k = 0; k < n && st == KELVIN_OK; ++k) {
    if (!(O[k] >= olo - 1e-12 && O[k] <= ohi + 1e-12))
      st = kl_api_fail(g->msg, KELVIN_ERR_CONFIG, "%s:%ld: column 'offset_m': %.6g m is outside the configured bounds "
                       "[offset.min, offset.max] = [%.6g, %.6g] m%s", path, L[k], O[k], olo, ohi,
                       fabs(O[k]) > 100 * fmax(fabs(olo), fabs(ohi)) ? "; is it in millimetres? the file is read in metres" : "");
    else if (!(V[k] >= vlo * (1 - 1e-9) && V[k] <= vhi * (1 + 1e-9)))
      st = kl_api_fail(g->msg, KELVIN_ERR_CONFIG, "%s:%ld: column 'speed_m_s': %.6g m/s is outside the configured "
                       "bounds [speed.min, speed.max] = [%.6g, %.6g] m/s%s", path, L[k], V[k], vlo, vhi,
                       V[k] > 100 * vhi ? "; is it in mm/s? the file is read in m/s" : "");
  }
  const double tol = 1e-6 * fmax(pb->length, 1e-3);
  if (st == KELVIN_OK && (S[0] > pb->s[0] + tol || S[n - 1] < pb->length - tol))
    st = kl_api_fail(g->msg, KELVIN_ERR_CONFIG, "%s:%ld: column 's_m': s covers [%.6g, %.6g] m but the path runs over "
                     "[0, %.6g] m%s", path, S[0] > pb->s[0] + tol ? L[0] : L[n - 1], S[0], S[n - 1], pb->length,
                     S[n - 1] > 100 * pb->length ? "; is it in millimetres? the file is read in metres" : "");
  if (st == KELVIN_OK && S[n - 1] > 100 * pb->length) /* a unit mistake (a pass may run on past the path's end) */
    st = kl_api_fail(g->msg, KELVIN_ERR_CONFIG, "%s:%ld: column 's_m': s runs to %.6g m but the path is only %.6g m "
                     "long; is s in millimetres? the file is read in metres", path, L[n - 1], S[n - 1], pb->length);
  if (st == KELVIN_OK)
    for (int k = 0, j = 0; k < pb->ns; ++k) {
      while (j + 2 < n && S[j + 1] < pb->s[k]) ++j;
      const double w = fmin(1.0, fmax(0.0, (pb->s[k] - S[j]) / (S[j + 1] - S[j])));
      offset[k] = O[j] + w * (O[j + 1] - O[j]);
      speed[k] = V[j] + w * (V[j + 1] - V[j]);
    }
  free(S);
  free(O);
  free(V);
  free(L);
  return st;
}

//------------------------------------------------------------------------------------------------------
// runs

void kelvin_grind_set_progress(kelvin_grind *g, kelvin_progress_fn fn, void *ctx)
{
  if (!g) return;
  g->progress = fn;
  g->ctx = ctx;
}

/* Checks and preparation every run shares: a fresh result on a prepared problem. */
static kelvin_status begin(kelvin_grind *g, kelvin_device *dev, const char *what)
{
  g->msg[0] = '\0';
  if (!dev || !dev->open) return kl_api_fail(g->msg, KELVIN_ERR_ARG, "%s: the device is NULL or not open", what);
  const kelvin_status st = kelvin_grind_prepare(g);
  if (st != KELVIN_OK) return st;
  drop_results(g);
  g->res = calloc(1, sizeof *g->res);
  return g->res ? KELVIN_OK : kl_api_fail(g->msg, KELVIN_ERR_NOMEM, "out of memory");
}

kelvin_status kl_grind_begin(kelvin_grind *g, kelvin_device *dev, const char *what) { return begin(g, dev, what); }

void kl_grind_locate(kelvin_grind *g) { locate(g, 0); }

/* a relative figure x as a percentage for a message: digits decimals, or %.3g when it is huge (a unit
 * mistake: never "368474072987388542976.00 %") */
static const char *pct(double x, int digits, char *buf, size_t cap)
{
  if (fabs(100 * x) < 1e4)
    snprintf(buf, cap, "%.*f", digits, 100 * x);
  else
    snprintf(buf, cap, "%.3g", 100 * x);
  return buf;
}

/* The warnings of the verified passes that disagree (kelvin_grind_pass_warning). */
static kelvin_status warnings(kelvin_grind *g)
{
  for (int i = 0; i < g->res->npass && i < KL_MAXPASS; ++i) {
    const kl_pass *p = &g->res->pass[i];
    free(g->warn[i]);
    g->warn[i] = NULL;
    if (!p->verified || !p->disagree) continue;
    char a[32], b[32], *w = malloc(512);
    if (!w) return kl_api_fail(g->msg, KELVIN_ERR_NOMEM, "out of memory");
    snprintf(w, 512, "device prediction and 3-D verification of '%s' differ by %s %% RMS (> %s %%)", p->label,
             pct(p->agree_rms, 2, a, sizeof a), pct(g->pb->set.agree_tol, 2, b, sizeof b));
    g->warn[i] = w;
  }
  return KELVIN_OK;
}

/* A target the bounds (or the dynamics, or the 1-D model) do not let the best pass reach: say what limits
 * it (kelvin_grind_diagnosis). */
static kelvin_status diagnose(kelvin_grind *g)
{
  const kl_problem *pb = g->pb;
  const kl_opt_result *res = g->res;
  free(g->diagnosis);
  g->diagnosis = NULL;
  if (res->best < 0 || res->robust >= 0) return KELVIN_OK; /* a robust pass is judged out of sample (kelvin/robust.h) */
  const kl_pass *b = &res->pass[res->best];
  const double err = b->verified ? b->vobj[KL_OBJ_RMS] : b->obj[KL_OBJ_RMS];
  if (!(err > 0.1)) return KELVIN_OK;
  char *d = malloc(1024), e1[32], e2[32];
  if (!d) return kl_api_fail(g->msg, KELVIN_ERR_NOMEM, "out of memory");
  int at_lo, at_hi, vlo, vhi;
  kl_problem_at_bounds(pb, b->x, 0, pb->set.n_o, &at_lo, &at_hi);  /* the offsets' control points */
  kl_problem_at_bounds(pb, b->x, pb->set.n_o, pb->nc, &vlo, &vhi); /* the speeds' */
  if (b->verified && b->disagree && b->obj[KL_OBJ_RMS] < 0.5 * err) /* the device reaches it, the 3-D engine not */
    snprintf(d, 1024, "target not reachable: the best pass ('%s') misses the target by %s %% RMS in the 3-D engine "
             "while the device model reaches %.2f %%: the two disagree by %s %% RMS (over verify.tolerance %.1f %%), "
             "so the device's 1-D model does not hold for this set-up (contact lost %.1f %% of the time)",
             b->label, pct(err, 1, e2, sizeof e2), 100 * b->obj[KL_OBJ_RMS], pct(b->agree_rms, 1, e1, sizeof e1),
             100 * pb->set.agree_tol, 100 * b->vobj[KL_OBJ_LOSS]);
  else
    snprintf(d, 1024, "target not reachable: the best pass ('%s') still misses the target by %s %% RMS; limited by "
             "%s (offset control points at offset.min %d, at offset.max %d of %d; speed at min %d, at max %d of %d; "
             "contact lost %.1f %% of the time)",
             b->label, pct(err, 1, e2, sizeof e2),
             at_hi ? "offset.max" : at_lo ? "offset.min" : (vlo || vhi) ? "the speed bounds" : "the dynamics", at_lo,
             at_hi, pb->set.n_o, vlo, vhi, pb->set.n_v, 100 * (b->verified ? b->vobj : b->obj)[KL_OBJ_LOSS]);
  g->diagnosis = d;
  return KELVIN_OK;
}

/* after a run: drop the results of a failure (a failure over a setting named where the config file has
 * it), or judge the passes of a success */
static kelvin_status finish(kelvin_grind *g, kelvin_status st, int optimised)
{
  if (st == KELVIN_OK) st = warnings(g);
  if (st == KELVIN_OK && optimised) st = diagnose(g);
  if (st != KELVIN_OK) {
    drop_results(g);
    if (st == KELVIN_ERR_CONFIG) locate(g, 0);
  }
  return st;
}

kelvin_status kelvin_grind_optimise(kelvin_grind *g, kelvin_device *dev)
{
  if (!g) return KELVIN_ERR_ARG;
  kelvin_status st = begin(g, dev, "kelvin_grind_optimise");
  if (st != KELVIN_OK) return st;
  if (kl_grind_is_robust(g)) return finish(g, kl_grind_optimise_robust(g, dev), 1); /* api/robust.c */
  return finish(g, kl_optimise(g->pb, dev->h, g->progress, g->ctx, g->res, g->msg, KL_API_MSG), 1);
}

kelvin_status kelvin_grind_evaluate(kelvin_grind *g, kelvin_device *dev, const double *offset, const double *speed)
{
  if (!g) return KELVIN_ERR_ARG;
  if (!offset || !speed) return kl_api_fail(g->msg, KELVIN_ERR_ARG, "kelvin_grind_evaluate: offset and speed are needed");
  kelvin_status st = begin(g, dev, "kelvin_grind_evaluate");
  if (st != KELVIN_OK) return st;
  for (int k = 0; k < g->pb->ns; ++k)
    if (!(isfinite(offset[k]) && speed[k] > 0 && isfinite(speed[k]))) {
      drop_results(g);
      return kl_api_fail(g->msg, KELVIN_ERR_ARG,
                         "kelvin_grind_evaluate: sample %d: the offset must be finite and the speed > 0 m/s, got %g and %g",
                         k, offset[k], speed[k]);
    }
  st = finish(g, kl_evaluate(g->pb, dev->h, offset, speed, g->progress, g->ctx, g->res, g->msg, KL_API_MSG), 0);
  if (st == KELVIN_OK) g->identity = 1;
  if (st == KELVIN_OK) st = finish(g, kl_grind_removal_user(g, dev, offset, speed), 0); /* a removal section: plan "user" */
  return st;
}

kelvin_status kelvin_grind_verify(kelvin_grind *g, int pass)
{
  if (!g) return KELVIN_ERR_ARG;
  g->msg[0] = '\0';
  if (!g->res || pass < 0 || pass >= g->res->npass)
    return kl_api_fail(g->msg, KELVIN_ERR_ARG, "kelvin_grind_verify: no pass %d (%d passes)", pass, g->res ? g->res->npass : 0);
  const kelvin_status st =
    kl_verify(g->pb, g->identity ? NULL : g->pb->basis, g->res, &pass, 1, g->progress, g->ctx, g->msg, KL_API_MSG);
  /* (a failure leaves the results as they were: the pass stays unverified) */
  return st == KELVIN_OK ? warnings(g) : st;
}

//------------------------------------------------------------------------------------------------------
// results

int kelvin_grind_npass(const kelvin_grind *g) { return g && g->res ? g->res->npass : 0; }
int kelvin_grind_best(const kelvin_grind *g) { return g && g->res ? g->res->best : -1; }
long kelvin_grind_rollouts(const kelvin_grind *g) { return g && g->res ? g->res->evaluations : 0; }

static const kl_pass *pass_of(const kelvin_grind *g, int i)
{
  return g && g->res && i >= 0 && i < g->res->npass ? &g->res->pass[i] : NULL;
}

const char *kelvin_grind_pass_label(const kelvin_grind *g, int pass)
{
  const kl_pass *p = pass_of(g, pass);
  return p ? p->label : NULL;
}

double kelvin_grind_pass_value(const kelvin_grind *g, int pass, kelvin_pass_value what)
{
  const kl_pass *p = pass_of(g, pass);
  if (!p) return NAN;
  const double nv = NAN;
  switch (what) {
  case KELVIN_PASS_RMS: return p->obj[KL_OBJ_RMS];
  case KELVIN_PASS_RMS_VERIFIED: return p->verified ? p->vobj[KL_OBJ_RMS] : nv;
  case KELVIN_PASS_OBJECTIVE: return p->obj[KL_OBJ_J];
  case KELVIN_PASS_OBJECTIVE_VERIFIED: return p->verified ? p->vobj[KL_OBJ_J] : nv;
  case KELVIN_PASS_LOSS: return p->obj[KL_OBJ_LOSS];
  case KELVIN_PASS_LOSS_VERIFIED: return p->verified ? p->vobj[KL_OBJ_LOSS] : nv;
  case KELVIN_PASS_TIME: return p->obj[KL_OBJ_T];
  case KELVIN_PASS_AGREEMENT: return p->verified ? p->agree_rms : nv;
  case KELVIN_PASS_VERIFIED: return p->verified;
  case KELVIN_PASS_ROLLOUTS: return p->evals;
  case KELVIN_PASS_AGREEMENT_MAX: return p->verified ? p->agree_max : nv;
  case KELVIN_PASS_DISAGREE: return p->verified ? p->disagree : 0;
  case KELVIN_PASS_INERTIA: return p->verified ? p->inertia_rms : nv;
  case KELVIN_PASS_SUBSTEPS_VERIFIED: return p->verified ? (double)p->vsub : nv;
  case KELVIN_PASS_SECONDS_VERIFIED: return p->verified ? p->vseconds : nv;
  }
  return NAN;
}

/* The commanded offsets then speeds of pass p at the ns path samples (2 ns values, the caller frees
 * them; NULL when memory runs out): its control points expanded, or, after kelvin_grind_evaluate, the
 * samples themselves. */
static double *pass_commands(const kelvin_grind *g, const kl_pass *p)
{
  const int ns = g->pb->ns;
  double *o = malloc((size_t)2 * ns * sizeof *o);
  if (!o) return NULL;
  if (g->identity)
    memcpy(o, p->x, (size_t)2 * ns * sizeof *o);
  else
    kl_problem_expand(g->pb, p->x, o, o + ns);
  return o;
}

kelvin_status kelvin_grind_pass_series(const kelvin_grind *g, int pass, kelvin_series what, double *out)
{
  const kl_pass *p = pass_of(g, pass);
  if (!p || !out) return KELVIN_ERR_ARG;
  const kl_problem *pb = g->pb;
  const int ns = pb->ns, avg = pb->set.measure & KL_MEASURE_AVG_BIT, sens = pb->set.measure & KL_MEASURE_SENSOR_BIT;
  const double *so = p->so;
  int field = -1;
  if (what >= KELVIN_SERIES_X && what <= KELVIN_SERIES_NZ) {
    const double *a = what <= KELVIN_SERIES_Z ? pb->p : pb->nrm;
    const int c = (int)(what - (what <= KELVIN_SERIES_Z ? KELVIN_SERIES_X : KELVIN_SERIES_NX));
    for (int k = 0; k < ns; ++k) out[k] = a[3 * k + c];
    return KELVIN_OK;
  }
  if (what == KELVIN_SERIES_SCORED || what == KELVIN_SERIES_SENSOR || what == KELVIN_SERIES_SENSOR_INSTANT) {
    /* the device's measures from its per-sample outputs and the commands (kl_problem_measure) */
    if (!so) return KELVIN_ERR_ARG;
    double *o = pass_commands(g, p);
    if (!o) return KELVIN_ERR_NOMEM;
    const int m = what == KELVIN_SERIES_SCORED ? pb->set.measure
                  : what == KELVIN_SERIES_SENSOR ? KL_MEASURE_SENSOR : KL_MEASURE_SENSOR_INSTANT;
    kl_problem_measure(pb, m, so, o, o + ns, out);
    free(o);
    return KELVIN_OK;
  }
  if (what >= KELVIN_SERIES_SCORED_VERIFIED && what <= KELVIN_SERIES_CONTACT_VERIFIED) {
    if (!p->verified) return KELVIN_ERR_ARG;
    const double *a = what == KELVIN_SERIES_SENSOR_VERIFIED         ? p->vFavg
                      : what == KELVIN_SERIES_SENSOR_INSTANT_VERIFIED ? p->vF
                      : what == KELVIN_SERIES_SCORED_VERIFIED ? (sens ? (avg ? p->vFavg : p->vF) : (avg ? p->vFcavg : p->vFc))
                                                              : NULL;
    for (int k = 0; k < ns; ++k) out[k] = a ? a[k] : (double)p->vc[k];
    return KELVIN_OK;
  }
  switch (what) {
  case KELVIN_SERIES_S: memcpy(out, pb->s, (size_t)ns * sizeof *out); return KELVIN_OK;
  case KELVIN_SERIES_TARGET: memcpy(out, pb->ft, (size_t)ns * sizeof *out); return KELVIN_OK;
  case KELVIN_SERIES_OFFSET:
  case KELVIN_SERIES_SPEED: {
    double *o = pass_commands(g, p);
    if (!o) return KELVIN_ERR_NOMEM;
    memcpy(out, o + (what == KELVIN_SERIES_SPEED ? ns : 0), (size_t)ns * sizeof *out);
    free(o);
    return KELVIN_OK;
  }
  case KELVIN_SERIES_FORCE_VERIFIED:
    if (!p->verified) return KELVIN_ERR_ARG;
    memcpy(out, avg ? p->vFavg : p->vF, (size_t)ns * sizeof *out);
    return KELVIN_OK;
  case KELVIN_SERIES_FORCE: field = avg ? KL_SO_FAVG : KL_SO_F; break;
  case KELVIN_SERIES_FORCE_INSTANT: field = KL_SO_F; break;
  case KELVIN_SERIES_FORCE_AVERAGED: field = KL_SO_FAVG; break;
  case KELVIN_SERIES_TIME: field = KL_SO_T; break;
  case KELVIN_SERIES_DEPTH: field = KL_SO_Z; break;
  case KELVIN_SERIES_CONTACT: field = KL_SO_C; break;
  default: break;
  }
  if (field < 0 || !so) return KELVIN_ERR_ARG;
  memcpy(out, so + (size_t)field * ns, (size_t)ns * sizeof *out);
  return KELVIN_OK;
}

int kelvin_grind_pass_control(const kelvin_grind *g, int pass, double *x, int cap)
{
  const kl_pass *p = pass_of(g, pass);
  if (!p) return -1;
  for (int j = 0; j < p->nx && j < cap && x; ++j) x[j] = p->x[j];
  return p->nx;
}

kelvin_status kelvin_grind_pass_terms(const kelvin_grind *g, int pass, int verified, double *terms)
{
  const kl_pass *p = pass_of(g, pass);
  if (!terms) return KELVIN_ERR_ARG;
  for (int t = 0; t < KL_OBJ_N; ++t) terms[t] = !p ? NAN : !verified ? p->obj[t] : p->verified ? p->vobj[t] : NAN;
  return p && (!verified || p->verified) ? KELVIN_OK : KELVIN_ERR_ARG;
}

const char *kelvin_grind_pass_stop(const kelvin_grind *g, int pass)
{
  const kl_pass *p = pass_of(g, pass);
  return p ? (p->stop ? p->stop : "") : NULL;
}

kelvin_status kelvin_grind_pass_waypoints(const kelvin_grind *g, int pass, double *t, double *pos, double *quat)
{
  const kl_pass *p = pass_of(g, pass);
  if (!p || !t || !pos || !quat) return KELVIN_ERR_ARG;
  const int ns = g->pb->ns;
  double *o = pass_commands(g, p);
  if (!o) return KELVIN_ERR_NOMEM;
  kl_problem_waypoints(g->pb, o, o + ns, t, pos, quat);
  free(o);
  return KELVIN_OK;
}

double kelvin_grind_run_value(const kelvin_grind *g, kelvin_run_value what)
{
  if (!g || !g->res) return NAN;
  const kl_opt_result *r = g->res;
  switch (what) {
  case KELVIN_RUN_ROLLOUTS: return (double)r->evaluations;
  case KELVIN_RUN_ROLLOUTS_HOST: return (double)r->host_rollouts;
  case KELVIN_RUN_HOST_BELOW: return (double)r->host_below;
  case KELVIN_RUN_SCREENED: return r->screened;
  case KELVIN_RUN_SCREEN_BEST: return r->screen_best;
  case KELVIN_RUN_TIME_LIMITED: return r->time_limited;
  case KELVIN_RUN_NAIVE: return r->naive;
  case KELVIN_RUN_TIME_SETUP: return r->time.setup;
  case KELVIN_RUN_TIME_SCREENING: return r->time.screening;
  case KELVIN_RUN_TIME_REFINEMENT: return r->time.refinement;
  case KELVIN_RUN_TIME_VERIFICATION: return r->time.verification;
  case KELVIN_RUN_TIME_TOTAL: return r->time.total;
  case KELVIN_RUN_TIME_CORRECTION: return r->time.correction;
  }
  return NAN;
}

double kelvin_grind_correction_value(const kelvin_grind *g, kelvin_correction_value what)
{
  if (!g || !g->res) return NAN;
  const kl_correction *c = &g->res->corr;
  switch (what) {
  case KELVIN_CORRECTION_RAN: return c->ran;
  case KELVIN_CORRECTION_FROM: return c->ran ? c->from : -1;
  case KELVIN_CORRECTION_PASS: return c->ran ? c->pass : -1;
  default: break;
  }
  if (!c->ran) return NAN;
  switch (what) {
  case KELVIN_CORRECTION_ITERATIONS: return c->iterations;
  case KELVIN_CORRECTION_RUNS: return c->runs;
  case KELVIN_CORRECTION_SECONDS: return c->seconds;
  case KELVIN_CORRECTION_PREDICTED_BEFORE: return c->pred_before;
  case KELVIN_CORRECTION_PREDICTED_AFTER: return c->pass >= 0 ? c->pred_after : c->pred_before;
  case KELVIN_CORRECTION_VERIFIED_BEFORE: return c->rms_before;
  case KELVIN_CORRECTION_MAX_BEFORE: return c->max_before;
  case KELVIN_CORRECTION_REFERENCE_BEFORE: return c->ref_before;
  case KELVIN_CORRECTION_REFERENCE_MAX_BEFORE: return c->ref_max_before;
  case KELVIN_CORRECTION_VERIFIED_LOOP: return c->rms_loop;
  case KELVIN_CORRECTION_VERIFIED_AFTER: return c->rms_after;
  case KELVIN_CORRECTION_MAX_AFTER: return c->max_after;
  default: return NAN;
  }
}

const char *kelvin_grind_correction_note(const kelvin_grind *g)
{
  return g && g->res && g->res->corr.note[0] ? g->res->corr.note : NULL;
}

const char *kelvin_grind_pass_warning(const kelvin_grind *g, int pass)
{
  return pass_of(g, pass) && pass < KL_MAXPASS ? g->warn[pass] : NULL;
}

const char *kelvin_grind_diagnosis(const kelvin_grind *g) { return g && g->res ? g->diagnosis : NULL; }
