# SPDX-License-Identifier: BSD-3-Clause
"""The report's figures as PNG files (matplotlib, no display needed):
bandwidth per backend per kernel, bandwidth vs ranks, stacked phase times,
peak memory per rank. Each function takes CaseSummary lists and returns the
path written, or None when there is nothing to draw."""

import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..spec import rules  # noqa: E402
from . import palette  # noqa: E402
from .aggregate import kernels  # noqa: E402

MIB = 1048576.0
DPI = 100
OPS = (("write", "write_bw", "#1f77b4"), ("read", "read_bw", "#ff7f0e"))


def _ok(summaries):
    return [s for s in summaries if s.ok]


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _wrapped(text, fig, fontsize=8):
    """text folded into lines that fit the figure's width (a character is
    at most 0.62 of the font size wide in DejaVu Sans, with a margin)."""
    px = fig.get_figwidth() * fig.dpi * 0.94
    chars = max(20, int(px / (0.62 * fontsize * fig.dpi / 72)))
    return "\n".join(textwrap.wrap(text, chars, break_on_hyphens=False))


def _fit_legend(fig, handles, names, ncol, fontsize=8):
    """A figure legend at the top centre with as many columns (at most ncol)
    as fit in the figure's width, so that no name is cut at either end."""
    renderer = fig.canvas.get_renderer()
    for n in range(max(1, ncol), 0, -1):
        leg = fig.legend(handles, names, loc="upper center", ncol=n, fontsize=fontsize)
        if n == 1 or leg.get_window_extent(renderer).width <= fig.bbox.width * 0.98:
            return leg
        leg.remove()
    return leg


