# SPDX-License-Identifier: BSD-3-Clause
"""A real Slurm cluster on this machine for the campaign tests, through the
same script a user runs (scripts/slurm-sandbox.sh, docs/slurm.md, "A Slurm
on a laptop"): munge, slurmctld and two slurmd (nodes n1 and n2, each in
its own UTS namespace) under a temporary folder, on loopback ports of their
own. Where Slurm is missing, scripts/install-deps.sh installs it (as root);
where that or a daemon fails, the tests that need the cluster are skipped
with the reason. Every daemon is stopped by its pid file at the end, also
when the tests fail (atexit)."""

import atexit
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from conftest import REPO

SANDBOX = REPO / "scripts" / "slurm-sandbox.sh"
DAEMONS = ("munged", "slurmctld", "slurmd")
# Slurm keeps an ended job this long (squeue -t all), then forgets it
MIN_JOB_AGE = 30
# Slurm kills a job this many minutes after its limit (OverTimeLimit): the
# window in which the batch script must see the time up by itself
OVER_TIME_LIMIT = 1
# squeue states of a job that has not ended ("": not listed yet)
LIVE = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", ""}


@dataclass
class Cluster:
    directory: Path
    env: dict  # SLURM_CONF, PATH, OpenMPI on loopback
    nodes: tuple

    def run(self, *cmd, timeout=120):
        return subprocess.run(
            [str(c) for c in cmd],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def state(self, job_id):
        """(what squeue -t all prints for the job, its stderr): Slurm's own word."""
        p = self.run("squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T")
        return p.stdout.strip(), p.stderr.strip()

    def wait_ended(self, job_id, timeout=240):
        """Slurm's final state of the job (TIMEOUT, CANCELLED, ...), polled."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            state, err = self.state(job_id)
            if state not in LIVE:
                return state
            if err:
                raise AssertionError(f"squeue -t all -j {job_id}: {err}")
            time.sleep(1)
        raise AssertionError(f"job {job_id} still {state or 'unknown'} after {timeout} s")

    def wait_forgotten(self, job_id, timeout=240):
        """squeue's words once Slurm has forgotten the job."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            state, err = self.state(job_id)
            if not state and "Invalid job id" in err:
                return err
            time.sleep(2)
        raise AssertionError(f"Slurm still knows job {job_id} after {timeout} s")


def _have_slurm():
    path = os.environ["PATH"] + ":/usr/sbin:/sbin"
    return all(shutil.which(d, path=path) for d in DAEMONS + ("srun", "unshare"))


def _port_free(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def why_not():
    """None when a cluster can be started here, else the reason."""
    if os.geteuid() != 0:
        return "the Slurm sandbox runs its daemons as root (SlurmUser=root); not root"
    if not _have_slurm():
        p = subprocess.run(
            [str(REPO / "scripts" / "install-deps.sh")], cwd=REPO, capture_output=True, text=True
        )
        if p.returncode != 0 or not _have_slurm():
            last = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
            return f"slurm-wlm/munge missing and scripts/install-deps.sh failed: {last[0]}"
    return None


def start(directory, nodes=2, base=None, accounting=False, jobcomp=False):
    """The cluster (accounting: slurmdbd on MariaDB; jobcomp: the job
    completion log DIR/jobcomp.txt, jobcomp/filetxt), or raises RuntimeError
    with the script's own error line."""
    ports = (1, 2, 306, 817, 819)
    base = base or next(b for b in range(17000, 18000, 20) if all(_port_free(b + k) for k in ports))
    env = {
        **os.environ,
        "SANDBOX_PORT": str(base),
        "SANDBOX_MIN_JOB_AGE": str(MIN_JOB_AGE),
        "SANDBOX_OVER_TIME_LIMIT": str(OVER_TIME_LIMIT),
        "SANDBOX_ACCOUNTING": "1" if accounting else "0",
        "SANDBOX_EXTRA": (
            f"JobCompType=jobcomp/filetxt\nJobCompLoc={Path(directory) / 'jobcomp.txt'}"
            if jobcomp
            else ""
        ),
        "PATH": os.environ["PATH"] + ":/usr/sbin:/sbin",
    }
    p = subprocess.run(
        [str(SANDBOX), "start", str(directory), str(nodes), "8"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    atexit.register(stop, directory)
    if p.returncode != 0:
        stop(directory)
        raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "no output")
    return Cluster(
        Path(directory),
        {
            "SLURM_CONF": str(Path(directory) / "etc" / "slurm.conf"),
            "PATH": env["PATH"],
            # OpenMPI between the two nodes: TCP on loopback
            "OMPI_MCA_btl_tcp_if_include": "lo",
            "OMPI_MCA_oob_tcp_if_include": "lo",
        },
        tuple(f"n{i}" for i in range(1, nodes + 1)),
    )


def stop(directory):
    if (Path(directory) / "run").exists():
        subprocess.run([str(SANDBOX), "stop", str(directory)], capture_output=True, timeout=60)
