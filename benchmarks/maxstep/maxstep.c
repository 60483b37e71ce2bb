/* benchmarks/maxstep/maxstep.c: max stable step of kelvin's 3-D engine against MuJoCo (2.2.2 native and
 * 3.x WebAssembly), ODE, Bullet, Simbody, DART, Siconos and PhysX (WebAssembly), side by side in one run
 * (docs/design.md section 7; the paper's Table 1).
 * The paper's ball is dropped in every engine at every rung of one step ladder, judged from its output
 * samples by one criterion (mx_check.c) against independent exact references integrated with GSL
 * (mx_ref.c), and reported as Markdown + CSV tables and a gnuplot figure written atomically to --out.
 * Where a run stops is set by counts of steps or evaluations, never by wall time. See README.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "benchmarks/maxstep/mx.h"
#include "cli/cli.h"
#include "benchmarks/maxstep/mx_eval.h"
#include "engine/ball.h"
#include "kernels/kl_impact.h"
#include "kernels/kl_material.h"

//------------------------------------------------------------------------------------------------------
// engines and their configurations

#define G_KV1 1 /* Kelvin-Voigt, cr = 1 */
#define G_KV8 2 /* Kelvin-Voigt, cr = 0.8 */
#define G_HC8 4 /* Hunt-Crossley, cr = 0.8 */

typedef struct variant {
  const char *engine; /* display name; rows with the same name are one engine */
  const char *key;    /* --engines name */
  const char *config; /* configuration name */
  mx_run_fn run;      /* NULL when the peer was not found at configure time */
  int v;              /* runner variant */
  int kv_ref;         /* reference of its Kelvin-Voigt rows (MX_REF_*) */
  int groups;         /* the cases it runs (G_*) */
  int extra;          /* 1: a labelled extra row, not the engine's headline nor the cost baseline */
  const char *doc;    /* one line for --help and the report */
} variant;

#ifdef MX_HAVE_MUJOCO
#define MX_MUJOCO mx_mujoco_run
#else
#define MX_MUJOCO NULL
#endif
#ifdef MX_HAVE_ODE
#define MX_ODE mx_ode_run
#else
#define MX_ODE NULL
#endif
#ifdef MX_HAVE_BULLET
#define MX_BULLET mx_bullet_run
#else
#define MX_BULLET NULL
#endif
#ifdef MX_HAVE_SIMBODY
#define MX_SIMBODY mx_simbody_run
#else
#define MX_SIMBODY NULL
#endif
#ifdef MX_HAVE_DART
#define MX_DART mx_dart_run
#else
#define MX_DART NULL
#endif
#ifdef MX_HAVE_SICONOS
#define MX_SICONOS mx_siconos_run
#else
#define MX_SICONOS NULL
#endif

static const variant variants[] = {
    {"kelvin", "kelvin", "3-D", mx_kelvin_run, MX_KELVIN_PEN, MX_REF_KV_PEN, G_KV1 | G_KV8 | G_HC8, 0,
     "engine/world: free 6-DoF sphere body on a static plane, generic pipeline; separation at d = 0 (the paper); "
     "HC: exponential Rosenbrock sub-steps (order 4, embedded error estimate) at hc_tol 1e-8 (default)"},
    {"kelvin", "kelvin", "3-D noten", mx_kelvin_run, MX_KELVIN_FORCE, MX_REF_KV_FORCE, G_KV1 | G_KV8, 0,
     "the same with the no-tension separation rule (contact ends at K d + D d' = 0)"},
    {"kelvin", "kelvin", "3-D chi-fixed 1e-8", mx_kelvin_run, MX_KELVIN_CHIFIX + 16, MX_REF_KV_PEN, G_HC8, 0,
     "Hunt-Crossley only: the 3-D engine with Simbody's model, chi fixed at its first-impact value for every "
     "impact (reference: the same), hc_tol = 1e-8: the tolerance ladder of the 1e-8 accuracy-cost table"},
    {"kelvin", "kelvin", "3-D chi-fixed 1e-9", mx_kelvin_run, MX_KELVIN_CHIFIX + 18, MX_REF_KV_PEN, G_HC8, 0,
     "the same at hc_tol = 1e-9"},
    {"kelvin", "kelvin", "3-D chi-fixed 3e-10", mx_kelvin_run, MX_KELVIN_CHIFIX + 19, MX_REF_KV_PEN, G_HC8, 0,
     "the same at hc_tol = 3e-10"},
    {"kelvin", "kelvin", "3-D chi-fixed 1e-10", mx_kelvin_run, MX_KELVIN_CHIFIX + 20, MX_REF_KV_PEN, G_HC8, 0,
     "the same at hc_tol = 1e-10"},
    {"kelvin", "kelvin", "3-D chi-fixed 3e-11", mx_kelvin_run, MX_KELVIN_CHIFIX + 21, MX_REF_KV_PEN, G_HC8, 0,
     "the same at hc_tol = 3e-11"},
    {"kelvin", "kelvin", "3-D chi-fixed 1e-11", mx_kelvin_run, MX_KELVIN_CHIFIX + 22, MX_REF_KV_PEN, G_HC8, 0,
     "the same at hc_tol = 1e-11"},
    {"kelvin", "kelvin", "3-D chi-fixed 3e-12", mx_kelvin_run, MX_KELVIN_CHIFIX + 23, MX_REF_KV_PEN, G_HC8, 0,
     "the same at hc_tol = 3e-12"},
    {"kelvin", "kelvin", "3-D chi-fixed 1e-12", mx_kelvin_run, MX_KELVIN_CHIFIX + 24, MX_REF_KV_PEN, G_HC8, 0,
     "the same at hc_tol = 1e-12"},
    {"kelvin", "kelvin", "3-D tight", mx_kelvin_run, MX_KELVIN_TIGHT, MX_REF_KV_PEN, G_KV1 | G_KV8 | G_HC8, 0,
     "the 3-D engine with hc_tol = 1e-12 (default 1e-8; Kelvin-Voigt rows: the same as 3-D, whose steps are exact)"},
    {"kelvin 1-D", "kelvin1d", "ball slice", mx_kelvin1d_run, MX_KELVIN_PEN, MX_REF_KV_PEN, G_KV1 | G_KV8 | G_HC8, 1,
     "extra row: engine/ball.c, the 1-DoF slice (exact flight, one closed-form sub-step per contact); not a peer's setup"},
    {"MuJoCo", "mujoco", "solref-KD Euler", MX_MUJOCO, MX_MUJOCO_KD, MX_REF_KV_FORCE, G_KV1 | G_KV8, 0,
     "solref = (-K/m, -D/m), solimp = (0.9999, 0.9999, ...), condim 1, semi-implicit Euler"},
    {"MuJoCo", "mujoco", "solref-KD RK4", MX_MUJOCO, MX_MUJOCO_KD_RK4, MX_REF_KV_FORCE, G_KV1 | G_KV8, 0,
     "the same contact, integrator RK4"},
    {"MuJoCo", "mujoco", "solref-KD implicit", MX_MUJOCO, MX_MUJOCO_KD_IMPLICIT, MX_REF_KV_FORCE, G_KV1 | G_KV8, 0,
     "the same contact, integrator implicit (2.2.2 has no implicitfast)"},
    {"MuJoCo", "mujoco", "defaults", MX_MUJOCO, MX_MUJOCO_DEFAULT, MX_REF_KV_FORCE, G_KV1 | G_KV8, 0,
     "solref = (0.02, 1), solimp = (0.9, 0.95, 0.001, 0.5, 2), condim 3, Euler"},
    {"MuJoCo 3 (wasm)", "mujoco3", "solref-KD Euler", mx_node_run, MX_NODE_MUJOCO | MX_NODE_MJ_EULER, MX_REF_KV_FORCE,
     G_KV1 | G_KV8, 0, "MuJoCo 3.x WebAssembly (npm mujoco-js) under node: the solref-KD model, Euler"},
    {"MuJoCo 3 (wasm)", "mujoco3", "solref-KD RK4", mx_node_run, MX_NODE_MUJOCO | MX_NODE_MJ_RK4, MX_REF_KV_FORCE,
     G_KV1 | G_KV8, 0, "the same, RK4"},
    {"MuJoCo 3 (wasm)", "mujoco3", "solref-KD implicit", mx_node_run, MX_NODE_MUJOCO | MX_NODE_MJ_IMPLICIT,
     MX_REF_KV_FORCE, G_KV1 | G_KV8, 0, "the same, implicit"},
    {"MuJoCo 3 (wasm)", "mujoco3", "solref-KD implicitfast", mx_node_run, MX_NODE_MUJOCO | MX_NODE_MJ_IMPLICITFAST,
     MX_REF_KV_FORCE, G_KV1 | G_KV8, 0, "the same, implicitfast"},
    {"ODE", "ode", "ERP-CFM", MX_ODE, MX_ODE_ERPCFM, MX_REF_KV_FORCE, G_KV1 | G_KV8, 0,
     "soft contact: ERP = hK/(hK + D), CFM = 1/(hK + D) at each step, dWorldStep"},
    {"ODE", "ode", "bounce", MX_ODE, MX_ODE_BOUNCE, MX_REF_RIGID, G_KV1 | G_KV8, 0,
     "dContactBounce, bounce = cr, bounce_vel = 0 (every impact restitutes), world ERP/CFM defaults, dWorldStep"},
    {"Bullet", "bullet", "stiff-damp", MX_BULLET, MX_BULLET_KD, MX_REF_KV_FORCE, G_KV1 | G_KV8, 0,
     "contact stiffness K and damping D (each body 2K, D/2), restitution 0"},
    {"Bullet", "bullet", "restitution", MX_BULLET, MX_BULLET_RESTITUTION, MX_REF_RIGID, G_KV1 | G_KV8, 0,
     "restitution cr (ball) x 1 (plane), default solver settings"},
    {"Bullet", "bullet", "restitution, thresholds 0", MX_BULLET, MX_BULLET_RESTITUTION_0, MX_REF_RIGID, G_KV1 | G_KV8, 0,
     "the same with contactProcessingThreshold = 0 (no speculative contacts) and splitImpulsePenetrationThreshold = 0"},
    {"Simbody", "simbody", "RK4-fixed", MX_SIMBODY, MX_SIMBODY_RK_FIXED, MX_REF_KV_FORCE, G_KV1 | G_KV8 | G_HC8, 0,
     "f = max(0, K d + D d') (HC: HuntCrossleyForce); Runge-Kutta-Merson, fixed step = output step"},
    {"Simbody", "simbody", "RKM-1e-6", MX_SIMBODY, MX_SIMBODY_RKM_1E6, MX_REF_KV_FORCE, G_KV1 | G_KV8 | G_HC8, 0,
     "the same force; error-controlled Runge-Kutta-Merson, accuracy 1e-6; output step = report interval"},
    {"Simbody", "simbody", "RKM-1e-9", MX_SIMBODY, MX_SIMBODY_RKM_1E9, MX_REF_KV_FORCE, G_KV1 | G_KV8 | G_HC8, 0,
     "the same force; error-controlled Runge-Kutta-Merson, accuracy 1e-9; output step = report interval"},
    {"Simbody", "simbody", "RKM-1e-10", MX_SIMBODY, MX_SIMBODY_RKM + 20, MX_REF_KV_FORCE, G_HC8, 0,
     "the same at accuracy 1e-10 (Hunt-Crossley only: the accuracy ladder)"},
    {"Simbody", "simbody", "RKM-3e-11", MX_SIMBODY, MX_SIMBODY_RKM + 21, MX_REF_KV_FORCE, G_HC8, 0,
     "the same at accuracy 3e-11"},
    {"Simbody", "simbody", "RKM-1e-11", MX_SIMBODY, MX_SIMBODY_RKM + 22, MX_REF_KV_FORCE, G_HC8, 0,
     "the same at accuracy 1e-11"},
    {"Simbody", "simbody", "RKM-3e-12", MX_SIMBODY, MX_SIMBODY_RKM + 23, MX_REF_KV_FORCE, G_HC8, 0,
     "the same at accuracy 3e-12"},
    {"Simbody", "simbody", "RKM-1e-12", MX_SIMBODY, MX_SIMBODY_RKM + 24, MX_REF_KV_FORCE, G_HC8, 0,
     "the same at accuracy 1e-12"},
    {"Simbody", "simbody", "Adams-1e-11", MX_SIMBODY, MX_SIMBODY_ADAMS + 22, MX_REF_KV_FORCE, G_HC8, 0,
     "the same force; CPodes Adams-Moulton (variable order, functional iteration), accuracy 1e-11 (Hunt-Crossley "
     "only)"},
    {"Simbody", "simbody", "Adams-3e-12", MX_SIMBODY, MX_SIMBODY_ADAMS + 23, MX_REF_KV_FORCE, G_HC8, 0,
     "the same at accuracy 3e-12"},
    {"Simbody", "simbody", "Adams-1e-12", MX_SIMBODY, MX_SIMBODY_ADAMS + 24, MX_REF_KV_FORCE, G_HC8, 0,
     "the same at accuracy 1e-12"},
    {"DART", "dart", "restitution FCL", MX_DART, MX_DART_RESTITUTION, MX_REF_RIGID, G_KV1 | G_KV8, 0,
     "LCP (Dantzig) contact, restitution cr (ball) x 1 (ground box), FCL (meshed sphere), semi-implicit Euler"},
    {"DART", "dart", "restitution DART-CD", MX_DART, MX_DART_RESTITUTION_DARTCD, MX_REF_RIGID, G_KV1 | G_KV8, 0,
     "the same with DART's own DARTCollisionDetector (analytic sphere-box)"},
    {"Siconos", "siconos", "Moreau-Jean", MX_SICONOS, MX_SICONOS_MOREAU, MX_REF_RIGID, G_KV1 | G_KV8, 0,
     "NewtonEulerDS (free 6-DoF body), SphereNEDSPlanR, Newton impact law e = cr, MoreauJeanOSI theta = 0.5, LCP"},
    {"Siconos", "siconos", "event-driven", MX_SICONOS, MX_SICONOS_EVENT, MX_REF_RIGID, G_KV1 | G_KV8, 0,
     "LagrangianLinearTIDS (the BouncingBallED example's 3-DoF ball), Newton impact law, EventDriven + LsodarOSI"},
    {"PhysX (wasm)", "physx", "restitution", mx_node_run, MX_NODE_PHYSX | MX_NODE_PX_RESTITUTION, MX_REF_RIGID,
     G_KV1 | G_KV8, 0,
     "PhysX 4.1.1 WebAssembly (npm @cocos/physx), single precision: restitution cr, bounce threshold 0, "
     "one simulate(h) per output"},
    {"Rapier (wasm)", "rapier", "restitution", mx_node_run, MX_NODE_RAPIER | MX_NODE_RP_RESTITUTION, MX_REF_RIGID,
     G_KV1 | G_KV8, 0, "Rapier WebAssembly (npm @dimforge/rapier3d-compat), single precision: restitution cr, one step per output"},
};
#define NVARIANT ((int)(sizeof variants / sizeof variants[0]))

