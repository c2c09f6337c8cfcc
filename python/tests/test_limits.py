# SPDX-License-Identifier: BSD-3-Clause
"""The process's limits name themselves: under `ulimit -v` too small for the
tool (numpy, pandas, matplotlib and a report) every command is one line
naming the address-space limit and the fix, before any import could crash
(OpenBLAS's own exit, a loader's segfault); a MemoryError later is one line
naming it too. Under `ulimit -f` (Python ignores SIGXFSZ: a write fails
with EFBIG) the line names the file being written and the limit, whether it
is an export's CSV or Parquet file, a report's page or the -shm file SQLite
writes beside a store it reads; the store is never blamed nor changed, and
no part of the output is left. And a --campaign the store does not have is
named, with the campaigns it has."""

import os
import shlex
import shutil
import sqlite3
import subprocess
import sys

import pytest
from conftest import cli, env
from iokernels_campaign import cli as campaign_cli
from iokernels_campaign.base import limits


def limited(cwd, ulimit, *args):
    """The command run as a user runs it under a limit: bash -c 'ulimit ...; exec ...'."""
    cmd = shlex.join([sys.executable, "-m", "iokernels_campaign", *map(str, args)])
    return subprocess.run(
        ["bash", "-c", f"ulimit {ulimit} || exit 99; exec {cmd}"],
        cwd=cwd,
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def here(tiny, tmp_path):
    """A copy of the tiny campaign's store (WAL, as the tool writes it) and
    of it as a store without WAL (journal_mode delete: read without -shm)."""
    _, db, first = tiny
    assert first.returncode == 1, first.stderr  # the tiny campaign's failed block
    shutil.copy(db, tmp_path / "wal.sqlite")
    shutil.copy(db, tmp_path / "plain.sqlite")
    con = sqlite3.connect(tmp_path / "plain.sqlite")
    assert con.execute("PRAGMA journal_mode = delete").fetchone() == ("delete",)
    con.close()
    return tmp_path


def one_line(p):
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert lines[0].startswith("iokernels-campaign: error: "), lines
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [["report", "wal.sqlite", "-o", "r.html"], ["list", "wal.sqlite"], ["run", "c.toml"]],
    ids=["report", "list", "run"],
)
def test_an_address_space_limit_too_small_is_one_line(here, args):
    p = limited(here, "-v 400000", *args)
    line = one_line(p)
    assert p.returncode == 1, p.stderr
    assert "the address-space limit (ulimit -v 400000, in KiB) is below the " in line, line
    assert line.endswith(f"raise it (ulimit -v {limits.NEEDED // 1024} or more, or unlimited)")
    assert not (here / "r.html").exists() and p.stdout == ""


def test_the_report_runs_at_the_limit_the_tool_asks_for(here):
    """NEEDED is enough: the report of the tiny campaign under it."""
    p = limited(here, f"-v {limits.NEEDED // 1024}", "report", "wal.sqlite", "-o", "r.html")
    assert p.returncode == 0, p.stderr
    assert (here / "r.html").stat().st_size > 0 and "report: " in p.stdout


@pytest.mark.parametrize("limit", [None, 700 * 2**20])
def test_a_memory_error_is_one_line_naming_the_limit(limit, tmp_path, capsys, monkeypatch):
    def greedy(a):
        raise MemoryError()

    monkeypatch.setitem(campaign_cli.COMMANDS, "list", greedy)
    monkeypatch.setattr(limits, "address_space", lambda: limit)
    monkeypatch.delenv("IOK_CAMPAIGN_DEBUG", raising=False)
    assert campaign_cli.main(["list", str(tmp_path / "x.sqlite")]) == 1
    err = capsys.readouterr().err.splitlines()
    if limit is None:
        want = "out of memory (MemoryError): free memory, or run where there is more"
    else:
        want = (
            "out of memory (MemoryError) under the address-space limit of 716800 KiB "
            "(ulimit -v): raise it, or unlimited"
        )
    assert err == [f"iokernels-campaign: error: {want}"]


def test_numpy_gets_one_blas_thread_and_the_runs_the_users_environment(monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    with limits.one_blas_thread():
        assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert "OPENBLAS_NUM_THREADS" not in os.environ
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")  # the user's choice stands
    with limits.one_blas_thread():
        assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"


def outputs(d):
    """What an interrupted write could leave: the output and its temporaries."""
    return sorted(p.name for p in d.iterdir() if p.name.startswith(("x.", ".x.", "r.", ".r")))


def test_a_store_read_past_the_file_size_limit_names_the_shm_file(here):
    before = (here / "wal.sqlite").read_bytes()
    p = limited(here, "-f 8", "export", "wal.sqlite", "--csv", "x.csv")
    line = one_line(p)
    assert p.returncode == 2, p.stderr
    assert line == (
        "iokernels-campaign: error: SQLite could not write wal.sqlite-shm (32 KiB), which it "
        "writes beside a store even to read it (sqlite: disk I/O error): the file size limit "
        "of 8 KiB (ulimit -f) stops it; raise it (ulimit -f unlimited)"
    )
    assert (here / "wal.sqlite").read_bytes() == before and outputs(here) == []
    # without the limit the same command reads the store and writes the file
    p = cli("export", "wal.sqlite", "--csv", "x.csv", cwd=here)
    assert p.returncode == 0 and (here / "x.csv").read_text().startswith("run_id,"), p.stderr


@pytest.mark.parametrize(
    "args, name",
    [
        (["export", "plain.sqlite", "--csv", "x.csv"], "x.csv"),
        (["export", "plain.sqlite", "--parquet", "x.parquet"], "x.parquet"),
        (["report", "plain.sqlite", "-o", "r.html"], "r.html"),
    ],
    ids=["csv", "parquet", "report"],
)
def test_an_output_past_the_file_size_limit_names_the_file(here, args, name):
    before = (here / "plain.sqlite").read_bytes()
    p = limited(here, "-f 1", *args)
    line = one_line(p)
    assert p.returncode == 1, p.stderr
    assert line == (
        f"iokernels-campaign: error: {name}: writing it went past the file size limit of 1 KiB "
        "(ulimit -f): raise it (ulimit -f unlimited)"
    )
    assert (here / "plain.sqlite").read_bytes() == before and outputs(here) == []


@pytest.mark.parametrize(
    "args, flag",
    [
        (["compare", "wal.sqlite", "plain.sqlite", "--campaign-a", "nosuch"], "--campaign-a"),
        (["compare", "wal.sqlite", "plain.sqlite", "--campaign-b", "nosuch"], "--campaign-b"),
        (["list", "wal.sqlite", "--campaign", "nosuch"], "--campaign"),
        (["report", "wal.sqlite", "-o", "r.html", "--campaign", "nosuch"], "--campaign"),
        (["export", "wal.sqlite", "--csv", "x.csv", "--campaign", "nosuch"], "--campaign"),
    ],
    ids=["compare-a", "compare-b", "list", "report", "export"],
)
def test_an_unknown_campaign_is_named_with_those_the_store_has(here, args, flag):
    p = cli(*args, cwd=here)
    line = one_line(p)
    assert p.returncode == 2 and p.stdout == "", (p.stdout, p.stderr)
    store = "plain.sqlite" if flag == "--campaign-b" else "wal.sqlite"
    assert line == (
        f"iokernels-campaign: error: {flag} nosuch: {store} has no campaign of that id or "
        "name; it has tiny"
    )
    assert outputs(here) == []
