# SPDX-License-Identifier: BSD-3-Clause
"""trace2replay: a Darshan log's DXT trace as a replay file (format version 2,
docs/trace-replay.md), for `iokernels replay FILE`.

Per traced file, its DXT_MPIIO records where the log has them (one
operation per MPI-IO call, at the byte offset Darshan recorded), else its
DXT_POSIX records (level posix, replayed as independent calls). DXT does not
say whether an MPI-IO call was collective: the MPI-IO counters of the file
do, per rank where the log keeps a record per rank, else summed over the
ranks (a shared record). A file's writes (reads) are collective when those
counters count collective calls (MPIIO_COLL_*, MPIIO_SPLIT_*) and no other
(MPIIO_INDEP_*, MPIIO_NB_*: nonblocking calls may be either) and every rank
of the trace made the same number of them; otherwise independent, said in
one line. DXT_MPIIO without offsets (Darshan built with OpenMPI records -1,
log format 1 none) is replaced by the file's DXT_POSIX records.

Everything else is dropped with one line each: metadata calls, STDIO, the
other modules, the POSIX calls beneath MPI-IO, zero-length calls."""

import math
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..base import extras, paths
from . import darshan_log

FORMAT_VERSION = 2
KINDS = ("write", "read")
MPIIO_COLL = {
    "write": ("MPIIO_COLL_WRITES", "MPIIO_SPLIT_WRITES"),
    "read": ("MPIIO_COLL_READS", "MPIIO_SPLIT_READS"),
}
MPIIO_OTHER = {
    "write": ("MPIIO_INDEP_WRITES", "MPIIO_NB_WRITES"),
    "read": ("MPIIO_INDEP_READS", "MPIIO_NB_READS"),
}
METADATA = {
    "POSIX": (
        ("POSIX_OPENS", "opens"),
        ("POSIX_FILENOS", "filenos"),
        ("POSIX_DUPS", "dups"),
        ("POSIX_SEEKS", "seeks"),
        ("POSIX_STATS", "stats"),
        ("POSIX_MMAPS", "mmaps"),
        ("POSIX_FSYNCS", "fsyncs"),
        ("POSIX_FDSYNCS", "fdatasyncs"),
        ("POSIX_RENAME_SOURCES", "renames"),
    ),
    "MPI-IO": (
        ("MPIIO_INDEP_OPENS", "independent opens"),
        ("MPIIO_COLL_OPENS", "collective opens"),
        ("MPIIO_VIEWS", "set_views"),
        ("MPIIO_SYNCS", "syncs"),
        ("MPIIO_HINTS", "opens with hints"),
    ),
}
# why a module other than POSIX, MPI-IO, STDIO and DXT is not replayed
OTHER_MODULES = {
    "H5F": "HDF5 file calls: the I/O they made is in the DXT trace below them",
    "H5D": "HDF5 dataset calls: the I/O they made is in the DXT trace below them",
    "PNETCDF_FILE": "PnetCDF file calls: the I/O they made is in the DXT trace below them",
    "PNETCDF_VAR": "PnetCDF variable calls: the I/O they made is in the DXT trace below them",
    "LUSTRE": "the traced files' striping, not operations",
    "HEATMAP": "a histogram of the same I/O",
    "DFS": "DAOS file system calls, which DXT does not trace",
    "DAOS": "DAOS object calls, which DXT does not trace",
}


class TraceError(Exception):
    """A log that cannot be converted: one printable line."""


def size_text(n):
    """4.0 KiB, 12 B: for the summary lines (the replay file keeps bytes)."""
    n = int(n)
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}"


def plural(n, word):
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


@dataclass
class Op:
    rank: int
    file_id: int  # the Darshan record id until files are numbered
    kind: str  # write, read
    level: str  # coll, indep, posix
    start: float
    end: float
    segs: tuple  # ((offset, length),) or () for a collective call without data
    seq: int = 0  # call order on its rank for equal start times


@dataclass
class Replay:
    nprocs: int
    source: str
    files: list = field(default_factory=list)  # (path, size) by replay file id
    ops: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # the lines printed: dropped, truncated
    coverage: tuple = ()  # (calls traced, calls the counters count) of a truncated trace


def _total(df, names):
    """The sum of some counters' columns per record, as ints (a counter an
    old log lacks counts 0; a negative value, invalid in Darshan, too)."""
    cols = [df[n].clip(lower=0) for n in names if n in df.columns]
    return sum(cols).astype("int64") if cols else df["id"] * 0


