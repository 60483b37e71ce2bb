/* tests/cli_util.h: what the CLI tests share: run the built `kelvin` as a user would and look at what
 * it left behind. Header-only (static inline functions), included after <cmocka.h>. */
#ifndef KL_TESTS_CLI_UTIL_H
#define KL_TESTS_CLI_UTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Run "[cd CWD &&] [ENV] kelvin ARGS" with stdout discarded and stderr captured into err (cap bytes);
 * cwd and env may be NULL. Returns the exit status (-1 if it did not exit normally). */
static inline int kl_test_kelvin(const char *cwd, const char *env, const char *args, char *err, size_t cap)
{
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "%s%s%s %s '%s/kelvin' %s 2>&1 >/dev/null", cwd ? "cd '" : "", cwd ? cwd : "",
           cwd ? "' &&" : "", env ? env : "", KELVIN_BINARY_DIR, args);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  const size_t n = fread(err, 1, cap - 1, p);
  err[n] = '\0';
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Entries in dir other than . and hidden ones; -1 if it cannot be opened. */
static inline int kl_test_count_files(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

/* 1 if a temporary "*.tmp.*" file (a half-written output) is left in dir. */
static inline int kl_test_has_tmp(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d) return 0;
  int found = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strstr(e->d_name, ".tmp.")) found = 1;
  closedir(d);
  return found;
}

/* Write text to dir/name (dir NULL: name is the path); fails the test if the file cannot be made. */
static inline void kl_test_write(const char *dir, const char *name, const char *text)
{
  char path[1024];
  snprintf(path, sizeof path, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* The whole of dir/name (dir NULL: name is the path) as a malloc'd string; NULL if it cannot be read. */
static inline char *kl_test_read(const char *dir, const char *name)
{
  char path[1024];
  snprintf(path, sizeof path, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  assert_non_null(s);
  assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
  s[n] = '\0';
  fclose(f);
  return s;
}

/* Lines in s. */
static inline int kl_test_lines(const char *s)
{
  int n = 0;
  for (; *s; ++s) n += *s == '\n';
  return n;
}

#endif
