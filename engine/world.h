/* engine/world.h: the variable-time-step 3-D engine (docs/design.md section 3; paper section 2, Algorithm 1).
 *
 * Rigid 6-DoF bodies (mass, principal inertia, quaternion orientation) carry shapes: sphere, box,
 * capsule, cylinder, convex hull (dynamic or static), plane and triangle mesh (static only). Contacts
 * come from exact formulas where they are trivial (sphere-plane, sphere-sphere, sphere-triangle,
 * vertex-plane, vertex-triangle) and from libccd's MPR otherwise (convex-convex, convex-triangle).
 * A sphere against a mesh gives one contact per distinct local minimum of the distance (candidates
 * clustered by normal within 10 degrees, as Klamp't clusters), so a fine tessellation of a smooth
 * surface gives the smooth surface's single contact. Convex-convex pairs give one MPR contact. A disc
 * (a wheel) against a plane or a mesh gives one contact per cluster too: its depth is the deepest point
 * of the rim (libccd MPR against the best triangles of the cluster, collision_ccd.c), and it acts at
 * the pressure centre of the rim's line of contact, so a level wheel does not rock from end to end.
 *
 * Contact solver (docs/design.md 2): every contact i is a 1-D compliant contact along its normal with the
 * effective mass of the pair at the contact point, rotational inertia included,
 *   1/m_i = A_ii = n.(M_a^-1 n) + (r_a x n).I_a^-1 (r_a x n) + the same for body b,
 * and advanced in closed form over the sub-step (kl_kv_step, paper eq. 3-4):
 *   m_i d'' + D_i d' + K_i d = F_e,i,   F_e,i = m_i (a_e,i - sum_{j != i} A_ij F_j),
 * where a_e,i is the approach acceleration of the contact points from gravity and the holders,
 * and the coupling to the other contacts j of the same bodies uses their forces at the sub-step start
 * (A is the contact-space inverse inertia). With one contact whose normal passes through the centres of
 * mass (a ball) the coupling terms vanish and the step is the paper's exact solution, of any length.
 * The contact's impulse J_i = F_e,i h - m_i (d'(h) - d'(0)) and first moment
 * G_i = int_0^h (h - t) F dt = F_e,i h^2/2 - m_i (d(h) - d(0) - d'(0) h) then move the bodies:
 * v += a_ext h + M^-1 sum J n, x += v h + a_ext h^2/2 + M^-1 sum G n (and the same for rotation),
 * which reproduces the 1-D solution exactly for a single central contact. Hunt-Crossley contacts use
 * the exponential step of kernels/kl_xrb.h about the linearisation of docs/design.md section 2.3 (tangent stiffness
 * n K d^{n-1} (1 + chi d'), damping chi K d^n; order 5), the sub-step controlled by its error estimate
 * (relative tolerance hc_tol, default 1e-8 of the impact's maximum penetration and speed); its dense
 * output gives the contact's end, maximum penetration and peak force inside the sub-step. Several contacts or rotational coupling limit the sub-step to a fraction
 * (substep_fraction, default 1/20) of the shortest contact period 2 pi sqrt(m_i / K_i).
 *
 * Friction: regularised Coulomb, F_t = -mu F_N phi(|v_t|) v_t/|v_t| with phi(v) = v / vreg below the
 * regularisation velocity vreg and 1 above it (default vreg = 1e-3 m/s). It is applied per sub-step
 * as an implicit (backward-Euler) impulse in the tangential velocity with the tangential effective
 * mass, so it never reverses the slip and is stable for any step; when several contacts of one pair
 * stick, each takes an equal share of the sticking impulse (Jacobi).
 *
 * Per-body parameters are blended per pair (docs/design.md 2.4, Klamp't): restitution by arithmetic
 * mean, stiffness, damping and friction by harmonic mean, unless the pair is given explicitly.
 * Stiffness is per contact point (a box resting flat has four contacts, each with K).
 *
 * Integrator: free motion is exact ballistic translation under constant gravity (plus the holders'
 * forces, explicit to second order in the step: the force, its rate and its second derivative from the
 * body's mean acceleration over the step, contacts included; the sub-step limited to 1/40 of the
 * holder's shortest translational period) and semi-implicit Euler (paper eq. 14) for rotation on the
 * world angular momentum (conserved in free flight), with a rotation step limit (0.05 rad per sub-step)
 * for bodies of unequal principal moments; a rotational holder is backward Euler on the angular
 * velocity (stable at any step, numerical damping about (w h)^2/2 per step of an oscillation of
 * frequency w), with the contacts' angular impulses in it. The approach
 * acceleration a_e,i of a contact comes from the external forces on the centres of mass only (a
 * spinning ball's gap follows its centre, not the material point). Contact
 * onset: conservative advancement on exact gaps (sphere, plane, vertex) or bounding-sphere gaps
 * (everything else) brings pairs to touching; an onset that still happens inside a step (penetration
 * beyond onset_tol after the step) is located by Illinois iteration on the step length against the
 * libccd/exact penetration depth, and the step is split there. Contact end (penetration rule d = 0,
 * or force rule F = 0) is located in the 1-D closed form (kl_kv_first_root) and splits the step too.
 * The caller's output period is only where states are reported.
 *
 * Model/data split as in MuJoCo: kl_world_model is built once (kl_world_create, kl_world_add_*,
 * kl_world_compile) and read-only during simulation; kl_world_data holds one rollout in one
 * allocation; fixed-capacity contact arrays count overflow instead of growing. */
