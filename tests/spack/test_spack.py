# SPDX-License-Identifier: BSD-3-Clause
"""`spack install iokernels` from packaging/spack, then the installed binary.

Needs a Spack: IOK_SPACK_ROOT (a checkout: its bin/spack) or `spack` on
PATH; without one the test fails unless the run declares it missing
(IOK_ALLOW_MISSING=spack: `make test` does when it finds none). Spack's
concretizer needs clingo: offline, run Spack with a python that has it
(SPACK_PYTHON=/venv/with/clingo/bin/python). The dependencies are this
machine's Debian libraries, as externals (`buildable: false`); the source
is the working tree, committed into a scratch git repository on branch main.
IOK_SPACK_CACHE names a folder kept between runs (the store: the package is
reinstalled, its dependencies are not); else a temporary one.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from declared import missing

REPO = Path(__file__).resolve().parents[2]
PACKAGE_REPO = REPO / "packaging" / "spack" / "spack_repo" / "iokernels"
SPEC = "iokernels@main+pnetcdf+hdf5"
ARCH = "x86_64-linux-gnu"


def find_spack():
    root = os.environ.get("IOK_SPACK_ROOT")
    if root:
        spack = Path(root) / "bin" / "spack"
        assert spack.is_file(), f"IOK_SPACK_ROOT={root}: no bin/spack there"
        return str(spack)
    spack = shutil.which("spack")
    if not spack:
        missing("spack", "neither IOK_SPACK_ROOT nor spack on PATH")
    return spack


def version(cmd, pattern=r"(\d+(?:\.\d+)+)"):
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    m = re.search(pattern, out)
    assert m, f"{' '.join(cmd)}: no version in {out!r}"
    return m.group(1)


def externals():
    """This machine's libraries and tools (Debian's paths), versions asked of them."""
    pc = ["pkg-config", "--modversion"]
    mpi = version(["ompi_info", "--version"])
    ext = {
        "openmpi": (f"openmpi@{mpi}", "/usr"),
        "parallel-netcdf": (f"parallel-netcdf@{version(pc + ['pnetcdf'])}", "/usr"),
        "hdf5": (
            f"hdf5@{version(pc + ['hdf5-openmpi'])}+mpi",
            f"/usr/lib/{ARCH}/hdf5/openmpi",
        ),
        "netcdf-c": (f"netcdf-c@{version(pc + ['netcdf-mpi'])}+mpi", "/usr"),
        "jansson": (f"jansson@{version(pc + ['jansson'])}", "/usr"),
        "cmake": (f"cmake@{version(['cmake', '--version'])}", "/usr"),
        "pkgconf": (f"pkgconf@{version(['pkgconf', '--version'])}", "/usr"),
        "gmake": (f"gmake@{version(['make', '--version'])}", "/usr"),
    }
    return ext


def write_config(cfg, work, src):
    cfg.mkdir(parents=True, exist_ok=True)
    lines = [
        "packages:",
        "  all:",
        "    providers:",
        "      mpi: [openmpi]",
        "  mpi:",
        "    buildable: false",
        "  iokernels:",
        "    package_attributes:",
        f"      git: file://{src}",
    ]
    for name, (spec, prefix) in externals().items():
        lines += [
            f"  {name}:",
            "    buildable: false",
            f"    externals:\n    - spec: {spec}\n      prefix: {prefix}",
        ]
    (cfg / "packages.yaml").write_text("\n".join(lines) + "\n")
    (cfg / "config.yaml").write_text(
        "config:\n"
        f"  install_tree:\n    root: {work}/store\n"
        f"  build_stage: [{work}/stage]\n"
        f"  source_cache: {work}/cache\n"
        f"  misc_cache: {work}/misc\n"
        "  build_jobs: 2\n"
    )
    (cfg / "repos.yaml").write_text(f"repos:\n- {PACKAGE_REPO}\n")
    (cfg / "bootstrap.yaml").write_text("bootstrap:\n  enable: false\n")


def snapshot(src):
    """The working tree's tracked files, committed on branch main of a scratch repo."""
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    files = subprocess.run(
        ["git", "-C", REPO, "ls-files", "-z"], capture_output=True, text=True, check=True
    ).stdout
    for name in filter(None, files.split("\0")):
        if (REPO / name).is_file():  # a tracked file deleted in the tree is left out
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, src / name)
    git = ["git", "-C", src, "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git + ["init", "-q", "-b", "main"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "snapshot"], check=True)


@pytest.fixture(scope="module")
def spack_env(tmp_path_factory):
    spack = find_spack()
    cache = os.environ.get("IOK_SPACK_CACHE")
    work = Path(cache) if cache else tmp_path_factory.mktemp("spack")
    work.mkdir(parents=True, exist_ok=True)
    write_config(work / "config", work, work / "src")
    snapshot(work / "src")
    env = dict(os.environ, SPACK_DISABLE_LOCAL_CONFIG="1", SPACK_USER_CACHE_PATH=str(work / "user"))

    def run(*args, check=True):
        p = subprocess.run(
            [spack, "-C", str(work / "config"), *args], capture_output=True, text=True, env=env
        )
        if check:
            assert p.returncode == 0, f"spack {' '.join(args)}:\n{p.stdout}\n{p.stderr}"
        return p

    return run, work


def test_package_passes_the_audit(spack_env):
    run, _ = spack_env
    p = run("audit", "packages", "iokernels")
    counts = [line for line in p.stdout.splitlines() if "issues found" in line]
    assert counts and all(": 0 issues" in line for line in counts), p.stdout


def test_spack_install_then_btio_verifies(spack_env, tmp_path):
    run, _ = spack_env
    # the version is a branch: the installed one would stand for any source
    run("uninstall", "-y", "-a", "iokernels", check=False)
    run("install", "--fail-fast", SPEC)
    prefix = Path(run("location", "-i", SPEC).stdout.strip())
    binary = prefix / "bin" / "iokernels"
    assert binary.is_file(), f"{binary} not installed"
    listing = subprocess.run([binary, "--list"], capture_output=True, text=True)
    for backend in ("mpiio", "pnetcdf", "hdf5"):
        assert backend in listing.stdout, listing.stdout + listing.stderr
    p = subprocess.run(
        ["mpiexec", "--allow-run-as-root", "--oversubscribe", "-n", "1", binary, "btio",
         "--backend", "mpiio", "--verify", "--grid", "16,16,16",
         "--dumps", "2", "--dir", tmp_path],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    assert re.search(r"verify: \d+ values checked, 0 mismatches", p.stdout), p.stdout
