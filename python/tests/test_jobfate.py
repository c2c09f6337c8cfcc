# SPDX-License-Identifier: BSD-3-Clause
"""What became of a batch job is read, not guessed (jobfate.py): an end file
that is not whole is "unknown", a job Slurm says is live (requeued) follows
Slurm, the job-completion log is parsed, and whether a step was running when
the job ended comes from Slurm's step states where it keeps them. The batch
script writes its end file whole or not at all and names each srun step."""

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from iokernels_campaign.run import jobfate, runner
from iokernels_campaign.spec import slurm


@pytest.fixture
def slurm_says(monkeypatch):
    """Sets what sacct, squeue and the job-completion log answer."""
    said = {"sacct": None, "squeue": (None, False), "jobcomp": None}
    monkeypatch.setattr(jobfate, "sacct_state", lambda j: said["sacct"])
    monkeypatch.setattr(jobfate, "squeue_state", lambda j: said["squeue"])
    monkeypatch.setattr(jobfate, "jobcomp_state", lambda j: said["jobcomp"])
    return said


@pytest.mark.parametrize("text", ["", '{"exit_co', "[]", '{"ended": 1.5}'])
def test_an_end_file_that_is_not_whole_is_unknown_not_failed(tmp_path, slurm_says, text):
    (tmp_path / "job.end.json").write_text(text)
    slurm_says["squeue"] = (None, True)  # the controller forgot the job
    f = jobfate.fate(tmp_path, "17")
    assert (f.state, f.source) == ("UNKNOWN", "end file"), f
    assert "is not a whole end record" in f.note
    res = runner._missing(tmp_path / "iter1", "write", f, "17", "")
    assert res.status == "failed" and res.error.startswith("unknown: "), res.error
    assert "job.end.json is not a whole end record" in res.error


def test_a_whole_end_file_still_decides_when_slurm_knows_nothing(tmp_path, slurm_says):
    (tmp_path / "job.end.json").write_text('{"exit_code": 0, "ended": 1.5}\n')
    assert jobfate.fate(tmp_path, "17").state == "COMPLETED"
    (tmp_path / "job.end.json").write_text('{"exit_code": 2, "ended": 1.5}\n')
    assert jobfate.fate(tmp_path, "17").state == "FAILED"


def test_the_job_completion_log_decides_over_the_end_file_once_forgotten(tmp_path, slurm_says):
    """A job cut by its limit whose script wrote its end file on SIGTERM
    (under load it sometimes does), forgotten by the controller: Slurm's
    completion log says TIMEOUT, not the script's FAILED."""
    (tmp_path / "job.end.json").write_text('{"exit_code": 143, "ended": 1.5}\n')
    slurm_says["squeue"] = (None, True)
    slurm_says["jobcomp"] = "TIMEOUT"
    f = jobfate.fate(tmp_path, "17")
    assert (f.state, f.source) == ("TIMEOUT", "jobcomp"), f


@pytest.mark.parametrize("live", ["PENDING", "REQUEUED", "RUNNING"])
def test_a_live_job_follows_slurm_over_an_earlier_end_file(tmp_path, slurm_says, live):
    """A requeued job: the first attempt's end file must not end it."""
    (tmp_path / "job.end.json").write_text('{"exit_code": 1, "ended": 1.5}\n')
    slurm_says["squeue"] = (live, False)
    assert jobfate.fate(tmp_path, "17") is None
    slurm_says["sacct"] = "TIMEOUT"
    assert jobfate.fate(tmp_path, "17").state == "TIMEOUT"


def test_the_job_completion_log_is_read(tmp_path, monkeypatch):
    log = tmp_path / "jobcomp.txt"
    log.write_text(
        "JobId=16 UserId=root(0) JobState=COMPLETED Partition=debug\n"
        "JobId=17 UserId=root(0) JobState=TIMEOUT Partition=debug\n"
        "JobId=170 UserId=root(0) JobState=FAILED Partition=debug\n"
    )
    conf = f"JobCompType             = jobcomp/filetxt\nJobCompLoc              = {log}\n"

    def fake(cmd):
        if cmd[0] == "scontrol":
            return subprocess.CompletedProcess(cmd, 0, conf, "")
        return subprocess.CompletedProcess(
            cmd, 1, "", "slurm_load_jobs error: Invalid job id specified"
        )

    monkeypatch.setattr(jobfate, "_run", fake)
    assert jobfate.jobcomp_state("17") == "TIMEOUT"
    assert jobfate.jobcomp_state("18") is None
    f = jobfate.fate(tmp_path, "17")
    assert (f.state, f.source) == ("TIMEOUT", "jobcomp"), f


