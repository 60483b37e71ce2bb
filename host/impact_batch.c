/* host/impact_batch.c: impact batches on the OpenCL device, the OpenMP twin and a serial loop. */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "core/shard.h"
#include "host/host_impl.h"
#include "host/impact_batch.h"
#include "host/twin_fast.h"

/* Host progress granularity of the OpenMP twin: rows per progress call. */
#define OMP_BLOCK ((size_t)1 << 16)
#define KL_BATCH_ALIGN ((size_t)4096) /* each table of a batch starts on a page */

//------- batch object -------

/* bytes of a (rows x P) table of elem-byte entries, or 0 on overflow */
static size_t table_bytes(size_t rows, size_t P, size_t elem)
{
  if (P != 0 && rows > SIZE_MAX / P / elem) return 0;
  return rows * P * elem;
}

/* n rounded up to a whole number of pages (0 on overflow) */
static size_t page_round(size_t n) { return n > SIZE_MAX - (KL_BATCH_ALIGN - 1) ? 0 : (n + KL_BATCH_ALIGN - 1) / KL_BATCH_ALIGN * KL_BATCH_ALIGN; }

/* One allocation: the header, then each table on a page boundary of its own, so that an OpenCL CPU
 * device can use the tables in place (CL_MEM_USE_HOST_PTR, run_cl_inplace). */
kelvin_status kl_impact_batch_create(size_t P, int M, kl_impact_batch **out)
{
  *out = NULL;
  if (P == 0 || M < 0) return KELVIN_ERR_ARG;
  const size_t head = page_round(sizeof(kl_impact_batch));
  const size_t nx = page_round(table_bytes(KL_NIN, P, sizeof(double)));
  const size_t ny = page_round(table_bytes(KL_NOUT, P, sizeof(double)));
  const size_t ns = M ? page_round(table_bytes((size_t)KL_NSMP * (size_t)M, P, sizeof(double))) : 0;
  const size_t nix = page_round(table_bytes(KL_NIIN, P, sizeof(int))), nst = page_round(table_bytes(1, P, sizeof(int)));
  if (!nx || !ny || (M && !ns) || !nix || !nst) return KELVIN_ERR_ARG;
  const size_t part[6] = {head, nx, ny, ns, nix, nst};
  size_t total = 0;
  for (int i = 0; i < 6; ++i) {
    if (part[i] > SIZE_MAX - total) return KELVIN_ERR_ARG;
    total += part[i];
  }
  char *buf = aligned_alloc(KL_BATCH_ALIGN, total); /* total is a multiple of the alignment */
  if (!buf) return KELVIN_ERR_NOMEM;
  memset(buf, 0, total);
  kl_impact_batch *b = (kl_impact_batch *)buf;
  char *p = buf + head; /* doubles first: every table starts 8-byte aligned */
  b->P = P;
  b->M = M;
  b->x = (double *)p;
  p += nx;
  b->y = (double *)p;
  p += ny;
  b->smp = M ? (double *)p : NULL;
  p += ns;
  b->ix = (int *)p;
  p += nix;
  b->status = (int *)p;
  *out = b;
  return KELVIN_OK;
}

void kl_impact_batch_destroy(kl_impact_batch *b) { free(b); }

void kl_impact_batch_set(kl_impact_batch *b, size_t p, kl_impact_in in)
{
  const size_t P = b->P;
  b->x[KL_IN_M * P + p] = in.m;
  b->x[KL_IN_K * P + p] = in.K;
  b->x[KL_IN_N * P + p] = in.n;
  b->x[KL_IN_CR * P + p] = in.cr;
  b->x[KL_IN_V0 * P + p] = in.v0;
  b->x[KL_IN_FE * P + p] = in.fe;
  b->x[KL_IN_C * P + p] = in.c;
  b->x[KL_IN_N2 * P + p] = in.n2;
  b->x[KL_IN_REXP * P + p] = in.rate_exp;
  b->ix[KL_IIN_MODEL * P + p] = in.model;
  b->ix[KL_IIN_LAW * P + p] = in.law;
  b->ix[KL_IIN_RULE * P + p] = in.rule;
}

/* The inputs of column p of tables x, ix of row pitch P */
static kl_impact_in load_row(const double *x, const int *ix, size_t P, size_t p)
{
  kl_impact_in in;
  in.m = x[KL_IN_M * P + p];
  in.K = x[KL_IN_K * P + p];
  in.n = x[KL_IN_N * P + p];
  in.cr = x[KL_IN_CR * P + p];
  in.v0 = x[KL_IN_V0 * P + p];
  in.fe = x[KL_IN_FE * P + p];
  in.c = x[KL_IN_C * P + p];
  in.n2 = x[KL_IN_N2 * P + p];
  in.rate_exp = x[KL_IN_REXP * P + p];
  in.model = ix[KL_IIN_MODEL * P + p];
  in.law = ix[KL_IIN_LAW * P + p];
  in.rule = ix[KL_IIN_RULE * P + p];
  return in;
}

kl_impact_in kl_impact_batch_get(const kl_impact_batch *b, size_t p) { return load_row(b->x, b->ix, b->P, p); }

/* fast_lists' sort key of a row, its class (kl_impact_fast_class), for a Hunt-Crossley row by comparisons alone:
 * zeta = chi v0 of a law is a decreasing function of cr alone (kernels/kl_contact_hc.h, kl_hc_exact.h), so its u
 * piece is the number of bounds cr[law][j] at or above cr, the cr where kl_impact_hc_class itself enters piece j + 1
 * (by bisection). A key that misses its row's class (rounding at a bound) only costs time: the row's block declines
 * it and the general kernel computes it. */
typedef struct class_bounds {
  double cr[KL_NLAWS][KL_HCM_NU - 1];
} class_bounds;

static void class_bounds_make(class_bounds *B)
{
  kl_impact_in in;
  memset(&in, 0, sizeof in);
  in.model = KL_MODEL_HC;
  in.m = in.K = in.v0 = 1.0;
  in.n = 1.5;
  for (int law = 0; law < KL_NLAWS; ++law) {
    in.law = law;
    for (int j = 1; j < KL_HCM_NU; ++j) {
      double lo = law == KL_LAW_EXACT ? KL_HCX_CR_LO : 1e-300, hi = 1.0; /* piece(lo) >= j > piece(hi) */
      in.cr = lo;
      if (kl_impact_hc_class(in, law == KL_LAW_EXACT) % KL_HCM_NU < j) {
        B->cr[law][j - 1] = -1.0; /* no cr of the law reaches piece j */
        continue;
      }
      for (int it = 0; it < 64; ++it) {
        in.cr = 0.5 * (lo + hi);
        if (kl_impact_hc_class(in, law == KL_LAW_EXACT) % KL_HCM_NU >= j) lo = in.cr;
        else hi = in.cr;
      }
      B->cr[law][j - 1] = lo;
    }
  }
}

