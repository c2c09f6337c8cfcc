"""ADIOS2 backend end to end: the layout (an index and one BP file per writer
rank) as ADIOS2's own Python API sees it, values where they belong, reads by
another number of ranks, --overwrite, --fsync, corruption and bad paths."""

import re

import pytest
from conftest import run, run_plain

GRID = (24, 20, 18)  # X, Y, Z: does not divide evenly by 2 or 3
DUMPS = 2
SHAPE = [DUMPS, GRID[2], GRID[1], GRID[0], 5]  # NUM_DUMPS, Z, Y, X, FIVE_DBL
ELEMS = DUMPS * GRID[0] * GRID[1] * GRID[2] * 5
BT = ["btio", "--grid", ",".join(map(str, GRID)), "--dumps", str(DUMPS), "--backend", "adios2"]


@pytest.fixture(autouse=True)
def need_adios2(built_backends):
    if "adios2" not in built_backends:
        pytest.skip("backend adios2 not built")


# The suite's deterministic data (src/core/data.c), for doubles.
MASK = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def fnv1a(name):
    h = 1469598103934665603
    for c in name.encode():
        h = ((h ^ c) * 1099511628211) & MASK
    return h


def expected(seed, var, record, index):
    key = splitmix64(splitmix64(seed ^ fnv1a(var)) ^ record)
    return (splitmix64((key + index) & MASK) >> 11) * 2.0**-53


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


def test_layout_as_adios2_sees_it(tmp_path):
    adios2 = pytest.importorskip("adios2")
    np = pytest.importorskip("numpy")
    assert run(4, BT, tmp_path).rc == 0
    out = tmp_path / "btio.adios2"
    assert (out / "iokernels-adios2.txt").read_text() == (
        "iokernels adios2 layout 1\nwriters 4\nengine BP5\n"
    )
    assert sorted(p.name for p in out.iterdir()) == [
        "iokernels-adios2.txt",
        *[f"writer-{w:06d}.bp" for w in range(4)],
    ]
    cover = np.zeros(SHAPE, dtype=np.int8)
    for w in range(4):
        with adios2.FileReader(str(out / f"writer-{w:06d}.bp")) as f:
            info = f.available_variables()["var"]
            assert info["Type"] == "double"
            assert info["Shape"] == ", ".join(map(str, SHAPE))
            assert info["AvailableStepsCount"] == "1"
            blocks = f.all_blocks_info("var")[0]
            assert len(blocks) == 2 * DUMPS  # q = 2 cells per rank, one block per cell and dump
            for b in blocks:
                start = [int(v) for v in b["Start"].split(",")]
                count = [int(v) for v in b["Count"].split(",")]
                assert start[0] < DUMPS and count[0] == 1 and count[4] == 5
                box = tuple(slice(s, s + c) for s, c in zip(start, count, strict=True))
                cover[box] += 1
                data = f.read("var", start=start, count=count)
                # every value of writer 1's blocks, the corners of the others'
                idx = np.ndindex(*count) if w == 1 else [(0,) * 5, tuple(c - 1 for c in count)]
                for i in idx:
                    g = [s + k for s, k in zip(start, i, strict=True)]
                    lin = (((g[1] * SHAPE[2]) + g[2]) * SHAPE[3] + g[3]) * 5 + g[4]
                    assert data[i] == expected(1, "var", g[0], lin), (w, g)
    assert (cover == 1).all()  # the writers' blocks tile the variable exactly once


def test_overwrite_replaces_the_earlier_writers(tmp_path):
    assert run(9, BT, tmp_path).rc == 0
    r = run_plain(4, BT, tmp_path)
    assert r.rc == 2 and "exists: pass --overwrite" in r.err
    assert run(4, [*BT, "--overwrite", "--adios2-engine", "bp4"], tmp_path).rc == 0
    out = tmp_path / "btio.adios2"
    assert sorted(p.name for p in out.iterdir()) == [
        "iokernels-adios2.txt",
        *[f"writer-{w:06d}.bp" for w in range(4)],
    ]
    assert "writers 4\nengine BP4" in (out / "iokernels-adios2.txt").read_text()
    assert not (out / "writer-000000.bp" / "mmd.0").exists()  # BP5's, gone with the old file
    r = run(4, [*BT, "--mode", "read", "--verify"], tmp_path)
    assert r.rc == 0 and r.record["verify"]["values_checked"] == ELEMS, r.err


