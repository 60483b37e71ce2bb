/* io/config.c: YAML (libyaml's document API) into a kl_cfg_node tree with line numbers, and
 * typed access with messages that name file, line and field. */
#include "io/config.h"
#include "io/slurp.h"

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
  kl_msg_oneline(c->msg);
  return KELVIN_ERR_CONFIG;
}

//------- loading -------

/* A container being read: its node and its growing entries (malloc'd until the container ends). */
typedef struct frame {
  kl_cfg_node *n;
  kl_cfg_node **items;
  const char **keys;
  int *klines;
  int cnt, cap;
  const char *key; /* MAP: the key read, waiting for its value (NULL: next scalar is a key) */
  int kline;
} frame;

typedef struct builder {
  kl_cfg *c;
  frame st[KL_CFG_MAX_DEPTH + 1];
  int depth; /* frames in use */
  long nodes;
  kl_cfg_node *root;
} builder;

static int by_key(const void *a, const void *b, void *keys)
{
  const char *const *k = keys;
  const int x = *(const int *)a, y = *(const int *)b;
  const int d = strcmp(k[x], k[y]);
  return d ? d : (x > y) - (x < y);
}

/* Append (key, value) or an item to the top frame; KELVIN_ERR_* with a message on failure. */
static kelvin_status append(builder *B, kl_cfg_node *v)
{
  frame *f = &B->st[B->depth - 1];
  if (f->cnt >= KL_CFG_MAX_ENTRIES)
    return kl_cfg_fail(B->c, f->n, "document", "a %s has more than %d entries (the limit)",
                       f->n->type == KL_CFG_MAP ? "mapping" : "list", KL_CFG_MAX_ENTRIES);
  if (f->cnt == f->cap) {
    const int cap = f->cap ? 2 * f->cap : 8;
    kl_cfg_node **it = realloc(f->items, sizeof *it * (size_t)cap);
    if (!it) return KELVIN_ERR_NOMEM;
    f->items = it;
    if (f->n->type == KL_CFG_MAP) {
      const char **k = realloc(f->keys, sizeof *k * (size_t)cap);
      if (!k) return KELVIN_ERR_NOMEM;
      f->keys = k;
      int *l = realloc(f->klines, sizeof *l * (size_t)cap);
      if (!l) return KELVIN_ERR_NOMEM;
      f->klines = l;
    }
    f->cap = cap;
  }
  if (f->n->type == KL_CFG_MAP) {
    f->keys[f->cnt] = f->key;
    f->klines[f->cnt] = f->kline;
    f->key = NULL;
  }
  f->items[f->cnt++] = v;
  return KELVIN_OK;
}

/* A new node of type t at mark line; attached to its parent (or made the root). */
static kelvin_status node_new(builder *B, kl_cfg_type t, int line, const char *text, size_t len, int quoted,
                              kl_cfg_node **out)
{
  if (++B->nodes > KL_CFG_MAX_NODES)
    return kl_cfg_fail(B->c, NULL, "document", "more than %d values in all (the limit)", KL_CFG_MAX_NODES);
  frame *f = B->depth ? &B->st[B->depth - 1] : NULL;
  if (f && f->n->type == KL_CFG_MAP && !f->key) { /* a key */
    if (t != KL_CFG_SCALAR) {
      kl_cfg_node at = {.line = line};
      return kl_cfg_fail(B->c, &at, "document", "a mapping key must be a plain name, got a %s",
                         t == KL_CFG_SEQ ? "list" : "mapping");
    }
    f->key = astrdup(B->c, text, len);
    if (!f->key) return KELVIN_ERR_NOMEM;
    f->kline = line;
    *out = NULL;
    return KELVIN_OK;
  }
  kl_cfg_node *n = arena(B->c, sizeof *n);
  if (!n) return KELVIN_ERR_NOMEM;
  n->type = t;
  n->line = line;
  if (t == KL_CFG_SCALAR) {
    n->value = astrdup(B->c, text, len);
    if (!n->value) return KELVIN_ERR_NOMEM;
    n->quoted = quoted;
  }
  *out = n;
  if (!f) {
    B->root = n;
    return KELVIN_OK;
  }
  return append(B, n);
}

/* Start a container: push its frame. */
static kelvin_status push(builder *B, kl_cfg_type t, int line)
{
  kl_cfg_node *n = NULL;
  kelvin_status st = node_new(B, t, line, NULL, 0, 0, &n);
  if (st != KELVIN_OK) return st;
  if (!n) { /* cannot happen: node_new refuses a container as a key */
    return kl_cfg_fail(B->c, NULL, "document", "malformed");
  }
  if (B->depth >= KL_CFG_MAX_DEPTH) {
    kl_cfg_node at = {.line = line};
    return kl_cfg_fail(B->c, &at, "document", "nested deeper than %d levels (the limit)", KL_CFG_MAX_DEPTH);
  }
  frame *f = &B->st[B->depth++];
  memset(f, 0, sizeof *f);
  f->n = n;
  return KELVIN_OK;
}

