/* api/engine.c: the 3-D engine of the public API (include/kelvin/engine.h) over engine/world.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_impl.h"
#include "core/clock.h"
#include "engine/world.h"
#include "io/scene_yaml.h"
#include "kernels/kl_contact_static.h"
#include "kelvin/engine.h"

_Static_assert(KELVIN_BODY_DYNAMIC == KL_BODY_DYNAMIC && KELVIN_BODY_STATIC == KL_BODY_STATIC &&
                 KELVIN_BODY_KINEMATIC == KL_BODY_KINEMATIC,
               "kelvin_body_type mirrors KL_BODY_*");
_Static_assert(KELVIN_SHAPE_SPHERE == KL_SHAPE_SPHERE && KELVIN_SHAPE_BOX == KL_SHAPE_BOX &&
                 KELVIN_SHAPE_CAPSULE == KL_SHAPE_CAPSULE && KELVIN_SHAPE_CYLINDER == KL_SHAPE_CYLINDER &&
                 KELVIN_SHAPE_HULL == KL_SHAPE_HULL && KELVIN_SHAPE_PLANE == KL_SHAPE_PLANE &&
                 KELVIN_SHAPE_MESH == KL_SHAPE_MESH,
               "kelvin_shape_type mirrors KL_SHAPE_*");

struct kelvin_world {
  kl_world_model *m;
  kl_mesh **mesh; /* owned, nmesh */
  int nmesh, cap_mesh;
  char **name;    /* owned, one per body */
  int cap_name;
  double duration, output_step; /* the scene's [s] */
  char msg[KL_API_MSG];
};

struct kelvin_world_data {
  const kelvin_world *w;
  kl_world_data *d;
  kelvin_progress_fn progress;
  void *ctx;
  double t_call0, t_call1; /* the advance call under way: from, to [s] */
  double wall_last;        /* wall time of the last progress call [s]; -1 before the first */
  double limit;            /* work limit [sub-steps] (kelvin_world_plan) */
  char msg[KL_API_MSG];
};

void kelvin_body_init(kelvin_body *b)
{
  if (!b) return;
  kl_body_def k;
  kl_world_default_body(&k);
  memset(b, 0, sizeof *b);
  b->type = (kelvin_body_type)k.type;
  b->mass = k.mass;
  memcpy(b->inertia, k.inertia, sizeof b->inertia);
  memcpy(b->pos, k.pos, sizeof b->pos);
  memcpy(b->quat, k.quat, sizeof b->quat);
  memcpy(b->vel, k.vel, sizeof b->vel);
  memcpy(b->angvel, k.angvel, sizeof b->angvel);
  b->K = k.K;
  b->cr = k.cr;
  b->D = k.D;
  b->mu = k.mu;
  b->holder = k.holder;
  memcpy(b->anchor, k.anchor, sizeof b->anchor);
  memcpy(b->anchor_vel, k.anchor_vel, sizeof b->anchor_vel);
  memcpy(b->holder_K, k.holder_K, sizeof b->holder_K);
  memcpy(b->holder_D, k.holder_D, sizeof b->holder_D);
}

void kelvin_shape_init(kelvin_shape *s)
{
  if (!s) return;
  kl_shape_def k;
  kl_world_default_shape(&k);
  memset(s, 0, sizeof *s);
  s->type = (kelvin_shape_type)k.type;
  memcpy(s->size, k.size, sizeof s->size);
  memcpy(s->pos, k.pos, sizeof s->pos);
  memcpy(s->quat, k.quat, sizeof s->quat);
  s->pad = k.pad;
  s->mesh = -1;
}

//------------------------------------------------------------------------------------------------------
// building

kelvin_status kelvin_world_create(kelvin_world **out)
{
  if (!out) return KELVIN_ERR_ARG;
  kelvin_world *w = calloc(1, sizeof *w);
  *out = NULL;
  if (!w) return KELVIN_ERR_NOMEM;
  if (!(w->m = kl_world_create())) {
    free(w);
    return KELVIN_ERR_NOMEM;
  }
  w->duration = 1.0;
  w->output_step = 1e-3;
  *out = w;
  return KELVIN_OK;
}

