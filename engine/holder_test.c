/* engine/holder_test.c: the 3-D engine's holder and disc (engine/world.h) against exact results: the
 * anchor trajectory reproduces uniformly accelerated motion and uniform rotation; the 6-DoF holder's
 * translational and rotational oscillations along the axes of a turned anchor frame; the disc's depth
 * against a plane (exact support point) and a meshed plane (libccd MPR) for tilted axes, against the
 * formula; a disc pressed and dragged over a meshed plane keeps one contact and the series-spring force. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/world.h"
#include "kernels/kl_impact.h"

#define PI 3.14159265358979323846

/* quaternion of a rotation by angle about the unit axis e */
static void axis_angle(const double e[3], double angle, double q[4])
{
  q[0] = cos(0.5 * angle);
  for (int i = 0; i < 3; ++i) q[i + 1] = sin(0.5 * angle) * e[i];
}

/* an n x n grid over [-1, 1]^2 in the plane z = 0, normals +z */
static kl_mesh *grid(int n)
{
  const int nv = (n + 1) * (n + 1);
  double *v = malloc((size_t)nv * 3 * sizeof *v);
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) {
      double *p = v + 3 * (j * (n + 1) + i);
      p[0] = -1.0 + 2.0 * i / n;
      p[1] = -1.0 + 2.0 * j / n;
      p[2] = 0;
    }
  kl_mesh *m = NULL;
  char msg[256];
  assert_int_equal(kl_mesh_from_grid(v, n, n, &m, msg, sizeof msg), KELVIN_OK);
  free(v);
  return m;
}

/* Knots at uneven times on x(t) = x0 + v0 t + a t^2 / 2 and a turn at constant rate w about e: between
 * the knots the anchor's position, velocity and acceleration are the parabola's (the three-point knot
 * velocities and the cubic Hermite curve are exact for it) and its orientation and angular velocity
 * the uniform turn's, to rounding (1e-12); outside it rests at the end poses. With straight lines
 * between the knots it moves on the chords at their constant velocities. */
static void test_anchor_trajectory(void **state)
{
  (void)state;
  const double T[5] = {0.0, 0.1, 0.25, 0.3, 0.6}, x0[3] = {0.1, -0.2, 0.3}, v0[3] = {0.5, 0.02, -0.1},
               a[3] = {-0.3, 0.7, 0.05}, e[3] = {0.6, 0.0, 0.8}, w = 1.7;
  double P[15], Q[20];
  for (int k = 0; k < 5; ++k) {
    for (int i = 0; i < 3; ++i) P[3 * k + i] = x0[i] + v0[i] * T[k] + 0.5 * a[i] * T[k] * T[k];
    axis_angle(e, w * T[k], Q + 4 * k);
  }
  const kl_anchor_traj tr = {5, T, P, Q, 0};
  kl_world_model *m = kl_world_create();
  kl_body_def b;
  kl_world_default_body(&b);
  b.holder = 1;
  b.traj = &tr;
  b.holder_K[2] = 1.0;
  const int body = kl_world_add_body(m, &b);
  kl_shape_def s;
  kl_world_default_shape(&s);
  kl_world_add_shape(m, body, &s);
  char msg[256];
  assert_int_equal(kl_world_compile(m, msg, sizeof msg), KELVIN_OK);
  double worst = 0;
  for (int j = 0; j <= 60; ++j) {
    const double t = 0.6 * j / 60.0 * 0.9999;
    double p[3], v[3], acc[3], q[4], av[3], qe[4];
    kl_world_anchor(m, body, t, p, v, acc, q, av);
    axis_angle(e, w * t, qe);
    for (int i = 0; i < 3; ++i) {
      worst = fmax(worst, fabs(p[i] - (x0[i] + v0[i] * t + 0.5 * a[i] * t * t)));
      worst = fmax(worst, fabs(v[i] - (v0[i] + a[i] * t)));
      worst = fmax(worst, fabs(acc[i] - a[i]));
      worst = fmax(worst, fabs(av[i] - w * e[i]));
    }
    for (int i = 0; i < 4; ++i) worst = fmax(worst, fabs(q[i] - qe[i]));
  }
  printf("# anchor trajectory: worst error %.2e\n", worst);
  assert_true(worst < 1e-12);
  double p[3], v[3];
  kl_world_anchor(m, body, 1.0, p, v, NULL, NULL, NULL); /* after the last knot: rests there */
  for (int i = 0; i < 3; ++i) {
    assert_true(fabs(p[i] - P[12 + i]) < 1e-15);
    assert_true(v[i] == 0.0);
  }
  kl_world_free(m);
  /* straight lines between the knots: the chord at its constant velocity, no acceleration */
  const kl_anchor_traj lt = {5, T, P, Q, 1};
  m = kl_world_create();
  b.traj = &lt;
  kl_world_add_body(m, &b);
  kl_world_add_shape(m, 0, &s);
  assert_int_equal(kl_world_compile(m, msg, sizeof msg), KELVIN_OK);
  double lw = 0;
  for (int j = 0; j < 60; ++j) {
    const double t = 0.6 * j / 60.0 + 0.001;
    int k = 1;
    while (T[k] <= t) ++k;
    double acc[3];
    kl_world_anchor(m, 0, t, p, v, acc, NULL, NULL);
    for (int i = 0; i < 3; ++i) {
      const double sl = (P[3 * k + i] - P[3 * k - 3 + i]) / (T[k] - T[k - 1]);
      lw = fmax(lw, fabs(p[i] - (P[3 * k - 3 + i] + sl * (t - T[k - 1]))));
      lw = fmax(lw, fabs(v[i] - sl) + fabs(acc[i]));
    }
  }
  printf("# anchor on straight lines: worst error %.2e\n", lw);
  assert_true(lw < 1e-12);
  kl_world_free(m);
}

