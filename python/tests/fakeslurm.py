# SPDX-License-Identifier: BSD-3-Clause
"""Stand-ins for srun, sbatch, sacct and lfs on PATH, so that the whole
submit -> run -> collect path runs on a machine without Slurm or Lustre.

- sbatch --parsable SCRIPT runs SCRIPT at once (job 4242, this host as its
  one node) under the script's own #SBATCH --time: past it, the job's whole
  process tree is killed and sacct says TIMEOUT, as Slurm would;
- srun [-n N] [-N K] [--ntasks-per-node=P] [--export=ALL,A=b,...] CMD
  exports the --export variables, numbers the step (SLURM_STEP_ID), logs
  its arguments, sleeps FAKE_SRUN_SLEEP seconds when that is set (a run
  that outlasts its limits), then runs CMD with scripts/mpiexec.sh;
- sacct prints the state the fake sbatch left;
- lfs setstripe logs its arguments and succeeds, or fails as on a file
  system that is not Lustre when FAKE_LFS_FAIL is set; lfs getstripe -d
  prints the layout the last setstripe asked for.
"""

import os
import stat

from conftest import REPO

JOB_ID = 4242

SBATCH = r"""#!/bin/bash
script=${@: -1}
echo "$script" >> "$LOG/submitted"
t=$(sed -n 's/^#SBATCH --time=//p' "$script")
limit=$(echo "${t:-60}" | awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3;
  else if (NF == 2) print $1*60 + $2; else print $1*60 }')
export SLURM_JOB_ID=JOBID SLURM_JOB_NODELIST=$(hostname) SLURM_JOB_NUM_NODES=1
echo 0 > "$LOG/step"
bash "$script" > "$LOG/job.out" 2>&1 &
pid=$!
kill_tree() { local c; kill -STOP "$1" 2> /dev/null
  for c in $(pgrep -P "$1"); do kill_tree "$c"; done; kill -KILL "$1" 2> /dev/null; }
state=COMPLETED
for ((i = 0; i < limit * 10; i++)); do kill -0 $pid 2> /dev/null || break; sleep 0.1; done
if kill -0 $pid 2> /dev/null; then
  kill_tree $pid; wait $pid 2> /dev/null; state=TIMEOUT
else
  wait $pid || state=FAILED
fi
echo "$state" > "$LOG/sacct"
echo JOBID
"""

SRUN = r"""#!/bin/bash
n=1
while [ $# -gt 0 ]; do
  case $1 in
    -n) n=$2; shift 2 ;;
    -N) shift 2 ;;
    --export=*) IFS=, read -ra kv <<< "${1#--export=}"
      for x in "${kv[@]}"; do [ "$x" = ALL ] || export "$x"; done; shift ;;
    -*) shift ;;
    *) break ;;
  esac
done
step=$(cat "$LOG/step" 2> /dev/null || echo 0); echo $((step + 1)) > "$LOG/step"
export SLURM_STEP_ID=$step
echo "step $step: $*" >> "$LOG/steps"
env | grep -E '^(DARSHAN|ROMIO|PNETCDF|IOK_TEST)_' | sort > "$LOG/step$step.env"
[ -n "${FAKE_SRUN_SLEEP:-}" ] && sleep "$FAKE_SRUN_SLEEP"
export OMPI_MCA_plm=^slurm OMPI_MCA_ras=^slurm OMPI_MCA_ess=^slurm
exec REPO/scripts/mpiexec.sh -n "$n" "$@"
"""

SACCT = r"""#!/bin/bash
cat "$LOG/sacct" 2> /dev/null
"""

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


def install(tmp_path, tools=("srun", "sbatch", "sacct", "lfs")):
    """The fakes in tmp_path/bin, their logs in tmp_path/log; returns the
    environment to run under (PATH and LOG)."""
    d, log = tmp_path / "bin", tmp_path / "log"
    d.mkdir()
    log.mkdir()
    texts = {"srun": SRUN, "sbatch": SBATCH, "sacct": SACCT, "lfs": LFS}
    for name in tools:
        f = d / name
        f.write_text(texts[name].replace("JOBID", str(JOB_ID)).replace("REPO", str(REPO)))
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{d}:{os.environ['PATH']}", "LOG": str(log)}
