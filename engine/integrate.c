/* engine/integrate.c: the variable-time-step integrator of the 3-D engine (see world.h for the method;
 * paper section 2 and Algorithm 1, docs/design.md section 3). One sub-step:
 *   1. narrow phase at the start; active contacts take their features' new geometry, new touching
 *      and approaching features become contacts (parameters blended per pair, docs/design.md 2.4);
 *   2. the sub-step length: output instant, rotation and holder limits, conservative advancement of
 *      the pairs not in contact, the coupled-contact limit, and every contact's located end;
 *   3. each contact's 1-D closed form over the step gives its impulse and first moment, friction its
 *      implicit regularised-Coulomb impulse, and the bodies move (exact ballistic + the contact terms);
 *   4. an onset missed inside the step (a new penetration beyond onset_tol) is located by Illinois
 *      iteration on the step length, and the step is cut there. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/util3.h"
#include "engine/world_impl.h"
#include "kernels/kl_contact_static.h"
#include "kernels/kl_impact.h"
#include "kernels/kl_material.h"
#include "kernels/kl_xrb.h"

#define MAX_SUBSTEPS_PER_CALL 100000000L
#define ROT_STEP 0.05       /* rad of free rotation per sub-step (semi-implicit Euler accuracy) */
#define HOLDER_STEP 0.025   /* fraction of the holder's period per sub-step (explicit spring) */

//------------------------------------------------------------------------------------------------------
// body kinematics

/* rotation matrices and world inverse inertia of every body */
static void frames(const kl_world_model *m, const kl_world_data *d, kl_scratch *S)
{
  for (int b = 0; b < m->nbody; ++b) {
    q_to_m3(S->R + 9 * b, d->xquat + 4 * b);
    if (m->body_type[b] == KL_BODY_DYNAMIC)
      inv_inertia_world(S->Iinv + 9 * b, S->R + 9 * b, m->body_inertia + 3 * b);
    else
      memset(S->Iinv + 9 * b, 0, 9 * sizeof(double));
  }
}

/* external force on body b at time t: gravity and the holder's spring-damper (world.c); and its rate
 * (df/dt along the anchor's motion and the body's velocity) */
static void ext_force(const kl_world_model *m, const kl_world_data *d, int b, double t, double f[3], double fdot[3])
{
  v3_scl(f, m->gravity, m->body_mass[b]);
  v3_zero(fdot);
  if (!m->body_holder[b]) return;
  double fh[3], fhd[3];
  kl_world_holder(m, d, b, t, fh, fhd, NULL);
  v3_add(f, f, fh);
  v3_add(fdot, fdot, fhd);
}

/* velocity of the body point p */
static void point_vel(const kl_world_model *m, const kl_world_data *d, int b, const double p[3], double v[3])
{
  if (m->body_type[b] == KL_BODY_STATIC) {
    v3_zero(v);
    return;
  }
  double r[3];
  v3_sub(r, p, d->xpos + 3 * b);
  v3_cross(v, d->angvel + 3 * b, r);
  v3_add(v, v, d->vel + 3 * b);
}

/* approach acceleration source of a contact point on body b: the external force on the body's centre
 * of mass. Velocity terms (centripetal, gyroscopic) are left out on purpose: the gap between two
 * surfaces does not follow the material point (a spinning ball's gap follows its centre only), and
 * each sub-step restarts the contact from the exact geometry anyway. */
static void point_acc(const kl_world_model *m, const kl_scratch *S, int b, double a[3])
{
  v3_zero(a);
  if (m->body_type[b] != KL_BODY_DYNAMIC) return;
  v3_addscl(a, S->fext + 6 * b, 1.0 / m->body_mass[b]); /* the sub-step start's (ext_force) */
}

/* velocity change of body b's point p per unit impulse J applied at q (sign s: +1 on body[0]) */
static void response(const kl_world_model *m, const kl_world_data *d, const kl_scratch *S, int b, const double q[3],
                     const double J[3], const double p[3], double du[3])
{
  v3_zero(du);
  if (m->body_type[b] != KL_BODY_DYNAMIC) return;
  double rq[3], rp[3], L[3], dw[3];
  v3_sub(rq, q, d->xpos + 3 * b);
  v3_sub(rp, p, d->xpos + 3 * b);
  v3_cross(L, rq, J);
  m3_mulv(dw, S->Iinv + 9 * b, L);
  v3_cross(du, dw, rp);
  v3_addscl(du, J, 1.0 / m->body_mass[b]);
}

/* relative velocity change at contact i (body[0] minus body[1]) per unit impulse along u at contact j */
static void rel_response(const kl_world_model *m, const kl_world_data *d, const kl_scratch *S, const kl_contact *ci,
                         const kl_contact *cj, const double u[3], double dr[3])
{
  double J0[3], J1[3], du[3];
  v3_copy(J0, u);
  v3_scl(J1, u, -1.0);
  v3_zero(dr);
  for (int s = 0; s < 2; ++s) {
    const int b = ci->body[s];
    double acc[3] = {0, 0, 0};
    for (int k = 0; k < 2; ++k)
      if (cj->body[k] == b) {
        response(m, d, S, b, cj->pos, k == 0 ? J0 : J1, ci->pos, du);
        v3_add(acc, acc, du);
      }
    v3_addscl(dr, acc, s == 0 ? 1.0 : -1.0);
  }
}

//------------------------------------------------------------------------------------------------------
// contact parameters and force law

/* blended (or explicit) parameters of the body pair (docs/design.md 2.4); chi 0: from the impact speed */
static void pair_params(const kl_world_model *m, int a, int b, double *K, double *cr, double *D, double *mu, double *chi)
{
  *chi = 0.0;
  for (int p = 0; p < m->npair; ++p) {
    const int x = m->pair_body[2 * p], y = m->pair_body[2 * p + 1];
    if ((x == a && y == b) || (x == b && y == a)) {
      *K = m->pair_K[p], *cr = m->pair_cr[p], *D = m->pair_D[p], *mu = m->pair_mu[p], *chi = m->pair_chi[p];
      return;
    }
  }
  *K = kl_blend_harmonic(m->body_K[a], m->body_K[b]);
  *cr = kl_blend_mean(m->body_cr[a], m->body_cr[b]);
  *D = (m->body_D[a] > 0 && m->body_D[b] > 0) ? kl_blend_harmonic(m->body_D[a], m->body_D[b]) : 0.0;
  *mu = kl_blend_harmonic(m->body_mu[a], m->body_mu[b]);
}

