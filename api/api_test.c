/* api/api_test.c: the public C API as a program sees it: linked to libkelvin.so, public headers only.
 * Every number is checked against a formula written out here (free fall, the undamped and damped
 * oscillator, Hertz's impact, paper eq. 10), not against the library's own output; error paths return
 * the documented status and leave a message on the handle. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <kelvin/batch.h>
#include <kelvin/contact.h>
#include <kelvin/engine.h>
#include <kelvin/grind.h>
#include <kelvin/check.h>
#include <kelvin/kelvin.h>

#define PI 3.14159265358979323846
#define G 9.81

static void assert_rel(double got, double want, double tol, const char *what)
{
  if (!(fabs(got - want) <= tol * fabs(want)))
    fail_msg("%s: got %.17g, want %.17g (relative error %.3g > %.3g)", what, got, want, fabs(got - want) / fabs(want), tol);
}

static void test_version_and_status(void **state)
{
  (void)state;
  assert_string_equal(kelvin_version(), KELVIN_VERSION_STRING);
  char v[64];
  snprintf(v, sizeof v, "%d.%d.%d", KELVIN_VERSION_MAJOR, KELVIN_VERSION_MINOR, KELVIN_VERSION_PATCH);
  assert_string_equal(v, KELVIN_VERSION_STRING);
  assert_string_equal(kelvin_status_str(KELVIN_ERR_OPENCL), "KELVIN_ERR_OPENCL");
  assert_string_equal(kelvin_status_str((kelvin_status)42), "KELVIN_ERR_UNKNOWN");
  assert_string_equal(kelvin_status_str(KELVIN_ERR_STOPPED), "KELVIN_ERR_STOPPED");
  assert_string_equal(kelvin_status_str(KELVIN_ERR_LIMIT), "KELVIN_ERR_LIMIT");
  assert_string_equal(kelvin_status_str(KELVIN_ERR_DIVERGED), "KELVIN_ERR_DIVERGED");
}

/* The name tables as config files spell them, written out here against the public codes (a swapped,
 * misspelled or missing entry, or a list without its NULL end, fails). */
/* kelvin_check_file on small files written here: the kind, the summary's figures (counted by hand from
 * what was written), and a bad row named by its file and line (a kind detected wrong, a lost line number
 * or a summary left after a failure fails). */
static void test_check_file(void **state)
{
  (void)state;
  kelvin_check *c = NULL;
  assert_int_equal(kelvin_check_create(&c), KELVIN_OK);
  assert_int_equal(kelvin_check_kind(c), KELVIN_INPUT_UNKNOWN);
  assert_string_equal(kelvin_check_summary(c), "");
  FILE *f = fopen("api_check_path.csv", "w");
  assert_non_null(f);
  fprintf(f, "x_m,y_m,z_m,nx,ny,nz\n0,0,0,0,0,1\n0.01,0,0,0,0,1\n0.02,0,0,0,0,1\n");
  fclose(f);
  assert_int_equal(kelvin_check_file(c, "api_check_path.csv"), KELVIN_OK);
  assert_int_equal(kelvin_check_kind(c), KELVIN_INPUT_PATH);
  assert_string_equal(kelvin_check_summary(c), "api_check_path.csv: a path: 3 points\n");
  f = fopen("api_check_target.csv", "w");
  assert_non_null(f);
  fprintf(f, "s_m,target_N\n0,4\n0.05,6\n");
  fclose(f);
  assert_int_equal(kelvin_check_file(c, "api_check_target.csv"), KELVIN_OK);
  assert_int_equal(kelvin_check_kind(c), KELVIN_INPUT_TARGET);
  assert_string_equal(kelvin_check_summary(c), "api_check_target.csv: a target force profile: 2 rows, s over [0, 0.05] m\n");
  f = fopen("api_check_bad.csv", "w");
  assert_non_null(f);
  fprintf(f, "s_m,target_N\n0,4\n0.05,-6\n");
  fclose(f);
  assert_int_equal(kelvin_check_file(c, "api_check_bad.csv"), KELVIN_ERR_CONFIG);
  assert_int_equal(kelvin_check_kind(c), KELVIN_INPUT_TARGET);
  assert_string_equal(kelvin_check_summary(c), "");
  if (!strstr(kelvin_check_errmsg(c), "api_check_bad.csv:3")) fail_msg("no file:line in '%s'", kelvin_check_errmsg(c));
  f = fopen("api_check_scene.yaml", "w");
  assert_non_null(f);
  fprintf(f, "duration: 0.5\noutput_step: 0.01\nbodies:\n  - name: floor\n    type: static\n    shapes:\n"
             "      - {type: plane}\n  - name: ball\n    mass: 0.1\n    position: [0, 0, 0.1]\n    shapes:\n"
             "      - {type: sphere, radius: 0.01}\n");
  fclose(f);
  const kelvin_status st = kelvin_check_file(c, "api_check_scene.yaml");
  if (st != KELVIN_OK) fail_msg("%s", kelvin_check_errmsg(c));
  assert_int_equal(kelvin_check_kind(c), KELVIN_INPUT_SCENE);
  const char *sum = kelvin_check_summary(c);
  if (!strstr(sum, "a scene (kelvin simulate): 0.5 s, output every 0.01 s, 2 bodies, 2 shapes") ||
      !strstr(sum, "  floor            static\n") || !strstr(sum, "  ball             dynamic\n"))
    fail_msg("scene summary: '%s'", sum);
  assert_int_equal(kelvin_check_file(c, "api_check_none.yaml"), KELVIN_ERR_IO);
  assert_non_null(strstr(kelvin_check_errmsg(c), "api_check_none.yaml"));
  kelvin_check_free(c);
  kelvin_check_free(NULL);
  assert_string_equal(kelvin_check_errmsg(NULL), "");
}

static void test_names(void **state)
{
  (void)state;
  const char *models[] = {"kv", "hc", "ef", "general", NULL},
             *laws[] = {"hunt-crossley", "lankarani-nikravesh", "flores", "gonthier", "exact", NULL},
             *rules[] = {"penetration", "force", NULL}, *engine[] = {"kv", "hc", "general", NULL};
  const int mcode[] = {KELVIN_MODEL_KV, KELVIN_MODEL_HC, KELVIN_MODEL_EF, KELVIN_MODEL_GEN},
            lcode[] = {KELVIN_LAW_HUNT_CROSSLEY, KELVIN_LAW_LANKARANI_NIKRAVESH, KELVIN_LAW_FLORES, KELVIN_LAW_GONTHIER,
                       KELVIN_LAW_EXACT},
            rcode[] = {KELVIN_SEP_PENETRATION, KELVIN_SEP_FORCE};
  const char *const *ml = kelvin_model_names(), *const *ll = kelvin_law_names(), *const *rl = kelvin_rule_names(),
                    *const *el = kelvin_engine_model_names();
  for (int i = 0; i < 5; ++i) {
    if (models[i]) {
      assert_string_equal(kelvin_model_name(mcode[i]), models[i]);
      assert_int_equal(kelvin_model_from_name(models[i]), mcode[i]);
      assert_string_equal(ml[mcode[i]], models[i]);
    } else
      assert_null(ml[i]);
  }
  for (int i = 0; i < 6; ++i) {
    if (laws[i]) {
      assert_string_equal(kelvin_law_name(lcode[i]), laws[i]);
      assert_int_equal(kelvin_law_from_name(laws[i]), lcode[i]);
      assert_string_equal(ll[lcode[i]], laws[i]);
    } else
      assert_null(ll[i]);
  }
  for (int i = 0; i < 3; ++i) {
    if (rules[i]) {
      assert_string_equal(kelvin_rule_name(rcode[i]), rules[i]);
      assert_int_equal(kelvin_rule_from_name(rules[i]), rcode[i]);
      assert_string_equal(rl[rcode[i]], rules[i]);
    } else
      assert_null(rl[i]);
  }
  for (int i = 0; i < 4; ++i)
    if (engine[i])
      assert_string_equal(el[i], engine[i]);
    else
      assert_null(el[i]);
  assert_null(kelvin_model_name(4));
  assert_null(kelvin_law_name(-1));
  assert_null(kelvin_rule_name(2));
  assert_int_equal(kelvin_law_from_name("Exact"), -1);
  assert_int_equal(kelvin_model_from_name(NULL), -1);
}

/* Kelvin-Voigt and Hertz impacts against the oscillator and Hertz's closed forms. The closed forms are
 * exact: the tolerances are a few ulp (1e-14) where the measured agreement is 0 to 6e-16, and 10x the
 * measured 1.6e-11 for the Hertz contact time (32-node Gauss-Legendre against the Gamma-function form). */
