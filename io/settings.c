/* io/settings.c: the grinding config (YAML, through io/config.h) and the files it names (see settings.h). */
#include "io/settings.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/config.h"
#include "io/mesh_import.h"
#include "io/robot_yaml.h"
#include "io/table.h"


static const char *const surface_names[] = {"plane", "cylinder", "sphere", "saddle", "mesh", NULL};
static const char *const model_names[] = {"kv", "hc", NULL};
static const char *const law_names[] = {"hunt-crossley", "lankarani-nikravesh", "flores", "gonthier", "exact", NULL};
static const char *const measure_names[] = {"instantaneous", "averaged", NULL};

typedef struct loader {
  kl_cfg *c;
  kelvin_status st;
} loader;

/* number field sec.key into *out if present, checked against (lo, hi] style bounds by the caller */
static void num(loader *L, const kl_cfg_node *sec, const char *secname, const char *key, double *out, double lo,
                double hi, const char *rule)
{
  if (L->st != KELVIN_OK || !sec) return;
  const kl_cfg_node *n = kl_cfg_get(sec, key);
  if (!n) return;
  char field[128];
  snprintf(field, sizeof field, "%s.%s", secname, key);
  double v;
  if ((L->st = kl_cfg_number(L->c, n, field, &v)) != KELVIN_OK) return;
  if (!(v >= lo && v <= hi)) {
    L->st = kl_cfg_fail(L->c, n, field, "must be %s, got %g", rule, v);
    return;
  }
  *out = v;
}

static void integer(loader *L, const kl_cfg_node *sec, const char *secname, const char *key, int *out, long lo,
                    long hi)
{
  if (L->st != KELVIN_OK || !sec) return;
  const kl_cfg_node *n = kl_cfg_get(sec, key);
  if (!n) return;
  char field[128];
  snprintf(field, sizeof field, "%s.%s", secname, key);
  long v;
  if ((L->st = kl_cfg_long(L->c, n, field, lo, hi, &v)) != KELVIN_OK) return;
  *out = (int)v;
}

static void choice(loader *L, const kl_cfg_node *sec, const char *secname, const char *key, const char *const *names,
                   int *out)
{
  if (L->st != KELVIN_OK || !sec) return;
  const kl_cfg_node *n = kl_cfg_get(sec, key);
  if (!n) return;
  char field[128];
  snprintf(field, sizeof field, "%s.%s", secname, key);
  L->st = kl_cfg_choice(L->c, n, field, names, out);
}

/* a file name relative to the config file's folder */
static void file(loader *L, const kl_cfg_node *sec, const char *secname, const char *key, char *out, size_t cap)
{
  if (L->st != KELVIN_OK || !sec) return;
  const kl_cfg_node *n = kl_cfg_get(sec, key);
  if (!n) return;
  char field[128];
  snprintf(field, sizeof field, "%s.%s", secname, key);
  if (n->type != KL_CFG_SCALAR || !n->value[0]) {
    L->st = kl_cfg_fail(L->c, n, field, "must be a file name");
    return;
  }
  const char *cfgfile = kl_cfg_file(L->c);
  const char *slash = strrchr(cfgfile, '/');
  if (n->value[0] != '/' && slash)
    snprintf(out, cap, "%.*s/%s", (int)(slash - cfgfile), cfgfile, n->value);
  else
    snprintf(out, cap, "%s", n->value);
}

/* a list of exactly n numbers */
static void vec(loader *L, const kl_cfg_node *sec, const char *secname, const char *key, double *out, int n)
{
  if (L->st != KELVIN_OK || !sec) return;
  const kl_cfg_node *v = kl_cfg_get(sec, key);
  if (!v) return;
  char field[128];
  snprintf(field, sizeof field, "%s.%s", secname, key);
  if (v->type != KL_CFG_SEQ || v->n != n) {
    L->st = kl_cfg_fail(L->c, v, field, "must be a list of %d numbers", n);
    return;
  }
  for (int i = 0; i < n && L->st == KELVIN_OK; ++i) L->st = kl_cfg_number(L->c, v->items[i], field, &out[i]);
}

