#!/usr/bin/env bash
# On the GPU machine, from the repo root with a carried build/: runs the plain cuBLAS client
# and PyTorch/CuPy float64 matmuls under LD_PRELOAD=libozdgemm.so and keeps the library's
# debug logs under $OUT (default ./out).
set -uo pipefail
OUT=${OUT:-./out}
build_dir=${OZDGEMM_BUILD_DIR:-build}
mkdir -p "$OUT"
lib=$PWD/$build_dir/libozdgemm.so
status=0

echo "== cublas_client, OZDGEMM_MODE=emulate, 8 threads"
LD_PRELOAD=$lib OZDGEMM_MODE=emulate OZDGEMM_LOG_LEVEL=debug OZDGEMM_LOG_FILE=$OUT/client_lib.log \
  timeout 180 "$build_dir/tests/cublas_client" 8 4 > "$OUT/client.log" 2>&1 || status=1
tail -3 "$OUT/client.log"
bash tests/gpu_interpose/check_log.sh "$OUT/client_lib.log" || status=1

echo "== cublas_client, OZDGEMM_MODE=auto (small sizes: native expected)"
LD_PRELOAD=$lib OZDGEMM_LOG_LEVEL=info timeout 60 "$build_dir/tests/cublas_client" 2 2 2>&1 | tail -4 || status=1

echo "== PyTorch and CuPy float64 matmul under LD_PRELOAD, OZDGEMM_MODE=emulate"
LD_PRELOAD=$lib OZDGEMM_MODE=emulate OZDGEMM_LOG_LEVEL=debug OZDGEMM_LOG_FILE=$OUT/frameworks_lib.log \
  PYTHONUNBUFFERED=1 timeout 150 python3 tests/gpu_interpose/frameworks.py > "$OUT/frameworks.log" 2>&1 || status=1
cat "$OUT/frameworks.log" | tail -8
echo "intercepted calls in the frameworks log:"
grep -E "\-> (emulated|native|fallback)" "$OUT/frameworks_lib.log" | sed 's/.*\] //' | sort | uniq -c | head -10
grep "summary" "$OUT/frameworks_lib.log" | head -5
exit $status
