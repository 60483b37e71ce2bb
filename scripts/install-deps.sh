#!/usr/bin/env bash
# Install the Debian packages kelvin needs. Idempotent: installs only what is missing and says what.
#   scripts/install-deps.sh            build + run + test dependencies
#   scripts/install-deps.sh --bench    also the peer engines for benchmarks/ (MuJoCo, ODE, Bullet, Simbody, DART)
#   scripts/install-deps.sh --fuzz     also clang and its libFuzzer runtime (tests/fuzz/)
# Works as root or through sudo.
set -euo pipefail

core=(
  build-essential cmake pkg-config
  ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo   # OpenCL loader, headers, CPU device
  libclblast-dev                                               # dense algebra on the device
  libccd-dev                                                   # collision (engine/)
  libassimp-dev                                                # mesh import, STL/OBJ/PLY (engine/)
  libnlopt-dev                                                 # optimiser/
  libyaml-dev                                                  # config files
  libcjson-dev                                                 # JSON reports (cli/)
  libxml2-dev                                                  # URDF robot files (engine/robot_urdf.c)
  libgsl-dev                                                   # reference integrator, Lambert W reference, Sobol
  libcmocka-dev                                                # unit tests
  gnuplot-nox                                                  # figures
)
bench=(libmujoco-dev libode-dev libbullet-dev libsimbody-dev libdart-dev)
fuzz=(clang libclang-rt-14-dev)                                # libFuzzer harnesses (tests/fuzz/)

want=("${core[@]}")
for arg in "$@"; do
  case "$arg" in
    --bench) want+=("${bench[@]}") ;;
    --fuzz) want+=("${fuzz[@]}") ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "install-deps: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#want[@]} packages already installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
