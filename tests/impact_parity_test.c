/* tests/impact_parity_test.c: the three paths of an impact batch agree (docs/design.md section 4): the OpenCL
 * kernel (kernels/impact.cl on the default device, pocl in CI), the OpenMP twin and the plain serial
 * loop, on 10^5 random scenarios that include near-critical damping, cr -> 0 and cr = 1, tiny and huge
 * stiffness, every model, law and separation rule, the general law by the step and Hunt-Crossley under an
 * external force, and invalid inputs. Also: batches split into chunks
 * give the same numbers as one launch, and sampled force / penetration agree too.
 *
 * Tolerance: 1e-12 relative, not bit-for-bit. The headers are compiled by gcc for the host and by the
 * device's OpenCL compiler, both without contraction (-ffp-contract=off, FP_CONTRACT OFF) or fast-math,
 * so + - * / and sqrt round alike, and so do the log, log1p, exp and x^p of the hot loops (kl_log,
 * kl_log1p, kl_exp, kl_powr, kl_expm1, kl_sincos, kl_atan2 in kernels/kl_math.h: arithmetic, not library
 * calls); only the rarer library calls (tgamma, and pow/expm1 for uncommon exponents) come from
 * different libraries (glibc vs the device's libm, e.g. pocl's SLEEF) that may differ by a few ulp.
 * The closed forms amplify that by their condition numbers (root finds, Lambert W near its branch
 * point, quadrature of 1/|d'|); 1e-12 leaves a factor ~4000 over one ulp (2.2e-16) for that. Quantities
 * that are differences of O(1) numbers are compared against that O(1) scale instead of their own size:
 * ediss = 1 - cr_eff^2 and cr_eff = -(v0 + dv)/v0 (scale 1), sampled penetration near contact end (scale d_max), sampled force
 * (scale F_peak), sample abscissa (scale t_c or 2). The OpenMP twin and the serial loop run the same
 * host code, so they must agree bit for bit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "host/host.h"
#include "host/host_impl.h"
#include "host/impact_batch.h"

#define NSCEN 100000
#define TOL 1e-12

static kl_host *host; /* opened once on the default OpenCL device */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
/* splitmix64: a small, well-mixed deterministic generator */
static uint64_t rnd64(void)
{
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}
/* uniform in [0, 1) */
static double unif(void) { return (double)(rnd64() >> 11) * 0x1.0p-53; }
/* log-uniform in [lo, hi] */
static double logu(double lo, double hi) { return lo * pow(hi / lo, unif()); }

