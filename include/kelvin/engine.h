/* kelvin/engine.h: the variable-time-step 3-D engine (docs/design.md section 3; paper section 2,
 * Algorithm 1): rigid bodies with spheres, boxes, capsules, cylinders, convex hulls, planes and static
 * triangle meshes; every contact a compliant Kelvin-Voigt or Hunt-Crossley contact advanced in closed
 * form over each sub-step; contact onset and end located inside steps, so the output period is only
 * where states are reported.
 *
 * Model and data, as in MuJoCo: a kelvin_world is built (create, add bodies, shapes and meshes, compile)
 * and is read-only afterwards; a kelvin_world_data holds one simulation of it (state, active contacts,
 * finished-contact events) in one allocation. Any number of data objects may share one compiled world,
 * each used by one thread at a time (the world is only read while simulating).
 *
 * Frames: world z up (gravity -9.81 m/s^2 along z by default); orientations are unit quaternions
 * (w, x, y, z); body poses are of the centre of mass; shape poses are in their body's frame. SI units. */
#ifndef KELVIN_ENGINE_H
#define KELVIN_ENGINE_H

#include <stddef.h>

#include <kelvin/contact.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kelvin_world kelvin_world;           /* the model: built once, then read-only */
typedef struct kelvin_world_data kelvin_world_data; /* one simulation of a compiled world */

typedef enum kelvin_body_type {
  KELVIN_BODY_DYNAMIC = 0,  /* moves under gravity, contacts and its holder */
  KELVIN_BODY_STATIC = 1,   /* never moves; infinite mass */
  KELVIN_BODY_KINEMATIC = 2 /* moves with its initial velocity and angular velocity, whatever touches it */
} kelvin_body_type;

/* A body; kelvin_body_init fills the defaults. */
typedef struct kelvin_body {
  kelvin_body_type type;
  double mass;          /* [kg] > 0 for dynamic bodies */
  double inertia[3];    /* principal moments about the centre of mass, body frame [kg m^2]; all 0: from
                           the shapes at uniform density when the world is compiled */
  double pos[3];        /* initial position of the centre of mass [m] */
  double quat[4];       /* initial orientation (w, x, y, z); normalised when compiled */
  double vel[3];        /* initial velocity [m/s] */
  double angvel[3];     /* initial angular velocity, world frame [rad/s] */
  double K;             /* contact stiffness [N/m^n] > 0 (per contact point) */
  double cr;            /* coefficient of restitution in (0, 1] */
  double D;             /* Kelvin-Voigt damping [N s/m]; 0: from cr by paper eq. (10) per contact */
  double mu;            /* friction coefficient >= 0 (regularised Coulomb) */
  int holder;           /* 1: held by a spring-damper per world axis to an anchor moving at constant speed */
  double anchor[3];     /* anchor position at t = 0 [m] */
  double anchor_vel[3]; /* [m/s] */
  double holder_K[3];   /* [N/m] >= 0 */
  double holder_D[3];   /* [N s/m] >= 0 */
} kelvin_body;

typedef enum kelvin_shape_type {
  KELVIN_SHAPE_SPHERE = 0,   /* size: radius */
  KELVIN_SHAPE_BOX = 1,      /* size: half extents x, y, z */
  KELVIN_SHAPE_CAPSULE = 2,  /* size: radius, half length of the axis (local z) */
  KELVIN_SHAPE_CYLINDER = 3, /* size: radius, half length (local z) */
  KELVIN_SHAPE_HULL = 4,     /* the convex hull of hull (nhull x 3) */
  KELVIN_SHAPE_PLANE = 5,    /* static half-space below the local xy plane (normal: local z) */
  KELVIN_SHAPE_MESH = 6      /* static triangle mesh: mesh = an index from kelvin_world_add_mesh */
} kelvin_shape_type;

/* A shape on a body; kelvin_shape_init fills the defaults. */
typedef struct kelvin_shape {
  kelvin_shape_type type;
  double size[3];      /* see the type [m] */
  double pos[3];       /* position in the body frame [m] */
  double quat[4];      /* orientation in the body frame (w, x, y, z) */
  double pad;          /* padding (a boundary layer that counts as penetration) [m] >= 0 */
  int mesh;            /* KELVIN_SHAPE_MESH: the mesh's index */
  const double *hull;  /* KELVIN_SHAPE_HULL: vertices (nhull x 3) [m], copied */
  int nhull;
} kelvin_shape;