/* the general law of the body pair (KL_MODEL_GEN): the pair's own, else the model's */
static kl_gen_law pair_gen(const kl_world_model *m, int a, int b)
{
  for (int p = 0; p < m->npair; ++p) {
    const int x = m->pair_body[2 * p], y = m->pair_body[2 * p + 1];
    if (((x == a && y == b) || (x == b && y == a)) && m->pair_gen[p].k > 0) return m->pair_gen[p];
  }
  return m->gen;
}

/* the force exponent of a contact: the model's, or the contact's n1 (general law) */
static double exponent(const kl_world_model *m, const kl_contact *c)
{
  return m->model == KL_MODEL_GEN ? c->gen.n1 : m->n;
}

/* normal force of the contact law at (d, rate) (no clamping: the rule decides about tension; the general law
 * clamps at 0 itself, kernels/kl_contact_gen.h) */
static double law_force(const kl_world_model *m, const kl_contact *c, double x, double v)
{
  if (m->model == KL_MODEL_GEN) return kl_gen_force_in(c->gen, x, v);
  return kl_contact_force(m->model, c->K, m->n, c->D, c->chi, x, v);
}

/* the nonlinear law's force and tangent at (x, v): kl_hc_tangent, or the general law's bounded tangents
 * (kl_gen_lin_tangent, taken at d >= 1e-6 of the contact's elastic depth scale for its impact speed and
 * |d'| >= 1e-3 of that speed; docs/design.md section 3) */
static double nl_tangent(const kl_world_model *m, const kl_contact *c, double mass, double x, double v, double *kt,
                         double *ct)
{
  if (m->model == KL_MODEL_GEN) {
    const double vi = fmax(c->v_in, m->vreg);
    const double xs = kl_hc_delta_max(mass, c->gen.k, c->gen.n1, 0.0, vi);
    return kl_gen_lin_tangent(c->gen, x, v, 1e-6 * xs, 1e-3 * vi, kt, ct);
  }
  return kl_hc_tangent(c->K, m->n, c->chi, x, v, kt, ct);
}

/* the Hunt-Crossley contact linearised about (x, v) as a 1-D system under the external force fe
 * (the tangent of kernels/kl_contact_hc.h, docs/design.md section 2.3); *F0 receives the force there */
static kl_kv_sys hc_sys(const kl_world_model *m, const kl_contact *c, double mass, double fe, double x, double v,
                        double *F0)
{
  double kt, ct;
  *F0 = nl_tangent(m, c, mass, x, v, &kt, &ct);
  const kl_kv_sys s = {mass, kt, ct, fe - *F0 + kt * x + ct * v, 0.0};
  return s;
}

/* the remainder of the linearisation s (about (x0, v0), force F0) at (x, v) (kernels/kl_xrb.h) */
static double hc_rest(const kl_world_model *m, const kl_contact *c, kl_kv_sys s, double F0, double x0, double v0,
                      double x, double v)
{
  return F0 - law_force(m, c, x, v) + s.K * (x - x0) + s.D * (v - v0);
}

/* one Hunt-Crossley step of length h on the contact's 1-D model: its dense output into cs, and the
 * error estimate relative to the scales xs, vs */
static double hc_step(const kl_world_model *m, const kl_contact *c, kl_csys *cs, double h, double xs, double vs)
{
  double F0;
  const kl_kv_sys s = hc_sys(m, c, cs->m, cs->fe_ext, cs->d0, cs->v0, &F0);
  const double x0 = cs->d0, v0 = cs->v0;
  kl_xrb w;
  const kl_kv_out u2 = kl_xrb_begin(&w, s, x0, v0, h);
  const kl_kv_out u3 = kl_xrb_stage3(&w, hc_rest(m, c, s, F0, x0, v0, u2.x, u2.v));
  const kl_kv_out x3 = kl_xrb_order4(&w, hc_rest(m, c, s, F0, x0, v0, u3.x, u3.v));
  const kl_kv_out xm = kl_xrb_mid(&w);
  double kt, ct;
  const double Fe = nl_tangent(m, c, cs->m, x3.x, x3.v, &kt, &ct);
  const double C = kl_xrb_rate(s, x3.v, (cs->fe_ext - Fe) / cs->m, -kt, -ct, 0.0);
  kl_kv_out er;
  kl_xrb_end(&w, hc_rest(m, c, s, F0, x0, v0, xm.x, xm.v), hc_rest(m, c, s, F0, x0, v0, x3.x, x3.v), C, &cs->dense, &er);
  cs->hdense = h;
  return fmax(fabs(er.x) / xs, fabs(er.v) / vs);
}

/* the contact's 1-D motion over h: one exact step (Kelvin-Voigt), or the dense output of its
 * Hunt-Crossley step (h <= cs->hdense) */
static kl_kv_out contact_step(const kl_world_model *m, const kl_csys *cs, double h)
{
  if (m->model == KL_MODEL_KV) {
    const kl_kv_sys s0 = {cs->m, cs->K, cs->D, cs->fe, 0.0};
    return kl_kv_step(s0, cs->d0, cs->v0, h);
  }
  return kl_kv_poly_step(cs->dense, cs->d0, cs->v0, h);
}

//------------------------------------------------------------------------------------------------------
// events log

/* append a finished contact to the event log (overflow counted) */
static void log_end(const kl_world_model *m, kl_world_data *d, const kl_contact *c, double t1, double v_out)
{
  d->nend++;
  if (d->nlog >= m->nlog_max) {
    d->nlog_overflow++;
    return;
  }
  kl_contact_event *e = &d->log[d->nlog++];
  e->shape[0] = c->shape[0], e->shape[1] = c->shape[1];
  e->body[0] = c->body[0], e->body[1] = c->body[1];
  e->t0 = c->t0;
  e->t1 = t1;
  e->v_in = c->v_in;
  e->v_out = v_out;
  e->dmax = c->dmax;
  e->fpeak = c->fpeak;
}

/* remove contact i (order of the others kept) and remember its feature as just ended */
static void drop_contact(kl_world_data *d, kl_scratch *S, const kl_world_model *m, int i)
{
  if (S->ended_t != d->t) S->nended = 0;
  S->ended_t = d->t;
  if (S->nended < m->ncon_max) {
    kl_feature *f = &S->ended[S->nended++];
    f->shape[0] = d->con[i].shape[0], f->shape[1] = d->con[i].shape[1];
    f->key = d->con[i].key;
  }
  memmove(d->con + i, d->con + i + 1, (size_t)(d->ncon - i - 1) * sizeof *d->con);
  d->ncon--;
}

