#!/usr/bin/env python3
"""Write tests/data/lambertw.csv: reference values of the Lambert W function on both real branches,
for exactly representable double inputs z, computed with mpmath at 40 digits (and checked against a
second evaluation at 80 digits). Used by kernels/kl_math_test.c.

Run by hand (needs Debian's python3-mpmath, i.e. /usr/bin/python3; never at build time; regen_test checks the committed file, tools/regen):
    /usr/bin/python3 tools/gen_lambertw_table.py > tests/data/lambertw.csv

Columns: branch (0 for W0, -1 for W-1), z (Python repr: the shortest string that reads back as the same
double, what printf %.17g also guarantees), w (W(z) of that exact double, 25 significant digits).
Coverage: W0 on [-1/e, DBL_MAX], W-1 on [-1/e, -1e-300]; dense at the branch point -1/e (the first
40 doubles above it, then -1/e + 2^k ulp, then -1/e + {1,2,5} x 10^-j for j = 15 ... 1) and near 0
(+-1e-300 ... +-1e-3 and two subnormals for W0; -1e-300 ... for W-1), plus fixed-seed log-uniform
random samples."""
import math
import random
import mpmath as mp

mp.mp.dps = 40

INV_E = float(1 / mp.e)                  # the double nearest 1/e: 0.36787944117144233 > 1/e
BRANCH = -INV_E                          # so this double lies just below -1/e (outside the domain)
assert mp.mpf(BRANCH) < -1 / mp.e


def above_branch():
    """Doubles z > -1/e close to it: k ulp above the double -INV_E, and -1/e + 10^-j."""
    zs = []
    z = BRANCH
    for _ in range(40):
        z = math.nextafter(z, 0.0)
        zs.append(z)
    ulp = math.ulp(INV_E)
    for k in range(6, 50, 2):
        zs.append(BRANCH + (2 ** k) * ulp)    # exact: a multiple of the ulp within the binade
    for j in range(15, 0, -1):
        for mnt in (1, 2, 5):
            d = mnt * mp.mpf(10) ** (-j)
            z = float(-1 / mp.e + d)
            if mp.mpf(z) > -1 / mp.e:
                zs.append(z)
    return zs


def w0_inputs():
    zs = above_branch()
    zs += [-0.36, -0.35, -0.3, -0.25, -0.2, -0.1, -0.05, -0.01]
    for e in (300, 200, 100, 50, 20, 14, 10, 8, 5, 3):
        zs += [-(10.0 ** -e), 10.0 ** -e]
    zs += [5e-324, -5e-324, 1e-310, 0.0]
    zs += [0.01, 0.1, 0.5, 1.0, 2.0, 2.718281828459045, 2.9999999999999996, 3.0, 3.0000000000000004,
           10.0, 100.0, 1e3, 1e5]
    zs += [10.0 ** e for e in range(10, 301, 10)]
    zs += [1e302, 1e304, 1e306, 1e307, 1e308, 1.7976931348623157e308]   # top: w e^w overflows there
    rng = random.Random(20240315)
    zs += [10.0 ** rng.uniform(-300, 300) for _ in range(60)]
    zs += [-INV_E * rng.uniform(0.0, 1.0) for _ in range(40)]
    return zs


def wm1_inputs():
    zs = above_branch()
    zs += [-0.36, -0.35, -0.3, -0.25, -0.2, -0.1, -0.05, -0.01]
    for e in (300, 200, 100, 50, 20, 14, 10, 8, 5, 3):
        zs.append(-(10.0 ** -e))
    rng = random.Random(20240316)
    zs += [-(10.0 ** rng.uniform(-300, math.log10(INV_E))) for _ in range(60)]
    zs += [-INV_E * rng.uniform(0.0, 1.0) for _ in range(40)]
    return [z for z in zs if z < 0.0]


def lw(z, k):
    """W_k of the exact double z: 40 digits, cross-checked at 80 (the inputs near -1/e lose up to ~17
    digits to the distance z + 1/e inside mpmath, so 80-digit agreement to 30 digits is required)."""
    w = mp.lambertw(mp.mpf(z), k)
    with mp.workdps(80):
        w2 = mp.lambertw(mp.mpf(z), k)
        assert abs(mp.im(w2)) == 0
        w2 = mp.re(w2)
        if w2 != 0:
            assert abs((mp.re(w) - w2) / w2) < mp.mpf(10) ** -30, (z, k)
            # residual of w e^w = z at 80 digits
            assert abs(w2 * mp.exp(w2) - mp.mpf(z)) <= abs(mp.mpf(z)) * mp.mpf(10) ** -70 + mp.mpf(10) ** -400
    return mp.re(w)


print("branch,z,w")
seen = set()
for k, zs in ((0, w0_inputs()), (-1, wm1_inputs())):
    for z in zs:
        if (k, z) in seen:
            continue
        seen.add((k, z))
        w = lw(z, k)
        print("%d,%s,%s" % (k, repr(z), mp.nstr(w, 25, min_fixed=1, max_fixed=0)))
