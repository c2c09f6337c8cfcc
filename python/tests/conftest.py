# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the campaign package's tests: the built binary, the command
line tool run as a subprocess, and one tiny real campaign shared by the
tests that read its results."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYDIR = REPO / "python"
sys.path.insert(0, str(PYDIR))

from iokernels_campaign.run import inventory  # noqa: E402

# Skips are failures unless declared (tests/declared.py): registered once
# per session, whichever of the three test trees' conftests comes first.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
import declared  # noqa: E402
import mpi_startup  # noqa: E402

mpi_startup.choose_pml()  # ob1 unless asked otherwise (tests/mpi_startup.py)


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("iok_declared"):
        config.pluginmanager.register(declared, "iok_declared")
    config.addinivalue_line(
        "markers", "slurm: uses the real Slurm sandbox (slurm_cluster); set by the conftest"
    )


def pytest_collection_modifyitems(items):
    """Every test that starts or shares the Slurm sandbox is marked slurm:
    ctest runs them as their own test (campaign.slurm), beside the others,
    since they mostly wait on Slurm's one-minute time limits."""
    for item in items:
        if "slurm_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slurm)


BIN = Path(os.environ.get("IOK_BIN", REPO / "build" / "iokernels")).resolve()
MIB = 1048576.0

# null and mpiio at 1 rank, each twice: the second block names a hints file
# that is not there, which only the run finds out (iokernels refuses to
# start), so its writes fail for real, are stored as failed and their reads
# as not run.
TINY = """
[campaign]
name = "tiny"
ranks = [1]
modes = ["write", "read"]
timeout = 120

[[kernel]]
name = "btio"
backends = ["null", "mpiio"]
options = { grid = "16,16,16", dumps = 2, verify = true, ceiling = true }
[kernel.backend.null]
verify = false
ceiling = false

[[kernel]]
name = "btio"
label = "btio-badenv"
backends = ["null", "mpiio"]
options = { grid = "16,16,16", dumps = 2 }
# runs that fail for real, in their own environment: what iokernels --check
# (asked when the campaign is read, in the campaign tool's environment)
# cannot see coming
[kernel.env]
IOK_AGREE_SECONDS = "never"
"""


def env():
    e = dict(os.environ)
    e["IOK_BIN"] = str(BIN)
    e["PYTHONPATH"] = os.pathsep.join([str(PYDIR), e.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return e


def cli(*args, cwd, timeout=300, extra_env=None):
    """Runs `iokernels-campaign ARGS` (as python -m) in cwd."""
    cmd = [sys.executable, "-m", "iokernels_campaign", *map(str, args)]
    e = dict(env(), **(extra_env or {}))
    return subprocess.run(cmd, cwd=cwd, env=e, capture_output=True, text=True, timeout=timeout)


def run_row(i, label, backend, variant, ranks, mode, bw, ceiling=None, **over):
    """One row of the runs table as the store gives it: an ok run of bw MiB/s
    (`over`: columns set otherwise)."""
    return {
        "id": i,
        "case_hash": f"{label}-{backend}-{variant}-{ranks}-{mode}",
        "kernel": label,
        "label": label,
        "backend": backend,
        "ranks": ranks,
        "variant": variant,
        "mode": mode,
        "status": "ok",
        "exit_code": 0,
        "error": None,
        "io": "coll",
        "api": "blocking",
        "write_bytes": MIB if mode == "write" else 0,
        "read_bytes": MIB if mode == "read" else 0,
        "write_time": 1.0,
        "read_time": 1.0,
        "write_bandwidth": bw * MIB,
        "read_bandwidth": bw * MIB,
        "ceiling_bandwidth": ceiling and ceiling * MIB,
        "ceiling_fraction": ceiling and bw / ceiling,
        "peak_rss_min": MIB,
        "peak_rss_avg": MIB,
        "peak_rss_max": MIB,
        "verify_enabled": 0,
        "verify_ok": 0,
        "fsync": 0,
        "read_from_storage": 1 if mode == "read" else None,
    } | over


def record_of(cwd, *args):
    """Runs `iokernels ARGS --quiet` (one rank, no launcher) in cwd: its JSON record."""
    p = subprocess.run(
        [str(BIN), *args, "--quiet", "--json", "r.jsonl"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    return json.loads((Path(cwd) / "r.jsonl").read_text().splitlines()[0])


def report_of(d, db, page):
    """Writes the report of store db (run in d) to `page`: its HTML."""
    p = cli("report", db, "-o", page, cwd=d)
    assert p.returncode == 0, p.stderr
    return page.read_text()


@pytest.fixture(scope="session")
def inv():
    assert BIN.exists(), f"{BIN} is missing: run make build first"
    return inventory.load(BIN)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """The tiny campaign, run once: (work dir, store path, finished process)."""
    assert BIN.exists(), f"{BIN} is missing: run make build first"
    d = tmp_path_factory.mktemp("tiny")
    (d / "tiny.toml").write_text(TINY)
    p = cli("run", "tiny.toml", "--db", "tiny.sqlite", "--out", "out", cwd=d)
    return d, d / "tiny.sqlite", p


def rows(db, sql, *args):
    """The rows of a query on a store, as dicts."""
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    return [dict(r) for r in con.execute(sql, args)]


@pytest.fixture(scope="session")
def slurm_cluster():
    """A real Slurm cluster of two nodes (slurmcluster.py), shared by the
    tests that need one; skipped, with the reason, where none can start."""
    import slurmcluster

    reason = slurmcluster.why_not()
    if reason:
        declared.missing("slurm", reason)
    # not under pytest's basetemp: another pytest session of this user may
    # remove old basetemps while this cluster runs
    d = Path(tempfile.mkdtemp(prefix="iok-slurm-"))
    try:
        cluster = slurmcluster.start(d, jobcomp=True)
    except RuntimeError as e:
        declared.missing("slurm", f"scripts/slurm-sandbox.sh start failed: {e}")
    yield cluster
    slurmcluster.stop(d)
    shutil.rmtree(d, ignore_errors=True)
