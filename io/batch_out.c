/* io/batch_out.c: an impact batch as a CSV or HDF5 table (io/batch_out.h; docs/design.md section 8).
 * Both writers work in blocks of rows that the host's cores prepare in parallel (OpenMP) and that are
 * then written in order: CSV rows formatted with "%.17g" (exact on reading back), HDF5 chunks shuffled
 * and deflated here (libdeflate, zlib format) and stored as they are (H5Dwrite_chunk), which is what
 * HDF5's own shuffle and deflate filters would store, so every reader decompresses them as usual. */
#include "io/batch_out.h"

#include <errno.h>
#include <float.h>
#include <hdf5.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libdeflate.h>

#include "kernels/kl_common.h"
#include "kernels/kl_impact.h"
#include "kernels/kl_impact_batch.h"
#include "kernels/kl_names.h"

const kl_batch_col kl_batch_cols[KL_BATCH_NCOL] = {
  {"id", "1", "scenario index, from 0, in the order of the batch"},
  {"model", "-", "contact model: kv (Kelvin-Voigt), hc (Hunt-Crossley family), ef (Emden-Fowler), general; ? if unknown"},
  {"law", "-", "damping law of hc (hunt-crossley, lankarani-nikravesh, flores, gonthier, exact); - otherwise"},
  {"rule", "-", "separation rule of kv and general (penetration, force); - otherwise"},
  {"m_kg", "kg", "mass"},
  {"K", "N/m^n", "contact stiffness (N/m for kv)"},
  {"n", "1", "force exponent"},
  {"cr", "1", "nominal coefficient of restitution"},
  {"v0_m_s", "m/s", "impact speed"},
  {"fe_N", "N", "constant external force into the contact (kv, hc, general)"},
  {"c", "N (s/m)^rate_exp / m^n2", "damping coefficient of the general law; - (CSV) or NaN (HDF5) otherwise"},
  {"n2", "1", "exponent of d in the general law's damping term; - (CSV) or NaN (HDF5) otherwise"},
  {"rate_exp", "1", "exponent of d' in the general law's damping term; - (CSV) or NaN (HDF5) otherwise"},
  {"dmax_m", "m", "maximum penetration"},
  {"tmax_s", "s", "time to the maximum penetration"},
  {"fpeak_N", "N", "peak contact force"},
  {"tc_s", "s", "contact time"},
  {"cr_eff", "1", "effective restitution v_out / v0"},
  {"ediss", "1", "dissipated fraction of the impact kinetic energy"},
  {"damp", "N s/m (kv), s/m (hc)", "damping: D for kv, chi for hc, 0 for ef and general"},
  {"status", "-", "status bits: 0 ok, else see status_text"},
  {"status_text", "-", "ok, or the names of the status bits joined by |"},
};

/* column kinds */
enum { C_ID, C_MODEL, C_LAW, C_RULE, C_IN0 = 4, C_OUT0 = C_IN0 + KL_NIN, C_STATUS = C_OUT0 + KL_NOUT, C_STEXT };
_Static_assert(C_STEXT + 1 == KL_BATCH_NCOL, "kl_batch_cols has a name for every column");
/* the inputs of the general law alone (KL_IN_C .. KL_IN_REXP): not applicable to the other models */
#define KL_IN_GEN0 KL_IN_C
_Static_assert(KL_IN_C == 6 && KL_IN_N2 == 7 && KL_IN_REXP == 8 && KL_NIN == 9, "the general law's inputs are last");

static const char *const status_bits[] = {"bad_mass",  "bad_stiffness", "bad_cr",    "bad_speed",     "bad_exponent",
                                          "bad_law",   "no_converge",   "bad_input", "no_separation", "unsupported"};
#define NBITS 10
_Static_assert(KL_BAD_MASS == 1 && KL_BAD_LAW == 32 && KL_BAD_INPUT == 128 && KL_NO_SEPARATION == 256 &&
                 KL_UNSUPPORTED == 512,
               "status_bits follows the bits of kernels/kl_common.h and kl_impact.h");
_Static_assert(KL_IN_M == 0 && KL_IN_FE == 5 && KL_OUT_DMAX == 0 && KL_OUT_DAMP == 6,
               "columns m_kg .. fe_N and dmax_m .. damp follow KL_IN_* and KL_OUT_*");