/* The bounds, made once a process (they depend on the code alone: ~2200 evaluations of kl_impact_hc_class, which a
 * batch of 1000 rows on the twin, or each chunk of a batch, would otherwise pay) */
static class_bounds bounds;
static pthread_once_t bounds_once = PTHREAD_ONCE_INIT;
static void bounds_init(void) { class_bounds_make(&bounds); }
static const class_bounds *class_bounds_get(void)
{
  pthread_once(&bounds_once, bounds_init);
  return &bounds;
}

static int class_key(const class_bounds *B, int model, double n, int law, double cr)
{
  if (model != KL_MODEL_HC) return model == KL_MODEL_KV ? KL_FAST_KV : KL_FAST_EF;
  if (law < 0 || law >= KL_NLAWS) return 0; /* declined whatever its block */
  int iu = 0;
  for (int j = 0; j < KL_HCM_NU - 1; ++j) iu += cr <= B->cr[law][j];
  const int exact = law == KL_LAW_EXACT;
  return kl_impact_hc_class_of(exact, exact ? kl_hcx_octave(kl_hc_exact_in(cr) ? cr : 1.0) : 0, kl_hcm_kn(n), iu);
}

#define KL_SORT_WINDOW 8192 /* rows sorted together: their loads and stores stay near each other in memory */
#define KL_NO_CLASS 0xffff     /* the key of a row of no fast kind */

/* The rows base + i, i in [0, cnt) (column s0 + i of tables of pitch P), of the fast kinds (kl_impact_fast_kind),
 * sorted by class (class_key) into out, within windows of KL_SORT_WINDOW rows (the rows of a window stay near each
 * other in memory: a Hunt-Crossley list sorted whole ran 2.5x slower, the rows' loads and stores missing the
 * cache), stably (a counting sort, so each run lists its rows in increasing order), each class's run in a window
 * padded with -1 to a whole number of blocks of `rows` entries, so that every block of the fast kernel
 * (kernels/impact.cl) holds one class. One pass over the rows makes their keys and counts, a second writes the
 * list; windows in parallel on up to `threads` threads (run_parts). Returns the entries written (at most the fast
 * rows + (rows - 1) KL_FAST_NCLASS a window); *nfast: the fast rows. keys: room for cnt; at: for KL_SORT_AT(cnt). */
#define KL_SORT_AT(cnt) ((((cnt) + KL_SORT_WINDOW - 1) / KL_SORT_WINDOW) * (size_t)(KL_FAST_NCLASS + 1) + 1)

/* fn(arg, t, nt) for t = 0 .. nt - 1: t = 0 on the calling thread, the others on threads of their own that end with
 * their part (one that cannot be made runs its part on the caller). Not OpenMP: after a parallel region libgomp's
 * idle workers spin (GOMP_SPINCOUNT) while pocl's threads run the kernels on the same cores (perf, 10^6 rows on 2
 * cores: 6 % of the samples in libgomp on a quiet machine, 20 % on a busy one). */
#define KL_MAX_PARTS 64
typedef struct part {
  void (*fn)(void *, int, int);
  void *arg;
  int t, nt;
} part;
static void *part_main(void *p)
{
  const part *q = p;
  q->fn(q->arg, q->t, q->nt);
  return NULL;
}
static void run_parts(void (*fn)(void *, int, int), void *arg, int nt)
{
  nt = nt < 1 ? 1 : nt > KL_MAX_PARTS ? KL_MAX_PARTS : nt;
  pthread_t th[KL_MAX_PARTS];
  part pa[KL_MAX_PARTS];
  int made[KL_MAX_PARTS] = {0};
  for (int t = 1; t < nt; ++t) {
    pa[t] = (part){fn, arg, t, nt};
    made[t] = pthread_create(&th[t], NULL, part_main, &pa[t]) == 0;
  }
  fn(arg, 0, nt);
  for (int t = 1; t < nt; ++t)
    if (made[t]) pthread_join(th[t], NULL);
    else fn(arg, t, nt);
}

/* The sort's tables, and which pass (sort_part) */
typedef struct sorting {
  const class_bounds *B;
  const double *n, *cr, *fe;
  const int *model, *law;
  size_t cnt, base, nw, *at, *win;
  uint16_t *keys;
  int *out, write;
} sorting;

/* The windows of part t of nt. Pass 1 (write = 0): each row's key (KL_NO_CLASS for a row of no fast kind) and its
 * window's counts by class. Pass 2: each window's entries -1 (a pad, which the kernel computes and does not store),
 * then its rows in order at their runs. */
static void sort_part(void *arg, int t, int nt)
{
  const sorting *S = arg;
  const size_t W = KL_SORT_WINDOW, A = KL_FAST_NCLASS;
  for (size_t w = S->nw * (size_t)t / (size_t)nt; w < S->nw * (size_t)(t + 1) / (size_t)nt; ++w) {
    size_t *a = S->at + w * A;
    const size_t end = S->cnt < (w + 1) * W ? S->cnt : (w + 1) * W;
    if (S->write) {
      memset(S->out + S->win[w], 0xff, (S->win[w + 1] - S->win[w]) * sizeof *S->out);
      for (size_t i = w * W; i < end; ++i)
        if (S->keys[i] != KL_NO_CLASS) S->out[a[S->keys[i]]++] = (int)(S->base + i);
      continue;
    }
    for (size_t i = w * W; i < end; ++i) {
      int key = KL_NO_CLASS;
      if (kl_impact_fast_kind(S->model[i], S->fe[i]) >= 0)
        a[key = class_key(S->B, S->model[i], S->n[i], S->law[i], S->cr[i])]++;
      S->keys[i] = (uint16_t)key;
    }
  }
}

