/* kelvin/grind.h: a grinding pass (ball-end or disc tool) that hits a target normal-force profile
 * (docs/design.md section 5). A kelvin_grind holds the settings of a problem (every key of examples/optimise.yaml, with
 * the same defaults: the built-in example), the inputs given in memory (workpiece mesh, path, target
 * profile), the problem prepared from them, and the results of the last run:
 *
 *   kelvin_grind_create -> kelvin_grind_set... / kelvin_grind_load -> kelvin_grind_optimise (screening,
 *   NLopt refinement, verification in the 3-D CPU engine) or kelvin_grind_evaluate (a given pass) ->
 *   kelvin_grind_npass, kelvin_grind_pass_value, kelvin_grind_pass_series ... -> kelvin_grind_free
 *
 * Units: SI (m, m/s, N, kg, s). Offsets are commanded depths along -n below the nominal surface [m].
 * Threads: one handle is used by one thread at a time (its runs use the device's threads); handles are
 * independent of each other. Every fallible call leaves its message on the handle (kelvin_grind_errmsg). */
#ifndef KELVIN_GRIND_H
#define KELVIN_GRIND_H

#include <kelvin/batch.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A handle holding the default settings (the built-in example) and no inputs. KELVIN_ERR_NOMEM
 * (*out = NULL) is the only failure. */
KELVIN_API kelvin_status kelvin_grind_create(kelvin_grind **out);

/* NULL is a no-op. */
KELVIN_API void kelvin_grind_free(kelvin_grind *g);

/* The last error message; "" if none; never NULL (also for g = NULL). */
KELVIN_API const char *kelvin_grind_errmsg(const kelvin_grind *g);

/* ---------------------------------------------------------------------------------------------------
 * Settings, by the keys of a config file ("holder.stiffness", "contact.law", "workpiece.bead.height":
 * section, then key; examples/optimise.yaml lists every key with its default, unit and meaning). The
 * bounds are the config file's. A change discards the prepared problem and the results. */

/* A number key (integer keys take whole numbers). KELVIN_ERR_ARG, the setting unchanged, for an unknown
 * key, a key that takes a name or several numbers, or a value out of bounds (the message gives them). */
KELVIN_API kelvin_status kelvin_grind_set(kelvin_grind *g, const char *key, double value);

/* A key that takes n numbers ("workpiece.extent": 2; "workpiece.shift", "robot.base", "robot.rpy": 3). */
KELVIN_API kelvin_status kelvin_grind_set_array(kelvin_grind *g, const char *key, const double *values, int n);

/* A key that takes a name or a file: "contact.law" = "exact", "optimiser.algorithm" = "LN_BOBYQA",
 * "robot.model" = "builtin" or a .yaml/.urdf file, "workpiece.mesh" / "path.csv" / "target.csv" = a file
 * (relative to the working folder), read when the problem is prepared. Setting a file key drops the
 * matching input given in memory. */
KELVIN_API kelvin_status kelvin_grind_set_string(kelvin_grind *g, const char *key, const char *value);

/* The (first) value of a number or choice key (a choice as its index) into *value. KELVIN_ERR_ARG for
 * an unknown key or a text key. */
KELVIN_API kelvin_status kelvin_grind_get(const kelvin_grind *g, const char *key, double *value);

/* The value of a text, file or choice key ("exact"); NULL for an unknown or number key. Valid until the
 * next change of g. */
KELVIN_API const char *kelvin_grind_get_string(const kelvin_grind *g, const char *key);

/* Load a YAML config file (the format of examples/optimise.yaml): the settings become the defaults
 * overlaid by the file, as for `kelvin optimise FILE`, and the inputs given in memory are dropped; the
 * files it names (relative to its folder) are read when the problem is prepared. KELVIN_ERR_CONFIG or
 * KELVIN_ERR_IO with "FILE:LINE: field: ..." (the handle unchanged). Later failures of
 * kelvin_grind_prepare come back as "FILE:LINE: ..." (the line of the setting the message is about,
 * looked up in the file) or "FILE: ...", and the runs' failures over a setting (KELVIN_ERR_CONFIG) as
 * "FILE:LINE: ..." when the file gives it; a key set by kelvin_grind_set... after the load is not
 * looked up (the message is then about the value given). */
