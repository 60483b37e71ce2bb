/* api/api_engine_test.c: the engine's public API as a program sees it (linked to libkelvin.so, public
 * headers only): a scene loaded from YAML with its messages, names and settings; progress and stop of
 * kelvin_world_advance and kelvin_ball_advance; the ball on a plane against formulas written out here
 * (free fall, the static sag (m g / K)^(1/n)) and its bounded-work checks. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <kelvin/ball.h>
#include <kelvin/contact.h>
#include <kelvin/engine.h>
#include <kelvin/kelvin.h>

#define G 9.81

static void assert_rel(double got, double want, double tol, const char *what)
{
  if (!(fabs(got - want) <= tol * fabs(want)))
    fail_msg("%s: got %.17g, want %.17g (relative error %.3g > %.3g)", what, got, want, fabs(got - want) / fabs(want), tol);
}

/* the paper's ball (section 4.1) on a plane, cr 0.8: it bounces and settles, some 3000 sub-steps in 3 s */
static const char *scene =
  "duration: 3.0\n"
  "output_step: 0.01\n"
  "contact:\n"
  "  model: kv\n"
  "  max_contacts: 7\n"
  "bodies:\n"
  "  - name: ground\n"
  "    type: static\n"
  "    material: {stiffness: 140e6, restitution: 0.8}\n"
  "    shapes:\n"
  "      - type: plane\n"
  "  - name: ball\n"
  "    mass: 1.0\n"
  "    position: [0.3, -0.2, 1.1]\n"
  "    material: {stiffness: 140e6, restitution: 0.8}\n"
  "    shapes:\n"
  "      - type: sphere\n"
  "        radius: 0.1\n";

/* a box dropped flat onto a plane: four coupled contacts, so sub-steps of a fraction of the contact
 * period (some 800 in 0.2 s) */
static const char *box_scene =
  "duration: 0.2\n"
  "bodies:\n"
  "  - name: ground\n"
  "    type: static\n"
  "    material: {stiffness: 1e6, restitution: 0.5}\n"
  "    shapes:\n"
  "      - type: plane\n"
  "  - name: box\n"
  "    position: [0, 0, 0.11]\n"
  "    material: {stiffness: 1e6, restitution: 0.5}\n"
  "    shapes:\n"
  "      - type: box\n"
  "        half_extents: [0.1, 0.1, 0.1]\n";

static kelvin_world *load(const char *text)
{
  kelvin_world *w = NULL;
  assert_int_equal(kelvin_world_create(&w), KELVIN_OK);
  const kelvin_status st = kelvin_world_load_mem(w, "scene.yaml", text, strlen(text));
  if (st != KELVIN_OK) fail_msg("%s", kelvin_world_errmsg(w));
  return w;
}

/* a scene from YAML: what it says comes back through the API; bad scenes give one line naming the file,
 * the line and the field, and leave the world empty (and loadable) */
