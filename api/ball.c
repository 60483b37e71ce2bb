/* api/ball.c: the ball on a plane of the public API (include/kelvin/ball.h) over engine/ball.h. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_impl.h"
#include "engine/ball.h"
#include "kelvin/ball.h"
#include "kelvin/engine.h"

struct kelvin_ball {
  kl_ball_model m;
  int started;
  kelvin_progress_fn progress;
  void *ctx;
  double t_call0, t_call1; /* the advance call under way: from, to [s] */
  double wall_last;        /* wall time of the last progress call [s]; -1 before the first */
  int stopped;             /* the callback asked to stop */
  char msg[KL_API_MSG];
  kl_ball_data d; /* large (the logs): last */
};

void kelvin_ball_model_init(kelvin_ball_model *m)
{
  if (!m) return;
  kl_ball_model k;
  kl_ball_default(&k);
  memset(m, 0, sizeof *m);
  m->m = k.m;
  m->R = k.R;
  m->g = k.g;
  m->K = k.K;
  m->n = k.n;
  m->cr = k.cr;
  m->model = (kelvin_model)k.model;
  m->law = KELVIN_LAW_EXACT;
  m->rule = (kelvin_rule)k.rule;
  m->tol = k.tol;
  m->gen_c = k.gen.c;
  m->gen_n2 = k.gen.n2;
  m->gen_m = k.gen.m;
}

kelvin_status kelvin_ball_create(kelvin_ball **out)
{
  if (!out) return KELVIN_ERR_ARG;
  *out = calloc(1, sizeof **out);
  return *out ? KELVIN_OK : KELVIN_ERR_NOMEM;
}

void kelvin_ball_free(kelvin_ball *b) { free(b); }

const char *kelvin_ball_errmsg(const kelvin_ball *b) { return b ? b->msg : ""; }

static void to_internal(const kelvin_ball_model *p, kl_ball_model *k)
{
  k->m = p->m;
  k->R = p->R;
  k->g = p->g;
  k->K = p->K;
  k->n = p->n;
  k->cr = p->cr;
  k->model = (int)p->model;
  k->law = (int)p->law;
  k->rule = (int)p->rule;
  k->tol = p->tol;
  k->gen.k = p->K;
  k->gen.n1 = p->n;
  k->gen.c = p->gen_c;
  k->gen.n2 = p->gen_n2;
  k->gen.m = p->gen_m;
}

