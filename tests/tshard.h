/* tests/tshard.h: a shard (include/kelvin/shard.h) whose ranks are threads of one process, for tests of the
 * sharded paths without MPI: tshard_run starts `size` threads, each calling fn with its own shard, and the
 * hooks meet at a barrier. An independent implementation of the hooks' contract, so that a test can run the
 * same calls on 1, 2 and 3 "ranks" and compare the results bit for bit. */
#ifndef KL_TESTS_TSHARD_H
#define KL_TESTS_TSHARD_H

#include <kelvin/shard.h>

/* Run fn(sh, arg[r]) on threads r = 0 .. size - 1 (size <= 16), each with shard sh of rank r of size (one
 * node); returns when all have. 0 on success, nonzero if a thread could not be started. */
int tshard_run(int size, void (*fn)(const kelvin_shard *sh, void *arg), void **arg);

#endif