def test_overwrite_keeps_what_it_did_not_write(tmp_path):
    foreign = tmp_path / "btio.adios2"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    r = run_plain(4, [*BT, "--overwrite"], tmp_path)
    assert r.rc == 2, r.err
    assert "exists and is not an adios2 output of iokernels" in r.error_lines()[0]
    assert (foreign / "notes.txt").read_text() == "mine"
    # a stranger inside an earlier run's writer file: nothing is removed
    (foreign / "notes.txt").unlink()
    foreign.rmdir()
    assert run(4, BT, tmp_path).rc == 0
    (foreign / "writer-000003.bp" / "notes.txt").write_text("mine")
    r = run_plain(4, [*BT, "--overwrite"], tmp_path)
    assert r.rc == 2, r.err
    assert "writer-000003.bp/notes.txt was not written by ADIOS2" in r.error_lines()[0]
    assert (foreign / "writer-000000.bp" / "md.idx").exists()
    assert (foreign / "writer-000003.bp" / "notes.txt").read_text() == "mine"


def test_fsync_and_ceiling(tmp_path):
    # flush ends the ADIOS2 step and fsyncs; close must then only close
    r = run(4, [*BT, "--fsync", "--ceiling", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    p = r.record["passes"][0]
    assert p["ceiling"]["bytes"] == ELEMS * 8
    assert not (tmp_path / "btio.adios2.ceiling").exists()
    assert r.record["verify"]["ok"] is True


def test_corrupted_byte_fails_verify(tmp_path):
    assert run(4, BT, tmp_path).rc == 0
    path = tmp_path / "btio.adios2" / "writer-000001.bp" / "data.0"
    data = bytearray(path.read_bytes())
    data[len(data) - 1000] ^= 0x40  # inside writer 1's last block
    path.write_bytes(bytes(data))
    r = run(9, [*BT, "--mode", "read", "--verify"], tmp_path)
    assert r.rc == 3, r.err
    errs = r.error_lines()
    assert len(errs) == 1, r.err
    pattern = r"verify failed: 1 of \d+ values differ in \./btio\.adios2; first: var\[1\]"
    assert re.search(pattern, errs[0])


def _not_a_layout(tmp_path):
    (tmp_path / "btio.adios2").write_text("not a directory")


def _bad_index(tmp_path):
    assert run(4, BT, tmp_path).rc == 0
    (tmp_path / "btio.adios2" / "iokernels-adios2.txt").write_text("writers four\n")


def _missing_writer(tmp_path):
    assert run(4, BT, tmp_path).rc == 0
    d = tmp_path / "btio.adios2" / "writer-000002.bp"
    for p in d.iterdir():
        p.unlink()
    d.rmdir()


BAD_READS = [
    ("not-a-layout", _not_a_layout, 2, "./btio.adios2 is not an adios2 output of iokernels"),
    ("bad-index", _bad_index, 1, "iokernels-adios2.txt: not an index of layout 1"),
    ("missing-writer", _missing_writer, 1, "cannot read ./btio.adios2/writer-000002.bp"),
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
    assert "ADIOS2" not in r.err  # caught before the library prints an exception


def test_bad_params_and_help(tmp_path):
    r = run_plain(4, [*BT, "--adios2-params", "StatsLevel"], tmp_path, timeout=30)
    assert r.rc == 2
    assert "--adios2-params: 'StatsLevel' is not Key=Value" in r.error_lines()[0]
    assert not (tmp_path / "btio.adios2").exists()
    h = run_plain(1, ["btio", "--help"], tmp_path)
    assert re.search(r"--adios2-engine .*\(default: bp5\)", h.out)
    assert "--adios2-params" in h.out