void kelvin_world_free(kelvin_world *w)
{
  if (!w) return;
  kl_world_free(w->m);
  for (int i = 0; i < w->nmesh; ++i) kl_mesh_free(w->mesh[i]);
  free(w->mesh);
  for (int i = 0; i < w->cap_name; ++i) free(w->name[i]);
  free(w->name);
  free(w);
}

const char *kelvin_world_errmsg(const kelvin_world *w) { return w ? w->msg : ""; }

/* The world can still change; else the message says it cannot. */
static int editable(kelvin_world *w, const char *what)
{
  if (!w->m->compiled) return 1;
  kl_api_fail(w->msg, KELVIN_ERR_ARG, "%s: the world is compiled (read-only); build a new one", what);
  return 0;
}

kelvin_status kelvin_world_set_contact(kelvin_world *w, kelvin_model model, kelvin_law law, double n, kelvin_rule rule)
{
  if (!w) return KELVIN_ERR_ARG;
  if (!editable(w, "kelvin_world_set_contact")) return KELVIN_ERR_ARG;
  if (model != KELVIN_MODEL_KV && model != KELVIN_MODEL_HC)
    return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_set_contact: model must be KELVIN_MODEL_KV or _HC, got %d", (int)model);
  if ((int)law < 0 || (int)law > KELVIN_LAW_EXACT || (int)rule < 0 || (int)rule > KELVIN_SEP_FORCE)
    return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_set_contact: unknown law %d or rule %d", (int)law, (int)rule);
  if (!(n >= 1 && n <= 3) || (model == KELVIN_MODEL_KV && n != 1))
    return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_set_contact: exponent n must be in [1, 3], 1 for Kelvin-Voigt, got %g", n);
  w->m->model = (int)model;
  w->m->law = (int)law;
  w->m->n = n;
  w->m->rule = (int)rule;
  return KELVIN_OK;
}

kelvin_status kelvin_world_set_gravity(kelvin_world *w, const double g[3])
{
  if (!w || !g) return KELVIN_ERR_ARG;
  if (!editable(w, "kelvin_world_set_gravity")) return KELVIN_ERR_ARG;
  if (!(isfinite(g[0]) && isfinite(g[1]) && isfinite(g[2])))
    return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_set_gravity: must be finite");
  memcpy(w->m->gravity, g, sizeof w->m->gravity);
  return KELVIN_OK;
}

kelvin_status kelvin_world_set(kelvin_world *w, const char *option, double value)
{
  if (!w || !option) return KELVIN_ERR_ARG;
  if (!editable(w, "kelvin_world_set")) return KELVIN_ERR_ARG;
  if (!(value > 0 && isfinite(value)))
    return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_set: %s must be > 0, got %g", option, value);
  kl_world_model *m = w->m;
  if (strcmp(option, "friction_vreg") == 0)
    m->vreg = value;
  else if (strcmp(option, "substep_fraction") == 0)
    m->substep_fraction = value;
  else if (strcmp(option, "onset_tol") == 0)
    m->onset_tol = value;
  else if (strcmp(option, "hc_tol") == 0)
    m->hc_tol = value;
  else if (strcmp(option, "force_limit") == 0)
    m->force_limit = value;
  else if (strcmp(option, "contact_capacity") == 0 || strcmp(option, "event_capacity") == 0) {
    if (value != floor(value) || value > 1e7)
      return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_set: %s must be a whole number in [1, 1e7], got %g",
                         option, value);
    if (option[0] == 'c')
      m->ncon_max = (int)value;
    else
      m->nlog_max = (int)value;
  } else
    return kl_api_fail(w->msg, KELVIN_ERR_ARG,
                       "kelvin_world_set: unknown option '%s' (friction_vreg, substep_fraction, onset_tol, hc_tol, "
                       "contact_capacity, event_capacity, force_limit)",
                       option);
  return KELVIN_OK;
}

