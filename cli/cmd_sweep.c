/* cli/cmd_sweep.c: `kelvin sweep [config.yaml]`: thousands of impact scenarios evaluated in one
 * batch on the OpenCL device or the OpenMP twin, through the public API (kelvin_sweep, kelvin_device,
 * kelvin_impact_batch: kelvin/batch.h); one CSV row per scenario, a summary table and a figure of
 * effective restitution and peak force against cr and impact speed for each model and damping law
 * (docs/design.md sections 2.3 and 4). Every phase longer than a second reports on stderr. */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <kelvin/batch.h>
#include <kelvin/shard.h>

#include "cli.h"
#include "commands.h"

/* Rows the figure draws at most: a larger sweep is drawn from a sample of its rows (write_figure). */
#define FIG_MAX 20000

/* Monotonic wall time [s]. */
static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

//------- progress -------

/* A phase that reports on stderr: a line at most every `every` seconds (and one at the end if it
 * printed any), with the share done, the time spent and an estimate of the time left. */
typedef struct phase {
  const kl_cli_common *c;
  const char *what; /* "sweep", "sweep: writing sweep.csv" */
  const char *unit; /* "scenarios", "rows" */
  double every, t0, last;
  int printed;
} phase;

static void phase_start(phase *ph, const kl_cli_common *c, double every, const char *what, const char *unit)
{
  *ph = (phase){c, what, unit, every, now(), now(), 0};
}

static void phase_tick(phase *ph, size_t done, size_t total)
{
  if (ph->c->quiet) return;
  const double t = now();
  if (done < total && t - ph->last < ph->every) return;
  if (done == total && !ph->printed) return;
  ph->last = t;
  ph->printed = 1;
  const double el = t - ph->t0;
  const double eta = done ? el * (double)(total - done) / (double)done : 0.0;
  kl_cli_note(ph->c, "%s: %5.1f%% (%zu of %zu %s), %.0f s elapsed, ~%.0f s left", ph->what,
              100.0 * (double)done / (double)total, done, total, ph->unit, el, eta);
}

/* Rows between two progress checks of a writer. */
#define TICK_ROWS 4096

//------- output -------

#define NVARIANT 9
/* Variant of a row: 0-1 kv rules, 2-6 hc laws, 7 ef, 8 general. */
static int variant(kelvin_impact_in in)
{
  if (in.model == KELVIN_MODEL_KV) return (int)in.rule;
  if (in.model == KELVIN_MODEL_HC) return 2 + (int)in.law;
  if (in.model == KELVIN_MODEL_GEN) return 8;
  return 7;
}
static const char *const variant_names[NVARIANT] = {"kv/penetration", "kv/force",          "hc/hunt-crossley",
                                                     "hc/lankarani-nikravesh", "hc/flores", "hc/gonthier",
                                                     "hc/exact",       "ef",        "general"};

/* Peak force of the undamped impact with the same m, K, n, v0: K d0^n with d0^{n+1} = (n+1) m v0^2/(2K)
 * (v0 sqrt(K m) for n = 1): the scale that makes peak forces of different speeds comparable. */
static double undamped_peak(kelvin_impact_in in)
{
  return in.K * pow((in.n + 1.0) * in.m * in.v0 * in.v0 / (2.0 * in.K), in.n / (in.n + 1.0));
}

/* Scenario p's inputs and results. */
static kelvin_impact_in input(const kelvin_impact_batch *b, size_t p)
{
  kelvin_impact_in in;
  kelvin_impact_batch_input(b, p, &in);
  return in;
}
static kelvin_impact_out result(const kelvin_impact_batch *b, size_t p)
{
  kelvin_impact_out out;
  kelvin_impact_batch_get(b, p, &out);
  return out;
}

/* Rows above which a CSV sweep says once that --format hdf5 suits it better (docs/design.md section 8). */
#define CSV_HINT_ROWS 1000000

/* kelvin_impact_batch_write's progress (kelvin_progress_fn): the rows written through the phase; never stops. */
static int write_progress(void *ctx, double fraction, const char *text)
{
  (void)text;
  void **pc = ctx; /* the phase, the batch */
  const size_t P = kelvin_impact_batch_size(pc[1]);
  phase_tick(pc[0], (size_t)(fraction * (double)P + 0.5), P);
  return 0;
}

