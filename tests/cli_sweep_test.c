/* tests/cli_sweep_test.c: `kelvin sweep` and `kelvin devices` end to end, running the built binary:
 * config errors (malformed YAML, min > max, cr = 0, cr above 1, unknown key, a CSV with a missing column)
 * exit 2 with a message naming file, line and field; a device spec naming nothing exits 2; a broken
 * kernel build (KELVIN_CL_BUILD_OPTIONS) exits 1 with the compiler log; failed runs leave earlier
 * outputs alone; good runs (built-in sweep, a config, a CSV, --cpu) write one row per scenario; results
 * go to files and the summary to stdout, progress and "wrote" to stderr; --no-plot draws nothing; a
 * sweep larger than the figure's limit reports while it writes and is drawn from a sample. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/cli_util.h"

static char tmpdir[256];
static int have_opencl; /* `kelvin devices` found an fp64 device */

/* run kelvin in tmpdir with an optional environment prefix; stderr into err; exit status */
static int kelvin(const char *env, const char *args, char *err, size_t cap)
{
  return kl_test_kelvin(tmpdir, env, args, err, cap);
}

/* Write text to tmpdir/name. */
static void put(const char *name, const char *text) { kl_test_write(tmpdir, name, text); }

/* Lines of tmpdir/name, -1 if missing. */
static long count_lines(const char *name)
{
  char *s = kl_test_read(tmpdir, name);
  if (!s) return -1;
  const long n = kl_test_lines(s);
  free(s);
  return n;
}

/* 1 if a "*.tmp.*" file is left in tmpdir/sub. */
static int has_tmp(const char *sub)
{
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, sub);
  return kl_test_has_tmp(path);
}

/* run kelvin in tmpdir; stdout into out; exit status */
static int kelvin_stdout(const char *args, char *out, size_t cap)
{
  static char abuf[4096];
  char *argv[64], exe[1024];
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  argv[0] = exe;
  kl_test_split(args, abuf, sizeof abuf, argv + 1, 63);
  return kl_test_run(tmpdir, NULL, argv, 1, out, cap);
}

/* Lines of s that contain what. */
static int count_containing(const char *s, const char *what)
{
  int n = 0;
  for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    const char *e = strchr(l, '\n');
    const char *hit = strstr(l, what);
    n += hit && (!e || hit < e);
  }
  return n;
}

