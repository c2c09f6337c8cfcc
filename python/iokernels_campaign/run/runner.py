# SPDX-License-Identifier: BSD-3-Clause
"""Runs a campaign's cases: each case in its own directory, each iteration in
a subdirectory where the case's modes run in order (a read finds the write's
files), each run stored as it ends, one progress line per run.

    OUT/runs/SESSION/campaign.json
    OUT/runs/SESSION/CASE/case.json
    OUT/runs/SESSION/CASE/iter1/{write,read}.{stdout,stderr,jsonl,status.json} + output files
    OUT/runs/SESSION/CASE/lustre.json                     (with a lustre table)
    OUT/runs/SESSION/job.sbatch, jobid, job.start.json, job.end.json   (sbatch launcher)
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..base import interrupt
from ..base.paths import show
from ..spec import envvars, lustre, mixcase, slurm
from ..spec.spec import Case
from . import jobfate, launch, order, outcome, resumed


class RunnerError(Exception):
    """sbatch refused a script, or a session cannot be collected."""


class RunFailed(Exception):
    """A run the command depends on failed at run time (exit 1, as run's)."""


@dataclass
class Session:
    id: str
    directory: Path
    total: int = 0
    done: int = 0
    failed: int = 0
    run_ids: list = field(default_factory=list)
    done_before: int = 0  # runs stored before this invocation (a resumed session)
    resumed: bool = False


def now_iso():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def new_session(campaign, out_dir):
    sid = time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]
    directory = Path(out_dir) / "runs" / sid
    directory.mkdir(parents=True)  # new: never reuses a directory
    return Session(sid, directory, total=sum(c.iterations * len(c.modes) for c in campaign.cases))


def _case_dir(session, case, resumed=False):
    d = session.directory / case.dirname
    d.mkdir(exist_ok=resumed)
    (d / "case.json").write_text(json.dumps(case.describe(), indent=1) + "\n")
    return d


def _session_members(sid):
    """Pids still alive in the session sid (the launcher's: its ranks too,
    which OpenMPI puts in process groups of their own)."""
    out = []
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:  # no /proc: the launcher's group is all we can reach
        return out
    for pid in pids:
        try:
            if os.getsid(pid) == sid:
                out.append(pid)
        except OSError:
            continue
    return out


def _signal_all(proc, sig):
    for pid in {proc.pid, *_session_members(proc.pid)}:
        try:
            if pid == proc.pid:  # the launcher's group: whatever it started there too
                os.killpg(pid, sig)
            else:
                os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            continue


def _ended(proc, seconds):
    """Whether the launcher and every process of its session end within seconds."""
    deadline = time.monotonic() + seconds
    try:
        proc.wait(seconds)
    except subprocess.TimeoutExpired:
        return False
    while _session_members(proc.pid):  # ranks end after their launcher
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _kill_group(proc):
    """Ends the launcher this runner started (its own session) and every
    process of that session: SIGTERM first (the launcher forwards it to its
    ranks, which remove their partial output), SIGKILL after 10 s."""
    _signal_all(proc, signal.SIGTERM)
    if not _ended(proc, 10):
        _signal_all(proc, signal.SIGKILL)
        _ended(proc, 5)


def run_step(cmd, directory, step, timeout, launcher_env=None):
    f = outcome.files(directory, step)
    started = time.time()
    env = {**os.environ, **launcher_env} if launcher_env else None
    proc = None
    with open(f["stdout"], "w") as out, open(f["stderr"], "w") as err:
        try:
            with interrupt.deferred():  # a launcher started is a launcher known
                proc = subprocess.Popen(
                    cmd, cwd=directory, stdout=out, stderr=err, start_new_session=True, env=env
                )
            rc, limit = proc.wait(timeout), None
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            rc, limit = None, timeout
        except BaseException:  # Ctrl-C, SIGTERM, SIGHUP: the launcher has its own session
            if proc is not None:
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
    if res.record.get("kernel") == "mix":
        return f"{head} {took}  ok  {mixcase.progress(res.record)}"
    s = res.record["summary"]
    bw = s["read_bandwidth_mib_s"] if mode == "read" else s["write_bandwidth_mib_s"]
    line = f"{head} {took}  ok  {bw:10.1f} MiB/s"
    if mode == "read" and s.get("read_from_storage") is False:
        line += "  [page cache]"
    fractions = [p["ceiling"]["fraction"] for p in res.record["passes"] if "ceiling" in p]
    if fractions:
        line += f"  ceiling x{min(fractions):.2f}"
    return line