/* msg with every occurrence of from (the staging folder's path) replaced by to, into buf */
static const char *replace_path(const char *msg, const char *from, const char *to, char *buf, size_t cap)
{
  size_t n = 0;
  const size_t lf = strlen(from);
  buf[0] = '\0';
  for (const char *p = msg; *p && n + 1 < cap;) {
    if (lf && strncmp(p, from, lf) == 0) {
      n += (size_t)snprintf(buf + n, cap - n, "%s", to);
      if (n >= cap) n = cap - 1;
      p += lf;
    } else
      buf[n++] = *p++, buf[n] = '\0';
  }
  return buf;
}

/* sweep.csv or sweep.h5: one row per scenario, inputs, metrics and status, full precision, written by the
 * library's writer (kelvin_impact_batch_write) into the run's staging folder; progress every `every` s. */
static int write_table(const kl_cli_common *c, kelvin_impact_batch *b, int format, double every)
{
  const char *name = format == KELVIN_FORMAT_HDF5 ? "sweep.h5" : "sweep.csv";
  kl_out o, guard;
  /* an earlier run's table in the other format goes with the renames: no stale table stays beside the new one */
  if (kl_out_remove(c->out, format == KELVIN_FORMAT_HDF5 ? "sweep.csv" : "sweep.h5") != 0) return -1;
  if (kl_out_reserve(&o, c->out, name) != 0) return -1;
  /* the writer's own temporary, "<tmp>.tmp.<pid>", registered too, so that a signal removes it with the rest */
  char gname[128];
  snprintf(gname, sizeof gname, "%s.tmp.%ld", name, (long)getpid());
  if (kl_out_reserve(&guard, c->out, gname) != 0) {
    kl_out_abort(&o);
    return -1;
  }
  char what[64];
  snprintf(what, sizeof what, "sweep: writing %s", name);
  phase ph;
  phase_start(&ph, c, every, what, "rows");
  void *pc[2] = {&ph, b};
  if (!c->quiet) kelvin_impact_batch_set_progress(b, write_progress, pc);
  const double t0 = now();
  const kelvin_status st = kelvin_impact_batch_write(b, o.tmp, (kelvin_format)format);
  const double t1 = now();
  kelvin_impact_batch_set_progress(b, NULL, NULL);
  kl_out_abort(&guard); /* renamed onto o.tmp, or removed by the writer: forgotten either way */
  if (st != KELVIN_OK) {
    char buf[2048];
    kl_cli_error("%s", replace_path(kelvin_impact_batch_errmsg(b), o.tmp, o.path, buf, sizeof buf));
    kl_out_abort(&o);
    return -1;
  }
  struct stat sb;
  if (stat(o.tmp, &sb) == 0 && t1 - t0 >= 0.5)
    kl_cli_note(c, "sweep: %s: %.1f MB in %.1f s (%.0f MB/s, %.3g rows/s)", name, (double)sb.st_size * 1e-6, t1 - t0,
                (double)sb.st_size * 1e-6 / (t1 - t0), (double)kelvin_impact_batch_size(b) / (t1 - t0));
  return kl_out_adopt(&o);
}

/* samples.csv: id, j, abscissa (time [s] for kv, phase in [0, 2] otherwise), penetration, force. */
static int write_samples(const kl_cli_common *c, const kelvin_impact_batch *b, double every)
{
  kl_out o;
  if (kl_out_open(&o, c->out, "samples.csv") != 0) return -1;
  fprintf(o.f, "id,j,s,delta,F\n");
  const size_t P = kelvin_impact_batch_size(b);
  const int M = kelvin_impact_batch_nsamples(b);
  phase ph;
  phase_start(&ph, c, every, "sweep: writing samples.csv", "scenarios");
  for (size_t p = 0; p < P; ++p) {
    for (int j = 0; j < M; ++j) {
      double s, d, f;
      kelvin_impact_batch_sample(b, p, j, &s, &d, &f);
      fprintf(o.f, "%zu,%d,%.17g,%.17g,%.17g\n", p, j, s, d, f);
    }
    if ((p + 1) % TICK_ROWS == 0 || p + 1 == P) phase_tick(&ph, p + 1, P);
  }
  return kl_out_commit(&o);
}

