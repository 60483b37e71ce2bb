/* engine/robot.h: a serial arm of revolute joints and its effective inertia along a grinding path
 * (docs/design.md section 6; the paper's "effective inertia ... through pose transformation", Zhou et al. 2024
 * section 2, with the ESTUN ER10-900 of its section 4.3).
 *
 * Kinematics: each body i hangs from its parent through a fixed placement and a rotation about a
 * joint axis, B_i = B_{i-1} P_i Rot(axis_i, q_i); standard DH, modified DH and URDF descriptions are
 * all turned into this one form when the model is created. Dynamics: the joint-space inertia M(q) by
 * the composite rigid body algorithm (Featherstone, Rigid Body Dynamics Algorithms, 2008, section
 * 6.2) and inverse dynamics by recursive Newton-Euler (Luh, Walker and Paul 1980), written
 * independently so each checks the other. The effective mass of the tool point along a unit
 * direction n is m_eff = 1 / (n^T J_v M^-1 J_v^T n) (Khatib 1987, the operational-space inertia seen
 * by a point force); joint stiffness K_q gives the Cartesian stiffness k_n = 1 / (n^T J_v K_q^-1 J_v^T n).
 *
 * Model / data: a kl_robot is created once and is read-only afterwards (every function takes it const
 * except kl_robot_set_base); no function here allocates after creation, prints or exits. Angles in
 * radians, lengths in metres, SI throughout. Matrices are row-major. */
#ifndef KL_ENGINE_ROBOT_H
#define KL_ENGINE_ROBOT_H

#include "kelvin/kelvin.h"

#define KL_ROBOT_MAXDOF 12

/* how kl_robot_joint_spec describes the placement of a joint */
typedef enum kl_robot_conv {
  KL_ROBOT_DH = 0,   /* standard Denavit-Hartenberg: frame i at the end of link i, T = Rz(th) Tz(d) Tx(a) Rx(al) */
  KL_ROBOT_MDH = 1,  /* modified (Craig) DH: frame i on joint i, T = Rx(al_{i-1}) Tx(a_{i-1}) Rz(th_i) Tz(d_i) */
  KL_ROBOT_URDF = 2  /* URDF joint: origin xyz + rpy in the parent link frame, axis in the joint frame */
} kl_robot_conv;

/* One revolute joint and the link it moves. */
typedef struct kl_robot_joint_spec {
  char name[32];
  /* KL_ROBOT_DH, KL_ROBOT_MDH: the joint's row (MDH rows hold a_{i-1}, alpha_{i-1}, d_i, theta_i as in
   * Craig's table); the joint angle is theta = q + theta */
  double a, alpha, d, theta;  /* [m], [rad], [m], [rad] */
  /* KL_ROBOT_URDF */
  double xyz[3], rpy[3];      /* joint origin in the parent link frame [m], roll-pitch-yaw [rad] */
  double axis[3];             /* joint axis in the joint frame (normalised on creation) */
  double lo, hi;              /* position limits [rad], lo < hi; -INFINITY/+INFINITY: unlimited */
  double vmax;                /* speed limit [rad/s] > 0 */
  double stiffness;           /* joint stiffness [N m/rad] > 0, or 0: rigid (not given) */
  double mass;                /* link mass [kg] > 0 */
  double com[3];              /* centre of mass in the link frame [m] (DH: frame i, MDH: frame i, URDF: link) */
  double inertia[6];          /* inertia about the centre of mass, link axes: xx yy zz xy xz yz [kg m^2] */
} kl_robot_joint_spec;

/* A whole arm as a description; kl_robot_create turns it into a kl_robot. */
typedef struct kl_robot_spec {
  char name[64];
  kl_robot_conv conv;
  int ndof;                                 /* 1..KL_ROBOT_MAXDOF */
  kl_robot_joint_spec joint[KL_ROBOT_MAXDOF];
  double base_pos[3], base_rpy[3];          /* base frame in the world [m], [rad] */
  double tool_xyz[3], tool_rpy[3];          /* TCP frame in the last link frame (the flange) [m], [rad] */
  double tool_mass;                         /* rigid tool on the flange [kg] >= 0 (0: none) */
  double tool_com[3], tool_inertia[6];      /* its centre of mass and inertia about it, flange axes */
  int has_home;                             /* 1: home[] is the reference pose for the first IK branch */
  double home[KL_ROBOT_MAXDOF];             /* [rad]; default: 0 clamped into the limits */
} kl_robot_spec;

