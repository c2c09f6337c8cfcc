# SPDX-License-Identifier: BSD-3-Clause
"""A campaign on a cluster: env, Lustre striping and Slurm tables, from
submission through the real Slurm of slurmcluster.py (lfs a stand-in,
fakeslurm.py) to the store; mpiexec with env and a machine without lfs; and
a one-line error naming the file, the key and the fix for each bad table.
Time limits, cancelled and forgotten jobs: test_slurm_cluster.py."""

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import conftest
import fakeslurm
import pytest
from conftest import REPO, cli, rows
from iokernels_campaign.run import runner
from iokernels_campaign.spec import spec
from iokernels_campaign.store.store import Store

CLUSTER = """
[campaign]
name = "cluster"
modes = ["write", "read"]
[campaign.env]
ROMIO_HINTS = "{casedir}/romio-hints"
DARSHAN_LOGFILE = "{rundir}/{mode}.darshan"
DARSHAN_EXCLUDE_DIRS = "/proc,/etc"
IOK_TEST_API_TOKEN = "s3cr3t"
[campaign.lustre]
stripe_count = 4
stripe_size = "1M"
[slurm]
nodes = 1
ntasks-per-node = 4
partition = "debug"
account = "m0000"
qos = "normal"
constraint = "cpu"
time = "00:05:00"
prelude = ["module load darshan", "echo prelude ran"]
srun = ["--cpu-bind=cores"]
[[kernel]]
name = "btio"
backends = ["mpiio"]
ranks = [1, 4]
options = { grid = "16,16,16", dumps = 2 }
[kernel.env]
PNETCDF_HINTS = "nc_var_align_size=1048576"
"""


def run_here(tmp_path, env, *more):
    """`run c.toml` into x.sqlite and out/, no report, with env added."""
    args = ["run", "c.toml", "--db", "x.sqlite", "--out", "out", "--no-report", *more]
    return cli(*args, cwd=tmp_path, extra_env=env)


def submit(tmp_path, text, *more, env=None):
    (tmp_path / "c.toml").write_text(text)
    args = ["run", "c.toml", "--launcher", "sbatch", "--db", "x.sqlite", "--out", "out", *more]
    return cli(*args, cwd=tmp_path, extra_env=env)


def test_the_spec_reads_env_lustre_and_slurm(tmp_path, inv):
    (tmp_path / "c.toml").write_text(CLUSTER)
    c = spec.load(tmp_path / "c.toml", inv)
    case = c.cases[0]
    assert [k for k, _ in case.env] == [
        "ROMIO_HINTS",
        "DARSHAN_LOGFILE",
        "DARSHAN_EXCLUDE_DIRS",
        "IOK_TEST_API_TOKEN",
        "PNETCDF_HINTS",  # the block's over the campaign's
    ]
    env = case.environment(Path("/c"), Path("/c/iter2"), "read", 2)
    assert env["DARSHAN_LOGFILE"] == "/c/iter2/read.darshan"
    assert env["ROMIO_HINTS"] == "/c/romio-hints"
    assert case.lustre_settings == {"stripe_count": 4, "stripe_size": 1048576, "required": False}
    assert c.slurm.nodes == 1 and c.slurm.ntasks_per_node == 4
    assert c.slurm.time_seconds == 300 and c.slurm.prelude[0] == "module load darshan"
    # the environment and the striping are part of a case's identity
    plain = spec.load(
        _write(
            tmp_path,
            "p.toml",
            re.sub(r"\[campaign\.env\].*?\[slurm", "[slurm", CLUSTER, flags=re.S),
        ),
        inv,
    )
    assert plain.cases[0].case_hash("write") != case.case_hash("write")


