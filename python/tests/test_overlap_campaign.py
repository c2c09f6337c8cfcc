# SPDX-License-Identifier: BSD-3-Clause
"""The campaign's compute and async axes (docs/compute-async.md): the argv
they expand to (async: --async --async-reference, at least 8 iterations),
the refusal of async on a backend without an asynchronous write, the store's
overlap columns (and the migration to them), the report's overlap section
and figure, and compare's overlap lines. Records are the binary's own, with
the "overlap" object of an --async-reference run planted (synthetic)."""

import base64
import copy
import dataclasses
import json
import re
import sqlite3
from pathlib import Path

import pytest
from conftest import BIN, REPO, cli, record_of, report_of, rows
from iokernels_campaign.report import overlap
from iokernels_campaign.run import inventory
from iokernels_campaign.run.outcome import Outcome
from iokernels_campaign.spec import optcheck, spec
from iokernels_campaign.spec.slurm import Slurm
from iokernels_campaign.spec.spec import Campaign, Case
from iokernels_campaign.store.store import STORE_VERSION, Store

AXES = """
[campaign]
name = "ov"
[[kernel]]
name = "btio"
backends = BACKENDS
options = { grid = "16,16,16", dumps = 2 }
compute = [0, 0.05, 0.2]
async = [false, true]
"""


@pytest.fixture
def inv_ref(inv, monkeypatch):
    """The binary's inventory with --async-reference, which the binary
    being merged beside this change adds: the binary's own verdict is asked
    without it (so its refusals, of hdf5's --async, stay the binary's)."""
    mine = dataclasses.replace(inv, _options={})
    for kernel in ("btio", "e3sm"):
        opts = dict(inv.options(kernel))
        opts["async-reference"] = inventory.Option("async-reference", "core", "bool")
        mine._options[kernel] = opts
    real = optcheck.refusals

    def refusals(binary, questions):
        return real(
            binary, [([a for a in argv if a != "--async-reference"], n) for argv, n in questions]
        )

    monkeypatch.setattr(optcheck, "refusals", refusals)
    return mine


def load(tmp_path, inv, text):
    path = tmp_path / "c.toml"
    path.write_text(text)
    return spec.load(path, inv)


def test_the_axes_cross_with_the_backends_into_argv(tmp_path, inv_ref):
    c = load(tmp_path, inv_ref, AXES.replace("BACKENDS", '["mpiio", "pnetcdf"]'))
    assert len(c.cases) == 2 * 3 * 2
    by_name = {x.name: x.argv("write") for x in c.cases}
    plain = by_name["btio mpiio n1 compute=0 async=off"]
    assert "--compute" not in plain and "--async" not in plain and "--iterations" not in plain
    sync = by_name["btio pnetcdf n1 compute=0.05 async=off"]
    assert sync[sync.index("--compute") + 1] == "0.05" and "--async" not in sync
    a = by_name["btio mpiio n1 compute=0.2 async=on"]
    assert a[a.index("--compute") + 1] == "0.2"
    assert "--async" in a and "--async-reference" in a
    assert a[a.index("--iterations") + 1] == "8"
    zero = by_name["btio pnetcdf n1 compute=0 async=on"]
    assert "--compute" not in zero and "--async-reference" in zero
    # the plan says the iterations were raised, naming the file and block
    assert len(c.notes) == 1
    assert (
        "c.toml: [[kernel]] block 1 (btio): async cases run --iterations 8 (they had 1)"
        in (c.notes[0])
    )


def test_async_iterations_stay_when_enough_and_become_even(tmp_path, inv_ref):
    text = AXES.replace("BACKENDS", '["mpiio"]').replace("dumps = 2", "dumps = 2, iterations = 9")
    c = load(tmp_path, inv_ref, text)
    its = {x.argv("write")[x.argv("write").index("--iterations") + 1] for x in c.cases}
    asyncs = [x for x in c.cases if "--async" in x.argv("write")]
    assert its == {"9", "10"}
    assert {x.argv("write")[x.argv("write").index("--iterations") + 1] for x in asyncs} == {"10"}
    text = text.replace("iterations = 9", "iterations = 12")
    assert load(tmp_path, inv_ref, text).notes == []


