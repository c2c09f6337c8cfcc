# SPDX-License-Identifier: BSD-3-Clause
"""Campaigns through a real Slurm (slurmcluster.py: two nodes n1 and n2 on
this machine, MpiDefault=none, no accounting): every job is submitted at
once by one session fixture and the tests wait for them together. Each
stored status is checked against what Slurm itself says of the job
(squeue -t all), and against Slurm forgetting it."""

import json
import re
import sqlite3
import subprocess
import threading
import time

import pytest
import slurmcluster
import test_mix_campaign as mix_campaign
from conftest import cli, rows
from declared import missing
from iokernels_campaign.report import interference
from iokernels_campaign.run import jobfate
from iokernels_campaign.store.store import Store
from slurmcluster import LIVE

# How long the watcher waits for Slurm's final word on every job. The jobs
# queue for the sandbox's few CPUs, and beside a loaded machine (make test
# under two busy loops) the 10 steps of the two-node job took over 5
# minutes: the limits here are generous because the tests check states,
# never durations (the "cut" and "late" jobs keep their 1-minute limits).
WATCH_SECONDS = 900

# 2 nodes x 2 ranks: 10 runs, each a step; the 4-rank ones span both nodes
TWO_NODES = """
[campaign]
name = "two-nodes"
modes = ["write", "read"]
timeout = 600
[slurm]
nodes = 2
ntasks-per-node = 2
time = "15"
[[kernel]]
name = "btio"
backends = ["mpiio", "adios2"]
ranks = [1, 4]
options = { grid = "16,16,16", dumps = 2, verify = true }
[kernel.backend.mpiio]
hints = "cb_nodes=2"
[[kernel]]
name = "ncbench"
backends = ["netcdf4"]
ranks = [4]
options = { data-geometry = "2:8:8:2", verify = true }
"""

# a mix of two 1-rank members on 2 nodes x 2 ranks: the plain step shape
# (-n 2 -N 1) would put both on n1; the runner gives each a node (srun -v:
# Slurm's own word on which host ran which task)
# test_mix_campaign's mix, one member per node: the aggressor on null only
MIX = (
    mix_campaign.MIX.replace('name = "mixes"\n', 'name = "mix"\n')
    .replace(
        "timeout = 300\n\n",
        'timeout = 300\n[slurm]\nnodes = 2\nntasks-per-node = 2\ntime = "15"\nsrun = ["-v"]\n',
    )
    .replace('backends = ["null", "mpiio"]', 'backends = ["null"]')
)

# a step that sleeps (LD_PRELOAD of a library whose constructor sleeps
# IOK_TEST_SLEEP seconds) between quick ones; time in whole minutes
SLOW = """
[campaign]
name = "NAME"
modes = ["write", "read"]
order = "blocked"  # quick, slow, never: the limit cuts the slow step, never is not run
timeout = 600
[slurm]
time = "TIME"
MPI
[[kernel]]
name = "btio"
label = "quick"
backends = ["null"]
options = { grid = "16,16,16", dumps = 1 }
[[kernel]]
name = "btio"
label = "slow"
backends = ["null"]
options = { grid = "16,16,16", dumps = 2 }
[kernel.env]
LD_PRELOAD = "SLEEPLIB"
IOK_TEST_SLEEP = "SECONDS"
[[kernel]]
name = "btio"
label = "never"
backends = ["null"]
options = { grid = "16,16,16", dumps = 3 }
"""

SLEEPER = r"""
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void nap(void)
{
    const char *s = getenv("IOK_TEST_SLEEP");
    if (s)
        sleep((unsigned)atoi(s));
}
"""


def _slow(name, lib, seconds, mpi="", minutes=1):
    text = SLOW.replace("NAME", name).replace("SLEEPLIB", str(lib)).replace("TIME", str(minutes))
    return text.replace("SECONDS", str(seconds)).replace("MPI", mpi)