/* The paper's Table 1 [ms]: every engine it lists keeps a row */
static const struct {
  const char *engine;
  double ms;
} paper[] = {{"Bullet", 1.0 / 32}, {"ODE", 0.25}, {"PhysX", 2}, {"MuJoCo", 16}, {"kelvin", 128}};

#define NGROUP 3
static const char *group_name[NGROUP] = {"Kelvin-Voigt, cr = 1", "Kelvin-Voigt, cr = 0.8", "Hunt-Crossley, cr = 0.8"};

//------------------------------------------------------------------------------------------------------
// options

#define MX_MAXRUNG 40

typedef struct options {
  const char *out;
  const char *engines; /* comma list, NULL = all */
  double tend;         /* s simulated per run */
  double max_work;     /* cap of one run: internal steps or force evaluations */
  int repeats;
  int kmin, kmax;      /* rungs 2^k ms */
  int top;             /* 1: a last rung whose step is the run length (one output) */
  int plot, quiet;
  int nrung;
  double rung[MX_MAXRUNG]; /* the ladder [s] */
} options;

/* the --help text, with the configurations this build has */
static void usage(FILE *f)
{
  fprintf(f,
          "usage: maxstep [--out DIR] [--engines LIST] [--tend S] [--max-work N] [--repeats N]\n"
          "               [--min-ms X] [--max-ms Y] [--no-plot] [--quiet] [--help]\n"
          "\n"
          "Max stable step of kelvin's 3-D engine against the peer engines (the paper's Table 1): the paper's\n"
          "ball (m = 1 kg, R = 0.1 m, I = 0.1 kg m^2, g = 9.81 m/s^2, lowest point dropped from 1.0 m onto a\n"
          "static plane, linear contact stiffness K = 140e6 N/m, damping D from cr by paper eq. 10) for cr = 1\n"
          "and 0.8, and a Hunt-Crossley variant (n = 3/2, Hertz K = (4/3) E* sqrt(R), steel on steel, cr = 0.8,\n"
          "Hunt-Crossley law), 10 s of simulated time per run, output steps 1/64, 1/32, ... ms up to the run\n"
          "length (the last rung has one output).\n"
          "\n"
          "Options:\n"
          "  --out DIR       output folder (default kelvin-out/bench): maxstep.md, maxstep_*.csv, maxstep_apex.*\n"
          "  --engines LIST  comma list of kelvin,kelvin1d,mujoco,mujoco3,ode,bullet,simbody,dart,siconos,physx,\n"
          "                  rapier (default: all found)\n"
          "  --tend S        simulated seconds per run (default 10)\n"
          "  --max-work N    cap of one run in internal steps or force evaluations, as the engine counts them\n"
          "                  (default 1e6; Simbody 0.2 of it: a realization costs 10-100 us). A rung whose run\n"
          "                  needs more (predicted from a 0.1 s simulated probe, or reached) is reported as not\n"
          "                  run, never as a failure; after two rungs in a row that reached it, the rungs above\n"
          "                  are not run either (the work is then set by the contacts, not by the output step)\n"
          "  --repeats N     timing repeats at reported rungs, median taken (default 3, at least 3)\n"
          "  --min-ms X, --max-ms Y  ladder ends, powers of two in ms (default 1/64 = 0.015625 and the run\n"
          "                  length, whose rung is added after the largest power of two below it)\n"
          "  --no-plot       do not run gnuplot (the .gp and .dat files are still written)\n"
          "  --quiet         no progress on stderr\n"
          "\n"
          "Configurations (engine / config: setup; README.md says which row is each engine's headline):\n");
  for (int i = 0; i < NVARIANT; ++i)
    fprintf(f, "  %-16s %-26s %s%s\n", variants[i].engine, variants[i].config, variants[i].doc,
            variants[i].run ? "" : " [not built: peer not found at configure time]");
  fprintf(f,
          "\n"
          "Criterion, the same for every engine, judged from the output samples: all states finite; no\n"
          "tunnelling (lowest point never more than R below the plane); every apex within 5 %% of the exact\n"
          "height (cr = 0.8 / Hunt-Crossley: apexes expected above 1 cm only); energy drift within 5 %%\n"
          "(cr = 1: |E - E0| / E0 over free-flight samples, and the ball still flying in the last quarter;\n"
          "cr < 1: no energy gain above 5 %% of E0); the ball in flight whenever the exact ball is mid-flight.\n"
          "Exact heights: GSL rk8pd at 1e-13 with event location, gravity during contact, for the engine's\n"
          "own contact (no-tension solvers restitute 0.8081, not 0.8; Newton restitution rows: cr^2 per bounce).\n"
          "The ladder of a configuration stops after two failures above its largest stable step.\n"
          "Cost = wall seconds per simulated second of the stepping loop (setup excluded), median of the repeats.\n");
}

