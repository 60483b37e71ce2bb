/* api/libkelvin_symbols_test.c: libkelvin.so exports exactly the public API. `nm -D --defined-only` on
 * the library lists only kelvin_ symbols, and every function a public header (include/kelvin/)
 * marks KELVIN_API is among them. */
#include <ctype.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/cli_util.h"

static char nm_out[1 << 20];

static void test_exports(void **state)
{
  (void)state;
  if (!kl_test_have("nm")) {
    print_message("nm (binutils) not found: skipped\n");
    exit(77);
  }
  char *argv[] = {"nm", "-D", "--defined-only", KELVIN_LIB, NULL};
  assert_int_equal(kl_test_run(NULL, NULL, argv, 1, nm_out, sizeof nm_out), 0);
  /* lines "ADDRESS TYPE NAME": every name starts with kelvin_ */
  int nsym = 0;
  for (char *line = strtok(nm_out, "\n"); line; line = strtok(NULL, "\n")) {
    const char *name = strrchr(line, ' ');
    name = name ? name + 1 : line;
    if (strncmp(name, "kelvin_", 7) != 0) fail_msg("%s exports '%s', which is not kelvin_*", KELVIN_LIB, line);
    ++nsym;
  }
  assert_true(nsym > 80);

  /* every KELVIN_API function of the public headers is exported (as a text symbol, T) */
  char hdrs[] = KELVIN_SOURCE_DIR "/include/kelvin";
  DIR *d = opendir(hdrs);
  assert_non_null(d);
  assert_int_equal(kl_test_run(NULL, NULL, argv, 1, nm_out, sizeof nm_out), 0);
  int nfun = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    const size_t n = strlen(e->d_name);
    if (n < 3 || strcmp(e->d_name + n - 2, ".h") != 0) continue;
    char *text = kl_test_read(hdrs, e->d_name);
    assert_non_null(text);
    for (const char *p = strstr(text, "KELVIN_API "); p; p = strstr(p + 1, "KELVIN_API ")) {
      const char *k = strstr(p, "kelvin_"), *paren = strchr(p, '(');
      if (!k || !paren || k > paren) continue; /* the macro's own definition */
      /* the function name: the last kelvin_ word before the parenthesis */
      const char *q;
      while ((q = strstr(k + 1, "kelvin_")) && q < paren) k = q;
      char name[128], want[160];
      snprintf(name, sizeof name, "%.*s", (int)(paren - k), k);
      snprintf(want, sizeof want, " T %s\n", name);
      if (!strstr(nm_out, want)) fail_msg("%s declares %s, which libkelvin does not export", e->d_name, name);
      ++nfun;
    }
    free(text);
  }
  closedir(d);
  assert_true(nfun > 80);
  print_message("%d exported symbols, %d KELVIN_API functions in the headers\n", nsym, nfun);
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_exports)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
