#!/usr/bin/env bash
# Runs the side-by-side benchmark on the GPU machine, from the repo root, with a build/ made
# elsewhere (carried). Writes to $OUT (default ./out):
#   bench.csv  one row per shape x method (see bench/ozdgemm_bench.cu for the columns)
#   bench.log  the full console output (table on stdout, progress on stderr)
#   env.txt    nvidia-smi, the commit and the command line, for the results page
# Default: the first sweep (square 4096, 8192, 16384; s = 14..20; fast and accurate; cuBLAS's
# own emulation; stage split). Extra arguments are appended and override earlier flags, e.g.
#   bench/run_bench.sh --shapes 4096 --moduli 14 --modes accurate --no-stages
# Plots: python3 bench/plot_results.py "$OUT/bench.csv"
set -euo pipefail

OUT=${OUT:-out}
build_dir=${OZDGEMM_BUILD_DIR:-build}
mkdir -p "$OUT"

bench=$build_dir/bench/ozdgemm_bench
if [[ ! -x $bench ]]; then
  bench=$(find "$build_dir" -type f -name ozdgemm_bench -perm -u+x 2>/dev/null | head -n1 || true)
fi
if [[ -z $bench ]]; then
  echo "run_bench: no ozdgemm_bench executable under $build_dir/ (build it first)" >&2
  exit 1
fi
# libozdgemm.so and anything copied next to the binaries.
export LD_LIBRARY_PATH="$PWD/$build_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The device copy of the tree may not be a usable git checkout: an explicit COMMIT wins.
commit=${COMMIT:-$(git rev-parse --verify -q HEAD 2>/dev/null || true)}
commit=${commit:-unknown}
# shellcheck disable=SC2054  # the commas are the benchmark's list syntax
args=(--shapes 4096,8192,16384 --moduli 14,16,18,20 --modes fast,accurate --cublas-emu --stages
      --csv "$OUT/bench.csv" "$@")

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $commit"
  if ! git diff --quiet HEAD 2>/dev/null; then echo "working tree: modified (or not a git checkout)"; fi
  echo "host: $(hostname)"
  echo "command: $bench ${args[*]}"
  echo
  nvidia-smi 2>&1 || echo "nvidia-smi failed"
  echo
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit \
    --format=csv 2>/dev/null || true
} >"$OUT/env.txt"

echo "run_bench: $bench ${args[*]}" >&2
set +e
"$bench" "${args[@]}" 2>&1 | tee "$OUT/bench.log"
rc=${PIPESTATUS[0]}
set -e
echo "run_bench: exit status $rc; results in $OUT/ (bench.csv, bench.log, env.txt)" >&2
exit "$rc"
