/* tests/rollout_score_test.c: the objective of a grinding pass (kernels/kl_rollout.h, docs/design.md
 * section 5, "Objective") against values computed directly in this file:
 *   - the scoring functions on a hand-made force trace: RMS force error, loss, over-force, time,
 *     roughness, acceleration penalty and the weighted sum, each written out here;
 *   - whole rollouts whose force is known without integrating: a pass that never touches the part
 *     (force 0, loss 1) and a pass resting in static contact on a flat part (the force solves the
 *     equilibrium K_h (o + h - d) + F_g = F_N(d), solved here by bisection on the law written out);
 *   - the same candidates through host/rollout_batch.c on the OpenMP twin and, when there is one, on
 *     the OpenCL device (kernels/rollout.cl): every candidate, the last work-item included, must carry
 *     its own hand-computed objective. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "host/rollout_batch.h"
#include "kernels/kl_rollout.h"

#define RMS_BY_HAND 0.6587867636800242

static double rel(double a, double b) { return fabs(a - b) / fabs(b); }

static void default_gp(double *gp)
{
  memset(gp, 0, KL_GP_N * sizeof *gp);
  gp[KL_GP_KH] = 5000.0;
  gp[KL_GP_DH] = 40.0;
  gp[KL_GP_MODEL] = KL_MODEL_KV;
  gp[KL_GP_KC] = 2e6;
  gp[KL_GP_NC] = 1.0;
  gp[KL_GP_DC] = 200.0;
  gp[KL_GP_FTOL] = 1e-4;
  gp[KL_GP_FREF] = 5.0;
  gp[KL_GP_FMAX] = 8.0;
  gp[KL_GP_AMAX] = 0.05;
  gp[KL_GP_OSCALE] = 1e-3;
  gp[KL_GP_VSCALE] = 0.03;
  gp[KL_GP_TREF] = 2.0;
  gp[KL_GP_AVG] = 1.0;
  gp[KL_GP_MAXSUB] = 100000;
  gp[KL_GP_W_RMS] = 1.0;
  gp[KL_GP_W_LOSS] = 5.0;
  gp[KL_GP_W_OVER] = 10.0;
  gp[KL_GP_W_TIME] = 0.02;
  gp[KL_GP_W_ROUGH] = 1e-4;
  gp[KL_GP_W_ACC] = 10.0;
}

/* the objective terms written out (docs/design.md section 5): over the n intervals k = 1..n ending at
 * sample k, with e_k = (F_k - F*_k)/F_ref,
 *   rms   = sqrt(sum e_k^2 / n)
 *   loss  = (time out of contact) / T
 *   over  = sum (max(0, F_k - F_max)/F_ref)^2 / n
 *   time  = T / T_ref
 *   rough = sum_{k>=2} [((o_k - 2 o_{k-1} + o_{k-2})/o_scale)^2 + ((v_k - 2 v_{k-1} + v_{k-2})/v_scale)^2] / (n - 1)
 *   acc   = sum max(0, |v dv/ds| / a_max - 1)^2 / n, v dv/ds = (v_{k-1} + v_k)/2 (v_k - v_{k-1}) / ds_k
 *   J     = w_rms rms + w_loss loss + w_over over + w_time time + w_rough rough + w_acc acc */
typedef struct terms {
  double rms, loss, over, time, rough, acc, J;
} terms;

static terms direct(const double *gp, int ns, const double *s, const double *F, const double *Ft, const double *o,
                    const double *v, double tfree, double T)
{
  terms r = {0, 0, 0, 0, 0, 0, 0};
  const int n = ns - 1;
  for (int k = 1; k < ns; ++k) {
    const double e = (F[k] - Ft[k]) / gp[KL_GP_FREF];
    r.rms += e * e / n;
    const double ov = F[k] > gp[KL_GP_FMAX] ? (F[k] - gp[KL_GP_FMAX]) / gp[KL_GP_FREF] : 0.0;
    r.over += ov * ov / n;
    const double a = fabs(0.5 * (v[k - 1] + v[k]) * (v[k] - v[k - 1]) / (s[k] - s[k - 1]));
    const double x = a / gp[KL_GP_AMAX] - 1.0;
    r.acc += x > 0 ? x * x / n : 0.0;
    if (k >= 2) {
      const double d2o = (o[k] - 2.0 * o[k - 1] + o[k - 2]) / gp[KL_GP_OSCALE];
      const double d2v = (v[k] - 2.0 * v[k - 1] + v[k - 2]) / gp[KL_GP_VSCALE];
      r.rough += (d2o * d2o + d2v * d2v) / (n - 1);
    }
  }
  r.rms = sqrt(r.rms);
  r.loss = tfree / T;
  r.time = T / gp[KL_GP_TREF];
  r.J = gp[KL_GP_W_RMS] * r.rms + gp[KL_GP_W_LOSS] * r.loss + gp[KL_GP_W_OVER] * r.over + gp[KL_GP_W_TIME] * r.time +
        gp[KL_GP_W_ROUGH] * r.rough + gp[KL_GP_W_ACC] * r.acc;
  return r;
}

