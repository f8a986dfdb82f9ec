#!/usr/bin/env bash
# Builds (scripts/setup.sh) and runs the CPU-labelled tests. GPU tests carry the "gpu" label
# and run on the GPU machine (scripts/gpu_check.sh); without a device they would only skip.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"

"$repo_root/scripts/setup.sh"

build_dir=${OZDGEMM_BUILD_DIR:-build}
jobs=${OZDGEMM_JOBS:-2}

# ctest ends with the summary ("N% tests passed, ...", per-label times) and exits non-zero if
# any test failed; --no-tests=error catches a build that registered no cpu tests at all.
ctest --test-dir "$build_dir" --output-on-failure --no-tests=error -L cpu -j"$jobs"
