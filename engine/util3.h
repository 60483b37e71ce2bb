/* engine/util3.h: 3-vectors, 3x3 matrices (row-major), unit quaternions (w, x, y, z) and rigid transforms
 * for the engine and the serial arms, and the geometry of optimiser/ and io/ that works on their frames;
 * header-only, static inline, results first. */
#ifndef KL_ENGINE_UTIL3_H
#define KL_ENGINE_UTIL3_H

#include <math.h>
#include <string.h>

/* r = a */
static inline void v3_copy(double r[3], const double a[3]) { memcpy(r, a, 3 * sizeof *r); }
/* r = 0 */
static inline void v3_zero(double r[3]) { r[0] = r[1] = r[2] = 0.0; }
/* a . b */
static inline double v3_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
/* |a| */
static inline double v3_norm(const double a[3]) { return sqrt(v3_dot(a, a)); }
/* r = a + b */
static inline void v3_add(double r[3], const double a[3], const double b[3])
{
  r[0] = a[0] + b[0];
  r[1] = a[1] + b[1];
  r[2] = a[2] + b[2];
}
/* r = a - b */
static inline void v3_sub(double r[3], const double a[3], const double b[3])
{
  r[0] = a[0] - b[0];
  r[1] = a[1] - b[1];
  r[2] = a[2] - b[2];
}
/* r = a * s */
static inline void v3_scl(double r[3], const double a[3], double s)
{
  r[0] = a[0] * s;
  r[1] = a[1] * s;
  r[2] = a[2] * s;
}
/* r += a * s */
static inline void v3_addscl(double r[3], const double a[3], double s)
{
  r[0] += a[0] * s;
  r[1] += a[1] * s;
  r[2] += a[2] * s;
}
/* r = a x b (r may alias a or b) */
static inline void v3_cross(double r[3], const double a[3], const double b[3])
{
  const double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
  r[0] = x;
  r[1] = y;
  r[2] = z;
}
/* a / |a|; returns |a| (a unchanged if 0) */
static inline double v3_normalize(double a[3])
{
  const double n = v3_norm(a);
  if (n > 0) v3_scl(a, a, 1.0 / n);
  return n;
}
/* r = M a */
static inline void m3_mulv(double r[3], const double M[9], const double a[3])
{
  const double x = M[0] * a[0] + M[1] * a[1] + M[2] * a[2], y = M[3] * a[0] + M[4] * a[1] + M[5] * a[2],
               z = M[6] * a[0] + M[7] * a[1] + M[8] * a[2];
  r[0] = x;
  r[1] = y;
  r[2] = z;
}
/* r = M^T a */
static inline void m3_mulvT(double r[3], const double M[9], const double a[3])
{
  const double x = M[0] * a[0] + M[3] * a[1] + M[6] * a[2], y = M[1] * a[0] + M[4] * a[1] + M[7] * a[2],
               z = M[2] * a[0] + M[5] * a[1] + M[8] * a[2];
  r[0] = x;
  r[1] = y;
  r[2] = z;
}
/* rotation matrix of the unit quaternion q */
static inline void q_to_m3(double M[9], const double q[4])
{
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  M[0] = 1 - 2 * (y * y + z * z), M[1] = 2 * (x * y - w * z), M[2] = 2 * (x * z + w * y);
  M[3] = 2 * (x * y + w * z), M[4] = 1 - 2 * (x * x + z * z), M[5] = 2 * (y * z - w * x);
  M[6] = 2 * (x * z - w * y), M[7] = 2 * (y * z + w * x), M[8] = 1 - 2 * (x * x + y * y);
}
/* r = a b (Hamilton product; r may alias) */
static inline void q_mul(double r[4], const double a[4], const double b[4])
{
  const double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  const double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  const double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  const double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  r[0] = w, r[1] = x, r[2] = y, r[3] = z;
}
/* q / |q|; identity if q is 0 */
static inline void q_normalize(double q[4])
{
  const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n > 0) {
    for (int i = 0; i < 4; ++i) q[i] /= n;
  } else {
    q[0] = 1, q[1] = q[2] = q[3] = 0;
  }
}
/* q <- exp(theta/2) q: rotate q by the world-frame rotation vector theta */
static inline void q_rotate(double q[4], const double theta[3])
{
  const double a = v3_norm(theta);
  double e[4];
  /* sin(a/2)/a by its series near 0 */
  const double s = a < 1e-4 ? 0.5 - a * a / 48.0 : sin(0.5 * a) / a;
  e[0] = cos(0.5 * a);
  e[1] = theta[0] * s;
  e[2] = theta[1] * s;
  e[3] = theta[2] * s;
  q_mul(q, e, q);
  q_normalize(q);
}
/* theta = log of the unit quaternion r (the inverse of q_rotate's exp): the rotation vector, |theta| <= pi
 * (r and -r are the same rotation; the one with r0 >= 0 is taken) */
