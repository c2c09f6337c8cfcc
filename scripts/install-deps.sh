#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian packages iokernels needs, only those missing.
# Idempotent: a second run installs nothing and makes no network call.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libopenmpi-dev openmpi-bin
  libpnetcdf-dev pnetcdf-bin
  libhdf5-openmpi-dev hdf5-tools
  libnetcdf-mpi-dev netcdf-bin
  mpich libhdf5-mpich-dev   # make test-mpich: the suite built and run with MPICH too
  libjansson-dev
  python3 python3-venv python3-pip
  clang-format clang        # clang: libFuzzer targets (make fuzz)
  libclang-rt-14-dev        # clang's sanitizer and libFuzzer runtimes (Debian 12 ships them apart)
  chromium fonts-dejavu-core   # headless screenshot of the campaign report (tests)
  slurm-wlm munge              # scripts/slurm-sandbox.sh: the campaign tests' Slurm
  slurmdbd mariadb-server      # the same with accounting (sacct): SANDBOX_ACCOUNTING=1
  groff-base man-db           # man -l man/iokernels.1, and its test without warnings
  bindfs                      # a FUSE mount: the cache verdict "unknown" there (tests)
  strace                      # the replay's and the ceiling probe's system-call tests
  graphviz                    # dot: the site's diagrams (docs/diagrams/*.dot -> SVG at make docs)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing Debian packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "error: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
