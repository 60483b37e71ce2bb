/* tests/cli_outdir_test.c: output folders that stay whole (issue 31, items 4-6), as a user meets them:
 * one run per folder at a time (its lock), a target in the way found before anything is replaced, a
 * closed stderr pipe, a robot path off every reach leaving no earlier figure beside the new CSV; messages
 * that name the file and line and carry no non-finite number (a path CSV at 1e300 m or of one repeated
 * point, a drop of 1e308 m); and control characters from names escaped on the terminal. Each case checks
 * the exit status, the one line on stderr and the folder of the earlier run, byte for byte (hidden
 * entries included: no staging folder, no lock left). The full disk is tests/cli_fulldisk_test.c. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <cmocka.h>

#include "tests/cli_util.h"

static char tmp[256];

#define SMALL(n)                                                                                                     \
  "path: {samples: " #n ", start: -0.02, end: 0.02}\nworkpiece: {extent: [0.06, 0.02], resolution: 1e-3}\n"           \
  "offset: {control_points: 6}\nspeed: {control_points: 4}\noptimiser: {screening: 16, keep: 1, maxeval: 1}\n"       \
  "verify: {count: 1}\n"
#define BOUNCE "bounce --duration 0.2 --cr 0.5 --quiet --out prev"

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

/* Everything under dir, hidden entries too, appended to *s (length *len): one line per entry, its path and,
 * for a file, its size and a hash of its bytes (a folder is "path/", then its contents) */
static void snap(const char *dir, const char *rel, char **s, size_t *len)
{
  struct dirent **e = NULL;
  const int n = scandir(dir, &e, NULL, by_name);
  assert_true(n >= 0);
  for (int i = 0; i < n; ++i) {
    const char *nm = e[i]->d_name;
    if (strcmp(nm, ".") && strcmp(nm, "..")) {
      char p[1024], r[1024];
      snprintf(p, sizeof p, "%s/%s", dir, nm);
      snprintf(r, sizeof r, "%s%s", rel, nm);
      struct stat st;
      assert_int_equal(lstat(p, &st), 0);
      char line[1200];
      if (S_ISREG(st.st_mode)) { /* its size and a 64-bit FNV-1a hash of all its bytes */
        FILE *f = fopen(p, "rb");
        assert_non_null(f);
        unsigned long long h = 1469598103934665603ULL;
        int ch;
        while ((ch = fgetc(f)) != EOF) h = (h ^ (unsigned char)ch) * 1099511628211ULL;
        fclose(f);
        snprintf(line, sizeof line, "%s %lld %016llx\n", r, (long long)st.st_size, h);
      } else {
        snprintf(line, sizeof line, "%s%s\n", r, S_ISDIR(st.st_mode) ? "/" : "");
      }
      const size_t add = strlen(line);
      *s = realloc(*s, *len + add);
      assert_non_null(*s);
      memcpy(*s + *len - 1, line, add + 1);
      *len += add;
      if (S_ISDIR(st.st_mode)) {
        strcat(r, "/");
        snap(p, r, s, len);
      }
    }
    free(e[i]);
  }
  free(e);
}

/* Everything under dir as one string (snap): two snapshots are equal only if the folder and every folder in
 * it are exactly as they were. Malloc'd. */
static char *snapshot(const char *dir)
{
  size_t len = 1;
  char *s = calloc(1, 1);
  assert_non_null(s);
  snap(dir, "", &s, &len);
  return s;
}

/* one line on stderr, "kelvin: ..." with must in it, and no non-finite number where a number was meant */
static int one_line(const char *err, const char *must)
{
  return strncmp(err, "kelvin: ", 8) == 0 && kl_test_lines(err) == 1 && err[strlen(err) - 1] == '\n' && strstr(err, must) &&
         !strstr(err, "nan") && !strstr(err, "inf ") && !strstr(err, "inf,") && !strstr(err, "Sanitizer");
}

/* a case's own folder under tmp */
static void casedir(char *dir, size_t cap, const char *name)
{
  snprintf(dir, cap, "%s/%s", tmp, name);
  assert_int_equal(mkdir(dir, 0777), 0);
}

/* kelvin started in cwd with the arguments on one line, stdout to /dev/null, stderr into the file errf;
 * returns its pid (not waited for) */
