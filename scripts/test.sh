#!/usr/bin/env bash
# Builds (scripts/setup.sh) and runs the CPU-labelled tests, then the sanitizer build
# (scripts/sanitize.sh). GPU tests carry the "gpu" label and run on a machine with a GPU
# (scripts/gpu_check.sh); without a device they would only skip.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"

"$repo_root/scripts/setup.sh"

build_dir=${OZDGEMM_BUILD_DIR:-build}
jobs=${OZDGEMM_JOBS:-2}

# ctest ends with the summary ("N% tests passed, ...", per-label times) and exits non-zero if
# any test failed; --no-tests=error catches a build that registered no cpu tests at all.
ctest --test-dir "$build_dir" --output-on-failure --no-tests=error -L cpu -j"$jobs"

# ASan + UBSan build of the host code, its CPU tests and a bounded fuzzing run.
# OZDGEMM_SKIP_SANITIZE=1 leaves it out (e.g. for a quick local run).
if [[ ${OZDGEMM_SKIP_SANITIZE:-0} != 1 ]]; then
  "$repo_root/scripts/sanitize.sh"
fi
