# SPDX-License-Identifier: BSD-3-Clause
"""One self-contained HTML page (templates/report.html, inline CSS, plots
embedded as data URIs), question first: per kernel a table of backends x
rank counts (write and read bandwidth, fraction of the ceiling, the fastest
highlighted, page-cache reads marked), then one figure per kernel, the null
backend apart as the suite's own overhead, the failed runs, and every case
last, collapsed. The PNGs are also kept next to the page, in REPORT-plots/.
The compare page (templates/compare.html) puts two campaigns side by side."""

import base64
import html
import json
import time
from pathlib import Path

import jinja2

from ..spec import rules
from . import frame, interference, overlap, palette, plots, staged, verdict
from .aggregate import cache_rule, fraction_text, kernels, mislabelled_phases, summarize
from .tables import MIB, fmt, source

GENERATOR = '<meta name="generator" content="iokernels-campaign">'
MARKER = ".iokernels-campaign"


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
    return pdir


def _table(headers, rows, numeric=(), row_class=None, table_id=None):
    """A table as the template's table macro takes it (cells escaped there)."""
    return {
        "headers": headers,
        "rows": [[str(c) for c in row] for row in rows],
        "numeric": set(numeric),
        "classes": row_class,
        "id": table_id,
    }


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
        "cores",
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
                fraction_text(s.ceiling_fraction, s.ceiling_above, margin=s.ceiling_margin),
                rss if s.ok else "-",
                fmt(s.bytes, ".2f", MIB),
                {True: "yes", False: "NO", None: "-"}[s.verified],
                {True: "yes", False: "no", None: "-"}[s.fsync] if s.mode != "read" else "-",
                s.oversubscribed or "-",
            ]
        )
        classes.append("failed" if s.ok < s.runs else "cached" if s.cached_read else "")
    numeric = {"ranks", "MiB/s", "ceiling MiB/s", "fraction of ceiling", "MiB moved"}
    return _table(headers, rows, numeric, classes, "cases")


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
        rule = cache_rule(s.from_storage_fraction for s in cached)
        text += f"; <b>{len(cached)} from the page cache</b> ({rule}): {names}"
    if unknown:
        text += f"; {unknown} unknown (no OS byte counts)"
    return text + "."


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
    camps = _table(["campaign", "id", "host", "launcher", "started", "finished", "file"], camp)
    env = {}
    for r in runs:
        if r["status"] == "ok":
            key = (
                _nodes(r),
                r["backend"],
                r["backend_version"],
                r["mpi_version"],
                r["mpiio"],
                r["fs_type"],
                _striping(r),
                ", ".join(json.loads(r.get("env") or "{}")) or "-",
                r.get("slurm_job_id") or "-",
                r["iokernels_version"],
            )
            env[key] = env.get(key, 0) + 1
    rows = [[*k, n] for k, n in env.items()]
    head = ["nodes", "backend", "library", "MPI", "MPI-IO", "file system", "striping", "env set"]
    envs = _table([*head, "Slurm job", "iokernels", "runs"], rows, {"runs"})
    return camps, envs


def _nodes(r):
    """The nodes a run ran on (its hostnames), with ranks per node."""
    names = json.loads(r["hostnames"]) if r.get("hostnames") else [r["host"]]
    shown = ", ".join(names[:4]) + (f" (+{len(names) - 4})" if len(names) > 4 else "")
    per = r.get("ranks_per_node")
    return shown + (f" x {per} ranks" if per else "")


def _striping(r):
    """The case directory's Lustre striping and whether it was applied."""
    if not r.get("lustre_status"):
        return "-"
    parts = []
    if r.get("lustre_stripe_count") is not None:
        parts.append(f"{r['lustre_stripe_count']} OSTs")
    if r.get("lustre_stripe_size_bytes"):
        parts.append(f"{r['lustre_stripe_size_bytes'] // 1024} KiB")
    return f"{' x '.join(parts)} {r['lustre_status']}"


