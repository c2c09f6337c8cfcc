# SPDX-License-Identifier: BSD-3-Clause
"""iokernels-campaign tune: the small example end to end (trials in the
store with their settings, the report's tune section, the ready line), a
trial the kernel refuses (stored, the tune goes on), and tune files refused
before anything runs (exit 2, one line naming the file, line and key)."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import BIN, REPO, cli, rows
from declared import not_here

SMALL = REPO / "campaigns" / "tune-small.toml"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """campaigns/tune-small.toml, run once from the repository root."""
    d = tmp_path_factory.mktemp("tune-small")
    # 4 ranks: on fewer cores, allowed (the answer says so)
    args = ["--db", d / "t.sqlite", "--out", d / "out", "--allow-oversubscribed"]
    p = cli("tune", SMALL, *args, cwd=REPO, timeout=600)
    return d, p


def _answer(db):
    (row,) = rows(db, "SELECT answer FROM tunes")
    return json.loads(row["answer"])


def _effective(run):
    """What a stored run had in effect, from its record: transfer mode, api,
    backend, the kernel's and backend's options and the hints requested."""
    r = json.loads(run["record"])
    o = r["options"]
    return json.dumps(
        [r["backend"], r["io"], r["api"], o["kernel"], o["backend"], r["hints"]["requested"]],
        sort_keys=True,
    )


def test_small_example_stores_every_trial_with_its_settings(small):
    d, p = small
    assert p.returncode == 0, p.stderr
    ans = _answer(d / "t.sqlite")
    trials = ans["trials"]
    # transfer=collective, cb_nodes=default is the defaults (BTIO is collective
    # unless told): one configuration, run once, so 3 trials after the defaults
    assert len(trials) == 4 and trials[0]["settings"] == {}, trials
    assert ans["objective"] == "durable" and "objective: durable write time" in p.stdout
    assert "reads with --drop-caches" not in p.stdout  # it only writes
    assert ans["sampler"] == "grid"  # 4 points, 6 trials: a grid
    runs = {r["id"]: r for r in rows(d / "t.sqlite", "SELECT * FROM runs")}
    for t in trials:
        assert t["run_ids"], t
        for rid in t["run_ids"]:
            r = runs[rid]
            argv = json.loads(r["argv"])
            assert r["variant"] == t["variant"] and r["status"] == "ok"
            assert "--fsync" in argv  # the durable objective
            # the data file is removed once measured, the run's own files stay
            rundir = Path(r["case_dir"])
            assert (rundir / "write.jsonl").is_file() and (rundir / "write.stdout").is_file()
            assert not (rundir / "btio.mpi").exists(), list(rundir.iterdir())
            assert ("--independent" in argv) == (t["settings"].get("transfer") == "independent")
            cb = t["settings"].get("cb_nodes", "default")
            assert (f"cb_nodes={cb}" in " ".join(argv)) == (cb != "default")
    # every point of the grid was tried once, the defaults' point as the defaults
    points = {(t["settings"]["transfer"], t["settings"]["cb_nodes"]) for t in trials[1:]}
    want = {(a, b) for a in ("collective", "independent") for b in ("default", "2")}
    assert points == want - {("collective", "default")}
    # one effective configuration per trial: the store never ran one twice
    first = [runs[t["run_ids"][0]] for t in trials]
    assert len({_effective(r) for r in first}) == len(trials)
    # every run of the store is a trial's or the confirmation's, counted exactly
    confirm = len(ans["confirm"]["defaults"]) + len(ans["confirm"]["best"])
    assert len(runs) == sum(len(t["run_ids"]) for t in trials) + confirm
    assert ans["best"]["number"] == 1 or ans["best"]["settings"], ans["best"]
    # each line of progress names a trial; repeated trials are medians of their runs
    for t in trials:
        if t["seconds"] is not None:
            assert t["seconds"] == sorted(t["runs"])[len(t["runs"]) // 2] or len(t["runs"]) % 2 == 0


def test_small_example_answers_with_an_interval_and_a_ready_line(small):
    d, p = small
    ans = _answer(d / "t.sqlite")
    c, best = ans["confirm"], ans["best"]
    out = p.stdout
    (ready,) = ans["ready"]
    if best["number"] == 1:  # the defaults won: nothing to confirm, nothing added
        assert "answer:   no significant gain: no setting beat the defaults" in out
        assert best["settings"] == {} and c["defaults"] == c["best"] == []
        assert "--collective" not in ready and "--independent" not in ready
        assert "--hints" not in ready
        return
    assert len(c["defaults"]) == len(c["best"]) == 5  # ABBA, 5 each
    # importance only for a difference the search can attribute: a judged gain
    imp = ans["importance"]
    if c["call"] != "gain":
        assert imp["shares"] == {} and imp["method"].startswith("not shown: the best is not")
    else:
        assert not imp["method"].startswith("not shown")
    assert c["low"] <= c["speedup"] * 2 and c["low"] <= c["high"]
    word = "no significant gain" if c["low"] <= 1 <= c["high"] else None
    assert c["call"] == (word or ("gain" if c["low"] > 1 else "slower than the defaults"))
    assert f"answer:   {c['call']}: speedup {c['speedup']:.2f}x (Hodges-Lehmann" in out
    assert f"ready:    {ready}" in out and " btio --backend mpiio " in ready
    assert "--collective" not in ready  # the defaults' transfer mode: not a setting
    assert ("--independent" in ready) == (best["settings"].get("transfer") == "independent")
    cb = best["settings"].get("cb_nodes")
    assert ("--hints cb_nodes=2" in ready) == (cb == "2")
    # the confirmation runs are stored too, as further iterations of the two cases
    n = rows(d / "t.sqlite", "SELECT COUNT(*) AS n FROM runs WHERE variant = ?", best["variant"])
    assert n[0]["n"] == len(best["runs"]) + 5


def test_report_has_the_tune_section(small):
    d, _ = small
    page = (d / "out" / "report.html").read_text()
    ans = _answer(d / "t.sqlite")
    assert '<section class="tune" id="tune-1">' in page
    assert f"Every trial ({len(ans['trials'])})" in page
    assert "Importance of each setting" in page and ans["importance"]["method"] in page
    # the report command, later, draws it from the store
    p = cli("report", d / "t.sqlite", "-o", d / "again.html", cwd=d)
    assert p.returncode == 0, p.stderr
    assert '<section class="tune" id="tune-1">' in (d / "again.html").read_text()


def _tiny(name, backend, tune, space, grid="8,8,8"):
    """A tune file of BTIO on 1 rank."""
    return f"""
