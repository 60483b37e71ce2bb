/* host/host_impl.h: the kl_host handle and the OpenCL error macro, shared by the host/ sources only. */
#ifndef KL_HOST_HOST_IMPL_H
#define KL_HOST_HOST_IMPL_H

#include "host/host.h"

#define KL_HOST_MSG 16384 /* room for a build log */

struct kl_host {
  /* device list (kl_host_devices), cached */
  kl_device_info *dev;
  int ndev;
  int listed;
  /* open state */
  int opencl;             /* 1: OpenCL path open; 0: OpenMP twin (or closed) */
  int chosen;             /* index into dev, -1 for the twin */
  cl_context ctx;
  cl_command_queue q;
  cl_program prog_impact;
  cl_kernel k_impact;
  cl_kernel k_fast;       /* kl_impact_batch_fast of kernels/impact.cl (host/impact_batch.c, run_fast) */
  int wgs;                /* work-group size of the impact kernel (-DKL_WGS) */
  size_t chunk;           /* most scenarios per launch (option) */
  int threads;            /* OpenMP threads */
  double build_s;         /* last program build [s] */
  int blas_used;          /* CLBlast compiled programs for our context (cache to clear) */
  char build_opts[2048];  /* options passed to clBuildProgram */
  char notice[512];
  char msg[KL_HOST_MSG];
  kelvin_shard shard;     /* the group this handle's batches are shared with (kl_host_set_shard); size 0: none */
  /* the fast kernel's lists, kept across batches (host/impact_batch.c, fast_room) */
  void *fast_ws;          /* host: the sorted list, the sort's keys and counts */
  size_t fast_ws_bytes;
  cl_mem fast_list;       /* device: the sorted list, written from fast_ws */
  size_t fast_list_bytes;
  cl_mem fast_declined;   /* device: one int, the rows the fast kernel declined */
  int fast_only;          /* tests: the general kernel leaves every row of a fast kind alone, KL_PENDING where the
                           * fast kernels declined it (tests/impact_parity_test.c) */
};

/* Record a message on h (printf format) and return st. */
kelvin_status kl_host_fail(kl_host *h, kelvin_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Record a failed OpenCL call: "<clCall> failed: <CL_NAME> (<code>) at <file>:<line> on '<device>'". */
void kl_host_clfail(kl_host *h, const char *call, const char *file, int line, int err);

/* Check one OpenCL call: on error record call, file, line and error name on h, set st to
 * KELVIN_ERR_OPENCL and jump to the function's `cleanup` label. Calls that return an object report
 * through their errcode argument: KL_CL(h, (buf = clCreateBuffer(..., &err), err)). */
#define KL_CL(h, call)                                                                                 \
  do {                                                                                                 \
    const cl_int kl_cl_err_ = (call);                                                                  \
    if (kl_cl_err_ != CL_SUCCESS) {                                                                    \
      kl_host_clfail((h), #call, __FILE__, __LINE__, kl_cl_err_);                                      \
      st = KELVIN_ERR_OPENCL;                                                                          \
      goto cleanup;                                                                                    \
    }                                                                                                  \
  } while (0)

/* Work-group sizes for a device from the tuning table (host/device.c), clamped to its maximum: of the
 * impact kernel, and of the rollout kernel (KELVIN_ROLLOUT_WGS overrides the latter at launch). */
int kl_device_wgs(const kl_device_info *d);
/* Lanes of the fast kernel's loop over a work-item's rows (-DKL_FAST_WIDTH, kernels/impact.cl): the device's
 * preferred vector width for double when it is 2, 4 or 8 (pocl: 4 with AVX2, 8 with AVX-512), else 4. On pocl
 * 3.1 with AVX-512 (2 cores of an AMD EPYC, 1e6 rows, ns a row with 4 lanes -> 8): Emden-Fowler 36.7 -> 18.0,
 * Hunt-Crossley 43.4 -> 33.9, the mix 44.6 -> 34.9 */
int kl_device_fast_width(const kl_device_info *d);
/* Rows of a work-item of the fast kernel (-DKL_FAST_ROWS, kernels/impact.cl): KL_FAST_ROWS_CPU on a CPU device (a
 * work-group is a loop there, a work-item's rows the vectorised loop), 1 elsewhere (a GPU's work-items are its
 * lanes) */
#define KL_FAST_ROWS_CPU 16
int kl_device_fast_rows(const kl_device_info *d);
int kl_device_rollout_wgs(const kl_device_info *d);

/* Build options a device needs from the tuning table (host/device.c), e.g. "-DKL_INLINE_ALL"; "" if none. */
const char *kl_device_build_options(const kl_device_info *d);

/* Enumerate all devices into a malloc'd array (*list, *n); messages on h. */
kelvin_status kl_device_enumerate(kl_host *h, kl_device_info **list, int *n);

/* Index of the device that spec names in list, or -1 with a message on h (KELVIN_ERR_NODEVICE). */
kelvin_status kl_device_match(kl_host *h, const kl_device_info *list, int n, const char *spec, const char *origin,
                              int *index);

/* The default device: the first GPU with fp64, else the first device with fp64, else -1. */
int kl_device_default(const kl_device_info *list, int n);

#endif
