/* optimiser/schema.c: the table of grinding settings and what it drives (schema.h). */
#include "optimiser/schema.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kl_impact.h"
#include "kernels/kl_names.h"
#include "optimiser/scenario.h"

/* Stored values of the choices are the indices of their names. */
_Static_assert(KL_MODEL_KV == 0 && KL_MODEL_HC == 1, "contact.model names are indexed by KL_MODEL_*");
_Static_assert(KL_LAW_HUNT_CROSSLEY == 0 && KL_LAW_LANKARANI_NIKRAVESH == 1 && KL_LAW_FLORES == 2 &&
                 KL_LAW_GONTHIER == 3 && KL_LAW_EXACT == 4,
               "contact.law names are indexed by KL_LAW_*");
_Static_assert(KL_MEASURE_INSTANT == 0 && KL_MEASURE_AVERAGED == 1 && KL_MEASURE_SENSOR_INSTANT == 2 &&
                 KL_MEASURE_SENSOR == 3,
               "target.measure names are indexed by KL_MEASURE_*");
_Static_assert(KL_METHOD_LM == 0 && KL_METHOD_NLOPT == 1, "optimiser.method names are indexed by KL_METHOD_*");
_Static_assert(KL_JACOBIAN_DIFFERENCES == 0 && KL_JACOBIAN_TANGENT == 1, "optimiser.jacobian names are indexed by KL_JACOBIAN_*");
_Static_assert(KL_ROBUST_NOMINAL == 0 && KL_ROBUST_MEAN == 1 && KL_ROBUST_MEAN_STD == 2 && KL_ROBUST_CVAR == 3 &&
                 KL_ROBUST_WORST == 4 && KL_ROBUST_CHANCE == 5,
               "uncertainty.objective names are indexed by KL_ROBUST_*");
_Static_assert(KL_DIST_NORMAL == 0 && KL_DIST_UNIFORM == 1 && KL_DIST_TRUNCATED == 2,
               "uncertainty.*_dist names are indexed by KL_DIST_*");
_Static_assert(KL_TOOL_BALL == 0 && KL_TOOL_DISC == 1, "tool.shape names are indexed by KL_TOOL_*");
_Static_assert(KL_SURF_PLANE == 0 && KL_SURF_CYLINDER == 1 && KL_SURF_SPHERE == 2 && KL_SURF_SADDLE == 3 &&
                 KL_SURF_MESH == 4,
               "workpiece.surface names are indexed by KL_SURF_*");

static const char *const surfaces[] = {"plane", "cylinder", "sphere", "saddle", "mesh", NULL};
static const char *const measures[] = {"instantaneous", "averaged", "sensor_instantaneous", "sensor", NULL};
static const char *const tools[] = {"ball", "disc", NULL};
static const char *const methods[] = {"lm", "nlopt", NULL};
static const char *const jacobians[] = {"differences", "tangent", NULL};
static const char *const robust[] = {"nominal", "mean", "mean_std", "cvar", "worst", "chance", NULL};
static const char *const dists[] = {"normal", "uniform", "truncated", NULL};

#define FIELD(f) offsetof(kl_settings, f), sizeof(((kl_settings *)0)->f)
/* one line per key: key, field, default(s), bounds, unit, meaning */
#define REAL(key, f, d, lo, hi, unit, doc) {key, KL_KEY_REAL, FIELD(f), 1, {d, 0, 0}, NULL, lo, hi, unit, NULL, 0, doc, NULL}
#define REAL2(key, f, d0, d1, lo, hi, unit, doc)                                                                     \
  {key, KL_KEY_REAL, FIELD(f), 2, {d0, d1, 0}, NULL, lo, hi, unit, NULL, 0, doc, NULL}
#define REAL3(key, f, d0, d1, d2, lo, hi, unit, doc)                                                                 \
  {key, KL_KEY_REAL, FIELD(f), 3, {d0, d1, d2}, NULL, lo, hi, unit, NULL, 0, doc, NULL}
#define INT(key, f, d, lo, hi, doc) {key, KL_KEY_INT, FIELD(f), 1, {d, 0, 0}, NULL, lo, hi, "", NULL, 0, doc, NULL}
#define SEED(key, f, d, doc) {key, KL_KEY_SEED, FIELD(f), 1, {d, 0, 0}, NULL, 0, 1e9, "", NULL, 0, doc, NULL}
#define CHOICE(key, f, names, d, doc) {key, KL_KEY_CHOICE, FIELD(f), 1, {d, 0, 0}, NULL, 0, 0, "", names, 0, doc, NULL}
#define CHOICE_CODED(key, f, names, codes, d, doc)                                                                  \
  {key, KL_KEY_CHOICE, FIELD(f), 1, {d, 0, 0}, NULL, 0, 0, "", names, 0, doc, codes}
