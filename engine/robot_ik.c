/* engine/robot_ik.c: inverse kinematics of a serial arm for a TCP pose (engine/robot.h).
 * Closed form for six-joint arms with axes 2 || 3 and a spherical wrist (the industrial layout of the
 * ER10 class), written in product-of-exponentials form with the Paden-Kahan sub-problems (Murray, Li
 * and Sastry, A Mathematical Introduction to Robotic Manipulation, 1994, section 3.3): up to 8
 * branches, each polished by Newton steps; damped least squares (Levenberg-Marquardt) otherwise. */
#include <math.h>
#include <string.h>

#include "engine/robot.h"
#include "engine/util3.h"
#include "kernels/kl_common.h"

#define TWO_PI (2.0 * KL_PI)

/* e = [p_t - p(q); log(R_t R(q)^T)] in world axes; returns |e| and the two parts */
static double pose_error(const kl_robot *r, const double *q, const double Rt[9], const double pt[3], double e[6],
                         double *ep, double *er)
{
  double R[9], p[3], D[9];
  kl_robot_fk(r, q, R, p);
  v3_sub(e, pt, p);
  m3_mul_nt(D, Rt, R);
  m3_log(e + 3, D);
  *ep = v3_norm(e);
  *er = v3_norm(e + 3);
  return sqrt(*ep * *ep + *er * *er);
}

/* smallest joint-limit margin of q [rad] (INFINITY if every joint is unlimited) and the joint */
static double limit_margin(const kl_robot *r, const double *q, int *worst)
{
  double m = INFINITY;
  *worst = 0;
  for (int i = 0; i < r->ndof; ++i) {
    const double mi = fmin(q[i] - r->jnt_range[i][0], r->jnt_range[i][1] - q[i]);
    if (mi < m || isnan(mi)) {
      m = mi;
      *worst = i;
    }
  }
  return m;
}

/* a + 2 pi k closest to ref among the values within [lo, hi]; closest to ref if none is */
static double wrap_near(double a, double ref, double lo, double hi)
{
  if (!isfinite(a)) return a;
  const double base = a + TWO_PI * round((ref - a) / TWO_PI);
  double best = base, bestd = INFINITY;
  for (int k = -2; k <= 2; ++k) {
    const double c = base + TWO_PI * k;
    if (c >= lo && c <= hi && fabs(c - ref) < bestd) best = c, bestd = fabs(c - ref);
  }
  return best;
}

/* Paden-Kahan sub-problem 1: theta rotating point p about the axis (w, through r) onto q;
 * 0 if p lies on the axis (any theta: the caller's fallback stays) */
static int sp1(const double w[3], const double r[3], const double p[3], const double q[3], double *th)
{
  double u[3], v[3], up[3], vp[3], c[3];
  v3_sub(u, p, r);
  v3_sub(v, q, r);
  v3_axpy(up, u, -v3_dot(w, u), w);
  v3_axpy(vp, v, -v3_dot(w, v), w);
  if (v3_norm(up) < 1e-12 || v3_norm(vp) < 1e-12) return 0;
  v3_cross(c, up, vp);
  *th = atan2(v3_dot(w, c), v3_dot(up, vp));
  return 1;
}

/* Paden-Kahan sub-problem 3: theta rotating p about (w, r) to distance delta from q; 0, 1 or 2 roots */
static int sp3(const double w[3], const double r[3], const double p[3], const double q[3], double delta, double th[2])
{
  double u[3], v[3], up[3], vp[3], c[3], pq[3];
  v3_sub(u, p, r);
  v3_sub(v, q, r);
  v3_sub(pq, p, q);
  v3_axpy(up, u, -v3_dot(w, u), w);
  v3_axpy(vp, v, -v3_dot(w, v), w);
  const double nu = v3_norm(up), nv = v3_norm(vp), wpq = v3_dot(w, pq);
  const double d2 = delta * delta - wpq * wpq;
  if (nu < 1e-12 || nv < 1e-12) return 0;
  v3_cross(c, up, vp);
  const double th0 = atan2(v3_dot(w, c), v3_dot(up, vp));
  double cs = (nu * nu + nv * nv - d2) / (2 * nu * nv);
  if (fabs(cs) > 1.0 + 1e-12) return 0;
  cs = fmin(1.0, fmax(-1.0, cs));
  const double a = acos(cs);
  th[0] = th0 + a;
  th[1] = th0 - a;
  return a > 0 ? 2 : 1;
}