def _fit_axes_legend(ax, fontsize, ncol):
    """A legend inside the axes that the figure holds whole: fewer columns,
    then long names folded, until it is no wider than the axes."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    handles, names = ax.get_legend_handles_labels()
    limit = ax.get_window_extent(renderer).width
    for n in range(ncol, 0, -1):
        leg = ax.legend(handles, names, fontsize=fontsize, ncol=n)
        if leg.get_window_extent(renderer).width <= limit:
            return leg
    chars = max(12, int(limit * 0.85 / (0.62 * fontsize * fig.dpi / 72)))
    folded = ["\n".join(textwrap.wrap(x, chars, break_on_hyphens=False)) for x in names]
    return ax.legend(handles, folded, fontsize=fontsize, ncol=1)


def _case_label(s):
    return f"{s.label} {s.series} n{s.ranks} {s.mode}" + (" [page cache]" if s.cached_read else "")


def bandwidth_by_backend(summaries, path):
    """Per kernel, at its largest rank count: write and read bandwidth per
    backend (and variant), the ceiling as a black bar where measured."""
    ok = [s for s in _ok(summaries) if s.bandwidth]
    if not ok:
        return None
    ks = kernels(ok)
    widest = max(len({s.series for s in ok if s.label == k}) for k in ks)
    width = max(5.0, 1.5 + 0.65 * widest) * len(ks)
    fig, axes = plt.subplots(1, len(ks), figsize=(width, 5), squeeze=False)
    for ax, k in zip(axes[0], ks, strict=True):
        mine = [s for s in ok if s.label == k]
        top = max(s.ranks for s in mine)
        mine = [s for s in mine if s.ranks == top]
        series = list(dict.fromkeys(s.series for s in mine))
        x = np.arange(len(series))
        width = 0.38
        for i, (op, attr, color) in enumerate(OPS):
            vals, cached = [], []
            for name in series:
                v = [s for s in mine if s.series == name and s.mode in (op, "both")]
                vals.append((getattr(v[0], attr) or 0.0) / MIB if v else 0.0)
                cached.append(op == "read" and bool(v) and v[0].cached_read)
            bars = ax.bar(x + (i - 0.5) * width, vals, width, label=f"{op}", color=color)
            for b, c in zip(bars, cached, strict=True):
                if c:  # the page cache's bandwidth, not storage's
                    b.set_hatch("xx")
                    b.set_edgecolor("black")
                    b.set_label("_")
            if any(cached):
                ax.bar(0, 0, 0, color="white", edgecolor="black", hatch="xx", label="page cache")
            for b, v in zip(bars, vals, strict=True):
                if v > 0:
                    ax.annotate(
                        f"{v:.0f}",
                        (b.get_x() + b.get_width() / 2, v),
                        ha="center",
                        va="bottom",
                        fontsize=7,
                        rotation=90,
                        xytext=(0, 2),
                        textcoords="offset points",
                    )
        ceil = [
            next((s.ceiling_bw for s in mine if s.series == n and s.ceiling_bw), None)
            for n in series
        ]
        cx = [x[i] - 0.5 * width for i, c in enumerate(ceil) if c]
        cy = [c / MIB for c in ceil if c]
        if cx:
            ax.hlines(
                cy,
                np.array(cx) - width / 2,
                np.array(cx) + width / 2,
                colors="black",
                linewidth=2.5,
                label="ceiling (contiguous MPI-IO write)",
            )
        ax.set_yscale("log")
        ax.set_xticks(x, series, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("MiB/s (median, log scale)")
        ax.set_title(f"{k}, {top} rank{'s' if top > 1 else ''}")
        ax.grid(axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=8)
    return _save(fig, path)


def bandwidth_vs_ranks(summaries, path):
    """Scaling: per kernel and operation, bandwidth against ranks (log-2
    axis), one line per backend (and variant) in its palette colour and
    style; the ceiling (write and read) as a grey band from the lowest to the highest
    ceiling measured at each rank count. Backends that move no data (null)
    are left out: their figures, orders of magnitude above, measure the
    suite and would flatten every other line."""
    ok = [s for s in _ok(summaries) if s.bandwidth and not rules.moves_no_data(s.backend)]
    if not ok:
        return None
    ks = kernels(ok)
    fig, axes = plt.subplots(len(ks), 2, figsize=(11, 4.2 * len(ks)), squeeze=False)
    cached_any = False
    for row, k in zip(axes, ks, strict=True):
        mine = [s for s in ok if s.label == k]
        series = palette.ordered(s.series for s in mine)
        for ax, (op, attr, _) in zip(row, OPS, strict=True):
            band = {}
            for s in mine:
                mine_op = s.mode == op or (op == "write" and s.mode == "both")
                if s.ceiling_bw and mine_op:  # the case's one ceiling of this op
                    band.setdefault(s.ranks, []).append(s.ceiling_bw / MIB)
            if band:
                xs = sorted(band)
                ax.fill_between(
                    xs,
                    [min(band[x]) for x in xs],
                    [max(band[x]) for x in xs],
                    color="#999999",
                    alpha=0.25,
                    linewidth=0,
                    label="ceiling ("
                    + ("contiguous MPI-IO write" if op == "write" else "MPI-IO read of its kind")
                    + ")",
                )
            for name in series:
                pts = sorted(
                    (s.ranks, getattr(s, attr), s.ceiling_bw, op == "read" and s.cached_read)
                    for s in mine
                    if s.series == name and s.mode in (op, "both") and getattr(s, attr)
                )
                if not pts:
                    continue
                color = palette.colour(name)
                _, linestyle, marker = palette.style(name)
                xs = [p[0] for p in pts]
                ax.plot(
                    xs,
                    [p[1] / MIB for p in pts],
                    marker=marker,
                    linestyle=linestyle,
                    color=color,
                    label=name,
                )
                hollow = [(p[0], p[1] / MIB) for p in pts if p[3]]
                if hollow:  # page cache: hollow markers over the line's
                    ax.plot(
                        *zip(*hollow, strict=True),
                        "o",
                        markersize=9,
                        markerfacecolor="white",
                        markeredgecolor=color,
                        label="_",
                    )
                    cached_any = True
            ax.set_xscale("log", base=2)
            ranks = sorted({s.ranks for s in mine})
            ax.set_xticks(ranks, [str(r) for r in ranks])
            ax.minorticks_off()
            ax.set_yscale("log")
            ax.set_xlabel("ranks")
            ax.set_ylabel("MiB/s (median)")
            title = f"{k}: {op}" + (" (grey: ceiling)" if band else "")
            ax.set_title(title)
            ax.grid(which="both", alpha=0.3)
            if ax.lines:
                _fit_axes_legend(ax, fontsize=7, ncol=2)
    notes = []
    if any(rules.moves_no_data(s.backend) for s in _ok(summaries)):
        notes.append("the null backend is left out: it moves no data")
    if cached_any:
        notes.append("hollow markers: reads served from the page cache")
    if notes:
        fig.suptitle(_wrapped(f"({'; '.join(notes)})", fig), fontsize=8, y=0.995)
    return _save(fig, path)


def phase_times(summaries, path):
    """One stacked bar per case: median job time of each phase, named and
    flagged as the JSON record does (I/O phases solid, the suite's own work,
    not counted as I/O, hatched)."""
    ok = [s for s in _ok(summaries) if s.phases]
    if not ok:
        return None
    names = list(dict.fromkeys(n for s in ok for n in s.phases))
    io = {n: io for s in ok for n, io in s.phase_io.items()}
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.26 * len(ok)))
    y = np.arange(len(ok))
    left = np.zeros(len(ok))
    cmap = plt.get_cmap("tab10")
    for i, n in enumerate(names):
        vals = np.array([s.phases.get(n, 0.0) * 1e3 for s in ok])
        ax.barh(
            y,
            vals,
            left=left,
            color=cmap(i % 10),
            edgecolor="white",
            linewidth=0.3,
            label=n if io.get(n) else f"{n} (not I/O)",
            hatch=None if io.get(n) else "//",
        )
        left += vals
    ax.set_yticks(y, [_case_label(s) for s in ok], fontsize=7)
    ax.set_ylim(len(ok) - 0.5, -0.5)
    ax.set_xlabel("ms (median job time per phase, summed over the run's passes)")
    ax.set_title("Time per phase")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    return _save(fig, path)


def memory_per_rank(summaries, path):
    """Peak resident memory per rank: average over ranks, whiskers min..max."""
    ok = [s for s in _ok(summaries) if s.rss_max]
    if not ok:
        return None
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.26 * len(ok)))
    y = np.arange(len(ok))
    avg = np.array([s.rss_avg / MIB for s in ok])
    lo = avg - np.array([s.rss_min / MIB for s in ok])
    hi = np.array([s.rss_max / MIB for s in ok]) - avg
    ax.barh(y, avg, xerr=[lo, hi], color="#2ca02c", capsize=2, error_kw={"linewidth": 0.8})
    ax.set_yticks(y, [_case_label(s) for s in ok], fontsize=7)
    ax.set_ylim(len(ok) - 0.5, -0.5)
    ax.set_xlabel("MiB (peak RSS per rank: bar = average over ranks, whiskers = min..max)")
    ax.set_title("Peak memory per rank")
    ax.grid(axis="x", alpha=0.3)
    return _save(fig, path)


ALL = (
    ("phase_times.png", "Time per phase", phase_times),
    ("memory_per_rank.png", "Peak memory per rank", memory_per_rank),
)

MAX_WIDTH_PX = 1600


def kernel_figure(stats, label, path):
    """One kernel's small multiples: write and read side by side, bars per
    rank count and backend (null left out: it moves no data), the median
    with error bars from the iterations' min to max; the ceiling as a black
    tick over each bar where measured (writes: the write probe; reads: the
    read probe of their kind); page-cache reads hatched.
    `stats`: frame.case_stats rows. Returns path, or None."""
    mine = stats[(stats["label"] == label) & ~stats["null"]]
    if mine.empty:
        return None
    series = palette.ordered(mine["series"])
    ranks = sorted(set(mine["ranks"]))
    width_in = min(MAX_WIDTH_PX / DPI, 5.0 + 0.35 * len(series) * len(ranks))
    fig, axes = plt.subplots(1, 2, figsize=(width_in, 3.8), squeeze=False)
    step = 0.8 / len(series)
    cached_any = ceiling_any = False
    for ax, op in zip(axes[0], ("write", "read"), strict=True):
        part = mine[mine["op"] == op]
        for i, name in enumerate(series):
            rows = part[part["series"] == name].set_index("ranks")
            xs = [j - 0.4 + (i + 0.5) * step for j, n in enumerate(ranks) if n in rows.index]
            if not xs:
                continue
            got = rows.loc[[n for n in ranks if n in rows.index]]
            med = got["median"].to_numpy()
            err = [med - got["low"].to_numpy(), got["high"].to_numpy() - med]
            hatch, _, _ = palette.style(name)
            bars = ax.bar(
                xs,
                med,
                step * 0.9,
                yerr=err,
                capsize=2,
                color=palette.colour(name),
                hatch=hatch or None,
                edgecolor="white" if hatch else None,
                label=name,
            )
            for b, c in zip(bars, got["cached"], strict=True):
                if c:
                    b.set_hatch("xx")
                    b.set_edgecolor("black")
                    cached_any = True
            for x, c in zip(xs, got["ceiling"], strict=True):
                if c == c and c:  # not NaN: the case's one ceiling (frame.case_stats)
                    ax.hlines(c, x - step / 2, x + step / 2, colors="black", linewidth=2)
                    ceiling_any = True
        ax.set_xticks(range(len(ranks)), [f"{n} rank{'s' if n > 1 else ''}" for n in ranks])
        # a log axis: a ceiling of GiB/s beside bars of MiB/s leaves every bar tall
        # enough to read (on a linear axis they were a few pixels)
        ax.set_yscale("log")
        low = [v for v in part["low"] if v == v and v > 0]
        if low:
            ax.set_ylim(bottom=min(low) / 2)
        ax.set_ylabel(f"{op} MiB/s (median, log scale)")
        ax.set_title(f"{label}: {op}")
        ax.grid(axis="y", which="both", alpha=0.3)
    handles, names = axes[0][0].get_legend_handles_labels()
    if not handles:
        handles, names = axes[0][1].get_legend_handles_labels()
    notes = ["error bars: min..max over iterations"]
    if ceiling_any:
        notes.append(
            "black tick: the case's ceiling (write: contiguous MPI-IO write; "
            "read: MPI-IO read of its kind)"
        )
    if cached_any:
        notes.append("hatched: read served from the page cache")
    ncol = min(len(series), max(2, int(width_in / 1.9)))
    leg = _fit_legend(fig, handles, names, ncol)
    note = fig.text(
        0.5, 0.01, _wrapped("; ".join(notes), fig), ha="center", va="bottom", fontsize=8
    )
    renderer = fig.canvas.get_renderer()
    top = 1 - (leg.get_window_extent(renderer).height + 6) / fig.bbox.height
    bottom = (note.get_window_extent(renderer).height + 10) / fig.bbox.height
    fig.tight_layout(rect=(0, bottom, 1, top))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def overlap_figure(label, points, path):
    """One kernel's "overlap by compute time": per async case (overlap.cases
    dicts with point_series), the record's overlap against the seconds of
    computation per step, its 95% interval as error bars, one line per
    series; the calls other than hidden written beside their point.
    Returns (path, [the labels written]), or (None, []) with no point."""
    if not points:
        return None, []
    names = palette.ordered(c["point_series"] for c in points)
    width_in = min(MAX_WIDTH_PX / DPI, 7.0)
    fig, ax = plt.subplots(figsize=(width_in, 4.2))
    labelled = []
    for name in names:
        mine = sorted((c for c in points if c["point_series"] == name), key=lambda c: c["compute"])
        xs = [c["compute"] for c in mine]
        ys = [c["overlap"] for c in mine]
        err = [
            [c["overlap"] - c["lo"] if c["lo"] is not None else 0.0 for c in mine],
            [c["hi"] - c["overlap"] if c["hi"] is not None else 0.0 for c in mine],
        ]
        _, line, marker = palette.style(name.split(" [")[0])
        ax.errorbar(
            xs,
            ys,
            yerr=err,
            capsize=3,
            color=palette.colour(name),
            linestyle=line,
            marker=marker,
            label=name,
        )
        for c in mine:
            if c["call"] in LABELLED_CALLS:
                text = c["call"]
                ax.annotate(
                    text,
                    (c["compute"], c["overlap"]),
                    xytext=(5, -10),
                    textcoords="offset points",
                    fontsize=7,
                    color=palette.colour(name),
                )
                labelled.append(f"{text}: {name} at {c['compute']:g} s")
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel("computation per write step (s)")
    ax.set_ylabel("overlap (1 - exposed async / synchronous)")
    ax.set_title(f"{label}: overlap by compute time")
    ax.grid(alpha=0.3)
    _fit_axes_legend(ax, 8, min(3, len(names)))
    note = "error bars: 95% interval of the record's ratio (ABBA in one job); 1: all hidden"
    fig.text(0.5, 0.01, _wrapped(note, fig), ha="center", va="bottom", fontsize=8)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path, labelled


# an overlap figure's calls written beside their point (hidden needs no word)
LABELLED_CALLS = ("no overlap", "more exposed", "untested")


def draw_all(summaries, directory):
    """[(title, path)] of the figures drawn into directory: per kernel, so
    that one kernel's long phases do not flatten another's; the scaling
    figure for every kernel run at two or more rank counts."""
    out = []
    for n, k in enumerate(kernels(summaries)):
        mine = [s for s in summaries if s.label == k]
        moving = {s.ranks for s in mine if s.ok and not rules.moves_no_data(s.backend)}
        if len(moving) >= 2:
            path = bandwidth_vs_ranks(mine, directory / f"scaling-{n + 1}.png")
            if path:
                out.append((f"Scaling (bandwidth against ranks): {k}", path))
        for name, title, fn in ALL:
            path = fn(mine, directory / name.replace(".png", f"-{n + 1}.png"))
            if path:
                out.append((f"{title}: {k}", path))
    return out