#define TEXT(key, f, d, doc) {key, KL_KEY_TEXT, FIELD(f), 1, {0, 0, 0}, d, 0, 0, "", NULL, 0, doc, NULL}
#define FILENAME(key, f, doc) {key, KL_KEY_FILE, FIELD(f), 1, {0, 0, 0}, "", 0, 0, "", NULL, 0, doc, NULL}
#define ROBOT(key, f, doc) {key, KL_KEY_ROBOT, FIELD(f), 1, {0, 0, 0}, "", 0, 0, "", NULL, KL_KEY_REQUIRED, doc, NULL}

static const kl_key table[] = {
  /* workpiece: the part as designed (nominal) and as it is (actual) */
  CHOICE("workpiece.surface", surface, surfaces, KL_SURF_CYLINDER, "nominal surface: plane | cylinder | sphere | saddle | mesh"),
  REAL("workpiece.radius", radius, 0.4, 1e-3, 1e3, "m", "radius of curvature of cylinder (axis along y), sphere, saddle"),
  FILENAME("workpiece.mesh", mesh, "surface mesh: STL/OBJ/PLY file of the actual part (none by default)"),
  REAL("workpiece.mesh_scale", mesh_scale, 1.0, 1e-9, 1e9, "", "mesh units to metres (1e-3 for millimetres)"),
  REAL2("workpiece.extent", extent, 0.16, 0.04, 1e-3, 10, "m", "x and y size of the patch meshed for an analytic actual part"),
  REAL("workpiece.resolution", resolution, 2.5e-4, 1e-6, 1e-2, "m", "mesh spacing along x of analytic parts (4x coarser along y)"),
  REAL("workpiece.E", work_E, 70e9, 1e6, 1e13, "Pa", "Young's modulus of the part (aluminium)"),
  REAL("workpiece.nu", work_nu, 0.33, -0.99, 0.4999, "", "Poisson's ratio of the part"),
  REAL("workpiece.bead.height", bead_h, 4e-4, -0.01, 0.01, "m", "weld bead across the path: Gaussian height"),
  REAL("workpiece.bead.width", bead_w, 1.5e-3, 1e-5, 0.1, "m", "weld bead width (1 sigma)"),
  REAL("workpiece.bead.x", bead_x, 0.01, -10, 10, "m", "weld bead position along x"),
  REAL("workpiece.step.height", step_h, 0.0, -0.01, 0.01, "m", "sheet step across the path: rise (0: none)"),
  REAL("workpiece.step.width", step_w, 3e-4, 1e-6, 0.1, "m", "sheet step: length of the (C1, smoothstep) rise"),
  REAL("workpiece.step.x", step_x, 0.02, -10, 10, "m", "sheet step: where the rise starts along x"),
  REAL("workpiece.tilt_deg", tilt_deg, 0.3, -45, 45, "deg", "actual part rotated about y against its CAD"),
  REAL3("workpiece.shift", shift, 0, 0, 0, -10, 10, "m", "actual part translated against its CAD"),
  REAL("workpiece.roughness.amplitude", rough_a, 3e-6, 0, 1e-3, "m", "RMS roughness of the actual part"),
  REAL("workpiece.roughness.wavelength", rough_l, 2e-3, 1e-5, 1, "m", "roughness wavelength"),
  SEED("workpiece.roughness.seed", rough_seed, 7, "roughness phases"),
  /* path on the nominal surface */
  FILENAME("path.csv", path_csv, "points + normals, columns x,y,z,nx,ny,nz (none: the plane y = path.y cuts the part)"),
  REAL("path.start", path_x0, -0.06, -10, 10, "m", "the plane intersection runs from x = start ..."),
  REAL("path.end", path_x1, 0.06, -10, 10, "m", "... to x = end"),
  REAL("path.y", path_y, 0.0, -10, 10, "m", "the cutting plane y = path.y"),
  INT("path.samples", ns, 241, 8, KL_PATH_MAX, "arc-length samples"),
  /* tool and holder */
  REAL("tool.radius", tool_R, 6e-3, 1e-4, 0.2, "m", "ball-end radius"),
  REAL("tool.E", tool_E, 200e9, 1e6, 1e13, "Pa", "Young's modulus of the abrasive ball-end"),
  REAL("tool.nu", tool_nu, 0.22, -0.99, 0.4999, "", "Poisson's ratio of the ball-end"),
  REAL("tool.mass", tool_mass, 1.5, 1e-3, 1e4, "kg", "effective moving mass along the normal"),
  REAL("tool.weight", tool_weight, 2.0, -1e5, 1e5, "N", "weight on a horizontal part after the spindle's counterbalance"),
  REAL("holder.stiffness", holder_K, 5000.0, 1, 1e9, "N/m", "compliant holder: F_h = K (u - z) + D (u' - z')"),
  REAL("holder.damping", holder_D, 35.0, 0, 1e7, "N s/m", "holder damping (damping ratio ~0.2)"),
  CHOICE("tool.shape", tool_shape, tools, KL_TOOL_BALL, "ball (ball-end of tool.radius) | disc (a wheel of that radius)"),
  REAL("tool.width", tool_width, 0.01, 1e-5, 1.0, "m", "disc width"),
  REAL3("tool.axis", tool_axis, 0, 1, 0, -1e3, 1e3, "", "disc axis in the tool frame (x along the path, z into the part)"),
  REAL3("tool.inertia", tool_inertia, 0.02, 0.02, 0.0012, 1e-12, 1e4, "kg m^2", "principal moments about the tool centre, tool frame (3-D verification)"),
  REAL("tool.lead_deg", lead_deg, 0.0, -60, 60, "deg", "tool tilted about its y axis (lead angle)"),
  REAL("tool.spindle_rpm", spindle_rpm, 0.0, 0, 1e5, "rpm", "spindle speed: the abrasive's cutting speed omega rc "
       "(material removal; a ball-end cuts at R sin(tool.lead_deg), a disc at its rim R)"),
  REAL("holder.lateral_stiffness", holder_Klat, 2e5, 1, 1e10, "N/m", "holder across the tool axis, at the tool centre (3-D verification)"),
  REAL("holder.lateral_damping", holder_Dlat, 220.0, 0, 1e8, "N s/m", "holder damping across the tool axis"),
  REAL("holder.rotational_stiffness", holder_Krot, 2e3, 1e-3, 1e9, "N m/rad", "holder's rotational stiffness about the tool centre"),
  REAL("holder.rotational_damping", holder_Drot, 2.5, 0, 1e7, "N m s/rad", "holder's rotational damping"),
  /* contact */
  CHOICE_CODED("contact.model", model, kl_engine_model_names_, kl_engine_model_codes_, KL_MODEL_HC,
               "hc: Hertz + Hunt-Crossley damping | kv: linear Kelvin-Voigt | general: F = k d^n1 + c sgn(d')|d'|^m d^n2, "
               "kept >= 0 (contact.c, n2, m; k is contact.stiffness, n1 contact.exponent)"),
  CHOICE("contact.law", law, kl_law_names_, KL_LAW_EXACT, "damping law: hunt-crossley | lankarani-nikravesh | flores | gonthier | exact"),
  REAL("contact.cr", cr, 0.5, 1e-6, 1.0, "", "coefficient of restitution"),
  REAL("contact.approach_speed", approach_speed, 0.01, 1e-6, 100, "m/s", "impact speed at which the damping law gives chi (hc only; kv takes D from cr by paper eq. 10 at any speed)"),
  REAL("contact.stiffness", contact_K, 0.0, 1, 1e16, "N/m^n", "stiffness override (default: Hertz, 4/3 E* sqrt(R))"),
  REAL("contact.exponent", exponent, NAN, 1.0, 3.0, "", "force exponent of hc (default: 1.5 for a ball, 1 for a disc)"),
  REAL("contact.c", gen_c, 0.0, 0, 1e16, "N (s/m)^m / m^n2", "general law: damping c (0: elastic)"),
  REAL("contact.n2", gen_n2, NAN, 0, 5, "", "general law: exponent of d in the damping term (default: n1, the exponent)"),
  REAL("contact.m", gen_m, 1.0, 1e-3, 5, "", "general law: exponent of the rate d' (1: linear in d')"),
  REAL("contact.friction", friction, 0.4, 0, 10, "", "grinding force ratio F_t/F_n: Coulomb friction in the 3-D verification"),
  /* target */
  REAL("target.force", target_F, 5.0, 1e-6, 1e6, "N", "constant target normal force (the paper's 5 N)"),
  FILENAME("target.csv", target_csv, "target profile, columns s,force (none: the constant target.force)"),
  REAL("target.max_force", max_F, 10.0, 1e-6, 1e7, "N", "over-force penalty starts here"),
  CHOICE("target.measure", measure, measures, KL_MEASURE_SENSOR,
         "sensor: the wrist sensor's reading (contact force + the tool's inertia), averaged over each sample interval, "
         "what the robot's force sensor reports | sensor_instantaneous: the same at the samples | averaged: the contact "
         "force averaged over each interval | instantaneous: the contact force at the samples"),
  /* decision variables */
  REAL("offset.min", o_min, NAN, -1, 1, "m", "lowest commanded depth along -n (default: the part's deviation from its CAD, less the margin)"),
  REAL("offset.max", o_max, NAN, -1, 1, "m", "highest commanded depth (default: the part's deviation from its CAD, plus the margin)"),
  REAL("offset.margin", o_margin, 1e-3, 0, 1, "m", "derived bounds: this beyond the static offsets' range along the path"),
  REAL("offset.max_accel", o_acc, 5.0, 1e-6, 1e4, "m/s^2", "the robot's acceleration limit along the normal (method lm)"),
  INT("offset.control_points", n_o, 48, 4, 60, "offset spline control points (method nlopt; lm: one per sample)"),
  REAL("speed.min", v_min, 0.005, 1e-6, 100, "m/s", "feed speed bounds ..."),
  REAL("speed.max", v_max, 0.03, 1e-6, 100, "m/s", "..."),
  REAL("speed.initial", v_init, 0.015, 1e-6, 100, "m/s", "feed of the naive pass and the initial guess"),
  INT("speed.control_points", n_v, 6, 4, 60, "speed spline control points (method nlopt; lm: one per sample)"),
  REAL("speed.max_accel", a_max, 0.05, 1e-6, 1e4, "m/s^2", "feed acceleration limit |v dv/ds|"),
  /* objective weights */
  REAL("objective.rms", w_rms, 1.0, 0, 1e9, "", "weight of the RMS force error / F_ref"),
  REAL("objective.loss", w_loss, 5.0, 0, 1e9, "", "weight of the fraction of time out of contact"),
  REAL("objective.over", w_over, 10.0, 0, 1e9, "", "weight of the over-force"),
  REAL("objective.time", w_time, 0.02, 0, 1e9, "", "weight of the pass time / reference time"),
  REAL("objective.roughness", w_rough, 1e-4, 0, 1e9, "", "weight of the command roughness"),
  REAL("objective.accel", w_acc, 10.0, 0, 1e9, "", "weight of the acceleration excess"),
  /* pipeline */
  CHOICE("optimiser.method", method, methods, KL_METHOD_LM,
         "lm: offset and speed per sample, Levenberg-Marquardt with a banded Jacobian | nlopt: splines, screening + NLopt"),
  CHOICE("optimiser.jacobian", jacobian, jacobians, KL_JACOBIAN_DIFFERENCES,
         "method lm: the offsets' banded Jacobian by coloured forward differences (one batch) | tangent (the "
         "tangent-linear rollout along the colours)"),
  INT("optimiser.screening", screening, 2048, 0, 1 << 22, "quasi-random (Sobol, or Halton above 40 variables) candidates in one batch (0: skip); method nlopt"),
  REAL("optimiser.screen_offset", screen_o, 1e-4, 0, 0.1, "m", "half-width of the offset box around the initial guess"),
  INT("optimiser.keep", keep, 2, 1, 64, "refinement starts"),
  TEXT("optimiser.algorithm", algorithm, "LD_LBFGS", "any NLopt algorithm name; LD_* get finite-difference gradients in one batch"),
  INT("optimiser.maxeval", maxeval, 40, 1, 100000000, "NLopt evaluations per start"),
  REAL("optimiser.maxtime", maxtime, 60.0, 0.01, 1e6, "s", "safety net per start; a run stopped by it is not reproducible"),
  REAL("optimiser.budget", budget, 0.0, 0, 1e7, "s", "wall-time budget of screening + refinement, shared by the starts (0: none)"),
  REAL("optimiser.xtol_rel", xtol_rel, 1e-6, 0, 1, "", "NLopt relative tolerance on the control points"),
  REAL("optimiser.ftol_rel", ftol_rel, 1e-8, 0, 1, "", "NLopt relative tolerance on the objective"),
  REAL("optimiser.fd_step", fd_step, 1e-4, 1e-10, 0.1, "", "finite-difference step, relative to the bounds"),
  REAL("optimiser.force_tol", ftol, 1e-3, 1e-8, 0.1, "", "sub-step force tolerance of the rollouts, relative"),
  SEED("optimiser.seed", seed, 1, "picks the block of the quasi-random screening sequence (method nlopt); same seed, same result"),
  /* the correction stage after the refinement (docs/design.md section 5, "Correction") */
  TEXT("optimiser.correct", correct, "auto", "the correction with the 3-D engine in the loop: auto (when the verified error "
       "exceeds the predicted by 0.1 % of the target or verify.tolerance flags the pass) | off | N (at most N iterations, 1 to 50)"),
  /* verification */
  INT("verify.count", verify, 2, 0, 64, "winners re-simulated in the 3-D engine (plus the naive pass)"),
  REAL("verify.tolerance", agree_tol, 0.02, 0, 10, "", "device vs 3-D RMS disagreement of the wrist-sensor reading flagged above this"),
  REAL("verify.hc_tol", verify_hc_tol, 1e-6, 1e-12, 1e-2, "", "the 3-D engine's Hunt-Crossley sub-step error tolerance, relative to the penetration and speed scales"),
  REAL("verify.substep_fraction", verify_sf, 0.2, 1e-3, 0.5, "", "the 3-D engine's friction-coupled sub-step, as a fraction of the contact's time scale"),
  REAL("verify.time_limit", verify_time_limit, 120.0, 0, 1e7, "s", "wall time allowed to the 3-D verification of one pass (0: none); over it the run stops with a message"),
  /* the arm holding the tool */
  ROBOT("robot.model", robot, "the arm holding the tool: builtin (the ER10-900-sized arm) or a .yaml/.urdf file"),
  REAL3("robot.base", robot_base, -0.55, 0, -0.25, -100, 100, "m", "base position in the workpiece frame"),
  REAL3("robot.rpy", robot_rpy, 0, 0, 0, -10, 10, "rad", "base orientation, roll-pitch-yaw"),
  /* material removal (docs/design.md section 9; optimiser/removal.h) */
  REAL("removal.preston", preston, 0.0, 0, 1e-6, "m^2/N", "Preston's coefficient k_p: depth removed per unit time "
       "k_p p v_rel (0: no removal); see examples/optimise.yaml for typical values"),
  REAL("removal.allowance", rm_allowance, 0.0, -0.01, 0.01, "m", "the target surface's height above the CAD"),
  REAL("removal.tolerance", rm_tolerance, 20e-6, 0, 0.01, "m", "residual allowed above the target along the track"),
  REAL("removal.gouge", rm_gouge, 10e-6, 0, 0.01, "m", "removal allowed below the target anywhere"),
  REAL("removal.resolution", rm_resolution, NAN, 1e-6, 1e-2, "m", "height field's cell size (default: a quarter of "
       "the Hertz radius at target.force, the disc: half its half-width, in [5e-6, 1e-3] m)"),
  REAL("removal.width", rm_width, NAN, 1e-5, 1.0, "m", "height field's width across the path (default: the groove of "
       "the highest stock, 2 sqrt(2 R (stock + a^2/R)) + 4a at target.max_force; the disc: its width + 4b)"),
  REAL("removal.grinding_ratio", grinding_ratio, 0.0, 0, 1e7, "", "removed volume / worn tool volume (0: no wear)"),
  INT("removal.max_passes", rm_max_passes, 20, 1, 1000, "most passes a plan may take"),
  /* uncertainty: the scenario sets of robust passes (optimiser/scenario.h; docs/design.md section 10) */
  INT("uncertainty.scenarios", unc_scenarios, 0, 0, 65536, "the optimisation set's size: scenarios every candidate "
      "is evaluated on (0: no uncertainty, the nominal problem only)"),
  SEED("uncertainty.seed", unc_seed, 1, "the optimisation set (randomised quasi-Monte Carlo; common to every "
       "candidate)"),
  INT("uncertainty.verify_scenarios", unc_verify, 1000, 0, 1000000, "the out-of-sample set's size (plain Monte Carlo, "
      "disjoint from the optimisation set)"),
  SEED("uncertainty.verify_seed", unc_verify_seed, 2, "the out-of-sample set; must differ from uncertainty.seed"),
  CHOICE("uncertainty.objective", unc_objective, robust, KL_ROBUST_NOMINAL, "what the refinement minimises over the "
         "scenarios: nominal (the nominal problem only) | mean | mean_std (mean + k std) | cvar (the mean of the worst "
         "1 - alpha) | worst | chance (the probability of leaving the force band, kept below 1 - probability)"),
  REAL("uncertainty.k", unc_k, 2.0, 0, 100, "", "mean_std: mean + k standard deviations"),
  REAL("uncertainty.alpha", unc_alpha, 0.9, 1e-6, 0.999999, "", "cvar: the level alpha (the mean of the worst "
       "1 - alpha)"),
  REAL("uncertainty.probability", unc_prob, 0.9, 1e-6, 0.999999, "", "chance: the probability of staying in the band"),
  REAL("uncertainty.force_min", unc_fmin, NAN, 0, 1e7, "N", "the force band's floor (default: half the smallest "
       "target force)"),
  REAL("uncertainty.force_max", unc_fmax, NAN, 1e-6, 1e7, "N", "the force band's ceiling (default: target.max_force)"),
  REAL("uncertainty.truncation", unc_trunc, 2.0, 0.1, 10, "", "truncated normals are cut at +- this many spreads"),
  REAL("uncertainty.registration_x", unc_reg_x, 0, 0, 0.01, "m", "spread of the part's translation along x against "
       "its CAD (added to workpiece.shift; 0: fixed)"),
  CHOICE("uncertainty.registration_x_dist", unc_reg_x_dist, dists, KL_DIST_NORMAL, "normal (spread: std) | uniform "
         "(spread: half-width) | truncated (normal cut at +- uncertainty.truncation spreads)"),
  REAL("uncertainty.registration_y", unc_reg_y, 0, 0, 0.01, "m", "spread of the translation along y"),
  CHOICE("uncertainty.registration_y_dist", unc_reg_y_dist, dists, KL_DIST_NORMAL, "normal | uniform | truncated"),
  REAL("uncertainty.registration_z", unc_reg_z, 0, 0, 0.01, "m", "spread of the translation along z (into the tool)"),
  CHOICE("uncertainty.registration_z_dist", unc_reg_z_dist, dists, KL_DIST_NORMAL, "normal | uniform | truncated"),
  REAL("uncertainty.registration_tilt", unc_reg_tilt, 0, 0, 10, "deg", "spread of the rotation about y (added to "
       "workpiece.tilt_deg)"),
  CHOICE("uncertainty.registration_tilt_dist", unc_reg_tilt_dist, dists, KL_DIST_NORMAL,
         "normal | uniform | truncated"),
  REAL("uncertainty.bead_height", unc_bead_h, 0, 0, 0.01, "m", "spread of workpiece.bead.height (analytic parts)"),
  CHOICE("uncertainty.bead_height_dist", unc_bead_h_dist, dists, KL_DIST_NORMAL, "normal | uniform | truncated"),
  REAL("uncertainty.bead_width", unc_bead_w, 0, 0, 0.01, "m", "spread of workpiece.bead.width"),
  CHOICE("uncertainty.bead_width_dist", unc_bead_w_dist, dists, KL_DIST_NORMAL, "normal | uniform | truncated"),
  REAL("uncertainty.bead_position", unc_bead_x, 0, 0, 0.1, "m", "spread of workpiece.bead.x"),
  CHOICE("uncertainty.bead_position_dist", unc_bead_x_dist, dists, KL_DIST_NORMAL, "normal | uniform | truncated"),
  REAL("uncertainty.step_height", unc_step_h, 0, 0, 0.01, "m", "spread of workpiece.step.height"),
  CHOICE("uncertainty.step_height_dist", unc_step_h_dist, dists, KL_DIST_NORMAL, "normal | uniform | truncated"),
  INT("uncertainty.roughness", unc_rough, 0, 0, 1, "1: each scenario its own roughness realisation (its seed derived "
      "from the set's seed and the scenario; amplitude and wavelength as configured)"),
  REAL("uncertainty.work_modulus", unc_work_E, 0, 0, 1, "", "relative spread of workpiece.E (value x (1 + d))"),
  CHOICE("uncertainty.work_modulus_dist", unc_work_E_dist, dists, KL_DIST_NORMAL, "normal | uniform | truncated"),
  REAL("uncertainty.tool_modulus", unc_tool_E, 0, 0, 1, "", "relative spread of tool.E"),
  CHOICE("uncertainty.tool_modulus_dist", unc_tool_E_dist, dists, KL_DIST_NORMAL, "normal | uniform | truncated"),
  REAL("uncertainty.holder_stiffness", unc_holder_K, 0, 0, 1, "", "relative spread of holder.stiffness"),
  CHOICE("uncertainty.holder_stiffness_dist", unc_holder_K_dist, dists, KL_DIST_NORMAL, "normal | uniform | truncated"),
  REAL("uncertainty.holder_damping", unc_holder_D, 0, 0, 1, "", "relative spread of holder.damping"),
  CHOICE("uncertainty.holder_damping_dist", unc_holder_D_dist, dists, KL_DIST_NORMAL, "normal | uniform | truncated"),
  REAL("uncertainty.tool_mass", unc_tool_mass, 0, 0, 1, "", "relative spread of tool.mass"),
  CHOICE("uncertainty.tool_mass_dist", unc_tool_mass_dist, dists, KL_DIST_NORMAL, "normal | uniform | truncated"),
  REAL("uncertainty.restitution", unc_cr, 0, 0, 1, "", "spread of contact.cr (added)"),
  CHOICE("uncertainty.restitution_dist", unc_cr_dist, dists, KL_DIST_NORMAL, "normal | uniform | truncated"),
  REAL("uncertainty.tool_radius", unc_tool_R, 0, 0, 0.1, "m", "spread of tool.radius (added: wear)"),
  CHOICE("uncertainty.tool_radius_dist", unc_tool_R_dist, dists, KL_DIST_NORMAL, "normal | uniform | truncated"),
};

