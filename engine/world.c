/* engine/world.c: building and checking a world model, data objects, energy (see world.h). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/util3.h"
#include "engine/world_impl.h"
#include "kernels/kl_contact_static.h"
#include "kernels/kl_impact.h"

//------------------------------------------------------------------------------------------------------
// builder

kl_world_model *kl_world_create(void)
{
  kl_world_model *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->gravity[2] = -9.81;
  m->model = KL_MODEL_KV;
  m->n = 1.0;
  m->law = KL_LAW_EXACT;
  m->rule = KL_SEP_PENETRATION;
  m->vreg = 1e-3;
  m->substep_fraction = 1.0 / 20.0;
  m->onset_tol = 1e-12;
  m->query_cache = 1;
  m->hc_tol = 1e-8;
  m->ncon_max = 64;
  m->nlog_max = 4096;
  return m;
}

void kl_world_default_body(kl_body_def *b)
{
  memset(b, 0, sizeof *b);
  b->type = KL_BODY_DYNAMIC;
  b->mass = 1.0;
  b->quat[0] = 1.0;
  b->K = 1e6;
  b->cr = 1.0;
}

void kl_world_default_shape(kl_shape_def *s)
{
  memset(s, 0, sizeof *s);
  s->type = KL_SHAPE_SPHERE;
  s->size[0] = 0.1;
  s->quat[0] = 1.0;
}

/* grow every array of a group to capacity cap (elements) */
static int grow(void **p, size_t elem, int cap)
{
  void *q = realloc(*p, elem * (size_t)cap);
  if (!q) return -1;
  *p = q;
  return 0;
}

#define GROW(ptr, per) (grow((void **)&(ptr), sizeof *(ptr) * (per), cap) != 0)

int kl_world_add_body(kl_world_model *m, const kl_body_def *b)
{
  if (!m || m->compiled) return -1;
  if (m->nbody == m->cap_body) {
    const int cap = m->cap_body ? 2 * m->cap_body : 8;
    if (GROW(m->body_type, 1) || GROW(m->body_mass, 1) || GROW(m->body_inertia, 3) || GROW(m->body_pos, 3) ||
        GROW(m->body_quat, 4) || GROW(m->body_vel, 3) || GROW(m->body_angvel, 3) || GROW(m->body_K, 1) ||
        GROW(m->body_cr, 1) || GROW(m->body_D, 1) || GROW(m->body_mu, 1) || GROW(m->body_holder, 1) ||
        GROW(m->body_anchor, 3) || GROW(m->body_anchor_vel, 3) || GROW(m->body_holder_K, 3) ||
        GROW(m->body_holder_D, 3) || GROW(m->body_anchor_quat, 4) || GROW(m->body_holder_Kr, 3) ||
        GROW(m->body_holder_Dr, 3) || GROW(m->body_traj_adr, 1) || GROW(m->body_traj_n, 1) ||
        GROW(m->body_traj_linear, 1))
      return -1;
    m->cap_body = cap;
  }
  const int nk = (b->holder && b->traj && b->traj->n > 0 && b->traj->t && b->traj->pos && b->traj->quat) ? b->traj->n : 0;
  if (m->ntraj + nk > m->cap_traj) {
    int cap = m->cap_traj ? m->cap_traj : 64;
    while (cap < m->ntraj + nk) cap *= 2;
    if (GROW(m->traj_t, 1) || GROW(m->traj_pos, 3) || GROW(m->traj_vel, 3) || GROW(m->traj_quat, 4) ||
        GROW(m->traj_th, 3))
      return -1;
    m->cap_traj = cap;
  }
  const int i = m->nbody++;
  m->body_type[i] = b->type;
  m->body_mass[i] = b->mass;
  memcpy(m->body_inertia + 3 * i, b->inertia, 3 * sizeof(double));
  memcpy(m->body_pos + 3 * i, b->pos, 3 * sizeof(double));
  memcpy(m->body_quat + 4 * i, b->quat, 4 * sizeof(double));
  memcpy(m->body_vel + 3 * i, b->vel, 3 * sizeof(double));
  memcpy(m->body_angvel + 3 * i, b->angvel, 3 * sizeof(double));
  m->body_K[i] = b->K;
  m->body_cr[i] = b->cr;
  m->body_D[i] = b->D;
  m->body_mu[i] = b->mu;
  m->body_holder[i] = b->holder;
  memcpy(m->body_anchor + 3 * i, b->anchor, 3 * sizeof(double));
  memcpy(m->body_anchor_vel + 3 * i, b->anchor_vel, 3 * sizeof(double));
  memcpy(m->body_holder_K + 3 * i, b->holder_K, 3 * sizeof(double));
  memcpy(m->body_holder_D + 3 * i, b->holder_D, 3 * sizeof(double));
  memcpy(m->body_anchor_quat + 4 * i, b->anchor_quat, 4 * sizeof(double));
  if (b->anchor_quat[0] == 0 && b->anchor_quat[1] == 0 && b->anchor_quat[2] == 0 && b->anchor_quat[3] == 0)
    m->body_anchor_quat[4 * i] = 1.0; /* identity */
  memcpy(m->body_holder_Kr + 3 * i, b->holder_Kr, 3 * sizeof(double));
  memcpy(m->body_holder_Dr + 3 * i, b->holder_Dr, 3 * sizeof(double));
  m->body_traj_adr[i] = m->ntraj;
  m->body_traj_n[i] = nk;
  m->body_traj_linear[i] = nk && b->traj->linear;
  if (nk) {
    memcpy(m->traj_t + m->ntraj, b->traj->t, (size_t)nk * sizeof(double));
    memcpy(m->traj_pos + 3 * m->ntraj, b->traj->pos, (size_t)nk * 3 * sizeof(double));
    memcpy(m->traj_quat + 4 * m->ntraj, b->traj->quat, (size_t)nk * 4 * sizeof(double));
    memset(m->traj_vel + 3 * m->ntraj, 0, (size_t)nk * 3 * sizeof(double));
    m->ntraj += nk;
  }
  return i;
}

