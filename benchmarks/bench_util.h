/* benchmarks/bench_util.h: the timing and argument helpers the benchmark programs share (header only). */
#ifndef KL_BENCH_UTIL_H
#define KL_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KL_BENCH_MAXREP 64

/* Seconds on a monotonic clock. */
static inline double kl_bench_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int kl_bench_cmp(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of n <= KL_BENCH_MAXREP values (v is left as it is). */
static inline double kl_bench_median(const double *v, int n)
{
  double t[KL_BENCH_MAXREP];
  if (n > KL_BENCH_MAXREP) n = KL_BENCH_MAXREP;
  memcpy(t, v, (size_t)n * sizeof *t);
  qsort(t, (size_t)n, sizeof *t, kl_bench_cmp);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Sleep 20 ms after an OpenMP region: its idle workers spin-wait for a while and would otherwise take
 * cores from whatever is timed next (an OpenCL CPU device's threads, a serial loop). */
static inline void kl_bench_settle(void)
{
  const struct timespec pause = {0, 20000000};
  nanosleep(&pause, NULL);
}

/* For an argument the program does not take: --help (or -h) prints usage on stdout and gives exit
 * status 0; anything else prints it on stderr and gives 2. Returns that status. */
static inline int kl_bench_usage(const char *arg, const char *usage)
{
  const int help = strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
  fputs(usage, help ? stdout : stderr);
  return help ? 0 : 2;
}

#endif
