/* host/rollout_batch.c: P grinding-pass candidates per call, OpenCL or OpenMP twin (rollout_batch.h). */
#include "host/rollout_batch.h"

#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/shard.h"
#include "host/blas.h"
#include "host/host_impl.h"
#include "kl_kernel_sources.h"

struct kl_rollout {
  kl_host *h;
  int ns, nc;
  long host_below; /* batches below this many candidates run on the OpenMP twin */
  void (*notice)(void *ctx, const char *line);
  void *notice_ctx;
  int built;       /* the OpenCL program and the shared buffers exist */
  double *gp, *geo, *basis; /* host copies */
  int S;                    /* scenarios (kl_rollout_set_scenarios), 0 before */
  double *gps, *geos;       /* their host copies (S x KL_GP_N, S x ns x KL_GG_N) */
  /* OpenCL path */
  cl_program prog;
  cl_kernel k, ktl, ksc;
  cl_mem dgp, dgeo, dbasis, dctrl, dov, dobj, dso, ddir, dds;
  cl_mem dgps, dgeos; /* the scenarios, uploaded by the first scenario batch on the device after they are set */
  size_t tlcap; /* doubles ddir and dds hold */
  size_t cap, ocap, socap; /* candidates dctrl and dov hold; rollouts dobj and dso hold */
  /* OpenMP path */
  double *ov;
  size_t ovcap;
  size_t count, count_host, count_local; /* count_local: those this rank ran (kl_rollout_count_local) */
  double seconds;
  const int *stop; /* a stop asked on this rank, acted on by the next sharded batch (kl_rollout_stop_flag) */
};

static void release_mem(cl_mem *m)
{
  if (*m) clReleaseMemObject(*m);
  *m = NULL;
}

/* the program, its kernels and the shared buffers (what build makes) */
static void release_built(kl_rollout *r)
{
  release_mem(&r->dgp);
  release_mem(&r->dgeo);
  release_mem(&r->dbasis);
  release_mem(&r->dgps);
  release_mem(&r->dgeos);
  if (r->ksc) clReleaseKernel(r->ksc);
  if (r->ktl) clReleaseKernel(r->ktl);
  if (r->k) clReleaseKernel(r->k);
  if (r->prog) clReleaseProgram(r->prog);
  r->ksc = r->ktl = r->k = NULL;
  r->prog = NULL;
  r->built = 0;
}

void kl_rollout_destroy(kl_rollout *r)
{
  if (!r) return;
  release_built(r);
  release_mem(&r->dctrl);
  release_mem(&r->dov);
  release_mem(&r->dobj);
  release_mem(&r->dso);
  release_mem(&r->ddir);
  release_mem(&r->dds);
  free(r->gp);
  free(r->geo);
  free(r->basis);
  free(r->gps);
  free(r->geos);
  free(r->ov);
  free(r);
}

/* host copy of n doubles */
static double *dup(const double *a, size_t n)
{
  double *b = malloc(n * sizeof *b);
  if (b) memcpy(b, a, n * sizeof *b);
  return b;
}

