/* core/shard.c: the collectives of a sharded run (core/shard.h). */
#include "core/shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t kl_shard_start(const kelvin_shard *sh, size_t n, int r)
{
  if (!kl_shard_on(sh)) return r <= 0 ? 0 : n;
  const size_t p = (size_t)sh->size, q = n / p, rem = n % p, k = (size_t)r;
  return k * q + (k < rem ? k : rem);
}

void kl_shard_range(const kelvin_shard *sh, size_t n, size_t *lo, size_t *hi)
{
  const int r = kl_shard_on(sh) ? sh->rank : 0;
  *lo = kl_shard_start(sh, n, r);
  *hi = kl_shard_start(sh, n, r + 1);
}

kelvin_status kl_shard_agree(const kelvin_shard *sh, kelvin_status st, char *msg, size_t cap)
{
  if (!kl_shard_on(sh)) return st;
  int code = (int)st;
  char *own = malloc(cap);
  if (!own) return KELVIN_ERR_NOMEM;
  snprintf(own, cap, "%s", st == KELVIN_OK ? "" : msg);
  /* which rank failed travels in the message: "rank R: " is put in front before the agreement, unless an
   * earlier agreement already did (a status passed up through several collective calls) */
  int skip = 0;
  if (st != KELVIN_OK && !(sscanf(msg, "rank %*d: %n", &skip) == 0 && skip > 0))
    snprintf(own, cap, "rank %d: %s", sh->rank, msg);
  if (sh->agree(sh->ctx, &code, own, cap) != 0) {
    free(own);
    snprintf(msg, cap, "rank %d: the shard's agreement on a status failed", sh->rank);
    return KELVIN_ERR_IO;
  }
  if (code != KELVIN_OK) snprintf(msg, cap, "%s", own);
  free(own);
  return (kelvin_status)code;
}

/* Rows of at least this many bytes are gathered one by one, each straight into its place in the table (no packing,
 * no temporary: a sweep's 1e6-row tables); smaller ones are packed into one gather (fewer calls: a robust batch's
 * hundreds of short rows). */
#define DIRECT_ROW ((size_t)1 << 18)

kelvin_status kl_shard_gather_cols(const kelvin_shard *sh, void *full, size_t rows, size_t n, size_t elem, int root,
                                   char *msg, size_t cap)
{
  if (!kl_shard_on(sh) || rows == 0 || n == 0) return KELVIN_OK;
  const int p = sh->size;
  size_t lo, hi;
  kl_shard_range(sh, n, &lo, &hi);
  const int recv_here = root < 0 || root == sh->rank, direct = n * elem >= DIRECT_ROW;
  size_t *counts = malloc((size_t)p * sizeof *counts);
  unsigned char *send = NULL, *recv = NULL, *f = full;
  if (counts && !direct) {
    send = malloc(rows * (hi - lo) * elem + 1);
    recv = recv_here ? malloc(rows * n * elem) : NULL;
  }
  kelvin_status st = KELVIN_OK;
  if (!counts || (!direct && (!send || (recv_here && !recv)))) {
    snprintf(msg, cap, "out of memory gathering %zu x %zu results", rows, n);
    st = KELVIN_ERR_NOMEM;
  }
  /* every rank goes into the gather, or none (a rank short of memory must not leave the others waiting) */
  if ((st = kl_shard_agree(sh, st, msg, cap)) != KELVIN_OK) {
    free(counts), free(send), free(recv);
    return st;
  }
  if (direct) { /* row t's columns of rank r lie at [start(r), start(r + 1)) of the row: in rank order already */
    for (int r = 0; r < p; ++r) counts[r] = (kl_shard_start(sh, n, r + 1) - kl_shard_start(sh, n, r)) * elem;
    for (size_t t = 0; t < rows && st == KELVIN_OK; ++t) {
      unsigned char *row = f + t * n * elem;
      if (sh->gather(sh->ctx, row + lo * elem, recv_here ? row : NULL, counts, root) != 0) st = KELVIN_ERR_IO;
    }
  } else {
    const size_t w = (hi - lo) * elem; /* bytes of this rank's part of a row */
    for (size_t t = 0; t < rows; ++t) memcpy(send + t * w, f + (t * n + lo) * elem, w);
    for (int r = 0; r < p; ++r) counts[r] = rows * (kl_shard_start(sh, n, r + 1) - kl_shard_start(sh, n, r)) * elem;
    if (sh->gather(sh->ctx, send, recv, counts, root) != 0) {
      st = KELVIN_ERR_IO;
    } else if (recv_here) {
      const unsigned char *blk = recv;
      for (int r = 0; r < p; ++r) {
        const size_t a = kl_shard_start(sh, n, r), b = kl_shard_start(sh, n, r + 1), wr = (b - a) * elem;
        for (size_t t = 0; t < rows; ++t) memcpy(f + (t * n + a) * elem, blk + t * wr, wr);
        blk += counts[r];
      }
    }
  }
  if (st != KELVIN_OK) snprintf(msg, cap, "rank %d: the shard's gather of %zu x %zu results failed", sh->rank, rows, n);
  free(counts), free(send), free(recv);
  return st;
}
