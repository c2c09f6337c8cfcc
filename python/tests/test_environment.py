# SPDX-License-Identifier: BSD-3-Clause
"""The campaign tool in environments the sweep of issue #44 tried: a backend
module that cannot load, a C locale with non-ASCII file names, no mpiexec
on PATH, a tune whose defaults fail at run time, and reads that must not
leave SQLite's -wal and -shm files beside a store."""

import os
import shutil
import sqlite3

from conftest import BIN, cli
from declared import missing
from test_outcome import without
from test_tune import _tiny

CAMPAIGN = """
[campaign]
name = "env"
ranks = [1]
modes = ["write"]
[[kernel]]
name = "btio"
backends = {backends}
options = {{ grid = "16,16,16", dumps = 2 }}
"""


def broken_modules(tmp_path):
    """A copy of the build's backend modules with hdf5's replaced by junk."""
    mods = tmp_path / "modules"
    shutil.copytree(BIN.parent / "modules", mods)
    (mods / "iok-backend-hdf5.so").write_text("not a shared object\n")
    return {"IOKERNELS_MODULES": str(mods)}


def test_a_backend_that_cannot_load_is_named_and_others_run(tmp_path):
    if not (BIN.parent / "modules" / "iok-backend-hdf5.so").exists():
        missing("hdf5", "this build has no hdf5 module to break")
    env = broken_modules(tmp_path)
    (tmp_path / "mpiio.toml").write_text(CAMPAIGN.format(backends='["mpiio"]'))
    (tmp_path / "hdf5.toml").write_text(CAMPAIGN.format(backends='["hdf5"]'))
    (tmp_path / "all.toml").write_text(CAMPAIGN.format(backends='"all"'))
    p = cli("run", "mpiio.toml", "--dry-run", cwd=tmp_path, extra_env=env)
    assert p.returncode == 0, p.stderr
    assert "backend hdf5 is left out: cannot load the module" in p.stderr
    assert "iok-backend-hdf5.so" in p.stderr
    p = cli("run", "all.toml", "--dry-run", cwd=tmp_path, extra_env=env)
    assert p.returncode == 0 and " hdf5 " not in p.stdout and " mpiio " in p.stdout, p.stdout
    p = cli("run", "hdf5.toml", "--dry-run", cwd=tmp_path, extra_env=env)
    assert p.returncode == 2
    assert "backend 'hdf5' cannot be used: cannot load the module" in p.stderr.splitlines()[-1]


def test_non_ascii_names_under_the_c_locale(tmp_path):
    (tmp_path / "c.toml").write_text(CAMPAIGN.format(backends='["null"]'))
    c_locale = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"}
    p = cli(
        "run",
        "c.toml",
        "--db",
        "résultats.sqlite",
        "--out",
        "sortie-é",
        cwd=tmp_path,
        extra_env=c_locale,
    )
    assert p.returncode == 0, p.stderr
    con = sqlite3.connect(tmp_path / "résultats.sqlite")
    ((out_dir, n),) = con.execute(
        "SELECT c.out_dir, COUNT(r.id) FROM campaigns c JOIN runs r ON r.campaign_id = c.id"
    ).fetchall()
    con.close()
    assert out_dir.endswith("sortie-é") and n == 1
    assert (tmp_path / "sortie-é" / "report.html").exists()
    # a name that is not UTF-8 at all: one line, exit 2, no store
    bad = os.fsdecode(b"r\xe9s.sqlite")
    p = cli("run", "c.toml", "--db", bad, "--out", "o", cwd=tmp_path, extra_env=c_locale)
    assert p.returncode == 2
    assert "--db r\\udce9s.sqlite: the name is not UTF-8 text" in p.stderr, p.stderr
    assert not (tmp_path / os.fsdecode(b"r\xe9s.sqlite")).exists()


def test_no_mpiexec_is_said_first(tmp_path):
    """Before the binary is asked anything: this one answers only as an MPI
    that needs its launcher would."""
    (tmp_path / "c.toml").write_text(CAMPAIGN.format(backends='["null"]'))
    fake = tmp_path / "iokernels"
    fake.write_text(
        "#!/bin/sh\necho 'ORTE_ERROR_LOG: Not found in file ess_singleton' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    p = cli(
        "run",
        "c.toml",
        "--db",
        "s.sqlite",
        "--out",
        "o",
        cwd=tmp_path,
        extra_env={"PATH": without("mpiexec", tmp_path / "bin"), "IOK_BIN": str(fake)},
    )
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        "iokernels-campaign: error: mpiexec not found on PATH: is this the right machine "
        "(--launcher)?"
    ]


# BTIO whose every put fails (a fault injected): the defaults fail at run time
TUNE = _tiny("broken", "mpiio", "trials = 2", 'api = ["blocking", "nonblocking"]').replace(
    "[tune]", 'env = { IOK_FAULT = "put:0" }\n[tune]', 1
)


def test_tune_whose_defaults_fail_at_run_time_exits_1(tmp_path):
    (tmp_path / "t.toml").write_text(TUNE)
    p = cli("tune", "t.toml", "--db", "t.sqlite", "--out", "out", "--no-report", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert "the defaults' run failed" in p.stderr and "injected" in p.stderr.lower(), p.stderr


def test_reading_a_store_leaves_no_wal_beside_it(tiny, tmp_path):
    d, db, _ = tiny
    copy = tmp_path / "s.sqlite"
    shutil.copy(db, copy)
    for args in (
        ("list", copy),
        ("report", copy, "-o", tmp_path / "r.html"),
        ("export", copy, "--csv", tmp_path / "x.csv"),
        ("compare", copy, copy),
    ):
        p = cli(*args, cwd=tmp_path)
        assert p.returncode == 0, (args, p.stderr)
        left = sorted(f.name for f in tmp_path.glob("s.sqlite-*"))
        assert left == [], (args[0], left)
