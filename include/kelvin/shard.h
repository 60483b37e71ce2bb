/* kelvin/shard.h: running one job across several processes (docs/design.md section 11). A shard is a
 * process's place in a group of `size` processes that run the same program on the same inputs (MPI ranks,
 * or any other launcher): where a kelvin call has many independent items (a sweep's scenarios, an
 * optimiser's candidates, a robust objective's scenarios, the out-of-sample check's rollouts), each
 * process computes a contiguous share of them and the group's collective operations below put the results
 * together, in item order, so that every process holds what one process alone would have computed, bit
 * for bit. What is not sharded (an optimiser's own iteration) runs on every process alike.
 *
 * Install a shard on a device (kelvin_device_set_shard): every batch, optimisation, evaluation and check
 * run on that device is then collective, so every process of the group must make the same calls in the
 * same order. Errors are collective too: a failure on one process (its device, a stop asked by its
 * progress callback) makes the call fail on every process with that process's message ("rank 2: ...").
 *
 * This header needs no MPI: a program brings its own collectives through the hooks. kelvin/mpi.h (a build
 * with -DKELVIN_MPI=ON) makes a shard from an MPI communicator. */
#ifndef KELVIN_SHARD_H
#define KELVIN_SHARD_H

#include <stddef.h>

#include <kelvin/kelvin.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kelvin_shard {
  int rank, size;           /* this process, of size >= 1 */
  int node_rank, node_size; /* this process among those on its node (picks a GPU: kelvin_device_open) */
  void *ctx;                /* the hooks' own data */
  /* Collective. Each rank r contributes counts[r] bytes (its own count is counts[rank], at send); recv
   * receives the concatenation in rank order on every rank (root < 0) or on rank root only (recv may be
   * NULL elsewhere). counts is the same array on every rank. send may be this rank's own place inside recv
   * (recv + the counts of the ranks before it): a gather in place, whose own part is already there. Returns 0
   * on success. */
  int (*gather)(void *ctx, const void *send, void *recv, const size_t *counts, int root);
  /* Collective. Each rank gives *code (0: fine) and a message (NUL-terminated, cap bytes); every rank
   * returns with *code and msg those of the lowest rank whose code is nonzero (unchanged if none).
   * Returns 0 on success. */
  int (*agree)(void *ctx, int *code, char *msg, size_t cap);
} kelvin_shard;

typedef struct kelvin_device kelvin_device; /* kelvin/batch.h */

/* Share dev's work with the group sh describes (copied; sh->ctx must outlive the device's use): from now on
 * every impact batch, optimisation, evaluation and check run on dev is collective over the group. Call it
 * before kelvin_device_open for the node's processes to spread over the node's GPUs (without a spec, the
 * node's k-th process opens its (k mod G)-th of G GPUs with double precision), or at any time. NULL, or a
 * group of one: dev works alone again. KELVIN_ERR_ARG for a rank outside [0, size), node_rank outside
 * [0, node_size) or a NULL hook (the message on dev). */
KELVIN_API kelvin_status kelvin_device_set_shard(kelvin_device *dev, const kelvin_shard *sh);

/* Collective over sh's group: agree on a status a program reached on its own (opening its device, reading
 * its inputs), so that every rank goes on or stops together. st and msg (cap bytes) are this rank's; every
 * rank returns the status of the lowest rank whose st is not KELVIN_OK, with msg "rank R: <its message>".
 * KELVIN_OK and msg untouched when all succeeded; without a shard (NULL, a group of one) st as it is.
 * KELVIN_ERR_IO if the hook fails. */
KELVIN_API kelvin_status kelvin_shard_agree(const kelvin_shard *sh, kelvin_status st, char *msg, size_t cap);

/* This process's rank in dev's group, and the group's size (0 and 1 without a shard; NULL outputs are
 * skipped). */
KELVIN_API void kelvin_device_shard(const kelvin_device *dev, int *rank, int *size);

#ifdef __cplusplus
}
#endif
#endif
