# SPDX-License-Identifier: BSD-3-Clause
"""Every file argument of every subcommand, given each kind of bad file: one
line naming the argument and the fix, exit 2, nothing run, created or
changed. Stores are opened read-only by the commands that only read them."""

import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import cli
from declared import missing
from iokernels_campaign import cli as campaign_cli
from iokernels_campaign.run.outcome import Outcome
from iokernels_campaign.spec.slurm import Slurm
from iokernels_campaign.spec.spec import Campaign, Case
from iokernels_campaign.store.store import Store

CAMPAIGN = """
[campaign]
name = "args"
[[kernel]]
name = "btio"
backends = ["null"]
options = { grid = "12,12,12", dumps = 1 }
"""


def make_store(path, runs=1):
    """A results store holding `runs` failed runs of one campaign."""
    s = Store(path)
    camp = Campaign("c", "", Path("c.toml"), [], Slurm())
    s.begin_campaign("c1", camp, "mpiexec", "iokernels", "out", "host", "now")
    for i in range(runs):
        case = Case("btio", "btio", "null", 1, (("dumps", str(i + 1)),), ("write",), 1, 60.0, "")
        out = Outcome(Path("."), "failed", 2, "iokernels: error: test", None, 0.0, 1.0)
        s.add_run("c1", case, "write", 1, out)
    s.close()
    return path


def bad_folder(d, name):
    (d / name).mkdir()
    return name


def bad_missing(d, name):
    return name


def bad_not_sqlite(d, name):
    (d / name).write_bytes(b"kernel,backend\nbtio,null\n" * 40)
    return name