static void test_closed_forms(void **state)
{
  (void)state;
  kelvin_impact_in in;
  kelvin_impact_out out;
  kelvin_impact_in_init(&in);
  const double m = 2.0, K = 3e5, v0 = 0.7, w = sqrt(K / m);
  in.m = m;
  in.K = K;
  in.v0 = v0;
  /* cr = 1: the undamped oscillator, half a period */
  assert_int_equal(kelvin_impact(&in, &out), KELVIN_OK);
  assert_rel(out.dmax, v0 / w, 1e-14, "KV dmax = v0 sqrt(m/K)");
  assert_rel(out.tc, PI / w, 1e-14, "KV tc = pi sqrt(m/K)");
  assert_rel(out.tmax, 0.5 * PI / w, 1e-14, "KV tmax = tc/2");
  assert_rel(out.fpeak, K * v0 / w, 1e-14, "KV fpeak = v0 sqrt(K m)");
  assert_rel(out.cr_eff, 1.0, 1e-14, "KV cr_eff");
  /* cr = 0.5: D from paper eq. (10), the damped oscillator leaves at d = 0 after pi / w_d with exit
   * speed cr v0 */
  in.cr = 0.5;
  const double l = -log(0.5), D = 2 * l * sqrt(K * m) / sqrt(PI * PI + l * l);
  const double wd = sqrt(K / m - D * D / (4 * m * m));
  assert_rel(kelvin_kv_damping(0.5, K, m), D, 1e-14, "paper eq. (10)");
  assert_int_equal(kelvin_impact(&in, &out), KELVIN_OK);
  assert_rel(out.damp, D, 1e-14, "KV damping");
  assert_rel(out.tc, PI / wd, 1e-14, "KV damped contact time");
  assert_rel(out.cr_eff, 0.5, 1e-14, "KV effective restitution (eq. 10 is exact)");
  /* Hertz (n = 1.5, chi = 0 at cr = 1): d_max^(n+1) = (n+1) m v0^2 / (2K), and the contact time
   * 2 (d_max/v0) int_0^1 (1 - x^(n+1))^(-1/2) dx = 2 (d_max/v0) sqrt(pi) Gamma(1 + 1/q) / Gamma(1/2 + 1/q) */
  in.model = KELVIN_MODEL_HC;
  in.n = 1.5;
  in.cr = 1.0;
  in.K = 1e9;
  const double q = 2.5, dH = pow(q * m * v0 * v0 / (2 * 1e9), 1 / q);
  assert_int_equal(kelvin_impact(&in, &out), KELVIN_OK);
  assert_rel(out.dmax, dH, 1e-14, "Hertz dmax");
  assert_rel(out.tc, 2 * dH / v0 * sqrt(PI) * tgamma(1 + 1 / q) / tgamma(0.5 + 1 / q), 2e-10, "Hertz contact time");
  assert_rel(kelvin_hc_delta_max(m, 1e9, 1.5, 0.0, v0), dH, 1e-14, "kelvin_hc_delta_max at chi = 0");
  /* the exact-restitution law gives exactly cr; the Hunt-Crossley law its closed form */
  in.cr = 0.6;
  in.law = KELVIN_LAW_EXACT;
  assert_int_equal(kelvin_impact(&in, &out), KELVIN_OK);
  assert_rel(out.cr_eff, 0.6, 1e-14, "exact law");
  assert_rel(kelvin_hc_cr_eff(kelvin_hc_chi(KELVIN_LAW_EXACT, 0.6, v0), v0), 0.6, 1e-14, "kelvin_hc_cr_eff");
  assert_rel(kelvin_hc_chi(KELVIN_LAW_HUNT_CROSSLEY, 0.6, v0), 3 * (1 - 0.6) / (2 * v0), 1e-15, "Hunt-Crossley chi");
  assert_rel(kelvin_hc_chi(KELVIN_LAW_GONTHIER, 0.6, v0), (1 - 0.36) / (0.6 * v0), 1e-15, "Gonthier chi");
  /* materials: E* and Hertz K, paper eq. (2) */
  const double es = 1 / ((1 - 0.22 * 0.22) / 200e9 + (1 - 0.33 * 0.33) / 70e9);
  assert_rel(kelvin_estar(200e9, 0.22, 70e9, 0.33), es, 1e-15, "E*");
  assert_rel(kelvin_hertz_K(es, 6e-3), 4.0 / 3.0 * es * sqrt(6e-3), 1e-15, "Hertz K");
  assert_rel(kelvin_radius_eff(0.01, 0.03), 0.0075, 1e-15, "effective radius");
  assert_rel(kelvin_radius_eff(0.01, 0), 0.01, 0, "radius against a plane");
  /* the exact step: undamped x0 cos wt + v0/w sin wt; damped, forced: settles to f0/K */
  double x, v, J;
  const double t = 0.0123;
  assert_int_equal(kelvin_kv_step(m, K, 0, 0, 0, 1e-3, 0.1, t, &x, &v, &J), KELVIN_OK);
  assert_rel(x, 1e-3 * cos(w * t) + 0.1 / w * sin(w * t), 1e-14, "undamped x");
  assert_rel(v, -1e-3 * w * sin(w * t) + 0.1 * cos(w * t), 1e-14, "undamped v");
  assert_rel(J, -m * (v - 0.1), 1e-14, "impulse = -m dv without an external force");
  assert_int_equal(kelvin_kv_step(m, K, 2 * sqrt(K * m), 7.0, 0, 0, 0, 1.0, &x, &v, NULL), KELVIN_OK);
  assert_rel(x, 7.0 / K, 1e-14, "critically damped, settled to f0/K");

  /* outside the domain: NaN or KELVIN_ERR_ARG with the flags that say why */
  assert_true(isnan(kelvin_kv_damping(0.0, K, m)));
  assert_true(isnan(kelvin_kv_damping(1.5, K, m)));
  assert_true(isnan(kelvin_hc_chi((kelvin_law)9, 0.5, 1)));
  assert_true(isnan(kelvin_hertz_K(-1, 1)));
  assert_int_equal(kelvin_kv_step(0, K, 0, 0, 0, 0, 0, 1, &x, &v, NULL), KELVIN_ERR_ARG);
  assert_true(isnan(x) && isnan(v));
  in.cr = 0;
  assert_int_equal(kelvin_impact(&in, &out), KELVIN_ERR_ARG);
  assert_int_equal(out.flags, KELVIN_IMPACT_BAD_CR);
  assert_true(out.dmax == 0);
  kelvin_impact_in_init(&in);
  in.n = 1.5; /* Kelvin-Voigt needs n = 1 */
  assert_int_equal(kelvin_impact(&in, &out), KELVIN_ERR_ARG);
  assert_int_equal(out.flags, KELVIN_IMPACT_BAD_EXPONENT);
  assert_int_equal(kelvin_impact(NULL, &out), KELVIN_ERR_ARG);
}

/* A batch gives, on every path, what kelvin_impact gives scenario by scenario. */
static void test_impact_batch(void **state)
{
  (void)state;
  const size_t n = 300;
  kelvin_impact_batch *b = NULL;
  assert_int_equal(kelvin_impact_batch_create(n, 5, &b), KELVIN_OK);
  assert_int_equal(kelvin_impact_batch_size(b), n);
  kelvin_impact_in in[300];
  for (size_t i = 0; i < n; ++i) {
    kelvin_impact_in_init(&in[i]);
    in[i].model = (kelvin_model)(i % 3);
    in[i].law = (kelvin_law)(i % 5);
    in[i].n = in[i].model == KELVIN_MODEL_KV ? 1.0 : 1.5;
    in[i].cr = 0.1 + 0.9 * (double)(i % 10) / 9.0;
    in[i].v0 = 0.05 + 0.01 * (double)i;
    in[i].m = 0.5 + 0.001 * (double)i;
    in[i].K = in[i].model == KELVIN_MODEL_KV ? 1e5 : 1e9;
    assert_int_equal(kelvin_impact_batch_set(b, i, &in[i]), KELVIN_OK);
  }
  assert_int_equal(kelvin_impact_batch_set(b, n, &in[0]), KELVIN_ERR_ARG);
  assert_non_null(strstr(kelvin_impact_batch_errmsg(b), "scenario 300 of 300"));
  /* serial: the same function on the same thread, bit for bit */
  assert_int_equal(kelvin_impact_batch_run(b, NULL), KELVIN_OK);
  for (size_t i = 0; i < n; ++i) {
    kelvin_impact_out a, c;
    assert_int_equal(kelvin_impact_batch_get(b, i, &a), KELVIN_OK);
    kelvin_impact(&in[i], &c);
    assert_memory_equal(&a, &c, sizeof a);
  }
  double s, d, f;
  assert_int_equal(kelvin_impact_batch_sample(b, 0, 4, &s, &d, &f), KELVIN_OK); /* the last sample: the end */
  kelvin_impact_out o0;
  kelvin_impact_batch_get(b, 0, &o0);
  assert_rel(s, o0.tc, 1e-15, "last sample at the contact time");
  assert_true(fabs(d) < 1e-12 * o0.dmax);
  assert_int_equal(kelvin_impact_batch_sample(b, 0, 5, &s, &d, &f), KELVIN_ERR_ARG);

  /* the OpenMP twin and the default device (pocl in CI; the twin without one) */
  kelvin_device *dev = NULL;
  assert_int_equal(kelvin_device_create(&dev), KELVIN_OK);
  assert_int_equal(kelvin_impact_batch_run(b, dev), KELVIN_ERR_ARG); /* not open */
  assert_non_null(strstr(kelvin_impact_batch_errmsg(b), "not open"));
  for (int pass = 0; pass < 2; ++pass) {
    if (kelvin_device_open(dev, NULL, pass == 0 ? KELVIN_DEVICE_CPU : 0) != KELVIN_OK) {
      print_message("no device: %s\n", kelvin_device_errmsg(dev));
      continue;
    }
    assert_true(strlen(kelvin_device_describe(dev)) > 0);
    if (pass == 0) assert_false(kelvin_device_is_opencl(dev));
    assert_int_equal(kelvin_impact_batch_run(b, dev), KELVIN_OK);
    for (size_t i = 0; i < n; ++i) {
      kelvin_impact_out a, c;
      kelvin_impact_batch_get(b, i, &a);
      kelvin_impact(&in[i], &c);
      assert_int_equal(a.flags, c.flags);
      /* the twin compiles the same text; a device's exp/log may differ by a few ulp, which the
       * iterations of the nonlinear models carry to ~1e-13 */
      assert_rel(a.dmax, c.dmax, 1e-12, "dmax on a device");
      assert_rel(a.tc, c.tc, 1e-12, "tc on a device");
      assert_rel(a.cr_eff, c.cr_eff, 1e-12, "cr_eff on a device");
    }
  }
  assert_int_equal(kelvin_device_open(dev, "no-such-device-anywhere", 0), KELVIN_ERR_NODEVICE);
  assert_non_null(strstr(kelvin_device_errmsg(dev), "no-such-device-anywhere"));
  assert_string_equal(kelvin_device_describe(dev), "");
  kelvin_device_free(dev);
  kelvin_impact_batch_free(b);
  kelvin_device_free(NULL);
  kelvin_impact_batch_free(NULL);
}

