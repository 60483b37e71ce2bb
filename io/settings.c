/* io/settings.c: the grinding config (YAML, through io/config.h) and the files it names (see settings.h). */
#include "io/settings.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/config.h"
#include "io/mesh_import.h"
#include "io/robot_yaml.h"
#include "io/table.h"
#include "optimiser/schema.h"


typedef struct loader {
  kl_cfg *c;
  const kl_key *keys;
  int nkeys;
  kelvin_status st;
} loader;

/* 1 if key lies under prefix (the prefix empty, or key = "PREFIX.rest"); *rest = what follows */
static int under(const char *key, const char *prefix, const char **rest)
{
  const size_t n = strlen(prefix);
  if (n == 0) {
    *rest = key;
    return 1;
  }
  if (strncmp(key, prefix, n) != 0 || key[n] != '.') return 0;
  *rest = key + n + 1;
  return 1;
}

/* Check the mapping node at prefix ("" for the top level) against the table: every key it holds must
 * be a setting or a section of settings below prefix; then the same for each section it holds. */
static void check_map(loader *L, const kl_cfg_node *node, const char *prefix)
{
  const char *allowed[128];
  int na = 0;
  for (int i = 0; i < L->nkeys && na < 127; ++i) {
    const char *rest;
    if (!under(L->keys[i].key, prefix, &rest)) continue;
    const size_t len = strcspn(rest, ".");
    int seen = 0;
    for (int j = 0; j < na && !seen; ++j) seen = strcspn(allowed[j], ".") == len && strncmp(allowed[j], rest, len) == 0;
    if (!seen) allowed[na++] = rest; /* the name runs to the next '.' or the end */
  }
  /* the names as NUL-terminated words for kl_cfg_keys */
  char words[128][64];
  const char *list[129];
  for (int j = 0; j < na; ++j) {
    snprintf(words[j], sizeof words[j], "%.*s", (int)strcspn(allowed[j], "."), allowed[j]);
    list[j] = words[j];
  }
  list[na] = NULL;
  if ((L->st = kl_cfg_keys(L->c, node, prefix[0] ? prefix : "(top level)", list)) != KELVIN_OK) return;
  for (int j = 0; j < na && L->st == KELVIN_OK; ++j) {
    if (!strchr(allowed[j], '.')) continue; /* a setting, not a section */
    const kl_cfg_node *sub = kl_cfg_get(node, words[j]);
    if (!sub) continue;
    char p[256];
    snprintf(p, sizeof p, "%s%s%s", prefix, prefix[0] ? "." : "", words[j]);
    check_map(L, sub, p);
  }
}

/* The node of a dotted key, or NULL if absent; *section = the mapping that holds it (NULL if absent). */
static const kl_cfg_node *find(const kl_cfg_node *root, const char *key, const kl_cfg_node **section)
{
  const kl_cfg_node *n = root;
  *section = NULL;
  char part[64];
  while (n && *key) {
    const size_t len = strcspn(key, ".");
    snprintf(part, sizeof part, "%.*s", (int)len, key);
    key += len + (key[len] == '.');
    if (!*key) *section = n;
    n = n->type == KL_CFG_MAP ? kl_cfg_get(n, part) : NULL;
  }
  return n;
}

/* a file name relative to the config file's folder into out */
static void relative(const kl_cfg *c, const char *name, char *out, size_t cap)
{
  const char *cfgfile = kl_cfg_file(c);
  const char *slash = strrchr(cfgfile, '/');
  if (name[0] != '/' && slash)
    snprintf(out, cap, "%.*s/%s", (int)(slash - cfgfile), cfgfile, name);
  else
    snprintf(out, cap, "%s", name);
}

/* Read the value of table entry k at node n into the settings. */
static void load_key(loader *L, const kl_key *k, const kl_cfg_node *n, kl_settings *s)
{
  kl_cfg *c = L->c;
  char *f = (char *)s + k->offset, rule[256];
  switch (k->type) {
  case KL_KEY_REAL: {
    double v[3];
    if (k->n > 1 && (n->type != KL_CFG_SEQ || n->n != k->n)) {
      L->st = kl_cfg_fail(c, n, k->key, "must be a list of %d numbers", k->n);
      return;
    }
    for (int j = 0; j < k->n; ++j) {
      const kl_cfg_node *item = k->n > 1 ? n->items[j] : n;
      if ((L->st = kl_cfg_number(c, item, k->key, &v[j])) != KELVIN_OK) return;
      if (!kl_key_number_ok(k, v[j])) {
        L->st = kl_cfg_fail(c, item, k->key, "must be %s, got %g", kl_key_rule(k, rule, sizeof rule), v[j]);
        return;
      }
    }
    memcpy(f, v, (size_t)k->n * sizeof *v);
    return;
  }
  case KL_KEY_INT:
  case KL_KEY_SEED: {
    long v;
    if ((L->st = kl_cfg_long(c, n, k->key, (long)k->lo, (long)k->hi, &v)) != KELVIN_OK) return;
    if (k->type == KL_KEY_INT)
      *(int *)(void *)f = (int)v;
    else
      *(unsigned long *)(void *)f = (unsigned long)v;
    return;
  }
  case KL_KEY_CHOICE: {
    int v;
    if ((L->st = kl_cfg_choice(c, n, k->key, k->names, &v)) == KELVIN_OK) *(int *)(void *)f = k->codes ? k->codes[v] : v;
    return;
  }
  case KL_KEY_TEXT:
    if (n->type != KL_CFG_SCALAR || !n->value[0] || strlen(n->value) >= k->size || strpbrk(n->value, " \t"))
      L->st = kl_cfg_fail(c, n, k->key, "must be one word such as %s", k->sdef);
    else
      snprintf(f, k->size, "%s", n->value);
    return;
  case KL_KEY_FILE:
  case KL_KEY_ROBOT:
    if (n->type != KL_CFG_SCALAR || !n->value[0])
      L->st = kl_cfg_fail(c, n, k->key, "must be %s", k->type == KL_KEY_ROBOT ? "'builtin' or a .yaml/.urdf robot file" : "a file name");
    else if (k->type == KL_KEY_ROBOT && strcmp(n->value, "builtin") == 0)
      snprintf(f, k->size, "builtin");
    else
      relative(c, n->value, f, k->size);
    return;
  }
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
  loader L = {c, NULL, 0, KELVIN_OK};
  L.keys = kl_settings_keys(&L.nkeys);
  const kl_cfg_node *root = kl_cfg_root(c);
  check_map(&L, root, "");
  for (int i = 0; i < L.nkeys && L.st == KELVIN_OK; ++i) {
    const kl_key *k = &L.keys[i];
    const kl_cfg_node *sec;
    const kl_cfg_node *n = find(root, k->key, &sec);
    if (n)
      load_key(&L, k, n, s);
    else if (sec && (k->flags & KL_KEY_REQUIRED))
      L.st = kl_cfg_fail(c, sec, k->key, "must be given with its section (%s)", k->doc);
  }
  if (L.st != KELVIN_OK) snprintf(msg, (size_t)cap, "%s", kl_cfg_errmsg(c));
  kl_cfg_destroy(c);
  return L.st;
}