static void test_world_load(void **state)
{
  (void)state;
  kelvin_world *w = load(scene);
  assert_int_equal(kelvin_world_nbody(w), 2);
  assert_string_equal(kelvin_world_body_name(w, 0), "ground");
  assert_string_equal(kelvin_world_body_name(w, 1), "ball");
  assert_null(kelvin_world_body_name(w, 2));
  assert_int_equal(kelvin_world_body_type(w, 0), KELVIN_BODY_STATIC);
  assert_int_equal(kelvin_world_body_type(w, 1), KELVIN_BODY_DYNAMIC);
  assert_int_equal(kelvin_world_body_type(w, -1), -1);
  assert_true(kelvin_world_duration(w) == 3.0 && kelvin_world_output_step(w) == 0.01);
  double v = 0;
  assert_int_equal(kelvin_world_get(w, "contact_capacity", &v), KELVIN_OK);
  assert_true(v == 7);
  assert_int_equal(kelvin_world_get(w, "nonsense", &v), KELVIN_ERR_ARG);
  assert_true(isnan(v));
  /* loaded means compiled: read-only, and no second scene on top */
  assert_int_equal(kelvin_world_load_mem(w, "again.yaml", scene, strlen(scene)), KELVIN_ERR_ARG);
  assert_non_null(strstr(kelvin_world_errmsg(w), "empty"));
  /* the ball set down on the plane: one contact, its shapes those of the two bodies (the plane is shape
   * 0 of body 0, the sphere shape 1 of body 1), at rest the force of its weight m g */
  kelvin_world_data *d = NULL;
  assert_int_equal(kelvin_world_data_create(w, &d), KELVIN_OK);
  assert_int_equal(kelvin_world_advance(d, 10.0), KELVIN_OK); /* bounces end after 9 tf = 4.1 s */
  assert_int_equal(kelvin_world_ncontact(d), 1);
  kelvin_contact c;
  assert_int_equal(kelvin_world_contact(d, 0, &c), KELVIN_OK);
  for (int k = 0; k < 2; ++k) assert_int_equal(c.shape[k], c.body[k]);
  assert_rel(c.force, 1.0 * G, 1e-6, "resting force");
  assert_rel(c.force_avg, 1.0 * G, 1e-6, "resting force averaged over the sub-step");
  assert_true(c.fpeak >= c.force); /* the peak of this (resting) contact since its onset */
  kelvin_world_counts n;
  assert_int_equal(kelvin_world_get_counts(d, &n), KELVIN_OK);
  assert_true(n.substeps == kelvin_world_substeps(d) && n.onsets >= 2 && n.ends == n.onsets - 1);
  assert_true(n.contact_overflow == 0 && n.event_overflow == 0);
  assert_int_equal(kelvin_world_nevent(d), n.ends);
  kelvin_contact_event e;
  assert_int_equal(kelvin_world_event(d, 0, &e), KELVIN_OK);
  for (int k = 0; k < 2; ++k) assert_int_equal(e.shape[k], e.body[k]);
  assert_rel(e.t0, sqrt(2 * 1.0 / G), 1e-9, "first onset: free fall of 1 m");
  assert_true(e.fpeak > 100 * G); /* the first impact at 4.4 m/s: about sqrt(K m) v = 5e4 N */
  kelvin_world_data_free(d);
  kelvin_world_free(w);

  /* bad scenes: status, one line with file:line: field, the world left empty and still loadable */
  const char *bad = "duration: 1\nbodies:\n  - name: ball\n    mass: 0\n    shapes:\n      - type: sphere\n        radius: 0.1\n";
  assert_int_equal(kelvin_world_create(&w), KELVIN_OK);
  assert_int_equal(kelvin_world_load_mem(w, "bad.yaml", bad, strlen(bad)), KELVIN_ERR_CONFIG);
  printf("# %s\n", kelvin_world_errmsg(w));
  assert_non_null(strstr(kelvin_world_errmsg(w), "bad.yaml:4: bodies[0].mass: must be > 0 kg, got 0"));
  assert_null(strchr(kelvin_world_errmsg(w), '\n'));
  assert_int_equal(kelvin_world_nbody(w), 0);
  assert_int_equal(kelvin_world_load(w, "/nonexistent/scene.yaml"), KELVIN_ERR_IO);
  assert_non_null(strstr(kelvin_world_errmsg(w), "scene.yaml"));
  assert_int_equal(kelvin_world_load_mem(w, "ball.yaml", scene, strlen(scene)), KELVIN_OK);
  assert_int_equal(kelvin_world_nbody(w), 2);
  kelvin_world_free(w);

  /* a world built by calls names its bodies body<i> and keeps the defaults of duration and output step */
  assert_int_equal(kelvin_world_create(&w), KELVIN_OK);
  kelvin_body b;
  kelvin_body_init(&b);
  assert_int_equal(kelvin_world_add_body(w, &b, NULL), KELVIN_OK);
  assert_int_equal(kelvin_world_add_body(w, &b, NULL), KELVIN_OK);
  assert_string_equal(kelvin_world_body_name(w, 1), "body1");
  assert_true(kelvin_world_duration(w) == 1.0 && kelvin_world_output_step(w) == 1e-3);
  assert_int_equal(kelvin_world_get(w, "contact_capacity", &v), KELVIN_OK);
  assert_true(v == 64);
  kelvin_world_free(w);
}

