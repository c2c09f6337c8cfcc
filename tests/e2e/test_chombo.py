# SPDX-License-Identifier: BSD-3-Clause
"""Chombo end to end: the shipped grid is abrgen's output and runs by default;
the HDF5 file has Chombo's layout; every mode writes, reads back and verifies
at 1, 4 and 8 ranks; the seed's weak-scaling replications run at 8 ranks;
timmy.txt is written but never clobbered; bad grids and inputs exit 2."""

import re
import subprocess
import time

import pytest
from conftest import REPO, assert_ended_quickly, need, run, run_plain

GRID = REPO / "grids" / "s64x64x64L2r4b8-32.abr"
BOX = re.compile(r"\((\d+),(\d+),(\d+)\)\((\d+),(\d+),(\d+)\)\[\d+\]")


def grid_levels(path):
    """Per level: (number of boxes, cells), from an ABR file."""
    levels = []
    for line in path.read_text().splitlines():
        if line.startswith("Number of Boxes on Level"):
            levels.append([0, 0])
        elif levels and not line.startswith("!"):
            for b in BOX.findall(line):
                lo, hi = list(map(int, b[:3])), list(map(int, b[3:]))
                levels[-1][0] += 1
                levels[-1][1] += (hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1)
    return levels


def file_bytes(levels, ncomp, copies=1):
    """Bytes of one write: data, Processors, boxes and offsets of each level."""
    total = 0
    for nboxes, cells in levels:
        n = nboxes * copies
        total += 8 * cells * copies * ncomp + 4 * n + 24 * n + 8 * (n + 1)
    return total


def file_values(levels, ncomp, copies=1):
    """Values --verify checks: data, Processors, boxes (6 each) and offsets."""
    return sum(cells * copies * ncomp + 8 * n * copies + 1 for n, cells in levels)


def dump(args, cwd):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def small_grid(tmp_path_factory):
    """A 3-level grid small enough for the test matrix, made by abrgen."""
    d = tmp_path_factory.mktemp("grid")
    args = ["abrgen", "--domain", "16", "--levels", "3", "--ratio", "2", "--min-box", "4"]
    r = run_plain(1, [*args, "--max-box", "8", "--radius", "0.3", "-o", "small.abr"], d)
    assert r.rc == 0, r.err
    return d / "small.abr"


def test_abrgen_defaults_make_the_shipped_grid(tmp_path):
    r = run_plain(1, ["abrgen", "-o", "g.abr"], tmp_path)
    assert r.rc == 0, r.err
    assert (tmp_path / "g.abr").read_bytes() == GRID.read_bytes()
    assert "level 1: domain (0,0,0)(255,255,255), 246 boxes" in r.out
    again = run_plain(1, ["abrgen", "-o", "g.abr", "--domain", "32"], tmp_path)
    assert again.rc == 2 and "g.abr exists: pass --overwrite" in again.err
    assert (tmp_path / "g.abr").read_bytes() == GRID.read_bytes()