/* End the top container: its entries into the arena; duplicate keys found by sorting. */
static kelvin_status pop(builder *B)
{
  frame *f = &B->st[B->depth - 1];
  kl_cfg_node *n = f->n;
  const size_t cap = (size_t)(f->cnt ? f->cnt : 1);
  n->items = arena(B->c, sizeof *n->items * cap);
  if (!n->items) return KELVIN_ERR_NOMEM;
  if (f->cnt) memcpy(n->items, f->items, sizeof *n->items * (size_t)f->cnt);
  if (n->type == KL_CFG_MAP) {
    n->keys = arena(B->c, sizeof *n->keys * cap);
    n->key_lines = arena(B->c, sizeof *n->key_lines * cap);
    int *ord = malloc(sizeof *ord * cap);
    if (!n->keys || !n->key_lines || !ord) {
      free(ord);
      return KELVIN_ERR_NOMEM;
    }
    if (f->cnt) {
      memcpy(n->keys, f->keys, sizeof *n->keys * (size_t)f->cnt);
      memcpy(n->key_lines, f->klines, sizeof *n->key_lines * (size_t)f->cnt);
    }
    for (int i = 0; i < f->cnt; ++i) ord[i] = i;
    qsort_r(ord, (size_t)f->cnt, sizeof *ord, by_key, (void *)n->keys);
    for (int i = 1; i < f->cnt; ++i)
      if (strcmp(n->keys[ord[i - 1]], n->keys[ord[i]]) == 0) {
        kl_cfg_node at = {.line = n->key_lines[ord[i]]};
        const int first = n->key_lines[ord[i - 1]];
        /* the key's full name: each enclosing mapping's key (or list's index) down to it */
        char full[256];
        int len = 0;
        for (int d = 0; d + 1 < B->depth && len < (int)sizeof full; ++d) {
          const frame *p = &B->st[d];
          if (p->cnt < 1) break;
          len += p->n->type == KL_CFG_MAP ? snprintf(full + len, sizeof full - (size_t)len, "%s%s", len ? "." : "", p->keys[p->cnt - 1])
                                          : snprintf(full + len, sizeof full - (size_t)len, "[%d]", p->cnt - 1);
        }
        if (len < (int)sizeof full)
          snprintf(full + len, sizeof full - (size_t)len, "%s%s", len ? "." : "", n->keys[ord[i]]);
        free(ord);
        return kl_cfg_fail(B->c, &at, full, "duplicate key (first given on line %d)", first);
      }
    free(ord);
  }
  n->n = f->cnt;
  free(f->items);
  free(f->keys);
  free(f->klines);
  memset(f, 0, sizeof *f);
  --B->depth;
  return KELVIN_OK;
}

/* Build the tree from libyaml's events: one pass, every limit checked as the events arrive. */
static kelvin_status build(kl_cfg *c, yaml_parser_t *p)
{
  builder *B = calloc(1, sizeof *B);
  if (!B) return KELVIN_ERR_NOMEM;
  B->c = c;
  kelvin_status st = KELVIN_OK;
  int docs = 0, done = 0;
  while (!done && st == KELVIN_OK) {
    yaml_event_t ev;
    if (!yaml_parser_parse(p, &ev)) {
      if (p->error == YAML_MEMORY_ERROR) {
        st = KELVIN_ERR_NOMEM;
        break;
      }
      snprintf(c->msg, sizeof c->msg, "%.1000s:%d: malformed YAML: %.300s%s%.300s", c->file,
               (int)p->problem_mark.line + 1, p->problem ? p->problem : "syntax error", p->context ? " " : "",
               p->context ? p->context : "");
      st = KELVIN_ERR_CONFIG;
      break;
    }
    const int line = (int)ev.start_mark.line + 1;
    kl_cfg_node at = {.line = line};
    kl_cfg_node *n = NULL;
    switch (ev.type) {
    case YAML_DOCUMENT_START_EVENT:
      if (++docs > 1) st = kl_cfg_fail(c, &at, "document", "more than one YAML document ('---'); give one");
      break;
    case YAML_ALIAS_EVENT:
      st = kl_cfg_fail(c, &at, "document", "YAML anchors and aliases are not supported; write the values out");
      break;
    case YAML_SCALAR_EVENT:
      if (ev.data.scalar.anchor) {
        st = kl_cfg_fail(c, &at, "document", "YAML anchors and aliases are not supported; write the values out");
        break;
      }
      st = node_new(B, KL_CFG_SCALAR, line, (const char *)ev.data.scalar.value, ev.data.scalar.length,
                    ev.data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                      ev.data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE,
                    &n);
      break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
      const int seq = ev.type == YAML_SEQUENCE_START_EVENT;
      if (seq ? ev.data.sequence_start.anchor != NULL : ev.data.mapping_start.anchor != NULL) {
        st = kl_cfg_fail(c, &at, "document", "YAML anchors and aliases are not supported; write the values out");
        break;
      }
      st = push(B, seq ? KL_CFG_SEQ : KL_CFG_MAP, line);
      break;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: st = pop(B); break;
    case YAML_STREAM_END_EVENT: done = 1; break;
    default: break;
    }
    yaml_event_delete(&ev);
  }
  for (int i = 0; i < B->depth; ++i) {
    free(B->st[i].items);
    free(B->st[i].keys);
    free(B->st[i].klines);
  }
  if (st == KELVIN_OK) {
    if (!B->root) {
      snprintf(c->msg, sizeof c->msg, "%.1000s: the file is empty (expected a mapping of 'key: value' lines)", c->file);
      st = KELVIN_ERR_CONFIG;
    } else if (B->root->type != KL_CFG_MAP)
      st = kl_cfg_fail(c, B->root, "document", "the top level must be a mapping (key: value lines)");
    else
      c->root = B->root;
  }
  free(B);
  return st;
}