/* A ball dropped on a plane (and on a meshed plane), cr = 1: it meets the plane at sqrt(2 g h), leaves
 * at the same speed and rises back to where it started; energy is conserved. */
static void drop(int mesh)
{
  kelvin_world *w = NULL;
  assert_int_equal(kelvin_world_create(&w), KELVIN_OK);
  const double r = 0.05, h = 0.5, K = 1e6;
  kelvin_body b;
  kelvin_shape s;
  int ground, ball, id;
  kelvin_body_init(&b);
  b.type = KELVIN_BODY_STATIC;
  b.K = K;
  assert_int_equal(kelvin_world_add_body(w, &b, &ground), KELVIN_OK);
  kelvin_shape_init(&s);
  if (mesh) {
    const double v[] = {-1, -1, 0, 1, -1, 0, 1, 1, 0, -1, 1, 0};
    const int t[] = {0, 1, 2, 0, 2, 3};
    assert_int_equal(kelvin_world_add_mesh(w, v, 4, t, 2, &id), KELVIN_OK);
    s.type = KELVIN_SHAPE_MESH;
    s.mesh = id;
  } else
    s.type = KELVIN_SHAPE_PLANE;
  assert_int_equal(kelvin_world_add_shape(w, ground, &s, NULL), KELVIN_OK);
  kelvin_body_init(&b);
  b.mass = 1.0;
  b.K = K;
  b.pos[2] = r + h;
  assert_int_equal(kelvin_world_add_body(w, &b, &ball), KELVIN_OK);
  kelvin_shape_init(&s);
  s.size[0] = r;
  assert_int_equal(kelvin_world_add_shape(w, ball, &s, NULL), KELVIN_OK);
  assert_int_equal(kelvin_world_compile(w), KELVIN_OK);
  assert_int_equal(kelvin_world_add_body(w, &b, NULL), KELVIN_ERR_ARG); /* read-only now */
  assert_non_null(strstr(kelvin_world_errmsg(w), "compiled"));
  kelvin_world_data *d = NULL;
  assert_int_equal(kelvin_world_data_create(w, &d), KELVIN_OK);
  const double E0 = kelvin_world_energy(d), tf = sqrt(2 * h / G);
  /* to the apex after the first bounce: fall, contact (~ pi sqrt(m/(2K)) with the blended stiffness),
   * rise */
  double zmax = 0, worst_d = 0, worst_r = 0, worst_f = 0;
  int incontact = 0;
  for (int k = 1; k <= 800; ++k) {
    assert_int_equal(kelvin_world_advance(d, 2.4 * tf * k / 800), KELVIN_OK);
    double p[3], v[3];
    kelvin_world_body_state(d, ball, p, NULL, v, NULL);
    /* an active contact as kelvin_world_contact reports it, against the ball's own state: depth r - z,
     * penetration rate -vz (the ball's sink rate), force K depth (cr = 1: no damping; the pair's
     * stiffness is the harmonic mean 2 K1 K2 / (K1 + K2) of the bodies', K for two equal ones), normal +z
     * from the ground towards the ball */
    if (kelvin_world_ncontact(d) > 0) {
      kelvin_contact c;
      assert_int_equal(kelvin_world_contact(d, 0, &c), KELVIN_OK);
      assert_true(c.body[0] == ball && c.body[1] == ground);
      assert_rel(c.normal[2], 1.0, 1e-15, "contact normal +z");
      worst_d = fmax(worst_d, fabs(c.depth - (r - p[2])));
      worst_r = fmax(worst_r, fabs(c.rate + v[2]));
      worst_f = fmax(worst_f, fabs(c.force / (K * c.depth) - 1.0));
      ++incontact;
    }
    if (kelvin_world_time(d) > 1.5 * tf) zmax = fmax(zmax, p[2]);
    if (k == 401) { /* mid-contact is passed; sample the energy along the way */
      assert_rel(kelvin_world_energy(d), E0, 1e-13, "energy"); /* measured 4e-15 */
    }
  }
  printf("# %s: %d outputs in contact: worst |depth - (r - z)| %.1e m, |rate + vz| %.1e m/s, |F / (K depth) - 1| %.1e\n",
         mesh ? "mesh" : "plane", incontact, worst_d, worst_r, worst_f);
  assert_true(incontact >= 3);
  /* measured: depth 5e-18 m (an ulp of 0.05), rate exactly (the same state), force 2e-11 relative: 10x */
  assert_true(worst_d < 5e-17 && worst_r < 1e-15 && worst_f < 2e-10);
  assert_true(kelvin_world_nevent(d) >= 1);
  kelvin_contact_event e;
  assert_int_equal(kelvin_world_event(d, 0, &e), KELVIN_OK);
  /* measured: impact speed 3e-11 (the onset is located to onset_tol = 1e-9 m), exit speed 4e-16 (the
   * closed-form step), apex 2e-8 (the apex falls between output samples: 800 over the flight) */
  assert_rel(e.v_in, sqrt(2 * G * h), 3e-10, "impact speed sqrt(2 g h)");
  assert_rel(e.v_out, e.v_in, 1e-14, "exit speed at cr = 1");
  assert_rel(zmax, r + h, 2e-7, "apex back at the drop height");
  assert_int_equal(kelvin_world_advance(d, 0.1), KELVIN_ERR_ARG); /* the past */
  assert_non_null(strstr(kelvin_world_data_errmsg(d), "before the current time"));
  { /* the current time itself is not the past: advancing to it is allowed and changes nothing */
    const double tnow = kelvin_world_time(d);
    double p0[3], q0[4], v0[3], w0[3], p1[3], q1[4], v1[3], w1[3];
    kelvin_world_body_state(d, ball, p0, q0, v0, w0);
    assert_int_equal(kelvin_world_advance(d, tnow), KELVIN_OK);
    kelvin_world_body_state(d, ball, p1, q1, v1, w1);
    assert_true(kelvin_world_time(d) == tnow);
    assert_memory_equal(p0, p1, sizeof p0);
    assert_memory_equal(q0, q1, sizeof q0);
    assert_memory_equal(v0, v1, sizeof v0);
    assert_memory_equal(w0, w1, sizeof w0);
  }
  kelvin_world_reset(d);
  assert_true(kelvin_world_time(d) == 0 && kelvin_world_nevent(d) == 0);
  kelvin_world_data_free(d);
  kelvin_world_free(w);
}

