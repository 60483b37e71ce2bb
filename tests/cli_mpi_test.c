/* tests/cli_mpi_test.c: `mpirun -n N kelvin ...` end to end (a build with -DKELVIN_MPI=ON; docs/design.md
 * section 11). Each case runs a kelvin command line on one plain process and under mpirun with 1, 2 and 3
 * ranks (--oversubscribe), each run in a folder of its own with the same relative output folder, so that
 * the command line recorded in the JSON reports is the same; then every output file must be byte-identical
 * to the plain run's (a JSON report compared after removing the keys that hold wall times, WALL_KEYS). Also:
 * a rank whose device fails (MPMD) ends the job with its message and no output folder; a command that is
 * not shared across ranks refuses mpirun with exit 2 and one message; an interrupted run (SIGINT to mpirun,
 * which sends SIGTERM to every rank) leaves no output folder and no temporary.
 *
 * The hook for more cases: same_as_plain(name, args, ranks, nranks) runs `kelvin args` plainly and with
 * each rank count and compares the folders file by file (run_ranks, same_folders). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "tests/cli_util.h"

#ifndef MPIEXEC
#define MPIEXEC "mpirun"
#endif

/* Keys of a JSON report that hold wall times (removed before comparing): the object "time_s" of kelvin
 * optimise/evaluate's report.json (setup, screening, refinement, verification, total, correction;
 * cli/report.c). The sweep's summary.json holds none. */
static const char *const WALL_KEYS[] = {"time_s", "verification_seconds", NULL};

static char root[1024]; /* this test's scratch folder */

/* argv of `mpirun --oversubscribe -n N kelvin <args>` (args split as kl_test_split does) in words. */
static int mpi_argv(int n, const char *args, char *buf, size_t cap, char **argv, int maxw)
{
  static char exe[1024], np[16];
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  snprintf(np, sizeof np, "%d", n);
  argv[0] = (char *)MPIEXEC;
  argv[1] = (char *)"--oversubscribe";
  argv[2] = (char *)"-n";
  argv[3] = np;
  argv[4] = exe;
  return 5 + kl_test_split(args, buf, cap, argv + 5, maxw - 5);
}

/* Run `kelvin args` in folder cwd: plainly (n = 0) or under mpirun with n ranks. stderr into err. Returns
 * the exit status. */
static int run_ranks(int n, const char *cwd, const char *args, char *err, size_t cap)
{
  mkdir(cwd, 0755);
  /* one OpenMP thread per process: the twin's description (in report.json) names its thread count, which
   * would otherwise follow mpirun's binding of each rank to a core */
  if (n == 0) return kl_test_kelvin(cwd, "OMP_NUM_THREADS=1", args, err, cap);
  static char buf[16384];
  char *argv[256], *env[] = {(char *)"OMP_NUM_THREADS=1", NULL};
  mpi_argv(n, args, buf, sizeof buf, argv, 256);
  return kl_test_run(cwd, env, argv, 2, err, cap);
}

static void drop_keys(cJSON *j)
{
  if (!j) return;
  for (int k = 0; WALL_KEYS[k]; ++k) cJSON_DeleteItemFromObjectCaseSensitive(j, WALL_KEYS[k]);
  for (cJSON *c = j->child; c; c = c->next) drop_keys(c);
}

/* dir/name's bytes; a .json file printed again without WALL_KEYS. */
static char *content(const char *dir, const char *name, size_t *len)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  assert_non_null(s);
  assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
  s[n] = '\0';
  fclose(f);
  *len = (size_t)n;
  const size_t nl = strlen(name);
  if (nl > 5 && strcmp(name + nl - 5, ".json") == 0) {
    cJSON *j = cJSON_Parse(s);
    assert_non_null(j);
    drop_keys(j);
    free(s);
    s = cJSON_Print(j);
    cJSON_Delete(j);
    *len = strlen(s);
  }
  return s;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names in dir (not . and ..), sorted; count in *n. */
static char **names(const char *dir, int *n)
{
  DIR *d = opendir(dir);
  assert_non_null(d);
  char **v = calloc(256, sizeof *v);
  *n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      assert_true(*n < 255);
      v[(*n)++] = strdup(e->d_name);
    }
  closedir(d);
  qsort(v, (size_t)*n, sizeof *v, by_name);
  return v;
}

/* Folders a and b hold the same file names with the same contents, byte for byte (content(); an HDF5 file too:
 * io/batch_out.c keeps no modification times in it). Returns the file count. */