#ifndef KL_ENGINE_WORLD_H
#define KL_ENGINE_WORLD_H

#include "engine/mesh.h"
#include "kelvin/kelvin.h"
#include "kernels/kl_contact_gen.h"

/* shape types; size[] meaning in brackets */
#define KL_SHAPE_SPHERE 0   /* [radius] */
#define KL_SHAPE_BOX 1      /* [half extents x, y, z] */
#define KL_SHAPE_CAPSULE 2  /* [radius, half length of the axis (local z)] */
#define KL_SHAPE_CYLINDER 3 /* [radius, half length (local z)] */
#define KL_SHAPE_HULL 4     /* vertices in hull_vert (convex hull of them) */
#define KL_SHAPE_PLANE 5    /* static half-space below the local xy plane; normal = local z */
#define KL_SHAPE_MESH 6     /* static triangle mesh (kl_mesh, BVH) */
#define KL_SHAPE_DISC 7     /* [radius, half width (local z)]: a wheel; against planes and meshes one contact of
                               its rim per distinct minimum of the distance (libccd), not rim samples */
#define KL_NSHAPE 8

/* body types */
#define KL_BODY_DYNAMIC 0
#define KL_BODY_STATIC 1    /* never moves; infinite mass */
#define KL_BODY_KINEMATIC 2 /* moves with its prescribed (initial) velocity and angular velocity */

