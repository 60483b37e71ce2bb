/* io/table.c: the one CSV reader and the CSV inputs built on it (see table.h). Written here rather than
 * taken from libcsv because every message must name the physical line and the column, and because the
 * rules (empty fields and ragged rows are errors, strict numbers, a preamble of '#' lines before the
 * header) are ours; the grammar is RFC 4180's. */
#include "io/table.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/slurp.h"

static kelvin_status fail(char *msg, int cap, kelvin_status st, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static kelvin_status fail(char *msg, int cap, kelvin_status st, const char *fmt, ...)
{
  if (msg && cap > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)cap, fmt, ap);
    va_end(ap);
    kl_msg_oneline(msg);
  }
  return st;
}

/* at most 60 characters of s for a message, with "..." when cut */
static const char *clip(const char *s, char *buf, size_t cap)
{
  const size_t n = strlen(s);
  if (n < cap) return s;
  snprintf(buf, cap, "%.*s...", (int)(cap - 4), s);
  return buf;
}

kelvin_status kl_csv_parse_mem(const char *name, const char *text, size_t len, long max_rows, kl_csv_fn fn, void *ctx,
                               char *msg, int cap)
{
  size_t i = 0;
  if (len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB && (unsigned char)text[2] == 0xBF)
    i = 3;
  char *buf = malloc(len + 1);
  const char **f = malloc(sizeof *f * KL_CSV_MAX_COLS);
  char **head = NULL; /* the header's names, for messages */
  int ncols = -1;
  if (!buf || !f) {
    free(buf);
    free(f);
    return fail(msg, cap, KELVIN_ERR_NOMEM, "%s: out of memory", name);
  }
  kelvin_status st = KELVIN_OK;
  long line = 1, index = 0;
  char cb[80];
#define COL(k) (head && (k) < ncols ? head[k] : "?")
  while (i < len && st == KELVIN_OK) {
    if (text[i] == '\n') {
      ++i, ++line;
      continue;
    }
    if (text[i] == '\r' && i + 1 < len && text[i + 1] == '\n') {
      i += 2, ++line;
      continue;
    }
    if (index == 0 && text[i] == '#') { /* preamble */
      while (i < len && text[i] != '\n') ++i;
      continue;
    }
    const long rline = line;
    size_t o = 0;
    int n = 0;
    for (;;) { /* one field */
      if (n >= KL_CSV_MAX_COLS) {
        st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: more than %d columns (the limit)", name, rline, KL_CSV_MAX_COLS);
        break;
      }
      while (i < len && (text[i] == ' ' || text[i] == '\t')) ++i;
      const size_t s0 = o;
      f[n] = buf + o;
      if (i < len && text[i] == '"') {
        const long qline = line;
        ++i;
        for (;;) {
          if (i >= len) {
            st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: column %d: a quote opened here is never closed", name, qline,
                      n + 1);
            break;
          }
          const char ch = text[i];
          if (ch == '"') {
            if (i + 1 < len && text[i + 1] == '"') {
              buf[o++] = '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          if (ch == '\0') {
            st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: a NUL byte (not a text file?)", name, line);
            break;
          }
          if (ch == '\n') ++line;
          buf[o++] = ch;
          ++i;
        }
        if (st != KELVIN_OK) break;
        while (i < len && (text[i] == ' ' || text[i] == '\t')) ++i;
        if (i < len && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: column '%s': text after the closing quote", name, line,
                    index ? COL(n) : "(header)");
          break;
        }
      } else {
        while (i < len && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          if (text[i] == '"' || text[i] == '\0') {
            st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: column '%s': %s", name, line, index ? COL(n) : "(header)",
                      text[i] ? "a quote inside an unquoted field (quote the whole field: \"a \"\"b\"\"\")"
                              : "a NUL byte (not a text file?)");
            break;
          }
          buf[o++] = text[i++];
        }
        if (st != KELVIN_OK) break;
        while (o > s0 && (buf[o - 1] == ' ' || buf[o - 1] == '\t')) --o;
      }
      if (o == s0) {
        if (index)
          st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: column '%s': empty field (every cell needs a value)", name,
                    line, COL(n));
        else
          st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: header: column %d has no name", name, line, n + 1);
        break;
      }
      buf[o++] = '\0';
      ++n;
      if (i >= len) break;
      if (text[i] == ',') {
        ++i;
        continue;
      }
      if (text[i] == '\r') {
        if (i + 1 < len && text[i + 1] == '\n') {
          i += 2, ++line;
          break;
        }
        st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: a carriage return not followed by a line feed", name, line);
        break;
      }
      ++i, ++line; /* '\n' */
      break;
    }
    if (st != KELVIN_OK) break;
    if (index == 0) {
      ncols = n;
      head = calloc((size_t)n, sizeof *head);
      if (!head) {
        st = fail(msg, cap, KELVIN_ERR_NOMEM, "%s: out of memory", name);
        break;
      }
      for (int k = 0; k < n && st == KELVIN_OK; ++k)
        if (!(head[k] = strdup(f[k]))) st = fail(msg, cap, KELVIN_ERR_NOMEM, "%s: out of memory", name);
      if (st != KELVIN_OK) break;
    } else if (n != ncols) {
      st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: %d fields, but the header has %d", name, rline, n, ncols);
      break;
    }
    if (index > max_rows) {
      st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: more than %ld data rows (the limit)", name, rline, max_rows);
      break;
    }
    const kl_csv_row row = {n, f, rline, index};
    st = fn(ctx, &row, msg, cap);
    if (st != KELVIN_OK && msg && cap > 0) kl_msg_oneline(msg); /* a reader's message may echo a quoted field's line break */
    ++index;
  }
