#!/usr/bin/env bash
# The main job from a fresh clone: install what is missing, build, and run `kelvin` on its built-in
# default example. Extra arguments go to kelvin, e.g. scripts/run.sh --out results
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
exec ./build/kelvin optimise "$@"
