# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for end-to-end tests: run the built iokernels under mpiexec."""

import functools
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

# Skips are failures unless declared (tests/declared.py): registered once
# per session, whichever of the three test trees' conftests comes first.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
import declared  # noqa: E402
import mpi_startup  # noqa: E402
from declared import missing  # noqa: E402

mpi_startup.choose_pml()  # ob1 unless asked otherwise (tests/mpi_startup.py)


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("iok_declared"):
        config.pluginmanager.register(declared, "iok_declared")


REPO = Path(__file__).resolve().parents[2]
# Reference data of the originals, copied into the project (tests/data/README.md)
TESTDATA = REPO / "tests" / "data"
# What the suite ships (E3SM maps and schemas), also the originals' files verbatim
SHIPPED = REPO / "data"
BIN = Path(os.environ.get("IOK_BIN", REPO / "build" / "iokernels")).resolve()
MPIEXEC = REPO / "scripts" / "mpiexec.sh"
# OpenMPI's mpiexec ends a job one of whose ranks exited non-zero with
# SIGCONT, SIGTERM and SIGKILL, waiting odls_base_sigkill_timeout (1 s) twice:
# 2 s per refused run, about 280 s of this suite (843 s against 564 s). The
# tests of what ranks do on SIGTERM run with the default (DEFAULT_KILL_ENV).
SIGKILL_TIMEOUT = "OMPI_MCA_odls_base_sigkill_timeout"
os.environ.setdefault(SIGKILL_TIMEOUT, "0")
DEFAULT_KILL_ENV = {k: v for k, v in os.environ.items() if k != SIGKILL_TIMEOUT}
# Every record any e2e run writes is checked against the schema shipped in the repo
RECORD_SCHEMA = json.loads((REPO / "schema" / "record.schema.json").read_text())
RECORD_VALIDATOR = jsonschema.Draft202012Validator(RECORD_SCHEMA)


def unmount(where, remove=True):
    """Unmounts a test's file system (and removes its mount point): ranks of a
    job that just ended may still be exiting with files open there (MPICH's
    hydra returns once it has signalled the ranks an abort kills), so up to
    5 s of retries, then a lazy unmount."""
    for _ in range(25):
        if subprocess.run(["umount", str(where)], capture_output=True).returncode == 0:
            break
        time.sleep(0.2)
    else:
        subprocess.run(["umount", "-l", str(where)], check=False)
    if remove:
        where.rmdir()


def need(backend, built):
    """Passes over (as a declared skip) a case whose backend this build lacks."""
    if backend not in built:
        missing(backend, "backend not built")


def ranks_of(pid):
    """The iokernels processes under `pid`: OpenMPI's mpiexec starts them
    itself, MPICH's hydra through a proxy (hydra_pmi_proxy)."""
    found, todo = [], [pid]
    while todo:
        p = subprocess.run(["pgrep", "-P", str(todo.pop())], capture_output=True, text=True)
        for child in map(int, p.stdout.split()):
            todo.append(child)
            comm = Path(f"/proc/{child}/comm")
            if comm.exists() and comm.read_text().strip() == "iokernels":
                found.append(child)
    return sorted(found)


def kill_a_rank(job, rank_pid, bound):
    """SIGKILLs one rank of a running job (a Popen): the launcher must end
    the others within `bound` seconds, and the job must not exit 0."""
    os.kill(rank_pid, signal.SIGKILL)
    try:
        job.communicate(timeout=bound)
    except subprocess.TimeoutExpired:
        job.kill()
        job.communicate()
        pytest.fail(f"the job still ran {bound} s after a rank was killed")
    assert job.returncode != 0


def assert_mpich_romio(r):
    """A run under MPICH: its MPI-IO is ROMIO, its only one, named with
    MPICH's version in the record and in the report's line."""
    env = r.record["environment"]
    version = re.match(r"MPICH Version:\s+(\S+)", env["mpi_library_version"]).group(1)
    assert env["mpiio_layer"] == {
        "mpi": f"MPICH {version}",
        "io_component": "romio",
        "settings": {"ROMIO_HINTS": ""},
    }, env["mpiio_layer"]
    assert f"MPI-IO layer             : MPICH {version} ROMIO\n" in r.out


