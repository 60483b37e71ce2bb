/* optimiser/schema.h: every grinding setting named once. One table (optimiser/schema.c) gives, for each
 * field of kl_settings (optimiser/problem.h), its key as written in a config file ("holder.stiffness":
 * the YAML section, then the key), its type, default, bounds, unit and meaning. The table drives the
 * defaults (kl_settings_default), the YAML loader (io/settings.c), setting by key (the public API's
 * kelvin_grind_set) and the test that examples/optimise.yaml documents every key with its default.
 * Adding a setting is one line of the table (and its field in kl_settings). */
#ifndef KL_OPTIMISER_SCHEMA_H
#define KL_OPTIMISER_SCHEMA_H

#include <stddef.h>

#include "optimiser/problem.h"

typedef enum kl_key_type {
  KL_KEY_REAL,   /* double[n] (n = 1..3; a YAML list when n > 1), each value in [lo, hi] */
  KL_KEY_INT,    /* int, a whole number in [lo, hi] */
  KL_KEY_SEED,   /* unsigned long, a whole number in [lo, hi] */
  KL_KEY_CHOICE, /* int: the index of a name in names[] */
  KL_KEY_TEXT,   /* char[n]: one word (an NLopt algorithm name) */
  KL_KEY_FILE,   /* char[n]: a file name, relative to the config file's folder in a config file */
  KL_KEY_ROBOT   /* char[n]: "builtin" or a file name as for KL_KEY_FILE */
} kl_key_type;

#define KL_KEY_REQUIRED 1 /* flag: must be given whenever its section is (robot.model) */

typedef struct kl_key {
  const char *key;          /* "holder.stiffness", "workpiece.bead.height" */
  kl_key_type type;
  size_t offset;            /* offsetof(kl_settings, field) */
  size_t size;              /* sizeof the field [bytes] */
  int n;                    /* KL_KEY_REAL: values (1..3); 1 otherwise */
  double def[3];            /* default(s) of numbers and choices; NaN: derived when the problem is built */
  const char *sdef;         /* default of texts and files ("" none) */
  double lo, hi;            /* bounds of numbers */
  const char *unit;         /* SI unit of numbers ("" dimensionless) */
  const char *const *names; /* KL_KEY_CHOICE: the names, NULL-terminated; index = stored value (or codes[index]) */
  int flags;                /* KL_KEY_REQUIRED */
  const char *doc;          /* what it is, for a person; says how a derived default is derived */
  const int *codes;         /* KL_KEY_CHOICE: the value stored for names[i] (NULL: i itself) */
} kl_key;

/* The table, in config-file order; *n = its length. */
const kl_key *kl_settings_keys(int *n);

/* The entry of key ("holder.stiffness"), or NULL if there is none. */
const kl_key *kl_settings_key(const char *key);

/* The bounds of a number key as words for a message, e.g. "in [1, 1e9] N/m", into buf. */
const char *kl_key_rule(const kl_key *k, char *buf, size_t cap);

/* 1 if v is a legal value of number key k (finite, within the bounds, whole for integer keys). */
int kl_key_number_ok(const kl_key *k, double v);

/* Set key to number(s) v (n of them: the key's n for KL_KEY_REAL lists, 1 otherwise); integer keys take
 * whole numbers. KELVIN_ERR_ARG with "KEY: ..." in msg for an unknown key, a text key, a count that is
 * not the key's or a value out of bounds (the setting is then unchanged). */
kelvin_status kl_settings_set_numbers(kl_settings *s, const char *key, const double *v, int n, char *msg, int cap);

/* Set a choice (by name), text or file key (as given: no folder is prepended) to text. A robot key takes
 * "builtin", a file name or "" (no robot). KELVIN_ERR_ARG with a message otherwise. */
kelvin_status kl_settings_set_text(kl_settings *s, const char *key, const char *text, char *msg, int cap);

/* The value(s) of a number or choice key into v (up to cap values); the count, or -1 if key is not one. */
int kl_settings_get_numbers(const kl_settings *s, const char *key, double *v, int cap);

/* The value of a text, file or choice key (the choice's name); NULL if key is not one. */
const char *kl_settings_get_text(const kl_settings *s, const char *key);

/* optimiser.correct (docs/design.md section 5, "Correction"): "auto" -> KL_CORRECT_AUTO, "off" -> 0, a
 * whole number N in [1, KL_CORRECT_MAX] -> N (the most iterations), anything else -> KL_CORRECT_BAD. */
#define KL_CORRECT_AUTO (-1)
#define KL_CORRECT_BAD (-2)
#define KL_CORRECT_MAX 50
int kl_correct_parse(const char *text);

#endif
