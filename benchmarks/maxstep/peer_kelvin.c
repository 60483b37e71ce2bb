/* benchmarks/maxstep/peer_kelvin.c: kelvin as a runner, twice.
 *   mx_kelvin_run    the 3-D engine (engine/world.h): a free 6-DoF sphere body (mass m, principal inertia
 *                    I) over a static plane body, both through the generic world pipeline (broad phase,
 *                    exact sphere-plane gap, onset location, closed-form or linearised contact sub-steps).
 *   mx_kelvin1d_run  the 1-DoF ball slice (engine/ball.h): exact flight and impact time, one closed-form
 *                    sub-step per Kelvin-Voigt contact. An extra, labelled row.
 * The output step is only a reporting period in both: the engine lands exactly on each output instant
 * and follows onsets and ends inside it. The force at an output is the instantaneous contact force
 * there; the internal per-step values are the contact log's peak force and penetration (every contact,
 * located exactly), and the log's exit speeds give the apexes v_out^2 / 2g (penetration rule only:
 * the no-tension rule leaves the ball inside the plane at separation).
 * The world starts a contact where conservative advancement stops, within onset_tol / 2 of touching,
 * and measures the penetration from there, so the ball also separates that gap above the plane and
 * each flight's apex is higher than v_out^2 / 2g by it (3e-14 m at the default onset_tol = 1e-12 m;
 * 3.1e-11 m at the earlier 1e-9 m): the "3-D tight" configuration sets hc_tol = 1e-12 to show what a
 * tighter Hunt-Crossley control costs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "benchmarks/maxstep/mx.h"
#include "engine/ball.h"
#include "engine/world.h"
#include "kernels/kl_impact.h"

/* the ball and the plane in a compiled world model, or NULL (tr->err says why) */
static kl_world_model *ball_world(const mx_case *c, int v, mx_trace *tr)
{
  kl_world_model *m = kl_world_create();
  if (!m) {
    snprintf(tr->err, sizeof tr->err, "kelvin: out of memory for the world model");
    return NULL;
  }
  m->gravity[0] = 0.0;
  m->gravity[1] = 0.0;
  m->gravity[2] = -c->g;
  m->model = (c->model == MX_HC) ? KL_MODEL_HC : KL_MODEL_KV;
  m->n = c->n;
  m->law = c->law;
  m->rule = (v == MX_KELVIN_FORCE) ? KL_SEP_FORCE : KL_SEP_PENETRATION;
  /* the Hunt-Crossley step control's tolerance (default 1e-8) */
  if (v == MX_KELVIN_TIGHT) m->hc_tol = 1e-12;
  if (v > MX_KELVIN_CHIFIX) m->hc_tol = pow(10.0, -0.5 * (double)(v - MX_KELVIN_CHIFIX));
  kl_body_def b;
  kl_world_default_body(&b);
  b.type = KL_BODY_STATIC;
  b.K = c->K;
  b.cr = c->cr;
  const int plane = kl_world_add_body(m, &b);
  kl_shape_def s;
  kl_world_default_shape(&s);
  s.type = KL_SHAPE_PLANE;
  kl_world_add_shape(m, plane, &s);
  kl_world_default_body(&b);
  b.mass = c->m;
  b.inertia[0] = b.inertia[1] = b.inertia[2] = c->I;
  b.pos[2] = c->z0 + c->R;
  b.K = c->K;
  b.cr = c->cr;
  const int ball = kl_world_add_body(m, &b);
  kl_world_default_shape(&s);
  s.type = KL_SHAPE_SPHERE;
  s.size[0] = c->R;
  kl_world_add_shape(m, ball, &s);
  /* the pair's material given explicitly: K, cr, D from cr (paper eq. 10), frictionless */
  const int pair = kl_world_add_pair(m, plane, ball, c->K, c->cr, 0.0, 0.0);
  /* Simbody's model: chi from the damping law at the first impact's speed, for every impact */
  if (v > MX_KELVIN_CHIFIX && c->model == MX_HC)
    kl_world_pair_chi(m, pair, kl_hc_chi(c->law, c->cr, sqrt(2.0 * c->g * c->z0)));
  char msg[200];
  if (plane != 0 || ball != 1 || kl_world_compile(m, msg, (int)sizeof msg) != KELVIN_OK) {
    snprintf(tr->err, sizeof tr->err, "kelvin: %.180s", plane != 0 || ball != 1 ? "could not add the bodies" : msg);
    kl_world_free(m);
    return NULL;
  }
  return m;
}

