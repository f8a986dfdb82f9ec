#!/usr/bin/env bash
# Loading libozdgemm.so makes no CUDA call: a BLAS program that never calls DGEMM
# (lazy_start_test) runs with the library preloaded and the CUDA driver replaced by a recorder
# (fake_cuda_driver.c: libcuda.so.1 in FAKE_DRIVER_DIR), and the recorder must see no call.
# cuBLASLt, which libozdgemm.so links, does dlopen the driver from its load-time constructor and
# look up its symbols, but calls none of them; that is outside the library's control and costs
# no driver initialisation.
#
# Positive controls, so that "no call" means something: the same program calling dgemm_ once
# (auto mode: the host path asks CUDA for the GPU count) must make driver calls; with
# OZDGEMM_MODE=native it must not (native mode never touches CUDA).
#
# Usage: lazy_start.sh LIBOZDGEMM PROGRAM FAKE_DRIVER_DIR WORKDIR
set -uo pipefail
lib=$1 program=$2 driver_dir=$3 work=$4
rm -rf "$work"
mkdir -p "$work"

fail=0
# check NAME EXPECT(calls|none) [VAR=VALUE...] -- ARGS...
check() {
  local name=$1 expect=$2
  shift 2
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local calls=$work/$name.calls
  echo "+ ${envs[*]} $program $*"
  env "${envs[@]}" LD_LIBRARY_PATH="$driver_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    OZDGEMM_FAKE_CUDA_CALLS="$calls" LD_PRELOAD="$lib" "$program" "$@"
  local status=$?
  if ((status != 0)); then
    echo "FAIL: $name: the program exited with status $status"
    fail=1
    return
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

check no_dgemm none -- 
check no_dgemm_emulate_mode none OZDGEMM_MODE=emulate --
check dgemm_native_mode none OZDGEMM_MODE=native -- dgemm
check dgemm_auto_mode calls OZDGEMM_LOG_LEVEL=info OZDGEMM_LOG_FILE="$work/dgemm_auto_mode.log" \
  -- dgemm
exit $fail
