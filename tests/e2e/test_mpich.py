# SPDX-License-Identifier: BSD-3-Clause
"""The suite built against MPICH (make test-mpich: mpicc.mpich, HDF5 found
through HDF5_ROOT, ADIOS2 built with mpicc.mpich) and run under hydra: it
links no OpenMPI library, the configure refuses a library built with
OpenMPI in one line, a run names ROMIO and MPICH, and the README's commands
for any MPI work as written. Skipped for a binary that is not linked
against MPICH (the OpenMPI build of make test)."""

import json
import os
import re
import subprocess

import pytest
from conftest import BIN, REPO, assert_mpich_romio, run

OPENMPI_LIBS = re.compile(r"lib(mpi\.so\.40|open-pal|open-rte|mpi_mpifh)")
MPICH_HDF5 = os.environ.get("MPICH_HDF5", "/usr/lib/x86_64-linux-gnu/hdf5/mpich")


def ldd(path):
    return subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module", autouse=True)
def mpich():
    # conftest.py leaves this file out of a run whose binary is not MPICH's
    assert BIN.exists() and "libmpich.so" in ldd(BIN), f"{BIN} is not an MPICH build"


def cmake_cache(name):
    text = (BIN.parent / "CMakeCache.txt").read_text()
    m = re.search(rf"^{name}:[A-Z]+=(.*)$", text, re.M)
    return m.group(1) if m else ""


def test_binary_and_modules_link_mpich_only():
    modules = sorted((BIN.parent / "modules").glob("*.so"))
    names = {m.name for m in modules}
    assert {"iok-backend-hdf5.so", "iok-e3sm_read_h5.so"} <= names, names
    for f in [BIN, *modules]:
        out = ldd(f)
        assert "libmpich.so.12" in out, (f, out)
        assert not OPENMPI_LIBS.search(out), (f, out)
        assert "not found" not in out, (f, out)
    listed = json.loads(subprocess.run([str(BIN), "--list", "--json"], capture_output=True).stdout)
    built = [b["name"] for b in listed["backends"]]
    assert built[:3] == ["null", "mpiio", "hdf5"], built
    # the HDF5 of HDF5_ROOT, not the OpenMPI one pkg-config would name
    assert cmake_cache("HDF5_ROOT") == MPICH_HDF5
    hdf5 = ldd(BIN.parent / "modules" / "iok-backend-hdf5.so")
    assert "libhdf5_mpich.so" in hdf5 and "libhdf5_openmpi" not in hdf5, hdf5
    if "adios2" in built:
        assert "iok-backend-adios2.so" in names


def test_table_names_each_backend_and_why():
    table = (BIN.parent / "backends.txt").read_text()
    assert table.startswith("iokernels backends (MPI: MPICH (libmpich.so.12)):"), table
    rows = {line.split()[0]: line for line in table.splitlines()[2:]}
    assert re.match(r"  hdf5 +yes +HDF5 +1\.\d+\.\d+ +/\S+/hdf5/mpich/", rows["hdf5"]), rows
    for name in ("pnetcdf", "netcdf4"):  # Debian has no MPICH build of these
        assert re.search(
            r" no .* is built with Open MPI \(libmpi\.so\.40\), the configured MPI is MPICH",
            rows[name],
        ), rows[name]


def test_configure_refuses_pnetcdf_built_with_openmpi(tmp_path):
    """-DIOK_BACKEND_PNETCDF=ON with MPICH: one line naming PnetCDF, the MPI
    it was built with, ours, and the variable that would point elsewhere."""
    p = subprocess.run(
        [
            "cmake",
            "-S",
            str(REPO),
            "-B",
            str(tmp_path / "b"),
            "-DMPI_C_COMPILER=mpicc.mpich",
            f"-DHDF5_ROOT={MPICH_HDF5}",
            "-DIOK_BACKEND_PNETCDF=ON",
            "-DIOK_BACKEND_ADIOS2=OFF",
        ],
        capture_output=True,
        text=True,
    )
    assert p.returncode != 0
    lines = [x.strip() for x in p.stderr.splitlines() if "IOK_BACKEND_PNETCDF=ON" in x]
    assert len(lines) == 1, p.stderr
    assert re.fullmatch(
        r"IOK_BACKEND_PNETCDF=ON: PnetCDF /\S+libpnetcdf\.so\S* is built with Open MPI "
        r"\(libmpi\.so\.40\), the configured MPI is MPICH \(libmpich\.so\.12\) "
        r"\(set PnetCDF_ROOT=PREFIX\)",
        lines[0],
    ), lines[0]


