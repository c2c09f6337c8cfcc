#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mpiexec with the flags this machine needs, and nothing else: OpenMPI
# refuses root without --allow-run-as-root and more ranks than cores without
# --oversubscribe; MPICH's hydra (mpiexec.mpich) needs neither and knows
# neither. Usage: scripts/mpiexec.sh -n 4 build/iokernels btio ...
# Set MPIEXEC to use another launcher command (mpiexec.mpich, srun, ...):
# which MPI it belongs to is read from its --version.
set -euo pipefail
launcher=${MPIEXEC:-mpiexec}
flags=()
# shellcheck disable=SC2086 # MPIEXEC may hold a command with arguments
if $launcher --version 2>/dev/null | grep -qi "open mpi\|openrte"; then
  [ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
  flags+=(--oversubscribe)
fi
exec $launcher "${flags[@]}" "$@"