int kl_world_add_shape(kl_world_model *m, int body, const kl_shape_def *s)
{
  if (!m || m->compiled) return -1;
  if (m->nshape == m->cap_shape) {
    const int cap = m->cap_shape ? 2 * m->cap_shape : 8;
    if (GROW(m->shape_body, 1) || GROW(m->shape_type, 1) || GROW(m->shape_size, 3) || GROW(m->shape_pos, 3) ||
        GROW(m->shape_quat, 4) || GROW(m->shape_pad, 1) || GROW(m->shape_rbound, 1) || GROW(m->shape_thick, 1) ||
        GROW(m->shape_mesh, 1) || GROW(m->shape_hull_adr, 1) || GROW(m->shape_hull_num, 1))
      return -1;
    m->cap_shape = cap;
  }
  const int nh = (s->type == KL_SHAPE_HULL && s->hull && s->nhull > 0) ? s->nhull : 0;
  if (m->nhull_vert + nh > m->cap_hull) {
    int cap = m->cap_hull ? m->cap_hull : 64;
    while (cap < m->nhull_vert + nh) cap *= 2;
    if (GROW(m->hull_vert, 3)) return -1;
    m->cap_hull = cap;
  }
  const int i = m->nshape++;
  m->shape_body[i] = body;
  m->shape_type[i] = s->type;
  memcpy(m->shape_size + 3 * i, s->size, 3 * sizeof(double));
  memcpy(m->shape_pos + 3 * i, s->pos, 3 * sizeof(double));
  memcpy(m->shape_quat + 4 * i, s->quat, 4 * sizeof(double));
  m->shape_pad[i] = s->pad;
  m->shape_mesh[i] = s->mesh;
  m->shape_hull_adr[i] = m->nhull_vert;
  m->shape_hull_num[i] = nh;
  if (nh) memcpy(m->hull_vert + 3 * m->nhull_vert, s->hull, (size_t)nh * 3 * sizeof(double));
  m->nhull_vert += nh;
  m->shape_rbound[i] = 0;
  m->shape_thick[i] = 0;
  return i;
}

int kl_world_add_pair(kl_world_model *m, int body_a, int body_b, double K, double cr, double D, double mu)
{
  if (!m || m->compiled) return -1;
  if (m->npair == m->cap_pair) {
    const int cap = m->cap_pair ? 2 * m->cap_pair : 4;
    if (GROW(m->pair_body, 2) || GROW(m->pair_K, 1) || GROW(m->pair_cr, 1) || GROW(m->pair_D, 1) || GROW(m->pair_mu, 1) ||
        GROW(m->pair_chi, 1) || GROW(m->pair_gen, 1))
      return -1;
    m->cap_pair = cap;
  }
  const int i = m->npair++;
  m->pair_body[2 * i] = body_a;
  m->pair_body[2 * i + 1] = body_b;
  m->pair_K[i] = K;
  m->pair_cr[i] = cr;
  m->pair_D[i] = D;
  m->pair_mu[i] = mu;
  m->pair_chi[i] = 0.0;
  m->pair_gen[i] = (kl_gen_law){0.0, 0.0, 0.0, 0.0, 0.0};
  return i;
}
#undef GROW

int kl_world_pair_chi(kl_world_model *m, int p, double chi)
{
  if (!m || m->compiled || p < 0 || p >= m->npair || !(isfinite(chi) && chi >= 0)) return -1;
  m->pair_chi[p] = chi;
  return 0;
}

int kl_world_pair_gen(kl_world_model *m, int p, kl_gen_law law)
{
  if (!m || m->compiled || p < 0 || p >= m->npair) return -1;
  m->pair_gen[p] = law;
  return 0;
}

void kl_world_free(kl_world_model *m)
{
  if (!m) return;
  void *ptrs[] = {m->body_type, m->body_mass, m->body_inertia, m->body_pos, m->body_quat, m->body_vel,
                  m->body_angvel, m->body_K, m->body_cr, m->body_D, m->body_mu, m->body_holder, m->body_anchor,
                  m->body_anchor_vel, m->body_holder_K, m->body_holder_D, m->shape_body, m->shape_type,
                  m->shape_size, m->shape_pos, m->shape_quat, m->shape_pad, m->shape_rbound, m->shape_thick,
                  (void *)m->shape_mesh, m->shape_hull_adr, m->shape_hull_num, m->hull_vert, m->pair_body,
                  m->pair_K, m->pair_cr, m->pair_D, m->pair_mu, m->pair_chi, m->pair_gen, m->body_anchor_quat, m->body_holder_Kr,
                  m->body_holder_Dr, m->body_traj_adr, m->body_traj_n, m->body_traj_linear, m->traj_t, m->traj_pos, m->traj_vel,
                  m->traj_quat, m->traj_th};
  for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; ++i) free(ptrs[i]);
  free(m);
}

//------------------------------------------------------------------------------------------------------
// compile: checks and derived quantities

/* volume and inertia (per unit density, about the shape's own centre, shape frame) */
static double shape_volume(const kl_world_model *m, int s, double I[3])
{
  const double *z = m->shape_size + 3 * s;
  const double pi = 3.14159265358979323846;
  I[0] = I[1] = I[2] = 0;
  switch (m->shape_type[s]) {
  case KL_SHAPE_SPHERE: {
    const double V = 4.0 / 3.0 * pi * z[0] * z[0] * z[0];
    I[0] = I[1] = I[2] = 0.4 * V * z[0] * z[0];
    return V;
  }
  case KL_SHAPE_BOX: {
    const double V = 8.0 * z[0] * z[1] * z[2];
    I[0] = V / 3.0 * (z[1] * z[1] + z[2] * z[2]);
    I[1] = V / 3.0 * (z[0] * z[0] + z[2] * z[2]);
    I[2] = V / 3.0 * (z[0] * z[0] + z[1] * z[1]);
    return V;
  }
  case KL_SHAPE_CYLINDER:
  case KL_SHAPE_DISC: {
    const double r = z[0], L = z[1], V = pi * r * r * 2.0 * L;
    I[0] = I[1] = V * (3.0 * r * r + 4.0 * L * L) / 12.0;
    I[2] = 0.5 * V * r * r;
    return V;
  }
  case KL_SHAPE_CAPSULE: {
    /* cylinder plus two hemispheres (centroid 3r/8 from their flat faces) */
    const double r = z[0], L = z[1];
    const double Vc = pi * r * r * 2.0 * L, Vh = 2.0 / 3.0 * pi * r * r * r;
    const double Ih = Vh * (83.0 / 320.0 * r * r + (L + 3.0 * r / 8.0) * (L + 3.0 * r / 8.0));
    I[0] = I[1] = Vc * (3.0 * r * r + 4.0 * L * L) / 12.0 + 2.0 * Ih;
    I[2] = 0.5 * Vc * r * r + 2.0 * 0.4 * Vh * r * r;
    return Vc + 2.0 * Vh;
  }
  case KL_SHAPE_HULL: {
    /* its bounding box (documented approximation) */
    double lo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, hi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
    const double *v = m->hull_vert + 3 * m->shape_hull_adr[s];
    for (int k = 0; k < m->shape_hull_num[s]; ++k)
      for (int a = 0; a < 3; ++a) {
        lo[a] = fmin(lo[a], v[3 * k + a]);
        hi[a] = fmax(hi[a], v[3 * k + a]);
      }
    const double h[3] = {0.5 * (hi[0] - lo[0]), 0.5 * (hi[1] - lo[1]), 0.5 * (hi[2] - lo[2])};
    const double V = 8.0 * h[0] * h[1] * h[2];
    I[0] = V / 3.0 * (h[1] * h[1] + h[2] * h[2]);
    I[1] = V / 3.0 * (h[0] * h[0] + h[2] * h[2]);
    I[2] = V / 3.0 * (h[0] * h[0] + h[1] * h[1]);
    return V;
  }
  default: return 0;
  }
}