/* a free held body (no gravity, no contact) at rest anchor, the anchor frame turned 30 degrees about z */
static kl_world_model *held(const double K[3], const double Kr[3], const double I[3], double mass)
{
  kl_world_model *m = kl_world_create();
  m->gravity[2] = 0;
  kl_body_def b;
  kl_world_default_body(&b);
  b.mass = mass;
  memcpy(b.inertia, I, sizeof b.inertia);
  b.holder = 1;
  memcpy(b.holder_K, K, sizeof b.holder_K);
  memcpy(b.holder_Kr, Kr, sizeof b.holder_Kr);
  const double ez[3] = {0, 0, 1};
  axis_angle(ez, PI / 6, b.anchor_quat);
  memcpy(b.quat, b.anchor_quat, sizeof b.quat);
  const int body = kl_world_add_body(m, &b);
  kl_shape_def s;
  kl_world_default_shape(&s);
  s.size[0] = 0.01;
  kl_world_add_shape(m, body, &s);
  char msg[256];
  assert_int_equal(kl_world_compile(m, msg, sizeof msg), KELVIN_OK);
  return m;
}

/* Displaced along the anchor frame's x axis, the body oscillates along that axis alone at
 * w = sqrt(K_x / m), however stiff the other axes: over three periods the position stays on the axis
 * (1e-12) and follows e0 cos(w t) (the explicit holder at 1/40 of the shortest period, its force to
 * second order in the step: measured 9.7e-5 of e0; bound 1e-3) */
static void test_holder_translation(void **state)
{
  (void)state;
  const double K[3] = {800, 3200, 5000}, Kr[3] = {0, 0, 0}, I[3] = {1, 1, 1}, mass = 2.0, e0 = 1e-3;
  kl_world_model *m = held(K, Kr, I, mass);
  kl_world_data *d = kl_world_data_create(m);
  const double X[3] = {cos(PI / 6), sin(PI / 6), 0};
  for (int i = 0; i < 3; ++i) d->xpos[3 + i] = 0; /* (body 0 is the only one) */
  for (int i = 0; i < 3; ++i) d->xpos[i] = e0 * X[i];
  const double w = sqrt(K[0] / mass);
  double err = 0, off = 0;
  char msg[256];
  for (int j = 1; j <= 300; ++j) {
    const double t = 3 * 2 * PI / w * j / 300;
    assert_int_equal(kl_world_advance(m, d, t, msg, sizeof msg), KELVIN_OK);
    const double along = d->xpos[0] * X[0] + d->xpos[1] * X[1] + d->xpos[2] * X[2];
    err = fmax(err, fabs(along - e0 * cos(w * t)) / e0);
    for (int i = 0; i < 3; ++i) off = fmax(off, fabs(d->xpos[i] - along * X[i]) / e0);
  }
  printf("# holder translation: error %.2e of e0, off the axis %.2e, %ld sub-steps\n", err, off, d->nsub);
  assert_true(off < 1e-12);
  assert_true(err < 1e-3);
  kl_world_data_free(d);
  kl_world_free(m);
}

