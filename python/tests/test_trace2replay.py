# SPDX-License-Identifier: BSD-3-Clause
"""trace2replay on real Darshan logs: the example logs that PyPI's darshan
wheel ships (darshan.examples.example_logs), two with DXT records and four
without. Each replay file is read back by the small parser below and
compared with what the darshan package itself reports for the same DXT
records (its DXT dataframes) and counters, rank by rank and file by file."""

import math
import os
import shutil
from collections import defaultdict
from pathlib import Path

import darshan  # requirements.txt: its wheel reads the logs and ships them
import pytest
from conftest import REPO, cli
from darshan.examples import example_logs
from iokernels_campaign.trace import trace2replay

LOGS = Path(example_logs.__file__).parent
WITH_DXT = ["dxt.darshan", "ior_hdf5_example.darshan"]
# DXT logs of the suite's own runs, captured with a Darshan runtime (tests/data/README.md)
CAPTURED = REPO / "tests" / "data" / "darshan"
CAPTURED_LOGS = [
    "roundtrip.darshan",
    "btio-mpich.darshan",
    "btio-openmpi.darshan",
    "dxt-truncated.darshan",
]


def log_path(name):
    return CAPTURED / name if name in CAPTURED_LOGS else LOGS / name


WITHOUT_DXT = [
    "example.darshan",
    "noposix.darshan",
    "sample-badost.darshan",
    "shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158.darshan",
]


def parse(path, converted=True):
    """A replay file as (ranks, files {id: (size, path)}, ops); a converted
    one is format 2, with a check line per (rank, file), its sequence's
    digest, and last the `end` line counting the op and check lines (the
    hand-written roundtrip.replay is format 1, without them)."""
    lines = [
        line for line in Path(path).read_text().splitlines() if line and not line.startswith("#")
    ]
    assert lines[0] == ("iokernels-replay 2" if converted else "iokernels-replay 1")
    ranks, files, ops, checks = None, {}, [], {}
    if converted:
        nops = sum(x.startswith("op ") for x in lines)
        nchecks = sum(x.startswith("check ") for x in lines)
        assert lines[-1] == f"end {nops} {nchecks}", lines[-1]
        lines = lines[:-1]
    for line in lines[1:]:
        word, _, rest = line.partition(" ")
        if word in ("source", "note"):
            assert rest
        elif word == "coverage":
            traced, counted = map(int, rest.split())
            assert 0 <= traced <= counted
        elif word == "check":
            rank, fid, n, nbytes, h = rest.split()
            checks[(int(rank), int(fid))] = (int(n), int(nbytes), int(h, 16))
        elif word == "ranks":
            assert ranks is None and not ops
            ranks = int(rest)
        elif word == "file":
            fid, size, name = rest.split(" ", 2)
            assert int(fid) == len(files)
            files[int(fid)] = (int(size), name)
        else:
            assert word == "op", line
            f = rest.split(" ")
            rank, fid, nseg = int(f[0]), int(f[1]), int(f[6])
            assert 0 <= rank < ranks and fid in files
            assert f[2] in ("write", "read") and f[3] in ("coll", "indep", "posix")
            segs = [(int(f[7 + 2 * i]), int(f[8 + 2 * i])) for i in range(nseg)]
            assert len(f) == 7 + 2 * nseg and all(n > 0 for _, n in segs)
            assert nseg > 0 or f[3] == "coll"
            times = [None if t == "-" else float(t) for t in f[4:6]]
            ops.append((rank, fid, f[2], f[3], *times, segs))
    # the check lines: one per (rank, file) with operations, its sequence's digest
    seqs = {}
    for op in ops:
        seqs.setdefault((op[0], op[1]), []).append(
            trace2replay.Op(op[0], op[1], op[2], op[3], 0, 0, tuple(op[6]))
        )
    if converted:
        assert checks == {k: trace2replay.digest(v) for k, v in seqs.items()}
    return ranks, files, ops


