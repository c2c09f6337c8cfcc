# SPDX-License-Identifier: BSD-3-Clause
"""The JSON record of one run (src/core/record/json_record.c, schema_version 2,
schema/record.schema.json) as columns: the run's figures, one row per pass,
one row per pass and phase. The store keeps bandwidths in bytes/s (the
record's MiB/s times MIB) and times in seconds under its own column names."""

import json

SCHEMA_VERSION = 2
MIB = 1048576.0


def _bw(mib_s):
    """A record's MiB/s as the store's bytes/s."""
    return None if mib_s is None else mib_s * MIB


def _flag(value):
    """A record's boolean (or null) as an SQLite integer (or NULL)."""
    return None if value is None else int(value)


# the store's columns of a run's computation and overlap (store version 6)
OVERLAP_COLUMNS = {
    "compute_seconds": "REAL",  # --compute: seconds after each write step (the first step's)
    "async_write": "INTEGER",  # 1: --async, 0: not
    "exposed_io_seconds": "REAL",  # median over the (async) iterations, avg over ranks
    "exposed_sync_seconds": "REAL",  # median over the synchronous reference's iterations
    "overlap": "REAL",  # 1 - exposed async / exposed synchronous (the record's ratio)
    "overlap_lo": "REAL",  # its 95% interval, NULL when untested
    "overlap_hi": "REAL",
    "overlap_call": "TEXT",  # hidden, no overlap, more exposed, untested
    "overlap_where": "TEXT",  # wait or post: where the async write's time fell
    "overlap_line": "TEXT",  # the binary's report line
}


def _median_of(values):
    xs = sorted(v for v in values if isinstance(v, int | float) and not isinstance(v, bool))
    if not xs:
        return None
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


def _first_seconds(value):
    """--compute as the record keeps it ("0.05", "0.1,0.5", a number or a
    list) as the seconds of the first step, None without one."""
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, str):
        value = value.split(",")[0].strip()
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if x == x else None


def _pair(value):
    ok = isinstance(value, list) and len(value) == 2
    ok = ok and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    return (value[0], value[1]) if ok else (None, None)


def overlap_figures(r):
    """The record's computation and overlap as OVERLAP_COLUMNS (Nones where
    it has none): from options.core (compute, async), the write passes
    (exposed_io_seconds per rank, avg, summed per iteration) and the
    top-level "overlap" object an --async-reference run writes."""
    core = (r.get("options") or {}).get("core") or {}
    ov = r.get("overlap") if isinstance(r.get("overlap"), dict) else {}
    writes = [p for p in r.get("passes") or [] if isinstance(p, dict) and p.get("op") == "write"]
    per_iter = {}
    for p in writes:
        e = p.get("exposed_io_seconds")
        if isinstance(e, dict) and isinstance(e.get("avg"), int | float):
            per_iter[p.get("iteration", 0)] = per_iter.get(p.get("iteration", 0), 0.0) + e["avg"]
    exposed = _median_of(ov.get("exposed_async_seconds") or []) if ov else None
    if exposed is None:
        exposed = _median_of(per_iter.values())
    is_async = core.get("async") is True or any(p.get("async") is True for p in writes)
    lo, hi = _pair(ov.get("overlap_ci95"))
    return {
        "compute_seconds": _first_seconds(core.get("compute")),
        "async_write": int(is_async) if ("async" in core or writes) else None,
        "exposed_io_seconds": exposed,
        "exposed_sync_seconds": _median_of(ov.get("exposed_sync_seconds") or []),
        "overlap": ov.get("overlap") if isinstance(ov.get("overlap"), int | float) else None,
        "overlap_lo": lo,
        "overlap_hi": hi,
        "overlap_call": ov.get("call") if isinstance(ov.get("call"), str) else None,
        "overlap_where": ov.get("where") if isinstance(ov.get("where"), str) else None,
        "overlap_line": ov.get("line") if isinstance(ov.get("line"), str) else None,
    }