static const kl_cfg_node *section(loader *L, const kl_cfg_node *root, const char *name, const char *const *keys)
{
  if (L->st != KELVIN_OK) return NULL;
  const kl_cfg_node *s = kl_cfg_get(root, name);
  if (!s) return NULL;
  L->st = kl_cfg_keys(L->c, s, name, keys);
  return L->st == KELVIN_OK ? s : NULL;
}

kelvin_status kl_settings_load(kl_settings *s, const char *path, char *msg, int cap)
{
  kl_cfg *c = NULL;
  kelvin_status st = kl_cfg_create(&c);
  if (st != KELVIN_OK) {
    snprintf(msg, (size_t)cap, "out of memory");
    return st;
  }
  st = kl_cfg_load(c, path);
  if (st != KELVIN_OK) {
    snprintf(msg, (size_t)cap, "%s", kl_cfg_errmsg(c));
    kl_cfg_destroy(c);
    return st;
  }
  loader L = {c, KELVIN_OK};
  const kl_cfg_node *root = kl_cfg_root(c);
  static const char *const top[] = {"workpiece", "path",   "tool",      "holder",    "contact", "target",
                                    "offset",    "speed",  "objective", "optimiser", "verify",  "robot", NULL};
  L.st = kl_cfg_keys(c, root, "(top level)", top);
  static const char *const kw[] = {"surface", "radius", "mesh", "mesh_scale", "extent", "resolution", "E", "nu", "bead",
                                   "tilt_deg", "shift", "roughness", NULL};
  const kl_cfg_node *w = section(&L, root, "workpiece", kw);
  choice(&L, w, "workpiece", "surface", surface_names, &s->surface);
  num(&L, w, "workpiece", "radius", &s->radius, 1e-3, 1e3, "in [1e-3, 1e3] m");
  file(&L, w, "workpiece", "mesh", s->mesh, sizeof s->mesh);
  num(&L, w, "workpiece", "mesh_scale", &s->mesh_scale, 1e-9, 1e9, "> 0");
  vec(&L, w, "workpiece", "extent", s->extent, 2);
  num(&L, w, "workpiece", "resolution", &s->resolution, 1e-6, 1e-2, "in [1e-6, 1e-2] m");
  num(&L, w, "workpiece", "E", &s->work_E, 1e6, 1e13, "in [1e6, 1e13] Pa");
  num(&L, w, "workpiece", "nu", &s->work_nu, -0.99, 0.4999, "in (-1, 0.5)");
  num(&L, w, "workpiece", "tilt_deg", &s->tilt_deg, -45, 45, "in [-45, 45] degrees");
  vec(&L, w, "workpiece", "shift", s->shift, 3);
  static const char *const kb[] = {"height", "width", "x", NULL};
  const kl_cfg_node *b = w ? kl_cfg_get(w, "bead") : NULL;
  if (b && L.st == KELVIN_OK) L.st = kl_cfg_keys(c, b, "workpiece.bead", kb);
  num(&L, b, "workpiece.bead", "height", &s->bead_h, -0.01, 0.01, "in [-0.01, 0.01] m");
  num(&L, b, "workpiece.bead", "width", &s->bead_w, 1e-5, 0.1, "in [1e-5, 0.1] m");
  num(&L, b, "workpiece.bead", "x", &s->bead_x, -10, 10, "in [-10, 10] m");
  static const char *const kr[] = {"amplitude", "wavelength", "seed", NULL};
  const kl_cfg_node *r = w ? kl_cfg_get(w, "roughness") : NULL;
  if (r && L.st == KELVIN_OK) L.st = kl_cfg_keys(c, r, "workpiece.roughness", kr);
  num(&L, r, "workpiece.roughness", "amplitude", &s->rough_a, 0, 1e-3, "in [0, 1e-3] m");
  num(&L, r, "workpiece.roughness", "wavelength", &s->rough_l, 1e-5, 1, "in [1e-5, 1] m");
  int seed = (int)s->rough_seed;
  integer(&L, r, "workpiece.roughness", "seed", &seed, 0, 1000000000L);
  s->rough_seed = (unsigned long)seed;
  static const char *const kp[] = {"csv", "start", "end", "y", "samples", NULL};
  const kl_cfg_node *p = section(&L, root, "path", kp);
  file(&L, p, "path", "csv", s->path_csv, sizeof s->path_csv);
  num(&L, p, "path", "start", &s->path_x0, -10, 10, "in [-10, 10] m");
  num(&L, p, "path", "end", &s->path_x1, -10, 10, "in [-10, 10] m");
  num(&L, p, "path", "y", &s->path_y, -10, 10, "in [-10, 10] m");
  integer(&L, p, "path", "samples", &s->ns, 8, KL_PATH_MAX);
  static const char *const kt[] = {"radius", "E", "nu", "mass", "weight", NULL};
  const kl_cfg_node *t = section(&L, root, "tool", kt);
  num(&L, t, "tool", "radius", &s->tool_R, 1e-4, 0.2, "in [1e-4, 0.2] m");
  num(&L, t, "tool", "E", &s->tool_E, 1e6, 1e13, "in [1e6, 1e13] Pa");
  num(&L, t, "tool", "nu", &s->tool_nu, -0.99, 0.4999, "in (-1, 0.5)");
  num(&L, t, "tool", "mass", &s->tool_mass, 1e-3, 1e4, "in [1e-3, 1e4] kg");
  num(&L, t, "tool", "weight", &s->tool_weight, -1e5, 1e5, "in [-1e5, 1e5] N");
  static const char *const kh[] = {"stiffness", "damping", NULL};
  const kl_cfg_node *h = section(&L, root, "holder", kh);
  num(&L, h, "holder", "stiffness", &s->holder_K, 1.0, 1e9, "in [1, 1e9] N/m");
  num(&L, h, "holder", "damping", &s->holder_D, 0.0, 1e7, "in [0, 1e7] N s/m");
  static const char *const kc[] = {"model", "law", "cr", "approach_speed", "stiffness", NULL};
  const kl_cfg_node *ct = section(&L, root, "contact", kc);
  int model = s->model == KL_MODEL_KV ? 0 : 1;
  choice(&L, ct, "contact", "model", model_names, &model);
  s->model = model == 0 ? KL_MODEL_KV : KL_MODEL_HC;
  choice(&L, ct, "contact", "law", law_names, &s->law);
  num(&L, ct, "contact", "cr", &s->cr, 1e-6, 1.0, "in (0, 1]");
  num(&L, ct, "contact", "approach_speed", &s->approach_speed, 1e-6, 100, "in [1e-6, 100] m/s");
  num(&L, ct, "contact", "stiffness", &s->contact_K, 1.0, 1e16, "> 0");
  static const char *const kg[] = {"force", "csv", "max_force", "measure", NULL};
  const kl_cfg_node *tg = section(&L, root, "target", kg);
  num(&L, tg, "target", "force", &s->target_F, 1e-6, 1e6, "> 0 N");
  file(&L, tg, "target", "csv", s->target_csv, sizeof s->target_csv);
  num(&L, tg, "target", "max_force", &s->max_F, 1e-6, 1e7, "> 0 N");
  choice(&L, tg, "target", "measure", measure_names, &s->averaged);
  static const char *const ko[] = {"min", "max", "control_points", NULL};
  const kl_cfg_node *o = section(&L, root, "offset", ko);
  num(&L, o, "offset", "min", &s->o_min, -1, 1, "in [-1, 1] m");
  num(&L, o, "offset", "max", &s->o_max, -1, 1, "in [-1, 1] m");
  integer(&L, o, "offset", "control_points", &s->n_o, 4, 60);
  static const char *const ks[] = {"min", "max", "initial", "control_points", "max_accel", NULL};
  const kl_cfg_node *sp = section(&L, root, "speed", ks);
  num(&L, sp, "speed", "min", &s->v_min, 1e-6, 100, "in [1e-6, 100] m/s");
  num(&L, sp, "speed", "max", &s->v_max, 1e-6, 100, "in [1e-6, 100] m/s");
  num(&L, sp, "speed", "initial", &s->v_init, 1e-6, 100, "in [1e-6, 100] m/s");
  integer(&L, sp, "speed", "control_points", &s->n_v, 4, 60);
  num(&L, sp, "speed", "max_accel", &s->a_max, 1e-6, 1e4, "> 0 m/s^2");
  static const char *const kw2[] = {"rms", "loss", "over", "time", "roughness", "accel", NULL};
  const kl_cfg_node *ob = section(&L, root, "objective", kw2);
  num(&L, ob, "objective", "rms", &s->w_rms, 0, 1e9, ">= 0");
  num(&L, ob, "objective", "loss", &s->w_loss, 0, 1e9, ">= 0");
  num(&L, ob, "objective", "over", &s->w_over, 0, 1e9, ">= 0");
  num(&L, ob, "objective", "time", &s->w_time, 0, 1e9, ">= 0");
  num(&L, ob, "objective", "roughness", &s->w_rough, 0, 1e9, ">= 0");
  num(&L, ob, "objective", "accel", &s->w_acc, 0, 1e9, ">= 0");
  static const char *const kn[] = {"screening", "screen_offset", "keep", "algorithm", "maxeval", "maxtime", "budget",
                                   "xtol_rel", "ftol_rel", "fd_step", "force_tol", "seed", NULL};
  const kl_cfg_node *op = section(&L, root, "optimiser", kn);
  integer(&L, op, "optimiser", "screening", &s->screening, 0, 1 << 22);
  num(&L, op, "optimiser", "screen_offset", &s->screen_o, 0, 0.1, "in [0, 0.1] m");
  integer(&L, op, "optimiser", "keep", &s->keep, 1, 64);
  if (op && L.st == KELVIN_OK) {
    const kl_cfg_node *a = kl_cfg_get(op, "algorithm");
    if (a) {
      if (a->type != KL_CFG_SCALAR || strlen(a->value) >= sizeof s->algorithm)
        L.st = kl_cfg_fail(c, a, "optimiser.algorithm", "must be an NLopt algorithm name such as LN_BOBYQA");
      else
        snprintf(s->algorithm, sizeof s->algorithm, "%s", a->value);
    }
  }
  integer(&L, op, "optimiser", "maxeval", &s->maxeval, 1, 100000000L);
  num(&L, op, "optimiser", "maxtime", &s->maxtime, 0.01, 1e6, "in [0.01, 1e6] s");
  num(&L, op, "optimiser", "budget", &s->budget, 0, 1e7, "in [0, 1e7] s");
  num(&L, op, "optimiser", "xtol_rel", &s->xtol_rel, 0, 1, "in [0, 1]");
  num(&L, op, "optimiser", "ftol_rel", &s->ftol_rel, 0, 1, "in [0, 1]");
  num(&L, op, "optimiser", "fd_step", &s->fd_step, 1e-10, 0.1, "in [1e-10, 0.1]");
  num(&L, op, "optimiser", "force_tol", &s->ftol, 1e-8, 0.1, "in [1e-8, 0.1]");
  int sd = (int)s->seed;
  integer(&L, op, "optimiser", "seed", &sd, 0, 1000000000L);
  s->seed = (unsigned long)sd;
  static const char *const kv[] = {"count", "tolerance", NULL};
  const kl_cfg_node *vf = section(&L, root, "verify", kv);
  integer(&L, vf, "verify", "count", &s->verify, 0, 64);
  num(&L, vf, "verify", "tolerance", &s->agree_tol, 0, 10, "in [0, 10]");
  static const char *const krb[] = {"model", "base", "rpy", NULL};
  const kl_cfg_node *rb = section(&L, root, "robot", krb);
  if (rb && L.st == KELVIN_OK) {
    const kl_cfg_node *m = kl_cfg_get(rb, "model");
    if (!m || m->type != KL_CFG_SCALAR || !m->value[0])
      L.st = kl_cfg_fail(c, m ? m : rb, "robot.model", "must be 'builtin' or a .yaml/.urdf robot file");
    else if (strcmp(m->value, "builtin") == 0)
      snprintf(s->robot, sizeof s->robot, "builtin");
    else
      file(&L, rb, "robot", "model", s->robot, sizeof s->robot);
  }
  vec(&L, rb, "robot", "base", s->robot_base, 3);
  vec(&L, rb, "robot", "rpy", s->robot_rpy, 3);
  if (L.st != KELVIN_OK) snprintf(msg, (size_t)cap, "%s", kl_cfg_errmsg(c));
  kl_cfg_destroy(c);
  return L.st;
}

