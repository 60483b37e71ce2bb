/* cli/cli.h: what every `kelvin` subcommand shares: strict option values, messages, the output
 * folder and atomic file writes, figures through gnuplot. Only the CLI prints; library code returns
 * a status and a message (docs/style.md section 6). */
#ifndef KL_CLI_H
#define KL_CLI_H
#include <stdio.h>
#include <stddef.h>

/* Exit statuses (docs/design.md section 8) */
#define KL_EXIT_OK 0
#define KL_EXIT_RUNTIME 1
#define KL_EXIT_USAGE 2

/* Global flags every subcommand accepts */
typedef struct kl_cli_common {
  const char *out;     /* --out DIR (default per command) */
  int quiet;           /* --quiet: no progress, no summary table */
  int cpu;             /* --cpu: force the OpenMP path */
  const char *device;  /* --device SPEC */
  unsigned long seed;  /* --seed N */
} kl_cli_common;

/* "kelvin: <message>" on stderr. */
void kl_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "kelvin: <message>" on stderr unless quiet (progress, notices). */
void kl_cli_note(const kl_cli_common *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print text on f with every control character but the newline (DEL, and the C1 controls U+0080..U+009F
 * and malformed UTF-8 bytes too) written as \xNN, so that a name or file name read from a user's file
 * cannot send escape sequences to the terminal. kl_cli_error and kl_cli_note escape the same way (line
 * breaks and tabs there become blanks: a message is one line). */
void kl_cli_puts_safe(FILE *f, const char *text);

/* Parse a finite double from the whole of s; on failure print "OPTION: must be a number, got 's'"
 * and return -1. */
int kl_cli_double(const char *opt, const char *s, double *out);
/* Parse an integer in [lo, hi] from the whole of s. */
int kl_cli_long(const char *opt, const char *s, long lo, long hi, long *out);
/* Parse a comma-separated list of finite doubles (at most cap) into out; sets *n. */
int kl_cli_double_list(const char *opt, const char *s, double *out, int cap, int *n);
/* Index of s in the NULL-terminated list names, or -1 with a message listing the choices. */
int kl_cli_choice(const char *opt, const char *s, const char *const *names);

/* Create the output folder (and parents) if needed; 0 on success, -1 with a message. */
int kl_cli_mkdir(const char *dir);

/* One output transaction per run (all or nothing). kl_run_begin creates the output folder, takes its lock
 * (".kelvin.lock", flock, holding the run's pid: a second run into the same folder stops at once with a
 * message naming the folder and the first run's pid, exit 1), creates inside it a staging folder
 * ".kelvin.tmp.<pid>", and arms SIGINT/SIGTERM/SIGHUP/SIGPIPE; every output is then written into the
 * staging folder (kl_out_open ... kl_out_commit, which closes it and detects write and close errors such as
 * a full disk); kl_run_commit checks every target first (a folder in the way, another file system, a
 * sticky folder's file of another user) and only then renames all of them into place at the end of a
 * successful run (a rename that fails all the same is undone with those before it: the folder stays whole). Until then the folder of an earlier run is untouched; kl_run_abort (called by main after
 * every command, and by the signal handler) removes the temporaries, the staging folder, the lock and, if
 * this run created the output folder and left it empty, the output folder. */
int kl_run_begin(const char *dir);
int kl_run_commit(void);  /* 0, or -1 with one message (the run's temporaries are then removed) */
void kl_run_abort(void);
/* An earlier run's dir/name that this run does not write (a figure it does not draw): removed by
 * kl_run_commit with the renames, so that no stale output stays beside the new ones. 0, or -1 (message). */
int kl_out_remove(const char *dir, const char *name);

typedef struct kl_out {
  FILE *f;
  char path[4096];
  char tmp[4200];
  int slot; /* in the run's list of temporaries */
} kl_out;
int kl_out_open(kl_out *o, const char *dir, const char *name);
int kl_out_commit(kl_out *o); /* fflush + fclose, errors checked; the file waits for kl_run_commit */
void kl_out_abort(kl_out *o); /* fclose + unlink; safe on an unopened kl_out */
/* An output that a library writer fills (kelvin_impact_batch_write, itself atomic): kl_out_open, then the
 * stream closed unused; the writer writes o->tmp; kl_out_adopt then takes the file as kl_out_commit would
 * (kl_out_abort if the writer failed). 0, or -1 with a message. */
int kl_out_reserve(kl_out *o, const char *dir, const char *name);
int kl_out_adopt(kl_out *o);

/* A JSON document (cJSON) into dir/name through kl_out; the document is freed. 0 or -1 (message). */
struct cJSON;
int kl_json_write(const char *dir, const char *name, struct cJSON *doc);

/* The metadata every JSON report carries: "kelvin_version", "command" (the whole command line) and,
 * when cfgfile is given, "config" (its name) and "config_fnv1a64" (a 64-bit FNV-1a hash of its bytes,
 * hex). Call kl_cli_set_argv from main first. */
void kl_cli_set_argv(int argc, char **argv);
void kl_json_meta(struct cJSON *doc, const char *cfgfile);

/* Run gnuplot on a script (written next to the figure as <png>.gp) to make <dir>/<png>. gnuplot is
 * started without a shell, in dir, and fed the script through a pipe; user text inside the script must
 * go through kl_gp_str. Returns 0 on
 * success, 1 if gnuplot is missing (a notice, not an error), -1 on failure. The script is kept so the
 * user can restyle the figure. */
int kl_cli_gnuplot(const kl_cli_common *c, const char *dir, const char *png, const char *script);

/* A gnuplot string literal for user text s (a name, a title, a file name): single-quoted, quotes
 * doubled, control characters replaced by '?', so that no text from data can run as gnuplot code
 * (no backquote or macro substitution happens inside single quotes). Always terminated and closed. */
void kl_gp_str(char *buf, size_t cap, const char *s);

/* Write user text s as one CSV field (RFC 4180): as it is, or in double quotes with quotes doubled when
 * it holds a comma, a quote, a line break or blanks at either end. */
void kl_csv_field(FILE *f, const char *s);

/* Runs across MPI ranks (a build with -DKELVIN_MPI=ON; docs/design.md section 11; main.c sets the run's
 * group up under an MPI launcher). kl_cli_set_shard: the run's group (copied; NULL or a group of one:
 * none); on a rank > 0, stdout goes to /dev/null, kl_cli_note prints nothing and kl_cli_error keeps its
 * message (kl_cli_rank_msg, the last one) for main to print if that rank's failure alone ends the job.
 * kl_cli_shard: the group (NULL when not under MPI, or a group of one), kl_cli_rank: this process's rank
 * (0 then). Give the shard to the device before kelvin_device_open; only rank 0 writes outputs. */
struct kelvin_shard;
void kl_cli_set_shard(const struct kelvin_shard *sh);
const struct kelvin_shard *kl_cli_shard(void);
int kl_cli_rank(void);
const char *kl_cli_rank_msg(void);

/* Join dir and name into buf. */
void kl_cli_path(char *buf, size_t cap, const char *dir, const char *name);

#endif