# column -> how to get it from the record; every figure of the record
RUN_COLUMNS = {
    "schema_version": lambda r: r["schema_version"],
    "io": lambda r: r["io"],
    "api": lambda r: r["api"],
    "nprocs": lambda r: r["nprocs"],
    "parse_time": lambda r: r["parse_seconds"],
    "write_bytes": lambda r: r["summary"]["write_bytes"],
    "write_time": lambda r: r["summary"]["write_seconds"],
    "write_bandwidth": lambda r: _bw(r["summary"]["write_bandwidth_mib_s"]),
    "read_bytes": lambda r: r["summary"]["read_bytes"],
    "read_time": lambda r: r["summary"]["read_seconds"],
    "read_bandwidth": lambda r: _bw(r["summary"]["read_bandwidth_mib_s"]),
    "peak_rss_max": lambda r: r["summary"]["peak_rss_max_bytes"],
    "peak_rss_min": lambda r: _peak_pass(r)["min"],
    "peak_rss_avg": lambda r: _peak_pass(r)["avg"],
    "verify_enabled": lambda r: int(r["verify"]["enabled"]),
    "verify_checked": lambda r: r["verify"]["values_checked"],
    "verify_mismatches": lambda r: r["verify"]["values_mismatched"],
    "verify_ok": lambda r: int(r["verify"]["ok"]),
    "ceiling_bytes": lambda r: _ceiling(r)[0],
    "ceiling_time": lambda r: _ceiling(r)[1],
    "ceiling_bandwidth": lambda r: _ceiling(r)[2],
    "ceiling_fraction": lambda r: _ceiling(r)[3],
    "ceiling_read_bandwidth": lambda r: _read_ceiling(r),
    "page_cache_suspect": lambda r: int(any(p.get("page_cache_suspect") for p in r["passes"])),
    # 1: every read pass came from storage, 0: some came from the page cache, NULL: no read
    "read_from_storage": lambda r: _flag(r["summary"]["read_from_storage"]),
    "os_write_bytes": lambda r: _os_sum(r, "write_bytes"),
    "os_read_bytes": lambda r: _os_sum(r, "read_bytes"),
    "iterations": lambda r: r["iterations"]["count"],
    "fsync": lambda r: int(r["options"]["core"].get("fsync") is True),
    "backend_version": lambda r: r["libraries"].get(r["backend"]),
    "mpi_version": lambda r: r["libraries"].get("mpi"),
    "host": lambda r: r["environment"]["hostnames"][0],
    "nodes": lambda r: r["environment"]["nodes"],
    "ranks_per_node": lambda r: r["environment"]["ranks_per_node"],
    # every node the run ran on, in rank order, as a JSON list
    "hostnames": lambda r: json.dumps(list(dict.fromkeys(r["environment"]["hostnames"]))),
    "slurm_job_id": lambda r: r["environment"]["slurm_job_id"],
    "slurm_step_id": lambda r: r["environment"]["slurm_step_id"],
    "date": lambda r: r["date"],
    "fs_type": lambda r: r["filesystem"]["type"],
    "fs_free_bytes": lambda r: r["filesystem"]["free_bytes"],
    "record_exit_code": lambda r: r["exit_code"],
    "iokernels_version": lambda r: r["iokernels_version"],
    # --compute and --async (docs/compute-async.md); the overlap of an
    # --async-reference run: its async and synchronous iterations, ABBA in one job
    **{name: (lambda r, name=name: overlap_figures(r)[name]) for name in OVERLAP_COLUMNS},
}

PASS_COLUMNS = (
    "idx op path bytes requests rank_bytes_min rank_bytes_avg rank_bytes_max io_time "
    "bandwidth peak_rss_min peak_rss_avg peak_rss_max ceiling_bytes ceiling_time "
    "ceiling_bandwidth ceiling_fraction checked mismatches first_bad from_storage "
    "from_storage_reason"
).split()
PHASE_COLUMNS = "pass_idx phase job rank_min rank_avg rank_max count io".split()


class RecordError(Exception):
    """A record this version cannot read."""