kelvin_status kl_world_compile(kl_world_model *m, char *msg, int cap)
{
#define BAD(...)                                                                                             \
  do {                                                                                                       \
    if (msg && cap > 0) snprintf(msg, (size_t)cap, __VA_ARGS__);                                             \
    return KELVIN_ERR_ARG;                                                                                   \
  } while (0)
  if (msg && cap > 0) msg[0] = '\0';
  if (!m) BAD("model is NULL");
  for (int a = 0; a < 3; ++a)
    if (!isfinite(m->gravity[a])) BAD("gravity: must be finite");
  if (m->model != KL_MODEL_KV && m->model != KL_MODEL_HC && m->model != KL_MODEL_GEN)
    BAD("contact model: must be kv, hc or general (code %d)", m->model);
  if (m->model == KL_MODEL_KV && m->n != 1.0) BAD("exponent: Kelvin-Voigt is linear (n = 1), got %g", m->n);
  if (m->model == KL_MODEL_GEN) {
    char w[160];
    if (kl_gen_law_bad(m->gen, w, sizeof w)) BAD("contact: %s", w);
    for (int p = 0; p < m->npair; ++p)
      if (m->pair_gen[p].k > 0 && kl_gen_law_bad(m->pair_gen[p], w, sizeof w)) BAD("pair %d: %s", p, w);
    m->n = m->gen.n1;
  } else if (!(m->n >= 1 && m->n <= 3)) {
    BAD("exponent: must be in [1, 3], got %g", m->n);
  }
  if (m->law < 0 || m->law >= KL_NLAWS) BAD("law: unknown damping law code %d", m->law);
  if (m->rule != KL_SEP_PENETRATION && m->rule != KL_SEP_FORCE) BAD("separation: unknown rule %d", m->rule);
  if (!(isfinite(m->vreg) && m->vreg > 0)) BAD("friction regularisation velocity: must be > 0 m/s, got %g", m->vreg);
  if (!(m->force_limit >= 0)) BAD("force limit: must be >= 0 N (0: none), got %g", m->force_limit);
  if (!(m->substep_fraction > 0 && m->substep_fraction <= 0.5)) BAD("substep fraction: must be in (0, 0.5], got %g", m->substep_fraction);
  if (!(isfinite(m->onset_tol) && m->onset_tol > 0)) BAD("onset tolerance: must be > 0 m, got %g", m->onset_tol);
  if (!(m->hc_tol >= 1e-14 && m->hc_tol <= 1e-2)) BAD("Hunt-Crossley tolerance: must be in [1e-14, 1e-2], got %g", m->hc_tol);
  if (m->ncon_max < 1 || m->ncon_max > 4096) BAD("contact capacity: must be in [1, 4096], got %d", m->ncon_max);
  if (m->nlog_max < 0) BAD("event log capacity: must be >= 0, got %d", m->nlog_max);
  if (m->nbody < 1) BAD("the world has no bodies");
  for (int i = 0; i < m->nbody; ++i) {
    const int t = m->body_type[i];
    if (t != KL_BODY_DYNAMIC && t != KL_BODY_STATIC && t != KL_BODY_KINEMATIC) BAD("body %d: unknown type %d", i, t);
    for (int a = 0; a < 3; ++a)
      if (!isfinite(m->body_pos[3 * i + a]) || !isfinite(m->body_vel[3 * i + a]) || !isfinite(m->body_angvel[3 * i + a]))
        BAD("body %d: position, velocity and angular velocity must be finite", i);
    double qn = 0;
    for (int a = 0; a < 4; ++a) qn += m->body_quat[4 * i + a] * m->body_quat[4 * i + a];
    if (!(isfinite(qn) && qn > 1e-20)) BAD("body %d: orientation quaternion must be non-zero and finite", i);
    q_normalize(m->body_quat + 4 * i);
    if (t == KL_BODY_DYNAMIC && !(isfinite(m->body_mass[i]) && m->body_mass[i] > 0))
      BAD("body %d: mass must be > 0 kg, got %g", i, m->body_mass[i]);
    if (t != KL_BODY_DYNAMIC) m->body_mass[i] = 0;
    if (!(isfinite(m->body_K[i]) && m->body_K[i] > 0)) BAD("body %d: stiffness must be > 0, got %g", i, m->body_K[i]);
    if (!(m->body_cr[i] > 0 && m->body_cr[i] <= 1)) BAD("body %d: restitution must be in (0, 1], got %g", i, m->body_cr[i]);
    if (!(isfinite(m->body_D[i]) && m->body_D[i] >= 0)) BAD("body %d: damping must be >= 0, got %g", i, m->body_D[i]);
    if (!(isfinite(m->body_mu[i]) && m->body_mu[i] >= 0)) BAD("body %d: friction must be >= 0, got %g", i, m->body_mu[i]);
    if (m->body_holder[i]) {
      if (t != KL_BODY_DYNAMIC) BAD("body %d: only a dynamic body can be held", i);
      for (int a = 0; a < 3; ++a) {
        if (!(isfinite(m->body_holder_K[3 * i + a]) && m->body_holder_K[3 * i + a] >= 0))
          BAD("body %d: holder stiffness must be >= 0", i);
        if (!(isfinite(m->body_holder_D[3 * i + a]) && m->body_holder_D[3 * i + a] >= 0))
          BAD("body %d: holder damping must be >= 0", i);
        if (!(isfinite(m->body_holder_Kr[3 * i + a]) && m->body_holder_Kr[3 * i + a] >= 0))
          BAD("body %d: holder rotational stiffness must be >= 0", i);
        if (!(isfinite(m->body_holder_Dr[3 * i + a]) && m->body_holder_Dr[3 * i + a] >= 0))
          BAD("body %d: holder rotational damping must be >= 0", i);
        if (!isfinite(m->body_anchor[3 * i + a]) || !isfinite(m->body_anchor_vel[3 * i + a]))
          BAD("body %d: holder anchor and its velocity must be finite", i);
      }
      double an = 0;
      for (int a = 0; a < 4; ++a) an += m->body_anchor_quat[4 * i + a] * m->body_anchor_quat[4 * i + a];
      if (!(isfinite(an) && an > 1e-20)) BAD("body %d: anchor orientation must be a non-zero finite quaternion", i);
      q_normalize(m->body_anchor_quat + 4 * i);
      const int nk = m->body_traj_n[i], a0 = m->body_traj_adr[i];
      if (nk == 1) BAD("body %d: an anchor trajectory needs at least 2 knots", i);
      for (int k = 0; k < nk; ++k) {
        const int j = a0 + k;
        double kq = 0;
        for (int a = 0; a < 4; ++a) kq += m->traj_quat[4 * j + a] * m->traj_quat[4 * j + a];
        if (!isfinite(m->traj_t[j]) || !isfinite(m->traj_pos[3 * j]) || !isfinite(m->traj_pos[3 * j + 1]) ||
            !isfinite(m->traj_pos[3 * j + 2]) || !(isfinite(kq) && kq > 1e-20))
          BAD("body %d: anchor trajectory knot %d: time, position and orientation must be finite (quaternion non-zero)", i, k);
        if (k > 0 && !(m->traj_t[j] > m->traj_t[j - 1]))
          BAD("body %d: anchor trajectory knot %d: times must increase (%g after %g)", i, k, m->traj_t[j], m->traj_t[j - 1]);
        q_normalize(m->traj_quat + 4 * j);
        /* the shorter way round from the previous knot */
        if (k > 0 && v3_dot(m->traj_quat + 4 * j + 1, m->traj_quat + 4 * j - 3) + m->traj_quat[4 * j] * m->traj_quat[4 * j - 4] < 0)
          for (int a = 0; a < 4; ++a) m->traj_quat[4 * j + a] = -m->traj_quat[4 * j + a];
      }
      /* each interval's rotation vector (world): q_hi = exp(th / 2) q_lo, |th| <= pi */
      for (int k = 0; k < nk; ++k) {
        const int j = a0 + k;
        double *th = m->traj_th + 3 * j;
        v3_zero(th);
        if (k == nk - 1) continue;
        const double *q0 = m->traj_quat + 4 * j, *q1 = q0 + 4;
        const double i0[4] = {q0[0], -q0[1], -q0[2], -q0[3]};
        double r[4];
        q_mul(r, q1, i0); /* q1 = r q0 */
        q_rotvec(r, th);
      }
      /* knot velocities: the derivative of the parabola through three knots (one-sided at the ends) */
      for (int k = 0; k < nk; ++k) {
        const int j = a0 + k;
        const int l = k == 0 ? a0 : k == nk - 1 ? j - 2 : j - 1; /* three knots l < c < r around j */
        const int c = l + 1, r = l + 2;
        /* parabola through knots l < c < r (or the chord with two knots), differentiated at knot j */
        const double *T = m->traj_t, *P = m->traj_pos;
        for (int a = 0; a < 3; ++a) {
          double v;
          if (nk == 2) {
            v = (P[3 * (a0 + 1) + a] - P[3 * a0 + a]) / (T[a0 + 1] - T[a0]);
          } else {
            const double t0 = T[l], t1 = T[c], t2 = T[r], x = T[j];
            const double d01 = (P[3 * c + a] - P[3 * l + a]) / (t1 - t0), d12 = (P[3 * r + a] - P[3 * c + a]) / (t2 - t1);
            const double dd = (d12 - d01) / (t2 - t0); /* second divided difference */
            v = d01 + dd * ((x - t0) + (x - t1));      /* Newton form of the derivative */
          }
          m->traj_vel[3 * j + a] = v;
        }
      }
    }
    if (t == KL_BODY_STATIC) {
      v3_zero(m->body_vel + 3 * i);
      v3_zero(m->body_angvel + 3 * i);
    }
  }
  for (int s = 0; s < m->nshape; ++s) {
    const int b = m->shape_body[s], t = m->shape_type[s];
    const double *z = m->shape_size + 3 * s;
    if (b < 0 || b >= m->nbody) BAD("shape %d: body index %d out of range", s, b);
    if (t < 0 || t >= KL_NSHAPE) BAD("shape %d: unknown type %d", s, t);
    if (!(isfinite(m->shape_pad[s]) && m->shape_pad[s] >= 0)) BAD("shape %d: padding must be >= 0 m, got %g", s, m->shape_pad[s]);
    double qn = 0;
    for (int a = 0; a < 4; ++a) qn += m->shape_quat[4 * s + a] * m->shape_quat[4 * s + a];
    if (!(isfinite(qn) && qn > 1e-20)) BAD("shape %d: orientation quaternion must be non-zero and finite", s);
    q_normalize(m->shape_quat + 4 * s);
    for (int a = 0; a < 3; ++a)
      if (!isfinite(m->shape_pos[3 * s + a]) || !isfinite(z[a])) BAD("shape %d: position and size must be finite", s);
    const double pad = m->shape_pad[s];
    switch (t) {
    case KL_SHAPE_SPHERE:
      if (!(z[0] > 0)) BAD("shape %d: sphere radius must be > 0 m, got %g", s, z[0]);
      m->shape_rbound[s] = z[0] + pad;
      m->shape_thick[s] = z[0];
      break;
    case KL_SHAPE_BOX:
      if (!(z[0] > 0 && z[1] > 0 && z[2] > 0)) BAD("shape %d: box half extents must be > 0 m, got %g %g %g", s, z[0], z[1], z[2]);
      m->shape_rbound[s] = v3_norm(z) + pad;
      m->shape_thick[s] = fmin(z[0], fmin(z[1], z[2]));
      break;
    case KL_SHAPE_CAPSULE:
    case KL_SHAPE_CYLINDER:
    case KL_SHAPE_DISC:
      if (!(z[0] > 0 && z[1] > 0)) BAD("shape %d: radius and half length must be > 0 m, got %g %g", s, z[0], z[1]);
      m->shape_rbound[s] = (t == KL_SHAPE_CAPSULE ? z[0] + z[1] : sqrt(z[0] * z[0] + z[1] * z[1])) + pad;
      m->shape_thick[s] = t == KL_SHAPE_CAPSULE ? z[0] : fmin(z[0], z[1]);
      break;
    case KL_SHAPE_HULL: {
      if (m->shape_hull_num[s] < 4) BAD("shape %d: a convex hull needs at least 4 vertices, got %d", s, m->shape_hull_num[s]);
      double r = 0, lo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, hi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
      const double *v = m->hull_vert + 3 * m->shape_hull_adr[s];
      for (int k = 0; k < m->shape_hull_num[s]; ++k) {
        for (int a = 0; a < 3; ++a) {
          if (!isfinite(v[3 * k + a])) BAD("shape %d: hull vertex %d is not finite", s, k);
          lo[a] = fmin(lo[a], v[3 * k + a]);
          hi[a] = fmax(hi[a], v[3 * k + a]);
        }
        r = fmax(r, v3_norm(v + 3 * k));
      }
      m->shape_rbound[s] = r + pad;
      m->shape_thick[s] = 0.5 * fmin(hi[0] - lo[0], fmin(hi[1] - lo[1], hi[2] - lo[2]));
      if (!(m->shape_thick[s] > 0)) BAD("shape %d: convex hull is flat (zero thickness)", s);
      break;
    }
    case KL_SHAPE_PLANE:
      if (m->body_type[b] != KL_BODY_STATIC) BAD("shape %d: a plane must belong to a static body", s);
      m->shape_rbound[s] = INFINITY;
      m->shape_thick[s] = INFINITY;
      break;
    case KL_SHAPE_MESH:
      if (m->body_type[b] != KL_BODY_STATIC) BAD("shape %d: a mesh must belong to a static body", s);
      if (!m->shape_mesh[s]) BAD("shape %d: mesh is NULL", s);
      if (!(m->shape_pos[3 * s] == 0 && m->shape_pos[3 * s + 1] == 0 && m->shape_pos[3 * s + 2] == 0 &&
            m->shape_quat[4 * s] == 1 && m->body_pos[3 * b] == 0 && m->body_pos[3 * b + 1] == 0 &&
            m->body_pos[3 * b + 2] == 0 && m->body_quat[4 * b] == 1))
        BAD("shape %d: a mesh is placed by its own coordinates (its body and shape poses must be identity)", s);
      m->shape_rbound[s] = INFINITY;
      m->shape_thick[s] = INFINITY;
      break;
    default: break;
    }
  }
  for (int p = 0; p < m->npair; ++p) {
    const int a = m->pair_body[2 * p], b = m->pair_body[2 * p + 1];
    if (a < 0 || a >= m->nbody || b < 0 || b >= m->nbody || a == b) BAD("pair %d: bodies %d, %d out of range", p, a, b);
    if (!(isfinite(m->pair_K[p]) && m->pair_K[p] > 0)) BAD("pair %d: stiffness must be > 0, got %g", p, m->pair_K[p]);
    if (!(m->pair_cr[p] > 0 && m->pair_cr[p] <= 1)) BAD("pair %d: restitution must be in (0, 1], got %g", p, m->pair_cr[p]);
    if (!(isfinite(m->pair_D[p]) && m->pair_D[p] >= 0)) BAD("pair %d: damping must be >= 0, got %g", p, m->pair_D[p]);
    if (!(isfinite(m->pair_mu[p]) && m->pair_mu[p] >= 0)) BAD("pair %d: friction must be >= 0, got %g", p, m->pair_mu[p]);
  }
  /* inertia from the shapes (uniform density) where none was given: principal axes are taken as the
   * body axes (the shapes' products of inertia are not kept) */
  for (int i = 0; i < m->nbody; ++i) {
    if (m->body_type[i] != KL_BODY_DYNAMIC) continue;
    double *I = m->body_inertia + 3 * i;
    if (I[0] == 0 && I[1] == 0 && I[2] == 0) {
      double V = 0, J[3] = {0, 0, 0};
      for (int s = 0; s < m->nshape; ++s) {
        if (m->shape_body[s] != i) continue;
        double Is[3], R[9];
        const double Vs = shape_volume(m, s, Is);
        q_to_m3(R, m->shape_quat + 4 * s);
        const double *p = m->shape_pos + 3 * s;
        for (int a = 0; a < 3; ++a) {
          double Ia = 0; /* diagonal of R diag(Is) R^T */
          for (int k = 0; k < 3; ++k) Ia += R[3 * a + k] * R[3 * a + k] * Is[k];
          J[a] += Ia + Vs * (v3_dot(p, p) - p[a] * p[a]);
        }
        V += Vs;
      }
      if (!(V > 0)) BAD("body %d: no inertia given and no shape to compute it from", i);
      for (int a = 0; a < 3; ++a) I[a] = m->body_mass[i] * J[a] / V;
    }
    for (int a = 0; a < 3; ++a)
      if (!(isfinite(I[a]) && I[a] > 0)) BAD("body %d: inertia must be > 0 kg m^2, got %g %g %g", i, I[0], I[1], I[2]);
  }
  m->compiled = 1;
  return KELVIN_OK;
#undef BAD
}

