/* cli/report_removal.c: outputs of a run with material removal (report_removal.h; docs/design.md section 9). */
#include "report_removal.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* the figures' maps are drawn from at most this many cells along the path and across it (every su-th,
 * sw-th cell): gnuplot's pm3d reads about 4e5 points a second, and a default grid has millions of cells */
#define FIG_NU 800
#define FIG_NW 80

int kl_removal_active(const kelvin_grind *g)
{
  double kp = 0;
  return kelvin_grind_get(g, "removal.preston", &kp) == KELVIN_OK && kp > 0;
}

static double value(const kelvin_grind *g, int plan, int pass, int ver, kelvin_removal_value what)
{
  return kelvin_grind_removal_value(g, plan, pass, ver, what);
}

/* 1 if the plan was verified in the 3-D engine */
static int verified(const kelvin_grind *g, int plan)
{
  return isfinite(value(g, plan, -1, 1, KELVIN_REMOVAL_VOLUME));
}

/* the grid's cells: their size along the path du and across it dw [m] (NaN if not known) */
static void spacing(const kelvin_grind *g, double *du, double *dw)
{
  if (kelvin_grind_removal_grid_spacing(g, du, dw) != KELVIN_OK) *du = *dw = NAN;
}

/* the grid after the plan (pass -1) or a pass: x, y, removed, error (each nullable), ncell values each */
static int grid(const kelvin_grind *g, int plan, int pass, int ver, double *x, double *y, double *removed, double *error)
{
  if (kelvin_grind_removal_grid(g, plan, pass, ver, x, y, removed, error) != KELVIN_OK) {
    kl_cli_error("removal: %s", kelvin_grind_errmsg(g));
    return -1;
  }
  return 0;
}

/* removal.csv (x_m, y_m, removed_m, pass1_m, ...), surface.csv (x_m, y_m, error_m) of plan 0, and, when
 * there is a second plan (the naive one), naive_grid.csv (x_m, y_m, removed_m, error_m) for the figures;
 * plus removal_figure.dat: the maps the figures draw, every su-th cell along and sw-th across, in mm and
 * um, one block per row along the path (blank lines between: gnuplot's pm3d scans) */