static int same_folders(const char *a, const char *b)
{
  int na, nb;
  char **fa = names(a, &na), **fb = names(b, &nb);
  if (na != nb) fprintf(stderr, "cli_mpi_test: %s holds %d files, %s %d\n", a, na, b, nb);
  assert_int_equal(na, nb);
  for (int i = 0; i < na; ++i) {
    assert_string_equal(fa[i], fb[i]);
    size_t la, lb;
    char *ca = content(a, fa[i], &la), *cb = content(b, fb[i], &lb);
    if (la != lb || memcmp(ca, cb, la) != 0)
      fprintf(stderr, "cli_mpi_test: %s/%s and %s/%s differ\n", a, fa[i], b, fa[i]);
    assert_int_equal(la, lb);
    assert_memory_equal(ca, cb, la);
    free(ca), free(cb), free(fa[i]), free(fb[i]);
  }
  free(fa), free(fb);
  return na;
}

/* `kelvin args` (its output folder "out", relative) plainly and with each of nranks rank counts: every
 * rank count's outputs the same as the plain run's. */
static void same_as_plain(const char *name, const char *args, const int *ranks, int nranks)
{
  char cwd[4200], out0[4300], outn[4300], err[16384];
  snprintf(cwd, sizeof cwd, "%s/%s.plain", root, name);
  const double t0 = (double)time(NULL);
  const int rc = run_ranks(0, cwd, args, err, sizeof err);
  if (rc != 0) fprintf(stderr, "%s", err);
  assert_int_equal(rc, 0);
  snprintf(out0, sizeof out0, "%s/out", cwd);
  for (int k = 0; k < nranks; ++k) {
    snprintf(cwd, sizeof cwd, "%s/%s.n%d", root, name, ranks[k]);
    const int rn = run_ranks(ranks[k], cwd, args, err, sizeof err);
    if (rn != 0) fprintf(stderr, "%s", err);
    assert_int_equal(rn, 0);
    snprintf(outn, sizeof outn, "%s/out", cwd);
    const int files = same_folders(out0, outn);
    /* rank 0 alone wrote: no temporary left, and no rank > 0 printed (no message repeated) */
    assert_false(kl_test_has_tmp(outn));
    printf("cli_mpi_test: %s: %d ranks: %d files identical to one process\n", name, ranks[k], files);
  }
  printf("cli_mpi_test: %s took %.0f s\n", name, (double)time(NULL) - t0);
}

static void sweep_opencl(void **state)
{
  (void)state;
  if (!kl_test_have_opencl()) {
    printf("cli_mpi_test: no OpenCL device: the OpenCL sweep is skipped\n");
    return;
  }
  char args[4200];
  snprintf(args, sizeof args, "sweep %s/examples/sweep.yaml --out out", KELVIN_SOURCE_DIR);
  const int r[] = {1, 2, 3};
  same_as_plain("sweep", args, r, 3);
}

static void sweep_cpu(void **state)
{
  (void)state;
  char args[4200];
  snprintf(args, sizeof args, "sweep %s/examples/sweep.yaml --cpu --out out", KELVIN_SOURCE_DIR);
  const int r[] = {2, 3};
  same_as_plain("sweep_cpu", args, r, 2);
}

/* HDF5 and samples (every sample table gathered too) */
static void sweep_hdf5_samples(void **state)
{
  (void)state;
  char cfg[1200], args[2600];
  snprintf(cfg, sizeof cfg, "%s/samples.yaml", root);
  kl_test_write(NULL, cfg,
                "sweep:\n  model: [kv, hc, ef]\n  law: [hunt-crossley, exact]\n  K: [1.0e8, 1.0e10]\n"
                "  cr: {min: 0.1, max: 1.0, n: 7}\n  v0: {min: 0.1, max: 5, n: 11}\n  samples: 5\n");
  snprintf(args, sizeof args, "sweep %s --cpu --format hdf5 --out out", cfg);
  const int r[] = {2, 3};
  same_as_plain("sweep_hdf5", args, r, 2);
}

/* A rank whose device does not exist: every rank fails, the message names rank 1 and the device, no
 * output folder (MPMD: rank 0 on the OpenMP twin, rank 1 asks for a device that is not there). */
