/* tests/cli_util.h: what the CLI tests share: run the built `kelvin` as a user would and look at what
 * it left behind. Header-only (static inline functions), included after <cmocka.h>. */
#ifndef KL_TESTS_CLI_UTIL_H
#define KL_TESTS_CLI_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Split a test's argument line into words: blanks separate, '...' and "..." group (no escapes, no
 * expansion: this is not a shell, only a way to write argument vectors on one line). Returns the word
 * count; words point into buf. */
static inline int kl_test_split(const char *line, char *buf, size_t cap, char **words, int maxw)
{
  int n = 0;
  size_t k = 0;
  const char *p = line;
  while (*p) {
    while (*p == ' ' || *p == '\t') ++p;
    if (!*p) break;
    assert_true(n < maxw - 1);
    words[n++] = buf + k;
    while (*p && *p != ' ' && *p != '\t') {
      if (*p == '\'' || *p == '"') {
        const char q = *p++;
        while (*p && *p != q) {
          assert_true(k + 1 < cap);
          buf[k++] = *p++;
        }
        assert_true(*p == q);
        ++p;
      } else {
        assert_true(k + 1 < cap);
        buf[k++] = *p++;
      }
    }
    assert_true(k + 1 < cap);
    buf[k++] = '\0';
  }
  words[n] = NULL;
  return n;
}

/* Run argv (argv[0] found on PATH or given as a path) in cwd (NULL: here) with the extra environment
 * entries env ("NAME=value" words, NULL: none), without a shell. What it prints on the stream picked by
 * want (1 stdout, 2 stderr) goes into out (cap bytes, terminated); the other stream is discarded.
 * Returns the exit status, -1 if it did not exit normally. */
static inline int kl_test_run(const char *cwd, char *const *env, char *const *argv, int want, char *out, size_t cap)
{
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  int null = open("/dev/null", O_WRONLY);
  assert_true(null >= 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[1], want == 1 ? 1 : 2);
  posix_spawn_file_actions_adddup2(&fa, null, want == 1 ? 2 : 1);
  posix_spawn_file_actions_addclose(&fa, fd[0]);
  if (cwd) posix_spawn_file_actions_addchdir_np(&fa, cwd);
  extern char **environ;
  int ne = 0, nx = 0;
  while (environ[ne]) ++ne;
  while (env && env[nx]) ++nx;
  char **envp = calloc((size_t)(ne + nx + 1), sizeof *envp);
  assert_non_null(envp);
  int k = 0;
  for (int i = 0; i < ne; ++i) { /* an inherited variable that env sets again is left out: env's wins */
    const size_t nl = strcspn(environ[i], "=");
    int again = 0;
    for (int j = 0; j < nx && !again; ++j) again = strncmp(env[j], environ[i], nl) == 0 && env[j][nl] == '=';
    if (!again) envp[k++] = environ[i];
  }
  for (int i = 0; i < nx; ++i) envp[k++] = env[i];
  pid_t pid;
  const int err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  free(envp);
  close(fd[1]);
  close(null);
  assert_int_equal(err, 0);
  size_t n = 0;
  ssize_t r;
  char sink[4096];
  while ((r = read(fd[0], n + 1 < cap ? out + n : sink, n + 1 < cap ? cap - 1 - n : sizeof sink)) > 0)
    if (n + 1 < cap) n += (size_t)r;
  out[n] = '\0';
  close(fd[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {}
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Run the built kelvin with the arguments written on one line (kl_test_split) in cwd (NULL: here), with
 * extra environment entries env (one line of NAME=value words, NULL: none), stdout discarded, stderr
 * into err (cap bytes). Returns the exit status (-1 if it did not exit normally). */
static inline int kl_test_kelvin(const char *cwd, const char *env, const char *args, char *err, size_t cap)
{
  static char abuf[16384], ebuf[4096];
  char *argv[256], *envv[32];
  char exe[1024];
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  argv[0] = exe;
  kl_test_split(args, abuf, sizeof abuf, argv + 1, 255);
  if (env) kl_test_split(env, ebuf, sizeof ebuf, envv, 32);
  return kl_test_run(cwd, env ? envv : NULL, argv, 2, err, cap);
}

/* 1 if the built kelvin finds an OpenCL device with double precision (`kelvin devices` marks the one it
 * would use "chosen (*)" at the start of a line). */
static inline int kl_test_have_opencl(void)
{
  char exe[1024], out[8192];
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  char *const dev[] = {exe, (char *)"devices", NULL};
  kl_test_run(NULL, NULL, dev, 1, out, sizeof out);
  for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (strncmp(l, "chosen (*)", 10) == 0) return 1;
  return 0;
}

/* 1 if prog is an executable file in a folder of PATH (looked up without a shell). */
static inline int kl_test_have(const char *prog)
{
  const char *path = getenv("PATH");
  char dir[4096];
  while (path && *path) {
    const size_t len = strcspn(path, ":");
    snprintf(dir, sizeof dir, "%.*s/%s", (int)len, path, prog);
    if (len && access(dir, X_OK) == 0) return 1;
    path += len + (path[len] == ':');
  }
  return 0;
}

static inline int kl_test_rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(p);
}

/* Remove dir and everything under it (no shell); 0 on success. */
static inline int kl_test_rmtree(const char *dir)
{
  return nftw(dir, kl_test_rm_one, 16, FTW_DEPTH | FTW_PHYS);
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
  char path[4096];
  snprintf(path, sizeof path, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* The whole of dir/name (dir NULL: name is the path) as a malloc'd string; NULL if it cannot be read. */
static inline char *kl_test_read(const char *dir, const char *name)
{
  char path[4096];
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