/* Each bad config: exit 2, the expected message, and out/sweep.csv from before left as it was. */
static void test_config_errors(void **state)
{
  (void)state;
  static const struct {
    const char *file, *text, *must;
  } cases[] = {
    {"malformed.yaml", "sweep:\n  cr: [0.5, 0.6\n  v0: 1\n", "malformed.yaml:3: malformed YAML"},
    {"minmax.yaml", "sweep:\n  model: kv\n  cr: {min: 0.9, max: 0.2, n: 5}\n",
     "minmax.yaml:3: sweep.cr: min (0.9) must be <= max (0.2)"},
    {"cr0.yaml", "# zero restitution\nsweep:\n  cr: 0\n", "cr0.yaml:3: sweep.cr: must be > 0, got 0"},
    {"crmax.yaml", "sweep:\n  model: [kv, hc]\n  v0: 1\n  m: 2\n  K: 1e8\n  n: 1.5\n  cr: {min: 0.5,\n       max: 1.5, n: 3}\n",
     "crmax.yaml:8: sweep.cr.max: must be <= 1, got 1.5"},
    {"crlist.yaml", "sweep:\n  cr: [0.5, -0.1]\n", "crlist.yaml:2: sweep.cr[1]: must be > 0, got -0.1"},
    {"unknown.yaml", "sweep:\n  cr: 0.5\n  speed: 3\n", "unknown.yaml:3: sweep.speed: unknown key"},
    {"toplevel.yaml", "swep:\n  cr: 0.5\n", "toplevel.yaml:1: swep: unknown key (allowed: sweep)"},
    {"notnum.yaml", "sweep:\n  m: heavy\n", "notnum.yaml:2: sweep.m: must be a finite number, got 'heavy'"},
    {"model.yaml", "sweep:\n  model: [kv, xx]\n", "model.yaml:2: sweep.model[1]: must be one of kv, hc, ef, general, got 'xx'"},
    {"logmin.yaml", "sweep:\n  fe: {min: -1, max: 1, n: 3, scale: log}\n",
     "logmin.yaml:2: sweep.fe.min: must be > 0 for scale: log, got -1"},
    {"lawkv.yaml", "sweep:\n  model: kv\n  law: flores\n", "lawkv.yaml:3: sweep.law: applies to model hc only"},
    {"ckv.yaml", "sweep:\n  model: [kv, hc]\n  c: 10\n", "ckv.yaml:3: sweep.c: applies to model general only"},
    /* the general law's constants: the law's one domain (kernels/kl_contact_gen.h, kl_gen_law_check), its message */
    {"rexp.yaml", "sweep:\n  model: general\n  rate_exp: 0\n",
     "rexp.yaml:3: sweep.rate_exp: the rate exponent must be in (0, 5], got 0"},
    {"rexp6.yaml", "sweep:\n  model: general\n  rate_exp: [1, 6]\n",
     "rexp6.yaml:3: sweep.rate_exp[1]: the rate exponent must be in (0, 5], got 6"},
    {"n2gen.yaml", "sweep:\n  model: general\n  n2: {min: 0, max: 5.5, n: 3}\n",
     "n2gen.yaml:3: sweep.n2.max: the damping's exponent of d must be in [0, 5], got 5.5"},
    {"gencsv.yaml", "sweep:\n  scenarios: gencsv.csv\n",
     "gencsv.csv:3: column 'n': the elastic exponent must be in (0, 5], got 6"},
    {"feef.yaml", "sweep:\n  model: ef\n  fe: 1\n", "feef.yaml:3: sweep.fe: applies to models kv, hc and general only"},
    {"empty.yaml", "", "empty.yaml: the file is empty"},
    {"dup.yaml", "sweep:\n  cr: 0.5\n  cr: 0.6\n", "dup.yaml:3: sweep.cr: duplicate key (first given on line 2)"},
    {"missingcol.yaml", "sweep:\n  scenarios: missingcol.csv\n",
     "missingcol.csv:1: header: missing column 'v0_m_s' or 'v0'"},
    {"badcsv.yaml", "sweep:\n  scenarios: badcsv.csv\n", "badcsv.csv:3: column 'cr': must be <= 1, got 1.5"},
    {"mixed.yaml", "sweep:\n  scenarios: badcsv.csv\n  cr: 0.5\n",
     "mixed.yaml:3: sweep.cr: cannot be combined with sweep.scenarios"},
  };
  put("missingcol.csv", "m,K,cr,model\n1,1e8,0.5,kv\n");
  put("badcsv.csv", "m,K,cr,v0,model\n1,1e8,0.5,1,kv\n1,1e8,1.5,1,hc\n");
  put("gencsv.csv", "m,K,n,cr,v0,model,c\n1,1e8,1.5,0.5,1,general,10\n1,1e8,6,0.5,1,general,10\n");
  char outdir[512], keep[600];
  snprintf(outdir, sizeof outdir, "%s/out", tmpdir);
  mkdir(outdir, 0777);
  snprintf(keep, sizeof keep, "%s/sweep.csv", outdir);
  FILE *f = fopen(keep, "w");
  assert_non_null(f);
  fputs("earlier results\n", f);
  fclose(f);
  char args[1024], err[8192];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    put(cases[i].file, cases[i].text);
    snprintf(args, sizeof args, "sweep --cpu --out out %s", cases[i].file);
    const int rc = kelvin(NULL, args, err, sizeof err);
    printf("%s -> %d: %s", cases[i].file, rc, err);
    if (rc != 2 || !strstr(err, cases[i].must))
      fail_msg("%s: exit %d, stderr '%s', expected 2 and '%s'", cases[i].file, rc, err, cases[i].must);
    assert_true(strncmp(err, "kelvin: ", 8) == 0);
  }
  assert_int_equal(count_lines("out/sweep.csv"), 1); /* untouched */
  assert_false(has_tmp("out"));
  /* a missing config file and bad options are usage errors too */
  assert_int_equal(kelvin(NULL, "sweep --cpu nosuch.yaml", err, sizeof err), 2);
  assert_non_null(strstr(err, "nosuch.yaml: cannot read"));
  assert_int_equal(kelvin(NULL, "sweep --bogus", err, sizeof err), 2);
  assert_non_null(strstr(err, "unknown option '--bogus'"));
  assert_int_equal(kelvin(NULL, "sweep a.yaml b.yaml", err, sizeof err), 2);
  assert_int_equal(kelvin(NULL, "sweep --cpu --device 0:0", err, sizeof err), 2);
}