[campaign]
name = "{name}"
ranks = [1]
timeout = 60
[[kernel]]
name = "btio"
backends = ["{backend}"]
options = {{ grid = "{grid}", dumps = 1 }}
[tune]
{tune}
[tune.space]
{space}
"""


# mpiio has only the blocking api (its default): varn is refused
REFUSED = _tiny(
    "tune-refused", "mpiio", "trials = 3", 'api = ["varn", "blocking"]\ntransfer = ["independent"]'
)


def test_a_refused_trial_is_stored_and_the_tune_goes_on(tmp_path):
    (tmp_path / "t.toml").write_text(REFUSED)
    p = cli("tune", "t.toml", "--db", "t.sqlite", "--out", "out", "--no-report", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    trials = _answer(tmp_path / "t.sqlite")["trials"]
    assert [t["settings"].get("api") for t in trials][0] is None  # the defaults first
    assert sorted(t["settings"]["api"] for t in trials[1:]) == ["blocking", "varn"]
    varn, blocking = sorted(trials[1:], key=lambda t: t["settings"]["api"] != "varn")
    assert varn["state"] == "refused" and varn["seconds"] is None
    assert "backend mpiio has no varn API" in varn["error"]
    (run,) = rows(tmp_path / "t.sqlite", "SELECT * FROM runs WHERE id = ?", varn["run_ids"][0])
    assert run["status"] == "failed" and run["exit_code"] == 2 and "varn" in run["error"]
    assert blocking["state"] == "ok" and blocking["seconds"] > 0
    assert "refused: iokernels: error: backend mpiio has no varn API" in p.stdout


BASE = """[campaign]
name = "bad"
ranks = [1]
[[kernel]]
name = "btio"
backends = ["mpiio"]
options = { grid = "8,8,8", dumps = 1 }
"""


def _ompi():
    return (
        shutil.which("ompi_info") is not None
        and "libmpi.so.40"
        in subprocess.run(["ldd", str(BIN)], capture_output=True, text=True).stdout
    )


@pytest.mark.parametrize(
    "tune, line, words",
    [
        ("[tune]\ntrials = 3\n[tune.space]\nnosuch = [1, 2]\n", 11, "[tune.space] nosuch: unknown"),
        ("[tune]\ntrials = 3\n[tune.space]\ncb_nodes = [0, 2]\n", 11, "value 0 is not a whole"),
        ("[tune]\ntrials = 3\n[tune.space]\ncb_nodes = []\n", 11, "must be a non-empty list"),
        ("[tune]\ntrials = 3\n[tune.space]\nromio_cb_write = ['on']\n", 11, "'on' is not one of"),
        ("[tune]\ntrials = 3\n[tune.space]\n", 10, "[tune] space: is empty"),
        ("[tune]\ntrials = 0\n[tune.space]\ncb_nodes = [2]\n", 9, "trials: must be at least 1"),
        ("[tune]\ntrials = 'many'\n[tune.space]\ncb_nodes = [2]\n", 9, "must be a whole number"),
        ("[tune]\nminutes = -1\n[tune.space]\ncb_nodes = [2]\n", 9, "minutes: must be above 0"),
        ("[tune]\n[tune.space]\ncb_nodes = [2]\n", None, "no budget: give trials"),
        ("[tune]\ntrials = 3\nsaerch = 1\n[tune.space]\ncb_nodes = [2]\n", 10, "saerch: unknown"),
        ("[tune]\ntrials = 3\n[tune.space]\nhdf5-layout = ['chunked']\n", 11, "a hdf5 setting"),
        ("[tune]\ntrials = 3\n[tune.space]\nhints = ['a=b']\n", 11, "give hints as settings"),
        ("[tune]\ntrials = 3\n[tune.space]\nstriping_factor = [4]\n", 11, "no striping"),
        ("[tune]\ntrials = 3\n[tune.space]\nfcoll = ['nosuch']\n", 11, "no such fcoll component"),
        ("[tune]\ntrials = 3\nobjective = 'fast'\n[tune.space]\ncb_nodes = [2]\n", 10, "objective"),
    ],
)
def test_a_bad_tune_file_is_refused_before_anything_runs(tmp_path, tune, line, words):
    if "fcoll" in tune and not _ompi():
        not_here("fcoll is OpenMPI's: this binary uses another MPI")
    if "striping" in tune and shutil.which("lfs"):
        not_here("lfs is here: striping is a setting")
    (tmp_path / "t.toml").write_text(BASE + tune)
    p = cli("tune", "t.toml", "--db", "t.sqlite", "--out", "out", cwd=tmp_path, timeout=60)
    assert p.returncode == 2, p.stdout + p.stderr
    err = p.stderr.strip()
    assert "\n" not in err and "Traceback" not in err, err
    assert err.startswith("iokernels-campaign: error: t.toml"), err
    if line:
        assert f"t.toml line {line}: " in err, err
    assert words in err, err
    assert not (tmp_path / "t.sqlite").exists() and not (tmp_path / "out").exists()
    assert p.stdout == ""


def test_the_docs_table_lists_every_setting_of_the_code():
    from iokernels_campaign.tune import tune_space

    text = (REPO / "docs" / "tune.md").read_text()
    table = text.split("## The settings", 1)[1].split("\n\n")
    rows = [x for part in table for x in part.splitlines() if x.startswith("| `")]
    documented = {}
    for row in rows:
        cells = [c.strip().strip("`") for c in row.strip("|").split("|")]
        documented[cells[0]] = cells[1]
    assert list(documented) == list(tune_space.SETTINGS)
    for name, s in tune_space.SETTINGS.items():
        if name != "transfer":  # --collective or --independent
            assert s.target in documented[name], (name, documented[name])


def test_ompio_parts_are_left_out_under_another_io_component():
    from iokernels_campaign.spec import spec
    from iokernels_campaign.tune import tune_space

    case = spec.Case("btio", "btio", "mpiio", 4, (), ("write",), 1, 60.0, "")
    caps = {"mpiio": {"hints"}}
    trial, shown = tune_space.apply(case, {"io": "romio321", "fcoll": "two_phase"}, caps)
    assert shown == {"io": "romio321", "fcoll": "n/a"}
    assert dict(trial.env) == {"OMPI_MCA_io": "romio321"} and trial.variant == "io=romio321"
    trial, shown = tune_space.apply(case, {"io": "ompio", "fcoll": "two_phase"}, caps)
    assert dict(trial.env) == {"OMPI_MCA_io": "ompio", "OMPI_MCA_fcoll": "two_phase"}
    trial, _ = tune_space.apply(case, {"fcoll": "vulcan", "cb_nodes": 2}, caps)
    assert dict(trial.env) == {"OMPI_MCA_fcoll": "vulcan"}
    assert dict(trial.args)["hints"] == "cb_nodes=2" and trial.variant == "fcoll=vulcan cb_nodes=2"


# the defaults write a large grid (slow, durable), the one other setting a
# small one: the answer is known, so the confirmation's call can be checked
SLOW = _tiny("tune-slow", "mpiio", "trials = 2", 'grid = ["8,8,8"]', "96,96,96").replace(
    "timeout = 60", 'timeout = 60\nmodes = ["write"]'
)


def test_the_confirmation_alternates_abba_and_finds_the_known_gain(tmp_path):
    (tmp_path / "t.toml").write_text(SLOW)
    p = cli("tune", "t.toml", "--db", "t.sqlite", "--out", "out", "--no-report", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    ans = _answer(tmp_path / "t.sqlite")
    c, best = ans["confirm"], ans["best"]
    assert best["number"] == 2 and best["settings"] == {"grid": "8,8,8"}
    assert len(c["defaults"]) == len(c["best"]) == 5 and c["order"] == "ABBA"
    assert c["call"] == "gain" and c["low"] > 1, c  # 5 a side: exact p = 2/252
    assert not ans["importance"]["method"].startswith("not shown"), ans["importance"]
    order = [x.split("(")[1].split(" first")[0] for x in p.stdout.splitlines() if "confirm " in x]
    assert order == ["defaults", "best", "defaults", "best", "defaults"], p.stdout
    runs = rows(tmp_path / "t.sqlite", "SELECT argv FROM runs")
    trial_runs = sum(len(t["run_ids"]) for t in ans["trials"])
    assert len(runs) == trial_runs + 10  # every run counted: trials and 5 + 5
    assert all("--fsync" in json.loads(r["argv"]) for r in runs)
    (ready,) = ans["ready"]
    assert "--grid 8,8,8" in ready and "--fsync" in ready


def test_a_minutes_budget_spent_by_the_defaults_leaves_them_the_answer(tmp_path):
    spec = REFUSED.replace("trials = 3", "minutes = 0.001").replace('"varn", ', "")
    (tmp_path / "t.toml").write_text(spec)
    p = cli("tune", "t.toml", "--db", "t.sqlite", "--out", "out", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    ans = _answer(tmp_path / "t.sqlite")
    assert [t["settings"] for t in ans["trials"]] == [{}]  # no time left after the defaults
    assert ans["confirm"]["defaults"] == [] and ans["best"]["number"] == 1
    assert "answer:   no significant gain: no setting beat the defaults" in p.stdout
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<b>no significant gain</b>: no setting beat the defaults" in page


def test_run_names_tune_for_a_tune_file(tmp_path):
    p = cli("run", SMALL, "--db", "t.sqlite", "--out", "out", cwd=tmp_path)
    assert p.returncode == 2 and not (tmp_path / "t.sqlite").exists()
    assert "a [tune] table: this is a tune file (iokernels-campaign tune FILE)" in p.stderr


CUT = _tiny("tune-cut", "null", "trials = 2\ncut = 2", "iterations = [1000000]", "16,16,16")


def test_a_trial_past_the_cut_is_stopped_stored_and_the_tune_ends_normally(tmp_path):
    """A million iterations run far past 2x the defaults' wall time (the
    floor, 10 s, applies): stopped, stored as failed with the reason."""
    (tmp_path / "t.toml").write_text(CUT)
    p = cli("tune", "t.toml", "--db", "t.sqlite", "--out", "out", "--no-report", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    _, slow = _answer(tmp_path / "t.sqlite")["trials"]
    assert slow["state"] == "cut" and slow["settings"] == {"iterations": "1000000"}
    assert slow["error"].startswith("cut: still running after 10 s (2x the best's wall time")
    (run,) = rows(tmp_path / "t.sqlite", "SELECT * FROM runs WHERE id = ?", slow["run_ids"][0])
    assert run["status"] == "failed" and run["error"] == slow["error"]
    assert 10 <= run["elapsed"] < 60
    # the null backend: no verdict either way (its times are the suite's own work)
    assert "answer:   not judged: the null backend moves no data" in p.stdout


def test_identity_is_what_differs_from_the_defaults_in_effect():
    """A setting equal to what the defaults' run had in effect is no setting;
    the same setting where the defaults differ is one (the case built wrong
    for the rule: an independent default makes transfer=collective count)."""
    from types import SimpleNamespace

    from iokernels_campaign.tune import tune

    def tuner(io):
        rec = {"io": io, "api": "blocking", "backend": "mpiio", "options": {"kernel": {}}}
        rec["passes"] = [{"hints_in_effect": {"cb_nodes": "4"}}]
        return SimpleNamespace(defaults=SimpleNamespace(record=rec))

    shown = {"transfer": "collective", "cb_nodes": "default", "api": "blocking"}
    coll, indep = tuner("coll"), tuner("indep")
    assert tune.Tuner.identity(coll, shown) == ()
    assert tune.Tuner.identity(indep, shown) == (("transfer", "collective"),)
    # a hint set to the value in effect anyway is the defaults; another is not
    assert tune.Tuner.identity(coll, {"cb_nodes": "4"}) == ()
    assert tune.Tuner.identity(coll, {"cb_nodes": "2"}) == (("cb_nodes", "2"),)
    # every option in effect counts, the core's included (--values)
    coll.defaults.record["options"]["core"] = {"values": "fresh"}
    assert tune.Tuner.identity(coll, {"values": "fresh"}) == ()
    assert tune.Tuner.identity(coll, {"values": "once"}) == (("values", "once"),)


# --- issue 51: the tuner judges only I/O -------------------------------------

NULL_VALUES = _tiny("tune-null", "null", "trials = 3", 'values = ["fresh", "once"]')


def _in_effect(run):
    """Every option a stored run had in effect (the core's too, but the
    record's own path), its transfer mode, api, backend and hints asked for."""
    r = json.loads(run["record"])
    o = dict(r["options"])
    o["core"] = {k: v for k, v in o["core"].items() if k != "json"}
    return json.dumps([r["backend"], r["io"], r["api"], o, r["hints"]["requested"]], sort_keys=True)


def test_null_is_not_judged_and_the_defaults_run_once_with_values_in_the_space(tmp_path):
    """The null backend moves no data: no verdict, no importance, no
    confirmation, and an objective that says what was timed. `values` is a
    core option: values=fresh is the defaults and is not run again."""
    (tmp_path / "t.toml").write_text(NULL_VALUES)
    p = cli("tune", "t.toml", "--db", "t.sqlite", "--out", "out", "--no-report", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    ans = _answer(tmp_path / "t.sqlite")
    trials = ans["trials"]
    assert [t["settings"] for t in trials] == [{}, {"values": "once"}], trials
    runs = {r["id"]: r for r in rows(tmp_path / "t.sqlite", "SELECT * FROM runs")}
    first = [runs[t["run_ids"][0]] for t in trials]
    assert len({_in_effect(r) for r in first}) == len(trials)  # the defaults ran once
    c = ans["confirm"]
    assert c["call"] == "not judged" and c["defaults"] == c["best"] == [], c
    words = "not judged: the null backend moves no data, its times are the suite's own work"
    assert f"answer:   {words}" in p.stdout, p.stdout
    assert "gain" not in p.stdout.split("answer:", 1)[1].splitlines()[0]
    assert ans["importance"]["shares"] == {} and "importance (" not in p.stdout
    assert "reached storage" not in p.stdout and "the suite's own work" in ans["objective_text"]
    assert len(runs) == sum(len(t["run_ids"]) for t in trials)  # nothing confirmed


def test_hints_the_pattern_cannot_use_are_not_searched(tmp_path):
    """A write-only tune leaves the read hints out of the search (named as
    inert); a space of nothing but inert settings is refused."""
    spec = BASE.replace('backends = ["mpiio"]', 'backends = ["mpiio"]\nmodes = ["write"]')
    space = "[tune]\ntrials = 3\n[tune.space]\n"
    (tmp_path / "t.toml").write_text(
        spec + space + 'romio_cb_read = ["enable", "disable"]\nromio_ds_read = ["disable"]\n'
        'romio_cb_write = ["disable"]\n'
    )
    p = cli("tune", "t.toml", "--dry-run", cwd=tmp_path, timeout=60)
    assert p.returncode == 0, p.stderr
    listed = [x.split()[0] for x in p.stdout.splitlines() if not x.startswith("#")]
    assert listed == ["romio_cb_write"], p.stdout
    assert "# romio_cb_read: not searched: a read hint, and the case only writes" in p.stdout
    assert "# romio_ds_read: not searched" in p.stdout
    (tmp_path / "t.toml").write_text(spec + space + 'romio_ds_read = ["disable"]\n')
    p = cli("tune", "t.toml", "--db", "t.sqlite", "--out", "out", cwd=tmp_path, timeout=60)
    assert p.returncode == 2 and not (tmp_path / "t.sqlite").exists()
    assert "romio_ds_read: a read hint, and the case only writes: no setting" in p.stderr


def _square_above(n):
    k = 1
    while k * k <= n:
        k += 1
    return k * k


def test_an_oversubscribed_case_is_refused_before_any_trial(tmp_path):
    cores = len(os.sched_getaffinity(0))
    ranks = _square_above(cores)  # BTIO takes square rank counts
    (tmp_path / "t.toml").write_text(NULL_VALUES.replace("ranks = [1]", f"ranks = [{ranks}]"))
    p = cli("tune", "t.toml", "--db", "t.sqlite", "--out", "out", cwd=tmp_path, timeout=60)
    assert p.returncode == 2, p.stdout + p.stderr
    assert f"oversubscribed ({ranks} ranks on {cores} core" in p.stderr
    assert "--allow-oversubscribed" in p.stderr and p.stdout == ""
    assert not (tmp_path / "t.sqlite").exists() and not (tmp_path / "out").exists()


def test_an_allowed_oversubscribed_case_says_so_in_its_answer(tmp_path, monkeypatch, capsys):
    """Run in this process with the machine's usable cores taken as 1, so
    that 4 ranks are oversubscribed wherever the test runs."""
    from iokernels_campaign import cli as campaign_cli
    from iokernels_campaign.tune import tune

    monkeypatch.setattr(tune, "usable_cores", lambda: 1)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IOK_BIN", str(BIN))
    spec = NULL_VALUES.replace("ranks = [1]", "ranks = [4]").replace("trials = 3", "trials = 1")
    (tmp_path / "t.toml").write_text(spec)
    args = ["tune", "t.toml", "--db", "t.sqlite", "--out", "out", "--no-report"]
    assert campaign_cli.main(args) == 2
    assert "oversubscribed (4 ranks on 1 core)" in capsys.readouterr().err
    assert campaign_cli.main([*args, "--allow-oversubscribed"]) == 0
    out = capsys.readouterr().out
    ans = _answer(tmp_path / "t.sqlite")
    # the words: this count, or the record's own where the binary writes one (it wins)
    words = ans["oversubscribed"]
    assert words.startswith("oversubscribed (4 ranks on "), words
    line = next(x for x in out.splitlines() if x.startswith("answer:"))
    assert words in line, out


def test_the_records_own_count_of_cores_is_read():
    from iokernels_campaign.store import record

    env = {"oversubscribed": True, "node_cores": [
        {"host": "a", "ranks": 4, "usable_cores": 4},
        {"host": "b", "ranks": 6, "usable_cores": 2},
    ]}  # fmt: skip
    assert record.oversubscribed({"nprocs": 10, "environment": env}) == (6, 2)
    assert record.oversubscribed_text(6, 2) == "oversubscribed (6 ranks on 2 cores)"
    assert record.oversubscribed({"nprocs": 3, "environment": {"oversubscribed": True}}) == (
        3,
        None,
    )
    assert record.oversubscribed({"environment": {"oversubscribed": False}}) is None
    assert record.oversubscribed({"environment": {}}) is None  # a record before the field


WRAPPER = """#!/bin/sh
# the real binary, then its record marked as an oversubscribed run's
"{real}" "$@"
rc=$?
prev=""
for a in "$@"; do
  if [ "$prev" = "--json" ] && [ -f "$a" ]; then
    "{python}" - "$a" <<'PY'
import json, sys
path = sys.argv[1]
recs = [json.loads(x) for x in open(path) if x.strip()]
for r in recs:
    r["environment"]["oversubscribed"] = True
    r["environment"]["node_cores"] = [{{"host": "vm", "ranks": 3, "usable_cores": 1}}]
open(path, "w").write("".join(json.dumps(r) + "\\n" for r in recs))
PY
  fi
  prev="$a"
done
exit $rc
"""


def test_a_record_that_says_oversubscribed_is_refused_unless_allowed(tmp_path):
    """The binary's own count (environment.oversubscribed, node_cores) is
    read from the defaults' record, whatever the launcher: here a wrapper
    marks every record of the real binary as an oversubscribed run's."""
    import sys

    fake = tmp_path / "iokernels"
    fake.write_text(WRAPPER.format(real=BIN, python=sys.executable))
    fake.chmod(0o755)
    spec = NULL_VALUES.replace("trials = 3", "trials = 1")
    (tmp_path / "t.toml").write_text(spec)
    args = ["tune", "t.toml", "--bin", fake, "--db", "t.sqlite", "--out", "out", "--no-report"]
    p = cli(*args, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "oversubscribed (3 ranks on 1 core)" in p.stderr and "--allow-oversubscribed" in p.stderr
    assert len(rows(tmp_path / "t.sqlite", "SELECT id FROM runs")) == 1  # the defaults' only
    p = cli(*args[:-2], "out2", "--no-report", "--allow-oversubscribed", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    line = next(x for x in p.stdout.splitlines() if x.startswith("answer:"))
    assert "oversubscribed (3 ranks on 1 core)" in line, p.stdout


def test_the_objective_names_what_the_backend_does():
    from iokernels_campaign.spec import rules
    from iokernels_campaign.tune import tune_spec

    assert rules.moves_no_data("null") and not rules.moves_no_data("mpiio")
    null = tune_spec.objective_text("durable", "null", ("write", "read"), "ext4")
    assert null.startswith("the suite's own work per run: the null backend moves no data")
    write = tune_spec.objective_text("durable", "mpiio", ("write",), "ext4")
    assert write == "durable write time (writes with --fsync: the data reached storage)"
    both = tune_spec.objective_text("durable", "mpiio", ("write", "read"), "tmpfs")
    assert "reached tmpfs (memory: no storage below)" in both and "reads with --drop" in both
    assert tune_spec.objective_text("io", "mpiio", ("write",)) == tune_spec.OBJECTIVES["io"]


def test_write_hints_are_inert_on_a_read_only_case():
    from iokernels_campaign.tune import tune_space

    space = {"romio_cb_write": ["enable"], "romio_ds_write": ["disable"], "cb_nodes": [2]}
    assert tune_space.inert(space, ("read",)) == {
        "romio_cb_write": "a write hint, and the case only reads",
        "romio_ds_write": "a write hint, and the case only reads",
    }
    assert tune_space.inert(space, ("write", "read")) == {}
