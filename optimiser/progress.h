/* optimiser/progress.h: the pipeline's progress reports and stop requests (kelvin_progress_fn,
 * include/kelvin/kelvin.h) with the throttle every stage shares. Two kinds of line: a notice (a stage
 * begins or ends, a pass is started or done: always passed on) and a tick (the periodic report inside
 * a stage: text indented by two spaces, passed on at most every KL_PROGRESS_TICK seconds). Once the
 * callback has asked to stop, nothing more is reported and every later call answers "stop".
 *
 * Runs across processes (docs/design.md section 11): ranks would reach a stop at different points (the
 * callback is each rank's own, ticks follow each rank's clock) and leave the others waiting in a collective.
 * With defer set (kl_progress_defer: the handle has a shard) a stop asked is only recorded in stopped and every
 * call answers "go on"; the rank's next rollout batch (kl_rollout_stop_flag on &stopped) or an agreement at the
 * end of a stage (kl_progress_agree) turns it into KELVIN_ERR_STOPPED on every rank at once. */
#ifndef KL_OPTIMISER_PROGRESS_H
#define KL_OPTIMISER_PROGRESS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/clock.h"
#include "core/shard.h"
#include "kelvin/kelvin.h"

#define KL_PROGRESS_TICK 0.25 /* seconds between ticks */

typedef struct kl_progress {
  kelvin_progress_fn fn; /* NULL: none (never stops) */
  void *ctx;
  double f0, f1;         /* the share of the whole operation the current stage covers */
  double last;           /* kl_now() of the last call */
  int stopped;           /* the callback asked to stop */
  int defer;             /* a stop is recorded, not answered (a sharded run, above) */
} kl_progress;

static inline kl_progress kl_progress_of(kelvin_progress_fn fn, void *ctx)
{
  kl_progress p = {fn, ctx, 0.0, 1.0, -1e300, 0, 0};
  return p;
}

/* With a shard (sh sharded: kl_shard_on), record stops instead of answering them (above). */
static inline void kl_progress_defer(kl_progress *p, const kelvin_shard *sh) { p->defer = kl_shard_on(sh); }

/* Collective with a shard: the group agrees on st, a stop recorded on this rank (deferred) counting as
 * KELVIN_ERR_STOPPED with "<what>: stopped by the caller"; every rank returns the lowest failing rank's status
 * and msg "rank R: ...". A rank that failed itself with that status (not a stop) keeps its own message: work
 * done alike on every rank (a 3-D run) fails alike, and rank 0's message, which the caller reports or records
 * (a correction's note), is then one rank's message word for word. Without a shard: st. */
static inline kelvin_status kl_progress_agree(const kl_progress *p, const kelvin_shard *sh, kelvin_status st,
                                              const char *what, char *msg, int cap)
{
  if (!kl_shard_on(sh)) return st;
  if (st == KELVIN_OK && p && p->stopped) {
    st = KELVIN_ERR_STOPPED;
    snprintf(msg, (size_t)cap, "%s: stopped by the caller", what);
  }
  char *own = st != KELVIN_OK && st != KELVIN_ERR_STOPPED ? malloc((size_t)cap) : NULL;
  if (own) snprintf(own, (size_t)cap, "%s", msg);
  const kelvin_status a = kl_shard_agree(sh, st, msg, (size_t)cap);
  if (own && a == st) snprintf(msg, (size_t)cap, "%s", own);
  free(own);
  return a;
}

/* The clock a time limit reads: kl_now(), and with a shard rank 0's kl_now() on every rank, so that a stage
 * limited in time stops at the same iteration on every rank (docs/design.md section 11). Collective with a
 * shard: every rank reads it at the same point. Rank 0's time travels as the message of its agreement hook, in
 * hexadecimal (exact); if the hook fails, this rank's own clock. */
static inline double kl_progress_clock(const kelvin_shard *sh)
{
  const double now = kl_now();
  if (!kl_shard_on(sh)) return now;
  int code = sh->rank == 0;
  char msg[64];
  snprintf(msg, sizeof msg, "%a", now);
  double t0 = now;
  if (sh->agree(sh->ctx, &code, msg, sizeof msg) != 0 || sscanf(msg, "%la", &t0) != 1) return now;
  return t0;
}

/* Report a notice (tick = 0) or a tick (tick = 1: dropped unless KL_PROGRESS_TICK has passed since the
 * last call; "  " is put before its text); fraction in [0, 1] of the current stage (passed on as its
 * share [f0, f1] of the whole), or negative if unknown. Returns nonzero when the operation must stop. */
static inline int kl_progress_say(kl_progress *p, int tick, double fraction, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
static inline int kl_progress_say(kl_progress *p, int tick, double fraction, const char *fmt, ...)
{
  if (!p || !p->fn) return 0;
  if (p->stopped) return !p->defer;
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
  return p->stopped && !p->defer;
}

#endif
