# Sourced by the one-call GPU check scripts (gpu_session_check.sh, gpu_full_check.sh,
# gpu_multi_check.sh) with the name of their output folder: run from the repo root with build/
# or the slim copy .devbuild/ (scripts/make_devbuild.sh) carried over, it links build/, makes
# W=$OUT/<name>, defines pack (tar W into $OUT/<name>.tgz: the device tool brings back only a
# few files) and leaves the shell in /work/main with ctest usable (gpu_ctest_prepare.sh).
set -uo pipefail
[[ -e build ]] || ln -s .devbuild build
W=$OUT/$1
mkdir -p "$W"
pack_name=$1
pack() { (cd "$OUT" && tar czf "$pack_name.tgz" "$pack_name"); }
bash scripts/gpu_ctest_prepare.sh
cd /work/main || exit 1
