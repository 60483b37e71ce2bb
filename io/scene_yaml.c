/* io/scene_yaml.c: YAML scene loader for `kelvin simulate` (see scene_yaml.h). */
#include "io/scene_yaml.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "io/mesh_import.h"

#include "kernels/kl_impact.h"

/* field paths ("bodies[3].shapes[0].radius") are built into fixed buffers; a path longer than them is
 * cut in the message, never overrun, so gcc's truncation analysis has nothing to add here */
#pragma GCC diagnostic ignored "-Wformat-truncation"

typedef struct ctx {
  const char *file;   /* as given (messages) */
  char dir[4096];     /* folder of the scene (relative mesh paths) */
  yaml_document_t doc;
  char *msg;
  int cap;
  kl_scene *sc;
} ctx;

/* one-line message "file:line: field: text"; returns KELVIN_ERR_CONFIG */
static kelvin_status fail(ctx *c, const yaml_node_t *n, const char *field, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
static kelvin_status fail(ctx *c, const yaml_node_t *n, const char *field, const char *fmt, ...)
{
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (c->msg && c->cap > 0) {
    if (n)
      snprintf(c->msg, (size_t)c->cap, "%s:%lu: %s%s%s", c->file, (unsigned long)n->start_mark.line + 1, field,
               *field ? ": " : "", text);
    else
      snprintf(c->msg, (size_t)c->cap, "%s: %s%s%s", c->file, field, *field ? ": " : "", text);
  }
  return KELVIN_ERR_CONFIG;
}

#define TRY(x)                                                                                               \
  do {                                                                                                       \
    const kelvin_status st_ = (x);                                                                           \
    if (st_ != KELVIN_OK) return st_;                                                                        \
  } while (0)

static yaml_node_t *node(ctx *c, int id) { return yaml_document_get_node(&c->doc, id); }

/* scalar text of n, or NULL if n is not a scalar */
static const char *text(const yaml_node_t *n)
{
  return (n && n->type == YAML_SCALAR_NODE) ? (const char *)n->data.scalar.value : NULL;
}

/* a mapping's value for key, or NULL */
static yaml_node_t *get(ctx *c, yaml_node_t *map, const char *key)
{
  if (!map || map->type != YAML_MAPPING_NODE) return NULL;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; ++p) {
    const char *k = text(node(c, p->key));
    if (k && strcmp(k, key) == 0) return node(c, p->value);
  }
  return NULL;
}

/* every key of map must be in allowed (NULL-terminated); duplicates are errors too */
static kelvin_status check_keys(ctx *c, yaml_node_t *map, const char *field, const char *const *allowed)
{
  if (!map || map->type != YAML_MAPPING_NODE) return fail(c, map, field, "must be a mapping (key: value lines)");
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; ++p) {
    yaml_node_t *kn = node(c, p->key);
    const char *k = text(kn);
    if (!k) return fail(c, kn, field, "keys must be plain names");
    int ok = 0;
    for (int i = 0; allowed[i]; ++i) ok |= strcmp(k, allowed[i]) == 0;
    char f[512];
    snprintf(f, sizeof f, "%s%s%s", field, *field ? "." : "", k);
    if (!ok) {
      char list[1024] = "";
      for (int i = 0; allowed[i]; ++i) {
        if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, allowed[i], sizeof list - strlen(list) - 1);
      }
      return fail(c, kn, f, "unknown key (expected one of: %s)", list);
    }
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; ++q) {
      const char *k2 = text(node(c, q->key));
      if (k2 && strcmp(k, k2) == 0) return fail(c, kn, f, "key given twice");
    }
  }
  return KELVIN_OK;
}

/* a finite number */
static kelvin_status num(ctx *c, yaml_node_t *n, const char *field, double *out)
{
  const char *s = text(n);
  if (!s || !*s) return fail(c, n, field, "must be a number");
  char *end = NULL;
  errno = 0;
  const double v = strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) return fail(c, n, field, "must be a finite number, got '%s'", s);
  *out = v;
  return KELVIN_OK;
}

