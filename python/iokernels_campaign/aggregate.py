# SPDX-License-Identifier: BSD-3-Clause
"""Runs grouped by case (same kernel, ranks, options and mode: same case
hash), medians over their successful iterations. Shared by the terminal
tables, the plots and the HTML report."""

import statistics
from dataclasses import dataclass, field


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
    ceiling_bw: float | None = None
    ceiling_fraction: float | None = None
    rss_min: float | None = None
    rss_avg: float | None = None
    rss_max: float | None = None
    bytes: int | None = None
    verified: bool | None = None  # every successful run checked, no mismatch
    fsync: bool | None = None
    # reads: True every successful run read from storage, False some read came
    # from the page cache (OS read_bytes under half the bytes read), None unknown
    from_storage: bool | None = None
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
        """What distinguishes cases of one kernel at one rank count."""
        return self.backend + (f" {self.variant}" if self.variant else "")


def _median(values):
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
            s.write_bw = _median([r["write_bandwidth"] for r in good if r["write_bytes"]])
            s.read_bw = _median([r["read_bandwidth"] for r in good if r["read_bytes"]])
            s.ceiling_bw = _median([r["ceiling_bandwidth"] for r in good])
            s.ceiling_fraction = _median([r["ceiling_fraction"] for r in good])
            s.rss_min = _median([r["peak_rss_min"] for r in good])
            s.rss_avg = _median([r["peak_rss_avg"] for r in good])
            s.rss_max = _median([r["peak_rss_max"] for r in good])
            s.bytes = good[-1]["write_bytes"] or good[-1]["read_bytes"]
            if all(r["verify_enabled"] for r in good):
                s.verified = all(r["verify_ok"] for r in good)
            s.fsync = bool(good[-1]["fsync"])
            sources = [r.get("read_from_storage") for r in good if r["read_bytes"]]
            if sources and all(v is not None for v in sources):
                s.from_storage = all(sources)
            for r in good:
                for n, (_, io) in phases_by_run.get(r["id"], {}).items():
                    s.phase_io[n] = io
            s.phases = {
                n: _median([phases_by_run.get(r["id"], {}).get(n, (0.0, io))[0] for r in good])
                for n, io in s.phase_io.items()
            }
        out.append(s)
    return out


def kernels(summaries):
    """Kernel labels in order of appearance."""
    return list(dict.fromkeys(s.label for s in summaries))


# README: building requests, generating data and checking are not I/O.
NOT_IO = {"requests", "datagen", "check"}


def mislabelled_phases(summaries):
    """Phase names that the records flag as I/O although the README says they
    are not: a sign that the record's phase names and flags disagree."""
    return sorted({n for s in summaries for n, io in s.phase_io.items() if io and n in NOT_IO})
