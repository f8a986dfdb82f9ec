#!/usr/bin/env bash
# One GPU-machine call (2026-11-29 session): all GPU tests, the reliability checks, the host-path
# benchmark against NVBLAS, the CRT-kernel measurement and a per-kernel time split. Everything
# goes to $OUT/a/ and is packed into $OUT/a.tgz (the device tool returns at most 8 files).
set -uo pipefail
[[ -e build ]] || ln -s .devbuild build  # scripts/make_devbuild.sh
W=$OUT/a; mkdir -p "$W"
export COMMIT=${COMMIT:-unknown}
# Packed after every step: if the call is cut short, what was done still comes back.
pack() { (cd "$OUT" && tar czf a.tgz a); }
bash scripts/gpu_ctest_prepare.sh
root=$PWD
cd /work/main
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$W/gpu.txt"
# 1. GPU tests except the reliability set (the script below runs that).
timeout 200 ctest --test-dir build -L gpu -E '^gpu_(bad_input|stress|graph|fork|exit|fault|workspace|hidden)|^GpuTest\.Workspace' \
  --output-on-failure --output-junit "$W/gpu_ctest.xml" > "$W/gpu_ctest.log" 2>&1
echo "gpu ctest rc=$?"; tail -4 "$W/gpu_ctest.log"
cp build/Testing/Temporary/LastTest.log "$W/gpu_ctest_full.log" 2>/dev/null
pack
# 2. Reliability (issue 6).
OUT=$W timeout 300 bash scripts/gpu_reliability_check.sh > "$W/reliability_console.log" 2>&1
echo "reliability rc=$?"; tail -12 "$W/reliability/figures.txt" 2>/dev/null; tail -1 "$W/reliability_console.log"
pack
# 3. Host path against NVBLAS and OpenBLAS.
OUT=$W/host SIZES=8192,16384 REPS=3 timeout 300 bash bench/run_host_bench.sh > "$W/host_console.log" 2>&1
echo "host bench rc=$?"; grep -E "n= " "$W/host_console.log"
pack
# 4. Device path after the CRT change, and a per-kernel split of one 16384^3 s=15 fast call.
./build/bench/ozdgemm_bench --shapes 16384,16384x16384x4096,4096 --moduli 14,15,16 --modes fast \
  --stages --csv "$W/bench_crt.csv" > "$W/bench_crt.log" 2>&1
echo "bench rc=$?"; grep -E "native|ozdgemm" "$W/bench_crt.log" | head -24
if command -v ncu > /dev/null; then
  timeout 150 ncu --metrics gpu__time_duration.sum --csv --print-summary per-kernel \
    -k 'regex:crt|scan|plane|exponent|fold|Kernel|gemm' ./build/bench/ozdgemm_bench --shapes 16384 \
    --moduli 15 --modes fast --reps 1 --warmup 0 --samples 8 > "$W/ncu_kernels.csv" 2>&1
  echo "ncu rc=$?"
fi
pack; ls -la "$OUT/a.tgz"
