/* tests/mpi_shard_test.c: the shard over MPI (api/mpi.c, include/kelvin/mpi.h), run by ctest under
 * `mpirun --oversubscribe -n 1|2|3`: a table's columns gathered to every rank and to one, through MPI's single
 * calls and through the piecewise path for tables beyond an int's count (forced here on small tables with
 * kl_mpi_set_limits); the agreement naming the lowest failing rank; the statistics counting what was received.
 * Expectations by hand: column k of row t holds 1000 t + k wherever it was computed. Exit 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "core/shard.h"
#include "kelvin/mpi.h"

void kl_mpi_set_limits(size_t piece_bytes, size_t whole_bytes); /* api/mpi.c, for tests */

static int fails;
#define CHECK(c, ...)                                                                                                  \
  do {                                                                                                                 \
    if (!(c)) {                                                                                                        \
      fprintf(stderr, "mpi_shard_test: rank %d: ", rank), fprintf(stderr, __VA_ARGS__), fputc('\n', stderr);           \
      ++fails;                                                                                                         \
    }                                                                                                                  \
  } while (0)

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  kelvin_shard sh;
  CHECK(kelvin_shard_mpi(&sh, MPI_COMM_WORLD) == KELVIN_OK, "kelvin_shard_mpi failed");
  CHECK(sh.rank == rank && sh.size == size && sh.node_size == size && sh.node_rank == rank,
        "rank %d of %d, node %d of %d", sh.rank, sh.size, sh.node_rank, sh.node_size);
  enum { ROWS = 3, N = 13 };
  const size_t limits[2][2] = {{0, 0}, {5, 64}}; /* MPI's single calls; pieces of 5 bytes above 64 bytes */
  double expect_bytes = 0;
  for (int li = 0; li < 2; ++li) {
    kl_mpi_set_limits(limits[li][0], limits[li][1]);
    for (int root = -1; root < size; ++root) {
      double t[ROWS * N];
      for (int i = 0; i < ROWS * N; ++i) t[i] = -1;
      size_t lo, hi;
      kl_shard_range(&sh, N, &lo, &hi);
      for (size_t k = lo; k < hi; ++k)
        for (int r = 0; r < ROWS; ++r) t[r * N + (int)k] = 1000.0 * r + (double)k;
      char msg[128] = "";
      CHECK(kl_shard_gather_cols(&sh, t, ROWS, N, sizeof(double), root, msg, sizeof msg) == KELVIN_OK, "gather: %s",
            msg);
      if (root < 0 || root == rank) {
        for (int r = 0; r < ROWS; ++r)
          for (int k = 0; k < N; ++k)
            CHECK(t[r * N + k] == 1000.0 * r + k, "limits %d root %d: t[%d][%d] = %g", li, root, r, k, t[r * N + k]);
        if (size > 1) expect_bytes += (double)(ROWS * (N - (hi - lo)) * sizeof(double));
      } else {
        CHECK(t[0] == (lo == 0 ? 0.0 : -1.0), "limits %d root %d: a rank that does not receive was written", li, root);
      }
    }
  }
  /* rows of 320 KB: gathered row by row in place (core/shard.c), through both MPI paths */
  enum { BR = 2, BN = 40000 };
  double *big = malloc(sizeof(double) * BR * BN);
  long big_calls = 0;
  for (int li = 0; li < 2; ++li) {
    kl_mpi_set_limits(li ? 4096 : 0, li ? 100000 : 0);
    for (int root = -1; root < size; root += size) { /* to all, and to the last rank */
      for (int i = 0; i < BR * BN; ++i) big[i] = -1;
      size_t lo, hi;
      kl_shard_range(&sh, BN, &lo, &hi);
      for (size_t k = lo; k < hi; ++k)
        for (int r = 0; r < BR; ++r) big[r * BN + (int)k] = 1e6 * r + (double)k;
      char m[128] = "";
      CHECK(kl_shard_gather_cols(&sh, big, BR, BN, sizeof(double), root, m, sizeof m) == KELVIN_OK, "long rows: %s", m);
      if (size > 1) big_calls += 1 + BR; /* the agreement on memory, then a gather per row */
      if (root < 0 || root == rank) {
        int bad = 0;
        for (int r = 0; r < BR; ++r)
          for (int k = 0; k < BN; ++k) bad += big[r * BN + k] != 1e6 * r + k;
        CHECK(bad == 0, "long rows, limits %d root %d: %d values wrong", li, root, bad);
        if (size > 1) expect_bytes += (double)(BR * (BN - (hi - lo)) * sizeof(double));
      }
    }
  }
  free(big);
  /* the agreement: ranks 1 and 2 fail, rank 1's message wins everywhere */
  char msg[64];
  snprintf(msg, sizeof msg, "trouble on %d", rank);
  const kelvin_status mine = rank == 1 ? KELVIN_ERR_STOPPED : rank == 2 ? KELVIN_ERR_IO : KELVIN_OK;
  const kelvin_status got = kl_shard_agree(&sh, mine, msg, sizeof msg);
  if (size == 1) {
    CHECK(got == KELVIN_OK && strcmp(msg, "trouble on 0") == 0, "one rank: %d '%s'", (int)got, msg);
  } else {
    CHECK(got == KELVIN_ERR_STOPPED, "agreed status %d", (int)got);
    CHECK(strcmp(msg, "rank 1: trouble on 1") == 0, "agreed message '%s'", msg);
  }
  kelvin_shard_stats st;
  kelvin_shard_mpi_stats(&sh, &st);
  /* each small gather: an agreement on memory and the gather; then the long rows; then the agreement above */
  CHECK(size == 1 || (st.bytes == expect_bytes && st.calls == 2 * 2L * (size + 1) + big_calls + 1),
        "stats: %ld calls, %g bytes (%g)", st.calls, st.bytes, expect_bytes);
  kelvin_shard_mpi_free(&sh);
  int all = 0;
  MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 0) printf("mpi_shard_test: %d ranks, %s\n", size, all ? "FAILED" : "ok");
  return all != 0;
}
