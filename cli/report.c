/* cli/report.c: outputs of `kelvin optimise` and `kelvin evaluate` (report.h). */
#include "cli/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kelvin/contact.h"

static const char *const surf_names[] = {"plane", "cylinder", "sphere", "saddle", "mesh"};

/* sampled offsets and speeds of a pass (its control points through the problem basis, or samples) */
static void pass_ov(const kl_problem *pb, const kl_pass *ps, double *o, double *v)
{
  if (ps->nx == 2 * pb->ns) {
    memcpy(o, ps->x, (size_t)pb->ns * sizeof *o);
    memcpy(v, ps->x + pb->ns, (size_t)pb->ns * sizeof *v);
  } else {
    kl_problem_expand(pb, ps->x, o, v);
  }
}

static int trajectory(const kl_problem *pb, const kl_opt_result *res, const char *dir)
{
  const kl_pass *b = &res->pass[res->best];
  const int ns = pb->ns;
  double *o = malloc((size_t)ns * sizeof *o), *v = malloc((size_t)ns * sizeof *v);
  if (!o || !v) {
    free(o);
    free(v);
    kl_cli_error("out of memory");
    return -1;
  }
  pass_ov(pb, b, o, v);
  /* the device's wrist-sensor reading, step-averaged and at the samples, as the 3-D engine's beside it */
  double *sa = malloc((size_t)2 * ns * sizeof *sa);
  kl_out f;
  if (!sa || kl_out_open(&f, dir, "trajectory.csv") != 0) {
    free(o);
    free(v);
    free(sa);
    return -1;
  }
  kl_problem_measure(pb, KL_MEASURE_SENSOR, b->so, o, v, sa);
  kl_problem_measure(pb, KL_MEASURE_SENSOR_INSTANT, b->so, o, v, sa + ns);
  fprintf(f.f, "s_m,x_m,y_m,z_m,nx,ny,nz,offset_m,speed_m_s,time_s,target_N,predicted_N,verified_N,"
               "predicted_inst_N,verified_inst_N,contact\n");
  for (int k = 0; k < ns; ++k) {
    const double *p = &pb->p[3 * k], *n = &pb->nrm[3 * k];
    fprintf(f.f, "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%.9g,", pb->s[k], p[0], p[1], p[2], n[0], n[1],
            n[2], o[k], v[k], b->so[KL_SO_T * ns + k], pb->ft[k], sa[k]);
    if (b->verified)
      fprintf(f.f, "%.9g,%.9g,%.9g,%d\n", b->vFavg[k], sa[ns + k], b->vF[k], b->vc[k]);
    else
      fprintf(f.f, "nan,%.9g,nan,%d\n", sa[ns + k], (int)b->so[KL_SO_C * ns + k]);
  }
  free(sa);
  const int rc = kl_out_commit(&f);
  /* robot waypoints: the tool pose and time per sample (kl_problem_waypoints: what the 3-D verification
   * follows): TCP on the tool axis (tool centre p + (R - offset) n, plus R along the tool z), tool z into
   * the part (-n turned by tool.lead_deg about y), tool x along the path; quaternion w, x, y, z */
  double *wt = malloc((size_t)ns * sizeof *wt), *wp = malloc((size_t)ns * 3 * sizeof *wp), *wq = malloc((size_t)ns * 4 * sizeof *wq);
  if (rc == 0 && wt && wp && wq && kl_out_open(&f, dir, "waypoints.csv") == 0) {
    kl_problem_waypoints(pb, o, v, wt, wp, wq);
    fprintf(f.f, "time_s,x_m,y_m,z_m,qw,qx,qy,qz,speed_m_s\n");
    for (int k = 0; k < ns; ++k)
      fprintf(f.f, "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", wt[k], wp[3 * k], wp[3 * k + 1], wp[3 * k + 2],
              wq[4 * k], wq[4 * k + 1], wq[4 * k + 2], wq[4 * k + 3], v[k]);
    free(o);
    free(v);
    free(wt);
    free(wp);
    free(wq);
    return kl_out_commit(&f);
  }
  free(o);
  free(v);
  free(wt);
  free(wp);
  free(wq);
  return -1;
}

/* cJSON helpers: a number (non-finite becomes null, never "-nan"), a pair [lo, hi] */
static void num(cJSON *o, const char *k, double v) { cJSON_AddItemToObject(o, k, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull()); }
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
  num(o, "objective", t[KL_OBJ_J]);
  num(o, "rms_force_error", t[KL_OBJ_RMS]);
  num(o, "contact_loss", t[KL_OBJ_LOSS]);
  num(o, "over_force", t[KL_OBJ_OVER]);
  num(o, "time_term", t[KL_OBJ_TIME]);
  num(o, "roughness", t[KL_OBJ_ROUGH]);
  num(o, "accel", t[KL_OBJ_ACC]);
  num(o, "pass_time_s", t[KL_OBJ_T]);
  num(o, "substeps", t[KL_OBJ_NSUB]);
}