def test_default_grid_layout_and_timmy(tmp_path, built_backends):
    need("hdf5", built_backends)
    r = run(4, ["chombo", "--ncomp", "2", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    rec = r.record
    assert rec["backend"] == "hdf5" and rec["io"] == "indep"
    assert rec["verify"]["ok"] and rec["passes"][0]["path"] == "phi.hdf5"
    assert rec["passes"][0]["bytes"] == file_bytes(grid_levels(GRID), 2)
    assert f"grids file     : {GRID}" in r.out  # found in the source tree
    timmy = (tmp_path / "timmy.txt").read_text()
    for row in ["Everything", "read input", "initData", "OutputData", "table tots:"]:
        assert row in timmy
    assert re.search(r"^\s+OutputData\s+[\d.]+% +1 +[\d.]+ \[ +[\d.]+, +[\d.]+\]$", timmy, re.M)
    assert timmy in r.out

    h = dump(["h5dump", "-A", "phi.hdf5"], tmp_path)
    for group in ["Chombo_global", "level_0", "level_1", "data_attributes"]:
        assert f'GROUP "{group}"' in h
    for dset in ["Processors", "boxes", "data:datatype=0", "data:offsets=0"]:
        assert f'DATASET "{dset}"' in h
    for attr in ["SpaceDim", "testReal", "filetype", "num_levels", "num_components", "dx"]:
        assert f'ATTRIBUTE "{attr}"' in h
    for attr in ["comps", "objectType", "ghost", "outputGhost", "prob_domain", "ref_ratio"]:
        assert f'ATTRIBUTE "{attr}"' in h
    assert '(0): "VanillaAMRFileType"' in h and '(0): "FArrayBox"' in h
    assert 'H5T_STD_I32LE "intvecti";' in h and 'H5T_STD_I32LE "hi_k";' in h
    assert "DATASPACE  SIMPLE { ( 246 ) / ( 246 ) }" in h  # level 1 boxes
    assert "DATASPACE  SIMPLE { ( 247 ) / ( 247 ) }" in h  # and their offsets
    # boxes sorted by small end, i then j then k
    boxes = dump(["h5dump", "-d", "/level_1/boxes", "phi.hdf5"], tmp_path)
    corners = [int(v) for v in re.findall(r"^\s+(\d+),?$", boxes, re.M)]
    lows = [tuple(corners[i : i + 3]) for i in range(0, len(corners), 6)]
    assert len(lows) == 246 and lows == sorted(lows)


MODES = [
    ("independent", []),
    ("collective", ["--collective"]),
    ("aggregated", ["--aggregate"]),
]


@pytest.mark.parametrize("mode", MODES, ids=[m[0] for m in MODES])
@pytest.mark.parametrize("backend", ["hdf5", "pnetcdf"])
@pytest.mark.parametrize("np_", [1, 4, 8])
def test_write_then_read_verifies(tmp_path, built_backends, small_grid, np_, backend, mode):
    need(backend, built_backends)
    args = ["chombo", "--grids", str(small_grid), "--ncomp", "2", "--backend", backend]
    args += [*mode[1], "--quiet"]
    want = file_bytes(grid_levels(small_grid), 2)
    w = run(np_, [*args, "--verify"], tmp_path)
    assert w.rc == 0, w.err
    assert w.record["io"] == ("coll" if mode[0] == "collective" else "indep")
    assert w.record["passes"][0]["bytes"] == want
    assert w.record["verify"]["values_checked"] == file_values(grid_levels(small_grid), 2)
    r = run(np_, [*args, "--mode", "read", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["verify"]["ok"]
    assert r.record["verify"]["values_checked"] == file_values(grid_levels(small_grid), 2)


def test_weak_scaling_replications_at_8_ranks(tmp_path):
    base = grid_levels(GRID)
    r = run(8, ["chombo", "--ncomp", "1", "--replicate", "2,2,2", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["passes"][0]["bytes"] == file_bytes(base, 1, 8)
    assert r.record["verify"]["values_mismatched"] == 0
    assert "level 0: domain (0,0,0)-(127,127,127), 64 boxes" in r.out
    for rep, copies in [("4,2,2", 16), ("4,4,2", 32)]:
        args = ["chombo", "--ncomp", "1", "--replicate", rep, "--backend", "null", "--quiet"]
        n = run(8, args, tmp_path, json_name=f"null{copies}.jsonl")
        assert n.rc == 0, n.err
        assert n.record["passes"][0]["bytes"] == file_bytes(base, 1, copies)


def test_input_file_and_overrides(tmp_path, small_grid, built_backends):
    need("hdf5", built_backends)
    (tmp_path / "input").write_text(
        f"# the benchmark's input\ngrids_file = {small_grid}\nncomp = 3\nreplication = 2 1 1\n"
        "ordering = lexicographic\noutput = out.h5\ncollective = 1\naggregate_boxes = 1\n"
    )
    r = run(4, ["chombo", "input", "--ncomp", "2", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    k = r.record["options"]["kernel"]
    assert (k["ncomp"], k["replicate"], k["ordering"]) == (2, [2, 1, 1], "lexicographic")
    assert (k["transfer"], k["aggregate"]) == ("collective", True)
    assert r.record["io"] == "coll"
    assert (tmp_path / "out.h5").exists() and not (tmp_path / "phi.hdf5").exists()
    # the command line wins over the file's collective = 1; the write's
    # timmy.txt is only replaced with --overwrite
    args = ["chombo", "input", "--ncomp", "2", "--independent", "--mode", "read", "--verify"]
    i = run(4, [*args, "--overwrite"], tmp_path)
    assert i.rc == 0, i.err
    assert i.record["io"] == "indep" and i.record["verify"]["ok"]


def test_random_ordering_depends_on_seed(tmp_path, small_grid):
    runs = []

    def procs(seed, ordering):
        d = tmp_path / f"run{len(runs)}"
        d.mkdir()
        runs.append(d)
        args = ["chombo", "--grids", str(small_grid), "--ncomp", "1", "--backend", "pnetcdf"]
        r = run(4, [*args, "--ordering", ordering, "--seed", str(seed), "--verify"], d)
        assert r.rc == 0, r.err
        out = dump(["ncmpidump", "-v", "level_2.Processors", "phi.nc"], d)
        return out.split("level_2.Processors =")[1]

    a, b, c = procs(3, "random"), procs(3, "random"), procs(4, "random")
    assert a == b and a != c
    assert procs(3, "morton") != a


def test_timmy_is_not_clobbered(tmp_path, small_grid):
    (tmp_path / "timmy.txt").write_text("mine\n")
    args = ["chombo", "--grids", str(small_grid), "--ncomp", "1"]
    r = run_plain(4, args, tmp_path)
    assert r.rc == 2
    assert "./timmy.txt exists: pass --overwrite" in r.err
    assert (tmp_path / "timmy.txt").read_text() == "mine\n"
    assert run(4, [*args, "--overwrite"], tmp_path).rc == 0
    assert "OutputData" in (tmp_path / "timmy.txt").read_text()


HEADER = (
    "ABR file format version 0.1\nNumber of Levels = 1\nRefinement Ratio =\nCell Centering = 0\n"
    "Number of Time Steps = 1\nNumber of Processors = 1\nLevel 0 Domain = (0,0,0)(7,7,7)\n"
    "TimeStep: 0\n"
)
BAD_GRIDS = [
    ("missing-key", HEADER.replace("Cell Centering = 0\n", ""), "bad.abr line 7: TimeStep before"),
    (
        "box-count",
        HEADER + "Number of Boxes on Level 0: 2\n(0,0,0)(7,7,7)[0]\n",
        "bad.abr line 10: level 0 declares 2 boxes (line 9) but lists 1",
    ),
    (
        "overlap",
        HEADER + "Number of Boxes on Level 0: 2\n(0,0,0)(7,7,7)[0]\n(4,4,4)(7,7,7)[0]\n",
        "bad.abr line 11: box (4,4,4)(7,7,7) of level 0 overlaps",
    ),
    (
        "outside",
        HEADER + "Number of Boxes on Level 0: 1\n(0,0,0)(8,7,7)[0]\n",
        "bad.abr line 10: box (0,0,0)(8,7,7) is empty or outside level 0's domain",
    ),
    (
        "syntax",
        HEADER + "Number of Boxes on Level 0: 1\n(0,0,0)-(7,7,7)[0]\n",
        "bad.abr line 10: expected boxes written (i,j,k)(i,j,k)[rank]",
    ),
]


@pytest.mark.parametrize("case", BAD_GRIDS, ids=[c[0] for c in BAD_GRIDS])
def test_bad_grid_exits_2_quickly(tmp_path, case):
    _, text, msg = case
    (tmp_path / "bad.abr").write_text(text)
    t0 = time.monotonic()
    r = run_plain(4, ["chombo", "--grids", "bad.abr"], tmp_path, timeout=30)
    assert_ended_quickly(t0, 4, 10)
    line = r.error_line()
    assert msg in line


BAD_INPUTS = [
    ("unknown-key", "grids = x.abr\n", "input line 1: unknown key 'grids'"),
    ("no-value", "ncomp =\n", "input line 1: key 'ncomp' has no value"),
    ("collective-2", "collective = 2\n", "input line 1: collective must be 0 or 1, not '2'"),
    (
        "zero-copies",
        "replication = 0 1 1\n",
        "input line 1: --replicate takes three integers, each at least 1, not '0 1 1'",
    ),
    ("ordering", "ordering = hilbert\n", "input line 1"),
    ("missing-grid", "grids_file = nowhere.abr\n", "grids file (grids_file / --grids) nowhere.abr"),
]


@pytest.mark.parametrize("case", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_exits_2(tmp_path, case):
    _, text, msg = case
    (tmp_path / "input").write_text(text)
    r = run_plain(2, ["chombo", "input"], tmp_path, timeout=30)
    line = r.error_line()
    assert msg in line
