/* io/config.c: YAML (libyaml's document API) into a kl_cfg_node tree with line numbers, and
 * typed access with messages that name file, line and field. */
#include "io/config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#define MSG 4096

/* Every node and string lives in one arena of malloc'd blocks, freed together. */
typedef struct block {
  struct block *next;
  size_t used, cap;
  char data[];
} block;

struct kl_cfg {
  char file[1024];
  kl_cfg_node *root;
  block *mem;
  char msg[MSG];
};

/* n zeroed bytes from the arena (8-byte aligned); NULL when out of memory. */
static void *arena(kl_cfg *c, size_t n)
{
  n = (n + 7) / 8 * 8;
  if (!c->mem || c->mem->used + n > c->mem->cap) {
    const size_t cap = n > 65536 ? n : 65536;
    block *b = malloc(sizeof(block) + cap);
    if (!b) return NULL;
    b->next = c->mem;
    b->used = 0;
    b->cap = cap;
    c->mem = b;
  }
  void *p = c->mem->data + c->mem->used;
  c->mem->used += n;
  memset(p, 0, n);
  return p;
}

/* Copy of the first len bytes of s in the arena. */
static const char *astrdup(kl_cfg *c, const char *s, size_t len)
{
  char *d = arena(c, len + 1);
  if (d) memcpy(d, s, len);
  return d;
}

kelvin_status kl_cfg_create(kl_cfg **out)
{
  *out = calloc(1, sizeof **out);
  return *out ? KELVIN_OK : KELVIN_ERR_NOMEM;
}

void kl_cfg_destroy(kl_cfg *c)
{
  if (!c) return;
  for (block *b = c->mem; b;) {
    block *nx = b->next;
    free(b);
    b = nx;
  }
  free(c);
}

const kl_cfg_node *kl_cfg_root(const kl_cfg *c) { return c->root; }
const char *kl_cfg_file(const kl_cfg *c) { return c->file; }
const char *kl_cfg_errmsg(const kl_cfg *c) { return c ? c->msg : "out of memory"; }