/* the angle of the body's turn from q0 about the unit axis Y (world) */
static double turn_about(const double *x, const double q0[4], const double Y[3])
{
  double rel[4]; /* the world-frame turn x q0^-1; the angle about Y is 2 (its vector part . Y) */
  rel[0] = x[0] * q0[0] + x[1] * q0[1] + x[2] * q0[2] + x[3] * q0[3];
  rel[1] = -x[0] * q0[1] + x[1] * q0[0] - x[2] * q0[3] + x[3] * q0[2];
  rel[2] = -x[0] * q0[2] + x[1] * q0[3] + x[2] * q0[0] - x[3] * q0[1];
  rel[3] = -x[0] * q0[3] - x[1] * q0[2] + x[2] * q0[1] + x[3] * q0[0];
  if (rel[0] < 0)
    for (int i = 0; i < 4; ++i) rel[i] = -rel[i];
  return 2 * (rel[1] * Y[0] + rel[2] * Y[1] + rel[3] * Y[2]);
}

/* Turned by 0.01 rad about the anchor frame's y axis, the body rocks about that axis alone at
 * w = sqrt(K_ry / I_y). The rotational holder is backward Euler: at w h = 2 pi / 2000 per step over the
 * first period the angle follows theta0 cos(w t) to within the scheme's damping, (w h)^2 / 2 per step,
 * 1.0e-2 of theta0 over the period (bound 2e-2); at w h = 1.4 per step, where an explicit spring would
 * blow up, the oscillation's amplitude only shrinks. */
static void test_holder_rotation(void **state)
{
  (void)state;
  const double K[3] = {0, 0, 0}, Kr[3] = {200, 600, 100}, I[3] = {0.02, 0.03, 0.01}, th0 = 0.01;
  kl_world_model *m = held(K, Kr, I, 1.0);
  kl_world_data *d = kl_world_data_create(m);
  const double Y[3] = {-sin(PI / 6), cos(PI / 6), 0};
  double q[4];
  axis_angle(Y, th0, q); /* world-frame turn about the anchor's y axis */
  const double q0[4] = {d->xquat[0], d->xquat[1], d->xquat[2], d->xquat[3]};
  d->xquat[0] = q[0] * q0[0] - q[1] * q0[1] - q[2] * q0[2] - q[3] * q0[3];
  d->xquat[1] = q[0] * q0[1] + q[1] * q0[0] + q[2] * q0[3] - q[3] * q0[2];
  d->xquat[2] = q[0] * q0[2] - q[1] * q0[3] + q[2] * q0[0] + q[3] * q0[1];
  d->xquat[3] = q[0] * q0[3] + q[1] * q0[2] - q[2] * q0[1] + q[3] * q0[0];
  const double w = sqrt(Kr[1] / I[1]), Tp = 2 * PI / w;
  char msg[256];
  double err = 0, off = 0;
  for (int j = 1; j <= 2000; ++j) {
    const double t = Tp * j / 2000;
    assert_int_equal(kl_world_advance(m, d, t, msg, sizeof msg), KELVIN_OK);
    err = fmax(err, fabs(turn_about(d->xquat, q0, Y) - th0 * cos(w * t)) / th0);
    const double X[3] = {cos(PI / 6), sin(PI / 6), 0}, Z[3] = {0, 0, 1};
    off = fmax(off, fmax(fabs(turn_about(d->xquat, q0, X)), fabs(turn_about(d->xquat, q0, Z))) / th0);
  }
  double amax = 0, prev = INFINITY;
  int grows = 0;
  const double h = 1.4 / w;
  for (int j = 1; j <= (int)(10 * Tp / h); ++j) {
    assert_int_equal(kl_world_advance(m, d, Tp + h * j, msg, sizeof msg), KELVIN_OK);
    const double ang = turn_about(d->xquat, q0, Y);
    const double wy = d->angvel[0] * Y[0] + d->angvel[1] * Y[1] + d->angvel[2] * Y[2];
    const double amp = sqrt(ang * ang + wy * wy / (w * w)); /* of the oscillator through this state */
    grows += amp > prev * (1 + 1e-12);
    prev = amp;
    amax = fmax(amax, amp);
  }
  printf("# holder rotation: first period error %.2e of theta0 (off-axis turn %.1e); coarse steps amplitude <= %.3f of "
         "theta0, %d growths, %ld sub-steps\n",
         err, off, amax / th0, grows, d->nsub);
  assert_true(err < 2e-2);
  assert_true(off < 1e-9);
  assert_true(amax < th0 && grows == 0);
  kl_world_data_free(d);
  kl_world_free(m);
}