/* parse a number option; exits with status 2 on a bad value */
static double num_arg(const char *opt, const char *s)
{
  char *end;
  errno = 0;
  const double x = strtod(s ? s : "", &end);
  if (!s || end == s || *end || errno || !isfinite(x)) {
    fprintf(stderr, "maxstep: %s: expected a number, got '%s'\n", opt, s ? s : "");
    exit(2);
  }
  return x;
}

/* log2 of a power-of-two step in ms; exits with status 2 otherwise */
static int rung_arg(const char *opt, const char *s)
{
  const double x = num_arg(opt, s);
  const double k = log2(x);
  if (!(x > 0) || fabs(k - round(k)) > 1e-9) {
    fprintf(stderr, "maxstep: %s: must be a power of two in ms (e.g. 0.015625, 1, 1024), got %s\n", opt, s);
    exit(2);
  }
  return (int)lround(k);
}

/* options from argv; exits with status 2 on a usage error */
static void parse(int argc, char **argv, options *o)
{
  memset(o, 0, sizeof *o);
  o->out = "kelvin-out/bench";
  o->engines = NULL;
  o->tend = 10;
  o->max_work = 1e6;
  o->repeats = 3;
  o->kmin = -6;
  o->kmax = 100; /* = up to the run length */
  o->plot = 1;
  o->quiet = 0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *next = (i + 1 < argc) ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      exit(0);
    } else if (!strcmp(a, "--out") && next) {
      o->out = next;
      ++i;
    } else if (!strcmp(a, "--engines") && next) {
      o->engines = next;
      ++i;
    } else if (!strcmp(a, "--tend")) {
      o->tend = num_arg(a, next);
      ++i;
    } else if (!strcmp(a, "--max-work")) {
      o->max_work = num_arg(a, next);
      ++i;
    } else if (!strcmp(a, "--repeats")) {
      o->repeats = (int)num_arg(a, next);
      ++i;
    } else if (!strcmp(a, "--min-ms")) {
      o->kmin = rung_arg(a, next);
      ++i;
    } else if (!strcmp(a, "--max-ms")) {
      o->kmax = rung_arg(a, next);
      ++i;
    } else if (!strcmp(a, "--no-plot")) {
      o->plot = 0;
    } else if (!strcmp(a, "--quiet")) {
      o->quiet = 1;
    } else {
      fprintf(stderr, "maxstep: unknown option or missing value '%s' (try --help)\n", a);
      exit(2);
    }
  }
  if (!(o->tend > 0 && o->tend <= 1000)) {
    fprintf(stderr, "maxstep: --tend: must be in (0, 1000] s, got %g\n", o->tend);
    exit(2);
  }
  if (!(o->max_work >= 10000)) {
    fprintf(stderr, "maxstep: --max-work: must be >= 10000, got %g\n", o->max_work);
    exit(2);
  }
  if (o->repeats < 3) o->repeats = 3;
  /* the ladder: 2^k ms below the run length, then the run length itself (one output) */
  const int klen = (int)floor(log2(o->tend * 1e3) - 1e-12); /* largest 2^k ms below tend */
  o->top = (o->kmax >= 100 || ldexp(1e-3, o->kmax) >= o->tend);
  if (o->kmax > klen) o->kmax = klen;
  if (o->kmin > o->kmax || o->kmin < -12) {
    fprintf(stderr, "maxstep: ladder from 2^%d to 2^%d ms is empty or below 2^-12 ms\n", o->kmin, o->kmax);
    exit(2);
  }
  for (int k = o->kmin; k <= o->kmax && o->nrung < MX_MAXRUNG - 1; ++k) o->rung[o->nrung++] = ldexp(1e-3, k);
  if (o->top) o->rung[o->nrung++] = o->tend;
}

/* 1 if engine key is selected by --engines (NULL = all) */
static int selected(const options *o, const char *key)
{
  if (!o->engines) return 1;
  const size_t n = strlen(key);
  for (const char *p = o->engines; *p;) {
    const char *e = strchr(p, ',');
    const size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && !strncmp(p, key, n)) return 1;
    p += len + (e ? 1 : 0);
  }
  return 0;
}

//------------------------------------------------------------------------------------------------------
// configurations and results

typedef struct config {
  int var;   /* index into variants */
  mx_case c; /* the case it runs */
  int group; /* 0: KV cr = 1, 1: KV cr = 0.8, 2: HC cr = 0.8 */
  int ref;   /* MX_REF_* */
  mx_ref r;
  int best;      /* the largest step with every judged step below it stable (index of its result), -1 if none */
  int first_bad; /* index of the first failed result above it, -1 if none */
  int isolated;  /* the largest stable step above a failure (index of its result), -1 if none */
  int wbest;     /* the same as best for "intact" (finite, no tunnelling) */
  int nskip;     /* rungs not run (over the work cap) */
  double skip_to; /* the largest step not run [s]; 0 if none */
  int last;      /* index of the last result of its ladder */
  char unavailable[200]; /* why it could not run at all (node peers: node or package missing) */
} config;

typedef struct result {
  int cfg, ri; /* configuration, rung index */
  double h;    /* s */
  mx_verdict v;
  double wall, sim, cost; /* stepping seconds (one run), simulated seconds, median wall / sim */
  int nrep;               /* timing repeats behind cost */
  long nstep, nfev, nout, work;
  int skipped;            /* not run: over the work cap (predicted or reached) */
  int reached;            /* ... because the run reached the cap */
  char err[200];
} result;

/* the paper's ball for model `model` and restitution cr */
static mx_case base_case(int model, double cr, double tend)
{
  mx_case c;
  memset(&c, 0, sizeof c);
  kl_ball_model b;
  kl_ball_default(&b); /* m = 1 kg, R = 0.1 m, g = 9.81, K = 140e6 N/m */
  c.model = model;
  c.law = KL_LAW_HUNT_CROSSLEY;
  c.m = b.m;
  c.R = b.R;
  c.I = 0.1; /* the paper's value, not 2/5 m R^2 = 0.004 */
  c.g = b.g;
  c.cr = cr;
  c.z0 = 1.0;
  c.tend = tend;
  if (model == MX_KV) {
    c.K = b.K;
    c.n = 1.0;
    c.D = kl_kv_damping(cr, c.K, c.m); /* paper eq. (10) */
  } else {
    c.K = kl_hertz_K(kl_estar(210e9, 0.3, 210e9, 0.3), c.R); /* steel on steel, paper eq. (2) */
    c.n = 1.5;
    c.chi = kl_hc_chi(c.law, cr, sqrt(2.0 * c.g * c.z0));
  }
  return c;
}

/* a step in ms as text: 1/64, 1/2, 1, 1024, 10000 */
static const char *ms_str(double h, char *buf, size_t cap)
{
  const double x = h * 1e3;
  if (x >= 1 && fabs(x - round(x)) < 1e-9 * x)
    snprintf(buf, cap, "%.0f", x);
  else if (x < 1 && fabs(1 / x - round(1 / x)) < 1e-9 / x)
    snprintf(buf, cap, "1/%.0f", 1 / x);
  else
    snprintf(buf, cap, "%g", x);
  return buf;
}

typedef struct buffers {
  long cap;
  double *t, *z, *vz, *f, *apex;
} buffers;

/* an engine's share of the work cap: Simbody's realizations cost 10-100 us each (a fixed number, not a
 * timing); every other engine's step is counted at par */
/* 1 for kelvin's Hunt-Crossley runs with chi fixed at the first impact's value (Simbody's model) */
static int is_chifix(const variant *va) { return va->run == mx_kelvin_run && va->v > MX_KELVIN_CHIFIX; }

static double variant_share(const variant *va) { return va->run && va->run == MX_SIMBODY ? 0.2 : 1.0; }

/* the work cap of a variant's runs */
static double work_cap(const options *o, const variant *va) { return o->max_work * variant_share(va); }

/* one run of configuration cf (case c, possibly shortened) at step h into *res (one timing) */
static void run_case(const options *o, const config *cf, const mx_case *c, double h, buffers *b, result *res)
{
  const variant *va = &variants[cf->var];
  memset(res, 0, sizeof *res);
  res->h = h;
  mx_trace tr;
  memset(&tr, 0, sizeof tr);
  tr.cap = b->cap;
  tr.t = b->t;
  tr.z = b->z;
  tr.vz = b->vz;
  tr.f = b->f;
  tr.work_cap = (long)work_cap(o, va);
  tr.fpeak_int = -1;
  tr.dmax_int = -1;
  tr.apex_log = (va->run == mx_kelvin_run || va->run == mx_kelvin1d_run) ? b->apex : NULL;
  if (va->run(c, va->v, h, &tr) != 0) {
    snprintf(res->err, sizeof res->err, "%s", tr.err);
    tr.bad = 1;
  }
  mx_check(c, &cf->r, &tr, &res->v);
  res->nout = tr.n - 1;
  res->sim = tr.n > 1 ? tr.t[tr.n - 1] : 0.0;
  res->wall = tr.wall;
  res->nrep = 1;
  res->cost = res->sim > 0 ? res->wall / res->sim : INFINITY;
  res->nstep = tr.nstep;
  res->nfev = tr.nfev;
  res->work = tr.work;
  if (tr.capped) {
    res->skipped = 1;
    res->reached = 1;
    res->v.stable = res->v.intact = 0;
    snprintf(res->v.why, sizeof res->v.why, "not run: cap of %.3g steps/evaluations reached at t = %.3g s",
             work_cap(o, va), res->sim);
  }
}

/* one rung: not run when its outputs alone exceed the cap, or when a 0.1 s simulated probe predicts more
 * work than the cap (counts of steps or evaluations: the same verdict on an idle or a busy machine) */
