/* api/libkelvin_symbols_test.c: libkelvin.so exports exactly the public API. `nm -D --defined-only` on
 * the library lists only kelvin_ symbols, every function a public header (include/kelvin/) declares is
 * among them, and the objects hide everything else themselves (hidden visibility in libkelvin.a). */
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

  /* every function the public headers declare is exported (as a text symbol, T): each kelvin_name( outside
   * comments is a declaration */
  char hdrs[] = KELVIN_SOURCE_DIR "/include/kelvin";
  DIR *d = opendir(hdrs);
  assert_non_null(d);
  assert_int_equal(kl_test_run(NULL, NULL, argv, 1, nm_out, sizeof nm_out), 0);
  int nfun = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    const size_t n = strlen(e->d_name);
    if (n < 3 || strcmp(e->d_name + n - 2, ".h") != 0) continue;
#ifndef KELVIN_TEST_MPI
    if (strcmp(e->d_name, "mpi.h") == 0) continue; /* a build without MPI has no kelvin/mpi.h part */
#endif
    char *text = kl_test_read(hdrs, e->d_name);
    assert_non_null(text);
    for (char *c = strstr(text, "/*"); c; c = strstr(c, "/*")) { /* blank out the comments */
      char *end = strstr(c + 2, "*/");
      assert_non_null(end);
      memset(c, ' ', (size_t)(end + 2 - c));
    }
    for (const char *k = strstr(text, "kelvin_"); k; k = strstr(k + 1, "kelvin_")) {
      if (k > text && (isalnum((unsigned char)k[-1]) || k[-1] == '_')) continue;
      size_t len = 0;
      while (isalnum((unsigned char)k[len]) || k[len] == '_') ++len;
      const char *q = k + len;
      while (*q == ' ') ++q;
      if (*q != '(') continue; /* a type, not a function */
      char want[160];
      snprintf(want, sizeof want, " T %.*s\n", (int)len, k);
      if (!strstr(nm_out, want)) fail_msg("%s declares %.*s, which libkelvin does not export", e->d_name, (int)len, k);
      ++nfun;
    }
    free(text);
  }
  closedir(d);
  assert_true(nfun > 80);
  print_message("%d exported symbols, %d functions declared in the headers\n", nsym, nfun);

  /* the mechanism, not only the result: in libkelvin.a every defined global symbol that is not kelvin_*
   * has hidden visibility (the export list of libkelvin.so then has nothing left to hide but the locks
   * of named OpenMP critical sections, which GCC makes global common symbols) */
  if (!kl_test_have("readelf")) return;
  char *rargv[] = {"readelf", "-sW", KELVIN_STATIC_LIB, NULL};
  assert_int_equal(kl_test_run(NULL, NULL, rargv, 1, nm_out, sizeof nm_out), 0);
  int nhidden = 0;
  for (char *line = strtok(nm_out, "\n"); line; line = strtok(NULL, "\n")) {
    char num[32], val[64], size[32], type[32], bind[32], vis[32], ndx[32], name[512];
    if (sscanf(line, "%31s %63s %31s %31s %31s %31s %31s %511s", num, val, size, type, bind, vis, ndx, name) != 8) continue;
    if (strcmp(bind, "GLOBAL") != 0 || strcmp(ndx, "UND") == 0) continue;
    if (strncmp(name, "kelvin_", 7) == 0 || strncmp(name, ".gomp_critical_user_", 20) == 0) continue;
    if (strcmp(vis, "HIDDEN") != 0) fail_msg("libkelvin.a: %s is global with visibility %s, not hidden", name, vis);
    ++nhidden;
  }
  assert_true(nhidden > 100); /* 143 today */
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_exports)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
