/* optimiser/pipeline.h: screening -> local refinement -> verification in the 3-D engine of a grinding
 * pass (docs/design.md section 5, "Pipeline"). The device rollouts are the 1-D model of
 * kernels/kl_rollout.h; the verification (optimiser/verify3d.h) re-simulates the naive pass and the
 * best `verify` passes with the tool as a rigid body on a 6-DoF holder following the waypoints over the
 * actual mesh, and re-ranks by it. The only includer of <nlopt.h> is pipeline.c. */
#ifndef KL_OPTIMISER_PIPELINE_H
#define KL_OPTIMISER_PIPELINE_H

#include "host/rollout_batch.h"
#include "optimiser/problem.h"
#include "optimiser/robust.h"

#define KL_MAXPASS 72

/* One pass: control points, the device prediction and (if verified) the 3-D engine's. */
typedef struct kl_pass {
  char label[32];           /* "naive", "initial", "refined-1", ... */
  double *x;                /* control points (nx), owned */
  int nx;
  double obj[KL_OBJ_N];     /* device objective terms */
  double *so;               /* device per-sample outputs (KL_SO_N x ns), owned */
  int verified;
  double vobj[KL_OBJ_N];    /* objective terms of the 3-D engine's wrist-sensor force */
  double *vF, *vFavg;       /* 3-D: wrist sensor along the tool axis, at the samples and step-averaged (ns), owned */
  double *vFc, *vFcavg;     /* 3-D: contact force along the tool axis, the same two (ns), owned */
  double *vt, *vdev;        /* 3-D: time, tool centre's deviation from its command along n (ns), owned */
  int *vc;                  /* verified contact flags (ns) */
  long vsub;                /* 3-D engine sub-steps */
  double vseconds;          /* wall time of its 3-D verification [s] */
  double *sF;               /* the device's wrist-sensor equivalent of the scored measure, F_N + m z'' (ns), owned */
  double agree_rms, agree_max; /* device vs 3-D, RMS and max of (F_dev - F_3d)/F_ref, wrist sensor, scored measure */
  double inertia_rms;       /* RMS of (sensor - contact force)/F_ref in 3-D: the tool's inertia m a */
  int disagree;             /* agree_rms above the tolerance */
  int evals;                /* rollouts spent on this pass (refinement) */
  const char *stop;         /* NLopt stop reason of its refinement, or "" */
  double robj;              /* its robust objective over the optimisation set, the one the refinement minimises:
                               method nlopt kl_robust_objective over the J_s, method lm kl_lm_robust_value (NaN: not
                               a robust run) */
} kl_pass;

typedef struct kl_stage_time {
  double setup, screening, refinement, verification, total; /* wall seconds (verification: the 3-D engine) */
  double correction;        /* the correction stage, its reference check included */
} kl_stage_time;

/* The correction stage (docs/design.md section 5, "Correction"): the best verified pass corrected with the
 * 3-D engine in the loop (output space mapping), then checked once more at reference accuracy. Errors
 * are RMS and max of (S_3d - F*)/F_ref over the samples k >= 1 (the verified objective's RMS term). */
#define KL_CORRECT_GAP 1e-3 /* auto: the verified RMS above the predicted by more than this (0.1 % of F_ref) */
/* the correction's local step (docs/design.md section 5, "Correction"): it runs where the worst verified sample
 * is above KL_LOCAL_THRESH of F_ref, on at most KL_LOCAL_MAXW offsets (KL_LOCAL_BEFORE before each such sample),
 * with the 3-D engine's forward differences of step KL_LOCAL_FD x (offset.max - offset.min) and the residual
 * over the window and KL_LOCAL_MARGIN samples after it */
#define KL_LOCAL_THRESH 3e-2
#define KL_LOCAL_MAXW 8
#define KL_LOCAL_BEFORE 3
#define KL_LOCAL_MARGIN 4
#define KL_LOCAL_FD 1e-3
#define KL_LOCAL_DAMP 1e-2 /* the Marquardt damping lambda of the local step */
#define KL_CORRECT_TOL 3e-2 /* the reference check: verify.hc_tol and verify.substep_fraction times this; converged to
                              0.006 % RMS against 0.003 on examples/optimise_stiff.yaml (docs/design.md section 5) */

typedef struct kl_correction {
  int ran;                  /* 1 if the stage ran (iterations may still be 0: no step improved) */
  int iterations;           /* accepted iterations */
  int runs;                 /* 3-D runs of candidate steps */
  int from;                 /* the pass it started from (the best verified pass), -1 if it did not run */
  int pass;                 /* the corrected pass ("corrected"), -1 if none was kept */
  double seconds;           /* wall time of the stage, the reference check included */
  double pred_before, pred_after; /* predicted RMS of the start and of the corrected pass */
  double rms_before, max_before;  /* the start, verified as the loop verifies (its row in the table) */
  double ref_before, ref_max_before; /* the start at reference accuracy */
  double rms_loop;          /* the corrected pass as the loop verified it */
  double rms_after, max_after; /* the pass handed over at reference accuracy: the reported verified figure */
  char note[320];           /* one line: why it did not run, or why it cannot help; "" */
  int local;                /* the local step: 0 not run, 1 its step not kept, 2 kept (counted in iterations) */
  int local_n;              /* the offsets it moved (its window) */
} kl_correction;