/* optional number in a mapping (keeps *out if absent); *where = the node */
static kelvin_status opt_num(ctx *c, yaml_node_t *map, const char *key, const char *prefix, double *out, yaml_node_t **where)
{
  yaml_node_t *n = get(c, map, key);
  if (where) *where = n ? n : map;
  if (!n) return KELVIN_OK;
  char f[512];
  snprintf(f, sizeof f, "%s%s%s", prefix, *prefix ? "." : "", key);
  return num(c, n, f, out);
}

/* optional list of exactly k numbers */
static kelvin_status opt_vec(ctx *c, yaml_node_t *map, const char *key, const char *prefix, double *out, int k,
                             yaml_node_t **where)
{
  yaml_node_t *n = get(c, map, key);
  if (where) *where = n ? n : map;
  if (!n) return KELVIN_OK;
  char f[512];
  snprintf(f, sizeof f, "%s%s%s", prefix, *prefix ? "." : "", key);
  if (n->type != YAML_SEQUENCE_NODE) return fail(c, n, f, "must be a list of %d numbers, e.g. [0, 0, 1]", k);
  const int len = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
  if (len != k) return fail(c, n, f, "must have %d numbers, got %d", k, len);
  for (int i = 0; i < k; ++i) {
    char fi[600];
    snprintf(fi, sizeof fi, "%s[%d]", f, i);
    TRY(num(c, node(c, n->data.sequence.items.start[i]), fi, out + i));
  }
  return KELVIN_OK;
}

/* optional choice among names (returns the index in *out) */
static kelvin_status opt_choice(ctx *c, yaml_node_t *map, const char *key, const char *prefix, const char *const *names,
                                int *out)
{
  yaml_node_t *n = get(c, map, key);
  if (!n) return KELVIN_OK;
  char f[512];
  snprintf(f, sizeof f, "%s%s%s", prefix, *prefix ? "." : "", key);
  const char *s = text(n);
  if (s)
    for (int i = 0; names[i]; ++i)
      if (strcmp(s, names[i]) == 0) {
        *out = i;
        return KELVIN_OK;
      }
  char list[512] = "";
  for (int i = 0; names[i]; ++i) {
    if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
    strncat(list, names[i], sizeof list - strlen(list) - 1);
  }
  return fail(c, n, f, "must be one of %s, got '%s'", list, s ? s : "(not a name)");
}

//------------------------------------------------------------------------------------------------------
// sections

static const char *const model_names[] = {"kv", "hc", NULL};
static const char *const law_names[] = {"hunt-crossley", "lankarani-nikravesh", "flores", "gonthier", "exact", NULL};
static const char *const rule_names[] = {"penetration", "force", NULL};
static const char *const body_types[] = {"dynamic", "static", "kinematic", NULL};
static const char *const shape_types[] = {"sphere", "box", "capsule", "cylinder", "hull", "plane", "mesh", NULL};

/* contact: the model, law, rule and engine tolerances */
static kelvin_status contact_section(ctx *c, yaml_node_t *n, kl_world_model *m)
{
  static const char *const keys[] = {"model", "exponent", "law", "separation", "friction_velocity",
                                     "substep_fraction", "onset_tolerance", "max_contacts", NULL};
  TRY(check_keys(c, n, "contact", keys));
  TRY(opt_choice(c, n, "model", "contact", model_names, &m->model));
  if (m->model == KL_MODEL_HC) m->n = 1.5;
  yaml_node_t *w;
  TRY(opt_num(c, n, "exponent", "contact", &m->n, &w));
  if (m->model == KL_MODEL_KV && m->n != 1.0) return fail(c, w, "contact.exponent", "Kelvin-Voigt is linear (1), got %g; use model: hc", m->n);
  if (!(m->n >= 1 && m->n <= 3)) return fail(c, w, "contact.exponent", "must be in [1, 3], got %g", m->n);
  TRY(opt_choice(c, n, "law", "contact", law_names, &m->law));
  TRY(opt_choice(c, n, "separation", "contact", rule_names, &m->rule));
  TRY(opt_num(c, n, "friction_velocity", "contact", &m->vreg, &w));
  if (!(m->vreg > 0)) return fail(c, w, "contact.friction_velocity", "must be > 0 m/s, got %g", m->vreg);
  TRY(opt_num(c, n, "substep_fraction", "contact", &m->substep_fraction, &w));
  if (!(m->substep_fraction > 0 && m->substep_fraction <= 0.5))
    return fail(c, w, "contact.substep_fraction", "must be in (0, 0.5], got %g", m->substep_fraction);
  TRY(opt_num(c, n, "onset_tolerance", "contact", &m->onset_tol, &w));
  if (!(m->onset_tol > 0)) return fail(c, w, "contact.onset_tolerance", "must be > 0 m, got %g", m->onset_tol);
  double nc = m->ncon_max;
  TRY(opt_num(c, n, "max_contacts", "contact", &nc, &w));
  if (!(nc >= 1 && nc <= 4096 && nc == floor(nc))) return fail(c, w, "contact.max_contacts", "must be a whole number in [1, 4096], got %g", nc);
  m->ncon_max = (int)nc;
  return KELVIN_OK;
}

