# SPDX-License-Identifier: BSD-3-Clause
"""Hints as data (issue 12): --hints, --hints-file and --mpiio-hints reach
every backend's library, and the hints in effect read back from the open
file appear in the report and the JSON record; BTIO's striping lines print
what the file's info says."""

import re

import pytest
from conftest import SHIPPED, assert_mpich_romio, need, run, run_plain

SMALL = ["btio", "--grid", "12,12,12", "--dumps", "2"]
HINTED = ["mpiio", "pnetcdf", "hdf5", "netcdf4"]
# set by the original BTIO itself (pnetcdf_m.f90), for PnetCDF only
BTIO_ORIGINAL = {"nc_var_align_size": "1", "nc_in_place_swap": "enable"}


def in_effect(rec, op="write"):
    return next(p for p in rec["passes"] if p["op"] == op)["hints_in_effect"]


@pytest.mark.parametrize("backend", HINTED)
def test_hints_reach_the_library_and_are_read_back(tmp_path, built_backends, backend):
    need(backend, built_backends)
    args = [*SMALL, "--backend", backend, "--verify", "--hints", "cb_nodes=1,romio_cb_write=enable"]
    r = run(4, args, tmp_path)
    assert r.rc == 0, r.err
    rec = r.record
    orig = BTIO_ORIGINAL if backend == "pnetcdf" else {}
    assert rec["hints"]["original"] == orig
    assert rec["hints"]["requested"] == {**orig, "cb_nodes": "1", "romio_cb_write": "enable"}
    assert rec["hints"]["passed_to_library"] is True
    for op in ("write", "verify"):  # what the library says after create and after open
        got = in_effect(rec, op)
        assert got["cb_nodes"] == "1" and got["romio_cb_write"] == "enable", (op, got)
    lines = [line for line in r.out.splitlines() if "hints in effect:" in line]
    assert len(lines) == 2 and all("cb_nodes=1" in line for line in lines), r.out
    assert "romio_cb_write=enable" in lines[0]


def test_pnetcdf_reports_its_own_hints(tmp_path, built_backends):
    need("pnetcdf", built_backends)
    r = run(4, [*SMALL, "--backend", "pnetcdf", "--hints", "nc_var_align_size=4096"], tmp_path)
    assert r.rc == 0, r.err
    got = in_effect(r.record)
    assert got["nc_var_align_size"] == "4096"
    assert "nc_header_align_size" in got  # the library's own, not asked for
    assert re.search(r"hints in effect:.*nc_var_align_size=4096", r.out, re.S)


def test_environment_hints_still_apply_and_are_recorded(tmp_path, built_backends):
    need("pnetcdf", built_backends)
    env = {"PNETCDF_HINTS": "nc_var_align_size=2048"}
    r = run(4, [*SMALL, "--backend", "pnetcdf"], tmp_path, env=env)
    assert r.rc == 0, r.err
    assert r.record["hints"]["environment"]["PNETCDF_HINTS"] == "nc_var_align_size=2048"
    assert r.record["hints"]["requested"] == BTIO_ORIGINAL
    assert in_effect(r.record)["nc_var_align_size"] == "2048"  # PnetCDF's env wins over MPI_Info