/* 1 if feature f is (s0, s1, key) */
static int same_feature(const kl_feature *f, int s0, int s1, int key)
{
  return f->shape[0] == s0 && f->shape[1] == s1 && f->key == key;
}

//------------------------------------------------------------------------------------------------------
// 1. contacts at the start of a sub-step

/* normal rate d' of feature f: the approach speed of its bodies at its point; with slide = 1 and a depth
 * correction (world.h, fix), plus the correction's change as the other body moves over the part, grad . v, v that
 * body's centre velocity over the part (the correction is a function of its centre: world.h). A feature that is not
 * a contact carries no force, so nothing wears the surface under it and that is the whole change of its corrected
 * depth; under an active contact the wear lowers the surface as the point slides into the unworn, so an active
 * contact takes (slide = 0) the uncorrected rate here and update_contacts adds the correction's measured change per
 * unit time over the step before (on a flat part in steady cutting it is 0; over a bead being ground flat it
 * cancels the bead's slope: without it Hunt-Crossley's damping pushed 15-30 % over the device model's force
 * climbing a bead and under it going down, docs/design.md section 9.3) */
static double approach_rate(const kl_world_model *m, const kl_world_data *d, const kl_feature *f, int slide)
{
  double va[3], vb[3], dv[3];
  point_vel(m, d, f->body[0], f->pos, va);
  point_vel(m, d, f->body[1], f->pos, vb);
  v3_sub(dv, va, vb);
  const double r = -v3_dot(f->normal, dv);
  if (!d->fix || !slide) return r;
  const int part = d->fix_body[0], other = f->body[0] == part ? f->body[1] : f->body[0];
  const double *at = d->xpos + 3 * other;
  point_vel(m, d, other, at, va);
  point_vel(m, d, part, at, vb);
  v3_sub(dv, va, vb);
  return r + v3_dot(f->fixg, dv);
}

/* active contacts take their features' new geometry (or end); touching, approaching features start */
static void update_contacts(const kl_world_model *m, kl_world_data *d, kl_scratch *S, int nf, double eps)
{
  memset(S->fused, 0, (size_t)nf * sizeof(int));
  /* active contacts follow their features */
  for (int i = 0; i < d->ncon;) {
    kl_contact *c = &d->con[i];
    int best = -1;
    double bd = 0.5;
    for (int f = 0; f < nf; ++f) {
      if (S->fused[f] || !same_feature(&S->feat[f], c->shape[0], c->shape[1], c->key)) continue;
      const double dd = v3_dot(S->feat[f].normal, c->normal);
      if (dd > bd) {
        bd = dd;
        best = f;
      }
    }
    if (best < 0) { /* the feature is gone (moved away beyond the margin): the contact has ended */
      log_end(m, d, c, d->t, -c->rate);
      drop_contact(d, S, m, i);
      continue;
    }
    S->fused[best] = 1;
    const kl_feature *f = &S->feat[best];
    v3_copy(c->pos, f->pos);
    v3_copy(c->normal, f->normal);
    c->depth = f->depth;
    c->rate = approach_rate(m, d, f, 0);
    if (d->fix) { /* the corrected depth's own change: the surface worn under the contact and the contact slid over
                   * it since the last narrow phase, per unit time (docs/design.md section 9.3) */
      if (d->t > c->tfix) c->frate = (f->fix - c->fix) / (d->t - c->tfix);
      c->fix = f->fix;
      c->tfix = d->t;
      c->rate += c->frate;
    }
    ++i;
  }
  /* new contacts: touching (within eps) and approaching, or (force rule) inside and pushing */
  S->npre = 0;
  for (int f = 0; f < nf; ++f) {
    if (S->fused[f]) continue;
    const kl_feature *g = &S->feat[f];
    const double rate = approach_rate(m, d, g, 1);
    double K, cr, D, mu, chi;
    pair_params(m, g->body[0], g->body[1], &K, &cr, &D, &mu, &chi);
    /* force rule: a point left inside after a no-tension separation resumes once it stops moving out */
    const int on = (g->depth >= -eps && rate > 0) || (m->rule == KL_SEP_FORCE && g->depth > 0 && rate >= 0);
    int dup = 0; /* an ended contact does not restart in the same sub-step */
    for (int e = 0; e < S->nended && !dup; ++e)
      dup = same_feature(&S->ended[e], g->shape[0], g->shape[1], g->key) && (rate <= 0 || S->ended_t == d->t);
    if (!on || dup) {
      if (S->npre < S->nfeat_max) S->pre[S->npre++] = *g;
      continue;
    }
    if (d->ncon >= m->ncon_max) {
      d->ncon_overflow++;
      continue;
    }
    kl_contact *c = &d->con[d->ncon++];
    memset(c, 0, sizeof *c);
    c->shape[0] = g->shape[0], c->shape[1] = g->shape[1];
    c->body[0] = g->body[0], c->body[1] = g->body[1];
    c->key = g->key;
    v3_copy(c->pos, g->pos);
    v3_copy(c->normal, g->normal);
    c->depth = g->depth;
    c->rate = rate;
    c->fix = g->fix;
    c->tfix = d->t;
    c->K = K, c->cr = cr, c->D = D, c->mu = mu;
    c->dgiven = D > 0;
    c->t0 = d->t;
    c->v_in = rate;
    c->dmax = fmax(g->depth, 0.0);
    c->dstart = fmin(g->depth, 0.0);
    /* Hunt-Crossley: chi from the impact speed (floored at the friction regularisation speed so a
     * contact that starts at rest gets a finite factor) */
    c->chi = m->model != KL_MODEL_HC ? 0.0 : chi > 0 ? chi : kl_hc_chi(m->law, cr, fmax(rate, m->vreg));
    if (m->model == KL_MODEL_GEN) { /* the pair's general law; its k is the contact's stiffness */
      c->gen = pair_gen(m, g->body[0], g->body[1]);
      c->K = c->gen.k;
    }
    S->fused[f] = 1;
    d->nonset++;
  }
}

//------------------------------------------------------------------------------------------------------
// 2-3. the step