KELVIN_API kelvin_status kelvin_grind_load(kelvin_grind *g, const char *path);

/* ---------------------------------------------------------------------------------------------------
 * Inputs from memory (copied; each wins over the matching file key until that key is set again) */

/* The actual workpiece as a triangle mesh: vert (nvert x 3) [m], tri (ntri x 3) vertex indices,
 * counter-clockwise seen from outside. Sets "workpiece.surface" to "mesh". KELVIN_ERR_ARG for empty,
 * non-finite or degenerate data (the message names the triangle). The path then runs where the plane
 * y = path.y cuts the mesh from x = path.start to path.end, unless a path is given. */
KELVIN_API kelvin_status kelvin_grind_set_mesh(kelvin_grind *g, const double *vert, int nvert, const int *tri, int ntri);

/* The path as planned on the CAD: n >= 2 points (n x 3) [m] and unit outward normals (n x 3), in order
 * along the path; resampled at path.samples equal arc-length steps. */
KELVIN_API kelvin_status kelvin_grind_set_path(kelvin_grind *g, const double *points, const double *normals, int n);

/* A target force profile: n >= 1 samples of arc length s (increasing) [m] and force (> 0) [N], linear in
 * between and constant beyond the ends; replaces the constant target.force. */
KELVIN_API kelvin_status kelvin_grind_set_target(kelvin_grind *g, const double *s, const double *force, int n);

/* ---------------------------------------------------------------------------------------------------
 * The prepared problem */

/* Prepare the problem from the settings and inputs (read the files they name, mesh an analytic part,
 * resample the path, compute the protrusion of the actual part into the tool, the contact constants and
 * the splines). Called by the runs below when needed; a second call without a change does nothing.
 * KELVIN_ERR_IO (a file a setting names that cannot be read), KELVIN_ERR_CONFIG (a file with bad
 * content, a path off the workpiece, a target the offset bounds exclude, ...), KELVIN_ERR_ARG (malformed
 * inputs given in memory), KELVIN_ERR_NOMEM. */
KELVIN_API kelvin_status kelvin_grind_prepare(kelvin_grind *g);

/* Path samples ns, control points nc (n_o offsets then n_v speeds) and path length [m] of the prepared
 * problem; 0 before kelvin_grind_prepare. */
KELVIN_API int kelvin_grind_nsamples(const kelvin_grind *g);
KELVIN_API int kelvin_grind_ncontrol(const kelvin_grind *g);
KELVIN_API double kelvin_grind_length(const kelvin_grind *g);

/* Control points (nc each) of the prepared problem: the naive pass (the constant offset a planner would
 * command on the CAD, at speed.initial), the physics-based initial guess, and the bounds. KELVIN_ERR_ARG
 * before kelvin_grind_prepare. Outputs nullable. */
KELVIN_API kelvin_status kelvin_grind_control(const kelvin_grind *g, double *naive, double *guess, double *lo,
                                              double *hi);

/* Sampled offsets [m] and speeds [m/s] (ns each) of control points x (nc). */
KELVIN_API kelvin_status kelvin_grind_expand(const kelvin_grind *g, const double *x, double *offset, double *speed);

/* Numbers of the prepared problem (kelvin_grind_problem_value); NaN before kelvin_grind_prepare. */
typedef enum kelvin_problem_value {
  KELVIN_PROBLEM_LENGTH = 0,        /* path length [m] */
  KELVIN_PROBLEM_SAMPLES,           /* path samples ns */
  KELVIN_PROBLEM_CONTROLS,          /* control points nc */
  KELVIN_PROBLEM_FORCE_REF,         /* the reference force F_ref: the mean target [N] */
  KELVIN_PROBLEM_CONTACT_SHARE,     /* the contact's share of the compliance along the normal at F_ref (0..1) */
  KELVIN_PROBLEM_CONTACT_STIFFNESS, /* the contact law's K in use [N/m^n] */
  KELVIN_PROBLEM_CHI,               /* the Hunt-Crossley damping chi in use [s/m] */
  KELVIN_PROBLEM_KV_DAMPING,        /* the Kelvin-Voigt damping D in use [N s/m] */
  KELVIN_PROBLEM_NAIVE_OFFSET,      /* the constant offset a planner would command on the CAD [m] */
  KELVIN_PROBLEM_PROTRUSION_MIN,    /* the actual part's protrusion into the tool along the path, least [m] */
  KELVIN_PROBLEM_PROTRUSION_MAX,    /* ... and most [m] */
  KELVIN_PROBLEM_MASS_MIN,          /* the effective mass along the normal over the path, least [kg] */
  KELVIN_PROBLEM_MASS_MAX,          /* ... and most [kg] */
  KELVIN_PROBLEM_ROBOT_SPEED        /* the robot's smallest speed bound along the path [m/s] (0: no robot) */
} kelvin_problem_value;