#define NKEYS ((int)(sizeof table / sizeof table[0]))

const kl_key *kl_settings_keys(int *n)
{
  *n = NKEYS;
  return table;
}

const kl_key *kl_settings_key(const char *key)
{
  if (!key) return NULL;
  for (int i = 0; i < NKEYS; ++i)
    if (strcmp(table[i].key, key) == 0) return &table[i];
  return NULL;
}

void kl_settings_default(kl_settings *s)
{
  memset(s, 0, sizeof *s);
  char *base = (char *)s;
  for (int i = 0; i < NKEYS; ++i) {
    const kl_key *k = &table[i];
    char *f = base + k->offset;
    switch (k->type) {
    case KL_KEY_REAL:
      for (int j = 0; j < k->n; ++j) ((double *)(void *)f)[j] = k->def[j];
      break;
    case KL_KEY_INT:
    case KL_KEY_CHOICE: *(int *)(void *)f = (int)k->def[0]; break;
    case KL_KEY_SEED: *(unsigned long *)(void *)f = (unsigned long)k->def[0]; break;
    case KL_KEY_TEXT:
    case KL_KEY_FILE:
    case KL_KEY_ROBOT: snprintf(f, k->size, "%s", k->sdef); break;
    }
  }
}

/* v as %g writes it, without the exponent's '+' and leading zeros: 1e9, 1e-6, 0.4999 */
static void compact(double v, char *buf, size_t cap)
{
  char t[32]; /* %g of a double: at most 13 characters */
  snprintf(t, sizeof t, "%g", v);
  char *e = strchr(t, 'e');
  if (e) {
    char *p = e + 1, *q = e + 1;
    if (*p == '+') ++p;
    else if (*p == '-') *q++ = *p++;
    while (*p == '0' && p[1]) ++p;
    memmove(q, p, strlen(p) + 1);
  }
  snprintf(buf, cap, "%s", t);
}

