#!/usr/bin/env bash
# Runs the side-by-side benchmark on a machine with a GPU, from the repo root, with build/ (which
# may have been built on another machine). Writes to $OUT (default ./out):
#   bench.csv  one row per phase x shape x method (columns: bench/common/bench_report.cpp)
#   bench.log  the console output of every phase (tables on stdout, progress on stderr)
#   env.txt    date, commit, preset, the command of each phase, nvidia-smi
#   README.md, bench_*.png  the results page and plots, when python3 (and matplotlib) are there
#
#   bench/run_bench.sh [--preset smoke|quick|full] [--dry-run] [ozdgemm_bench flags...]
#
# A preset is a list of phases, each one ozdgemm_bench run appending to bench.csv; extra flags
# are appended to every phase and override the preset's. Without --preset: one phase, square
# 4096, 8192, 16384; s = 14..20 step 2; both modes; cuBLAS's emulation; stage split.
#   smoke  n = 1024, 4096; s = 14, 16                          (~0.5 min: does it all run?)
#   quick  n = 2048..16384; s = 12..20 step 2                  (~2 min)
#   full   (~4 min modelled, 8.5 min guard; the full sweep, most important phase first)
#     squares  phi 0.5, n = 1024..16384, s = 8..20, both modes, cuBLAS emulation, stages
#     rect     phi 0.5, 16384x16384x4096, 4096x4096x65536, 2048x2048x262144, s = 8..20
#     phi4     phi 4, n = 4096, 8192, 16384, s = 12..20 (the wide-exponent target; s < 12
#              cannot reach native accuracy there, so it is left out)
# Every phase uses adaptive reps (about --target-ms of timed work per method, 5..50 reps), so
# n = 16384 takes 5 reps and small shapes up to 50.
#
# Time guard: the phases share BENCH_DEADLINE_S seconds (default 510 = 8.5 min); a phase that
# would start with less than 20 s left is skipped, a running one is stopped at the deadline
# (rows already written stay in bench.csv). --dry-run prints each phase's command and the
# program's modelled time (ozdgemm_bench --dry-run) and runs nothing.
#
# Environment: OUT, OZDGEMM_BUILD_DIR (default build), OZDGEMM_BENCH (the program, default
# found under the build dir), COMMIT (wins over git: the device copy may not be a checkout).
set -euo pipefail

OUT=${OUT:-out}
build_dir=${OZDGEMM_BUILD_DIR:-build}
deadline_s=${BENCH_DEADLINE_S:-510}

preset=default
dry_run=0
extra=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --preset) [[ $# -ge 2 ]] || { echo "run_bench: --preset needs a value" >&2; exit 2; }
              preset=$2; shift 2 ;;
    --preset=*) preset=${1#--preset=}; shift ;;
    --dry-run) dry_run=1; shift ;;
    *) extra+=("$1"); shift ;;
  esac
done

# Phases: "name|flags". Flags are word-split; the commas are the program's list syntax.
common="--cublas-emu --stages --modes fast,accurate"
case $preset in
  default) phases=("default|--shapes 4096,8192,16384 --moduli 14,16,18,20 $common") ;;
  smoke) phases=("smoke|--shapes 1024,4096 --moduli 14,16 $common --target-ms 100") ;;
  quick) phases=("quick|--shapes 2048,4096,8192,16384 --moduli 12,14,16,18,20 $common --target-ms 300") ;;
  full)
    phases=(
      "squares|--phi 0.5 --shapes 1024,2048,4096,8192,16384 --moduli 8-20 $common --target-ms 500"
      "rect|--phi 0.5 --shapes 16384x16384x4096,4096x4096x65536,2048x2048x262144 --moduli 8-20 $common --target-ms 400"
      "phi4|--phi 4 --shapes 4096,8192,16384 --moduli 12-20 $common --target-ms 400"
    ) ;;
  *) echo "run_bench: unknown preset '$preset' (smoke, quick, full)" >&2; exit 2 ;;
esac

bench=${OZDGEMM_BENCH:-$build_dir/bench/ozdgemm_bench}
if [[ ! -x $bench ]]; then
  bench=$(find "$build_dir" -type f -name ozdgemm_bench -perm -u+x 2>/dev/null | head -n1 || true)