/* one step of length h from the saved start state (S->s_*) into d, with the contact systems S->cs; what
 * record_step needs of it is kept in S (each contact's end state and impulses, each holder's snap) */
static void do_step(const kl_world_model *m, kl_world_data *d, kl_scratch *S, double t0, double h)
{
  const int nb = m->nbody;
  memcpy(d->xpos, S->s_xpos, (size_t)nb * 3 * sizeof(double));
  memcpy(d->xquat, S->s_xquat, (size_t)nb * 4 * sizeof(double));
  memcpy(d->vel, S->s_vel, (size_t)nb * 3 * sizeof(double));
  memcpy(d->angvel, S->s_angvel, (size_t)nb * 3 * sizeof(double));
  d->t = t0;
  memset(S->acc, 0, (size_t)nb * 12 * sizeof(double));
  for (int i = 0; i < d->ncon; ++i) {
    kl_contact *c = &d->con[i];
    const kl_csys *cs = &S->cs[i];
    const kl_kv_out o = contact_step(m, cs, h);
    /* impulse and first moment of the contact force from the 1-D momentum balance (paper eq. 5):
     * the external force alone, whatever the (linearised) contact law inside */
    const double fe = cs->fe_ext;
    const double J = fe * h - cs->m * o.dv;
    const double G = 0.5 * fe * h * h - cs->m * (o.dx - cs->v0 * h);
    double Pn[3], Gn[3], Jt[3] = {0, 0, 0};
    v3_scl(Pn, c->normal, J);
    v3_scl(Gn, c->normal, G);
    /* regularised Coulomb friction, implicit in the slip speed with the tangential effective mass */
    if (c->mu > 0 && J > 0) {
      double va[3], vb[3], u[3], vt[3];
      point_vel(m, d, c->body[0], c->pos, va);
      point_vel(m, d, c->body[1], c->pos, vb);
      v3_sub(u, va, vb);
      v3_copy(vt, u);
      v3_addscl(vt, c->normal, -v3_dot(u, c->normal));
      const double s = v3_norm(vt);
      if (s > 0) {
        double tt[3], dr[3];
        v3_scl(tt, vt, 1.0 / s);
        rel_response(m, d, S, c, c, tt, dr);
        const double inv_mt = v3_dot(tt, dr);
        if (inv_mt > 0) {
          const double mt = 1.0 / inv_mt;
          const double muJ = c->mu * J;
          double jt;
          if (s - muJ / mt >= m->vreg) {
            jt = muJ; /* sliding: full Coulomb */
          } else {
            const double a = muJ / (mt * m->vreg); /* viscous below vreg: |v'| = |v| / (1 + a) */
            int share = 0;
            for (int k = 0; k < d->ncon; ++k)
              share += d->con[k].shape[0] == c->shape[0] && d->con[k].shape[1] == c->shape[1];
            jt = mt * s * a / (1.0 + a) / (share > 0 ? share : 1);
          }
          v3_scl(Jt, tt, -jt);
        }
      }
    }
    double Ptot[3], Gtot[3];
    v3_add(Ptot, Pn, Jt);
    v3_copy(Gtot, Gn);
    v3_addscl(Gtot, Jt, 0.5 * h);
    for (int k = 0; k < 2; ++k) {
      const int b = c->body[k];
      if (m->body_type[b] != KL_BODY_DYNAMIC) continue;
      const double sg = k == 0 ? 1.0 : -1.0;
      double *A = S->acc + 12 * b;
      double r[3], L[3];
      v3_copy(r, cs->r[k]);
      v3_addscl(A, Ptot, sg);
      v3_cross(L, r, Ptot);
      v3_addscl(A + 3, L, sg);
      v3_addscl(A + 6, Gtot, sg);
      v3_cross(L, r, Gtot);
      v3_addscl(A + 9, L, sg);
    }
    S->cs[i].ox = o.x;
    S->cs[i].ov = o.v;
    S->cs[i].J = J;
    v3_copy(S->cs[i].Jt, Jt);
  }
  /* bodies: exact ballistic translation + contact terms; semi-implicit Euler rotation (paper eq. 14) */
  for (int b = 0; b < nb; ++b) {
    double *x = d->xpos + 3 * b, *v = d->vel + 3 * b, *w = d->angvel + 3 * b, *q = d->xquat + 4 * b;
    if (m->body_type[b] == KL_BODY_STATIC) continue;
    if (m->body_type[b] == KL_BODY_KINEMATIC) {
      double th[3];
      v3_addscl(x, v, h);
      v3_scl(th, w, h);
      q_rotate(q, th);
      continue;
    }
    const double *A = S->acc + 12 * b;
    const double im = 1.0 / m->body_mass[b];
    double f[3], fd[3]; /* at the start, from which every step of the sub-step is taken */
    v3_copy(f, S->fext + 6 * b);
    v3_copy(fd, S->fext + 6 * b + 3);
    double xn[3], vn[3], *snap = S->snap + 3 * b;
    v3_zero(snap);
    if (m->body_holder[b] && h > 0) {
      /* the holder's force to second order: its second derivative from the body's acceleration over
       * the step (external force and the contacts' mean force) and jerk */
      double ab[3], jb[3];
      for (int a = 0; a < 3; ++a) {
        ab[a] = (f[a] + A[a] / h) * im;
        jb[a] = fd[a] * im;
      }
      kl_world_holder_snap(m, d, b, t0, ab, jb, snap);
    }
    for (int a = 0; a < 3; ++a) {
      const double acc = f[a] * im, jerk = fd[a] * im, sn = snap[a] * im;
      const double h2 = h * h, h3 = h2 * h;
      xn[a] = x[a] + v[a] * h + 0.5 * acc * h2 + jerk * h3 / 6.0 + sn * h3 * h / 24.0 + A[6 + a] * im;
      vn[a] = v[a] + acc * h + 0.5 * jerk * h2 + sn * h3 / 6.0 + A[a] * im;
    }
    /* rotation: the world angular momentum L = I_w w takes the contact angular impulses (it is
     * conserved in free flight, so a body that stops rocking keeps no spurious spin); the orientation
     * turns by w h plus the contact's angular first moment; then w = I_w(q_new)^-1 L */
    const double *Iinv = S->Iinv + 9 * b;
    double I[9], L[3], th[3], gm[3], R1[9], Iinv1[9];
    inertia_world(I, S->R + 9 * b, m->body_inertia + 3 * b);
    m3_mulv(L, I, w);
    v3_add(L, L, A + 3);
    m3_mulv(gm, Iinv, A + 9);
    double ws[3]; /* with a rotational holder (implicit): the end's rate, the contacts' impulses in it */
    if (kl_world_holder_rot_step(m, d, b, t0, h, I, L, ws))
      for (int a = 0; a < 3; ++a) th[a] = ws[a] * h;
    else
      for (int a = 0; a < 3; ++a) th[a] = w[a] * h + gm[a];
    v3_copy(x, xn);
    v3_copy(v, vn);
    q_rotate(q, th);
    q_to_m3(R1, q);
    inv_inertia_world(Iinv1, R1, m->body_inertia + 3 * b);
    m3_mulv(w, Iinv1, L);
  }
  d->t = t0 + h;
}