const char *kl_key_rule(const kl_key *k, char *buf, size_t cap)
{
  const int whole = k->type == KL_KEY_INT || k->type == KL_KEY_SEED;
  char lo[32], hi[32];
  compact(k->lo, lo, sizeof lo);
  compact(k->hi, hi, sizeof hi);
  snprintf(buf, cap, "%sin [%s, %s]%s%s", whole ? "a whole number " : "", lo, hi, k->unit[0] ? " " : "", k->unit);
  return buf;
}

int kl_key_number_ok(const kl_key *k, double v)
{
  if (!(isfinite(v) && v >= k->lo && v <= k->hi)) return 0;
  if ((k->type == KL_KEY_INT || k->type == KL_KEY_SEED) && v != floor(v)) return 0;
  return k->type == KL_KEY_REAL || k->type == KL_KEY_INT || k->type == KL_KEY_SEED;
}

#define ARGFAIL(...)                                                                                         \
  do {                                                                                                       \
    snprintf(msg, (size_t)cap, __VA_ARGS__);                                                                 \
    return KELVIN_ERR_ARG;                                                                                   \
  } while (0)

kelvin_status kl_settings_set_numbers(kl_settings *s, const char *key, const double *v, int n, char *msg, int cap)
{
  const kl_key *k = kl_settings_key(key);
  if (!k) ARGFAIL("%s: no such setting", key ? key : "(null)");
  if (k->type != KL_KEY_REAL && k->type != KL_KEY_INT && k->type != KL_KEY_SEED)
    ARGFAIL("%s: takes a %s, not a number", key, k->type == KL_KEY_CHOICE ? "name" : "text");
  if (n != k->n || !v) ARGFAIL("%s: takes %d number%s, got %d", key, k->n, k->n > 1 ? "s" : "", v ? n : 0);
  char rule[256];
  for (int j = 0; j < n; ++j)
    if (!kl_key_number_ok(k, v[j]))
      ARGFAIL("%s%s: must be %s, got %g", key, n > 1 ? (j == 0 ? "[0]" : j == 1 ? "[1]" : "[2]") : "",
              kl_key_rule(k, rule, sizeof rule), v[j]);
  char *f = (char *)s + k->offset;
  if (k->type == KL_KEY_REAL)
    for (int j = 0; j < n; ++j) ((double *)(void *)f)[j] = v[j];
  else if (k->type == KL_KEY_INT)
    *(int *)(void *)f = (int)v[0];
  else
    *(unsigned long *)(void *)f = (unsigned long)v[0];
  return KELVIN_OK;
}