def run_extra(env, striping, job_id=None):
    """The store's columns for what was set around a run: its environment
    (secrets redacted), the case directory's striping, the batch job."""
    extra = {"env": json.dumps(envvars.redact(env)) if env else None}
    if striping:
        extra.update(
            lustre_stripe_count=striping.get("stripe_count"),
            lustre_stripe_size_bytes=striping.get("stripe_size_bytes"),
            lustre_status=striping.get("status"),
            lustre_message=striping.get("message"),
        )
    if job_id:
        extra["slurm_job_id"] = int(job_id) if str(job_id).isdigit() else None
    return extra


def _stripe(case, cdir, echo, said):
    """Stripes a case directory; one line when lfs is missing (once) or fails."""
    settings = case.lustre_settings
    if not settings:
        return None
    res = lustre.apply(cdir, settings)
    if res["status"] == "skipped" and "skipped" not in said:
        said.add("skipped")
        echo(
            f"lustre: striping ({lustre.describe(settings)}) skipped: {res['message']} "
            "(recorded with every run)"
        )
    elif res["status"] == "failed":
        echo(f"lustre: {cdir.name}: {res['message']}")
    return res


def _striping_refusal(case, res):
    if res and case.lustre_settings.get("required") and res["status"] != "applied":
        return (
            f"striping is required ([lustre] required = true) and was {res['status']}: "
            + (res["message"])
        )
    return None


@dataclass
class Part:
    """One campaign file of a `run` (several with --interleave): its session,
    the runs its session already stored (resumed), its case directories."""

    campaign: object
    session: Session
    stored: dict
    dirs: dict = field(default_factory=dict)  # case index: (cdir, striping, refusal)


def run_cases(campaign, inventory, store, launcher, out_dir, echo=print, resume=None):
    """Runs every case now (mpiexec or srun) and stores each run. resume: the
    store's row of an earlier session of this campaign (resumed.py), whose
    stored runs are kept and whose other runs are run now, in its folder."""
    return run_together([(campaign, out_dir, resume)], inventory, store, launcher, echo)[0]


def run_together(parts, inventory, store, launcher, echo=print, joint=False):
    """Runs campaigns [(campaign, out_dir, resume row or None)]: one session
    each (its own campaign row, so compare can split them), their runs in
    one order (run/order.py): with joint (run A.toml B.toml --interleave),
    rounds over the union of their cases, each run stored under its own
    file's campaign. Returns the sessions."""
    for campaign, _, _ in parts:
        required = [c for c in campaign.cases if c.lustre_settings.get("required")]
        if required and not shutil.which("lfs"):
            raise RunnerError(
                f"lfs not found on PATH and case '{required[0].name}' requires striping "
                "(lustre required = true): run on a Lustre client, or set required = false"
            )
    first = parts[0][2]
    if first:  # a resumed session keeps its order and seed
        kind = first.get("run_order") or "blocked"
        seed = first.get("seed")
        joint_id = first.get("joint")
    else:
        kind = "interleaved" if joint else parts[0][0].order
        seed = parts[0][0].seed if parts[0][0].seed is not None else order.draw_seed()
        joint_id = None
    running = []
    for campaign, out_dir, resume in parts:
        if resume:
            session, stored = resumed.session(campaign, store, resume, Session)
            echo(
                f"campaign {campaign.name}: resuming session {session.id}: {session.done} of "
                f"{session.total} runs stored, {session.total - session.done} to run, "
                f"launcher {launcher}, in {session.directory}"
            )
        else:
            session, stored = new_session(campaign, out_dir), {}
            if joint:
                joint_id = joint_id or session.id
            _write_session(session, campaign, inventory, launcher, store, kind, seed, joint_id)
            _begin(store, session, campaign, launcher, inventory, out_dir, kind, seed, joint_id)
            echo(
                f"campaign {campaign.name}: {len(campaign.cases)} cases, {session.total} runs, "
                f"launcher {launcher}, in {session.directory}"
            )
        running.append(Part(campaign, session, stored))
    echo(f"order: {_order_text(kind, seed, joint_id)}")
    try:
        _run_all(running, inventory, store, launcher, kind, seed, echo)
    except KeyboardInterrupt as e:  # what finished is stored; say how to go on
        e.detail = "; ".join(
            f"{p.session.done_before + len(p.session.run_ids)} of {p.session.total} runs of "
            f"campaign {p.campaign.name} (session {p.session.id}) are stored in "
            f"{show(store.path)}"
            for p in running
        ) + ("; run it again with --resume to run the rest")
        raise
    for p in running:
        store.finish_campaign(p.session.id, now_iso())
    return [p.session for p in running]