/* A random scenario; about 3 % invalid on purpose. */
static kl_impact_in scenario(void)
{
  kl_impact_in in;
  in.model = (int)(rnd64() % KL_NMODELS);
  /* the general law goes by the step (~0.3 ms a scenario, ~1000x a closed form): a sixth of its draws, ~4 %
   * of the rows, keep the test's time near what it was */
  if (in.model == KL_MODEL_GEN && unif() < 5.0 / 6.0) in.model = (int)(rnd64() % KL_MODEL_GEN);
  in.law = (int)(rnd64() % KL_NLAWS);
  in.rule = (int)(rnd64() % 2);
  in.m = logu(1e-3, 1e3);
  in.K = (unif() < 0.1) ? logu(1e-3, 1.0) : ((unif() < 0.1) ? logu(1e12, 1e15) : logu(1e3, 1e11)); /* tiny, huge */
  in.n = in.model == KL_MODEL_KV ? 1.0 : ((unif() < 0.5) ? 1.5 : 1.0 + 1.5 * unif());
  const double u = unif();
  if (u < 0.08)
    in.cr = logu(1e-300, 1e-6); /* cr -> 0: Kelvin-Voigt near-critical damping */
  else if (u < 0.14)
    in.cr = 1.0;
  else if (u < 0.20)
    in.cr = 1.0 - logu(1e-15, 1e-6); /* cr -> 1 */
  else if (u < 0.25)
    in.cr = logu(1e-3, 1e-1);
  else
    in.cr = unif() * 0.999 + 0.001;
  in.v0 = logu(1e-4, 1e2);
  /* external force on Kelvin-Voigt rows: pulling (-) or pushing (+); a push that holds the contact closed
   * searches the whole 1000-period horizon before reporting KL_NO_SEPARATION (~2 ms), so keep it rare */
  const double uf = unif();
  in.fe = 0.0;
  if (in.model == KL_MODEL_KV && uf < 0.15) in.fe = -logu(1e-3, 1e3) * in.v0 * sqrt(in.K * in.m);
  if (in.model == KL_MODEL_KV && uf > 0.98) in.fe = logu(1e-3, 1e1) * in.v0 * sqrt(in.K * in.m);
  /* Hunt-Crossley under an external force (by the step, kernels/kl_impact_step.h): fe
   * within +-0.3 of the elastic force K d*^n at the Hertz depth d* (by the step: 4 % of its rows) */
  if (in.model == KL_MODEL_HC && uf < 0.04) {
    const double ds = pow((in.n + 1.0) * in.m * in.v0 * in.v0 / (2.0 * in.K), 1.0 / (in.n + 1.0));
    in.fe = (uf * 50.0 - 1.0) * 0.3 * in.K * pow(ds, in.n);
  }
  /* the general law (kernels/kl_contact_gen.h): exponents n1 = n in [1, 2.5], n2 in [0, 2.5], rate exponent in
   * [0.3, 2.5]; c sized so that the damping force at the impact speed and the Hertz depth d* is z times the
   * elastic one there, z log-uniform in [1e-3, 3] */
  in.c = in.n2 = in.rate_exp = 0.0;
  if (in.model == KL_MODEL_GEN) {
    in.n2 = (unif() < 0.3) ? in.n : 2.5 * unif();
    in.rate_exp = (unif() < 0.3) ? 1.0 : 0.3 + 2.2 * unif();
    const double ds = pow((in.n + 1.0) * in.m * in.v0 * in.v0 / (2.0 * in.K), 1.0 / (in.n + 1.0));
    in.c = logu(1e-3, 3.0) * in.K * pow(ds, in.n - in.n2) / pow(in.v0, in.rate_exp);
  }
  const double bad = unif();
  if (bad < 0.005) in.m = -1.0;
  else if (bad < 0.01) in.cr = 1.5;
  else if (bad < 0.015) in.cr = 0.0;
  else if (bad < 0.02) in.v0 = NAN;
  else if (bad < 0.025) in.K = INFINITY;
  else if (bad < 0.03) in.law = 7;
  return in;
}

/* A batch of P random scenarios with M samples each (fixed seed). */
static kl_impact_batch *make_batch(size_t P, int M, uint64_t seed)
{
  kl_impact_batch *b = NULL;
  assert_int_equal(kl_impact_batch_create(P, M, &b), KELVIN_OK);
  rng_state = seed;
  for (size_t p = 0; p < P; ++p) kl_impact_batch_set(b, p, scenario());
  return b;
}

/* Copy of b's inputs into a fresh batch. */
static kl_impact_batch *clone_inputs(const kl_impact_batch *b)
{
  kl_impact_batch *c = NULL;
  assert_int_equal(kl_impact_batch_create(b->P, b->M, &c), KELVIN_OK);
  memcpy(c->x, b->x, KL_NIN * b->P * sizeof(double));
  memcpy(c->ix, b->ix, KL_NIIN * b->P * sizeof(int));
  return c;
}

/* A host on the default device whose launches take at most `chunk` scenarios. */
static kl_host *open_chunked(size_t chunk)
{
  kl_host *h = NULL;
  assert_int_equal(kl_host_create(&h), KELVIN_OK);
  kl_host_opts o;
  kl_host_opts_default(&o);
  o.chunk = chunk;
  assert_int_equal(kl_host_open(h, &o), KELVIN_OK);
  return h;
}