static void test_world(void **state)
{
  (void)state;
  drop(0);
  drop(1);
  /* compile errors name the body; data needs a compiled world */
  kelvin_world *w = NULL;
  kelvin_world_data *d = NULL;
  assert_int_equal(kelvin_world_create(&w), KELVIN_OK);
  kelvin_body b;
  kelvin_body_init(&b);
  b.mass = -1;
  assert_int_equal(kelvin_world_add_body(w, &b, NULL), KELVIN_OK);
  assert_int_equal(kelvin_world_data_create(w, &d), KELVIN_ERR_ARG);
  assert_null(d);
  assert_int_equal(kelvin_world_compile(w), KELVIN_ERR_ARG);
  assert_non_null(strstr(kelvin_world_errmsg(w), "body 0"));
  assert_int_equal(kelvin_world_set(w, "hc_tol", 1e-9), KELVIN_OK);
  assert_int_equal(kelvin_world_set(w, "hc_toll", 1e-9), KELVIN_ERR_ARG);
  assert_int_equal(kelvin_world_set_contact(w, KELVIN_MODEL_KV, KELVIN_LAW_EXACT, 1.5, KELVIN_SEP_FORCE), KELVIN_ERR_ARG);
  const double tri_bad[] = {0, 0, 0, 1, 0, 0, 2, 0, 0};
  const int t[] = {0, 1, 2};
  assert_int_equal(kelvin_world_add_mesh(w, tri_bad, 3, t, 1, NULL), KELVIN_ERR_ARG);
  assert_non_null(strstr(kelvin_world_errmsg(w), "degenerate"));
  kelvin_world_free(w);
  kelvin_world_free(NULL);
  kelvin_world_data_free(NULL);
}

/* Settings by key, a config file, and refusals that leave the handle as it was. */
static void test_grind_settings(void **state)
{
  (void)state;
  kelvin_grind *g = NULL;
  assert_int_equal(kelvin_grind_create(&g), KELVIN_OK);
  double v;
  assert_int_equal(kelvin_grind_get(g, "holder.stiffness", &v), KELVIN_OK);
  assert_true(v == 5000); /* README: a 5 kN/m compliant holder */
  assert_int_equal(kelvin_grind_set(g, "holder.stiffness", 1e5), KELVIN_OK);
  assert_int_equal(kelvin_grind_get(g, "holder.stiffness", &v), KELVIN_OK);
  assert_true(v == 1e5);
  assert_int_equal(kelvin_grind_set(g, "holder.stiffness", -1), KELVIN_ERR_ARG);
  assert_non_null(strstr(kelvin_grind_errmsg(g), "holder.stiffness: must be in [1, 1e9] N/m, got -1"));
  assert_int_equal(kelvin_grind_get(g, "holder.stiffness", &v), KELVIN_OK);
  assert_true(v == 1e5);
  assert_int_equal(kelvin_grind_set(g, "holder.stiffnes", 1), KELVIN_ERR_ARG);
  assert_int_equal(kelvin_grind_set_string(g, "contact.law", "flores"), KELVIN_OK);
  assert_string_equal(kelvin_grind_get_string(g, "contact.law"), "flores");
  assert_int_equal(kelvin_grind_set_string(g, "contact.law", "nope"), KELVIN_ERR_ARG);
  assert_string_equal(kelvin_grind_get_string(g, "contact.law"), "flores");
  const double ext[2] = {0.1, 0.03};
  assert_int_equal(kelvin_grind_set_array(g, "workpiece.extent", ext, 2), KELVIN_OK);
  /* the example config is the defaults: loading it undoes the changes */
  assert_int_equal(kelvin_grind_load(g, KELVIN_SOURCE_DIR "/examples/optimise.yaml"), KELVIN_OK);
  assert_int_equal(kelvin_grind_get(g, "holder.stiffness", &v), KELVIN_OK);
  assert_true(v == 5000);
  assert_string_equal(kelvin_grind_get_string(g, "contact.law"), "exact");
  FILE *f = fopen("api_bad.yaml", "w");
  assert_non_null(f);
  fputs("holder:\n  stiffness: 0\n", f);
  fclose(f);
  const kelvin_status bad_st = kelvin_grind_load(g, "api_bad.yaml");
  remove("api_bad.yaml"); /* (read: nothing left behind in the working folder) */
  assert_int_equal(bad_st, KELVIN_ERR_CONFIG);
  assert_non_null(strstr(kelvin_grind_errmsg(g), "api_bad.yaml:2: holder.stiffness"));
  assert_int_equal(kelvin_grind_npass(g), 0);
  assert_int_equal(kelvin_grind_best(g), -1);
  assert_null(kelvin_grind_pass_label(g, 0));
  assert_true(isnan(kelvin_grind_pass_value(g, 0, KELVIN_PASS_RMS)));
  assert_int_equal(kelvin_grind_verify(g, 0), KELVIN_ERR_ARG);
  const double bad[] = {0, 0, 0, 1, 0, 0, 2, 0, 0};
  const int tri[] = {0, 1, 2};
  assert_int_equal(kelvin_grind_set_mesh(g, bad, 3, tri, 1), KELVIN_ERR_ARG);
  assert_non_null(strstr(kelvin_grind_errmsg(g), "degenerate"));
  kelvin_grind_free(g);
  kelvin_grind_free(NULL);
}

/* A flat plate 0.2 x 0.06 m from arrays, a straight path on it given as points and normals (0.1 m long:
 * not the default path's 0.12 m), a small problem: the naive offset is Hertz's static penetration at the target plus the holder's deflection,
 * (F / K)^(2/3) + (F - w) / K_h with K = 4/3 E* sqrt(R), written out here. */
static kelvin_grind *plate(int ns)
{
  enum { NX = 81, NY = 13 };
  static double vert[NX * NY * 3];
  static int tri[(NX - 1) * (NY - 1) * 6];
  int nt = 0;
  for (int j = 0; j < NY; ++j)
    for (int i = 0; i < NX; ++i) {
      double *p = &vert[3 * (j * NX + i)];
      p[0] = -0.1 + 0.2 * i / (NX - 1);
      p[1] = -0.03 + 0.06 * j / (NY - 1);
      p[2] = 0;
    }
  for (int j = 0; j + 1 < NY; ++j)
    for (int i = 0; i + 1 < NX; ++i) {
      const int a = j * NX + i, b = a + 1, c = a + NX, d = c + 1;
      const int t[6] = {a, b, d, a, d, c};
      memcpy(&tri[3 * nt], t, sizeof t);
      nt += 2;
    }
  double pts[3 * 11], nrm[3 * 11];
  for (int k = 0; k < 11; ++k) {
    pts[3 * k] = -0.05 + 0.01 * k;
    pts[3 * k + 1] = 0;
    pts[3 * k + 2] = 0;
    nrm[3 * k] = nrm[3 * k + 1] = 0;
    nrm[3 * k + 2] = 1;
  }
  kelvin_grind *g = NULL;
  assert_int_equal(kelvin_grind_create(&g), KELVIN_OK);
  assert_int_equal(kelvin_grind_set_mesh(g, vert, NX * NY, tri, nt), KELVIN_OK);
  assert_int_equal(kelvin_grind_set_path(g, pts, nrm, 11), KELVIN_OK);
  assert_int_equal(kelvin_grind_set(g, "path.samples", ns), KELVIN_OK);
  assert_int_equal(kelvin_grind_set_string(g, "optimiser.method", "nlopt"), KELVIN_OK); /* the splines below */
  assert_int_equal(kelvin_grind_set(g, "offset.control_points", 8), KELVIN_OK);
  assert_int_equal(kelvin_grind_set(g, "speed.control_points", 4), KELVIN_OK);
  assert_int_equal(kelvin_grind_set(g, "optimiser.screening", 64), KELVIN_OK);
  assert_int_equal(kelvin_grind_set(g, "optimiser.maxeval", 4), KELVIN_OK);
  assert_int_equal(kelvin_grind_set(g, "optimiser.keep", 1), KELVIN_OK);
  assert_int_equal(kelvin_grind_set(g, "verify.count", 1), KELVIN_OK);
  return g;
}

