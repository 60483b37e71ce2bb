/* io/mesh_check.c: see mesh_check.h. The file is read once, front to back, in 64 KB blocks; nothing is
 * allocated for what it declares. */
#include "io/mesh_check.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* a block reader over fd (pread: the descriptor's offset stays for assimp) */
typedef struct rd {
  int fd, err;
  int text, cr, ctl; /* text: flag control characters (ctl) that assimp's line reader takes for line ends */
  long long size, off; /* bytes in the file, bytes read into buf so far */
  size_t pos, len;
  unsigned char buf[1 << 16];
} rd;

static int fill(rd *r)
{
  if (r->pos < r->len) return 1;
  if (r->off >= r->size) return 0;
  long long want = r->size - r->off;
  if (want > (long long)sizeof r->buf) want = (long long)sizeof r->buf;
  ssize_t n;
  do n = pread(r->fd, r->buf, (size_t)want, (off_t)r->off);
  while (n < 0 && errno == EINTR);
  if (n <= 0) { /* a read error, or the file shrank: its end is here */
    r->err = n < 0;
    r->size = r->off;
    return 0;
  }
  r->off += n;
  r->pos = 0;
  r->len = (size_t)n;
  return 1;
}

static int peek(rd *r) { return fill(r) ? r->buf[r->pos] : -1; }
static int next(rd *r)
{
  if (!fill(r)) return -1;
  const int c = r->buf[r->pos++];
  if (r->text) { /* assimp's PLY reader ends a line at NUL, form feed and a lone carriage return too */
    if ((r->cr && c != '\n') || c == 0 || c == '\f' || c == '\v') r->ctl = 1;
    r->cr = c == '\r';
  }
  return c;
}

/* skip n bytes; 0 if the file ends first */
static int skip(rd *r, long long n)
{
  const long long in = (long long)(r->len - r->pos);
  if (n <= in) {
    r->pos += (size_t)n;
    return 1;
  }
  n -= in;
  r->pos = r->len;
  if (n > r->size - r->off) {
    r->off = r->size;
    return 0;
  }
  r->off += n;
  return 1;
}

/* the next blank-separated token of the current line into t (cap bytes; a longer one, or one holding a NUL
 * byte, is cut and *long_ set);
 * 0 at the end of the line or file (the newline is not consumed) */
static int token(rd *r, char *t, size_t cap, int *long_)
{
  int c;
  while ((c = peek(r)) == ' ' || c == '\t' || c == '\r') next(r);
  if (c < 0 || c == '\n') return 0;
  size_t n = 0;
  *long_ = 0;
  while ((c = peek(r)) >= 0 && c != ' ' && c != '\t' && c != '\r' && c != '\n') {
    next(r);
    if (n + 1 < cap && c != 0)
      t[n++] = (char)c;
    else /* too long, or a NUL byte (text a NUL would cut short for a reader of C strings) */
      *long_ = 1;
  }
  t[n] = '\0';
  return 1;
}

/* past the end of the current line (*nul set if it held a NUL byte); 0 at the end of the file */
static int eol(rd *r, int *nul)
{
  int c;
  while ((c = next(r)) >= 0) {
    if (c == '\n') return 1;
    if (c == 0) *nul = 1;
  }
  return 0;
}

static kelvin_status bad(char *msg, int cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static kelvin_status bad(char *msg, int cap, const char *fmt, ...)
{
  if (msg && cap > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)cap, fmt, ap);
    va_end(ap);
  }
  return KELVIN_ERR_ARG;
}

//------- PLY (http://paulbourke.net/dataformats/ply/) -------

static const struct {
  const char *name;
  int size, sgn, flt;
} ply_types[] = {{"char", 1, 1, 0},   {"int8", 1, 1, 0},    {"uchar", 1, 0, 0},  {"uint8", 1, 0, 0},   {"short", 2, 1, 0},
                 {"int16", 2, 1, 0},  {"ushort", 2, 0, 0},  {"uint16", 2, 0, 0}, {"int", 4, 1, 0},     {"int32", 4, 1, 0},
                 {"uint", 4, 0, 0},   {"uint32", 4, 0, 0},  {"float", 4, 1, 1},  {"float32", 4, 1, 1}, {"double", 8, 1, 1},
                 {"float64", 8, 1, 1}};

static int ply_type(const char *s)
{
  for (int i = 0; i < (int)(sizeof ply_types / sizeof ply_types[0]); ++i)
    if (strcmp(s, ply_types[i].name) == 0) return i;
  return -1;
}