kelvin_status kl_rollout_create(kl_host *h, const kl_rollout_def *d, kl_rollout **out)
{
  *out = NULL;
  if (d->ns < 2 || d->nc < 1) return kl_host_fail(h, KELVIN_ERR_ARG, "rollout: need ns >= 2 and nc >= 1, got %d, %d",
                                                   d->ns, d->nc);
  kl_rollout *r = calloc(1, sizeof *r);
  if (!r) return kl_host_fail(h, KELVIN_ERR_NOMEM, "rollout: out of memory");
  r->h = h;
  r->ns = d->ns;
  r->nc = d->nc;
  const size_t ns = (size_t)d->ns, nc = (size_t)d->nc;
  r->gp = dup(d->gp, KL_GP_N);
  r->geo = dup(d->geo, ns * KL_GG_N);
  if (!d->basis && d->nc != 2 * d->ns) {
    free(r);
    return kl_host_fail(h, KELVIN_ERR_ARG, "rollout: without a basis nc must be 2 ns, got %d, %d", d->nc, d->ns);
  }
  r->basis = d->basis ? dup(d->basis, 2 * ns * nc) : NULL;
  if (!r->gp || !r->geo || (d->basis && !r->basis)) {
    kl_rollout_destroy(r);
    return kl_host_fail(h, KELVIN_ERR_NOMEM, "rollout: out of memory");
  }
  r->notice = d->notice;
  r->notice_ctx = d->notice_ctx;
  const char *ev = getenv("KELVIN_ROLLOUT_HOST_BELOW");
  if (!kl_host_is_opencl(h)) /* the twin's own handle: nowhere else to send a batch */
    r->host_below = 0;
  else if (d->host_below >= 0)
    r->host_below = d->host_below;
  else if (ev) {
    char *end = NULL;
    const long v = strtol(ev, &end, 10);
    if (end == ev || *end != '\0' || v < 0) {
      kl_rollout_destroy(r);
      return kl_host_fail(h, KELVIN_ERR_CONFIG, "KELVIN_ROLLOUT_HOST_BELOW must be a whole number >= 0, got '%.40s'", ev);
    }
    r->host_below = v;
  } else
    r->host_below = (kl_host_device(h)->type & CL_DEVICE_TYPE_CPU) ? 0 : KL_ROLLOUT_HOST_BELOW_GPU;
  *out = r;
  return KELVIN_OK;
}

/* The OpenCL side, on the first batch that runs on the device: build kernels/rollout.cl and upload what
 * every candidate shares. */
static kelvin_status build(kl_rollout *r)
{
  kl_host *h = r->h;
  kelvin_status st = KELVIN_OK;
  const size_t ns = (size_t)r->ns, nc = (size_t)r->nc;
  if (r->notice) r->notice(r->notice_ctx, "building the rollout program (kernels/rollout.cl) for the OpenCL device");
  {
    cl_int err;
    st = kl_host_build(h, "kernels/rollout.cl", kl_cl_src_rollout, &r->prog);
    if (st != KELVIN_OK) goto cleanup;
    KL_CL(h, (r->k = clCreateKernel(r->prog, "kl_grind_batch", &err), err));
    KL_CL(h, (r->ktl = clCreateKernel(r->prog, "kl_grind_tl_batch", &err), err));
    KL_CL(h, (r->ksc = clCreateKernel(r->prog, "kl_grind_scen_batch", &err), err));
    KL_CL(h, (r->dgp = clCreateBuffer(h->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, KL_GP_N * sizeof(double),
                                      r->gp, &err),
              err));
    KL_CL(h, (r->dgeo = clCreateBuffer(h->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                       ns * KL_GG_N * sizeof(double), r->geo, &err),
              err));
    if (r->basis)
      KL_CL(h, (r->dbasis = clCreateBuffer(h->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                           2 * ns * nc * sizeof(double), r->basis, &err),
                err));
  }
  r->built = 1;
  if (r->notice && kl_host_build_seconds(h) > 2.0) { /* 18-25 s on an H200 (driver 580) the first time */
    char line[160];
    snprintf(line, sizeof line, "rollout program built in %.1f s (drivers that keep builds, as NVIDIA's and pocl do, skip this next time)",
             kl_host_build_seconds(h));
    r->notice(r->notice_ctx, line);
  }
cleanup:
  if (st != KELVIN_OK) release_built(r); /* nothing half-made stays: the next device batch starts again */
  return st;
}

/* grow the device buffers to hold P candidates (dctrl, dov) and Q rollouts (dobj, and dso if wanted): Q = P but
 * for a scenario batch */