/* a row of the figure with its sort keys (the comparator needs no state beside it) */
typedef struct {
  int var;
  double v0, cr;
  size_t p;
} fig_row;

/* Row order for the figure: by variant, then v0, then cr. */
static int by_variant(const void *a, const void *b)
{
  const fig_row *x = a, *y = b;
  if (x->var != y->var) return x->var < y->var ? -1 : 1;
  if (x->v0 != y->v0) return x->v0 < y->v0 ? -1 : 1;
  if (x->cr != y->cr) return x->cr < y->cr ? -1 : 1;
  return 0;
}

/* A number in [0, 1) from row index p (splitmix64): the figure's sample of a large sweep, the same every run. */
static double row_hash(size_t p)
{
  uint64_t z = (uint64_t)p + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

/* figure.dat (one gnuplot block per variant: cr, cr_eff, fpeak/F0, v0, fpeak) and sweep.png:
 * (a) effective vs nominal restitution, (b) peak force over the undamped one against cr, (c) peak force
 * against impact speed at the cr nearest 0.5. Above FIG_MAX rows without a status, the figure draws a
 * sample of about FIG_MAX of them, the same every run (row_hash): the rows on the cr slice of panel (c)
 * (all of them, or a tenth of FIG_MAX) and the others in proportion; a notice says so. Returns
 * kl_cli_gnuplot's code, -1 on write errors. */
static int write_figure(const kl_cli_common *c, const kelvin_impact_batch *b)
{
  const size_t P = kelvin_impact_batch_size(b);
  fig_row *idx = malloc((P ? P : 1) * sizeof *idx);
  if (!idx) {
    kl_cli_error("out of memory drawing the figure");
    return -1;
  }
  size_t nok = 0, nslice = 0;
  double crsel = -1.0;
  for (size_t p = 0; p < P; ++p)
    if (result(b, p).flags == 0) {
      const double cr = input(b, p).cr;
      ++nok;
      if (crsel < 0 || fabs(cr - 0.5) < fabs(crsel - 0.5)) crsel = cr;
    }
  for (size_t p = 0; p < P; ++p) nslice += result(b, p).flags == 0 && input(b, p).cr == crsel;
  /* shares of the slice and of the other rows to keep (1: all) */
  double keep_slice = 1.0, keep_other = 1.0;
  if (nok > FIG_MAX) {
    const size_t bs = nslice < FIG_MAX / 10 ? nslice : FIG_MAX / 10;
    keep_slice = nslice ? (double)bs / (double)nslice : 1.0;
    keep_other = nok > nslice ? (double)(FIG_MAX - bs) / (double)(nok - nslice) : 1.0;
  }
  size_t n = 0, nsl = 0;
  for (size_t p = 0; p < P; ++p) {
    const kelvin_impact_in in = input(b, p);
    if (result(b, p).flags != 0) continue;
    const int on = in.cr == crsel;
    if (row_hash(p) >= (on ? keep_slice : keep_other)) continue;
    idx[n++] = (fig_row){variant(in), in.v0, in.cr, p};
    nsl += on;
  }
  if (n < nok)
    kl_cli_note(c, "sweep: the figure draws a sample of %zu of the %zu scenarios without a status (%zu of the %zu at "
                "c_r = %.3g; all are in the table; --no-plot skips the figure)",
                n, nok, nsl, nslice, crsel);
  qsort(idx, n, sizeof *idx, by_variant);
  kl_out o;
  if (kl_out_open(&o, c->out, "figure.dat") != 0) {
    free(idx);
    return -1;
  }
  fprintf(o.f, "# kelvin sweep: blocks by variant; columns cr cr_eff fpeak/F0 v0 fpeak on_cr_slice\n");
  char titles[512] = "";
  int nblk = 0;
  for (int v = 0; v < NVARIANT; ++v) {
    int any = 0;
    for (size_t i = 0; i < n; ++i) {
      if (idx[i].var != v) continue;
      const size_t p = idx[i].p;
      const kelvin_impact_in in = input(b, p);
      const kelvin_impact_out y = result(b, p);
      if (!any) fprintf(o.f, "%s# %s\n", nblk ? "\n\n" : "", variant_names[v]);
      any = 1;
      fprintf(o.f, "%.10g %.10g %.10g %.10g %.10g %d\n", in.cr, y.cr_eff, y.fpeak / undamped_peak(in), in.v0, y.fpeak,
              in.cr == crsel);
    }
    if (any) {
      strncat(titles, variant_names[v], sizeof titles - strlen(titles) - 2);
      strncat(titles, " ", sizeof titles - strlen(titles) - 1);
      ++nblk;
    }
  }
  free(idx);
  if (kl_out_commit(&o) != 0) return -1;
  if (nblk == 0) {
    kl_cli_note(c, "no scenario without a status: no figure");
    return 1;
  }
  char sample[160] = "";
  if (n < nok)
    snprintf(sample, sizeof sample, " (a sample of %zu of the %zu scenarios without a status; all are in the table)", n,
             nok);
  char script[4096];
  snprintf(script, sizeof script,
           "# kelvin sweep figure; data in figure.dat (one block per model/law)\n"
           "if (!exists('OUTPUT')) OUTPUT = 'sweep.png'\n"
           "set terminal pngcairo size 1800,560 font ',11'\nset output OUTPUT\n"
           "titles = '%s'\nN = %d\n"
           "set multiplot layout 1,3 title 'kelvin sweep: impact metrics by contact model and damping law%s'\n"
           "set key left top font ',9'\nset grid\n"
           "set xlabel 'nominal coefficient of restitution c_r'\nset ylabel 'effective restitution v_{out}/v_0'\n"
           "set title '(a) restitution actually reached (all speeds)'\n"
           "plot for [i=0:N-1] 'figure.dat' index i using 1:2 with points pt 7 ps 0.5 title word(titles, i+1), "
           "x with lines dt 2 lc 'black' title 'c_{r,eff} = c_r'\n"
           "set ylabel 'peak force / undamped peak force'\n"
           "set title '(b) peak force over the undamped impact (all speeds)'\n"
           "plot for [i=0:N-1] 'figure.dat' index i using 1:3 with points pt 7 ps 0.5 title word(titles, i+1)\n"
           "set logscale xy\nset key left top\n"
           "set xlabel 'impact speed v_0 [m/s]'\nset ylabel 'peak force [N]'\n"
           "set title sprintf('(c) peak force against impact speed, c_r = %%.3g', %.17g)\n"
           "plot for [i=0:N-1] 'figure.dat' index i using ($6 == 1 ? $4 : 1/0):5 with linespoints pt 7 ps 0.5 "
           "title word(titles, i+1)\n"
           "unset multiplot\n",
           titles, nblk, sample, crsel);
  if (n >= FIG_MAX / 2) kl_cli_note(c, "sweep: drawing sweep.png from %zu points (gnuplot)", n);
  return kl_cli_gnuplot(c, c->out, "sweep.png", script);
}

/* Summary table on stdout: per variant, rows, flagged rows, and ranges of cr_eff and fpeak/F0. */
static void summary(const kelvin_impact_batch *b)
{
  size_t rows[NVARIANT] = {0}, flagged[NVARIANT] = {0}, other = 0;
  double lo[NVARIANT][2], hi[NVARIANT][2];
  for (int v = 0; v < NVARIANT; ++v) lo[v][0] = lo[v][1] = INFINITY, hi[v][0] = hi[v][1] = -INFINITY;
  const size_t P = kelvin_impact_batch_size(b);
  for (size_t p = 0; p < P; ++p) {
    const kelvin_impact_in in = input(b, p);
    if ((int)in.model < 0 || (int)in.model > KELVIN_MODEL_GEN || (int)in.law < 0 || (int)in.law > KELVIN_LAW_EXACT ||
        (int)in.rule < 0 || (int)in.rule > 1) {
      ++other;
      continue;
    }
    const int v = variant(in);
    ++rows[v];
    const kelvin_impact_out y = result(b, p);
    if (y.flags != 0) {
      ++flagged[v];
      continue;
    }
    const double q[2] = {y.cr_eff, y.fpeak / undamped_peak(in)};
    for (int k = 0; k < 2; ++k) {
      if (q[k] < lo[v][k]) lo[v][k] = q[k];
      if (q[k] > hi[v][k]) hi[v][k] = q[k];
    }
  }
  printf("%-24s %10s %8s %21s %21s\n", "model/law", "scenarios", "flagged", "cr_eff range", "fpeak/F0 range");
  for (int v = 0; v < NVARIANT; ++v) {
    if (!rows[v]) continue;
    if (flagged[v] == rows[v])
      printf("%-24s %10zu %8zu %21s %21s\n", variant_names[v], rows[v], flagged[v], "-", "-");
    else
      printf("%-24s %10zu %8zu %10.4g .. %-8.4g %10.4g .. %-8.4g\n", variant_names[v], rows[v], flagged[v], lo[v][0],
             hi[v][0], lo[v][1], hi[v][1]);
  }
  if (other) printf("%-24s %10zu\n", "(invalid codes)", other);
  printf("F0: peak force of the undamped impact at the same m, K, n, v0.\n");
}

//------- command -------

/* The batch's progress (kelvin_progress_fn): a line on stderr through the phase; never stops. */
static int run_progress(void *ctx, double fraction, const char *text)
{
  (void)text;
  void **pc = ctx; /* the phase, the batch */
  const kelvin_impact_batch *b = pc[1];
  const size_t P = kelvin_impact_batch_size(b);
  /* across ranks, rank 0's share done stands for the whole (the shares are equal and run alike) */
  const size_t done = !kl_cli_shard()   ? kelvin_impact_batch_done(b)
                      : fraction >= 1.0 ? P
                                        : (size_t)(fraction * (double)P);
  phase_tick(pc[0], done, P);
  return 0;
}

/* kelvin_sweep_load's progress while it reads a scenarios CSV (the total not known): its text on
 * stderr, at most every `every` seconds; never stops. */
static int load_progress(void *ctx, double fraction, const char *text)
{
  (void)fraction;
  phase *ph = ctx;
  const double t = now();
  if (t - ph->last < ph->every) return 0;
  ph->last = t;
  kl_cli_note(ph->c, "sweep: %s, %.0f s elapsed", text, t - ph->t0);
  return 0;
}

/* --help text on stdout. */
static void help(void)
{
  printf("usage: kelvin sweep [options] [config.yaml]\n\n"
         "Evaluate many impact scenarios at once: maximum penetration, time to it, peak force, contact time,\n"
         "effective restitution, dissipated energy fraction and damping, for the Kelvin-Voigt model (paper\n"
         "eq. 1-10), the Hunt-Crossley family with five damping laws (Hunt-Crossley 1975, Lankarani-Nikravesh\n"
         "1990, Flores et al. 2011, Gonthier et al. 2004, exact) and the paper's Emden-Fowler form (eq. 11-13).\n"
         "Runs on an OpenCL device (kernels/impact.cl) or, with --cpu or when none exists, on the host with\n"
         "OpenMP; both evaluate the same closed forms. Without a config, a built-in sweep of 4992 scenarios.\n\n"
         "options:\n"
         "  --out DIR       output folder [kelvin-out/sweep]\n"
         "  --cpu           run the OpenMP twin on the host, not OpenCL\n"
         "  --device SPEC   OpenCL device: PLATFORM:DEVICE (e.g. 0:1), gpu, cpu, or part of its name\n"
         "                  [env var KELVIN_DEVICE; default: the first GPU with double precision, else the\n"
         "                  first device with it; see 'kelvin devices']\n"
         "  --format F      the table's format: csv (sweep.csv) or hdf5 (sweep.h5: one dataset per column,\n"
         "                  compressed; h5py and pandas read it, see docs/api.md) [csv]; above %d\n"
         "                  scenarios hdf5 is the better choice (a notice says so)\n"
         "  --no-plot       no figure (figure.dat, sweep.png); above %d scenarios the figure draws a\n"
         "                  sample of that many\n"
         "  --progress S    a progress line every S seconds at most [1] (0: at every check)\n"
         "  --quiet         no progress, notices or summary table\n"
         "  --help          this text\n\n"
         "config (YAML; every key optional, unknown keys are errors):\n"
         "  sweep:\n"
         "    model: [kv, hc, ef]        models (kv Kelvin-Voigt, hc Hunt-Crossley, ef Emden-Fowler, general:\n"
         "                               F = K d^n + c sgn(d')|d'|^rate_exp d^n2, no tension, by a step)\n"
         "    law: [hunt-crossley, lankarani-nikravesh, flores, gonthier, exact]   hc damping laws\n"
         "    rule: [penetration, force] kv separation rules (contact ends at d = 0 / at zero force)\n",
         CSV_HINT_ROWS, FIG_MAX);
  const char *key, *def, *doc;
  for (int i = 0; kelvin_sweep_param(i, &key, &def, &doc); ++i) {
    char kv[80];
    snprintf(kv, sizeof kv, "%s: %s", key, def);
    if (strlen(kv) <= 26)
      printf("    %-26s %s\n", kv, doc);
    else
      printf("    %s\n    %-26s %s\n", kv, "", doc);
  }
  printf("    samples: 0                 force and penetration samples per scenario (samples.csv): kv at\n"
         "                               equal times over the contact (general, hc under a force too),\n"
         "                               hc/ef at equal phase steps\n"
         "                               (d = s d_max compressing, (2 - s) d_max restoring, s in [0, 2])\n"
         "    scenarios: file.csv        scenarios from a CSV file instead of the product (relative to the\n"
         "                               config): columns m_kg, K, cr, v0_m_s, model required (m, v0\n"
         "                               too); n, fe_N, law, rule, c, n2, rate_exp optional ('-': not\n"
         "                               given); other columns ignored, so a sweep.csv reads back\n"
         "  A parameter is a number, a list [a, b, c] or a range {min: A, max: B, n: N, scale: lin|log};\n"
         "  the sweep is the cartesian product. n and law apply to hc (n to ef and general too); fe to kv,\n"
         "  hc and general, rule to kv and general; c, n2 and rate_exp to general.\n"
         "  The defaults above are the built-in sweep. See examples/sweep.yaml.\n\n"
         "writes, in DIR: sweep.csv or sweep.h5 (one row per scenario: inputs, metrics, status), samples.csv (with\n"
         "samples > 0), summary.json, figure.dat and sweep.png (+ sweep.png.gp). A scenario the closed forms cannot\n"
         "evaluate gets zeros and a status (e.g. no_separation), never NaN.\n"
         "Exit status 0 ok, 1 runtime failure (OpenCL, build, I/O), 2 bad option, config or device.\n\n"
         "Across MPI ranks (a build with -DKELVIN_MPI=ON): mpirun -n N kelvin sweep ... gives each rank its own\n"
         "device and a share of the scenarios; rank 0 gathers the results and writes the same files as one process.\n");
}

typedef struct opts {
  kl_cli_common c;
  const char *config;
  int no_plot;
  int format;   /* --format: KELVIN_FORMAT_CSV, KELVIN_FORMAT_HDF5 */
  double every; /* --progress */
} opts;

/* Parse options; 0 ok, 1 --help shown, -1 usage error (message printed). */
static int parse(int argc, char **argv, opts *o)
{
  static const struct option lo[] = {{"out", required_argument, 0, 'o'},    {"cpu", no_argument, 0, 'c'},
                                     {"device", required_argument, 0, 'd'}, {"quiet", no_argument, 0, 'q'},
                                     {"help", no_argument, 0, 'h'},         {"no-plot", no_argument, 0, 'n'},
                                     {"progress", required_argument, 0, 'p'}, {"format", required_argument, 0, 'f'},
                                     {0, 0, 0, 0}};
  memset(o, 0, sizeof *o);
  o->c.out = "kelvin-out/sweep";
  o->every = 1.0;
  opterr = 0;
  optind = 1;
  int ch;
  while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
    switch (ch) {
    case 'o': o->c.out = optarg; break;
    case 'c': o->c.cpu = 1; break;
    case 'd': o->c.device = optarg; break;
    case 'q': o->c.quiet = 1; break;
    case 'n': o->no_plot = 1; break;
    case 'f': {
      static const char *const formats[] = {"csv", "hdf5", NULL}; /* indexed by kelvin_format */
      if ((o->format = kl_cli_choice("--format", optarg, formats)) < 0) return -1;
      break;
    }
    case 'p':
      if (kl_cli_double("--progress", optarg, &o->every) != 0) return -1;
      if (o->every < 0) {
        kl_cli_error("--progress: must be >= 0 seconds, got %g", o->every);
        return -1;
      }
      break;
    case 'h': help(); return 1;
    case ':': kl_cli_error("sweep: option '%s' needs a value (try 'kelvin sweep --help')", argv[optind - 1]); return -1;
    default: kl_cli_error("sweep: unknown option '%s' (try 'kelvin sweep --help')", argv[optind - 1]); return -1;
    }
  }
  if (optind < argc) o->config = argv[optind++];
  if (optind < argc) {
    kl_cli_error("sweep: unexpected argument '%s' (one config file at most; try 'kelvin sweep --help')", argv[optind]);
    return -1;
  }
  if (o->c.cpu && o->c.device) {
    kl_cli_error("sweep: --cpu and --device exclude each other");
    return -1;
  }
  if (!o->c.out[0]) {
    kl_cli_error("--out: must not be empty");
    return -1;
  }
  return 0;
}