#undef COL
  if (st == KELVIN_OK && index == 0)
    st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s: no header row (the file is empty; expected a line naming the columns)",
              name);
  (void)clip;
  (void)cb;
  if (head)
    for (int k = 0; k < ncols; ++k) free(head[k]);
  free(head);
  free(buf);
  free(f);
  return st;
}

kelvin_status kl_csv_parse_file(const char *path, long max_rows, kl_csv_fn fn, void *ctx, char *msg, int cap)
{
  char *text = NULL, why[256];
  size_t len = 0;
  const kelvin_status st = kl_io_slurp(path, KL_CSV_MAX_BYTES, &text, &len, why, sizeof why);
  if (st != KELVIN_OK) return fail(msg, cap, st, "%s: %s", path, why);
  const kelvin_status s2 = kl_csv_parse_mem(path, text, len, max_rows, fn, ctx, msg, cap);
  free(text);
  return s2;
}

/* "a|b|c" of a column's accepted names */
static void names_of(const kl_csv_col *c, char *buf, size_t cap)
{
  buf[0] = '\0';
  for (int j = 0; c->names[j]; ++j) {
    if (j) strncat(buf, "' or '", cap - strlen(buf) - 1);
    strncat(buf, c->names[j], cap - strlen(buf) - 1);
  }
}

kelvin_status kl_csv_columns(const char *file, const kl_csv_row *h, kl_csv_col *cols, int ncols, char *msg, int cap)
{
  char nm[256];
  for (int k = 0; k < ncols; ++k) {
    cols[k].idx = -1;
    cols[k].which = 0;
    for (int i = 0; i < h->n; ++i)
      for (int j = 0; cols[k].names[j]; ++j)
        if (strcmp(h->f[i], cols[k].names[j]) == 0) {
          if (cols[k].idx >= 0) {
            names_of(&cols[k], nm, sizeof nm);
            return fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: header: column '%s' given twice ('%s' and '%s')", file,
                        h->line, nm, h->f[cols[k].idx], h->f[i]);
          }
          cols[k].idx = i;
          cols[k].which = j;
        }
    if (cols[k].idx < 0 && cols[k].required) {
      char all[512] = "";
      for (int q = 0; q < ncols; ++q)
        if (cols[q].required) {
          if (all[0]) strncat(all, ",", sizeof all - strlen(all) - 1);
          strncat(all, cols[q].names[0], sizeof all - strlen(all) - 1);
        }
      names_of(&cols[k], nm, sizeof nm);
      return fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: header: missing column '%s' (need %s)", file, h->line, nm, all);
    }
  }
  return KELVIN_OK;
}

int kl_parse_number(const char *s, double *out)
{
  if (!s[0]) return -1;
  for (const char *p = s; *p; ++p)
    if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '+' || *p == 'e' || *p == 'E')) return -1;
  char *end = NULL;
  errno = 0;
  const double v = strtod(s, &end);
  if (end == s || *end != '\0' || !isfinite(v) || (errno == ERANGE && fabs(v) > 1.0)) return -1;
  *out = v;
  return 0;
}

kelvin_status kl_csv_number(const char *file, const kl_csv_row *row, const kl_csv_col *col, double *out, char *msg,
                            int cap)
{
  const char *s = row->f[col->idx];
  if (kl_parse_number(s, out) == 0) return KELVIN_OK;
  char b[80];
  return fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: column '%s': must be a finite number, got '%s'", file, row->line,
              col->names[col->which], clip(s, b, sizeof b));
}

