/* api/batch.c: devices and impact batches of the public API (include/kelvin/batch.h) over host/ (kl_host,
 * kl_impact_batch). The grinding rollouts, which need a grinding problem, are api/rollout.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_impl.h"
#include "host/impact_batch.h"

kelvin_status kl_api_fail(char *msg, kelvin_status st, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, KL_API_MSG, fmt, ap);
  va_end(ap);
  return st;
}

//------------------------------------------------------------------------------------------------------
// devices

kelvin_status kelvin_device_create(kelvin_device **out)
{
  if (!out) return KELVIN_ERR_ARG;
  *out = calloc(1, sizeof **out);
  if (!*out) return KELVIN_ERR_NOMEM;
  if (kl_host_create(&(*out)->h) != KELVIN_OK) {
    free(*out);
    *out = NULL;
    return KELVIN_ERR_NOMEM;
  }
  return KELVIN_OK;
}

kelvin_status kelvin_device_open(kelvin_device *dev, const char *spec, int flags)
{
  if (!dev) return KELVIN_ERR_ARG;
  if (flags & ~KELVIN_DEVICE_CPU) return kl_api_fail(dev->msg, KELVIN_ERR_ARG, "kelvin_device_open: unknown flags 0x%x", flags);
  kl_host_opts o;
  kl_host_opts_default(&o);
  o.device = spec;
  o.device_origin = spec ? "kelvin_device_open" : NULL;
  o.cpu = (flags & KELVIN_DEVICE_CPU) != 0;
  dev->open = 0;
  dev->msg[0] = '\0';
  const kelvin_status st = kl_host_open(dev->h, &o);
  if (st != KELVIN_OK) return kl_api_fail(dev->msg, st, "%s", kl_host_errmsg(dev->h));
  dev->open = 1;
  return KELVIN_OK;
}

int kelvin_device_is_opencl(const kelvin_device *dev) { return dev && dev->open && kl_host_is_opencl(dev->h); }

const char *kelvin_device_describe(const kelvin_device *dev) { return dev && dev->open ? kl_host_notice(dev->h) : ""; }

const char *kelvin_device_errmsg(const kelvin_device *dev) { return dev ? dev->msg : ""; }

void kelvin_device_free(kelvin_device *dev)
{
  if (!dev) return;
  kl_host_destroy(dev->h);
  free(dev);
}

//------------------------------------------------------------------------------------------------------
// impact batches

struct kelvin_impact_batch {
  kl_impact_batch *b;
  char msg[KL_API_MSG];
};

kelvin_status kelvin_impact_batch_create(size_t n, int nsamples, kelvin_impact_batch **out)
{
  if (!out) return KELVIN_ERR_ARG;
  *out = NULL;
  if (n == 0 || nsamples < 0) return KELVIN_ERR_ARG;
  kelvin_impact_batch *b = calloc(1, sizeof *b);
  if (!b) return KELVIN_ERR_NOMEM;
  const kelvin_status st = kl_impact_batch_create(n, nsamples, &b->b);
  if (st != KELVIN_OK) {
    free(b);
    return st;
  }
  *out = b;
  return KELVIN_OK;
}

size_t kelvin_impact_batch_size(const kelvin_impact_batch *b) { return b ? b->b->P : 0; }

kelvin_status kelvin_impact_batch_set(kelvin_impact_batch *b, size_t i, const kelvin_impact_in *in)
{
  if (!b) return KELVIN_ERR_ARG;
  if (!in || i >= b->b->P)
    return kl_api_fail(b->msg, KELVIN_ERR_ARG, "kelvin_impact_batch_set: scenario %zu of %zu%s", i, b->b->P,
                       in ? "" : ", input NULL");
  const kl_impact_in k = {in->m, in->K, in->n, in->cr, in->v0, in->fe, (int)in->model, (int)in->law, (int)in->rule};
  kl_impact_batch_set(b->b, i, k);
  return KELVIN_OK;
}

kelvin_status kelvin_impact_batch_run(kelvin_impact_batch *b, kelvin_device *dev)
{
  if (!b) return KELVIN_ERR_ARG;
  b->msg[0] = '\0';
  if (!dev) {
    kl_impact_run_serial(b->b, 0, b->b->P);
    return KELVIN_OK;
  }
  if (!dev->open) return kl_api_fail(b->msg, KELVIN_ERR_ARG, "kelvin_impact_batch_run: the device is not open");
  const kelvin_status st = kl_impact_run(dev->h, b->b, NULL, NULL);
  if (st != KELVIN_OK) return kl_api_fail(b->msg, st, "%s", kl_host_errmsg(dev->h));
  return KELVIN_OK;
}

kelvin_status kelvin_impact_batch_get(const kelvin_impact_batch *b, size_t i, kelvin_impact_out *out)
{
  if (out) memset(out, 0, sizeof *out);
  if (!b || !out || i >= b->b->P) return KELVIN_ERR_ARG;
  const size_t P = b->b->P;
  const double *y = b->b->y;
  out->dmax = y[KL_OUT_DMAX * P + i];
  out->tmax = y[KL_OUT_TMAX * P + i];
  out->fpeak = y[KL_OUT_FPEAK * P + i];
  out->tc = y[KL_OUT_TC * P + i];
  out->cr_eff = y[KL_OUT_CREFF * P + i];
  out->ediss = y[KL_OUT_EDISS * P + i];
  out->damp = y[KL_OUT_DAMP * P + i];
  out->flags = b->b->status[i];
  return KELVIN_OK;
}

kelvin_status kelvin_impact_batch_sample(const kelvin_impact_batch *b, size_t i, int j, double *s, double *d, double *f)
{
  if (s) *s = 0;
  if (d) *d = 0;
  if (f) *f = 0;
  if (!b || i >= b->b->P || j < 0 || j >= b->b->M) return KELVIN_ERR_ARG;
  const size_t P = b->b->P, M = (size_t)b->b->M;
  const double *smp = b->b->smp;
  if (s) *s = smp[((size_t)KL_SMP_S * M + (size_t)j) * P + i];
  if (d) *d = smp[((size_t)KL_SMP_D * M + (size_t)j) * P + i];
  if (f) *f = smp[((size_t)KL_SMP_F * M + (size_t)j) * P + i];
  return KELVIN_OK;
}

const char *kelvin_impact_batch_errmsg(const kelvin_impact_batch *b) { return b ? b->msg : ""; }

void kelvin_impact_batch_free(kelvin_impact_batch *b)
{
  if (!b) return;
  kl_impact_batch_destroy(b->b);
  free(b);
}