def _begin(store, session, campaign, launcher, inventory, out_dir, kind, seed, joint=None):
    """The session's row in the store, with its order of runs."""
    host, binary = socket.gethostname(), inventory.binary
    store.begin_campaign(
        session.id, campaign, launcher, binary, out_dir, host, now_iso(), kind, seed, joint
    )


def _order_text(kind, seed, joint_id=None):
    if kind == "blocked":
        return "blocked (each case's iterations back to back)"
    together = f", campaigns run together ({joint_id})" if joint_id else ""
    return f"interleaved in rounds (each round every case once), seed {seed}{together}"


def _placement(case, campaign):
    """(members' rank counts, [slurm] nodes): a mix's members each get nodes
    of their own under srun where the allocation has them (slurm.step_shape)."""
    return tuple(m.ranks for m in getattr(case, "members", ())), campaign.slurm.nodes


def plan(campaigns, kind, seed):
    """[(round, position, campaign index, case, iteration, case index)] of
    campaigns run in one order (run/order.py): position 1 is the first run
    of a case's iteration (its modes run together, in its iteration's
    directory); the case index is the case's place in its campaign, 1 first."""
    items = [(k, case, i) for k, c in enumerate(campaigns) for i, case in enumerate(c.cases, 1)]
    steps = order.schedule([case.iterations for _, case, _ in items], kind, seed)
    return [(rnd, n, *items[i][:2], it, items[i][2]) for n, (rnd, i, it) in enumerate(steps, 1)]


def _run_all(parts, inventory, store, launcher, kind, seed, echo):
    said = set()
    # inside an allocation: the job of a run that fails before its record
    job_id = os.environ.get("SLURM_JOB_ID") if launcher == "srun" else None
    srun_extra = {}
    family = slurm.mpi_family(inventory.binary) if launcher == "srun" else None
    for p in parts:
        srun_extra[id(p)] = list(p.campaign.slurm.srun)
        if launcher == "srun":
            srun_extra[id(p)] += slurm.srun_mpi(p.campaign.slurm, family)
    ordered = plan([p.campaign for p in parts], kind, seed)
    for rnd, position, k, case, it, index in ordered:
        part = parts[k]
        session, stored, campaign = part.session, part.stored, part.campaign
        mine = {m: stored.get((case.case_hash(m), it)) for m in case.modes}
        if all(mine.values()):
            continue
        if id(case) not in part.dirs:
            cdir = _case_dir(session, case, resumed=session.resumed)
            striping = _stripe(case, cdir, echo, said)
            part.dirs[id(case)] = (cdir, striping, _striping_refusal(case, striping))
        cdir, striping, refusal = part.dirs[id(case)]
        idir = cdir / f"iter{it}"
        resumed.set_aside(idir, mine)
        idir.mkdir(exist_ok=True)
        broke = None
        for mode in case.modes:
            if mine[mode]:  # stored by the session resumed
                broke = broke or (mode if mine[mode] != "ok" else None)
                continue
            session.done += 1
            env = case.environment(cdir, idir, mode, it)
            if refusal:
                res = outcome.not_run(idir, refusal)
            elif broke:
                res = outcome.not_run(idir, f"the {broke} step of this iteration failed")
            else:
                argv = [str(inventory.binary), *case.argv(mode), "--json", f"{mode}.jsonl"]
                cmd, launcher_env = launch.command(
                    launcher,
                    case.ranks,
                    argv,
                    srun_extra[id(part)],
                    env,
                    campaign.slurm.ntasks_per_node,
                    *_placement(case, campaign),
                )
                res = run_step(cmd, idir, mode, case.timeout, launcher_env)
            if res.status != "ok":
                session.failed += 1
                broke = broke or mode
            place = {"round": rnd, "position": position, "case_index": index}
            extra = run_extra(env, striping, job_id) | place
            session.run_ids.append(store.add_run(session.id, case, mode, it, res, extra))
            echo(progress_line(session, case, mode, it, res))


def _write_session(
    session, campaign, inventory, launcher, store, kind, seed, joint=None, schedule=None
):
    """SESSION/campaign.json; schedule (sbatch): [case folder, iteration,
    round, position] of each run in the script's order, for collect."""
    info = {
        "id": session.id,
        "name": campaign.name,
        "path": str(campaign.path),
        "description": campaign.description,
        "launcher": launcher,
        "binary": str(inventory.binary),
        "db": str(store.path.resolve()) if store else None,
        "order": kind,
        "seed": seed,
        "joint": joint,
    }
    if schedule is not None:
        info["schedule"] = schedule
    (session.directory / "campaign.json").write_text(json.dumps(info, indent=1) + "\n")