/* compare the kernel's objective terms (obj[term*P + p]) with the direct ones; tol relative */
static double check_terms(const char *what, const double *obj, int P, int p, terms d, double tol)
{
  const double got[7] = {obj[KL_OBJ_RMS * P + p],  obj[KL_OBJ_LOSS * P + p],  obj[KL_OBJ_OVER * P + p],
                         obj[KL_OBJ_TIME * P + p], obj[KL_OBJ_ROUGH * P + p], obj[KL_OBJ_ACC * P + p],
                         obj[KL_OBJ_J * P + p]};
  const double want[7] = {d.rms, d.loss, d.over, d.time, d.rough, d.acc, d.J};
  static const char *name[7] = {"rms", "loss", "over", "time", "rough", "acc", "J"};
  double worst = 0;
  for (int i = 0; i < 7; ++i) {
    const double e = want[i] == 0.0 ? fabs(got[i]) : rel(got[i], want[i]);
    worst = fmax(worst, e);
    if (!(e <= tol))
      fail_msg("%s, candidate %d: %s = %.17g, direct %.17g (rel %.2e > %.0e)", what, p, name[i], got[i], want[i], e, tol);
  }
  return worst;
}

/*------- the scoring functions on a hand-made trace -------------------------------------------------*/

/* Six samples, five intervals: forces below, at and above the target and the over-force threshold, a
 * feed that accelerates past a_max, time out of contact on two intervals. Every term is nonzero.
 * Tolerance 3e-15 relative: the same sums in another order (measured 2.8e-16). */
static void test_score_hand_trace(void **state)
{
  (void)state;
  double gp[KL_GP_N];
  default_gp(gp);
  const int ns = 6;
  const double s[6] = {0.0, 0.001, 0.002, 0.0035, 0.0045, 0.0055};
  const double F[6] = {5.0, 4.0, 6.0, 9.0, 5.5, 12.0};
  const double Ft[6] = {5.0, 5.0, 5.0, 5.0, 6.0, 6.0};
  const double o[6] = {1e-4, 1.2e-4, 1.1e-4, 1.5e-4, 1.5e-4, 0.9e-4};
  const double v[6] = {0.01, 0.012, 0.02, 0.03, 0.03, 0.01};
  const double tf[6] = {0.0, 0.0, 0.1, 0.0, 0.0, 0.05};
  const double T = 3.0;
  kl_grind_acc a;
  kl_grind_acc_init(&a);
  for (int k = 1; k < ns; ++k)
    kl_grind_acc_add(&a, gp, F[k], Ft[k], s[k] - s[k - 1], o[k - 1], o[k], v[k - 1], v[k], k >= 2, k >= 2 ? o[k - 2] : 0.0,
                     k >= 2 ? v[k - 2] : 0.0, tf[k]);
  double obj[KL_OBJ_N];
  kl_grind_acc_finish(&a, gp, T, 17, KL_OK, 1, 0, obj);
  const terms d = direct(gp, ns, s, F, Ft, o, v, 0.15, T);
  assert_true(d.rms > 0 && d.loss > 0 && d.over > 0 && d.time > 0 && d.rough > 0 && d.acc > 0);
  const double worst = check_terms("hand trace", obj, 1, 0, d, 3e-15);
  assert_true(obj[KL_OBJ_T] == T && obj[KL_OBJ_NSUB] == 17.0 && obj[KL_OBJ_STATUS] == 0.0);
  /* the RMS metric itself, by hand: e = ((4-5), (6-5), (9-5), (5.5-6), (12-6))/5 = (-0.2, 0.2, 0.8, -0.1, 1.2)
   * -> sum e^2 = 0.04 + 0.04 + 0.64 + 0.01 + 1.44 = 2.17, rms = sqrt(2.17 / 5) = sqrt(0.434) = 0.65878676...;
   * over: (9-8)/5 = 0.2, (12-8)/5 = 0.8 -> (0.04 + 0.64)/5 = 0.136; loss 0.15 s / 3 s = 0.05 */
  assert_true(rel(obj[KL_OBJ_RMS], RMS_BY_HAND) <= 1e-15);
  assert_true(rel(obj[KL_OBJ_OVER], 0.136) <= 1e-15);
  assert_true(rel(obj[KL_OBJ_LOSS], 0.05) <= 1e-15);
  /* a failed pass is never a good one */
  kl_grind_acc_finish(&a, gp, T, 17, KL_NO_CONVERGE, 1, 0, obj);
  assert_true(obj[KL_OBJ_J] >= 1e299);
  printf("  hand trace: worst relative error of the 7 terms %.2e (tolerance 3e-15); rms %.6f by hand\n", worst,
         RMS_BY_HAND);
}