KELVIN_API double kelvin_grind_problem_value(const kelvin_grind *g, kelvin_problem_value what);

/* The value of a number key as the prepared problem uses it (a derived default, "offset.min", filled
 * in), into *value; KELVIN_ERR_ARG before kelvin_grind_prepare, for an unknown key or a text key. */
KELVIN_API kelvin_status kelvin_grind_problem_get(const kelvin_grind *g, const char *key, double *value);

/* Read a pass from a CSV file (a header naming the columns s_m, offset_m, speed_m_s, or s, offset, speed;
 * other columns are ignored, so a trajectory.csv written by `kelvin optimise` reads as it is; values in
 * m and m/s) and interpolate it linearly onto the prepared problem's path samples (prepared here if
 * needed): offset and speed, ns values each, ready for kelvin_grind_evaluate. The rows must cover the
 * path (s from 0 to its length) and stay within the offset and speed bounds. KELVIN_ERR_CONFIG (or
 * KELVIN_ERR_IO) with "FILE:LINE: column '...': ..." and, for a value that looks like a unit mistake
 * (millimetres, mm/s), a hint. */
KELVIN_API kelvin_status kelvin_grind_read_pass(kelvin_grind *g, const char *path, double *offset, double *speed);

/* ---------------------------------------------------------------------------------------------------
 * Runs (each prepares the problem if needed and replaces the results) */

/* Progress and stop (kelvin/kelvin.h) of the runs below (kelvin_grind_optimise, _evaluate, _verify):
 * fn is called from the calling thread with the fraction of the run done and a line for a person:
 * a notice when a stage begins or ends (screening, refinement, verification) and when a pass's 3-D
 * verification starts, is expected to take some time and is done; between them ticks, their text
 * indented by two spaces, a few times a second at most (each screening batch, Levenberg-Marquardt step,
 * NLopt evaluation, and in the verification from a thread that watches the engine). A nonzero return
 * stops the run at its next checkpoint (in the verification: the next path sample of each pass): the
 * run returns KELVIN_ERR_STOPPED and leaves no results. NULL for none (the default). */
KELVIN_API void kelvin_grind_set_progress(kelvin_grind *g, kelvin_progress_fn fn, void *ctx);

/* The whole pipeline on dev (an open device): the naive pass and the initial guess; method lm (the
 * default): Levenberg-Marquardt on the per-sample commands from the guess; method nlopt: quasi-random
 * screening (Sobol, or Halton above 40 variables), NLopt refinement from the best (optimiser.keep)
 * starts; then verification of the naive pass and the best
 * (verify.count) passes in the 3-D CPU engine, winners ranked by the verified objective. Passes are
 * labelled "naive", "initial", "refined-1", ... On a device that is not a CPU, batches of fewer than
 * 1024 candidates (the environment variable KELVIN_ROLLOUT_HOST_BELOW sets the number; 0: none) run on
 * the host's OpenMP twin, which is faster for so few (docs/design.md section 4). KELVIN_ERR_CONFIG (an
 * unknown NLopt algorithm, a bad KELVIN_ROLLOUT_HOST_BELOW), KELVIN_ERR_OPENCL, KELVIN_ERR_BUILD (the
 * rollout program, built by the first batch that runs on the device; the log is in the message),
 * KELVIN_ERR_NOMEM, KELVIN_ERR_STOPPED (kelvin_grind_set_progress), KELVIN_ERR_LIMIT (a pass's 3-D
 * verification ran longer than verify.time_limit seconds, 120 by default: the message says how far it
 * got and how long it would take; or its sub-steps, estimated up front from the stiffest time scale,
 * exceed the larger of KELVIN_WORK_LIMIT and what verify.time_limit allows: refused before it runs),
 * KELVIN_ERR_DIVERGED (a pass's 3-D verification diverged: the message gives the time, the force and the
 * likely cause; no results). A target the bounds do not let it reach is a success with a
 * diagnosis (kelvin_grind_diagnosis). */