/* Scenarios with a status (flags). */
static size_t count_flagged(const kelvin_impact_batch *b)
{
  size_t flagged = 0;
  const size_t P = kelvin_impact_batch_size(b);
  for (size_t p = 0; p < P; ++p) flagged += result(b, p).flags != 0;
  return flagged;
}

/* summary.json: the run's metadata and per-variant counts. */
static int write_json(const opts *o, const kelvin_impact_batch *b)
{
  cJSON *d = cJSON_CreateObject();
  if (!d) return kl_json_write(o->c.out, "summary.json", NULL);
  cJSON_AddStringToObject(d, "command", "sweep");
  kl_json_meta(d, o->config);
  cJSON_AddNumberToObject(d, "scenarios", (double)kelvin_impact_batch_size(b));
  cJSON_AddNumberToObject(d, "samples_per_scenario", kelvin_impact_batch_nsamples(b));
  cJSON_AddNumberToObject(d, "with_status", (double)count_flagged(b));
  return kl_json_write(o->c.out, "summary.json", d);
}

/* Exit status for a library status: bad input is 2, everything else 1. */
static int exit_for(kelvin_status st)
{
  return (st == KELVIN_ERR_CONFIG || st == KELVIN_ERR_ARG || st == KELVIN_ERR_NODEVICE || st == KELVIN_ERR_IO ||
          st == KELVIN_ERR_LIMIT)
           ? KL_EXIT_USAGE
           : KL_EXIT_RUNTIME;
}

