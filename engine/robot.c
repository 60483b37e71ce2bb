/* engine/robot.c: serial-arm model, kinematics, joint-space inertia (CRBA), inverse dynamics (RNEA),
 * effective mass and the per-sample path evaluation (engine/robot.h; docs/design.md section 6). */
#include "engine/robot.h"

#include <float.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_permutation.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/util3.h"
#include "kernels/kl_common.h"

#define DEG (KL_PI / 180.0)

/* write a message into msg (capacity cap; both may be 0/NULL) */
static void say(char *msg, int cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *msg, int cap, const char *fmt, ...)
{
  if (!msg || cap <= 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, (size_t)cap, fmt, ap);
  va_end(ap);
}

//------------------------------------------------------------------- field checks

/* m finite and > 0 (>= 0 with allow_zero) */
kelvin_status kl_robot_check_mass(double m, int allow_zero, char *msg, int cap)
{
  if (!isfinite(m) || m < 0 || (!allow_zero && m == 0)) {
    say(msg, cap, "must be %s 0 kg, got %g", allow_zero ? ">=" : ">", m);
    return KELVIN_ERR_CONFIG;
  }
  return KELVIN_OK;
}

/* eigenvalues of a symmetric 3x3 matrix, ascending (trigonometric closed form, Smith 1961) */
static void eig3(const double A[9], double ev[3])
{
  const double p1 = A[1] * A[1] + A[2] * A[2] + A[5] * A[5];
  const double tr = (A[0] + A[4] + A[8]) / 3.0;
  if (p1 <= 1e-300) {
    ev[0] = A[0], ev[1] = A[4], ev[2] = A[8];
  } else {
    const double p2 = (A[0] - tr) * (A[0] - tr) + (A[4] - tr) * (A[4] - tr) + (A[8] - tr) * (A[8] - tr) + 2 * p1;
    const double p = sqrt(p2 / 6.0);
    double B[9];
    for (int i = 0; i < 9; ++i) B[i] = (A[i] - (i % 4 == 0 ? tr : 0.0)) / p;
    const double detB = B[0] * (B[4] * B[8] - B[5] * B[7]) - B[1] * (B[3] * B[8] - B[5] * B[6]) +
                        B[2] * (B[3] * B[7] - B[4] * B[6]);
    const double rr = fmin(1.0, fmax(-1.0, detB / 2.0));
    const double phi = acos(rr) / 3.0;
    ev[2] = tr + 2 * p * cos(phi);
    ev[0] = tr + 2 * p * cos(phi + 2.0 * KL_PI / 3.0);
    ev[1] = 3 * tr - ev[0] - ev[2];
  }
  for (int i = 0; i < 2; ++i) /* sort */
    for (int j = i + 1; j < 3; ++j)
      if (ev[j] < ev[i]) {
        const double t = ev[i];
        ev[i] = ev[j], ev[j] = t;
      }
}

/* I6 finite, positive definite and a rigid body's (triangle inequality of the principal moments) */
kelvin_status kl_robot_check_inertia(const double I6[6], char *msg, int cap)
{
  for (int i = 0; i < 6; ++i)
    if (!isfinite(I6[i])) {
      say(msg, cap, "must be 6 finite numbers (xx yy zz xy xz yz, kg m^2), got %g in place %d", I6[i], i + 1);
      return KELVIN_ERR_CONFIG;
    }
  double I[9], ev[3];
  m3_tensor6(I, I6);
  eig3(I, ev);
  const double scale = fabs(ev[0]) + fabs(ev[1]) + fabs(ev[2]);
  if (!(ev[0] > 1e-12 * scale) || scale == 0) {
    say(msg, cap, "not positive definite: principal moments %.6g, %.6g, %.6g kg m^2 (xx yy zz xy xz yz = %g %g %g %g %g %g)",
        ev[0], ev[1], ev[2], I6[0], I6[1], I6[2], I6[3], I6[4], I6[5]);
    return KELVIN_ERR_CONFIG;
  }
  /* a rigid body's principal moments obey the triangle inequality (each <= the sum of the others) */
  if (ev[2] > ev[0] + ev[1] + 1e-12 * scale) {
    say(msg, cap, "not a rigid body's inertia: principal moments %.6g, %.6g, %.6g kg m^2 break the triangle "
        "inequality (%.6g > %.6g + %.6g)", ev[0], ev[1], ev[2], ev[2], ev[0], ev[1]);
    return KELVIN_ERR_CONFIG;
  }
  return KELVIN_OK;
}

//------------------------------------------------------------------- model creation

/* Rx(a) */
static void rotx(double a, double R[9])
{
  const double c = cos(a), s = sin(a);
  const double M[9] = {1, 0, 0, 0, c, -s, 0, s, c};
  memcpy(R, M, sizeof M);
}

/* Rz(a) */
static void rotz(double a, double R[9])
{
  const double c = cos(a), s = sin(a);
  const double M[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
  memcpy(R, M, sizeof M);
}

/* standard DH link transform L = Tz(d) Tx(a) Rx(alpha) (the part after the joint rotation) */
static void dh_link(const kl_robot_joint_spec *j, kl_xf *L)
{
  rotx(j->alpha, L->R);
  L->p[0] = j->a, L->p[1] = 0.0, L->p[2] = j->d;
}

/* mass m, centre c and inertia I about c: add (m2, c2, I2) (all in one frame), parallel-axis theorem */
static void merge_body(double *m, double c[3], double I[9], double m2, const double c2[3], const double I2[9])
{
  const double mt = *m + m2;
  if (mt <= 0) return;
  double cn[3];
  for (int k = 0; k < 3; ++k) cn[k] = (*m * c[k] + m2 * c2[k]) / mt;
  double Itot[9];
  const double *cs[2] = {c, c2}, *Is[2] = {I, I2};
  const double ms[2] = {*m, m2};
  memset(Itot, 0, sizeof Itot);
  for (int b = 0; b < 2; ++b) {
    double d[3];
    v3_sub(d, cs[b], cn);
    const double dd = v3_dot(d, d);
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 3; ++k) Itot[3 * i + k] += Is[b][3 * i + k] + ms[b] * ((i == k ? dd : 0.0) - d[i] * d[k]);
  }
  *m = mt;
  memcpy(c, cn, sizeof cn);
  memcpy(I, Itot, sizeof Itot);
}