/* the disc world: ground (analytic plane, or mesh), a disc of radius R and half width hw with its axis
 * (0, cos psi, sin psi) after yaw about z, centre at height H over (x, y); KV contact K, mu */
static kl_world_model *disc_world(const kl_mesh *mesh, double psi, double yaw, double x, double y, double H, double Kh,
                                  double vx, double mu)
{
  kl_world_model *m = kl_world_create();
  m->gravity[2] = 0;
  m->rule = KL_SEP_FORCE;
  kl_body_def b;
  kl_world_default_body(&b);
  b.type = KL_BODY_STATIC;
  b.K = 1e6, b.cr = 0.5, b.mu = mu;
  const int g = kl_world_add_body(m, &b);
  kl_shape_def s;
  kl_world_default_shape(&s);
  s.type = mesh ? KL_SHAPE_MESH : KL_SHAPE_PLANE;
  s.mesh = mesh;
  kl_world_add_shape(m, g, &s);
  kl_world_default_body(&b);
  b.mass = 2.0, b.K = 1e6, b.cr = 0.5, b.mu = mu;
  b.pos[0] = x, b.pos[1] = y, b.pos[2] = H;
  const double ez[3] = {0, 0, 1};
  axis_angle(ez, yaw, b.quat);
  if (Kh > 0) {
    b.holder = 1;
    b.anchor[0] = x, b.anchor[1] = y, b.anchor[2] = H;
    b.anchor_vel[0] = vx;
    b.holder_K[0] = b.holder_K[1] = 1e5, b.holder_K[2] = Kh;
    b.holder_D[0] = b.holder_D[1] = 900, b.holder_D[2] = 2 * 0.7 * sqrt(Kh * 2.0);
    memcpy(b.anchor_quat, b.quat, sizeof b.quat);
    b.holder_Kr[0] = b.holder_Kr[1] = b.holder_Kr[2] = 1e3;
    b.holder_Dr[0] = b.holder_Dr[1] = b.holder_Dr[2] = 5;
    b.inertia[0] = b.inertia[1] = b.inertia[2] = 0.01;
  }
  const int i = kl_world_add_body(m, &b);
  kl_world_default_shape(&s);
  s.type = KL_SHAPE_DISC;
  s.size[0] = 0.1, s.size[1] = 0.02;
  /* local z onto (0, cos psi, sin psi): a turn about x by -(pi/2 - psi) */
  const double ex[3] = {1, 0, 0};
  axis_angle(ex, -(PI / 2 - psi), s.quat);
  kl_world_add_shape(m, i, &s);
  char msg[256];
  assert_int_equal(kl_world_compile(m, msg, sizeof msg), KELVIN_OK);
  return m;
}

/* A disc whose axis is tilted by psi from the ground reaches R cos psi + hw sin psi below its centre:
 * the depth at centre height H is that minus H, on the analytic plane (support point, exact) and on a
 * meshed plane (libccd MPR against the triangles the BVH finds), with the ground's normal, for yaws and
 * positions over triangle edges and vertices, to 1e-10 m (MPR's tolerance is 1e-12; measured below
 * 1e-13): on the plane for tilts from 0 to 90 degrees (face down), on the mesh for rim contacts (tilts
 * up to 60 degrees; a disc lying on its face on a mesh can get a second contact from a triangle's edge
 * near its rim, whose MPR depth is not the surface's). */
