# SPDX-License-Identifier: BSD-3-Clause
"""BTIO end to end: every method and backend writes, reads back and verifies;
headers match the original's; corruption and bad input are caught."""

import re
import shutil
import subprocess
import time

import pytest
from conftest import TESTDATA, assert_ended_quickly, need, run, run_plain

GRID = (24, 20, 18)  # does not divide evenly by 2 or 3
DUMPS = 2

# (id, backend, extra args); methods 0-3 are the original's
CONFIGS = [
    ("m0-mpi-coll", "mpiio", ["--method", "0"]),
    ("m1-mpi-indep", "mpiio", ["--method", "1"]),
    ("m2-pnetcdf-blocking", "pnetcdf", ["--method", "2"]),
    ("m3-pnetcdf-nonblocking", "pnetcdf", ["--method", "3"]),
    ("pnetcdf-varn", "pnetcdf", ["--backend", "pnetcdf", "--api", "varn"]),
    ("pnetcdf-indep", "pnetcdf", ["--method", "2", "--independent"]),
    ("hdf5-coll", "hdf5", ["--backend", "hdf5"]),
    ("hdf5-indep", "hdf5", ["--backend", "hdf5", "--independent"]),
    ("hdf5-chunked", "hdf5", ["--backend", "hdf5", "--hdf5-layout", "chunked"]),
    ("netcdf4-coll", "netcdf4", ["--backend", "netcdf4"]),
    ("netcdf4-indep", "netcdf4", ["--backend", "netcdf4", "--independent"]),
    ("adios2-bp5", "adios2", ["--backend", "adios2"]),
    (
        "adios2-bp4-nonblocking",
        "adios2",
        ["--backend", "adios2", "--adios2-engine", "bp4", "--api", "nonblocking", "--independent"],
    ),
]


def grid_args(grid=GRID, dumps=DUMPS):
    return ["--grid", ",".join(map(str, grid)), "--dumps", str(dumps)]


def expected_elems(grid=GRID, dumps=DUMPS):
    return grid[0] * grid[1] * grid[2] * 5 * dumps


