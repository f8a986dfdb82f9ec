#!/usr/bin/env bash
# One GPU-machine call that runs every GPU-side check: all ctest tests labelled gpu (the
# reliability set included), the reliability script's host-path part and figures, the MPI
# device-selection check, and with SANITIZE=1 compute-sanitizer over the whole GPU suite
# (scripts/gpu_sanitize.sh). Uses build/ or the slim copy .devbuild/ (scripts/make_devbuild.sh).
# Everything goes to $OUT/full/, packed into $OUT/full.tgz after each step.
source "$(dirname "${BASH_SOURCE[0]}")/gpu_call_prologue.sh" full
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$W/gpu.txt"
echo "commit ${COMMIT:-unknown}, $(date -u +%FT%TZ)" | tee -a "$W/gpu.txt"

timeout ${CTEST_TIMEOUT:-330} ctest --test-dir build -L gpu --output-on-failure --output-junit "$W/gpu_ctest.xml" \
  > "$W/gpu_ctest.log" 2>&1
echo "gpu ctest rc=$?"; grep -E "tests passed|Failed|\(Failed\)|Not Run|Skipped" "$W/gpu_ctest.log" | head -20
cp build/tests/reliability/*.log "$W/" 2>/dev/null; pack

OZDGEMM_MODE=emulate LD_LIBRARY_PATH=$PWD/build:$PWD/build/runtime-libs timeout 120 ctest --test-dir build \
  -R '^interpose_(bad_input_(preloaded|reference)|stress_host_preloaded|no_dgemm_no_cuda|fork_after_dgemm|gpu_hidden_host_calls)$' \
  --output-on-failure > "$W/reliability_host_emulate.log" 2>&1
echo "host-side reliability under emulate rc=$?"; tail -3 "$W/reliability_host_emulate.log"
{ grep -h "cases, .* matched" "$W"/*.log "$W"/gpu_ctest.log 2>/dev/null | sort -u
  grep -h "stress: " "$W"/*.log 2>/dev/null | sort -u
  grep -h "injected fault:" "$W"/fault_*.log 2>/dev/null | sort -u; } > "$W/figures.txt"
cat "$W/figures.txt"; pack

# PyTorch and CuPy float64 matmul under LD_PRELOAD, and the 8-thread cuBLAS client.
OUT=$W/frameworks timeout 200 bash scripts/gpu_interpose_check.sh > "$W/frameworks_check.log" 2>&1
echo "frameworks check rc=$?"; grep -iE "PASS|FAIL|torch|cupy" "$W/frameworks_check.log" | head -8; pack

# exit() with a thread inside cuBLAS: is a crash the library's or CUDA's? Native control first.
for lib in none preloaded; do
  for i in 1 2 3; do
    if [[ $lib == none ]]; then env LD_LIBRARY_PATH=$PWD/build/runtime-libs timeout 20 build/tests/lifecycle_client exit-thread > /dev/null 2>&1
    else env LD_PRELOAD=$PWD/build/libozdgemm.so OZDGEMM_MODE=emulate LD_LIBRARY_PATH=$PWD/build/runtime-libs timeout 20 build/tests/lifecycle_client exit-thread > /dev/null 2>&1; fi
    echo "exit-thread ($lib) run $i: rc=$?"
  done
done | tee "$W/exit_thread_control.txt"; pack

OUT=$W/mpi timeout 120 bash scripts/gpu_mpi_check.sh > "$W/mpi_check.log" 2>&1
echo "mpi check rc=$? (part 3 needs an MPI runtime)"; grep -E "^ok|FAIL|NOT RUN|bare|preloaded" "$W/mpi_check.log" | tail -12; pack

if [[ ${ACCURACY:-1} == 1 && -x build/bench/accuracy_report ]]; then
  OUT=$W/accuracy ACCURACY_DEADLINE_S=${ACCURACY_DEADLINE_S:-150} timeout 200 bash bench/accuracy_report.sh \
    ${ACCURACY_ARGS:-} > "$W/accuracy_console.log" 2>&1
  echo "accuracy report rc=$?"; grep -E "auto" "$W/accuracy_console.log" | head -30; pack
fi

# compute-sanitizer over the whole GPU suite takes several minutes: SANITIZE=1 adds it here,
# or run scripts/gpu_sanitize.sh in a call of its own.
if [[ ${SANITIZE:-0} == 1 ]]; then
  OUT=$W bash scripts/gpu_sanitize.sh > "$W/sanitize_console.log" 2>&1
  echo "compute-sanitizer rc=$?"; cat "$W/sanitize/summary.txt"
fi
pack; ls -la "$OUT/full.tgz"
