/* engine/robot_test.c: the serial-arm model (engine/robot.h) against independent references:
 * CRBA against inverse dynamics (RNEA) column by column, RNEA against the potential energy and the
 * energy identity of the Coriolis terms, the effective mass against an impulse applied at the TCP,
 * closed-form IK against FK and against damped least squares, DH against modified DH (URDF: io/robot_urdf_test.c). Figures are printed as "# ..." lines. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_linalg.h>

#include "engine/robot.h"
#include "engine/util3.h"

#define NS 200 /* the default path's samples */
#define DEG (3.14159265358979323846 / 180.0)

static uint64_t rng = 0x9E3779B97F4A7C15ull;

/* uniform in [0, 1) (xorshift64*: reproducible, no global libc state) */
static double urand(void)
{
  rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}

/* a random pose within the limits (unlimited joints: [-pi, pi]) */
static void random_q(const kl_robot *r, double *q)
{
  for (int i = 0; i < r->ndof; ++i) {
    const double lo = isfinite(r->jnt_range[i][0]) ? r->jnt_range[i][0] : -3.14159;
    const double hi = isfinite(r->jnt_range[i][1]) ? r->jnt_range[i][1] : 3.14159;
    q[i] = lo + (hi - lo) * urand();
  }
}

/* a random rigid-body inertia: a box's, rotated arbitrarily (xx yy zz xy xz yz) */
static void random_inertia(double m, double I6[6])
{
  const double a = 0.05 + 0.3 * urand(), b = 0.05 + 0.3 * urand(), c = 0.05 + 0.3 * urand();
  const double D[9] = {m * (b * b + c * c) / 12, 0, 0, 0, m * (a * a + c * c) / 12, 0, 0, 0, m * (a * a + b * b) / 12};
  double w[3] = {urand() - 0.5, urand() - 0.5, urand() - 0.5}, R[9], I[9];
  const double n = v3_norm(w);
  for (int k = 0; k < 3; ++k) w[k] /= n;
  m3_axis_angle(R, w, 6.0 * urand());
  m3_rotate_tensor(I, R, D);
  I6[0] = I[0], I6[1] = I[4], I6[2] = I[8], I6[3] = I[1], I6[4] = I[2], I6[5] = I[5];
}

/* a random arm of n joints in DH form with arbitrary twists and offsets (no closed-form IK) */
static kl_robot *random_robot(int n)
{
  kl_robot_spec s;
  memset(&s, 0, sizeof s);
  s.conv = KL_ROBOT_DH;
  s.ndof = n;
  for (int i = 0; i < n; ++i) {
    kl_robot_joint_spec *j = &s.joint[i];
    j->a = 0.3 * urand(), j->d = 0.3 * urand(), j->alpha = 3.0 * (urand() - 0.5), j->theta = urand() - 0.5;
    j->lo = -3.0, j->hi = 3.0, j->vmax = 2.0 + urand();
    j->stiffness = 1e4 * (1 + urand());
    j->mass = 0.5 + 5 * urand();
    for (int k = 0; k < 3; ++k) j->com[k] = 0.2 * (urand() - 0.5);
    random_inertia(j->mass, j->inertia);
  }
  s.tool_xyz[2] = 0.1;
  s.tool_mass = 1.0;
  random_inertia(1.0, s.tool_inertia);
  kl_robot *r = NULL;
  char msg[400];
  assert_int_equal(kl_robot_create(&s, &r, msg, sizeof msg), KELVIN_OK);
  return r;
}

/* M(q) column by column from RNEA: tau(q, 0, e_j) with no gravity */
static void rnea_inertia(const kl_robot *r, const double *q, double *M)
{
  const int n = r->ndof;
  double e[KL_ROBOT_MAXDOF], tau[KL_ROBOT_MAXDOF];
  for (int j = 0; j < n; ++j) {
    memset(e, 0, sizeof e);
    e[j] = 1.0;
    kl_robot_rnea(r, q, NULL, e, NULL, NULL, tau);
    for (int i = 0; i < n; ++i) M[i * n + j] = tau[i];
  }
}