kelvin_status kelvin_world_add_body(kelvin_world *w, const kelvin_body *b, int *id)
{
  if (id) *id = -1;
  if (!w) return KELVIN_ERR_ARG;
  if (!b) return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_add_body: the body is NULL");
  if (!editable(w, "kelvin_world_add_body")) return KELVIN_ERR_ARG;
  kl_body_def k;
  kl_world_default_body(&k);
  k.type = (int)b->type;
  k.mass = b->mass;
  memcpy(k.inertia, b->inertia, sizeof k.inertia);
  memcpy(k.pos, b->pos, sizeof k.pos);
  memcpy(k.quat, b->quat, sizeof k.quat);
  memcpy(k.vel, b->vel, sizeof k.vel);
  memcpy(k.angvel, b->angvel, sizeof k.angvel);
  k.K = b->K;
  k.cr = b->cr;
  k.D = b->D;
  k.mu = b->mu;
  k.holder = b->holder;
  memcpy(k.anchor, b->anchor, sizeof k.anchor);
  memcpy(k.anchor_vel, b->anchor_vel, sizeof k.anchor_vel);
  memcpy(k.holder_K, b->holder_K, sizeof k.holder_K);
  memcpy(k.holder_D, b->holder_D, sizeof k.holder_D);
  if (w->cap_name <= w->m->nbody) { /* the body's name, "body<i>", first: nothing to undo if it fails */
    const int cap = 2 * w->m->nbody + 4;
    char **a = realloc(w->name, (size_t)cap * sizeof *a);
    if (!a) return kl_api_fail(w->msg, KELVIN_ERR_NOMEM, "kelvin_world_add_body: out of memory");
    for (int j = w->cap_name; j < cap; ++j) a[j] = NULL;
    w->name = a;
    w->cap_name = cap;
  }
  free(w->name[w->m->nbody]);
  if (!(w->name[w->m->nbody] = malloc(32))) return kl_api_fail(w->msg, KELVIN_ERR_NOMEM, "kelvin_world_add_body: out of memory");
  snprintf(w->name[w->m->nbody], 32, "body%d", w->m->nbody);
  const int i = kl_world_add_body(w->m, &k);
  if (i < 0) return kl_api_fail(w->msg, KELVIN_ERR_NOMEM, "kelvin_world_add_body: out of memory");
  if (id) *id = i;
  return KELVIN_OK;
}

kelvin_status kelvin_world_add_shape(kelvin_world *w, int body, const kelvin_shape *s, int *id)
{
  if (id) *id = -1;
  if (!w) return KELVIN_ERR_ARG;
  if (!s) return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_add_shape: the shape is NULL");
  if (!editable(w, "kelvin_world_add_shape")) return KELVIN_ERR_ARG;
  if (body < 0 || body >= w->m->nbody)
    return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_add_shape: no body %d (%d bodies)", body, w->m->nbody);
  kl_shape_def k;
  kl_world_default_shape(&k);
  k.type = (int)s->type;
  memcpy(k.size, s->size, sizeof k.size);
  memcpy(k.pos, s->pos, sizeof k.pos);
  memcpy(k.quat, s->quat, sizeof k.quat);
  k.pad = s->pad;
  if (s->type == KELVIN_SHAPE_MESH) {
    if (s->mesh < 0 || s->mesh >= w->nmesh)
      return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_add_shape: no mesh %d (%d meshes)", s->mesh, w->nmesh);
    k.mesh = w->mesh[s->mesh];
  }
  if (s->type == KELVIN_SHAPE_HULL) {
    if (!s->hull || s->nhull < 4)
      return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_add_shape: a hull needs >= 4 vertices, got %d",
                         s->hull ? s->nhull : 0);
    k.hull = s->hull;
    k.nhull = s->nhull;
  }
  const int i = kl_world_add_shape(w->m, body, &k);
  if (i < 0) return kl_api_fail(w->msg, KELVIN_ERR_NOMEM, "kelvin_world_add_shape: out of memory");
  if (id) *id = i;
  return KELVIN_OK;
}