def _failed_html(runs):
    failed = [r for r in runs if r["status"] != "ok"]
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


ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("iokernels_campaign.report", "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)


def _png(path):
    return base64.b64encode(Path(path).read_bytes()).decode()


def _mib(v):
    return "-" if v is None or v != v else f"{v:.1f}"


def _cell(st, key, best, what):
    """One summary cell: the median (min-max), its classes and tooltip."""
    if st is None:
        return {"text": "-", "range": "", "cls": "", "title": ""}
    cls, title = [], f"{what}: median of {st['n']} iteration(s)"
    over = _over_of(st)
    if over:
        title += f"; {over}: the ranks contended for cores"
    text = _mib(st["median"])
    if st["cached"]:
        cls.append("cached")
        text += " \u2020"
        title += "; served from the page cache, not storage"
    win = best.get(key)
    if win and win.ratio is not None and not win.ratio.tested:
        pass  # too few runs for the exact test: no verdict, no colour
    elif win and win.series == st["series"] and win.clear:
        cls.append("best")
        title += "; fastest at this rank count, beyond the runs' spread"
    elif win and (win.series == st["series"] or st["series"] in win.ties):
        cls.append("tied")
        title += "; tied for fastest: the runs' spread does not tell these apart"
    rng = f"({_mib(st['low'])}\u2013{_mib(st['high'])})" if st["n"] > 1 else ""
    return {"text": text, "range": rng, "cls": " ".join(cls), "title": title, "over": over}


def _over_of(st):
    """The records' words for an oversubscribed case (frame.case_stats), or None."""
    over = st.get("over")
    return over if isinstance(over, str) and over else None


def _fraction_cell(st, label, ranks):
    """The fraction of the case's one ceiling, with the two figures it is
    the ratio of in the tooltip (and data-* attributes a test reads)."""
    if st is None or st["fraction"] is None or st["fraction"] != st["fraction"]:
        over = _over_of(st) if st is not None else None
        return {"text": "-", "range": "", "cls": "", "title": "no ceiling measured", "over": over}
    above = st["above"] if isinstance(st["above"], str) else None
    probe = "contiguous MPI-IO write" if st["op"] == "write" else f"MPI-IO read ({st['kind']})"
    title = (
        f"{st['op']} {_mib(st['median'])} MiB/s / ceiling {st['ceiling']:.1f} MiB/s: the best "
        f"{probe} probe sample of {st['ceiling_runs']} runs of {label} on {ranks} ranks "
        f"({st['kind']}), every backend's"
    )
    return {
        "text": fraction_text(st["fraction"], above, margin=st.get("margin")),
        "range": "",
        "cls": "",
        "title": (above + "; " if above else "") + title,
        "data": {"median": _mib(st["median"]), "ceiling": f"{st['ceiling']:.1f}"},
        "over": _over_of(st),
    }


def _answer(op, top, win, st):
    """The answer line of one operation at the largest rank count: the
    fastest series only where the runs' spread tells it apart."""
    ranks = f"{top} rank{'s' if top > 1 else ''}"
    text = f"Fastest {op} at {ranks}: <b>{html.escape(win.series)}</b>"
    text += f", {_mib(st['median'])} MiB/s"
    if win.against and (win.ratio is None or not win.ratio.tested):
        n = win.ratio.n_a if win.ratio else 0
        text = (
            f"{op.capitalize()} at {ranks}: highest median <b>{html.escape(win.series)}</b>, "
            f"{_mib(st['median'])} MiB/s; no winner called: {n} run(s) per case, and the "
            f"exact test ({verdict.RULE_SHORT}) needs at least {verdict.MIN_RUNS} runs a side"
        )
    elif win.against and win.clear:
        text += f", {html.escape(win.series)} / {html.escape(win.against)} = {win.ratio.text()}"
    elif win.against:
        names = [win.series, *win.ties]
        who = ", ".join(html.escape(x) for x in names[:4])
        who += f" and {len(names) - 4} more" if len(names) > 4 else ""
        text = (
            f"{op.capitalize()} at {ranks}: <b>tied</b> between {who}"
            f" (the best median {_mib(st['median'])} MiB/s; "
            f"{html.escape(win.series)} / {html.escape(win.against)} = {win.ratio.text()})"
        )
    return text


def _kernel_sections(stats, pdir, bw=None, order=None):
    """Per kernel (null backend left out): summary rows, the answer lines at
    the largest rank count, and the figure."""
    out = []
    real = stats[~stats["null"]] if not stats.empty else stats
    best = frame.best(real, bw) if not real.empty else {}
    labels = list(dict.fromkeys(stats["label"])) if not stats.empty else []
    if order:  # the campaign file's order (aggregate.kernel_order), not the runs'
        labels.sort(key=lambda k: order.index(k) if k in order else len(order))
    for n, label in enumerate(labels):
        mine = real[real["label"] == label]
        if mine.empty:
            continue
        ranks = sorted(set(mine["ranks"]))
        idx = {(r.series, r.ranks, r.op): r._asdict() for r in mine.itertuples(index=False)}
        rows = []
        for series in palette.ordered(mine["series"]):
            cells = []
            for nr in ranks:
                w, r = idx.get((series, nr, "write")), idx.get((series, nr, "read"))
                cells.append(_cell(w, (label, nr, "write"), best, "write"))
                cells.append(_fraction_cell(w, label, nr))
                cells.append(_cell(r, (label, nr, "read"), best, "read"))
                cells.append(_fraction_cell(r, label, nr))
            rows.append({"series": series, "cells": cells})
        top = ranks[-1]
        answers = []
        for op in ("write", "read"):
            win = best.get((label, top, op))
            if win is None:
                continue
            st = idx[(win.series, top, op)]
            text = _answer(op, top, win, st)
            if op == "write" and st["fraction"] == st["fraction"] and st["fraction"] is not None:
                above = st["above"] if isinstance(st["above"], str) else None
                shown = fraction_text(st["fraction"], above, margin=st.get("margin"))
                text += f", {shown} of the ceiling"
                if shown.endswith("!"):
                    why = above or "the median run was faster than the probe's best sample"
                    text += f" (above it: {html.escape(why)})"
            if st["cached"]:
                text += " (page cache: no read from storage to compare)"
            if _over_of(st):
                text += f"; {html.escape(_over_of(st))}: the ranks contended for cores"
            answers.append(text + ".")
        fig = plots.kernel_figure(stats, label, pdir / f"kernel-{n + 1}.png")
        ran = (
            [x for x in dict.fromkeys(bw[bw["label"] == label]["ran"]) if x]
            if bw is not None
            else []
        )
        out.append(
            {
                "label": label,
                "ran": ran[:3],
                "ran_more": max(0, len(ran) - 3),
                "ranks": ranks,
                "rows": rows,
                "answers": answers,
                "figure": _png(fig) if fig else None,
                "png": fig,
            }
        )
    return out


def _overlap_sections(runs, pdir, order):
    """The overlap section's parts per kernel (overlap.py), figures drawn
    by plots.overlap_figure, tables in the template's form."""
    out = []
    for o in overlap.sections(runs, pdir, plots.overlap_figure, order):
        numeric = {"compute s/step", "exposed I/O s", "synchronous reference s", "runs"}
        out.append(
            o
            | {
                "table": _table(o["headers"], o["rows"], numeric, o["classes"]),
                "figure": _png(o["png"]) if o["png"] else None,
            }
        )
    return out


def _null_table(stats):
    nulls = stats[stats["null"]] if not stats.empty else stats
    if nulls.empty:
        return None
    wide = nulls.pivot_table(
        index=["label", "series", "ranks"],
        columns="op",
        values=["seconds", "median"],
        aggfunc="first",
        sort=False,
    )
    rows = []
    for (label, series, ranks), r in wide.iterrows():
        got = {(a, b): v for (a, b), v in r.items()}
        rows.append(
            [label, series, ranks]
            + [fmt(got.get(("seconds", op)), ".3f", 1e-3) for op in ("write", "read")]
            + [_mib(got.get(("median", op))) for op in ("write", "read")]
        )
    headers = ["kernel", "backend", "ranks", "write ms", "read ms", "write MiB/s", "read MiB/s"]
    return _table(headers, rows, set(headers[2:]), table_id="null")


def _tune_sections(answers):
    """One section per tune: defaults against the best, the ready line, each
    setting's importance, every trial (tune_answer.build's dicts)."""
    out = []
    for a in answers:
        c, d, b = a["confirm"], a["defaults"], a["best"]
        settings = ", ".join(f"{k}={v}" for k, v in b["settings"].items()) or "the defaults"

        def runs(xs):
            return ", ".join(f"{x:.3f}" for x in xs) or "-"

        compare = _table(
            ["", "settings", "search s", "ABBA runs s"],
            [
                ["defaults", "-", f"{d['seconds']:.3f}", runs(c["defaults"])],
                [f"best (trial {b['number']})", settings, f"{b['seconds']:.3f}", runs(c["best"])],
            ],
        )
        importance = _table(
            ["setting", "share"],
            [[k, f"{v:.2f}"] for k, v in a["importance"]["shares"].items()],
            {"share"},
        )
        names = list(a["space"])
        rows, classes = [], []
        for t in a["trials"]:
            secs = "-" if t["seconds"] is None else f"{t['seconds']:.3f}"
            cells = [t["number"], *(t["settings"].get(n, "default") for n in names)]
            rows.append([*cells, t["state"], secs, len(t["runs"]), t["error"] or ""])
            classes.append("failed" if t["state"] != "ok" else None)
        trials = _table(
            ["trial", *names, "state", "seconds", "runs", "error"],
            rows,
            {"trial", "seconds", "runs"},
            row_class=classes,
        )
        what = f"{a['label']} on {a['ranks']} ranks, {len(a['trials'])} trials ({a['sampler']})"
        timed = a.get("objective_text") or "I/O time (write + read)"
        out.append(
            {
                "name": a["name"],
                "what": what,
                "call": c["call"],
                "answer": c["text"],
                "objective": timed,
                "compare": compare,
                "ready": a["ready"],
                "method": a["importance"]["method"],
                "inert": "; ".join(f"{k} ({why})" for k, why in (a.get("inert") or {}).items()),
                "importance": importance,
                "trials": trials,
            }
        )
    return out


def write(store, html_path, campaign=None, title=None):
    """Writes the page (and its PNGs) for every run in the store, or those of
    one campaign (id or name). Returns (html path, [png paths], summaries)."""
    html_path = Path(html_path)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    with staged.Staged(html_path, _claim(html_path), MARKER) as st:
        pngs, summaries = _write(store, st, campaign, title)
    return html_path, [st.final(p) for p in pngs], summaries


def _write(store, st, campaign, title):
    pdir = st.work  # moved into place when the page is complete
    every = store.runs(campaign=campaign)
    runs = [r for r in every if r["kernel"] != "mix"]  # a mix: the interference matrix
    mixes = [r["id"] for r in every if r["kernel"] == "mix"]
    camps = [c for c in store.campaigns() if campaign is None or campaign in (c["id"], c["name"])]
    summaries = summarize(runs, store.phases(r["id"] for r in runs if r["status"] == "ok"))
    bw = frame.bandwidths(runs)
    stats = frame.case_stats(bw)
    sections = _kernel_sections(stats, pdir, bw, kernels(summaries))
    overlaps = _overlap_sections(runs, pdir, kernels(summaries))
    figures = plots.draw_all(summaries, pdir)
    camp_table, env_table = _environment_html(camps, runs)
    page = ENV.get_template("report.html").render(
        title=title or "iokernels campaign report",
        nruns=len(runs),
        nok=sum(r["status"] == "ok" for r in runs),
        ncases=len(summaries),
        nmixes=len(mixes),
        generated=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        store=str(store.path),
        kernels=sections,
        sources=_sources_html(summaries),
        storage_rule=cache_rule(s.from_storage_fraction for s in summaries),
        oversubscribed=sorted({r["oversubscribed"] for r in runs if r.get("oversubscribed")}),
        null=_null_table(stats),
        failed=_failed_html(every),
        interference=interference.html_table(interference.cells(store.mix_runs(mixes))),
        mislabelled=", ".join(mislabelled_phases(summaries)),
        figures=[{"title": t, "data": _png(p)} for t, p in figures],
        campaigns=camp_table,
        environment=env_table,
        cases=_cases_html(summaries),
        tunes=_tune_sections(store.tunes(campaign)),
        overlaps=overlaps,
        overlap_design=overlap.DESIGN,
    )
    st.page.write_text(page)
    pngs = [k["png"] for k in sections if k["png"]] + [p for _, p in figures]
    pngs += [o["png"] for o in overlaps if o["png"]]
    return pngs, summaries


def _overlap_text(summary):
    """overlap.summary's (overlap, lo, hi, call) as "0.78 [0.73, 0.82] hidden", or "-"."""
    if not summary:
        return "-"
    ov, lo, hi, call = summary
    return f"{overlap.interval_text(ov, lo, hi)} {call or ''}".strip()


def write_compare(runs_a, runs_b, html_path, name_a, name_b):
    """The compare page: per case in both, B/A with better / worse / same.
    Returns (path, number of cases in both)."""
    html_path = Path(html_path)
    if html_path.exists() and GENERATOR not in html_path.read_text(errors="replace")[:2000]:
        raise ReportError(f"{html_path} exists and was not written by iokernels-campaign")
    html_path.parent.mkdir(parents=True, exist_ok=True)
    df, only_a, only_b = frame.compare(runs_a, runs_b)
    words = {
        "better": "\u25b2 better",
        "worse": "\u25bc worse",
        "same": "= same",
        "untested": "? fewer than 4 runs a side",
        "na": "-",
    }
    rows = [
        {
            "kernel": r["kernel"],
            "series": r["series"],
            "ranks": r["ranks"],
            "mode": r["mode"],
            "a": _mib(r["a_mib_s"]),
            "b": _mib(r["b_mib_s"]),
            "ratio": fmt(r["ratio"], ".2f"),
            "interval": r["interval"],
            "mark": r["mark"],
            "word": words[r["mark"]],
            "cached": bool(r["cached"]),
            "a_overlap": _overlap_text(r.get("a_overlap")),
            "b_overlap": _overlap_text(r.get("b_overlap")),
        }
        for r in df.to_dict("records")
    ]
    counts = {m: sum(r["mark"] == m for r in rows) for m in ("better", "worse", "same", "untested")}
    page = ENV.get_template("compare.html").render(
        title="iokernels campaigns compared",
        a=name_a,
        b=name_b,
        rows=rows,
        counts=counts,
        only_a=only_a,
        only_b=only_b,
        # async cases with their synchronous reference (ABBA in one job) on both sides
        overlaps=any(r["a_overlap"] != "-" and r["b_overlap"] != "-" for r in rows),
    )
    staged.write_text(html_path, page)
    return html_path, len(rows)
