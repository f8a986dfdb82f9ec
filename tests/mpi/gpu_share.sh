#!/usr/bin/env bash
# Several independent processes share one GPU, as the ranks of an MPI job on one node do:
# SHARE_PROCS copies of gpu_share_client (each: SHARE_THREADS threads of device and host DGEMMs
# for SHARE_SECONDS, every result checked exactly) start at once with libozdgemm.so preloaded
# and OZDGEMM_MODE=emulate, each logging (info level: the GPU choice, the exit summary with its
# reasons) to WORKDIR/client<i>.log. Then per client: exit status 0 (all results exact), an exit
# summary, no error or critical line, and what EXPECT asks of its calls:
#   all-emulated  every intercepted call emulated (no cap, ample free memory: 90% of free is
#                 far more than any call here needs);
#   cap           OZDGEMM_MAX_WORKSPACE set small: calls emulated, and others (the large
#                 shapes) native for "workspace cap", none fallen back;
#   pressure      a hog process first takes all but HOG_LEAVE_MIB of the free memory: calls
#                 emulated while there is room; those over 90% of free go native, saying so;
#                 a growth that another process won in between may fail and fall back (logged
#                 as such); results exact in every case, no crash. A process may emulate
#                 nothing when the others hold the room (each counts its share of what is free
#                 when it asks): the set of processes must emulate, not each one.
# SHARE_COORDINATED=1 gives client i the variables mpirun would, OMPI_COMM_WORLD_LOCAL_RANK=i and
# OMPI_COMM_WORLD_LOCAL_SIZE=SHARE_PROCS, so that each library counts the processes on its GPU
# and takes only its share of the free memory (dispatch/device_select.hpp); every client's log
# must then say so ("N processes share GPU d (OMPI_COMM_WORLD_LOCAL_SIZE=SHARE_PROCS, ...").
# Without it the clients carry no launcher variable (as independent programs): each counts on
# the whole free memory, and under pressure the clients' own allocations may fail.
# The counts per client come from the summary lines; the processes' overlap in time from their
# start and end stamps.
#
# Usage: gpu_share.sh LIBOZDGEMM CLIENT WORKDIR EXPECT
# Environment: SHARE_PROCS (8), SHARE_THREADS (2), SHARE_SECONDS (20), HOG_LEAVE_MIB (6144),
#              SHARE_COORDINATED (0), OZDGEMM_* (passed on, e.g. OZDGEMM_MAX_WORKSPACE).
# Exit status: 0 passed, 1 failed, 77 no GPU (the client said so).
set -uo pipefail
lib=$1 client=$2 work=$3 expect=$4
procs=${SHARE_PROCS:-8} threads=${SHARE_THREADS:-2} seconds=${SHARE_SECONDS:-20}
coordinated=${SHARE_COORDINATED:-0}
# The launchers' variables this script sets or keeps out (an outer launcher's must not leak in).
launcher_vars=(OMPI_COMM_WORLD_LOCAL_RANK OMPI_COMM_WORLD_LOCAL_SIZE MV2_COMM_WORLD_LOCAL_SIZE
               MPI_LOCALNRANKS PMI_LOCAL_SIZE SLURM_STEP_TASKS_PER_NODE SLURM_TASKS_PER_NODE)
unset_launcher=()
for v in "${launcher_vars[@]}"; do unset_launcher+=(-u "$v"); done
rm -rf "$work"
mkdir -p "$work"

hog_pid=""
if [[ $expect == pressure ]]; then
  "$client" hog "${HOG_LEAVE_MIB:-6144}" $((seconds + 60)) "$work/hog.ready" \
    > "$work/hog.out" 2>&1 &
  hog_pid=$!
  for _ in $(seq 300); do
    [[ -e $work/hog.ready ]] || ! kill -0 "$hog_pid" 2>/dev/null && break
    sleep 0.1
  done
  if [[ ! -e $work/hog.ready ]]; then
    kill "$hog_pid" 2>/dev/null
    wait "$hog_pid"
    hog_status=$?
    echo "$( ((hog_status == 77)) && echo skipped || echo FAIL): the hog did not start:" \
         "$(cat "$work/hog.out")"
    ((hog_status == 77)) && exit 77
    exit 1
  fi
  cat "$work/hog.out"
fi

pids=()
for ((i = 0; i < procs; ++i)); do
  (
    date +%s.%N > "$work/client$i.start"
    rank=()
    ((coordinated)) && rank=(OMPI_COMM_WORLD_LOCAL_RANK=$i OMPI_COMM_WORLD_LOCAL_SIZE=$procs)
    env "${unset_launcher[@]}" ${rank[@]+"${rank[@]}"} LD_PRELOAD="$lib" OZDGEMM_MODE=emulate \
      OZDGEMM_LOG_LEVEL=info \
      OZDGEMM_LOG_FILE="$work/client$i.log" "$client" "$seconds" "$threads" $((i + 1)) \
      > "$work/client$i.out" 2>&1
    status=$?
    date +%s.%N > "$work/client$i.end"
    exit $status
  ) &
  pids+=($!)