kelvin_status kelvin_world_add_mesh(kelvin_world *w, const double *vert, int nvert, const int *tri, int ntri, int *id)
{
  if (id) *id = -1;
  if (!w) return KELVIN_ERR_ARG;
  if (!editable(w, "kelvin_world_add_mesh")) return KELVIN_ERR_ARG;
  if (!vert || !tri || nvert < 3 || ntri < 1)
    return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_add_mesh: needs >= 3 vertices and >= 1 triangle, got %d and %d",
                       vert ? nvert : 0, tri ? ntri : 0);
  if (w->nmesh == w->cap_mesh) {
    const int cap = w->cap_mesh ? 2 * w->cap_mesh : 4;
    kl_mesh **a = realloc(w->mesh, (size_t)cap * sizeof *a);
    if (!a) return kl_api_fail(w->msg, KELVIN_ERR_NOMEM, "out of memory");
    w->mesh = a;
    w->cap_mesh = cap;
  }
  char m2[1024];
  const kelvin_status st = kl_mesh_from_arrays(vert, nvert, tri, ntri, &w->mesh[w->nmesh], m2, sizeof m2);
  if (st != KELVIN_OK) return kl_api_fail(w->msg, st, "kelvin_world_add_mesh: %s", m2);
  if (id) *id = w->nmesh;
  w->nmesh++;
  return KELVIN_OK;
}

kelvin_status kelvin_world_add_pair(kelvin_world *w, int body_a, int body_b, double K, double cr, double D, double mu)
{
  if (!w) return KELVIN_ERR_ARG;
  if (!editable(w, "kelvin_world_add_pair")) return KELVIN_ERR_ARG;
  if (kl_world_add_pair(w->m, body_a, body_b, K, cr, D, mu) < 0)
    return kl_api_fail(w->msg, KELVIN_ERR_NOMEM, "kelvin_world_add_pair: out of memory");
  return KELVIN_OK;
}

kelvin_status kelvin_world_set_general(kelvin_world *w, int pair, double k, double c, double n1, double n2, double m)
{
  if (!w) return KELVIN_ERR_ARG;
  if (!editable(w, "kelvin_world_set_general")) return KELVIN_ERR_ARG;
  const kl_gen_law L = {k, c, n1, n2, m};
  char why[160];
  if (kl_gen_law_bad(L, why, sizeof why)) return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_set_general: %s", why);
  if (pair < 0) {
    w->m->model = KL_MODEL_GEN;
    w->m->gen = L;
    w->m->n = n1;
    return KELVIN_OK;
  }
  if (kl_world_pair_gen(w->m, pair, L) != 0)
    return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_set_general: pair %d: no such pair (%d added)", pair,
                       w->m->npair);
  return KELVIN_OK;
}

kelvin_status kelvin_world_compile(kelvin_world *w)
{
  if (!w) return KELVIN_ERR_ARG;
  if (!editable(w, "kelvin_world_compile")) return KELVIN_ERR_ARG;
  w->msg[0] = '\0';
  char m2[2048];
  const kelvin_status st = kl_world_compile(w->m, m2, sizeof m2);
  if (st != KELVIN_OK) return kl_api_fail(w->msg, st, "%s", m2);
  return KELVIN_OK;
}

int kelvin_world_nbody(const kelvin_world *w) { return w ? w->m->nbody : 0; }

/* a loaded scene (sc, or a failure st with its message) into the empty world w */
static kelvin_status take_scene(kelvin_world *w, kelvin_status st, kl_scene *sc, const char *m2)
{
  if (st != KELVIN_OK) return kl_api_fail(w->msg, st, "%s", m2);
  kl_world_free(w->m);
  free(w->mesh); /* (no meshes in an empty world, but perhaps the array of a failed kelvin_world_add_mesh) */
  for (int i = 0; i < w->cap_name; ++i) free(w->name[i]);
  free(w->name);
  w->m = sc->model;
  w->mesh = sc->mesh;
  w->nmesh = w->cap_mesh = sc->nmesh;
  w->name = sc->body_name;
  w->cap_name = sc->nbody;
  w->duration = sc->duration;
  w->output_step = sc->output_step;
  memset(sc, 0, sizeof *sc); /* owned by w now */
  return KELVIN_OK;
}

/* w is empty: nothing added and not compiled; else the message says so */
static int empty(kelvin_world *w, const char *what)
{
  if (!w->m->compiled && w->m->nbody == 0 && w->nmesh == 0 && w->m->npair == 0) return 1;
  kl_api_fail(w->msg, KELVIN_ERR_ARG, "%s: the world must be empty (just created) to load a scene into", what);
  return 0;
}