static void failing_rank(void **state)
{
  (void)state;
  char cwd[1200], exe[1024], cfg[1200], err[16384];
  snprintf(cwd, sizeof cwd, "%s/failing", root);
  mkdir(cwd, 0755);
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  snprintf(cfg, sizeof cfg, "%s/examples/sweep.yaml", KELVIN_SOURCE_DIR);
  char *argv[] = {(char *)MPIEXEC, (char *)"--oversubscribe", (char *)"-n", (char *)"1", exe, (char *)"sweep",
                  (char *)"--cpu", cfg, (char *)"--out", (char *)"out", (char *)":", (char *)"-n", (char *)"1", exe,
                  (char *)"sweep", (char *)"--device", (char *)"no-such-device", cfg, (char *)"--out", (char *)"out",
                  NULL};
  const int rc = kl_test_run(cwd, NULL, argv, 2, err, sizeof err);
  fprintf(stderr, "%s", err);
  assert_int_not_equal(rc, 0);
  assert_non_null(strstr(err, "rank 1: "));
  assert_non_null(strstr(err, "no-such-device"));
  /* one message: rank 0 prints the agreed one, rank 1 nothing */
  const char *first = strstr(err, "no-such-device");
  assert_null(strstr(first + 1, "rank 1: "));
  char out[4300];
  snprintf(out, sizeof out, "%s/out", cwd);
  struct stat sb;
  assert_int_not_equal(stat(out, &sb), 0);
}

/* A command that is not shared across ranks: exit 2 and one message. */
static void other_command(void **state)
{
  (void)state;
  char cwd[4200], err[16384];
  snprintf(cwd, sizeof cwd, "%s/bounce", root);
  const int rc = run_ranks(2, cwd, "bounce --out out", err, sizeof err);
  fprintf(stderr, "%s", err);
  assert_int_equal(rc, 2);
  const char *const text = "kelvin bounce runs on one process; run it without mpirun";
  const char *m = strstr(err, text);
  assert_non_null(m);
  assert_null(strstr(m + strlen(text), "runs on one process")); /* from rank 0 only */
  char out[4300];
  snprintf(out, sizeof out, "%s/out", cwd);
  struct stat sb;
  assert_int_not_equal(stat(out, &sb), 0);
}

/* A build with MPI says so in --version (one process, no mpirun), and rank 0 alone reports what sharing cost it:
 * its collectives, the MB it received (the built-in sweep's 4992 rows on 2 ranks: rank 1's 2496 rows of 7 metrics
 * and a status, 2496 x 60 bytes = 0.15 MB) and the time in them. */
static void version_and_cost(void **state)
{
  (void)state;
  char cwd[4200], err[16384];
  snprintf(cwd, sizeof cwd, "%s/version", root);
  assert_int_equal(run_ranks(0, cwd, "--version", err, sizeof err), 0);
  char *argv[] = {(char *)KELVIN_BINARY_DIR "/kelvin", (char *)"--version", NULL};
  char out[4096];
  assert_int_equal(kl_test_run(cwd, NULL, argv, 1, out, sizeof out), 0);
  assert_non_null(strstr(out, "\nMPI: "));
  assert_int_equal(run_ranks(2, cwd, "sweep --cpu --no-plot --out out", err, sizeof err), 0);
  const char *m = strstr(err, "kelvin: across 2 ranks: ");
  if (!m) fail_msg("no cost line in: %s", err);
  assert_null(strstr(m + 20, "across 2 ranks")); /* rank 0 only */
  double mb = -1;
  assert_int_equal(sscanf(strstr(m, "collectives, ") + 13, "%lf MB received", &mb), 1);
  assert_true(fabs(mb - 2496 * 60e-6) < 0.051); /* printed to 0.1 MB */
}

/* Ctrl-C: SIGINT to mpirun during a long sweep; mpirun sends SIGTERM to every rank, rank 0 removes its
 * temporaries: no output folder, no temporary. */
