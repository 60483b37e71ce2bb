/* tests/ball_gen_test.c: the ball on a plane with the general law F = k d^n1 + c sgn(d')|d'|^m d^n2
 * (clamped at 0; kernels/kl_contact_gen.h) in the engine's exponential step (engine/ball.c): its
 * Hunt-Crossley and Kelvin-Voigt special cases against the engine's own models, and a law with m < 1,
 * n2 != n1 against an independent reference, GSL's rk8pd at tight tolerance, written from the equation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>

#include "engine/ball.h"
#include "engine/world.h"
#include "kernels/kl_impact.h"

static kl_ball_data *D;

/* the first contact of a drop from 1 m (and the flight after it, to 1 s past the impact) */
static const kl_ball_contact *first(const kl_ball_model *m)
{
  const double timp = sqrt(2.0 / m->g);
  kl_ball_reset(m, D, 1.0, 0.0);
  assert_int_equal(kl_ball_advance(m, D, timp + 1.0), KELVIN_OK);
  assert_true(D->ncontact >= 1);
  return &D->contact[0];
}

static double rel(double a, double b) { return fabs(a / b - 1.0); }

/* Hunt-Crossley is the general law with m = 1, n2 = n1, c = k chi: the same first contact as the hc
 * model (chi of its exact damping law at the impact speed) to the step tolerance. Both at tol 1e-10;
 * measured worst 3.0e-12 (the two take the same tangents but for the floors of kl_gen_lin_tangent, so
 * slightly different sub-steps); asserted 1e-9, ten times the tolerance. Broken: the general law's peak
 * force inside a sub-step not located (kl_xrb_gen_peak returning 0): 2.1e-4, the test failed. */
static void test_hc_case(void **state)
{
  (void)state;
  const double crs[] = {0.3, 0.7, 0.95};
  for (int i = 0; i < 3; ++i) {
    kl_ball_model h;
    kl_ball_default(&h);
    h.model = KL_MODEL_HC;
    h.n = 1.5;
    h.K = 1.0e10;
    h.cr = crs[i];
    h.law = KL_LAW_EXACT;
    h.tol = 1e-10;
    const kl_ball_contact ch = *first(&h);
    kl_ball_model g = h;
    g.model = KL_MODEL_GEN;
    g.gen.k = g.K;
    g.gen.n1 = g.n;
    g.gen.n2 = g.n;
    g.gen.m = 1.0;
    g.gen.c = g.K * kl_hc_chi(h.law, h.cr, ch.v_in);
    char msg[256];
    assert_int_equal(kl_ball_check(&g, msg, sizeof msg), KELVIN_OK);
    const kl_ball_contact cg = *first(&g);
    const double e = fmax(fmax(rel(cg.dmax, ch.dmax), rel(cg.fpeak, ch.fpeak)),
                          fmax(rel(cg.t1 - cg.t0, ch.t1 - ch.t0), rel(cg.v_out, ch.v_out)));
    printf("# general as HC, cr %g: worst relative difference (dmax, fpeak, tc, v_out) %.2e; sub-steps %d vs %d\n",
           h.cr, e, cg.nsub, ch.nsub);
    assert_true(e < 1e-9);
  }
}

/* Kelvin-Voigt is the general law with n1 = 1, m = 1, n2 = 0 (c = D), and with the clamp it is the kv
 * model's force separation rule (no tension: the contact force ends at K d + D d' = 0, then the ball flies
 * inside the surface until it leaves it or the force returns). The kv model is exact (closed form, paper
 * eq. 4); the general law takes the exponential step through the force's jump at contact (c v_in) and its
 * kink at F = 0. Maximum penetration, peak force and the next apex (height and time) within 1e-8 relative
 * (tol 1e-10; measured worst 1.4e-9, the apex at cr 0.2: the kink at F = 0 is stepped through under the
 * error control, not located; dmax and fpeak agree to 4e-16). Broken: the peak force not located inside a
 * sub-step: 1.1e-3, and n1 read from n2 (0): the test failed. (Without the d -> 0+ limit at the contact's
 * start, kl_gen_force_in, the error control alone resolves the jump, in 59 sub-steps instead of 41.) */