/* M(q) symmetric positive definite and equal to the RNEA columns, over many random poses */
static void check_inertia(const kl_robot *r, int npose, const char *label)
{
  const int n = r->ndof;
  gsl_eigen_symm_workspace *ws = gsl_eigen_symm_alloc((size_t)n);
  assert_non_null(ws);
  double q[KL_ROBOT_MAXDOF], M[144], Mr[144], A[144], ev[KL_ROBOT_MAXDOF];
  double worst_diff = 0, worst_asym = 0, min_eig = INFINITY, max_cond = 0, max_m = 0;
  for (int t = 0; t < npose; ++t) {
    random_q(r, q);
    kl_robot_inertia(r, q, M);
    rnea_inertia(r, q, Mr);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        worst_diff = fmax(worst_diff, fabs(M[i * n + j] - Mr[i * n + j]));
        worst_asym = fmax(worst_asym, fabs(Mr[i * n + j] - Mr[j * n + i]));
        max_m = fmax(max_m, fabs(M[i * n + j]));
      }
    memcpy(A, M, sizeof(double) * (size_t)(n * n));
    gsl_matrix_view Av = gsl_matrix_view_array(A, (size_t)n, (size_t)n);
    gsl_vector_view ev_v = gsl_vector_view_array(ev, (size_t)n);
    gsl_eigen_symm(&Av.matrix, &ev_v.vector, ws);
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n; ++i) lo = fmin(lo, ev[i]), hi = fmax(hi, ev[i]);
    min_eig = fmin(min_eig, lo);
    max_cond = fmax(max_cond, hi / lo);
    assert_true(lo > 0);
  }
  gsl_eigen_symm_free(ws);
  printf("# %s: %d random poses: M(q) SPD, smallest eigenvalue %.4g kg m^2, largest condition number %.4g; "
         "max |M_crba - M_rnea| = %.3g kg m^2 (max |M| %.3g); RNEA asymmetry %.3g\n",
         label, npose, min_eig, max_cond, worst_diff, max_m, worst_asym);
  /* 2e-13 kg m^2 absolute on entries of order 1-10: the two algorithms share only the FK chain, and
   * round-off of O(n) products of O(1) terms is ~1e-15 (measured worst 1.2e-14 difference, 4.4e-15
   * asymmetry, over the three arms); about ten times that */
  assert_true(worst_diff <= 2e-13);
  assert_true(worst_asym <= 5e-14);
}

static void test_inertia_crba_rnea(void **state)
{
  (void)state;
  kl_robot *r = NULL;
  assert_int_equal(kl_robot_builtin_er10(&r), KELVIN_OK);
  check_inertia(r, 10000, "ER10");
  kl_robot_free(r);
  for (int n = 2; n <= 7; n += 5) {
    kl_robot *x = random_robot(n);
    char label[64];
    snprintf(label, sizeof label, "random %d-joint arm", n);
    check_inertia(x, 1000, label);
    kl_robot_free(x);
  }
}

/* potential energy sum m_i g . c_i: RNEA's gravity torque is its negative gradient */
static double potential(const kl_robot *r, const double *q, const double g[3])
{
  /* centres of mass from the M-free route: FK of each body is not public, so use RNEA's definition
   * indirectly: V(q) = -sum m g . c. Recompute the chain here with the placement fields. */
  kl_xf prev, body;
  m3_rpy(prev.R, r->base_rpy);
  memcpy(prev.p, r->base_pos, sizeof prev.p);
  double V = 0;
  for (int i = 0; i < r->ndof; ++i) {
    kl_xf P, J, Q;
    memcpy(P.R, r->jnt_R[i], sizeof P.R);
    memcpy(P.p, r->jnt_p[i], sizeof P.p);
    xf_mul(&J, &prev, &P);
    m3_axis_angle(Q.R, r->jnt_axis[i], q[i]);
    memset(Q.p, 0, sizeof Q.p);
    xf_mul(&body, &J, &Q);
    double c[3];
    xf_point(c, &body, r->body_com[i]);
    V -= r->body_mass[i] * v3_dot(g, c);
    prev = body;
  }
  return V;
}

