# SPDX-License-Identifier: BSD-3-Clause
"""Launchers: mpiexec's flags only where needed; the campaign's batch script
(bash accepts it, one srun step per run in order), submitted to the real
Slurm of slurmcluster.py, and `collect` storing what it left."""

import json
import re
import sqlite3
import subprocess

import pytest
from conftest import BIN, cli
from iokernels_campaign.run import launch
from iokernels_campaign.store.store import Store

CAMPAIGN = """
[campaign]
name = "batch"
iterations = 2
modes = ["write", "read"]
[slurm]
time = "00:05:00"
partition = "debug"
srun = ["--cpu-bind=cores"]
[[kernel]]
name = "btio"
backends = ["null", "mpiio"]
ranks = [1, 4]
options = { grid = "16,16,16", dumps = 2 }
"""

# a block whose runs fail for real, in their own environment (which the
# campaign's --check, in the tool's, cannot see)
BROKEN = """
[[kernel]]
name = "btio"
label = "broken"
backends = ["null", "mpiio"]
ranks = [1]
options = { grid = "16,16,16", dumps = 2 }
[kernel.env]
IOK_AGREE_SECONDS = "never"
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
    assert launch.command("srun", 9, argv, ["--cpu-bind=cores"]) == (
        ["srun", "-n", "9", "--cpu-bind=cores", *argv],
        {},
    )
    # ranks placed per node; variables exported to the step, one with a comma
    # (which --export cannot carry) through srun's own environment
    env = {"ROMIO_HINTS": "/h/hints", "DARSHAN_EXCLUDE_DIRS": "/proc,/etc"}
    cmd, own = launch.command("srun", 9, argv, [], env, ntasks_per_node=4)
    assert cmd == [
        "srun",
        *("-n", "9", "-N", "3", "--ntasks-per-node=4"),
        "--export=ALL,ROMIO_HINTS=/h/hints",
        *argv,
    ]
    assert own == {"DARSHAN_EXCLUDE_DIRS": "/proc,/etc"}


@pytest.mark.parametrize(
    "members, nodes, per, shape",
    [
        # two 1-rank members, 2 ranks a node: plain -N 1 would put both on one
        # node; each gets a node of its own
        ((1, 1), 2, 2, ("-N", "2", "--ntasks-per-node=1", "--distribution=block")),
        # 4 + 2 ranks at 2 a node: member 1 on two nodes, member 2 on the third
        ((4, 2), 3, 2, ("-N", "3", "--ntasks-per-node=2", "--distribution=block")),
        ((2, 2), 2, 4, ("-N", "2", "--ntasks-per-node=2", "--distribution=block")),
        # not enough nodes, or the allocation's shape unknown: the plain shape
        ((1, 1), 1, 2, ("-N", "1", "--ntasks-per-node=2")),
        ((3, 2), 4, 4, ("-N", "2", "--ntasks-per-node=4")),
        ((1, 1), None, 2, ("-N", "1", "--ntasks-per-node=2")),
        ((1, 1), 2, None, ()),
    ],
)
def test_a_mix_step_gives_each_member_nodes_of_its_own(members, nodes, per, shape):
    total = sum(members)
    cmd, _ = launch.command("srun", total, ["/x/iokernels", "mix"], [], None, per, members, nodes)
    assert cmd == ["srun", "-n", str(total), *shape, "/x/iokernels", "mix"]


def test_mpiexec_exports_env_with_x_for_openmpi(monkeypatch):
    monkeypatch.setattr(launch, "_is_openmpi", lambda path: True)
    cmd, own = launch.mpiexec_command(2, ["/x/iokernels"], {"A": "1", "LD_PRELOAD": "/d.so"})
    assert cmd[cmd.index("-n") - 4 :] == [
        "-x",
        "A=1",
        "-x",
        "LD_PRELOAD=/d.so",
        "-n",
        "2",
        "/x/iokernels",
    ]
    assert own == {}  # mpiexec itself gets no LD_PRELOAD
    monkeypatch.setattr(launch, "_is_openmpi", lambda path: False)
    cmd, own = launch.mpiexec_command(2, ["/x/iokernels"], {"A": "1"})
    assert "-x" not in cmd and own == {"A": "1"}


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
    scripts = list((tmp_path / "out" / "runs").glob("*/job.sbatch"))
    assert len(scripts) == 1  # one job for the campaign
    return p, scripts[0]


def test_sbatch_dry_run_is_one_valid_script_with_a_step_per_run(tmp_path):
    p, script = sbatch_dry_run(tmp_path)
    assert not (tmp_path / "x.sqlite").exists()  # a dry run stores nothing
    text = script.read_text()
    assert text in p.stdout  # printed as well as written
    check = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    head = [x for x in text.splitlines() if x.startswith("#SBATCH")]
    assert head == [
        "#SBATCH --job-name=iok-batch",
        f"#SBATCH --output={script.parent}/slurm-%j.out",
        "#SBATCH --ntasks=4",  # the largest case
        "#SBATCH --partition=debug",
        "#SBATCH --time=00:05:00",
    ]
    assert f"R={script.parent}  # the session directory" in text
    steps = [x.strip() for x in text.splitlines() if "iok_step " in x and "{" in x]
    cases = sorted(script.parent.glob("*/case.json"))
    assert len(cases) == 4 and len(steps) == 4 * 2 * 2  # cases x iterations x modes
    i = 0
    for case_json in cases:  # the cases in their order, each iteration's modes in order
        case = json.loads(case_json.read_text())
        n, backend = case["ranks"], case["backend"]
        for it in (1, 2):
            for mode in ("write", "read"):
                line = next(
                    x for x in steps if f'"$R"/{case_json.parent.name}/iter{it} {mode} ' in x
                )
                assert line == (
                    f'[ $ok = 1 ] && {{ iok_step "$R"/{case_json.parent.name}/iter{it} {mode} 600 '
                    f"srun -n {n} --cpu-bind=cores {BIN} btio --backend {backend} --mode {mode} "
                    f"--grid 16,16,16 --dumps 2 --json {mode}.jsonl || {{ worst=$?; ok=0; }}; }}"
                )
                i += 1
    order = [steps.index(x) for x in steps]
    assert order == sorted(order) and i == len(steps)
    assert text.rstrip().endswith("exit $worst")


def test_sbatch_submits_one_job_that_runs_and_collect_stores_it(tmp_path, slurm_cluster):
    one = (
        CAMPAIGN.replace("ranks = [1, 4]", "ranks = [1]")
        .replace("iterations = 2", "iterations = 1")
        .replace('srun = ["--cpu-bind=cores"]', "")
        + BROKEN
    )  # the sandbox's nodes bind nothing
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
        extra_env=slurm_cluster.env,
    )
    assert p.returncode == 0, p.stderr
    (session,) = (tmp_path / "out" / "runs").iterdir()  # one job
    job_id = (session / "jobid").read_text().strip()
    assert p.stdout.splitlines()[-2].startswith(f"submitted {session}/job.sbatch: job {job_id}")
    assert f"collect {session} --db x.sqlite" in p.stdout
    # 8 steps in order, broken's writes refused (no hints file): Slurm says FAILED
    assert slurm_cluster.wait_ended(job_id) == "FAILED"
    assert len(list(session.glob("*/iter1/*.stdout"))) == 6  # a refused write skips its read
    assert json.loads((session / "job.end.json").read_text())["exit_code"] == 2
    # no store there; another store never heard of this campaign
    p = cli("collect", session, "--db", "other.sqlite", cwd=tmp_path)
    assert p.returncode == 2 and "no results store at other.sqlite" in p.stderr
    Store(tmp_path / "other.sqlite").close()
    p = cli("collect", session, "--db", "other.sqlite", cwd=tmp_path)
    assert p.returncode == 2 and "was not submitted" in p.stderr
    p = cli("collect", session, "--db", "x.sqlite", cwd=tmp_path, extra_env=slurm_cluster.env)
    assert p.returncode == 1, p.stderr  # failed runs stored: exit 1, as run
    assert "stored 8 runs (4 failed), 0 not finished yet" in p.stdout
    db = sqlite3.connect(tmp_path / "x.sqlite")
    rows = db.execute(
        "SELECT label, mode, status, exit_code, error, write_bytes, slurm_job_id, slurm_step_id "
        "FROM runs ORDER BY id"
    ).fetchall()
    assert len(rows) == 8
    for label, mode, status, code, err, wbytes, job, step in rows:
        assert job == int(job_id)
        if label == "btio":
            assert (status, code, err) == ("ok", 0, None)
            assert wbytes == (16**3 * 5 * 2 * 8 if mode == "write" else 0)
            assert isinstance(step, int)  # from the record: the rank's SLURM_STEP_ID
        elif mode == "write":
            assert (status, code, wbytes) == ("failed", 2, None)
            assert err.startswith("iokernels: error: IOK_AGREE_SECONDS=never")
        else:
            assert (status, code) == ("failed", None)
            assert err == "not run: the write step of this iteration failed"
    steps_ok = [r[7] for r in rows if r[0] == "btio"]
    assert len(set(steps_ok)) == 4  # every run its own job step
    finished = db.execute("SELECT finished FROM campaigns").fetchone()[0]
    assert finished
    # collecting again stores nothing twice
    p = cli("collect", session, "--db", "x.sqlite", cwd=tmp_path, extra_env=slurm_cluster.env)
    assert p.returncode == 0 and "stored 0 runs" in p.stdout
    assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 8