/* A dynamic body of 1 kg at the origin, identity orientation, K = 1e6 N/m, cr = 1, D from cr, mu = 0. */
KELVIN_API void kelvin_body_init(kelvin_body *b);

/* A sphere of radius 0.1 m at the body's origin. */
KELVIN_API void kelvin_shape_init(kelvin_shape *s);

/* ---------------------------------------------------------------------------------------------------
 * Building a world */

/* An empty world: Kelvin-Voigt contacts, penetration rule, gravity (0, 0, -9.81). *out = NULL and
 * KELVIN_ERR_NOMEM on failure. */
KELVIN_API kelvin_status kelvin_world_create(kelvin_world **out);

/* NULL is a no-op; frees the meshes added to it. Free the data objects first. */
KELVIN_API void kelvin_world_free(kelvin_world *w);

/* The last error message; "" if none; never NULL. */
KELVIN_API const char *kelvin_world_errmsg(const kelvin_world *w);

/* The contact model of every contact: Kelvin-Voigt (n must be 1) or Hunt-Crossley with exponent n in
 * [1, 3] (1.5: Hertz) and damping law, and the end-of-contact rule (Kelvin-Voigt). Before compiling. */
KELVIN_API kelvin_status kelvin_world_set_contact(kelvin_world *w, kelvin_model model, kelvin_law law, double n,
                                                  kelvin_rule rule);

/* Gravity [m/s^2]. Before compiling. */
KELVIN_API kelvin_status kelvin_world_set_gravity(kelvin_world *w, const double g[3]);

/* An option of the engine by name, before compiling:
 *   "friction_vreg"     regularisation velocity of friction [m/s] (1e-3)
 *   "substep_fraction"  coupled sub-step as a fraction of the shortest contact period (0.05)
 *   "onset_tol"         penetration at which an onset inside a step is located [m] (1e-12)
 *   "hc_tol"            Hunt-Crossley sub-step error tolerance, relative (1e-8)
 *   "contact_capacity"  active contacts a data object holds (64; more are counted as overflow)
 *   "event_capacity"    finished contacts a data object logs (4096)
 *   "force_limit"       a contact force beyond it [N] stops kelvin_world_advance with KELVIN_ERR_DIVERGED (none)
 * KELVIN_ERR_ARG for an unknown name or a value <= 0. */
KELVIN_API kelvin_status kelvin_world_set(kelvin_world *w, const char *option, double value);

/* Add a body; its index (0, 1, ...) into *id (nullable). */
KELVIN_API kelvin_status kelvin_world_add_body(kelvin_world *w, const kelvin_body *b, int *id);

/* Add a shape to body; its index into *id (nullable). */
KELVIN_API kelvin_status kelvin_world_add_shape(kelvin_world *w, int body, const kelvin_shape *s, int *id);

/* Add a static triangle mesh from arrays (copied): vert (nvert x 3) [m], tri (ntri x 3) vertex indices,
 * counter-clockwise seen from outside; its index into *id for kelvin_shape.mesh. KELVIN_ERR_ARG for
 * empty, non-finite or degenerate data (the message names the triangle). */
KELVIN_API kelvin_status kelvin_world_add_mesh(kelvin_world *w, const double *vert, int nvert, const int *tri,
                                               int ntri, int *id);

/* Contact parameters of a pair of bodies, instead of blending theirs (restitution by arithmetic mean,
 * stiffness, damping and friction by harmonic mean). */
KELVIN_API kelvin_status kelvin_world_add_pair(kelvin_world *w, int body_a, int body_b, double K, double cr, double D,
                                               double mu);

/* The general law F = k d^n1 + c sgn(d')|d'|^m d^n2, clamped at 0 (KELVIN_MODEL_GEN), before compiling:
 * pair -1 makes it the model of every contact with these constants (the bodies' stiffness and restitution
 * are then unused; a contact ends at d = 0); pair p >= 0 gives the p-th pair added (kelvin_world_add_pair,
 * numbered from 0 in the order added) its own constants. k > 0, c >= 0, n1 in (0, 5], n2 in [0, 5],
 * m in (0, 5]: KELVIN_ERR_ARG naming the constant otherwise. */
KELVIN_API kelvin_status kelvin_world_set_general(kelvin_world *w, int pair, double k, double c, double n1, double n2,
                                                  double m);

/* Validate and finish the world; it is read-only afterwards. KELVIN_ERR_ARG with a message naming the
 * body or shape and the field. */
KELVIN_API kelvin_status kelvin_world_compile(kelvin_world *w);

/* Bodies in the world. */
KELVIN_API int kelvin_world_nbody(const kelvin_world *w);

