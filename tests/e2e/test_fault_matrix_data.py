# SPDX-License-Identifier: BSD-3-Clause
"""The fault matrix, issue 44's classes: data that never reached the file,
a collective buffer the MPI library mishandles, two runs creating one file
at once, a failure on rank 0 in any phase (no hang), and a small stack.
Each case expects its exit code, its line and a time bound; the whole file
takes about two minutes on 2 cores."""

import os
import subprocess

import pytest
from conftest import BIN, DEFAULT_KILL_ENV, MPIEXEC, need
from test_fault_matrix import BACKENDS, BOUND, KERNELS, job, kernel_args, outputs, rotate


@pytest.fixture
def work(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    return d, tmp_path / "rec.jsonl"


def verify_args(kernel):
    """Write, then read back: NetCDF-Bench's --verify alone checks an
    existing file (its original's way), -w makes it write first."""
    return (["-w"] if kernel == "ncbench" else []) + ["--verify"]


# --- data not in the file -------------------------------------------------


@pytest.mark.parametrize("verify", [False, True])
@pytest.mark.parametrize("kernel,backend,np_", rotate(3))
def test_data_not_in_the_file_is_exit_1(kernel, backend, np_, verify, work, built_backends):
    """IOK_FAULT=written:R overwrites the closed file with NUL bytes before
    the check after the write (what OMPIO with a 1-byte collective buffer
    left: every call said success). Exit 1 naming the file, never
    "completed", never a record, the file removed; with --verify still 1
    (the write's), not 2 ("not an HDF5 file: write it first")."""
    need(backend, built_backends)
    d, rec = work
    more = verify_args(kernel) if verify else []
    args = [*kernel_args(kernel, d), "--backend", backend, *more]
    clean = d.parent / "clean"  # the file names a good run of the case writes
    clean.mkdir()
    good = job(np_, [*kernel_args(kernel, clean), "--backend", backend], clean, clean / "r.jsonl")
    assert good.rc == 0, good.err[-3000:]
    names = [p.name for p in outputs(clean)]
    r = job(np_, args, d, rec, env={"IOK_FAULT": f"written:{np_ - 1}"})
    assert r.rc == 1, (r.rc, r.err[-3000:])
    line = r.one_line()
    assert any(n in line for n in names), (line, names)
    # the failed write's file, the run's own, is removed (--keep-partial keeps it)
    assert not outputs(d), outputs(d)
    if backend == "mpiio":  # no signature: the values read back tell
        assert "does not hold what the write put there" in line and "reads 0" in line, line
    else:
        assert "after the write" in line and "did not reach" in line, line
    assert not r.records and "completed" not in r.out.lower()
    assert r.took < BOUND


def test_a_good_write_passes_the_check(work, built_backends):
    """The same run without the fault: exit 0 (the check can pass)."""
    d, rec = work
    r = job(4, [*kernel_args("btio", d), "--backend", "mpiio"], d, rec)
    assert r.rc == 0, r.err[-3000:]
    assert r.records and r.records[0]["status"] == "completed"


@pytest.mark.parametrize(
    "backend,hint,words",
    [
        ("hdf5", "cb_buffer_size=1", "is below 4096 bytes"),
        ("netcdf4", "cb_buffer_size=0", "is below 4096 bytes"),
        ("mpiio", "cb_buffer_size=1k", "not a whole number of bytes"),
        ("pnetcdf", "cb_buffer_size=junk", "not a whole number of bytes"),
    ],
)
def test_a_collective_buffer_the_library_mishandles_is_refused(
    backend, hint, words, work, built_backends
):
    """OMPIO writes nothing with a 0 or 1 byte collective buffer and says
    success; the libraries read "1k" as 1 and "junk" as 0: exit 2, one line
    naming the hint, no file created."""
    need(backend, built_backends)
    d, rec = work
    args = [*kernel_args("btio", d), "--backend", backend, "--hints", hint]
    r = job(4, args, d, rec)
    assert r.rc == 2, (r.rc, r.err[-3000:])
    line = r.one_line()
    assert f"--hints: {hint} " in line and words in line, line
    assert not outputs(d) and r.took < BOUND


def test_ompios_own_buffer_variable_is_checked(work, built_backends):
    need("hdf5", built_backends)
    d, rec = work
    args = [*kernel_args("btio", d), "--backend", "hdf5"]
    r = job(4, args, d, rec, env={"OMPI_MCA_io_ompio_bytes_per_agg": "junk"})
    assert r.rc == 2, (r.rc, r.err[-3000:])
    assert "OMPI_MCA_io_ompio_bytes_per_agg=junk is not a whole number" in r.one_line()
    assert not outputs(d)


# --- concurrent creators --------------------------------------------------


def test_two_runs_started_together_one_writes(tmp_path, built_backends):
    """Ten pairs started at once without --overwrite (the backends in turn):
    each time exactly one exits 0, the other exits 2 "exists", and the file
    left reads back and verifies (it used to be both 0 and a mix)."""
    built = [b for b in BACKENDS if b in built_backends]
    for i in range(10):
        backend = built[i % len(built)]
        d = tmp_path / f"pair{i}"
        d.mkdir()
        args = [*kernel_args("btio", d), "--backend", backend]
        cmd = [str(MPIEXEC), "-n", "1", str(BIN), *args]
        procs = [
            subprocess.Popen(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        ends = [p.communicate(timeout=BOUND) for p in procs]
        rcs = sorted(p.returncode for p in procs)
        assert rcs == [0, 2], (backend, rcs, [e[1][-2000:] for e in ends])
        loser = next(e[1] for p, e in zip(procs, ends, strict=True) if p.returncode == 2)
        (line,) = [x for x in loser.splitlines() if x.startswith("iokernels:")]
        assert "exists: pass --overwrite" in line, line
        check = job(1, [*args, "--mode", "read", "--verify"], d, tmp_path / f"v{i}.jsonl")
        assert check.rc == 0, (backend, check.err[-3000:])
        assert check.records[0]["verify"]["ok"] is True


# --- a failure on rank 0, in every phase ----------------------------------

RANK0 = [("open", b, n) for n in (2, 4) for b in BACKENDS] + [
    (phase, BACKENDS[i % len(BACKENDS)], 4)
    for i, phase in enumerate(["define", "put", "wait", "close"])
]


@pytest.mark.parametrize("phase,backend,np_", RANK0)
def test_a_failure_on_rank_0_ends_the_job(phase, backend, np_, work, built_backends):
    """IOK_FAULT=open:0 on mpiio, hdf5 and netcdf4 hung ("NBC_Progress: an
    error 15"): the agreement met the others' collective open on the same
    communicator. Every phase on rank 0 ends within IOK_AGREE_SECONDS."""
    need(backend, built_backends)
    d, rec = work
    args = ["ncbench", "-d", "4:32:32:8", "-f", str(d / "t"), "--backend", backend]
    env = {"IOK_FAULT": f"{phase}:0", "IOK_AGREE_SECONDS": "3"}
    r = job(np_, args, d, rec, env=env)
    assert r.rc == 1, (r.rc, r.err[-3000:])
    assert f"IOK_FAULT={phase}:0" in r.one_line()
    assert "NBC_Progress" not in r.err
    assert r.took < BOUND
    if phase == "open":  # the file it claimed is not left behind for a rerun
        assert not outputs(d), outputs(d)


# --- a small stack ----------------------------------------------------------


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_kernel_runs_with_a_256k_stack(kernel, work, built_backends):
    """struct iok_plan (290 KB) lived on the stack: every kernel, --help
    included, crashed under `ulimit -s 256`."""
    d, rec = work
    backend = BACKENDS[KERNELS.index(kernel)]
    need(backend, built_backends)
    small = 'ulimit -s 256 && exec "$@"'
    p = subprocess.run(
        ["bash", "-c", small, "-", str(BIN), kernel, "--help"],
        cwd=d,
        capture_output=True,
        text=True,
        timeout=BOUND,
    )
    assert p.returncode == 0 and "usage: iokernels" in p.stdout, (p.returncode, p.stderr)
    args = [*kernel_args(kernel, d), "--backend", backend, *verify_args(kernel), "--json", str(rec)]
    p = subprocess.run(
        ["bash", "-c", small, "-", str(MPIEXEC), "-n", "1", str(BIN), *args],
        cwd=d,
        capture_output=True,
        text=True,
        timeout=BOUND,
        env=DEFAULT_KILL_ENV,
    )
    assert p.returncode == 0, (p.returncode, p.stderr[-3000:])
    assert os.path.getsize(rec) > 0
