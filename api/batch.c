/* api/batch.c: devices, impact batches and sweeps of the public API (include/kelvin/batch.h) over host/
 * (kl_host, kl_impact_batch) and io/sweep_config.h. The grinding rollouts, which need a grinding
 * problem, are api/rollout.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_impl.h"
#include "core/shard.h"
#include "host/impact_batch.h"
#include "io/batch_out.h"
#include "io/sweep_config.h"

_Static_assert(KELVIN_SWEEP_MAX == MAXP, "KELVIN_SWEEP_MAX mirrors MAXP (io/sweep_config.h)");

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
  o.device_origin = spec ? (dev->spec_name[0] ? dev->spec_name : "kelvin_device_open") : NULL;
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

kelvin_status kelvin_device_set_shard(kelvin_device *dev, const kelvin_shard *sh)
{
  if (!dev) return KELVIN_ERR_ARG;
  if (sh && (sh->size < 1 || sh->rank < 0 || sh->rank >= sh->size || sh->node_size < 1 || sh->node_rank < 0 ||
             sh->node_rank >= sh->node_size || !sh->gather || !sh->agree))
    return kl_api_fail(dev->msg, KELVIN_ERR_ARG,
                       "kelvin_device_set_shard: rank %d of %d, node rank %d of %d, hooks %s: not a shard", sh->rank,
                       sh->size, sh->node_rank, sh->node_size, sh->gather && sh->agree ? "set" : "missing");
  kl_host_set_shard(dev->h, sh);
  return KELVIN_OK;
}

kelvin_status kelvin_shard_agree(const kelvin_shard *sh, kelvin_status st, char *msg, size_t cap)
{
  if (!msg || cap == 0) return KELVIN_ERR_ARG;
  return kl_shard_agree(sh, st, msg, cap);
}

void kelvin_device_shard(const kelvin_device *dev, int *rank, int *size)
{
  const kelvin_shard *sh = dev ? kl_host_shard(dev->h) : NULL;
  if (rank) *rank = sh ? sh->rank : 0;
  if (size) *size = sh ? sh->size : 1;
}

void kelvin_device_set_spec_name(kelvin_device *dev, const char *name)
{
  if (dev) snprintf(dev->spec_name, sizeof dev->spec_name, "%s", name ? name : "");
}

kelvin_status kelvin_device_list(kelvin_device *dev, int *n)
{
  if (n) *n = 0;
  if (!dev || !n) return KELVIN_ERR_ARG;
  const kl_device_info *list;
  const kelvin_status st = kl_host_devices(dev->h, &list, n);
  if (st != KELVIN_OK) return kl_api_fail(dev->msg, st, "%s", kl_host_errmsg(dev->h));
  return KELVIN_OK;
}

kelvin_status kelvin_device_list_info(kelvin_device *dev, int i, kelvin_device_info *out)
{
  if (out) memset(out, 0, sizeof *out);
  if (!dev || !out) return KELVIN_ERR_ARG;
  const kl_device_info *list;
  int n;
  const kelvin_status st = kl_host_devices(dev->h, &list, &n);
  if (st != KELVIN_OK) return kl_api_fail(dev->msg, st, "%s", kl_host_errmsg(dev->h));
  if (i < 0 || i >= n) return kl_api_fail(dev->msg, KELVIN_ERR_ARG, "kelvin_device_list_info: device %d of %d", i, n);
  const kl_device_info *d = &list[i];
  out->platform = d->platform;
  out->device = d->device;
  snprintf(out->platform_name, sizeof out->platform_name, "%s", d->platform_name);
  snprintf(out->name, sizeof out->name, "%s", d->name);
  snprintf(out->version, sizeof out->version, "%s", d->version);
  snprintf(out->type, sizeof out->type, "%s", kl_device_type_str(d->type));
  out->compute_units = d->compute_units;
  out->fp64 = d->fp64;
  out->global_mem = d->global_mem;
  return KELVIN_OK;
}

kelvin_status kelvin_device_choose(kelvin_device *dev, const char *spec, int flags, int *index)
{
  if (index) *index = -1;
  if (!dev || !index) return KELVIN_ERR_ARG;
  if (flags & ~KELVIN_DEVICE_CPU)
    return kl_api_fail(dev->msg, KELVIN_ERR_ARG, "kelvin_device_choose: unknown flags 0x%x", flags);
  kl_host_opts o;
  kl_host_opts_default(&o);
  o.device = spec;
  o.device_origin = spec ? (dev->spec_name[0] ? dev->spec_name : "kelvin_device_open") : NULL;
  o.cpu = (flags & KELVIN_DEVICE_CPU) != 0;
  const kelvin_status st = kl_host_choose(dev->h, &o, index);
  if (st != KELVIN_OK) {
    *index = -1;
    return kl_api_fail(dev->msg, st, "%s", kl_host_errmsg(dev->h));
  }
  return KELVIN_OK;
}

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
  kelvin_progress_fn progress; /* nullable */
  void *ctx;
  size_t done; /* scenarios the last run evaluated */
  char msg[KL_API_MSG];
};