/* the line of the dotted key (or section) in the loaded tree; 0 if the file does not hold it */
static int key_line(const kl_cfg_node *root, const char *key)
{
  const kl_cfg_node *sec;
  if (!find(root, key, &sec) || !sec) return 0;
  const char *last = strrchr(key, '.');
  last = last ? last + 1 : key;
  for (int i = 0; i < sec->n; ++i)
    if (strcmp(sec->keys[i], last) == 0) return sec->key_lines[i];
  return 0;
}

/* 1 if word is a key of the settings table or a section of keys */
static int is_setting(const char *word)
{
  int nk;
  const kl_key *keys = kl_settings_keys(&nk);
  const size_t n = strlen(word);
  for (int i = 0; i < nk; ++i)
    if (strncmp(keys[i].key, word, n) == 0 && (keys[i].key[n] == '\0' || keys[i].key[n] == '.')) return 1;
  return 0;
}

/* the run of key characters at text into w (trailing dots dropped; empty if longer than cap - 1);
 * returns the run's length in text */
static size_t word_at(const char *text, char *w, size_t cap)
{
  const size_t n = strspn(text, "abcdefghijklmnopqrstuvwxyz0123456789_.");
  size_t m = n;
  while (m > 0 && text[m - 1] == '.') --m;
  if (m >= cap) m = 0;
  memcpy(w, text, m);
  w[m] = '\0';
  return n;
}

int kl_settings_line(const char *path, const char *message)
{
  char first[128], w[128];
  if (!path || !message) return 0;
  const char *after = message + word_at(message, first, sizeof first);
  if (!first[0] || !is_setting(first)) return 0;
  if (after[0] == ':' && isdigit((unsigned char)after[1])) return 0; /* "path.csv:3:", a file named like a key */
  kl_cfg *c = NULL;
  if (kl_cfg_create(&c) != KELVIN_OK) return 0;
  int line = 0;
  if (kl_cfg_load(c, path) == KELVIN_OK) {
    const kl_cfg_node *root = kl_cfg_root(c);
    /* the first word, else another key the message names (a setting left at its default against one
     * given) */
    for (const char *p = message; !line && *p;) {
      const size_t n = word_at(p, w, sizeof w);
      if (n == 0) {
        ++p;
        continue;
      }
      const int start = p == message || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
      if (p == message || (start && strchr(w, '.') && is_setting(w))) line = key_line(root, w);
      p += n;
    }
    /* else the first word's section */
    for (char *dot; !line && (dot = strrchr(first, '.')) != NULL;) {
      *dot = '\0';
      line = key_line(root, first);
    }
  }
  kl_cfg_destroy(c);
  return line;
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
    /* the hint: the scale that brings the mesh within [2 R, KL_PLAUSIBLE_LENGTH], and the file's unit it implies
     * (docs/design.md section 8): a mesh in millimetres given mesh_scale 1000 needs 1e-3, not 1 */
    const double f = kl_unit_factor(D, 2 * R, KL_PLAUSIBLE_LENGTH), scale = f * s->mesh_scale;
    char hint[256] = "is workpiece.mesh_scale right?";
    if (f > 0) {
      const char *unit = kl_length_unit(scale);
      if (unit)
        snprintf(hint, sizeof hint, "is it in %s? set workpiece.mesh_scale: %g", unit, scale);
      else
        snprintf(hint, sizeof hint, "set workpiece.mesh_scale: %g", scale);
    }
    if (D > KL_PLAUSIBLE_LENGTH) {
      snprintf(msg, (size_t)cap, "workpiece.mesh: %s: the mesh is %.3g m across (mesh_scale %g); %s", s->mesh, D,
               s->mesh_scale, hint);
      return KELVIN_ERR_CONFIG;
    }
    if (D < 2 * R) {
      snprintf(msg, (size_t)cap, "workpiece.mesh: %s: the mesh is %.3g m across (mesh_scale %g), smaller than the tool "
               "(radius %g m); %s", s->mesh, D, s->mesh_scale, R, hint);
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
