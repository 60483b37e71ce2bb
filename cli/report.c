/* cli/report.c: outputs of `kelvin optimise` and `kelvin evaluate` (report.h). */
#include "report.h"
#include "report_robust.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* the series of kelvin_grind_pass_series a table needs, ns values each (columns of one block) */
enum { C_S, C_X, C_Y, C_Z, C_NX, C_NY, C_NZ, C_O, C_V, C_T, C_FT, C_SA, C_SI, C_C, C_VSA, C_VSI, C_VC, C_N };

/* series what of pass into col (ns values), or NaN when the pass has none of it (a pass not verified) */
static void series(const kelvin_grind *g, int pass, kelvin_series what, double *col, int ns)
{
  if (kelvin_grind_pass_series(g, pass, what, col) != KELVIN_OK)
    for (int k = 0; k < ns; ++k) col[k] = NAN;
}

static int trajectory(const kelvin_grind *g, const char *dir)
{
  const int best = kelvin_grind_best(g), ns = kelvin_grind_nsamples(g);
  const int verified = kelvin_grind_pass_value(g, best, KELVIN_PASS_VERIFIED) == 1;
  double *c = malloc((size_t)C_N * ns * sizeof *c);
  if (!c) {
    kl_cli_error("out of memory");
    return -1;
  }
  static const kelvin_series what[C_N] = {
    KELVIN_SERIES_S, KELVIN_SERIES_X, KELVIN_SERIES_Y, KELVIN_SERIES_Z, KELVIN_SERIES_NX, KELVIN_SERIES_NY,
    KELVIN_SERIES_NZ, KELVIN_SERIES_OFFSET, KELVIN_SERIES_SPEED, KELVIN_SERIES_TIME, KELVIN_SERIES_TARGET,
    /* the device's wrist-sensor reading, step-averaged and at the samples, as the 3-D engine's beside it */
    KELVIN_SERIES_SENSOR, KELVIN_SERIES_SENSOR_INSTANT, KELVIN_SERIES_CONTACT, KELVIN_SERIES_SENSOR_VERIFIED,
    KELVIN_SERIES_SENSOR_INSTANT_VERIFIED, KELVIN_SERIES_CONTACT_VERIFIED};
  for (int j = 0; j < C_N; ++j) series(g, best, what[j], c + (size_t)j * ns, ns);
#define COL(j, k) c[(size_t)(j) * ns + (k)]
  kl_out f;
  if (kl_out_open(&f, dir, "trajectory.csv") != 0) {
    free(c);
    return -1;
  }
  fprintf(f.f, "s_m,x_m,y_m,z_m,nx,ny,nz,offset_m,speed_m_s,time_s,target_N,predicted_N,verified_N,"
               "predicted_inst_N,verified_inst_N,contact\n");
  for (int k = 0; k < ns; ++k) {
    fprintf(f.f, "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%.9g,", COL(C_S, k), COL(C_X, k), COL(C_Y, k),
            COL(C_Z, k), COL(C_NX, k), COL(C_NY, k), COL(C_NZ, k), COL(C_O, k), COL(C_V, k), COL(C_T, k), COL(C_FT, k),
            COL(C_SA, k));
    if (verified)
      fprintf(f.f, "%.9g,%.9g,%.9g,%d\n", COL(C_VSA, k), COL(C_SI, k), COL(C_VSI, k), (int)COL(C_VC, k));
    else
      fprintf(f.f, "nan,%.9g,nan,%d\n", COL(C_SI, k), (int)COL(C_C, k));
  }
  double *v = malloc((size_t)ns * sizeof *v);
  if (v) memcpy(v, c + (size_t)C_V * ns, (size_t)ns * sizeof *v);
#undef COL
  free(c);
  const int rc = kl_out_commit(&f);
  /* robot waypoints: the tool pose and time per sample (kelvin_grind_pass_waypoints: what the 3-D
   * verification follows): TCP on the tool axis, tool z into the part, tool x along the path;
   * quaternion w, x, y, z */
  double *wt = malloc((size_t)ns * sizeof *wt), *wp = malloc((size_t)ns * 3 * sizeof *wp), *wq = malloc((size_t)ns * 4 * sizeof *wq);
  if (rc == 0 && v && wt && wp && wq && kelvin_grind_pass_waypoints(g, best, wt, wp, wq) == KELVIN_OK &&
      kl_out_open(&f, dir, "waypoints.csv") == 0) {
    fprintf(f.f, "time_s,x_m,y_m,z_m,qw,qx,qy,qz,speed_m_s\n");
    for (int k = 0; k < ns; ++k)
      fprintf(f.f, "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", wt[k], wp[3 * k], wp[3 * k + 1], wp[3 * k + 2],
              wq[4 * k], wq[4 * k + 1], wq[4 * k + 2], wq[4 * k + 3], v[k]);
    free(v);
    free(wt);
    free(wp);
    free(wq);
    return kl_out_commit(&f);
  }
  free(v);
  free(wt);
  free(wp);
  free(wq);
  return -1;
}