kelvin_status kelvin_world_load(kelvin_world *w, const char *path)
{
  if (!w) return KELVIN_ERR_ARG;
  w->msg[0] = '\0';
  if (!path) return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_load: the path is NULL");
  if (!empty(w, "kelvin_world_load")) return KELVIN_ERR_ARG;
  kl_scene sc;
  char m2[2048];
  const kelvin_status st = kl_scene_load(path, &sc, m2, sizeof m2);
  return take_scene(w, st, &sc, m2);
}

kelvin_status kelvin_world_load_mem(kelvin_world *w, const char *name, const char *text, size_t len)
{
  if (!w) return KELVIN_ERR_ARG;
  w->msg[0] = '\0';
  if (!name || (!text && len > 0)) return kl_api_fail(w->msg, KELVIN_ERR_ARG, "kelvin_world_load_mem: name or text is NULL");
  if (!empty(w, "kelvin_world_load_mem")) return KELVIN_ERR_ARG;
  kl_scene sc;
  char m2[2048];
  const kelvin_status st = kl_scene_load_mem(name, text ? text : "", len, &sc, m2, sizeof m2);
  return take_scene(w, st, &sc, m2);
}

double kelvin_world_duration(const kelvin_world *w) { return w ? w->duration : NAN; }
double kelvin_world_output_step(const kelvin_world *w) { return w ? w->output_step : NAN; }

const char *kelvin_world_body_name(const kelvin_world *w, int body)
{
  if (!w || body < 0 || body >= w->m->nbody || body >= w->cap_name) return NULL;
  return w->name[body];
}

int kelvin_world_body_type(const kelvin_world *w, int body)
{
  if (!w || body < 0 || body >= w->m->nbody) return -1;
  return w->m->body_type[body];
}

kelvin_status kelvin_world_get(const kelvin_world *w, const char *option, double *value)
{
  if (value) *value = NAN;
  if (!w || !option || !value) return KELVIN_ERR_ARG;
  const kl_world_model *m = w->m;
  if (strcmp(option, "friction_vreg") == 0)
    *value = m->vreg;
  else if (strcmp(option, "substep_fraction") == 0)
    *value = m->substep_fraction;
  else if (strcmp(option, "onset_tol") == 0)
    *value = m->onset_tol;
  else if (strcmp(option, "hc_tol") == 0)
    *value = m->hc_tol;
  else if (strcmp(option, "force_limit") == 0)
    *value = m->force_limit > 0 ? m->force_limit : INFINITY;
  else if (strcmp(option, "contact_capacity") == 0)
    *value = m->ncon_max;
  else if (strcmp(option, "event_capacity") == 0)
    *value = m->nlog_max;
  else
    return KELVIN_ERR_ARG;
  return KELVIN_OK;
}

//------------------------------------------------------------------------------------------------------
// simulating

kelvin_status kelvin_world_data_create(const kelvin_world *w, kelvin_world_data **out)
{
  if (!out) return KELVIN_ERR_ARG;
  *out = NULL;
  if (!w || !w->m->compiled) return KELVIN_ERR_ARG;
  kelvin_world_data *d = calloc(1, sizeof *d);
  if (!d) return KELVIN_ERR_NOMEM;
  if (!(d->d = kl_world_data_create(w->m))) {
    free(d);
    return KELVIN_ERR_NOMEM;
  }
  d->w = w;
  d->wall_last = -1;
  d->limit = KELVIN_WORK_LIMIT;
  *out = d;
  return KELVIN_OK;
}

void kelvin_world_data_free(kelvin_world_data *d)
{
  if (!d) return;
  kl_world_data_free(d->d);
  free(d);
}

const char *kelvin_world_data_errmsg(const kelvin_world_data *d) { return d ? d->msg : ""; }

void kelvin_world_reset(kelvin_world_data *d)
{
  if (!d) return;
  kl_world_reset(d->w->m, d->d);
  d->msg[0] = '\0';
}

