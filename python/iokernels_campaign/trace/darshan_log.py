# SPDX-License-Identifier: BSD-3-Clause
"""A Darshan log read through PyPI's darshan package (its wheel bundles
libdarshan-util), into plain data: the job, the modules with their partial
flags, the file names, the DXT segments and the POSIX, MPI-IO and STDIO
counters.

The library is run in a forked child: on a damaged or cut-short log it
prints several "Error: ..." lines to the process's stderr and may then fail
an assertion (darshan_log_close: Assertion `state' failed) that aborts the
whole process. In the child its stderr goes to a file, and whatever happens
the parent gets the data or one line saying what went wrong."""

import multiprocessing
import os
import tempfile
from dataclasses import dataclass, field

# A log starts with its format version ("3.21" and NULs), then this magic
# number (darshan-log-format.h): checked before the library sees the file.
DARSHAN_MAGIC_NR = 6567223
COUNTER_MODULES = ("POSIX", "MPI-IO", "STDIO")
DXT_MODULES = ("DXT_POSIX", "DXT_MPIIO")


class LogError(Exception):
    """A log that cannot be read: one printable line."""


@dataclass
class Segments:
    """One DXT record: one rank's calls on one file, writes then reads,
    each an array of (offset, length, start, end) rows in call order."""

    file_id: int
    rank: int
    writes: list
    reads: list


@dataclass
class Log:
    path: str
    nprocs: int
    jobid: int
    start_time: float  # seconds since the epoch, job start
    lib_ver: str
    modules: dict  # name -> {"partial": bool, "records": int}
    names: dict  # record id -> path
    dxt: dict = field(default_factory=dict)  # "DXT_POSIX" -> [Segments]
    counters: dict = field(default_factory=dict)  # "POSIX" -> DataFrame (id, rank, counters)
    exe: str = ""  # the traced command line, as Darshan recorded it


def _rows(segments):
    return [(s["offset"], s["length"], s["start_time"], s["end_time"]) for s in segments]


def _header_problem(path):
    """Why the file cannot be a Darshan log, from its first 16 bytes, or None."""
    with open(path, "rb") as f:
        head = f.read(16)
    if not head:
        return "is empty (0 bytes): not a Darshan log"
    version = head[:8].split(b"\0", 1)[0]
    if len(head) < 16 or not version[:1].isdigit() or b"." not in version:
        return "is not a Darshan log (it does not start with a Darshan version string)"
    magic_le = int.from_bytes(head[8:16], "little")
    magic_be = int.from_bytes(head[8:16], "big")
    if DARSHAN_MAGIC_NR not in (magic_le, magic_be):
        return "is not a Darshan log (no Darshan magic number after its version string)"
    return None


def _read(path):
    """In the child: the Log, read with the library."""
    import darshan  # imported here: a few hundred ms, and only this command needs it

    with darshan.DarshanReport(path, read_all=True) as r:
        job = r.metadata["job"]
        log = Log(
            path=path,
            nprocs=int(job["nprocs"]),
            jobid=int(job["jobid"]),
            start_time=job["start_time_sec"] + job.get("start_time_nsec", 0) * 1e-9,
            lib_ver=str(job.get("metadata", {}).get("lib_ver", job.get("log_ver", "?"))),
            modules={
                m: {"partial": bool(v["partial_flag"]), "records": len(r.records.get(m, ()))}
                for m, v in r.modules.items()
            },
            names=dict(r.name_records),
            exe=str(r.metadata.get("exe", "")),
        )
        for m in DXT_MODULES:
            if m in r.records:
                recs = r.records[m]
                log.dxt[m] = [
                    Segments(
                        recs[i]["id"],
                        recs[i]["rank"],
                        _rows(recs[i]["write_segments"]),
                        _rows(recs[i]["read_segments"]),
                    )
                    for i in range(len(recs))
                ]
        for m in COUNTER_MODULES:
            if m in r.records and len(r.records[m]):
                df = r.records[m].to_df()["counters"]
                log.counters[m] = df
    return log


def _child(path, errfile, conn):
    os.dup2(errfile.fileno(), 2)  # the library's own messages, read back below
    try:
        log = _read(path)
        errfile.seek(0)
        errors = [line for line in errfile.read().splitlines() if line.startswith("Error:")]
        conn.send(("error", errors[0]) if errors else ("ok", log))
    except Exception as e:  # the library's RuntimeError("Failed to open file.") and others
        errfile.seek(0)
        errors = [line for line in errfile.read().splitlines() if line.startswith("Error:")]
        conn.send(("error", errors[0] if errors else f"{type(e).__name__}: {e}"))
    finally:
        conn.close()


def read(path, show):
    """The Log of path (an existing regular file), or LogError naming it as
    `show` gives it."""
    problem = _header_problem(path)
    if problem:
        raise LogError(f"{show} {problem}")
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errfile:
        proc = ctx.Process(target=_child, args=(str(path), errfile, child))
        proc.start()
        child.close()
        try:
            status, value = parent.recv()
        except EOFError:  # the child died before sending: the library aborted
            status, value = None, None
        proc.join()
        if status is None:
            errfile.seek(0)
            said = [line for line in errfile.read().splitlines() if line.strip()]
            why = said[0] if said else f"exit code {proc.exitcode}"
            raise LogError(f"{show}: the darshan library failed reading it ({why}): a damaged log?")
    if status == "error" and "version" in value:
        raise LogError(
            f"{show}: the darshan package cannot read it ({value}): a log of a newer Darshan? "
            "(pip install -U darshan)"
        )
    if status == "error":
        raise LogError(
            f"{show}: the darshan library cannot read it ({value}): a damaged or cut-short log?"
        )
    return value
