#!/usr/bin/env bash
# ScaLAPACK under mpirun with and without libozdgemm.so: scalapack_test (pdgemm, pdgesv on a
# 2 x 2 grid) runs on 4 ranks without the library, saving its results, then again with the
# library preloaded into every rank (rank_env.sh: one debug log per rank), checking its results
# against its own long double references and against the first run's (scalapack_test.c states
# the bounds). Then, per rank's log:
#   - dgemm_ calls were intercepted (decision lines), the exit summary was written, and no call
#     fell back after a failure and nothing was logged as an error;
#   - without a GPU (CI): every call went to the CPU BLAS with a reason, and so the results are
#     bit-identical to the run without the library (cmp of every saved file);
#   - with OZDGEMM_TEST_EXPECT_EMULATED=1 (a machine with a GPU, OZDGEMM_MODE=emulate): the rank
#     emulated dgemm_ calls on GPU (local rank mod GPU count), and logged that choice.
#
# Usage: run_scalapack.sh LIBOZDGEMM PROGRAM WORKDIR
# Environment: OZDGEMM_MPIRUN (mpirun to use), NP (4: the grid is 2 x 2), OZDGEMM_* (passed on).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=mpirun_flags.sh
source "$here/mpirun_flags.sh"
# The GPU variant runs where there is a GPU, which need not have an MPI runtime: it skips then.
# Without it (CI) a missing mpirun is a failure (scripts/setup.sh installs Open MPI).
if [[ ${OZDGEMM_TEST_EXPECT_EMULATED:-0} == 1 ]]; then
  if ! nvidia-smi -L > /dev/null 2>&1; then
    echo "OZDGEMM_TEST_EXPECT_EMULATED=1 without a usable GPU: not run"
    exit 77
  fi
  if ! command -v "${mpirun_cmd[0]}" > /dev/null; then
    echo "no ${mpirun_cmd[0]} on this machine (OZDGEMM_MPIRUN names one): not run"
    exit 77
  fi
  if ldd "$2" | grep -q "not found"; then
    echo "the libraries of $2 are not all on this machine: not run"; ldd "$2" | grep "not found"
    exit 77
  fi
fi
lib=$1 program=$2 work=$3
np=${NP:-4}

rm -rf "$work"
mkdir -p "$work/without" "$work/with"

# run NAME COMMAND...: output to WORKDIR/NAME.out, shown; fails the test if the job fails.
run() {
  local name=$1
  shift
  echo "+ $*"
  "$@" </dev/null >"$work/$name.out" 2>&1
  local status=$?
  cat "$work/$name.out"
  if ((status != 0)); then
    echo "FAIL: the $name run exited with status $status: $(mpirun_diagnosis)"
    exit 1
  fi
}

run without "${mpirun_cmd[@]}" "$program" --save "$work/without"
run with "${mpirun_cmd[@]}" bash "$here/rank_env.sh" "$lib" "$work/ozdgemm" \
  "$program" --save "$work/with" --compare "$work/without"

fail=0
all_cpu=1
for ((r = 0; r < np; ++r)); do
  log=$work/ozdgemm.rank$r.log
  if [[ ! -s $log ]]; then
    echo "FAIL: rank $r wrote no log ($log)"
    fail=1
    continue
  fi
  lines=$(grep -E '\] dgemm_ m=[0-9]+ n=[0-9]+ k=[0-9]+ -> ' "$log")
  calls=$(grep -c . <<<"$lines")
  if [[ -z $lines ]]; then
    echo "FAIL: rank $r: no dgemm_ call intercepted"
    fail=1
    continue
  fi
  if ! grep -q 'summary: ' "$log"; then
    echo "FAIL: rank $r: no exit summary in the log"
    fail=1
  fi
  if grep -qE -- '-> fallback|\[ozdgemm (error|critical)\]' "$log"; then
    echo "FAIL: rank $r: failures in the log:"
    grep -E -- '-> fallback|\[ozdgemm (error|critical)\]' "$log" | head -n 3
    fail=1
  fi
  emulated=$(grep -cE -- '-> emulated' <<<"$lines")
  if grep -q 'host calls stay on the CPU BLAS' "$log"; then
    if grep -vqE -- '-> native \([^;)]+' <<<"$lines"; then
      echo "FAIL: rank $r: without a GPU, a dgemm_ call was not sent to the CPU BLAS with a reason"
      fail=1
    fi
    reasons=$(sed -E 's/.*-> native \(([^;)]+).*/\1/' <<<"$lines" | sort | uniq -c | xargs)
    if [[ ${OZDGEMM_TEST_EXPECT_EMULATED:-0} == 1 ]]; then
      echo "FAIL: rank $r: no GPU served it (OZDGEMM_TEST_EXPECT_EMULATED=1): $reasons"
      fail=1
    fi
    echo "ok: rank $r: $calls dgemm_ calls intercepted, sent to the CPU BLAS ($reasons)"
    continue
  fi
  all_cpu=0
  choice=$(grep -oE 'host calls use GPU [0-9]+ of [0-9]+ \(.*\)' "$log" | head -n 1)
  echo "ok: rank $r: $calls dgemm_ calls intercepted, $emulated emulated${choice:+; $choice}"
  if [[ ${OZDGEMM_TEST_EXPECT_EMULATED:-0} == 1 ]]; then
    # One node: the local rank is the world rank.
    if [[ $choice =~ GPU\ ([0-9]+)\ of\ ([0-9]+)\ \(local\ rank\ $r\  ]]; then
      if ((BASH_REMATCH[1] != r % BASH_REMATCH[2])); then
        echo "FAIL: rank $r took GPU ${BASH_REMATCH[1]} of ${BASH_REMATCH[2]}, not $((r % BASH_REMATCH[2]))"
        fail=1
      fi
    elif [[ -z ${OZDGEMM_DEVICE:-} ]]; then
      echo "FAIL: rank $r: no 'host calls use GPU N of M (local rank $r ...' line"
      fail=1
    fi
    if ((emulated == 0)); then
      echo "FAIL: rank $r: no dgemm_ call emulated (OZDGEMM_TEST_EXPECT_EMULATED=1)"
      fail=1
    fi
  fi
done

# Without a GPU every call went to the same CPU BLAS: identical bits, not just within bounds.
if ((all_cpu && fail == 0)); then
  differ=0
  for f in "$work"/without/*.bin; do
    cmp -s "$f" "$work/with/$(basename "$f")" || { echo "FAIL: $(basename "$f") differs"; differ=1; }
  done
  if ((differ)); then
    fail=1
  else
    echo "ok: all $(ls "$work"/without/*.bin | wc -l) result files bit-identical to the run" \
         "without the library"
  fi
fi

if ((fail)); then
  for log in "$work"/ozdgemm.rank*.log; do
    echo "--- $log (first 20 lines)"
    head -n 20 "$log"
  done
fi
exit $fail
