/* kelvin/mpi.h: a shard (kelvin/shard.h) from an MPI communicator, in libkelvin built with -DKELVIN_MPI=ON
 * (docs/design.md section 11). Every rank of the communicator runs the same calls; the collectives are
 * MPI's (MPI_Allgatherv, MPI_Gatherv, MPI_Allreduce, MPI_Bcast on a duplicate of the communicator). */
#ifndef KELVIN_MPI_H
#define KELVIN_MPI_H

#include <mpi.h>

#include <kelvin/shard.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over comm (MPI initialised, not yet finalised): fill *out for this rank, with a duplicate of
 * comm and the rank among those on its node (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED). Release it with
 * kelvin_shard_mpi_free before MPI_Finalize. KELVIN_ERR_ARG (out NULL, MPI not initialised),
 * KELVIN_ERR_NOMEM, KELVIN_ERR_IO (an MPI call failed); *out is zeroed on failure. */
KELVIN_API kelvin_status kelvin_shard_mpi(kelvin_shard *out, MPI_Comm comm);

/* What the shard's collectives have cost this rank so far: their number, the bytes it received in gathers (its
 * own share excluded), and the wall time spent in them (waiting for the slowest rank included). */
typedef struct kelvin_shard_stats {
  long calls;
  double bytes;
  double seconds;
} kelvin_shard_stats;

/* Into *out (zeroed for a shard not made by kelvin_shard_mpi). */
KELVIN_API void kelvin_shard_mpi_stats(const kelvin_shard *sh, kelvin_shard_stats *out);

/* Collective: release what kelvin_shard_mpi made (the duplicate communicator); a zeroed shard or NULL is a
 * no-op. */
KELVIN_API void kelvin_shard_mpi_free(kelvin_shard *sh);

#ifdef __cplusplus
}
#endif
#endif
