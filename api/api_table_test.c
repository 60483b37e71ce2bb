/* api/api_table_test.c: kelvin_impact_batch_write as a program sees it (libkelvin.so, public headers). A
 * batch of 70001 scenarios (two HDF5 chunks, the second partial) of every model, law and rule, unknown
 * codes, and inputs from random bit patterns (subnormals, negatives, zeros, huge and infinite values),
 * run on the host, then written as CSV and as HDF5. The CSV is parsed back here (strtod) and every number
 * must equal the batch's bit for bit; the HDF5 file is read with the HDF5 C API and every column must
 * equal the CSV's, with the names, units, order, chunking and filters expected. A write stopped by the
 * progress callback leaves no file and no temporary, and an earlier file as it was. */
#include <dirent.h>
#include <hdf5.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/cli_util.h"

#include <kelvin/batch.h>

#define P 70001
#define NCOL 22
#define NNUM 16 /* numeric columns: m_kg .. damp */

/* the table's columns and units, written out here as docs/api.md states them */
static const char *const names[NCOL] = {"id",     "model",   "law",    "rule",   "m_kg",    "K",      "n",
                                        "cr",     "v0_m_s",  "fe_N",   "c",      "n2",      "rate_exp", "dmax_m",
                                        "tmax_s", "fpeak_N", "tc_s",   "cr_eff", "ediss",   "damp",   "status",
                                        "status_text"};
static const char *const units[NCOL] = {"1", "-", "-", "-", "kg", "N/m^n", "1", "1", "m/s", "N",
                                        "N (s/m)^rate_exp / m^n2", "1", "1",
                                        "m", "s", "N", "s", "1",  "1",     "N s/m (kv), s/m (hc)", "-", "-"};
#define C_STATUS 20 /* the status column; status_text is the last */

static char tmpdir[256];
static kelvin_impact_batch *batch;

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* a double from random bits, NaN excluded (it has no one text) */
static double any_double(void)
{
  for (;;) {
    const uint64_t u = next();
    double x;
    memcpy(&x, &u, sizeof x);
    if (!isnan(x)) return x;
  }
}

static int setup(void **state)
{
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/kelvin-api-table-XXXXXX");
  if (!mkdtemp(tmpdir)) return -1;
  if (kelvin_impact_batch_create(P, 0, &batch) != KELVIN_OK) return -1;
  for (size_t i = 0; i < P; ++i) {
    kelvin_impact_in in = {.m = 0.1 + 1e-3 * (double)(i % 97), .K = 1e8, .n = 1.5,
                           .cr = 0.05 + 0.9 * (double)(i % 89) / 88.0, .v0 = 0.01 * (double)(1 + i % 101), .fe = 0.0};
    const int v = (int)(i % 12);
    in.model = v < 2 ? KELVIN_MODEL_KV : v < 7 ? KELVIN_MODEL_HC : v < 9 ? KELVIN_MODEL_EF : KELVIN_MODEL_KV;
    in.rule = (kelvin_rule)(v % 2);
    in.law = (kelvin_law)(v < 7 ? v - 2 : 0);
    if (v == 9) in.model = (kelvin_model)7; /* an unknown model: "?" */
    if (v == 10) in.model = KELVIN_MODEL_HC, in.law = (kelvin_law)9;
    if (v == 11) /* the general law: its own three inputs are written; '-' (CSV) and NaN (HDF5) for the others */
      in.model = KELVIN_MODEL_GEN, in.c = 1e3 * (double)(1 + i % 7), in.n2 = 0.5 * (double)(i % 4),
      in.rate_exp = 0.5 + 0.25 * (double)(i % 5);
    else
      in.c = 1.0, in.n2 = 2.0, in.rate_exp = 3.0; /* ignored by the other models, and not written */
    if (i % 13 == 0) in.m = any_double();
    if (i % 17 == 0) in.v0 = any_double();
    if (i % 19 == 0) in.fe = any_double();
    if (i % 23 == 0) in.K = -0.0;
    if (i % 29 == 0) in.cr = 4.9406564584124654e-324 * (double)(i % 1000);
    if (i % 31 == 0 && in.model == KELVIN_MODEL_KV) in.fe = 2.0; /* kv with a force */
    if (kelvin_impact_batch_set(batch, i, &in) != KELVIN_OK) return -1;
  }
  return kelvin_impact_batch_run(batch, NULL) == KELVIN_OK ? 0 : -1;
}

