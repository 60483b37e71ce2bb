/* kelvin/fit.h: calibrating the generalised soft-contact law F = k d^n1 + c sgn(d')|d'|^m d^n2 (clamped at 0;
 * docs/design.md sections 2.5 and 2.6) to a measured impact: peak force, contact time, restitution (any subset,
 * each with its standard uncertainty) and/or a force trace (time from contact start [s], force [N]), by
 * nonlinear least squares (GSL's trust-region Levenberg-Marquardt). The forward model is the library's impact
 * of one scenario with the general law (kelvin_impact's "general" model). Each parameter is free (with bounds)
 * or fixed; the fitted parameters come with standard errors from the Jacobian at the solution.
 *
 * Identifiability: peak force, contact time and restitution are 3 numbers for 5 unknowns. A request with
 * fewer measured numbers than free parameters is refused, and so is one whose Jacobian is rank deficient
 * (the message names the combination of parameters the measurements do not determine): give a force trace
 * or fix parameters (e.g. m = 1). */
#ifndef KELVIN_FIT_H
#define KELVIN_FIT_H

#include <stddef.h>

#include <kelvin/kelvin.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The law's parameters, in this order everywhere */
typedef enum kelvin_fit_param {
  KELVIN_FIT_K = 0,  /* k [N/m^n1] > 0 */
  KELVIN_FIT_C = 1,  /* c [N (s/m)^m / m^n2] > 0 */
  KELVIN_FIT_N1 = 2, /* n1 > 0 */
  KELVIN_FIT_N2 = 3, /* n2 >= 0 */
  KELVIN_FIT_M = 4,  /* rate exponent m > 0 */
  KELVIN_FIT_NPARAM = 5
} kelvin_fit_param;

/* "k", "c", "n1", "n2", "m" (the keys of the fit file); NULL outside the range. */
KELVIN_API const char *kelvin_fit_param_name(int p);

/* A measured impact and what to fit. Conditioning (docs/design.md section 2.6): k and c are fitted as their
 * logarithms (bounded through a logistic transform when both bounds are given, else free in (0, inf)), the
 * exponents through a logistic transform onto [lo, hi] (required). */
typedef struct kelvin_fit_problem {
  double mass;                     /* impacting mass [kg] > 0 */
  double v0;                       /* impact speed [m/s] > 0 */
  double start[KELVIN_FIT_NPARAM]; /* starting value of a free parameter; the value of a fixed one */
  double lo[KELVIN_FIT_NPARAM];    /* bounds of a free parameter: lo < start < hi; for k and c either 0 < lo, */
  double hi[KELVIN_FIT_NPARAM];    /* hi finite, or lo = 0, hi = INFINITY: unbounded */
  int fixed[KELVIN_FIT_NPARAM];    /* 1: held at start */
  /* measured metrics with their standard uncertainty; an uncertainty of 0 means "not measured" */
  double fpeak, fpeak_sd; /* peak force [N] */
  double tc, tc_sd;       /* contact time [s]: while the force is positive */
  double cr, cr_sd;       /* restitution: exit speed / impact speed */
  /* a force trace of ntrace samples (0: none), times from the contact's start [s] in increasing order and
   * forces [N]; trace_sd its noise's standard deviation [N], or 0 when unknown: then every uncertainty
   * is scaled by the residual variance (chi^2 / degrees of freedom). Not copied: valid during the run. */
  size_t ntrace;
  const double *trace_t, *trace_f;
  double trace_sd;
  int max_iter; /* iterations of the trust region at most; 0: 200 */
} kelvin_fit_problem;

/* Defaults: mass, v0 0 (to set); start k 1e6, c 1e4, n1 1.5, n2 1.5, m 1, all free; bounds k, c (0, inf),
 * n1 [0.5, 4], n2 [0, 4], m [0.1, 4]; nothing measured. */
KELVIN_API void kelvin_fit_problem_init(kelvin_fit_problem *p);

