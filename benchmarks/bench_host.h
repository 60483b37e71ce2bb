/* benchmarks/bench_host.h: how the benchmark programs open their OpenCL device (header only). */
#ifndef KL_BENCH_HOST_H
#define KL_BENCH_HOST_H

#include "host/host.h"

/* Create *h and open the device that --device SPEC names (device; NULL: KELVIN_DEVICE, else the default
 * choice). *h is NULL only if it could not be created (then KELVIN_ERR_NOMEM); on another failure the
 * message is on *h, which the caller destroys. */
static inline kelvin_status kl_bench_open(const char *device, kl_host **h)
{
  kl_host_opts o;
  kl_host_opts_default(&o);
  o.device = device;
  o.device_origin = "--device";
  *h = NULL;
  if (kl_host_create(h) != KELVIN_OK) {
    *h = NULL;
    return KELVIN_ERR_NOMEM;
  }
  return kl_host_open(*h, &o);
}

#endif
