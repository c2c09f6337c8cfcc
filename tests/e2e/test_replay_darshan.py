# SPDX-License-Identifier: BSD-3-Clause
"""Real Darshan DXT traces, replayed: the two example logs with DXT records
that PyPI's darshan wheel ships, and three captured here, are converted by `iokernels-campaign
trace2replay` and replayed by `iokernels replay` on the mpiio backend with
--verify, on the trace's rank count; the record's fidelity must be exact on
operations, bytes and offsets, and its trace-side counts must be those of
the replay file (counted here from the file itself)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, TESTDATA, run
from darshan.examples import example_logs  # requirements.txt

LOGS = Path(example_logs.__file__).parent
# DXT logs of the suite's own runs, captured with a Darshan runtime (tests/data/README.md):
# collective and independent MPI-IO calls; calls through noncontiguous views
# and an OpenMPI trace without offsets, both from DXT_POSIX
CAPTURED = ["roundtrip.darshan", "btio-mpich.darshan", "btio-openmpi.darshan"]
TRUNCATED = "dxt-truncated.darshan"  # converted and replayed by its own test
MAX_RANKS = 16  # a trace of more ranks is folded onto this many


def trace2replay(log, out, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    cmd = [sys.executable, "-m", "iokernels_campaign", "trace2replay", str(log), "--out", str(out)]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def counts(path):
    """ranks, and (operations, bytes, distinct (file, offset) pairs) of a
    replay file, in total and per rank."""
    ranks, total, per_rank = None, [0, 0, set()], {}
    for line in Path(path).read_text().splitlines():
        f = line.split(" ")
        if f[0] == "ranks":
            ranks = int(f[1])
        if f[0] != "op":
            continue
        rank, fid, nseg = int(f[1]), int(f[2]), int(f[7])
        segs = [(int(f[8 + 2 * i]), int(f[9 + 2 * i])) for i in range(nseg)]
        for c in (total, per_rank.setdefault(rank, [0, 0, set()])):
            c[0] += 1
            c[1] += sum(n for _, n in segs)
            c[2] |= {(fid, o) for o, _ in segs}
    as_tuple = lambda c: (c[0], c[1], len(c[2]))  # noqa: E731
    return ranks, as_tuple(total), {r: as_tuple(c) for r, c in per_rank.items()}


def find_fidelity(record):
    """The record's `fidelity` object, at its top or in a pass."""
    if isinstance(record, dict):
        if "fidelity" in record:
            return record["fidelity"]
        values = record.values()
    elif isinstance(record, list):
        values = record
    else:
        return None
    for v in values:
        found = find_fidelity(v)
        if found is not None:
            return found
    return None


def replay(tmp_path, name, job_ranks=None, extra=()):
    """Converts log `name`, replays it on mpiio with --verify on the trace's
    rank count (folded onto MAX_RANKS, or job_ranks, when given or more),
    with the replay options `extra`; returns the replay file's counts, the
    job's rank count and the fidelity."""
    log = TESTDATA / "darshan" / name if name in CAPTURED else LOGS / name
    p = trace2replay(log, tmp_path / "trace.replay", tmp_path)
    assert p.returncode == 0, p.stderr
    ranks, total, per_rank = counts(tmp_path / "trace.replay")
    nprocs = job_ranks or min(ranks, MAX_RANKS)
    fold = ["--ranks-from-trace", "fold"] if nprocs != ranks else []
    (tmp_path / "files").mkdir()
    r = run(
        nprocs,
        ["replay", "trace.replay", "--backend", "mpiio", "--verify", "--dir", "files", *fold]
        + list(extra),
        tmp_path,
        timeout=600,
    )
    assert r.rc == 0, r.out + r.err
    fid = find_fidelity(r.record)
    assert fid is not None, f"no fidelity in the record: {r.record}"
    assert fid["compared"] == "writes and reads"
    return ranks, total, per_rank, nprocs, fid


NAMES = ("operations", "bytes", "offsets")


@pytest.mark.parametrize("name", ["ior_hdf5_example.darshan", "dxt.darshan", *CAPTURED])
def test_darshan_trace_replays_exactly_on_mpiio(tmp_path, name):
    ranks, total, per_rank, nprocs, fid = replay(tmp_path, name)
    for key, want in zip(NAMES, total, strict=True):
        assert fid["total"][key] == {"trace": want, "replay": want, "exact": True}, key
    if name == "dxt.darshan":
        # one rank, 168 files open at once, files read before they are
        # written again: one interleaved pass in traced order, exact
        seq = fid["sequences"]
        assert fid["exact"] is True and seq["differ"] == 0 and seq["order"]["differ"] == 0, seq
    if nprocs == ranks:  # folded ranks are exact in total only
        assert fid["exact"]
        by_rank = {x["rank"]: x for x in fid["ranks"]}
        for rank, c in per_rank.items():
            for key, want in zip(NAMES, c, strict=True):
                assert by_rank[rank][key]["exact"] and by_rank[rank][key]["trace"] == want


def test_darshan_trace_file_by_file_is_not_exact(tmp_path):
    """dxt.darshan with one pass per file and kind (--order by-file, the
    order before #38 item 4): the files' operations reordered, a file's
    reads after its writes, and the score says so."""
    *_, fid = replay(tmp_path, "dxt.darshan", extra=["--order", "by-file"])
    seq = fid["sequences"]
    assert fid["exact"] is False and seq["differ"] == 7 and seq["order"]["differ"] == 1, seq
    assert seq["first_difference"]["traced"] == "read indep 0+43", seq
    assert fid["reasons"][0].startswith("replayed one pass per file and kind (--order by-file)")


def test_a_folded_trace_is_exact_in_total(tmp_path):
    """IOR's 4-rank trace on 2 ranks (--ranks-from-trace fold), as a trace of
    more than MAX_RANKS ranks is replayed: the totals are the trace's."""
    ranks, total, per_rank, nprocs, fid = replay(tmp_path, "ior_hdf5_example.darshan", 2)
    assert (ranks, nprocs) == (4, 2)
    for key, want in zip(NAMES, total, strict=True):
        assert fid["total"][key] == {"trace": want, "replay": want, "exact": True}, key
    # job rank 0 ran trace ranks 0 and 2
    job0 = next(x for x in fid["ranks"] if x["rank"] == 0)
    assert job0["operations"]["replay"] == per_rank[0][0] + per_rank[2][0]
    assert fid["exact"] is False and fid["reasons"][0].startswith("folded: 4 trace ranks on 2")


def test_a_truncated_trace_is_exact_only_with_its_fraction(tmp_path):
    """dxt-truncated.darshan (65,532 of 70,000 calls traced): the replay is
    exact against what the trace holds, and says the fraction with it."""
    p = trace2replay(TESTDATA / "darshan" / TRUNCATED, tmp_path / "t.replay", tmp_path)
    assert p.returncode == 0, p.stderr
    r = run(1, ["replay", "t.replay"], tmp_path, timeout=600)
    assert r.rc == 0, r.err
    fid = find_fidelity(r.record)
    assert fid["exact"] is True, fid["sequences"]
    assert "Fidelity: exact (of a trace holding 65532 of the 70000 calls" in r.out
    assert fid["coverage"] == {"traced_calls": 65532, "counted_calls": 70000}
    assert any(n.startswith("truncated: DXT_MPIIO stopped") for n in fid["notes"]), fid["notes"]
