#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds a program against it twice: with
# pkg-config (ozdgemm.pc) and with CMake's find_package(ozdgemm). Both programs must run, and the
# audit module must lie beside libozdgemm.so.
#
# Usage: check_install.sh BUILD_DIR SOURCE_DIR WORKDIR
set -uo pipefail
build=$1 source=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$prefix" > "$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install"; }
libdir=$(dirname "$(find "$prefix" -name 'libozdgemm.so' | head -n 1)")
[[ -n $libdir ]] || fail "no libozdgemm.so installed"
[[ -f $libdir/libozdgemm_audit.so ]] || fail "no libozdgemm_audit.so beside libozdgemm.so"
pc=$(find "$prefix" -name ozdgemm.pc | head -n 1)
[[ -n $pc ]] || fail "no ozdgemm.pc installed"

# pkg-config, with the installed prefix (the .pc file names the configured one).
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix="$prefix" \
          --cflags --libs ozdgemm) || fail "pkg-config ozdgemm"
cc "$source/tests/install/consumer.c" $flags -o "$work/consumer_pc" || fail "build with pkg-config"
LD_LIBRARY_PATH=$libdir "$work/consumer_pc" || fail "the pkg-config program"
echo "ok: pkg-config ($flags)"

# find_package(ozdgemm).
mkdir -p "$work/cmake_consumer"
sed "s|@CONSUMER_SOURCE@|$source/tests/install/consumer.c|" \
  "$source/tests/install/CMakeLists.txt.in" > "$work/cmake_consumer/CMakeLists.txt"
cmake -S "$work/cmake_consumer" -B "$work/cmake_build" -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/cmake_consumer.log" 2>&1 || { cat "$work/cmake_consumer.log"; fail "configure"; }
cmake --build "$work/cmake_build" > "$work/cmake_build.log" 2>&1 ||
  { cat "$work/cmake_build.log"; fail "build with find_package"; }
LD_LIBRARY_PATH=$libdir "$work/cmake_build/consumer" || fail "the find_package program"
echo "ok: find_package(ozdgemm)"