/* The answer */
typedef struct kelvin_fit_result {
  double value[KELVIN_FIT_NPARAM];                   /* fitted (or fixed) values */
  double se[KELVIN_FIT_NPARAM];                      /* standard errors; 0 for fixed parameters */
  double corr[KELVIN_FIT_NPARAM][KELVIN_FIT_NPARAM]; /* correlations of the free parameters (log k, log c,
                                                        exponents), 1 on the diagonal, 0 for fixed ones */
  int fixed[KELVIN_FIT_NPARAM];
  int nfree;             /* free parameters */
  int nres;              /* residuals: trace samples plus measured metrics */
  double chi2;           /* sum of squared weighted residuals at the solution */
  int dof;               /* nres - nfree */
  int sd_from_residuals; /* 1: the trace's sd was not given; se scaled by sqrt(chi2 / dof) */
  double trace_sd;       /* the trace's sd used [N]: given, or estimated from the residuals */
  double rms_trace;      /* RMS of the trace residuals [N]; 0 without a trace */
  double fpeak, tc, cr;  /* the fitted model's metrics */
  double cond;           /* condition number of the weighted Jacobian at the solution (internal parameters) */
  int iterations;
  int converged; /* 1: GSL's tests met; 0: the iteration limit was reached (the result is the last iterate) */
} kelvin_fit_result;

typedef struct kelvin_fit kelvin_fit;

/* A handle (holds the loaded problem, the trace and the last run's residuals). *out = NULL and
 * KELVIN_ERR_NOMEM on failure, KELVIN_ERR_ARG for NULL. */
KELVIN_API kelvin_status kelvin_fit_create(kelvin_fit **out);
/* NULL is a no-op. */
KELVIN_API void kelvin_fit_free(kelvin_fit *f);
/* The last error message; "" if none; never NULL. */
KELVIN_API const char *kelvin_fit_errmsg(const kelvin_fit *f);

/* Progress and stop for kelvin_fit_run (kelvin_progress_fn): called after each iteration with the share of
 * max_iter done and "fit: iteration 7, chi^2 123.4"; nonzero stops: KELVIN_ERR_STOPPED, no result. */
KELVIN_API void kelvin_fit_set_progress(kelvin_fit *f, kelvin_progress_fn fn, void *ctx);

/* Load a fit file (YAML; the format of examples/fit_trace.yaml, docs/api.md) into the handle, reading
 * the trace CSV it names (columns t_s, force_N) relative to the file's folder. KELVIN_ERR_CONFIG with
 * "FILE:LINE: FIELD: ..." (or the CSV's "FILE:LINE: column ..."), KELVIN_ERR_IO, KELVIN_ERR_NOMEM. */
KELVIN_API kelvin_status kelvin_fit_load(kelvin_fit *f, const char *path);

/* The loaded problem into *p (its trace pointers point into the handle, valid until the next load or the
 * free); KELVIN_ERR_ARG when nothing is loaded. */
KELVIN_API kelvin_status kelvin_fit_problem_get(const kelvin_fit *f, kelvin_fit_problem *p);

/* Fit. *r is zeroed first. KELVIN_ERR_ARG: a bad problem (the message names the field), or an
 * under-determined one (fewer measured numbers than free parameters, or a rank-deficient Jacobian: the
 * message names the undetermined combination); KELVIN_ERR_NUMERIC: the forward model fails at the start
 * (the message gives the scenario) or the solver fails; KELVIN_ERR_STOPPED. */
KELVIN_API kelvin_status kelvin_fit_run(kelvin_fit *f, const kelvin_fit_problem *p, kelvin_fit_result *r);

/* After a successful run: trace sample i (< ntrace) of the last run: time *t [s], measured *meas and fitted
 * *model force [N] (each nullable). KELVIN_ERR_ARG for a bad index or no run. */
KELVIN_API kelvin_status kelvin_fit_trace(const kelvin_fit *f, size_t i, double *t, double *meas, double *model);

/* The general law's impact force at n times t [s] (0 outside the contact) for the law
 * law[KELVIN_FIT_NPARAM], mass [kg] and v0 [m/s], and its metrics (each of fpeak, tc, cr nullable): the
 * forward model of the fit, for plotting a fitted law. KELVIN_ERR_ARG for a bad law (message on f),
 * KELVIN_ERR_NUMERIC when the impact fails. */
KELVIN_API kelvin_status kelvin_fit_model(kelvin_fit *f, const double *law, double mass, double v0, size_t n,
                                          const double *t, double *force, double *fpeak, double *tc, double *cr);

#ifdef __cplusplus
}
#endif
#endif