/* material keys of a body or a pair */
static kelvin_status material(ctx *c, yaml_node_t *n, const char *f, double *K, double *cr, double *D, double *mu)
{
  static const char *const keys[] = {"stiffness", "restitution", "damping", "friction", NULL};
  TRY(check_keys(c, n, f, keys));
  yaml_node_t *w;
  char g[512];
  TRY(opt_num(c, n, "stiffness", f, K, &w));
  snprintf(g, sizeof g, "%s.stiffness", f);
  if (!(*K > 0)) return fail(c, w, g, "must be > 0 (N/m, or N/m^n for hc), got %g", *K);
  TRY(opt_num(c, n, "restitution", f, cr, &w));
  snprintf(g, sizeof g, "%s.restitution", f);
  if (!(*cr > 0 && *cr <= 1)) return fail(c, w, g, "must be in (0, 1], got %g", *cr);
  TRY(opt_num(c, n, "damping", f, D, &w));
  snprintf(g, sizeof g, "%s.damping", f);
  if (!(*D >= 0)) return fail(c, w, g, "must be >= 0 N s/m (0: from restitution), got %g", *D);
  TRY(opt_num(c, n, "friction", f, mu, &w));
  snprintf(g, sizeof g, "%s.friction", f);
  if (!(*mu >= 0)) return fail(c, w, g, "must be >= 0, got %g", *mu);
  return KELVIN_OK;
}

/* quaternion that turns +z into the unit vector n */
static void quat_z_to(const double n[3], double q[4])
{
  /* half-way quaternion: (1 + z.n, z x n), normalised; n = -z turns about x */
  const double w = 1.0 + n[2];
  if (w < 1e-12) {
    q[0] = 0, q[1] = 1, q[2] = 0, q[3] = 0;
    return;
  }
  const double x = -n[1], y = n[0];
  const double l = sqrt(w * w + x * x + y * y);
  q[0] = w / l, q[1] = x / l, q[2] = y / l, q[3] = 0;
}

/* resolve a mesh path relative to the scene's folder */
static void mesh_path(const ctx *c, const char *file, char *out, size_t cap)
{
  if (file[0] == '/' || !c->dir[0])
    snprintf(out, cap, "%s", file);
  else
    snprintf(out, cap, "%s/%s", c->dir, file);
}