def test_killed_comes_from_slurms_step_states(tmp_path):
    """With accounting, a step Slurm launched was running when the job
    ended, whatever files exist; one it never launched was not run, even
    with a stdout file left (the script opens it just before srun)."""
    idir = tmp_path / "case1" / "iter1"
    idir.mkdir(parents=True)
    (idir / "read.stdout").write_text("")
    fate = jobfate.Fate("TIMEOUT", "sacct")
    steps = {"iok:case1/iter1/write": "TIMEOUT"}
    w = runner._missing(idir, "write", fate, "17", "", steps)
    r = runner._missing(idir, "read", fate, "17", "", steps)
    assert w.error == "killed: job 17 reached its time limit while this step ran", w.error
    assert r.error == "not run: job 17 reached its time limit before this step started", r.error
    # without accounting: the stdout file, as before
    assert runner._missing(idir, "read", fate, "17", "").error.startswith("killed: ")


def test_step_states_reads_the_named_steps(monkeypatch):
    out = "iok-c|TIMEOUT\nbatch|CANCELLED\niok:case1/iter1/write|CANCELLED by 0\n"
    monkeypatch.setattr(jobfate, "_run", lambda cmd: subprocess.CompletedProcess(cmd, 0, out, ""))
    assert jobfate.step_states("17") == {"iok:case1/iter1/write": "CANCELLED"}


def _script(tmp_path):
    session = tmp_path / "session"
    (session / "case1" / "iter1").mkdir(parents=True)
    srun = tmp_path / "bin" / "srun"
    srun.parent.mkdir()
    srun.write_text('#!/bin/sh\nprintf "%s\\n" "$*" >> "$(dirname "$0")/calls"\n')
    srun.chmod(srun.stat().st_mode | stat.S_IEXEC)
    step = (session / "case1" / "iter1", "write", 60, ["srun", "-n", "1", "iokernels", "btio"])
    text = slurm.script("t", session, slurm.Slurm(), [("c", session / "case1", None, [[step]])], 1)
    return session, srun, text


def test_the_script_names_its_steps_and_writes_its_end_file_whole(tmp_path):
    """Also: a squeue that answers nothing (no controller here) is no end
    time (date -d "" would be midnight, and every step "late")."""
    session, srun, text = _script(tmp_path)
    (session / "job.end.json").write_text('{"exit_code": 3, "ended": 1}\n')  # an earlier attempt's
    assert "job.end.json.part && mv -f" in text
    env = dict(os.environ, PATH=f"{srun.parent}:{os.environ['PATH']}")
    p = subprocess.run(["bash", "-c", text], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    calls = (srun.parent / "calls").read_text().splitlines()
    assert calls[-1] == "--job-name=iok:case1/iter1/write -n 1 iokernels btio", calls
    end = jobfate.end_file(session)
    assert end["exit_code"] == 0, end
    assert not Path(f"{session}/job.end.json.part").exists()


def test_a_step_srun_refuses_as_the_job_ends_is_late_not_failed(tmp_path):
    """srun's refusal when Slurm is already ending the job (its limit, checked
    periodically): the step is 'not run' for the time limit, and nothing
    more is launched. A fake srun gives Slurm's words: the real refusal
    cannot be timed on purpose."""
    session, srun, text = _script(tmp_path)
    srun.write_text(
        '#!/bin/sh\nprintf "%s\\n" "$*" >> "$(dirname "$0")/calls"\n'
        'case "$*" in *--version*) exit 0;; esac\n'
        'echo "srun: error: Unable to create step for job 17: Job/step already completing '
        'or completed" >&2\nexit 1\n'
    )
    env = dict(os.environ, PATH=f"{srun.parent}:{os.environ['PATH']}", SLURM_JOB_ID="17")
    p = subprocess.run(["bash", "-c", text], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1, p.stderr
    status = session / "case1" / "iter1" / "write.status.json"
    st = json.loads(status.read_text())
    assert st["exit_code"] is None and st["not_run"].startswith("job 17 reached its time limit")
    assert jobfate.end_file(session)["exit_code"] == 1
