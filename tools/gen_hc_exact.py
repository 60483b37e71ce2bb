#!/usr/bin/env python3
"""Print kernels/kl_hc_exact.h: the damping number d = chi v0 of the exact-restitution Hunt-Crossley law
as a function of the restitution cr, Chebyshev pieces fitted to mpmath roots (docs/design.md section 2.3).

Run by hand (needs Debian's python3-mpmath, i.e. /usr/bin/python3; never at build time; regen_test checks
the committed file, tools/regen):
    /usr/bin/python3 tools/gen_hc_exact.py > kernels/kl_hc_exact.h
    /usr/bin/python3 tools/gen_hc_exact.py --check-dense   the dense check (about a minute), no header
    /usr/bin/python3 tools/gen_hc_exact.py --spot          reference values for kernels/kl_hc_exact_test.c

The law. chi is such that the effective restitution of the impact is exactly cr: with d = chi v0 and
g(y) = y - log(1+y) the phase plane gives the exit speed from g(-cr d) = g(d), i.e. the root in (0, 1/cr) of
    d (1 + cr) = log((1 + d) / (1 - cr d)).
Solved here in mpmath (DPS digits) in w = -log(1 - cr d) in (0, inf), where the root stays well conditioned
as cr d -> 1 (small cr): G(w) = (d (1+cr) - log1p(d) - w) / w^2 with d = -expm1(-w) / cr, positive near
w = 0 and negative beyond (1+cr)/cr + 1; bisection, then mpmath's Anderson inside the bracket, the residual
checked (|F| <= 1e-50, F' of order 1).

The fit. The variable s = 1/cr in [1, 2^NOCT] (cr in [2^-NOCT, 1]), one piece per octave
[2^k, 2^(k+1)] (k = 0 .. NOCT-1; the octave is found by comparisons, the piece variable x = s / 2^k * 2 - 3
is exact), the function q(s) = cr d / (1 - cr), which goes from 3/2 at cr = 1 to 1 as cr -> 0 (d = 1/cr up
to a term ~ e^(-1/cr) / cr^2) and has no zero or pole in the domain, so that d = q (1 - cr) / cr keeps its
relative accuracy at both ends (1 - cr is exact for cr >= 1/2). Why octaves: in s the function is flat for
large s (the e^(-s) term) and a piece [a, 2a] sees the singular point s = 0 at 3 half-widths from its centre,
which bounds the degree alike in every octave (measured: 17-21 coefficients for a tail below 1e-17; pieces
of equal width in s needed 40 at s in [1, 9]). Chebyshev interpolation at NFIT first-kind nodes per piece,
truncated to NC coefficients (the tail kept under 1e-17, q >= 1).
The checks: --check-dense solves at 512 points per octave, every default run at 8 per octave, and the fit
must be within 2e-16 relative there (the sum in mpmath, the rounding of the C evaluation comes on top)."""
import argparse
import sys

import mpmath as mp

NOCT = 7      # octaves of s = 1/cr: cr in [2^-7, 1]
NFIT = 28     # interpolation nodes per piece
NC = 22       # coefficients kept per piece
DPS = 80


def d_exact(cr):
    """d = chi v0 of the exact law at restitution cr (mpf) in (0, 1): the root of G in w = -log(1 - cr d)."""
    cr = mp.mpf(cr)

    def G(w):
        p = -mp.expm1(-w)
        d = p / cr
        return (d * (1 + cr) - mp.log1p(d) - w) / (w * w)

    a, b = mp.mpf("1e-6") * (1 - cr), (1 + cr) / cr + 1
    if not (G(a) > 0 and G(b) < 0):
        raise RuntimeError("no bracket at cr = %s" % cr)
    for _ in range(50):  # bisection to 2^-50 of the bracket, then the secant-like solver inside it
        c = (a + b) / 2
        if G(c) > 0:
            a = c
        else:
            b = c
    w = mp.findroot(G, (a, b), solver="anderson", verify=False)
    if not a <= w <= b:
        raise RuntimeError("root left its bracket at cr = %s" % cr)
    p = -mp.expm1(-w)
    d = p / cr
    res = d * (1 + cr) - mp.log1p(d) - w
    # backward error in w: F'(w) = (1 - p) ((1+cr)/cr - 1/(cr + p)) - 1 is of order 1 (-1 for large w)
    if not abs(res) <= mp.mpf(10) ** (-50):
        raise RuntimeError("root not converged at cr = %s: residual %s" % (cr, mp.nstr(res, 5)))
    return d


