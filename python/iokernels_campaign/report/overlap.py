# SPDX-License-Identifier: BSD-3-Clause
"""The report's overlap section (docs/compute-async.md): for a campaign with
a compute or async axis, per kernel one figure "overlap by compute time"
(the overlap of each async case, with its 95% interval, against the seconds
of computation per step, one series per backend and variant, and per MPI-IO
layer where the runs used several) and one table of every case (compute,
async, exposed I/O, overlap [lo, hi], call, where). The overlap is the
record's own: an --async-reference run interleaves its asynchronous and
synchronous iterations (ABBA) in one job and writes the ratio of their
exposed I/O; this module computes none of it."""

from . import palette
from .aggregate import median_known

# the campaign's axes, left out of a series' name (they are the figure's x and filter)
AXES = ("compute=", "async=")
DESIGN = (
    "Design: interleaved ABBA in one job against its synchronous reference. Each async case "
    "(async = true) runs with --async-reference: its iterations alternate asynchronous and "
    "synchronous in ABBA order (A B B A ...) in the same job, so each case carries its own "
    "synchronous reference, measured under the same drift of the machine. overlap = 1 - "
    "ratio, the ratio the record gives of the exposed I/O (time blocked in I/O calls) of the "
    "asynchronous iterations over that of the synchronous ones, with its 95% interval (none "
    "where the record calls it untested); the call and where (post or wait: where the "
    "asynchronous write's time fell) are the record's. Exposed I/O: the median over a run's "
    "iterations (of an async case: its asynchronous ones) of the time each rank spent blocked "
    "in the write passes' I/O calls, the ranks' average; the binary records it with --compute "
    "or --async only ('-' for a run with neither). Synchronous cases (async = false) show "
    "their exposed I/O only."
)


def summary(runs):
    """(overlap, lo, hi, call) of runs of one case that carry an overlap:
    the median overlap and the span of their intervals; None without one."""
    with_ov = [r for r in runs if r.get("overlap") is not None]
    if not with_ov:
        return None
    lows = [r["overlap_lo"] for r in with_ov if r.get("overlap_lo") is not None]
    highs = [r["overlap_hi"] for r in with_ov if r.get("overlap_hi") is not None]
    tested = len(lows) == len(with_ov) and len(highs) == len(with_ov)
    calls = list(dict.fromkeys(r["overlap_call"] for r in with_ov if r.get("overlap_call")))
    return (
        median_known([r["overlap"] for r in with_ov]),
        min(lows) if tested else None,
        max(highs) if tested else None,
        " / ".join(calls) if calls else None,
    )


def has_axis(runs):
    """Whether any successful write ran with --compute or --async."""
    return any(
        r["status"] == "ok"
        and r["write_bytes"]
        and (r.get("compute_seconds") or r.get("async_write"))
        for r in runs
    )


# the record's MPI-IO layer of a run that used none, or did not say (adios2)
UNKNOWN_LAYER = (None, "-", "?")


def _series(r, layers):
    """The series of a run without the compute and async axes ("mpiio
    indep"), with its MPI-IO layer when the kernel's runs used several."""
    words = [t for t in (r["variant"] or "").split() if not t.startswith(AXES)]
    name = palette.series_name(r["backend"], " ".join(words))
    known = {x for x in layers if x not in UNKNOWN_LAYER}
    if len(known) > 1 and r.get("mpiio") not in UNKNOWN_LAYER:
        name += f" [{r['mpiio']}]"
    return name


