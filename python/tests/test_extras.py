# SPDX-License-Identifier: BSD-3-Clause
"""Installs that bring every command (docs/install.md): a command whose
optional package is missing says, in one line, which extra of
iokernels-campaign brings it, and exits 2 (never "unexpected
ModuleNotFoundError ... (a bug)"); a fresh venv with the install tree's
package and its [all] extra runs tune and trace2replay on the shipped
files."""

import shutil
import subprocess

import pytest
from conftest import BIN, PYDIR, REPO, cli
from declared import missing

SPEC = REPO / "campaigns" / "tune-small.toml"
LOG = REPO / "data" / "darshan" / "dxt.darshan"


def blocked(tmp_path, *modules):
    """PYTHONPATH for a Python in which `modules` are not installed (a
    sitecustomize marks them absent, in child processes too)."""
    shim = tmp_path / "shim"
    shim.mkdir(exist_ok=True)
    (shim / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in modules)
    )
    return f"{shim}:{PYDIR}"


def names_the_extra(p, extra, source):
    """None when `p` ended as a missing extra must: exit 2, one line on
    stderr naming `pip install 'SOURCE[EXTRA]'`; else what is wrong."""
    lines = p.stderr.strip().splitlines()
    want = f"pip install '{source}[{extra}]'"
    if p.returncode != 2 or len(lines) != 1 or want not in lines[0] or "a bug" in p.stderr:
        return f"exit {p.returncode}, stderr {p.stderr.strip()!r}: not one line naming {want}"
    return None


def test_the_check_refuses_the_old_bug_line():
    """What tune printed before the extras: caught."""
    old = subprocess.CompletedProcess(
        [],
        1,
        "",
        "iokernels-campaign: error: unexpected ModuleNotFoundError: No module named 'optuna' "
        "(a bug: IOK_CAMPAIGN_DEBUG=1 prints the traceback)\n",
    )
    assert names_the_extra(old, "tune", "iokernels-campaign")


@pytest.mark.parametrize(
    "module, extra, args",
    [
        ("optuna", "tune", ["tune", SPEC, "--dry-run", "--db", "t.sqlite"]),
        ("darshan", "trace", ["trace2replay", LOG, "--out", "t.replay"]),
        ("pyarrow", "parquet", ["export", "no.sqlite", "--parquet", "x.parquet"]),
    ],
)
def test_a_missing_optional_package_names_its_extra(tmp_path, module, extra, args):
    p = cli(*args, cwd=tmp_path, extra_env={"PYTHONPATH": blocked(tmp_path, module)})
    # the source tree's package is not installed from a folder: its name
    assert names_the_extra(p, extra, "iokernels-campaign") is None, p.stderr
    assert not (tmp_path / "t.replay").exists()


def test_an_import_inside_the_tool_names_the_extra_too(tmp_path):
    """tune's own modules import optuna: were the first check gone, the
    ModuleNotFoundError of that import still names the extra."""
    p = cli("tune", SPEC, "--dry-run", cwd=tmp_path, extra_env={"PYTHONPATH": blocked(tmp_path)})
    assert p.returncode == 0, p.stderr  # the control: with optuna, the dry run works
    import_only = tmp_path / "shim" / "sitecustomize.py"
    import_only.write_text(
        "import importlib.util, sys\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda n, *a: object() if n == 'optuna' else real(n, *a)\n"
        "sys.modules['optuna'] = None\n"
    )
    p = cli(
        "tune",
        SPEC,
        "--dry-run",
        cwd=tmp_path,
        extra_env={"PYTHONPATH": f"{import_only.parent}:{PYDIR}"},
    )
    assert names_the_extra(p, "tune", "iokernels-campaign") is None, p.stderr


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory):
    """The install tree (cmake --install) and a venv with its package and
    [all], as docs/install.md says."""
    if shutil.which("cmake") is None:
        missing("cmake", "not on PATH")
    top = tmp_path_factory.mktemp("extras")
    prefix = top / "prefix"
    subprocess.run(
        ["cmake", "--install", str(BIN.parent), "--prefix", str(prefix)],
        check=True,
        capture_output=True,
    )
    venv = top / "venv"
    subprocess.run(["python3", "-m", "venv", str(venv)], check=True, capture_output=True)
    package = prefix / "share" / "iokernels" / "python"
    p = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", f"{package}[all]"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if p.returncode != 0:
        missing("venv", f"pip could not install {package}[all]: {p.stderr.strip()[-500:]}")
    return prefix, venv


def tool(fresh_venv, *args, cwd, pythonpath=None):
    prefix, venv = fresh_venv
    env = {"PATH": f"{prefix / 'bin'}:/usr/bin:/bin", "HOME": str(cwd)}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run(
        [str(venv / "bin" / "iokernels-campaign"), *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_fresh_venv_with_all_runs_tune_and_trace2replay(fresh_venv, tmp_path):
    prefix, _ = fresh_venv
    share = prefix / "share" / "iokernels"
    p = tool(fresh_venv, "tune", share / "campaigns" / "tune-small.toml", "--dry-run", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "transfer" in p.stdout and "cb_nodes" in p.stdout, p.stdout
    out = tmp_path / "dxt.replay"
    p = tool(
        fresh_venv,
        "trace2replay",
        share / "data" / "darshan" / "dxt.darshan",
        "--out",
        out,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert out.read_text().strip() and "operation" in p.stdout, p.stdout


def test_a_fresh_venv_without_the_extra_names_the_install_tree(fresh_venv, tmp_path):
    """Without optuna, the line names the folder the tool came from."""
    prefix, _ = fresh_venv
    share = prefix / "share" / "iokernels"
    shim = blocked(tmp_path, "optuna", "darshan").split(":")[0]
    p = tool(
        fresh_venv,
        "tune",
        share / "campaigns" / "tune-small.toml",
        "--dry-run",
        cwd=tmp_path,
        pythonpath=shim,
    )
    assert names_the_extra(p, "tune", share / "python") is None, p.stderr
    p = tool(
        fresh_venv,
        "trace2replay",
        share / "data" / "darshan" / "dxt.darshan",
        "--out",
        tmp_path / "x",
        cwd=tmp_path,
        pythonpath=shim,
    )
    assert names_the_extra(p, "trace", share / "python") is None, p.stderr