/* A device spec that names nothing: exit 2 and a message naming it (with or without OpenCL). */
static void test_missing_device(void **state)
{
  (void)state;
  char err[8192];
  assert_int_equal(kelvin(NULL, "sweep --quiet --out out2 --device no-such-device", err, sizeof err), 2);
  printf("%s", err);
  assert_non_null(strstr(err, "kelvin: no OpenCL device matches --device 'no-such-device'"));
  assert_int_equal(kelvin("KELVIN_DEVICE=no-such-device", "sweep --out out2", err, sizeof err), 2);
  assert_non_null(strstr(err, "env var KELVIN_DEVICE 'no-such-device'"));
  assert_int_equal(kelvin(NULL, "devices --device no-such-device", err, sizeof err), 2);
  assert_non_null(strstr(err, "no OpenCL device matches --device 'no-such-device'"));
  assert_int_equal(count_lines("out2/sweep.csv"), -1);
}

/* A broken kernel build: exit 1, the build log in the message. */
static void test_build_failure(void **state)
{
  (void)state;
  if (!have_opencl) skip();
  char err[16384];
  assert_int_equal(kelvin("KELVIN_CL_BUILD_OPTIONS=-DKL_WGS=banana", "sweep --out out3", err, sizeof err), 1);
  printf("%.600s\n", err);
  assert_non_null(strstr(err, "kelvin: OpenCL build of kernels/impact.cl failed"));
  assert_non_null(strstr(err, "banana"));
  assert_int_equal(count_lines("out3/sweep.csv"), -1);
}

/* Good runs: the built-in sweep on both paths, a config with samples, a CSV of scenarios. */
static void test_good_runs(void **state)
{
  (void)state;
  char err[8192];
  assert_int_equal(kelvin(NULL, "sweep --cpu --out def", err, sizeof err), 0);
  assert_non_null(strstr(err, "sweep runs on the OpenMP twin on the host"));
  assert_int_equal(count_lines("def/sweep.csv"), 4992 + 1);
  assert_true(count_lines("def/figure.dat") > 4992);
  assert_false(has_tmp("def"));
  if (have_opencl) {
    assert_int_equal(kelvin(NULL, "sweep --out defcl", err, sizeof err), 0);
    assert_non_null(strstr(err, "sweep runs on the OpenCL device"));
    assert_int_equal(count_lines("defcl/sweep.csv"), 4992 + 1);
  }
  put("small.yaml", "sweep:\n  model: [kv, hc]\n  law: [flores, exact]\n  rule: force\n  m: [1, 2]\n"
                    "  K: 1e8\n  cr: {min: 0.2, max: 1, n: 5}\n  v0: {min: 0.1, max: 10, n: 3, scale: log}\n"
                    "  fe: [0, -10]\n  samples: 4\n");
  assert_int_equal(kelvin(NULL, "sweep --quiet --out small small.yaml", err, sizeof err), 0);
  assert_string_equal(err, ""); /* --quiet: nothing on stderr */
  /* kv: 1 rule x 2 m x 2 fe x 3 v0 x 5 cr = 60; hc (under a force too, by the step): 2 laws x 2 m x 2 fe x 3 x 5
   * = 120 */
  assert_int_equal(count_lines("small/sweep.csv"), 180 + 1);
  assert_int_equal(count_lines("small/samples.csv"), 180 * 4 + 1);
  /* the general law: 2 rules x 2 c x 2 n2 x 2 rate_exp x 2 v0 = 32 rows, its columns in sweep.csv */
  put("gen.yaml", "sweep:\n  model: general\n  rule: [penetration, force]\n  K: 1e9\n  n: 1.5\n  c: [1e3, 1e5]\n"
                  "  n2: [0, 1.5]\n  rate_exp: [0.5, 1]\n  cr: 0.5\n  v0: [0.1, 1]\n  samples: 3\n");
  assert_int_equal(kelvin(NULL, "sweep --cpu --quiet --out gen gen.yaml", err, sizeof err), 0);
  assert_int_equal(count_lines("gen/sweep.csv"), 32 + 1);
  assert_int_equal(count_lines("gen/samples.csv"), 32 * 3 + 1);
  put("rows.csv", "# scenarios\nmodel,m,K,cr,v0,law,n,note\nkv,1,1e8,0.5,1,-,-,first\nhc,1,1e9,0.8,2,gonthier,1.5,x\n"
                  "ef,0.5,1e9,0.9,3,-,2,x\n");
  put("rows.yaml", "sweep:\n  scenarios: rows.csv\n");
  assert_int_equal(kelvin(NULL, "sweep --cpu --out rows rows.yaml", err, sizeof err), 0);
  assert_int_equal(count_lines("rows/sweep.csv"), 3 + 1);
  /* a sweep.csv can be fed back as scenarios */
  put("again.yaml", "sweep:\n  scenarios: rows/sweep.csv\n");
  assert_int_equal(kelvin(NULL, "sweep --cpu --out again again.yaml", err, sizeof err), 0);
  assert_int_equal(count_lines("again/sweep.csv"), 3 + 1);
  /* the example config parses and runs */
  char args[1024];
  snprintf(args, sizeof args, "sweep --cpu --quiet --out ex '%s/examples/sweep.yaml'", KELVIN_SOURCE_DIR);
  assert_int_equal(kelvin(NULL, args, err, sizeof err), 0);
  assert_int_equal(kelvin(NULL, "sweep --help", err, sizeof err), 0);
  assert_int_equal(kelvin(NULL, "devices", err, sizeof err), 0);
}

