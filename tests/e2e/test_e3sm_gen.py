# SPDX-License-Identifier: BSD-3-Clause
"""Generated E3SM decompositions end to end: `e3sm --generate` writes and
verifies on every backend and strategy; `e3sm-decomp --generate -o` writes a
map file that drives the kernel to the same requests; `--stats` gives the
ne30 / 512-rank figures of E3SM-IO's README without 512 ranks; bad
parameters exit 2 with one line."""

import re

import pytest
from conftest import need, run, run_plain

# small enough for a loaded 2-core machine: ne=1 is 6 elements, 56 columns
CASES = [
    ("F-pnetcdf", "pnetcdf", "f:ne=1,procs=4", []),
    ("F-hdf5", "hdf5", "f:ne=1,procs=4", []),
    ("F-mpiio", "mpiio", "f:ne=1,procs=4", []),
    ("F-netcdf4-h1", "netcdf4", "f:ne=1,procs=4", ["-f", "1"]),
    ("F-adios2", "adios2", "f:ne=1,procs=4", ["-f", "1"]),
    ("F-pnetcdf-box", "pnetcdf", "f:ne=1,procs=8", ["--rearrange", "box", "--io-ranks", "2"]),
    ("F-hdf5-blob", "hdf5", "f:ne=2,procs=4", ["-x", "blob", "-g", "2", "-f", "1"]),
    ("F-pnetcdf-fewer", "pnetcdf", "f:ne=1,procs=2", ["-f", "1"]),
    ("G-pnetcdf", "pnetcdf", "g:cells=60,procs=6", []),
    ("G-hdf5", "hdf5", "g:cells=60,procs=4", []),
    ("G-mpiio", "mpiio", "g:cells=60,procs=4", []),
    ("G-netcdf4", "netcdf4", "g:cells=60,procs=4", []),
    ("G-adios2", "adios2", "g:cells=60,procs=4", []),
    ("I-pnetcdf", "pnetcdf", "i:nlat=12,nlon=16,procs=5", []),
    ("I-hdf5", "hdf5", "i:nlat=12,nlon=16,procs=4", ["-f", "1"]),
    ("I-mpiio", "mpiio", "i:nlat=12,nlon=16,procs=4", []),
]


@pytest.mark.parametrize("cfg", CASES, ids=[c[0] for c in CASES])
def test_generated_write_then_verify(tmp_path, built_backends, cfg):
    _, backend, spec, extra = cfg
    need(backend, built_backends)
    r = run(
        4,
        ["e3sm", "--backend", backend, "--generate", spec, "-o", "out.nc", *extra, "--verify"],
        tmp_path,
        timeout=300,
    )
    assert r.rc == 0, r.err
    rec = r.record
    assert rec["verify"]["ok"] is True and rec["verify"]["values_mismatched"] == 0
    assert rec["verify"]["values_checked"] > 0
    assert f"Input decomposition file           = generated {spec[:2]}" in r.out
    assert f"==== Benchmarking {spec[0].upper()} case" in r.out


# -x blob with a subfile whose group holds no element: 2 ranks on a 1-rank
# decomposition, -g 2 (rank 1 carries none). HDF5 stores the empty datasets
# (HDF5 1.10 once failed its transfers: "addr overflow"); NetCDF has no
# dimension of length 0 and ADIOS2 no variable nobody writes: refused.
EMPTY_SUBFILE = ["--generate", "f:ne=1,procs=1", "-x", "blob", "-g", "2", "-f", "1"]


