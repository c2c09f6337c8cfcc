# SPDX-License-Identifier: BSD-3-Clause
"""AMReX end to end: the seed's inputs file gives the reference header and box
map; the HDF5 layout matches the HDF5 twin's dump; every backend writes, reads
back and verifies at 1, 3 and 4 ranks; corruption and bad inputs are caught."""

import re
import shutil
import subprocess
import time

import pytest
from conftest import TESTDATA, assert_ended_quickly, need, run, run_plain

REF = TESTDATA / "amrex"
BACKENDS = ["pnetcdf", "hdf5", "netcdf4", "mpiio"]


def pieces(length, chunk):
    """Boxes AMReX's maxSize cuts a side of `length` cells into."""
    if length <= chunk:
        return 1
    bs, n = chunk, length
    while bs % 2 == 0 and n % 2 == 0:
        bs, n = bs // 2, n // 2
    return -(-n // bs)


def expected_values(ncells, mgs, nlevs, ncomp):
    """Values checked by --verify: data plus Processors, boxes, offsets."""
    total = 0
    for _ in range(nlevs):  # every level's region is ncells wide (middle half, refined by 2)
        nboxes = pieces(ncells, mgs) ** 3
        total += ncomp * ncells**3 + nboxes * (1 + 6) + nboxes + 1
    return total


def dump(args, cwd):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=True).stdout