static size_t sort_by_class(const double *x, const int *ix, size_t P, size_t s0, size_t cnt, size_t base, int rows,
                            int threads, int *out, uint16_t *keys, size_t *at, size_t *nfast)
{
  const size_t W = KL_SORT_WINDOW, nw = (cnt + W - 1) / W, A = KL_FAST_NCLASS;
  sorting S = {.B = class_bounds_get(),
               .n = x + (size_t)KL_IN_N * P + s0,
               .cr = x + (size_t)KL_IN_CR * P + s0,
               .fe = x + (size_t)KL_IN_FE * P + s0,
               .model = ix + (size_t)KL_IIN_MODEL * P + s0,
               .law = ix + (size_t)KL_IIN_LAW * P + s0,
               .cnt = cnt,
               .base = base,
               .nw = nw,
               .at = at,
               .win = at + nw * A, /* after the counts: the windows' first entries, and the end */
               .keys = keys,
               .out = out,
               .write = 0};
  /* a part for every 8 windows or fewer (a thread costs ~20-50 us to make) */
  const int nt = (int)((size_t)threads < (nw + 7) / 8 ? (size_t)threads : (nw + 7) / 8);
  memset(at, 0, nw * A * sizeof *at); /* window w's counts by class, then its runs' starts */
  run_parts(sort_part, &S, nt);
  size_t total = 0, n = 0;
  for (size_t w = 0; w < nw * A; ++w) {
    if (w % A == 0) S.win[w / A] = total;
    n += at[w];
    const size_t run = (at[w] + (size_t)rows - 1) / (size_t)rows * (size_t)rows;
    at[w] = total;
    total += run;
  }
  S.win[nw] = total;
  S.write = 1;
  run_parts(sort_part, &S, nt);
  *nfast = n;
  return total;
}

/* The rows i of [0, cnt) (column s0 + i of tables of row pitch P) of the fast kinds (kl_impact_fast_kind), as
 * base + i, into idx (room for cnt), in row order; returns how many. */
static size_t fast_list(const double *x, const int *ix, size_t P, size_t s0, size_t cnt, size_t base, int *idx)
{
  const int *model = ix + (size_t)KL_IIN_MODEL * P + s0;
  const double *fe = x + (size_t)KL_IN_FE * P + s0;
  size_t n = 0;
  for (size_t i = 0; i < cnt; ++i)
    if (kl_impact_fast_kind(model[i], fe[i]) >= 0) idx[n++] = (int)(base + i);
  return n;
}

//------- host paths -------

#define KL_TWIN_BLOCK 2048 /* most rows of a block of the twin (its lists live on the stack) */

/* The metrics and status of row p (kernels/impact.cl's kl_impact_store) */
static void store(kl_impact_batch *b, size_t p, kl_impact_out o)
{
  const size_t P = b->P;
  b->y[KL_OUT_DMAX * P + p] = o.dmax;
  b->y[KL_OUT_TMAX * P + p] = o.tmax;
  b->y[KL_OUT_FPEAK * P + p] = o.fpeak;
  b->y[KL_OUT_TC * P + p] = o.tc;
  b->y[KL_OUT_CREFF * P + p] = o.cr_eff;
  b->y[KL_OUT_EDISS * P + p] = o.ediss;
  b->y[KL_OUT_DAMP * P + p] = o.damp;
  b->status[p] = o.status;
}

/* Row p: load, kl_impact, store (what kernels/impact.cl does per work-item). */
static void row(kl_impact_batch *b, size_t p)
{
  const size_t P = b->P;
  const kl_impact_in in = kl_impact_batch_get(b, p);
  const kl_impact_out o = kl_impact(in);
  store(b, p, o);
  const int M = b->M;
  for (int j = 0; j < M; ++j) {
    double s, d, f;
    kl_impact_sample(in, o, j, M, &s, &d, &f);
    b->smp[((size_t)KL_SMP_S * (size_t)M + (size_t)j) * P + p] = s;
    b->smp[((size_t)KL_SMP_D * (size_t)M + (size_t)j) * P + p] = d;
    b->smp[((size_t)KL_SMP_F * (size_t)M + (size_t)j) * P + p] = f;
  }
}

void kl_impact_run_serial(kl_impact_batch *b, size_t lo, size_t hi)
{
  for (size_t p = lo; p < hi; ++p) row(b, p);
}

/* The twin's fast path on the rows idx[0 .. n) of block [lo, hi), sorted by class (class_key, a counting sort), each
 * class's run gathered KL_TWIN_ROWS rows at a time into contiguous arrays for kl_twin_fast_rows (host/twin_fast.c:
 * what kernels/impact.cl's fast kernel does for a block of one class, vectorised by gcc) and its metrics scattered
 * back; a row whose key missed its class is declined there, and computed by kl_impact after. */
static void twin_fast(kl_impact_batch *b, const class_bounds *B, const int *idx, size_t n)
{
  const size_t P = b->P;
  int sorted[KL_TWIN_BLOCK];
  uint16_t keys[KL_TWIN_BLOCK];
  size_t at[KL_FAST_NCLASS + 1] = {0};
  for (size_t i = 0; i < n; ++i) {
    const size_t p = (size_t)idx[i];
    keys[i] = (uint16_t)class_key(B, b->ix[KL_IIN_MODEL * P + p], b->x[KL_IN_N * P + p], b->ix[KL_IIN_LAW * P + p],
                                  b->x[KL_IN_CR * P + p]);
    at[keys[i] + 1]++;
  }
  for (int c = 0; c < KL_FAST_NCLASS; ++c) at[c + 1] += at[c];
  for (size_t i = 0; i < n; ++i) sorted[at[keys[i]]++] = idx[i];
  kl_twin_rows r;
  /* class cls's run is now [at[cls - 1], at[cls]) (at[-1] taken as 0), taken KL_TWIN_ROWS rows at a time */
  for (int cls = 0; cls < KL_FAST_NCLASS; ++cls)
    for (size_t a = cls ? at[cls - 1] : 0, end; a < at[cls]; a = end) {
      end = at[cls] - a < KL_TWIN_ROWS ? at[cls] : a + KL_TWIN_ROWS;
      for (size_t i = a; i < end; ++i) {
        const kl_impact_in in = kl_impact_batch_get(b, (size_t)sorted[i]);
        r.m[i - a] = in.m, r.K[i - a] = in.K, r.n[i - a] = in.n, r.cr[i - a] = in.cr, r.v0[i - a] = in.v0;
        r.model[i - a] = in.model, r.law[i - a] = in.law, r.rule[i - a] = in.rule;
      }
      kl_twin_fast_rows(&r, (int)(end - a), cls);
      for (size_t i = a; i < end; ++i) {
        const size_t p = (size_t)sorted[i];
        for (int c = 0; c < KL_NOUT; ++c) b->y[(size_t)c * P + p] = r.y[c][i - a];
        b->status[p] = r.status[i - a];
      }
    }
}

/* Rows [lo, hi) as the OpenCL path does them: without samples the rows of the fast kinds by their straight-line
 * functions first (twin_fast), then kl_impact on every other row and on those the fast path declined
 * (KL_PENDING). */
