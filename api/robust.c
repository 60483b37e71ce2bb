/* api/robust.c: robust passes and the out-of-sample check (include/kelvin/robust.h) over the grinding handle. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/grind_impl.h"
#include "kelvin/robust.h"
#include "optimiser/robust_check.h"
#include "optimiser/scenario.h"

int kl_grind_is_robust(const kelvin_grind *g)
{
  return g->set.unc_objective != KL_ROBUST_NOMINAL && g->set.unc_scenarios > 0;
}

void kl_grind_check_drop(kelvin_grind *g)
{
  if (!g->check) return;
  kl_check_free(g->check);
  free(g->check);
  g->check = NULL;
}

/* the check of passes which (nw) of the results, replacing an earlier one */
static kelvin_status check(kelvin_grind *g, kelvin_device *dev, const int *which, int nw, int S, int with_3d)
{
  kl_grind_check_drop(g);
  kl_check *c = calloc(1, sizeof *c);
  if (!c) return kl_api_fail(g->msg, KELVIN_ERR_NOMEM, "out of memory");
  const kl_problem_inputs in = kl_grind_inputs(g);
  kl_progress prog = kl_progress_of(g->progress, g->ctx);
  kl_progress_defer(&prog, kl_host_shard(dev->h)); /* a sharded run: a stop on one rank ends all at the end */
  kelvin_status st = kl_check_run(g->pb, &in, dev->h, g->identity ? NULL : g->pb->basis, g->res, which, nw, S,
                                  with_3d, &prog, c, g->msg, KL_API_MSG);
  st = kl_progress_agree(&prog, kl_host_shard(dev->h), st, "out-of-sample check", g->msg, KL_API_MSG);
  if (st != KELVIN_OK) {
    free(c);
    if (st == KELVIN_ERR_CONFIG) kl_grind_locate(g);
    return st;
  }
  g->check = c;
  return KELVIN_OK;
}

kelvin_status kl_grind_optimise_robust(kelvin_grind *g, kelvin_device *dev)
{
  const kl_problem *pb = g->pb;
  const int S = g->set.unc_scenarios, ns = pb->ns;
  double *draw = malloc((size_t)S * KL_UNC_N * sizeof *draw), *gp = malloc((size_t)S * KL_GP_N * sizeof *gp);
  double *geo = malloc((size_t)S * ns * KL_GG_N * sizeof *geo);
  kelvin_status st = KELVIN_ERR_NOMEM;
  if (!draw || !gp || !geo) {
    kl_api_fail(g->msg, st, "out of memory for %d scenarios", S);
    goto done;
  }
  const kl_problem_inputs in = kl_grind_inputs(g);
  kl_progress prog = kl_progress_of(g->progress, g->ctx);
  kl_progress_defer(&prog, kl_host_shard(dev->h)); /* drawn alike on every rank: a stop ends all below */
  if (kl_progress_say(&prog, 0, 0.0, "scenarios: %d drawn (uncertainty.seed %lu) over %d uncertain parameters", S,
                      g->set.unc_seed, kl_unc_active(&g->set))) {
    st = kl_api_fail(g->msg, KELVIN_ERR_STOPPED, "scenarios: stopped by the caller");
    goto done;
  }
  if ((st = kl_scenarios_draw(&pb->set, 0, S, draw, g->msg, KL_API_MSG)) != KELVIN_OK ||
      (st = kl_scenarios_pack(pb, &in, S, draw, gp, geo, &prog, g->msg, KL_API_MSG)) != KELVIN_OK) {
    if (st == KELVIN_ERR_CONFIG) kl_grind_locate(g);
    goto done;
  }
  if ((st = kl_progress_agree(&prog, kl_host_shard(dev->h), KELVIN_OK, "scenarios", g->msg, KL_API_MSG)) != KELVIN_OK)
    goto done;
  const kl_scen_set sc = {S, gp, geo, kl_check_spec(pb)};
  if ((st = kl_optimise_robust(pb, dev->h, &sc, g->progress, g->ctx, g->res, g->msg, KL_API_MSG)) != KELVIN_OK) goto done;
  if (g->set.unc_verify > 0) {
    const int which[2] = {g->res->nominal, g->res->robust};
    st = check(g, dev, which, 2, g->set.unc_verify, 1);
  }
done:
  free(draw);
  free(gp);
  free(geo);
  return st;
}

int kelvin_grind_robust_pass(const kelvin_grind *g, int *nominal, int *robust)
{
  const int on = g && g->res && g->res->robust >= 0;
  if (nominal) *nominal = on ? g->res->nominal : -1;
  if (robust) *robust = on ? g->res->robust : -1;
  return on;
}

double kelvin_grind_pass_robust(const kelvin_grind *g, int pass)
{
  return g && g->res && pass >= 0 && pass < g->res->npass ? g->res->pass[pass].robj : NAN;
}