static int grids(const kelvin_grind *g, const char *dir, int *fig_naive)
{
  int nu = 0, nw = 0;
  if (kelvin_grind_removal_grid_size(g, &nu, &nw) != KELVIN_OK || nu < 1 || nw < 1) {
    kl_cli_error("removal: no grid to report");
    return -1;
  }
  const size_t nc = (size_t)nu * nw;
  const int np = kelvin_grind_removal_npass(g, 0), v0 = verified(g, 0);
  const int naive = kelvin_grind_removal_nplans(g) > 1, v1 = naive && verified(g, 1);
  const int ncol = 4 + np + (naive ? 2 : 0); /* x, y, removed, error, the passes, naive removed and error */
  double *c = malloc((size_t)ncol * nc * sizeof *c);
  if (!c) {
    kl_cli_error("out of memory (a grid of %d x %d cells)", nu, nw);
    return -1;
  }
#define COL(j) (c + (size_t)(j) * nc)
  int rc = grid(g, 0, -1, v0, COL(0), COL(1), COL(2), COL(3));
  for (int k = 0; k < np && rc == 0; ++k) rc = grid(g, 0, k, v0, NULL, NULL, COL(4 + k), NULL);
  if (naive && rc == 0) rc = grid(g, 1, -1, v1, NULL, NULL, COL(4 + np), COL(5 + np));
  kl_out f;
  if (rc == 0 && kl_out_open(&f, dir, "removal.csv") == 0) {
    fprintf(f.f, "x_m,y_m,removed_m");
    for (int k = 0; k < np; ++k) fprintf(f.f, ",pass%d_m", k + 1);
    fprintf(f.f, "\n");
    for (size_t i = 0; i < nc; ++i) {
      fprintf(f.f, "%.9g,%.9g,%.9g", COL(0)[i], COL(1)[i], COL(2)[i]);
      for (int k = 0; k < np; ++k) fprintf(f.f, ",%.9g", COL(4 + k)[i]);
      fprintf(f.f, "\n");
    }
    rc = kl_out_commit(&f);
  } else {
    rc = -1;
  }
  if (rc == 0 && kl_out_open(&f, dir, "surface.csv") == 0) {
    fprintf(f.f, "x_m,y_m,error_m\n");
    for (size_t i = 0; i < nc; ++i) fprintf(f.f, "%.9g,%.9g,%.9g\n", COL(0)[i], COL(1)[i], COL(3)[i]);
    rc = kl_out_commit(&f);
  } else {
    rc = -1;
  }
  if (rc == 0 && naive) {
    if (kl_out_open(&f, dir, "naive_grid.csv") == 0) {
      fprintf(f.f, "x_m,y_m,removed_m,error_m\n");
      for (size_t i = 0; i < nc; ++i)
        fprintf(f.f, "%.9g,%.9g,%.9g,%.9g\n", COL(0)[i], COL(1)[i], COL(4 + np)[i], COL(5 + np)[i]);
      rc = kl_out_commit(&f);
    } else {
      rc = -1;
    }
  } else if (rc == 0) {
    rc = kl_out_remove(dir, "naive_grid.csv"); /* (an earlier optimise's into the same folder) */
  }
  /* the figures' data */
  const int su = (nu + FIG_NU - 1) / FIG_NU, sw = (nw + FIG_NW - 1) / FIG_NW;
  *fig_naive = naive;
  if (rc == 0 && kl_out_open(&f, dir, "removal_figure.dat") == 0) {
    fprintf(f.f, "# x_mm y_mm removed_um error_um%s (every %d-th cell along the path, %d-th across)\n",
            naive ? " naive_removed_um naive_error_um" : "", su, sw);
    for (int i = 0; i < nu; i += su) {
      for (int j = 0; j < nw; j += sw) {
        const size_t q = (size_t)i * nw + j;
        fprintf(f.f, "%.6g %.6g %.6g %.6g", 1e3 * COL(0)[q], 1e3 * COL(1)[q], 1e6 * COL(2)[q], 1e6 * COL(3)[q]);
        if (naive) fprintf(f.f, " %.6g %.6g", 1e6 * COL(4 + np)[q], 1e6 * COL(5 + np)[q]);
        fprintf(f.f, "\n");
      }
      fprintf(f.f, "\n");
    }
    rc = kl_out_commit(&f);
  } else if (rc == 0) {
    rc = -1;
  }
#undef COL
  free(c);
  return rc;
}

/* passes.csv: every pass of every plan, a row per path sample: the commands and the force, the device
 * model's and the 3-D engine's wrist sensor (nan where the plan was not verified) */
static int passes(const kelvin_grind *g, const char *dir)
{
  const int ns = kelvin_grind_nsamples(g);
  double *c = malloc((size_t)5 * ns * sizeof *c);
  if (!c) {
    kl_cli_error("out of memory");
    return -1;
  }
  double *s = c, *o = c + ns, *v = c + 2 * (size_t)ns, *fp = c + 3 * (size_t)ns, *fv = c + 4 * (size_t)ns;
  kl_out f;
  if (kl_out_open(&f, dir, "passes.csv") != 0) {
    free(c);
    return -1;
  }
  fprintf(f.f, "plan,pass,s_m,offset_m,speed_m_s,force_N,force_verified_N\n");
  int rc = 0;
  for (int p = 0; p < kelvin_grind_removal_nplans(g) && rc == 0; ++p) {
    const int ver = verified(g, p);
    for (int k = 0; k < kelvin_grind_removal_npass(g, p) && rc == 0; ++k) {
      if (kelvin_grind_removal_series(g, p, k, 0, KELVIN_REMOVAL_S, s) != KELVIN_OK ||
          kelvin_grind_removal_series(g, p, k, 0, KELVIN_REMOVAL_OFFSET, o) != KELVIN_OK ||
          kelvin_grind_removal_series(g, p, k, 0, KELVIN_REMOVAL_SPEED, v) != KELVIN_OK ||
          kelvin_grind_removal_series(g, p, k, 0, KELVIN_REMOVAL_FORCE, fp) != KELVIN_OK) {
        kl_cli_error("removal: %s", kelvin_grind_errmsg(g));
        rc = -1;
        break;
      }
      if (!ver || kelvin_grind_removal_series(g, p, k, 1, KELVIN_REMOVAL_FORCE, fv) != KELVIN_OK)
        for (int q = 0; q < ns; ++q) fv[q] = NAN;
      const char *label = kelvin_grind_removal_label(g, p);
      for (int q = 0; q < ns; ++q) {
        kl_csv_field(f.f, label ? label : "");
        fprintf(f.f, ",%d,%.9g,%.9g,%.9g,%.9g,%.9g\n", k + 1, s[q], o[q], v[q], fp[q], fv[q]);
      }
    }
  }
  free(c);
  if (rc != 0) {
    kl_out_abort(&f);
    return -1;
  }
  return kl_out_commit(&f);
}

