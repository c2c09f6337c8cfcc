"""Launchers: mpiexec's flags only where needed; sbatch scripts that bash
accepts, with the right srun lines, whose results `collect` stores."""

import json
import os
import re
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import BIN, REPO, cli
from iokernels_campaign import launch
from iokernels_campaign.store import Store

CAMPAIGN = """
[campaign]
name = "batch"
iterations = 2
modes = ["write", "read"]
[slurm]
sbatch = { time = "00:05:00", partition = "debug" }
srun = ["--cpu-bind=cores"]
[[kernel]]
name = "btio"
backends = ["null", "mpiio"]
ranks = [1, 4]
options = { grid = "16,16,16", dumps = 2 }
"""


@pytest.mark.parametrize(
    "ranks, openmpi, root, cores, expected",
    [
        (4, True, True, 2, ["--allow-run-as-root", "--oversubscribe"]),
        (2, True, True, 2, ["--allow-run-as-root"]),
        (4, True, False, 2, ["--oversubscribe"]),
        (1, True, False, 8, []),
        (16, False, True, 2, []),  # MPICH and others know neither flag
    ],
)
def test_mpiexec_flags(ranks, openmpi, root, cores, expected):
    assert launch.mpiexec_flags(ranks, openmpi, root, cores) == expected


def test_srun_command():
    argv = ["/x/iokernels", "btio", "--backend", "hdf5"]
    assert launch.command("srun", 9, argv, ["--cpu-bind=cores"]) == [
        "srun",
        "-n",
        "9",
        "--cpu-bind=cores",
        *argv,
    ]


def test_mpiexec_dry_run_prints_commands(tmp_path):
    (tmp_path / "c.toml").write_text(CAMPAIGN)
    p = cli("run", "c.toml", "--dry-run", "--db", "x.sqlite", "--out", "out", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    cmds = [x for x in p.stdout.splitlines() if x.startswith("mpiexec")]
    assert len(cmds) == 2 * 2 * 2  # backends x ranks x modes
    assert any(re.search(r" -n 4 \S+/iokernels btio --backend mpiio --mode read ", c) for c in cmds)
    assert not (tmp_path / "out").exists() and not (tmp_path / "x.sqlite").exists()


def sbatch_dry_run(tmp_path, text=CAMPAIGN):
    (tmp_path / "c.toml").write_text(text)
    p = cli(
        "run",
        "c.toml",
        "--launcher",
        "sbatch",
        "--dry-run",
        "--db",
        "x.sqlite",
        "--out",
        "out",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    return p, sorted((tmp_path / "out" / "runs").glob("*/*/job.sbatch"))


def test_sbatch_dry_run_scripts_are_valid_with_the_right_srun_lines(tmp_path):
    p, scripts = sbatch_dry_run(tmp_path)
    assert len(scripts) == 4  # one per case
    assert not (tmp_path / "x.sqlite").exists()  # a dry run stores nothing
    for script in scripts:
        text = script.read_text()
        assert text in p.stdout  # printed as well as written
        check = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        case = json.loads((script.parent / "case.json").read_text())
        n, backend = case["ranks"], case["backend"]
        assert f"#SBATCH --ntasks={n}\n" in text
        assert "#SBATCH --time=00:05:00\n" in text and "#SBATCH --partition=debug\n" in text
        sruns = [x.strip() for x in text.splitlines() if x.strip().startswith("srun ")]
        assert len(sruns) == 2 * 2  # iterations x modes, in order
        for i, line in enumerate(sruns):
            mode = ("write", "read")[i % 2]
            assert line == (
                f"srun -n {n} --cpu-bind=cores {BIN} btio --backend {backend} --mode {mode} "
                f"--grid 16,16,16 --dumps 2 --json {mode}.jsonl > {mode}.stdout 2> {mode}.stderr"
            )
        it1, it2 = (str(script.parent / f"iter{i}") for i in (1, 2))
        assert text.index(f"cd {it1} ") < text.index(f"cd {it2} ")


def fake_slurm(tmp_path):
    """srun and sbatch stand-ins on PATH: sbatch records the script and prints
    a job id; srun runs the command under mpiexec, as an allocation would."""
    d = tmp_path / "bin"
    d.mkdir()
    (d / "srun").write_text(
        f"#!/bin/bash\n# srun -n N [srun options] CMD...\nn=$2; shift 3\n"
        f'exec {REPO}/scripts/mpiexec.sh -n "$n" "$@"\n'
    )
    (d / "sbatch").write_text(f'#!/bin/bash\necho "$2" >> {tmp_path}/submitted\necho 4242\n')
    for f in d.iterdir():
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{d}:{os.environ['PATH']}"}


def test_sbatch_submits_scripts_that_run_and_collect_stores_them(tmp_path):
    path = dict(fake_slurm(tmp_path))
    one = CAMPAIGN.replace("ranks = [1, 4]", "ranks = [1, 2]").replace(
        "iterations = 2", "iterations = 1"
    )
    (tmp_path / "c.toml").write_text(one)
    p = cli(
        "run",
        "c.toml",
        "--launcher",
        "sbatch",
        "--db",
        "x.sqlite",
        "--out",
        "out",
        cwd=tmp_path,
        extra_env=path,
    )
    assert p.returncode == 0, p.stderr
    scripts = (tmp_path / "submitted").read_text().split()
    assert len(scripts) == 4
    assert all((Path(s).parent / "jobid").read_text() == "4242\n" for s in scripts)
    session = Path(scripts[0]).parent.parent
    assert f"collect {session} --db x.sqlite" in p.stdout
    # the jobs run (here: bash, srun standing in as mpiexec)
    env = dict(os.environ, **path)
    codes = [subprocess.run(["bash", s], env=env, capture_output=True).returncode for s in scripts]
    assert sorted(codes) == [0, 0, 2, 2]  # BTIO refuses 2 ranks
    # no store there; another store never heard of this campaign
    p = cli("collect", session, "--db", "other.sqlite", cwd=tmp_path)
    assert p.returncode == 2 and "no results store at other.sqlite" in p.stderr
    Store(tmp_path / "other.sqlite").close()
    p = cli("collect", session, "--db", "other.sqlite", cwd=tmp_path)
    assert p.returncode == 2 and "was not submitted" in p.stderr
    p = cli("collect", session, "--db", "x.sqlite", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "stored 8 runs, 0 not finished yet" in p.stdout
    db = sqlite3.connect(tmp_path / "x.sqlite")
    rows = db.execute("SELECT ranks, mode, status, exit_code, error, write_bytes FROM runs")
    rows = rows.fetchall()
    assert len(rows) == 8
    for ranks, mode, status, code, err, wbytes in rows:
        if ranks == 1:
            assert (status, code, err) == ("ok", 0, None)
            assert wbytes == (16**3 * 5 * 2 * 8 if mode == "write" else 0)
        elif mode == "write":
            assert (status, code, wbytes) == ("failed", 2, None)
            assert err.startswith("iokernels: error: BTIO needs a square number of processes")
        else:
            assert (status, code) == ("failed", None)
            assert err == "not run: the write step of this iteration failed"
    finished = db.execute("SELECT finished FROM campaigns").fetchone()[0]
    assert finished
    # collecting again stores nothing twice
    p = cli("collect", session, "--db", "x.sqlite", cwd=tmp_path)
    assert "stored 0 runs" in p.stdout
    assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 8
