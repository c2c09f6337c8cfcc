# SPDX-License-Identifier: BSD-3-Clause
"""[[mix]] blocks (mixcase.py): checked like [[kernel]] blocks, run under
mpiexec as one job, stored as one run with its members' runs (mix_runs),
and drawn as the interference matrix (interference.py): slower where the
victim's together runs are longer beyond the test, grey where tied."""

import json
import sqlite3
import types
from pathlib import Path

import pytest
from conftest import cli, rows
from declared import missing
from iokernels_campaign.report import html_report, interference, verdict
from iokernels_campaign.run.outcome import Outcome
from iokernels_campaign.spec import spec
from iokernels_campaign.spec.mixcase import MixCase
from iokernels_campaign.spec.spec import Case
from iokernels_campaign.store.store import Store

MIX = """
[campaign]
name = "mixes"
timeout = 300

[[mix]]
iterations = 4
[[mix.member]]
name = "btio"
label = "victim"
ranks = 1
backends = ["mpiio"]
options = { grid = "16,16,16", dumps = 2, verify = true }
[[mix.member]]
name = "btio"
label = "aggressor"
ranks = 1
backends = ["null", "mpiio"]
options = { grid = "16,16,16", dumps = 2 }
"""


def test_a_mix_campaign_runs_under_mpiexec_and_stores_its_members(tmp_path):
    (tmp_path / "mix.toml").write_text(MIX)
    p = cli("run", "mix.toml", "--db", "m.sqlite", "--out", "out", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count(" ok  slowdown btio x") == 2, p.stdout
    runs = rows(tmp_path / "m.sqlite", "SELECT * FROM runs ORDER BY id")
    # both mixes, in the campaign's interleaved order (which runs first is the seed's)
    assert sorted((r["kernel"], r["backend"], r["ranks"], r["status"]) for r in runs) == [
        ("mix", "mpiio+mpiio", 2, "ok"),
        ("mix", "mpiio+null", 2, "ok"),
    ]
    members = rows(tmp_path / "m.sqlite", "SELECT * FROM mix_runs ORDER BY run_id, member")
    assert len(members) == 2 * 2 * 4 * 2  # mixes x members x iterations x (alone, together)
    for m in members:
        rec = json.loads(m["record"])  # the member's own record, verified (victim)
        assert rec["kernel"] == "btio" and rec["nprocs"] == 1 and m["seconds"] > 0
        if m["member"] == 1:
            assert rec["verify"]["ok"] and m["label"] == "victim mpiio n1"
    # the matrix: one row per member, each cell the verdict of its stored runs
    page = (tmp_path / "out" / "report.html").read_text()
    assert 'id="interference"' in page
    st = Store(tmp_path / "m.sqlite", readonly=True)
    mixes = st.mix_runs(r["id"] for r in runs)
    st.close()
    for c in interference.cells(mixes):
        alone = [m["seconds"] for m in members if m["label"] == c.victim and m["mode"] == "alone"]
        assert c.ratio.n_b <= len(alone)
        if c.judged:
            assert f"{c.ratio.hl:.2f} ({c.ratio.low:.2f}&ndash;{c.ratio.high:.2f})" in page
        else:  # the null aggressor as a victim: its times are overhead
            assert c.victim == "aggressor null n1" and 'data-call="not judged"' in page
    # each member's files in its own folder of the iteration's
    assert list((tmp_path / "out").rglob("member1/btio.mpi"))
    assert list((tmp_path / "out").rglob("member2/btio.mpi"))


def _rows(victim_alone, victim_together, aggressor="null n1"):
    """mix_runs rows of one stored mix: the victim's seconds as given, the
    aggressor's all alike."""
    out = []
    for mode, secs in (("alone", victim_alone), ("together", victim_together)):
        for i, s in enumerate(secs, 1):
            out.append(_row(1, "btio mpiio n1", i, mode, s))
            out.append(_row(2, aggressor, i, mode, 1.0))
    return out


def _row(member, label, iteration, mode, seconds):
    return {
        "member": member,
        "label": label,
        "start_seconds": 0.0,
        "iteration": iteration,
        "mode": mode,
        "seconds": seconds,
    }


def test_matrix_calls_slower_tied_and_untested():
    """The cells on series built to differ: twice as long together is
    slower; alike is tied; 3 runs a side untested."""
    base = [1.0, 1.05, 0.97, 1.02, 0.99]
    slow = [2 * x for x in base]
    cs = interference.cells({1: _rows(base, slow, "a n1"), 2: _rows(base, base[::-1], "b n1")})
    calls = {c.aggressor: c.call for c in cs if c.victim == "btio mpiio n1"}
    assert calls == {"a n1": "slower", "b n1": "tied"}
    (few,) = [
        c for c in interference.cells({3: _rows(base[:3], slow[:3])}) if c.victim != "null n1"
    ]
    assert few.call == "untested"
    # the same figures as the report's verdicts
    cell = next(c for c in cs if c.aggressor == "a n1")
    want = verdict.ratio(slow, base)
    assert (cell.ratio.hl, cell.ratio.low, cell.ratio.high) == (want.hl, want.low, want.high)


def _stored_mix(tmp_path, victim_alone, victim_together):
    """A store holding one mix whose victim ran as given (no MPI run)."""
    member = Case("btio", "btio", "mpiio", 1, (), ("write",), 1, 60.0, "")
    aggressor = Case("btio", "btio", "null", 1, (), ("write",), 1, 60.0, "")
    case = MixCase("m", (member, aggressor), len(victim_alone), (0.0, 0.0), 60.0)
    members = []
    for i, (alone, together) in enumerate(
        ((victim_alone, victim_together), ([1.0] * len(victim_alone),) * 2), 1
    ):
        runs = [
            {"iteration": k + 1, "mode": mode, "seconds": s}
            for mode, secs in (("alone", alone), ("together", together))
            for k, s in enumerate(secs)
        ]
        members.append(
            {"index": i, "kernel": "btio", "nprocs": 1, "start_seconds": 0.0, "runs": runs}
        )
    record = {"kernel": "mix", "status": "ok", "exit_code": 0, "members": members}
    db = tmp_path / "s.sqlite"
    st = Store(db)
    camp = types.SimpleNamespace(name="s", path=Path("s.toml"), description="")
    st.begin_campaign("c1", camp, "mpiexec", "iokernels", tmp_path, "host", "now")
    st.add_run("c1", case, "write", 1, Outcome(tmp_path, "ok", 0, None, record, 0.0, 1.0))
    st.close()
    return db


def test_the_report_draws_the_matrix(tmp_path):
    base = [1.0, 1.05, 0.97, 1.02, 0.99]
    db = _stored_mix(tmp_path, base, [2 * x for x in base])
    st = Store(db, readonly=True)
    html_report.write(st, tmp_path / "r.html")
    st.close()
    page = (tmp_path / "r.html").read_text()
    assert "<h2>Interference (workload mixes)</h2>" in page
    assert '1 workload mix (<a href="#interference">' in page
    assert 'class="num slower" title="btio mpiio n1 with btio null n1: together / alone' in page
    # the null member as a victim: its times are overhead, no call
    assert 'data-call="not judged"' in page
    assert 'title="btio null n1 with' not in page


def test_the_matrix_in_a_browser(tmp_path):
    """Chromium draws the matrix: the slower cell red, the tie grey, no
    JavaScript error (the screenshot kept as a test artefact)."""
    from test_report_screenshot import (
        ARTIFACTS,
        TALL,
        chromium,
        has_colour,
        js_errors,
        open_page,
        pixels,
    )

    if not chromium():
        missing("chromium", "not installed (scripts/install-deps.sh installs it)")
    base = [1.0, 1.05, 0.97, 1.02, 0.99]
    db = _stored_mix(tmp_path, base, [2 * x for x in base])
    st = Store(db, readonly=True)
    html_report.write(st, tmp_path / "r.html")
    st.close()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    png = ARTIFACTS / "report-interference.png"
    p = open_page(tmp_path / "r.html", png, TALL)
    assert p.returncode == 0 and png.exists(), p.stderr[-2000:]
    assert not js_errors(p.stderr), js_errors(p.stderr)
    px = pixels(png)
    assert has_colour(px, "#fde2e2", 2), "no slower (red) cell"
    assert has_colour(px, "#eeeeee", 2), "no tied (grey) cell"


@pytest.mark.parametrize(
    "block, words",
    [
        ("[[mix]]\n[[mix.member]]\nname = 'btio'\n", "two or more [[mix.member]]"),
        (
            "[[mix]]\n[[mix.member]]\nname = 'btio'\nmodes = ['read']\n"
            "[[mix.member]]\nname = 'btio'\n",
            "modes belongs to the [[mix]] block",
        ),
        (
            "[[mix]]\nstart = [0]\n[[mix.member]]\nname = 'btio'\n[[mix.member]]\nname = 'btio'\n",
            "start must list 2 numbers",
        ),
        (
            "[[mix]]\n[[mix.member]]\nname = 'nokernel'\n[[mix.member]]\nname = 'btio'\n",
            "[[mix.member]] 1: unknown kernel 'nokernel'",
        ),
        (
            "[[mix]]\nstarts = 1\n[[mix.member]]\nname = 'btio'\n[[mix.member]]\nname = 'btio'\n",
            "unknown key 'starts'",
        ),
    ],
)
def test_bad_mix_blocks_are_one_line(block, words, inv, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(block)
    with pytest.raises(spec.CampaignError) as e:
        spec.load(path, inv)
    assert words in str(e.value) and "[[mix]] block 1" in str(e.value)
    assert "\n" not in str(e.value)


def test_a_store_from_before_mixes_reads(tmp_path):
    """A store without mix_runs (read-only, older) gives no matrix, no error."""
    db = _stored_mix(tmp_path, [1.0] * 4, [1.0] * 4)
    con = sqlite3.connect(db)
    con.execute("DROP TABLE mix_runs")
    con.commit()
    con.close()
    st = Store(db, readonly=True)
    assert st.mix_runs([1]) == {}
    st.close()


def test_a_mix_is_one_srun_step_under_sbatch(tmp_path):
    """--launcher sbatch: the mix is one job step of all its ranks, split
    inside (the Slurm sandbox run is the lead's; this is the script)."""
    (tmp_path / "mix.toml").write_text(MIX)
    p = cli("run", "mix.toml", "--launcher", "sbatch", "--dry-run", "--out", "sb", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    steps = [line for line in p.stdout.splitlines() if " mix --member-dirs " in line]
    assert len(steps) == 2
    for line in steps:
        assert " srun -n 2 " in line and " --iterations 4 --part 1:btio --backend mpiio " in line


def test_a_failing_mix_is_stored_failed_with_its_line(tmp_path):
    """A member whose run fails (rank 1, member 2's only rank, fails its
    first put by IOK_FAULT: nothing --check could see when the campaign is
    read): the case is stored failed, with the member-named line."""
    text = MIX.replace("timeout = 300\n", 'timeout = 300\n[campaign.env]\nIOK_FAULT = "put:1"\n')
    (tmp_path / "mix.toml").write_text(text)
    p = cli("run", "mix.toml", "--db", "m.sqlite", "--out", "out", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    runs = rows(tmp_path / "m.sqlite", "SELECT * FROM runs ORDER BY id")
    assert [r["status"] for r in runs] == ["failed", "failed"]
    assert all(r["error"].startswith("iokernels: error: member 2 (btio): ") for r in runs), runs
    assert "IOK_FAULT=put:1" in runs[0]["error"], runs[0]["error"]
    # what the victim completed before the aggressor failed is kept; the
    # aggressor completed nothing
    kept = rows(tmp_path / "m.sqlite", "SELECT * FROM mix_runs")
    assert kept and {r["member"] for r in kept} == {1}, kept


def test_members_that_give_one_variable_two_values_are_refused(tmp_path):
    """A mix is one job with one environment: two members' [kernel.env]
    giving ROMIO_HINTS two values is refused when the campaign is read."""
    text = MIX.replace(
        "dumps = 2, verify = true }\n", 'dumps = 2, verify = true }\nenv = { ROMIO_HINTS = "a" }\n'
    ).replace("dumps = 2 }\n", 'dumps = 2 }\nenv = { ROMIO_HINTS = "b" }\n')
    (tmp_path / "mix.toml").write_text(text)
    p = cli("run", "mix.toml", "--db", "m.sqlite", "--out", "out", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "the members give ROMIO_HINTS two values ('a', 'b')" in p.stderr, p.stderr
    assert not (tmp_path / "out").exists()


def test_a_victim_that_moves_no_data_is_not_judged():
    """A member on the null backend is a control aggressor: its own times
    (the suite's overhead) get no call, whatever their ratio; the real
    victim beside it keeps its verdict."""
    base = [1.0, 1.05, 0.97, 1.02, 0.99]
    rows = _rows(base, [2 * x for x in base], "null n1")
    for r in rows:
        r["backend"] = "mpiio" if r["member"] == 1 else "null"
    calls = {c.victim: c.call for c in interference.cells({1: rows})}
    assert calls == {"btio mpiio n1": "slower", "null n1": "not judged"}, calls
    page = interference.html_table(interference.cells({1: rows}))
    assert page.count('data-call="not judged"') == 1 and 'data-call="slower"' in page
