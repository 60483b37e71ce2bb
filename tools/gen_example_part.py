#!/usr/bin/env python3
"""Write the user-supplied-part example of `kelvin optimise` (examples/part/): a binary STL of a welded
aluminium plate in millimetres (120 x 30 mm, a 0.3 mm weld bead across it at x = 20 mm, a gentle 0.2 mm
waviness along x), and a path planned on its CAD (the flat plate z = 0) as points + normals in metres.
Run: python3 tools/gen_example_part.py [OUTDIR]  (plain Python 3, no packages; default OUTDIR
examples/part next to this script's folder)."""
import math
import os
import struct
import sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "part")
os.makedirs(here, exist_ok=True)


def height(x, y):  # mm
    bead = 0.3 * math.exp(-0.5 * ((x - 20.0) / 1.2) ** 2)
    wave = 0.2 * math.sin(2 * math.pi * x / 90.0)
    return bead + wave


nx, ny = 481, 31  # 0.25 mm along x, 1 mm along y
xs = [-60.0 + 120.0 * i / (nx - 1) for i in range(nx)]
ys = [-15.0 + 30.0 * j / (ny - 1) for j in range(ny)]
tris = []
for j in range(ny - 1):
    for i in range(nx - 1):
        a = (xs[i], ys[j], height(xs[i], ys[j]))
        b = (xs[i + 1], ys[j], height(xs[i + 1], ys[j]))
        c = (xs[i + 1], ys[j + 1], height(xs[i + 1], ys[j + 1]))
        d = (xs[i], ys[j + 1], height(xs[i], ys[j + 1]))
        tris += [(a, b, c), (a, c, d)]
with open(os.path.join(here, "plate_weld_mm.stl"), "wb") as f:
    f.write(b"kelvin example: welded plate, millimetres".ljust(80, b" "))
    f.write(struct.pack("<I", len(tris)))
    for t in tris:
        u = [t[1][k] - t[0][k] for k in range(3)]
        v = [t[2][k] - t[0][k] for k in range(3)]
        n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
        ln = math.sqrt(sum(q * q for q in n))
        f.write(struct.pack("<3f", *[q / ln for q in n]))
        for p in t:
            f.write(struct.pack("<3f", *p))
        f.write(struct.pack("<H", 0))
with open(os.path.join(here, "path.csv"), "w") as f:
    f.write("# path planned on the CAD (flat plate z = 0), metres; normals point out of the part\n")
    f.write("x,y,z,nx,ny,nz\n")
    for i in range(101):
        x = -0.05 + 0.1 * i / 100
        f.write(f"{x:.6f},0,0,0,0,1\n")
print("wrote", here)