static void test_grind_run(void **state)
{
  (void)state;
  kelvin_grind *g = plate(41);
  assert_int_equal(kelvin_grind_prepare(g), KELVIN_OK);
  assert_int_equal(kelvin_grind_nsamples(g), 41);
  assert_int_equal(kelvin_grind_ncontrol(g), 12);
  assert_rel(kelvin_grind_length(g), 0.1, 1e-12, "path length: the given path, not the default");
  double naive[12], lo[12], hi[12];
  assert_int_equal(kelvin_grind_control(g, naive, NULL, lo, hi), KELVIN_OK);
  const double F = 5, w = 2, Kh = 5000;
  const double es = 1 / ((1 - 0.22 * 0.22) / 200e9 + (1 - 0.33 * 0.33) / 70e9), K = 4.0 / 3.0 * es * sqrt(6e-3);
  /* same formula, different rounding order: 1e-12 */
  assert_rel(naive[0], pow(F / K, 2.0 / 3.0) + (F - w) / Kh, 1e-12, "naive offset on a flat plate");
  assert_rel(naive[8], 0.015, 0, "naive speed = speed.initial");
  assert_rel(lo[0], naive[0] - 1e-3, 1e-12, "offset.min default");

  kelvin_device *dev = NULL;
  assert_int_equal(kelvin_device_create(&dev), KELVIN_OK);
  assert_int_equal(kelvin_grind_optimise(g, dev), KELVIN_ERR_ARG); /* not open */
  assert_int_equal(kelvin_device_open(dev, NULL, KELVIN_DEVICE_CPU), KELVIN_OK);
  if (kelvin_grind_optimise(g, dev) != KELVIN_OK) fail_msg("%s", kelvin_grind_errmsg(g));
  const int np = kelvin_grind_npass(g), best = kelvin_grind_best(g);
  assert_int_equal(np, 3);
  assert_string_equal(kelvin_grind_pass_label(g, 0), "naive");
  assert_string_equal(kelvin_grind_pass_label(g, 1), "initial");
  assert_string_equal(kelvin_grind_pass_label(g, 2), "refined-1");
  assert_true(best == 1 || best == 2); /* never the naive pass; the guess may win a 4-evaluation refinement */
  assert_true(kelvin_grind_pass_value(g, best, KELVIN_PASS_VERIFIED) == 1);
  assert_true(kelvin_grind_rollouts(g) > 64);
  const int other = best == 1 ? 2 : 1; /* verify.count = 1: the naive pass and the best only */
  assert_true(kelvin_grind_pass_value(g, 0, KELVIN_PASS_VERIFIED) == 1);
  assert_true(kelvin_grind_pass_value(g, other, KELVIN_PASS_VERIFIED) == 0);
  assert_true(isnan(kelvin_grind_pass_value(g, other, KELVIN_PASS_RMS_VERIFIED)));
  /* on a flat plate the naive pass is the static equilibrium: after the approach transient its verified
   * force is the target; the refined pass is at least as good */
  double Fv[41], S[41], T[41];
  assert_int_equal(kelvin_grind_pass_series(g, 0, KELVIN_SERIES_FORCE_VERIFIED, Fv), KELVIN_OK);
  assert_int_equal(kelvin_grind_pass_series(g, 0, KELVIN_SERIES_S, S), KELVIN_OK);
  assert_int_equal(kelvin_grind_pass_series(g, 0, KELVIN_SERIES_TARGET, T), KELVIN_OK);
  assert_rel(S[40], 0.1, 1e-12, "last arc length");
  assert_rel(T[20], 5.0, 0, "target");
  assert_rel(Fv[40], 5.0, 1e-12, "verified force at the end of a flat pass"); /* steady: measured 4e-16 */
  assert_true(kelvin_grind_pass_value(g, best, KELVIN_PASS_RMS_VERIFIED) <=
              kelvin_grind_pass_value(g, 0, KELVIN_PASS_RMS_VERIFIED) * 1.01);
  /* the RMS errors are what their series say: sqrt(mean over samples 1..ns-1 of ((F_k - F*_k) / F_ref)^2),
   * F_ref the mean target (same sums, another order: 1e-12) */
  const int checked[2] = {0, best};
  for (int c = 0; c < 2; ++c) {
    const int i = checked[c];
    double Fp[41], se = 0, sv = 0;
    assert_int_equal(kelvin_grind_pass_series(g, i, KELVIN_SERIES_FORCE, Fp), KELVIN_OK);
    assert_int_equal(kelvin_grind_pass_series(g, i, KELVIN_SERIES_FORCE_VERIFIED, Fv), KELVIN_OK);
    for (int k = 1; k < 41; ++k) {
      se += pow((Fp[k] - T[k]) / 5.0, 2) / 40;
      sv += pow((Fv[k] - T[k]) / 5.0, 2) / 40;
    }
    assert_rel(kelvin_grind_pass_value(g, i, KELVIN_PASS_RMS), sqrt(se), 1e-12, "predicted RMS from its series");
    assert_rel(kelvin_grind_pass_value(g, i, KELVIN_PASS_RMS_VERIFIED), sqrt(sv), 1e-12, "verified RMS from its series");
  }
  assert_int_equal(kelvin_grind_pass_series(g, other, KELVIN_SERIES_FORCE_VERIFIED, Fv), KELVIN_ERR_ARG);
  /* verify one more pass */
  assert_int_equal(kelvin_grind_verify(g, other), KELVIN_OK);
  assert_true(kelvin_grind_pass_value(g, other, KELVIN_PASS_VERIFIED) == 1);
  assert_true(isfinite(kelvin_grind_pass_value(g, other, KELVIN_PASS_RMS_VERIFIED)));
  assert_int_equal(kelvin_grind_verify(g, 7), KELVIN_ERR_ARG);

  /* evaluating the refined pass's sampled commands predicts what the optimisation predicted (the same
   * rollout through an identity basis instead of the splines; measured equal) */
  double o[41], v[41], x[12];
  assert_int_equal(kelvin_grind_pass_series(g, best, KELVIN_SERIES_OFFSET, o), KELVIN_OK);
  assert_int_equal(kelvin_grind_pass_series(g, best, KELVIN_SERIES_SPEED, v), KELVIN_OK);
  assert_int_equal(kelvin_grind_pass_control(g, best, x, 12), 12);
  double o2[41], v2[41];
  assert_int_equal(kelvin_grind_expand(g, x, o2, v2), KELVIN_OK);
  assert_memory_equal(o, o2, sizeof o);
  const double rms = kelvin_grind_pass_value(g, best, KELVIN_PASS_RMS);
  if (kelvin_grind_evaluate(g, dev, o, v) != KELVIN_OK) fail_msg("%s", kelvin_grind_errmsg(g));
  assert_int_equal(kelvin_grind_npass(g), 2);
  assert_string_equal(kelvin_grind_pass_label(g, 1), "user");
  assert_int_equal(kelvin_grind_best(g), 1);
  assert_rel(kelvin_grind_pass_value(g, 1, KELVIN_PASS_RMS), rms, 1e-12, "evaluate = optimise's prediction");
  assert_int_equal(kelvin_grind_pass_control(g, 1, NULL, 0), 82);
  v[3] = -1;
  assert_int_equal(kelvin_grind_evaluate(g, dev, o, v), KELVIN_ERR_ARG);
  assert_non_null(strstr(kelvin_grind_errmsg(g), "sample 3"));
  /* a change discards the results */
  assert_int_equal(kelvin_grind_set(g, "target.force", 6), KELVIN_OK);
  assert_int_equal(kelvin_grind_npass(g), 0);
  assert_int_equal(kelvin_grind_nsamples(g), 0);

  /* a target profile from memory: a constant 3 N moves the naive offset to (3/K)^(2/3) + (3 - w)/K_h */
  const double ts[2] = {0, 0.1}, tF[2] = {3, 3};
  assert_int_equal(kelvin_grind_set_target(g, ts, tF, 2), KELVIN_OK);
  assert_int_equal(kelvin_grind_prepare(g), KELVIN_OK);
  assert_int_equal(kelvin_grind_control(g, naive, NULL, NULL, NULL), KELVIN_OK);
  assert_rel(naive[0], pow(3 / K, 2.0 / 3.0) + (3 - w) / Kh, 1e-12, "naive offset at a 3 N target profile");
  assert_int_equal(kelvin_grind_set_string(g, "target.csv", "no-such-target.csv"), KELVIN_OK); /* drops it */
  assert_int_equal(kelvin_grind_prepare(g), KELVIN_ERR_IO); /* the setting names a file that is not there */
  assert_non_null(strstr(kelvin_grind_errmsg(g), "no-such-target.csv"));
  assert_int_equal(kelvin_grind_set_string(g, "target.csv", ""), KELVIN_OK);

  /* rollouts through the public batch: the naive control points give the naive prediction */
  kelvin_rollout *r = NULL;
  assert_int_equal(kelvin_grind_set(g, "target.force", 5), KELVIN_OK);
  assert_int_equal(kelvin_rollout_create(g, dev, &r), KELVIN_OK);
  assert_int_equal(kelvin_rollout_ncontrol(r), 12);
  assert_int_equal(kelvin_rollout_nsamples(r), 41);
  double obj[KELVIN_OBJ_N], so[KELVIN_SO_N * 41];
  assert_int_equal(kelvin_grind_control(g, naive, NULL, NULL, NULL), KELVIN_OK);
  assert_int_equal(kelvin_rollout_eval(r, 1, naive, obj, so), KELVIN_OK);
  assert_true(obj[KELVIN_OBJ_STATUS] == 0);
  assert_rel(so[KELVIN_SO_FAVG * 41 + 40], 5.0, 1e-12, "predicted force at the end of a flat pass"); /* 4e-16 */
  assert_int_equal(kelvin_rollout_eval(r, 0, naive, obj, NULL), KELVIN_ERR_ARG);
  kelvin_rollout_free(r);
  kelvin_rollout_free(NULL);
  kelvin_device_free(dev);
  kelvin_grind_free(g);
}