static kelvin_status reserve(kl_rollout *r, size_t P, size_t Q, int want)
{
  kl_host *h = r->h;
  kelvin_status st = KELVIN_OK;
  cl_int err;
  const size_t ns = (size_t)r->ns, nc = (size_t)r->nc;
  if (P > r->cap) {
    release_mem(&r->dctrl);
    release_mem(&r->dov);
    r->cap = 0;
    KL_CL(h, (r->dctrl = clCreateBuffer(h->ctx, CL_MEM_READ_ONLY, nc * P * sizeof(double), NULL, &err), err));
    KL_CL(h, (r->dov = clCreateBuffer(h->ctx, CL_MEM_READ_WRITE, 2 * ns * P * sizeof(double), NULL, &err), err));
    r->cap = P;
  }
  if (Q > r->ocap) {
    release_mem(&r->dobj);
    r->ocap = 0;
    KL_CL(h, (r->dobj = clCreateBuffer(h->ctx, CL_MEM_WRITE_ONLY, KL_OBJ_N * Q * sizeof(double), NULL, &err), err));
    r->ocap = Q;
  }
  if (want && Q > r->socap) {
    release_mem(&r->dso);
    r->socap = 0;
    KL_CL(h, (r->dso = clCreateBuffer(h->ctx, CL_MEM_WRITE_ONLY, KL_SO_N * ns * Q * sizeof(double), NULL, &err),
              err));
    r->socap = Q;
  }
  if (!r->dso) KL_CL(h, (r->dso = clCreateBuffer(h->ctx, CL_MEM_WRITE_ONLY, sizeof(double), NULL, &err), err));
cleanup:
  return st;
}

/* OpenCL path, first half: build on the first device batch, buffers for P candidates and Q rollouts, upload
 * the control points and expand them into dov (GEMM on the device) */
static kelvin_status expand_cl(kl_rollout *r, size_t P, size_t Q, const double *ctrl, int want)
{
  kl_host *h = r->h;
  kelvin_status st = r->built ? KELVIN_OK : build(r);
  if (st == KELVIN_OK) st = reserve(r, P, Q, want);
  if (st != KELVIN_OK) return st;
  const size_t ns = (size_t)r->ns, nc = (size_t)r->nc;
  if (r->basis) {
    KL_CL(h, clEnqueueWriteBuffer(h->q, r->dctrl, CL_TRUE, 0, nc * P * sizeof(double), ctrl, 0, NULL, NULL));
    st = kl_blas_dgemm_mem(h, 2 * ns, P, nc, r->dbasis, r->dctrl, r->dov);
  } else { /* the samples themselves */
    KL_CL(h, clEnqueueWriteBuffer(h->q, r->dov, CL_TRUE, 0, 2 * ns * P * sizeof(double), ctrl, 0, NULL, NULL));
  }
cleanup:
  return st;
}

/* the rollout kernels' work-group size from the device table (host/device.c); KELVIN_ROLLOUT_WGS overrides
 * it for tuning */
static size_t rollout_wgs(kl_host *h)
{
  const char *ev = getenv("KELVIN_ROLLOUT_WGS");
  const size_t dflt = (size_t)kl_device_rollout_wgs(kl_host_device(h));
  const size_t local = ev ? (size_t)strtoul(ev, NULL, 10) : dflt;
  return local < 1 || local > 1024 ? dflt : local;
}

/* read columns [lo, hi) of a rows x n device table (row pitch n doubles) into the same columns of out */
static kelvin_status read_cols(kl_host *h, cl_mem m, size_t rows, size_t n, size_t lo, size_t hi, double *out)
{
  kelvin_status st = KELVIN_OK;
  if (lo == 0 && hi == n) {
    KL_CL(h, clEnqueueReadBuffer(h->q, m, CL_TRUE, 0, rows * n * sizeof(double), out, 0, NULL, NULL));
  } else {
    const size_t org[3] = {lo * sizeof(double), 0, 0}, reg[3] = {(hi - lo) * sizeof(double), rows, 1};
    KL_CL(h, clEnqueueReadBufferRect(h->q, m, CL_TRUE, org, org, reg, n * sizeof(double), 0, n * sizeof(double), 0,
                                     out, 0, NULL, NULL));
  }
cleanup:
  return st;
}