#define PLY_MAXEL 32
#define PLY_MAXPROP 128

typedef struct ply_el {
  char name[64], prop[PLY_MAXPROP][48]; /* names (a longer property name is compared by its first 47 bytes) */
  long long count;
  int line, np, tri; /* header line; properties; its lists are faces (face, tristrips) */
  int pline[PLY_MAXPROP];
  signed char type[PLY_MAXPROP], ctype[PLY_MAXPROP]; /* ctype >= 0: a list of type, its length a ctype */
} ply_el;

#define PLY_HEADER_MSG "malformed PLY header (expected 'ply', format, element and property lines, then 'end_header')"

static kelvin_status ply_data(rd *r, const char *path, int binary, int big, ply_el *el, int nel, int line, char *msg,
                              int cap);

static kelvin_status ply(rd *r, const char *path, char *msg, int cap)
{
  ply_el *el = malloc(PLY_MAXEL * sizeof *el);
  char *hdr = malloc(65536);
  if (!el || !hdr) {
    free(el);
    free(hdr);
    return bad(msg, cap, "%s: out of memory", path);
  }
  long long nh = 0;
  while (nh < 65535 && fill(r)) {
    const size_t k = r->len - r->pos < (size_t)(65535 - nh) ? r->len - r->pos : (size_t)(65535 - nh);
    memcpy(hdr + nh, r->buf + r->pos, k);
    r->pos += k;
    nh += (long long)k;
  }
  hdr[nh] = '\0';
  int line = 0, nel = 0, format = -1, ended = 0;
  long long body = 0;
  kelvin_status st = KELVIN_OK;
  for (char *l = hdr; !ended;) {
    char *e = memchr(l, '\n', (size_t)(hdr + nh - l));
    ++line;
    if (!e) { /* a header without its end (in the first 64 KB), or a line cut by the end of the file */
      st = bad(msg, cap, "%s:%d: " PLY_HEADER_MSG, path, line);
      break;
    }
    *e = '\0';
    size_t ll = (size_t)(e - l);
    if (ll && l[ll - 1] == '\r') l[--ll] = '\0';
    if (strlen(l) != ll || strpbrk(l, "\r\f\v")) { /* a NUL byte, or what assimp takes for a line end, inside a line */
      st = bad(msg, cap, "%s:%d: " PLY_HEADER_MSG, path, line);
      break;
    }
    char copy[512], *tok[8], *save = NULL;
    snprintf(copy, sizeof copy, "%s", l);
    int nt = 0;
    for (char *t = strtok_r(copy, " \t", &save); t && nt < 8; t = strtok_r(NULL, " \t", &save)) tok[nt++] = t;
    if (line == 1) {
      if (strcmp(l, "ply") != 0) {
        st = bad(msg, cap, "%s:1: " PLY_HEADER_MSG, path);
        break;
      }
    } else if (nt == 0 || ll >= sizeof copy) {
      st = bad(msg, cap, "%s:%d: " PLY_HEADER_MSG, path, line);
      break;
    } else if (strcmp(tok[0], "comment") == 0 || strcmp(tok[0], "obj_info") == 0) {
    } else if (strcmp(tok[0], "format") == 0) {
      if (format >= 0 || nt != 3 ||
          (format = strcmp(tok[1], "ascii") == 0                  ? 0
                    : strcmp(tok[1], "binary_little_endian") == 0 ? 1
                    : strcmp(tok[1], "binary_big_endian") == 0    ? 2
                                                                  : -1) < 0) {
        st = bad(msg, cap, "%s:%d: " PLY_HEADER_MSG, path, line);
        break;
      }
    } else if (strcmp(tok[0], "element") == 0) {
      char *end = NULL;
      errno = 0;
      const unsigned long long n = nt == 3 && tok[2][0] >= '0' && tok[2][0] <= '9' ? strtoull(tok[2], &end, 10) : 0;
      if (nt != 3 || !end || *end || errno || nel == PLY_MAXEL || strlen(tok[1]) >= sizeof el[0].name) {
        st = bad(msg, cap, "%s:%d: " PLY_HEADER_MSG, path, line);
        break;
      }
      /* the declared count against the limits, before anything is read or allocated for it */
      const int face = strcmp(tok[1], "face") == 0 || strcmp(tok[1], "tristrips") == 0;
      const long lim = face ? KL_MESH_MAX_TRIANGLES : KL_MESH_MAX_VERTICES;
      if (n > (unsigned long long)lim) {
        st = bad(msg, cap, "%s:%d: PLY header 'element %s %llu': more than the limit of %ld %s", path, line, tok[1], n, lim,
                 face ? "faces (triangles)" : strcmp(tok[1], "vertex") == 0 ? "vertices" : "elements");
        break;
      }
      /* an element given twice, or faces and strips: assimp 5.2 sizes its arrays by the first and writes the
       * second past their end (a heap overflow, assimp PR 5739 and 5651) */
      for (int k = 0; k < nel; ++k)
        if (strcmp(el[k].name, tok[1]) == 0 || (face && el[k].tri)) {
          st = bad(msg, cap, "%s:%d: PLY element '%s' after element '%s' (line %d): %s", path, line, tok[1], el[k].name,
                   el[k].line, strcmp(el[k].name, tok[1]) == 0 ? "an element given twice" : "faces given twice");
          break;
        }
      if (st != KELVIN_OK) break;
      ply_el *x = &el[nel++];
      memset(x, 0, sizeof *x);
      snprintf(x->name, sizeof x->name, "%s", tok[1]);
      x->count = (long long)n;
      x->line = line;
      x->tri = face;
    } else if (strcmp(tok[0], "property") == 0) {
      ply_el *x = nel ? &el[nel - 1] : NULL;
      const int list = nt >= 2 && strcmp(tok[1], "list") == 0;
      const int words = nt == (list ? 5 : 3); /* before any tok[] past nt is looked at */
      const int ct = list && words ? ply_type(tok[2]) : -1, ty = words ? ply_type(tok[list ? 3 : 1]) : -1;
      if (!x || x->np == PLY_MAXPROP || nt != (list ? 5 : 3) || ty < 0 || (list && (ct < 0 || ply_types[ct].flt))) {
        st = bad(msg, cap, "%s:%d: " PLY_HEADER_MSG, path, line);
        break;
      }
      const char *pn = tok[list ? 4 : 2];
      for (int q = 0; q < x->np; ++q)
        if (strncmp(x->prop[q], pn, sizeof x->prop[q] - 1) == 0) {
          st = bad(msg, cap, "%s:%d: PLY property '%s' given twice in element '%s' (line %d)", path, line, pn, x->name,
                   x->pline[q]);
          break;
        }
      if (st != KELVIN_OK) break;
      snprintf(x->prop[x->np], sizeof x->prop[x->np], "%s", pn);
      x->pline[x->np] = line;
      x->type[x->np] = (signed char)ty;
      x->ctype[x->np] = (signed char)(list ? ct : -1);
      x->np++;
    } else if (strcmp(tok[0], "end_header") == 0 && nt == 1) {
      ended = 1;
      body = e + 1 - hdr;
    } else {
      st = bad(msg, cap, "%s:%d: " PLY_HEADER_MSG, path, line);
      break;
    }
    l = e + 1;
  }
  free(hdr);
  if (st == KELVIN_OK && format < 0) st = bad(msg, cap, "%s: " PLY_HEADER_MSG " (no format line)", path);
  for (int e = 0; e < nel && st == KELVIN_OK; ++e)
    if (el[e].np == 0 && el[e].count > 0)
      st = bad(msg, cap, "%s:%d: PLY element '%s' has no properties", path, el[e].line, el[e].name);
  /* faces without a vertex element: assimp 5.2 then allocates without bound (22 GB, 35 s for a 300-byte
   * file; found by fuzz_ply) */
  int has_vertex = 0;
  for (int e = 0; e < nel; ++e) has_vertex |= strcmp(el[e].name, "vertex") == 0;
  for (int e = 0; e < nel && st == KELVIN_OK; ++e)
    if (el[e].tri && !has_vertex)
      st = bad(msg, cap, "%s:%d: PLY element '%s' without an element 'vertex' for its indices", path, el[e].line, el[e].name);
  if (st == KELVIN_OK) { /* the data from the end of the header: move the reader there */
    r->pos = r->len = 0;
    r->off = body;
    r->text = format == 0;
    st = ply_data(r, path, format != 0, format == 2, el, nel, line + 1, msg, cap);
  }
  free(el);
  return st;
}