def _submit(cluster, d, text):
    d.mkdir()
    (d / "c.toml").write_text(text)
    p = cli(
        "run", "c.toml", "--launcher", "sbatch", "--db", "x.sqlite", "--out", "out",
        cwd=d, extra_env=cluster.env,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    (session,) = (d / "out" / "runs").iterdir()
    return {"dir": d, "session": session, "job": (session / "jobid").read_text().strip()}


def _wait_file(pattern, root, timeout=90):
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = list(root.glob(pattern))
        if found:
            return found[0]
        time.sleep(0.5)
    raise AssertionError(f"no {pattern} under {root} after {timeout} s")


@pytest.fixture(scope="session")
def jobs(slurm_cluster):
    """Every job of these tests, submitted at once (beside the cluster's
    folder, which the cluster's fixture removes)."""
    c = slurm_cluster
    d = c.directory / "jobs"
    d.mkdir()
    lib = d / "sleep.so"
    (d / "sleep.c").write_text(SLEEPER)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", lib, d / "sleep.c"], check=True)
    # each job is watched from its submission on: submitting them all takes
    # a minute on a loaded machine, longer than Slurm keeps a quick job
    j, watchers = {}, []

    def submit(name, text, cluster=c):
        j[name] = _submit(cluster, d / name, text)
        if cluster is not c:
            j[name]["cluster"] = cluster
        watchers.append(threading.Thread(target=_watch_one, args=(c, name, j[name]), daemon=True))
        watchers[-1].start()

    submit("two", TWO_NODES)
    submit("mix", MIX)
    submit("pmi2", _slow("pmi2", lib, 0, 'mpi = "pmi2"'))
    submit("cut", _slow("cut", lib, 300))  # the slow step outlasts the limit: Slurm kills it
    # the slow step ends after the limit, before Slurm kills the job
    # (OverTimeLimit): the script launches nothing more
    submit("late", _slow("late", lib, 75))
    submit("cancel", _slow("cancel", lib, 300, minutes=5))
    submit("forgotten", _slow("forgotten", lib, 300, minutes=5))
    # the same cut on a second cluster, with accounting (sacct), one node
    try:
        acct = slurmcluster.start(c.directory / "acct", nodes=1, accounting=True)
        submit("acct", _slow("acct", lib, 300), acct)
    except RuntimeError as e:
        j["acct"] = {"skip": f"no cluster with accounting: {e}"}
    for name in ("cancel", "forgotten"):  # once the slow step runs
        _wait_file("slow-*/iter1/write.stdout", j[name]["session"])
    job = j["cancel"]  # collect while it runs, and as if on a machine without Slurm
    job["running"] = _collect(c, job)[0]
    _copy_store(job["dir"], "x.sqlite", "y.sqlite")
    job["job-ended"] = cli(
        "collect", job["session"], "--db", "y.sqlite", "--job-ended",
        cwd=job["dir"], extra_env={"SLURM_CONF": "/nonexistent/slurm.conf"},
    )  # fmt: skip
    p = c.run("scancel", j["cancel"]["job"], j["forgotten"]["job"])
    assert p.returncode == 0, p.stderr
    for w in watchers:
        w.join(WATCH_SECONDS)
    assert all("state" in x or "skip" in x for x in j.values()), {
        k: x.get("state") for k, x in j.items()
    }
    yield j
    if "cluster" in j["acct"]:
        slurmcluster.stop(j["acct"]["cluster"].directory)


def _watch_one(cluster, name, job):
    """Slurm's final word on one job as soon as it has one (squeue -t all:
    it forgets a job MinJobAge after its end), and collect right then (all
    but the job left for Slurm to forget). A thread per job, started at its
    submission: another job's submission or collect, slow beside a loaded
    machine, must never hold back the look until Slurm has forgotten it."""
    deadline = time.time() + WATCH_SECONDS
    while time.time() < deadline:
        state, err = job.get("cluster", cluster).state(job["job"])
        if state in LIVE and "Invalid job id" not in err:
            time.sleep(1)
            continue
        job["state"] = state or err  # err: Slurm forgot it before we looked
        if name not in ("forgotten", "acct"):
            job["collected"] = _collect(cluster, job)
        return


def _copy_store(d, a, b):
    with sqlite3.connect(d / a) as src, sqlite3.connect(d / b) as dst:
        src.backup(dst)


def _collect(cluster, job):
    p = cli("collect", job["session"], "--db", "x.sqlite", cwd=job["dir"], extra_env=cluster.env)
    got = rows(job["dir"] / "x.sqlite", "SELECT * FROM runs ORDER BY id")
    name = {r["id"]: r["backend"] if r["label"] == r["kernel"] else r["label"] for r in got}
    return p, {(name[r["id"]], r["ranks"], r["mode"]): r for r in got}


def test_a_campaign_on_two_nodes_stores_every_run_with_its_nodes(jobs):
    job = jobs["two"]
    assert job["state"] == "COMPLETED"
    text = (job["session"] / "job.sbatch").read_text()
    # MpiDefault=none: the job chose pmix for OpenMPI, and its one-rank probe passed
    assert "then export SLURM_MPI_TYPE=pmix; fi" in text
    assert (job["session"] / "mpi-probe.out").read_text().startswith("iokernels ")
    p, got = job["collected"]
    assert p.returncode == 0, p.stdout + p.stderr
    assert "stored 10 runs (0 failed), 0 not finished yet" in p.stdout
    assert len(got) == 10
    for r in got.values():
        assert r["status"] == "ok", r["error"]
        assert r["slurm_job_id"] == int(job["job"])
        assert (r["nodes"], r["ranks_per_node"]) == ((2, 2) if r["ranks"] == 4 else (1, 1))
        names = json.loads(r["hostnames"])
        assert names == (["n1", "n2"] if r["ranks"] == 4 else ["n1"])
        record = json.loads(r["record"])
        want = ["n1", "n1", "n2", "n2"] if r["ranks"] == 4 else ["n1"]
        assert record["environment"]["hostnames"] == want
    # ADIOS2 writes one subfile per node
    adios = got[("adios2", 4, "write")]
    subfiles = sorted(p.name for p in (job["dir"] / adios["case_dir"]).glob("btio.adios2/data.*"))
    assert subfiles == ["data.0", "data.1"]
    # the hint given is in effect (OpenMPI 4.1 reports no default cb_nodes)
    mpiio = json.loads(got[("mpiio", 4, "write")]["record"])
    assert mpiio["passes"][0]["hints_in_effect"]["cb_nodes"] == "2"
    # NetCDF-Bench took nodes x ranks per node 2 x 2 from Slurm: x/nn, y/ppn
    out = (job["dir"] / got[("netcdf4", 4, "write")]["case_dir"] / "write.stdout").read_text()
    assert "1:4:4:2 x 4 bytes" in " ".join(out.split()), out
    p = cli("report", "x.sqlite", "-o", "r.html", cwd=job["dir"])
    assert p.returncode == 0, p.stderr
    page = (job["dir"] / "r.html").read_text()
    assert "n1, n2 x 2 ranks" in page and "n1 x 1 ranks" in page


def test_a_mix_runs_one_member_per_node_and_the_report_draws_its_matrix(jobs):
    job = jobs["mix"]
    assert job["state"] == "COMPLETED"
    # one step of both members' ranks, placed a member per node
    text = (job["session"] / "job.sbatch").read_text()
    assert "srun -n 2 -N 2 --ntasks-per-node=1 --distribution=block -v " in text, text
    p, got = job["collected"]
    assert p.returncode == 0, p.stdout + p.stderr
    assert "stored 1 runs (0 failed), 0 not finished yet" in p.stdout
    ((key, run),) = got.items()
    assert key == ("victim+aggressor", 2, "write") and run["status"] == "ok", run["error"]
    assert run["kernel"] == "mix" and run["slurm_job_id"] == int(job["job"])
    # Slurm's word: srun -v names the host of each task of the step
    err = (job["dir"] / run["case_dir"] / "write.stderr").read_text()  # case_dir: iter1
    launched = dict(re.findall(r"launching StepId=\S+ on host (\S+), \d+ tasks: (\S+)", err))
    assert launched == {"n1": "0", "n2": "1"}, err  # plain -N 1: {"n1": "[0-1]"}
    # the record's word: every run of member 1 on n1, of member 2 on n2
    members = rows(job["dir"] / "x.sqlite", "SELECT * FROM mix_runs ORDER BY member, iteration")
    assert len(members) == 2 * 4 * 2  # members x iterations x (alone, together)
    for m in members:
        rec = json.loads(m["record"])
        assert rec["environment"]["hostnames"] == [f"n{m['member']}"], m
        assert m["seconds"] > 0
        if m["member"] == 1:  # the victim verifies what it wrote
            assert m["label"] == "victim mpiio n1" and rec["verify"]["ok"] is True
    p = cli("report", "x.sqlite", "-o", "r.html", cwd=job["dir"])
    assert p.returncode == 0, p.stderr
    page = (job["dir"] / "r.html").read_text()
    assert 'id="interference"' in page
    st = Store(job["dir"] / "x.sqlite", readonly=True)
    cells = interference.cells(st.mix_runs([run["id"]]))
    st.close()
    assert sorted((c.victim, c.aggressor) for c in cells) == [
        ("aggressor null n1", "victim mpiio n1"),
        ("victim mpiio n1", "aggressor null n1"),
    ]
    for c in cells:  # the victim's cell: its slowdown with its interval
        if c.victim == "victim mpiio n1":
            assert f"{c.ratio.hl:.2f} ({c.ratio.low:.2f}&ndash;{c.ratio.high:.2f})" in page
        else:  # the null member's own times are overhead: no call
            assert c.call == "not judged" and 'data-call="not judged"' in page


def test_a_plugin_that_cannot_start_a_rank_stops_the_job_with_one_line(jobs):
    job = jobs["pmi2"]
    assert job["state"] == "FAILED"
    p, got = job["collected"]
    assert p.returncode == 1
    (line,) = [x for x in p.stdout.splitlines() if "cannot start" in x]
    assert line.startswith(f"job {job['job']}: srun --mpi=pmi2 cannot start a rank of iokernels (")
    assert line.endswith(
        'set [slurm] mpi = "pmix" in the campaign (OpenMPI: pmix, MPICH: pmi2; '
        "this srun has: pmix, none, cray_shasta, pmi2)"
    )
    assert len(got) == 6
    for r in got.values():
        assert r["error"] == "not run: " + line.split(": ", 1)[1]
    assert not list(job["session"].glob("*/iter1/*.stdout"))  # no step ran


def _check_time_limit(job, got, cut):
    job_id, limit = job["job"], "(--time=1)"
    late = f"not run: job {job_id} reached its time limit {limit} before this step started"
    assert got[("quick", 1, "write")]["status"] == "ok"
    assert got[("quick", 1, "read")]["status"] == "ok"
    slow = got[("slow", 1, "write")]
    if cut:
        assert (
            slow["error"]
            == f"killed: job {job_id} reached its time limit {limit} while this step ran"
        )
    else:
        assert slow["status"] == "ok", slow["error"]
    for key in (("slow", 1, "read"), ("never", 1, "write"), ("never", 1, "read")):
        assert got[key]["error"] == late, key
    assert not any(r["error"] and "fail" in r["error"] for r in got.values())


def test_a_job_cut_by_its_time_limit_without_accounting(slurm_cluster, jobs, monkeypatch):
    c, job = slurm_cluster, jobs["cut"]
    p = c.run("sacct", "-j", job["job"])
    assert p.returncode == 1 and "accounting storage is disabled" in p.stderr
    state = job["state"]
    assert state == "TIMEOUT"  # squeue -t all: what plain squeue no longer shows
    assert c.run("squeue", "-h", "-j", job["job"], "-o", "%T").stdout.strip() == ""
    p, got = job["collected"]
    assert p.returncode == 1 and "stored 6 runs (4 failed), 0 not finished yet" in p.stdout
    # Slurm's word decides, whether or not the script's last line ran before
    # its SIGTERM (under load it sometimes does: a race the end file must not win)
    for k, v in c.env.items():  # squeue of this cluster
        monkeypatch.setenv(k, v)
    f = jobfate.fate(job["session"], job["job"])
    assert f.state == "TIMEOUT" and f.source in ("squeue", "jobcomp"), f  # jobcomp once forgotten
    _check_time_limit(job, got, cut=True)


def test_steps_after_the_limit_are_not_launched(jobs):
    job = jobs["late"]
    # the script saw the time up and ended itself before Slurm killed it
    assert job["state"] == "FAILED"
    p, got = job["collected"]
    assert p.returncode == 1 and "stored 6 runs (3 failed), 0 not finished yet" in p.stdout
    _check_time_limit(job, got, cut=False)
    for st in job["session"].glob("*/iter1/*.status.json"):  # the script wrote why
        st = json.loads(st.read_text())
        if st["exit_code"] is None:
            assert st["not_run"].startswith(f"job {job['job']} reached its time limit")
    assert len(list(job["session"].glob("*/iter1/*.stdout"))) == 3  # nothing launched after


def test_collect_while_the_job_runs_stores_what_finished(jobs):
    job = jobs["cancel"]
    p = job["running"]
    assert p.returncode == 0, p.stderr
    # the slow case and the next one each wait for their first step
    assert f"stored 2 runs (0 failed), 2 not finished yet (job {job['job']} has not ended)" in (
        p.stdout
    )
    # where Slurm cannot be asked, --job-ended says it is over
    p = job["job-ended"]
    assert p.returncode == 1 and "stored 4 runs (4 failed), 0 not finished yet" in p.stdout
    got = rows(job["dir"] / "y.sqlite", "SELECT label, mode, error FROM runs ORDER BY id")
    assert [r["error"] for r in got if r["label"] == "slow"] == [
        "killed: the batch job ended (collect --job-ended) without finishing it "
        "(while this step ran)",
        "not run: the write step of this iteration failed",
    ]


def test_a_cancelled_job(jobs):
    job = jobs["cancel"]
    assert job["state"] == "CANCELLED"
    p, got = job["collected"]  # collected when squeue -t all said CANCELLED
    assert p.returncode == 1 and "stored 4 runs (4 failed), 0 not finished yet" in p.stdout
    why = f"job {job['job']} was cancelled (scancel)"
    assert got[("slow", 1, "write")]["error"] == f"killed: {why} (while this step ran)"
    for key in (("slow", 1, "read"), ("never", 1, "write"), ("never", 1, "read")):
        assert got[key]["error"] == f"not run: {why}", key


def test_a_job_slurm_has_forgotten_is_unknown_not_pending(slurm_cluster, jobs):
    c, job = slurm_cluster, jobs["forgotten"]
    assert job["state"] == "CANCELLED"
    said = c.wait_forgotten(job["job"])
    assert "Invalid job id specified" in said
    # a site without a job completion log: this cluster's set aside meanwhile
    log = c.directory / "jobcomp.txt"
    assert f"JobId={job['job']} " in log.read_text()
    log.rename(log.with_suffix(".away"))
    try:
        p, got = _collect(c, job)
    finally:
        log.with_suffix(".away").rename(log)
    assert p.returncode == 1 and "0 not finished yet" in p.stdout
    assert "has not ended" not in p.stdout
    unknown = f"unknown: Slurm no longer knows job {job['job']} and its steps left no end record"
    assert got[("quick", 1, "read")]["status"] == "ok"
    for key in (("slow", 1, "write"), ("slow", 1, "read"), ("never", 1, "write")):
        assert got[key]["error"] == unknown, key


def test_a_forgotten_job_is_found_in_the_job_completion_log(slurm_cluster, jobs, monkeypatch):
    """The same forgotten job where the site keeps a job completion log
    (jobcomp/filetxt, this cluster's): its state comes from there, not
    "unknown" (what collect then says is test_jobfate.py's)."""
    c, job = slurm_cluster, jobs["forgotten"]
    c.wait_forgotten(job["job"])
    for k, v in c.env.items():  # sacct, squeue and scontrol of this cluster
        monkeypatch.setenv(k, v)
    f = jobfate.fate(job["session"], job["job"])
    assert (f.state, f.source) == ("CANCELLED", "jobcomp"), f
    assert f.reason(job["job"]) == f"job {job['job']} was cancelled (scancel)"


def test_a_job_cut_by_its_time_limit_with_accounting_after_slurm_forgot_it(jobs):
    job = jobs["acct"]
    if "skip" in job:
        missing("slurm", job["skip"])
    c = job["cluster"]
    assert job["state"] == "TIMEOUT"  # squeue -t all
    c.wait_forgotten(job["job"])  # the controller forgot it; the accounting did not
    p = c.run("sacct", "-n", "-X", "-P", "-j", job["job"], "-o", "State")
    assert p.returncode == 0 and p.stdout.split() == ["TIMEOUT"], p.stderr
    p, got = _collect(c, job)
    assert p.returncode == 1 and "stored 6 runs (4 failed), 0 not finished yet" in p.stdout
    _check_time_limit(job, got, cut=True)
