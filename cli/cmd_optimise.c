/* cli/cmd_optimise.c: `kelvin optimise [config.yaml]` (the main job) and
 * `kelvin evaluate config.yaml --pass pass.csv` (check a pass without optimising). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/host.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "optimiser/pipeline.h"
#include "optimiser/problem.h"
#include "cli/report.h"
#include "io/settings.h"
#include "io/table.h"

static void help_optimise(void)
{
  printf(
    "usage: kelvin optimise [config.yaml] [options]\n\n"
    "Find path offsets and feed speeds of a grinding pass (ball-end or disc) that hit a target normal-force\n"
    "profile. The device model is 1-D: the tool depth along the normal under the holder, the contact law\n"
    "against the protrusion of the actual part, scored as the wrist sensor reads it. The offset and the\n"
    "speed at every path sample are fitted by Levenberg-Marquardt from a physics-based guess, its banded\n"
    "Jacobian from one OpenCL batch of coloured rollouts (optimiser.method lm; nlopt: splines, quasi-random\n"
    "screening and NLopt), then the naive and the best passes are verified in the 3-D engine: the tool a\n"
    "rigid body on a 6-DoF holder whose anchor follows the waypoints, contact with the\n"
    "actual mesh (exact for the ball, libccd for the disc) with friction, the force read as a wrist sensor\n"
    "would; the passes are re-ranked by it and device-vs-3-D disagreement above verify.tolerance is flagged.\n"
    "Without a config it runs the built-in example: an aluminium curved panel (R 0.4 m) with a weld bead\n"
    "across the path, tilted 0.3 deg against its CAD, a 6 mm abrasive ball-end on a 5 kN/m compliant\n"
    "holder, target 5 N (examples/optimise.yaml lists every setting with its default).\n\n"
    "options:\n"
    "  --out DIR          output folder [kelvin-out/optimise]\n"
    "  --algorithm NAME   NLopt algorithm for the refinement (sets optimiser.method nlopt) [LD_LBFGS], e.g.\n"
    "                     LD_MMA, LN_BOBYQA; a global one (GN_CRS2_LM, ...) replaces screening + refinement\n"
    "  --screening N      screening candidates of method nlopt (0: none) [2048]\n"
    "  --maxeval N        Levenberg-Marquardt steps, or NLopt evaluations per refinement start [40]; with a\n"
    "                     gradient (LD_*) algorithm each is one batch of n + 1 rollouts (finite differences)\n"
    "  --seed N           picks the screening sequence's block (method nlopt); same seed, same result [1]\n"
    "  --cpu              run the rollouts on the OpenMP twin instead of OpenCL (from a GPU, batches of\n"
    "                     fewer than 1024 rollouts go there anyway: env KELVIN_ROLLOUT_HOST_BELOW, 0: none)\n"
    "  --device SPEC      OpenCL device: index 'P:D', 'gpu', 'cpu' or a name substring (env KELVIN_DEVICE)\n"
    "  --quiet            no progress and no table\n"
    "  --help             this text\n\n"
    "writes trajectory.csv, waypoints.csv, report.json, optimise.png (+ figure_data.csv, optimise.png.gp).\n"
    "Exit status: 0 ok; 1 runtime failure or target unreachable within the bounds; 2 bad config or option.\n");
}

static void help_evaluate(void)
{
  printf("usage: kelvin evaluate [config.yaml] --pass pass.csv [options]\n\n"
         "Evaluate a pass you already have, without optimising: the device's 1-D prediction and the 3-D\n"
         "engine's verification of its force profile, next to the naive constant-offset pass.\n"
         "pass.csv: a header line naming the columns s_m, offset_m, speed_m_s (or s, offset, speed; other\n"
         "columns are ignored, so the trajectory.csv of 'kelvin optimise' reads as it is); values in m and\n"
         "m/s within the configured offset and speed bounds, interpolated linearly onto the problem's path\n"
         "samples (s from 0 to the path length).\n\n"
         "options: --pass FILE (required), --out DIR [kelvin-out/evaluate], --cpu, --device SPEC, --quiet, --help\n"
         "writes trajectory.csv, waypoints.csv, report.json, evaluate.png.\n");
}

typedef struct args {
  const char *config, *pass, *algorithm;
  long screening, maxeval, seed;
  int have_screening, have_maxeval, have_seed;
  kl_cli_common c;
} args;

static int parse(int argc, char **argv, args *a, int evaluate)
{
  static const struct option lo[] = {
    {"out", required_argument, 0, 'o'},      {"algorithm", required_argument, 0, 'a'},
    {"screening", required_argument, 0, 's'}, {"maxeval", required_argument, 0, 'm'},
    {"seed", required_argument, 0, 'S'},     {"cpu", no_argument, 0, 'c'},
    {"device", required_argument, 0, 'd'},   {"quiet", no_argument, 0, 'q'},
    {"pass", required_argument, 0, 'p'},     {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0}};
  memset(a, 0, sizeof *a);
  a->c.out = evaluate ? "kelvin-out/evaluate" : "kelvin-out/optimise";
  const char *cmd = evaluate ? "evaluate" : "optimise";
  opterr = 0;
  optind = 1;
  int ch, li = -1;
  while ((ch = getopt_long(argc, argv, ":h", lo, &li)) != -1) {
    switch (ch) {
    case 'o': a->c.out = optarg; break;
    case 'a':
      if (evaluate) goto not_here;
      a->algorithm = optarg;
      break;
    case 's':
      if (evaluate) goto not_here;
      if (kl_cli_long("--screening", optarg, 0, 1 << 22, &a->screening) != 0) return -1;
      a->have_screening = 1;
      break;
    case 'm':
      if (evaluate) goto not_here;
      if (kl_cli_long("--maxeval", optarg, 1, 100000000L, &a->maxeval) != 0) return -1;
      a->have_maxeval = 1;
      break;
    case 'S':
      if (evaluate) goto not_here; /* (no screening to seed) */
      if (kl_cli_long("--seed", optarg, 0, 1000000000L, &a->seed) != 0) return -1;
      a->have_seed = 1;
      break;
    case 'c': a->c.cpu = 1; break;
    case 'd': a->c.device = optarg; break;
    case 'q': a->c.quiet = 1; break;
    case 'p':
      if (!evaluate) goto not_here;
      a->pass = optarg;
      break;
    case 'h':
      if (evaluate)
        help_evaluate();
      else
        help_optimise();
      return 1;
    case ':': kl_cli_error("%s: option '%s' needs a value (try 'kelvin %s --help')", cmd, argv[optind - 1], cmd); return -1;
    not_here: /* an option of the other command (named, not its value) */
      kl_cli_error("%s: option '--%s' is not one of this command's (try 'kelvin %s --help')", cmd, lo[li].name, cmd);
      return -1;
    default:
      kl_cli_error("%s: unknown option '%s' (try 'kelvin %s --help')", cmd, argv[optind - 1], cmd);
      return -1;
    }
  }
  if (optind < argc) a->config = argv[optind++];
  if (optind < argc) {
    kl_cli_error("%s: unexpected argument '%s' (one config file at most)", cmd, argv[optind]);
    return -1;
  }
  if (evaluate && !a->pass) {
    kl_cli_error("evaluate: --pass FILE is required (columns s_m,offset_m,speed_m_s)");
    return -1;
  }
  return 0;
}

