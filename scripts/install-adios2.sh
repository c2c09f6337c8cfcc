#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ADIOS2 built with MPI into the venv: the adios2 backend's library (its C
# API's libadios2_c_mpi, headers and CMake files in site-packages/adios2).
# PyPI's binary adios2 wheel is serial, so the source package is built with
# the MPI compiler wrappers instead: ~7 minutes on 2 cores the first time.
# Idempotent: nothing happens when the venv already holds this version
# linked against the same MPI as the wrappers. A site's own ADIOS2 needs
# none of this: cmake -DADIOS2_DIR=... or -DADIOS2_ROOT=PREFIX.
#
#   scripts/install-adios2.sh [VENV [MPI]]     (default .venv, the default mpicc)
#
# MPI names another MPI's wrappers, mpicc.MPI / mpicxx.MPI (Debian: mpich).
# pip's wheel cache does not key on the compiler, so such a wheel is built
# without it and kept in ~/.cache/iokernels/wheels-MPI, installed from there
# the next time (seconds); the default build keeps using pip's cache.
set -eu
VENV=${1:-.venv}
MPI=${2:-}
VERSION=2.12.1.1001
CC=mpicc
CXX=mpicxx
if [ -n "$MPI" ]; then
  CC=mpicc.$MPI
  CXX=mpicxx.$MPI
fi
WHEELS=${XDG_CACHE_HOME:-$HOME/.cache}/iokernels/wheels-${MPI:-default}

# The MPI library (soname) that a program (ldd) loads.
mpi_of() {
  ldd "$1" 2>/dev/null | grep -oE 'lib(mpi|mpich|mpi_cray|mpi_gnu_[0-9]+)\.so[.0-9]*' | sort -u | head -1
}
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
printf '#include <mpi.h>\nint main(void) { return MPI_Init(0, 0); }\n' > "$probe_dir/p.c"
"$CC" -o "$probe_dir/p" "$probe_dir/p.c"
want=$(mpi_of "$probe_dir/p")

have=$("$VENV/bin/pip" show adios2 2>/dev/null | sed -n 's/^Version: //p')
for lib in "$VENV"/lib/python3*/site-packages/adios2/libadios2_c_mpi.so; do
  if [ "$have" = "$VERSION" ] && [ -e "$lib" ] && [ "$(mpi_of "$lib")" = "$want" ]; then
    exit 0
  fi
done
if [ -n "$have" ]; then # the serial wheel, another version or another MPI's goes first
  "$VENV/bin/pip" uninstall -q -y adios2
fi
if [ -z "$MPI" ]; then
  echo "building ADIOS2 $VERSION with MPI into $VENV (first time ~7 min on 2 cores; pip keeps the wheel)"
  CC=$CC CXX=$CXX "$VENV/bin/pip" install -q --no-binary adios2 "adios2==$VERSION" \
    --config-settings=cmake.define.ADIOS2_USE_MPI=ON
else
  if ! ls "$WHEELS"/adios2-"$VERSION"-*.whl > /dev/null 2>&1; then
    echo "building ADIOS2 $VERSION with $CC into $WHEELS (first time ~7 min on 2 cores)"
    mkdir -p "$WHEELS"
    # HDF5 off: the engine would take whichever HDF5 CMake finds, maybe another MPI's
    CC=$CC CXX=$CXX "$VENV/bin/pip" wheel -q --no-cache-dir --no-deps --no-binary adios2 \
      "adios2==$VERSION" -w "$WHEELS" --config-settings=cmake.define.ADIOS2_USE_MPI=ON \
      --config-settings=cmake.define.ADIOS2_USE_HDF5=OFF
  fi
  # the C library only: no numpy (its Python bindings are not used)
  "$VENV/bin/pip" install -q --no-deps --no-index --find-links "$WHEELS" "adios2==$VERSION"
fi
for lib in "$VENV"/lib/python3*/site-packages/adios2/libadios2_c_mpi.so; do
  got=$(mpi_of "$lib")
  if [ "$got" != "$want" ]; then
    echo "error: $lib loads ${got:-no MPI}, $CC links $want" >&2
    exit 1
  fi
done
