/* api/api_sweep_test.c: sweeps, impact-batch progress and stop, and the device list through the public
 * API as a program sees it (linked to libkelvin.so, public headers only). Scenario order and values are
 * worked out here from the config (the product's order: model, law or rule, m, K, n or fe, v0, cr; cr
 * fastest); results are compared with kelvin_impact, the closed form of one impact; progress fractions
 * and the scenarios a stop leaves are counted by hand from the documented chunk sizes. */
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

#include <kelvin/batch.h>
#include <kelvin/contact.h>
#include <kelvin/kelvin.h>

static char tmpdir[256];

/* Write text to tmpdir/name; its path into path. */
static void put(const char *name, const char *text, char *path, size_t cap)
{
  snprintf(path, cap, "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* in holds exactly these values. */
static void expect_in(const kelvin_impact_in *in, kelvin_model model, int law, int rule, double m, double K, double n,
                      double cr, double v0, double fe)
{
  assert_int_equal(in->model, model);
  assert_int_equal(in->law, law);
  assert_int_equal(in->rule, rule);
  assert_true(in->m == m && in->K == K && in->n == n && in->cr == cr && in->v0 == v0 && in->fe == fe);
}

/* Scenario i's results equal the closed form of its inputs, bit for bit on the host (dev NULL or the
 * twin), to 1e-12 on an OpenCL device (another compiler). */
static void expect_result(const kelvin_impact_batch *b, size_t i, double tol)
{
  kelvin_impact_in in;
  kelvin_impact_out got, want;
  assert_int_equal(kelvin_impact_batch_input(b, i, &in), KELVIN_OK);
  assert_int_equal(kelvin_impact_batch_get(b, i, &got), KELVIN_OK);
  assert_int_equal(kelvin_impact(&in, &want), KELVIN_OK);
  assert_int_equal(got.flags, want.flags);
  const double g[4] = {got.dmax, got.fpeak, got.tc, got.cr_eff}, w[4] = {want.dmax, want.fpeak, want.tc, want.cr_eff};
  for (int k = 0; k < 4; ++k)
    if (!(fabs(g[k] - w[k]) <= tol * fabs(w[k]))) fail_msg("scenario %zu, metric %d: %.17g vs %.17g", i, k, g[k], w[k]);
}

/* The built-in sweep: 8 variants x 39 cr x 16 v0 = 4992 scenarios, first and last as the product orders them. */
static void test_builtin(void **state)
{
  (void)state;
  kelvin_sweep *s = NULL;
  assert_int_equal(kelvin_sweep_create(&s), KELVIN_OK);
  kelvin_impact_batch *b = kelvin_sweep_batch(s);
  assert_non_null(b);
  assert_int_equal(kelvin_impact_batch_size(b), 4992);
  assert_int_equal(kelvin_impact_batch_nsamples(b), 0);
  kelvin_impact_in in;
  assert_int_equal(kelvin_impact_batch_input(b, 0, &in), KELVIN_OK);
  expect_in(&in, KELVIN_MODEL_KV, KELVIN_LAW_EXACT, KELVIN_SEP_PENETRATION, 1.0, 1e9, 1.0, 0.05, 0.01, 0.0);
  assert_int_equal(kelvin_impact_batch_input(b, 4991, &in), KELVIN_OK);
  expect_in(&in, KELVIN_MODEL_EF, KELVIN_LAW_EXACT, KELVIN_SEP_PENETRATION, 1.0, 1e9, 1.5, 1.0, 10.0, 0.0);
  /* 624 per variant: scenario 624 is the first of kv/force, 1248 the first hc/hunt-crossley */
  assert_int_equal(kelvin_impact_batch_input(b, 624, &in), KELVIN_OK);
  expect_in(&in, KELVIN_MODEL_KV, KELVIN_LAW_EXACT, KELVIN_SEP_FORCE, 1.0, 1e9, 1.0, 0.05, 0.01, 0.0);
  assert_int_equal(kelvin_impact_batch_input(b, 1248, &in), KELVIN_OK);
  expect_in(&in, KELVIN_MODEL_HC, KELVIN_LAW_HUNT_CROSSLEY, KELVIN_SEP_PENETRATION, 1.0, 1e9, 1.5, 0.05, 0.01, 0.0);
  assert_int_equal(kelvin_impact_batch_input(b, 4992, &in), KELVIN_ERR_ARG);
  assert_int_equal(kelvin_impact_batch_done(b), 0);
  assert_int_equal(kelvin_impact_batch_run(b, NULL), KELVIN_OK);
  assert_int_equal(kelvin_impact_batch_done(b), 4992);
  for (size_t i = 0; i < 4992; i += 97) expect_result(b, i, 0.0);
  kelvin_sweep_free(s);
  kelvin_sweep_free(NULL);
  assert_string_equal(kelvin_sweep_errmsg(NULL), "");
  assert_null(kelvin_sweep_batch(NULL));
}

/* A config: hc with two laws, m = 2, K = 1e8, cr 0.5 and 0.9, v0 1..4 in 4 steps, 3 samples. */
static void test_load(void **state)
{
  (void)state;
  char path[512], csv[512];
  kelvin_sweep *s = NULL;
  assert_int_equal(kelvin_sweep_create(&s), KELVIN_OK);
  put("hc.yaml",
      "sweep:\n  model: hc\n  law: [flores, exact]\n  m: 2\n  K: 1e8\n  cr: [0.5, 0.9]\n"
      "  v0: {min: 1, max: 4, n: 4}\n  samples: 3\n",
      path, sizeof path);
  assert_int_equal(kelvin_sweep_load(s, path), KELVIN_OK);
  kelvin_impact_batch *b = kelvin_sweep_batch(s);
  assert_int_equal(kelvin_impact_batch_size(b), 2 * 2 * 4);
  assert_int_equal(kelvin_impact_batch_nsamples(b), 3);
  kelvin_impact_in in;
  /* index 5 = law 0 (flores), v0 index 2 (3 m/s), cr index 1 (0.9); 13 = exact, v0 index 2, cr index 1 */
  assert_int_equal(kelvin_impact_batch_input(b, 5, &in), KELVIN_OK);
  expect_in(&in, KELVIN_MODEL_HC, KELVIN_LAW_FLORES, KELVIN_SEP_PENETRATION, 2.0, 1e8, 1.5, 0.9, 3.0, 0.0);
  assert_int_equal(kelvin_impact_batch_input(b, 13, &in), KELVIN_OK);
  expect_in(&in, KELVIN_MODEL_HC, KELVIN_LAW_EXACT, KELVIN_SEP_PENETRATION, 2.0, 1e8, 1.5, 0.9, 3.0, 0.0);
  assert_int_equal(kelvin_impact_batch_run(b, NULL), KELVIN_OK);
  for (size_t i = 0; i < 16; ++i) expect_result(b, i, 0.0);
  /* the samples of the exact law at cr 0.9: phase 0 .. 2, penetration 0 at both ends, d_max in the middle */
  kelvin_impact_out o;
  kelvin_impact_batch_get(b, 13, &o);
  double sm, d, f;
  assert_int_equal(kelvin_impact_batch_sample(b, 13, 1, &sm, &d, &f), KELVIN_OK);
  assert_true(sm == 1.0);
  assert_true(fabs(d - o.dmax) <= 1e-12 * o.dmax);

  /* errors: the handle keeps its 16 scenarios */
  put("cr0.yaml", "# zero restitution\nsweep:\n  cr: 0\n", path, sizeof path);
  assert_int_equal(kelvin_sweep_load(s, path), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(kelvin_sweep_errmsg(s), "cr0.yaml:3: sweep.cr: must be > 0, got 0"));
  assert_true(kelvin_sweep_batch(s) == b);
  assert_int_equal(kelvin_impact_batch_size(kelvin_sweep_batch(s)), 16);
  snprintf(path, sizeof path, "%s/nosuch.yaml", tmpdir);
  assert_int_equal(kelvin_sweep_load(s, path), KELVIN_ERR_IO);
  assert_non_null(strstr(kelvin_sweep_errmsg(s), "nosuch.yaml: cannot read"));
  put("big.yaml", "sweep:\n  m: {min: 1, max: 2, n: 1000000}\n  K: {min: 1, max: 2, n: 1000}\n", path, sizeof path);
  assert_int_equal(kelvin_sweep_load(s, path), KELVIN_ERR_LIMIT);
  assert_non_null(strstr(kelvin_sweep_errmsg(s), "the sweep has more than 50000000 scenarios"));
  put("rows.csv", "m,K,cr,v0,model\n1,1e8,0.5,1,kv\n1,1e8,1.5,1,hc\n", csv, sizeof csv);
  put("rows.yaml", "sweep:\n  scenarios: rows.csv\n", path, sizeof path);
  assert_int_equal(kelvin_sweep_load(s, path), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(kelvin_sweep_errmsg(s), "rows.csv:3: column 'cr': must be <= 1, got 1.5"));
  assert_int_equal(kelvin_impact_batch_size(kelvin_sweep_batch(s)), 16);
  assert_int_equal(kelvin_sweep_load(s, NULL), KELVIN_ERR_ARG);
  /* a scenarios CSV, relative to the config: n defaults to 1 for kv, 1.5 otherwise */
  put("rows.csv", "model,m,K,cr,v0,law\nkv,1,1e8,0.5,1,-\nhc,3,1e9,0.8,2,gonthier\n", csv, sizeof csv);
  assert_int_equal(kelvin_sweep_load(s, path), KELVIN_OK);
  assert_string_equal(kelvin_sweep_errmsg(s), "");
  b = kelvin_sweep_batch(s);
  assert_int_equal(kelvin_impact_batch_size(b), 2);
  assert_int_equal(kelvin_impact_batch_input(b, 1, &in), KELVIN_OK);
  expect_in(&in, KELVIN_MODEL_HC, KELVIN_LAW_GONTHIER, KELVIN_SEP_PENETRATION, 3.0, 1e9, 1.5, 0.8, 2.0, 0.0);
  kelvin_sweep_free(s);
}

/* What the progress callback saw, and when it asks to stop. */
typedef struct seen {
  int calls, stop_at; /* stop at this call (1-based; 0: never) */
  double fraction[64];
  size_t done[64];
  const kelvin_impact_batch *b;
  char text[128];
} seen;

static int on_progress(void *ctx, double fraction, const char *text)
{
  seen *s = ctx;
  if (s->calls < 64) {
    s->fraction[s->calls] = fraction;
    s->done[s->calls] = kelvin_impact_batch_done(s->b);
  }
  snprintf(s->text, sizeof s->text, "%s", text);
  ++s->calls;
  return s->stop_at && s->calls >= s->stop_at;
}

/* A sweep of 200000 kv scenarios (2 rules x 250 cr x 400 v0) with progress, on dev (NULL: the serial
 * loop). Chunks: 65536 on the host paths; on an OpenCL device max(200000 / 20, 65536) = 65536 rounded down
 * to the work-group size (a power of two <= 65536), i.e. 65536 too. So: calls after 65536, 131072,
 * 196608 and 200000 scenarios; a stop at the second call leaves 131072 done. */
static void progress_and_stop(kelvin_device *dev)
{
  char path[512];
  put("big.yaml", "sweep:\n  model: kv\n  rule: [penetration, force]\n  cr: {min: 0.1, max: 1, n: 250}\n"
                  "  v0: {min: 0.01, max: 10, n: 400, scale: log}\n",
      path, sizeof path);
  kelvin_sweep *s = NULL;
  assert_int_equal(kelvin_sweep_create(&s), KELVIN_OK);
  assert_int_equal(kelvin_sweep_load(s, path), KELVIN_OK);
  kelvin_impact_batch *b = kelvin_sweep_batch(s);
  const size_t P = 200000;
  assert_int_equal(kelvin_impact_batch_size(b), P);
  const double tol = dev && kelvin_device_is_opencl(dev) ? 1e-12 : 0.0;

  seen sn = {0};
  sn.b = b;
  sn.stop_at = 2;
  kelvin_impact_batch_set_progress(b, on_progress, &sn);
  assert_int_equal(kelvin_impact_batch_run(b, dev), KELVIN_ERR_STOPPED);
  assert_int_equal(sn.calls, 2);
  assert_int_equal(kelvin_impact_batch_done(b), 131072);
  assert_int_equal(sn.done[0], 65536);
  assert_true(sn.fraction[0] == 65536.0 / 200000.0);
  assert_true(sn.fraction[1] == 131072.0 / 200000.0);
  assert_string_equal(sn.text, "impact batch: 131072 of 200000 scenarios");
  assert_non_null(strstr(kelvin_impact_batch_errmsg(b), "stopped by the progress callback after 131072 of 200000"));
  expect_result(b, 0, tol);
  expect_result(b, 131071, tol);
  /* not reached: still zero, as the batch was made */
  kelvin_impact_out o;
  assert_int_equal(kelvin_impact_batch_get(b, 131072, &o), KELVIN_OK);
  assert_true(o.dmax == 0.0 && o.fpeak == 0.0 && o.tc == 0.0 && o.flags == 0);
  assert_int_equal(kelvin_impact_batch_get(b, P - 1, &o), KELVIN_OK);
  assert_true(o.dmax == 0.0 && o.tc == 0.0);

  /* the whole run: four calls, the last at 1, every scenario evaluated */
  memset(&sn, 0, sizeof sn);
  sn.b = b;
  assert_int_equal(kelvin_impact_batch_run(b, dev), KELVIN_OK);
  assert_int_equal(sn.calls, 4);
  assert_true(sn.fraction[2] == 196608.0 / 200000.0);
  assert_true(sn.fraction[3] == 1.0);
  assert_int_equal(sn.done[3], P);
  assert_int_equal(kelvin_impact_batch_done(b), P);
  assert_string_equal(kelvin_impact_batch_errmsg(b), "");
  for (size_t i = 0; i < P; i += 4999) expect_result(b, i, tol);
  expect_result(b, P - 1, tol);

  /* no callback: no calls */
  kelvin_impact_batch_set_progress(b, NULL, NULL);
  memset(&sn, 0, sizeof sn);
  assert_int_equal(kelvin_impact_batch_run(b, dev), KELVIN_OK);
  assert_int_equal(sn.calls, 0);
  kelvin_sweep_free(s);
}

static void test_progress_serial(void **state)
{
  (void)state;
  progress_and_stop(NULL);
}

static void test_progress_twin(void **state)
{
  (void)state;
  kelvin_device *dev = NULL;
  assert_int_equal(kelvin_device_create(&dev), KELVIN_OK);
  assert_int_equal(kelvin_device_open(dev, NULL, KELVIN_DEVICE_CPU), KELVIN_OK);
  progress_and_stop(dev);
  kelvin_device_free(dev);
}

static void test_progress_opencl(void **state)
{
  (void)state;
  kelvin_device *dev = NULL;
  assert_int_equal(kelvin_device_create(&dev), KELVIN_OK);
  if (kelvin_device_open(dev, NULL, 0) != KELVIN_OK || !kelvin_device_is_opencl(dev)) {
    kelvin_device_free(dev);
    skip();
  }
  progress_and_stop(dev);
  kelvin_device_free(dev);
}

/* The device list and the choice, against what kelvin_device_open then says it opened. */
static void test_devices(void **state)
{
  (void)state;
  kelvin_device *dev = NULL;
  assert_int_equal(kelvin_device_create(&dev), KELVIN_OK);
  int n = -1, idx = 7;
  assert_int_equal(kelvin_device_list(dev, &n), KELVIN_OK);
  assert_true(n >= 0);
  for (int i = 0; i < n; ++i) {
    kelvin_device_info d;
    assert_int_equal(kelvin_device_list_info(dev, i, &d), KELVIN_OK);
    assert_true(d.name[0] && d.platform_name[0] && d.type[0] && d.compute_units > 0 && d.global_mem > 0);
    printf("device %d:%d '%s' (%s, %s, fp64 %d)\n", d.platform, d.device, d.name, d.platform_name, d.type, d.fp64);
  }
  kelvin_device_info d;
  assert_int_equal(kelvin_device_list_info(dev, n, &d), KELVIN_ERR_ARG);
  assert_int_equal(d.name[0], '\0');
  assert_int_equal(kelvin_device_list_info(dev, -1, &d), KELVIN_ERR_ARG);
  assert_int_equal(kelvin_device_choose(dev, NULL, KELVIN_DEVICE_CPU, &idx), KELVIN_OK);
  assert_int_equal(idx, -1);
  /* the default choice is the device kelvin_device_open opens, and only one with fp64 */
  unsetenv("KELVIN_DEVICE");
  assert_int_equal(kelvin_device_choose(dev, NULL, 0, &idx), KELVIN_OK);
  assert_true(idx >= -1 && idx < n);
  assert_int_equal(kelvin_device_open(dev, NULL, 0), KELVIN_OK);
  if (idx >= 0) {
    assert_int_equal(kelvin_device_list_info(dev, idx, &d), KELVIN_OK);
    assert_true(d.fp64);
    assert_true(kelvin_device_is_opencl(dev));
    assert_non_null(strstr(kelvin_device_describe(dev), d.name));
  } else
    assert_false(kelvin_device_is_opencl(dev));
  /* a spec that matches nothing, named as the program calls it */
  assert_int_equal(kelvin_device_choose(dev, "no-such-device", 0, &idx), KELVIN_ERR_NODEVICE);
  assert_int_equal(idx, -1);
  assert_non_null(strstr(kelvin_device_errmsg(dev), "no OpenCL device matches kelvin_device_open 'no-such-device'"));
  kelvin_device_set_spec_name(dev, "compute.device");
  assert_int_equal(kelvin_device_open(dev, "no-such-device", 0), KELVIN_ERR_NODEVICE);
  assert_non_null(strstr(kelvin_device_errmsg(dev), "no OpenCL device matches compute.device 'no-such-device'"));
  kelvin_device_set_spec_name(dev, NULL);
  assert_int_equal(kelvin_device_choose(dev, "no-such-device", 0, &idx), KELVIN_ERR_NODEVICE);
  assert_non_null(strstr(kelvin_device_errmsg(dev), "matches kelvin_device_open 'no-such-device'"));
  assert_int_equal(kelvin_device_choose(dev, NULL, 2, &idx), KELVIN_ERR_ARG);
  assert_int_equal(kelvin_device_list(NULL, &n), KELVIN_ERR_ARG);
  assert_int_equal(n, 0);
  kelvin_device_free(dev);
}

/* Reading a scenarios CSV of 140000 rows reports after 65536 and 131072 rows (fraction unknown: -1);
 * a stop at the first report leaves the handle as it was. */
static void test_load_progress(void **state)
{
  (void)state;
  char path[512], csv[512];
  snprintf(csv, sizeof csv, "%s/many.csv", tmpdir);
  FILE *f = fopen(csv, "w");
  assert_non_null(f);
  fputs("model,m,K,cr,v0\n", f);
  for (int i = 0; i < 140000; ++i) fprintf(f, "kv,1,1e6,0.5,%d\n", 1 + i % 7);
  fclose(f);
  put("many.yaml", "sweep:\n  scenarios: many.csv\n", path, sizeof path);
  kelvin_sweep *s = NULL;
  assert_int_equal(kelvin_sweep_create(&s), KELVIN_OK);
  seen sn = {0};
  sn.stop_at = 1;
  kelvin_sweep_set_progress(s, on_progress, &sn);
  assert_int_equal(kelvin_sweep_load(s, path), KELVIN_ERR_STOPPED);
  assert_int_equal(sn.calls, 1);
  assert_non_null(strstr(sn.text, "many.csv: 65536 scenarios"));
  assert_non_null(strstr(kelvin_sweep_errmsg(s), "many.csv: reading stopped by the progress callback after 65536"));
  assert_int_equal(kelvin_impact_batch_size(kelvin_sweep_batch(s)), 4992); /* the built-in, kept */
  memset(&sn, 0, sizeof sn);
  assert_int_equal(kelvin_sweep_load(s, path), KELVIN_OK);
  assert_int_equal(sn.calls, 2);
  assert_true(sn.fraction[0] == -1.0 && sn.fraction[1] == -1.0);
  assert_non_null(strstr(sn.text, "many.csv: 131072 scenarios"));
  kelvin_impact_batch *b = kelvin_sweep_batch(s);
  assert_int_equal(kelvin_impact_batch_size(b), 140000);
  kelvin_impact_in in;
  assert_int_equal(kelvin_impact_batch_input(b, 139999, &in), KELVIN_OK);
  expect_in(&in, KELVIN_MODEL_KV, KELVIN_LAW_EXACT, KELVIN_SEP_PENETRATION, 1.0, 1e6, 1.0, 0.5, 1 + 139999 % 7, 0.0);
  kelvin_sweep_set_progress(s, NULL, NULL);
  memset(&sn, 0, sizeof sn);
  assert_int_equal(kelvin_sweep_load(s, path), KELVIN_OK);
  assert_int_equal(sn.calls, 0);
  kelvin_sweep_free(s);
}

/* The sweep parameters for a help text: nine (the last three the general law's), in the config's order, then
 * none. */
/* The same table gives the same HDF5 file byte for byte, however far apart written (no modification times in
 * it: a sweep on any number of MPI ranks is compared with one process's byte for byte, docs/design.md 11). */
static void test_hdf5_reproducible(void **state)
{
  (void)state;
  kelvin_sweep *s = NULL;
  assert_int_equal(kelvin_sweep_create(&s), KELVIN_OK);
  kelvin_impact_batch *b = kelvin_sweep_batch(s);
  assert_int_equal(kelvin_impact_batch_run(b, NULL), KELVIN_OK);
  char pa[512], pb[512];
  snprintf(pa, sizeof pa, "%s/a.h5", tmpdir);
  snprintf(pb, sizeof pb, "%s/b.h5", tmpdir);
  assert_int_equal(kelvin_impact_batch_write(b, pa, KELVIN_FORMAT_HDF5), KELVIN_OK);
  usleep(1100000); /* HDF5 keeps times in seconds */
  assert_int_equal(kelvin_impact_batch_write(b, pb, KELVIN_FORMAT_HDF5), KELVIN_OK);
  FILE *fa = fopen(pa, "rb"), *fb = fopen(pb, "rb");
  assert_non_null(fa);
  assert_non_null(fb);
  size_t n = 0;
  int ca, cb;
  do {
    ca = fgetc(fa), cb = fgetc(fb);
    if (ca != cb) fail_msg("%s and %s differ at byte %zu", pa, pb, n);
    ++n;
  } while (ca != EOF);
  assert_true(n > 10000);
  fclose(fa), fclose(fb);
  remove(pa), remove(pb);
  kelvin_sweep_free(s);
}

static void test_params(void **state)
{
  (void)state;
  static const char *const keys[] = {"m", "K", "n", "cr", "v0", "fe", "c", "n2", "rate_exp"};
  const char *key, *def, *doc;
  for (int i = 0; i < 9; ++i) {
    assert_int_equal(kelvin_sweep_param(i, &key, &def, &doc), 1);
    assert_string_equal(key, keys[i]);
    assert_true(def[0] && doc[0]);
  }
  assert_int_equal(kelvin_sweep_param(1, NULL, &def, NULL), 1);
  assert_string_equal(def, "1e9");
  assert_int_equal(kelvin_sweep_param(9, &key, &def, &doc), 0);
  assert_null(key);
  assert_null(def);
  assert_null(doc);
  assert_int_equal(kelvin_sweep_param(-1, &key, NULL, NULL), 0);
}

int main(void)
{
  snprintf(tmpdir, sizeof tmpdir, "/tmp/kelvin-api-sweep-XXXXXX");
  if (!mkdtemp(tmpdir)) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_builtin),        cmocka_unit_test(test_load),
    cmocka_unit_test(test_progress_serial), cmocka_unit_test(test_progress_twin),
    cmocka_unit_test(test_progress_opencl), cmocka_unit_test(test_devices),
    cmocka_unit_test(test_params),         cmocka_unit_test(test_load_progress),
    cmocka_unit_test(test_hdf5_reproducible),
  };
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  const char *files[] = {"hc.yaml", "cr0.yaml", "big.yaml", "rows.csv", "rows.yaml", "many.csv", "many.yaml"};
  char path[512];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
    snprintf(path, sizeof path, "%s/%s", tmpdir, files[i]);
    unlink(path);
  }
  rmdir(tmpdir);
  return rc;
}
