/* cli/cmd_sweep.c: `kelvin sweep [config.yaml]`: thousands of impact scenarios evaluated in one
 * batch (host/impact_batch.h) on the OpenCL device or the OpenMP twin; one CSV row per scenario, a
 * summary table and a figure of effective restitution and peak force against cr and impact speed for
 * each model and damping law (docs/design.md sections 2.3 and 4). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "host/host.h"
#include "host/impact_batch.h"
#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "kelvin/contact.h"
#include "cli/commands.h"
#include "io/config.h"
#include "io/sweep_config.h"

//------- output -------

/* "ok" or the names of the status bits joined by '|' into buf. */
static const char *status_text(int st, char *buf, size_t cap)
{
  static const char *const bits[] = {"bad_mass", "bad_stiffness", "bad_cr",   "bad_speed",     "bad_exponent",
                                     "bad_law",  "no_converge",   "bad_input", "no_separation", "unsupported"};
  if (st == KL_OK) return "ok";
  buf[0] = '\0';
  for (int i = 0; i < 10; ++i)
    if (st & (1 << i)) {
      if (buf[0]) strncat(buf, "|", cap - strlen(buf) - 1);
      strncat(buf, bits[i], cap - strlen(buf) - 1);
    }
  return buf;
}

#define NVARIANT 8
/* Variant of a row: 0-1 kv rules, 2-6 hc laws, 7 ef. */
static int variant(kl_impact_in in)
{
  if (in.model == KL_MODEL_KV) return in.rule;
  if (in.model == KL_MODEL_HC) return 2 + in.law;
  return 7;
}
static const char *const variant_names[NVARIANT] = {"kv/penetration", "kv/force",          "hc/hunt-crossley",
                                                     "hc/lankarani-nikravesh", "hc/flores", "hc/gonthier",
                                                     "hc/exact",       "ef"};

/* Peak force of the undamped impact with the same m, K, n, v0: K d0^n with d0^{n+1} = (n+1) m v0^2/(2K)
 * (v0 sqrt(K m) for n = 1): the scale that makes peak forces of different speeds comparable. */
static double undamped_peak(kl_impact_in in)
{
  return in.K * pow((in.n + 1.0) * in.m * in.v0 * in.v0 / (2.0 * in.K), in.n / (in.n + 1.0));
}

/* sweep.csv: one row per scenario, inputs, metrics and status, full precision. */
static int write_csv(const kl_cli_common *c, const kl_impact_batch *b)
{
  kl_out o;
  if (kl_out_open(&o, c->out, "sweep.csv") != 0) return -1;
  fprintf(o.f, "id,model,law,rule,m_kg,K,n,cr,v0_m_s,fe_N,dmax_m,tmax_s,fpeak_N,tc_s,cr_eff,ediss,damp,status,status_text\n");
  const size_t P = b->P;
  char sbuf[256];
  for (size_t p = 0; p < P; ++p) {
    const kl_impact_in in = kl_impact_batch_get(b, p);
    const int okm = in.model >= 0 && in.model < 3;
    fprintf(o.f, "%zu,%s,%s,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g", p, okm ? kelvin_model_name(in.model) : "?",
            in.model == KL_MODEL_HC ? kelvin_law_name(in.law) : "-", in.model == KL_MODEL_KV ? kelvin_rule_name(in.rule) : "-",
            in.m, in.K, in.n, in.cr, in.v0, in.fe);
    for (int k = 0; k < KL_NOUT; ++k) fprintf(o.f, ",%.17g", b->y[(size_t)k * P + p]);
    fprintf(o.f, ",%d,%s\n", b->status[p], status_text(b->status[p], sbuf, sizeof sbuf));
  }
  return kl_out_commit(&o);
}

