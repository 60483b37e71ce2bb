/* kelvin/robot.h: a serial arm of revolute joints holding the tool, and what it does along a grinding
 * path (docs/design.md section 6): its effective mass along the surface normal, the feed-speed bound from
 * its joint speed limits, reachability and joint-limit margins, and its stiffness along the normal.
 *
 * Use: kelvin_robot_create -> kelvin_robot_load (a YAML file of DH or modified-DH parameters, the format
 * of examples/robot_er10.yaml, or a URDF) or kelvin_robot_builtin -> [kelvin_robot_set_base] ->
 * kelvin_robot_load_path / kelvin_robot_set_path / kelvin_robot_demo_path -> kelvin_robot_evaluate ->
 * kelvin_robot_series -> kelvin_robot_free. Poses at one configuration: kelvin_robot_fk, kelvin_robot_ik,
 * kelvin_robot_effective_mass. Angles in radians, lengths in metres, SI throughout; matrices row-major. */
#ifndef KELVIN_ROBOT_H
#define KELVIN_ROBOT_H

#include <kelvin/kelvin.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kelvin_robot kelvin_robot;

/* An empty handle (no arm yet). */
KELVIN_API kelvin_status kelvin_robot_create(kelvin_robot **out);
KELVIN_API void kelvin_robot_free(kelvin_robot *r);
/* The message of the last failed call on r ("" if none); never NULL. */
KELVIN_API const char *kelvin_robot_errmsg(const kelvin_robot *r);

/* Load an arm from a .yaml/.yml (DH or modified DH) or .urdf file, replacing the handle's arm (the path
 * stays; the results of kelvin_robot_evaluate go).
 * KELVIN_ERR_IO (cannot read), KELVIN_ERR_CONFIG (bad content; the message names file, line and field:
 * "robot.yaml:23: robot.joints[2].mass: must be > 0 kg, got -3") or KELVIN_ERR_NOMEM; the handle keeps
 * its arm on failure. */
KELVIN_API kelvin_status kelvin_robot_load(kelvin_robot *r, const char *path);

/* The built-in illustrative arm of the ESTUN ER10-900's size (0.9 m reach, 10 kg payload class,
 * spherical wrist, a 2.5 kg spindle; plausible numbers, not manufacturer data), as examples/robot_er10.yaml
 * describes it. */
KELVIN_API kelvin_status kelvin_robot_builtin(kelvin_robot *r);

/* The arm: its name, joint count (0 without an arm), moving mass (links and the tool on the flange) [kg],
 * whether it has joint stiffnesses (1: kelvin_robot_series gives KELVIN_ROBOT_KN) and the closed-form
 * inverse kinematics (1: six joints with a spherical wrist; 0: damped least squares). */
KELVIN_API const char *kelvin_robot_name(const kelvin_robot *r);
KELVIN_API int kelvin_robot_joints(const kelvin_robot *r);
KELVIN_API double kelvin_robot_mass(const kelvin_robot *r);
KELVIN_API int kelvin_robot_compliant(const kelvin_robot *r);
KELVIN_API int kelvin_robot_closed_ik(const kelvin_robot *r);

/* The base pose in the world: position [m] and roll-pitch-yaw [rad] (each nullable). set_base with rpy
 * NULL keeps the orientation; KELVIN_ERR_ARG unless every number is finite. Changing the base drops the
 * results of kelvin_robot_evaluate. */
KELVIN_API kelvin_status kelvin_robot_base(const kelvin_robot *r, double pos[3], double rpy[3]);
KELVIN_API kelvin_status kelvin_robot_set_base(kelvin_robot *r, const double pos[3], const double rpy[3]);

/* ---------------------------------------------------------------------------------------------------
 * At one configuration q (kelvin_robot_joints angles) */

/* The tool point's pose in the world: R (3 x 3, columns the tool's x, y, z axes) and p [m]. */
KELVIN_API kelvin_status kelvin_robot_fk(const kelvin_robot *r, const double *q, double R[9], double p[3]);

/* Inverse kinematics for the pose (R, p): the branch closest to qref (NULL: the arm's home pose) into q.
 * 1 if it converged (1e-9 m, 1e-9 rad) within the joint limits, 0 if not (q then holds the best found),
 * -1 for bad arguments. */
KELVIN_API int kelvin_robot_ik(const kelvin_robot *r, const double R[9], const double p[3], const double *qref,
                               double *q);

