/* api/api_impl.h: the handles of the public API (include/kelvin/ headers) as the api/ files share them
 * (the grinding problem's: api/grind_impl.h). Never installed. */
#ifndef KL_API_IMPL_H
#define KL_API_IMPL_H

#include <stdarg.h>

#include "host/host.h"
#include "kelvin/batch.h"

#define KL_API_MSG 4096

struct kelvin_device {
  kl_host *h;
  int open;
  char msg[KL_API_MSG];
  char spec_name[64]; /* the spec's name in messages (kelvin_device_set_spec_name); "" for the default */
};

/* Record "fmt..." as the message (msg, KL_API_MSG bytes) and return st. */
kelvin_status kl_api_fail(char *msg, kelvin_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A progress tick of an engine's advance from t0 to t1, now at time t after nsub sub-steps (api/engine.c,
 * api/ball.c): fn is called at most every 0.2 s of wall time (*wall_last, -1 before the first call)
 * with the share (t - t0) / (t1 - t0) and "t = ... s, N sub-steps"; its return value (nonzero: stop),
 * 0 between calls. */
int kl_api_advance_tick(kelvin_progress_fn fn, void *ctx, double *wall_last, double t0, double t1, double t, long nsub);

#endif