/* one shape of a body (sizes, pose, padding; a mesh file is loaded here) */
static kelvin_status shape(ctx *c, yaml_node_t *n, const char *f, int body, int btype)
{
  static const char *const keys[] = {"type", "radius", "half_extents", "half_length", "vertices", "file", "scale",
                                     "normal", "point", "position", "orientation", "padding", NULL};
  TRY(check_keys(c, n, f, keys));
  kl_shape_def s;
  kl_world_default_shape(&s);
  yaml_node_t *tn = get(c, n, "type");
  char g[512];
  snprintf(g, sizeof g, "%s.type", f);
  if (!tn) return fail(c, n, g, "missing (one of sphere, box, capsule, cylinder, hull, plane, mesh)");
  TRY(opt_choice(c, n, "type", f, shape_types, &s.type));
  const char *const needs[KL_NSHAPE][3] = {{"radius"}, {"half_extents"}, {"radius", "half_length"},
                                           {"radius", "half_length"}, {"vertices"}, {NULL}, {"file"}};
  for (int i = 0; i < 3 && needs[s.type][i]; ++i)
    if (!get(c, n, needs[s.type][i])) {
      snprintf(g, sizeof g, "%s.%s", f, needs[s.type][i]);
      return fail(c, n, g, "missing (a %s needs it)", shape_types[s.type]);
    }
  if ((s.type == KL_SHAPE_PLANE || s.type == KL_SHAPE_MESH) && btype != KL_BODY_STATIC) {
    snprintf(g, sizeof g, "%s.type", f);
    return fail(c, tn, g, "a %s can only belong to a static body", shape_types[s.type]);
  }
  yaml_node_t *w;
  double r = 0.1, hl = 0.1;
  TRY(opt_num(c, n, "radius", f, &r, &w));
  snprintf(g, sizeof g, "%s.radius", f);
  if (get(c, n, "radius") && !(r > 0)) return fail(c, w, g, "must be > 0 m, got %g", r);
  TRY(opt_num(c, n, "half_length", f, &hl, &w));
  snprintf(g, sizeof g, "%s.half_length", f);
  if (get(c, n, "half_length") && !(hl > 0)) return fail(c, w, g, "must be > 0 m, got %g", hl);
  s.size[0] = r;
  s.size[1] = hl;
  if (s.type == KL_SHAPE_BOX) {
    TRY(opt_vec(c, n, "half_extents", f, s.size, 3, &w));
    snprintf(g, sizeof g, "%s.half_extents", f);
    if (!(s.size[0] > 0 && s.size[1] > 0 && s.size[2] > 0)) return fail(c, w, g, "must all be > 0 m");
  }
  TRY(opt_vec(c, n, "position", f, s.pos, 3, NULL));
  TRY(opt_vec(c, n, "orientation", f, s.quat, 4, &w));
  snprintf(g, sizeof g, "%s.orientation", f);
  if (!(s.quat[0] * s.quat[0] + s.quat[1] * s.quat[1] + s.quat[2] * s.quat[2] + s.quat[3] * s.quat[3] > 1e-20))
    return fail(c, w, g, "quaternion [w, x, y, z] must not be zero");
  TRY(opt_num(c, n, "padding", f, &s.pad, &w));
  snprintf(g, sizeof g, "%s.padding", f);
  if (!(s.pad >= 0)) return fail(c, w, g, "must be >= 0 m, got %g", s.pad);
  double *hull = NULL;
  if (s.type == KL_SHAPE_PLANE) {
    double nrm[3] = {0, 0, 1}, pt[3] = {0, 0, 0};
    TRY(opt_vec(c, n, "normal", f, nrm, 3, &w));
    snprintf(g, sizeof g, "%s.normal", f);
    const double len = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
    if (!(fabs(len - 1.0) <= 1e-9)) return fail(c, w, g, "must be a unit vector, |n| = %.9g", len);
    TRY(opt_vec(c, n, "point", f, pt, 3, NULL));
    quat_z_to(nrm, s.quat);
    memcpy(s.pos, pt, sizeof pt);
  } else if (get(c, n, "normal") || get(c, n, "point")) {
    snprintf(g, sizeof g, "%s.%s", f, get(c, n, "normal") ? "normal" : "point");
    return fail(c, get(c, n, get(c, n, "normal") ? "normal" : "point"), g, "only a plane has it");
  }
  if (s.type == KL_SHAPE_HULL) {
    yaml_node_t *vn = get(c, n, "vertices");
    snprintf(g, sizeof g, "%s.vertices", f);
    if (vn->type != YAML_SEQUENCE_NODE) return fail(c, vn, g, "must be a list of [x, y, z] points");
    const int nv = (int)(vn->data.sequence.items.top - vn->data.sequence.items.start);
    if (nv < 4) return fail(c, vn, g, "a convex hull needs at least 4 points, got %d", nv);
    hull = malloc((size_t)nv * 3 * sizeof *hull);
    if (!hull) return KELVIN_ERR_NOMEM;
    for (int i = 0; i < nv; ++i) {
      yaml_node_t *pn = node(c, vn->data.sequence.items.start[i]);
      char gi[600];
      snprintf(gi, sizeof gi, "%s[%d]", g, i);
      const int len = pn->type == YAML_SEQUENCE_NODE ? (int)(pn->data.sequence.items.top - pn->data.sequence.items.start) : -1;
      kelvin_status st = KELVIN_OK;
      if (len != 3) st = fail(c, pn, gi, "must be a point [x, y, z]");
      for (int k = 0; k < 3 && st == KELVIN_OK; ++k) st = num(c, node(c, pn->data.sequence.items.start[k]), gi, hull + 3 * i + k);
      if (st != KELVIN_OK) {
        free(hull);
        return st;
      }
    }
    s.hull = hull;
    s.nhull = nv;
  }
  if (s.type == KL_SHAPE_MESH) {
    yaml_node_t *fn = get(c, n, "file");
    snprintf(g, sizeof g, "%s.file", f);
    const char *file = text(fn);
    if (!file || !*file) return fail(c, fn, g, "must be a file name (STL, OBJ, PLY)");
    double scale = 1.0;
    TRY(opt_num(c, n, "scale", f, &scale, &w));
    if (!(scale > 0)) {
      snprintf(g, sizeof g, "%s.scale", f);
      return fail(c, w, g, "must be > 0, got %g", scale);
    }
    char path[8192], sub[1024];
    mesh_path(c, file, path, sizeof path);
    kl_mesh *mesh = NULL;
    if (kl_mesh_load(path, scale, &mesh, sub, sizeof sub) != KELVIN_OK) return fail(c, fn, g, "%s", sub);
    kl_mesh **mm = realloc(c->sc->mesh, (size_t)(c->sc->nmesh + 1) * sizeof *mm);
    if (!mm) {
      kl_mesh_free(mesh);
      return KELVIN_ERR_NOMEM;
    }
    c->sc->mesh = mm;
    mm[c->sc->nmesh++] = mesh;
    s.mesh = mesh;
    if (s.pos[0] != 0 || s.pos[1] != 0 || s.pos[2] != 0 || get(c, n, "orientation")) {
      snprintf(g, sizeof g, "%s.position", f);
      return fail(c, n, g, "a mesh is placed by its own coordinates (no position or orientation)");
    }
  } else if (get(c, n, "file") || get(c, n, "scale")) {
    snprintf(g, sizeof g, "%s.file", f);
    return fail(c, n, g, "only a mesh has a file and a scale");
  }
  const int id = kl_world_add_shape(c->sc->model, body, &s);
  free(hull);
  return id < 0 ? KELVIN_ERR_NOMEM : KELVIN_OK;
}

