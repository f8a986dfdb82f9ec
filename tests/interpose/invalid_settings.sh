#!/usr/bin/env bash
# Invalid OZDGEMM_* values: the program still runs and computes correctly, and the log has
# exactly one warning per bad variable, naming the variable and the value.
# Usage: invalid_settings.sh LIBOZDGEMM PROGRAM LOGDIR
set -uo pipefail
lib=$1 program=$2 logdir=$3
mkdir -p "$logdir"
log=$logdir/invalid_settings.log
rm -f "$log"
env LD_PRELOAD="$lib" OZDGEMM_LOG_LEVEL=loud OZDGEMM_LOG_FILE="$log" OZDGEMM_MODE=fastest \
  OZDGEMM_MODULI=99 OZDGEMM_SCALING=exact OZDGEMM_DEVICE=-1 OZDGEMM_AUTO_MARGIN=2 \
  OZDGEMM_MIN_DIM=abc OZDGEMM_DEVICES=0,,1 OZDGEMM_HOST_WORKERS_PER_DEVICE=0 \
  OZDGEMM_INT8_GEMM=fastest OZDGEMM_CALIBRATE=sometimes OZDGEMM_LEVEL3_BLOCK=0 \
  OZDGEMM_HOST_PEER=yes OZDGEMM_HOST_REGISTER=always \
  "$program" > "$logdir/invalid_settings.out" 2>&1
rc=$?
((rc == 0)) || { echo "program failed ($rc) under invalid settings"; cat "$logdir/invalid_settings.out"; exit 1; }
fail=0
for pair in OZDGEMM_LOG_LEVEL=loud OZDGEMM_MODE=fastest OZDGEMM_MODULI=99 OZDGEMM_SCALING=exact \
            OZDGEMM_DEVICE=-1 OZDGEMM_AUTO_MARGIN=2 OZDGEMM_MIN_DIM=abc OZDGEMM_DEVICES=0,,1 \
            OZDGEMM_HOST_WORKERS_PER_DEVICE=0 OZDGEMM_INT8_GEMM=fastest OZDGEMM_CALIBRATE=sometimes \
            OZDGEMM_LEVEL3_BLOCK=0 OZDGEMM_HOST_PEER=yes OZDGEMM_HOST_REGISTER=always; do
  var=${pair%%=*} value=${pair#*=}
  count=$(grep -c "$var='$value'" "$log")
  if [[ $count != 1 ]]; then
    echo "expected one warning for $var='$value', found $count"
    fail=1
  fi
done
# The non-numeric values OZDGEMM_MODULI accepts: no warning, and the program runs.
for value in auto certified; do
  rm -f "$log"
  env LD_PRELOAD="$lib" OZDGEMM_LOG_LEVEL=debug OZDGEMM_LOG_FILE="$log" OZDGEMM_MODULI=$value \
    "$program" > "$logdir/valid_moduli.out" 2>&1 || { echo "program failed under OZDGEMM_MODULI=$value"; fail=1; }
  if grep -q "OZDGEMM_MODULI='$value' is invalid" "$log" 2>/dev/null; then
    echo "OZDGEMM_MODULI=$value was warned about:"; grep "OZDGEMM_MODULI" "$log"; fail=1
  fi
done
((fail == 0)) && echo "one warning per invalid variable, none for OZDGEMM_MODULI=auto|certified; the program ran correctly"
exit $fail