/* profile.csv: s_m, target_m (0: heights are above the target), before_m (the track before the plan),
 * then for every plan and pass its height after the pass, the device model's and the 3-D engine's:
 * <plan>_pass<k>_m, <plan>_pass<k>_verified_m */
static int profile(const kelvin_grind *g, const char *dir)
{
  const int ns = kelvin_grind_nsamples(g), npl = kelvin_grind_removal_nplans(g);
  int ncol = 2;
  for (int p = 0; p < npl; ++p) ncol += 2 * kelvin_grind_removal_npass(g, p);
  double *c = malloc((size_t)ncol * ns * sizeof *c);
  if (!c) {
    kl_cli_error("out of memory");
    return -1;
  }
#define COL(j) (c + (size_t)(j) * ns)
  int rc = 0;
  if (kelvin_grind_removal_series(g, 0, 0, 0, KELVIN_REMOVAL_S, COL(0)) != KELVIN_OK ||
      kelvin_grind_removal_series(g, 0, 0, 0, KELVIN_REMOVAL_BEFORE, COL(1)) != KELVIN_OK)
    rc = -1;
  for (int p = 0, j = 2; p < npl && rc == 0; ++p) {
    const int ver = verified(g, p);
    for (int k = 0; k < kelvin_grind_removal_npass(g, p) && rc == 0; ++k, j += 2) {
      if (kelvin_grind_removal_series(g, p, k, 0, KELVIN_REMOVAL_AFTER, COL(j)) != KELVIN_OK) rc = -1;
      if (!ver || kelvin_grind_removal_series(g, p, k, 1, KELVIN_REMOVAL_AFTER, COL(j + 1)) != KELVIN_OK)
        for (int q = 0; q < ns; ++q) COL(j + 1)[q] = NAN;
    }
  }
  if (rc != 0) {
    kl_cli_error("removal: %s", kelvin_grind_errmsg(g));
    free(c);
    return -1;
  }
  kl_out f;
  if (kl_out_open(&f, dir, "profile.csv") != 0) {
    free(c);
    return -1;
  }
  fprintf(f.f, "s_m,target_m,before_m");
  for (int p = 0; p < npl; ++p) {
    const char *label = kelvin_grind_removal_label(g, p);
    for (int k = 0; k < kelvin_grind_removal_npass(g, p); ++k) {
      fprintf(f.f, ",");
      kl_csv_field(f.f, label ? label : ""); /* (the library's labels: planned, naive, user) */
      fprintf(f.f, "_pass%d_m,", k + 1);
      kl_csv_field(f.f, label ? label : "");
      fprintf(f.f, "_pass%d_verified_m", k + 1);
    }
  }
  fprintf(f.f, "\n");
  for (int q = 0; q < ns; ++q) {
    fprintf(f.f, "%.9g,0,%.9g", COL(0)[q], COL(1)[q]);
    for (int j = 2; j < ncol; ++j) fprintf(f.f, ",%.9g", COL(j)[q]);
    fprintf(f.f, "\n");
  }
#undef COL
  free(c);
  return kl_out_commit(&f);
}

