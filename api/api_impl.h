/* api/api_impl.h: the handles of the public API (include/kelvin/ headers) as the api/ files share them.
 * Never installed. */
#ifndef KL_API_IMPL_H
#define KL_API_IMPL_H

#include <stdarg.h>

#include "host/host.h"
#include "io/settings.h"
#include "kelvin/batch.h"
#include "kelvin/grind.h"
#include "optimiser/pipeline.h"

#define KL_API_MSG 4096

struct kelvin_device {
  kl_host *h;
  int open;
  char msg[KL_API_MSG];
  char spec_name[64]; /* the spec's name in messages (kelvin_device_set_spec_name); "" for the default */
};

struct kelvin_grind {
  kl_settings set;
  /* inputs given in memory (owned copies); they win over the files the settings name */
  kl_mesh *mesh;
  int npath;
  double *path_p, *path_n; /* (npath x 3) */
  int ntarget;
  double *target_s, *target_F; /* (ntarget) */
  /* the problem prepared from them (NULL until kelvin_grind_prepare, and after any change) */
  kl_inputs files; /* what the settings' file keys name, loaded at prepare */
  kl_problem *pb;
  /* results of the last run (NULL before one, and after any change) */
  kl_opt_result *res;
  int identity;    /* 1: the passes' control points are the samples themselves (evaluate) */
  void (*progress)(void *ctx, const char *text);
  void *ctx;
  char msg[KL_API_MSG];
};

/* Record "fmt..." as the message (msg, KL_API_MSG bytes) and return st. */
kelvin_status kl_api_fail(char *msg, kelvin_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