kelvin_status kelvin_grind_check(kelvin_grind *g, kelvin_device *dev, int scenarios, int with_3d)
{
  if (!g) return KELVIN_ERR_ARG;
  g->msg[0] = '\0';
  if (!dev || !dev->open) return kl_api_fail(g->msg, KELVIN_ERR_ARG, "kelvin_grind_check: the device is NULL or not open");
  if (!g->res || g->res->best < 0)
    return kl_api_fail(g->msg, KELVIN_ERR_ARG, "kelvin_grind_check: no results to check (optimise or evaluate first)");
  if (scenarios < 0) return kl_api_fail(g->msg, KELVIN_ERR_ARG, "kelvin_grind_check: scenarios %d < 0", scenarios);
  const int S = scenarios ? scenarios : g->set.unc_verify;
  if (S < 1)
    return kl_api_fail(g->msg, KELVIN_ERR_ARG, "kelvin_grind_check: no scenarios (uncertainty.verify_scenarios is 0)");
  int which[2], nw = 0;
  if (g->res->robust >= 0) {
    which[nw++] = g->res->nominal;
    which[nw++] = g->res->robust;
  } else {
    which[nw++] = g->res->best;
  }
  return check(g, dev, which, nw, S, with_3d);
}

int kelvin_grind_check_passes(const kelvin_grind *g, int *passes)
{
  if (!g || !g->check) return 0;
  if (passes)
    for (int w = 0; w < g->check->nw; ++w) passes[w] = g->check->pass[w];
  return g->check->nw;
}

int kelvin_grind_check_scenarios(const kelvin_grind *g) { return g && g->check ? g->check->S : 0; }

int kelvin_grind_check_failed(const kelvin_grind *g, const char **why)
{
  if (why) *why = g && g->check ? g->check->fail_msg : "";
  return g && g->check ? g->check->failed3d : 0;
}

/* the index among the check's passes of result pass `pass`, or -1 */
static int slot(const kelvin_grind *g, int pass, int source)
{
  if (!g || !g->check || (source != 0 && source != 1) || (source == 1 && !g->check->with3d)) return -1;
  for (int w = 0; w < g->check->nw; ++w)
    if (g->check->pass[w] == pass) return w;
  return -1;
}

int kelvin_grind_check_local(const kelvin_grind *g) { return g && g->check && g->check->with3d ? g->check->local3d : 0; }

double kelvin_grind_check_seconds(const kelvin_grind *g, int source)
{
  if (!g || !g->check || (source != 0 && source != 1) || (source == 1 && !g->check->with3d)) return 0.0;
  return g->check->seconds[source];
}

kelvin_status kelvin_grind_check_values(const kelvin_grind *g, int pass, int source, kelvin_check_metric m, double *out)
{
  const int w = slot(g, pass, source);
  if (w < 0 || !out || (int)m < 0 || (int)m >= KL_CHECK_N) return KELVIN_ERR_ARG;
  const kl_check *c = g->check;
  memcpy(out, c->dev[source] + ((size_t)m * c->nw + w) * c->S, (size_t)c->S * sizeof *out);
  return KELVIN_OK;
}

kelvin_status kelvin_grind_check_force(const kelvin_grind *g, int pass, int source, double *out)
{
  const int w = slot(g, pass, source);
  if (w < 0 || !out) return KELVIN_ERR_ARG;
  const kl_check *c = g->check;
  memcpy(out, c->F[source] + (size_t)w * c->S * c->ns, (size_t)c->S * c->ns * sizeof *out);
  return KELVIN_OK;
}

kelvin_status kelvin_grind_check_summary(const kelvin_grind *g, int pass, int source, kelvin_check_metric m,
                                         kelvin_check_summary *out)
{
  const int w = slot(g, pass, source);
  if (w < 0 || !out || (int)m < 0 || (int)m >= KL_CHECK_N) return KELVIN_ERR_ARG;
  const kl_check *c = g->check;
  double *v = malloc(2 * (size_t)c->S * sizeof *v);
  if (!v) return KELVIN_ERR_NOMEM;
  int n = 0;
  const double *src = c->dev[source] + ((size_t)m * c->nw + w) * c->S;
  for (int s = 0; s < c->S; ++s)
    if (!isnan(src[s])) v[n++] = src[s];
  const kl_robust_summary r = kl_robust_summarise(v, n, v + c->S);
  free(v);
  *out = (kelvin_check_summary){r.mean, r.p50, r.p95, r.p95_lo, r.p95_hi, r.worst, n};
  return n > 0 ? KELVIN_OK : KELVIN_ERR_ARG;
}

kelvin_status kelvin_grind_check_band(const kelvin_grind *g, int pass, int source, double *share, double *lo,
                                      double *hi, double band[2])
{
  const int w = slot(g, pass, source);
  if (w < 0) return KELVIN_ERR_ARG;
  const kl_check *c = g->check;
  const double *in = c->dev[source] + ((size_t)KL_CHECK_BAND * c->nw + w) * c->S;
  int n = 0;
  for (int s = 0; s < c->S; ++s) n += in[s] > 0.5;
  double p, l, h;
  kl_robust_wilson(n, c->S, &p, &l, &h);
  if (share) *share = p;
  if (lo) *lo = l;
  if (hi) *hi = h;
  if (band) band[0] = c->spec.fmin, band[1] = c->spec.fmax;
  return KELVIN_OK;
}
