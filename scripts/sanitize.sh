#!/usr/bin/env bash
# ASan + UBSan build of the host code (clang, -DOZDGEMM_SANITIZE=ON -DOZDGEMM_FUZZ=ON) in its
# own build folder, then the CPU tests that make sense there (the GoogleTest suite, the
# security test), the fuzz corpus and a bounded
# libFuzzer run (tests/fuzz). Any sanitizer finding aborts its test, so the run fails.
#
# What is instrumented: every C/C++ object (src/, tests/, the fuzz target). Not: the CUDA
# kernels and nvcc's host side (device code cannot be ASan'd), the CUDA libraries. Nothing here
# launches a kernel, so the kernels are built for one architecture only
# (OZDGEMM_SANITIZE_CUDA_ARCHITECTURES, default 90-real): the default list's six took a fifth of
# this build.
# What is not run here:
#   - label "interpose" (programs run under LD_PRELOAD=libozdgemm.so): an uninstrumented
#     program cannot preload an ASan-built library unless the ASan runtime comes first in
#     the initial library list, and clang leaves that runtime out of shared libraries; the
#     library's code (config, decision, BLAS resolution) is covered through the security
#     probe and the fuzz target instead;
#   - exported_symbols (checks libozdgemm.so, which this build does not make).
#
# Environment:
#   OZDGEMM_SANITIZE_BUILD_DIR  build folder (default: build-sanitize)
#   OZDGEMM_JOBS                parallel build jobs (default: 2)
#   OZDGEMM_FUZZ_SECONDS        length of the bounded fuzzing run (default: 60)
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"

build_dir=${OZDGEMM_SANITIZE_BUILD_DIR:-build-sanitize}
jobs=${OZDGEMM_JOBS:-2}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
export PATH="$cuda_home/bin:$PATH"
export CUDACXX="$cuda_home/bin/nvcc"

# Read when CMake configures tests/fuzz.
export OZDGEMM_FUZZ_SECONDS=${OZDGEMM_FUZZ_SECONDS:-60}

start=$(date +%s)
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CUDA_HOST_COMPILER=g++ \
  -DOZDGEMM_SANITIZE=ON -DOZDGEMM_FUZZ=ON -DOZDGEMM_BUILD_BENCH=OFF -DOZDGEMM_BUILD_EXAMPLES=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="${OZDGEMM_SANITIZE_CUDA_ARCHITECTURES:-90-real}" \
  ${OZDGEMM_CMAKE_ARGS:-}
cmake --build "$build_dir" -j"$jobs" --target ozdgemm_cpu_tests security_settings_probe \
  security_fake_blas ozdgemm_fuzz
built=$(date +%s)

# allocator_may_return_null: a request too large for ASan's allocator must reach the library
# as std::bad_alloc (mapped to a status), as it would without ASan. detect_leaks: the library
# leaks a few objects on purpose (reachable from statics), which LeakSanitizer does not count.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The GoogleTest CPU suite in one process per job, GoogleTest's shards (ctest would start one
# ASan process per test, each paying ASan's start-up with the CUDA libraries loaded: 6 minutes
# instead of about 1). Each shard's output goes to its own log, shown when it fails.
pids=()
for ((i = 0; i < jobs; ++i)); do
  GTEST_TOTAL_SHARDS=$jobs GTEST_SHARD_INDEX=$i "$build_dir/ozdgemm_cpu_tests" --gtest_brief=1 \
    > "$build_dir/cpu_tests_shard$i.log" 2>&1 &
  pids+=($!)
done
failed=0
for ((i = 0; i < jobs; ++i)); do
  if ! wait "${pids[$i]}"; then
    cat "$build_dir/cpu_tests_shard$i.log"
    failed=1
  fi
  grep -E '^\[  (PASSED|FAILED) +\]' "$build_dir/cpu_tests_shard$i.log" | tail -n 1 || true
done
((failed == 0)) || { echo "sanitize: the CPU suite failed under ASan/UBSan" >&2; exit 1; }
ctest --test-dir "$build_dir" --output-on-failure --no-tests=error -L cpu \
  -R '^(security|fuzz)[.]' -j"$jobs"
echo "sanitize: build $((built - start)) s, tests $(($(date +%s) - built)) s"