typedef struct kl_body_def {
  int type;             /* KL_BODY_* */
  double mass;          /* [kg] > 0 for dynamic bodies */
  double inertia[3];    /* principal moments about the centre of mass, body frame [kg m^2]; all 0 =
                           computed from the shapes (uniform density) at compile */
  double pos[3];        /* initial position of the centre of mass [m] */
  double quat[4];       /* initial orientation (w, x, y, z); normalised at compile */
  double vel[3];        /* initial (kinematic: constant) velocity [m/s] */
  double angvel[3];     /* initial (kinematic: constant) angular velocity, world frame [rad/s] */
  /* contact material (docs/design.md 2.4) */
  double K;             /* stiffness [N/m^n] > 0 */
  double cr;            /* restitution in (0, 1] */
  double D;             /* damping [N s/m] (Kelvin-Voigt); 0 = from cr by paper eq. (10) */
  double mu;            /* friction coefficient >= 0 */
  /* holder driver (optional): a 6-DoF spring-damper between the body's origin (centre of mass) and
   * an anchor frame: force K (a - x) + D (a' - x') per anchor-frame axis, torque -K_r theta - D_r (w - w_a)
   * per anchor-frame axis, theta the rotation vector taking the anchor frame to the body frame. The
   * anchor moves at constant velocity (anchor, anchor_vel, fixed orientation anchor_quat) or follows a
   * prescribed trajectory (traj). */
  int holder;           /* 1: held */
  double anchor[3];     /* anchor position at t = 0 [m] */
  double anchor_vel[3]; /* [m/s] */
  double holder_K[3];   /* [N/m] >= 0, along the anchor-frame axes */
  double holder_D[3];   /* [N s/m] >= 0 */
  double anchor_quat[4]; /* anchor frame orientation (w, x, y, z); all 0 = identity (world axes) */
  double holder_Kr[3];  /* rotational stiffness about the anchor-frame axes [N m/rad] >= 0 (0: free) */
  double holder_Dr[3];  /* rotational damping [N m s/rad] >= 0 */
  const struct kl_anchor_traj *traj; /* NULL, or the anchor frame's trajectory (copied at kl_world_add_body;
                                        anchor, anchor_vel and anchor_quat are then ignored) */
} kl_body_def;

/* A prescribed trajectory of a holder's anchor frame: poses at knots of increasing time. Between knots
 * the position moves on the straight line at constant velocity (linear = 1: a robot's linear moves
 * between waypoints), or on the C1 cubic Hermite curve in time whose knot velocities are the
 * three-point (quadratic) derivative estimates, one-sided at the ends (linear = 0: exact for uniform
 * and uniformly accelerated motion); the orientation turns at constant angular velocity (slerp) from
 * knot to knot. Before the first knot and after the last the anchor rests at the end pose (at the last
 * knot itself it is still arriving). */
typedef struct kl_anchor_traj {
  int n;              /* knots >= 2 */
  const double *t;    /* (n) times [s], increasing */
  const double *pos;  /* (n x 3) positions [m] */
  const double *quat; /* (n x 4) orientations (w, x, y, z), normalised when copied */
  int linear;         /* 1: straight lines between knots; 0: C1 cubic Hermite */
} kl_anchor_traj;

typedef struct kl_shape_def {
  int type;             /* KL_SHAPE_* */
  double size[3];       /* see the type */
  double pos[3];        /* position in the body frame [m] */
  double quat[4];       /* orientation in the body frame (w, x, y, z) */
  double pad;           /* padding (boundary layer) [m] >= 0 */
  const kl_mesh *mesh;  /* KL_SHAPE_MESH: not owned, must outlive the model */
  const double *hull;   /* KL_SHAPE_HULL: vertices (nhull x 3), copied */
  int nhull;
} kl_shape_def;

