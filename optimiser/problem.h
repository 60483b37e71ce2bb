/* optimiser/problem.h: a grinding problem (docs/design.md section 5): its settings (the config; defaults
 * and bounds in optimiser/schema.c) and what is prepared from them once on the host: the workpiece
 * as designed (nominal) and as it is (actual, a triangle mesh), the path on the nominal surface
 * resampled at arc-length samples, the protrusion of the actual surface into the tool (ball-end or disc), the
 * effective mass and weight per sample, the target force profile, and the packed rollout constants. */
#ifndef KL_OPTIMISER_PROBLEM_H
#define KL_OPTIMISER_PROBLEM_H

#include <stddef.h>

#include "engine/mesh.h"
#include "engine/robot.h"
#include "kelvin/kelvin.h"
#include "kernels/kl_contact_static.h"
#include "kernels/kl_rollout.h"

#define KL_SURF_PLANE 0
#define KL_SURF_CYLINDER 1
#define KL_SURF_SPHERE 2
#define KL_SURF_SADDLE 3
#define KL_SURF_MESH 4

#define KL_PATH_MAX 4096 /* most path samples */

#define KL_METHOD_LM 0    /* offset and speed per path sample, Levenberg-Marquardt on the force residuals (optimiser/lm.c) */
#define KL_METHOD_NLOPT 1 /* offset and speed as clamped cubic B-splines, NLopt (optimiser/pipeline.c) */

#define KL_JACOBIAN_DIFFERENCES 0 /* coloured forward differences, one batch */
#define KL_JACOBIAN_TANGENT 1     /* the tangent-linear rollout along the colours (kernels/kl_rollout.h) */

#define KL_TOOL_BALL 0 /* ball-end: a sphere of radius tool_R */
#define KL_TOOL_DISC 1 /* wheel: a disc of radius tool_R and width tool_width, axis tool_axis (tool frame) */

/* The settings of a grinding problem, one field per config key. Each field's key, default, bounds, unit
 * and meaning are in the table of optimiser/schema.c (and examples/optimise.yaml lists them all); the
 * comments here only say what a field holds. */