static kelvin_status ply_truncated(const char *path, const ply_el *x, long long i, char *msg, int cap)
{
  return bad(msg, cap, "%s:%d: the file ends after %lld of the %lld '%s' elements this header line declares: it is truncated",
             path, x->line, i, x->count, x->name);
}

/* the data: every element the header declares is there, whole; faces make at most the triangle limit */
static kelvin_status ply_data(rd *r, const char *path, int binary, int big, ply_el *el, int nel, int line, char *msg,
                              int cap)
{
  long long ntri = 0;
  char t[128];
  int lng = 0;
  for (int e = 0; e < nel; ++e) {
    ply_el *x = &el[e];
    if (binary) {
      int fixed = 1;
      long long rec = 0;
      for (int p = 0; p < x->np; ++p) {
        fixed &= x->ctype[p] < 0;
        rec += ply_types[x->type[p]].size;
      }
      if (fixed) { /* every record of one size: one skip */
        const long long at = r->off - (long long)(r->len - r->pos);
        if (!skip(r, rec * x->count)) return ply_truncated(path, x, (r->size - at) / rec, msg, cap);
        continue;
      }
      for (long long i = 0; i < x->count; ++i)
        for (int p = 0; p < x->np; ++p) {
          if (x->ctype[p] < 0) {
            if (!skip(r, ply_types[x->type[p]].size)) return ply_truncated(path, x, i, msg, cap);
            continue;
          }
          const int cs = ply_types[x->ctype[p]].size;
          unsigned char b[4];
          for (int k = 0; k < cs; ++k) {
            const int c = next(r);
            if (c < 0) return ply_truncated(path, x, i, msg, cap);
            b[big ? k : cs - 1 - k] = (unsigned char)c; /* b: most significant byte first */
          }
          uint32_t u = 0;
          for (int k = 0; k < cs; ++k) u = u << 8 | b[k];
          long long n = (long long)u;
          if (ply_types[x->ctype[p]].sgn && (b[0] & 0x80)) n -= 1LL << (8 * cs);
          if (n < 0)
            return bad(msg, cap, "%s: '%s' element %lld of %lld (declared at line %d): a list of %lld values", path, x->name,
                       i + 1, x->count, x->line, n);
          if (!skip(r, n * ply_types[x->type[p]].size)) return ply_truncated(path, x, i, msg, cap);
          if (x->tri && n >= 3 && (ntri += n - 2) > KL_MESH_MAX_TRIANGLES)
            return bad(msg, cap, "%s: the faces make more than the limit of %ld triangles", path, (long)KL_MESH_MAX_TRIANGLES);
        }
      continue;
    }
    for (long long i = 0; i < x->count; ++i) {
      int c;
      for (;;) { /* blank lines between records are passed over */
        while ((c = peek(r)) == ' ' || c == '\t' || c == '\r') next(r);
        if (c != '\n') break;
        next(r);
        ++line;
      }
      if (c < 0) return ply_truncated(path, x, i, msg, cap);
      for (int p = 0; p < x->np; ++p) {
        long long n = 1;
        if (x->ctype[p] >= 0) {
          char *end = NULL;
          if (!token(r, t, sizeof t, &lng)) goto short_line;
          if (r->ctl) goto control;
          errno = 0;
          n = strtoll(t, &end, 10);
          if (lng || end == t || *end || errno || n < 0)
            return bad(msg, cap, "%s:%d: '%s' element %lld: a list length must be a whole number >= 0, got '%s'", path, line,
                       x->name, i + 1, t);
          if (x->tri && n >= 3 && (ntri += n - 2) > KL_MESH_MAX_TRIANGLES)
            return bad(msg, cap, "%s:%d: the faces up to this line make more than the limit of %ld triangles", path, line,
                       (long)KL_MESH_MAX_TRIANGLES);
        }
        for (long long k = 0; k < n; ++k) {
          char *end = NULL;
          if (!token(r, t, sizeof t, &lng)) goto short_line;
          if (r->ctl && !lng) goto control;
          (void)strtod(t, &end);
          if (lng)
            return bad(msg, cap, "%s:%d: '%s' element %lld: a value holding a NUL byte or longer than %d characters", path,
                       line, x->name, i + 1, (int)sizeof t - 1);
          if (end == t || *end)
            return bad(msg, cap, "%s:%d: '%s' element %lld: '%.40s' is not a number", path, line, x->name, i + 1, t);
        }
      }
      int nul = 0;
      eol(r, &nul); /* values past the properties are passed over; a NUL byte is not (text with one is cut
                     * short for a reader of C strings, assimp's) */
      if (nul) return bad(msg, cap, "%s:%d: '%s' element %lld: a NUL byte in the line", path, line, x->name, i + 1);
      if (r->ctl) goto control;
      ++line;
      continue;
    control:
      return bad(msg, cap, "%s:%d: '%s' element %lld: a form feed, vertical tab or carriage return without its line feed "
                 "in the line", path, line, x->name, i + 1);
    short_line:
      return bad(msg, cap, "%s:%d: '%s' element %lld of %lld has fewer values than the properties declared with it (line %d)",
                 path, line, x->name, i + 1, x->count, x->line);
    }
  }
  return KELVIN_OK;
}