/* the records of the step of length h that do_step last took (the accepted one): each contact's mean
 * force, friction, maximum penetration and peak force located inside the step, end state; the
 * contacts' and holders' impulse accumulators */
static void record_step(const kl_world_model *m, kl_world_data *d, const kl_scratch *S, double t0, double h)
{
  for (int i = 0; i < d->ncon; ++i) {
    kl_contact *c = &d->con[i];
    const kl_csys *cs = &S->cs[i];
    const kl_kv_sys sys = {cs->m, cs->K, cs->D, cs->fe, 0.0};
    const double x1 = cs->ox, v1 = cs->ov;
    c->favg = h > 0 ? cs->J / h : 0.0;
    v3_scl(c->ftan, cs->Jt, h > 0 ? 1.0 / h : 0.0);
    /* extrema inside the step: maximum penetration where d' = 0, peak force where dF/dt = 0 */
    double tr;
    c->dmax = fmax(c->dmax, fmax(cs->d0, x1));
    c->fpeak = fmax(c->fpeak, fmax(law_force(m, c, cs->d0, cs->v0), law_force(m, c, x1, v1)));
    if (m->model == KL_MODEL_KV) {
      if (cs->v0 > 0 && kl_kv_first_root(sys, cs->d0, cs->v0, 0.0, 1.0, 0.0, 0.0, h, &tr)) {
        const kl_kv_out e = kl_kv_step(sys, cs->d0, cs->v0, tr);
        c->dmax = fmax(c->dmax, e.x);
      }
      /* peak force: dF/dt = K d' + D d'' = 0 (as in ball.c) */
      const double al = -c->D * cs->K / cs->m, be = c->K - c->D * cs->D / cs->m, g0 = c->D * cs->fe / cs->m;
      if (al * cs->d0 + be * cs->v0 + g0 > 0 && kl_kv_first_root(sys, cs->d0, cs->v0, al, be, g0, 0.0, h, &tr)) {
        const kl_kv_out e = kl_kv_step(sys, cs->d0, cs->v0, tr);
        c->fpeak = fmax(c->fpeak, law_force(m, c, e.x, e.v));
      }
    } else {
      double Fp, xp;
      if (cs->v0 > 0 && v1 <= 0 && kl_kv_poly_first_root(cs->dense, cs->d0, cs->v0, 0.0, 1.0, 0.0, 0.0, h, &tr))
        c->dmax = fmax(c->dmax, kl_kv_poly_step(cs->dense, cs->d0, cs->v0, tr).x);
      if (m->model == KL_MODEL_GEN ? kl_xrb_gen_peak(cs->dense, cs->d0, cs->v0, h, x1, v1, c->gen, &Fp)
                                   : kl_xrb_hc_peak(cs->dense, cs->d0, cs->v0, h, x1, v1, c->K, m->n, c->chi, &Fp, &xp))
        c->fpeak = fmax(c->fpeak, Fp);
    }
    c->depth = x1 + c->dstart;
    c->rate = v1;
    c->force = law_force(m, c, x1, v1);
  }
  for (int i = 0; i < d->ncon; ++i) {
    const kl_contact *c = &d->con[i];
    for (int k = 0; k < 2; ++k) {
      const int b = c->body[k];
      if (m->body_type[b] != KL_BODY_DYNAMIC) continue;
      double *ci = d->con_imp + 3 * b;
      const double sg = k == 0 ? h : -h;
      v3_addscl(ci, c->normal, sg * c->favg);
      v3_addscl(ci, c->ftan, sg);
    }
  }
  /* the holders' impulse over the step, anchor-frame components */
  for (int b = 0; b < m->nbody; ++b) {
    if (m->body_type[b] != KL_BODY_DYNAMIC || !m->body_holder[b] || !(h > 0)) continue;
    const double *f = S->fext + 6 * b, *fd = f + 3, *snap = S->snap + 3 * b;
    double aq[4], Ra[9], imp[3], loc[3];
    kl_world_anchor_at(m, d, b, t0, NULL, NULL, NULL, NULL, aq, NULL);
    q_to_m3(Ra, aq);
    for (int a = 0; a < 3; ++a)
      imp[a] = (f[a] - m->gravity[a] * m->body_mass[b]) * h + 0.5 * fd[a] * h * h + snap[a] * h * h * h / 6.0;
    m3_mulvT(loc, Ra, imp);
    v3_add(d->hold_imp + 3 * b, d->hold_imp + 3 * b, loc);
  }
}

/* save the start state for repeated do_step calls */
static void save_state(const kl_world_model *m, const kl_world_data *d, kl_scratch *S)
{
  const size_t nb = (size_t)m->nbody;
  memcpy(S->s_xpos, d->xpos, nb * 3 * sizeof(double));
  memcpy(S->s_xquat, d->xquat, nb * 4 * sizeof(double));
  memcpy(S->s_vel, d->vel, nb * 3 * sizeof(double));
  memcpy(S->s_angvel, d->angvel, nb * 3 * sizeof(double));
}

/* deepest missed onset among the features that are not active contacts; a feature that was already
 * inside at the start (left there by a separation) counts by how much deeper it went; -INFINITY if none */
static double missed_onset(const kl_world_model *m, kl_world_data *d, kl_scratch *S, double margin)
{
  kl_collide_pose(m, d, S);
  const int nf = kl_collide(m, d, S, margin, 0.0, S->abound, NULL);
  double worst = -INFINITY;
  for (int f = 0; f < nf; ++f) {
    const kl_feature *g = &S->feat[f];
    int skip = 0;
    for (int c = 0; c < d->ncon && !skip; ++c) skip = same_feature(g, d->con[c].shape[0], d->con[c].shape[1], d->con[c].key);
    if (skip) continue;
    double deeper = g->depth;
    for (int p = 0; p < S->npre; ++p)
      if (same_feature(&S->pre[p], g->shape[0], g->shape[1], g->key) && S->pre[p].depth > 0) {
        deeper = g->depth - S->pre[p].depth;
        break;
      }
    worst = fmax(worst, deeper);
  }
  return worst;
}