const char *kl_status_text(int st, char *buf)
{
  if (st == 0) return strcpy(buf, "ok");
  buf[0] = '\0';
  size_t len = 0;
  for (int i = 0; i < NBITS; ++i)
    if (st & (1 << i)) {
      if (len) buf[len++] = '|';
      const size_t k = strlen(status_bits[i]);
      memcpy(buf + len, status_bits[i], k + 1);
      len += k;
    }
  if (st & ~((1 << NBITS) - 1)) snprintf(buf + len, KL_STATUS_TEXT_MAX - len, "%sbits_0x%x", len ? "|" : "",
                                         (unsigned)st & ~((1u << NBITS) - 1));
  return buf;
}

/* "%.17g" without printf's multiple-precision arithmetic: the 17 significant digits D (10^16 <= D < 10^17)
 * of |x| at decimal exponent X are round(|x| 10^(16 - X)); for |16 - X| <= 27 the power of ten is exact
 * in long double (5^27 < 2^64) and the product or quotient is rounded once, so it is within 2^-8 of the
 * exact value (it is below 2^57: half an ulp of a 64-bit significand). When its fraction lies within
 * 2^-7 of one half the rounding could go either way, and printf decides; also for exponents outside that
 * range, infinities and NaN. kl_fmt_double_test checks it byte for byte against printf. */
