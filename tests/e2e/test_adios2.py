# SPDX-License-Identifier: BSD-3-Clause
"""ADIOS2 backend end to end: one dataset written by one engine over the
ranks, its subfiles following the aggregation asked for, values where they
belong, reads by another number of ranks, --overwrite, --fsync, corruption
and bad paths."""

import re

import pytest
from conftest import SHIPPED, need, run, run_plain

GRID = (24, 20, 18)  # X, Y, Z: does not divide evenly by 2 or 3
DUMPS = 2
ELEMS = DUMPS * GRID[0] * GRID[1] * GRID[2] * 5
BT = ["btio", "--grid", ",".join(map(str, GRID)), "--dumps", str(DUMPS), "--backend", "adios2"]
MAP_G = SHIPPED / "e3sm" / "map_g_case_16p.nc"


@pytest.fixture(autouse=True)
def need_adios2(built_backends):
    need("adios2", built_backends)


def subfiles(out):
    return sorted(p.name for p in out.iterdir() if p.name.startswith("data."))


def metadata(out):
    return sorted(p.name for p in out.iterdir() if not p.name.startswith("data."))


def settings(rec):
    return rec["passes"][0]["hints_in_effect"]


def test_version_says_mpi(tmp_path):
    r = run_plain(1, ["--list"], tmp_path)
    assert r.rc == 0, r.err
    assert re.search(r"adios2\s.*ADIOS2 2\.\d+\.\d+ \(MPI\)", r.out), r.out


