# SPDX-License-Identifier: BSD-3-Clause
"""A green run says what it did not test: skips are failures unless declared.

Every backend, tool and privilege that scripts/install-deps.sh and the venv
bring on this platform is required. A test that needs one that is absent
calls `missing(NAME, why)`: it fails, naming NAME and the fix, unless the run
declares NAME missing (`IOK_ALLOW_MISSING=adios2,slurm`, or `all`); then it
is skipped and counted. A case that cannot apply on this kind of machine by
design (a Lustre-only setting where lfs is absent) calls `not_here(why)`.
Any other skip, a bare `pytest.skip()` included, is reported as a failure
("undeclared skip"), so a skip cannot turn a missing library green.

The three pytest trees (tests/e2e, tests/docs, python/tests) import the
hooks below from their conftest.py; each run's counts go to stdout and, when
IOK_TEST_SUMMARY names a folder (ctest sets it), to a file there that
`make test` prints after ctest, whose own output hides a passing test's.
"""

import os
import re
from pathlib import Path

import pytest

DECLARED = "declared missing: "
NOT_HERE = "not on this machine: "
# What IOK_ALLOW_MISSING may name (anything else is a typo: refused)
KNOWN = {
    "mpiio", "null", "pnetcdf", "hdf5", "netcdf4", "adios2",  # backends
    "root", "slurm", "chromium", "mpich", "groff", "cmake", "git", "venv", "strace", "bindfs",
    "spack",  # tests/spack: a Spack checkout (IOK_SPACK_ROOT or on PATH)
}  # fmt: skip


def allowed():
    """The names the run declares missing (IOK_ALLOW_MISSING, comma-separated)."""
    names = {n.strip() for n in os.environ.get("IOK_ALLOW_MISSING", "").split(",") if n.strip()}
    unknown = names - KNOWN - {"all"}
    if unknown:
        raise pytest.UsageError(
            f"IOK_ALLOW_MISSING names {', '.join(sorted(unknown))}: "
            f"known names are {', '.join(sorted(KNOWN))} or all"
        )
    return names


def is_declared(name):
    """Did the run declare `name` missing (IOK_ALLOW_MISSING)?"""
    names = allowed()
    return name in names or "all" in names


def missing(name, why):
    """`name` (a backend, tool or privilege the platform brings) is absent:
    fail with the fix, or skip when the run declared it missing."""
    assert name in KNOWN, f"declared.missing: unknown name {name!r} (add it to KNOWN)"
    if is_declared(name):
        pytest.skip(f"{DECLARED}{name}: {why}")
    pytest.fail(
        f"{name} is missing: {why}. The platform's install brings it (make deps, make venv); "
        f"to run without it, declare IOK_ALLOW_MISSING={name}",
        pytrace=False,
    )


def not_here(why):
    """Skips a case that by design cannot apply on this machine (say which)."""
    pytest.skip(f"{NOT_HERE}{why}")


def pytest_configure(config):
    allowed()  # a misspelt IOK_ALLOW_MISSING ends the run before any test


def _reason(report):
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


SKIPS = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail"):
        why = _reason(report)
        if not why.startswith((DECLARED, NOT_HERE)):
            report.outcome = "failed"
            report.longrepr = (
                f"undeclared skip: {why}\n(tests/declared.py: call missing(NAME, why) for "
                "something the platform brings, not_here(why) for a case that cannot apply)"
            )
        else:
            SKIPS[why] = SKIPS.get(why, 0) + 1


def pytest_terminal_summary(terminalreporter):
    tr = terminalreporter
    n = {k: len(tr.stats.get(k, [])) for k in ("passed", "failed", "error", "skipped")}
    line = f"{n['passed']} passed, {n['failed'] + n['error']} failed, {n['skipped']} skipped"
    tr.write_line(f"declared skips: {sum(SKIPS.values())}")
    for why, n in sorted(SKIPS.items()):
        tr.write_line(f"  {n} x {why}")
    where = os.environ.get("IOK_TEST_SUMMARY")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        # tests/e2e, python/tests, tests/docs: the folder and its parent
        name = "/".join(Path(str(tr.config.args[0] if tr.config.args else "pytest")).parts[-2:])
        if tr.config.option.markexpr:  # one tree run in parts (-m slurm, -m "not slurm")
            name += f" -m '{tr.config.option.markexpr}'"
        text = [f"{name}: {line}"] + [f"  skipped {n} x {why}" for why, n in sorted(SKIPS.items())]
        stem = re.sub(r"[^A-Za-z0-9.-]+", "_", name)
        (Path(where) / f"{stem}.txt").write_text("\n".join(text) + "\n")
