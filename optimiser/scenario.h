/* optimiser/scenario.h: the scenario sets of robust passes (issue 33; docs/design.md section 10). The
 * uncertainty: section of the settings gives each uncertain parameter a spread and a distribution; a scenario is
 * one draw of all of them, its deviations from the nominal values. Two sets are drawn from the settings:
 *   - the optimisation set (uncertainty.scenarios, uncertainty.seed): randomised quasi-Monte Carlo, Sobol points
 *     (Halton above 40 dimensions) shifted by one uniform vector modulo 1 (Cranley-Patterson), the same for every
 *     candidate (common random numbers);
 *   - the out-of-sample set (uncertainty.verify_scenarios, uncertainty.verify_seed): plain Monte Carlo (iid draws,
 *     so binomial confidence intervals hold), disjoint from the optimisation set of the same settings by
 *     construction (a draw equal in every coordinate to a point of that set is drawn again).
 * Each uniform coordinate u is mapped to its distribution by the inverse CDF: normal d = spread Phi^-1(u),
 * uniform d = spread (2u - 1), truncated d = spread Phi^-1(Phi(-c) + u (Phi(c) - Phi(-c))), c =
 * uncertainty.truncation. Only parameters with a spread > 0 take dimensions. */
#ifndef KL_OPTIMISER_SCENARIO_H
#define KL_OPTIMISER_SCENARIO_H

#include "kelvin/kelvin.h"
#include "optimiser/problem.h"
#include "optimiser/progress.h"

/* uncertainty.objective */
#define KL_ROBUST_NOMINAL 0
#define KL_ROBUST_MEAN 1
#define KL_ROBUST_MEAN_STD 2
#define KL_ROBUST_CVAR 3
#define KL_ROBUST_WORST 4
#define KL_ROBUST_CHANCE 5

/* uncertainty.<p>_dist */
#define KL_DIST_NORMAL 0    /* spread: the standard deviation */
#define KL_DIST_UNIFORM 1   /* spread: the half-width */
#define KL_DIST_TRUNCATED 2 /* a normal of that standard deviation cut at +- uncertainty.truncation spreads */

/* The uncertain parameters, in the order of the settings' keys (uncertainty.<kl_unc_name(i)>), and how a
 * deviation d changes a scenario's settings: */
enum {
  KL_UNC_REG_X,       /* [m] added to workpiece.shift[0] */
  KL_UNC_REG_Y,       /* [m] added to workpiece.shift[1] */
  KL_UNC_REG_Z,       /* [m] added to workpiece.shift[2] */
  KL_UNC_REG_TILT,    /* [deg] added to workpiece.tilt_deg (a mesh part: the mesh turned about y) */
  KL_UNC_BEAD_H,      /* [m] added to workpiece.bead.height */
  KL_UNC_BEAD_W,      /* [m] added to workpiece.bead.width */
  KL_UNC_BEAD_X,      /* [m] added to workpiece.bead.x */
  KL_UNC_STEP_H,      /* [m] added to workpiece.step.height */
  KL_UNC_ROUGH,       /* the scenario's workpiece.roughness.seed (0: the nominal's) */
  KL_UNC_WORK_E,      /* relative: workpiece.E x (1 + d) */
  KL_UNC_TOOL_E,      /* relative: tool.E x (1 + d) */
  KL_UNC_HOLDER_K,    /* relative: holder.stiffness x (1 + d) */
  KL_UNC_HOLDER_D,    /* relative: holder.damping x (1 + d) */
  KL_UNC_TOOL_MASS,   /* relative: tool.mass x (1 + d) */
  KL_UNC_CR,          /* [-] added to contact.cr */
  KL_UNC_TOOL_R       /* [m] added to tool.radius (wear) */
};
#define KL_UNC_N 16 /* the uncertain parameters */
_Static_assert(KL_UNC_TOOL_R + 1 == KL_UNC_N, "KL_UNC_N counts the KL_UNC_* parameters");

/* "registration_x", ... (the key without "uncertainty."); NULL out of range. */
const char *kl_unc_name(int i);

/* The spread of parameter i in the settings (roughness: 0 or 1) and its distribution (KL_DIST_*; roughness
 * KL_DIST_NORMAL, unused). */
double kl_unc_spread(const kl_settings *s, int i);
int kl_unc_dist(const kl_settings *s, int i);

/* 1 if parameter i's deviation is relative (value x (1 + d)). */
int kl_unc_relative(int i);

