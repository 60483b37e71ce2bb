/* optimiser/verify3d.h: the verification of a grinding pass in the 3-D engine (docs/design.md section 5,
 * "Pipeline" step 3), independent of the 1-D model the device optimises.
 *
 * The tool is a rigid body (engine/world.h) with the tool's mass (the mean effective mass along the
 * path) and inertia (tool.inertia about the tool centre), shaped as the ball-end (a sphere) or the disc
 * (a wheel whose contact with the mesh goes through libccd). It hangs in the holder: a 6-DoF
 * spring-damper at the tool centre, axial stiffness and damping from holder.stiffness/damping,
 * across the axis holder.lateral_*, about the centre holder.rotational_*, all along the axes of the
 * commanded tool frame. That frame is the anchor; it follows the waypoints exactly as
 * kl_problem_waypoints gives them (and waypoints.csv holds them): the pose at each sample, at the
 * sample's time, a straight line at constant velocity between samples (a robot's linear moves; the 1-D
 * model's commands are linear in s between samples too) and slerp for the orientation. The tool meets the actual workpiece mesh through the engine's own collision (exact
 * sphere-triangle, libccd for the disc) and contact solver, with the problem's contact law and
 * constants and Coulomb friction contact.friction (the grinding force ratio F_t/F_n; the spindle's spin
 * is not simulated, so the tangential force opposes the tool's motion over the part). The weight
 * tool.weight pulls the tool down. The pass starts from the static equilibrium at the first sample,
 * the tool moving with the anchor, sliding.
 *
 * The force reported is what a wrist force sensor on the robot's side of the holder reads: the
 * holder's force on the tool plus the tool's weight (gravity compensation), its component along the
 * commanded tool axis (into the part), at each sample and averaged over the sample interval (the
 * sensor period). It differs from the contact force by the tool's inertia m a: that force is reported
 * too. The mass is constant: the robot's pose-dependent effective mass (docs/design.md section 6) is
 * the 1-D model's alone. */
#ifndef KL_OPTIMISER_VERIFY3D_H
#define KL_OPTIMISER_VERIFY3D_H

#include "kelvin/kelvin.h"
#include "optimiser/problem.h"
#include "optimiser/removal.h"

/* Outputs per path sample (ns each, allocated by the caller; any array but F and Favg may be NULL). */
typedef struct kl_v3_out {
  double *F;     /* wrist sensor along the commanded tool axis at the sample [N] */
  double *Favg;  /* wrist sensor averaged over the interval ending at the sample (Favg[0] = F[0]) [N] */
  double *Fc;    /* contact force on the tool (normal and friction) along the same axis at the sample [N] */
  double *Fcavg; /* contact force averaged over the interval [N] */
  double *t;     /* time [s] */
  double *dev;   /* tool centre minus its commanded position, along the nominal normal n [m] */
  int *contact;  /* 1 while a contact carries force at the sample */
  long nsub;     /* engine sub-steps */
  int ncon_max;  /* most contacts at once at the samples */
  double seconds; /* wall time of this pass's verification [s] */
} kl_v3_out;

/* One pass: offsets o and speeds v per sample (ns each). KELVIN_ERR_NUMERIC (msg: where) if the engine
 * fails, KELVIN_ERR_NOMEM, KELVIN_ERR_ARG for bad commands. */
kelvin_status kl_verify3d_run(const kl_problem *pb, const double *o, const double *v, kl_v3_out *out, char *msg, int cap);

/* What kl_verify3d_many reports and how it may be stopped (all optional: a zeroed struct is none). */
typedef struct kl_v3_watch {
  kelvin_progress_fn fn;     /* progress and stop (kelvin/kelvin.h), called from the calling thread only */
  void *ctx;
  double f0, f1;             /* the span of the caller's whole operation this verification covers */
  const char *const *labels; /* the passes' names for the text (npass), or NULL */
  double time_limit;         /* wall seconds per pass (verify.time_limit; 0: none) */
  int stopped;               /* out: 1 if fn asked to stop */
} kl_v3_watch;

/* npass passes at once, OpenMP across passes: o and v (npass x ns). Returns the first failure. With a
 * watch: its fn is called from the calling thread a few times a second while the passes run (one more
 * thread than OpenMP's default watches them), a notice when a pass starts and ends, ticks (indented
 * text) with each running pass's share done and the time it is expected to take; a nonzero return
 * stops every pass at its next path sample (KELVIN_ERR_STOPPED); a pass that runs longer than
 * time_limit seconds stops the same way with KELVIN_ERR_LIMIT and a message naming verify.time_limit. */
kelvin_status kl_verify3d_many(const kl_problem *pb, int npass, const double *o, const double *v, kl_v3_out *out,
                               kl_v3_watch *watch, char *msg, int cap);

/* Material removal in the 3-D engine (docs/design.md section 9.3): a pass ground on the surface sf. The engine's
 * tool-part contact sees the evolved surface: each contact's penetration is corrected by kl_surface_drop at the
 * contact point's path coordinates (its arc length u along the path, the nearest path sample's tangent and
 * binormal b = n x t giving u and w, as removal.h lays the grid), and after every engine sub-step the sub-step's
 * mean normal force of the tool-part contacts is deposited into sf with kl_surface_deposit while the contacts'
 * force-weighted point moves over the sub-step. sf after the pass is the surface the pass left. */
typedef struct kl_v3_removal {
  kl_surface *sf;          /* in/out: the surface the pass grinds, as the passes before left it */
  kl_removal_law *law;     /* the law (with wear, sf->tool_R shrinks) */
  double vol_law;          /* out: the volume the law removed, sum of k_p F v_rel dt over the sub-steps [m^3] */
  double vol_grid;         /* out: the grid's removed volume added by the pass (sum of removed du dw) [m^3] */
  double impulse;          /* out: time integral of the deposited normal force [N s] */
  long ndep;               /* out: sub-steps deposited (in contact) */
} kl_v3_removal;

/* One pass (as kl_verify3d_run) on rm->sf. rm NULL: kl_verify3d_run. */
kelvin_status kl_verify3d_removal(const kl_problem *pb, const double *o, const double *v, kl_v3_out *out,
                                  kl_v3_removal *rm, char *msg, int cap);

/* Plans of passes on their own surfaces: plan p has npass[p] passes, its commands o[p] and v[p] (npass[p] x ns
 * each, pass after pass), its outputs out[p] and rm[p] (npass[p] each; rm[p][j].sf and .law the same surface
 * and law for every pass j of the plan, ground pass after pass). OpenMP across plans, the passes of a plan in
 * order; the watch as kl_verify3d_many's, a plan's share done counting its passes, time_limit per pass.
 * Returns the first failure (the plan's surface then holds what was ground up to the failure, the failed pass's
 * part included; the message names the plan and its pass). */
kelvin_status kl_verify3d_plans(const kl_problem *pb, int nplan, const int *npass, const double *const *o,
                                const double *const *v, kl_v3_out *const *out, kl_v3_removal *const *rm,
                                kl_v3_watch *watch, char *msg, int cap);

#endif
