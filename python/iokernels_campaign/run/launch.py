# SPDX-License-Identifier: BSD-3-Clause
"""Launchers: the command that starts one run on N ranks. Only the system's
own launchers (mpiexec, srun, sbatch); nothing here starts ranks itself."""

import functools
import os
import shutil
import subprocess

from ..spec import slurm

LAUNCHERS = ("mpiexec", "srun", "sbatch")


@functools.cache
def _is_openmpi(mpiexec):
    try:
        p = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return False
    text = (p.stdout + p.stderr).lower()
    return "open mpi" in text or "openrte" in text


def cores():
    """Cores this process may run on (OpenMPI's default slot count is the cores)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def mpiexec_flags(ranks, openmpi, root, ncores):
    """The flags scripts/mpiexec.sh adds, only where needed: OpenMPI refuses
    root without --allow-run-as-root and more ranks than cores without
    --oversubscribe. Other MPIs get none."""
    flags = []
    if openmpi and root:
        flags.append("--allow-run-as-root")
    if openmpi and ranks > ncores:
        flags.append("--oversubscribe")
    return flags


def mpiexec_command(ranks, argv, env=None, mpiexec="mpiexec"):
    """(command, variables for the launcher's own environment): OpenMPI
    exports env to the ranks with -x NAME=value (the launcher itself does not
    get LD_PRELOAD); other MPIs pass on the launcher's environment."""
    path = shutil.which(mpiexec) or mpiexec
    openmpi = _is_openmpi(path)
    flags = mpiexec_flags(ranks, openmpi, os.geteuid() == 0, cores())
    env = env or {}
    if openmpi:
        flags += [a for k, v in env.items() for a in ("-x", f"{k}={v}")]
    return [mpiexec, *flags, "-n", str(ranks), *argv], ({} if openmpi else dict(env))


def srun_command(ranks, argv, extra=(), env=None, ntasks_per_node=None, members=(), nodes=None):
    """(command, variables for srun's own environment): env goes to the
    step as --export=ALL,NAME=value,... except values holding a comma (which
    --export cannot carry), set in srun's environment (passed on by ALL).
    members, nodes: a mix's members' rank counts and [slurm] nodes, which
    place each member on nodes of its own where they can (slurm.step_shape)."""
    env = env or {}
    exported = {k: v for k, v in env.items() if "," not in v}
    cmd = ["srun", *slurm.step_shape(ranks, ntasks_per_node, members, nodes)]
    if exported:
        cmd.append("--export=" + ",".join(["ALL", *(f"{k}={v}" for k, v in exported.items())]))
    return [*cmd, *extra, *argv], {k: v for k, v in env.items() if k not in exported}


def command(
    launcher, ranks, argv, srun_extra=(), env=None, ntasks_per_node=None, members=(), nodes=None
):
    """(command that runs argv (binary first) on `ranks` ranks now with env
    exported to them, variables to set in the launcher's environment)."""
    if launcher == "mpiexec":
        return mpiexec_command(ranks, argv, env)
    if launcher == "srun":
        return srun_command(ranks, argv, srun_extra, env, ntasks_per_node, members, nodes)
    raise ValueError(f"launcher {launcher} does not run commands directly")


def with_env(cmd, launcher_env):
    """The command as one shell would run it: env NAME=value ... COMMAND."""
    if not launcher_env:
        return list(cmd)
    return ["env", *(f"{k}={v}" for k, v in launcher_env.items()), *cmd]