//------- STL -------

static kelvin_status stl(rd *r, const char *path, char *msg, int cap)
{
  unsigned char head[512];
  size_t nh = 0;
  while (nh < sizeof head && fill(r)) head[nh++] = (unsigned char)next(r);
  int ascii = nh >= 6 && strncmp((const char *)head, "solid", 5) == 0;
  for (size_t i = 0; i < nh && ascii; ++i)
    ascii = head[i] == '\n' || head[i] == '\r' || head[i] == '\t' || (head[i] >= 0x20 && head[i] < 0x7f);
  if (ascii) { /* bounded by the file size; a truncated one would load as a partial mesh: it must end with "endsolid" */
    char tail[1024];
    const long long off = r->size > (long long)sizeof tail - 1 ? r->size - ((long long)sizeof tail - 1) : 0;
    r->pos = r->len = 0;
    r->off = off;
    size_t nt = 0;
    while (nt < sizeof tail - 1 && fill(r)) tail[nt++] = (char)next(r);
    tail[nt] = '\0';
    for (size_t i = 0; i < nt; ++i)
      if (!tail[i]) tail[i] = ' ';
    if (!strstr(tail, "endsolid")) return bad(msg, cap, "%s: ASCII STL without 'endsolid' at its end: the file is truncated", path);
    return KELVIN_OK;
  }
  /* binary: an 80-byte header, the triangle count (uint32, little-endian), 50 bytes a triangle */
  if (r->size < 84) return bad(msg, cap, "%s: binary STL of %lld bytes, shorter than its 84-byte header", path, r->size);
  const unsigned long long n =
    (unsigned long long)head[80] | (unsigned long long)head[81] << 8 | (unsigned long long)head[82] << 16 | (unsigned long long)head[83] << 24;
  if (n > (unsigned long long)KL_MESH_MAX_TRIANGLES)
    return bad(msg, cap, "%s: the binary STL header declares %llu triangles, more than the limit of %ld", path, n,
               (long)KL_MESH_MAX_TRIANGLES);
  const long long want = 84 + 50 * (long long)n;
  if (r->size != want)
    return bad(msg, cap, "%s: the binary STL header declares %llu triangles (84 + 50 x %llu = %lld bytes), the file is %lld bytes%s",
               path, n, n, want, r->size, r->size < want ? ": it is truncated" : "");
  return KELVIN_OK;
}