//------------------------------------------------------------------------------------------------------
// data

/* round up to 16 bytes */
static size_t al16(size_t n) { return (n + 15) & ~(size_t)15; }

kl_world_data *kl_world_data_create(const kl_world_model *m)
{
  if (!m || !m->compiled) return NULL;
  const size_t nb = (size_t)m->nbody, ns = (size_t)m->nshape, nc = (size_t)m->ncon_max;
  const size_t nf = 8 * nc + 64;
  /* with a mesh in the model: each sphere's KL_QC_WAYS query caches, and the sphere query's closest
   * points (collision_ccd.c) */
  size_t nsph = 0, hasmesh = 0;
  for (int i = 0; i < m->nshape; ++i) hasmesh |= m->shape_type[i] == KL_SHAPE_MESH;
  for (int i = 0; i < m->nshape && hasmesh; ++i) nsph += m->shape_type[i] == KL_SHAPE_SPHERE;
  const size_t nq = nsph * KL_QC_WAYS, ntq = hasmesh ? KL_TRI_CAP : 0;
  size_t sz = al16(sizeof(kl_world_data)) + al16(sizeof(kl_scratch));
  const size_t dbl = sizeof(double);
  const size_t parts[] = {
    nb * 3 * dbl, nb * 4 * dbl, nb * 3 * dbl, nb * 3 * dbl,            /* state */
    nc * sizeof(kl_contact), (size_t)m->nlog_max * sizeof(kl_contact_event),
    nf * sizeof(kl_feature), KL_TRI_CAP * sizeof(int), ntq * 3 * dbl, ntq * sizeof(int), ns * 3 * dbl, ns * 9 * dbl,
    nb * 9 * dbl, nb * 9 * dbl,
    nb * 12 * dbl, nc * nc * dbl, nc * sizeof(kl_csys), nb * 3 * dbl, nb * 4 * dbl, nb * 3 * dbl, nb * 3 * dbl,
    nf * sizeof(kl_feature), nc * sizeof(kl_feature), nb * dbl, nf * sizeof(int), nb * 3 * dbl, nb * 3 * dbl,
    ns * sizeof(int), nq * sizeof(int), nq * sizeof(int), nq * 3 * dbl, nq * 3 * dbl, nq * dbl, nq * dbl,
    nq * KL_QC_CAP * sizeof(int), ns * 3 * dbl, ns * 9 * dbl, ns * ns * dbl, nb * 6 * dbl, nb * 3 * dbl};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) sz += al16(parts[i]);
  char *buf = calloc(1, sz);
  if (!buf) return NULL;
  kl_world_data *d = (kl_world_data *)buf;
  char *p = buf + al16(sizeof(kl_world_data));
  kl_scratch *S = (kl_scratch *)p;
  p += al16(sizeof(kl_scratch));
  void **dst[] = {(void **)&d->xpos, (void **)&d->xquat, (void **)&d->vel, (void **)&d->angvel, (void **)&d->con,
                  (void **)&d->log, (void **)&S->feat, (void **)&S->tri, (void **)&S->tri_q, (void **)&S->tri_f,
                  (void **)&S->sx, (void **)&S->sR,
                  (void **)&S->R, (void **)&S->Iinv, (void **)&S->acc, (void **)&S->A, (void **)&S->cs,
                  (void **)&S->s_xpos, (void **)&S->s_xquat, (void **)&S->s_vel, (void **)&S->s_angvel,
                  (void **)&S->pre, (void **)&S->ended, (void **)&S->abound, (void **)&S->fused, (void **)&d->hold_imp,
                  (void **)&d->con_imp, (void **)&S->qc_of, (void **)&S->qc_mesh, (void **)&S->qc_n, (void **)&S->qc_c,
                  (void **)&S->qc_p, (void **)&S->qc_r, (void **)&S->qc_u, (void **)&S->qc_tri, (void **)&S->lc_sx,
                  (void **)&S->lc_sR, (void **)&S->lc_gap, (void **)&S->fext, (void **)&S->snap};
  _Static_assert(sizeof parts / sizeof parts[0] == sizeof dst / sizeof dst[0], "a pointer for every part");
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) {
    *dst[i] = p;
    p += al16(parts[i]);
  }
  S->nfeat_max = (int)nf;
  S->nqc = (int)nq;
  for (int i = 0, k = 0; i < m->nshape; ++i) S->qc_of[i] = nsph > 0 && m->shape_type[i] == KL_SHAPE_SPHERE ? k++ : -1;
  d->scratch = S;
  kl_world_reset(m, d);
  return d;
}