def test_async_on_a_backend_without_asynchronous_write_is_one_clear_line(tmp_path, inv_ref):
    text = AXES.replace("BACKENDS", '["mpiio", "hdf5"]').replace("[false, true]", "[true]")
    with pytest.raises(spec.CampaignError) as e:
        load(tmp_path, inv_ref, text)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"{tmp_path / 'c.toml'}: [[kernel]] block 1 (btio): case 'btio hdf5 ")
    assert "backend hdf5 has no asynchronous write" in msg
    assert "give this block async = [false], or move hdf5 to a block without async = true" in msg
    # and through the command line (the real binary): exit 2, one line, nothing run
    (tmp_path / "c.toml").write_text(text.replace('["mpiio", "hdf5"]', '["hdf5"]'))
    p = cli("run", tmp_path / "c.toml", "--dry-run", cwd=tmp_path)
    assert p.returncode == 2 and "backend hdf5 has no asynchronous write" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_a_binary_without_async_reference_is_named(tmp_path, inv):
    text = AXES.replace("BACKENDS", '["mpiio"]')
    if "async-reference" in inv.options("btio"):  # the binary has it: the campaign loads
        assert any("--async-reference" in x.argv("write") for x in load(tmp_path, inv, text).cases)
        return
    with pytest.raises(spec.CampaignError) as e:
        load(tmp_path, inv, text)
    assert f"which {inv.binary} lacks: build a newer iokernels, or give async = [false]" in str(
        e.value
    )


@pytest.mark.parametrize(
    "axis,why",
    [
        ("compute = [-1]", "compute = -1: seconds must be a finite number, at least 0"),
        ("compute = [true]", "compute must be seconds (a number or a list of them), got True"),
        ('async = ["yes"]', "async must be true, false or a list of them, got ['yes']"),
        ("compute = []", "compute must be a non-empty list, got []"),
    ],
)
def test_bad_axes(tmp_path, inv_ref, axis, why):
    text = AXES.replace("BACKENDS", '["mpiio"]')
    key = axis.split(" ")[0]
    text = re.sub(rf"^{key} = .*$", axis, text, flags=re.M)
    with pytest.raises(spec.CampaignError) as e:
        load(tmp_path, inv_ref, text)
    assert why in str(e.value)


def test_compute_given_twice_is_refused(tmp_path, inv_ref):
    text = AXES.replace("BACKENDS", '["mpiio"]').replace("dumps = 2", 'dumps = 2, compute = "1"')
    with pytest.raises(spec.CampaignError) as e:
        load(tmp_path, inv_ref, text)
    assert "compute is given twice" in str(e.value)


def test_the_campaign_file_plans(inv_ref):
    c = spec.load(REPO / "campaigns" / "compute-async.toml", inv_ref)
    kernels = {x.kernel for x in c.cases}
    assert kernels == {"btio", "e3sm"}
    asyncs = [x for x in c.cases if "--async" in x.argv("write")]
    assert asyncs and all("--async-reference" in x.argv("write") for x in asyncs)
    assert {x.backend for x in asyncs} <= {"mpiio", "pnetcdf", "adios2", "null"}
    assert any("--compute" in x.argv("write") for x in c.cases)


# records: the binary's, with an --async-reference run's overlap planted