/* distance from point x to the line (w unit, through r) */
static double line_dist(const double w[3], const double r[3], const double x[3])
{
  double d[3], c[3];
  v3_sub(d, x, r);
  v3_cross(c, w, d);
  return v3_norm(c);
}

/* the chain at q with the given base transform: body frames (ndof) and the TCP frame */
static void chain(const kl_robot *r, const double *q, const kl_xf *base, kl_xf *body, kl_xf *tcp)
{
  kl_xf prev = *base;
  for (int i = 0; i < r->ndof; ++i) {
    kl_xf P, J, Q;
    memcpy(P.R, r->jnt_R[i], sizeof P.R);
    memcpy(P.p, r->jnt_p[i], sizeof P.p);
    xf_mul(&J, &prev, &P);
    m3_axis_angle(Q.R, r->jnt_axis[i], q[i]);
    Q.p[0] = Q.p[1] = Q.p[2] = 0.0;
    xf_mul(&body[i], &J, &Q);
    prev = body[i];
  }
  kl_xf T;
  memcpy(T.R, r->tool_R, sizeof T.R);
  memcpy(T.p, r->tool_p, sizeof T.p);
  xf_mul(tcp, &prev, &T);
}

/* world-from-base transform */
static void base_xf(const kl_robot *r, kl_xf *b)
{
  m3_rpy(b->R, r->base_rpy);
  memcpy(b->p, r->base_pos, sizeof b->p);
}

/* zero-configuration screws and the spherical-wrist test for the closed-form IK */
static void closed_form_setup(kl_robot *r)
{
  r->ik_closed = 0;
  if (r->ndof != 6) return;
  kl_xf id, body[KL_ROBOT_MAXDOF], tcp;
  xf_identity(&id);
  const double q0[KL_ROBOT_MAXDOF] = {0};
  chain(r, q0, &id, body, &tcp);
  for (int i = 0; i < 6; ++i) {
    m3_mulv(r->sw_w[i], body[i].R, r->jnt_axis[i]);
    memcpy(r->sw_r[i], body[i].p, sizeof r->sw_r[i]);
  }
  memcpy(r->sw_R0, tcp.R, sizeof r->sw_R0);
  memcpy(r->sw_p0, tcp.p, sizeof r->sw_p0);
  double (*w)[3] = r->sw_w, (*p)[3] = r->sw_r, c[3];
  const double tol = 1e-9; /* [m] and [1]: geometric coincidence; the Newton polish removes the rest */
  v3_cross(c, w[1], w[2]);
  if (v3_norm(c) > tol) return; /* axes 2 and 3 parallel */
  v3_cross(c, w[0], w[1]);
  if (v3_norm(c) < 1e-6) return; /* axis 2 not parallel to axis 1 */
  /* wrist centre: the point of axis 4 closest to axis 5, which must lie on axes 5 and 6 */
  double n45[3], d[3];
  v3_cross(n45, w[3], w[4]);
  const double s45 = v3_norm(n45);
  if (s45 < 1e-6) return;
  v3_sub(d, p[4], p[3]);
  double e[3];
  v3_cross(e, d, w[4]);
  const double t4 = v3_dot(e, n45) / (s45 * s45);
  v3_axpy(r->sw_pw, p[3], t4, w[3]);
  if (line_dist(w[4], p[4], r->sw_pw) > tol || line_dist(w[5], p[5], r->sw_pw) > tol) return;
  v3_cross(c, w[4], w[5]);
  if (v3_norm(c) < 1e-6) return;
  /* the position sub-problems need the wrist centre off axis 3 and axis 2 apart from axis 3 */
  if (line_dist(w[2], p[2], r->sw_pw) < 1e-6 || line_dist(w[2], p[2], p[1]) < 1e-6) return;
  r->ik_closed = 1;
}

