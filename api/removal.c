/* api/removal.c: material removal and passes planned to a target surface through the public API
 * (include/kelvin/removal.h) over optimiser/plan.h (the planner, on the device model) and the 3-D engine's
 * run of a plan's passes in sequence on the evolving surface (docs/design.md section 9). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/grind_impl.h"
#include "core/clock.h"
#include "kelvin/removal.h"

void kl_rm_results_free(kl_rm_results *rm)
{
  if (!rm) return;
  for (int i = 0; i < KL_RM_PLANS; ++i) {
    kl_plan_free(&rm->plan[i][0]);
    kl_plan_free(&rm->plan[i][1]);
  }
  free(rm);
}

/* the removal results of g, fresh (the earlier ones dropped) */
static kl_rm_results *fresh(kelvin_grind *g)
{
  kl_rm_results_free(g->rm);
  g->rm = calloc(1, sizeof *g->rm);
  return g->rm;
}

/* Run the plans' passes in the 3-D engine in sequence on their evolving surfaces (docs/design.md section 9.3) into
 * their verified copies. */
static kelvin_status verify_plans(kelvin_grind *g, int first)
{
  kl_rm_results *rm = g->rm;
  const kl_plan *dev[KL_RM_PLANS];
  kl_plan *out[KL_RM_PLANS];
  for (int i = first; i < rm->n && i < KL_RM_PLANS; ++i) {
    dev[i - first] = &rm->plan[i][0];
    out[i - first] = &rm->plan[i][1];
  }
  const kelvin_status st = kl_plan_verify(g->pb, rm->n - first, dev, out, g->progress, g->ctx, g->msg, KL_API_MSG);
  for (int i = first; i < rm->n; ++i) rm->verified[i] = st == KELVIN_OK;
  return st;
}

/* the removal section's law, or KELVIN_ERR_CONFIG with the message of the key it lacks */
static kelvin_status law_of(kelvin_grind *g)
{
  kl_removal_law law;
  const kelvin_status st = kl_removal_law_of(g->pb, &law, g->msg, KL_API_MSG);
  if (st != KELVIN_OK) kl_grind_locate(g);
  return st;
}

kelvin_status kelvin_grind_plan(kelvin_grind *g, kelvin_device *dev)
{
  if (!g) return KELVIN_ERR_ARG;
  kelvin_status st = kl_grind_begin(g, dev, "kelvin_grind_plan");
  if (st != KELVIN_OK) return st;
  if ((st = law_of(g)) != KELVIN_OK || !fresh(g)) {
    if (st == KELVIN_OK) st = kl_api_fail(g->msg, KELVIN_ERR_NOMEM, "out of memory");
    goto fail;
  }
  const double t0 = kl_now();
  const kl_problem *pb = g->pb;
  kl_rm_results *rm = g->rm;
  rm->n = 2;
  kl_plan *pl = &rm->plan[0][0];
  /* the planned plan in closed loop: each pass planned on the surface the 3-D engine left (docs/design.md 9.4) */
  st = kl_plan_run_closed(pb, dev->h, g->progress, g->ctx, pl, &rm->plan[0][1], g->msg, KL_API_MSG);
  if (st != KELVIN_OK) goto fail;
  rm->verified[0] = 1;
  if (!pl->reached) {
    kl_plan_limits lim;
    kl_plan_limits_of(pb, &lim);
    const kl_plan *ej = &rm->plan[0][1]; /* what the 3-D engine left (closed loop) */
    const kl_surface_stats *s = ej->npass ? &ej->pass[ej->npass - 1].st : &ej->st0;
    if (pl->npass < lim.max_passes) /* nothing left the samples can aim at */
      st = kl_api_fail(g->msg, KELVIN_ERR_CONFIG,
                       "removal.tolerance: the track's residual stays at %.3g um above the target after %d passes, "
                       "between the path samples, over removal.tolerance %.3g um: more path.samples would see it",
                       1e6 * s->residual_max, pl->npass, 1e6 * lim.tol);
    else
      st = kl_api_fail(g->msg, KELVIN_ERR_CONFIG,
                       "removal.max_passes: the target is not reached in %d passes: the 3-D engine's track residual is still %.3g um "
                       "(RMS %.3g um) above the target, over removal.tolerance %.3g um (from %.3g um before the first "
                       "pass; gouge %.3g um)",
                       pl->npass, 1e6 * s->residual_max, 1e6 * s->residual_rms, 1e6 * lim.tol,
                       1e6 * pl->st0.residual_max, 1e6 * s->gouge);
    goto fail;
  }
  /* the naive plan open-loop: predicted on the device's own surface, then run in the 3-D engine */
  if ((st = kl_plan_run(pb, dev->h, 1, g->progress, g->ctx, &rm->plan[1][0], g->msg, KL_API_MSG)) != KELVIN_OK) goto fail;
  const double t1 = kl_now();
  if ((st = verify_plans(g, 1)) != KELVIN_OK) goto fail;
  /* every plan of a run lies on one grid (kelvin_grind_removal_grid_size gives it for all; a caller sizes its
   * buffers by it): a plan made on a differently derived grid is an internal fault, not a result */
  for (int i = 0; i < rm->n; ++i)
    for (int v = 0; v < 2; ++v) {
      const kl_surface *a = &rm->plan[0][0].sf, *b = &rm->plan[i][v].sf;
      if (b->nu != a->nu || b->nw != a->nw || b->du != a->du || b->dw != a->dw) {
        st = kl_api_fail(g->msg, KELVIN_ERR_NUMERIC,
                         "removal: the %s plan's %s grid (%d x %d cells) is not the planned plan's (%d x %d): an internal "
                         "fault, please report it", rm->plan[i][0].label, v ? "3-D" : "device", b->nu, b->nw, a->nu, a->nw);
        goto fail;
      }
    }
  /* the run's figures (kelvin_grind_run_value, kelvin_grind_rollouts): the planning of both plans, the 3-D runs
   * (the closed loop's engine passes counted as verification) */
  const double te = pl->seconds_engine;
  g->res->time.refinement = t1 - t0 - te;
  g->res->time.verification = kl_now() - t1 + te;
  g->res->time.total = kl_now() - t0;
  g->res->evaluations = rm->plan[0][0].rollouts + rm->plan[1][0].rollouts;
  return KELVIN_OK;
fail:
  kl_rm_results_free(g->rm);
  g->rm = NULL;
  if (st == KELVIN_ERR_CONFIG) kl_grind_locate(g);
  return st;
}