typedef struct calls {
  int n;         /* calls so far */
  int stop_at;   /* return 1 at this call (1: the first) */
  double frac;   /* the last fraction */
  char text[160];
} calls;

static int count(void *ctx, double fraction, const char *text)
{
  calls *c = ctx;
  c->n++;
  c->frac = fraction;
  snprintf(c->text, sizeof c->text, "%s", text);
  return c->n == c->stop_at;
}

/* stop: the callback's 1 at the first checkpoint (256 sub-steps) ends the advance there with
 * KELVIN_ERR_STOPPED before t; going on from there gives, bit for bit, the run that was never stopped
 * (the state was left at a completed sub-step). Progress without stop: the callback is called, with a
 * fraction in (0, 1) and a line naming the sub-steps, and the run is the same. */
static void test_world_stop(void **state)
{
  (void)state;
  kelvin_world *w = load(box_scene);
  kelvin_world_data *a = NULL, *b = NULL;
  assert_int_equal(kelvin_world_data_create(w, &a), KELVIN_OK);
  assert_int_equal(kelvin_world_data_create(w, &b), KELVIN_OK);
  calls ca = {0, 1, 0, ""};
  assert_int_equal(kelvin_world_set_progress(a, count, &ca), KELVIN_OK);
  assert_int_equal(kelvin_world_advance(a, 0.2), KELVIN_ERR_STOPPED);
  printf("# stopped: %s (t = %.9g, %ld sub-steps)\n", kelvin_world_data_errmsg(a), kelvin_world_time(a),
         kelvin_world_substeps(a));
  assert_int_equal(ca.n, 1);
  assert_non_null(strstr(kelvin_world_data_errmsg(a), "stopped"));
  assert_true(kelvin_world_time(a) > 0 && kelvin_world_time(a) < 0.2);
  assert_int_equal(kelvin_world_substeps(a), 256);
  assert_true(ca.frac > 0 && ca.frac < 1);
  assert_rel(ca.frac, kelvin_world_time(a) / 0.2, 1e-12, "fraction of the call");
  assert_non_null(strstr(ca.text, "256 sub-steps"));
  assert_int_equal(kelvin_world_set_progress(a, NULL, NULL), KELVIN_OK);
  assert_int_equal(kelvin_world_advance(a, 0.2), KELVIN_OK);
  calls cb = {0, 0, 0, ""}; /* never stops */
  assert_int_equal(kelvin_world_set_progress(b, count, &cb), KELVIN_OK);
  assert_int_equal(kelvin_world_advance(b, 0.2), KELVIN_OK);
  assert_true(cb.n >= 1);
  printf("# progress calls in a 0.2 s run of %ld sub-steps: %d\n", kelvin_world_substeps(b), cb.n);
  assert_int_equal(kelvin_world_substeps(a), kelvin_world_substeps(b));
  assert_true(kelvin_world_substeps(b) > 256);
  double pa[3], qa[4], va[3], wa[3], pb[3], qb[4], vb[3], wb[3];
  kelvin_world_body_state(a, 1, pa, qa, va, wa); /* the box */
  kelvin_world_body_state(b, 1, pb, qb, vb, wb);
  assert_memory_equal(pa, pb, sizeof pa);
  assert_memory_equal(qa, qb, sizeof qa);
  assert_memory_equal(va, vb, sizeof va);
  assert_memory_equal(wa, wb, sizeof wa);
  assert_int_equal(kelvin_world_nevent(a), kelvin_world_nevent(b));
  kelvin_world_data_free(a);
  kelvin_world_data_free(b);
  kelvin_world_free(w);
}