/* kelvin_grind_set_path takes n >= 2 points (include/kelvin/grind.h): the two ends of a straight 0.08 m
 * line on the plate are a whole path (prepared, its length is their distance, to rounding: 1e-12), one
 * point alone is refused. */
static void test_grind_path_two_points(void **state)
{
  (void)state;
  kelvin_grind *g = plate(41);
  const double pts[6] = {-0.04, 0.01, 0, 0.04, 0.01, 0}, nrm[6] = {0, 0, 1, 0, 0, 1};
  if (kelvin_grind_set_path(g, pts, nrm, 2) != KELVIN_OK) fail_msg("two points refused: %s", kelvin_grind_errmsg(g));
  if (kelvin_grind_prepare(g) != KELVIN_OK) fail_msg("prepare: %s", kelvin_grind_errmsg(g));
  assert_rel(kelvin_grind_length(g), 0.08, 1e-12, "path length: the distance between the two points");
  assert_int_equal(kelvin_grind_set_path(g, pts, nrm, 1), KELVIN_ERR_ARG);
  assert_non_null(strstr(kelvin_grind_errmsg(g), "needs >= 2 points"));
  kelvin_grind_free(g);
}

/* wall seconds (C11 timespec_get) */
static double wall(void)
{
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* what a progress callback saw, and when to ask for a stop */
typedef struct seen {
  int calls, stop_at;        /* stop on call number stop_at (0: never) */
  const char *stop_on;       /* or on the first text that starts with this (NULL: never) */
  double fmin, fmax, flast;  /* fractions */
  double t_stop;             /* wall() when it asked to stop */
  char last[256];
} seen;

static int watch(void *ctx, double fraction, const char *text)
{
  seen *w = ctx;
  w->calls++;
  w->fmin = fmin(w->fmin, fraction);
  w->fmax = fmax(w->fmax, fraction);
  w->flast = fraction;
  snprintf(w->last, sizeof w->last, "%s", text);
  if (w->calls == w->stop_at || (w->stop_on && strncmp(text, w->stop_on, strlen(w->stop_on)) == 0)) {
    w->t_stop = wall();
    return 1;
  }
  return 0;
}

/* Progress and stop (kelvin_grind_set_progress): a run reports fractions in [0, 1], the last call 1; a
 * callback that asks to stop on its 2nd call is called no more and the run returns KELVIN_ERR_STOPPED
 * with no results; a stop asked from inside the 3-D verification (at a pass's "started" notice) returns
 * within 0.5 s although that verification, its sub-steps made 200 times smaller (verify.substep_fraction
 * 1e-3), runs for many seconds (the stop is checked at every path sample). verify.time_limit stops the
 * same verification with KELVIN_ERR_LIMIT and a message naming the setting. */
static void test_grind_progress_stop(void **state)
{
  (void)state;
  kelvin_grind *g = plate(41);
  kelvin_device *dev = NULL;
  assert_int_equal(kelvin_device_create(&dev), KELVIN_OK);
  assert_int_equal(kelvin_device_open(dev, NULL, KELVIN_DEVICE_CPU), KELVIN_OK);
  seen w = {0, 0, NULL, INFINITY, -INFINITY, NAN, 0, ""};
  kelvin_grind_set_progress(g, watch, &w);
  if (kelvin_grind_optimise(g, dev) != KELVIN_OK) fail_msg("%s", kelvin_grind_errmsg(g));
  printf("# %d progress calls, fractions in [%g, %g], the last %g: '%s'\n", w.calls, w.fmin, w.fmax, w.flast, w.last);
  assert_true(w.calls >= 4);
  assert_true(w.fmin >= 0 && w.fmax <= 1);
  assert_true(w.flast == 1);

  seen w2 = {0, 2, NULL, INFINITY, -INFINITY, NAN, 0, ""};
  kelvin_grind_set_progress(g, watch, &w2);
  assert_int_equal(kelvin_grind_optimise(g, dev), KELVIN_ERR_STOPPED);
  assert_int_equal(w2.calls, 2);
  assert_int_equal(kelvin_grind_npass(g), 0);
  assert_non_null(strstr(kelvin_grind_errmsg(g), "stopped by the caller"));

  assert_int_equal(kelvin_grind_set(g, "verify.substep_fraction", 1e-3), KELVIN_OK);
  seen w3 = {0, 0, "verification: pass", INFINITY, -INFINITY, NAN, 0, ""};
  kelvin_grind_set_progress(g, watch, &w3);
  assert_int_equal(kelvin_grind_optimise(g, dev), KELVIN_ERR_STOPPED);
  const double late = wall() - w3.t_stop;
  printf("# stopped in the verification ('%s'): returned %.3f s later; %s\n", w3.last, late, kelvin_grind_errmsg(g));
  assert_true(late < 0.5);
  assert_non_null(strstr(kelvin_grind_errmsg(g), "stopped by the caller"));

  kelvin_grind_set_progress(g, NULL, NULL);
  assert_int_equal(kelvin_grind_set(g, "verify.time_limit", 0.3), KELVIN_OK);
  const double t0 = wall();
  assert_int_equal(kelvin_grind_optimise(g, dev), KELVIN_ERR_LIMIT);
  const double took = wall() - t0;
  printf("# verify.time_limit 0.3 s: returned after %.2f s: %s\n", took, kelvin_grind_errmsg(g));
  assert_true(took < 5);
  assert_non_null(strstr(kelvin_grind_errmsg(g), "over verify.time_limit (0.3 s)"));
  assert_int_equal(kelvin_grind_npass(g), 0);
  kelvin_device_free(dev);
  kelvin_grind_free(g);
}

/* What the program used to know alone, now the library's: the problem's numbers (path, samples and
 * F_ref of the plate, and the derived offset.min: the naive offset less offset.margin, by Hertz written
 * out here), the diagnosis of a target the bounds cannot reach (a 2..12 N ramp with the offsets held to
 * [0.95, 1.05] mm: 12 N needs about 2 mm, so the offsets sit at offset.max), the disagreement warning
 * (verify.tolerance 0 flags every verified pass; the text carries the agreement in %.2f), and the lines
 * of a loaded config file in the messages (not for a key set after the load). */
static void test_grind_library_knows(void **state)
{
  (void)state;
  kelvin_grind *g = plate(41);
  kelvin_device *dev = NULL;
  assert_int_equal(kelvin_device_create(&dev), KELVIN_OK);
  assert_int_equal(kelvin_device_open(dev, NULL, KELVIN_DEVICE_CPU), KELVIN_OK);
  assert_true(isnan(kelvin_grind_problem_value(g, KELVIN_PROBLEM_LENGTH)));
  assert_int_equal(kelvin_grind_set(g, "verify.tolerance", 0), KELVIN_OK);
  if (kelvin_grind_optimise(g, dev) != KELVIN_OK) fail_msg("%s", kelvin_grind_errmsg(g));
  assert_rel(kelvin_grind_problem_value(g, KELVIN_PROBLEM_LENGTH), 0.1, 1e-12, "path length");
  assert_true(kelvin_grind_problem_value(g, KELVIN_PROBLEM_SAMPLES) == 41);
  assert_rel(kelvin_grind_problem_value(g, KELVIN_PROBLEM_FORCE_REF), 5, 1e-12, "F_ref");
  const double es = 1 / ((1 - 0.22 * 0.22) / 200e9 + (1 - 0.33 * 0.33) / 70e9), K = 4.0 / 3.0 * es * sqrt(6e-3);
  double omin = NAN;
  assert_int_equal(kelvin_grind_problem_get(g, "offset.min", &omin), KELVIN_OK);
  assert_rel(omin, pow(5 / K, 2.0 / 3.0) + 3.0 / 5000 - 1e-3, 1e-12, "the derived offset.min");
  double X[41];
  assert_int_equal(kelvin_grind_pass_series(g, 0, KELVIN_SERIES_X, X), KELVIN_OK);
  assert_rel(X[40], 0.05, 1e-12, "the path's last x");
  assert_true(kelvin_grind_run_value(g, KELVIN_RUN_NAIVE) == 0);
  assert_null(kelvin_grind_diagnosis(g)); /* the plate's target is reached */
  const double agree = kelvin_grind_pass_value(g, 0, KELVIN_PASS_AGREEMENT);
  char want[256];
  snprintf(want, sizeof want, "device prediction and 3-D verification of 'naive' differ by %.2f %% RMS (> 0.00 %%)",
           100 * agree);
  assert_non_null(kelvin_grind_pass_warning(g, 0));
  assert_string_equal(kelvin_grind_pass_warning(g, 0), want);
  for (int i = 0; i < kelvin_grind_npass(g); ++i)
    if (kelvin_grind_pass_value(g, i, KELVIN_PASS_VERIFIED) == 0) assert_null(kelvin_grind_pass_warning(g, i));

  /* the ramp the bounds cannot follow */
  const double ts[2] = {0, 0.1}, tF[2] = {2, 12};
  assert_int_equal(kelvin_grind_set_target(g, ts, tF, 2), KELVIN_OK);
  assert_int_equal(kelvin_grind_set(g, "target.max_force", 15), KELVIN_OK); /* 12 N is above the default 10 N limit */
  assert_int_equal(kelvin_grind_set(g, "offset.min", 0.00095), KELVIN_OK);
  assert_int_equal(kelvin_grind_set(g, "offset.max", 0.00105), KELVIN_OK);
  if (kelvin_grind_optimise(g, dev) != KELVIN_OK) fail_msg("%s", kelvin_grind_errmsg(g));
  const char *d = kelvin_grind_diagnosis(g);
  printf("# %s\n", d ? d : "(no diagnosis)");
  assert_non_null(d);
  assert_non_null(strstr(d, "target not reachable: the best pass ('"));
  assert_non_null(strstr(d, "limited by offset.max"));

  /* config lines */
  FILE *f = fopen("api_line.yaml", "w");
  assert_non_null(f);
  fputs("tool: {radius: 6e-3}\nspeed:\n  min: 0.05\n  max: 0.01\n", f);
  fclose(f);
  assert_int_equal(kelvin_grind_load(g, "api_line.yaml"), KELVIN_OK);
  const kelvin_status st1 = kelvin_grind_prepare(g);
  char m1[1024];
  snprintf(m1, sizeof m1, "%s", kelvin_grind_errmsg(g));
  assert_int_equal(kelvin_grind_set(g, "speed.min", 0.04), KELVIN_OK);
  const kelvin_status st2 = kelvin_grind_prepare(g);
  remove("api_line.yaml");
  printf("# %s\n# %s\n", m1, kelvin_grind_errmsg(g));
  assert_int_equal(st1, KELVIN_ERR_CONFIG);
  assert_int_equal(st2, KELVIN_ERR_CONFIG);
  assert_int_equal(strncmp(m1, "api_line.yaml:3: speed.min (0.05) must be < speed.max (0.01)", 60), 0);
  assert_int_equal(strncmp(kelvin_grind_errmsg(g), "api_line.yaml: speed.min (0.04)", 31), 0);
  kelvin_device_free(dev);
  kelvin_grind_free(g);
}

/* kelvin_grind_read_pass: a pass linear in s over the plate's path (s from 0 to 0.1 m) read onto the 41
 * samples is that line at s_k = 0.0025 k (to rounding: 1e-12); speeds in mm/s are refused with the hint. */
static void test_grind_read_pass(void **state)
{
  (void)state;
  kelvin_grind *g = plate(41);
  FILE *f = fopen("api_pass.csv", "w");
  assert_non_null(f);
  fputs("s_m,offset_m,speed_m_s\n0,0.0006,0.01\n0.1,0.0007,0.02\n", f);
  fclose(f);
  double o[41], v[41];
  const kelvin_status st = kelvin_grind_read_pass(g, "api_pass.csv", o, v);
  if (st != KELVIN_OK) fail_msg("%s", kelvin_grind_errmsg(g));
  for (int k = 0; k < 41; ++k) {
    const double s = 0.0025 * k;
    assert_rel(o[k], 0.0006 + 0.001 * s, 1e-12, "offset read and interpolated");
    assert_rel(v[k], 0.01 + 0.1 * s, 1e-12, "speed read and interpolated");
  }
  f = fopen("api_pass.csv", "w");
  assert_non_null(f);
  fputs("s_m,offset_m,speed_m_s\n0,0.0006,15\n0.1,0.0006,15\n", f);
  fclose(f);
  const kelvin_status st2 = kelvin_grind_read_pass(g, "api_pass.csv", o, v);
  remove("api_pass.csv");
  assert_int_equal(st2, KELVIN_ERR_CONFIG);
  printf("# %s\n", kelvin_grind_errmsg(g));
  assert_non_null(strstr(kelvin_grind_errmsg(g), "api_pass.csv:2: column 'speed_m_s': 15 m/s is outside"));
  assert_non_null(strstr(kelvin_grind_errmsg(g), "is it in mm/s?"));
  kelvin_grind_free(g);
}

/* the texts a progress callback is given, in order */
typedef struct texts {
  int n;
  char t[512][160];
} texts;

static int keep_text(void *ctx, double fraction, const char *text)
{
  (void)fraction;
  texts *w = ctx;
  if (w->n < 512) snprintf(w->t[w->n++], sizeof w->t[0], "%s", text);
  return 0;
}

/* The progress texts of a run (kelvin_grind_set_progress; optimiser/pipeline.c, optimiser/verify3d.c): the
 * first call is the screening's tick (none before it to hold it back) with the candidates done, all 64 in
 * the one chunk of 1024; the 3-D verification of the naive pass and the best one (verify.count 1) says of
 * each pass once that it started, "(1 of 2)" and "(2 of 2)", and once after that that it is done, in a time
 * between 0 and the run's wall time. */
static void test_grind_progress_texts(void **state)
{
  (void)state;
  kelvin_grind *g = plate(41);
  kelvin_device *dev = NULL;
  assert_int_equal(kelvin_device_create(&dev), KELVIN_OK);
  assert_int_equal(kelvin_device_open(dev, NULL, KELVIN_DEVICE_CPU), KELVIN_OK);
  texts *w = calloc(1, sizeof *w);
  assert_non_null(w);
  kelvin_grind_set_progress(g, keep_text, w);
  const double t0 = wall();
  if (kelvin_grind_optimise(g, dev) != KELVIN_OK) fail_msg("%s", kelvin_grind_errmsg(g));
  const double took = wall() - t0;
  assert_true(w->n > 0 && w->n < 512);
  printf("# %d progress texts in %.2f s, the first '%s'\n", w->n, took, w->t[0]);
  assert_string_equal(w->t[0], "  screening: 64/64 candidates");
  char label[3][64] = {"", "", ""};
  int started[3] = {0, 0, 0}, done[3] = {0, 0, 0}, expect[3] = {0, 0, 0};
  for (int i = 0; i < w->n; ++i) {
    const char *s = w->t[i];
    if (strncmp(s, "verification: pass '", 20) != 0) continue;
    printf("# %s\n", s);
    const char *q = strchr(s + 20, '\'');
    assert_non_null(q);
    char lab[64];
    assert_true(q - (s + 20) < (int)sizeof lab);
    snprintf(lab, sizeof lab, "%.*s", (int)(q - (s + 20)), s + 20);
    int a = 0, b = 0, end = 0;
    double sec = NAN;
    if (sscanf(q, "' (%d of %d) started%n", &a, &b, &end) == 2 && q[end] == '\0') {
      assert_int_equal(b, 2);
      assert_true(a == 1 || a == 2);
      assert_int_equal(started[a]++, 0);
      snprintf(label[a], sizeof label[a], "%s", lab);
    } else if (sscanf(q, "' done in %lf s%n", &sec, &end) == 1 && q[end] == '\0') {
      a = strcmp(lab, label[1]) == 0 ? 1 : strcmp(lab, label[2]) == 0 ? 2 : 0;
      assert_true(a > 0); /* said to be done after it was said to start */
      assert_int_equal(done[a]++, 0);
      assert_true(sec >= 0 && sec <= took);
    } else if (sscanf(q, "' is expected to take about %lf s (%*f %% done in %*f s)%n", &sec, &end) == 1 && q[end] == '\0') {
      /* said of a pass still running after 1 s (slow builds: sanitizers, a loaded machine), once, after it started */
      a = strcmp(lab, label[1]) == 0 ? 1 : strcmp(lab, label[2]) == 0 ? 2 : 0;
      assert_true(a > 0 && done[a] == 0);
      assert_int_equal(expect[a]++, 0);
      assert_true(sec > 1.0);
    } else {
      fail_msg("unexpected text '%s'", s);
    }
  }
  assert_true(started[1] == 1 && started[2] == 1 && done[1] == 1 && done[2] == 1);
  assert_true(strcmp(label[1], label[2]) != 0);
  free(w);
  kelvin_device_free(dev);
  kelvin_grind_free(g);
}

/* A config file at a path of 1000 characters (below the 1024 the handle keeps) still names itself and
 * the line in a message about its setting: "PATH:3: speed.min ..." (api/grind.c locate). */
static void test_grind_long_config_path(void **state)
{
  (void)state;
  char path[1001] = "", dir[4][1001];
  for (int i = 0; i < 4; ++i) { /* four folders of 199 characters each, a file name of 200: 1000 in all */
    size_t n = strlen(path);
    memset(path + n, 'a' + i, 199);
    path[n + 199] = '\0';
    snprintf(dir[i], sizeof dir[i], "%s", path);
    assert_int_equal(mkdir(path, 0700) == 0 || errno == EEXIST, 1);
    strcat(path, "/");
  }
  const size_t n = strlen(path);
  memset(path + n, 'f', 195);
  snprintf(path + n + 195, sizeof path - n - 195, ".yaml");
  assert_int_equal(strlen(path), 1000);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("tool: {radius: 6e-3}\nspeed:\n  min: 0.05\n  max: 0.01\n", f);
  fclose(f);
  kelvin_grind *g = NULL;
  assert_int_equal(kelvin_grind_create(&g), KELVIN_OK);
  assert_int_equal(kelvin_grind_load(g, path), KELVIN_OK);
  const kelvin_status st = kelvin_grind_prepare(g);
  char want[1100];
  snprintf(want, sizeof want, "%s:3: speed.min (0.05) must be < speed.max (0.01)", path);
  const char *m = kelvin_grind_errmsg(g);
  const int same = strncmp(m, want, strlen(want)) == 0;
  printf("# %.*s...%s\n", 20, m, m + (strlen(m) > 60 ? strlen(m) - 60 : 0));
  kelvin_grind_free(g);
  remove(path);
  for (int i = 3; i >= 0; --i) rmdir(dir[i]);
  assert_int_equal(st, KELVIN_ERR_CONFIG);
  assert_true(same);
}

/* kelvin_grind_contact on the plate with the defaults (a 6 mm steel ball, 200 GPa and 0.22, on aluminium,
 * 70 GPa and 0.33; the Hunt-Crossley family; a constant 5 N; the holder 5000 N/m) against Hertz written
 * out here: K = 4/3 E* sqrt(R), n = 1.5, the static depth (F/K)^(2/3), the compliance depth / (1.5 F),
 * the share c / (c + 1/5000); before kelvin_grind_prepare KELVIN_ERR_ARG and the struct zeroed. */
static void test_grind_contact_info(void **state)
{
  (void)state;
  kelvin_grind *g = plate(41);
  kelvin_grind_contact_info ci;
  memset(&ci, 0xff, sizeof ci);
  assert_int_equal(kelvin_grind_contact(g, &ci), KELVIN_ERR_ARG);
  assert_true(ci.model == NULL && ci.force == 0 && ci.share == 0);
  assert_int_equal(kelvin_grind_prepare(g), KELVIN_OK);
  assert_int_equal(kelvin_grind_contact(g, &ci), KELVIN_OK);
  const double es = 1 / ((1 - 0.22 * 0.22) / 200e9 + (1 - 0.33 * 0.33) / 70e9), K = 4.0 / 3.0 * es * sqrt(6e-3);
  const double d = pow(5 / K, 2.0 / 3.0), c = d / 7.5;
  printf("# %s, K %.6g, force %g N, depth %.4g m, compliance %.4g m/N, share %.4g\n", ci.model, ci.K, ci.force,
         ci.depth, ci.compliance, ci.share);
  assert_string_equal(ci.model, "hc");
  assert_rel(ci.K, K, 1e-12, "K");
  assert_true(ci.n == 1.5 && ci.D == 0);
  assert_rel(ci.force, 5, 1e-12, "the mean target force");
  assert_rel(ci.depth, d, 1e-12, "the static depth");
  assert_rel(ci.compliance, c, 1e-12, "the compliance");
  assert_rel(ci.holder_compliance, 1 / 5000.0, 1e-12, "the holder's compliance");
  assert_rel(ci.share, c / (c + 1 / 5000.0), 1e-12, "the contact's share");
  kelvin_grind_free(g);
}

/* Bounded physics in the 3-D verification (docs/design.md section 8, "Bounded physics"), on the
 * plate: a 1 g tool on a 1e9 N/m holder (sub-step 1/40 of 2 pi sqrt(m/K) = 1.57e-7 s over a pass of some
 * 7 s: 4e7 sub-steps, over the 2.4e7 that verify.time_limit's 120 s allow at 2e5 a second) and a disc of
 * inertia 1e-12 kg m^2 (effective mass at its rim 1 / (1/m + R'^2/I), R' = sqrt(R^2 + (w/2)^2) its reach)
 * are refused up front, within a second; restitution 1e-6 (the exact law's chi 1e8 s/m) diverges, and the
 * message says so, with the force and the damping's time scale, instead of judging the target: the tool
 * is flung off at once and its holder's force is what is caught (measured: 4.6e22 N at t = 1e-6 s). */
static void test_grind_bounded(void **state)
{
  (void)state;
  kelvin_device *dev = NULL;
  assert_int_equal(kelvin_device_create(&dev), KELVIN_OK);
  assert_int_equal(kelvin_device_open(dev, NULL, KELVIN_DEVICE_CPU), KELVIN_OK);
  const double pi = 3.14159265358979323846;
  char want[160];
  kelvin_grind *g = plate(41);
  assert_int_equal(kelvin_grind_set(g, "tool.mass", 1e-3), KELVIN_OK);
  assert_int_equal(kelvin_grind_set(g, "holder.stiffness", 1e9), KELVIN_OK);
  double t0 = wall();
  assert_int_equal(kelvin_grind_optimise(g, dev), KELVIN_ERR_LIMIT);
  printf("# stiff holder (%.2f s): %s\n", wall() - t0, kelvin_grind_errmsg(g));
  assert_true(wall() - t0 < 5);
  snprintf(want, sizeof want, "(sub-step %.3g s, 1/40 of the holder period", 0.025 * 2 * pi * sqrt(1e-3 / 1e9));
  assert_non_null(strstr(kelvin_grind_errmsg(g), "refused up front"));
  assert_non_null(strstr(kelvin_grind_errmsg(g), want));
  assert_non_null(strstr(kelvin_grind_errmsg(g), "holder stiffness 1e+09 N/m"));
  assert_int_equal(kelvin_grind_npass(g), 0);
  kelvin_grind_free(g);

  g = plate(41);
  const double I[3] = {1e-12, 1e-12, 1e-12};
  assert_int_equal(kelvin_grind_set_string(g, "tool.shape", "disc"), KELVIN_OK);
  assert_int_equal(kelvin_grind_set_array(g, "tool.inertia", I, 3), KELVIN_OK);
  double R = 0, wd = 0, m = 0;
  assert_int_equal(kelvin_grind_get(g, "tool.radius", &R), KELVIN_OK);
  assert_int_equal(kelvin_grind_get(g, "tool.width", &wd), KELVIN_OK);
  assert_int_equal(kelvin_grind_get(g, "tool.mass", &m), KELVIN_OK);
  t0 = wall();
  assert_int_equal(kelvin_grind_optimise(g, dev), KELVIN_ERR_LIMIT);
  printf("# light disc (%.2f s): %s\n", wall() - t0, kelvin_grind_errmsg(g));
  assert_true(wall() - t0 < 5);
  snprintf(want, sizeof want, "effective mass %.3g kg", 1 / (1 / m + (R * R + wd * wd / 4) / 1e-12));
  assert_non_null(strstr(kelvin_grind_errmsg(g), "refused up front"));
  assert_non_null(strstr(kelvin_grind_errmsg(g), want));
  kelvin_grind_free(g);

  g = plate(41);
  assert_int_equal(kelvin_grind_set(g, "contact.cr", 1e-6), KELVIN_OK);
  t0 = wall();
  assert_int_equal(kelvin_grind_optimise(g, dev), KELVIN_ERR_DIVERGED);
  printf("# cr 1e-6 (%.2f s): %s\n", wall() - t0, kelvin_grind_errmsg(g));
  assert_true(wall() - t0 < 5);
  assert_non_null(strstr(kelvin_grind_errmsg(g), "diverged"));
  assert_non_null(strstr(kelvin_grind_errmsg(g), "a holder force of")); /* the tool flung off: caught at once */
  assert_non_null(strstr(kelvin_grind_errmsg(g), "beyond the force limit 1e+05 N"));
  assert_non_null(strstr(kelvin_grind_errmsg(g), "the contact damping (contact.cr 1e-06"));
  assert_null(strstr(kelvin_grind_errmsg(g), "not reachable"));
  assert_null(kelvin_grind_diagnosis(g));
  assert_int_equal(kelvin_grind_npass(g), 0);
  kelvin_grind_free(g);
  kelvin_device_free(dev);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_version_and_status), cmocka_unit_test(test_names), cmocka_unit_test(test_check_file), cmocka_unit_test(test_closed_forms),
    cmocka_unit_test(test_impact_batch),       cmocka_unit_test(test_world),
    cmocka_unit_test(test_grind_settings),     cmocka_unit_test(test_grind_run),
    cmocka_unit_test(test_grind_path_two_points), cmocka_unit_test(test_grind_progress_stop),
    cmocka_unit_test(test_grind_bounded),
    cmocka_unit_test(test_grind_library_knows), cmocka_unit_test(test_grind_read_pass),
    cmocka_unit_test(test_grind_progress_texts), cmocka_unit_test(test_grind_long_config_path),
    cmocka_unit_test(test_grind_contact_info),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
