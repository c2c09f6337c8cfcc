# SPDX-License-Identifier: BSD-3-Clause
"""E3SM end to end: headers equal to the original's, every backend writes and
reads back the F and G cases, P writers and Q readers agree, corruption and
bad decomposition files are caught."""

import re
import subprocess
import time

import pytest
from conftest import SHIPPED, TESTDATA, assert_ended_quickly, need, run, run_plain

# The original's 16-rank maps and history headers ship in data/e3sm (the
# headers verbatim as the schemas); other containers, the legacy layout and
# the PIO .dat files are test data.
E3SM = TESTDATA / "e3sm"
SCHEMAS = SHIPPED / "e3sm"
MAP_F = SCHEMAS / "map_f_case_16p.nc"
MAP_G = SCHEMAS / "map_g_case_16p.nc"
MAP_I = SCHEMAS / "map_i_case_16p.nc"
LEGACY_G = E3SM / "legacy_pre2022" / "g_case_cmpaso_16p.nc"


def header(path):
    return subprocess.run(
        ["ncmpidump", "-h", str(path)], capture_output=True, text=True, check=True
    ).stdout.splitlines()


def expected_header(name, nrecs):
    lines = (SCHEMAS / name).read_text().splitlines()
    return [re.sub(r"// \(\d+ currently\)", f"// ({nrecs} currently)", x) for x in lines]


@pytest.mark.parametrize(
    "decomp,nrecs,files",
    [
        # e3sm_io.c forces one record into F h0 and I h1, whatever -r says
        (MAP_F, 2, [("out_h0.nc", "f_case_h0.cdl", 1), ("out_h1.nc", "f_case_h1.cdl", 2)]),
        (MAP_I, 2, [("out_h0.nc", "i_case_h0.cdl", 2), ("out_h1.nc", "i_case_h1.cdl", 1)]),
        (LEGACY_G, 1, [("out.nc", "g_case.cdl", 1)]),
    ],
    ids=["F", "I", "G-legacy"],
)
def test_headers_equal_the_originals(tmp_path, decomp, nrecs, files):
    args = ["e3sm", "-k", "-r", str(nrecs), "-o", "out.nc", str(decomp)]
    r = run(4, args, tmp_path, timeout=300)
    assert r.rc == 0, r.err
    for ours, theirs, recs in files:
        got = header(tmp_path / ours)
        want = expected_header(theirs, recs)
        assert got[0] == f"netcdf {ours[:-3]} {{"
        assert got[1:] == want[1:], ours
        (tmp_path / ours).unlink()  # the G file is 0.8 GB


def test_g_from_map_file_has_its_own_sizes(tmp_path):
    r = run(2, ["e3sm", "-k", "-o", "g.nc", str(MAP_G)], tmp_path)
    assert r.rc == 0, r.err
    got = header(tmp_path / "g.nc")
    want = expected_header("g_case.cdl", 1)
    sizes = {"nCells": "285", "nEdges": "879", "nVertices": "593"}
    for k, v in sizes.items():
        want = [re.sub(rf"^\t{k} = \d+ ;", f"\t{k} = {v} ;", x) for x in want]
    assert got[1:] == want[1:]


def elements(rec, name):
    return sum(
        p["values_checked"] for p in rec["passes"] if p["op"] != "write" and name in p["path"]
    )


# (id, decomposition, backend, extra); netcdf4 makes one library call per
# subarray (F h1 on it takes 20 s): its F case runs rearranged below
CANONICAL = [
    ("F-pnetcdf", MAP_F, "pnetcdf", []),
    ("G-pnetcdf", MAP_G, "pnetcdf", []),
    ("F-hdf5", MAP_F, "hdf5", []),
    ("G-hdf5", MAP_G, "hdf5", []),
    ("F-mpiio", MAP_F, "mpiio", []),
    ("G-mpiio", MAP_G, "mpiio", []),
    ("G-netcdf4", MAP_G, "netcdf4", []),
    ("F-pnetcdf-t-indep", MAP_F, "pnetcdf", ["-t", "-f", "1", "--independent"]),
    # ranks hold one run of a variable here and several there: no hang
    ("F-pnetcdf-blocking", MAP_F, "pnetcdf", ["-f", "1", "--api", "blocking"]),
    ("G-pnetcdf-varn", MAP_G, "pnetcdf", ["--api", "varn"]),
]


def write_verified(tmp_path, backend, decomp, extra):
    """4 ranks write out.nc (-k: kept) and read back every value they wrote."""
    w = run(
        4,
        ["e3sm", "-k", "-a", backend, "-o", "out.nc", *extra, "--verify", str(decomp)],
        tmp_path,
        timeout=300,
    )
    assert w.rc == 0, w.err
    verify = w.record["verify"]
    assert verify["ok"] is True and verify["values_mismatched"] == 0, verify
    assert verify["values_checked"] > 0, verify
    return w