/*------- whole rollouts with a force known in advance ------------------------------------------------*/

#define NS 41
#define L_PATH 0.04

typedef struct scene {
  double gp[KL_GP_N];
  double geo[NS * KL_GG_N];
  double s[NS], ft[NS];
  double h0, fg, m;
} scene;

/* flat part at protrusion h0 (constant), feed along s, target ramping from 5 to 6 N */
static void flat_scene(scene *sc, int model, double h0)
{
  memset(sc, 0, sizeof *sc);
  default_gp(sc->gp);
  sc->gp[KL_GP_MODEL] = model;
  if (model == KL_MODEL_HC) {
    sc->gp[KL_GP_KC] = 3e8; /* soft enough that the exponent moves the equilibrium visibly */
    sc->gp[KL_GP_NC] = 1.5;
    sc->gp[KL_GP_CHI] = 100.0; /* heavy damping: changes nothing at rest, everything in motion */
  }
  sc->h0 = h0;
  sc->fg = 2.0;
  sc->m = 1.5;
  for (int k = 0; k < NS; ++k) {
    double *g = &sc->geo[k * KL_GG_N];
    sc->s[k] = L_PATH * k / (NS - 1);
    sc->ft[k] = 5.0 + (double)k / (NS - 1);
    g[KL_GG_S] = sc->s[k];
    g[KL_GG_H] = h0;
    g[KL_GG_DH] = 0.0;
    g[KL_GG_M] = sc->m;
    g[KL_GG_FG] = sc->fg;
    g[KL_GG_FT] = sc->ft[k];
  }
}

/* static contact force for offset o: K_h (o + h0 - d) + F_g = F_N(d), d > 0 the penetration, with the
 * laws written out: Kelvin-Voigt at rest F = K d, Hunt-Crossley at rest F = K d^n. Bisection to the
 * last bit; 0 if the tool does not reach the part (o + h0 + F_g/K_h <= 0). */
static double static_force(const scene *sc, double o)
{
  const double Kh = sc->gp[KL_GP_KH], K = sc->gp[KL_GP_KC], n = sc->gp[KL_GP_NC];
  const double reach = o + sc->h0 + sc->fg / Kh;
  if (!(reach > 0)) return 0.0;
  double a = 0.0, b = reach;
  for (int it = 0; it < 2000 && b - a > 0; ++it) {
    const double c = 0.5 * (a + b);
    if (c <= a || c >= b) break;
    const double Fn = sc->gp[KL_GP_MODEL] == KL_MODEL_KV ? K * c : K * pow(c, n);
    if (Kh * (reach - c) - Fn > 0) a = c;
    else b = c;
  }
  const double d = 0.5 * (a + b);
  return sc->gp[KL_GP_MODEL] == KL_MODEL_KV ? K * d : K * pow(d, n);
}

/* T = sum ds_k log(v_k/v_{k-1}) / (v_k - v_{k-1}) (ds/dt = v, v linear in s), written out */
static double pass_time(const double *s, const double *v)
{
  double T = 0;
  for (int k = 1; k < NS; ++k) {
    const double ds = s[k] - s[k - 1];
    T += v[k] == v[k - 1] ? ds / v[k] : ds * log(v[k] / v[k - 1]) / (v[k] - v[k - 1]);
  }
  return T;
}

