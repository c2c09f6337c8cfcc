# SPDX-License-Identifier: BSD-3-Clause
"""An unusable TMPDIR (missing, not a folder, read-only) is one line naming
it, exit 2, before MPI_Init reads it: nothing created, not even the missing
folder, which MPI_Init used to create and leave (a read-only one gave some
50 lines of OpenMPI's and none of the suite's). It matters where each
process starts MPI itself: a process started alone, or by srun; OpenMPI's
mpiexec meets TMPDIR before any rank starts, so these jobs set it for the
ranks only."""

import os
import subprocess

import pytest
from conftest import BIN, MPIEXEC, run
from test_fault_matrix import read_only  # noqa: F401 (a fixture)

ARGS = ["ncbench", "-d", "2:8:8:2", "-f", "tt", "--backend", "mpiio"]


def alone(tmpdir, cwd):
    """iokernels started without a launcher, as a user may."""
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    return subprocess.run(
        [str(BIN), *ARGS], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def ranks_only(np_, tmpdir, cwd):
    """A job whose ranks, not its launcher, have TMPDIR."""
    wrap = ["sh", "-c", f'TMPDIR="{tmpdir}" exec "$0" "$@"']
    cmd = [str(MPIEXEC), "-n", str(np_), *wrap, str(BIN), *ARGS]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60)


def one_line(p):
    lines = [x for x in p.stderr.splitlines() if x.startswith("iokernels:")]
    assert p.returncode == 2 and len(lines) == 1, (p.returncode, p.stderr[-3000:])
    return lines[0]


@pytest.fixture
def cwd(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    return d


def test_a_missing_tmpdir_is_named_and_not_created(tmp_path, cwd):
    where = tmp_path / "no-such"
    line = one_line(alone(where, cwd))
    assert f"TMPDIR={where}: No such file or directory" in line, line
    assert "create that folder" in line, line
    assert not where.exists() and not list(cwd.iterdir())


def test_a_tmpdir_that_is_a_file_is_named(tmp_path, cwd):
    where = tmp_path / "a-file"
    where.write_text("not a folder\n")
    line = one_line(alone(where, cwd))
    assert f"TMPDIR={where} is not a folder" in line, line
    assert not list(cwd.iterdir())


def test_a_read_only_tmpdir_is_named(read_only, cwd):  # noqa: F811
    line = one_line(alone(read_only, cwd))
    assert f"TMPDIR={read_only} is not writable (Read-only file system)" in line, line
    assert not list(read_only.iterdir()) and not list(cwd.iterdir())


def test_the_ranks_tmpdir_is_named_once(read_only, cwd):  # noqa: F811
    """Two ranks meet it: one line, from the first."""
    line = one_line(ranks_only(2, read_only, cwd))
    assert f"TMPDIR={read_only} is not writable" in line, line
    assert not list(cwd.iterdir())


def test_a_usable_tmpdir_runs(tmp_path, cwd):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    r = run(2, ARGS, cwd, json_name="../r.jsonl", env={"TMPDIR": str(fresh)})
    assert r.rc == 0 and not r.error_lines(), r.err[-2000:]
    assert (cwd / "tt").is_file() and not list(fresh.iterdir())
