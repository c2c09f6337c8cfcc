# SPDX-License-Identifier: BSD-3-Clause
"""Writes lost in the middle of a file are never called completed (issue 49).

A shim (tests/shim/write_fault.c, LD_PRELOAD) makes the one write that
covers the middle byte of the output go wrong, beneath every library: it
fails with ENOSPC or EIO, comes up short, or is dropped while reporting
success. OpenMPI's OMPIO swallows a failed pwritev of a collective write
and returns success; a dropped write leaves a hole or zeros in the middle
of the file, which no check of the size or the ends can see. Whatever the
library says, the run ends with exit 1 and one line, its record is not
"completed", and the file it created is removed (--keep-partial keeps it).
"""

import json
import time

import pytest
from conftest import BIN, assert_ended_quickly, need, run

SHIM = BIN.parent / "libiok_write_fault.so"
BTIO = ["btio", "--grid", "32,32,32", "--dumps", "2"]
MODES = ["enospc", "eio", "short", "drop"]
# per backend: its paths (adios2 has no collective or independent call)
PATHS = {
    "mpiio": ["--collective", "--independent"],
    "pnetcdf": ["--collective", "--independent"],
    "hdf5": ["--collective", "--independent"],
    "netcdf4": ["--collective", "--independent"],
    "adios2": [],
}
CASES = [(b, p, m) for b, ps in PATHS.items() for p in (ps or [None]) for m in MODES]
_sizes = {}


def data_file(out):
    """The file that holds the data: the output, or the largest file of
    ADIOS2's folder."""
    if out.is_dir():
        return max((p for p in out.iterdir() if p.is_file()), key=lambda p: p.stat().st_size)
    return out


def output(d):
    outs = [p for p in d.iterdir() if p.name.startswith("btio")]
    return outs[0] if outs else None