def q_of_s(s):
    s = mp.mpf(s)
    if s == 1:
        return mp.mpf(3) / 2
    cr = 1 / s
    return d_exact(cr) * cr / (1 - cr)


def fit_piece(k):
    a, b = mp.mpf(2) ** k, mp.mpf(2) ** (k + 1)
    xs = [mp.cos(mp.pi * (j + mp.mpf(1) / 2) / NFIT) for j in range(NFIT)]
    fs = [q_of_s(a + (b - a) * (x + 1) / 2) for x in xs]
    c = [2 * mp.fsum(fs[j] * mp.cos(mp.pi * i * (j + mp.mpf(1) / 2) / NFIT) for j in range(NFIT)) / NFIT
         for i in range(NFIT)]
    c[0] /= 2
    tail = max(abs(v) for v in c[NC:])
    if tail > mp.mpf("1e-17"):
        raise RuntimeError("octave %d: tail %s above 1e-17" % (k, mp.nstr(tail, 3)))
    return [float(v) for v in c[:NC]]


def eval_fit(coefs, s):
    """the fit at s (mpf), the coefficients as the doubles written out, summed in mpmath"""
    k = 0
    while k < NOCT - 1 and s >= 2 ** (k + 1):
        k += 1
    x = s / mp.mpf(2) ** k * 2 - 3
    return mp.fsum(mp.mpf(c) * mp.chebyt(i, x) for i, c in enumerate(coefs[k]))


def check(coefs, per_octave):
    """worst relative error of the fit's d against the root, per_octave points in each octave (not nodes)"""
    worst = mp.mpf(0)
    for k in range(NOCT):
        for j in range(per_octave):
            s = mp.mpf(2) ** k * (1 + (j + mp.mpf(0.3141592653589793)) / per_octave)
            cr = 1 / s
            d = d_exact(cr)
            dfit = eval_fit(coefs, s) * (1 - cr) / cr
            worst = max(worst, abs(dfit - d) / d)
    return worst


def fmt(x):
    return repr(float(x))