/* |a - b| <= TOL max(|a|, |b|, scale); NaN never passes. */
static int close_to(double a, double b, double scale)
{
  if (!isfinite(a) || !isfinite(b)) return 0;
  return fabs(a - b) <= TOL * fmax(fmax(fabs(a), fabs(b)), scale);
}

/* Compare two evaluated batches: statuses equal, metrics within TOL (ediss against 1), no NaN, and
 * invalid rows all zero. Prints the worst relative difference per column. */
static void compare(const kl_impact_batch *ref, const kl_impact_batch *got, const char *what)
{
  static const char *const col[KL_NOUT] = {"dmax", "tmax", "fpeak", "tc", "cr_eff", "ediss", "damp"};
  const size_t P = ref->P;
  double worst[KL_NOUT] = {0};
  size_t nbad = 0, nflag = 0;
  for (size_t p = 0; p < P; ++p) {
    if (ref->status[p] != got->status[p]) {
      if (nbad++ < 5) print_error("%s: row %zu status %d vs %d\n", what, p, ref->status[p], got->status[p]);
      continue;
    }
    if (ref->status[p] != KL_OK) ++nflag;
    for (int c = 0; c < KL_NOUT; ++c) {
      const double a = ref->y[c * P + p], b = got->y[c * P + p];
      /* ediss = 1 - cr_eff^2 and cr_eff = -(v0 + dv)/v0 are differences of O(1) numbers: scale 1 */
      const double scale = (c == KL_OUT_EDISS || c == KL_OUT_CREFF) ? 1.0 : 0.0;
      if (ref->status[p] != KL_OK && (a != 0.0 || b != 0.0)) {
        if (nbad++ < 5) print_error("%s: row %zu has status %d but %s = %g\n", what, p, ref->status[p], col[c], a);
      }
      if (!close_to(a, b, scale)) {
        if (nbad++ < 5) {
          const kl_impact_in in = kl_impact_batch_get(ref, p);
          print_error("%s: row %zu %s %.17g vs %.17g (model %d law %d rule %d m %g K %g n %g cr %.17g v0 %g fe %g)\n",
                      what, p, col[c], a, b, in.model, in.law, in.rule, in.m, in.K, in.n, in.cr, in.v0, in.fe);
        }
      }
      const double d = (a == b) ? 0.0 : fabs(a - b) / fmax(fmax(fabs(a), fabs(b)), scale);
      if (d > worst[c]) worst[c] = d;
    }
  }
  printf("%s: %zu rows (%zu with a status); worst relative difference:", what, P, nflag);
  for (int c = 0; c < KL_NOUT; ++c) printf(" %s %.2g", col[c], worst[c]);
  printf("\n");
  assert_int_equal(nbad, 0);
}

/* Samples against their natural scales (see the header comment). */
static void compare_samples(const kl_impact_batch *ref, const kl_impact_batch *got)
{
  const size_t P = ref->P, M = (size_t)ref->M;
  size_t nbad = 0;
  for (size_t p = 0; p < P; ++p) {
    const kl_impact_in in = kl_impact_batch_get(ref, p);
    const int timed = in.model == KL_MODEL_KV || in.model == KL_MODEL_GEN || in.fe != 0.0; /* sampled in time */
    const double sc[KL_NSMP] = {timed ? ref->y[KL_OUT_TC * P + p] : 2.0, ref->y[KL_OUT_DMAX * P + p],
                                ref->y[KL_OUT_FPEAK * P + p]};
    for (size_t q = 0; q < KL_NSMP; ++q)
      for (size_t j = 0; j < M; ++j) {
        const double a = ref->smp[(q * M + j) * P + p], b = got->smp[(q * M + j) * P + p];
        if (!close_to(a, b, sc[q]) && nbad++ < 5)
          print_error("sample row %zu q %zu j %zu: %.17g vs %.17g (scale %g)\n", p, q, j, a, b, sc[q]);
      }
  }
  assert_int_equal(nbad, 0);
}