kelvin_status kelvin_ball_check(kelvin_ball *b, const kelvin_ball_model *m, double z0, double vz0, double t_end)
{
  if (!b) return KELVIN_ERR_ARG;
  b->msg[0] = '\0';
  if (!m) return kl_api_fail(b->msg, KELVIN_ERR_ARG, "kelvin_ball_check: the model is NULL");
  kl_ball_model k;
  to_internal(m, &k);
  char sub[512];
  if (kl_ball_check(&k, sub, sizeof sub) != KELVIN_OK) return kl_api_fail(b->msg, KELVIN_ERR_ARG, "%s", sub);
  if (!(isfinite(z0) && z0 >= 0)) return kl_api_fail(b->msg, KELVIN_ERR_ARG, "height: must be >= 0 m, got %g", z0);
  if (!isfinite(vz0)) return kl_api_fail(b->msg, KELVIN_ERR_ARG, "velocity: must be finite, got %g", vz0);
  if (!(isfinite(t_end) && t_end > 0)) return kl_api_fail(b->msg, KELVIN_ERR_ARG, "duration: must be > 0 s, got %g", t_end);
  /* bounded work: refuse up front what the engine cannot resolve in finite time. The closed form of the
   * first impact (kelvin_impact) gives its duration and depth; the static sag under gravity bounds the
   * depth of a ball at rest. */
  const double sag = pow(k.m * k.g / k.K, 1.0 / k.n);
  if (!(sag < k.R))
    return kl_api_fail(b->msg, KELVIN_ERR_ARG,
                       "the ball would sink %.3g m into the plane under its own weight (m g / K)^(1/n), more than its "
                       "radius %.3g m: the contact stiffness %.3g is far too low (check the stiffness, the radius and the "
                       "materials)",
                       sag, k.R, k.K);
  const double v2 = vz0 * vz0 + 2.0 * k.g * z0, vin = sqrt(v2), tres = 64.0 * DBL_EPSILON * t_end;
  if (!isfinite(v2)) /* the fall's time and speed overflow double precision (a height of 1e308 m) */
    return kl_api_fail(b->msg, KELVIN_ERR_ARG,
                       "height: %g m at %g m/s gives an impact speed sqrt(v^2 + 2 g h) beyond double precision", z0,
                       vz0);
  if (!(vin > 0)) return KELVIN_OK;
  const kelvin_impact_in in = {k.m, k.K, k.n, k.cr, vin, k.model == KELVIN_MODEL_KV ? k.m * k.g : 0.0, m->model, m->law,
                               m->rule, k.gen.c, k.gen.n2, k.gen.m};
  kelvin_impact_out io;
  if (kelvin_impact(&in, &io) != KELVIN_OK) return KELVIN_OK; /* the engine reports what the closed form cannot */
  if (!(io.tc > tres))
    return kl_api_fail(b->msg, KELVIN_ERR_ARG,
                       "the contact lasts %.3g s, below the time resolution of double precision at t = %.3g s (%.3g s): "
                       "the engine could not resolve it; use a larger mass or radius, a lower stiffness or a shorter "
                       "duration",
                       io.tc, t_end, tres);
  if (!(io.dmax < k.R))
    return kl_api_fail(b->msg, KELVIN_ERR_ARG,
                       "the first impact would penetrate %.3g m, more than the ball's radius %.3g m: the contact "
                       "stiffness %.3g is far too low for a %.3g m/s impact",
                       io.dmax, k.R, k.K, vin);
  /* the work (docs/design.md section 8, "Bounded physics"): the impacts until t_end or until the ball rests
   * (a bounce's flight 2 v / g shorter than the contact; the rebound speed cr_eff v), times the sub-steps of
   * one impact: 3 in closed form (Kelvin-Voigt), 2 + 1.2 tol^(-1/5) under the order-5 error control
   * (Hunt-Crossley, Emden-Fowler: 73 measured at tol 1e-9, 100 s of elastic bounces in 8092 sub-steps) */
  const double spi = m->model == KELVIN_MODEL_KV ? 3.0 : 2.0 + 1.2 * pow(k.tol, -0.2);
  const double ce = isfinite(io.cr_eff) && io.cr_eff > 0 && io.cr_eff <= 1 ? io.cr_eff : k.cr;
  const double nmax = 2.0 * KELVIN_WORK_LIMIT / spi;
  double n = 1, t = (vz0 + vin) / k.g, v = vin;
  int capped = 0;
  if (!(k.g > 0))
    n = 1;
  else if (ce == 1.0) /* elastic: a bounce every 2 vin / g + tc until t_end */
    n = fmax(1.0, floor((t_end - t) / (2.0 * vin / k.g + io.tc)) + 1.0);
  else
    for (v *= ce, t += io.tc + 2.0 * v / k.g; t < t_end && 2.0 * v / k.g > io.tc && n < nmax;
         v *= ce, t += io.tc + 2.0 * v / k.g)
      capped = (n += 1) >= nmax;
  if (n * spi > KELVIN_WORK_LIMIT)
    return kl_api_fail(b->msg, KELVIN_ERR_LIMIT,
                       "%s%.3g sub-steps over %g s (%.3g impacts of about %.0f sub-steps each, the contact lasting "
                       "%.3g s, restitution %.9g), over the work limit %.3g sub-steps: shorten the duration",
                       capped ? "more than " : "about ", n * spi, t_end, n, spi, io.tc, ce, KELVIN_WORK_LIMIT);
  return KELVIN_OK;
}

kelvin_status kelvin_ball_start(kelvin_ball *b, const kelvin_ball_model *m, double z0, double vz0, double t_end)
{
  if (!b) return KELVIN_ERR_ARG;
  b->started = 0;
  const kelvin_status st = kelvin_ball_check(b, m, z0, vz0, t_end);
  if (st != KELVIN_OK) return st;
  to_internal(m, &b->m);
  kl_ball_reset(&b->m, &b->d, z0, vz0);
  b->started = 1;
  return KELVIN_OK;
}