typedef struct kl_settings {
  /* workpiece (workpiece.*) */
  int surface;           /* KL_SURF_* */
  double radius;         /* radius of curvature of cylinder/sphere/saddle [m] */
  char mesh[1024];       /* surface: mesh: STL/OBJ/PLY file of the part ("" otherwise) */
  double mesh_scale;     /* mesh units to metres */
  double extent[2];      /* analytic patch meshed for the actual part, x and y size [m] */
  double resolution;     /* mesh spacing along x of analytic parts [m] (4x coarser in y) */
  double work_E, work_nu; /* workpiece material [Pa, -] */
  double bead_h, bead_w, bead_x; /* weld bead: height [m], width (1 sigma) [m], position x [m] */
  double step_h, step_w, step_x; /* sheet step across the path: rise [m] over a length [m] (smooth, C1), starting
                                  * at x [m]; height 0: none */
  double tilt_deg;       /* actual part rotated about y against its CAD [deg] */
  double shift[3];       /* actual part translated against its CAD [m] */
  double rough_a, rough_l; /* roughness amplitude [m] and wavelength [m] */
  unsigned long rough_seed;
  /* path (path.*) */
  char path_csv[1024];   /* points + normals x,y,z,nx,ny,nz ("": plane intersection) */
  double path_x0, path_x1, path_y; /* plane intersection y = path_y from x0 to x1 [m] */
  int ns;                /* path samples */
  /* tool and holder (tool.*, holder.*) */
  double tool_R;         /* ball-end radius [m] */
  double tool_E, tool_nu; /* abrasive ball-end [Pa, -] */
  double tool_mass;      /* effective moving mass along the normal [kg] */
  double tool_weight;    /* weight pushing on a horizontal part [N] (counterbalanced spindle) */
  double holder_K, holder_D; /* [N/m, N s/m] */
  /* the tool as a rigid body in the 3-D verification (docs/design.md section 5, verification) */
  int tool_shape;        /* KL_TOOL_BALL or KL_TOOL_DISC */
  double tool_width;     /* disc width [m] */
  double tool_axis[3];   /* disc axis in the tool frame (x along the path, z into the part) */
  double tool_inertia[3]; /* principal moments about the tool centre, tool frame [kg m^2] */
  double lead_deg;       /* tool tilted about its y axis (lead angle) [deg] */
  double holder_Klat, holder_Dlat; /* holder across the tool axis [N/m, N s/m] */
  double holder_Krot, holder_Drot; /* holder's rotational stiffness and damping [N m/rad, N m s/rad] */
  /* contact (contact.*) */
  int model;             /* KL_MODEL_KV or KL_MODEL_HC */
  int law;               /* KL_LAW_* */
  double cr;             /* restitution */
  double approach_speed; /* impact speed at which the damping law gives chi (hc only; kv: D from cr, eq. 10) [m/s] */
  double contact_K;      /* stiffness override (0: Hertz from materials) */
  double exponent;       /* force exponent n of hc, n1 of the general law (NaN: 1.5 for a ball, 1 for a disc) */
  double gen_c, gen_n2, gen_m; /* the general law (model KL_MODEL_GEN): c, n2 (NaN: n1), m; k is Kc */
  double friction;       /* Coulomb coefficient, the grinding force ratio F_t/F_n (3-D verification) */
  /* target (target.*) */
  double target_F;       /* constant target [N] */
  char target_csv[1024]; /* s,force profile ("": constant) */
  double max_F;          /* over-force threshold [N] */
  int measure;           /* what the objective scores: KL_MEASURE_* (kernels/kl_rollout.h) */
  /* decision variables (offset.*, speed.*) */
  double o_min, o_max;   /* offset bounds [m] (NaN: derived from the part's deviation from its CAD) */
  double o_margin;       /* margin of the derived offset bounds beyond the protrusion's range [m] */
  double o_acc;          /* the robot's acceleration limit along the normal for the offset command [m/s^2] */
  int n_o;               /* offset control points (method nlopt) */
  double v_min, v_max, v_init; /* feed speed bounds and initial [m/s] */
  int n_v;               /* speed control points */
  double a_max;          /* feed acceleration limit [m/s^2] */
  /* objective weights (objective.*) */
  double w_rms, w_loss, w_over, w_time, w_rough, w_acc;
  /* robot (robot.*): the arm that holds the tool; "" none, "builtin" (the ER10-900-sized arm) or a
   * .yaml/.urdf file. Then the effective mass per sample is the arm's along the normal, and the speed
   * bound is capped by its joint speed limits. */
  char robot[1024];
  double robot_base[3], robot_rpy[3]; /* base pose in the workpiece frame [m, rad] */
  /* pipeline (optimiser.*, verify.*) */
  int method;            /* KL_METHOD_LM (per-sample commands, Levenberg-Marquardt) or KL_METHOD_NLOPT (splines) */
  int jacobian;          /* method lm: the offsets' Jacobian by KL_JACOBIAN_DIFFERENCES or KL_JACOBIAN_TANGENT */
  int screening;         /* quasi-random (Sobol, or Halton above 40 variables) candidates in one batch (0: skip); method nlopt */
  double screen_o;       /* half-width of the offset box around the initial guess [m] */
  int keep;              /* starts of the local refinement */
  char algorithm[64];    /* NLopt algorithm name (LD_*: finite-difference gradients, one batch each) */
  int maxeval;           /* NLopt evaluations per start (a gradient evaluation is one batch of nc + 1 rollouts) */
  double maxtime;        /* per start [s], a safety net: a run stopped by it is not reproducible */
  double budget;         /* wall-time budget of screening + refinement together [s] (0: none); the
                          * starts share what the screening leaves (benchmarks compare at equal budget) */
  double xtol_rel, ftol_rel;
  double fd_step;        /* finite-difference step of gradient algorithms, relative to the bounds */
  double ftol;           /* sub-step force tolerance, relative */
  int verify;            /* winners re-simulated in the 3-D engine, besides the naive pass */
  double agree_tol;      /* device vs 3-D RMS disagreement of the wrist-sensor reading flagged above */
  double verify_hc_tol;  /* the 3-D engine's Hunt-Crossley sub-step tolerance (relative) */
  double verify_sf;      /* its friction-coupled sub-step, as a fraction of the contact's time scale */
  double verify_time_limit; /* wall seconds per verified pass (0: none) */
  char correct[16];      /* the correction stage: "auto", "off" or the most iterations (kl_correct_parse, optimiser/schema.h) */
  unsigned long seed;
  /* material removal (removal.*, tool.spindle_rpm; docs/design.md section 9) */
  double spindle_rpm;    /* spindle speed [rpm] */
  double preston;        /* Preston's coefficient k_p [m^2/N] (0: no removal) */
  double rm_allowance;   /* the target surface's height above the CAD [m] */
  double rm_tolerance;   /* residual allowed above the target [m] */
  double rm_gouge;       /* gouge allowed below the target [m] */
  double rm_resolution;  /* height field's cell size [m] (NaN: derived from the contact patch) */
  double rm_width;       /* height field's width across the path [m] (NaN: derived from the groove) */
  double grinding_ratio; /* removed volume / worn tool volume (0: no wear) */
  int rm_max_passes;     /* most passes a plan may take */
  /* uncertainty (uncertainty.*; optimiser/scenario.h): the scenario sets of robust passes */
  int unc_scenarios;     /* the optimisation set's size (0: no uncertainty) */
  unsigned long unc_seed; /* the optimisation set's seed (randomised quasi-Monte Carlo) */
  int unc_verify;        /* the out-of-sample set's size */
  unsigned long unc_verify_seed; /* its seed (plain Monte Carlo) */
  int unc_objective;     /* KL_ROBUST_* (optimiser/scenario.h) */
  double unc_k, unc_alpha, unc_prob; /* mean + k std; CVaR level; the chance constraint's probability */
  double unc_fmin, unc_fmax; /* the force band [N] (NaN: derived) */
  double unc_trunc;      /* truncated normals cut at +- this many spreads */
  /* the spread of each uncertain parameter (KL_UNC_*, in its order; 0: fixed): registration [m, m, m, deg], bead
   * height, width, position and step height [m], roughness realisations (0/1), then relative ones (moduli, holder,
   * mass), restitution [-] and tool radius [m] */
  double unc_reg_x, unc_reg_y, unc_reg_z, unc_reg_tilt;
  double unc_bead_h, unc_bead_w, unc_bead_x, unc_step_h;
  int unc_rough;
  double unc_work_E, unc_tool_E, unc_holder_K, unc_holder_D, unc_tool_mass, unc_cr, unc_tool_R;
  /* the distribution of each (KL_DIST_*; roughness has none) */
  int unc_reg_x_dist, unc_reg_y_dist, unc_reg_z_dist, unc_reg_tilt_dist;
  int unc_bead_h_dist, unc_bead_w_dist, unc_bead_x_dist, unc_step_h_dist;
  int unc_work_E_dist, unc_tool_E_dist, unc_holder_K_dist, unc_holder_D_dist, unc_tool_mass_dist, unc_cr_dist;
  int unc_tool_R_dist;
} kl_settings;