/* the ball on a plane: free fall to the plane in sqrt(2 h / g) at sqrt(2 g h); the logs and the state */
static void test_ball(void **state)
{
  (void)state;
  kelvin_ball_model m;
  kelvin_ball_model_init(&m);
  assert_true(m.m == 1.0 && m.R == 0.1 && m.K == 140e6 && m.n == 1.0 && m.model == KELVIN_MODEL_KV);
  m.cr = 0.8;
  kelvin_ball *b = NULL;
  assert_int_equal(kelvin_ball_create(&b), KELVIN_OK);
  assert_int_equal(kelvin_ball_advance(b, 1.0), KELVIN_ERR_ARG); /* not started */
  assert_int_equal(kelvin_ball_start(b, &m, 1.0, 0.0, 10.0), KELVIN_OK);
  kelvin_ball_state s;
  const double tf = sqrt(2.0 / G);
  assert_int_equal(kelvin_ball_advance(b, 0.5 * tf), KELVIN_OK);
  assert_int_equal(kelvin_ball_get_state(b, &s), KELVIN_OK);
  assert_rel(s.height, 1.0 - 0.5 * G * 0.25 * tf * tf, 1e-14, "height in free fall");
  assert_rel(s.velocity, -G * 0.5 * tf, 1e-14, "velocity in free fall");
  assert_true(s.contact == 0 && s.force == 0 && s.penetration == 0);
  assert_rel(s.energy, 1.0 * G * 1.0, 1e-14, "energy m g h");
  assert_int_equal(kelvin_ball_advance(b, 10.0), KELVIN_OK);
  assert_true(kelvin_ball_ncontact(b) >= 1 && kelvin_ball_napex(b) >= 1);
  kelvin_ball_contact c;
  assert_int_equal(kelvin_ball_get_contact(b, 0, &c), KELVIN_OK);
  assert_rel(c.t0, tf, 1e-12, "impact time");
  assert_rel(c.v_in, sqrt(2 * G * 1.0), 1e-12, "impact speed");
  assert_true(c.v_out < c.v_in && c.t1 > c.t0);
  double ta, ha;
  assert_int_equal(kelvin_ball_get_apex(b, 0, &ta, &ha), KELVIN_OK);
  assert_rel(ha, c.v_out * c.v_out / (2 * G), 1e-9, "first apex v_out^2 / 2g");
  assert_rel(ta, c.t1 + c.v_out / G, 1e-9, "its time");
  assert_int_equal(kelvin_ball_get_contact(b, kelvin_ball_ncontact(b), &c), KELVIN_ERR_ARG);
  assert_int_equal(kelvin_ball_advance(b, 1.0), KELVIN_ERR_ARG); /* the past */
  assert_non_null(strstr(kelvin_ball_errmsg(b), "before the current time"));
  kelvin_ball_free(b);
  kelvin_ball_free(NULL);
}

/* the ball's checks, each at its bound: a stiffness 1 % either side of the one that sinks the ball by its
 * radius under its weight, K = m g / R^n; a mass whose contact time straddles 64 eps t_end (Kelvin-Voigt
 * without damping: tc = pi sqrt(m / K)); a model field */
