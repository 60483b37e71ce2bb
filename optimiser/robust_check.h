/* optimiser/robust_check.h: the out-of-sample check of passes (docs/design.md section 10): a fresh scenario set
 * (optimiser/scenario.h, the out-of-sample draw: uncertainty.verify_seed, disjoint from the optimisation set),
 * every pass rolled out on every scenario on the device (one batch, kl_scenarios_predict) and run in the 3-D
 * engine on every scenario's own part (kl_verify3d_run of the scenario's prepared problem; OpenMP across the
 * scenarios). Per pass, scenario and source (device, 3-D) it keeps the RMS force error, the peak and least scored
 * force, the contact loss, whether the force stayed in the band [F_min, F_max] along the whole pass, and the
 * scored force at every sample. */
#ifndef KL_OPTIMISER_ROBUST_CHECK_H
#define KL_OPTIMISER_ROBUST_CHECK_H

#include "optimiser/pipeline.h"
#include "optimiser/progress.h"

#define KL_CHECK_MAXW 4 /* passes checked at once */

#define KL_CHECK_RMS 0  /* RMS of (F_k - F*_k) / F_ref over the samples k >= 1 */
#define KL_CHECK_PEAK 1 /* the largest scored force [N] */
#define KL_CHECK_LEAST 2 /* the smallest [N] */
#define KL_CHECK_LOSS 3 /* the share of the pass time out of contact */
#define KL_CHECK_BAND 4 /* 1 if the force stayed within the band along the whole pass (a failed run: 0) */
#define KL_CHECK_N 5

typedef struct kl_check {
  int S, nw, ns;
  int with3d;               /* 1 if the 3-D engine ran (else dev[1], F[1] are NaN) */
  int pass[KL_CHECK_MAXW];  /* the passes (indices into the run's results) */
  double *dev[2];           /* per source (0 device, 1 3-D): KL_CHECK_N x nw x S values, [(m nw + w) S + s] */
  double *F[2];             /* per source: the scored force, nw x S x ns, [(w S + s) ns + k] */
  double *draw;             /* the scenarios' draws (S x KL_UNC_N, optimiser/scenario.h) */
  int failed3d;             /* 3-D runs that failed (counted out of the band, their values NaN) */
  int local3d;              /* 3-D runs this process made (its share of nw x S with a shard) */
  char fail_msg[256];       /* the first failure's message */
  double seconds[2];        /* wall time of each source */
  kl_robust_spec spec;      /* the band */
} kl_check;

/* Check passes which (nw <= KL_CHECK_MAXW indices into res; control points on basis, pb->basis or NULL for an
 * evaluation's) over S fresh scenarios of pb's settings (uncertainty.verify_seed), built with the inputs in;
 * with_3d 0: the device only. out starts zeroed; kl_check_free releases it. Progress: a notice per source and
 * ticks in the 3-D runs; a stop request returns KELVIN_ERR_STOPPED. A 3-D run that fails is counted, not an
 * error. */
kelvin_status kl_check_run(const kl_problem *pb, const kl_problem_inputs *in, kl_host *h, const double *basis,
                           const kl_opt_result *res, const int *which, int nw, int S, int with_3d, kl_progress *prog,
                           kl_check *out, char *msg, int cap);

void kl_check_free(kl_check *c);

/* The band and objective of pb's settings (uncertainty.*; F_min and F_max derived where NaN: half the smallest
 * target force, and target.max_force). */
kl_robust_spec kl_check_spec(const kl_problem *pb);

#endif