/* validate the spec, then bring every description into the form B_i = B_{i-1} P_i Rot(axis_i, q_i) */
kelvin_status kl_robot_create(const kl_robot_spec *s, kl_robot **out, char *msg, int cap)
{
  if (out) *out = NULL;
  if (!s || !out) {
    say(msg, cap, "kl_robot_create: spec and out must not be NULL");
    return KELVIN_ERR_ARG;
  }
  if (s->ndof < 1 || s->ndof > KL_ROBOT_MAXDOF) {
    say(msg, cap, "joints: need 1 to %d joints, got %d", KL_ROBOT_MAXDOF, s->ndof);
    return KELVIN_ERR_ARG;
  }
  if (s->conv != KL_ROBOT_DH && s->conv != KL_ROBOT_MDH && s->conv != KL_ROBOT_URDF) {
    say(msg, cap, "convention: unknown value %d", (int)s->conv);
    return KELVIN_ERR_ARG;
  }
  char sub[300];
  for (int i = 0; i < 3; ++i)
    if (!isfinite(s->base_pos[i]) || !isfinite(s->base_rpy[i]) || !isfinite(s->tool_xyz[i]) ||
        !isfinite(s->tool_rpy[i]) || !isfinite(s->tool_com[i])) {
      say(msg, cap, "base/tool: position, rpy and com must be finite");
      return KELVIN_ERR_ARG;
    }
  if (kl_robot_check_mass(s->tool_mass, 1, sub, sizeof sub) != KELVIN_OK) {
    say(msg, cap, "tool.mass: %s", sub);
    return KELVIN_ERR_ARG;
  }
  const double *ti = s->tool_inertia;
  const int tool_point = ti[0] == 0 && ti[1] == 0 && ti[2] == 0 && ti[3] == 0 && ti[4] == 0 && ti[5] == 0;
  if (s->tool_mass > 0 && !tool_point && kl_robot_check_inertia(ti, sub, sizeof sub) != KELVIN_OK) {
    say(msg, cap, "tool.inertia: %s", sub);
    return KELVIN_ERR_ARG;
  }
  for (int i = 0; i < s->ndof; ++i) {
    const kl_robot_joint_spec *j = &s->joint[i];
    const char *nm = j->name[0] ? j->name : "unnamed";
#define JERR(...)                                                                                            \
  do {                                                                                                       \
    char t_[512];                                                                                            \
    snprintf(t_, sizeof t_, __VA_ARGS__);                                                                    \
    say(msg, cap, "joint %d (%s): %s", i + 1, nm, t_);                                                       \
    return KELVIN_ERR_ARG;                                                                                   \
  } while (0)
    if (s->conv == KL_ROBOT_URDF) {
      for (int k = 0; k < 3; ++k)
        if (!isfinite(j->xyz[k]) || !isfinite(j->rpy[k]) || !isfinite(j->axis[k])) JERR("xyz, rpy, axis: must be finite");
      if (!(v3_norm(j->axis) > 1e-12)) JERR("axis: must be a non-zero vector");
    } else if (!isfinite(j->a) || !isfinite(j->alpha) || !isfinite(j->d) || !isfinite(j->theta)) {
      JERR("a, alpha, d, theta: must be finite, got %g, %g, %g, %g", j->a, j->alpha, j->d, j->theta);
    }
    if (isnan(j->lo) || isnan(j->hi) || !(j->lo < j->hi) || j->lo == INFINITY || j->hi == -INFINITY)
      JERR("limits: need lower < upper, got [%g, %g] rad", j->lo, j->hi);
    if (!(j->vmax > 0) || !isfinite(j->vmax)) JERR("speed: must be > 0 rad/s, got %g", j->vmax);
    if (!(j->stiffness >= 0) || !isfinite(j->stiffness)) JERR("stiffness: must be >= 0 N m/rad, got %g", j->stiffness);
    if (kl_robot_check_mass(j->mass, 0, sub, sizeof sub) != KELVIN_OK) JERR("mass: %s", sub);
    if (!isfinite(j->com[0]) || !isfinite(j->com[1]) || !isfinite(j->com[2])) JERR("com: must be finite");
    if (kl_robot_check_inertia(j->inertia, sub, sizeof sub) != KELVIN_OK) JERR("inertia: %s", sub);
    if (s->has_home && (!(s->home[i] >= j->lo) || !(s->home[i] <= j->hi)))
      JERR("home: %g rad is outside the limits [%g, %g] rad", s->home[i], j->lo, j->hi);
#undef JERR
  }

  kl_robot *r = calloc(1, sizeof *r);
  if (!r) {
    say(msg, cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  snprintf(r->name, sizeof r->name, "%s", s->name[0] ? s->name : "robot");
  r->ndof = s->ndof;
  memcpy(r->base_pos, s->base_pos, sizeof r->base_pos);
  memcpy(r->base_rpy, s->base_rpy, sizeof r->base_rpy);
  const int n = s->ndof;
  for (int i = 0; i < n; ++i) {
    const kl_robot_joint_spec *j = &s->joint[i];
    snprintf(r->jnt_name[i], sizeof r->jnt_name[i], "%s", j->name[0] ? j->name : "");
    kl_xf P;
    double Rth[9];
    switch (s->conv) {
    case KL_ROBOT_DH: /* P_i = L_{i-1} Rz(theta_i): the joint rotation follows the previous link transform */
      rotz(j->theta, Rth);
      if (i == 0) {
        memcpy(P.R, Rth, sizeof Rth);
        P.p[0] = P.p[1] = P.p[2] = 0.0;
      } else {
        kl_xf L;
        dh_link(&s->joint[i - 1], &L);
        m3_mul(P.R, L.R, Rth);
        memcpy(P.p, L.p, sizeof P.p);
      }
      break;
    case KL_ROBOT_MDH: { /* P_i = Rx(alpha_{i-1}) Tx(a_{i-1}) Tz(d_i) Rz(theta_i) */
      double Rx[9];
      rotx(j->alpha, Rx);
      rotz(j->theta, Rth);
      m3_mul(P.R, Rx, Rth);
      P.p[0] = j->a, P.p[1] = -sin(j->alpha) * j->d, P.p[2] = cos(j->alpha) * j->d;
      break;
    }
    default: m3_rpy(P.R, j->rpy); memcpy(P.p, j->xyz, sizeof P.p);
    }
    memcpy(r->jnt_R[i], P.R, sizeof P.R);
    memcpy(r->jnt_p[i], P.p, sizeof P.p);
    if (s->conv == KL_ROBOT_URDF) {
      const double an = v3_norm(j->axis);
      for (int k = 0; k < 3; ++k) r->jnt_axis[i][k] = j->axis[k] / an;
    } else {
      r->jnt_axis[i][0] = r->jnt_axis[i][1] = 0.0, r->jnt_axis[i][2] = 1.0;
    }
    r->jnt_range[i][0] = j->lo, r->jnt_range[i][1] = j->hi;
    r->jnt_vmax[i] = j->vmax;
    r->jnt_stiffness[i] = j->stiffness;
    /* link inertial parameters into the body frame B_i (DH: the link frame is B_i L_i) */
    double I[9];
    m3_tensor6(I, j->inertia);
    r->body_mass[i] = j->mass;
    if (s->conv == KL_ROBOT_DH) {
      kl_xf L;
      dh_link(j, &L);
      xf_point(r->body_com[i], &L, j->com);
      m3_rotate_tensor(r->body_inertia[i], L.R, I);
    } else {
      memcpy(r->body_com[i], j->com, sizeof r->body_com[i]);
      memcpy(r->body_inertia[i], I, sizeof I);
    }
    r->q_home[i] = s->has_home ? s->home[i] : fmin(fmax(0.0, j->lo), j->hi);
  }
  /* the tool: TCP frame and mass, given in the flange (last link) frame */
  kl_xf T, F;
  m3_rpy(T.R, s->tool_rpy);
  memcpy(T.p, s->tool_xyz, sizeof T.p);
  if (s->conv == KL_ROBOT_DH)
    dh_link(&s->joint[n - 1], &F);
  else
    xf_identity(&F);
  kl_xf TB;
  xf_mul(&TB, &F, &T);
  memcpy(r->tool_R, TB.R, sizeof TB.R);
  memcpy(r->tool_p, TB.p, sizeof TB.p);
  if (s->tool_mass > 0) {
    double It[9], ItB[9], ct[3];
    m3_tensor6(It, s->tool_inertia);
    m3_rotate_tensor(ItB, F.R, It);
    xf_point(ct, &F, s->tool_com);
    merge_body(&r->body_mass[n - 1], r->body_com[n - 1], r->body_inertia[n - 1], s->tool_mass, ct, ItB);
  }
  closed_form_setup(r);
  *out = r;
  return KELVIN_OK;
}

/* NULL is a no-op */
void kl_robot_free(kl_robot *r) { free(r); }

/* base pose in the world; finite numbers only */
kelvin_status kl_robot_set_base(kl_robot *r, const double pos[3], const double rpy[3])
{
  if (!r || !pos || !rpy) return KELVIN_ERR_ARG;
  for (int i = 0; i < 3; ++i)
    if (!isfinite(pos[i]) || !isfinite(rpy[i])) return KELVIN_ERR_ARG;
  memcpy(r->base_pos, pos, sizeof r->base_pos);
  memcpy(r->base_rpy, rpy, sizeof r->base_rpy);
  return KELVIN_OK;
}

//------------------------------------------------------------------- the illustrative ER10-900-sized arm

/* An arm of the ESTUN ER10-900's class: six revolute joints, about 0.9 m reach, 10 kg payload,
 * spherical wrist. ILLUSTRATIVE numbers chosen for plausibility (lengths, masses and inertias of a
 * compact 10 kg industrial arm, speed limits of its class), NOT manufacturer data.
 * Geometry at q = 0 (base frame, z up): shoulder (axis 2) 0.400 m up and 0.050 m forward, upper arm
 * 0.400 m vertical, elbow offset 0.035 m, forearm 0.400 m horizontal along +x to the wrist centre,
 * flange 0.090 m beyond it; the TCP is 0.120 m out along the flange normal (the end of a 2.5 kg
 * spindle). Wrist centre reach from axis 1: 0.85 m; TCP reach about 0.94 m.
 * Standard DH (theta = q + theta_offset), link frames at the link ends; inertial parameters are in
 * those frames (examples/robot_er10.urdf gives the same arm in URDF link frames). */
void kl_robot_er10_spec(kl_robot_spec *s)
{
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "er10-illustrative");
  s->conv = KL_ROBOT_DH;
  s->ndof = 6;
  /* per joint: a [m], alpha [deg], d [m], theta offset [deg], limits [deg], speed [deg/s], stiffness [N m/rad],
   * link mass [kg], com [m] and inertia about it (xx yy zz xy xz yz) [kg m^2] in DH frame i */
  static const struct {
    double a, al, d, th, lo, hi, v, k, m, c[3], I[6];
  } t[6] = {
    {0.050, -90, 0.400, 0, -170, 170, 220, 1.5e5, 12.0, {-0.03, 0.1, 0}, {0.14, 0.09, 0.13, -0.008, 0, 0}},
    {0.400, 0, 0, -90, -100, 135, 200, 1.2e5, 9.0, {-0.2, 0.005, 0.03}, {0.025, 0.13, 0.13, 0.002, -0.004, 0}},
    {0.035, -90, 0, 0, -130, 150, 220, 8.0e4, 6.0, {-0.005, 0, 0.04}, {0.035, 0.04, 0.03, 0, 0.003, -0.001}},
    {0, 90, 0.400, 0, -190, 190, 400, 2.5e4, 3.5, {0, -0.15, 0}, {0.03, 0.006, 0.03, 0, 0, 0}},
    {0, -90, 0, 0, -130, 130, 380, 2.0e4, 1.5, {0, 0, 0.03}, {0.0025, 0.0025, 0.002, 0, 0, 0}},
    {0, 0, 0.090, 0, -360, 360, 600, 1.2e4, 0.3, {0, 0, -0.01}, {0.0002, 0.0002, 0.0003, 0, 0, 0}},
  };
  static const double home[6] = {0, 20, 30, 0, 40, 0}; /* elbow up, wrist not flipped [deg] */
  for (int i = 0; i < 6; ++i) {
    kl_robot_joint_spec *j = &s->joint[i];
    snprintf(j->name, sizeof j->name, "j%d", i + 1);
    j->a = t[i].a, j->alpha = t[i].al / 180.0 * KL_PI, j->d = t[i].d, j->theta = t[i].th / 180.0 * KL_PI;
    j->lo = t[i].lo / 180.0 * KL_PI, j->hi = t[i].hi / 180.0 * KL_PI, j->vmax = t[i].v / 180.0 * KL_PI;
    j->stiffness = t[i].k;
    j->mass = t[i].m;
    memcpy(j->com, t[i].c, sizeof j->com);
    memcpy(j->inertia, t[i].I, sizeof j->inertia);
    s->home[i] = home[i] / 180.0 * KL_PI;
  }
  s->has_home = 1;
  s->tool_xyz[2] = 0.120;
  s->tool_mass = 2.5;
  s->tool_com[2] = 0.06;
  const double It[6] = {0.0055, 0.0055, 0.0015, 0, 0, 0};
  memcpy(s->tool_inertia, It, sizeof It);
}

/* the arm of kl_robot_er10_spec */
kelvin_status kl_robot_builtin_er10(kl_robot **out)
{
  kl_robot_spec s;
  kl_robot_er10_spec(&s);
  return kl_robot_create(&s, out, NULL, 0);
}

//------------------------------------------------------------------- kinematics

/* TCP pose in the world at q */
void kl_robot_fk(const kl_robot *r, const double *q, double R[9], double p[3])
{
  kl_xf b, body[KL_ROBOT_MAXDOF], tcp;
  base_xf(r, &b);
  chain(r, q, &b, body, &tcp);
  memcpy(R, tcp.R, sizeof tcp.R);
  memcpy(p, tcp.p, sizeof tcp.p);
}

/* J = [z_i x (p_tcp - o_i); z_i] column by column, world axes */
void kl_robot_jacobian(const kl_robot *r, const double *q, double *J)
{
  const int n = r->ndof;
  kl_xf b, body[KL_ROBOT_MAXDOF], tcp;
  base_xf(r, &b);
  chain(r, q, &b, body, &tcp);
  for (int i = 0; i < n; ++i) {
    double z[3], d[3], v[3];
    m3_mulv(z, body[i].R, r->jnt_axis[i]);
    v3_sub(d, tcp.p, body[i].p);
    v3_cross(v, z, d); /* J_v column: z_i x (p_tcp - o_i) */
    for (int k = 0; k < 3; ++k) {
      J[k * n + i] = v[k];
      J[(3 + k) * n + i] = z[k];
    }
  }
}

//------------------------------------------------------------------- dynamics

/* Composite rigid body algorithm (Featherstone 2008, section 6.2), in base coordinates about the base
 * origin. A spatial inertia is kept as (m, h = m c, Ibar = inertia about the origin); composites add.
 * Joint i's motion subspace is S_i = [z_i; o_i x z_i]; F_j = Ic_j S_j and M_ij = S_i . F_j, i <= j. */
void kl_robot_inertia(const kl_robot *r, const double *q, double *M)
{
  const int n = r->ndof;
  kl_xf id, body[KL_ROBOT_MAXDOF], tcp;
  xf_identity(&id);
  chain(r, q, &id, body, &tcp);
  double S[KL_ROBOT_MAXDOF][6], mc[KL_ROBOT_MAXDOF], hc[KL_ROBOT_MAXDOF][3], Ic[KL_ROBOT_MAXDOF][9];
  for (int i = 0; i < n; ++i) {
    double z[3], oz[3];
    m3_mulv(z, body[i].R, r->jnt_axis[i]);
    v3_cross(oz, body[i].p, z);
    for (int k = 0; k < 3; ++k) S[i][k] = z[k], S[i][3 + k] = oz[k];
    double c[3], Iw[9];
    xf_point(c, &body[i], r->body_com[i]);
    m3_rotate_tensor(Iw, body[i].R, r->body_inertia[i]);
    const double m = r->body_mass[i], cc = v3_dot(c, c);
    mc[i] = m;
    for (int k = 0; k < 3; ++k) hc[i][k] = m * c[k];
    for (int a = 0; a < 3; ++a)
      for (int k = 0; k < 3; ++k) Ic[i][3 * a + k] = Iw[3 * a + k] + m * ((a == k ? cc : 0.0) - c[a] * c[k]);
  }
  for (int i = n - 2; i >= 0; --i) { /* composites, tip to base */
    mc[i] += mc[i + 1];
    for (int k = 0; k < 3; ++k) hc[i][k] += hc[i + 1][k];
    for (int k = 0; k < 9; ++k) Ic[i][k] += Ic[i + 1][k];
  }
  for (int j = 0; j < n; ++j) {
    const double *w = S[j], *v = S[j] + 3;
    double fa[3], fl[3], t[3];
    m3_mulv(fa, Ic[j], w);
    v3_cross(t, hc[j], v);
    for (int k = 0; k < 3; ++k) fa[k] += t[k];
    v3_cross(t, hc[j], w);
    for (int k = 0; k < 3; ++k) fl[k] = mc[j] * v[k] - t[k];
    for (int i = 0; i <= j; ++i) M[i * n + j] = M[j * n + i] = v3_dot(S[i], fa) + v3_dot(S[i] + 3, fl);
  }
}

/* Recursive Newton-Euler (Luh, Walker and Paul 1980) with plain 3-vectors in world axes: forward pass
 * for velocities and accelerations (gravity as a base acceleration), backward pass for forces and
 * moments about each joint origin; tau_i = z_i . n_i. */
void kl_robot_rnea(const kl_robot *r, const double *q, const double *qd, const double *qdd, const double grav[3],
                   const double f_tcp[3], double *tau)
{
  const int n = r->ndof;
  kl_xf b, body[KL_ROBOT_MAXDOF], tcp;
  base_xf(r, &b);
  chain(r, q, &b, body, &tcp);
  double w[KL_ROBOT_MAXDOF][3], wd[KL_ROBOT_MAXDOF][3], ac[KL_ROBOT_MAXDOF][3], z[KL_ROBOT_MAXDOF][3];
  double rc[KL_ROBOT_MAXDOF][3];
  double wp[3] = {0, 0, 0}, wdp[3] = {0, 0, 0}, ap[3], op[3];
  for (int k = 0; k < 3; ++k) ap[k] = grav ? -grav[k] : 0.0, op[k] = b.p[k];
  for (int i = 0; i < n; ++i) {
    const double qdi = qd ? qd[i] : 0.0, qddi = qdd ? qdd[i] : 0.0;
    const double *o = body[i].p;
    double d[3], t1[3], t2[3], ao[3];
    m3_mulv(z[i], body[i].R, r->jnt_axis[i]);
    v3_sub(d, o, op); /* joint origin is fixed in the parent: a_o = a_op + wd x d + w x (w x d) */
    v3_cross(t1, wdp, d);
    v3_cross(t2, wp, d);
    v3_cross(ao, wp, t2);
    for (int k = 0; k < 3; ++k) ao[k] += ap[k] + t1[k];
    v3_cross(t1, wp, z[i]);
    for (int k = 0; k < 3; ++k) {
      w[i][k] = wp[k] + z[i][k] * qdi;
      wd[i][k] = wdp[k] + z[i][k] * qddi + t1[k] * qdi;
    }
    double c[3];
    xf_point(c, &body[i], r->body_com[i]);
    v3_sub(rc[i], c, o);
    v3_cross(t1, wd[i], rc[i]);
    v3_cross(t2, w[i], rc[i]);
    double t3[3];
    v3_cross(t3, w[i], t2);
    for (int k = 0; k < 3; ++k) ac[i][k] = ao[k] + t1[k] + t3[k];
    memcpy(wp, w[i], sizeof wp);
    memcpy(wdp, wd[i], sizeof wdp);
    memcpy(ap, ao, sizeof ap);
    memcpy(op, o, sizeof op);
  }
  /* backward: the environment pushes on the TCP with f_tcp, so the last body pushes back with -f_tcp */
  double f[3], nm[3] = {0, 0, 0}, oc[3];
  for (int k = 0; k < 3; ++k) f[k] = f_tcp ? -f_tcp[k] : 0.0;
  memcpy(oc, tcp.p, sizeof oc);
  for (int i = n - 1; i >= 0; --i) {
    const double m = r->body_mass[i];
    double Iw[9], Iw_w[3], t1[3], t2[3], d[3], F[3];
    m3_rotate_tensor(Iw, body[i].R, r->body_inertia[i]);
    for (int k = 0; k < 3; ++k) F[k] = m * ac[i][k];
    m3_mulv(t1, Iw, wd[i]);
    m3_mulv(Iw_w, Iw, w[i]);
    v3_cross(t2, w[i], Iw_w);
    double nn[3];
    for (int k = 0; k < 3; ++k) nn[k] = t1[k] + t2[k] + nm[k];
    v3_cross(t1, rc[i], F);
    v3_sub(d, oc, body[i].p);
    v3_cross(t2, d, f);
    for (int k = 0; k < 3; ++k) {
      nm[k] = nn[k] + t1[k] + t2[k];
      f[k] += F[k];
    }
    memcpy(oc, body[i].p, sizeof oc);
    tau[i] = v3_dot(z[i], nm);
  }
}

/* v_o_i = v_o_{i-1} + w_{i-1} x (o_i - o_{i-1}), w_i = w_{i-1} + z_i qd_i; then the TCP */
void kl_robot_tcp_velocity(const kl_robot *r, const double *q, const double *qd, double v[6])
{
  kl_xf b, body[KL_ROBOT_MAXDOF], tcp;
  base_xf(r, &b);
  chain(r, q, &b, body, &tcp);
  double w[3] = {0, 0, 0}, vo[3] = {0, 0, 0}, op[3];
  memcpy(op, b.p, sizeof op);
  for (int i = 0; i < r->ndof; ++i) {
    double d[3], t[3], z[3];
    v3_sub(d, body[i].p, op);
    v3_cross(t, w, d);
    for (int k = 0; k < 3; ++k) vo[k] += t[k];
    m3_mulv(z, body[i].R, r->jnt_axis[i]);
    for (int k = 0; k < 3; ++k) w[k] += z[k] * qd[i];
    memcpy(op, body[i].p, sizeof op);
  }
  double d[3], t[3];
  v3_sub(d, tcp.p, op);
  v3_cross(t, w, d);
  for (int k = 0; k < 3; ++k) v[k] = vo[k] + t[k], v[3 + k] = w[k];
}

/* m_eff = 1/(n^T J_v M^-1 J_v^T n), k_n = 1/(n^T J_v K_q^-1 J_v^T n) (Khatib 1987) */
kelvin_status kl_robot_effective_mass(const kl_robot *r, const double *q, const double n[3], double *meff, double *kn)
{
  const int nd = r->ndof;
  double M[KL_ROBOT_MAXDOF * KL_ROBOT_MAXDOF], J[6 * KL_ROBOT_MAXDOF], b[KL_ROBOT_MAXDOF], x[KL_ROBOT_MAXDOF];
  double E[KL_ROBOT_MAXDOF];
  size_t pd[KL_ROBOT_MAXDOF];
  int finite = isfinite(n[0]) && isfinite(n[1]) && isfinite(n[2]);
  for (int i = 0; i < nd; ++i) finite &= isfinite(q[i]) != 0;
  if (!finite) {
    *meff = NAN;
    if (kn) *kn = NAN;
    return KELVIN_ERR_ARG;
  }
  kl_robot_inertia(r, q, M);
  kl_robot_jacobian(r, q, J);
  double bb = 0, kinv = 0;
  for (int i = 0; i < nd; ++i) { /* b = J_v^T n */
    b[i] = J[i] * n[0] + J[nd + i] * n[1] + J[2 * nd + i] * n[2];
    bb += b[i] * b[i];
    if (r->jnt_stiffness[i] > 0) kinv += b[i] * b[i] / r->jnt_stiffness[i];
  }
  if (kn) *kn = kinv > 0 ? 1.0 / kinv : INFINITY;
  if (bb == 0) {
    *meff = INFINITY;
    return KELVIN_OK;
  }
  /* M^-1 b by a modified Cholesky (Gill-Murray-Wright): it never fails, and E = 0 certifies that M was
   * positive definite, so a bad model gives a status instead of GSL's abort() */
  gsl_matrix_view Mv = gsl_matrix_view_array(M, (size_t)nd, (size_t)nd);
  gsl_vector_view Ev = gsl_vector_view_array(E, (size_t)nd), bv = gsl_vector_view_array(b, (size_t)nd),
                  xv = gsl_vector_view_array(x, (size_t)nd);
  gsl_permutation perm = {(size_t)nd, pd};
  gsl_linalg_mcholesky_decomp(&Mv.matrix, &perm, &Ev.vector);
  for (int i = 0; i < nd; ++i)
    if (E[i] != 0) {
      *meff = NAN;
      return KELVIN_ERR_NUMERIC;
    }
  gsl_linalg_mcholesky_solve(&Mv.matrix, &perm, &bv.vector, &xv.vector);
  double d = 0;
  for (int i = 0; i < nd; ++i) d += b[i] * x[i];
  *meff = d > 0 ? 1.0 / d : INFINITY;
  return KELVIN_OK;
}

/* x = J^+ e (J: 6 x n) by SVD, damped: sum_i s_i/(s_i^2 + lambda^2) v_i (u_i . e); with lambda = 0
 * singular values below 1e-12 s_max are dropped. Returns the residual |J x - e|. */
double kl_robot_lsq(const double *J, int n, const double e[6], double lambda, double *x)
{
  double A[6 * KL_ROBOT_MAXDOF], V[KL_ROBOT_MAXDOF * KL_ROBOT_MAXDOF], S[KL_ROBOT_MAXDOF], W[KL_ROBOT_MAXDOF];
  for (int i = 0; i < 6 * n; ++i)
    if (!isfinite(J[i])) { /* never hand GSL a NaN: its error handler would abort() */
      for (int j = 0; j < n; ++j) x[j] = 0.0;
      return INFINITY;
    }
  const int tall = n <= 6; /* GSL's SVD wants rows >= columns: decompose J or J^T */
  const int m1 = tall ? 6 : n, m2 = tall ? n : 6;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < n; ++j) {
      if (tall)
        A[i * n + j] = J[i * n + j];
      else
        A[j * 6 + i] = J[i * n + j];
    }
  gsl_matrix_view Av = gsl_matrix_view_array(A, (size_t)m1, (size_t)m2);
  gsl_matrix_view Vv = gsl_matrix_view_array(V, (size_t)m2, (size_t)m2);
  gsl_vector_view Sv = gsl_vector_view_array(S, (size_t)m2), Wv = gsl_vector_view_array(W, (size_t)m2);
  gsl_linalg_SV_decomp(&Av.matrix, &Vv.matrix, &Sv.vector, &Wv.vector);
  const int ns = m2;
  const double smax = S[0];
  for (int j = 0; j < n; ++j) x[j] = 0.0;
  for (int k = 0; k < ns; ++k) {
    double g;
    if (lambda > 0)
      g = S[k] / (S[k] * S[k] + lambda * lambda);
    else
      g = S[k] > 1e-12 * smax ? 1.0 / S[k] : 0.0;
    if (g == 0) continue;
    /* tall: J = U S V^T, U = A (6 x n); wide: J = V S U^T with U = A (n x 6), V (6 x 6) */
    double ue = 0;
    for (int i = 0; i < 6; ++i) ue += (tall ? A[i * m2 + k] : V[i * m2 + k]) * e[i];
    for (int j = 0; j < n; ++j) x[j] += g * ue * (tall ? V[j * m2 + k] : A[j * m2 + k]);
  }
  double res = 0;
  for (int i = 0; i < 6; ++i) {
    double s = -e[i];
    for (int j = 0; j < n; ++j) s += J[i * n + j] * x[j];
    res += s * s;
  }
  return sqrt(res);
}

