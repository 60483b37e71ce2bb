/* benchmarks/maxstep/maxstep.c: max stable step of kelvin against MuJoCo, ODE, Bullet, Simbody and
 * DART, side by side in one run (docs/design.md section 7; the paper's Table 1).
 * The paper's ball is dropped in every engine at every rung of a step ladder, judged from its output
 * samples by one criterion (mx_check.c) against exact references (mx_ref.c), and reported as
 * Markdown + CSV tables and a gnuplot figure written atomically to --out. See README.md. */
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

typedef struct variant {
  const char *engine; /* display name */
  const char *key;    /* --engines name */
  const char *config; /* configuration name */
  mx_run_fn run;      /* NULL when the peer was not found at configure time */
  int v;              /* runner variant */
  int kv_ref;         /* reference of its Kelvin-Voigt rows (MX_REF_*) */
  int native;         /* 0: the same spring-damper as kelvin; 1: the engine's own contact model */
  int hc;             /* 1: it also runs the Hunt-Crossley case */
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

static const variant variants[] = {
    {"kelvin", "kelvin", "exact", mx_kelvin_run, MX_KELVIN_PEN, MX_REF_KV_PEN, 0, 1,
     "closed-form contact, exact events, penetration separation (the paper); HC: linearised sub-steps, tol 1e-9"},
    {"kelvin", "kelvin", "exact-noten", mx_kelvin_run, MX_KELVIN_FORCE, MX_REF_KV_FORCE, 0, 0,
     "the same with the no-tension separation rule (contact ends at K d + D d' = 0)"},
    {"MuJoCo", "mujoco", "solref-KD", MX_MUJOCO, MX_MUJOCO_KD, MX_REF_KV_FORCE, 0, 0,
     "solref = (-K/m, -D/m), solimp = (0.9999, 0.9999, ...), condim 1, Euler"},
    {"MuJoCo", "mujoco", "defaults", MX_MUJOCO, MX_MUJOCO_DEFAULT, MX_REF_KV_FORCE, 1, 0,
     "solref = (0.02, 1), solimp = (0.9, 0.95, 0.001, 0.5, 2), condim 3, Euler"},
    {"ODE", "ode", "ERP-CFM", MX_ODE, MX_ODE_ERPCFM, MX_REF_KV_FORCE, 0, 0,
     "soft contact: ERP = hK/(hK + D), CFM = 1/(hK + D) at each step, dWorldStep"},
    {"ODE", "ode", "bounce", MX_ODE, MX_ODE_BOUNCE, MX_REF_RIGID, 1, 0,
     "dContactBounce, bounce = cr, bounce_vel = 0.1 m/s, world ERP/CFM defaults, dWorldStep"},
    {"Bullet", "bullet", "stiff-damp", MX_BULLET, MX_BULLET_KD, MX_REF_KV_FORCE, 0, 0,
     "contact stiffness K and damping D (each body 2K, D/2), restitution 0"},
    {"Bullet", "bullet", "restitution", MX_BULLET, MX_BULLET_RESTITUTION, MX_REF_RIGID, 1, 0,
     "restitution cr (ball) x 1 (plane), default solver settings"},
    {"Simbody", "simbody", "RK4-fixed", MX_SIMBODY, MX_SIMBODY_RK_FIXED, MX_REF_KV_FORCE, 0, 1,
     "f = max(0, K d + D d') (HC: HuntCrossleyForce); Runge-Kutta-Merson, fixed step = output step"},
    {"Simbody", "simbody", "RKM-1e-6", MX_SIMBODY, MX_SIMBODY_RKM_1E6, MX_REF_KV_FORCE, 0, 1,
     "the same force; error-controlled Runge-Kutta-Merson, accuracy 1e-6; output step = report interval"},
    {"Simbody", "simbody", "RKM-1e-9", MX_SIMBODY, MX_SIMBODY_RKM_1E9, MX_REF_KV_FORCE, 0, 1,
     "the same force; error-controlled Runge-Kutta-Merson, accuracy 1e-9; output step = report interval"},
    {"DART", "dart", "restitution", MX_DART, MX_DART_RESTITUTION, MX_REF_RIGID, 1, 0,
     "LCP (Dantzig) contact with restitution cr (ball) x 1 (plane), FCL, semi-implicit Euler"},
};
#define NVARIANT ((int)(sizeof variants / sizeof variants[0]))

/* The paper's Table 1 [ms] */
static const struct {
  const char *engine;
  double ms;
} paper[] = {{"Bullet", 1.0 / 32}, {"ODE", 0.25}, {"PhysX", 2}, {"MuJoCo", 16}, {"kelvin", 128}};

//------------------------------------------------------------------------------------------------------
// options

typedef struct options {
  const char *out;
  const char *engines; /* comma list, NULL = all */
  double tend, cap, budget; /* s simulated; wall cap of one run; wall budget of one configuration */
  int repeats;
  int kmin, kmax; /* rungs 2^k ms */
  int plot, quiet;
} options;

/* the --help text, with the configurations this build has */
static void usage(FILE *f)
{
  fprintf(f,
          "usage: maxstep [--out DIR] [--engines LIST] [--tend S] [--cap S] [--budget S] [--repeats N]\n"
          "               [--min-ms X] [--max-ms Y] [--no-plot] [--quiet] [--help]\n"
          "\n"
          "Max stable step of kelvin against MuJoCo, ODE, Bullet, Simbody and DART (the paper's Table 1):\n"
          "the paper's ball (m = 1 kg, R = 0.1 m, I = 0.1 kg m^2, g = 9.81 m/s^2, lowest point dropped from\n"
          "1.0 m onto a static plane, linear contact stiffness K = 140e6 N/m, damping D from cr by paper\n"
          "eq. 10) for cr = 1 and 0.8, and a Hunt-Crossley variant (n = 3/2, Hertz K = (4/3) E* sqrt(R),\n"
          "steel on steel, cr = 0.8, Hunt-Crossley law), 10 s of simulated time per run, output steps\n"
          "1/64, 1/32, ..., 1024 ms.\n"
          "\n"
          "Options:\n"
          "  --out DIR       output folder (default kelvin-out/bench): maxstep.md, maxstep_*.csv, maxstep_apex.*\n"
          "  --engines LIST  comma list of kelvin,mujoco,ode,bullet,simbody,dart (default: all found)\n"
          "  --tend S        simulated seconds per run (default 10)\n"
          "  --cap S         wall-time cap of one run [s] (default 5): a rung whose run is predicted (from the rung\n"
          "                  below, or a 0.5 s probe) to take longer is not run; the ladder is judged above it\n"
          "  --budget S      wall-time budget of one configuration's ladder [s] (default 40): once spent, the\n"
          "                  steps below the top are not run (its max stable step then reads \"at least\")\n"
          "  --repeats N     timing repeats at reported rungs, median taken (default 3, at least 3)\n"
          "  --min-ms X, --max-ms Y  ladder ends, powers of two in ms (default 1/64 = 0.015625 and 1024)\n"
          "  --no-plot       do not run gnuplot (the .gp and .dat files are still written)\n"
          "  --quiet         no progress on stderr\n"
          "\n"
          "Configurations (engine / config: setup; headline = the engine's best row, see README.md):\n");
  for (int i = 0; i < NVARIANT; ++i)
    fprintf(f, "  %-8s %-12s %s%s\n", variants[i].engine, variants[i].config, variants[i].doc,
            variants[i].run ? "" : " [not built: peer not found at configure time]");
  fprintf(f,
          "\n"
          "Criterion, the same for every engine, judged from the output samples: all states finite; no\n"
          "tunnelling (lowest point never more than R below the plane); every apex within 5 %% of the exact\n"
          "height (cr = 0.8 / Hunt-Crossley: apexes expected above 1 cm only); energy drift within 5 %%\n"
          "(cr = 1: |E - E0| / E0 over free-flight samples, and the ball still flying in the last quarter;\n"
          "cr < 1: no energy gain above 5 %% of E0). Apexes: the parabola through the last rising free-flight\n"
          "sample, z + vz^2 / 2g. Exact heights: the closed form with gravity during contact, for the\n"
          "engine's own separation rule (no-tension solvers restitute 0.8081, not 0.8); Newton restitution\n"
          "rows: cr^2 per bounce. The ladder of a configuration stops after two failures above its largest\n"
          "stable step. Cost = wall seconds per simulated second of the stepping loop (setup excluded),\n"
          "median of the repeats.\n");
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
  o->out = "kelvin-out/bench";
  o->engines = NULL;
  o->tend = 10;
  o->cap = 5;
  o->budget = 40;
  o->repeats = 3;
  o->kmin = -6;
  o->kmax = 10;
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
    } else if (!strcmp(a, "--cap")) {
      o->cap = num_arg(a, next);
      ++i;
    } else if (!strcmp(a, "--budget")) {
      o->budget = num_arg(a, next);
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
  if (!(o->cap > 0)) {
    fprintf(stderr, "maxstep: --cap: must be > 0 s, got %g\n", o->cap);
    exit(2);
  }
  if (!(o->budget > 0)) {
    fprintf(stderr, "maxstep: --budget: must be > 0 s, got %g\n", o->budget);
    exit(2);
  }
  if (o->repeats < 3) o->repeats = 3;
  if (o->kmin > o->kmax || o->kmin < -12 || o->kmax > 14) {
    fprintf(stderr, "maxstep: ladder from 2^%d to 2^%d ms is empty or outside [2^-12, 2^14] ms\n", o->kmin, o->kmax);
    exit(2);
  }
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
  int best;      /* the largest step with every step below it stable (index of its result), -1 if none */
  int first_bad; /* index of the first failed result above it, -1 if none */
  int isolated;  /* the largest stable step above a failure (index of its result), -1 if none */
  int wbest;     /* the same as best for "intact" (finite, no tunnelling) */
  int skipped_to; /* rungs up to 2^skipped_to ms were not run (too costly); below kmin if none */
  int budget_stop; /* the ladder stopped at 2^budget_stop ms: budget spent; 0 if not (kmax < 0 cannot stop) */
} config;

static const char *group_name[3] = {"Kelvin-Voigt, cr = 1", "Kelvin-Voigt, cr = 0.8", "Hunt-Crossley, cr = 0.8"};

typedef struct result {
  int cfg, k; /* configuration, rung (h = 2^k ms) */
  double h;   /* s */
  mx_verdict v;
  double wall, sim, cost; /* stepping seconds (median once remeasured), simulated seconds, wall / sim */
  int nrep;               /* timing repeats behind cost */
  long nstep, nfev, nout;
  int capped;             /* stopped by the wall-time cap: judged on the simulated part */
  int skipped;            /* not run: a short probe predicted more than the cap */
  double predicted;       /* that prediction [s] */
  double probe;           /* wall of the probe run before it [s] */
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

/* step 2^k ms as text: 1/64, 1/2, 1, 1024 */
static const char *ms_str(int k, char *buf, size_t cap)
{
  if (k >= 0)
    snprintf(buf, cap, "%ld", 1L << k);
  else
    snprintf(buf, cap, "1/%ld", 1L << (-k));
  return buf;
}

typedef struct buffers {
  long cap;
  double *t, *z, *vz, *f, *apex;
} buffers;

/* one run of configuration cf at rung k into *res (one timing), stopped at wall_cap seconds */
static void run_capped(const options *o, config *cf, int k, buffers *b, double wall_cap, result *res)
{
  const variant *va = &variants[cf->var];
  const double h = ldexp(1e-3, k);
  memset(res, 0, sizeof *res);
  res->k = k;
  res->h = h;
  mx_trace tr;
  memset(&tr, 0, sizeof tr);
  tr.cap = b->cap;
  tr.t = b->t;
  tr.z = b->z;
  tr.vz = b->vz;
  tr.f = b->f;
  tr.wall_cap = wall_cap;
  tr.fpeak_log = -1;
  tr.dmax_log = -1;
  tr.apex_log = (va->run == mx_kelvin_run) ? b->apex : NULL;
  if (va->run(&cf->c, va->v, h, &tr) != 0) {
    snprintf(res->err, sizeof res->err, "%s", tr.err);
    tr.bad = 1;
  }
  (void)o;
  mx_check(&cf->c, &cf->r, &tr, &res->v);
  res->nout = tr.n - 1;
  res->sim = tr.n > 1 ? tr.t[tr.n - 1] : 0.0;
  res->wall = tr.wall;
  res->nrep = 1;
  res->cost = res->sim > 0 ? res->wall / res->sim : INFINITY;
  res->nstep = tr.nstep;
  res->nfev = tr.nfev;
  res->capped = tr.capped;
}

/* one rung of configuration cf: a probe of at most 0.5 s wall first; if it predicts more than the cap
 * for the whole run the rung is skipped, otherwise it is run to the end (the probe is the run when it
 * finishes) */
static void run_one(const options *o, config *cf, int k, buffers *b, double cost_below, result *res)
{
  const double total = (double)mx_nout(&cf->c, ldexp(1e-3, k)) * ldexp(1e-3, k);
  /* the rung below cost cost_below per simulated second; a run's cost does not grow with its step */
  if (cost_below > 0 && cost_below * total <= o->cap) {
    run_capped(o, cf, k, b, 2.0 * o->cap, res);
    return;
  }
  const double probe = fmin(0.5, o->cap);
  run_capped(o, cf, k, b, probe, res);
  if (!res->capped) return;
  const double predicted = res->cost * total;
  if (predicted > o->cap) {
    res->skipped = 1;
    res->predicted = predicted;
    res->v.stable = 0;
    snprintf(res->v.why, sizeof res->v.why, "not run: predicted %.0f s > cap %.0f s", predicted, o->cap);
    return;
  }
  const double probe_wall = res->wall;
  run_capped(o, cf, k, b, 2.0 * o->cap, res);
  res->probe = probe_wall;
}

/* compare doubles for qsort */
static int cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* re-time result res: at least o->repeats runs in all (more for runs under 50 ms), each repeat capped
 * at 2 s of wall (a capped repeat still gives wall / simulated seconds); cost = the median */
static void remeasure(const options *o, config *cf, buffers *b, result *res)
{
  if (res->nrep > 1 || !res->v.stable) return;
  double costs[256];
  int n = 0;
  costs[n++] = res->cost;
  double total = res->wall;
  while (n < 256 && (n < o->repeats || (total < 0.05 && n < 200))) {
    result again;
    run_capped(o, cf, res->k, b, fmin(2.0, o->cap), &again);
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
  const char *missing[8];
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

  /* configurations: each selected variant for cr = 1 and 0.8, and the HC case where it has one */
  config cfgs[3 * NVARIANT];
  int ncfg = 0;
  const double v1 = sqrt(2.0 * 9.81 * 1.0);
  for (int g = 0; g < 3; ++g) {
    for (int i = 0; i < NVARIANT; ++i) {
      const variant *va = &variants[i];
      if (!va->run || !selected(&o, va->key)) continue;
      if (g == 2 && !va->hc) continue;
      config *cf = &cfgs[ncfg++];
      memset(cf, 0, sizeof *cf);
      cf->var = i;
      cf->group = g;
      cf->c = base_case(g == 2 ? MX_HC : MX_KV, g == 0 ? 1.0 : 0.8, o.tend);
      cf->ref = (g == 2) ? (va->run == mx_kelvin_run ? MX_REF_HC_LAW : MX_REF_HC_FIXED) : va->kv_ref;
      cf->best = cf->first_bad = cf->isolated = cf->wbest = -1;
      cf->skipped_to = -100;
      cf->budget_stop = 100;
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
    if (!done) mx_ref_build(&cfgs[i].c, cfgs[i].ref, o.tend + 2.0 + ldexp(1e-3, o.kmax), &cfgs[i].r);
  }
  if (!o.quiet) fprintf(stderr, "maxstep: references built in %.2f s\n", mx_now() - t0);

  /* sample buffers for the finest rung */
  buffers b;
  b.cap = lround(o.tend / ldexp(1e-3, o.kmin)) + 16;
  b.t = malloc((size_t)b.cap * sizeof(double));
  b.z = malloc((size_t)b.cap * sizeof(double));
  b.vz = malloc((size_t)b.cap * sizeof(double));
  b.f = malloc((size_t)b.cap * sizeof(double));
  b.apex = malloc(KL_BALL_MAXLOG * sizeof(double));
  const int nrung = o.kmax - o.kmin + 1;
  result *res = malloc((size_t)(ncfg * nrung) * sizeof *res);
  if (!b.t || !b.z || !b.vz || !b.f || !b.apex || !res) {
    fprintf(stderr, "maxstep: out of memory for %ld samples\n", b.cap);
    return 1;
  }
  int nres = 0;

  //------- the ladders -------
  for (int i = 0; i < ncfg; ++i) {
    config *cf = &cfgs[i];
    const variant *va = &variants[cf->var];
    /* two readings, each "every judged step up to here passes": stable (the criterion) and intact
     * (finite, no tunnelling: the weaker "did not blow up"); the ladder stops once each has failed
     * twice above its max */
    int fails_above = 0, failed = 0, wfails_above = 0, wfailed = 0;
    double spent = 0, cost_below = -1;
    for (int k = o.kmin; k <= o.kmax; ++k) {
      int top = 0;
      if (spent > o.budget) {
        /* this configuration's budget is spent: the steps up to the top are not run, the top is */
        if (cf->budget_stop > o.kmax) cf->budget_stop = k;
        if (k < o.kmax) continue;
        top = 1;
      }
      result *r = &res[nres];
      run_one(&o, cf, k, &b, cost_below, r);
      r->cfg = i;
      nres++;
      spent += r->probe + (r->skipped ? fmin(0.5, o.cap) : r->wall);
      if (!r->skipped && !r->capped) cost_below = r->cost;
      if (r->skipped) {
        cf->skipped_to = k; /* the rungs not run lie below the judged ones */
      } else {
        if (r->v.stable && !failed && !top) {
          cf->best = nres - 1;
        } else if (r->v.stable) {
          cf->isolated = nres - 1; /* passes again above a failure or a gap: reported, not counted */
        } else {
          failed = 1;
          if (cf->best >= 0) {
            if (cf->first_bad < 0) cf->first_bad = nres - 1;
            fails_above++;
          }
        }
        if (r->v.intact && !wfailed && !top) {
          cf->wbest = nres - 1;
        } else if (!r->v.intact) {
          wfailed = 1;
          if (cf->wbest >= 0) wfails_above++;
        }
      }
      if (!o.quiet) {
        char ms[16], e1[16];
        fprintf(stderr, "maxstep: %-7s %-11s %-22s h = %5s ms: %-6s apex err %s  %.3g s%s%s\n", va->engine,
                va->config, group_name[cf->group], ms_str(k, ms, sizeof ms), r->v.stable ? "stable" : "FAIL",
                err_str(r->v.apex_err, e1, sizeof e1), r->wall, r->v.stable ? "" : "  -- ",
                r->v.stable ? "" : r->v.why);
      }
      if (fails_above >= 2 && (wfails_above >= 2 || (wfailed && cf->wbest < 0))) break;
    }
    if (cf->best >= 0) remeasure(&o, cf, &b, &res[cf->best]);
  }

  //------- accuracy-cost: per case and engine, the cheapest run at apex (and peak force) error <= 1e-3 -------
  const double acc = 1e-3;
  int cheapest[2][3][NVARIANT]; /* [0: apex and force, 1: apex only][case][the engine's first variant] */
  for (int pass = 0; pass < 2; ++pass) { /* pick, remeasure, pick again with the medians */
    for (int a = 0; a < 2; ++a)
      for (int g = 0; g < 3; ++g)
        for (int i = 0; i < NVARIANT; ++i) cheapest[a][g][i] = -1;
    for (int j = 0; j < nres; ++j) {
      const config *cf = &cfgs[res[j].cfg];
      const result *r = &res[j];
      if (!r->v.stable || r->skipped) continue;
      const double ae = (r->v.apex_err_log >= 0) ? fmax(r->v.apex_err_log, r->v.apex_err) : r->v.apex_err;
      if (!(ae <= acc) || (r->v.napex == 0 && r->v.apex_err_log < 0)) continue;
      int e = cf->var; /* the engine's first variant */
      while (e > 0 && !strcmp(variants[e - 1].engine, variants[cf->var].engine)) --e;
      for (int a = 0; a < 2; ++a) {
        if (a == 0 && !(r->v.fpeak_err <= acc)) continue;
        int *c = &cheapest[a][cf->group][e];
        if (*c < 0 || r->cost < res[*c].cost) *c = j;
      }
    }
    if (pass == 0)
      for (int a = 0; a < 2; ++a)
        for (int g = 0; g < 3; ++g)
          for (int i = 0; i < NVARIANT; ++i)
            if (cheapest[a][g][i] >= 0) remeasure(&o, &cfgs[res[cheapest[a][g][i]].cfg], &b, &res[cheapest[a][g][i]]);
  }
  const double total_wall = mx_now() - t0;

  //------- report -------
  text md, csv, sum, ac, dat;
  text_open(&md);
  text_open(&csv);
  text_open(&sum);
  text_open(&ac);
  text_open(&dat);
  char ms[16], ms2[16], e1[16], e2[16], e3[16], e4[16];
  time_t now = time(NULL);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));

  fprintf(md.f, "Measured by `benchmarks/maxstep` on %s (README.md there: configurations, criterion, references).\n\n", date);
  fprintf(md.f,
          "The paper's ball (m = 1 kg, R = 0.1 m, I = 0.1 kg m², lowest point dropped from 1.0 m, g = 9.81) on "
          "a static plane, %.0f s simulated per run, output steps 1/64 ms … 1024 ms. Kelvin-Voigt rows: K = 140e6 "
          "N/m, D from cr by eq. (10) (cr = 0.8: D = %.1f N s/m). Hunt-Crossley rows: n = 3/2, K = (4/3) E* √R = "
          "%.4g N/m^1.5 (steel on steel), Hunt-Crossley law, chi = %.4g s/m at the first impact (%.4f m/s). "
          "Engines: kelvin %s",
          o.tend, kl_kv_damping(0.8, 140e6, 1.0), kl_hertz_K(kl_estar(210e9, 0.3, 210e9, 0.3), 0.1),
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
  fprintf(md.f, ".");
  for (int j = 0; j < nmissing; ++j) fprintf(md.f, " %s: not found at configure time, skipped.", missing[j]);
  fprintf(md.f, " Total benchmark wall time %.0f s; wall cap per run %.0f s, budget per configuration %.0f s.\n\n",
          total_wall, o.cap, o.budget);

  /* summary per configuration */
  fprintf(md.f, "| engine | config | case | max stable step [ms] | finite, no tunnelling up to [ms] | apex err "
                "| peak force err | penetration err | cost [s/s] | steps (evals) per output | first failure above |\n");
  fprintf(md.f, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
  fprintf(sum.f, "engine,config,case,max_stable_ms,intact_ms,apex_err,apex_err_log,fpeak,fpeak_exact,fpeak_err,"
                 "pen,pen_exact,pen_err,edrift,cost_s_per_s,repeats,steps_per_output,evals_per_output,"
                 "first_failure_ms,first_failure\n");
  for (int i = 0; i < ncfg; ++i) {
    const config *cf = &cfgs[i];
    const variant *va = &variants[cf->var];
    char intact[16] = "none";
    if (cf->wbest >= 0) ms_str(res[cf->wbest].k, intact, sizeof intact);
    const double intact_ms = cf->wbest >= 0 ? res[cf->wbest].h * 1e3 : 0.0;
    if (cf->best < 0) {
      const char *why = "";
      int kf = o.kmin; /* the first rung that was run */
      for (int j = 0; j < nres; ++j)
        if (res[j].cfg == i && !res[j].skipped) {
          why = res[j].v.why;
          kf = res[j].k;
          break;
        }
      char again[96] = "";
      if (cf->isolated >= 0) snprintf(again, sizeof again, " (passes at %s)", ms_str(res[cf->isolated].k, ms, sizeof ms));
      if (cf->skipped_to >= o.kmin) {
        const size_t l = strlen(again);
        snprintf(again + l, sizeof again - l, "; steps up to %s not run (cost above the cap)", ms_str(cf->skipped_to, ms, sizeof ms));
      }
      fprintf(md.f, "| %s | %s | %s | none (fails at %s) | %s | | | | | | %s: %s%s |\n", va->engine, va->config,
              group_name[cf->group], ms_str(kf, ms2, sizeof ms2), intact, ms_str(kf, ms2, sizeof ms2), why, again);
      fprintf(sum.f, "%s,%s,\"%s\",,%.10g,,,,%.10g,,,%.10g,,,,,,,%s,\"%s\"\n", va->engine, va->config,
              group_name[cf->group], intact_ms, cf->r.fpeak, cf->r.dmax, ms_str(kf, ms2, sizeof ms2), why);
      continue;
    }
    const result *r = &res[cf->best];
    const double spo = (double)r->nstep / (double)r->nout;
    char steps[48];
    if (r->nfev >= 0)
      snprintf(steps, sizeof steps, "%.3g (%.3g)", spo, (double)r->nfev / (double)r->nout);
    else
      snprintf(steps, sizeof steps, "%.3g", spo);
    char failure[240] = "none up to the ladder's end";
    if (cf->budget_stop <= o.kmax)
      snprintf(failure, sizeof failure, "budget spent: %s to %s not run, so at least %s", ms_str(cf->budget_stop, ms2, sizeof ms2),
               ms_str(o.kmax - 1, e4, sizeof e4), ms_str(r->k, ms, sizeof ms));
    if (cf->first_bad >= 0)
      snprintf(failure, sizeof failure, "%s: %s", ms_str(res[cf->first_bad].k, ms2, sizeof ms2),
               res[cf->first_bad].v.why);
    if (cf->skipped_to >= o.kmin) {
      const size_t l = strlen(failure);
      snprintf(failure + l, sizeof failure - l, "; steps up to %s not run (cost above the cap)",
               ms_str(cf->skipped_to, ms2, sizeof ms2));
    }
    if (cf->isolated >= 0) {
      const size_t l = strlen(failure);
      snprintf(failure + l, sizeof failure - l, " (passes again at %s)", ms_str(res[cf->isolated].k, ms2, sizeof ms2));
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
    fprintf(md.f, "| %s | %s | %s | %s | %s | %s | %s | %s | %.3g | %s | %s |\n", va->engine, va->config,
            group_name[cf->group], ms_str(r->k, ms, sizeof ms), intact, apex, err_str(r->v.fpeak_err, e3, sizeof e3),
            err_str(r->v.pen_err, e4, sizeof e4), r->cost, steps, failure);
    fprintf(sum.f, "%s,%s,\"%s\",%.10g,%.10g,%.6g,%.6g,%.10g,%.10g,%.6g,%.10g,%.10g,%.6g,%.6g,%.6g,%d,%.6g,%.6g,%s,\"%s\"\n",
            va->engine, va->config, group_name[cf->group], r->h * 1e3, intact_ms, r->v.apex_err, r->v.apex_err_log,
            r->v.fpeak, cf->r.fpeak, r->v.fpeak_err, r->v.pen, cf->r.dmax, r->v.pen_err, r->v.edrift, r->cost, r->nrep,
            spo, r->nfev >= 0 ? (double)r->nfev / (double)r->nout : -1.0,
            cf->first_bad >= 0 ? ms_str(res[cf->first_bad].k, ms2, sizeof ms2) : "",
            cf->first_bad >= 0 ? res[cf->first_bad].v.why : "");
  }

  /* headline per engine against the paper's Table 1 */
  fprintf(md.f, "\nHeadline per engine (its best configuration; kelvin: the paper's model) against the paper's Table 1:\n\n");
  fprintf(md.f, "| engine | paper, Table 1 [ms] | here, cr = 1 [ms] (config) | here, cr = 0.8 [ms] (config) | here / paper (cr = 1) "
                "| finite, no tunnelling, cr = 1 [ms] (config) |\n");
  fprintf(md.f, "|---|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < NVARIANT; ++i) {
    if (i > 0 && !strcmp(variants[i - 1].engine, variants[i].engine)) continue;
    double pms = -1;
    for (size_t p = 0; p < sizeof paper / sizeof paper[0]; ++p)
      if (!strcmp(paper[p].engine, variants[i].engine)) pms = paper[p].ms;
    char cell[2][96];
    double best_ms[2] = {-1, -1};
    for (int g = 0; g < 2; ++g) {
      snprintf(cell[g], sizeof cell[g], "%s", variants[i].run && selected(&o, variants[i].key) ? "none" : "not run");
      for (int j = 0; j < ncfg; ++j) {
        const config *cf = &cfgs[j];
        if (cf->group != g || strcmp(variants[cf->var].engine, variants[i].engine) || cf->best < 0) continue;
        if (!strcmp(variants[i].engine, "kelvin") && variants[cf->var].v != MX_KELVIN_PEN) continue;
        const double hms = res[cf->best].h * 1e3;
        if (hms > best_ms[g]) {
          best_ms[g] = hms;
          const int atleast = cf->budget_stop <= o.kmax && cf->first_bad < 0;
          snprintf(cell[g], sizeof cell[g], "%s%s (%s)", atleast ? "≥ " : "", ms_str(res[cf->best].k, ms, sizeof ms),
                   variants[cf->var].config);
        }
      }
    }
    char ratio[32] = "-";
    if (pms > 0 && best_ms[0] > 0) snprintf(ratio, sizeof ratio, "%.3g", best_ms[0] / pms);
    char wcell[96] = "none";
    double wbest_ms = -1;
    for (int j = 0; j < ncfg; ++j) {
      const config *cf = &cfgs[j];
      if (cf->group != 0 || strcmp(variants[cf->var].engine, variants[i].engine) || cf->wbest < 0) continue;
      if (!strcmp(variants[i].engine, "kelvin") && variants[cf->var].v != MX_KELVIN_PEN) continue;
      if (res[cf->wbest].h * 1e3 > wbest_ms) {
        wbest_ms = res[cf->wbest].h * 1e3;
        snprintf(wcell, sizeof wcell, "%s (%s)", ms_str(res[cf->wbest].k, ms, sizeof ms), variants[cf->var].config);
      }
    }
    if (!(variants[i].run && selected(&o, variants[i].key))) snprintf(wcell, sizeof wcell, "not run");
    char pcell[32] = "-";
    if (pms > 0) {
      if (pms < 1)
        snprintf(pcell, sizeof pcell, "1/%.0f", 1.0 / pms);
      else
        snprintf(pcell, sizeof pcell, "%.0f", pms);
    }
    fprintf(md.f, "| %s | %s | %s | %s | %s | %s |\n", variants[i].engine, pcell, cell[0], cell[1], ratio, wcell);
  }
  fprintf(md.f, "| PhysX | 2 | not run (no Debian package) | | | |\n");

  /* accuracy-cost */
  fprintf(md.f, "\nAccuracy–cost: per case and engine, the cheapest run (any configuration, any step, criterion met) "
                "with (a) apex error and peak-force error both ≤ 1e-3, (b) apex error ≤ 1e-3 alone; cost relative to "
                "kelvin's cheapest in the same run. Peers' peak force is the largest force among their output samples, "
                "so (a) needs an output step well below the contact time (%.3g ms):\n\n",
          cfgs[0].r.tc * 1e3);
  fprintf(md.f, "| case | engine | (a) config, step [ms] | apex err | peak force err | cost [s/s] | × kelvin "
                "| (b) config, step [ms] | apex err | cost [s/s] | × kelvin |\n");
  fprintf(md.f, "|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|\n");
  fprintf(ac.f, "case,engine,criterion,config,step_ms,apex_err,fpeak_err,cost_s_per_s,relative_to_kelvin\n");
  for (int g = 0; g < 3; ++g) {
    for (int i = 0; i < NVARIANT; ++i) {
      if (i > 0 && !strcmp(variants[i - 1].engine, variants[i].engine)) continue;
      int ran = 0;
      for (int j = 0; j < ncfg; ++j)
        ran |= (cfgs[j].group == g && !strcmp(variants[cfgs[j].var].engine, variants[i].engine));
      if (!ran) continue;
      fprintf(md.f, "| %s | %s ", group_name[g], variants[i].engine);
      for (int a = 0; a < 2; ++a) {
        const double kcost = cheapest[a][g][0] >= 0 ? res[cheapest[a][g][0]].cost : -1;
        const int j = cheapest[a][g][i];
        if (j < 0) {
          fprintf(md.f, a == 0 ? "| none | | | | " : "| none | | | ");
          fprintf(ac.f, "\"%s\",%s,%s,,,,,,\n", group_name[g], variants[i].engine, a ? "apex" : "apex+force");
          continue;
        }
        const result *r = &res[j];
        const double ae = r->v.apex_err_log >= 0 ? fmax(r->v.apex_err_log, r->v.apex_err) : r->v.apex_err;
        char rel[32] = "-";
        if (kcost > 0) snprintf(rel, sizeof rel, "%.3g", r->cost / kcost);
        if (a == 0)
          fprintf(md.f, "| %s, %s | %s | %s | %.3g | %s ", variants[cfgs[r->cfg].var].config, ms_str(r->k, ms, sizeof ms),
                  err_str(ae, e1, sizeof e1), err_str(r->v.fpeak_err, e2, sizeof e2), r->cost, rel);
        else
          fprintf(md.f, "| %s, %s | %s | %.3g | %s ", variants[cfgs[r->cfg].var].config, ms_str(r->k, ms, sizeof ms),
                  err_str(ae, e1, sizeof e1), r->cost, rel);
        fprintf(ac.f, "\"%s\",%s,%s,%s,%.10g,%.6g,%.6g,%.6g,%s\n", group_name[g], variants[i].engine,
                a ? "apex" : "apex+force", variants[cfgs[r->cfg].var].config, r->h * 1e3, ae, r->v.fpeak_err, r->cost, rel);
      }
      fprintf(md.f, "|\n");
    }
  }

  /* the exact references */
  fprintf(md.f, "\nExact references (first impact at %.6f m/s, gravity acting during the contact):\n\n", v1);
  fprintf(md.f, "| case | reference | peak force [N] | without gravity [N] | max penetration [m] | first apexes [m] |\n");
  fprintf(md.f, "|---|---|---:|---:|---:|---|\n");
  static const char *ref_name[] = {"KV, separation at d = 0 (paper)", "KV, no tension", "Newton restitution",
                                   "HC law at every impact", "HC, chi fixed at first impact"};
  for (int i = 0; i < ncfg; ++i) {
    int dup = 0;
    for (int j = 0; j < i; ++j) dup |= (cfgs[j].group == cfgs[i].group && cfgs[j].ref == cfgs[i].ref);
    if (dup) continue;
    const mx_ref *r = &cfgs[i].r;
    fprintf(md.f, "| %s | %s | %.10g | %.10g | %.6e | ", group_name[cfgs[i].group], ref_name[r->mode], r->fpeak,
            r->fpeak_nog, r->dmax);
    for (int k = 0; k < r->n && k < 4; ++k) fprintf(md.f, "%s%.6f", k ? ", " : "", r->apex[k]);
    if (r->mode == MX_REF_HC_LAW || r->mode == MX_REF_HC_FIXED)
      fprintf(md.f, " (GSL vs closed form at g = 0: %.1e)", r->gsl_check);
    fprintf(md.f, " |\n");
  }

  /* the whole ladder */
  fprintf(csv.f, "engine,config,case,h_ms,stable,why,napex,apex_err,apex_err_log,edrift,fpeak,fpeak_exact,fpeak_err,"
                 "fpeak_sample_err,pen,pen_exact,pen_err,zmin,wall_s,repeats,sim_s,cost_s_per_s,nstep,nfev,nout,capped\n");
  for (int j = 0; j < nres; ++j) {
    const result *r = &res[j];
    const config *cf = &cfgs[r->cfg];
    const variant *va = &variants[cf->var];
    fprintf(csv.f, "%s,%s,\"%s\",%.10g,%d,\"%s\",%d,%.6g,%.6g,%.6g,%.10g,%.10g,%.6g,%.6g,%.10g,%.10g,%.6g,%.6g,%.6g,%d,%.6g,%.6g,%ld,%ld,%ld,%d\n",
            va->engine, va->config, group_name[cf->group], r->h * 1e3, r->v.stable, r->v.why, r->v.napex, r->v.apex_err,
            r->v.apex_err_log, r->v.edrift, r->v.fpeak, cf->r.fpeak, r->v.fpeak_err, r->v.fpeak_s_err, r->v.pen,
            cf->r.dmax, r->v.pen_err, r->v.zmin, r->wall, r->nrep, r->sim, r->cost, r->nstep, r->nfev, r->nout,
            r->capped);
  }

  /* figure data: one block per configuration (apex error against step, stable or not) */
  for (int i = 0; i < ncfg; ++i) {
    const variant *va = &variants[cfgs[i].var];
    fprintf(dat.f, "# %s %s, %s\n", va->engine, va->config, group_name[cfgs[i].group]);
    int npt = 0;
    for (int j = 0; j < nres; ++j) {
      if (res[j].cfg != i || res[j].skipped) continue;
      const double e = res[j].v.apex_err_log >= 0 ? fmax(res[j].v.apex_err_log, res[j].v.apex_err) : res[j].v.apex_err;
      if (!(res[j].v.napex > 0 || res[j].v.apex_err_log >= 0)) continue;
      fprintf(dat.f, "%.10g %.6g %d\n", res[j].h * 1e3, isfinite(e) ? fmin(fmax(e, 1e-16), 1e2) : 1e2, res[j].v.stable);
      npt++;
    }
    if (!npt) fprintf(dat.f, "nan nan 0\n"); /* an empty block would shift gnuplot's index numbering */
    fprintf(dat.f, "\n\n");
  }
  text gp;
  text_open(&gp);
  fprintf(gp.f,
          "# gnuplot script written by benchmarks/maxstep: apex error against output step, log-log\n"
          "set terminal pngcairo size 1500,650 font ',9'\n"
          "if (!exists('OUTPUT')) OUTPUT = 'maxstep_apex.png'\nset output OUTPUT\n"
          "set logscale xy\n"
          "set yrange [1e-16:1e2]\n"
          "set format x '%%g'\nset format y '10^{%%L}'\n"
          "set xlabel 'output step [ms]'\nset ylabel 'max relative apex error'\n"
          "set key outside right top spacing 0.9\n"
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
                "error against output step, log–log, one line per engine/configuration; dashed: the 5 %% criterion.\n");

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
