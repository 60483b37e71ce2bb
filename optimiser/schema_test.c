/* optimiser/schema_test.c: the table of settings (optimiser/schema.h) covers kl_settings exactly, one key
 * per field, with types that match the fields; its defaults are legal or derived; setting by key writes
 * the named field and refuses what the loader refuses. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernels/kl_impact.h"
#include "optimiser/schema.h"

static size_t align_of(kl_key_type t)
{
  switch (t) {
  case KL_KEY_REAL: return _Alignof(double);
  case KL_KEY_SEED: return _Alignof(unsigned long);
  case KL_KEY_INT:
  case KL_KEY_CHOICE: return _Alignof(int);
  default: return 1; /* char arrays */
  }
}

static size_t size_of(const kl_key *k)
{
  switch (k->type) {
  case KL_KEY_REAL: return (size_t)k->n * sizeof(double);
  case KL_KEY_SEED: return sizeof(unsigned long);
  case KL_KEY_INT:
  case KL_KEY_CHOICE: return sizeof(int);
  default: return k->size;
  }
}

static int by_offset(const void *a, const void *b)
{
  const kl_key *x = *(const kl_key *const *)a, *y = *(const kl_key *const *)b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Every byte of kl_settings belongs to one key or is alignment padding: walking the fields in offset
 * order, each starts exactly where the previous one ends, rounded up to its own alignment, and the
 * struct ends at the last one rounded up to the struct's alignment. A field without a key, two keys on
 * one field or a key whose type does not match its field's size breaks the walk. */
static void test_table_covers_the_struct(void **state)
{
  (void)state;
  int n;
  const kl_key *t = kl_settings_keys(&n);
  assert_true(n > 50);
  const kl_key **k = malloc((size_t)n * sizeof *k);
  assert_non_null(k);
  for (int i = 0; i < n; ++i) {
    k[i] = &t[i];
    if (size_of(&t[i]) != t[i].size) fail_msg("%s: type does not match the field's size (%zu bytes)", t[i].key, t[i].size);
  }
  qsort(k, (size_t)n, sizeof *k, by_offset);
  size_t end = 0;
  for (int i = 0; i < n; ++i) {
    const size_t a = align_of(k[i]->type), expect = (end + a - 1) / a * a;
    if (k[i]->offset != expect)
      fail_msg("%s at byte %zu, expected %zu: a field without a key (or two keys on one field) before it", k[i]->key,
               k[i]->offset, expect);
    end = k[i]->offset + k[i]->size;
  }
  const size_t a = _Alignof(kl_settings);
  assert_int_equal((end + a - 1) / a * a, sizeof(kl_settings));
  free(k);
}

/* Keys are unique "section.key" words; numbers' defaults are legal or NaN (derived) or, for an override
 * whose absence means "derived", outside the bounds with the doc saying what the default is. */
static void test_keys_and_defaults(void **state)
{
  (void)state;
  int n;
  const kl_key *t = kl_settings_keys(&n);
  for (int i = 0; i < n; ++i) {
    assert_non_null(strchr(t[i].key, '.'));
    assert_true(t[i].doc && t[i].doc[0]);
    for (int j = 0; j < i; ++j)
      if (strcmp(t[i].key, t[j].key) == 0) fail_msg("%s: listed twice", t[i].key);
    assert_ptr_equal(kl_settings_key(t[i].key), &t[i]);
    if (t[i].type == KL_KEY_REAL || t[i].type == KL_KEY_INT || t[i].type == KL_KEY_SEED) {
      assert_true(t[i].lo <= t[i].hi);
      for (int j = 0; j < t[i].n; ++j)
        if (!kl_key_number_ok(&t[i], t[i].def[j]) && !strstr(t[i].doc, "default"))
          fail_msg("%s: default %g is outside [%g, %g] and the doc does not say what it is", t[i].key, t[i].def[j],
                   t[i].lo, t[i].hi);
    }
    if (t[i].type == KL_KEY_CHOICE) {
      int nn = 0;
      while (t[i].names[nn]) ++nn;
      int ok = 0; /* the default is one of the stored values */
      for (int j = 0; j < nn; ++j) ok |= (t[i].codes ? t[i].codes[j] : j) == (int)t[i].def[0];
      assert_true(ok);
    }
  }
  assert_null(kl_settings_key("holder"));
  assert_null(kl_settings_key("holder.stiffnes"));
}

/* Setting by key writes the field the name says (checked through the struct's own field names). */
static void test_set_by_key(void **state)
{
  (void)state;
  kl_settings s, before;
  kl_settings_default(&s);
  char msg[256];
  const double K = 1e5;
  assert_int_equal(kl_settings_set_numbers(&s, "holder.stiffness", &K, 1, msg, sizeof msg), KELVIN_OK);
  assert_true(s.holder_K == 1e5);
  const double D = 12.5;
  assert_int_equal(kl_settings_set_numbers(&s, "holder.damping", &D, 1, msg, sizeof msg), KELVIN_OK);
  assert_true(s.holder_D == 12.5 && s.holder_K == 1e5);
  const double base[3] = {0.1, -0.2, 0.3};
  assert_int_equal(kl_settings_set_numbers(&s, "robot.base", base, 3, msg, sizeof msg), KELVIN_OK);
  assert_true(s.robot_base[0] == 0.1 && s.robot_base[1] == -0.2 && s.robot_base[2] == 0.3);
  const double ns = 101;
  assert_int_equal(kl_settings_set_numbers(&s, "path.samples", &ns, 1, msg, sizeof msg), KELVIN_OK);
  assert_int_equal(s.ns, 101);
  const double seed = 12345;
  assert_int_equal(kl_settings_set_numbers(&s, "optimiser.seed", &seed, 1, msg, sizeof msg), KELVIN_OK);
  assert_true(s.seed == 12345UL);
  assert_int_equal(kl_settings_set_text(&s, "contact.law", "flores", msg, sizeof msg), KELVIN_OK);
  assert_int_equal(s.law, KL_LAW_FLORES);
  assert_int_equal(kl_settings_set_text(&s, "contact.model", "kv", msg, sizeof msg), KELVIN_OK);
  assert_int_equal(s.model, KL_MODEL_KV);
  assert_int_equal(kl_settings_set_text(&s, "workpiece.surface", "saddle", msg, sizeof msg), KELVIN_OK);
  assert_int_equal(s.surface, KL_SURF_SADDLE);
  assert_int_equal(kl_settings_set_text(&s, "target.measure", "instantaneous", msg, sizeof msg), KELVIN_OK);
  assert_int_equal(s.measure, KL_MEASURE_INSTANT);
  assert_int_equal(kl_settings_set_text(&s, "optimiser.algorithm", "LN_BOBYQA", msg, sizeof msg), KELVIN_OK);
  assert_string_equal(s.algorithm, "LN_BOBYQA");
  assert_int_equal(kl_settings_set_text(&s, "workpiece.mesh", "part.stl", msg, sizeof msg), KELVIN_OK);
  assert_string_equal(s.mesh, "part.stl");
  double v[3];
  assert_int_equal(kl_settings_get_numbers(&s, "holder.stiffness", v, 3), 1);
  assert_true(v[0] == 1e5);
  assert_string_equal(kl_settings_get_text(&s, "contact.law"), "flores");

  /* refusals leave the settings as they were and name the key */
  memcpy(&before, &s, sizeof s);
  const struct {
    const char *key;
    double v;
    const char *says;
  } bad[] = {
    {"holder.stiffness", 0.5, "holder.stiffness: must be in [1, 1e9] N/m, got 0.5"},
    {"holder.stiffness", NAN, "holder.stiffness"},
    {"contact.cr", 1.5, "contact.cr: must be in [1e-6, 1], got 1.5"},
    {"path.samples", 100.5, "path.samples: must be a whole number in [8, 4096], got 100.5"},
    {"contact.law", 1, "contact.law: takes a name, not a number"},
    {"holder.stifness", 1, "holder.stifness: no such setting"},
    {"workpiece.extent", 0.1, "workpiece.extent: takes 2 numbers, got 1"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    msg[0] = '\0';
    assert_int_equal(kl_settings_set_numbers(&s, bad[i].key, &bad[i].v, 1, msg, sizeof msg), KELVIN_ERR_ARG);
    if (!strstr(msg, bad[i].says)) fail_msg("message '%s' lacks '%s'", msg, bad[i].says);
  }
  const double ext[2] = {0.1, -1};
  assert_int_equal(kl_settings_set_numbers(&s, "workpiece.extent", ext, 2, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "workpiece.extent[1]"));
  assert_int_equal(kl_settings_set_text(&s, "contact.law", "exactly", msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "must be one of hunt-crossley, lankarani-nikravesh, flores, gonthier, exact"));
  assert_int_equal(kl_settings_set_text(&s, "optimiser.algorithm", "LD LBFGS", msg, sizeof msg), KELVIN_ERR_ARG);
  assert_int_equal(kl_settings_set_text(&s, "holder.stiffness", "stiff", msg, sizeof msg), KELVIN_ERR_ARG);
  assert_memory_equal(&before, &s, sizeof s);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_table_covers_the_struct),
    cmocka_unit_test(test_keys_and_defaults),
    cmocka_unit_test(test_set_by_key),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
