/* cli/cmd_optimise.c: `kelvin optimise [config.yaml]` (the main job) and
 * `kelvin evaluate config.yaml --pass pass.csv` (check a pass without optimising). On a config with a
 * removal: section (removal.preston > 0) optimise plans passes to the target surface (kelvin/removal.h)
 * and evaluate also computes the removal of the given pass; their outputs are cli/report_removal.h's. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kelvin/grind.h>
#include <kelvin/removal.h>
#include <kelvin/shard.h>

#include "cli.h"
#include "commands.h"
#include "report.h"
#include "report_removal.h"
#include "report_robust.h"

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
    "Where the verified error exceeds the predicted, the best pass is corrected with the 3-D engine in the loop\n"
    "and checked once more at reference accuracy (optimiser.correct: auto | off | N iterations).\n"
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
    "  --scenarios N      the robust run's out-of-sample check: N fresh scenarios (uncertainty.verify_scenarios)\n"
    "  --quiet            no progress and no table\n"
    "  --help             this text\n\n"
    "writes trajectory.csv, waypoints.csv, report.json, optimise.png (+ figure_data.csv, optimise.png.gp).\n\n"
    "Robust passes (docs/design.md section 10): with an uncertainty: section (uncertainty.scenarios > 0 and\n"
    "uncertainty.objective mean, mean_std, cvar, worst or chance; optimiser.method nlopt) it refines, after the\n"
    "nominal optimum, a pass 'robust' on that objective over the sampled parts and process conditions (every\n"
    "NLopt evaluation one batch of candidates x scenarios), then checks both on uncertainty.verify_scenarios\n"
    "fresh scenarios on the device and in the 3-D engine, and writes robust.csv, robust_bands.csv,\n"
    "robust_peak.csv and robust.png (the force's percentile bands of each pass, and its peak force's histogram).\n\n"
    "Material removal (docs/design.md section 9): with a removal: section (removal.preston > 0, tool.spindle_rpm\n"
    "set) it plans passes instead: the fewest, fastest passes under target.max_force and the robot's limits\n"
    "that grind the part down to its target surface (the CAD less removal.allowance) to within\n"
    "removal.tolerance above it without gouging deeper than removal.gouge below it, the surface evolving pass\n"
    "after pass by Preston's law; then the planned passes and the naive plan (the naive pass at speed.initial,\n"
    "repeated until flush) run in sequence in the 3-D engine on the evolving part. It writes instead\n"
    "  removal.csv   x_m,y_m,removed_m,pass1_m,...: the depth removed along the normal at each cell of the\n"
    "                grid (path coordinates: removal.resolution along and across the path, removal.width wide;\n"
    "                x, y the cell centres on the CAD), by the plan and by each pass (3-D engine)\n"
    "  surface.csv   x_m,y_m,error_m: the surface the plan leaves against the target (> 0 above, < 0 below)\n"
    "  naive_grid.csv  x_m,y_m,removed_m,error_m: the same of the naive plan\n"
    "  passes.csv    plan,pass,s_m,offset_m,speed_m_s,force_N,force_verified_N: each pass's commands and force\n"
    "  profile.csv   s_m,target_m,before_m,<plan>_pass<k>_m,<plan>_pass<k>_verified_m: the track's height\n"
    "  report.json   per plan and pass: residual RMS and max, worst gouge, removed volume (grid and law),\n"
    "                time, peak force, tool radius; predicted (device model) and verified (3-D engine)\n"
    "  removal.png, surface.png (maps, planned beside naive), profile.png (+ removal_figure.dat, *.gp)\n\n"
    "Exit status: 0 ok; 1 runtime failure or target unreachable within the bounds; 2 bad config or option.\n\n"
    "Across MPI ranks (a build with -DKELVIN_MPI=ON): mpirun -n N kelvin optimise ... gives each rank its own\n"
    "device; rank 0 prints and writes the same files as one process.\n");
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
         "options: --pass FILE (required), --out DIR [kelvin-out/evaluate], --cpu, --device SPEC, --quiet, --help,\n"
         "         --scenarios N  tolerance analysis: the pass on N parts and process conditions drawn from the\n"
         "                        config's uncertainty: section (uncertainty.verify_seed), on the device and in the\n"
         "                        3-D engine: its RMS error, peak force and contact loss (mean, P50, P95, worst)\n"
         "                        and the share of parts whose force stays in [uncertainty.force_min, force_max]\n"
         "writes trajectory.csv, waypoints.csv, report.json, evaluate.png; with --scenarios also robust.csv (every\n"
         "scenario), robust_bands.csv (the force's P5..P95 along the path), robust_peak.csv, robust.png.\n"
         "With a removal: section (removal.preston > 0) it computes the material the pass removes, in the\n"
         "device model and in the 3-D engine (plan 'user', one pass), and writes instead what 'kelvin optimise'\n"
         "writes then (see its --help): removal.csv, surface.csv, passes.csv (the pass's forces), profile.csv,\n"
         "report.json, removal.png, surface.png, profile.png.\n\n"
         "Across MPI ranks (a build with -DKELVIN_MPI=ON): mpirun -n N kelvin evaluate ... gives each rank its own\n"
         "device; rank 0 prints and writes the same files as one process.\n");
}

typedef struct args {
  const char *config, *pass, *algorithm;
  long screening, maxeval, seed, scenarios;
  int have_screening, have_maxeval, have_seed, have_scenarios;
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
    {"scenarios", required_argument, 0, 'n'}, {0, 0, 0, 0}};
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
    case 'n':
      if (kl_cli_long("--scenarios", optarg, 0, 1000000L, &a->scenarios) != 0) return -1;
      a->have_scenarios = 1;
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

/* the library's progress lines on stderr (kelvin/grind.h): every notice, and a tick (indented) when none
 * was printed for KL_TICK_S seconds */