/* ---------------------------------------------------------------------------------------------------
 * Simulating */

/* A data object for compiled world w, at the initial state (t = 0). It keeps a reference to w: w must
 * outlive it. *out = NULL on failure (KELVIN_ERR_ARG: w not compiled; KELVIN_ERR_NOMEM). */
KELVIN_API kelvin_status kelvin_world_data_create(const kelvin_world *w, kelvin_world_data **out);

/* NULL is a no-op. */
KELVIN_API void kelvin_world_data_free(kelvin_world_data *d);

/* The last error message of d; "" if none; never NULL. */
KELVIN_API const char *kelvin_world_data_errmsg(const kelvin_world_data *d);

/* Back to the initial state: t = 0, no contacts, empty event log. */
KELVIN_API void kelvin_world_reset(kelvin_world_data *d);

/* Advance to time t >= the current time [s], exactly (sub-steps are chosen inside). KELVIN_ERR_DIVERGED
 * (message on d) when the state or a contact force went non-finite or beyond "force_limit";
 * KELVIN_ERR_NUMERIC when the sub-steps ran away; KELVIN_ERR_LIMIT beyond the work limit (kelvin_world_plan);
 * KELVIN_ERR_ARG for t in the past. */
KELVIN_API kelvin_status kelvin_world_advance(kelvin_world_data *d, double t);

/* Bounded work (docs/design.md section 8, "Bounded physics"): the sub-steps a run may be estimated
 * to take, by default (about a minute or two of a simple scene at the measured rates). */
#define KELVIN_WORK_LIMIT 1e7

/* Estimate the work of advancing d by duration [s] with an output every output_step [s] (0: one at the end)
 * before doing it: the engine's sub-step from the stiffest time scale (a holder's stiffness against its
 * body's mass; a contact's stiffness against the lightest effective mass, inertia included, as if in
 * contact the whole run) and the sub-steps it implies, into *estimate (nullable). KELVIN_ERR_LIMIT beyond
 * max_substeps (<= 0: KELVIN_WORK_LIMIT), with a message giving the estimate, the limit and the body and
 * parameter that drive it; KELVIN_ERR_ARG for a negative or non-finite duration or output_step. The limit
 * is kept for d: every later kelvin_world_advance is refused (KELVIN_ERR_LIMIT, nothing done) when the
 * sub-steps taken since the start (or the last reset) plus its own estimate exceed it. Without this call
 * the limit is KELVIN_WORK_LIMIT. kelvin_world_advance returns KELVIN_ERR_DIVERGED when the state or a
 * contact force went non-finite, or a contact force went beyond the option "force_limit" (none by
 * default); its message gives the time, the force and the stiffest time scale. */
KELVIN_API kelvin_status kelvin_world_plan(kelvin_world_data *d, double duration, double output_step,
                                           double max_substeps, double *estimate);

/* Current time [s]. */
KELVIN_API double kelvin_world_time(const kelvin_world_data *d);

/* State of a body: centre of mass [m], orientation (w, x, y, z), velocity [m/s], angular velocity
 * (world frame) [rad/s]; each output nullable. KELVIN_ERR_ARG for a bad index. */
KELVIN_API kelvin_status kelvin_world_body_state(const kelvin_world_data *d, int body, double pos[3], double quat[4],
                                                 double vel[3], double angvel[3]);

/* An active contact. The force +force * normal acts on body[0], the opposite on body[1]. */
typedef struct kelvin_contact {
  int body[2];
  double pos[3];    /* contact point, world [m] */
  double normal[3]; /* unit, from body[1] towards body[0] */
  double depth;     /* penetration [m] (padding included) */
  double rate;      /* penetration rate [m/s] */
  double force;     /* normal force [N] */
  int shape[2];     /* the shapes of body[0] and body[1] (indices in the world, in the order added) */
  int feature;      /* the feature of the pair in contact (a vertex index, ...; 0 for a single contact) */
  double force_avg; /* normal force averaged over the last sub-step [N] */
  double friction[3]; /* friction force on body[0] averaged over the last sub-step, world [N] */
  double fpeak;     /* peak normal force since the onset [N] */
} kelvin_contact;

/* A finished contact, from onset to end. */
typedef struct kelvin_contact_event {
  int body[2];
  double t0, t1;      /* onset and end [s] */
  double v_in, v_out; /* approach speed at onset, separation speed at the end [m/s] */
  double dmax, fpeak; /* maximum penetration [m] and peak normal force [N] */
  int shape[2];       /* the shapes of body[0] and body[1] */
} kelvin_contact_event;