/* RNEA itself: gravity torques = dV/dq; Coriolis terms obey qd . c(q, qd) = qd^T Mdot qd / 2 */
static void test_rnea_physics(void **state)
{
  (void)state;
  kl_robot *r = NULL;
  assert_int_equal(kl_robot_builtin_er10(&r), KELVIN_OK);
  const double g[3] = {0, 0, -9.81};
  const int n = r->ndof;
  double worst_g = 0, worst_c = 0;
  for (int t = 0; t < 200; ++t) {
    double q[6], qd[6], tau[6], qp[6], qm[6], Mp[36], Mm[36];
    random_q(r, q);
    for (int i = 0; i < n; ++i) qd[i] = 4 * (urand() - 0.5);
    kl_robot_rnea(r, q, NULL, NULL, g, NULL, tau);
    const double h = 1e-6; /* central differences: error ~h^2 V''' + eps V / h ~ 1e-10 N m */
    for (int i = 0; i < n; ++i) {
      memcpy(qp, q, sizeof q), memcpy(qm, q, sizeof q);
      qp[i] += h, qm[i] -= h;
      const double dV = (potential(r, qp, g) - potential(r, qm, g)) / (2 * h);
      worst_g = fmax(worst_g, fabs(tau[i] - dV));
    }
    kl_robot_rnea(r, q, qd, NULL, NULL, NULL, tau);
    for (int i = 0; i < n; ++i) qp[i] = q[i] + h * qd[i], qm[i] = q[i] - h * qd[i];
    kl_robot_inertia(r, qp, Mp);
    kl_robot_inertia(r, qm, Mm);
    double lhs = 0, rhs = 0, scale = 0;
    for (int i = 0; i < n; ++i) {
      lhs += qd[i] * tau[i];
      scale += fabs(qd[i] * tau[i]);
      for (int j = 0; j < n; ++j) rhs += 0.5 * qd[i] * (Mp[i * n + j] - Mm[i * n + j]) / (2 * h) * qd[j];
    }
    worst_c = fmax(worst_c, fabs(lhs - rhs) / fmax(scale, 1e-3));
  }
  printf("# RNEA: gravity torque vs -dV/dq max error %.3g N m; qd.c vs qd^T Mdot qd / 2 max relative error %.3g\n",
         worst_g, worst_c);
  assert_true(worst_g < 1e-6);  /* finite-difference limited (see h): measured 4.8e-8 */
  assert_true(worst_c < 5e-8);  /* measured 4.3e-9 (finite differences of M) */
  kl_robot_free(r);
}

/* Physical check of m_eff: an impulse p along n at the TCP, with the arm at rest, changes the joint
 * rates by M^-1 J_v^T n p (impulse-momentum; finite forces do nothing in zero time). Here J_v^T n p
 * comes from RNEA with an external TCP force, M from RNEA columns (solved by LU) and the TCP velocity
 * from velocity propagation: nothing of the m_eff formula, the Jacobian or CRBA. */
static double impulse_check(const kl_robot *r, const double *q, const double nv[3], double *meff_out)
{
  const int n = r->ndof;
  const double p = 3.7; /* N s */
  double M[144], tau[KL_ROBOT_MAXDOF], dqd[KL_ROBOT_MAXDOF], v[6], f[3];
  size_t pd[KL_ROBOT_MAXDOF];
  for (int k = 0; k < 3; ++k) f[k] = nv[k] * p;
  rnea_inertia(r, q, M);
  kl_robot_rnea(r, q, NULL, NULL, NULL, f, tau); /* tau = -J^T f */
  for (int i = 0; i < n; ++i) tau[i] = -tau[i];
  gsl_matrix_view Mv = gsl_matrix_view_array(M, (size_t)n, (size_t)n);
  gsl_vector_view bv = gsl_vector_view_array(tau, (size_t)n), xv = gsl_vector_view_array(dqd, (size_t)n);
  gsl_permutation perm = {(size_t)n, pd};
  int sg;
  gsl_linalg_LU_decomp(&Mv.matrix, &perm, &sg);
  gsl_linalg_LU_solve(&Mv.matrix, &perm, &bv.vector, &xv.vector);
  kl_robot_tcp_velocity(r, q, dqd, v);
  const double dv = v3_dot(nv, v);
  double meff;
  assert_int_equal(kl_robot_effective_mass(r, q, nv, &meff, NULL), KELVIN_OK);
  *meff_out = meff;
  return fabs(dv - p / meff) / (p / meff);
}