def check_record(record):
    """Fails with every schema violation of one JSON record, path by path."""
    errors = sorted(RECORD_VALIDATOR.iter_errors(record), key=lambda e: list(e.path))
    assert not errors, "JSON record violates schema/record.schema.json:\n" + "\n".join(
        f"  {'/'.join(map(str, e.path)) or '(top)'}: {e.message}" for e in errors[:20]
    )


class Run:
    """One finished mpiexec job: exit code, output, and its JSON records."""

    def __init__(self, proc, json_path):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr
        self.records = []
        if json_path and json_path.exists():
            self.records = [json.loads(line) for line in json_path.read_text().splitlines()]
        for r in self.records:
            check_record(r)

    @property
    def record(self):
        assert self.records, f"no JSON record; rc={self.rc}\n{self.out}\n{self.err}"
        return self.records[-1]

    def error_lines(self):
        return [line for line in self.err.splitlines() if line.startswith("iokernels:")]

    def error_line(self, rc=2):
        """The one `iokernels:` line of a run that must exit rc."""
        assert self.rc == rc, (self.rc, self.out, self.err)
        errs = self.error_lines()
        assert len(errs) == 1, self.err
        return errs[0]


def run(np_, args, cwd, timeout=120, json_name="run.jsonl", env=None, binary=BIN):
    """Runs `iokernels ARGS` on np_ ranks in cwd; appends its JSON record.
    `env`: variables added to the environment; `binary`: another iokernels."""
    json_path = Path(cwd) / json_name
    if json_path.exists():
        json_path.unlink()
    cmd = [str(MPIEXEC), "-n", str(np_), str(binary), *args, "--json", str(json_path)]
    full_env = {**os.environ, **env} if env else None
    proc = subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=full_env
    )
    return Run(proc, json_path)


def run_plain(np_, args, cwd, timeout=60):
    """Runs without adding --json (for bad-input tests)."""
    cmd = [str(MPIEXEC), "-n", str(np_), str(BIN), *args]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return Run(proc, None)


def _empty_job_seconds(np_):
    """What an empty np_-rank job (MPI start, `iokernels --version`, MPI end)
    takes on this machine right now."""
    t0 = time.monotonic()
    subprocess.run(
        [str(MPIEXEC), "-n", str(np_), str(BIN), "--version"], capture_output=True, timeout=300
    )
    return time.monotonic() - t0


def assert_ended_quickly(t0, np_, bound):
    """The no-hang check of a job started at t0 (time.monotonic()): it ended
    within `bound` seconds or, on a loaded machine, within `bound` plus three
    times what an empty job of as many ranks takes right now. The yardstick
    is measured beside the test, never fixed, so a busy machine (make test
    beside two busy loops) does not fail it while a job that waits for a
    timeout or a hang still does."""
    took = time.monotonic() - t0
    if took < bound:
        return
    empty = _empty_job_seconds(np_)
    assert took < bound + 3 * empty, (
        f"the job took {took:.1f} s: more than {bound} s + 3 x {empty:.1f} s "
        f"(an empty {np_}-rank job now)"
    )


def _is_mpich_build():
    try:
        out = subprocess.run(["ldd", str(BIN)], capture_output=True, text=True).stdout
    except OSError:
        return False
    return "libmpich.so" in out


# test_mpich.py checks an MPICH build (make test-mpich runs it with one):
# not collected in the ordinary OpenMPI pass, rather than a skip there.
collect_ignore = [] if _is_mpich_build() else ["test_mpich.py"]


@functools.lru_cache(maxsize=1)
def backends():
    out = subprocess.run([str(BIN), "--list", "--json"], capture_output=True, check=True).stdout
    return [b["name"] for b in json.loads(out)["backends"]]


@pytest.fixture(scope="session")
def built_backends():
    assert BIN.exists(), f"{BIN} is missing: run make build first"
    return backends()
