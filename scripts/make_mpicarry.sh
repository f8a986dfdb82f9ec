#!/usr/bin/env bash
# Assembles .mpicarry/ (ignored by git): what the GPU machine needs for the MPI and GPU-sharing
# checks (scripts/gpu_mpi_check.sh) and nothing else, for a device call of its own (the device
# tool carries 64 MiB in all; .devbuild/ alone takes most of that):
#   root/    Debian 12's Open MPI 4.1 runtime and ScaLAPACK (apt-get download, dpkg-deb -x), with
#            their runtime libraries (PMIx, hwloc, libevent, udev, zlib), in Debian's layout;
#            no docs, man pages, headers, compiler wrappers, Fortran/Java/C++ bindings, OpenSHMEM,
#            nor the MCA plugins that need libraries not carried (UCX, libfabric/OFI, verbs,
#            PSM, CUDA, Java): Open MPI runs on one machine with btl self,vader and pml ob1.
#   build/   the project's pieces from build/: libozdgemm.so, runtime-libs/ (BLAS, LAPACK,
#            gfortran), tests/mpi's programs, the fake CUDA driver and the GPU-sharing client.
#   env.sh   sourced on the GPU machine: OPAL_PREFIX and OPAL_SYSCONFDIR (Open MPI finds its
#            plugins, help texts and MCA defaults relative to them), LD_LIBRARY_PATH,
#            OZDGEMM_MPIRUN, OZDGEMM_BUILD_DIR; all relative to where the folder lies.
#
# Usage: scripts/make_mpicarry.sh [BUILD_DIR]   (default build; needs network for apt-get)
# On the GPU machine: bash scripts/gpu_mpi_check.sh (it sources .mpicarry/env.sh when there).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build}
carry=.mpicarry
arch=x86_64-linux-gnu

for f in libozdgemm.so tests/mpi/mpi_scalapack_test tests/mpi/mpi_lazy_start_test \
         tests/mpi/fake-driver/libcuda.so.1 tests/mpi/gpu_share_client runtime-libs/libblas.so.3; do
  [[ -e $build/$f ]] || { echo "missing $build/$f: build first (cmake --build $build)"; exit 2; }
done

packages=(openmpi-bin libopenmpi3 openmpi-common libscalapack-openmpi2.2 libpmix2 libhwloc15
          libevent-core-2.1-7 libevent-pthreads-2.1-7 libudev1 zlib1g)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
(cd "$stage" && apt-get download "${packages[@]}" > download.log 2>&1) || {
  cat "$stage/download.log"; echo "apt-get download failed"; exit 1; }
