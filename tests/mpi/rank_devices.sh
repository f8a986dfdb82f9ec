#!/usr/bin/env bash
# The GPU of each rank's host calls on a machine with a GPU: a host DGEMM program
# (mpi_lazy_start_test dgemm: one 256^3 dgemm_ with an exact result) under LD_PRELOAD with
# OZDGEMM_MODE=emulate and each launcher's local-rank variable set by hand as the launcher would
# (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID = 0..3). The log must say "host
# calls use GPU r mod N of N (local rank r (VAR) ...)" and the call must be emulated with the
# right result; OZDGEMM_DEVICE wins over the launcher, and an out-of-range OZDGEMM_DEVICE leaves
# the call on the CPU BLAS with a warning. Exit 77 (skipped) without a GPU.
#
# Usage: rank_devices.sh LIBOZDGEMM PROGRAM RUNTIME_LIBS WORKDIR
set -uo pipefail
lib=$1 program=$2 runtime=$3 work=$4
mkdir -p "$work"
export LD_LIBRARY_PATH=$runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
status=0

# run_rank NAME VAR=VALUE...: one preloaded run; its log is $work/NAME.log.
run_rank() {
  local name=$1
  shift
  rm -f "$work/$name.log"
  env "$@" LD_PRELOAD="$lib" OZDGEMM_MODE=emulate OZDGEMM_LOG_LEVEL=debug \
    OZDGEMM_LOG_FILE="$work/$name.log" timeout 120 "$program" dgemm > "$work/$name.out" 2>&1
}

run_rank probe OMPI_COMM_WORLD_LOCAL_RANK=0 || { echo "FAIL: the program failed"; exit 1; }
if grep -q "host calls stay on the CPU BLAS" "$work/probe.log"; then
  echo "no usable GPU: not run"
  exit 77
fi

gpus=""
for var in OMPI_COMM_WORLD_LOCAL_RANK MPI_LOCALRANKID SLURM_LOCALID; do
  for r in 0 1 2 3; do
    name=select_${var}_$r
    if ! run_rank "$name" "$var=$r"; then
      echo "FAIL: $var=$r: the program failed: $(cat "$work/$name.out")"
      status=1
      continue
    fi
    line=$(grep -oE 'host calls use GPU [0-9]+ of [0-9]+ \(.*\)' "$work/$name.log" | head -n 1)
    call=$(grep -E '\] dgemm_ m=256 n=256 k=256 -> ' "$work/$name.log" | head -n 1)
    if [[ $line =~ GPU\ ([0-9]+)\ of\ ([0-9]+)\ \(local\ rank\ $r\ \($var\) ]]; then
      gpus=${BASH_REMATCH[2]}
      want=$((r % gpus))
      if ((BASH_REMATCH[1] != want)); then
        echo "FAIL: $var=$r took GPU ${BASH_REMATCH[1]}, not $want: $line"
        status=1
      elif [[ $call != *"-> emulated"* ]] || ! grep -q "BLAS results right" "$work/$name.out"; then
        echo "FAIL: $var=$r: not emulated, or a wrong result: ${call#*] } / $(cat "$work/$name.out")"
        status=1
      else
        echo "ok: $var=$r -> $line; ${call#*] }"
      fi
    else
      echo "FAIL: $var=$r: no GPU choice for local rank $r in the log:"
      head -n 5 "$work/$name.log"
      status=1
    fi
  done
done
[[ -n $gpus ]] || { echo "FAIL: no rank chose a GPU"; exit 1; }

run_rank select_device_wins OZDGEMM_DEVICE=$((gpus - 1)) OMPI_COMM_WORLD_LOCAL_RANK=0
if grep -q "host calls use GPU $((gpus - 1)) of $gpus (OZDGEMM_DEVICE=$((gpus - 1)))" \
     "$work/select_device_wins.log" && grep -q -- '-> emulated' "$work/select_device_wins.log"; then
  echo "ok: OZDGEMM_DEVICE=$((gpus - 1)) wins over OMPI_COMM_WORLD_LOCAL_RANK=0"
else
  echo "FAIL: OZDGEMM_DEVICE did not win:"; head -n 5 "$work/select_device_wins.log"; status=1
fi
run_rank select_device_out_of_range OZDGEMM_DEVICE=$gpus
if grep -q "OZDGEMM_DEVICE=$gpus but only $gpus GPU" "$work/select_device_out_of_range.log" &&
   grep -q -- '-> native' "$work/select_device_out_of_range.log" &&
   grep -q "BLAS results right" "$work/select_device_out_of_range.out"; then
  echo "ok: OZDGEMM_DEVICE=$gpus (out of range): warned, the call stayed on the CPU BLAS"
else
  echo "FAIL: OZDGEMM_DEVICE out of range:"; head -n 5 "$work/select_device_out_of_range.log"
  status=1
fi
exit $status
