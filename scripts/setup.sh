#!/usr/bin/env bash
# Installs the build dependencies (only if missing) and configures + builds into build/.
# Idempotent: a second run installs nothing and rebuilds only what changed.
#
# Environment:
#   OZDGEMM_BUILD_DIR   build folder (default: build)
#   OZDGEMM_JOBS        parallel build jobs (default: 2)
#   OZDGEMM_CMAKE_ARGS  extra arguments for the CMake configure step
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"

build_dir=${OZDGEMM_BUILD_DIR:-build}
jobs=${OZDGEMM_JOBS:-2}
cuda_home=${CUDA_HOME:-/usr/local/cuda}

# gfortran, libblas-dev (BLAS + CBLAS, cblas.h) and liblapack-dev: the host BLAS interposition
# tests in tests/interpose (C and Fortran BLAS clients, LAPACK dgesv).
# openmpi-bin, libopenmpi-dev, libscalapack-openmpi-dev: ScaLAPACK under mpirun (tests/mpi).
packages=(cmake ninja-build g++ libspdlog-dev libfmt-dev libgtest-dev libgmp-dev python3-matplotlib
          gfortran libblas-dev liblapack-dev
          openmpi-bin libopenmpi-dev libscalapack-openmpi-dev)
# clang and its sanitizer/libFuzzer runtimes: scripts/sanitize.sh (ASan + UBSan, tests/fuzz).
packages+=(clang libclang-rt-14-dev)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if ((EUID == 0)); then
    sudo=()
  elif command -v sudo >/dev/null; then
    sudo=(sudo)
  else
    echo "setup: error: missing packages (${missing[*]}) and not root, no sudo" >&2
    exit 1
  fi
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "setup: system packages present"
fi

if [[ ! -x $cuda_home/bin/nvcc ]]; then
  echo "setup: error: $cuda_home/bin/nvcc not found. Install the CUDA toolkit (13.0) there or" \
       "set CUDA_HOME to its location." >&2
  exit 1
fi
export PATH="$cuda_home/bin:$PATH"
export CUDACXX="$cuda_home/bin/nvcc"

# shellcheck disable=SC2086  # OZDGEMM_CMAKE_ARGS is a list of words on purpose
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${OZDGEMM_CMAKE_ARGS:-}
cmake --build "$build_dir" -j"$jobs"
