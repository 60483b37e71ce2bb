/* kelvin/ball.h: the paper's ball on a plane (section 4.1, Fig. 3) in the variable-time-step engine's
 * 1-D slice (docs/design.md section 3): a sphere falling under gravity onto a static plane, its normal
 * contact a Kelvin-Voigt, Hunt-Crossley or Emden-Fowler contact from the closed forms of kelvin/contact.h,
 * or the general law F = k d^n1 + c sgn(d')|d'|^m d^n2.
 * Free flight is exact ballistic motion and the impact time is located exactly; a Kelvin-Voigt contact
 * is advanced to its end in one closed-form sub-step (paper eq. 4), a nonlinear one by an error-controlled
 * exponential step. The times a caller advances to are only where states are reported: the trajectory,
 * the contact log and its extrema are the same for any output period.
 *
 * A kelvin_ball holds one rollout (create, start, advance to increasing times, read the state and the
 * logs); one thread at a time. Heights are of the sphere's lowest point above the plane, positive up. SI
 * units. */
#ifndef KELVIN_BALL_H
#define KELVIN_BALL_H

#include <kelvin/contact.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ball and its contact; kelvin_ball_model_init fills the defaults. */
typedef struct kelvin_ball_model {
  double m;           /* mass [kg] > 0 */
  double R;           /* radius [m] > 0 (the geometry of a Hertz stiffness; the plane is at height 0) */
  double g;           /* gravity towards the plane [m/s^2] >= 0 */
  double K;           /* stiffness [N/m^n] > 0 */
  double n;           /* force exponent in [1, 3]: 1 for Kelvin-Voigt, 1.5 for Hertz */
  double cr;          /* coefficient of restitution in (0, 1] */
  kelvin_model model; /* KELVIN_MODEL_KV, _HC, _EF or _GEN */
  kelvin_law law;     /* damping law of Hunt-Crossley */
  kelvin_rule rule;   /* end of a Kelvin-Voigt contact */
  double tol;         /* relative tolerance of the nonlinear sub-step control, in [1e-14, 1e-2] */
  /* KELVIN_MODEL_GEN, F = k d^n1 + c sgn(d')|d'|^m d^n2 clamped at 0: k is K, n1 is n (in (0, 5]), and
   * (cr and law unused; the contact ends at d = 0): */
  double gen_c;  /* c [N (s/m)^m / m^n2] >= 0 */
  double gen_n2; /* n2 in [0, 5] (0: the force jumps to c v^m at contact) */
  double gen_m;  /* the rate exponent m in (0, 5] */
} kelvin_ball_model;

/* The paper's section 4.1 ball: 1 kg, R = 0.1 m, g = 9.81 m/s^2, Kelvin-Voigt with K = 140e6 N/m (n = 1),
 * cr = 1, damping law exact, penetration rule, tol = 1e-9. */
KELVIN_API void kelvin_ball_model_init(kelvin_ball_model *m);

typedef struct kelvin_ball kelvin_ball; /* one rollout */

/* A rollout, not started. *out = NULL and KELVIN_ERR_NOMEM on failure. */
KELVIN_API kelvin_status kelvin_ball_create(kelvin_ball **out);

/* NULL is a no-op. */
KELVIN_API void kelvin_ball_free(kelvin_ball *b);

/* The last error message; "" if none; never NULL. */
KELVIN_API const char *kelvin_ball_errmsg(const kelvin_ball *b);

/* Check a run before doing it, as kelvin_ball_start does: every field of m (the message names it and its
 * value: "exponent: must be in [1, 3], got 4"), the start (height z0 >= 0 [m], velocity vz0 [m/s]) and the
 * time the run will reach, t_end > 0 [s]; and that the engine can do the work in finite time: the ball
 * must not sink more than its radius under its own weight ((m g / K)^(1/n) < R), and its first impact
 * (the closed form of kelvin_impact at the impact speed from z0 and vz0) must last longer than the time
 * resolution of double precision at t_end (64 eps t_end) and penetrate less than R. KELVIN_OK, or
 * KELVIN_ERR_ARG with a one-line message on b naming the quantity, its value and what to change; or
 * KELVIN_ERR_LIMIT when the sub-steps to t_end, estimated from the impacts until the ball rests (or
 * t_end) and the sub-steps of one impact, exceed KELVIN_WORK_LIMIT (docs/design.md section 8, "Bounded
 * physics"). */
