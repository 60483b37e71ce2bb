/* engine/gsl_guard.h: GSL's default error handler prints and calls abort(); library code must return a
 * status instead. kl_gsl_guard replaces the handler (once per process) by one that records the first
 * error of the calling thread; GSL then returns its error code to the caller, which checks it, and the
 * library entry point can turn a recorded error into a status and a message. */
#ifndef KL_GSL_GUARD_H
#define KL_GSL_GUARD_H

/* Install the recording handler (idempotent) and clear this thread's record. */
void kl_gsl_guard(void);

/* This thread's first GSL error since kl_gsl_guard ("file:line: reason"), or NULL if none. */
const char *kl_gsl_error(void);

#endif
