#!/usr/bin/env bash
# Install the Debian packages kelvin needs. Idempotent: installs only what is missing and says what.
#   scripts/install-deps.sh            build + run + test dependencies
#   scripts/install-deps.sh --bench    also the peer engines for benchmarks/ (MuJoCo, ODE, Bullet, Simbody, DART,
#                                      Siconos; node + npm and the WebAssembly peers of benchmarks/maxstep/package.json)
#   scripts/install-deps.sh --fuzz     also clang and its libFuzzer runtime (tests/fuzz/)
#   scripts/install-deps.sh --mpi      also OpenMPI, for a build with -DKELVIN_MPI=ON (scripts/test.sh)
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
  libhdf5-dev libdeflate-dev                                   # kelvin sweep --format hdf5 (io/batch_out.c)
  libcmocka-dev                                                # unit tests
  gnuplot-nox                                                  # figures
  oclgrind                                                     # OpenCL device simulator: tests/oclgrind_test.sh
  python3-mpmath                                               # tools/regen (regen_test): the generated tables
  python3-h5py python3-pandas                                  # h5py_read_test, benchmarks/sweep_e2e.sh: read the tables back
)
bench=(libmujoco-dev libode-dev libbullet-dev libsimbody-dev libdart-dev libsiconos-kernel-dev libsiconos-mechanics-dev
  nodejs)
command -v npm >/dev/null 2>&1 || bench+=(npm) # a nodejs that ships its own npm conflicts with Debian's
fuzz=(clang libclang-rt-14-dev)                                # libFuzzer harnesses (tests/fuzz/)
mpi=(openmpi-bin libopenmpi-dev)                               # mpirun -n N kelvin ... (-DKELVIN_MPI=ON)

want=("${core[@]}")
npm_bench=0
for arg in "$@"; do
  case "$arg" in
    --bench) want+=("${bench[@]}"); npm_bench=1 ;;
    --fuzz) want+=("${fuzz[@]}") ;;
    --mpi) want+=("${mpi[@]}") ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "install-deps: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

# the WebAssembly peers of benchmarks/maxstep (MuJoCo 3, PhysX, Rapier): exact versions from its package.json,
# installed beside it; no lock file is written (it would record the registry's address)
npm_peers() {
  [ "$npm_bench" = 1 ] || return 0
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/benchmarks/maxstep"
  if ! command -v npm >/dev/null 2>&1; then
    echo "install-deps: npm missing: the WebAssembly peers of maxstep are skipped" >&2
    return 0
  fi
  if node -e 'const p=require(process.argv[1]+"/package.json");for(const [n,v] of Object.entries(p.dependencies)){if(require(process.argv[1]+"/node_modules/"+n+"/package.json").version!==v)process.exit(1)}' "$dir" 2>/dev/null; then
    echo "install-deps: WebAssembly peers of maxstep already installed"
    return 0
  fi
  echo "install-deps: installing the WebAssembly peers of maxstep (npm, $dir)"
  (cd "$dir" && npm install --no-package-lock --no-audit --no-fund --loglevel=error) ||
    echo "install-deps: npm install failed: the WebAssembly peers of maxstep are skipped" >&2
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#want[@]} packages already installed"
  npm_peers
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
npm_peers
echo "install-deps: done"
