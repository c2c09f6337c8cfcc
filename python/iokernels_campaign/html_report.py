"""One self-contained HTML page (inline CSS, plots embedded as data URIs):
what ran where, a table per case with the ceiling where measured, the plots,
and the failed runs with their error lines. The PNGs are also kept next to
the page, in REPORT-plots/."""

import base64
import html
import time
from pathlib import Path

from . import plots, rules
from .aggregate import mislabelled_phases, summarize
from .tables import MIB, fmt, source

GENERATOR = '<meta name="generator" content="iokernels-campaign">'
MARKER = ".iokernels-campaign"

CSS = """
body { font-family: DejaVu Sans, Arial, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 12px; margin: 8px 0; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; }
th { background: #eef; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.failed td { background: #fdd; } tr.cached td { background: #fff3c4; }
tr.cached td:nth-child(10) { font-weight: bold; color: #a05a00; }
.note { font-size: 12px; color: #555; max-width: 900px; }
img { max-width: 100%; border: 1px solid #ddd; margin: 6px 0 18px; }
"""


class ReportError(Exception):
    """The report would overwrite a file this tool did not write."""


def _claim(html_path):
    """The plots directory next to html_path, after checking that neither it
    nor the page belongs to someone else."""
    if html_path.exists() and GENERATOR not in html_path.read_text(errors="replace")[:2000]:
        raise ReportError(f"{html_path} exists and was not written by iokernels-campaign")
    pdir = html_path.with_name(html_path.stem + "-plots")
    if pdir.exists() and not (pdir / MARKER).exists():
        raise ReportError(f"{pdir} exists and was not made by iokernels-campaign")
    pdir.mkdir(parents=True, exist_ok=True)
    (pdir / MARKER).write_text("plots of the report next to this directory\n")
    return pdir