OVERLAP = {
    "design": "ABBA",
    "iterations_async": 4,
    "iterations_sync": 4,
    "exposed_async_seconds": [0.01, 0.012, 0.011, 0.013],
    "exposed_sync_seconds": [0.05, 0.052, 0.049, 0.051],
    "ratio": 0.22,
    "ratio_ci95": [0.18, 0.27],
    "overlap": 0.78,
    "overlap_ci95": [0.73, 0.82],
    "call": "hidden",
    "post_seconds": 0.004,
    "wait_seconds": 0.007,
    "where": "wait",
    "line": "overlap: 0.78 [0.73, 0.82] hidden (ABBA, 4+4 iterations)",
}
NONE = OVERLAP | {
    "ratio": 1.01,
    "ratio_ci95": [0.95, 1.08],
    "overlap": -0.01,
    "overlap_ci95": [-0.08, 0.05],
    "call": "no overlap",
    "where": "post",
    "line": "overlap: -0.01 [-0.08, 0.05] no overlap",
}


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    common = ("btio", "--grid", "8,8,8", "--dumps", "2", "--overwrite")
    sync = record_of(
        tmp_path_factory.mktemp("s"), *common, "--backend", "mpiio", "--compute", "0.01"
    )
    asyn = record_of(
        tmp_path_factory.mktemp("a"),
        *common,
        "--backend",
        "pnetcdf",
        "--compute",
        "0.01",
        "--async",
    )
    assert (sync["backend"], asyn["backend"]) == ("mpiio", "pnetcdf")
    return sync, asyn


def planted(record, ov, compute=None, oversubscribed=False):
    r = copy.deepcopy(record)
    if ov is not None:
        r["overlap"] = ov
    if compute is not None:
        r["options"]["core"]["compute"] = compute
    if oversubscribed:
        r["environment"]["oversubscribed"] = True
        for n in r["environment"].get("node_cores") or []:
            n["ranks"], n["usable_cores"] = 4, 2
    return r


def case(backend, variant):
    return Case(
        "btio",
        "btio",
        backend,
        1,
        (("grid", "8,8,8"), ("x", variant)),
        ("write",),
        1,
        60.0,
        variant,
    )


def store_of(path, runs):
    """A store of one campaign holding `runs`: (backend, variant, record)."""
    s = Store(path)
    camp = Campaign("ov", "", Path("ov.toml"), [], Slurm())
    s.begin_campaign("c1", camp, "mpiexec", str(BIN), "out", "host", "now")
    for i, (backend, variant, rec) in enumerate(runs, 1):
        out = Outcome(Path("."), "ok", 0, None, rec, 1000.0 + i, 1.0)
        s.add_run("c1", case(backend, variant), "write", 1, out, {"case_index": i})
    s.finish_campaign("c1", "later")
    return s


def test_the_store_keeps_the_overlap_figures(tmp_path, records):
    sync, asyn = records
    s = store_of(
        tmp_path / "s.sqlite",
        [
            ("mpiio", "compute=0.01 async=off", sync),
            ("pnetcdf", "compute=0.01 async=on", planted(asyn, OVERLAP)),
        ],
    )
    s.close()
    got = rows(tmp_path / "s.sqlite", "SELECT * FROM runs ORDER BY id")
    assert got[0]["async_write"] == 0 and got[0]["compute_seconds"] == 0.01
    assert got[0]["overlap"] is None and got[0]["overlap_call"] is None
    assert got[0]["exposed_io_seconds"] > 0  # the write passes' own
    a = got[1]
    assert a["async_write"] == 1 and a["compute_seconds"] == 0.01
    assert (a["overlap"], a["overlap_lo"], a["overlap_hi"]) == (0.78, 0.73, 0.82)
    assert (a["overlap_call"], a["overlap_where"]) == ("hidden", "wait")
    assert a["exposed_io_seconds"] == pytest.approx(0.0115)  # median of the async iterations
    assert a["exposed_sync_seconds"] == pytest.approx(0.0505)
    assert a["overlap_line"] == OVERLAP["line"]
    assert rows(tmp_path / "s.sqlite", "SELECT value FROM meta")[0]["value"] == "6"


