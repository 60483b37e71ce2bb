/* kelvin/contact.h: closed forms of compliant normal contact (the paper's sections 2-3; docs/design.md
 * section 2): impact metrics of the Kelvin-Voigt, Hunt-Crossley and Emden-Fowler models under every
 * damping law, the exact Kelvin-Voigt step, contact stiffness from materials and damping from
 * restitution. Pure functions of their arguments: no handle, no state, safe from any thread. The same
 * formulas run in the OpenCL kernels and the CPU engine. SI units throughout. */
#ifndef KELVIN_CONTACT_H
#define KELVIN_CONTACT_H

#include <kelvin/kelvin.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Contact models */
typedef enum kelvin_model {
  KELVIN_MODEL_KV = 0, /* Kelvin-Voigt: F = K d + D d', D from cr by paper eq. (10) */
  KELVIN_MODEL_HC = 1, /* Hunt-Crossley family: F = K d^n (1 + chi d'), chi from cr and v0 by a damping law */
  KELVIN_MODEL_EF = 2, /* the paper's approximate Emden-Fowler form, eq. (11)-(13) */
  KELVIN_MODEL_GEN = 3 /* the generalised law F = k d^n1 + c sgn(d')|d'|^m d^n2 (no tension), by a step */
} kelvin_model;

/* Damping laws chi(cr, v0) of the Hunt-Crossley family [s/m] */
typedef enum kelvin_law {
  KELVIN_LAW_HUNT_CROSSLEY = 0,       /* Hunt & Crossley 1975: chi = 3 (1 - cr) / (2 v0) */
  KELVIN_LAW_LANKARANI_NIKRAVESH = 1, /* Lankarani & Nikravesh 1990: chi = 3 (1 - cr^2) / (4 v0) */
  KELVIN_LAW_FLORES = 2,              /* Flores et al. 2011: chi = 8 (1 - cr) / (5 cr v0) */
  KELVIN_LAW_GONTHIER = 3,            /* Gonthier et al. 2004: chi = (1 - cr^2) / (cr v0) */
  KELVIN_LAW_EXACT = 4                /* chi such that the effective restitution is exactly cr */
} kelvin_law;

/* End of a Kelvin-Voigt contact */
typedef enum kelvin_rule {
  KELVIN_SEP_PENETRATION = 0, /* the paper: at d = 0 (the force may turn tensile just before) */
  KELVIN_SEP_FORCE = 1        /* no tension: at K d + D d' = 0 */
} kelvin_rule;

/* Names of the models ("kv", "hc", "ef"), damping laws ("hunt-crossley", "lankarani-nikravesh", "flores",
 * "gonthier", "exact") and separation rules ("penetration", "force"), as config files and options spell
 * them: the one table of each. *_name: NULL for an unknown code. *_from_name: the code, -1 for an
 * unknown name (exact, case-sensitive). *_names: the names indexed by code, NULL-terminated. */
KELVIN_API const char *kelvin_model_name(int model);
KELVIN_API const char *kelvin_law_name(int law);
KELVIN_API const char *kelvin_rule_name(int rule);
KELVIN_API int kelvin_model_from_name(const char *name);
KELVIN_API int kelvin_law_from_name(const char *name);
KELVIN_API int kelvin_rule_from_name(const char *name);
KELVIN_API const char *const *kelvin_model_names(void);
KELVIN_API const char *const *kelvin_law_names(void);
KELVIN_API const char *const *kelvin_rule_names(void);
/* The models the 3-D engine and the grinding model take ("kv", "hc"), NULL-terminated. */
KELVIN_API const char *const *kelvin_engine_model_names(void);

/* One normal impact at speed v0 onto a compliant contact. */
typedef struct kelvin_impact_in {
  double m;           /* mass [kg] > 0 */
  double K;           /* stiffness [N/m^n] > 0 */
  double n;           /* force exponent: 1 for Kelvin-Voigt (required), 1.5 for Hertz; in (0, 10) */
  double cr;          /* coefficient of restitution in (0, 1] */
  double v0;          /* impact speed [m/s] > 0 */
  double fe;          /* constant external force pushing into the contact [N]; Kelvin-Voigt, Hunt-Crossley and
                         the general law (both by a step with error control); 0 for Emden-Fowler */
  kelvin_model model;
  kelvin_law law;     /* Hunt-Crossley only */
  kelvin_rule rule;   /* Kelvin-Voigt, the general law and Hunt-Crossley under a force */
  /* the general law (KELVIN_MODEL_GEN) only, where K is its k and n its n1 (cr and law unused): damping
   * coefficient c >= 0 [N (s/m)^rate_exp / m^n2], exponent n2 in [0, 10) of d in the damping term and the
   * rate exponent rate_exp in (0, 10) (the law's m, not the mass) */
  double c, n2, rate_exp;
} kelvin_impact_in;

/* What is wrong with an impact (bits of kelvin_impact_out.flags); the metrics are then 0. */
#define KELVIN_IMPACT_BAD_MASS 1        /* m not finite or <= 0 */
#define KELVIN_IMPACT_BAD_STIFFNESS 2   /* K not finite or <= 0 */
#define KELVIN_IMPACT_BAD_CR 4          /* cr outside (0, 1] */
#define KELVIN_IMPACT_BAD_SPEED 8       /* v0 not finite or <= 0 */
#define KELVIN_IMPACT_BAD_EXPONENT 16   /* n outside (0, 10), or n != 1 for Kelvin-Voigt */
#define KELVIN_IMPACT_BAD_LAW 32        /* unknown model, law or rule */
#define KELVIN_IMPACT_NO_CONVERGE 64    /* an iteration did not reach its tolerance */
#define KELVIN_IMPACT_BAD_INPUT 128     /* fe not finite */
#define KELVIN_IMPACT_NO_SEPARATION 256 /* the contact did not end within 1000 natural periods */
#define KELVIN_IMPACT_UNSUPPORTED 512   /* fe != 0 with Emden-Fowler (no model of it) */