def emit(coefs, out):
    w = out.write
    w("""/* kernels/kl_hc_exact.h: the damping number d = chi v0 of the exact-restitution Hunt-Crossley law
 * (KL_LAW_EXACT) as a function of cr (docs/design.md section 2.3).
 * Generated by tools/gen_hc_exact.py (mpmath roots, Chebyshev interpolation); do not edit by hand.
 * d is the root in (0, 1/cr) of d (1 + cr) = log((1 + d) / (1 - cr d)). Inside the domain cr in [2^-%d, 1]
 * (kl_hc_exact_in): with s = 1/cr, one Chebyshev piece per octave [2^k, 2^(k+1)] of s for
 * q = cr d / (1 - cr), and d = q (1 - cr) / cr; the fit is within 2e-16 relative of the root (dense check),
 * the evaluation adds a few roundings. Outside it kl_hc_exact_d (kernels/kl_contact_hc.h) finds the root.
 * Common subset of C17 and OpenCL C 1.2. */
#ifndef KL_HC_EXACT_H
#define KL_HC_EXACT_H
#include "kl_common.h"
#include "kl_cheb.h"

#define KL_HCX_CR_LO %s /* 2^-%d */
#define KL_HCX_NOCT %d /* octaves of s = 1/cr */
#define KL_HCX_NC %d /* coefficients per octave */

/* q(s) = cr d / (1 - cr): [octave][coefficient of T_i(x)], x = s / 2^k * 2 - 3 */
KL_CONSTANT kl_real kl_hcx_q[%d] = {
""" % (NOCT, fmt(2.0 ** -NOCT), NOCT, NOCT, NC, NOCT * NC))
    vals = [v for piece in coefs for v in piece]
    w(",\n".join("  " + ", ".join(fmt(v) for v in vals[k:k + 4]) for k in range(0, len(vals), 4)))
    w("""};

/* 1 inside the domain of the fit */
KL_FN_VEC int kl_hc_exact_in(kl_real cr)
{
  return cr >= KL_HCX_CR_LO && cr <= 1.0;
}

/* The octave k of s = 1 / cr (s in [2^k, 2^(k+1)), the last one closed), by comparisons */
KL_FN_VEC int kl_hcx_octave(kl_real cr)
{
  const kl_real s = 1.0 / cr;
  return """ + " + ".join("(s >= %.1f)" % 2.0 ** j for j in range(1, NOCT)) + """;
}

/* The fit at cr from the coefficients of octave k (kl_hcx_octave(cr) for its value; the fast kernels pass the octave
 * of their block, kernels/kl_impact.h). Straight-line (no loop, no variable index but the table's;
 * kernels/kl_cheb.h), so that the fast kernel vectorises it; any cr and k in [0, NOCT) are safe. */
KL_FN_VEC kl_real kl_hc_exact_fit_at(kl_real cr, int k)
{
  const kl_real s = 1.0 / cr;
  /* 2^-k, times 2, exactly: x in [-1, 1] (a shift, not a chain of selects, which gcc turns into a table the twin's
   * vectorised loop would load from under a mask, host/twin_fast.c) */
  const kl_real scale = 2.0 / (kl_real)(1 << k);
""" + """  const kl_real x = s * scale - 3.0;
  /* T_0(x) ... by doubling and the sum in four partial sums (kernels/kl_cheb.h) */
  kl_real t[KL_HCX_NC];
  kl_cheb_basis(x, KL_HCX_NC, t);
  const kl_real q = kl_cheb_sum(kl_hcx_q + k * KL_HCX_NC, KL_HCX_NC, t);
  return q * ((1.0 - cr) / cr);
}

/* d = chi v0 of the exact law for cr inside the domain (kl_hc_exact_in); cr = 1 gives 0; any cr is safe */
KL_FN_VEC kl_real kl_hc_exact_fit(kl_real cr) { return kl_hc_exact_fit_at(cr, kl_hcx_octave(cr)); }

#endif
""")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check-dense", action="store_true", help="the dense check (about a minute), no header")
    ap.add_argument("--spot", action="store_true", help="reference values for the C test, no header")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    mp.mp.dps = DPS
    if args.spot:
        for cr in ("0.0078125", "0.01", "0.05", "0.1", "0.3", "0.5", "0.7", "0.9", "0.99", "0.999999"):
            print("  {%s, %s}," % (cr, mp.nstr(d_exact(mp.mpf(float(cr))), 20)))
        return 0
    coefs = [fit_piece(k) for k in range(NOCT)]
    worst = check(coefs, 512 if args.check_dense else 8)
    if args.check_dense:
        print("dense check, %d points: worst relative error of d %s" % (512 * NOCT, mp.nstr(worst, 3)))
        return 0 if worst <= mp.mpf("2e-16") else 1
    if not worst <= mp.mpf("2e-16"):
        print("gen_hc_exact: the fit misses 2e-16: " + mp.nstr(worst, 3), file=sys.stderr)
        return 1
    if not args.quiet:
        print("gen_hc_exact: check at %d points, worst relative %s" % (8 * NOCT, mp.nstr(worst, 3)), file=sys.stderr)
    emit(coefs, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