/* the numbers of a pass (or of the plan, pass -1) at one level (0 the device model, 1 the 3-D engine) */
static void values(cJSON *parent, const char *name, const kelvin_grind *g, int plan, int pass, int ver)
{
  cJSON *o = cJSON_AddObjectToObject(parent, name);
  if (!o) return;
  kl_report_num(o, "residual_rms_m", value(g, plan, pass, ver, KELVIN_REMOVAL_RESIDUAL_RMS));
  kl_report_num(o, "residual_max_m", value(g, plan, pass, ver, KELVIN_REMOVAL_RESIDUAL_MAX));
  kl_report_num(o, "gouge_m", value(g, plan, pass, ver, KELVIN_REMOVAL_GOUGE));
  kl_report_num(o, "volume_m3", value(g, plan, pass, ver, KELVIN_REMOVAL_VOLUME));
  kl_report_num(o, "volume_law_m3", value(g, plan, pass, ver, KELVIN_REMOVAL_VOLUME_LAW));
  kl_report_num(o, "time_s", value(g, plan, pass, ver, KELVIN_REMOVAL_TIME));
  kl_report_num(o, "force_max_N", value(g, plan, pass, ver, KELVIN_REMOVAL_FORCE_MAX));
  kl_report_num(o, "removed_max_m", value(g, plan, pass, ver, KELVIN_REMOVAL_REMOVED_MAX));
  kl_report_num(o, "tool_radius_m", value(g, plan, pass, ver, KELVIN_REMOVAL_TOOL_RADIUS));
  if (pass < 0) { /* the plan against its limits */
    const double tol = kl_report_setting(g, "removal.tolerance"), gl = kl_report_setting(g, "removal.gouge");
    cJSON_AddBoolToObject(o, "within_tolerance", value(g, plan, -1, ver, KELVIN_REMOVAL_RESIDUAL_MAX) <= tol);
    cJSON_AddBoolToObject(o, "within_gouge", value(g, plan, -1, ver, KELVIN_REMOVAL_GOUGE) <= gl);
  }
}

static int json(const kelvin_grind *g, const char *dir, const char *command, const char *device, const char *cfgfile)
{
  cJSON *d = cJSON_CreateObject();
  if (!d) return kl_json_write(dir, "report.json", NULL);
  kl_report_json_head(d, command, device, cfgfile);
  cJSON *p = cJSON_AddObjectToObject(d, "problem");
  const char *surf = kelvin_grind_get_string(g, "workpiece.surface"), *shape = kelvin_grind_get_string(g, "tool.shape");
  cJSON_AddStringToObject(p, "surface", surf ? surf : "");
  cJSON_AddStringToObject(p, "tool", shape ? shape : "");
  kl_report_num(p, "path_length_m", kelvin_grind_length(g));
  kl_report_num(p, "samples", kelvin_grind_nsamples(g));
  kl_report_num(p, "tool_radius_m", kl_report_setting(g, "tool.radius"));
  kl_report_num(p, "holder_stiffness_N_m", kl_report_setting(g, "holder.stiffness"));
  kl_report_num(p, "max_force_N", kl_report_setting(g, "target.max_force"));
  cJSON *sb = cJSON_AddArrayToObject(p, "speed_bounds_m_s");
  if (sb) {
    cJSON_AddItemToArray(sb, cJSON_CreateNumber(kl_report_setting(g, "speed.min")));
    cJSON_AddItemToArray(sb, cJSON_CreateNumber(kl_report_setting(g, "speed.max")));
  }
  cJSON *r = cJSON_AddObjectToObject(d, "removal");
  kl_report_num(r, "preston_m2_N", kl_report_setting(g, "removal.preston"));
  kl_report_num(r, "spindle_rpm", kl_report_setting(g, "tool.spindle_rpm"));
  kl_report_num(r, "lead_deg", kl_report_setting(g, "tool.lead_deg"));
  kl_report_num(r, "allowance_m", kl_report_setting(g, "removal.allowance"));
  kl_report_num(r, "tolerance_m", kl_report_setting(g, "removal.tolerance"));
  kl_report_num(r, "gouge_limit_m", kl_report_setting(g, "removal.gouge"));
  kl_report_num(r, "grinding_ratio", kl_report_setting(g, "removal.grinding_ratio"));
  kl_report_num(r, "max_passes", kl_report_setting(g, "removal.max_passes"));
  int nu = 0, nw = 0;
  kelvin_grind_removal_grid_size(g, &nu, &nw);
  double du, dw;
  spacing(g, &du, &dw);
  cJSON *gr = cJSON_AddObjectToObject(r, "grid");
  kl_report_num(gr, "cells_along", nu);
  kl_report_num(gr, "cells_across", nw);
  kl_report_num(gr, "du_m", du);
  kl_report_num(gr, "dw_m", dw);
  kl_report_num(gr, "cell_area_m2", du * dw);
  kl_report_num(gr, "width_m", kl_report_setting(g, "removal.width"));
  kl_report_num(gr, "resolution_m", kl_report_setting(g, "removal.resolution"));
  cJSON *t = cJSON_AddObjectToObject(d, "time_s");
  kl_report_num(t, "setup", kelvin_grind_run_value(g, KELVIN_RUN_TIME_SETUP));
  kl_report_num(t, "refinement", kelvin_grind_run_value(g, KELVIN_RUN_TIME_REFINEMENT));
  kl_report_num(t, "verification", kelvin_grind_run_value(g, KELVIN_RUN_TIME_VERIFICATION));
  kl_report_num(t, "total", kelvin_grind_run_value(g, KELVIN_RUN_TIME_TOTAL));
  cJSON *pl = cJSON_AddArrayToObject(d, "plans");
  for (int i = 0; i < kelvin_grind_removal_nplans(g) && pl; ++i) {
    cJSON *o = cJSON_CreateObject();
    if (!o) break;
    cJSON_AddItemToArray(pl, o);
    const char *label = kelvin_grind_removal_label(g, i);
    cJSON_AddStringToObject(o, "label", label ? label : "");
    const int np = kelvin_grind_removal_npass(g, i), ver = verified(g, i);
    kl_report_num(o, "passes", np);
    cJSON_AddBoolToObject(o, "verified_3d", ver); /* (then "verified" holds its numbers) */
    values(o, "predicted", g, i, -1, 0);
    if (ver) values(o, "verified", g, i, -1, 1);
    cJSON *ps = cJSON_AddArrayToObject(o, "pass");
    for (int k = 0; k < np && ps; ++k) {
      cJSON *q = cJSON_CreateObject();
      if (!q) break;
      cJSON_AddItemToArray(ps, q);
      kl_report_num(q, "pass", k + 1);
      values(q, "predicted", g, i, k, 0);
      if (ver) values(q, "verified", g, i, k, 1);
    }
  }
  return kl_json_write(dir, "report.json", d);
}

