# SPDX-License-Identifier: BSD-3-Clause
"""A run writes nothing outside its folder: not in TMPDIR, not in the
system's /tmp (ADIOS2 2.12's BP5 reader left /tmp/<name>_<pid>_profiling.json
after every read: the verify read, the sample read after a write), not in
/dev/shm, not beside the output. Each run's output name carries a token of
its own, so that what other jobs on the machine put in /tmp meanwhile does
not count; TMPDIR is a fresh folder that must be empty afterwards."""

import os
import uuid
from pathlib import Path

import pytest
from conftest import need, run

BACKENDS = ["mpiio", "pnetcdf", "hdf5", "netcdf4", "adios2", "null"]
SYSTEM_DIRS = [Path("/tmp"), Path("/dev/shm")]


def listing():
    return {d: set(os.listdir(d)) for d in SYSTEM_DIRS if d.is_dir()}


def run_alone(np_, args, tmp_path, token):
    """The job in an empty folder `run` with TMPDIR an empty folder `tmpdir`
    (the record beside both); asserts that nothing is left outside `run`
    and returns the job and what `run` holds."""
    cwd, tmpdir = tmp_path / "run", tmp_path / "tmpdir"
    cwd.mkdir()
    tmpdir.mkdir()
    before = listing()
    r = run(np_, args, cwd, json_name="../rec.jsonl", env={"TMPDIR": str(tmpdir)})
    after = listing()
    assert r.rc == 0, r.err[-3000:]
    new = {str(d / n) for d in after for n in after[d] - before.get(d, set()) if token in n}
    assert not new, f"left outside the run's folder: {sorted(new)}"
    assert not list(tmpdir.iterdir()), f"left in TMPDIR: {list(tmpdir.iterdir())}"
    return r, sorted(p.name for p in cwd.iterdir())


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_write_and_its_verify_leave_nothing_outside(backend, tmp_path, built_backends):
    need(backend, built_backends)
    token = f"iokout{uuid.uuid4().hex[:10]}"
    args = ["ncbench", "-d", "2:8:8:2", "-f", token, "--backend", backend, "--mode", "both"]
    if backend != "null":  # the null backend moves no data to check
        args.append("--verify")
    r, names = run_alone(2, args, tmp_path, token)
    assert {p["op"] for p in r.record["passes"]} >= {"write", "read"}
    assert names == ([] if backend == "null" else [token]), names


def test_a_replay_on_adios2_leaves_nothing_outside(tmp_path, built_backends):
    """The replay names its files after the traced paths, flattened: the
    token is in the traced path."""
    need("adios2", built_backends)
    token = f"iokout{uuid.uuid4().hex[:10]}"
    trace = tmp_path / "t.replay"
    trace.write_text(
        "iokernels-replay 1\nranks 2\n"
        f"file 0 8192 /scratch/{token}/out.dat\n"
        "op 0 0 write coll 0.0 0.1 1 0 4096\nop 1 0 write coll 0.0 0.1 1 4096 4096\n"
        "op 0 0 read coll 0.2 0.3 1 4096 4096\nop 1 0 read coll 0.2 0.3 1 0 4096\n"
    )
    args = ["replay", str(trace), "--backend", "adios2", "--verify"]
    r, names = run_alone(2, args, tmp_path, token)
    assert names == [f"scratch_{token}_out.dat.adios2"], names


def test_adios2_profiles_stay_when_asked_for(tmp_path, built_backends):
    """--adios2-params Profile=On keeps each reading process's profile where
    ADIOS2 puts it (docs/backends.md), and the writer's in the dataset."""
    need("adios2", built_backends)
    token = f"iokprof{uuid.uuid4().hex[:10]}"
    args = ["ncbench", "-d", "2:8:8:2", "-f", token, "--backend", "adios2", "--mode", "both"]
    args.append("--verify")
    r = run(2, [*args, "--adios2-params", "Profile=On"], tmp_path)
    kept = sorted(Path("/tmp").glob(f"{token}_*_profiling.json"))
    sizes = [p.stat().st_size for p in kept]
    for p in kept:
        p.unlink()
    assert r.rc == 0, r.err[-3000:]
    assert kept and all(sizes), (kept, sizes)
    assert (tmp_path / token / "profiling.json").is_file()