//------------------------------------------------------------------- along a path

/* tool frame of sample k: z = -nrm, x = tan made orthogonal to z; 0 ok, else a reason code */
static int sample_frame(const double *pos, const double *nrm, const double *tan, int k, double R[9], double *nn)
{
  const double *p = pos + 3 * k, *nv = nrm + 3 * k, *t = tan + 3 * k;
  for (int i = 0; i < 3; ++i)
    if (!isfinite(p[i]) || !isfinite(nv[i]) || !isfinite(t[i])) return 1;
  *nn = v3_norm(nv);
  if (fabs(*nn - 1.0) > 1e-6) return 2; /* unit normals are part of the contract */
  double z[3], x[3], y[3];
  for (int i = 0; i < 3; ++i) z[i] = -nv[i] / *nn;
  const double tz = v3_dot(t, z);
  for (int i = 0; i < 3; ++i) x[i] = t[i] - tz * z[i];
  const double xn = v3_norm(x);
  if (!(xn > 1e-9 * fmax(1.0, v3_norm(t)))) return 3;
  for (int i = 0; i < 3; ++i) x[i] /= xn;
  v3_cross(y, z, x);
  for (int i = 0; i < 3; ++i) R[3 * i] = x[i], R[3 * i + 1] = y[i], R[3 * i + 2] = z[i];
  return 0;
}

