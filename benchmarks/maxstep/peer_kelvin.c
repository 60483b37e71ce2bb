/* benchmarks/maxstep/peer_kelvin.c: kelvin's variable-step ball (engine/ball.h) as a runner.
 * The output step is only a reporting period: kl_ball_advance lands exactly on each output instant
 * and follows impacts and separations inside it. The contact force reported at an output is the
 * instantaneous force there; the exact per-contact peak force and penetration come from its log. */
#include <stdio.h>
#include <stdlib.h>

#include "benchmarks/maxstep/mx.h"
#include "engine/ball.h"
#include "kernels/kl_impact.h"

/* drop the ball in kelvin's engine, one sample per output instant (mx.h) */
int mx_kelvin_run(const mx_case *c, int v, double h, mx_trace *tr)
{
  kl_ball_model m;
  kl_ball_default(&m);
  m.m = c->m;
  m.R = c->R;
  m.g = c->g;
  m.K = c->K;
  m.cr = c->cr;
  m.rule = (v == MX_KELVIN_FORCE) ? KL_SEP_FORCE : KL_SEP_PENETRATION;
  if (c->model == MX_HC) {
    m.model = KL_MODEL_HC;
    m.n = c->n;
    m.law = c->law;
  }
  char msg[160];
  if (kl_ball_check(&m, msg, (int)sizeof msg) != KELVIN_OK) {
    snprintf(tr->err, sizeof tr->err, "kelvin: %s", msg);
    return -1;
  }
  kl_ball_data *d = malloc(sizeof *d); /* ~400 KB: too large for the stack */
  if (!d) {
    snprintf(tr->err, sizeof tr->err, "kelvin: out of memory for kl_ball_data");
    return -1;
  }
  kl_ball_reset(&m, d, c->z0, 0.0);
  const long nout = mx_nout(c, h);
  mx_trace_push(tr, 0.0, d->z, d->vz, 0.0);
  mx_trace_begin(tr);
  for (long k = 1; k <= nout; ++k) {
    const double t = (double)k * h; /* k h, not a running sum: no drift of the output instants */
    if (kl_ball_advance(&m, d, t) != KELVIN_OK) tr->bad = 1;
    if (mx_trace_push(tr, d->t, d->z, d->vz, kl_ball_force(&m, d)) || tr->bad) break;
  }
  mx_trace_end(tr);
  tr->nstep = d->nsub;
  tr->nfev = -1;
  tr->fpeak_log = 0.0;
  tr->dmax_log = 0.0;
  for (int i = 0; i < d->ncontact; ++i) {
    if (d->contact[i].fpeak > tr->fpeak_log) tr->fpeak_log = d->contact[i].fpeak;
    if (d->contact[i].dmax > tr->dmax_log) tr->dmax_log = d->contact[i].dmax;
  }
  if (tr->apex_log) {
    tr->napex_log = d->napex;
    for (int i = 0; i < d->napex; ++i) tr->apex_log[i] = d->apex[i];
  }
  free(d);
  return 0;
}