static void test_effective_mass_impulse(void **state)
{
  (void)state;
  kl_robot *r = NULL;
  assert_int_equal(kl_robot_builtin_er10(&r), KELVIN_OK);
  double worst = 0, mlo = INFINITY, mhi = 0;
  int used = 0;
  for (int t = 0; t < 2000; ++t) {
    double q[6], nv[3] = {urand() - 0.5, urand() - 0.5, urand() - 0.5}, m;
    random_q(r, q);
    const double nn = v3_norm(nv);
    for (int k = 0; k < 3; ++k) nv[k] /= nn;
    const double e = impulse_check(r, q, nv, &m);
    if (m > 1e4) continue; /* nearly rigid along n (singular): p/m_eff ~ 0, a relative error means nothing */
    worst = fmax(worst, e), mlo = fmin(mlo, m), mhi = fmax(mhi, m);
    ++used;
  }
  printf("# impulse at the TCP, %d random poses and directions: max relative error of dv vs p/m_eff %.3g "
         "(m_eff %.3g..%.3g kg)\n", used, worst, mlo, mhi);
  assert_true(worst < 6e-13); /* measured 6.0e-14 (m_eff up to 110 kg: ill-conditioned poses) */
  assert_true(used > 1900);
  /* along the default path, with its normals */
  double pos[3 * NS], nrm[3 * NS], tan[3 * NS], meff[NS], vmax[NS], margin[NS], q[6 * NS];
  int reach[NS];
  kl_robot_demo_path(NS, pos, nrm);
  assert_int_equal(kl_robot_path_tangents(NS, pos, tan), 0);
  char msg[400];
  assert_int_equal(kl_robot_path(r, NS, pos, nrm, tan, meff, vmax, reach, margin, q, msg, sizeof msg), KELVIN_OK);
  worst = 0;
  for (int k = 0; k < NS; ++k) {
    double m;
    worst = fmax(worst, impulse_check(r, q + 6 * k, nrm + 3 * k, &m));
    assert_true(fabs(m - meff[k]) <= 1e-14 * m); /* the path renormalises n: an ulp apart */
  }
  printf("# impulse along the default path's normals: max relative error %.3g\n", worst);
  assert_true(worst < 4e-14); /* measured 3.9e-15 */
  /* a second robot of general geometry */
  kl_robot *x = random_robot(7);
  worst = 0;
  for (int t = 0; t < 500; ++t) {
    double qq[7], nv[3] = {urand() - 0.5, urand() - 0.5, urand() - 0.5}, m;
    random_q(x, qq);
    const double nn = v3_norm(nv);
    for (int k = 0; k < 3; ++k) nv[k] /= nn;
    const double e = impulse_check(x, qq, nv, &m);
    if (m < 1e4) worst = fmax(worst, e);
  }
  printf("# impulse, random 7-joint arm: max relative error %.3g\n", worst);
  assert_true(worst < 6e-14); /* measured 5.6e-15 */
  kl_robot_free(x);
  kl_robot_free(r);
}

/* a uniform rod of mass m and length L on one revolute joint: m_eff at the tip across the rod is
 * I_pivot / L^2 = m/3, along the rod it is infinite; joint stiffness k gives k/L^2 across */
static void test_effective_mass_rod(void **state)
{
  (void)state;
  kl_robot_spec s;
  memset(&s, 0, sizeof s);
  s.conv = KL_ROBOT_URDF;
  s.ndof = 1;
  const double m = 2.0, L = 0.8, k = 5e3, eps = 1e-9 * m * L * L; /* thin rod: an almost-zero moment about its axis */
  kl_robot_joint_spec *j = &s.joint[0];
  j->axis[2] = 1.0;
  j->lo = -3, j->hi = 3, j->vmax = 1, j->stiffness = k, j->mass = m;
  j->com[0] = L / 2;
  const double I6[6] = {eps, m * L * L / 12, m * L * L / 12, 0, 0, 0};
  memcpy(j->inertia, I6, sizeof I6);
  s.tool_xyz[0] = L;
  kl_robot *r = NULL;
  char msg[400];
  assert_int_equal(kl_robot_create(&s, &r, msg, sizeof msg), KELVIN_OK);
  const double q = 0.7, across[3] = {-sin(q), cos(q), 0}, along[3] = {cos(q), sin(q), 0};
  double me, kn;
  assert_int_equal(kl_robot_effective_mass(r, &q, across, &me, &kn), KELVIN_OK);
  printf("# rod: m_eff across %.15g kg (m/3 = %.15g), k_n %.15g N/m (k/L^2 = %.15g)\n", me, m / 3, kn, k / (L * L));
  assert_true(fabs(me - m / 3) < 1e-12 * m);
  assert_true(fabs(kn - k / (L * L)) < 1e-12 * k);
  assert_int_equal(kl_robot_effective_mass(r, &q, along, &me, &kn), KELVIN_OK);
  assert_true(me > 1e12); /* J_v^T n is round-off only: the joint cannot push the tip along the rod */
  kl_robot_free(r);
}

