#!/usr/bin/env bash
# Makes a build/ configured on a CPU machine usable by ctest on the GPU machine: ctest files
# hold absolute paths (/work/main/...) and include CMake's GoogleTestAddTests.cmake from
# the configuring machine's CMAKE_ROOT (copied into build/device-support/ by CMake). Run from
# the repo root;
# afterwards `cd /work/main && ctest --test-dir build ...` works there.
set -euo pipefail
mkdir -p /work
[[ $PWD == /work/main ]] || ln -sfn "$PWD" /work/main
module_dir=$(cat build/device-support/cmake_root.txt)/Modules
if [[ ! -f $module_dir/GoogleTestAddTests.cmake && -f build/device-support/GoogleTestAddTests.cmake ]]; then
  mkdir -p "$module_dir"
  cp build/device-support/GoogleTestAddTests.cmake "$module_dir/"
fi
