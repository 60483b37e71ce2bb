/* io/scene_yaml.c: YAML scene loader for `kelvin simulate` (see scene_yaml.h). */
#include "io/scene_yaml.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/config.h"
#include "io/mesh_import.h"

#include "kernels/kl_contact_static.h"
#include "kernels/kl_impact.h"
#include "kernels/kl_names.h"

/* field paths ("bodies[3].shapes[0].radius") are built into fixed buffers; a path longer than them is
 * cut in the message, never overrun, so gcc's truncation analysis has nothing to add here */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

typedef struct ctx {
  kl_cfg *cfg;        /* the document; messages go on it */
  kl_scene *sc;
  const kl_cfg_node *bodies; /* the bodies list (for the line of an earlier body) */
} ctx;

typedef const kl_cfg_node node_t;

/* one-line message "file:line: field: text"; returns KELVIN_ERR_CONFIG */
static kelvin_status fail(ctx *c, node_t *n, const char *field, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static kelvin_status fail(ctx *c, node_t *n, const char *field, const char *fmt, ...)
{
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  return kl_cfg_fail(c->cfg, n, *field ? field : "(top level)", "%s", text);
}

#define TRY(x)                                                                                               \
  do {                                                                                                       \
    const kelvin_status st_ = (x);                                                                           \
    if (st_ != KELVIN_OK) return st_;                                                                        \
  } while (0)

/* scalar text of n, or NULL if n is not a scalar */
static const char *text(node_t *n) { return (n && n->type == KL_CFG_SCALAR) ? n->value : NULL; }

static node_t *get(ctx *c, node_t *map, const char *key)
{
  (void)c;
  return kl_cfg_get(map, key);
}

/* every key of map must be in allowed (NULL-terminated); duplicates are refused by the YAML layer */
static kelvin_status check_keys(ctx *c, node_t *map, const char *field, const char *const *allowed)
{
  return kl_cfg_keys(c->cfg, map, *field ? field : "(top level)", allowed);
}

/* a finite number */
static kelvin_status num(ctx *c, node_t *n, const char *field, double *out) { return kl_cfg_number(c->cfg, n, field, out); }

/* optional number in a mapping (keeps *out if absent); *where = the node */
static kelvin_status opt_num(ctx *c, node_t *map, const char *key, const char *prefix, double *out, node_t **where)
{
  node_t *n = get(c, map, key);
  if (where) *where = n ? n : map;
  if (!n) return KELVIN_OK;
  char f[512];
  return num(c, n, kl_cfg_field(f, sizeof f, prefix, key), out);
}

/* optional list of exactly k numbers */
static kelvin_status opt_vec(ctx *c, node_t *map, const char *key, const char *prefix, double *out, int k, node_t **where)
{
  node_t *n = get(c, map, key);
  if (where) *where = n ? n : map;
  if (!n) return KELVIN_OK;
  char f[512];
  return kl_cfg_numbers(c->cfg, n, kl_cfg_field(f, sizeof f, prefix, key), k, out);
}

/* optional choice among names (returns the index in *out) */
static kelvin_status opt_choice(ctx *c, node_t *map, const char *key, const char *prefix, const char *const *names, int *out)
{
  node_t *n = get(c, map, key);
  if (!n) return KELVIN_OK;
  char f[512];
  return kl_cfg_choice(c->cfg, n, kl_cfg_field(f, sizeof f, prefix, key), names, out);
}

//------------------------------------------------------------------------------------------------------
// sections

static const char *const body_types[] = {"dynamic", "static", "kinematic", NULL};
static const char *const shape_types[] = {"sphere", "box", "capsule", "cylinder", "hull", "plane", "mesh", NULL};

/* the general law's keys k, c, n1, n2, m in map (each optional, absent ones keep *L), checked by the library's
 * kl_gen_law_bad, the message at the bad key: "<prefix>.<key>: ..." (gen: the model is general; otherwise a
 * key given is an error) */
static kelvin_status gen_keys(ctx *c, node_t *map, const char *prefix, int gen, kl_gen_law *L)
{
  static const char *const names[] = {"k", "c", "n1", "n2", "m"};
  double *v[] = {&L->k, &L->c, &L->n1, &L->n2, &L->m};
  node_t *where[5];
  int given = 0;
  for (int i = 0; i < 5; ++i) {
    node_t *x = get(c, map, names[i]);
    given |= x != NULL;
    TRY(opt_num(c, map, names[i], prefix, v[i], &where[i]));
    if (x && !gen) {
      char f[256];
      snprintf(f, sizeof f, "%s.%s", prefix, names[i]);
      return fail(c, x, f, "only the general law takes it (contact.model: general)");
    }
  }
  if (!gen || (!given && strcmp(prefix, "contact") != 0)) return KELVIN_OK; /* a pair without keys: the contact's law */
  char why[160], f[256];
  const int bad = kl_gen_law_bad(*L, why, sizeof why);
  if (!bad) return KELVIN_OK;
  snprintf(f, sizeof f, "%s.%s", prefix, names[bad - 1]);
  /* why starts with "<key>: " */
  const char *w = strchr(why, ':');
  return fail(c, where[bad - 1], f, "%s", w ? w + 2 : why);
}

/* contact: the model, law, rule and engine tolerances */
static kelvin_status contact_section(ctx *c, node_t *n, kl_world_model *m)
{
  static const char *const keys[] = {"model", "exponent", "law", "separation", "friction_velocity",
                                     "substep_fraction", "onset_tolerance", "max_contacts", "k", "c", "n1", "n2",
                                     "m", NULL};
  TRY(check_keys(c, n, "contact", keys));
  int mi = -1;
  TRY(opt_choice(c, n, "model", "contact", kl_engine_model_names_, &mi));
  if (mi >= 0) m->model = kl_engine_model_code(mi);
  if (m->model == KL_MODEL_HC) m->n = 1.5;
  if (m->model == KL_MODEL_GEN) {
    /* the general law (kernels/kl_contact_gen.h): k required, c 0, n1 1.5, n2 = n1, m 1 by default */
    node_t *kn = get(c, n, "k");
    if (!kn) return fail(c, n, "contact.k", "missing: the general law needs its stiffness k (N/m^n1)");
    m->gen = (kl_gen_law){0.0, 0.0, 1.5, -1.0, 1.0};
    node_t *n2 = get(c, n, "n2");
    if (!n2) { /* n2 defaults to n1 */
      double n1 = 1.5;
      TRY(opt_num(c, n, "n1", "contact", &n1, NULL));
      m->gen.n2 = n1;
    }
    if (get(c, n, "exponent")) return fail(c, get(c, n, "exponent"), "contact.exponent", "the general law takes n1 (and n2, m), not exponent");
  }
  TRY(gen_keys(c, n, "contact", m->model == KL_MODEL_GEN, &m->gen));
  if (m->model == KL_MODEL_GEN) m->n = m->gen.n1;
  node_t *w;
  TRY(opt_num(c, n, "exponent", "contact", &m->n, &w));
  if (m->model == KL_MODEL_KV && m->n != 1.0) return fail(c, w, "contact.exponent", "Kelvin-Voigt is linear (1), got %g; use model: hc", m->n);
  if (!(m->n >= 1 && m->n <= 3)) return fail(c, w, "contact.exponent", "must be in [1, 3], got %g", m->n);
  TRY(opt_choice(c, n, "law", "contact", kl_law_names_, &m->law));
  TRY(opt_choice(c, n, "separation", "contact", kl_rule_names_, &m->rule));
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
static kelvin_status material(ctx *c, node_t *n, const char *f, double *K, double *cr, double *D, double *mu)
{
  static const char *const keys[] = {"stiffness", "restitution", "damping", "friction", NULL};
  TRY(check_keys(c, n, f, keys));
  node_t *w;
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
  if (kl_cfg_relpath(c->cfg, file, out, cap) != 0) snprintf(out, cap, "%s", file);
}

/* one shape of a body (sizes, pose, padding; a mesh file is loaded here) */
static kelvin_status shape(ctx *c, node_t *n, const char *f, int body, int btype)
{
  static const char *const keys[] = {"type", "radius", "half_extents", "half_length", "vertices", "file", "scale",
                                     "normal", "point", "position", "orientation", "padding", NULL};
  TRY(check_keys(c, n, f, keys));
  kl_shape_def s;
  kl_world_default_shape(&s);
  node_t *tn = get(c, n, "type");
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
  node_t *w;
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
  if (s.type != KL_SHAPE_MESH && (get(c, n, "file") || get(c, n, "scale"))) {
    snprintf(g, sizeof g, "%s.%s", f, get(c, n, "file") ? "file" : "scale");
    return fail(c, get(c, n, get(c, n, "file") ? "file" : "scale"), g, "only a mesh has a file and a scale");
  }
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
    node_t *vn = get(c, n, "vertices");
    snprintf(g, sizeof g, "%s.vertices", f);
    if (vn->type != KL_CFG_SEQ) return fail(c, vn, g, "must be a list of [x, y, z] points");
    const int nv = vn->n;
    if (nv < 4) return fail(c, vn, g, "a convex hull needs at least 4 points, got %d", nv);
    hull = malloc((size_t)nv * 3 * sizeof *hull);
    if (!hull) return KELVIN_ERR_NOMEM;
    for (int i = 0; i < nv; ++i) {
      node_t *pn = vn->items[i];
      char gi[600];
      snprintf(gi, sizeof gi, "%s[%d]", g, i);
      const int len = pn->type == KL_CFG_SEQ ? pn->n : -1;
      kelvin_status st = KELVIN_OK;
      if (len != 3) st = fail(c, pn, gi, "must be a point [x, y, z]");
      for (int k = 0; k < 3 && st == KELVIN_OK; ++k) st = num(c, pn->items[k], gi, hull + 3 * i + k);
      if (st != KELVIN_OK) {
        free(hull);
        return st;
      }
    }
    s.hull = hull;
    s.nhull = nv;
  }
  if (s.type == KL_SHAPE_MESH) {
    node_t *fn = get(c, n, "file");
    snprintf(g, sizeof g, "%s.file", f);
    const char *file = text(fn);
    if (!file || !*file) return fail(c, fn, g, "must be a file name (STL, OBJ, PLY)");
    double scale = 1.0;
    TRY(opt_num(c, n, "scale", f, &scale, &w));
    if (!(scale > 0)) {
      snprintf(g, sizeof g, "%s.scale", f);
      return fail(c, w, g, "must be > 0, got %g", scale);
    }
    if (c->sc->nmesh >= KL_SCENE_MAX_MESHES)
      return fail(c, fn, g, "more than %d mesh shapes in one scene (the limit)", KL_SCENE_MAX_MESHES);
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
  }
  const int id = kl_world_add_shape(c->sc->model, body, &s);
  free(hull);
  return id < 0 ? KELVIN_ERR_NOMEM : KELVIN_OK;
}

/* bodies[i]: type, mass, state, material, holder, shapes */
static kelvin_status body(ctx *c, node_t *n, int i)
{
  static const char *const keys[] = {"name", "type", "mass", "inertia", "position", "orientation", "velocity",
                                     "angular_velocity", "material", "holder", "shapes", NULL};
  char f[128], g[512];
  snprintf(f, sizeof f, "bodies[%d]", i);
  TRY(check_keys(c, n, f, keys));
  kl_body_def b;
  kl_world_default_body(&b);
  TRY(opt_choice(c, n, "type", f, body_types, &b.type));
  node_t *w;
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
  node_t *mn = get(c, n, "material");
  if (mn) {
    snprintf(g, sizeof g, "%s.material", f);
    TRY(material(c, mn, g, &b.K, &b.cr, &b.D, &b.mu));
  }
  node_t *hn = get(c, n, "holder");
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
  node_t *nm = get(c, n, "name");
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
      if (strcmp(c->sc->body_name[k], s) == 0) {
        node_t *there = c->bodies ? get(c, c->bodies->items[k], "name") : NULL;
        return fail(c, nm, g, "duplicate body name: '%s' is used by bodies[%d] (line %d) already", s, k,
                    there ? there->line : 0);
      }
    snprintf(name, sizeof name, "%s", s);
  }
  char **names = realloc(c->sc->body_name, (size_t)(c->sc->nbody + 1) * sizeof *names);
  if (!names) return KELVIN_ERR_NOMEM;
  c->sc->body_name = names;
  names[c->sc->nbody] = strdup(name);
  if (!names[c->sc->nbody]) return KELVIN_ERR_NOMEM;
  c->sc->nbody++;
  node_t *sn = get(c, n, "shapes");
  snprintf(g, sizeof g, "%s.shapes", f);
  if (!sn) return fail(c, n, g, "missing: a body needs at least one shape");
  if (sn->type != KL_CFG_SEQ || sn->n == 0)
    return fail(c, sn, g, "must be a non-empty list of shapes");
  int k = 0;
  for (; k < sn->n; ++k) {
    char fs[600];
    snprintf(fs, sizeof fs, "%s[%d]", g, k);
    TRY(shape(c, sn->items[k], fs, id, b.type));
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
static kelvin_status pairs_section(ctx *c, node_t *n)
{
  if (n->type != KL_CFG_SEQ) return fail(c, n, "pairs", "must be a list");
  int i = 0;
  for (; i < n->n; ++i) {
    node_t *p = n->items[i];
    static const char *const keys[] = {"bodies", "stiffness", "restitution", "damping", "friction", "k", "c",
                                       "n1", "n2", "m", NULL};
    char f[128], g[256];
    snprintf(f, sizeof f, "pairs[%d]", i);
    TRY(check_keys(c, p, f, keys));
    node_t *bn = get(c, p, "bodies");
    snprintf(g, sizeof g, "%s.bodies", f);
    if (!bn || bn->type != KL_CFG_SEQ || bn->n != 2)
      return fail(c, bn ? bn : p, g, "must name two bodies, e.g. [ball, ground]");
    int ids[2];
    for (int k = 0; k < 2; ++k) {
      node_t *x = bn->items[k];
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
    node_t *w;
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
    /* the general law: the pair's own constants over the contact section's */
    kl_gen_law L = m->gen;
    const int gen = m->model == KL_MODEL_GEN;
    TRY(gen_keys(c, p, f, gen, &L));
    const int pi = kl_world_add_pair(c->sc->model, ids[0], ids[1], K, cr, D, mu);
    if (pi < 0) return KELVIN_ERR_NOMEM;
    if (gen) kl_world_pair_gen(c->sc->model, pi, L);
  }
  return KELVIN_OK;
}

/* the whole document, then the engine's own checks (kl_world_compile) */
static kelvin_status root(ctx *c)
{
  node_t *r = kl_cfg_root(c->cfg);
  static const char *const keys[] = {"duration", "output_step", "gravity", "contact", "bodies", "pairs", NULL};
  TRY(check_keys(c, r, "", keys));
  kl_world_model *m = c->sc->model;
  node_t *w;
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
  node_t *cn = get(c, r, "contact");
  if (cn) TRY(contact_section(c, cn, m));
  node_t *bn = get(c, r, "bodies");
  if (!bn) return fail(c, r, "bodies", "missing: a scene needs bodies");
  if (bn->type != KL_CFG_SEQ || bn->n == 0)
    return fail(c, bn, "bodies", "must be a non-empty list");
  int i = 0;
  c->bodies = bn;
  for (; i < bn->n; ++i) TRY(body(c, bn->items[i], i));
  node_t *pn = get(c, r, "pairs");
  if (pn) TRY(pairs_section(c, pn));
  char sub[1024];
  if (kl_world_compile(m, sub, sizeof sub) != KELVIN_OK) return fail(c, NULL, "", "%s", sub);
  return KELVIN_OK;
}

/* the document in cfg (loaded or not: st) into out */
static kelvin_status load(kl_cfg *cfg, kelvin_status st, kl_scene *out, char *msg, int cap)
{
  if (st == KELVIN_OK) {
    ctx c = {cfg, out, NULL};
    out->model = kl_world_create();
    st = out->model ? root(&c) : KELVIN_ERR_NOMEM;
  }
  if (msg && cap > 0) {
    if (st == KELVIN_ERR_NOMEM)
      snprintf(msg, (size_t)cap, "%s: out of memory", kl_cfg_file(cfg));
    else if (st != KELVIN_OK)
      snprintf(msg, (size_t)cap, "%s", kl_cfg_errmsg(cfg));
  }
  if (st != KELVIN_OK) kl_scene_free(out);
  return st;
}

kelvin_status kl_scene_load(const char *path, kl_scene *out, char *msg, int cap)
{
  memset(out, 0, sizeof *out);
  if (msg && cap > 0) msg[0] = '\0';
  kl_cfg *cfg = NULL;
  if (kl_cfg_create(&cfg) != KELVIN_OK) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  const kelvin_status st = load(cfg, kl_cfg_load(cfg, path), out, msg, cap);
  kl_cfg_destroy(cfg);
  return st;
}

kelvin_status kl_scene_load_mem(const char *name, const char *text, size_t len, kl_scene *out, char *msg, int cap)
{
  memset(out, 0, sizeof *out);
  if (msg && cap > 0) msg[0] = '\0';
  kl_cfg *cfg = NULL;
  if (kl_cfg_create(&cfg) != KELVIN_OK) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  const kelvin_status st = load(cfg, kl_cfg_load_mem(cfg, name, text, len), out, msg, cap);
  kl_cfg_destroy(cfg);
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
