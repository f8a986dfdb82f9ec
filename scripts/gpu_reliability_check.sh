#!/usr/bin/env bash
# Runs the reliability checks of issue 6 on the GPU machine, from the repo root, with a build/
# made on the CPU machine (carried along): bad input against native cuBLAS, the stress test,
# graph capture, fork, exit with work in flight, injected faults, the workspace cap, the GPU
# hidden, plus the CPU-side interposition tests of the same issue with OZDGEMM_MODE=emulate
# (now with a GPU behind them). Logs go to $OUT (default ./out/reliability); exits non-zero
# if any check fails.
#
#   scripts/gpu_reliability_check.sh            # everything
#   scripts/gpu_reliability_check.sh -R stress  # extra arguments go to ctest
set -uo pipefail

OUT=${OUT:-./out}/reliability
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
bash scripts/gpu_ctest_prepare.sh
cd /work/main || exit 1
export LD_LIBRARY_PATH="$PWD/build:$PWD/build/runtime-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

nvidia-smi -L 2>&1 | tee "$OUT/devices.txt" || true
status=0

# 1. The GPU-side reliability tests (label gpu; the names are this issue's), and the C API's
# workspace-limit tests of ozdgemm_gpu_tests.
ctest --test-dir build \
  -R '^gpu_(bad_input|stress|graph|fork|exit|fault|workspace|hidden)|^GpuTest\.Workspace' \
  -V --output-junit "$OUT/reliability_gpu.xml" "$@" 2>&1 |
  tee "$OUT/reliability_gpu.txt"
((PIPESTATUS[0] == 0)) || status=1

# 2. The host-path reliability programs with the GPU behind them: every valid call emulated.
OZDGEMM_MODE=emulate ctest --test-dir build \
  -R '^interpose_(bad_input_(preloaded|reference)|stress_host_preloaded|no_dgemm_no_cuda|fork_after_dgemm|gpu_hidden_host_calls)$' \
  -V "$@" 2>&1 | tee "$OUT/reliability_host_emulate.txt"
((PIPESTATUS[0] == 0)) || status=1

# 3. The figures for the closing note.
{
  echo "== bad input"
  grep -h "cases, .* matched" build/tests/reliability/*.log "$OUT"/*.txt 2>/dev/null | sort -u
  echo "== stress"
  grep -h "stress: " "$OUT"/*.txt 2>/dev/null | sort -u
  echo "== faults"
  grep -h "injected fault:" build/tests/reliability/fault_*.log 2>/dev/null
} | tee "$OUT/figures.txt"
cp build/tests/reliability/*.log "$OUT/" 2>/dev/null || true
echo "reliability checks: $([[ $status == 0 ]] && echo PASS || echo FAIL) (logs in $OUT)"
exit $status