//------------------------------------------------------------------------------------------------------
// the readers

/* growing columns of doubles (k per row) and the row lines */
typedef struct cols {
  double *a[3];
  long *line;
  int k, n, cap;
} cols;

static int cols_push(cols *c, const double *v, long line)
{
  if (c->n == c->cap) {
    const int nc = c->cap ? 2 * c->cap : 256;
    for (int j = 0; j < c->k; ++j) {
      double *p = realloc(c->a[j], sizeof(double) * (size_t)nc);
      if (!p) return -1;
      c->a[j] = p;
    }
    long *l = realloc(c->line, sizeof(long) * (size_t)nc);
    if (!l) return -1;
    c->line = l;
    c->cap = nc;
  }
  for (int j = 0; j < c->k; ++j) c->a[j][c->n] = v[j];
  c->line[c->n++] = line;
  return 0;
}

static void cols_free(cols *c)
{
  for (int j = 0; j < 3; ++j) free(c->a[j]);
  free(c->line);
  memset(c, 0, sizeof *c);
}

static const char *const N_X[] = {"x_m", "x", NULL}, *const N_Y[] = {"y_m", "y", NULL}, *const N_Z[] = {"z_m", "z", NULL},
                         *const N_NX[] = {"nx", NULL}, *const N_NY[] = {"ny", NULL}, *const N_NZ[] = {"nz", NULL},
                         *const N_S[] = {"s_m", "s", NULL}, *const N_F[] = {"target_N", "force_N", "force", NULL},
                         *const N_O[] = {"offset_m", "offset", NULL}, *const N_V[] = {"speed_m_s", "speed", NULL};

typedef struct path_ctx {
  const char *file;
  double tol;
  kl_csv_col col[6];
  double *p, *nv;
  long *lines;
  int n, cap;
} path_ctx;

static kelvin_status path_row(void *vp, const kl_csv_row *r, char *msg, int cap)
{
  path_ctx *c = vp;
  if (r->index == 0) return kl_csv_columns(c->file, r, c->col, 6, msg, cap);
  double v[6];
  for (int k = 0; k < 6; ++k) {
    const kelvin_status st = kl_csv_number(c->file, r, &c->col[k], &v[k], msg, cap);
    if (st != KELVIN_OK) return st;
  }
  for (int k = 0; k < 3; ++k) /* bounded: no sum of squares, arc length or bound overflows downstream */
    if (!(fabs(v[k]) <= KL_PATH_MAX_COORD))
      return fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: column '%s': must be within +-%g m (the limit; the path is read "
                  "in metres), got %.9g", c->file, r->line, c->col[k].names[c->col[k].which], KL_PATH_MAX_COORD, v[k]);
  const double nn = sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5]);
  if (!(fabs(nn - 1.0) <= c->tol))
    return fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: columns nx,ny,nz: the normal must be unit length (within %g), got |n| = %.9g",
                c->file, r->line, c->tol, nn);
  if (c->n == c->cap) {
    const int nc = c->cap ? 2 * c->cap : 256;
    double *p = realloc(c->p, sizeof(double) * 3 * (size_t)nc);
    if (p) c->p = p;
    double *q = realloc(c->nv, sizeof(double) * 3 * (size_t)nc);
    if (q) c->nv = q;
    long *l = realloc(c->lines, sizeof(long) * (size_t)nc);
    if (l) c->lines = l;
    if (!p || !q || !l) return fail(msg, cap, KELVIN_ERR_NOMEM, "%s: out of memory", c->file);
    c->cap = nc;
  }
  for (int k = 0; k < 3; ++k) c->p[3 * c->n + k] = v[k], c->nv[3 * c->n + k] = v[3 + k];
  c->lines[c->n++] = r->line;
  return KELVIN_OK;
}