def _mpiio_levels(log):
    """(file id, rank or -1, kind) -> counts of collective and other calls."""
    df = log.counters.get("MPI-IO")
    out = {}
    if df is None:
        return out
    for kind in ("write", "read"):
        coll, other = _total(df, MPIIO_COLL[kind]), _total(df, MPIIO_OTHER[kind])
        for fid, rank, c, o in zip(df["id"], df["rank"], coll, other, strict=True):
            out[(int(fid), int(rank), kind)] = (int(c), int(o))
    return out


def _level_rule(levels, fid, rank, kind):
    """coll, indep or mixed, from the rank's own record, else the shared one."""
    coll, other = levels.get((fid, rank, kind), levels.get((fid, -1, kind), (0, 0)))
    if coll and other:
        return "mixed"
    return "coll" if coll else "indep"


def _has_offsets(records):
    """Whether every call with data has its offset (-1: not recorded)."""
    rows = [row for rec in records for rows in (rec.writes, rec.reads) for row in rows]
    return any(r[0] >= 0 for r in rows) and all(r[0] >= 0 for r in rows if r[1] > 0)


def _ops_of(records, level_of, zero):
    """The Ops of DXT records; zero-length calls of independent levels are
    counted in zero[0] and left out."""
    ops = []
    for rec in records:
        for kind, rows in (("write", rec.writes), ("read", rec.reads)):
            level = level_of(rec, kind)
            for offset, length, start, end in rows:
                if length <= 0:
                    if level != "coll":
                        zero[0] += 1
                        continue
                    segs = ()
                else:
                    segs = ((int(offset), int(length)),)
                ops.append(Op(rec.rank, rec.file_id, kind, level, start, end, segs))
    return ops


def _choose_levels(log, mpiio_recs, notes):
    """(file id, kind) -> coll or indep for the files replayed from DXT_MPIIO."""
    levels = _mpiio_levels(log)
    counts, rules = {}, {}
    for rec in mpiio_recs:
        for kind, rows in (("write", rec.writes), ("read", rec.reads)):
            if rows:
                key = (rec.file_id, kind)
                counts.setdefault(key, {})[rec.rank] = len(rows)
                rules.setdefault(key, set()).add(_level_rule(levels, rec.file_id, rec.rank, kind))
    chosen, mixed, uneven = {}, [], []
    for key, per_rank in counts.items():
        rule = rules[key]
        even = len(per_rank) == log.nprocs and len(set(per_rank.values())) == 1
        if rule == {"coll"} and even:
            chosen[key] = "coll"
        else:
            chosen[key] = "indep"
            if "mixed" in rule:
                mixed.append(key)
            elif "coll" in rule:
                uneven.append(key)
    if mixed:
        notes.append(
            f"independent: {plural(len(mixed), 'file access')} mixing collective and independent "
            "MPI-IO calls (DXT does not say which call was which)"
        )
    if uneven:
        notes.append(
            f"independent: {plural(len(uneven), 'file access')} whose collective calls not every "
            "rank made the same number of times (a communicator smaller than the job's?)"
        )
    return chosen


def _sum_rows(records):
    rows = [row for rec in records for rows in (rec.writes, rec.reads) for row in rows]
    return len(rows), sum(max(0, r[1]) for r in rows)


def _ranks_overlap(records):
    """Whether writes of two ranks cover a common byte. DXT_MPIIO holds a
    call's first byte and its length, not its file view: the calls of a
    noncontiguous view (BTIO's, a subarray's) look like overlapping
    contiguous ranges, which no replay can write as traced."""
    segs = sorted((o, o + n, rec.rank) for rec in records for o, n, _, _ in rec.writes if n > 0)
    top = []  # the largest end so far of the two ranks that reach furthest: [(end, rank)]
    for start, end, rank in segs:
        if any(e > start and r != rank for e, r in top):
            return True
        ends = {r: e for e, r in top}
        ends[rank] = max(end, ends.get(rank, end))
        top = sorted(((e, r) for r, e in ends.items()), reverse=True)[:2]
    return False


def _replace(fids, why, mpiio, posix, notes):
    """Says that the DXT_MPIIO of files fids is replaced by their DXT_POSIX."""
    if not fids:
        return
    n, nbytes = _sum_rows(r for r in mpiio if r.file_id in fids)
    notes.append(
        f"replaced: DXT_MPIIO of {plural(len(fids), 'file')} ({plural(n, 'call')}, "
        f"{size_text(nbytes)}) {why}: its DXT_POSIX records are replayed instead"
    )
    lost = fids - {r.file_id for r in posix}
    if lost:
        notes.append(
            f"dropped: {plural(len(lost), 'file')} of those, which the log has no DXT_POSIX "
            "records of"
        )


