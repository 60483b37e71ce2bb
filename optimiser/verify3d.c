/* optimiser/verify3d.c: a grinding pass in the 3-D engine (verify3d.h). */
#include "optimiser/verify3d.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/mesh.h"
#include "engine/world.h"
#include "kelvin/engine.h"
#include "kernels/kl_impact.h"
#include "kernels/kl_removal.h"


/* rotation matrix (row-major) of the unit quaternion q (w, x, y, z) */
static void quat_mat(const double q[4], double M[9])
{
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  M[0] = 1 - 2 * (y * y + z * z), M[1] = 2 * (x * y - w * z), M[2] = 2 * (x * z + w * y);
  M[3] = 2 * (x * y + w * z), M[4] = 1 - 2 * (x * x + z * z), M[5] = 2 * (y * z - w * x);
  M[6] = 2 * (x * z - w * y), M[7] = 2 * (y * z + w * x), M[8] = 1 - 2 * (x * x + y * y);
}

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* quaternion turning the local z axis onto the unit vector a */
static void quat_z_to(const double a[3], double q[4])
{
  /* half-way vector between z and a (a = -z: half a turn about x) */
  const double h[3] = {a[0], a[1], a[2] + 1.0};
  const double hn = sqrt(dot3(h, h));
  if (hn < 1e-12) {
    q[0] = 0, q[1] = 1, q[2] = 0, q[3] = 0;
    return;
  }
  /* q = (z . h, z x h) / |h| */
  q[0] = h[2] / hn, q[1] = -h[1] / hn, q[2] = h[0] / hn, q[3] = 0;
}

/* Bounded work and divergence (docs/design.md section 8, "Bounded physics"): a contact force beyond
 * KL_V3_DIVERGE times the pass's largest plausible force (v3_plausible) stops the pass as diverged, and a pass
 * whose sub-steps, estimated up front from the stiffest time scale (kl_world_work_estimate), exceed the larger
 * of KELVIN_WORK_LIMIT and what verify.time_limit allows at KL_V3_SUBSTEPS_PER_S is refused before it runs
 * (verify.time_limit 0: no limit). */
#define KL_V3_DIVERGE 1e3
#define KL_V3_SUBSTEPS_PER_S 2e5 /* engine sub-steps per wall second (1.2e5 measured on the built-in example) */

/* the largest plausible force of a pass [N]: the over-force threshold, the target, the weight, or the holder
 * pushed through KL_PLAUSIBLE_OFFSET */
static double v3_plausible(const kl_settings *s)
{
  return fmax(fmax(s->max_F, s->target_F), fmax(s->tool_weight, s->holder_K * KL_PLAUSIBLE_OFFSET));
}

/* the scene of one pass */
typedef struct scene {
  kl_world_model *m;
  kl_world_data *d;
  int tool, part;
  double W[3];    /* the tool's weight [N] */
  double *wt, *wp, *wq; /* waypoint times, tool-centre positions, orientations */
  double F0;      /* contact force of the start's equilibrium [N] */
} scene;

static void scene_free(scene *sc)
{
  kl_world_data_free(sc->d);
  kl_world_free(sc->m);
  free(sc->wt);
  free(sc->wp);
  free(sc->wq);
}

/* static contact force F(d) of the problem's law at rest */
static double law_static(const kl_problem *pb, double d)
{
  return kl_contact_static_force(kl_problem_contact(pb), d);
}

/* the tool's deflection x - a = C f for the force f (world) on it: C the holder's compliance in the
 * anchor frame R (columns: tool axes) */
static void deflect(const kl_problem *pb, const double R[9], const double f[3], double e[3])
{
  const double c[3] = {1.0 / pb->set.holder_Klat, 1.0 / pb->set.holder_Klat, 1.0 / pb->set.holder_K};
  double l[3];
  for (int i = 0; i < 3; ++i) l[i] = (R[i] * f[0] + R[3 + i] * f[1] + R[6 + i] * f[2]) * c[i];
  for (int i = 0; i < 3; ++i) e[i] = R[3 * i] * l[0] + R[3 * i + 1] * l[1] + R[3 * i + 2] * l[2];
}

/* place the tool for a contact force F along the last normal n (with friction against the slip) and
 * return law(depth) - F there; n takes the new contact normal. When the holder's deflection under F
 * falls short of the commanded offset by more than the tool's radius, the tool centre lies behind the
 * surface, where the mesh (which has no inside) offers either a contact normal pushing the tool into
 * the part or, deeper, no contact at all: told apart from a tool clear of the part by the mesh's
 * nearest point, which then lies ahead of the centre along the tool axis. More force is needed there:
 * +inf is returned. */
static double place(const kl_problem *pb, scene *sc, const double a[3], const double av[3], const double R[9], double F,
                    double n[3])
{
  const int b = sc->tool;
  const double mu = pb->set.friction;
  double t[3], f[3], e[3], depth = 0, pos[3];
  for (int i = 0; i < 3; ++i) t[i] = av[i] - dot3(av, n) * n[i];
  const double tn = sqrt(dot3(t, t));
  for (int i = 0; i < 3; ++i) f[i] = F * (n[i] - (tn > 0 ? mu * t[i] / tn : 0.0)) + sc->W[i];
  deflect(pb, R, f, e);
  for (int i = 0; i < 3; ++i) sc->d->xpos[3 * b + i] = a[i] + e[i];
  double nn[3];
  const double z[3] = {R[2], R[5], R[8]}; /* the tool axis, into the part */
  if (kl_world_probe(sc->m, sc->d, b, 1e-3, &depth, nn, pos) > 0 && depth > 0) {
    if (dot3(nn, z) > 0) return INFINITY; /* behind the surface */
    memcpy(n, nn, sizeof nn);
  } else {
    double dist, q[3], nq[3], cq[3];
    if (kl_mesh_closest(pb->actual, sc->d->xpos + 3 * b, INFINITY, &dist, q, nq)) {
      for (int i = 0; i < 3; ++i) cq[i] = sc->d->xpos[3 * b + i] - q[i];
      if (dot3(cq, z) > 0) return INFINITY; /* deep behind it */
    }
    depth = 0;
  }
  return law_static(pb, depth) - F;
}

