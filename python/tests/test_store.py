# SPDX-License-Identifier: BSD-3-Clause
"""The results store: WAL mode, one transaction per run, and two campaigns
writing the same file at once lose nothing."""

import json
import sqlite3
import subprocess
import sys
import time

from conftest import cli, env
from iokernels_campaign.store.store import Store

WRITER = """
import json, sys, time
from pathlib import Path
from iokernels_campaign.run.outcome import Outcome
from iokernels_campaign.run.runner import Session
from iokernels_campaign.spec.slurm import Slurm
from iokernels_campaign.spec.spec import Case, Campaign
from iokernels_campaign.store.store import Store

db, name, record, go, n = sys.argv[1:6]
rec = json.loads(Path(record).read_text())
store = Store(db)
camp = Campaign(name, "", Path("x.toml"), [], Slurm())
case = Case("btio", "btio", "mpiio", 1, (("grid", "16,16,16"),), ("write",), int(n), 60.0, "")
store.begin_campaign(name, camp, "mpiexec", "iokernels", "out", "host", "now")
while not Path(go).exists():
    time.sleep(0.01)
for i in range(1, int(n) + 1):
    store.add_run(name, case, "write", i, Outcome(Path("."), "ok", 0, None, rec, 0.0, 1.0))
    time.sleep(0.002)  # as between two runs: lets the other writer in
store.finish_campaign(name, "later")
"""


def test_wal_mode(tmp_path):
    Store(tmp_path / "s.sqlite").close()
    con = sqlite3.connect(tmp_path / "s.sqlite")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_two_writers_at_once_lose_nothing(tiny, tmp_path):
    _, tiny_db, _ = tiny
    con = sqlite3.connect(tiny_db)
    rec = con.execute(
        "SELECT record FROM runs WHERE status='ok' AND backend='mpiio' AND mode='write'"
    ).fetchone()[0]
    (tmp_path / "record.json").write_text(rec)
    nphases = sum(len(p["phases"]) for p in json.loads(rec)["passes"])
    db, go, n = tmp_path / "shared.sqlite", tmp_path / "go", 150
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WRITER,
                str(db),
                name,
                str(tmp_path / "record.json"),
                str(go),
                str(n),
            ],
            env=env(),
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("A", "B")
    ]
    time.sleep(1.0)  # both have opened the store and wait
    go.touch()
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    con = sqlite3.connect(db)
    for name in ("A", "B"):
        its = [
            r[0]
            for r in con.execute(
                "SELECT iteration FROM runs WHERE campaign_id = ? ORDER BY iteration", (name,)
            )
        ]
        assert its == list(range(1, n + 1))
    assert con.execute("SELECT COUNT(*) FROM passes").fetchone()[0] == 2 * n * 2
    assert con.execute("SELECT COUNT(*) FROM phases").fetchone()[0] == 2 * n * nphases
    assert con.execute("SELECT COUNT(*) FROM campaigns WHERE finished = 'later'").fetchone()[0] == 2


TWO = """
[campaign]
name = "{name}"
iterations = 4
[[kernel]]
name = "btio"
backends = ["null"]
options = {{ grid = "12,12,12", dumps = 1 }}
"""


def test_two_campaigns_at_once_into_one_store(tmp_path):
    for name in ("one", "two"):
        (tmp_path / f"{name}.toml").write_text(TWO.format(name=name))
    cmd = [sys.executable, "-m", "iokernels_campaign", "run"]
    procs = [
        subprocess.Popen(
            [*cmd, f"{name}.toml", "--db", "s.sqlite", "--out", "out", "--no-report"],
            cwd=tmp_path,
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("one", "two")
    ]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, out + err
    con = sqlite3.connect(tmp_path / "s.sqlite")
    got = con.execute(
        "SELECT c.name, COUNT(*), SUM(r.status = 'ok') FROM runs r JOIN campaigns c "
        "ON c.id = r.campaign_id GROUP BY c.name ORDER BY c.name"
    ).fetchall()
    assert got == [("one", 4, 4), ("two", 4, 4)]
    assert len(list((tmp_path / "out" / "runs").iterdir())) == 2  # a directory each
    p = cli("list", "s.sqlite", "--campaign", "two", cwd=tmp_path)
    assert len([x for x in p.stdout.splitlines() if " two " in x]) == 4
