#!/usr/bin/env bash
# scripts/gpu_check.sh on a build folder made on another machine: the GoogleTest lists' include of
# CMake's GoogleTestAddTests.cmake must point at the build folder's copy (cmake-modules/)
#   (a) when the build and source paths differ from the configuring machine's;
#   (b) when they are the same but that machine's CMake module is missing here (another CMake);
# and stay as they are (c) when the paths are the same and the module is present; (d) every
# relocated file keeps its time, so that ctest makes a list older than its binary again.
#   gpu_check_relocation_test.sh REPO_ROOT
set -euo pipefail
repo=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# make_build DIR CONFIGURED_BUILD MODULE: a build folder's files that gpu_check.sh reads.
make_build() {
  mkdir -p "$1/tests/gpu" "$1/cmake-modules"
  printf 'CMAKE_CACHEFILE_DIR:INTERNAL=%s\nozdgemm_SOURCE_DIR:STATIC=%s\n' "$2" "$repo" \
    > "$1/CMakeCache.txt"
  printf 'include("%s")\n' "$3" > "$1/tests/gpu/tests[1]_include.cmake"
  touch "$1/cmake-modules/GoogleTestAddTests.cmake"
}
# check NAME DIR WANT: runs gpu_check.sh on DIR (its ctest finds no test and fails: ignored)
# and compares the include line with WANT.
failed=0
check() {
  OZDGEMM_BUILD_DIR=$2 OZDGEMM_OUT=$tmp/out-$1 "$repo/scripts/gpu_check.sh" unit \
    > "$tmp/$1.log" 2>&1 || true
  local got
  got=$(cat "$2/tests/gpu/tests[1]_include.cmake")
  if [[ $got == "$3" ]]; then
    echo "ok   $1: $got"
  else
    echo "FAIL $1: got $got, want $3"
    sed 's/^/     /' "$tmp/$1.log"
    failed=1
  fi
}

b=$tmp/moved
make_build "$b" /elsewhere/build /elsewhere/cmake/Modules/GoogleTestAddTests.cmake
check moved "$b" "include(\"$b/cmake-modules/GoogleTestAddTests.cmake\")"

b=$tmp/same-paths-other-cmake
make_build "$b" "$b" "$tmp/no-such-cmake/Modules/GoogleTestAddTests.cmake"
check other-cmake "$b" "include(\"$b/cmake-modules/GoogleTestAddTests.cmake\")"

b=$tmp/same-paths-same-cmake
make_build "$b" "$b" "$tmp/cmake/GoogleTestAddTests.cmake"
mkdir -p "$tmp/cmake" && touch "$tmp/cmake/GoogleTestAddTests.cmake"
check same-cmake "$b" "include(\"$tmp/cmake/GoogleTestAddTests.cmake\")"

b=$tmp/times
make_build "$b" /elsewhere/build /elsewhere/cmake/Modules/GoogleTestAddTests.cmake
printf 'add_test(x x)\n' > "$b/tests/gpu/tests[1]_tests.cmake"
touch -d @1000000000 "$b/tests/gpu/tests[1]_tests.cmake"
touch -d @1000000100 "$b/tests/gpu/tests[1]_include.cmake"
OZDGEMM_BUILD_DIR=$b OZDGEMM_OUT=$tmp/out-times "$repo/scripts/gpu_check.sh" unit \
  > "$tmp/times.log" 2>&1 || true
for f in "tests[1]_tests.cmake:1000000000" "tests[1]_include.cmake:1000000100"; do
  got=$(stat -c %Y "$b/tests/gpu/${f%%:*}")
  if [[ $got == "${f##*:}" ]]; then
    echo "ok   times: ${f%%:*} kept its time"
  else
    echo "FAIL times: ${f%%:*} at $got, want ${f##*:}"
    failed=1
  fi
done
grep -q "$b/cmake-modules/" "$b/tests/gpu/tests[1]_include.cmake" ||
  { echo "FAIL times: the include was not relocated"; failed=1; }

exit "$failed"