#if LDBL_MANT_DIG >= 64
static int fmt_fast(char *buf, double x)
{
  const double ax = fabs(x);
  if (!(ax > 0) || !isfinite(ax)) return -1;
  int e2;
  frexp(ax, &e2); /* 2^(e2-1) <= ax < 2^e2: X is floor((e2 - 1) log10 2) or one more (the loop settles it) */
  int X = (int)floor((e2 - 1) * 0.30102999566398120);
  uint64_t D = 0;
  for (int tries = 0; tries < 3; ++tries) {
    const int k = 16 - X;
    if (k > 27 || k < -27) return -1;
    static const long double p10[28] = {1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
                                        1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
                                        1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
    const long double v = k >= 0 ? (long double)ax * p10[k] : (long double)ax / p10[-k];
    if (v < 1e16L) {
      --X;
      continue;
    }
    if (v >= 1e17L) {
      ++X;
      continue;
    }
    const long double fl = floorl(v), fr = v - fl;
    if (fabsl(fr - 0.5L) <= 0x1p-7L) return -1;
    D = (uint64_t)fl + (fr > 0.5L);
    break;
  }
  if (!D) return -1;
  if (D >= 100000000000000000ULL) D = 10000000000000000ULL, ++X;
  char dig[17];
  for (int i = 16; i >= 0; --i) dig[i] = (char)('0' + D % 10), D /= 10;
  int nd = 17; /* significant digits without the trailing zeros */
  while (nd > 1 && dig[nd - 1] == '0') --nd;
  char *p = buf;
  if (signbit(x)) *p++ = '-';
  if (X >= -4 && X < 17) {
    if (X >= 0) {
      memcpy(p, dig, (size_t)X + 1), p += X + 1;
      if (nd > X + 1) *p++ = '.', memcpy(p, dig + X + 1, (size_t)(nd - X - 1)), p += nd - X - 1;
    } else {
      *p++ = '0', *p++ = '.';
      for (int i = 0; i < -X - 1; ++i) *p++ = '0';
      memcpy(p, dig, (size_t)nd), p += nd;
    }
  } else {
    *p++ = dig[0];
    if (nd > 1) *p++ = '.', memcpy(p, dig + 1, (size_t)nd - 1), p += nd - 1;
    *p++ = 'e';
    *p++ = X < 0 ? '-' : '+';
    const int ae = X < 0 ? -X : X;
    if (ae >= 100) *p++ = (char)('0' + ae / 100);
    *p++ = (char)('0' + ae / 10 % 10), *p++ = (char)('0' + ae % 10);
  }
  *p = '\0';
  return (int)(p - buf);
}
#else
static int fmt_fast(char *buf, double x)
{
  (void)buf, (void)x;
  return -1;
}
#endif

int kl_fmt_double(char *buf, double x)
{
  if (x == 0) return signbit(x) ? (int)strlen(strcpy(buf, "-0")) : (int)strlen(strcpy(buf, "0"));
  const int n = fmt_fast(buf, x);
  return n >= 0 ? n : snprintf(buf, 32, "%.17g", x);
}

/* names of a row */
static const char *model_str(int model)
{
  const char *s = kl_model_name(model);
  return s ? s : "?";
}
static const char *law_str(int model, int law)
{
  if (model != KL_MODEL_HC) return "-";
  const char *s = kl_law_name(law);
  return s ? s : "?";
}
static const char *rule_str(int model, int rule)
{
  if (model != KL_MODEL_KV && model != KL_MODEL_GEN) return "-";
  const char *s = kl_rule_name(rule);
  return s ? s : "?";
}

/* "<path>.tmp.<pid>" into tmp; -1 if too long */
static int temp_name(const char *path, char *tmp, size_t cap)
{
  const int n = snprintf(tmp, cap, "%s.tmp.%ld", path, (long)getpid());
  return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* progress after a block: 1 to stop */
static int tick(kelvin_progress_fn fn, void *ctx, const char *path, size_t done, size_t total)
{
  if (!fn) return 0;
  const char *base = strrchr(path, '/');
  char text[256];
  snprintf(text, sizeof text, "writing %.180s: %zu of %zu rows", base ? base + 1 : path, done, total);
  return fn(ctx, total ? (double)done / (double)total : 1.0, text) != 0;
}

//------- CSV -------

#define CSV_BLOCK 4096      /* rows one thread formats at a time */
#define CSV_GROUP 16        /* blocks formatted together, then written in order (65536 rows) */
#define CSV_ROW_MAX 896     /* bytes a row takes at most: 16 numbers of <= 24, names, status text */

static char *put_str(char *p, const char *s)
{
  const size_t n = strlen(s);
  memcpy(p, s, n);
  return p + n;
}

/* v in decimal */
static char *put_uint(char *p, uint64_t v)
{
  char d[24];
  int n = 0;
  do d[n++] = (char)('0' + v % 10), v /= 10;
  while (v);
  while (n) *p++ = d[--n];
  return p;
}

static char *put_num(char *p, double x)
{
  *p++ = ',';
  return p + kl_fmt_double(p, x);
}

/* rows [r0, r1) of b as CSV text at out; the length */
static size_t csv_rows(const kl_impact_batch *b, size_t r0, size_t r1, char *out)
{
  const size_t P = b->P;
  char *p = out, sbuf[KL_STATUS_TEXT_MAX];
  for (size_t r = r0; r < r1; ++r) {
    const int model = b->ix[KL_IIN_MODEL * P + r];
    p = put_uint(p, r);
    *p++ = ',';
    p = put_str(p, model_str(model));
    *p++ = ',';
    p = put_str(p, law_str(model, b->ix[KL_IIN_LAW * P + r]));
    *p++ = ',';
    p = put_str(p, rule_str(model, b->ix[KL_IIN_RULE * P + r]));
    for (int k = 0; k < KL_NIN; ++k)
      if (k >= KL_IN_GEN0 && model != KL_MODEL_GEN) *p++ = ',', *p++ = '-';
      else p = put_num(p, b->x[(size_t)k * P + r]);
    for (int k = 0; k < KL_NOUT; ++k) p = put_num(p, b->y[(size_t)k * P + r]);
    const int st = b->status[r];
    *p++ = ',';
    if (st < 0) *p++ = '-';
    p = put_uint(p, st < 0 ? -(uint64_t)st : (uint64_t)st);
    *p++ = ',';
    p = put_str(p, kl_status_text(st, sbuf));
    *p++ = '\n';
  }
  return (size_t)(p - out);
}

static kelvin_status io_fail(char *msg, int cap, const char *path, int err)
{
  snprintf(msg, (size_t)cap, "cannot write '%s': %s", path, strerror(err ? err : EIO));
  return KELVIN_ERR_IO;
}

kelvin_status kl_batch_write_csv(const kl_impact_batch *b, const char *path, kelvin_progress_fn fn, void *ctx,
                                 char *msg, int cap)
{
  char tmp[4200];
  if (temp_name(path, tmp, sizeof tmp) != 0) {
    snprintf(msg, (size_t)cap, "output path too long: '%.200s...'", path);
    return KELVIN_ERR_IO;
  }
  const size_t P = b->P;
  char *buf = malloc((size_t)CSV_GROUP * CSV_BLOCK * CSV_ROW_MAX);
  size_t len[CSV_GROUP];
  if (!buf) {
    snprintf(msg, (size_t)cap, "out of memory writing '%s'", path);
    return KELVIN_ERR_NOMEM;
  }
  FILE *f = fopen(tmp, "w");
  if (!f) {
    const int e = errno;
    free(buf);
    return io_fail(msg, cap, path, e);
  }
  kelvin_status st = KELVIN_OK;
  int err = 0;
  char head[512]; /* the names of kl_batch_cols, the one list of the columns */
  size_t hl = 0;
  for (int c = 0; c < KL_BATCH_NCOL; ++c)
    hl += (size_t)snprintf(head + hl, sizeof head - hl, "%s%s", kl_batch_cols[c].name, c + 1 < KL_BATCH_NCOL ? "," : "\n");
  if (fwrite(head, 1, hl, f) != hl) err = errno ? errno : EIO;
  for (size_t g0 = 0; g0 < P && !err; g0 += (size_t)CSV_GROUP * CSV_BLOCK) {
    const size_t g1 = P - g0 < (size_t)CSV_GROUP * CSV_BLOCK ? P : g0 + (size_t)CSV_GROUP * CSV_BLOCK;
    const int nb = (int)((g1 - g0 + CSV_BLOCK - 1) / CSV_BLOCK);
#pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < nb; ++k) {
      const size_t r0 = g0 + (size_t)k * CSV_BLOCK, r1 = g1 - r0 < CSV_BLOCK ? g1 : r0 + CSV_BLOCK;
      len[k] = csv_rows(b, r0, r1, buf + (size_t)k * CSV_BLOCK * CSV_ROW_MAX);
    }
    for (int k = 0; k < nb && !err; ++k)
      if (fwrite(buf + (size_t)k * CSV_BLOCK * CSV_ROW_MAX, 1, len[k], f) != len[k]) err = errno ? errno : EIO;
    if (!err && tick(fn, ctx, path, g1, P)) {
      st = KELVIN_ERR_STOPPED;
      snprintf(msg, (size_t)cap, "writing '%s' stopped by the progress callback after %zu of %zu rows; no file written",
               path, g1, P);
      break;
    }
  }
  free(buf);
  errno = 0;
  if (!err && (fflush(f) != 0 || ferror(f))) err = errno ? errno : EIO;
  errno = 0;
  if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
  if (!err && st == KELVIN_OK && rename(tmp, path) != 0) err = errno;
  if (err || st != KELVIN_OK) {
    unlink(tmp);
    return st != KELVIN_OK ? st : io_fail(msg, cap, path, err);
  }
  return KELVIN_OK;
}

//------- HDF5 -------

#define H5_CHUNK 65536 /* rows per chunk */
#define H5_GROUP 8     /* chunks compressed together, then stored in order */
#define H5_LEVEL 1     /* deflate level: the fastest; shuffled numbers gain little from more */

/* the widths of the string columns, from the values present: model, law, rule, status_text */
static void string_widths(const kl_impact_batch *b, size_t w[4])
{
  const size_t P = b->P;
  unsigned char seen[1 << NBITS] = {0};
  int other = 0; /* status words with bits beyond NBITS */
  int mseen[KL_NMODELS + 1] = {0}, lseen[KL_NLAWS + 1] = {0}, rseen[KL_NRULES + 1] = {0};
  for (size_t r = 0; r < P; ++r) {
    const int st = b->status[r];
    if (st >= 0 && st < (1 << NBITS)) seen[st] = 1;
    else other = 1;
    const int m = b->ix[KL_IIN_MODEL * P + r], l = b->ix[KL_IIN_LAW * P + r], u = b->ix[KL_IIN_RULE * P + r];
    mseen[m >= 0 && m < KL_NMODELS ? m : KL_NMODELS] = 1;
    if (m == KL_MODEL_HC) lseen[l >= 0 && l < KL_NLAWS ? l : KL_NLAWS] = 1;
    if (m == KL_MODEL_KV) rseen[u >= 0 && u < KL_NRULES ? u : KL_NRULES] = 1;
  }
  w[0] = w[1] = w[2] = w[3] = 1;
  for (int i = 0; i <= KL_NMODELS; ++i)
    if (mseen[i] && strlen(model_str(i)) > w[0]) w[0] = strlen(model_str(i));
  for (int i = 0; i <= KL_NLAWS; ++i)
    if (lseen[i] && strlen(law_str(KL_MODEL_HC, i)) > w[1]) w[1] = strlen(law_str(KL_MODEL_HC, i));
  for (int i = 0; i <= KL_NRULES; ++i)
    if (rseen[i] && strlen(rule_str(KL_MODEL_KV, i)) > w[2]) w[2] = strlen(rule_str(KL_MODEL_KV, i));
  char sbuf[KL_STATUS_TEXT_MAX];
  for (int s = 0; s < (1 << NBITS); ++s)
    if (seen[s] && strlen(kl_status_text(s, sbuf)) > w[3]) w[3] = strlen(sbuf);
  if (other) w[3] = KL_STATUS_TEXT_MAX - 1;
}

/* rows [r0, r0 + n) of column c into dst (elements of es bytes; strings NUL-padded) */
static void fill_column(const kl_impact_batch *b, int c, size_t r0, size_t n, size_t es, unsigned char *dst)
{
  const size_t P = b->P;
  if (c == C_ID) {
    int64_t *d = (int64_t *)dst;
    for (size_t i = 0; i < n; ++i) d[i] = (int64_t)(r0 + i);
  } else if (c >= C_IN0 && c < C_OUT0) {
    memcpy(dst, b->x + (size_t)(c - C_IN0) * P + r0, n * sizeof(double));
    if (c - C_IN0 >= KL_IN_GEN0) /* the general law's own inputs: NaN where they do not apply (CSV: '-') */
      for (size_t i = 0; i < n; ++i)
        if (b->ix[KL_IIN_MODEL * P + r0 + i] != KL_MODEL_GEN) ((double *)dst)[i] = NAN;
  } else if (c >= C_OUT0 && c < C_STATUS) {
    memcpy(dst, b->y + (size_t)(c - C_OUT0) * P + r0, n * sizeof(double));
  } else if (c == C_STATUS) {
    int32_t *d = (int32_t *)dst;
    for (size_t i = 0; i < n; ++i) d[i] = (int32_t)b->status[r0 + i];
  } else {
    memset(dst, 0, n * es);
    char sbuf[KL_STATUS_TEXT_MAX];
    for (size_t i = 0; i < n; ++i) {
      const size_t r = r0 + i;
      const int model = b->ix[KL_IIN_MODEL * P + r];
      const char *s = c == C_MODEL  ? model_str(model)
                      : c == C_LAW  ? law_str(model, b->ix[KL_IIN_LAW * P + r])
                      : c == C_RULE ? rule_str(model, b->ix[KL_IIN_RULE * P + r])
                                    : kl_status_text(b->status[r], sbuf);
      const size_t k = strlen(s);
      memcpy(dst + i * es, s, k < es ? k : es);
    }
  }
}

/* HDF5's shuffle filter: byte j of element i to position j * n + i */
static void shuffle(const unsigned char *in, size_t n, size_t es, unsigned char *out)
{
  if (es == 1) {
    memcpy(out, in, n);
    return;
  }
  for (size_t j = 0; j < es; ++j) {
    unsigned char *o = out + j * n;
    const unsigned char *s = in + j;
    for (size_t i = 0; i < n; ++i) o[i] = s[i * es];
  }
}

/* in (n bytes) deflated by z into out (*len bytes; the length written into *len) in the zlib format that
 * HDF5's deflate filter reads. Level H5_LEVEL of libdeflate: on 80 MB of shuffled sweep metrics 0.49 s
 * against zlib's 1.10 s at its level 1, 23.6 against 23.9 MB (zlib's Z_RLE and Z_HUFFMAN_ONLY were no
 * faster and made 3.5 and 5 times larger files). 0 ok, 1 on failure. */
static int deflate_chunk(struct libdeflate_compressor *z, const unsigned char *in, size_t n, unsigned char *out,
                         size_t *len)
{
  *len = libdeflate_zlib_compress(z, in, n, out, *len);
  return *len == 0;
}

/* a scalar string attribute */
static int attr_str(hid_t obj, const char *name, const char *value)
{
  const hid_t t = H5Tcopy(H5T_C_S1);
  if (t < 0) return -1;
  const hid_t sp = H5Screate(H5S_SCALAR);
  int rc = -1;
  if (sp >= 0 && H5Tset_size(t, strlen(value) ? strlen(value) : 1) >= 0 && H5Tset_strpad(t, H5T_STR_NULLPAD) >= 0) {
    const hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) {
      rc = H5Awrite(a, t, strlen(value) ? value : "") < 0 ? -1 : 0;
      rc |= H5Aclose(a) < 0 ? -1 : 0;
    }
  }
  if (sp >= 0) H5Sclose(sp);
  H5Tclose(t);
  return rc;
}

