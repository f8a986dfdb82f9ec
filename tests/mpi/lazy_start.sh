#!/usr/bin/env bash
# Loading libozdgemm.so makes no CUDA call: a BLAS program that never calls DGEMM
# (lazy_start_test) runs with the library preloaded and the CUDA driver replaced by a recorder
# (fake_cuda_driver.c: libcuda.so.1 in FAKE_DRIVER_DIR), and the recorder must see no call.
# Nor may the driver or cuBLAS even be mapped (the program reads /proc/self/maps): libozdgemm.so
# loads cuBLAS on first use, since cuBLASLt's load-time constructor opens the driver and costs
# ~80 ms per process.
#
# Positive controls, so that "no call" means something: the same program calling dgemm_ once
# (auto mode: the host path asks CUDA for the GPU count) must make driver calls; with
# OZDGEMM_MODE=native it must not (native mode never touches CUDA). In auto mode the stand-in
# driver reports no GPU, so the host path stops before its first cuBLAS call: cuBLAS stays
# unloaded there too.
#
# Usage: lazy_start.sh LIBOZDGEMM PROGRAM FAKE_DRIVER_DIR WORKDIR
set -uo pipefail
lib=$1 program=$2 driver_dir=$3 work=$4
rm -rf "$work"
mkdir -p "$work"

fail=0
# check NAME EXPECT(calls|none) MAPPED [VAR=VALUE...] -- ARGS...
# MAPPED: what the program's output must contain about libcuda and libcublas, e.g. "libcuda
# mapped: no; libcublas mapped: no".
check() {
  local name=$1 expect=$2 maps=$3
  shift 3
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local calls=$work/$name.calls
  echo "+ ${envs[*]} $program $*"
  local out status
  out=$(env "${envs[@]}" LD_LIBRARY_PATH="$driver_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    OZDGEMM_FAKE_CUDA_CALLS="$calls" LD_PRELOAD="$lib" "$program" "$@")
  status=$?
  echo "$out"
  if ((status != 0)); then
    echo "FAIL: $name: the program exited with status $status"
    fail=1
    return
  fi
  if [[ $out != *"$maps"* ]]; then
    echo "FAIL: $name: expected \"$maps\""
    fail=1
  fi
  local made=""
  [[ -f $calls ]] && made=$(sort "$calls" | uniq -c | xargs)
  if [[ $expect == none && -n $made ]]; then
    echo "FAIL: $name: CUDA driver calls: $made"
    fail=1
  elif [[ $expect == calls && -z $made ]]; then
    echo "FAIL: $name: no CUDA driver call recorded (the probe does not work)"
    fail=1
  else
    echo "ok: $name: ${made:-no CUDA driver call}"
  fi
}

none="libcuda mapped: no; libcublas mapped: no"
check no_dgemm none "$none" --
check no_dgemm_emulate_mode none "$none" OZDGEMM_MODE=emulate --
check dgemm_native_mode none "$none" OZDGEMM_MODE=native -- dgemm
# (cudart closes the stand-in driver again once it has failed: libcuda is not checked here.)
check dgemm_auto_mode calls "libcublas mapped: no" OZDGEMM_LOG_LEVEL=info \
  OZDGEMM_LOG_FILE="$work/dgemm_auto_mode.log" -- dgemm
exit $fail