mkdir "$stage/x"
for deb in "$stage"/*.deb; do dpkg-deb -x "$deb" "$stage/x"; done

rm -rf "$carry"
mkdir -p "$carry/root/usr/bin" "$carry/root/usr/lib/$arch" "$carry/root/etc"
x=$stage/x
# The launcher and its daemon (orted starts the ranks of other nodes; kept for completeness).
cp -a "$x/usr/bin/orterun" "$x/usr/bin/orted" "$x/usr/bin/ompi_info" "$carry/root/usr/bin/"
ln -s orterun "$carry/root/usr/bin/mpirun"
# Libraries, one file each under its soname (what the loader looks for), all in one folder
# whichever of /lib, /usr/lib or a private folder their package used.
for soname in libmpi.so.40 libopen-rte.so.40 libopen-pal.so.40 libmca_common_sm.so.40 \
              libmca_common_monitoring.so.50 libmca_common_ompio.so.41 libpmix.so.2 \
              libhwloc.so.15 libevent_core-2.1.so.7 libevent_pthreads-2.1.so.7 \
              libscalapack-openmpi.so.2.2 libudev.so.1 libz.so.1; do
  found=$(find "$x" -name "$soname" \( -type f -o -type l \) | head -n 1)
  [[ -n $found ]] || { echo "$soname not found in the packages"; exit 1; }
  cp -L "$found" "$carry/root/usr/lib/$arch/$soname"
done
# PMIx's own plugins (compression, resource managers) and help texts, in its Debian layout.
mkdir -p "$carry/root/usr/lib/$arch/pmix2/lib"
cp -a "$x/usr/lib/$arch/pmix2/lib/pmix" "$carry/root/usr/lib/$arch/pmix2/lib/"
# Open MPI's help texts and MCA defaults (OPAL_SYSCONFDIR points here).
mkdir -p "$carry/root/usr/share"
cp -a "$x/usr/share/openmpi" "$carry/root/usr/share/"
cp -a "$x/etc/openmpi" "$carry/root/etc/"
cp -a "$x/usr/lib/$arch/pmix2/share" "$carry/root/usr/lib/$arch/pmix2/"

# MCA plugins: only those whose libraries are all carried or part of glibc/libgcc/libstdc++
# (the GPU machine has those: the project's binaries need them too).
plugins=$x/usr/lib/$arch/openmpi/lib/openmpi3
dest=$carry/root/usr/lib/$arch/openmpi/lib/openmpi3
mkdir -p "$dest"
have=" $(cd "$carry/root" && find . -name '*.so*' -printf '%f ' ) libc.so.6 libm.so.6 \
libdl.so.2 libpthread.so.0 librt.so.1 libutil.so.1 libgcc_s.so.1 libstdc++.so.6 \
ld-linux-x86-64.so.2 "
kept=0 dropped=()
for p in "$plugins"/mca_*.so; do
  ok=1
  for need in $(readelf -d "$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [[ $have == *" $need "* ]] || { ok=0; break; }
  done
  # Also drop what needs nothing missing but serves only the dropped stacks or the bindings.
  case $(basename "$p") in
    *ucx*|*ofi*|*openib*|*psm*|*cuda*|*verbs*|*java*|*oshmem*|*spml*|*sshmem*|*scoll*|\
    *atomic_*|*memheap*) ok=0 ;;
  esac
  if ((ok)); then cp -a "$p" "$dest/"; kept=$((kept + 1)); else dropped+=("$(basename "$p")"); fi
done
echo "MCA plugins: kept $kept, dropped ${#dropped[@]} (${dropped[*]})"

# The project's pieces, in build/'s layout.
b=$carry/build
mkdir -p "$b/tests/mpi/fake-driver" "$b/runtime-libs"
cp -a "$build"/libozdgemm.so* "$b/"
cp -a "$build"/runtime-libs/. "$b/runtime-libs/"
cp -a "$build"/tests/mpi/{mpi_scalapack_test,mpi_lazy_start_test,gpu_share_client} "$b/tests/mpi/"
cp -a "$build"/tests/mpi/fake-driver/libcuda.so.1 "$b/tests/mpi/fake-driver/"

cat > "$carry/env.sh" <<'EOF'
# Sourced (bash): the carried Open MPI, ScaLAPACK and project build, wherever this folder lies.
# Open MPI was built with prefix /usr and sysconfdir /etc/openmpi: OPAL_PREFIX relocates the
# prefix (bindir, libdir, the plugins' pkglibdir, the help texts' pkgdatadir), OPAL_SYSCONFDIR
# the MCA defaults. PMIx (Debian's prefix /usr/lib/x86_64-linux-gnu/pmix2) does not follow
# PMIX_PREFIX for these: PMIX_PKGDATADIR (help texts) and its MCA component path (the zlib
# compression plugin; without it PMIx warns at every start). LD_LIBRARY_PATH outranks the
# binaries' RUNPATH (/usr/lib/.../openmpi/lib).
mpicarry=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export OPAL_PREFIX=$mpicarry/root/usr OPAL_SYSCONFDIR=$mpicarry/root/etc/openmpi
export PMIX_PKGDATADIR=$mpicarry/root/usr/lib/x86_64-linux-gnu/pmix2/share/pmix
export PMIX_MCA_mca_base_component_path=$mpicarry/root/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
LD_LIBRARY_PATH=$mpicarry/root/usr/lib/x86_64-linux-gnu:$mpicarry/build/runtime-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
# cuBLAS and the CUDA runtime come from the GPU machine's toolkit (gpu_share_client needs them).
[[ -d /usr/local/cuda/lib64 ]] && LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64
export OZDGEMM_MPIRUN=$mpicarry/root/usr/bin/mpirun
export OZDGEMM_BUILD_DIR=$mpicarry/build
# No network: never look for interconnect hardware or plugins that are not carried.
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_base_warn_component_unused=0
EOF
du -sh "$carry"
size=$(du -sm "$carry" | cut -f1)
((size < 60)) || { echo "FAIL: $carry is $size MiB, over 60"; exit 1; }
