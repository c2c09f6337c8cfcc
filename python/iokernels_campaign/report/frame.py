# SPDX-License-Identifier: BSD-3-Clause
"""Runs as pandas frames: the long table of bandwidths (one row per run and
operation) behind the report's per-kernel tables and figures, the pivots of
those tables, the null backend's overhead, the comparison of two campaigns,
and the export (one row per pass)."""

import statistics
from dataclasses import dataclass

import pandas as pd

from ..spec import rules
from . import overlap, timing, verdict
from .aggregate import shown_fraction
from .palette import WORDS, series_name  # noqa: F401 (series_name: the one naming)

MIB = 1048576.0


def sweep_values(variant):
    """{option: value} of a case's variant string ('independent=off io-type=coll')."""
    out = {}
    for token in (variant or "").split():
        key, _, value = token.partition("=")
        out[key] = value
    return out


def bandwidths(runs):
    """One row per successful run and operation (write, read) that moved
    data: label, backend, series, ranks, op, mib_s, ceiling_mib_s,
    fraction (writes), cached (reads the page cache served), null."""
    rows = []
    for r in runs:
        if r["status"] != "ok":
            continue
        base = {
            "label": r["label"] or r["kernel"],
            "backend": r["backend"],
            "series": series_name(r["backend"], r["variant"]),
            "ranks": r["ranks"],
            "null": rules.moves_no_data(r["backend"]),
            "ran": r.get("ran", ""),
            "margin": r.get("ceiling_margin"),  # the record's; None before records said
            "over": r.get("oversubscribed"),  # "oversubscribed (R ranks on C cores)" or None
            "started": r.get("started"),
            "elapsed": r.get("elapsed"),
        }
        if r["write_bytes"]:
            rows.append(
                base
                | {
                    "op": "write",
                    "kind": "fsync" if r.get("fsync") else "no fsync",
                    "mib_s": (r["write_bandwidth"] or 0.0) / MIB,
                    "seconds": r["write_time"],
                    "ceiling_mib_s": (r["ceiling_bandwidth"] or 0.0) / MIB or None,
                    "fraction": r["ceiling_fraction"],
                    "above": r.get("ceiling_above"),
                    "cached": False,
                }
            )
        if r["read_bytes"]:
            rows.append(
                base
                | {
                    "op": "read",
                    "kind": "cache" if r.get("read_from_storage") == 0 else "storage",
                    "mib_s": (r["read_bandwidth"] or 0.0) / MIB,
                    "seconds": r["read_time"],
                    "ceiling_mib_s": (r.get("ceiling_read_bandwidth") or 0.0) / MIB or None,
                    "fraction": (
                        r["read_bandwidth"] / r["ceiling_read_bandwidth"]
                        if r.get("ceiling_read_bandwidth") and r["read_bandwidth"]
                        else None
                    ),
                    "above": r.get("read_ceiling_above"),
                    "cached": r.get("read_from_storage") == 0,
                }
            )
    cols = (
        "label backend series ranks null op kind mib_s seconds ceiling_mib_s fraction above "
        "cached ran margin over started elapsed"
    )
    return pd.DataFrame(rows, columns=cols.split())


def case_stats(bw):
    """Per (label, series, ranks, op): median, min, max over the iterations,
    the case's one ceiling (the best probe sample of every run of that
    label, ranks, op and kind, every backend's: aggregate.pool_ceilings) and
    the fraction as shown (the shown median over the shown ceiling), and
    whether any read came from the page cache. The order of first
    appearance is kept."""
    if bw.empty:
        return bw
    g = bw.groupby(["label", "series", "ranks", "op"], sort=False)
    out = g.agg(
        backend=("backend", "first"),
        null=("null", "first"),
        median=("mib_s", "median"),
        low=("mib_s", "min"),
        high=("mib_s", "max"),
        n=("mib_s", "size"),
        seconds=("seconds", "median"),
        kind=("kind", "first"),
        above=("above", lambda v: next((x for x in v if isinstance(x, str) and x), None)),
        cached=("cached", "any"),
        margin=("margin", "max"),
        over=("over", lambda v: next((x for x in v if isinstance(x, str) and x), None)),
    )
    out = out.reset_index()
    pooled = bw.groupby(["label", "ranks", "op", "kind"], sort=False)["ceiling_mib_s"]
    best = pooled.max().rename("ceiling")
    samples = pooled.count().rename("ceiling_runs")
    out = out.join(best, on=["label", "ranks", "op", "kind"])
    out = out.join(samples, on=["label", "ranks", "op", "kind"])
    out["fraction"] = [
        shown_fraction(m, c, scale=1.0) if c == c else None
        for m, c in zip(out["median"], out["ceiling"], strict=True)
    ]
    return out