def dxt_expected(report):
    """(rank, path, kind) -> [(offset, length, start, end)] from the
    report's DXT dataframes: a file's DXT_MPIIO records where they have
    offsets, else its DXT_POSIX records; calls of length 0 left out."""
    frames = {}
    for mod in ("DXT_MPIIO", "DXT_POSIX"):
        if mod in report.modules:
            report.mod_read_all_dxt_records(mod, dtype="pandas")
            frames[mod] = report.records[mod].to_df()
    with_offsets = {
        rec["id"]
        for rec in frames.get("DXT_MPIIO", [])
        for kind in ("write_segments", "read_segments")
        if len(rec[kind]) and (rec[kind]["offset"] >= 0).any()
    }
    out = defaultdict(list)
    for mod, recs in frames.items():
        for rec in recs:
            if (mod == "DXT_MPIIO") != (rec["id"] in with_offsets):
                continue
            path = report.name_records[rec["id"]]
            for kind in ("write", "read"):
                df = rec[f"{kind}_segments"]
                for row in df.itertuples():
                    if row.length > 0:
                        out[(rec["rank"], path, kind)].append(
                            (row.offset, row.length, row.start_time, row.end_time)
                        )
    return out, with_offsets


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """Each DXT log converted once: name -> (process, replay path)."""
    d = tmp_path_factory.mktemp("trace2replay")
    out = {}
    for name in WITH_DXT + CAPTURED_LOGS:
        p = cli("trace2replay", log_path(name), "--out", f"{name}.replay", cwd=d, timeout=120)
        out[name] = (p, d / f"{name}.replay")
    return out


@pytest.mark.parametrize("name", WITH_DXT)
def test_dxt_log_converts_to_the_traced_operations(converted, name):
    p, replay = converted[name]
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert replay.read_text().splitlines()[1].startswith(f"source darshan {name} (")
    ranks, files, ops = parse(replay)
    report = darshan.DarshanReport(str(LOGS / name), read_all=True)
    assert ranks == report.metadata["job"]["nprocs"]
    expected, _ = dxt_expected(report)
    got = defaultdict(list)
    for rank, fid, kind, _level, start, end, segs in ops:
        assert len(segs) == 1  # DXT: one segment per call
        got[(rank, files[fid][1], kind)].append((*segs[0], start, end))
    assert set(got) == set(expected)
    for key, calls in expected.items():
        mine = got[key]
        assert [c[:2] for c in mine] == [c[:2] for c in calls], key  # offsets, lengths, order
        for (_, _, s1, e1), (_, _, s2, e2) in zip(mine, calls, strict=True):
            assert math.isclose(s1, s2, abs_tol=1e-6) and math.isclose(e1, e2, abs_tol=1e-6)
    # each rank's operations in its own order of time
    for r in range(ranks):
        starts = [op[4] for op in ops if op[0] == r]
        assert starts == sorted(starts)
    # a file's size: the largest extent written or read
    for fid, (size, _) in files.items():
        assert size == max(o + n for op in ops if op[1] == fid for o, n in op[6])
    # the summary line counts what the file holds
    assert f"{len(ops):,} operations" in p.stdout.splitlines()[0]


def _bytes(ops, files, level):
    """path -> {kind: bytes} of the ops at levels `level`."""
    out = defaultdict(lambda: defaultdict(int))
    for _, fid, kind, lv, _, _, segs in ops:
        if lv in level:
            out[files[fid][1]][kind] += sum(n for _, n in segs)
    return out