kelvin_status kl_cfg_fail(kl_cfg *c, const kl_cfg_node *node, const char *field, const char *fmt, ...)
{
  char what[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (node)
    snprintf(c->msg, sizeof c->msg, "%.1000s:%d: %.200s: %.2000s", c->file, node->line, field, what);
  else
    snprintf(c->msg, sizeof c->msg, "%.1000s: %.200s: %.2000s", c->file, field, what);
  return KELVIN_ERR_CONFIG;
}

//------- loading -------

/* Convert libyaml node id (1-based) of doc into our tree; depth guards against deep nesting. */
static kl_cfg_node *convert(kl_cfg *c, yaml_document_t *doc, int id, int depth, kelvin_status *st)
{
  yaml_node_t *yn = yaml_document_get_node(doc, id);
  if (!yn || depth > 64) {
    *st = kl_cfg_fail(c, NULL, "document", "nested too deeply or malformed");
    return NULL;
  }
  kl_cfg_node *n = arena(c, sizeof *n);
  if (!n) {
    *st = KELVIN_ERR_NOMEM;
    return NULL;
  }
  n->line = (int)yn->start_mark.line + 1;
  switch (yn->type) {
  case YAML_SCALAR_NODE:
    n->type = KL_CFG_SCALAR;
    n->value = astrdup(c, (const char *)yn->data.scalar.value, yn->data.scalar.length);
    n->quoted = yn->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                yn->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    if (!n->value) *st = KELVIN_ERR_NOMEM;
    break;
  case YAML_SEQUENCE_NODE: {
    n->type = KL_CFG_SEQ;
    const int cnt = (int)(yn->data.sequence.items.top - yn->data.sequence.items.start);
    n->items = arena(c, sizeof *n->items * (size_t)(cnt ? cnt : 1));
    if (!n->items) {
      *st = KELVIN_ERR_NOMEM;
      break;
    }
    for (int i = 0; i < cnt && *st == KELVIN_OK; ++i) {
      n->items[i] = convert(c, doc, yn->data.sequence.items.start[i], depth + 1, st);
      n->n = i + 1;
    }
    break;
  }
  case YAML_MAPPING_NODE: {
    n->type = KL_CFG_MAP;
    const int cnt = (int)(yn->data.mapping.pairs.top - yn->data.mapping.pairs.start);
    const size_t cap = (size_t)(cnt ? cnt : 1);
    n->items = arena(c, sizeof *n->items * cap);
    n->keys = arena(c, sizeof *n->keys * cap);
    n->key_lines = arena(c, sizeof *n->key_lines * cap);
    if (!n->items || !n->keys || !n->key_lines) {
      *st = KELVIN_ERR_NOMEM;
      break;
    }
    for (int i = 0; i < cnt && *st == KELVIN_OK; ++i) {
      const yaml_node_pair_t *pr = &yn->data.mapping.pairs.start[i];
      kl_cfg_node *k = convert(c, doc, pr->key, depth + 1, st);
      if (*st != KELVIN_OK) break;
      if (k->type != KL_CFG_SCALAR) {
        *st = kl_cfg_fail(c, k, "document", "a mapping key must be a plain name");
        break;
      }
      for (int j = 0; j < i; ++j)
        if (strcmp(n->keys[j], k->value) == 0) {
          *st = kl_cfg_fail(c, k, k->value, "duplicate key (first given on line %d)", n->key_lines[j]);
          break;
        }
      if (*st != KELVIN_OK) break;
      n->keys[i] = k->value;
      n->key_lines[i] = k->line;
      n->items[i] = convert(c, doc, pr->value, depth + 1, st);
      n->n = i + 1;
    }
    break;
  }
  default: *st = kl_cfg_fail(c, n, "document", "empty node"); break;
  }
  return *st == KELVIN_OK ? n : NULL;
}

/* 1 if the file text uses YAML anchors or aliases ('&name' / '*name' outside quotes and comments):
 * they make one line stand for another, so messages could not name the right line. */
static int uses_alias(yaml_parser_t *p, int *line)
{
  yaml_event_t ev;
  int found = 0;
  while (!found) {
    if (!yaml_parser_parse(p, &ev)) return 0; /* the loader reports the syntax error */
    if (ev.type == YAML_ALIAS_EVENT || (ev.type == YAML_SCALAR_EVENT && ev.data.scalar.anchor) ||
        (ev.type == YAML_MAPPING_START_EVENT && ev.data.mapping_start.anchor) ||
        (ev.type == YAML_SEQUENCE_START_EVENT && ev.data.sequence_start.anchor)) {
      found = 1;
      *line = (int)ev.start_mark.line + 1;
    }
    const int end = ev.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&ev);
    if (end) break;
  }
  return found;
}

kelvin_status kl_cfg_load(kl_cfg *c, const char *path)
{
  kelvin_status st = KELVIN_OK;
  yaml_parser_t parser;
  yaml_document_t doc;
  int have_parser = 0, have_doc = 0;
  snprintf(c->file, sizeof c->file, "%s", path);
  c->msg[0] = '\0';
  c->root = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(c->msg, sizeof c->msg, "cannot read config '%s': %s", path, strerror(errno));
    return KELVIN_ERR_IO;
  }
  /* pass 1: refuse anchors and aliases */
  if (!yaml_parser_initialize(&parser)) {
    st = KELVIN_ERR_NOMEM;
    goto cleanup;
  }
  have_parser = 1;
  yaml_parser_set_input_file(&parser, f);
  int aline = 0;
  if (uses_alias(&parser, &aline)) {
    snprintf(c->msg, sizeof c->msg, "%s:%d: YAML anchors and aliases are not supported; write the values out", path,
             aline);
    st = KELVIN_ERR_CONFIG;
    goto cleanup;
  }
  yaml_parser_delete(&parser);
  have_parser = 0;
  rewind(f);
  /* pass 2: the document */
  if (!yaml_parser_initialize(&parser)) {
    st = KELVIN_ERR_NOMEM;
    goto cleanup;
  }
  have_parser = 1;
  yaml_parser_set_input_file(&parser, f);
  if (!yaml_parser_load(&parser, &doc)) {
    snprintf(c->msg, sizeof c->msg, "%s:%d: malformed YAML: %s%s%s", path, (int)parser.problem_mark.line + 1,
             parser.problem ? parser.problem : "syntax error", parser.context ? " " : "",
             parser.context ? parser.context : "");
    st = KELVIN_ERR_CONFIG;
    goto cleanup;
  }
  have_doc = 1;
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (!root) {
    snprintf(c->msg, sizeof c->msg, "%s: the file is empty (expected a mapping such as 'sweep:')", path);
    st = KELVIN_ERR_CONFIG;
    goto cleanup;
  }
  kl_cfg_node *r = convert(c, &doc, 1, 0, &st);
  if (st != KELVIN_OK) goto cleanup;
  if (r->type != KL_CFG_MAP) {
    st = kl_cfg_fail(c, r, "document", "the top level must be a mapping (key: value lines)");
    goto cleanup;
  }
  c->root = r;