static void run_one(const options *o, config *cf, double h, buffers *b, result *res)
{
  const long nout = mx_nout(&cf->c, h);
  const double cap = work_cap(o, &variants[cf->var]);
  if ((double)nout > cap) {
    memset(res, 0, sizeof *res);
    res->h = h;
    res->skipped = 1;
    snprintf(res->v.why, sizeof res->v.why, "not run: %ld outputs > cap %.3g", nout, cap);
    return;
  }
  const double tprobe = 0.1;
  if (nout > 10000 && cf->c.tend > 2 * tprobe) {
    mx_case pc = cf->c;
    pc.tend = tprobe;
    run_case(o, cf, &pc, h, b, res);
    const double predicted = (double)res->work * cf->c.tend / tprobe;
    if (!res->skipped && predicted > cap) {
      memset(res, 0, sizeof *res);
      res->h = h;
      res->skipped = 1;
      snprintf(res->v.why, sizeof res->v.why, "not run: predicted %.3g steps/evaluations > cap %.3g", predicted,
               cap);
      return;
    }
  }
  run_case(o, cf, &cf->c, h, b, res);
}

/* compare doubles for qsort */
static int cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* re-time result res: at least o->repeats runs in all (more while under 50 ms of stepping in total);
 * cost = the median. Verdicts are not re-judged: the runs are deterministic. */
static void remeasure(const options *o, config *cf, buffers *b, result *res)
{
  if (res->nrep > 1 || !res->v.stable || res->skipped) return;
  double costs[256];
  int n = 0;
  costs[n++] = res->cost;
  double total = res->wall;
  while (n < 256 && (n < o->repeats || (total < 0.05 && n < 200))) {
    result again;
    run_case(o, cf, &cf->c, res->h, b, &again);
    costs[n++] = again.cost;
    total += again.wall;
  }
  qsort(costs, (size_t)n, sizeof costs[0], cmp_double);
  res->cost = (n % 2) ? costs[n / 2] : 0.5 * (costs[n / 2 - 1] + costs[n / 2]);
  res->nrep = n;
}

//------------------------------------------------------------------------------------------------------
// output: atomic files in --out

/* mkdir -p */
static int make_dirs(const char *path)
{
  char buf[1024];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return -1;
  for (char *p = buf + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
  return 0;
}

/* write text to DIR/NAME through a temporary file and rename (readers never see a partial file) */
static int write_atomic(const char *dir, const char *name, const char *text, size_t len)
{
  char path[1200], tmp[1300];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    fprintf(stderr, "maxstep: cannot write %s: %s\n", tmp, strerror(errno));
    return -1;
  }
  const int ok = fwrite(text, 1, len, f) == len;
  if (fclose(f) != 0 || !ok || rename(tmp, path) != 0) {
    fprintf(stderr, "maxstep: cannot write %s: %s\n", path, strerror(errno));
    remove(tmp);
    return -1;
  }
  return 0;
}

/* a growing text buffer (open_memstream) */
typedef struct text {
  char *buf;
  size_t len;
  FILE *f;
} text;

/* start an empty text buffer */
static void text_open(text *t)
{
  t->buf = NULL;
  t->len = 0;
  t->f = open_memstream(&t->buf, &t->len);
}

/* close t and write it to DIR/NAME; returns 0 on success */
static int text_save(text *t, const char *dir, const char *name)
{
  if (!t->f) return -1;
  fclose(t->f);
  const int rc = write_atomic(dir, name, t->buf, t->len);
  free(t->buf);
  return rc;
}

/* a relative error for a table: 3 significant digits, "-" when not available */
static const char *err_str(double e, char *buf, size_t cap)
{
  if (e < 0)
    snprintf(buf, cap, "-");
  else if (!isfinite(e))
    snprintf(buf, cap, "inf");
  else if (e < 1e-15)
    snprintf(buf, cap, "<1e-15");
  else
    snprintf(buf, cap, "%.2e", e);
  return buf;
}

/* index of the first variant of engine `name` */
static int engine_first(const char *name)
{
  for (int i = 0; i < NVARIANT; ++i)
    if (!strcmp(variants[i].engine, name)) return i;
  return -1;
}

/* the internal peak-force error where exposed, else the sampled one (criterion (c)) */
static double fpeak_best_err(const mx_verdict *v) { return v->fpeak_int_err >= 0 ? v->fpeak_int_err : v->fpeak_err; }

/* whether stable run r meets accuracy criterion a of the accuracy-cost tables (maxstep.c, below):
 * 0 (a) apex and sampled peak force within acc, 1 (b) apex, 2 (c) apex and internal peak force,
 * 3 (d) every apex above 1 cm seen and within acc_tight; kelvin's chi-fixed runs count for (d) only */
static int meets(int a, const result *r, int fixed, double acc, double acc_tight)
{
  if (!r->v.stable || r->skipped || !(r->v.napex > 0 && r->v.apex_err <= acc)) return 0;
  if (fixed && a != 3) return 0;
  if (a == 0) return r->v.fpeak_err <= acc;
  if (a == 2) return fpeak_best_err(&r->v) <= acc;
  if (a == 3) return r->v.napex >= r->v.nexpect && r->v.apex_err <= acc_tight;
  return 1;
}

//------------------------------------------------------------------------------------------------------