kelvin_status kl_read_path_csv(const char *path, double tol_n, int *npt, double **pts, double **nrms, long **lines,
                               char *msg, int cap)
{
  *npt = 0;
  *pts = *nrms = NULL;
  if (lines) *lines = NULL;
  path_ctx c = {path, tol_n, {{N_X, 1, -1, 0}, {N_Y, 1, -1, 0}, {N_Z, 1, -1, 0}, {N_NX, 1, -1, 0}, {N_NY, 1, -1, 0}, {N_NZ, 1, -1, 0}},
                NULL, NULL, NULL, 0, 0};
  kelvin_status st = kl_csv_parse_file(path, KL_CSV_MAX_ROWS, path_row, &c, msg, cap);
  if (st == KELVIN_OK && c.n < 2)
    st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s: the path needs at least 2 points, got %d", path, c.n);
  int distinct = 0; /* a path of one point repeated has no direction and no length */
  for (int k = 1; st == KELVIN_OK && k < c.n && !distinct; ++k)
    distinct = c.p[3 * k] != c.p[0] || c.p[3 * k + 1] != c.p[1] || c.p[3 * k + 2] != c.p[2];
  if (st == KELVIN_OK && !distinct)
    st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: columns x,y,z: the point repeats the previous sample (line %ld), as "
              "every point does; the path needs at least 2 distinct points", path, c.lines[1], c.lines[0]);
  if (st != KELVIN_OK) {
    free(c.p);
    free(c.nv);
    free(c.lines);
    return st;
  }
  *npt = c.n;
  *pts = c.p;
  *nrms = c.nv;
  if (lines)
    *lines = c.lines;
  else
    free(c.lines);
  return KELVIN_OK;
}

typedef struct series_ctx {
  const char *file;
  kl_csv_col col[3];
  int k;
  cols out;
} series_ctx;

static kelvin_status target_row(void *vp, const kl_csv_row *r, char *msg, int cap)
{
  series_ctx *c = vp;
  if (r->index == 0) return kl_csv_columns(c->file, r, c->col, c->k, msg, cap);
  double v[3] = {0, 0, 0};
  for (int k = 0; k < c->k; ++k) {
    const kelvin_status st = kl_csv_number(c->file, r, &c->col[k], &v[k], msg, cap);
    if (st != KELVIN_OK) return st;
  }
  if (c->out.n && !(v[0] > c->out.a[0][c->out.n - 1]))
    return fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: column '%s': must increase, got %.9g after %.9g", c->file, r->line,
                c->col[0].names[c->col[0].which], v[0], c->out.a[0][c->out.n - 1]);
  const int vi = c->k == 2 ? 1 : 2; /* force, or speed */
  if (!(v[vi] > 0))
    return fail(msg, cap, KELVIN_ERR_CONFIG, "%s:%ld: column '%s': must be > 0 %s, got %.9g", c->file, r->line,
                c->col[vi].names[c->col[vi].which], c->k == 2 ? "N" : "m/s", v[vi]);
  if (cols_push(&c->out, v, r->line) != 0) return fail(msg, cap, KELVIN_ERR_NOMEM, "%s: out of memory", c->file);
  return KELVIN_OK;
}

kelvin_status kl_read_target_csv(const char *path, int *n, double **s, double **F, char *msg, int cap)
{
  *n = 0;
  *s = *F = NULL;
  series_ctx c = {path, {{N_S, 1, -1, 0}, {N_F, 1, -1, 0}}, 2, {{NULL}, NULL, 2, 0, 0}};
  kelvin_status st = kl_csv_parse_file(path, KL_CSV_MAX_ROWS, target_row, &c, msg, cap);
  if (st == KELVIN_OK && c.out.n < 1) st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s: no data rows (need s_m,target_N)", path);
  if (st != KELVIN_OK) {
    cols_free(&c.out);
    return st;
  }
  *n = c.out.n;
  *s = c.out.a[0];
  *F = c.out.a[1];
  free(c.out.line);
  return KELVIN_OK;
}

kelvin_status kl_read_pass_csv(const char *path, int *n, double **s, double **o, double **v, long **lines, char *msg,
                               int cap)
{
  *n = 0;
  *s = *o = *v = NULL;
  *lines = NULL;
  series_ctx c = {path, {{N_S, 1, -1, 0}, {N_O, 1, -1, 0}, {N_V, 1, -1, 0}}, 3, {{NULL}, NULL, 3, 0, 0}};
  kelvin_status st = kl_csv_parse_file(path, KL_CSV_MAX_ROWS, target_row, &c, msg, cap);
  if (st == KELVIN_OK && c.out.n < 2)
    st = fail(msg, cap, KELVIN_ERR_CONFIG, "%s: need at least 2 rows of s_m,offset_m,speed_m_s, got %d", path, c.out.n);
  if (st != KELVIN_OK) {
    cols_free(&c.out);
    return st;
  }
  *n = c.out.n;
  *s = c.out.a[0];
  *o = c.out.a[1];
  *v = c.out.a[2];
  *lines = c.out.line;
  return KELVIN_OK;
}
