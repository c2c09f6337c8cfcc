# SPDX-License-Identifier: BSD-3-Clause
"""The fault matrix: every kernel and every backend, on 1 and 4 ranks, against
the faults a user meets: a folder where a file should be, a truncated file,
another backend's file, an absurd size, a killed rank, SIGTERM to mpiexec, a
full disk and a read-only folder. Each case expects its exit code, the key
words of its one error line and a time bound (no hang), and leaves no empty
--json file behind. The full product (8 x 5 x 5 x 2) would take far more than
the 5 minutes this file may take on 2 cores: each fault kind runs over every
kernel, with the backends and rank counts rotated so that each kind also
meets every backend and both rank counts."""

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from conftest import (
    BIN,
    DEFAULT_KILL_ENV,
    MPIEXEC,
    SHIPPED,
    assert_ended_quickly,
    check_record,
    kill_a_rank,
    need,
    ranks_of,
    unmount,
)
from declared import missing

KERNELS = ["btio", "ncbench", "amrex", "chombo", "e3sm"]
BACKENDS = ["mpiio", "pnetcdf", "hdf5", "netcdf4", "adios2"]
EXT = {"mpiio": ".mpi", "pnetcdf": ".nc", "hdf5": ".h5", "netcdf4": ".nc4", "adios2": ".adios2"}
BOUND = 30  # seconds: every case's job ends within this
G_MAP = SHIPPED / "e3sm" / "map_g_case_16p.nc"


def kernel_args(kernel, d):
    """Tiny runs of each kernel writing into folder d (chombo writes in its cwd)."""
    return {
        "btio": ["btio", "--grid", "16,16,16", "--dumps", "2", "--dir", str(d)],
        "ncbench": ["ncbench", "-d", "4:64:64:16", "-f", str(d / "t")],
        "amrex": ["amrex", "--ncells", "32", "--max_grid_size", "16", "--ncomp", "2"]
        + ["--dir", str(d)],
        "chombo": ["chombo", "--ncomp", "2", "--overwrite"],
        "e3sm": ["e3sm", str(G_MAP), "-o", str(d / "g.nc"), "-k"],
    }[kernel]


def absurd_args(kernel, d):
    """Sizes no disk holds (or no format addresses): refused before any file."""
    return {
        "btio": ["btio", "--grid", "100000,100000,100000", "--dir", str(d)],
        "ncbench": ["ncbench", "-d", "100000:100000:100000:10", "-f", str(d / "t")],
        "amrex": ["amrex", "--ncells", "100000", "--max_grid_size", "64", "--dir", str(d)],
        "chombo": ["chombo", "--ncomp", "100000000"],
        "e3sm": ["e3sm", str(G_MAP), "-o", str(d / "g.nc"), "-r", "100000000"],
    }[kernel]


def absurd_words(kernel):
    return {
        "amrex": ["boxes per level", "raise max_grid_size"],
        "chombo": ["--ncomp takes 1 to", "not '100000000'"],
    }.get(kernel, ["needs", "bytes of data", "free in"])


class Job:
    def __init__(self, rc, out, err, took, json_path=None):
        self.rc, self.out, self.err, self.took = rc, out, err, took
        self.records = []
        if json_path and json_path.exists() and json_path.stat().st_size:
            self.records = [json.loads(x) for x in json_path.read_text().splitlines()]
        for r in self.records:
            check_record(r)

    def lines(self):
        return [x for x in self.err.splitlines() if x.startswith("iokernels:")]

    def one_line(self):
        lines = self.lines()
        assert len(lines) == 1, (self.rc, self.err[-3000:])
        return lines[0]


def launch(np_, args, cwd, json_path, env=None):
    """The job in the background, under mpiexec's own kill timeout (a rank's
    SIGTERM handler has its second before SIGKILL, as for a user); `env`:
    variables added to its environment."""
    cmd = [str(MPIEXEC), "-n", str(np_), str(BIN), *args, "--json", str(json_path)]
    return subprocess.Popen(
        cmd,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**DEFAULT_KILL_ENV, **(env or {})},
    )


def job(np_, args, cwd, json_path, bound=BOUND, env=None):
    """One job under a time bound: a job still running after it fails the test (a hang)."""
    t0 = time.monotonic()
    p = launch(np_, args, cwd, json_path, env)
    try:
        out, err = p.communicate(timeout=bound)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail(f"no end within {bound} s (a hang): {args} {env or ''}")
    return Job(p.returncode, out, err, time.monotonic() - t0, json_path)