static void twin_block(kl_impact_batch *b, const class_bounds *B, size_t lo, size_t hi, int fast_only)
{
  if (b->M) {
    for (size_t p = lo; p < hi; ++p) row(b, p);
    return;
  }
  int idx[KL_TWIN_BLOCK];
  twin_fast(b, B, idx, fast_list(b->x, b->ix, b->P, lo, hi - lo, lo, idx));
  const size_t P = b->P;
  for (size_t p = lo; p < hi; ++p)
    if (kl_impact_fast_kind(b->ix[KL_IIN_MODEL * P + p], b->x[KL_IN_FE * P + p]) < 0 ||
        (b->status[p] == KL_PENDING && !fast_only))
      row(b, p);
}

void kl_impact_run_omp(kl_impact_batch *b, size_t lo, size_t hi, int threads)
{
  kl_impact_run_twin(b, lo, hi, threads, 0);
}

void kl_impact_run_twin(kl_impact_batch *b, size_t lo, size_t hi, int threads, int fast_only)
{
  const int nt = threads > 0 ? threads : omp_get_max_threads();
  /* blocks of 256 to KL_TWIN_BLOCK rows, about eight a thread: long runs of a class, and work for every thread */
  size_t blk = (hi - lo) / (8 * (size_t)nt);
  blk = blk < 256 ? 256 : blk > KL_TWIN_BLOCK ? KL_TWIN_BLOCK : blk;
  const size_t nb = (hi - lo + blk - 1) / blk;
  const class_bounds *B = class_bounds_get();
  /* dynamic: the blocks' mixes of models differ in cost */
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
  for (size_t k = 0; k < nb; ++k) {
    const size_t a = lo + k * blk;
    twin_block(b, B, a, hi - a < blk ? hi : a + blk, fast_only);
  }
}

//------- OpenCL path -------

size_t kl_impact_chunk(const kl_host *h, int M)
{
  const kl_device_info *d = kl_host_device(h);
  if (!d || !h->opencl) return 0;
  const size_t wgs = (size_t)h->wgs;
  /* widest table per scenario (bytes) decides against the largest single buffer */
  size_t widest = (size_t)(KL_NIN > KL_NOUT ? KL_NIN : KL_NOUT) * sizeof(double);
  if ((size_t)KL_NSMP * (size_t)M * sizeof(double) > widest) widest = (size_t)KL_NSMP * (size_t)M * sizeof(double);
  const size_t per = (size_t)KL_NIN * 8 + (size_t)KL_NIIN * 4 + (size_t)KL_NOUT * 8 + 4 + (size_t)KL_NSMP * (size_t)M * 8;
  size_t c = h->chunk;
  const size_t by_alloc = (size_t)(d->max_alloc / widest);
  const size_t by_mem = (size_t)(d->global_mem / 2 / per); /* leave half the memory to others */
  if (by_alloc < c) c = by_alloc;
  if (by_mem < c) c = by_mem;
  if (c > (size_t)INT_MAX - wgs) c = (size_t)INT_MAX - wgs; /* the kernel indexes rows with int */
  if (c >= wgs) c = c / wgs * wgs;
  else if (c < h->chunk)
    c = 0; /* not even one work-group fits */
  return c;
}

/* Write a (rows x cnt) slice starting at column `start` of a host table with row pitch P (elements of
 * elem bytes) into a packed (rows x cnt) device buffer, or read it back (write = 0). Non-blocking. */
static kelvin_status rect(kl_host *h, cl_mem buf, int write, void *host, size_t elem, size_t rows, size_t start,
                          size_t cnt, size_t P)
{
  kelvin_status st = KELVIN_OK;
  const size_t bo[3] = {0, 0, 0}, ho[3] = {start * elem, 0, 0}, reg[3] = {cnt * elem, rows, 1};
  /* the whole table: one contiguous block (a plain transfer; Oclgrind's uninitialised-value check does not
   * see what a rectangular write stores, tests/oclgrind_test.sh) */
  if (start == 0 && cnt == P) {
    if (write)
      KL_CL(h, clEnqueueWriteBuffer(h->q, buf, CL_FALSE, 0, rows * cnt * elem, host, 0, NULL, NULL));
    else
      KL_CL(h, clEnqueueReadBuffer(h->q, buf, CL_FALSE, 0, rows * cnt * elem, host, 0, NULL, NULL));
    return st;
  }
  if (write)
    KL_CL(h, clEnqueueWriteBufferRect(h->q, buf, CL_FALSE, bo, ho, reg, cnt * elem, 0, P * elem, 0, host, 0, NULL, NULL));
  else
    KL_CL(h, clEnqueueReadBufferRect(h->q, buf, CL_FALSE, bo, ho, reg, cnt * elem, 0, P * elem, 0, host, 0, NULL, NULL));
cleanup:
  return st;
}

/* The scenarios of a chunk grouped by model (Hunt-Crossley, Kelvin-Voigt, the rest), each group in its
 * original order: the kernel's vectorised quadrature then runs in the work-groups of the first group only
 * (kernels/impact.cl). perm (cnt) receives the rows start + perm[i]; returns 1 if more than one group is
 * present (else the chunk goes as it is). */
static int group_by_model(const kl_impact_batch *b, size_t start, size_t cnt, size_t *perm)
{
  size_t count[3] = {0, 0, 0};
  const int *model = b->ix + (size_t)KL_IIN_MODEL * b->P + start;
  for (size_t i = 0; i < cnt; ++i) count[model[i] == KL_MODEL_HC ? 0 : model[i] == KL_MODEL_KV ? 1 : 2]++;
  if (count[0] == cnt || count[1] == cnt || count[2] == cnt) return 0;
  size_t at[3] = {0, count[0], count[0] + count[1]};
  for (size_t i = 0; i < cnt; ++i) perm[at[model[i] == KL_MODEL_HC ? 0 : model[i] == KL_MODEL_KV ? 1 : 2]++] = i;
  return 1;
}

/* Gather (to = 1) columns start + perm[i] of a host table (rows x pitch P) into the first cnt columns of a
 * staging table (rows x pitch SP), or scatter them back (to = 0). */
static void restage(void *table, void *stage, size_t elem, size_t rows, size_t P, size_t SP, size_t start,
                    const size_t *perm, size_t cnt, int to)
{
  for (size_t r = 0; r < rows; ++r) {
    char *t = (char *)table + (r * P + start) * elem, *g = (char *)stage + r * SP * elem;
    for (size_t i = 0; i < cnt; ++i) {
      if (to)
        memcpy(g + i * elem, t + perm[i] * elem, elem);
      else
        memcpy(t + perm[i] * elem, g + i * elem, elem);
    }
  }
}

/* The impact kernel's arguments after the row count: the samples per scenario and the five buffers (argument 7,
 * the end row, is set per launch). */
