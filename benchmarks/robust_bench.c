/* benchmarks/robust_bench.c: robust passes (issue 33; docs/design.md section 10) on the robust example
 * (examples/optimise_robust.yaml: S = uncertainty.scenarios = 256 scenarios per candidate), in one run:
 *
 *   robust_bench [--config FILE] [--repeats N] [--runs M] [--candidates P]
 *
 * 1. Throughput: one batch of P candidates (the nominal optimum's per-sample commands, smoothly perturbed: the
 *    same batch for every peer) x S scenarios (kl_rollout_eval_scenarios) on OpenCL, on the OpenMP twin with every
 *    thread and on the twin with one thread; the median over N repeats after one untimed warm-up batch (the
 *    OpenCL program build and the scenarios' upload). Checked before a rate is printed: every objective term of
 *    OpenCL and of the one-thread twin equal to the all-thread twin's within 1e-9 relative (the status term
 *    exactly), else the row says FAILED. Ratio OpenCL / twin and the twin's parallel efficiency
 *    rate(all threads) / (threads x rate(one thread)); with the process's CPU seconds per batch (getrusage), the
 *    cores each peer obtained and the efficiency by CPU time, which other work on a shared machine leaves alone.
 * 2. The robust objective reached at an equal wall-time budget, every pass measured the same way: the robust
 *    objective (kl_robust_objective, the example's uncertainty.objective) of the final pass over the same
 *    optimisation set, by a rollout here on the twin (the pipelines' own figure checked against it, 1e-9
 *    relative on OpenCL, 1e-12 on the twin, else FAILED):
 *    (a) kl_optimise_robust with the example's settings (Levenberg-Marquardt, nominal then robust), as
 *        `kelvin optimise` runs it (3-D verification left out: the same for all), on OpenCL and on the twin; the
 *        OpenCL run's wall time of its refinement stages (nominal + robust) is the budget T;
 *    (b) the same pipeline with optimiser.method nlopt, LD_LBFGS (splines, batched finite-difference gradients,
 *        candidates x scenarios per batch) on OpenCL: its robust stage gets T_N = max(T, KL_NLOPT_T)
 *        (optimiser.maxtime, set when the stage starts) from its nominal optimum; its screening + nominal refinement (no budget: to their tolerances, the
 *        same nominal optimum in every run) are not counted (their time and rollouts go to stderr), as (c) gets
 *        that nominal optimum for free;
 *    (c) plain serial NLopt: LN_BOBYQA on (b)'s spline controls and bounds, one thread, no batching: each
 *        evaluation rolls out the S scenarios one after another (the twin's scenario batch with P = 1 on a
 *        one-thread handle), stopped at T_N (maxtime) or by the pipeline's tolerances, from (b)'s nominal optimum;
 *    (d) the same NLopt LN_BOBYQA, each evaluation one batch of the S scenarios on OpenCL (what the pipeline's robust
 *        stage runs with optimiser.algorithm LN_BOBYQA), same start and budget: batching against (c).
 *    Reference rows: the nominal optimum of (a) (and of (b), where (c) starts). Median over M runs (T per run).
 * Progress on stderr, the Markdown on stdout; exit 1 if a check failed. */
#include <math.h>
#include <nlopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "benchmarks/bench_util.h"
#include "host/host.h"
#include "host/rollout_batch.h"
#include "io/settings.h"
#include "optimiser/lm.h"
#include "optimiser/pipeline.h"
#include "optimiser/problem.h"
#include "optimiser/robust.h"
#include "optimiser/robust_check.h"
#include "optimiser/scenario.h"

/* the budget of (b) and (c), at least: T (the LM run's ~1 s) is one or two of (b)'s gradient batches of (n + 1) S
 * rollouts and less than the n + 2 evaluations BOBYQA needs to begin, so neither could show anything in it */
#define KL_NLOPT_T 10.0

#define MAXRUN 15

/* a problem with its packed optimisation set */
typedef struct prob {
  kl_problem *pb;
  double *gp, *geo;
  kl_scen_set sc;
} prob;

static kl_host *open_host(int cpu, int threads)
{
  kl_host *h = NULL;
  kl_host_opts o;
  kl_host_opts_default(&o);
  o.cpu = cpu;
  o.threads = threads;
  if (kl_host_create(&h) != KELVIN_OK || kl_host_open(h, &o) != KELVIN_OK) {
    fprintf(stderr, "robust_bench: %s\n", h ? kl_host_errmsg(h) : "out of memory");
    kl_host_destroy(h);
    return NULL;
  }
  return h;
}

