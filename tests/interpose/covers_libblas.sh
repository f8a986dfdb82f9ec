#!/usr/bin/env bash
# Every function Debian's reference libblas.so.3 defines is exported by libozdgemm.so (as a hook
# or a forwarder), so a program linked with -lozdgemm in place of -lblas finds all of them.
# Usage: covers_libblas.sh LIBOZDGEMM [REFERENCE_LIBBLAS]   (exit 77, skipped, without nm or
# the reference library, e.g. on a machine with a GPU)
set -euo pipefail
lib=${1:?usage: covers_libblas.sh LIBOZDGEMM [REFERENCE_LIBBLAS]}
ref=${2:-/usr/lib/x86_64-linux-gnu/blas/libblas.so.3}
command -v nm >/dev/null || { echo "no nm: skipped"; exit 77; }
[[ -f $ref ]] || { echo "no $ref: skipped"; exit 77; }

mapfile -t wanted < <(nm -D --defined-only "$ref" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u)
mapfile -t have < <(nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" { sub(/@.*/, "", $3); print $3 }' | sort -u)
missing=$(comm -23 <(printf '%s\n' "${wanted[@]}") <(printf '%s\n' "${have[@]}"))
if [[ -n $missing ]]; then
  echo "FAIL: functions of $ref that libozdgemm.so does not export:"
  printf '  %s\n' $missing
  exit 1
fi
echo "PASS: all ${#wanted[@]} functions of $ref are exported by $lib"