def _select(log, notes):
    """The Ops to replay, each file from DXT_MPIIO or DXT_POSIX."""
    posix = log.dxt.get("DXT_POSIX", [])
    mpiio = log.dxt.get("DXT_MPIIO", [])
    by_file = {}
    for rec in mpiio:
        by_file.setdefault(rec.file_id, []).append(rec)
    no_offsets = {fid for fid, recs in by_file.items() if not _has_offsets(recs)}
    why = "has no offsets (Darshan built with OpenMPI, or log format 1)"
    _replace(no_offsets, why, mpiio, posix, notes)
    overlap = {
        fid for fid, recs in by_file.items() if fid not in no_offsets and _ranks_overlap(recs)
    }
    why = "has writes of different ranks over the same bytes (noncontiguous file views)"
    _replace(overlap, why, mpiio, posix, notes)
    mpiio_files = set(by_file) - no_offsets - overlap
    kept = [r for r in mpiio if r.file_id in mpiio_files]
    chosen = _choose_levels(log, kept, notes)
    zero = [0]
    ops = _ops_of(kept, lambda rec, kind: chosen.get((rec.file_id, kind), "indep"), zero)
    beneath = [r for r in posix if r.file_id in mpiio_files]
    if beneath:
        n, nbytes = _sum_rows(beneath)
        files = len({r.file_id for r in beneath})
        notes.append(
            f"dropped: DXT_POSIX of {plural(files, 'file')} accessed through MPI-IO "
            f"({plural(n, 'call')}, {size_text(nbytes)}: the MPI-IO calls' own)"
        )
    ops += _ops_of([r for r in posix if r.file_id not in mpiio_files], lambda *_: "posix", zero)
    if zero[0]:
        notes.append(f"dropped: {plural(zero[0], 'zero-length call')} (nothing to replay)")
    return ops


def _untraced(log, traced, notes):
    """POSIX and MPI-IO files whose reads and writes DXT did not record."""
    for mod, calls, nbytes in (
        ("POSIX", ("POSIX_READS", "POSIX_WRITES"), ("POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN")),
        (
            "MPI-IO",
            sum((MPIIO_COLL[k] + MPIIO_OTHER[k] for k in KINDS), ()),
            ("MPIIO_BYTES_READ", "MPIIO_BYTES_WRITTEN"),
        ),
    ):
        df = log.counters.get(mod)
        if df is None:
            continue
        lost = ~df["id"].astype("uint64").isin(traced) & (_total(df, calls) > 0)
        if lost.any():
            files = df["id"][lost].nunique()
            n, total = int(_total(df, calls)[lost].sum()), int(_total(df, nbytes)[lost].sum())
            notes.append(
                f"not traced: {mod}, {plural(files, 'file')}, {plural(n, 'read/write')}, "
                f"{size_text(total)} that DXT did not record (its triggers, name exclusions "
                "or memory limit)"
            )


def _dropped_modules(log, notes):
    for mod, names in METADATA.items():
        df = log.counters.get(mod)
        if df is None:
            continue
        said = [f"{int(_total(df, (c,)).sum()):,} {what}" for c, what in names]
        said = [s for s in said if not s.startswith("0 ")]
        if said:
            notes.append(
                f"dropped: {mod} metadata calls: {', '.join(said)} (the replay opens each file "
                "once and closes it at the end)"
            )
    df = log.counters.get("STDIO")
    if df is not None:
        ops = int(_total(df, ("STDIO_READS", "STDIO_WRITES")).sum())
        nbytes = int(_total(df, ("STDIO_BYTES_READ", "STDIO_BYTES_WRITTEN")).sum())
        notes.append(
            f"dropped: STDIO, {plural(df['id'].nunique(), 'file')}, {plural(ops, 'operation')}, "
            f"{size_text(nbytes)} (DXT does not trace stdio streams)"
        )
    for mod, info in log.modules.items():
        if mod in darshan_log.COUNTER_MODULES or mod in darshan_log.DXT_MODULES:
            continue
        why = OTHER_MODULES.get(mod, "not file I/O that DXT traces")
        n = f", {plural(info['records'], 'record')}" if info["records"] else ""
        notes.append(f"dropped: {mod}{n} ({why})")


