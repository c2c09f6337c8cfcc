# SPDX-License-Identifier: BSD-3-Clause
"""The report says what the records say (issue 51 item 6): a read from the
page cache by the binary's own threshold (thresholds.from_storage_fraction,
in the binary's words), and every cell and headline of an oversubscribed
run (environment.oversubscribed) names it: "oversubscribed (R ranks on C
cores)"."""

import re

from conftest import cli, report_of, run_row
from iokernels_campaign.report import tables
from iokernels_campaign.report.aggregate import summarize
from test_report_pages import _store_with

OVER = "oversubscribed (4 ranks on 2 cores)"


def test_the_terminal_says_the_records_threshold_for_a_cached_read():
    runs = [
        run_row(1, "btio", "mpiio", "", 1, "read", 100.0, read_from_storage=0)
        | {"from_storage_fraction": 0.9},
        run_row(2, "btio", "mpiio", "", 1, "write", 100.0) | {"from_storage_fraction": 0.9},
    ]
    text = tables.short_table(summarize(runs))
    assert "* read served from the page cache (OS read_bytes under 90% of the bytes read)" in text
    assert "half" not in text
    # a record from before the threshold was recorded: what the binary used then
    old = [runs[0] | {"from_storage_fraction": 0.5}, runs[1]]
    assert "(OS read_bytes under 50% of the bytes read)" in tables.short_table(summarize(old))


def test_the_page_says_the_records_threshold(tiny, tmp_path):
    d = tiny[0]
    db = _store_with(
        tiny,
        tmp_path,
        "cached.sqlite",
        "UPDATE runs SET read_from_storage = 0 WHERE backend='mpiio' AND mode='read'",
    )
    page = report_of(d, db, tmp_path / "cached.html")
    assert "half the" not in page
    assert "OS read_bytes under 90% of the bytes read" in page
    # the binary's words (src/core/measure/cache.c): "page cache: OS read_bytes ... (under 90%)"


def test_every_cell_and_headline_of_an_oversubscribed_run_says_so(tiny, tmp_path):
    d = tiny[0]
    nodes = '[{"host": "vm", "ranks": 4, "usable_cores": 2}]'
    db = _store_with(
        tiny,
        tmp_path,
        "over.sqlite",
        "UPDATE runs SET record = json_set(record, '$.environment.oversubscribed', json('true'), "
        f"'$.environment.node_cores', json('{nodes}')) "
        "WHERE backend = 'mpiio' AND status = 'ok' AND label = 'btio'",
    )
    page = report_of(d, db, tmp_path / "over.html")
    summary = page[page.index('<table class="summary">') :]
    summary = summary[: summary.index("</table>")]
    row = summary[summary.index("<tr><td>mpiio</td>") :]
    cells = re.findall(r"<td class=\"num[^>]*>(.*?)</td>", row[: row.index("</tr>")])
    assert len(cells) == 4 and all(OVER in c for c in cells), cells
    kernel = page[page.index('<section class="kernel" id="kernel-1">') :]
    answers = re.findall(r'<p class="answer">(.*?)</p>', kernel[: kernel.index("</section>")])
    assert answers and all(OVER in a for a in answers), answers
    assert f"Runs <b>{OVER}</b>" in page  # the page's headline
    cases = page[page.index('<table id="cases">') :]
    cases = cases[: cases.index("</table>")]
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", cases, re.S)[1:]:
        is_mpiio = "<td>mpiio</td>" in tr and "<td>btio</td>" in tr
        assert (OVER in tr) is is_mpiio, tr
    # the terminal: list's status cells, only the oversubscribed runs'
    listed = cli("list", db, cwd=d)
    assert listed.returncode == 0, listed.stderr
    for line in listed.stdout.splitlines()[2:]:
        if re.search(r"\bbtio\s+mpiio\b", line) and " ok" in line:
            assert OVER in line, line
        elif " ok" in line:
            assert OVER not in line, line


def test_the_terminal_tables_name_an_oversubscribed_case():
    runs = [
        run_row(1, "btio", "mpiio", "", 4, "write", 10.0) | {"oversubscribed": OVER},
        run_row(2, "btio", "hdf5", "", 4, "write", 10.0),
    ]
    s = summarize(runs)
    short = tables.short_table(s).splitlines()
    assert [OVER in x for x in short[2:]] == [True, False], short
    cases = tables.cases_table(s).splitlines()
    assert [OVER in x for x in cases[2:]] == [True, False], cases
