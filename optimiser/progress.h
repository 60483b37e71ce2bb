/* optimiser/progress.h: the pipeline's progress reports and stop requests (kelvin_progress_fn,
 * include/kelvin/kelvin.h) with the throttle every stage shares. Two kinds of line: a notice (a stage
 * begins or ends, a pass is started or done: always passed on) and a tick (the periodic report inside
 * a stage: text indented by two spaces, passed on at most every KL_PROGRESS_TICK seconds). Once the
 * callback has asked to stop, nothing more is reported and every later call answers "stop". */
#ifndef KL_OPTIMISER_PROGRESS_H
#define KL_OPTIMISER_PROGRESS_H

#include <stdarg.h>
#include <stdio.h>

#include "core/clock.h"
#include "kelvin/kelvin.h"

#define KL_PROGRESS_TICK 0.25 /* seconds between ticks */

typedef struct kl_progress {
  kelvin_progress_fn fn; /* NULL: none (never stops) */
  void *ctx;
  double f0, f1;         /* the share of the whole operation the current stage covers */
  double last;           /* kl_now() of the last call */
  int stopped;           /* the callback asked to stop */
} kl_progress;

static inline kl_progress kl_progress_of(kelvin_progress_fn fn, void *ctx)
{
  kl_progress p = {fn, ctx, 0.0, 1.0, -1e300, 0};
  return p;
}

/* Report a notice (tick = 0) or a tick (tick = 1: dropped unless KL_PROGRESS_TICK has passed since the
 * last call; "  " is put before its text); fraction in [0, 1] of the current stage (passed on as its
 * share [f0, f1] of the whole), or negative if unknown. Returns nonzero when the operation must stop. */
static inline int kl_progress_say(kl_progress *p, int tick, double fraction, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
static inline int kl_progress_say(kl_progress *p, int tick, double fraction, const char *fmt, ...)
{
  if (!p || !p->fn) return 0;
  if (p->stopped) return 1;
  const double now = kl_now();
  if (tick && now - p->last < KL_PROGRESS_TICK) return 0;
  char buf[1024];
  int n = tick ? snprintf(buf, sizeof buf, "  ") : 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
  va_end(ap);
  p->last = now;
  if (fraction >= 0) fraction = p->f0 + (p->f1 - p->f0) * (fraction > 1 ? 1.0 : fraction);
  if (p->fn(p->ctx, fraction, buf) != 0) p->stopped = 1;
  return p->stopped;
}

#endif
