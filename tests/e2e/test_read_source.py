# SPDX-License-Identifier: BSD-3-Clause
"""Cached reads named (issue 12): a read pass is "from storage" only when
the OS read_bytes summed over ranks is at least 90% of the bytes read
(IOK_FROM_STORAGE_FRACTION, src/core/measure/measure.h);
otherwise the report and the record say "page cache"."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import run, unmount
from declared import missing

ARGS = ["btio", "--grid", "64,64,64", "--dumps", "2"]  # 20 MiB: more than readahead


def read_pass(rec):
    return next(p for p in rec["passes"] if p["op"] == "read")


def test_read_right_after_write_is_page_cache(tmp_path):
    assert run(4, ARGS, tmp_path).rc == 0
    r = run(4, [*ARGS, "--mode", "read", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    p = read_pass(r.record)
    os_read = p["os_bytes"]["read_bytes"]
    # the premise, asserted: a read right after the write finds the pages cached
    assert 2 * os_read < p["bytes"], (
        f"premise failed: the OS read {os_read} of {p['bytes']} bytes from storage right "
        "after the write (nothing cached: is the page cache under memory pressure?)"
    )
    assert p["from_storage"] is False
    assert p["from_storage_reason"].startswith("page cache: OS read_bytes")
    assert r.record["summary"]["read_from_storage"] is False
    line = next(line for line in r.out.splitlines() if line.startswith("read "))
    assert line.endswith("[PAGE CACHE]"), line
    assert "read from page cache: OS read_bytes" in r.out


def test_read_after_drop_caches_is_from_storage(tmp_path):
    if os.geteuid() != 0:
        missing("root", "dropping the page cache needs root")
    assert run(4, ARGS, tmp_path).rc == 0
    r = run(4, [*ARGS, "--mode", "read", "--drop-caches"], tmp_path)
    assert r.rc == 0, r.err
    p = read_pass(r.record)
    # the premise, asserted: after --drop-caches the OS reads from the device
    assert 2 * p["os_bytes"]["read_bytes"] >= p["bytes"], (
        f"premise failed: the OS still served the read from memory after "
        f"{p['cache_drop_method']} (OS read_bytes {p['os_bytes']['read_bytes']} of {p['bytes']})"
    )
    assert p["from_storage"] is True and p["from_storage_reason"].startswith("storage:")
    assert r.record["summary"]["read_from_storage"] is True
    line = next(line for line in r.out.splitlines() if line.startswith("read "))
    assert line.endswith("[from storage]"), line


def test_write_and_null_reads_carry_no_source(tmp_path):
    r = run(4, [*ARGS, "--verify"], tmp_path)
    assert r.rc == 0, r.err
    w, v = r.record["passes"]
    assert "from_storage" not in w and isinstance(v["from_storage"], bool)
    n = run(4, [*ARGS, "--backend", "null", "--mode", "read"], tmp_path)
    assert n.rc == 0, n.err
    assert "from_storage" not in read_pass(n.record)
    assert n.record["summary"]["read_from_storage"] is None


def fuse_mount(tmp_path):
    """A FUSE file system (bindfs over a local folder): its reads are made by
    the bindfs daemon, so the ranks' OS read_bytes never count them."""
    if os.geteuid() != 0:
        missing("root", "mounting a FUSE file system needs root")
    if not shutil.which("bindfs"):
        missing("bindfs", "a FUSE mount to read from (scripts/install-deps.sh)")
    under, where = tmp_path / "under", tmp_path / "fuse"
    under.mkdir()
    where.mkdir()
    subprocess.run(["bindfs", str(under), str(where)], check=True)
    return where


@pytest.mark.parametrize("drop", [False, True])
def test_read_on_fuse_is_unknown(tmp_path, drop):
    """On FUSE the counts cannot tell: after --drop-caches the data come from
    the disk through the daemon, yet the ranks' read_bytes stay 0, which the
    block-layer rule alone would call "page cache"."""
    where = fuse_mount(tmp_path)
    try:
        args = [*ARGS, "--dir", str(where), "--backend", "mpiio"]
        assert run(4, args, tmp_path).rc == 0
        r = run(4, [*args, "--mode", "read", *(["--drop-caches"] if drop else [])], tmp_path)
    finally:
        unmount(where)
    assert r.rc == 0, r.err
    p = read_pass(r.record)
    assert p["read_source"] == "unknown", p["from_storage_reason"]
    assert p["from_storage"] is False
    assert p["from_storage_reason"].startswith("unknown: fuse on node 0 of 1:"), p
    assert "bypass the block layer" in p["from_storage_reason"]
    assert r.record["summary"]["read_from_storage"] is None
    line = next(line for line in r.out.splitlines() if line.startswith("read "))
    assert line.endswith("[source unknown]"), line
    assert "read source unknown: fuse" in r.out


def test_same_read_beside_fuse_is_judged(tmp_path):
    """The case the rule must not catch: the same read on the folder under
    the FUSE mount (ext4 here) gets its verdict."""
    fs = subprocess.run(["stat", "-f", "-c", "%T", str(tmp_path)], capture_output=True, text=True)
    assert fs.stdout.strip() in ("ext2/ext3", "xfs", "btrfs"), f"premise: {fs.stdout}"
    args = [*ARGS, "--dir", str(tmp_path), "--backend", "mpiio"]
    assert run(4, args, tmp_path).rc == 0
    r = run(4, [*args, "--mode", "read"], tmp_path)
    assert r.rc == 0, r.err
    p = read_pass(r.record)
    assert p["read_source"] in ("page cache", "storage"), p["from_storage_reason"]
    assert not p["from_storage_reason"].startswith("unknown")


@pytest.mark.parametrize("fsync", [True, False], ids=["fsync", "buffered"])
def test_a_tmpfs_write_is_never_told_to_add_fsync(tmp_path, fsync):
    """tmpfs writes never pass the block layer that OS write_bytes counts:
    the note says so, with or without --fsync, and never hints "add --fsync"
    (it did for a write that ran with --fsync)."""
    shm = Path("/dev/shm")
    fs = subprocess.run(["stat", "-f", "-c", "%T", shm], capture_output=True, text=True)
    assert fs.stdout.strip() == "tmpfs", f"premise: /dev/shm is tmpfs here, got {fs.stdout!r}"
    d = Path(tempfile.mkdtemp(dir=shm, prefix="iok-tmpfs-"))
    try:
        args = [*ARGS, "--backend", "mpiio", "--dir", str(d)] + (["--fsync"] if fsync else [])
        r = run(1, args, tmp_path)
        assert r.rc == 0, r.err
        (p,) = r.record["passes"]
        assert r.record["filesystem"]["type"] == "tmpfs"
        assert p["os_bytes"]["write_bytes"] < p["bytes"] / 2, p["os_bytes"]  # the premise
        assert "add --fsync" not in r.out, r.out
        assert "note: OS write_bytes counts the block layer, and tmpfs writes do not pass" in r.out
    finally:
        shutil.rmtree(d, ignore_errors=True)