kelvin_status kl_settings_set_text(kl_settings *s, const char *key, const char *text, char *msg, int cap)
{
  const kl_key *k = kl_settings_key(key);
  if (!k) ARGFAIL("%s: no such setting", key ? key : "(null)");
  if (!text) ARGFAIL("%s: the text is NULL", key);
  char *f = (char *)s + k->offset;
  switch (k->type) {
  case KL_KEY_CHOICE: {
    char list[256] = "";
    for (int i = 0; k->names[i]; ++i) {
      if (strcmp(text, k->names[i]) == 0) {
        *(int *)(void *)f = k->codes ? k->codes[i] : i;
        return KELVIN_OK;
      }
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", k->names[i]);
    }
    ARGFAIL("%s: must be one of %s, got '%s'", key, list, text);
  }
  case KL_KEY_TEXT:
    if (!text[0] || strlen(text) >= k->size || strpbrk(text, " \t\r\n"))
      ARGFAIL("%s: must be one word of at most %zu characters, got '%s'", key, k->size - 1, text);
    if (k->offset == offsetof(kl_settings, correct) && kl_correct_parse(text) == KL_CORRECT_BAD)
      ARGFAIL("%s: must be auto, off or a whole number of iterations in [1, %d], got '%s'", key, KL_CORRECT_MAX, text);
    break;
  case KL_KEY_FILE:
  case KL_KEY_ROBOT:
    if (strlen(text) >= k->size) ARGFAIL("%s: the file name is longer than %zu characters", key, k->size - 1);
    break;
  default: ARGFAIL("%s: takes %s, not a text", key, k->n > 1 ? "numbers" : "a number");
  }
  snprintf(f, k->size, "%s", text);
  return KELVIN_OK;
}

