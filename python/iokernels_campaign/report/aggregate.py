# SPDX-License-Identifier: BSD-3-Clause
"""Runs grouped by case (same kernel, ranks, options and mode: same case
hash), medians over their successful iterations. Shared by the terminal
tables, the plots and the HTML report."""

import statistics
from dataclasses import dataclass, field

from .palette import order_key, series_name


@dataclass
class CaseSummary:
    case_hash: str
    kernel: str
    label: str
    backend: str
    ranks: int
    variant: str
    mode: str
    io: str | None = None
    api: str | None = None
    runs: int = 0
    ok: int = 0
    write_bw: float | None = None  # bytes/s, medians over the successful runs
    read_bw: float | None = None
    ceiling_bw: float | None = None  # the case's one ceiling (pool_ceilings), of its mode
    ceiling_fraction: float | None = None  # the shown median over the shown ceiling
    ceiling_samples: int = 0  # runs whose probe samples the ceiling pools
    ceilings: list = field(default_factory=list)  # this series' runs' own ceilings
    ceiling_above: str | None = None  # why a run ran above its ceiling (the first such run)
    ceiling_margin: float | None = None  # the records' thresholds.ceiling_margin (margin_of)
    rss_min: float | None = None
    rss_avg: float | None = None
    rss_max: float | None = None
    bytes: int | None = None
    verified: bool | None = None  # every successful run checked, no mismatch
    fsync: bool | None = None
    # reads: True every successful run read from storage, False some read came
    # from the page cache (OS read_bytes under the record's from_storage_fraction
    # of the bytes read), None unknown
    from_storage: bool | None = None
    from_storage_fraction: float | None = None  # the records' threshold of that call
    oversubscribed: str | None = None  # "oversubscribed (R ranks on C cores)": a run's record
    phases: dict = field(default_factory=dict)  # phase -> median job time (s)
    phase_io: dict = field(default_factory=dict)  # phase -> counted as I/O time
    errors: list = field(default_factory=list)  # (exit code, error) of failed runs

    @property
    def bandwidth(self):
        """The figure of the mode: read bandwidth for reads, else write."""
        return self.read_bw if self.mode == "read" else self.write_bw

    @property
    def cached_read(self):
        """A read case whose figure is (partly) the page cache's, not storage's."""
        return self.mode in ("read", "both") and self.from_storage is False

    @property
    def series(self):
        """What distinguishes cases of one kernel at one rank count, in the
        words every table, figure and CSV of a report uses ("mpiio coll")."""
        return series_name(self.backend, self.variant)


