/* optimiser/cli.c: shared CLI helpers (see cli.h). */
#include "optimiser/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* "kelvin: <message>\n" on stderr */
static void say(const char *fmt, va_list ap)
{
  fputs("kelvin: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void kl_cli_error(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  say(fmt, ap);
  va_end(ap);
}

void kl_cli_note(const kl_cli_common *c, const char *fmt, ...)
{
  if (c && c->quiet) return;
  va_list ap;
  va_start(ap, fmt);
  say(fmt, ap);
  va_end(ap);
}

int kl_cli_double(const char *opt, const char *s, double *out)
{
  char *end = NULL;
  errno = 0;
  const double v = strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) {
    kl_cli_error("%s: must be a finite number, got '%s'", opt, s);
    return -1;
  }
  *out = v;
  return 0;
}

int kl_cli_long(const char *opt, const char *s, long lo, long hi, long *out)
{
  char *end = NULL;
  errno = 0;
  const long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
    kl_cli_error("%s: must be a whole number in [%ld, %ld], got '%s'", opt, lo, hi, s);
    return -1;
  }
  *out = v;
  return 0;
}

int kl_cli_double_list(const char *opt, const char *s, double *out, int cap, int *n)
{
  *n = 0;
  const char *p = s;
  char item[128];
  while (1) {
    const char *comma = strchr(p, ',');
    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 0 || len >= sizeof item) {
      kl_cli_error("%s: expected a comma-separated list of numbers, got '%s'", opt, s);
      return -1;
    }
    if (*n >= cap) {
      kl_cli_error("%s: at most %d values, got more in '%s'", opt, cap, s);
      return -1;
    }
    memcpy(item, p, len);
    item[len] = '\0';
    if (kl_cli_double(opt, item, &out[*n]) != 0) return -1;
    ++*n;
    if (!comma) break;
    p = comma + 1;
  }
  return 0;
}

int kl_cli_choice(const char *opt, const char *s, const char *const *names)
{
  for (int i = 0; names[i]; ++i)
    if (strcmp(s, names[i]) == 0) return i;
  char list[512] = "";
  for (int i = 0; names[i]; ++i) {
    if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
    strncat(list, names[i], sizeof list - strlen(list) - 1);
  }
  kl_cli_error("%s: must be one of %s, got '%s'", opt, list, s);
  return -1;
}

void kl_cli_path(char *buf, size_t cap, const char *dir, const char *name)
{
  snprintf(buf, cap, "%s/%s", dir, name);
}

int kl_cli_mkdir(const char *dir)
{
  char buf[4096];
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
    kl_cli_error("--out: path too long: '%s'", dir);
    return -1;
  }
  for (char *p = buf + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
      kl_cli_error("cannot create folder '%s': %s", buf, strerror(errno));
      return -1;
    }
    *p = '/';
  }
  if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
    kl_cli_error("cannot create folder '%s': %s", buf, strerror(errno));
    return -1;
  }
  struct stat st;
  if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
    kl_cli_error("'%s' exists and is not a folder", buf);
    return -1;
  }
  return 0;
}

int kl_out_open(kl_out *o, const char *dir, const char *name)
{
  o->f = NULL;
  o->tmp[0] = '\0';
  kl_cli_path(o->path, sizeof o->path, dir, name);
  snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->path, (long)getpid());
  o->f = fopen(o->tmp, "w");
  if (!o->f) {
    kl_cli_error("cannot write '%s': %s", o->tmp, strerror(errno));
    o->tmp[0] = '\0';
    return -1;
  }
  return 0;
}

int kl_out_commit(kl_out *o)
{
  if (!o->f) return -1;
  const int bad = ferror(o->f);
  const int cl = fclose(o->f);
  o->f = NULL;
  if (bad || cl != 0) {
    kl_cli_error("error writing '%s'", o->tmp);
    unlink(o->tmp);
    return -1;
  }
  if (rename(o->tmp, o->path) != 0) {
    kl_cli_error("cannot rename '%s' to '%s': %s", o->tmp, o->path, strerror(errno));
    unlink(o->tmp);
    return -1;
  }
  o->tmp[0] = '\0';
  return 0;
}

void kl_out_abort(kl_out *o)
{
  if (o->f) fclose(o->f);
  o->f = NULL;
  if (o->tmp[0]) unlink(o->tmp);
  o->tmp[0] = '\0';
}

int kl_cli_gnuplot(const kl_cli_common *c, const char *dir, const char *png, const char *script)
{
  char gp[600];
  snprintf(gp, sizeof gp, "%s.gp", png);
  kl_out o;
  if (kl_out_open(&o, dir, gp) != 0) return -1;
  fprintf(o.f, "%s", script);
  if (kl_out_commit(&o) != 0) return -1;
  if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
    kl_cli_note(c, "gnuplot not found: figure script left in %s/%s (install gnuplot-nox to draw it)", dir, gp);
    return 1;
  }
  /* gnuplot writes the PNG to a temporary name given in the script as 'OUTPUT'; rename on success */
  char tmp[4300], final[4300], cmd[9000];
  snprintf(final, sizeof final, "%s/%s", dir, png);
  snprintf(tmp, sizeof tmp, "%s/%s.tmp.%ld", dir, png, (long)getpid());
  snprintf(cmd, sizeof cmd, "cd '%s' && gnuplot -e \"OUTPUT='%s.tmp.%ld'\" '%s' 2>&1", dir, png, (long)getpid(), gp);
  FILE *p = popen(cmd, "r");
  if (!p) {
    kl_cli_error("cannot run gnuplot: %s", strerror(errno));
    return -1;
  }
  char line[512];
  char log[4096] = "";
  while (fgets(line, sizeof line, p))
    if (strlen(log) + strlen(line) < sizeof log) strcat(log, line);
  const int st = pclose(p);
  if (st != 0 || access(tmp, F_OK) != 0) {
    kl_cli_error("gnuplot failed on %s/%s:\n%s", dir, gp, log);
    unlink(tmp);
    return -1;
  }
  if (rename(tmp, final) != 0) {
    kl_cli_error("cannot rename '%s': %s", tmp, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}
