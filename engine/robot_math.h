/* engine/robot_math.h: small 3-D helpers shared by engine/robot*.c (private to the engine).
 * Rotations are 3x3 row-major double[9]; a rigid transform x_parent = R x_child + p is kl_xf.
 * Pure functions of values, static inline, no allocation. */
#ifndef KL_ENGINE_ROBOT_MATH_H
#define KL_ENGINE_ROBOT_MATH_H

#include <math.h>
#include <string.h>

typedef struct kl_xf {
  double R[9]; /* rotation child -> parent, row-major */
  double p[3]; /* child origin in the parent frame [m] */
} kl_xf;

/* a . b */
static inline double rm_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* |a| */
static inline double rm_norm(const double a[3]) { return sqrt(rm_dot(a, a)); }

/* c = a x b (c may alias neither) */
static inline void rm_cross(const double a[3], const double b[3], double c[3])
{
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

/* c = a - b */
static inline void rm_sub(const double a[3], const double b[3], double c[3])
{
  for (int i = 0; i < 3; ++i) c[i] = a[i] - b[i];
}

/* c = a + s b */
static inline void rm_axpy(const double a[3], double s, const double b[3], double c[3])
{
  for (int i = 0; i < 3; ++i) c[i] = a[i] + s * b[i];
}

/* y = R x */
static inline void rm_mv(const double R[9], const double x[3], double y[3])
{
  for (int i = 0; i < 3; ++i) y[i] = R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2];
}

/* y = R^T x */
static inline void rm_mtv(const double R[9], const double x[3], double y[3])
{
  for (int i = 0; i < 3; ++i) y[i] = R[i] * x[0] + R[3 + i] * x[1] + R[6 + i] * x[2];
}

/* C = A B (3x3; C may not alias) */
static inline void rm_mm(const double A[9], const double B[9], double C[9])
{
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

/* C = A^T B */
static inline void rm_mtm(const double A[9], const double B[9], double C[9])
{
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
}

/* C = A B^T */
static inline void rm_mmt(const double A[9], const double B[9], double C[9])
{
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      C[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
}

/* C = R I R^T: a tensor given in a child frame, expressed in the parent frame */
static inline void rm_rotate_tensor(const double R[9], const double I[9], double C[9])
{
  double T[9];
  rm_mm(R, I, T);
  rm_mmt(T, R, C);
}

/* R = rotation by angle about the unit axis w (Rodrigues) */
static inline void rm_axis_angle(const double w[3], double angle, double R[9])
{
  const double c = cos(angle), s = sin(angle), v = 1.0 - c;
  R[0] = c + w[0] * w[0] * v;
  R[1] = w[0] * w[1] * v - w[2] * s;
  R[2] = w[0] * w[2] * v + w[1] * s;
  R[3] = w[1] * w[0] * v + w[2] * s;
  R[4] = c + w[1] * w[1] * v;
  R[5] = w[1] * w[2] * v - w[0] * s;
  R[6] = w[2] * w[0] * v - w[1] * s;
  R[7] = w[2] * w[1] * v + w[0] * s;
  R[8] = c + w[2] * w[2] * v;
}

/* R = Rz(yaw) Ry(pitch) Rx(roll): URDF's fixed-axis roll-pitch-yaw */
static inline void rm_rpy(const double rpy[3], double R[9])
{
  const double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]), cy = cos(rpy[2]),
               sy = sin(rpy[2]);
  R[0] = cy * cp;
  R[1] = cy * sp * sr - sy * cr;
  R[2] = cy * sp * cr + sy * sr;
  R[3] = sy * cp;
  R[4] = sy * sp * sr + cy * cr;
  R[5] = sy * sp * cr - cy * sr;
  R[6] = -sp;
  R[7] = cp * sr;
  R[8] = cp * cr;
}

/* roll, pitch, yaw of R (inverse of rm_rpy; at pitch = +-pi/2 roll takes all of the free angle) */
static inline void rm_rpy_of(const double R[9], double rpy[3])
{
  const double sp = -R[6];
  rpy[1] = atan2(sp, sqrt(R[0] * R[0] + R[3] * R[3]));
  if (fabs(sp) < 1.0 - 1e-12) {
    rpy[0] = atan2(R[7], R[8]);
    rpy[2] = atan2(R[3], R[0]);
  } else {
    rpy[2] = 0.0;
    rpy[0] = atan2(sp * R[1], R[4]);
  }
}

/* w = log(R) as a rotation vector (axis * angle, angle in [0, pi]) */
static inline void rm_log(const double R[9], double w[3])
{
  const double v[3] = {0.5 * (R[7] - R[5]), 0.5 * (R[2] - R[6]), 0.5 * (R[3] - R[1])};
  const double s = rm_norm(v), c = 0.5 * (R[0] + R[4] + R[8] - 1.0);
  const double th = atan2(s, c);
  if (th < 1e-4) { /* theta/sin(theta) = 1 + theta^2/6 + ...; the series is exact to 1e-17 here */
    const double f = 1.0 + th * th / 6.0;
    for (int i = 0; i < 3; ++i) w[i] = f * v[i];
    return;
  }
  if (th < 3.0) {
    for (int i = 0; i < 3; ++i) w[i] = th / s * v[i];
    return;
  }
  /* near pi the skew part vanishes: take the axis from the symmetric part, its sign from v */
  const double d[3] = {R[0], R[4], R[8]};
  int k = 0;
  if (d[1] > d[k]) k = 1;
  if (d[2] > d[k]) k = 2;
  double a[3];
  a[k] = sqrt(fmax(0.0, (d[k] - c) / (1.0 - c)));
  for (int i = 0; i < 3; ++i)
    if (i != k) a[i] = 0.5 * (R[3 * i + k] + R[3 * k + i]) / ((1.0 - c) * a[k]);
  const double n = rm_norm(a);
  double sg = rm_dot(a, v) < 0 ? -1.0 : 1.0;
  for (int i = 0; i < 3; ++i) w[i] = sg * th * a[i] / n;
}

/* c = a b (c may not alias a or b) */
static inline void rm_xf_mul(const kl_xf *a, const kl_xf *b, kl_xf *c)
{
  rm_mm(a->R, b->R, c->R);
  rm_mv(a->R, b->p, c->p);
  for (int i = 0; i < 3; ++i) c->p[i] += a->p[i];
}

/* y = a x (a point) */
static inline void rm_xf_point(const kl_xf *a, const double x[3], double y[3])
{
  rm_mv(a->R, x, y);
  for (int i = 0; i < 3; ++i) y[i] += a->p[i];
}

/* b = a^-1 */
static inline void rm_xf_inv(const kl_xf *a, kl_xf *b)
{
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) b->R[3 * i + j] = a->R[3 * j + i];
  rm_mv(b->R, a->p, b->p);
  for (int i = 0; i < 3; ++i) b->p[i] = -b->p[i];
}

/* identity transform */
static inline void rm_xf_identity(kl_xf *a)
{
  memset(a, 0, sizeof *a);
  a->R[0] = a->R[4] = a->R[8] = 1.0;
}

/* 3x3 symmetric tensor from xx yy zz xy xz yz */
static inline void rm_tensor6(const double I6[6], double I[9])
{
  I[0] = I6[0];
  I[4] = I6[1];
  I[8] = I6[2];
  I[1] = I[3] = I6[3];
  I[2] = I[6] = I6[4];
  I[5] = I[7] = I6[5];
}

#endif
