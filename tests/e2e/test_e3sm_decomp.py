# SPDX-License-Identifier: BSD-3-Clause
"""e3sm-decomp end to end: PIO .dat files -> decomposition map file equal to
the original's map_f_case_16p.nc; malformed .dat files exit 2 with one line."""

import subprocess

import pytest
from conftest import SHIPPED, TESTDATA, need, run, run_plain

E3SM = TESTDATA / "e3sm"
DATS = [
    E3SM / "piodecomp16tasks16io01dims_ioid_514.dat",
    E3SM / "piodecomp16tasks16io01dims_ioid_516.dat",
    E3SM / "piodecomp16tasks16io02dims_ioid_548.dat",
]


def dat_args():
    args = []
    for i, d in enumerate(DATS, 1):
        args += [f"--d{i}", str(d)]
    return args


def dump(path, cwd):
    out = subprocess.run(
        ["ncmpidump", str(path)], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout
    # the first line names the file; command_line records how it was made
    return [line for line in out.splitlines()[1:] if ":command_line" not in line]


@pytest.mark.parametrize("np_", [1, 3])
def test_converter_reproduces_map_f_case(tmp_path, np_):
    r = run(np_, ["e3sm-decomp", "-o", "f.nc", *dat_args(), "--verify"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["verify"]["ok"] is True
    assert "D3: " in r.out and "62352 requests" in r.out
    shipped = SHIPPED / "e3sm" / "map_f_case_16p.nc"
    assert dump(tmp_path / "f.nc", tmp_path) == dump(shipped, tmp_path)


def test_list_file_and_hdf5_format(tmp_path, built_backends):
    need("hdf5", built_backends)
    (tmp_path / "list.txt").write_text("# F case\n" + "\n".join(map(str, DATS)) + "\n")
    r = run(1, ["e3sm-decomp", "-o", "f.h5", "-a", "hdf5", "list.txt"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["backend"] == "hdf5"
    h5 = subprocess.run(
        ["h5dump", "-d", "D1.lengths", "f.h5"], cwd=tmp_path, capture_output=True, text=True
    ).stdout
    assert "16, 12, 21, 21, 36" in h5


BAD_DATS = [
    ("not-a-dat", "hello\n", "line 1: expected 'version V npes N ndims K'"),
    (
        "short-offsets",
        "version 2001 npes 2 ndims 1\n10\n0 3\n1 2\n",
        "line 4: rank 0 should list 3",
    ),
    ("rank-order", "version 2001 npes 3 ndims 1\n10\n1 1\n3\n0 1\n2\n", "line 5: expected 'rank"),
    ("bad-dims", "version 2001 npes 2 ndims 2\n10\n", "line 2: expected 2 dimension sizes"),
    (
        "offset-past-array",
        "version 2001 npes 2 ndims 2\n5 2\n0 2\n1 2\n1 2\n4 11\n",
        "line 6: offset 11 is beyond the global array of 10 elements (dimensions 5 2 on line 2)",
    ),
]


@pytest.mark.parametrize("case", BAD_DATS, ids=[c[0] for c in BAD_DATS])
def test_bad_dat_exits_2_with_one_line(tmp_path, case):
    _, text, msg = case
    (tmp_path / "bad.dat").write_text(text)
    r = run_plain(2, ["e3sm-decomp", "-o", "out.nc", "--d1", "bad.dat"], tmp_path, timeout=30)
    line = r.error_line()
    assert "bad.dat " + msg in line
    assert not (tmp_path / "out.nc").exists()


def test_missing_output_and_gap(tmp_path):
    r = run_plain(1, ["e3sm-decomp", "--d1", str(DATS[0])], tmp_path)
    assert r.rc == 2 and "needs the output file" in r.err
    r = run_plain(1, ["e3sm-decomp", "-o", "x.nc", "--d2", str(DATS[0])], tmp_path)
    assert r.rc == 2 and "--d2 given without --d1" in r.err
