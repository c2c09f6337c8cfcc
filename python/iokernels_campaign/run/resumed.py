# SPDX-License-Identifier: BSD-3-Clause
"""`run --resume`: continue the latest session of a campaign in the store
instead of starting a new one. A run stored (ok or failed: a failure is a
result too) is kept and not run again; every other run is run now, in the
session's own folder, under the session's id, so the report and `list` see
one campaign. Without --resume a run is a new session (a new measurement),
as before.

The session resumed is the latest one in the store of the same campaign
name and campaign file name, launched by mpiexec or srun (an sbatch session
is completed by `collect`). An iteration none of whose runs is stored is
run whole, in a fresh folder: what the interrupted attempt left there is
renamed ITER.interrupted (kept, never deleted); an iteration whose write is
stored runs its remaining steps in place (they read the write's files), the
interrupted step's own files renamed STEP.FILE.interrupted."""

from pathlib import Path

from ..base.paths import show
from . import outcome


class ResumeError(Exception):
    """A session that cannot be resumed: one line."""


def latest(store, campaign):
    """The store's row of the session `run --resume` continues, or None."""
    mine = [
        c
        for c in store.campaigns()
        if c["name"] == campaign.name
        and c["launcher"] != "sbatch"
        and Path(c["path"] or "").name == Path(campaign.path).name
    ]
    return mine[-1] if mine else None


def unfinished_note(store, campaign):
    """A line for a run without --resume when the latest session of this
    campaign never finished, else None."""
    row = latest(store, campaign)
    if row is None or row["finished"]:
        return None
    n = len(store.runs(campaign=row["id"]))
    return (
        f"note: session {row['id']} of campaign {campaign.name} did not finish ({n} runs "
        "stored): --resume would continue it; this run starts a new session"
    )


def out_dir(row, given):
    """The session's --out folder; --out given must name the same one."""
    out = Path(row["out_dir"])
    if given and Path(given).resolve() != out.resolve():
        raise ResumeError(
            f"--resume: session {row['id']} keeps its runs in {show(out)}, not --out "
            f"{show(given)}: leave out --out or give that folder"
        )
    directory = out / "runs" / row["id"]
    if not directory.is_dir():
        raise ResumeError(
            f"--resume: the folder of session {row['id']}, {show(directory)}, is gone: "
            "run without --resume to start a new session"
        )
    return out


def session(campaign, store, row, make):
    """(Session of the resumed campaign, {(case hash, iteration): status} of
    its stored runs that are runs of this campaign file's cases)."""
    wanted = {
        (case.case_hash(m), it)
        for case in campaign.cases
        for m in case.modes
        for it in range(1, case.iterations + 1)
    }
    stored = {
        (r["case_hash"], r["iteration"]): r["status"]
        for r in store.runs(campaign=row["id"])
        if (r["case_hash"], r["iteration"]) in wanted
    }
    s = make(row["id"], Path(row["out_dir"]) / "runs" / row["id"], total=len(wanted))
    s.resumed = True
    s.done = s.done_before = len(stored)
    s.failed = sum(v != "ok" for v in stored.values())
    return s, stored


def _free(path):
    """path.interrupted, or path.interrupted-2, -3, ... the first that is free."""
    cand, n = path.with_name(path.name + ".interrupted"), 1
    while cand.exists() or cand.is_symlink():
        n += 1
        cand = path.with_name(f"{path.name}.interrupted-{n}")
    return cand


def set_aside(idir, stored):
    """Keeps what an interrupted attempt left in an iteration folder out of
    the way of the runs about to run there. stored: {mode: status or None}."""
    if not idir.exists():
        return
    if not any(stored.values()):
        idir.rename(_free(idir))
        return
    for mode, status in stored.items():
        if status:
            continue
        for f in outcome.files(idir, mode).values():
            if f.exists():
                f.rename(_free(f))
