#!/usr/bin/env bash
# Runs one netlib level-3 BLAS tester in a fresh folder and checks its report and what
# libozdgemm.so logged.
#
# Usage: run_tester.sh --work DIR --expect any|emulated|gpu [--env VAR=VALUE]... \
#          -- TESTER INPUT ROUTINE ENTRY
#   TESTER, INPUT  the tester and its input file (read on standard input, as netlib runs it)
#   ROUTINE        the routines' names in the report, comma-separated (DGEMM,DSYRK, ...)
#   ENTRY          their entries in the library's decision lines, in the same order
#                  (dgemm_,dsyrk_, ...)
#   --env          set for the tester only; repeatable
#   --expect any       decision lines for each ENTRY; without a GPU, each sends the call to
#                      the CPU BLAS with a reason
#   --expect emulated  for each ENTRY, at least one call emulated, none fell back
#   --expect gpu       the same, on a GPU; exit 77 (skipped) where the log says there is none
#
# The report passes when it says END OF TESTS, each ROUTINE passed its error exits and its
# computational tests, and no routine of the tester reports a failure, a suspect ratio or a
# fatal error. The library's exit summary must be in the log; a cblas_ ENTRY must not be
# decided again as the Fortran routine that reference CBLAS calls.
set -uo pipefail

work="" expect="" envs=()
while (($#)); do
  case $1 in
    --work) work=$2; shift 2 ;;
    --expect) expect=$2; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "run_tester.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if (($# != 4)) || [[ -z $work || ! $expect =~ ^(any|emulated|gpu)$ ]]; then
  echo "usage: run_tester.sh --work DIR --expect any|emulated|gpu [--env VAR=VALUE]..." \
       "-- TESTER INPUT ROUTINE ENTRY" >&2
  exit 2
fi
tester=$(readlink -f "$1") input=$(readlink -f "$2")
IFS=, read -ra routines <<< "$3"
IFS=, read -ra entries <<< "$4"
if ((${#routines[@]} != ${#entries[@]})); then
  echo "run_tester.sh: ROUTINE and ENTRY list different numbers of routines" >&2
  exit 2
fi
work=$(readlink -m "$work")

rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
log=$work/ozdgemm.log
envs+=("OZDGEMM_LOG_LEVEL=debug" "OZDGEMM_LOG_FILE=$log")
echo "+ ${envs[*]} $tester < $input"
env "${envs[@]}" "$tester" < "$input" > stdout.txt 2>&1
status=$?
# The Fortran testers write their report to the file their input names (*.out, here), the
# CBLAS testers to standard output.
cat stdout.txt ./*.out > report.txt 2> /dev/null

fail=0
if ((status != 0)); then
  echo "FAIL: $tester exited with status $status"
  fail=1
fi
if grep -qE 'host calls stay on the CPU BLAS' "$log" 2> /dev/null && [[ $expect == gpu ]]; then
  echo "SKIPPED: no GPU serves host calls here (the log says so)"
  exit 77
fi

# The report.
check_report() {
  if grep -qE -- "$1" report.txt; then
    echo "ok: report: $(grep -E -- "$1" report.txt | head -n 2 | xargs)"
  else
    echo "FAIL: the report has no line matching '$1'"
    fail=1
  fi
}
for routine in "${routines[@]}"; do
  check_report "^ *$routine +PASSED THE TESTS OF ERROR-EXITS"
  check_report "^ *$routine +PASSED THE .*COMPUTATIONAL TESTS"
done
check_report "END OF TESTS"
bad='\*\*\*\*\*|FAIL|SUSPECT|NOT BE TESTED|NOT RECOGNIZED|ERROR IN'
if grep -qE "$bad" report.txt; then
  echo "FAIL: the report states failures:"
  grep -E -B1 -A3 "$bad" report.txt | head -n 40
  fail=1
fi

# The library's log.
if [[ ! -f $log ]]; then
  echo "FAIL: no log written to $log"
  exit 1
fi
check_entry() {
  local entry=$1 lines count emulated fallbacks
  lines=$(grep -E "\] $entry m=[0-9]+ n=[0-9]+ k=[0-9]+ -> " "$log")
  count=$(grep -c . <<< "$lines")
  if [[ -z $lines ]]; then
    echo "FAIL: no $entry decision line in the log"
    fail=1
  elif [[ $expect == any ]]; then
    if grep -q 'host calls stay on the CPU BLAS' "$log" &&
       grep -vqE -- "-> native \([^;)]+" <<< "$lines"; then
      echo "FAIL: without a GPU, a $entry call was not sent to the CPU BLAS with a reason:"
      grep -vE -- "-> native \([^;)]+" <<< "$lines" | head -n 3
      fail=1
    else
      echo "ok: $count $entry calls intercepted"
    fi
  else
    emulated=$(grep -cE -- "-> emulated" <<< "$lines")
    fallbacks=$(grep -cE -- "-> fallback" <<< "$lines")
    echo "ok: $count $entry calls intercepted, $emulated emulated, $fallbacks fell back"
    if ((emulated == 0)); then
      echo "FAIL: no $entry call emulated"
      fail=1
    fi
    if ((fallbacks != 0)); then
      echo "FAIL: $entry calls fell back:"
      grep -E -- "-> fallback" <<< "$lines" | head -n 3
      fail=1
    fi
  fi
  if [[ $entry == cblas_* ]] && grep -qE "\] ${entry#cblas_}_ m=[0-9]+ " "$log"; then
    echo "FAIL: ${entry#cblas_}_ decided again under $entry"
    fail=1
  fi
  if grep -qE "summary: routine $entry: " "$log"; then
    echo "ok: $(grep -E "summary: routine $entry: " "$log" | sed -E 's/.*(summary: )/\1/')"
  else
    echo "FAIL: no exit summary for $entry in the log"
    fail=1
  fi
}
for entry in "${entries[@]}"; do
  check_entry "$entry"
done
((fail)) && { echo "--- report"; cat report.txt; }
exit $fail
