/* benchmarks/flop_count_none.c: kl_flop_count without a C++ compiler. The flops are counted by a C++
 * build of the closed forms with a counting number type (flop_count.cpp); without one there is no count:
 * NaN, which sweep_throughput's table shows as nan GFLOP/s. */
#include <math.h>

#include "benchmarks/flop_count.h"

void kl_flop_count(const kl_flop_scenario *s, size_t n, double *arith, double *transc)
{
  (void)s;
  (void)n;
  *arith = NAN;
  *transc = NAN;
}
