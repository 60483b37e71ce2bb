/* engine/ball.h: the first slice of the variable-time-step engine (docs/design.md section 3): a sphere
 * falling under gravity onto a static plane, normal contact from the closed forms of kernels/.
 * The free flight is exact ballistic motion; the time of impact is located exactly (a quadratic);
 * a Kelvin-Voigt contact phase is advanced in closed form to its end in one sub-step (paper eq. 4);
 * a Hunt-Crossley (or Emden-Fowler) contact by the exponential step of kernels/kl_xrb.h (the
 * linearised system exact, the remainder as a polynomial force; order 5), with the sub-step controlled by
 * its error estimate. The user's output period is only where states are
 * reported: a nonlinear contact's sub-steps do not stop at output instants (the state there is the
 * sub-step's dense output), so the trajectory, the contact log and its extrema are the same for any
 * output period; separation, maximum penetration and peak force are located inside sub-steps.
 * Model/data split as in MuJoCo: kl_ball_model is immutable, kl_ball_data holds one rollout. */
#ifndef KL_ENGINE_BALL_H
#define KL_ENGINE_BALL_H

#include "kelvin/kelvin.h"
#include "kernels/kl_contact_kv.h"
#include "kernels/kl_contact_static.h"

/* Contact phase of the ball */
#define KL_BALL_FREE 0
#define KL_BALL_CONTACT 1

typedef struct kl_ball_model {
  double m;       /* mass [kg] > 0 */
  double R;       /* radius [m] > 0 (geometry of the Hertz stiffness; the plane is at height 0) */
  double g;       /* gravity [m/s^2] >= 0, acting towards the plane */
  double K;       /* stiffness [N/m^n] > 0 */
  double n;       /* force exponent: 1 for Kelvin-Voigt, 3/2 for Hertz */
  double cr;      /* coefficient of restitution in (0, 1] */
  int model;      /* KL_MODEL_KV, KL_MODEL_HC, KL_MODEL_EF or KL_MODEL_GEN (kernels/kl_impact.h) */
  int law;        /* KL_LAW_* for Hunt-Crossley */
  int rule;       /* KL_SEP_PENETRATION or KL_SEP_FORCE */
  double tol;     /* relative tolerance of the nonlinear sub-step control (default 1e-9): bound on the
                   * embedded estimate of each sub-step's error in penetration (relative to the maximum
                   * penetration) and rate (relative to the impact speed) */
  kl_gen_law gen; /* KL_MODEL_GEN: F = k d^n1 + c sgn(d')|d'|^m d^n2, clamped at 0 (kernels/kl_contact_gen.h);
                   * K and n are then gen.k and gen.n1, cr and law unused; the contact ends at d = 0 */
} kl_ball_model;

/* One completed contact (impact to separation). */
typedef struct kl_ball_contact {
  double t0, t1;   /* start and end time [s] */
  double v_in;     /* impact speed [m/s] */
  double v_out;    /* exit speed [m/s] */
  double dmax;     /* maximum penetration [m] */
  double fpeak;    /* peak contact force [N] */
  int nsub;        /* internal sub-steps inside this contact */
} kl_ball_contact;

#define KL_BALL_MAXLOG 8192

typedef struct kl_ball_data {
  /* state: what is needed to resume a rollout */
  double t;        /* time [s] */
  double z;        /* height of the sphere's lowest point above the plane [m] (penetration = -z) */
  double vz;       /* vertical velocity [m/s], positive up */
  int phase;       /* KL_BALL_FREE or KL_BALL_CONTACT */
  int restitution; /* in contact and past the maximum penetration (nonlinear models) */
  double damp;     /* D [N s/m] (Kelvin-Voigt) or chi [s/m] (Hunt-Crossley) of the current contact */
  double h;        /* next nonlinear sub-step [s] */
  double xscale;   /* nonlinear contact: the maximum penetration without gravity [m], the error scale */
  double hend;     /* nonlinear contact: a sub-step that may run straight into separation [s] */
  /* the nonlinear contact's current sub-step, which may reach past the last output instant */
  int pend;            /* 1 while the sub-step [step_t0, step_t0 + step_h] is under way */
  int step_event;      /* what ends it: 0 nothing, 1 separation, 2 maximum penetration (Emden-Fowler) */
  double step_t0, step_h;
  double step_x0, step_v0, step_x1, step_v1; /* penetration and its rate at both ends */
  kl_kv_poly step_sys;  /* the system whose solution from (step_x0, step_v0) is its dense output */
  /* derived: statistics and logs (fixed capacity; overflow is counted, never grown) */
  long nsub;       /* internal sub-steps so far */
  long nrejected;  /* rejected nonlinear sub-steps */
  int ncontact, napex;
  long contact_overflow, apex_overflow;
  kl_ball_contact contact[KL_BALL_MAXLOG];
  double apex[KL_BALL_MAXLOG];     /* apex heights of the lowest point [m], in order */
  double apex_t[KL_BALL_MAXLOG];   /* their times [s] */
  kl_ball_contact cur;             /* the contact in progress */
} kl_ball_data;

/* Fill a model with the paper's section 4.1 ball: m = 1 kg, R = 0.1 m, g = 9.81, K = 140e6 N/m,
 * Kelvin-Voigt, cr = 1, penetration separation. */
void kl_ball_default(kl_ball_model *m);

/* Check a model; KELVIN_OK, or KELVIN_ERR_ARG with a message naming the field and value in msg. */
kelvin_status kl_ball_check(const kl_ball_model *m, char *msg, int cap);

/* Start a rollout at rest-free state: lowest point at height z0 >= 0 with velocity vz0. */
void kl_ball_reset(const kl_ball_model *m, kl_ball_data *d, double z0, double vz0);

/* Advance to time t_out >= d->t exactly (the output instant). Events inside are located and the
 * step split there. Returns KELVIN_OK or KELVIN_ERR_NUMERIC if the state went non-finite. */
kelvin_status kl_ball_advance(const kl_ball_model *m, kl_ball_data *d, double t_out);

/* The same with a check between sub-steps (check NULL: none): called at the end of a sub-step once every
 * KL_BALL_CHECK_EVERY sub-steps of the call (a contact or a flight taken whole in one sub-step counts one),
 * the state consistent there; nonzero stops the advance with KELVIN_ERR_STOPPED (d->t < t_out; a later
 * call goes on from there, as if it had not stopped). The public API's progress and stop. */
#define KL_BALL_CHECK_EVERY 256
kelvin_status kl_ball_advance_checked(const kl_ball_model *m, kl_ball_data *d, double t_out,
                                      int (*check)(void *ctx, const kl_ball_data *d), void *ctx);

/* Contact force on the ball at the current state [N] (0 in free flight) and penetration [m]. */
double kl_ball_force(const kl_ball_model *m, const kl_ball_data *d);

/* Mechanical energy (kinetic + gravity about the plane + elastic in the contact) [J]. */
double kl_ball_energy(const kl_ball_model *m, const kl_ball_data *d);

#endif
