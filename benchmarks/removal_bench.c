/* benchmarks/removal_bench.c: material removal (docs/design.md section 9) against the height field's cell size.
 *
 * `kelvin_grind_plan` on a config with a removal: section (default examples/optimise_removal.yaml), through the
 * public API as any program would call it, at removal.resolution = the config's cell (its removal.resolution, or
 * the default derived from the Hertz patch) times each of --scales (default 4, 2, 1: coarser to the config's),
 * --runs times each (default 3):
 *   - the grid (cells along x across) and the wall time, medians over the runs, of the plan's device-model part
 *     (planning: the planned plan's passes each planned on the surface the engine left, the naive plan predicted)
 *     and of the 3-D engine's part (both plans' passes run in the engine), as kelvin_grind_plan reports them
 *     (kelvin_grind_run_value KELVIN_RUN_TIME_REFINEMENT and KELVIN_RUN_TIME_VERIFICATION: in closed loop the
 *     two interleave, so no single instant splits them);
 *   - for the planned and the naive plan, the device model against the 3-D engine: the removed volume (and
 *     its ratio), the track's residual (RMS, max) and the worst gouge, passes and total time.
 * Prints a Markdown table on stdout (run from the repository root: the config's path is as given).
 *   removal_bench [CONFIG] [--runs N] [--scales LIST] [--cpu]
 *
 * Checked before a row is printed (a run with wrong results gets no row and the program exits 1):
 *   - both plans exist, have passes and were verified in the 3-D engine (every number finite);
 *   - volume conservation in each model: the grid's removed volume against the law's time integral of
 *     k_p F v_rel, within 10 % (the grid's resolution; docs/design.md section 9.2);
 *   - repeated runs give the same plan (the same passes and, to 1e-9 relative, the same 3-D volume): the
 *     planner and the engine are deterministic, so only the times may differ. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kelvin/grind.h>
#include <kelvin/kelvin.h>
#include <kelvin/removal.h>

#include "benchmarks/bench_util.h"

#define MAXSCALE 8

typedef struct plan_row {
  int npass;
  double v[2][6]; /* [device, 3-D][volume, volume by the law, residual RMS, residual max, gouge, time] */
} plan_row;

static const kelvin_removal_value WHAT[6] = {KELVIN_REMOVAL_VOLUME, KELVIN_REMOVAL_VOLUME_LAW,
                                             KELVIN_REMOVAL_RESIDUAL_RMS, KELVIN_REMOVAL_RESIDUAL_MAX,
                                             KELVIN_REMOVAL_GOUGE, KELVIN_REMOVAL_TIME};

/* the numbers of plan p, checked; 0 or -1 (a message on stderr) */
static int collect(const kelvin_grind *g, int p, plan_row *r)
{
  r->npass = kelvin_grind_removal_npass(g, p);
  if (r->npass < 1) {
    fprintf(stderr, "removal_bench: plan %d has no passes\n", p);
    return -1;
  }
  for (int ver = 0; ver < 2; ++ver)
    for (int k = 0; k < 6; ++k) {
      r->v[ver][k] = kelvin_grind_removal_value(g, p, -1, ver, WHAT[k]);
      if (!isfinite(r->v[ver][k])) {
        fprintf(stderr, "removal_bench: plan '%s': %s number %d is not finite (not verified?)\n",
                kelvin_grind_removal_label(g, p), ver ? "3-D" : "device", k);
        return -1;
      }
    }
  for (int ver = 0; ver < 2; ++ver) {
    const double vg = r->v[ver][0], vl = r->v[ver][1];
    if (!(vg > 0) || fabs(vg - vl) > 0.1 * vl) {
      fprintf(stderr, "removal_bench: plan '%s' (%s): grid volume %.4g m^3 against the law's %.4g m^3: more than 10 %% apart\n",
              kelvin_grind_removal_label(g, p), ver ? "3-D engine" : "device model", vg, vl);
      return -1;
    }
  }
  return 0;
}