/* x rotated about the line (w, through r) by th */
static void rot_point(const double w[3], const double r[3], double th, const double x[3], double y[3])
{
  double R[9], d[3];
  m3_axis_angle(R, w, th);
  v3_sub(d, x, r);
  m3_mulv(y, R, d);
  for (int i = 0; i < 3; ++i) y[i] += r[i];
}

/* every closed-form branch for the target (Rb, pb) in base coordinates; returns the count (<= 8) */
static int closed_branches(const kl_robot *r, const double Rb[9], const double pb[3], const double *qref,
                           double cand[8][6], int *why, double *why_val)
{
  const double(*w)[3] = r->sw_w, (*o)[3] = r->sw_r;
  const double zero[3] = {0, 0, 0};
  double pwt[3], t[3], RbR0t[9];
  /* the wrist centre is fixed in the tool: p_wt = R_t R_0^T (p_w - p_0) + p_t */
  m3_mul_nt(RbR0t, Rb, r->sw_R0);
  v3_sub(t, r->sw_pw, r->sw_p0);
  m3_mulv(pwt, RbR0t, t);
  for (int i = 0; i < 3; ++i) pwt[i] += pb[i];
  /* q1: rotations 2 and 3 keep w2 . x, so (Rot(w1, q1) w2) . (p_wt - r1) = w2 . (p_w - r1) */
  double d[3], w2p[3], c1[3], pw1[3];
  v3_sub(d, pwt, o[0]);
  const double w12 = v3_dot(w[0], w[1]);
  v3_axpy(w2p, w[1], -w12, w[0]);
  v3_cross(c1, w[0], w2p);
  v3_sub(pw1, r->sw_pw, o[0]);
  const double A = v3_dot(w2p, d), C = v3_dot(c1, d), D = v3_dot(w[1], pw1) - w12 * v3_dot(w[0], d);
  const double RR = hypot(A, C);
  if (RR < 1e-12 || fabs(D) > RR * (1 + 1e-12)) {
    double c[3];
    v3_cross(c, w[0], d);
    *why = KL_IK_WHY_NEAR_AXIS1;
    *why_val = v3_norm(c); /* distance of the wrist centre from axis 1 */
    return 0;
  }
  const double phi = atan2(C, A), a1 = acos(fmin(1.0, fmax(-1.0, D / RR)));
  const double q1s[2] = {phi + a1, phi - a1};
  int nc = 0;
  *why = KL_IK_WHY_REACH;
  for (int i1 = 0; i1 < 2; ++i1) {
    const double q1 = q1s[i1];
    double pp[3], dv[3];
    rot_point(w[0], o[0], -q1, pwt, pp); /* e1^-1 p_wt */
    v3_sub(dv, pp, o[1]);
    double q3s[2];
    const int n3 = sp3(w[2], o[2], r->sw_pw, o[1], v3_norm(dv), q3s);
    if (n3 == 0) *why_val = v3_norm(dv);
    for (int i3 = 0; i3 < n3; ++i3) {
      const double q3 = q3s[i3];
      double p3[3], q2 = qref[1];
      rot_point(w[2], o[2], q3, r->sw_pw, p3);
      sp1(w[1], o[1], p3, pp, &q2);
      /* orientation: Rot4 Rot5 Rot6 = (Rot1 Rot2 Rot3)^T R_t R_0^T */
      double R1[9], R2[9], R3[9], R12[9], R123[9], Rw[9];
      m3_axis_angle(R1, w[0], q1);
      m3_axis_angle(R2, w[1], q2);
      m3_axis_angle(R3, w[2], q3);
      m3_mul(R12, R1, R2);
      m3_mul(R123, R12, R3);
      m3_mul_tn(Rw, R123, RbR0t);
      /* sub-problem 2 on directions: Rot(w4, q4) Rot(w5, q5) w6 = Rw w6 */
      double y[3], n45[3];
      m3_mulv(y, Rw, w[5]);
      v3_cross(n45, w[3], w[4]);
      const double c45 = v3_dot(w[3], w[4]), den = c45 * c45 - 1.0, s45 = v3_dot(n45, n45);
      const double al = (c45 * v3_dot(w[4], w[5]) - v3_dot(w[3], y)) / den;
      const double be = (c45 * v3_dot(w[3], y) - v3_dot(w[4], w[5])) / den;
      const double g2 = (1.0 - al * al - be * be - 2 * al * be * c45) / s45;
      if (g2 < -1e-9) continue;
      const double ga = sqrt(fmax(0.0, g2));
      for (int sg = 0; sg < 2; ++sg) {
        double z[3];
        for (int k = 0; k < 3; ++k) z[k] = al * w[3][k] + be * w[4][k] + (sg ? -ga : ga) * n45[k];
        double q5 = qref[4], q4 = qref[3]; /* wrist singular (axes 4 and 6 aligned): keep q4 from qref */
        sp1(w[4], zero, w[5], z, &q5);
        sp1(w[3], zero, z, y, &q4);
        double R4[9], R5[9], R45[9], R6[9];
        m3_axis_angle(R4, w[3], q4);
        m3_axis_angle(R5, w[4], q5);
        m3_mul(R45, R4, R5);
        m3_mul_tn(R6, R45, Rw);
        /* q6: the rotation angle of R6 about w6, read on a vector perpendicular to w6 */
        const double e[3] = {fabs(w[5][0]) < 0.6 ? 1.0 : 0.0, fabs(w[5][0]) < 0.6 ? 0.0 : 1.0, 0.0};
        double av[3], bv[3], cv[3];
        v3_cross(av, w[5], e);
        const double an = v3_norm(av);
        for (int k = 0; k < 3; ++k) av[k] /= an;
        m3_mulv(bv, R6, av);
        v3_cross(cv, av, bv);
        const double q6 = atan2(v3_dot(w[5], cv), v3_dot(av, bv));
        const double qq[6] = {q1, q2, q3, q4, q5, q6};
        memcpy(cand[nc++], qq, sizeof qq);
        if (!(ga > 0)) break; /* one wrist branch only */
      }
    }
    if (!(a1 > 0)) break; /* one shoulder branch only */
  }
  return nc;
}