/* the start: the tool in static equilibrium at the anchor's first pose, sliding with it: holder, weight
 * and contact force F (n - mu t), t the direction of the slip, balance with F = law(depth); bisection
 * on F (law(depth(F)) - F decreases in F) */
static void equilibrium(const kl_problem *pb, scene *sc)
{
  kl_world_data *d = sc->d;
  const int b = sc->tool;
  double a[3], av[3], aq[4], aw[3], R[9], n[3];
  kl_world_anchor(sc->m, b, 0.0, a, av, NULL, aq, aw);
  quat_mat(aq, R);
  memcpy(d->xquat + 4 * b, aq, sizeof aq);
  memcpy(d->vel + 3 * b, av, sizeof av);
  memcpy(d->angvel + 3 * b, aw, sizeof aw);
  n[0] = -R[2], n[1] = -R[5], n[2] = -R[8]; /* out of the part, until a contact says otherwise */
  const double G0 = place(pb, sc, a, av, R, 0.0, n);
  sc->F0 = 0;
  if (!(G0 > 0)) return; /* out of contact: hanging on the holder under its weight */
  double lo = 0, hi = isfinite(G0) ? fmax(G0, 1e-9) : 1.0; /* (behind the surface: from 1 N up) */
  for (int it = 0; it < 200 && place(pb, sc, a, av, R, hi, n) > 0; ++it) {
    lo = hi;
    hi *= 2;
  }
  for (int it = 0; it < 200 && hi - lo > 1e-13 * hi; ++it) {
    const double F = 0.5 * (lo + hi);
    if (place(pb, sc, a, av, R, F, n) > 0)
      lo = F;
    else
      hi = F;
  }
  sc->F0 = 0.5 * (lo + hi);
  place(pb, sc, a, av, R, sc->F0, n);
}

/* Material removal in the engine (docs/design.md section 9.3): the hooks' context (engine/world.h, observe and
 * fix) of a pass on a surface */
typedef struct v3_rm {
  const kl_problem *pb;
  kl_v3_removal *rm;
  int tool, part;
  int hint;          /* the nearest path sample of the last point mapped */
  double xprev[3];   /* the tool centre at the start of the sub-step the observer is called for */
  /* the deposit pending (docs/design.md section 9.3): the sub-steps since the last deposit, their sum of F v_rel h
   * (the law's volume over k_p), their time, the move from (u0, w0) to (u1, w1) */
  int npend;
  double Jv, T, u0, w0, u1, w1;
  long ver;          /* deposits made (the surface's version) */
  int cvalid;        /* the last correction asked (rm_fix's cache): at that centre, on that version */
  long cver;
  double cat[3], cc, cg[3];
} v3_rm;

#define KL_V3_DEP_CELL 0.25 /* a deposit once the tool's place has moved this fraction of a cell along the path */
#define KL_V3_DEP_MAX 64    /* ... or after this many sub-steps in contact (a tool that hardly moves) */
#define KL_V3_DEP_DEPTH 0.025 /* ... or once the pending removal, spread over the contact patch, is this fraction of
                               * removal.tolerance deep (the correction lags what is pending: on a stiff holder
                               * every micrometre of it is 0.2 N) */

/* path coordinates (removal.h) of the point p: the nearest path sample k (walked to from *hint), u = s_k +
 * (p - p_k) . t_k along the path, w = (p - p_k) . b_k across it, b = n x t */
static void path_uw(const kl_problem *pb, const double p[3], int *hint, double *u, double *w)
{
  const int ns = pb->ns;
  int k = *hint < 0 ? 0 : *hint >= ns ? ns - 1 : *hint;
  double dk[3];
  for (int i = 0; i < 3; ++i) dk[i] = p[i] - pb->p[3 * k + i];
  double best = dot3(dk, dk);
  for (int dir = -1; dir <= 1; dir += 2)
    for (;;) {
      const int j = k + dir;
      if (j < 0 || j >= ns) break;
      double dj[3];
      for (int i = 0; i < 3; ++i) dj[i] = p[i] - pb->p[3 * j + i];
      const double e = dot3(dj, dj);
      if (!(e < best)) break;
      best = e, k = j;
    }
  *hint = k;
  const double *n = pb->nrm + 3 * k, *t = pb->tan + 3 * k;
  const double b[3] = {n[1] * t[2] - n[2] * t[1], n[2] * t[0] - n[0] * t[2], n[0] * t[1] - n[1] * t[0]};
  for (int i = 0; i < 3; ++i) dk[i] = p[i] - pb->p[3 * k + i];
  *u = pb->s[k] + dot3(dk, t);
  *w = dot3(dk, b);
}

/* the place along the path of the point p, continuous in p: the foot u of p on the path (its points P and tangents
 * T linear in s between samples, as optimiser/removal.c lays the grid), G(u) = (p - P(u)) . T(u) = 0, by Newton's
 * iteration from path_uw's guess; *dudx gets its gradient in p, T / (P' . T - (p - P) . T') (exact within a
 * segment). (path_uw's nearest-sample answer jumps where the nearest sample changes, by the point's height times
 * the turn between samples: 0.2 um of u for a tool centre 3 mm above the built-in panel.) */
