"""Launchers: the command that starts one run on N ranks. Only the system's
own launchers (mpiexec, srun, sbatch); nothing here starts ranks itself."""

import functools
import os
import shlex
import shutil
import subprocess

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


def mpiexec_command(ranks, argv, mpiexec="mpiexec"):
    path = shutil.which(mpiexec) or mpiexec
    flags = mpiexec_flags(ranks, _is_openmpi(path), os.geteuid() == 0, cores())
    return [mpiexec, *flags, "-n", str(ranks), *argv]


def srun_command(ranks, argv, extra=()):
    return ["srun", "-n", str(ranks), *extra, *argv]


def command(launcher, ranks, argv, srun_extra=()):
    """The command that runs argv (binary first) on `ranks` ranks now."""
    if launcher == "mpiexec":
        return mpiexec_command(ranks, argv)
    if launcher == "srun":
        return srun_command(ranks, argv, srun_extra)
    raise ValueError(f"launcher {launcher} does not run commands directly")


def sbatch_script(case_name, case_dir, ranks, iterations, sbatch_options, srun_extra, job_name):
    """One batch script running every iteration of one case.

    iterations: per iteration, [(directory, step name, argv with the binary
    first)]. Each step runs in its directory, keeps STEP.stdout/STEP.stderr
    there and writes STEP.status.json (exit code, start, end) as the mpiexec
    runner does; within an iteration a step runs only when the one before it
    succeeded (a read needs the write). The script exits with the last
    failure's code, 0 if none."""
    q = shlex.quote
    lines = [
        "#!/bin/bash",
        f"# iokernels-campaign: {case_name}",
        f"#SBATCH --job-name={q(job_name)}",
        f"#SBATCH --ntasks={ranks}",
        f"#SBATCH --output={q(str(case_dir))}/slurm-%j.out",
    ]
    lines += [f"#SBATCH --{k}={q(v)}" for k, v in sbatch_options.items()]
    lines += ["set -u", "worst=0"]
    for steps in iterations:
        lines += ["", "rc=0"]
        for directory, step, argv in steps:
            cmd = " ".join(q(a) for a in srun_command(ranks, argv, srun_extra))
            lines += [
                f"cd {q(str(directory))} || exit 1",
                "if [ $rc -eq 0 ]; then",
                "  start=$(date +%s.%N)",
                f"  {cmd} > {step}.stdout 2> {step}.stderr",
                "  rc=$?",
                "  end=$(date +%s.%N)",
                '  printf \'{"exit_code": %d, "started": %s, "ended": %s}\\n\' '
                f'"$rc" "$start" "$end" > {step}.status.json',
                "  [ $rc -ne 0 ] && worst=$rc",
                "fi",
            ]
    lines += ["", "exit $worst", ""]
    return "\n".join(lines)
