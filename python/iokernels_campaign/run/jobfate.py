# SPDX-License-Identifier: BSD-3-Clause
"""What became of a batch job, from what Slurm offers, in this order:

1. sacct (accounting storage: knows every job, for as long as it is kept);
2. squeue -t all (the controller: knows a job until MinJobAge after its end;
   plain squeue lists only jobs that have not ended);
3. the job's own files: SESSION/job.end.json, written by the script as its
   last line (with "error" when it stopped before its first step), under a
   temporary name and renamed, so that it is whole or absent; the script
   removes an earlier attempt's at its start (a requeued job). One that
   cannot be read says "unknown", never "failed";
4. the job-completion log, where the site keeps one (JobCompType=
   jobcomp/filetxt, its JobCompLoc from scontrol show config);
5. nothing: when the controller answers that it does not know the job and
   nothing above says otherwise, the job is gone ("unknown"), never "not
   finished".

A fate that is None means the job may still run (or Slurm cannot be asked
from here: `collect --job-ended` says it is over). While Slurm says the job
is live (pending again after a requeue, running), Slurm wins over any file.

Whether a step was running when the job ended comes from the accounting
(each srun step is named after its run: `step_states`) where Slurm keeps
it; elsewhere from the step's stdout, which the script opens just before
srun starts."""

import json
import re
import shutil
import subprocess
from dataclasses import dataclass

# states of a job that has not ended
LIVE = {"PENDING", "RUNNING", "REQUEUED", "RESIZING", "SUSPENDED", "CONFIGURING", "COMPLETING"}
# the controller's answer for a job it has forgotten (or never had)
FORGOTTEN = "Invalid job id specified"


@dataclass
class Fate:
    state: str  # Slurm's word (TIMEOUT, CANCELLED, COMPLETED, FAILED, ...), or UNKNOWN
    source: str  # sacct, squeue, end file, jobcomp, none, collect --job-ended
    error: str | None = None  # the job's own one line (the MPI probe's)
    note: str | None = None  # why the state is UNKNOWN, when it is

    def reason(self, job_id, limit=""):
        """Why the job ran no more of its steps, as in `job N reached its time limit`."""
        if self.error:
            return self.error
        if self.state == "TIMEOUT":
            return f"job {job_id} reached its time limit{limit}"
        if self.state == "CANCELLED":
            return f"job {job_id} was cancelled (scancel)"
        if self.state == "ENDED":
            return "the batch job ended (collect --job-ended) without finishing it"
        return f"job {job_id} ended {self.state}"


def _run(cmd):
    if not shutil.which(cmd[0]):
        return None
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None


def sacct_state(job_id):
    p = _run(["sacct", "-n", "-X", "-P", "-j", job_id, "-o", "State"])
    words = p.stdout.split() if p and p.returncode == 0 else []
    return words[0].rstrip("+") if words else None


def squeue_state(job_id):
    """(state or None, whether the controller said it does not know the job)."""
    p = _run(["squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T"])
    if p is None:
        return None, False
    words = p.stdout.split() if p.returncode == 0 else []
    if words:
        return words[0], False
    return None, FORGOTTEN in p.stderr


def jobcomp_state(job_id):
    """The job's state in the job-completion log (jobcomp/filetxt), if any."""
    p = _run(["scontrol", "show", "config"])
    if not p or p.returncode != 0:
        return None
    conf = dict(re.findall(r"^(\w+)\s+=\s+(.*?)\s*$", p.stdout, re.M))
    if conf.get("JobCompType") != "jobcomp/filetxt" or not conf.get("JobCompLoc"):
        return None
    try:
        text = open(conf["JobCompLoc"], errors="replace").read()
    except OSError:
        return None
    found = re.findall(rf"^JobId={job_id} .*?\bJobState=(\S+)", text, re.M)
    return found[-1] if found else None


# the name srun gives each run's step (the script sets SLURM_JOB_NAME): the
# run's directory under the session and its mode, as in "case/iter1/write"
STEP_NAME = "iok:{}"


def step_states(job_id):
    """{step name: Slurm's state} of the job's named steps, from sacct; {}
    where there is no accounting or it does not know the job."""
    p = _run(["sacct", "-n", "-P", "-j", job_id, "-o", "JobName,State"])
    if not p or p.returncode != 0:
        return {}
    states = {}
    for line in p.stdout.splitlines():
        name, _, state = line.partition("|")
        if name.startswith(STEP_NAME.format("")) and state:
            states[name] = state.split()[0].rstrip("+")
    return states


def end_file(session_dir):
    """The job's end file ({"exit_code": N, "error": LINE?}), None when there
    is none, or {"unreadable": why} when it is not a whole end record."""
    path = session_dir / "job.end.json"
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as e:
        return {"unreadable": f"{path} cannot be read ({e.strerror})"}
    try:
        end = json.loads(text)
    except json.JSONDecodeError:
        end = None
    if not isinstance(end, dict) or not isinstance(end.get("exit_code"), int):
        return {"unreadable": f"{path} is not a whole end record ({len(text)} bytes)"}
    return end


def fate(session_dir, job_id, job_ended=False):
    """The job's Fate once it has ended, None while it may still run."""
    end = end_file(session_dir)
    error = (end or {}).get("error")
    forgotten = False
    if job_id:
        state, source = sacct_state(job_id), "sacct"
        if not state:
            (state, forgotten), source = squeue_state(job_id), "squeue"
        if state and state not in LIVE:
            return Fate(state, source, error)
        if state:
            return None  # live: pending again after a requeue, or running
    # Slurm's word before the script's: a job cut by its limit may still
    # write its end file (exit 143 on SIGTERM) before it is killed
    if job_id:
        state = jobcomp_state(job_id)
        if state:
            return Fate(state, "jobcomp", error)
    if end and "unreadable" in end:
        return Fate("UNKNOWN", "end file", note=end["unreadable"])
    if end is not None:
        code = end["exit_code"]
        return Fate("COMPLETED" if code == 0 else "FAILED", "end file", error)
    if forgotten:
        return Fate("UNKNOWN", "none")
    if job_ended:
        return Fate("ENDED", "collect --job-ended")
    return None