/* OpenCL path: upload control points, GEMM on the device, rollout kernel (or the tangent-linear one with
 * nd directions) over the candidates [lo, hi) (a rank's share; all P are expanded, so that each column's
 * GEMM is the one-rank batch's), download their columns */
static kelvin_status eval_cl(kl_rollout *r, size_t P, size_t lo, size_t hi, const double *ctrl, double *obj,
                             double *so, int nd, const double *dir, double *dS)
{
  kl_host *h = r->h;
  kelvin_status st = expand_cl(r, P, P, ctrl, so != NULL);
  if (st != KELVIN_OK) return st;
  const size_t ns = (size_t)r->ns;
  const int iP = (int)P, ins = r->ns, want = so != NULL, end = (int)hi;
  cl_kernel kk = nd > 0 ? r->ktl : r->k;
  const size_t ntl = (size_t)nd * ns * P;
  if (nd > 0 && ntl > r->tlcap) {
    cl_int err;
    release_mem(&r->ddir);
    release_mem(&r->dds);
    r->tlcap = 0;
    KL_CL(h, (r->ddir = clCreateBuffer(h->ctx, CL_MEM_READ_ONLY, ntl * sizeof(double), NULL, &err), err));
    KL_CL(h, (r->dds = clCreateBuffer(h->ctx, CL_MEM_WRITE_ONLY, ntl * sizeof(double), NULL, &err), err));
    r->tlcap = ntl;
  }
  KL_CL(h, clSetKernelArg(kk, 0, sizeof iP, &iP));
  KL_CL(h, clSetKernelArg(kk, 1, sizeof ins, &ins));
  KL_CL(h, clSetKernelArg(kk, 2, sizeof r->dgp, &r->dgp));
  KL_CL(h, clSetKernelArg(kk, 3, sizeof r->dgeo, &r->dgeo));
  KL_CL(h, clSetKernelArg(kk, 4, sizeof r->dov, &r->dov));
  KL_CL(h, clSetKernelArg(kk, 5, sizeof r->dobj, &r->dobj));
  KL_CL(h, clSetKernelArg(kk, 6, sizeof want, &want));
  KL_CL(h, clSetKernelArg(kk, 7, sizeof r->dso, &r->dso));
  if (nd > 0) {
    KL_CL(h, clEnqueueWriteBuffer(h->q, r->ddir, CL_TRUE, 0, ntl * sizeof(double), dir, 0, NULL, NULL));
    KL_CL(h, clSetKernelArg(kk, 8, sizeof nd, &nd));
    KL_CL(h, clSetKernelArg(kk, 9, sizeof r->ddir, &r->ddir));
    KL_CL(h, clSetKernelArg(kk, 10, sizeof r->dds, &r->dds));
  }
  KL_CL(h, clSetKernelArg(kk, nd > 0 ? 11 : 8, sizeof end, &end));
  const size_t local = rollout_wgs(h), n = hi - lo, off = lo;
  const size_t global = (n + local - 1) / local * local;
  KL_CL(h, clEnqueueNDRangeKernel(h->q, kk, 1, &off, &global, &local, 0, NULL, NULL));
  if (nd > 0) {
    const size_t b = (size_t)nd * ns * sizeof(double); /* a candidate's directions are contiguous */
    KL_CL(h, clEnqueueReadBuffer(h->q, r->dds, CL_TRUE, lo * b, n * b, (char *)dS + lo * b, 0, NULL, NULL));
  }
  if ((st = read_cols(h, r->dobj, KL_OBJ_N, P, lo, hi, obj)) != KELVIN_OK) goto cleanup;
  if (so) st = read_cols(h, r->dso, KL_SO_N * ns, P, lo, hi, so);
cleanup:
  return st;
}

