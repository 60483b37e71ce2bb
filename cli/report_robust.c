/* cli/report_robust.c: a robust run's and an out-of-sample check's outputs (report_robust.h). */
#include "report_robust.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

static const char *const metric_key[] = {"rms", "peak_N", "least_N", "loss", "in_band"};
static const char *const source_name[] = {"device", "3-D"};

/* the sources the check has (the 3-D engine's only when it ran) */
static int nsources(const kelvin_grind *g, int pass)
{
  double share;
  return kelvin_grind_check_band(g, pass, 1, &share, NULL, NULL, NULL) == KELVIN_OK ? 2 : 1;
}

static int by_value(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* the q-quantile (the ceil(q n)-th smallest) of the n sorted values v */
static double quantile(const double *v, int n, double q)
{
  int r = (int)ceil(q * n - 1e-9);
  r = r < 1 ? 1 : r > n ? n : r;
  return n > 0 ? v[r - 1] : NAN;
}

static int write_values(const kelvin_grind *g, const char *dir, const int *passes, int nw)
{
  const int S = kelvin_grind_check_scenarios(g);
  double *v = malloc((size_t)5 * S * sizeof *v);
  kl_out f;
  if (!v || kl_out_open(&f, dir, "robust.csv") != 0) {
    free(v);
    return -1;
  }
  fprintf(f.f, "pass,source,scenario,rms,peak_N,least_N,loss,in_band\n");
  for (int w = 0; w < nw; ++w)
    for (int src = 0; src < nsources(g, passes[w]); ++src) {
      for (int m = 0; m < 5; ++m) kelvin_grind_check_values(g, passes[w], src, (kelvin_check_metric)m, v + (size_t)m * S);
      for (int s = 0; s < S; ++s) {
        kl_csv_field(f.f, kelvin_grind_pass_label(g, passes[w]));
        fprintf(f.f, ",%s,%d,%.6g,%.6g,%.6g,%.6g,%.0f\n", source_name[src], s, v[s], v[S + s], v[2 * S + s], v[3 * S + s],
                v[4 * S + s]);
      }
    }
  free(v);
  return kl_out_commit(&f);
}

/* robust_bands.csv: s, target, and per pass P5, P25, P50, P75, P95 of the scored force over the scenarios (the 3-D
 * engine's where it ran, else the device's); robust_peak.csv: each pass's peak force per scenario, for the
 * histogram */
static int write_bands(const kelvin_grind *g, const char *dir, const int *passes, int nw, int *src_used)
{
  const int S = kelvin_grind_check_scenarios(g), ns = kelvin_grind_nsamples(g);
  double *F = malloc((size_t)nw * S * ns * sizeof *F), *col = malloc((size_t)S * sizeof *col);
  double *s = malloc((size_t)ns * sizeof *s), *ft = malloc((size_t)ns * sizeof *ft);
  int rc = -1;
  kl_out f;
  if (!F || !col || !s || !ft) goto done;
  kelvin_grind_pass_series(g, passes[0], KELVIN_SERIES_S, s);
  kelvin_grind_pass_series(g, passes[0], KELVIN_SERIES_TARGET, ft);
  for (int w = 0; w < nw; ++w) {
    src_used[w] = nsources(g, passes[w]) - 1;
    if (kelvin_grind_check_force(g, passes[w], src_used[w], F + (size_t)w * S * ns) != KELVIN_OK) goto done;
  }
  if (kl_out_open(&f, dir, "robust_bands.csv") != 0) goto done;
  fprintf(f.f, "s_mm,target_N");
  for (int w = 0; w < nw; ++w)
    for (int q = 0; q < 5; ++q) {
      static const char *const pn[] = {"p5", "p25", "p50", "p75", "p95"};
      fputc(',', f.f);
      char name[96];
      snprintf(name, sizeof name, "%s_%s_N", kelvin_grind_pass_label(g, passes[w]), pn[q]);
      kl_csv_field(f.f, name);
    }
  fputc('\n', f.f);
  for (int k = 1; k < ns; ++k) {
    fprintf(f.f, "%.6g,%.6g", 1e3 * s[k], ft[k]);
    for (int w = 0; w < nw; ++w) {
      int n = 0;
      for (int sc = 0; sc < S; ++sc) {
        const double x = F[((size_t)w * S + sc) * ns + k];
        if (!isnan(x)) col[n++] = x;
      }
      qsort(col, (size_t)n, sizeof *col, by_value);
      static const double qs[] = {0.05, 0.25, 0.5, 0.75, 0.95};
      for (int q = 0; q < 5; ++q) fprintf(f.f, ",%.6g", quantile(col, n, qs[q]));
    }
    fputc('\n', f.f);
  }
  if (kl_out_commit(&f) != 0) goto done;
  if (kl_out_open(&f, dir, "robust_peak.csv") != 0) goto done;
  for (int w = 0; w < nw; ++w) {
    fprintf(f.f, w ? "," : "");
    kl_csv_field(f.f, kelvin_grind_pass_label(g, passes[w]));
  }
  fputc('\n', f.f);
  double *pk = malloc((size_t)nw * S * sizeof *pk);
  if (!pk) {
    kl_out_abort(&f);
    goto done;
  }
  for (int w = 0; w < nw; ++w) kelvin_grind_check_values(g, passes[w], src_used[w], KELVIN_CHECK_PEAK, pk + (size_t)w * S);
  for (int sc = 0; sc < S; ++sc) {
    for (int w = 0; w < nw; ++w) fprintf(f.f, "%s%.6g", w ? "," : "", pk[(size_t)w * S + sc]);
    fputc('\n', f.f);
  }
  free(pk);
  rc = kl_out_commit(&f);
done:
  free(F);
  free(col);
  free(s);
  free(ft);
  return rc;
}

int kl_robust_write(const kelvin_grind *g, const char *dir, const kl_cli_common *c)
{
  int passes[KELVIN_CHECK_MAXPASS], src[KELVIN_CHECK_MAXPASS];
  const int nw = kelvin_grind_check_passes(g, passes);
  if (nw < 1) { /* no check: an earlier run's check outputs go */
    static const char *const names[] = {"robust.csv", "robust_bands.csv", "robust_peak.csv", "robust.png", "robust.png.gp"};
    for (int i = 0; i < 5; ++i)
      if (kl_out_remove(dir, names[i]) != 0) return -1;
    return 0;
  }
  if (write_values(g, dir, passes, nw) != 0 || write_bands(g, dir, passes, nw, src) != 0) return -1;
  /* the figure: each pass's bands (P5-P95, P25-P75, the median) against the target, then the peak force's
   * histograms; colours per pass */
  static const char *const colour[] = {"#d95f02", "#1b9e77", "#7570b3", "#e7298a"};
  double band[2] = {NAN, NAN};
  kelvin_grind_check_band(g, passes[0], 0, NULL, NULL, NULL, band);
  char script[8192], *p = script;
  const char *end = script + sizeof script;
  p += snprintf(p, (size_t)(end - p),
                "# kelvin: a robust run's out-of-sample check, %d scenarios\n"
                "if (!exists('OUTPUT')) OUTPUT = 'robust.png'\n"
                "set terminal pngcairo size 1300,%d font ',11'\nset output OUTPUT\nset datafile separator ','\n"
                "set datafile missing 'NaN'\nset grid\nset key outside right\n"
                "set multiplot layout %d,1 title 'out of sample: %d fresh scenarios'\n"
                "set xlabel 'path position s [mm]'\nset ylabel 'scored force [N]'\nset autoscale xfix\n",
                kelvin_grind_check_scenarios(g), 420 * (nw + 1), nw + 1, kelvin_grind_check_scenarios(g));
  for (int w = 0; w < nw; ++w) {
    char label[160];
    kl_gp_str(label, sizeof label, kelvin_grind_pass_label(g, passes[w]));
    const int c0 = 3 + 5 * w; /* its P5 column */
    p += snprintf(p, (size_t)(end - p),
                  "set title %s.' (%s)'\n"
                  "plot 'robust_bands.csv' using 1:%d:%d with filledcurves fs transparent solid 0.25 lc rgb '%s' "
                  "title 'P5-P95', '' using 1:%d:%d with filledcurves fs transparent solid 0.45 lc rgb '%s' "
                  "title 'P25-P75', '' using 1:%d with lines lw 2 lc rgb '%s' title 'median', "
                  "'' using 1:2 with lines lw 2 dt 2 lc rgb 'black' title 'target', "
                  "%g with lines dt 3 lc rgb 'red' title 'band', %g with lines dt 3 lc rgb 'red' notitle\n",
                  label, src[w] ? "3-D engine" : "device", c0, c0 + 4, colour[w % 4], c0 + 1, c0 + 3, colour[w % 4],
                  c0 + 2, colour[w % 4], band[0], band[1]);
  }
  p += snprintf(p, (size_t)(end - p),
                "set title 'peak force per scenario'\nset xlabel 'peak scored force [N]'\nset ylabel 'scenarios'\n"
                "unset autoscale x\nset autoscale x\nstats 'robust_peak.csv' using 1 nooutput\nlo = STATS_min\nhi = STATS_max\n");
  for (int w = 1; w < nw; ++w)
    p += snprintf(p, (size_t)(end - p), "stats 'robust_peak.csv' using %d nooutput\nlo = (STATS_min < lo) ? STATS_min : lo\n"
                  "hi = (STATS_max > hi) ? STATS_max : hi\n", w + 1);
  p += snprintf(p, (size_t)(end - p), "bw = (hi > lo) ? (hi - lo) / 40.0 : 1.0\nbin(x) = bw * floor(x / bw) + bw / 2\n"
                "set style fill transparent solid 0.5\nset boxwidth bw\nplot ");
  for (int w = 0; w < nw; ++w) {
    char label[160];
    kl_gp_str(label, sizeof label, kelvin_grind_pass_label(g, passes[w]));
    p += snprintf(p, (size_t)(end - p), "%s'robust_peak.csv' using (bin($%d)):(1.0) smooth freq with boxes lc rgb '%s' "
                  "title %s", w ? ", " : "", w + 1, colour[w % 4], label);
  }
  p += snprintf(p, (size_t)(end - p), "\nunset multiplot\n");
  if (p >= end - 1) {
    kl_cli_error("robust.png: the figure's script is too long");
    return -1;
  }
  return kl_cli_gnuplot(c, dir, "robust.png", script) < 0 ? -1 : 0;
}

void kl_robust_json(const kelvin_grind *g, cJSON *doc)
{
  int passes[KELVIN_CHECK_MAXPASS];
  const int nw = kelvin_grind_check_passes(g, passes);
  if (nw < 1) return;
  cJSON *c = cJSON_AddObjectToObject(doc, "check");
  cJSON_AddNumberToObject(c, "scenarios", kelvin_grind_check_scenarios(g));
  const char *why;
  cJSON_AddNumberToObject(c, "failed_3d", kelvin_grind_check_failed(g, &why));
  if (why && why[0]) cJSON_AddStringToObject(c, "first_failure", why);
  double band[2];
  kelvin_grind_check_band(g, passes[0], 0, NULL, NULL, NULL, band);
  cJSON *b = cJSON_AddArrayToObject(c, "band_N");
  cJSON_AddItemToArray(b, cJSON_CreateNumber(band[0]));
  cJSON_AddItemToArray(b, cJSON_CreateNumber(band[1]));
  cJSON *arr = cJSON_AddArrayToObject(c, "passes");
  for (int w = 0; w < nw; ++w) {
    cJSON *pj = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, pj);
    cJSON_AddStringToObject(pj, "pass", kelvin_grind_pass_label(g, passes[w]));
    const double ro = kelvin_grind_pass_robust(g, passes[w]);
    if (isfinite(ro)) cJSON_AddNumberToObject(pj, "robust_objective", ro);
    for (int src = 0; src < nsources(g, passes[w]); ++src) {
      cJSON *sj = cJSON_AddObjectToObject(pj, src ? "engine_3d" : "device");
      for (int m = 0; m < 4; ++m) {
        kelvin_check_summary su;
        if (kelvin_grind_check_summary(g, passes[w], src, (kelvin_check_metric)m, &su) != KELVIN_OK) continue;
        cJSON *mj = cJSON_AddObjectToObject(sj, metric_key[m]);
        cJSON_AddNumberToObject(mj, "mean", su.mean);
        cJSON_AddNumberToObject(mj, "p50", su.p50);
        cJSON_AddNumberToObject(mj, "p95", su.p95);
        cJSON_AddNumberToObject(mj, "p95_ci_lo", su.p95_lo);
        cJSON_AddNumberToObject(mj, "p95_ci_hi", su.p95_hi);
        cJSON_AddNumberToObject(mj, "worst", su.worst);
        cJSON_AddNumberToObject(mj, "n", su.n);
      }
      double share, lo, hi;
      kelvin_grind_check_band(g, passes[w], src, &share, &lo, &hi, NULL);
      cJSON *bj = cJSON_AddObjectToObject(sj, "in_band");
      cJSON_AddNumberToObject(bj, "share", share);
      cJSON_AddNumberToObject(bj, "ci_lo", lo);
      cJSON_AddNumberToObject(bj, "ci_hi", hi);
    }
  }
}

