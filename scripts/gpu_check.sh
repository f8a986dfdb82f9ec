#!/usr/bin/env bash
# Runs the GPU test suites on a machine with a GPU, selected by ctest label:
#
#   scripts/gpu_check.sh [SUITE] [CTEST ARGUMENTS...]
#
#   unit         GoogleTests of the engine, the C API and the host reference (tests/gpu)
#   interpose    real programs under LD_PRELOAD: the cuBLAS client, the host path, netlib's
#                level-3 BLAS testers, PyTorch/CuPy
#   reliability  bad input, load, graph capture, fork, exit, injected faults, workspace limits
#   mpi          GPU per rank from the launchers' variables, processes sharing a GPU, ScaLAPACK
#                with every dgemm_ emulated (where the machine has mpirun and ScaLAPACK)
#   multi-gpu    the host path with several workers, on every listed GPU
#   sanitize     compute-sanitizer (memcheck, racecheck, synccheck) over the suite
#   all          every GPU-labelled test, then sanitize (the default)
#
# It runs from any checkout path, with the build folder OZDGEMM_BUILD_DIR (default build/ of
# this checkout), which may have been configured on another machine or at another path (a
# machine without a GPU builds, this one runs): ctest's files hold absolute paths, so they are
# first rewritten to where the checkout and the build folder are now. The test programs need
# no other file from the configuring machine: the build folder's runtime-libs/ holds the CPU
# BLAS, LAPACK and Fortran runtime of the interposition tests.
#
# Writes OZDGEMM_OUT (default out/ of this checkout)/gpu.txt (GPU, driver, the build's commit,
# date) and, per suite, gpu_<suite>.log and gpu_<suite>.xml (JUnit). Exit status 0 when every
# selected test passed. A test that skips is reported by ctest as skipped, never as passed.
set -uo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
suite=${1:-all}
(($#)) && shift
build=$(cd "${OZDGEMM_BUILD_DIR:-$repo_root/build}" 2>/dev/null && pwd) ||
  { echo "gpu_check: no build folder at ${OZDGEMM_BUILD_DIR:-$repo_root/build}" >&2; exit 2; }
out=${OZDGEMM_OUT:-$repo_root/out}
mkdir -p "$out"
out=$(cd "$out" && pwd)

case $suite in
  unit | interpose | reliability | mpi | multi-gpu | sanitize | all) ;;
  *) echo "gpu_check: unknown suite '$suite' (unit, interpose, reliability, mpi, multi-gpu," \
          "sanitize, all)" >&2
     exit 2 ;;
esac

# sed replacement text and pattern for a literal string.
sed_pattern() { printf '%s' "$1" | sed 's/[][\.*^$|/]/\\&/g'; }
sed_text() { printf '%s' "$1" | sed 's/[\&|]/\\&/g'; }

# Rewrites the build folder's ctest files from the paths it was configured at (CMakeCache.txt,
# or relocated.txt after an earlier move) to the build folder's and the checkout's paths now.
relocate() {
  local cache=$build/CMakeCache.txt from_build from_source
  [[ -f $cache ]] || { echo "gpu_check: $build is not a CMake build folder" >&2; exit 2; }
  if [[ -f $build/relocated.txt ]]; then
    read -r from_build from_source < "$build/relocated.txt"
  else
    from_build=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$cache")
    from_source=$(sed -n 's/^ozdgemm_SOURCE_DIR:STATIC=//p' "$cache")
  fi
  # gtest_discover_tests' files include CMake's GoogleTestAddTests.cmake from where CMake was
  # installed on the configuring machine: a machine with the same paths but another CMake needs
  # the build folder's copy (cmake-modules/) as well.
  local module
  module=$(grep -rhos --include='*_include.cmake' 'include("[^"]*/GoogleTestAddTests\.cmake")' \
             "$build" | head -n 1 | sed 's/^include("\(.*\)")$/\1/')
  [[ $from_build == "$build" && $from_source == "$repo_root" && ( -z $module || -f $module ) ]] &&
    return 0
  echo "relocating the test files of $build: build $from_build -> $build," \
       "source $from_source -> $repo_root"
  local files
  mapfile -t files < <(find "$build" \( -name CTestTestfile.cmake -o -name '*_include.cmake' \
                                         -o -name '*_tests.cmake' \) -not -path '*/CMakeFiles/*')
  # The build folder first: it usually lies inside the source folder it came with. The marker
  # keeps a source path that contains the new build path from being rewritten twice.
  local marker=@OZDGEMM_BUILD_DIR@
  local times=() i
  for i in "${!files[@]}"; do times[i]=$(stat -c %Y "${files[i]}"); done
  sed -i -e "s|$(sed_pattern "$from_build")|$marker|g" \
         -e "s|$(sed_pattern "$from_source")|$(sed_text "$repo_root")|g" \
         -e "s|$marker|$(sed_text "$build")|g" \
         -e "s|include(\"[^\"]*/GoogleTestAddTests\.cmake\")|include(\"$(sed_text "$build")/cmake-modules/GoogleTestAddTests.cmake\")|" \
         "${files[@]}"
  # Each file keeps its time, so that ctest's rule for the lists of GoogleTests still holds: a
  # list newer than its binary is used as it is, an older one (a test added since ctest last ran
  # where the build was made) is made again here from the binary.
  for i in "${!files[@]}"; do touch -d "@${times[i]}" "${files[i]}"; done
  printf '%s %s\n' "$build" "$repo_root" > "$build/relocated.txt"
}
relocate

{
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1
  else
    echo "nvidia-smi: not available (no NVIDIA driver: the GPU tests will skip)"
  fi
  echo "CUDA runtime: $(ldd "$build/libozdgemm.so" 2>/dev/null | awk '/libcudart/ {print $3}')"
  # The build's own commit: the build folder may come from another machine and another checkout.
  echo "build from commit $(cat "$build/build_commit.txt" 2>/dev/null || echo unknown)," \
       "checkout at $(git -C "$repo_root" rev-parse --short HEAD 2>/dev/null || echo unknown)," \
       "$(date -u +%FT%TZ)"
} | tee "$out/gpu.txt"

status=0
# run NAME LABEL...: the tests carrying every label, with their log and JUnit report.
run() {
  local name=$1 labels=()
  shift
  for l in "$@"; do labels+=(-L "^$l\$"); done
  echo "== $name: ctest ${labels[*]}"
  ctest --test-dir "$build" "${labels[@]}" --output-on-failure --no-tests=error \
    --output-junit "$out/gpu_$name.xml" "${ctest_args[@]}" 2>&1 | tee "$out/gpu_$name.log"
  ((PIPESTATUS[0] == 0)) || status=1
}
ctest_args=("$@")
case $suite in
  all) run all gpu; run sanitize sanitize ;;
  sanitize) run sanitize sanitize ;;
  *) run "$suite" gpu "$suite" ;;
esac
echo "== gpu_check $suite: $([[ $status == 0 ]] && echo passed || echo FAILED) (logs in $out)"
exit $status