/* removal.png and surface.png: the maps (plan 0 beside the naive plan when there is one), profile.png: the
 * track's height before and after each pass of plan 0 and after the naive plan, the tolerance band above
 * the target and the gouge limit below it */
static int figures(const kelvin_grind *g, const char *dir, const kl_cli_common *c, int naive)
{
  const char *l0 = kelvin_grind_removal_label(g, 0), *l1 = naive ? kelvin_grind_removal_label(g, 1) : "";
  char t0[128], t1[128];
  kl_gp_str(t0, sizeof t0, l0 ? l0 : "");
  kl_gp_str(t1, sizeof t1, l1 ? l1 : "");
  const int v0 = verified(g, 0), v1 = naive && verified(g, 1);
  const char *w0 = v0 ? "3-D engine" : "device model", *w1 = v1 ? "3-D engine" : "device model";
  char script[8192];
  int n = snprintf(script, sizeof script,
                   "# kelvin: the depth removed along the normal, on the part (x, y in the workpiece frame)\n"
                   "if (!exists('OUTPUT')) OUTPUT = 'removal.png'\n"
                   "set terminal pngcairo size 1300,%d font ',11'\nset output OUTPUT\n"
                   "set view map\nset pm3d map corners2color c1\nset palette rgb 21,22,23\nset cbrange [0:*]\n"
                   "set xlabel 'x [mm]'\nset ylabel 'y [mm]'\nset cblabel 'removed [um]'\nset autoscale xfix\n"
                   "set autoscale yfix\n%s"
                   "set title %s.' plan: removed depth ('.'%s'.')'\n"
                   "splot 'removal_figure.dat' using 1:2:3 with pm3d notitle\n",
                   naive ? 900 : 500, naive ? "set multiplot layout 2,1\n" : "", t0, w0);
  if (naive)
    n += snprintf(script + n, sizeof script - (size_t)n,
                  "set title %s.' plan: removed depth ('.'%s'.')'\n"
                  "splot 'removal_figure.dat' using 1:2:5 with pm3d notitle\nunset multiplot\n",
                  t1, w1);
  int rc = kl_cli_gnuplot(c, dir, "removal.png", script);
  if (rc < 0) return -1;
  if (rc > 0) return 0; /* no gnuplot: the notice is printed once; the scripts of the others are not needed */
  /* the colours span 4 gouge limits below the target to 4 tolerances above it (white: on the target), and
   * saturate beyond (the stock the tool never reached, off the track) */
  const double tol = kl_report_setting(g, "removal.tolerance"), gl = kl_report_setting(g, "removal.gouge");
  const double lo = gl > 0 ? -4e6 * gl : -1, hi = tol > 0 ? 4e6 * tol : 1;
  n = snprintf(script, sizeof script,
               "# kelvin: the final surface against the target (> 0 above it, < 0 below: a gouge)\n"
               "if (!exists('OUTPUT')) OUTPUT = 'surface.png'\n"
               "set terminal pngcairo size 1300,%d font ',11'\nset output OUTPUT\n"
               "set view map\nset pm3d map corners2color c1\n"
               "set palette defined (%.6g '#2166ac', 0 '#f7f7f7', %.6g '#b2182b')\nset cbrange [%.6g:%.6g]\n"
               "set xlabel 'x [mm]'\nset ylabel 'y [mm]'\n"
               "set cblabel 'error [um], > 0 above the target'\n"
               "set autoscale xfix\nset autoscale yfix\n%s"
               "set title %s.' plan: the surface it leaves ('.'%s'.')'\n"
               "splot 'removal_figure.dat' using 1:2:4 with pm3d notitle\n",
               naive ? 900 : 500, lo, hi, lo, hi, naive ? "set multiplot layout 2,1\n" : "", t0, w0);
  if (naive)
    n += snprintf(script + n, sizeof script - (size_t)n,
                  "set title %s.' plan: the surface it leaves ('.'%s'.')'\n"
                  "splot 'removal_figure.dat' using 1:2:6 with pm3d notitle\nunset multiplot\n",
                  t1, w1);
  if (kl_cli_gnuplot(c, dir, "surface.png", script) < 0) return -1;
  /* the profile: columns of profile.csv (s, target, before, then two per pass of each plan) */
  const int np0 = kelvin_grind_removal_npass(g, 0), np1 = naive ? kelvin_grind_removal_npass(g, 1) : 0;
  n = snprintf(script, sizeof script,
               "# kelvin: the track's height above the target along the path, before and after each pass\n"
               "if (!exists('OUTPUT')) OUTPUT = 'profile.png'\n"
               "set terminal pngcairo size 1300,950 font ',11'\nset output OUTPUT\nset datafile separator ','\n"
               "set datafile missing 'nan'\nset grid\nset autoscale xfix\nset key outside right\n"
               "set xlabel 'path position s [mm]'\nset ylabel 'height above the target [um]'\n"
               "set multiplot layout 2,1 title 'kelvin: the track before and after each pass (%s)'\n"
               "set object 1 rect from graph 0, first 0 to graph 1, first %.6g fc rgb '#d8f0d8' fs solid noborder behind\n"
               "set object 2 rect from graph 0, first %.6g to graph 1, first 0 fc rgb '#f4d0d0' fs solid noborder behind\n",
               v0 ? "solid: 3-D engine, dashed: device model" : "device model", 1e6 * tol, -1e6 * gl);
  for (int zoom = 0; zoom < 2; ++zoom) {
    if (zoom) /* the finish: the tolerance band and the gouge limit */
      n += snprintf(script + n, sizeof script - (size_t)n, "set yrange [%.6g:%.6g]\n", -4e6 * gl, 4e6 * tol);
    n += snprintf(script + n, sizeof script - (size_t)n,
                  "plot 'profile.csv' using ($1*1e3):($2*1e6) with lines lw 2 dt 2 lc rgb 'black' title 'target', "
                  "'' using ($1*1e3):($3*1e6) with lines lw 1.5 lc rgb '#666666' title 'before'");
    for (int k = 0; k < np0 && n < (int)sizeof script - 600; ++k) {
      const int col = 4 + 2 * k + (v0 ? 1 : 0);
      n += snprintf(script + n, sizeof script - (size_t)n,
                    ", '' using ($1*1e3):($%d*1e6) with lines lw 2 lc %d title %s.' pass %d'", col, k + 1, t0, k + 1);
      if (v0 && k == np0 - 1)
        n += snprintf(script + n, sizeof script - (size_t)n,
                      ", '' using ($1*1e3):($%d*1e6) with lines lw 1 dt 2 lc %d title %s.' pass %d (device)'", col - 1,
                      k + 1, t0, k + 1);
    }
    if (np1 > 0 && n < (int)sizeof script - 600)
      n += snprintf(script + n, sizeof script - (size_t)n,
                    ", '' using ($1*1e3):($%d*1e6) with lines lw 2 lc rgb '#d95f02' title %s.' after %d pass%s'",
                    4 + 2 * np0 + 2 * (np1 - 1) + (v1 ? 1 : 0), t1, np1, np1 == 1 ? "" : "es");
    n += snprintf(script + n, sizeof script - (size_t)n, "\n");
  }
  snprintf(script + n, sizeof script - (size_t)n, "unset multiplot\n");
  return kl_cli_gnuplot(c, dir, "profile.png", script) < 0 ? -1 : 0;
}