static void test_kv_case(void **state)
{
  (void)state;
  const double crs[] = {0.2, 0.6, 0.9};
  for (int i = 0; i < 3; ++i) {
    kl_ball_model v;
    kl_ball_default(&v);
    v.cr = crs[i];
    v.K = 1.0e8;
    v.rule = KL_SEP_FORCE;
    v.tol = 1e-10;
    const kl_ball_contact cv = *first(&v);
    assert_true(D->napex >= 1);
    const double apv = D->apex[0], atv = D->apex_t[0];
    kl_ball_model g = v;
    g.model = KL_MODEL_GEN;
    g.gen.k = g.K;
    g.gen.n1 = 1.0;
    g.gen.n2 = 0.0;
    g.gen.m = 1.0;
    g.gen.c = kl_kv_damping(v.cr, v.K, v.m);
    const kl_ball_contact cg = *first(&g);
    assert_true(D->napex >= 1);
    const double e = fmax(fmax(rel(cg.dmax, cv.dmax), rel(cg.fpeak, cv.fpeak)),
                          fmax(rel(D->apex[0], apv), rel(D->apex_t[0], atv)));
    printf("# dmax %.2e, fpeak %.2e, apex %.2e, apex time %.2e\n", rel(cg.dmax, cv.dmax), rel(cg.fpeak, cv.fpeak),
           rel(D->apex[0], apv), rel(D->apex_t[0], atv));
    printf("# general as KV (force rule), cr %g: worst relative difference (dmax, fpeak, apex, apex time) %.2e; "
           "%d sub-steps\n",
           v.cr, e, cg.nsub);
    assert_true(e < 1e-8);
  }
}

/* the reference: m x'' = m g - F(x, x'), F = max(0, k x^n1 + c sgn(x')|x'|^m x^n2) for x > 0, else 0,
 * written from the equation (not from kernels/) */
typedef struct law {
  double mass, g, k, c, n1, n2, m;
} law;

static double ref_force(const law *L, double x, double v)
{
  if (!(x > 0)) return 0.0;
  const double r = v == 0 ? 0.0 : copysign(pow(fabs(v), L->m), v);
  const double f = L->k * pow(x, L->n1) + L->c * r * pow(x, L->n2);
  return f > 0 ? f : 0.0;
}

static int rhs(double t, const double y[], double f[], void *p)
{
  (void)t;
  const law *L = p;
  f[0] = y[1];
  f[1] = L->g - ref_force(L, y[0], y[1]) / L->mass;
  return GSL_SUCCESS;
}

/* the state tau after impact (x = 0, v = vin) */
static void reference(const law *L, double vin, double tau, double *x, double *v)
{
  gsl_odeiv2_system sys = {rhs, NULL, 2, (void *)L};
  gsl_odeiv2_driver *drv = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-9, 1e-18, 1e-13);
  double t = 0, y[2] = {0, vin};
  assert_int_equal(gsl_odeiv2_driver_apply(drv, &t, tau, y), GSL_SUCCESS);
  gsl_odeiv2_driver_free(drv);
  *x = y[0];
  *v = y[1];
}

/* A law with m = 0.5 (dF/dd' unbounded at d' = 0, the maximum penetration), n2 = 1, n1 = 1.5, and one with
 * m = 1.5, n2 = 0.5: contact time (bisection on the sign of x), exit speed, maximum penetration (bisection on
 * the sign of x') and peak force (golden section on F(t) before the maximum penetration) of the reference
 * against the engine's first contact at tol 1e-10. Measured (m 0.5 / m 1.5): tc 1.6e-10 / 7.5e-11, exit
 * speed 3.3e-10 / 1.1e-9, dmax 9.2e-11 / 1.7e-10, fpeak 1.4e-10 / 2.5e-10; asserted 5e-9, the reference
 * itself good to ~1e-12. Broken: n1 read from n2 in engine/ball.c: errors 0.5 and more; the peak force not
 * located inside a sub-step: 8e-5; the test failed both times. */
