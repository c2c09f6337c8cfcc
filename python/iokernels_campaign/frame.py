# SPDX-License-Identifier: BSD-3-Clause
"""Runs as pandas frames: the long table of bandwidths (one row per run and
operation) behind the report's per-kernel tables and figures, the pivots of
those tables, the null backend's overhead, the comparison of two campaigns,
and the export (one row per pass)."""

import pandas as pd

from . import rules

MIB = 1048576.0

# swept option values as the words an I/O person uses
WORDS = {
    "independent=off": "coll",
    "independent=on": "indep",
    "io-type=coll": "coll",
    "io-type=ind": "indep",
    "io-type=indep": "indep",
}

# a ratio of B to A within this band of 1 is marked "same"
SAME_BAND = 0.05


def series_name(backend, variant):
    """'mpiio coll' rather than 'mpiio independent=off'."""
    words = [WORDS.get(t, t) for t in (variant or "").split()]
    return " ".join([backend, *words])


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
        }
        if r["write_bytes"]:
            rows.append(
                base
                | {
                    "op": "write",
                    "mib_s": (r["write_bandwidth"] or 0.0) / MIB,
                    "seconds": r["write_time"],
                    "ceiling_mib_s": (r["ceiling_bandwidth"] or 0.0) / MIB or None,
                    "fraction": r["ceiling_fraction"],
                    "cached": False,
                }
            )
        if r["read_bytes"]:
            rows.append(
                base
                | {
                    "op": "read",
                    "mib_s": (r["read_bandwidth"] or 0.0) / MIB,
                    "seconds": r["read_time"],
                    "ceiling_mib_s": None,
                    "fraction": None,
                    "cached": r.get("read_from_storage") == 0,
                }
            )
    cols = "label backend series ranks null op mib_s seconds ceiling_mib_s fraction cached"
    return pd.DataFrame(rows, columns=cols.split())


def case_stats(bw):
    """Per (label, series, ranks, op): median, min, max over the iterations,
    the median ceiling and fraction, and whether any read came from the page
    cache. The order of first appearance is kept."""
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
        ceiling=("ceiling_mib_s", "median"),
        fraction=("fraction", "median"),
        cached=("cached", "any"),
    )
    return out.reset_index()


def best(stats):
    """Per (label, ranks, op): the series with the highest median among the
    reads that came from storage (all of them when none did)."""
    out = {}
    for key, g in stats.groupby(["label", "ranks", "op"], sort=False):
        pool = g[~g["cached"]] if (~g["cached"]).any() else g
        out[key] = pool.loc[pool["median"].idxmax(), "series"]
    return out


def compare(runs_a, runs_b, summarize):
    """Cases present in both lists (same case hash): medians, ratio b/a and a
    mark (better, worse, same within SAME_BAND). Bandwidth: higher is better."""
    a = {s.case_hash: s for s in summarize([r for r in runs_a if r["status"] == "ok"])}
    b = {s.case_hash: s for s in summarize([r for r in runs_b if r["status"] == "ok"])}
    rows = []
    for h, sa in a.items():
        sb = b.get(h)
        if sb is None:
            continue
        ratio = sb.bandwidth / sa.bandwidth if sa.bandwidth and sb.bandwidth else None
        if ratio is None:
            mark = "na"
        elif ratio > 1 + SAME_BAND:
            mark = "better"
        elif ratio < 1 - SAME_BAND:
            mark = "worse"
        else:
            mark = "same"
        rows.append(
            {
                "kernel": sa.label,
                "series": series_name(sa.backend, sa.variant),
                "ranks": sa.ranks,
                "mode": sa.mode,
                "a_mib_s": sa.bandwidth / MIB if sa.bandwidth else None,
                "b_mib_s": sb.bandwidth / MIB if sb.bandwidth else None,
                "ratio": ratio,
                "mark": mark,
                "cached": sa.cached_read or sb.cached_read,
            }
        )
    return pd.DataFrame(rows), len(a) - len(rows), len(b) - len(rows)


# run columns carried into every exported pass row
RUN_EXPORT = (
    "campaign campaign_id run_id case_hash kernel label backend ranks variant mode iteration "
    "io api nprocs host nodes date fs_type fsync iokernels_version backend_version mpi_version "
    "read_from_storage verify_ok hostnames ranks_per_node slurm_job_id slurm_step_id "
    "lustre_stripe_count lustre_stripe_size_bytes lustre_status env"
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