/* A created arm. Fields are readable; only base_pos/base_rpy may be changed (kl_robot_set_base). */
typedef struct kl_robot {
  char name[64];
  int ndof;                                 /* number of revolute joints */
  char jnt_name[KL_ROBOT_MAXDOF][32];       /* joint names ("" if none) */
  double base_pos[3];                       /* robot base origin in the world [m] */
  double base_rpy[3];                       /* robot base orientation, roll-pitch-yaw [rad] */
  double jnt_R[KL_ROBOT_MAXDOF][9];         /* placement P_i: rotation, joint frame -> parent body frame */
  double jnt_p[KL_ROBOT_MAXDOF][3];         /* placement P_i: joint origin in the parent body frame [m] */
  double jnt_axis[KL_ROBOT_MAXDOF][3];      /* unit axis in the joint frame (= body frame) */
  double jnt_range[KL_ROBOT_MAXDOF][2];     /* position limits [rad] (ndof x 2) */
  double jnt_vmax[KL_ROBOT_MAXDOF];         /* speed limits [rad/s] */
  double jnt_stiffness[KL_ROBOT_MAXDOF];    /* [N m/rad]; 0: rigid */
  double body_mass[KL_ROBOT_MAXDOF];        /* [kg]; the tool is merged into the last body */
  double body_com[KL_ROBOT_MAXDOF][3];      /* centre of mass in the body frame [m] */
  double body_inertia[KL_ROBOT_MAXDOF][9];  /* inertia about the centre of mass, body axes [kg m^2] */
  double tool_R[9], tool_p[3];              /* TCP frame in the last body frame */
  double q_home[KL_ROBOT_MAXDOF];           /* reference pose for the first path sample [rad] */
  /* derived on creation: zero-configuration screws in the base frame for the closed-form IK */
  int ik_closed;                            /* 1: six joints, axes 2 || 3, spherical wrist 4-5-6 */
  double sw_w[6][3], sw_r[6][3];            /* axis directions and points at q = 0 */
  double sw_pw[3];                          /* wrist centre at q = 0 [m] */
  double sw_R0[9], sw_p0[3];                /* TCP pose at q = 0 */
} kl_robot;

/* IK methods for kl_robot_ik */
#define KL_IK_AUTO 0 /* closed form where r->ik_closed, else damped least squares */
#define KL_IK_DLS 1  /* damped least squares from qref, always */

/* IK convergence tolerances: the pose error a solution must reach */
#define KL_IK_TOL_POS 1e-9 /* [m] */
#define KL_IK_TOL_ROT 1e-9 /* [rad] */

/* What kl_robot_ik found. */
typedef struct kl_robot_ikres {
  double err_pos;  /* |p_target - p(q)| [m] */
  double err_rot;  /* rotation angle of R_target R(q)^T [rad] */
  double margin;   /* smallest joint-limit margin [rad]; < 0: outside a limit */
  int converged;   /* err_pos <= KL_IK_TOL_POS and err_rot <= KL_IK_TOL_ROT */
  int worst;       /* joint (0-based) with the smallest margin */
  int closed_form; /* 1: the spherical-wrist closed form gave the branch */
  int nbranch;     /* closed form: number of exact branches found (up to 8) */
  int why;         /* KL_IK_WHY_*: why not converged (closed form), else 0 */
  double why_val;  /* a number that goes with why (a distance [m]) */
} kl_robot_ikres;

#define KL_IK_WHY_NONE 0
#define KL_IK_WHY_NEAR_AXIS1 1 /* the wrist centre is too close to axis 1 (shoulder offset) */
#define KL_IK_WHY_REACH 2      /* the wrist centre is out of reach of the upper arm and forearm */
#define KL_IK_WHY_ITER 3       /* damped least squares stopped without converging */