def test_seed_inputs_give_reference_header_and_boxes(tmp_path):
    shutil.copy(REF / "inputs.pnetcdf_benchmark", tmp_path / "inputs")
    r = run(4, ["amrex", "inputs", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["options"]["kernel"]["ncells"] == 128
    assert r.record["verify"]["values_mismatched"] == 0
    assert r.record["verify"]["values_checked"] == expected_values(128, 32, 1, 2)
    got = dump(["ncmpidump", "-h", "plt00000.nc"], tmp_path)
    assert got == (REF / "plt00000_n128_mgs32_nc2_np4.header.cdl").read_text()
    meta = dump(
        [
            "ncmpidump",
            "-v",
            "level_0.Processors,level_0.boxes,level_0.data:offsets=0",
            "plt00000.nc",
        ],
        tmp_path,
    )
    assert meta == (REF / "plt00000_n128_mgs32_nc2_np4.meta.cdl").read_text()
    for line in [
        "MPI initialized with 4 MPI processes",
        "::---- calling NCPUT for the grid data on level 0",
    ]:
        assert line in r.out
    for label in ["Write_NCHEADER_time_1_2_0", "Write_NCVARPUT_time", "Write_PNETCDF_time"]:
        assert re.search(rf"^{label} = [0-9.e-]+  seconds\.$", r.out, re.M), label


def test_hdf5_layout_matches_hdf5_twin(tmp_path, built_backends):
    need("hdf5", built_backends)
    args = ["amrex", "--ncells", "128", "--max_grid_size", "32", "--ncomp", "2"]
    r = run(4, [*args, "--backend", "hdf5", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    got = dump(["h5dump", "-A", "plt00000.h5"], tmp_path).splitlines()
    want = (REF / "plt00000_n128_mgs32_nc2_np4.hdf5_2019.header.txt").read_text().splitlines()
    assert got[0] == 'HDF5 "plt00000.h5" {'
    # the twin's ghost holds garbage (a bug of that code): ours is zeros
    ghost = want.index('         ATTRIBUTE "ghost" {')
    for i in range(ghost, len(want)):
        want[i] = re.sub(r"^(\s+)(319|50331648),$", r"\g<1>0,", want[i])
        want[i] = re.sub(r"^(\s+)828011496$", r"\g<1>0", want[i])
    assert got[1:] == want[1:]


@pytest.mark.parametrize("io", ["--collective", "--independent"])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("np_", [1, 3, 4])
def test_write_then_read_verifies(tmp_path, built_backends, np_, backend, io):
    need(backend, built_backends)
    args = ["amrex", "--ncells", "20", "--max_grid_size", "8", "--ncomp", "2", "--nlevs", "2"]
    args += ["--backend", backend, io]
    w = run(np_, [*args, "--verify"], tmp_path)
    assert w.rc == 0, w.err
    want = expected_values(20, 8, 2, 2)
    assert [p["op"] for p in w.record["passes"]] == ["write", "verify"]
    assert w.record["io"] == ("coll" if io == "--collective" else "indep")
    assert w.record["verify"]["values_checked"] == want
    r = run(np_, [*args, "--mode", "read", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["verify"]["values_checked"] == want
    assert r.record["verify"]["values_mismatched"] == 0


def test_three_levels_header(tmp_path):
    r = run(
        3,
        ["amrex", "--ncells", "16", "--max_grid_size", "8", "--ncomp", "1", "--nlevs", "3"],
        tmp_path,
    )
    assert r.rc == 0, r.err
    h = dump(["ncmpidump", "-h", "plt00000.nc"], tmp_path)
    assert ":num_levels = 3 ;" in h
    assert "double level_2.data:datatype=0(level_2.dataspace) ;" in h
    assert ":level_1.prob_domain = 0, 0, 0, 31, 31, 31 ;" in h
    assert ":level_0.ref_ratio = 2 ;" in h and ":level_2.ref_ratio = 1 ;" in h
    # level 1 refines the middle half of level 0: cells 8..23 of 32
    boxes = dump(["ncmpidump", "-v", "level_1.boxes", "plt00000.nc"], tmp_path)
    corners = [int(v) for v in re.findall(r"-?\d+", boxes.split("level_1.boxes =")[1])]
    assert min(corners) == 8 and max(corners) == 23


def test_many_components_sorted_as_strings(tmp_path):
    r = run(1, ["amrex", "--ncells", "8", "--max_grid_size", "8", "--ncomp", "11"], tmp_path)
    assert r.rc == 0, r.err
    h = dump(["ncmpidump", "-h", "plt00000.nc"], tmp_path)
    names = re.findall(r":(component_\d+) =", h)
    assert names == sorted(f"component_{i}" for i in range(11))
    assert names[2] == "component_10"


def test_particles_file(tmp_path):
    args = ["amrex", "--ncells", "16", "--max_grid_size", "8", "--ncomp", "1", "--nppc", "2"]
    r = run(3, [*args, "--particles", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    passes = r.record["passes"]
    assert [(p["op"], p["path"]) for p in passes] == [
        ("write", "./plt00000.nc"),
        ("write", "./plt00000_particles.nc"),
        ("verify", "./plt00000.nc"),
        ("verify", "./plt00000_particles.nc"),
    ]
    assert passes[1]["bytes"] == 16**3 * 2 * 5 * 8  # x, y, z, one real, id
    assert passes[3]["values_mismatched"] == 0
    assert "Write_PARTICLES_time = " in r.out


def test_corrupted_data_and_metadata_fail_verify(tmp_path):
    args = ["amrex", "--ncells", "16", "--max_grid_size", "8", "--ncomp", "2", "--backend", "mpiio"]
    assert run(4, args, tmp_path).rc == 0
    path = tmp_path / "plt00000.mpi"
    data = bytearray(path.read_bytes())
    data[0] ^= 0x01  # Processors[0]: the layout starts with it
    data[len(data) - 100] ^= 0x40  # inside the data
    path.write_bytes(bytes(data))
    r = run(4, [*args, "--mode", "read", "--verify"], tmp_path)
    line = r.error_line(3)
    assert "verify failed: 2 of" in line
    assert "level_0.Processors[0]: read 1, expected 0" in line


BAD_INPUTS = [
    (
        "unknown-key",
        "ncells = 16\nmax_grid_sise = 8\n",
        "inputs line 2: unknown key 'max_grid_sise'",
    ),
    ("missing-value", "ncells =\n", "inputs line 1: key 'ncells' has no value"),
    ("not-a-number", "ncells = many\n", "inputs line 1"),
    ("ncells-zero", "ncells = 0\n", "inputs line 1: --ncells takes at least 1, not '0'"),
    (
        "mgs-negative",
        "max_grid_size = -8\n",
        "inputs line 1: --max_grid_size takes at least 1, not '-8'",
    ),
    ("nlevs-high", "nlevs = 4\n", "inputs line 1: --nlevs takes 1 to 3, not '4'"),
    ("nlevs-zero", "nlevs = 0\n", "inputs line 1: --nlevs takes 1 to 3, not '0'"),
    ("no-equals", "ncells 16\n", "inputs line 1: expected 'key = value'"),
]


@pytest.mark.parametrize("case", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_inputs_exit_2_quickly(tmp_path, case):
    _, text, msg = case
    (tmp_path / "inputs").write_text(text)
    t0 = time.monotonic()
    r = run_plain(3, ["amrex", "inputs"], tmp_path, timeout=30)
    assert_ended_quickly(t0, 3, 10)
    line = r.error_line()
    assert msg in line
    assert not (tmp_path / "plt00000.nc").exists()


def test_particles_need_nppc(tmp_path):
    r = run_plain(1, ["amrex", "--nppc", "0", "--particles"], tmp_path)
    assert r.rc == 2
    assert "--particles needs nppc of at least 1" in r.err


def test_help_lists_options_with_defaults(tmp_path):
    r = run_plain(1, ["amrex", "--help"], tmp_path)
    assert r.rc == 0
    for opt, default in [("--ncells", "128"), ("--max_grid_size", "32"), ("--ncomp", "6")]:
        assert re.search(rf"{opt} .*\(default: {re.escape(default)}[;)]", r.out), opt