static inline void q_rotvec(const double r[4], double theta[3])
{
  const double sg = r[0] < 0 ? -1.0 : 1.0, w = sg * r[0];
  const double vn = sqrt(r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
  const double f = sg * (vn > 1e-12 ? 2.0 * atan2(vn, w) / vn : 2.0 / w); /* 2 atan(x)/x -> 2 near 0 */
  theta[0] = f * r[1], theta[1] = f * r[2], theta[2] = f * r[3];
}
/* world inverse inertia R diag(1/I) R^T from the body rotation R and principal moments I */
static inline void inv_inertia_world(double Iw[9], const double R[9], const double I[3])
{
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += R[3 * i + k] * R[3 * j + k] / I[k];
      Iw[3 * i + j] = s;
    }
}
/* world inertia R diag(I) R^T */
static inline void inertia_world(double Iw[9], const double R[9], const double I[3])
{
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += R[3 * i + k] * R[3 * j + k] * I[k];
      Iw[3 * i + j] = s;
    }
}

/* c = a + s b */
static inline void v3_axpy(double c[3], const double a[3], double s, const double b[3])
{
  for (int i = 0; i < 3; ++i) c[i] = a[i] + s * b[i];
}
/* C = A B (C may alias neither) */
static inline void m3_mul(double C[9], const double A[9], const double B[9])
{
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
/* C = A^T B (C may alias neither) */
static inline void m3_mul_tn(double C[9], const double A[9], const double B[9])
{
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
}
/* C = A B^T (C may alias neither) */
static inline void m3_mul_nt(double C[9], const double A[9], const double B[9])
{
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      C[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
}
/* C = R I R^T: a tensor given in a child frame, expressed in the parent frame */
static inline void m3_rotate_tensor(double C[9], const double R[9], const double I[9])
{
  double T[9];
  m3_mul(T, R, I);
  m3_mul_nt(C, T, R);
}
/* 3x3 symmetric tensor from xx yy zz xy xz yz */
static inline void m3_tensor6(double I[9], const double I6[6])
{
  I[0] = I6[0];
  I[4] = I6[1];
  I[8] = I6[2];
  I[1] = I[3] = I6[3];
  I[2] = I[6] = I6[4];
  I[5] = I[7] = I6[5];
}
/* R = rotation by angle about the unit axis w (Rodrigues) */
static inline void m3_axis_angle(double R[9], const double w[3], double angle)
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
static inline void m3_rpy(double R[9], const double rpy[3])
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
/* roll, pitch, yaw of R (inverse of m3_rpy; at pitch = +-pi/2 roll takes all of the free angle) */
static inline void m3_rpy_of(double rpy[3], const double R[9])
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
/* w = log(R) as a rotation vector (axis * angle, angle in [0, pi]); q_rotvec is the quaternion's */
static inline void m3_log(double w[3], const double R[9])
{
  const double v[3] = {0.5 * (R[7] - R[5]), 0.5 * (R[2] - R[6]), 0.5 * (R[3] - R[1])};
  const double s = v3_norm(v), c = 0.5 * (R[0] + R[4] + R[8] - 1.0);
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
  const double n = v3_norm(a);
  double sg = v3_dot(a, v) < 0 ? -1.0 : 1.0;
  for (int i = 0; i < 3; ++i) w[i] = sg * th * a[i] / n;
}

/* A rigid transform x_parent = R x_child + p (the serial arms' frames) */
typedef struct kl_xf {
  double R[9]; /* rotation child -> parent, row-major */
  double p[3]; /* child origin in the parent frame [m] */
} kl_xf;
/* c = a b (c may not alias a or b) */
static inline void xf_mul(kl_xf *c, const kl_xf *a, const kl_xf *b)
{
  m3_mul(c->R, a->R, b->R);
  m3_mulv(c->p, a->R, b->p);
  for (int i = 0; i < 3; ++i) c->p[i] += a->p[i];
}
/* y = a x (a point) */
static inline void xf_point(double y[3], const kl_xf *a, const double x[3])
{
  m3_mulv(y, a->R, x);
  for (int i = 0; i < 3; ++i) y[i] += a->p[i];
}
/* b = a^-1 */
static inline void xf_inv(kl_xf *b, const kl_xf *a)
{
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) b->R[3 * i + j] = a->R[3 * j + i];
  m3_mulv(b->p, b->R, a->p);
  for (int i = 0; i < 3; ++i) b->p[i] = -b->p[i];
}
/* identity transform */
static inline void xf_identity(kl_xf *a)
{
  memset(a, 0, sizeof *a);
  a->R[0] = a->R[4] = a->R[8] = 1.0;
}

#endif
