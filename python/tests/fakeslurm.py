# SPDX-License-Identifier: BSD-3-Clause
"""A stand-in for what a real Slurm on one machine cannot give: Lustre's
lfs (slurmcluster.py gives the real srun, sbatch, squeue; there is no Lustre
here).

- lfs setstripe logs its arguments and succeeds, or fails as on a file
  system that is not Lustre when FAKE_LFS_FAIL is set; lfs getstripe -d
  prints the layout the last setstripe asked for.
- srun (only where a test asks for it: a batch script run without a
  cluster) logs each call's arguments, one line each as the shell would
  quote them, runs nothing and succeeds.
"""

import os
import stat

LFS = r"""#!/bin/bash
if [ "$1" = getstripe ]; then  # the layout of the last setstripe (1 x 1 MiB by default)
  c=1 size=1048576
  set -- $(grep ^setstripe "$LOG/lfs" | tail -1)
  while [ $# -gt 0 ]; do
    case $1 in -c) c=$2; shift ;; -S) size=$2; shift ;; esac
    shift
  done
  printf 'stripe_count:  %s stripe_size:   %s pattern:       raid0 stripe_offset: -1\n' "$c" "$size"
  exit 0
fi
echo "$*" >> "$LOG/lfs"
if [ -n "${FAKE_LFS_FAIL:-}" ]; then
  echo "error on ioctl 0x4008669a for '${@: -1}' (3): Inappropriate ioctl for device" >&2
  exit 25
fi
"""

SRUN = r"""#!/bin/bash
printf '%q ' "$@" >> "$LOG/srun"
echo >> "$LOG/srun"
"""


def install(tmp_path, tools=("lfs",)):
    """The fake in tmp_path/bin, its log in tmp_path/log; returns the
    environment to run under (PATH and LOG)."""
    d, log = tmp_path / "bin", tmp_path / "log"
    d.mkdir()
    log.mkdir()
    texts = {"lfs": LFS, "srun": SRUN}
    for name in tools:
        f = d / name
        f.write_text(texts[name])
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{d}:{os.environ['PATH']}", "LOG": str(log)}
