/* host/twin_fast.h: the OpenMP twin's fast path on rows gathered into contiguous arrays (host/twin_fast.c). */
#ifndef KL_HOST_TWIN_FAST_H
#define KL_HOST_TWIN_FAST_H

#include "kernels/kl_impact_batch.h"

#define KL_TWIN_ROWS 64 /* rows of one call */

/* The inputs of up to KL_TWIN_ROWS rows of the fast kinds (the general law's columns and fe are 0 for them), and
 * their metrics (KL_OUT_* rows of y) and status. */
typedef struct kl_twin_rows {
  double m[KL_TWIN_ROWS], K[KL_TWIN_ROWS], n[KL_TWIN_ROWS], cr[KL_TWIN_ROWS], v0[KL_TWIN_ROWS];
  int model[KL_TWIN_ROWS], law[KL_TWIN_ROWS], rule[KL_TWIN_ROWS];
  double y[KL_NOUT][KL_TWIN_ROWS];
  int status[KL_TWIN_ROWS];
} kl_twin_rows;

/* The fast path of the first cnt <= KL_TWIN_ROWS rows of r, all taken as rows of class cls (kl_impact_fast_class):
 * what kernels/impact.cl's fast kernel does for a block of that class, so a row of another class is declined
 * (KL_PENDING). */
void kl_twin_fast_rows(kl_twin_rows *r, int cnt, int cls);

#endif