def test_a_version_5_store_gains_the_overlap_columns(tmp_path, records):
    db = tmp_path / "old.sqlite"
    store_of(db, [("mpiio", "", records[0])]).close()
    con = sqlite3.connect(db)
    for col in ("overlap", "overlap_lo", "overlap_call", "async_write", "compute_seconds"):
        con.execute(f"ALTER TABLE runs DROP COLUMN {col}")
    con.execute("UPDATE meta SET value = '5'")
    con.commit()
    con.close()
    s = Store(db, readonly=True)  # read as it is: the missing columns are None
    (r,) = s.runs()
    assert r["overlap"] is None and r["status"] == "ok"
    s.close()
    Store(db).close()  # opened to write: migrated
    cols = {r["name"] for r in rows(db, "PRAGMA table_info(runs)")}
    assert {"overlap", "overlap_lo", "overlap_call", "async_write", "compute_seconds"} <= cols
    assert rows(db, "SELECT value FROM meta")[0]["value"] == str(STORE_VERSION) == "6"


def _section(page):
    start = page.index('<h2 id="overlap">')
    return page[start : page.index("<h2", start + 5)]


def test_the_report_draws_overlap_by_compute_time(tmp_path, records):
    sync, asyn = records
    store_of(
        tmp_path / "s.sqlite",
        [
            ("mpiio", "compute=0.01 async=off", planted(sync, None)),
            ("pnetcdf", "compute=0.01 async=on", planted(asyn, NONE, oversubscribed=True)),
            ("pnetcdf", "compute=0.2 async=on", planted(asyn, OVERLAP, compute="0.2")),
            ("pnetcdf", "compute=0.01 async=off", planted(sync, None)),
        ],
    ).close()
    page = report_of(tmp_path, "s.sqlite", tmp_path / "r.html")
    sec = _section(page)
    assert "<h3>btio: overlap by compute time</h3>" in sec
    assert "Design: interleaved ABBA in one job against its synchronous reference." in sec
    assert "alternate asynchronous and synchronous in ABBA order" in sec
    assert "so each case carries its own synchronous reference" in sec
    # the figure, with its "no overlap" call labelled
    img = re.search(
        r'<img class="overlap-figure" alt="([^"]*)" src="data:image/png;base64,([^"]+)"', sec
    )
    assert img, sec[:2000]
    assert "no overlap: pnetcdf at 0.01 s" in img.group(1)
    assert base64.b64decode(img.group(2))[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Labelled in the figure: no overlap: pnetcdf at 0.01 s." in sec
    assert (tmp_path / "r-plots" / "overlap-1.png").exists()
    # the table: compute, async, exposed I/O, overlap [lo, hi], call, where; file order
    body = re.findall(r"<tr[^>]*>(.*?)</tr>", sec, re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", b) for b in body[1:]]
    assert [c[:3] for c in cells] == [
        ["mpiio", "0.01", "off"],
        ["pnetcdf", "0.01", "on"],
        ["pnetcdf", "0.2", "on"],
        ["pnetcdf", "0.01", "off"],
    ]
    assert cells[1][5:8] == ["-0.01 [-0.08, 0.05]", "no overlap", "post"]
    assert cells[2][5:8] == ["0.78 [0.73, 0.82]", "hidden", "wait"]
    assert cells[0][5] == "-" and cells[0][3] != "-"  # synchronous: exposed I/O only
    assert '<tr class="nooverlap">' in sec
    # the oversubscribed run is labelled in its row and the section
    assert cells[1][9] == "oversubscribed (4 ranks on 2 cores)"
    assert "oversubscribed (4 ranks on 2 cores): more ranks than cores" in sec


def test_no_section_without_the_axes(tmp_path, records):
    r = copy.deepcopy(records[0])
    r["options"]["core"]["compute"] = None
    for p in r["passes"]:
        for k in ("compute_seconds", "exposed_io_seconds", "io_window_seconds"):
            p.pop(k, None)
    store_of(tmp_path / "s.sqlite", [("mpiio", "", r)]).close()
    page = report_of(tmp_path, "s.sqlite", tmp_path / "r.html")
    assert 'id="overlap"' not in page and "overlap-figure" not in page


def test_compare_shows_both_sides_overlap(tmp_path, records):
    _, asyn = records
    a = [planted(asyn, OVERLAP)] * 1
    b = [planted(asyn, NONE)]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in a))
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in b))
    p = cli("compare", "a.jsonl", "b.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    head = next(i for i, x in enumerate(lines) if x.startswith("overlap of the async cases"))
    assert "ABBA in one job" in lines[head]
    row = next(x for x in lines[head:] if x.startswith("btio pnetcdf n1"))
    assert "0.78 [0.73, 0.82] hidden" in row and "-0.01 [-0.08, 0.05] no overlap" in row
    p = cli("compare", "a.jsonl", "b.jsonl", "--html", "c.html", cwd=tmp_path)
    page = (tmp_path / "c.html").read_text()
    assert "<th>A overlap</th><th>B overlap</th>" in page
    assert '<td class="overlap">0.78 [0.73, 0.82] hidden</td>' in page
    assert '<td class="overlap">-0.01 [-0.08, 0.05] no overlap</td>' in page
    # a side without overlap figures: no overlap lines
    (tmp_path / "c.jsonl").write_text(json.dumps(records[0]) + "\n")
    p = cli("compare", "c.jsonl", "c.jsonl", cwd=tmp_path)
    assert "overlap of the async cases" not in p.stdout
    p = cli("compare", "c.jsonl", "c.jsonl", "--html", "d.html", cwd=tmp_path)
    assert "A overlap" not in (tmp_path / "d.html").read_text()


def test_interval_text():
    assert overlap.interval_text(0.5, 0.25, 0.75) == "0.50 [0.25, 0.75]"
    assert overlap.interval_text(0.5, None, None) == "0.50"
    assert overlap.interval_text(None, None, None) == "-"


REAL = """
[campaign]
name = "ov-real"
iterations = 1
modes = ["write"]

[[kernel]]
name = "btio"
backends = ["mpiio", "pnetcdf"]
ranks = [1]
options = { grid = "16,16,16", dumps = 2, iterations = 4 }
compute = [0.01]
async = [true]
"""


def test_a_real_campaign_stores_and_draws_the_binarys_overlap(tmp_path):
    """The campaign end to end on the real binary: the async cases run with
    --async --async-reference, their iterations raised to 8 (said in a
    note); the store holds each record's own overlap, and the report draws
    and tabulates them."""
    (tmp_path / "c.toml").write_text(REAL)
    p = cli("run", "c.toml", "--db", "s.sqlite", "--out", "out", cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "note:" in p.stdout + p.stderr and "8" in p.stdout + p.stderr
    cols = "backend, overlap, overlap_lo, overlap_hi, overlap_call, overlap_where, overlap_line"
    got = rows(tmp_path / "s.sqlite", f"SELECT {cols}, async_write FROM runs ORDER BY id")
    assert sorted(r["backend"] for r in got) == ["mpiio", "pnetcdf"]
    recs = sorted(Path(tmp_path, "out").rglob("*.jsonl"))
    assert recs, list(Path(tmp_path, "out").rglob("*"))
    by_backend = {}
    for f in recs:
        for line in f.read_text().splitlines():
            rec = json.loads(line)
            by_backend[rec["backend"]] = rec
    for r in got:
        ov = by_backend[r["backend"]]["overlap"]
        assert len(ov["iterations_async"]) == len(ov["iterations_sync"]) == 4
        assert r["async_write"] == 1
        assert r["overlap"] == pytest.approx(ov["overlap"])
        assert [r["overlap_lo"], r["overlap_hi"]] == pytest.approx(ov["overlap_ci95"])
        assert (r["overlap_call"], r["overlap_where"]) == (ov["call"], ov["where"])
        assert r["overlap_line"] == ov["line"]
    page = report_of(tmp_path, "s.sqlite", tmp_path / "r.html")
    sec = _section(page)
    assert "<h3>btio: overlap by compute time</h3>" in sec
    body = re.findall(r"<tr[^>]*>(.*?)</tr>", sec, re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", b) for b in body[1:]]
    assert sorted(c[0] for c in cells) == ["mpiio", "pnetcdf"], cells
    for c in cells:
        ov = by_backend[c[0]]["overlap"]
        lo, hi = ov["overlap_ci95"]
        assert f"{ov['overlap']:.2f} [{lo:.2f}, {hi:.2f}]" in c, c