done
statuses=()
for p in "${pids[@]}"; do
  wait "$p"
  statuses+=($?)
done
if [[ -n $hog_pid ]]; then
  rm -f "$work/hog.ready"  # tells the hog to let go
  wait "$hog_pid"
fi

fail=0 skipped=0 total_emulated=0
for ((i = 0; i < procs; ++i)); do
  log=$work/client$i.log out=$work/client$i.out
  if ((statuses[i] == 77)); then
    skipped=$((skipped + 1))
    continue
  fi
  if ((statuses[i] != 0)); then
    echo "FAIL: client $i exited with status ${statuses[i]}:"
    head -n 12 "$out"
    fail=1
    continue
  fi
  summary=$(grep -oE 'summary: [0-9]+ calls emulated, [0-9]+ native, [0-9]+ fallback' "$log")
  if [[ ! $summary =~ ([0-9]+)\ calls\ emulated,\ ([0-9]+)\ native,\ ([0-9]+)\ fallback ]]; then
    echo "FAIL: client $i: no exit summary in $log"
    fail=1
    continue
  fi
  emulated=${BASH_REMATCH[1]} native=${BASH_REMATCH[2]} fallback=${BASH_REMATCH[3]}
  reasons=$(grep -E 'summary: +(native|fallback) ' "$log" |
            sed -E 's/.*summary: +(native|fallback) +([0-9]+) calls +[0-9.]+ s +/\1 \2: /' |
            paste -sd ';' -)
  line="client $i: $(tail -n 1 "$out" | sed 's/^share: //'); $emulated emulated, $native native,"
  line+=" $fallback fallback${reasons:+ ($reasons)}"
  bad=""
  grep -qE '\[ozdgemm (error|critical)\]' "$log" && bad="error lines in the log"
  total_emulated=$((total_emulated + emulated))
  [[ $expect == pressure ]] || ((emulated > 0)) || bad="no call emulated"
  if ((coordinated)); then
    # The share this client took, from its log (logged once, when a workspace was first sized).
    pattern="[0-9]+ (process uses|processes share) GPU [0-9]+ \(OMPI_COMM_WORLD_LOCAL_SIZE=$procs, "
    shared=$(grep -oE "$pattern[^)]*\)" "$log" | head -n 1)
    if [[ -z $shared ]]; then
      bad="no coordinated share in the log"
    else
      line+="; $shared"
    fi
  fi
  case $expect in
    all-emulated)
      ((native == 0 && fallback == 0)) || bad="calls not emulated" ;;
    cap)
      ((fallback == 0)) || bad="calls fell back"
      grep -qE 'summary: +native .*workspace cap' "$log" || bad="no call refused for the cap"
      grep -E 'summary: +native ' "$log" | grep -vq 'workspace cap' &&
        bad="native calls for another reason than the cap" ;;
    pressure)
      # Only memory may send a call away: the 90% rule (native, its reason in the summary) or
      # a lost race for it (fallback: the warning line names the failure).
      if grep -E 'summary: +native ' "$log" | grep -viqE 'memory|workspace|90%'; then
        bad="native calls for another reason than memory"
      elif grep -E 'emulation failed|GPU path failed|host path unavailable' "$log" |
             grep -viqE 'memory|alloc'; then
        bad="calls fell back for another reason than memory"
      fi ;;
  esac
  if [[ -n $bad ]]; then
    echo "FAIL: $line: $bad"
    fail=1
  else
    echo "ok: $line"
  fi
done
if ((skipped == procs)); then
  echo "skipped: no CUDA device"
  exit 77
fi
if ((total_emulated == 0)); then
  echo "FAIL: no process emulated any call"
  fail=1
else
  echo "ok: $total_emulated calls emulated by the $((procs - skipped)) processes together"
fi
# They ran at the same time: the last start came before the first end.
last_start=$(cat "$work"/client*.start | sort -n | tail -n 1)
first_end=$(cat "$work"/client*.end | sort -n | head -n 1)
if awk -v s="$last_start" -v e="$first_end" 'BEGIN { exit !(s < e) }'; then
  echo "ok: all $procs clients overlapped ($(awk -v s="$last_start" -v e="$first_end" \
    'BEGIN { printf "%.1f", e - s }') s with all of them running)"
else
  echo "FAIL: the clients did not run at the same time"
  fail=1
fi
exit $fail