/* cJSON helpers: a number (non-finite becomes null, never "-nan"; report.h), a pair [lo, hi] */
void kl_report_num(cJSON *o, const char *k, double v)
{
  cJSON_AddItemToObject(o, k, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

static void pair(cJSON *o, const char *k, double a, double b)
{
  cJSON *p = cJSON_AddArrayToObject(o, k);
  if (!p) return;
  cJSON_AddItemToArray(p, isfinite(a) ? cJSON_CreateNumber(a) : cJSON_CreateNull());
  cJSON_AddItemToArray(p, isfinite(b) ? cJSON_CreateNumber(b) : cJSON_CreateNull());
}

static void json_terms(cJSON *parent, const char *name, const double *t)
{
  cJSON *o = cJSON_AddObjectToObject(parent, name);
  if (!o) return;
  kl_report_num(o, "objective", t[KELVIN_OBJ_J]);
  kl_report_num(o, "rms_force_error", t[KELVIN_OBJ_RMS]);
  kl_report_num(o, "contact_loss", t[KELVIN_OBJ_LOSS]);
  kl_report_num(o, "over_force", t[KELVIN_OBJ_OVER]);
  kl_report_num(o, "time_term", t[KELVIN_OBJ_TIME]);
  kl_report_num(o, "roughness", t[KELVIN_OBJ_ROUGH]);
  kl_report_num(o, "accel", t[KELVIN_OBJ_ACC]);
  kl_report_num(o, "pass_time_s", t[KELVIN_OBJ_T]);
  kl_report_num(o, "substeps", t[KELVIN_OBJ_NSUB]);
}

double kl_report_setting(const kelvin_grind *g, const char *key)
{
  double v = NAN;
  if (kelvin_grind_problem_get(g, key, &v) != KELVIN_OK) v = NAN;
  return v;
}

static const char *text(const kelvin_grind *g, const char *key)
{
  const char *t = kelvin_grind_get_string(g, key);
  return t ? t : "";
}

void kl_report_json_head(cJSON *d, const char *command, const char *device, const char *cfgfile)
{
  cJSON_AddStringToObject(d, "command", command);
  kl_json_meta(d, cfgfile);
  if (!cfgfile) cJSON_AddStringToObject(d, "config", "(built-in default)");
  cJSON_AddStringToObject(d, "device", device);
}

static int json(const kelvin_grind *g, const char *dir, const char *command, const char *device, const char *cfgfile)
{
  cJSON *d = cJSON_CreateObject();
  if (!d) return kl_json_write(dir, "report.json", NULL);
  kl_report_json_head(d, command, device, cfgfile);
  cJSON *p = cJSON_AddObjectToObject(d, "problem");
  cJSON_AddStringToObject(p, "surface", text(g, "workpiece.surface"));
  kl_report_num(p, "path_length_m", kelvin_grind_problem_value(g, KELVIN_PROBLEM_LENGTH));
  kl_report_num(p, "samples", kelvin_grind_problem_value(g, KELVIN_PROBLEM_SAMPLES));
  kl_report_num(p, "tool_radius_m", kl_report_setting(g, "tool.radius"));
  kl_report_num(p, "holder_stiffness_N_m", kl_report_setting(g, "holder.stiffness"));
  kl_report_num(p, "holder_damping_N_s_m", kl_report_setting(g, "holder.damping"));
  kl_report_num(p, "effective_mass_kg", kl_report_setting(g, "tool.mass"));
  cJSON_AddStringToObject(p, "contact_model", text(g, "contact.model"));
  cJSON_AddStringToObject(p, "damping_law", text(g, "contact.law"));
  kl_report_num(p, "contact_stiffness", kelvin_grind_problem_value(g, KELVIN_PROBLEM_CONTACT_STIFFNESS));
  kl_report_num(p, "chi_s_m", kelvin_grind_problem_value(g, KELVIN_PROBLEM_CHI));
  kl_report_num(p, "kv_damping_N_s_m", kelvin_grind_problem_value(g, KELVIN_PROBLEM_KV_DAMPING));
  kl_report_num(p, "target_mean_N", kelvin_grind_problem_value(g, KELVIN_PROBLEM_FORCE_REF));
  cJSON_AddStringToObject(p, "scored_force", text(g, "target.measure"));
  kl_report_num(p, "naive_offset_m", kelvin_grind_problem_value(g, KELVIN_PROBLEM_NAIVE_OFFSET));
  pair(p, "offset_bounds_m", kl_report_setting(g, "offset.min"), kl_report_setting(g, "offset.max"));
  pair(p, "speed_bounds_m_s", kl_report_setting(g, "speed.min"), kl_report_setting(g, "speed.max"));
  pair(p, "protrusion_range_m", kelvin_grind_problem_value(g, KELVIN_PROBLEM_PROTRUSION_MIN),
       kelvin_grind_problem_value(g, KELVIN_PROBLEM_PROTRUSION_MAX));
  kl_report_num(p, "contact_share", kelvin_grind_problem_value(g, KELVIN_PROBLEM_CONTACT_SHARE));
  cJSON_AddStringToObject(p, "tool", text(g, "tool.shape"));
  kl_report_num(p, "friction", kl_report_setting(g, "contact.friction"));
  cJSON *r = cJSON_AddObjectToObject(d, "robot");
  cJSON_AddStringToObject(r, "model", text(g, "robot.model")[0] ? text(g, "robot.model") : "none (constant tool.mass)");
  pair(r, "effective_mass_range_kg", kelvin_grind_problem_value(g, KELVIN_PROBLEM_MASS_MIN),
       kelvin_grind_problem_value(g, KELVIN_PROBLEM_MASS_MAX));
  kl_report_num(r, "speed_bound_m_s", kelvin_grind_problem_value(g, KELVIN_PROBLEM_ROBOT_SPEED));
  cJSON *pl = cJSON_AddObjectToObject(d, "pipeline");
  kl_report_num(pl, "screening_candidates", kelvin_grind_run_value(g, KELVIN_RUN_SCREENED));
  kl_report_num(pl, "screening_best", kelvin_grind_run_value(g, KELVIN_RUN_SCREEN_BEST));
  cJSON_AddStringToObject(pl, "algorithm", text(g, "optimiser.algorithm"));
  kl_report_num(pl, "evaluations", kelvin_grind_run_value(g, KELVIN_RUN_ROLLOUTS));
  kl_report_num(pl, "rollouts_on_host", kelvin_grind_run_value(g, KELVIN_RUN_ROLLOUTS_HOST)); /* of them, on the OpenMP twin although a device was open */
  kl_report_num(pl, "host_below", kelvin_grind_run_value(g, KELVIN_RUN_HOST_BELOW));           /* batches smaller than this go to the host (0: none) */
  cJSON_AddBoolToObject(pl, "time_limited", kelvin_grind_run_value(g, KELVIN_RUN_TIME_LIMITED) == 1);
  kl_report_num(pl, "seed", kl_report_setting(g, "optimiser.seed"));
  cJSON *t = cJSON_AddObjectToObject(d, "time_s");
  kl_report_num(t, "setup", kelvin_grind_run_value(g, KELVIN_RUN_TIME_SETUP));
  kl_report_num(t, "screening", kelvin_grind_run_value(g, KELVIN_RUN_TIME_SCREENING));
  kl_report_num(t, "refinement", kelvin_grind_run_value(g, KELVIN_RUN_TIME_REFINEMENT));
  kl_report_num(t, "verification", kelvin_grind_run_value(g, KELVIN_RUN_TIME_VERIFICATION));
  kl_report_num(t, "total", kelvin_grind_run_value(g, KELVIN_RUN_TIME_TOTAL));
  kl_report_num(t, "correction", kelvin_grind_run_value(g, KELVIN_RUN_TIME_CORRECTION));
  if (kelvin_grind_check_scenarios(g) > 0) { /* the out-of-sample check, after the run (kelvin/robust.h) */
    kl_report_num(t, "check_device", kelvin_grind_check_seconds(g, 0));
    kl_report_num(t, "check_3d", kelvin_grind_check_seconds(g, 1));
  }
  if (strcmp(command, "optimise") == 0) { /* the correction stage (kelvin_grind_correction_value) */
    cJSON *co = cJSON_AddObjectToObject(d, "correction");
    const int ran = kelvin_grind_correction_value(g, KELVIN_CORRECTION_RAN) == 1;
    cJSON_AddBoolToObject(co, "ran", ran);
    cJSON_AddStringToObject(co, "setting", text(g, "optimiser.correct"));
    if (ran) {
      const int from = (int)kelvin_grind_correction_value(g, KELVIN_CORRECTION_FROM);
      const int cp = (int)kelvin_grind_correction_value(g, KELVIN_CORRECTION_PASS);
      cJSON_AddStringToObject(co, "from", kelvin_grind_pass_label(g, from) ? kelvin_grind_pass_label(g, from) : "");
      cJSON_AddStringToObject(co, "pass", cp >= 0 ? kelvin_grind_pass_label(g, cp) : "");
      kl_report_num(co, "iterations", kelvin_grind_correction_value(g, KELVIN_CORRECTION_ITERATIONS));
      kl_report_num(co, "runs_3d", kelvin_grind_correction_value(g, KELVIN_CORRECTION_RUNS));
      kl_report_num(co, "seconds", kelvin_grind_correction_value(g, KELVIN_CORRECTION_SECONDS));
      kl_report_num(co, "predicted_rms_before", kelvin_grind_correction_value(g, KELVIN_CORRECTION_PREDICTED_BEFORE));
      kl_report_num(co, "predicted_rms_after", kelvin_grind_correction_value(g, KELVIN_CORRECTION_PREDICTED_AFTER));
      kl_report_num(co, "verified_rms_before", kelvin_grind_correction_value(g, KELVIN_CORRECTION_VERIFIED_BEFORE));
      kl_report_num(co, "verified_max_before", kelvin_grind_correction_value(g, KELVIN_CORRECTION_MAX_BEFORE));
      kl_report_num(co, "reference_rms_before", kelvin_grind_correction_value(g, KELVIN_CORRECTION_REFERENCE_BEFORE));
      kl_report_num(co, "reference_max_before", kelvin_grind_correction_value(g, KELVIN_CORRECTION_REFERENCE_MAX_BEFORE));
      kl_report_num(co, "verified_rms_loop", kelvin_grind_correction_value(g, KELVIN_CORRECTION_VERIFIED_LOOP));
      kl_report_num(co, "verified_rms_after", kelvin_grind_correction_value(g, KELVIN_CORRECTION_VERIFIED_AFTER));
      kl_report_num(co, "verified_max_after", kelvin_grind_correction_value(g, KELVIN_CORRECTION_MAX_AFTER));
    }
    const char *note = kelvin_grind_correction_note(g);
    cJSON_AddStringToObject(co, "note", note ? note : "");
  }
  const int best = kelvin_grind_best(g);
  cJSON_AddStringToObject(d, "best", best >= 0 ? kelvin_grind_pass_label(g, best) : "");
  cJSON *ps = cJSON_AddArrayToObject(d, "passes");
  for (int i = 0; i < kelvin_grind_npass(g) && ps; ++i) {
    cJSON *o = cJSON_CreateObject();
    if (!o) break;
    cJSON_AddItemToArray(ps, o);
    cJSON_AddStringToObject(o, "label", kelvin_grind_pass_label(g, i));
    kl_report_num(o, "evaluations", kelvin_grind_pass_value(g, i, KELVIN_PASS_ROLLOUTS));
    cJSON_AddStringToObject(o, "stop", kelvin_grind_pass_stop(g, i));
    double terms[KELVIN_OBJ_N];
    kelvin_grind_pass_terms(g, i, 0, terms);
    json_terms(o, "predicted", terms);
    if (kelvin_grind_pass_value(g, i, KELVIN_PASS_VERIFIED) == 1) {
      kelvin_grind_pass_terms(g, i, 1, terms);
      json_terms(o, "verified", terms);
      cJSON *ag = cJSON_AddObjectToObject(o, "agreement");
      kl_report_num(ag, "rms", kelvin_grind_pass_value(g, i, KELVIN_PASS_AGREEMENT));
      kl_report_num(ag, "max", kelvin_grind_pass_value(g, i, KELVIN_PASS_AGREEMENT_MAX));
      cJSON_AddBoolToObject(ag, "flagged", kelvin_grind_pass_value(g, i, KELVIN_PASS_DISAGREE) == 1);
      kl_report_num(ag, "inertia_rms", kelvin_grind_pass_value(g, i, KELVIN_PASS_INERTIA));
      kl_report_num(o, "engine_substeps", kelvin_grind_pass_value(g, i, KELVIN_PASS_SUBSTEPS_VERIFIED));
      kl_report_num(o, "verification_seconds", kelvin_grind_pass_value(g, i, KELVIN_PASS_SECONDS_VERIFIED));
    }
  }
  kl_robust_json(g, d); /* a robust run's or a check's out-of-sample figures (cli/report_robust.h) */
  return kl_json_write(dir, "report.json", d);
}

/* the scored measure's words (target.measure): sensor or contact force, step-averaged or at the samples */
int kl_report_measure(const kelvin_grind *g, int *avg)
{
  const char *m = kelvin_grind_get_string(g, "target.measure");
  m = m ? m : "";
  if (avg) *avg = strcmp(m, "sensor") == 0 || strcmp(m, "averaged") == 0;
  return strncmp(m, "sensor", 6) == 0;
}

static int figure(const kelvin_grind *g, const char *dir, const char *what)
{
  const int ns = kelvin_grind_nsamples(g), best = kelvin_grind_best(g);
  const double nvi = kelvin_grind_run_value(g, KELVIN_RUN_NAIVE);
  const int naive = isfinite(nvi) && nvi >= 0 ? (int)nvi : -1;
  const int bver = kelvin_grind_pass_value(g, best, KELVIN_PASS_VERIFIED) == 1;
  const int nver = naive >= 0 && kelvin_grind_pass_value(g, naive, KELVIN_PASS_VERIFIED) == 1;
  /* a data file for the figure: s, target, naive (verified or predicted), best predicted and verified */
  enum { S, FT, PB, VB, PN, VN, O, V, ON, VNS, N };
  double *c = malloc((size_t)N * ns * sizeof *c);
  if (!c) return -1;
#define COL(j, k) c[(size_t)(j) * ns + (k)]
  /* the scored measure (target.measure): the device's, and the 3-D engine's sensor or contact force */
  series(g, best, KELVIN_SERIES_S, &COL(S, 0), ns);
  series(g, best, KELVIN_SERIES_TARGET, &COL(FT, 0), ns);
  series(g, best, KELVIN_SERIES_SCORED, &COL(PB, 0), ns);
  series(g, best, KELVIN_SERIES_SCORED_VERIFIED, &COL(VB, 0), ns);
  series(g, best, KELVIN_SERIES_OFFSET, &COL(O, 0), ns);
  series(g, best, KELVIN_SERIES_SPEED, &COL(V, 0), ns);
  series(g, naive, KELVIN_SERIES_SCORED, &COL(PN, 0), ns);
  series(g, naive, KELVIN_SERIES_SCORED_VERIFIED, &COL(VN, 0), ns);
  series(g, naive, KELVIN_SERIES_OFFSET, &COL(ON, 0), ns);
  series(g, naive, KELVIN_SERIES_SPEED, &COL(VNS, 0), ns);
  int avg;
  const int sens = kl_report_measure(g, &avg);
  kl_out f;
  if (kl_out_open(&f, dir, "figure_data.csv") != 0) {
    free(c);
    return -1;
  }
  fprintf(f.f, "s_mm,target_N,naive_N,predicted_N,verified_N,naive_offset_mm,offset_mm,naive_speed_mm_s,speed_mm_s\n");
  for (int k = 1; k < ns; ++k) {
    const double fn = naive >= 0 ? (nver ? COL(VN, k) : COL(PN, k)) : NAN;
    fprintf(f.f, "%.6g,%.6g,%.6g,%.6g,", 1e3 * COL(S, k), COL(FT, k), fn, COL(PB, k));
    if (bver)
      fprintf(f.f, "%.6g,", COL(VB, k));
    else
      fprintf(f.f, "NaN,");
    fprintf(f.f, "%.6g,%.6g,%.6g,%.6g\n", naive >= 0 ? 1e3 * COL(ON, k) : NAN, 1e3 * COL(O, k),
            naive >= 0 ? 1e3 * COL(VNS, k) : NAN, 1e3 * COL(V, k));
  }
#undef COL
  free(c);
  if (kl_out_commit(&f) != 0) return -1;
  char script[4096];
  snprintf(script, sizeof script,
           "# kelvin %s: force along the path, and the commands\n"
           "if (!exists('OUTPUT')) OUTPUT = '%s.png'\n"
           "set terminal pngcairo size 1300,950 font ',11'\nset output OUTPUT\nset datafile separator ','\n"
           "set datafile missing 'NaN'\nset grid\nset autoscale xfix\nset multiplot layout 2,1 title 'kelvin %s: %s force "
           "(%s) along the path'\n"
           "set key outside right\nset ylabel 'normal force [N]'\nset xlabel 'path position s [mm]'\n"
           "plot 'figure_data.csv' using 1:2 with lines lw 2 dt 2 lc rgb 'black' title 'target', "
           "'' using 1:3 with lines lw 1.5 lc rgb '#d95f02' title 'naive pass (%s)', "
           "'' using 1:4 with lines lw 1.5 lc rgb '#7570b3' title '%s (device prediction)', "
           "'' using 1:5 with lines lw 2 lc rgb '#1b9e77' title '%s (3-D engine, wrist sensor)'\n"
           "set ylabel 'offset [mm]'\nset y2label 'feed speed [mm/s]'\nset y2tics\nset ytics nomirror\n"
           "plot '' using 1:6 axes x1y1 with lines dt 2 lc rgb '#d95f02' title 'naive offset', "
           "'' using 1:7 axes x1y1 with lines lw 2 lc rgb '#1b9e77' title 'offset', "
           "'' using 1:8 axes x1y2 with lines dt 3 lc rgb '#e7298a' title 'naive speed', "
           "'' using 1:9 axes x1y2 with lines lw 2 lc rgb '#e7298a' title 'speed'\n"
           "unset multiplot\n",
           what, what, what, sens ? (avg ? "wrist-sensor, step-averaged" : "wrist-sensor") : (avg ? "step-averaged contact" : "contact"),
           avg ? "averaged over each sample interval" : "at the samples",
           nver ? "3-D engine, wrist sensor" : "device prediction", kelvin_grind_pass_label(g, best),
           kelvin_grind_pass_label(g, best));
  return kl_cli_gnuplot(NULL, dir, strcmp(what, "optimise") == 0 ? "optimise.png" : "evaluate.png", script) < 0 ? -1 : 0;
}

int kl_report_write(const kelvin_grind *g, const char *dir, const char *command, const char *device, const char *cfgfile)
{
  if (kelvin_grind_best(g) < 0) {
    kl_cli_error("%s: no pass to report", command);
    return -1;
  }
  if (trajectory(g, dir) != 0) return -1;
  if (json(g, dir, command, device, cfgfile) != 0) return -1;
  return figure(g, dir, command);
}

void kl_report_correction(const kelvin_grind *g)
{
  if (kelvin_grind_correction_value(g, KELVIN_CORRECTION_RAN) != 1) return;
  const int from = (int)kelvin_grind_correction_value(g, KELVIN_CORRECTION_FROM), best = kelvin_grind_best(g);
  const double its = kelvin_grind_correction_value(g, KELVIN_CORRECTION_ITERATIONS);
  printf("\ncorrection (the 3-D engine in the loop): '%s' verified %.2f %% RMS, max %.2f %% (at reference accuracy "
         "%.2f %%, max %.2f %%) -> '%s' %.2f %% RMS, max %.2f %% at reference accuracy; predicted %.2f %% -> %.2f %%; "
         "%g iteration%s, %g 3-D runs, %.2f s\n",
         kelvin_grind_pass_label(g, from), 100 * kelvin_grind_correction_value(g, KELVIN_CORRECTION_VERIFIED_BEFORE),
         100 * kelvin_grind_correction_value(g, KELVIN_CORRECTION_MAX_BEFORE),
         100 * kelvin_grind_correction_value(g, KELVIN_CORRECTION_REFERENCE_BEFORE),
         100 * kelvin_grind_correction_value(g, KELVIN_CORRECTION_REFERENCE_MAX_BEFORE), kelvin_grind_pass_label(g, best),
         100 * kelvin_grind_correction_value(g, KELVIN_CORRECTION_VERIFIED_AFTER),
         100 * kelvin_grind_correction_value(g, KELVIN_CORRECTION_MAX_AFTER),
         100 * kelvin_grind_correction_value(g, KELVIN_CORRECTION_PREDICTED_BEFORE),
         100 * kelvin_grind_pass_value(g, best, KELVIN_PASS_RMS), its, its == 1 ? "" : "s",
         kelvin_grind_correction_value(g, KELVIN_CORRECTION_RUNS), kelvin_grind_correction_value(g, KELVIN_CORRECTION_SECONDS));
}

void kl_report_print(const kelvin_grind *g)
{
  printf("| pass | rollouts | predicted RMS error | 3-D verified RMS error | device vs 3-D (RMS) | contact loss | pass time s |\n");
  printf("|---|---|---|---|---|---|---|\n");
  const int best = kelvin_grind_best(g);
  for (int i = 0; i < kelvin_grind_npass(g); ++i) {
    double t[KELVIN_OBJ_N];
    printf("| %s%s | %d | %.2f %% |", kelvin_grind_pass_label(g, i), i == best ? " (best)" : "",
           (int)kelvin_grind_pass_value(g, i, KELVIN_PASS_ROLLOUTS), 100 * kelvin_grind_pass_value(g, i, KELVIN_PASS_RMS));
    if (kelvin_grind_pass_value(g, i, KELVIN_PASS_VERIFIED) == 1) {
      kelvin_grind_pass_terms(g, i, 1, t);
      printf(" %.2f %% | %.2f %%%s | %.2f %% | %.2f |\n", 100 * t[KELVIN_OBJ_RMS],
             100 * kelvin_grind_pass_value(g, i, KELVIN_PASS_AGREEMENT),
             kelvin_grind_pass_value(g, i, KELVIN_PASS_DISAGREE) == 1 ? " (flagged)" : "", 100 * t[KELVIN_OBJ_LOSS],
             t[KELVIN_OBJ_T]);
    } else {
      kelvin_grind_pass_terms(g, i, 0, t);
      printf(" - | - | %.2f %% | %.2f |\n", 100 * t[KELVIN_OBJ_LOSS], t[KELVIN_OBJ_T]);
    }
  }
}
