/* api/grind_impl.h: the grinding problem's handle (include/kelvin/grind.h) as api/grind.c and
 * api/rollout.c share it; api/batch.c, the devices and impact batches, does not need it. Never installed. */
#ifndef KL_API_GRIND_IMPL_H
#define KL_API_GRIND_IMPL_H

#include "api/api_impl.h"
#include "io/settings.h"
#include "kelvin/grind.h"
#include "optimiser/pipeline.h"
#include "optimiser/plan.h"

/* The removal results (include/kelvin/removal.h, api/removal.c): up to KL_RM_PLANS plans, each as the device
 * model predicted it ([0]) and as the 3-D engine ran it ([1], when verified[i]). */
#define KL_RM_PLANS 2
typedef struct kl_rm_results {
  int n;
  kl_plan plan[KL_RM_PLANS][2];
  int verified[KL_RM_PLANS];
} kl_rm_results;

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
  kl_rm_results *rm;      /* the removal plans of the last run, or NULL (api/removal.c) */
  struct kl_check *check; /* the out-of-sample check of the last run, or NULL (api/robust.c) */
  kelvin_progress_fn progress;
  void *ctx;
  /* the config file loaded (messages name its lines), and the keys set after it ("\n"-separated) */
  char cfg[1024];
  char given[2048];
  int given_full;  /* more keys than given holds: no line is looked up */
  char msg[KL_API_MSG];
};

/* api/grind.c's steps every run shares, for api/removal.c: the checks and a fresh (empty) result on the prepared
 * problem; and, after a failure over a setting, the message located at the config file's line. */
kelvin_status kl_grind_begin(kelvin_grind *g, kelvin_device *dev, const char *what);
void kl_grind_locate(kelvin_grind *g);

/* api/removal.c: release the removal results (NULL-safe); plan "user" of a given pass on a problem with a
 * removal section after kelvin_grind_evaluate (KELVIN_OK and nothing done without one). */
void kl_rm_results_free(kl_rm_results *rm);

/* The inputs the prepared problem was built from (the files' and those given in memory): what a scenario's problem
 * is built from too. */
kl_problem_inputs kl_grind_inputs(const kelvin_grind *g);

/* api/robust.c: the robust run of kelvin_grind_optimise (uncertainty.objective not nominal, scenarios > 0) on the
 * begun handle; and the check's release (NULL-safe). */
int kl_grind_is_robust(const kelvin_grind *g);
kelvin_status kl_grind_optimise_robust(kelvin_grind *g, kelvin_device *dev);
void kl_grind_check_drop(kelvin_grind *g);
kelvin_status kl_grind_removal_user(kelvin_grind *g, kelvin_device *dev, const double *offset, const double *speed);

#endif
