/* tests/robust_pipeline_test.c: the robust refinement (optimiser/pipeline.h kl_optimise_robust; docs/design.md
 * section 10) on a tiny problem whose robust optimum is worked out by hand. A flat part, a slow feed (the static
 * balance holds: K_h (o + h - delta) + F_g = K_c delta^n, F = K_c delta^n), and two scenarios: the nominal part and
 * the part standing 2 d = 4 um prouder (its protrusion h + 2 d), as the packed scenario arrays give them. The
 * nominal optimum meets F* on the nominal part alone; the robust optimum of
 *   mean (Levenberg-Marquardt: the mean of the scenarios' sums of squares): (F(x1) - F*)^2 + (F(x2) - F*)^2 least,
 *   worst (the larger error least) and mean_std, k = 2 (NLopt: mean + 2 sd of |e1|, |e2| least: |e1| = |e2|),
 * with x_s = o + h_s, is found here by bisection and golden section on that static balance, not by the code under
 * test. Also: every pass's robust objective is the refinement's own measure (NLopt: kl_robust_objective of the
 * J_s; LM: the statistic of the scenarios' kl_lm_phi) over each scenario's own rollout (not the scenario batch);
 * chance with method lm is refused; common random numbers (the same seed, the same scenarios bit for bit; the robust
 * objective over them the same on the twin and OpenCL); the out-of-sample check's 3-D forces of a spline pass
 * against the engine run here on each fresh scenario's own problem. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "host/host.h"
#include "host/rollout_batch.h"
#include "optimiser/lm.h"
#include "optimiser/pipeline.h"
#include "optimiser/problem.h"
#include "optimiser/robust_check.h"
#include "optimiser/scenario.h"
#include "optimiser/verify3d.h"

static kl_host *host;
#define D 2e-6 /* half the scenarios' difference in protrusion [m] */

static void flat(kl_settings *s, int method)
{
  kl_settings_default(s);
  s->surface = KL_SURF_PLANE;
  s->bead_h = 0, s->step_h = 0, s->tilt_deg = 0, s->rough_a = 0;
  s->path_x0 = -0.005, s->path_x1 = 0.005, s->ns = 41;
  s->extent[0] = 0.04, s->extent[1] = 0.02, s->resolution = 2e-4;
  s->tool_R = 0.01, s->tool_E = 200e6, s->tool_nu = 0.3, s->tool_mass = 3.0, s->tool_weight = 5.0;
  s->holder_K = 5e5, s->holder_D = 245, s->cr = 0.3, s->target_F = 8.0, s->max_F = 16.0;
  s->v_min = 0.001, s->v_max = 0.002, s->v_init = 0.0015; /* slow: the static balance holds */
  s->method = method, s->verify = 0;
  s->n_o = 6, s->n_v = 4, s->screening = 0, s->keep = 1, s->maxeval = 400;
  snprintf(s->algorithm, sizeof s->algorithm, "LN_BOBYQA"); /* derivative-free: mean + k sd has a kink */
  snprintf(s->correct, sizeof s->correct, "off");
}

/* the static force at depth x = o + h (the balance above, by bisection on delta) */
static double force(const kl_problem *pb, double x, double fg)
{
  const double Kh = pb->set.holder_K, Kc = pb->Kc, n = 1.5;
  double a = 0, b = x + fg / Kh; /* G(a) > 0 > G(b) */
  if (b <= 0) return 0;
  for (int i = 0; i < 200; ++i) {
    const double c = 0.5 * (a + b), G = Kh * (x - c) + fg - Kc * pow(c, n);
    if (G > 0) a = c; else b = c;
  }
  return Kc * pow(0.5 * (a + b), n);
}

/* the depth where the force is F* */
static double depth_of(const kl_problem *pb, double F, double fg)
{
  double a = -1e-3, b = 1e-3;
  for (int i = 0; i < 200; ++i) {
    const double c = 0.5 * (a + b);
    if (force(pb, c, fg) < F) a = c; else b = c;
  }
  return 0.5 * (a + b);
}