def _truncated(log, notes):
    """Notes of truncated DXT modules; (calls traced, calls counted) or ()."""
    coverage = ()
    counted = {"DXT_POSIX": ("POSIX", ("POSIX_READS", "POSIX_WRITES"))}
    counted["DXT_MPIIO"] = ("MPI-IO", sum((MPIIO_COLL[k] + MPIIO_OTHER[k] for k in KINDS), ()))
    for mod in darshan_log.DXT_MODULES:
        if log.modules.get(mod, {}).get("partial"):
            n = sum(len(r.writes) + len(r.reads) for r in log.dxt.get(mod, []))
            cmod, names = counted[mod]
            df = log.counters.get(cmod)
            of = (
                f" of the {int(_total(df, names).sum()):,} its {cmod} counters count"
                if df is not None
                else ""
            )
            ncounted = int(_total(df, names).sum()) if df is not None else 0
            share = f" ({100 * n / ncounted:.1f}% of the calls)" if ncounted >= n > 0 else ""
            notes.append(
                f"truncated: {mod} stopped when DXT's trace memory was full (a limit set when "
                f"Darshan is built: --with-mod-mem); converted as far as it goes: "
                f"{plural(n, 'call')}{of}{share}"
            )
            if ncounted >= n and ncounted > 0:
                coverage = (n, ncounted)
    return coverage


# paths no application wrote as its data: the MPI library's and the system's
SYSTEM_PREFIXES = (("/dev/shm/", "shared memory"), ("/proc/", "/proc"), ("/sys/", "/sys"))
# the suite's own outputs when the traced program is iokernels (its --json
# record, its --export-replay file)
SUITE_OUTPUTS = (".json", ".jsonl", ".replay")


def _left_out(path, exe):
    """Why a traced path is not the application's data, or None."""
    base = os.path.basename(path)
    if base.endswith(".sm") and ("ompi" in path or "sharedfp" in path):
        return "OpenMPI's shared-file-pointer files (.sm)"
    for prefix, what in SYSTEM_PREFIXES:
        if path.startswith(prefix):
            return what
    prog = os.path.basename(exe.split()[0]) if exe.split() else ""
    if prog == "iokernels" and base.endswith(SUITE_OUTPUTS):
        return "the suite's own outputs (--json, --export-replay)"
    return None


def _application_only(log, ops, notes):
    """The ops of application files; each kind left out is a note."""
    why = {}
    for fid in {op.file_id for op in ops}:
        w = _left_out(log.names.get(fid, ""), log.exe)
        if w:
            why[fid] = w
    kept = [op for op in ops if op.file_id not in why]
    for w in sorted(set(why.values())):
        fids = {f for f, v in why.items() if v == w}
        mine = [op for op in ops if op.file_id in fids]
        nbytes = sum(n for op in mine for _, n in op.segs)
        notes.append(
            f"left out: {plural(len(fids), 'file')} of {w}, {plural(len(mine), 'call')}, "
            f"{size_text(nbytes)} (not the application's data)"
        )
    return kept


def runs(segs):
    """One operation's segments sorted, touching ones merged, empty ones dropped."""
    out = []
    for off, n in sorted(segs):
        if n <= 0:
            continue
        if out and off <= out[-1][0] + out[-1][1]:
            out[-1][1] = max(out[-1][1], off + n - out[-1][0])
        else:
            out.append([off, n])
    return [tuple(r) for r in out]


FNV_OFFSET, FNV_PRIME, MASK64 = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1


def digest(ops):
    """(operations, bytes, FNV-1a 64) of one rank's ordered ops on one file:
    the `check` line the replay compares (iokernels/reqlog.h, the same text
    per operation: "<w|r><c|i>", " OFFSET+LENGTH" per run, a newline)."""
    h, nbytes = FNV_OFFSET, 0
    for op in ops:
        rs = runs(op.segs)
        nbytes += sum(n for _, n in rs)
        text = ("w" if op.kind == "write" else "r") + ("c" if op.level == "coll" else "i")
        text += "".join(f" {o}+{n}" for o, n in rs) + "\n"
        for b in text.encode():
            h = ((h ^ b) * FNV_PRIME) & MASK64
    return len(ops), nbytes, h