/* A handle around the internal batch kb (taken over; destroyed on failure). */
static kelvin_status wrap_batch(kl_impact_batch *kb, kelvin_impact_batch **out)
{
  *out = calloc(1, sizeof **out);
  if (!*out) {
    kl_impact_batch_destroy(kb);
    return KELVIN_ERR_NOMEM;
  }
  (*out)->b = kb;
  return KELVIN_OK;
}

kelvin_status kelvin_impact_batch_create(size_t n, int nsamples, kelvin_impact_batch **out)
{
  if (!out) return KELVIN_ERR_ARG;
  *out = NULL;
  if (n == 0 || nsamples < 0) return KELVIN_ERR_ARG;
  kl_impact_batch *kb;
  const kelvin_status st = kl_impact_batch_create(n, nsamples, &kb);
  if (st != KELVIN_OK) return st;
  return wrap_batch(kb, out);
}

size_t kelvin_impact_batch_size(const kelvin_impact_batch *b) { return b ? b->b->P : 0; }

kelvin_status kelvin_impact_batch_set(kelvin_impact_batch *b, size_t i, const kelvin_impact_in *in)
{
  if (!b) return KELVIN_ERR_ARG;
  if (!in || i >= b->b->P)
    return kl_api_fail(b->msg, KELVIN_ERR_ARG, "kelvin_impact_batch_set: scenario %zu of %zu%s", i, b->b->P,
                       in ? "" : ", input NULL");
  const kl_impact_in k = {in->m, in->K, in->n, in->cr, in->v0, in->fe, (int)in->model, (int)in->law, (int)in->rule,
                    in->c, in->n2, in->rate_exp};
  kl_impact_batch_set(b->b, i, k);
  return KELVIN_OK;
}

/* kl_progress_fn over the batch's kelvin_progress_fn: records the rows done, and a nonzero return stops. */
static int batch_progress(void *ctx, size_t done, size_t total)
{
  kelvin_impact_batch *b = ctx;
  b->done = done;
  char text[128];
  snprintf(text, sizeof text, "impact batch: %zu of %zu scenarios", done, total);
  return b->progress(b->ctx, total ? (double)done / (double)total : 1.0, text) != 0;
}

kelvin_status kelvin_impact_batch_run(kelvin_impact_batch *b, kelvin_device *dev)
{
  if (!b) return KELVIN_ERR_ARG;
  b->msg[0] = '\0';
  b->done = 0;
  const size_t P = b->b->P;
  if (!dev) {
    for (size_t lo = 0; lo < P; lo += KL_PROGRESS_CHUNK) {
      const size_t hi = P - lo < KL_PROGRESS_CHUNK ? P : lo + KL_PROGRESS_CHUNK;
      kl_impact_run_serial(b->b, lo, hi);
      b->done = hi;
      if (b->progress && batch_progress(b, hi, P))
        return kl_api_fail(b->msg, KELVIN_ERR_STOPPED, "stopped by the progress callback after %zu of %zu scenarios",
                           hi, P);
    }
    return KELVIN_OK;
  }
  if (!dev->open) return kl_api_fail(b->msg, KELVIN_ERR_ARG, "kelvin_impact_batch_run: the device is not open");
  const kelvin_status st = kl_impact_run(dev->h, b->b, b->progress ? batch_progress : NULL, b);
  if (st != KELVIN_OK) return kl_api_fail(b->msg, st, "%s", kl_host_errmsg(dev->h));
  /* with a shard (docs/design.md section 11): every row on rank 0, this rank's share elsewhere */
  const kelvin_shard *sh = kl_host_shard(dev->h);
  size_t lo, hi;
  kl_shard_range(sh, P, &lo, &hi);
  b->done = !kl_shard_on(sh) || sh->rank == 0 ? P : hi - lo;
  return KELVIN_OK;
}