def write_sbatch(campaign, inventory, out_dir, store=None, submit=False, echo=print):
    """One batch script for the whole campaign, every run a job step (srun)
    in its case's iteration directory. With submit, hands it to sbatch and
    registers the campaign in the store; `collect` stores the runs once the
    job has ended (or while it runs: what has finished)."""
    session = new_session(campaign, out_dir)
    kind = campaign.order
    seed = campaign.seed if campaign.seed is not None else order.draw_seed()
    entries = []
    for case in campaign.cases:
        cdir = _case_dir(session, case)
        iterations = []
        for it in range(1, case.iterations + 1):
            idir = cdir / f"iter{it}"
            idir.mkdir()
            steps = []
            for mode in case.modes:
                argv = [str(inventory.binary), *case.argv(mode), "--json", f"{mode}.jsonl"]
                cmd, launcher_env = launch.srun_command(
                    case.ranks,
                    argv,
                    campaign.slurm.srun,
                    case.environment(cdir, idir, mode, it),
                    campaign.slurm.ntasks_per_node,
                    *_placement(case, campaign),
                )
                steps.append((idir, mode, case.timeout, launch.with_env(cmd, launcher_env)))
            iterations.append(steps)
        entries.append((case.name, cdir, case.lustre_settings, iterations))
    index = {id(c): i for i, c in enumerate(campaign.cases)}
    runs = [
        (index[id(case)], it - 1, rnd if kind == "interleaved" else None)
        for rnd, _, _, case, it, _ in plan([campaign], kind, seed)
    ]
    schedule = [[c.dirname, it, rnd, n, i] for rnd, n, _, c, it, i in plan([campaign], kind, seed)]
    _write_session(session, campaign, inventory, "sbatch", store, kind, seed, schedule=schedule)
    text = slurm.script(
        campaign.name,
        session.directory,
        campaign.slurm,
        entries,
        max(c.ranks for c in campaign.cases),
        inventory.binary,
        slurm.mpi_family(inventory.binary),
        runs=runs,
    )
    path = session.directory / "job.sbatch"
    path.write_text(text)
    if not submit:
        echo(text)
        echo(
            f"# batch script {path}: {len(campaign.cases)} cases, {session.total} steps "
            "(dry run: nothing submitted or stored)"
        )
        return session, path
    _begin(store, session, campaign, "sbatch", inventory, out_dir, kind, seed)
    p = subprocess.run(["sbatch", "--parsable", str(path)], capture_output=True, text=True)
    if p.returncode != 0:
        raise RunnerError(f"sbatch {path} failed: {p.stderr.strip()}")
    job_id = p.stdout.strip().split(";")[0]
    (session.directory / "jobid").write_text(job_id + "\n")
    echo(f"submitted {path}: job {job_id}, {len(campaign.cases)} cases, {session.total} steps")
    echo(f"when it has ended: iokernels-campaign collect {session.directory} --db {store.path}")
    return session, path


def _job_limit(session_dir):
    script = session_dir / "job.sbatch"
    if script.exists():
        for line in script.read_text().splitlines():
            if line.startswith("#SBATCH --time="):
                return f" (--time={line.split('=', 1)[1]})"
    return ""


# what srun and slurmstepd print when the job's end (its limit, scancel) kills a step
KILLED_BY_SLURM = re.compile(r"CANCELLED AT|DUE TO TIME LIMIT|: Terminated$", re.M)


def _cut_step(session_dir, fate):
    """(directory, step) of the step the job's end cut off although its
    status file was written (srun returned before the batch script was
    killed): the last one started, failed, with srun's or slurmstepd's words
    on its stderr. None when the job ended otherwise."""
    if not fate or fate.state not in ("TIMEOUT", "CANCELLED"):
        return None
    last = None
    for f in session_dir.glob("*/iter*/*.status.json"):
        try:
            st = json.loads(f.read_text())
        except json.JSONDecodeError:
            continue
        if st.get("started") is not None and (last is None or st["started"] > last[0]):
            last = (st["started"], st, f)
    if not last or last[1].get("exit_code") in (0, None) or last[1].get("timed_out"):
        return None
    step = last[2].name.removesuffix(".status.json")
    stderr = last[2].with_name(f"{step}.stderr")
    text = stderr.read_text(errors="replace") if stderr.exists() else ""
    return (last[2].parent, step) if KILLED_BY_SLURM.search(text) else None


def _started(idir, mode, fate, steps):
    """Was the step launched before the job ended? Slurm's accounting says
    where it knows the job's steps (a named step it has was launched); else
    the step's stdout, which the script opens just before srun."""
    if fate.error:
        return False
    if steps:
        return jobfate.STEP_NAME.format(f"{idir.parent.name}/{idir.name}/{mode}") in steps
    return outcome.files(idir, mode)["stdout"].exists()


