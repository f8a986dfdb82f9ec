#!/usr/bin/env bash
# The measurements behind the results pages' headline numbers, in one run on a machine with a
# GPU, from a build folder (OZDGEMM_BUILD_DIR, default build; it may come from another machine).
# Every part runs native and through the library side by side and writes CSV under $OUT
# (default ./out), with env.txt (date, GPU, driver, the build's commit) and the library's log of
# each preloaded run under logs/:
#
#   single    PyTorch float64 and complex128 matmul (cublasDgemm, cublasZgemm) at n = 2048..16384,
#             phi = 0.5: native, no settings, OZDGEMM_MODE=emulate (certified count), fixed
#             s = 15 and 14 (bench/batched/bmm_bench.py's single column; batch 1) -> single.csv
#   certificate  the certified call against the fixed count it chose, cuBLAS's own emulation
#             and the fallback, phi = 0.5 and 2 (certified_probe)          -> certificate_*.csv
#   level3    cuBLAS SYRK, TRSM, HERK, ... and CuPy's potrf/getrf (bench/level3/run_level3.sh;
#             LEVEL3_CASES: its cases, OZDGEMM_SOLVER_SIZES its sizes)    -> level3.csv, solvers.csv
#   batched   PyTorch bmm, 64 x 512^3 .. 4 x 8192^3, real and complex        -> batched.csv
#   async     bench/async_loop.py: an eager loop with host work               -> async.txt
#   python    pip NumPy's a @ b at 8192 (its CPU BLAS vs the GPU) and JAX at 16384 through the
#             audit module (bench/python_matmul.py)                           -> python.csv
#
#   bench/run_summary.sh [PART...]    (default: every part; each has a time limit of its own)
#
# A part whose program or Python module is missing says so and the others run.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${OZDGEMM_BUILD_DIR:-build}" 2>/dev/null && pwd) ||
  { echo "run_summary: no build folder at ${OZDGEMM_BUILD_DIR:-build}" >&2; exit 2; }
lib=$build/libozdgemm.so
audit=$build/libozdgemm_audit.so
OUT=${OUT:-out}
mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd)
parts=("$@")
((${#parts[@]})) || parts=(single certificate level3 batched async python)
limit=${OZDGEMM_PART_SECONDS:-240}  # per part

{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  echo "build from commit $(cat "$build/build_commit.txt" 2>/dev/null || echo unknown)"
} | tee "$OUT/env.txt"

# with METHOD CMD...: CMD under the environment of METHOD. Preloaded runs write the library's
# info log (its exit summary: calls emulated, native and why, counts) to logs/PART-METHOD.log.
with() {
  local method=$1
  shift
  local log=(OZDGEMM_LOG_LEVEL=info "OZDGEMM_LOG_FILE=$OUT/logs/${part:-run}-$method.log")
  case $method in
    native) "$@" ;;
    default) env LD_PRELOAD="$lib" "${log[@]}" "$@" ;;
    emulate) env LD_PRELOAD="$lib" OZDGEMM_MODE=emulate "${log[@]}" "$@" ;;
    s*) env LD_PRELOAD="$lib" OZDGEMM_MODE=emulate OZDGEMM_MODULI="${method#s}" "${log[@]}" "$@" ;;
  esac
}

part_single() {
  echo "dtype,batch,n,method,batch_ms,single_ms" > "$OUT/single.csv"
  for m in native default emulate s15 s14; do
    with "$m" python3 "$here/batched/bmm_bench.py" "$m" --phi 0.5 1:2048 1:4096 1:8192 1:16384 |
      tee -a "$OUT/single.csv"
  done
}

part_certificate() {
  for phi in 0.5 2; do
    # 9 rounds: with 5 the default's ratio to fixed_cert at 8192^3 ranged over 1.08-1.14x
    # between runs of the same build (results/default, run 16).
    "$build/bench/probes/certified_probe" --n 4096,8192,16384 --phi "$phi" --fixed 15 --reps 9 |
      tee "$OUT/certificate_phi$phi.csv"
  done
}

part_level3() {
  # shellcheck disable=SC2086  # LEVEL3_CASES: run_level3.sh's cases, space-separated
  OZDGEMM_BUILD_DIR=$build OUT=$OUT "$here/level3/run_level3.sh" ${LEVEL3_CASES:-}
}

part_batched() {
  echo "dtype,batch,n,method,batch_ms,single_ms" > "$OUT/batched.csv"
  for m in native default emulate; do
    with "$m" python3 "$here/batched/bmm_bench.py" "$m" 64:512 32:1024 16:2048 8:4096 4:8192 |
      tee -a "$OUT/batched.csv"
  done
}

part_async() {
  : > "$OUT/async.txt"
  for m in native default emulate; do
    echo "$m $(with "$m" python3 "$here/async_loop.py" 8192 20 12 | tail -n 1)" |
      tee -a "$OUT/async.txt"
  done
}

part_python() {
  echo "stack,n,method,median_ms,max_err" > "$OUT/python.csv"
  python3 "$here/python_matmul.py" native numpy:8192 jax:16384 | tee -a "$OUT/python.csv"
  with default python3 "$here/python_matmul.py" default numpy:8192 | tee -a "$OUT/python.csv"
  env LD_PRELOAD="$lib" LD_AUDIT="$audit" JAX_ENABLE_X64=1 OZDGEMM_LOG_LEVEL=info \
    OZDGEMM_LOG_FILE="$OUT/logs/python-jax-default.log" \
    python3 "$here/python_matmul.py" default jax:16384 | tee -a "$OUT/python.csv"
}

status=0
for part in "${parts[@]}"; do
  if ! declare -F "part_$part" > /dev/null; then
    echo "run_summary: unknown part '$part'" >&2
    status=2
    continue
  fi
  echo "=== $part ($(date -u +%T), at most $limit s)"
  export -f "part_$part" with
  export here build lib audit OUT part
  timeout "$limit" bash -c "set -o pipefail; part_$part" || { echo "=== $part: exit status $?"; status=1; }
done
exit $status
