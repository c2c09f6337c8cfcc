# SPDX-License-Identifier: BSD-3-Clause
"""The report question first (per-kernel summary tables before every case),
figures within 1600 px, cached reads marked in the summary, the compare page's
better / worse marks, and the export: one row per pass with the sweep columns."""

import base64
import csv
import re
import shutil
import sqlite3
import struct
import subprocess
from html.parser import HTMLParser

from conftest import cli, report_of
from test_report_screenshot import chromium

MAX_PX = 1600


def png_size(data):
    """(width, height) from a PNG's IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


class Order(HTMLParser):
    """Start tags in document order, as (tag, attributes)."""

    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def order(page):
    p = Order()
    p.feed(page)
    return p.tags


def first(tags, pred):
    return next(i for i, (t, a) in enumerate(tags) if pred(t, a))


def _summary_first(page):
    tags = order(page)
    summary = first(tags, lambda t, a: t == "table" and a.get("class") == "summary")
    details = first(tags, lambda t, a: t == "details" and a.get("id") == "all-cases")
    cases = first(tags, lambda t, a: t == "table" and a.get("id") == "cases")
    null = first(tags, lambda t, a: t == "table" and a.get("id") == "null")
    assert summary < null < details < cases
    # every case is the page's last section
    assert not any(t == "table" and a.get("class") == "summary" for t, a in tags[details:])


def test_summary_tables_come_first_and_figures_fit(tiny, tmp_path):
    d, db, _ = tiny
    page = tmp_path / "r.html"
    html = report_of(d, db, page)
    _summary_first(html)
    # the btio summary: mpiio at 1 rank, the null backend not in it
    summary = html[html.index('<table class="summary">') : html.index("</table>")]
    assert "<td>mpiio</td>" in summary and "null" not in summary
    assert "Fastest write at 1 rank: <b>mpiio</b>" in html
    # the null backend apart, with its times
    null = html[html.index('<table id="null">') :]
    assert "<td>null</td>" in null[: null.index("</table>")]
    # every figure, on disk and in the page, at most 1600 px wide
    pngs = sorted((tmp_path / "r-plots").glob("*.png"))
    assert [x.name for x in pngs] == ["kernel-1.png", "memory_per_rank-1.png", "phase_times-1.png"]
    for x in pngs:
        assert png_size(x.read_bytes())[0] <= MAX_PX, x.name
    embedded = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(embedded) == 3
    for data in embedded:
        assert png_size(base64.b64decode(data))[0] <= MAX_PX
    if chromium():  # the DOM as the browser built it
        cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu"]
        cmd += [f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()]
        dom = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert dom.returncode == 0, dom.stderr
        _summary_first(dom.stdout)


def _store_with(tiny, tmp_path, name, sql):
    d, db, _ = tiny
    copy = tmp_path / name
    shutil.copy(db, copy)
    con = sqlite3.connect(copy)
    con.execute(sql)
    con.commit()
    con.close()
    return copy


def _read_cell(html):
    """The summary's read cell of mpiio at 1 rank (its third cell)."""
    summary = html[html.index('<table class="summary">') :]
    row = summary[summary.index("<tr><td>mpiio</td>") :]
    cells = re.findall(r"<td ([^>]*)>(.*?)</td>", row[: row.index("</tr>")])
    return cells[2]


def test_summary_marks_cached_reads(tiny, tmp_path):
    d = tiny[0]
    for value, marked in ((0, True), (1, False)):
        db = _store_with(
            tiny,
            tmp_path,
            f"c{value}.sqlite",
            f"UPDATE runs SET read_from_storage = {value} WHERE backend='mpiio' AND mode='read'",
        )
        page = tmp_path / f"c{value}.html"
        attrs, text = _read_cell(report_of(d, db, page))
        assert ("cached" in attrs) is marked, attrs
        assert ("\u2020" in text) is marked, text
        assert ("page cache" in attrs) is marked


