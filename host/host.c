/* host/host.c: the kl_host handle: messages, path choice, context and queue, program build. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clblast_c.h>
#include <omp.h>

#include "core/clock.h"
#include "host/clerr.h"
#include "host/cllog.h"
#include "host/host_impl.h"
#include "host/impact_batch.h"
#include "kl_kernel_sources.h"

/* Default most scenarios per launch: 2^20 rows are 120 MiB of inputs and outputs, a size every
 * OpenCL device takes in one buffer and large enough to keep it busy. */
#define DEFAULT_CHUNK ((size_t)1 << 20)

//------- messages -------

kelvin_status kl_host_fail(kl_host *h, kelvin_status st, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(h->msg, sizeof h->msg, fmt, ap);
  va_end(ap);
  return st;
}

/* The OpenCL function name inside the text of a checked call ("(b = clCreateBuffer(...), e)"). */
static void call_name(const char *call, char *buf, size_t cap)
{
  const char *p = call;
  while (*p && !(p[0] == 'c' && p[1] == 'l' && p[2] >= 'A' && p[2] <= 'Z')) ++p;
  if (!*p) p = call;
  size_t i = 0;
  while (i + 1 < cap && p[i] && p[i] != '(' && p[i] != ' ') {
    buf[i] = p[i];
    ++i;
  }
  buf[i] = '\0';
}

void kl_host_clfail(kl_host *h, const char *call, const char *file, int line, int err)
{
  char fn[64];
  call_name(call, fn, sizeof fn);
  const kl_device_info *d = kl_host_device(h);
  snprintf(h->msg, sizeof h->msg, "OpenCL call %s failed: %s (%d) at %s:%d%s%s%s", fn, kl_cl_errname(err), err, file,
           line, d ? " on '" : "", d ? d->name : "", d ? "'" : "");
}

const char *kl_host_errmsg(const kl_host *h) { return h ? h->msg : "out of memory"; }

//------- handle -------

void kl_host_opts_default(kl_host_opts *o) { memset(o, 0, sizeof *o); }

kelvin_status kl_host_create(kl_host **out)
{
  *out = calloc(1, sizeof **out);
  if (!*out) return KELVIN_ERR_NOMEM;
  (*out)->chosen = -1;
  (*out)->threads = 1;
  return KELVIN_OK;
}

/* Release the OpenCL objects of an open handle, newest first; tolerates a half-open one. */
static void close_cl(kl_host *h)
{
  if (h->q) clFinish(h->q);
  /* CLBlast caches compiled programs per context in a process-wide cache; clear it before the
   * context goes, or the programs keep it alive (and other handles just recompile on next use). */
  if (h->blas_used) CLBlastClearCache();
  h->blas_used = 0;
  if (h->k_impact) clReleaseKernel(h->k_impact);
  if (h->k_fast) clReleaseKernel(h->k_fast);
  h->k_fast = NULL;
  if (h->fast_list) clReleaseMemObject(h->fast_list);
  if (h->fast_declined) clReleaseMemObject(h->fast_declined);
  h->fast_list = h->fast_declined = NULL;
  h->fast_list_bytes = 0;
  if (h->prog_impact) clReleaseProgram(h->prog_impact);
  if (h->q) clReleaseCommandQueue(h->q);
  if (h->ctx) clReleaseContext(h->ctx);
  h->k_impact = NULL;
  h->prog_impact = NULL;
  h->q = NULL;
  h->ctx = NULL;
  h->opencl = 0;
  h->chosen = -1;
  h->build_s = 0.0;
  h->notice[0] = '\0';
}

void kl_host_destroy(kl_host *h)
{
  if (!h) return;
  close_cl(h);
  free(h->fast_ws);
  free(h->dev);
  free(h);
}

int kl_host_is_opencl(const kl_host *h) { return h && h->opencl; }
const char *kl_host_notice(const kl_host *h) { return h ? h->notice : ""; }
double kl_host_build_seconds(const kl_host *h) { return h ? h->build_s : 0.0; }
int kl_host_threads(const kl_host *h) { return h ? h->threads : 1; }
cl_context kl_host_context(const kl_host *h) { return h && h->opencl ? h->ctx : NULL; }
cl_command_queue kl_host_queue(const kl_host *h) { return h && h->opencl ? h->q : NULL; }

