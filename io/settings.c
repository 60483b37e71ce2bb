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
    if ((L->st = kl_cfg_choice(c, n, k->key, k->names, &v)) == KELVIN_OK) *(int *)(void *)f = v;
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
  kl_robot_free(in->robot);
  memset(in, 0, sizeof *in);
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
    if ((st = kl_read_path_csv(s->path_csv, &out->in.npath, &out->path_p, &out->path_n, msg, cap)) != KELVIN_OK) goto fail;
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
  return KELVIN_OK;
fail:
  kl_inputs_free(out);
  return st;
}
