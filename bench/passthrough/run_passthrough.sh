#!/usr/bin/env bash
# The pass-through cost: passthrough_bench (10^5 cublasDgemm calls of 64^3 on one stream) run
# directly and under LD_PRELOAD=libozdgemm.so, alternating, `rounds` times each, from a build
# folder (OZDGEMM_BUILD_DIR, default build; it may come from another machine). Preloaded runs use
# the library's defaults (nothing set but what the caller exports). Writes passthrough.txt under
# $OUT (default ./out) and prints it: every run's line, then the medians of both timings (end to
# end, host) and their differences.
#
#   bench/passthrough/run_passthrough.sh [rounds (5)] [passthrough_bench flags...]
set -euo pipefail
build_dir=${OZDGEMM_BUILD_DIR:-build}
OUT=${OUT:-out}
rounds=${1:-5}
shift || true
bench=$build_dir/bench/passthrough_bench
lib=$(cd "$build_dir" && pwd)/libozdgemm.so
[[ -x $bench && -f $lib ]] || { echo "run_passthrough: build $bench and $lib first" >&2; exit 1; }
mkdir -p "$OUT"
log=$OUT/passthrough.txt
: > "$log"
one_run() {  # one_run label [env...]: one line into the log, or the program's exit status
  local label=$1 line rc=0
  shift
  line=$(env "$@" "$bench" "${flags[@]}") || rc=$?
  ((rc == 0)) || { echo "run_passthrough: $label run exited $rc (77: no GPU)" >&2; exit "$rc"; }
  echo "$label $line" >> "$log"
}
flags=("$@")
for ((r = 0; r < rounds; ++r)); do
  one_run direct
  one_run preloaded LD_PRELOAD="$lib"
done
awk '
  { for (i = 2; i <= NF; ++i) if ($i ~ /us_per_call=/) { split($i, kv, "="); v[$1, kv[1], ++c[$1, kv[1]]] = kv[2] } }
  function median(name, key,   n, i, j, t, a) {
    n = c[name, key]; for (i = 1; i <= n; ++i) a[i] = v[name, key, i]
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    for (k = 1; k <= 2; ++k) {
      key = k == 1 ? "us_per_call" : "host_us_per_call"
      d = median("direct", key); p = median("preloaded", key)
      printf "median %s: direct %.3f, preloaded %.3f, added %.3f\n", key, d, p, p - d
    }
  }' "$log" >> "$log"
cat "$log"
