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

/* append a sample; 1 = stop (buffer full or past the wall cap) */
int mx_trace_push(mx_trace *tr, double t, double z, double vz, double f)
{
  if (tr->n >= tr->cap) return 1;
  tr->t[tr->n] = t;
  tr->z[tr->n] = z;
  tr->vz[tr->n] = vz;
  tr->f[tr->n] = f;
  tr->n++;
  /* the clock is read every 4096 samples only: reading it costs about as much as a cheap step */
  if ((tr->n & 4095) == 0 && mx_now() - tr->t_start > tr->wall_cap) {
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