kelvin_status kelvin_world_advance(kelvin_world_data *d, double t)
{
  if (!d) return KELVIN_ERR_ARG;
  d->msg[0] = '\0';
  if (!(t >= d->d->t) || !isfinite(t))
    return kl_api_fail(d->msg, KELVIN_ERR_ARG, "kelvin_world_advance: t = %g is before the current time %g", t, d->d->t);
  char m2[2048], why[512];
  kl_world_work wk;
  kl_world_work_estimate(d->w->m, t - d->d->t, 1.0, 0.0, &wk);
  if ((double)d->d->nsub + wk.steps > d->limit) {
    kl_world_work_text(&wk, kelvin_world_body_name(d->w, wk.body), why, sizeof why);
    return kl_api_fail(d->msg, KELVIN_ERR_LIMIT,
                       "kelvin_world_advance: %ld sub-steps taken and about %.3g more estimated to t = %g s (%s), over "
                       "the work limit %.3g sub-steps (kelvin_world_plan sets it)",
                       d->d->nsub, wk.steps, t, why, d->limit);
  }
  d->t_call0 = d->d->t;
  d->t_call1 = t;
  const kelvin_status st = kl_world_advance(d->w->m, d->d, t, m2, sizeof m2);
  if (st == KELVIN_ERR_DIVERGED) { /* the likely cause: the stiffest time scale */
    kl_world_work_estimate(d->w->m, 0.0, 0.0, 0.0, &wk);
    kl_world_work_text(&wk, kelvin_world_body_name(d->w, wk.body), why, sizeof why);
    return kl_api_fail(d->msg, st, "%s; the stiffest time scale (the likely cause): %s", m2, why);
  }
  if (st != KELVIN_OK) return kl_api_fail(d->msg, st, "%s", m2);
  return KELVIN_OK;
}

kelvin_status kelvin_world_plan(kelvin_world_data *d, double duration, double output_step, double max_substeps,
                                double *estimate)
{
  if (estimate) *estimate = NAN;
  if (!d) return KELVIN_ERR_ARG;
  d->msg[0] = '\0';
  if (!(isfinite(duration) && duration >= 0 && isfinite(output_step) && output_step >= 0 && !isnan(max_substeps)))
    return kl_api_fail(d->msg, KELVIN_ERR_ARG, "kelvin_world_plan: duration %g s and output_step %g s must be >= 0",
                       duration, output_step);
  d->limit = max_substeps > 0 ? max_substeps : KELVIN_WORK_LIMIT;
  kl_world_work wk;
  const double nout = output_step > 0 ? ceil(duration / output_step - 1e-9) : 1.0;
  kl_world_work_estimate(d->w->m, duration, nout, 0.0, &wk);
  if (estimate) *estimate = wk.steps;
  if (!(wk.steps > d->limit)) return KELVIN_OK;
  char why[512];
  kl_world_work_text(&wk, kelvin_world_body_name(d->w, wk.body), why, sizeof why);
  return kl_api_fail(d->msg, KELVIN_ERR_LIMIT,
                     "about %.3g sub-steps estimated over %g s (%s), over the work limit %.3g sub-steps; shorten the "
                     "duration, soften that stiffness or raise the limit",
                     wk.steps, duration, why, d->limit);
}

int kl_api_advance_tick(kelvin_progress_fn fn, void *ctx, double *wall_last, double t0, double t1, double t, long nsub)
{
  const double now = kl_now();
  if (*wall_last >= 0 && now - *wall_last < 0.2) return 0;
  *wall_last = now;
  char text[160];
  snprintf(text, sizeof text, "t = %.6g s, %ld sub-steps", t, nsub);
  const double span = t1 - t0, frac = span > 0 ? (t - t0) / span : 1.0;
  return fn(ctx, frac, text) != 0;
}

/* the engine's check between sub-steps: the caller's callback, a few times a second at most */
static int check(void *ctx, const kl_world_data *x)
{
  kelvin_world_data *d = ctx;
  return kl_api_advance_tick(d->progress, d->ctx, &d->wall_last, d->t_call0, d->t_call1, x->t, x->nsub);
}