/* angular rate of the tool frame per metre of path at sample k (world), from neighbouring frames */
static void frame_rate(int ns, const double *pos, const double *nrm, const double *tan, int k, double w[3])
{
  w[0] = w[1] = w[2] = 0.0;
  const int a = k > 0 ? k - 1 : 0, b = k < ns - 1 ? k + 1 : ns - 1;
  if (a == b) return;
  double Ra[9], Rb[9], D[9], nn, wb[3];
  if (sample_frame(pos, nrm, tan, a, Ra, &nn) || sample_frame(pos, nrm, tan, b, Rb, &nn)) return;
  double ds = 0;
  for (int i = a; i < b; ++i) {
    double d[3];
    v3_sub(d, pos + 3 * (i + 1), pos + 3 * i);
    ds += v3_norm(d);
  }
  if (!(ds > 0)) return;
  m3_mul_tn(D, Ra, Rb); /* Ra^T Rb: the rotation from a to b in a's axes */
  m3_log(wb, D);
  m3_mulv(w, Ra, wb);
  for (int i = 0; i < 3; ++i) w[i] /= ds;
}

/* largest feed speed [m/s] with TCP velocity v t and tool angular velocity v w within the joint speed
 * limits: qdot = v J^+ [t; w]; 0 if the motion is not possible at this pose (singular) */