/* bodies[i]: type, mass, state, material, holder, shapes */
static kelvin_status body(ctx *c, yaml_node_t *n, int i)
{
  static const char *const keys[] = {"name", "type", "mass", "inertia", "position", "orientation", "velocity",
                                     "angular_velocity", "material", "holder", "shapes", NULL};
  char f[128], g[512];
  snprintf(f, sizeof f, "bodies[%d]", i);
  TRY(check_keys(c, n, f, keys));
  kl_body_def b;
  kl_world_default_body(&b);
  TRY(opt_choice(c, n, "type", f, body_types, &b.type));
  yaml_node_t *w;
  TRY(opt_num(c, n, "mass", f, &b.mass, &w));
  snprintf(g, sizeof g, "%s.mass", f);
  if (b.type == KL_BODY_DYNAMIC && !(b.mass > 0)) return fail(c, w, g, "must be > 0 kg, got %g", b.mass);
  if (b.type != KL_BODY_DYNAMIC && get(c, n, "mass")) return fail(c, w, g, "only a dynamic body has a mass");
  TRY(opt_vec(c, n, "inertia", f, b.inertia, 3, &w));
  snprintf(g, sizeof g, "%s.inertia", f);
  if (get(c, n, "inertia") && !(b.inertia[0] > 0 && b.inertia[1] > 0 && b.inertia[2] > 0))
    return fail(c, w, g, "principal moments must be > 0 kg m^2");
  TRY(opt_vec(c, n, "position", f, b.pos, 3, NULL));
  TRY(opt_vec(c, n, "orientation", f, b.quat, 4, &w));
  snprintf(g, sizeof g, "%s.orientation", f);
  if (!(b.quat[0] * b.quat[0] + b.quat[1] * b.quat[1] + b.quat[2] * b.quat[2] + b.quat[3] * b.quat[3] > 1e-20))
    return fail(c, w, g, "quaternion [w, x, y, z] must not be zero");
  TRY(opt_vec(c, n, "velocity", f, b.vel, 3, NULL));
  TRY(opt_vec(c, n, "angular_velocity", f, b.angvel, 3, NULL));
  if (b.type == KL_BODY_STATIC && (get(c, n, "velocity") || get(c, n, "angular_velocity"))) {
    snprintf(g, sizeof g, "%s.velocity", f);
    return fail(c, n, g, "a static body does not move (use type: kinematic for a prescribed motion)");
  }
  yaml_node_t *mn = get(c, n, "material");
  if (mn) {
    snprintf(g, sizeof g, "%s.material", f);
    TRY(material(c, mn, g, &b.K, &b.cr, &b.D, &b.mu));
  }
  yaml_node_t *hn = get(c, n, "holder");
  if (hn) {
    static const char *const hk[] = {"anchor", "anchor_velocity", "stiffness", "damping", NULL};
    snprintf(g, sizeof g, "%s.holder", f);
    TRY(check_keys(c, hn, g, hk));
    if (b.type != KL_BODY_DYNAMIC) return fail(c, hn, g, "only a dynamic body can be held");
    b.holder = 1;
    memcpy(b.anchor, b.pos, sizeof b.anchor);
    TRY(opt_vec(c, hn, "anchor", g, b.anchor, 3, NULL));
    TRY(opt_vec(c, hn, "anchor_velocity", g, b.anchor_vel, 3, NULL));
    TRY(opt_vec(c, hn, "stiffness", g, b.holder_K, 3, &w));
    char h2[600];
    snprintf(h2, sizeof h2, "%s.stiffness", g);
    if (!(b.holder_K[0] >= 0 && b.holder_K[1] >= 0 && b.holder_K[2] >= 0)) return fail(c, w, h2, "must be >= 0 N/m per axis");
    TRY(opt_vec(c, hn, "damping", g, b.holder_D, 3, &w));
    snprintf(h2, sizeof h2, "%s.damping", g);
    if (!(b.holder_D[0] >= 0 && b.holder_D[1] >= 0 && b.holder_D[2] >= 0)) return fail(c, w, h2, "must be >= 0 N s/m per axis");
  }
  const int id = kl_world_add_body(c->sc->model, &b);
  if (id < 0) return KELVIN_ERR_NOMEM;
  yaml_node_t *nm = get(c, n, "name");
  char name[128];
  snprintf(name, sizeof name, "body%d", i);
  if (nm) {
    const char *s = text(nm);
    snprintf(g, sizeof g, "%s.name", f);
    if (!s || !*s || strlen(s) > 64) return fail(c, nm, g, "must be a name of 1 to 64 characters");
    for (const char *p = s; *p; ++p)
      if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' ||
            (unsigned char)*p >= 0x80)) /* it names the file body_NAME.csv: no '/', '.', space or quote */
        return fail(c, nm, g, "may hold letters (UTF-8 too), digits, '_' and '-' only, got '%s'", s);
    for (int k = 0; k < c->sc->nbody; ++k)
      if (strcmp(c->sc->body_name[k], s) == 0) return fail(c, nm, g, "'%s' is used by bodies[%d] already", s, k);
    snprintf(name, sizeof name, "%s", s);
  }
  char **names = realloc(c->sc->body_name, (size_t)(c->sc->nbody + 1) * sizeof *names);
  if (!names) return KELVIN_ERR_NOMEM;
  c->sc->body_name = names;
  names[c->sc->nbody] = strdup(name);
  if (!names[c->sc->nbody]) return KELVIN_ERR_NOMEM;
  c->sc->nbody++;
  yaml_node_t *sn = get(c, n, "shapes");
  snprintf(g, sizeof g, "%s.shapes", f);
  if (!sn) return fail(c, n, g, "missing: a body needs at least one shape");
  if (sn->type != YAML_SEQUENCE_NODE || sn->data.sequence.items.top == sn->data.sequence.items.start)
    return fail(c, sn, g, "must be a non-empty list of shapes");
  int k = 0;
  for (yaml_node_item_t *it = sn->data.sequence.items.start; it < sn->data.sequence.items.top; ++it, ++k) {
    char fs[600];
    snprintf(fs, sizeof fs, "%s[%d]", g, k);
    TRY(shape(c, node(c, *it), fs, id, b.type));
  }
  return KELVIN_OK;
}