def _peak_pass(r):
    """Peak memory per rank (min/avg/max) of the pass that reached the highest."""
    return max((p["peak_rss_bytes"] for p in r["passes"]), key=lambda m: m["max"])


def _os_sum(r, key):
    """Bytes the operating system counted over all passes, None if unknown."""
    counts = [p["os_bytes"][key] for p in r["passes"] if "os_bytes" in p]
    return sum(counts) if counts else None


def _read_ceiling(r):
    """The read ceiling measured beside the read passes, of their kind
    (through the page cache, or past it after --drop-caches); older records:
    the O_DIRECT read."""
    bws = [
        _bw(c["read_bandwidth_mib_s"])
        for p in r["passes"]
        if p["op"] != "write"
        for c in [p.get("ceiling", {})]
        if c.get("read_kind", "none") != "none" or c.get("direct_read")
    ]
    return max(bws) if bws else None


# options of a run that say where and how it stored, not what ran; and
# --iterations, how many samples of it (each iteration is one)
_WHERE = {"--backend", "--json", "--dir", "--mode", "-f", "--iterations"}
_WHERE_FLAGS = {"--overwrite", "--quiet"}


def parsed(record):
    """A record given as its JSON text (or already parsed, to parse a stored
    record once for the several functions reading it) as a dict, or None."""
    if not isinstance(record, dict):
        try:
            record = json.loads(record or "{}")
        except (TypeError, ValueError):
            return None
    return record if isinstance(record, dict) else None


def what_ran(record_text):
    """The kernel and its options as the run got them, less where and into
    which backend it stored ("btio --grid 16,16,16 --dumps 2 --verify"), so
    that a report section names what ran; "" when unknown."""
    r = parsed(record_text)
    if r is None or not isinstance(r.get("argv") or [], list):
        return ""
    argv, out, skip = r.get("argv") or [], [], False
    for a in argv:
        if skip:
            skip = False
            continue
        a = str(a)
        name = a.split("=", 1)[0]
        if name in _WHERE:
            skip = "=" not in a
            continue
        if name not in _WHERE_FLAGS:
            out.append(a)
    return " ".join([str(r.get("kernel", "")), *out]).strip()


def is_jsonl(path):
    """Whether a file holds JSON Lines records (its first non-blank byte is
    '{'), not an SQLite store."""
    with open(path, "rb") as f:
        head = f.read(4096).lstrip()
    return head[:1] == b"{"


def runs_from_jsonl(path):
    """The records of a --json file (JSON Lines: one run per line) as run
    rows like a store's, so that compare takes them as it takes a store:
    every figure of run_columns, with the case told by what ran (what_ran),
    its backend, ranks and mode; a record of --iterations N gives N rows,
    one per iteration (iteration_figures), since each iteration is one
    sample of the case. A line that is not a record of this
    schema is a RecordError naming the file and line."""
    runs = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                if r.get("kernel") == "ceiling":
                    continue  # `iokernels ceiling`'s own record: no case
                cols = run_columns(r)
                ok = r.get("exit_code") == 0
                samples = iteration_figures(r) if ok else [{}]
            except (ValueError, AttributeError, KeyError, TypeError) as e:
                raise RecordError(f"{path}:{n}: not a JSON record of iokernels ({e})") from None
            except RecordError as e:
                raise RecordError(f"{path}:{n}: {e}") from None
            for it, figures in enumerate(samples, 1):
                runs.append(
                    cols
                    | figures
                    | {
                        "id": len(runs) + 1,
                        "iteration": it,
                        "case_hash": "",
                        "kernel": r["kernel"],
                        "label": r["kernel"],
                        "backend": r["backend"],
                        "ranks": r["nprocs"],
                        "variant": "",
                        "mode": r["mode"],
                        "status": "ok" if ok else "failed",
                        "exit_code": r.get("exit_code"),
                        "error": None,
                        "ran": what_ran(line),
                        "ceiling_above": ceiling_above(line),
                        "read_ceiling_above": ceiling_above(line, ("read",)),
                    }
                )
    return runs