def median_known(values):
    """The median of the values that are not None, or None."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(runs, phases_by_run=None):
    """runs: rows of Store.runs(); phases_by_run: Store.phases(). One
    CaseSummary per case hash, in the order the cases first appear."""
    phases_by_run = phases_by_run or {}
    groups = {}
    for r in runs:
        groups.setdefault(r["case_hash"], []).append(r)
    out = []
    for h, rows in groups.items():
        first = rows[0]
        s = CaseSummary(
            h,
            first["kernel"],
            first["label"] or first["kernel"],
            first["backend"],
            first["ranks"],
            first["variant"] or "",
            first["mode"],
        )
        good = [r for r in rows if r["status"] == "ok"]
        s.runs, s.ok = len(rows), len(good)
        s.errors = [(r["exit_code"], r["error"]) for r in rows if r["status"] != "ok"]
        if good:
            s.io, s.api = good[-1]["io"], good[-1]["api"]
            s.write_bw = median_known([r["write_bandwidth"] for r in good if r["write_bytes"]])
            s.read_bw = median_known([r["read_bandwidth"] for r in good if r["read_bytes"]])
            key = "ceiling_read_bandwidth" if s.mode == "read" else "ceiling_bandwidth"
            s.ceilings = [r.get(key) for r in good if r.get(key)]
            s.ceiling_above = next(
                (r["ceiling_above"] for r in good if r.get("ceiling_above")), None
            )
            s.ceiling_margin = margin_of(good)
            s.rss_min = median_known([r["peak_rss_min"] for r in good])
            s.rss_avg = median_known([r["peak_rss_avg"] for r in good])
            s.rss_max = median_known([r["peak_rss_max"] for r in good])
            s.bytes = good[-1]["write_bytes"] or good[-1]["read_bytes"]
            if all(r["verify_enabled"] for r in good):
                s.verified = all(r["verify_ok"] for r in good)
            s.fsync = bool(good[-1]["fsync"])
            sources = [r.get("read_from_storage") for r in good if r["read_bytes"]]
            s.from_storage_fraction = max(
                (r["from_storage_fraction"] for r in good if r.get("from_storage_fraction")),
                default=None,
            )
            s.oversubscribed = oversubscribed_of(good)
            if sources and all(v is not None for v in sources):
                s.from_storage = all(sources)
            for r in good:
                for n, (_, io) in phases_by_run.get(r["id"], {}).items():
                    s.phase_io[n] = io
            s.phases = {
                n: median_known([phases_by_run.get(r["id"], {}).get(n, (0.0, io))[0] for r in good])
                for n, io in s.phase_io.items()
            }
        out.append(s)
    pool_ceilings(out)
    # one order everywhere: kernels in the campaign file's order (an
    # interleaved session runs them in any order), then ranks, then the
    # series in the palette's order (backend, variant), then the mode
    first = kernel_order(out, runs)
    modes = {"write": 0, "both": 1, "read": 2}
    out.sort(
        key=lambda s: (first[s.label], s.ranks, order_key(s.series), modes.get(s.mode, 3), s.mode)
    )
    return out


def kernel_order(summaries, runs):
    """{label: rank}: kernels by the first place one of their cases has in
    its campaign file (runs.case_index); runs stored before that column
    (None) follow, in the order they first appear."""
    index = {}
    for r in runs:
        i = r.get("case_index")
        if i is not None:
            key = (r.get("campaign_id") or "", i)
            index[r["label"] or r["kernel"]] = min(index.get(r["label"] or r["kernel"], key), key)
    appear = list(dict.fromkeys(s.label for s in summaries))
    later = (chr(0x10FFFF), 0)
    ordered = sorted(appear, key=lambda k: (index.get(k, later), appear.index(k)))
    return {k: n for n, k in enumerate(ordered)}


def ceiling_case(s):
    """The case a ceiling belongs to: kernel, ranks, operation and its
    durability (writes: --fsync or not) or read kind (from storage or the
    page cache): every backend and variant of it shares one ceiling."""
    if s.mode == "read":
        return (s.label, s.ranks, "read", "cache" if s.from_storage is False else "storage")
    return (s.label, s.ranks, "write", "fsync" if s.fsync else "no fsync")


def pool_ceilings(summaries):
    """One ceiling per ceiling_case: the best of every probe sample its runs
    took (each run's record keeps the best of its own samples), whichever
    backend's run took it; each case's fraction is then its shown median
    over that shown ceiling (shown_fraction)."""
    pools = {}
    for s in summaries:
        pools.setdefault(ceiling_case(s), []).extend(s.ceilings)
    for s in summaries:
        pool = pools[ceiling_case(s)]
        s.ceiling_bw = max(pool) if pool else None
        s.ceiling_samples = len(pool)
        s.ceiling_fraction = shown_fraction(s.bandwidth, s.ceiling_bw)


def shown_fraction(bandwidth, ceiling, scale=1048576.0):
    """The fraction as printed: the median and the ceiling rounded as the
    tables show them (MiB/s, 1 decimal), then divided, so that the printed
    fraction is exactly the shown median over the shown ceiling."""
    if not bandwidth or not ceiling or bandwidth != bandwidth or ceiling != ceiling:
        return None
    c = round(ceiling / scale, 1)
    return round(bandwidth / scale, 1) / c if c > 0 else None


# The ceiling margin of records written before the record carried it
# (thresholds.ceiling_margin, src/core/measure/measure.h): the only copy, a fallback.
MARGIN_BEFORE_RECORDS_SAID = 1.02


def margin_of(runs):
    """The ceiling margin the runs' records carry (the binary's, defined in
    C), or the fallback for records from before it was recorded."""
    said = [r.get("ceiling_margin") for r in runs if r.get("ceiling_margin")]
    return max(said) if said else MARGIN_BEFORE_RECORDS_SAID


def oversubscribed_of(runs):
    """The words of the first run whose record says it was oversubscribed
    ("oversubscribed (R ranks on C cores)"), or None."""
    return next((r["oversubscribed"] for r in runs if r.get("oversubscribed")), None)


def cache_rule(fractions):
    """The binary's rule for a read served from the page cache, in its words:
    "OS read_bytes under 90% of the bytes read", the share from the records'
    thresholds.from_storage_fraction (store.runs gives 0.5 for records from
    before it was recorded, what the binary used then)."""
    shares = sorted({f for f in fractions if f})
    if not shares:
        return "OS read_bytes under the records' share of the bytes read"
    return f"OS read_bytes under {' or '.join(f'{100 * f:.0f}%' for f in shares)} of the bytes read"


def fraction_text(fraction, above=None, fmt_spec=".2f", margin=None):
    """A fraction of the ceiling as text, with "!" when a run ran above its
    ceiling or the figure shown is above it (past `margin`, the records'
    margin_of): never shown silently."""
    if fraction is None or fraction != fraction:
        return "-"
    limit = margin if margin and margin == margin else MARGIN_BEFORE_RECORDS_SAID  # NaN: none
    flag = (isinstance(above, str) and above) or fraction > limit
    return f"{fraction:{fmt_spec}}" + ("!" if flag else "")


ABOVE_NOTE = "! above its ceiling: the ceiling is the best of the probe's samples; see the reason"


def kernels(summaries):
    """Kernel labels in the summaries' order (summarize: the campaign file's)."""
    return list(dict.fromkeys(s.label for s in summaries))


# docs/measurement.md: building requests, generating data, checking and the
# emulated computation (--compute) are not I/O.
NOT_IO = {"requests", "datagen", "check", "compute"}


def mislabelled_phases(summaries):
    """Phase names that the records flag as I/O although the documentation says they
    are not: a sign that the record's phase names and flags disagree."""
    return sorted({n for s in summaries for n, io in s.phase_io.items() if io and n in NOT_IO})