/* Where things go: the summary on stdout, progress and "wrote" on stderr; --no-plot: no figure. */
static void test_streams_and_no_plot(void **state)
{
  (void)state;
  static char out[65536];
  char err[8192];
  assert_int_equal(kelvin_stdout("sweep --cpu --out st", out, sizeof out), 0);
  assert_non_null(strstr(out, "kelvin sweep: 4992 scenarios (0 with a status)"));
  assert_non_null(strstr(out, "hc/lankarani-nikravesh"));
  assert_null(strstr(out, "wrote"));
  assert_int_equal(kelvin(NULL, "sweep --cpu --out st", err, sizeof err), 0);
  printf("%s", err);
  assert_non_null(strstr(err, "kelvin: sweep: wrote st/{sweep.csv, summary.json, figure.dat, sweep.png}"));
  assert_null(strstr(err, "figure draws a sample")); /* 4992 rows: all of them */
  assert_int_equal(kelvin(NULL, "sweep --cpu --no-plot --out np", err, sizeof err), 0);
  assert_non_null(strstr(err, "kelvin: sweep: wrote np/{sweep.csv, summary.json}\n"));
  assert_int_equal(count_lines("np/sweep.csv"), 4992 + 1);
  assert_true(count_lines("np/summary.json") > 0);
  assert_int_equal(count_lines("np/figure.dat"), -1);
  assert_int_equal(count_lines("np/sweep.png"), -1);
  assert_int_equal(count_lines("np/sweep.png.gp"), -1);
  assert_false(has_tmp("np"));
  assert_int_equal(kelvin(NULL, "sweep --cpu --quiet --no-plot --out np", err, sizeof err), 0);
  assert_string_equal(err, "");
  assert_int_equal(kelvin(NULL, "sweep --cpu --progress -1 --out np", err, sizeof err), 2);
  assert_non_null(strstr(err, "--progress: must be >= 0 seconds, got -1"));
  assert_int_equal(kelvin(NULL, "sweep --cpu --progress soon --out np", err, sizeof err), 2);
}

/* 50000 scenarios (kv, 2 rules x 50 cr x 500 v0): the table is written in one block of 65536 rows (the
 * library's writer reports after each, kelvin/batch.h), so no progress line even at every check
 * (--progress 0; test_formats_and_hint sees them on a larger sweep); the figure is a sample of about
 * 20000 rows, with all 2 x 500 on the cr = 0.5 slice, and says so in its title. */
static void test_large_sweep_reports(void **state)
{
  (void)state;
  char err[65536];
  put("large.yaml", "sweep:\n  model: kv\n  rule: [penetration, force]\n  cr: {min: 0.02, max: 1, n: 50}\n"
                    "  v0: {min: 0.01, max: 10, n: 500, scale: log}\n");
  assert_int_equal(kelvin(NULL, "sweep --cpu --progress 0 --out large large.yaml", err, sizeof err), 0);
  printf("%s", err);
  assert_int_equal(count_containing(err, "kelvin: sweep: writing sweep.csv: "), 0);
  assert_null(strstr(err, "--format hdf5")); /* no hint below 1e6 rows */
  assert_non_null(strstr(err, "the figure draws a sample of"));
  char *gp = kl_test_read(tmpdir, "large/sweep.png.gp");
  assert_non_null(gp);
  assert_non_null(strstr(gp, "(a sample of "));
  assert_non_null(strstr(gp, " of the 50000 scenarios without a status; all are in the table)"));
  free(gp);
  assert_non_null(strstr(err, "(1000 of the 1000 at c_r = 0.5;"));
  assert_int_equal(count_lines("large/sweep.csv"), 50000 + 1);
  char *fig = kl_test_read(tmpdir, "large/figure.dat");
  assert_non_null(fig);
  long rows = 0, slice = 0;
  for (char *l = strtok(fig, "\n"); l; l = strtok(NULL, "\n")) {
    if (l[0] == '#') continue;
    ++rows;
    slice += l[strlen(l) - 1] == '1';
  }
  free(fig);
  printf("figure.dat: %ld rows, %ld on the slice\n", rows, slice);
  assert_true(rows > 18000 && rows < 22000);
  assert_int_equal(slice, 1000);
}

