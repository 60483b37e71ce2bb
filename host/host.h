/* host/host.h: the OpenCL side of kelvin (docs/design.md sections 1 and 4): device discovery and choice,
 * context and queue, program build with the build log surfaced on failure, and the OpenMP twin that
 * runs the same kernels/ headers on the host when no OpenCL device exists or the CPU path is asked for.
 *
 * A kl_host is a handle: create it, open it with options, run batches on it (host/impact_batch.h,
 * host/blas.h), destroy it. Every function returns a kelvin_status and, on failure, leaves a message
 * for a person on the handle (kl_host_errmsg); nothing here prints, exits or aborts (docs/style.md 5-6). */
#ifndef KL_HOST_HOST_H
#define KL_HOST_HOST_H

#include <stddef.h>

#include <CL/cl.h>

#include "kelvin/kelvin.h"
#include "kelvin/shard.h"

/* One OpenCL device as `kelvin devices` lists it. */
typedef struct kl_device_info {
  int platform, device;        /* indices: platform in clGetPlatformIDs order, device within it */
  char platform_name[128];     /* CL_PLATFORM_NAME */
  char name[128];              /* CL_DEVICE_NAME */
  char version[128];           /* CL_DEVICE_VERSION */
  cl_device_type type;         /* CL_DEVICE_TYPE_* bits */
  unsigned compute_units;      /* CL_DEVICE_MAX_COMPUTE_UNITS */
  int fp64;                    /* 1 if double precision is supported (CL_DEVICE_DOUBLE_FP_CONFIG) */
  unsigned long long global_mem; /* CL_DEVICE_GLOBAL_MEM_SIZE [bytes] */
  unsigned long long max_alloc;  /* CL_DEVICE_MAX_MEM_ALLOC_SIZE [bytes] */
  size_t max_wgs;              /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
  unsigned vec_double;         /* CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE (0 if not reported) */
  cl_platform_id pid;
  cl_device_id id;
} kl_device_info;

/* Options of kl_host_open. Nullable: device, device_origin, build_options. */
typedef struct kl_host_opts {
  const char *device;        /* device spec ("0:1", "gpu", "cpu", or a name substring); NULL: the
                                env var KELVIN_DEVICE, and if unset the default choice below */
  const char *device_origin; /* how the spec reached us, for messages ("--device"); NULL: derived */
  int cpu;                   /* 1: run the OpenMP twin, touch no OpenCL device */
  const char *build_options; /* extra OpenCL build options; NULL: env var KELVIN_CL_BUILD_OPTIONS */
  size_t chunk;              /* most scenarios per device launch; 0: 1 << 20. Batches larger than
                                this or than device memory are split into chunks */
  int threads;               /* OpenMP threads of the twin; 0: all (omp_get_max_threads) */
} kl_host_opts;

typedef struct kl_host kl_host; /* opaque; host/host_impl.h */

/* Fill o with the defaults above (everything NULL / 0). */
void kl_host_opts_default(kl_host_opts *o);

/* Allocate a closed handle. *out = NULL and KELVIN_ERR_NOMEM on failure; nothing else can fail. */
kelvin_status kl_host_create(kl_host **out);

/* Release everything the handle holds (kernels, programs, queue, context, CLBlast's cache for it).
 * NULL is a no-op. */
void kl_host_destroy(kl_host *h);

/* The last error message, for a person; "" if none; never NULL (also for h = NULL). */
const char *kl_host_errmsg(const kl_host *h);

/* Enumerate every OpenCL device of every platform (once; cached on h). *list stays owned by h.
 * No platform at all is not an error: *n = 0. */
kelvin_status kl_host_devices(kl_host *h, const kl_device_info **list, int *n);

/* Resolve o (spec, env var, cpu flag) to an index into the device list, or -1 for the OpenMP twin.
 * Default without a spec: the first GPU with fp64, else the first device with fp64, else -1 (no
 * usable OpenCL device: the twin runs). A spec that names no device, or a device without fp64, is
 * KELVIN_ERR_NODEVICE with a message that lists the devices found. Does not open anything. */
kelvin_status kl_host_choose(kl_host *h, const kl_host_opts *o, int *index);

/* Choose the path (kl_host_choose); for OpenCL create context and queue on the chosen device and
 * settle the build options (-cl-std=CL1.2, the work-group size, no fast-math options, plus the extra
 * build options). No program is built here: each is built when first needed (kl_host_build_impact,
 * kl_rollout_create), so that a command pays only for the programs it runs (a GPU driver's first build
 * of one takes tens of seconds). KELVIN_ERR_OPENCL carries the failing call. Opening an open handle
 * first closes it. */
kelvin_status kl_host_open(kl_host *h, const kl_host_opts *o);

/* Build the impact program (kernels/impact.cl with its headers) and its kernel if the handle has not
 * yet: kl_impact_run calls it; call it first to time the build apart. KELVIN_OK at once on the OpenMP
 * path or when built. KELVIN_ERR_BUILD carries the build log (named by kernels/ file and line); the
 * handle stays open, and a later call tries again. */
kelvin_status kl_host_build_impact(kl_host *h);

/* 1 if the handle runs batches on an OpenCL device, 0 if on the OpenMP twin (or not open). */
int kl_host_is_opencl(const kl_host *h);

/* One line saying which path runs and why, e.g. "OpenCL device 0:0 'NAME' (PLATFORM, CPU, 2 compute
 * units)" or "OpenMP twin on the host, 2 threads (no OpenCL device with double precision)". "" when
 * not open; never NULL. The CLI prints it on stderr. */
const char *kl_host_notice(const kl_host *h);

/* The chosen device, or NULL on the OpenMP path. */
const kl_device_info *kl_host_device(const kl_host *h);

/* Wall time of the handle's last program build [s] (0 on the OpenMP path or before any build). */
double kl_host_build_seconds(const kl_host *h);

/* OpenMP threads the twin uses. */
int kl_host_threads(const kl_host *h);

/* Context and queue of the OpenCL path (NULL on the OpenMP path); owned by h. */
cl_context kl_host_context(const kl_host *h);
cl_command_queue kl_host_queue(const kl_host *h);

/* "GPU", "CPU", "accelerator", "custom" or "other" for a CL_DEVICE_TYPE_* mask. */
const char *kl_device_type_str(cl_device_type t);

/* Build an OpenCL program from source text src (named name in messages, e.g. "kernels/impact.cl") on
 * the open device with the handle's build options; *out = NULL on failure. KELVIN_ERR_BUILD's message
 * holds the device's build log. Internal entry point: kl_host_open uses it, and tests pass broken
 * sources through it. The caller releases *out. */
kelvin_status kl_host_build(kl_host *h, const char *name, const char *src, cl_program *out);

/* Share the handle's batches with a group of processes (include/kelvin/shard.h; copied, the hooks' ctx
 * stays the caller's); NULL or a group of one: none. Kept across kl_host_open. */
void kl_host_set_shard(kl_host *h, const kelvin_shard *sh);

/* The handle's shard, or NULL if none (a group of more than one only). */
const kelvin_shard *kl_host_shard(const kl_host *h);

#endif
