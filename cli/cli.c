/* cli/cli.c: shared CLI helpers (see cli.h). */
#include "cli.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kelvin/kelvin.h>
#include <kelvin/shard.h>

/* The length of the UTF-8 sequence at p that a terminal shows as a printable character: 1 for a printable
 * ASCII byte, 2 to 4 for a well-formed multi-byte character other than the C1 controls U+0080..U+009F
 * (which some terminals obey as escape sequences); 0 for anything else (a control character, a stray or
 * malformed byte), which the callers write as \xNN. */
static int printable(const unsigned char *p)
{
  if (*p < 0x80) return *p >= 0x20 && *p != 0x7f;
  const int n = *p >= 0xc2 && *p <= 0xdf ? 2 : *p >= 0xe0 && *p <= 0xef ? 3 : *p >= 0xf0 && *p <= 0xf4 ? 4 : 0;
  for (int i = 1; i < n; ++i)
    if ((p[i] & 0xc0) != 0x80) return 0;
  if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) return 0; /* C1 control */
  return n;
}

/* text with every control character escaped as \xNN (see printable); blank: line breaks and tabs become
 * blanks (a message stays one line) instead of being escaped, newline_ok: the newline stays */
static void escape(char *out, size_t cap, const char *text, int blank, int newline_ok)
{
  size_t k = 0;
  for (const unsigned char *p = (const unsigned char *)text; *p && k + 5 < cap;) {
    const int n = printable(p);
    if (n > 0) {
      if (k + (size_t)n + 1 >= cap) break;
      memcpy(out + k, p, (size_t)n);
      k += (size_t)n, p += n;
    } else if ((newline_ok && *p == '\n') || (blank && (*p == '\n' || *p == '\r' || *p == '\t'))) {
      out[k++] = *p == '\n' && newline_ok ? '\n' : ' ';
      ++p;
    } else {
      k += (size_t)snprintf(out + k, cap - k, "\\x%02x", *p++);
    }
  }
  out[k] = '\0';
}

/* "kelvin: <message>\n" on stderr: one line, control characters escaped (a file name or a name read from
 * a file cannot send escape sequences to the terminal) */
static void say(const char *fmt, va_list ap)
{
  char text[8192], safe[4 * sizeof text + 1];
  vsnprintf(text, sizeof text, fmt, ap);
  escape(safe, sizeof safe, text, 1, 0);
  fprintf(stderr, "kelvin: %s\n", safe);
}

void kl_cli_puts_safe(FILE *f, const char *text)
{
  char safe[4 * 1024 + 1];
  size_t n = strlen(text);
  for (size_t at = 0; at < n;) { /* in pieces, each cut at a character's start */
    size_t take = n - at < 1024 ? n - at : 1024;
    while (take < n - at && take > 0 && ((unsigned char)text[at + take] & 0xc0) == 0x80) --take;
    if (take == 0) take = 1;
    char piece[1025];
    memcpy(piece, text + at, take);
    piece[take] = '\0';
    escape(safe, sizeof safe, piece, 0, 1);
    fputs(safe, f);
    at += take;
  }
}

//------- runs across MPI ranks (docs/design.md section 11) -------

static kelvin_shard cli_shard;  /* this run's group (size 0: none) */
static char rank_msg[1024];     /* a rank > 0's last error, printed only if the job fails by it alone */

const kelvin_shard *kl_cli_shard(void) { return cli_shard.size > 1 ? &cli_shard : NULL; }

int kl_cli_rank(void) { return cli_shard.size > 1 ? cli_shard.rank : 0; }

void kl_cli_set_shard(const kelvin_shard *sh)
{
  if (sh && sh->size > 1)
    cli_shard = *sh;
  else
    memset(&cli_shard, 0, sizeof cli_shard);
  /* progress, notices, tables and outputs come from rank 0 (kl_cli_note, kl_cli_error, the commands) */
  if (kl_cli_rank() > 0 && !freopen("/dev/null", "w", stdout)) clearerr(stdout);
}

const char *kl_cli_rank_msg(void) { return rank_msg; }