typedef struct kl_world_model {
  double gravity[3];       /* [m/s^2] */
  int model;               /* KL_MODEL_KV, KL_MODEL_HC or KL_MODEL_GEN (kernels/kl_impact.h) */
  double n;                /* force exponent (1 for KV) */
  int law;                 /* KL_LAW_* damping law for HC */
  int rule;                /* KL_SEP_PENETRATION or KL_SEP_FORCE */
  double vreg;             /* friction regularisation velocity [m/s] > 0 */
  double substep_fraction; /* coupled sub-step as a fraction of the shortest contact period */
  int query_cache;         /* 1 (default): spheres reuse their last mesh query while it covers them
                              (exact: the same answers, docs/design.md section 3); 0: every query fresh */
  double onset_tol;        /* penetration at which an onset inside a step is located [m]; a contact starts
                              within onset_tol / 2 of touching and counts its penetration from there
                              (default 1e-12: 1e-9 put each apex of the max-step ball 3e-11 m high) */
  double hc_tol;           /* Hunt-Crossley (and general law) sub-step error tolerance (relative) */
  kl_gen_law gen;          /* KL_MODEL_GEN: the law F = k d^n1 + c sgn(d')|d'|^m d^n2 of every contact (clamped at
                              0; kernels/kl_contact_gen.h) but the pairs that give their own (pair_gen); the
                              bodies' stiffness, restitution and damping are then unused, n is gen.n1 */
  double force_limit;      /* a contact force beyond it [N] stops kl_world_advance as diverged (0: none; docs/design.md
                              section 8, "Bounded physics") */
  int ncon_max;            /* contact capacity of a data object */
  int nlog_max;            /* contact-event log capacity */
  /* bodies */
  int nbody;
  int *body_type;          /* (nbody) */
  double *body_mass;       /* (nbody) [kg]; 0 for static and kinematic */
  double *body_inertia;    /* (nbody x 3) principal moments [kg m^2] */
  double *body_pos;        /* (nbody x 3) initial positions [m] */
  double *body_quat;       /* (nbody x 4) initial orientations */
  double *body_vel;        /* (nbody x 3) initial velocities [m/s] */
  double *body_angvel;     /* (nbody x 3) initial angular velocities [rad/s] */
  double *body_K, *body_cr, *body_D, *body_mu; /* (nbody) materials */
  int *body_holder;        /* (nbody) */
  double *body_anchor;     /* (nbody x 3) [m] */
  double *body_anchor_vel; /* (nbody x 3) [m/s] */
  double *body_holder_K;   /* (nbody x 3) [N/m] */
  double *body_holder_D;   /* (nbody x 3) [N s/m] */
  double *body_anchor_quat; /* (nbody x 4) */
  double *body_holder_Kr, *body_holder_Dr; /* (nbody x 3) [N m/rad], [N m s/rad] */
  int *body_traj_adr, *body_traj_n; /* (nbody) first knot in traj_* and count (0: constant velocity) */
  int *body_traj_linear;   /* (nbody) 1: straight lines between knots, 0: C1 cubic Hermite */
  int ntraj, cap_traj;
  double *traj_t, *traj_pos, *traj_vel, *traj_quat; /* (ntraj), (ntraj x 3), (ntraj x 3), (ntraj x 4) */
  double *traj_th;         /* (ntraj x 3) world rotation vector from each knot's orientation to the next's
                              (set by kl_world_compile; the last knot's is zero) */
  /* shapes */
  int nshape;
  int *shape_body;         /* (nshape) */
  int *shape_type;         /* (nshape) */
  double *shape_size;      /* (nshape x 3) */
  double *shape_pos;       /* (nshape x 3) in the body frame */
  double *shape_quat;      /* (nshape x 4) in the body frame */
  double *shape_pad;       /* (nshape) [m] */
  double *shape_rbound;    /* (nshape) bounding-sphere radius about the shape origin, padding included */
  double *shape_thick;     /* (nshape) smallest half-thickness (tunnelling guard) [m] */
  const kl_mesh **shape_mesh; /* (nshape) */
  int *shape_hull_adr, *shape_hull_num; /* (nshape) into hull_vert */
  int nhull_vert;
  double *hull_vert;       /* (nhull_vert x 3) */
  /* explicit pair parameters (override blending) */
  int npair;
  int *pair_body;          /* (npair x 2) */
  double *pair_K, *pair_cr, *pair_D, *pair_mu; /* (npair) */
  double *pair_chi;        /* (npair) Hunt-Crossley damping factor [s/m]; 0: from each impact's speed */
  kl_gen_law *pair_gen;    /* (npair) KL_MODEL_GEN: the pair's law; k <= 0: the model's (gen) */
  int compiled;
  int cap_body, cap_shape, cap_hull, cap_pair; /* builder capacities */
} kl_world_model;

