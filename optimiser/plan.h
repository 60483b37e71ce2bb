/* optimiser/plan.h: passes planned to a target surface (docs/design.md section 9.4, "Planning passes").
 *
 * On the device model's prediction of the evolving part (optimiser/removal.h), pass after pass: the need
 * along the track (its error above the target less an aim of removal.tolerance / 2), the passes still
 * needed N = ceil(max need / d_max) (d_max the flat-part centre depth at target.max_force and speed.min),
 * this pass's share want = need / N, the fastest feed at which target.max_force removes want (limited by
 * speed.max_accel), the force F* that removes want at that feed, offsets from the static relation on the
 * evolved protrusion corrected by the device model's force error (a few iterations, trial steps in one
 * batch, smoothed to offset.max_accel, never above target.max_force in the prediction), then the pass
 * predicted and deposited into the surface the next pass sees. The naive plan repeats the naive pass
 * (pb->naive_o at speed.initial) on the evolving part. A heuristic, not an optimum. */
#ifndef KL_OPTIMISER_PLAN_H
#define KL_OPTIMISER_PLAN_H

#include "host/rollout_batch.h"
#include "optimiser/problem.h"
#include "optimiser/removal.h"

#define KL_PLAN_ITERATIONS 4  /* the offsets' force corrections per pass */
#define KL_PLAN_AIM 2         /* the removal's own corrections per pass (deposits on a copy of the surface) */
#define KL_PLAN_CARVE 6        /* a fixed pass's predictions with its own carving (the drops it meets) */
#define KL_PLAN_CLEARANCE 1e-4 /* where F* = 0 the tool is lifted this far clear of the evolved part [m] */
#define KL_PLAN_FORCE_MARGIN 0.9 /* closed loop: passes planned to this fraction of target.max_force, since the 3-D
                                  * engine's wrist force overshoots the device's prediction (docs/design.md 9.4) */
#define KL_PLAN_NAIVE "naive"
#define KL_PLAN_PLANNED "planned"

/* One pass of a plan, as the device model predicts it (or the 3-D engine runs it: optimiser/verify3d.h). */
typedef struct kl_plan_pass {
  double *o, *v;          /* commanded offset [m] and feed [m/s] (ns) */
  double *Fset;           /* the force the planner asked for, F* (ns; NaN for the naive pass) */
  double *F, *t;          /* the pass's force (step-averaged contact force, or the 3-D engine's) [N] and time [s] (ns) */
  double *before, *after; /* the surface's height above the target on the path's row at the samples [m] (ns) */
  float *removed;         /* the depth this pass removed, per cell (nu x nw) [m] */
  kl_surface_stats st;    /* the surface after the pass */
  double volume;          /* removed by this pass over the grid [m^3] */
  double volume_law;      /* the law's time integral of k_p F v_rel over the pass [m^3] */
  double time;            /* the pass's time [s] */
  double force_max;       /* its largest force [N] */
  double tool_R;          /* the tool's radius after it [m] */
  int n;                  /* the passes still needed when it was planned (N; 0 for the naive) */
} kl_plan_pass;

/* A plan: its passes in order and the surface they leave. */
typedef struct kl_plan {
  char label[16];         /* "planned", "naive", "user" */
  int npass, cap;
  kl_plan_pass *pass;
  kl_surface sf;          /* the surface after the last pass (its removed: every pass's) */
  kl_surface_stats st0;   /* the surface before the first pass */
  double *before0;        /* the path row's height above the target before the first pass (ns) */
  int reached;            /* the track's residual max <= removal.tolerance after the last pass */
  long rollouts;          /* device rollouts spent */
  double seconds;         /* wall time of the planning [s] (closed loop: the engine's passes included) */
  double seconds_engine;  /* closed loop: the 3-D engine's share of seconds [s] */
  const struct kl_plan *start; /* closed loop: the engine's run whose surface each pass started from (pass p on the
                                * engine's surface after pass p - 1), or NULL: each pass on this plan's own */
} kl_plan;

/* Plan limits from the problem's settings (removal.tolerance, removal.gouge, removal.max_passes). */
typedef struct kl_plan_limits {
  double tol, gouge;
  int max_passes;
} kl_plan_limits;
void kl_plan_limits_of(const kl_problem *pb, kl_plan_limits *lim);

/* The centre depth a pass at constant force F [N] and feed v [m/s] cuts on a flat part (docs/design.md section
 * 9.4): its cross-section per unit length is the law's A = k_p F v_rel / v (v_rel = omega rc + v); the disc
 * spreads it over its width, d = A / L; the ball cuts the parabola d (1 - w^2 / c^2), c^2 = a^2 + 2 R d (a the
 * Hertz radius at F on the tool radius R), A = (4/3) d sqrt(a^2 + 2 R d): Hertz's flat-part depth 3F/(4a) k_p
 * v_rel / v while d << a^2 / 2R, the rigid ball's own groove beyond. */
double kl_plan_flat_depth(const kl_removal_law *law, double R, double F, double v);