def test_original_hints_by_default_and_left_out_on_request(tmp_path, built_backends):
    """BTIO's pnetcdf_m.f90 sets nc_var_align_size=1 and nc_in_place_swap=enable
    itself: the default run does too, --hints wins over them, and
    --no-original-hints leaves PnetCDF's defaults."""
    need("pnetcdf", built_backends)
    r = run(4, [*SMALL, "--backend", "pnetcdf", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["hints"]["original"] == BTIO_ORIGINAL
    assert in_effect(r.record)["nc_in_place_swap"] == "enable"
    args = [*SMALL, "--backend", "pnetcdf", "--overwrite", "--hints", "nc_in_place_swap=disable"]
    r = run(4, args, tmp_path)
    assert r.rc == 0, r.err
    assert in_effect(r.record)["nc_in_place_swap"] == "disable"
    r = run(4, [*SMALL, "--backend", "pnetcdf", "--overwrite", "--no-original-hints"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["hints"]["original"] == {} and r.record["hints"]["requested"] == {}
    assert in_effect(r.record)["nc_in_place_swap"] == "auto"
    p = run_plain(1, ["btio", "--help"], tmp_path)
    assert "nc_in_place_swap=enable on pnetcdf" in p.out, p.out[-500:]


def test_hints_file_with_comments(tmp_path, built_backends):
    (tmp_path / "hints.txt").write_text(
        "# ROMIO_HINTS format\n\ncb_nodes 1   # one aggregator\n  romio_cb_write\tenable\n"
        "cb_buffer_size 1048576\n"
    )
    args = [*SMALL, "--backend", "mpiio", "--hints-file", "hints.txt"]
    r = run(4, [*args, "--hints", "cb_buffer_size=2097152"], tmp_path)
    assert r.rc == 0, r.err
    h = r.record["hints"]
    assert h["file"] == "hints.txt"
    # the command line wins over the file
    assert h["requested"] == {
        "cb_nodes": "1",
        "romio_cb_write": "enable",
        "cb_buffer_size": "2097152",
    }
    got = in_effect(r.record)
    assert got["cb_nodes"] == "1" and got["cb_buffer_size"] == "2097152"
    assert "cb_buffer_size=2097152" in r.out


@pytest.mark.parametrize(
    "text, line",
    [
        ("cb_nodes 1\n# fine\ncb_buffer_size\n", 3),
        ("cb_nodes 1 2\n", 1),
        ("\n\n  # comment\nromio_cb_write enable extra # no\n", 4),
    ],
    ids=["no-value", "two-values", "extra-word"],
)
def test_malformed_hints_file_names_the_line(tmp_path, text, line):
    (tmp_path / "bad.hints").write_text(text)
    args = ["btio", "--backend", "mpiio", "--grid", "12,12,12", "--hints-file", "bad.hints"]
    r = run_plain(2, args, tmp_path)
    assert r.rc == 2, r.err
    errs = r.error_lines()
    assert len(errs) == 1 and f"bad.hints:{line}: expected 'key value'" in errs[0], r.err
    assert not (tmp_path / "btio.nc").exists()


def test_bad_hints_option_and_missing_file(tmp_path):
    base = ["btio", "--backend", "mpiio", "--grid", "12,12,12"]
    r = run_plain(1, [*base, "--hints", "cb_nodes"], tmp_path)
    assert r.rc == 2 and "--hints: 'cb_nodes' is not key=value" in r.err
    r = run_plain(1, [*base, "--hints-file", "nope"], tmp_path)
    assert r.rc == 2 and "hints file nope" in r.err


def test_mpiio_hints_is_an_alias(tmp_path):
    r = run(4, [*SMALL, "--method", "0", "--mpiio-hints", "cb_nodes=1"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["hints"]["requested"] == {"cb_nodes": "1"}
    assert in_effect(r.record)["cb_nodes"] == "1"


def test_backends_without_hints_say_so(tmp_path, built_backends):
    for backend in ("null", "adios2"):
        if backend not in built_backends:
            continue
        r = run(4, [*SMALL, "--backend", backend, "--hints", "cb_nodes=1", "--overwrite"], tmp_path)
        assert r.rc == 0, r.err
        assert r.record["hints"]["passed_to_library"] is False
        assert f"hints: none (backend {backend} takes no MPI-IO hints)" in r.out
        if backend == "null":
            assert in_effect(r.record) is None
        else:  # ADIOS2's engine settings take the hints' place, the hint is not among them
            assert in_effect(r.record)["adios2_engine"] == "BP5"
            assert "cb_nodes" not in in_effect(r.record)
            assert "settings in effect: adios2_engine=BP5" in r.out


def striping_lines(out):
    count = re.search(r"file striping count\s*:\s*(\d+)", out).group(1)
    size = re.search(r"file striping size\s*:\s*(\d+) bytes", out).group(1)
    return int(count), int(size)


@pytest.mark.parametrize("method", ["0", "3"], ids=["mpiio", "pnetcdf"])
def test_btio_striping_lines_print_the_info_in_use(tmp_path, built_backends, method):
    need("pnetcdf" if method == "3" else "mpiio", built_backends)
    hints = "striping_factor=4,striping_unit=1048576"
    r = run(4, [*SMALL, "--method", method, "--hints", hints], tmp_path)
    assert r.rc == 0, r.err
    got = in_effect(r.record)
    # as the original: whatever the file's info holds, 0 when it has no such key
    want = (int(got.get("striping_factor", 0)), int(got.get("striping_unit", 0)))
    assert striping_lines(r.out) == want
    plain = run(4, [*SMALL, "--method", method, "--overwrite"], tmp_path)
    got = in_effect(plain.record)
    assert striping_lines(plain.out) == (
        int(got.get("striping_factor", 0)),
        int(got.get("striping_unit", 0)),
    )


def test_e3sm_original_hints_follow_the_case(tmp_path, built_backends):
    """E3SM-IO's set_info() adds nc_ibuf_size=0 (no packing of the write
    buffer) when no type conversion is needed and requests are sorted: the G
    case (double data), F with --xtype double; not F as -j (float), not -q."""
    need("pnetcdf", built_backends)
    g, f = str(SHIPPED / "e3sm" / "map_g_case_16p.nc"), str(SHIPPED / "e3sm" / "map_f_case_16p.nc")
    base = ["e3sm", "-a", "pnetcdf", "-r", "1", "-o", "o.nc", "--overwrite"]
    both = {"romio_cb_write": "enable", **BTIO_ORIGINAL}
    cases = [  # F: its h1 file only (-f 1)
        ([g], {**both, "nc_ibuf_size": "0"}),
        (["-f", "1", "--xtype", "double", f], {**both, "nc_ibuf_size": "0"}),
        (["-f", "1", f], both),
        (["-q", g], both),
        (["--no-original-hints", g], {}),
    ]
    for args, want in cases:
        r = run(2, [*base, *args], tmp_path)
        assert r.rc == 0, (args, r.err)
        assert r.record["hints"]["original"] == want, args
        assert in_effect(r.record).get("nc_ibuf_size") == want.get("nc_ibuf_size", "16777216")


def openmpi(rec):
    return "Open MPI" in rec["environment"]["mpi_library_version"]


@pytest.mark.parametrize(
    "how, io, fcoll",
    [
        ("default", "ompio", ""),
        ("env", "ompio", "two_phase"),  # OMPI_MCA_fcoll, as mpiexec --mca sets it
        ("param file", "romio321", ""),  # an mca-params file, which no variable shows
        ("priority", "romio321", ""),  # both loaded, ROMIO raised above OMPIO's 30
    ],
)
def test_mpiio_layer_is_named(tmp_path, built_backends, how, io, fcoll):
    """OpenMPI's choice of MPI-IO implementation (no hint changes it, and
    OpenMPI's ROMIO reports no hints back) in the record and the report,
    from wherever it was set. What the OS counted shows that the named one
    did the I/O: BTIO method 1's independent noncontiguous writes go through
    ROMIO's data sieving (read-modify-write of whole extents: several times
    the bytes written), while OMPIO writes each row as it is."""
    need("mpiio", built_backends)
    env = {}
    if how == "env":
        env["OMPI_MCA_fcoll"] = fcoll
    if how == "priority":
        env["OMPI_MCA_io_romio321_priority"] = "40"
    if how == "param file":
        conf = tmp_path / "mca-params.conf"
        conf.write_text(f"io = {io}\n")
        env["OMPI_MCA_mca_base_param_files"] = str(conf)
    r = run(4, [*SMALL, "--method", "1"], tmp_path, env=env)
    assert r.rc == 0, r.err
    rec = r.record
    layer = rec["environment"]["mpiio_layer"]
    w = rec["passes"][0]
    assert rec["backend"] == "mpiio" and w["op"] == "write"
    ratio = w["os_bytes"]["wchar"] / w["bytes"]
    if not openmpi(rec):
        # MPICH: ROMIO, its only MPI-IO, whatever OpenMPI's settings say; its
        # data sieving shows in what the OS counted
        assert_mpich_romio(r)
        assert ratio > 2, (ratio, w["os_bytes"], w["bytes"])
        return
    assert layer["mpi"].startswith("Open MPI ")
    assert layer["io_component"] == io
    assert layer["settings"]["fcoll"] == fcoll
    assert layer["settings"]["io"] == ("" if how != "param file" else io)
    # the suite's default, set before MPI_Init when the user sets none (docs/backends.md)
    assert layer["settings"]["sharedfp"] == "^lockedfile,individual", layer
    line = next(x for x in r.out.splitlines() if x.startswith("MPI-IO layer"))
    if io == "ompio":
        assert line.startswith("MPI-IO layer             : OpenMPI io ompio"), line
        assert (f", fcoll {fcoll}," in line) if fcoll else ("; fcoll, fbtl" in line), line
        assert ", sharedfp ^lockedfile,individual" in line, line
    else:
        assert line == f"MPI-IO layer             : OpenMPI io {io}", line
    assert ratio > 2 if io == "romio321" else ratio < 1.5, (ratio, w["os_bytes"], w["bytes"])


def test_no_mpiio_layer_line_for_a_backend_without_mpiio(tmp_path, built_backends):
    r = run(1, [*SMALL, "--backend", "null"], tmp_path)
    assert r.rc == 0, r.err
    assert "MPI-IO layer" not in r.out