@pytest.mark.parametrize(
    "writers,readers,extra",
    [
        (4, 9, []),
        (9, 4, ["--api", "nonblocking"]),
        (1, 4, ["--adios2-engine", "bp4", "--independent"]),
    ],
    ids=["4to9-bp5", "9to4-bp5-nonblocking", "1to4-bp4"],
)
def test_read_by_another_number_of_ranks(tmp_path, writers, readers, extra):
    w = run(writers, [*BT, *extra], tmp_path)
    assert w.rc == 0, w.err
    assert w.record["passes"][0]["bytes"] == ELEMS * 8
    r = run(readers, [*BT, *extra, "--mode", "read", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    rec = r.record
    assert rec["backend"] == "adios2" and rec["nprocs"] == readers
    assert rec["verify"]["values_checked"] == ELEMS
    assert rec["verify"]["values_mismatched"] == 0
    assert rec["passes"][0]["bytes"] == ELEMS * 8


@pytest.mark.parametrize(
    "extra,engine,nsub",
    [
        (["--adios2-params", "NumAggregators=1"], "BP5", 1),
        (["--adios2-params", "NumAggregators=2"], "BP5", 2),
        (["--adios2-params", "AggregationType=TwoLevelShm,NumAggregators=2"], "BP5", 2),
        (["--adios2-params", "NumAggregators=2", "--adios2-engine", "bp4"], "BP4", 2),
        (["--independent"], "BP5", 4),
    ],
    ids=["bp5-agg1", "bp5-agg2", "bp5-twolevelshm-agg2", "bp4-agg2", "bp5-independent"],
)
def test_one_dataset_whose_subfiles_follow_the_aggregators(tmp_path, extra, engine, nsub):
    """4 ranks, one engine: one dataset, one data.N per aggregator; the
    record and the report name the engine and the parameters handed to it."""
    w = run(4, [*BT, *extra], tmp_path)
    assert w.rc == 0, w.err
    out = tmp_path / "btio.adios2"
    assert subfiles(out) == [f"data.{i}" for i in range(nsub)]
    md = ["md.0", "md.idx", "mmd.0"] if engine == "BP5" else ["md.0", "md.idx"]
    assert [n for n in metadata(out) if n != "profiling.json"] == md
    assert sum(p.stat().st_size for p in out.glob("data.*")) >= ELEMS * 8
    s = settings(w.record)
    assert s["adios2_engine"] == engine
    assert s["NumAggregators"] == str(nsub)
    if "--independent" in extra:
        assert s["AggregationType"] == "EveryoneWrites"
    elif engine == "BP5" and "TwoLevelShm" not in extra[1]:
        assert s["AggregationType"] == "EveryoneWritesSerial"  # the suite's default (docs)
    assert f"settings in effect: adios2_engine={engine}" in w.out
    r = run(1, [*BT, "--mode", "read", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["verify"]["values_checked"] == ELEMS
    assert settings(r.record)["adios2_engine"] == engine


def test_independent_refuses_aggregation_parameters(tmp_path):
    r = run_plain(4, [*BT, "--independent", "--adios2-params", "numaggregators=2"], tmp_path)
    assert r.rc == 2, r.err
    (line,) = r.error_lines()
    assert "--adios2-params sets NumAggregators and --independent means no aggregation" in line
    assert not (tmp_path / "btio.adios2").exists()


@pytest.mark.parametrize("readers", [2, 3])
def test_e3sm_g_written_by_4_read_by_fewer(tmp_path, readers, built_backends):
    """E3SM's G case (ocean, 1-D decomposition with holes): 4 writers, the
    dataset verified by 2 and by 3 readers through selections."""
    need("pnetcdf", built_backends)
    args = ["e3sm", "--backend", "adios2"]
    w = run(4, [*args, "-k", "-o", "g.nc", "--verify", str(MAP_G)], tmp_path, timeout=300)
    assert w.rc == 0, w.err
    writes = [p for p in w.record["passes"] if p["op"] == "write"]
    verifies = [p for p in w.record["passes"] if p["op"] == "verify"]
    assert writes and all(p["bytes"] > 0 for p in writes)
    for p in writes:
        out = tmp_path / p["path"]
        assert (out / "md.idx").exists() and subfiles(out) == ["data.0"]
    r = run(readers, [*args, "-i", "g.nc", "--verify", str(MAP_G)], tmp_path, timeout=300)
    assert r.rc == 0, r.err
    assert r.record["nprocs"] == readers
    assert r.record["verify"]["ok"] is True
    assert r.record["verify"]["values_checked"] == sum(p["values_checked"] for p in verifies) > 0


def test_overwrite_replaces_the_earlier_dataset(tmp_path):
    assert run(4, [*BT, "--independent"], tmp_path).rc == 0
    out = tmp_path / "btio.adios2"
    assert len(subfiles(out)) == 4
    r = run_plain(4, BT, tmp_path)
    assert r.rc == 2 and "exists: pass --overwrite" in r.err
    args = [*BT, "--overwrite", "--adios2-engine", "bp4", "--adios2-params", "NumAggregators=1"]
    assert run(4, args, tmp_path).rc == 0
    assert subfiles(out) == ["data.0"]  # the earlier run's data.1-3 are gone
    assert not (out / "mmd.0").exists()  # BP5's, gone with the old dataset
    r = run(4, [*BT, "--mode", "read", "--verify"], tmp_path)
    assert r.rc == 0 and r.record["verify"]["values_checked"] == ELEMS, r.err


def test_overwrite_keeps_what_it_did_not_write(tmp_path):
    foreign = tmp_path / "btio.adios2"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    r = run_plain(4, [*BT, "--overwrite"], tmp_path)
    assert r.rc == 2, r.err
    assert "btio.adios2/notes.txt was not written by ADIOS2" in r.error_lines()[0]
    assert (foreign / "notes.txt").read_text() == "mine"
    # a stranger inside an earlier dataset: nothing is removed
    (foreign / "notes.txt").unlink()
    foreign.rmdir()
    assert run(4, BT, tmp_path).rc == 0
    (foreign / "notes.txt").write_text("mine")
    r = run_plain(4, [*BT, "--overwrite"], tmp_path)
    assert r.rc == 2, r.err
    assert "btio.adios2/notes.txt was not written by ADIOS2" in r.error_lines()[0]
    assert (foreign / "md.idx").exists() and (foreign / "data.0").exists()
    assert (foreign / "notes.txt").read_text() == "mine"


def test_overwrite_replaces_the_serial_backends_layout(tmp_path):
    """An output of the earlier serial backend (an index, one BP directory per
    writer) is replaced too; a stranger in it stops the overwrite."""
    out = tmp_path / "btio.adios2"
    out.mkdir()
    (out / "iokernels-adios2.txt").write_text("iokernels adios2 layout 1\nwriters 2\n")
    for w in range(2):
        d = out / f"writer-{w:06d}.bp"
        d.mkdir()
        for name in ("data.0", "md.0", "md.idx", "mmd.0"):
            (d / name).write_bytes(b"x")
    (out / "writer-000001.bp" / "notes.txt").write_text("mine")
    r = run_plain(4, [*BT, "--overwrite"], tmp_path)
    assert r.rc == 2, r.err
    assert "writer-000001.bp/notes.txt was not written by ADIOS2" in r.error_lines()[0]
    assert (out / "writer-000000.bp" / "md.idx").exists()
    (out / "writer-000001.bp" / "notes.txt").unlink()
    assert run(4, [*BT, "--overwrite"], tmp_path).rc == 0
    assert [n for n in metadata(out) if n != "profiling.json"] == ["md.0", "md.idx", "mmd.0"]


def test_fsync_and_ceiling(tmp_path):
    # flush ends the ADIOS2 step and fsyncs; close must then only close
    args = [*BT, "--fsync", "--ceiling", "--verify", "--adios2-params", "NumAggregators=3"]
    r = run(4, args, tmp_path)
    assert r.rc == 0, r.err
    p = r.record["passes"][0]
    assert p["ceiling"]["bytes"] == ELEMS * 8
    assert not list(tmp_path.glob("btio.adios2.ceiling*"))
    assert r.record["verify"]["ok"] is True


def test_corrupted_byte_fails_verify(tmp_path):
    assert run(4, [*BT, "--adios2-params", "NumAggregators=2"], tmp_path).rc == 0
    path = tmp_path / "btio.adios2" / "data.1"
    data = bytearray(path.read_bytes())
    data[len(data) - 1000] ^= 0x40  # inside the last block of the second aggregator
    path.write_bytes(bytes(data))
    r = run(9, [*BT, "--mode", "read", "--verify"], tmp_path)
    assert r.rc == 3, r.err
    errs = r.error_lines()
    assert len(errs) == 1, r.err
    pattern = r"verify failed: 1 of \d+ values differ in \./btio\.adios2; first: var\[1\]"
    assert re.search(pattern, errs[0])


def _not_a_dataset(tmp_path):
    (tmp_path / "btio.adios2").write_text("not a directory")


def _no_index(tmp_path):
    assert run(4, BT, tmp_path).rc == 0
    (tmp_path / "btio.adios2" / "md.idx").unlink()


def _missing_subfile(tmp_path):
    assert run(4, [*BT, "--adios2-params", "NumAggregators=2"], tmp_path).rc == 0
    (tmp_path / "btio.adios2" / "data.1").unlink()


BAD_READS = [
    # told by the core from the path's signature before ADIOS2 opens it
    ("not-a-dataset", _not_a_dataset, 2, "./btio.adios2 is a file of no format this suite reads"),
    ("no-index", _no_index, 2, "./btio.adios2 is a folder, not an ADIOS2 BP dataset (a folder"),
    ("missing-subfile", _missing_subfile, 1, "a truncated or missing subfile"),
]


@pytest.mark.parametrize("case", BAD_READS, ids=[c[0] for c in BAD_READS])
def test_bad_path_is_named(tmp_path, case):
    _, prepare, code, msg = case
    prepare(tmp_path)
    r = run_plain(4, [*BT, "--mode", "read", "--verify"], tmp_path, timeout=30)
    assert r.rc == code, r.err
    errs = r.error_lines()
    assert len(errs) == 1, r.err
    assert msg in errs[0]
    assert "ADIOS2 ERROR" not in r.err  # caught before the library prints an exception


def test_bad_params_and_help(tmp_path):
    r = run_plain(4, [*BT, "--adios2-params", "StatsLevel"], tmp_path, timeout=30)
    assert r.rc == 2
    assert "--adios2-params: 'StatsLevel' is not Key=Value" in r.error_lines()[0]
    assert not (tmp_path / "btio.adios2").exists()
    h = run_plain(1, ["btio", "--help"], tmp_path)
    assert re.search(r"--adios2-engine .*\(default: bp5\)", h.out)
    assert "--independent: none, every rank writes its own" in " ".join(h.out.split())