@pytest.mark.parametrize("np_", [1, 4, 9])
@pytest.mark.parametrize("cfg", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_write_then_read_verifies(tmp_path, built_backends, np_, cfg):
    name, backend, extra = cfg
    need(backend, built_backends)
    w = run(np_, ["btio", *grid_args(), *extra, "--verify"], tmp_path)
    assert w.rc == 0, w.err
    rec = w.record
    assert rec["backend"] == backend
    assert rec["verify"]["ok"] is True
    assert rec["verify"]["values_checked"] == expected_elems()
    assert [p["op"] for p in rec["passes"]] == ["write", "verify"]
    assert rec["passes"][0]["bytes"] == expected_elems() * 8
    # read mode, checking every value, on the same ranks
    r = run(np_, ["btio", *grid_args(), *extra, "--mode", "read", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["verify"]["values_checked"] == expected_elems()
    assert r.record["verify"]["values_mismatched"] == 0
    assert "-- BT-IO Benchmark (read  operation only) --" in r.out


def test_written_by_4_read_by_9(tmp_path):
    assert run(4, ["btio", *grid_args(), "--method", "3"], tmp_path).rc == 0
    r = run(9, ["btio", *grid_args(), "--method", "2", "--mode", "read", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["verify"]["ok"]


def test_header_matches_original(tmp_path):
    w = run(4, ["btio", "--grid", "128,128,128", "--dumps", "3", "--method", "3"], tmp_path)
    assert w.rc == 0, w.err
    got = subprocess.run(
        ["ncmpidump", "-h", "btio.nc"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    want = (TESTDATA / "btio" / "sample_ncmpidump_h_btio_g128_n3.txt").read_text()
    assert got == want


def test_hdf5_layout(tmp_path, built_backends):
    need("hdf5", built_backends)
    assert run(4, ["btio", *grid_args(), "--backend", "hdf5"], tmp_path).rc == 0
    dump = subprocess.run(
        ["h5dump", "-H", "btio.h5"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    assert 'DATASET "var"' in dump
    assert "H5T_IEEE_F64LE" in dump
    assert "( 2, 18, 20, 24, 5 ) / ( H5S_UNLIMITED, 18, 20, 24, 5 )" in dump


def test_mpiio_file_is_raw_canonical(tmp_path):
    assert run(4, ["btio", *grid_args(), "--method", "0"], tmp_path).rc == 0
    assert (tmp_path / "btio.mpi").stat().st_size == expected_elems() * 8


@pytest.mark.parametrize("writer,reader", [((9, "1"), (1, "0")), ((4, "0"), (9, "1"))])
def test_mpiio_layout_does_not_depend_on_the_decomposition(tmp_path, writer, reader):
    """Every value lands at its canonical offset: a file written by one rank
    count (3 or 2 cells per rank, rows of single cells) verifies when read
    by another (one cell of the whole grid, or 3 per rank)."""
    w = run(writer[0], ["btio", *grid_args(), "--method", writer[1]], tmp_path)
    assert w.rc == 0, w.err
    r = run(
        reader[0],
        ["btio", *grid_args(), "--method", reader[1], "--mode", "read", "--verify"],
        tmp_path,
    )
    assert r.rc == 0, r.err
    assert r.record["verify"]["ok"] is True
    assert r.record["verify"]["values_checked"] == expected_elems()


def test_mpiio_overwrite_truncates_a_longer_file(tmp_path):
    """A new file is not truncated (ext4 would flush it at close); a file
    that holds data is, on every rank at once."""
    assert run(4, ["btio", *grid_args(dumps=3), "--method", "0"], tmp_path).rc == 0
    assert (tmp_path / "btio.mpi").stat().st_size == expected_elems(dumps=3) * 8
    r = run(4, ["btio", *grid_args(), "--method", "1", "--overwrite", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    assert (tmp_path / "btio.mpi").stat().st_size == expected_elems() * 8


@pytest.mark.parametrize("method,fname", [("0", "btio.mpi"), ("3", "btio.nc")])
def test_corrupted_byte_fails_verify(tmp_path, method, fname):
    assert run(4, ["btio", *grid_args(), "--method", method], tmp_path).rc == 0
    path = tmp_path / fname
    data = bytearray(path.read_bytes())
    data[len(data) - 1000] ^= 0x40  # inside the last record's data
    path.write_bytes(bytes(data))
    r = run(4, ["btio", *grid_args(), "--method", method, "--mode", "read", "--verify"], tmp_path)
    assert r.rc == 3, r.err
    errs = r.error_lines()
    assert len(errs) == 1, r.err
    assert re.search(
        r"verify failed: 1 of \d+ values differ in \./btio\.\w+; first: var\[1\]", errs[0]
    )
    assert r.record["verify"]["values_mismatched"] == 1
    assert r.record["exit_code"] == 3


def test_seed_input_file_and_report_layout(tmp_path):
    shutil.copy(TESTDATA / "btio" / "inputbt.data", tmp_path / "inputbt.data")
    (tmp_path / "output").mkdir()
    r = run(4, ["btio"], tmp_path)  # reads ./inputbt.data: w, method 3, 5 dumps, 16^3
    assert r.rc == 0, r.err
    assert (tmp_path / "output" / "btio.nc").exists()
    assert r.record["options"]["kernel"] == {
        "method": 3,
        "dumps": 5,
        "grid": [16, 16, 16],
        "dir": "./output",
    }
    sample = (TESTDATA / "btio" / "sample_report_p9_g128_n3_m3_write.txt").read_text()
    labels = [line.split(":")[0] for line in sample.splitlines() if line and line != "rc=0"]
    ours = [line.split(":")[0] for line in r.out.splitlines()][: len(labels)]
    labels[0] = " Reading from input file inputbt.data"
    assert ours == labels
    # values in the original's fixed-width columns
    assert "Number of MPI processes     :         4" in r.out
    assert "Global array size X         :        16" in r.out
    assert "Total I/O amount            :         0.78 MiB" in r.out
    assert "Using Parallel netCDF non-blocking I/O method" in r.out


def test_command_line_overrides_input_file(tmp_path):
    (tmp_path / "in.data").write_text("w # mode\n2 # method\n1\n12 12 12\n.\n")
    r = run(4, ["btio", "in.data", "--dumps", "3", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["options"]["kernel"]["dumps"] == 3
    assert r.record["api"] == "blocking"  # method 2
    assert r.record["verify"]["values_checked"] == 12**3 * 5 * 3


def test_refuses_to_overwrite(tmp_path):
    assert run(4, ["btio", *grid_args()], tmp_path).rc == 0
    before = (tmp_path / "btio.nc").read_bytes()
    r = run_plain(4, ["btio", *grid_args()], tmp_path)
    assert r.rc == 2
    assert "exists: pass --overwrite" in r.err
    assert (tmp_path / "btio.nc").read_bytes() == before
    assert run(4, ["btio", *grid_args(), "--overwrite"], tmp_path).rc == 0


BAD_INPUTS = [
    ("non-square", 3, [], None, "square number of processes"),
    ("missing-file", 4, ["nope.data"], None, "cannot open input file nope.data"),
    ("malformed-mode", 4, ["bad.data"], "q\n3\n5\n16 16 16\n.\n", "bad.data line 1"),
    ("malformed-grid", 4, ["bad.data"], "w\n3\n5\n16 x 16\n.\n", "bad.data line 4"),
    ("short-file", 4, ["bad.data"], "w\n3\n", "bad.data line 3: missing"),
    ("bad-method", 4, ["--method", "7"], None, "command line: --method takes 0 to 3, not '7'"),
    ("grid-too-small", 9, ["--grid", "8,8,8"], None, "too small for 9 processes"),
    ("no-such-dir", 4, ["--dir", "no/such/dir"], None, "does not exist"),
    ("dir-is-a-file", 4, ["--dir", "inputbt.data"], None, "is not a directory"),
    ("unknown-option", 4, ["--gird", "8,8,8"], None, "unknown option '--gird'"),
    ("unknown-backend", 4, ["--backend", "posix"], None, "unknown backend 'posix'"),
    ("read-missing", 4, ["--mode", "read"], None, "cannot read ./btio.nc"),
]


@pytest.mark.parametrize("case", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_exits_2_quickly(tmp_path, case):
    _, np_, args, content, msg = case
    if content is not None:
        (tmp_path / "bad.data").write_text(content)
    (tmp_path / "inputbt.data").write_text("w\n3\n1\n16 16 16\n.\n")
    t0 = time.monotonic()
    r = run_plain(np_, ["btio", *args], tmp_path, timeout=30)
    assert_ended_quickly(t0, np_, 10)
    line = r.error_line()
    assert msg in line


def test_help_lists_every_option_with_default(tmp_path):
    r = run_plain(1, ["btio", "--help"], tmp_path)
    assert r.rc == 0
    for opt, default in [("--method", "3"), ("--dumps", "5"), ("--grid", "64,64,64")]:
        assert re.search(rf"{opt} .*\(default: {re.escape(default)}[;)]", r.out), opt
    for opt in ["--backend", "--verify", "--json", "--overwrite", "--pnetcdf-format"]:
        assert opt in r.out


def test_ceiling_measured_and_removed(tmp_path):
    r = run(4, ["btio", *grid_args(), "--method", "0", "--ceiling"], tmp_path)
    assert r.rc == 0, r.err
    c = r.record["passes"][0]["ceiling"]
    assert c["bytes"] == expected_elems() * 8 and c["write_bandwidth_mib_s"] > 0
    assert not list(tmp_path.glob("btio.mpi.ceiling*"))
    assert "ceiling: best of 3 contiguous MPI-IO writes, buffered, of the same bytes" in r.out


EXT = {"pnetcdf": "nc", "hdf5": "h5", "netcdf4": "nc4", "adios2": "adios2", "mpiio": "mpi"}


@pytest.mark.parametrize("backend", ["pnetcdf", "hdf5", "netcdf4", "adios2", "mpiio"])
def test_read_with_another_grid_is_refused(tmp_path, built_backends, backend):
    """A read with a smaller (or larger) --grid than the file's is refused on
    open with one line (exit 2), not read as if it were corrupt. A raw MPI-IO
    file carries no header: its size must fit the layout."""
    need(backend, built_backends)
    be = ["--backend", backend]
    r = run(1, ["btio", *be, *grid_args((16, 16, 16), 2), "--mode", "write"], tmp_path)
    assert r.rc == 0, r.err
    path = f"./btio.{EXT[backend]}"
    cases = {
        (8, 16, 16): "dimension X is 16 long in the file, 8 expected",
        (16, 16, 32): "dimension Z is 16 long in the file, 32 expected",
    }
    if backend == "mpiio":
        cases = {
            (12, 16, 16): f"{path} is longer than its layout (327680 bytes found, 245760 expected",
            (16, 16, 32): f"{path} is shorter than its layout needs (327680 bytes found, 655360",
        }
    for grid, msg in cases.items():
        r = run_plain(1, ["btio", *be, *grid_args(grid, 2), "--mode", "read", "--verify"], tmp_path)
        assert r.rc == 2, (grid, r.rc, r.err)
        (line,) = r.error_lines()
        assert msg in line, line
        if backend != "mpiio":
            assert "variable var" in line and "btio." in line
    # more records than read: fine (the record dimension holds at least those read)
    r = run(1, ["btio", *be, *grid_args((16, 16, 16), 1), "--mode", "read", "--verify"], tmp_path)
    assert r.rc == 0 and r.record["verify"]["ok"], r.err
    if backend != "mpiio":  # fewer records than read: refused
        r = run_plain(1, ["btio", *be, *grid_args((16, 16, 16), 3), "--mode", "read"], tmp_path)
        assert r.rc == 2, r.err
        assert "is 2 long in the file, at least 3 expected" in r.error_lines()[0]
