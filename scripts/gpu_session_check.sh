#!/usr/bin/env bash
# One GPU-machine call (about 9 minutes) that checks a commit end to end, from the repo root
# with build/ or the slim copy .devbuild/ (scripts/make_devbuild.sh) carried over:
#   1. the side-by-side bench at 16384^3, 16384 x 16384 x 4096 and 4096^3, s = 14 fast:
#      native cublasDgemm, cuBLAS's FP64 emulation, ozdgemm with the INT8 GEMMs through
#      cublasGemmEx and through cuBLASLt (OZDGEMM_INT8_GEMM), with the stage split;
#   2. `ctest -L gpu` (4 at a time; the tests marked RUN_SERIAL run alone);
#   3. scripts/gpu_sanitize.sh, and meanwhile every GoogleTest of ozdgemm_gpu_tests with the
#      INT8 GEMMs through the backend that is not the default (OZDGEMM_INT8_GEMM=cublas).
# Writes $OUT/check/ and packs it into $OUT/check.tgz after each step. A step that would run
# past SESSION_CHECK_BUDGET_S (default 570 s from the start) is cut by its time limit.
source "$(dirname "${BASH_SOURCE[0]}")/gpu_call_prologue.sh" check
left() { echo $(( ${SESSION_CHECK_BUDGET_S:-570} - SECONDS )); }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit ${COMMIT:-unknown}, $(date -u +%FT%TZ)"; } | tee "$W/gpu.txt"

s=$SECONDS
timeout 70 build/bench/ozdgemm_bench --shapes 16384,16384x16384x4096,4096 --moduli 14 \
  --modes fast --int8-gemm cublas,lt --stages --cublas-emu --csv "$W/bench.csv" > "$W/bench.log" 2>&1
echo "bench rc=$? $((SECONDS - s)) s"; grep -E "^(cublas|ozdgemm)" "$W/bench.log"; pack

s=$SECONDS
timeout 300 ctest --test-dir build -L gpu -j4 --timeout 240 --output-on-failure \
  --output-junit "$W/gpu_ctest.xml" > "$W/gpu_ctest.log" 2>&1
echo "ctest -L gpu rc=$? $((SECONDS - s)) s"
grep -E "tests passed|\(Failed\)|\(Timeout\)|Not Run|Skipped" "$W/gpu_ctest.log" | head -20; pack

s=$SECONDS
( OZDGEMM_INT8_GEMM=cublas OZDGEMM_LOG_LEVEL=warn timeout 150 build/ozdgemm_gpu_tests \
    > "$W/gtests_cublas.log" 2>&1; echo "cublas gtests rc=$?" >> "$W/gtests_cublas.log" ) &
SANITIZE_GTEST_TIMEOUT=$(( $(left) - 40 )) OUT=$W timeout $(left) bash scripts/gpu_sanitize.sh \
  > "$W/sanitize_console.log" 2>&1
echo "sanitize rc=$? $((SECONDS - s)) s"; cat "$W/sanitize/summary.txt" 2>/dev/null
wait
tail -4 "$W/gtests_cublas.log"; pack
ls -la "$OUT/check.tgz"
