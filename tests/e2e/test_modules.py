# SPDX-License-Identifier: BSD-3-Clause
"""Backends other than null and mpiio, and E3SM's map readers, are modules
loaded on first use: a run loads only the I/O libraries it uses."""

import json
import os
import subprocess

import pytest
from conftest import BIN, need, run

SMALL = ["btio", "--grid", "16,16,16", "--dumps", "1"]
NOWHERE = {"IOKERNELS_MODULES": "/nonexistent/iokernels-modules"}


def test_mpiio_run_needs_no_module(tmp_path, built_backends):
    r = run(4, [*SMALL, "--backend", "mpiio", "--verify"], tmp_path, env=NOWHERE)
    assert r.rc == 0, r.err
    libs = r.record["libraries"]
    assert "mpiio" in libs and "mpi" in libs, libs
    for other in ("pnetcdf", "hdf5", "netcdf4", "adios2"):
        assert other not in libs, libs


@pytest.mark.parametrize("b", ["pnetcdf", "hdf5"])
def test_record_names_the_library_loaded(tmp_path, built_backends, b):
    need(b, built_backends)
    r = run(1, [*SMALL, "--backend", b], tmp_path)
    assert r.rc == 0, r.err
    loaded = set(r.record["libraries"]) & {"pnetcdf", "hdf5", "netcdf4", "adios2"}
    assert loaded == {b}, r.record["libraries"]


def test_missing_module_is_one_line_naming_it(tmp_path, built_backends):
    need("pnetcdf", built_backends)
    r = run(4, [*SMALL, "--backend", "pnetcdf"], tmp_path, env=NOWHERE)
    line = r.error_line()
    assert "/nonexistent/iokernels-modules/iok-backend-pnetcdf.so" in line, line
    assert "IOKERNELS_MODULES" in line, line


def test_backend_option_loads_its_backend(tmp_path, built_backends):
    """--hdf5-layout is known once the hdf5 module is loaded: named on the
    command line, it is accepted; a misspelt one is still refused."""
    need("hdf5", built_backends)
    args = [*SMALL, "--backend", "hdf5", "--hdf5-layout", "chunked", "--verify"]
    r = run(1, args, tmp_path)
    assert r.rc == 0, r.err
    r = run(1, [*SMALL, "--backend", "hdf5", "--hdf5-layot", "chunked"], tmp_path)
    assert r.rc == 2 and "hdf5-layot" in r.err, r.err


def test_map_reader_module_missing_is_named(tmp_path, built_backends):
    """An E3SM map in NetCDF classic form is read by the e3sm_read_pnc module."""
    need("pnetcdf", built_backends)
    from conftest import REPO

    m = REPO / "data" / "e3sm" / "map_g_case_16p.nc"
    r = run(1, ["e3sm", str(m), "--backend", "mpiio", "-o", "g.nc"], tmp_path, env=NOWHERE)
    assert r.rc == 2, (r.rc, r.err)
    assert "iok-e3sm_read_pnc.so" in r.err, r.err


def modules_with_broken(tmp_path, broken):
    """The build's module folder, linked file by file, with the modules of
    the backends `broken` replaced by files no loader takes."""
    d = tmp_path / "modules"
    d.mkdir()
    for so in (BIN.parent / "modules").glob("iok-*.so"):
        (d / so.name).symlink_to(so)
    for b in broken:
        (d / f"iok-backend-{b}.so").unlink()
        (d / f"iok-backend-{b}.so").write_text("not a module\n")
    return {"IOKERNELS_MODULES": str(d)}


def test_each_unloadable_backend_names_its_own_module(tmp_path, built_backends):
    """Two modules that do not load: --list, --list --json and a run each name
    the module of the backend in question (the first failure's message was
    shown for every later one), and a run that uses neither runs."""
    broken = [b for b in ("hdf5", "adios2", "netcdf4", "pnetcdf") if b in built_backends][:2]
    if len(broken) < 2:
        return
    env = modules_with_broken(tmp_path, broken)
    full = {**os.environ, **env}
    text = subprocess.run([str(BIN), "--list"], capture_output=True, text=True, env=full)
    listed = subprocess.run(
        [str(BIN), "--list", "--json"], capture_output=True, text=True, env=full
    )
    errors = {b["name"]: b.get("error") for b in json.loads(listed.stdout)["backends"]}
    for b in broken:
        line = next(x for x in text.stdout.splitlines() if x.split()[:1] == [b])
        assert f"iok-backend-{b}.so" in line and "not loaded" in line, line
        assert f"iok-backend-{b}.so" in errors[b], errors
        r = run(1, [*SMALL, "--backend", b], tmp_path, env=env)
        assert r.rc == 2 and len(r.error_lines()) == 1, r.err
        assert f"backend {b}: cannot load the module" in r.error_lines()[0], r.err
        assert f"iok-backend-{b}.so" in r.error_lines()[0], r.err
    other = broken[1]
    r = run(1, [*SMALL, "--backend", "mpiio"], tmp_path, env=env)
    assert r.rc == 0 and not r.error_lines(), r.err
    # an option of an unloadable backend: the reason, not "unknown option"
    r = run(1, [*SMALL, "--backend", "mpiio", f"--{other}-x", "1"], tmp_path, env=env)
    assert r.rc == 2 and f"iok-backend-{other}.so" in r.err and "unknown" not in r.err, r.err