/* the OpenMP twin's threads */
static int twin_threads(const kl_rollout *r)
{
  return kl_host_threads(r->h) > 0 ? kl_host_threads(r->h) : omp_get_max_threads();
}

/* OpenMP twin, first half: the control points of P candidates expanded into r->ov (the same GEMM on the host) */
static kelvin_status expand_omp(kl_rollout *r, size_t P, const double *ctrl)
{
  kl_host *h = r->h;
  const size_t ns = (size_t)r->ns, nc = (size_t)r->nc;
  if (2 * ns * P > r->ovcap) {
    free(r->ov);
    r->ov = malloc(2 * ns * P * sizeof *r->ov);
    r->ovcap = r->ov ? 2 * ns * P : 0;
    if (!r->ov) return kl_host_fail(h, KELVIN_ERR_NOMEM, "rollout: out of memory for %zu candidates", P);
  }
  const int threads = twin_threads(r);
  if (r->basis) { /* on the host even when h has a device (a small batch sent here, rollout_batch.h) */
    const kelvin_status st = kl_blas_dgemm_host(h, 2 * ns, P, nc, r->basis, ctrl, r->ov, threads);
    if (st != KELVIN_OK) return st;
  } else {
    memcpy(r->ov, ctrl, 2 * ns * P * sizeof *r->ov);
  }
  return KELVIN_OK;
}

/* OpenMP twin: the same GEMM on the host, the same header function in a parallel loop over the candidates
 * [lo, hi) (a rank's share), written in place in obj, so and dS */
static kelvin_status eval_omp(kl_rollout *r, size_t P, size_t lo, size_t hi, const double *ctrl, double *obj,
                              double *so, int nd, const double *dir, double *dS)
{
  const size_t ns = (size_t)r->ns;
  const kelvin_status st = expand_omp(r, P, ctrl);
  if (st != KELVIN_OK) return st;
  const int threads = twin_threads(r);
  const int iP = (int)(hi - lo), i0 = (int)lo, nP = (int)P, want = so != NULL;
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
  for (int p = 0; p < iP; ++p)
    kl_grind_rollout_tl(r->gp, r->ns, r->geo, r->ov, nP, i0 + p, nP, i0 + p, obj, want, so, nd,
                        nd ? dir + (size_t)(i0 + p) * nd * ns : NULL, nd ? dS + (size_t)(i0 + p) * nd * ns : NULL);
  return KELVIN_OK;
}

/* 1 if a batch of P candidates runs on the OpenCL device, 0 if on the OpenMP twin */
static int on_device(const kl_rollout *r, size_t P)
{
  return kl_host_is_opencl(r->h) && (r->host_below <= 0 || P >= (size_t)r->host_below);
}

static void tally(kl_rollout *r, size_t P, int dev, size_t local)
{
  r->count += P;
  r->count_local += local;
  if (!dev && kl_host_is_opencl(r->h)) r->count_host += P;
}

/* A sharded batch's second half (docs/design.md section 11): this rank computed its share (status st); a stop
 * asked on this rank meanwhile (kl_rollout_stop_flag) becomes its status; the group agrees on the status, then
 * every rank receives every column of each of the np tables (rows x n, elem bytes each; NULL: skipped).
 * Without a shard: st. */
typedef struct table {
  void *a;
  size_t rows, elem;
} table;
static kelvin_status share(kl_rollout *r, kelvin_status st, size_t n, const table *t, int np)
{
  const kelvin_shard *sh = kl_host_shard(r->h);
  if (!sh) return st;
  char msg[KL_HOST_MSG];
  if (st == KELVIN_OK && r->stop && *r->stop) {
    st = KELVIN_ERR_STOPPED;
    snprintf(msg, sizeof msg, "stopped by the caller");
  } else
    snprintf(msg, sizeof msg, "%s", st == KELVIN_OK ? "" : kl_host_errmsg(r->h));
  st = kl_shard_agree(sh, st, msg, sizeof msg);
  for (int i = 0; i < np && st == KELVIN_OK; ++i)
    if (t[i].a) st = kl_shard_gather_cols(sh, t[i].a, t[i].rows, n, t[i].elem, -1, msg, sizeof msg);
  return st == KELVIN_OK ? st : kl_host_fail(r->h, st, "%s", msg);
}