void kl_world_data_free(kl_world_data *d) { free(d); }

void kl_world_reset(const kl_world_model *m, kl_world_data *d)
{
  d->t = 0;
  memcpy(d->xpos, m->body_pos, (size_t)m->nbody * 3 * sizeof(double));
  memcpy(d->xquat, m->body_quat, (size_t)m->nbody * 4 * sizeof(double));
  memcpy(d->vel, m->body_vel, (size_t)m->nbody * 3 * sizeof(double));
  memcpy(d->angvel, m->body_angvel, (size_t)m->nbody * 3 * sizeof(double));
  d->ncon = 0;
  d->nsub = d->nonset = d->nend = d->ncut = d->ncon_overflow = d->nlog_overflow = 0;
  d->nlog = 0;
  d->warn_nonfinite = 0;
  memset(d->hold_imp, 0, (size_t)m->nbody * 3 * sizeof(double));
  memset(d->con_imp, 0, (size_t)m->nbody * 3 * sizeof(double));
  kl_scratch *S = d->scratch;
  S->feat_overflow = S->tri_overflow = 0;
  S->nfeat = S->npre = S->nended = 0;
  S->ended_t = -INFINITY;
  for (int i = 0; i < S->nqc; ++i) S->qc_mesh[i] = -1;
  S->lc_valid = 0;
  S->anc_b = -1;
}

