/* host/impact_batch.h: a batch of P impact scenarios as structure-of-arrays columns (the layout of
 * kernels/kl_impact_batch.h, scenario index fastest) and its evaluation on the OpenCL device, the
 * OpenMP twin or a plain serial loop. All three call kl_impact (kernels/kl_impact.h). */
#ifndef KL_HOST_IMPACT_BATCH_H
#define KL_HOST_IMPACT_BATCH_H

#include <stddef.h>

#include "host/host.h"
#include "kernels/kl_impact_batch.h"

/* One allocation (MuJoCo's mjData rule): every pointer points into it. */
typedef struct kl_impact_batch {
  size_t P;       /* scenarios */
  int M;          /* samples per scenario (0: none) */
  double *x;      /* real inputs (KL_NIN x P): m, K, n, cr, v0, fe, c, n2, rate_exp (KL_IN_*) */
  int *ix;        /* integer inputs (KL_NIIN x P): model, law, rule (KL_IIN_*) */
  double *y;      /* metrics (KL_NOUT x P): dmax, tmax, fpeak, tc, cr_eff, ediss, damp (KL_OUT_*) */
  int *status;    /* status words (P): KL_OK or KL_BAD_* / KL_NO_* bits */
  double *smp;    /* samples (KL_NSMP x M x P): abscissa, penetration, force (KL_SMP_*); NULL if M = 0 */
} kl_impact_batch;

/* Progress of a long run: done of total scenarios evaluated (rows [0, done) hold their results). Called
 * from the calling thread; a nonzero return stops the run (kl_impact_run returns KELVIN_ERR_STOPPED). */
typedef int (*kl_progress_fn)(void *ctx, size_t done, size_t total);

/* Allocate a batch of P >= 1 scenarios with M >= 0 samples each, inputs zeroed. *out = NULL on
 * failure (KELVIN_ERR_NOMEM, or KELVIN_ERR_ARG if the sizes overflow). */
kelvin_status kl_impact_batch_create(size_t P, int M, kl_impact_batch **out);

/* Free a batch; NULL is a no-op. */
void kl_impact_batch_destroy(kl_impact_batch *b);

/* Store scenario in as row p / read row p back. */
void kl_impact_batch_set(kl_impact_batch *b, size_t p, kl_impact_in in);
kl_impact_in kl_impact_batch_get(const kl_impact_batch *b, size_t p);

/* Evaluate every row on the handle's path: the OpenCL device in chunks of at most the handle's chunk
 * size and of what fits in device memory, or the OpenMP twin. progress (nullable) is called after each
 * chunk, in row order; with it, the chunks are also at most a twentieth of the batch (but 2^16 rows at
 * least, KL_PROGRESS_CHUNK), so that a long run reports and can stop; a nonzero return stops the run
 * after that chunk (KELVIN_ERR_STOPPED, the rows not reached untouched). Per-scenario trouble is a
 * status word, never an error; errors are OpenCL failures (KELVIN_ERR_OPENCL, message on h), the impact
 * program's build on the handle's first run (KELVIN_ERR_BUILD, kl_host_build_impact) and a batch too
 * large for the device (KELVIN_ERR_ARG). */
kelvin_status kl_impact_run(kl_host *h, kl_impact_batch *b, kl_progress_fn progress, void *ctx);
#define KL_PROGRESS_CHUNK ((size_t)1 << 16) /* fewest rows per chunk when progress is reported */

/* The same on the handle's OpenCL device through device buffers and transfers, a chunk that mixes models
 * grouped by model, as a device that is not the CPU is always run (a CPU device runs a batch whose tables
 * fit one buffer each in place): so that tests on a CPU device cover that path too. KELVIN_ERR_ARG without
 * an OpenCL device. */
kelvin_status kl_impact_run_staged(kl_host *h, kl_impact_batch *b, kl_progress_fn progress, void *ctx);

/* Rows [lo, hi) on the host with OpenMP, threads threads (0: all). */
void kl_impact_run_omp(kl_impact_batch *b, size_t lo, size_t hi, int threads);
/* kl_impact_run_omp; with fast_only (tests) the rows of the fast kinds are left to the fast path alone, KL_PENDING
 * where it declined them (tests/impact_parity_test.c) */
void kl_impact_run_twin(kl_impact_batch *b, size_t lo, size_t hi, int threads, int fast_only);

/* Rows [lo, hi) on the host in a plain serial loop (the reference the other paths are tested against). */
void kl_impact_run_serial(kl_impact_batch *b, size_t lo, size_t hi);

/* Scenarios per OpenCL launch for this batch on h: min(chunk option, what fits in the device's
 * largest buffer, half its global memory), a multiple of the work-group size; 0 if a single work-group
 * does not fit (M too large). */
size_t kl_impact_chunk(const kl_host *h, int M);

#endif