void kl_robust_print(const kelvin_grind *g)
{
  int passes[KELVIN_CHECK_MAXPASS];
  const int nw = kelvin_grind_check_passes(g, passes);
  if (nw < 1) return;
  double band[2];
  kelvin_grind_check_band(g, passes[0], 0, NULL, NULL, NULL, band);
  printf("\nout of sample: %d fresh scenarios; RMS force error (%% of F_ref) mean, P50, P95 [95 %% CI], worst; peak "
         "force P95 and worst; in the band [%.3g, %.3g] N along the whole pass [95 %% CI]\n\n",
         kelvin_grind_check_scenarios(g), band[0], band[1]);
  printf("| pass | source | RMS mean | RMS P50 | RMS P95 | RMS worst | peak P95 N | peak worst N | contact loss mean | in band |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (int w = 0; w < nw; ++w)
    for (int src = 0; src < nsources(g, passes[w]); ++src) {
      kelvin_check_summary r, pk, ls;
      double share, lo, hi;
      if (kelvin_grind_check_summary(g, passes[w], src, KELVIN_CHECK_RMS, &r) != KELVIN_OK ||
          kelvin_grind_check_summary(g, passes[w], src, KELVIN_CHECK_PEAK, &pk) != KELVIN_OK ||
          kelvin_grind_check_summary(g, passes[w], src, KELVIN_CHECK_LOSS, &ls) != KELVIN_OK)
        continue;
      kelvin_grind_check_band(g, passes[w], src, &share, &lo, &hi, NULL);
      printf("| %s | %s | %.2f %% | %.2f %% | %.2f %% [%.2f, %.2f] | %.2f %% | %.3g | %.3g | %.2f %% | %.1f %% [%.1f, %.1f] |\n",
             kelvin_grind_pass_label(g, passes[w]), source_name[src], 100 * r.mean, 100 * r.p50, 100 * r.p95,
             100 * r.p95_lo, 100 * r.p95_hi, 100 * r.worst, pk.p95, pk.worst, 100 * ls.mean, 100 * share, 100 * lo,
             100 * hi);
    }
  const char *why;
  const int nf = kelvin_grind_check_failed(g, &why);
  if (nf > 0) printf("\n%d 3-D runs failed (counted out of the band); the first: %s\n", nf, why);
}