fi
if [[ -z $bench ]]; then
  echo "run_bench: no ozdgemm_bench executable under $build_dir/ (build it first)" >&2
  exit 1
fi
# libozdgemm.so and anything copied next to the binaries.
export LD_LIBRARY_PATH="$PWD/$build_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

phase_args() {  # phase_args "name|flags" -> the program's argv in PHASE_ARGV
  local flags=${1#*|}
  read -r -a PHASE_ARGV <<<"$flags"
  PHASE_ARGV+=("${extra[@]}")
}

if [[ $dry_run == 1 ]]; then
  total=0
  for ph in "${phases[@]}"; do
    phase_args "$ph"
    echo "== phase ${ph%%|*}: $bench ${PHASE_ARGV[*]} --csv $OUT/bench.csv --append"
    plan=$("$bench" "${PHASE_ARGV[@]}" --dry-run)
    echo "$plan"
    t=$(awk '/^estimated total:/ {print $3}' <<<"$plan")
    total=$((total + ${t:-0}))
  done
  echo "run_bench: preset $preset: modelled total ${total} s (deadline ${deadline_s} s)"
  exit 0
fi

mkdir -p "$OUT"
rm -f "$OUT/bench.csv"
commit=${COMMIT:-$(git rev-parse --verify -q HEAD 2>/dev/null || true)}
commit=${commit:-unknown}
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $commit"
  if ! git diff --quiet HEAD 2>/dev/null; then echo "working tree: modified (or not a git checkout)"; fi
  echo "host: $(hostname)"
  echo "preset: $preset${extra[*]:+ (extra: ${extra[*]})}"
  echo "command: bench/run_bench.sh --preset $preset${extra[*]:+ ${extra[*]}}"
  for ph in "${phases[@]}"; do
    phase_args "$ph"
    echo "phase ${ph%%|*}: $bench ${PHASE_ARGV[*]} --csv $OUT/bench.csv --append"
  done
  echo
  nvidia-smi 2>&1 || echo "nvidia-smi failed"
  echo
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit \
    --format=csv 2>/dev/null || true
} >"$OUT/env.txt"

start=$SECONDS
rc=0
: >"$OUT/bench.log"
for ph in "${phases[@]}"; do
  name=${ph%%|*}
  left=$((deadline_s - (SECONDS - start)))
  if ((left < 20)); then
    echo "run_bench: phase $name skipped: ${left} s left of ${deadline_s} s" | tee -a "$OUT/bench.log" >&2
    rc=1
    continue
  fi
  phase_args "$ph"
  echo "run_bench: phase $name (${left} s left): $bench ${PHASE_ARGV[*]}" | tee -a "$OUT/bench.log" >&2
  set +e
  timeout -s INT "$left" "$bench" "${PHASE_ARGV[@]}" --csv "$OUT/bench.csv" --append 2>&1 |
    tee -a "$OUT/bench.log"
  prc=${PIPESTATUS[0]}
  set -e
  if ((prc != 0)); then
    echo "run_bench: phase $name exit status $prc$( ((prc == 124)) && echo ' (deadline)')" |
      tee -a "$OUT/bench.log" >&2
    rc=$prc
  fi
done
echo "run_bench: benchmark done in $((SECONDS - start)) s, exit status $rc" | tee -a "$OUT/bench.log" >&2

# Plots and page: best effort (a machine with a GPU may lack matplotlib; rerun them here then).
here=$(cd "$(dirname "$0")" && pwd)
py=python3
if [[ -x /usr/bin/python3 ]]; then py=/usr/bin/python3; fi
if [[ -s $OUT/bench.csv ]]; then
  "$py" "$here/plot_results.py" "$OUT/bench.csv" >&2 || echo "run_bench: plots skipped" >&2
  "$py" "$here/make_results_page.py" "$OUT/bench.csv" --force >&2 ||
    echo "run_bench: results page skipped" >&2
fi
echo "run_bench: results in $OUT/ (bench.csv, bench.log, env.txt, README.md, bench_*.png)" >&2
exit "$rc"