static double feed_limit(const kl_robot *r, const double *q, const double t[3], const double w[3])
{
  const int n = r->ndof;
  double J[6 * KL_ROBOT_MAXDOF], x[KL_ROBOT_MAXDOF], xi[6];
  kl_robot_jacobian(r, q, J);
  const double tn = v3_norm(t);
  for (int i = 0; i < 3; ++i) xi[i] = t[i] / tn, xi[3 + i] = w[i];
  const double res = kl_robot_lsq(J, n, xi, 0.0, x);
  if (res > 1e-6 * sqrt(1.0 + v3_dot(w, w))) return 0.0;
  double v = INFINITY;
  for (int i = 0; i < n; ++i)
    if (fabs(x[i]) > 0) v = fmin(v, r->jnt_vmax[i] / fabs(x[i]));
  return v;
}

/* IK, m_eff, feed-speed bound, reach and margin for every path sample */
kelvin_status kl_robot_path_ik(const kl_robot *r, int method, int ns, const double *pos, const double *nrm,
                               const double *tan, double *meff, double *vmax, int *reach, double *margin, double *q,
                               char *msg, int cap)
{
  if (msg && cap > 0) msg[0] = '\0';
  if (!r || ns < 1 || !pos || !nrm || !tan || !meff || !vmax || !reach || !margin || !q) {
    say(msg, cap, "kl_robot_path: need a robot, ns >= 1 (got %d) and non-NULL arrays", ns);
    return KELVIN_ERR_ARG;
  }
  const int n = r->ndof;
  double qref[KL_ROBOT_MAXDOF];
  memcpy(qref, r->q_home, sizeof(double) * (size_t)n);
  int first_bad = -1;
  for (int k = 0; k < ns; ++k) {
    double *qk = q + (size_t)k * (size_t)n;
    double R[9], nn = 0;
    kl_robot_ikres res;
    memset(&res, 0, sizeof res);
    meff[k] = vmax[k] = NAN;
    reach[k] = 0;
    const int bad = sample_frame(pos, nrm, tan, k, R, &nn);
    if (bad) {
      memcpy(qk, qref, sizeof(double) * (size_t)n);
      margin[k] = NAN;
    } else {
      kl_robot_ik(r, R, pos + 3 * k, qref, method, qk, &res);
      margin[k] = res.margin;
      reach[k] = res.converged && res.margin >= 0;
      if (res.converged) {
        double nu[3], w[3];
        for (int i = 0; i < 3; ++i) nu[i] = nrm[3 * k + i] / nn;
        if (kl_robot_effective_mass(r, qk, nu, &meff[k], NULL) != KELVIN_OK) reach[k] = 0;
        frame_rate(ns, pos, nrm, tan, k, w);
        vmax[k] = feed_limit(r, qk, tan + 3 * k, w);
        memcpy(qref, qk, sizeof(double) * (size_t)n); /* the next sample keeps to this branch */
      }
    }
    if (reach[k] || first_bad >= 0) continue;
    first_bad = k;
    const double *p = pos + 3 * k;
    char why[300];
    if (bad == 1)
      snprintf(why, sizeof why, "position, normal or tangent is not finite");
    else if (bad == 2)
      snprintf(why, sizeof why, "the normal is not unit length (|n| = %.9g)", nn);
    else if (bad == 3)
      snprintf(why, sizeof why, "the tangent is parallel to the normal");
    else if (!res.converged && res.why == KL_IK_WHY_NEAR_AXIS1)
      snprintf(why, sizeof why, "unreachable: the wrist centre would be %.4g m from axis 1, closer than the shoulder "
               "offset allows", res.why_val);
    else if (!res.converged && res.why == KL_IK_WHY_REACH)
      snprintf(why, sizeof why, "unreachable: the wrist centre is out of reach of the upper arm and forearm (%.4g m from "
               "the shoulder)", res.why_val);
    else if (!res.converged)
      snprintf(why, sizeof why, "inverse kinematics did not converge (pose error %.3g m, %.3g rad)", res.err_pos,
               res.err_rot);
    else if (res.margin < 0) {
      const int j = res.worst;
      snprintf(why, sizeof why, "joint %d%s%s%s would be at %.2f deg, outside its limits [%.1f, %.1f] deg (%s)", j + 1,
               r->jnt_name[j][0] ? " (" : "", r->jnt_name[j], r->jnt_name[j][0] ? ")" : "", qk[j] / DEG,
               r->jnt_range[j][0] / DEG, r->jnt_range[j][1] / DEG,
               res.closed_form ? "on every inverse-kinematics branch" : "on the branch followed from the previous sample");
    } else
      snprintf(why, sizeof why, "the joint-space inertia is not positive definite at this pose");
    say(msg, cap, "sample %d of %d at (%.4f, %.4f, %.4f) m: %s", k, ns, p[0], p[1], p[2], why);
  }
  return first_bad >= 0 ? KELVIN_ERR_ARG : KELVIN_OK;
}