/* the scenarios' errors at offset o (h = 0): scenario s stands 2 D s / (nS - 1) prouder */
static void errors(const kl_problem *pb, double o, double F, double fg, int nS, double *e)
{
  for (int s = 0; s < nS; ++s) e[s] = force(pb, o + 2 * D * s / (nS - 1), fg) - F;
}

/* the o (at h = 0) minimising crit over the nS scenarios (0: the sum of squared errors; 1: the largest |error|;
 * 2: mean + 2 sd of |error|), golden section around the nominal depth */
static double best_o(const kl_problem *pb, double F, double fg, int nS, int crit)
{
  double a = depth_of(pb, F, fg) - 4 * D, b = a + 8 * D;
  const double g = 0.5 * (sqrt(5.0) - 1);
  for (int i = 0; i < 200; ++i) {
    double v[2];
    for (int j = 0; j < 2; ++j) {
      double e[16], m = 0, q = 0, w = 0, sd = 0;
      errors(pb, j ? a + g * (b - a) : b - g * (b - a), F, fg, nS, e);
      for (int t = 0; t < nS; ++t) m += fabs(e[t]) / nS, q += e[t] * e[t], w = fmax(w, fabs(e[t]));
      for (int t = 0; t < nS; ++t) sd += (fabs(e[t]) - m) * (fabs(e[t]) - m) / nS;
      v[j] = crit == 0 ? q : crit == 1 ? w : m + 2 * sqrt(sd);
    }
    if (v[0] < v[1]) b = a + g * (b - a); else a = b - g * (b - a);
  }
  return 0.5 * (a + b);
}

/* nS scenarios of pb: scenario s its part 2 D s / (nS - 1) prouder */
static void scenarios(const kl_problem *pb, int nS, double *gp, double *geo)
{
  const size_t ng = (size_t)pb->ns * KL_GG_N;
  for (int s = 0; s < nS; ++s) {
    memcpy(gp + s * KL_GP_N, pb->gp, KL_GP_N * sizeof *gp);
    memcpy(geo + s * ng, pb->geo, ng * sizeof *geo);
    for (int k = 0; k < pb->ns; ++k) geo[s * ng + (size_t)k * KL_GG_N + KL_GG_H] += 2 * D * s / (nS - 1);
  }
}

/* the robust objective of pass x over the nS scenarios, each from its own rollout (not the scenario batch): method
 * nlopt's, the statistic of the J_s (kl_robust_objective); method lm's, the statistic of each scenario's kl_lm_phi
 * (its sum of squares: force rows from that rollout's outputs, and the regularisation), as optimiser/lm.h says. The
 * scenarios here differ in the protrusion only, so pb's mass, weight and holder are each scenario's. */
static double robj_apart(const kl_problem *pb, const kl_robust_spec *sp, int nS, const double *gp, const double *geo,
                         const double *x, int nc)
{
  double obj[KL_OBJ_N * 16], one[KL_OBJ_N], work[32], phi[16];
  double *so = malloc(KL_SO_N * (size_t)pb->ns * sizeof *so);
  for (int s = 0; s < nS; ++s) {
    const kl_rollout_def def = {pb->ns, nc, gp + s * KL_GP_N, geo + (size_t)s * pb->ns * KL_GG_N, pb->basis, 0, NULL, NULL};
    kl_rollout *ro = NULL;
    assert_int_equal(kl_rollout_create(host, &def, &ro), KELVIN_OK);
    assert_int_equal(kl_rollout_eval(ro, 1, x, one, so), KELVIN_OK);
    for (int t = 0; t < KL_OBJ_N; ++t) obj[t * nS + s] = one[t];
    if (!pb->basis) phi[s] = kl_lm_phi(pb, x, so);
    kl_rollout_destroy(ro);
  }
  free(so);
  return pb->basis ? kl_robust_objective(sp, obj, nS, nS, work) : kl_robust_stat(sp, phi, nS, NULL, work);
}