kelvin_status kelvin_ball_set_progress(kelvin_ball *b, kelvin_progress_fn fn, void *ctx)
{
  if (!b) return KELVIN_ERR_ARG;
  b->progress = fn;
  b->ctx = ctx;
  b->wall_last = -1;
  return KELVIN_OK;
}

/* the engine's check between sub-steps: the caller's callback, a few times a second at most */
static int check(void *ctx, const kl_ball_data *d)
{
  kelvin_ball *b = ctx;
  b->stopped = kl_api_advance_tick(b->progress, b->ctx, &b->wall_last, b->t_call0, b->t_call1, d->t, d->nsub);
  return b->stopped;
}

kelvin_status kelvin_ball_advance(kelvin_ball *b, double t)
{
  if (!b) return KELVIN_ERR_ARG;
  b->msg[0] = '\0';
  if (!b->started) return kl_api_fail(b->msg, KELVIN_ERR_ARG, "kelvin_ball_advance: no rollout (kelvin_ball_start first)");
  if (!(t >= b->d.t) || !isfinite(t))
    return kl_api_fail(b->msg, KELVIN_ERR_ARG, "kelvin_ball_advance: t = %g is before the current time %g", t, b->d.t);
  b->t_call0 = b->d.t;
  b->t_call1 = t;
  b->stopped = 0;
  const kelvin_status st = kl_ball_advance_checked(&b->m, &b->d, t, b->progress ? check : NULL, b);
  if (st == KELVIN_ERR_STOPPED)
    return kl_api_fail(b->msg, st, "stopped at t = %.9g s, before %.9g s (the caller asked)", b->d.t, t);
  if (st != KELVIN_OK && !(isfinite(b->d.z) && isfinite(b->d.vz) && isfinite(b->d.t)))
    return kl_api_fail(b->msg, KELVIN_ERR_DIVERGED, "the run diverged: the state went non-finite at t = %g s", b->d.t);
  if (st != KELVIN_OK)
    return kl_api_fail(b->msg, st, "more than 1e8 sub-steps before t = %g s (an event storm)", t);
  return KELVIN_OK;
}

kelvin_status kelvin_ball_get_state(const kelvin_ball *b, kelvin_ball_state *s)
{
  if (s) memset(s, 0, sizeof *s);
  if (!b || !s || !b->started) return KELVIN_ERR_ARG;
  const kl_ball_data *d = &b->d;
  s->t = d->t;
  s->height = d->z;
  s->velocity = d->vz;
  s->contact = d->phase == KL_BALL_CONTACT;
  s->penetration = s->contact ? -d->z : 0.0;
  s->rate = s->contact ? -d->vz : 0.0;
  s->force = kl_ball_force(&b->m, d);
  s->energy = kl_ball_energy(&b->m, d);
  return KELVIN_OK;
}

int kelvin_ball_ncontact(const kelvin_ball *b) { return b && b->started ? b->d.ncontact : 0; }

kelvin_status kelvin_ball_get_contact(const kelvin_ball *b, int i, kelvin_ball_contact *c)
{
  if (c) memset(c, 0, sizeof *c);
  if (!b || !c || i < 0 || i >= kelvin_ball_ncontact(b)) return KELVIN_ERR_ARG;
  const kl_ball_contact *k = &b->d.contact[i];
  c->t0 = k->t0;
  c->t1 = k->t1;
  c->v_in = k->v_in;
  c->v_out = k->v_out;
  c->dmax = k->dmax;
  c->fpeak = k->fpeak;
  c->nsub = k->nsub;
  return KELVIN_OK;
}

int kelvin_ball_napex(const kelvin_ball *b) { return b && b->started ? b->d.napex : 0; }

kelvin_status kelvin_ball_get_apex(const kelvin_ball *b, int i, double *t, double *height)
{
  if (t) *t = NAN;
  if (height) *height = NAN;
  if (!b || i < 0 || i >= kelvin_ball_napex(b)) return KELVIN_ERR_ARG;
  if (t) *t = b->d.apex_t[i];
  if (height) *height = b->d.apex[i];
  return KELVIN_OK;
}

long kelvin_ball_overflow(const kelvin_ball *b) { return b && b->started ? b->d.contact_overflow + b->d.apex_overflow : 0; }

long kelvin_ball_substeps(const kelvin_ball *b) { return b && b->started ? b->d.nsub : 0; }