kelvin_status kl_grind_removal_user(kelvin_grind *g, kelvin_device *dev, const double *offset, const double *speed)
{
  if (!g->pb || !(g->pb->set.preston > 0)) return KELVIN_OK;
  kelvin_status st = law_of(g);
  if (st != KELVIN_OK) return st;
  if (!fresh(g)) return kl_api_fail(g->msg, KELVIN_ERR_NOMEM, "out of memory");
  g->rm->n = 1;
  if ((st = kl_plan_user(g->pb, dev->h, offset, speed, &g->rm->plan[0][0], g->msg, KL_API_MSG)) == KELVIN_OK)
    st = verify_plans(g, 0);
  if (st != KELVIN_OK) {
    kl_rm_results_free(g->rm);
    g->rm = NULL;
  }
  return st;
}

//------------------------------------------------------------------------------------------------------
// results

int kelvin_grind_removal_nplans(const kelvin_grind *g) { return g && g->rm ? g->rm->n : 0; }

/* plan i as the device predicted it (verified 0) or the 3-D engine ran it (1); NULL for a bad index or a plan
 * not verified */
static const kl_plan *plan_of(const kelvin_grind *g, int i, int verified)
{
  if (!g || !g->rm || i < 0 || i >= g->rm->n || verified < 0 || verified > 1) return NULL;
  if (verified && !g->rm->verified[i]) return NULL;
  return &g->rm->plan[i][verified];
}

const char *kelvin_grind_removal_label(const kelvin_grind *g, int plan)
{
  const kl_plan *p = plan_of(g, plan, 0);
  return p ? p->label : NULL;
}

int kelvin_grind_removal_npass(const kelvin_grind *g, int plan)
{
  const kl_plan *p = plan_of(g, plan, 0);
  return p ? p->npass : -1;
}

double kelvin_grind_removal_value(const kelvin_grind *g, int plan, int pass, int verified, kelvin_removal_value what)
{
  const kl_plan *pl = plan_of(g, plan, verified);
  if (!pl || pass < -1 || pass >= pl->npass) return NAN;
  if (pass >= 0) {
    const kl_plan_pass *p = &pl->pass[pass];
    switch (what) {
    case KELVIN_REMOVAL_RESIDUAL_RMS: return p->st.residual_rms;
    case KELVIN_REMOVAL_RESIDUAL_MAX: return p->st.residual_max;
    case KELVIN_REMOVAL_GOUGE: return p->st.gouge;
    case KELVIN_REMOVAL_VOLUME: return p->volume;
    case KELVIN_REMOVAL_VOLUME_LAW: return p->volume_law;
    case KELVIN_REMOVAL_TIME: return p->time;
    case KELVIN_REMOVAL_FORCE_MAX: return p->force_max;
    case KELVIN_REMOVAL_REMOVED_MAX: return p->st.removed_max;
    case KELVIN_REMOVAL_TOOL_RADIUS: return p->tool_R;
    }
    return NAN;
  }
  /* the plan as a whole: the surface its last pass leaves, the sums and the largest force */
  const kl_surface_stats *s = pl->npass ? &pl->pass[pl->npass - 1].st : &pl->st0;
  double vol = 0, law = 0, t = 0, fm = 0;
  for (int i = 0; i < pl->npass; ++i) {
    vol += pl->pass[i].volume;
    law += pl->pass[i].volume_law;
    t += pl->pass[i].time;
    fm = fmax(fm, pl->pass[i].force_max);
  }
  switch (what) {
  case KELVIN_REMOVAL_RESIDUAL_RMS: return s->residual_rms;
  case KELVIN_REMOVAL_RESIDUAL_MAX: return s->residual_max;
  case KELVIN_REMOVAL_GOUGE: return s->gouge;
  case KELVIN_REMOVAL_VOLUME: return vol;
  case KELVIN_REMOVAL_VOLUME_LAW: return law;
  case KELVIN_REMOVAL_TIME: return t;
  case KELVIN_REMOVAL_FORCE_MAX: return fm;
  case KELVIN_REMOVAL_REMOVED_MAX: return s->removed_max;
  case KELVIN_REMOVAL_TOOL_RADIUS: return pl->npass ? pl->pass[pl->npass - 1].tool_R : pl->sf.tool_R;
  }
  return NAN;
}