@pytest.mark.parametrize("backend", ["hdf5", "mpiio"])
def test_blob_with_an_empty_subfile_writes_and_reads(tmp_path, built_backends, backend):
    need(backend, built_backends)
    args = ["e3sm", "--backend", backend, *EMPTY_SUBFILE]
    w = run(2, [*args, "-k", "-o", "b.nc", "--verify"], tmp_path)
    assert w.rc == 0, w.err
    assert w.record["verify"]["ok"] is True and w.record["verify"]["values_mismatched"] == 0
    checked = w.record["verify"]["values_checked"]
    assert checked > 0
    assert sorted(p.name for p in tmp_path.glob("b_h1.nc.*")) == ["b_h1.nc.0000", "b_h1.nc.0001"]
    # read back by another job: the empty subfile's index (hdf5) is read too
    r = run(2, [*args, "-i", "b.nc", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["verify"]["values_checked"] == checked
    assert r.record["verify"]["values_mismatched"] == 0


@pytest.mark.parametrize("backend", ["pnetcdf", "netcdf4", "adios2"])
def test_blob_with_an_empty_subfile_is_refused_where_it_cannot_be_stored(
    tmp_path, built_backends, backend
):
    need(backend, built_backends)
    r = run_plain(2, ["e3sm", "--backend", backend, *EMPTY_SUBFILE, "-o", "b.nc"], tmp_path)
    line = r.error_line()
    assert "-x blob -g 2: subfile 1 (ranks 1-1) would hold no element of D1" in line
    assert f"the {backend} backend cannot store an empty variable" in line
    assert not list(tmp_path.glob("b_h1.nc*"))


def requests_lines(out):
    return [x for x in out.splitlines() if "noncontiguous requests" in x or "amount" in x]


def test_map_file_equals_generated(tmp_path):
    spec = "f:ne=2,procs=6"
    m = run(2, ["e3sm-decomp", "--generate", spec, "-o", "map.nc", "--verify"], tmp_path)
    assert m.rc == 0, m.err
    assert m.record["verify"]["ok"] is True
    assert "decomposition processes: 6" in m.out
    assert "D3: generated (2D), dims 72 x 218" in m.out
    args = ["e3sm", "-a", "pnetcdf", "-f", "1", "-o", "o.nc"]
    a = run(3, [*args, "map.nc"], tmp_path)
    b = run(3, [*args, "--generate", spec], tmp_path)
    assert a.rc == 0 and b.rc == 0, a.err + b.err
    assert requests_lines(a.out) == requests_lines(b.out)
    assert len(requests_lines(a.out)) == 4


def stat(out, name, pattern):
    block = out.split(f"history file {name},")[1]
    return float(re.search(pattern, block).group(1))


def test_stats_ne30_512_give_the_readme_figures(tmp_path):
    r = run(
        1,
        ["e3sm-decomp", "--generate", "f:ne=30,procs=512", "--stats", "--records", "3"],
        tmp_path,
        timeout=120,
    )
    assert r.rc == 0, r.err
    print(r.out)
    assert "D3 72 x 48602" in r.out
    amount = r"Total write amount\s+= ([\d.]+) MiB"
    maxreq = r"Max number of requests .*= (\d+)"
    # E3SM-IO README: h0 2699.36 MiB, 310464 requests; h1 52.30 MiB, 5888
    assert abs(stat(r.out, "h0", amount) - 2699.36) < 0.005 * 2699.36
    assert abs(stat(r.out, "h0", maxreq) - 310464) < 0.15 * 310464
    assert abs(stat(r.out, "h1", amount) - 52.30) < 0.005 * 52.30
    assert abs(stat(r.out, "h1", maxreq) - 5888) < 0.15 * 5888
    assert re.search(r"generator: tables [\d.]+ s, all 512 ranks' runs [\d.]+ s", r.out)
    assert not list(tmp_path.glob("*.nc"))  # --stats writes nothing


BAD = [
    ("unknown-key", ["e3sm", "-o", "x.nc", "--generate", "f:nx=4"], "unknown parameter 'nx'"),
    ("bad-case", ["e3sm", "-o", "x.nc", "--generate", "q:ne=4"], "give the case first"),
    ("bad-value", ["e3sm", "-o", "x.nc", "--generate", "f:ne=-2"], "ne=-2 must be an integer"),
    ("file-and-generate", ["e3sm", "-o", "x.nc", "--generate", "f", "m.nc"], "give one"),
    ("stats-alone", ["e3sm-decomp", "--stats"], "add --generate"),
    ("g-few-edges", ["e3sm", "-o", "x.nc", "--generate", "g:cells=300,edges=10"], "with its walls"),
    ("i-too-much-land", ["e3sm", "-o", "x.nc", "--generate", "i:nlat=4,nlon=4,land=20"], "exceeds"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_generate_exits_2_with_one_line(tmp_path, case):
    _, args, msg = case
    (tmp_path / "m.nc").write_text("x")
    r = run_plain(2, args, tmp_path)
    line = r.error_line()
    assert msg in line
    assert not (tmp_path / "x.nc").exists()