@pytest.mark.parametrize("name", WITH_DXT + CAPTURED_LOGS[:3])
def test_bytes_match_the_posix_and_mpiio_counters(converted, name):
    """The bytes replayed per file equal Darshan's own counters: POSIX_BYTES_*
    for files replayed from DXT_POSIX, MPIIO_BYTES_* for DXT_MPIIO ones (a
    truncated trace has fewer: its own test below)."""
    _, replay = converted[name]
    _, files, ops = parse(replay)
    report = darshan.DarshanReport(str(log_path(name)), read_all=True)
    checked = 0
    for mod, prefix, levels in (
        ("POSIX", "POSIX", {"posix"}),
        ("MPI-IO", "MPIIO", {"coll", "indep"}),
    ):
        if mod not in report.records:
            continue
        c = report.records[mod].to_df()["counters"]
        c["path"] = [report.name_records[i] for i in c["id"]]
        per_file = c.groupby("path")[[f"{prefix}_BYTES_WRITTEN", f"{prefix}_BYTES_READ"]].sum()
        for path, kinds in _bytes(ops, files, levels).items():
            assert kinds["write"] == per_file.loc[path, f"{prefix}_BYTES_WRITTEN"], path
            assert kinds["read"] == per_file.loc[path, f"{prefix}_BYTES_READ"], path
            checked += 1
    assert checked == len(files)


def test_ior_mpiio_levels_follow_the_counters(converted):
    """ior_hdf5_example: MPIIO_COLL_* are 0 and MPIIO_INDEP_* are not, so
    every call is independent; its DXT_POSIX records (the same I/O below
    MPI-IO) are dropped with their line, and so are STDIO and HDF5."""
    p, replay = converted["ior_hdf5_example.darshan"]
    _, _, ops = parse(replay)
    assert {op[3] for op in ops} == {"indep"}
    report = darshan.DarshanReport(str(LOGS / "ior_hdf5_example.darshan"), read_all=True)
    c = report.records["MPI-IO"].to_df()["counters"]
    assert len(ops) == int(c["MPIIO_INDEP_WRITES"].sum() + c["MPIIO_INDEP_READS"].sum())
    out = p.stdout
    assert "dropped: DXT_POSIX of 1 file accessed through MPI-IO (59 calls, 8.0 MiB" in out
    assert "dropped: STDIO, 1 file, 128 operations, 2.4 KiB" in out
    assert "dropped: H5D, 3 records" in out and "dropped: LUSTRE, 1 record" in out
    assert "dropped: MPI-IO metadata calls: 1 independent opens, 16 collective opens" in out


def test_dxt_posix_log_reports_what_it_drops(converted):
    p, replay = converted["dxt.darshan"]
    _, _, ops = parse(replay)
    assert {op[3] for op in ops} == {"posix"}
    out = p.stdout
    assert "dropped: 10 zero-length calls (nothing to replay)" in out
    assert "dropped: POSIX metadata calls: 264 opens, 5,597 seeks, 1,379 stats" in out
    assert "dropped: STDIO, 1 file, 39 operations, 1.8 KiB" in out


def _one_line_error(p):
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""
    return lines[0]


@pytest.mark.parametrize("name", WITHOUT_DXT)
def test_log_without_dxt_is_refused_with_how_to_capture(tmp_path, name):
    p = cli("trace2replay", LOGS / name, "--out", "x.replay", cwd=tmp_path, timeout=120)
    line = _one_line_error(p)
    assert "has no DXT records" in line and "DXT_ENABLE_IO_TRACE=1" in line
    assert not (tmp_path / "x.replay").exists()


def _cut(n):
    return (LOGS / "ior_hdf5_example.darshan").read_bytes()[:n]


def _newer():
    """ior_hdf5_example with DXT_POSIX's module version 99: as a newer
    Darshan's log reads to this darshan package."""
    data = bytearray(_cut(None))
    assert data[332:336] == (1).to_bytes(4, "little")  # mod_ver[DXT_POSIX] of format 3.21
    data[332:336] = (99).to_bytes(4, "little")
    return bytes(data)