/* drop the ball in kelvin's 3-D engine, one sample per output instant (mx.h) */
int mx_kelvin_run(const mx_case *c, int v, double h, mx_trace *tr)
{
  kl_world_model *m = ball_world(c, v, tr);
  if (!m) return -1;
  kl_world_data *d = kl_world_data_create(m);
  if (!d) {
    snprintf(tr->err, sizeof tr->err, "kelvin: out of memory for the world data");
    kl_world_free(m);
    return -1;
  }
  const int ball = 1;
  const long nout = mx_nout(c, h);
  char msg[200];
  double f[3];
  mx_trace_push(tr, 0.0, d->xpos[3 * ball + 2] - c->R, d->vel[3 * ball + 2], 0.0);
  mx_trace_begin(tr);
  for (long k = 1; k <= nout; ++k) {
    const double t = (double)k * h; /* k h, not a running sum: no drift of the output instants */
    if (kl_world_advance(m, d, t, msg, (int)sizeof msg) != KELVIN_OK) {
      snprintf(tr->err, sizeof tr->err, "kelvin: %.180s", msg);
      tr->bad = 1;
    }
    kl_world_contact_force(m, d, ball, f);
    tr->work = d->nsub;
    if (mx_trace_push(tr, d->t, d->xpos[3 * ball + 2] - c->R, d->vel[3 * ball + 2], f[2]) || tr->bad) break;
  }
  mx_trace_end(tr);
  tr->nstep = d->nsub;
  tr->nfev = -1;
  tr->fpeak_int = 0.0;
  tr->dmax_int = 0.0;
  for (int i = 0; i < d->nlog; ++i) {
    if (d->log[i].fpeak > tr->fpeak_int) tr->fpeak_int = d->log[i].fpeak;
    if (d->log[i].dmax > tr->dmax_int) tr->dmax_int = d->log[i].dmax;
  }
  for (int i = 0; i < d->ncon; ++i) { /* a contact still open at the end */
    if (d->con[i].fpeak > tr->fpeak_int) tr->fpeak_int = d->con[i].fpeak;
    if (d->con[i].dmax > tr->dmax_int) tr->dmax_int = d->con[i].dmax;
  }
  if (d->nlog_overflow || d->ncon_overflow) {
    snprintf(tr->err, sizeof tr->err, "kelvin: contact log or contact array overflowed");
    tr->bad = 1;
  }
  tr->napex_log = 0;
  if (tr->apex_log && m->rule == KL_SEP_PENETRATION)
    for (int i = 0; i < d->nlog && i < MX_APEX_LOG_MAX; ++i)
      tr->apex_log[tr->napex_log++] = d->log[i].v_out * d->log[i].v_out / (2.0 * c->g);
  kl_world_data_free(d);
  kl_world_free(m);
  return 0;
}

/* drop the ball in kelvin's 1-DoF slice, one sample per output instant (mx.h) */
int mx_kelvin1d_run(const mx_case *c, int v, double h, mx_trace *tr)
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
    const double t = (double)k * h;
    if (kl_ball_advance(&m, d, t) != KELVIN_OK) tr->bad = 1;
    tr->work = d->nsub;
    if (mx_trace_push(tr, d->t, d->z, d->vz, kl_ball_force(&m, d)) || tr->bad) break;
  }
  mx_trace_end(tr);
  tr->nstep = d->nsub;
  tr->nfev = -1;
  tr->fpeak_int = 0.0;
  tr->dmax_int = 0.0;
  for (int i = 0; i < d->ncontact; ++i) {
    if (d->contact[i].fpeak > tr->fpeak_int) tr->fpeak_int = d->contact[i].fpeak;
    if (d->contact[i].dmax > tr->dmax_int) tr->dmax_int = d->contact[i].dmax;
  }
  tr->napex_log = 0;
  if (tr->apex_log && m.rule == KL_SEP_PENETRATION)
    for (int i = 0; i < d->ncontact && i < MX_APEX_LOG_MAX; ++i)
      tr->apex_log[tr->napex_log++] = d->contact[i].v_out * d->contact[i].v_out / (2.0 * c->g);
  free(d);
  return 0;
}
