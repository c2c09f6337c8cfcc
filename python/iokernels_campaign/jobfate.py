# SPDX-License-Identifier: BSD-3-Clause
"""What became of a batch job, from what Slurm offers, in this order:

1. sacct (accounting storage: knows every job, for as long as it is kept);
2. squeue -t all (the controller: knows a job until MinJobAge after its end;
   plain squeue lists only jobs that have not ended);
3. the job's own files: SESSION/job.end.json, written by the script as its
   last line (with "error" when it stopped before its first step);
4. the job-completion log, where the site keeps one (JobCompType=
   jobcomp/filetxt, its JobCompLoc from scontrol show config);
5. nothing: when the controller answers that it does not know the job and
   nothing above says otherwise, the job is gone ("unknown"), never "not
   finished".

A fate that is None means the job may still run (or Slurm cannot be asked
from here: `collect --job-ended` says it is over)."""

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


def end_file(session_dir):
    """The job's end file ({"exit_code": N, "error": LINE?}), or None."""
    path = session_dir / "job.end.json"
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        return {}


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
        if state and end is None:
            return None  # still running (an end file: its last line ran)
    if end is not None:
        code = end.get("exit_code")
        return Fate("COMPLETED" if code == 0 else "FAILED", "end file", error)
    if job_id:
        state = jobcomp_state(job_id)
        if state:
            return Fate(state, "jobcomp", error)
    if forgotten:
        return Fate("UNKNOWN", "none")
    if job_ended:
        return Fate("ENDED", "collect --job-ended")
    return None
