/* api/mpi.c: a shard over an MPI communicator (include/kelvin/mpi.h). Byte counts are size_t: a
 * concatenation of 2^31 bytes or more goes rank by rank in pieces MPI's int counts can hold. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "kelvin/mpi.h"

typedef struct mpi_shard {
  MPI_Comm comm;
  kelvin_shard_stats stats;
} mpi_shard;

/* Bytes per MPI call when the whole does not fit an int (1 GiB), and the largest whole that goes in one call
 * (INT_MAX); tests lower both (kl_mpi_set_limits) to run the piecewise path on small tables. */
static size_t piece = (size_t)1 << 30, whole = (size_t)INT_MAX;

void kl_mpi_set_limits(size_t piece_bytes, size_t whole_bytes);
void kl_mpi_set_limits(size_t piece_bytes, size_t whole_bytes)
{
  piece = piece_bytes ? piece_bytes : (size_t)1 << 30;
  whole = whole_bytes && whole_bytes < (size_t)INT_MAX ? whole_bytes : (size_t)INT_MAX;
}

static int gather_mpi(MPI_Comm comm, const void *send, void *recv, const size_t *counts, int root);

static int gather(void *ctx, const void *send, void *recv, const size_t *counts, int root)
{
  mpi_shard *m = ctx;
  const double t0 = MPI_Wtime();
  const int rc = gather_mpi(m->comm, send, recv, counts, root);
  int rank, size;
  MPI_Comm_rank(m->comm, &rank);
  MPI_Comm_size(m->comm, &size);
  if (root < 0 || root == rank)
    for (int r = 0; r < size; ++r) m->stats.bytes += r == rank ? 0.0 : (double)counts[r];
  m->stats.calls++;
  m->stats.seconds += MPI_Wtime() - t0;
  return rc;
}

static int gather_mpi(MPI_Comm comm, const void *send, void *recv, const size_t *counts, int root)
{
  int rank, size;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) return 1;
  size_t total = 0;
  for (int r = 0; r < size; ++r) total += counts[r];
  if (total <= whole) {
    int *ic = malloc(2 * (size_t)size * sizeof *ic);
    if (!ic) return 1;
    int *id = ic + size, off = 0;
    for (int r = 0; r < size; ++r) {
      ic[r] = (int)counts[r];
      id[r] = off;
      off += ic[r];
    }
    int rc;
    /* in place: this rank's part already sits at its place in recv (include/kelvin/shard.h) */
    const void *sb = recv && send == (const unsigned char *)recv + id[rank] ? MPI_IN_PLACE : send;
    if (root < 0)
      rc = MPI_Allgatherv(sb, ic[rank], MPI_BYTE, recv, ic, id, MPI_BYTE, comm);
    else
      rc = MPI_Gatherv(rank == root ? sb : send, ic[rank], MPI_BYTE, recv, ic, id, MPI_BYTE, root, comm);
    free(ic);
    return rc != MPI_SUCCESS;
  }
  /* large: each rank's block in turn, in pieces (broadcast to all, or sent to root) */
  size_t off = 0;
  for (int r = 0; r < size; ++r) {
    for (size_t done = 0; done < counts[r]; done += piece) {
      const int n = (int)(counts[r] - done < piece ? counts[r] - done : piece);
      unsigned char *dst = recv ? (unsigned char *)recv + off + done : NULL;
      int rc = MPI_SUCCESS;
      if (root < 0) {
        const unsigned char *src = (const unsigned char *)send + done;
        if (r == rank && dst != src) memcpy(dst, src, (size_t)n);
        rc = MPI_Bcast(dst, n, MPI_BYTE, r, comm);
      } else if (r == root && rank == root) {
        if (dst != (const unsigned char *)send + done) memcpy(dst, (const unsigned char *)send + done, (size_t)n);
      } else if (rank == r) {
        rc = MPI_Send((const unsigned char *)send + done, n, MPI_BYTE, root, 0, comm);
      } else if (rank == root) {
        rc = MPI_Recv(dst, n, MPI_BYTE, r, 0, comm, MPI_STATUS_IGNORE);
      }
      if (rc != MPI_SUCCESS) return 1;
    }
    off += counts[r];
  }
  return 0;
}

static int agree_mpi(MPI_Comm comm, int *code, char *msg, size_t cap);

static int agree(void *ctx, int *code, char *msg, size_t cap)
{
  mpi_shard *m = ctx;
  const double t0 = MPI_Wtime();
  const int rc = agree_mpi(m->comm, code, msg, cap);
  m->stats.calls++;
  m->stats.seconds += MPI_Wtime() - t0;
  return rc;
}

static int agree_mpi(MPI_Comm comm, int *code, char *msg, size_t cap)
{
  int rank, size;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) return 1;
  int mine = *code != 0 ? rank : size, first = size;
  if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) return 1;
  if (first == size) return 0;
  if (MPI_Bcast(code, 1, MPI_INT, first, comm) != MPI_SUCCESS) return 1;
  if (cap > (size_t)INT_MAX) cap = (size_t)INT_MAX;
  if (cap > 0 && MPI_Bcast(msg, (int)cap, MPI_CHAR, first, comm) != MPI_SUCCESS) return 1;
  if (cap > 0) msg[cap - 1] = '\0';
  return 0;
}

kelvin_status kelvin_shard_mpi(kelvin_shard *out, MPI_Comm comm)
{
  if (!out) return KELVIN_ERR_ARG;
  memset(out, 0, sizeof *out);
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return KELVIN_ERR_ARG;
  mpi_shard *m = calloc(1, sizeof *m);
  if (!m) return KELVIN_ERR_NOMEM;
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_dup(comm, &m->comm) != MPI_SUCCESS) {
    free(m);
    return KELVIN_ERR_IO;
  }
  if (MPI_Comm_rank(m->comm, &out->rank) != MPI_SUCCESS || MPI_Comm_size(m->comm, &out->size) != MPI_SUCCESS ||
      MPI_Comm_split_type(m->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS ||
      MPI_Comm_rank(node, &out->node_rank) != MPI_SUCCESS || MPI_Comm_size(node, &out->node_size) != MPI_SUCCESS) {
    if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
    MPI_Comm_free(&m->comm);
    free(m);
    memset(out, 0, sizeof *out);
    return KELVIN_ERR_IO;
  }
  MPI_Comm_free(&node);
  out->ctx = m;
  out->gather = gather;
  out->agree = agree;
  return KELVIN_OK;
}

void kelvin_shard_mpi_stats(const kelvin_shard *sh, kelvin_shard_stats *out)
{
  if (!out) return;
  memset(out, 0, sizeof *out);
  if (sh && sh->ctx && sh->gather == gather) *out = ((const mpi_shard *)sh->ctx)->stats;
}

void kelvin_shard_mpi_free(kelvin_shard *sh)
{
  if (!sh || !sh->ctx || sh->gather != gather) return;
  mpi_shard *m = sh->ctx;
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Comm_free(&m->comm);
  free(m);
  memset(sh, 0, sizeof *sh);
}