def _four_times(db):
    """Every run of a store copy stored four times (its iterations), so that
    compare has 4 runs a side, the fewest its exact test calls on."""
    con = sqlite3.connect(db)
    cols = [r[1] for r in con.execute("PRAGMA table_info(runs)") if r[1] not in ("id", "iteration")]
    names = ", ".join(cols)
    last = con.execute("SELECT max(id) FROM runs").fetchone()[0]
    for it in (1, 2, 3):
        con.execute(
            f"INSERT INTO runs ({names}, iteration) SELECT {names}, iteration + {it} "
            f"FROM runs WHERE id <= {last}"
        )
    con.commit()
    con.close()
    return db


def test_compare_page_marks_better_and_worse(tiny, tmp_path):
    d, db, _ = tiny
    a = _four_times(_store_with(tiny, tmp_path, "a.sqlite", "SELECT 1"))
    b = _four_times(
        _store_with(
            tiny,
            tmp_path,
            "b.sqlite",
            "UPDATE runs SET write_bandwidth = write_bandwidth / 2, "
            "read_bandwidth = read_bandwidth * 3 WHERE backend = 'mpiio'",
        )
    )
    page = tmp_path / "cmp.html"
    p = cli("compare", a, b, "--html", page, cwd=d)
    assert p.returncode == 0, p.stderr
    html = page.read_text()
    rows = re.findall(r'<tr class="(\w+)"><td>btio</td><td>(\w+)</td>.*?<td>(\w+)', html, re.S)
    assert ("worse", "mpiio", "write") in rows and ("better", "mpiio", "read") in rows
    assert ("same", "null", "write") in rows
    assert "\u25bc worse" in html and "\u25b2 better" in html
    assert "1 better, 1 worse, 2 the same, 0 untested" in " ".join(html.split())
    # one run a side: no call, whatever the ratio
    one = _store_with(tiny, tmp_path, "one.sqlite", "UPDATE runs SET write_bandwidth = 1")
    p = cli("compare", db, one, "--html", tmp_path / "one.html", cwd=d)
    assert p.returncode == 0, p.stderr
    one_page = " ".join((tmp_path / "one.html").read_text().split())
    assert "0 better, 0 worse, 0 the same, 4 untested" in one_page
    calls = [x.split()[-1] for x in p.stdout.splitlines() if x.startswith("btio ")]
    assert calls == ["untested"] * 4, p.stdout


def test_compare_takes_json_lines_and_stores_in_any_mix(tiny, tmp_path):
    """The tiny campaign's mpiio write, run again by hand with --json: the
    record matches the store's case (what ran, backend, ranks, mode)."""
    d, db, _ = tiny
    import json
    import os

    from conftest import BIN

    con = sqlite3.connect(db)
    rec = json.loads(
        con.execute(
            "SELECT record FROM runs WHERE backend = 'mpiio' AND mode = 'write' "
            "AND status = 'ok' AND ranks = 1"
        ).fetchone()[0]
    )
    con.close()
    argv = [a for a in rec["argv"]]
    jsonl = tmp_path / "mine.jsonl"
    work = tmp_path / "w"
    work.mkdir()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for _ in range(2):  # two records of 2 iterations: 4 samples, each iteration one
        rest, skip = [], False
        for x in argv:  # its own --json and --dir, the rest as the campaign ran it
            if skip:
                skip = False
                continue
            if x in ("--json", "--dir"):
                skip = True
                continue
            rest.append(x)
        cmd = [str(BIN), rec["kernel"], *rest, "--iterations", "2"]
        cmd += ["--json", str(jsonl), "--dir", str(work)]
        p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        for f in work.iterdir():
            f.unlink()
    for a, b in ((db, jsonl), (jsonl, db), (jsonl, jsonl)):
        p = cli("compare", a, b, cwd=d)
        assert p.returncode == 0, p.stderr
        line = next(x for x in p.stdout.splitlines() if x.startswith("btio mpiio n1"))
        assert "write" in line
    p = cli("compare", jsonl, jsonl, cwd=d)
    line = next(x for x in p.stdout.splitlines() if x.startswith("btio mpiio n1"))
    assert "1 cases in both" in p.stdout and line.split()[-2:] == ["4/4", "same"], p.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kernel": "btio"}\n')
    p = cli("compare", bad, db, cwd=d)
    assert p.returncode == 2 and "bad.jsonl:1: " in p.stderr and "Traceback" not in p.stderr


