/* optimiser/robust_check.c: the out-of-sample check of passes on the device and in the 3-D engine (robust_check.h). */
#include "optimiser/robust_check.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/shard.h"
#include "optimiser/scenario.h"
#include "optimiser/verify3d.h"

kl_robust_spec kl_check_spec(const kl_problem *pb)
{
  const kl_settings *s = &pb->set;
  double lo = s->unc_fmin, ft = HUGE_VAL;
  for (int k = 0; k < pb->ns; ++k) ft = fmin(ft, pb->ft[k]);
  if (isnan(lo)) lo = 0.5 * ft;
  const kl_robust_spec sp = {s->unc_objective, s->unc_k, s->unc_alpha, s->unc_prob, lo,
                             isnan(s->unc_fmax) ? s->max_F : s->unc_fmax, pb->gp[KL_GP_FREF]};
  return sp;
}

void kl_check_free(kl_check *c)
{
  if (!c) return;
  for (int i = 0; i < 2; ++i) {
    free(c->dev[i]);
    free(c->F[i]);
  }
  free(c->draw);
  memset(c, 0, sizeof *c);
}

/* the 3-D run of the pass with commands o, v on the scenario's problem q: its values into val (KL_CHECK_N, stride
 * vs) and its scored force into F (ns); 0, or nonzero with msg on a failure */
static int run3d(const kl_problem *q, const kl_robust_spec *sp, const double *o, const double *v, double *val,
                 size_t vs, double *F, char *msg, int cap)
{
  const int ns = q->ns;
  double *buf = malloc(5 * (size_t)ns * sizeof *buf);
  int *con = malloc((size_t)ns * sizeof *con);
  if (!buf || !con) {
    free(buf);
    free(con);
    snprintf(msg, (size_t)cap, "out of memory");
    return 1;
  }
  kl_v3_out out;
  memset(&out, 0, sizeof out);
  out.F = buf, out.Favg = buf + ns, out.Fc = buf + 2 * ns, out.Fcavg = buf + 3 * ns, out.t = buf + 4 * ns;
  out.contact = con;
  const kelvin_status st = kl_verify3d_run(q, o, v, &out, msg, cap);
  if (st == KELVIN_OK) {
    const int avg = q->set.measure & KL_MEASURE_AVG_BIT;
    const double *Fs = (q->set.measure & KL_MEASURE_SENSOR_BIT) ? (avg ? out.Favg : out.F) : (avg ? out.Fcavg : out.Fc);
    kl_grind_acc a;
    kl_grind_acc_init(&a);
    for (int k = 1; k < ns; ++k)
      kl_grind_acc_add(&a, q->gp, Fs[k], q->ft[k], q->s[k] - q->s[k - 1], o[k - 1], o[k], v[k - 1], v[k], k >= 2,
                       k >= 2 ? o[k - 2] : 0.0, k >= 2 ? v[k - 2] : 0.0, con[k] ? 0.0 : out.t[k] - out.t[k - 1]);
    double obj[KL_OBJ_N];
    kl_grind_acc_finish(&a, q->gp, out.t[ns - 1], (int)out.nsub, KL_OK, 1, 0, obj);
    val[KL_CHECK_RMS * vs] = obj[KL_OBJ_RMS];
    val[KL_CHECK_PEAK * vs] = obj[KL_OBJ_FMAX];
    val[KL_CHECK_LEAST * vs] = obj[KL_OBJ_FMIN];
    val[KL_CHECK_LOSS * vs] = obj[KL_OBJ_LOSS];
    val[KL_CHECK_BAND * vs] = kl_robust_violation(sp, obj[KL_OBJ_FMAX], obj[KL_OBJ_FMIN], obj[KL_OBJ_LOSS]) <= 0.0;
    memcpy(F, Fs, (size_t)ns * sizeof *F);
  }
  free(buf);
  free(con);
  return st != KELVIN_OK;
}

/* the 3-D results of every rank's share onto every rank (docs/design.md section 11): the values and forces by
 * scenario, the failures' count summed and the message of the lowest failing scenario; first is this rank's lowest
 * failing scenario (S if none) */