/* body index by name */
static int body_index(const kl_scene *sc, const char *name)
{
  for (int i = 0; i < sc->nbody; ++i)
    if (strcmp(sc->body_name[i], name) == 0) return i;
  return -1;
}

/* pairs: explicit parameters for a pair of bodies (docs/design.md 2.4) */
static kelvin_status pairs_section(ctx *c, yaml_node_t *n)
{
  if (n->type != YAML_SEQUENCE_NODE) return fail(c, n, "pairs", "must be a list");
  int i = 0;
  for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; ++it, ++i) {
    yaml_node_t *p = node(c, *it);
    static const char *const keys[] = {"bodies", "stiffness", "restitution", "damping", "friction", NULL};
    char f[128], g[256];
    snprintf(f, sizeof f, "pairs[%d]", i);
    TRY(check_keys(c, p, f, keys));
    yaml_node_t *bn = get(c, p, "bodies");
    snprintf(g, sizeof g, "%s.bodies", f);
    if (!bn || bn->type != YAML_SEQUENCE_NODE || bn->data.sequence.items.top - bn->data.sequence.items.start != 2)
      return fail(c, bn ? bn : p, g, "must name two bodies, e.g. [ball, ground]");
    int ids[2];
    for (int k = 0; k < 2; ++k) {
      yaml_node_t *x = node(c, bn->data.sequence.items.start[k]);
      const char *s = text(x);
      ids[k] = s ? body_index(c->sc, s) : -1;
      if (ids[k] < 0) return fail(c, x, g, "no body named '%s'", s ? s : "?");
    }
    if (ids[0] == ids[1]) return fail(c, bn, g, "a body cannot pair with itself");
    double K = 0, cr = 0, D = 0, mu = 0;
    /* defaults: the blend of the two bodies */
    const kl_world_model *m = c->sc->model;
    K = 2 * m->body_K[ids[0]] * m->body_K[ids[1]] / (m->body_K[ids[0]] + m->body_K[ids[1]]);
    cr = 0.5 * (m->body_cr[ids[0]] + m->body_cr[ids[1]]);
    mu = (m->body_mu[ids[0]] > 0 && m->body_mu[ids[1]] > 0)
           ? 2 * m->body_mu[ids[0]] * m->body_mu[ids[1]] / (m->body_mu[ids[0]] + m->body_mu[ids[1]])
           : 0.0;
    /* the material keys sit directly in the pair; absent ones keep the blend */
    yaml_node_t *w;
    TRY(opt_num(c, p, "stiffness", f, &K, &w));
    snprintf(g, sizeof g, "%s.stiffness", f);
    if (!(K > 0)) return fail(c, w, g, "must be > 0, got %g", K);
    TRY(opt_num(c, p, "restitution", f, &cr, &w));
    snprintf(g, sizeof g, "%s.restitution", f);
    if (!(cr > 0 && cr <= 1)) return fail(c, w, g, "must be in (0, 1], got %g", cr);
    TRY(opt_num(c, p, "damping", f, &D, &w));
    snprintf(g, sizeof g, "%s.damping", f);
    if (!(D >= 0)) return fail(c, w, g, "must be >= 0 N s/m, got %g", D);
    TRY(opt_num(c, p, "friction", f, &mu, &w));
    snprintf(g, sizeof g, "%s.friction", f);
    if (!(mu >= 0)) return fail(c, w, g, "must be >= 0, got %g", mu);
    if (kl_world_add_pair(c->sc->model, ids[0], ids[1], K, cr, D, mu) < 0) return KELVIN_ERR_NOMEM;
  }
  return KELVIN_OK;
}