/* run the robust pipeline with objective kind on method; the robust and the nominal pass's offsets at the middle
 * sample against the hand optimum o_hand (crit: 0 least squares, 1 the larger error) */
static void check(int method, int nS, int kind, double k, int crit, double otol, double ftol)
{
  kl_settings s;
  flat(&s, method);
  kl_problem *pb = NULL;
  char msg[1024];
  assert_int_equal(kl_problem_build(&s, NULL, &pb, msg, sizeof msg), KELVIN_OK);
  double gp[16 * KL_GP_N], *geo = malloc(16 * (size_t)pb->ns * KL_GG_N * sizeof *geo);
  scenarios(pb, nS, gp, geo);
  const kl_scen_set sc = {nS, gp, geo, {kind, k, 0.5, 0.9, 4.0, 16.0, pb->gp[KL_GP_FREF]}};
  kl_opt_result *res = calloc(1, sizeof *res);
  const kelvin_status st = kl_optimise_robust(pb, host, &sc, NULL, NULL, res, msg, sizeof msg);
  if (st != KELVIN_OK) printf("# %s\n", msg);
  assert_int_equal(st, KELVIN_OK);
  assert_true(res->robust >= 0 && res->nominal >= 0 && res->best == res->robust && res->scenarios == nS);
  const int ns = pb->ns, mid = ns / 2;
  double *o = malloc(2 * (size_t)ns * sizeof *o), *on = malloc(2 * (size_t)ns * sizeof *on);
  kl_problem_expand(pb, res->pass[res->robust].x, o, o + ns);
  kl_problem_expand(pb, res->pass[res->nominal].x, on, on + ns);
  const double fg = pb->fg[mid], F = pb->ft[mid];
  /* the step-averaged force sees the mean of neighbouring offsets: a zig-zag o_k = c + (-1)^k e (the measure's null
   * direction, which Levenberg-Marquardt's small damping may leave at slow feeds) changes no force; so the offset a
   * pass holds is the mean over the 16 middle samples */
  double om = 0, onm = 0;
  for (int j = mid - 8; j < mid + 8; ++j) om += o[j] / 16, onm += on[j] / 16;
  const double o_nom = depth_of(pb, F, fg) - pb->h[mid], o_hand = best_o(pb, F, fg, nS, crit) - pb->h[mid];
  printf("# %s %d: nominal o %.4f um (hand %.4f), robust %.4f um (hand %.4f): off by %.2e m (tolerance %.1e); "
         "%d rollouts, %s\n",
         method == KL_METHOD_LM ? "lm" : "nlopt", kind, 1e6 * onm, 1e6 * o_nom, 1e6 * om, 1e6 * o_hand,
         om - o_hand, otol, res->pass[res->robust].evals, res->pass[res->robust].stop);
  /* the robust objective at the hand optimum: the robust pass's speeds with its offsets all o_hand (a constant is
   * exact in the splines, whose basis sums to 1), through each scenario's own rollout */
  double *xh = malloc((size_t)pb->nc * sizeof *xh);
  memcpy(xh, res->pass[res->robust].x, (size_t)pb->nc * sizeof *xh);
  const int no = pb->basis ? pb->set.n_o : ns;
  for (int j = 0; j < no; ++j) xh[j] = o_hand;
  const double f_hand = robj_apart(pb, &sc.spec, nS, gp, geo, xh, pb->nc);
  const double f_rob = res->pass[res->robust].robj, f_nom = res->pass[res->nominal].robj;
  printf("# robust objective: nominal %.6g, robust %.6g, at the hand optimum %.6g\n", f_nom, f_rob, f_hand);
  free(xh);
  assert_true(fabs(onm - o_nom) < 1e-9);          /* the nominal optimum meets F* on the nominal part */
  assert_true(fabs(o_nom - o_hand) > 5 * otol);   /* the hand optimum is elsewhere: the test can tell them apart */
  assert_true(fabs(om - o_hand) < otol);         /* the robust pass holds it */
  assert_true(f_rob <= f_hand + ftol);           /* ... and reaches its robust objective */
  /* (NLopt's mean of the J_s would be flat between the scenarios' roots; LM's mean of sums of squares is not) */
  assert_true(f_nom - f_hand > 10 * ftol);
  /* every pass's robust objective against each scenario's own rollout */
  for (int i = 0; i < res->npass; ++i) {
    const double ra = robj_apart(pb, &sc.spec, nS, gp, geo, res->pass[i].x, pb->nc);
    assert_true(fabs(res->pass[i].robj - ra) <= 1e-12 * fabs(ra));
  }
  free(o);
  free(on);
  free(geo);
  kl_opt_result_free(res);
  free(res);
  kl_problem_free(pb);
}