/* the file's contents; KELVIN_OK, KELVIN_ERR_STOPPED, or a failure with msg */
static kelvin_status h5_body(const kl_impact_batch *b, hid_t file, const char *path, kelvin_progress_fn fn, void *ctx,
                             char *msg, int cap)
{
  const size_t P = b->P;
  size_t sw[4];
  string_widths(b, sw);
  /* file attributes: the column order (HDF5 lists datasets by name), the rows, the writer */
  char cols[512] = "";
  for (int c = 0; c < KL_BATCH_NCOL; ++c) {
    if (c) strcat(cols, ",");
    strcat(cols, kl_batch_cols[c].name);
  }
  char rows[32], writer[128];
  snprintf(rows, sizeof rows, "%zu", P);
  snprintf(writer, sizeof writer, "kelvin %s (impact batch: one dataset per column)", kelvin_version());
  if (attr_str(file, "columns", cols) || attr_str(file, "rows", rows) || attr_str(file, "writer", writer)) {
    snprintf(msg, (size_t)cap, "cannot write '%s': HDF5 attributes", path);
    return KELVIN_ERR_IO;
  }
  const size_t chunk = P < H5_CHUNK ? P : H5_CHUNK;
  const size_t nchunks = (P + chunk - 1) / chunk;
  const int nth = omp_get_max_threads();
  size_t maxes = sizeof(double);
  for (int i = 0; i < 4; ++i)
    if (sw[i] > maxes) maxes = sw[i];
  const size_t cb = libdeflate_zlib_compress_bound(NULL, chunk * maxes);
  unsigned char *work = malloc((size_t)nth * 2 * chunk * maxes), *out = malloc((size_t)H5_GROUP * cb);
  struct libdeflate_compressor **z = calloc((size_t)nth, sizeof *z);
  int zok = z != NULL;
  for (int t = 0; zok && t < nth; ++t) zok = (z[t] = libdeflate_alloc_compressor(H5_LEVEL)) != NULL;
  if (!work || !out || !zok) {
    for (int t = 0; z && t < nth; ++t) libdeflate_free_compressor(z[t]);
    free(z);
    free(work);
    free(out);
    snprintf(msg, (size_t)cap, "out of memory writing '%s'", path);
    return KELVIN_ERR_NOMEM;
  }
  kelvin_status st = KELVIN_OK;
  const size_t total = (size_t)KL_BATCH_NCOL * nchunks;
  size_t done = 0;
  for (int c = 0; c < KL_BATCH_NCOL && st == KELVIN_OK; ++c) {
    hid_t type;
    size_t es;
    if (c == C_ID) type = H5Tcopy(H5T_NATIVE_INT64), es = 8;
    else if (c == C_STATUS) type = H5Tcopy(H5T_NATIVE_INT32), es = 4;
    else if (c >= C_IN0 && c < C_STATUS) type = H5Tcopy(H5T_NATIVE_DOUBLE), es = 8;
    else {
      es = sw[c == C_MODEL ? 0 : c == C_LAW ? 1 : c == C_RULE ? 2 : 3];
      type = H5Tcopy(H5T_C_S1);
      if (type >= 0 && (H5Tset_size(type, es) < 0 || H5Tset_strpad(type, H5T_STR_NULLPAD) < 0)) {
        H5Tclose(type);
        type = -1;
      }
    }
    const hsize_t dim = P, cdim = chunk;
    const hid_t space = H5Screate_simple(1, &dim, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t ds = -1;
    /* no modification times in the object headers: the same table gives the same file, byte for byte (a sweep
     * on any number of ranks, docs/design.md section 11) */
    if (type >= 0 && space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, 1, &cdim) >= 0 && H5Pset_shuffle(dcpl) >= 0 &&
        H5Pset_deflate(dcpl, H5_LEVEL) >= 0 && H5Pset_obj_track_times(dcpl, 0) >= 0)
      ds = H5Dcreate2(file, kl_batch_cols[c].name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (ds < 0 || attr_str(ds, "units", kl_batch_cols[c].unit) || attr_str(ds, "description", kl_batch_cols[c].doc)) {
      snprintf(msg, (size_t)cap, "cannot write '%s': HDF5 dataset '%s'", path, kl_batch_cols[c].name);
      st = KELVIN_ERR_IO;
    }
    size_t olen[H5_GROUP];
    for (size_t g0 = 0; g0 < nchunks && st == KELVIN_OK; g0 += H5_GROUP) {
      const int ng = (int)(nchunks - g0 < H5_GROUP ? nchunks - g0 : H5_GROUP);
      int zerr = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : zerr)
      for (int k = 0; k < ng; ++k) {
        unsigned char *raw = work + (size_t)omp_get_thread_num() * 2 * chunk * maxes, *shuf = raw + chunk * maxes;
        const size_t r0 = (g0 + (size_t)k) * chunk, n = P - r0 < chunk ? P - r0 : chunk;
        fill_column(b, c, r0, n, es, raw);
        if (n < chunk) memset(raw + n * es, 0, (chunk - n) * es); /* an edge chunk is stored whole */
        shuffle(raw, chunk, es, shuf);
        size_t dl = cb;
        zerr |= deflate_chunk(z[omp_get_thread_num()], shuf, chunk * es, out + (size_t)k * cb, &dl);
        olen[k] = dl;
      }
      if (zerr) {
        snprintf(msg, (size_t)cap, "cannot write '%s': deflate failed", path);
        st = KELVIN_ERR_IO;
      }
      for (int k = 0; k < ng && st == KELVIN_OK; ++k) {
        const hsize_t off = (hsize_t)((g0 + (size_t)k) * chunk);
        if (H5Dwrite_chunk(ds, H5P_DEFAULT, 0, &off, olen[k], out + (size_t)k * cb) < 0) {
          snprintf(msg, (size_t)cap, "cannot write '%s': HDF5 chunk %zu of dataset '%s' (disk full?)", path,
                   g0 + (size_t)k, kl_batch_cols[c].name);
          st = KELVIN_ERR_IO;
        }
      }
      done += (size_t)ng;
      if (st == KELVIN_OK && tick(fn, ctx, path, (size_t)((double)P * (double)done / (double)total), P)) {
        snprintf(msg, (size_t)cap, "writing '%s' stopped by the progress callback; no file written", path);
        st = KELVIN_ERR_STOPPED;
      }
    }
    if (ds >= 0) H5Dclose(ds);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
  }
  for (int t = 0; t < nth; ++t) libdeflate_free_compressor(z[t]);
  free(z);
  free(work);
  free(out);
  return st;
}

