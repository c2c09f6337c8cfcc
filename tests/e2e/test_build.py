# SPDX-License-Identifier: BSD-3-Clause
"""The release pieces: `iokernels --version` names the commit it was built
from (cmake/version.cmake, run at every build), and scripts/check-spdx.sh
names a tracked source file without its license line."""

import os
import re
import shutil
import subprocess

import pytest
from conftest import BIN, REPO
from declared import missing

VERSION_SCRIPT = REPO / "cmake" / "version.cmake"


def git(cwd, *args):
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        # the user's and the system's git settings (signing, hooks) are not the test's
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def commit_line(src, out):
    subprocess.run(
        ["cmake", f"-DSOURCE_DIR={src}", f"-DOUT={out}", "-P", str(VERSION_SCRIPT)], check=True
    )
    return re.search(r'iok_commit\[\] = "([^"]*)"', out.read_text()).group(1)


@pytest.fixture
def repo(tmp_path):
    if not shutil.which("git") or not shutil.which("cmake"):
        missing("git" if not shutil.which("git") else "cmake", "not on PATH")
    src = tmp_path / "src"
    src.mkdir()
    git(src, "init", "-q")
    (src / "a.c").write_text("int a;\n")
    git(src, "add", "a.c")
    git(src, "commit", "-q", "-m", "one")
    return src


def test_version_names_the_commit_and_dirty(repo, tmp_path):
    out = tmp_path / "version.c"
    head = git(repo, "rev-parse", "--short=12", "HEAD")
    assert commit_line(repo, out) == f"commit {head}"
    stamp = out.stat().st_mtime_ns
    assert commit_line(repo, out) == f"commit {head}"
    assert out.stat().st_mtime_ns == stamp  # unchanged: nothing recompiles
    (repo / "a.c").write_text("int b;\n")
    assert commit_line(repo, out) == f"commit {head}, dirty"
    git(repo, "commit", "-q", "-am", "two")  # HEAD moved: refreshed
    head2 = git(repo, "rev-parse", "--short=12", "HEAD")
    assert head2 != head and commit_line(repo, out) == f"commit {head2}"
    (repo / "new.c").write_text("int c;\n")  # untracked files leave it clean
    assert commit_line(repo, out) == f"commit {head2}"


def test_version_of_a_tarball_says_unknown_commit(repo, tmp_path):
    """Sources without .git, even unpacked inside another work tree."""
    tarball = repo / "unpacked"
    tarball.mkdir()
    (tarball / "a.c").write_text("int a;\n")
    assert commit_line(tarball, tmp_path / "v.c") == "unknown commit"


def test_binary_version_names_version_and_commit():
    out = subprocess.run([str(BIN), "--version"], capture_output=True, text=True, check=True)
    project = re.search(
        r"project\(iokernels VERSION ([\d.]+)", (REPO / "CMakeLists.txt").read_text()
    )
    m = re.fullmatch(
        r"iokernels (\S+) \((commit ([0-9a-f]{12})(, dirty)?|unknown commit)\)\n", out.stdout
    )
    assert m and m.group(1) == project.group(1), out.stdout
    if (REPO / ".git").exists() and m.group(3):
        # the commit built is HEAD or one of its ancestors (a build before a commit)
        ok = subprocess.run(
            ["git", "-C", str(REPO), "merge-base", "--is-ancestor", m.group(3), "HEAD"]
        )
        assert ok.returncode == 0, out.stdout


def test_spdx_check_names_the_file_without_it(repo):
    (repo / "b.py").write_text('"""no license line"""\n')
    (repo / "run").write_text("#!/bin/sh\n# SPDX-License-Identifier: BSD-3-Clause\necho\n")
    (repo / "tool").write_text("#!/bin/sh\necho\n")
    (repo / "data.txt").write_text("not source\n")
    git(repo, "add", ".")
    r = subprocess.run(
        [str(REPO / "scripts" / "check-spdx.sh"), str(repo)], capture_output=True, text=True
    )
    assert r.returncode == 1
    named = sorted(re.findall(r"no SPDX-License-Identifier line: (\S+)", r.stdout))
    assert named == ["a.c", "b.py", "tool"], r.stdout


def test_backend_choice_on_off_auto(tmp_path):
    """IOK_BACKEND_<NAME>: ON fails the configure in one line naming what is
    missing and the variable to set; AUTO leaves the backend out with the
    reason in the table; OFF says so."""
    if not shutil.which("cmake"):
        missing("cmake", "not on PATH")
    nowhere = tmp_path / "no-venv"
    nowhere.mkdir()
    base = ["cmake", "-S", str(REPO), f"-DIOK_ADIOS2_VENV={nowhere}", "-DIOK_BACKEND_HDF5=OFF"]
    on = subprocess.run(
        [*base, "-B", str(tmp_path / "on"), "-DIOK_BACKEND_ADIOS2=ON"],
        capture_output=True,
        text=True,
    )
    assert on.returncode != 0
    lines = [x.strip() for x in on.stderr.splitlines() if "IOK_BACKEND_ADIOS2=ON" in x]
    assert lines == [
        "IOK_BACKEND_ADIOS2=ON: ADIOS2 with MPI not found (make venv builds it into .venv) "
        "(set ADIOS2_DIR=PREFIX/lib/cmake/adios2 or ADIOS2_ROOT=PREFIX of an MPI ADIOS2)"
    ], on.stderr
    auto = subprocess.run([*base, "-B", str(tmp_path / "auto")], capture_output=True, text=True)
    assert auto.returncode == 0, auto.stderr[-2000:]
    table = (tmp_path / "auto" / "backends.txt").read_text()
    rows = {line.split()[0]: line.split(None, 2) for line in table.splitlines()[2:]}
    assert rows["adios2"][1] == "no" and "ADIOS2 with MPI not found" in rows["adios2"][2], table
    assert rows["hdf5"][1] == "no" and rows["hdf5"][2].endswith("IOK_BACKEND_HDF5=OFF"), table
    assert rows["netcdf4"][1] == "no" and "needs the hdf5 backend" in rows["netcdf4"][2], table
    assert rows["mpiio"][1] == rows["null"][1] == "yes", table
    assert "backend adios2 left out: ADIOS2 with MPI not found" in auto.stdout