static int teardown(void **state)
{
  (void)state;
  kelvin_impact_batch_free(batch);
  return kl_test_rmtree(tmpdir) == 0 ? 0 : -1;
}

static void path_of(char *buf, size_t cap, const char *name) { snprintf(buf, cap, "%s/%s", tmpdir, name); }

/* the text of the status bits, written out here */
static void status_text(int st, char *buf)
{
  static const char *const bits[] = {"bad_mass", "bad_stiffness", "bad_cr",   "bad_speed",     "bad_exponent",
                                     "bad_law",  "no_converge",   "bad_input", "no_separation", "unsupported"};
  strcpy(buf, st ? "" : "ok");
  for (int i = 0; i < 10; ++i)
    if (st & (1 << i)) {
      if (buf[0]) strcat(buf, "|");
      strcat(buf, bits[i]);
    }
}

/* the CSV parsed: per row the 16 numbers (NaN where the CSV has '-'), the id, the status and the four strings */
typedef struct table {
  double num[NNUM][P];
  long id[P], status[P];
  char str[4][P][32]; /* model, law, rule, status_text */
} table;
static table csv;

static void test_csv_exact(void **state)
{
  (void)state;
  char path[512];
  path_of(path, sizeof path, "t.csv");
  assert_int_equal(kelvin_impact_batch_write(batch, path, KELVIN_FORMAT_CSV), KELVIN_OK);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  static char line[4096];
  assert_non_null(fgets(line, sizeof line, f));
  char head[512] = "";
  for (int c = 0; c < NCOL; ++c) strcat(strcat(head, names[c]), c + 1 < NCOL ? "," : "\n");
  assert_string_equal(line, head);
  long bad = 0;
  for (size_t r = 0; r < P; ++r) {
    assert_non_null(fgets(line, sizeof line, f));
    line[strcspn(line, "\n")] = '\0';
    char *fld[NCOL], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(line, ",", &save); t && n < NCOL; t = strtok_r(NULL, ",", &save)) fld[n++] = t;
    assert_int_equal(n, NCOL);
    kelvin_impact_in in;
    kelvin_impact_out y;
    kelvin_impact_batch_input(batch, r, &in);
    kelvin_impact_batch_get(batch, r, &y);
    const int gen = in.model == KELVIN_MODEL_GEN;
    const double want[NNUM] = {in.m,   in.K,    in.n,         in.cr,   in.v0,  in.fe,    gen ? in.c : NAN,
                               gen ? in.n2 : NAN, gen ? in.rate_exp : NAN, y.dmax, y.tmax, y.fpeak, y.tc,
                               y.cr_eff, y.ediss, y.damp};
    csv.id[r] = strtol(fld[0], NULL, 10);
    csv.status[r] = strtol(fld[C_STATUS], NULL, 10);
    for (int k = 0; k < NNUM; ++k) {
      csv.num[k][r] = strcmp(fld[4 + k], "-") == 0 ? NAN : strtod(fld[4 + k], NULL);
      const int same = isnan(want[k]) ? strcmp(fld[4 + k], "-") == 0
                                      : memcmp(&csv.num[k][r], &want[k], sizeof(double)) == 0;
      if (!same && bad++ < 5)
        printf("row %zu column %s: '%s' is not %a\n", r, names[4 + k], fld[4 + k], want[k]);
    }
    const int m = (int)in.model;
    const char *mn = m == 0 ? "kv" : m == 1 ? "hc" : m == 2 ? "ef" : m == 3 ? "general" : "?";
    static const char *const laws[] = {"hunt-crossley", "lankarani-nikravesh", "flores", "gonthier", "exact"};
    const char *ln = m != 1 ? "-" : (int)in.law >= 0 && (int)in.law < 5 ? laws[in.law] : "?";
    const char *rn = m != 0 && m != 3 ? "-" : in.rule == 0 ? "penetration" : "force";
    char st[160];
    status_text(y.flags, st);
    bad += csv.id[r] != (long)r || csv.status[r] != y.flags || strcmp(fld[1], mn) || strcmp(fld[2], ln) ||
           strcmp(fld[3], rn) || strcmp(fld[C_STATUS + 1], st);
    for (int k = 0; k < 4; ++k) snprintf(csv.str[k][r], 32, "%s", fld[k < 3 ? 1 + k : C_STATUS + 1]);
  }
  assert_null(fgets(line, sizeof line, f));
  fclose(f);
  printf("%d rows, %ld differ\n", P, bad);
  assert_int_equal(bad, 0);
}

