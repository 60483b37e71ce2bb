/* benchmarks/grind_twin.h: a CPU twin of the 1-D grinding model over the mesh (docs/design.md section 5),
 * benchmarks/grind_cost's own code, outside libkelvin: the same one degree of freedom, holder and contact
 * law as the device rollout, with the closest-point depth
 * taken from the mesh as it goes. It is not the pipeline's verification (that is the 3-D engine,
 * optimiser/verify3d.h); benchmarks/grind_cost times it.
 * A ball-end tool (a rigid sphere of radius R) on a compliant holder follows a path over the *actual*
 * workpiece mesh. The tool centre is c = p(s) + (R - z) n(s): p, n the nominal contact point and unit
 * outward normal at arc length s, z the tool depth along -n relative to touching the nominal surface.
 * The holder (robot position control or compliant spindle) pulls z towards the commanded depth
 * u = offset(s): F_h = K_h (u - z) + D_h (du/dt - dz/dt). The contact with the actual mesh (libccd /
 * exact sphere-triangle) gives depth d and normal n_c; its force F_N (section 2 model, `force`
 * separation: no tension) acts along n_c, and its component along the tool axis enters
 *   m(s) z'' = F_h - F_N (n_c . n) + F_g(s),   ds/dt = v(s).
 * Contact onset and loss are located inside sub-steps; sub-steps are controlled to a force tolerance.
 * Between samples p(s) is the cubic Hermite curve through p_k, p_{k+1} with the unit tangents tan_k,
 * tan_{k+1} (the chord where the tangents are not unit or point against it), n(s) the normalised linear
 * interpolation of the normals, and offset, speed, meff, fg are linear in s (benchmarks/grind_twin.c).
 * Outputs per path sample k: the instantaneous force F_N at the sample, the step-averaged force over
 * the interval from the previous sample (what a force sensor reports), z, d, contact flag, time. */
#ifndef KL_BENCHMARKS_GRIND_TWIN_H
#define KL_BENCHMARKS_GRIND_TWIN_H

#include "engine/mesh.h"
#include "kelvin/kelvin.h"

typedef struct kl_grind_scene {
  const kl_mesh *actual; /* the workpiece as it is (not owned) */
  int ns;                /* path samples >= 2 */
  const double *s;       /* arc length (ns) [m], increasing */
  const double *p;       /* nominal contact points (ns x 3) [m] */
  const double *nrm;     /* unit outward nominal normals (ns x 3) */
  const double *tan;     /* unit tangents (ns x 3) */
  const double *meff;    /* effective mass along n at each sample (ns) [kg] > 0 */
  const double *fg;      /* tool weight component pushing into the surface, along -n (ns) [N] */
  double tool_R;         /* ball-end radius [m] */
  double holder_K;       /* holder stiffness along the tool axis [N/m] > 0 */
  double holder_D;       /* holder damping [N s/m] >= 0 */
  int model;             /* KL_MODEL_KV or KL_MODEL_HC (kernels/kl_impact.h) */
  double K;              /* contact stiffness [N/m^n] */
  double n;              /* exponent (1 for KV) */
  double D;              /* KV damping [N s/m] */
  double chi;            /* HC damping factor [s/m] */
  double ftol;           /* relative force tolerance of the sub-step control; 0 means the default 1e-3 */
} kl_grind_scene;

/* One pass: offset (ns) [m] and speed (ns) [m/s] per sample, linear in s between samples. */
typedef struct kl_grind_result {
  double *force;   /* instantaneous contact force at each sample (ns) [N] */
  double *favg;    /* step-averaged force over [s_{k-1}, s_k] (ns; favg[0] = force[0]) [N] */
  double *time;    /* time at each sample (ns) [s], time[0] = 0 */
  double *z;       /* tool depth (ns) [m] */
  double *depth;   /* contact penetration (ns) [m], 0 out of contact */
  int *contact;    /* 1 in contact at the sample (ns) */
  long nsub;       /* internal sub-steps */
  long nevents;    /* contact onsets + losses located */
} kl_grind_result;

/* Simulate one pass. The start state is the holder's static equilibrium at s[0] (found first).
 * Returns KELVIN_OK, KELVIN_ERR_ARG (msg names the field) or KELVIN_ERR_NUMERIC. */
kelvin_status kl_grind_run(const kl_grind_scene *g, const double *offset, const double *speed, kl_grind_result *out,
                           char *msg, int cap);

/* Several passes at once, OpenMP across passes: offsets and speeds (npass x ns), each out[i] with its
 * arrays allocated by the caller. Returns the first failure's status (msg from that pass). */
kelvin_status kl_grind_run_many(const kl_grind_scene *g, int npass, const double *offsets, const double *speeds,
                                kl_grind_result *out, char *msg, int cap);

#endif