KELVIN_API kelvin_status kelvin_grind_optimise(kelvin_grind *g, kelvin_device *dev);

/* A given pass, without optimising: offset [m] and speed [m/s] > 0 per path sample (ns each, see
 * kelvin_grind_nsamples and kelvin_grind_read_pass; prepare first), predicted on dev and verified in the
 * CPU engine next to the naive pass. Passes: "naive" and "user" (the best). Failures as for
 * kelvin_grind_optimise. */
KELVIN_API kelvin_status kelvin_grind_evaluate(kelvin_grind *g, kelvin_device *dev, const double *offset,
                                               const double *speed);

/* Verify one more pass of the results (e.g. "initial", or a refined pass beyond verify.count) in the 3-D
 * CPU engine; a pass already verified is left as it is. The best pass is not re-ranked. KELVIN_ERR_ARG
 * for a bad index or no results. */
KELVIN_API kelvin_status kelvin_grind_verify(kelvin_grind *g, int pass);

/* ---------------------------------------------------------------------------------------------------
 * Results of the last run (0 passes before one) */

/* Passes, and the index of the best: lowest verified objective among the verified passes (lowest
 * predicted objective when none is), never the naive pass of an optimisation; -1 without results. */
KELVIN_API int kelvin_grind_npass(const kelvin_grind *g);
KELVIN_API int kelvin_grind_best(const kelvin_grind *g);

/* "naive", "initial", "refined-1", ..., "user"; NULL for a bad index. */
KELVIN_API const char *kelvin_grind_pass_label(const kelvin_grind *g, int pass);

/* Numbers of a pass (kelvin_grind_pass_value). Errors are fractions of the reference force F_ref (the
 * mean target): 0.0039 is 0.39 %. "Verified" values are NaN for a pass not verified. */
typedef enum kelvin_pass_value {
  KELVIN_PASS_RMS = 0,            /* predicted RMS force error (the device rollout) */
  KELVIN_PASS_RMS_VERIFIED,       /* verified RMS force error (the 3-D CPU engine, the wrist sensor's reading) */
  KELVIN_PASS_OBJECTIVE,          /* predicted weighted objective */
  KELVIN_PASS_OBJECTIVE_VERIFIED, /* verified weighted objective */
  KELVIN_PASS_LOSS,               /* predicted fraction of the pass time out of contact */
  KELVIN_PASS_LOSS_VERIFIED,      /* verified fraction of the pass time out of contact */
  KELVIN_PASS_TIME,               /* predicted pass time [s] */
  KELVIN_PASS_AGREEMENT,          /* RMS over the samples of (S_device - S_3d) / F_ref, S the wrist sensor's
                                     reading (3-D) and its equivalent F_N + m z'' (device) */
  KELVIN_PASS_VERIFIED,           /* 1 if verified, else 0 */
  KELVIN_PASS_ROLLOUTS,           /* rollouts the refinement of this pass spent (0 for the others) */
  KELVIN_PASS_AGREEMENT_MAX,      /* the largest |S_device - S_3d| / F_ref over the samples */
  KELVIN_PASS_DISAGREE,           /* 1 if KELVIN_PASS_AGREEMENT is above verify.tolerance (see kelvin_grind_pass_warning) */
  KELVIN_PASS_INERTIA,            /* RMS of (sensor - contact force) / F_ref in 3-D: the tool's inertia m a */
  KELVIN_PASS_SUBSTEPS_VERIFIED,  /* the 3-D engine's sub-steps */
  KELVIN_PASS_SECONDS_VERIFIED    /* wall time of its 3-D verification [s] */
} kelvin_pass_value;