/* Effective mass of the tool point along the unit world direction n, 1/(n^T J_v M^-1 J_v^T n) [kg], and
 * its stiffness along n from the joint stiffnesses [N/m] (kn nullable; INFINITY where rigid along n). */
KELVIN_API kelvin_status kelvin_robot_effective_mass(const kelvin_robot *r, const double *q, const double n[3],
                                                     double *meff, double *kn);

/* ---------------------------------------------------------------------------------------------------
 * Along a path: the tool's z-axis into the surface (along -normal), its x-axis along the path */

/* Most samples a path may have. */
#define KELVIN_ROBOT_MAXSAMPLES 1000000

/* A path of n >= 2 points (n x 3) [m] and unit outward surface normals (n x 3) in the world (copied);
 * tangents by finite differences. KELVIN_ERR_ARG for bad arguments or a point that repeats its
 * predecessor ("sample 3 repeats the previous one"). */
KELVIN_API kelvin_status kelvin_robot_set_path(kelvin_robot *r, const double *points, const double *normals, int n);

/* A path CSV with a header line naming the columns x_m,y_m,z_m,nx,ny,nz (or x,y,z; other columns
 * ignored; '#' lines before the header skipped), normals of unit length within 1e-6. KELVIN_ERR_IO or
 * KELVIN_ERR_CONFIG with "FILE:LINE: column ...: ..." (also for a point that repeats its predecessor),
 * KELVIN_ERR_LIMIT beyond KELVIN_ROBOT_MAXSAMPLES. */
KELVIN_API kelvin_status kelvin_robot_load_path(kelvin_robot *r, const char *path);

/* The built-in demonstration path, n >= 2 samples: 200 mm straight in plan along +x, from x = 0.45 m to
 * 0.65 m at y = 0, over a cylindrical panel of radius 0.4 m (axis along y) whose crest, at x = 0.55 m, is
 * 0.25 m above the world origin; normals up at the crest. */
KELVIN_API kelvin_status kelvin_robot_demo_path(kelvin_robot *r, int n);

/* Samples of the path (0 without one). */
KELVIN_API int kelvin_robot_samples(const kelvin_robot *r);

/* Inverse kinematics at every sample (the branch closest to the previous sample; the first one's
 * closest to the home pose), then the effective mass, speed bound, margins and stiffness there.
 * KELVIN_OK; KELVIN_ERR_ARG when a sample is out of reach or outside a joint limit, with a message
 * naming the first ("sample 2 of 4 (at 2.5, 0, 0.2 m): ..."), the series still filled for every
 * sample; KELVIN_ERR_ARG without an arm or a path; KELVIN_ERR_NOMEM. */
KELVIN_API kelvin_status kelvin_robot_evaluate(kelvin_robot *r);

/* What kelvin_robot_series gives, per sample. */
typedef enum kelvin_robot_series_id {
  KELVIN_ROBOT_S = 0,   /* arc length from the first sample [m] (n) */
  KELVIN_ROBOT_POINTS,  /* points (n x 3) [m] */
  KELVIN_ROBOT_NORMALS, /* unit normals (n x 3) */
  KELVIN_ROBOT_MEFF,    /* effective mass along the normal [kg] (n; NaN where the IK did not converge) */
  KELVIN_ROBOT_VMAX,    /* feed-speed bound from the joint speed limits [m/s] (n; NaN likewise) */
  KELVIN_ROBOT_REACH,   /* 1 reachable within the joint limits, 0 not (n) */
  KELVIN_ROBOT_MARGIN,  /* smallest joint-limit margin [rad] (n; < 0 outside a limit) */
  KELVIN_ROBOT_KN,      /* stiffness along the normal [N/m] (n; INFINITY for a rigid arm; NaN where the IK failed) */
  KELVIN_ROBOT_Q,       /* joint angles (n x joints) [rad] */
  KELVIN_ROBOT_NSERIES
} kelvin_robot_series_id;

/* Series what into out (n, n x 3 or n x joints values). KELVIN_ERR_ARG for a bad id or before a path
 * (S, POINTS, NORMALS) or kelvin_robot_evaluate (the others). */
KELVIN_API kelvin_status kelvin_robot_series(const kelvin_robot *r, kelvin_robot_series_id what, double *out);

#ifdef __cplusplus
}
#endif
#endif