def _num(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


def interval_text(overlap, lo, hi):
    """ "0.82 [0.71, 0.90]", or the overlap alone where no interval was tested."""
    if overlap is None:
        return "-"
    if lo is None or hi is None:
        return f"{overlap:.2f}"
    return f"{overlap:.2f} [{lo:.2f}, {hi:.2f}]"


def cases(runs, order=()):
    """One dict per write case of the runs (successful runs only), kernels
    in `order` (the report's: the campaign file's), then each case by its
    place in the file (runs.case_index), then by compute time and async."""
    groups = {}
    for r in runs:
        if r["status"] == "ok" and r["write_bytes"]:
            groups.setdefault(r["case_hash"], []).append(r)
    layers = {}
    for rs in groups.values():
        for r in rs:
            layers.setdefault(r["label"] or r["kernel"], set()).add(r.get("mpiio"))
    out = []
    for rs in groups.values():
        first = rs[0]
        label = first["label"] or first["kernel"]
        with_ov = [r for r in rs if r.get("overlap") is not None]
        ov, lo, hi, call = summary(rs) or (None, None, None, None)
        wheres = list(dict.fromkeys(r["overlap_where"] for r in with_ov if r.get("overlap_where")))
        out.append(
            {
                "label": label,
                "series": _series(first, layers.get(label, set())),
                "backend": first["backend"],
                "ranks": first["ranks"],
                "compute": first.get("compute_seconds") or 0.0,
                "async": bool(first.get("async_write")),
                "exposed": median_known([r.get("exposed_io_seconds") for r in rs]),
                "exposed_sync": median_known([r.get("exposed_sync_seconds") for r in with_ov]),
                "overlap": ov,  # several runs of a case: the median, the span of intervals
                "lo": lo,
                "hi": hi,
                "call": call,
                "where": " / ".join(wheres) if wheres else None,
                "runs": len(rs),
                "over": next((r["oversubscribed"] for r in rs if r.get("oversubscribed")), None),
                "layers": sorted(x for x in layers.get(label, set()) if x not in UNKNOWN_LAYER),
                "index": min((r.get("case_index") or 1 << 30) for r in rs),
            }
        )
    order = list(order)
    rank = {k: order.index(k) if k in order else len(order) for k in {c["label"] for c in out}}
    # stable: the runs' order among equals
    out.sort(key=lambda c: (rank[c["label"]], c["index"], c["compute"], c["async"]))
    return out


def table_rows(mine):
    """(headers, rows, row classes) of one kernel's cases."""
    several = len({c["ranks"] for c in mine}) > 1
    headers = ["series", "compute s/step", "async", "exposed I/O s", "synchronous reference s"]
    headers += ["overlap [95% interval]", "call", "where", "runs", "cores"]
    rows, classes = [], []
    for c in mine:
        rows.append(
            [
                c["series"] + (f" n{c['ranks']}" if several else ""),
                _num(c["compute"], "g"),
                "on" if c["async"] else "off",
                _num(c["exposed"], ".3g"),
                _num(c["exposed_sync"], ".3g"),
                interval_text(c["overlap"], c["lo"], c["hi"]) if c["async"] else "-",
                c["call"] or "-",
                c["where"] or "-",
                c["runs"],
                c["over"] or "-",
            ]
        )
        classes.append("nooverlap" if c["call"] == "no overlap" else "")
    return headers, rows, classes


def sections(runs, pdir, draw, order=()):
    """Per kernel with a compute or async axis: {label, notes, table parts,
    png, labelled}, kernels in `order`. draw(label, points, path) draws the
    figure (plots.py) and returns (path or None, [labels beside points])."""
    if not has_axis(runs):
        return []
    every = cases(runs, order)
    out = []
    for n, label in enumerate(dict.fromkeys(c["label"] for c in every)):
        mine = [c for c in every if c["label"] == label]
        points = [c for c in mine if c["async"] and c["overlap"] is not None]
        several = len({c["ranks"] for c in points}) > 1
        for c in points:
            c["point_series"] = c["series"] + (f" n{c['ranks']}" if several else "")
        png, labelled = draw(label, points, pdir / f"overlap-{n + 1}.png") if points else (None, [])
        headers, rows, classes = table_rows(mine)
        over = sorted({c["over"] for c in mine if c["over"]})
        notes = []
        if mine[0]["layers"]:
            notes.append(f"MPI-IO layer: {', '.join(mine[0]['layers'])}")
        if over:
            notes.append(
                f"{'; '.join(over)}: more ranks than cores, so the computation and the "
                "library's background work competed for cores"
            )
        if any(c["async"] for c in mine) and not points:
            notes.append("no async run carries an overlap (a record from before --async-reference)")
        out.append(
            {
                "label": label,
                "notes": notes,
                "oversubscribed": over,
                "headers": headers,
                "rows": rows,
                "classes": classes,
                "png": png,
                "labelled": labelled,
            }
        )
    return out
