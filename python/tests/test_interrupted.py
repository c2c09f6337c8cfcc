# SPDX-License-Identifier: BSD-3-Clause
"""A campaign interrupted by SIGTERM or SIGHUP (a closed terminal, `timeout`,
a batch system's limit) ends as it does on Ctrl-C: the launcher and its
ranks ended (the process table is checked), the runs that finished stored,
one line, exit 128 + signal; `run --resume` then runs only what the store
lacks, in the same session."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from conftest import cli, env

FAST = """
[[kernel]]
name = "btio"
label = "{label}"
backends = ["null"]
ranks = [1]
iterations = {iterations}
options = {{ grid = "16,16,16", dumps = {dumps} }}
"""

BTIO = """
[[kernel]]
name = "btio"
label = "{label}"
backends = ["null"]
ranks = [{ranks}]
options = {{ grid = "{grid}", dumps = {dumps} }}
"""
# far longer than any test waits: the signal lands while it runs
SLOW = BTIO.format(label="slow", ranks=4, grid="160,160,160", dumps=400)
# about 5 s on one rank: long enough to be interrupted, short enough to resume
MEDIUM = BTIO.format(label="medium", ranks=1, grid="128,128,128", dumps=100)


def campaign(modes, *blocks):
    # blocked: the cases run in the order written, so the slow one is cut
    # (test_interleave.py resumes a session in rounds)
    head = f'[campaign]\nname = "cut"\ntimeout = 300\nmodes = {modes}\norder = "blocked"\n'
    return head + "".join(blocks)


def ours(top):
    """(pid, command) of every process whose working folder is inside top:
    the launchers and ranks a campaign started there."""
    top = str(top.resolve())
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ")
        except OSError:
            continue
        if cwd == top or cwd.startswith(top + "/"):
            found.append((int(pid), cmd.decode(errors="replace")[:120]))
    return found


def start(tmp_path, *extra):
    cmd = [sys.executable, "-m", "iokernels_campaign", "run", "c.toml", "--db", "s.sqlite"]
    cmd += ["--out", "out", "--no-report", *extra]
    return subprocess.Popen(
        cmd, cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def wait_for_ranks(proc, folder_glob, tmp_path, ranks):
    """Waits until the case matching folder_glob runs its ranks."""
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the case never started"
        dirs = list((tmp_path / "out").glob(folder_glob))
        if dirs and sum("iokernels btio" in c for _, c in ours(dirs[0])) >= ranks:
            return dirs[0]
        time.sleep(0.1)


def stored(db):
    con = sqlite3.connect(db)
    try:
        return con.execute(
            "SELECT id, case_hash, iteration, status, started, campaign_id FROM runs ORDER BY id"
        ).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signal_ends_the_launcher_and_keeps_finished_runs(sig, tmp_path):
    (tmp_path / "c.toml").write_text(
        campaign('["write"]', FAST.format(label="first", iterations=1, dumps=2), SLOW)
    )
    proc = start(tmp_path)
    wait_for_ranks(proc, "runs/*/slow-*/iter1", tmp_path, 4)
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"the campaign tool still ran 60 s after {sig.name}")
    assert proc.returncode == 128 + sig, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"iokernels-campaign: interrupted by {sig.name}")
    assert "1 of 2 runs" in lines[0] and "--resume" in lines[0], lines
    # nothing of the campaign is left: no mpiexec, no rank
    assert ours(tmp_path) == []
    runs = stored(tmp_path / "s.sqlite")
    assert [r[3] for r in runs] == ["ok"], runs  # the finished run, not the cut one


def test_resume_runs_only_what_the_store_lacks(tmp_path):
    (tmp_path / "c.toml").write_text(
        campaign(
            '["write", "read"]',
            FAST.format(label="before", iterations=2, dumps=2),
            MEDIUM,
            FAST.format(label="after", iterations=1, dumps=3),
        )
    )
    total = 2 * 2 + 2 + 2
    proc = start(tmp_path)
    cut = wait_for_ranks(proc, "runs/*/medium-*/iter1", tmp_path, 1)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 143
    before = stored(tmp_path / "s.sqlite")
    assert len(before) == 4 and {r[3] for r in before} == {"ok"}, before

    p = cli(
        "run", "c.toml", "--db", "s.sqlite", "--out", "out", "--no-report", "--resume", cwd=tmp_path
    )
    assert p.returncode == 0, p.stderr
    assert f"resuming session {before[0][5]}: 4 of {total} runs stored, 4 to run" in p.stdout
    progress = [x for x in p.stdout.splitlines() if x.startswith("[")]
    assert len(progress) == total - 4 and all("before" not in x for x in progress), progress
    after = stored(tmp_path / "s.sqlite")
    assert len(after) == total and {r[5] for r in after} == {before[0][5]}
    assert after[:4] == before  # the stored runs were not run again
    assert {r[3] for r in after} == {"ok"}
    # what the interrupted attempt left is kept apart, not deleted
    assert cut.with_name("iter1.interrupted").is_dir()

    # a finished session: nothing left to run
    again = cli("run", "c.toml", "--db", "s.sqlite", "--no-report", "--resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"{total} of {total} runs stored, 0 to run" in again.stdout
    assert len(stored(tmp_path / "s.sqlite")) == total

    # its runs live in its own folder: another --out is refused
    other = cli("run", "c.toml", "--db", "s.sqlite", "--out", "elsewhere", "--resume", cwd=tmp_path)
    assert other.returncode == 2 and "keeps its runs in" in other.stderr, other.stderr
    assert len(stored(tmp_path / "s.sqlite")) == total


def snapshot(page):
    plots = page.with_name(page.stem + "-plots")
    return page.read_bytes(), {f.name: f.read_bytes() for f in plots.iterdir()}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_report_leaves_the_previous_one(sig, tiny, tmp_path):
    d, db, _ = tiny
    page = tmp_path / "report.html"
    assert cli("report", db, "-o", page, cwd=d).returncode == 0
    before = snapshot(page)
    started = time.time()
    cmd = [sys.executable, "-m", "iokernels_campaign", "report", str(db), "-o", str(page)]
    proc = subprocess.Popen(
        cmd, cwd=d, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    # the first plot drawn, wherever the report draws it: the page is not done yet
    while not any(f.stat().st_mtime >= started for f in tmp_path.glob("*/*.png") if f.exists()):
        assert proc.poll() is None, "the report ended before a plot was seen"
        time.sleep(0.01)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert snapshot(page) == before  # the previous report, whole
    assert sorted(f.name for f in tmp_path.iterdir()) == ["report-plots", "report.html"]
    assert proc.returncode == 128 + sig and f"interrupted by {sig.name}" in err, err


TUNE = """
[campaign]
name = "cut-tune"
ranks = [1]
modes = ["write"]
timeout = 120
[[kernel]]
name = "btio"
backends = ["null"]
options = { grid = "16,16,16", dumps = 2 }
[tune]
trials = 5
repeats = 1
[tune.space]
transfer = ["collective", "independent"]
api = ["blocking", "nonblocking"]
"""


def answer(db):
    con = sqlite3.connect(db)
    try:
        return [json.loads(a) for (a,) in con.execute("SELECT answer FROM tunes")]
    finally:
        con.close()


def test_tune_interrupted_then_resumed(tmp_path):
    (tmp_path / "t.toml").write_text(TUNE)
    cmd = [sys.executable, "-m", "iokernels_campaign", "tune", "t.toml", "--db", "t.sqlite"]
    cmd += ["--out", "out", "--no-report"]
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    journal = []
    while len(journal) < 2:  # two trials finished (the defaults and one more)
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        journal = list((tmp_path / "out").glob("runs/*/trials.jsonl"))
        journal = journal[0].read_text().splitlines() if journal else []
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "--resume" in err, err
    assert ours(tmp_path) == []
    kept = {}
    for line in (tmp_path / "out").glob("runs/*/trials.jsonl").__next__().read_text().splitlines():
        t = json.loads(line)
        kept[t["number"]] = t
    assert answer(tmp_path / "t.sqlite") == []

    p = cli(
        "tune",
        "t.toml",
        "--db",
        "t.sqlite",
        "--out",
        "out",
        "--no-report",
        "--resume",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    (ans,) = answer(tmp_path / "t.sqlite")
    # 4 effective configurations: one of the 4 points is the defaults (verdicts)
    assert len(ans["trials"]) == 4
    by_number = {t["number"]: t for t in ans["trials"]}
    for n, t in kept.items():  # the trials finished before the signal: not run again
        assert by_number[n]["run_ids"] == t["run_ids"], (n, by_number[n], t)
    settings = [tuple(sorted(t["settings"].items())) for t in ans["trials"]]
    assert len(set(settings)) == 4  # no trial's settings tried twice
    ran = [x for x in p.stdout.splitlines() if x.startswith("[")]
    assert len(ran) == 4 - len(kept), p.stdout


def test_export_and_compare_pages_are_written_whole_or_not_at_all(tmp_path):
    from pathlib import Path

    from iokernels_campaign.report import staged

    f = tmp_path / "x.csv"
    f.write_text("run_id,old\n")

    def cut_short(tmp):
        Path(tmp).write_text("run_id,new,half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        staged.write_with(f, cut_short)
    assert f.read_text() == "run_id,old\n" and list(tmp_path.iterdir()) == [f]
    staged.write_with(f, lambda tmp: Path(tmp).write_text("run_id,new\n"))
    assert f.read_text() == "run_id,new\n" and list(tmp_path.iterdir()) == [f]
    umask = os.umask(0o022)
    os.umask(umask)
    assert f.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600