SWEPT = """
[campaign]
name = "swept"
ranks = [1]
modes = ["write", "read"]
timeout = 120

[[kernel]]
name = "btio"
backends = ["null"]
options = { grid = "8,8,8", dumps = 2 }
sweep = { independent = [false, true] }
"""


def test_export_one_row_per_pass_with_sweep_columns(tmp_path):
    (tmp_path / "s.toml").write_text(SWEPT)
    p = cli("run", "s.toml", "--db", "s.sqlite", "--out", "out", "--no-report", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    p = cli("export", "s.sqlite", "--csv", "x.csv", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader((tmp_path / "x.csv").open()))
    con = sqlite3.connect(tmp_path / "s.sqlite")
    passes = con.execute(
        "SELECT p.run_id, p.idx, p.op, r.variant FROM passes p JOIN runs r ON r.id = p.run_id"
    ).fetchall()
    assert len(passes) >= 4 and len(rows) == len(passes)
    assert sorted((int(r["run_id"]), int(r["pass"]), r["op"]) for r in rows) == sorted(
        (a, b, c) for a, b, c, _ in passes
    )
    want = {a: v for a, _, _, v in passes}
    assert {r["independent"] for r in rows} == {"off", "on"}
    for r in rows:
        assert want[int(r["run_id"])] == f"independent={r['independent']}"
        assert r["series"] == ("null coll" if r["independent"] == "off" else "null indep")
        assert r["kernel"] == "btio" and r["ranks"] == "1" and r["mode"] in ("write", "read")
        assert float(r["phase_requests_seconds"]) >= 0
    # Parquet (pyarrow, in requirements.txt): the same rows and columns as the CSV
    import pandas as pd

    p = cli("export", "s.sqlite", "--parquet", "x.parquet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    pq = pd.read_parquet(tmp_path / "x.parquet")
    flat = pd.read_csv(tmp_path / "x.csv")
    assert list(pq.columns) == list(flat.columns)
    assert len(pq) == len(flat) == len(passes)
    assert sorted(pq["run_id"].astype(int)) == sorted(flat["run_id"].astype(int))
    assert pq["phase_requests_seconds"].astype(float).ge(0).all()


def test_a_run_above_its_ceiling_is_flagged_everywhere(tiny, tmp_path):
    """A write whose record says it ran above its ceiling: "!" beside its
    fraction and the record's reason, in the HTML report and the terminal's
    tables; the others unmarked."""
    d = tiny[0]
    reason = "buffered: without --fsync (words of a test)"
    db = _store_with(
        tiny,
        tmp_path,
        "above.sqlite",
        "UPDATE runs SET ceiling_fraction = 1.5, record = json_set(record, "
        "'$.passes[0].ceiling.above', json('true'), '$.passes[0].ceiling.fraction', 1.5, "
        f"'$.passes[0].ceiling.reason', '{reason}') "
        "WHERE backend = 'mpiio' AND mode = 'write' AND status = 'ok'",
    )
    page = tmp_path / "above.html"
    text = report_of(d, db, page)
    # the report's fraction is the shown median over the case's one ceiling;
    # the run's own flag still marks it, with the record's reason
    assert re.search(r">\d+\.\d\d!<", text) and "write 1.50x its ceiling: " + reason in text
    listed = cli("list", db, cwd=d)
    assert listed.returncode == 0, listed.stderr
    flagged = [x for x in listed.stdout.splitlines() if "1.50!" in x]
    assert flagged and all("mpiio" in x and "write" in x for x in flagged)
    # a fraction under 1 stays unmarked
    assert not re.search(r"\b0\.\d\d!", listed.stdout)