/* What is prepared from the settings. */
typedef struct kl_problem {
  kl_settings set;
  int ns, nc;            /* samples; control points n_o + n_v */
  double *s;             /* arc length (ns) [m] */
  double *p, *nrm, *tan; /* nominal points, unit normals, unit tangents (ns x 3) */
  double *h, *dh;        /* protrusion (ns) [m] and dh/ds (ns) */
  double *meff, *fg, *ft; /* effective mass [kg], weight component [N], target force [N] (ns) */
  double *kap;           /* the contact force's share along the tool axis (ns; kernels/kl_rollout.h) */
  double *geo;           /* packed (ns x KL_GG_N) */
  double *basis;         /* (2 ns x nc) splines; NULL with method lm: the control points are the samples (nc = 2 ns) */
  double gp[KL_GP_N];    /* packed constants */
  double *lo, *hi;       /* bounds of the control points (nc) */
  double naive_o;        /* the constant offset a planner would command on the CAD */
  double Kc, chi, Dc;    /* contact constants in use */
  kl_mesh *actual;       /* the part as it is (the caller's mesh, or one meshed here from the settings) */
  int own_actual;        /* 1: actual was made here and is freed with the problem */
  double length;         /* path length [m] */
  double robot_vmax;     /* smallest robot speed bound along the path [m/s] (0: no robot) */
  double contact_share;  /* the contact's share of the compliance along the normal at the mean target force F:
                          * c / (c + 1/K_h), c = d(delta)/dF = delta / (n F) for F = K delta^n */
} kl_problem;