def middle(backend, path, tmp_path_factory):
    """The middle byte of the data file a clean run of the case writes."""
    key = (backend, path)
    if key not in _sizes:
        d = tmp_path_factory.mktemp("clean")
        args = [*BTIO, "--backend", backend, "--dir", str(d), *([path] if path else [])]
        r = run(4, args, d)
        assert r.rc == 0, r.err[-2000:]
        f = data_file(output(d))
        _sizes[key] = (f.name, f.stat().st_size // 2)
    return _sizes[key]


def shim_env(name, at, mode, rank=None):
    assert SHIM.exists(), f"{SHIM} is missing: cmake --build build builds it"
    env = {
        "LD_PRELOAD": str(SHIM),
        "IOK_TEST_WFAULT_PATH": name,
        "IOK_TEST_WFAULT_AT": str(at),
        "IOK_TEST_WFAULT_MODE": mode,
    }
    if rank is not None:
        env["IOK_TEST_WFAULT_RANK"] = str(rank)
    return env


def records(d):
    f = d / "run.jsonl"
    return [json.loads(x) for x in f.read_text().splitlines()] if f.exists() else []


@pytest.mark.parametrize("backend,path,mode", CASES)
def test_a_write_gone_wrong_mid_file_is_never_completed(
    backend, path, mode, tmp_path, tmp_path_factory, built_backends
):
    need(backend, built_backends)
    name, at = middle(backend, path, tmp_path_factory)
    args = [*BTIO, "--backend", backend, "--dir", str(tmp_path), *([path] if path else [])]
    r = run(4, args, tmp_path, env=shim_env(name, at, mode))
    assert "write_fault: " in r.err, f"the shim never fired: {r.err[-2000:]}"
    if mode == "short" and r.rc == 0:
        # the library wrote the rest of a short write itself (POSIX allows
        # it; ADIOS2 and OMPIO loop): then the file must hold every value
        v = run(4, [*args, "--mode", "read", "--verify"], tmp_path, json_name="v.jsonl")
        assert v.rc == 0, f"a short write called completed lost data: {v.err[-2000:]}"
        return
    assert r.rc == 1, (r.rc, r.out[-1000:], r.err[-3000:])
    lines = r.error_lines()
    assert len(lines) == 1, r.err[-3000:]
    line = lines[0]
    found = ("does not hold what the write put there", "fewer than the", "short write")
    if mode in ("enospc", "eio") and not any(w in line for w in found):
        # a library call failed: its line names the call, and the system
        # error where the library left it to be read
        assert "failed" in line or "error" in line.split(":", 2)[-1].lower(), line
    else:
        assert any(w in line for w in (*found, "failed", "error")), line
    assert all(rec.get("status") != "completed" for rec in records(tmp_path)), records(tmp_path)
    assert output(tmp_path) is None, f"the failed run left {output(tmp_path)}"


def test_a_failed_write_names_the_system_error(tmp_path, tmp_path_factory, built_backends):
    """Where the library returns the failure (MPI-IO's independent write),
    the line names the errno the failing call left: ENOSPC, EIO."""
    name, at = middle("mpiio", "--independent", tmp_path_factory)
    args = [*BTIO, "--backend", "mpiio", "--independent", "--dir", str(tmp_path)]
    for mode, word in (("enospc", "ENOSPC"), ("eio", "EIO")):
        r = run(4, args, tmp_path, env=shim_env(name, at, mode))
        assert r.rc == 1, r.err[-2000:]
        assert word in r.error_line(rc=1), r.err[-2000:]


@pytest.mark.parametrize("backend", ["mpiio", "adios2"])
def test_keep_partial_keeps_what_a_failed_write_left(
    backend, tmp_path, tmp_path_factory, built_backends
):
    need(backend, built_backends)
    path = "--collective" if PATHS[backend] else None
    name, at = middle(backend, path, tmp_path_factory)
    args = [*BTIO, "--backend", backend, "--dir", str(tmp_path), "--keep-partial"]
    r = run(4, [*args, *([path] if path else [])], tmp_path, env=shim_env(name, at, "drop"))
    assert r.rc == 1, r.err[-2000:]
    assert output(tmp_path) is not None, "--keep-partial removed the output"


def test_a_file_the_run_did_not_create_is_never_removed(tmp_path, tmp_path_factory, built_backends):
    """With --overwrite over a file that was there, a failed write leaves it
    (truncated by the create, as the user asked, but never removed)."""
    name, at = middle("mpiio", "--collective", tmp_path_factory)
    (tmp_path / "btio.nc").write_bytes(b"not the run's")
    args = [*BTIO, "--backend", "mpiio", "--dir", str(tmp_path), "--overwrite"]
    r = run(4, args, tmp_path, env=shim_env(name, at, "drop"))
    assert r.rc == 1, r.err[-2000:]
    assert (tmp_path / "btio.nc").exists()


def test_one_ranks_enospc_inside_a_library_collective_ends_the_job(tmp_path, built_backends):
    """HDF5: the rank whose write failed left H5Dwrite before the library's
    own MPI_Allreduce, which its peer waits in; a phase barrier of the suite
    waited there for ever. Now the failing rank goes on to its bounded
    agreement and ends the job with its line."""
    need("hdf5", built_backends)
    gen = ["e3sm", "--backend", "hdf5", "-k", "--generate", "g:cells=4000,procs=2"]
    clean = tmp_path / "clean"
    clean.mkdir()
    r = run(2, [*gen, "-o", str(clean / "g.h5")], clean)
    assert r.rc == 0, r.err[-2000:]
    files = sorted(
        (p for p in clean.iterdir() if p.suffix == ".h5"), key=lambda p: p.stat().st_size
    )
    target = files[-1]
    bad = tmp_path / "bad"
    bad.mkdir()
    env = {**shim_env(target.name, target.stat().st_size // 2, "enospc", rank=1)}
    env["IOK_AGREE_SECONDS"] = "5"
    t0 = time.monotonic()
    r = run(2, [*gen, "-o", str(bad / "g.h5")], bad, env=env, timeout=300)
    assert_ended_quickly(t0, 2, 60)
    assert "write_fault: " in r.err, r.err[-2000:]
    assert r.rc == 1, (r.rc, r.err[-3000:])
    assert len(r.error_lines()) == 1, r.err[-3000:]
    assert "ENOSPC" in r.error_lines()[0], r.error_lines()


def test_the_shim_fires_only_where_it_is_asked(tmp_path, tmp_path_factory, built_backends):
    """The premise of the tests above: with the shim loaded but aimed past
    the file's end, the run completes (the shim itself changes nothing)."""
    name, at = middle("mpiio", "--collective", tmp_path_factory)
    args = [*BTIO, "--backend", "mpiio", "--dir", str(tmp_path), "--verify"]
    r = run(4, args, tmp_path, env=shim_env(name, 4 * at + 1000, "enospc"))
    assert r.rc == 0, r.err[-2000:]
    assert "write_fault: " not in r.err
    assert records(tmp_path)[-1]["status"] == "completed"
