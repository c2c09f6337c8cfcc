# SPDX-License-Identifier: BSD-3-Clause
"""Real failures, no mocks: a full file system (a small tmpfs), a truncated
file, a read-only directory, a rank killed mid-write. Each must end the whole
job quickly with a non-zero exit and one error line, and record nothing as a
good result."""

import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from conftest import BIN, MPIEXEC, kill_a_rank, need, ranks_of, run, unmount
from declared import missing

BACKENDS = ["mpiio", "pnetcdf", "hdf5", "netcdf4", "adios2"]
# BTIO 32^3 x 3 dumps: 3.75 MiB of data, more than the 2 MiB file system
FULL = ["btio", "--grid", "32,32,32", "--dumps", "3"]
SMALL = ["btio", "--grid", "16,16,16", "--dumps", "2"]
BOUND = 30  # seconds: every failure ends the job within this


def mount_tmpfs(where, *opts):
    where.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", ",".join(opts), "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    return p.returncode == 0


@pytest.fixture
def tiny_fs():
    """A 2 MiB tmpfs (root mounts one; elsewhere the test is skipped)."""
    where = Path(tempfile.mkdtemp(prefix="iok-full-"))
    if os.geteuid() != 0 or not mount_tmpfs(where, "size=2m"):
        missing("root", "cannot mount a tmpfs here: no full file system to test on")
    yield where
    unmount(where)


def timed(np_, args, cwd):
    t0 = time.monotonic()
    r = run(np_, args, cwd, timeout=120)
    return r, time.monotonic() - t0


def one_error_line(r):
    errs = r.error_lines()
    assert len(errs) == 1, r.err
    return errs[0]


@pytest.mark.parametrize("np_", [1, 4])
@pytest.mark.parametrize("backend", BACKENDS)
def test_data_larger_than_the_free_space_is_refused_up_front(
    tiny_fs, backend, np_, tmp_path, built_backends
):
    """3.75 MiB of data for a 2 MiB file system: refused before any file is
    created, naming the bytes needed and free (never a half-written file)."""
    need(backend, built_backends)
    r, took = timed(np_, [*FULL, "--backend", backend, "--dir", str(tiny_fs)], tmp_path)
    assert r.rc == 2, (r.rc, r.err[-2000:])
    line = one_error_line(r)
    assert "needs 3932160 bytes" in line and "free" in line and str(tiny_fs) in line, line
    assert took < BOUND, took
    assert not list(tiny_fs.iterdir())
    assert not r.records


@pytest.fixture
def exact_fs():
    """A tmpfs exactly the size of FULL's data: the data fit, a format's
    metadata beside them does not (ADIOS2's); skipped where no mount."""
    where = Path(tempfile.mkdtemp(prefix="iok-exact-"))
    if os.geteuid() != 0 or not mount_tmpfs(where, "size=3840k"):
        missing("root", "cannot mount a tmpfs here: no full file system to test on")
    yield where
    unmount(where)


@pytest.mark.parametrize("np_", [1, 4])
def test_disk_full_during_the_write_is_an_error(exact_fs, np_, tmp_path, built_backends):
    """The write itself fails with ENOSPC (ADIOS2's metadata on rank 0: it
    used to hang on 4 ranks in adios2_close): exit 1, one line naming it."""
    need("adios2", built_backends)
    r, took = timed(np_, [*FULL, "--backend", "adios2", "--dir", str(exact_fs)], tmp_path)
    assert r.rc == 1, (r.rc, r.err[-2000:])
    line = one_error_line(r)
    assert "No space left on device" in line or "ENOSPC" in line, line
    assert took < BOUND, took
    assert not r.records


def test_a_nearly_full_disk_after_the_write_is_no_error(tmp_path):
    """Free space alone is no verdict: a write that fits and leaves less
    than 1 MiB free (as a disk another process fills after the write) is a
    good run, verified; it used to end with "ENOSPC, the write most likely
    fell short"."""
    where = Path(tempfile.mkdtemp(prefix="iok-after-"))
    if os.geteuid() != 0 or not mount_tmpfs(where, "size=1m"):
        where.rmdir()
        missing("root", "cannot mount a tmpfs here")
    try:
        r = run(1, [*SMALL, "--backend", "mpiio", "--dir", str(where), "--verify"], tmp_path)
        assert r.rc == 0, r.err
        assert r.record["verify"]["ok"] is True
    finally:
        unmount(where)