static void test_disc_depth(void **state)
{
  (void)state;
  kl_mesh *mesh = grid(10);
  const double R = 0.1, hw = 0.02;
  const double tilts[] = {0.0, 5.0, 30.0, 60.0, 89.0, 90.0}, yaws[] = {0.0, 0.3, 1.1};
  double worst = 0;
  for (size_t it = 0; it < sizeof tilts / sizeof tilts[0]; ++it)
    for (size_t iy = 0; iy < sizeof yaws / sizeof yaws[0]; ++iy)
      for (int ip = 0; ip < 3; ++ip) {
        const double psi = tilts[it] * PI / 180, x = ip == 0 ? 0.0 : ip == 1 ? 0.2 : 0.137, y = ip == 2 ? -0.29 : 0.0;
        const double want = 1e-4;
        const double H = R * cos(psi) + hw * sin(psi) - want;
        for (int surf = 0; surf < (tilts[it] <= 60.0 ? 2 : 1); ++surf) {
          kl_world_model *m = disc_world(surf ? mesh : NULL, psi, yaws[iy], x, y, H, 0, 0, 0);
          kl_world_data *d = kl_world_data_create(m);
          double depth = -1, n[3], pos[3];
          const int nfound = kl_world_probe(m, d, 1, 1e-3, &depth, n, pos);
          if (nfound < 1) printf("# tilt %g yaw %g pos %d %s: no contact feature\n", tilts[it], yaws[iy], ip, surf ? "mesh" : "plane");
          assert_true(nfound >= 1);
          worst = fmax(worst, fabs(depth - want));
          if (fabs(depth - want) > 1e-10)
            printf("# tilt %g yaw %g pos %d %s: depth %.12g want %.12g, n %g %g %g\n", tilts[it], yaws[iy], ip,
                   surf ? "mesh" : "plane", depth, want, n[0], n[1], n[2]);
          assert_true(fabs(n[2] - 1) < 1e-9);
          kl_world_data_free(d);
          kl_world_free(m);
        }
      }
  printf("# disc depth: worst error %.2e m\n", worst);
  assert_true(worst < 1e-10);
  kl_mesh_free(mesh);
}

/* A disc (axis level) pressed by its holder into a meshed plane and dragged across the triangles: one
 * contact throughout (a clustered line contact, not one per triangle) and the force of the two springs
 * in series, F = K_h u / (1 + K_h / K_c) with u the holder's command below touching, at rest and while
 * sliding, to 2e-6 relative, on the mesh and on the analytic plane alike: dragged along its rolling
 * direction with friction 0.3 (the friction torque turns it about its own axis: no normal force), and
 * dragged at a yaw of 0.2 rad without friction (a friction torque would tilt its axis then). */
static void test_disc_press_drag(void **state)
{
  (void)state;
  kl_mesh *mesh = grid(16);
  const double R = 0.1, Kh = 2e4, Kc = 1e6, u = 2e-3;
  const double want = Kh * u / (1 + Kh / Kc);
  for (int c = 0; c < 4; ++c) {
    const int surf = c & 1, yawed = c >> 1;
    kl_world_model *m = disc_world(surf ? mesh : NULL, 0.0, yawed ? 0.2 : 0.0, -0.4, 0.05, R - u, Kh, 0.05, yawed ? 0.0 : 0.3);
    kl_world_data *d = kl_world_data_create(m);
    char msg[256];
    double worst = 0;
    int nmax = 0;
    for (int j = 1; j <= 160; ++j) {
      assert_int_equal(kl_world_advance(m, d, 0.1 * j, msg, sizeof msg), KELVIN_OK);
      nmax = d->ncon > nmax ? d->ncon : nmax;
      double f[3];
      kl_world_contact_force(m, d, 1, f);
      if (j > 20) worst = fmax(worst, fabs(f[2] / want - 1)); /* after the start's transient (1 s) */
    }
    printf("# disc press and drag on the %s (%s): series springs %.9g N, worst %.2e, at most %d contacts, %ld sub-steps\n",
           surf ? "mesh" : "plane", yawed ? "yaw 0.2, no friction" : "friction 0.3", want, worst, nmax, d->nsub);
    assert_int_equal(nmax, 1);
    assert_true(worst < 2e-6); /* measured 1.5e-10 on the plane, 1.4e-8 on the mesh */
    kl_world_data_free(d);
    kl_world_free(m);
  }
  kl_mesh_free(mesh);
}

