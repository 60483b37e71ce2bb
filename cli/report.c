/* cli/report.c: outputs of `kelvin optimise` and `kelvin evaluate` (report.h). */
#include "cli/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const model_names[] = {"kv", "hc"};
static const char *const law_names[] = {"hunt-crossley", "lankarani-nikravesh", "flores", "gonthier", "exact"};
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
  kl_out f;
  if (kl_out_open(&f, dir, "trajectory.csv") != 0) {
    free(o);
    free(v);
    return -1;
  }
  fprintf(f.f, "# kelvin: the %s pass; forces: step-averaged over the interval ending at the sample and at the "
               "sample; predicted: the device's 1-D contact force; verified: the 3-D engine's wrist sensor (holder force "
               "+ weight along the tool axis)\n",
          b->label);
  fprintf(f.f, "s_m,x_m,y_m,z_m,nx,ny,nz,offset_m,speed_m_s,time_s,target_N,predicted_N,verified_N,"
               "predicted_inst_N,verified_inst_N,contact\n");
  for (int k = 0; k < ns; ++k) {
    const double *p = &pb->p[3 * k], *n = &pb->nrm[3 * k];
    fprintf(f.f, "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%.9g,", pb->s[k], p[0], p[1], p[2], n[0], n[1],
            n[2], o[k], v[k], b->so[KL_SO_T * ns + k], pb->ft[k], b->so[KL_SO_FAVG * ns + k]);
    if (b->verified)
      fprintf(f.f, "%.9g,%.9g,%.9g,%d\n", b->vFavg[k], b->so[KL_SO_F * ns + k], b->vF[k], b->vc[k]);
    else
      fprintf(f.f, ",%.9g,,%d\n", b->so[KL_SO_F * ns + k], (int)b->so[KL_SO_C * ns + k]);
  }
  const int rc = kl_out_commit(&f);
  /* robot waypoints: the tool pose and time per sample (kl_problem_waypoints: what the 3-D verification
   * follows) */
  double *wt = malloc((size_t)ns * sizeof *wt), *wp = malloc((size_t)ns * 3 * sizeof *wp), *wq = malloc((size_t)ns * 4 * sizeof *wq);
  if (rc == 0 && wt && wp && wq && kl_out_open(&f, dir, "waypoints.csv") == 0) {
    kl_problem_waypoints(pb, o, v, wt, wp, wq);
    fprintf(f.f, "# tool pose per sample: TCP on the tool axis (tool centre p + (R - offset) n, plus R along the tool z), "
                 "tool z into the part (-n turned by tool.lead_deg about y), tool x along the path; time from the start\n");
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

static void json_terms(FILE *f, const char *name, const double *t)
{
  fprintf(f,
          "\"%s\": {\"objective\": %.9g, \"rms_force_error\": %.9g, \"contact_loss\": %.6g, \"over_force\": %.6g, "
          "\"time_term\": %.6g, \"roughness\": %.6g, \"accel\": %.6g, \"pass_time_s\": %.6g, \"substeps\": %.0f}",
          name, t[KL_OBJ_J], t[KL_OBJ_RMS], t[KL_OBJ_LOSS], t[KL_OBJ_OVER], t[KL_OBJ_TIME], t[KL_OBJ_ROUGH],
          t[KL_OBJ_ACC], t[KL_OBJ_T], t[KL_OBJ_NSUB]);
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
  kl_out f;
  if (kl_out_open(&f, dir, "report.json") != 0) return -1;
  fprintf(f.f, "{\n  \"command\": \"%s\",\n  \"config\": \"%s\",\n  \"device\": \"%s\",\n", command,
          cfgfile ? cfgfile : "(built-in default)", device);
  fprintf(f.f,
          "  \"problem\": {\"surface\": \"%s\", \"path_length_m\": %.6g, \"samples\": %d, \"tool_radius_m\": %g, "
          "\"holder_stiffness_N_m\": %g, \"holder_damping_N_s_m\": %g, \"effective_mass_kg\": %g, \"contact_model\": "
          "\"%s\", \"damping_law\": \"%s\", \"contact_stiffness\": %.6g, \"chi_s_m\": %.6g, \"kv_damping_N_s_m\": %.6g, "
          "\"target_mean_N\": %.6g, \"scored_force\": \"%s\", \"naive_offset_m\": %.6g, \"offset_bounds_m\": [%g, %g], "
          "\"speed_bounds_m_s\": [%g, %g], \"protrusion_range_m\": [%.6g, %.6g], \"contact_share\": %.6g, \"tool\": \"%s\", "
          "\"friction\": %g},\n",
          surf_names[s->surface], pb->length, pb->ns, s->tool_R, s->holder_K, s->holder_D, s->tool_mass,
          model_names[s->model == KL_MODEL_KV ? 0 : 1], law_names[s->law], pb->Kc, pb->chi, pb->Dc, pb->gp[KL_GP_FREF],
          s->averaged ? "averaged" : "instantaneous", pb->naive_o, s->o_min, s->o_max, s->v_min, s->v_max, hmin,
          hmax, pb->contact_share, s->tool_shape == KL_TOOL_DISC ? "disc" : "ball", s->friction);
  fprintf(f.f, "  \"robot\": {\"model\": \"%s\", \"effective_mass_range_kg\": [%.6g, %.6g], \"speed_bound_m_s\": %.6g},\n",
          s->robot[0] ? s->robot : "none (constant tool.mass)", mmin, mmax, pb->robot_vmax);
  fprintf(f.f, "  \"pipeline\": {\"screening_candidates\": %d, \"screening_best\": %.9g, \"algorithm\": \"%s\", "
               "\"evaluations\": %ld, \"time_limited\": %s, \"seed\": %lu},\n",
          res->screened, res->screen_best, s->algorithm, res->evaluations, res->time_limited ? "true" : "false", s->seed);
  fprintf(f.f, "  \"time_s\": {\"setup\": %.4g, \"screening\": %.4g, \"refinement\": %.4g, \"verification\": %.4g, "
               "\"total\": %.4g},\n",
          res->time.setup, res->time.screening, res->time.refinement, res->time.verification, res->time.total);
  fprintf(f.f, "  \"best\": \"%s\",\n  \"passes\": [\n", res->best >= 0 ? res->pass[res->best].label : "");
  for (int i = 0; i < res->npass; ++i) {
    const kl_pass *p = &res->pass[i];
    fprintf(f.f, "    {\"label\": \"%s\", \"evaluations\": %d, \"stop\": \"%s\", ", p->label, p->evals, p->stop);
    json_terms(f.f, "predicted", p->obj);
    if (p->verified) {
      fprintf(f.f, ", ");
      json_terms(f.f, "verified", p->vobj);
      fprintf(f.f, ", \"agreement\": {\"rms\": %.6g, \"max\": %.6g, \"flagged\": %s, \"inertia_rms\": %.6g}, "
                   "\"engine_substeps\": %ld",
              p->agree_rms, p->agree_max, p->disagree ? "true" : "false", p->inertia_rms, p->vsub);
    }
    fprintf(f.f, "}%s\n", i + 1 < res->npass ? "," : "");
  }
  fprintf(f.f, "  ]\n}\n");
  return kl_out_commit(&f);
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
  const int avg = pb->set.averaged;
  for (int k = 1; k < ns; ++k) {
    const double fn = nv ? (nv->verified ? (avg ? nv->vFavg[k] : nv->vF[k]) : nv->so[(avg ? KL_SO_FAVG : KL_SO_F) * ns + k])
                         : NAN;
    fprintf(f.f, "%.6g,%.6g,%.6g,%.6g,", 1e3 * pb->s[k], pb->ft[k], fn, b->so[(avg ? KL_SO_FAVG : KL_SO_F) * ns + k]);
    if (b->verified)
      fprintf(f.f, "%.6g,", avg ? b->vFavg[k] : b->vF[k]);
    else
      fprintf(f.f, "NaN,");
    fprintf(f.f, "%.6g,%.6g,%.6g,%.6g\n", nv ? 1e3 * on[k] : NAN, 1e3 * o[k], nv ? 1e3 * vn[k] : NAN, 1e3 * v[k]);
  }
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
           what, what, what, pb->set.averaged ? "step-averaged" : "instantaneous",
           pb->set.averaged ? "averaged over each sample interval" : "at the samples",
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
