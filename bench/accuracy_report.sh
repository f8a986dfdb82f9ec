#!/usr/bin/env bash
# Accuracy report on a machine with a GPU, from the repo root, with build/ (which may have been
# built on another machine). Writes to $OUT (default ./out/accuracy):
#   accuracy.csv   one row per set x method (bench/accuracy_report.cu --help lists the columns)
#   accuracy.log   the program's console output (one line per auto run: s_auto, oracle, errors)
#   env.txt        date, commit, command, nvidia-smi
#   README.md, accuracy_*.png   the page and plots (bench/accuracy_plot.py; needs matplotlib)
#
#   bench/accuracy_report.sh [--dry-run] [accuracy_report flags...]
#
# Default: every set at n = 4096 (longk at 512 x 512 x 2^18) and phi 0.5, 2, 4 at n = 16384;
# modelled ~3.5 min of GPU and host work on an H200 (--dry-run prints the model). A deadline
# (ACCURACY_DEADLINE_S, default 420 s) stops the program; rows already written stay.
# Environment: OUT, OZDGEMM_BUILD_DIR (default build), COMMIT (wins over git).
set -euo pipefail

OUT=${OUT:-out/accuracy}
build_dir=${OZDGEMM_BUILD_DIR:-build}
deadline_s=${ACCURACY_DEADLINE_S:-420}
here=$(cd "$(dirname "$0")" && pwd)
prog=${OZDGEMM_ACCURACY_REPORT:-$build_dir/bench/accuracy_report}

dry_run=0
args=()
for a in "$@"; do
  case $a in
    --dry-run) dry_run=1 ;;
    *) args+=("$a") ;;
  esac
done

if [[ ! -x $prog ]]; then
  echo "accuracy_report.sh: $prog not found (build the accuracy_report target)" >&2
  exit 2
fi
if [[ $dry_run -eq 1 ]]; then
  "$prog" --dry-run "${args[@]}"
  exit 0
fi

mkdir -p "$OUT"
commit=${COMMIT:-$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)}
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $commit"
  echo "command: $prog --csv $OUT/accuracy.csv ${args[*]}"
  nvidia-smi 2>/dev/null || echo "nvidia-smi: not available"
} > "$OUT/env.txt"

rc=0
timeout "$deadline_s" "$prog" --csv "$OUT/accuracy.csv" "${args[@]}" 2>&1 | tee "$OUT/accuracy.log" \
  || rc=$?
if [[ $rc -ne 0 ]]; then echo "accuracy_report.sh: program exited with $rc (rows so far kept)" >&2; fi

py=/usr/bin/python3
[[ -x $py ]] || py=python3
"$py" "$here/accuracy_plot.py" "$OUT/accuracy.csv" --out "$OUT" --commit "$commit" \
  || echo "accuracy_report.sh: plots skipped (python3/matplotlib?)" >&2
exit $rc