int kl_removal_write(const kelvin_grind *g, const char *dir, const char *command, const char *device,
                     const char *cfgfile, const kl_cli_common *c)
{
  if (kelvin_grind_removal_nplans(g) < 1 || kelvin_grind_removal_npass(g, 0) < 1) {
    kl_cli_error("%s: no removal plan to report", command);
    return -1;
  }
  int naive = 0;
  if (grids(g, dir, &naive) != 0 || passes(g, dir) != 0 || profile(g, dir) != 0 ||
      json(g, dir, command, device, cfgfile) != 0)
    return -1;
  return figures(g, dir, c, naive);
}

int kl_removal_stale(const char *dir, const char *command, int removal)
{
  static const char *const force[] = {"trajectory.csv", "waypoints.csv", "figure_data.csv", NULL};
  static const char *const rem[] = {"removal.csv", "surface.csv", "naive_grid.csv", "passes.csv", "profile.csv",
                                    "removal_figure.dat", "removal.png", "removal.png.gp", "surface.png",
                                    "surface.png.gp", "profile.png", "profile.png.gp", NULL};
  for (const char *const *n = removal ? force : rem; *n; ++n)
    if (kl_out_remove(dir, *n) != 0) return -1;
  if (!removal) return 0;
  char png[64], gp[64]; /* the force figure: optimise.png or evaluate.png */
  snprintf(png, sizeof png, "%s.png", command);
  snprintf(gp, sizeof gp, "%s.png.gp", command);
  return kl_out_remove(dir, png) != 0 || kl_out_remove(dir, gp) != 0 ? -1 : 0;
}

