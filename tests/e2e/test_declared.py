# SPDX-License-Identifier: BSD-3-Clause
"""tests/declared.py can fail: a bare skip, or a missing backend that the run
did not declare, is a failure; a declared one is a skip named in the summary
and in the counts file that `make test` prints."""

import os
import subprocess
import sys

import pytest
from conftest import REPO

CASES = """
import pytest
from declared import missing, not_here


def test_bare_skip():
    pytest.skip("nothing here")


def test_missing_backend():
    missing("adios2", "backend not built")


def test_not_here():
    not_here("lfs is here")


def test_passes():
    pass
"""


def pytest_in(tmp_path, allow=None):
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(REPO / 'tests')!r})\nimport declared\n\n\n"
        "def pytest_configure(config):\n"
        "    config.pluginmanager.register(declared, 'iok_declared')\n"
    )
    (tmp_path / "test_cases.py").write_text(CASES)
    env = {k: v for k, v in os.environ.items() if k != "IOK_ALLOW_MISSING"}
    env["IOK_TEST_SUMMARY"] = str(tmp_path / "summary")
    if allow is not None:
        env["IOK_ALLOW_MISSING"] = allow
    cmd = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(tmp_path)]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_undeclared_skips_fail_naming_the_fix(tmp_path):
    p = pytest_in(tmp_path)
    assert p.returncode == 1, p.stdout
    assert "undeclared skip: nothing here" in p.stdout
    assert "adios2 is missing: backend not built" in p.stdout
    assert "declare IOK_ALLOW_MISSING=adios2" in p.stdout
    assert "2 failed, 1 passed, 1 skipped" in p.stdout, p.stdout
    name = f"{tmp_path.parent.name}/{tmp_path.name}"
    summary = (tmp_path / "summary" / f"{name.replace('/', '_')}.txt").read_text()
    assert summary.startswith(f"{name}: 1 passed, 2 failed, 1 skipped"), summary
    assert "skipped 1 x not on this machine: lfs is here" in summary


def test_a_declared_backend_is_a_named_skip(tmp_path):
    p = pytest_in(tmp_path, allow="pnetcdf,adios2")
    assert p.returncode == 1, p.stdout  # the bare skip still fails
    assert "1 failed, 1 passed, 2 skipped" in p.stdout, p.stdout
    assert "1 x declared missing: adios2: backend not built" in p.stdout


@pytest.mark.parametrize("allow", ["adios", "pnetcdf,root,lustre"])
def test_a_misspelt_declaration_is_refused(tmp_path, allow):
    p = pytest_in(tmp_path, allow=allow)
    assert p.returncode == 4, p.stdout + p.stderr  # pytest's usage error
    assert "IOK_ALLOW_MISSING names" in p.stdout + p.stderr


def test_required_fails_for_a_backend_that_does_not_load(tmp_path):
    """test_required.py on a binary whose modules are gone: four backends
    fail by name; declared, they are four named skips."""
    # not the summary folder of the run around it: this pytest's counts are not its own
    env = {
        k: v for k, v in os.environ.items() if k not in ("IOK_ALLOW_MISSING", "IOK_TEST_SUMMARY")
    }
    env["IOKERNELS_MODULES"] = str(tmp_path / "nowhere")
    cmd = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"]
    target = str(REPO / "tests" / "e2e" / "test_required.py")
    p = subprocess.run([*cmd, target], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "4 failed, 2 passed" in p.stdout, p.stdout
    for b in ("pnetcdf", "hdf5", "netcdf4", "adios2"):
        assert f"{b} is missing: built, but its module does not load" in p.stdout, p.stdout
    env["IOK_ALLOW_MISSING"] = "pnetcdf,hdf5,netcdf4,adios2"
    p = subprocess.run([*cmd, target], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "2 passed, 4 skipped" in p.stdout, p.stdout
    assert "declared skips: 4" in p.stdout, p.stdout