void kl_cli_error(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  if (kl_cli_rank() > 0) { /* kept: main prints it if this rank's failure alone ends the job */
    char text[sizeof rank_msg];
    vsnprintf(text, sizeof text, fmt, ap);
    escape(rank_msg, sizeof rank_msg, text, 1, 0);
  } else {
    say(fmt, ap);
  }
  va_end(ap);
}

void kl_cli_note(const kl_cli_common *c, const char *fmt, ...)
{
  if ((c && c->quiet) || kl_cli_rank() > 0) return;
  va_list ap;
  va_start(ap, fmt);
  say(fmt, ap);
  va_end(ap);
}

int kl_cli_double(const char *opt, const char *s, double *out)
{
  char *end = NULL;
  errno = 0;
  const double v = strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) {
    kl_cli_error("%s: must be a finite number, got '%s'", opt, s);
    return -1;
  }
  *out = v;
  return 0;
}

int kl_cli_long(const char *opt, const char *s, long lo, long hi, long *out)
{
  char *end = NULL;
  errno = 0;
  const long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
    kl_cli_error("%s: must be a whole number in [%ld, %ld], got '%s'", opt, lo, hi, s);
    return -1;
  }
  *out = v;
  return 0;
}

int kl_cli_double_list(const char *opt, const char *s, double *out, int cap, int *n)
{
  *n = 0;
  const char *p = s;
  char item[128];
  while (1) {
    const char *comma = strchr(p, ',');
    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 0 || len >= sizeof item) {
      kl_cli_error("%s: expected a comma-separated list of numbers, got '%s'", opt, s);
      return -1;
    }
    if (*n >= cap) {
      kl_cli_error("%s: at most %d values, got more in '%s'", opt, cap, s);
      return -1;
    }
    memcpy(item, p, len);
    item[len] = '\0';
    if (kl_cli_double(opt, item, &out[*n]) != 0) return -1;
    ++*n;
    if (!comma) break;
    p = comma + 1;
  }
  return 0;
}

int kl_cli_choice(const char *opt, const char *s, const char *const *names)
{
  for (int i = 0; names[i]; ++i)
    if (strcmp(s, names[i]) == 0) return i;
  char list[512] = "";
  for (int i = 0; names[i]; ++i) {
    if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
    strncat(list, names[i], sizeof list - strlen(list) - 1);
  }
  kl_cli_error("%s: must be one of %s, got '%s'", opt, list, s);
  return -1;
}

void kl_cli_path(char *buf, size_t cap, const char *dir, const char *name)
{
  snprintf(buf, cap, "%s/%s", dir, name);
}

int kl_cli_mkdir(const char *dir)
{
  char buf[4096];
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
    kl_cli_error("--out: path too long: '%s'", dir);
    return -1;
  }
  for (char *p = buf + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
      kl_cli_error("cannot create folder '%s': %s", buf, strerror(errno));
      return -1;
    }
    *p = '/';
  }
  if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
    kl_cli_error("cannot create folder '%s': %s", buf, strerror(errno));
    return -1;
  }
  struct stat st;
  if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
    kl_cli_error("'%s' exists and is not a folder", buf);
    return -1;
  }
  return 0;
}

//------- the run's output transaction -------

#define MAXTMP 4096 /* outputs of one run */

/* The run's temporaries and their final names (and, run_del, final names to remove: kl_out_remove). The
 * signal handler reads tmp[] only: entries are written before the count that publishes them grows. */
static char *run_tmp[MAXTMP], *run_final[MAXTMP];
static volatile sig_atomic_t run_n, run_ready[MAXTMP], run_del[MAXTMP];
static char run_dir[4096], run_stage[4200]; /* the output folder, and the staging folder inside it */
static char run_lock[4200];                 /* the output folder's lock file, while this run holds it */
static volatile sig_atomic_t run_created, run_lockfd = -1;

/* SIGINT/SIGTERM/SIGHUP/SIGPIPE: remove every temporary and the lock (unlink is async-signal-safe), say so
 * in one line, and end with the signal's own status. Outside a run (before it, or after its commit) there
 * is nothing to remove and nothing is said. */