#define KL_TICK_S 2.0

typedef struct progress_ctx {
  const kl_cli_common *c;
  double last; /* when the last line was printed (CLOCK_MONOTONIC) */
} progress_ctx;

static int progress(void *ctx, double fraction, const char *text)
{
  progress_ctx *p = ctx;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const double now = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
  const int tick = text[0] == ' ';
  if (tick && now - p->last < KL_TICK_S) return 0;
  p->last = now;
  if (tick && fraction >= 0)
    kl_cli_note(p->c, "%s (%.0f %% of the run)", text + strspn(text, " "), 100 * fraction);
  else
    kl_cli_note(p->c, "%s", text + strspn(text, " "));
  return 0;
}

static int run(int argc, char **argv, int evaluate)
{
  const char *cmd = evaluate ? "evaluate" : "optimise";
  args a;
  const int pr = parse(argc, argv, &a, evaluate);
  if (pr > 0) return KL_EXIT_OK;
  if (pr < 0) return KL_EXIT_USAGE;
  kelvin_grind *g = NULL;
  kelvin_device *dev = NULL;
  double *o = NULL, *v = NULL;
  int rc = KL_EXIT_OK;
  if (kelvin_grind_create(&g) != KELVIN_OK || kelvin_device_create(&dev) != KELVIN_OK) {
    kl_cli_error("out of memory");
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  if (a.config && kelvin_grind_load(g, a.config) != KELVIN_OK) {
    kl_cli_error("%s", kelvin_grind_errmsg(g));
    rc = KL_EXIT_USAGE;
    goto done;
  }
  if (a.algorithm) {
    if (kelvin_grind_set_string(g, "optimiser.algorithm", a.algorithm) != KELVIN_OK) {
      kl_cli_error("--algorithm: unknown NLopt algorithm '%s'", a.algorithm);
      rc = KL_EXIT_USAGE;
      goto done;
    }
    kelvin_grind_set_string(g, "optimiser.method", "nlopt");
  }
  /* (the options' bounds are the settings': kelvin_grind_set cannot refuse them) */
  if (a.have_screening) kelvin_grind_set(g, "optimiser.screening", (double)a.screening);
  if (a.have_maxeval) kelvin_grind_set(g, "optimiser.maxeval", (double)a.maxeval);
  if (a.have_seed) kelvin_grind_set(g, "optimiser.seed", (double)a.seed);
  if (a.have_scenarios) kelvin_grind_set(g, "uncertainty.verify_scenarios", (double)a.scenarios);
  kl_cli_note(&a.c, "%s: preparing the problem (workpiece mesh, path, protrusion)", cmd);
  kelvin_status st = kelvin_grind_prepare(g);
  if (st != KELVIN_OK) {
    /* (named by the library: "FILE:LINE: ..." or "FILE: ...") */
    kl_cli_error("%s", kelvin_grind_errmsg(g));
    rc = st == KELVIN_ERR_NOMEM ? KL_EXIT_RUNTIME : KL_EXIT_USAGE;
    goto done;
  }
  const int ns = kelvin_grind_nsamples(g);
  const int rm = kl_removal_active(g); /* material removal: plan passes (kelvin/removal.h) */
  if (evaluate) {
    o = malloc((size_t)ns * sizeof *o);
    v = malloc((size_t)ns * sizeof *v);
    if (!o || !v) {
      kl_cli_error("out of memory");
      rc = KL_EXIT_RUNTIME;
      goto done;
    }
    if (kelvin_grind_read_pass(g, a.pass, o, v) != KELVIN_OK) {
      kl_cli_error("%s", kelvin_grind_errmsg(g));
      rc = KL_EXIT_USAGE;
      goto done;
    }
  }
  /* under mpirun (docs/design.md section 11): each rank its device; a rank whose device fails ends every
   * rank with its message */
  kelvin_device_set_shard(dev, kl_cli_shard());
  st = kelvin_device_open(dev, a.c.device, a.c.cpu ? KELVIN_DEVICE_CPU : 0);
  char dmsg[1024] = "";
  if (st != KELVIN_OK) {
    /* the library names the spec's origin as its own call; here it came from --device */
    const char *m = kelvin_device_errmsg(dev), *at = strstr(m, "kelvin_device_open");
    if (a.c.device && at)
      snprintf(dmsg, sizeof dmsg, "%.*s--device%s", (int)(at - m), m, at + strlen("kelvin_device_open"));
    else
      snprintf(dmsg, sizeof dmsg, "%s", m);
  }
  if ((st = kelvin_shard_agree(kl_cli_shard(), st, dmsg, sizeof dmsg)) != KELVIN_OK) {
    kl_cli_error("%s", dmsg);
    rc = st == KELVIN_ERR_NODEVICE ? KL_EXIT_USAGE : KL_EXIT_RUNTIME;
    goto done;
  }
  kl_cli_note(&a.c, "%s", kelvin_device_describe(dev));
  /* ranks > 0 write nothing (no output folder, lock or temporary); a folder rank 0 cannot take stops all */
  char bmsg[64] = "the output folder";
  if (kelvin_shard_agree(kl_cli_shard(), kl_cli_rank() > 0 || kl_run_begin(a.c.out) == 0 ? KELVIN_OK : KELVIN_ERR_IO,
                         bmsg, sizeof bmsg) != KELVIN_OK) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  progress_ctx pc = {&a.c, -1e300};
  kelvin_grind_set_progress(g, progress, &pc);
  st = evaluate ? kelvin_grind_evaluate(g, dev, o, v) : rm ? kelvin_grind_plan(g, dev) : kelvin_grind_optimise(g, dev);
  if (st == KELVIN_OK && evaluate && !rm && a.scenarios > 0) /* the pass's tolerance analysis (kelvin/robust.h) */
    st = kelvin_grind_check(g, dev, (int)a.scenarios, 1);
  if (st != KELVIN_OK) {
    /* a setting found wrong by the pipeline (optimiser.algorithm): named where it was given */
    const char *msg = kelvin_grind_errmsg(g), *alg = "optimiser.algorithm:";
    if (st == KELVIN_ERR_CONFIG && a.algorithm && strncmp(msg, alg, strlen(alg)) == 0)
      kl_cli_error("%s: --algorithm:%s", cmd, msg + strlen(alg));
    else
      kl_cli_error("%s: %s", cmd, msg);
    rc = st == KELVIN_ERR_CONFIG ? KL_EXIT_USAGE : KL_EXIT_RUNTIME;
    goto done;
  }
  if (rm) {
    if (kl_cli_rank() == 0 && (kl_removal_write(g, a.c.out, cmd, kelvin_device_describe(dev), a.config, &a.c) != 0 ||
                               kl_removal_stale(a.c.out, cmd, 1) != 0 || kl_run_commit() != 0)) {
      rc = KL_EXIT_RUNTIME;
      goto done;
    }
    if (!a.c.quiet) {
      printf("kelvin %s: ", cmd);
      kl_cli_puts_safe(stdout, a.config ? a.config : "built-in example");
      printf(", path %.1f mm in %d samples", 1e3 * kelvin_grind_length(g), ns);
      kl_removal_print(g);
    }
    kl_cli_note(&a.c, "%s: wrote %s/{removal.csv, surface.csv, passes.csv, profile.csv, report.json, removal.png, "
                "surface.png, profile.png}", cmd, a.c.out);
    goto done;
  }
  if (kl_cli_rank() == 0 && (kl_report_write(g, a.c.out, cmd, kelvin_device_describe(dev), a.config) != 0 ||
                             kl_robust_write(g, a.c.out, &a.c) != 0 || kl_removal_stale(a.c.out, cmd, 0) != 0 ||
                             kl_run_commit() != 0)) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  if (!a.c.quiet) {
    int avg;
    const int sens = kl_report_measure(g, &avg);
    printf("kelvin %s: ", cmd); /* the config's file name from the user, escaped */
    kl_cli_puts_safe(stdout, a.config ? a.config : "built-in example");
    printf(", path %.1f mm in %d samples, target %.3g N (%s force scored), the contact %.3g %% of the "
           "compliance there\n\n",
           1e3 * kelvin_grind_length(g), ns,
           kelvin_grind_problem_value(g, KELVIN_PROBLEM_FORCE_REF),
           sens ? (avg ? "wrist-sensor step-averaged" : "wrist-sensor") : (avg ? "step-averaged contact" : "contact"),
           100 * kelvin_grind_problem_value(g, KELVIN_PROBLEM_CONTACT_SHARE));
    kl_report_print(g);
    if (!evaluate) kl_report_correction(g);
    kl_robust_print(g);
    char where[160] = "";
    const long host = (long)kelvin_grind_run_value(g, KELVIN_RUN_ROLLOUTS_HOST);
    if (host > 0)
      snprintf(where, sizeof where, " (%ld on the host's OpenMP twin: batches of fewer than %ld do not fill the device)",
               host, (long)kelvin_grind_run_value(g, KELVIN_RUN_HOST_BELOW));
    const double tv = kelvin_grind_run_value(g, KELVIN_RUN_TIME_VERIFICATION), tt = kelvin_grind_run_value(g, KELVIN_RUN_TIME_TOTAL);
    const double tc = kelvin_grind_run_value(g, KELVIN_RUN_TIME_CORRECTION);
    char corr[64] = ""; /* (only when the correction ran: the line is otherwise as it was) */
    if (tc > 0) snprintf(corr, sizeof corr, ", correction %.2f s (%.1f %%)", tc, tt > 0 ? 100.0 * tc / tt : 0.0);
    printf("\n%ld rollouts%s; time: screening %.2f s, refinement %.2f s, 3-D verification %.2f s (%.1f %%)%s, total %.2f s\n",
           kelvin_grind_rollouts(g), where, kelvin_grind_run_value(g, KELVIN_RUN_TIME_SCREENING),
           kelvin_grind_run_value(g, KELVIN_RUN_TIME_REFINEMENT), tv, tt > 0 ? 100.0 * tv / tt : 0.0, corr, tt);
  }
  kl_cli_note(&a.c, "%s: wrote %s/{trajectory.csv, waypoints.csv, report.json, %s.png%s}", cmd, a.c.out, cmd,
              kelvin_grind_check_passes(g, NULL) > 0 ? ", robust.csv, robust_bands.csv, robust_peak.csv, robust.png" : "");
  for (int i = 0; i < kelvin_grind_npass(g); ++i)
    if (kelvin_grind_pass_warning(g, i)) kl_cli_note(&a.c, "%s: warning: %s", cmd, kelvin_grind_pass_warning(g, i));
  if (!evaluate && kelvin_grind_correction_note(g)) kl_cli_note(&a.c, "%s: %s", cmd, kelvin_grind_correction_note(g));
  /* a target the bounds cannot reach: what limits it (the library's diagnosis) */
  if (kelvin_grind_diagnosis(g)) {
    kl_cli_error("%s: %s", cmd, kelvin_grind_diagnosis(g));
    rc = KL_EXIT_RUNTIME;
  }
done:
  kelvin_grind_free(g);
  kelvin_device_free(dev);
  free(o);
  free(v);
  return rc;
}

int kl_cmd_optimise(int argc, char **argv) { return run(argc, argv, 0); }
int kl_cmd_evaluate(int argc, char **argv) { return run(argc, argv, 1); }