static int json(const kl_problem *pb, const kl_opt_result *res, const char *dir, const char *command,
                const char *device, const char *cfgfile)
{
  const kl_settings *s = &pb->set;
  double hmin = pb->h[0], hmax = pb->h[0], mmin = pb->meff[0], mmax = pb->meff[0];
  for (int k = 1; k < pb->ns; ++k) {
    hmin = fmin(hmin, pb->h[k]);
    hmax = fmax(hmax, pb->h[k]);
    mmin = fmin(mmin, pb->meff[k]);
    mmax = fmax(mmax, pb->meff[k]);
  }
  cJSON *d = cJSON_CreateObject();
  if (!d) return kl_json_write(dir, "report.json", NULL);
  cJSON_AddStringToObject(d, "command", command);
  kl_json_meta(d, cfgfile);
  if (!cfgfile) cJSON_AddStringToObject(d, "config", "(built-in default)");
  cJSON_AddStringToObject(d, "device", device);
  cJSON *p = cJSON_AddObjectToObject(d, "problem");
  cJSON_AddStringToObject(p, "surface", surf_names[s->surface]);
  num(p, "path_length_m", pb->length);
  num(p, "samples", pb->ns);
  num(p, "tool_radius_m", s->tool_R);
  num(p, "holder_stiffness_N_m", s->holder_K);
  num(p, "holder_damping_N_s_m", s->holder_D);
  num(p, "effective_mass_kg", s->tool_mass);
  cJSON_AddStringToObject(p, "contact_model", kelvin_model_name(s->model));
  cJSON_AddStringToObject(p, "damping_law", kelvin_law_name(s->law));
  num(p, "contact_stiffness", pb->Kc);
  num(p, "chi_s_m", pb->chi);
  num(p, "kv_damping_N_s_m", pb->Dc);
  num(p, "target_mean_N", pb->gp[KL_GP_FREF]);
  static const char *const measure_names[] = {"instantaneous", "averaged", "sensor_instantaneous", "sensor"};
  cJSON_AddStringToObject(p, "scored_force", measure_names[s->measure & 3]);
  num(p, "naive_offset_m", pb->naive_o);
  pair(p, "offset_bounds_m", s->o_min, s->o_max);
  pair(p, "speed_bounds_m_s", s->v_min, s->v_max);
  pair(p, "protrusion_range_m", hmin, hmax);
  num(p, "contact_share", pb->contact_share);
  cJSON_AddStringToObject(p, "tool", s->tool_shape == KL_TOOL_DISC ? "disc" : "ball");
  num(p, "friction", s->friction);
  cJSON *r = cJSON_AddObjectToObject(d, "robot");
  cJSON_AddStringToObject(r, "model", s->robot[0] ? s->robot : "none (constant tool.mass)");
  pair(r, "effective_mass_range_kg", mmin, mmax);
  num(r, "speed_bound_m_s", pb->robot_vmax);
  cJSON *pl = cJSON_AddObjectToObject(d, "pipeline");
  num(pl, "screening_candidates", res->screened);
  num(pl, "screening_best", res->screen_best);
  cJSON_AddStringToObject(pl, "algorithm", s->algorithm);
  num(pl, "evaluations", (double)res->evaluations);
  num(pl, "rollouts_on_host", (double)res->host_rollouts); /* of them, on the OpenMP twin although a device was open */
  num(pl, "host_below", (double)res->host_below);           /* batches smaller than this go to the host (0: none) */
  cJSON_AddBoolToObject(pl, "time_limited", res->time_limited);
  num(pl, "seed", (double)s->seed);
  cJSON *t = cJSON_AddObjectToObject(d, "time_s");
  num(t, "setup", res->time.setup);
  num(t, "screening", res->time.screening);
  num(t, "refinement", res->time.refinement);
  num(t, "verification", res->time.verification);
  num(t, "total", res->time.total);
  cJSON_AddStringToObject(d, "best", res->best >= 0 ? res->pass[res->best].label : "");
  cJSON *ps = cJSON_AddArrayToObject(d, "passes");
  for (int i = 0; i < res->npass && ps; ++i) {
    const kl_pass *q = &res->pass[i];
    cJSON *o = cJSON_CreateObject();
    if (!o) break;
    cJSON_AddItemToArray(ps, o);
    cJSON_AddStringToObject(o, "label", q->label);
    num(o, "evaluations", q->evals);
    cJSON_AddStringToObject(o, "stop", q->stop);
    json_terms(o, "predicted", q->obj);
    if (q->verified) {
      json_terms(o, "verified", q->vobj);
      cJSON *ag = cJSON_AddObjectToObject(o, "agreement");
      num(ag, "rms", q->agree_rms);
      num(ag, "max", q->agree_max);
      cJSON_AddBoolToObject(ag, "flagged", q->disagree);
      num(ag, "inertia_rms", q->inertia_rms);
      num(o, "engine_substeps", (double)q->vsub);
      num(o, "verification_seconds", q->vseconds);
    }
  }
  return kl_json_write(dir, "report.json", d);
}