static void test_reference(void **state)
{
  (void)state;
  const double ms[] = {0.5, 1.5}, n2s[] = {1.0, 0.5}, cs[] = {3e7, 1e5};
  for (int i = 0; i < 2; ++i) {
    kl_ball_model g;
    kl_ball_default(&g);
    g.model = KL_MODEL_GEN;
    g.K = 1.0e10;
    g.n = 1.5;
    g.gen.k = g.K;
    g.gen.n1 = g.n;
    g.gen.n2 = n2s[i];
    g.gen.m = ms[i];
    g.gen.c = cs[i];
    g.tol = 1e-10;
    char msg[256];
    assert_int_equal(kl_ball_check(&g, msg, sizeof msg), KELVIN_OK);
    const kl_ball_contact c = *first(&g);
    const law L = {g.m, g.g, g.K, g.gen.c, g.n, g.gen.n2, g.gen.m};
    const double vin = c.v_in, tc = c.t1 - c.t0;
    double lo = 0.5 * tc, hi = 2.0 * tc, x, v;
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      reference(&L, vin, mid, &x, &v);
      if (x > 0) lo = mid; else hi = mid;
    }
    const double tref = hi;
    reference(&L, vin, tref, &x, &v);
    const double vout = -v;
    lo = 0.0, hi = tref;
    for (int it = 0; it < 80; ++it) {
      const double mid = 0.5 * (lo + hi);
      reference(&L, vin, mid, &x, &v);
      if (v > 0) lo = mid; else hi = mid;
    }
    reference(&L, vin, lo, &x, &v);
    const double dref = x, tm = lo;
    const double gr = 0.5 * (sqrt(5.0) - 1.0);
    double a = 0.0, b = tm, p = b - gr * (b - a), q = a + gr * (b - a), fp, fq;
    reference(&L, vin, p, &x, &v);
    fp = ref_force(&L, x, v);
    reference(&L, vin, q, &x, &v);
    fq = ref_force(&L, x, v);
    for (int it = 0; it < 80; ++it) {
      if (fp > fq) {
        b = q, q = p, fq = fp;
        p = b - gr * (b - a);
        reference(&L, vin, p, &x, &v);
        fp = ref_force(&L, x, v);
      } else {
        a = p, p = q, fp = fq;
        q = a + gr * (b - a);
        reference(&L, vin, q, &x, &v);
        fq = ref_force(&L, x, v);
      }
    }
    const double fref = fmax(fp, fq);
    const double etc = rel(tc, tref), evo = rel(c.v_out, vout), ed = rel(c.dmax, dref), ef = rel(c.fpeak, fref);
    printf("# general m %g n2 %g: vs rk8pd: tc %.2e, exit speed %.2e, dmax %.2e, fpeak %.2e (%d sub-steps; "
           "restitution %.4f)\n",
           g.gen.m, g.gen.n2, etc, evo, ed, ef, c.nsub, vout / vin);
    assert_true(etc < 5e-9);
    assert_true(evo < 5e-9);
    assert_true(ed < 5e-9);
    assert_true(ef < 5e-9);
  }
}

/* The 3-D engine (engine/integrate.c) with the general law per body pair: two free spheres (1 kg and 3 kg,
 * radius 0.05 m) meet head on at 3 m/s without gravity, so the contact is the 1-D impact of the reduced mass
 * 0.75 kg, mu x'' = -F(x, x') from x = 0, x' = 3 m/s, with the pair's law (m 0.5, n2 1, n1 1.5, k 1e9,
 * c 2e6); the model's own law (every other pair) is ten times stiffer, so a pair law not taken shows. Against
 * the rk8pd reference: contact time, separation speed, maximum penetration, peak force. At hc_tol 1e-10
 * measured worst 6.6e-10 (separation speed); asserted 5e-9. Broken: the pair's law not looked up (pair_gen in integrate.c
 * returning the model's): errors 0.3 and more, the test failed. */
