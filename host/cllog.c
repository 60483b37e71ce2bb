/* host/cllog.c: see host/cllog.h. The embedded programs carry `#line 1 "kernels/NAME"` before each
 * file they are made of (cmake/KlEmbedKernels.cmake); some device compilers report physical lines of the
 * whole text instead, which this maps back. */
#include "host/cllog.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* If the line at p is `#line N "FILE"`, its N and FILE (pointer, length); else 0. */
static int line_marker(const char *p, long *n, const char **file, size_t *flen)
{
  while (*p == ' ' || *p == '\t') ++p;
  if (*p != '#') return 0;
  ++p;
  while (*p == ' ' || *p == '\t') ++p;
  if (strncmp(p, "line", 4) != 0) return 0;
  p += 4;
  if (*p != ' ' && *p != '\t') return 0;
  char *end = NULL;
  const long v = strtol(p, &end, 10);
  if (end == p || v < 0) return 0;
  p = end;
  while (*p == ' ' || *p == '\t') ++p;
  if (*p != '"') return 0;
  const char *q = strchr(p + 1, '"');
  const char *nl = strchr(p + 1, '\n');
  if (!q || (nl && nl < q)) return 0;
  *n = v;
  *file = p + 1;
  *flen = (size_t)(q - p - 1);
  return 1;
}

/* Physical line `phys` (1-based) of src as FILE and line: 0 if src has fewer lines or no marker
 * precedes it (then the device's own name is as good as any). */
static int where(const char *src, long phys, const char **file, size_t *flen, long *line)
{
  const char *p = src;
  int named = 0;
  long cur = phys; /* logical number of physical line i */
  for (long i = 1; i < phys; ++i) {
    long n;
    const char *f;
    size_t fl;
    if (line_marker(p, &n, &f, &fl)) { /* the next line is line n of f */
      named = 1;
      *file = f;
      *flen = fl;
      cur = n;
    } else {
      ++cur;
    }
    p = strchr(p, '\n');
    if (!p) return 0;
    ++p;
  }
  if (!*p) return 0;
  *line = cur;
  return named;
}

/* Append n bytes of s to the string *out (length *len, room *cap), growing it; 0, or -1 when out of
 * memory (*out is then freed and NULL). */
static int put(char **out, size_t *len, size_t *cap, const char *s, size_t n)
{
  if (*len + n + 1 > *cap) {
    const size_t want = 2 * (*len + n + 1);
    char *grown = realloc(*out, want);
    if (!grown) {
      free(*out);
      *out = NULL;
      return -1;
    }
    *out = grown;
    *cap = want;
  }
  memcpy(*out + *len, s, n);
  *len += n;
  (*out)[*len] = '\0';
  return 0;
}

char *kl_cl_log_map(const char *src, const char *log)
{
  size_t len = 0, cap = strlen(log) + 64;
  char *out = malloc(cap);
  if (!out) return NULL;
  out[0] = '\0';
  for (const char *p = log; *p;) {
    /* "<NAME>:LINE:", NAME the device's name for the program; clang's "<built-in>" is the buffer of
     * predefined macros and -D options, not the program */
    if (*p == '<' && strncmp(p, "<built-in>", 10) != 0) {
      const char *q = p + 1;
      while (*q && *q != '>' && *q != '<' && *q != ':' && !isspace((unsigned char)*q)) ++q;
      if (*q == '>' && q > p + 1 && q[1] == ':' && isdigit((unsigned char)q[2])) {
        char *end = NULL;
        const long phys = strtol(q + 2, &end, 10);
        const char *f = NULL;
        size_t fl = 0;
        long line = 0;
        if (*end == ':' && where(src, phys, &f, &fl, &line)) {
          char num[32];
          const int nl = snprintf(num, sizeof num, ":%ld", line);
          if (put(&out, &len, &cap, f, fl) != 0 || put(&out, &len, &cap, num, (size_t)nl) != 0) return NULL;
          p = end; /* the ':' after the line goes through as text */
          continue;
        }
      }
    }
    if (put(&out, &len, &cap, p, 1) != 0) return NULL;
    ++p;
  }
  return out;
}
