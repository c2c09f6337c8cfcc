"""Runs a campaign's cases: each case in its own directory, each iteration in
a subdirectory where the case's modes run in order (a read finds the write's
files), each run stored as it ends, one progress line per run.

    OUT/runs/SESSION/campaign.json
    OUT/runs/SESSION/CASE/case.json
    OUT/runs/SESSION/CASE/iter1/{write,read}.{stdout,stderr,jsonl,status.json} + output files
    OUT/runs/SESSION/CASE/job.sbatch                      (sbatch launcher)
"""

import json
import os
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from . import launch, outcome
from .spec import Case


class RunnerError(Exception):
    """sbatch refused a script, or a session cannot be collected."""


@dataclass
class Session:
    id: str
    directory: Path
    total: int = 0
    done: int = 0
    failed: int = 0
    run_ids: list = field(default_factory=list)


def now_iso():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def new_session(campaign, out_dir):
    sid = time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]
    directory = Path(out_dir) / "runs" / sid
    directory.mkdir(parents=True)  # new: never reuses a directory
    return Session(sid, directory, total=sum(c.iterations * len(c.modes) for c in campaign.cases))


def _case_dir(session, case):
    d = session.directory / case.dirname
    d.mkdir()
    (d / "case.json").write_text(json.dumps(case.describe(), indent=1) + "\n")
    return d