def outputs(d):
    """What a write left in d: data files and ADIOS2 folders, not reports."""
    skip = {".jsonl", ".txt"}
    return sorted(p for p in d.iterdir() if p.suffix not in skip)


def no_empty_json(*dirs):
    for d in dirs:
        for p in Path(d).rglob("*.jsonl"):
            assert p.stat().st_size > 0, f"empty --json file left: {p}"


def write_ok(kernel, backend, np_, d, rec):
    r = job(np_, [*kernel_args(kernel, d), "--backend", backend], d, rec)
    assert r.rc == 0, (kernel, backend, np_, r.err[-3000:])
    files = outputs(d)
    assert files, list(d.iterdir())
    return max(files, key=lambda p: p.stat().st_size if p.is_file() else 1 << 62)


def rotate(shift):
    """Case i: kernel i, backend (i + shift) mod 5, 1 or 4 ranks alternating."""
    return [
        (k, BACKENDS[(i + shift) % len(BACKENDS)], (1, 4)[(i + shift) % 2])
        for i, k in enumerate(KERNELS)
    ]


@pytest.fixture
def work(tmp_path, built_backends):
    d = tmp_path / "d"
    d.mkdir()
    yield d, tmp_path / "rec.jsonl"
    no_empty_json(tmp_path)


@pytest.mark.parametrize("kernel,backend,np_", rotate(0))
def test_folder_where_the_file_should_be(kernel, backend, np_, work, built_backends):
    need(backend, built_backends)
    d, rec = work
    data = write_ok(kernel, backend, np_, d, rec)
    subprocess.run(["rm", "-rf", str(data)], check=True)
    data.mkdir()
    r = job(np_, [*kernel_args(kernel, d), "--backend", backend, "--mode", "read"], d, rec)
    assert r.rc == 2, (r.rc, r.err[-3000:])
    line = r.one_line()
    assert f"{data.name} is a folder" in line, line
    assert r.took < BOUND