const kl_device_info *kl_host_device(const kl_host *h)
{
  return (h && h->chosen >= 0 && h->chosen < h->ndev) ? &h->dev[h->chosen] : NULL;
}

//------- devices and choice -------

kelvin_status kl_host_devices(kl_host *h, const kl_device_info **list, int *n)
{
  *list = NULL;
  *n = 0;
  if (!h->listed) {
    const kelvin_status st = kl_device_enumerate(h, &h->dev, &h->ndev);
    if (st != KELVIN_OK) return st;
    h->listed = 1;
  }
  *list = h->dev;
  *n = h->ndev;
  return KELVIN_OK;
}

kelvin_status kl_host_choose(kl_host *h, const kl_host_opts *o, int *index)
{
  *index = -1;
  if (o->cpu) return KELVIN_OK;
  const char *spec = o->device;
  const char *origin = o->device_origin ? o->device_origin : "device spec";
  if (!spec || !spec[0]) {
    spec = getenv("KELVIN_DEVICE");
    origin = "env var KELVIN_DEVICE";
  }
  const kl_device_info *list;
  int n;
  const kelvin_status st = kl_host_devices(h, &list, &n);
  if (st != KELVIN_OK) return st;
  if (!spec || !spec[0]) {
    *index = kl_device_default(list, n);
    /* a group sharing a node (kl_host_set_shard): the node's k-th process takes the node's (k mod G)-th GPU
     * with double precision, when there are G >= 2 of them (docs/design.md section 11) */
    const kelvin_shard *sh = kl_host_shard(h);
    if (sh && *index >= 0 && (list[*index].type & CL_DEVICE_TYPE_GPU)) {
      int g = 0;
      for (int i = 0; i < n; ++i) g += (list[i].type & CL_DEVICE_TYPE_GPU) && list[i].fp64;
      for (int i = 0, k = 0; g > 1 && i < n; ++i)
        if ((list[i].type & CL_DEVICE_TYPE_GPU) && list[i].fp64 && k++ == sh->node_rank % g) *index = i;
    }
    return KELVIN_OK;
  }
  return kl_device_match(h, list, n, spec, origin, index);
}

void kl_host_set_shard(kl_host *h, const kelvin_shard *sh)
{
  if (sh && sh->size > 1)
    h->shard = *sh;
  else
    memset(&h->shard, 0, sizeof h->shard);
}

const kelvin_shard *kl_host_shard(const kl_host *h) { return h && h->shard.size > 1 ? &h->shard : NULL; }

//------- program build -------

kelvin_status kl_host_build(kl_host *h, const char *name, const char *src, cl_program *out)
{
  kelvin_status st = KELVIN_OK;
  cl_int err = CL_SUCCESS;
  cl_program prog = NULL;
  char *log = NULL;
  *out = NULL;
  const kl_device_info *d = kl_host_device(h);
  if (!h->opencl || !d) return kl_host_fail(h, KELVIN_ERR_ARG, "kl_host_build: no OpenCL device is open");
  const size_t len = strlen(src);
  KL_CL(h, (prog = clCreateProgramWithSource(h->ctx, 1, &src, &len, &err), err));
  const double t0 = kl_now();
  const cl_int be = clBuildProgram(prog, 1, &d->id, h->build_opts, NULL, NULL);
  h->build_s = kl_now() - t0;
  if (be != CL_SUCCESS) {
    size_t loglen = 0;
    (void)clGetProgramBuildInfo(prog, d->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &loglen);
    log = calloc(loglen + 1, 1);
    if (log && loglen > 0) (void)clGetProgramBuildInfo(prog, d->id, CL_PROGRAM_BUILD_LOG, loglen, log, NULL);
    char *mapped = log ? kl_cl_log_map(src, log) : NULL; /* "<kernel>:1886:" -> "kernels/impact.cl:29:" */
    if (mapped) {
      free(log);
      log = mapped;
    }
    st = kl_host_fail(h, KELVIN_ERR_BUILD,
                      "OpenCL build of %s failed on '%s': %s (%d) with options '%s' (extra options come from "
                      "KELVIN_CL_BUILD_OPTIONS). OpenCL compiler log:\n%s",
                      name, d->name, kl_cl_errname(be), be, h->build_opts,
                      (log && log[0]) ? log : "(the device gave no log)");
    goto cleanup;
  }
  *out = prog;
  prog = NULL;
cleanup:
  free(log);
  if (prog) clReleaseProgram(prog);
  return st;
}