/* The parameters with a spread > 0 (roughness counts when 1). */
int kl_unc_active(const kl_settings *s);

/* The settings' uncertainty checked before anything is drawn: a bead, step or roughness spread on a mesh part
 * (a scan has none of these as settings), equal seeds with a non-empty optimisation set, a uniform or truncated
 * range that leaves a parameter's bounds (the range and the bounds named), roughness realisations without a
 * roughness amplitude. KELVIN_ERR_CONFIG with a message naming the key. */
kelvin_status kl_uncertainty_check(const kl_settings *s, char *msg, int cap);

/* Draw S scenarios: dev (S x KL_UNC_N, scenario-major) the deviation of each parameter from its nominal value in
 * the parameter's own unit (relative ones as the fraction d; 0 for parameters not in use; roughness: the
 * realisation's seed as a double). which 0: the optimisation set (uncertainty.seed, RQMC); 1: the out-of-sample
 * set (uncertainty.verify_seed, MC, disjoint from the optimisation set of the same settings, whose size is
 * uncertainty.scenarios). Every scenario is checked with kl_scenario_settings (a draw that leaves a parameter's
 * bounds is refused, naming the scenario, the parameter and the draw). KELVIN_ERR_CONFIG (see
 * kl_uncertainty_check), KELVIN_ERR_ARG (S < 0, which not 0 or 1), KELVIN_ERR_NOMEM with a message. */
kelvin_status kl_scenarios_draw(const kl_settings *s, int which, int S, double *dev, char *msg, int cap);

/* The Monte Carlo draw of kl_scenarios_draw (which 1) against an explicit set to avoid: navoid points (navoid x
 * KL_UNC_N, as drawn) that no scenario may equal in every coordinate; a draw that does is drawn again from the
 * stream, and *redrawn (nullable) counts those. kl_scenarios_draw passes the optimisation set; a test may pass
 * anything. The seed is uncertainty.verify_seed. */
kelvin_status kl_scenarios_draw_mc(const kl_settings *s, int S, const double *avoid, int navoid, double *dev,
                                   int *redrawn, char *msg, int cap);

/* The settings of one scenario: nominal with dev applied (a copy in *out); KELVIN_ERR_CONFIG when a parameter
 * leaves its key's bounds (the message names the parameter, the draw and the bounds, and advises a truncated
 * distribution or a smaller spread). */
kelvin_status kl_scenario_settings(const kl_settings *nominal, const double *dev, kl_settings *out, char *msg, int cap);

/* The prepared problem of one scenario: kl_problem_build of its settings with the same inputs, but with
 * everything the candidates share taken from the nominal problem: path samples, target, offset and speed bounds
 * (the nominal's derived offset.min/max), basis, reference force/time scales (gp's FREF, FMAX, TREF, OSCALE,
 * VSCALE, AMAX, weights, tolerances, measure), the naive offset and, with a robot, the arm's effective mass. What
 * differs: the protrusion h, dh and the force share kappa (the scenario's part against the nominal path), the
 * tool's mass, the contact constants, the holder. The scenario's part (pb->actual): a bead, step or roughness
 * deviation meshes a new one (analytic parts only: a mesh part, a scan, takes none); otherwise it is the nominal's
 * part moved rigidly by the registration (turned about y by the tilt about the nominal's workpiece.shift, the
 * origin for a mesh part, then translated), a new mesh the scenario owns, and with no registration the nominal's
 * part itself, borrowed (the nominal must outlive the scenario). The protrusion of a moved part is computed on the
 * nominal's part with the tool moved back (kl_problem_protrusion), so that kl_scenarios_pack, which skips meshing
 * moved parts, gives the same numbers bit for bit. */
kelvin_status kl_scenario_problem(const kl_problem *nominal, const kl_problem_inputs *in, const double *dev,
                                  kl_problem **out, char *msg, int cap);

/* gp (S x KL_GP_N) and geo (S x ns x KL_GG_N) of S scenarios (dev as drawn), built in parallel (OpenMP; each
 * scenario problem built, packed and freed), with progress ticks (nullable) and stop (KELVIN_ERR_STOPPED). On a
 * failure, the lowest failing scenario's status and message ("scenario i: ..."). */
kelvin_status kl_scenarios_pack(const kl_problem *nominal, const kl_problem_inputs *in, int S, const double *dev,
                                double *gp, double *geo, kl_progress *progress, char *msg, int cap);

#endif