/* the tool frame a path sample asks for (independent of the library's construction) */
static void target_frame(const double *nrm, const double *tan, double R[9])
{
  double z[3] = {-nrm[0], -nrm[1], -nrm[2]}, x[3], y[3];
  const double tz = v3_dot(tan, z);
  for (int i = 0; i < 3; ++i) x[i] = tan[i] - tz * z[i];
  const double xn = v3_norm(x);
  for (int i = 0; i < 3; ++i) x[i] /= xn;
  v3_cross(y, z, x);
  for (int i = 0; i < 3; ++i) R[3 * i] = x[i], R[3 * i + 1] = y[i], R[3 * i + 2] = z[i];
}

/* pose error of FK(q) against (R, p): position [m] and rotation angle [rad] */
static void fk_error(const kl_robot *r, const double *q, const double Rt[9], const double pt[3], double *ep, double *er)
{
  double R[9], p[3], d[3], D[9], w[3];
  kl_robot_fk(r, q, R, p);
  v3_sub(d, pt, p);
  *ep = v3_norm(d);
  m3_mul_nt(D, Rt, R);
  m3_log(w, D);
  *er = v3_norm(w);
}

static void test_ik_default_path(void **state)
{
  (void)state;
  kl_robot *r = NULL;
  assert_int_equal(kl_robot_builtin_er10(&r), KELVIN_OK);
  assert_int_equal(r->ik_closed, 1);
  double pos[3 * NS], nrm[3 * NS], tan[3 * NS], meff[NS], vmax[NS], margin[NS], q[6 * NS], q2[6 * NS];
  int reach[NS];
  kl_robot_demo_path(NS, pos, nrm);
  assert_int_equal(kl_robot_path_tangents(NS, pos, tan), 0);
  char msg[400];
  assert_int_equal(kl_robot_path(r, NS, pos, nrm, tan, meff, vmax, reach, margin, q, msg, sizeof msg), KELVIN_OK);
  double wp = 0, wr = 0, mlo = INFINITY, mhi = 0, vlo = INFINITY, vhi = 0, marg = INFINITY, jump = 0;
  for (int k = 0; k < NS; ++k) {
    double Rt[9], ep, er;
    assert_int_equal(reach[k], 1);
    target_frame(nrm + 3 * k, tan + 3 * k, Rt);
    fk_error(r, q + 6 * k, Rt, pos + 3 * k, &ep, &er);
    wp = fmax(wp, ep), wr = fmax(wr, er);
    mlo = fmin(mlo, meff[k]), mhi = fmax(mhi, meff[k]), vlo = fmin(vlo, vmax[k]), vhi = fmax(vhi, vmax[k]);
    marg = fmin(marg, margin[k]);
    if (k)
      for (int i = 0; i < 6; ++i) jump = fmax(jump, fabs(q[6 * k + i] - q[6 * (k - 1) + i]));
  }
  printf("# default path (%d samples): FK(IK(x)) error max %.3g m, %.3g rad; m_eff %.4g..%.4g kg; vmax %.4g..%.4g m/s;"
         " smallest joint-limit margin %.4g rad; largest joint step between samples %.3g rad\n",
         NS, wp, wr, mlo, mhi, vlo, vhi, marg, jump);
  assert_true(wp <= 4e-15 && wr <= 8e-15); /* closed-form IK: measured 3.7e-16 m, 8.2e-16 rad */
  assert_true(jump < 0.05); /* one branch all along: 1 mm samples move no joint by more than ~0.01 rad */
  /* the speed bound from the joint path itself: moving at vmax[k], the fastest joint relative to its limit,
   * (q_{k+1} - q_{k-1}) / (s_{k+1} - s_{k-1}) * vmax[k] / qdmax_i, is at exactly 1 (orientation included) */
  double wsp = 0;
  for (int k = 1; k < NS - 1; ++k) {
    double ds = 0, d[3], worst_ratio = 0;
    v3_sub(d, pos + 3 * (k + 1), pos + 3 * k);
    ds += v3_norm(d);
    v3_sub(d, pos + 3 * k, pos + 3 * (k - 1));
    ds += v3_norm(d);
    for (int i = 0; i < 6; ++i)
      worst_ratio = fmax(worst_ratio, fabs(q[6 * (k + 1) + i] - q[6 * (k - 1) + i]) / ds * vmax[k] / r->jnt_vmax[i]);
    wsp = fmax(wsp, fabs(worst_ratio - 1.0));
  }
  printf("# speed bound: at vmax the fastest joint runs at its limit to within %.3g (finite differences of the joint "
         "path over 1 mm samples)\n", wsp);
  assert_true(wsp < 1e-3); /* central differences: O(ds^2 q''') ~ 1e-5 relative */
  /* damped least squares from sample to sample finds the same joint path */
  assert_int_equal(kl_robot_path_ik(r, KL_IK_DLS, NS, pos, nrm, tan, meff, vmax, reach, margin, q2, msg, sizeof msg),
                   KELVIN_OK);
  double dq = 0;
  for (int k = 0; k < 6 * NS; ++k) dq = fmax(dq, fabs(q[k] - q2[k]));
  printf("# default path by damped least squares: max |q_dls - q_closed| = %.3g rad\n", dq);
  assert_true(dq < 1e-8);
  /* every closed-form branch is exact; from a reference at the original pose IK returns that pose;
   * also with the base moved and turned */
  const double bp[3] = {0.3, -0.2, 0.1}, br[3] = {0.05, -0.1, 0.7};
  double worst = 0, wq = 0;
  int hist[9] = {0};
  for (int pass = 0; pass < 2; ++pass) {
    if (pass) assert_int_equal(kl_robot_set_base(r, bp, br), KELVIN_OK);
    for (int t = 0; t < 3000; ++t) {
      double qq[6], qs[6], R[9], p[3];
      random_q(r, qq);
      kl_robot_fk(r, qq, R, p);
      kl_robot_ikres res;
      kl_robot_ik(r, R, p, qq, KL_IK_AUTO, qs, &res);
      assert_true(res.converged);
      assert_true(res.closed_form);
      double ep, er;
      fk_error(r, qs, R, p, &ep, &er);
      worst = fmax(worst, fmax(ep, er));
      for (int i = 0; i < 6; ++i) wq = fmax(wq, fabs(qs[i] - qq[i]));
      hist[res.nbranch]++;
    }
  }
  printf("# random poses (6000, base moved in half): FK(IK) max error %.3g; IK from the pose's own reference returns "
         "it within %.3g rad; exact branches found: 4: %d, 8: %d\n", worst, wq, hist[4], hist[8]);
  assert_true(worst <= 1e-9);
  assert_true(wq < 1e-8);
  kl_robot_free(r);
}

