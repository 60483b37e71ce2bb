/* engine/util3.h: 3-vectors, 3x3 matrices (row-major) and unit quaternions (w, x, y, z) for the
 * engine; header-only, static inline, internal to engine/. */
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

#endif
