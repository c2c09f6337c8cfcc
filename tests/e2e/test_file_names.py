# SPDX-License-Identifier: BSD-3-Clause
"""Every legal file name works on every backend that opens through MPI-IO,
with the suite's default OpenMPI settings, from an empty folder. OpenMPI
4.1's sharedfp component "sm" (the one the default keeps) failed every open
of a name of one character without a folder ("n": "Unknown error in file
operation" under PnetCDF, MPI_ERR_OTHER under MPI-IO and HDF5, "Permission
denied" under NetCDF-4), for the output and for E3SM's map file alike, and
of a name of 237 to 243 characters, which is now refused naming the limit."""

import pytest
from conftest import SHIPPED, need, run

MPIIO_BACKENDS = ["mpiio", "pnetcdf", "hdf5", "netcdf4"]
NAMES = {
    "one-char": "n",
    "two-chars": "ab",
    "dot-ext": "n.nc",
    "dots": "a.b.c",
    "no-ext": "data",
    "dot-slash": "./n",
    "long-name": "x" * 236,
    "longer-name": "x" * 250,  # sm declines it (with lines of its own on stderr)
    "long-path": "/".join(["abcdefgh"] * 34) + "/n",  # about 310 characters
}


@pytest.mark.parametrize("backend", MPIIO_BACKENDS)
@pytest.mark.parametrize("kind", NAMES)
def test_every_legal_name_is_written_and_read_back(kind, backend, tmp_path, built_backends):
    need(backend, built_backends)
    name = NAMES[kind]
    if "/" in name.strip("./"):
        (tmp_path / name).parent.mkdir(parents=True)
    np_ = 1 + len(name) % 2
    args = ["ncbench", "-d", "2:8:8:2", "-f", name, "--backend", backend, "--mode", "both"]
    r = run(np_, [*args, "--verify"], tmp_path, json_name=f"../{tmp_path.name}.jsonl")
    assert r.rc == 0, (kind, backend, r.err[-3000:])
    assert not r.error_lines(), r.err
    assert (tmp_path / name).is_file() and (tmp_path / name).stat().st_size > 0
    passes = r.record["passes"]
    assert {p["op"] for p in passes} >= {"write", "read"}, passes
    # nothing but the file itself (and its folders) in the empty folder
    made = {p.relative_to(tmp_path).parts[0] for p in tmp_path.rglob("*")}
    assert made == {name.removeprefix("./").split("/")[0]}, made


@pytest.mark.parametrize("backend", MPIIO_BACKENDS)
def test_e3sm_with_one_character_names(backend, tmp_path, built_backends):
    """`e3sm m -o z`: a map file and an output of one character each."""
    need(backend, built_backends)
    (tmp_path / "m").write_bytes((SHIPPED / "e3sm" / "map_g_case_16p.nc").read_bytes())
    r = run(2, ["e3sm", "m", "-o", "z", "-k", "--backend", backend], tmp_path)
    assert r.rc == 0, (backend, r.err[-3000:])
    assert not r.error_lines(), r.err
    assert (tmp_path / "z").is_file() and (tmp_path / "z").stat().st_size > 0


@pytest.mark.parametrize("length", [241, 243])
def test_a_name_sm_cannot_open_is_refused_before_any_file(length, tmp_path, built_backends):
    """A name of 237 to 243 characters: "sm" accepts it, then cannot create
    its own file of the name and up to 19 characters more (MPI_ERR_OTHER)."""
    backend = MPIIO_BACKENDS[length % len(MPIIO_BACKENDS)]
    need(backend, built_backends)
    name = "y" * length
    r = run(2, ["ncbench", "-d", "2:8:8:2", "-f", name, "--backend", backend], tmp_path)
    line = r.error_line(2)
    assert f"its name is {length} characters" in line and "sharedfp sm" in line, line
    assert "shorten the name to 236 characters or fewer" in line, line
    assert not list(tmp_path.glob("yyy*"))