static void test_unreachable(void **state)
{
  (void)state;
  kl_robot *r = NULL;
  assert_int_equal(kl_robot_builtin_er10(&r), KELVIN_OK);
  double pos[3 * NS], nrm[3 * NS], tan[3 * NS], meff[NS], vmax[NS], margin[NS], q[6 * NS];
  int reach[NS];
  char msg[400];
  kl_robot_demo_path(NS, pos, nrm);
  kl_robot_path_tangents(NS, pos, tan);
  pos[3 * 7 + 2] += 2.0; /* sample 7 lifted 2 m: out of reach */
  assert_int_equal(kl_robot_path(r, NS, pos, nrm, tan, meff, vmax, reach, margin, q, msg, sizeof msg), KELVIN_ERR_ARG);
  printf("# %s\n", msg);
  assert_non_null(strstr(msg, "sample 7 "));
  assert_non_null(strstr(msg, "reach"));
  for (int k = 0; k < NS; ++k) assert_int_equal(reach[k], k != 7);
  assert_true(isnan(meff[7]) && isnan(vmax[7]));
  assert_true(meff[8] > 0 && vmax[8] > 0);
  /* a non-unit normal at sample 3 is reported as such */
  kl_robot_demo_path(NS, pos, nrm);
  nrm[3 * 3 + 2] *= 1.1;
  assert_int_equal(kl_robot_path(r, NS, pos, nrm, tan, meff, vmax, reach, margin, q, msg, sizeof msg), KELVIN_ERR_ARG);
  printf("# %s\n", msg);
  assert_non_null(strstr(msg, "sample 3 "));
  assert_non_null(strstr(msg, "unit"));
  /* a NaN position is reported, not solved */
  kl_robot_demo_path(NS, pos, nrm);
  pos[3 * 5 + 1] = NAN;
  assert_int_equal(kl_robot_path(r, NS, pos, nrm, tan, meff, vmax, reach, margin, q, msg, sizeof msg), KELVIN_ERR_ARG);
  printf("# %s\n", msg);
  assert_non_null(strstr(msg, "sample 5 "));
  assert_non_null(strstr(msg, "not finite"));
  double Rn[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, pn[3] = {NAN, 0, 0}, qn[6];
  assert_int_equal(kl_robot_ik(r, Rn, pn, NULL, KL_IK_DLS, qn, NULL), 0);
  /* joint limits: joint 1 held to +-10 deg, the path turned to the robot's left (q1 ~ 90 deg) */
  r->jnt_range[0][0] = -10 * DEG, r->jnt_range[0][1] = 10 * DEG;
  kl_robot_demo_path(NS, pos, nrm);
  for (int k = 0; k < NS; ++k) {
    const double x = pos[3 * k], nx = nrm[3 * k];
    pos[3 * k] = 0.0, pos[3 * k + 1] = x, nrm[3 * k] = 0.0, nrm[3 * k + 1] = nx;
  }
  kl_robot_path_tangents(NS, pos, tan);
  assert_int_equal(kl_robot_path(r, NS, pos, nrm, tan, meff, vmax, reach, margin, q, msg, sizeof msg), KELVIN_ERR_ARG);
  printf("# %s\n", msg);
  assert_non_null(strstr(msg, "sample 0 "));
  assert_non_null(strstr(msg, "joint 1 (j1)"));
  assert_non_null(strstr(msg, "limits"));
  assert_int_equal(reach[0], 0);
  assert_true(margin[0] < 0);
  assert_true(meff[0] > 0); /* reached outside a limit: m_eff is still that pose's */
  kl_robot_free(r);
  /* damped least squares on a general arm: an unreachable point does not converge */
  kl_robot *x = random_robot(7);
  double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, p[3] = {5, 5, 5}, qs[7];
  kl_robot_ikres res;
  assert_int_equal(kl_robot_ik(x, R, p, NULL, KL_IK_AUTO, qs, &res), 0);
  assert_int_equal(res.converged, 0);
  assert_int_equal(res.why, KL_IK_WHY_ITER);
  kl_robot_free(x);
}

/* modified DH of the same arm (rows a_{i-1}, alpha_{i-1}, d_i, theta_i; inertia in frames on the joints) */
static void test_mdh_matches_dh(void **state)
{
  (void)state;
  kl_robot_spec s, m;
  kl_robot_er10_spec(&s);
  m = s;
  m.conv = KL_ROBOT_MDH;
  for (int i = 0; i < 6; ++i) {
    m.joint[i].a = i ? s.joint[i - 1].a : 0.0;
    m.joint[i].alpha = i ? s.joint[i - 1].alpha : 0.0;
    /* MDH frame i = DH frame i-1 . Rz(theta_i) Tz(d_i), so DH frame i = MDH frame i . Tx(a_i) Rx(alpha_i):
     * move the inertial data by that */
    const kl_robot_joint_spec *j = &s.joint[i];
    kl_xf L;
    const double c = cos(j->alpha), sn = sin(j->alpha);
    const double Rx[9] = {1, 0, 0, 0, c, -sn, 0, sn, c};
    memcpy(L.R, Rx, sizeof Rx);
    L.p[0] = j->a, L.p[1] = 0, L.p[2] = 0;
    double I[9], I2[9];
    m3_tensor6(I, j->inertia);
    xf_point(m.joint[i].com, &L, j->com);
    m3_rotate_tensor(I2, L.R, I);
    const double I6[6] = {I2[0], I2[4], I2[8], I2[1], I2[2], I2[5]};
    memcpy(m.joint[i].inertia, I6, sizeof I6);
    if (i == 5) { /* the tool was given in DH frame 6 */
      xf_point(m.tool_xyz, &L, s.tool_xyz);
      xf_point(m.tool_com, &L, s.tool_com);
      m3_tensor6(I, s.tool_inertia);
      m3_rotate_tensor(I2, L.R, I);
      const double T6[6] = {I2[0], I2[4], I2[8], I2[1], I2[2], I2[5]};
      memcpy(m.tool_inertia, T6, sizeof T6);
      m3_rpy_of(m.tool_rpy, L.R); /* tool_rpy was 0: the TCP axes are DH frame 6's, L.R in MDH frame 6 */
    }
  }
  kl_robot *a = NULL, *b = NULL;
  char msg[400];
  assert_int_equal(kl_robot_create(&s, &a, msg, sizeof msg), KELVIN_OK);
  assert_int_equal(kl_robot_create(&m, &b, msg, sizeof msg), KELVIN_OK);
  double dM = 0, dT = 0;
  for (int t = 0; t < 500; ++t) {
    double q[6], Ma[36], Mb[36], Ra[9], Rb[9], pa[3], pb[3];
    random_q(a, q);
    kl_robot_inertia(a, q, Ma);
    kl_robot_inertia(b, q, Mb);
    kl_robot_fk(a, q, Ra, pa);
    kl_robot_fk(b, q, Rb, pb);
    for (int i = 0; i < 36; ++i) dM = fmax(dM, fabs(Ma[i] - Mb[i]));
    for (int i = 0; i < 9; ++i) dT = fmax(dT, fabs(Ra[i] - Rb[i]));
    for (int i = 0; i < 3; ++i) dT = fmax(dT, fabs(pa[i] - pb[i]));
  }
  printf("# modified DH vs DH: max |dM| %.3g, max |dT| %.3g\n", dM, dT);
  assert_true(dM < 1e-13 && dT < 5e-15); /* measured 7.1e-15 kg m^2, 4.4e-16 m: rounding only */
  kl_robot_free(a);
  kl_robot_free(b);
}

/* a general 7-joint arm: damped least squares round trip and a path with redundancy */
static void test_dls_general(void **state)
{
  (void)state;
  kl_robot *r = random_robot(7);
  assert_int_equal(r->ik_closed, 0);
  double worst = 0;
  int conv = 0;
  for (int t = 0; t < 300; ++t) {
    double q[7], q0[7], qs[7], R[9], p[3];
    random_q(r, q);
    kl_robot_fk(r, q, R, p);
    for (int i = 0; i < 7; ++i) q0[i] = q[i] + 0.3 * (urand() - 0.5); /* a nearby reference, as along a path */
    kl_robot_ikres res;
    kl_robot_ik(r, R, p, q0, KL_IK_AUTO, qs, &res);
    if (!res.converged) continue;
    ++conv;
    double ep, er;
    fk_error(r, qs, R, p, &ep, &er);
    worst = fmax(worst, fmax(ep, er));
  }
  printf("# damped least squares, random 7-joint arm: %d/300 converged from a reference 0.15 rad away, FK(IK) max "
         "error %.3g\n", conv, worst);
  assert_true(conv >= 290);
  assert_true(worst <= 1e-9);
  kl_robot_free(r);
}

/* kl_robot_create rejects bad specs with the joint and field named */
static void test_create_checks(void **state)
{
  (void)state;
  kl_robot_spec s;
  kl_robot *r = (kl_robot *)1;
  char msg[400];
  kl_robot_er10_spec(&s);
  s.joint[2].mass = -1;
  assert_int_equal(kl_robot_create(&s, &r, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_null(r);
  printf("# %s\n", msg);
  assert_non_null(strstr(msg, "joint 3 (j3): mass: must be > 0 kg, got -1"));
  kl_robot_er10_spec(&s);
  s.joint[4].inertia[3] = 1.0;
  assert_int_equal(kl_robot_create(&s, &r, msg, sizeof msg), KELVIN_ERR_ARG);
  printf("# %s\n", msg);
  assert_non_null(strstr(msg, "joint 5 (j5): inertia: not positive definite"));
  kl_robot_er10_spec(&s);
  s.joint[0].vmax = 0;
  assert_int_equal(kl_robot_create(&s, &r, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "speed"));
  kl_robot_er10_spec(&s);
  s.home[1] = 3.0;
  assert_int_equal(kl_robot_create(&s, &r, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "home"));
  kl_robot_free(NULL);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_inertia_crba_rnea),   cmocka_unit_test(test_rnea_physics),
    cmocka_unit_test(test_effective_mass_impulse), cmocka_unit_test(test_effective_mass_rod),
    cmocka_unit_test(test_ik_default_path),     cmocka_unit_test(test_unreachable),
    cmocka_unit_test(test_mdh_matches_dh),
    cmocka_unit_test(test_dls_general),
    cmocka_unit_test(test_create_checks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