/* Momentum balance through a cut step: a held ball pressed on a floor by its holder, dragged by the
 * anchor (constant velocity, frame fixed) into a wall of the same mesh. The wall's onset comes while the
 * floor contact is active (no conservative advancement for that pair), so a step is cut there and
 * taken again. Over the run the ball's momentum change must equal gravity's impulse plus what the
 * engine recorded of the holder and the contacts, m (v1 - v0) = m g T + hold_imp + con_imp: the step
 * moves the body by exactly those impulses, so any record of a step other than the one taken (its
 * length, its state) shows here. Measured 1.3e-14 of the impulse scale (rounding over 1 435 sub-steps);
 * bound 1e-13. */
static void test_momentum_through_cut(void **state)
{
  (void)state;
  const double L = 0.05, R = 0.01, xw = 0.0, mass = 2.0, v = 0.05;
  const double V[] = {-L, -L, 0, L, -L, 0, L, L, 0, -L, L, 0, /* floor z = 0 */
                      xw, -L, 0, xw, L, 0, xw, L, L, xw, -L, L}; /* wall x = xw, facing -x */
  const int T[] = {0, 1, 2, 0, 2, 3, 4, 6, 5, 4, 7, 6};
  kl_mesh *mesh = NULL;
  char msg[256];
  assert_int_equal(kl_mesh_from_arrays(V, 8, T, 4, &mesh, msg, sizeof msg), KELVIN_OK);
  kl_world_model *m = kl_world_create();
  kl_body_def b;
  kl_shape_def s;
  kl_world_default_body(&b);
  b.type = KL_BODY_STATIC;
  b.K = 1e7, b.cr = 0.5, b.mu = 0.3;
  const int part = kl_world_add_body(m, &b);
  kl_world_default_shape(&s);
  s.type = KL_SHAPE_MESH;
  s.mesh = mesh;
  kl_world_add_shape(m, part, &s);
  kl_world_default_body(&b);
  b.mass = mass;
  b.K = 1e7, b.cr = 0.5, b.mu = 0.3;
  const double x0 = xw - R - 2e-3;
  b.pos[0] = x0, b.pos[2] = R - 1e-7;
  b.vel[0] = v;
  b.holder = 1;
  b.holder_K[0] = b.holder_K[1] = 2000, b.holder_K[2] = 5000;
  b.holder_D[0] = b.holder_D[1] = b.holder_D[2] = 20;
  b.anchor[0] = x0, b.anchor[2] = R - 1e-3; /* pressing the ball down with about 5 N */
  b.anchor_vel[0] = v;
  const int ball = kl_world_add_body(m, &b);
  kl_world_default_shape(&s);
  s.size[0] = R;
  kl_world_add_shape(m, ball, &s);
  assert_int_equal(kl_world_compile(m, msg, sizeof msg), KELVIN_OK);
  kl_world_data *d = kl_world_data_create(m);
  double v0[3];
  memcpy(v0, d->vel + 3 * ball, sizeof v0);
  const double tend = 0.2;
  for (int j = 1; j <= 40; ++j) assert_int_equal(kl_world_advance(m, d, tend * j / 40, msg, sizeof msg), KELVIN_OK);
  double err = 0, scale = 0;
  for (int a = 0; a < 3; ++a) {
    const double lhs = mass * (d->vel[3 * ball + a] - v0[a]);
    const double rhs = mass * m->gravity[a] * tend + d->hold_imp[3 * ball + a] + d->con_imp[3 * ball + a];
    err = fmax(err, fabs(lhs - rhs));
    scale = fmax(scale, fabs(d->hold_imp[3 * ball + a]) + fabs(d->con_imp[3 * ball + a]));
  }
  printf("# momentum through %ld cut steps (%ld sub-steps): error %.2e of %.3g N s; wall reached: x = %.6f\n",
         d->ncut, d->nsub, err / scale, scale, d->xpos[3 * ball]);
  assert_true(d->ncut > 0);                 /* the scene does cut a step */
  assert_true(d->xpos[3 * ball] > xw - R - 1e-4); /* against the wall */
  assert_true(err < 1e-13 * scale);
  kl_world_data_free(d);
  kl_world_free(m);
  kl_mesh_free(mesh);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_anchor_trajectory), cmocka_unit_test(test_holder_translation),
    cmocka_unit_test(test_holder_rotation),   cmocka_unit_test(test_disc_depth),
    cmocka_unit_test(test_disc_press_drag),     cmocka_unit_test(test_momentum_through_cut),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