/* One active contact (persistent across sub-steps while it lasts). */
typedef struct kl_contact {
  int shape[2], body[2]; /* force +F n acts on body[0], -F n on body[1] */
  int key;               /* feature of the pair (vertex index, ...) */
  double pos[3];         /* contact point, world [m] */
  double normal[3];      /* unit, from shape[1] towards shape[0] */
  double depth;          /* penetration d [m] (padding included) */
  double rate;           /* d' [m/s] */
  double force;          /* normal force at the state [N] */
  double favg;           /* step-averaged normal force of the last sub-step [N] */
  double ftan[3];        /* step-averaged friction force on body[0] of the last sub-step [N] */
  double K, cr, D, mu, chi; /* parameters of this contact (D per contact from its effective mass) */
  kl_gen_law gen;        /* KL_MODEL_GEN: this contact's law (K = gen.k) */
  int dgiven;            /* D was given (pair or bodies), not computed from cr */
  double meff;           /* effective mass along the normal [kg] */
  double t0, v_in;       /* onset time and approach speed */
  double dstart;         /* penetration at onset if negative (a gap within the touching tolerance), else 0 */
  double dmax, fpeak;    /* running maxima */
  double hstep;          /* Hunt-Crossley: the error control's next sub-step [s] */
  double fix, tfix, frate; /* with a depth correction (fix): its value at the last narrow phase, that phase's
                            * time, and its change per unit time over the step before, which joins the rate */
} kl_contact;

/* A finished contact (onset to separation) */
typedef struct kl_contact_event {
  int shape[2], body[2];
  double t0, t1;         /* onset and end [s] */
  double v_in, v_out;    /* approach speed at onset, separation speed at the end [m/s] */
  double dmax, fpeak;    /* maximum penetration [m] and peak normal force [N] */
} kl_contact_event;

typedef struct kl_world_data {
  /* state: what resumes a rollout */
  double t;
  double *xpos;     /* (nbody x 3) centre of mass [m] */
  double *xquat;    /* (nbody x 4) */
  double *vel;      /* (nbody x 3) [m/s] */
  double *angvel;   /* (nbody x 3) world frame [rad/s] */
  int ncon;
  kl_contact *con;  /* (ncon_max) active contacts */
  /* derived and statistics */
  long nsub;        /* sub-steps */
  long nonset, nend;/* located onsets and ends */
  long ncut;        /* sub-steps cut at an onset found inside them (taken again at the cut) */
  long ncon_overflow;
  int nlog;
  long nlog_overflow;
  kl_contact_event *log; /* (nlog_max) */
  int warn_nonfinite;
  /* impulse accumulators (the caller may zero them at any time; kl_world_reset zeroes them) */
  double *hold_imp; /* (nbody x 3) impulse of the holder's force on the body, anchor-frame components [N s] */
  double *con_imp;  /* (nbody x 3) impulse of the contact forces (normal and friction) on the body, world [N s] */
  /* scratch (one allocation; see world.c) */
  void *scratch;
  /* set by the caller (NULL by default): while *stop is nonzero, kl_world_advance returns
   * KELVIN_ERR_STOPPED before its next sub-step (another thread may set it: read atomically) */
  const int *stop;
  /* a check between sub-steps (NULL: none; kl_world_reset keeps it): kl_world_advance calls it after every
   * KL_WORLD_CHECK_EVERY-th sub-step, the state then consistent at that completed sub-step; nonzero stops the
   * advance there with KELVIN_ERR_STOPPED (d->t < t_out). The public API's progress and stop (kelvin/engine.h) */
  int (*check)(void *ctx, const struct kl_world_data *d);
  void *check_ctx;
  /* Hooks set by the caller (NULL: none, and nothing is computed for them; kl_world_reset keeps them;
   * docs/design.md section 9.3).
   * observe: called after every accepted sub-step (once per d->nsub increment), the step from t0 of length h,
   * the state then at the step's end (d->t = t0 + h) and d->con the contacts that carried the step, each with
   * its step-averaged normal force favg, friction ftan, point and normal (a contact that ends at the step's
   * end is still there; it is dropped after the call). It may change what fix answers (a surface that wears). */
  void (*observe)(void *ctx, const kl_world_model *m, const struct kl_world_data *d, double t0, double h);
  void *observe_ctx;
  /* fix: the depth correction of the contacts between body fix_body[0] (the part whose surface changes) and
   * body fix_body[1] (-1: any other body): fix(ctx, pos, nout, at, grad) is the change [m] of the part's surface
   * height along its outward unit normal nout at the contact point pos (both as the narrow phase found them on
   * the uncorrected surface), with the other body's centre at `at` (its position, d->xpos). Every narrow phase
   * adds it to the feature's penetration and moves the contact point by half of it along nout (the middle of the
   * corrected overlap), so contact onsets, the onset search inside a step and the contacts' depth all see the
   * corrected surface. fix_max >= 0 bounds fix from above: conservative advancement takes the pair's gap less
   * fix_max (0 for a surface that only wears away).
   * grad (zeroed before the call; the hook may leave it) receives the correction's gradient [m/m, world frame]
   * with respect to `at`, the other body's centre, as the hook's answer changes when that body moves (pos held
   * by the hook only through at: a correction of the tool's place, as the removal's drop is): the engine adds
   * grad . v, v the other body's centre velocity over the part, to a new feature's approach rate, so that a
   * feature sliding where the correction rises (falls) sees its corrected depth grow (shrink) as the narrow
   * phase will find it (docs/design.md section 9.3). (A contact point on a faceted mesh does not move with the
   * body: it stays on an edge or vertex while the body passes over it; a correction of pos changes at a rate
   * the engine cannot know, so a hook should answer for `at`.) */
  double (*fix)(void *ctx, const double pos[3], const double nout[3], const double at[3], double grad[3]);
  void *fix_ctx;
  int fix_body[2];
  double fix_max;
} kl_world_data;