static kelvin_status gather3d(const kelvin_shard *sh, kl_check *out, int first, char *msg, int cap)
{
  const int S = out->S, nw = out->nw, ns = out->ns, p = sh->size;
  kelvin_status st = kl_shard_gather_cols(sh, out->dev[1], (size_t)KL_CHECK_N * nw, (size_t)S, sizeof(double), -1, msg,
                                          (size_t)cap);
  if (st == KELVIN_OK)
    st = kl_shard_gather_cols(sh, out->F[1], (size_t)nw, (size_t)S, (size_t)ns * sizeof(double), -1, msg, (size_t)cap);
  if (st != KELVIN_OK) return st;
  /* one column per rank: its count, its lowest failing scenario and that failure's message */
  typedef struct fail_rec {
    int count, first;
    char msg[sizeof out->fail_msg];
  } fail_rec;
  fail_rec *f = calloc((size_t)p, sizeof *f);
  if (!f) {
    snprintf(msg, (size_t)cap, "rank %d: out of memory gathering the check's failures", sh->rank);
    return KELVIN_ERR_NOMEM;
  }
  f[sh->rank].count = out->failed3d;
  f[sh->rank].first = first;
  memcpy(f[sh->rank].msg, out->fail_msg, sizeof out->fail_msg);
  st = kl_shard_gather_cols(sh, f, 1, (size_t)p, sizeof *f, -1, msg, (size_t)cap);
  if (st == KELVIN_OK) {
    int total = 0, best = S;
    for (int r = 0; r < p; ++r) {
      total += f[r].count;
      if (f[r].first < best) {
        best = f[r].first;
        memcpy(out->fail_msg, f[r].msg, sizeof out->fail_msg);
      }
    }
    out->failed3d = total;
  }
  free(f);
  return st;
}