/* Fill the defaults (the built-in example: the paper's aluminium part, curved, with a weld bead) from the
 * table of settings in optimiser/schema.c. */
void kl_settings_default(kl_settings *s);

/* What the settings' file fields name, already in memory (io/settings.h loads them from files; a program
 * using the library may build them itself). Every member is optional (zero / NULL: not given). */
typedef struct kl_problem_inputs {
  const kl_mesh *mesh;     /* the actual part, needed with surface mesh; borrowed: must outlive the problem */
  int npath;               /* path points on the nominal surface (0: the plane intersection y = path_y) */
  const double *path_p;    /* (npath x 3) points [m] */
  const double *path_n;    /* (npath x 3) unit outward normals */
  int ntarget;             /* target profile samples (0: the constant target_F) */
  const double *target_s;  /* (ntarget) arc length [m], increasing */
  const double *target_F;  /* (ntarget) target normal force [N] > 0 */
  kl_robot *robot;         /* the arm holding the tool (its base is set from the settings), or NULL; borrowed */
} kl_problem_inputs;

/* Prepare the problem from settings and inputs (NULL: none). Opens no file. KELVIN_ERR_CONFIG (bad
 * values, path off the workpiece, unreachable robot poses) or KELVIN_ERR_ARG (malformed inputs) with a
 * message; *out = NULL on failure. */
kelvin_status kl_problem_build(const kl_settings *s, const kl_problem_inputs *in, kl_problem **out, char *msg, int cap);

/* kl_problem_build on a given actual part (borrowed, whatever workpiece.surface says: it must outlive the problem;
 * NULL: kl_problem_build's own); the scenario problems of optimiser/scenario.h whose part is the nominal's. */
kelvin_status kl_problem_build_on(const kl_settings *s, const kl_problem_inputs *in, const kl_mesh *part,
                                  kl_problem **out, char *msg, int cap);

void kl_problem_free(kl_problem *pb); /* NULL is a no-op */

/* The contact of a prepared problem (model, law, Kc, exponent, Dc, chi) for its static relations
 * (kernels/kl_contact_static.h): static depth, compliance and share, computed there for every caller. */
kl_contact_desc kl_problem_contact(const kl_problem *pb);

/* Sampled offsets and speeds (ns each) of control points x (nc) through basis (2 ns x nc, offsets' rows
 * then speeds'); with basis NULL, x is [offsets; speeds] itself (nc = 2 ns). */
void kl_basis_expand(const double *basis, int ns, int nc, const double *x, double *o, double *v);

/* Sampled offsets and speeds (ns each) of control points x (nc; with basis NULL x is [offsets; speeds]). */
void kl_problem_expand(const kl_problem *pb, const double *x, double *o, double *v);

/* Pack pb's per-sample geometry (s, h, dh/ds, effective mass, weight, target, kappa - 1) into pb->geo (ns x KL_GG_N),
 * what the rollouts read: kl_problem_build's, and a scenario problem's after its protrusion (optimiser/scenario.h). */
void kl_problem_pack_geo(kl_problem *pb);

/* The naive pass (constant offset on the CAD, initial speed) and the physics-based initial guess,
 * as control points (nc). */
void kl_problem_naive(const kl_problem *pb, double *x);

/* What waypoints.csv holds and the 3-D verification follows, for sampled offsets o and speeds v (ns
 * each): the time t at each sample (the rollout's interval durations summed), the tool-centre point pos
 * (ns x 3: the tool tip on its axis, R beyond the tool centre p + (R - o) n) and the tool frame quat
 * (ns x 4, w x y z: z into the part, x along the path, turned about y by tool.lead_deg). Any output may
 * be NULL. */
