#!/usr/bin/env bash
# On the GPU machine, from the repo root with a build/ made on a CPU machine (scripts/setup.sh)
# and carried over: the scale-out checks of tests/mpi with the real GPU(s).
#
#  1. GPU per rank: a host DGEMM program (tests/mpi/mpi_lazy_start_test dgemm: one 256^3
#     dgemm_, exact integer result) runs under LD_PRELOAD with OZDGEMM_MODE=emulate and each
#     launcher's local-rank variable set by hand (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
#     SLURM_LOCALID = 0..3); the log must say "host calls use GPU r mod N of N (local rank r
#     (VAR) ...)" and the call must be emulated with the right result. OZDGEMM_DEVICE must win
#     over the launcher, and an out-of-range OZDGEMM_DEVICE must leave the call on the CPU BLAS.
#  2. Start-up cost per process: the same program without DGEMM, bare and preloaded (mean of 20
#     runs), and the host time of the first emulated call (CUDA start-up, context, pinned
#     buffers included) from the debug log; the fake-driver check (tests/mpi/lazy_start.sh).
#  3. ScaLAPACK on 4 ranks sharing the GPU(s), OZDGEMM_MODE=emulate (tests/mpi/run_scalapack.sh
#     with OZDGEMM_TEST_EXPECT_EMULATED=1), if an Open MPI mpirun is there: $OZDGEMM_MPIRUN,
#     else build/openmpi/bin/mpirun, else mpirun on PATH. The GPU machine has none of its own;
#     without one this part is reported as not run, with the reason. Each rank's log must show
#     emulated calls on GPU (local rank mod GPU count); the results are checked against the run
#     without the library and the solve's residual (scalapack_test.c states the bounds).
#  4. GPU sharing (tests/mpi/gpu_share.sh): 8 independent preloaded processes of
#     tests/mpi/gpu_share_client at once, each with device and host DGEMMs checked exactly:
#     without OZDGEMM_MAX_WORKSPACE (90% of free memory: every call emulated), with
#     OZDGEMM_MAX_WORKSPACE=64M (large calls native for the cap, the others emulated), and
#     under memory pressure (a hog holds all but 8 GiB: whatever does not fit goes native),
#     with OMPI_COMM_WORLD_LOCAL_RANK=i and OMPI_COMM_WORLD_LOCAL_SIZE=8 set per process as
#     mpirun would, so that each takes only its share of the free memory (all 8 must pass).
#     OZDGEMM_SHARE_UNCOORDINATED=1 adds the same pressure run without those variables, for
#     comparison only (each process then counts on the whole free memory; its failures are
#     reported but do not fail this script).
#
# The MPI runtime: scripts/make_mpicarry.sh (on the CPU machine) assembles .mpicarry/ with
# Debian's Open MPI and ScaLAPACK and the project's pieces; carry it alone (no build/ needed):
# this script then sources .mpicarry/env.sh (OZDGEMM_MPICARRY names another folder), which sets
# OPAL_PREFIX, LD_LIBRARY_PATH, OZDGEMM_MPIRUN and OZDGEMM_BUILD_DIR.
# OZDGEMM_MPI_PARTS (default "1 2 3 4") chooses the parts.
#
# Needs: build/ from the CPU machine (libozdgemm.so, tests/mpi/*, runtime-libs/ with the
# BLAS/LAPACK/gfortran runtime), the NVIDIA driver; for part 3 also an Open MPI runtime and
# libscalapack-openmpi.so.2.2 reachable through LD_LIBRARY_PATH (OZDGEMM_MPI_LIBS adds a
# folder). Output and logs under $OUT (default ./out). Exit status 0 when every part that ran
# passed.
set -uo pipefail
OUT=${OUT:-./out}
carry=${OZDGEMM_MPICARRY:-.mpicarry}
if [[ -f $carry/env.sh ]]; then
  # shellcheck source=/dev/null
  source "$carry/env.sh"
  echo "using the carried runtime in $carry (OPAL_PREFIX=$OPAL_PREFIX)"
fi
build_dir=${OZDGEMM_BUILD_DIR:-build}
parts=" ${OZDGEMM_MPI_PARTS:-1 2 3 4} "
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
[[ -d $build_dir ]] || { echo "missing $build_dir: build on the CPU machine first"; exit 2; }
build_dir=$(cd "$build_dir" && pwd)
lib=$build_dir/libozdgemm.so
program=$build_dir/tests/mpi/mpi_lazy_start_test
export LD_LIBRARY_PATH=$build_dir/runtime-libs${OZDGEMM_MPI_LIBS:+:$OZDGEMM_MPI_LIBS}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
status=0