double kl_world_energy(const kl_world_model *m, const kl_world_data *d)
{
  double e = 0;
  for (int b = 0; b < m->nbody; ++b) {
    if (m->body_type[b] != KL_BODY_DYNAMIC) continue;
    const double mass = m->body_mass[b];
    const double *v = d->vel + 3 * b, *w = d->angvel + 3 * b;
    double R[9], I[9], Iw[3];
    q_to_m3(R, d->xquat + 4 * b);
    inertia_world(I, R, m->body_inertia + 3 * b);
    m3_mulv(Iw, I, w);
    e += 0.5 * mass * v3_dot(v, v) + 0.5 * v3_dot(w, Iw) - mass * v3_dot(m->gravity, d->xpos + 3 * b);
    if (m->body_holder[b]) { /* the springs' energy: extension and rotation in the anchor frame */
      double ap[3], aq[4], Ra[9], ext[3], rel[3], th[3];
      kl_world_anchor(m, b, d->t, ap, NULL, NULL, aq, NULL);
      q_to_m3(Ra, aq);
      v3_sub(rel, ap, d->xpos + 3 * b);
      m3_mulvT(ext, Ra, rel);
      kl_holder_rotvec(aq, d->xquat + 4 * b, th);
      for (int a = 0; a < 3; ++a)
        e += 0.5 * m->body_holder_K[3 * b + a] * ext[a] * ext[a] + 0.5 * m->body_holder_Kr[3 * b + a] * th[a] * th[a];
    }
  }
  for (int c = 0; c < d->ncon; ++c) {
    const double x = d->con[c].depth - d->con[c].dstart;
    const double n = m->model == KL_MODEL_GEN ? d->con[c].gen.n1 : m->n;
    if (x > 0) e += d->con[c].K * pow(x, n + 1.0) / (n + 1.0);
  }
  return e;
}

