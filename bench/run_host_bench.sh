#!/usr/bin/env bash
# Host-path benchmark on a machine with a GPU: cblas_dgemm and dgemm_ through the library against
# NVBLAS and the CPU BLAS, at native accuracy. Runs build/bench/host_blas_bench, one binary,
# three ways in one go, on the same inputs (same seeds):
#   openblas  OpenBLAS alone (Debian's libopenblas0-pthread), smaller sizes only: it is slow
#   nvblas    CUDA's libnvblas preloaded, OpenBLAS as its CPU BLAS (dgemm_: NVBLAS intercepts
#             the Fortran symbol only)
#   ozdgemm   libozdgemm preloaded, OpenBLAS as OZDGEMM_CPU_BLAS, fast scaling, s = 14..16,
#             through cblas_dgemm and dgemm_
# Needs OpenBLAS's libraries; on a machine without them, HOSTBENCH_DIR (default .hostbench)
# holds openblas.tar.xz (libblas.so.3, libopenblas.so.0 and its target, from the Debian .deb)
# and optionally libnvblas.so.13 if the machine's CUDA has none. Writes $OUT/host_bench.csv,
# host_bench.log, nvblas.conf and env.txt.
set -uo pipefail
OUT=${OUT:-out}
build_dir=${OZDGEMM_BUILD_DIR:-build}
sizes=${SIZES:-8192,16384}
reps=${REPS:-3}
mkdir -p "$OUT"
root=$PWD
bench=$root/$build_dir/bench/host_blas_bench
hb=${HOSTBENCH_DIR:-$root/.hostbench}
csv_header="label,api,n,median_s,min_s,tflops,max_rel_err,max_abs_err_over_AB,reps"

# write_env LINE...: $OUT/env.txt (date, commit, CPU, GPU, then the given lines), also printed.
write_env() {
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: ${COMMIT:-$(git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)}"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) x $(nproc)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    printf '%s\n' "$@"
  } > "$OUT/env.txt"
  cat "$OUT/env.txt"
}