/* OpenCL vs OpenMP vs serial on 10^5 scenarios. */
static void test_parity(void **state)
{
  (void)state;
  kl_impact_batch *ser = make_batch(NSCEN, 0, 12345);
  kl_impact_batch *omp = clone_inputs(ser), *cl = clone_inputs(ser);
  kl_impact_run_serial(ser, 0, ser->P);
  kl_impact_run_omp(omp, 0, omp->P, 0);
  const kelvin_status st = kl_impact_run(host, cl, NULL, NULL);
  if (st != KELVIN_OK) print_error("%s\n", kl_host_errmsg(host));
  assert_int_equal(st, KELVIN_OK);
  /* same host code: bit for bit */
  assert_memory_equal(ser->y, omp->y, KL_NOUT * ser->P * sizeof(double));
  assert_memory_equal(ser->status, omp->status, ser->P * sizeof(int));
  compare(ser, cl, "OpenCL vs serial");
  /* the staged path (device buffers, chunks grouped by model, as a GPU is run): same device code, bit for bit */
  kl_impact_batch *stg = clone_inputs(ser);
  assert_int_equal(kl_impact_run_staged(host, stg, NULL, NULL), KELVIN_OK);
  assert_memory_equal(cl->y, stg->y, KL_NOUT * ser->P * sizeof(double));
  assert_memory_equal(cl->status, stg->status, ser->P * sizeof(int));
  kl_impact_batch_destroy(stg);
  kl_impact_batch_destroy(ser);
  kl_impact_batch_destroy(omp);
  kl_impact_batch_destroy(cl);
}

/* A batch split into many chunks (chunk 1000 rounds down to a multiple of the work-group size, and
 * P is no multiple of either) with samples: the same numbers as a single launch and as the host. */
static void test_chunks_and_samples(void **state)
{
  (void)state;
  const size_t P = 10007;
  const int M = 9;
  kl_impact_batch *ser = make_batch(P, M, 777);
  kl_impact_batch *one = clone_inputs(ser), *many = clone_inputs(ser);
  kl_impact_run_serial(ser, 0, P);
  assert_int_equal(kl_impact_run(host, one, NULL, NULL), KELVIN_OK);
  kl_host *small = open_chunked(1000);
  assert_true(kl_impact_chunk(small, M) < 1000);
  assert_int_equal(kl_impact_run(small, many, NULL, NULL), KELVIN_OK);
  /* same device code on the same device: bit for bit */
  assert_memory_equal(one->y, many->y, KL_NOUT * P * sizeof(double));
  assert_memory_equal(one->status, many->status, P * sizeof(int));
  assert_memory_equal(one->smp, many->smp, (size_t)KL_NSMP * (size_t)M * P * sizeof(double));
  compare(ser, many, "chunked OpenCL vs serial");
  compare_samples(ser, many);
  /* the first sample is the impact instant, the last the end of contact (KV) or of the phase (others) */
  for (size_t p = 0; p < P; ++p) {
    if (ser->status[p] != KL_OK) continue;
    assert_true(ser->smp[(KL_SMP_D * (size_t)M + 0) * P + p] == 0.0);
    const kl_impact_in in = kl_impact_batch_get(ser, p);
    const int timed = in.model == KL_MODEL_KV || in.model == KL_MODEL_GEN || in.fe != 0.0; /* sampled in time */
    if (!timed) assert_true(ser->smp[(KL_SMP_S * (size_t)M + (size_t)M - 1) * P + p] == 2.0);
    if (timed && in.model != KL_MODEL_KV)
      assert_true(ser->smp[(KL_SMP_S * (size_t)M + (size_t)M - 1) * P + p] == ser->y[KL_OUT_TC * P + p]);
  }
  kl_host_destroy(small);
  kl_impact_batch_destroy(ser);
  kl_impact_batch_destroy(one);
  kl_impact_batch_destroy(many);
}