//------- OBJ: vertices and the triangles its faces make (a fan of n - 2 a face) -------

static kelvin_status obj(rd *r, const char *path, char *msg, int cap)
{
  long long nv = 0, ntri = 0;
  int line = 1, lng;
  char t[8];
  for (;;) {
    if (peek(r) < 0) break;
    if (token(r, t, sizeof t, &lng) && !lng) {
      if (strcmp(t, "v") == 0 && ++nv > KL_MESH_MAX_VERTICES)
        return bad(msg, cap, "%s:%d: more than the limit of %ld vertices", path, line, (long)KL_MESH_MAX_VERTICES);
      if (strcmp(t, "f") == 0) {
        long long k = 0;
        while (token(r, t, sizeof t, &lng)) ++k;
        if (k >= 3 && (ntri += k - 2) > KL_MESH_MAX_TRIANGLES)
          return bad(msg, cap, "%s:%d: the faces up to this line make more than the limit of %ld triangles", path, line,
                     (long)KL_MESH_MAX_TRIANGLES);
      }
    }
    int nul = 0;
    if (!eol(r, &nul)) break;
    ++line;
  }
  return KELVIN_OK;
}

kelvin_status kl_mesh_check(int fd, long long size, const char *path, char fmt, char *msg, int cap)
{
  rd *r = malloc(sizeof *r);
  if (!r) return bad(msg, cap, "%s: out of memory", path);
  r->fd = fd, r->err = 0, r->size = size, r->off = 0, r->pos = r->len = 0;
  r->text = r->cr = r->ctl = 0;
  const kelvin_status st = fmt == 'p' ? ply(r, path, msg, cap) : fmt == 's' ? stl(r, path, msg, cap) : obj(r, path, msg, cap);
  const int err = r->err;
  free(r);
  if (st != KELVIN_OK || !err) return st;
  bad(msg, cap, "%s: read error", path);
  return KELVIN_ERR_IO;
}