#define KL_WORLD_CHECK_EVERY 256 /* sub-steps between checks */

/* Build a model: create, add bodies and shapes, then compile. Functions return the new index, or -1
 * on allocation failure. kl_world_compile validates everything (msg names the body/shape and field)
 * and computes derived fields; the model is read-only afterwards. */
kl_world_model *kl_world_create(void);
void kl_world_default_body(kl_body_def *b); /* dynamic, 1 kg, identity, K = 1e6, cr = 1, mu = 0 */
void kl_world_default_shape(kl_shape_def *s);
int kl_world_add_body(kl_world_model *m, const kl_body_def *b);
int kl_world_add_shape(kl_world_model *m, int body, const kl_shape_def *s);
int kl_world_add_pair(kl_world_model *m, int body_a, int body_b, double K, double cr, double D, double mu);
/* Fix the Hunt-Crossley damping factor chi [s/m] of pair p (by default each contact takes chi from its
 * own approach speed through the damping law, which a contact that begins at rest does not have).
 * Returns 0, or -1 if p is not a pair or chi < 0. */
int kl_world_pair_chi(kl_world_model *m, int p, double chi);
/* Give pair p its own general law (KL_MODEL_GEN; by default a pair takes the model's, m->gen). Returns 0, or -1
 * if p is not a pair (the constants are checked by kl_world_compile). */
int kl_world_pair_gen(kl_world_model *m, int p, kl_gen_law law);
kelvin_status kl_world_compile(kl_world_model *m, char *msg, int cap);
void kl_world_free(kl_world_model *m); /* NULL is a no-op; meshes are not freed */

/* Data object for a compiled model (one allocation); NULL on failure. Starts at the initial state. */
kl_world_data *kl_world_data_create(const kl_world_model *m);
void kl_world_data_free(kl_world_data *d); /* NULL is a no-op */
void kl_world_reset(const kl_world_model *m, kl_world_data *d);

/* Advance to t_out >= d->t exactly. Returns KELVIN_OK, or KELVIN_ERR_DIVERGED (msg: when, which force)
 * when the state or a contact force went non-finite or a contact force went beyond m->force_limit,
 * KELVIN_ERR_NUMERIC when the sub-step count ran away, or KELVIN_ERR_STOPPED when d->stop asks or
 * d->check asked to stop (the state is then that of the last completed sub-step, before t_out). Contact
 * overflow is counted in data. */