/* run every ladder, then write the tables and the figure */
int main(int argc, char **argv)
{
  options o;
  parse(argc, argv, &o);
  if (make_dirs(o.out) != 0) {
    fprintf(stderr, "maxstep: cannot create output folder %s: %s\n", o.out, strerror(errno));
    return 1;
  }

  /* which peers this build has */
  const char *missing[NVARIANT];
  int nmissing = 0;
  for (int i = 0; i < NVARIANT; ++i) {
    if (variants[i].run || !selected(&o, variants[i].key)) continue;
    int seen = 0;
    for (int j = 0; j < nmissing; ++j) seen |= !strcmp(missing[j], variants[i].engine);
    if (!seen) missing[nmissing++] = variants[i].engine;
  }
  for (int j = 0; j < nmissing; ++j)
    fprintf(stderr, "maxstep: %s was not found when this program was configured: its rows are skipped\n",
            missing[j]);

  /* configurations: each selected variant for each of its cases */
  config cfgs[NGROUP * NVARIANT];
  int ncfg = 0;
  const double v1 = sqrt(2.0 * 9.81 * 1.0);
  for (int g = 0; g < NGROUP; ++g) {
    for (int i = 0; i < NVARIANT; ++i) {
      const variant *va = &variants[i];
      if (!va->run || !selected(&o, va->key) || !(va->groups & (1 << g))) continue;
      config *cf = &cfgs[ncfg++];
      memset(cf, 0, sizeof *cf);
      cf->var = i;
      cf->group = g;
      cf->c = base_case(g == 2 ? MX_HC : MX_KV, g == 0 ? 1.0 : 0.8, o.tend);
      const int kelvin = (va->run == mx_kelvin_run || va->run == mx_kelvin1d_run);
      cf->ref = (g == 2) ? (kelvin && !is_chifix(va) ? MX_REF_HC_LAW : MX_REF_HC_FIXED) : va->kv_ref;
      cf->best = cf->first_bad = cf->isolated = cf->wbest = cf->last = -1;
    }
  }
  if (!ncfg) {
    fprintf(stderr, "maxstep: no engine selected or built (--engines '%s')\n", o.engines ? o.engines : "");
    return 2;
  }
  const double t0 = mx_now();
  for (int i = 0; i < ncfg; ++i) {
    /* references are shared by configurations with the same case and mode */
    int done = 0;
    for (int j = 0; j < i && !done; ++j)
      if (cfgs[j].group == cfgs[i].group && cfgs[j].ref == cfgs[i].ref) {
        cfgs[i].r = cfgs[j].r;
        done = 1;
      }
    if (!done) mx_ref_build(&cfgs[i].c, cfgs[i].ref, o.tend + 2.0 + o.rung[o.nrung - 1], &cfgs[i].r);
  }
  if (!o.quiet) fprintf(stderr, "maxstep: references built in %.2f s\n", mx_now() - t0);

  /* sample buffers for the finest rung */
  buffers b;
  b.cap = lround(o.tend / o.rung[0]) + 16;
  b.t = malloc((size_t)b.cap * sizeof(double));
  b.z = malloc((size_t)b.cap * sizeof(double));
  b.vz = malloc((size_t)b.cap * sizeof(double));
  b.f = malloc((size_t)b.cap * sizeof(double));
  b.apex = malloc(MX_APEX_LOG_MAX * sizeof(double));
  result *res = malloc((size_t)(ncfg * o.nrung) * sizeof *res);
  if (!b.t || !b.z || !b.vz || !b.f || !b.apex || !res) {
    fprintf(stderr, "maxstep: out of memory for %ld samples\n", b.cap);
    return 1;
  }
  int nres = 0;

  //------- the ladders -------
  for (int i = 0; i < ncfg; ++i) {
    config *cf = &cfgs[i];
    const variant *va = &variants[cf->var];
    if (va->run == mx_node_run && !mx_node_version(va->v >> 8)) {
      /* node or the npm package is missing: every rung "not run", with the reason */
      snprintf(cf->unavailable, sizeof cf->unavailable, "%s", mx_node_reason(va->v >> 8));
      if (!o.quiet) fprintf(stderr, "maxstep: %s %s not run: %s\n", va->engine, va->config, cf->unavailable);
      continue;
    }
    /* two readings, each "every judged step up to here passes": stable (the criterion) and intact
     * (finite, no tunnelling: the weaker "did not blow up"); the ladder stops once each has failed
     * twice above its max */
    int fails_above = 0, failed = 0, wfails_above = 0, wfailed = 0, nreached = 0;
    for (int ri = 0; ri < o.nrung; ++ri) {
      result *r = &res[nres];
      if (nreached >= 2) { /* the work did not fall with the step: the rungs above are not run */
        memset(r, 0, sizeof *r);
        r->h = o.rung[ri];
        r->skipped = 1;
        snprintf(r->v.why, sizeof r->v.why, "not run: the two rungs below reached the cap");
      } else {
        run_one(&o, cf, o.rung[ri], &b, r);
      }
      nreached = r->reached ? nreached + 1 : (r->skipped ? nreached : 0);
      r->cfg = i;
      r->ri = ri;
      cf->last = nres;
      nres++;
      if (r->skipped) {
        cf->nskip++;
        cf->skip_to = r->h; /* a rung not run is neither a pass nor a failure */
      } else {
        if (r->v.stable && !failed) {
          cf->best = nres - 1;
        } else if (r->v.stable) {
          cf->isolated = nres - 1; /* passes again above a failure: reported, not counted */
        } else {
          failed = 1;
          if (cf->best >= 0) {
            if (cf->first_bad < 0) cf->first_bad = nres - 1;
            fails_above++;
          }
        }
        if (r->v.intact && !wfailed) {
          cf->wbest = nres - 1;
        } else if (!r->v.intact) {
          wfailed = 1;
          if (cf->wbest >= 0) wfails_above++;
        }
      }
      if (!o.quiet) {
        char ms[16], e1[16];
        fprintf(stderr, "maxstep: %-16s %-22s %-23s h = %5s ms: %-7s apex err %s  %.3g s%s%s\n", va->engine,
                va->config, group_name[cf->group], ms_str(r->h, ms, sizeof ms),
                r->skipped ? "not run" : r->v.stable ? "stable" : "FAIL", err_str(r->v.apex_err, e1, sizeof e1),
                r->wall, r->v.stable ? "" : "  -- ", r->v.stable ? "" : r->v.why);
      }
      if (fails_above >= 2 && (wfails_above >= 2 || (wfailed && cf->wbest < 0))) break;
    }
    if (cf->best >= 0) remeasure(&o, cf, &b, &res[cf->best]);
  }

  //------- accuracy-cost: per case and engine, the cheapest run meeting each accuracy criterion -------
  /* (b) apex error <= 1e-3 from the output samples (an apex must be seen in them);
   * (a) and the sampled peak force within 1e-3; (c) and the internal peak force (samples where the
   * engine exposes nothing else) within 1e-3; (d) apex error <= 1e-8, each engine at the cheapest
   * setting of its tolerance ladder that meets it */
  const double acc = 1e-3, acc_tight = 1e-8;
  int kfix = -1; /* the first of kelvin's chi-fixed variants */
  for (int i = NVARIANT - 1; i >= 0; --i)
    if (is_chifix(&variants[i])) kfix = i;
  enum { CRIT_A = 0, CRIT_B = 1, CRIT_C = 2, CRIT_D = 3, NCRIT = 4 };
  static const char *crit_name[NCRIT] = {"apex+force (samples)", "apex", "apex+force (internal)", "apex 1e-8"};
  int cheapest[NCRIT][NGROUP][NVARIANT]; /* [criterion][case][the engine's first variant] */
  /* pick by cost; a winner timed once is re-timed (median of repeats) and the pick made again, until
   * every winner's cost is a median (a lucky single timing cannot win over a median) */
  for (int round = 0; round < 64; ++round) {
    for (int a = 0; a < NCRIT; ++a)
      for (int g = 0; g < NGROUP; ++g)
        for (int i = 0; i < NVARIANT; ++i) cheapest[a][g][i] = -1;
    for (int j = 0; j < nres; ++j) {
      const config *cf = &cfgs[res[j].cfg];
      const result *r = &res[j];
      /* kelvin's runs of Simbody's model (chi fixed) are their own entry, for (d) only; (d) wants every
       * apex above 1 cm seen in the samples (a coarse output step sees a few, which ones depending on
       * the step) */
      const int fixed = is_chifix(&variants[cf->var]);
      const int e = fixed ? kfix : engine_first(variants[cf->var].engine);
      for (int a = 0; a < NCRIT; ++a) {
        if (!meets(a, r, fixed, acc, acc_tight)) continue;
        int *c = &cheapest[a][cf->group][e];
        if (*c < 0 || r->cost < res[*c].cost) *c = j;
      }
    }
    int timed = 0;
    for (int a = 0; a < NCRIT; ++a)
      for (int g = 0; g < NGROUP; ++g)
        for (int i = 0; i < NVARIANT; ++i) {
          const int j = cheapest[a][g][i];
          if (j < 0 || res[j].nrep > 1) continue;
          remeasure(&o, &cfgs[res[j].cfg], &b, &res[j]);
          timed += res[j].nrep > 1;
        }
    if (timed) continue;
    /* the winners are medians: every run of the same entry meeting the same criterion whose single
     * timing is within 1.25x of the winner's is re-timed too (an unlucky single timing cannot lose) */
    for (int j = 0; j < nres; ++j) {
      const config *cf = &cfgs[res[j].cfg];
      result *r = &res[j];
      if (r->nrep > 1) continue;
      const int fixed = is_chifix(&variants[cf->var]);
      const int e = fixed ? kfix : engine_first(variants[cf->var].engine);
      for (int a = 0; a < NCRIT && r->nrep <= 1; ++a) {
        if (!meets(a, r, fixed, acc, acc_tight)) continue;
        const int w = cheapest[a][cf->group][e];
        if (w >= 0 && r->cost <= 1.25 * res[w].cost) {
          remeasure(&o, &cfgs[r->cfg], &b, r);
          timed += r->nrep > 1;
        }
      }
    }
    if (!timed) break;
  }
  /* the WebAssembly penalty: MuJoCo 3 under node against MuJoCo 2.2.2 native, the same model and
   * integrator at the same step (cr = 1, 1/4 ms: 40 000 steps), medians of the same repeats */
  double penalty[3] = {-1, -1, -1};
  const double hpen = 0.25e-3;
  for (int ig = 0; ig < 3; ++ig) {
    const int vn[3] = {MX_MUJOCO_KD, MX_MUJOCO_KD_RK4, MX_MUJOCO_KD_IMPLICIT};
    const int vw[3] = {MX_NODE_MJ_EULER, MX_NODE_MJ_RK4, MX_NODE_MJ_IMPLICIT};
    int cn = -1, cw = -1;
    for (int i = 0; i < ncfg; ++i) {
      const variant *va = &variants[cfgs[i].var];
      if (cfgs[i].group != 0 || cfgs[i].unavailable[0]) continue;
      if (va->run == MX_MUJOCO && va->run && va->v == vn[ig]) cn = i;
      if (va->run == mx_node_run && va->v == (MX_NODE_MUJOCO | vw[ig])) cw = i;
    }
    if (cn < 0 || cw < 0) continue;
    result rn, rw;
    rn.nrep = rw.nrep = 1;
    run_case(&o, &cfgs[cn], &cfgs[cn].c, hpen, &b, &rn);
    run_case(&o, &cfgs[cw], &cfgs[cw].c, hpen, &b, &rw);
    rn.v.stable = rw.v.stable = 1; /* remeasure times stable runs only; the verdict is not used here */
    rn.skipped = rw.skipped = 0;
    remeasure(&o, &cfgs[cn], &b, &rn);
    remeasure(&o, &cfgs[cw], &b, &rw);
    if (rn.cost > 0) penalty[ig] = rw.cost / rn.cost;
  }
  const double total_wall = mx_now() - t0;
  mx_node_stop();

  //------- report -------
  text md, csv, sum, ac, dat;
  text_open(&md);
  text_open(&csv);
  text_open(&sum);
  text_open(&ac);
  text_open(&dat);
  char ms[16], ms2[16], e1[16], e2[16], e3[16], e4[16], e5[16];
  time_t now = time(NULL);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  const int kelvin3d = engine_first("kelvin");

  fprintf(md.f, "Measured by `benchmarks/maxstep` on %s (README.md there: configurations, criterion, references).\n\n", date);
  fprintf(md.f,
          "The paper's ball (m = 1 kg, R = 0.1 m, I = 0.1 kg m², lowest point dropped from 1.0 m, g = 9.81) on "
          "a static plane, %.0f s simulated per run, output steps %s ms … %s ms (the last rung: one output at the "
          "end of the run). Kelvin-Voigt rows: K = 140e6 N/m, D from cr by eq. (10) (cr = 0.8: D = %.1f N s/m). "
          "Hunt-Crossley rows: n = 3/2, K = (4/3) E* √R = %.4g N/m^1.5 (steel on steel), Hunt-Crossley law, chi = "
          "%.4g s/m at the first impact (%.4f m/s). Engines: kelvin %s (engine/world, 3-D)",
          o.tend, ms_str(o.rung[0], ms, sizeof ms), ms_str(o.rung[o.nrung - 1], ms2, sizeof ms2),
          kl_kv_damping(0.8, 140e6, 1.0), kl_hertz_K(kl_estar(210e9, 0.3, 210e9, 0.3), 0.1),
          kl_hc_chi(KL_LAW_HUNT_CROSSLEY, 0.8, v1), v1, KELVIN_VERSION_STRING);
#ifdef MX_HAVE_MUJOCO
  fprintf(md.f, ", %s", mx_mujoco_version());
#endif
#ifdef MX_HAVE_ODE
  fprintf(md.f, ", %s", mx_ode_version());
#endif
#ifdef MX_HAVE_BULLET
  fprintf(md.f, ", %s", mx_bullet_version());
#endif
#ifdef MX_HAVE_SIMBODY
  fprintf(md.f, ", %s", mx_simbody_version());
#endif
#ifdef MX_HAVE_DART
  fprintf(md.f, ", %s", mx_dart_version());
#endif
#ifdef MX_HAVE_SICONOS
  fprintf(md.f, ", %s", mx_siconos_version());
#endif
  for (int e = 0; e < 3; ++e) {
    int used = 0;
    for (int i = 0; i < ncfg; ++i) used |= (variants[cfgs[i].var].run == mx_node_run && variants[cfgs[i].var].v >> 8 == e);
    if (used && mx_node_version(e)) fprintf(md.f, ", %s (WebAssembly, node %s)", mx_node_version(e), mx_node_version(3));
  }
  fprintf(md.f, ".");
  for (int j = 0; j < nmissing; ++j) fprintf(md.f, " %s: not found at configure time, skipped.", missing[j]);
  fprintf(md.f, " Total benchmark wall time %.0f s; cap per run %.3g internal steps or force evaluations (Simbody %.3g "
                "realizations): a rung over it is \"not run\", never a failure; after two rungs in a row that reached "
                "it, the rungs above are not run either.\n\n",
          total_wall, o.max_work, 0.2 * o.max_work);

  /* summary per configuration */
  fprintf(md.f, "Per configuration: the max stable step (the criterion, an accuracy test) and the largest step "
                "with finite states and no tunnelling (a stability test, as the paper's Table 1); errors at the "
                "max stable step against the independent GSL reference, from the output samples and, second, "
                "from the engine's internal steps where it exposes them (kelvin: its contact log; Simbody: every "
                "internal step; \"-\": the engine takes one step per output, so its samples are its steps):\n\n");
  fprintf(md.f, "| engine | config | case | max stable step [ms] | finite, no tunnelling up to [ms] | apex err: samples "
                "(log) | peak force err: samples | internal | penetration err: samples | internal | cost [s/s] "
                "| steps (evals) per output | first failure above |\n");
  fprintf(md.f, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  fprintf(sum.f, "engine,config,case,max_stable_ms,intact_ms,apex_err,apex_err_log,fpeak,fpeak_exact,fpeak_err,"
                 "fpeak_int,fpeak_int_err,pen,pen_exact,pen_err,pen_int_err,edrift,cost_s_per_s,repeats,"
                 "steps_per_output,evals_per_output,first_failure_ms,first_failure\n");
  for (int i = 0; i < ncfg; ++i) {
    const config *cf = &cfgs[i];
    const variant *va = &variants[cf->var];
    if (cf->unavailable[0]) {
      fprintf(md.f, "| %s | %s | %s | not run | not run | | | | | | | | %s |\n", va->engine, va->config,
              group_name[cf->group], cf->unavailable);
      fprintf(sum.f, "%s,%s,\"%s\",,,,,,,,,,,,,,,,,,,,\"not run: %s\"\n", va->engine, va->config, group_name[cf->group],
              cf->unavailable);
      continue;
    }
    char intact[16] = "none";
    if (cf->wbest >= 0) ms_str(res[cf->wbest].h, intact, sizeof intact);
    const double intact_ms = cf->wbest >= 0 ? res[cf->wbest].h * 1e3 : 0.0;
    char skipnote[160] = "";
    if (cf->nskip)
      snprintf(skipnote, sizeof skipnote, "; %d rung%s up to %s not run (over the cap)", cf->nskip,
               cf->nskip > 1 ? "s" : "", ms_str(cf->skip_to, ms2, sizeof ms2));
    if (cf->best < 0) {
      const char *why = "every rung not run";
      double hf = 0;
      for (int j = 0; j < nres; ++j)
        if (res[j].cfg == i && !res[j].skipped) {
          why = res[j].v.why;
          hf = res[j].h;
          break;
        }
      char again[96] = "";
      if (cf->isolated >= 0) snprintf(again, sizeof again, " (passes at %s)", ms_str(res[cf->isolated].h, ms, sizeof ms));
      char fails[32] = "";
      if (hf > 0) snprintf(fails, sizeof fails, "fails at %s", ms_str(hf, ms, sizeof ms));
      fprintf(md.f, "| %s | %s | %s | none (%s) | %s | | | | | | | | %s%s%s%s%s |\n", va->engine, va->config,
              group_name[cf->group], hf > 0 ? fails : "not run", intact, hf > 0 ? ms_str(hf, ms2, sizeof ms2) : "",
              hf > 0 ? ": " : "", why, again, skipnote);
      fprintf(sum.f, "%s,%s,\"%s\",,%.10g,,,,%.10g,,,,,%.10g,,,,,,,,%s,\"%s\"\n", va->engine, va->config,
              group_name[cf->group], intact_ms, cf->r.fpeak, cf->r.dmax, hf > 0 ? ms_str(hf, ms2, sizeof ms2) : "", why);
      continue;
    }
    const result *r = &res[cf->best];
    const double spo = (double)r->nstep / (double)r->nout;
    char steps[48];
    if (r->nfev >= 0)
      snprintf(steps, sizeof steps, "%.3g (%.3g)", spo, (double)r->nfev / (double)r->nout);
    else
      snprintf(steps, sizeof steps, "%.3g", spo);
    char failure[320];
    if (cf->first_bad >= 0)
      snprintf(failure, sizeof failure, "%s: %s", ms_str(res[cf->first_bad].h, ms2, sizeof ms2), res[cf->first_bad].v.why);
    else if (r->ri == o.nrung - 1 && o.top)
      snprintf(failure, sizeof failure, "none: stable up to the run length (%s ms, one output)",
               ms_str(o.rung[o.nrung - 1], ms2, sizeof ms2));
    else if (res[cf->last].skipped)
      snprintf(failure, sizeof failure, "none; the rungs above were not run (over the cap)");
    else
      snprintf(failure, sizeof failure, "none up to the ladder's end");
    const size_t l = strlen(failure);
    snprintf(failure + l, sizeof failure - l, "%s", skipnote);
    if (cf->isolated >= 0) {
      const size_t l2 = strlen(failure);
      snprintf(failure + l2, sizeof failure - l2, " (passes again at %s)", ms_str(res[cf->isolated].h, ms2, sizeof ms2));
    }
    char apex[64];
    if (r->v.napex == 0) /* the output step is too long to see an apex in the samples */
      snprintf(e1, sizeof e1, "none seen");
    else
      err_str(r->v.apex_err, e1, sizeof e1);
    if (r->v.apex_err_log >= 0)
      snprintf(apex, sizeof apex, "%s (log %s)", e1, err_str(r->v.apex_err_log, e2, sizeof e2));
    else
      snprintf(apex, sizeof apex, "%s", e1);
    fprintf(md.f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.3g | %s | %s |\n", va->engine, va->config,
            group_name[cf->group], ms_str(r->h, ms, sizeof ms), intact, apex, err_str(r->v.fpeak_err, e3, sizeof e3),
            err_str(r->v.fpeak_int_err, e4, sizeof e4), err_str(r->v.pen_err, e5, sizeof e5),
            err_str(r->v.pen_int_err, e2, sizeof e2), r->cost, steps, failure);
    fprintf(sum.f, "%s,%s,\"%s\",%.10g,%.10g,%.6g,%.6g,%.10g,%.10g,%.6g,%.10g,%.6g,%.10g,%.10g,%.6g,%.6g,%.6g,%.6g,%d,%.6g,"
                   "%.6g,%s,\"%s\"\n",
            va->engine, va->config, group_name[cf->group], r->h * 1e3, intact_ms, r->v.apex_err, r->v.apex_err_log,
            r->v.fpeak, cf->r.fpeak, r->v.fpeak_err, r->v.fpeak_int, r->v.fpeak_int_err, r->v.pen, cf->r.dmax,
            r->v.pen_err, r->v.pen_int_err, r->v.edrift, r->cost, r->nrep, spo,
            r->nfev >= 0 ? (double)r->nfev / (double)r->nout : -1.0,
            cf->first_bad >= 0 ? ms_str(res[cf->first_bad].h, ms2, sizeof ms2) : "",
            cf->first_bad >= 0 ? res[cf->first_bad].v.why : "");
  }

  /* kelvin's engines across the whole ladder: the worst errors of any rung */
  fprintf(md.f, "\nkelvin across the whole ladder (every rung, %s ms … %s ms): rungs stable / run, and the worst error "
                "of any rung against the independent reference — apex from the samples where an apex is seen in "
                "them and from the contact log's exit speeds (v_out²/2g) at every rung; peak force and penetration "
                "from the contact log:\n\n",
          ms_str(o.rung[0], ms, sizeof ms), ms_str(o.rung[o.nrung - 1], ms2, sizeof ms2));
  fprintf(md.f, "| engine | config | case | stable / run | worst apex err: samples | log | worst peak force err (log) "
                "| worst penetration err (log) | all ≤ 1e-9 |\n");
  fprintf(md.f, "|---|---|---|---:|---:|---:|---:|---:|---|\n");
  for (int i = 0; i < ncfg; ++i) {
    const config *cf = &cfgs[i];
    const variant *va = &variants[cf->var];
    if (va->run != mx_kelvin_run && va->run != mx_kelvin1d_run) continue;
    int nrun = 0, nstable = 0;
    double wa = 0, wl = -1, wf = -1, wp = -1;
    for (int j = 0; j < nres; ++j) {
      const result *r = &res[j];
      if (r->cfg != i || r->skipped) continue;
      nrun++;
      nstable += r->v.stable;
      wa = fmax(wa, r->v.apex_err);
      wl = fmax(wl, r->v.apex_err_log);
      wf = fmax(wf, r->v.fpeak_int_err);
      wp = fmax(wp, r->v.pen_int_err);
    }
    const int ok = nrun > 0 && nstable == nrun && wa <= 1e-9 && (wl < 0 || wl <= 1e-9) && wf <= 1e-9 && wp <= 1e-9;
    fprintf(md.f, "| %s | %s | %s | %d / %d | %s | %s | %s | %s | %s |\n", va->engine, va->config, group_name[cf->group],
            nstable, nrun, err_str(wa, e1, sizeof e1), err_str(wl, e2, sizeof e2), err_str(wf, e3, sizeof e3),
            err_str(wp, e4, sizeof e4), ok ? "yes" : "no");
  }

  /* headline per engine against the paper's Table 1 */
  fprintf(md.f, "\nHeadline per engine (its best configuration; kelvin: the 3-D engine with the paper's model) against "
                "the paper's Table 1, in both readings: the criterion (accuracy: every apex within 5 %%) and finite with "
                "no tunnelling (stability, as Table 1):\n\n");
  fprintf(md.f, "| engine | paper, Table 1 [ms] | criterion, cr = 1 [ms] (config) | criterion, cr = 0.8 [ms] (config) "
                "| here / paper (cr = 1) | finite, no tunnelling, cr = 1 [ms] (config) | finite, no tunnelling, cr = 0.8 "
                "[ms] (config) |\n");
  fprintf(md.f, "|---|---:|---:|---:|---:|---:|---:|\n");
  int paper_seen[sizeof paper / sizeof paper[0]] = {0};
  for (int i = 0; i < NVARIANT; ++i) {
    if (engine_first(variants[i].engine) != i) continue;
    double pms = -1;
    for (size_t p = 0; p < sizeof paper / sizeof paper[0]; ++p)
      if (!strncmp(paper[p].engine, variants[i].engine, strlen(paper[p].engine)) &&
          strcmp(variants[i].engine, "kelvin 1-D")) {
        pms = paper[p].ms;
        paper_seen[p] = 1;
      }
    char cell[2][2][120];
    double best_ms[2][2] = {{-1, -1}, {-1, -1}};
    const char *unavail = NULL;
    for (int w = 0; w < 2; ++w)
      for (int g = 0; g < 2; ++g) {
        snprintf(cell[w][g], sizeof cell[w][g], "%s", variants[i].run && selected(&o, variants[i].key) ? "none" : "not run");
        for (int j = 0; j < ncfg; ++j) {
          const config *cf = &cfgs[j];
          if (cf->group != g || strcmp(variants[cf->var].engine, variants[i].engine)) continue;
          if (cf->unavailable[0]) unavail = cf->unavailable;
          if (!strcmp(variants[i].engine, "kelvin") && variants[cf->var].v != MX_KELVIN_PEN) continue;
          const int bi = w ? cf->wbest : cf->best;
          if (bi < 0) continue;
          const double hms = res[bi].h * 1e3;
          if (hms > best_ms[w][g]) {
            best_ms[w][g] = hms;
            const int top = (res[bi].ri == o.nrung - 1 && o.top);
            snprintf(cell[w][g], sizeof cell[w][g], "%s%s (%s)", ms_str(res[bi].h, ms, sizeof ms),
                     top ? " = run length" : "", variants[cf->var].config);
          }
        }
        if (unavail && best_ms[w][g] < 0) snprintf(cell[w][g], sizeof cell[w][g], "not run");
      }
    char ratio[32] = "-";
    if (pms > 0 && best_ms[0][0] > 0) snprintf(ratio, sizeof ratio, "%.3g", best_ms[0][0] / pms);
    char pcell[32] = "-";
    if (pms > 0) {
      if (pms < 1)
        snprintf(pcell, sizeof pcell, "1/%.0f", 1.0 / pms);
      else
        snprintf(pcell, sizeof pcell, "%.0f", pms);
    }
    fprintf(md.f, "| %s%s | %s | %s | %s | %s | %s | %s |\n", variants[i].engine,
            variants[i].extra ? " (extra row)" : "", pcell, cell[0][0], cell[0][1], ratio, cell[1][0], cell[1][1]);
    if (unavail) fprintf(md.f, "| ↳ %s | | not run: %s | | | | |\n", variants[i].engine, unavail);
  }
  for (size_t p = 0; p < sizeof paper / sizeof paper[0]; ++p)
    if (!paper_seen[p]) fprintf(md.f, "| %s | %g | not in this build | | | | |\n", paper[p].engine, paper[p].ms);

  /* accuracy-cost */
  fprintf(md.f, "\nAccuracy–cost: per case and engine, the cheapest stable run (any configuration, any step) whose "
                "samples show an apex and meet (b) apex error ≤ 1e-3; (a) and the peak force of the output samples "
                "within 1e-3; (c) and the internal peak force within 1e-3 (kelvin's contact log, Simbody's internal "
                "steps; the samples for engines that take one step per output). Cost relative to kelvin's 3-D engine "
                "under the same criterion in the same run (\"-\": kelvin has no qualifying run). A sampled peak needs "
                "an output step well below the contact time (%.3g ms). The WebAssembly peers run under node: their "
                "cost includes the WebAssembly penalty (see README.md), their stability does not.\n\n",
          cfgs[0].r.tc * 1e3);
  fprintf(md.f, "| case | engine | (b) apex: config, step [ms] | apex err | cost [s/s] | × kelvin 3-D | (a) + sampled "
                "peak: config, step | peak err | cost | × kelvin 3-D | (c) + internal peak: config, step | peak err | "
                "cost | × kelvin 3-D |\n");
  fprintf(md.f, "|---|---|---|---:|---:|---:|---|---:|---:|---:|---|---:|---:|---:|\n");
  fprintf(ac.f, "case,engine,criterion,config,step_ms,apex_err,fpeak_err,fpeak_int_err,cost_s_per_s,relative_to_kelvin3d\n");
  static const int order[3] = {CRIT_B, CRIT_A, CRIT_C};
  for (int g = 0; g < NGROUP; ++g) {
    for (int i = 0; i < NVARIANT; ++i) {
      if (engine_first(variants[i].engine) != i) continue;
      int ran = 0;
      for (int j = 0; j < ncfg; ++j)
        ran |= (cfgs[j].group == g && !cfgs[j].unavailable[0] && !strcmp(variants[cfgs[j].var].engine, variants[i].engine));
      if (!ran) continue;
      fprintf(md.f, "| %s | %s ", group_name[g], variants[i].engine);
      for (int oi = 0; oi < 3; ++oi) {
        const int a = order[oi];
        const double kcost = cheapest[a][g][kelvin3d] >= 0 ? res[cheapest[a][g][kelvin3d]].cost : -1;
        const int j = cheapest[a][g][i];
        if (j < 0) {
          fprintf(md.f, "| none | | | ");
          fprintf(ac.f, "\"%s\",%s,%s,,,,,,,\n", group_name[g], variants[i].engine, crit_name[a]);
          continue;
        }
        const result *r = &res[j];
        char rel[32] = "-";
        if (kcost > 0) snprintf(rel, sizeof rel, "%.3g", r->cost / kcost);
        const double fe = a == CRIT_A ? r->v.fpeak_err : a == CRIT_C ? fpeak_best_err(&r->v) : -1;
        fprintf(md.f, "| %s, %s | %s | %.3g | %s ", variants[cfgs[r->cfg].var].config, ms_str(r->h, ms, sizeof ms),
                a == CRIT_B ? err_str(r->v.apex_err, e1, sizeof e1) : err_str(fe, e1, sizeof e1), r->cost, rel);
        fprintf(ac.f, "\"%s\",%s,%s,%s,%.10g,%.6g,%.6g,%.6g,%.6g,%s\n", group_name[g], variants[i].engine, crit_name[a],
                variants[cfgs[r->cfg].var].config, r->h * 1e3, r->v.apex_err, r->v.fpeak_err, r->v.fpeak_int_err,
                r->cost, rel);
      }
      fprintf(md.f, "|\n");
    }
  }

  /* (d): the tight criterion, each engine at its cheapest setting that meets it */
  fprintf(md.f, "\nAccuracy–cost at apex error ≤ 1e-8 (d): per case, every engine with a stable run whose samples "
                "show every apex above 1 cm (all of the reference's before the run's end, so only output steps short "
                "enough to sample every flight qualify) within 1e-8 of the reference, at its cheapest such run (any configuration, any step: "
                "kelvin's Hunt-Crossley tolerance hc_tol 1e-8 and 1e-12 with the damping law at every impact, and "
                "1e-8 … 1e-12 in half decades below 1e-9 with chi fixed; Simbody's accuracy, Runge-Kutta-Merson "
                "1e-6, 1e-9 and 1e-10 … 1e-12 in half decades, and CPodes Adams 1e-11 … 1e-12 in half decades); cost relative to kelvin's 3-D engine at its own cheapest run meeting (d) in "
                "this run, of the same model: Simbody's Hunt-Crossley force holds chi at its first-impact value, and "
                "kelvin's chi-fixed ladder runs that model against the same reference. Engines with no such run are "
                "listed below each case's rows.\n\n");
  fprintf(md.f, "| case | engine | config, step [ms] | apex err (apexes) | peak force err (samples, internal) | steps (force "
                "evaluations) | cost [s/s] | × kelvin 3-D |\n");
  fprintf(md.f, "|---|---|---|---:|---|---:|---:|---:|\n");
  for (int g = 0; g < NGROUP; ++g) {
    char none[512] = "";
    for (int i = 0; i < NVARIANT; ++i) {
      if (engine_first(variants[i].engine) != i && i != kfix) continue;
      int ran = 0;
      for (int j = 0; j < ncfg; ++j)
        ran |= (cfgs[j].group == g && !cfgs[j].unavailable[0] &&
                !strcmp(variants[cfgs[j].var].engine, variants[i].engine) &&
                (i != kfix || is_chifix(&variants[cfgs[j].var])));
      if (!ran) continue;
      const int j = cheapest[CRIT_D][g][i];
      if (j < 0) {
        const size_t len = strlen(none);
        snprintf(none + len, sizeof none - len, "%s%s%s", len ? ", " : "", variants[i].engine,
                 i == kfix ? " (Simbody's model)" : "");
        fprintf(ac.f, "\"%s\",%s,%s,,,,,,,\n", group_name[g], variants[i].engine, crit_name[CRIT_D]);
        continue;
      }
      const result *r = &res[j];
      /* relative to kelvin's cheapest run of the same model: chi fixed for Simbody's Hunt-Crossley */
      /* (none when kelvin has no run of that model meeting it: no ratio across models) */
      const int kb = cfgs[r->cfg].ref == MX_REF_HC_FIXED ? (kfix >= 0 ? cheapest[CRIT_D][g][kfix] : -1)
                                                         : cheapest[CRIT_D][g][kelvin3d];
      const double kcost = kb >= 0 ? res[kb].cost : -1;
      char rel[32] = "-", nf[32] = "";
      if (kcost > 0) snprintf(rel, sizeof rel, "%.3g", r->cost / kcost);
      if (r->nfev > 0) snprintf(nf, sizeof nf, " (%.3g)", (double)r->nfev);
      fprintf(md.f, "| %s | %s%s | %s, %s | %s (%d) | %s, %s | %.3g%s | %.3g | %s |\n", group_name[g],
              variants[i].engine, i == kfix ? ", Simbody's model (chi fixed)" : "", variants[cfgs[r->cfg].var].config,
              ms_str(r->h, ms, sizeof ms), err_str(r->v.apex_err, e1, sizeof e1), r->v.napex,
              err_str(r->v.fpeak_err, e2, sizeof e2), err_str(fpeak_best_err(&r->v), e3, sizeof e3),
              (double)r->nstep, nf, r->cost, rel);
      fprintf(ac.f, "\"%s\",%s,%s,%s,%.10g,%.6g,%.6g,%.6g,%.6g,%s\n", group_name[g], variants[i].engine,
              crit_name[CRIT_D], variants[cfgs[r->cfg].var].config, r->h * 1e3, r->v.apex_err, r->v.fpeak_err,
              r->v.fpeak_int_err, r->cost, rel);
    }
    if (none[0]) fprintf(md.f, "| %s | no run met it: %s | | | | | | |\n", group_name[g], none);
  }

  if (penalty[0] > 0 || penalty[1] > 0 || penalty[2] > 0) {
    fprintf(md.f, "\nWebAssembly penalty: cost of MuJoCo 3 (WebAssembly under node) over MuJoCo 2.2.2 (native), the same "
                  "solref-KD model at the same step (cr = 1, 1/4 ms, 40 000 steps), medians of at least 3 "
                  "repeats each in this run: Euler %.3g×, RK4 %.3g×, implicit %.3g× (WebAssembly, its JavaScript "
                  "bindings and two versions of MuJoCo together). PhysX and Rapier have no native build here.\n",
            penalty[0], penalty[1], penalty[2]);
  }

  /* the exact references */
  fprintf(md.f, "\nIndependent references (GSL rk8pd at 1e-13 with event location; first impact at %.6f m/s, gravity "
                "acting during the contact). Second, labelled reference: kelvin's closed form (kl_impact), its largest "
                "relative difference from the GSL one over the first peak force, penetration and every apex above "
                "1 cm (Hunt-Crossley: first contact at g = 0, the closed form has no gravity):\n\n",
          v1);
  fprintf(md.f, "| case | reference | peak force [N] | without gravity [N] | max penetration [m] | first apexes [m] "
                "| closed form − GSL |\n");
  fprintf(md.f, "|---|---|---:|---:|---:|---|---:|\n");
  static const char *ref_name[] = {"KV, separation at d = 0 (paper)", "KV, no tension", "Newton restitution",
                                   "HC law at every impact", "HC, chi fixed at first impact"};
  double D_noten = 0;
  for (int i = 0; i < ncfg; ++i) {
    int dup = 0;
    for (int j = 0; j < i; ++j) dup |= (cfgs[j].group == cfgs[i].group && cfgs[j].ref == cfgs[i].ref);
    if (dup) continue;
    const mx_ref *r = &cfgs[i].r;
    if (r->D_noten > 0) D_noten = r->D_noten;
    fprintf(md.f, "| %s | %s | %.10g | %.10g | %.6e | ", group_name[cfgs[i].group], ref_name[r->mode], r->fpeak,
            r->fpeak_nog, r->dmax);
    for (int k = 0; k < r->n && k < 4; ++k) fprintf(md.f, "%s%.6f", k ? ", " : "", r->apex[k]);
    fprintf(md.f, " | %s |\n", r->mode == MX_REF_RIGID ? "-" : err_str(r->cf_diff, e1, sizeof e1));
  }
  if (D_noten > 0)
    fprintf(md.f, "\nA contact that cannot pull (no tension: it ends where K d + D d' = 0) restitutes 0.8 with D = %.2f "
                  "N s/m, not eq. (10)'s %.2f (which assumes a contact that pulls at its end and gives it 0.808); "
                  "the no-tension rows keep eq. (10)'s D, as every engine here is given it, and are judged against "
                  "the no-tension sequence.\n",
            D_noten, kl_kv_damping(0.8, 140e6, 1.0));

  /* the whole ladder */
  fprintf(csv.f, "engine,config,case,h_ms,run,stable,intact,why,napex,apex_err,apex_err_log,edrift,fpeak,fpeak_exact,"
                 "fpeak_err,fpeak_int_err,pen,pen_exact,pen_err,pen_int_err,zmin,wall_s,repeats,sim_s,cost_s_per_s,"
                 "nstep,nfev,nout\n");
  for (int j = 0; j < nres; ++j) {
    const result *r = &res[j];
    const config *cf = &cfgs[r->cfg];
    const variant *va = &variants[cf->var];
    fprintf(csv.f, "%s,%s,\"%s\",%.10g,%d,%d,%d,\"%s\",%d,%.6g,%.6g,%.6g,%.10g,%.10g,%.6g,%.6g,%.10g,%.10g,%.6g,%.6g,"
                   "%.6g,%.6g,%d,%.6g,%.6g,%ld,%ld,%ld\n",
            va->engine, va->config, group_name[cf->group], r->h * 1e3, !r->skipped, r->v.stable, r->v.intact, r->v.why,
            r->v.napex, r->v.apex_err, r->v.apex_err_log, r->v.edrift, r->v.fpeak, cf->r.fpeak, r->v.fpeak_err,
            r->v.fpeak_int_err, r->v.pen, cf->r.dmax, r->v.pen_err, r->v.pen_int_err, r->v.zmin, r->wall, r->nrep,
            r->sim, r->cost, r->nstep, r->nfev, r->nout);
  }

  /* figure data: one block per configuration (apex error from the samples against step, stable or not) */
  for (int i = 0; i < ncfg; ++i) {
    const variant *va = &variants[cfgs[i].var];
    fprintf(dat.f, "# %s %s, %s\n", va->engine, va->config, group_name[cfgs[i].group]);
    int npt = 0;
    for (int j = 0; j < nres; ++j) {
      if (res[j].cfg != i || res[j].skipped || res[j].v.napex == 0) continue;
      const double e = res[j].v.apex_err;
      fprintf(dat.f, "%.10g %.6g %d\n", res[j].h * 1e3, isfinite(e) ? fmin(fmax(e, 1e-16), 1e2) : 1e2, res[j].v.stable);
      npt++;
    }
    if (!npt) fprintf(dat.f, "nan nan 0\n"); /* an empty block would shift gnuplot's index numbering */
    fprintf(dat.f, "\n\n");
  }
  text gp;
  text_open(&gp);
  fprintf(gp.f,
          "# gnuplot script written by benchmarks/maxstep: apex error (output samples) against output step, log-log\n"
          "set terminal pngcairo size 1600,700 font ',9'\n"
          "if (!exists('OUTPUT')) OUTPUT = 'maxstep_apex.png'\nset output OUTPUT\n"
          "set logscale xy\n"
          "set yrange [1e-16:1e2]\n"
          "set format x '%%g'\nset format y '10^{%%L}'\n"
          "set xlabel 'output step [ms]'\nset ylabel 'max relative apex error (samples)'\n"
          "set key outside right top spacing 0.9 font ',7'\n"
          "set grid\n"
          "set arrow 1 from graph 0, first 0.05 to graph 1, first 0.05 nohead dt 2 lc 'red'\n"
          "set multiplot layout 1,2\n");
  for (int g = 0; g < 2; ++g) {
    fprintf(gp.f, "set title '%s'\nplot ", g == 0 ? "cr = 1 (Kelvin-Voigt)" : "cr = 0.8 (Kelvin-Voigt and Hunt-Crossley)");
    int first = 1;
    for (int i = 0; i < ncfg; ++i) {
      if ((g == 0) != (cfgs[i].group == 0)) continue;
      const variant *va = &variants[cfgs[i].var];
      fprintf(gp.f, "%s'maxstep_apex.dat' index %d using 1:2 with linespoints title '%s %s%s'", first ? "" : ", \\\n     ",
              i, va->engine, va->config, cfgs[i].group == 2 ? " (HC)" : "");
      first = 0;
    }
    fprintf(gp.f, "%s\n", first ? "NaN notitle" : "");
  }
  fprintf(gp.f, "unset multiplot\n");

  fprintf(md.f, "\nFigure: `maxstep_apex.png` in the output folder (kelvin-out/bench/maxstep/ from benchmarks/run): apex "
                "error from the output samples against output step, log–log, one line per engine/configuration; "
                "dashed: the 5 %% criterion.\n");

  int rc = 0;
  rc |= text_save(&md, o.out, "maxstep.md");
  rc |= text_save(&csv, o.out, "maxstep_ladder.csv");
  rc |= text_save(&sum, o.out, "maxstep_summary.csv");
  rc |= text_save(&ac, o.out, "maxstep_accuracy_cost.csv");
  rc |= text_save(&dat, o.out, "maxstep_apex.dat");
  /* gnuplot started without a shell (kl_cli_gnuplot): it writes maxstep_apex.png.gp beside the figure and
   * renders to a temporary name that is renamed on success */
  fflush(gp.f);
  if (o.plot && !rc && kl_cli_gnuplot(NULL, o.out, "maxstep_apex.png", gp.buf) != 0)
    fprintf(stderr, "maxstep: no maxstep_apex.png (gnuplot missing or failed; the script is maxstep_apex.png.gp)\n");
  fclose(gp.f);
  free(gp.buf);
  if (!o.quiet) fprintf(stderr, "maxstep: %d runs in %.0f s; results in %s/maxstep.md\n", nres, total_wall, o.out);
  free(b.t);
  free(b.z);
  free(b.vz);
  free(b.f);
  free(b.apex);
  free(res);
  return rc ? 1 : 0;
}