static int figure(const kl_problem *pb, const kl_opt_result *res, const char *dir, const char *what)
{
  const int ns = pb->ns;
  const kl_pass *b = &res->pass[res->best], *nv = res->naive >= 0 ? &res->pass[res->naive] : NULL;
  /* a data file for the figure: s, target, naive (verified or predicted), best predicted and verified */
  kl_out f;
  if (kl_out_open(&f, dir, "figure_data.csv") != 0) return -1;
  fprintf(f.f, "s_mm,target_N,naive_N,predicted_N,verified_N,naive_offset_mm,offset_mm,naive_speed_mm_s,speed_mm_s\n");
  double *o = malloc((size_t)ns * sizeof *o), *v = malloc((size_t)ns * sizeof *v);
  double *on = malloc((size_t)ns * sizeof *on), *vn = malloc((size_t)ns * sizeof *vn);
  if (!o || !v || !on || !vn) {
    free(o);
    free(v);
    free(on);
    free(vn);
    kl_out_abort(&f);
    return -1;
  }
  pass_ov(pb, b, o, v);
  if (nv) pass_ov(pb, nv, on, vn);
  /* the scored measure (target.measure): the device's, and the 3-D engine's sensor or contact force */
  const int ms = pb->set.measure, avg = ms & KL_MEASURE_AVG_BIT, sens = ms & KL_MEASURE_SENSOR_BIT;
  double *pm = malloc((size_t)2 * ns * sizeof *pm);
  if (!pm) {
    free(o);
    free(v);
    free(on);
    free(vn);
    kl_out_abort(&f);
    return -1;
  }
  kl_problem_measure(pb, ms, b->so, o, v, pm);
  if (nv) kl_problem_measure(pb, ms, nv->so, on, vn, pm + ns);
#define KL_V3(p, k) (sens ? (avg ? (p)->vFavg[k] : (p)->vF[k]) : (avg ? (p)->vFcavg[k] : (p)->vFc[k]))
  for (int k = 1; k < ns; ++k) {
    const double fn = nv ? (nv->verified ? KL_V3(nv, k) : pm[ns + k]) : NAN;
    fprintf(f.f, "%.6g,%.6g,%.6g,%.6g,", 1e3 * pb->s[k], pb->ft[k], fn, pm[k]);
    if (b->verified)
      fprintf(f.f, "%.6g,", KL_V3(b, k));
    else
      fprintf(f.f, "NaN,");
    fprintf(f.f, "%.6g,%.6g,%.6g,%.6g\n", nv ? 1e3 * on[k] : NAN, 1e3 * o[k], nv ? 1e3 * vn[k] : NAN, 1e3 * v[k]);
  }
#undef KL_V3
  free(pm);
  free(o);
  free(v);
  free(on);
  free(vn);
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
           nv && nv->verified ? "3-D engine, wrist sensor" : "device prediction", b->label, b->label);
  return kl_cli_gnuplot(NULL, dir, strcmp(what, "optimise") == 0 ? "optimise.png" : "evaluate.png", script) < 0 ? -1 : 0;
}

int kl_report_write(const kl_problem *pb, const kl_opt_result *res, const char *dir, const char *command,
                    const char *device, const char *cfgfile)
{
  if (res->best < 0) {
    kl_cli_error("%s: no pass to report", command);
    return -1;
  }
  if (trajectory(pb, res, dir) != 0) return -1;
  if (json(pb, res, dir, command, device, cfgfile) != 0) return -1;
  return figure(pb, res, dir, command);
}

void kl_report_print(const kl_problem *pb, const kl_opt_result *res)
{
  printf("| pass | rollouts | predicted RMS error | 3-D verified RMS error | device vs 3-D (RMS) | contact loss | pass time s |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < res->npass; ++i) {
    const kl_pass *p = &res->pass[i];
    printf("| %s%s | %d | %.2f %% |", p->label, i == res->best ? " (best)" : "", p->evals, 100 * p->obj[KL_OBJ_RMS]);
    if (p->verified)
      printf(" %.2f %% | %.2f %%%s | %.2f %% | %.2f |\n", 100 * p->vobj[KL_OBJ_RMS], 100 * p->agree_rms,
             p->disagree ? " (flagged)" : "", 100 * p->vobj[KL_OBJ_LOSS], p->vobj[KL_OBJ_T]);
    else
      printf(" - | - | %.2f %% | %.2f |\n", 100 * p->obj[KL_OBJ_LOSS], p->obj[KL_OBJ_T]);
  }
  (void)pb;
}