/* One number of a pass; NaN for a bad index or value. */
KELVIN_API double kelvin_grind_pass_value(const kelvin_grind *g, int pass, kelvin_pass_value what);

/* Per-sample series of a pass (kelvin_grind_pass_series), ns values each. "Scored" forces are the
 * measure target.measure picks (step-averaged by default); the others are both measures separately. */
typedef enum kelvin_series {
  KELVIN_SERIES_S = 0,           /* arc length [m] */
  KELVIN_SERIES_OFFSET,          /* commanded offset [m] */
  KELVIN_SERIES_SPEED,           /* commanded feed speed [m/s] */
  KELVIN_SERIES_TARGET,          /* target force [N] */
  KELVIN_SERIES_FORCE,           /* predicted force, the scored measure [N] */
  KELVIN_SERIES_FORCE_VERIFIED,  /* verified force: the 3-D wrist sensor's reading, the scored measure [N] (a pass
                                    not verified: error) */
  KELVIN_SERIES_FORCE_INSTANT,   /* predicted instantaneous force [N] */
  KELVIN_SERIES_FORCE_AVERAGED,  /* predicted force averaged over the interval ending at the sample [N] */
  KELVIN_SERIES_TIME,            /* predicted time at the sample [s] */
  KELVIN_SERIES_DEPTH,           /* predicted tool depth [m] */
  KELVIN_SERIES_CONTACT,         /* predicted contact (1 in contact, else 0) */
  KELVIN_SERIES_X,               /* the path point on the CAD: x, y, z [m] (any pass) */
  KELVIN_SERIES_Y,
  KELVIN_SERIES_Z,
  KELVIN_SERIES_NX,              /* its unit outward normal */
  KELVIN_SERIES_NY,
  KELVIN_SERIES_NZ,
  KELVIN_SERIES_SCORED,          /* the device's prediction of the scored measure (target.measure) [N] */
  KELVIN_SERIES_SENSOR,          /* the device's wrist-sensor equivalent F_N + m z'', step-averaged [N] */
  KELVIN_SERIES_SENSOR_INSTANT,  /* ... at the samples [N] */
  KELVIN_SERIES_SCORED_VERIFIED, /* the 3-D engine's scored measure (sensor or contact force, as target.measure) [N] */
  KELVIN_SERIES_SENSOR_VERIFIED, /* the 3-D wrist sensor's reading, step-averaged [N] */
  KELVIN_SERIES_SENSOR_INSTANT_VERIFIED, /* ... at the samples [N] */
  KELVIN_SERIES_CONTACT_VERIFIED /* verified contact (1 while a contact carries force, else 0) */
} kelvin_series;

/* Series what of a pass into out (ns values). KELVIN_ERR_ARG for a bad index or series, or a verified
 * series of a pass not verified. */
KELVIN_API kelvin_status kelvin_grind_pass_series(const kelvin_grind *g, int pass, kelvin_series what, double *out);

/* Control points of a pass (nc values for an optimisation, 2 ns for an evaluation: offsets then speeds)
 * into x (cap values); the count, or -1 for a bad index. */
KELVIN_API int kelvin_grind_pass_control(const kelvin_grind *g, int pass, double *x, int cap);

/* Rollouts on the device in the last run. */
KELVIN_API long kelvin_grind_rollouts(const kelvin_grind *g);

/* The objective terms of a pass (KELVIN_OBJ_N values, indexed by KELVIN_OBJ_*, kelvin/batch.h): the
 * device's prediction (verified = 0) or the 3-D engine's (verified = 1). KELVIN_ERR_ARG for a bad index,
 * or verified terms of a pass not verified (terms then NaN). */
KELVIN_API kelvin_status kelvin_grind_pass_terms(const kelvin_grind *g, int pass, int verified, double *terms);

/* Why the refinement of a pass stopped ("maxeval reached", "converged ..."); "" for the others, NULL for
 * a bad index. */
KELVIN_API const char *kelvin_grind_pass_stop(const kelvin_grind *g, int pass);