/* this rank's share [lo, hi) of n items; none if a stop is pending (it ends the batch in share()) */
static void range(const kl_rollout *r, size_t n, size_t *lo, size_t *hi)
{
  const kelvin_shard *sh = kl_host_shard(r->h);
  kl_shard_range(sh, n, lo, hi);
  if (sh && r->stop && *r->stop) *hi = *lo;
}

kelvin_status kl_rollout_eval(kl_rollout *r, size_t P, const double *ctrl, double *obj, double *so)
{
  if (P < 1 || P > (size_t)1 << 28) return kl_host_fail(r->h, KELVIN_ERR_ARG, "rollout: P must be in [1, 2^28], got %zu", P);
  const double t0 = kl_now();
  const int dev = on_device(r, P); /* on the whole batch: the same path on every rank */
  size_t lo, hi;
  range(r, P, &lo, &hi);
  kelvin_status st = KELVIN_OK;
  if (hi > lo)
    st = dev ? eval_cl(r, P, lo, hi, ctrl, obj, so, 0, NULL, NULL) : eval_omp(r, P, lo, hi, ctrl, obj, so, 0, NULL, NULL);
  const table t[2] = {{obj, KL_OBJ_N, sizeof *obj}, {so, KL_SO_N * (size_t)r->ns, sizeof *obj}};
  st = share(r, st, P, t, 2);
  r->seconds += kl_now() - t0;
  if (st == KELVIN_OK) tally(r, P, dev, hi - lo);
  return st;
}

kelvin_status kl_rollout_tangent(kl_rollout *r, size_t P, const double *ctrl, int nd, const double *dir, double *obj,
                                 double *so, double *dS)
{
  if (P < 1 || P > (size_t)1 << 20) return kl_host_fail(r->h, KELVIN_ERR_ARG, "rollout: P must be in [1, 2^20], got %zu", P);
  if (nd < 1 || nd > KL_TL_MAX || !dir || !dS)
    return kl_host_fail(r->h, KELVIN_ERR_ARG, "rollout: the tangent-linear rollout needs 1..%d directions, got %d",
                        KL_TL_MAX, nd);
  const double t0 = kl_now();
  const int dev = on_device(r, P);
  /* sharded by candidate: a candidate's nd ns derivatives are contiguous, one element of a 1 x P table; a batch
   * of one (LM's) runs on rank 0 alone and reaches the others through the gather (its directions are one
   * work-item's: no split by direction) */
  size_t lo, hi;
  range(r, P, &lo, &hi);
  kelvin_status st = KELVIN_OK;
  if (hi > lo)
    st = dev ? eval_cl(r, P, lo, hi, ctrl, obj, so, nd, dir, dS) : eval_omp(r, P, lo, hi, ctrl, obj, so, nd, dir, dS);
  const table t[3] = {{obj, KL_OBJ_N, sizeof *obj},
                      {so, KL_SO_N * (size_t)r->ns, sizeof *obj},
                      {dS, 1, (size_t)nd * (size_t)r->ns * sizeof *dS}};
  st = share(r, st, P, t, 3);
  r->seconds += kl_now() - t0;
  if (st == KELVIN_OK) tally(r, P, dev, hi - lo);
  return st;
}

/* ---- candidates x scenarios ---- */