def _table(headers, rows, numeric=(), row_class=None):
    e = html.escape
    out = ["<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in headers) + "</tr>"]
    for i, row in enumerate(rows):
        cls = f' class="{row_class[i]}"' if row_class and row_class[i] else ""
        cells = "".join(
            f'<td class="num">{e(str(c))}</td>' if h in numeric else f"<td>{e(str(c))}</td>"
            for h, c in zip(headers, row, strict=True)
        )
        out.append(f"<tr{cls}>{cells}</tr>")
    return "\n".join(out + ["</table>"])


def _cases_html(summaries):
    headers = [
        "kernel",
        "backend",
        "variant",
        "ranks",
        "mode",
        "io",
        "api",
        "ok/runs",
        "MiB/s",
        "read from",
        "ceiling MiB/s",
        "fraction of ceiling",
        "peak MiB/rank min/avg/max",
        "MiB moved",
        "verified",
        "fsync",
    ]
    rows, classes = [], []
    for s in summaries:
        rss = "/".join(fmt(v, ".1f", MIB) for v in (s.rss_min, s.rss_avg, s.rss_max))
        rows.append(
            [
                s.label,
                s.backend,
                s.variant or "",
                s.ranks,
                s.mode,
                s.io or "-",
                s.api or "-",
                f"{s.ok}/{s.runs}",
                fmt(s.bandwidth, ".1f", MIB),
                source(s.from_storage, s.mode),
                fmt(s.ceiling_bw, ".1f", MIB),
                fmt(s.ceiling_fraction, ".2f"),
                rss if s.ok else "-",
                fmt(s.bytes, ".2f", MIB),
                {True: "yes", False: "NO", None: "-"}[s.verified],
                {True: "yes", False: "no", None: "-"}[s.fsync] if s.mode != "read" else "-",
            ]
        )
        classes.append("failed" if s.ok < s.runs else "cached" if s.cached_read else "")
    numeric = {"ranks", "MiB/s", "ceiling MiB/s", "fraction of ceiling", "MiB moved"}
    return _table(headers, rows, numeric, classes)


def _sources_html(summaries):
    """One line: which read cases came from storage and which from the page cache."""
    reads = [
        s
        for s in summaries
        if s.ok and s.mode in ("read", "both") and not rules.moves_no_data(s.backend)
    ]
    if not reads:
        return ""
    stored = [s for s in reads if s.from_storage]
    cached = [s for s in reads if s.from_storage is False]
    unknown = len(reads) - len(stored) - len(cached)
    names = ", ".join(html.escape(f"{s.label} {s.series} n{s.ranks}") for s in cached)
    text = f"Reads (the null backend aside): {len(stored)} of {len(reads)} read cases "
    text += "came from storage"
    if cached:
        text += f"; <b>{len(cached)} from the page cache</b>: {names}"
    if unknown:
        text += f"; {unknown} unknown (no OS byte counts)"
    return f'<p class="note">{text}.</p>'


def _environment_html(store_campaigns, runs):
    camp = [
        [
            c["name"],
            c["id"],
            c["host"],
            c["launcher"],
            c["started"],
            c["finished"] or "(unfinished)",
            c["path"],
        ]
        for c in store_campaigns
    ]
    out = _table(["campaign", "id", "host", "launcher", "started", "finished", "file"], camp)
    env = {}
    for r in runs:
        if r["status"] == "ok":
            key = (
                r["host"],
                r["backend"],
                r["backend_version"],
                r["mpi_version"],
                r["fs_type"],
                r["iokernels_version"],
            )
            env[key] = env.get(key, 0) + 1
    rows = [[*k, n] for k, n in env.items()]
    out += _table(
        ["host", "backend", "library", "MPI", "file system", "iokernels", "runs"], rows, {"runs"}
    )
    return out


def _failed_html(runs):
    failed = [r for r in runs if r["status"] != "ok"]
    if not failed:
        return "<p>None.</p>"
    rows = [
        [
            r["id"],
            f"{r['label'] or r['kernel']} {r['backend']} n{r['ranks']} "
            f"{r['variant'] or ''}".strip(),
            r["mode"],
            r["iteration"],
            "-" if r["exit_code"] is None else r["exit_code"],
            r["error"] or "",
            r["case_dir"],
        ]
        for r in failed
    ]
    return _table(
        ["run", "case", "mode", "iteration", "exit code", "error", "directory"],
        rows,
        {"run", "iteration", "exit code"},
    )


def _img(path):
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return f'<img alt="{html.escape(Path(path).stem)}" src="data:image/png;base64,{data}">'


def write(store, html_path, campaign=None, title=None):
    """Writes the page (and its PNGs) for every run in the store, or those of
    one campaign (id or name). Returns (html path, [png paths], summaries)."""
    html_path = Path(html_path)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    pdir = _claim(html_path)
    runs = store.runs(campaign=campaign)
    camps = [c for c in store.campaigns() if campaign is None or campaign in (c["id"], c["name"])]
    summaries = summarize(runs, store.phases(r["id"] for r in runs if r["status"] == "ok"))
    figures = plots.draw_all(summaries, pdir)
    nok = sum(r["status"] == "ok" for r in runs)
    title = title or "iokernels campaign report"
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        GENERATOR,
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>{len(runs)} runs: {nok} succeeded, {len(runs) - nok} failed; "
        f"{len(summaries)} cases. Generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')} "
        f"from {html.escape(str(store.path))}.</p>",
        '<p class="note">Bandwidth = bytes moved / I/O time (the open-to-close span, earliest '
        "open to latest close over the ranks, less the suite's own work; barriers as each "
        "kernel's original places them), the median over a case's successful "
        "iterations. Ceiling = a contiguous MPI-IO write of the same bytes by the same ranks "
        "in the same job, measured right after the kernel's write where the case asked for "
        "it (--ceiling); fraction = kernel bandwidth / ceiling. Reads run after the writes "
        "in the same directory; a read counts as <b>from storage</b> only when the OS "
        "read_bytes (/proc/self/io, summed over ranks) reach half the bytes read, otherwise "
        "it is marked <b>page cache</b> (rows shaded, hatched bars, hollow markers, "
        "[page cache] in labels): its bandwidth is memory's, not the file system's. "
        "Peak memory is each "
        "rank's VmHWM over the pass. The null backend moves no data: it measures the suite "
        "itself. Failed runs are listed apart and never counted as results.</p>",
        "<h2>Cases</h2>",
        _sources_html(summaries),
        _cases_html(summaries),
        "<h2>Plots</h2>",
    ]
    odd = mislabelled_phases(summaries)
    if odd:
        body.append(
            f'<p class="note"><b>Warning:</b> the JSON records flag phase(s) {", ".join(odd)} as '
            "I/O, which the README says are not: the records' phase names and I/O flags "
            "disagree, so the phase labels below may name the wrong phases (names come from "
            "iok_phase_names in src/core/timing.c, flags from enum iok_phase).</p>"
        )
    for fig_title, path in figures:
        body += [f"<h3>{html.escape(fig_title)}</h3>", _img(path)]
    if not figures:
        body.append("<p>No successful run: nothing to plot.</p>")
    body += [
        "<h2>Failed runs</h2>",
        _failed_html(runs),
        "<h2>Where and with what</h2>",
        _environment_html(camps, runs),
        "</body></html>",
    ]
    html_path.write_text("\n".join(body) + "\n")
    return html_path, [p for _, p in figures], summaries