static pid_t start(const char *cwd, const char *args, const char *errf)
{
  static char abuf[4096];
  char *argv[64];
  char exe[1024];
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  argv[0] = exe;
  kl_test_split(args, abuf, sizeof abuf, argv + 1, 63);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addchdir_np(&fa, cwd);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, errf, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  extern char **environ;
  pid_t pid;
  assert_int_equal(posix_spawn(&pid, exe, &fa, NULL, argv, environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

static int finish(pid_t pid)
{
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A folder another run holds (its lock taken here, with a pid in it): the second run stops at once, exit 1,
 * one line naming the folder and the holder's pid, and the folder stays as it was. Let go, the same run
 * succeeds and leaves no lock behind. */
static void test_lock(void **state)
{
  (void)state;
  char dir[512], err[4096], lock[700];
  casedir(dir, sizeof dir, "lock");
  assert_int_equal(kl_test_kelvin(dir, NULL, BOUNCE, err, sizeof err), 0);
  char *before = snapshot(dir);
  snprintf(lock, sizeof lock, "%s/prev/.kelvin.lock", dir);
  const int fd = open(lock, O_RDWR | O_CREAT, 0666);
  assert_true(fd >= 0);
  assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
  assert_int_equal(write(fd, "4242\n", 5), 5);
  char *held = snapshot(dir);
  const int rc = kl_test_kelvin(dir, NULL, "bounce --duration 0.2 --cr 0.7 --quiet --out prev", err, sizeof err);
  printf("# a second run into a locked folder -> %d: %s", rc, err);
  assert_int_equal(rc, 1);
  assert_true(one_line(err, "'prev' is in use by another kelvin run (pid 4242)"));
  char *after = snapshot(dir);
  assert_string_equal(after, held);
  free(after);
  free(held);
  unlink(lock);
  close(fd);
  assert_int_equal(kl_test_kelvin(dir, NULL, BOUNCE, err, sizeof err), 0);
  assert_int_not_equal(access(lock, F_OK), 0); /* no lock left, the same outputs (summary.json has the run's time) */
  char p[700];
  snprintf(p, sizeof p, "%s/prev", dir);
  assert_false(kl_test_has_tmp(p));
  assert_int_equal(kl_test_count_files(p), 8);
  free(before);
}

/* Two `kelvin optimise` runs into one folder at once, five times: each either runs or stops with the lock's
 * message, and the folder holds the outputs of one run (report.json names the config whose sample count
 * trajectory.csv has), never a mix. */
static void test_concurrent(void **state)
{
  (void)state;
  char dir[512];
  casedir(dir, sizeof dir, "concurrent");
  kl_test_write(dir, "a.yaml", SMALL(41));
  kl_test_write(dir, "b.yaml", SMALL(51));
  int refused = 0;
  for (int t = 0; t < 5; ++t) {
    const pid_t a = start(dir, "optimise a.yaml --cpu --quiet --out o", "a.err");
    const pid_t b = start(dir, "optimise b.yaml --cpu --quiet --out o", "b.err");
    const int ra = finish(a), rb = finish(b);
    char *ea = kl_test_read(dir, "a.err"), *eb = kl_test_read(dir, "b.err");
    printf("# try %d: a -> %d %s# try %d: b -> %d %s", t, ra, ea[0] ? ea : "\n", t, rb, eb[0] ? eb : "\n");
    assert_true(ra == 0 || (ra == 1 && one_line(ea, "'o' is in use by another kelvin run (pid ")));
    assert_true(rb == 0 || (rb == 1 && one_line(eb, "'o' is in use by another kelvin run (pid ")));
    assert_true(ra == 0 || rb == 0);
    refused += ra != 0 || rb != 0;
    free(ea);
    free(eb);
    char o[600];
    snprintf(o, sizeof o, "%s/o", dir);
    char *rep = kl_test_read(o, "report.json"), *tr = kl_test_read(o, "trajectory.csv");
    assert_non_null(rep);
    assert_non_null(tr);
    const int rows = kl_test_lines(tr) - 1;
    assert_true(strstr(rep, "\"config\":\t\"a.yaml\"") ? rows == 41 : strstr(rep, "\"config\":\t\"b.yaml\"") && rows == 51);
    assert_false(kl_test_has_tmp(o));
    char lock[700];
    snprintf(lock, sizeof lock, "%s/.kelvin.lock", o);
    assert_int_not_equal(access(lock, F_OK), 0);
    free(rep);
    free(tr);
  }
  printf("# %d of 5 tries had one run refused\n", refused);
}

/* summary.json of the folder is a folder: found before any file is replaced (exit 1, one line naming it),
 * every earlier file as it was */
static void test_target_in_the_way(void **state)
{
  (void)state;
  char dir[512], err[4096], p[700];
  casedir(dir, sizeof dir, "inway");
  assert_int_equal(kl_test_kelvin(dir, NULL, BOUNCE, err, sizeof err), 0);
  snprintf(p, sizeof p, "%s/prev/summary.json", dir);
  assert_int_equal(unlink(p), 0);
  assert_int_equal(mkdir(p, 0777), 0);
  char *before = snapshot(dir);
  const int rc = kl_test_kelvin(dir, NULL, "bounce --duration 0.3 --cr 0.5 --quiet --out prev", err, sizeof err);
  printf("# summary.json a folder -> %d: %s", rc, err);
  assert_int_equal(rc, 1);
  assert_true(one_line(err, "cannot replace 'prev/summary.json': it is a folder"));
  char *after = snapshot(dir);
  assert_string_equal(after, before);
  free(after);
  free(before);
}

/* stderr a pipe whose reader goes away in the middle of a run: SIGPIPE ends it as SIGINT would, with the
 * staging folder and the lock removed and the earlier folder as it was */
static void test_sigpipe(void **state)
{
  (void)state;
  char dir[512], err[4096];
  casedir(dir, sizeof dir, "sigpipe");
  kl_test_write(dir, "sc.yaml", "duration: 1000\noutput_step: 1e-4\nbodies:\n  - name: ground\n    type: static\n"
                                "    shapes: [{type: plane}]\n  - name: ball\n    position: [0, 0, 0.2]\n"
                                "    shapes: [{type: sphere, radius: 0.1}]\n");
  assert_int_equal(kl_test_kelvin(dir, NULL, BOUNCE, err, sizeof err), 0);
  char *before = snapshot(dir);
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&fa, fd[0]);
  posix_spawn_file_actions_addchdir_np(&fa, dir);
  char exe[1024];
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  char *argv[] = {exe, (char *)"simulate", (char *)"sc.yaml", (char *)"--out", (char *)"prev",
                  (char *)"--max-substeps", (char *)"1e9", NULL}; /* a long run, beyond the default work limit */
  posix_spawnattr_t at; /* SIGPIPE as a shell gives it, whatever this test inherited */
  posix_spawnattr_init(&at);
  sigset_t dfl;
  sigemptyset(&dfl);
  sigaddset(&dfl, SIGPIPE);
  posix_spawnattr_setsigdefault(&at, &dfl);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
  extern char **environ;
  pid_t pid;
  assert_int_equal(posix_spawn(&pid, exe, &fa, &at, argv, environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(fd[1]);
  char stage[700];
  snprintf(stage, sizeof stage, "%s/prev/.kelvin.tmp.%ld", dir, (long)pid);
  for (int k = 0; k < 500 && kl_test_count_files(stage) <= 0; ++k) {
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
  }
  assert_true(kl_test_count_files(stage) > 0);
  close(fd[0]); /* the reader goes: the next progress line meets a closed pipe */
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  printf("# stderr closed during simulate -> %s %d\n", WIFSIGNALED(st) ? "signal" : "exit",
         WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
  assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE);
  char *after = snapshot(dir);
  assert_string_equal(after, before);
  free(after);
  free(before);
}

/* stderr closed (`2>&-`): the messages go nowhere, not into the first file the run opens (the folder's lock,
 * whose pid they overwrote), and the run's lock holds its pid while it runs */
static void test_stderr_closed(void **state)
{
  (void)state;
  char dir[512], err[4096];
  casedir(dir, sizeof dir, "closed");
  kl_test_write(dir, "sc.yaml", "duration: 1000\noutput_step: 1e-4\nbodies:\n  - name: ground\n    type: static\n"
                                "    shapes: [{type: plane}]\n  - name: ball\n    position: [0, 0, 0.2]\n"
                                "    shapes: [{type: sphere, radius: 0.1}]\n");
  assert_int_equal(kl_test_kelvin(dir, NULL, BOUNCE, err, sizeof err), 0);
  char *before = snapshot(dir);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addclose(&fa, 2);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addchdir_np(&fa, dir);
  char exe[1024];
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  char *argv[] = {exe, (char *)"simulate", (char *)"sc.yaml", (char *)"--out", (char *)"prev",
                  (char *)"--max-substeps", (char *)"1e9", NULL}; /* a long run, beyond the default work limit */
  extern char **environ;
  pid_t pid;
  assert_int_equal(posix_spawn(&pid, exe, &fa, NULL, argv, environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  char stage[700];
  snprintf(stage, sizeof stage, "%s/prev/.kelvin.tmp.%ld", dir, (long)pid);
  for (int k = 0; k < 500 && kl_test_count_files(stage) <= 0; ++k) {
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
  }
  assert_true(kl_test_count_files(stage) > 0);
  struct timespec ts = {1, 500000000}; /* a progress line or two (one a second) */
  nanosleep(&ts, NULL);
  char p[700], want[32];
  snprintf(p, sizeof p, "%s/prev/.kelvin.lock", dir);
  char *lock = kl_test_read(NULL, p);
  snprintf(want, sizeof want, "%ld\n", (long)pid);
  printf("# stderr closed: the lock holds '%.40s'\n", lock ? lock : "(none)");
  kill(pid, SIGINT);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  assert_non_null(lock);
  assert_string_equal(lock, want);
  free(lock);
  assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT);
  char *after = snapshot(dir);
  assert_string_equal(after, before);
  free(after);
  free(before);
}

/* a robot path no sample of which is reachable: the new CSV, exit 1, and no figure of the earlier run
 * beside it; a path at 1e300 m: refused (exit 2) naming the CSV and its line, nothing written */
static void test_robot_stale_figure(void **state)
{
  (void)state;
  char dir[512], err[4096], args[1024], o[600];
  casedir(dir, sizeof dir, "robot");
  snprintf(o, sizeof o, "%s/prev", dir);
  snprintf(args, sizeof args, "robot %s/examples/robot_er10.yaml --quiet --out prev", KELVIN_SOURCE_DIR);
  assert_int_equal(kl_test_kelvin(dir, NULL, args, err, sizeof err), 0);
  char png[700], gp[700];
  snprintf(png, sizeof png, "%s/robot_path.png", o);
  snprintf(gp, sizeof gp, "%s/robot_path.png.gp", o);
  assert_int_equal(access(gp, F_OK), 0); /* the figure's script (and the figure, where gnuplot is) */
  assert_int_equal(access(png, F_OK) == 0, kl_test_have("gnuplot"));
  kl_test_write(dir, "big.csv", "x,y,z,nx,ny,nz\n0.5,0,0.2,0,0,1\n1e300,0,0.2,0,0,1\n");
  char *before = snapshot(dir);
  snprintf(args, sizeof args, "robot %s/examples/robot_er10.yaml --path big.csv --quiet --out prev", KELVIN_SOURCE_DIR);
  int rc = kl_test_kelvin(dir, NULL, args, err, sizeof err);
  printf("# robot path at 1e300 m -> %d: %s", rc, err);
  assert_int_equal(rc, 2);
  assert_true(one_line(err, "big.csv:3: column 'x': must be within +-1000 m"));
  char *after = snapshot(dir);
  assert_string_equal(after, before);
  free(after);
  free(before);
  kl_test_write(dir, "far.csv", "x,y,z,nx,ny,nz\n500,0,0.2,0,0,1\n500.1,0,0.2,0,0,1\n");
  snprintf(args, sizeof args, "robot %s/examples/robot_er10.yaml --path far.csv --quiet --out prev", KELVIN_SOURCE_DIR);
  rc = kl_test_kelvin(dir, NULL, args, err, sizeof err);
  printf("# robot path 500 m away -> %d: %s", rc, err);
  assert_int_equal(rc, 1);
  assert_true(one_line(err, "no sample is reachable, so no figure"));
  char *csv = kl_test_read(o, "robot_path.csv");
  assert_non_null(csv);
  assert_non_null(strstr(csv, "\n0,500,0,0.2,")); /* the new path's samples */
  free(csv);
  assert_int_not_equal(access(png, F_OK), 0);
  assert_int_not_equal(access(gp, F_OK), 0);
  assert_int_equal(kl_test_count_files(o), 2); /* robot_path.csv, summary.json */
}

/* Messages naming the file and line, with no nan or inf: a path CSV at 1e300 m or of one repeated point
 * through every command that reads one, and a drop of 1e308 m */
static void test_messages(void **state)
{
  (void)state;
  char dir[512], err[4096], args[1024];
  casedir(dir, sizeof dir, "messages");
  kl_test_write(dir, "big.csv", "x_m,y_m,z_m,nx,ny,nz\n-0.02,0,0,0,0,1\n0,0,0,0,0,1\n1e300,0,0,0,0,1\n");
  kl_test_write(dir, "rep.csv", "x_m,y_m,z_m,nx,ny,nz\n0.01,0,0,0,0,1\n0.01,0,0,0,0,1\n0.01,0,0,0,0,1\n");
  kl_test_write(dir, "big.yaml", "path: {csv: big.csv, samples: 41}\nworkpiece: {extent: [0.06, 0.02], resolution: 1e-3}\n");
  kl_test_write(dir, "rep.yaml", "path: {csv: rep.csv, samples: 41}\nworkpiece: {extent: [0.06, 0.02], resolution: 1e-3}\n");
  kl_test_write(dir, "pass.csv", "s_m,offset_m,speed_m_s\n0,0.0006,0.015\n0.04,0.0006,0.015\n");
  static const struct {
    const char *args;
    int rc;
    const char *must;
  } cases[] = {
    {"optimise big.yaml --cpu --out prev --quiet", 2, "big.csv:4: column 'x_m': must be within +-1000 m (the limit; the path is read in metres), got 1e+300"},
    {"evaluate big.yaml --cpu --out prev --quiet", 2, "big.csv:4: column 'x_m': must be within +-1000 m"},
    {"check big.csv", 2, "big.csv:4: column 'x_m': must be within +-1000 m"},
    {"robot @ROBOT --path big.csv --out prev --quiet", 2, "big.csv:4: column 'x_m': must be within +-1000 m"},
    {"optimise rep.yaml --cpu --out prev --quiet", 2, "rep.csv:3: columns x,y,z: the point repeats the previous sample (line 2), as every point does"},
    {"check rep.csv", 2, "rep.csv:3: columns x,y,z: the point repeats the previous sample (line 2)"},
    {"robot @ROBOT --path rep.csv --out prev --quiet", 2, "rep.csv:3: columns x,y,z: the point repeats the previous sample (line 2)"},
    {"bounce --height 1e308 --out prev --quiet", 2, "height: 1e+308 m at 0 m/s gives an impact speed sqrt(v^2 + 2 g h) beyond double precision"},
    {"bounce --height 1e308 --cr 0.5 --out prev --quiet", 2, "bounce: height: 1e+308 m"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const char *at = strstr(cases[i].args, "@ROBOT");
    if (at)
      snprintf(args, sizeof args, "%.*s%s/examples/robot_er10.yaml%s", (int)(at - cases[i].args), cases[i].args,
               KELVIN_SOURCE_DIR, at + 6);
    else
      snprintf(args, sizeof args, "%s", cases[i].args);
    if (strncmp(args, "evaluate", 8) == 0) strcat(args, " --pass pass.csv");
    const int rc = kl_test_kelvin(dir, NULL, args, err, sizeof err);
    printf("# %s -> %d: %s", cases[i].args, rc, err);
    assert_int_equal(rc, cases[i].rc);
    assert_true(one_line(err, cases[i].must));
    assert_int_equal(kl_test_count_files(dir), 5); /* no output folder made */
  }
}

/* ESC and BEL (and the C1 control CSI) in a file name and in names inside files: on stdout and in the
 * messages they arrive as \xNN, never as the bytes */
static void test_terminal(void **state)
{
  (void)state;
  char dir[512], out[16384], exe[1024];
  casedir(dir, sizeof dir, "terminal");
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  const char *cfg = "c\x1b[31m\x07\xc2\x9b" "2J.yaml";
  kl_test_write(dir, cfg, SMALL(41));
  /* the config's name on the summary line */
  char *argv[] = {exe, (char *)"optimise", (char *)cfg, (char *)"--cpu", (char *)"--out", (char *)"o", NULL};
  int rc = kl_test_run(dir, NULL, argv, 1, out, sizeof out);
  printf("# optimise with ESC/BEL/CSI in the config's name -> %d: %.*s\n", rc, (int)strcspn(out, "\n"), out);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "kelvin optimise: c\\x1b[31m\\x07\\xc2\\x9b2J.yaml, path "));
  for (const unsigned char *p = (const unsigned char *)out; *p; ++p) assert_true(*p >= 0x20 || *p == '\n');
  assert_null(strstr(out, "\xc2\x9b"));
  /* the same name in a message the program writes (kl_cli_error), and in one the library writes */
  char *argv2[] = {exe, (char *)"bounce", (char *)"--height", (char *)cfg, NULL};
  rc = kl_test_run(dir, NULL, argv2, 2, out, sizeof out);
  printf("# --height with ESC/BEL/CSI -> %d: %s", rc, out);
  assert_int_equal(rc, 2);
  assert_true(one_line(out, "--height: must be a finite number, got 'c\\x1b[31m\\x07\\xc2\\x9b2J.yaml'"));
  kl_test_write(dir, "b\x1b]0;x\x07.yaml", "tool:\n  colour: red\n");
  char *argv3[] = {exe, (char *)"optimise", (char *)"b\x1b]0;x\x07.yaml", (char *)"--out", (char *)"o", NULL};
  rc = kl_test_run(dir, NULL, argv3, 2, out, sizeof out);
  printf("# a bad key in a config named with ESC/BEL -> %d: %s", rc, out);
  assert_int_equal(rc, 2);
  assert_true(one_line(out, "tool.colour: unknown key"));
  for (const unsigned char *p = (const unsigned char *)out; *p; ++p) assert_true(*p >= 0x20 || *p == '\n');
  /* the scene's name on kelvin simulate's first line */
  const char *scene = "s\x1b[2J\x07.yaml";
  kl_test_write(dir, scene, "duration: 0.01\nbodies:\n  - name: ground\n    type: static\n    shapes: [{type: plane}]\n"
                            "  - name: ball\n    position: [0, 0, 0.2]\n    shapes: [{type: sphere, radius: 0.1}]\n");
  char *argv5[] = {exe, (char *)"simulate", (char *)scene, (char *)"--out", (char *)"s", NULL};
  rc = kl_test_run(dir, NULL, argv5, 1, out, sizeof out);
  printf("# simulate a scene named with ESC/BEL -> %d: %.*s\n", rc, (int)strcspn(out, "\n"), out);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "kelvin simulate s\\x1b[2J\\x07.yaml: 0.01 s at output step"));
  for (const unsigned char *p = (const unsigned char *)out; *p; ++p) assert_true(*p >= 0x20 || *p == '\n');
  /* a name inside a file: a robot named with ESC, BEL and CSI (YAML escapes) on kelvin robot's first line */
  kl_test_write(dir, "r.yaml", "robot:\n  name: \"arm\\e]2;owned\\a\\x9b2J\"\n  convention: dh\n  joints:\n"
                               "    - {a: 0, alpha_deg: 90, d: 0.4, limits_deg: [-170, 170], speed_deg_s: 200, mass: 10, "
                               "com: [0, 0, 0], inertia: [0.1, 0.1, 0.1, 0, 0, 0]}\n");
  char *argv4[] = {exe, (char *)"robot", (char *)"r.yaml", (char *)"--out", (char *)"r", NULL};
  rc = kl_test_run(dir, NULL, argv4, 1, out, sizeof out);
  printf("# robot named with ESC/BEL/CSI -> %d: %.*s\n", rc, (int)strcspn(out, "\n"), out);
  assert_non_null(strstr(out, "kelvin robot: arm\\x1b]2;owned\\x07\\xc2\\x9b2J, "));
  for (const unsigned char *p = (const unsigned char *)out; *p; ++p) assert_true(*p >= 0x20 || *p == '\n');
  assert_null(strstr(out, "\xc2\x9b"));
}

static int setup(void **state)
{
  (void)state;
  snprintf(tmp, sizeof tmp, "/tmp/kl_cli_outdir_XXXXXX");
  assert_non_null(mkdtemp(tmp));
  assert_int_equal(chdir(tmp), 0);
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  assert_int_equal(chdir("/"), 0);
  kl_test_rmtree(tmp);
  return 0;
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_lock),         cmocka_unit_test(test_concurrent),
                                     cmocka_unit_test(test_target_in_the_way), cmocka_unit_test(test_sigpipe),
                                     cmocka_unit_test(test_stderr_closed),
                                     cmocka_unit_test(test_robot_stale_figure), cmocka_unit_test(test_messages),
                                     cmocka_unit_test(test_terminal)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