int kl_settings_get_numbers(const kl_settings *s, const char *key, double *v, int cap)
{
  const kl_key *k = kl_settings_key(key);
  if (!k) return -1;
  const char *f = (const char *)s + k->offset;
  switch (k->type) {
  case KL_KEY_REAL:
    for (int j = 0; j < k->n && j < cap; ++j) v[j] = ((const double *)(const void *)f)[j];
    return k->n;
  case KL_KEY_INT:
  case KL_KEY_CHOICE:
    if (cap > 0) v[0] = *(const int *)(const void *)f;
    return 1;
  case KL_KEY_SEED:
    if (cap > 0) v[0] = (double)*(const unsigned long *)(const void *)f;
    return 1;
  default: return -1;
  }
}

const char *kl_settings_get_text(const kl_settings *s, const char *key)
{
  const kl_key *k = kl_settings_key(key);
  if (!k) return NULL;
  const char *f = (const char *)s + k->offset;
  if (k->type == KL_KEY_CHOICE) {
    const int i = *(const int *)(const void *)f;
    for (int j = 0; k->names[j]; ++j)
      if ((k->codes ? k->codes[j] : j) == i) return k->names[j];
    return NULL;
  }
  if (k->type == KL_KEY_TEXT || k->type == KL_KEY_FILE || k->type == KL_KEY_ROBOT) return f;
  return NULL;
}

int kl_correct_parse(const char *text)
{
  if (!text) return KL_CORRECT_BAD;
  if (strcmp(text, "auto") == 0) return KL_CORRECT_AUTO;
  if (strcmp(text, "off") == 0) return 0;
  char *end;
  const long n = strtol(text, &end, 10);
  if (end == text || *end || n < 1 || n > KL_CORRECT_MAX || !isdigit((unsigned char)text[0])) return KL_CORRECT_BAD;
  return (int)n;
}