/* The robot waypoints of a pass (what the 3-D verification follows, docs/design.md section 5): time
 * t [s], tool-centre-point position pos (3 per sample) [m] and orientation quat (w, x, y, z; 4 per
 * sample) at each of the ns samples; the TCP lies on the tool axis, tool z into the part, x along the
 * path. KELVIN_ERR_ARG for a bad index or NULL output. */
KELVIN_API kelvin_status kelvin_grind_pass_waypoints(const kelvin_grind *g, int pass, double *t, double *pos, double *quat);

/* Numbers of the last run (kelvin_grind_run_value); NaN without results. */
typedef enum kelvin_run_value {
  KELVIN_RUN_ROLLOUTS = 0,       /* rollouts in total */
  KELVIN_RUN_ROLLOUTS_HOST,      /* of them, run on the host's OpenMP twin although a device was open */
  KELVIN_RUN_HOST_BELOW,         /* batches smaller than this went to the host (0: none) */
  KELVIN_RUN_SCREENED,           /* screening candidates */
  KELVIN_RUN_SCREEN_BEST,        /* the best screening objective */
  KELVIN_RUN_TIME_LIMITED,       /* 1 if a refinement stopped on optimiser.maxtime (the run may not reproduce) */
  KELVIN_RUN_NAIVE,              /* the index of the naive pass */
  KELVIN_RUN_TIME_SETUP,         /* wall seconds: setting up */
  KELVIN_RUN_TIME_SCREENING,     /* ... screening */
  KELVIN_RUN_TIME_REFINEMENT,    /* ... refinement */
  KELVIN_RUN_TIME_VERIFICATION,  /* ... the 3-D verification */
  KELVIN_RUN_TIME_TOTAL,         /* ... the whole run */
  KELVIN_RUN_TIME_CORRECTION     /* ... the correction stage, its reference check included (0 when it did not run) */
} kelvin_run_value;

KELVIN_API double kelvin_grind_run_value(const kelvin_grind *g, kelvin_run_value what);

/* The correction stage of the last kelvin_grind_optimise (optimiser.correct; docs/design.md section 5,
 * "Correction"): the best verified pass corrected with the 3-D engine in the loop, then checked once more
 * by the engine at reference accuracy (sub-step tolerances a hundred times tighter: about ten times the
 * sub-steps), a run the correction never saw; the lower verified objective there is the best pass. Errors
 * are fractions of F_ref: RMS and max of (S_3d - F*) / F_ref over the samples. */
typedef enum kelvin_correction_value {
  KELVIN_CORRECTION_RAN = 0,          /* 1 if the stage ran, else 0 (then the rest are NaN but the indices, -1) */
  KELVIN_CORRECTION_ITERATIONS,       /* accepted iterations (0: no step improved the verified objective) */
  KELVIN_CORRECTION_RUNS,             /* 3-D runs: the candidate steps and the reference check */
  KELVIN_CORRECTION_FROM,             /* the index of the pass it started from (-1: it did not run) */
  KELVIN_CORRECTION_PASS,             /* the index of the corrected pass "corrected" (-1: none kept) */
  KELVIN_CORRECTION_SECONDS,          /* its wall time [s] */
  KELVIN_CORRECTION_PREDICTED_BEFORE, /* predicted RMS error of the start */
  KELVIN_CORRECTION_PREDICTED_AFTER,  /* predicted RMS error of the corrected pass (the device's view of it) */
  KELVIN_CORRECTION_VERIFIED_BEFORE,  /* verified RMS error of the start (as the verification stage ran it) */
  KELVIN_CORRECTION_MAX_BEFORE,       /* ... its largest error */
  KELVIN_CORRECTION_REFERENCE_BEFORE, /* verified RMS error of the start at reference accuracy */
  KELVIN_CORRECTION_REFERENCE_MAX_BEFORE, /* ... its largest error */
  KELVIN_CORRECTION_VERIFIED_LOOP,    /* verified RMS error of the corrected pass as the loop ran it */
  KELVIN_CORRECTION_VERIFIED_AFTER,   /* verified RMS error of the pass handed over, at reference accuracy */
  KELVIN_CORRECTION_MAX_AFTER         /* ... its largest error */
} kelvin_correction_value;