/* --format hdf5: sweep.h5 instead of sweep.csv (an earlier run's sweep.csv goes); a bad format is exit 2.
 * Above 1e6 rows a CSV sweep says once that hdf5 suits it (kv, 1001 x 1000 = 1001000 scenarios), and
 * reports while writing: a line per 65536 rows (--progress 0), 16 in all; the hdf5 run says nothing of
 * the kind. */
static void test_formats_and_hint(void **state)
{
  (void)state;
  static char err[65536];
  assert_int_equal(kelvin(NULL, "sweep --cpu --no-plot --out fm", err, sizeof err), 0);
  assert_true(count_lines("fm/sweep.csv") > 0);
  assert_int_equal(kelvin(NULL, "sweep --cpu --no-plot --format hdf5 --out fm", err, sizeof err), 0);
  assert_non_null(strstr(err, "kelvin: sweep: wrote fm/{sweep.h5, summary.json}\n"));
  assert_int_equal(count_lines("fm/sweep.csv"), -1);
  char *h5 = kl_test_read(tmpdir, "fm/sweep.h5");
  assert_non_null(h5);
  assert_memory_equal(h5, "\x89HDF\r\n\x1a\n", 8); /* the HDF5 signature */
  free(h5);
  assert_false(has_tmp("fm"));
  assert_int_equal(kelvin(NULL, "sweep --cpu --format parquet --out fm", err, sizeof err), 2);
  assert_non_null(strstr(err, "--format"));
  assert_non_null(strstr(err, "parquet"));
  put("huge.yaml", "sweep:\n  model: kv\n  rule: penetration\n  cr: {min: 0.02, max: 1, n: 1001}\n"
                   "  v0: {min: 0.01, max: 10, n: 1000, scale: log}\n");
  assert_int_equal(kelvin(NULL, "sweep --cpu --no-plot --progress 0 --out huge huge.yaml", err, sizeof err), 0);
  printf("%s", err);
  assert_int_equal(count_containing(err, "--format hdf5 suits a sweep this large"), 1);
  assert_non_null(strstr(err, "sweep: 1001000 scenarios: --format hdf5"));
  assert_int_equal(count_containing(err, "kelvin: sweep: writing sweep.csv: "), 16);
  assert_non_null(strstr(err, "writing sweep.csv:   6.5% (65536 of 1001000 rows)"));
  assert_non_null(strstr(err, "writing sweep.csv: 100.0% (1001000 of 1001000 rows)"));
  assert_int_equal(count_lines("huge/sweep.csv"), 1001000 + 1);
  assert_int_equal(kelvin(NULL, "sweep --cpu --no-plot --format hdf5 --out huge huge.yaml", err, sizeof err), 0);
  assert_null(strstr(err, "suits a sweep this large"));
  assert_int_equal(count_lines("huge/sweep.csv"), -1);
  assert_false(has_tmp("huge"));
}

int main(void)
{
  snprintf(tmpdir, sizeof tmpdir, "/tmp/kelvin-cli-sweep-XXXXXX");
  if (!mkdtemp(tmpdir)) return 1;
  have_opencl = kl_test_have_opencl();
  if (!have_opencl) printf("no OpenCL device with fp64: the OpenCL runs are skipped\n");
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_config_errors),
    cmocka_unit_test(test_missing_device),
    cmocka_unit_test(test_build_failure),
    cmocka_unit_test(test_good_runs),
    cmocka_unit_test(test_streams_and_no_plot),
    cmocka_unit_test(test_large_sweep_reports),
    cmocka_unit_test(test_formats_and_hint),
  };
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  if (rc == 0 && kl_test_rmtree(tmpdir) != 0) return 1;
  return rc;
}