def _runs_of(bw, key, series, column="mib_s"):
    """The per-run MiB/s of one series at (label, ranks, op)."""
    if bw is None:
        return []
    m = (bw["label"] == key[0]) & (bw["ranks"] == key[1]) & (bw["op"] == key[2])
    return list(bw[m & (bw["series"] == series)][column])


def _when(bw, key, series):
    """The runs of one series as {started, elapsed} (timing.py)."""
    starts = _runs_of(bw, key, series, "started")
    took = _runs_of(bw, key, series, "elapsed")
    return [{"started": s, "elapsed": e} for s, e in zip(starts, took, strict=True)]


@dataclass
class Winner:
    series: str  # the highest median
    ties: list  # series not told apart from it by the runs' spread (or untested)
    against: str | None = None  # the runner-up
    ratio: object = None  # verdict.Ratio of the winner over the runner-up

    @property
    def clear(self):
        """Faster than every other series beyond the runs' spread (or alone)."""
        return not self.ties


def best(stats, bw=None):
    """Per (label, ranks, op): the series with the highest median among the
    reads that came from storage (all of them when none did), and those it
    is not faster than beyond the runs' spread (verdict.py): with `bw`
    (frame.bandwidths, one row per run), each other series' runs against
    the winner's; without, every other series is untested."""
    out = {}
    for key, g in stats.groupby(["label", "ranks", "op"], sort=False):
        pool = g[~g["cached"]] if (~g["cached"]).any() else g
        pool = pool.sort_values("median", ascending=False, kind="stable")
        names = list(pool["series"])
        win = Winner(names[0], [])
        if len(names) > 1:
            win.against = names[1]

            mine = _runs_of(bw, key, names[0])
            for other in names[1:]:
                r = verdict.ratio(mine, _runs_of(bw, key, other)) if bw is not None else None
                if r is not None and "started" in bw:  # a winner only over interleaved runs
                    r.why = timing.apart(
                        _when(bw, key, names[0]), _when(bw, key, other), names[0], other, True
                    )
                if other == names[1]:
                    win.ratio = r
                if r is None or r.call != "higher":
                    win.ties.append(other)
        out[key] = win
    return out


def case_key(r):
    """What makes two runs the same case across stores and JSON Lines files:
    what ran (the kernel and its options, less where it stored: record.what_ran),
    the backend, the ranks and the mode; the store's case hash when the run
    has no record."""
    return (r.get("ran") or r["case_hash"], r["backend"], r["ranks"], r["mode"])


def _bandwidth(r):
    return r["read_bandwidth"] if r["mode"] == "read" else r["write_bandwidth"]


MARKS = {"higher": "better", "lower": "worse", "tied": "same", "untested": "untested"}