static int prob_build(const kl_settings *s, const kl_problem_inputs *in, const double *draw, prob *p)
{
  char msg[2048];
  memset(p, 0, sizeof *p);
  if (kl_problem_build(s, in, &p->pb, msg, sizeof msg) != KELVIN_OK) {
    fprintf(stderr, "robust_bench: %s\n", msg);
    return -1;
  }
  const int S = s->unc_scenarios, ns = p->pb->ns;
  p->gp = malloc((size_t)S * KL_GP_N * sizeof *p->gp);
  p->geo = malloc((size_t)S * ns * KL_GG_N * sizeof *p->geo);
  if (!p->gp || !p->geo || kl_scenarios_pack(p->pb, in, S, draw, p->gp, p->geo, NULL, msg, sizeof msg) != KELVIN_OK) {
    fprintf(stderr, "robust_bench: %s\n", p->gp && p->geo ? msg : "out of memory");
    return -1;
  }
  p->sc = (kl_scen_set){S, p->gp, p->geo, kl_check_spec(p->pb)};
  return 0;
}

static void prob_free(prob *p)
{
  kl_problem_free(p->pb);
  free(p->gp);
  free(p->geo);
}

/* a rollout of p's problem on h with p's scenarios */
static kl_rollout *scen_rollout(kl_host *h, const prob *p)
{
  const kl_rollout_def def = {p->pb->ns, p->pb->nc, p->pb->gp, p->pb->geo, p->pb->basis, 0, NULL, NULL};
  kl_rollout *ro = NULL;
  if (kl_rollout_create(h, &def, &ro) != KELVIN_OK || kl_rollout_set_scenarios(ro, p->sc.S, p->gp, p->geo) != KELVIN_OK) {
    fprintf(stderr, "robust_bench: %s\n", kl_host_errmsg(h));
    kl_rollout_destroy(ro);
    return NULL;
  }
  return ro;
}

/* THE measure of every row: the robust objective of control points x over p's set, rolled out on ro (p's twin
 * rollout); NaN on failure */
static double measure(kl_rollout *ro, const prob *p, const double *x)
{
  const int S = p->sc.S;
  double *obj = malloc((size_t)KL_OBJ_N * S * sizeof *obj), *work = malloc(2 * (size_t)S * sizeof *work);
  double J = NAN;
  if (obj && work && kl_rollout_eval_scenarios(ro, 1, x, obj, NULL) == KELVIN_OK)
    J = kl_robust_objective(&p->sc.spec, obj, S, S, work);
  free(obj);
  free(work);
  return J;
}

//------------------------------------------------------------------------------------------------------
// 1. throughput

typedef struct tput {
  const char *name;
  double t[KL_BENCH_MAXREP];
  double cpu[KL_BENCH_MAXREP]; /* the process's CPU seconds (user + system) in the same batches */
  double rate;
  double worst; /* largest relative difference from the reference (all-thread twin) */
  int ok;
} tput;

