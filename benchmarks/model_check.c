/* benchmarks/model_check.c: what a mis-specified contact model does where the contact physics matters.
 * On a problem whose contact is a large share of the compliance (by default examples/optimise_stiff.yaml:
 * a stiff robot-held spindle, a resin-bonded ball, Hertz + Hunt-Crossley), the pass is optimised on the
 * device with the right contact model and with wrong ones -- a linear (Kelvin-Voigt) law, a Hertz
 * exponent of 1.4, a Hertz constant 44 % high, the damping halved, a rigid abrasive (the tool's modulus
 * that of steel) -- and every optimised pass (and each model's naive pass) is then verified in the 3-D
 * engine with the right model. The wrong laws of another exponent are calibrated through the right
 * law's force at the mean target (a user who measured one point), so they differ where the force moves.
 *
 *   model_check [config.yaml] [--cpu] [--quick]
 *
 * Prints a Markdown table: the model the pass was optimised with, its own predicted RMS force error,
 * the 3-D verified RMS error (the wrist sensor, and the contact force) with the right model, the same
 * for that model's naive pass, and the optimisation's wall time. Then a second table takes the right
 * model's optimised pass apart: the device-vs-3-D disagreement of the wrist sensor's reading as
 * configured, without friction, and with the device model sampling the same pass (the same splines,
 * or per-sample commands linear between the samples) twice and four times as finely. --quick: a short
 * optimisation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/bench_util.h"
#include "host/host.h"
#include "io/settings.h"
#include "kernels/kl_impact.h"
#include "optimiser/pipeline.h"
#include "optimiser/problem.h"
#include "optimiser/verify3d.h"

/* RMS over the samples after the first of (F - target)/F_ref */
static double rms(const kl_problem *pb, const double *F)
{
  double se = 0;
  for (int k = 1; k < pb->ns; ++k) {
    const double e = (F[k] - pb->ft[k]) / pb->gp[KL_GP_FREF];
    se += e * e;
  }
  return sqrt(se / (pb->ns - 1));
}

/* the 3-D engine with the right model on the pass of control points x: RMS error of the step-averaged
 * wrist sensor and contact force */
static int verify_right(const kl_problem *right, const double *x, double *es, double *ec)
{
  const int ns = right->ns;
  double *buf = calloc((size_t)8 * ns, sizeof *buf);
  int *c = calloc((size_t)ns, sizeof *c);
  if (!buf || !c) return -1;
  double *o = buf, *v = buf + ns;
  kl_problem_expand(right, x, o, v);
  kl_v3_out out = {buf + 2 * ns, buf + 3 * ns, buf + 4 * ns, buf + 5 * ns, buf + 6 * ns, buf + 7 * ns, c, 0, 0, 0};
  char msg[1024];
  const kelvin_status st = kl_verify3d_run(right, o, v, &out, msg, sizeof msg);
  if (st != KELVIN_OK) fprintf(stderr, "model_check: %s\n", msg);
  *es = rms(right, out.Favg);
  *ec = rms(right, out.Fcavg);
  free(buf);
  free(c);
  return st == KELVIN_OK ? 0 : -1;
}

/* device (1-D) vs 3-D disagreement of the wrist sensor's step-averaged reading for the pass of control
 * points x on problem pb: RMS and max over the samples, of F_ref */