void kl_removal_print(const kelvin_grind *g)
{
  const double tol = kl_report_setting(g, "removal.tolerance"), gl = kl_report_setting(g, "removal.gouge");
  int nu = 0, nw = 0;
  kelvin_grind_removal_grid_size(g, &nu, &nw);
  double du, dw;
  spacing(g, &du, &dw);
  printf(", material removal: Preston k_p %.3g m^2/N, spindle %.0f rpm, grid %d x %d cells of %.3g x %.3g um; the "
         "target: within %.3g um above it, no gouge deeper than %.3g um\n\n",
         kl_report_setting(g, "removal.preston"), kl_report_setting(g, "tool.spindle_rpm"), nu, nw, 1e6 * du, 1e6 * dw, 1e6 * tol, 1e6 * gl);
  printf("| plan | model | passes | time s | residual RMS um | residual max um | worst gouge um | removed mm^3 "
         "(grid / law) | peak force N | within %.3g um / gouge %.3g um |\n",
         1e6 * tol, 1e6 * gl);
  printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (int p = 0; p < kelvin_grind_removal_nplans(g); ++p)
    for (int ver = 0; ver < 2; ++ver) {
      if (ver && !verified(g, p)) continue;
      const double rmax = value(g, p, -1, ver, KELVIN_REMOVAL_RESIDUAL_MAX), gg = value(g, p, -1, ver, KELVIN_REMOVAL_GOUGE);
      const char *label = kelvin_grind_removal_label(g, p);
      printf("| %s | %s | %d | %.2f | %.2f | %.2f | %.2f | %.4g / %.4g | %.2f | %s / %s |\n", label ? label : "?",
             ver ? "3-D engine" : "device model", kelvin_grind_removal_npass(g, p),
             value(g, p, -1, ver, KELVIN_REMOVAL_TIME), 1e6 * value(g, p, -1, ver, KELVIN_REMOVAL_RESIDUAL_RMS),
             1e6 * rmax, 1e6 * gg, 1e9 * value(g, p, -1, ver, KELVIN_REMOVAL_VOLUME),
             1e9 * value(g, p, -1, ver, KELVIN_REMOVAL_VOLUME_LAW), value(g, p, -1, ver, KELVIN_REMOVAL_FORCE_MAX),
             rmax <= tol ? "yes" : "no", gg <= gl ? "yes" : "no");
    }
}
