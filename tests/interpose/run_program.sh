#!/usr/bin/env bash
# Runs one interposition test program and checks what libozdgemm.so logged about it.
#
# Usage: run_program.sh [options] -- PROGRAM [ARGS...]
#   --env VAR=VALUE   set for the program only (LD_PRELOAD must not reach this script's own
#                     tools); repeatable
#   --log FILE        run with OZDGEMM_LOG_LEVEL=debug OZDGEMM_LOG_FILE=FILE (FILE is removed
#                     first: the file sink appends)
#   --exit N          the program must exit with status N (default 0)
#   --expect ENTRY    the log has a decision line for ENTRY ("] ENTRY m=.. n=.. k=.. -> ...");
#                     repeatable. Where the log says no GPU serves host calls, every such line
#                     must read "-> native (REASON" with a reason; with
#                     OZDGEMM_TEST_EXPECT_EMULATED=1 in the environment (a machine with a GPU,
#                     OZDGEMM_MODE=emulate), at least one must read "-> emulated".
#   --forbid ENTRY    the log has no decision line for ENTRY; repeatable
#   --grep REGEX      the log has a line matching REGEX (grep -E); repeatable
set -uo pipefail

envs=() expects=() forbids=() greps=() log="" want_exit=0
while (($#)); do
  case $1 in
    --env) envs+=("$2"); shift 2 ;;
    --log) log=$2; shift 2 ;;
    --exit) want_exit=$2; shift 2 ;;
    --expect) expects+=("$2"); shift 2 ;;
    --forbid) forbids+=("$2"); shift 2 ;;
    --grep) greps+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "run_program.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
(($#)) || { echo "run_program.sh: no program" >&2; exit 2; }

if [[ -n $log ]]; then
  rm -f "$log"
  envs+=("OZDGEMM_LOG_LEVEL=debug" "OZDGEMM_LOG_FILE=$log")
fi

echo "+ ${envs[*]} $*"
env "${envs[@]}" "$@"
status=$?
if ((status == 77 && want_exit != 77)); then
  echo "SKIPPED: $1 exited with status 77 (no device, or a prerequisite missing)"
  exit 77
fi
if ((status != want_exit)); then
  echo "FAIL: $1 exited with status $status, expected $want_exit"
  [[ -n $log && -f $log ]] && { echo "--- $log"; cat "$log"; }
  exit 1
fi
[[ -z $log ]] && exit 0

fail=0
if [[ ! -f $log ]]; then
  echo "FAIL: no log written to $log"
  exit 1
fi
echo "--- $log (decision lines and notes, first 12)"
grep -E '\] [A-Za-z_0-9]+ m=|CPU BLAS|host calls|summary' "$log" | head -n 12

no_gpu=0
grep -q 'host calls stay on the CPU BLAS' "$log" && no_gpu=1
for entry in "${expects[@]}"; do
  lines=$(grep -E "\] $entry m=[0-9]+ n=[0-9]+ k=[0-9]+ -> " "$log")
  if [[ -z $lines ]]; then
    echo "FAIL: no $entry call in the log"
    fail=1
    continue
  fi
  count=$(wc -l <<<"$lines")
  if ((no_gpu)); then
    # Without a GPU every call stays on the CPU BLAS, and the line says why.
    if grep -vqE -- "-> native \([^;)]+" <<<"$lines"; then
      echo "FAIL: without a GPU, a $entry call was not sent to the CPU BLAS with a reason:"
      grep -vE -- "-> native \([^;)]+" <<<"$lines" | head -n 3
      fail=1
    else
      reasons=$(sed -E 's/.*-> native \(([^;)]+).*/\1/' <<<"$lines" | sort | uniq -c | xargs)
      echo "ok: $count $entry call(s) intercepted, sent to the CPU BLAS: $reasons"
    fi
  elif [[ ${OZDGEMM_TEST_EXPECT_EMULATED:-0} == 1 ]]; then
    if grep -qE -- "-> emulated" <<<"$lines"; then
      echo "ok: $count $entry call(s) intercepted, $(grep -cE -- '-> emulated' <<<"$lines") emulated"
    else
      echo "FAIL: no $entry call emulated (OZDGEMM_TEST_EXPECT_EMULATED=1)"
      fail=1
    fi
  else
    echo "ok: $count $entry call(s) intercepted"
  fi
done
for entry in "${forbids[@]}"; do
  if grep -qE "\] $entry m=[0-9]+ n=[0-9]+ k=[0-9]+ -> " "$log"; then
    echo "FAIL: unexpected $entry decision line(s):"
    grep -E "\] $entry m=" "$log" | head -n 3
    fail=1
  else
    echo "ok: no $entry decision line"
  fi
done
for re in "${greps[@]}"; do
  if grep -qE -- "$re" "$log"; then
    echo "ok: log matches '$re'"
  else
    echo "FAIL: no log line matches '$re'"
    fail=1
  fi
done
if ((fail)); then
  echo "--- full log"
  cat "$log"
fi
exit $fail