def _kill_group(proc):
    """Ends the launcher this runner started (its own process group) and its children."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_step(cmd, directory, step, timeout):
    f = outcome.files(directory, step)
    started = time.time()
    with open(f["stdout"], "w") as out, open(f["stderr"], "w") as err:
        proc = subprocess.Popen(cmd, cwd=directory, stdout=out, stderr=err, start_new_session=True)
        try:
            rc, limit = proc.wait(timeout), None
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            rc, limit = None, timeout
        except BaseException:  # Ctrl-C: the launcher is in its own session, end it too
            _kill_group(proc)
            raise
    outcome.write_status(directory, step, rc, started, time.time(), limit)
    return outcome.read(directory, step)


def progress_line(session, case, mode, iteration, res):
    width = len(str(session.total))
    head = (
        f"[{session.done:>{width}}/{session.total}] {case.name:<34} {mode:<5} "
        f"iter {iteration}/{case.iterations}"
    )
    took = f"{res.elapsed:6.2f} s" if res.elapsed is not None else "      -"
    if res.status != "ok":
        code = "" if res.exit_code is None else f" (exit {res.exit_code})"
        return f"{head} {took}  FAILED{code}: {res.error}"
    s = res.record["summary"]
    bw = s["read_bandwidth_mib_s"] if mode == "read" else s["write_bandwidth_mib_s"]
    line = f"{head} {took}  ok  {bw:10.1f} MiB/s"
    if mode == "read" and s.get("read_from_storage") is False:
        line += "  [page cache]"
    fractions = [p["ceiling"]["fraction"] for p in res.record["passes"] if "ceiling" in p]
    if fractions:
        line += f"  ceiling x{min(fractions):.2f}"
    return line


def run_cases(campaign, inventory, store, launcher, out_dir, echo=print):
    """Runs every case now (mpiexec or srun) and stores each run."""
    session = new_session(campaign, out_dir)
    _write_session(session, campaign, inventory, launcher, store)
    store.begin_campaign(
        session.id, campaign, launcher, inventory.binary, out_dir, socket.gethostname(), now_iso()
    )
    echo(
        f"campaign {campaign.name}: {len(campaign.cases)} cases, {session.total} runs, "
        f"launcher {launcher}, in {session.directory}"
    )
    for case in campaign.cases:
        cdir = _case_dir(session, case)
        for it in range(1, case.iterations + 1):
            idir = cdir / f"iter{it}"
            idir.mkdir()
            broke = None
            for mode in case.modes:
                session.done += 1
                if broke:
                    res = outcome.not_run(idir, f"the {broke} step of this iteration failed")
                else:
                    argv = [str(inventory.binary), *case.argv(mode), "--json", f"{mode}.jsonl"]
                    cmd = launch.command(launcher, case.ranks, argv, campaign.srun)
                    res = run_step(cmd, idir, mode, case.timeout)
                if res.status != "ok":
                    session.failed += 1
                    broke = broke or mode
                session.run_ids.append(store.add_run(session.id, case, mode, it, res))
                echo(progress_line(session, case, mode, it, res))
    store.finish_campaign(session.id, now_iso())
    return session


def _write_session(session, campaign, inventory, launcher, store):
    info = {
        "id": session.id,
        "name": campaign.name,
        "path": str(campaign.path),
        "description": campaign.description,
        "launcher": launcher,
        "binary": str(inventory.binary),
        "db": str(store.path.resolve()) if store else None,
    }
    (session.directory / "campaign.json").write_text(json.dumps(info, indent=1) + "\n")


def write_sbatch(campaign, inventory, out_dir, store=None, submit=False, echo=print):
    """One batch script per case (every iteration and mode in it). With
    submit, hands each to sbatch and registers the campaign in the store;
    `collect` stores the runs once the jobs have ended."""
    session = new_session(campaign, out_dir)
    _write_session(session, campaign, inventory, "sbatch", store)
    scripts = []
    for case in campaign.cases:
        cdir = _case_dir(session, case)
        iterations = []
        for it in range(1, case.iterations + 1):
            idir = cdir / f"iter{it}"
            idir.mkdir()
            iterations.append(
                [
                    (
                        idir,
                        mode,
                        [str(inventory.binary), *case.argv(mode), "--json", f"{mode}.jsonl"],
                    )
                    for mode in case.modes
                ]
            )
        text = launch.sbatch_script(
            case.name,
            cdir,
            case.ranks,
            iterations,
            campaign.sbatch,
            campaign.srun,
            f"iok-{case.dirname}"[:64],
        )
        path = cdir / "job.sbatch"
        path.write_text(text)
        scripts.append(path)
    if not submit:
        for path in scripts:
            echo(f"# ---- {path}")
            echo(path.read_text())
        echo(f"# {len(scripts)} batch scripts written under {session.directory} (dry run)")
        return session, scripts
    store.begin_campaign(
        session.id, campaign, "sbatch", inventory.binary, out_dir, socket.gethostname(), now_iso()
    )
    for path in scripts:
        p = subprocess.run(["sbatch", "--parsable", str(path)], capture_output=True, text=True)
        if p.returncode != 0:
            raise RunnerError(f"sbatch {path} failed: {p.stderr.strip()}")
        (path.parent / "jobid").write_text(p.stdout.strip() + "\n")
        echo(f"submitted {path.parent.name}: job {p.stdout.strip()}")
    echo(
        f"when the jobs have ended: iokernels-campaign collect {session.directory} "
        f"--db {store.path}"
    )
    return session, scripts


def collect(session_dir, store, echo=print):
    """Stores the finished runs of an sbatch session not stored yet; returns
    (stored, pending)."""
    session_dir = Path(session_dir)
    info = json.loads((session_dir / "campaign.json").read_text())
    if not any(c["id"] == info["id"] for c in store.campaigns()):
        raise RunnerError(f"campaign {info['id']} is not in {store.path}: it was not submitted")
    have = {(r["case_hash"], r["iteration"]) for r in store.runs(campaign=info["id"])}
    stored = pending = 0
    for case_json in sorted(session_dir.glob("*/case.json")):
        case = Case.from_description(json.loads(case_json.read_text()))
        for it in range(1, case.iterations + 1):
            idir = case_json.parent / f"iter{it}"
            broke = None
            for mode in case.modes:
                if broke:
                    res = outcome.not_run(idir, f"the {broke} step of this iteration failed")
                elif not outcome.files(idir, mode)["status.json"].exists():
                    pending += 1
                    break
                else:
                    res = outcome.read(idir, mode)
                if res.status != "ok":
                    broke = broke or mode
                if (case.case_hash(mode), it) not in have:
                    store.add_run(info["id"], case, mode, it, res)
                    stored += 1
    if pending == 0:
        store.finish_campaign(info["id"], now_iso())
    echo(f"stored {stored} runs, {pending} not finished yet")
    return stored, pending