/* tolerances: the offset 0.3 um, 3 x the largest measured miss (LM mean's 0.11 um, where its stopping rule, a
 * relative decrease below 1e-3, leaves about sqrt(1e-3) of the 2 um between the scenarios); the robust objective in
 * each method's measure: LM's 5e-5, 10 x its largest measured excess over the hand optimum's (worst: 5.0e-6 of
 * 2.06e-3); NLopt's 6e-4, 1 % of the J_s (it measured 1.1e-3 below the hand optimum's, which holds the middle
 * sample's offset everywhere) */
static void lm_mean(void **state) { (void)state; check(KL_METHOD_LM, 2, KL_ROBUST_MEAN, 0, 0, 3e-7, 5e-5); }
static void lm_worst(void **state) { (void)state; check(KL_METHOD_LM, 2, KL_ROBUST_WORST, 0, 1, 3e-7, 5e-5); }
static void nlopt_mean_std(void **state) { (void)state; check(KL_METHOD_NLOPT, 9, KL_ROBUST_MEAN_STD, 2.0, 2, 3e-7, 6e-4); }

static void lm_chance_refused(void **state)
{
  (void)state;
  kl_settings s;
  flat(&s, KL_METHOD_LM);
  kl_problem *pb = NULL;
  char msg[1024];
  assert_int_equal(kl_problem_build(&s, NULL, &pb, msg, sizeof msg), KELVIN_OK);
  double gp[2 * KL_GP_N], *geo = malloc(2 * (size_t)pb->ns * KL_GG_N * sizeof *geo);
  scenarios(pb, 2, gp, geo);
  const kl_scen_set sc = {2, gp, geo, {KL_ROBUST_CHANCE, 0, 0, 0.9, 4.0, 16.0, 8.0}};
  kl_opt_result *res = calloc(1, sizeof *res);
  assert_int_equal(kl_optimise_robust(pb, host, &sc, NULL, NULL, res, msg, sizeof msg), KELVIN_ERR_CONFIG);
  assert_non_null(strstr(msg, "optimiser.method nlopt"));
  kl_opt_result_free(res);
  free(res);
  free(geo);
  kl_problem_free(pb);
}

/* common random numbers: the same seed draws and packs the same scenarios bit for bit, and the robust objective of
 * the same candidates over them is the same on the OpenMP twin and on OpenCL (within 1e-12: the two compile the same
 * header, rounding may differ); another seed gives another set */