kelvin_status kl_rollout_set_scenarios(kl_rollout *r, int S, const double *gp, const double *geo)
{
  if (S < 1 || S > 1 << 24 || !gp || !geo)
    return kl_host_fail(r->h, KELVIN_ERR_ARG,
                        "rollout: scenarios need 1 <= S <= 2^24 and their gp and geo, got S = %d%s", S,
                        !gp || !geo ? " and a NULL array" : "");
  const size_t ns = (size_t)r->ns, nS = (size_t)S;
  double *a = dup(gp, nS * KL_GP_N), *b = dup(geo, nS * ns * KL_GG_N);
  if (!a || !b) {
    free(a);
    free(b);
    return kl_host_fail(r->h, KELVIN_ERR_NOMEM, "rollout: out of memory for %d scenarios", S);
  }
  free(r->gps);
  free(r->geos);
  r->gps = a;
  r->geos = b;
  r->S = S;
  release_mem(&r->dgps); /* the next scenario batch on the device uploads the new set */
  release_mem(&r->dgeos);
  return KELVIN_OK;
}

int kl_rollout_nscenarios(const kl_rollout *r) { return r->S; }

/* OpenCL path of a scenario batch: the candidates expanded once (GEMM on the device), the scenarios uploaded
 * once per set, one work-item per rollout (kernels/rollout.cl, kl_grind_scen_batch), obj and so downloaded
 * whole. A reduction over each candidate's S rollouts on the device would download KL_OBJ_N x P doubles in
 * place of KL_OBJ_N x P S, and would save nothing worth a kernel: measured with `scen_batch_test --measure 64
 * 256` (tests/scen_batch_test.c: 16384 rollouts of 61 samples) on pocl, 2 cores, the objective terms (1.5 MB)
 * download in 0.10 ms against 1.40 s for the batch (7e-5 of it). Not measured on a GPU: at the 7.6-10.4 GB/s
 * of pageable reads measured on an H200 (benchmarks/RESULTS.md, "On a GPU") 1.5 MB takes 0.15-0.2 ms, and the
 * same batch there is tens of ms at the least (screening batches ran 1.5-3.4 times the 16 host cores' speed),
 * so under 1 %. The statistics over scenarios belong on the host, where the caller needs them anyway. */
static kelvin_status eval_scen_cl(kl_rollout *r, size_t P, size_t lo, size_t hi, const double *ctrl, double *obj,
                                  double *so)
{
  kl_host *h = r->h;
  const size_t ns = (size_t)r->ns, S = (size_t)r->S, Q = P * S;
  kelvin_status st = expand_cl(r, P, Q, ctrl, so != NULL);
  if (st != KELVIN_OK) return st;
  cl_int err;
  if (!r->dgps)
    KL_CL(h, (r->dgps = clCreateBuffer(h->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, S * KL_GP_N * sizeof(double),
                                       r->gps, &err),
              err));
  if (!r->dgeos)
    KL_CL(h, (r->dgeos = clCreateBuffer(h->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                        S * ns * KL_GG_N * sizeof(double), r->geos, &err),
              err));
  const int iP = (int)P, iS = r->S, ins = r->ns, want = so != NULL, end = (int)hi;
  cl_kernel ks = r->ksc;
  KL_CL(h, clSetKernelArg(ks, 0, sizeof iP, &iP));
  KL_CL(h, clSetKernelArg(ks, 1, sizeof iS, &iS));
  KL_CL(h, clSetKernelArg(ks, 2, sizeof ins, &ins));
  KL_CL(h, clSetKernelArg(ks, 3, sizeof r->dgps, &r->dgps));
  KL_CL(h, clSetKernelArg(ks, 4, sizeof r->dgeos, &r->dgeos));
  KL_CL(h, clSetKernelArg(ks, 5, sizeof r->dov, &r->dov));
  KL_CL(h, clSetKernelArg(ks, 6, sizeof r->dobj, &r->dobj));
  KL_CL(h, clSetKernelArg(ks, 7, sizeof want, &want));
  KL_CL(h, clSetKernelArg(ks, 8, sizeof r->dso, &r->dso));
  KL_CL(h, clSetKernelArg(ks, 9, sizeof end, &end));
  const size_t local = rollout_wgs(h), off = lo, global = (hi - lo + local - 1) / local * local;
  KL_CL(h, clEnqueueNDRangeKernel(h->q, ks, 1, &off, &global, &local, 0, NULL, NULL));
  if ((st = read_cols(h, r->dobj, KL_OBJ_N, Q, lo, hi, obj)) != KELVIN_OK) goto cleanup;
  if (so) st = read_cols(h, r->dso, KL_SO_N * ns, Q, lo, hi, so);
cleanup:
  return st;
}

