/* engine/world_pair_test.c: the contact parameters of a body pair (docs/design.md 2.4) seen through
 * what the 3-D engine does with them, and a compound body's inertia from its shapes, against values
 * worked by hand. Two free spheres of different bodies collide head on without gravity: stiffness
 * K1 = 1e7 and K2 = 3e7 N/m blend harmonically,
 *   K = 2 K1 K2 / (K1 + K2) = 2 x 3e14 / 4e7 = 1.5e7 N/m,
 * restitutions 0.4 and 0.8 by their mean, cr = 0.6; the contact's mass is the reduced mass
 *   mu = m1 m2 / (m1 + m2) = 1 x 3 / 4 = 0.75 kg.
 * Then paper eq. (10) gives D = -2 ln(0.6) sqrt(K mu) / sqrt(pi^2 + ln^2 0.6), the separation speed is
 * exactly 0.6 of the approach speed, and the contact lasts pi / w, w^2 = K/mu - (D / 2 mu)^2. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "engine/world.h"
#include "kernels/kl_contact_kv.h"

/* Tolerances, about ten times the measured: restitution 4e-15 relative (measured 3.7e-16), momentum
 * 1e-14 absolute (measured 0), contact time 7e-15 relative (measured 6.7e-16: onset and end located by
 * the engine's root finders to rounding). */
static void test_pair_blend(void **state)
{
  (void)state;
  kl_world_model *m = kl_world_create();
  m->gravity[2] = 0;
  m->rule = KL_SEP_PENETRATION;
  const double mass[2] = {1.0, 3.0}, K[2] = {1e7, 3e7}, cr[2] = {0.4, 0.8};
  for (int i = 0; i < 2; ++i) {
    kl_body_def b;
    kl_shape_def s;
    kl_world_default_shape(&s);
    s.size[0] = 0.05;
    kl_world_default_body(&b);
    b.mass = mass[i], b.K = K[i], b.cr = cr[i];
    b.pos[0] = i ? 0.2 : 0.0;
    b.vel[0] = i ? -1.0 : 2.0;
    kl_world_add_shape(m, kl_world_add_body(m, &b), &s);
  }
  char msg[256];
  assert_int_equal(kl_world_compile(m, msg, sizeof msg), KELVIN_OK);
  kl_world_data *d = kl_world_data_create(m);
  assert_int_equal(kl_world_advance(m, d, 0.5, msg, sizeof msg), KELVIN_OK);
  assert_int_equal(d->nlog, 1);
  const double Kb = 1.5e7, crb = 0.6, mu = 0.75, l = -log(crb);
  const double D = 2 * l * sqrt(Kb * mu) / sqrt(M_PI * M_PI + l * l);
  const double w = sqrt(Kb / mu - pow(D / (2 * mu), 2));
  const double e = (d->vel[3] - d->vel[0]) / 3.0; /* approach speed 3 m/s */
  const double p = mass[0] * d->vel[0] + mass[1] * d->vel[3]; /* 2 - 3 = -1 */
  const double tc = d->log[0].t1 - d->log[0].t0;
  const double er = fabs(e - crb) / crb, ep = fabs(p + 1.0), et = fabs(tc * w / M_PI - 1.0);
  printf("# pair K %.4g / %.4g, cr %.2f / %.2f: restitution %.15f (%.2e off 0.6), momentum error %.1e, contact time "
         "%.15g s (%.2e off pi/w)\n",
         K[0], K[1], cr[0], cr[1], e, er, ep, tc, et);
  assert_true(er <= 4e-15);
  assert_true(ep <= 1e-14);
  assert_true(et <= 7e-15);
  kl_world_data_free(d);
  kl_world_free(m);
}

/* A body's inertia from its shapes at uniform density (docs/design.md: "computed from the shapes"):
 * a box of half extents (a, b, c) = (0.1, 0.05, 0.02) m at the centre and two spheres of r = 0.03 m at
 * (+-0.12, 0, 0), mass 2 kg (the centre of mass stays at the origin). Per unit density, worked here:
 *   box:    V = 8abc = 8e-4 m^3, I = V/3 (b^2 + c^2, a^2 + c^2, a^2 + b^2)
 *   sphere: V = 4/3 pi r^3, I = 2/5 V r^2 about its centre, plus V (|p|^2 - p_k^2) on axis k
 *   body:   I_k = m sum(I_k) / sum(V).
 * Tolerance 3e-15 relative (the same sums in another order; measured 2.9e-16). */
static void test_compound_inertia(void **state)
{
  (void)state;
  kl_world_model *m = kl_world_create();
  kl_body_def b;
  kl_world_default_body(&b);
  b.mass = 2.0;
  const int body = kl_world_add_body(m, &b);
  kl_shape_def s;
  kl_world_default_shape(&s);
  s.type = KL_SHAPE_BOX, s.size[0] = 0.1, s.size[1] = 0.05, s.size[2] = 0.02;
  kl_world_add_shape(m, body, &s);
  for (int i = 0; i < 2; ++i) {
    kl_world_default_shape(&s);
    s.type = KL_SHAPE_SPHERE, s.size[0] = 0.03, s.pos[0] = i ? -0.12 : 0.12;
    kl_world_add_shape(m, body, &s);
  }
  char msg[256];
  assert_int_equal(kl_world_compile(m, msg, sizeof msg), KELVIN_OK);
  const double a = 0.1, bb = 0.05, c = 0.02, r = 0.03, px = 0.12;
  const double Vb = 8 * a * bb * c, Vs = 4.0 / 3.0 * M_PI * r * r * r;
  const double Ib[3] = {Vb / 3 * (bb * bb + c * c), Vb / 3 * (a * a + c * c), Vb / 3 * (a * a + bb * bb)};
  const double Is = 0.4 * Vs * r * r;
  const double J[3] = {Ib[0] + 2 * Is, Ib[1] + 2 * (Is + Vs * px * px), Ib[2] + 2 * (Is + Vs * px * px)};
  double worst = 0;
  for (int k = 0; k < 3; ++k) {
    const double want = 2.0 * J[k] / (Vb + 2 * Vs), got = m->body_inertia[3 * body + k];
    const double e = fabs(got - want) / want;
    worst = fmax(worst, e);
    if (!(e <= 3e-15)) fail_msg("axis %d: inertia %.17g kg m^2, by hand %.17g", k, got, want);
  }
  printf("# compound body (box + 2 spheres): inertia vs by hand worst %.2e relative\n", worst);
  kl_world_free(m);
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_pair_blend), cmocka_unit_test(test_compound_inertia)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