kelvin_status kelvin_world_set_progress(kelvin_world_data *d, kelvin_progress_fn fn, void *ctx)
{
  if (!d) return KELVIN_ERR_ARG;
  d->progress = fn;
  d->ctx = ctx;
  d->wall_last = -1;
  d->d->check = fn ? check : NULL;
  d->d->check_ctx = d;
  return KELVIN_OK;
}

double kelvin_world_time(const kelvin_world_data *d) { return d ? d->d->t : NAN; }

kelvin_status kelvin_world_body_state(const kelvin_world_data *d, int body, double pos[3], double quat[4], double vel[3],
                                      double angvel[3])
{
  if (!d || body < 0 || body >= d->w->m->nbody) return KELVIN_ERR_ARG;
  const kl_world_data *x = d->d;
  if (pos) memcpy(pos, &x->xpos[3 * body], 3 * sizeof *pos);
  if (quat) memcpy(quat, &x->xquat[4 * body], 4 * sizeof *quat);
  if (vel) memcpy(vel, &x->vel[3 * body], 3 * sizeof *vel);
  if (angvel) memcpy(angvel, &x->angvel[3 * body], 3 * sizeof *angvel);
  return KELVIN_OK;
}

int kelvin_world_ncontact(const kelvin_world_data *d) { return d ? d->d->ncon : 0; }

kelvin_status kelvin_world_contact(const kelvin_world_data *d, int i, kelvin_contact *c)
{
  if (c) memset(c, 0, sizeof *c);
  if (!d || !c || i < 0 || i >= d->d->ncon) return KELVIN_ERR_ARG;
  const kl_contact *k = &d->d->con[i];
  c->body[0] = k->body[0];
  c->body[1] = k->body[1];
  memcpy(c->pos, k->pos, sizeof c->pos);
  memcpy(c->normal, k->normal, sizeof c->normal);
  c->depth = k->depth;
  c->rate = k->rate;
  c->force = k->force;
  c->shape[0] = k->shape[0];
  c->shape[1] = k->shape[1];
  c->feature = k->key;
  c->force_avg = k->favg;
  memcpy(c->friction, k->ftan, sizeof c->friction);
  c->fpeak = k->fpeak;
  return KELVIN_OK;
}

int kelvin_world_nevent(const kelvin_world_data *d) { return d ? d->d->nlog : 0; }
long kelvin_world_event_overflow(const kelvin_world_data *d) { return d ? d->d->nlog_overflow : 0; }

kelvin_status kelvin_world_event(const kelvin_world_data *d, int i, kelvin_contact_event *e)
{
  if (e) memset(e, 0, sizeof *e);
  if (!d || !e || i < 0 || i >= d->d->nlog) return KELVIN_ERR_ARG;
  const kl_contact_event *k = &d->d->log[i];
  e->body[0] = k->body[0];
  e->body[1] = k->body[1];
  e->t0 = k->t0;
  e->t1 = k->t1;
  e->v_in = k->v_in;
  e->v_out = k->v_out;
  e->dmax = k->dmax;
  e->fpeak = k->fpeak;
  e->shape[0] = k->shape[0];
  e->shape[1] = k->shape[1];
  return KELVIN_OK;
}

kelvin_status kelvin_world_force(const kelvin_world_data *d, int body, double f[3])
{
  if (f) f[0] = f[1] = f[2] = 0;
  if (!d || !f || body < 0 || body >= d->w->m->nbody) return KELVIN_ERR_ARG;
  kl_world_contact_force(d->w->m, d->d, body, f);
  return KELVIN_OK;
}

double kelvin_world_energy(const kelvin_world_data *d) { return d ? kl_world_energy(d->w->m, d->d) : NAN; }

long kelvin_world_substeps(const kelvin_world_data *d) { return d ? d->d->nsub : 0; }

kelvin_status kelvin_world_get_counts(const kelvin_world_data *d, kelvin_world_counts *c)
{
  if (c) memset(c, 0, sizeof *c);
  if (!d || !c) return KELVIN_ERR_ARG;
  c->substeps = d->d->nsub;
  c->onsets = d->d->nonset;
  c->ends = d->d->nend;
  c->contact_overflow = d->d->ncon_overflow;
  c->event_overflow = d->d->nlog_overflow;
  return KELVIN_OK;
}