void kelvin_impact_batch_set_progress(kelvin_impact_batch *b, kelvin_progress_fn fn, void *ctx)
{
  if (!b) return;
  b->progress = fn;
  b->ctx = ctx;
}

size_t kelvin_impact_batch_done(const kelvin_impact_batch *b) { return b ? b->done : 0; }

kelvin_status kelvin_impact_batch_input(const kelvin_impact_batch *b, size_t i, kelvin_impact_in *in)
{
  if (in) memset(in, 0, sizeof *in);
  if (!b || !in || i >= b->b->P) return KELVIN_ERR_ARG;
  const kl_impact_in k = kl_impact_batch_get(b->b, i);
  in->m = k.m;
  in->K = k.K;
  in->n = k.n;
  in->cr = k.cr;
  in->v0 = k.v0;
  in->fe = k.fe;
  in->model = (kelvin_model)k.model;
  in->law = (kelvin_law)k.law;
  in->rule = (kelvin_rule)k.rule;
  in->c = k.c;
  in->n2 = k.n2;
  in->rate_exp = k.rate_exp;
  return KELVIN_OK;
}

int kelvin_impact_batch_nsamples(const kelvin_impact_batch *b) { return b ? b->b->M : 0; }

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

kelvin_status kelvin_impact_batch_write(kelvin_impact_batch *b, const char *path, kelvin_format format)
{
  if (!b) return KELVIN_ERR_ARG;
  b->msg[0] = '\0';
  if (!path || !path[0]) return kl_api_fail(b->msg, KELVIN_ERR_ARG, "kelvin_impact_batch_write: path NULL or empty");
  if (format == KELVIN_FORMAT_CSV) return kl_batch_write_csv(b->b, path, b->progress, b->ctx, b->msg, KL_API_MSG);
  if (format == KELVIN_FORMAT_HDF5) return kl_batch_write_hdf5(b->b, path, b->progress, b->ctx, b->msg, KL_API_MSG);
  return kl_api_fail(b->msg, KELVIN_ERR_ARG, "kelvin_impact_batch_write: unknown format %d", (int)format);
}

int kelvin_impact_batch_column(int i, const char **name, const char **unit, const char **doc)
{
  const int ok = i >= 0 && i < KL_BATCH_NCOL;
  if (name) *name = ok ? kl_batch_cols[i].name : NULL;
  if (unit) *unit = ok ? kl_batch_cols[i].unit : NULL;
  if (doc) *doc = ok ? kl_batch_cols[i].doc : NULL;
  return ok;
}

const char *kelvin_impact_batch_errmsg(const kelvin_impact_batch *b) { return b ? b->msg : ""; }

void kelvin_impact_batch_free(kelvin_impact_batch *b)
{
  if (!b) return;
  kl_impact_batch_destroy(b->b);
  free(b);
}

//------------------------------------------------------------------------------------------------------
// sweeps

struct kelvin_sweep {
  kelvin_impact_batch *b;
  kelvin_progress_fn progress; /* of kelvin_sweep_load (nullable) */
  void *ctx;
  char msg[KL_API_MSG];
};

/* The scenarios of spec (a product, or the CSV file it names) into a new batch; name (the config file)
 * in messages. */
