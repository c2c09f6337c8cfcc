#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ADIOS2 built with MPI into the venv: the adios2 backend's library (its C
# API's libadios2_c_mpi, headers and CMake files in site-packages/adios2).
# PyPI's binary adios2 wheel is serial, so the source package is built with
# mpicc/mpicxx instead: ~7 minutes on 2 cores the first time; pip keeps the
# wheel it built, and a second build of the same venv takes seconds.
# Idempotent: nothing happens when the venv already holds this version with
# MPI. A site's own ADIOS2 needs none of this: cmake -DADIOS2_ROOT=PREFIX.
#
#   scripts/install-adios2.sh [VENV]      (default .venv)
set -eu
VENV=${1:-.venv}
VERSION=2.12.1.1001

have=$("$VENV/bin/pip" show adios2 2>/dev/null | sed -n 's/^Version: //p')
for lib in "$VENV"/lib/python3*/site-packages/adios2/libadios2_c_mpi.so; do
  if [ "$have" = "$VERSION" ] && [ -e "$lib" ]; then
    exit 0
  fi
done
if [ -n "$have" ]; then # the serial wheel (or another version) goes first
  "$VENV/bin/pip" uninstall -q -y adios2
fi
echo "building ADIOS2 $VERSION with MPI into $VENV (first time ~7 min on 2 cores; pip keeps the wheel)"
CC=mpicc CXX=mpicxx "$VENV/bin/pip" install -q --no-binary adios2 "adios2==$VERSION" \
  --config-settings=cmake.define.ADIOS2_USE_MPI=ON