static kelvin_status set_buffers(kl_host *h, size_t M, cl_mem dx, cl_mem dix, cl_mem dy, cl_mem dst, cl_mem dsmp)
{
  kelvin_status st = KELVIN_OK;
  const cl_int iM = (cl_int)M;
  KL_CL(h, clSetKernelArg(h->k_impact, 1, sizeof iM, &iM));
  KL_CL(h, clSetKernelArg(h->k_impact, 2, sizeof dx, &dx));
  KL_CL(h, clSetKernelArg(h->k_impact, 3, sizeof dix, &dix));
  KL_CL(h, clSetKernelArg(h->k_impact, 4, sizeof dy, &dy));
  KL_CL(h, clSetKernelArg(h->k_impact, 5, sizeof dst, &dst));
  KL_CL(h, clSetKernelArg(h->k_impact, 6, sizeof dsmp, &dsmp));
cleanup:
  return st;
}

/* The fast kernel's buffer arguments (0: rows of the tables, 1-4: x, ix, y, status; the list and the count of
 * declined rows are the handle's, run_fast) */
static kelvin_status set_fast_buffers(kl_host *h, cl_mem dx, cl_mem dix, cl_mem dy, cl_mem dst)
{
  kelvin_status st = KELVIN_OK;
  KL_CL(h, clSetKernelArg(h->k_fast, 1, sizeof dx, &dx));
  KL_CL(h, clSetKernelArg(h->k_fast, 2, sizeof dix, &dix));
  KL_CL(h, clSetKernelArg(h->k_fast, 3, sizeof dy, &dy));
  KL_CL(h, clSetKernelArg(h->k_fast, 4, sizeof dst, &dst));
cleanup:
  return st;
}

/* The sorted list of R rows: sort_by_class's pads, at most (rows - 1) for each class of a window, are at most as
 * many as a whole window's entries, and at most KL_PADS in the last one */
#define KL_PADS ((size_t)(KL_FAST_ROWS_CPU - 1) * KL_FAST_NCLASS)
#define KL_DEV_LIST(R) (2 * (R) + KL_PADS)
/* Fewest rows of a launch in place (a CPU device) for which the fast kernel runs: below, its launch (pocl: ~0.1-0.3
 * ms) costs more than it saves, and the general kernel alone gives the same bits (sweep_throughput at 1e3 rows:
 * 0.97e6 scenarios/s with the fast kernels, 2.1e6 without) */
#define KL_FAST_MIN_ROWS ((size_t)1 << 15)

/* The handle's host room for a chunk of cnt rows (fast_ws): the list (KL_DEV_LIST(cnt) ints), the keys (cnt), then
 * the sort's counts from this index of size_t on */
static size_t fast_ws_at(size_t cnt)
{
  return (KL_DEV_LIST(cnt) * sizeof(int) + cnt * sizeof(uint16_t) + sizeof(size_t) - 1) / sizeof(size_t);
}

/* The handle's room for the fast kernel's lists of chunks of up to cnt rows, kept across batches (a new batch's
 * pages are not faulted in again: page faults and the first writes were ~7 % of a 1e6-row batch's time): the
 * host's list, keys and counts, the device's list and its count of declined rows.
 * The list and the count are bound to the fast kernel (arguments 5 and 7). */
static kelvin_status fast_room(kl_host *h, size_t cnt)
{
  kelvin_status st = KELVIN_OK;
  cl_int err = CL_SUCCESS;
  const size_t ws = (fast_ws_at(cnt) + KL_SORT_AT(cnt)) * sizeof(size_t);
  if (ws > h->fast_ws_bytes) {
    void *p = realloc(h->fast_ws, ws);
    if (!p) return kl_host_fail(h, KELVIN_ERR_NOMEM, "out of memory for the row lists of %zu scenarios", cnt);
    h->fast_ws = p, h->fast_ws_bytes = ws;
  }
  const size_t lb = KL_DEV_LIST(cnt) * sizeof(int);
  if (lb > h->fast_list_bytes) {
    if (h->fast_list) clReleaseMemObject(h->fast_list);
    h->fast_list = NULL, h->fast_list_bytes = 0;
    KL_CL(h, (h->fast_list = clCreateBuffer(h->ctx, CL_MEM_READ_ONLY, lb, NULL, &err), err));
    h->fast_list_bytes = lb;
  }
  if (!h->fast_declined)
    KL_CL(h, (h->fast_declined = clCreateBuffer(h->ctx, CL_MEM_READ_WRITE, sizeof(cl_int), NULL, &err), err));
  KL_CL(h, clSetKernelArg(h->k_fast, 5, sizeof h->fast_list, &h->fast_list));
  KL_CL(h, clSetKernelArg(h->k_fast, 7, sizeof h->fast_declined, &h->fast_declined));
cleanup:
  return st;
}

/* The fast kernel on the rows of one chunk (kernels/impact.cl, docs/design.md section 4): the fast kinds' rows of
 * the cnt rows at column s0 of host tables of pitch `pitch`, as rows base + i of the device tables of P rows,
 * sorted by class (sort_by_class) into the handle's list (fast_room, made room for before), then one launch.
 * *rest: 0 where the general kernel has nothing left to do on the chunk (every row of a fast kind and none declined:
 * then the count of declined rows was read back, which waits for the kernel), else 1. */
static kelvin_status run_fast(kl_host *h, const double *x, const int *ix, size_t pitch, size_t s0, size_t cnt,
                              size_t base, size_t P, int *rest)
{
  _Static_assert(KL_PADS <= KL_SORT_WINDOW, "a whole window's pads are at most its entries");
  kelvin_status st = KELVIN_OK;
  *rest = 1;
  const int rows = kl_device_fast_rows(kl_host_device(h)); /* the kernel's KL_FAST_ROWS */
  int *list = h->fast_ws;
  uint16_t *keys = (uint16_t *)(list + KL_DEV_LIST(cnt));
  size_t *at = (size_t *)h->fast_ws + fast_ws_at(cnt);
  size_t n = 0;
  /* h->threads: kl_host_open's count, never 0 on an opened handle */
  const size_t len = sort_by_class(x, ix, pitch, s0, cnt, base, rows, h->threads, list, keys, at, &n);
  if (!n) return KELVIN_OK;
  KL_CL(h, clEnqueueWriteBuffer(h->q, h->fast_list, CL_TRUE, 0, len * sizeof(int), list, 0, NULL, NULL));
  static const cl_int zero = 0;
  KL_CL(h, clEnqueueWriteBuffer(h->q, h->fast_declined, CL_FALSE, 0, sizeof zero, &zero, 0, NULL, NULL));
  const size_t wgs = (size_t)h->wgs;
  const cl_int iP = (cl_int)P, ilen = (cl_int)len;
  const size_t items = (len + (size_t)rows - 1) / (size_t)rows, global = (items + wgs - 1) / wgs * wgs;
  KL_CL(h, clSetKernelArg(h->k_fast, 0, sizeof iP, &iP));
  KL_CL(h, clSetKernelArg(h->k_fast, 6, sizeof ilen, &ilen));
  KL_CL(h, clEnqueueNDRangeKernel(h->q, h->k_fast, 1, NULL, &global, &wgs, 0, NULL, NULL));
  if (n == cnt) {
    cl_int declined = 1;
    KL_CL(h, clEnqueueReadBuffer(h->q, h->fast_declined, CL_TRUE, 0, sizeof declined, &declined, 0, NULL, NULL));
    *rest = declined != 0;
  }
cleanup:
  return st;
}