@pytest.mark.parametrize(
    "content, says",
    [
        (b"", "is empty (0 bytes): not a Darshan log"),
        (os.urandom(4096), "is not a Darshan log"),
        (b"3.21\0\0\0\0" + os.urandom(4088), "is not a Darshan log (no Darshan magic number"),
        # cut short in its name records: the library prints errors, then
        # fails an assertion that aborts its process
        (_cut(1000), "the darshan library failed reading it (Error: unable to read compressed"),
        # cut short in its DXT records: the library prints errors and goes on
        (_cut(3000), "the darshan library cannot read it (Error: unable to read compressed"),
        (
            _newer(),
            "cannot read it (Error: Invalid DXT POSIX module version number (got 99)): "
            "a log of a newer Darshan? (pip install -U darshan)",
        ),
    ],
    ids=["empty", "random", "version-only", "cut-1000", "cut-3000", "newer"],
)
def test_not_a_readable_log_is_one_line(tmp_path, content, says):
    (tmp_path / "bad.darshan").write_bytes(content)
    p = cli("trace2replay", "bad.darshan", "--out", "x.replay", cwd=tmp_path, timeout=120)
    line = _one_line_error(p)
    assert line.startswith("iokernels-campaign: error: bad.darshan") and says in line
    assert not (tmp_path / "x.replay").exists()


def test_missing_log_and_existing_out(tmp_path):
    line = _one_line_error(cli("trace2replay", "nope.darshan", "--out", "x", cwd=tmp_path))
    assert line.endswith("LOG nope.darshan not found")
    (tmp_path / "x.replay").write_text("mine\n")
    log = LOGS / "ior_hdf5_example.darshan"
    line = _one_line_error(cli("trace2replay", log, "--out", "x.replay", cwd=tmp_path))
    assert "--out x.replay exists: give another path, or --force" in line
    assert (tmp_path / "x.replay").read_text() == "mine\n"  # untouched
    p = cli("trace2replay", log, "--out", "x.replay", "--force", cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "x.replay").read_text().startswith("iokernels-replay 2\n")
    assert [f.name for f in tmp_path.iterdir()] == ["x.replay"]  # no temporary left
    # the log itself, even with --force, and a folder are refused
    shutil.copy(log, tmp_path / "app.darshan")
    line = _one_line_error(
        cli("trace2replay", "app.darshan", "--out", "app.darshan", "--force", cwd=tmp_path)
    )
    assert line.endswith("--out app.darshan is app.darshan, which this command reads")
    assert (tmp_path / "app.darshan").read_bytes() == log.read_bytes()
    (tmp_path / "d").mkdir()
    line = _one_line_error(cli("trace2replay", "app.darshan", "--out", "d", cwd=tmp_path))
    assert line.endswith("--out d is a folder; give a file path")