/* ---- model ---------------------------------------------------------------------------------- */

/* Validate s and build a robot. *out = NULL on failure; msg (capacity cap, may be NULL) then names the
 * joint and field, e.g. "joint 3 (j3): mass: must be > 0 kg, got -1". Returns KELVIN_OK,
 * KELVIN_ERR_ARG or KELVIN_ERR_NOMEM. Free with kl_robot_free. */
kelvin_status kl_robot_create(const kl_robot_spec *s, kl_robot **out, char *msg, int cap);

/* The illustrative arm of the ESTUN ER10-900's size (about 0.9 m reach, 10 kg payload class, spherical
 * wrist, a 2.5 kg spindle); NOT manufacturer data. examples/robot_er10.yaml and .urdf describe the same
 * arm. */
kelvin_status kl_robot_builtin_er10(kl_robot **out);

/* Its description (what kl_robot_builtin_er10 creates). */
void kl_robot_er10_spec(kl_robot_spec *s);

/* NULL is a no-op. */
void kl_robot_free(kl_robot *r);

/* Set the base pose in the world; KELVIN_ERR_ARG unless all six numbers are finite. */
kelvin_status kl_robot_set_base(kl_robot *r, const double pos[3], const double rpy[3]);

/* Field checks shared by the file readers, so a message says the same thing whichever file it came
 * from. Each returns KELVIN_OK or KELVIN_ERR_CONFIG with a message without location ("must be > 0 kg,
 * got -1"); the reader prefixes file, line and field. */
kelvin_status kl_robot_check_mass(double m, int allow_zero, char *msg, int cap);
/* I6 = xx yy zz xy xz yz about the centre of mass: finite, positive definite, triangle inequality. */
kelvin_status kl_robot_check_inertia(const double I6[6], char *msg, int cap);

/* ---- kinematics and dynamics at one pose (q: ndof joint angles) ------------------------------- */

/* TCP pose in the world: R (3x3, columns = tool x, y, z axes) and p [m]. */
void kl_robot_fk(const kl_robot *r, const double *q, double R[9], double p[3]);

/* Geometric Jacobian at the TCP in world axes, J (6 x ndof): rows 0-2 linear velocity of the TCP
 * [m/rad], rows 3-5 angular velocity [1]. */
void kl_robot_jacobian(const kl_robot *r, const double *q, double *J);

/* Joint-space inertia M(q) (ndof x ndof, symmetric) by the composite rigid body algorithm. */
void kl_robot_inertia(const kl_robot *r, const double *q, double *M);

/* Inverse dynamics by recursive Newton-Euler: tau = M(q) qdd + c(q, qd) - g-term - J^T f_tcp, where
 * grav (world, m/s^2, e.g. {0, 0, -9.81}) and f_tcp (world force applied by the environment at the TCP,
 * N) may be NULL for zero. qd, qdd may be NULL for zero. */
void kl_robot_rnea(const kl_robot *r, const double *q, const double *qd, const double *qdd, const double grav[3],
                   const double f_tcp[3], double *tau);

/* TCP linear velocity v[0..2] and angular velocity v[3..5] in the world for joint rates qd, by
 * propagating velocities along the chain (no Jacobian). */
void kl_robot_tcp_velocity(const kl_robot *r, const double *q, const double *qd, double v[6]);

/* Effective mass along the unit world direction n at the TCP, m_eff = 1/(n^T J_v M^-1 J_v^T n) [kg]
 * (INFINITY where the arm cannot move the TCP along n), and, if kn is not NULL, the stiffness along n
 * from the joint stiffnesses, k_n = 1/(n^T J_v K_q^-1 J_v^T n) [N/m] (INFINITY when no joint is
 * compliant or none moves the TCP along n). KELVIN_ERR_NUMERIC if M(q) is not positive definite. */
kelvin_status kl_robot_effective_mass(const kl_robot *r, const double *q, const double n[3], double *meff, double *kn);

