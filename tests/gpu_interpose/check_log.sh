#!/usr/bin/env bash
# The debug log of the preloaded run (default settings but OZDGEMM_MODE=emulate) proves the
# interception: every entry point was emulated.
#
#   check_log.sh LOG [ENTRY...]   (default entries: cublas_client's GEMM entry points)
set -euo pipefail
log=$1
shift
entries=("$@")
((${#entries[@]})) || entries=(cublasDgemm_v2 cublasDgemm_v2_64 cublasGemmEx cublasDgemm)
[[ -s $log ]] || { echo "no log at $log (was the GPU run skipped?)"; exit 77; }
for entry in "${entries[@]}"; do
  grep -qE "\] $entry m=[0-9]+ n=[0-9]+ k=[0-9]+ -> emulated" "$log" ||
    { echo "no emulated $entry call in $log"; exit 1; }
done
grep -q "summary: " "$log" || { echo "no exit summary in $log"; exit 1; }
# The default chooses s per call, on the GPU for eager and captured calls alike: the summary
# counts the calls by the s the GPU chose (or the host, for the calls that chose there).
grep -qE "summary: (emulated calls by moduli count|certified counts chosen on the GPU): ([^ ]+ )*s=[0-9]+: [0-9]+" "$log" ||
  { echo "no moduli histogram in the exit summary of $log"; exit 1; }
echo "log shows every entry point emulated, and the exit summary's moduli histogram"