/* one sub-step towards t_out; returns 0, or -1 if the state went non-finite */
static int substep(const kl_world_model *m, kl_world_data *d, double t_out)
{
  kl_scratch *S = d->scratch;
  const double eps = 0.5 * m->onset_tol;
  const double margin = fmax(100.0 * m->onset_tol, 1e-7);
  if (S->ended_t != d->t) S->nended = 0; /* contacts ended at this very instant may not restart */
  frames(m, d, S);
  for (int b = 0; b < m->nbody; ++b) {
    S->abound[b] = 0;
    if (m->body_type[b] != KL_BODY_DYNAMIC) continue;
    double *f = S->fext + 6 * b;
    ext_force(m, d, b, d->t, f, f + 3);
    S->abound[b] = v3_norm(f) / m->body_mass[b];
  }
  kl_collide_pose(m, d, S);
  double h_ca = INFINITY;
  const int nf = kl_collide(m, d, S, margin, eps, S->abound, &h_ca);
  update_contacts(m, d, S, nf, eps);
  const double t0 = d->t;
  double h = t_out - t0;
  /* free-motion limits */
  for (int b = 0; b < m->nbody; ++b) {
    if (m->body_type[b] != KL_BODY_DYNAMIC) continue;
    const double *I = m->body_inertia + 3 * b;
    const double w = v3_norm(d->angvel + 3 * b);
    const int iso = fabs(I[0] - I[1]) <= 1e-12 * I[0] && fabs(I[1] - I[2]) <= 1e-12 * I[0];
    if (!iso && w > 0) h = fmin(h, ROT_STEP / w);
    if (m->body_holder[b]) {
      const double *K = m->body_holder_K + 3 * b; /* (the rotational holder is implicit: no limit) */
      const double kmax = fmax(K[0], fmax(K[1], K[2]));
      if (kmax > 0) h = fmin(h, HOLDER_STEP * 2.0 * KL_PI * sqrt(m->body_mass[b] / kmax));
    }
  }
  h = fmin(h, fmax(h_ca, 1e-12 * (1.0 + fabs(t0))));
  /* contact systems: effective mass, coupling, external force along the normal */
  const int nc = d->ncon;
  int coupled = nc > 1;
  for (int i = 0; i < nc; ++i) {
    kl_contact *c = &d->con[i];
    kl_csys *cs = &S->cs[i];
    for (int k = 0; k < 2; ++k) v3_sub(cs->r[k], c->pos, d->xpos + 3 * c->body[k]);
    for (int j = 0; j < nc; ++j) {
      double dr[3];
      rel_response(m, d, S, c, &d->con[j], d->con[j].normal, dr);
      S->A[i * nc + j] = v3_dot(c->normal, dr);
    }
    const double Aii = S->A[i * nc + i];
    cs->m = 1.0 / Aii;
    double red = 0; /* translational part only: equal to Aii when the normal passes through the centres */
    for (int k = 0; k < 2; ++k)
      if (m->body_type[c->body[k]] == KL_BODY_DYNAMIC) red += 1.0 / m->body_mass[c->body[k]];
    if (fabs(Aii - red) > 1e-9 * Aii) coupled = 1;
    if (c->mu > 0) {
      double va[3], vb[3], u[3];
      point_vel(m, d, c->body[0], c->pos, va);
      point_vel(m, d, c->body[1], c->pos, vb);
      v3_sub(u, va, vb);
      if (v3_norm(u) * v3_norm(u) - v3_dot(u, c->normal) * v3_dot(u, c->normal) > 1e-24) coupled = 1;
    }
  }
  for (int i = 0; i < nc; ++i) {
    kl_contact *c = &d->con[i];
    kl_csys *cs = &S->cs[i];
    double aa[3], ab[3], da[3];
    point_acc(m, S, c->body[0], aa);
    point_acc(m, S, c->body[1], ab);
    v3_sub(da, aa, ab);
    double ae = -v3_dot(c->normal, da);
    for (int j = 0; j < nc; ++j)
      if (j != i) ae -= S->A[i * nc + j] * d->con[j].force;
    cs->fe = cs->m * ae;
    cs->fe_ext = cs->fe;
    /* penetration measured from where the contact began (dstart: the gap of at most eps at which
     * conservative advancement handed it over), so the closed form is the paper's from d = 0 */
    cs->d0 = c->depth - c->dstart;
    cs->v0 = c->rate;
    if (m->model == KL_MODEL_KV) {
      if (!c->dgiven) c->D = kl_kv_damping(c->cr, c->K, cs->m); /* paper eq. (10) with the effective mass */
      cs->K = c->K;
      cs->D = c->D;
      cs->tscale = 2.0 * KL_PI * sqrt(cs->m / c->K);
    } else {
      /* linearised Hunt-Crossley (docs/design.md 2.3) */
      double F0;
      const kl_kv_sys s0 = hc_sys(m, c, cs->m, cs->fe_ext, cs->d0, cs->v0, &F0);
      cs->K = s0.K;
      cs->D = s0.D;
      cs->fe = s0.f0;
      const double vi = fmax(c->v_in, m->vreg);
      const double tc = 3.0 * kl_hc_delta_max(cs->m, c->K, exponent(m, c), c->chi, vi) / vi;
      cs->tscale = s0.K > 0 ? fmin(2.0 * KL_PI * sqrt(cs->m / s0.K), tc) : tc;
    }
    c->meff = cs->m;
    c->force = law_force(m, c, cs->d0, c->rate);
  }
  if (coupled)
    for (int i = 0; i < nc; ++i) h = fmin(h, m->substep_fraction * S->cs[i].tscale);
  if (m->model != KL_MODEL_KV) {
    /* each contact's exponential step (kernels/kl_xrb.h) under its error control; the sub-step is the
     * shortest, and each contact's dense output covers it */
    for (int i = 0; i < nc; ++i) {
      kl_contact *c = &d->con[i];
      kl_csys *cs = &S->cs[i];
      const double vi = fmax(c->v_in, m->vreg);
      const double xs = fmax(kl_hc_delta_max(cs->m, c->K, exponent(m, c), c->chi, vi), fabs(cs->d0));
      const double vs = fmax(vi, fabs(cs->v0));
      double hh = fmin(h, c->hstep > 0 ? c->hstep : 0.01 * cs->tscale);
      double err = 0;
      for (int it = 0; it < 200; ++it) {
        err = hc_step(m, c, cs, hh, xs, vs) / m->hc_tol;
        if (err <= 1.0 || hh <= 1e-15 * (1.0 + fabs(t0))) break;
        hh = kl_xrb_next_h(hh, err);
      }
      c->hstep = kl_xrb_next_h(hh, err);
      h = fmin(h, hh);
    }
  }
  /* contact ends inside the step, located on the 1-D closed form (Kelvin-Voigt) or the dense output
   * (Hunt-Crossley: d <= 0, and by the force rule also 1 + chi d' <= 0) */
  int nzero = 0;
  for (int i = 0; i < nc; ++i) {
    kl_csys *cs = &S->cs[i];
    const kl_contact *c = &d->con[i];
    double tr;
    int found;
    cs->tend = INFINITY;
    if (m->model == KL_MODEL_KV) {
      const kl_kv_sys sys = {cs->m, cs->K, cs->D, cs->fe, 0.0};
      const double al = m->rule == KL_SEP_FORCE ? c->K : 1.0, be = m->rule == KL_SEP_FORCE ? c->D : 0.0;
      found = kl_kv_first_root(sys, cs->d0, cs->v0, al, be, 0.0, 0.0, h, &tr);
    } else {
      found = kl_kv_poly_first_root(cs->dense, cs->d0, cs->v0, 1.0, 0.0, 0.0, 0.0, h, &tr);
      double tw;
      if (m->rule == KL_SEP_FORCE && cs->d0 > 0 &&
          kl_kv_poly_first_root(cs->dense, cs->d0, cs->v0, 0.0, c->chi, 1.0, 0.0, found ? tr : h, &tw)) {
        tr = tw;
        found = 1;
      }
    }
    if (found) {
      cs->tend = tr;
      if (tr <= 0) nzero++;
      h = fmin(h, tr);
    }
  }
  if (nzero > 0) { /* contacts that end right now: no step */
    for (int i = nc - 1; i >= 0; --i)
      if (S->cs[i].tend <= 0) {
        log_end(m, d, &d->con[i], d->t, -d->con[i].rate);
        drop_contact(d, S, m, i);
      }
    return 0;
  }
  /* 3. step; 4. a missed onset inside it is located and the step cut there */
  save_state(m, d, S);
  do_step(m, d, S, t0, h);
  double worst = missed_onset(m, d, S, margin);
  double hacc = h;
  if (worst > m->onset_tol) {
    double lo = 0, flo = -0.5 * m->onset_tol, hi = h, fhi = worst - 0.5 * m->onset_tol;
    int side = 0;
    for (int it = 0; it < 80; ++it) {
      const double c = kl_illinois_point(lo, flo, hi, fhi);
      do_step(m, d, S, t0, c);
      const double w = missed_onset(m, d, S, margin);
      const double fc = (w == -INFINITY ? -margin : w) - 0.5 * m->onset_tol;
      if (w > 0 && w <= m->onset_tol) {
        hi = c;
        break;
      }
      kl_illinois_update(&lo, &flo, &hi, &fhi, c, fc, !(fc > 0), &side);
      if (hi - lo <= 1e-13 * (1.0 + fabs(t0))) break;
    }
    hacc = hi;
    do_step(m, d, S, t0, hacc);
    d->ncut++;
  }
  record_step(m, d, S, t0, hacc); /* the step taken: do_step's last */
  d->nsub++;
  if (hacc == t_out - t0) d->t = t_out; /* land on the output instant exactly */
  if (d->observe) d->observe(d->observe_ctx, m, d, t0, hacc); /* (world.h: before the ended contacts go) */
  /* contacts whose located end is this step's end */
  for (int i = nc - 1; i >= 0; --i)
    if (S->cs[i].tend <= hacc) {
      log_end(m, d, &d->con[i], d->t, -d->con[i].rate);
      drop_contact(d, S, m, i);
    }
  for (int b = 0; b < m->nbody; ++b)
    for (int a = 0; a < 3; ++a)
      if (!isfinite(d->xpos[3 * b + a]) || !isfinite(d->vel[3 * b + a]) || !isfinite(d->angvel[3 * b + a])) return -1;
  return 0;
}