static kelvin_status sweep_batch(const kl_sweep_spec *spec, const char *name, kelvin_impact_batch **out, char *msg,
                                 kelvin_progress_fn fn, void *ctx)
{
  *out = NULL;
  kl_impact_batch *kb = NULL;
  kelvin_status st;
  if (spec->scenarios[0]) {
    if ((st = kl_sweep_load_csv_progress(spec->scenarios, spec->samples, &kb, msg, KL_API_MSG, fn, ctx)) != KELVIN_OK)
      return st;
  } else {
    const long P = kl_sweep_product_size(spec);
    if (P < 0)
      return kl_api_fail(msg, KELVIN_ERR_LIMIT, "%s: the sweep has more than %ld scenarios; use fewer values", name,
                         KELVIN_SWEEP_MAX);
    if (P == 0) return kl_api_fail(msg, KELVIN_ERR_CONFIG, "%s: the sweep is empty", name);
    if ((st = kl_impact_batch_create((size_t)P, spec->samples, &kb)) != KELVIN_OK)
      return kl_api_fail(msg, st, "cannot allocate %ld scenarios with %d samples each: out of memory", P,
                         spec->samples);
    kl_sweep_fill_product(spec, kb);
  }
  if ((st = wrap_batch(kb, out)) != KELVIN_OK) return kl_api_fail(msg, st, "out of memory");
  return KELVIN_OK;
}

kelvin_status kelvin_sweep_create(kelvin_sweep **out)
{
  if (!out) return KELVIN_ERR_ARG;
  *out = calloc(1, sizeof **out);
  if (!*out) return KELVIN_ERR_NOMEM;
  kl_sweep_spec spec;
  kelvin_status st = kl_sweep_spec_default(&spec) == 0 ? KELVIN_OK : KELVIN_ERR_NOMEM;
  if (st == KELVIN_OK) st = sweep_batch(&spec, "sweep", &(*out)->b, (*out)->msg, NULL, NULL);
  kl_sweep_spec_free(&spec);
  if (st != KELVIN_OK) {
    free(*out);
    *out = NULL;
    return KELVIN_ERR_NOMEM;
  }
  return KELVIN_OK;
}

kelvin_status kelvin_sweep_load(kelvin_sweep *s, const char *path)
{
  if (!s) return KELVIN_ERR_ARG;
  s->msg[0] = '\0';
  if (!path) return kl_api_fail(s->msg, KELVIN_ERR_ARG, "kelvin_sweep_load: path NULL");
  kl_sweep_spec spec;
  kl_cfg *cfg = NULL;
  kelvin_impact_batch *b = NULL;
  kelvin_status st;
  if (kl_sweep_spec_default(&spec) != 0 || kl_cfg_create(&cfg) != KELVIN_OK) {
    st = kl_api_fail(s->msg, KELVIN_ERR_NOMEM, "out of memory");
    goto done;
  }
  if ((st = kl_sweep_load_spec(cfg, path, &spec)) != KELVIN_OK) {
    kl_api_fail(s->msg, st, "%s", kl_cfg_errmsg(cfg));
    goto done;
  }
  if ((st = sweep_batch(&spec, path, &b, s->msg, s->progress, s->ctx)) != KELVIN_OK) goto done;
  kelvin_impact_batch_free(s->b);
  s->b = b;
done:
  kl_cfg_destroy(cfg);
  kl_sweep_spec_free(&spec);
  return st;
}

void kelvin_sweep_set_progress(kelvin_sweep *s, kelvin_progress_fn fn, void *ctx)
{
  if (!s) return;
  s->progress = fn;
  s->ctx = ctx;
}

kelvin_impact_batch *kelvin_sweep_batch(kelvin_sweep *s) { return s ? s->b : NULL; }

const char *kelvin_sweep_errmsg(const kelvin_sweep *s) { return s ? s->msg : ""; }

void kelvin_sweep_free(kelvin_sweep *s)
{
  if (!s) return;
  kelvin_impact_batch_free(s->b);
  free(s);
}

int kelvin_sweep_param(int i, const char **key, const char **def, const char **doc)
{
  const int ok = i >= 0 && i < NPAR;
  if (key) *key = ok ? kl_sweep_pdefs[i].key : NULL;
  if (def) *def = ok ? kl_sweep_pdefs[i].defstr : NULL;
  if (doc) *doc = ok ? kl_sweep_pdefs[i].doc : NULL;
  return ok;
}