def test_truncated_dxt_is_converted_as_far_as_it_goes(tmp_path):
    """The header's partial flag of DXT_MPIIO set (as Darshan sets it when
    DXT's memory runs out) on a copy of ior_hdf5_example: the library
    reports the module partial, the conversion says so in one line."""
    data = bytearray((LOGS / "ior_hdf5_example.darshan").read_bytes())
    data[21] |= 0x04  # partial_flag (uint32 at 20 in this log format): DXT_MPIIO's bit
    (tmp_path / "partial.darshan").write_bytes(data)
    assert darshan.DarshanReport(str(tmp_path / "partial.darshan")).modules["DXT_MPIIO"][
        "partial_flag"
    ]
    p = cli("trace2replay", "partial.darshan", "--out", "p.replay", cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr
    assert (
        "truncated: DXT_MPIIO stopped when DXT's trace memory was full (a limit set when "
        "Darshan is built: --with-mod-mem); converted as far as it goes: 59 calls of the 59 its "
        "MPI-IO counters count"
    ) in p.stdout
    assert len(parse(tmp_path / "p.replay")[2]) == 59


# The level rules on hand-made logs: the wheel's DXT_MPIIO log has only
# independent calls, so these build the reader's output (darshan_log.Log)
# for the cases it lacks.
def _log(nprocs, mpiio, counters, posix=()):
    import pandas as pd
    from iokernels_campaign.trace import darshan_log

    return darshan_log.Log(
        path="made.darshan",
        nprocs=nprocs,
        jobid=7,
        start_time=0.0,
        lib_ver="3.5.0",
        modules={"MPI-IO": {"partial": False, "records": 1}},
        names={11: "/scratch/a b.dat", 12: "/scratch/c"},
        dxt={
            "DXT_MPIIO": [darshan_log.Segments(*r) for r in mpiio],
            "DXT_POSIX": [darshan_log.Segments(*r) for r in posix],
        },
        counters={"MPI-IO": pd.DataFrame(counters)},
    )


def _convert(log, tmp_path):
    from iokernels_campaign.trace import trace2replay

    replay = trace2replay.convert(log)
    trace2replay.write(replay, tmp_path / "made.replay")
    return parse(tmp_path / "made.replay"), replay.notes


def _w(offset, length, start):
    return (offset, length, start, start + 0.5)


def test_collective_when_the_counters_and_every_rank_agree(tmp_path):
    mpiio = [
        (11, 0, [_w(0, 100, 1.0), _w(200, 100, 2.0)], []),
        (11, 1, [_w(100, 100, 1.0), _w(0, 0, 2.0)], []),
    ]
    counters = {
        "id": [11, 11],
        "rank": [0, 1],
        "MPIIO_COLL_WRITES": [2, 2],
        "MPIIO_INDEP_WRITES": [0, 0],
    }
    (ranks, files, ops), notes = _convert(_log(2, mpiio, counters), tmp_path)
    assert ranks == 2 and files == {0: (300, "/scratch/a b.dat")}
    assert [(op[0], op[3], op[6]) for op in ops] == [
        (0, "coll", [(0, 100)]),
        (1, "coll", [(100, 100)]),
        (0, "coll", [(200, 100)]),
        (1, "coll", []),  # joined the collective call without data
    ]
    assert not any("independent" in n for n in notes)


def test_uneven_or_mixed_collectives_become_independent(tmp_path):
    mpiio = [(11, 0, [_w(0, 10, 1.0), _w(10, 10, 2.0)], []), (11, 1, [_w(20, 10, 1.0)], [])]
    counters = {"id": [11], "rank": [-1], "MPIIO_COLL_WRITES": [3], "MPIIO_INDEP_WRITES": [0]}
    (_, _, ops), notes = _convert(_log(2, mpiio, counters), tmp_path)
    assert {op[3] for op in ops} == {"indep"}
    assert any("whose collective calls not every rank made the same number" in n for n in notes)
    counters["MPIIO_INDEP_WRITES"] = [1]
    (_, _, ops), notes = _convert(_log(2, mpiio, counters), tmp_path)
    assert {op[3] for op in ops} == {"indep"}
    assert any("mixing collective and independent MPI-IO calls" in n for n in notes)


def test_mpiio_without_offsets_is_replayed_from_dxt_posix(tmp_path):
    mpiio = [(12, 0, [_w(-1, 64, 1.0)], [_w(-1, 64, 2.0)])]
    posix = [(12, 0, [_w(4096, 64, 1.1)], [_w(4096, 64, 2.1)])]
    counters = {"id": [12], "rank": [0], "MPIIO_INDEP_WRITES": [1], "MPIIO_INDEP_READS": [1]}
    (_, files, ops), notes = _convert(_log(1, mpiio, counters, posix), tmp_path)
    assert files == {0: (4160, "/scratch/c")}
    assert [(op[2], op[3], op[6]) for op in ops] == [
        ("write", "posix", [(4096, 64)]),
        ("read", "posix", [(4096, 64)]),
    ]
    assert any(
        n.startswith("replaced: DXT_MPIIO of 1 file (2 calls, 128 B) has no offsets") for n in notes
    )


def test_mpiio_with_some_offsets_missing_is_not_half_replayed(tmp_path):
    """A file whose DXT_MPIIO lacks some offsets comes from DXT_POSIX whole;
    one without DXT_POSIX either is dropped, with its line."""
    mpiio = [(12, 0, [_w(0, 64, 1.0), _w(-1, 64, 2.0)], []), (11, 0, [_w(-1, 8, 3.0)], [])]
    posix = [(12, 0, [_w(0, 64, 1.1), _w(64, 64, 2.1)], [])]
    counters = {"id": [11, 12], "rank": [0, 0], "MPIIO_INDEP_WRITES": [1, 2]}
    (_, files, ops), notes = _convert(_log(1, mpiio, counters, posix), tmp_path)
    assert files == {0: (128, "/scratch/c")}
    assert [(op[3], op[6]) for op in ops] == [("posix", [(0, 64)]), ("posix", [(64, 64)])]
    assert "dropped: 1 file of those, which the log has no DXT_POSIX records of" in notes


def _data_ops(ops):
    """rank -> [(file's place, kind, level, segments)] of the ops with data."""
    out = defaultdict(list)
    for rank, fid, kind, level, _, _, segs in ops:
        if segs:
            out[rank].append((fid, kind, level, segs))
    return dict(out)


def test_trace_of_a_replay_converts_back_to_it(converted):
    """roundtrip.darshan is the trace of `iokernels replay roundtrip.replay`
    (MPICH, whose Darshan records DXT_MPIIO offsets): converted back, every
    rank's operations with data are the replay file's, in order, with their
    levels (collective, and rank 0's independent writes, from the MPI-IO
    counters); the collective write rank 3 joined without data is kept. The
    replay's read pass adds collective reads without data of its own."""
    p, replay = converted["roundtrip.darshan"]
    assert p.returncode == 0, p.stderr
    ranks, files, ops = parse(replay)
    want_ranks, want_files, want_ops = parse(CAPTURED / "roundtrip.replay", converted=False)
    assert ranks == want_ranks == 4
    # the traced paths are the replay's files under its --dir, in the same order
    assert [f[1].rsplit("/", 1)[1] for f in files.values()] == [
        "scratch_app_out.dat.mpi",
        "scratch_app_log.dat.mpi",
    ]
    assert _data_ops(ops) == _data_ops(want_ops)
    assert [(op[0], op[2], op[3]) for op in ops if op[2] == "write" and not op[6]] == [
        (3, "write", "coll")
    ]
    assert {op[3] for op in ops if op[1] == 1 and op[2] == "write"} == {"indep"}
    assert files[0][0] == 720896  # the largest extent written


def replayed_from_posix(conversion, why):
    """A BTIO log whose DXT_MPIIO records cannot be replayed: the line names
    why, and only its DXT_POSIX records are replayed. Its files and operations."""
    p, replay = conversion
    assert p.returncode == 0, p.stderr
    assert (
        f"replaced: DXT_MPIIO of 1 file (16 calls, 640.0 KiB) {why}: "
        "its DXT_POSIX records are replayed instead"
    ) in p.stdout
    _, files, ops = parse(replay)
    assert {op[3] for op in ops} == {"posix"}
    return files, ops


def test_noncontiguous_views_come_from_dxt_posix(converted):
    """btio-mpich.darshan: BTIO's collective writes through subarray views;
    each DXT_MPIIO call is its first byte and its length, so the ranks'
    ranges overlap, and the file is replayed from DXT_POSIX (what the
    aggregators wrote: two 160 KiB writes of rank 0)."""
    files, ops = replayed_from_posix(
        converted["btio-mpich.darshan"],
        "has writes of different ranks over the same bytes (noncontiguous file views)",
    )
    assert list(files.values()) == [(327680, files[0][1])] and files[0][1].endswith("/btio.mpi")
    writes = [(op[0], op[6]) for op in ops if op[2] == "write"]
    assert writes == [(0, [(0, 163840)]), (0, [(163840, 163840)])]


def test_openmpi_darshan_offsets_come_from_dxt_posix(converted):
    files, ops = replayed_from_posix(
        converted["btio-openmpi.darshan"],
        "has no offsets (Darshan built with OpenMPI, or log format 1)",
    )
    btio = [fid for fid, (_, path) in files.items() if path.endswith("/btio.mpi")]
    assert len(btio) == 1 and files[btio[0]][0] == 327680
    assert sum(n for op in ops if op[1] == btio[0] and op[2] == "write" for _, n in op[6]) == 327680


def test_a_real_truncated_trace_is_converted_as_far_as_it_goes(converted):
    """dxt-truncated.darshan: 70,000 writes of 16 bytes, of which DXT's 2 MiB
    held 65,532 a module before Darshan flagged both DXT modules partial."""
    p, replay = converted["dxt-truncated.darshan"]
    assert p.returncode == 0, p.stderr
    report = darshan.DarshanReport(str(CAPTURED / "dxt-truncated.darshan"))
    assert (
        report.modules["DXT_MPIIO"]["partial_flag"] and report.modules["DXT_POSIX"]["partial_flag"]
    )
    for mod, counters in (("DXT_POSIX", "POSIX"), ("DXT_MPIIO", "MPI-IO")):
        assert (
            f"truncated: {mod} stopped when DXT's trace memory was full (a limit set when Darshan "
            f"is built: --with-mod-mem); converted as far as it goes: 65,532 calls of the 70,000 "
            f"its {counters} counters count"
        ) in p.stdout
    text = Path(replay).read_text()
    # the fraction travels: in the note and in the coverage line the replay prints
    assert "coverage 65532 70000\n" in text and "(93.6% of the calls)" in text
    assert "\nnote truncated: DXT_POSIX stopped" in text
    _, files, ops = parse(replay)
    assert [op[6] for op in ops] == [[(16 * i, 16)] for i in range(65532)]
    assert list(files.values())[0][0] == 16 * 65532


def test_files_that_are_not_the_applications_are_left_out(tmp_path):
    """OpenMPI's shared-file-pointer file, /dev/shm, /proc and the suite's
    own --json record (the traced program is iokernels): left out, each kind
    a note, which the replay file keeps; the application's file stays."""
    from iokernels_campaign.trace import darshan_log, trace2replay

    paths = {
        11: "/scratch/out.dat",
        12: "/tmp/ompi.vm.0/pid.123/out.dat_1234.sm",
        13: "/dev/shm/vader_segment.vm.1",
        14: "/proc/self/status",
        15: "/scratch/run.jsonl",
    }
    rows = [(fid, 0, [_w(0, 100, 0.1 * fid)], []) for fid in paths]
    log = darshan_log.Log(
        path="made.darshan",
        nprocs=1,
        jobid=7,
        start_time=0.0,
        lib_ver="3.4.7",
        modules={},
        names=paths,
        dxt={"DXT_POSIX": [darshan_log.Segments(*r) for r in rows]},
        exe="/opt/iokernels/bin/iokernels btio --json run.jsonl",
    )
    replay = trace2replay.convert(log)
    assert [f[0] for f in replay.files] == ["/scratch/out.dat"]
    for what in (
        "OpenMPI's shared-file-pointer files (.sm)",
        "shared memory",
        "/proc",
        "the suite's own outputs (--json, --export-replay)",
    ):
        assert f"left out: 1 file of {what}, 1 call, 100 B (not the application's data)" in (
            replay.notes
        ), replay.notes
    trace2replay.write(replay, tmp_path / "a.replay")
    text = (tmp_path / "a.replay").read_text()
    assert text.count("\nnote left out: ") == 4
    # the same log from another program keeps its .jsonl file
    log.exe = "/usr/bin/app"
    assert "/scratch/run.jsonl" in [f[0] for f in trace2replay.convert(log).files]