kelvin_status kl_world_advance(const kl_world_model *m, kl_world_data *d, double t_out, char *msg, int cap)
{
  if (msg && cap > 0) msg[0] = '\0';
  long guard = 0;
  while (d->t < t_out) {
    if (d->stop && __atomic_load_n(d->stop, __ATOMIC_RELAXED)) {
      if (msg && cap > 0) snprintf(msg, (size_t)cap, "stopped at t = %g s", d->t);
      return KELVIN_ERR_STOPPED;
    }
    const int nlog0 = d->nlog;
    if (substep(m, d, t_out) != 0) {
      d->warn_nonfinite++;
      if (msg && cap > 0) snprintf(msg, (size_t)cap, "the run diverged: the state went non-finite at t = %g s", d->t);
      return KELVIN_ERR_DIVERGED;
    }
    for (int i = 0; i < d->ncon; ++i) { /* docs/design.md section 8, "Bounded physics" */
      const kl_contact *c = &d->con[i];
      const double f = fmax(fabs(c->force), c->fpeak);
      if (isfinite(f) && (m->force_limit <= 0 || f <= m->force_limit)) continue;
      d->warn_nonfinite++;
      if (msg && cap > 0 && isfinite(f))
        snprintf(msg, (size_t)cap,
                 "the run diverged at t = %.6g s: a contact force of %.3g N between bodies %d and %d, beyond the "
                 "force limit %.3g N", d->t, f, c->body[0], c->body[1], m->force_limit);
      else if (msg && cap > 0)
        snprintf(msg, (size_t)cap,
                 "the run diverged at t = %.6g s: a contact force went non-finite between bodies %d and %d", d->t,
                 c->body[0], c->body[1]);
      return KELVIN_ERR_DIVERGED;
    }
    for (int i = nlog0; i < d->nlog; ++i) { /* contacts that began and ended inside the sub-step */
      const kl_contact_event *e = &d->log[i];
      if (isfinite(e->fpeak) && (m->force_limit <= 0 || e->fpeak <= m->force_limit)) continue;
      d->warn_nonfinite++;
      if (msg && cap > 0)
        snprintf(msg, (size_t)cap,
                 "the run diverged at t = %.6g s: a contact force of %.3g N between bodies %d and %d, beyond the "
                 "force limit %.3g N", e->t1, e->fpeak, e->body[0], e->body[1], m->force_limit);
      return KELVIN_ERR_DIVERGED;
    }
    for (int b = 0; b < m->nbody && m->force_limit > 0; ++b) { /* a body flung off pulls on its holder */
      if (!m->body_holder[b] || m->body_type[b] != KL_BODY_DYNAMIC) continue;
      double f[3];
      kl_world_holder(m, d, b, d->t, f, NULL, NULL);
      const double fh = v3_norm(f);
      if (fh <= m->force_limit) continue;
      d->warn_nonfinite++;
      if (msg && cap > 0)
        snprintf(msg, (size_t)cap,
                 "the run diverged at t = %.6g s: a holder force of %.3g N on body %d, beyond the force limit %.3g N",
                 d->t, fh, b, m->force_limit);
      return KELVIN_ERR_DIVERGED;
    }
    if (++guard > MAX_SUBSTEPS_PER_CALL) {
      if (msg && cap > 0) snprintf(msg, (size_t)cap, "more than %ld sub-steps before t = %g s (event storm?)", MAX_SUBSTEPS_PER_CALL, t_out);
      return KELVIN_ERR_NUMERIC;
    }
    if (d->check && d->nsub % KL_WORLD_CHECK_EVERY == 0 && d->t < t_out && d->check(d->check_ctx, d) != 0) {
      if (msg && cap > 0) snprintf(msg, (size_t)cap, "stopped at t = %.9g s, before %.9g s (the caller asked)", d->t, t_out);
      return KELVIN_ERR_STOPPED;
    }
  }
  return KELVIN_OK;
}

