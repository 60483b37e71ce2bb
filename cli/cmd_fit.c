/* cli/cmd_fit.c: `kelvin fit`, calibrating the generalised soft-contact law F = k d^n1 + c sgn(d')|d'|^m d^n2 to
 * a measured impact (docs/design.md section 2.6) on the public API kelvin/fit.h: the fitted parameters with
 * their standard errors, the residuals, and a figure of the measured and fitted force traces. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <kelvin/fit.h>

#include "cli.h"
#include "commands.h"

/* `kelvin fit --help` */
static void help(void)
{
  printf("usage: kelvin fit FIT.yaml [options]\n\n"
         "Fit the generalised soft-contact law F = k d^n1 + c sgn(d')|d'|^m d^n2 (kept >= 0; docs/design.md\n"
         "sections 2.5-2.6) to a measured impact of a mass at speed v0: its peak force, contact time and\n"
         "restitution (any of them, each with its standard uncertainty) and/or a force trace, by nonlinear least\n"
         "squares (GSL's trust-region Levenberg-Marquardt) on the library's impact of the general law. Each of\n"
         "k, c, n1, n2, m is free (a start, optional bounds) or fixed. This is the calibration helper of\n"
         "issue 36 ('kelvin sweep can fit'): it is its own command, as a fit is one scenario solved many\n"
         "times, not a batch of scenarios.\n\n"
         "FIT.yaml (see examples/fit_trace.yaml, examples/fit_metrics.yaml):\n"
         "  mass: 0.05                    # kg\n"
         "  v0: 1.0                       # impact speed, m/s\n"
         "  parameters:                   # each optional; defaults k 1e6, c 1e4, n1 1.5, n2 1.5, m 1, all free\n"
         "    k: 2e6                      # a start (free; k and c unbounded in (0, inf))\n"
         "    c: {start: 1e4, min: 1, max: 1e7}\n"
         "    n1: {start: 1.5, min: 0.5, max: 4}   # exponents: bounds default n1 [0.5, 4], n2 [0, 4], m [0.1, 4]\n"
         "    m: {fixed: 1}               # held\n"
         "  measured:                     # at least one\n"
         "    peak_force: {value: 42.5, sd: 0.5}      # N\n"
         "    contact_time: {value: 3.9e-3, sd: 5e-5} # s, while the force is positive\n"
         "    restitution: {value: 0.69, sd: 0.01}    # exit speed / impact speed\n"
         "    trace: {file: trace.csv, sd: 0.5, time_offset: 0}\n"
         "      # CSV with columns t_s,force_N, relative to FIT.yaml; time_offset [s] is the contact's start in\n"
         "      # the file's time; sd [N] the force noise (omit it: estimated from the residuals)\n"
         "  max_iterations: 200\n\n"
         "Identifiability: peak force, contact time and restitution are 3 numbers for 5 unknowns. A fit with\n"
         "fewer measured numbers than free parameters is refused (exit 2), and so is one whose Jacobian is rank\n"
         "deficient (the message names the combination of parameters not determined): give a trace or fix\n"
         "parameters.\n\n"
         "options:\n"
         "  --out DIR   output folder [kelvin-out/fit]\n"
         "  --quiet     no progress, no summary\n"
         "  --help      this text\n\n"
         "writes, in DIR: report.json (fitted values, standard errors, correlations, chi^2, the measured and\n"
         "fitted metrics), fit_params.csv (parameter, value, standard error, fixed), and with a trace\n"
         "fit_trace.csv (t_s, measured_N, fitted_N, residual_N) and fit_trace.png (the measured and fitted\n"
         "force against time, and the residuals).\n"
         "Exit status: 0 ok; 1 the fit failed (the impact at the start, the solver); 2 bad option or fit file,\n"
         "or an under-determined fit.\n");
}

typedef struct opts {
  const char *file;
  kl_cli_common c;
} opts;