static void progress(void *ctx, const char *text) { kl_cli_note(ctx, "%s", text); }

/* read s_m,offset_m,speed_m_s (io/table.h), check them against the problem's path and bounds, and
 * interpolate onto the path samples; -1 with one message on failure */
static int read_pass(const char *path, const kl_problem *pb, double *o, double *v)
{
  int n = 0;
  double *S = NULL, *O = NULL, *V = NULL;
  long *L = NULL;
  char msg[2048];
  if (kl_read_pass_csv(path, &n, &S, &O, &V, &L, msg, sizeof msg) != KELVIN_OK) {
    kl_cli_error("%s", msg);
    return -1;
  }
  int rc = 0;
  const double olo = pb->lo[0], ohi = pb->hi[0], vlo = pb->set.v_min, vhi = pb->set.v_max;
  for (int k = 0; k < n && rc == 0; ++k) {
    if (!(O[k] >= olo - 1e-12 && O[k] <= ohi + 1e-12)) {
      kl_cli_error("%s:%ld: column 'offset_m': %.6g m is outside the configured bounds [offset.min, offset.max] = "
                   "[%.6g, %.6g] m%s", path, L[k], O[k], olo, ohi,
                   fabs(O[k]) > 100 * fmax(fabs(olo), fabs(ohi)) ? "; is it in millimetres? the file is read in metres" : "");
      rc = -1;
    } else if (!(V[k] >= vlo * (1 - 1e-9) && V[k] <= vhi * (1 + 1e-9))) {
      kl_cli_error("%s:%ld: column 'speed_m_s': %.6g m/s is outside the configured bounds [speed.min, speed.max] = "
                   "[%.6g, %.6g] m/s%s", path, L[k], V[k], vlo, vhi,
                   V[k] > 100 * vhi ? "; is it in mm/s? the file is read in m/s" : "");
      rc = -1;
    }
  }
  const double tol = 1e-6 * fmax(pb->length, 1e-3);
  if (rc == 0 && (S[0] > pb->s[0] + tol || S[n - 1] < pb->length - tol)) {
    kl_cli_error("%s:%ld: column 's_m': s covers [%.6g, %.6g] m but the path runs over [0, %.6g] m%s", path,
                 S[0] > pb->s[0] + tol ? L[0] : L[n - 1], S[0], S[n - 1], pb->length,
                 S[n - 1] > 100 * pb->length ? "; is it in millimetres? the file is read in metres" : "");
    rc = -1;
  }
  if (rc == 0 && S[n - 1] > 100 * pb->length) { /* a unit mistake (a pass may run on past the path's end) */
    kl_cli_error("%s:%ld: column 's_m': s runs to %.6g m but the path is only %.6g m long; is s in millimetres? the "
                 "file is read in metres", path, L[n - 1], S[n - 1], pb->length);
    rc = -1;
  }
  if (rc == 0)
    for (int k = 0, j = 0; k < pb->ns; ++k) {
      while (j + 2 < n && S[j + 1] < pb->s[k]) ++j;
      const double w = fmin(1.0, fmax(0.0, (pb->s[k] - S[j]) / (S[j + 1] - S[j])));
      o[k] = O[j] + w * (O[j + 1] - O[j]);
      v[k] = V[j] + w * (V[j + 1] - V[j]);
    }
  free(S);
  free(O);
  free(V);
  free(L);
  return rc;
}