# HOST_BENCH_MODE=workers: the multi-worker host path, same binary and inputs,
# cblas_dgemm, fast scaling, s = 16, n = 8192 and 16384 (SIZES), for every GPU list in
# DEVICE_LISTS (OZDGEMM_DEVICES: e.g. "0 all" compares one GPU with all of them; default: the
# variable unset) and every worker count per GPU in WORKERS (OZDGEMM_HOST_WORKERS_PER_DEVICE,
# default "1 2 4"). On one GPU, several workers give no speed-up; the point there is that
# nothing is lost and the bits do not change. Across GPUs the ratio of the medians is the
# multi-GPU speed-up. REGISTER_MODES (OZDGEMM_HOST_REGISTER, default "off") and PEER_MODES
# (OZDGEMM_HOST_PEER, default "on") add their values to the sweep, and to the label when not the
# default (e.g. REGISTER_MODES="off call" compares staging with registration per call). The
# "C digest" lines must agree across all runs. Needs no OpenBLAS: host calls not emulated would
# go to runtime-libs' reference BLAS. Writes $OUT/host_workers.csv and host_workers.log.
if [[ ${HOST_BENCH_MODE:-} == workers ]]; then
  export LD_LIBRARY_PATH=$root/$build_dir/runtime-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  csv=$OUT/host_workers.csv
  echo "$csv_header" > "$csv"
  write_env "sizes: $sizes, reps: $reps, devices: ${DEVICE_LISTS:-unset}," \
    "workers: ${WORKERS:-1 2 4}, register: ${REGISTER_MODES:-off}, peer: ${PEER_MODES:-on}"
  for d in ${DEVICE_LISTS:--}; do
    devices=()
    [[ $d == - ]] || devices=(OZDGEMM_DEVICES="$d")
    tag=${d//,/+}
    for w in ${WORKERS:-1 2 4}; do
      for r in ${REGISTER_MODES:-off}; do
        for p in ${PEER_MODES:-on}; do
          label=ozdgemm-s16-fast-w$w${devices[0]:+-d$tag}
          [[ $r == off ]] || label+=-reg${r%%:*}
          [[ $p == on ]] || label+=-peer$p
          echo "== $label" | tee -a "$OUT/host_workers.log"
          env LD_PRELOAD=$root/$build_dir/libozdgemm.so OZDGEMM_MODE=emulate \
              OZDGEMM_SCALING=fast OZDGEMM_MODULI=16 OZDGEMM_HOST_WORKERS_PER_DEVICE=$w \
              OZDGEMM_HOST_REGISTER=$r OZDGEMM_HOST_PEER=$p OZDGEMM_LOG_LEVEL=debug \
              OZDGEMM_LOG_FILE=$OUT/$label.log "${devices[@]}" \
              "$bench" --label "$label" --api cblas --sizes "$sizes" --reps "$reps" \
              --digest 1 --csv "$csv" 2>&1 | tee -a "$OUT/host_workers.log"
        done
      done
    done
  done
  column -s, -t "$csv" 2> /dev/null || cat "$csv"  # util-linux's column may be missing
  # One line per size, counted once per worker count: identical bits.
  grep "C digest" "$OUT/host_workers.log" | sed -E 's/^[^ ]+ +//' | sort | uniq -c
  exit 0
fi
libs=$(mktemp -d)
tar xJf "$hb/openblas.tar.xz" -C "$libs"
openblas=$libs/libblas.so.3
nvblas=$(ls /usr/local/cuda/lib64/libnvblas.so* 2>/dev/null | head -n1)
[[ -z $nvblas && -f $hb/libnvblas.so.13 ]] && nvblas=$hb/libnvblas.so.13
export LD_LIBRARY_PATH=$libs:$root/$build_dir/runtime-libs:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
csv=$OUT/host_bench.csv
echo "$csv_header" > "$csv"
write_env "nvblas: $nvblas" "sizes: $sizes, reps: $reps"

cat > "$OUT/nvblas.conf" <<CONF
NVBLAS_LOGFILE $OUT/nvblas_lib.log
NVBLAS_CPU_BLAS_LIB $libs/libopenblas.so.0
NVBLAS_GPU_LIST ALL
NVBLAS_TILE_DIM 2048
NVBLAS_AUTOPIN_MEM_ENABLED
CONF

run() {  # label, env..., -- args
  echo "== $*" | tee -a "$OUT/host_bench.log"
  env "$@" 2>&1 | tee -a "$OUT/host_bench.log"
}
run OPENBLAS_NUM_THREADS=$(nproc) "$bench" --label openblas --api fortran --sizes "${OPENBLAS_SIZES:-4096}" --reps 1 --csv "$csv"
if [[ -n $nvblas ]]; then
  run NVBLAS_CONFIG_FILE=$OUT/nvblas.conf LD_PRELOAD=$nvblas "$bench" --label nvblas --api fortran --sizes "$sizes" --reps "$reps" --csv "$csv"
else
  echo "no libnvblas found: NVBLAS not measured" | tee -a "$OUT/host_bench.log"
fi
lib=$root/$build_dir/libozdgemm.so
for s in 14 15 16; do
  run LD_PRELOAD=$lib OZDGEMM_CPU_BLAS=$openblas OZDGEMM_MODE=auto OZDGEMM_SCALING=fast OZDGEMM_MODULI=$s \
      OZDGEMM_LOG_LEVEL=info OZDGEMM_LOG_FILE=$OUT/ozdgemm_lib.log \
      "$bench" --label ozdgemm-s$s-fast --api cblas --sizes "$sizes" --reps "$reps" --csv "$csv"
done
run LD_PRELOAD=$lib OZDGEMM_CPU_BLAS=$openblas OZDGEMM_MODE=auto OZDGEMM_SCALING=fast OZDGEMM_MODULI=16 \
    OZDGEMM_LOG_LEVEL=info OZDGEMM_LOG_FILE=$OUT/ozdgemm_lib.log \
    "$bench" --label ozdgemm-s16-fast --api fortran --sizes "$sizes" --reps "$reps" --csv "$csv"
run LD_PRELOAD=$lib OZDGEMM_CPU_BLAS=$openblas OZDGEMM_MODE=auto OZDGEMM_SCALING=accurate OZDGEMM_MODULI=14 \
    OZDGEMM_LOG_LEVEL=info OZDGEMM_LOG_FILE=$OUT/ozdgemm_lib.log \
    "$bench" --label ozdgemm-s14-accurate --api cblas --sizes "$sizes" --reps "$reps" --csv "$csv"
rm -rf "$libs"
column -s, -t "$csv" 2> /dev/null || cat "$csv"