/* 0 ok, 1 help shown, -1 usage error (message printed) */
static int parse(int argc, char **argv, opts *o)
{
  static const struct option lo[] = {
      {"out", required_argument, 0, 'o'}, {"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  memset(o, 0, sizeof *o);
  o->c.out = "kelvin-out/fit";
  opterr = 0;
  optind = 1;
  int ch;
  while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
    switch (ch) {
    case 'o': o->c.out = optarg; break;
    case 'q': o->c.quiet = 1; break;
    case 'h': help(); return 1;
    case ':': kl_cli_error("fit: option '%s' needs a value (try 'kelvin fit --help')", argv[optind - 1]); return -1;
    default: kl_cli_error("fit: unknown option '%s' (try 'kelvin fit --help')", argv[optind - 1]); return -1;
    }
  }
  if (optind < argc) o->file = argv[optind++];
  if (optind < argc) {
    kl_cli_error("fit: unexpected argument '%s' (one fit file; try 'kelvin fit --help')", argv[optind]);
    return -1;
  }
  if (!o->file) {
    kl_cli_error("fit: no fit file given (try 'kelvin fit --help')");
    return -1;
  }
  return 0;
}

static int on_progress(void *ctx, double fraction, const char *text)
{
  (void)fraction;
  kl_cli_note(ctx, "%s", text);
  return 0;
}

static int write_params(const opts *o, const kelvin_fit_result *r)
{
  kl_out f;
  if (kl_out_open(&f, o->c.out, "fit_params.csv") != 0) return -1;
  fprintf(f.f, "parameter,value,se,fixed\n");
  for (int i = 0; i < KELVIN_FIT_NPARAM; ++i)
    fprintf(f.f, "%s,%.12g,%.6g,%d\n", kelvin_fit_param_name(i), r->value[i], r->se[i], r->fixed[i]);
  return kl_out_commit(&f);
}

static int write_trace(const opts *o, const kelvin_fit *fit, size_t n)
{
  kl_out f;
  if (kl_out_open(&f, o->c.out, "fit_trace.csv") != 0) return -1;
  fprintf(f.f, "t_s,measured_N,fitted_N,residual_N\n");
  for (size_t i = 0; i < n; ++i) {
    double t, m, y;
    kelvin_fit_trace(fit, i, &t, &m, &y);
    fprintf(f.f, "%.12g,%.12g,%.12g,%.9g\n", t, m, y, m - y);
  }
  return kl_out_commit(&f);
}

/* fit_trace.png: measured and fitted force, and the residuals */
static int figure(const opts *o, const kelvin_fit_result *r)
{
  char script[4096], name[600];
  kl_gp_str(name, sizeof name, o->file);
  snprintf(script, sizeof script,
           "# kelvin fit: measured and fitted force traces\n"
           "if (!exists('OUTPUT')) OUTPUT = 'fit_trace.png'\n"
           "set terminal pngcairo size 1000,800 font ',11'\nset output OUTPUT\n"
           "set datafile separator ','\nset grid\nset lmargin 12\n"
           "set multiplot layout 2,1 title %s.': k %.4g, c %.4g, n_1 %.4g, n_2 %.4g, m %.4g' noenhanced\n"
           "set xlabel 'time from contact start [ms]'\n"
           "set title '(a) contact force'\nset ylabel 'force [N]'\nset key top right\n"
           "plot 'fit_trace.csv' using ($1*1000):2 with points pt 7 ps 0.4 lc rgb '#7f7f7f' title 'measured', \\\n"
           "     '' using ($1*1000):3 with lines lw 2 lc rgb '#d62728' title 'fitted'\n"
           "set title '(b) residual, measured - fitted (RMS %.3g N)'\nset ylabel 'residual [N]'\nset key off\n"
           "plot 'fit_trace.csv' using ($1*1000):4 with points pt 7 ps 0.4 lc rgb '#1f77b4'\n"
           "unset multiplot\n",
           name, r->value[0], r->value[1], r->value[2], r->value[3], r->value[4], r->rms_trace);
  return kl_cli_gnuplot(&o->c, o->c.out, "fit_trace.png", script) < 0 ? -1 : 0;
}

static cJSON *metric(double meas, double sd, double fitted)
{
  cJSON *m = cJSON_CreateObject();
  if (!m) return NULL;
  if (sd > 0) {
    cJSON_AddNumberToObject(m, "measured", meas);
    cJSON_AddNumberToObject(m, "sd", sd);
    cJSON_AddNumberToObject(m, "residual_sd", (fitted - meas) / sd);
  }
  cJSON_AddNumberToObject(m, "fitted", fitted);
  return m;
}

static int write_report(const opts *o, const kelvin_fit_problem *p, const kelvin_fit_result *r)
{
  cJSON *d = cJSON_CreateObject();
  if (!d) return kl_json_write(o->c.out, "report.json", NULL);
  cJSON_AddStringToObject(d, "command", "fit");
  kl_json_meta(d, o->file);
  cJSON_AddStringToObject(d, "law", "F = k d^n1 + c sgn(d')|d'|^m d^n2, clamped at 0");
  cJSON_AddNumberToObject(d, "mass_kg", p->mass);
  cJSON_AddNumberToObject(d, "v0_m_s", p->v0);
  cJSON *ps = cJSON_AddObjectToObject(d, "parameters");
  for (int i = 0; ps && i < KELVIN_FIT_NPARAM; ++i) {
    cJSON *q = cJSON_AddObjectToObject(ps, kelvin_fit_param_name(i));
    if (!q) continue;
    cJSON_AddNumberToObject(q, "value", r->value[i]);
    cJSON_AddNumberToObject(q, "se", r->se[i]);
    cJSON_AddBoolToObject(q, "fixed", r->fixed[i]);
    if (!r->fixed[i]) {
      cJSON_AddNumberToObject(q, "start", p->start[i]);
      cJSON *c = cJSON_AddObjectToObject(q, "correlation");
      for (int j = 0; c && j < KELVIN_FIT_NPARAM; ++j)
        if (!r->fixed[j]) cJSON_AddNumberToObject(c, kelvin_fit_param_name(j), r->corr[i][j]);
    }
  }
  cJSON *m = cJSON_AddObjectToObject(d, "metrics");
  if (m) {
    cJSON_AddItemToObject(m, "peak_force_N", metric(p->fpeak, p->fpeak_sd, r->fpeak));
    cJSON_AddItemToObject(m, "contact_time_s", metric(p->tc, p->tc_sd, r->tc));
    cJSON_AddItemToObject(m, "restitution", metric(p->cr, p->cr_sd, r->cr));
  }
  if (p->ntrace) {
    cJSON *t = cJSON_AddObjectToObject(d, "trace");
    if (t) {
      cJSON_AddNumberToObject(t, "samples", (double)p->ntrace);
      cJSON_AddNumberToObject(t, "sd_N", r->trace_sd);
      cJSON_AddBoolToObject(t, "sd_from_residuals", r->sd_from_residuals);
      cJSON_AddNumberToObject(t, "rms_residual_N", r->rms_trace);
    }
  }
  cJSON_AddNumberToObject(d, "free_parameters", r->nfree);
  cJSON_AddNumberToObject(d, "residuals", r->nres);
  cJSON_AddNumberToObject(d, "chi2", r->chi2);
  cJSON_AddNumberToObject(d, "dof", r->dof);
  cJSON_AddNumberToObject(d, "condition_number", r->cond);
  cJSON_AddNumberToObject(d, "iterations", r->iterations);
  cJSON_AddBoolToObject(d, "converged", r->converged);
  return kl_json_write(o->c.out, "report.json", d);
}

/* `kelvin fit`: load, fit, write, summarise */
int kl_cmd_fit(int argc, char **argv)
{
  opts o;
  const int pr = parse(argc, argv, &o);
  if (pr > 0) return KL_EXIT_OK;
  if (pr < 0) return KL_EXIT_USAGE;
  kelvin_fit *fit = NULL;
  if (kelvin_fit_create(&fit) != KELVIN_OK) {
    kl_cli_error("fit: out of memory");
    return KL_EXIT_RUNTIME;
  }
  int rc = KL_EXIT_OK;
  kelvin_status st = kelvin_fit_load(fit, o.file);
  if (st != KELVIN_OK) {
    kl_cli_error("%s", kelvin_fit_errmsg(fit));
    rc = st == KELVIN_ERR_NOMEM ? KL_EXIT_RUNTIME : KL_EXIT_USAGE;
    goto done;
  }
  kelvin_fit_problem p;
  kelvin_fit_problem_get(fit, &p);
  if (!o.c.quiet) kelvin_fit_set_progress(fit, on_progress, &o.c);
  kelvin_fit_result r;
  st = kelvin_fit_run(fit, &p, &r);
  if (st != KELVIN_OK) {
    kl_cli_error("fit: %s: %s", o.file, kelvin_fit_errmsg(fit));
    rc = st == KELVIN_ERR_ARG ? KL_EXIT_USAGE : KL_EXIT_RUNTIME;
    goto done;
  }
  if (kl_run_begin(o.c.out) != 0 || write_params(&o, &r) != 0 || write_report(&o, &p, &r) != 0 ||
      (p.ntrace && (write_trace(&o, fit, p.ntrace) != 0 || figure(&o, &r) != 0)) ||
      (!p.ntrace && (kl_out_remove(o.c.out, "fit_trace.csv") != 0 || kl_out_remove(o.c.out, "fit_trace.png") != 0 ||
                     kl_out_remove(o.c.out, "fit_trace.png.gp") != 0)) ||
      kl_run_commit() != 0) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  if (!o.c.quiet) {
    fputs("kelvin fit: ", stdout);
    kl_cli_puts_safe(stdout, o.file);
    printf(": %d free parameters, %d residuals, chi^2 %.4g for %d degrees of freedom, %d iterations%s\n", r.nfree,
           r.nres, r.chi2, r.dof, r.iterations, r.converged ? "" : " (iteration limit: not converged)");
    printf("  parameter  value          standard error\n");
    for (int i = 0; i < KELVIN_FIT_NPARAM; ++i) {
      if (r.fixed[i])
        printf("  %-9s  %-13.6g  (fixed)\n", kelvin_fit_param_name(i), r.value[i]);
      else
        printf("  %-9s  %-13.6g  %.3g (%.2g %%)\n", kelvin_fit_param_name(i), r.value[i], r.se[i],
               100 * r.se[i] / fabs(r.value[i]));
    }
    printf("  fitted impact: peak force %.5g N, contact time %.5g s, restitution %.4f\n", r.fpeak, r.tc, r.cr);
    if (p.ntrace)
      printf("  trace: %zu samples, RMS residual %.3g N (noise sd %.3g N%s)\n", p.ntrace, r.rms_trace, r.trace_sd,
             r.sd_from_residuals ? ", estimated from the residuals" : ", as given");
    kl_cli_note(&o.c, "fit: wrote %s/{report.json, fit_params.csv%s}", o.c.out,
                p.ntrace ? ", fit_trace.csv, fit_trace.png" : "");
  }
done:
  kelvin_fit_free(fit);
  return rc;
}