@pytest.mark.parametrize("backend", BACKENDS)
def test_truncated_file_read_names_the_size(backend, tmp_path, built_backends):
    need(backend, built_backends)
    out = tmp_path / "out"
    out.mkdir()
    r = run(4, [*SMALL, "--backend", backend, "--dir", str(out)], tmp_path)
    assert r.rc == 0, r.err
    data = [p for p in out.rglob("*") if p.is_file() and p.stat().st_size > 4096]
    assert data, list(out.rglob("*"))
    biggest = max(data, key=lambda p: p.stat().st_size)
    os.truncate(biggest, biggest.stat().st_size // 2)
    args = [*SMALL, "--backend", backend, "--dir", str(out), "--mode", "read", "--verify"]
    r, took = timed(4, args, tmp_path)
    assert r.rc in (1, 2, 3), (r.rc, r.err[-2000:])
    line = one_error_line(r)
    assert "shorter" in line or "truncated" in line, line
    assert took < BOUND, took


def test_read_only_directory(tmp_path):
    where = Path(tempfile.mkdtemp(prefix="iok-ro-"))
    if os.geteuid() != 0 or not mount_tmpfs(where, "size=1m", "ro"):
        where.rmdir()
        missing("root", "cannot mount a read-only tmpfs here")
    try:
        r = run(4, [*SMALL, "--backend", "mpiio", "--dir", str(where)], tmp_path)
        assert r.rc == 2, r.err
        line = one_error_line(r)
        assert str(where) in line and "not writable" in line, line
    finally:
        unmount(where)


def test_rank_killed_mid_write_ends_the_job(tmp_path):
    """SIGKILL one rank while the job writes: the launcher ends the others."""
    args = ["btio", "--grid", "96,96,96", "--dumps", "40", "--backend", "mpiio"]
    cmd = [str(MPIEXEC), "-n", "4", str(BIN), *args, "--dir", str(tmp_path)]
    t0 = time.monotonic()
    job = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    victim = None
    while victim is None and time.monotonic() - t0 < 20:
        time.sleep(0.5)
        pids = ranks_of(job.pid)
        victim = pids[-1] if len(pids) == 4 else None
    assert victim, "the ranks did not start"
    time.sleep(1.0)
    kill_a_rank(job, victim, BOUND)


def test_a_failed_run_leaves_no_empty_json_file_of_its_own(tmp_path):
    """The --json file is opened before any I/O to fail early on a bad path;
    a run that then fails without a record removes the empty file it
    created, and never touches one that was there before, even empty."""
    bad = [*SMALL, "--backend", "mpiio", "--dir", str(tmp_path)]  # BTIO on 2 ranks: not a square
    for name, before in (("new.jsonl", None), ("theirs.jsonl", "x\n"), ("empty.jsonl", "")):
        path = tmp_path / name
        if before is not None:
            path.write_text(before)
        cmd = [str(MPIEXEC), "-n", "2", str(BIN), *bad, "--json", str(path)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=BOUND)
        assert p.returncode != 0 and "square number of processes" in p.stderr, p.stderr
        if before is None:
            assert not path.exists()
        else:
            assert path.read_text() == before
    # a run that succeeds keeps the file it created, with its record
    ok = tmp_path / "ok.jsonl"
    cmd = [str(MPIEXEC), "-n", "1", str(BIN), *bad, "--json", str(ok)]
    assert subprocess.run(cmd, capture_output=True, timeout=BOUND * 2).returncode == 0
    assert ok.read_text().count("\n") == 1


INJECTED_BOUND = 15  # seconds: a failure on one rank ends the 4-rank job within this


@pytest.mark.parametrize("phase", ["open", "define", "put", "wait", "close"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_call_failing_on_one_rank_ends_the_job(backend, phase, tmp_path, built_backends):
    """IOK_FAULT=PHASE:1 fails the backend's call on rank 1 without making it,
    while ranks 0, 2 and 3 may sit in the same collective call: the job ends
    (agreement timed out: MPI_Abort) with rank 1's line and exit 1."""
    need(backend, built_backends)
    env = {"IOK_FAULT": f"{phase}:1", "IOK_AGREE_SECONDS": "3"}
    t0 = time.monotonic()
    r = run(
        4,
        [*SMALL, "--backend", backend, "--dir", str(tmp_path)],
        tmp_path,
        env=env,
        timeout=INJECTED_BOUND * 4,
    )
    took = time.monotonic() - t0
    assert r.rc == 1, (r.rc, r.err[-2000:])
    line = one_error_line(r)
    assert f"the backend's {phase} of" in line and f"IOK_FAULT={phase}:1" in line, line
    assert took < INJECTED_BOUND, took
    assert not r.records


def test_a_malformed_fault_spec_is_a_usage_error(tmp_path):
    # mpiio: built with every MPI (the MPICH pass has no PnetCDF)
    args = [*SMALL, "--backend", "mpiio", "--dir", str(tmp_path)]
    r = run(1, args, tmp_path, env={"IOK_FAULT": "write:x"})
    assert r.rc == 2, r.err
    assert "IOK_FAULT=write:x: expected PHASE:RANK" in one_error_line(r)


@pytest.mark.parametrize(
    "args",
    [
        ["btio", "--deadline", "nan"],
        ["btio", "--deadline", "inf"],
        ["btio", "--deadline", "-inf"],
        ["abrgen", "--radius", "NaN"],
        ["abrgen", "--width", "infinity"],
    ],
    ids=lambda a: "-".join(a[1:]),
)
def test_non_finite_numbers_are_refused_naming_the_option(args, tmp_path):
    """strtod takes nan and inf: no option means either (--deadline nan
    was accepted and never stopped a pass)."""
    p = subprocess.run([str(BIN), *args], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert p.returncode == 2, p.stderr
    (line,) = [x for x in p.stderr.splitlines() if x.startswith("iokernels:")]
    assert f"{args[1]} takes a finite number, not '{args[2]}'" in line, line


def test_json_record_on_a_full_disk_names_the_errno(tmp_path):
    """The record's write fails with ENOSPC: the line says so (it used to
    say only "cannot write the JSON record to F")."""
    where = Path(tempfile.mkdtemp(prefix="iok-json-full-"))
    if os.geteuid() != 0 or not mount_tmpfs(where, "size=64k"):
        where.rmdir()
        missing("root", "cannot mount a tmpfs here")
    try:
        subprocess.run(
            ["dd", "if=/dev/zero", f"of={where / 'filler'}", "bs=4k"], capture_output=True
        )
        rec = where / "r.jsonl"
        cmd = [
            str(MPIEXEC),
            "-n",
            "1",
            str(BIN),
            *SMALL,
            "--backend",
            "mpiio",
            "--dir",
            str(tmp_path),
            "--json",
            str(rec),
        ]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=BOUND)
        assert p.returncode == 1, p.stderr
        (line,) = [x for x in p.stderr.splitlines() if x.startswith("iokernels:")]
        assert f"cannot write the JSON record to {rec} (No space left on device)" in line, line
        assert not rec.exists()  # the empty file it created is removed
    finally:
        unmount(where)


def test_an_output_path_that_is_a_folder_is_named(tmp_path):
    """Even with --overwrite (as root, the library said "Permission denied")."""
    (tmp_path / "btio.mpi").mkdir()
    r = run(1, [*SMALL, "--backend", "mpiio", "--dir", str(tmp_path), "--overwrite"], tmp_path)
    assert r.rc == 2, r.err
    line = one_error_line(r)
    assert f"output file {tmp_path}/btio.mpi is a folder: remove it or choose another" in line, line
    assert (tmp_path / "btio.mpi").is_dir()