/* Active contacts now, and contact i of them. */
KELVIN_API int kelvin_world_ncontact(const kelvin_world_data *d);
KELVIN_API kelvin_status kelvin_world_contact(const kelvin_world_data *d, int i, kelvin_contact *c);

/* Finished contacts logged so far (at most event_capacity; kelvin_world_event_overflow counts the rest),
 * and event i of them, oldest first. */
KELVIN_API int kelvin_world_nevent(const kelvin_world_data *d);
KELVIN_API long kelvin_world_event_overflow(const kelvin_world_data *d);
KELVIN_API kelvin_status kelvin_world_event(const kelvin_world_data *d, int i, kelvin_contact_event *e);

/* Sum of the normal contact forces on body, as a world vector [N]. */
KELVIN_API kelvin_status kelvin_world_force(const kelvin_world_data *d, int body, double f[3]);

/* Mechanical energy: kinetic + gravity potential + elastic energy in the active contacts [J]. */
KELVIN_API double kelvin_world_energy(const kelvin_world_data *d);

/* Sub-steps taken since the start (or the last reset). */
KELVIN_API long kelvin_world_substeps(const kelvin_world_data *d);

/* What the engine counted since the start (or the last reset). */
typedef struct kelvin_world_counts {
  long substeps;         /* sub-steps taken */
  long onsets, ends;     /* contact onsets and ends located inside steps */
  long contact_overflow; /* contacts that did not fit in contact_capacity (each sub-step counts) */
  long event_overflow;   /* finished contacts that did not fit in the event log */
} kelvin_world_counts;

KELVIN_API kelvin_status kelvin_world_get_counts(const kelvin_world_data *d, kelvin_world_counts *c);

/* Progress and stop of kelvin_world_advance: fn (NULL: none) is called between sub-steps, at the first
 * checkpoint (every 256 sub-steps) after it is set and then at most about five times a second of wall
 * time, with the fraction of the current advance call done and a line such as "t = 0.53 s, 120000
 * sub-steps"; it may read d (kelvin_world_time, kelvin_world_get_counts, ...) but not change it. Nonzero
 * stops the advance: it returns KELVIN_ERR_STOPPED with the state that of the last completed sub-step
 * (kelvin_world_time(d) < t), and a later kelvin_world_advance goes on from there exactly as if it had
 * not stopped. */
KELVIN_API kelvin_status kelvin_world_set_progress(kelvin_world_data *d, kelvin_progress_fn fn, void *ctx);

/* ---------------------------------------------------------------------------------------------------
 * Scenes (YAML), names and settings */

/* Load a scene file into w, which must be empty (just created), and compile it: duration, output_step,
 * gravity, contact, bodies (with shapes, materials, holders; mesh files STL/OBJ/PLY relative to the
 * scene's folder) and pairs, as `kelvin simulate --help` and examples/ball_plane.yaml show; unknown keys
 * are errors. KELVIN_ERR_IO (the file cannot be read), KELVIN_ERR_CONFIG (anything wrong in it, meshes
 * included: one line naming the file, the line and the field, "scene.yaml:12: bodies[1].mass: must be >
 * 0 kg, got 0"), KELVIN_ERR_NOMEM; the message is on w, which stays empty. */
KELVIN_API kelvin_status kelvin_world_load(kelvin_world *w, const char *path);

/* The same from text in memory; name stands for the file in messages and as the folder of mesh files. */
KELVIN_API kelvin_status kelvin_world_load_mem(kelvin_world *w, const char *name, const char *text, size_t len);

/* The scene's simulated time and output period [s] (kelvin_world_load); 1 and 1e-3 for a world built by
 * calls. */
KELVIN_API double kelvin_world_duration(const kelvin_world *w);
KELVIN_API double kelvin_world_output_step(const kelvin_world *w);

/* Body i's name (the scene's, else "body<i>"); NULL for a bad index. Valid while w lives. */
KELVIN_API const char *kelvin_world_body_name(const kelvin_world *w, int body);

/* Body i's type; -1 for a bad index. */
KELVIN_API int kelvin_world_body_type(const kelvin_world *w, int body);

/* The value of an option of kelvin_world_set, before or after compiling. KELVIN_ERR_ARG for an unknown
 * name (*value = NaN). */
KELVIN_API kelvin_status kelvin_world_get(const kelvin_world *w, const char *option, double *value);

#ifdef __cplusplus
}
#endif
#endif