/* A pass that never touches: the part lies 1 mm below the tool's path, offsets wander by 0.2 mm and the
 * feed speeds up and slows down (the holder follows; the tool stays >= 0.4 mm away). Force 0 at every
 * sample, loss 1, time, roughness and acceleration from the commands alone. Tolerance 5e-15 relative:
 * the pass time is a sum of 40 exactly integrated durations, the loss the sum of the sub-step lengths
 * over it (measured worst 2e-16; a few more roundings if the sub-steps get more numerous). */
static void test_rollout_no_contact(void **state)
{
  (void)state;
  scene sc;
  flat_scene(&sc, KL_MODEL_KV, -1e-3);
  sc.gp[KL_GP_AMAX] = 0.005; /* the feed changes exceed it in places: the penalty is not zero */
  double ov[2 * NS], F[NS], obj[KL_OBJ_N], so[KL_SO_N * NS];
  for (int k = 0; k < NS; ++k) {
    ov[k] = 2e-4 * sin(0.3 * k) * sin(0.3 * k);
    ov[NS + k] = 0.01 + 0.006 * sin(0.2 * k);
    F[k] = 0.0;
  }
  kl_grind_rollout(sc.gp, NS, sc.geo, ov, 1, 0, obj, 1, so);
  assert_int_equal((int)obj[KL_OBJ_STATUS], KL_OK);
  for (int k = 0; k < NS; ++k) {
    assert_true(so[KL_SO_F * NS + k] == 0.0 && so[KL_SO_FAVG * NS + k] == 0.0 && so[KL_SO_C * NS + k] == 0.0);
    assert_true(so[KL_SO_Z * NS + k] + sc.h0 < -4e-4); /* never near the part */
  }
  const double T = pass_time(sc.s, ov + NS);
  const terms d = direct(sc.gp, NS, sc.s, F, sc.ft, ov, ov + NS, T, T);
  assert_true(d.rough > 0 && d.acc > 0 && fabs(d.loss - 1.0) < 1e-15);
  const double worst = check_terms("no contact", obj, 1, 0, d, 5e-15);
  assert_true(rel(obj[KL_OBJ_T], T) <= 5e-15);
  assert_true(rel(so[KL_SO_T * NS + NS - 1], T) <= 5e-15);
  printf("  no-contact pass: worst relative error of the terms %.2e (tolerance 5e-15)\n", worst);
}

/* A pass resting in static contact on a flat part (constant offset and feed: the start equilibrium is
 * kept): instantaneous and step-averaged force equal the static force solved above at every sample,
 * loss 0, and every term follows. Both laws; for Hunt-Crossley the exponent moves the force by ~1e-3
 * of itself against n = 1.4. Tolerance 1e-12 relative on the force and the terms: the rollout starts
 * from its own bisection and its exact steps hold the rest state to rounding (measured 1.2e-13). */
static void test_rollout_static_contact(void **state)
{
  (void)state;
  double worst = 0;
  for (int model = 0; model <= 1; ++model) {
    for (int avg = 0; avg <= 1; ++avg) {
      scene sc;
      flat_scene(&sc, model, 2e-4);
      sc.gp[KL_GP_AVG] = avg;
      double ov[2 * NS], F[NS], obj[KL_OBJ_N], so[KL_SO_N * NS];
      const double o = 4e-4;
      const double Fs = static_force(&sc, o);
      assert_true(Fs > 1.0);
      for (int k = 0; k < NS; ++k) {
        ov[k] = o;
        ov[NS + k] = 0.012;
        F[k] = Fs;
      }
      kl_grind_rollout(sc.gp, NS, sc.geo, ov, 1, 0, obj, 1, so);
      assert_int_equal((int)obj[KL_OBJ_STATUS], KL_OK);
      for (int k = 0; k < NS; ++k) {
        const double e = fmax(rel(so[KL_SO_F * NS + k], Fs), rel(so[KL_SO_FAVG * NS + k], Fs));
        worst = fmax(worst, e);
        if (!(e <= 1e-12 && so[KL_SO_C * NS + k] == 1.0))
          fail_msg("model %d avg %d sample %d: F %.15g, F_avg %.15g, static %.15g", model, avg, k, so[KL_SO_F * NS + k],
                   so[KL_SO_FAVG * NS + k], Fs);
      }
      const double T = pass_time(sc.s, ov + NS);
      const terms d = direct(sc.gp, NS, sc.s, F, sc.ft, ov, ov + NS, 0.0, T);
      worst = fmax(worst, check_terms(model ? "static HC" : "static KV", obj, 1, 0, d, 1e-12));
    }
  }
  printf("  static contact (KV, HC x instantaneous, averaged): worst relative error %.2e (tolerance 1e-12)\n", worst);
}

