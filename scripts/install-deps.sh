#!/usr/bin/env bash
# Installs the Debian packages iokernels needs, only those missing.
# Idempotent: a second run installs nothing and makes no network call.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libopenmpi-dev openmpi-bin
  libpnetcdf-dev pnetcdf-bin
  libhdf5-openmpi-dev hdf5-tools
  libnetcdf-mpi-dev netcdf-bin
  libjansson-dev
  python3 python3-venv python3-pip
  clang-format clang        # clang: libFuzzer targets (make fuzz)
  chromium fonts-dejavu-core   # headless screenshot of the campaign report (tests)
  slurm-wlm munge              # scripts/slurm-sandbox.sh: the campaign tests' Slurm
  slurmdbd mariadb-server      # the same with accounting (sacct): SANDBOX_ACCOUNTING=1
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
