# SPDX-License-Identifier: BSD-3-Clause
"""Cached reads named in the store and in every table and plot of the report:
a read is "from storage" only when the OS read_bytes reach half the bytes
read (the record's from_storage); otherwise it is marked "page cache"."""

import json
import shutil
import sqlite3

from conftest import cli, report_of, rows, run_row
from iokernels_campaign.report import plots, tables
from iokernels_campaign.report.aggregate import CaseSummary, summarize


def test_store_columns_follow_the_record(tiny):
    _, db, _ = tiny
    ok = rows(db, "SELECT * FROM runs WHERE status = 'ok'")
    for r in ok:
        rec = json.loads(r["record"])
        want = rec["summary"]["read_from_storage"]
        assert r["read_from_storage"] == (None if want is None else int(want)), r["backend"]
        stored = rows(db, "SELECT * FROM passes WHERE run_id = ? ORDER BY idx", r["id"])
        for p, row in zip(rec["passes"], stored, strict=True):
            assert row["from_storage"] == (int(p["from_storage"]) if "from_storage" in p else None)
            assert row["from_storage_reason"] == p.get("from_storage_reason")
    null_read = next(r for r in ok if r["backend"] == "null" and r["mode"] == "read")
    assert null_read["read_from_storage"] is None  # moves no data: no source
    mpiio_read = next(r for r in ok if r["backend"] == "mpiio" and r["mode"] == "read")
    assert mpiio_read["read_from_storage"] in (0, 1)
    reason = rows(db, "SELECT from_storage_reason FROM passes WHERE run_id = ?", mpiio_read["id"])
    assert reason[0]["from_storage_reason"].split(":")[0] in ("storage", "page cache")


def _marked_store(tiny, tmp_path, value):
    """A copy of the tiny store whose mpiio read says `value` (0 or 1)."""
    d, db, _ = tiny
    copy = tmp_path / f"s{value}.sqlite"
    shutil.copy(db, copy)
    con = sqlite3.connect(copy)
    con.execute(
        "UPDATE runs SET read_from_storage = ? WHERE backend = 'mpiio' AND mode = 'read'", (value,)
    )
    con.commit()
    con.close()
    return d, copy


def test_report_and_list_mark_page_cache_reads(tiny, tmp_path):
    d, db = _marked_store(tiny, tmp_path, 0)
    out = tmp_path / "cached.html"
    page = report_of(d, db, out)
    want = "0 of 1 read cases came from storage; <b>1 from the page cache</b>"
    rule = "(OS read_bytes under 90% of the bytes read)"  # the record's threshold, its words
    assert f"Reads (the null backend aside): {want} {rule}: btio mpiio n1." in page
    assert page.count('<tr class="cached">') == 1 and "<td>PAGE CACHE</td>" in page
    p = cli("list", db, "--backend", "mpiio", cwd=d)  # its read: ok, page cache
    line = next(x for x in p.stdout.splitlines() if " read " in x and " ok " in x)
    assert "PAGE CACHE" in line
    # the same store with the read from storage: no mark anywhere
    d, db = _marked_store(tiny, tmp_path, 1)
    out = tmp_path / "stored.html"
    page = report_of(d, db, out)
    assert "Reads (the null backend aside): 1 of 1 read cases came from storage." in page
    assert '<tr class="cached">' not in page and "<td>storage</td>" in page


def summaries(cached):
    runs = []
    for i, (backend, mode, ranks) in enumerate(
        [("mpiio", "write", 1), ("mpiio", "read", 1), ("mpiio", "write", 4), ("mpiio", "read", 4)]
    ):
        bw = 100 if mode == "write" else 900
        storage = (0 if cached else 1) if mode == "read" else None
        runs.append(run_row(i, "btio", backend, "", ranks, mode, bw, read_from_storage=storage))
    return summarize(runs, {i: {"post": (0.1, True)} for i in range(4)})


def test_summaries_and_tables_name_the_source():
    s = summaries(cached=True)
    reads = [x for x in s if x.mode == "read"]
    assert all(x.from_storage is False and x.cached_read for x in reads)
    assert "PAGE CACHE" in tables.cases_table(s)
    short = tables.short_table(s)
    assert "900.0*" in short and "* read served from the page cache" in short
    s = summaries(cached=False)
    assert all(x.from_storage is True and not x.cached_read for x in s if x.mode == "read")
    assert "PAGE CACHE" not in tables.cases_table(s) and "*" not in tables.short_table(s)


def _figures(monkeypatch, s, fn, tmp_path):
    kept = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: kept.append(fig) or path)
    assert fn(s, tmp_path / "x.png")
    return kept[0]


def test_plots_mark_page_cache_reads(monkeypatch, tmp_path):
    for cached in (True, False):
        s = summaries(cached)
        fig = _figures(monkeypatch, s, plots.bandwidth_by_backend, tmp_path)
        ax = fig.axes[0]
        hatched = [b for b in ax.patches if b.get_hatch() == "xx" and b.get_height() > 0]
        assert len(hatched) == (1 if cached else 0)  # the read bar at 4 ranks
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert ("page cache" in labels) is cached
        fig = _figures(monkeypatch, s, plots.bandwidth_vs_ranks, tmp_path)
        hollow = [
            line for a in fig.axes for line in a.lines if line.get_markerfacecolor() == "white"
        ]
        assert len(hollow) == (1 if cached else 0)  # the read line's two points
        assert ("page cache" in (fig._suptitle.get_text() if fig._suptitle else "")) is cached
        for fn in (plots.phase_times, plots.memory_per_rank):
            fig = _figures(monkeypatch, s, fn, tmp_path)
            names = [t.get_text() for t in fig.axes[0].get_yticklabels()]
            assert sum("[page cache]" in n for n in names) == (2 if cached else 0), names
    # a case that is not a read is never marked
    w = CaseSummary("h", "btio", "btio", "mpiio", 1, "", "write", from_storage=False)
    assert not w.cached_read