def test_hdf5_write_verify_names_romio_and_mpich(tmp_path):
    args = ["btio", "--backend", "hdf5", "--grid", "12,12,12", "--dumps", "2", "--verify"]
    r = run(4, [*args, "--hints", "cb_nodes=1"], tmp_path)
    assert r.rc == 0, r.err
    env = r.record["environment"]
    assert env["mpi_library_version"].startswith("MPICH Version: 4."), env
    assert_mpich_romio(r)
    assert r.record["verify"]["ok"] is True
    # ROMIO reports every hint in effect, its defaults too
    for p in r.record["passes"]:
        got = p["hints_in_effect"]
        assert got["cb_nodes"] == "1" and got["romio_cb_write"] == "automatic", got
    hint_lines = [x for x in r.out.splitlines() if "hints in effect:" in x]
    assert len(hint_lines) == 2 and all("cb_nodes=1" in x for x in hint_lines), r.out
    # ROMIO_HINTS: named in the layer, and ROMIO applies the file
    (tmp_path / "romio.hints").write_text("cb_buffer_size 1048576\n")
    env = {"ROMIO_HINTS": str(tmp_path / "romio.hints")}
    r = run(4, [*args, "--overwrite"], tmp_path, env=env)
    assert r.rc == 0, r.err
    layer = r.record["environment"]["mpiio_layer"]
    assert layer["settings"] == {"ROMIO_HINTS": env["ROMIO_HINTS"]}
    assert f"ROMIO, ROMIO_HINTS {env['ROMIO_HINTS']}\n" in r.out
    assert r.record["passes"][0]["hints_in_effect"]["cb_buffer_size"] == "1048576"


def test_readme_commands_for_any_mpi(tmp_path):
    """The "With any MPI" block of docs/install.md, run as written (HOME in tmp_path):
    configure with mpicc.mpich and HDF5_ROOT, build, install, the campaign
    tool installed into a fresh venv from the installed tree, a run."""
    text = (REPO / "docs" / "install.md").read_text()
    block = re.search(r"With any MPI[^\n]*\n\n(?:<!--[^\n]*-->\n)?```sh\n(.*?)```", text, re.S)
    cmds = block.group(1).splitlines()
    assert any("MPI_C_COMPILER" in c for c in cmds) and any("pip install" in c for c in cmds)
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("IOK_BIN", None)
    for c in cmds:
        # the build folder is make test-mpich's own: configured alike, nothing to rebuild
        p = subprocess.run(
            c,
            shell=True,
            cwd=REPO if "build-mpich" in c else tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert p.returncode == 0, (c, p.stdout[-2000:], p.stderr[-2000:])
        last = p
    prefix = tmp_path / "iokernels"
    assert (
        "iokernels 0."
        in subprocess.run(
            [str(prefix / "bin" / "iokernels"), "--version"], capture_output=True, text=True
        ).stdout
    )
    assert "libmpich.so.12" in ldd(prefix / "bin" / "iokernels")
    assert not OPENMPI_LIBS.search(ldd(prefix / "lib" / "iokernels" / "iok-backend-hdf5.so"))
    assert "MPI-IO layer             : MPICH" in last.stdout, last.stdout
    # the campaign tool of the fresh venv finds the binary on PATH or by IOKERNELS_BIN
    tool = tmp_path / "venv" / "bin" / "iokernels-campaign"
    camp = prefix / "share" / "iokernels" / "campaigns" / "default.toml"
    for how in ("PATH", "IOKERNELS_BIN"):
        e = {k: v for k, v in os.environ.items() if k != "IOK_BIN"}
        if how == "PATH":
            e["PATH"] = f"{prefix / 'bin'}:{e['PATH']}"
        else:
            e["IOKERNELS_BIN"] = str(prefix / "bin" / "iokernels")
        p = subprocess.run(
            [str(tool), "run", str(camp), "--dry-run", "--db", "x.sqlite"],
            cwd=tmp_path,
            env=e,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert p.returncode == 0, (how, p.stderr[-2000:])
        assert str(prefix / "bin" / "iokernels") in p.stdout, (how, p.stdout[:2000])