//------------------------------------------------------------------------------------------------------
// the files the settings name

void kl_inputs_free(kl_inputs *in)
{
  if (!in) return;
  kl_mesh_free(in->mesh);
  free(in->path_p);
  free(in->path_n);
  free(in->target_s);
  free(in->target_F);
  free(in->path_line);
  kl_robot_free(in->robot);
  memset(in, 0, sizeof *in);
}

/* unit and sanity checks of the inputs against each other (see settings.h) */
static kelvin_status sanity(const kl_settings *s, const kl_inputs *in, char *msg, int cap)
{
  const double R = s->tool_R;
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, D = 0;
  if (in->mesh) {
    kl_mesh_bounds(in->mesh, lo, hi);
    D = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) + (hi[2] - lo[2]) * (hi[2] - lo[2]));
    if (D > 10.0) {
      snprintf(msg, (size_t)cap, "workpiece.mesh: %s: the mesh is %.3g m across (mesh_scale %g); is it in millimetres? set "
               "workpiece.mesh_scale: %g", s->mesh, D, s->mesh_scale, s->mesh_scale * 1e-3);
      return KELVIN_ERR_CONFIG;
    }
    if (D < 2 * R) {
      snprintf(msg, (size_t)cap, "workpiece.mesh: %s: the mesh is %.3g m across (mesh_scale %g), smaller than the tool "
               "(radius %g m); is workpiece.mesh_scale right?", s->mesh, D, s->mesh_scale, R);
      return KELVIN_ERR_CONFIG;
    }
  }
  const int n = in->in.npath;
  double L = s->path_x1 - s->path_x0; /* the plane-cut path; a CSV path's polyline length below */
  if (n >= 2) {
    L = 0;
    for (int k = 1; k < n; ++k) {
      const double *a = in->path_p + 3 * (k - 1), *b = in->path_p + 3 * k;
      L += sqrt((b[0] - a[0]) * (b[0] - a[0]) + (b[1] - a[1]) * (b[1] - a[1]) + (b[2] - a[2]) * (b[2] - a[2]));
    }
  }
  if (in->mesh && n >= 2) {
    const double margin = fmax(5 * R, 1e-3);
    for (int k = 0; k < n; ++k) {
      const double *p = in->path_p + 3 * k;
      double off = 0;
      for (int i = 0; i < 3; ++i) off = fmax(off, fmax(lo[i] - margin - p[i], p[i] - hi[i] - margin));
      if (off > 0) {
        snprintf(msg, (size_t)cap, "%s:%ld: the path point (%.6g, %.6g, %.6g) m is %.3g m outside the mesh's bounds "
                 "[%.4g, %.4g] x [%.4g, %.4g] x [%.4g, %.4g] m; are the path and the mesh in the same units "
                 "(workpiece.mesh_scale)?", s->path_csv, in->path_line ? in->path_line[k] : 0L, p[0], p[1], p[2], off,
                 lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]);
        return KELVIN_ERR_CONFIG;
      }
    }
    /* normals: a short ray from just outside the surface (p + R n) back along -n meets the surface near p;
     * the face it meets has an outward normal along n unless the path's normals point into the part */
    int checked = 0, inverted = 0, first = -1;
    const int step = n > 64 ? n / 64 : 1;
    for (int k = 0; k < n; k += step) {
      const double *p = in->path_p + 3 * k, *nv = in->path_n + 3 * k;
      const double o[3] = {p[0] + R * nv[0], p[1] + R * nv[1], p[2] + R * nv[2]}, d[3] = {-nv[0], -nv[1], -nv[2]};
      double t, fn[3];
      if (!kl_mesh_raycast(in->mesh, o, d, 0.0, 2 * R, &t, fn)) continue;
      const double c = fn[0] * nv[0] + fn[1] * nv[1] + fn[2] * nv[2];
      if (fabs(c) < 0.5) continue;
      ++checked;
      if (c < 0) {
        ++inverted;
        if (first < 0) first = k;
      }
    }
    if (checked >= 3 && inverted * 10 >= checked * 9) {
      snprintf(msg, (size_t)cap, "%s:%ld: the path normals point into the part (at %d of %d points checked the mesh's "
               "outward face normal is opposite to nx,ny,nz); flip the signs of nx, ny, nz", s->path_csv,
               in->path_line ? in->path_line[first] : 0L, inverted, checked);
      return KELVIN_ERR_CONFIG;
    }
  }
  if (in->in.ntarget > 0 && L > 0) {
    const double smax = in->target_s[in->in.ntarget - 1];
    if (smax > 1.5 * L + 1e-9) {
      snprintf(msg, (size_t)cap, "%s: s runs to %.6g m but the path is only %.6g m long%s", s->target_csv, smax, L,
               smax > 100 * L ? "; is s in millimetres? the file is read in metres" : "");
      return KELVIN_ERR_CONFIG;
    }
  }
  return KELVIN_OK;
}