typedef struct kl_opt_result {
  int npass;
  kl_pass pass[KL_MAXPASS];
  int best;                 /* index of the winner (by verified objective when verified) */
  int naive, initial;       /* indices of the naive pass and the initial guess */
  long evaluations;         /* rollouts in total */
  long host_rollouts;       /* rollouts the host's OpenMP twin ran although a device was open (batches
                               below host_below, host/rollout_batch.h); 0 with --cpu */
  long host_below;          /* that threshold (0: every batch on the device) */
  int screened;             /* screening candidates */
  double screen_best;       /* best screening objective */
  kl_stage_time time;
  int time_limited;         /* a refinement stopped on maxtime (then runs may differ) */
  kl_correction corr;       /* the correction stage (kl_optimise) */
  int nominal;              /* a robust run: the nominal optimum (the best pass by the nominal objective), else -1 */
  int robust;               /* a robust run: the robust pass "robust" (then also best), else -1 */
  int scenarios;            /* a robust run: the optimisation set's size, else 0 */
  long local_rollouts;      /* of the device's rollouts (kl_rollout_count), those this rank ran (a shard's share,
                               host/rollout_batch.h; all without a shard) */
} kl_opt_result;


/* Progress and stop (kelvin/kelvin.h; NULL: none): notices per stage and pass, and ticks (text indented by
 * two spaces, a few a second at most) in the screening, each refinement step or NLopt batch and the 3-D
 * verification (optimiser/progress.h). A callback that returns nonzero stops the run at the next
 * checkpoint: KELVIN_ERR_STOPPED, res holding what was done (the caller drops it). */

/* The whole pipeline: the naive pass and the initial guess, screening, refinement from the best
 * `keep`, verification of the naive pass and the best `verify` in the 3-D engine, re-ranking by the
 * verified objective. res starts empty. The verification of a pass that runs longer than
 * verify.time_limit seconds of wall time stops with KELVIN_ERR_LIMIT (the message names the setting). */
kelvin_status kl_optimise(const kl_problem *pb, kl_host *h, kelvin_progress_fn progress, void *ctx, kl_opt_result *res,
                          char *msg, int cap);

/* kl_optimise, and with sc (not NULL, sc->spec.kind not KL_ROBUST_NOMINAL) a robust refinement after the
 * nominal one, from the pass with the lowest robust objective: method lm, Levenberg-Marquardt on the scenarios'
 * weighted residuals (kl_lm_solve_robust: mean, mean_std, cvar, worst); method nlopt, NLopt on the robust objective
 * (optimiser/robust.h, every kind), each evaluation one batch of (candidates x S) rollouts. The pass "robust" is
 * then the best (res->robust), the nominal optimum (the lowest nominal objective) res->nominal, and every pass gets
 * its robust objective (robj: the refinement's own, see kl_pass). The 3-D verification and the correction stage see
 * the nominal part only (the out-of-sample check is optimiser/robust_check.h). KELVIN_ERR_CONFIG for chance with
 * method lm. */
kelvin_status kl_optimise_robust(const kl_problem *pb, kl_host *h, const kl_scen_set *sc, kelvin_progress_fn progress,
                                 void *ctx, kl_opt_result *res, char *msg, int cap);

/* The device's distribution of passes which (nw indices into res, control points on basis: pb->basis for an
 * optimisation's passes, NULL for an evaluation's) over the scenarios sc (a fresh set for an out-of-sample
 * check): per pass w and scenario s, out[(m nw + w) S + s] for m = 0 RMS error (fraction of F_ref), 1 peak scored
 * force [N], 2 least scored force [N], 3 contact loss (share of the pass time), 4 in the band (1 or 0, sc->spec's);
 * and, if F is not NULL, the scored force at every sample F[(w S + s) ns + k]. One batch of nw x S rollouts. */
#define KL_SCEN_OUT_N 5
kelvin_status kl_scenarios_predict(const kl_problem *pb, kl_host *h, const double *basis, const kl_opt_result *res,
                                   const int *which, int nw, const kl_scen_set *sc, double *out, double *F, char *msg,
                                   int cap);

/* Evaluate a user's pass given per sample (offset o and speed v, ns each) on the device and in the 3-D
 * engine, without optimising (kelvin evaluate); res starts empty and gets the pass and the naive one. */
kelvin_status kl_evaluate(const kl_problem *pb, kl_host *h, const double *o, const double *v, kelvin_progress_fn progress,
                          void *ctx, kl_opt_result *res, char *msg, int cap);

/* Verify passes which (nv indices into res, each predicted by kl_optimise or kl_evaluate of pb) in the
 * CPU engine; passes already verified are left alone, res->best is not changed. basis: pb->basis for the
 * passes of kl_optimise, NULL for those of kl_evaluate (control points = the samples). Progress, stop and
 * verify.time_limit as for kl_optimise. */
kelvin_status kl_verify(const kl_problem *pb, const double *basis, kl_opt_result *res, const int *which, int nv,
                        kelvin_progress_fn progress, void *ctx, char *msg, int cap);

/* Release the per-pass arrays; the struct itself is the caller's. */
void kl_opt_result_free(kl_opt_result *res);

/* Add a pass with control points x to res (returns its index or -1 if full). */
int kl_opt_add(kl_opt_result *res, const char *label, const double *x, int nc);

#endif