int main(int argc, char **argv)
{
  const char *usage = "usage: removal_bench [CONFIG] [--runs N] [--scales LIST] [--cpu]\n"
                      "  CONFIG    a config with a removal: section [examples/optimise_removal.yaml]\n"
                      "  --runs N  repeats per cell size (medians of the times) [3]\n"
                      "  --scales  the cell sizes, as multiples of the default cell, comma-separated [4,2,1]\n"
                      "  --cpu     plan on the OpenMP twin instead of the default OpenCL device\n";
  const char *config = "examples/optimise_removal.yaml";
  int runs = 3, cpu = 0, nscale = 3;
  double scale[MAXSCALE] = {4, 2, 1};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
      if (runs < 1 || runs > KL_BENCH_MAXREP) return kl_bench_usage(argv[i], usage);
    } else if (strcmp(argv[i], "--scales") == 0 && i + 1 < argc) {
      nscale = 0;
      for (char *p = argv[++i], *e; *p && nscale < MAXSCALE; p = *e ? e + 1 : e) {
        scale[nscale] = strtod(p, &e);
        if (e == p || !(scale[nscale] > 0)) return kl_bench_usage(argv[i], usage);
        ++nscale;
      }
    } else if (strcmp(argv[i], "--cpu") == 0) {
      cpu = 1;
    } else if (argv[i][0] != '-') {
      config = argv[i];
    } else {
      return kl_bench_usage(argv[i], usage);
    }
  }
  kelvin_device *dev = NULL;
  if (kelvin_device_create(&dev) != KELVIN_OK || kelvin_device_open(dev, NULL, cpu ? KELVIN_DEVICE_CPU : 0) != KELVIN_OK) {
    fprintf(stderr, "removal_bench: %s\n", dev ? kelvin_device_errmsg(dev) : "out of memory");
    return 1;
  }
  printf("`%s` on %s, %d run%s per cell size (medians of the times).\n\n", config, kelvin_device_describe(dev), runs,
         runs == 1 ? "" : "s");
  printf("| cell um | grid (along x across) | device-model plan s | 3-D verification s | plan | passes | time s "
         "(device / 3-D) | removed mm^3 (device / 3-D) | 3-D / device | residual RMS um (device / 3-D) | residual max "
         "um (device / 3-D) | worst gouge um (device / 3-D) |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  double cell0 = NAN; /* the default cell, from a run at the default */
  int rc = 0;
  for (int si = -1; si < nscale && rc == 0; ++si) {
    double tdev[KL_BENCH_MAXREP], t3d[KL_BENCH_MAXREP];
    plan_row row[2], first[2] = {{0}};
    int nu = 0, nw = 0;
    double du = NAN, dw = NAN;
    for (int r = 0; r < (si < 0 ? 1 : runs) && rc == 0; ++r) {
      kelvin_grind *g = NULL;
      if (kelvin_grind_create(&g) != KELVIN_OK || kelvin_grind_load(g, config) != KELVIN_OK ||
          (si >= 0 && kelvin_grind_set(g, "removal.resolution", scale[si] * cell0) != KELVIN_OK)) {
        fprintf(stderr, "removal_bench: %s\n", g ? kelvin_grind_errmsg(g) : "out of memory");
        kelvin_grind_free(g);
        rc = 1;
        break;
      }
      if (kelvin_grind_plan(g, dev) != KELVIN_OK) {
        fprintf(stderr, "removal_bench: %s\n", kelvin_grind_errmsg(g));
        kelvin_grind_free(g);
        rc = 1;
        break;
      }
      tdev[r] = kelvin_grind_run_value(g, KELVIN_RUN_TIME_REFINEMENT);
      t3d[r] = kelvin_grind_run_value(g, KELVIN_RUN_TIME_VERIFICATION);
      if (!(tdev[r] >= 0) || !(t3d[r] >= 0)) {
        fprintf(stderr, "removal_bench: kelvin_grind_plan reported no stage times (%g, %g s)\n", tdev[r], t3d[r]);
        kelvin_grind_free(g);
        rc = 1;
        break;
      }
      kelvin_grind_removal_grid_size(g, &nu, &nw);
      kelvin_grind_removal_grid_spacing(g, &du, &dw);
      if (kelvin_grind_removal_nplans(g) < 2 || collect(g, 0, &row[0]) != 0 || collect(g, 1, &row[1]) != 0) {
        kelvin_grind_free(g);
        rc = 1;
        break;
      }
      for (int p = 0; p < 2; ++p) {
        if (r == 0) {
          first[p] = row[p];
        } else if (row[p].npass != first[p].npass || fabs(row[p].v[1][0] - first[p].v[1][0]) > 1e-9 * first[p].v[1][0]) {
          fprintf(stderr, "removal_bench: run %d of plan %d differs from the first (%d passes, %.9g m^3 against %d, %.9g)\n",
                  r + 1, p, row[p].npass, row[p].v[1][0], first[p].npass, first[p].v[1][0]);
          rc = 1;
        }
      }
      kelvin_grind_free(g);
    }
    if (rc != 0) break;
    if (si < 0) { /* the config's cell: the scales multiply it */
      cell0 = du;
      continue;
    }
    const double md = kl_bench_median(tdev, runs), m3 = kl_bench_median(t3d, runs);
    for (int p = 0; p < 2; ++p) {
      const plan_row *w = &row[p];
      printf("| %.3g | %d x %d | %.2f | %.2f | %s | %d | %.2f / %.2f | %.4g / %.4g | %.4f | %.2f / %.2f | %.2f / %.2f | "
             "%.2f / %.2f |\n",
             1e6 * du, nu, nw, md, m3, p ? "naive" : "planned", w->npass, w->v[0][5], w->v[1][5], 1e9 * w->v[0][0],
             1e9 * w->v[1][0], w->v[1][0] / w->v[0][0], 1e6 * w->v[0][2], 1e6 * w->v[1][2], 1e6 * w->v[0][3],
             1e6 * w->v[1][3], 1e6 * w->v[0][4], 1e6 * w->v[1][4]);
    }
    fflush(stdout);
  }
  kelvin_device_free(dev);
  return rc;
}
