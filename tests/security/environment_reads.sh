#!/usr/bin/env bash
# Every read of the environment in the library goes through src/common/env.cpp: the settings
# (OZDGEMM_*, test-only ones included) through secure_getenv, which ignores them in setuid and
# setgid processes, and the launchers' variables. A getenv, secure_getenv or environ anywhere
# else in src/, kernels/ or include/ would bypass that rule. Comments do not count.
#
# Usage: environment_reads.sh SOURCE_DIR
set -uo pipefail
root=${1:?usage: environment_reads.sh SOURCE_DIR}
cd "$root" || exit 1

# Code lines only: the part of each line before a // comment.
hits=$(grep -rnE --include='*.cpp' --include='*.hpp' --include='*.cu' --include='*.cuh' \
         --include='*.h' '(getenv|\benviron\b)' src kernels include |
       grep -v '^src/common/env\.cpp:' |
       awk -F: '{ line = $0; sub(/^[^:]*:[^:]*:/, "", line); sub(/\/\/.*/, "", line);
                  if (line ~ /(getenv|(^|[^A-Za-z_])environ([^A-Za-z_]|$))/) print }')
if [[ -n $hits ]]; then
  echo "FAIL: the environment is read outside src/common/env.cpp:" >&2
  echo "$hits" >&2
  exit 1
fi
# And the helper itself reads OZDGEMM_* settings with secure_getenv only.
if ! grep -q 'secure_getenv(name)' src/common/env.cpp; then
  echo "FAIL: src/common/env.cpp does not read the settings with secure_getenv" >&2
  exit 1
fi
echo "ok: every environment read is in src/common/env.cpp"
