# SPDX-License-Identifier: BSD-3-Clause
"""The interference matrix of the stored mixes (mixcase.py, `iokernels
mix`): rows the victim, columns the aggressor (the other members of its
mix, with their start offsets), each cell the victim's slowdown: its time
together over its time alone, the Hodges-Lehmann ratio with its exact 95%
interval (verdict.py, as every verdict of the report). A cell is "slower"
or "faster" only when the test says so; a tie is greyed; with fewer than 4
runs a side it is "untested". Runs of one victim against one aggressor in
several stored mixes are pooled."""

import html
from dataclasses import dataclass

from ..spec import rules
from . import verdict

CALLS = {"higher": "slower", "lower": "faster", "tied": "tied", "untested": "untested"}


@dataclass
class Cell:
    victim: str
    aggressor: str
    ratio: verdict.Ratio
    # a victim whose backend moves no data (null) is a control aggressor:
    # its own times are the suite's overhead, their ratio no interference
    judged: bool = True

    @property
    def call(self):
        return CALLS[self.ratio.call] if self.judged else "not judged"

    def text(self):
        r = self.ratio
        if r.low is None:
            return f"{r.ratio:.2f}"
        return f"{r.hl:.2f} ({r.low:.2f}&ndash;{r.high:.2f})"


def _aggressor(rows, victim):
    """The other members of one mix, in rank order, with their starts."""
    names = []
    for member in sorted({r["member"] for r in rows if r["member"] != victim}):
        r = next(x for x in rows if x["member"] == member)
        start = r["start_seconds"] or 0
        names.append(r["label"] + (f" @{start:g} s" if start else ""))
    return " + ".join(names)


def cells(mix_runs):
    """mix_runs: {run id: rows of store.mix_runs}. The matrix's cells."""
    series = {}  # (victim, aggressor) -> (alone seconds, together seconds)
    no_data = set()  # victims on a backend that moves no data
    for rows in mix_runs.values():
        for member in sorted({r["member"] for r in rows}):
            mine = [r for r in rows if r["member"] == member]
            key = (mine[0]["label"], _aggressor(rows, member))
            if rules.moves_no_data(mine[0].get("backend")):
                no_data.add(key[0])
            alone, together = series.setdefault(key, ([], []))
            alone += [r["seconds"] for r in mine if r["mode"] == "alone"]
            together += [r["seconds"] for r in mine if r["mode"] == "together"]
    out = []
    for (v, a), (alone, together) in series.items():
        r = verdict.ratio(together, alone)
        if r is not None:
            out.append(Cell(v, a, r, judged=v not in no_data))
    return out


def html_table(cs):
    """The matrix as one HTML table ("" when no mix is stored)."""
    if not cs:
        return ""
    victims = sorted({c.victim for c in cs})
    aggressors = sorted({c.aggressor for c in cs})
    at = {(c.victim, c.aggressor): c for c in cs}
    head = "".join(f"<th>{html.escape(a)}</th>" for a in aggressors)
    lines = [
        '<table class="interference" id="interference">',
        f"<tr><th>victim \\ aggressor</th>{head}</tr>",
    ]
    for v in victims:
        tds = []
        for a in aggressors:
            c = at.get((v, a))
            if c is None:
                tds.append('<td class="none">&ndash;</td>')
                continue
            if not c.judged:
                tds.append(
                    '<td class="none" data-call="not judged" title="its backend moves no data: '
                    "a control aggressor, its times the suite's overhead\">not judged</td>"
                )
                continue
            title = html.escape(f"{v} with {a}: together / alone = {c.ratio.text()}")
            tds.append(
                f'<td class="num {c.call}" title="{title}" data-call="{c.call}">'
                f"{c.text()}<br><span class='range'>{c.call}</span></td>"
            )
        lines.append(f"<tr><th>{html.escape(v)}</th>{''.join(tds)}</tr>")
    lines.append("</table>")
    return "\n".join(lines)
