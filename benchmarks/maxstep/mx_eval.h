/* benchmarks/maxstep/mx_eval.h: the exact references and the one stability criterion of the
 * max-stable-step benchmark (driver side, C17). */
#ifndef KL_BENCH_MX_EVAL_H
#define KL_BENCH_MX_EVAL_H

#include "benchmarks/maxstep/mx.h"

/* Which exact bounce sequence an engine variant is compared with */
enum {
  MX_REF_KV_PEN = 0,   /* Kelvin-Voigt, contact ends at d = 0 (the paper; tension just before) */
  MX_REF_KV_FORCE = 1, /* Kelvin-Voigt, no tension: contact ends when K d + D d' = 0 (contact solvers) */
  MX_REF_RIGID = 2,    /* Newton restitution: exit speed = cr x impact speed, no contact duration */
  MX_REF_HC_LAW = 3,   /* Hunt-Crossley, chi from the damping law at every impact speed (kelvin) */
  MX_REF_HC_FIXED = 4  /* Hunt-Crossley, chi fixed at its first-impact value (Simbody) */
};

#define MX_REF_MAX 512

/* The exact bounce sequence of a case (gravity acting during contacts included) */
typedef struct mx_ref {
  int mode;
  int n;                      /* apexes in the sequence */
  double apex[MX_REF_MAX];    /* apex heights of the lowest point after contact 1, 2, ... [m] */
  double tapex[MX_REF_MAX];   /* their times [s] */
  double fpeak, dmax, tc;     /* first contact with gravity: peak force [N], max penetration [m], duration [s] */
  double fpeak_nog, dmax_nog; /* first contact without gravity (the same GSL integration) */
  double D_noten;             /* KV, cr < 1: the damping with which a no-tension contact restitutes cr [N s/m] */
  double cf_diff;             /* largest relative difference of kelvin's closed form (kl_impact), the second
                                 reference, from this one: first peak force, penetration and every apex above
                                 1 cm (KV, with gravity); first contact at g = 0 (HC: no closed form with g) */
  int cf_n;                   /* apexes of the closed-form sequence (-1: not built, HC) */
} mx_ref;

/* Build the exact sequence of case c for reference mode `mode` up to time t_until [s]. */
void mx_ref_build(const mx_case *c, int mode, double t_until, mx_ref *r);

/* Verdict of one run against the criterion (README.md, "Criterion"). Every engine is judged from its
 * output samples; the "internal" values come from what the engine exposes between the outputs (kelvin's
 * contact log, Simbody's internal steps): -1 where it exposes nothing beyond the samples. */
typedef struct mx_verdict {
  int stable;          /* 1 if every test passed */
  int intact;          /* 1 if finite and no tunnelling (the weaker reading: "did not blow up") */
  char why[96];        /* "ok" or the first failed test, in words */
  int napex;           /* apexes detected from the samples and checked (expected height > 1 cm) */
  int nexpect;         /* the reference's apexes above 1 cm before the last sample: napex = nexpect when
                          the samples saw every one of them */
  double apex_err;     /* max relative apex error against the exact sequence (samples); 0 if none seen */
  double apex_err_log; /* kelvin: the same from the exit speeds in its contact log; -1 otherwise */
  double edrift;       /* energy drift, relative to the initial energy */
  double fpeak;        /* largest contact force among the output samples [N] */
  double fpeak_err;    /* |fpeak - exact| / exact */
  double fpeak_int;    /* the largest internal per-step contact force [N]; -1 if not exposed */
  double fpeak_int_err;/* its error; -1 if not exposed */
  double pen;          /* max penetration among the output samples [m] */
  double pen_err;      /* |pen - exact| / exact */
  double pen_int_err;  /* the same from internal steps; -1 if not exposed */
  double zmin;         /* lowest sampled height of the lowest point [m] */
} mx_verdict;

/* The criterion's thresholds (README.md, "Criterion") */
#define MX_TOL 0.05      /* apex and energy tolerance */
#define MX_APEX_MIN 0.01 /* apexes expected below 1 cm are not checked (penetration scale) */

/* Judge run tr of case c against reference r. */
void mx_check(const mx_case *c, const mx_ref *r, const mx_trace *tr, mx_verdict *v);

#endif
