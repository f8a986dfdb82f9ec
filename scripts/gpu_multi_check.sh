#!/usr/bin/env bash
# One GPU-machine call for the multi-GPU host path (issue 8), on a machine with 2+ GPUs, from
# the repo root with build/ or .devbuild/ (scripts/make_devbuild.sh) carried over:
#   1. the GPUs and how they are connected (nvidia-smi topo -m);
#   2. the host-path tests with every GPU visible (host_path_workers_devices_all then spreads
#      its tiles over all of them; every test checks C bitwise);
#   3. bench/run_host_bench.sh HOST_BENCH_MODE=workers, DEVICE_LISTS="0 all", one worker per
#      GPU, n = 16384 and 32768 (SIZES): the single-GPU host path and all GPUs in one run, with
#      the digests of C that must agree.
# Writes $OUT/multi/ and packs it into $OUT/multi.tgz after each step.
source "$(dirname "${BASH_SOURCE[0]}")/gpu_call_prologue.sh" multi
{ nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv,noheader
  nvidia-smi topo -m
  echo "commit ${COMMIT:-unknown}, $(date -u +%FT%TZ)"; } | tee "$W/gpu.txt"

s=$SECONDS
timeout 200 ctest --test-dir build -L gpu -R host_path -j3 --timeout 180 --output-on-failure \
  > "$W/host_path_ctest.log" 2>&1
echo "ctest host_path rc=$? $((SECONDS - s)) s"
grep -E "tests passed|\(Failed\)|\(Timeout\)|Not Run|Skipped" "$W/host_path_ctest.log"
grep -hoE "worker [0-9]+ \(GPU [0-9]+\)[^;]*" build/tests/host_path/*.log 2>/dev/null | sort | uniq -c | head
pack

s=$SECONDS
OUT=$W/bench HOST_BENCH_MODE=workers DEVICE_LISTS=${DEVICE_LISTS:-0 all} WORKERS=${WORKERS:-1} \
  SIZES=${SIZES:-16384,32768} REPS=${REPS:-3} timeout ${BENCH_TIMEOUT_S:-300} \
  bash bench/run_host_bench.sh > "$W/bench_console.log" 2>&1
echo "bench rc=$? $((SECONDS - s)) s"; tail -n 12 "$W/bench_console.log"
grep -hE "host path .*worker" "$W"/bench/*.log | sed -E 's/^\[[^]]*\] //' | tail -n 8
pack
ls -la "$OUT/multi.tgz"