/* the whole document, then the engine's own checks (kl_world_compile) */
static kelvin_status root(ctx *c)
{
  yaml_node_t *r = yaml_document_get_root_node(&c->doc);
  if (!r) return fail(c, NULL, "", "the file is empty");
  static const char *const keys[] = {"duration", "output_step", "gravity", "contact", "bodies", "pairs", NULL};
  TRY(check_keys(c, r, "", keys));
  kl_world_model *m = c->sc->model;
  yaml_node_t *w;
  c->sc->duration = 1.0;
  c->sc->output_step = 1e-3;
  TRY(opt_num(c, r, "duration", "", &c->sc->duration, &w));
  if (!(c->sc->duration > 0 && c->sc->duration <= 1e6)) return fail(c, w, "duration", "must be in (0, 1e6] s, got %g", c->sc->duration);
  TRY(opt_num(c, r, "output_step", "", &c->sc->output_step, &w));
  if (!(c->sc->output_step > 0 && c->sc->output_step <= c->sc->duration))
    return fail(c, w, "output_step", "must be > 0 and <= duration (%g s), got %g", c->sc->duration, c->sc->output_step);
  if (c->sc->duration / c->sc->output_step > 1e7)
    return fail(c, w, "output_step", "%g s over %g s would write %.3g rows; use a larger output_step", c->sc->output_step,
                c->sc->duration, c->sc->duration / c->sc->output_step);
  TRY(opt_vec(c, r, "gravity", "", m->gravity, 3, NULL));
  yaml_node_t *cn = get(c, r, "contact");
  if (cn) TRY(contact_section(c, cn, m));
  yaml_node_t *bn = get(c, r, "bodies");
  if (!bn) return fail(c, r, "bodies", "missing: a scene needs bodies");
  if (bn->type != YAML_SEQUENCE_NODE || bn->data.sequence.items.top == bn->data.sequence.items.start)
    return fail(c, bn, "bodies", "must be a non-empty list");
  int i = 0;
  for (yaml_node_item_t *it = bn->data.sequence.items.start; it < bn->data.sequence.items.top; ++it, ++i)
    TRY(body(c, node(c, *it), i));
  yaml_node_t *pn = get(c, r, "pairs");
  if (pn) TRY(pairs_section(c, pn));
  char sub[1024];
  if (kl_world_compile(m, sub, sizeof sub) != KELVIN_OK) return fail(c, NULL, "", "%s", sub);
  return KELVIN_OK;
}