static double path_foot(const kl_problem *pb, const double p[3], int *hint, double dudx[3])
{
  const int ns = pb->ns;
  double u, w, t[3] = {0, 0, 0}, D = 1;
  path_uw(pb, p, hint, &u, &w);
  int j = *hint > ns - 2 ? ns - 2 : *hint;
  for (int it = 0; it < 8; ++it) {
    while (j > 0 && u < pb->s[j]) --j;
    while (j < ns - 2 && u >= pb->s[j + 1]) ++j;
    const double ds = pb->s[j + 1] - pb->s[j], f = ds > 0 ? (u - pb->s[j]) / ds : 0.0;
    const double *p0 = pb->p + 3 * j, *p1 = p0 + 3, *t0 = pb->tan + 3 * j, *t1 = t0 + 3;
    double P[3], L[3], ln = 0, G = 0;
    for (int i = 0; i < 3; ++i) {
      P[i] = (1 - f) * p0[i] + f * p1[i];
      L[i] = (1 - f) * t0[i] + f * t1[i];
      ln += L[i] * L[i];
    }
    ln = sqrt(ln);
    for (int i = 0; i < 3; ++i) t[i] = L[i] / ln;
    /* D = dG/du with the sign flipped: P' . T - (p - P) . T', T' = (L' - T (T . L')) / |L|, L' = (t1 - t0) / ds */
    double tl = 0, dp = 0, dt = 0;
    for (int i = 0; i < 3; ++i) tl += t[i] * (t1[i] - t0[i]);
    for (int i = 0; i < 3; ++i) {
      const double Pd = ds > 0 ? (p1[i] - p0[i]) / ds : 0.0;
      const double Td = ds > 0 ? (t1[i] - t0[i] - t[i] * tl) / (ds * ln) : 0.0;
      G += (p[i] - P[i]) * t[i];
      dp += Pd * t[i];
      dt += (p[i] - P[i]) * Td;
    }
    D = dp - dt;
    if (!(D > 0.5)) D = 1.0; /* (far off the path: the fixed point's step) */
    u += G / D;
    if (!(fabs(G) > 1e-13)) break;
  }
  for (int i = 0; i < 3; ++i) dudx[i] = t[i] / D;
  return u;
}

/* the engine's depth correction (world.h, fix): the drop of the tool's protrusion over the evolved surface
 * (kl_surface_drop, <= 0) with the tool centre above the path at u, as kl_surface_drop defines it (u the centre's
 * foot on the path, path_foot); its gradient, the drop's slope along the path times du/dx (path_foot), with respect to
 * the tool centre, so that the engine's approach rate follows the evolved surface as the tool moves. (The contact
 * point's u did not serve: on the faceted mesh the point stays on an edge while the tool passes over it, so the
 * correction did not change where grad . v said it did: docs/design.md section 9.3.) */
static double rm_fix(void *ctx, const double pos[3], const double nout[3], const double at[3], double grad[3])
{
  (void)pos, (void)nout;
  v3_rm *r = ctx;
  if (r->cvalid && r->cver == r->ver && memcmp(at, r->cat, sizeof r->cat) == 0) { /* the surface has not changed */
    memcpy(grad, r->cg, sizeof r->cg);
    return r->cc;
  }
  double slope, dudx[3];
  const double u = path_foot(r->pb, at, &r->hint, dudx);
  const double c = kl_surface_drop_slope(r->rm->sf, r->rm->law, u, &slope);
  for (int i = 0; i < 3; ++i) grad[i] = slope * dudx[i];
  r->cvalid = 1, r->cver = r->ver, r->cc = c;
  memcpy(r->cat, at, sizeof r->cat);
  memcpy(r->cg, grad, sizeof r->cg);
  return c;
}

/* deposit what is pending: the sub-steps' move from (u0, w0) to (u1, w1) in their time T, at the force whose law
 * volume, k_p F v_rel T with v_rel of that move, is the sub-steps' own sum k_p F v_rel h (volume kept exactly) */
static void rm_flush(v3_rm *r)
{
  if (!r->npend) return;
  kl_removal_law *law = r->rm->law;
  const double len = sqrt((r->u1 - r->u0) * (r->u1 - r->u0) + (r->w1 - r->w0) * (r->w1 - r->w0));
  const double vrel = kl_removal_vrel(law->omega, law->rc, len / r->T);
  r->rm->vol_law += kl_surface_deposit(r->rm->sf, law, r->Jv / (vrel * r->T), r->u0, r->w0, r->u1, r->w1, r->T);
  r->npend = 0;
  r->Jv = r->T = 0;
  r->ver++;
}

/* the engine's observer (world.h, observe): the sub-step's mean normal force of the tool-part contacts deposited
 * while the tool's axis moved over the sub-step: the tool centre's place along the path from the step's start to
 * its end (kl_surface_deposit takes the tool's axis point and finds where it touches the evolved surface itself;
 * the contact point, R sin theta from the axis on a flank of slope theta, would count that offset twice) */
static void rm_observe(void *ctx, const kl_world_model *m, const kl_world_data *d, double t0, double h)
{
  (void)m, (void)t0;
  v3_rm *r = ctx;
  double F = 0;
  for (int c = 0; c < d->ncon; ++c) {
    const kl_contact *k = &d->con[c];
    if (!((k->body[0] == r->tool && k->body[1] == r->part) || (k->body[0] == r->part && k->body[1] == r->tool))) continue;
    F += fmax(k->favg, 0.0);
  }
  const double *x = d->xpos + 3 * r->tool;
  if (F > 0 && h > 0) {
    double u0, w0, u1, w1;
    path_uw(r->pb, r->xprev, &r->hint, &u0, &w0);
    path_uw(r->pb, x, &r->hint, &u1, &w1);
    kl_removal_law *law = r->rm->law;
    const kl_surface *sf = r->rm->sf;
    const double cell = KL_V3_DEP_CELL * sf->du;
    /* a place away from where the pending move ended (a jump): that goes down first */
    if (r->npend && sqrt((u0 - r->u1) * (u0 - r->u1) + (w0 - r->w1) * (w0 - r->w1)) > cell) rm_flush(r);
    kl_surface_worn_law(sf, law); /* the worn radius, as kl_surface_deposit takes it */
    if (!r->npend) r->u0 = u0, r->w0 = w0;
    const double len = sqrt((u1 - u0) * (u1 - u0) + (w1 - w0) * (w1 - w0));
    r->Jv += F * kl_removal_vrel(law->omega, law->rc, len / h) * h;
    r->T += h;
    r->u1 = u1, r->w1 = w1;
    r->npend++;
    r->rm->impulse += F * h;
    r->rm->ndep++;
    const double moved = sqrt((r->u1 - r->u0) * (r->u1 - r->u0) + (r->w1 - r->w0) * (r->w1 - r->w0));
    const double a = kl_removal_patch(F, law->R, law->L, law->Es), area = law->L > 0 ? 2.0 * a * law->L : KL_PI * a * a;
    const double pend = area > 0 ? law->kp * r->Jv / area : 0.0; /* the pending removal's mean depth */
    if (moved >= cell || r->npend >= KL_V3_DEP_MAX || pend >= KL_V3_DEP_DEPTH * r->pb->set.rm_tolerance) rm_flush(r);
  } else {
    rm_flush(r); /* out of contact: what the contact left goes down */
  }
  for (int i = 0; i < 3; ++i) r->xprev[i] = x[i];
}

