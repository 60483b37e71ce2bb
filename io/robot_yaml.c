/* io/robot_yaml.c: the robot YAML file (io/robot_yaml.h), read with libyaml's document
 * API. Every key is checked against the schema below (unknown keys are errors), every number is parsed
 * strictly, and every message carries "FILE:LINE: FIELD: ...". Angles are in degrees in the file
 * (keys end in _deg), everything else SI.
 *
 *   robot:
 *     name: TEXT                      optional, default "robot"
 *     convention: dh | mdh            required
 *     base: {position: [x, y, z], rpy_deg: [r, p, y]}             optional, default 0
 *     tool: {position: [3], rpy_deg: [3], mass: M, com: [3], inertia: [6]}  optional, default none
 *     home_deg: [q1, ..., qn]         optional, default 0 clamped into the limits
 *     joints:                         required, 1..12 items
 *       - {name: TEXT, a: M, alpha_deg: DEG, d: M, theta_deg: DEG (default 0), limits_deg: [lo, hi],
 *          speed_deg_s: DEG_S, stiffness: N_M_RAD (default 0: rigid), mass: KG, com: [3], inertia: [6]} */
#include "io/robot_yaml.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/config.h"
#include "kernels/kl_common.h"

#define DEG (KL_PI / 180.0)

typedef struct rd {
  kl_cfg *cfg;
} rd;

typedef const kl_cfg_node node_t;