@pytest.mark.parametrize("cfg", CANONICAL, ids=[c[0] for c in CANONICAL])
def test_canonical_write_then_read_verifies(tmp_path, built_backends, cfg):
    _, decomp, backend, extra = cfg
    need(backend, built_backends)
    w = write_verified(tmp_path, backend, decomp, extra)
    rec = w.record
    assert rec["backend"] == backend
    writes = [p for p in rec["passes"] if p["op"] == "write"]
    verifies = [p for p in rec["passes"] if p["op"] == "verify"]
    assert len(writes) == len(verifies) >= 1
    for wp, vp in zip(writes, verifies, strict=True):
        assert wp["bytes"] == vp["bytes"] > 0
        assert vp["values_checked"] > 0
    assert "==== Benchmarking" in w.out and "I/O bandwidth (write-only)" in w.out
    # read back by 3 ranks (another decomposition of the work), every value checked
    r = run(
        3,
        ["e3sm", "-a", backend, "-i", "out.nc", *extra, "--verify", str(decomp)],
        tmp_path,
        timeout=300,
    )
    assert r.rc == 0, r.err
    assert r.record["verify"]["values_checked"] == sum(p["values_checked"] for p in verifies)
    assert "Total read  amount" in r.out
    for p in writes:  # -i never deletes what it read
        assert (tmp_path / p["path"]).exists()


# The box rearranger: every backend, few large requests, same file.
REARRANGED = [  # (id, decomposition, backend, extra, I/O ranks at 4 ranks on one node)
    ("F-pnetcdf", MAP_F, "pnetcdf", [], 1),
    ("G-pnetcdf-io2", MAP_G, "pnetcdf", ["--io-ranks", "2"], 2),
    ("F-hdf5-stride3", MAP_F, "hdf5", ["-s", "3"], 2),
    ("G-hdf5", MAP_G, "hdf5", [], 1),
    ("F-mpiio-io4", MAP_F, "mpiio", ["--io-ranks", "4"], 4),
    ("G-mpiio", MAP_G, "mpiio", [], 1),
    ("F-netcdf4-h1", MAP_F, "netcdf4", ["-f", "1"], 1),
    ("G-netcdf4-io2", MAP_G, "netcdf4", ["--io-ranks", "2"], 2),
]


@pytest.mark.parametrize("cfg", REARRANGED, ids=[c[0] for c in REARRANGED])
def test_rearranged_write_then_read_verifies(tmp_path, built_backends, cfg):
    _, decomp, backend, extra, nio = cfg
    need(backend, built_backends)
    w = write_verified(tmp_path, backend, decomp, ["--rearrange", "box", *extra])
    rec = w.record
    assert "==== canonical I/O with the box rearranger" in w.out
    assert f"Number of IO processes             = {nio}\n" in w.out
    # the same file as without the rearranger: readable canonically by 3 ranks
    r = run(
        3,
        [
            "e3sm",
            "-a",
            backend,
            "-i",
            "out.nc",
            "-f",
            "-1" if "-f" not in extra else "1",
            "--verify",
            str(decomp),
        ],
        tmp_path,
        timeout=300,
    )
    assert r.rc == 0, r.err
    assert r.record["verify"]["values_checked"] == rec["verify"]["values_checked"]
    # far fewer, larger requests than the ranks' runs
    canonical = int(re.search(r"Total no. noncontiguous requests   = +(\d+)", w.out)[1])
    executed = sum(p["requests"] for p in rec["passes"] if p["op"] == "write")
    assert executed * 10 < canonical, (executed, canonical)


# Parallel NetCDF-4 with 256 variables or more on one dimension (F h0: 399
# on time, I: 542 per file): netCDF-C 4.9 on HDF5 1.10 fails in nc_enddef on
# one rank and hangs the others while attaching dimension scales, so the
# backend creates such files with NC_NODIMSCALE_ATTACH (--netcdf4-dimscales
# auto). The box rearranger keeps the run short; the define is the same.
# (file, header, scales attached): F h1 has 51 variables and keeps them.
MANY_VARS = [
    (MAP_F, [("out_h0.nc", "f_case_h0.cdl", False), ("out_h1.nc", "f_case_h1.cdl", True)]),
    (MAP_I, [("out_h0.nc", "i_case_h0.cdl", False), ("out_h1.nc", "i_case_h1.cdl", False)]),
]


