#!/usr/bin/env bash
# Level-3 routines and the cuSOLVER factorizations that call them, native and under
# LD_PRELOAD=libozdgemm.so, from a build folder (OZDGEMM_BUILD_DIR, default build; it may come
# from another machine). Per case, in one run, alternating: native cuBLAS (no library), the
# library forced (OZDGEMM_MODE=emulate) and at its defaults (nothing set). Writes level3.csv
# (routine,n,k,method,median_ms,min_ms) and, when CuPy is importable, solvers.csv (solvers.py)
# under $OUT (default ./out).
#
#   bench/level3/run_level3.sh [CASES...]   (CASE: routine:n:k, default: the issue's set)
#
# METHODS (default "native emulate default") may add emulate:B and default:B, the same with
# OZDGEMM_LEVEL3_BLOCK=B; SOLVER_METHODS likewise for solvers.py (default: METHODS).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build_dir=${OZDGEMM_BUILD_DIR:-build}
OUT=${OUT:-out}
bench=$build_dir/bench/level3_bench
lib=$(cd "$build_dir" && pwd)/libozdgemm.so
[[ -x $bench && -f $lib ]] || { echo "run_level3: build $bench and $lib first" >&2; exit 1; }
mkdir -p "$OUT/logs"
cases=("$@")
((${#cases[@]})) || cases=(dsyrk:16384:16384 dsyrk:16384:2048 dsyrk:8192:8192 dtrsm:16384:16384
                           dtrsm:8192:8192 zherk:16384:16384 zherk:8192:8192 dsymm:16384:16384
                           dtrmm:16384:16384 dsyr2k:16384:16384 ztrsm:8192:8192)
read -r -a methods <<< "${METHODS:-native emulate default}"
read -r -a solver_methods <<< "${SOLVER_METHODS:-${methods[*]}}"
# method_env METHOD: the environment of a method, into envs.
method_env() {
  local block=${1#*:}
  envs=()
  case ${1%%:*} in
    native) return ;;
    emulate) envs=(LD_PRELOAD="$lib" OZDGEMM_MODE=emulate) ;;
    default) envs=(LD_PRELOAD="$lib") ;;
    *) echo "run_level3: unknown method $1" >&2; exit 2 ;;
  esac
  [[ $block == "$1" ]] || envs+=(OZDGEMM_LEVEL3_BLOCK="$block")
  # The library's info log (its exit summary: what was emulated, what ran native and why).
  envs+=(OZDGEMM_LOG_LEVEL=info "OZDGEMM_LOG_FILE=$OUT/logs/level3-${2:-run}-$1.log")
}
csv=$OUT/level3.csv
echo "routine,n,k,method,median_ms,min_ms" > "$csv"
for c in "${cases[@]}"; do
  IFS=: read -r routine n k <<< "$c"
  for method in "${methods[@]}"; do
    method_env "$method" "$routine-$n-$k"
    line=$(env "${envs[@]}" "$bench" "$routine" "$n" "$k" 5) || { echo "$c $method failed"; continue; }
    med=$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' <<< "$line")
    min=$(sed -n 's/.*min_ms=\([0-9.]*\).*/\1/p' <<< "$line")
    echo "$routine,$n,$k,$method,$med,$min" | tee -a "$csv"
  done
done
if python3 -c 'import cupy' 2> /dev/null; then
  scsv=$OUT/solvers.csv
  echo "solver,n,method,median_ms,residual" > "$scsv"
  for method in "${solver_methods[@]}"; do
    method_env "$method" solvers
    env "${envs[@]}" python3 "$here/solvers.py" "$method" ${OZDGEMM_SOLVER_SIZES:-16384 32768} |
      tee -a "$scsv"
  done
fi