static void crn(void **state)
{
  (void)state;
  kl_settings s;
  flat(&s, KL_METHOD_NLOPT);
  s.unc_scenarios = 32, s.unc_objective = KL_ROBUST_CVAR, s.unc_alpha = 0.75;
  s.unc_holder_K = 0.1, s.unc_tool_mass = 0.2, s.unc_reg_z = 2e-6, s.unc_cr = 0.05;
  s.unc_holder_K_dist = s.unc_tool_mass_dist = s.unc_cr_dist = KL_DIST_TRUNCATED;
  kl_problem *pb = NULL;
  char msg[1024];
  assert_int_equal(kl_problem_build(&s, NULL, &pb, msg, sizeof msg), KELVIN_OK);
  const int S = 32, ns = pb->ns, nc = pb->nc, P = 3;
  const size_t ng = (size_t)S * ns * KL_GG_N;
  double *d[2], *gp[2], *geo[2];
  for (int i = 0; i < 2; ++i) {
    d[i] = malloc((size_t)S * KL_UNC_N * sizeof *d[i]);
    gp[i] = malloc((size_t)S * KL_GP_N * sizeof *gp[i]);
    geo[i] = malloc(ng * sizeof *geo[i]);
    assert_int_equal(kl_scenarios_draw(&pb->set, 0, S, d[i], msg, sizeof msg), KELVIN_OK);
    assert_int_equal(kl_scenarios_pack(pb, NULL, S, d[i], gp[i], geo[i], NULL, msg, sizeof msg), KELVIN_OK);
  }
  assert_memory_equal(d[0], d[1], (size_t)S * KL_UNC_N * sizeof *d[0]);
  assert_memory_equal(gp[0], gp[1], (size_t)S * KL_GP_N * sizeof *gp[0]);
  assert_memory_equal(geo[0], geo[1], ng * sizeof *geo[0]);
  kl_settings s2 = pb->set;
  s2.unc_seed = 7;
  assert_int_equal(kl_scenarios_draw(&s2, 0, S, d[1], msg, sizeof msg), KELVIN_OK);
  assert_memory_not_equal(d[0], d[1], (size_t)S * KL_UNC_N * sizeof *d[0]);
  /* three candidates: the naive pass, the guess 2 um shallower, the guess 2 um deeper */
  double *x = malloc((size_t)nc * P * sizeof *x), *ctrl = malloc((size_t)nc * P * sizeof *ctrl);
  kl_problem_naive(pb, x);
  kl_problem_guess(pb, x + nc);
  kl_problem_guess(pb, x + 2 * nc);
  for (int j = 0; j < pb->set.n_o; ++j) x[nc + j] -= 2e-6, x[2 * nc + j] += 2e-6;
  for (int p = 0; p < P; ++p)
    for (int j = 0; j < nc; ++j) ctrl[(size_t)j * P + p] = x[(size_t)p * nc + j];
  const kl_robust_spec sp = {KL_ROBUST_CVAR, 0, 0.75, 0.9, 4.0, 16.0, pb->gp[KL_GP_FREF]};
  double f[2][3];
  for (int dev = 0; dev < 2; ++dev) {
    kl_host *h = NULL;
    kl_host_opts o;
    kl_host_opts_default(&o);
    o.cpu = !dev;
    assert_int_equal(kl_host_create(&h), KELVIN_OK);
    if (kl_host_open(h, &o) != KELVIN_OK || (dev && !kl_host_is_opencl(h))) {
      printf("# no OpenCL device: the OpenCL half skipped\n");
      kl_host_destroy(h);
      f[1][0] = f[0][0], f[1][1] = f[0][1], f[1][2] = f[0][2];
      break;
    }
    const kl_rollout_def def = {ns, nc, pb->gp, pb->geo, pb->basis, 0, NULL, NULL};
    kl_rollout *ro = NULL;
    double *obj = malloc(KL_OBJ_N * (size_t)P * S * sizeof *obj), work[64];
    assert_int_equal(kl_rollout_create(h, &def, &ro), KELVIN_OK);
    assert_int_equal(kl_rollout_set_scenarios(ro, S, gp[0], geo[0]), KELVIN_OK);
    assert_int_equal(kl_rollout_eval_scenarios(ro, P, ctrl, obj, NULL), KELVIN_OK);
    for (int p = 0; p < P; ++p) f[dev][p] = kl_robust_objective(&sp, obj + (size_t)p * S, (long)P * S, S, work);
    kl_rollout_destroy(ro);
    kl_host_destroy(h);
    free(obj);
  }
  for (int p = 0; p < P; ++p) {
    printf("# candidate %d: CVaR 0.75 %.17g (twin) %.17g (OpenCL)\n", p, f[0][p], f[1][p]);
    assert_true(fabs(f[1][p] - f[0][p]) <= 1e-12 * fabs(f[0][p]));
  }
  /* the candidates differ: the comparison means something */
  assert_true(fabs(f[0][0] - f[0][1]) > 1e-3 * f[0][0] && fabs(f[0][2] - f[0][1]) > 1e-3 * f[0][0]);
  for (int i = 0; i < 2; ++i) {
    free(d[i]);
    free(gp[i]);
    free(geo[i]);
  }
  free(x);
  free(ctrl);
  kl_problem_free(pb);
}