cleanup:
  if (st == KELVIN_ERR_NOMEM) snprintf(c->msg, sizeof c->msg, "%s: out of memory", path);
  if (have_doc) yaml_document_delete(&doc);
  if (have_parser) yaml_parser_delete(&parser);
  fclose(f);
  return st;
}

//------- access -------

const kl_cfg_node *kl_cfg_get(const kl_cfg_node *map, const char *key)
{
  if (!map || map->type != KL_CFG_MAP) return NULL;
  for (int i = 0; i < map->n; ++i)
    if (strcmp(map->keys[i], key) == 0) return map->items[i];
  return NULL;
}

kelvin_status kl_cfg_keys(kl_cfg *c, const kl_cfg_node *node, const char *field, const char *const *allowed)
{
  if (node->type != KL_CFG_MAP) return kl_cfg_fail(c, node, field, "must be a mapping (key: value lines)");
  for (int i = 0; i < node->n; ++i) {
    int ok = 0;
    for (int j = 0; allowed[j] && !ok; ++j) ok = strcmp(node->keys[i], allowed[j]) == 0;
    if (ok) continue;
    char list[512] = "";
    for (int j = 0; allowed[j]; ++j) {
      if (j) strncat(list, ", ", sizeof list - strlen(list) - 1);
      strncat(list, allowed[j], sizeof list - strlen(list) - 1);
    }
    char full[256];
    snprintf(full, sizeof full, "%s.%s", field, node->keys[i]);
    kl_cfg_node at = *node;
    at.line = node->key_lines[i];
    return kl_cfg_fail(c, &at, full, "unknown key (allowed: %s)", list);
  }
  return KELVIN_OK;
}

/* Describe a node for "got ..." in messages. */
static const char *shown(const kl_cfg_node *n)
{
  if (n->type == KL_CFG_SCALAR) return n->value;
  return n->type == KL_CFG_SEQ ? "a list" : "a mapping";
}

kelvin_status kl_cfg_number(kl_cfg *c, const kl_cfg_node *node, const char *field, double *out)
{
  if (node->type == KL_CFG_SCALAR && !node->quoted && node->value[0]) {
    char *end = NULL;
    errno = 0;
    const double v = strtod(node->value, &end);
    if (*end == '\0' && errno != ERANGE && isfinite(v)) {
      *out = v;
      return KELVIN_OK;
    }
  }
  return kl_cfg_fail(c, node, field, "must be a finite number, got '%s'", shown(node));
}

kelvin_status kl_cfg_long(kl_cfg *c, const kl_cfg_node *node, const char *field, long lo, long hi, long *out)
{
  if (node->type == KL_CFG_SCALAR && !node->quoted && node->value[0]) {
    char *end = NULL;
    errno = 0;
    const long v = strtol(node->value, &end, 10);
    if (*end == '\0' && errno != ERANGE && v >= lo && v <= hi) {
      *out = v;
      return KELVIN_OK;
    }
  }
  return kl_cfg_fail(c, node, field, "must be a whole number in [%ld, %ld], got '%s'", lo, hi, shown(node));
}

kelvin_status kl_cfg_choice(kl_cfg *c, const kl_cfg_node *node, const char *field, const char *const *names, int *out)
{
  if (node->type == KL_CFG_SCALAR)
    for (int i = 0; names[i]; ++i)
      if (strcmp(node->value, names[i]) == 0) {
        *out = i;
        return KELVIN_OK;
      }
  char list[512] = "";
  for (int i = 0; names[i]; ++i) {
    if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
    strncat(list, names[i], sizeof list - strlen(list) - 1);
  }
  return kl_cfg_fail(c, node, field, "must be one of %s, got '%s'", list, shown(node));
}