kelvin_status kl_check_run(const kl_problem *pb, const kl_problem_inputs *in, kl_host *h, const double *basis,
                           const kl_opt_result *res, const int *which, int nw, int S, int with_3d, kl_progress *prog,
                           kl_check *out, char *msg, int cap)
{
  const int ns = pb->ns, nc = basis ? pb->nc : 2 * ns;
  memset(out, 0, sizeof *out);
  if (nw < 1 || nw > KL_CHECK_MAXW || S < 1) {
    snprintf(msg, (size_t)cap, "check: %d passes (1 to %d) on %d scenarios (at least 1)", nw, KL_CHECK_MAXW, S);
    return KELVIN_ERR_ARG;
  }
  out->S = S, out->nw = nw, out->ns = ns, out->with3d = with_3d != 0;
  out->spec = kl_check_spec(pb);
  memcpy(out->pass, which, (size_t)nw * sizeof *which);
  const size_t nv = (size_t)KL_CHECK_N * nw * S, nF = (size_t)nw * S * ns;
  double *gp = malloc((size_t)S * KL_GP_N * sizeof *gp), *geo = malloc((size_t)S * ns * KL_GG_N * sizeof *geo);
  double *cmd = malloc(2 * (size_t)nw * ns * sizeof *cmd);
  out->draw = malloc((size_t)S * KL_UNC_N * sizeof *out->draw);
  kelvin_status st = KELVIN_ERR_NOMEM;
  for (int i = 0; i < 2; ++i) {
    out->dev[i] = malloc(nv * sizeof *out->dev[i]);
    out->F[i] = malloc(nF * sizeof *out->F[i]);
    if (!out->dev[i] || !out->F[i]) goto fail_nomem;
  }
  if (!gp || !geo || !cmd || !out->draw) goto fail_nomem;
  for (int w = 0; w < nw; ++w) { /* each pass's commands per sample */
    const double *x = res->pass[which[w]].x;
    double *o = cmd + 2 * (size_t)w * ns;
    if (basis)
      kl_basis_expand(basis, ns, nc, x, o, o + ns);
    else
      memcpy(o, x, 2 * (size_t)ns * sizeof *o);
  }
  /* 1. the fresh set, packed for the device */
  /* with a shard (docs/design.md section 11) each rank packs every scenario (the device's rollouts share them out),
   * runs its share of the 3-D runs, and agrees on each step's status before any rank goes on */
  const kelvin_shard *sh = kl_host_shard(h);
  double t0 = kl_now();
  if ((st = kl_scenarios_draw(&pb->set, 1, S, out->draw, msg, cap)) != KELVIN_OK) goto fail;
  if (kl_progress_say(prog, 0, 0.0, "out-of-sample check: %d fresh scenarios (uncertainty.verify_seed %lu), %d passes",
                      S, pb->set.unc_verify_seed, nw)) {
    st = KELVIN_ERR_STOPPED;
    snprintf(msg, (size_t)cap, "check: stopped by the caller");
  } else {
    st = kl_scenarios_pack(pb, in, S, out->draw, gp, geo, prog, msg, cap);
  }
  if ((st = kl_progress_agree(prog, sh, st, "check", msg, cap)) != KELVIN_OK) goto fail;
  const kl_scen_set sc = {S, gp, geo, out->spec};
  if ((st = kl_scenarios_predict(pb, h, basis, res, which, nw, &sc, out->dev[0], out->F[0], msg, cap)) != KELVIN_OK)
    goto fail;
  out->seconds[0] = kl_now() - t0;
  if (!with_3d) {
    for (size_t i = 0; i < nv; ++i) out->dev[1][i] = NAN;
    for (size_t i = 0; i < nF; ++i) out->F[1][i] = NAN;
    goto done;
  }
  /* 2. every scenario's own part in the 3-D engine, OpenMP across the scenarios */
  t0 = kl_now();
  st = KELVIN_OK;
  if (kl_progress_say(prog, 0, 0.0, "out-of-sample check: %d passes x %d scenarios in the 3-D engine", nw, S)) {
    st = KELVIN_ERR_STOPPED;
    snprintf(msg, (size_t)cap, "check: stopped by the caller");
  }
  if ((st = kl_progress_agree(prog, sh, st, "check", msg, cap)) != KELVIN_OK) goto fail;
  size_t slo, shi;
  kl_shard_range(sh, (size_t)S, &slo, &shi);
  const int s0 = (int)slo, s1 = (int)shi;
  int done = 0, stop = 0, failed = 0, first = S; /* first: the lowest scenario that failed (its message is kept) */
  kelvin_status bad = KELVIN_OK; /* a failure that is not the engine's (memory): ends the check */
  char badmsg[256] = "";
#pragma omp parallel for schedule(dynamic, 1)
  for (int s = s0; s < s1; ++s) {
    int halt;
#pragma omp atomic read
    halt = stop;
    if (halt) continue;
    char m[256] = "";
    kl_problem *q = NULL;
    const kelvin_status bs = kl_scenario_problem(pb, in, out->draw + (size_t)s * KL_UNC_N, &q, m, (int)sizeof m);
    for (int w = 0; w < nw; ++w) {
      double *val = out->dev[1] + (size_t)w * S + s, *F = out->F[1] + ((size_t)w * S + s) * ns;
      int f = bs != KELVIN_OK;
      if (!f)
        f = run3d(q, &out->spec, cmd + 2 * (size_t)w * ns, cmd + (2 * (size_t)w + 1) * ns, val, (size_t)nw * S, F, m,
                  (int)sizeof m);
      if (f) {
        for (int t = 0; t < KL_CHECK_N; ++t) val[(size_t)t * nw * S] = t == KL_CHECK_BAND ? 0.0 : NAN;
        for (int k = 0; k < ns; ++k) F[k] = NAN;
#pragma omp critical(kl_check_fail)
        {
          ++failed;
          if (s < first) { /* the same message for any thread count and any number of ranks */
            first = s;
            snprintf(out->fail_msg, sizeof out->fail_msg, "scenario %d, pass %d: %s", s, w, m);
          }
          if (bs == KELVIN_ERR_NOMEM && bad == KELVIN_OK) {
            bad = bs;
            snprintf(badmsg, sizeof badmsg, "%s", m);
          }
        }
      }
    }
    kl_problem_free(q);
    int d;
#pragma omp atomic capture
    d = ++done;
    /* a stop asked here ends this rank's share at once (deferred with a shard: prog->stopped), agreed below */
    if (omp_get_thread_num() == 0 &&
        (kl_progress_say(prog, 1, (double)d / (s1 - s0), "3-D check: %d/%d scenarios, %.0f s", d, s1 - s0,
                         kl_now() - t0) ||
         (prog && prog->stopped))) {
#pragma omp atomic write
      stop = 1;
    }
  }
  out->failed3d = failed;
  out->local3d = nw * (s1 - s0);
  if (stop) {
    st = KELVIN_ERR_STOPPED;
    snprintf(msg, (size_t)cap, "check: stopped by the caller");
  } else if (bad != KELVIN_OK) {
    st = bad;
    snprintf(msg, (size_t)cap, "check: %s", badmsg);
  }
  if ((st = kl_progress_agree(prog, sh, st, "check", msg, cap)) != KELVIN_OK) goto fail;
  if (kl_shard_on(sh) && (st = gather3d(sh, out, first, msg, cap)) != KELVIN_OK) goto fail;
  out->seconds[1] = kl_now() - t0;
done:
  free(gp);
  free(geo);
  free(cmd);
  return KELVIN_OK;
fail_nomem:
  snprintf(msg, (size_t)cap, "out of memory for the check of %d passes on %d scenarios", nw, S);
  st = KELVIN_ERR_NOMEM;
fail:
  free(gp);
  free(geo);
  free(cmd);
  kl_check_free(out);
  return st;
}