kelvin_status kl_batch_write_hdf5(const kl_impact_batch *b, const char *path, kelvin_progress_fn fn, void *ctx,
                                  char *msg, int cap)
{
  char tmp[4200];
  if (temp_name(path, tmp, sizeof tmp) != 0) {
    snprintf(msg, (size_t)cap, "output path too long: '%.200s...'", path);
    return KELVIN_ERR_IO;
  }
  /* HDF5 prints its error stack by default; a library prints nothing: off while we write, then as before */
  H5E_auto2_t efn;
  void *edata;
  H5Eget_auto2(H5E_DEFAULT, &efn, &edata);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  kelvin_status st = KELVIN_OK;
  /* the root group lists the datasets in the order they were made (the CSV's), for readers that follow it */
  const hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  if (fcpl < 0 || H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0 ||
      H5Pset_obj_track_times(fcpl, 0) < 0) {
    snprintf(msg, (size_t)cap, "cannot write '%s': HDF5 property list", path);
    st = KELVIN_ERR_IO;
  }
  const hid_t file = st == KELVIN_OK ? H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT) : -1;
  if (fcpl >= 0) H5Pclose(fcpl);
  if (st == KELVIN_OK && file < 0) {
    const int e = errno;
    snprintf(msg, (size_t)cap, "cannot write '%s': %s", path, strerror(e ? e : EIO));
    st = KELVIN_ERR_IO;
  }
  if (st == KELVIN_OK) st = h5_body(b, file, path, fn, ctx, msg, cap);
  if (file >= 0 && H5Fclose(file) < 0 && st == KELVIN_OK) {
    snprintf(msg, (size_t)cap, "cannot write '%s': closing the HDF5 file failed (disk full?)", path);
    st = KELVIN_ERR_IO;
  }
  H5Eset_auto2(H5E_DEFAULT, efn, edata);
  if (st == KELVIN_OK && rename(tmp, path) != 0) st = io_fail(msg, cap, path, errno);
  if (st != KELVIN_OK) unlink(tmp);
  return st;
}
