/* api/grind_impl.h: the grinding problem's handle (include/kelvin/grind.h) as api/grind.c and
 * api/rollout.c share it; api/batch.c, the devices and impact batches, does not need it. Never installed. */
#ifndef KL_API_GRIND_IMPL_H
#define KL_API_GRIND_IMPL_H

#include "api/api_impl.h"
#include "io/settings.h"
#include "kelvin/grind.h"
#include "optimiser/pipeline.h"

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
  char *warn[KL_MAXPASS]; /* per pass: the disagreement warning, or NULL (owned) */
  char *diagnosis;        /* the target not reached, or NULL (owned) */
  kelvin_progress_fn progress;
  void *ctx;
  /* the config file loaded (messages name its lines), and the keys set after it ("\n"-separated) */
  char cfg[1024];
  char given[2048];
  int given_full;  /* more keys than given holds: no line is looked up */
  char msg[KL_API_MSG];
};

#endif