/* the process's CPU seconds so far, every thread's (pocl's included) */
static double cpu_now(void)
{
  struct rusage u;
  if (getrusage(RUSAGE_SELF, &u) != 0) return NAN;
  return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec + 1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/* N timed batches of ctrl (nc x P) on each of the three peers (hs), interleaved (repeat i of every peer before
 * repeat i + 1 of any: the load of a shared machine changes slowly, and so hits them alike), after one untimed
 * warm-up batch each (the OpenCL program build, the scenarios' upload); obj[i]: peer i's last batch */
static void tput_run(kl_host *const *hs, const prob *p, size_t P, const double *ctrl, int N, double **obj, tput *r)
{
  kl_rollout *ro[3];
  for (int i = 0; i < 3; ++i) {
    ro[i] = scen_rollout(hs[i], p);
    if (!ro[i] || kl_rollout_eval_scenarios(ro[i], P, ctrl, obj[i], NULL) != KELVIN_OK) {
      fprintf(stderr, "robust_bench: %s: %s\n", r[i].name, kl_host_errmsg(hs[i]));
      r[i].ok = 0;
    }
    kl_bench_settle();
  }
  for (int k = 0; k < N; ++k)
    for (int i = 0; i < 3; ++i) {
      if (!r[i].ok) continue;
      const double t0 = kl_bench_now(), c0 = cpu_now();
      if (kl_rollout_eval_scenarios(ro[i], P, ctrl, obj[i], NULL) != KELVIN_OK) {
        fprintf(stderr, "robust_bench: %s: %s\n", r[i].name, kl_host_errmsg(hs[i]));
        r[i].ok = 0;
      }
      r[i].t[k] = kl_bench_now() - t0;
      r[i].cpu[k] = cpu_now() - c0;
      kl_bench_settle();
    }
  for (int i = 0; i < 3; ++i) {
    kl_rollout_destroy(ro[i]);
    r[i].rate = r[i].ok ? (double)P * p->sc.S / kl_bench_median(r[i].t, N) : NAN;
  }
}

/* obj against the reference ref (KL_OBJ_N x Q): every term within tol relative (absolute below 1e-300), the
 * status exactly */
static int same_terms(const char *name, const double *obj, const double *ref, size_t Q, double tol, double *worst)
{
  *worst = 0;
  for (int t = 0; t < KL_OBJ_N; ++t)
    for (size_t q = 0; q < Q; ++q) {
      const double a = obj[t * Q + q], b = ref[t * Q + q];
      const double e = a == b ? 0 : fabs(a - b) / fmax(fabs(b), 1e-300);
      if (t == KL_OBJ_STATUS ? a != b : !(e <= tol)) {
        fprintf(stderr, "robust_bench: %s: term %d of rollout %zu is %.17g, the twin's %.17g\n", name, t, q, a, b);
        *worst = INFINITY;
        return -1;
      }
      *worst = fmax(*worst, e);
    }
  return 0;
}

//------------------------------------------------------------------------------------------------------
// 2. the robust objective at an equal budget

typedef struct orow {
  const char *name;
  double J[MAXRUN], roll[MAXRUN], wall[MAXRUN];
  int ok;
  double own[MAXRUN], own_nom[MAXRUN]; /* method lm: its own measure of the robust pass and of the nominal optimum */
} orow;

/* (b): the robust stage gets what is left of T when it starts (see the header) */
typedef struct budget_ctx {
  kl_problem *pb;
  double T;      /* the robust stage's maxtime, set when it starts */
  double t1, t2; /* when the robust stage started and ended (its first and last notice) */
} budget_ctx;

static int budget_cb(void *ctx, double fraction, const char *text)
{
  (void)fraction;
  budget_ctx *c = ctx;
  if (strncmp(text, "robust refinement (", 19) == 0) {
    c->pb->set.maxtime = c->T;
    c->t1 = kl_bench_now();
  } else if (strncmp(text, "robust refinement: ", 19) == 0) {
    c->t2 = kl_bench_now();
  }
  return 0;
}

/* one kl_optimise_robust run of p on h into res (fresh); the pipeline's own robust objective of the robust pass
 * checked against the measure; row values of run k */
static int pipeline_run(const prob *p, kl_host *h, kl_rollout *meas, double tol, budget_ctx *bc, kl_opt_result *res,
                        orow *r, int k)
{
  char msg[2048];
  memset(res, 0, sizeof *res);
  if (bc) bc->t1 = bc->t2 = NAN;
  if (kl_optimise_robust(p->pb, h, &p->sc, bc ? budget_cb : NULL, bc, res, msg, sizeof msg) != KELVIN_OK) {
    fprintf(stderr, "robust_bench: %s: %s\n", r->name, msg);
    return -1;
  }
  if (res->robust < 0 || res->nominal < 0) {
    fprintf(stderr, "robust_bench: %s: no robust pass or nominal optimum\n", r->name);
    return -1;
  }
  const kl_pass *rp = &res->pass[res->robust];
  /* the pipeline's own figure is its refinement's measure: method lm's the statistic of the scenarios' sums of
   * squares (kl_lm_robust_value, optimiser/lm.h), nlopt's the measure itself; the row gives the measure */
  const int lm = p->pb->set.method == KL_METHOD_LM;
  double own = NAN;
  if (lm && kl_lm_robust_value(p->pb, h, meas, &p->sc, 1, rp->x, &own, msg, sizeof msg) != KELVIN_OK) {
    fprintf(stderr, "robust_bench: %s: %s\n", r->name, msg);
    return -1;
  }
  if (lm) kl_rollout_set_scenarios(meas, p->sc.S, p->gp, p->geo); /* (kl_lm_robust_value replaced meas's set) */
  const double J = measure(meas, p, rp->x), ref = lm ? own : J, e = fabs(rp->robj - ref) / fabs(ref);
  if (!(e <= tol)) {
    fprintf(stderr, "robust_bench: %s: the pipeline's robust objective %.17g, measured %.17g\n", r->name, rp->robj, ref);
    return -1;
  }
  if (lm) {
    double on = NAN;
    kl_lm_robust_value(p->pb, h, meas, &p->sc, 1, res->pass[res->nominal].x, &on, msg, sizeof msg);
    kl_rollout_set_scenarios(meas, p->sc.S, p->gp, p->geo);
    fprintf(stderr, "robust_bench: %s: its own measure (the statistic of the sums of squares): nominal optimum %.6g, "
            "robust pass %.6g\n", r->name, on, own);
    r->own[k] = own, r->own_nom[k] = on;
  }
  r->J[k] = J;
  r->roll[k] = (double)(res->evaluations - res->npass); /* less predict_all's one rollout per pass, after the stages */
  r->wall[k] = res->time.screening + res->time.refinement;
  if (bc) { /* (b): its robust stage alone */
    if (!isfinite(bc->t2 - bc->t1)) {
      fprintf(stderr, "robust_bench: %s: the robust stage's notices were not seen\n", r->name);
      return -1;
    }
    fprintf(stderr, "robust_bench: %s: screening + nominal refinement %.2f s, %.0f rollouts (not counted)\n", r->name,
            r->wall[k] - (bc->t2 - bc->t1), r->roll[k] - rp->evals);
    r->roll[k] = rp->evals;
    r->wall[k] = bc->t2 - bc->t1;
  }
  fprintf(stderr, "robust_bench: %s: robust objective %.6g (nominal optimum '%s' %.6g), %.0f rollouts in %.2f s, %s\n",
          r->name, J, res->pass[res->nominal].label, res->pass[res->nominal].robj, r->roll[k], r->wall[k], rp->stop);
  return 0;
}

/* (c): plain serial NLopt */
typedef struct serial_ctx {
  kl_rollout *ro;
  const prob *p;
  double *obj, *work, *bestx, bestJ;
  long evals;
  int fail;
} serial_ctx;

static double serial_f(unsigned n, const double *x, double *grad, void *data)
{
  (void)grad;
  serial_ctx *c = data;
  const int S = c->p->sc.S;
  if (kl_rollout_eval_scenarios(c->ro, 1, x, c->obj, NULL) != KELVIN_OK) {
    c->fail = 1;
    return HUGE_VAL;
  }
  ++c->evals;
  const double J = kl_robust_objective(&c->p->sc.spec, c->obj, S, S, c->work);
  if (J < c->bestJ) {
    c->bestJ = J;
    memcpy(c->bestx, x, n * sizeof *x);
  }
  return J;
}

static int serial_run(const prob *p, kl_host *h1, kl_rollout *meas, const double *x0, double T, orow *r, int k)
{
  const int nc = p->pb->nc, S = p->sc.S;
  serial_ctx c = {scen_rollout(h1, p), p, malloc((size_t)KL_OBJ_N * S * sizeof(double)),
                  malloc(2 * (size_t)S * sizeof(double)), malloc((size_t)nc * sizeof(double)), HUGE_VAL, 0, 0};
  double *x = malloc((size_t)nc * sizeof *x);
  nlopt_opt opt = nlopt_create(NLOPT_LN_BOBYQA, (unsigned)nc);
  int rc = -1;
  if (!c.ro || !c.obj || !c.work || !c.bestx || !x || !opt) {
    fprintf(stderr, "robust_bench: %s: setup failed\n", r->name);
    goto done;
  }
  memcpy(x, x0, (size_t)nc * sizeof *x);
  memcpy(c.bestx, x0, (size_t)nc * sizeof *x);
  nlopt_set_lower_bounds(opt, p->pb->lo);
  nlopt_set_upper_bounds(opt, p->pb->hi);
  nlopt_set_min_objective(opt, serial_f, &c);
  nlopt_set_xtol_rel(opt, p->pb->set.xtol_rel);
  nlopt_set_ftol_rel(opt, p->pb->set.ftol_rel);
  nlopt_set_maxtime(opt, T);
  double f;
  const double t0 = kl_bench_now();
  const nlopt_result nr = nlopt_optimize(opt, x, &f);
  const double wall = kl_bench_now() - t0;
  if (c.fail || (nr < 0 && nr != NLOPT_ROUNDOFF_LIMITED) || !(c.bestJ < HUGE_VAL)) {
    fprintf(stderr, "robust_bench: %s: NLopt returned %d%s\n", r->name, (int)nr, c.fail ? " (a rollout failed)" : "");
    goto done;
  }
  const double J = measure(meas, p, c.bestx);
  if (!(fabs(J - c.bestJ) <= 1e-12 * fabs(J))) {
    fprintf(stderr, "robust_bench: %s: NLopt's best %.17g, measured %.17g\n", r->name, c.bestJ, J);
    goto done;
  }
  r->J[k] = J;
  r->roll[k] = (double)c.evals * S;
  r->wall[k] = wall;
  fprintf(stderr, "robust_bench: %s: robust objective %.6g, %.0f rollouts in %.2f s (NLopt %d)\n", r->name, J,
          r->roll[k], wall, (int)nr);
  rc = 0;
done:
  if (opt) nlopt_destroy(opt);
  kl_rollout_destroy(c.ro);
  free(c.obj);
  free(c.work);
  free(c.bestx);
  free(x);
  return rc;
}

static void orow_print(const orow *r, int M)
{
  if (!r->ok) {
    printf("| %s | FAILED (see stderr) | | | |\n", r->name);
    return;
  }
  const double w = kl_bench_median(r->wall, M), n = kl_bench_median(r->roll, M);
  printf("| %s | %.5f | %.0f | %.2f | %.0f |\n", r->name, kl_bench_median(r->J, M), n, w, n / w);
}

int main(int argc, char **argv)
{
  const char *config = "examples/optimise_robust.yaml";
  int N = 5, M = 3, P = 64;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
      config = argv[++i];
    else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
      N = atoi(argv[++i]);
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      M = atoi(argv[++i]);
    else if (strcmp(argv[i], "--candidates") == 0 && i + 1 < argc)
      P = atoi(argv[++i]);
    else
      return kl_bench_usage(argv[i], "usage: robust_bench [--config FILE] [--repeats N (1..64)] [--runs M (1..15)] "
                                     "[--candidates P >= 1]\n");
  }
  if (N < 1 || N > KL_BENCH_MAXREP || M < 1 || M > MAXRUN || P < 1) {
    fprintf(stderr, "robust_bench: need 1 <= --repeats <= %d, 1 <= --runs <= %d, --candidates >= 1\n", KL_BENCH_MAXREP,
            MAXRUN);
    return 2;
  }
  char msg[2048];
  kl_settings base;
  kl_settings_default(&base);
  kl_inputs inputs;
  memset(&inputs, 0, sizeof inputs);
  if (kl_settings_load(&base, config, msg, sizeof msg) != KELVIN_OK ||
      kl_inputs_load(&base, &inputs, msg, sizeof msg) != KELVIN_OK) {
    fprintf(stderr, "robust_bench: %s\n", msg);
    return 2;
  }
  const int S = base.unc_scenarios;
  if (S < 1 || base.unc_objective == KL_ROBUST_NOMINAL || base.method != KL_METHOD_LM) {
    fprintf(stderr, "robust_bench: %s: needs uncertainty.scenarios >= 1, a robust uncertainty.objective and "
                    "optimiser.method lm\n", config);
    return 2;
  }
  base.verify = 0; /* the 3-D verification: the same for every row, left out */
  double *draw = malloc((size_t)S * KL_UNC_N * sizeof *draw);
  if (!draw || kl_scenarios_draw(&base, 0, S, draw, msg, sizeof msg) != KELVIN_OK) {
    fprintf(stderr, "robust_bench: %s\n", draw ? msg : "out of memory");
    return 2;
  }
  kl_settings sb = base; /* (b), (c): splines */
  sb.method = KL_METHOD_NLOPT;
  snprintf(sb.algorithm, sizeof sb.algorithm, "LD_LBFGS");
  sb.maxeval = 100000000; /* stopped by the budget or the tolerances */
  sb.budget = 0;          /* the nominal stage to its tolerances, whatever the load: the same start in every run */
  prob pa, pbb;
  kl_host *hcl = open_host(0, 0), *hall = open_host(1, 0), *h1 = open_host(1, 1);
  if (prob_build(&base, &inputs.in, draw, &pa) || prob_build(&sb, &inputs.in, draw, &pbb) || !hcl || !hall || !h1)
    return 2;
  if (!kl_host_is_opencl(hcl)) fprintf(stderr, "robust_bench: no OpenCL device: the OpenCL rows run the twin\n");
  const int threads = kl_host_threads(hall);
  kl_rollout *meas_a = scen_rollout(hall, &pa), *meas_b = scen_rollout(hall, &pbb);
  if (!meas_a || !meas_b) return 2;
  const int nca = pa.pb->nc;
  double *xnom_a = malloc((size_t)nca * sizeof *xnom_a), *xnom_b = malloc((size_t)pbb.pb->nc * sizeof *xnom_b);
  kl_opt_result *res = calloc(1, sizeof *res);
  if (!xnom_a || !xnom_b || !res) return 2;

  { /* warm-up: the OpenCL rollout program built once (pocl caches it) before anything is timed */
    kl_rollout *w = scen_rollout(hcl, &pa);
    if (!w || isnan(measure(w, &pa, pa.pb->lo))) fprintf(stderr, "robust_bench: warm-up failed\n");
    kl_rollout_destroy(w);
  }
  /* 2. first: (a) gives the nominal optimum the throughput batch perturbs, and T */
  orow rows[6] = {{"(a) kelvin pipeline, Levenberg-Marquardt, OpenCL", {0}, {0}, {0}, 1, {0}, {0}},
                  {"(a) kelvin pipeline, Levenberg-Marquardt, OpenMP twin", {0}, {0}, {0}, 1, {0}, {0}},
                  {"(b) kelvin pipeline, NLopt LD_LBFGS (splines, batched gradients), OpenCL", {0}, {0}, {0}, 1, {0}, {0}},
                  {"(c) plain serial NLopt LN_BOBYQA (splines), one thread, one rollout at a time", {0}, {0}, {0}, 1, {0}, {0}},
                  {"(d) NLopt LN_BOBYQA (splines), each evaluation one batch of the S scenarios on OpenCL (the pipeline's "
                   "robust stage with optimiser.algorithm LN_BOBYQA)", {0}, {0}, {0}, 1, {0}, {0}},
                  {NULL, {0}, {0}, {0}, 1, {0}, {0}}};
  double Jnom_a = NAN, Jnom_b = NAN, T[MAXRUN];
  for (int k = 0; k < M; ++k) {
    if (rows[0].ok && pipeline_run(&pa, hcl, meas_a, 1e-9, NULL, res, &rows[0], k) != 0) rows[0].ok = 0;
    T[k] = rows[0].ok ? rows[0].wall[k] : NAN;
    if (k == 0 && rows[0].ok) {
      memcpy(xnom_a, res->pass[res->nominal].x, (size_t)nca * sizeof *xnom_a);
      Jnom_a = measure(meas_a, &pa, xnom_a);
    }
    kl_opt_result_free(res);
    if (!rows[0].ok) break;
    kl_bench_settle();
    if (rows[1].ok && pipeline_run(&pa, hall, meas_a, 1e-12, NULL, res, &rows[1], k) != 0) rows[1].ok = 0;
    kl_opt_result_free(res);
    kl_bench_settle();
    pbb.pb->set.maxtime = sb.maxtime; /* the nominal stage's (the callback set the last run's robust stage's) */
    const double TN = fmax(T[k], KL_NLOPT_T); /* (b) and (c): the same budget, at least KL_NLOPT_T */
    budget_ctx bc = {pbb.pb, TN, NAN, NAN};
    if (rows[2].ok && pipeline_run(&pbb, hcl, meas_b, 1e-9, &bc, res, &rows[2], k) != 0) rows[2].ok = 0;
    if (rows[2].ok) {
      memcpy(xnom_b, res->pass[res->nominal].x, (size_t)pbb.pb->nc * sizeof *xnom_b);
      if (k == 0) Jnom_b = measure(meas_b, &pbb, xnom_b);
    }
    kl_opt_result_free(res);
    kl_bench_settle();
    if (rows[2].ok && rows[3].ok && serial_run(&pbb, h1, meas_b, xnom_b, TN, &rows[3], k) != 0) rows[3].ok = 0;
    if (!rows[2].ok) rows[3].ok = 0; /* it starts from (b)'s nominal optimum */
    kl_bench_settle();
    if (rows[2].ok && rows[4].ok && serial_run(&pbb, hcl, meas_b, xnom_b, TN, &rows[4], k) != 0) rows[4].ok = 0;
    if (!rows[2].ok) rows[4].ok = 0;
    fprintf(stderr, "robust_bench: budget run %d/%d done (T = %.2f s)\n", k + 1, M, T[k]);
  }
  if (!rows[0].ok) {
    fprintf(stderr, "robust_bench: the robust example did not run: no nominal optimum, no budget\n");
    return 1;
  }

  /* 1. throughput: P candidates x S scenarios */
  const size_t Q = (size_t)P * S;
  double *ctrl = malloc((size_t)nca * P * sizeof *ctrl);
  double *obj[3];
  for (int i = 0; i < 3; ++i) obj[i] = malloc(KL_OBJ_N * Q * sizeof *obj[i]);
  if (!ctrl || !obj[0] || !obj[1] || !obj[2]) return 2;
  /* the same batch for every peer: candidate 0 the nominal optimum, candidate p a smooth perturbation of its offsets
   * and speeds (per sample: a sine of p/4 + 1/2 periods along the path, phase p, amplitude 0.5 % of each bound's
   * range, opposite signs for offsets and speeds), clamped to the bounds */
  const int ns = pa.pb->ns;
  for (int p = 0; p < P; ++p)
    for (int j = 0; j < nca; ++j) {
      const int k = j % ns;
      const double lo = pa.pb->lo[j], hi = pa.pb->hi[j], sgn = j < ns ? 1.0 : -1.0;
      const double d = sgn * 0.005 * (hi - lo) * sin(M_PI * (0.25 * p + 0.5) * k / (ns - 1) + p);
      ctrl[(size_t)j * P + p] = p == 0 ? xnom_a[j] : fmin(hi, fmax(lo, xnom_a[j] + d));
    }
  tput tp[3] = {{"OpenCL", {0}, {0}, 0, 0, 1}, {"OpenMP twin, all threads", {0}, {0}, 0, 0, 1},
                {"OpenMP twin, one thread", {0}, {0}, 0, 0, 1}};
  kl_host *th[3] = {hcl, hall, h1};
  fprintf(stderr, "robust_bench: throughput: %d x %d rollouts, %d repeats on each peer\n", P, S, N);
  tput_run(th, &pa, (size_t)P, ctrl, N, obj, tp);
  if (tp[1].ok)
    for (int i = 0; i < 3; i += 2)
      if (tp[i].ok && same_terms(tp[i].name, obj[i], obj[1], Q, 1e-9, &tp[i].worst) != 0) tp[i].ok = 0;
  if (!tp[1].ok) tp[0].ok = tp[2].ok = 0; /* nothing to check them against */

  /* the Markdown: the load average says how much else ran on the machine (a shared machine's cores) */
  char load[128] = "unknown";
  FILE *la = fopen("/proc/loadavg", "r");
  if (la) {
    if (fgets(load, sizeof load, la)) load[strcspn(load, "\n")] = '\0';
    fclose(la);
  }
  printf("Robust passes on `%s`: S = %d scenarios per candidate (uncertainty.objective %s, k = %g), "
         "3-D verification and out-of-sample check left out.\n"
         "OpenCL: %s. Twin: %s. One thread: %s. Load average (/proc/loadavg) after the run: %s.\n\n",
         config, S, base.unc_objective == KL_ROBUST_MEAN_STD ? "mean_std" : "as configured", base.unc_k,
         kl_host_notice(hcl), kl_host_notice(hall), kl_host_notice(h1), load);
  printf("Throughput rows: one batch of P = %d candidates (the nominal optimum's %d per-sample commands, smoothly perturbed; the "
         "same for every peer) x S = %d scenarios, median of %d repeats after a warm-up, every objective term checked "
         "against the all-thread twin's (1e-9 relative). Budget rows: the robust objective (kl_robust_objective of the "
         "final pass over the same %d scenarios, measured here on the twin) reached within T = the OpenCL "
         "Levenberg-Marquardt run's refinement stages, nominal + robust (median %.2f s); (b), (c) and (d) get the same "
         "T_N = max(T, %.0f s) for the robust refinement from (b)'s nominal optimum (their rows: that stage alone); "
         "median of %d runs.\n\n",
         P, nca, S, N, S, kl_bench_median(T, M), KL_NLOPT_T, M);
  printf("| peer | robust objective | rollouts | wall s | rollouts/s |\n|---|---|---|---|---|\n");
  for (int i = 0; i < 3; ++i) {
    if (!tp[i].ok) {
      printf("| throughput: %s | FAILED (see stderr) | | | |\n", tp[i].name);
      continue;
    }
    printf("| throughput: %s (worst rel. diff. vs twin %.1e) | | %zu | %.3f | %.0f |\n", tp[i].name, tp[i].worst, Q,
           kl_bench_median(tp[i].t, N), tp[i].rate);
  }
  printf("| nominal optimum of (a) (reference) | %.5f | | | |\n", Jnom_a);
  printf("| nominal optimum of (b), start of (c) (reference) | %.5f | | | |\n", Jnom_b);
  for (int i = 0; i < 5; ++i) orow_print(&rows[i], M);
  printf("\n");
  if (rows[0].ok) /* (a) minimises its own measure, which weighs time otherwise (docs/design.md section 10.3) */
    printf("(a) minimises the statistic of the scenarios' sums of squares (optimiser/lm.h), not the objective in the "
           "table, which weighs the pass time otherwise: by its own measure the nominal optimum %.5f, the robust pass "
           "%.5f.\n", kl_bench_median(rows[0].own_nom, M), kl_bench_median(rows[0].own, M));
  const double TNm = fmax(kl_bench_median(T, M), KL_NLOPT_T);
  for (int i = 2; i < 5; ++i) /* (a) on the twin has no budget: the OpenCL run's algorithm, on the twin */
    if (rows[i].ok && kl_bench_median(rows[i].wall, M) > 1.2 * TNm)
      printf("%s ran past the budget T_N by %.2f s (median; its optimiser's stop reason on stderr).\n", rows[i].name,
             kl_bench_median(rows[i].wall, M) - TNm);
  if (tp[0].ok && tp[1].ok) printf("OpenCL / twin: %.2f (target >= 0.9). ", tp[0].rate / tp[1].rate);
  if (tp[1].ok && tp[2].ok)
    printf("The twin's parallel efficiency on %d threads, rate(all) / (%d x rate(one)): %.2f (target >= 0.85).", threads,
           threads, tp[1].rate / (threads * tp[2].rate));
  printf("\n");
  if (tp[0].ok && tp[1].ok && tp[2].ok) {
    const double c0 = kl_bench_median(tp[0].cpu, N), c1 = kl_bench_median(tp[1].cpu, N), c2 = kl_bench_median(tp[2].cpu, N);
    const double w1 = kl_bench_median(tp[1].t, N), w2 = kl_bench_median(tp[2].t, N);
    printf("CPU seconds of the process per batch (getrusage, median): OpenCL %.3f, twin %.3f, one thread %.3f; cores the "
           "twin obtained on average %.2f of %d, the one thread %.2f of 1; the twin's efficiency by CPU time (one "
           "thread's / all threads') %.2f: where it is near 1 and the wall-clock figure is not, the cores were busy "
           "with other work.\n",
           c0, c1, c2, c1 / w1, threads, c2 / w2, c2 / c1);
  }

  int ok = 1;
  for (int i = 0; i < 3; ++i) ok &= tp[i].ok;
  for (int i = 0; i < 5; ++i) ok &= rows[i].ok;
  kl_rollout_destroy(meas_a);
  kl_rollout_destroy(meas_b);
  kl_host_destroy(hcl);
  kl_host_destroy(hall);
  kl_host_destroy(h1);
  prob_free(&pa);
  prob_free(&pbb);
  kl_inputs_free(&inputs);
  for (int i = 0; i < 3; ++i) free(obj[i]);
  free(ctrl);
  free(res);
  free(draw);
  free(xnom_a);
  free(xnom_b);
  return ok ? 0 : 1;
}