/* The out-of-sample check's 3-D source of a spline pass (method nlopt: control points on the basis) against the 3-D
 * engine run here on each fresh scenario's own problem (kl_scenario_problem of the check's draw) with the commands
 * kl_problem_expand gives: the scored force at every sample the same, bit for bit (the same engine on the same
 * inputs). A faster feed than the tests above, so that the 3-D runs are short; the holder's stiffness spread. */
static void check_spline_3d(void **state)
{
  (void)state;
  kl_settings s;
  flat(&s, KL_METHOD_NLOPT);
  s.v_min = 0.02, s.v_max = 0.1, s.v_init = 0.05;
  s.unc_holder_K = 0.2;
  kl_problem *pb = NULL;
  char msg[1024];
  assert_int_equal(kl_problem_build(&s, NULL, &pb, msg, sizeof msg), KELVIN_OK);
  assert_non_null(pb->basis);
  const int ns = pb->ns, nc = pb->nc, nS = 2;
  double *x = malloc((size_t)nc * sizeof *x), *o = malloc(2 * (size_t)ns * sizeof *o);
  kl_problem_guess(pb, x);
  kl_problem_expand(pb, x, o, o + ns);
  kl_opt_result *res = calloc(1, sizeof *res);
  assert_int_equal(kl_opt_add(res, "guess", x, nc), 0);
  kl_check c;
  const int which[1] = {0};
  const kelvin_status st = kl_check_run(pb, NULL, host, pb->basis, res, which, 1, nS, 1, NULL, &c, msg, sizeof msg);
  if (st != KELVIN_OK) fail_msg("%s", msg);
  assert_int_equal(c.failed3d, 0);
  double *buf = malloc(5 * (size_t)ns * sizeof *buf);
  int *con = malloc((size_t)ns * sizeof *con);
  for (int sc = 0; sc < nS; ++sc) {
    kl_problem *q = NULL;
    assert_int_equal(kl_scenario_problem(pb, NULL, c.draw + (size_t)sc * KL_UNC_N, &q, msg, sizeof msg), KELVIN_OK);
    assert_true(q->set.holder_K != pb->set.holder_K); /* a scenario of its own */
    kl_v3_out out;
    memset(&out, 0, sizeof out);
    out.F = buf, out.Favg = buf + ns, out.Fc = buf + 2 * ns, out.Fcavg = buf + 3 * ns, out.t = buf + 4 * ns;
    out.contact = con;
    if (kl_verify3d_run(q, o, o + ns, &out, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
    const int avg = q->set.measure & KL_MEASURE_AVG_BIT;
    const double *Fs = (q->set.measure & KL_MEASURE_SENSOR_BIT) ? (avg ? out.Favg : out.F) : (avg ? out.Fcavg : out.Fc);
    for (int k = 0; k < ns; ++k) assert_true(c.F[1][(size_t)sc * ns + k] == Fs[k]);
    kl_problem_free(q);
  }
  free(buf);
  free(con);
  kl_check_free(&c);
  kl_opt_result_free(res);
  free(res);
  free(x);
  free(o);
  kl_problem_free(pb);
}

int main(void)
{
  kl_host_opts o;
  kl_host_opts_default(&o);
  o.cpu = 1;
  if (kl_host_create(&host) != KELVIN_OK || kl_host_open(host, &o) != KELVIN_OK) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(lm_mean), cmocka_unit_test(lm_worst),
                                     cmocka_unit_test(nlopt_mean_std), cmocka_unit_test(lm_chance_refused),
                                     cmocka_unit_test(crn), cmocka_unit_test(check_spline_3d)};
  const int rc = cmocka_run_group_tests_name("OpenMP twin", tests, NULL, NULL);
  kl_host_destroy(host);
  return rc;
}
