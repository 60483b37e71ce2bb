/* benchmarks/maxstep/mx.h: what the max-stable-step benchmark shares between its driver (C17) and
 * the peer-engine runners (C17 for kelvin, MuJoCo, ODE and the node peers; C++17 for Bullet, Simbody,
 * DART and Siconos).
 * A runner simulates one case at one output step h and records one sample per output instant;
 * the driver judges every engine from those samples by the same criterion (README.md). */
#ifndef KL_BENCH_MX_H
#define KL_BENCH_MX_H

#ifdef __cplusplus
extern "C" {
#endif

/* Contact models of a case (numbers match KL_MODEL_KV / KL_MODEL_HC of kernels/kl_impact.h). */
#define MX_KV 0 /* Kelvin-Voigt: f = K d + D d' (paper eq. 1), D from cr by paper eq. (10) */
#define MX_HC 1 /* Hunt-Crossley: f = K d^n (1 + chi d') */

/* The benchmark ball and contact, all SI units. */
typedef struct mx_case {
  int model;     /* MX_KV or MX_HC */
  int law;       /* HC damping law (KL_LAW_*); kelvin evaluates it at every impact speed */
  double m;      /* mass [kg] */
  double R;      /* radius [m] */
  double I;      /* moment of inertia about each axis [kg m^2] (the paper's 0.1, not 2/5 m R^2) */
  double g;      /* gravity [m/s^2] */
  double K;      /* stiffness [N/m] (KV) or [N/m^1.5] (HC) */
  double n;      /* force exponent: 1 (KV) or 1.5 (HC) */
  double cr;     /* coefficient of restitution */
  double D;      /* KV damping [N s/m], paper eq. (10) */
  double chi;    /* HC damping factor [s/m] at the first impact speed (peers hold it fixed) */
  double z0;     /* initial height of the ball's lowest point above the plane [m] */
  double tend;   /* simulated time [s] */
} mx_case;

#define MX_APEX_LOG_MAX 8192 /* capacity of mx_trace.apex_log */

/* One run: samples at the output instants plus the engine's own counters. */
typedef struct mx_trace {
  long n, cap;            /* samples stored, capacity */
  double *t, *z, *vz, *f; /* time [s], lowest-point height [m], vertical speed [m/s], contact force [N] */
  long nstep;             /* internal steps the engine took (= outputs for fixed-step engines) */
  long nfev;              /* force (right-hand side) evaluations; -1 where the engine has no such count */
  long work;              /* what the cap counts: nfev where counted, else nstep; the runner keeps it
                             current before each mx_trace_push */
  long work_cap;          /* a run stops once work exceeds this (steps or evaluations, never seconds) */
  double fpeak_int;       /* largest contact force over the engine's internal steps [N]; -1: not exposed */
  double dmax_int;        /* largest penetration over its internal steps [m]; -1: not exposed */
  int napex_log;          /* kelvin: number of apexes from its contact log (exit speeds) */
  double *apex_log;       /* kelvin: those apex heights (napex_log of them); NULL for the others */
  double wall;            /* seconds of stepping, mx_trace_begin to mx_trace_end (setup excluded) */
  double t_start;         /* clock at mx_trace_begin */
  int capped;             /* 1 if the run stopped at work_cap */
  int bad;                /* 1 if the engine itself reported a non-finite state or reset it */
  char err[200];          /* set when the run could not be set up (runner returns -1) */
} mx_trace;

/* Seconds on a monotonic clock. */
double mx_now(void);

/* Start the stepping clock of a run. */
void mx_trace_begin(mx_trace *tr);

/* Stop the stepping clock of a run (wall = elapsed seconds). */
void mx_trace_end(mx_trace *tr);

/* Append one sample; returns 1 when the run must stop (buffer full, or work past work_cap), else 0. */
int mx_trace_push(mx_trace *tr, double t, double z, double vz, double f);

/* Number of output steps of a run: round(tend / h), at least 1. */
long mx_nout(const mx_case *c, double h);

/* A runner: simulate case c with output step h, variant v (engine specific); 0 on success, -1 if the
 * engine could not be set up (tr->err says why). Non-finite states are data, not errors. */
typedef int (*mx_run_fn)(const mx_case *c, int v, double h, mx_trace *tr);

int mx_kelvin_run(const mx_case *c, int v, double h, mx_trace *tr);   /* engine/world: 3-D */
int mx_kelvin1d_run(const mx_case *c, int v, double h, mx_trace *tr); /* engine/ball: the 1-DoF slice */
int mx_mujoco_run(const mx_case *c, int v, double h, mx_trace *tr);
int mx_ode_run(const mx_case *c, int v, double h, mx_trace *tr);
int mx_bullet_run(const mx_case *c, int v, double h, mx_trace *tr);
int mx_simbody_run(const mx_case *c, int v, double h, mx_trace *tr);
int mx_dart_run(const mx_case *c, int v, double h, mx_trace *tr);
int mx_siconos_run(const mx_case *c, int v, double h, mx_trace *tr);
int mx_node_run(const mx_case *c, int v, double h, mx_trace *tr); /* WebAssembly peers under node */

/* Version strings of the peers as they report them (or as their headers say). */
const char *mx_mujoco_version(void);
const char *mx_ode_version(void);
const char *mx_bullet_version(void);
const char *mx_simbody_version(void);
const char *mx_dart_version(void);
const char *mx_siconos_version(void);
const char *mx_node_version(int engine); /* engine: MX_NODE_* >> 8 (3: node); NULL if it cannot run */
const char *mx_node_reason(int engine);  /* why it cannot run ("" if it can) */
void mx_node_stop(void);                  /* end the node process, if one was started */

/* Variants of the runners (the v argument) */
/* kelvin: the paper's rule, the no-tension rule, hc_tol 1e-12; and the Hunt-Crossley tolerance ladder
 * with chi fixed at its first-impact value (Simbody's model): MX_KELVIN_CHIFIX + k is hc_tol 10^(-k/2) */
enum { MX_KELVIN_PEN = 0, MX_KELVIN_FORCE = 1, MX_KELVIN_TIGHT = 2, MX_KELVIN_CHIFIX = 100 };
enum { MX_MUJOCO_KD = 0, MX_MUJOCO_KD_RK4 = 1, MX_MUJOCO_KD_IMPLICIT = 2, MX_MUJOCO_DEFAULT = 3 };
enum { MX_ODE_ERPCFM = 0, MX_ODE_BOUNCE = 1 };
enum { MX_BULLET_KD = 0, MX_BULLET_RESTITUTION = 1, MX_BULLET_RESTITUTION_0 = 2 };
/* Simbody: fixed-step RKM; error-controlled RKM at accuracy 1e-6 and 1e-9; and the Hunt-Crossley
 * accuracy ladders: MX_SIMBODY_RKM + k is RKM at accuracy 10^(-k/2), MX_SIMBODY_ADAMS + k CPodes Adams */
enum { MX_SIMBODY_RK_FIXED = 0, MX_SIMBODY_RKM_1E6 = 1, MX_SIMBODY_RKM_1E9 = 2, MX_SIMBODY_RKM = 100, MX_SIMBODY_ADAMS = 200 };
enum { MX_DART_RESTITUTION = 0, MX_DART_RESTITUTION_DARTCD = 1 };
enum { MX_SICONOS_MOREAU = 0, MX_SICONOS_EVENT = 1 };
/* node peers: engine in the high byte, configuration in the low byte */
enum { MX_NODE_MUJOCO = 0, MX_NODE_PHYSX = 1 << 8, MX_NODE_RAPIER = 2 << 8 };
enum { MX_NODE_MJ_EULER = 0, MX_NODE_MJ_RK4 = 1, MX_NODE_MJ_IMPLICIT = 2, MX_NODE_MJ_IMPLICITFAST = 3 };
enum { MX_NODE_PX_RESTITUTION = 0 };
enum { MX_NODE_RP_RESTITUTION = 0 };

#ifdef __cplusplus
}
#endif
#endif
