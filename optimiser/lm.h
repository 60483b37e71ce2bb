/* optimiser/lm.h: the pass with offset and speed per path sample, fitted by Levenberg-Marquardt to the
 * force residuals (docs/design.md section 5, "Pipeline": method lm).
 *
 * Decision variables: the commanded offset o_k and feed speed v_k at every path sample (2 ns; the
 * number grows with the path). Residuals, all squared and summed:
 *   force:  sqrt(w_rms / (ns - 1)) (S_k - F*_k) / F_ref at every sample k >= 1, S the scored measure
 *           (target.measure) of the device rollout;
 *   the commanded normal acceleration a_k = (o_{k+1} - 2 o_k + o_{k-1}) / ds^2 v_k^2 (the offset's second
 *           difference at the feed): sqrt(w_rough / (ns - 2)) a_k / A and, over the robot's limit A =
 *           offset.max_accel, sqrt(w_acc / (ns - 2)) (|a_k| / A - 1)+;
 *   the feed: sqrt(w_rough / (ns - 2)) (v_{k+1} - 2 v_k + v_{k-1}) / v_max, the feed acceleration over
 *           its limit sqrt(w_acc / (ns - 1)) (|v dv/ds| / speed.max_accel - 1)+, and the productivity
 *           term sqrt(0.01 w_time / ns) (v_max - v_k) / v_max, which lets the feed slow down only where
 *           the force or the acceleration limits ask for it.
 * The regularisation rows have their exact derivatives. The force residuals' Jacobian is banded: the
 * force at sample k depends on the commands at samples j <= k only (the rollout is causal), and on those
 * before k - B only through a state whose memory decays as e^{-r t} (r = (D_h + c_t) / 2m, the holder's
 * and the contact's damping at the reference force). So B colours of offsets (samples j = c mod B moved
 * together) and B of speeds give the whole band by forward differences in 2B + 1 rollouts of one device
 * batch, independent of the number of samples: each sample k's change under colour c is charged to the
 * one sample of that colour in (k - B, k]. B is chosen so that e^{-r B dt} <= 1e-2 (dt the sample
 * interval at the top speed). The Gauss-Newton system is banded (half-bandwidth 2B - 1 in the
 * interleaved order o_0, v_0, o_1, ...): a banded Cholesky (GSL) solves it in O(ns B^2). Each step tries
 * four Marquardt dampings in one batch and keeps the best; steps are clamped to the bounds.
 *
 * Cost per iteration: 2B + 1 + 4 rollouts, each linear in the path length; memory O(ns B). */
#ifndef KL_OPTIMISER_LM_H
#define KL_OPTIMISER_LM_H

#include "host/rollout_batch.h"
#include "optimiser/problem.h"
#include "optimiser/progress.h"
#include "optimiser/robust.h"

/* The normal acceleration a pass commands at an interior sample k (0 < k < ns - 1): the offsets' second
 * difference over the arc length times the feed squared, o'' v_k^2 (the regularisation rows here, and the
 * correction's local step, docs/design.md section 5); *c (unless NULL) gets v_k^2 / ds^2, its derivative in
 * the offsets. */
static inline double kl_lm_normal_accel(const kl_problem *pb, const double *o, const double *v, int k, double *c)
{
  const double ds = 0.5 * (pb->s[k + 1] - pb->s[k - 1]), ck = v[k] * v[k] / (ds * ds);
  if (c) *c = ck;
  return (o[k + 1] - 2 * o[k] + o[k - 1]) * ck;
}

typedef struct kl_lm_stats {
  int iterations;   /* accepted steps */
  long rollouts;    /* device rollouts */
  int band;         /* B */
  double phi0, phi; /* sum of squared residuals at the start and the end */
  const char *stop; /* why it stopped */
  double t_jacobian, t_steps; /* wall seconds in the Jacobian batches and the step batches */
  /* optional, set by the caller (kl_lm_solve keeps it): 2 x ns x B doubles that receive the first
   * iteration's Jacobian of the scored measure, dS_k/do_j at [k B + (k - j)] and dS_k/dv_j at
   * [ns B + k B + (k - j)] for j in (k - B, k], j >= 0, k >= 1 (the rest left as the caller set it); for tests */
  double *jac_out;
} kl_lm_stats;

/* Fit x (2 ns: offsets then speeds, per sample; pb->basis must be NULL) from its value on entry, with
 * rollouts on ro (made for pb with basis NULL). maxit: most iterations; maxtime: wall seconds (0: none).
 * progress (nullable): a tick per step (optimiser/progress.h); a stop request there returns
 * KELVIN_ERR_STOPPED with x the last accepted step. Errors are the host's (message in msg). */
kelvin_status kl_lm_solve(const kl_problem *pb, kl_host *h, kl_rollout *ro, double *x, int maxit, double maxtime,
                          kl_progress *progress, kl_lm_stats *stats, char *msg, int cap);

/* The robust refinement (docs/design.md section 10): as kl_lm_solve, the residuals of every scenario of sc (its
 * own constants and geometry; ro's scenario set is replaced) weighted by the derivative of the statistic
 * (sc->spec.kind: mean, mean_std, cvar or worst; kl_robust_stat) of the scenarios' force sums of squares phi_s
 * at the current pass, plus the regularisation rows once. What it minimises is that statistic of the phi_s plus
 * the regularisation (the pass with the lowest value among each step's dampings is kept): for mean the mean of
 * the scenarios' kl_lm_phi. Scenarios of weight 0 (outside the CVaR's tail) are not rolled out for the
 * Jacobian. Cost per iteration: (2B + 1) rollouts per weighing scenario plus 4 S. KELVIN_ERR_CONFIG for chance
 * (a band, not a sum of squares: method nlopt). */
kelvin_status kl_lm_solve_robust(const kl_problem *pb, kl_host *h, kl_rollout *ro, const kl_scen_set *sc, double *x,
                                 int maxit, double maxtime, kl_progress *progress, kl_lm_stats *stats, char *msg,
                                 int cap);

/* The value kl_lm_solve_robust minimises (the statistic of the scenarios' force sums of squares plus the
 * regularisation; for every kind the statistic of the scenarios' kl_lm_phi) of P passes xs (P x 2 ns, per-sample
 * commands) over sc, into f (P; HUGE_VAL where a rollout fails). ro's scenario set is replaced. */
kelvin_status kl_lm_robust_value(const kl_problem *pb, kl_host *h, kl_rollout *ro, const kl_scen_set *sc, int P,
                                 const double *xs, double *f, char *msg, int cap);

/* The residual vector's sum of squares at sampled commands (x as above) from a rollout's per-sample
 * outputs so (KL_SO_N x ns, one candidate): what kl_lm_solve minimises. */
double kl_lm_phi(const kl_problem *pb, const double *x, const double *so);

/* The band B kl_lm_solve uses for pb. */
int kl_lm_band(const kl_problem *pb);

#endif