def iteration_figures(r):
    """Each iteration of a record (--iterations N) as its own sample: per
    iteration and operation, its passes' bytes over their I/O time (the
    record's own definition of an iteration's bandwidth), as the store's
    write/read bandwidth and time columns. One dict per iteration."""
    out = []
    for it in range(r["iterations"]["count"]):
        row = {}
        for op in ("write", "read"):
            ps = [p for p in r["passes"] if p["op"] == op and p["iteration"] == it]
            t = sum(p["io_seconds"] for p in ps)
            if ps and t > 0:
                row[f"{op}_time"] = t
                row[f"{op}_bandwidth"] = sum(p["bytes"] for p in ps) / t
        out.append(row)
    return out


def ceiling_margin(record):
    """The record's ceiling margin (thresholds.ceiling_margin: a pass is
    above its ceiling past ceiling x margin), None for a record written
    before the record carried it."""
    t = record.get("thresholds") if isinstance(record, dict) else None
    return t.get("ceiling_margin") if isinstance(t, dict) else None


# what a record written before the field used (src/core/measure/cache.c held 0.5)
FROM_STORAGE_BEFORE_RECORDS_SAID = 0.5


def from_storage_fraction(record):
    """The share of a read's bytes storage must deliver for the read to count
    as from storage (thresholds.from_storage_fraction); 0.5 for a record
    written before the record carried it; None without a record."""
    if not isinstance(record, dict):
        return None
    t = record.get("thresholds")
    got = t.get("from_storage_fraction") if isinstance(t, dict) else None
    return got if isinstance(got, (int, float)) else FROM_STORAGE_BEFORE_RECORDS_SAID


def oversubscribed(record):
    """(ranks, cores) of the most crowded node of a run whose record says
    environment.oversubscribed, cores None when node_cores is absent; None
    for a run that was not (or a record from before the field)."""
    env = record.get("environment") if isinstance(record, dict) else None
    if not isinstance(env, dict) or env.get("oversubscribed") is not True:
        return None
    nodes = [
        n
        for n in env.get("node_cores") or []
        if isinstance(n, dict) and isinstance(n.get("ranks"), int)
        and isinstance(n.get("usable_cores"), int) and n["usable_cores"] > 0
    ]  # fmt: skip
    if not nodes:
        return record.get("nprocs"), None
    worst = max(nodes, key=lambda n: n["ranks"] / n["usable_cores"])
    return worst["ranks"], worst["usable_cores"]


def oversubscribed_text(ranks, cores):
    """The words every report cell, headline and tune answer uses."""
    on = f"{cores} core{'s' if cores != 1 else ''}" if cores else "fewer cores"
    return f"oversubscribed ({ranks} ranks on {on})"


def ceiling_above(record_text, ops=("write",)):
    """Why a pass of a stored record whose op is in `ops` (write; read) ran
    above its ceiling (the record's reason), or None when none did."""
    r = parsed(record_text)
    passes = r.get("passes") if r is not None else None
    if not isinstance(passes, list):
        return None
    above = [
        p
        for p in passes
        if isinstance(p, dict)
        and isinstance(p.get("ceiling"), dict)
        and p["ceiling"].get("above")
        and p.get("op") in ops
    ]
    if not above:
        return None
    c = above[0]["ceiling"]
    fraction = c.get("fraction")
    times = f"{fraction:.2f}x" if isinstance(fraction, int | float) else "above"
    return f"{above[0]['op']} {times} its ceiling: {c.get('reason', '?')}"


def _ceiling(r):
    """The write passes' ceilings: (bytes, time, bandwidth, fraction) as the
    record has them for one pass, added up over several (bytes / time), or
    Nones when no pass measured one."""
    cs = [(p, p["ceiling"]) for p in r["passes"] if "ceiling" in p and p["op"] == "write"]
    if not cs:
        return None, None, None, None
    if len(cs) == 1:
        c = cs[0][1]
        return c["bytes"], c["write_seconds"], _bw(c["write_bandwidth_mib_s"]), c["fraction"]
    nbytes = sum(c["bytes"] for _, c in cs)
    t = sum(c["write_seconds"] for _, c in cs)
    bw = nbytes / t if t > 0 else 0.0
    kbytes = sum(p["bytes"] for p, _ in cs)
    ktime = sum(p["io_seconds"] for p, _ in cs)
    kbw = kbytes / ktime if ktime > 0 else 0.0
    return nbytes, t, bw, (kbw / bw if bw > 0 else None)