@pytest.mark.parametrize("decomp,files", MANY_VARS, ids=["F", "I"])
def test_netcdf4_many_variables_on_one_dimension(tmp_path, built_backends, decomp, files):
    need("netcdf4", built_backends)
    args = ["e3sm", "-a", "netcdf4", "--rearrange", "box", "--verify", str(decomp)]
    w = run(4, [*args, "-k", "-o", "out.nc"], tmp_path, timeout=600)
    assert w.rc == 0, w.err
    rec = w.record
    assert rec["verify"]["ok"] is True and rec["verify"]["values_mismatched"] == 0
    assert rec["verify"]["values_checked"] > 0
    assert rec["options"]["backend"]["netcdf4-dimscales"] == "auto"
    for name, cdl, scales in files:
        got = subprocess.run(
            ["ncdump", "-h", name], cwd=tmp_path, capture_output=True, text=True, check=True
        ).stdout.splitlines()
        assert got[0] == f"netcdf {name[:-3]} {{"
        assert got[1:] == expected_header(cdl, 1)[2:], name  # [1]: the CDF-5 comment
        # scales attached to the variables or not: the workaround where needed
        h5 = subprocess.run(
            ["h5dump", "-H", "-A", "1", name], cwd=tmp_path, capture_output=True, text=True
        )
        assert h5.returncode == 0, h5.stderr
        assert "_Netcdf4Coordinates" in h5.stdout
        assert ("DIMENSION_LIST" in h5.stdout) == scales, name
    # read back by 3 ranks canonically, every value checked
    r = run(3, [*args, "-i", "out.nc"], tmp_path, timeout=600)
    assert r.rc == 0, r.err
    assert r.record["verify"]["values_checked"] == rec["verify"]["values_checked"]


# A schema without such a dimension keeps its scales; none drops them and
# netCDF shows the same header either way.
def test_netcdf4_dimscales_option(tmp_path, built_backends):
    need("netcdf4", built_backends)
    heads, attrs = [], []
    for mode in ["auto", "none"]:
        args = ["e3sm", "-a", "netcdf4", "--generate", "g:cells=60,procs=2", "-k"]
        w = run(2, [*args, "-o", f"{mode}.nc", "--netcdf4-dimscales", mode], tmp_path)
        assert w.rc == 0, w.err
        dump = subprocess.run(
            ["ncdump", "-h", f"{mode}.nc"], cwd=tmp_path, capture_output=True, text=True
        )
        heads.append(dump.stdout.splitlines()[1:])
        h5 = subprocess.run(
            ["h5dump", "-H", f"{mode}.nc"], cwd=tmp_path, capture_output=True, text=True
        )
        attrs.append(h5.stdout.count("DIMENSION_LIST"))
    assert heads[0] == heads[1] and len(heads[0]) > 20
    assert attrs[0] > 10 and attrs[1] == 0, attrs


# The original's NetCDF-4 driver transfers independently; -a netcdf4 too,
# unless --collective; other libraries stay collective.
def test_netcdf4_transfers_independent_as_the_original(tmp_path, built_backends):
    need("netcdf4", built_backends)
    cases = [(["-a", "netcdf4"], "indep"), (["-a", "netcdf4", "--collective"], "coll")]
    cases += [(["-a", "pnetcdf"], "coll")]
    for extra, io in cases:
        args = ["e3sm", *extra, "--verify", "-o", "out.nc", "--generate", "g:cells=60,procs=2"]
        w = run(2, args, tmp_path)
        assert w.rc == 0, w.err
        assert w.record["io"] == io, extra
        assert w.record["verify"]["ok"] is True and w.record["verify"]["values_checked"] > 0
        assert ("independent" if io == "indep" else "collective") in w.out, extra


# Blob: every rank's data one block per variable, -g subfiles with an index.
BLOB = [  # (id, decomposition, backend, subfiles, files of one subfile set)
    ("F-pnetcdf", MAP_F, "pnetcdf", 1, ["out_h0.nc", "out_h1.nc"]),
    ("G-pnetcdf-g2", MAP_G, "pnetcdf", 2, ["out.nc"]),
    ("F-hdf5-g2", MAP_F, "hdf5", 2, ["out_h0.nc", "out_h1.nc"]),
    ("F-mpiio", MAP_F, "mpiio", 1, ["out_h0.nc", "out_h1.nc"]),
    ("G-netcdf4", MAP_G, "netcdf4", 1, ["out.nc"]),
]


