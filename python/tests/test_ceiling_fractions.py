# SPDX-License-Identifier: BSD-3-Clause
"""One ceiling per case in the report: every fraction printed is the
shown median over the shown ceiling to 2 decimals, and every backend of a
kernel, rank count and durability (or read kind) is measured against the
same ceiling. The checks read the HTML, and fail on a page built wrong."""

import html
import re

from conftest import report_of

CELL = re.compile(
    r'<td class="num[^"]*" title="([^"]*)" data-median="([^"]*)" data-ceiling="([^"]*)">([^<]*)<'
)
CASE = re.compile(r"runs of (.+?) on (\d+) ranks \(([^)]*)\)")


def summary_cells(page):
    """(kernel, ranks, op, kind, median, ceiling, printed fraction) of every
    fraction cell of the per-kernel tables."""
    out = []
    for title, median, ceiling, text in CELL.findall(page):
        title = html.unescape(title)
        kernel, ranks, kind = CASE.search(title).groups()
        op = "write" if " write " in f" {title}" else "read"
        out.append((kernel, int(ranks), op, kind, median, ceiling, text))
    return out


def cases_rows(page):
    """The 'every case' table as dicts, header -> cell text."""
    table = re.search(r'<table id="cases">(.*?)</table>', page, re.S).group(1)
    trs = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)
    heads = [html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", trs[0])]
    cells = [[html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)] for tr in trs[1:]]
    return [dict(zip(heads, c, strict=True)) for c in cells]


def bad_fractions(page):
    """Every place where the printed fraction is not the shown median over
    the shown ceiling (to 2 decimals), or a case has more than one ceiling."""
    bad, ceilings = [], {}
    for kernel, ranks, op, kind, median, ceiling, text in summary_cells(page):
        want = f"{float(median) / float(ceiling):.2f}"
        if text.rstrip("!") != want:
            bad.append(f"{kernel} {ranks} {op}: printed {text}, {median}/{ceiling} = {want}")
        ceilings.setdefault((kernel, ranks, op, kind), set()).add(ceiling)
    for r in cases_rows(page):
        if r["ceiling MiB/s"] in ("-", "") or r["MiB/s"] in ("-", ""):
            continue
        want = f"{float(r['MiB/s']) / float(r['ceiling MiB/s']):.2f}"
        if r["fraction of ceiling"].rstrip("!") != want:
            bad.append(f"case {r}: printed {r['fraction of ceiling']}, want {want}")
        op = "read" if r["mode"] == "read" else "write"
        kind = r["read from"] if op == "read" else r["fsync"]
        ceilings.setdefault((r["kernel"], int(r["ranks"]), op, kind, "cases"), set()).add(
            r["ceiling MiB/s"]
        )
    bad += [f"{k}: {len(v)} ceilings {sorted(v)}" for k, v in ceilings.items() if len(v) > 1]
    return bad


def test_every_fraction_is_the_shown_median_over_the_one_ceiling(tiny, tmp_path):
    d, db, _ = tiny
    page = tmp_path / "r.html"
    text = report_of(d, db, page)
    cells = summary_cells(text)
    # null and mpiio both probed the btio 1-rank write: their fractions exist
    assert {(c[0], c[1], c[2]) for c in cells} >= {("btio", 1, "write")}, cells
    assert len(cases_rows(text)) >= 2
    assert bad_fractions(text) == []


def test_the_check_fails_on_a_page_built_wrong(tiny, tmp_path):
    """The same check on pages made wrong: a fraction that is not the shown
    median over the shown ceiling, and a second ceiling for one case."""
    d, db, _ = tiny
    page = tmp_path / "r.html"
    text = report_of(d, db, page)
    (first, *_) = CELL.finditer(text)
    wrong = text[: first.start(4)] + "9.99" + text[first.end(4) :]
    assert any("printed 9.99" in b for b in bad_fractions(wrong))
    # the 'every case' table: one backend's row given another ceiling (what
    # a probe per backend run printed before)
    ceiling = first.group(3)
    at = text.index(f'<td class="num">{ceiling}</td>', text.index('<table id="cases">'))
    cell = f'<td class="num">{float(ceiling) * 2:.1f}</td>'
    two = text[:at] + cell + text[at + len(f'<td class="num">{ceiling}</td>') :]
    assert any("2 ceilings" in b for b in bad_fractions(two)), bad_fractions(two)