def run_columns(record):
    if record.get("schema_version") != SCHEMA_VERSION:
        raise RecordError(
            f"JSON record schema_version {record.get('schema_version')!r}: "
            f"this campaign tool reads {SCHEMA_VERSION}"
        )
    try:
        return {name: get(record) for name, get in RUN_COLUMNS.items()}
    except (KeyError, TypeError, ValueError) as e:
        raise RecordError(f"JSON record lacks {e}") from None


def _spread(prefix, stats):
    """A per-rank statistic of the record ({min, avg, max}) as three columns."""
    return {f"{prefix}_{k}": stats[k] for k in ("min", "avg", "max")}


def pass_rows(record):
    rows, phases = [], []
    for i, p in enumerate(record["passes"]):
        c = p.get("ceiling", {})
        rows.append(
            {
                "idx": i,
                "op": p["op"],
                "path": p["path"],
                "bytes": p["bytes"],
                "requests": p["requests"],
                **_spread("rank_bytes", p["rank_bytes"]),
                "io_time": p["io_seconds"],
                "bandwidth": _bw(p["bandwidth_mib_s"]),
                **_spread("peak_rss", p["peak_rss_bytes"]),
                # the ceiling that judges this pass: the write, or the O_DIRECT read
                "ceiling_bytes": c.get("bytes"),
                "ceiling_time": c.get("write_seconds" if p["op"] == "write" else "read_seconds"),
                "ceiling_bandwidth": _bw(
                    c.get("write_bandwidth_mib_s" if p["op"] == "write" else "read_bandwidth_mib_s")
                ),
                "ceiling_fraction": c.get("fraction"),
                "checked": p.get("values_checked"),
                "mismatches": p.get("values_mismatched"),
                "first_bad": p.get("first_mismatch"),
                # reads only: 1 from storage, 0 page cache (OS read_bytes under
                # half), NULL where the counts cannot tell (read_source unknown)
                "from_storage": _flag(
                    None if p.get("read_source") == "unknown" else p.get("from_storage")
                ),
                "from_storage_reason": p.get("from_storage_reason"),
            }
        )
        for name, ph in p["phases"].items():
            phases.append(
                {
                    "pass_idx": i,
                    "phase": name,
                    "job": ph["job_seconds"],
                    **_spread("rank", ph["rank_seconds"]),
                    "count": ph["count"],
                    "io": int(ph["io"]),
                }
            )
    return rows, phases


# what the binary sets when the user sets nothing (src/core: the suite uses
# no shared file pointers, and lockedfile aborts on long paths): not a choice
# of the run, so not in its label
SUITE_SHAREDFP = "^lockedfile,individual"


def mpiio_layer(record_text):
    """The MPI-IO layer a stored record names, as text: OpenMPI's io
    component and the OMPIO parts set ("ompio fcoll=two_phase"); "ROMIO" when
    the MPI library has no other (null); "-" for records from before the
    field or none at all."""
    try:
        env = (parsed(record_text) or {}).get("environment", {})
        if "mpiio_layer" not in env:
            return "-"
        layer = env["mpiio_layer"]
        if layer is None:
            return "ROMIO"
        io = layer["io_component"] or "?"
        # fcoll, fbtl, fs and sharedfp are OMPIO's parts
        sets = [
            f"{k}={v}"
            for k, v in layer["settings"].items()
            if k != "io" and v and io == "ompio" and (k, v) != ("sharedfp", SUITE_SHAREDFP)
        ]
        return " ".join([str(io), *sets])
    except (ValueError, KeyError, TypeError, AttributeError):  # a damaged record
        return "-"