def _write(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    return tmp_path / name


def test_the_cluster_example_loads_and_its_script_passes_bash(tmp_path, inv):
    c = spec.load(REPO / "campaigns" / "cluster-example.toml", inv)
    assert c.slurm.options["partition"] == "regular" and c.slurm.nodes == 2
    assert {x.lustre_settings["stripe_count"] for x in c.cases} == {8, 1}
    assert all(dict(x.env)["DARSHAN_LOGFILE"] == "{rundir}/{mode}.darshan" for x in c.cases)
    p = cli(
        "run",
        REPO / "campaigns" / "cluster-example.toml",
        "--launcher",
        "sbatch",
        "--dry-run",
        "--out",
        "out",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    (script,) = (tmp_path / "out" / "runs").glob("*/job.sbatch")
    check = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    text = script.read_text()
    assert "#SBATCH --ntasks-per-node=32\n" in text
    assert "#SBATCH --exclusive\n#SBATCH --mail-type=END\n" in text
    # the docs show the same file, whole: docs/slurm.md includes it (pymdownx.snippets)
    shown = '```toml\n--8<-- "campaigns/cluster-example.toml"\n```'
    assert shown in (REPO / "docs" / "slurm.md").read_text()


def test_the_sbatch_script_has_the_allocation_the_prelude_striping_and_env(tmp_path):
    p = submit(tmp_path, CLUSTER, "--dry-run")
    assert p.returncode == 0, p.stderr
    (script,) = (tmp_path / "out" / "runs").glob("*/job.sbatch")
    text = script.read_text()
    lines = text.splitlines()
    assert [x for x in lines if x.startswith("#SBATCH")][2:] == [
        "#SBATCH --nodes=1",
        "#SBATCH --ntasks-per-node=4",
        "#SBATCH --partition=debug",
        "#SBATCH --account=m0000",
        "#SBATCH --qos=normal",
        "#SBATCH --constraint=cpu",
        "#SBATCH --time=00:05:00",
    ]
    prelude = lines.index("module load darshan")
    assert lines[prelude + 1] == "echo prelude ran" and prelude < lines.index("worst=0")
    cases = sorted(script.parent.glob("*/case.json"), key=lambda f: text.index(f.parent.name))
    assert len(cases) == 2
    for case_json in cases:
        name = case_json.parent.name
        n = json.loads(case_json.read_text())["ranks"]
        assert f'if iok_stripe "$R"/{name} 4 1048576 0; then' in lines
        write = next(x for x in lines if f'iok_step "$R"/{name}/iter1 write ' in x)
        assert (
            f"env DARSHAN_EXCLUDE_DIRS=/proc,/etc srun -n {n} -N 1 --ntasks-per-node={n} "
            f'--export=ALL,ROMIO_HINTS="$R"/{name}/romio-hints,'
            f'DARSHAN_LOGFILE="$R"/{name}/iter1/write.darshan,IOK_TEST_API_TOKEN=s3cr3t,'
            "PNETCDF_HINTS=nc_var_align_size=1048576 --cpu-bind=cores "
        ) in write
    check = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


# run by srun before each task, in the task's environment: what the step saw
TASK_PROLOG = """#!/bin/bash
env | grep -E '^(DARSHAN|ROMIO|PNETCDF|IOK_TEST)_' | sort > "$LOG/step$SLURM_STEP_ID.env"
"""


def test_submit_run_collect_with_env_lustre_and_nodes(tmp_path, slurm_cluster):
    fake = fakeslurm.install(tmp_path, tools=("lfs",))  # no Lustre here: lfs stands in
    prolog = tmp_path / "prolog.sh"
    prolog.write_text(TASK_PROLOG)
    prolog.chmod(0o755)
    env = {**slurm_cluster.env, **fake, "PATH": f"{tmp_path / 'bin'}:{slurm_cluster.env['PATH']}"}
    text = CLUSTER.replace('constraint = "cpu"\n', "").replace(
        'srun = ["--cpu-bind=cores"]', f'srun = ["--task-prolog={prolog}"]'
    )  # the sandbox's nodes have no features
    p = submit(tmp_path, text, env=env)
    assert p.returncode == 0, p.stderr
    log = tmp_path / "log"
    (session,) = (tmp_path / "out" / "runs").iterdir()
    job_id = (session / "jobid").read_text().strip()
    assert slurm_cluster.wait_ended(job_id) == "COMPLETED"  # Slurm's word
    assert "prelude ran" in (session / f"slurm-{job_id}.out").read_text()
    # lfs setstripe on each case directory, before its runs
    stripes = (log / "lfs").read_text().splitlines()
    assert sorted(stripes) == sorted(
        f"setstripe -c 4 -S 1048576 {d}" for d in session.iterdir() if d.is_dir()
    )
    # every step saw the variables, the one with a comma too (step 0: the MPI probe)
    for step in range(1, 5):
        seen = dict(x.split("=", 1) for x in (log / f"step{step}.env").read_text().splitlines())
        assert seen["DARSHAN_EXCLUDE_DIRS"] == "/proc,/etc"
        assert seen["PNETCDF_HINTS"] == "nc_var_align_size=1048576"
        assert re.fullmatch(
            rf"{session}/btio-mpiio-n[14]-\w+/iter1/(write|read)\.darshan", seen["DARSHAN_LOGFILE"]
        )
    p = cli("collect", session, "--db", "x.sqlite", cwd=tmp_path, extra_env=env)
    assert p.returncode == 0, p.stderr
    assert "stored 4 runs (0 failed), 0 not finished yet" in p.stdout
    got = rows(tmp_path / "x.sqlite", "SELECT * FROM runs ORDER BY id")
    assert len(got) == 4
    for r in got:
        assert r["status"] == "ok", r["error"]
        assert (r["slurm_job_id"], r["nodes"], r["ranks_per_node"]) == (int(job_id), 1, r["ranks"])
        assert json.loads(r["hostnames"]) == ["n1"]
        env = json.loads(r["env"])
        assert env["IOK_TEST_API_TOKEN"] == "<redacted>"  # a secret's value is not stored
        assert env["DARSHAN_LOGFILE"] == f"{r['case_dir']}/{r['mode']}.darshan"
        assert (r["lustre_status"], r["lustre_stripe_count"], r["lustre_stripe_size_bytes"]) == (
            "applied",
            4,
            1048576,
        )
        assert r["lustre_message"] == (
            "lfs setstripe -c 4 -S 1048576; lfs getstripe -d: stripe_count: 4 "
            "stripe_size: 1048576 pattern: raid0 stripe_offset: -1"
        )
        # the ranks had the variable: the record lists ROMIO_HINTS as set
        record = json.loads(r["record"])
        assert record["hints"]["environment"]["ROMIO_HINTS"] == env["ROMIO_HINTS"]
    assert sorted(r["slurm_step_id"] for r in got) == [1, 2, 3, 4]  # a step per run
    # list and the report say where and how they ran
    p = cli("list", "x.sqlite", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    listed = [x.split() for x in p.stdout.splitlines()[2:]]
    assert sorted(x[-1] for x in listed) == [f"{job_id}.{i}" for i in range(1, 5)]
    assert all(x[-2] == "1" for x in listed)  # nodes
    p = cli("report", "x.sqlite", "-o", "r.html", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    page = (tmp_path / "r.html").read_text()
    for text in ("n1 x 4 ranks", "4 OSTs x 1024 KiB applied", f"<td>{job_id}</td>"):
        assert text in page, text
    assert "ROMIO_HINTS, DARSHAN_LOGFILE, DARSHAN_EXCLUDE_DIRS, IOK_TEST_API_TOKEN" in page


def test_srun_inside_an_allocation_places_ranks_and_exports_env(tmp_path, slurm_cluster):
    fake = fakeslurm.install(tmp_path, tools=("lfs",))
    prolog = tmp_path / "prolog.sh"
    prolog.write_text(TASK_PROLOG)
    prolog.chmod(0o755)
    text = CLUSTER.replace("ranks = [1, 4]", "ranks = [1]").replace(
        'modes = ["write", "read"]', 'modes = ["write"]'
    )
    text += '[[kernel]]\nname = "btio"\nlabel = "broken"\nbackends = ["mpiio"]\nranks = [1]\n'
    text += (
        'options = { grid = "16,16,16", dumps = 2 }\n[kernel.env]\nIOK_AGREE_SECONDS = "never"\n'
    )
    # the ok case first (job step 0), the broken one after it
    text = text.replace("[campaign]\n", '[campaign]\norder = "blocked"\n', 1)
    text = text.replace('constraint = "cpu"\n', "").replace(
        'srun = ["--cpu-bind=cores"]', f'srun = ["--task-prolog={prolog}"]'
    )
    (tmp_path / "c.toml").write_text(text)
    env = {**conftest.env(), **slurm_cluster.env, **fake}
    env["PATH"] = f"{tmp_path / 'bin'}:{slurm_cluster.env['PATH']}"
    run = ["run", "c.toml", "--db", "x.sqlite", "--out", "out", "--no-report", "--launcher", "srun"]
    p = subprocess.run(
        ["salloc", "-N", "1", "-n", "4", "--time=5", sys.executable, "-m", "iokernels_campaign"]
        + run,
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 1, p.stdout + p.stderr  # broken: a bad IOK_ variable in its environment
    job_id = int(re.search(r"Granted job allocation (\d+)", p.stderr).group(1))
    got = {r["label"]: r for r in rows(tmp_path / "x.sqlite", "SELECT * FROM runs")}
    ok = got["btio"]
    assert ok["status"] == "ok", ok["error"]
    assert ok["slurm_job_id"] == job_id and json.loads(ok["hostnames"]) == ["n1"]
    record = json.loads(ok["record"])
    assert record["hints"]["environment"]["ROMIO_HINTS"] == json.loads(ok["env"])["ROMIO_HINTS"]
    # MpiDefault=none here: the runner chose pmix for OpenMPI
    assert record["environment"]["slurm_step_id"] == 0 and record["nprocs"] == 1
    seen = (tmp_path / "log" / "step0.env").read_text()
    assert "DARSHAN_EXCLUDE_DIRS=/proc,/etc\n" in seen  # through srun's own environment
    # a run that failed before writing a record keeps the allocation's job
    assert (got["broken"]["status"], got["broken"]["slurm_job_id"]) == ("failed", job_id)
    assert got["broken"]["error"].startswith("iokernels: error: IOK_AGREE_SECONDS=never")


MIX_SRUN = """
[campaign]
name = "mix"
[slurm]
nodes = 2
ntasks-per-node = 2
[[mix]]
iterations = 1
[[mix.member]]
name = "btio"
backends = ["mpiio"]
ranks = 1
options = { grid = "16,16,16", dumps = 1, verify = true }
[[mix.member]]
name = "btio"
backends = ["null"]
ranks = 1
options = { grid = "16,16,16", dumps = 1 }
"""


def test_a_mix_under_srun_inside_an_allocation_gives_each_member_a_node(tmp_path, slurm_cluster):
    """--launcher srun places a mix's members as the batch script does
    (test_slurm_cluster.py): the plain shape, -n 2 -N 1 at 2 a node, would
    run both on n1."""
    (tmp_path / "c.toml").write_text(MIX_SRUN)
    env = {**conftest.env(), **slurm_cluster.env}
    run = ["run", "c.toml", "--db", "x.sqlite", "--out", "out", "--no-report", "--launcher", "srun"]
    p = subprocess.run(
        ["salloc", "-N", "2", "--ntasks-per-node=2", "--time=5", sys.executable, "-m",
         "iokernels_campaign"] + run,
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    (run_row,) = rows(tmp_path / "x.sqlite", "SELECT * FROM runs")
    assert (run_row["kernel"], run_row["status"]) == ("mix", "ok"), run_row["error"]
    members = rows(tmp_path / "x.sqlite", "SELECT * FROM mix_runs ORDER BY member, mode")
    assert len(members) == 4  # 2 members x (alone, together)
    for m in members:
        record = json.loads(m["record"])
        assert record["environment"]["hostnames"] == [f"n{m['member']}"], m
        assert record["environment"]["slurm_step_id"] == 0


MPIEXEC = """
[campaign]
name = "local"
modes = ["write"]
[campaign.env]
ROMIO_HINTS = "{casedir}/romio-hints"
MY_PASSWORD = "hunter2"
[campaign.lustre]
stripe_count = 2
[[kernel]]
name = "btio"
backends = ["mpiio"]
ranks = [1, 4]
options = { grid = "16,16,16", dumps = 1 }
"""


def _no_lfs_path(tmp_path):
    """PATH with mpiexec but no lfs (as on a laptop)."""
    d = tmp_path / "nolfs"
    d.mkdir()
    for tool in ("mpiexec", "mpirun", "orterun"):
        if shutil.which(tool):
            (d / tool).symlink_to(shutil.which(tool))
    return {"PATH": f"{d}:{Path(sys.executable).parent}:/usr/bin:/bin"}


def test_mpiexec_runs_get_the_env_and_a_missing_lfs_is_said_once(tmp_path):
    path = _no_lfs_path(tmp_path)
    (tmp_path / "c.toml").write_text(MPIEXEC)
    p = run_here(tmp_path, path)
    assert p.returncode == 0, p.stdout + p.stderr
    said = [x for x in p.stdout.splitlines() if x.startswith("lustre:")]
    assert len(said) == 1 and said[0].startswith(
        "lustre: striping (count 2) skipped: lfs not found on "
    )
    for r in rows(tmp_path / "x.sqlite", "SELECT * FROM runs"):
        assert r["status"] == "ok", r["error"]
        assert r["lustre_status"] == "skipped" and r["lustre_stripe_count"] == 2
        env = json.loads(r["env"])
        assert env["MY_PASSWORD"] == "<redacted>"
        record = json.loads(r["record"])
        assert record["hints"]["environment"]["ROMIO_HINTS"] == env["ROMIO_HINTS"]
    # required = true: no lfs is an error before anything runs
    (tmp_path / "r.toml").write_text(
        MPIEXEC.replace("stripe_count = 2", "stripe_count = 2\nrequired = true")
    )
    p = cli("run", "r.toml", "--db", "r.sqlite", "--out", "r", cwd=tmp_path, extra_env=path)
    assert p.returncode == 2
    assert p.stderr.strip() == (
        "iokernels-campaign: error: lfs not found on PATH and case 'btio mpiio n1' requires "
        "striping (lustre required = true): run on a Lustre client, or set required = false"
    )
    assert not (tmp_path / "r").exists()


def test_mpiexec_runs_stripe_each_case_directory_first(tmp_path):
    fake = fakeslurm.install(tmp_path, tools=("lfs",))
    (tmp_path / "c.toml").write_text(MPIEXEC)
    p = run_here(tmp_path, fake)
    assert p.returncode == 0, p.stdout + p.stderr
    assert not [x for x in p.stdout.splitlines() if x.startswith("lustre:")]  # nothing to say
    got = rows(tmp_path / "x.sqlite", "SELECT * FROM runs")
    assert sorted((tmp_path / "log" / "lfs").read_text().splitlines()) == sorted(
        f"setstripe -c 2 {Path(r['case_dir']).parent}" for r in got
    )
    for r in got:
        assert (r["status"], r["lustre_status"]) == ("ok", "applied")
        assert r["lustre_message"] == (
            "lfs setstripe -c 2; lfs getstripe -d: stripe_count: 2 stripe_size: 1048576 "
            "pattern: raid0 stripe_offset: -1"
        )


def test_required_striping_that_fails_runs_nothing_of_the_case(tmp_path):
    fake = fakeslurm.install(tmp_path, tools=("lfs",))
    fake["FAKE_LFS_FAIL"] = "1"
    text = MPIEXEC.replace("stripe_count = 2", "stripe_count = 2\nrequired = true")
    (tmp_path / "c.toml").write_text(text)
    p = run_here(tmp_path, fake)
    assert p.returncode == 1
    for r in rows(tmp_path / "x.sqlite", "SELECT * FROM runs"):
        assert r["status"] == "failed" and r["lustre_status"] == "failed"
        assert r["error"].startswith(
            "not run: striping is required ([lustre] required = true) and was failed: "
            "lfs setstripe -c 2: error on ioctl"
        )
    assert not list((tmp_path / "out").glob("runs/*/*/iter1/write.stdout"))


def test_a_version_2_store_gains_the_new_columns(tmp_path):
    db = tmp_path / "old.sqlite"
    Store(db).close()
    con = sqlite3.connect(db)
    for col in ("env", "hostnames", "slurm_job_id"):
        con.execute(f"ALTER TABLE runs DROP COLUMN {col}")
    con.execute("UPDATE meta SET value = '2'")
    con.commit()
    con.close()
    Store(db).close()
    cols = {r["name"] for r in rows(db, "PRAGMA table_info(runs)")}
    assert {"env", "hostnames", "slurm_job_id", "round", "position"} <= cols
    assert {"case_index"} <= cols
    assert {"overlap", "overlap_call", "async_write"} <= cols  # and version 6's
    assert rows(db, "SELECT value FROM meta")[0]["value"] == "6"


BLOCK = """
[[kernel]]
name = "btio"
backends = ["mpiio"]
options = { grid = "16,16,16" }
"""

BAD = [
    (
        "[campaign.lustre]\nstripe-count = 4\n",
        "[campaign.lustre]: unknown key 'stripe-count' (did you mean stripe_count? "
        "known: stripe_count, stripe_size, required)",
    ),
    ("[campaign.lustre]\nstripe_count = 0\n", "stripe_count must be a whole number of OSTs"),
    (
        '[campaign.lustre]\nstripe_size = "1000"\n',
        'stripe_size must be bytes or a size such as "1M" or "4M", a multiple of 64 KiB, '
        "got '1000'",
    ),
    (
        "[campaign.lustre]\nrequired = true\n",
        "[campaign.lustre]: give stripe_count, stripe_size or both",
    ),
    (
        "[slurm]\nntasks_per_node = 4\n",
        "[slurm]: unknown key 'ntasks_per_node' (did you mean ntasks-per-node? known: nodes, "
        "ntasks-per-node, partition, account, qos, constraint, time, prelude, sbatch, srun, mpi; "
        "any other #SBATCH option goes in sbatch = { ... })",
    ),
    ('[slurm]\ntime = "1 hour"\n', '[slurm]: time must be a Slurm time such as "01:30:00"'),
    ("[slurm]\nnodes = 0\n", "[slurm]: nodes must be a whole number, 1 or more, got 0"),
    (
        '[slurm]\nsbatch = { time = "1:00:00" }\n',
        "[slurm]: sbatch.time: write time = ... in [slurm] itself",
    ),
    (
        '[slurm]\nsbatch = { output = "x" }\n',
        "[slurm]: sbatch.output is not allowed: the job's output goes to",
    ),
    (
        '[slurm]\nmpi = "PMIx 4"\n',
        '[slurm]: mpi must be a plugin of srun --mpi=list such as "pmix"',
    ),
    (
        '[slurm]\nmpi = "pmix"\nsrun = ["--mpi=pmi2"]\n',
        "[slurm]: srun has --mpi and mpi is given: keep mpi = 'pmix' only",
    ),
    (
        "[slurm]\nprelude = 5\n",
        '[slurm]: prelude must be a list of shell lines, such as ["module load hdf5"]',
    ),
    (
        "[slurm]\nnodes = 1\nntasks-per-node = 2\n",
        "[slurm]: case 'btio mpiio n4' needs 4 ranks but nodes x ntasks-per-node is "
        "1 x 2 = 2: raise nodes",
    ),
    (
        '[slurm]\nsrun = ["--export=NONE"]\n[campaign.env]\nA = "1"\n',
        "srun has --export and the campaign sets env",
    ),
    (
        '[campaign.env]\n"BAD-NAME" = "1"\n',
        "[campaign.env]: 'BAD-NAME' is not an environment variable name",
    ),
    ('[campaign.env]\nA = "x\\ny"\n', "[campaign.env]: A must be one line of printable"),
    (
        "[campaign.env]\nA = true\n",
        '[campaign.env]: A must be a string such as "1" or "/path", got True',
    ),
    (
        '[campaign.env]\nA = "{dir}/x"\n',
        "[campaign.env]: A uses an unknown placeholder {dir} (known: {case}, {casedir}, {rundir}, "
        "{mode}, {iteration}; write {{ and }} for literal braces)",
    ),
    ('[campaign.env]\nA = "{rundir"\n', "[campaign.env]: A = '{rundir': "),
    ("[campaign]\nenviron = 1\n", "[campaign]: unknown key 'environ' (known: description, env,"),
]


@pytest.mark.parametrize("head, expected", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_cluster_tables_are_one_line_naming_file_key_and_fix(tmp_path, inv, head, expected):
    # [campaign] tables go before the blocks; ranks 1 and 4 so that the allocation check bites
    text = "[campaign]\nranks = [1, 4]\n" + head.replace("[campaign]\n", "") + BLOCK
    path = _write(tmp_path, "c.toml", text)
    with pytest.raises(spec.CampaignError) as e:
        spec.load(path, inv)
    msg = str(e.value)
    assert msg.startswith(f"{path}: ") and expected in msg, msg
    assert "\n" not in msg


def test_a_bad_kernel_env_names_its_block(tmp_path, inv):
    text = BLOCK + '[kernel.env]\nX = "{nope}"\n[kernel.lustre]\nstripe_count = 2\n'
    path = _write(tmp_path, "c.toml", text)
    with pytest.raises(spec.CampaignError) as e:
        spec.load(path, inv)
    assert str(e.value).startswith(
        f"{path}: [[kernel]] block 1 (btio): [kernel.env]: X uses an unknown placeholder {{nope}}"
    )


def test_runner_collect_refuses_a_session_of_another_store(tmp_path):
    with pytest.raises(runner.RunnerError):
        (tmp_path / "s").mkdir()
        (tmp_path / "s" / "campaign.json").write_text('{"id": "nope"}')
        runner.collect(tmp_path / "s", Store(tmp_path / "x.sqlite"), echo=lambda *_: None)