/* Work-items of a launch of cnt rows on a CPU device: KL_CPU_WG_PER_CU work-groups per compute unit, each
 * work-item on a block of neighbouring rows (kernels/impact.cl), or one per row if that is fewer. pocl 3.1
 * on 2 EPYC cores, 1e6 Emden-Fowler rows, OpenCL / OpenMP twin (medians of 9, load ~11): one row per
 * work-item 0.89, 8 work-groups per compute unit 0.92-0.99, 64: 1.10-1.15 (Kelvin-Voigt 0.85-0.95 all
 * three); rows strided by the global size instead of in blocks: 0.30-0.35 (cache lines of 16 columns
 * fetched for one row each). */
#define KL_CPU_WG_PER_CU 64
static size_t cpu_global(const kl_host *h, size_t cnt)
{
  const size_t wgs = (size_t)h->wgs, rows = (cnt + wgs - 1) / wgs * wgs;
  const unsigned cu = kl_host_device(h)->compute_units;
  const size_t most = (size_t)(cu ? cu : 1) * KL_CPU_WG_PER_CU * wgs;
  return rows < most ? rows : most;
}

/* On a CPU device: the kernel works on the batch's own tables (CL_MEM_USE_HOST_PTR over page-aligned
 * tables, which pocl uses in place), so no input or result is copied and no scenario is regrouped (a CPU
 * work-group runs its work-items one after the other: a branch that differs between them costs nothing
 * extra); chunks of `chunk` rows are launched at a global offset, so that progress comes and a stop is
 * heard; the results are made visible to the host by mapping them. */
static kelvin_status run_cl_inplace(kl_host *h, kl_impact_batch *b, size_t lo, size_t hi, size_t chunk,
                                    kl_progress_fn progress, void *ctx)
{
  kelvin_status st = KELVIN_OK;
  cl_int err = CL_SUCCESS;
  const size_t P = b->P, M = (size_t)b->M, wgs = (size_t)h->wgs;
  size_t stopped = 0; /* rows done when the progress callback said stop (results mapped all the same) */
  const cl_mem_flags in = CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, out = CL_MEM_WRITE_ONLY | CL_MEM_USE_HOST_PTR;
  cl_mem dx = NULL, dix = NULL, dy = NULL, dst = NULL, dsmp = NULL;
  const cl_int fast = M == 0; /* the fast kernels where no samples are asked for */
  KL_CL(h, (dx = clCreateBuffer(h->ctx, in, KL_NIN * P * sizeof(double), b->x, &err), err));
  KL_CL(h, (dix = clCreateBuffer(h->ctx, in, KL_NIIN * P * sizeof(int), b->ix, &err), err));
  KL_CL(h, (dy = clCreateBuffer(h->ctx, out, KL_NOUT * P * sizeof(double), b->y, &err), err));
  /* read and written: the general kernel reads what the fast kernels wrote */
  KL_CL(h, (dst = clCreateBuffer(h->ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, P * sizeof(int), b->status, &err),
            err));
  if (M)
    KL_CL(h, (dsmp = clCreateBuffer(h->ctx, out, KL_NSMP * M * P * sizeof(double), b->smp, &err), err));
  else /* a kernel argument must be a valid buffer even when M = 0: one element */
    KL_CL(h, (dsmp = clCreateBuffer(h->ctx, CL_MEM_WRITE_ONLY, sizeof(double), NULL, &err), err));
  const cl_int iP = (cl_int)P;
  KL_CL(h, clSetKernelArg(h->k_impact, 0, sizeof iP, &iP));
  if ((st = set_buffers(h, M, dx, dix, dy, dst, dsmp)) != KELVIN_OK) goto cleanup;
  if (fast) {
    const size_t most = hi - lo < chunk ? hi - lo : chunk;
    if ((st = fast_room(h, most ? most : 1)) != KELVIN_OK) goto cleanup;
    if ((st = set_fast_buffers(h, dx, dix, dy, dst)) != KELVIN_OK) goto cleanup;
  }
  for (size_t start = lo; start < hi; start += chunk) {
    const size_t cnt = (hi - start < chunk) ? hi - start : chunk, global = cpu_global(h, cnt);
    const cl_int use = fast && cnt >= KL_FAST_MIN_ROWS ? 1 + (h->fast_only != 0) : 0;
    KL_CL(h, clSetKernelArg(h->k_impact, 9, sizeof use, &use));
    int rest = 1;
    if (use && (st = run_fast(h, b->x, b->ix, P, start, cnt, start, P, &rest)) != KELVIN_OK) goto cleanup;
    const size_t per = (cnt + global - 1) / global;
    const cl_int iend = (cl_int)(start + cnt), irows = (cl_int)per;
    KL_CL(h, clSetKernelArg(h->k_impact, 7, sizeof iend, &iend));
    KL_CL(h, clSetKernelArg(h->k_impact, 8, sizeof irows, &irows));
    if (rest) KL_CL(h, clEnqueueNDRangeKernel(h->q, h->k_impact, 1, &start, &global, &wgs, 0, NULL, NULL));
    if (start + cnt < hi) KL_CL(h, clFinish(h->q));
    if (progress && start + cnt < hi && progress(ctx, start + cnt - lo, hi - lo)) {
      stopped = start + cnt - lo;
      break;
    }
  }
  /* map and unmap each result table: after this the host copy holds what the kernel wrote */
  cl_mem res[3] = {dy, dst, M ? dsmp : NULL};
  const size_t bytes[3] = {KL_NOUT * P * sizeof(double), P * sizeof(int), KL_NSMP * M * P * sizeof(double)};
  for (int i = 0; i < 3; ++i) {
    if (!res[i]) continue;
    void *ptr = clEnqueueMapBuffer(h->q, res[i], CL_TRUE, CL_MAP_READ, 0, bytes[i], 0, NULL, NULL, &err);
    KL_CL(h, err);
    KL_CL(h, clEnqueueUnmapMemObject(h->q, res[i], ptr, 0, NULL, NULL));
  }
  KL_CL(h, clFinish(h->q));
  if (!stopped && progress && progress(ctx, hi - lo, hi - lo)) stopped = hi - lo;
  if (stopped)
    st = kl_host_fail(h, KELVIN_ERR_STOPPED, "stopped by the progress callback after %zu of %zu scenarios", stopped,
                      hi - lo);
cleanup:
  if (st != KELVIN_OK && h->q) clFinish(h->q);
  if (dsmp) clReleaseMemObject(dsmp);
  if (dst) clReleaseMemObject(dst);
  if (dy) clReleaseMemObject(dy);
  if (dix) clReleaseMemObject(dix);
  if (dx) clReleaseMemObject(dx);
  return st;
}

