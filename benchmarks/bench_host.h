/* benchmarks/bench_host.h: how the benchmark programs open their OpenCL device (header only). */
#ifndef KL_BENCH_HOST_H
#define KL_BENCH_HOST_H

#include <stdio.h>

#include "host/host.h"

/* A handle open on the device that --device SPEC names (device; NULL: KELVIN_DEVICE, else the default
 * choice), or NULL after "prog: <why>" on stderr. */
static inline kl_host *kl_bench_open(const char *prog, const char *device)
{
  kl_host_opts o;
  kl_host_opts_default(&o);
  o.device = device;
  o.device_origin = "--device";
  kl_host *h = NULL;
  if (kl_host_create(&h) != KELVIN_OK || kl_host_open(h, &o) != KELVIN_OK) {
    fprintf(stderr, "%s: %s\n", prog, h ? kl_host_errmsg(h) : "out of memory");
    kl_host_destroy(h);
    return NULL;
  }
  return h;
}

#endif
