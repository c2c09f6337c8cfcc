# SPDX-License-Identifier: BSD-3-Clause
"""`iokernels mix`: the members' outputs checked together, before any
writes (issue 49, item 7). Two members writing one file are told apart as
the file system sees them (the folder's real path and the name; device and
inode where the file exists), not by their spelling; the members' files on
one file system must fit there together, not each alone."""

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import run, unmount
from declared import missing

BTIO = ["btio", "--backend", "mpiio", "--grid", "8,8,8", "--dumps", "1"]
BIG = 24**3 * 5 * 5 * 8  # BTIO --grid 24,24,24: 5 dumps of 5 doubles a point


def mix(parts, cwd, *opts):
    args = ["mix", "--iterations", "1", *opts]
    for kernel in parts:
        args += ["--part", f"1:{kernel[0]}", *kernel[1:]]
    return run(2, args, cwd, timeout=120)


def one_line(r):
    assert r.rc == 2, (r.rc, r.out[-2000:], r.err[-2000:])
    lines = r.error_lines()
    assert len(lines) == 1, r.err
    return lines[0]


def aliases(tmp_path):
    """The second member's spelling of the first's folder d, by form."""
    d = tmp_path / "d"
    (tmp_path / "link").symlink_to("d")
    return {
        "dot": "d/.",
        "slashes": "d//",
        "absolute": str(d),
        "symlink": "link",
        "parent": "link/../d",
    }


@pytest.mark.parametrize("form", ["dot", "slashes", "absolute", "symlink", "parent"])
def test_one_file_under_two_spellings_is_refused(tmp_path, form):
    (tmp_path / "d").mkdir()
    other = aliases(tmp_path)[form]
    r = mix([[*BTIO, "--dir", "d"], [*BTIO, "--dir", other]], tmp_path)
    line = one_line(r)
    real = os.path.realpath(tmp_path / "d" / "btio.mpi")
    assert line == (
        "iokernels: error: mix: members 1 (btio) and 2 (btio) both write one file: "
        f"d/btio.mpi (member 1) and {other}/btio.mpi (member 2) are {real}: give them "
        "different files (--dir, -o, ...)"
    ), line
    assert not list((tmp_path / "d").iterdir())


def test_a_hard_link_is_one_file(tmp_path):
    """Two names of one existing file (a hard link), with --overwrite: the
    same device and inode."""
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
    (tmp_path / "a" / "btio.mpi").write_text("mine\n")
    os.link(tmp_path / "a" / "btio.mpi", tmp_path / "b" / "btio.mpi")
    parts = [[*BTIO, "--dir", "a", "--overwrite"], [*BTIO, "--dir", "b", "--overwrite"]]
    line = one_line(mix(parts, tmp_path))
    assert "members 1 (btio) and 2 (btio) both write one file: a/btio.mpi (member 1) and " in line
    assert "b/btio.mpi (member 2) are one file (device " in line, line
    assert (tmp_path / "a" / "btio.mpi").read_text() == "mine\n"


@pytest.fixture
def small_fs():
    """A 4 MiB tmpfs (root only), unmounted after the test."""
    where = Path(tempfile.mkdtemp(prefix="iok-mix-fs-"))
    ok = os.geteuid() == 0 and (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)], capture_output=True
        ).returncode
        == 0
    )
    if not ok:
        where.rmdir()
        missing("root", "cannot mount a tmpfs here")
    yield where
    unmount(where)


def big(where):
    return ["btio", "--backend", "mpiio", "--grid", "24,24,24", "--dir", str(where)]


def test_members_that_fit_alone_but_not_together_are_refused(tmp_path, small_fs):
    """Each member's 2.6 MiB fit the 4 MiB file system alone; together
    they do not: refused before any writes, naming the file system, what
    they need and what is free."""
    for sub in ("a", "b"):
        (small_fs / sub).mkdir()
    free = os.statvfs(small_fs).f_bavail * os.statvfs(small_fs).f_frsize
    assert BIG < free < 2 * BIG, free
    line = one_line(mix([big(small_fs / "a"), big(small_fs / "b")], tmp_path))
    assert line == (
        f"iokernels: error: mix: the members' files on the file system of {small_fs}/a need "
        f"{2 * BIG} bytes together (member 1 (btio): {BIG}, member 2 (btio): {BIG}), more than "
        f"the {free} bytes free there: give the members smaller sizes, or folders on other "
        "file systems"
    ), line
    assert not list((small_fs / "a").iterdir()) and not list((small_fs / "b").iterdir())


def test_members_on_two_file_systems_each_need_their_own_room(tmp_path, small_fs):
    """The same two members, one on the small file system, one elsewhere:
    each fits where it writes, and the mix runs."""
    (tmp_path / "b").mkdir()
    r = mix([big(small_fs), big(tmp_path / "b")], tmp_path)
    assert r.rc == 0, r.err[-3000:]
    assert (small_fs / "btio.mpi").stat().st_size == BIG
    assert (tmp_path / "b" / "btio.mpi").stat().st_size == BIG
