# SPDX-License-Identifier: BSD-3-Clause
"""Campaigns in rounds (issue 51): the interleaved order and its balance,
the round and position each run records, compare's refusal to name a winner
between sides that ran at different times (and its call once they are
interleaved: run A.toml B.toml --interleave), the table's Hodges-Lehmann
ratio, older stores still read, and the A/A calibration against a planted
drift (a stand-in binary whose bandwidth slows run after run)."""

import json
import os
import sqlite3
import stat
import statistics
import sys

import pytest
from conftest import BIN, MIB, cli, report_of, rows, run_row
from iokernels_campaign.report import aggregate, calibration, tables, timing
from iokernels_campaign.run import order
from iokernels_campaign.store.store import STORE_VERSION, Store

CASES = """
[campaign]
name = "NAME"
iterations = ITER
SEED
[[kernel]]
name = "btio"
backends = BACKENDS
ranks = [1]
options = { grid = "8,8,8", dumps = 1 }
"""


def campaign(d, name, backends='["null"]', iterations=4, seed="", extra=""):
    text = CASES.replace("NAME", name).replace("ITER", str(iterations))
    text = text.replace("SEED", seed + "\n" + extra).replace("BACKENDS", backends)
    (d / f"{name}.toml").write_text(text)
    return f"{name}.toml"


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7])
def test_williams_rounds_are_balanced(n):
    runs = order.schedule([2 * n] * n, "interleaved", seed=11)
    rounds = {}
    for rnd, item, it in runs:
        assert rnd == it
        rounds.setdefault(rnd, []).append(item)
    assert all(sorted(r) == list(range(n)) for r in rounds.values())  # each case once a round
    first, follows = order.balance(runs)
    # over the design's rows (n, or 2n when n is odd) each case leads equally often ...
    rows_n = len(order.williams(n))
    whole = order.schedule([rows_n] * n, "interleaved", seed=11)
    first, follows = order.balance(whole)
    assert sorted(first) == list(range(n))
    assert len(set(first.values())) == 1, first
    # ... and follows every other case equally often
    pairs = {(a, b) for a in range(n) for b in range(n) if a != b}
    assert set(follows) == pairs
    assert len(set(follows.values())) == 1, follows


def test_seed_decides_the_order_and_blocked_is_todays():
    a = order.schedule([3, 3, 3], "interleaved", seed=5)
    assert a == order.schedule([3, 3, 3], "interleaved", seed=5)
    others = {tuple(order.schedule([3, 3, 3], "interleaved", seed=s)) for s in range(20)}
    assert len(others) > 1
    assert order.schedule([2, 1], "blocked", seed=5) == [(1, 0, 1), (2, 0, 2), (1, 1, 1)]
    # a case with fewer iterations sits out the later rounds
    assert [it for _, i, it in order.schedule([3, 1], "interleaved", 1) if i == 1] == [1]