@pytest.mark.parametrize("cfg", BLOB, ids=[c[0] for c in BLOB])
def test_blob_write_then_read_verifies(tmp_path, built_backends, cfg):
    _, decomp, backend, g, names = cfg
    need(backend, built_backends)
    args = ["-x", "blob", "-g", str(g), "-a", backend]
    w = run(4, ["e3sm", "-k", *args, "-o", "out.nc", "--verify", str(decomp)], tmp_path)
    assert w.rc == 0, w.err
    assert w.record["verify"]["ok"] is True
    paths = sorted(p["path"] for p in w.record["passes"] if p["op"] == "write")
    assert paths == sorted(f"{n}.{i:04d}" for n in names for i in range(g))
    # one block per rank and decomposed variable: requests <= variables x ranks
    canonical = int(re.search(r"Total no. noncontiguous requests   = +(\d+)", w.out)[1])
    assert "blob I/O" in w.out and f"Number of subfiles                 = {g}" in w.out
    assert canonical <= 4 * 560
    r = run(4, ["e3sm", *args, "-i", "out.nc", "--verify", str(decomp)], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["verify"]["values_checked"] == w.record["verify"]["values_checked"]


def test_blob_index_is_the_groups_decomposition(tmp_path):
    assert (
        run(4, ["e3sm", "-k", "-x", "blob", "-f", "1", "-o", "b.nc", str(MAP_F)], tmp_path).rc == 0
    )
    dump = subprocess.run(
        ["ncmpidump", "-v", "D1.nreqs,D1.lengths", "b_h1.nc.0000"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    nreqs = [int(x) for x in re.search(r"D1.nreqs = ([\d, ]+);", dump)[1].split(",")]
    lengths = re.search(r"D1.lengths = ([\d,\s]+);", dump)[1]
    assert len(nreqs) == 4  # the writer's ranks
    assert sum(int(x) for x in lengths.replace("\n", " ").split(",")) == 866  # all of D1
    # read by other ranks: refused with one line, not a wrong answer
    r = run_plain(3, ["e3sm", "-x", "blob", "-f", "1", "-i", "b.nc", str(MAP_F)], tmp_path)
    assert r.rc == 2, r.err
    errs = r.error_lines()
    assert len(errs) == 1 and "written by 4 ranks per subfile, this run has 3" in errs[0]


@pytest.mark.parametrize("backend,hx", [("pnetcdf", "-1"), ("hdf5", "1")])
def test_blob_replay_gives_the_canonical_file(tmp_path, built_backends, backend, hx):
    need(backend, built_backends)
    blob = ["-x", "blob", "-g", "2", "-a", backend, "-f", hx, "-o", "b.nc", str(MAP_F)]
    assert run(4, ["e3sm", "-k", *blob], tmp_path).rc == 0
    replay = ["-g", "2", "-f", hx, "--replay", "b.nc", "-o", "c.nc", str(MAP_F)]
    r = run(4, ["e3sm", "-k", *replay], tmp_path)
    assert r.rc == 0, r.err
    # the replayed files are the canonical ones: same header, same values
    assert header(tmp_path / "c_h1.nc")[1:] == expected_header("f_case_h1.cdl", 1)[1:]
    c = run(3, ["e3sm", "-f", hx, "-i", "c.nc", "--verify", str(MAP_F)], tmp_path)
    assert c.rc == 0, c.err
    assert c.record["verify"]["values_checked"] == (4209231 if hx == "-1" else 0) + 82741


def test_replay_carries_the_blob_data(tmp_path):
    """A value changed in a blob comes out in the replayed canonical file."""
    assert (
        run(2, ["e3sm", "-k", "-x", "blob", "-f", "1", "-o", "b.nc", str(MAP_F)], tmp_path).rc == 0
    )
    path = tmp_path / "b_h1.nc.0000"
    data = bytearray(path.read_bytes())
    data[len(data) - 2000] ^= 0x40  # inside the last variables' blocks
    path.write_bytes(bytes(data))
    r = run(2, ["e3sm", "-k", "-f", "1", "--replay", "b.nc", "-o", "c.nc", str(MAP_F)], tmp_path)
    assert r.rc == 0, r.err
    c = run(2, ["e3sm", "-f", "1", "-i", "c.nc", "--verify", str(MAP_F)], tmp_path)
    assert c.rc == 3, c.err
    assert c.record["verify"]["values_mismatched"] == 1
    # the writer's subfiles are needed: another -g is refused
    r = run_plain(
        2, ["e3sm", "-f", "1", "-g", "2", "--replay", "b.nc", "-o", "d.nc", str(MAP_F)], tmp_path
    )
    assert r.rc == 2 and "per subfile" in r.err


def test_values_are_the_variables_global_positions(tmp_path):
    """Written by 16 ranks, read by 5: decomposition ranks are regrouped."""
    assert run(16, ["e3sm", "-k", "-f", "1", "-o", "f.nc", str(MAP_F)], tmp_path).rc == 0
    r = run(5, ["e3sm", "-f", "1", "-i", "f.nc", "--verify", str(MAP_F)], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["verify"]["ok"] is True


def test_without_k_only_own_outputs_are_removed(tmp_path):
    (tmp_path / "other.txt").write_text("not ours")
    r = run(2, ["e3sm", "-o", "g.nc", str(MAP_G)], tmp_path)
    assert r.rc == 0, r.err
    assert not (tmp_path / "g.nc").exists()
    assert (tmp_path / "other.txt").exists()
    assert "output files removed" in r.out


def test_corrupted_value_fails_verify(tmp_path):
    assert run(4, ["e3sm", "-k", "-o", "g.nc", str(MAP_G)], tmp_path).rc == 0
    path = tmp_path / "g.nc"
    data = bytearray(path.read_bytes())
    data[len(data) - 100] ^= 0x40  # inside the last record variable's data
    path.write_bytes(bytes(data))
    r = run(4, ["e3sm", "-i", "g.nc", "--verify", str(MAP_G)], tmp_path)
    line = r.error_line(3)
    assert re.search(r"verify failed: 1 of \d+ values differ in g\.nc; first: \w+\[0\]", line)
    assert r.record["exit_code"] == 3


def test_converted_dat_files_drive_the_kernel(tmp_path):
    dats = sorted(E3SM.glob("piodecomp16tasks*.dat"))
    args = [a for i, d in enumerate(dats, 1) for a in (f"--d{i}", str(d))]
    assert run(1, ["e3sm-decomp", "-o", "mine.nc", *args], tmp_path).rc == 0
    r = run(4, ["e3sm", "-f", "1", "-o", "x.nc", "--verify", "mine.nc"], tmp_path)
    assert r.rc == 0, r.err
    assert "==== Benchmarking F case" in r.out


# A small map-layout decomposition (2 decomposition ranks, array of 6) and
# ways to break it.
GOOD = {
    "nreqs": "2, 1",
    "fill": "2, 1",
    "offsets": "0, 4, 2",
    "lengths": "2, 2, 2",
    "raw": "4, 2",
    "dims": "6",
    "total": "3",
}


def decomp_cdl(**kw):
    v = {**GOOD, **kw}
    return f"""netcdf d {{
dimensions:
    num_decomp = 3 ;
    decomp_nprocs = 2 ;
    D1.total_nreqs = {v["total"]} ;
variables:
    int D1.nreqs(decomp_nprocs) ;
    int D1.fill_starts(decomp_nprocs) ;
    int D1.offsets(D1.total_nreqs) ;
    {"" if kw.get("drop_lengths") else "int D1.lengths(D1.total_nreqs) ;"}
    int D1.raw_nreqs(decomp_nprocs) ;
// global attributes:
    :D1.ndims = 1 ;
    :D1.dims = {v["dims"]} ;
data:
    D1.nreqs = {v["nreqs"]} ;
    D1.fill_starts = {v["fill"]} ;
    D1.offsets = {v["offsets"]} ;
    {"" if kw.get("drop_lengths") else "D1.lengths = " + v["lengths"] + " ;"}
    D1.raw_nreqs = {v["raw"]} ;
}}
"""


BAD_DECOMPS = [
    ("offset-out-of-range", {"offsets": "0, 5, 2"}, "D1 request 1 (offset 5, length 2) is outside"),
    ("lengths-sum-mismatch", {"raw": "4, 3"}, "its lengths sum to 2 elements but D1.raw_nreqs"),
    (
        "nreqs-sum-mismatch",
        {"nreqs": "2, 2"},
        "D1.nreqs[1] = 2: the counts must be 0 or more and add up to the 3 entries of D1.offsets",
    ),
    ("nreqs-sum-short", {"nreqs": "1, 1", "fill": "1, 1"}, "D1.nreqs sums to 2 requests but"),
    (
        "nreqs-negative",
        {"nreqs": "-1, 4"},
        "D1.nreqs[0] = -1: the counts must be 0 or more",
    ),
    ("missing-variable", {"drop_lengths": True}, "missing variable D1.lengths"),
    ("overlap", {"offsets": "0, 1, 2"}, "requests overlap"),
    ("fill-past-end", {"fill": "3, 1"}, "D1.fill_starts[0] = 3 is outside 0..2"),
]


@pytest.mark.parametrize("case", BAD_DECOMPS, ids=[c[0] for c in BAD_DECOMPS])
def test_bad_decomposition_exits_2_quickly(tmp_path, case):
    _, kw, msg = case
    (tmp_path / "d.cdl").write_text(decomp_cdl(**kw))
    subprocess.run(["ncgen", "-o", "d.nc", "d.cdl"], cwd=tmp_path, check=True)
    t0 = time.monotonic()
    r = run_plain(2, ["e3sm", "-o", "out.nc", "d.nc"], tmp_path, timeout=30)
    assert_ended_quickly(t0, 2, 15)
    line = r.error_line()
    assert msg in line and "d.nc" in line
    assert not list(tmp_path.glob("out*"))


def test_good_small_decomposition_is_accepted_up_to_the_case(tmp_path):
    (tmp_path / "d.cdl").write_text(decomp_cdl())
    subprocess.run(["ncgen", "-o", "d.nc", "d.cdl"], cwd=tmp_path, check=True)
    r = run_plain(2, ["e3sm", "-o", "out.nc", "d.nc"], tmp_path, timeout=30)
    assert r.rc == 2
    assert "1 decompositions: the F case has 3" in r.err


@pytest.mark.parametrize(
    "src, size, needed",
    [(MAP_F, 300000, "D3.lengths"), (MAP_G, 339195, "D4.raw_offsets")],
    ids=["f-300000", "g-339195"],
)
def test_truncated_decomposition_file(tmp_path, src, size, needed):
    """PnetCDF reads past the end without an error: the header's extent is
    checked on open, so the message is the same every run."""
    (tmp_path / "t.nc").write_bytes(src.read_bytes()[:size])
    seen = set()
    for _ in range(3):
        r = run_plain(4, ["e3sm", "-o", "out.nc", "t.nc"], tmp_path, timeout=30)
        assert r.rc == 2, (r.rc, r.err)
        errs = r.error_lines()
        assert len(errs) == 1, r.err
        seen.add(errs[0])
    assert len(seen) == 1, seen
    line = seen.pop()
    assert f"t.nc is shorter than its header needs ({size} bytes found" in line
    assert f"needed by variable {needed}): the decomposition file is truncated" in line
    assert not list(tmp_path.glob("out*"))


def test_decomposition_containers(tmp_path, built_backends):
    need("hdf5", built_backends)
    for ext in ("nc4", "h5"):
        r = run(4, ["e3sm", "-f", "1", "-o", "x.nc", str(E3SM / f"map_f_case_16p.{ext}")], tmp_path)
        assert r.rc == 0, r.err


def test_bp_map_reads_as_the_nc_map(tmp_path, built_backends):
    """E3SM-IO's BP3 map (read through ADIOS2) gives the same history files,
    byte for byte, as the same map in NetCDF form."""
    for b in ("adios2", "pnetcdf"):
        need(b, built_backends)
    for ext, src in (("bp", E3SM / "map_f_case_16p.bp"), ("nc", MAP_F)):
        r = run(4, ["e3sm", "-k", "-o", f"{ext}.nc", str(src)], tmp_path)
        assert r.rc == 0, r.err
    for h in ("h0", "h1"):
        assert (tmp_path / f"bp_{h}.nc").read_bytes() == (tmp_path / f"nc_{h}.nc").read_bytes()


def test_map_is_told_by_its_content(tmp_path, built_backends):
    """The map reader tells a format by the core's rules (src/core/formats/):
    an HDF5 map after a 512-byte user block and a BP3 map named .data give
    the .nc map's history file, byte for byte; the same HDF5 bytes after 300
    bytes (where no user block can end) are no map."""
    for b in ("adios2", "hdf5", "pnetcdf"):
        need(b, built_backends)
    h5 = (E3SM / "map_f_case_16p.h5").read_bytes()
    (tmp_path / "ub.h5").write_bytes(b"user block".ljust(512, b"\0") + h5)
    (tmp_path / "bp3.data").write_bytes((E3SM / "map_f_case_16p.bp").read_bytes())
    for name, src in (("nc", MAP_F), ("ub", tmp_path / "ub.h5"), ("bp3", tmp_path / "bp3.data")):
        r = run(2, ["e3sm", "-k", "-f", "1", "-o", f"{name}.nc", str(src)], tmp_path)
        assert r.rc == 0, (name, r.err)
    want = (tmp_path / "nc_h1.nc").read_bytes()
    assert (tmp_path / "ub_h1.nc").read_bytes() == want
    assert (tmp_path / "bp3_h1.nc").read_bytes() == want
    (tmp_path / "at300.h5").write_bytes(b"\0" * 300 + h5)
    r = run_plain(2, ["e3sm", "-f", "1", "-o", "x.nc", "at300.h5"], tmp_path, timeout=60)
    assert r.rc == 2, (r.rc, r.err)
    (line,) = r.error_lines()
    assert "at300.h5 is neither NetCDF nor HDF5" in line, line


def test_bad_bp_map_is_one_line(tmp_path, built_backends):
    need("adios2", built_backends)
    (tmp_path / "bad.bp").write_bytes((E3SM / "map_f_case_16p.bp").read_bytes()[:5000])
    r = run_plain(2, ["e3sm", "-o", "x.nc", "bad.bp"], tmp_path, timeout=60)
    assert r.rc == 2, (r.rc, r.err)
    (line,) = r.error_lines()
    assert "bad.bp" in line and "ADIOS2" in line, line
    assert not list(tmp_path.glob("x*"))


def test_adios2_output_directory_removed_without_k(tmp_path, built_backends):
    """ADIOS2 writes a directory where the others write a file: without -k the
    run removes it as it removes the others' files; -k keeps it; a directory
    the run did not write is left alone."""
    need("adios2", built_backends)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "keep.txt").write_text("not the run's")
    r = run(2, ["e3sm", "--backend", "adios2", "-o", "g.nc", str(MAP_G)], tmp_path)
    assert r.rc == 0, r.err
    assert "output files removed" in r.out
    assert not (tmp_path / "g.nc").exists()
    r = run(2, ["e3sm", "--backend", "adios2", "-k", "-o", "g.nc", str(MAP_G)], tmp_path)
    assert r.rc == 0, r.err
    assert (tmp_path / "g.nc").is_dir() and list((tmp_path / "g.nc").iterdir())
    assert (tmp_path / "mine" / "keep.txt").read_text() == "not the run's"


BAD_OPTIONS = [
    ("no-io", [str(MAP_G)], "give -o NAME to write"),
    ("no-decomp", ["-o", "x.nc"], "name the decomposition file"),
    ("adios2", ["-a", "adios2", "-o", "x.nc", str(MAP_G)], "--backend adios2 writes the canonical"),
    ("j-and-double", ["-j", "--xtype", "double", "-o", "x.nc", str(MAP_G)], "-j (float) contra"),
    ("u-and-skip", ["-u", "--missing", "skip", "-o", "x.nc", str(MAP_G)], "-u (fill the gaps)"),
    ("q-and-box", ["-q", "--rearrange", "box", "-o", "x.nc", str(MAP_G)], "-q (unsorted"),
    ("noncontig", ["-m", "-o", "x.nc", str(MAP_G)], "-m (noncontiguous user buffer)"),
    ("g-h1", ["-f", "1", "-o", "x.nc", str(MAP_G)], "the G case has one history file"),
    ("records", ["-r", "0", "-o", "x.nc", str(MAP_G)], "--records (-r) takes at least 1, not '0'"),
    ("in-out", ["-i", "a.nc", "-o", "b.nc", str(MAP_G)], "give the same name"),
    ("io-ranks-alone", ["--io-ranks", "2", "-o", "x.nc", str(MAP_G)], "add --rearrange box"),
    (
        "stride-and-io",
        ["-s", "2", "--io-ranks", "2", "--rearrange", "box", "-o", "x.nc", str(MAP_G)],
        "give one",
    ),
    ("blob-and-box", ["-x", "blob", "--rearrange", "box", "-o", "x.nc", str(MAP_G)], "exclude"),
    ("g-without-blob", ["-g", "2", "-o", "x.nc", str(MAP_G)], "applies to -x blob only"),
    ("replay-blob", ["--replay", "b.nc", "-x", "blob", "-o", "x.nc", str(MAP_G)], "--replay"),
    ("missing-file", ["-o", "x.nc", "nope.nc"], "cannot open input file nope.nc"),
    ("read-missing", ["-i", "none.nc", str(MAP_G)], "cannot read none.nc"),
]


@pytest.mark.parametrize("case", BAD_OPTIONS, ids=[c[0] for c in BAD_OPTIONS])
def test_bad_options_exit_2(tmp_path, case):
    _, args, msg = case
    r = run_plain(2, ["e3sm", *args], tmp_path, timeout=30)
    line = r.error_line()
    assert msg in line


def test_the_originals_j_u_q(tmp_path, built_backends):
    """-j (float), -u (fill the gaps) and -q (unsorted) as the original takes
    them; -j -u are this suite's defaults, --xtype double and --missing skip
    the original's."""
    base = ["-k", "-f", "1"]
    r = run(2, ["e3sm", *base, "-j", "-u", "-q", "-o", "j.nc", str(MAP_F)], tmp_path)
    assert r.rc == 0, r.err
    r = run(2, ["e3sm", *base, "-o", "dflt.nc", str(MAP_F)], tmp_path)
    assert r.rc == 0, r.err
    dump = lambda f: subprocess.run(  # noqa: E731
        ["ncmpidump", "-h", f], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.split("\n", 1)[1]
    assert dump("j_h1.nc") == dump("dflt_h1.nc")
    assert "\tfloat CLDHGH(time, ncol) ;" in dump("j_h1.nc")
    # -q: the same file, from requests in the map's order (more of them: unmerged)
    r = run(2, ["e3sm", "-q", "-f", "1", "-i", "j.nc", "--verify", str(MAP_F)], tmp_path)
    assert r.rc == 0 and r.record["verify"]["ok"], r.err
    # the original's default type: double, _FillValue with it
    r = run(2, ["e3sm", *base, "--xtype", "double", "-o", "d.nc", str(MAP_F)], tmp_path)
    assert r.rc == 0, r.err
    h = dump("d_h1.nc")
    assert "\tdouble CLDHGH(time, ncol) ;" in h
    # _FillValue follows the variable's type, as the original's (double)fillv
    assert "\tdouble FLNT(time, ncol) ;" in h
    assert "FLNT:_FillValue = 1.00000002004088e+20 ;" in h
    assert "float CLDHGH" not in h
    assert r.record["passes"][0]["bytes"] > 1.9 * run_bytes(tmp_path, "dflt")
    # --missing skip drops the gap fillers: fewer bytes, and the file still verifies
    # (the I case's maps have them: D1 976 of 1363 pairs are real)
    map_i = str(SCHEMAS / "map_i_case_16p.nc")
    r = run(2, ["e3sm", *base, "--missing", "skip", "-o", "s.nc", "--verify", map_i], tmp_path)
    assert r.rc == 0 and r.record["verify"]["ok"], r.err
    assert "Fill mode                          = disabled" in r.out
    skip = r.record["passes"][0]
    r = run(2, ["e3sm", *base, "-u", "-o", "u.nc", map_i], tmp_path)
    assert r.rc == 0, r.err
    fill = r.record["passes"][0]
    assert skip["bytes"] < fill["bytes"] and skip["requests"] < fill["requests"]
    assert "Fill mode                          = enabled" in r.out


def run_bytes(cwd, name):
    r = run(2, ["e3sm", "-f", "1", "-i", name + ".nc", str(MAP_F)], cwd, json_name="b.jsonl")
    assert r.rc == 0, r.err
    return r.record["passes"][0]["bytes"]


@pytest.mark.parametrize("backend", ["pnetcdf", "hdf5", "netcdf4", "adios2", "mpiio"])
def test_read_with_another_type_is_refused(tmp_path, built_backends, backend):
    """The original's double file read with the float schema (or the other way):
    every backend checks the type on open (mpiio: the file's size)."""
    need(backend, built_backends)
    args = ["e3sm", "-f", "1", "--backend", backend]
    r = run(2, [*args, "-k", "--xtype", "double", "-o", "d.nc", str(MAP_F)], tmp_path)
    assert r.rc == 0, r.err
    r = run_plain(2, [*args, "-i", "d.nc", "--verify", str(MAP_F)], tmp_path)
    assert r.rc == 2, (r.rc, r.err)
    (line,) = r.error_lines()
    if backend == "mpiio":
        assert "d_h1.nc is longer than its layout (661776 bytes found, 343088 expected" in line
    else:
        assert "d_h1.nc" in line
        assert "variable CLDHGH is double in the file, float expected" in line
    r = run(2, [*args, "-i", "d.nc", "--xtype", "double", "--verify", str(MAP_F)], tmp_path)
    assert r.rc == 0 and r.record["verify"]["ok"], r.err


@pytest.mark.parametrize("np_", [1, 2, 4])
def test_requests_overlapping_across_ranks_are_refused_at_any_rank_count(tmp_path, np_):
    """Decomposition rank 1's request (1, 2) overlaps rank 0's (0, 2): one
    MPI rank sees it in its own runs, 2 and 4 ranks in the check between
    ranks (it used to pass on more than one rank, even with --verify)."""
    (tmp_path / "d.cdl").write_text(decomp_cdl(offsets="0, 4, 1"))
    subprocess.run(["ncgen", "-o", "d.nc", "d.cdl"], cwd=tmp_path, check=True)
    r = run_plain(np_, ["e3sm", "-o", "out.nc", "d.nc", "--verify"], tmp_path, timeout=30)
    line = r.error_line()
    assert "d.nc" in line and "overlap" in line, line
    if np_ > 1:
        assert "the requests of ranks 0 and 1 overlap at element 1" in line, line
    assert not list(tmp_path.glob("out*"))
