#!/usr/bin/env bash
# Nsight Compute over the engine's own kernels (scaling scans, exponents, residue and bound
# writers, CRT) for one ozdgemm call per shape, on a machine with a GPU, from the repo root with
# build/ present. cuBLAS's INT8 GEMMs are left out: they are timed by the
# bench's stage split. Writes $OUT/ncu/<shape>_<mode>.txt (details) and .csv (raw metrics).
#   PROFILE_SHAPES="4096 16384" PROFILE_MODULI=15 PROFILE_MODES="fast" bash bench/profile_kernels.sh
set -uo pipefail
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
W=${OUT:?set OUT}/ncu; mkdir -p "$W"
KERNELS='regex:scan_kernel|fast_exponent|plane_tile_kernel|crt_kernel|fold|accurate|column_|row_'
for shape in ${PROFILE_SHAPES:-4096 16384}; do
  for mode in ${PROFILE_MODES:-fast}; do
    f="$W/${shape}_${mode}"
    # One untimed-free call: --reps 1 --warmup 0 gives the timed call, then the accuracy call;
    # the first call's kernels are the ones profiled (launch-count covers one call).
    timeout "${PROFILE_TIMEOUT_S:-150}" "$NCU" --kernel-name "$KERNELS" --launch-count 12 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
      --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats \
      build/bench/ozdgemm_bench --shapes "$shape" --moduli "${PROFILE_MODULI:-15}" --modes "$mode" \
      --int8-gemm lt --reps 1 --warmup 0 --samples 16 > "$f.txt" 2>&1
    echo "ncu $shape $mode rc=$?"
    grep -E "Context [0-9]|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|Grid Size" "$f.txt" \
      | head -200 > "$f.summary.txt"
  done
done
