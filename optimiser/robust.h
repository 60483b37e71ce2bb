/* optimiser/robust.h: robust objectives of a grinding pass over S scenarios (sampled parts and process
 * conditions, optimiser/scenario.h), and the statistics the out-of-sample report gives (docs/design.md
 * section 10). Pure functions of per-scenario values: no device, no allocation but the caller's work space.
 *
 * Every candidate is rolled out on the same S scenarios (common random numbers); per scenario s the rollout
 * gives the weighted objective J_s (KL_OBJ_J), the scored force's largest and smallest value over the
 * samples (KL_OBJ_FMAX, KL_OBJ_FMIN) and the contact loss. The robust objective of the candidate is:
 *   mean      (1/S) sum J_s
 *   mean_std  mean + k sd, sd = sqrt((1/S) sum (J_s - mean)^2) (the population's, as the set is the model)
 *   cvar      CVaR at level alpha: the mean of the worst (1 - alpha) S values, the boundary value counted by
 *             its fraction, m = (1 - alpha) S: (J_(1) + ... + J_(floor m) + (m - floor m) J_(floor m + 1)) / m
 *             with J_(1) >= J_(2) >= ... (continuous in the J_s; alpha = 0 is the mean, m <= 1 the worst)
 *   worst     max J_s
 *   chance    mean + W (max(0, q))^2: the sample form of "the force stays within [F_min, F_max] along the
 *             whole pass with probability >= p". With the violation of a scenario
 *             v_s = max(F_max,s - F_max, F_min - F_min,s) / F_ref (and at least F_min / F_ref if the pass
 *             loses contact anywhere), a scenario is in the band when v_s <= 0, and q = v_(ceil(p S)), the
 *             ceil(p S)-th smallest violation, is <= 0 exactly when at least ceil(p S) scenarios, a share
 *             >= p, are in the band. q is continuous in the candidate, so the penalty is too. */
#ifndef KL_OPTIMISER_ROBUST_H
#define KL_OPTIMISER_ROBUST_H

#include "optimiser/scenario.h" /* KL_ROBUST_*: uncertainty.objective */

#define KL_ROBUST_CHANCE_W 100.0 /* W: the chance penalty's weight (J's terms are fractions of F_ref, ~1e-2) */

typedef struct kl_robust_spec {
  int kind;          /* KL_ROBUST_* */
  double k;          /* mean_std: k */
  double alpha;      /* cvar: level in [0, 1) */
  double prob;       /* chance: p in (0, 1] */
  double fmin, fmax; /* the force band [N] */
  double fref;       /* F_ref [N] */
} kl_robust_spec;

/* The scenarios of a robust run: S variants of the problem, each with its own constants and geometry
 * (optimiser/scenario.h draws and packs them), and the objective over them. */
typedef struct kl_scen_set {
  int S;
  const double *gp;  /* S x KL_GP_N (kernels/kl_rollout.h) */
  const double *geo; /* S x ns x KL_GG_N */
  kl_robust_spec spec;
} kl_scen_set;

/* The values' mean and population standard deviation. */
double kl_robust_mean(const double *v, int S);
double kl_robust_sd(const double *v, int S);

/* The q-quantile of v as the ceil(q S)-th smallest value (q in (0, 1]; q <= 1/S: the smallest); work: S
 * doubles. */
double kl_robust_quantile(const double *v, int S, double q, double *work);

/* The band violation v_s of one scenario (above): its largest and smallest scored force and its contact loss. */
double kl_robust_violation(const kl_robust_spec *sp, double fhi, double flo, double loss);

/* The robust objective (sp->kind, not NOMINAL) of one candidate from its S scenarios' terms: term t of
 * scenario s at obj[t * stride + s] (KL_OBJ_*; with the batch's layout obj + p S and stride P S). work: 2 S
 * doubles. */
double kl_robust_objective(const kl_robust_spec *sp, const double *obj, long stride, int S, double *work);

/* A distribution's summary (the report's): mean, median, P95 (the quantiles as kl_robust_quantile) and worst;
 * with the 95 % distribution-free confidence interval of P95 (order statistics: the ranks a binomial(S, 0.95)
 * count covers with probability >= 0.95 by its normal approximation, clamped to the sample). */
typedef struct kl_robust_summary {
  double mean, p50, p95, worst;
  double p95_lo, p95_hi;
} kl_robust_summary;

/* The robust statistic (sp->kind: mean, mean_std, cvar or worst) of per-scenario values v (S), and in w (S,
 * nullable) its derivative in each v_s: mean 1/S; mean_std 1/S + k (v_s - mean) / (S sd), clamped at 0; cvar 1/m
 * on the worst floor(m) values and (m - floor m)/m on the next (m = (1 - alpha) S; 1 on the worst if m <= 1); worst
 * 1 on the largest. The Levenberg-Marquardt refinement weighs each scenario's residuals by w (optimiser/lm.h).
 * work: 2 S doubles. NaN for another kind. */
double kl_robust_stat(const kl_robust_spec *sp, const double *v, int S, double *w, double *work);

/* Summary of v (S >= 1 values); work: S doubles. */
kl_robust_summary kl_robust_summarise(const double *v, int S, double *work);

/* The share of n successes in S trials and its 95 % Wilson score interval. */
void kl_robust_wilson(int n, int S, double *share, double *lo, double *hi);

#endif