/* 1 if batches run in place on device d: a CPU device, except Oclgrind (tests/oclgrind_test.sh), whose
 * uninitialised-value check does not see what a CL_MEM_USE_HOST_PTR buffer holds and reported every input
 * read; under it the staged path runs, the one a GPU takes, which is the path worth checking for
 * portability. */
static int in_place_device(const kl_device_info *d)
{
  return (d->type & CL_DEVICE_TYPE_CPU) && !strstr(d->name, "Oclgrind") && !strstr(d->platform_name, "Oclgrind");
}

/* The OpenCL path: chunks of at most `chunk` rows through device buffers sized for one chunk; a chunk that
 * mixes models goes through a staging copy grouped by model (group_by_model), so that a GPU's work-group
 * takes one branch. A batch whose tables each fit one buffer runs in place on a CPU device
 * (run_cl_inplace). */
static kelvin_status run_cl(kl_host *h, kl_impact_batch *b, size_t lo, size_t hi, kl_progress_fn progress, void *ctx,
                            int inplace)
{
  kelvin_status st = KELVIN_OK;
  cl_int err = CL_SUCCESS;
  cl_mem dx = NULL, dix = NULL, dy = NULL, dst = NULL, dsmp = NULL;
  kl_impact_batch *stage = NULL;
  size_t *perm = NULL;
  const size_t P = b->P, M = (size_t)b->M, n = hi - lo; /* rows [lo, hi) of P: this rank's share */
  if ((st = kl_host_build_impact(h)) != KELVIN_OK) return st;
  size_t chunk = kl_impact_chunk(h, b->M);
  if (chunk == 0)
    return kl_host_fail(h, KELVIN_ERR_ARG, "%d samples per scenario do not fit in the memory of '%s'; use fewer",
                        b->M, kl_host_device(h)->name);
  const size_t wgs = (size_t)h->wgs;
  if (progress) { /* chunks of a twentieth of the batch at most, so that progress comes and a stop is heard */
    size_t pc = n / 20 < KL_PROGRESS_CHUNK ? KL_PROGRESS_CHUNK : n / 20;
    pc = pc / wgs * wgs;
    if (pc >= wgs && pc < chunk) chunk = pc;
  }
  /* in place: each whole table must fit one buffer of the device */
  size_t widest = (size_t)(KL_NIN > KL_NOUT ? KL_NIN : KL_NOUT) * sizeof(double);
  if (M && (size_t)KL_NSMP * M * sizeof(double) > widest) widest = (size_t)KL_NSMP * M * sizeof(double);
  if (inplace && in_place_device(kl_host_device(h)) && P <= (size_t)(kl_host_device(h)->max_alloc / widest) &&
      P <= (size_t)INT_MAX - wgs)
    return run_cl_inplace(h, b, lo, hi, chunk, progress, ctx);
  if (n == 0) { /* an empty share (fewer rows than ranks) */
    if (progress && progress(ctx, 0, 0))
      return kl_host_fail(h, KELVIN_ERR_STOPPED, "stopped by the progress callback after 0 of 0 scenarios");
    return KELVIN_OK;
  }
  if (chunk > n) chunk = (n + wgs - 1) / wgs * wgs; /* buffers no larger than the share needs */
  KL_CL(h, (dx = clCreateBuffer(h->ctx, CL_MEM_READ_ONLY, KL_NIN * chunk * sizeof(double), NULL, &err), err));
  KL_CL(h, (dix = clCreateBuffer(h->ctx, CL_MEM_READ_ONLY, KL_NIIN * chunk * sizeof(int), NULL, &err), err));
  KL_CL(h, (dy = clCreateBuffer(h->ctx, CL_MEM_WRITE_ONLY, KL_NOUT * chunk * sizeof(double), NULL, &err), err));
  /* read and written: the general kernel reads what the fast kernels wrote */
  KL_CL(h, (dst = clCreateBuffer(h->ctx, CL_MEM_READ_WRITE, chunk * sizeof(int), NULL, &err), err));
  /* a kernel argument must be a valid buffer even when M = 0: one element */
  KL_CL(h, (dsmp = clCreateBuffer(h->ctx, CL_MEM_WRITE_ONLY, (M ? KL_NSMP * M * chunk : 1) * sizeof(double), NULL,
                                  &err),
            err));
  if ((st = set_buffers(h, M, dx, dix, dy, dst, dsmp)) != KELVIN_OK) goto cleanup;
  const cl_int fast = M == 0; /* the fast kernels where no samples are asked for */
  if (fast) {
    if ((st = fast_room(h, chunk)) != KELVIN_OK) goto cleanup;
    if ((st = set_fast_buffers(h, dx, dix, dy, dst)) != KELVIN_OK) goto cleanup;
  }
  for (size_t start = lo; start < hi; start += chunk) {
    const size_t cnt = (hi - start < chunk) ? hi - start : chunk;
    const cl_int iP = (cl_int)cnt;
    const size_t global = (cnt + wgs - 1) / wgs * wgs;
    KL_CL(h, clSetKernelArg(h->k_impact, 0, sizeof iP, &iP));
    const cl_int one = 1;
    KL_CL(h, clSetKernelArg(h->k_impact, 7, sizeof iP, &iP)); /* end: every row of the chunk */
    KL_CL(h, clSetKernelArg(h->k_impact, 8, sizeof one, &one)); /* one row per work-item */
    if (!perm && !(perm = malloc((chunk < n ? chunk : n) * sizeof *perm))) {
      st = kl_host_fail(h, KELVIN_ERR_NOMEM, "out of memory for the model grouping of %zu scenarios", cnt);
      goto cleanup;
    }
    const int grouped = group_by_model(b, start, cnt, perm);
    if (grouped && !stage && (st = kl_impact_batch_create(chunk < n ? chunk : n, b->M, &stage)) != KELVIN_OK) {
      st = kl_host_fail(h, st, "out of memory for the model grouping of %zu scenarios", cnt);
      goto cleanup;
    }
    /* source of this chunk: the batch's own columns, or the staging copy grouped by model */
    double *sx = b->x, *sy = b->y, *ssmp = b->smp;
    int *six = b->ix, *sst = b->status;
    size_t s0 = start, pitch = P;
    if (grouped) {
      const size_t SP = stage->P;
      restage(b->x, stage->x, sizeof(double), KL_NIN, P, SP, start, perm, cnt, 1);
      restage(b->ix, stage->ix, sizeof(int), KL_NIIN, P, SP, start, perm, cnt, 1);
      sx = stage->x, sy = stage->y, ssmp = stage->smp, six = stage->ix, sst = stage->status;
      s0 = 0, pitch = SP;
    }
    if ((st = rect(h, dx, 1, sx, sizeof(double), KL_NIN, s0, cnt, pitch)) != KELVIN_OK) goto cleanup;
    if ((st = rect(h, dix, 1, six, sizeof(int), KL_NIIN, s0, cnt, pitch)) != KELVIN_OK) goto cleanup;
    const cl_int use = fast ? 1 + (h->fast_only != 0) : 0; /* a GPU's launches are cheap: no threshold */
    KL_CL(h, clSetKernelArg(h->k_impact, 9, sizeof use, &use));
    int rest = 1;
    if (fast && (st = run_fast(h, sx, six, pitch, s0, cnt, 0, cnt, &rest)) != KELVIN_OK) goto cleanup;
    if (rest) KL_CL(h, clEnqueueNDRangeKernel(h->q, h->k_impact, 1, NULL, &global, &wgs, 0, NULL, NULL));
    if ((st = rect(h, dy, 0, sy, sizeof(double), KL_NOUT, s0, cnt, pitch)) != KELVIN_OK) goto cleanup;
    if ((st = rect(h, dst, 0, sst, sizeof(int), 1, s0, cnt, pitch)) != KELVIN_OK) goto cleanup;
    if (M && (st = rect(h, dsmp, 0, ssmp, sizeof(double), KL_NSMP * M, s0, cnt, pitch)) != KELVIN_OK) goto cleanup;
    KL_CL(h, clFinish(h->q));
    if (grouped) {
      const size_t SP = stage->P;
      restage(b->y, stage->y, sizeof(double), KL_NOUT, P, SP, start, perm, cnt, 0);
      restage(b->status, stage->status, sizeof(int), 1, P, SP, start, perm, cnt, 0);
      if (M) restage(b->smp, stage->smp, sizeof(double), KL_NSMP * M, P, SP, start, perm, cnt, 0);
    }
    if (progress && progress(ctx, start + cnt - lo, n)) {
      st = kl_host_fail(h, KELVIN_ERR_STOPPED, "stopped by the progress callback after %zu of %zu scenarios",
                        start + cnt - lo, n);
      goto cleanup;
    }
  }
cleanup:
  if (st != KELVIN_OK && h->q) clFinish(h->q); /* no transfer may still target host memory */
  kl_impact_batch_destroy(stage);
  free(perm);
  if (dsmp) clReleaseMemObject(dsmp);
  if (dst) clReleaseMemObject(dst);
  if (dy) clReleaseMemObject(dy);
  if (dix) clReleaseMemObject(dix);
  if (dx) clReleaseMemObject(dx);
  return st;
}