/* Its inverse in F: the force that removes depth at feed v (0 for depth <= 0). */
double kl_plan_flat_force(const kl_removal_law *law, double R, double depth, double v);

/* The feed of a pass (ns): at each sample the fastest in [speed.min, vhi] (vhi: speed.max, or the robot's
 * bound when lower) at which target.max_force removes want[k] on a flat part (vhi where want is 0), then
 * limited by speed.max_accel, |v dv/ds| <= a_max, by a forward and a backward sweep. */
void kl_plan_feed(const kl_problem *pb, const kl_removal_law *law, double R, const double *want, double *v);

/* The passes still needed, N = ceil(max need / d_max) (0 when nothing is needed), and this pass's want, feed and
 * force F* (ns each) from the need (ns). With e (ns; nullable), the path row's height above the target at the
 * samples, a ball's want is limited by its reach: its lowest point at s_k leaves e_k - want_k, and the rigid ball,
 * (s - s_k)^2 / 2R above that out to the groove's half-width c (c^2 = a^2 + 2 R want), must not cut below another
 * sample's planned level e_j - want_j (docs/design.md section 9.4). */
int kl_plan_design(const kl_problem *pb, const kl_removal_law *law, double R, const double *need, const double *e,
                   double *want, double *v, double *F);

/* The need at each sample (ns): the largest error above the target over the track's cells across the path
 * at the sample's row, less lim->tol / 2, floored at 0. */
void kl_plan_need(const kl_problem *pb, const kl_surface *sf, const kl_removal_law *law, const kl_plan_limits *lim,
                  double *need);

/* Plan passes on the host's device for the problem pb (removal.* set): the planned plan (label "planned")
 * or the naive one (naive = 1). The plan starts empty (zeroed) and gets the passes; on a failure it holds
 * what was done (kl_plan_free it). A plan that stops at removal.max_passes without reaching the tolerance
 * is not a failure here: plan->reached says so. Progress: a notice per pass with its residual, gouge and
 * time; a stop request -> KELVIN_ERR_STOPPED. */
kelvin_status kl_plan_run(const kl_problem *pb, kl_host *h, int naive, kelvin_progress_fn progress, void *ctx,
                          kl_plan *plan, char *msg, int cap);

/* The planned plan in closed loop (docs/design.md section 9.4), as a grinding cell that measures the part between
 * passes: pass p is planned as kl_plan_run plans it, on the surface the 3-D engine left after pass p - 1; plan gets
 * the device model's prediction of each pass (deposited on a copy of that surface: its removal, stats, force), eng
 * (zeroed here) the 3-D engine's run of the same pass from the same surface (kl_verify3d_removal, the watch as
 * kl_verify3d_plans's with verify.time_limit); the next pass starts from what the engine left. It stops when the
 * engine's track residual is within removal.tolerance (plan->reached and eng->reached say so) or at
 * removal.max_passes. The passes are planned to KL_PLAN_FORCE_MARGIN of target.max_force. plan->start points at eng (kl_plan_error_after). The first failure is returned, both plans
 * holding what was done (kl_plan_free them, in either order: plan only points at eng). */
kelvin_status kl_plan_run_closed(const kl_problem *pb, kl_host *h, kelvin_progress_fn progress, void *ctx, kl_plan *plan,
                                 kl_plan *eng, char *msg, int cap);

/* One given pass (o, v per sample) on the part as prepared, predicted and deposited (kelvin_grind_evaluate
 * with a removal section): plan "user" of one pass. */
kelvin_status kl_plan_user(const kl_problem *pb, kl_host *h, const double *o, const double *v, kl_plan *plan,
                           char *msg, int cap);

/* Run plans' passes (n plans dev[i], each predicted by kl_plan_run or kl_plan_user) in the 3-D engine in sequence on
 * their own evolving surfaces (optimiser/verify3d.h, kl_verify3d_plans: the same pass of every plan at once, OpenMP
 * across plans, so that the surface after each pass is kept): out[i] (zeroed here) gets plan i as the engine ran it,
 * its force the wrist sensor's step-averaged reading. Progress (a notice per pass), stop and verify.time_limit as
 * kl_verify3d_many's; the first failure is returned, out holding what was done (kl_plan_free it). */
kelvin_status kl_plan_verify(const kl_problem *pb, int n, const kl_plan *const *dev, kl_plan *const *out,
                             kelvin_progress_fn progress, void *ctx, char *msg, int cap);

/* Add a zeroed pass with its series allocated (ns, and the grid's nu x nw); NULL when memory runs out. */
kl_plan_pass *kl_plan_add(kl_plan *plan, int ns, int ncell);

/* The error against the target after pass p (-1: before the first) of the path's row at the samples into
 * out (ns), or of every cell (out: nu x nw) with cells = 1: stock less the removal of passes 0..p (closed loop,
 * plan->start set: less the start plan's removal of passes 0..p-1 and this plan's pass p). */
void kl_plan_error_after(const kl_plan *plan, int p, int cells, const kl_problem *pb, double *out);

void kl_plan_free(kl_plan *plan); /* releases what the plan holds and zeroes it; NULL-safe */

#endif
