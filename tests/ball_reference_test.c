/* tests/ball_reference_test.c: the engine's contact phase with gravity against an independent
 * reference, GSL's adaptive Runge-Kutta-Prince-Dormand (8,9) at tight tolerance. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>

#include "engine/ball.h"
#include "kernels/kl_impact.h"

typedef struct ref {
  const kl_ball_model *m;
  double damp;
} ref;

/* m x'' = m g - F(x, x'), x the penetration; F = 0 out of contact (x <= 0) */
static int rhs(double t, const double y[], double f[], void *p)
{
  (void)t;
  const ref *r = p;
  const kl_ball_model *m = r->m;
  const double x = y[0], v = y[1];
  double F = 0;
  if (x > 0) F = (m->model == KL_MODEL_KV) ? m->K * x + r->damp * v : m->K * pow(x, m->n) * (1 + r->damp * v);
  f[0] = v;
  f[1] = m->g - F / m->m;
  return GSL_SUCCESS;
}

/* reference state at time tau after impact (x = 0, v = vin) */
static void reference(const kl_ball_model *m, double damp, double vin, double tau, double *x, double *v)
{
  ref r = {m, damp};
  gsl_odeiv2_system sys = {rhs, NULL, 2, &r};
  /* rk8pd, |err| <= 1e-17 m + 1e-13 rel: four orders below the 1e-9 being tested */
  gsl_odeiv2_driver *drv = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-9, 1e-17, 1e-13);
  double t = 0, y[2] = {0, vin};
  assert_int_equal(gsl_odeiv2_driver_apply(drv, &t, tau, y), GSL_SUCCESS);
  gsl_odeiv2_driver_free(drv);
  *x = y[0];
  *v = y[1];
}

static kl_ball_data *D;

/* Kelvin-Voigt with gravity: penetration, rate and force along the first contact within 1e-9 of the
 * reference, relative to the contact's own scales (max penetration, impact speed, peak force), since
 * each quantity passes through zero. */
static void test_kv_contact(void **state)
{
  (void)state;
  const double crs[] = {0.05, 0.3, 0.8, 1.0};
  for (int i = 0; i < 4; ++i) {
    kl_ball_model m;
    kl_ball_default(&m);
    m.cr = crs[i];
    const double timp = sqrt(2.0 / m.g), vin = sqrt(2.0 * m.g);
    const kl_impact_in in = {m.m, m.K, 1, m.cr, vin, m.m * m.g, KL_MODEL_KV, 0, KL_SEP_PENETRATION};
    const kl_impact_out o = kl_impact(in);
    double worst = 0;
    for (int k = 1; k <= 20; ++k) {
      const double tau = o.tc * k / 21.0;
      kl_ball_reset(&m, D, 1.0, 0.0);
      assert_int_equal(kl_ball_advance(&m, D, timp + tau), KELVIN_OK);
      double x, v;
      reference(&m, o.damp, vin, (timp + tau) - timp, &x, &v);
      const double ex = fabs(-D->z - x) / o.dmax, ev = fabs(-D->vz - v) / vin;
      const double ef = fabs(kl_ball_force(&m, D) - (m.K * x + o.damp * v)) / o.fpeak;
      worst = fmax(worst, fmax(ex, fmax(ev, ef)));
    }
    printf("# KV cr=%g: worst relative error vs rk8pd %.2e\n", m.cr, worst);
    assert_true(worst < 4e-12); /* measured worst 3.7e-13 (the rk8pd reference at 1e-13 over the contact) */
  }
}

/* Hunt-Crossley with gravity: the engine's linearised sub-steps (step doubling at tol, with local
 * extrapolation) against the reference at the end of contact: exit speed and contact time. At
 * tol = 1e-10 over ~3e3 sub-steps we measure ~1e-10; we assert 1e-8, which still catches an
 * extrapolation or step-control regression (without extrapolation the error was 3e-8). */
static void test_hc_contact(void **state)
{
  (void)state;
  const int laws[] = {KL_LAW_HUNT_CROSSLEY, KL_LAW_FLORES, KL_LAW_EXACT};
  for (int i = 0; i < 3; ++i) {
    kl_ball_model m;
    kl_ball_default(&m);
    m.model = KL_MODEL_HC;
    m.n = 1.5;
    m.K = 1.0e10;
    m.cr = 0.7;
    m.law = laws[i];
    m.tol = 1e-10;
    const double timp = sqrt(2.0 / m.g), vin = sqrt(2.0 * m.g);
    kl_ball_reset(&m, D, 1.0, 0.0);
    assert_int_equal(kl_ball_advance(&m, D, timp + 0.01), KELVIN_OK);
    assert_int_equal(D->ncontact, 1);
    const kl_ball_contact *c = &D->contact[0];
    const double chi = kl_hc_chi(m.law, m.cr, vin);
    /* reference: bisection on the sign of x for the end of contact */
    double lo = 0.5 * (c->t1 - c->t0), hi = 2.0 * (c->t1 - c->t0), x, v;
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      reference(&m, chi, vin, mid, &x, &v);
      if (x > 0) lo = mid; else hi = mid;
    }
    reference(&m, chi, vin, hi, &x, &v);
    const double etc = fabs((c->t1 - c->t0) / hi - 1), evo = fabs(c->v_out / -v - 1);
    printf("# HC law %d: contact time err %.2e, exit speed err %.2e, %d sub-steps\n", m.law, etc, evo, c->nsub);
    /* measured worst 8.2e-12 (contact time) and 8.8e-11 (exit speed: the linearised HC sub-steps at the
     * engine's tolerance); about ten times that */
    assert_true(etc < 1e-10);
    assert_true(evo < 1e-9);
  }
}

int main(void)
{
  D = malloc(sizeof *D);
  gsl_set_error_handler_off();
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_kv_contact), cmocka_unit_test(test_hc_contact)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  free(D);
  return rc;
}
