/* optimiser/pipeline.c: screening, refinement and verification of a grinding pass (pipeline.h). */
#include "optimiser/pipeline.h"

#include <math.h>
#include <nlopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_qrng.h>

#include "core/clock.h"
#include "optimiser/lm.h"
#include "optimiser/progress.h"
#include "optimiser/schema.h"
#include "optimiser/verify3d.h"

typedef struct run {
  const kl_problem *pb;
  kl_host *h;
  kl_rollout *ro;
  const double *basis; /* (2 ns x nc) of ro */
  int nc;
  kl_opt_result *res;
  kl_progress prog; /* progress and stop (optimiser/progress.h); prog.f0, f1: the current stage's share */
  kelvin_status st; /* failure inside an NLopt callback */
  char *msg;
  int cap;
  double *ctrl, *obj; /* scratch for batches (nc x P, KL_OBJ_N x P) */
  size_t pcap;
  nlopt_opt opt;
  long evals, e0, emax; /* rollouts so far; at the refinement's start and the most it may spend (progress) */
  double best_f, *best_x; /* best point an NLopt run has evaluated (kept if it stops on a failure) */
  int correcting;      /* inside the correction stage (its 3-D runs say less) */
  const kl_scen_set *sc; /* a robust stage: batches score the robust objective over sc's scenarios; else NULL */
  double *sobj, *rwork;  /* its scratch: KL_OBJ_N x P S terms, 2 S */
  size_t scap;
  double maxtime, t_refine; /* a sharded NLopt run's time limit and start on kl_progress_clock (refine) */
  int timed_out;            /* it ran out */
} run;

