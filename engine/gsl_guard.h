/* engine/gsl_guard.h: GSL's default error handler prints and calls abort(); library code must return a
 * status instead. kl_gsl_guard replaces the handler (once per process) by one that records the first
 * error of the calling thread; GSL then returns its error code to the caller, which checks it, and the
 * library entry point can turn a recorded error into a status and a message. The library installs it
 * itself, at first use: every entry point that calls GSL where an error is possible calls kl_gsl_guard
 * first (optimiser/problem.c, optimiser/lm.c; the pipeline's GSL calls come after a problem is prepared),
 * so no program has to (the kelvin program does not). The robot code hands GSL only what cannot fail
 * (square matrices to the modified Cholesky, rows >= columns to the SVD, finite numbers). */
#ifndef KL_GSL_GUARD_H
#define KL_GSL_GUARD_H

/* Install the recording handler (idempotent) and clear this thread's record. */
void kl_gsl_guard(void);

/* This thread's first GSL error since kl_gsl_guard ("file:line: reason"), or NULL if none. */
const char *kl_gsl_error(void);

#endif
