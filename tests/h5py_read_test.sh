#!/usr/bin/env bash
# tests/h5py_read_test.sh KELVIN WORKDIR: `kelvin sweep` written as CSV and as HDF5, both read with pandas
# (the HDF5 file through h5py, as docs/api.md says), must hold the same columns in the same order, every
# number equal bit for bit, and the units as attributes. Optional: skipped (exit 77) when no python3 on
# the PATH has h5py and pandas (Debian: python3-h5py python3-pandas).
set -euo pipefail
kelvin=$1
dir=$2
py=""
for p in $(type -ap python3 || true); do
  if "$p" -c 'import h5py, pandas' 2>/dev/null; then py=$p; break; fi
done
if [ -z "$py" ]; then
  echo "h5py_read_test: no python3 with h5py and pandas: skipped"
  exit 77
fi
rm -rf "$dir"
mkdir -p "$dir"
"$kelvin" sweep --cpu --no-plot --quiet --out "$dir/csv"
"$kelvin" sweep --cpu --no-plot --quiet --format hdf5 --out "$dir/h5"
"$py" - "$dir" <<'PY'
import sys
import h5py
import numpy as np
import pandas as pd

d = sys.argv[1]
# '-' in the general law's own columns (c, n2, rate_exp) is "does not apply": NaN in the HDF5 file
gen = {k: ["-"] for k in ("c", "n2", "rate_exp")}
c = pd.read_csv(d + "/csv/sweep.csv", float_precision="round_trip", keep_default_na=False, na_values=gen)
with h5py.File(d + "/h5/sweep.h5", "r") as f:
    cols = f.attrs["columns"].decode().split(",")
    h = pd.DataFrame({k: f[k].asstr()[:] if f[k].dtype.kind == "S" else f[k][:] for k in cols})
    units = {k: f[k].attrs["units"].decode() for k in cols}
assert list(c.columns) == cols, (list(c.columns), cols)
assert len(c) == len(h) == 4992, (len(c), len(h))
assert units["fpeak_N"] == "N" and units["v0_m_s"] == "m/s" and units["m_kg"] == "kg", units
for k in cols:
    a, b = c[k].to_numpy(), h[k].to_numpy()
    if a.dtype.kind == "f":
        na, nb = np.isnan(a), np.isnan(b)
        ok = b.dtype == np.float64 and np.array_equal(na, nb) and np.array_equal(a[~na].view(np.uint64), b[~nb].view(np.uint64))
    elif a.dtype.kind in "iu":
        ok = np.array_equal(a, b.astype(np.int64))
    else:
        ok = np.array_equal(a.astype(str), b.astype(str))
    assert ok, k
print("h5py_read_test: %d rows x %d columns equal in sweep.csv and sweep.h5 (pandas %s, h5py %s)"
      % (len(c), len(cols), pd.__version__, h5py.__version__))
PY