/* One number of the correction stage; NaN without results or for a bad value. */
KELVIN_API double kelvin_grind_correction_value(const kelvin_grind *g, kelvin_correction_value what);

/* One line when the correction was asked for and could not run (optimiser.method nlopt, no verified pass),
 * or ran and leaves the verified error above the predicted by more than 0.1 % of F_ref, naming why (the 3-D
 * engine's contact loss, the offset bounds, no further gain), or kept the start; NULL otherwise. Valid
 * until the next run. */
KELVIN_API const char *kelvin_grind_correction_note(const kelvin_grind *g);

/* The warning for a pass whose device prediction and 3-D verification disagree beyond verify.tolerance
 * ("device prediction and 3-D verification of 'refined-1' differ by 3.21 % RMS (> 2.00 %)"), or NULL
 * (a pass not verified or not flagged, a bad index). Valid until the next run. */
KELVIN_API const char *kelvin_grind_pass_warning(const kelvin_grind *g, int pass);

/* After kelvin_grind_optimise: NULL when the best pass reaches the target (RMS error at most 10 % of
 * F_ref, verified when it was verified), else one line saying it does not and why: "target not
 * reachable: the best pass ('refined-1') still misses the target by 23.4 % RMS; limited by offset.max
 * (...)", or, when the device reaches it and the 3-D engine does not, that the device's 1-D model does
 * not hold for the set-up. NULL after kelvin_grind_evaluate (a given pass is not judged) and after a robust
 * run (kelvin/robust.h: its pass is judged by the out-of-sample check). Valid until the next run. */
KELVIN_API const char *kelvin_grind_diagnosis(const kelvin_grind *g);

/* ---------------------------------------------------------------------------------------------------
 * The prepared problem in brief (api/grind_contact.c): its contact and what the files gave, as
 * `kelvin check` prints them. The contact's static relations are those of the device model
 * (kernels/kl_contact_static.h), so every caller reads the numbers `kelvin optimise` uses. */

/* The contact of the prepared problem, evaluated at the mean target force. */
typedef struct kelvin_grind_contact_info {
  const char *model;        /* kelvin_model_name: "kv" (Kelvin-Voigt) or "hc" (Hunt-Crossley family) */
  const char *law;          /* kelvin_law_name of the damping law ("" for kv) */
  double K;                 /* stiffness [N/m^n] */
  double n;                 /* exponent (1 for kv and for a disc's line contact, 1.5 for a Hertz point) */
  double D;                 /* Kelvin-Voigt damping [N s/m] (0 for hc) */
  double chi;               /* Hunt-Crossley damping factor [s/m] (0 for kv) */
  double cr;                /* coefficient of restitution (contact.cr) */
  double force;             /* the mean target force, where the numbers below hold [N] */
  double depth;             /* static depth at that force, (F/K)^(1/n) [m] */
  double compliance;        /* the contact's d(depth)/dF there, depth / (n F) [m/N] */
  double holder_compliance; /* the holder's 1 / holder K [m/N] */
  double share;             /* compliance / (compliance + holder_compliance), in [0, 1] */
} kelvin_grind_contact_info;

/* The contact of the prepared problem into *out. KELVIN_ERR_ARG (out zeroed) before kelvin_grind_prepare. */
KELVIN_API kelvin_status kelvin_grind_contact(const kelvin_grind *g, kelvin_grind_contact_info *out);

/* The actual part's mesh of the prepared problem (read from workpiece.mesh, given in memory, or meshed
 * from the analytic surface): its triangle count, and its bounds lo, hi [m] (nullable). 0 before
 * kelvin_grind_prepare. */
KELVIN_API int kelvin_grind_mesh_bounds(const kelvin_grind *g, double lo[3], double hi[3]);

/* The arm that holds the tool (robot.model), if the prepared problem has one: its name, and its joint
 * count in *joints (nullable); NULL (and 0) without one or before kelvin_grind_prepare. */
KELVIN_API const char *kelvin_grind_robot(const kelvin_grind *g, int *joints);

#ifdef __cplusplus
}
#endif
#endif