@pytest.mark.parametrize("kernel,backend,np_", rotate(1))
def test_truncated_file_is_refused_without_verify(kernel, backend, np_, work, built_backends):
    need(backend, built_backends)
    d, rec = work
    data = write_ok(kernel, backend, np_, d, rec)
    if data.is_dir():  # ADIOS2: its largest data subfile
        data = max(data.glob("data.*"), key=lambda p: p.stat().st_size)
    os.truncate(data, data.stat().st_size // 2)
    r = job(np_, [*kernel_args(kernel, d), "--backend", backend, "--mode", "read"], d, rec)
    assert r.rc in (1, 2), (r.rc, r.err[-3000:])
    line = r.one_line()
    assert "truncated" in line or "shorter" in line, line
    assert r.took < BOUND
    assert not any(x.get("status") == "completed" for x in r.records[1:])


# another backend's file at the path the reader opens: names stay predictable
OTHER = [
    ("btio", "pnetcdf", "hdf5", 4),
    ("ncbench", "hdf5", "pnetcdf", 1),
    ("e3sm", "netcdf4", "adios2", 4),
    ("amrex", "adios2", "netcdf4", 1),
    ("btio", "mpiio", "netcdf4", 1),
    ("ncbench", "pnetcdf", "mpiio", 4),
]


@pytest.mark.parametrize("kernel,wrote,reads,np_", OTHER)
def test_another_backends_file_is_named(kernel, wrote, reads, np_, work, built_backends):
    need(wrote, built_backends)
    need(reads, built_backends)
    d, rec = work
    data = write_ok(kernel, wrote, np_, d, rec)
    if data.suffix == EXT[wrote]:  # btio.nc -> btio.h5: where the reader looks
        data.rename(data.with_suffix(EXT[reads]))
    r = job(np_, [*kernel_args(kernel, d), "--backend", reads, "--mode", "read"], d, rec)
    assert r.rc == 2, (r.rc, r.err[-3000:])
    line = r.one_line()
    if reads == "mpiio":  # a raw file has no signature: its size tells
        assert "longer than its layout" in line or "shorter" in line, line
    else:
        assert " is a" in line and ", not a" in line, line
    assert r.took < BOUND


@pytest.mark.parametrize("kernel,backend,np_", rotate(2))
def test_absurd_size_is_refused_before_any_file(kernel, backend, np_, work, built_backends):
    need(backend, built_backends)
    d, rec = work
    r = job(np_, [*absurd_args(kernel, d), "--backend", backend], d, rec)
    assert r.rc == 2, (r.rc, r.err[-3000:])
    line = r.one_line()
    assert all(w in line for w in absurd_words(kernel)), line
    assert not outputs(d), list(d.iterdir())
    assert r.took < BOUND


def long_args(kernel, d):
    """Runs long enough (several seconds) to be hit mid-write."""
    return {
        "btio": ["btio", "--grid", "64,64,64", "--dumps", "400", "--dir", str(d)],
        "ncbench": ["ncbench", "-d", "4000:64:64:64", "-f", str(d / "t")],
    }[kernel]


def started(p, n, d, timeout=20):
    """Waits until the job's n ranks run and its output exists."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if len(ranks_of(p.pid)) == n and outputs(d):
            time.sleep(0.5)
            return ranks_of(p.pid)
        time.sleep(0.2)
    p.kill()
    pytest.fail("the job did not start writing")


@pytest.mark.parametrize("kernel,backend", [("btio", "hdf5"), ("ncbench", "pnetcdf")])
def test_killed_rank_ends_the_job(kernel, backend, work, built_backends):
    need(backend, built_backends)
    d, rec = work
    p = launch(4, [*long_args(kernel, d), "--backend", backend], d, rec)
    pids = started(p, 4, d)
    kill_a_rank(p, pids[-1], BOUND)
    assert not rec.exists() or rec.stat().st_size > 0


@pytest.mark.parametrize(
    "kernel,backend,np_", [("btio", "mpiio", 4), ("btio", "adios2", 1), ("ncbench", "netcdf4", 4)]
)
def test_sigterm_to_mpiexec(kernel, backend, np_, work, built_backends):
    """What Slurm sends at a time limit: one line naming the write, the
    partial output removed, the record says "terminated"."""
    need(backend, built_backends)
    d, rec = work
    p = launch(np_, [*long_args(kernel, d), "--backend", backend], d, rec)
    started(p, np_, d)
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=BOUND)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail(f"the job still ran {BOUND} s after SIGTERM")
    assert_ended_quickly(t0, np_, 10)
    assert p.returncode != 0
    lines = [x for x in err.splitlines() if x.startswith("iokernels:")]
    assert len(lines) == 1 and "terminated by SIGTERM during the write of" in lines[0], err
    assert "partial output is removed" in lines[0], lines
    assert not outputs(d), list(d.iterdir())
    records = [json.loads(x) for x in rec.read_text().splitlines()]
    assert records[-1]["status"] == "terminated" and records[-1]["exit_code"] == 143
    assert records[-1]["signal"] == "SIGTERM"
    check_record(records[-1])


def mount(where, *opts):
    where.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["mount", *opts, str(where)], capture_output=True, text=True)
    return p.returncode == 0


@pytest.fixture
def full_disk():
    where = Path(tempfile.mkdtemp(prefix="iok-matrix-full-"))
    if os.geteuid() != 0 or not mount(where, "-t", "tmpfs", "-o", "size=64k", "tmpfs"):
        where.rmdir()
        missing("root", "cannot mount a tmpfs here")
    yield where
    unmount(where)


def refused_in(kernel, backend, np_, where, rec):
    """A tiny run writing into `where` that must be refused with exit 2 and
    one line, leaving no --json file: that line, and the folder it should
    name (chombo writes in its cwd)."""
    r = job(np_, [*kernel_args(kernel, where), "--backend", backend], where, rec)
    assert r.rc == 2, (r.rc, r.err[-3000:])
    assert not rec.exists()
    return r.one_line(), ("." if kernel == "chombo" else str(where))


@pytest.mark.parametrize("kernel,backend,np_", rotate(3))
def test_full_disk_is_refused_before_any_file(
    kernel, backend, np_, full_disk, tmp_path, built_backends
):
    need(backend, built_backends)
    line, where = refused_in(kernel, backend, np_, full_disk, tmp_path / "rec.jsonl")
    assert "bytes of data, more than the" in line and f"free in {where}" in line, line
    assert not list(full_disk.iterdir())


@pytest.fixture
def read_only(tmp_path):
    where = tmp_path / "ro"
    where.mkdir()
    if os.geteuid() != 0 or not mount(where, "--bind", str(where)):
        missing("root", "cannot bind-mount here")
    if not mount(where, "-o", "remount,ro,bind"):
        subprocess.run(["umount", str(where)], check=False)
        missing("root", "cannot remount read-only here")
    yield where
    unmount(where, remove=False)


@pytest.mark.parametrize("kernel,backend,np_", rotate(4))
def test_read_only_folder(kernel, backend, np_, read_only, tmp_path, built_backends):
    need(backend, built_backends)
    line, where = refused_in(kernel, backend, np_, read_only, tmp_path / "rec.jsonl")
    assert "not writable" in line and where in line, line