/* Inverse kinematics for the TCP pose (R, p) in the world. Closed form for the spherical wrist when
 * r->ik_closed and method is KL_IK_AUTO: every branch (up to 8) is computed and polished by Newton
 * steps; the one within the limits closest to qref is returned (closest overall if none is within
 * them). Otherwise damped least squares (Levenberg-Marquardt) starting from qref. qref may be NULL
 * (r->q_home). Joint angles are shifted by whole turns towards qref where the limits allow. q (ndof)
 * is always written; res may be NULL. Returns 1 if converged and within the limits, else 0. */
int kl_robot_ik(const kl_robot *r, const double R[9], const double p[3], const double *qref, int method, double *q,
                kl_robot_ikres *res);

/* x = J^+ e for the 6 x n Jacobian J by SVD, damped by lambda > 0 (Levenberg-Marquardt step) or, with
 * lambda = 0, the pseudo-inverse dropping singular values below 1e-12 s_max. Returns |J x - e|.
 * Shared by engine/robot*.c; J and e must be finite. */
double kl_robot_lsq(const double *J, int n, const double e[6], double lambda, double *x);

/* ---- along a path ----------------------------------------------------------------------------- */

/* For each path sample k: the tool pose has its TCP at pos[k] (ns x 3, world frame, m), tool z-axis
 * along -nrm[k] (pointing into the surface; nrm = outward unit surface normal), tool x-axis along
 * tan[k] (unit path tangent, made orthogonal to nrm). The robot base pose in the world is part of
 * kl_robot (base_pos[3], base_rpy[3]). Outputs (ns each): meff[k] effective mass along nrm[k] [kg];
 * vmax[k] the largest feed speed along tan[k] keeping every joint within its speed limit at that pose,
 * including the rotation of the tool frame along the path (finite differences of the sample frames
 * over arc length) [m/s]; reach[k] 1 if IK converged within 1e-9 m / 1e-9 rad and joint limits hold,
 * else 0; margin[k] the smallest joint-limit margin [rad]; q (ns x ndof) the joint solution chosen
 * (branch closest to the previous sample; the first sample's closest to r->q_home). Where IK did not
 * converge meff and vmax are NaN; where it converged outside a limit they are evaluated at that q.
 * Returns KELVIN_OK, or KELVIN_ERR_ARG with msg naming the first unreachable sample index and why
 * (outputs still filled for every sample). */
kelvin_status kl_robot_path(const kl_robot *r, int ns, const double *pos, const double *nrm, const double *tan,
                            double *meff, double *vmax, int *reach, double *margin, double *q, char *msg, int cap);

/* Same, choosing the IK method (KL_IK_AUTO or KL_IK_DLS). */
kelvin_status kl_robot_path_ik(const kl_robot *r, int method, int ns, const double *pos, const double *nrm,
                               const double *tan, double *meff, double *vmax, int *reach, double *margin, double *q,
                               char *msg, int cap);

/* Stiffness along nrm[k] at the poses q (ns x ndof) from kl_robot_path: kn[k] [N/m] (INFINITY where
 * the arm is rigid along nrm[k]; NaN where q[k] holds a NaN). */
void kl_robot_path_stiffness(const kl_robot *r, int ns, const double *q, const double *nrm, double *kn);

/* The built-in demonstration path (world frame, robot base at the origin): 200 mm straight in plan
 * along +x, from x = 0.45 m to 0.65 m at y = 0, over a cylindrical panel of radius 0.4 m (axis along y)
 * whose crest, at x = 0.55 m, is 0.25 m above the base; normals outward (up at the crest). ns >= 2
 * samples equally spaced in x; pos and nrm are ns x 3. */
void kl_robot_demo_path(int ns, double *pos, double *nrm);

/* Unit tangents (ns x 3) of a sampled path by finite differences (central inside, one-sided at the
 * ends). Returns -1 - k if sample k repeats its predecessor (no direction), else 0. */
int kl_robot_path_tangents(int ns, const double *pos, double *tan);

#endif
