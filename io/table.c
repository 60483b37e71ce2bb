/* io/table.c: the grinding problem's CSV inputs (see table.h). */
#include "io/table.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* append (a, b) to the growing columns x and y (3 values each when w = 3); -1 when out of memory */
static int push(double **x, double **y, int w, int *n, int *cap, const double *a, const double *b)
{
  if (*n == *cap) {
    const int nc = *cap ? 2 * *cap : 256;
    double *x2 = realloc(*x, (size_t)nc * (size_t)w * sizeof *x2);
    if (!x2) return -1;
    *x = x2;
    double *y2 = realloc(*y, (size_t)nc * (size_t)w * sizeof *y2);
    if (!y2) return -1;
    *y = y2;
    *cap = nc;
  }
  memcpy(*x + (size_t)*n * w, a, (size_t)w * sizeof *a);
  memcpy(*y + (size_t)*n * w, b, (size_t)w * sizeof *b);
  ++*n;
  return 0;
}

kelvin_status kl_read_path_csv(const char *path, int *npt, double **pts, double **nrms, char *msg, int cap)
{
  *npt = 0;
  *pts = *nrms = NULL;
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(msg, (size_t)cap, "%s: cannot read the path: %s", path, strerror(errno));
    return KELVIN_ERR_CONFIG;
  }
  char line[1024];
  int ln = 0, col[6] = {-1, -1, -1, -1, -1, -1}, n = 0, capn = 0;
  static const char *const names[] = {"x", "y", "z", "nx", "ny", "nz"};
  kelvin_status st = KELVIN_OK;
  while (fgets(line, sizeof line, f)) {
    ++ln;
    if (line[0] == '#' || line[0] == '\n') continue;
    if (col[0] < 0 && col[1] < 0) { /* header */
      char *save = NULL;
      int c = 0;
      for (char *tok = strtok_r(line, ",\r\n", &save); tok; tok = strtok_r(NULL, ",\r\n", &save), ++c) {
        while (*tok == ' ') ++tok;
        for (int k = 0; k < 6; ++k)
          if (strcmp(tok, names[k]) == 0) col[k] = c;
      }
      for (int k = 0; k < 6; ++k)
        if (col[k] < 0) {
          snprintf(msg, (size_t)cap, "%s:%d: missing column '%s' (need x,y,z,nx,ny,nz)", path, ln, names[k]);
          st = KELVIN_ERR_CONFIG;
          goto done;
        }
      continue;
    }
    double val[32] = {0};
    int c = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, ",\r\n", &save); tok && c < 32; tok = strtok_r(NULL, ",\r\n", &save), ++c) {
      char *end;
      val[c] = strtod(tok, &end);
      while (*end == ' ') ++end;
      if (end == tok || *end || !isfinite(val[c])) {
        snprintf(msg, (size_t)cap, "%s:%d: column %d: must be a number, got '%s'", path, ln, c + 1, tok);
        st = KELVIN_ERR_CONFIG;
        goto done;
      }
    }
    double p[3], nv[3];
    for (int k = 0; k < 3; ++k) {
      if (col[k] >= c || col[k + 3] >= c) {
        snprintf(msg, (size_t)cap, "%s:%d: row has %d columns, fewer than the header", path, ln, c);
        st = KELVIN_ERR_CONFIG;
        goto done;
      }
      p[k] = val[col[k]];
      nv[k] = val[col[k + 3]];
    }
    const double nn = sqrt(nv[0] * nv[0] + nv[1] * nv[1] + nv[2] * nv[2]);
    if (fabs(nn - 1.0) > 1e-3) {
      snprintf(msg, (size_t)cap, "%s:%d: nx,ny,nz: the normal must be a unit vector, got length %.6g", path, ln, nn);
      st = KELVIN_ERR_CONFIG;
      goto done;
    }
    if (push(pts, nrms, 3, &n, &capn, p, nv) != 0) {
      snprintf(msg, (size_t)cap, "%s: out of memory", path);
      st = KELVIN_ERR_NOMEM;
      goto done;
    }
  }
  if (n < 2) {
    snprintf(msg, (size_t)cap, "%s: the path needs at least 2 points, got %d", path, n);
    st = KELVIN_ERR_CONFIG;
  }
done:
  fclose(f);
  if (st != KELVIN_OK) {
    free(*pts);
    free(*nrms);
    *pts = *nrms = NULL;
    n = 0;
  }
  *npt = n;
  return st;
}

kelvin_status kl_read_target_csv(const char *path, int *nout, double **sout, double **fout, char *msg, int cap)
{
  *nout = 0;
  *sout = *fout = NULL;
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(msg, (size_t)cap, "%s: cannot read the target profile: %s", path, strerror(errno));
    return KELVIN_ERR_CONFIG;
  }
  double *ss = NULL, *ff = NULL;
  int n = 0, capn = 0, ln = 0, header = 0;
  kelvin_status st = KELVIN_OK;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    ++ln;
    if (line[0] == '#' || line[0] == '\n' || line[0] == '\r') continue;
    double a, b;
    char extra;
    if (sscanf(line, " %lf , %lf %c", &a, &b, &extra) != 2 || !isfinite(a) || !isfinite(b)) {
      if (!header && n == 0 && strstr(line, "s") && strstr(line, "force")) {
        header = 1;
        continue;
      }
      snprintf(msg, (size_t)cap, "%s:%d: expected 's,force' (two numbers), got '%.60s'", path, ln, strtok(line, "\r\n"));
      st = KELVIN_ERR_CONFIG;
      break;
    }
    if (b <= 0) {
      snprintf(msg, (size_t)cap, "%s:%d: force: must be > 0 N, got %g", path, ln, b);
      st = KELVIN_ERR_CONFIG;
      break;
    }
    if (n && a <= ss[n - 1]) {
      snprintf(msg, (size_t)cap, "%s:%d: s: must increase, got %g after %g", path, ln, a, ss[n - 1]);
      st = KELVIN_ERR_CONFIG;
      break;
    }
    if (push(&ss, &ff, 1, &n, &capn, &a, &b) != 0) {
      snprintf(msg, (size_t)cap, "%s: out of memory", path);
      st = KELVIN_ERR_NOMEM;
      break;
    }
  }
  fclose(f);
  if (st == KELVIN_OK && n < 1) {
    snprintf(msg, (size_t)cap, "%s: no 's,force' rows", path);
    st = KELVIN_ERR_CONFIG;
  }
  if (st != KELVIN_OK) {
    free(ss);
    free(ff);
    return st;
  }
  *nout = n;
  *sout = ss;
  *fout = ff;
  return KELVIN_OK;
}