void kl_world_contact_force(const kl_world_model *m, const kl_world_data *d, int b, double f[3])
{
  (void)m;
  v3_zero(f);
  for (int c = 0; c < d->ncon; ++c) {
    const kl_contact *k = &d->con[c];
    if (k->body[0] == b) v3_addscl(f, k->normal, k->force);
    if (k->body[1] == b) v3_addscl(f, k->normal, -k->force);
  }
}

//------------------------------------------------------------------------------------------------------
// holders: the anchor frame and the 6-DoF spring-damper

void kl_holder_rotvec(const double qa[4], const double qb[4], double th[3])
{
  /* q_rel = qa^-1 qb: the body frame seen from the anchor frame; theta = 2 atan2(|v|, w) v/|v| */
  const double ia[4] = {qa[0], -qa[1], -qa[2], -qa[3]};
  double r[4];
  q_mul(r, ia, qb);
  q_rotvec(r, th);
}

/* kl_world_anchor with the jerk (d^3/dt^3 of the position, constant on each interval) */
static void anchor_full(const kl_world_model *m, int b, double t, double pos[3], double vel[3], double acc[3],
                        double jerk[3], double quat[4], double angvel[3])
{
  double p[3], v[3] = {0, 0, 0}, a[3] = {0, 0, 0}, jk[3] = {0, 0, 0}, q[4], w[3] = {0, 0, 0};
  const int nk = m->body_holder[b] ? m->body_traj_n[b] : 0;
  if (!m->body_holder[b]) {
    v3_copy(p, m->body_pos + 3 * b);
    memcpy(q, m->body_quat + 4 * b, sizeof q);
  } else if (nk == 0) {
    for (int i = 0; i < 3; ++i) {
      v[i] = m->body_anchor_vel[3 * b + i];
      p[i] = m->body_anchor[3 * b + i] + v[i] * t;
    }
    memcpy(q, m->body_anchor_quat + 4 * b, sizeof q);
  } else {
    const int a0 = m->body_traj_adr[b];
    const double *T = m->traj_t + a0, *P = m->traj_pos + 3 * a0, *V = m->traj_vel + 3 * a0, *Q = m->traj_quat + 4 * a0;
    if (t < T[0] || t > T[nk - 1]) { /* rests before the first knot and after the last */
      const int e = t < T[0] ? 0 : nk - 1;
      v3_copy(p, P + 3 * e);
      memcpy(q, Q + 4 * e, sizeof q);
    } else {
      int lo = 0, hi = nk - 1; /* T[lo] <= t < T[hi], or t = T[hi] at the last knot (arriving) */
      while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (T[mid] <= t)
          lo = mid;
        else
          hi = mid;
      }
      const double dt = T[hi] - T[lo], u = (t - T[lo]) / dt, u2 = u * u, u3 = u2 * u;
      const int lin = m->body_traj_linear[b];
      /* cubic Hermite basis, its first and second derivatives in u */
      const double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2, h11 = u3 - u2;
      const double d00 = 6 * u2 - 6 * u, d10 = 3 * u2 - 4 * u + 1, d01 = -6 * u2 + 6 * u, d11 = 3 * u2 - 2 * u;
      const double s00 = 12 * u - 6, s10 = 6 * u - 4, s01 = -12 * u + 6, s11 = 6 * u - 2;
      for (int i = 0; i < 3; ++i) {
        const double p0 = P[3 * lo + i], p1 = P[3 * hi + i], m0 = V[3 * lo + i] * dt, m1 = V[3 * hi + i] * dt;
        if (lin) { /* the straight line at constant velocity */
          p[i] = p0 + u * (p1 - p0);
          v[i] = (p1 - p0) / dt;
          continue;
        }
        p[i] = h00 * p0 + h10 * m0 + h01 * p1 + h11 * m1;
        v[i] = (d00 * p0 + d10 * m0 + d01 * p1 + d11 * m1) / dt;
        a[i] = (s00 * p0 + s10 * m0 + s01 * p1 + s11 * m1) / (dt * dt);
        jk[i] = (12 * p0 + 6 * m0 - 12 * p1 + 6 * m1) / (dt * dt * dt);
      }
      /* slerp: q = exp(u theta / 2) q_lo, theta the world rotation vector from q_lo to q_hi */
      const double *q0 = Q + 4 * lo, *th = m->traj_th + 3 * (a0 + lo);
      memcpy(q, q0, sizeof q);
      double tu[3];
      v3_scl(tu, th, u);
      q_rotate(q, tu);
      v3_scl(w, th, 1.0 / dt);
    }
  }
  if (pos) v3_copy(pos, p);
  if (vel) v3_copy(vel, v);
  if (acc) v3_copy(acc, a);
  if (jerk) v3_copy(jerk, jk);
  if (quat) memcpy(quat, q, sizeof q);
  if (angvel) v3_copy(angvel, w);
}

void kl_world_anchor(const kl_world_model *m, int b, double t, double pos[3], double vel[3], double acc[3],
                     double quat[4], double angvel[3])
{
  anchor_full(m, b, t, pos, vel, acc, NULL, quat, angvel);
}

void kl_world_anchor_at(const kl_world_model *m, const kl_world_data *d, int b, double t, double pos[3], double vel[3],
                        double acc[3], double jerk[3], double quat[4], double angvel[3])
{
  kl_scratch *S = d->scratch;
  double *a = S->anc;
  if (S->anc_b != b || S->anc_t != t) {
    anchor_full(m, b, t, a, a + 3, a + 6, a + 9, a + 12, a + 16);
    S->anc_b = b;
    S->anc_t = t;
  }
  if (pos) v3_copy(pos, a);
  if (vel) v3_copy(vel, a + 3);
  if (acc) v3_copy(acc, a + 6);
  if (jerk) v3_copy(jerk, a + 9);
  if (quat) memcpy(quat, a + 12, 4 * sizeof(double));
  if (angvel) v3_copy(angvel, a + 16);
}

void kl_world_holder_snap(const kl_world_model *m, const kl_world_data *d, int b, double t, const double abody[3],
                          const double jbody[3], double s[3])
{
  v3_zero(s);
  if (!m->body_holder[b]) return;
  double aa[3], ja[3], aq[4], R[9], da[3], dj[3], la[3], lj[3], l[3];
  kl_world_anchor_at(m, d, b, t, NULL, NULL, aa, ja, aq, NULL);
  q_to_m3(R, aq);
  v3_sub(da, aa, abody);
  v3_sub(dj, ja, jbody);
  m3_mulvT(la, R, da);
  m3_mulvT(lj, R, dj);
  for (int i = 0; i < 3; ++i) l[i] = m->body_holder_K[3 * b + i] * la[i] + m->body_holder_D[3 * b + i] * lj[i];
  m3_mulv(s, R, l);
}