kelvin_status kl_world_advance(const kl_world_model *m, kl_world_data *d, double t_out, char *msg, int cap);

/* The work of a run, estimated up front from the stiffest time scale (docs/design.md section 8,
 * "Bounded physics"): the sub-step h the engine will take at most (a held body: 1/40 of its holder's translational
 * period 2 pi sqrt(m / K_max), as integrate.c takes it; a body in contact: substep_fraction of the contact
 * period 2 pi sqrt(m_eff / K), m_eff = 1 / (1/m + r^2 / I_min) the lightest effective mass at its shapes'
 * reach r (0 for a sphere centred on the body) against the stiffest pair it has, a Hunt-Crossley contact
 * with its tangent stiffness n K^(1/n) F^((n-1)/n) at the force scale fref), and steps = duration / h +
 * outputs: a contact is assumed to last the whole run, coupled. */
typedef struct kl_world_work {
  double h;         /* estimated sub-step [s] (INFINITY: no time scale limits it) */
  double steps;     /* estimated sub-steps */
  int body;         /* the body whose time scale gives h (-1: none) */
  int kind;         /* KL_WORK_* */
  double mass;      /* the (effective) mass of that time scale [kg] */
  double stiffness; /* its stiffness [N/m] */
  double fraction;  /* h as a fraction of the period 2 pi sqrt(mass / stiffness) */
} kl_world_work;

#define KL_WORK_NONE 0
#define KL_WORK_HOLDER 1  /* a holder's translational stiffness against the body's mass */
#define KL_WORK_CONTACT 2 /* a contact's stiffness against the body's effective mass */

/* The estimate for compiled m over duration [s] with nout output instants; fref [N] the force scale of
 * Hunt-Crossley tangent stiffness (<= 0: the largest weight m |g| of a dynamic body, at least 1 N). */
void kl_world_work_estimate(const kl_world_model *m, double duration, double nout, double fref, kl_world_work *w);

/* What drives the estimate, for a message: "1/40 of the holder period 2 pi sqrt(m/K) of 'tool', m = 0.001 kg
 * against K = 1e+09 N/m"; name the body's name (NULL: "body <i>"). */
void kl_world_work_text(const kl_world_work *w, const char *name, char *buf, int cap);

/* Mechanical energy: kinetic + gravity potential + elastic energy in the active contacts [J]. */
double kl_world_energy(const kl_world_model *m, const kl_world_data *d);

/* Sum of the normal forces of the active contacts on body b, as a world vector [N]. */
void kl_world_contact_force(const kl_world_model *m, const kl_world_data *d, int b, double f[3]);

/* Body b's anchor frame at time t: position, velocity, acceleration [m, m/s, m/s^2], orientation
 * (w, x, y, z) and angular velocity (world) [rad/s]; any output may be NULL. For a body without a
 * holder: its initial pose, at rest. */
void kl_world_anchor(const kl_world_model *m, int b, double t, double pos[3], double vel[3], double acc[3],
                     double quat[4], double angvel[3]);

/* The holder's force f and torque tau on body b (world) at time t in state d, and df/dt [N/s] along the
 * anchor's motion and the body's own velocity (the damper's part from the body's acceleration left
 * out); zero for a body without a holder. Any output may be NULL. */
void kl_world_holder(const kl_world_model *m, const kl_world_data *d, int b, double t, double f[3], double fdot[3],
                     double tau[3]);

/* The narrow phase at the current state, for body b: the deepest contact feature of b against every
 * other body (penetration [m], > 0 inside; unit normal pushing b out; contact point), whether or not
 * it is an active contact. Returns the number of features of b within margin (>= 0). */
int kl_world_probe(const kl_world_model *m, kl_world_data *d, int b, double margin, double *depth, double n[3],
                   double pos[3]);

#endif