def test_campaign_runs_in_rounds_and_records_them(tmp_path):
    f = campaign(tmp_path, "rounds", '["null", "mpiio"]', iterations=3, seed="seed = 42")
    p = cli("run", f, "--db", "s.sqlite", "--no-report", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "order: interleaved in rounds (each round every case once), seed 42" in p.stdout
    runs = rows(tmp_path / "s.sqlite", "SELECT * FROM runs ORDER BY started")
    assert [r["round"] for r in runs] == [1, 1, 2, 2, 3, 3]
    assert [r["position"] for r in runs] == [1, 2, 3, 4, 5, 6]
    assert all(r["round"] == r["iteration"] for r in runs)
    assert {(r["backend"], r["case_index"]) for r in runs} == {("null", 1), ("mpiio", 2)}
    expected = [("null", "mpiio")[i] for _, i, _ in order.schedule([3, 3], "interleaved", 42)]
    assert [r["backend"] for r in runs] == expected
    (c,) = rows(tmp_path / "s.sqlite", "SELECT * FROM campaigns")
    assert (c["run_order"], c["seed"], c["joint"]) == ("interleaved", 42, None)
    p = cli("export", "s.sqlite", "--csv", "r.csv", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    head = (tmp_path / "r.csv").read_text().splitlines()[0].split(",")
    assert {"round", "position", "started"} <= set(head)
    # blocked on request: each case's iterations back to back, as before
    g = campaign(tmp_path, "blocked", '["null", "mpiio"]', iterations=2, extra='order = "blocked"')
    p = cli("run", g, "--db", "b.sqlite", "--no-report", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    runs = rows(tmp_path / "b.sqlite", "SELECT backend, iteration FROM runs ORDER BY started")
    assert [(r["backend"], r["iteration"]) for r in runs] == [
        ("null", 1),
        ("null", 2),
        ("mpiio", 1),
        ("mpiio", 2),
    ]
    (c,) = rows(tmp_path / "b.sqlite", "SELECT * FROM campaigns")
    assert c["run_order"] == "blocked"


def test_resume_continues_the_session_in_its_rounds(tmp_path):
    f = campaign(tmp_path, "cut", '["null", "mpiio"]', iterations=3)
    p = cli("run", f, "--db", "s.sqlite", "--no-report", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    db = tmp_path / "s.sqlite"
    whole = rows(db, "SELECT backend, iteration, round, position FROM runs ORDER BY position")
    # as if interrupted after position 3: the later runs are not stored, the session unfinished
    con = sqlite3.connect(db)
    late = "SELECT id FROM runs WHERE position > 3"
    for table in ("passes", "phases"):
        con.execute(f"DELETE FROM {table} WHERE run_id IN ({late})")
    con.execute("DELETE FROM runs WHERE position > 3")
    con.execute("UPDATE campaigns SET finished = NULL")
    con.commit()
    con.close()
    p = cli("run", f, "--db", "s.sqlite", "--no-report", "--resume", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "3 of 6 runs stored, 3 to run" in p.stdout
    (seed,) = {c["seed"] for c in rows(db, "SELECT seed FROM campaigns")}
    assert f"order: interleaved in rounds (each round every case once), seed {seed}" in p.stdout
    again = rows(db, "SELECT backend, iteration, round, position FROM runs ORDER BY id")
    assert again[3:] == whole[3:]  # the rest in the session's own order
    assert sorted(again, key=lambda r: r["position"]) == whole


TWO_KERNELS = """
[campaign]
name = "two"
iterations = 1
seed = SEED
[[kernel]]
name = "btio"
label = "first"
backends = ["mpiio"]
ranks = [1]
options = { grid = "8,8,8", dumps = 1 }
[[kernel]]
name = "btio"
label = "second"
backends = ["mpiio"]
ranks = [1]
options = { grid = "12,12,12", dumps = 1 }
"""


def test_the_report_lists_kernels_in_the_files_order_whatever_ran_first(tmp_path):
    # seed 0 runs the second kernel first: the report's figures and tables
    # must still follow the file (kernel-1.png is "first"), run after run
    seed = 0
    assert order.schedule([1, 1], "interleaved", seed)[0][1] == 1  # the premise
    (tmp_path / "two.toml").write_text(TWO_KERNELS.replace("SEED", str(seed)))
    p = cli("run", "two.toml", "--db", "s.sqlite", "--no-report", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    ran = rows(tmp_path / "s.sqlite", "SELECT label, case_index FROM runs ORDER BY started")
    assert [(r["label"], r["case_index"]) for r in ran] == [("second", 2), ("first", 1)]
    s = Store(tmp_path / "s.sqlite", readonly=True)
    summaries = aggregate.summarize(s.runs())
    s.close()
    assert aggregate.kernels(summaries) == ["first", "second"]
    page = report_of(tmp_path, "s.sqlite", tmp_path / "r.html")
    assert page.index("<h3>first</h3>") < page.index("<h3>second</h3>")
    drawn = sorted(x.name for x in (tmp_path / "r-plots").glob("kernel-*.png"))
    assert drawn == ["kernel-1.png", "kernel-2.png"]
    assert page.index("Time per phase: first") < page.index("Time per phase: second")


def test_campaign_refuses_an_unknown_order(tmp_path):
    f = campaign(tmp_path, "bad", extra='order = "random"')
    p = cli("run", f, "--db", "s.sqlite", "--dry-run", cwd=tmp_path)
    assert p.returncode == 2
    assert 'order must be "interleaved" or "blocked", got \'random\'' in p.stderr


def _side(label, bws, t0, step=60.0):
    return [
        run_row(i, "btio", "mpiio", None, 4, "write", bw, started=t0 + i * step, elapsed=5.0)
        for i, bw in enumerate(bws)
    ]


def test_compare_names_no_winner_between_sides_run_apart():
    t0 = 1_795_000_000.0  # 2026-11-18 11:06:40 UTC
    a = _side("A", [100, 101, 102, 103, 104], t0)
    b = _side("B", [90, 91, 92, 93, 94], t0 + 3600)
    text, _ = tables.compare_table(a, b)
    row = next(x for x in text.splitlines() if x.startswith("btio"))
    assert row.split()[-1] == "untested"
    assert (
        "untested: the sides ran at different times (A 11:06-11:10, B 12:06-12:10 UTC); "
        "interleave them: iokernels-campaign run A.toml B.toml --interleave --db X"
    ) in text
    # the same figures, their runs alternating in time: a call
    b = _side("B", [90, 91, 92, 93, 94], t0 + 30)
    text, _ = tables.compare_table(a, b)
    row = next(x for x in text.splitlines() if x.startswith("btio"))
    assert row.split()[-1] == "worse"
    # overlapping spans, each side in one stretch: blocked in time
    a = _side("A", [100, 101, 102, 103, 104], t0, step=10)
    b = _side("B", [90, 91, 92, 93, 94], t0 + 44, step=10) + _side("B", [95], t0 + 1)
    assert timing.apart(a, b).startswith("untested: blocked in time")


def test_compare_prints_the_hodges_lehmann_ratio_its_interval_and_p():
    t0 = 1_795_000_000.0
    va, vb = [90, 95, 100, 105, 110], [101, 102, 103, 300, 400]
    text, _ = tables.compare_table(_side("A", va, t0), _side("B", vb, t0 + 30))
    head, _, row = text.splitlines()[:3]
    assert head.split()[6:11] == ["B/A", "95%", "interval", "p", "runs"]
    cells = row.split()
    hl = statistics.median(b / a for a in va for b in vb)
    assert f"{hl:.2f}" == cells[6] != "1.03"  # not the ratio of medians, 103 / 100
    low, high = (float(x) for x in cells[7].split("-"))
    assert low < hl < high
    assert 0 < float(cells[8]) <= 1 and cells[9] == "5/5"


def test_compare_of_two_stores_run_one_after_the_other_then_interleaved(tmp_path):
    fa = campaign(tmp_path, "a")
    fb = campaign(tmp_path, "b")
    for f, db in ((fa, "a.sqlite"), (fb, "b.sqlite")):
        p = cli("run", f, "--db", db, "--no-report", cwd=tmp_path)
        assert p.returncode == 0, p.stderr
    p = cli("compare", "a.sqlite", "b.sqlite", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "untested: the sides ran at different times (A " in p.stdout
    assert "iokernels-campaign run A.toml B.toml --interleave --db X" in p.stdout
    row = next(x for x in p.stdout.splitlines() if x.startswith("btio null n1"))
    assert row.split()[-1] == "untested"
    # both files in one session: rounds over the union, each run under its file's campaign
    p = cli("run", fa, fb, "--interleave", "--db", "ab.sqlite", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    got = rows(
        tmp_path / "ab.sqlite",
        "SELECT c.name, r.round, r.position, c.joint FROM runs r "
        "JOIN campaigns c ON c.id = r.campaign_id ORDER BY r.position",
    )
    assert [g["round"] for g in got] == [1, 1, 2, 2, 3, 3, 4, 4]
    assert sorted(g["name"] for g in got[:2]) == ["a", "b"]
    assert len({g["joint"] for g in got}) == 1 and got[0]["joint"]
    p = cli(
        "compare", "ab.sqlite", "ab.sqlite", "--campaign-a", "a", "--campaign-b", "b", cwd=tmp_path
    )
    assert p.returncode == 0, p.stderr
    row = next(x for x in p.stdout.splitlines() if x.startswith("btio null n1"))
    assert row.split()[-1] in ("same", "better", "worse"), p.stdout
    assert "ran at different times" not in p.stdout and "blocked in time" not in p.stdout
    # several files without --interleave: refused, the flag named
    p = cli("run", fa, fb, "--db", "x.sqlite", cwd=tmp_path)
    assert p.returncode == 2 and "give --interleave" in p.stderr


def test_a_version_3_store_is_read_and_migrated(tmp_path):
    f = campaign(tmp_path, "old", iterations=1)
    p = cli("run", f, "--db", "s.sqlite", "--no-report", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    db = sqlite3.connect(tmp_path / "s.sqlite")
    for table, col in (("runs", "round"), ("runs", "position"), ("campaigns", "run_order")):
        db.execute(f"ALTER TABLE {table} DROP COLUMN {col}")
    db.execute("ALTER TABLE campaigns DROP COLUMN seed")
    db.execute("ALTER TABLE campaigns DROP COLUMN joint")
    db.execute("UPDATE meta SET value = '3' WHERE key = 'store_version'")
    db.commit()
    db.close()
    s = Store(tmp_path / "s.sqlite", readonly=True)
    (r,) = s.runs()
    assert r["round"] is None and r["run_order"] is None and r["status"] == "ok"
    s.close()
    s = Store(tmp_path / "s.sqlite")
    (r,) = s.runs()
    assert r["round"] is None and "position" in r
    s.close()
    (v,) = rows(tmp_path / "s.sqlite", "SELECT value FROM meta WHERE key = 'store_version'")
    assert v["value"] == str(STORE_VERSION)


def test_clopper_pearson_interval():
    assert calibration.clopper_pearson(0, 10)[0] == 0.0
    assert calibration.clopper_pearson(0, 10)[1] == pytest.approx(0.3085, abs=1e-4)
    low, high = calibration.clopper_pearson(3, 10)
    assert low == pytest.approx(0.0667, abs=1e-4) and high == pytest.approx(0.6525, abs=1e-4)
    assert calibration.clopper_pearson(10, 10)[1] == 1.0


STAND_IN = """#!PYTHON
# the real binary, its reported write bandwidth slowing by 5% a run
import json, subprocess, sys
p = subprocess.run(["REAL", *sys.argv[1:]])
out = [b for a, b in zip(sys.argv, sys.argv[1:]) if a == "--json" and b.endswith(".jsonl")]
if p.returncode == 0 and out:
    with open("COUNTER", "a+") as c:
        c.seek(0)
        n = len(c.read())
        c.write(".")
    path = out[0]
    recs = [json.loads(x) for x in open(path).read().splitlines()]
    for r in recs:
        r["summary"]["write_bandwidth_mib_s"] = 1000 * 0.95 ** n
    open(path, "w").write("".join(json.dumps(r) + "\\n" for r in recs))
sys.exit(p.returncode)
"""


def test_calibrate_a_planted_drift_blocked_names_false_winners_interleaved_holds(tmp_path):
    binary = tmp_path / "drifting-iokernels"
    text = STAND_IN.replace("PYTHON", sys.executable).replace("REAL", str(BIN))
    binary.write_text(text.replace("COUNTER", str(tmp_path / "counter")))
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    f = campaign(tmp_path, "aa", iterations=1)
    p = cli(
        "calibrate",
        f,
        "--pairs",
        "3",
        "--runs",
        "4",
        "--db",
        "c.sqlite",
        "--bin",
        binary,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert len((tmp_path / "counter").read_text()) == 24  # every run went through the stand-in
    assert "3 A/A pairs of 4 runs a side, 24 runs, 24 ok" in p.stdout
    assert "blocked      false winners 3/3 = 100% (95% interval 29%-100%)" in p.stdout
    assert "interleaved  false winners 0/3 = 0% (95% interval 0%-71%)" in p.stdout
    drift = next(x for x in p.stdout.splitlines() if x.startswith("drift: F = "))
    assert float(drift.split()[3].rstrip(":")) > 10
    # the runs as the store holds them: the planted slope, in time order
    got = rows(tmp_path / "c.sqlite", "SELECT write_bandwidth FROM runs ORDER BY iteration")
    assert [round(g["write_bandwidth"] / MIB, 3) for g in got[:2]] == [1000.0, 950.0]
    rec = json.loads(rows(tmp_path / "c.sqlite", "SELECT record FROM runs")[0]["record"])
    assert rec["kernel"] == "btio"


def test_the_reports_fastest_line_names_no_winner_across_blocks():
    from iokernels_campaign.report import frame

    t0 = 1_795_000_000.0
    fast = [
        run_row(i, "btio", "mpiio", None, 4, "write", 100 + i, started=t0 + 10 * i, elapsed=5.0)
        for i in range(5)
    ]

    def slow(start, step):
        return [
            run_row(9 + i, "btio", "pnetcdf", None, 4, "write", 50 + i, started=start + step * i)
            | {"elapsed": 5.0}
            for i in range(5)
        ]

    # blocked: pnetcdf's runs after mpiio's
    bw = frame.bandwidths(fast + slow(t0 + 60, 10))
    (win,) = frame.best(frame.case_stats(bw), bw).values()
    assert win.series == "mpiio" and win.ties == ["pnetcdf"]
    assert win.ratio.text().startswith("untested: blocked in time (mpiio 11:06-11:07, pnetcdf")
    assert '[campaign] order = "interleaved"' in win.ratio.text()
    # in rounds: a winner
    bw = frame.bandwidths(fast + slow(t0 + 5, 10))
    (win,) = frame.best(frame.case_stats(bw), bw).values()
    assert win.series == "mpiio" and win.clear and win.ratio.call == "higher"


def test_the_batch_script_runs_in_rounds_and_collect_stores_them(tmp_path, inv):
    import shlex
    import subprocess

    import fakeslurm
    from iokernels_campaign.run import runner
    from iokernels_campaign.spec import spec
    from test_script_labels import steps_of

    (tmp_path / "c.toml").write_text(
        CASES.replace("NAME", "sb")
        .replace("ITER", "3")
        .replace("SEED", "seed = 9")
        .replace("BACKENDS", '["null", "mpiio"]')
        + "[kernel.lustre]\nstripe_count = 2\n"
    )
    c = spec.load(tmp_path / "c.toml", inv)
    session, script = runner.write_sbatch(c, inv, tmp_path / "out", echo=lambda text: None)
    text = script.read_text()
    assert text.count("# round ") == 3
    env = dict(os.environ, **fakeslurm.install(tmp_path, tools=("srun", "lfs")))
    p = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    calls = [shlex.split(x) for x in (tmp_path / "log" / "srun").read_text().splitlines()]
    names = [
        x.split("=", 1)[1] for c_ in steps_of(calls) for x in c_ if x.startswith("--job-name=")
    ]
    plan = runner.plan([c], "interleaved", 9)
    assert names == [f"iok:{case.dirname}/iter{it}/write" for _, _, _, case, it, _ in plan]
    # each case's directory striped once, before its first run
    stripes = (tmp_path / "log" / "lfs").read_text().splitlines()
    assert len([x for x in stripes if x.startswith("setstripe")]) == 2
    s = Store(tmp_path / "s.sqlite")
    s.begin_campaign(
        session.id, c, "sbatch", inv.binary, tmp_path / "out", "h", "t", "interleaved", 9
    )
    runner.collect(session.directory, s, echo=lambda text: None, job_ended=True)
    got = sorted(s.runs(), key=lambda r: r["position"])
    s.close()
    want = [(case.backend, it, rnd, n, i) for rnd, n, _, case, it, i in plan]
    assert [
        (r["backend"], r["iteration"], r["round"], r["position"], r["case_index"]) for r in got
    ] == want
    assert {r["case_index"] for r in got} == {1, 2}