def compare(runs_a, runs_b):
    """Cases present in both lists (frame.case_key): medians, ratio b/a and
    a mark called by verdict.py: better or worse only where the exact
    Mann-Whitney test gives p <= 0.05 (4 or more runs on each side), same
    where it does not, untested with fewer runs. Bandwidth:
    higher is better. Returns (frame, cases only in a, only in b)."""

    def groups(runs):
        out = {}
        for r in runs:
            if r["status"] == "ok" and _bandwidth(r):
                out.setdefault(case_key(r), []).append(r)
        return out

    a, b = groups(runs_a), groups(runs_b)
    rows = []
    for key, ga in a.items():
        gb = b.get(key)
        if gb is None:
            continue
        va, vb = [_bandwidth(r) for r in ga], [_bandwidth(r) for r in gb]
        ratio = verdict.ratio(vb, va)
        if ratio is not None:
            ratio.why = timing.apart(ga, gb)
        first = ga[0]
        rows.append(
            {
                "kernel": first["label"] or first["kernel"],
                "series": series_name(first["backend"], first.get("variant")),
                "ranks": first["ranks"],
                "mode": first["mode"],
                "a_mib_s": statistics.median(va) / MIB,
                "b_mib_s": statistics.median(vb) / MIB,
                "ratio": ratio.ratio if ratio else None,
                "hl": ratio.hl if ratio else None,
                "low": ratio.low if ratio else None,
                "high": ratio.high if ratio else None,
                "p": ratio.p if ratio else None,
                "why": ratio.why if ratio else None,
                "interval": ratio.text() if ratio else "",
                "n_a": len(va),
                "n_b": len(vb),
                "mark": MARKS[ratio.call] if ratio else "na",
                "cached": any(r.get("read_from_storage") == 0 for r in ga + gb),
                # (overlap, lo, hi, call) of async runs with --async-reference, else None
                "a_overlap": overlap.summary(ga),
                "b_overlap": overlap.summary(gb),
            }
        )
    common = len(rows)
    return pd.DataFrame(rows), len(a) - common, len(b) - common


# run columns carried into every exported pass row
RUN_EXPORT = (
    "campaign campaign_id run_id case_hash kernel label backend ranks variant mode iteration "
    "round position started "
    "io api nprocs host nodes date fs_type fsync iokernels_version backend_version mpi_version "
    "read_from_storage verify_ok hostnames ranks_per_node slurm_job_id slurm_step_id "
    "lustre_stripe_count lustre_stripe_size_bytes lustre_status env "
    "compute_seconds async_write exposed_io_seconds exposed_sync_seconds "
    "overlap overlap_lo overlap_hi overlap_call overlap_where"
).split()


def export(store, campaign=None):
    """One row per pass of every successful run: the run's identity, the
    campaign's sweep variables as columns (one per swept option), the pass's
    figures (bandwidth in MiB/s, times in seconds) and one column per phase
    (its job time in that pass, phase_NAME_seconds). Returns (frame, failed
    runs left out)."""
    runs = store.runs(campaign=campaign)
    ok = {r["id"]: r for r in runs if r["status"] == "ok"}
    ids = list(ok)
    passes, phases = store.passes(ids), store.phase_rows(ids)
    rows, sweeps = [], []
    for p in passes:
        r = ok[p["run_id"]]
        row = {c: r[c] for c in RUN_EXPORT if c in r} | {"run_id": r["id"]}
        row["series"] = series_name(r["backend"], r["variant"])
        for key, value in sweep_values(r["variant"]).items():
            name = key if key not in row else f"sweep_{key}"
            row[name] = value
            sweeps.append(name)
        for k, v in p.items():
            if k == "run_id":
                continue
            name = {"idx": "pass", "io_time": "io_seconds", "ceiling_time": "ceiling_seconds"}
            name = name.get(k, k)
            if k in ("bandwidth", "ceiling_bandwidth"):
                name, v = f"{k}_mib_s", None if v is None else v / MIB
            row[name] = v
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame, len(runs) - len(ok)
    first = ["run_id", *[c for c in RUN_EXPORT if c in frame.columns and c != "run_id"], "series"]
    swept = [c for c in dict.fromkeys(sweeps) if c in frame.columns]
    rest = [c for c in frame.columns if c not in first and c not in swept]
    frame = frame[first + swept + rest]
    if phases:
        ph = pd.DataFrame(phases)
        wide = ph.pivot_table(
            index=["run_id", "pass_idx"], columns="phase", values="job", aggfunc="sum", sort=False
        )
        wide.columns = [f"phase_{c}_seconds" for c in wide.columns]
        wide = wide.reset_index().rename(columns={"pass_idx": "pass"})
        frame = frame.merge(wide, on=["run_id", "pass"], how="left")
    return frame, len(runs) - len(ok)
