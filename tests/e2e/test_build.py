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

VERSION_SCRIPT = REPO / "cmake" / "version.cmake"


def git(cwd, *args):
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
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
        pytest.skip("git or cmake not on PATH")
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