static int run(int argc, char **argv, int evaluate)
{
  const char *cmd = evaluate ? "evaluate" : "optimise";
  args a;
  const int pr = parse(argc, argv, &a, evaluate);
  if (pr > 0) return KL_EXIT_OK;
  if (pr < 0) return KL_EXIT_USAGE;
  kl_settings set;
  kl_settings_default(&set);
  char msg[4096] = "";
  if (a.config && kl_settings_load(&set, a.config, msg, sizeof msg) != KELVIN_OK) {
    kl_cli_error("%s", msg);
    return KL_EXIT_USAGE;
  }
  if (a.algorithm) {
    if (strlen(a.algorithm) >= sizeof set.algorithm) {
      kl_cli_error("--algorithm: unknown NLopt algorithm '%s'", a.algorithm);
      return KL_EXIT_USAGE;
    }
    snprintf(set.algorithm, sizeof set.algorithm, "%s", a.algorithm);
    set.method = KL_METHOD_NLOPT;
  }
  if (a.have_screening) set.screening = (int)a.screening;
  if (a.have_maxeval) set.maxeval = (int)a.maxeval;
  if (a.have_seed) set.seed = (unsigned long)a.seed;
  kl_problem *pb = NULL;
  kl_cli_note(&a.c, "%s: preparing the problem (workpiece mesh, path, protrusion)", cmd);
  kl_inputs inputs;
  kelvin_status st = kl_inputs_load(&set, &inputs, msg, sizeof msg);
  if (st == KELVIN_OK) st = kl_problem_build(&set, &inputs.in, &pb, msg, sizeof msg);
  if (st != KELVIN_OK) {
    kl_inputs_free(&inputs);
    const int line = a.config ? kl_settings_line(a.config, msg) : 0;
    if (line > 0)
      kl_cli_error("%s:%d: %s", a.config, line, msg);
    else
      kl_cli_error("%s%s%s", a.config ? a.config : "", a.config ? ": " : "", msg);
    return st == KELVIN_ERR_NOMEM ? KL_EXIT_RUNTIME : KL_EXIT_USAGE;
  }
  double *o = NULL, *v = NULL;
  if (evaluate) {
    o = malloc((size_t)pb->ns * sizeof *o);
    v = malloc((size_t)pb->ns * sizeof *v);
    if (!o || !v || read_pass(a.pass, pb, o, v) != 0) {
      free(o);
      free(v);
      kl_problem_free(pb);
      kl_inputs_free(&inputs);
      return KL_EXIT_USAGE;
    }
  }
  kl_host *h = NULL;
  kl_host_opts ho;
  kl_host_opts_default(&ho);
  ho.cpu = a.c.cpu;
  ho.device = a.c.device;
  ho.device_origin = a.c.device ? "--device" : NULL;
  int rc = KL_EXIT_OK;
  kl_opt_result *res = calloc(1, sizeof *res);
  if (!res || kl_host_create(&h) != KELVIN_OK) {
    kl_cli_error("out of memory");
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  st = kl_host_open(h, &ho);
  if (st != KELVIN_OK) {
    kl_cli_error("%s", kl_host_errmsg(h));
    rc = st == KELVIN_ERR_NODEVICE ? KL_EXIT_USAGE : KL_EXIT_RUNTIME;
    goto done;
  }
  kl_cli_note(&a.c, "%s", kl_host_notice(h));
  if (kl_run_begin(a.c.out) != 0) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  st = evaluate ? kl_evaluate(pb, h, o, v, progress, &a.c, res, msg, sizeof msg)
                : kl_optimise(pb, h, progress, &a.c, res, msg, sizeof msg);
  if (st != KELVIN_OK) {
    /* a setting found wrong by the pipeline (optimiser.algorithm): named where it was given */
    const char *alg = "optimiser.algorithm:";
    const int line = st == KELVIN_ERR_CONFIG && a.config ? kl_settings_line(a.config, msg) : 0;
    if (st == KELVIN_ERR_CONFIG && a.algorithm && strncmp(msg, alg, strlen(alg)) == 0)
      kl_cli_error("%s: --algorithm:%s", cmd, msg + strlen(alg));
    else if (line > 0)
      kl_cli_error("%s: %s:%d: %s", cmd, a.config, line, msg);
    else
      kl_cli_error("%s: %s", cmd, msg);
    rc = st == KELVIN_ERR_CONFIG ? KL_EXIT_USAGE : KL_EXIT_RUNTIME;
    goto done;
  }
  if (kl_report_write(pb, res, a.c.out, cmd, kl_host_notice(h), a.config) != 0 || kl_run_commit() != 0) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  const kl_pass *b = &res->pass[res->best];
  if (!a.c.quiet) {
    printf("kelvin %s: %s, path %.1f mm in %d samples, target %.3g N (%s force scored), the contact %.3g %% of the "
           "compliance there\n\n",
           cmd, a.config ? a.config : "built-in example", 1e3 * pb->length, pb->ns, pb->gp[KL_GP_FREF],
           (pb->set.measure & KL_MEASURE_SENSOR_BIT) ? ((pb->set.measure & KL_MEASURE_AVG_BIT) ? "wrist-sensor step-averaged" : "wrist-sensor")
                                                      : ((pb->set.measure & KL_MEASURE_AVG_BIT) ? "step-averaged contact" : "contact"),
           100 * pb->contact_share);
    kl_report_print(pb, res);
    char where[160] = "";
    if (res->host_rollouts > 0)
      snprintf(where, sizeof where, " (%ld on the host's OpenMP twin: batches of fewer than %ld do not fill the device)",
               res->host_rollouts, res->host_below);
    printf("\n%ld rollouts%s; time: screening %.2f s, refinement %.2f s, 3-D verification %.2f s (%.1f %%), total %.2f s\n",
           res->evaluations, where, res->time.screening, res->time.refinement, res->time.verification,
           res->time.total > 0 ? 100.0 * res->time.verification / res->time.total : 0.0, res->time.total);
  }
  kl_cli_note(&a.c, "%s: wrote %s/{trajectory.csv, waypoints.csv, report.json, %s.png}", cmd, a.c.out, cmd);
  for (int i = 0; i < res->npass; ++i)
    if (res->pass[i].verified && res->pass[i].disagree)
      kl_cli_note(&a.c, "%s: warning: device prediction and 3-D verification of '%s' differ by %.2f %% RMS (> %.2f %%)",
                  cmd, res->pass[i].label, 100 * res->pass[i].agree_rms, 100 * pb->set.agree_tol);
  /* a target the bounds cannot reach: say what limits it */
  const double err = b->verified ? b->vobj[KL_OBJ_RMS] : b->obj[KL_OBJ_RMS];
  if (!evaluate && err > 0.1) {
    int at_lo = 0, at_hi = 0, vlo = 0, vhi = 0;
    for (int j = 0; j < pb->nc; ++j) {
      const double tol = 1e-6 * (pb->hi[j] - pb->lo[j]);
      if (j < pb->set.n_o) {
        at_lo += b->x[j] <= pb->lo[j] + tol;
        at_hi += b->x[j] >= pb->hi[j] - tol;
      } else {
        vlo += b->x[j] <= pb->lo[j] + tol;
        vhi += b->x[j] >= pb->hi[j] - tol;
      }
    }
    if (b->verified && b->disagree && b->obj[KL_OBJ_RMS] < 0.5 * err) /* the device reaches it, the 3-D engine not */
      kl_cli_error("%s: target not reachable: the best pass ('%s') misses the target by %.1f %% RMS in the 3-D engine "
                   "while the device model reaches %.2f %%: the two disagree by %.1f %% RMS (over verify.tolerance "
                   "%.1f %%), so the device's 1-D model does not hold for this set-up (contact lost %.1f %% of the time)",
                   cmd, b->label, 100 * err, 100 * b->obj[KL_OBJ_RMS], 100 * b->agree_rms, 100 * pb->set.agree_tol,
                   100 * b->vobj[KL_OBJ_LOSS]);
    else
      kl_cli_error("%s: target not reachable: the best pass ('%s') still misses the target by %.1f %% RMS; limited by "
                   "%s (offset control points at offset.min %d, at offset.max %d of %d; speed at min %d, at max %d of "
                   "%d; contact lost %.1f %% of the time)",
                   cmd, b->label, 100 * err,
                   at_hi ? "offset.max" : at_lo ? "offset.min" : (vlo || vhi) ? "the speed bounds" : "the dynamics",
                   at_lo, at_hi, pb->set.n_o, vlo, vhi, pb->set.n_v, 100 * (b->verified ? b->vobj : b->obj)[KL_OBJ_LOSS]);
    rc = KL_EXIT_RUNTIME;
  }
done:
  if (res) kl_opt_result_free(res);
  free(res);
  kl_host_destroy(h);
  kl_problem_free(pb);
  kl_inputs_free(&inputs);
  free(o);
  free(v);
  return rc;
}

int kl_cmd_optimise(int argc, char **argv) { return run(argc, argv, 0); }
int kl_cmd_evaluate(int argc, char **argv) { return run(argc, argv, 1); }