static void test_world_pair(void **state)
{
  (void)state;
  kl_world_model *m = kl_world_create();
  m->gravity[2] = 0;
  m->model = KL_MODEL_GEN;
  m->hc_tol = 1e-10;
  const kl_gen_law L = {1e9, 2e6, 1.5, 1.0, 0.5};
  m->gen = (kl_gen_law){1e10, 2e6, 1.5, 1.0, 0.5};
  const double mass[2] = {1.0, 3.0};
  int ids[2];
  for (int i = 0; i < 2; ++i) {
    kl_body_def b;
    kl_shape_def sh;
    kl_world_default_shape(&sh);
    sh.size[0] = 0.05;
    kl_world_default_body(&b);
    b.mass = mass[i];
    b.pos[0] = i ? 0.2 : 0.0;
    b.vel[0] = i ? -1.0 : 2.0;
    ids[i] = kl_world_add_body(m, &b);
    kl_world_add_shape(m, ids[i], &sh);
  }
  const int p = kl_world_add_pair(m, ids[0], ids[1], 1e7, 1.0, 0.0, 0.0);
  assert_int_equal(kl_world_pair_gen(m, p, L), 0);
  char msg[256];
  assert_int_equal(kl_world_compile(m, msg, sizeof msg), KELVIN_OK);
  kl_world_data *d = kl_world_data_create(m);
  assert_int_equal(kl_world_advance(m, d, 0.1, msg, sizeof msg), KELVIN_OK);
  assert_int_equal(d->nlog, 1);
  const kl_contact_event *e = &d->log[0];
  const law R = {0.75, 0.0, L.k, L.c, L.n1, L.n2, L.m};
  const double vin = 3.0, tc = e->t1 - e->t0;
  double lo = 0.5 * tc, hi = 2.0 * tc, x, v;
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    reference(&R, vin, mid, &x, &v);
    if (x > 0) lo = mid; else hi = mid;
  }
  const double tref = hi;
  reference(&R, vin, tref, &x, &v);
  const double vout = -v;
  lo = 0.0, hi = tref;
  for (int it = 0; it < 80; ++it) {
    const double mid = 0.5 * (lo + hi);
    reference(&R, vin, mid, &x, &v);
    if (v > 0) lo = mid; else hi = mid;
  }
  reference(&R, vin, lo, &x, &v);
  const double dref = x;
  /* the peak force: golden section before the maximum penetration */
  const double gr = 0.5 * (sqrt(5.0) - 1.0);
  double a = 0.0, b = lo, pp = b - gr * (b - a), q = a + gr * (b - a), fp, fq;
  reference(&R, vin, pp, &x, &v);
  fp = ref_force(&R, x, v);
  reference(&R, vin, q, &x, &v);
  fq = ref_force(&R, x, v);
  for (int it = 0; it < 80; ++it) {
    if (fp > fq) {
      b = q, q = pp, fq = fp;
      pp = b - gr * (b - a);
      reference(&R, vin, pp, &x, &v);
      fp = ref_force(&R, x, v);
    } else {
      a = pp, pp = q, fp = fq;
      q = a + gr * (b - a);
      reference(&R, vin, q, &x, &v);
      fq = ref_force(&R, x, v);
    }
  }
  const double fref = fmax(fp, fq);
  const double etc = rel(tc, tref), evo = rel(e->v_out, vout), ed = rel(e->dmax, dref), ef = rel(e->fpeak, fref);
  printf("# 3-D pair, general law m 0.5: vs rk8pd: tc %.2e, separation speed %.2e, dmax %.2e, fpeak %.2e "
         "(restitution %.4f)\n",
         etc, evo, ed, ef, vout / vin);
  assert_true(etc < 5e-9);
  assert_true(evo < 5e-9);
  assert_true(ed < 5e-9);
  assert_true(ef < 5e-9);
  kl_world_data_free(d);
  kl_world_free(m);
}

/* bad constants: one message naming the field */
static void test_check(void **state)
{
  (void)state;
  kl_ball_model g;
  kl_ball_default(&g);
  g.model = KL_MODEL_GEN;
  g.n = 1.5;
  g.gen.c = 1e3;
  g.gen.n2 = 1.0;
  g.gen.m = 1.0;
  char msg[256];
  assert_int_equal(kl_ball_check(&g, msg, sizeof msg), KELVIN_OK);
  g.gen.m = 0.0;
  assert_int_equal(kl_ball_check(&g, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "m: the rate exponent"));
  g.gen.m = 1.0;
  g.gen.c = -1.0;
  assert_int_equal(kl_ball_check(&g, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "c: the damping"));
  g.gen.c = 1.0;
  g.gen.n2 = -0.5;
  assert_int_equal(kl_ball_check(&g, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "n2: "));
  g.gen.n2 = 0.0;
  g.n = 0.0;
  assert_int_equal(kl_ball_check(&g, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "n1: "));
}

int main(void)
{
  D = malloc(sizeof *D);
  if (!D) return 1;
  gsl_set_error_handler_off();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_hc_case),
    cmocka_unit_test(test_kv_case),
    cmocka_unit_test(test_reference),
    cmocka_unit_test(test_world_pair),
    cmocka_unit_test(test_check),
  };
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  free(D);
  return rc;
}
