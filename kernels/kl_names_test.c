/* kernels/kl_names_test.c: the name tables of kernels/kl_names.h against the codes they name, written
 * out here (a swapped or misspelled entry, or an off-by-one bound, fails). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernels/kl_names.h"

static void test_names(void **state)
{
  (void)state;
  const struct {
    const char *name;
    int code;
  } models[] = {{"kv", KL_MODEL_KV}, {"hc", KL_MODEL_HC}, {"ef", KL_MODEL_EF}, {"general", KL_MODEL_GEN}},
    laws[] = {{"hunt-crossley", KL_LAW_HUNT_CROSSLEY},
              {"lankarani-nikravesh", KL_LAW_LANKARANI_NIKRAVESH},
              {"flores", KL_LAW_FLORES},
              {"gonthier", KL_LAW_GONTHIER},
              {"exact", KL_LAW_EXACT}},
    rules[] = {{"penetration", KL_SEP_PENETRATION}, {"force", KL_SEP_FORCE}};
  for (int i = 0; i < 4; ++i) {
    assert_string_equal(kl_model_name(models[i].code), models[i].name);
    assert_int_equal(kl_model_from_name(models[i].name), models[i].code);
  }
  for (int i = 0; i < 5; ++i) {
    assert_string_equal(kl_law_name(laws[i].code), laws[i].name);
    assert_int_equal(kl_law_from_name(laws[i].name), laws[i].code);
  }
  for (int i = 0; i < 2; ++i) {
    assert_string_equal(kl_rule_name(rules[i].code), rules[i].name);
    assert_int_equal(kl_rule_from_name(rules[i].name), rules[i].code);
  }
  /* unknown codes and names */
  assert_null(kl_model_name(-1));
  assert_null(kl_model_name(4));
  assert_null(kl_law_name(5));
  assert_null(kl_rule_name(2));
  assert_int_equal(kl_model_from_name("KV"), -1);
  assert_int_equal(kl_law_from_name("hunt"), -1);
  assert_int_equal(kl_rule_from_name(""), -1);
  assert_int_equal(kl_rule_from_name(NULL), -1);
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_names)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
