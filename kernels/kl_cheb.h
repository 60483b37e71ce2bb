/* kernels/kl_cheb.h: Chebyshev series in straight-line code, for the generated fits (kernels/kl_hc_master.h,
 * kernels/kl_hc_exact.h; docs/design.md section 2.3).
 * kl_cheb_basis: T_0(x) ... T_{N-1}(x) by doubling, T_2k = 2 T_k^2 - 1 and T_2k+1 = 2 T_k T_k+1 - x (a chain of
 * log2(N) dependent steps instead of the recurrence's N - 2; each T within a few ulps for |x| <= 1).
 * kl_cheb_sum: sum_j c[j] T_j in four partial sums (terms j = 4i + r into the r-th, each from 0.0, in increasing j),
 * added pairwise: chains of N / 4 dependent operations instead of Clenshaw's N.
 * Written out term by term, with no loop and no index that is not a constant: with N a constant (every caller's),
 * the tests `N > k` fold away once inlined, the array t lives in registers, and a loop over scenarios that calls
 * them stays straight-line, which is what the device compiler needs to vectorise it across work-items (the fast
 * kernel of kernels/impact.cl; a loop here, or t indexed by a variable, keeps it scalar). N <= 24.
 * Common subset of C17 and OpenCL C 1.2. */
#ifndef KL_CHEB_H
#define KL_CHEB_H
#include "kl_common.h"

#define KL_CHEB_NMAX 24

/* a pointer into a constant table */
#ifdef __OPENCL_VERSION__
#define KL_CHEB_CPTR __constant const kl_real *
#else
#define KL_CHEB_CPTR const kl_real *
#endif

/* T_0(x) ... T_{N-1}(x) into t[0 .. N-1], 2 <= N <= KL_CHEB_NMAX */
KL_FN_VEC void kl_cheb_basis(kl_real x, int N, kl_real *t)
{
  t[0] = 1.0;
  t[1] = x;
  if (N > 2) t[2] = 2.0 * t[1] * t[1] - 1.0;
  if (N > 3) t[3] = 2.0 * t[1] * t[2] - x;
  if (N > 4) t[4] = 2.0 * t[2] * t[2] - 1.0;
  if (N > 5) t[5] = 2.0 * t[2] * t[3] - x;
  if (N > 6) t[6] = 2.0 * t[3] * t[3] - 1.0;
  if (N > 7) t[7] = 2.0 * t[3] * t[4] - x;
  if (N > 8) t[8] = 2.0 * t[4] * t[4] - 1.0;
  if (N > 9) t[9] = 2.0 * t[4] * t[5] - x;
  if (N > 10) t[10] = 2.0 * t[5] * t[5] - 1.0;
  if (N > 11) t[11] = 2.0 * t[5] * t[6] - x;
  if (N > 12) t[12] = 2.0 * t[6] * t[6] - 1.0;
  if (N > 13) t[13] = 2.0 * t[6] * t[7] - x;
  if (N > 14) t[14] = 2.0 * t[7] * t[7] - 1.0;
  if (N > 15) t[15] = 2.0 * t[7] * t[8] - x;
  if (N > 16) t[16] = 2.0 * t[8] * t[8] - 1.0;
  if (N > 17) t[17] = 2.0 * t[8] * t[9] - x;
  if (N > 18) t[18] = 2.0 * t[9] * t[9] - 1.0;
  if (N > 19) t[19] = 2.0 * t[9] * t[10] - x;
  if (N > 20) t[20] = 2.0 * t[10] * t[10] - 1.0;
  if (N > 21) t[21] = 2.0 * t[10] * t[11] - x;
  if (N > 22) t[22] = 2.0 * t[11] * t[11] - 1.0;
  if (N > 23) t[23] = 2.0 * t[11] * t[12] - x;
}

/* sum_{j < N} c[j] T_j with t from kl_cheb_basis, 1 <= N <= KL_CHEB_NMAX */
KL_FN_VEC kl_real kl_cheb_sum(KL_CHEB_CPTR c, int N, const kl_real *t)
{
  kl_real s0 = 0.0 + c[0] * t[0], s1 = 0.0, s2 = 0.0, s3 = 0.0;
  if (N > 1) s1 += c[1] * t[1];
  if (N > 2) s2 += c[2] * t[2];
  if (N > 3) s3 += c[3] * t[3];
  if (N > 4) s0 += c[4] * t[4];
  if (N > 5) s1 += c[5] * t[5];
  if (N > 6) s2 += c[6] * t[6];
  if (N > 7) s3 += c[7] * t[7];
  if (N > 8) s0 += c[8] * t[8];
  if (N > 9) s1 += c[9] * t[9];
  if (N > 10) s2 += c[10] * t[10];
  if (N > 11) s3 += c[11] * t[11];
  if (N > 12) s0 += c[12] * t[12];
  if (N > 13) s1 += c[13] * t[13];
  if (N > 14) s2 += c[14] * t[14];
  if (N > 15) s3 += c[15] * t[15];
  if (N > 16) s0 += c[16] * t[16];
  if (N > 17) s1 += c[17] * t[17];
  if (N > 18) s2 += c[18] * t[18];
  if (N > 19) s3 += c[19] * t[19];
  if (N > 20) s0 += c[20] * t[20];
  if (N > 21) s1 += c[21] * t[21];
  if (N > 22) s2 += c[22] * t[22];
  if (N > 23) s3 += c[23] * t[23];
  return (s0 + s1) + (s2 + s3);
}

#endif