kelvin_status kl_cfg_load_mem(kl_cfg *c, const char *name, const char *text, size_t len)
{
  snprintf(c->file, sizeof c->file, "%s", name);
  c->msg[0] = '\0';
  c->root = NULL;
  if (len > (size_t)KL_CFG_MAX_BYTES)
    return kl_cfg_fail(c, NULL, "document", "the file is %zu bytes, more than the limit of %ld", len,
                       (long)KL_CFG_MAX_BYTES);
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    snprintf(c->msg, sizeof c->msg, "%.1000s: out of memory", c->file);
    return KELVIN_ERR_NOMEM;
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  const kelvin_status st = build(c, &parser);
  yaml_parser_delete(&parser);
  if (st == KELVIN_ERR_NOMEM) snprintf(c->msg, sizeof c->msg, "%.1000s: out of memory", c->file);
  if (st != KELVIN_OK) c->root = NULL;
  kl_msg_oneline(c->msg);
  return st;
}

kelvin_status kl_cfg_load(kl_cfg *c, const char *path)
{
  snprintf(c->file, sizeof c->file, "%s", path);
  c->msg[0] = '\0';
  c->root = NULL;
  char *text = NULL;
  size_t len = 0;
  char why[256];
  const kelvin_status st = kl_io_slurp(path, KL_CFG_MAX_BYTES, &text, &len, why, sizeof why);
  if (st != KELVIN_OK) {
    snprintf(c->msg, sizeof c->msg, "%.1000s: %s", path, why);
    kl_msg_oneline(c->msg);
    return st;
  }
  const kelvin_status s2 = kl_cfg_load_mem(c, path, text, len);
  free(text);
  return s2;
}

int kl_cfg_relpath(const kl_cfg *c, const char *name, char *out, size_t cap)
{
  const char *slash = strrchr(c->file, '/');
  int len;
  if (name[0] != '/' && slash)
    len = snprintf(out, cap, "%.*s/%s", (int)(slash - c->file), c->file, name);
  else
    len = snprintf(out, cap, "%s", name);
  return len < 0 || (size_t)len >= cap ? -1 : 0;
}

const char *kl_cfg_field(char *buf, size_t cap, const char *prefix, const char *key)
{
  snprintf(buf, cap, "%s%s%s", prefix, prefix[0] ? "." : "", key);
  return buf;
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
    const int top = !field[0] || strcmp(field, "(top level)") == 0;
    snprintf(full, sizeof full, "%s%s%s", top ? "" : field, top ? "" : ".", node->keys[i]);
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

kelvin_status kl_cfg_numbers(kl_cfg *c, const kl_cfg_node *node, const char *field, int n, double *out)
{
  if (node->type != KL_CFG_SEQ || node->n != n)
    return kl_cfg_fail(c, node, field, "must be a list of %d numbers, e.g. [%s], got %s", n,
                       n == 2 ? "0, 1" : n == 3 ? "0, 0, 1" : n == 4 ? "1, 0, 0, 0" : "...",
                       node->type == KL_CFG_SEQ ? "a list of another length" : shown(node));
  for (int i = 0; i < n; ++i) {
    char f[300];
    snprintf(f, sizeof f, "%s[%d]", field, i);
    const kelvin_status st = kl_cfg_number(c, node->items[i], f, &out[i]);
    if (st != KELVIN_OK) return st;
  }
  return KELVIN_OK;
}

kelvin_status kl_cfg_text(kl_cfg *c, const kl_cfg_node *node, const char *field, const char *what, const char **out)
{
  if (node->type != KL_CFG_SCALAR || !node->value[0]) return kl_cfg_fail(c, node, field, "must be %s, got %s", what,
                                                                      node->type == KL_CFG_SCALAR ? "''" : shown(node));
  *out = node->value;
  return KELVIN_OK;
}