kelvin_status kl_inputs_load(const kl_settings *s, kl_inputs *out, char *msg, int cap)
{
  memset(out, 0, sizeof *out);
  kelvin_status st = KELVIN_OK;
  if (s->surface == KL_SURF_MESH && s->mesh[0]) {
    st = kl_mesh_load(s->mesh, s->mesh_scale, &out->mesh, msg, cap);
    if (st != KELVIN_OK) {
      st = st == KELVIN_ERR_NOMEM ? st : KELVIN_ERR_CONFIG;
      goto fail;
    }
    out->in.mesh = out->mesh;
  }
  if (s->path_csv[0]) {
    if ((st = kl_read_path_csv(s->path_csv, 1e-3, &out->in.npath, &out->path_p, &out->path_n, &out->path_line, msg, cap)) != KELVIN_OK) goto fail;
    out->in.path_p = out->path_p;
    out->in.path_n = out->path_n;
  }
  if (s->target_csv[0]) {
    if ((st = kl_read_target_csv(s->target_csv, &out->in.ntarget, &out->target_s, &out->target_F, msg, cap)) !=
        KELVIN_OK)
      goto fail;
    out->in.target_s = out->target_s;
    out->in.target_F = out->target_F;
  }
  if (s->robot[0]) {
    char m2[1024];
    if (strcmp(s->robot, "builtin") == 0) {
      if ((st = kl_robot_builtin_er10(&out->robot)) != KELVIN_OK) {
        snprintf(msg, (size_t)cap, "robot.model: out of memory");
        goto fail;
      }
    } else if ((st = kl_robot_load(s->robot, &out->robot, m2, sizeof m2)) != KELVIN_OK) {
      snprintf(msg, (size_t)cap, "robot.model: %s", m2);
      st = KELVIN_ERR_CONFIG;
      goto fail;
    }
    out->in.robot = out->robot;
  }
  if ((st = sanity(s, out, msg, cap)) != KELVIN_OK) goto fail;
  return KELVIN_OK;
fail:
  kl_inputs_free(out);
  return st;
}
