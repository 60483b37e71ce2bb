/* benchmarks/flop_count.h: floating-point operations of kl_impact per scenario, counted by a C++
 * build of the same headers with a counting number type (benchmarks/flop_count.cpp). */
#ifndef KL_FLOP_COUNT_H
#define KL_FLOP_COUNT_H
#include <stddef.h>

/* One scenario (the fields of kl_impact_in, as plain doubles and ints). */
typedef struct kl_flop_scenario {
  double m, K, n, cr, v0, fe;
  int model, law, rule;
} kl_flop_scenario;

/* Mean over the n scenarios s of the arithmetic flops (+ - * / sqrt) and of the transcendental calls
 * (exp, expm1, log, log1p, pow, sin, cos, tgamma) one kl_impact evaluation executes. */
void kl_flop_count(const kl_flop_scenario *s, size_t n, double *arith, double *transc);

#endif
