#!/usr/bin/env bash
# Runs the GPU tests on the GPU machine, from the repo root, with a build/ made elsewhere.
# Writes $OUT/gpu_tests.xml and $OUT/gpu_tests.log (OUT defaults to ./out). Extra arguments go
# to the test binary (e.g. --gtest_filter=...).
set -euo pipefail

OUT=${OUT:-./out}
build_dir=${OZDGEMM_BUILD_DIR:-build}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$build_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

nvidia-smi -L || true
echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n1 || true)"

"$build_dir/ozdgemm_gpu_tests" --gtest_output="xml:$OUT/gpu_tests.xml" "$@" 2>&1 |
  tee "$OUT/gpu_tests.log"