kelvin_status kl_scene_load(const char *path, kl_scene *out, char *msg, int cap)
{
  memset(out, 0, sizeof *out);
  if (msg && cap > 0) msg[0] = '\0';
  FILE *f = fopen(path, "rb");
  if (!f) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: cannot open: %s", path, strerror(errno));
    return KELVIN_ERR_IO;
  }
  ctx c;
  memset(&c, 0, sizeof c);
  c.file = path;
  c.msg = msg;
  c.cap = cap;
  c.sc = out;
  snprintf(c.dir, sizeof c.dir, "%s", path);
  char *slash = strrchr(c.dir, '/');
  if (slash)
    *slash = '\0';
  else
    c.dir[0] = '\0';
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    fclose(f);
    return KELVIN_ERR_NOMEM;
  }
  yaml_parser_set_input_file(&parser, f);
  if (!yaml_parser_load(&parser, &c.doc)) {
    if (msg && cap > 0)
      snprintf(msg, (size_t)cap, "%s:%lu: YAML syntax: %s%s%s", path, (unsigned long)parser.problem_mark.line + 1,
               parser.problem ? parser.problem : "error", parser.context ? " " : "", parser.context ? parser.context : "");
    yaml_parser_delete(&parser);
    fclose(f);
    return KELVIN_ERR_CONFIG;
  }
  yaml_parser_delete(&parser);
  fclose(f);
  out->model = kl_world_create();
  kelvin_status st = out->model ? root(&c) : KELVIN_ERR_NOMEM;
  if (st == KELVIN_ERR_NOMEM && msg && cap > 0) snprintf(msg, (size_t)cap, "%s: out of memory", path);
  yaml_document_delete(&c.doc);
  if (st != KELVIN_OK) kl_scene_free(out);
  return st;
}

void kl_scene_free(kl_scene *s)
{
  if (!s) return;
  kl_world_free(s->model);
  for (int i = 0; i < s->nmesh; ++i) kl_mesh_free(s->mesh[i]);
  free(s->mesh);
  for (int i = 0; i < s->nbody; ++i) free(s->body_name[i]);
  free(s->body_name);
  memset(s, 0, sizeof *s);
}