for f in "$lib" "$program"; do
  [[ -e $f ]] || { echo "missing $f: build on the CPU machine first (scripts/setup.sh)"; exit 2; }
done

# run_rank NAME VAR=VALUE... : one preloaded run of the dgemm program; its log is $OUT/NAME.log.
run_rank() {
  local name=$1
  shift
  rm -f "$OUT/$name.log"
  env "$@" LD_PRELOAD="$lib" OZDGEMM_MODE=emulate OZDGEMM_LOG_LEVEL=debug \
    OZDGEMM_LOG_FILE="$OUT/$name.log" timeout 120 "$program" dgemm > "$OUT/$name.out" 2>&1
}

gpus=""
if [[ $parts == *" 1 "* ]]; then
echo "== 1. GPU per rank, launcher variables set by hand"
for var in OMPI_COMM_WORLD_LOCAL_RANK MPI_LOCALRANKID SLURM_LOCALID; do
  for r in 0 1 2 3; do
    name=select_${var}_$r
    if ! run_rank "$name" "$var=$r"; then
      echo "FAIL: $var=$r: the program failed: $(cat "$OUT/$name.out")"
      status=1
      continue
    fi
    line=$(grep -oE 'host calls use GPU [0-9]+ of [0-9]+ \(.*\)' "$OUT/$name.log" | head -n 1)
    call=$(grep -E '\] dgemm_ m=256 n=256 k=256 -> ' "$OUT/$name.log" | head -n 1)
    if [[ $line =~ GPU\ ([0-9]+)\ of\ ([0-9]+)\ \(local\ rank\ $r\ \($var\) ]]; then
      gpus=${BASH_REMATCH[2]}
      want=$((r % gpus))
      if ((BASH_REMATCH[1] != want)); then
        echo "FAIL: $var=$r took GPU ${BASH_REMATCH[1]}, not $want: $line"
        status=1
      elif [[ $call != *"-> emulated"* ]] || ! grep -q "BLAS results right" "$OUT/$name.out"; then
        echo "FAIL: $var=$r: not emulated, or a wrong result: ${call#*] } / $(cat "$OUT/$name.out")"
        status=1
      else
        echo "ok: $var=$r -> $line; ${call#*] }"
      fi
    else
      echo "FAIL: $var=$r: no GPU choice for local rank $r in the log:"
      head -n 5 "$OUT/$name.log"
      status=1
    fi
  done
done
if [[ -n $gpus ]]; then
  run_rank select_device_wins OZDGEMM_DEVICE=$((gpus - 1)) OMPI_COMM_WORLD_LOCAL_RANK=0
  if grep -q "host calls use GPU $((gpus - 1)) of $gpus (OZDGEMM_DEVICE=$((gpus - 1)))" \
       "$OUT/select_device_wins.log" &&
     grep -q -- '-> emulated' "$OUT/select_device_wins.log"; then
    echo "ok: OZDGEMM_DEVICE=$((gpus - 1)) wins over OMPI_COMM_WORLD_LOCAL_RANK=0"
  else
    echo "FAIL: OZDGEMM_DEVICE did not win:"; head -n 5 "$OUT/select_device_wins.log"; status=1
  fi
  run_rank select_device_out_of_range OZDGEMM_DEVICE=$gpus
  if grep -q "OZDGEMM_DEVICE=$gpus but only $gpus GPU" "$OUT/select_device_out_of_range.log" &&
     grep -q -- '-> native' "$OUT/select_device_out_of_range.log" &&
     grep -q "BLAS results right" "$OUT/select_device_out_of_range.out"; then
    echo "ok: OZDGEMM_DEVICE=$gpus (out of range): warned, the call stayed on the CPU BLAS"
  else
    echo "FAIL: OZDGEMM_DEVICE out of range:"; head -n 5 "$OUT/select_device_out_of_range.log"
    status=1
  fi
fi

fi

if [[ $parts == *" 2 "* ]]; then
echo "== 2. Start-up cost per process"
mean_ms() {  # mean wall time in ms of 20 runs of the command
  local t0 t1
  t0=$(date +%s%N)
  for _ in $(seq 20); do "$@" > /dev/null 2>&1; done
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 20000000))
}
echo "no DGEMM, bare:      $(mean_ms "$program") ms"
echo "no DGEMM, preloaded: $(mean_ms env LD_PRELOAD="$lib" "$program") ms"
echo "one host dgemm_ in native mode, preloaded: $(mean_ms env LD_PRELOAD="$lib" OZDGEMM_MODE=native "$program" dgemm) ms"
echo "one host dgemm_ emulated on the GPU, preloaded: $(mean_ms env LD_PRELOAD="$lib" OZDGEMM_MODE=emulate "$program" dgemm) ms"
run_rank startup_first_call OMPI_COMM_WORLD_LOCAL_RANK=0
echo "first emulated call (host time, CUDA start-up included): $(grep -oE '\] dgemm_ .*' "$OUT/startup_first_call.log" | head -n 1)"
# cuBLAS is loaded on first use: without DGEMM neither it nor the real driver may be mapped.
maps=$(LD_PRELOAD="$lib" "$program")
if [[ $maps == *"libcuda mapped: no; libcublas mapped: no"* ]]; then
  echo "ok: no DGEMM, real driver: $maps"
