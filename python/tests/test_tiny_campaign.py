# SPDX-License-Identifier: BSD-3-Clause
"""A tiny real campaign (btio on null and mpiio, write then read, once as it
should run and once naming a hints file that is not there) into a temporary
store, then list, report and compare on it."""

import json
import re
import shutil
import sqlite3

from conftest import cli, report_of, rows

GRID_BYTES = 16**3 * 5 * 2 * 8  # grid, five doubles per point, 2 dumps
MIB = 1048576.0


def test_run_stores_results_and_failures(tiny):
    d, db, p = tiny
    assert p.returncode == 1, p.stderr  # some runs failed (a bad IOK_ variable), stored as such
    lines = [x for x in p.stdout.splitlines() if x.startswith("[")]
    # in rounds, in the order the seed drew (test_interleave.py checks the order itself)
    assert len(lines) == 8 and re.match(r"\[1/8\] btio(-badenv)? +(null|mpiio) +n1 ", lines[0])
    assert all(" ok " in x for x in lines if "] btio " in x)
    assert "FAILED (exit 2): iokernels: error: IOK_AGREE_SECONDS=never" in p.stdout
    runs = rows(db, "SELECT * FROM runs ORDER BY id")
    assert len(runs) == 8
    ok = [r for r in runs if r["status"] == "ok"]
    assert {(r["backend"], r["mode"]) for r in ok} == {
        ("null", "write"),
        ("null", "read"),
        ("mpiio", "write"),
        ("mpiio", "read"),
    }
    assert all(r["ranks"] == 1 and r["nprocs"] == 1 for r in ok)
    for r in ok:
        rec = json.loads(r["record"])
        assert r["write_bytes"] == rec["summary"]["write_bytes"]
        # the store keeps bytes/s, the record MiB/s
        assert r["write_bandwidth"] == rec["summary"]["write_bandwidth_mib_s"] * MIB
        assert r["read_bandwidth"] == rec["summary"]["read_bandwidth_mib_s"] * MIB
        assert r["peak_rss_max"] == rec["summary"]["peak_rss_max_bytes"] > 0
        assert r["host"] == rec["environment"]["hostnames"][0] and r["nodes"] == 1
        assert (r["write_bytes"] if r["mode"] == "write" else r["read_bytes"]) == GRID_BYTES
    mw = next(r for r in ok if (r["backend"], r["mode"]) == ("mpiio", "write"))
    assert mw["verify_ok"] == 1 and mw["verify_checked"] == GRID_BYTES // 8
    rec = json.loads(mw["record"])
    assert mw["ceiling_bandwidth"] == rec["passes"][0]["ceiling"]["write_bandwidth_mib_s"] * MIB
    assert mw["ceiling_bandwidth"] > 0
    assert abs(mw["ceiling_fraction"] - rec["passes"][0]["ceiling"]["fraction"]) < 1e-9
    # a read runs in the write's directory and finds its file
    mr = next(r for r in ok if (r["backend"], r["mode"]) == ("mpiio", "read"))
    assert mr["case_dir"] == mw["case_dir"] and mr["verify_ok"] == 1
    passes = rows(db, "SELECT * FROM passes WHERE run_id = ?", mw["id"])
    assert [x["op"] for x in passes] == ["write", "verify"]
    assert passes[0]["bytes"] == GRID_BYTES
    phases = rows(db, "SELECT * FROM phases WHERE run_id = ? AND pass_idx = 0", mw["id"])
    assert {x["phase"] for x in phases} == set(rec["passes"][0]["phases"])


def test_failed_runs_are_never_results(tiny):
    _, db, _ = tiny
    failed = rows(db, "SELECT * FROM runs WHERE status = 'failed' ORDER BY id")
    assert len(failed) == 4 and all(r["label"] == "btio-badenv" for r in failed)
    for r in failed:
        assert r["write_bandwidth"] is None and r["nprocs"] is None
        assert rows(db, "SELECT * FROM passes WHERE run_id = ?", r["id"]) == []
        if r["mode"] == "write":
            assert r["exit_code"] == 2
            assert r["error"] == (
                "iokernels: error: IOK_AGREE_SECONDS=never: expected whole seconds from 1 to "
                "86400 (e.g. 30 or 30s; unset: 10)"
            )
        else:
            assert r["exit_code"] is None
            assert r["error"] == "not run: the write step of this iteration failed"


def test_each_case_keeps_its_directory(tiny):
    _, db, _ = tiny
    runs = rows(db, "SELECT * FROM runs")
    dirs = {r["case_dir"] for r in runs}
    assert len(dirs) == 4  # one per case (one iteration each)
    mw = next(r for r in runs if r["backend"] == "mpiio" and r["label"] == "btio")
    from pathlib import Path

    d = Path(mw["case_dir"])
    for f in (
        "write.stdout",
        "write.stderr",
        "write.jsonl",
        "write.status.json",
        "read.stdout",
        "read.jsonl",
        "btio.mpi",
    ):
        assert (d / f).exists(), f
    assert (d / "btio.mpi").stat().st_size == GRID_BYTES
    assert "BT-IO Benchmark" in (d / "write.stdout").read_text()
    case = json.loads((d.parent / "case.json").read_text())
    assert case["backend"] == "mpiio" and case["ranks"] == 1
    bad = next(r for r in runs if r["label"] == "btio-badenv" and r["mode"] == "write")
    assert "IOK_AGREE_SECONDS=never" in (Path(bad["case_dir"]) / "write.stderr").read_text()