/* build the world of one pass (rc: on a surface, or NULL) */
static kelvin_status build(const kl_problem *pb, const double *o, const double *v, scene *sc, v3_rm *rc, char *msg,
                           int cap)
{
  const kl_settings *s = &pb->set;
  const int ns = pb->ns;
  memset(sc, 0, sizeof *sc);
  sc->wt = malloc((size_t)ns * sizeof *sc->wt);
  sc->wp = malloc((size_t)ns * 3 * sizeof *sc->wp);
  sc->wq = malloc((size_t)ns * 4 * sizeof *sc->wq);
  sc->m = kl_world_create();
  if (!sc->wt || !sc->wp || !sc->wq || !sc->m) {
    snprintf(msg, (size_t)cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  kl_problem_waypoints(pb, o, v, sc->wt, sc->wp, sc->wq);
  for (int k = 0; k < ns; ++k) { /* the tool centre: R back along the tool axis from the TCP */
    double M[9];
    quat_mat(sc->wq + 4 * k, M);
    for (int i = 0; i < 3; ++i) sc->wp[3 * k + i] -= s->tool_R * M[3 * i + 2];
  }
  double mass = 0;
  for (int k = 0; k < ns; ++k) mass += pb->meff[k] / ns;
  kl_world_model *m = sc->m;
  /* the weight tool.weight straight down (the only gravity in the scene) */
  m->gravity[0] = m->gravity[1] = 0;
  m->gravity[2] = -s->tool_weight / mass;
  sc->W[0] = sc->W[1] = 0;
  sc->W[2] = -s->tool_weight;
  m->model = s->model;
  m->n = pb->gp[KL_GP_NC];
  if (s->model == KL_MODEL_GEN) m->gen = kl_problem_contact(pb).gen; /* the general law, as the 1-D model has it */
  m->law = s->law;
  m->rule = KL_SEP_FORCE;
  /* the contact's sub-step control (verify.hc_tol, verify.substep_fraction; docs/design.md section 5,
   * "Accuracy"): the order-5 Hunt-Crossley step's error estimate held to 1e-6 of the penetration scale
   * and a friction-coupled sub-step of 1/5 of the contact's time scale by default */
  m->hc_tol = s->verify_hc_tol;
  m->substep_fraction = s->verify_sf;
  m->force_limit = KL_V3_DIVERGE * v3_plausible(s);
  kl_body_def bd;
  kl_world_default_body(&bd);
  bd.type = KL_BODY_STATIC;
  bd.K = pb->Kc, bd.cr = s->cr, bd.mu = s->friction;
  const int work = kl_world_add_body(m, &bd);
  kl_shape_def sh;
  kl_world_default_shape(&sh);
  sh.type = KL_SHAPE_MESH;
  sh.mesh = pb->actual;
  kl_world_add_shape(m, work, &sh);
  const kl_anchor_traj traj = {ns, sc->wt, sc->wp, sc->wq, 1}; /* straight lines between waypoints */
  kl_world_default_body(&bd);
  bd.mass = mass;
  memcpy(bd.inertia, s->tool_inertia, sizeof bd.inertia);
  memcpy(bd.pos, sc->wp, 3 * sizeof(double));
  memcpy(bd.quat, sc->wq, 4 * sizeof(double));
  bd.K = pb->Kc, bd.cr = s->cr, bd.mu = s->friction;
  bd.holder = 1;
  bd.traj = &traj;
  bd.holder_K[0] = bd.holder_K[1] = s->holder_Klat;
  bd.holder_K[2] = s->holder_K;
  bd.holder_D[0] = bd.holder_D[1] = s->holder_Dlat;
  bd.holder_D[2] = s->holder_D;
  for (int i = 0; i < 3; ++i) {
    bd.holder_Kr[i] = s->holder_Krot;
    bd.holder_Dr[i] = s->holder_Drot;
  }
  sc->tool = kl_world_add_body(m, &bd);
  kl_world_default_shape(&sh);
  if (s->tool_shape == KL_TOOL_DISC) {
    double ax[3] = {s->tool_axis[0], s->tool_axis[1], s->tool_axis[2]};
    const double an = sqrt(dot3(ax, ax));
    for (int i = 0; i < 3; ++i) ax[i] /= an;
    sh.type = KL_SHAPE_DISC;
    sh.size[0] = s->tool_R;
    sh.size[1] = 0.5 * s->tool_width;
    quat_z_to(ax, sh.quat);
  } else {
    sh.type = KL_SHAPE_SPHERE;
    sh.size[0] = s->tool_R;
  }
  kl_world_add_shape(m, sc->tool, &sh);
  const int pair = kl_world_add_pair(m, sc->tool, work, pb->Kc, s->cr, s->model == KL_MODEL_KV ? pb->Dc : 0.0, s->friction);
  if (s->model == KL_MODEL_HC) kl_world_pair_chi(m, pair, pb->chi); /* the problem's chi, as the 1-D model has it */
  if (s->model == KL_MODEL_GEN && pair >= 0) kl_world_pair_gen(m, pair, m->gen);
  if (sc->tool < 0 || work < 0 || pair < 0) {
    snprintf(msg, (size_t)cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  char m2[512];
  kelvin_status st = kl_world_compile(m, m2, sizeof m2);
  if (st != KELVIN_OK) {
    snprintf(msg, (size_t)cap, "3-D verification scene: %s", m2);
    return st;
  }
  sc->d = kl_world_data_create(m);
  if (!sc->d) {
    snprintf(msg, (size_t)cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  sc->part = work;
  if (rc) { /* the contact on the evolved surface, from the start's equilibrium on (docs/design.md section 9.3) */
    rc->tool = sc->tool, rc->part = work;
    sc->d->fix = rm_fix;
    sc->d->fix_ctx = rc;
    sc->d->fix_body[0] = work;
    sc->d->fix_body[1] = sc->tool;
    sc->d->fix_max = 0.0; /* the surface only wears away */
    sc->d->observe = rm_observe;
    sc->d->observe_ctx = rc;
  }
  equilibrium(pb, sc);
  if (rc) memcpy(rc->xprev, sc->d->xpos + 3 * sc->tool, sizeof rc->xprev);
  return KELVIN_OK;
}

/* the anchor's tool axis (into the part) at time t */
static void tool_z(const scene *sc, double t, double z[3])
{
  double q[4], M[9];
  kl_world_anchor(sc->m, sc->tool, t, NULL, NULL, NULL, q, NULL);
  quat_mat(q, M);
  z[0] = M[2], z[1] = M[5], z[2] = M[8];
}

/* what a pass shares with the watch of kl_verify3d_many while it runs (NULL: nothing) */
typedef struct v3_ctl {
  int *halt;         /* set by the watch (__atomic builtins, as the engine reads it): 1 the caller asks to stop,
                        2 over the time limit */
  double *frac;      /* out: the share of the pass's time simulated */
  double limit;      /* wall seconds (0: none) from t0 */
  double t0;         /* when the pass started, its scene's build included (omp_get_wtime) */
  const char *label; /* the pass's name for the message */
  void (*inline_watch)(void *w); /* called at each sample when no thread of its own watches */
  void *w;
  double f0, fs;     /* the pass's share f is reported as f0 + fs f (a plan's passes: kl_verify3d_plans) */
  double *pstart;    /* out: when the pass started (the watch's time limit counts from it), or NULL */
} v3_ctl;

#define KL_V3_TICK 0.25 /* seconds between the watch's ticks */

/* the status and message of a pass halted (by the watch, or over the time limit here) at share f of its
 * pass time after el wall seconds; KELVIN_OK if not halted */
static kelvin_status halted(const v3_ctl *ctl, double f, double el, char *msg, int cap)
{
  int h = __atomic_load_n(ctl->halt, __ATOMIC_RELAXED);
  if (h == 0 && ctl->limit > 0 && el > ctl->limit) h = 2;
  if (h == 1) {
    snprintf(msg, (size_t)cap, "3-D verification of '%s': stopped by the caller at %.0f %% of the pass", ctl->label, 100 * f);
    return KELVIN_ERR_STOPPED;
  }
  if (h == 2) {
    char rate[64] = "";
    if (f > 0.001) snprintf(rate, sizeof rate, "; at this rate it would take about %.3g s", el / f);
    snprintf(msg, (size_t)cap, "3-D verification of '%s': stopped after %.3g s at %.1f %% of the pass, over "
             "verify.time_limit (%g s)%s. Raise verify.time_limit (0: no limit), or check the holder's and the "
             "contact's stiffness and damping against their units (a stiff, lightly damped set-up makes the engine's "
             "sub-steps tiny)",
             ctl->label, el, 100 * f, ctl->limit, rate);
    return KELVIN_ERR_LIMIT;
  }
  return KELVIN_OK;
}

static kelvin_status run_one(const kl_problem *pb, const double *o, const double *v, kl_v3_out *out, v3_ctl *ctl,
                             kl_v3_removal *rm, char *msg, int cap)
{
  if (msg && cap > 0) msg[0] = '\0';
  const int ns = pb->ns;
  if (!o || !v || !out || !out->F || !out->Favg) {
    snprintf(msg, (size_t)cap, "verify3d: commands and the outputs F, Favg are required");
    return KELVIN_ERR_ARG;
  }
  for (int k = 0; k < ns; ++k)
    if (!isfinite(o[k]) || !(isfinite(v[k]) && v[k] > 0)) {
      snprintf(msg, (size_t)cap, "verify3d: sample %d: offset must be finite and speed > 0 m/s (got %g, %g)", k, o[k], v[k]);
      return KELVIN_ERR_ARG;
    }
  if (rm && (!rm->sf || !rm->law)) {
    snprintf(msg, (size_t)cap, "verify3d: a removal pass needs its surface and law");
    return KELVIN_ERR_ARG;
  }
  v3_rm rc;
  memset(&rc, 0, sizeof rc);
  rc.pb = pb, rc.rm = rm;
  kl_surface_stats st0;
  if (rm) {
    rm->vol_law = rm->vol_grid = rm->impulse = 0;
    rm->ndep = 0;
    kl_surface_stats_of(rm->sf, rm->law, pb, &st0);
  }
  scene sc;
  kelvin_status st = build(pb, o, v, &sc, rm ? &rc : NULL, msg, cap);
  if (st != KELVIN_OK) {
    scene_free(&sc);
    return st;
  }
  const kl_world_model *m = sc.m;
  kl_world_data *d = sc.d;
  const int b = sc.tool;
  const double t_start = omp_get_wtime(), Tp = fmax(sc.wt[ns - 1] - sc.wt[0], 1e-300);
  const char *label = ctl ? ctl->label : "pass";
  kl_world_work wk;
  char why[512];
  kl_world_work_estimate(m, Tp, ns, v3_plausible(&pb->set), &wk);
  kl_world_work_text(&wk, "the tool", why, sizeof why);
  const double tl = pb->set.verify_time_limit, lim = fmax(KELVIN_WORK_LIMIT, tl * KL_V3_SUBSTEPS_PER_S);
  if (tl > 0 && wk.steps > lim) {
    snprintf(msg, (size_t)cap, "3-D verification of '%s': refused up front: about %.3g sub-steps estimated for the "
             "pass's %.3g s (%s), over the work limit %.3g sub-steps (the larger of %.3g and what verify.time_limit, "
             "%g s, allows at %.3g sub-steps a second). Check the tool's mass and inertia and the holder's and the "
             "contact's stiffness against their units, or raise verify.time_limit (0: no limit)",
             label, wk.steps, Tp, why, lim, KELVIN_WORK_LIMIT, tl, KL_V3_SUBSTEPS_PER_S);
    scene_free(&sc);
    return KELVIN_ERR_LIMIT;
  }
  if (ctl) d->stop = ctl->halt; /* the engine stops between its sub-steps when the watch says so */
  out->ncon_max = 0;
  double prev_h = 0, prev_c[3] = {0, 0, 0};
  for (int k = 0; k < ns; ++k) {
    const double t = sc.wt[k];
    if (ctl && k > 0) { /* a checkpoint per path sample: the share done, a stop request, the time limit */
      const double f = (sc.wt[k - 1] - sc.wt[0]) / Tp;
#pragma omp atomic write
      *ctl->frac = ctl->f0 + ctl->fs * f;
      if (ctl->inline_watch) ctl->inline_watch(ctl->w);
      if ((st = halted(ctl, f, omp_get_wtime() - ctl->t0, msg, cap)) != KELVIN_OK) break;
    }
    if (k > 0 && (st = kl_world_advance(m, d, t, msg, cap)) == KELVIN_ERR_STOPPED && ctl) { /* inside a sample interval */
      st = halted(ctl, (d->t - sc.wt[0]) / Tp, omp_get_wtime() - ctl->t0, msg, cap);
      if (st == KELVIN_OK) st = KELVIN_ERR_STOPPED; /* (cannot be: only the watch stops the engine) */
      break;
    }
    if (k > 0 && st == KELVIN_ERR_DIVERGED) { /* not a result: no score, no diagnosis of the 1-D model */
      char m2[512];
      snprintf(m2, sizeof m2, "%s", msg);
      char damp[256] = ""; /* Hunt-Crossley: the damping's time scale m / (chi F) at the plausible force */
      const double Fp = v3_plausible(&pb->set);
      const double td = pb->set.model == KL_MODEL_HC && pb->chi > 0 ? wk.mass / (pb->chi * Fp) : INFINITY;
      if (td < wk.h / wk.fraction)
        snprintf(damp, sizeof damp, "; stiffer still, the contact damping (contact.cr %g, chi %.3g s/m): m / (chi F) = "
                 "%.3g s at %.3g N", pb->set.cr, pb->chi, td, Fp);
      snprintf(msg, (size_t)cap, "3-D verification of '%s' diverged before sample %d: %s (the tool is body 1, the "
               "part body 0; force limit %g x the largest plausible force %.3g N); the stiffest time scale (the likely "
               "cause): %s%s",
               label, k, m2, KL_V3_DIVERGE, Fp, why, damp);
      break;
    }
    if (k > 0 && st != KELVIN_OK) {
      char m2[512];
      snprintf(m2, sizeof m2, "%s", msg);
      snprintf(msg, (size_t)cap, "3-D verification: sample %d: %s", k, m2);
      break;
    }
    double z[3], fh[3], fc[3] = {0, 0, 0};
    tool_z(&sc, t, z);
    kl_world_holder(m, d, b, t, fh, NULL, NULL);
    for (int c = 0; c < d->ncon; ++c) { /* the contacts' normal forces and friction on the tool */
      const kl_contact *ct = &d->con[c];
      const double sg = ct->body[0] == b ? 1.0 : ct->body[1] == b ? -1.0 : 0.0;
      for (int i = 0; i < 3; ++i) fc[i] += sg * (ct->normal[i] * ct->force + ct->ftan[i]);
    }
    const double sensor = dot3(fh, z) + dot3(sc.W, z);
    /* (at the start, in static equilibrium, the contact force along the axis is the sensor's reading) */
    const double contact = k == 0 ? (sc.F0 > 0 ? sensor : 0.0) : -dot3(fc, z);
    out->F[k] = sensor;
    if (out->Fc) out->Fc[k] = contact;
    if (out->t) out->t[k] = t;
    if (out->dev) {
      double ap[3], dx[3];
      kl_world_anchor(m, b, t, ap, NULL, NULL, NULL, NULL);
      for (int i = 0; i < 3; ++i) dx[i] = d->xpos[3 * b + i] - ap[i];
      out->dev[k] = dot3(dx, pb->nrm + 3 * k);
    }
    int carry = k == 0 && sc.F0 > 0;
    for (int c = 0; c < d->ncon; ++c) carry |= d->con[c].force > 0;
    if (out->contact) out->contact[k] = carry;
    if (d->ncon > out->ncon_max) out->ncon_max = d->ncon;
    /* averages over the interval: the holder's impulse along the anchor's z (accumulated in the anchor
     * frame), the weight's and the contacts' along the tool axis at the interval's middle */
    const double hz = d->hold_imp[3 * b + 2];
    if (k == 0) {
      out->Favg[0] = sensor;
      if (out->Fcavg) out->Fcavg[0] = contact;
    } else {
      const double T = t - sc.wt[k - 1];
      double zm[3], dc[3];
      tool_z(&sc, 0.5 * (t + sc.wt[k - 1]), zm);
      for (int i = 0; i < 3; ++i) dc[i] = d->con_imp[3 * b + i] - prev_c[i];
      out->Favg[k] = (hz - prev_h) / T + dot3(sc.W, zm);
      if (out->Fcavg) out->Fcavg[k] = -dot3(dc, zm) / T;
    }
    prev_h = hz;
    memcpy(prev_c, d->con_imp + 3 * b, sizeof prev_c);
  }
  out->nsub = d->nsub;
  out->seconds = omp_get_wtime() - t_start;
  if (rm) {
    rm_flush(&rc); /* the pass's last sub-steps */
    kl_surface_stats st1;
    kl_surface_stats_of(rm->sf, rm->law, pb, &st1);
    rm->vol_grid = st1.volume - st0.volume;
  }
  if (ctl && st == KELVIN_OK) {
#pragma omp atomic write
    *ctl->frac = ctl->f0 + ctl->fs;
  }
  scene_free(&sc);
  return st;
}

kelvin_status kl_verify3d_run(const kl_problem *pb, const double *o, const double *v, kl_v3_out *out, char *msg, int cap)
{
  return run_one(pb, o, v, out, NULL, NULL, msg, cap);
}

kelvin_status kl_verify3d_removal(const kl_problem *pb, const double *o, const double *v, kl_v3_out *out,
                                  kl_v3_removal *rm, char *msg, int cap)
{
  return run_one(pb, o, v, out, NULL, rm, msg, cap);
}

/* the watch of kl_verify3d_many: the passes' state as the workers leave it, read by the calling thread */
typedef struct v3_mon {
  kl_v3_watch *w;
  int npass, ndone;
  int *halt;                /* per pass: 0 running, 1 stop, 2 over the time limit (v3_ctl) */
  double t0, last;          /* start, last tick (omp_get_wtime) */
  double *frac, *tstart, *tend; /* per pass; tstart/tend 0 until started/done */
  double *pstart;           /* per pass (a plan: its pass now), the start the time limit counts from */
  int *said;                /* per pass: 1 start said, 2 expected time said, 3 end said */
  int *failed;              /* per pass: 1 if it ended without its result (written before tend) */
} v3_mon;

static const char *label_of(const v3_mon *M, int i, char *buf, size_t cap)
{
  if (M->w && M->w->labels && M->w->labels[i]) return M->w->labels[i];
  snprintf(buf, cap, "pass %d", i + 1);
  return buf;
}

/* pass i's share done and its start and end (0 until started / done), as the passes' threads write them */
static void pass_state(const v3_mon *M, int i, double *f, double *ts, double *te)
{
#pragma omp atomic read
  *f = M->frac[i];
#pragma omp atomic read
  *ts = M->tstart[i];
#pragma omp atomic read
  *te = M->tend[i];
}

/* halt every pass still running with why (1 stop, 2 time limit: v3_ctl) */
static void halt_all(v3_mon *M, int why)
{
  for (int i = 0; i < M->npass; ++i) {
    int zero = 0; /* (the first reason stays) */
    __atomic_compare_exchange_n(&M->halt[i], &zero, why, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  }
}

/* tell the caller what changed (notices), a tick a few times a second, and halt a pass over the time
 * limit; a nonzero return of the callback halts every pass */
static void watch(v3_mon *M)
{
  kl_v3_watch *w = M->w;
  if (w->stopped) return;
  const double now = omp_get_wtime();
  double fsum = 0, left = 0;
  int running = 0;
  char buf[1024], lb[32];
  for (int i = 0; i < M->npass; ++i) {
    double f, ts, te;
    pass_state(M, i, &f, &ts, &te);
    fsum += te > 0 ? 1.0 : f;
    double ps;
#pragma omp atomic read
    ps = M->pstart[i];
    if (ts > 0 && te == 0 && w->time_limit > 0 && now - ps > w->time_limit) {
      int zero = 0;
      __atomic_compare_exchange_n(&M->halt[i], &zero, 2, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    }
    if (!w->fn) continue;
    const double fr = w->f0 + (w->f1 - w->f0) * fsum / M->npass;
    const char *lab = label_of(M, i, lb, sizeof lb);
    int rc = 0;
    if (ts > 0 && M->said[i] < 1) {
      M->said[i] = 1;
      snprintf(buf, sizeof buf, "verification: pass '%s' (%d of %d) started", lab, i + 1, M->npass);
      rc = w->fn(w->ctx, fr, buf);
    }
    if (!rc && ts > 0 && te == 0 && M->said[i] < 2 && now - ts > 1.0 && f > 0.01) {
      M->said[i] = 2;
      snprintf(buf, sizeof buf, "verification: pass '%s' is expected to take about %.2g s (%.1f %% done in %.2g s)%s",
               lab, (now - ts) / f, 100 * f, now - ts,
               w->time_limit > 0 && (now - ts) / f > w->time_limit ? "; more than verify.time_limit" : "");
      rc = w->fn(w->ctx, fr, buf);
    }
    if (!rc && te > 0 && M->said[i] < 3) {
      M->said[i] = 3;
      snprintf(buf, sizeof buf, "verification: pass '%s' %s %.2f s", lab,
               __atomic_load_n(&M->failed[i], __ATOMIC_RELAXED) ? "stopped after" : "done in", te - ts);
      rc = w->fn(w->ctx, fr, buf);
    }
    if (rc) {
      w->stopped = 1;
      halt_all(M, 1);
      return;
    }
    if (ts > 0 && te == 0) {
      ++running;
      if (f > 0.01) left = fmax(left, (now - ts) * (1 - f) / f);
    }
  }
  if (!w->fn || running == 0 || now - M->last < KL_V3_TICK) return;
  M->last = now;
  int n = snprintf(buf, sizeof buf, "  verification: %.1f s;", now - M->t0);
  for (int i = 0; i < M->npass && n < (int)sizeof buf; ++i) {
    double f, ts, te;
    pass_state(M, i, &f, &ts, &te);
    if (ts > 0 && te == 0)
      n += snprintf(buf + n, sizeof buf - (size_t)n, " '%s' %.0f %%", label_of(M, i, lb, sizeof lb), 100 * f);
  }
  if (left > 0 && n < (int)sizeof buf) snprintf(buf + n, sizeof buf - (size_t)n, "; about %.2g s left", left);
  if (w->fn(w->ctx, w->f0 + (w->f1 - w->f0) * fsum / M->npass, buf) != 0) {
    w->stopped = 1;
    halt_all(M, 1);
  }
}

static void watch_inline(void *m)
{
  v3_mon *M = m;
  if (omp_get_thread_num() == 0) watch(M);
}

/* one item of v3_many: pass (or plan) i under the watch's ctl (NULL: none) */
typedef kelvin_status (*v3_item)(void *arg, int i, v3_ctl *ctl, char *msg, int cap);

/* npass items at once, OpenMP across them, under the watch w (kl_verify3d_many) */
static kelvin_status v3_many(int npass, v3_item item, void *arg, kl_v3_watch *w, char *msg, int cap)
{
  if (msg && cap > 0) msg[0] = '\0';
  if (npass <= 0) return KELVIN_OK;
  kelvin_status first = KELVIN_OK;
  int first_i = npass, next = 0;
  const size_t np = (size_t)npass;
  v3_mon M = {w, npass, 0, calloc(np, sizeof(int)), omp_get_wtime(), 0, calloc(np, sizeof(double)),
              calloc(np, sizeof(double)), calloc(np, sizeof(double)), calloc(np, sizeof(double)),
              calloc(np, sizeof(int)), calloc(np, sizeof(int))};
  kelvin_status st = KELVIN_OK;
  if (!M.halt || !M.frac || !M.tstart || !M.tend || !M.pstart || !M.said || !M.failed) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "out of memory");
    st = KELVIN_ERR_NOMEM;
    goto done;
  }
  /* with a callback or a time limit, thread 0 (the calling thread) watches the workers while they run */
  const int watched = w && (w->fn || w->time_limit > 0);
  const int workers = omp_get_max_threads() < npass ? omp_get_max_threads() : npass;
  if (w) w->stopped = 0;
#pragma omp parallel num_threads(workers + watched)
  {
    const int me = omp_get_thread_num(), team = omp_get_num_threads();
    if (watched && me == 0 && team > 1) {
      for (;;) {
        int ndone;
#pragma omp atomic read
        ndone = M.ndone;
        watch(&M);
        if (ndone >= npass) break;
        const struct timespec ts = {0, 20000000}; /* 20 ms */
        nanosleep(&ts, NULL);
      }
    } else {
      for (;;) {
        int i;
#pragma omp atomic capture
        i = next++;
        if (i >= npass) break;
        char m2[1024], lb[32];
        const double t0 = omp_get_wtime();
        v3_ctl ctl = {&M.halt[i], &M.frac[i], w ? w->time_limit : 0.0, t0, label_of(&M, i, lb, sizeof lb),
                      watched && team == 1 ? watch_inline : NULL, &M, 0.0, 1.0, &M.pstart[i]};
#pragma omp atomic write
        M.pstart[i] = t0;
#pragma omp atomic write
        M.tstart[i] = t0;
        const kelvin_status s = item(arg, i, w ? &ctl : NULL, m2, sizeof m2);
        if (s != KELVIN_OK) {
          __atomic_store_n(&M.failed[i], 1, __ATOMIC_RELAXED);
          if (s != KELVIN_ERR_STOPPED) halt_all(&M, 1); /* the others stop too: the verification has failed */
#pragma omp critical(kl_verify3d_first_failure)
          {
            /* the first pass's failure, a cause before the stops it brought about */
            const int rank = s == KELVIN_ERR_STOPPED ? 1 : 0, rank0 = first == KELVIN_ERR_STOPPED ? 1 : 0;
            if (first == KELVIN_OK || rank < rank0 || (rank == rank0 && i < first_i)) {
              first_i = i;
              first = s;
              if (msg && cap > 0) { /* (a message that names the pass needs no number) */
                if (strncmp(m2, "3-D verification of '", 21) == 0)
                  snprintf(msg, (size_t)cap, "%s", m2);
                else
                  snprintf(msg, (size_t)cap, "pass %d: %s", i, m2);
              }
            }
          }
        }
#pragma omp atomic write
        M.tend[i] = omp_get_wtime();
#pragma omp atomic update
        M.ndone++;
      }
      if (watched && team == 1) watch(&M);
    }
  }
  st = first;
done:
  free(M.halt);
  free(M.frac);
  free(M.tstart);
  free(M.pstart);
  free(M.tend);
  free(M.said);
  free(M.failed);
  return st;
}

/* kl_verify3d_many's items: its passes */
typedef struct v3_passes {
  const kl_problem *pb;
  const double *o, *v;
  kl_v3_out *out;
} v3_passes;

static kelvin_status pass_item(void *arg, int i, v3_ctl *ctl, char *msg, int cap)
{
  const v3_passes *a = arg;
  const size_t ns = (size_t)a->pb->ns;
  return run_one(a->pb, a->o + (size_t)i * ns, a->v + (size_t)i * ns, &a->out[i], ctl, NULL, msg, cap);
}

kelvin_status kl_verify3d_many(const kl_problem *pb, int npass, const double *o, const double *v, kl_v3_out *out,
                               kl_v3_watch *w, char *msg, int cap)
{
  v3_passes a = {pb, o, v, out};
  return v3_many(npass, pass_item, &a, w, msg, cap);
}

/* kl_verify3d_plans's items: its plans, each pass after pass on its surface */
typedef struct v3_plans {
  const kl_problem *pb;
  const int *npass;
  const double *const *o, *const *v;
  kl_v3_out *const *out;
  kl_v3_removal *const *rm;
} v3_plans;

static kelvin_status plan_item(void *arg, int i, v3_ctl *ctl, char *msg, int cap)
{
  const v3_plans *a = arg;
  const size_t ns = (size_t)a->pb->ns;
  const int np = a->npass[i];
  for (int j = 0; j < np; ++j) {
    if (ctl) { /* the plan's share: its passes done and this one's; the time limit per pass */
      ctl->f0 = (double)j / np, ctl->fs = 1.0 / np;
      ctl->t0 = omp_get_wtime();
      if (ctl->pstart) {
#pragma omp atomic write
        *ctl->pstart = ctl->t0;
      }
    }
    const kelvin_status s = run_one(a->pb, a->o[i] + (size_t)j * ns, a->v[i] + (size_t)j * ns, &a->out[i][j], ctl,
                                    &a->rm[i][j], msg, cap);
    if (s != KELVIN_OK) {
      if (np > 1) {
        char m2[1024];
        snprintf(m2, sizeof m2, "%s", msg);
        snprintf(msg, (size_t)cap, "%s (pass %d of %d)", m2, j + 1, np);
      }
      return s;
    }
  }
  return KELVIN_OK;
}

kelvin_status kl_verify3d_plans(const kl_problem *pb, int nplan, const int *npass, const double *const *o,
                                const double *const *v, kl_v3_out *const *out, kl_v3_removal *const *rm,
                                kl_v3_watch *w, char *msg, int cap)
{
  for (int i = 0; i < nplan; ++i)
    if (!npass || npass[i] < 0 || (npass[i] > 0 && (!o || !v || !out || !rm || !o[i] || !v[i] || !out[i] || !rm[i]))) {
      if (msg && cap > 0) snprintf(msg, (size_t)cap, "verify3d: plan %d: its passes' commands, outputs and surface are required", i);
      return KELVIN_ERR_ARG;
    }
  v3_plans a = {pb, npass, o, v, out, rm};
  return v3_many(nplan, plan_item, &a, w, msg, cap);
}