/* Batches of one model each (Hunt-Crossley, Kelvin-Voigt, Emden-Fowler), with samples: on a CPU device
 * these run in place (host/impact_batch.c, run_cl_inplace: the kernel on the batch's own tables), and
 * must give the numbers of the copying path (kl_impact_run_staged, through a host with chunks smaller than
 * the batch, bit for bit: same device code) and of the serial loop (within TOL). */
static void test_one_model_in_place(void **state)
{
  (void)state;
  const size_t P = 3001;
  kl_host *small = open_chunked(1000);
  const int models[3] = {KL_MODEL_HC, KL_MODEL_KV, KL_MODEL_EF};
  /* with samples, and without (M = 0: the kernel's sample argument is a one-element stand-in) */
  for (int k = 0; k < 6; ++k) {
    const int mi = k % 3, M = k < 3 ? 5 : 0;
    kl_impact_batch *ser = NULL;
    assert_int_equal(kl_impact_batch_create(P, M, &ser), KELVIN_OK);
    rng_state = 4000 + (uint64_t)mi;
    for (size_t p = 0; p < P;) {
      const kl_impact_in in = scenario();
      if (in.model == models[mi]) kl_impact_batch_set(ser, p++, in);
    }
    kl_impact_batch *inpl = clone_inputs(ser), *copied = clone_inputs(ser);
    kl_impact_run_serial(ser, 0, P);
    assert_int_equal(kl_impact_run(host, inpl, NULL, NULL), KELVIN_OK);
    assert_int_equal(kl_impact_run_staged(small, copied, NULL, NULL), KELVIN_OK);
    assert_memory_equal(inpl->y, copied->y, KL_NOUT * P * sizeof(double));
    assert_memory_equal(inpl->status, copied->status, P * sizeof(int));
    if (M) assert_memory_equal(inpl->smp, copied->smp, (size_t)KL_NSMP * (size_t)M * P * sizeof(double));
    compare(ser, inpl, "one model in place vs serial");
    if (M) compare_samples(ser, inpl);
    kl_impact_batch_destroy(ser);
    kl_impact_batch_destroy(inpl);
    kl_impact_batch_destroy(copied);
  }
  kl_host_destroy(small);
}

static int nprog; /* progress calls seen */
/* Progress callback: counts calls and checks done <= total; goes on. */
static int progress(void *ctx, size_t done, size_t total)
{
  (void)ctx;
  assert_true(done <= total);
  ++nprog;
  return 0;
}
static size_t stop_after; /* rows after which stop_progress asks to stop; 0: never */
/* Progress callback: counts calls, asks to stop once done >= stop_after. */
static int stop_progress(void *ctx, size_t done, size_t total)
{
  (void)ctx;
  assert_true(done <= total);
  ++nprog;
  return stop_after && done >= stop_after;
}

/* A mixed batch with progress on the OpenCL device: 140000 rows in launches of 65536, 65536 and 8928 rows
 * (KL_PROGRESS_CHUNK; on a CPU device in place, the later launches at a global offset, the second with
 * blocks of several rows per work-item): the numbers of one launch, bit for bit, three progress calls;
 * asked to stop after the first, KELVIN_ERR_STOPPED with the first 65536 rows done (as in one launch) and
 * the rest untouched (zero). */