kelvin_status kelvin_grind_removal_series(const kelvin_grind *g, int plan, int pass, int verified,
                                          kelvin_removal_series what, double *out)
{
  const kl_plan *pl = plan_of(g, plan, verified);
  if (!pl || !out || pass < -1 || pass >= pl->npass) return KELVIN_ERR_ARG;
  const kl_problem *pb = g->pb;
  const size_t n = (size_t)pb->ns * sizeof *out;
  if (what == KELVIN_REMOVAL_S) {
    memcpy(out, pb->s, n);
    return KELVIN_OK;
  }
  if (pass < 0) { /* the plan: the surface before its first pass and after its last */
    if (what == KELVIN_REMOVAL_BEFORE) memcpy(out, pl->before0, n);
    else if (what == KELVIN_REMOVAL_AFTER) memcpy(out, pl->npass ? pl->pass[pl->npass - 1].after : pl->before0, n);
    else return KELVIN_ERR_ARG;
    return KELVIN_OK;
  }
  const kl_plan_pass *p = &pl->pass[pass];
  const double *a = what == KELVIN_REMOVAL_OFFSET ? p->o
                    : what == KELVIN_REMOVAL_SPEED ? p->v
                    : what == KELVIN_REMOVAL_FORCE ? p->F
                    : what == KELVIN_REMOVAL_BEFORE ? p->before
                    : what == KELVIN_REMOVAL_AFTER ? p->after
                                                   : NULL;
  if (!a) return KELVIN_ERR_ARG;
  memcpy(out, a, n);
  return KELVIN_OK;
}

kelvin_status kelvin_grind_removal_grid_size(const kelvin_grind *g, int *nu, int *nw)
{
  if (nu) *nu = 0;
  if (nw) *nw = 0;
  const kl_plan *pl = plan_of(g, 0, 0);
  if (!pl) return KELVIN_ERR_ARG;
  if (nu) *nu = pl->sf.nu;
  if (nw) *nw = pl->sf.nw;
  return KELVIN_OK;
}

kelvin_status kelvin_grind_removal_grid_spacing(const kelvin_grind *g, double *du, double *dw)
{
  if (du) *du = NAN;
  if (dw) *dw = NAN;
  const kl_plan *pl = plan_of(g, 0, 0);
  if (!pl) return KELVIN_ERR_ARG;
  if (du) *du = pl->sf.du;
  if (dw) *dw = pl->sf.dw;
  return KELVIN_OK;
}

kelvin_status kelvin_grind_removal_grid(const kelvin_grind *g, int plan, int pass, int verified, double *x, double *y,
                                        double *removed, double *error)
{
  const kl_plan *pl = plan_of(g, plan, verified);
  if (!pl || pass < -1 || pass >= pl->npass) return KELVIN_ERR_ARG;
  const kl_problem *pb = g->pb;
  const kl_surface *sf = &pl->sf;
  const int nu = sf->nu, nw = sf->nw, ns = pb->ns;
  const size_t nc = (size_t)nu * (size_t)nw;
  if (x || y) /* the cell centres on the CAD: the path point at u, w along the binormal n x t at the nearest sample */
    for (int i = 0, k = 0; i < nu; ++i) {
      const double u = i * sf->du;
      while (k + 2 < ns && pb->s[k + 1] < u) ++k;
      const double f = fmin(1.0, fmax(0.0, (u - pb->s[k]) / (pb->s[k + 1] - pb->s[k])));
      const int kn = f < 0.5 ? k : k + 1;
      const double *n = &pb->nrm[3 * kn], *t = &pb->tan[3 * kn];
      const double b[2] = {n[1] * t[2] - n[2] * t[1], n[2] * t[0] - n[0] * t[2]};
      for (int j = 0; j < nw; ++j) {
        const double w = (j - (nw - 1) / 2) * sf->dw;
        const size_t c = (size_t)i * nw + j;
        if (x) x[c] = pb->p[3 * k] + f * (pb->p[3 * (k + 1)] - pb->p[3 * k]) + w * b[0];
        if (y) y[c] = pb->p[3 * k + 1] + f * (pb->p[3 * (k + 1) + 1] - pb->p[3 * k + 1]) + w * b[1];
      }
    }
  if (removed) {
    if (pass < 0)
      memcpy(removed, sf->removed, nc * sizeof *removed);
    else
      for (size_t c = 0; c < nc; ++c) removed[c] = pl->pass[pass].removed[c];
  }
  if (error) kl_plan_error_after(pl, pass < 0 ? pl->npass - 1 : pass, 1, pb, error);
  return KELVIN_OK;
}