/* Newton (lambda = 0) or Levenberg-Marquardt iterations on q towards the target; returns |e| */
static double refine(const kl_robot *r, const double Rt[9], const double pt[3], double *q, int maxit, int damped,
                     double *ep, double *er)
{
  const int n = r->ndof;
  double e[6], J[6 * KL_ROBOT_MAXDOF], dq[KL_ROBOT_MAXDOF], qn[KL_ROBOT_MAXDOF], en[6];
  double err = pose_error(r, q, Rt, pt, e, ep, er);
  double lambda = damped ? 1e-2 : 0.0;
  for (int it = 0; it < maxit; ++it) {
    if (*ep <= 0.05 * KL_IK_TOL_POS && *er <= 0.05 * KL_IK_TOL_ROT) break; /* well inside the tolerance */
    kl_robot_jacobian(r, q, J);
    kl_robot_lsq(J, n, e, lambda, dq);
    for (int i = 0; i < n; ++i) qn[i] = q[i] + dq[i];
    double epn, ern;
    const double errn = pose_error(r, qn, Rt, pt, en, &epn, &ern);
    if (errn < err) {
      memcpy(q, qn, sizeof(double) * (size_t)n);
      memcpy(e, en, sizeof e);
      err = errn, *ep = epn, *er = ern;
      lambda = lambda > 1e-9 ? lambda * 0.1 : 0.0; /* towards Gauss-Newton as the step is trusted */
    } else {
      if (!damped) break;
      lambda = lambda > 0 ? lambda * 10.0 : 1e-6;
      if (lambda > 1e6) break;
    }
  }
  return err;
}

