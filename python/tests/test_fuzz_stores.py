# SPDX-License-Identifier: BSD-3-Clause
"""Results stores mutated many ways (seeded, bounded): cut at any length,
bytes flipped anywhere, tables dropped or renamed, columns of the wrong type,
the version changed. Every command that reads a store (list, export,
compare, report) and collect, which writes one, either works or says why in
one `iokernels-campaign: error:` line, exit 1 or 2: never a traceback, never
the backstop for unexpected errors."""

import random
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from conftest import BIN, record_of
from iokernels_campaign import cli
from iokernels_campaign.run.outcome import Outcome
from iokernels_campaign.spec.slurm import Slurm
from iokernels_campaign.spec.spec import Campaign, Case
from iokernels_campaign.store.store import Store

SEED = 20261125
CASES = 400
BUDGET_S = 45  # the test stops mutating after this (it says how far it got)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A store with ok runs (a real record of the null backend) and failed ones."""
    d = tmp_path_factory.mktemp("fuzzbase")
    record = record_of(d, "btio", "--backend", "null", "--grid", "12,12,12", "--dumps", "1")
    store = Store(d / "base.sqlite")
    camp = Campaign("fz", "", Path("fz.toml"), [], Slurm())
    store.begin_campaign("fz1", camp, "mpiexec", str(BIN), "out", "host", "now")
    for i, ranks in enumerate((1, 4, 9)):
        args = (("dumps", str(i + 1)),)
        case = Case("btio", "btio", "null", ranks, args, ("write",), 1, 60.0, "")
        ok = Outcome(d, "ok", 0, None, record, 0.0, 1.0)
        store.add_run("fz1", case, "write", 1, ok)
        bad = Outcome(d, "failed", 2, "iokernels: error: no", None, 0.0, 1.0)
        store.add_run("fz1", case, "write", 2, bad)
    store.close()
    return d / "base.sqlite"


SQL_MUTATIONS = [
    "DROP TABLE runs",
    "DROP TABLE passes",
    "DROP TABLE phases",
    "DROP TABLE campaigns",
    "DROP TABLE meta",
    "DELETE FROM meta",
    "UPDATE meta SET value = '9'",
    "UPDATE meta SET value = 'x'",
    "ALTER TABLE runs RENAME COLUMN kernel TO k",
    "ALTER TABLE runs RENAME COLUMN write_bandwidth TO wb",
    "ALTER TABLE passes RENAME COLUMN op TO o",
    "ALTER TABLE campaigns RENAME TO c2",
    "CREATE TABLE extra (x)",
    "UPDATE runs SET ranks = 'many'",
    "UPDATE runs SET write_bandwidth = 'fast'",
    "UPDATE runs SET record = '{not json'",
    "UPDATE runs SET record = '[]'",
    "UPDATE runs SET env = 'nope'",
    "UPDATE runs SET hostnames = '{'",
    "UPDATE runs SET started = 'yesterday'",
    "UPDATE passes SET bytes = NULL",
    "UPDATE phases SET job = 'slow'",
    "DELETE FROM campaigns",
]


def mutate(rng, base, path):
    """A mutated copy of base at path; returns what was done."""
    data = bytearray(base.read_bytes())
    kind = rng.randrange(5)
    if kind == 0:
        n = rng.randrange(len(data))
        path.write_bytes(bytes(data[:n]))
        return f"cut at {n}"
    if kind == 1:
        for _ in range(rng.randint(1, 20)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        path.write_bytes(bytes(data))
        return "bytes flipped"
    if kind == 2:  # the header and the schema page
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(min(len(data), 4096))] = rng.randrange(256)
        path.write_bytes(bytes(data))
        return "page 1 flipped"
    shutil.copy(base, path)
    sqls = rng.sample(SQL_MUTATIONS, rng.randint(1, 3))
    con = sqlite3.connect(path)
    for sql in sqls:
        try:
            con.execute(sql)
        except sqlite3.Error:
            pass  # an earlier mutation dropped what this one changes
    con.commit()
    con.close()
    return "; ".join(sqls)


def check(capsys, args, what):
    rc = cli.main([str(a) for a in args])
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert "Traceback" not in out.err, (what, args, out.err)
    if rc == 1 and args[0] == "compare" and not lines:  # nothing in common: said on stdout
        assert "0 cases in both" in out.out, (what, out.out)
        return rc
    if rc == 0:
        assert not any(x.startswith("iokernels-campaign: error:") for x in lines), (what, lines)
        return rc
    assert rc in (1, 2) and len(lines) == 1, (what, args, rc, lines)
    assert lines[0].startswith("iokernels-campaign: error: "), (what, args, lines)
    assert "unexpected" not in lines[0], (what, args, lines)  # the backstop is not the fix
    return rc


def test_mutated_stores_work_or_say_why_in_one_line(base, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(base, "good.sqlite")
    session = tmp_path / "session"
    session.mkdir()
    (session / "campaign.json").write_text('{"id": "fz1"}\n')
    rng = random.Random(SEED)
    start, outcomes, done = time.monotonic(), {0: 0, 1: 0, 2: 0}, 0
    for k in range(CASES):
        if time.monotonic() - start > BUDGET_S:
            break
        db = tmp_path / f"m{k}.sqlite"
        what = f"case {k}: {mutate(rng, base, db)}"
        for args in (
            ["list", db],
            ["export", db, "--csv", "x.csv"],
            ["compare", "good.sqlite", db],
        ):
            outcomes[check(capsys, args, what)] += 1
        if k % 8 == 0:  # the report draws figures: fewer of them
            outcomes[check(capsys, ["report", db, "-o", "r.html"], what)] += 1
        if k % 4 == 0:
            outcomes[check(capsys, ["collect", session, "--db", db, "--job-ended"], what)] += 1
        for f in tmp_path.glob(f"m{k}.sqlite*"):
            f.unlink()
        done += 1
    print(f"{done} mutated stores, outcomes by exit code {outcomes}")
    assert done >= 40, done
    # the mutations reach both sides: stores still read, stores refused
    assert outcomes[0] > 10 and outcomes[2] > 10, outcomes