KELVIN_API kelvin_status kelvin_ball_check(kelvin_ball *b, const kelvin_ball_model *m, double z0, double vz0,
                                           double t_end);

/* Check (kelvin_ball_check) and start a rollout of model m (copied) at t = 0: lowest point at height z0,
 * velocity vz0 (positive up); the logs emptied. The rollout may be advanced past t_end: t_end only
 * bounds the check. */
KELVIN_API kelvin_status kelvin_ball_start(kelvin_ball *b, const kelvin_ball_model *m, double z0, double vz0,
                                           double t_end);

/* Advance to time t >= the current time [s], exactly (impacts and separations inside are located and
 * the sub-steps split there). KELVIN_ERR_ARG before a start or for t in the past; KELVIN_ERR_NUMERIC when
 * the state went non-finite (the message gives the time); KELVIN_ERR_STOPPED when the progress
 * callback asked to stop (kelvin_ball_set_progress; the state is then that of the last completed
 * sub-step, and a later call goes on from there). */
KELVIN_API kelvin_status kelvin_ball_advance(kelvin_ball *b, double t);

/* Progress and stop of kelvin_ball_advance: fn (NULL: none) is called between sub-steps, at the first
 * checkpoint (every 256 sub-steps of one advance call) after the callback is set and then at most about
 * five times a second of wall time, with the fraction of the current advance call done and a line such as "t = 0.53 s,
 * 120000 sub-steps"; it may read b but not change it. Nonzero stops the advance (KELVIN_ERR_STOPPED). */
KELVIN_API kelvin_status kelvin_ball_set_progress(kelvin_ball *b, kelvin_progress_fn fn, void *ctx);

/* The state now. */
typedef struct kelvin_ball_state {
  double t;           /* [s] */
  double height;      /* of the lowest point above the plane [m] (negative in contact: the penetration) */
  double velocity;    /* vertical [m/s], positive up */
  int contact;        /* 1 in contact */
  double penetration; /* [m], 0 in flight */
  double rate;        /* penetration rate [m/s], 0 in flight */
  double force;       /* contact force on the ball [N], 0 in flight */
  double energy;      /* kinetic + gravity (about the plane) + elastic in the contact [J] */
} kelvin_ball_state;

KELVIN_API kelvin_status kelvin_ball_get_state(const kelvin_ball *b, kelvin_ball_state *s);

/* A completed contact, impact to separation. */
typedef struct kelvin_ball_contact {
  double t0, t1;      /* impact and separation [s] */
  double v_in, v_out; /* impact and exit speeds [m/s] */
  double dmax;        /* maximum penetration [m] */
  double fpeak;       /* peak contact force [N] */
  int nsub;           /* sub-steps inside it */
} kelvin_ball_contact;

/* Completed contacts logged so far (the first 8192; the rest are counted by kelvin_ball_overflow) and
 * contact i of them, oldest first. */
KELVIN_API int kelvin_ball_ncontact(const kelvin_ball *b);
KELVIN_API kelvin_status kelvin_ball_get_contact(const kelvin_ball *b, int i, kelvin_ball_contact *c);

/* Apexes (the highest points between contacts) logged so far (the first 8192) and apex i: its time [s]
 * and height [m] (each nullable). */
KELVIN_API int kelvin_ball_napex(const kelvin_ball *b);
KELVIN_API kelvin_status kelvin_ball_get_apex(const kelvin_ball *b, int i, double *t, double *height);

/* Contacts and apexes that did not fit in the logs. */
KELVIN_API long kelvin_ball_overflow(const kelvin_ball *b);

/* Sub-steps taken since the start. */
KELVIN_API long kelvin_ball_substeps(const kelvin_ball *b);

#ifdef __cplusplus
}
#endif
#endif
