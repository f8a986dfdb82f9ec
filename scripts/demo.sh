#!/usr/bin/env bash
# Builds (scripts/setup.sh) and runs the demo (examples/demo.cu).
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"

"$repo_root/scripts/setup.sh"

demo=${OZDGEMM_BUILD_DIR:-build}/examples/demo
if [[ ! -x $demo ]]; then
  echo "demo: $demo was not built (is there an examples/demo.cu?)" >&2
  exit 1
fi
exec "$demo" "$@"