def bad_truncated(d, name):
    data = make_store(d / name).read_bytes()
    (d / name).write_bytes(data[: len(data) // 2])
    return name


def bad_cut_header(d, name):
    data = make_store(d / name).read_bytes()
    (d / name).write_bytes(data[:50])
    return name


def bad_other_sqlite(d, name):
    con = sqlite3.connect(d / name)
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    return name


def bad_under_a_file(d, name):
    (d / "afile").write_text("a file, not a folder\n")
    return f"afile/{name}"


KINDS = {
    "folder": bad_folder,
    "missing": bad_missing,
    "not-sqlite": bad_not_sqlite,
    "truncated": bad_truncated,
    "cut-header": bad_cut_header,
    "other-sqlite": bad_other_sqlite,
    "under-a-file": bad_under_a_file,
}


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A working folder with a good store, a campaign file and a session."""
    monkeypatch.chdir(tmp_path)
    make_store(tmp_path / "good.sqlite")
    (tmp_path / "c.toml").write_text(CAMPAIGN)
    (tmp_path / "session").mkdir()
    (tmp_path / "session" / "campaign.json").write_text('{"id": "c1"}\n')
    return tmp_path


def snapshot(d):
    """Every path under d with its bytes (None for folders); SQLite's -wal and
    -shm files, which any reader of a WAL store may leave, aside."""
    return {
        str(p.relative_to(d)): (None if p.is_dir() else p.read_bytes())
        for p in d.rglob("*")
        if not p.name.endswith(("-wal", "-shm"))
    }


def run_main(capsys, *args):
    rc = campaign_cli.main([str(a) for a in args])
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    return rc, lines, out.out


def refused(capsys, d, args, expected):
    """The command exits 2 with one line holding `expected`, and changes nothing."""
    before = snapshot(d)
    rc, lines, _ = run_main(capsys, *args)
    assert rc == 2 and len(lines) == 1, (rc, lines)
    assert lines[0].startswith("iokernels-campaign: error: "), lines
    assert expected in lines[0], (expected, lines[0])
    assert snapshot(d) == before
    return lines[0]


# how each command names its store argument, and the command line around it
READERS = {
    "list": ("DB", lambda db: ["list", db]),
    "report": ("DB", lambda db: ["report", db, "-o", "r.html"]),
    "compare-a": ("A", lambda db: ["compare", db, "good.sqlite"]),
    "compare-b": ("B", lambda db: ["compare", "good.sqlite", db]),
    "export": ("DB", lambda db: ["export", db, "--csv", "x.csv"]),
}
WRITERS = {
    "run": ("--db", lambda db: ["run", "c.toml", "--db", db, "--out", "out"]),
    "collect": ("--db", lambda db: ["collect", "session", "--db", db]),
}


def store_message(kind, label, db, creates):
    """What the command says; only run may create the store."""
    return {
        "folder": f"{label} {db} is a folder; give a file path",
        "missing": f"no results store at {db} ({label})",
        "not-sqlite": f"{label} {db} is not a SQLite database",
        "truncated": f"{label} {db} is truncated (",
        "cut-header": f"{label} {db} is truncated (50 bytes: not even a SQLite header)",
        "other-sqlite": f"{db} is a SQLite database but not an iokernels results store",
        "under-a-file": (
            f"{label} {db}: a part of the path is a file, not a folder"
            if creates
            else f"no results store at {db} ({label})"
        ),
    }[kind]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", READERS)
def test_read_commands_name_a_bad_store(here, capsys, command, kind):
    label, argv = READERS[command]
    db = KINDS[kind](here, "s.sqlite")
    refused(capsys, here, argv(db), store_message(kind, label, db, False))


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "missing"])
@pytest.mark.parametrize("command", WRITERS)
def test_write_commands_name_a_bad_store(here, capsys, command, kind):
    label, argv = WRITERS[command]
    db = KINDS[kind](here, "s.sqlite")
    refused(capsys, here, argv(db), store_message(kind, label, db, command == "run"))


def test_collect_needs_an_existing_store(here, capsys):
    refused(capsys, here, WRITERS["collect"][1]("s.sqlite"), "no results store at s.sqlite (--db)")


OUTPUTS = {
    "report -o": ["report", "good.sqlite", "-o"],
    "compare --html": ["compare", "good.sqlite", "good.sqlite", "--html"],
    "export --csv": ["export", "good.sqlite", "--csv"],
    "export --parquet": ["export", "good.sqlite", "--parquet"],
}


@pytest.mark.parametrize("kind", ["folder", "under-a-file"])
@pytest.mark.parametrize("command", OUTPUTS)
def test_output_files(here, capsys, command, kind):
    flag = command.split()[1]
    path = KINDS[kind](here, "page.html")
    expected = {
        "folder": f"{flag} {path} is a folder; give a file path",
        "under-a-file": f"{flag} {path}: a part of the path is a file, not a folder",
    }[kind]
    refused(capsys, here, [*OUTPUTS[command], path], expected)


def test_report_plots_folder_that_is_a_file(here, capsys):
    (here / "r-plots").write_text("mine\n")
    refused(
        capsys,
        here,
        ["report", "good.sqlite", "-o", "r.html"],
        "plots folder of -o r-plots is a file; give a folder path",
    )


@pytest.mark.parametrize(
    "setup, out, expected",
    [
        (lambda d: (d / "o").write_text("x\n"), "o", "--out o is a file; give a folder path"),
        (
            lambda d: (d / "afile").write_text("x\n"),
            "afile/o",
            "--out afile/o: a part of the path is a file, not a folder",
        ),
        (
            lambda d: (d / "o" / "report.html").mkdir(parents=True),
            "o",
            "report (--no-report: none) o/report.html is a folder; give a file path",
        ),
        (
            lambda d: (d / "o").mkdir() or (d / "o" / "runs").write_text("x\n"),
            "o",
            "runs folder of --out o/runs is a file; give a folder path",
        ),
    ],
    ids=["file", "under-a-file", "report-is-a-folder", "runs-is-a-file"],
)
def test_run_out_folder(here, capsys, setup, out, expected):
    setup(here)
    refused(capsys, here, ["run", "c.toml", "--db", "new.sqlite", "--out", out], expected)


@pytest.mark.parametrize(
    "args, expected",
    [
        (["run", "nope.toml"], "campaign file nope.toml not found"),
        (["run", "session"], "campaign file session is a folder; give a file path"),
        (["run", "c.toml", "--bin", "session"], "--bin session is a folder; give a file path"),
        (["run", "c.toml", "--bin", "nope"], "--bin nope not found"),
        (["run", "c.toml", "--bin", "c.toml"], "--bin c.toml is not executable"),
        (["collect", "nope"], "session nope not found"),
        (["collect", "c.toml"], "session c.toml is a file, not a folder; give OUT/runs/SESSION"),
    ],
    ids=["campaign-missing", "campaign-folder", "bin-folder", "bin-missing", "bin-not-exec"]
    + ["session-missing", "session-file"],
)
def test_input_files(here, capsys, args, expected):
    refused(capsys, here, [*args, "--db", "new.sqlite"], expected)


@pytest.fixture
def ro(here):
    """here/ro: a folder holding a store, mounted read-only."""
    d = here / "ro"
    d.mkdir()
    make_store(d / "s.sqlite")
    if subprocess.run(["mount", "--bind", d, d], capture_output=True).returncode != 0:
        missing("root", "cannot bind-mount (not root, or no mount namespace)")
    if subprocess.run(["mount", "-o", "remount,ro,bind", d], capture_output=True).returncode:
        subprocess.run(["umount", d])
        missing("root", "cannot remount read-only")
    yield d
    if subprocess.run(["umount", d]).returncode != 0:  # still busy: detach it, then fail
        subprocess.run(["umount", "-l", d])
        pytest.fail(f"{d} was still in use after the test")


def test_read_commands_open_a_read_only_store(here, ro, capsys):
    before = snapshot(here)
    rc, lines, out = run_main(capsys, "list", "ro/s.sqlite")
    assert (rc, lines) == (0, []) and "iokernels: error: test" in out
    rc, lines, out = run_main(capsys, "report", "ro/s.sqlite", "-o", "r.html")
    assert (rc, lines) == (0, []) and (here / "r.html").exists()
    rc, lines, out = run_main(capsys, "export", "ro/s.sqlite", "--csv", "x.csv")
    assert rc == 2 and lines == [
        "iokernels-campaign: error: ro/s.sqlite: no successful runs to export"
    ]
    assert {k: v for k, v in snapshot(here).items() if k.startswith("ro")} == {
        k: v for k, v in before.items() if k.startswith("ro")
    }


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["run", "c.toml", "--db", "ro/s.sqlite"],
            "--db ro/s.sqlite is on a read-only file system; give a writable file path",
        ),
        (
            ["collect", "session", "--db", "ro/s.sqlite"],
            "--db ro/s.sqlite is on a read-only file system; give a writable file path",
        ),
        (
            ["run", "c.toml", "--db", "new.sqlite", "--out", "ro/out"],
            "--out ro/out: folder ro is on a read-only file system; give a path in a writable",
        ),
        (
            ["report", "good.sqlite", "-o", "ro/r.html"],
            "-o ro/r.html: folder ro is on a read-only file system",
        ),
        (
            ["compare", "good.sqlite", "good.sqlite", "--html", "ro/c.html"],
            "--html ro/c.html: folder ro is on a read-only file system",
        ),
        (
            ["export", "good.sqlite", "--csv", "ro/x.csv"],
            "--csv ro/x.csv: folder ro is on a read-only file system",
        ),
    ],
    ids=["run-db", "collect-db", "run-out", "report-o", "compare-html", "export-csv"],
)
def test_writes_into_a_read_only_folder(here, ro, capsys, args, expected):
    refused(capsys, here, args, expected)


def test_immutable_store_is_read_only_for_run_but_readable(here, capsys):
    make_store(here / "s.sqlite")
    if subprocess.run(["chattr", "+i", "s.sqlite"], capture_output=True).returncode != 0:
        missing("root", "chattr +i refused on this file system (needs root on ext4)")
    try:
        refused(
            capsys,
            here,
            ["run", "c.toml", "--db", "s.sqlite"],
            "--db s.sqlite is read-only; give a writable file path",
        )
        rc, lines, out = run_main(capsys, "list", "s.sqlite")
        assert (rc, lines) == (0, []) and "iokernels: error: test" in out
    finally:
        subprocess.run(["chattr", "-i", "s.sqlite"], check=True)


def test_corrupt_pages_are_named(here, capsys):
    data = bytearray(make_store(here / "s.sqlite", runs=200).read_bytes())
    page = int.from_bytes(data[16:18], "big")
    assert len(data) > 4 * page
    data[2 * page : len(data)] = b"\xa5" * (len(data) - 2 * page)  # every page after the 2nd
    (here / "s.sqlite").write_bytes(bytes(data))
    refused(
        capsys,
        here,
        ["list", "s.sqlite"],
        "s.sqlite is truncated or corrupt (sqlite: database disk image is malformed)",
    )


def test_missing_store_is_never_created_by_a_read(here, capsys):
    for args in (["list", "n.sqlite"], ["report", "n.sqlite"], ["export", "n.sqlite", "--csv=x"]):
        refused(capsys, here, args, "no results store at n.sqlite (DB)")
    assert not (here / "n.sqlite").exists()


def test_as_a_process_one_line_no_traceback(tmp_path):
    (tmp_path / "d.sqlite").mkdir()
    for args in (["list", "d.sqlite"], ["report", "d.sqlite"], ["run", "d.sqlite"]):
        p = cli(*args, cwd=tmp_path)
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1 and "is a folder" in p.stderr


def test_unexpected_errors_are_one_line_and_debug_shows_the_traceback(here, capsys, monkeypatch):
    def broken(a):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setitem(campaign_cli.COMMANDS, "list", broken)
    monkeypatch.delenv("IOK_CAMPAIGN_DEBUG", raising=False)
    rc, lines, _ = run_main(capsys, "list", "good.sqlite")
    assert rc == 1 and lines == [
        "iokernels-campaign: error: unexpected RuntimeError: boom second line "
        "(a bug: IOK_CAMPAIGN_DEBUG=1 prints the traceback)"
    ]
    monkeypatch.setenv("IOK_CAMPAIGN_DEBUG", "1")
    rc, lines, _ = run_main(capsys, "list", "good.sqlite")
    assert rc == 1 and lines[0] == "Traceback (most recent call last):"
    assert lines[-1].startswith("iokernels-campaign: error: unexpected RuntimeError")


@pytest.mark.parametrize(
    "args, expected",
    [
        (["report", "good.sqlite", "-o", "good.sqlite"], "-o good.sqlite is good.sqlite, which"),
        (["export", "good.sqlite", "--csv", "good.sqlite"], "--csv good.sqlite is good.sqlite"),
        (["compare", "good.sqlite", "b.sqlite", "--html", "b.sqlite"], "--html b.sqlite is b"),
    ],
    ids=["report", "export", "compare"],
)
def test_an_output_never_replaces_the_store_it_reads(here, capsys, args, expected):
    make_store(here / "b.sqlite")
    refused(capsys, here, args, expected)


def test_collect_names_a_damaged_session_file(here, capsys):
    (here / "session" / "campaign.json").write_text("{not json")
    refused(
        capsys, here, ["collect", "session", "--db", "good.sqlite"], "campaign.json is damaged ("
    )


@pytest.mark.parametrize("flag", ["--csv", "--parquet"])
def test_export_never_replaces_someone_elses_file(here, capsys, flag):
    (here / "mine").write_text("name,value\nmine,1\n")
    refused(
        capsys,
        here,
        ["export", "good.sqlite", flag, "mine"],
        f"{flag} mine exists and was not written by iokernels-campaign export",
    )


@pytest.mark.parametrize(
    "script, expected",
    [
        ("echo not json", "printed no JSON"),
        ("echo '{\"kernels\": 5}'", "its JSON lacks"),
        ("exit 3", "exited 3"),
    ],
    ids=["not-json", "other-json", "fails"],
)
def test_a_binary_that_is_not_iokernels(here, capsys, script, expected):
    fake = here / "fake-iokernels"
    fake.write_text(f"#!/bin/sh\n{script}\n")
    fake.chmod(0o755)
    refused(capsys, here, ["run", "c.toml", "--bin", fake, "--db", "n.sqlite"], expected)
