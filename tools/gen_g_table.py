#!/usr/bin/env python3
"""Write tests/data/g.csv: reference values of g(y) = y - log(1 + y) and of its inverse on both
branches (kernels/kl_math.h: kl_g, kl_ginv_upper, kl_ginv_lower), for exactly representable double
arguments, computed with mpmath at 40 significant digits (working precision raised where the
argument is tiny, so that y - log(1 + y) and -1/e + e^{-1-s} do not cancel). Used by
kernels/kl_math_test.c.

Run by hand (needs Debian's python3-mpmath, i.e. /usr/bin/python3; never at build time; regen_test checks the committed file, tools/regen):
    /usr/bin/python3 tools/gen_g_table.py > tests/data/g.csv

Rows:  g,y,g(y),0            for y in (-1, 1e300]
       upper,s,y,0           y >= 0 with g(y) = s
       lower,s,y,u           y in (-1, 0] with g(y) = s, and u = 1 + y (full relative accuracy)
Numbers: arguments as Python repr (round-trips the double), values with 25 significant digits."""
import random
import mpmath as mp

mp.mp.dps = 40


def extra_digits(x):
    """Decimal digits lost to cancellation in y - log1p(y) ~ y^2/2 (or in the branch point) at x."""
    x = abs(mp.mpf(x))
    return 0 if x == 0 or x >= 1 else int(-mp.log10(x)) + 10


def g(y):
    with mp.workdps(40 + extra_digits(y)):
        y = mp.mpf(y)
        return y - mp.log1p(y)


def ginv(s, branch):
    """y with g(y) = s: y = -1 - W_k(-exp(-1 - s)), k = -1 (upper) or 0 (lower); u = -W0(...)."""
    with mp.workdps(60 + 2 * extra_digits(s)):
        s = mp.mpf(s)
        z = -mp.exp(-1 - s)
        w = mp.re(mp.lambertw(z, -1 if branch > 0 else 0))
        y = -1 - w
        # residual check at this precision, in terms of w so that u = -w tiny keeps its digits
        assert abs(-1 - w - mp.log(-w) - s) <= abs(s) * mp.mpf(10) ** -35, (mp.nstr(s, 5), branch)
        return +y, +(-w)


def fmt(x):
    return mp.nstr(x, 25, min_fixed=1, max_fixed=0)


rng = random.Random(20240317)
ys = [-0.9999999999999999, -0.999999, -0.99, -0.9, -0.75, -0.5, -0.2500000000000001, -0.25,
      -0.24999999999999997, -0.1, -1e-3, -1e-8, -1e-20, -1e-150, -1e-300, 1e-300, 1e-150, 1e-20, 1e-8,
      1e-3, 0.1, 0.24999999999999997, 0.25, 0.25000000000000006, 0.5, 1.0, 2.0, 10.0, 1e3, 1e8, 1e20,
      1e100, 1e300]
ys += [rng.uniform(-1.0, 1.0) for _ in range(30)]
ys += [10.0 ** rng.uniform(-300, 300) for _ in range(30)]
ss = [1e-300, 1e-200, 1e-100, 1e-40, 1e-20, 1e-16, 1e-12, 1e-8, 1e-4, 1e-2, 0.1, 0.25, 0.4999999999999999,
      0.5, 0.5000000000000001, 1.0, 1.4999999999999998, 1.5, 1.5000000000000002, 2.0, 5.0, 10.0, 30.0,
      100.0, 300.0, 353.0, 355.0, 700.0, 700.0000000000001, 705.0, 707.0]   # u = 1 + y normal up to s ~ 707
ss += [10.0 ** rng.uniform(-300, 2.845) for _ in range(40)]
ss_upper = ss + [1e3, 1e5, 1e10, 1e50, 1e100, 1e200, 1e300]

print("func,arg,val1,val2")
for y in ys:
    print("g,%s,%s,0" % (repr(y), fmt(g(y))))
for s in ss_upper:
    y, _ = ginv(s, +1)
    print("upper,%s,%s,0" % (repr(s), fmt(y)))
for s in ss:
    y, u = ginv(s, -1)
    print("lower,%s,%s,%s" % (repr(s), fmt(y), fmt(u)))
