# SPDX-License-Identifier: BSD-3-Clause
"""What one step of one case left in its directory, judged: a result, or a
failure with its exit code and the run's last `iokernels: error:` line.

Files of step STEP (write, read, ...) in the iteration directory:
STEP.stdout, STEP.stderr, STEP.jsonl (the --json record), STEP.status.json
({"exit_code": N or null, "started": s, "ended": s, "timed_out": null or the
limit in seconds that it passed}, or {"exit_code": null, "not_run": why} for
a step the batch script did not launch)."""

import json
from dataclasses import dataclass
from pathlib import Path

from ..store.record import RecordError, run_columns

ERROR_PREFIX = "iokernels: error:"


@dataclass
class Outcome:
    directory: Path
    status: str  # "ok" or "failed"
    exit_code: int | None
    error: str | None
    record: dict | None
    started: float | None
    elapsed: float | None


def files(directory, step):
    d = Path(directory)
    return {k: d / f"{step}.{k}" for k in ("stdout", "stderr", "jsonl", "status.json")}


def write_status(directory, step, exit_code, started, ended, timeout=None):
    """timeout: the limit in seconds when the run was killed for passing it."""
    status = {"exit_code": exit_code, "started": started, "ended": ended, "timed_out": timeout}
    files(directory, step)["status.json"].write_text(json.dumps(status) + "\n")


def last_error_line(stderr_text):
    """The last `iokernels: error:` line, else the last non-empty line."""
    lines = [x.strip() for x in stderr_text.splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith(ERROR_PREFIX)]
    if errors:
        return errors[-1]
    return lines[-1] if lines else None


def _last_record(path):
    if not path.exists():
        return None
    lines = [x for x in path.read_text().splitlines() if x.strip()]
    if not lines:
        return None
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError:
        return None


def not_run(directory, why):
    return Outcome(Path(directory), "failed", None, f"not run: {why}", None, None, None)


def read(directory, step):
    """Judges a finished step from its files."""
    f = files(directory, step)
    if not f["status.json"].exists():
        return not_run(directory, "no status file (the step never ran or did not finish)")
    st = json.loads(f["status.json"].read_text())
    if st.get("not_run"):  # the batch script launched nothing (the job's time was up)
        return not_run(directory, st["not_run"])
    started, ended = st.get("started"), st.get("ended")
    elapsed = ended - started if started is not None and ended is not None else None
    rc = st.get("exit_code")
    stderr = f["stderr"].read_text(errors="replace") if f["stderr"].exists() else ""
    record = _last_record(f["jsonl"])

    def failed(error):
        return Outcome(Path(directory), "failed", rc, error, record, started, elapsed)

    if st.get("timed_out"):
        return failed(f"killed: still running after its timeout of {st['timed_out']:g} s")
    if rc != 0:
        return failed(last_error_line(stderr) or f"exit code {rc} and nothing on stderr")
    if record is None:
        return failed(f"exit code 0 but no JSON record in {f['jsonl'].name}")
    if record.get("exit_code") != 0:
        return failed(f"the JSON record says exit code {record.get('exit_code')}")
    if record.get("kernel") == "mix":  # a mix's record: its members' inside (mixcase.py)
        if record.get("status") != "ok":
            return failed(f"the mix's record says status {record.get('status')}")
        return Outcome(Path(directory), "ok", 0, None, record, started, elapsed)
    try:
        run_columns(record)
    except RecordError as e:
        return failed(str(e))
    return Outcome(Path(directory), "ok", 0, None, record, started, elapsed)