//------------------------------------------------------------------------------------------------------
// work bound (docs/design.md section 8, "Bounded physics")

void kl_world_work_estimate(const kl_world_model *m, double duration, double nout, double fref, kl_world_work *w)
{
  memset(w, 0, sizeof *w);
  w->h = INFINITY;
  w->body = -1;
  double F = fref;
  if (!(F > 0)) {
    F = 1.0;
    for (int b = 0; b < m->nbody; ++b)
      if (m->body_type[b] == KL_BODY_DYNAMIC) F = fmax(F, m->body_mass[b] * v3_norm(m->gravity));
  }
  for (int b = 0; b < m->nbody; ++b) {
    if (m->body_type[b] != KL_BODY_DYNAMIC) continue;
    const double mass = m->body_mass[b];
    if (m->body_holder[b]) { /* as substep() limits it */
      const double *K = m->body_holder_K + 3 * b;
      const double kmax = fmax(K[0], fmax(K[1], K[2]));
      const double h = HOLDER_STEP * 2.0 * KL_PI * sqrt(mass / kmax);
      if (kmax > 0 && h < w->h) *w = (kl_world_work){h, 0, b, KL_WORK_HOLDER, mass, kmax, HOLDER_STEP};
    }
    /* the shapes' reach from the centre of mass (a sphere centred on it: none, its normals pass through it) */
    double r = 0;
    int shaped = 0;
    for (int s = 0; s < m->nshape; ++s) {
      if (m->shape_body[s] != b) continue;
      shaped = 1;
      const double *p = m->shape_pos + 3 * s, rp = v3_norm(p);
      if (m->shape_type[s] == KL_SHAPE_SPHERE && rp == 0) continue;
      if (isfinite(m->shape_rbound[s])) r = fmax(r, rp + m->shape_rbound[s]);
    }
    if (!shaped) continue;
    const double *I = m->body_inertia + 3 * b, Imin = fmin(I[0], fmin(I[1], I[2]));
    const double meff = r > 0 ? 1.0 / (1.0 / mass + r * r / Imin) : mass;
    double Kmax = 0;
    for (int c = 0; c < m->nbody; ++c) {
      if (c == b) continue;
      int other = 0;
      for (int s = 0; s < m->nshape && !other; ++s) other = m->shape_body[s] == c;
      if (!other) continue;
      double K, cr, D, mu, chi;
      pair_params(m, b, c, &K, &cr, &D, &mu, &chi);
      if (m->model == KL_MODEL_GEN) K = pair_gen(m, b, c).k;
      Kmax = fmax(Kmax, K);
    }
    if (!(Kmax > 0)) continue;
    const double n = m->model == KL_MODEL_HC ? m->n : m->model == KL_MODEL_GEN ? m->gen.n1 : 1.0;
    const double Kt = n == 1.0 ? Kmax : n * pow(Kmax, 1.0 / n) * pow(F, (n - 1.0) / n);
    const double h = m->substep_fraction * 2.0 * KL_PI * sqrt(meff / Kt);
    if (h < w->h) *w = (kl_world_work){h, 0, b, KL_WORK_CONTACT, meff, Kt, m->substep_fraction};
  }
  w->steps = (isfinite(w->h) ? duration / w->h : 0.0) + nout;
}

void kl_world_work_text(const kl_world_work *w, const char *name, char *buf, int cap)
{
  if (cap <= 0) return;
  char nb[48];
  if (!name) {
    snprintf(nb, sizeof nb, "body %d", w->body);
    name = nb;
  }
  if (w->kind == KL_WORK_HOLDER)
    snprintf(buf, (size_t)cap, "sub-step %.3g s, 1/%.0f of the holder period 2 pi sqrt(m/K) of '%s': mass %.3g kg on "
             "holder stiffness %.3g N/m", w->h, 1.0 / w->fraction, name, w->mass, w->stiffness);
  else if (w->kind == KL_WORK_CONTACT)
    snprintf(buf, (size_t)cap,
             "sub-step %.3g s, %.3g of the contact period 2 pi sqrt(m/K) of '%s': effective mass %.3g kg (its mass "
             "and inertia at the contact) on contact stiffness %.3g N/m", w->h, w->fraction, name, w->mass,
             w->stiffness);
  else
    snprintf(buf, (size_t)cap, "no stiff time scale (sub-steps end at the outputs and contact events)");
}