/* samples.csv: id, j, abscissa (time [s] for kv, phase in [0, 2] otherwise), penetration, force. */
static int write_samples(const kl_cli_common *c, const kl_impact_batch *b)
{
  kl_out o;
  if (kl_out_open(&o, c->out, "samples.csv") != 0) return -1;
  fprintf(o.f, "id,j,s,delta,F\n");
  const size_t P = b->P, M = (size_t)b->M;
  for (size_t p = 0; p < P; ++p)
    for (size_t j = 0; j < M; ++j)
      fprintf(o.f, "%zu,%zu,%.17g,%.17g,%.17g\n", p, j, b->smp[(KL_SMP_S * M + j) * P + p],
              b->smp[(KL_SMP_D * M + j) * P + p], b->smp[(KL_SMP_F * M + j) * P + p]);
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

/* figure.dat (one gnuplot block per variant: cr, cr_eff, fpeak/F0, v0, fpeak) and sweep.png:
 * (a) effective vs nominal restitution, (b) peak force over the undamped one against cr, (c) peak force
 * against impact speed at the cr nearest 0.5. Returns kl_cli_gnuplot's code, -1 on write errors. */
static int write_figure(const kl_cli_common *c, const kl_impact_batch *b)
{
  const size_t P = b->P;
  fig_row *idx = malloc((P ? P : 1) * sizeof *idx);
  if (!idx) {
    kl_cli_error("out of memory drawing the figure");
    return -1;
  }
  size_t n = 0;
  double crsel = -1.0;
  for (size_t p = 0; p < P; ++p)
    if (b->status[p] == KL_OK) {
      const kl_impact_in in = kl_impact_batch_get(b, p);
      idx[n++] = (fig_row){variant(in), in.v0, in.cr, p};
      const double cr = b->x[KL_IN_CR * P + p];
      if (crsel < 0 || fabs(cr - 0.5) < fabs(crsel - 0.5)) crsel = cr;
    }
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
      const kl_impact_in in = kl_impact_batch_get(b, p);
      if (!any) fprintf(o.f, "%s# %s\n", nblk ? "\n\n" : "", variant_names[v]);
      any = 1;
      const double fp = b->y[KL_OUT_FPEAK * P + p];
      fprintf(o.f, "%.10g %.10g %.10g %.10g %.10g %d\n", in.cr, b->y[KL_OUT_CREFF * P + p], fp / undamped_peak(in),
              in.v0, fp, in.cr == crsel);
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
  char script[4096];
  snprintf(script, sizeof script,
           "# kelvin sweep figure; data in figure.dat (one block per model/law)\n"
           "if (!exists('OUTPUT')) OUTPUT = 'sweep.png'\n"
           "set terminal pngcairo size 1800,560 font ',11'\nset output OUTPUT\n"
           "titles = '%s'\nN = %d\n"
           "set multiplot layout 1,3 title 'kelvin sweep: impact metrics by contact model and damping law'\n"
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
           titles, nblk, crsel);
  return kl_cli_gnuplot(c, c->out, "sweep.png", script);
}

/* Summary table on stdout: per variant, rows, flagged rows, and ranges of cr_eff and fpeak/F0. */
static void summary(const kl_impact_batch *b)
{
  size_t rows[NVARIANT] = {0}, flagged[NVARIANT] = {0}, other = 0;
  double lo[NVARIANT][2], hi[NVARIANT][2];
  for (int v = 0; v < NVARIANT; ++v) lo[v][0] = lo[v][1] = INFINITY, hi[v][0] = hi[v][1] = -INFINITY;
  const size_t P = b->P;
  for (size_t p = 0; p < P; ++p) {
    const kl_impact_in in = kl_impact_batch_get(b, p);
    if (in.model < 0 || in.model > 2 || in.law < 0 || in.law >= KL_NLAWS || in.rule < 0 || in.rule > 1) {
      ++other;
      continue;
    }
    const int v = variant(in);
    ++rows[v];
    if (b->status[p] != KL_OK) {
      ++flagged[v];
      continue;
    }
    const double q[2] = {b->y[KL_OUT_CREFF * P + p], b->y[KL_OUT_FPEAK * P + p] / undamped_peak(in)};
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

typedef struct progress_ctx {
  const kl_cli_common *c;
  double t0, last;
  int printed;
} progress_ctx;

/* Progress on stderr, at most once a second, for runs that last longer than that; never stops. */
static int progress(void *ctx, size_t done, size_t total)
{
  progress_ctx *pc = ctx;
  const double t = kl_now();
  if (done < total && t - pc->last < 1.0) return 0;
  if (done == total && !pc->printed) return 0;
  pc->last = t;
  pc->printed = 1;
  const double el = t - pc->t0;
  const double eta = done ? el * (double)(total - done) / (double)done : 0.0;
  kl_cli_note(pc->c, "sweep: %5.1f%% (%zu of %zu scenarios), %.0f s elapsed, ~%.0f s left", 100.0 * (double)done / (double)total,
              done, total, el, eta);
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
         "  --quiet         no progress, notices or summary table\n"
         "  --help          this text\n\n"
         "config (YAML; every key optional, unknown keys are errors):\n"
         "  sweep:\n"
         "    model: [kv, hc, ef]        models (kv Kelvin-Voigt, hc Hunt-Crossley, ef Emden-Fowler)\n"
         "    law: [hunt-crossley, lankarani-nikravesh, flores, gonthier, exact]   hc damping laws\n"
         "    rule: [penetration, force] kv separation rules (contact ends at d = 0 / at zero force)\n");
  for (int i = 0; i < NPAR; ++i) {
    char kv[80];
    snprintf(kv, sizeof kv, "%s: %s", kl_sweep_pdefs[i].key, kl_sweep_pdefs[i].defstr);
    if (strlen(kv) <= 26)
      printf("    %-26s %s\n", kv, kl_sweep_pdefs[i].doc);
    else
      printf("    %s\n    %-26s %s\n", kv, "", kl_sweep_pdefs[i].doc);
  }
  printf("    samples: 0                 force and penetration samples per scenario (samples.csv): kv at\n"
         "                               equal times over the contact, hc/ef at equal phase steps\n"
         "                               (d = s d_max compressing, (2 - s) d_max restoring, s in [0, 2])\n"
         "    scenarios: file.csv        scenarios from a CSV file instead of the product (relative to the\n"
         "                               config): columns m_kg, K, cr, v0_m_s, model required (m, v0\n"
         "                               too); n, fe_N, law, rule optional ('-': not given); other columns\n"
         "                               ignored, so a sweep.csv reads back\n"
         "  A parameter is a number, a list [a, b, c] or a range {min: A, max: B, n: N, scale: lin|log};\n"
         "  the sweep is the cartesian product. n and law apply to hc (n to ef too); fe and rule to kv.\n"
         "  The defaults above are the built-in sweep. See examples/sweep.yaml.\n\n"
         "writes, in DIR: sweep.csv (one row per scenario: inputs, metrics, status), samples.csv (with\n"
         "samples > 0), summary.json, figure.dat and sweep.png (+ sweep.png.gp). A scenario the closed forms cannot\n"
         "evaluate gets zeros and a status (e.g. no_separation), never NaN.\n"
         "Exit status 0 ok, 1 runtime failure (OpenCL, build, I/O), 2 bad option, config or device.\n");
}

typedef struct opts {
  kl_cli_common c;
  const char *config;
} opts;

/* Parse options; 0 ok, 1 --help shown, -1 usage error (message printed). */
static int parse(int argc, char **argv, opts *o)
{
  static const struct option lo[] = {{"out", required_argument, 0, 'o'},    {"cpu", no_argument, 0, 'c'},
                                     {"device", required_argument, 0, 'd'}, {"quiet", no_argument, 0, 'q'},
                                     {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
  memset(o, 0, sizeof *o);
  o->c.out = "kelvin-out/sweep";
  opterr = 0;
  optind = 1;
  int ch;
  while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
    switch (ch) {
    case 'o': o->c.out = optarg; break;
    case 'c': o->c.cpu = 1; break;
    case 'd': o->c.device = optarg; break;
    case 'q': o->c.quiet = 1; break;
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

/* summary.json: the run's metadata and per-variant counts. */
static int write_json(const opts *o, const kl_impact_batch *b)
{
  cJSON *d = cJSON_CreateObject();
  if (!d) return kl_json_write(o->c.out, "summary.json", NULL);
  cJSON_AddStringToObject(d, "command", "sweep");
  kl_json_meta(d, o->config);
  cJSON_AddNumberToObject(d, "scenarios", (double)b->P);
  cJSON_AddNumberToObject(d, "samples_per_scenario", b->M);
  size_t flagged = 0;
  for (size_t p = 0; p < b->P; ++p) flagged += b->status[p] != KL_OK;
  cJSON_AddNumberToObject(d, "with_status", (double)flagged);
  return kl_json_write(o->c.out, "summary.json", d);
}

/* Exit status for a library status: bad input is 2, everything else 1. */
static int exit_for(kelvin_status st)
{
  return (st == KELVIN_ERR_CONFIG || st == KELVIN_ERR_ARG || st == KELVIN_ERR_NODEVICE) ? KL_EXIT_USAGE
                                                                                          : KL_EXIT_RUNTIME;
}

/* `kelvin sweep`: scenarios -> batch on the chosen path -> sweep.csv, samples.csv, figure, summary. */
int kl_cmd_sweep(int argc, char **argv)
{
  opts o;
  const int pr = parse(argc, argv, &o);
  if (pr != 0) return pr > 0 ? KL_EXIT_OK : KL_EXIT_USAGE;
  int rc = KL_EXIT_OK;
  kl_sweep_spec s;
  kl_cfg *cfg = NULL;
  kl_host *h = NULL;
  kl_impact_batch *b = NULL;
  char msg[8192];
  kelvin_status st;
  if (kl_sweep_spec_default(&s) != 0) {
    kl_cli_error("out of memory");
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  /* 1. the scenarios */
  if (o.config) {
    if (kl_cfg_create(&cfg) != KELVIN_OK) {
      kl_cli_error("out of memory");
      rc = KL_EXIT_RUNTIME;
      goto done;
    }
    st = kl_sweep_load_spec(cfg, o.config, &s);
    if (st != KELVIN_OK) {
      kl_cli_error("%s", kl_cfg_errmsg(cfg));
      rc = st == KELVIN_ERR_NOMEM ? KL_EXIT_RUNTIME : KL_EXIT_USAGE;
      goto done;
    }
  }
  if (s.scenarios[0]) {
    st = kl_sweep_load_csv(s.scenarios, s.samples, &b, msg, sizeof msg);
    if (st != KELVIN_OK) {
      kl_cli_error("%s", msg);
      rc = st == KELVIN_ERR_NOMEM ? KL_EXIT_RUNTIME : KL_EXIT_USAGE;
      goto done;
    }
  } else {
    const long P = kl_sweep_product_size(&s);
    if (P < 0) {
      kl_cli_error("%s: the sweep has more than %ld scenarios; use fewer values", o.config ? o.config : "sweep", MAXP);
      rc = KL_EXIT_USAGE;
      goto done;
    }
    if (P == 0) {
      kl_cli_error("%s: the sweep is empty", o.config ? o.config : "sweep");
      rc = KL_EXIT_USAGE;
      goto done;
    }
    st = kl_impact_batch_create((size_t)P, s.samples, &b);
    if (st != KELVIN_OK) {
      kl_cli_error("cannot allocate %ld scenarios with %d samples each: out of memory", P, s.samples);
      rc = KL_EXIT_RUNTIME;
      goto done;
    }
    kl_sweep_fill_product(&s, b);
  }
  /* 2. the path */
  if (kl_host_create(&h) != KELVIN_OK) {
    kl_cli_error("out of memory");
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  kl_host_opts ho;
  kl_host_opts_default(&ho);
  ho.cpu = o.c.cpu;
  ho.device = o.c.device;
  ho.device_origin = "--device";
  /* chunks of ~1/20 of the batch (2^16 ... 2^20 rows) so long runs report progress */
  size_t chunk = b->P / 20;
  if (chunk < ((size_t)1 << 16)) chunk = (size_t)1 << 16;
  if (chunk > ((size_t)1 << 20)) chunk = (size_t)1 << 20;
  ho.chunk = chunk;
  const double t0 = kl_now();
  st = kl_host_open(h, &ho);
  if (st != KELVIN_OK) {
    kl_cli_error("%s", kl_host_errmsg(h));
    rc = exit_for(st);
    goto done;
  }
  kl_cli_note(&o.c, "sweep runs on the %s", kl_host_notice(h));
  if (kl_run_begin(o.c.out) != 0) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  /* 3. the batch */
  progress_ctx pc = {&o.c, kl_now(), kl_now(), 0};
  const double t1 = kl_now();
  st = kl_impact_run(h, b, o.c.quiet ? NULL : progress, &pc);
  const double t2 = kl_now();
  if (st != KELVIN_OK) {
    kl_cli_error("%s", kl_host_errmsg(h));
    rc = exit_for(st);
    goto done;
  }
  /* 4. outputs */
  if (write_csv(&o.c, b) != 0 || (b->M && write_samples(&o.c, b) != 0)) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  if (write_figure(&o.c, b) < 0 || write_json(&o, b) != 0 || kl_run_commit() != 0) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  if (!o.c.quiet) {
    size_t flagged = 0;
    for (size_t p = 0; p < b->P; ++p) flagged += b->status[p] != KL_OK;
    printf("kelvin sweep: %zu scenarios (%zu with a status) in %.3f s (%.3g scenarios/s; setup and kernel build "
           "%.2f s)\non %s\n\n",
           b->P, flagged, t2 - t1, (double)b->P / (t2 - t1 > 0 ? t2 - t1 : 1e-9), t1 - t0, kl_host_notice(h));
    summary(b);
    printf("\nwrote %s/sweep.csv%s, %s/figure.dat, %s/sweep.png\n", o.c.out, b->M ? ", samples.csv" : "", o.c.out,
           o.c.out);
  }
done:
  kl_impact_batch_destroy(b);
  kl_host_destroy(h);
  kl_cfg_destroy(cfg);
  kl_sweep_spec_free(&s);
  return rc;
}
