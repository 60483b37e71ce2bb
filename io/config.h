/* io/config.h: a YAML config file loaded with libyaml into a small tree that keeps line numbers,
 * and typed, validated access to it. Every failure leaves one message on the handle in the form
 * "FILE:LINE: FIELD: what is wrong, got VALUE" (docs/design.md section 8); unknown keys are errors. */
#ifndef KL_CONFIG_H
#define KL_CONFIG_H

#include <stddef.h>

#include "kelvin/kelvin.h"

typedef enum kl_cfg_type { KL_CFG_SCALAR, KL_CFG_SEQ, KL_CFG_MAP } kl_cfg_type;

/* A node of the loaded document. */
typedef struct kl_cfg_node {
  kl_cfg_type type;
  int line;                   /* 1-based line where the node starts */
  const char *value;          /* SCALAR: its text; NULL otherwise */
  int quoted;                 /* SCALAR: written in quotes (then never a number) */
  int n;                      /* SEQ: items; MAP: entries */
  struct kl_cfg_node **items; /* SEQ: the items; MAP: the values (n) */
  const char **keys;          /* MAP: the keys (n), in file order */
  int *key_lines;             /* MAP: the line of each key (n) */
} kl_cfg_node;

typedef struct kl_cfg kl_cfg; /* opaque: the file name, the tree, the last message */

/* Allocate an empty handle; *out = NULL and KELVIN_ERR_NOMEM on failure. */
kelvin_status kl_cfg_create(kl_cfg **out);

/* Free the handle and its tree; NULL is a no-op. */
void kl_cfg_destroy(kl_cfg *c);

/* Limits on any document, each refused with a message that names it (bounded work on hostile input). */
#define KL_CFG_MAX_BYTES (4L << 20) /* file size */
#define KL_CFG_MAX_DEPTH 32         /* nesting of mappings and lists */
#define KL_CFG_MAX_NODES 200000     /* scalars, lists and mappings in all */
#define KL_CFG_MAX_ENTRIES 10000    /* keys of one mapping, items of one list */

/* Load and parse path. KELVIN_ERR_IO if it cannot be read, KELVIN_ERR_CONFIG for malformed YAML
 * (libyaml's problem and line), an empty document, more than one document, anchors/aliases, duplicate
 * keys (found by sorting: n log n), a limit above exceeded or a top level that is not a mapping. */
kelvin_status kl_cfg_load(kl_cfg *c, const char *path);

/* The same from memory: name stands for the file in messages and for relative paths (fuzzing, tests). */
kelvin_status kl_cfg_load_mem(kl_cfg *c, const char *name, const char *text, size_t len);

/* A path named in the file, relative to the file's folder unless absolute, into out (cap bytes);
 * 0, or -1 if it does not fit. */
int kl_cfg_relpath(const kl_cfg *c, const char *name, char *out, size_t cap);

/* "PREFIX.KEY" (or "KEY" for an empty prefix) into buf. */
const char *kl_cfg_field(char *buf, size_t cap, const char *prefix, const char *key);

/* A list of exactly n finite numbers; FIELD[i] named on a bad item. */
kelvin_status kl_cfg_numbers(kl_cfg *c, const kl_cfg_node *node, const char *field, int n, double *out);

/* A non-empty scalar text (quoted or not); otherwise "FIELD: must be WHAT". */
kelvin_status kl_cfg_text(kl_cfg *c, const kl_cfg_node *node, const char *field, const char *what, const char **out);

/* The root mapping of a loaded file; NULL before a successful load. */
const kl_cfg_node *kl_cfg_root(const kl_cfg *c);

/* The file name as given to kl_cfg_load. */
const char *kl_cfg_file(const kl_cfg *c);

/* The last message; "" if none; never NULL. */
const char *kl_cfg_errmsg(const kl_cfg *c);

/* Record "FILE:LINE: FIELD: <fmt...>" (line of node, or of the file when node is NULL) and return
 * KELVIN_ERR_CONFIG. */
kelvin_status kl_cfg_fail(kl_cfg *c, const kl_cfg_node *node, const char *field, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));

/* Value of key in map, or NULL if absent (or map is not a mapping). */
const kl_cfg_node *kl_cfg_get(const kl_cfg_node *map, const char *key);

/* Check that node is a mapping whose keys are all in the NULL-terminated list allowed; otherwise an
 * error naming FIELD.KEY and listing the allowed keys. */
kelvin_status kl_cfg_keys(kl_cfg *c, const kl_cfg_node *node, const char *field, const char *const *allowed);

/* A finite number from a scalar ("1e9", "0.5"); otherwise "FIELD: must be a number, got 'x'". */
kelvin_status kl_cfg_number(kl_cfg *c, const kl_cfg_node *node, const char *field, double *out);

/* A whole number in [lo, hi] from a scalar. */
kelvin_status kl_cfg_long(kl_cfg *c, const kl_cfg_node *node, const char *field, long lo, long hi, long *out);

/* Index of a scalar in the NULL-terminated list names; otherwise an error listing the choices. */
kelvin_status kl_cfg_choice(kl_cfg *c, const kl_cfg_node *node, const char *field, const char *const *names, int *out);

#endif
