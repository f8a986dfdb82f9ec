#!/usr/bin/env bash
# Checks the dynamic symbol table and NEEDED entries of libozdgemm.so:
#   - every defined dynamic symbol matches a line of the allow-list (exact name or glob);
#   - no fmt/spdlog symbol is exported (they are header-only and must stay private);
#   - libspdlog/libfmt are not NEEDED (a machine with a GPU has neither);
#   - libcublas/libcublasLt are not NEEDED: the library loads cuBLAS on first use
#     (src/common/cublas_api.hpp), since cuBLASLt's load-time constructor costs every process
#     that preloads the library, DGEMM or not, ~80 ms and ~95 MB.
#   - no NCCL and no NVLink multicast: libnccl is not NEEDED, and neither an imported symbol
#     nor a string of the library (a name looked up at run time) names NCCL or the driver's
#     multicast objects (cuMulticast*). GPUs exchange data only by copies between two of them.
# Usage: check_exports.sh path/to/libozdgemm.so path/to/allowed_exports.txt [NEEDED...]
# With NEEDED names (the audit module: libc.so.6 libdl.so.2), every NEEDED entry must be one.
# An allow-list line `@include PATH` (relative to the allow-list's folder) adds every name of
# that file (same syntax), e.g. the list of forwarded BLAS routines.
set -euo pipefail

lib=${1:?usage: check_exports.sh LIB ALLOWLIST}
allow=${2:?usage: check_exports.sh LIB ALLOWLIST}
shift 2
needed_allowed=("$@")
[[ -f $lib ]] || { echo "FAIL: no such library: $lib" >&2; exit 1; }
[[ -f $allow ]] || { echo "FAIL: no such allow-list: $allow" >&2; exit 1; }

patterns=()
read_list() {
  local file=$1 line
  [[ -f $file ]] || { echo "FAIL: no such allow-list: $file" >&2; exit 1; }
  while IFS= read -r line || [[ -n $line ]]; do
    line=${line%%#*}
    if [[ $line =~ ^[[:space:]]*@include[[:space:]]+([^[:space:]]+) ]]; then
      read_list "$(dirname "$file")/${BASH_REMATCH[1]}"
      continue
    fi
    line=${line//[[:space:]]/}
    if [[ -n $line ]]; then patterns+=("$line"); fi
  done <"$file"
  return 0
}
read_list "$allow"

# Field 3 of `nm -D --defined-only` is the name, possibly with @VERSION / @@VERSION appended.
mapfile -t symbols < <(nm -D --defined-only "$lib" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' | sort -u)

mapfile -t demangled < <(printf '%s\n' "${symbols[@]}" | c++filt)

status=0
for i in "${!symbols[@]}"; do
  sym=${symbols[i]}
  ok=0
  for pat in "${patterns[@]}"; do
    # shellcheck disable=SC2053  # $pat is a glob on purpose
    if [[ $sym == $pat ]]; then ok=1; break; fi
  done
  if ((!ok)); then
    echo "FAIL: exported symbol not in allow-list: $sym (${demangled[i]})"
    status=1
  fi
  if [[ ${demangled[i]} == *fmt::* || ${demangled[i]} == *spdlog::* ]]; then
    echo "FAIL: fmt/spdlog symbol exported: ${demangled[i]}"
    status=1
  fi
done

mapfile -t needed < <(readelf -d "$lib" | awk '/\(NEEDED\)/ { gsub(/[][]/, "", $5); print $5 }')
for dep in "${needed[@]}"; do
  if [[ $dep == libspdlog.* || $dep == libfmt.* ]]; then
    echo "FAIL: $dep among NEEDED (spdlog/fmt must be header-only)"
    status=1
  fi
  if [[ $dep == libcublas.* || $dep == libcublasLt.* ]]; then
    echo "FAIL: $dep among NEEDED (cuBLAS must be loaded on first use)"
    status=1
  fi
  if ((${#needed_allowed[@]})) && [[ " ${needed_allowed[*]} " != *" $dep "* ]]; then
    echo "FAIL: $dep among NEEDED (allowed: ${needed_allowed[*]})"
    status=1
  fi
done

for dep in "${needed[@]}"; do
  if [[ $dep == libnccl* ]]; then
    echo "FAIL: $dep among NEEDED (the library never uses NCCL)"
    status=1
  fi
done
mapfile -t multicast < <({ nm -D --undefined-only "$lib" | awk '{ print $NF }'; strings -a "$lib"; } |
                         grep -E 'cuMulticast|cudaMulticast|nccl[A-Z]|libnccl' | sort -u)
if ((${#multicast[@]})); then
  echo "FAIL: NCCL or NVLink multicast referenced: ${multicast[*]}"
  status=1
fi

echo "exported symbols (${#symbols[@]}):"
printf '  %s\n' "${symbols[@]}"
echo "NEEDED:"
printf '  %s\n' "${needed[@]}"
if ((status == 0)); then
  echo "PASS: exports within allow-list, no fmt/spdlog exported or NEEDED, no cuBLAS NEEDED," \
       "no NCCL or multicast"
fi
exit $status
