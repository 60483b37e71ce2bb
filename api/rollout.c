/* api/rollout.c: grinding rollouts of the public API (include/kelvin/batch.h, "Grinding rollouts"): the
 * candidate passes of a kelvin_grind problem (api/grind_impl.h) on a device, over host/ (kl_rollout). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/grind_impl.h"
#include "host/rollout_batch.h"

_Static_assert(KELVIN_OBJ_J == KL_OBJ_J && KELVIN_OBJ_RMS == KL_OBJ_RMS && KELVIN_OBJ_LOSS == KL_OBJ_LOSS &&
                 KELVIN_OBJ_OVER == KL_OBJ_OVER && KELVIN_OBJ_TIME == KL_OBJ_TIME && KELVIN_OBJ_ROUGH == KL_OBJ_ROUGH &&
                 KELVIN_OBJ_ACC == KL_OBJ_ACC && KELVIN_OBJ_T == KL_OBJ_T && KELVIN_OBJ_NSUB == KL_OBJ_NSUB &&
                 KELVIN_OBJ_STATUS == KL_OBJ_STATUS && KELVIN_OBJ_FMAX == KL_OBJ_FMAX &&
                 KELVIN_OBJ_FMIN == KL_OBJ_FMIN && KELVIN_OBJ_N == KL_OBJ_N,
               "KELVIN_OBJ_* mirror KL_OBJ_* (kernels/kl_rollout.h)");
_Static_assert(KELVIN_SO_F == KL_SO_F && KELVIN_SO_FAVG == KL_SO_FAVG && KELVIN_SO_T == KL_SO_T &&
                 KELVIN_SO_Z == KL_SO_Z && KELVIN_SO_D == KL_SO_D && KELVIN_SO_C == KL_SO_C && KELVIN_SO_ZD == KL_SO_ZD &&
                 KELVIN_SO_N == KL_SO_N,
               "KELVIN_SO_* mirror KL_SO_* (kernels/kl_rollout.h)");

struct kelvin_rollout {
  kl_rollout *r;
  kl_host *h;
  int ns, nc;
  char msg[KL_API_MSG];
};

kelvin_status kelvin_rollout_create(kelvin_grind *g, kelvin_device *dev, kelvin_rollout **out)
{
  if (!out) return KELVIN_ERR_ARG;
  *out = NULL;
  if (!g) return KELVIN_ERR_ARG;
  if (!dev || !dev->open) return kl_api_fail(g->msg, KELVIN_ERR_ARG, "kelvin_rollout_create: the device is NULL or not open");
  kelvin_status st = kelvin_grind_prepare(g);
  if (st != KELVIN_OK) return st;
  kelvin_rollout *r = calloc(1, sizeof *r);
  if (!r) return kl_api_fail(g->msg, KELVIN_ERR_NOMEM, "out of memory");
  const kl_problem *pb = g->pb;
  const kl_rollout_def def = {pb->ns, pb->nc, pb->gp, pb->geo, pb->basis, 0, NULL, NULL}; /* every batch on dev */
  if ((st = kl_rollout_create(dev->h, &def, &r->r)) != KELVIN_OK) {
    free(r);
    return kl_api_fail(g->msg, st, "%s", kl_host_errmsg(dev->h));
  }
  r->h = dev->h;
  r->ns = pb->ns;
  r->nc = pb->nc;
  *out = r;
  return KELVIN_OK;
}

int kelvin_rollout_nsamples(const kelvin_rollout *r) { return r ? r->ns : 0; }
int kelvin_rollout_ncontrol(const kelvin_rollout *r) { return r ? r->nc : 0; }

kelvin_status kelvin_rollout_eval(kelvin_rollout *r, size_t P, const double *ctrl, double *obj, double *samples)
{
  if (!r) return KELVIN_ERR_ARG;
  r->msg[0] = '\0';
  if (P == 0 || !ctrl || !obj)
    return kl_api_fail(r->msg, KELVIN_ERR_ARG, "kelvin_rollout_eval: needs P >= 1 (got %zu), ctrl and obj", P);
  const kelvin_status st = kl_rollout_eval(r->r, P, ctrl, obj, samples);
  if (st != KELVIN_OK) return kl_api_fail(r->msg, st, "%s", kl_host_errmsg(r->h));
  return KELVIN_OK;
}

const char *kelvin_rollout_errmsg(const kelvin_rollout *r) { return r ? r->msg : ""; }

void kelvin_rollout_free(kelvin_rollout *r)
{
  if (!r) return;
  kl_rollout_destroy(r->r);
  free(r);
}