static void interrupted(void **state)
{
  (void)state;
  char cwd[1200], cfg[1200], out[1300], args[2600];
  snprintf(cwd, sizeof cwd, "%s/interrupted", root);
  mkdir(cwd, 0755);
  snprintf(cfg, sizeof cfg, "%s/long.yaml", root);
  /* 10000 scenarios of the general law (by a step; 1000 took 5 s on one rank of the 2-core test machine, and a
   * CI machine finished them on 2 ranks within the second this test once waited): tens of seconds per rank here,
   * several on a machine many times faster, little memory; interrupted 0.2 s after the folder appears */
  kl_test_write(NULL, cfg,
                "sweep:\n  model: [general]\n  K: {min: 1.0e6, max: 1.0e9, n: 10}\n  v0: {min: 0.1, max: 5, n: 250}\n"
                "  c: [10, 100, 1000, 10000]\n  n2: 1\n  rate_exp: 1\n");
  snprintf(out, sizeof out, "%s/out", cwd);
  snprintf(args, sizeof args, "sweep %s --cpu --out out", cfg);
  static char buf[16384];
  char *argv[64];
  mpi_argv(2, args, buf, sizeof buf, argv, 64);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addchdir_np(&fa, cwd);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  extern char **environ;
  pid_t pid;
  assert_int_equal(posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  /* wait for rank 0's output folder (its staging folder inside), then interrupt */
  struct stat sb;
  int seen = 0;
  for (int i = 0; i < 1200 && !seen; ++i) {
    seen = stat(out, &sb) == 0 && kl_test_count_files(out) >= 0;
    if (!seen) usleep(50000);
  }
  assert_true(seen);
  usleep(200000);
  int st = 0;
  if (waitpid(pid, &st, WNOHANG) != 0) fail_msg("the sweep ended before it could be interrupted");
  kill(pid, SIGINT);
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  assert_false(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  assert_int_not_equal(stat(out, &sb), 0);
  assert_false(kl_test_has_tmp(cwd));
  assert_int_equal(kl_test_count_files(cwd), 0);
}

static void optimise_cpu(void **state)
{
  (void)state;
  char args[4200];
  snprintf(args, sizeof args, "optimise %s/examples/optimise.yaml --cpu --out out", KELVIN_SOURCE_DIR);
  const int r[] = {2, 3};
  same_as_plain("optimise", args, r, 2);
}

static void evaluate_cpu(void **state)
{
  (void)state;
  char args[8400];
  /* the pass the plain optimisation found (optimise_cpu runs first) */
  snprintf(args, sizeof args, "evaluate %s/examples/optimise.yaml --pass %s/optimise.plain/out/trajectory.csv --cpu "
           "--scenarios 64 --out out", KELVIN_SOURCE_DIR, root);
  const int r[] = {2, 3};
  same_as_plain("evaluate", args, r, 2);
}

/* A robust optimisation (a small version of examples/optimise_robust.yaml, as cli_robust_test runs it: 16
 * scenarios, mean + 2 sd, Levenberg-Marquardt, then the out-of-sample check on 40 fresh scenarios in the 3-D
 * engine): the nominal optimum, the robust pass, robust.csv and report.json's check the same on 2 and 3 ranks. */
static void robust_cpu(void **state)
{
  (void)state;
  char cfg[1200], args[2600];
  snprintf(cfg, sizeof cfg, "%s/robust.yaml", root);
  kl_test_write(NULL, cfg,
                "workpiece: {surface: sphere, radius: 0.8, bead: {height: 2e-4, width: 1.0e-3, x: 0.01},\n"
                "            tilt_deg: 0.1,\n"
                "            extent: [0.04, 0.01], resolution: 2e-4, roughness: {amplitude: 0}}\n"
                "tool: {radius: 0.01, E: 200e6, nu: 0.3, mass: 3.0, weight: 5.0, inertia: [0.04, 0.04, 0.002]}\n"
                "holder: {stiffness: 5e5, damping: 245, lateral_stiffness: 1e6, lateral_damping: 350,\n"
                "         rotational_stiffness: 1e4, rotational_damping: 4}\n"
                "contact: {model: hc, law: exact, cr: 0.3}\n"
                "target: {force: 8.0, max_force: 16.0}\n"
                "path: {start: 0.002, end: 0.018, samples: 41}\n"
                "speed: {max: 0.1, max_accel: 1.0}\n"
                "objective: {time: 1.0}\n"
                "verify: {count: 1}\n"
                "uncertainty: {scenarios: 16, verify_scenarios: 40, objective: mean_std, k: 2, force_min: 7,\n"
                "              force_max: 9,\n"
                "              holder_stiffness: 0.2, holder_stiffness_dist: truncated, tool_mass: 0.2,\n"
                "              tool_mass_dist: truncated}\n");
  snprintf(args, sizeof args, "optimise %s --cpu --out out", cfg);
  const int r[] = {2, 3};
  same_as_plain("robust", args, r, 2);
}

int main(void)
{
  if (!kl_test_have(MPIEXEC) && access(MPIEXEC, X_OK) != 0) {
    printf("cli_mpi_test: %s not found: skipped\n", MPIEXEC);
    return 77;
  }
  snprintf(root, sizeof root, "%s/cli_mpi_test.d", KELVIN_BINARY_DIR);
  kl_test_rmtree(root);
  assert_int_equal(mkdir(root, 0755), 0);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(other_command),   cmocka_unit_test(failing_rank), cmocka_unit_test(sweep_cpu),
    cmocka_unit_test(sweep_opencl),    cmocka_unit_test(sweep_hdf5_samples), cmocka_unit_test(interrupted),
    cmocka_unit_test(optimise_cpu),    cmocka_unit_test(evaluate_cpu),       cmocka_unit_test(version_and_cost),
    cmocka_unit_test(robust_cpu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
