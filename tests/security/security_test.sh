#!/usr/bin/env bash
# The library's handling of a hostile environment, on a real program
# (settings_probe) and a real file system:
#   1. OZDGEMM_LOG_FILE is created with mode 0644 even under umask 000, and appended to;
#   2. a symbolic link at OZDGEMM_LOG_FILE (to an existing file, or dangling) is not followed:
#      the target is untouched or not created, the log goes to stderr with a warning naming
#      the file and the reason;
#   3. in a setgid process (secure execution) every OZDGEMM_* setting is ignored, no log file
#      is created and the library named by OZDGEMM_CPU_BLAS is never loaded. This part needs
#      root (to make a setgid copy and run it as nobody with setpriv) and a file system that
#      honours setgid bits; without them it is reported as skipped (exit 77) after parts 1-2.
#
# Usage: security_test.sh PROBE FAKE_BLAS_SO
set -uo pipefail

probe=$1 fake=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what" >&2; fail=1; fi
}
run_probe() {  # run_probe OUT ERR [VAR=VALUE...]: the probe with exactly these settings
  local out=$1 err=$2; shift 2
  env -u OZDGEMM_LOG_FILE -u OZDGEMM_LOG_LEVEL -u OZDGEMM_CPU_BLAS -u OZDGEMM_MODE \
      -u OZDGEMM_MODULI "$@" "$probe" >"$out" 2>"$err"
}

# 1. Created 0644 under umask 000; appended, not truncated.
log=$work/ozdgemm.log
(umask 000 && run_probe "$work/out1" "$work/err1" OZDGEMM_LOG_FILE="$log" OZDGEMM_LOG_LEVEL=info)
check "probe ran (1)" test $? -eq 0
check "log file created" test -f "$log"
check "log file mode 0644 under umask 000 (got $(stat -c %a "$log" 2>/dev/null))" \
  test "$(stat -c %a "$log" 2>/dev/null)" = 644
check "info message in the log file" grep -q "probe: info message" "$log"
check "nothing logged to stderr" test ! -s "$work/err1"
(umask 000 && run_probe "$work/out1" "$work/err1" OZDGEMM_LOG_FILE="$log" OZDGEMM_LOG_LEVEL=info)
check "second run appends" test "$(grep -c "probe: warn message" "$log")" -eq 2

# 2. Symbolic links are not followed.
target=$work/precious.txt
echo "original content" >"$target"
chmod 600 "$target"
before=$(sha256sum <"$target")
ln -s "$target" "$work/link.log"
run_probe "$work/out2" "$work/err2" OZDGEMM_LOG_FILE="$work/link.log" OZDGEMM_LOG_LEVEL=info
check "probe ran (2)" test $? -eq 0
check "symlink target untouched" test "$(sha256sum <"$target")" = "$before"
check "target mode unchanged" test "$(stat -c %a "$target")" = 600
check "warning names the file and the reason" \
  grep -qF "OZDGEMM_LOG_FILE='$work/link.log' cannot be opened (it is a symbolic link" "$work/err2"
check "log goes to stderr instead" grep -q "probe: warn message" "$work/err2"
ln -s "$work/not-there.txt" "$work/dangling.log"
run_probe "$work/out3" "$work/err3" OZDGEMM_LOG_FILE="$work/dangling.log"
check "dangling symlink: target not created" test ! -e "$work/not-there.txt"
check "dangling symlink: warning" grep -q "is a symbolic link, which is not followed" "$work/err3"
run_probe "$work/out4" "$work/err4" OZDGEMM_LOG_FILE="$work/no-such-dir/x.log"
check "unopenable path: probe still runs" grep -q "^mode=" "$work/out4"
check "unopenable path: warning with the reason" \
  grep -qF "x.log' cannot be opened (No such file or directory); logging to stderr" "$work/err4"

# Plain process: the settings do apply (so part 3 shows a difference, not a broken probe).
run_probe "$work/out5" "$work/err5" OZDGEMM_MODE=native OZDGEMM_MODULI=5 OZDGEMM_CPU_BLAS="$fake"
check "plain process: OZDGEMM_MODE read" grep -qx "mode=native" "$work/out5"
check "plain process: OZDGEMM_MODULI read" grep -qx "moduli=5" "$work/out5"
check "plain process: OZDGEMM_CPU_BLAS loaded" grep -q "fake_blas: loaded" "$work/err5"
check "plain process: dgemm_ from it" grep -qx "dgemm_from=$fake" "$work/out5"

if ((fail)); then exit 1; fi

# 3. Setgid copy run as nobody: AT_SECURE is set, secure_getenv ignores the environment.
if ((EUID != 0)) || ! command -v setpriv >/dev/null; then
  echo "SKIP part 3: needs root and setpriv to run a setgid program as another user"
  exit 77
fi
sgid=$work/sgid
mkdir -m 755 "$sgid"
mkdir -m 1777 "$sgid/open"  # writable by nobody: the log file could be created if read
cp "$probe" "$sgid/probe"
cp "$fake" "$sgid/fake_blas.so"
chmod 755 "$sgid/fake_blas.so"
chown root:root "$sgid/probe"
chmod 2755 "$sgid/probe"
chmod 755 "$work"
(cd / && env -u OZDGEMM_LOG_FILE -u OZDGEMM_LOG_LEVEL OZDGEMM_LOG_FILE="$sgid/open/x.log" \
   OZDGEMM_LOG_LEVEL=info OZDGEMM_MODE=native OZDGEMM_MODULI=5 \
   OZDGEMM_CPU_BLAS="$sgid/fake_blas.so" \
   setpriv --reuid=65534 --regid=65534 --clear-groups "$sgid/probe" >"$work/out6" 2>"$work/err6")
status=$?
if ! grep -qx "secure=1" "$work/out6"; then
  echo "SKIP part 3: the setgid copy did not run in secure-execution mode (status $status;" \
       "nosuid mount or no_new_privs?)"
  cat "$work/out6" "$work/err6"
  exit 77
fi
check "setgid: probe ran" test "$status" -eq 0
check "setgid: OZDGEMM_MODE ignored" grep -qx "mode=auto" "$work/out6"
check "setgid: OZDGEMM_MODULI ignored" grep -qx "moduli=certified" "$work/out6"
check "setgid: OZDGEMM_CPU_BLAS ignored" grep -qx "cpu_blas=" "$work/out6"
check "setgid: OZDGEMM_CPU_BLAS never loaded" bash -c "! grep -q 'fake_blas: loaded' '$work/err6'"
check "setgid: dgemm_ not from it" bash -c "! grep -q 'fake_blas' '$work/out6'"
check "setgid: OZDGEMM_LOG_FILE not created" test ! -e "$sgid/open/x.log"
check "setgid: OZDGEMM_LOG_LEVEL ignored (no info line)" \
  bash -c "! grep -q 'probe: info message' '$work/err6'"
check "setgid: warn line on stderr" grep -q "probe: warn message" "$work/err6"
check "setgid: one warning that the settings are ignored" \
  test "$(grep -c "every OZDGEMM_\* environment setting is ignored" "$work/err6")" -eq 1
if ((fail)); then
  echo "--- setgid run: stdout"; cat "$work/out6"; echo "--- stderr"; cat "$work/err6"
  exit 1
fi
echo "all checks passed"