def _missing(idir, mode, fate, job_id, limit, steps=None):
    """The outcome of a step with no status file once the job is over
    (steps: Slurm's {step name: state} of the job, where it keeps them)."""
    if fate.state == "UNKNOWN":
        why = fate.note or f"Slurm no longer knows job {job_id} and its steps left no end record"
        return outcome.Outcome(idir, "failed", None, f"unknown: {why}", None, None, None)
    why = fate.reason(job_id, limit)
    started = _started(idir, mode, fate, steps)
    if fate.state == "TIMEOUT" and not fate.error:
        text = (
            f"killed: {why} while this step ran"
            if started
            else f"not run: {why} before this step started"
        )
    else:
        text = f"killed: {why} (while this step ran)" if started else f"not run: {why}"
    return outcome.Outcome(idir, "failed", None, text, None, None, None)


def collect(session_dir, store, echo=print, job_ended=False):
    """Stores the runs of an sbatch session not stored yet; returns (stored,
    pending, failed among those stored now). A run with no status file is
    pending while the job may still run it; once the job is over (its end
    file, or sacct/squeue say so: TIMEOUT, CANCELLED, ...) it is stored as
    failed with the reason."""
    session_dir = Path(session_dir).resolve()
    info = json.loads((session_dir / "campaign.json").read_text())
    if not any(c["id"] == info["id"] for c in store.campaigns()):
        raise RunnerError(f"campaign {info['id']} is not in {store.path}: it was not submitted")
    jobid_file = session_dir / "jobid"
    job_id = jobid_file.read_text().strip() if jobid_file.exists() else None
    have = {(r["case_hash"], r["iteration"]) for r in store.runs(campaign=info["id"])}
    places = {  # a session written before case_index has four fields
        (d, it): dict(zip(("round", "position", "case_index"), rest, strict=False))
        for d, it, *rest in info.get("schedule", [])
    }
    fate = jobfate.fate(session_dir, job_id, job_ended)
    limit = _job_limit(session_dir)
    if fate and fate.error:
        echo(f"job {job_id}: {fate.error}")
    cut = _cut_step(session_dir, fate)
    steps = jobfate.step_states(job_id) if fate and job_id else {}
    stored = pending = failed = 0
    for case_json in sorted(session_dir.glob("*/case.json")):
        cdir = case_json.parent
        d = json.loads(case_json.read_text())
        case = (
            mixcase.MixCase.from_description(d, Case)
            if d.get("kind") == "mix"
            else Case.from_description(d)
        )
        striping = lustre.read(cdir)
        refusal = _striping_refusal(case, striping)
        for it in range(1, case.iterations + 1):
            idir = cdir / f"iter{it}"
            broke = broke_mode = None
            for mode in case.modes:
                done = outcome.files(idir, mode)["status.json"].exists()
                if refusal and not done:  # the script skipped the case
                    res = outcome.not_run(idir, refusal)
                elif fate and fate.error and not done:  # the job stopped before its steps
                    res = _missing(idir, mode, fate, job_id, limit, steps)
                elif broke and broke.error.startswith(("not run: job", "unknown:")):
                    res = outcome.Outcome(idir, "failed", None, broke.error, None, None, None)
                elif broke and not done and fate and broke.error.startswith("killed: job"):
                    res = _missing(idir, mode, fate, job_id, limit, steps)
                elif broke:
                    res = outcome.not_run(idir, f"the {broke_mode} step of this iteration failed")
                elif done:
                    res = outcome.read(idir, mode)
                    if res.status != "ok" and (idir, mode) == cut:
                        res = _missing(idir, mode, fate, job_id, limit, steps)
                elif fate:
                    res = _missing(idir, mode, fate, job_id, limit, steps)
                else:
                    res = None
                if res is None:
                    pending += 1
                    break
                if res.status != "ok" and not broke:
                    broke, broke_mode = res, mode
                if (case.case_hash(mode), it) not in have:
                    env = case.environment(cdir, idir, mode, it)
                    extra = run_extra(env, striping, job_id) | places.get((cdir.name, it), {})
                    store.add_run(info["id"], case, mode, it, res, extra)
                    stored += 1
                    failed += res.status != "ok"
    if pending == 0:
        store.finish_campaign(info["id"], now_iso())
    state = "" if fate or not job_id else f" (job {job_id} has not ended)"
    echo(f"stored {stored} runs ({failed} failed), {pending} not finished yet{state}")
    return stored, pending, failed
