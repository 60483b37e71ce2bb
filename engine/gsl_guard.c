/* engine/gsl_guard.c: see gsl_guard.h. */
#include "engine/gsl_guard.h"

#include <gsl/gsl_errno.h>
#include <pthread.h>
#include <stdio.h>

static _Thread_local char first[512];
static _Thread_local int have;

static void record(const char *reason, const char *file, int line, int gsl_errno)
{
  if (have) return;
  snprintf(first, sizeof first, "GSL error %d at %s:%d: %s", gsl_errno, file ? file : "?", line, reason ? reason : "?");
  have = 1;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void install(void) { gsl_set_error_handler(record); }

void kl_gsl_guard(void)
{
  pthread_once(&once, install);
  have = 0;
  first[0] = '\0';
}

const char *kl_gsl_error(void) { return have ? first : NULL; }