/* a string attribute of obj */
static void attr(hid_t obj, const char *name, char *buf, size_t cap)
{
  const hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  assert_true(a >= 0);
  const hid_t t = H5Aget_type(a);
  assert_int_equal(H5Tget_class(t), H5T_STRING);
  const size_t n = H5Tget_size(t);
  assert_true(n < cap);
  memset(buf, 0, cap);
  assert_true(H5Aread(a, t, buf) >= 0);
  H5Tclose(t);
  H5Aclose(a);
}

static void test_hdf5_equals_csv(void **state)
{
  (void)state;
  char path[512], buf[1024];
  path_of(path, sizeof path, "t.h5");
  assert_int_equal(kelvin_impact_batch_write(batch, path, KELVIN_FORMAT_HDF5), KELVIN_OK);
  const hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(f >= 0);
  attr(f, "columns", buf, sizeof buf);
  char head[512] = "";
  for (int c = 0; c < NCOL; ++c) strcat(strcat(head, names[c]), c + 1 < NCOL ? "," : "");
  assert_string_equal(buf, head);
  long bad = 0;
  static double d[P];
  static long long l[P];
  static int s[P];
  static char str[P * 32];
  for (int c = 0; c < NCOL; ++c) {
    const hid_t ds = H5Dopen2(f, names[c], H5P_DEFAULT);
    assert_true(ds >= 0);
    attr(ds, "units", buf, sizeof buf);
    assert_string_equal(buf, units[c]);
    const hid_t sp = H5Dget_space(ds);
    hsize_t dim = 0;
    assert_int_equal(H5Sget_simple_extent_ndims(sp), 1);
    H5Sget_simple_extent_dims(sp, &dim, NULL);
    assert_int_equal(dim, P);
    const hid_t dcpl = H5Dget_create_plist(ds);
    hsize_t chunk = 0;
    assert_int_equal(H5Pget_layout(dcpl), H5D_CHUNKED);
    H5Pget_chunk(dcpl, 1, &chunk);
    assert_int_equal(chunk, 65536);
    assert_int_equal(H5Pget_nfilters(dcpl), 2);
    unsigned flags, cd[8];
    size_t ncd = 8;
    assert_int_equal(H5Pget_filter2(dcpl, 0, &flags, &ncd, cd, 0, NULL, NULL), H5Z_FILTER_SHUFFLE);
    ncd = 8;
    assert_int_equal(H5Pget_filter2(dcpl, 1, &flags, &ncd, cd, 0, NULL, NULL), H5Z_FILTER_DEFLATE);
    const hid_t ft = H5Dget_type(ds);
    if (c == 0) {
      assert_true(H5Dread(ds, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, l) >= 0);
      for (size_t r = 0; r < P; ++r) bad += l[r] != csv.id[r];
    } else if (c == C_STATUS) {
      assert_true(H5Dread(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) >= 0);
      for (size_t r = 0; r < P; ++r) bad += s[r] != csv.status[r];
    } else if (c >= 4 && c < C_STATUS) {
      assert_int_equal(H5Tget_class(ft), H5T_FLOAT);
      assert_true(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d) >= 0);
      for (size_t r = 0; r < P; ++r)
        bad += isnan(csv.num[c - 4][r]) ? !isnan(d[r]) : memcmp(&d[r], &csv.num[c - 4][r], sizeof(double)) != 0;
    } else {
      assert_int_equal(H5Tget_class(ft), H5T_STRING);
      const hid_t mt = H5Tcopy(H5T_C_S1); /* read as NUL-terminated strings of 32 bytes */
      H5Tset_size(mt, 32);
      H5Tset_strpad(mt, H5T_STR_NULLTERM);
      assert_true(H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, str) >= 0);
      const int k = c < 4 ? c - 1 : 3;
      for (size_t r = 0; r < P; ++r) bad += strcmp(str + r * 32, csv.str[k][r]) != 0;
      H5Tclose(mt);
    }
    H5Tclose(ft);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Dclose(ds);
  }
  H5Fclose(f);
  printf("%d columns of %d rows, %ld values differ\n", NCOL, P, bad);
  assert_int_equal(bad, 0);
  for (int c = 0; c < NCOL; ++c) {
    const char *nm, *un, *doc;
    assert_int_equal(kelvin_impact_batch_column(c, &nm, &un, &doc), 1);
    assert_string_equal(nm, names[c]);
    assert_string_equal(un, units[c]);
  }
  assert_int_equal(kelvin_impact_batch_column(NCOL, NULL, NULL, NULL), 0);
}

