/* core/shard.h: the collectives of a sharded run (include/kelvin/shard.h; docs/design.md section 11) as the
 * library uses them: a rank's share of n items, the agreement on a status, and the gathering of a table's
 * columns. Without a shard (NULL, or a group of one) each is the one-process case: the whole range, the
 * status as it is, nothing to gather. */
#ifndef KL_CORE_SHARD_H
#define KL_CORE_SHARD_H

#include <stddef.h>

#include "kelvin/shard.h"

/* 1 if sh spreads work over more than one process. */
static inline int kl_shard_on(const kelvin_shard *sh) { return sh && sh->size > 1; }

/* Where rank r's share of n items starts: contiguous blocks in rank order whose sizes differ by at most
 * one, the larger first (r = size gives n). */
size_t kl_shard_start(const kelvin_shard *sh, size_t n, int r);

/* This rank's share [*lo, *hi) of n items; [0, n) without a shard. */
void kl_shard_range(const kelvin_shard *sh, size_t n, size_t *lo, size_t *hi);

/* Collective: agree on a status. st and msg (cap bytes) are this rank's; every rank returns the status of
 * the lowest rank whose st is not KELVIN_OK, with msg "rank R: <its message>" (R its rank). KELVIN_OK and
 * msg untouched when every rank succeeded. Without a shard: st, msg untouched. A failed hook is
 * KELVIN_ERR_IO. */
kelvin_status kl_shard_agree(const kelvin_shard *sh, kelvin_status st, char *msg, size_t cap);

/* Collective: full is a table of rows x n elements of elem bytes (row pitch n) in which each rank has
 * filled its own columns [kl_shard_range); after the call every column is filled on every rank (root < 0)
 * or on rank root. Rows of 256 KiB or more go one by one, in place; shorter ones packed into one gather. The
 * group agrees first on having the memory for it: KELVIN_ERR_NOMEM on every rank if one rank lacks it;
 * KELVIN_ERR_IO if the hook fails (message in msg, cap bytes). Agree on the computation's status before. */
kelvin_status kl_shard_gather_cols(const kelvin_shard *sh, void *full, size_t rows, size_t n, size_t elem, int root,
                                   char *msg, size_t cap);

#endif
