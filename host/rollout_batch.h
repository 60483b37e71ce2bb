/* host/rollout_batch.h: grinding-pass rollouts of P candidates on the OpenCL device or the OpenMP twin
 * (docs/design.md sections 4-5). A candidate is a column of spline control points; one GEMM (CLBlast on the
 * device) expands all of them into sampled offsets and speeds, then kernels/rollout.cl (or the same
 * header function in an OpenMP loop) rolls each out and returns its objective terms. */
#ifndef KL_HOST_ROLLOUT_BATCH_H
#define KL_HOST_ROLLOUT_BATCH_H

#include <stddef.h>

#include "host/host.h"
#include "kernels/kl_rollout.h"

/* The problem every candidate shares (copied at create). */
typedef struct kl_rollout_def {
  int ns;              /* path samples >= 2 */
  int nc;              /* control points per candidate (offset + speed) >= 1 */
  const double *gp;    /* problem constants (KL_GP_N, kernels/kl_rollout.h) */
  const double *geo;   /* geometry (ns x KL_GG_N) */
  const double *basis; /* (2 ns x nc), row-major: [offsets; speeds] = basis . control points; NULL: the
                        * control points are the samples themselves (nc = 2 ns), no GEMM */
  /* Batches of fewer than host_below candidates run on the host's OpenMP twin even when the handle has
   * an OpenCL device: a few candidates, one work-item each, leave a GPU idle (docs/design.md section 4).
   * 0 (a zero-initialised def): every batch on the device. KL_ROLLOUT_HOST_BELOW_AUTO: the environment
   * variable KELVIN_ROLLOUT_HOST_BELOW if set (a whole number >= 0), else 0 on a CPU device and
   * KL_ROLLOUT_HOST_BELOW_GPU on any other. */
  long host_below;
  /* A line of progress for a person, before the rollout program is built and after a build that took
   * over 2 s (the library prints nothing); NULL: none. */
  void (*notice)(void *ctx, const char *line);
  void *notice_ctx;
} kl_rollout_def;

#define KL_ROLLOUT_HOST_BELOW_AUTO (-1L)
/* The default below which a GPU's batches go to the host: measured with `kelvin optimise` on an NVIDIA H200
 * against OpenMP on its machine's 16 cores, benchmarks/RESULTS.md section "On a GPU" */
#define KL_ROLLOUT_HOST_BELOW_GPU 1024L

typedef struct kl_rollout kl_rollout; /* opaque; host/rollout_batch.c */

/* Set up on the handle's path. On OpenCL kernels/rollout.cl is built, and the shared data uploaded, by
 * the first batch that runs on the device (never, if every batch is below host_below).
 * *out = NULL on failure (message on h): a bad KELVIN_ROLLOUT_HOST_BELOW is KELVIN_ERR_CONFIG. */
kelvin_status kl_rollout_create(kl_host *h, const kl_rollout_def *d, kl_rollout **out);

/* Free; NULL is a no-op. */
void kl_rollout_destroy(kl_rollout *r);

/* Evaluate P >= 1 candidates: ctrl (nc x P, candidate fastest) -> obj (KL_OBJ_N x P) and, if so is not
 * NULL, the per-sample outputs so (KL_SO_N x ns x P). Per-candidate trouble is a status term in obj
 * (KL_OBJ_STATUS) with the objective set huge, never an error; errors are OpenCL failures. */
kelvin_status kl_rollout_eval(kl_rollout *r, size_t P, const double *ctrl, double *obj, double *so);

/* The tangent-linear rollouts (kernels/kl_rollout.h, kl_grind_rollout_tl): as kl_rollout_eval, and
 * each candidate p carries 1 <= nd <= KL_TL_MAX offset directions dir[(p nd + i) ns + k]; the scored
 * measure's derivatives along them go to dS (same layout). so may be NULL. */
kelvin_status kl_rollout_tangent(kl_rollout *r, size_t P, const double *ctrl, int nd, const double *dir, double *obj,
                                 double *so, double *dS);

/* S >= 1 scenarios for kl_rollout_eval_scenarios: gp (S x KL_GP_N, scenario-major) and geo (S x ns x KL_GG_N,
 * scenario-major, each block as the def's geo). Copied; on OpenCL uploaded by the next scenario batch.
 * Replaces the previous set. KELVIN_ERR_ARG for S < 1 or NULL, KELVIN_ERR_NOMEM. */
kelvin_status kl_rollout_set_scenarios(kl_rollout *r, int S, const double *gp, const double *geo);
int kl_rollout_nscenarios(const kl_rollout *r); /* 0 before kl_rollout_set_scenarios */

/* Every candidate of ctrl (nc x P, candidate fastest, as kl_rollout_eval) on every scenario: P x S rollouts in
 * one batch (one work-item each on OpenCL; one OpenMP loop over all P S on the twin). obj (KL_OBJ_N x P S):
 * obj[term * (P S) + p S + s]. so (nullable): KL_SO_N x ns x (P S), so[(field ns + k) (P S) + p S + s].
 * Counts P S rollouts in kl_rollout_count. host_below applies to P S. KELVIN_ERR_ARG without scenarios. */
kelvin_status kl_rollout_eval_scenarios(kl_rollout *r, size_t P, const double *ctrl, double *obj, double *so);

/* Rollouts evaluated so far (candidates), and wall time spent in kl_rollout_eval [s] (a build on the
 * first device batch included). With a shard, the whole batches' rollouts (the same on every rank, as one
 * rank would count them); kl_rollout_count_local: those this rank ran itself (its shares). */
size_t kl_rollout_count(const kl_rollout *r);
size_t kl_rollout_count_local(const kl_rollout *r);
double kl_rollout_seconds(const kl_rollout *r);

/* Of kl_rollout_count, those the host's OpenMP twin ran while the handle has an OpenCL device (batches
 * below host_below); and the host_below in effect (0 on the twin's own handle). */
size_t kl_rollout_count_host(const kl_rollout *r);
long kl_rollout_host_below(const kl_rollout *r);

/* Runs across processes (docs/design.md section 11). When the handle has a shard (kl_host_shard), every batch
 * above is collective over its group: each rank evaluates its share (kl_shard_range) of the batch's
 * candidates (of the P S rollouts for a scenario batch), in place in the caller's arrays; the group agrees on
 * the status (a failure on any rank fails the batch on every rank with "rank R: <message>"); then every rank
 * receives every column of obj, so and dS, bit for bit what one rank alone computes (each rank expands all P
 * candidates so that each column's GEMM is the same, and host_below is decided on the whole batch). Every rank
 * must call the same batches in the same order.
 * flag (NULL: none; must outlive r's batches): nonzero once a stop was asked on this rank. With a shard the
 * next batch then ends on every rank with KELVIN_ERR_STOPPED and "rank R: stopped by the caller", so that a stop
 * asked on one rank is acted on by all at the same point; without a shard it is not read. */
void kl_rollout_stop_flag(kl_rollout *r, const int *flag);

#endif