/* "FILE:LINE: FIELD: message" on the document; returns KELVIN_ERR_CONFIG */
static kelvin_status fail(rd *r, node_t *at, const char *field, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static kelvin_status fail(rd *r, node_t *at, const char *field, const char *fmt, ...)
{
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  return kl_cfg_fail(r->cfg, at, field, "%s", text);
}

/* the scalar text of n, or NULL if n is not a scalar */
static const char *scalar(node_t *n) { return n && n->type == KL_CFG_SCALAR ? n->value : NULL; }

/* a finite number from a scalar node */
static kelvin_status number(rd *r, node_t *n, const char *field, double *out) { return kl_cfg_number(r->cfg, n, field, out); }

/* exactly cnt numbers from a sequence node (cnt < 0: any count up to -cnt, stored in *got) */
static kelvin_status numbers(rd *r, node_t *n, const char *field, int cnt, double *out, int *got)
{
  const int want = cnt < 0 ? -cnt : cnt;
  if (!n || n->type != KL_CFG_SEQ)
    return fail(r, n, field, "must be a list of %s%d numbers, e.g. [%s]", cnt < 0 ? "up to " : "", want,
                want == 2 ? "-170, 170" : want == 3 ? "0, 0, 0.1" : "...");
  const int len = n->n;
  if ((cnt >= 0 && len != cnt) || len > want)
    return fail(r, n, field, "must be a list of %s%d numbers, got %d", cnt < 0 ? "up to " : "", want, len);
  for (int i = 0; i < len; ++i) {
    char f[160];
    snprintf(f, sizeof f, "%s[%d]", field, i);
    kelvin_status st = number(r, n->items[i], f, &out[i]);
    if (st) return st;
  }
  if (got) *got = len;
  return KELVIN_OK;
}

/* check a mapping's keys against names (NULL-terminated): unknown keys are errors (repeated ones are
 * refused by the YAML layer) */
static kelvin_status keys(rd *r, node_t *m, const char *field, const char *const *names)
{
  return kl_cfg_keys(r->cfg, m, field, names);
}

/* the value of key in mapping m, or NULL */
static node_t *get(rd *r, node_t *m, const char *key)
{
  (void)r;
  return kl_cfg_get(m, key);
}

/* a required value: error naming the mapping's line if absent */
static kelvin_status need(rd *r, node_t *m, const char *field, const char *key, node_t **out)
{
  *out = get(r, m, key);
  if (!*out) return fail(r, m, field, "missing '%s'", key);
  return KELVIN_OK;
}

/* mass (kg, > 0 unless allow_zero) with the engine's check */
static kelvin_status mass(rd *r, node_t *n, const char *field, int allow_zero, double *m)
{
  kelvin_status st = number(r, n, field, m);
  if (st) return st;
  char sub[300];
  if (kl_robot_check_mass(*m, allow_zero, sub, sizeof sub)) return fail(r, n, field, "%s", sub);
  return KELVIN_OK;
}

/* inertia [xx, yy, zz, xy, xz, yz] about the centre of mass, with the engine's check */
static kelvin_status inertia(rd *r, node_t *n, const char *field, double I6[6])
{
  kelvin_status st = numbers(r, n, field, 6, I6, NULL);
  if (st) return st;
  char sub[400];
  if (kl_robot_check_inertia(I6, sub, sizeof sub)) return fail(r, n, field, "%s", sub);
  return KELVIN_OK;
}

/* one joints[] item */
static kelvin_status joint(rd *r, node_t *n, int i, kl_robot_joint_spec *j)
{
  static const char *const jk[] = {"name", "a", "alpha_deg", "d", "theta_deg", "limits_deg", "speed_deg_s",
                                   "stiffness", "mass", "com", "inertia", NULL};
  char f[64], g[128];
  snprintf(f, sizeof f, "robot.joints[%d]", i);
  kelvin_status st = keys(r, n, f, jk);
  if (st) return st;
  node_t *v;
  if ((v = get(r, n, "name"))) {
    const char *s = scalar(v);
    snprintf(g, sizeof g, "%s.name", f);
    if (!s || strlen(s) >= sizeof j->name)
      return fail(r, v, g, "must be a word of at most %d characters", (int)sizeof j->name - 1);
    snprintf(j->name, sizeof j->name, "%s", s);
  } else {
    snprintf(j->name, sizeof j->name, "j%d", i + 1);
  }
  static const char *const req[] = {"a", "alpha_deg", "d", "limits_deg", "speed_deg_s", "mass", "com", "inertia"};
  for (size_t k = 0; k < sizeof req / sizeof req[0]; ++k)
    if ((st = need(r, n, f, req[k], &v))) return st;
  double al = 0, th = 0, lim[2], sp;
  snprintf(g, sizeof g, "%s.a", f);
  if ((st = number(r, get(r, n, "a"), g, &j->a))) return st;
  snprintf(g, sizeof g, "%s.alpha_deg", f);
  if ((st = number(r, get(r, n, "alpha_deg"), g, &al))) return st;
  snprintf(g, sizeof g, "%s.d", f);
  if ((st = number(r, get(r, n, "d"), g, &j->d))) return st;
  snprintf(g, sizeof g, "%s.theta_deg", f);
  if ((v = get(r, n, "theta_deg")) && (st = number(r, v, g, &th))) return st;
  j->alpha = al / 180.0 * KL_PI; /* al/180 first: 90 deg gives exactly the double nearest pi/2 */
  j->theta = th / 180.0 * KL_PI;
  snprintf(g, sizeof g, "%s.limits_deg", f);
  v = get(r, n, "limits_deg");
  if ((st = numbers(r, v, g, 2, lim, NULL))) return st;
  if (!(lim[0] < lim[1])) return fail(r, v, g, "need lower < upper, got [%g, %g]", lim[0], lim[1]);
  j->lo = lim[0] / 180.0 * KL_PI, j->hi = lim[1] / 180.0 * KL_PI;
  snprintf(g, sizeof g, "%s.speed_deg_s", f);
  v = get(r, n, "speed_deg_s");
  if ((st = number(r, v, g, &sp))) return st;
  if (!(sp > 0)) return fail(r, v, g, "must be > 0 deg/s, got %g", sp);
  j->vmax = sp / 180.0 * KL_PI;
  snprintf(g, sizeof g, "%s.stiffness", f);
  if ((v = get(r, n, "stiffness"))) {
    if ((st = number(r, v, g, &j->stiffness))) return st;
    if (!(j->stiffness >= 0)) return fail(r, v, g, "must be >= 0 N m/rad (0: rigid), got %g", j->stiffness);
  }
  snprintf(g, sizeof g, "%s.mass", f);
  if ((st = mass(r, get(r, n, "mass"), g, 0, &j->mass))) return st;
  snprintf(g, sizeof g, "%s.com", f);
  if ((st = numbers(r, get(r, n, "com"), g, 3, j->com, NULL))) return st;
  snprintf(g, sizeof g, "%s.inertia", f);
  return inertia(r, get(r, n, "inertia"), g, j->inertia);
}

/* the whole document into s */
static kelvin_status robot(rd *r, node_t *root, kl_robot_spec *s)
{
  static const char *const top[] = {"robot", NULL};
  static const char *const rk[] = {"name", "convention", "base", "tool", "home_deg", "joints", NULL};
  static const char *const bk[] = {"position", "rpy_deg", NULL};
  static const char *const tk[] = {"position", "rpy_deg", "mass", "com", "inertia", NULL};
  kelvin_status st;
  node_t *rb, *v, *js;
  if ((st = keys(r, root, "(top level)", top)) || (st = need(r, root, "(top level)", "robot", &rb))) return st;
  if ((st = keys(r, rb, "robot", rk))) return st;
  if ((v = get(r, rb, "name"))) {
    if (!scalar(v)) return fail(r, v, "robot.name", "must be text");
    snprintf(s->name, sizeof s->name, "%s", scalar(v));
  }
  if ((st = need(r, rb, "robot", "convention", &v))) return st;
  const char *cv = scalar(v);
  if (cv && strcmp(cv, "dh") == 0)
    s->conv = KL_ROBOT_DH;
  else if (cv && strcmp(cv, "mdh") == 0)
    s->conv = KL_ROBOT_MDH;
  else
    return fail(r, v, "robot.convention", "must be dh (standard Denavit-Hartenberg) or mdh (modified, Craig), got '%s'",
                cv ? cv : "(not a word)");
  double rpy[3];
  if ((v = get(r, rb, "base"))) {
    if ((st = keys(r, v, "robot.base", bk))) return st;
    node_t *w;
    if ((w = get(r, v, "position")) && (st = numbers(r, w, "robot.base.position", 3, s->base_pos, NULL))) return st;
    if ((w = get(r, v, "rpy_deg"))) {
      if ((st = numbers(r, w, "robot.base.rpy_deg", 3, rpy, NULL))) return st;
      for (int i = 0; i < 3; ++i) s->base_rpy[i] = rpy[i] / 180.0 * KL_PI;
    }
  }
  if ((v = get(r, rb, "tool"))) {
    if ((st = keys(r, v, "robot.tool", tk))) return st;
    node_t *w;
    if ((w = get(r, v, "position")) && (st = numbers(r, w, "robot.tool.position", 3, s->tool_xyz, NULL))) return st;
    if ((w = get(r, v, "rpy_deg"))) {
      if ((st = numbers(r, w, "robot.tool.rpy_deg", 3, rpy, NULL))) return st;
      for (int i = 0; i < 3; ++i) s->tool_rpy[i] = rpy[i] / 180.0 * KL_PI;
    }
    if ((w = get(r, v, "mass")) && (st = mass(r, w, "robot.tool.mass", 1, &s->tool_mass))) return st;
    if ((w = get(r, v, "com")) && (st = numbers(r, w, "robot.tool.com", 3, s->tool_com, NULL))) return st;
    if ((w = get(r, v, "inertia")) && (st = inertia(r, w, "robot.tool.inertia", s->tool_inertia))) return st;
  }
  if ((st = need(r, rb, "robot", "joints", &js))) return st;
  if (js->type != KL_CFG_SEQ) return fail(r, js, "robot.joints", "must be a list of joints (lines starting '- ')");
  const int nj = js->n;
  if (nj < 1 || nj > KL_ROBOT_MAXDOF) return fail(r, js, "robot.joints", "need 1 to %d joints, got %d", KL_ROBOT_MAXDOF, nj);
  s->ndof = nj;
  for (int i = 0; i < nj; ++i) {
    if ((st = joint(r, js->items[i], i, &s->joint[i]))) return st;
    /* two joints of one name: messages and outputs that name a joint would be ambiguous (docs/design.md 8.1) */
    for (int k = 0; k < i; ++k)
      if (strcmp(s->joint[k].name, s->joint[i].name) == 0) {
        node_t *here = get(r, js->items[i], "name"), *there = get(r, js->items[k], "name");
        char g[64];
        snprintf(g, sizeof g, "robot.joints[%d].name", i);
        return fail(r, here ? here : js->items[i], g, "duplicate joint name '%s' (robot.joints[%d], line %d, has it already)",
                    s->joint[i].name, k, there ? there->line : js->items[k]->line);
      }
  }
  if ((v = get(r, rb, "home_deg"))) {
    double h[KL_ROBOT_MAXDOF];
    int got = 0;
    if ((st = numbers(r, v, "robot.home_deg", -KL_ROBOT_MAXDOF, h, &got))) return st;
    if (got != nj) return fail(r, v, "robot.home_deg", "must have one angle per joint (%d), got %d", nj, got);
    for (int i = 0; i < nj; ++i) {
      s->home[i] = h[i] / 180.0 * KL_PI;
      if (!(s->home[i] >= s->joint[i].lo && s->home[i] <= s->joint[i].hi))
        return fail(r, v, "robot.home_deg", "joint %d: %g deg is outside its limits [%g, %g] deg", i + 1, h[i],
                    s->joint[i].lo / DEG, s->joint[i].hi / DEG);
    }
    s->has_home = 1;
  }
  return KELVIN_OK;
}

/* the document in cfg (loaded or not: st) into a spec, then the robot */
static kelvin_status load(kl_cfg *cfg, kelvin_status st, kl_robot **out, char *msg, int cap)
{
  kl_robot_spec *s = NULL;
  if (st == KELVIN_OK) {
    s = calloc(1, sizeof *s);
    if (!s) st = KELVIN_ERR_NOMEM;
  }
  if (st == KELVIN_OK) {
    rd r = {cfg};
    st = robot(&r, kl_cfg_root(cfg), s);
  }
  if (msg && cap > 0) {
    if (st == KELVIN_ERR_NOMEM)
      snprintf(msg, (size_t)cap, "%s: out of memory", kl_cfg_file(cfg));
    else if (st != KELVIN_OK)
      snprintf(msg, (size_t)cap, "%s", kl_cfg_errmsg(cfg));
  }
  if (st == KELVIN_OK) {
    char sub[400];
    st = kl_robot_create(s, out, sub, sizeof sub);
    if (st != KELVIN_OK) {
      if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: %s", kl_cfg_file(cfg), sub);
      if (st != KELVIN_ERR_NOMEM) st = KELVIN_ERR_CONFIG;
    }
  }
  free(s);
  return st;
}

kelvin_status kl_robot_load_yaml(const char *path, kl_robot **out, char *msg, int cap)
{
  if (out) *out = NULL;
  if (msg && cap > 0) msg[0] = '\0';
  if (!path || !out) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "kl_robot_load_yaml: path and out must not be NULL");
    return KELVIN_ERR_ARG;
  }
  kl_cfg *cfg = NULL;
  if (kl_cfg_create(&cfg) != KELVIN_OK) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  const kelvin_status st = load(cfg, kl_cfg_load(cfg, path), out, msg, cap);
  kl_cfg_destroy(cfg);
  return st;
}

kelvin_status kl_robot_load_yaml_mem(const char *name, const char *text, size_t len, kl_robot **out, char *msg, int cap)
{
  *out = NULL;
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

/* the file name ends in suffix (case-sensitive) */
static int ends_with(const char *s, const char *suffix)
{
  const size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* choose the reader by the file name's extension */
kelvin_status kl_robot_load(const char *path, kl_robot **out, char *msg, int cap)
{
  if (out) *out = NULL;
  if (!path || !out) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "kl_robot_load: path and out must not be NULL");
    return KELVIN_ERR_ARG;
  }
  if (ends_with(path, ".yaml") || ends_with(path, ".yml")) return kl_robot_load_yaml(path, out, msg, cap);
  if (ends_with(path, ".urdf")) return kl_robot_load_urdf(path, out, msg, cap);
  if (msg && cap > 0)
    snprintf(msg, (size_t)cap, "%s: unknown robot file type (expected .yaml or .yml for DH parameters, or .urdf)", path);
  return KELVIN_ERR_CONFIG;
}