/* `kelvin sweep`: scenarios -> batch on the chosen device -> sweep.csv, samples.csv, figure, summary. */
int kl_cmd_sweep(int argc, char **argv)
{
  opts o;
  const int pr = parse(argc, argv, &o);
  if (pr != 0) return pr > 0 ? KL_EXIT_OK : KL_EXIT_USAGE;
  int rc = KL_EXIT_OK;
  kelvin_sweep *sw = NULL;
  kelvin_device *dev = NULL;
  kelvin_status st;
  /* 1. the scenarios */
  if (kelvin_sweep_create(&sw) != KELVIN_OK) {
    kl_cli_error("out of memory");
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  phase lph;
  phase_start(&lph, &o.c, o.every, "sweep", "scenarios");
  if (!o.c.quiet) kelvin_sweep_set_progress(sw, load_progress, &lph);
  if (o.config && (st = kelvin_sweep_load(sw, o.config)) != KELVIN_OK) {
    kl_cli_error("%s", kelvin_sweep_errmsg(sw));
    rc = st == KELVIN_ERR_NOMEM ? KL_EXIT_RUNTIME : KL_EXIT_USAGE;
    goto done;
  }
  kelvin_impact_batch *b = kelvin_sweep_batch(sw);
  const size_t P = kelvin_impact_batch_size(b);
  const int M = kelvin_impact_batch_nsamples(b);
  /* 2. the device */
  if (kelvin_device_create(&dev) != KELVIN_OK) {
    kl_cli_error("out of memory");
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  kelvin_device_set_spec_name(dev, "--device");
  /* under mpirun (docs/design.md section 11): each rank its device and its share of the scenarios; a
   * rank whose device fails ends every rank with its message */
  kelvin_device_set_shard(dev, kl_cli_shard());
  const double t0 = now();
  st = kelvin_device_open(dev, o.c.device, o.c.cpu ? KELVIN_DEVICE_CPU : 0);
  char dmsg[1024];
  snprintf(dmsg, sizeof dmsg, "%s", st != KELVIN_OK ? kelvin_device_errmsg(dev) : "");
  if ((st = kelvin_shard_agree(kl_cli_shard(), st, dmsg, sizeof dmsg)) != KELVIN_OK) {
    kl_cli_error("%s", dmsg);
    rc = exit_for(st);
    goto done;
  }
  kl_cli_note(&o.c, "sweep runs on the %s", kelvin_device_describe(dev));
  /* ranks > 0 write nothing: no output folder, lock or temporary; a folder rank 0 cannot take (its
   * message printed) stops every rank */
  char bmsg[64] = "the output folder";
  if (kelvin_shard_agree(kl_cli_shard(), kl_cli_rank() > 0 || kl_run_begin(o.c.out) == 0 ? KELVIN_OK : KELVIN_ERR_IO,
                         bmsg, sizeof bmsg) != KELVIN_OK) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  /* 3. the batch, with progress */
  phase ph;
  phase_start(&ph, &o.c, o.every, "sweep", "scenarios");
  void *pc[2] = {&ph, b};
  if (!o.c.quiet) kelvin_impact_batch_set_progress(b, run_progress, pc);
  const double t1 = now();
  st = kelvin_impact_batch_run(b, dev);
  const double t2 = now();
  kelvin_impact_batch_set_progress(b, NULL, NULL);
  if (st != KELVIN_OK) {
    kl_cli_error("%s", kelvin_impact_batch_errmsg(b));
    rc = exit_for(st);
    goto done;
  }
  /* 4. outputs: on rank 0 only, which holds every scenario's results (kelvin_impact_batch_run) */
  if (kl_cli_rank() > 0) goto done;
  if (o.format == KELVIN_FORMAT_CSV && P > CSV_HINT_ROWS)
    kl_cli_note(&o.c, "sweep: %zu scenarios: --format hdf5 suits a sweep this large: it writes the same table "
                "several times faster, into a file several times smaller (sweep.csv takes about %.0f MB), and "
                "h5py and pandas read it",
                P, (double)P * 230e-6);
  if (write_table(&o.c, b, o.format, o.every) != 0 || (M && write_samples(&o.c, b, o.every) != 0)) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  const double t3 = now();
  if (!o.no_plot && write_figure(&o.c, b) < 0) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  if (!o.no_plot && now() - t3 >= 0.5) kl_cli_note(&o.c, "sweep: the figure took %.1f s", now() - t3);
  if (write_json(&o, b) != 0 || kl_run_commit() != 0) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  if (!o.c.quiet) {
    printf("kelvin sweep: %zu scenarios (%zu with a status) in %.3f s (%.3g scenarios/s; setup and kernel build "
           "%.2f s)\non %s\n\n",
           P, count_flagged(b), t2 - t1, (double)P / (t2 - t1 > 0 ? t2 - t1 : 1e-9), t1 - t0,
           kelvin_device_describe(dev));
    summary(b);
    fflush(stdout);
    kl_cli_note(&o.c, "sweep: wrote %s/{%s%s, summary.json%s}", o.c.out,
                o.format == KELVIN_FORMAT_HDF5 ? "sweep.h5" : "sweep.csv", M ? ", samples.csv" : "",
                o.no_plot ? "" : ", figure.dat, sweep.png");
  }
done:
  kelvin_device_free(dev);
  kelvin_sweep_free(sw);
  return rc;
}