static void on_signal(int sig)
{
  const int active = run_stage[0] != '\0';
  for (sig_atomic_t i = 0; i < run_n; ++i)
    if (run_tmp[i]) unlink(run_tmp[i]);
  if (run_stage[0]) rmdir(run_stage);
  if (run_lockfd >= 0) unlink(run_lock);
  if (run_created) rmdir(run_dir);
  static const char line[] = "kelvin: interrupted: no output written (temporaries removed)\n";
  static const char pipe_line[] = "kelvin: a pipe closed (SIGPIPE): no output written (temporaries removed)\n";
  if (active) {
    ssize_t w = sig == SIGPIPE ? write(2, pipe_line, sizeof pipe_line - 1) : write(2, line, sizeof line - 1);
    (void)w; /* (stderr itself may be the closed pipe) */
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

/* block the signals while the list changes */
static void hold(sigset_t *old)
{
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGHUP);
  sigaddset(&s, SIGPIPE);
  sigprocmask(SIG_BLOCK, &s, old);
}

/* The output folder's lock: ".kelvin.lock" in it, held with flock for the whole run and holding the pid.
 * The holder removes the file before it lets go, so a run that opened the old file and then gets its lock
 * finds the name gone (or another file under it) and tries again. 0, or -1 with one message. */
static int lock_take(const char *dir)
{
  if (snprintf(run_lock, sizeof run_lock, "%s/.kelvin.lock", dir) >= (int)sizeof run_lock) {
    kl_cli_error("--out: path too long: '%s'", dir);
    run_lock[0] = '\0';
    return -1;
  }
  for (int tries = 0; tries < 100; ++tries) {
    const int fd = open(run_lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0) {
      kl_cli_error("cannot write in '%s': %s", dir, strerror(errno));
      break;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      char pid[32] = "";
      for (int k = 0; e == EWOULDBLOCK && k < 100 && !pid[0]; ++k) { /* the holder writes it just after locking */
        if (k) nanosleep(&(struct timespec){0, 2000000}, NULL);
        const ssize_t r = pread(fd, pid, sizeof pid - 1, 0);
        pid[r > 0 ? r : 0] = '\0';
        pid[r > 0 && pid[r - 1] == '\n' ? strspn(pid, "0123456789") : 0] = '\0';
      }
      close(fd);
      if (e != EWOULDBLOCK)
        kl_cli_error("cannot lock '%s': %s", run_lock, strerror(e));
      else if (pid[0])
        kl_cli_error("'%s' is in use by another kelvin run (pid %s); wait for it to end or give another --out", dir,
                     pid);
      else
        kl_cli_error("'%s' is in use by another kelvin run; wait for it to end or give another --out", dir);
      break;
    }
    struct stat a, b;
    if (fstat(fd, &a) == 0 && stat(run_lock, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
      char pid[32];
      const int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
      if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
        kl_cli_error("cannot write '%s': %s", run_lock, strerror(errno));
        unlink(run_lock);
        close(fd);
        break;
      }
      run_lockfd = fd;
      return 0;
    }
    close(fd); /* the run that held it removed it meanwhile: again, on the file that is there now */
  }
  run_lock[0] = '\0';
  return -1;
}

int kl_run_begin(const char *dir)
{
  struct stat sb;
  run_created = stat(dir, &sb) != 0;
  if (kl_cli_mkdir(dir) != 0) return -1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  sigaction(SIGPIPE, &sa, NULL); /* a closed pipe on stdout or stderr: as an interrupt, nothing left behind */
  signal(SIGXFSZ, SIG_IGN);      /* a file-size limit is a write error to report, not a silent death */
  sigset_t old;
  hold(&old);
  snprintf(run_dir, sizeof run_dir, "%s", dir);
  int rc = lock_take(dir);
  /* everything is written into a staging folder inside the output folder (same file system: the
   * final renames are atomic; figures read their data files there by their final names) */
  if (rc == 0) {
    snprintf(run_stage, sizeof run_stage, "%s/.kelvin.tmp.%ld", dir, (long)getpid());
    if (mkdir(run_stage, 0777) != 0) {
      kl_cli_error("cannot write in '%s': %s", dir, strerror(errno));
      run_stage[0] = '\0';
      rc = -1;
    }
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) kl_run_abort();
  return rc;
}

void kl_run_abort(void)
{
  sigset_t old;
  hold(&old);
  for (sig_atomic_t i = 0; i < run_n; ++i) {
    if (run_tmp[i]) unlink(run_tmp[i]);
    free(run_tmp[i]);
    free(run_final[i]);
    run_tmp[i] = run_final[i] = NULL;
    run_del[i] = 0;
  }
  run_n = 0;
  if (run_stage[0]) rmdir(run_stage);
  run_stage[0] = '\0';
  if (run_lockfd >= 0) { /* the name goes before the lock: see lock_take */
    unlink(run_lock);
    close(run_lockfd);
    run_lockfd = -1;
  }
  run_lock[0] = '\0';
  if (run_created && run_dir[0]) rmdir(run_dir); /* only if this run made it and it is empty */
  run_created = 0;
  run_dir[0] = '\0';
  sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Every target of the commit checked before the first rename, so that what rename could refuse is found
 * while the earlier folder is still whole: a folder (or anything but a file or a link) under the name, a
 * name on another file system (a mount point), or, in a sticky folder, a file that another user owns.
 * 0, or -1 with one message. */
static int commit_check(void)
{
  struct stat ds;
  if (stat(run_dir, &ds) != 0) {
    kl_cli_error("cannot write in '%s': %s", run_dir, strerror(errno));
    return -1;
  }
  for (sig_atomic_t i = 0; i < run_n; ++i) {
    if (!run_tmp[i] && !run_del[i]) continue;
    struct stat ts;
    if (lstat(run_final[i], &ts) != 0) {
      if (errno == ENOENT) continue;
      kl_cli_error("cannot replace '%s': %s; '%s' is as it was", run_final[i], strerror(errno), run_dir);
      return -1;
    }
    const char *why = S_ISDIR(ts.st_mode)                          ? "it is a folder"
                      : !S_ISREG(ts.st_mode) && !S_ISLNK(ts.st_mode) ? "it is not a regular file"
                      : ts.st_dev != ds.st_dev                     ? "it is on another file system"
                      : (ds.st_mode & S_ISVTX) && geteuid() != 0 && ts.st_uid != geteuid() && ds.st_uid != geteuid()
                          ? "it belongs to another user in a sticky folder"
                          : NULL;
    if (why) {
      kl_cli_error("cannot replace '%s': %s; no output written, '%s' is as it was", run_final[i], why, run_dir);
      return -1;
    }
  }
  return 0;
}

int kl_run_commit(void)
{
  for (sig_atomic_t i = 0; i < run_n; ++i)
    if (run_tmp[i] && !run_ready[i]) {
      kl_cli_error("internal: output '%s' was never finished", run_final[i]);
      kl_run_abort();
      return -1;
    }
  sigset_t old;
  hold(&old);
  int rc = commit_check();
  /* A rename can fail all the same (a mount point on the name, an I/O error): each earlier file is first
   * hard-linked into the staging folder as .old.N and a removal (kl_out_remove) is a rename there, so that
   * the renames done can be undone and the folder is left as it was. (Where the file system has no hard
   * links, the earlier file cannot be kept: the rename goes ahead without it, and a later failure says that
   * the folder holds part of this run's outputs.) */
  /* 1 replaced (kept as .old.N), 2 new, 3 removed (kept), 4 replaced (the earlier file could not be kept) */
  unsigned char *done = calloc((size_t)run_n + 1, 1);
  if (!done && rc == 0) {
    kl_cli_error("out of memory");
    rc = -1;
  }
  char bak[4300], why[4600] = "";
  sig_atomic_t i = 0;
  for (; i < run_n && rc == 0; ++i) {
    snprintf(bak, sizeof bak, "%s/.old.%d", run_stage, (int)i);
    if (run_del[i]) {
      if (rename(run_final[i], bak) == 0)
        done[i] = 3;
      else if (errno != ENOENT)
        snprintf(why, sizeof why, "cannot remove the earlier '%s': %s", run_final[i], strerror(errno)), rc = -1;
      continue;
    }
    if (!run_tmp[i]) continue;
    const int kept = link(run_final[i], bak) == 0, none = !kept && errno == ENOENT;
    if (rename(run_tmp[i], run_final[i]) != 0) {
      snprintf(why, sizeof why, "cannot replace '%s': %s", run_final[i], strerror(errno));
      if (kept) unlink(bak);
      rc = -1;
      break;
    }
    done[i] = kept ? 1 : none ? 2 : 4;
    free(run_tmp[i]);
    run_tmp[i] = NULL;
  }
  int whole = 1;
  for (sig_atomic_t j = 0; done && j < run_n; ++j) {
    snprintf(bak, sizeof bak, "%s/.old.%d", run_stage, (int)j);
    if (rc == 0 && (done[j] == 1 || done[j] == 3)) /* the earlier files are no longer needed */
      unlink(bak);
    else if (rc != 0 && (done[j] == 1 || done[j] == 3)) /* put back */
      whole &= rename(bak, run_final[j]) == 0;
    else if (rc != 0 && done[j] == 2)
      whole &= unlink(run_final[j]) == 0;
    else if (rc != 0 && done[j] == 4)
      whole = 0;
  }
  free(done);
  if (why[0])
    kl_cli_error("%s; %s", why,
                 whole ? "no output written, the earlier files put back"
                       : "the folder holds part of this run's outputs");
  run_created = 0; /* the folder now holds this run's outputs */
  sigprocmask(SIG_SETMASK, &old, NULL);
  kl_run_abort();
  return rc;
}

/* register tmp -> final; the slot, or -1 with a message */
static int run_add(const char *tmp, const char *final)
{
  if (run_n >= MAXTMP) {
    kl_cli_error("more than %d output files in one run", MAXTMP);
    return -1;
  }
  char *t = strdup(tmp), *f = strdup(final);
  if (!t || !f) {
    free(t);
    free(f);
    kl_cli_error("out of memory");
    return -1;
  }
  sigset_t old;
  hold(&old);
  const int k = (int)run_n;
  run_tmp[k] = t;
  run_final[k] = f;
  run_ready[k] = 0;
  run_del[k] = 0;
  run_n = k + 1;
  sigprocmask(SIG_SETMASK, &old, NULL);
  return k;
}

/* forget slot k's temporary after removing it */
static void run_drop(int k)
{
  if (k < 0 || k >= run_n || !run_tmp[k]) return;
  sigset_t old;
  hold(&old);
  unlink(run_tmp[k]);
  free(run_tmp[k]);
  run_tmp[k] = NULL;
  sigprocmask(SIG_SETMASK, &old, NULL);
}

int kl_out_remove(const char *dir, const char *name)
{
  char path[4096];
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
    kl_cli_error("output path too long: '%s/%s'", dir, name);
    return -1;
  }
  if (!run_stage[0] || strcmp(dir, run_dir) != 0) return 0; /* outside a run: nothing is replaced either */
  if (run_n >= MAXTMP) {
    kl_cli_error("more than %d output files in one run", MAXTMP);
    return -1;
  }
  char *f = strdup(path);
  if (!f) {
    kl_cli_error("out of memory");
    return -1;
  }
  sigset_t old;
  hold(&old);
  const int k = (int)run_n;
  run_tmp[k] = NULL;
  run_final[k] = f;
  run_ready[k] = 1;
  run_del[k] = 1;
  run_n = k + 1;
  sigprocmask(SIG_SETMASK, &old, NULL);
  return 0;
}

/* the temporary for dir/name: in the staging folder during a run, else "<path>.tmp.<pid>" */
static int temp_for(const char *dir, const char *name, const char *path, char *tmp, size_t cap)
{
  const int n = run_stage[0] && strcmp(dir, run_dir) == 0 ? snprintf(tmp, cap, "%s/%s", run_stage, name)
                                                          : snprintf(tmp, cap, "%s.tmp.%ld", path, (long)getpid());
  return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int kl_out_open(kl_out *o, const char *dir, const char *name)
{
  o->f = NULL;
  o->tmp[0] = '\0';
  o->slot = -1;
  kl_cli_path(o->path, sizeof o->path, dir, name);
  if (temp_for(dir, name, o->path, o->tmp, sizeof o->tmp) != 0) {
    kl_cli_error("output path too long: '%s/%s'", dir, name);
    o->tmp[0] = '\0';
    return -1;
  }
  if ((o->slot = run_add(o->tmp, o->path)) < 0) {
    o->tmp[0] = '\0';
    return -1;
  }
  o->f = fopen(o->tmp, "w");
  if (!o->f) {
    kl_cli_error("cannot write '%s': %s", o->path, strerror(errno));
    run_drop(o->slot);
    o->tmp[0] = '\0';
    return -1;
  }
  return 0;
}

/* outside a run (a benchmark's figure): the file goes into place at once */
static int settle(int slot)
{
  run_ready[slot] = 1;
  if (run_stage[0]) return 0;
  if (rename(run_tmp[slot], run_final[slot]) != 0) {
    kl_cli_error("cannot rename '%s' to '%s': %s", run_tmp[slot], run_final[slot], strerror(errno));
    run_drop(slot);
    return -1;
  }
  free(run_tmp[slot]);
  run_tmp[slot] = NULL;
  return 0;
}

int kl_out_commit(kl_out *o)
{
  if (!o->f) return -1;
  errno = 0;
  const int bad = fflush(o->f) != 0 || ferror(o->f);
  const int e1 = errno;
  errno = 0;
  const int cl = fclose(o->f);
  const int e2 = errno;
  o->f = NULL;
  if (bad || cl != 0) {
    kl_cli_error("cannot write '%s': %s", o->path, strerror(e1 ? e1 : e2 ? e2 : EIO));
    run_drop(o->slot);
    o->tmp[0] = '\0';
    return -1;
  }
  o->tmp[0] = '\0';
  return settle(o->slot);
}

int kl_out_reserve(kl_out *o, const char *dir, const char *name)
{
  if (kl_out_open(o, dir, name) != 0) return -1;
  if (fclose(o->f) != 0) {
    o->f = NULL;
    kl_cli_error("cannot write '%s': %s", o->path, strerror(errno));
    kl_out_abort(o);
    return -1;
  }
  o->f = NULL;
  return 0;
}

int kl_out_adopt(kl_out *o)
{
  if (o->f || !o->tmp[0]) return -1;
  o->tmp[0] = '\0';
  return settle(o->slot);
}

void kl_out_abort(kl_out *o)
{
  if (o->f) fclose(o->f);
  o->f = NULL;
  if (o->tmp[0]) run_drop(o->slot);
  o->tmp[0] = '\0';
}

//------- JSON reports -------

static int meta_argc;
static char **meta_argv;

void kl_cli_set_argv(int argc, char **argv)
{
  meta_argc = argc;
  meta_argv = argv;
}

void kl_json_meta(cJSON *doc, const char *cfgfile)
{
  cJSON_AddStringToObject(doc, "kelvin_version", kelvin_version());
  size_t len = 1;
  for (int i = 0; i < meta_argc; ++i) len += strlen(meta_argv[i]) + 1;
  char *cmd = malloc(len);
  if (cmd) {
    cmd[0] = '\0';
    for (int i = 0; i < meta_argc; ++i) {
      if (i) strcat(cmd, " ");
      strcat(cmd, meta_argv[i]);
    }
    cJSON_AddStringToObject(doc, "command_line", cmd);
    free(cmd);
  }
  if (!cfgfile) return;
  cJSON_AddStringToObject(doc, "config", cfgfile);
  /* opened without blocking and hashed only when a regular file (the readers checked it, but a FIFO swapped
   * in since would hang here; docs/design.md section 8.1) */
  const int fd = open(cfgfile, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat sb;
  if (fd < 0) return;
  FILE *f = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? fdopen(fd, "rb") : NULL;
  if (!f) {
    close(fd);
    return;
  }
  unsigned long long h = 1469598103934665603ULL; /* FNV-1a, 64 bits */
  int ch;
  while ((ch = fgetc(f)) != EOF) {
    h ^= (unsigned char)ch;
    h *= 1099511628211ULL;
  }
  fclose(f);
  char hex[32];
  snprintf(hex, sizeof hex, "%016llx", h);
  cJSON_AddStringToObject(doc, "config_fnv1a64", hex);
}

int kl_json_write(const char *dir, const char *name, cJSON *doc)
{
  char *text = doc ? cJSON_Print(doc) : NULL;
  cJSON_Delete(doc);
  if (!text) {
    kl_cli_error("out of memory writing %s/%s", dir, name);
    return -1;
  }
  kl_out o;
  if (kl_out_open(&o, dir, name) != 0) {
    free(text);
    return -1;
  }
  fputs(text, o.f);
  fputc('\n', o.f);
  free(text);
  return kl_out_commit(&o);
}

void kl_csv_field(FILE *f, const char *s)
{
  const size_t n = strlen(s);
  const int q = strpbrk(s, ",\"\r\n") != NULL || n == 0 || s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t';
  if (!q) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (const char *p = s; *p; ++p) {
    if (*p == '"') fputc('"', f);
    fputc(*p, f);
  }
  fputc('"', f);
}

void kl_gp_str(char *buf, size_t cap, const char *s)
{
  /* gnuplot runs no command substitution and no macro inside single quotes, and a doubled quote is a
   * quote; a newline would end the command, so control characters become '?'. Bytes >= 0x80 (UTF-8)
   * pass through. Truncated, the literal stays closed. */
  if (cap < 3) {
    if (cap) buf[0] = '\0';
    return;
  }
  size_t n = 0;
  buf[n++] = '\'';
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && n + 3 < cap; ++p) {
    if (*p == '\'') {
      buf[n++] = '\'';
      buf[n++] = '\'';
    } else {
      buf[n++] = (*p < 0x20 || *p == 0x7f) ? '?' : (char)*p;
    }
  }
  buf[n++] = '\'';
  buf[n] = '\0';
}

/* Write all of text to fd while draining out into log (so a chatty child cannot block on a full pipe);
 * then read out to its end. log keeps the first cap - 1 bytes. Returns 0, or -1 if the write failed. */
static int pump(int in, const char *text, int out, char *log, size_t cap)
{
  size_t sent = 0, len = strlen(text), got = 0;
  int ok = 0;
  log[0] = '\0';
  while (out >= 0) {
    struct pollfd pf[2] = {{.fd = out, .events = POLLIN}, {.fd = in, .events = POLLOUT}};
    const nfds_t nf = in >= 0 ? 2 : 1;
    if (poll(pf, nf, -1) < 0) {
      if (errno == EINTR) continue;
      ok = -1;
      break;
    }
    if (in >= 0 && (pf[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t w = (pf[1].revents & POLLOUT) ? write(in, text + sent, len - sent) : -1;
      if (w < 0 && errno != EINTR && errno != EAGAIN) {
        ok = -1; /* the child closed its input early; its exit status tells */
        close(in);
        in = -1;
      } else if (w > 0 && (sent += (size_t)w) == len) {
        close(in);
        in = -1;
      }
    }
    if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char chunk[1024];
      const ssize_t r = read(out, chunk, sizeof chunk);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        close(out);
        out = -1;
        break;
      }
      const size_t take = got + (size_t)r < cap - 1 ? (size_t)r : cap - 1 - got;
      memcpy(log + got, chunk, take);
      got += take;
      log[got] = '\0';
    }
  }
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  return ok;
}

/* 1 if the file at path is a whole PNG: the signature at its start and the IEND chunk at its end; *size
 * is its size (-1 if it cannot be read) */
static int png_whole(const char *path, long *size)
{
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
  *size = -1;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  unsigned char head[8], tail[12];
  const int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 20 && pread(fd, head, 8, 0) == 8 &&
                 pread(fd, tail, 12, st.st_size - 12) == 12 && memcmp(head, sig, 8) == 0 && memcmp(tail, iend, 12) == 0;
  if (fstat(fd, &st) == 0) *size = (long)st.st_size;
  close(fd);
  return ok;
}

int kl_cli_gnuplot(const kl_cli_common *c, const char *dir, const char *png, const char *script)
{
  char gp[600];
  snprintf(gp, sizeof gp, "%s.gp", png);
  kl_out o;
  if (kl_out_open(&o, dir, gp) != 0) return -1;
  fprintf(o.f, "%s", script);
  if (kl_out_commit(&o) != 0) return -1;

  /* gnuplot is started with an argument vector (no shell), in the folder where the run's files are
   * (the staging folder during a run), and reads the script on its standard input after one line that
   * names the PNG: no user text reaches a shell, and the folder's name never enters the script. */
  const int staged = run_stage[0] && strcmp(dir, run_dir) == 0;
  const char *wd = staged ? run_stage : dir;
  char tmpname[700], tmp[5000], final[4800];
  if (staged)
    snprintf(tmpname, sizeof tmpname, "%s", png);
  else
    snprintf(tmpname, sizeof tmpname, "%s.tmp.%ld", png, (long)getpid());
  if (snprintf(tmp, sizeof tmp, "%s/%s", wd, tmpname) >= (int)sizeof tmp ||
      snprintf(final, sizeof final, "%s/%s", dir, png) >= (int)sizeof final) {
    kl_cli_error("output path too long: '%s/%s'", dir, png);
    return -1;
  }
  const size_t cap = strlen(script) + sizeof tmpname * 2 + 32;
  char *text = malloc(cap);
  if (!text) {
    kl_cli_error("out of memory running gnuplot");
    return -1;
  }
  const int slot = run_add(tmp, final);
  if (slot < 0) {
    free(text);
    return -1;
  }
  char quoted[sizeof tmpname * 2 + 3];
  kl_gp_str(quoted, sizeof quoted, tmpname);
  snprintf(text, cap, "OUTPUT = %s\n%s\n", quoted, script);

  int pin[2] = {-1, -1}, pout[2] = {-1, -1};
  if (pipe2(pin, O_CLOEXEC) != 0 || pipe2(pout, O_CLOEXEC) != 0) {
    kl_cli_error("cannot run gnuplot: %s", strerror(errno));
    free(text);
    run_drop(slot);
    for (int i = 0; i < 2; ++i) {
      if (pin[i] >= 0) close(pin[i]);
      if (pout[i] >= 0) close(pout[i]);
    }
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pin[0], 0);
  posix_spawn_file_actions_adddup2(&fa, pout[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pout[1], 2);
  posix_spawn_file_actions_addchdir_np(&fa, wd);
  char *const args[] = {(char *)"gnuplot", NULL};
  extern char **environ;
  pid_t pid = -1;
  const int err = posix_spawnp(&pid, "gnuplot", &fa, NULL, args, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(pin[0]);
  close(pout[1]);
  if (err != 0) {
    close(pin[1]);
    close(pout[0]);
    free(text);
    run_drop(slot);
    if (err == ENOENT) {
      kl_cli_note(c, "gnuplot not found: figure script left in %s/%s (install gnuplot-nox to draw it)", dir, gp);
      return 1;
    }
    kl_cli_error("cannot run gnuplot: %s", strerror(err));
    return -1;
  }
  void (*old)(int) = signal(SIGPIPE, SIG_IGN); /* gnuplot may stop reading on an error */
  char log[4096];
  pump(pin[1], text, pout[0], log, sizeof log);
  signal(SIGPIPE, old);
  free(text);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || access(tmp, F_OK) != 0) {
    /* one line: gnuplot's last line of complaint names the script line and the problem */
    char *last = NULL;
    for (char *l = strtok(log, "\n"); l; l = strtok(NULL, "\n"))
      if (strspn(l, " \t^") != strlen(l)) last = l;
    kl_cli_error("gnuplot failed on %s/%s, no %s: %s", dir, gp, png, last ? last : "(it printed nothing)");
    run_drop(slot);
    return -1;
  }
  /* gnuplot exits 0 when the PNG could not be written in full (a full disk): the file must end with the
   * PNG end chunk (IEND, its length 0 and its CRC) */
  long size = -1;
  const size_t pl = strlen(png);
  if (pl > 4 && strcmp(png + pl - 4, ".png") == 0 && !png_whole(tmp, &size)) {
    kl_cli_error("cannot write '%s': gnuplot left it incomplete (%ld bytes, no PNG end chunk); is the disk full?",
                 final, size);
    run_drop(slot);
    return -1;
  }
  return settle(slot); /* renamed into place with the run's other outputs */
}
