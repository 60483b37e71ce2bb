/* kernels/rollout.cl: the grinding-pass rollout of P candidates at once (docs/design.md sections 4-5).
 * One work-item per candidate: kl_grind_rollout (kernels/kl_rollout.h, the same function the OpenMP
 * twin calls) reads the candidate's sampled offsets and speeds, which one CLBlast GEMM expanded from
 * its spline control points, and writes its objective terms and optionally its per-sample outputs.
 * Layouts (candidate index fastest): ov (2 ns x P), obj (KL_OBJ_N x P), so (KL_SO_N x ns x P); the scenario
 * batch at the end writes P x S rollouts, scenario index fastest. Each kernel runs the work-items from the
 * enqueue's global offset up to `end` (P, or P S, for a whole batch): a rank of a shard runs its own share of
 * the batch in place (host/rollout_batch.c; docs/design.md section 11). */
#include "kl_rollout.h"

/* The tangent-linear rollout (kernels/kl_rollout.h, kl_grind_rollout_tl): candidate p carries nd offset
 * directions dir[(p nd + i) ns + k] and writes the scored measure's derivatives to dS likewise. */
__kernel void kl_grind_tl_batch(const int P, const int ns, __global const double *gp, __global const double *geo,
                                __global const double *ov, __global double *obj, const int want, __global double *so,
                                const int nd, __global const double *dir, __global double *dS, const int end)
{
  const int p = (int)get_global_id(0);
  if (p >= end) return;
  if (p >= P) return;
  kl_grind_rollout_tl(gp, ns, geo, ov, P, p, P, p, obj, want, so, nd, dir + (size_t)p * nd * ns,
                      dS + (size_t)p * nd * ns);
}

__kernel void kl_grind_batch(const int P, const int ns, __global const double *gp, __global const double *geo,
                             __global const double *ov, __global double *obj, const int want, __global double *so,
                             const int end)
{
  const int p = (int)get_global_id(0);
  if (p >= end) return;
  if (p >= P) return;
  kl_grind_rollout(gp, ns, geo, ov, P, p, obj, want, so);
}

/* Candidates x scenarios (host/rollout_batch.h, kl_rollout_eval_scenarios): work-item q = p S + s rolls out
 * candidate p of ov (2 ns x P) on scenario s, whose constants are gp + s KL_GP_N and geometry geo + s ns KL_GG_N
 * (scenario-major), into obj (KL_OBJ_N x P S) and so (KL_SO_N x ns x P S) at q. The scenario index is the
 * fastest: a work-group runs one candidate on neighbouring scenarios (the same ov column, read once), and a
 * candidate's S results lie side by side for the statistics over scenarios. */
__kernel void kl_grind_scen_batch(const int P, const int S, const int ns, __global const double *gp,
                                  __global const double *geo, __global const double *ov, __global double *obj,
                                  const int want, __global double *so, const int end)
{
  const int q = (int)get_global_id(0);
  if (q >= end) return;
  if (q >= P * S) return;
  const int p = q / S, s = q - p * S;
  kl_grind_rollout_tl(gp + (size_t)s * KL_GP_N, ns, geo + (size_t)s * ns * KL_GG_N, ov, P, p, P * S, q, obj, want, so,
                      0, 0, 0);
}
