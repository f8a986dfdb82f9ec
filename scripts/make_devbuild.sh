#!/usr/bin/env bash
# Copies build/ to .devbuild/ without object files, static libraries and the logs of CPU test
# runs, which the GPU machine does not need, so that it fits the device tool's 64 MiB carry limit. On the GPU machine:
#   [[ -e build ]] || ln -s .devbuild build
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# ctest discovers GoogleTest cases when the binary is newer than its list: list them here,
# where the test binaries can run, not on the GPU machine (which lacks GMP).
ctest --test-dir build -N > /dev/null
rm -rf .devbuild
cp -a build .devbuild
find .devbuild \( -name '*.o' -o -name '*.a' -o -name '.ninja_*' -o -name '*.log' \) -delete
rm -rf .devbuild/Testing .devbuild/CMakeFiles/3.*
du -sh .devbuild