static void test_progress_and_stop(void **state)
{
  (void)state;
  kl_impact_batch *one = make_batch(140000, 0, 4242);
  kl_impact_batch *prog = clone_inputs(one), *stopped = clone_inputs(one);
  const size_t P = one->P;
  assert_int_equal(kl_impact_run(host, one, NULL, NULL), KELVIN_OK);
  nprog = 0;
  stop_after = 0;
  assert_int_equal(kl_impact_run(host, prog, stop_progress, NULL), KELVIN_OK);
  assert_int_equal(nprog, 3);
  assert_memory_equal(one->y, prog->y, KL_NOUT * P * sizeof(double));
  assert_memory_equal(one->status, prog->status, P * sizeof(int));
  nprog = 0;
  stop_after = 1;
  assert_int_equal(kl_impact_run(host, stopped, stop_progress, NULL), KELVIN_ERR_STOPPED);
  assert_int_equal(nprog, 1);
  const size_t done = KL_PROGRESS_CHUNK;
  for (int c = 0; c < KL_NOUT; ++c) {
    assert_memory_equal(one->y + (size_t)c * P, stopped->y + (size_t)c * P, done * sizeof(double));
    for (size_t p = done; p < P; ++p) assert_true(stopped->y[(size_t)c * P + p] == 0.0);
  }
  assert_memory_equal(one->status, stopped->status, done * sizeof(int));
  kl_impact_batch_destroy(one);
  kl_impact_batch_destroy(prog);
  kl_impact_batch_destroy(stopped);
}

/* The OpenMP twin through kl_impact_run (cpu option) with progress: same numbers as the serial loop. */
static void test_twin_via_handle(void **state)
{
  (void)state;
  kl_host *cpu = NULL;
  assert_int_equal(kl_host_create(&cpu), KELVIN_OK);
  kl_host_opts o;
  kl_host_opts_default(&o);
  o.cpu = 1;
  assert_int_equal(kl_host_open(cpu, &o), KELVIN_OK);
  assert_false(kl_host_is_opencl(cpu));
  assert_non_null(strstr(kl_host_notice(cpu), "OpenMP"));
  kl_impact_batch *ser = make_batch(70000, 2, 99);
  kl_impact_batch *tw = clone_inputs(ser);
  kl_impact_run_serial(ser, 0, ser->P);
  nprog = 0;
  assert_int_equal(kl_impact_run(cpu, tw, progress, NULL), KELVIN_OK);
  assert_int_equal(nprog, 2); /* 70000 rows in blocks of 65536 */
  assert_memory_equal(ser->y, tw->y, KL_NOUT * ser->P * sizeof(double));
  assert_memory_equal(ser->smp, tw->smp, (size_t)KL_NSMP * 2 * ser->P * sizeof(double));
  kl_impact_batch_destroy(ser);
  kl_impact_batch_destroy(tw);
  kl_host_destroy(cpu);
}

/* A row for the fast kernels: Hunt-Crossley (either kind of law, the usual exponents mostly), Kelvin-Voigt or
 * Emden-Fowler, no external force; cr over (0, 1], some below the exact law's fit (2^-7) and some 1. */
static kl_impact_in fast_row(void)
{
  kl_impact_in in;
  memset(&in, 0, sizeof in);
  const double u = unif();
  in.model = u < 0.6 ? KL_MODEL_HC : u < 0.8 ? KL_MODEL_KV : KL_MODEL_EF;
  in.law = (int)(rnd64() % KL_NLAWS);
  in.rule = (int)(rnd64() % 2);
  in.m = logu(1e-3, 1e3);
  in.K = logu(1e3, 1e11);
  const double usual[4] = {1.0, 1.5, 2.0, 2.5};
  in.n = in.model == KL_MODEL_KV ? 1.0 : unif() < 0.9 ? usual[rnd64() % 4] : 1.0 + 1.5 * unif();
  const double uc = unif();
  in.cr = uc < 0.05 ? 1.0 : uc < 0.1 ? logu(1e-4, 7e-3) : 0.001 + 0.999 * unif();
  in.v0 = logu(1e-3, 1e2);
  return in;
}