/* Rows [lo, hi) on the handle's path (progress counts rows of the range). */
static kelvin_status run_range(kl_host *h, kl_impact_batch *b, size_t lo, size_t hi, kl_progress_fn progress,
                               void *ctx, int inplace)
{
  if (h->opencl) return run_cl(h, b, lo, hi, progress, ctx, inplace);
  if (lo == hi && progress && progress(ctx, 0, 0))
    return kl_host_fail(h, KELVIN_ERR_STOPPED, "stopped by the progress callback after 0 of 0 scenarios");
  for (size_t a = lo; a < hi; a += OMP_BLOCK) {
    const size_t e = (hi - a < OMP_BLOCK) ? hi : a + OMP_BLOCK;
    kl_impact_run_omp(b, a, e, h->threads);
    if (progress && progress(ctx, e - lo, hi - lo))
      return kl_host_fail(h, KELVIN_ERR_STOPPED, "stopped by the progress callback after %zu of %zu scenarios", e - lo,
                          hi - lo);
  }
  return KELVIN_OK;
}

/* A batch on a sharded handle (docs/design.md section 11): this rank's share of the rows, the agreement on
 * the status (a failure or a stop on one rank ends every rank with its message), then the results' columns
 * (y, status, smp: tables of row pitch P) gathered to rank 0. Each row's result is kl_impact of its own
 * inputs alone (kernels/impact.cl: no quantity is shared between rows, lanes or work-groups), so where a
 * share's chunks start does not change a bit of it. */
static kelvin_status run_sharded(kl_host *h, kl_impact_batch *b, kl_progress_fn progress, void *ctx, int inplace)
{
  const kelvin_shard *sh = kl_host_shard(h);
  size_t lo, hi;
  kl_shard_range(sh, b->P, &lo, &hi);
  kelvin_status st = run_range(h, b, lo, hi, progress, ctx, inplace);
  if (!kl_shard_on(sh)) return st;
  if ((st = kl_shard_agree(sh, st, h->msg, sizeof h->msg)) != KELVIN_OK) return st;
  const size_t M = (size_t)b->M;
  if ((st = kl_shard_gather_cols(sh, b->y, KL_NOUT, b->P, sizeof(double), 0, h->msg, sizeof h->msg)) == KELVIN_OK &&
      (st = kl_shard_gather_cols(sh, b->status, 1, b->P, sizeof(int), 0, h->msg, sizeof h->msg)) == KELVIN_OK && M)
    st = kl_shard_gather_cols(sh, b->smp, KL_NSMP * M, b->P, sizeof(double), 0, h->msg, sizeof h->msg);
  /* a gather that failed on one rank (out of memory) fails on every rank */
  return kl_shard_agree(sh, st, h->msg, sizeof h->msg);
}

kelvin_status kl_impact_run(kl_host *h, kl_impact_batch *b, kl_progress_fn progress, void *ctx)
{
  return run_sharded(h, b, progress, ctx, 1);
}

kelvin_status kl_impact_run_staged(kl_host *h, kl_impact_batch *b, kl_progress_fn progress, void *ctx)
{
  if (!h->opencl) return kl_host_fail(h, KELVIN_ERR_ARG, "the staged impact path needs an OpenCL device");
  return run_sharded(h, b, progress, ctx, 0);
}