/* kl_robot_path_ik with KL_IK_AUTO: the interface the optimiser calls */
kelvin_status kl_robot_path(const kl_robot *r, int ns, const double *pos, const double *nrm, const double *tan,
                            double *meff, double *vmax, int *reach, double *margin, double *q, char *msg, int cap)
{
  return kl_robot_path_ik(r, KL_IK_AUTO, ns, pos, nrm, tan, meff, vmax, reach, margin, q, msg, cap);
}

/* k_n along each sample's normal at the poses found by kl_robot_path */
void kl_robot_path_stiffness(const kl_robot *r, int ns, const double *q, const double *nrm, double *kn)
{
  const int n = r->ndof;
  for (int k = 0; k < ns; ++k) {
    const double *qk = q + (size_t)k * (size_t)n;
    int ok = 1;
    for (int i = 0; i < n; ++i) ok &= isfinite(qk[i]);
    double m, nu[3];
    const double nn = v3_norm(nrm + 3 * k);
    for (int i = 0; i < 3; ++i) nu[i] = nrm[3 * k + i] / nn;
    if (!ok || !(nn > 0) || kl_robot_effective_mass(r, qk, nu, &m, &kn[k]) != KELVIN_OK) kn[k] = NAN;
  }
}

/* 200 mm straight in plan over a cylindrical panel in front of the robot */
void kl_robot_demo_path(int ns, double *pos, double *nrm)
{
  const double R = 0.4, xc = 0.55, ztop = 0.25, x0 = 0.45, x1 = 0.65; /* panel: cylinder, axis along y */
  for (int k = 0; k < ns; ++k) {
    const double x = x0 + (x1 - x0) * k / (ns > 1 ? ns - 1 : 1);
    const double dx = x - xc, h = sqrt(R * R - dx * dx);
    pos[3 * k] = x, pos[3 * k + 1] = 0.0, pos[3 * k + 2] = ztop - R + h;
    nrm[3 * k] = dx / R, nrm[3 * k + 1] = 0.0, nrm[3 * k + 2] = h / R;
  }
}

/* unit tangents: central differences inside, one-sided at the ends */
int kl_robot_path_tangents(int ns, const double *pos, double *tan)
{
  for (int k = 1; k < ns; ++k) {
    double d[3];
    v3_sub(d, pos + 3 * k, pos + 3 * (k - 1));
    if (!(v3_norm(d) > 0)) return -1 - k;
  }
  for (int k = 0; k < ns; ++k) {
    const int a = k > 0 ? k - 1 : 0, b = k < ns - 1 ? k + 1 : ns - 1;
    double d[3];
    v3_sub(d, pos + 3 * b, pos + 3 * a);
    const double dn = v3_norm(d);
    for (int i = 0; i < 3; ++i) tan[3 * k + i] = dn > 0 ? d[i] / dn : (i == 0 ? 1.0 : 0.0);
  }
  return 0;
}
