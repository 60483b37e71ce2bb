/* kelvin/removal.h: material removal and passes planned to a target surface (docs/design.md section 9).
 *
 * A grinding problem (kelvin/grind.h) whose config has a removal: section (removal.preston set, and
 * tool.spindle_rpm) removes material by Preston's law, k_p p v_rel per unit area, p the Hertz pressure
 * over the contact patch and v_rel the abrasive's speed over the part. The part near the path is a height
 * field that each pass lowers and the next pass sees. Two runs use it:
 *
 *   kelvin_grind_plan      chooses the number of passes and each pass's offsets and feed speeds so that
 *                          the surface reaches its target (removal.tolerance above it, removal.gouge below)
 *                          in the shortest time under the force limit (target.max_force) and the robot's
 *                          limits, in closed loop with the 3-D engine: pass p is planned on the device model
 *                          on the surface the engine left after pass p - 1, then run in the engine on that
 *                          surface (which integrates the removal from its own contact force), until the
 *                          engine's track is within removal.tolerance. The naive plan (the naive pass's
 *                          constant offset at speed.initial, repeated until the track is flush or
 *                          removal.max_passes) is open-loop: predicted on the device's own evolving surface,
 *                          then run in sequence in the engine, for comparison.
 *   kelvin_grind_evaluate  (kelvin/grind.h) on such a problem also computes the removal of the given pass,
 *                          in the device model and in the 3-D engine, as a plan "user" of one pass.
 *
 * Plans are indexed 0 .. kelvin_grind_removal_nplans - 1 ("planned" then "naive" after kelvin_grind_plan;
 * "user" after kelvin_grind_evaluate). Passes of a plan 0 .. npass - 1; pass -1 means the plan as a whole
 * (the surface it leaves, its total time and volume). "verified" 1 is the 3-D engine's numbers; "verified" 0
 * the device model's prediction: for the planned plan, of each pass from the engine's surface before it (so pass
 * p's two figures start from the same surface: their agreement is the device model's, pass by pass); for the
 * naive plan and "user", of the passes in sequence on the device's own surface. Units SI; depths and heights
 * along the nominal normal [m]. */
#ifndef KELVIN_REMOVAL_H
#define KELVIN_REMOVAL_H

#include <kelvin/grind.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Plan passes to the target surface on dev and verify them in the 3-D CPU engine, with the naive plan
 * beside them. Progress and stop as for kelvin_grind_optimise (a notice per planned pass and per 3-D
 * pass). KELVIN_ERR_CONFIG (no removal section, or the message of a setting that makes the target
 * unreachable in removal.max_passes: the message says how far it got), and the failures of
 * kelvin_grind_optimise. Replaces the results of any earlier run. kelvin_grind_run_value gives its wall
 * seconds (KELVIN_RUN_TIME_REFINEMENT: planning both plans, _VERIFICATION: their 3-D runs, _TOTAL) and
 * kelvin_grind_rollouts the device rollouts of both plans. */
KELVIN_API kelvin_status kelvin_grind_plan(kelvin_grind *g, kelvin_device *dev);

/* Plans of the last run with removal (0 without). */
KELVIN_API int kelvin_grind_removal_nplans(const kelvin_grind *g);

/* "planned", "naive" or "user"; NULL for a bad index. */
KELVIN_API const char *kelvin_grind_removal_label(const kelvin_grind *g, int plan);

/* Passes of a plan; -1 for a bad index. */
KELVIN_API int kelvin_grind_removal_npass(const kelvin_grind *g, int plan);

/* Numbers of a pass (or of the plan, pass -1) of a plan. */
typedef enum kelvin_removal_value {
  KELVIN_REMOVAL_RESIDUAL_RMS = 0, /* after the pass: error above the target along the track, RMS [m] */
  KELVIN_REMOVAL_RESIDUAL_MAX,     /* ... its largest [m] */
  KELVIN_REMOVAL_GOUGE,            /* ... the deepest the removal went below the target (>= 0) [m] */
  KELVIN_REMOVAL_VOLUME,           /* volume removed by the pass (the plan: all its passes) [m^3] */
  KELVIN_REMOVAL_VOLUME_LAW,       /* the same by the law's time integral of k_p F v_rel (volume conservation) [m^3] */
  KELVIN_REMOVAL_TIME,             /* the pass's time (the plan: the sum) [s] */
  KELVIN_REMOVAL_FORCE_MAX,        /* the largest force of the pass (the plan: of all) [N] */
  KELVIN_REMOVAL_REMOVED_MAX,      /* the deepest removal after the pass [m] */
  KELVIN_REMOVAL_TOOL_RADIUS       /* the tool's radius after the pass (wear) [m] */
} kelvin_removal_value;

/* One number; NaN for a bad index or value, or a verified number of a plan not verified. */
KELVIN_API double kelvin_grind_removal_value(const kelvin_grind *g, int plan, int pass, int verified,
                                             kelvin_removal_value what);

/* Per path sample series of one pass (ns values; kelvin_grind_nsamples). */
typedef enum kelvin_removal_series {
  KELVIN_REMOVAL_S = 0,        /* arc length [m] */
  KELVIN_REMOVAL_OFFSET,       /* commanded offset [m] */
  KELVIN_REMOVAL_SPEED,        /* commanded feed speed [m/s] */
  KELVIN_REMOVAL_FORCE,        /* the pass's force: the device's contact force, or the 3-D wrist sensor's [N] */
  KELVIN_REMOVAL_BEFORE,       /* the surface's height above the target on the path before the pass [m] */
  KELVIN_REMOVAL_AFTER         /* ... after it [m] */
} kelvin_removal_series;

KELVIN_API kelvin_status kelvin_grind_removal_series(const kelvin_grind *g, int plan, int pass, int verified,
                                                     kelvin_removal_series what, double *out);

/* The grid (kelvin_grind_removal_grid): nu cells along the path by nw across it (*nu, *nw; nullable). */
KELVIN_API kelvin_status kelvin_grind_removal_grid_size(const kelvin_grind *g, int *nu, int *nw);

/* The grid's cell size along the path du and across it dw [m] (*du, *dw; nullable): a cell's area is du dw,
 * and a plan's (or a pass's) KELVIN_REMOVAL_VOLUME is the sum of its removed depths over the grid x du dw. */
KELVIN_API kelvin_status kelvin_grind_removal_grid_spacing(const kelvin_grind *g, double *du, double *dw);

/* The grid after a pass (pass -1: after the plan), nu x nw values each (index i * nw + j; all nullable):
 * the cell centres x, y on the CAD (workpiece frame) [m], the depth removed by this pass alone (by the plan
 * as a whole for pass -1) [m], and the error against the target after it (> 0 above, < 0 below) [m]. */
KELVIN_API kelvin_status kelvin_grind_removal_grid(const kelvin_grind *g, int plan, int pass, int verified, double *x,
                                                   double *y, double *removed, double *error);

#ifdef __cplusplus
}
#endif
#endif
