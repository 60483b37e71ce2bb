/* api/grind.c: grinding problems of the public API (include/kelvin/grind.h) over optimiser/ (settings
 * schema, problem, pipeline) and io/ (the config file and the files it names). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_impl.h"
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

kelvin_status kelvin_grind_prepare(kelvin_grind *g)
{
  if (!g) return KELVIN_ERR_ARG;
  if (g->pb) return KELVIN_OK;
  g->msg[0] = '\0';
  drop_problem(g);
  kelvin_status st = kl_inputs_load(&g->set, &g->files, g->msg, KL_API_MSG);
  if (st != KELVIN_OK) return st;
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
  if ((st = kl_problem_build(&g->set, &in, &g->pb, g->msg, KL_API_MSG)) != KELVIN_OK) kl_inputs_free(&g->files);
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

//------------------------------------------------------------------------------------------------------
// runs

void kelvin_grind_set_progress(kelvin_grind *g, void (*fn)(void *ctx, const char *text), void *ctx)
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

kelvin_status kelvin_grind_optimise(kelvin_grind *g, kelvin_device *dev)
{
  if (!g) return KELVIN_ERR_ARG;
  kelvin_status st = begin(g, dev, "kelvin_grind_optimise");
  if (st != KELVIN_OK) return st;
  if ((st = kl_optimise(g->pb, dev->h, g->progress, g->ctx, g->res, g->msg, KL_API_MSG)) != KELVIN_OK) drop_results(g);
  return st;
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
  if ((st = kl_evaluate(g->pb, dev->h, offset, speed, g->progress, g->ctx, g->res, g->msg, KL_API_MSG)) != KELVIN_OK)
    drop_results(g);
  else
    g->identity = 1;
  return st;
}

kelvin_status kelvin_grind_verify(kelvin_grind *g, int pass)
{
  if (!g) return KELVIN_ERR_ARG;
  g->msg[0] = '\0';
  if (!g->res || pass < 0 || pass >= g->res->npass)
    return kl_api_fail(g->msg, KELVIN_ERR_ARG, "kelvin_grind_verify: no pass %d (%d passes)", pass, g->res ? g->res->npass : 0);
  return kl_verify(g->pb, g->identity ? NULL : g->pb->basis, g->res, &pass, 1, g->msg, KL_API_MSG);
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
  }
  return NAN;
}

kelvin_status kelvin_grind_pass_series(const kelvin_grind *g, int pass, kelvin_series what, double *out)
{
  const kl_pass *p = pass_of(g, pass);
  if (!p || !out) return KELVIN_ERR_ARG;
  const kl_problem *pb = g->pb;
  const int ns = pb->ns, avg = pb->set.measure & KL_MEASURE_AVG_BIT;
  const double *so = p->so;
  int field = -1;
  switch (what) {
  case KELVIN_SERIES_S: memcpy(out, pb->s, (size_t)ns * sizeof *out); return KELVIN_OK;
  case KELVIN_SERIES_TARGET: memcpy(out, pb->ft, (size_t)ns * sizeof *out); return KELVIN_OK;
  case KELVIN_SERIES_OFFSET:
  case KELVIN_SERIES_SPEED: {
    double *o = malloc((size_t)2 * ns * sizeof *o);
    if (!o) return KELVIN_ERR_NOMEM;
    if (g->identity)
      memcpy(o, p->x, (size_t)2 * ns * sizeof *o);
    else
      kl_problem_expand(pb, p->x, o, o + ns);
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
