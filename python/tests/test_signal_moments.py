# SPDX-License-Identifier: BSD-3-Clause
"""SIGINT, SIGTERM or SIGHUP at any moment of run, report or list ends the
command with one line (`iokernels-campaign: interrupted by SIGNAL...`) and
exit 128 + N: start-up included, whose imports (numpy, pandas, matplotlib)
take seconds, both through the entry point pyproject.toml names (as the
iokernels-campaign script calls it) and through python -m.

The moments are states of the process read from /proc (its handlers in
place, a library mapped, a child started, a file open), never times. A
signal that came only once the command had ended (exit 0, nothing on
stderr) is sent again at the same moment, a few times at most. What comes
before the entry point's first line (the interpreter starting) is Python's
own and not tested."""

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from conftest import PYDIR, env

SCRIPTS = tomllib.loads((PYDIR / "pyproject.toml").read_text())["project"]["scripts"]
# far longer than any test waits: the signal lands while its ranks run
SLOW = """
[campaign]
name = "slow"
timeout = 300
[[kernel]]
name = "btio"
label = "slow"
backends = ["null"]
ranks = [4]
options = { grid = "160,160,160", dumps = 400 }
"""
ARGS = {
    "list": ["list", "tiny.sqlite"],
    "report": ["report", "tiny.sqlite", "-o", "r.html"],
    "run": ["run", "slow.toml", "--db", "s.sqlite", "--out", "out", "--no-report"],
}


def command(form, args):
    """The command line: the entry point run as its console script runs it,
    or python -m."""
    if form == "script":
        module, func = SCRIPTS["iokernels-campaign"].split(":")
        code = f"import sys; from {module} import {func}; sys.exit({func}())"
        return [sys.executable, "-c", code, *args]
    return [sys.executable, "-m", "iokernels_campaign", *args]


def _read(path):
    try:
        return Path(path).read_text(errors="replace")
    except OSError:  # the process has just ended
        return ""


def descendants(pid):
    """(pid, command line) of every process below pid."""
    parent, cmd = {}, {}
    for p in filter(str.isdigit, os.listdir("/proc")):
        stat = _read(f"/proc/{p}/stat")
        if stat:
            parent[int(p)] = int(stat.rsplit(")", 1)[1].split()[1])
            cmd[int(p)] = _read(f"/proc/{p}/cmdline").replace("\0", " ")
    found, todo = [], [pid]
    while todo:
        top = todo.pop()
        kids = [p for p, pp in parent.items() if pp == top]
        found += [(k, cmd[k]) for k in kids]
        todo += kids
    return found


# moment name -> (pid, cwd) -> whether the process has reached it
def handlers_in(pid, cwd):
    """The tool's handlers are in (Python itself catches only SIGINT)."""
    m = re.search(r"SigCgt:\s*([0-9a-f]+)", _read(f"/proc/{pid}/status"))
    return bool(m) and all(int(m[1], 16) >> (s - 1) & 1 for s in (signal.SIGTERM, signal.SIGHUP))


def mapped(part):
    return lambda pid, cwd: part in _read(f"/proc/{pid}/maps")


def drawing(pid, cwd):
    """The report draws its plots in a hidden folder beside the page."""
    return any(p.name.startswith(".r-plots.") for p in cwd.iterdir())


def child(words):
    return lambda pid, cwd: any(words in c for _, c in descendants(pid))


MOMENTS = {
    "start": handlers_in,
    "numpy": mapped("numpy/_core/_multiarray_umath"),
    "pandas": mapped("pandas/_libs"),
    "matplotlib": mapped("matplotlib/ft2font"),
    "drawing": drawing,
    "binary": child("iokernels --"),  # --list --json, --check-batch
    "ranks": child("iokernels btio"),
}


def wait_for(proc, moment, cwd):
    """Polls until the process reaches the moment; False if it ended first
    (a brief one may be missed). The bound is a hang's, not a timing."""
    reached = MOMENTS[moment]
    deadline = time.monotonic() + 300
    while proc.poll() is None:
        if reached(proc.pid, cwd):
            return True
        assert time.monotonic() < deadline, f"{moment} not reached in 300 s"
        time.sleep(0.001)
    return False


def still_running(procs):
    """Those of procs (pid, command) that have not ended within a minute
    (an MPI singleton's daemon ends shortly after its rank)."""
    deadline = time.monotonic() + 60
    while True:
        left = [(p, c) for p, c in procs if _read(f"/proc/{p}/cmdline")]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def interrupted(form, name, moment, sig, cwd, tries=10):
    """(exit code, stdout, stderr) of the command sent sig at the moment."""
    for _ in range(tries):
        proc = subprocess.Popen(
            command(form, ARGS[name]),
            cwd=cwd,
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            reached = wait_for(proc, moment, cwd)
            below = descendants(proc.pid)
            if reached:
                proc.send_signal(sig)
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"still running 120 s after {sig.name} at {moment}: {err[-2000:]}")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        left = still_running(below)
        for p, _ in left:  # ours: cleaned up before failing
            os.kill(p, signal.SIGKILL)
        assert not left, f"left running after {sig.name}: {left}"
        if not reached or (proc.returncode == 0 and not err):
            # a brief moment the polling missed, or the signal came once the
            # command had ended: the same moment again
            assert proc.returncode == 0 and not err, (proc.returncode, err[-2000:])
            continue
        return proc.returncode, out, err
    pytest.fail(f"{name} ended before {sig.name} reached it at {moment}, {tries} times")


CASES = [
    ("list", "start", signal.SIGINT, "script"),
    ("list", "start", signal.SIGTERM, "script"),
    ("list", "start", signal.SIGHUP, "-m"),
    ("list", "numpy", signal.SIGINT, "-m"),
    ("list", "pandas", signal.SIGTERM, "script"),
    ("list", "matplotlib", signal.SIGHUP, "script"),
    ("report", "start", signal.SIGTERM, "-m"),
    ("report", "numpy", signal.SIGHUP, "script"),
    ("report", "matplotlib", signal.SIGINT, "script"),
    ("report", "drawing", signal.SIGINT, "-m"),
    ("run", "start", signal.SIGHUP, "script"),
    ("run", "pandas", signal.SIGINT, "script"),
    ("run", "matplotlib", signal.SIGTERM, "-m"),
    ("run", "binary", signal.SIGTERM, "script"),
    ("run", "ranks", signal.SIGINT, "script"),
]


@pytest.mark.parametrize(
    "name, moment, sig, form", CASES, ids=[f"{n}-{m}-{s.name}-{f}" for n, m, s, f in CASES]
)
def test_a_signal_at_any_moment_is_one_line(name, moment, sig, form, tiny, tmp_path):
    _, db, first = tiny
    assert first.returncode == 1, first.stderr  # the tiny campaign's failed block
    shutil.copy(db, tmp_path / "tiny.sqlite")
    (tmp_path / "slow.toml").write_text(SLOW)
    code, out, err = interrupted(form, name, moment, sig, tmp_path)
    lines = err.splitlines()
    assert code == 128 + sig, err
    assert len(lines) == 1, err
    assert lines[0].startswith(f"iokernels-campaign: interrupted by {sig.name}"), err