/* "*.tmp.*" files left in tmpdir */
static int temporaries(void)
{
  DIR *d = opendir(tmpdir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, ".tmp.") != NULL;
  if (d) closedir(d);
  return n;
}

static int calls;
static double last;
static int stop_at(void *ctx, double fraction, const char *text)
{
  assert_non_null(strstr(text, "writing "));
  assert_true(fraction >= last && fraction <= 1.0);
  last = fraction;
  return ++calls >= *(int *)ctx;
}

static void test_progress_and_stop(void **state)
{
  (void)state;
  char path[512];
  for (int fmt = 0; fmt < 2; ++fmt) {
    path_of(path, sizeof path, fmt ? "s.h5" : "s.csv");
    int never = 1000;
    calls = 0, last = 0;
    kelvin_impact_batch_set_progress(batch, stop_at, &never);
    assert_int_equal(kelvin_impact_batch_write(batch, path, (kelvin_format)fmt), KELVIN_OK);
    printf("%s: %d progress calls\n", path, calls);
    assert_true(calls >= 2);
    assert_true(last == 1.0);
    /* stopped at the first call: no file, no temporary */
    unlink(path);
    int first = 1;
    calls = 0, last = 0;
    kelvin_impact_batch_set_progress(batch, stop_at, &first);
    assert_int_equal(kelvin_impact_batch_write(batch, path, (kelvin_format)fmt), KELVIN_ERR_STOPPED);
    assert_non_null(strstr(kelvin_impact_batch_errmsg(batch), "stopped"));
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(temporaries(), 0);
    /* an earlier file stays as it was */
    FILE *e = fopen(path, "w");
    fputs("earlier\n", e);
    fclose(e);
    calls = 0, last = 0;
    assert_int_equal(kelvin_impact_batch_write(batch, path, (kelvin_format)fmt), KELVIN_ERR_STOPPED);
    char buf[16] = "";
    e = fopen(path, "r");
    assert_non_null(e);
    assert_non_null(fgets(buf, sizeof buf, e));
    fclose(e);
    assert_string_equal(buf, "earlier\n");
    assert_int_equal(temporaries(), 0);
    kelvin_impact_batch_set_progress(batch, NULL, NULL);
  }
}

static void test_errors(void **state)
{
  (void)state;
  char path[512];
  path_of(path, sizeof path, "no/such/folder/t.h5");
  assert_int_equal(kelvin_impact_batch_write(batch, path, KELVIN_FORMAT_HDF5), KELVIN_ERR_IO);
  assert_non_null(strstr(kelvin_impact_batch_errmsg(batch), "no/such/folder/t.h5"));
  path_of(path, sizeof path, "no/such/folder/t.csv");
  assert_int_equal(kelvin_impact_batch_write(batch, path, KELVIN_FORMAT_CSV), KELVIN_ERR_IO);
  assert_non_null(strstr(kelvin_impact_batch_errmsg(batch), "No such file or directory"));
  assert_int_equal(kelvin_impact_batch_write(batch, path, (kelvin_format)5), KELVIN_ERR_ARG);
  assert_non_null(strstr(kelvin_impact_batch_errmsg(batch), "unknown format 5"));
  assert_int_equal(kelvin_impact_batch_write(batch, NULL, KELVIN_FORMAT_CSV), KELVIN_ERR_ARG);
  assert_int_equal(kelvin_impact_batch_write(NULL, path, KELVIN_FORMAT_CSV), KELVIN_ERR_ARG);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_csv_exact),
    cmocka_unit_test(test_hdf5_equals_csv),
    cmocka_unit_test(test_progress_and_stop),
    cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