/* a notice; nonzero when the caller asked to stop */
static int say(run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(run *r, const char *fmt, ...)
{
  if (!r->prog.fn) return 0;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return kl_progress_say(&r->prog, 0, 0.0, "%s", buf);
}

/* the status and message of a stop at a checkpoint of stage what; a stop the group agreed on (a sharded run,
 * optimiser/progress.h) keeps the "rank R: " of the rank that asked */
static kelvin_status stopped(run *r, const char *what)
{
  int rank = -1, n = 0;
  if (kl_host_shard(r->h) && sscanf(r->msg, "rank %d: %n", &rank, &n) == 1 && n > 0)
    snprintf(r->msg, (size_t)r->cap, "rank %d: %s: stopped by the caller", rank, what);
  else
    snprintf(r->msg, (size_t)r->cap, "%s: stopped by the caller", what);
  return KELVIN_ERR_STOPPED;
}

/* the clock a time limit reads (rank 0's with a shard; collective then: optimiser/progress.h) */
static double clock_of(const run *r) { return kl_progress_clock(kl_host_shard(r->h)); }

/* with a shard, the group's agreement on a status reached in work every rank does alike (the 3-D verification:
 * a stop or a time limit on one rank), a stop recorded on this rank included (optimiser/progress.h) */
static kelvin_status agree(run *r, kelvin_status st, const char *what)
{
  return kl_progress_agree(&r->prog, kl_host_shard(r->h), st, what, r->msg, r->cap);
}

/* the rollout batches' progress lines (the program's build) */
static void notice(void *ctx, const char *line) { say((run *)ctx, "%s", line); }

int kl_opt_add(kl_opt_result *res, const char *label, const double *x, int nc)
{
  if (res->npass >= KL_MAXPASS) return -1;
  kl_pass *p = &res->pass[res->npass];
  memset(p, 0, sizeof *p);
  snprintf(p->label, sizeof p->label, "%s", label);
  p->x = malloc((size_t)nc * sizeof *p->x);
  if (!p->x) return -1;
  memcpy(p->x, x, (size_t)nc * sizeof *x);
  p->nx = nc;
  p->stop = "";
  p->robj = NAN;
  return res->npass++;
}

static void free_pass(kl_pass *p)
{
  free(p->x);
  free(p->so);
  free(p->vF);
  free(p->vFavg);
  free(p->vFc);
  free(p->vFcavg);
  free(p->vt);
  free(p->vdev);
  free(p->vc);
  free(p->sF);
}

void kl_opt_result_free(kl_opt_result *res)
{
  for (int i = 0; i < res->npass; ++i) free_pass(&res->pass[i]);
  res->npass = 0;
}

/* the candidates in r->ctrl (nc x P) on every scenario of r->sc in one batch: the robust objective into J (P)
 * and, if obj_out is not NULL, each term's mean over the scenarios with the robust objective as KL_OBJ_J */
static kelvin_status robust_batch(run *r, size_t P, double *J, double *obj_out)
{
  const size_t S = (size_t)r->sc->S, Q = P * S;
  if (Q > r->scap) {
    free(r->sobj);
    free(r->rwork);
    r->sobj = malloc(KL_OBJ_N * Q * sizeof *r->sobj);
    r->rwork = malloc(2 * S * sizeof *r->rwork);
    r->scap = (r->sobj && r->rwork) ? Q : 0;
    if (!r->scap) {
      snprintf(r->msg, (size_t)r->cap, "out of memory for %zu candidates on %zu scenarios", P, S);
      return KELVIN_ERR_NOMEM;
    }
  }
  const kelvin_status st = kl_rollout_eval_scenarios(r->ro, P, r->ctrl, r->sobj, NULL);
  if (st != KELVIN_OK) {
    snprintf(r->msg, (size_t)r->cap, "%s", kl_host_errmsg(r->h));
    return st;
  }
  r->evals += (long)Q;
  for (size_t p = 0; p < P; ++p) {
    const double f = kl_robust_objective(&r->sc->spec, r->sobj + p * S, (long)Q, (int)S, r->rwork);
    if (J) J[p] = f;
    if (obj_out) {
      for (int t = 0; t < KL_OBJ_N; ++t) obj_out[t * P + p] = kl_robust_mean(r->sobj + t * Q + p * S, (int)S);
      obj_out[KL_OBJ_J * P + p] = f;
    }
  }
  return KELVIN_OK;
}

/* evaluate P candidates xs (P x nc, one per row) on the device: objective into J (P) and, if so is
 * not NULL, all terms into obj_out (KL_OBJ_N x P) and the per-sample outputs into so (a robust stage, r->sc:
 * robust_batch, no so) */
static kelvin_status batch(run *r, size_t P, const double *xs, double *J, double *obj_out, double *so)
{
  const size_t nc = (size_t)r->nc;
  if (P > r->pcap) {
    free(r->ctrl);
    free(r->obj);
    r->ctrl = malloc(nc * P * sizeof *r->ctrl);
    r->obj = malloc(KL_OBJ_N * P * sizeof *r->obj);
    r->pcap = (r->ctrl && r->obj) ? P : 0;
    if (!r->pcap) {
      snprintf(r->msg, (size_t)r->cap, "out of memory for %zu candidates", P);
      return KELVIN_ERR_NOMEM;
    }
  }
  for (size_t p = 0; p < P; ++p)
    for (size_t j = 0; j < nc; ++j) r->ctrl[j * P + p] = xs[p * nc + j];
  if (r->sc) return robust_batch(r, P, J, obj_out);
  const kelvin_status st = kl_rollout_eval(r->ro, P, r->ctrl, r->obj, so);
  if (st != KELVIN_OK) {
    snprintf(r->msg, (size_t)r->cap, "%s", kl_host_errmsg(r->h));
    return st;
  }
  r->evals += (long)P;
  for (size_t p = 0; p < P; ++p) {
    if (J) J[p] = r->obj[KL_OBJ_J * P + p];
    if (obj_out)
      for (int t = 0; t < KL_OBJ_N; ++t) obj_out[t * P + p] = r->obj[t * P + p];
  }
  return KELVIN_OK;
}

//------------------------------------------------------------------------------------------------------
// screening: quasi-random candidates (Sobol, or Halton above 40 variables) around the initial guess in one batch

typedef struct scored {
  double J;
  size_t i;
} scored;

static int by_J(const void *a, const void *b)
{
  const double x = ((const scored *)a)->J, y = ((const scored *)b)->J;
  if (x < y) return -1;
  if (x > y) return 1;
  return ((const scored *)a)->i < ((const scored *)b)->i ? -1 : 1; /* deterministic ties */
}

static kelvin_status screen(run *r, const double *guess, double *best, int keep, int *nbest)
{
  const kl_problem *pb = r->pb;
  const kl_settings *s = &pb->set;
  const size_t P = (size_t)s->screening, nc = (size_t)r->nc;
  double *xs = malloc(P * nc * sizeof *xs), *J = malloc(P * sizeof *J);
  scored *sc = malloc(P * sizeof *sc);
  gsl_qrng *q = gsl_qrng_alloc(nc <= 40 ? gsl_qrng_sobol : gsl_qrng_halton, (unsigned)nc);
  double *u = malloc(nc * sizeof *u);
  kelvin_status st = KELVIN_OK;
  if (!xs || !J || !sc || !q || !u) {
    snprintf(r->msg, (size_t)r->cap, "out of memory for %zu screening candidates", P);
    st = KELVIN_ERR_NOMEM;
    goto done;
  }
  for (unsigned long i = 0; i < s->seed % 4096; ++i) gsl_qrng_get(q, u); /* the seed picks the block of the sequence */
  for (size_t p = 0; p < P; ++p) {
    if (p > 0) gsl_qrng_get(q, u);
    for (size_t j = 0; j < nc; ++j) {
      double x = guess[j];
      if (p > 0) {
        const double half = (int)j < s->n_o ? s->screen_o : 0.5 * (pb->hi[j] - pb->lo[j]);
        x += (2.0 * u[j] - 1.0) * half;
      }
      xs[p * nc + j] = fmin(pb->hi[j], fmax(pb->lo[j], x));
    }
  }
  const size_t chunk = 1024;
  for (size_t a = 0; a < P; a += chunk) {
    const size_t n = (P - a < chunk) ? P - a : chunk;
    if ((st = batch(r, n, xs + a * nc, J + a, NULL, NULL)) != KELVIN_OK) {
      if (st == KELVIN_ERR_STOPPED) st = stopped(r, "screening"); /* (a stop the group agreed on: "rank R: ") */
      goto done;
    }
    if (kl_progress_say(&r->prog, 1, (double)(a + n) / (double)P,
                        "screening: %zu/%zu candidates", a + n, P)) {
      st = stopped(r, "screening");
      goto done;
    }
  }
  for (size_t p = 0; p < P; ++p) {
    sc[p].J = J[p];
    sc[p].i = p;
  }
  qsort(sc, P, sizeof *sc, by_J);
  *nbest = keep < (int)P ? keep : (int)P;
  for (int k = 0; k < *nbest; ++k) memcpy(best + (size_t)k * nc, xs + sc[k].i * nc, nc * sizeof *xs);
  r->res->screen_best = sc[0].J;
  r->res->screened = (int)P;
done:
  free(xs);
  free(J);
  free(sc);
  free(u);
  if (q) gsl_qrng_free(q);
  return st;
}

//------------------------------------------------------------------------------------------------------
// refinement: NLopt from each start

/* NLopt objective: one rollout, or with a gradient one batch of nc + 1 (forward differences) */
static double objective(unsigned n, const double *x, double *grad, void *data)
{
  run *r = data;
  if (r->st != KELVIN_OK) return HUGE_VAL;
  const kl_problem *pb = r->pb;
  double J0 = HUGE_VAL;
  if (!grad) {
    r->st = batch(r, 1, x, &J0, NULL, NULL);
  } else {
    double *xs = malloc((size_t)(n + 1) * n * sizeof *xs), *J = malloc((size_t)(n + 1) * sizeof *J);
    double *step = malloc(n * sizeof *step);
    if (!xs || !J || !step) {
      snprintf(r->msg, (size_t)r->cap, "out of memory");
      r->st = KELVIN_ERR_NOMEM;
    } else {
      for (unsigned i = 0; i <= n; ++i) memcpy(xs + (size_t)i * n, x, n * sizeof *x);
      for (unsigned j = 0; j < n; ++j) {
        double hj = pb->set.fd_step * (pb->hi[j] - pb->lo[j]);
        if (x[j] + hj > pb->hi[j]) hj = -hj; /* stay inside the bounds */
        step[j] = hj;
        xs[(size_t)(j + 1) * n + j] += hj;
      }
      r->st = batch(r, n + 1, xs, J, NULL, NULL);
      if (r->st == KELVIN_OK)
        for (unsigned j = 0; j < n; ++j) grad[j] = (J[j + 1] - J[0]) / step[j];
      J0 = J[0];
    }
    free(xs);
    free(J);
    free(step);
  }
  if (r->st != KELVIN_OK) {
    nlopt_force_stop(r->opt);
    return HUGE_VAL;
  }
  if (J0 < r->best_f) {
    r->best_f = J0;
    memcpy(r->best_x, x, n * sizeof *x);
  }
  /* a sharded run's time limit, on rank 0's clock after each evaluation (NLopt's own reads each rank's) */
  if (r->maxtime > 0 && clock_of(r) - r->t_refine > r->maxtime) {
    r->timed_out = 1;
    nlopt_force_stop(r->opt);
  }
  /* a checkpoint per NLopt evaluation (one rollout, or one batch of n + 1) */
  const double share = fmin(1.0, (double)(r->evals - r->e0) / (double)r->emax);
  if (kl_progress_say(&r->prog, 1, share, "refinement: %ld rollouts, best objective %.5g",
                      r->evals - r->e0, r->best_f)) {
    r->st = stopped(r, "refinement");
    nlopt_force_stop(r->opt);
  }
  return J0;
}

static const char *stop_reason(nlopt_result rc)
{
  switch (rc) {
  case NLOPT_SUCCESS: return "success";
  case NLOPT_STOPVAL_REACHED: return "stopval reached";
  case NLOPT_FTOL_REACHED: return "ftol reached";
  case NLOPT_XTOL_REACHED: return "xtol reached";
  case NLOPT_MAXEVAL_REACHED: return "maxeval reached";
  case NLOPT_MAXTIME_REACHED: return "maxtime reached";
  case NLOPT_ROUNDOFF_LIMITED: return "roundoff limited";
  case NLOPT_FORCED_STOP: return "forced stop";
  case NLOPT_FAILURE: return "stopped: line search failed (best point kept)";
  default: return "failure";
  }
}

static kelvin_status refine(run *r, nlopt_algorithm alg, double maxtime, double *x, int *evals, const char **stop)
{
  const kl_problem *pb = r->pb;
  const kl_settings *s = &pb->set;
  const unsigned n = (unsigned)r->nc;
  nlopt_opt opt = nlopt_create(alg, n);
  if (!opt) {
    snprintf(r->msg, (size_t)r->cap, "NLopt could not create %s for %u variables", s->algorithm, n);
    return KELVIN_ERR_NLOPT;
  }
  r->opt = opt;
  nlopt_set_lower_bounds(opt, pb->lo);
  nlopt_set_upper_bounds(opt, pb->hi);
  nlopt_set_min_objective(opt, objective, r);
  nlopt_set_xtol_rel(opt, s->xtol_rel);
  nlopt_set_ftol_rel(opt, s->ftol_rel);
  nlopt_set_maxeval(opt, s->maxeval);
  const int sharded = kl_host_shard(r->h) != NULL; /* the time limit in objective(), the same on every rank */
  nlopt_set_maxtime(opt, sharded ? 0.0 : maxtime);
  r->maxtime = sharded ? maxtime : 0.0;
  r->timed_out = 0;
  r->t_refine = clock_of(r);
  nlopt_opt local = NULL;
  if (alg == NLOPT_AUGLAG || alg == NLOPT_G_MLSL_LDS || alg == NLOPT_G_MLSL) {
    local = nlopt_create(NLOPT_LN_BOBYQA, n);
    nlopt_set_xtol_rel(local, s->xtol_rel);
    nlopt_set_local_optimizer(opt, local);
  }
  const long e0 = r->evals;
  r->e0 = e0;
  r->emax = (long)s->maxeval * (s->algorithm[0] && s->algorithm[1] == 'D' ? (long)n + 1 : 1); /* LD_*: batches of n + 1 */
  if (r->sc) r->emax *= r->sc->S; /* a robust stage: each candidate is S rollouts */
  if (r->emax < 1) r->emax = 1;
  double f = 0;
  r->best_f = HUGE_VAL;
  r->best_x = malloc(n * sizeof *r->best_x);
  if (!r->best_x) {
    nlopt_destroy(opt);
    nlopt_destroy(local);
    snprintf(r->msg, (size_t)r->cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  memcpy(r->best_x, x, n * sizeof *x);
  nlopt_result rc = nlopt_optimize(opt, x, &f);
  /* a failed line search (NLOPT_FAILURE on a noisy objective) still leaves the best point seen */
  if (r->best_f < HUGE_VAL && (rc < 0 || r->best_f < f)) memcpy(x, r->best_x, n * sizeof *x);
  if (r->timed_out && rc == NLOPT_FORCED_STOP && r->st == KELVIN_OK) rc = NLOPT_MAXTIME_REACHED;
  r->maxtime = 0.0;
  free(r->best_x);
  r->best_x = NULL;
  *evals = (int)(r->evals - e0);
  *stop = stop_reason(rc);
  if (rc == NLOPT_MAXTIME_REACHED) r->res->time_limited = 1;
  nlopt_destroy(opt);
  nlopt_destroy(local);
  r->opt = NULL;
  if (r->st == KELVIN_ERR_STOPPED) return stopped(r, "refinement"); /* (a stop the group agreed on: "rank R: ") */
  if (r->st != KELVIN_OK) return r->st;
  if (rc == NLOPT_INVALID_ARGS || rc == NLOPT_OUT_OF_MEMORY || r->best_f == HUGE_VAL) {
    snprintf(r->msg, (size_t)r->cap, "NLopt %s failed: %s", s->algorithm, nlopt_result_to_string(rc));
    return KELVIN_ERR_NLOPT;
  }
  return KELVIN_OK;
}

//------------------------------------------------------------------------------------------------------
// evaluation of every pass with outputs, and verification in the 3-D engine (optimiser/verify3d.h)

static kelvin_status predict_all(run *r)
{
  kl_opt_result *res = r->res;
  const size_t P = (size_t)res->npass, nc = (size_t)r->nc, ns = (size_t)r->pb->ns;
  double *xs = calloc(P * nc, sizeof *xs), *obj = malloc(KL_OBJ_N * P * sizeof *obj);
  double *so = malloc(KL_SO_N * ns * P * sizeof *so);
  kelvin_status st = KELVIN_OK;
  if (!xs || !obj || !so) {
    snprintf(r->msg, (size_t)r->cap, "out of memory");
    st = KELVIN_ERR_NOMEM;
    goto done;
  }
  for (size_t p = 0; p < P; ++p) memcpy(xs + p * nc, res->pass[p].x, nc * sizeof *xs);
  if ((st = batch(r, P, xs, NULL, obj, so)) != KELVIN_OK) goto done;
  for (size_t p = 0; p < P; ++p) {
    kl_pass *ps = &res->pass[p];
    for (int t = 0; t < KL_OBJ_N; ++t) ps->obj[t] = obj[t * P + p];
    free(ps->so);
    ps->so = malloc(KL_SO_N * ns * sizeof *ps->so);
    if (!ps->so) {
      st = KELVIN_ERR_NOMEM;
      goto done;
    }
    for (size_t f = 0; f < KL_SO_N; ++f)
      for (size_t k = 0; k < ns; ++k) ps->so[f * ns + k] = so[(f * ns + k) * P + p];
  }
done:
  free(xs);
  free(obj);
  free(so);
  return st;
}

/* the device's wrist-sensor equivalent at each sample, F_h + F_g = F_N + m z'' (the 1-D model's
 * equation of motion), averaged or at the samples as the scored measure is (kl_problem_measure) */
static void device_sensor(const kl_problem *pb, const kl_pass *ps, const double *o, const double *v, double *sF)
{
  kl_problem_measure(pb, KL_MEASURE_SENSOR_BIT | (pb->set.measure & KL_MEASURE_AVG_BIT), ps->so, o, v, sF);
}

/* objective terms of the 3-D engine's wrist-sensor force, scored with the same functions as the
 * device rollout, and the agreement with the device's sensor equivalent */
/* the 3-D engine's scored measure of a verified pass (target.measure: sensor or contact force, averaged or
 * at the samples) */
static const double *scored3(const kl_problem *pb, const kl_pass *ps)
{
  const int avg = pb->set.measure & KL_MEASURE_AVG_BIT;
  if (pb->set.measure & KL_MEASURE_SENSOR_BIT) return avg ? ps->vFavg : ps->vF;
  return avg ? ps->vFcavg : ps->vFc;
}

static void score_verified(const run *r, kl_pass *ps, const double *o, const double *v)
{
  const kl_problem *pb = r->pb;
  const int ns = pb->ns;
  /* the sensor's reading (compared with the device's), and the scored measure: the sensor or the contact force */
  const int avg = pb->set.measure & KL_MEASURE_AVG_BIT;
  const double *F3 = avg ? ps->vFavg : ps->vF, *Fc = avg ? ps->vFcavg : ps->vFc, *Fs = scored3(pb, ps);
  kl_grind_acc a;
  kl_grind_acc_init(&a);
  for (int k = 1; k < ns; ++k) {
    const double dt = ps->vt[k] - ps->vt[k - 1];
    kl_grind_acc_add(&a, pb->gp, Fs[k], pb->ft[k], pb->s[k] - pb->s[k - 1], o[k - 1], o[k], v[k - 1], v[k], k >= 2,
                     k >= 2 ? o[k - 2] : 0.0, k >= 2 ? v[k - 2] : 0.0, ps->vc[k] ? 0.0 : dt);
  }
  kl_grind_acc_finish(&a, pb->gp, ps->vt[ns - 1], (int)ps->vsub, KL_OK, 1, 0, ps->vobj);
  device_sensor(pb, ps, o, v, ps->sF);
  double se = 0, mx = 0, si = 0;
  for (int k = 1; k < ns; ++k) {
    const double e = fabs(ps->sF[k] - F3[k]) / pb->gp[KL_GP_FREF], ei = (F3[k] - Fc[k]) / pb->gp[KL_GP_FREF];
    se += e * e;
    si += ei * ei;
    mx = fmax(mx, e);
  }
  ps->agree_rms = sqrt(se / (ns - 1));
  ps->agree_max = mx;
  ps->inertia_rms = sqrt(si / (ns - 1));
  ps->disagree = ps->agree_rms > pb->set.agree_tol;
}

static kelvin_status verify(run *r, const int *which, int nv)
{
  const kl_problem *pb = r->pb;
  const int ns = pb->ns;
  if (nv <= 0) return KELVIN_OK;
  double *ov = malloc((size_t)2 * nv * ns * sizeof *ov);
  kl_v3_out *out = calloc((size_t)nv, sizeof *out);
  kelvin_status st = KELVIN_OK;
  if (!ov || !out) {
    st = KELVIN_ERR_NOMEM;
    goto done;
  }
  for (int i = 0; i < nv; ++i) {
    kl_pass *ps = &r->res->pass[which[i]];
    /* through the run's basis, which kl_evaluate sets to NULL (the samples themselves) whatever the problem's */
    kl_basis_expand(r->basis, ns, r->nc, ps->x, ov + (size_t)i * ns, ov + (size_t)(nv + i) * ns);
    double **arr[] = {&ps->vF, &ps->vFavg, &ps->vFc, &ps->vFcavg, &ps->vt, &ps->vdev, &ps->sF};
    for (size_t j = 0; j < sizeof arr / sizeof arr[0]; ++j) {
      free(*arr[j]);
      *arr[j] = calloc((size_t)ns, sizeof(double));
      if (!*arr[j]) st = KELVIN_ERR_NOMEM;
    }
    free(ps->vc);
    ps->vc = calloc((size_t)ns, sizeof(int));
    if (st != KELVIN_OK || !ps->vc) {
      st = KELVIN_ERR_NOMEM;
      goto done;
    }
    out[i].F = ps->vF;
    out[i].Favg = ps->vFavg;
    out[i].Fc = ps->vFc;
    out[i].Fcavg = ps->vFcavg;
    out[i].t = ps->vt;
    out[i].dev = ps->vdev;
    out[i].contact = ps->vc;
  }
  if (!r->correcting &&
      say(r, "verification: %d pass%s in the 3-D engine (the tool a rigid %s on a 6-DoF holder following the waypoints, "
            "%s contact with the actual mesh, friction %g; wrist-sensor force scored)",
         nv, nv > 1 ? "es" : "", pb->set.tool_shape == KL_TOOL_DISC ? "disc" : "ball",
         pb->set.tool_shape == KL_TOOL_DISC ? "libccd" : "exact sphere-triangle", pb->set.friction)) {
    st = stopped(r, "verification");
    goto done;
  }
  {
    const char *labels[KL_MAXPASS];
    for (int i = 0; i < nv && i < KL_MAXPASS; ++i) labels[i] = r->res->pass[which[i]].label;
    kl_v3_watch w = {r->prog.fn, r->prog.ctx, r->prog.f0, r->prog.f1, labels, pb->set.verify_time_limit, 0};
    st = kl_verify3d_many(pb, nv, ov, ov + (size_t)nv * ns, out, &w, r->msg, r->cap);
    if (w.stopped) r->prog.stopped = 1;
    st = agree(r, st, "verification"); /* replicated: a stop or a failure on one rank ends all */
  }
  if (st != KELVIN_OK) goto done;
  for (int i = 0; i < nv; ++i) {
    kl_pass *ps = &r->res->pass[which[i]];
    ps->verified = 1;
    ps->vsub = out[i].nsub;
    ps->vseconds = out[i].seconds;
    score_verified(r, ps, ov + (size_t)i * ns, ov + (size_t)(nv + i) * ns);
  }
done:
  if (st == KELVIN_ERR_NOMEM) snprintf(r->msg, (size_t)r->cap, "out of memory in verification");
  free(ov);
  free(out);
  return st;
}

/* the winner: lowest verified objective among verified passes (device objective otherwise) */
static void rank(kl_opt_result *res)
{
  int best = -1;
  for (int i = 0; i < res->npass; ++i) {
    const kl_pass *p = &res->pass[i];
    if (i == res->naive) continue;
    const double J = p->verified ? p->vobj[KL_OBJ_J] : p->obj[KL_OBJ_J];
    const int bv = best >= 0 && res->pass[best].verified;
    if (best < 0 || (p->verified && !bv) ||
        (p->verified == bv && J < (bv ? res->pass[best].vobj[KL_OBJ_J] : res->pass[best].obj[KL_OBJ_J])))
      best = i;
  }
  res->best = best;
}

static kelvin_status setup(run *r, const kl_problem *pb, kl_host *h, const double *basis, int nc,
                           kelvin_progress_fn progress, void *ctx, kl_opt_result *res, char *msg, int cap)
{
  memset(r, 0, sizeof *r);
  r->pb = pb;
  r->h = h;
  r->basis = basis;
  r->nc = nc;
  r->res = res;
  r->prog = kl_progress_of(progress, ctx);
  kl_progress_defer(&r->prog, kl_host_shard(h)); /* a sharded run: stops acted on together */
  r->msg = msg;
  r->cap = cap;
  memset(res, 0, sizeof *res);
  res->naive = res->initial = res->best = -1;
  res->nominal = res->robust = -1;
  res->corr.from = res->corr.pass = -1;
  /* small batches from a GPU to the host's twin (host/rollout_batch.h); the rollout program is built by
   * the first batch that runs on the device, and says so through notice */
  const kl_rollout_def def = {pb->ns, nc, pb->gp, pb->geo, basis, KL_ROLLOUT_HOST_BELOW_AUTO, notice, r};
  const kelvin_status st = kl_rollout_create(h, &def, &r->ro);
  if (st != KELVIN_OK) snprintf(msg, (size_t)cap, "%s", kl_host_errmsg(h));
  else kl_rollout_stop_flag(r->ro, &r->prog.stopped);
  return st;
}

static void teardown(run *r)
{
  if (r->ro) { /* what the rollout sent from the device to the host, before it goes */
    r->res->host_rollouts = (long)kl_rollout_count_host(r->ro);
    r->res->host_below = kl_rollout_host_below(r->ro);
    r->res->local_rollouts = (long)kl_rollout_count_local(r->ro);
  }
  kl_rollout_destroy(r->ro);
  free(r->ctrl);
  free(r->obj);
  free(r->sobj);
  free(r->rwork);
}

//------------------------------------------------------------------------------------------------------
// correction with the 3-D engine in the loop (docs/design.md section 5, "Correction")


/* the largest |S_3d - F*| / F_ref over the samples k >= 1 of a verified pass */
static double verified_max(const kl_problem *pb, const kl_pass *ps)
{
  const double *S3 = scored3(pb, ps);
  double mx = 0;
  for (int k = 1; k < pb->ns; ++k) mx = fmax(mx, fabs(S3[k] - pb->ft[k]) / pb->gp[KL_GP_FREF]);
  return mx;
}

/* remove pass i from res (the passes after it move down; best, naive and initial follow) */
static void drop_pass(kl_opt_result *res, int i)
{
  free_pass(&res->pass[i]);
  memmove(&res->pass[i], &res->pass[i + 1], (size_t)(res->npass - i - 1) * sizeof res->pass[0]);
  res->npass--;
  if (res->best > i) res->best--;
  else if (res->best == i) res->best = -1;
}

/* why the correction leaves the verified error of pass ps where it is, in one line (into c->note) */
static void cannot_help(const kl_problem *pb, const kl_pass *ps, kl_correction *c)
{
  const int ns = pb->ns;
  int lost = 0, lo, hi;
  for (int k = 1; k < ns; ++k) lost += !ps->vc[k];
  kl_problem_at_bounds(pb, ps->x, 0, ns, &lo, &hi); /* the offsets */
  const int n = snprintf(c->note, sizeof c->note, "correction: the verified error is left at %.2f %% RMS (predicted %.2f %%): ",
                         100 * c->rms_after, 100 * c->pred_before);
  char *w = c->note + n;
  const size_t cap = sizeof c->note - (size_t)n;
  if (lost > 0)
    snprintf(w, cap, "the 3-D engine loses contact at %d of %d samples, where the device keeps it", lost, ns - 1);
  else if (lo + hi > 0)
    snprintf(w, cap, "the offset is at %s at %d samples: the target there lies beyond the offset bounds",
             hi >= lo ? "offset.max" : "offset.min", lo + hi);
  else
    snprintf(w, cap, "the verified objective stopped improving after %d iteration%s", c->iterations,
             c->iterations == 1 ? "" : "s");
}

/* the commanded normal acceleration at sample k (0 < k < ns - 1) of offsets o and speeds v, as lm.c's rows */

/* x + t d on the offsets of window W (n of them), within the offset bounds, and t halved (at most 10 times)
 * until no sample next to W commands more normal acceleration than offset.max_accel or than x did */
static void local_candidate(const kl_problem *pb, const double *x, const int *W, int n, const double *d, double t,
                            double *y)
{
  const int ns = pb->ns;
  for (int h = 0; h < 10; ++h, t *= 0.5) {
    memcpy(y, x, (size_t)2 * ns * sizeof *y);
    for (int i = 0; i < n; ++i) y[W[i]] = fmin(pb->hi[W[i]], fmax(pb->lo[W[i]], x[W[i]] + t * d[i]));
    int ok = 1;
    for (int k = W[0] - 1 > 1 ? W[0] - 1 : 1; k <= W[n - 1] + 1 && k + 1 < ns; ++k) {
      const double a = fabs(kl_lm_normal_accel(pb, y, y + ns, k, NULL));
      ok &= a <= fmax(pb->set.o_acc, fabs(kl_lm_normal_accel(pb, x, x + ns, k, NULL)));
    }
    if (ok) return;
  }
  memcpy(y, x, (size_t)2 * ns * sizeof *y);
}

/* The local step (docs/design.md section 5, "Correction"): where the verified pass cur still misses by more than
 * KL_LOCAL_THRESH of F_ref at a sample, the 3-D engine's own sensitivity there. The window W: the samples above
 * the threshold and KL_LOCAL_BEFORE before each (at most KL_LOCAL_MAXW, the nearest to the worst sample); each
 * offset of W moved by delta in one 3-D run (all in parallel) gives the engine's Jacobian of the scored reading
 * over W and KL_LOCAL_MARGIN samples after it; the damped Gauss-Newton step d = -(J'J + lambda diag J'J)^-1 J'e
 * and its half, within the offset bounds and the normal acceleration limit, run in the 3-D engine, and the
 * better is kept if its verified objective is lower than *Jbest. *cur: the pass, moved to the new one when kept. */
static kelvin_status local_step(run *r, int *cur, int from, double *Jbest)
{
  const kl_problem *pb = r->pb;
  kl_opt_result *res = r->res;
  kl_correction *c = &res->corr;
  const int ns = pb->ns, nc = r->nc;
  const double Fr = pb->gp[KL_GP_FREF], t1 = kl_now();
  const kl_pass *pc = &res->pass[*cur];
  const double *S3 = scored3(pb, pc);
  int kw = 1;
  for (int k = 1; k < ns; ++k)
    if (fabs(S3[k] - pb->ft[k]) > fabs(S3[kw] - pb->ft[kw])) kw = k;
  if (fabs(S3[kw] - pb->ft[kw]) <= KL_LOCAL_THRESH * Fr) return KELVIN_OK;
  /* the window: the samples nearest the worst of those above the threshold and the KL_LOCAL_BEFORE before each */
  int W[KL_LOCAL_MAXW], n = 0;
  for (int dist = 0; dist < ns && n < KL_LOCAL_MAXW; ++dist)
    for (int sg = -1; sg <= 1 && n < KL_LOCAL_MAXW; sg += 2) {
      const int j = kw + sg * dist;
      if (j < 0 || j >= ns || (dist == 0 && sg > 0)) continue;
      int in = 0;
      for (int k = j; k <= j + KL_LOCAL_BEFORE && k < ns && !in; ++k) in = k >= 1 && fabs(S3[k] - pb->ft[k]) > KL_LOCAL_THRESH * Fr;
      if (in) W[n++] = j;
    }
  for (int i = 1; i < n; ++i) /* ascending */
    for (int m = i; m > 0 && W[m - 1] > W[m]; --m) {
      const int t = W[m];
      W[m] = W[m - 1];
      W[m - 1] = t;
    }
  const int k0 = W[0] - 1 > 1 ? W[0] - 1 : 1, k1 = W[n - 1] + KL_LOCAL_MARGIN < ns - 1 ? W[n - 1] + KL_LOCAL_MARGIN : ns - 1;
  const int m = k1 - k0 + 1;
  c->local = 1;
  c->local_n = n;
  double *Jm = malloc((size_t)m * n * sizeof *Jm), *y = malloc((size_t)nc * sizeof *y), *del = malloc((size_t)n * sizeof *del);
  double *e = malloc((size_t)m * sizeof *e);
  kelvin_status st = KELVIN_OK;
  int idx[KL_LOCAL_MAXW];
  int added = 0;
  if (!Jm || !y || !del || !e) {
    st = KELVIN_ERR_NOMEM;
    snprintf(r->msg, (size_t)r->cap, "out of memory in the correction");
    goto done;
  }
  for (int k = k0; k <= k1; ++k) e[k - k0] = (S3[k] - pb->ft[k]) / Fr;
  if (say(r, "correction, local step: worst sample %d at %.2f %%; the 3-D engine's sensitivity to the offsets of "
             "samples %d-%d (%d runs)", kw, 100 * (S3[kw] - pb->ft[kw]) / Fr, W[0], W[n - 1], n)) {
    st = stopped(r, "correction");
    goto done;
  }
  for (int i = 0; i < n; ++i) {
    const int j = W[i];
    memcpy(y, res->pass[*cur].x, (size_t)nc * sizeof *y);
    del[i] = KL_LOCAL_FD * (pb->hi[j] - pb->lo[j]);
    if (y[j] + del[i] > pb->hi[j]) del[i] = -del[i]; /* stay inside the bounds */
    y[j] += del[i];
    char lab[32];
    snprintf(lab, sizeof lab, "local-fd-%d", j);
    if ((idx[i] = kl_opt_add(res, lab, y, nc)) < 0) goto room;
    added++;
  }
  if ((st = predict_all(r)) != KELVIN_OK) goto done;
  if ((st = verify(r, idx, n)) != KELVIN_OK) goto failed;
  c->runs += n;
  pc = &res->pass[*cur];
  S3 = scored3(pb, pc);
  for (int i = 0; i < n; ++i) {
    const double *Si = scored3(pb, &res->pass[idx[i]]);
    for (int k = k0; k <= k1; ++k) Jm[(k - k0) * n + i] = (Si[k] - S3[k]) / Fr / del[i];
  }
  for (; added > 0; --added) drop_pass(res, idx[added - 1]);
  {
    /* the damped normal equations (n <= KL_LOCAL_MAXW), solved by Gaussian elimination with partial pivoting */
    double A[KL_LOCAL_MAXW][KL_LOCAL_MAXW + 1], d[KL_LOCAL_MAXW];
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        double sab = 0;
        for (int k = 0; k < m; ++k) sab += Jm[k * n + a] * Jm[k * n + b];
        A[a][b] = sab;
      }
      double g = 0;
      for (int k = 0; k < m; ++k) g += Jm[k * n + a] * e[k];
      A[a][n] = -g;
    }
    double dmax = 0;
    for (int a = 0; a < n; ++a) dmax = fmax(dmax, A[a][a]);
    for (int a = 0; a < n; ++a) A[a][a] += KL_LOCAL_DAMP * A[a][a] + 1e-9 * dmax + 1e-300;
    for (int col = 0; col < n; ++col) {
      int p = col;
      for (int a = col + 1; a < n; ++a)
        if (fabs(A[a][col]) > fabs(A[p][col])) p = a;
      for (int b = 0; b <= n; ++b) {
        const double t = A[col][b];
        A[col][b] = A[p][b];
        A[p][b] = t;
      }
      for (int a = col + 1; a < n; ++a) {
        const double f = A[a][col] / A[col][col];
        for (int b = col; b <= n; ++b) A[a][b] -= f * A[col][b];
      }
    }
    for (int a = n - 1; a >= 0; --a) {
      double sum = A[a][n];
      for (int b = a + 1; b < n; ++b) sum -= A[a][b] * d[b];
      d[a] = sum / A[a][a];
      if (!isfinite(d[a])) d[a] = 0; /* (an offset the window's readings do not feel) */
    }
    const double *x = res->pass[*cur].x;
    int ic[2];
    local_candidate(pb, x, W, n, d, 1.0, y);
    if ((ic[0] = kl_opt_add(res, "local", y, nc)) < 0) goto room;
    local_candidate(pb, res->pass[*cur].x, W, n, d, 0.5, y);
    if ((ic[1] = kl_opt_add(res, "local-half", y, nc)) < 0) {
      drop_pass(res, ic[0]);
      goto room;
    }
    added = 0;
    if ((st = predict_all(r)) != KELVIN_OK) goto done;
    if ((st = verify(r, ic, 2)) != KELVIN_OK) {
      idx[0] = ic[0], idx[1] = ic[1], added = 2;
      goto failed;
    }
    c->runs += 2;
    const int half = res->pass[ic[1]].vobj[KL_OBJ_J] < res->pass[ic[0]].vobj[KL_OBJ_J];
    drop_pass(res, half ? ic[0] : ic[1]);
    const int w = ic[0];
    kl_pass *pw = &res->pass[w];
    const double Jw = pw->vobj[KL_OBJ_J];
    if (say(r, "correction, local step: verified %.3f %% RMS, max %.2f %% (%s step), objective %.5g -> %.5g, %.2f s",
            100 * pw->vobj[KL_OBJ_RMS], 100 * verified_max(pb, pw), half ? "half" : "full", *Jbest, Jw, kl_now() - t1)) {
      drop_pass(res, w);
      st = stopped(r, "correction");
      goto done;
    }
    if (!(Jw < *Jbest)) {
      drop_pass(res, w);
      goto done;
    }
    snprintf(pw->label, sizeof pw->label, "corrected");
    if (*cur != from) drop_pass(res, *cur); /* (cur < w: w moves down by one) */
    *cur = *cur != from ? w - 1 : w;
    *Jbest = Jw;
    c->iterations++;
    c->local = 2;
  }
  goto done;
room: /* no room for more passes: the step is not tried */
  for (; added > 0; --added) drop_pass(res, idx[added - 1]);
  goto done;
failed:
  for (; added > 0; --added) drop_pass(res, idx[added - 1]);
  if (st == KELVIN_ERR_STOPPED || st == KELVIN_ERR_NOMEM) goto done;
  snprintf(c->note, sizeof c->note, "correction: the 3-D run of a local-step candidate failed (%.200s); the best "
           "verified pass is kept", r->msg);
  st = KELVIN_OK;
done:
  free(Jm);
  free(y);
  free(del);
  free(e);
  return st;
}

/* The correction stage: iterative learning control in the device's target. The best verified pass u was
 * fitted to the target t (F* at first); its 3-D error S_3d(u) - F* moves that target, t' = t - (S_3d(u) - F*),
 * and the Levenberg-Marquardt refinement (the device's banded Jacobian, the same bounds, robot limits and
 * smoothness rows) fits the device to t' from u: u' = u - J_1d^+ (S_3d(u) - F*) solved on the device. Where
 * the device had reached t this is output space mapping (t' = F* - (S_3d(u) - S_1d(u))); where its limits
 * kept it off t (a sharp feature) the target keeps the rest of the push. The full step u' and the half step
 * (u + u')/2 (target (t + t')/2) run in the 3-D engine in parallel; the better is kept if its verified
 * objective is lower than the best seen, else the stage stops (as it does below a 1 % gain). Where the worst
 * sample is still above KL_LOCAL_THRESH then, the local step (local_step) tries the 3-D engine's own
 * sensitivity there under the same rule. The pass kept
 * and the start are then run once more at reference accuracy (KL_CORRECT_TOL): the lower
 * verified objective there is the best pass. maxit: the most iterations. */
static kelvin_status correct(run *r, int maxit)
{
  const kl_problem *pb = r->pb;
  const kl_settings *s = &pb->set;
  kl_opt_result *res = r->res;
  kl_correction *c = &res->corr;
  const int ns = pb->ns, nc = r->nc, from = res->best;
  const double t0 = kl_now(), tc0 = clock_of(r); /* tc0: for the time limit */
  kelvin_status st = KELVIN_OK;
  c->ran = 1;
  r->correcting = 1;
  c->from = from;
  c->pass = -1;
  const kl_pass *b0 = &res->pass[from];
  c->pred_before = b0->obj[KL_OBJ_RMS];
  c->rms_before = b0->vobj[KL_OBJ_RMS];
  c->max_before = verified_max(pb, b0);
  double *tc = malloc((size_t)ns * sizeof *tc), *ft = malloc((size_t)ns * sizeof *ft);
  double *xn = malloc((size_t)nc * sizeof *xn), *xh = malloc((size_t)nc * sizeof *xh);
  if (!tc || !ft || !xn || !xh) {
    snprintf(r->msg, (size_t)r->cap, "out of memory in the correction");
    st = KELVIN_ERR_NOMEM;
    goto done;
  }
  if (say(r, "correction: '%s' verified %.3f %% RMS, max %.2f %% (predicted %.3f %%); at most %d iteration%s with the "
             "3-D engine in the loop", b0->label, 100 * c->rms_before, 100 * c->max_before, 100 * c->pred_before, maxit,
          maxit == 1 ? "" : "s")) {
    st = stopped(r, "correction");
    goto done;
  }
  kl_problem q = *pb; /* the device's problem with the shifted target */
  q.ft = ft;
  memcpy(tc, pb->ft, (size_t)ns * sizeof *tc); /* the target the current pass was fitted to */
  int cur = from;
  long rolls = 0; /* the device's rollouts in the correction */
  double Jbest = b0->vobj[KL_OBJ_J];
  for (int it = 0; it < maxit; ++it) {
    const double left = s->maxtime - (clock_of(r) - tc0), t1 = kl_now();
    if (left <= 0) break;
    const kl_pass *pc = &res->pass[cur];
    const double *S3 = scored3(pb, pc);
    for (int k = 0; k < ns; ++k) ft[k] = tc[k] - (S3[k] - pb->ft[k]); /* the device's target moved by the 3-D error */
    memcpy(xn, pc->x, (size_t)nc * sizeof *xn);
    kl_lm_stats ls;
    memset(&ls, 0, sizeof ls);
    st = kl_lm_solve(&q, r->h, r->ro, xn, s->maxeval, left, &r->prog, &ls, r->msg, r->cap);
    r->evals += ls.rollouts;
    rolls += ls.rollouts;
    if (st == KELVIN_ERR_STOPPED) st = stopped(r, "correction");
    if (st != KELVIN_OK) goto done;
    for (int j = 0; j < nc; ++j) xh[j] = 0.5 * (pc->x[j] + xn[j]);
    char la[32], lb[32];
    snprintf(la, sizeof la, "corrected-%d", it + 1);
    snprintf(lb, sizeof lb, "corrected-%d-half", it + 1);
    const int ia = kl_opt_add(res, la, xn, nc), ib = ia >= 0 ? kl_opt_add(res, lb, xh, nc) : -1;
    if (ib < 0) {
      if (ia >= 0) drop_pass(res, ia);
      break; /* (no room for more passes) */
    }
    if ((st = predict_all(r)) != KELVIN_OK) goto done;
    const int which[2] = {ia, ib};
    if ((st = verify(r, which, 2)) != KELVIN_OK) {
      if (st == KELVIN_ERR_STOPPED || st == KELVIN_ERR_NOMEM) goto done;
      /* the engine failed on a candidate: the best verified pass so far stays */
      snprintf(c->note, sizeof c->note, "correction: the 3-D run of a candidate failed (%.200s); the best verified pass "
               "is kept", r->msg);
      drop_pass(res, ib);
      drop_pass(res, ia);
      st = KELVIN_OK;
      break;
    }
    c->runs += 2;
    const int half = res->pass[ib].vobj[KL_OBJ_J] < res->pass[ia].vobj[KL_OBJ_J];
    drop_pass(res, half ? ia : ib);
    const int w = ia; /* the better of the two, where the first was */
    const kl_pass *pw = &res->pass[w];
    const double Jw = pw->vobj[KL_OBJ_J];
    snprintf(res->pass[w].label, sizeof res->pass[w].label, "corrected");
    if (say(r, "correction %d: verified %.3f %% RMS, max %.2f %% (%s step; predicted %.3f %%), objective %.5g -> %.5g, "
               "%.2f s", it + 1, 100 * pw->vobj[KL_OBJ_RMS], 100 * verified_max(pb, pw), half ? "half" : "full",
            100 * pw->obj[KL_OBJ_RMS], Jbest, Jw, kl_now() - t1)) {
      st = stopped(r, "correction");
      goto done;
    }
    if (!(Jw < Jbest)) {
      drop_pass(res, w);
      break;
    }
    const double gain = (Jbest - Jw) / Jbest;
    if (cur != from) drop_pass(res, cur); /* (cur < w: w moves down by one) */
    cur = cur != from ? w - 1 : w;
    for (int k = 0; k < ns; ++k) tc[k] = half ? 0.5 * (tc[k] + ft[k]) : ft[k];
    Jbest = Jw;
    c->iterations++;
    if (gain < 0.01) break;
  }
  /* where the worst sample is still above KL_LOCAL_THRESH: the local step with the engine's own sensitivity */
  if (clock_of(r) - tc0 < s->maxtime && (st = local_step(r, &cur, from, &Jbest)) != KELVIN_OK) goto done;
  /* the check the correction never saw: the pass kept and the start at reference accuracy */
  {
    const kl_pass *ps = &res->pass[cur];
    c->rms_loop = ps->vobj[KL_OBJ_RMS];
    c->pred_after = ps->obj[KL_OBJ_RMS];
    const int ic = kl_opt_add(res, "start (reference)", res->pass[from].x, nc);
    if (ic < 0) {
      snprintf(r->msg, (size_t)r->cap, "out of memory in the correction");
      st = KELVIN_ERR_NOMEM;
      goto done;
    }
    if ((st = predict_all(r)) != KELVIN_OK) goto done;
    say(r, "correction: the check at reference accuracy (the 3-D engine with verify.hc_tol and verify.substep_fraction "
           "x %g)", KL_CORRECT_TOL);
    kl_problem ref = *pb; /* (after the line above: correct_test changes verify.time_limit at it) */
    ref.set.verify_hc_tol = fmax(1e-12, s->verify_hc_tol * KL_CORRECT_TOL);
    ref.set.verify_sf = fmax(1e-3, s->verify_sf * KL_CORRECT_TOL);
    ref.set.verify_time_limit = s->verify_time_limit / KL_CORRECT_TOL; /* (more sub-steps: more time) */
    r->pb = &ref;
    const int which[2] = {ic, cur};
    st = verify(r, which, cur != from ? 2 : 1);
    r->pb = pb;
    if (st != KELVIN_OK && st != KELVIN_ERR_STOPPED && st != KELVIN_ERR_NOMEM) {
      /* the engine failed at reference accuracy: the passes it ran lost their figures, the start stays */
      snprintf(c->note, sizeof c->note, "correction: the check at reference accuracy failed (%.200s); '%s' is kept as "
               "verified", r->msg, res->pass[from].label);
      drop_pass(res, ic);
      if (cur != from) drop_pass(res, cur);
      res->best = from;
      c->rms_after = c->rms_before;
      c->max_after = c->max_before;
      c->ref_before = c->ref_max_before = NAN;
      st = KELVIN_OK;
      goto done;
    }
    if (st != KELVIN_OK) goto done;
    c->runs += cur != from ? 2 : 1;
    const kl_pass *pr = &res->pass[ic], *pk = &res->pass[cur];
    c->ref_before = pr->vobj[KL_OBJ_RMS];
    c->ref_max_before = verified_max(pb, pr);
    const int keep = cur != from && pk->vobj[KL_OBJ_J] <= pr->vobj[KL_OBJ_J];
    c->rms_after = keep ? pk->vobj[KL_OBJ_RMS] : c->ref_before;
    c->max_after = keep ? verified_max(pb, pk) : c->ref_max_before;
    if (c->rms_after > c->pred_before + KL_CORRECT_GAP) cannot_help(pb, keep ? pk : pr, c);
    if (cur != from && !keep)
      snprintf(c->note, sizeof c->note, "correction: the corrected pass is worse at reference accuracy (%.3f %% RMS "
               "against %.3f %%): '%s' is kept", 100 * pk->vobj[KL_OBJ_RMS], 100 * c->ref_before, res->pass[from].label);
    drop_pass(res, ic);
    if (cur != from) {
      c->pass = cur;
      res->pass[cur].evals = (int)rolls;
      res->pass[cur].stop = "correction";
    }
    res->best = keep ? cur : from;
  }
  say(r, "correction: %d iteration%s, %d 3-D runs in %.2f s; '%s' verified %.3f %% RMS, max %.2f %% at reference accuracy "
         "(before: %.3f %%, max %.2f %%)", c->iterations, c->iterations == 1 ? "" : "s", c->runs, kl_now() - t0,
      res->pass[res->best].label, 100 * c->rms_after, 100 * c->max_after, 100 * c->ref_before, 100 * c->ref_max_before);
  if (c->note[0]) say(r, "%s", c->note);
done:
  r->correcting = 0;
  c->seconds = kl_now() - t0;
  free(tc);
  free(ft);
  free(xn);
  free(xh);
  return st;
}

/* whether the correction runs after the verification, and with how many iterations at most (0: not);
 * a note in res->corr when it is asked for and cannot */
static int correction_iterations(const kl_problem *pb, const kl_opt_result *res)
{
  const int n = kl_correct_parse(pb->set.correct);
  kl_correction *c = (kl_correction *)&res->corr;
  if (n == 0 || res->best < 0) return 0;
  const kl_pass *b = &res->pass[res->best];
  const int needed = b->verified && (b->disagree || b->vobj[KL_OBJ_RMS] - b->obj[KL_OBJ_RMS] > KL_CORRECT_GAP);
  if (n == KL_CORRECT_AUTO && !needed) return 0;
  if (!b->verified || pb->basis) {
    snprintf(c->note, sizeof c->note, "correction: %s; the pass is kept as verified",
             pb->basis ? "needs per-sample commands (optimiser.method lm)" : "the best pass is not verified (verify.count 0)");
    return 0;
  }
  return n == KL_CORRECT_AUTO ? 5 : n;
}

/* the robust stage (kl_optimise_robust): the robust objective of every pass so far, then NLopt from the best of them
 * by it on the robust objective; the pass "robust" */
static kelvin_status robust_stage(run *r, const kl_scen_set *sc, nlopt_algorithm alg, double *x)
{
  kl_opt_result *res = r->res;
  const kl_problem *pb = r->pb;
  const int nc = r->nc, P = res->npass, lm = pb->set.method == KL_METHOD_LM;
  kelvin_status st = kl_rollout_set_scenarios(r->ro, sc->S, sc->gp, sc->geo);
  if (st != KELVIN_OK) {
    snprintf(r->msg, (size_t)r->cap, "%s", kl_host_errmsg(r->h));
    return st;
  }
  double *xs = calloc((size_t)P * nc, sizeof *xs), *J = malloc((size_t)P * sizeof *J);
  if (!xs || !J) {
    free(xs);
    free(J);
    snprintf(r->msg, (size_t)r->cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  for (int p = 0; p < P; ++p) memcpy(xs + (size_t)p * nc, res->pass[p].x, (size_t)nc * sizeof *xs);
  const double t0 = kl_now();
  st = batch(r, (size_t)P, xs, J, NULL, NULL); /* the nominal optimum: the lowest nominal objective */
  res->nominal = -1;
  if (st == KELVIN_OK)
    for (int p = 0; p < P; ++p)
      if (p != res->naive && (res->nominal < 0 || J[p] < J[res->nominal])) res->nominal = p;
  r->sc = sc;
  if (st == KELVIN_OK) /* each pass's robust objective: method lm's own (optimiser/lm.h), nlopt's over the J_s */
    st = lm ? kl_lm_robust_value(pb, r->h, r->ro, sc, P, xs, J, r->msg, r->cap) : batch(r, (size_t)P, xs, J, NULL, NULL);
  int from = -1;
  if (st == KELVIN_OK)
    for (int p = 0; p < P; ++p) {
      res->pass[p].robj = J[p];
      if (p != res->naive && (from < 0 || J[p] < J[from])) from = p;
    }
  free(xs);
  free(J);
  if (st != KELVIN_OK) goto out;
  if (say(r, "robust refinement (%s) over %d scenarios from '%s', robust objective %.5g",
          pb->set.method == KL_METHOD_LM ? "Levenberg-Marquardt" : pb->set.algorithm, sc->S, res->pass[from].label,
          res->pass[from].robj)) {
    st = stopped(r, "robust refinement");
    goto out;
  }
  memcpy(x, res->pass[from].x, (size_t)nc * sizeof *x);
  int evals = 0;
  const char *stop = "";
  r->prog.f0 = 0.3, r->prog.f1 = 0.5;
  if (pb->set.method == KL_METHOD_LM) { /* the scenarios' residuals weighted by the statistic (optimiser/lm.h) */
    kl_lm_stats ls;
    memset(&ls, 0, sizeof ls);
    st = kl_lm_solve_robust(pb, r->h, r->ro, sc, x, pb->set.maxeval, pb->set.budget > 0 ? pb->set.budget : pb->set.maxtime,
                            &r->prog, &ls, r->msg, r->cap);
    r->evals += ls.rollouts;
    evals = (int)ls.rollouts;
    stop = ls.stop;
    if (st != KELVIN_OK) goto out;
  } else if ((st = refine(r, alg, pb->set.maxtime, x, &evals, &stop)) != KELVIN_OK) {
    goto out;
  }
  const int i = kl_opt_add(res, "robust", x, nc);
  if (i >= 0) {
    res->pass[i].evals = evals;
    res->pass[i].stop = stop;
    double Jr;
    st = lm ? kl_lm_robust_value(pb, r->h, r->ro, sc, 1, x, &Jr, r->msg, r->cap) : batch(r, 1, x, &Jr, NULL, NULL);
    if (st != KELVIN_OK) goto out;
    res->pass[i].robj = Jr;
  }
  res->robust = i;
  res->scenarios = sc->S;
  if (say(r, "robust refinement: %d rollouts in %.2f s, robust objective %.5g -> %.5g, %s", evals, kl_now() - t0,
          res->pass[from].robj, i >= 0 ? res->pass[i].robj : NAN, stop))
    st = stopped(r, "robust refinement");
out:
  r->sc = NULL;
  return st;
}

kelvin_status kl_optimise(const kl_problem *pb, kl_host *h, kelvin_progress_fn progress, void *ctx, kl_opt_result *res,
                          char *msg, int cap)
{
  return kl_optimise_robust(pb, h, NULL, progress, ctx, res, msg, cap);
}

kelvin_status kl_optimise_robust(const kl_problem *pb, kl_host *h, const kl_scen_set *sc, kelvin_progress_fn progress,
                                 void *ctx, kl_opt_result *res, char *msg, int cap)
{
  const double t0 = kl_now();
  run r;
  if (sc && sc->spec.kind == KL_ROBUST_NOMINAL) sc = NULL;
  if (sc && pb->set.method != KL_METHOD_NLOPT && sc->spec.kind == KL_ROBUST_CHANCE) {
    memset(res, 0, sizeof *res);
    res->naive = res->initial = res->best = res->nominal = res->robust = -1;
    snprintf(msg, (size_t)cap, "uncertainty.objective: chance needs optimiser.method nlopt (a band held with a "
                               "probability is not a sum of squares for Levenberg-Marquardt)");
    return KELVIN_ERR_CONFIG;
  }
  if (sc && (sc->S < 1 || !sc->gp || !sc->geo)) {
    snprintf(msg, (size_t)cap, "uncertainty.scenarios: a robust objective needs at least one scenario");
    return KELVIN_ERR_CONFIG;
  }
  kelvin_status st = setup(&r, pb, h, pb->basis, pb->nc, progress, ctx, res, msg, cap);
  if (st != KELVIN_OK) return st;
  const kl_settings *s = &pb->set;
  const int nc = pb->nc;
  double *best = NULL, *x = malloc((size_t)nc * sizeof *x);
  const nlopt_algorithm alg = nlopt_algorithm_from_string(s->algorithm);
  if ((int)alg < 0 && s->method == KL_METHOD_NLOPT) {
    snprintf(msg, (size_t)cap, "optimiser.algorithm: unknown NLopt algorithm '%s' (e.g. LN_BOBYQA, LN_SBPLX, LD_MMA, "
                               "LD_LBFGS, GN_CRS2_LM, GN_DIRECT_L)",
             s->algorithm);
    st = KELVIN_ERR_CONFIG;
    goto done;
  }
  if (!x) {
    st = KELVIN_ERR_NOMEM;
    goto done;
  }
  const int ncorr = kl_correct_parse(s->correct);
  if (ncorr == KL_CORRECT_BAD) {
    snprintf(msg, (size_t)cap, "optimiser.correct: must be auto, off or a whole number of iterations in [1, %d], got '%s'",
             KL_CORRECT_MAX, s->correct);
    st = KELVIN_ERR_CONFIG;
    goto done;
  }
  kl_problem_naive(pb, x);
  res->naive = kl_opt_add(res, "naive", x, nc);
  kl_problem_guess(pb, x);
  res->initial = kl_opt_add(res, "initial", x, nc);
  res->time.setup = kl_now() - t0;
  if (s->method == KL_METHOD_LM) { /* per-sample commands: Levenberg-Marquardt from the initial guess */
    const double t1 = kl_now();
    kl_lm_stats ls;
    memset(&ls, 0, sizeof ls); /* jac_out: none */
    r.prog.f0 = 0, r.prog.f1 = 0.5; /* (the verification the other half, roughly) */
    if (say(&r, "refinement (Levenberg-Marquardt, %d per-sample commands, banded Jacobian of %d colours each)", nc,
            kl_lm_band(pb))) {
      st = stopped(&r, "refinement");
      goto done;
    }
    st = kl_lm_solve(pb, h, r.ro, x, s->maxeval, s->budget > 0 ? s->budget : s->maxtime, &r.prog, &ls, msg, cap);
    if (st == KELVIN_ERR_STOPPED) st = stopped(&r, "refinement");
    r.evals += ls.rollouts;
    if (st != KELVIN_OK) goto done;
    const int i = kl_opt_add(res, "refined-1", x, nc);
    if (i >= 0) {
      res->pass[i].evals = (int)ls.rollouts;
      res->pass[i].stop = ls.stop;
    }
    say(&r, "refinement: %d steps, %ld rollouts in %.2f s (Jacobians %.2f s, steps %.2f s), band %d, %s", ls.iterations,
        ls.rollouts, kl_now() - t1, ls.t_jacobian, ls.t_steps, ls.band, ls.stop);
    if (sc && (st = robust_stage(&r, sc, alg, x)) != KELVIN_OK) goto done; /* after the nominal optimum */
    res->time.refinement = kl_now() - t1;
    goto predict;
  }
  /* 1. screening */
  const int global = s->algorithm[0] == 'G';
  const int keep = global ? 1 : s->keep;
  best = malloc((size_t)keep * nc * sizeof *best);
  if (!best) {
    st = KELVIN_ERR_NOMEM;
    goto done;
  }
  int nbest = 1;
  memcpy(best, x, (size_t)nc * sizeof *x);
  double t1 = kl_now();
  const double t_budget = clock_of(&r); /* (rank 0's clock with a shard: every rank gives each start the same) */
  if (s->screening > 0 && !global) {
    r.prog.f0 = 0, r.prog.f1 = 0.1;
    if ((st = screen(&r, x, best, keep, &nbest)) != KELVIN_OK) goto done;
    if (say(&r, "screening: %d candidates in %.2f s, best objective %.5g", res->screened, kl_now() - t1, res->screen_best)) {
      st = stopped(&r, "screening");
      goto done;
    }
  }
  res->time.screening = kl_now() - t1;
  /* 2. refinement */
  t1 = kl_now();
  for (int k = 0; k < nbest; ++k) {
    char label[32];
    snprintf(label, sizeof label, "refined-%d", k + 1);
    memcpy(x, best + (size_t)k * nc, (size_t)nc * sizeof *x);
    int evals = 0;
    const char *stop = "";
    const double t2 = kl_now();
    double maxtime = s->maxtime; /* with a budget, the starts share what is left of it */
    if (s->budget > 0) maxtime = fmin(maxtime, fmax(0.05, (s->budget - (clock_of(&r) - t_budget)) / (nbest - k)));
    r.prog.f0 = 0.1 + 0.4 * k / nbest, r.prog.f1 = 0.1 + 0.4 * (k + 1) / nbest;
    if ((st = refine(&r, alg, maxtime, x, &evals, &stop)) != KELVIN_OK) goto done;
    const int i = kl_opt_add(res, label, x, nc);
    if (i < 0) break;
    res->pass[i].evals = evals;
    res->pass[i].stop = stop;
    if (say(&r, "refinement %d/%d (%s): %d rollouts in %.2f s, %s", k + 1, nbest, s->algorithm, evals, kl_now() - t2,
            stop)) {
      st = stopped(&r, "refinement");
      goto done;
    }
  }
  if (sc && (st = robust_stage(&r, sc, alg, x)) != KELVIN_OK) goto done; /* after the nominal optimum */
  res->time.refinement = kl_now() - t1;
predict:
  /* 3. predictions of every pass, then the 3-D verification of the naive pass and the best `verify` */
  if ((st = predict_all(&r)) != KELVIN_OK) goto done;
  const double t3 = kl_now();
  {
    int which[KL_MAXPASS], nv = 0;
    scored ord[KL_MAXPASS];
    int nref = 0;
    for (int i = 0; i < res->npass; ++i)
      if (i != res->naive) ord[nref++] = (scored){res->pass[i].obj[KL_OBJ_J], (size_t)i};
    qsort(ord, (size_t)nref, sizeof *ord, by_J);
    if (s->verify > 0) which[nv++] = res->naive;
    for (int k = 0; k < nref && k < s->verify; ++k) which[nv++] = (int)ord[k].i;
    for (int k = 0; k < 2 && s->verify > 0; ++k) { /* a robust run: its nominal optimum and robust pass too */
      const int i = k ? res->robust : res->nominal;
      int in = i < 0;
      for (int j = 0; j < nv; ++j) in |= which[j] == i;
      if (!in) which[nv++] = i;
    }
    r.prog.f0 = 0.5, r.prog.f1 = ncorr != 0 && !pb->basis ? 0.8 : 1; /* (the correction the rest) */
    if ((st = verify(&r, which, nv)) != KELVIN_OK) goto done;
  }
  res->time.verification = kl_now() - t3;
  rank(res);
  if (res->robust >= 0) res->best = res->robust; /* a robust run hands over the robust pass */
  {
    const int maxit = res->robust >= 0 ? 0 : correction_iterations(pb, res); /* (a robust pass is not fitted to the
                                                                                 nominal part afterwards) */
    if (maxit > 0) {
      r.prog.f0 = 0.8, r.prog.f1 = 1;
      st = correct(&r, maxit);
      res->time.correction = res->corr.seconds;
      if (st != KELVIN_OK) goto done;
    }
  }
  /* with a shard, a stop recorded after the last batch ends every rank, as it would have ended one */
  if ((st = agree(&r, st, "optimisation")) != KELVIN_OK) goto done;
  r.prog.f0 = 1; /* the last call (a stop asked here has nothing left to stop) */
  say(&r, "done: best pass '%s' in %.2f s", res->best >= 0 ? res->pass[res->best].label : "", kl_now() - t0);
done:
  res->evaluations = r.evals;
  res->time.total = kl_now() - t0;
  free(best);
  free(x);
  teardown(&r);
  return st;
}

kelvin_status kl_evaluate(const kl_problem *pb, kl_host *h, const double *o, const double *v, kelvin_progress_fn progress,
                          void *ctx, kl_opt_result *res, char *msg, int cap)
{
  if (kl_problem_check_pass(pb, o, v, msg, (size_t)cap) != KELVIN_OK) return KELVIN_ERR_ARG;
  const double t0 = kl_now();
  const int ns = pb->ns, nc = 2 * ns;
  double *x = malloc((size_t)nc * sizeof *x);
  kelvin_status st = KELVIN_ERR_NOMEM;
  run r;
  memset(&r, 0, sizeof r);
  if (!x) {
    snprintf(msg, (size_t)cap, "out of memory");
    goto out;
  }
  /* the samples are their own control points (no basis) */
  if ((st = setup(&r, pb, h, NULL, nc, progress, ctx, res, msg, cap)) != KELVIN_OK) goto out;
  for (int k = 0; k < ns; ++k) {
    x[k] = pb->naive_o;
    x[ns + k] = pb->set.v_init;
  }
  res->naive = kl_opt_add(res, "naive", x, nc);
  memcpy(x, o, (size_t)ns * sizeof *x);
  memcpy(x + ns, v, (size_t)ns * sizeof *x);
  res->initial = kl_opt_add(res, "user", x, nc);
  if ((st = predict_all(&r)) != KELVIN_OK) goto out;
  const double t1 = kl_now();
  const int which[2] = {res->naive, res->initial};
  r.prog.f0 = 0.1, r.prog.f1 = 1;
  if ((st = verify(&r, which, 2)) != KELVIN_OK) goto out;
  res->time.verification = kl_now() - t1;
  res->best = res->initial;
  if ((st = agree(&r, st, "evaluation")) != KELVIN_OK) goto out;
  r.prog.f0 = 1; /* the last call */
  say(&r, "done: pass '%s' evaluated in %.2f s", res->pass[res->best].label, kl_now() - t0);
out:
  res->evaluations = r.evals;
  res->time.total = kl_now() - t0;
  if (r.ro || r.ctrl) teardown(&r);
  free(x);
  return st;
}

kelvin_status kl_verify(const kl_problem *pb, const double *basis, kl_opt_result *res, const int *which, int nv,
                        kelvin_progress_fn progress, void *ctx, char *msg, int cap)
{
  run r;
  memset(&r, 0, sizeof r);
  r.prog = kl_progress_of(progress, ctx);
  r.pb = pb;
  r.basis = basis;
  r.nc = basis ? pb->nc : 2 * pb->ns;
  r.res = res;
  r.msg = msg;
  r.cap = cap;
  int todo[KL_MAXPASS], n = 0;
  for (int i = 0; i < nv; ++i) {
    if (which[i] < 0 || which[i] >= res->npass || res->pass[which[i]].nx != r.nc || !res->pass[which[i]].so) {
      snprintf(msg, (size_t)cap, "verify: pass %d is not a predicted pass of this problem (%d passes)", which[i],
               res->npass);
      return KELVIN_ERR_ARG;
    }
    if (!res->pass[which[i]].verified && n < KL_MAXPASS) todo[n++] = which[i];
  }
  return verify(&r, todo, n);
}

kelvin_status kl_scenarios_predict(const kl_problem *pb, kl_host *h, const double *basis, const kl_opt_result *res,
                                   const int *which, int nw, const kl_scen_set *sc, double *out, double *F, char *msg,
                                   int cap)
{
  const int nc = basis ? pb->nc : 2 * pb->ns, ns = pb->ns, S = sc ? sc->S : 0;
  if (!sc || S < 1 || nw < 1) {
    snprintf(msg, (size_t)cap, "scenarios: no scenarios or no passes to predict");
    return KELVIN_ERR_ARG;
  }
  for (int w = 0; w < nw; ++w)
    if (which[w] < 0 || which[w] >= res->npass || res->pass[which[w]].nx != nc) {
      snprintf(msg, (size_t)cap, "scenarios: pass %d is not a pass of this problem (%d passes)", which[w], res->npass);
      return KELVIN_ERR_ARG;
    }
  const size_t Q = (size_t)nw * S;
  kl_rollout *ro = NULL;
  const kl_rollout_def def = {ns, nc, pb->gp, pb->geo, basis, KL_ROLLOUT_HOST_BELOW_AUTO, NULL, NULL};
  double *ctrl = malloc((size_t)nc * nw * sizeof *ctrl), *obj = malloc(KL_OBJ_N * Q * sizeof *obj);
  double *so = malloc(KL_SO_N * (size_t)ns * Q * sizeof *so), *one = malloc(KL_SO_N * (size_t)ns * sizeof *one);
  double *o = malloc(2 * (size_t)ns * sizeof *o), *m = malloc(2 * (size_t)ns * sizeof *m), *f = malloc((size_t)ns * sizeof *f);
  kelvin_status st = KELVIN_ERR_NOMEM;
  if (!ctrl || !obj || !so || !one || !o || !m || !f) {
    snprintf(msg, (size_t)cap, "out of memory for %zu rollouts' outputs", Q);
    goto done;
  }
  for (int w = 0; w < nw; ++w)
    for (int j = 0; j < nc; ++j) ctrl[(size_t)j * nw + w] = res->pass[which[w]].x[j];
  if ((st = kl_rollout_create(h, &def, &ro)) != KELVIN_OK || (st = kl_rollout_set_scenarios(ro, S, sc->gp, sc->geo)) ||
      (st = kl_rollout_eval_scenarios(ro, (size_t)nw, ctrl, obj, so)) != KELVIN_OK) {
    snprintf(msg, (size_t)cap, "%s", kl_host_errmsg(h));
    goto done;
  }
  for (int w = 0; w < nw; ++w) {
    if (!basis) { /* the pass's commands */
      memcpy(o, res->pass[which[w]].x, 2 * (size_t)ns * sizeof *o);
    } else {
      kl_basis_expand(basis, ns, nc, res->pass[which[w]].x, o, o + ns);
    }
    for (int s = 0; s < S; ++s) {
      const size_t q = (size_t)w * S + s;
      const double *gps = sc->gp + (size_t)s * KL_GP_N, *geo = sc->geo + (size_t)s * ns * KL_GG_N;
      const double loss = obj[KL_OBJ_LOSS * Q + q], hi = obj[KL_OBJ_FMAX * Q + q], lo = obj[KL_OBJ_FMIN * Q + q];
      out[(0 * (size_t)nw + w) * S + s] = obj[KL_OBJ_RMS * Q + q];
      out[(1 * (size_t)nw + w) * S + s] = hi;
      out[(2 * (size_t)nw + w) * S + s] = lo;
      out[(3 * (size_t)nw + w) * S + s] = loss;
      out[(4 * (size_t)nw + w) * S + s] = kl_robust_violation(&sc->spec, hi, lo, loss) <= 0.0;
      if (!F) continue;
      /* the scored measure as the scenario's own mass, weight and holder make it (kl_problem_measure) */
      kl_problem q1 = *pb;
      for (int k = 0; k < ns; ++k) {
        m[k] = geo[(size_t)k * KL_GG_N + KL_GG_M];
        m[ns + k] = geo[(size_t)k * KL_GG_N + KL_GG_FG];
      }
      q1.meff = m;
      q1.fg = m + ns;
      q1.set.holder_K = gps[KL_GP_KH];
      q1.set.holder_D = gps[KL_GP_DH];
      for (size_t t = 0; t < KL_SO_N; ++t)
        for (int k = 0; k < ns; ++k) one[t * ns + k] = so[(t * ns + k) * Q + q];
      kl_problem_measure(&q1, pb->set.measure, one, o, o + ns, f);
      memcpy(F + q * ns, f, (size_t)ns * sizeof *f);
    }
  }
  st = KELVIN_OK;
done:
  kl_rollout_destroy(ro);
  free(ctrl);
  free(obj);
  free(so);
  free(one);
  free(o);
  free(m);
  free(f);
  return st;
}