def test_list_filters(tiny):
    d, db, _ = tiny
    p = cli("list", db, cwd=d)
    assert p.returncode == 0, p.stderr
    body = [x for x in p.stdout.splitlines() if x[:1].isdigit() or x.strip()[:1].isdigit()]
    assert len([x for x in body if " btio " in x or " btio-badenv " in x]) == 8
    p = cli("list", db, "--backend", "mpiio", "--failed", cwd=d)
    table = [x for x in p.stdout.splitlines() if " btio-badenv " in x]
    assert len(table) == 2 and all("mpiio" in x and "FAILED" in x for x in table)
    assert "IOK_AGREE_SECONDS=never" in p.stdout
    p = cli("list", db, "--kernel", "e3sm", cwd=d)
    assert p.stdout.strip() == "no runs match"
    p = cli("list", d / "missing.sqlite", cwd=d)
    assert p.returncode == 2 and "no results store at" in p.stderr


def test_report_is_one_self_contained_page(tiny, tmp_path):
    d, db, _ = tiny
    out = tmp_path / "r" / "report.html"
    page = report_of(d, db, out)
    assert page.count('src="data:image/png;base64,') == 3
    assert 'src="http' not in page and "<link" not in page and "<script" not in page
    pngs = sorted((tmp_path / "r" / "report-plots").glob("*.png"))
    assert [x.name for x in pngs] == ["kernel-1.png", "memory_per_rank-1.png", "phase_times-1.png"]
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    # the ceiling of the mpiio write, in MiB/s with one decimal, as in the table
    ceil = rows(
        db,
        "SELECT ceiling_bandwidth FROM runs WHERE backend='mpiio' AND status='ok' AND mode='write'",
    )[0]["ceiling_bandwidth"]
    assert f'<td class="num">{ceil / 1048576:.1f}</td>' in page
    assert "IOK_AGREE_SECONDS=never" in page  # in the failed runs
    # the environment table names the MPI-IO layer the records name
    rec = json.loads(
        rows(db, "SELECT record FROM runs WHERE backend='mpiio' AND status='ok'")[0]["record"]
    )
    layer = rec["environment"]["mpiio_layer"]
    want = "ROMIO" if layer is None else layer["io_component"]
    assert "<th>MPI-IO</th>" in page and f"<td>{want}" in page, want
    # the sharedfp components the binary leaves out by default are no choice of the run
    assert "sharedfp=" not in page
    assert "<td>0/1</td>" in page  # the failed cases, no figure
    # a report next to a file it did not write is refused
    mine = tmp_path / "mine.html"
    mine.write_text("<html>someone's page</html>")
    p = cli("report", db, "-o", mine, cwd=d)
    assert p.returncode == 2 and "was not written by iokernels-campaign" in p.stderr
    assert mine.read_text() == "<html>someone's page</html>"
    # its own report it may replace
    assert cli("report", db, "-o", out, cwd=d).returncode == 0


def test_run_wrote_its_report(tiny):
    d, _, p = tiny
    assert (d / "out" / "report.html").exists()
    assert f"report: {d / 'out' / 'report.html'}" in p.stdout


def test_compare(tiny, tmp_path):
    d, db, _ = tiny
    copy = tmp_path / "b.sqlite"
    shutil.copy(db, copy)
    p = cli("compare", db, copy, cwd=d)
    assert p.returncode == 0, p.stderr
    lines = [x for x in p.stdout.splitlines() if x.startswith("btio ")]
    assert len(lines) == 4  # the successful cases
    # B/A, no interval nor p, runs a side, the call: one run a side is no verdict
    assert all(x.split()[-5:] == ["1.00", "-", "-", "1/1", "untested"] for x in lines)
    assert "4 cases in both; 0 only in A, 0 only in B" in p.stdout
    # B runs one case slower: the ratio says so
    con = sqlite3.connect(copy)
    con.execute(
        "UPDATE runs SET write_bandwidth = write_bandwidth / 2 "
        "WHERE backend = 'mpiio' AND mode = 'write'"
    )
    con.commit()
    p = cli("compare", db, copy, cwd=d)
    ratio = [x.split()[-5] for x in p.stdout.splitlines() if x.startswith("btio mpiio n1  write")]
    assert ratio == ["0.50"]
    empty = tmp_path / "empty.sqlite"
    from iokernels_campaign.store.store import Store

    Store(empty).close()
    p = cli("compare", db, empty, cwd=d)
    assert p.returncode == 1 and "0 cases in both; 4 only in A" in p.stdout
