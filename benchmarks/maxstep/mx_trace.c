/* benchmarks/maxstep/mx_trace.c: the sample buffer and the clock every runner shares (mx.h). */
#include <math.h>
#include <time.h>

#include "benchmarks/maxstep/mx.h"

/* seconds on CLOCK_MONOTONIC */
double mx_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* start the stepping clock */
void mx_trace_begin(mx_trace *tr) { tr->t_start = mx_now(); }

/* wall = seconds since mx_trace_begin */
void mx_trace_end(mx_trace *tr) { tr->wall = mx_now() - tr->t_start; }

/* append a sample; 1 = stop (buffer full, or the work counter past the cap: steps or evaluations,
 * so that where a run stops never depends on the machine's load) */
int mx_trace_push(mx_trace *tr, double t, double z, double vz, double f)
{
  if (tr->n >= tr->cap) return 1;
  tr->t[tr->n] = t;
  tr->z[tr->n] = z;
  tr->vz[tr->n] = vz;
  tr->f[tr->n] = f;
  tr->n++;
  if (tr->work_cap > 0 && tr->work > tr->work_cap) {
    tr->capped = 1;
    return 1;
  }
  return 0;
}

/* output steps of a run: round(tend / h), at least 1 */
long mx_nout(const mx_case *c, double h)
{
  const long n = lround(c->tend / h);
  return n < 1 ? 1 : n;
}