/* Metrics of one impact */
typedef struct kelvin_impact_out {
  double dmax;   /* maximum penetration [m] */
  double tmax;   /* time from impact to dmax [s] */
  double fpeak;  /* peak contact force [N] */
  double tc;     /* contact time [s] */
  double cr_eff; /* exit speed / impact speed */
  double ediss;  /* dissipated fraction of the impact kinetic energy, 1 - cr_eff^2 */
  double damp;   /* D [N s/m] for Kelvin-Voigt, chi [s/m] for Hunt-Crossley, 0 for Emden-Fowler */
  int flags;     /* 0, or KELVIN_IMPACT_* bits */
} kelvin_impact_out;

/* Fill *in with a Kelvin-Voigt impact of 1 kg at 1 m/s on K = 1e6 N/m, cr = 1, no external force,
 * penetration rule: a starting point to change fields of. */
KELVIN_API void kelvin_impact_in_init(kelvin_impact_in *in);

/* Metrics of one impact from the closed forms (Kelvin-Voigt: the exact solution of paper eq. (3)-(4);
 * Hunt-Crossley: phase-plane closed forms through the Lambert W function; Emden-Fowler: eq. (11)-(13)), or
 * where none exists (the general law, Hunt-Crossley under a force) by an error-controlled step to ~1e-9
 * relative (docs/design.md section 2.5; an impact that does not separate: KELVIN_IMPACT_NO_SEPARATION).
 * KELVIN_OK; KELVIN_ERR_ARG for NULL pointers or a bad scenario (out->flags says what); KELVIN_ERR_NUMERIC
 * when the contact does not end or an iteration fails (flags again). *out is zeroed first. */
KELVIN_API kelvin_status kelvin_impact(const kelvin_impact_in *in, kelvin_impact_out *out);

/* Kelvin-Voigt damping from restitution, paper eq. (10): D = -2 ln(cr) sqrt(K m) / sqrt(pi^2 + ln^2 cr)
 * [N s/m], cr in (0, 1], K > 0 [N/m], m > 0 [kg]; NaN outside that domain. */
KELVIN_API double kelvin_kv_damping(double cr, double K, double m);

/* Damping factor chi [s/m] of a Hunt-Crossley law for restitution cr in (0, 1] and impact speed v0 > 0
 * [m/s]; NaN outside that domain. */
KELVIN_API double kelvin_hc_chi(kelvin_law law, double cr, double v0);

/* Effective restitution of a Hunt-Crossley impact with damping factor chi >= 0 [s/m] at speed v0 > 0
 * [m/s] (a function of chi v0 alone); NaN outside that domain. */
KELVIN_API double kelvin_hc_cr_eff(double chi, double v0);

/* Maximum penetration [m] of a Hunt-Crossley impact: d_max^(n+1) = (n+1) m (chi v0 - ln(1 + chi v0)) /
 * (K chi^2), chi = 0 being Hertz; m, K, n, v0 > 0, chi >= 0; NaN outside that domain. */
KELVIN_API double kelvin_hc_delta_max(double m, double K, double n, double chi, double v0);

/* Effective modulus E* = 1 / ((1 - nu1^2)/E1 + (1 - nu2^2)/E2) [Pa] (paper eq. 2); E > 0 [Pa],
 * nu in (-1, 0.5]; NaN outside that domain. */
KELVIN_API double kelvin_estar(double E1, double nu1, double E2, double nu2);

/* Hertz stiffness of a sphere of radius R [m] on a plane, K = 4/3 E* sqrt(R) [N/m^1.5], for
 * F = K d^(3/2) (paper eq. 2); two spheres: R = kelvin_radius_eff(R1, R2). NaN unless E*, R > 0. */
KELVIN_API double kelvin_hertz_K(double estar, double R);

/* Effective radius 1/R = 1/R1 + 1/R2 [m]; a radius <= 0 stands for a plane (infinite radius). */
KELVIN_API double kelvin_radius_eff(double R1, double R2);

/* The exact solution of m x'' + D x' + K x = f0 + f1 t over a step t >= 0 [s] from x(0) = x0 [m],
 * x'(0) = v0 [m/s] (paper eq. 4, all damping regimes, an affine force): x(t) into *x, x'(t) into *v and
 * the impulse of the spring-damper force int_0^t (K x + D x') dt [N s] into *J (each nullable). m > 0
 * [kg], K >= 0 [N/m], D >= 0 [N s/m], f0 [N], f1 [N/s]. KELVIN_ERR_ARG (outputs NaN) otherwise. */
KELVIN_API kelvin_status kelvin_kv_step(double m, double K, double D, double f0, double f1, double x0, double v0,
                                        double t, double *x, double *v, double *J);

/* A contact at rest, F = K d^n (Kelvin-Voigt: n = 1; the damping term vanishes at rest), written once for
 * the library and its callers (kernels/kl_contact_static.h; implemented in api/grind_contact.c): the
 * static depth at the force F, (F/K)^(1/n) [m] (0 for F <= 0), and the compliance there,
 * d(depth)/dF = depth / (n F) [m/N] (1/K for n = 1; INFINITY-like 1e300 for n > 1 at F <= 0). K > 0
 * [N/m^n], n > 0; NaN outside that domain. */
KELVIN_API double kelvin_static_depth(double K, double n, double F);
KELVIN_API double kelvin_static_compliance(double K, double n, double F);

#ifdef __cplusplus
}
#endif
#endif