/* OpenMP twin of a scenario batch: the candidates expanded once, one loop over the rollouts [lo, hi) of P S (a
 * rank's share; all of them without a shard) */
static kelvin_status eval_scen_omp(kl_rollout *r, size_t P, size_t lo, size_t hi, const double *ctrl, double *obj,
                                   double *so)
{
  const kelvin_status st = expand_omp(r, P, ctrl);
  if (st != KELVIN_OK) return st;
  const int threads = twin_threads(r);
  const int iP = (int)P, iS = r->S, iQ = iP * iS, ns = r->ns, want = so != NULL, q0 = (int)lo, q1 = (int)hi;
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
  for (int q = q0; q < q1; ++q) {
    const int p = q / iS, s = q - p * iS;
    kl_grind_rollout_tl(r->gps + (size_t)s * KL_GP_N, ns, r->geos + (size_t)s * ns * KL_GG_N, r->ov, iP, p, iQ, q, obj,
                        want, so, 0, NULL, NULL);
  }
  return KELVIN_OK;
}

kelvin_status kl_rollout_eval_scenarios(kl_rollout *r, size_t P, const double *ctrl, double *obj, double *so)
{
  if (r->S < 1)
    return kl_host_fail(r->h, KELVIN_ERR_ARG, "rollout: a scenario batch without scenarios (kl_rollout_set_scenarios)");
  const size_t S = (size_t)r->S, ns = (size_t)r->ns;
  /* the kernels index obj and so with an int */
  if (P < 1 || P > (size_t)INT_MAX / KL_OBJ_N / S || (so && P > (size_t)INT_MAX / KL_SO_N / ns / S))
    return kl_host_fail(r->h, KELVIN_ERR_ARG,
                        "rollout: %zu candidates x %zu scenarios: need P >= 1 and fewer rollouts%s", P, S,
                        so ? " (with the per-sample outputs)" : "");
  const double t0 = kl_now();
  const int dev = on_device(r, P * S);
  /* sharded over the flat range of the P S rollouts (one candidate over many scenarios splits too) */
  size_t lo, hi;
  range(r, P * S, &lo, &hi);
  kelvin_status st = KELVIN_OK;
  if (hi > lo) st = dev ? eval_scen_cl(r, P, lo, hi, ctrl, obj, so) : eval_scen_omp(r, P, lo, hi, ctrl, obj, so);
  const table t[2] = {{obj, KL_OBJ_N, sizeof *obj}, {so, KL_SO_N * ns, sizeof *obj}};
  st = share(r, st, P * S, t, 2);
  r->seconds += kl_now() - t0;
  if (st == KELVIN_OK) tally(r, P * S, dev, hi - lo);
  return st;
}

void kl_rollout_stop_flag(kl_rollout *r, const int *flag) { r->stop = flag; }
size_t kl_rollout_count_local(const kl_rollout *r) { return r->count_local; }
size_t kl_rollout_count(const kl_rollout *r) { return r->count; }
size_t kl_rollout_count_host(const kl_rollout *r) { return r->count_host; }
long kl_rollout_host_below(const kl_rollout *r) { return r->host_below; }
double kl_rollout_seconds(const kl_rollout *r) { return r->seconds; }
