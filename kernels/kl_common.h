/* kernels/kl_common.h: first include of every closed-form header.
 * Written in the common subset of C17 and OpenCL C 1.2, so the same text is compiled into the OpenCL
 * programs and into the host library (docs/design.md section 1: one source of truth for the physics). */
#ifndef KL_COMMON_H
#define KL_COMMON_H

#ifdef __OPENCL_VERSION__ /* the device compiler defines this; host compilers do not */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF /* no silent fma: host and device must round alike */
#define KL_CONSTANT __constant
#define KL_GLOBAL __global /* pointer into a device buffer; plain pointer on the host */
#else
#include <math.h>
#define KL_CONSTANT static const
#define KL_GLOBAL
#endif

/* Inlining on the device is left to its compiler (KL_FN), except for the functions of the rollout's
 * sub-step that pocl 3.1 (LLVM) otherwise leaves as calls inside its loop (KL_FN_HOT: kl_kv_bas_at,
 * kl_kv_apply, kl_kv_poly_step, kl_expm1, kl_powr, kl_xrb_*, kl_grind_sigma, kl_grind_e2; found with
 * objdump on pocl's kernel binary). Forcing every closed form inline, as before, bought nothing more
 * (`kelvin optimise --screening 2048 examples/optimise.yaml` 5.3-6.3 s against 6.3-6.6 s forced,
 * interleaved runs) and made a cold build of kernels/rollout.cl cost 8.7 s of CPU instead of 3.5 s
 * (kl_grind_batch; kl_grind_tl_batch's work-group compile 8.0 s instead of 2.3 s).
 * -DKL_NO_FORCE_INLINE leaves KL_FN_HOT to the compiler too (kernels/impact.cl does). gcc inlines them
 * anyway (measured: forcing it there changes nothing). Safe in OpenCL C 1.2 and C; no symbols leak.
 * -DKL_INLINE_ALL (the host passes it to Oclgrind, host/device.c) forces every KL_FN inline as well and keeps
 * no function out of line: Oclgrind 21.10 cannot run a program whose functions were inlined into
 * functions that stay calls ("Undefined external function: llvm.experimental.noalias.scope.decl"). */
#if defined(__OPENCL_VERSION__) && defined(KL_INLINE_ALL) && !defined(KL_NO_FORCE_INLINE)
#define KL_FN static inline __attribute__((always_inline))
#else
#define KL_FN static inline
#endif
#if defined(__OPENCL_VERSION__) && !defined(KL_NO_FORCE_INLINE)
#define KL_FN_HOT static inline __attribute__((always_inline))
#else
#define KL_FN_HOT static inline
#endif

/* The functions of a loop body the device compiler is to vectorise across work-items (the contact-time
 * quadrature of kernels/impact.cl): always inlined on the device, KL_NO_FORCE_INLINE or not, since a
 * call keeps the loop scalar; and in the twin's vectorised loops (KL_TWIN_VEC, host/twin_fast.c). */
#if defined(__OPENCL_VERSION__) || defined(KL_TWIN_VEC)
#define KL_FN_VEC static inline __attribute__((always_inline))
#else
#define KL_FN_VEC static inline
#endif

typedef double kl_real; /* double precision is the default (docs/design.md section 4) */

#define KL_PI 3.14159265358979323846 /* M_PI is not ISO C: absent under -std=c17 */
#define KL_E 2.71828182845904523536
/* 1/e split into a double and its rounding error, so z + 1/e is exact near z = -1/e */
#define KL_INV_E_HI 0.36787944117144233
#define KL_INV_E_LO (-1.2428753672788363168e-17)
#define KL_EPS 2.220446049250313e-16
#define KL_HUGE 1.0e300
#define KL_DBL_MIN 2.2250738585072014e-308 /* the smallest normal double */

/* Status bits a closed form reports instead of returning NaN (per-scenario status word). */
#define KL_OK 0
#define KL_BAD_MASS 1      /* m not finite or <= 0 */
#define KL_BAD_STIFFNESS 2 /* K not finite or <= 0 */
#define KL_BAD_CR 4        /* cr outside (0, 1] */
#define KL_BAD_SPEED 8     /* impact speed not finite or <= 0 */
#define KL_BAD_EXPONENT 16 /* n not finite or <= 0 */
#define KL_BAD_LAW 32      /* unknown damping law / model / rule code */
#define KL_NO_CONVERGE 64  /* an iteration did not reach its tolerance */
#define KL_BAD_INPUT 128   /* any other non-finite or out-of-range input */

KL_FN kl_real kl_sq(kl_real x) { return x * x; }

/* The bits of a double and back (kl_log_reduced, kl_exp): OpenCL's as_long/as_double, a union in C.
 * The counting build of benchmarks/flop_count.cpp brings its own (KL_HAVE_BITS). */
#ifndef KL_HAVE_BITS
#ifdef __OPENCL_VERSION__
typedef long kl_i64;
#define kl_bits(x) as_long(x)
#define kl_from_bits(b) as_double(b)
#else
#include <stdint.h>
typedef int64_t kl_i64;
KL_FN_VEC kl_i64 kl_bits(double x)
{
  union {
    double d;
    kl_i64 i;
  } u;
  u.d = x;
  return u.i;
}
KL_FN_VEC double kl_from_bits(kl_i64 b)
{
  union {
    double d;
    kl_i64 i;
  } u;
  u.i = b;
  return u.d;
}
#endif
#endif

/* Illinois method (regula falsi that halves the value at the end that stays): the next trial point
 * inside the bracket [a, b], whose values fa and fb have opposite signs. */
KL_FN kl_real kl_illinois_point(kl_real a, kl_real fa, kl_real b, kl_real fb)
{
  const kl_real c = (a * fb - b * fa) / (fb - fa);
  return (c > a && c < b) ? c : 0.5 * (a + b);
}

/* Shrink the bracket with the trial point c of value fc; to_a: c lies on a's side of the root. */
KL_FN void kl_illinois_update(kl_real *a, kl_real *fa, kl_real *b, kl_real *fb, kl_real c, kl_real fc, int to_a,
                              int *side)
{
  if (to_a) {
    *a = c;
    *fa = fc;
    if (*side == -1) *fb *= 0.5;
    *side = -1;
  } else {
    *b = c;
    *fb = fc;
    if (*side == 1) *fa *= 0.5;
    *side = 1;
  }
}

/* x^n for x >= 0, with exact shortcuts for the exponents the contact laws use (1, 1.5, 2, 2.5):
 * pow in OpenCL CPU compilers measured ten times slower than x sqrt(x) (pocl 3.1) */
KL_FN kl_real kl_pown(kl_real x, kl_real n)
{
  if (n == 1.0) return x;
  if (n == 1.5) return x * sqrt(x);
  if (n == 2.0) return x * x;
  if (n == 2.5) return x * x * sqrt(x);
  return pow(x, n);
}
KL_FN int kl_finite(kl_real x) { return isfinite(x) ? 1 : 0; }

#endif