static int disagreement(const kl_problem *pb, const double *x, double *erms, double *emax)
{
  const int ns = pb->ns;
  double *buf = calloc((size_t)10 * ns, sizeof *buf), *so = calloc((size_t)KL_SO_N * ns, sizeof *so), obj[KL_OBJ_N];
  int *c = calloc((size_t)ns, sizeof *c);
  if (!buf || !so || !c) return -1;
  double *o = buf, *v = buf + ns;
  kl_problem_expand(pb, x, o, v);
  kl_grind_rollout(pb->gp, ns, pb->geo, buf, 1, 0, obj, 1, so); /* ov = [o; v], one candidate */
  kl_v3_out out = {buf + 2 * ns, buf + 3 * ns, buf + 4 * ns, buf + 5 * ns, buf + 6 * ns, buf + 7 * ns, c, 0, 0, 0};
  char msg[1024];
  const kelvin_status st = kl_verify3d_run(pb, o, v, &out, msg, sizeof msg);
  if (st != KELVIN_OK) fprintf(stderr, "model_check: %s\n", msg);
  double se = 0, mx = 0;
  for (int k = 1; k < ns; ++k) {
    const double T = so[KL_SO_T * ns + k] - so[KL_SO_T * ns + k - 1], m = 0.5 * (pb->meff[k - 1] + pb->meff[k]);
    const double dev = so[KL_SO_FAVG * ns + k] + m * (so[KL_SO_ZD * ns + k] - so[KL_SO_ZD * ns + k - 1]) / T;
    const double e = fabs(dev - out.Favg[k]) / pb->gp[KL_GP_FREF];
    se += e * e;
    mx = fmax(mx, e);
  }
  *erms = sqrt(se / (ns - 1));
  *emax = mx;
  free(buf);
  free(so);
  free(c);
  return st == KELVIN_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
  const char *cfg = "examples/optimise_stiff.yaml";
  int cpu = 0, quick = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--cpu") == 0)
      cpu = 1;
    else if (strcmp(argv[i], "--quick") == 0)
      quick = 1;
    else if (argv[i][0] == '-')
      return kl_bench_usage(argv[i], "usage: model_check [CONFIG (examples/optimise_stiff.yaml)] [--cpu] [--quick]\n");
    else
      cfg = argv[i];
  }
  kl_settings base;
  kl_settings_default(&base);
  char msg[4096];
  if (kl_settings_load(&base, cfg, msg, sizeof msg) != KELVIN_OK) {
    fprintf(stderr, "model_check: %s\n", msg);
    return 2;
  }
  base.verify = 0; /* the device's winner; the 3-D verification with the right model is done here */
  base.keep = 1;
  if (quick) base.screening = 256, base.maxeval = 15;
  kl_inputs inputs;
  if (kl_inputs_load(&base, &inputs, msg, sizeof msg) != KELVIN_OK) {
    fprintf(stderr, "model_check: %s\n", msg);
    return 2;
  }
  kl_problem *right = NULL;
  if (kl_problem_build(&base, &inputs.in, &right, msg, sizeof msg) != KELVIN_OK) {
    fprintf(stderr, "model_check: %s\n", msg);
    return 2;
  }
  kl_host *h = NULL;
  kl_host_opts ho;
  kl_host_opts_default(&ho);
  ho.cpu = cpu;
  if (kl_host_create(&h) != KELVIN_OK || kl_host_open(h, &ho) != KELVIN_OK) {
    fprintf(stderr, "model_check: %s\n", h ? kl_host_errmsg(h) : "out of memory");
    return 1;
  }
  /* the contact's share of the compliance at the mean target, right model: c = d(delta)/dF = delta/(n F)
   * (kernels/kl_contact_static.h) */
  const double Fm = right->gp[KL_GP_FREF], n = right->gp[KL_GP_NC];
  const double share = kl_contact_share(kl_problem_contact(right), Fm, base.holder_K);
  printf("model_check: %s, target %.3g N, contact %.0f %% of the compliance (K = %.4g N/m^%.2g, holder %.3g N/m); "
         "device: %s\n\n",
         cfg, Fm, 100 * share, right->Kc, n, base.holder_K, kl_host_notice(h));
  printf("| contact model the pass was optimised with | its predicted RMS error | 3-D verified RMS error, right "
         "model (sensor / contact force) | its naive pass, 3-D verified | optimisation wall s |\n");
  printf("|---|---:|---:|---:|---:|\n");
  double *xright = NULL; /* the right model's optimised pass */
  int have_right = 0;
  enum { RIGHT, KV, EXP14, K144, CHIHALF, RIGID, NVAR };
  char right_name[128];
  snprintf(right_name, sizeof right_name, "right: as configured (%s, n = %g)",
           base.model == KL_MODEL_KV ? "Kelvin-Voigt" : "Hunt-Crossley", n);
  const char *names[NVAR] = {right_name, "Kelvin-Voigt, linear (tangent stiffness at the target)",
                             "exponent 1.4 (through the right force at the target)", "contact stiffness 44 % high",
                             "damping halved (chi / 2)", "rigid abrasive (tool E = 200 GPa)"};
  for (int var = 0; var < NVAR; ++var) {
    kl_settings s = base;
    switch (var) {
    case KV: s.model = KL_MODEL_KV; break;
    case EXP14: s.exponent = 1.4; break;
    case K144: s.contact_K = 1.44 * right->Kc; break;
    case CHIHALF: s.approach_speed = 2.0 * base.approach_speed; break; /* chi = d(cr)/v: halved */
    case RIGID: s.tool_E = 200e9, s.tool_nu = 0.22; break;
    default: break;
    }
    kl_problem *pb = NULL;
    if (kl_problem_build(&s, &inputs.in, &pb, msg, sizeof msg) != KELVIN_OK) {
      fprintf(stderr, "model_check: %s: %s\n", names[var], msg);
      continue;
    }
    kl_opt_result *res = calloc(1, sizeof *res);
    const double t0 = kl_bench_now();
    if (!res || kl_optimise(pb, h, NULL, NULL, res, msg, sizeof msg) != KELVIN_OK) {
      fprintf(stderr, "model_check: %s: %s\n", names[var], msg);
      kl_problem_free(pb);
      free(res);
      continue;
    }
    const double wall = kl_bench_now() - t0;
    const kl_pass *b = &res->pass[res->best], *nv = &res->pass[res->naive];
    double es = NAN, ec = NAN, ens = NAN, enc = NAN;
    verify_right(right, b->x, &es, &ec);
    verify_right(right, nv->x, &ens, &enc);
    printf("| %s | %.2f %% | %.2f %% / %.2f %% | %.1f %% | %.1f |\n", names[var], 100 * b->obj[KL_OBJ_RMS], 100 * es,
           100 * ec, 100 * ens, wall);
    if (var == RIGHT && (xright = malloc((size_t)b->nx * sizeof *xright)) != NULL) {
      memcpy(xright, b->x, (size_t)b->nx * sizeof *xright);
      have_right = 1;
    }
    fflush(stdout);
    kl_opt_result_free(res);
    free(res);
    kl_problem_free(pb);
  }
  printf("\nRMS errors of the step-averaged force against the target, over the path; 'predicted': the device's 1-D "
         "model with the contact model of the row; '3-D verified': the pass in the 3-D engine with the right model "
         "(examples' friction, tilt-free tool).\n");
  if (have_right) {
    printf("\nThe right model's optimised pass, device (1-D) vs 3-D disagreement of the wrist sensor's step-averaged "
           "reading, of the target:\n\n| case | RMS | max |\n|---|---:|---:|\n");
    const int ns0 = base.ns;
    const struct {
      const char *what;
      double mu;
      int ns;
    } cases[] = {{"as configured", base.friction, ns0},
                 {"without friction", 0.0, ns0},
                 {"without friction, device samples 2x finer (the same commands)", 0.0, 2 * ns0 - 1},
                 {"without friction, device samples 4x finer", 0.0, 4 * ns0 - 3}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
      kl_settings s = base;
      s.friction = cases[i].mu;
      s.ns = cases[i].ns;
      kl_problem *pb = NULL;
      double er = NAN, em = NAN;
      if (s.ns <= KL_PATH_MAX && kl_problem_build(&s, &inputs.in, &pb, msg, sizeof msg) == KELVIN_OK) {
        /* per-sample commands (optimiser.method lm): the same pass, linear between the coarse samples */
        double *xf = pb->basis ? NULL : malloc((size_t)2 * s.ns * sizeof *xf);
        if (xf) {
          const int r = (s.ns - 1) / (ns0 - 1);
          for (int part = 0; part < 2; ++part)
            for (int k = 0; k < s.ns; ++k) {
              const int j = k / r, q = k % r;
              const double *c = xright + (size_t)part * ns0;
              xf[(size_t)part * s.ns + k] = q == 0 ? c[j] : c[j] + (c[j + 1] - c[j]) * q / r;
            }
        }
        disagreement(pb, xf ? xf : xright, &er, &em);
        free(xf);
      }
      printf("| %s | %.3f %% | %.2f %% |\n", cases[i].what, 100 * er, 100 * em);
      kl_problem_free(pb);
    }
  }
  free(xright);
  kl_host_destroy(h);
  kl_problem_free(right);
  kl_inputs_free(&inputs);
  return 0;
}