void kl_world_holder(const kl_world_model *m, const kl_world_data *d, int b, double t, double f[3], double fdot[3],
                     double tau[3])
{
  double F[3] = {0, 0, 0}, Fd[3] = {0, 0, 0}, T[3] = {0, 0, 0};
  if (m->body_holder[b]) {
    double ap[3], av[3], aa[3], aq[4], aw[3], R[9], rel[3], relv[3], e[3], ev[3], ea[3], lf[3], lfd[3];
    kl_world_anchor_at(m, d, b, t, ap, av, aa, NULL, aq, aw);
    q_to_m3(R, aq);
    const double *x = d->xpos + 3 * b, *v = d->vel + 3 * b;
    v3_sub(rel, ap, x);
    v3_sub(relv, av, v);
    m3_mulvT(e, R, rel);  /* extension in the anchor frame */
    m3_mulvT(ev, R, relv); /* its rate (the frame's own turning left out: small over a sub-step) */
    m3_mulvT(ea, R, aa);
    const double *K = m->body_holder_K + 3 * b, *D = m->body_holder_D + 3 * b;
    for (int a = 0; a < 3; ++a) {
      lf[a] = K[a] * e[a] + D[a] * ev[a];
      lfd[a] = K[a] * ev[a] + D[a] * ea[a];
    }
    m3_mulv(F, R, lf);
    m3_mulv(Fd, R, lfd);
    const double *Kr = m->body_holder_Kr + 3 * b, *Dr = m->body_holder_Dr + 3 * b;
    if (Kr[0] > 0 || Kr[1] > 0 || Kr[2] > 0 || Dr[0] > 0 || Dr[1] > 0 || Dr[2] > 0) {
      double th[3], dw[3], ldw[3], lt[3];
      kl_holder_rotvec(aq, d->xquat + 4 * b, th);
      v3_sub(dw, d->angvel + 3 * b, aw);
      m3_mulvT(ldw, R, dw);
      for (int a = 0; a < 3; ++a) lt[a] = -Kr[a] * th[a] - Dr[a] * ldw[a];
      m3_mulv(T, R, lt);
    }
  }
  if (f) v3_copy(f, F);
  if (fdot) v3_copy(fdot, Fd);
  if (tau) v3_copy(tau, T);
}

int kl_world_probe(const kl_world_model *m, kl_world_data *d, int b, double margin, double *depth, double n[3],
                   double pos[3])
{
  kl_scratch *S = d->scratch;
  kl_collide_pose(m, d, S);
  const int nf = kl_collide(m, d, S, margin, 0.0, S->abound, NULL);
  int count = 0;
  double best = -INFINITY;
  for (int i = 0; i < nf; ++i) {
    const kl_feature *g = &S->feat[i];
    const int side = g->body[0] == b ? 0 : g->body[1] == b ? 1 : -1;
    if (side < 0) continue;
    ++count;
    if (g->depth > best) {
      best = g->depth;
      if (depth) *depth = g->depth;
      if (n) v3_scl(n, g->normal, side == 0 ? 1.0 : -1.0);
      if (pos) v3_copy(pos, g->pos);
    }
  }
  S->nfeat = 0;
  return count;
}

int kl_world_holder_rot_step(const kl_world_model *m, const kl_world_data *d, int b, double t, double h, const double I[9],
                             double L[3], double ws[3])
{
  if (!m->body_holder[b]) return 0;
  const double *Kr = m->body_holder_Kr + 3 * b, *Dr = m->body_holder_Dr + 3 * b;
  if (!(Kr[0] > 0 || Kr[1] > 0 || Kr[2] > 0 || Dr[0] > 0 || Dr[1] > 0 || Dr[2] > 0)) return 0;
  double aq[4], aw[3], R[9], thl[3], th[3], Kw[9], Dw[9], M[9], rhs[3], Mi[9];
  kl_world_anchor_at(m, d, b, t, NULL, NULL, NULL, NULL, aq, aw);
  q_to_m3(R, aq);
  kl_holder_rotvec(aq, d->xquat + 4 * b, thl);
  m3_mulv(th, R, thl); /* world components */
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double k = 0, c = 0;
      for (int a = 0; a < 3; ++a) {
        k += R[3 * i + a] * Kr[a] * R[3 * j + a];
        c += R[3 * i + a] * Dr[a] * R[3 * j + a];
      }
      Kw[3 * i + j] = k;
      Dw[3 * i + j] = c;
      M[3 * i + j] = I[3 * i + j] + h * c + h * h * k;
    }
  /* backward Euler on theta' = w - w_a, I w' = -K theta - D (w - w_a) + contacts, with L = I w0 + the
   * contact impulses: (I + h D + h^2 K) w1 = L - h K theta0 + (h D + h^2 K) w_a; the body turns at w1
   * over the step. Stable at any step and for any stiffness (a stiff mode is damped out, not left
   * ringing); an oscillation of w loses about (w h)^2/2 of its amplitude per step. */
  for (int i = 0; i < 3; ++i) {
    rhs[i] = L[i];
    for (int j = 0; j < 3; ++j) rhs[i] += -h * Kw[3 * i + j] * th[j] + (h * Dw[3 * i + j] + h * h * Kw[3 * i + j]) * aw[j];
  }
  /* M is symmetric positive definite: its inverse by cofactors */
  Mi[0] = M[4] * M[8] - M[5] * M[7], Mi[1] = M[2] * M[7] - M[1] * M[8], Mi[2] = M[1] * M[5] - M[2] * M[4];
  Mi[3] = M[5] * M[6] - M[3] * M[8], Mi[4] = M[0] * M[8] - M[2] * M[6], Mi[5] = M[2] * M[3] - M[0] * M[5];
  Mi[6] = M[3] * M[7] - M[4] * M[6], Mi[7] = M[1] * M[6] - M[0] * M[7], Mi[8] = M[0] * M[4] - M[1] * M[3];
  const double det = M[0] * Mi[0] + M[1] * Mi[3] + M[2] * Mi[6];
  for (int i = 0; i < 3; ++i) ws[i] = (Mi[3 * i] * rhs[0] + Mi[3 * i + 1] * rhs[1] + Mi[3 * i + 2] * rhs[2]) / det;
  m3_mulv(L, I, ws);
  return 1;
}