/* closed form with Newton polish where it applies, damped least squares otherwise */
int kl_robot_ik(const kl_robot *r, const double R[9], const double p[3], const double *qref, int method, double *q,
                kl_robot_ikres *res)
{
  const int n = r->ndof;
  kl_robot_ikres tmp;
  if (!res) res = &tmp;
  memset(res, 0, sizeof *res);
  const double *qr = qref ? qref : r->q_home;
  double ep = INFINITY, er = INFINITY;
  int finite = 1;
  for (int i = 0; i < 9; ++i) finite &= isfinite(R[i]) != 0;
  for (int i = 0; i < 3; ++i) finite &= isfinite(p[i]) != 0;
  for (int i = 0; i < n; ++i) finite &= isfinite(qr[i]) != 0;
  if (!finite) { /* nothing to solve: report, never iterate on NaN */
    for (int i = 0; i < n; ++i) q[i] = qr[i];
    res->err_pos = res->err_rot = NAN;
    res->margin = limit_margin(r, q, &res->worst);
    res->why = KL_IK_WHY_ITER;
    return 0;
  }
  int have = 0;
  if (method == KL_IK_AUTO && r->ik_closed) {
    /* target in base coordinates: T_b = T_base^-1 T_world */
    kl_xf B, Bi, Tw, Tb;
    m3_rpy(B.R, r->base_rpy);
    memcpy(B.p, r->base_pos, sizeof B.p);
    xf_inv(&Bi, &B);
    memcpy(Tw.R, R, sizeof Tw.R);
    memcpy(Tw.p, p, sizeof Tw.p);
    xf_mul(&Tb, &Bi, &Tw);
    double cand[8][6];
    int why = 0;
    double why_val = 0;
    const int nc = closed_branches(r, Tb.R, Tb.p, qr, cand, &why, &why_val);
    res->closed_form = 1;
    /* polish every branch, keep distinct converged ones, pick: within limits first, then nearest qref */
    double best[6], bestd = INFINITY;
    int best_in = -1, nb = 0;
    double seen[8][6];
    for (int c = 0; c < nc; ++c) {
      double qc[6], cep, cer;
      for (int i = 0; i < 6; ++i) qc[i] = wrap_near(cand[c][i], qr[i], r->jnt_range[i][0], r->jnt_range[i][1]);
      refine(r, R, p, qc, 8, 0, &cep, &cer);
      if (!(cep <= KL_IK_TOL_POS && cer <= KL_IK_TOL_ROT)) continue;
      for (int i = 0; i < 6; ++i) qc[i] = wrap_near(qc[i], qr[i], r->jnt_range[i][0], r->jnt_range[i][1]);
      int dup = 0;
      for (int s = 0; s < nb && !dup; ++s) {
        double dd = 0;
        for (int i = 0; i < 6; ++i) dd = fmax(dd, fabs(remainder(seen[s][i] - qc[i], TWO_PI)));
        dup = dd < 1e-7;
      }
      if (!dup && nb < 8) memcpy(seen[nb++], qc, sizeof qc);
      int worst;
      const int in = limit_margin(r, qc, &worst) >= 0;
      double dist = 0;
      for (int i = 0; i < 6; ++i) dist += (qc[i] - qr[i]) * (qc[i] - qr[i]);
      if (in > best_in || (in == best_in && dist < bestd)) {
        best_in = in, bestd = dist;
        memcpy(best, qc, sizeof qc);
        ep = cep, er = cer;
      }
    }
    res->nbranch = nb;
    if (best_in >= 0) {
      memcpy(q, best, sizeof best);
      have = 1;
    } else {
      res->why = why;
      res->why_val = why_val;
    }
  }
  if (!have) { /* damped least squares from the reference pose */
    memcpy(q, qr, sizeof(double) * (size_t)n);
    refine(r, R, p, q, 500, 1, &ep, &er);
    for (int i = 0; i < n; ++i) q[i] = wrap_near(q[i], qr[i], r->jnt_range[i][0], r->jnt_range[i][1]);
    if (ep <= KL_IK_TOL_POS && er <= KL_IK_TOL_ROT)
      res->why = 0;
    else if (!res->why)
      res->why = KL_IK_WHY_ITER;
  }
  res->err_pos = ep;
  res->err_rot = er;
  res->converged = ep <= KL_IK_TOL_POS && er <= KL_IK_TOL_ROT;
  res->margin = limit_margin(r, q, &res->worst);
  return res->converged && res->margin >= 0;
}