//------- the impact program, built on first use -------

kelvin_status kl_host_build_impact(kl_host *h)
{
  kelvin_status st = KELVIN_OK;
  cl_int err = CL_SUCCESS;
  if (!h->opencl) return KELVIN_OK;
  if (h->k_impact) return KELVIN_OK;
  if (!h->prog_impact) {
    st = kl_host_build(h, "kernels/impact.cl", kl_cl_src_impact, &h->prog_impact);
    if (st != KELVIN_OK) return st;
  }
  KL_CL(h, (h->k_fast = clCreateKernel(h->prog_impact, "kl_impact_batch_fast", &err), err));
  KL_CL(h, (h->k_impact = clCreateKernel(h->prog_impact, "kl_impact_batch", &err), err));
cleanup:
  return st;
}

//------- open -------

kelvin_status kl_host_open(kl_host *h, const kl_host_opts *o)
{
  kelvin_status st = KELVIN_OK;
  cl_int err = CL_SUCCESS;
  close_cl(h);
  h->msg[0] = '\0';
  h->threads = o->threads > 0 ? o->threads : omp_get_max_threads();
  h->chunk = o->chunk > 0 ? o->chunk : DEFAULT_CHUNK;
  int idx = -1;
  st = kl_host_choose(h, o, &idx);
  if (st != KELVIN_OK) return st;
  if (idx < 0) {
    const char *why = o->cpu ? "CPU path requested"
                      : h->ndev == 0 ? "no OpenCL platform or device found"
                                     : "no OpenCL device with double precision found";
    snprintf(h->notice, sizeof h->notice, "OpenMP twin on the host, %d thread%s (%s)", h->threads,
             h->threads == 1 ? "" : "s", why);
    return KELVIN_OK;
  }
  h->chosen = idx;
  const kl_device_info *d = &h->dev[idx];
  h->wgs = kl_device_wgs(d);
  const char *extra = o->build_options ? o->build_options : getenv("KELVIN_CL_BUILD_OPTIONS");
  /* no -cl-fast-relaxed-math, -cl-mad-enable or -cl-unsafe-math-optimizations: host and device must
   * round alike (docs/style.md section 3) */
  const char *dev_opts = kl_device_build_options(d);
  const int bl = snprintf(h->build_opts, sizeof h->build_opts,
                          "-cl-std=CL1.2 -DKL_WGS=%d -DKL_FAST_WIDTH=%d -DKL_FAST_ROWS=%d%s%s%s%s", h->wgs,
                          kl_device_fast_width(d), kl_device_fast_rows(d), dev_opts[0] ? " " : "", dev_opts,
                          extra && extra[0] ? " " : "", extra ? extra : "");
  if (bl < 0 || (size_t)bl >= sizeof h->build_opts) {
    h->chosen = -1;
    return kl_host_fail(h, KELVIN_ERR_ARG, "KELVIN_CL_BUILD_OPTIONS is too long (%d characters, at most %zu)", bl,
                        sizeof h->build_opts - 40);
  }
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)d->pid, 0};
  KL_CL(h, (h->ctx = clCreateContext(props, 1, &d->id, NULL, NULL, &err), err));
  KL_CL(h, (h->q = clCreateCommandQueue(h->ctx, d->id, 0, &err), err));
  h->opencl = 1;
  snprintf(h->notice, sizeof h->notice, "OpenCL device %d:%d '%s' (%s, %s, %u compute unit%s)", d->platform,
           d->device, d->name, d->platform_name, kl_device_type_str(d->type), d->compute_units,
           d->compute_units == 1 ? "" : "s");
cleanup:
  if (st != KELVIN_OK) {
    char keep[KL_HOST_MSG];
    memcpy(keep, h->msg, sizeof keep);
    close_cl(h);
    memcpy(h->msg, keep, sizeof keep);
  }
  return st;
}
