# SPDX-License-Identifier: BSD-3-Clause
"""Plain-text tables for the terminal: runs (list), cases (the short table
after a campaign), and two stores side by side (compare)."""

from . import verdict
from .aggregate import cache_rule, fraction_text, margin_of

MIB = 1048576.0


def fmt(value, spec=".1f", scale=1.0, none="-"):
    return none if value is None else format(value / scale, spec)


def render(headers, rows, right=()):
    """Columns padded to their widest cell; columns named in `right` right-aligned."""
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        parts = [
            c.rjust(w) if headers[i] in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(parts).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def source(from_storage, mode):
    """Where a read's bytes came from: storage, page cache, or '-'."""
    if mode not in ("read", "both") or from_storage is None:
        return "-"
    return "storage" if from_storage else "PAGE CACHE"


def _status(run):
    if run["status"] == "ok":
        return "ok"
    return "FAILED" if run["exit_code"] is None else f"FAILED ({run['exit_code']})"


def _job_step(r):
    job, step = r.get("slurm_job_id"), r.get("slurm_step_id")
    if job is None:
        return "-"
    return f"{job}.{step}" if step is not None else str(job)


def runs_table(runs):
    headers = [
        "id",
        "campaign",
        "kernel",
        "backend",
        "ranks",
        "variant",
        "mode",
        "iter",
        "status",
        "MiB/s",
        "read from",
        "ceiling",
        "peak MiB",
        "nodes",
        "Slurm job.step",
    ]
    rows = []
    for r in runs:
        bw = r["read_bandwidth"] if r["mode"] == "read" else r["write_bandwidth"]
        rows.append(
            [
                r["id"],
                r["campaign"],
                r["label"] or r["kernel"],
                r["backend"],
                r["ranks"],
                r["variant"] or "",
                r["mode"],
                r["iteration"],
                _over(_status(r), r.get("oversubscribed")),
                fmt(bw, scale=MIB),
                source(r.get("read_from_storage"), r["mode"]),
                fraction_text(r["ceiling_fraction"], r.get("ceiling_above"), margin=margin_of([r])),
                fmt(r["peak_rss_max"], scale=MIB),
                r.get("nodes") or "-",
                _job_step(r),
            ]
        )
    right = {"id", "ranks", "iter", "MiB/s", "ceiling", "peak MiB", "nodes"}
    text = render(headers, rows, right=right)
    errors = [f"  run {r['id']}: {r['error']}" for r in runs if r["status"] != "ok"]
    return text + ("\nfailed runs:\n" + "\n".join(errors) if errors else "")


def cases_table(summaries):
    headers = [
        "case",
        "mode",
        "ok/runs",
        "MiB/s",
        "read from",
        "ceiling MiB/s",
        "fraction",
        "peak MiB/rank",
        "verified",
    ]
    rows = []
    for s in summaries:
        verified = {True: "yes", False: "NO", None: "-"}[s.verified]
        rows.append(
            [
                _over(f"{s.label} {s.series} n{s.ranks}", s.oversubscribed),
                s.mode,
                f"{s.ok}/{s.runs}",
                fmt(s.bandwidth, scale=MIB),
                source(s.from_storage, s.mode),
                fmt(s.ceiling_bw, scale=MIB),
                fraction_text(s.ceiling_fraction, s.ceiling_above, margin=s.ceiling_margin),
                fmt(s.rss_max, scale=MIB),
                verified,
            ]
        )
    right = {"MiB/s", "ceiling MiB/s", "fraction", "peak MiB/rank"}
    return render(headers, rows, right=right) + above_notes(summaries)


def above_notes(summaries):
    """One line per case shown above its ceiling, with the reason found."""
    lines = [
        f"! {s.label} {s.series} n{s.ranks}: "
        + (s.ceiling_above or f"median {s.ceiling_fraction:.2f}x the ceiling")
        for s in summaries
        if fraction_text(s.ceiling_fraction, s.ceiling_above, margin=s.ceiling_margin).endswith("!")
    ]
    return "".join("\n" + x for x in lines)


def short_table(summaries):
    """Per kernel, at its largest rank count: one row per backend (and
    variant), write and read side by side. Failed cases show their count; a
    read served from the page cache carries a '*' and a note below."""
    headers = [
        "kernel",
        "backend",
        "ranks",
        "write MiB/s",
        "read MiB/s",
        "ceiling MiB/s",
        "fraction",
        "peak MiB/rank",
        "failed",
    ]
    rows = []
    for k in dict.fromkeys(s.label for s in summaries):
        mine = [s for s in summaries if s.label == k]
        top = max((s.ranks for s in mine if s.ok), default=max(s.ranks for s in mine))
        for series in dict.fromkeys(s.series for s in mine):
            group = [s for s in mine if s.series == series and s.ranks == top]
            if not group:
                continue
            w = next((s for s in group if s.write_bw), None)
            r = next((s for s in group if s.read_bw), None)
            rss = max((s.rss_max for s in group if s.rss_max), default=None)
            failed = sum(s.runs - s.ok for s in group)
            over = next((s.oversubscribed for s in group if s.oversubscribed), None)
            rows.append(
                [
                    k,
                    series,
                    _over(str(top), over),
                    fmt(w.write_bw if w else None, scale=MIB),
                    fmt(r.read_bw if r else None, scale=MIB) + ("*" if r and r.cached_read else ""),
                    fmt(w.ceiling_bw if w else None, scale=MIB),
                    (
                        fraction_text(w.ceiling_fraction, w.ceiling_above, margin=w.ceiling_margin)
                        if w
                        else "-"
                    ),
                    fmt(rss, scale=MIB),
                    failed or "",
                ]
            )
    text = render(headers, rows, right=set(headers[2:]))
    text += above_notes([s for s in summaries if s.write_bw])
    if any(row[4].endswith("*") for row in rows):
        rule = cache_rule(s.from_storage_fraction for s in summaries if s.cached_read)
        text += f"\n* read served from the page cache ({rule})"
    return text


def _over(text, oversubscribed):
    """A cell with the records' words for an oversubscribed run appended."""
    return f"{text}, {oversubscribed}" if oversubscribed else text


def _overlap_lines(df, name_a, name_b):
    """The overlap of the cases whose runs carry one on both sides (async
    runs with --async-reference), as lines under compare's table; ""
    when none does."""
    from .overlap import interval_text

    both = [
        r
        for r in (df.to_dict("records") if not df.empty else [])
        if r.get("a_overlap") and r.get("b_overlap")
    ]
    if not both:
        return ""
    rows = []
    for r in both:
        (ao, alo, ahi, acall), (bo, blo, bhi, bcall) = r["a_overlap"], r["b_overlap"]
        rows.append(
            [
                f"{r['kernel']} {r['series']} n{r['ranks']}",
                f"{interval_text(ao, alo, ahi)} {acall or ''}".strip(),
                f"{interval_text(bo, blo, bhi)} {bcall or ''}".strip(),
            ]
        )
    head = (
        "\noverlap of the async cases (1 - exposed I/O async / synchronous, interleaved ABBA "
        "in one job against its synchronous reference; 95% interval, the records' call):\n"
    )
    return head + render(["case", f"{name_a} overlap", f"{name_b} overlap"], rows)


def compare_table(runs_a, runs_b, name_a="A", name_b="B"):
    """Cases present in both (frame.case_key), medians side by side, B/A as
    the call sees it (the Hodges-Lehmann ratio, its 95% interval, the exact
    test's p) and the call: better or worse only beyond the runs' spread,
    and only where the two sides' runs interleave in time (timing.py)."""
    from . import frame  # pandas: only when comparing

    df, only_a, only_b = frame.compare(runs_a, runs_b)
    rows, notes = [], []
    for r in df.to_dict("records"):
        case = f"{r['kernel']} {r['series']} n{r['ranks']}"
        tested = r["p"] is not None and r["p"] == r["p"]
        rows.append(
            [
                case,
                r["mode"],
                fmt(r["a_mib_s"]),
                fmt(r["b_mib_s"]),
                fmt(r["hl"] if tested else r["ratio"], ".2f"),
                f"{r['low']:.2f}-{r['high']:.2f}" if tested and r["low"] == r["low"] else "-",
                f"{r['p']:.3g}" if tested else "-",
                f"{r['n_a']}/{r['n_b']}",
                r["mark"],
            ]
        )
        if r["why"]:
            notes.append(f"{case} {r['mode']}: {r['why']}")
    headers = ["case", "mode", f"{name_a} MiB/s", f"{name_b} MiB/s", f"{name_b}/{name_a}"]
    headers += ["95% interval", "p", "runs", "call"]
    text = render(headers, rows, right=set(headers[2:8]))
    text += _overlap_lines(df, name_a, name_b)
    for why in dict.fromkeys(n.split(": ", 1)[1] for n in notes):
        cases = [n.split(": ", 1)[0] for n in notes if n.split(": ", 1)[1] == why]
        shown = ", ".join(cases[:3]) + (f" and {len(cases) - 3} more" if len(cases) > 3 else "")
        text += f"\n{why} [{shown}]"
    text += (
        f"\n{len(rows)} cases in both; {only_a} only in {name_a}, {only_b} only in {name_b}; "
        f"{name_b}/{name_a} is the Hodges-Lehmann ratio (the median of every b_i / a_j; the "
        f"ratio of medians where untested for too few runs); "
        f"better/worse only where the {verdict.RULE_SHORT} (every iteration a run; "
        f"at least {verdict.MIN_RUNS} runs a side) and the sides' runs interleave in time, "
        "same otherwise, untested with fewer or apart in time"
    )
    return text, len(rows)