/* The fast kernels compute the rows of their kinds themselves (docs/design.md section 4), whatever the order of
 * the rows: with the general kernel leaving those rows alone (fast_only), a row is KL_PENDING where the fast path
 * declines it by itself (kl_impact_fast on the host, with the row's own class) and, rarely, where the host's sort key
 * (class_key: comparisons of cr with bounds found by bisection) put a row next to a bound among the rows of the
 * neighbouring class; every other row has the host fast path's metrics (within TOL; the twin's bit for bit). Checked
 * in place (the list sorted in windows of 8192 entries, blocks of 16 rows padded), in place in two chunks of more than
 * 2^15 rows each (the second's columns at an offset), staged in chunks of ~1000 rows,
 * and on the twin (its blocks' rows sorted by class, each class's run in contiguous arrays, host/twin_fast.c). A
 * sort key, a window, a pad, a run or a block's class gone wrong leaves many rows KL_PENDING (the general path
 * would compute them, so the other tests see the same numbers either way). */
static void test_fast_kernels_compute(void **state)
{
  (void)state;
  const size_t P = 70001; /* > 2^15 (the fast kernels in place), 9 windows, the last one partial */
  kl_impact_batch *ref = NULL;
  assert_int_equal(kl_impact_batch_create(P, 0, &ref), KELVIN_OK);
  rng_state = 2026;
  for (size_t p = 0; p < P; ++p) kl_impact_batch_set(ref, p, fast_row());
  size_t fastok = 0, declined = 0;
  for (size_t p = 0; p < P; ++p) {
    const kl_impact_in in = kl_impact_batch_get(ref, p);
    const kl_impact_out o = kl_impact_fast(in, kl_impact_fast_kind(in.model, in.fe));
    fastok += o.status == KL_OK;
    declined += o.status == KL_PENDING;
    ref->y[KL_OUT_DMAX * P + p] = o.dmax;
    ref->y[KL_OUT_TMAX * P + p] = o.tmax;
    ref->y[KL_OUT_FPEAK * P + p] = o.fpeak;
    ref->y[KL_OUT_TC * P + p] = o.tc;
    ref->y[KL_OUT_CREFF * P + p] = o.cr_eff;
    ref->y[KL_OUT_EDISS * P + p] = o.ediss;
    ref->y[KL_OUT_DAMP * P + p] = o.damp;
    ref->status[p] = o.status;
  }
  printf("fast path on the host: %zu of %zu rows computed, %zu declined\n", fastok, P, declined);
  assert_true(fastok > P * 3 / 4 && declined > P / 50); /* both kinds of row are there */
  kl_host *small = open_chunked(1000), *halves = open_chunked(35008); /* 547 work-groups of 64 */
  const char *const path[4] = {"in place", "staged", "twin", "in place in two chunks"};
  for (int way = 0; way < 4; ++way) {
    kl_host *h = way == 1 ? small : way == 3 ? halves : host;
    kl_impact_batch *got = clone_inputs(ref);
    h->fast_only = 1;
    kelvin_status st = KELVIN_OK;
    if (way == 2)
      kl_impact_run_twin(got, 0, P, 0, 1);
    else
      st = way == 1 ? kl_impact_run_staged(h, got, NULL, NULL) : kl_impact_run(h, got, NULL, NULL);
    h->fast_only = 0;
    assert_int_equal(st, KELVIN_OK);
    size_t stray = 0;
    for (size_t p = 0; p < P; ++p) {
      if (ref->status[p] == KL_PENDING) {
        assert_int_equal(got->status[p], KL_PENDING);
        continue;
      }
      if (got->status[p] == KL_PENDING) {
        stray++;
        continue;
      }
      assert_int_equal(got->status[p], KL_OK);
      for (int c = 0; c < KL_NOUT; ++c) {
        const double g = got->y[(size_t)c * P + p], e = ref->y[(size_t)c * P + p];
        assert_true(way == 2 ? memcmp(&g, &e, sizeof g) == 0 : close_to(g, e, c == KL_OUT_EDISS ? 1.0 : 0.0));
      }
    }
    printf("fast path, %s: %zu of %zu rows left KL_PENDING by a sort key next to a class bound\n", path[way], stray,
           fastok);
    /* measured: 0 of 63055 both ways; a key gone wrong strays hundreds or thousands */
    assert_true(stray <= fastok / 10000);
    kl_impact_batch_destroy(got);
  }
  kl_host_destroy(halves);
  kl_host_destroy(small);
  kl_impact_batch_destroy(ref);
}