else
  echo "FAIL: no DGEMM, yet cuBLAS or the CUDA driver is mapped: $maps"
  status=1
fi
bash tests/mpi/lazy_start.sh "$lib" "$program" "$build_dir/tests/mpi/fake-driver" \
  "$OUT/lazy_start" || status=1
fi

if [[ $parts == *" 3 "* ]]; then
echo "== 3. ScaLAPACK, 4 ranks on this machine's GPU(s), OZDGEMM_MODE=emulate"
mpirun=${OZDGEMM_MPIRUN:-}
[[ -z $mpirun && -x $build_dir/openmpi/bin/mpirun ]] && mpirun=$build_dir/openmpi/bin/mpirun
[[ -z $mpirun ]] && mpirun=$(command -v mpirun || true)
if [[ -z $mpirun ]]; then
  echo "NOT RUN: no mpirun on this machine (it has no MPI and no package manager); set" \
       "OZDGEMM_MPIRUN to a carried Open MPI's mpirun (and OPAL_PREFIX to its prefix)"
else
  missing=$(ldd "$build_dir/tests/mpi/mpi_scalapack_test" | grep "not found")
  if [[ -n $missing ]]; then
    echo "NOT RUN: libraries of mpi_scalapack_test missing (OZDGEMM_MPI_LIBS names a folder):"
    echo "$missing"
    status=1
  else
    OZDGEMM_MPIRUN=$mpirun OZDGEMM_MODE=emulate OZDGEMM_TEST_EXPECT_EMULATED=1 \
      bash tests/mpi/run_scalapack.sh "$lib" "$build_dir/tests/mpi/mpi_scalapack_test" \
      "$OUT/scalapack" 2>&1 | tee "$OUT/scalapack.txt"
    ((PIPESTATUS[0] == 0)) || status=1
  fi
fi

fi

if [[ $parts == *" 4 "* ]]; then
echo "== 4. GPU sharing: 8 independent preloaded processes at once, OZDGEMM_MODE=emulate"
client=$build_dir/tests/mpi/gpu_share_client
if [[ ! -x $client ]]; then
  echo "FAIL: missing $client"
  status=1
else
  # share NAME EXPECT VAR=VALUE...: one gpu_share.sh run, its report in $OUT/NAME.txt.
  share() {
    local name=$1 expect=$2
    shift 2
    echo "-- $name ($expect${*:+, $*})"
    env "$@" timeout 150 bash tests/mpi/gpu_share.sh "$lib" "$client" "$OUT/$name" "$expect" \
      2>&1 | tee "$OUT/$name.txt"
    ((PIPESTATUS[0] == 0)) || status=1
  }
  share share_uncapped all-emulated -u OZDGEMM_MAX_WORKSPACE
  share share_capped cap OZDGEMM_MAX_WORKSPACE=64M
  share share_pressure_coordinated pressure -u OZDGEMM_MAX_WORKSPACE HOG_LEAVE_MIB=8192 \
    SHARE_COORDINATED=1
  if [[ ${OZDGEMM_SHARE_UNCOORDINATED:-0} == 1 ]]; then
    kept=$status
    share share_pressure_uncoordinated pressure -u OZDGEMM_MAX_WORKSPACE HOG_LEAVE_MIB=8192
    ((status == kept)) || echo "(uncoordinated: for comparison only, not counted)"
    status=$kept
  fi
fi
fi

echo "== gpu_mpi_check: $( ((status == 0)) && echo passed || echo FAILED)"
exit $status