void kl_problem_waypoints(const kl_problem *pb, const double *o, const double *v, double *t, double *pos, double *quat);

/* The disc's axis (unit, world) at sample k: tool.axis in the tool frame there. */
void kl_problem_tool_axis(const kl_problem *pb, int k, double a[3]);

/* The device's per-sample force of one pass (so: KL_SO_N x ns, one candidate; o, v: its commands per
 * sample) as the measure m (KL_MEASURE_*) reads it: the contact force, or the wrist sensor's reading
 * F_N + m z'' (kernels/kl_rollout.h), at the samples or averaged over each interval. out: ns. */
void kl_problem_measure(const kl_problem *pb, int m, const double *so, const double *o, const double *v, double *out);
void kl_problem_guess(const kl_problem *pb, double *x);

/* Magnitude checks (docs/design.md section 8, magnitude checks): values legal one by one but physically
 * implausible together, refused by kl_problem_build before any long work, with the likely unit mistake
 * named. The limits: */
#define KL_PLAUSIBLE_LENGTH 10.0 /* m: a workpiece mesh across, a path's length (a part one robot grinds) */
#define KL_PLAUSIBLE_SPEED 2.0   /* m/s: a feed speed (speed.max, a pass's speeds) */
#define KL_PLAUSIBLE_OFFSET 0.02 /* m: the static offset at the target, holder deflection plus contact depth */

/* The power of 1000 (1e-9 .. 1e9) nearest 1 that brings a size into [lo, hi] (a unit mistake's
 * factor: 1e-3 for millimetres taken as metres); 0 if none does. */
double kl_unit_factor(double size, double lo, double hi);

/* The name of the length unit that factor f turns into metres ("millimetres" for 1e-3; nm, um, mm, cm, m,
 * km), or NULL if f is none of them. */
const char *kl_length_unit(double f);

/* Check a pass for kl_evaluate: per sample (ns each) a finite offset within [offset.min, offset.max] and
 * a speed within [speed.min, speed.max] (the problem's bounds); KELVIN_ERR_ARG with a message naming the
 * sample, the value and the bounds, and the likely unit mistake (mm, mm/s) where the value is far out. */
/* How many of the controls x[j0..j1) sit at their lower (*at_lo) and at their upper bound (*at_hi), within
 * 1e-6 of each bound's range: what limits a pass (kelvin_grind_diagnosis; the correction's note). */
void kl_problem_at_bounds(const kl_problem *pb, const double *x, int j0, int j1, int *at_lo, int *at_hi);

kelvin_status kl_problem_check_pass(const kl_problem *pb, const double *offset, const double *speed, char *msg,
                                    size_t cap);

/* The protrusion pb->h, its slope pb->dh and the force share pb->kap (ns each) of the part pb->actual along pb's
 * path (p, nrm, tan) for pb's tool (what kl_problem_build computes; the scenario problems of optimiser/scenario.h
 * recompute them on a scenario's part along the nominal path). motion (NULL: none) moves the part rigidly first:
 * {theta [rad], o[3], t[3] [m]}, x -> Ry(theta) (x - o) + o + t, Ry turning as workpiece.tilt_deg does (x' = x cos
 * + z sin, z' = -x sin + z cos). KELVIN_ERR_CONFIG with a message naming the sample where the tool is off the part.
 * geo is not repacked. */
kelvin_status kl_problem_protrusion(kl_problem *pb, const double *motion, char *msg, int cap);

/* A deep copy of pb (*out) whose tool sees the protrusion h (ns) and dh/ds (ns) instead of pb's (the part as
 * material removal left it, optimiser/removal.h kl_protrusion_of_drop) and whose tool radius is tool_R (worn;
 * the Hertz contact constants follow it where they came from the materials). The copy borrows pb's actual mesh
 * (it must outlive the copy). Everything else (path, bounds, target, the naive offset's bounds) is pb's.
 * KELVIN_ERR_NOMEM, KELVIN_ERR_ARG (a non-finite h or a radius <= 0) with a message; *out = NULL on failure. */
kelvin_status kl_problem_with_protrusion(const kl_problem *pb, const double *h, const double *dh, double tool_R,
                                         kl_problem **out, char *msg, int cap);

#endif