/* The host skips the general kernel on a chunk whose rows are all of the fast kinds and of which the fast kernel
 * declined none (host/impact_batch.c, run_fast): a chunk with rows of another kind (Kelvin-Voigt pulled by an
 * external force, by the general path) among fast rows that are all computed must still have those rows computed,
 * a chunk of fast rows alone, none declined, must be whole without the general kernel, and a chunk without a row of a
 * fast kind must go to the general kernel alone. All in place (more than 2^15 rows) against the serial loop. */
static void test_general_rows_after_fast(void **state)
{
  (void)state;
  const size_t P = 40009;
  for (int mixed = 2; mixed >= 0; --mixed) { /* 2: no row of a fast kind at all; 1: a row in 101 of another kind */
    kl_impact_batch *ser = NULL;
    assert_int_equal(kl_impact_batch_create(P, 0, &ser), KELVIN_OK);
    rng_state = 77 + (uint64_t)mixed;
    size_t other = 0;
    for (size_t p = 0; p < P;) {
      kl_impact_in in = fast_row();
      if (mixed == 2 || (mixed && p % 101 == 0)) {
        in.model = KL_MODEL_KV, in.n = 1.0, in.fe = -0.5 * in.v0 * sqrt(in.K * in.m);
        other++;
      } else if (kl_impact_fast(in, kl_impact_fast_kind(in.model, in.fe)).status != KL_OK)
        continue; /* a row the fast kernel would decline */
      kl_impact_batch_set(ser, p++, in);
    }
    kl_impact_batch *cl = clone_inputs(ser);
    for (size_t p = 0; p < P; ++p) cl->status[p] = -1; /* not a status: a row nobody computed shows */
    kl_impact_run_serial(ser, 0, P);
    assert_int_equal(kl_impact_run(host, cl, NULL, NULL), KELVIN_OK);
    size_t computed = 0;
    for (size_t p = 0; p < P; ++p) computed += cl->status[p] != -1;
    assert_int_equal(computed, P);
    compare(ser, cl, mixed == 2 ? "no fast rows" : mixed ? "fast rows and others" : "fast rows alone, none declined");
    if (mixed == 1) assert_int_equal(other, P / 101 + 1);
    if (mixed == 2) assert_int_equal(other, P);
    kl_impact_batch_destroy(ser);
    kl_impact_batch_destroy(cl);
  }
}

int main(void)
{
  kl_host_opts o;
  kl_host_opts_default(&o);
  if (kl_host_create(&host) != KELVIN_OK) return 1;
  const kelvin_status st = kl_host_open(host, &o);
  if (st != KELVIN_OK || !kl_host_is_opencl(host)) {
    /* the twin still gets checked against the serial loop; the test as a whole counts as skipped */
    fprintf(stderr, "impact_parity_test: no OpenCL device with double precision (%s): OpenCL parity skipped\n",
            st == KELVIN_OK ? kl_host_notice(host) : kl_host_errmsg(host));
    kl_host_destroy(host);
    const struct CMUnitTest twin[] = {cmocka_unit_test(test_twin_via_handle)};
    const int rc = cmocka_run_group_tests(twin, NULL, NULL);
    return rc ? rc : 77;
  }
  printf("device: %s\n", kl_host_notice(host));
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_parity),
    cmocka_unit_test(test_chunks_and_samples),
    cmocka_unit_test(test_one_model_in_place),
    cmocka_unit_test(test_progress_and_stop),
    cmocka_unit_test(test_twin_via_handle),
    cmocka_unit_test(test_fast_kernels_compute),
    cmocka_unit_test(test_general_rows_after_fast),
  };
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  kl_host_destroy(host);
  return rc;
}