/*------- the batch paths: OpenMP twin and OpenCL device ----------------------------------------------*/

/* P candidates of constant offset, from far off the part to pressing hard, each scored against its own
 * static force: a candidate skipped or written to the wrong column fails. Samples are their own control
 * points (identity basis), so the expansion GEMM must reproduce them exactly. Tolerance 1e-12 as above
 * (measured 3.4e-14 on both paths). */
#define NP 7

static double run_batch(int cpu, int *ran)
{
  kl_host *h = NULL;
  assert_int_equal(kl_host_create(&h), KELVIN_OK);
  kl_host_opts op;
  kl_host_opts_default(&op);
  op.cpu = cpu;
  *ran = 0;
  if (kl_host_open(h, &op) != KELVIN_OK || (!cpu && !kl_host_is_opencl(h))) {
    printf("  %s path not available: %s\n", cpu ? "OpenMP" : "OpenCL", kl_host_errmsg(h));
    kl_host_destroy(h);
    return 0;
  }
  double worst = 0;
  for (int model = 0; model <= 1; ++model) {
    scene sc;
    flat_scene(&sc, model, 2e-4);
    const int nc = 2 * NS;
    double *basis = calloc((size_t)nc * nc, sizeof *basis);
    double ctrl[2 * NS * NP], obj[KL_OBJ_N * NP];
    assert_non_null(basis);
    for (int i = 0; i < nc; ++i) basis[(size_t)i * nc + i] = 1.0;
    const double offs[NP] = {-1.5e-3, -7e-4, 0.0, 2e-4, 4e-4, 8e-4, 1.6e-3};
    for (int p = 0; p < NP; ++p)
      for (int k = 0; k < NS; ++k) {
        ctrl[k * NP + p] = offs[p];
        ctrl[(NS + k) * NP + p] = 0.01 + 0.001 * p;
      }
    const kl_rollout_def def = {NS, nc, sc.gp, sc.geo, basis};
    kl_rollout *r = NULL;
    if (kl_rollout_create(h, &def, &r) != KELVIN_OK) fail_msg("rollout create: %s", kl_host_errmsg(h));
    for (int i = 0; i < KL_OBJ_N * NP; ++i) obj[i] = NAN;
    if (kl_rollout_eval(r, NP, ctrl, obj, NULL) != KELVIN_OK) fail_msg("rollout eval: %s", kl_host_errmsg(h));
    for (int p = 0; p < NP; ++p) {
      double o[NS], v[NS], F[NS];
      const double Fs = static_force(&sc, offs[p]);
      for (int k = 0; k < NS; ++k) {
        o[k] = offs[p];
        v[k] = 0.01 + 0.001 * p;
        F[k] = Fs;
      }
      const double T = pass_time(sc.s, v);
      const terms d = direct(sc.gp, NS, sc.s, F, sc.ft, o, v, Fs > 0 ? 0.0 : T, T);
      if ((int)obj[KL_OBJ_STATUS * NP + p] != KL_OK)
        fail_msg("model %d candidate %d (offset %g): status %g", model, p, offs[p], obj[KL_OBJ_STATUS * NP + p]);
      char what[64];
      snprintf(what, sizeof what, "%s %s", cpu ? "OpenMP twin" : "OpenCL", model ? "HC" : "KV");
      worst = fmax(worst, check_terms(what, obj, NP, p, d, 1e-12));
    }
    kl_rollout_destroy(r);
    free(basis);
  }
  kl_host_destroy(h);
  *ran = 1;
  return worst;
}

static void test_batch_paths(void **state)
{
  (void)state;
  int ran_cpu, ran_cl;
  const double wc = run_batch(1, &ran_cpu);
  assert_true(ran_cpu);
  const double wd = run_batch(0, &ran_cl);
  printf("  %d candidates x 2 laws, static force by hand: OpenMP twin worst %.2e", NP, wc);
  if (ran_cl) printf(", OpenCL worst %.2e", wd);
  else printf(", OpenCL not run (no device)");
  printf(" (tolerance 1e-12)\n");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_score_hand_trace),
    cmocka_unit_test(test_rollout_no_contact),
    cmocka_unit_test(test_rollout_static_contact),
    cmocka_unit_test(test_batch_paths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