def convert(log):
    """The Replay of a Log, or TraceError."""
    if not any(log.dxt.get(m) for m in darshan_log.DXT_MODULES):
        raise TraceError(
            f"{log.path} has no DXT records: capture one with DXT_ENABLE_IO_TRACE=1 "
            "(Darshan 3.2+) in the traced job's environment"
        )
    notes = []
    ops = _application_only(log, _select(log, notes), notes)
    if not ops:
        raise TraceError(f"{log.path}: its DXT records hold no read or write to replay")
    coverage = _truncated(log, notes)
    _untraced(log, {op.file_id for op in ops}, notes)
    _dropped_modules(log, notes)
    # each rank's calls in the order it made them (start time; ties in the
    # order DXT listed them), then all ranks on one time line
    for i, op in enumerate(ops):
        op.seq = i
    ops.sort(key=lambda op: (op.rank, op.start, op.seq))
    for i, op in enumerate(ops):
        op.seq = i
    ops.sort(key=lambda op: (op.start, op.rank, op.seq))
    ids, sizes = {}, []
    for op in ops:
        if op.file_id not in ids:
            ids[op.file_id] = len(ids)
            sizes.append(0)
        fid = ids[op.file_id]
        for offset, length in op.segs:
            sizes[fid] = max(sizes[fid], offset + length)
        op.file_id = fid
    names = {v: k for k, v in ids.items()}
    files = [(log.names.get(names[i], f"unnamed-{names[i]}"), sizes[i]) for i in range(len(ids))]
    used = sorted({"DXT_POSIX" if op.level == "posix" else "DXT_MPIIO" for op in ops})
    day = time.strftime("%Y-%m-%d", time.gmtime(log.start_time))
    source = (
        f"darshan {os.path.basename(log.path)} ({', '.join(used)}, job {log.jobid}, {day}, "
        f"Darshan {log.lib_ver})"
    )
    return Replay(log.nprocs, source, files, ops, notes, coverage)


def _time(t):
    return "-" if t is None or not math.isfinite(t) or t < 0 else f"{t:.6f}"


def _clean(text):
    """A path or text on one line: control characters become '?'."""
    return "".join(c if c.isprintable() else "?" for c in text)


def lines(replay):
    """The replay file's lines, without newlines."""
    yield f"iokernels-replay {FORMAT_VERSION}"
    yield f"source {_clean(replay.source)}"
    for note in replay.notes:
        yield f"note {_clean(note)}"
    if replay.coverage:
        yield f"coverage {replay.coverage[0]} {replay.coverage[1]}"
    yield f"ranks {replay.nprocs}"
    for i, (path, size) in enumerate(replay.files):
        yield f"file {i} {size} {_clean(path)}"
    seqs = {}
    for op in replay.ops:
        seqs.setdefault((op.rank, op.file_id), []).append(op)
        segs = "".join(f" {o} {n}" for o, n in op.segs)
        yield (
            f"op {op.rank} {op.file_id} {op.kind} {op.level} {_time(op.start)} "
            f"{_time(op.end)} {len(op.segs)}{segs}"
        )
    # what the replay's fidelity scores against: the trace's own sequences
    for (rank, fid), ops in sorted(seqs.items()):
        n, nbytes, h = digest(ops)
        yield f"check {rank} {fid} {n} {nbytes} {h:016x}"
    # the last line: a file cut short lacks it, and the replay refuses it
    yield f"end {len(replay.ops)} {len(seqs)}"


def write(replay, out):
    """Writes the file through a new temporary one beside it (never half a
    file, never another's file)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for line in lines(replay):
                f.write(line + "\n")
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def summary(replay, log_show, out_show):
    ops = replay.ops
    parts = []
    for kind in ("write", "read"):
        mine = [op for op in ops if op.kind == kind]
        if mine:
            nbytes = sum(n for op in mine for _, n in op.segs)
            parts.append(f"{plural(len(mine), kind)} {size_text(nbytes)}")
    levels = sorted({op.level for op in ops})
    return (
        f"{out_show}: {plural(replay.nprocs, 'rank')}, {plural(len(replay.files), 'file')}, "
        f"{plural(len(ops), 'operation')} ({', '.join(parts)}; {'/'.join(levels)}) from {log_show}"
    )


def run(log_path, out, force=False):
    """The command: checks, converts, writes, prints. Returns 0."""
    extras.need("darshan")
    log_path = paths.input_file("LOG", log_path)
    out_path = paths.output_file("--out", out)
    paths.not_an_input("--out", out_path, [log_path])
    if out_path.exists() and not force:
        raise paths.PathError(f"--out {paths.show(out_path)} exists: give another path, or --force")
    try:
        log = darshan_log.read(log_path, paths.show(log_path))
    except darshan_log.LogError as e:
        raise TraceError(str(e)) from None
    log.path = paths.show(log_path)
    replay = convert(log)
    write(replay, out_path)
    print(summary(replay, paths.show(log_path), paths.show(out_path)))
    for note in replay.notes:
        print(note)
    return 0
