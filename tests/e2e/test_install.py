# SPDX-License-Identifier: BSD-3-Clause
"""The installed tree stands alone, and the binary describes itself.

`cmake --install` into a temporary prefix, the prefix then moved elsewhere:
the binary finds its data (E3SM schemas and maps, the Chombo grid, the
campaigns) beside itself and runs every kernel's smallest case from a
directory outside the source tree. `--list --json` and `KERNEL --help
--json` agree with the text forms; every option's help says its default
once."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BIN, REPO, need, run, run_plain
from declared import missing

KERNELS = ["btio", "ncbench", "amrex", "chombo", "abrgen", "e3sm", "e3sm-decomp", "replay"]


def describe(*args, binary=BIN):
    out = subprocess.run([str(binary), *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    if shutil.which("cmake") is None:
        missing("cmake", "not on PATH")
    top = tmp_path_factory.mktemp("install")
    subprocess.run(
        ["cmake", "--install", str(BIN.parent), "--prefix", str(top / "prefix")],
        check=True,
        capture_output=True,
    )
    moved = top / "moved"
    (top / "prefix").rename(moved)  # relocatable: nothing points at the install prefix
    return moved


def test_install_layout(installed):
    share = installed / "share" / "iokernels"
    assert (installed / "bin" / "iokernels").is_file()
    for f in ("data/e3sm/variables.tsv", "data/e3sm/map_g_case_16p.nc", "campaigns/default.toml"):
        assert (share / f).is_file(), f
    assert list((share / "grids").glob("*.abr"))
    # iokernels(1), as generated (scripts/gen-reference), where man looks
    for page in ("iokernels.1", "iokernels-campaign.1"):
        man = installed / "share" / "man" / "man1" / page
        assert man.read_text() == (REPO / "man" / page).read_text()
    # the installed binary finds the data beside itself, not in the source tree
    got = describe("--list", "--json", binary=installed / "bin" / "iokernels")
    assert got["data"] == str(share.resolve())


def test_installed_campaign_tool_runs_from_the_prefix(installed, tmp_path):
    """The campaign package as installed (PREFIX/share/iokernels/python): it
    is the one imported, `python -m iokernels_campaign` starts from it, and the
    report room's templates load (a room or file the install left out fails)."""
    python = installed / "share" / "iokernels" / "python"
    env = {**os.environ, "PYTHONPATH": str(python)}
    code = (
        "import iokernels_campaign.cli as c, iokernels_campaign.report.html_report as h\n"
        "print(c.__file__)\n"
        "for page in ('report.html', 'compare.html'): h.ENV.get_template(page)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()).is_relative_to(python)
    r = subprocess.run(
        [sys.executable, "-m", "iokernels_campaign", "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: iokernels-campaign")


SMALLEST = {
    "btio": (4, ["btio", "--grid", "8,8,8", "--dumps", "1", "--verify"]),
    "ncbench": (2, ["ncbench", "-d", "2:4:4:2", "-w", "-r", "--verify"]),
    "amrex": (2, ["amrex", "--ncells", "16", "--max_grid_size", "8", "--ncomp", "1", "--verify"]),
    "chombo": (2, ["chombo", "--ncomp", "1", "--verify"]),
    "e3sm": (2, ["e3sm", "-o", "g.nc", "--verify", "MAP_G"]),
    "replay": (4, ["replay", "SMALL_REPLAY", "--verify"]),
}


# the kernels whose default backend is not built run on hdf5 (an MPICH build:
# Debian has no MPICH PnetCDF or NetCDF); E3SM's shipped map needs PnetCDF
DEFAULT_BACKEND = {"btio": "pnetcdf", "ncbench": "netcdf4", "e3sm": "pnetcdf", "replay": "mpiio"}


@pytest.mark.parametrize("kernel", sorted(SMALLEST))
def test_installed_kernel_runs_outside_the_source_tree(installed, kernel, tmp_path, built_backends):
    np_, args = SMALLEST[kernel]
    if DEFAULT_BACKEND.get(kernel, "hdf5") not in built_backends:
        if kernel == "e3sm":
            missing("pnetcdf", "the shipped E3SM map is a NetCDF classic file: PnetCDF reads it")
        args = [*args, "--backend", "hdf5"]
    map_g = installed / "share" / "iokernels" / "data" / "e3sm" / "map_g_case_16p.nc"
    small = installed / "share" / "iokernels" / "data" / "replay" / "small.replay"
    args = [{"MAP_G": str(map_g), "SMALL_REPLAY": str(small)}.get(a, a) for a in args]
    assert REPO not in tmp_path.parents
    r = run(np_, args, tmp_path, binary=installed / "bin" / "iokernels")
    assert r.rc == 0, r.err
    assert r.record["verify"]["ok"] is True


def test_list_json_agrees_with_text():
    desc = describe("--list", "--json")
    text = subprocess.run([str(BIN), "--list"], capture_output=True, text=True).stdout
    assert [k["name"] for k in desc["kernels"]] == KERNELS
    for b in desc["backends"]:
        assert re.search(rf"^  {b['name']} +.*\[{re.escape(b['version'])}\]$", text, re.M), b
        caps = re.search(rf"^  {b['name']} +(.*)$", text.split("capabilities:")[1], re.M)
        assert caps.group(1).split() == b["caps"]


@pytest.mark.parametrize("kernel", KERNELS)
def test_help_json_agrees_with_text(kernel):
    desc = describe(kernel, "--help", "--json")
    text = subprocess.run([str(BIN), kernel, "--help"], capture_output=True, text=True).stdout
    lines = [x for x in text.splitlines() if re.match(r"^\s+(-\w, )?--[\w-]+ ", x)]
    names = [re.search(r"--([\w-]+)", x).group(1) for x in lines]
    assert names == [o["name"] for o in desc["options"]]
    for line, opt in zip(lines, desc["options"], strict=True):
        # every option says its default exactly once, in the text and the JSON
        assert line.count("(default") == 1, line
        assert opt["help"].count("(default") == 1, opt
        assert opt["type"] in ("bool", "int", "int64", "double", "string", "choice", "int3")
        assert (opt["choices"] is not None) == (opt["type"] == "choice"), opt
    grid = {o["name"]: o for o in desc["options"]}.get("grid")
    if kernel == "btio":
        assert grid["type"] == "int3" and len(grid["default"]) == 3


def test_bare_command_prints_usage(tmp_path):
    r = subprocess.run([str(BIN)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith("usage: iokernels KERNEL")
    assert "kernels:" in r.stderr and "btio" in r.stderr


def test_e3sm_library_names_of_the_original(tmp_path, built_backends):
    """-a adios (the original's name) and adios2 say truthfully why they are
    refused, and name what writes through ADIOS2 instead."""
    for b in ("adios2", "pnetcdf"):  # pnetcdf reads the shipped map
        need(b, built_backends)
    map_g = REPO / "data" / "e3sm" / "map_g_case_16p.nc"
    for name in ("adios", "adios2"):
        r = run_plain(1, ["e3sm", "-a", name, "-o", "x.nc", str(map_g)], tmp_path)
        assert r.rc == 2 and "--backend adios2" in r.err and "no adios2 backend" not in r.err
    r = run(1, ["e3sm", "--backend", "adios2", "-o", "y.nc", "--verify", str(map_g)], tmp_path)
    assert r.rc == 0, r.err
    r = run_plain(1, ["e3sm", "-a", "nosuch", "-o", "x.nc", str(map_g)], tmp_path)
    assert r.rc == 2 and "nosuch" in r.err