static void test_ball_checks(void **state)
{
  (void)state;
  kelvin_ball *b = NULL;
  assert_int_equal(kelvin_ball_create(&b), KELVIN_OK);
  kelvin_ball_model m;
  kelvin_ball_model_init(&m);
  m.model = KELVIN_MODEL_HC;
  m.n = 1.5;
  m.R = 0.01;
  const double Ksink = m.m * G / pow(m.R, m.n);
  m.K = 1.01 * Ksink;
  assert_int_equal(kelvin_ball_check(b, &m, 0.0, 0.0, 1.0), KELVIN_OK); /* at rest on the plane: no impact */
  m.K = 0.99 * Ksink;
  assert_int_equal(kelvin_ball_check(b, &m, 0.0, 0.0, 1.0), KELVIN_ERR_ARG);
  printf("# %s\n", kelvin_ball_errmsg(b));
  assert_non_null(strstr(kelvin_ball_errmsg(b), "would sink"));
  assert_int_equal(kelvin_ball_start(b, &m, 0.0, 0.0, 1.0), KELVIN_ERR_ARG);
  assert_int_equal(kelvin_ball_advance(b, 1.0), KELVIN_ERR_ARG); /* no rollout */
  kelvin_ball_model_init(&m);
  m.cr = 1.0;
  const double tend = 10.0, tres = 64 * 2.220446049250313e-16 * tend;
  m.m = 1.1 * 1.1 * tres * tres * m.K / (3.14159265358979323846 * 3.14159265358979323846); /* tc = 1.1 tres */
  assert_int_equal(kelvin_ball_check(b, &m, 0.0, -1.0, tend), KELVIN_OK);
  m.m /= 1.1 * 1.1 * 1.1 * 1.1; /* tc = tres / 1.1 */
  assert_int_equal(kelvin_ball_check(b, &m, 0.0, -1.0, tend), KELVIN_ERR_ARG);
  printf("# %s\n", kelvin_ball_errmsg(b));
  assert_non_null(strstr(kelvin_ball_errmsg(b), "below the time resolution of double precision"));
  kelvin_ball_model_init(&m);
  m.model = KELVIN_MODEL_HC;
  m.n = 4;
  assert_int_equal(kelvin_ball_check(b, &m, 1.0, 0.0, 1.0), KELVIN_ERR_ARG);
  assert_non_null(strstr(kelvin_ball_errmsg(b), "exponent: must be in [1, 3], got 4"));
  kelvin_ball_free(b);
}

/* the ball stopped at its first checkpoint goes on to the same state, bit for bit */
static void test_ball_stop(void **state)
{
  (void)state;
  kelvin_ball_model m;
  kelvin_ball_model_init(&m);
  m.model = KELVIN_MODEL_HC;
  m.n = 1.5;
  m.K = 4.865e10;
  m.cr = 0.8;
  kelvin_ball *a = NULL, *b = NULL;
  assert_int_equal(kelvin_ball_create(&a), KELVIN_OK);
  assert_int_equal(kelvin_ball_create(&b), KELVIN_OK);
  assert_int_equal(kelvin_ball_start(a, &m, 1.0, 0.0, 10.0), KELVIN_OK);
  assert_int_equal(kelvin_ball_start(b, &m, 1.0, 0.0, 10.0), KELVIN_OK);
  calls ca = {0, 1, 0, ""};
  kelvin_ball_set_progress(a, count, &ca);
  assert_int_equal(kelvin_ball_advance(a, 10.0), KELVIN_ERR_STOPPED);
  kelvin_ball_state sa, sb;
  kelvin_ball_get_state(a, &sa);
  printf("# ball stopped: %s (%ld sub-steps)\n", kelvin_ball_errmsg(a), kelvin_ball_substeps(a));
  assert_int_equal(ca.n, 1);
  assert_true(sa.t > 0 && sa.t < 10.0);
  kelvin_ball_set_progress(a, NULL, NULL);
  assert_int_equal(kelvin_ball_advance(a, 10.0), KELVIN_OK);
  assert_int_equal(kelvin_ball_advance(b, 10.0), KELVIN_OK);
  kelvin_ball_get_state(a, &sa);
  kelvin_ball_get_state(b, &sb);
  assert_true(sa.t == sb.t && sa.height == sb.height && sa.velocity == sb.velocity);
  assert_int_equal(kelvin_ball_ncontact(a), kelvin_ball_ncontact(b));
  assert_int_equal(kelvin_ball_substeps(a), kelvin_ball_substeps(b));
  kelvin_ball_free(a);
  kelvin_ball_free(b);
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_world_load), cmocka_unit_test(test_world_stop),
                                     cmocka_unit_test(test_ball), cmocka_unit_test(test_ball_checks),
                                     cmocka_unit_test(test_ball_stop)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
