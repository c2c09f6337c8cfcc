# SPDX-License-Identifier: BSD-3-Clause
"""iokernels-campaign: run campaigns, query the results store, write reports.

    iokernels-campaign run campaigns/default.toml [--db DB] [--out DIR] [--launcher L] [--dry-run]
                       [--resume]   (continue the campaign's latest session: what the store lacks)
    iokernels-campaign run A.toml B.toml --interleave [--db DB]   (one session, rounds over both)
    iokernels-campaign calibrate CASE.toml [--pairs N] [--runs K] [--design blocked|interleaved]
    iokernels-campaign list DB [--kernel K] [--backend B] [--campaign C] [--failed]
    iokernels-campaign report DB [-o report.html] [--campaign C]
    iokernels-campaign compare A.sqlite B.sqlite [--html FILE] [--campaign-a C] [--campaign-b C]
    iokernels-campaign export DB --csv FILE [--parquet FILE] [--campaign C]
    iokernels-campaign collect OUT/runs/SESSION --db DB [--job-ended]   (after the sbatch job)
    iokernels-campaign trace2replay LOG --out FILE [--force]   (a Darshan DXT trace to replay)
    iokernels-campaign tune SPEC.toml [--db DB] [--out DIR] [--bin B] [--dry-run] [--resume]

Exit codes: 0 success, 1 some run failed (they are stored as failed), 2 bad
campaign file, store, file argument or usage, 128 + N ended by signal N
(SIGINT, SIGTERM, SIGHUP: the running launcher ended, finished runs stored).
Every error is one line; IOK_CAMPAIGN_DEBUG=1 prints the traceback of an
unexpected one."""

import argparse
import errno
import json
import os
import shlex
import shutil
import sys
import traceback
from pathlib import Path

from .base import extras, interrupt, limits, paths
from .report import html_report, staged, tables, timing, verdict
from .report.aggregate import summarize
from .run import inventory, launch, resumed, runner
from .spec import lustre, spec
from .store import record
from .store.store import Store, StoreError
from .trace import darshan_log, trace2replay

DEFAULT_DB = "results/iokernels.sqlite"


class UsageError(Exception):
    pass


def _parser():
    ap = argparse.ArgumentParser(prog="iokernels-campaign", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run every case of a campaign file, store, report")
    r.add_argument(
        "campaigns",
        nargs="+",
        metavar="CAMPAIGN",
        help="campaign file (TOML); several with --interleave",
    )
    r.add_argument(
        "--interleave",
        action="store_true",
        help="run the campaign files given in one session: rounds over all their cases, each "
        "run stored under its own file's campaign (compare --campaign-a A --campaign-b B)",
    )
    r.add_argument("--db", default=DEFAULT_DB, help=f"results store (default {DEFAULT_DB})")
    r.add_argument(
        "--out",
        metavar="DIR",
        help="directory of case directories and report (default results/CAMPAIGN-NAME)",
    )
    r.add_argument(
        "--launcher",
        choices=launch.LAUNCHERS,
        default="mpiexec",
        help="how each run is launched (default mpiexec; sbatch writes one batch script for "
        "the campaign, a job step per run)",
    )
    r.add_argument(
        "--dry-run",
        action="store_true",
        help="print the commands (sbatch: write and print the batch script); run nothing",
    )
    r.add_argument(
        "--binary",
        "--bin",
        dest="bin",
        metavar="FILE",
        help="iokernels binary (default $IOKERNELS_BIN or $IOK_BIN, else build/iokernels of the "
        "source tree, else iokernels on PATH)",
    )
    r.add_argument("--no-report", action="store_true", help="store only, write no report")
    r.add_argument(
        "--resume",
        action="store_true",
        help="continue the latest session of this campaign in --db: its stored runs are kept, "
        "the others run (without it every run is a new session)",
    )

    ca = sub.add_parser(
        "calibrate",
        help="compare one case with itself, blocked and interleaved: the false-winner rate "
        "and the drift of this machine",
    )
    ca.add_argument("case", metavar="CASE.toml", help="campaign file of exactly one case")
    ca.add_argument(
        "--pairs", type=int, default=20, metavar="N", help="A/A pairs (default %(default)s)"
    )
    ca.add_argument(
        "--runs", type=int, default=5, metavar="K", help="runs a side of a pair (default 5)"
    )
    ca.add_argument(
        "--design",
        choices=("blocked", "interleaved", "both"),
        default="both",
        help="how the runs are labelled A and B: the first half of a pair A, the second B "
        "(blocked), A B B A ... (interleaved), or both on the same runs (default both)",
    )
    ca.add_argument("--db", default=DEFAULT_DB, help=f"results store (default {DEFAULT_DB})")
    ca.add_argument("--out", metavar="DIR", help="directory of the runs (default results/NAME)")
    ca.add_argument(
        "--binary", "--bin", dest="bin", metavar="FILE", help="iokernels binary (as for run)"
    )
    ca.add_argument(
        "--launcher",
        choices=("mpiexec", "srun"),
        default="mpiexec",
        help="how each run is launched (default mpiexec; srun inside an allocation)",
    )

    li = sub.add_parser("list", help="list the runs in a store")
    li.add_argument("db", metavar="DB", help="results store (SQLite file)")
    li.add_argument("--kernel", metavar="NAME", help="only runs of this kernel")
    li.add_argument("--backend", metavar="NAME", help="only runs on this backend")
    li.add_argument("--campaign", help="campaign id or name")
    li.add_argument("--failed", action="store_true", help="only failed runs")

    rep = sub.add_parser("report", help="write the HTML report of a store")
    rep.add_argument("db", metavar="DB", help="results store (SQLite file)")
    rep.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default="results/report.html",
        help="HTML file (default %(default)s)",
    )
    rep.add_argument("--campaign", help="campaign id or name (default: every run)")

    c = sub.add_parser("compare", help="the cases two stores or --json files share, side by side")
    c.add_argument(
        "a",
        metavar="A",
        help="results store, or JSON Lines file of records, taken as the reference",
    )
    c.add_argument(
        "b", metavar="B", help="store or JSON Lines file compared with it (bandwidth ratios b / a)"
    )
    c.add_argument(
        "--html", metavar="FILE", help="also write the compare page (B/A per case, better / worse)"
    )
    c.add_argument("--campaign-a", metavar="CAMPAIGN", help="only this campaign (id or name) of A")
    c.add_argument("--campaign-b", metavar="CAMPAIGN", help="only this campaign (id or name) of B")

    ex = sub.add_parser("export", help="runs, passes and phases as one table: a row per pass")
    ex.add_argument("db", metavar="DB", help="results store (SQLite file)")
    ex.add_argument("--csv", metavar="FILE", help="CSV file to write")
    ex.add_argument("--parquet", metavar="FILE", help="Parquet file to write (the [parquet] extra)")
    ex.add_argument("--campaign", help="campaign id or name (default: every run)")

    co = sub.add_parser("collect", help="store the finished runs of an sbatch campaign")
    co.add_argument("session", help="OUT/runs/SESSION directory written by run --launcher sbatch")
    co.add_argument("--db", default=DEFAULT_DB, help=f"results store (default {DEFAULT_DB})")
    co.add_argument(
        "--job-ended",
        action="store_true",
        help="the job is over (where neither sacct nor squeue can say): store the runs "
        "without a status as failed",
    )

    t = sub.add_parser(
        "trace2replay", help="a Darshan log's DXT trace as a replay file for iokernels replay"
    )
    t.add_argument(
        "log", metavar="LOG", help="Darshan log with DXT records (DXT_ENABLE_IO_TRACE=1)"
    )
    t.add_argument("--out", metavar="FILE", required=True, help="replay file to write")
    t.add_argument("--force", action="store_true", help="replace --out if it exists")

    t = sub.add_parser("tune", help="search the settings that make one case fast (docs/tune.md)")
    t.add_argument("spec", help="tune file (TOML): one [[kernel]] block and a [tune] table")
    t.add_argument("--db", default=DEFAULT_DB, help=f"results store (default {DEFAULT_DB})")
    t.add_argument(
        "--out", metavar="DIR", help="directory of the runs and report (default results/NAME)"
    )
    t.add_argument(
        "--binary", "--bin", dest="bin", metavar="FILE", help="iokernels binary (as for run)"
    )
    t.add_argument("--launcher", choices=("mpiexec", "srun"), default="mpiexec", help="as for run")
    t.add_argument(
        "--dry-run", action="store_true", help="check the file, print the space; run nothing"
    )
    t.add_argument("--no-report", action="store_true", help="store only, write no report")
    t.add_argument(
        "--resume",
        action="store_true",
        help="continue the latest unfinished tune of this file in --db: its finished trials "
        "are kept, the rest of the budget runs",
    )
    t.add_argument(
        "--allow-oversubscribed",
        action="store_true",
        help="tune a case with more ranks than cores (refused otherwise: its times would be "
        "the ranks' contention); the answer says so",
    )
    return ap


def _store_path(label, path):
    """An existing store: a missing one is named as such."""
    if not os.path.lexists(path):
        raise paths.PathError(f"no results store at {paths.show(path)} ({label})")
    return path


_OPENED = []  # the stores a command opened, closed when it ends
# what reading a store's values of the wrong type or shape raises
DATA_ERRORS = (TypeError, ValueError, KeyError, AttributeError, IndexError, ZeroDivisionError)


def _store(*args, **kwargs):
    store = Store(*args, **kwargs)
    _OPENED.append(store)
    return store


def _open(label, path):
    """A store for reading: checked, then opened read-only (never created)."""
    return _store(paths.store_for_reading(label, _store_path(label, path)), readonly=True)


def _check_out(out, report):
    paths.output_dir("--out", out)
    paths.output_dir("runs folder of --out", Path(out) / "runs")
    if report:  # written after every run: refused now rather than then
        page = Path(out) / "report.html"
        paths.output_file("report (--no-report: none)", page)
        paths.output_dir("report plots (--no-report: none)", page.with_name("report-plots"))


def _is_jsonl(path):
    return Path(path).is_file() and os.access(path, os.R_OK) and record.is_jsonl(path)


def _known_campaign(store, flag, campaign):
    """A --campaign the store has (an id or a name), else one line naming
    it and the campaigns the store has."""
    if not campaign:
        return
    held = store.campaigns()
    if any(campaign in (c["id"], c["name"]) for c in held):
        return
    names = list(dict.fromkeys(c["name"] for c in held))
    have = ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
    raise UsageError(
        f"{flag} {campaign}: {paths.show(store.path)} has no campaign of that id or name; "
        + (f"it has {have}" if held else "it has none")
    )


def _runs_of(label, path, campaign=None, flag="--campaign"):
    """The runs of a store, or of a JSON Lines file of --json records."""
    if _is_jsonl(path):
        if campaign:
            raise UsageError(f"{label} {path} is a JSON Lines file of records: it has no campaigns")
        try:
            return record.runs_from_jsonl(path)
        except record.RecordError as e:
            raise UsageError(str(e)) from None
    store = _open(label, path)
    _known_campaign(store, flag, campaign)
    return store.runs(campaign=campaign)


def _launcher_on_path(launcher):
    if not shutil.which(launcher):
        raise UsageError(f"{launcher} not found on PATH: is this the right machine (--launcher)?")


def _load_inventory(binary):
    """The binary's inventory; a backend whose module cannot load is named
    (one line each) and left out, so campaigns that do not use it run."""
    inv = inventory.load(binary)
    for name, why in inv.unloadable.items():
        print(f"iokernels-campaign: note: backend {name} is left out: {why}", file=sys.stderr)
    return inv


def cmd_run(a):
    a.campaign = a.campaigns[0]
    if len(a.campaigns) > 1 and not a.interleave:
        raise UsageError(
            "several campaign files: give --interleave to run them together in one session "
            "(rounds over all their cases), or run them one at a time"
        )
    if a.interleave:
        return _run_interleaved(a)
    paths.input_file("campaign file", a.campaign)
    if a.bin:
        paths.executable("--bin", a.bin)
    writes = not a.dry_run or a.launcher == "sbatch"
    if not a.dry_run:
        paths.store_for_writing("--db", a.db)
    if a.out and writes:
        _check_out(a.out, not a.no_report and a.launcher != "sbatch")
    if not a.dry_run:  # before the binary is asked anything: its MPI may need the launcher
        _launcher_on_path(a.launcher)
    if a.resume and (a.dry_run or a.launcher == "sbatch"):
        raise UsageError(
            "--resume runs what a session lacks: not with --dry-run or sbatch "
            "(an sbatch session is completed by collect)"
        )
    inv = _load_inventory(a.bin)
    campaign = spec.load(a.campaign, inv)
    for note in campaign.notes:
        print(f"note: {note}")
    earlier = None
    if a.resume and Path(a.db).exists():
        earlier = resumed.latest(_open("--db", a.db), campaign)
    out = Path(a.out or Path("results") / campaign.name).resolve()
    if earlier:
        out = resumed.out_dir(earlier, a.out).resolve()
    if (not a.out or earlier) and writes:
        _check_out(out, not a.no_report and a.launcher != "sbatch")
    if a.dry_run and a.launcher != "sbatch":
        for case in campaign.cases:
            if case.lustre:
                args = " ".join(lustre.lfs_args(case.lustre_settings))
                print(f"# {case.name}: lfs setstripe {args} CASEDIR")
            for mode in case.modes:
                argv = [str(inv.binary), *case.argv(mode), "--json", f"{mode}.jsonl"]
                env = case.environment("CASEDIR", "CASEDIR/iter1", mode, 1)
                cmd, launcher_env = launch.command(
                    a.launcher,
                    case.ranks,
                    argv,
                    campaign.slurm.srun,
                    env,
                    campaign.slurm.ntasks_per_node,
                )
                print(f"# {case.name} {mode} x{case.iterations}")
                print(shlex.join(launch.with_env(cmd, launcher_env)))
        print(f"# dry run: {len(campaign.cases)} cases, nothing run or stored")
        return 0
    if a.launcher == "sbatch":
        store = None if a.dry_run else _store(a.db)
        runner.write_sbatch(campaign, inv, out, store, submit=not a.dry_run)
        return 0
    store = _store(a.db)
    if a.resume and not earlier:
        print(f"--resume: no session of campaign {campaign.name} in {a.db}: starting one")
    elif not a.resume:
        note = resumed.unfinished_note(store, campaign)
        if note:
            print(note)
    session = runner.run_cases(campaign, inv, store, a.launcher, out, resume=earlier)
    runs = [r for r in store.runs(campaign=session.id) if r["kernel"] != "mix"]
    print("\nmedians at each kernel's largest rank count (every case: the report, or list):")
    print(tables.short_table(summarize(runs)))
    if not a.no_report:
        path, pngs, _ = html_report.write(
            store,
            out / "report.html",
            campaign=session.id,
            title=f"iokernels campaign {campaign.name}",
        )
        print(f"\nplots:  {path.with_name(path.stem + '-plots')}/ ({len(pngs)} PNG)")
        print(f"report: {path.resolve()}")
    print(
        f"store:  {store.path} (campaign {session.id}); "
        f"{session.done - session.failed} runs ok, {session.failed} failed"
    )
    return 1 if session.failed else 0


def _run_interleaved(a):
    """run A.toml B.toml ... --interleave: one session per file (its own
    campaign in the store), their runs in one order: rounds over the union
    of their cases (run/order.py), seed from the first file or drawn."""
    for f in a.campaigns:
        paths.input_file("campaign file", f)
    if a.bin:
        paths.executable("--bin", a.bin)
    if a.launcher == "sbatch":
        raise UsageError(
            "--interleave runs with mpiexec or srun (inside an allocation); a batch script "
            "holds one campaign file: its cases are interleaved already ([campaign] order)"
        )
    if a.out and len(a.campaigns) > 1:
        raise UsageError("--out with several campaign files: each keeps results/NAME; leave it out")
    if not a.dry_run:
        paths.store_for_writing("--db", a.db)
        _launcher_on_path(a.launcher)
    inv = _load_inventory(a.bin)
    campaigns = [spec.load(f, inv) for f in a.campaigns]
    for note in (n for c in campaigns for n in c.notes):
        print(f"note: {note}")
    names = [c.name for c in campaigns]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(
            f"campaign name {twice[0]} is given twice: compare tells the files apart by name; "
            'give each its own [campaign] name = "..."'
        )
    for c in campaigns:
        c.order = "interleaved"
    if a.dry_run:
        seed = campaigns[0].seed if campaigns[0].seed is not None else 0
        for rnd, n, k, case, it, _ in runner.plan(campaigns, "interleaved", seed):
            print(f"# round {rnd} run {n}: {campaigns[k].name} {case.name} iter {it}")
        print(f"# dry run: {sum(len(c.cases) for c in campaigns)} cases, nothing run or stored")
        return 0
    store = _store(a.db)
    parts = []
    for c in campaigns:
        earlier = resumed.latest(store, c) if a.resume else None
        if earlier and earlier.get("joint") is None and len(campaigns) > 1:
            earlier = None  # a session of this file alone: not the joint one
        out = Path(a.out or Path("results") / c.name).resolve()
        if earlier:
            out = resumed.out_dir(earlier, a.out).resolve()
        _check_out(out, False)
        parts.append((c, out, earlier))
    if len({p[2] is None for p in parts}) > 1:
        raise UsageError(
            "--resume: some of these campaigns have a joint session to resume and others do "
            "not: run without --resume to start a new one"
        )
    sessions = runner.run_together(parts, inv, store, a.launcher, joint=len(campaigns) > 1)
    failed = 0
    for c, session in zip(campaigns, sessions, strict=True):
        runs = [r for r in store.runs(campaign=session.id) if r["kernel"] != "mix"]
        print(f"\ncampaign {c.name} (session {session.id}): medians")
        print(tables.short_table(summarize(runs)))
        failed += session.failed
    if len(sessions) == 2:
        x, y = (s.id for s in sessions)
        print(
            f"\ncompare: iokernels-campaign compare {a.db} {a.db} --campaign-a {x} --campaign-b {y}"
        )
    print(f"store:  {store.path}; {failed} runs failed")
    return 1 if failed else 0


def cmd_calibrate(a):
    """One case against itself: 2 x runs x pairs runs in a row, labelled as
    each design would (report/calibration.py), the false winners counted."""
    import dataclasses

    from .report import calibration

    paths.input_file("campaign file", a.case)
    if a.bin:
        paths.executable("--bin", a.bin)
    if a.pairs < 1:
        raise UsageError(f"--pairs must be 1 or more, got {a.pairs}")
    if a.runs < verdict.MIN_RUNS:
        raise UsageError(
            f"--runs must be {verdict.MIN_RUNS} or more (fewer cannot name a winner), got {a.runs}"
        )
    paths.store_for_writing("--db", a.db)
    _launcher_on_path(a.launcher)
    inv = _load_inventory(a.bin)
    campaign = spec.load(a.case, inv)
    cases = [c for c in campaign.cases if getattr(c, "kernel", None) != "mix"]
    if len(campaign.cases) != 1 or not cases:
        raise UsageError(
            f"{a.case}: calibrate runs one case, this file has {len(campaign.cases)} "
            "(one kernel block, one backend, one rank count; no mix)"
        )
    case = dataclasses.replace(cases[0], iterations=2 * a.runs * a.pairs)
    campaign = dataclasses.replace(campaign, cases=[case], order="blocked")
    out = Path(a.out or Path("results") / campaign.name).resolve()
    _check_out(out, False)
    store = _store(a.db)
    session = runner.run_together([(campaign, out, None)], inv, store, a.launcher)[0]
    runs = sorted(store.runs(campaign=session.id), key=lambda r: (r["iteration"], r["id"]))
    mode = case.modes[0]
    values = [
        (r["read_bandwidth"] if mode == "read" else r["write_bandwidth"])
        if r["status"] == "ok"
        else None
        for r in runs
        if r["mode"] == mode
    ]
    designs = calibration.DESIGNS if a.design == "both" else (a.design,)
    ok = [r["started"] for r in runs if r["started"]]
    title = (
        f"\ncalibrate {case.name} {mode}: {a.pairs} A/A pairs of {a.runs} runs a side, "
        f"{len(values)} runs, {sum(v is not None for v in values)} ok"
        + (f", {timing.clock(min(ok), min(ok))}-{timing.clock(max(ok), min(ok))} UTC" if ok else "")
    )
    text, _, _ = calibration.report(values, a.runs, designs, title)
    print(text)
    print(f"store:  {store.path} (campaign {session.id})")
    return 1 if session.failed else 0


def cmd_list(a):
    store = _open("DB", a.db)
    _known_campaign(store, "--campaign", a.campaign)
    runs = store.runs(
        campaign=a.campaign,
        kernel=a.kernel,
        backend=a.backend,
        status="failed" if a.failed else None,
    )
    print(tables.runs_table(runs) if runs else "no runs match")
    return 0


def cmd_report(a):
    store = _open("DB", a.db)
    _known_campaign(store, "--campaign", a.campaign)
    paths.output_file("-o", a.output)
    paths.not_an_input("-o", a.output, [a.db])
    page = Path(a.output)
    paths.output_dir("plots folder of -o", page.with_name(page.stem + "-plots"))
    if not store.runs(campaign=a.campaign):
        raise UsageError(f"{a.db}: no runs" + (f" of campaign {a.campaign}" if a.campaign else ""))
    path, pngs, summaries = html_report.write(store, a.output, campaign=a.campaign)
    print(tables.cases_table(summaries))
    print(f"\nreport: {path.resolve()} ({len(pngs)} plots)")
    return 0


def cmd_compare(a):
    for label, path in (("A", a.a), ("B", a.b)):  # both, before opening either
        if not _is_jsonl(path):
            paths.store_for_reading(label, _store_path(label, path))
    if a.html:
        paths.output_file("--html", a.html)
        paths.not_an_input("--html", a.html, [a.a, a.b])
    ra = _runs_of("A", a.a, a.campaign_a, "--campaign-a")
    rb = _runs_of("B", a.b, a.campaign_b, "--campaign-b")
    name_a = a.a + (f" (campaign {a.campaign_a})" if a.campaign_a else "")
    name_b = a.b + (f" (campaign {a.campaign_b})" if a.campaign_b else "")
    text, common = tables.compare_table(ra, rb, "A", "B")
    print(f"A = {name_a}\nB = {name_b}")
    print(text)
    if a.html:
        path, _ = html_report.write_compare(ra, rb, a.html, name_a, name_b)
        print(f"compare page: {path.resolve()}")
    return 0 if common else 1


def _exported_before(flag, path):
    """An existing file export may replace: one it wrote (its first column is
    run_id), never another."""
    path = Path(path)
    if not path.exists():
        return
    try:
        if flag == "--csv":
            with open(path, encoding="utf-8", errors="replace") as f:
                ours = f.readline(4096).startswith("run_id,")
        else:
            import pyarrow.parquet

            ours = pyarrow.parquet.read_schema(path).names[:1] == ["run_id"]
    except Exception:  # not Parquet at all: not ours either
        ours = False
    if not ours:
        raise UsageError(
            f"{flag} {paths.show(path)} exists and was not written by iokernels-campaign "
            "export: give another file"
        )


def cmd_export(a):
    if not a.csv and not a.parquet:
        raise UsageError("export needs --csv FILE or --parquet FILE")
    if a.parquet:
        extras.need("pyarrow")
    store = _open("DB", a.db)
    _known_campaign(store, "--campaign", a.campaign)
    for flag, path in (("--csv", a.csv), ("--parquet", a.parquet)):
        if path:
            paths.output_file(flag, path)
            paths.not_an_input(flag, path, [a.db])
            _exported_before(flag, path)
    from .report import frame

    df, failed = frame.export(store, campaign=a.campaign)
    if df.empty:
        raise UsageError(f"{a.db}: no successful runs to export")
    for path, write in ((a.csv, df.to_csv), (a.parquet, df.to_parquet)):
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            staged.write_with(path, lambda tmp, write=write: write(tmp, index=False))
            runs = df["run_id"].nunique()
            print(f"{path}: {len(df)} passes of {runs} runs, {df.shape[1]} columns")
    if failed:
        print(f"{failed} failed run(s) have no passes and are not exported (list --failed)")
    return 0


def cmd_collect(a):
    session = paths.input_dir(
        "session", a.session, "give OUT/runs/SESSION of run --launcher sbatch"
    )
    paths.store_for_writing("--db", _store_path("--db", a.db))
    if not (session / "campaign.json").is_file():
        raise UsageError(
            f"{a.session}: not a session directory (OUT/runs/SESSION of run --launcher sbatch)"
        )
    try:
        if not isinstance(json.loads((session / "campaign.json").read_text()).get("id"), str):
            raise ValueError("no campaign id")
    except (ValueError, AttributeError, UnicodeDecodeError) as e:
        raise UsageError(f"{paths.show(session / 'campaign.json')} is damaged ({e})") from None
    _, _, failed = runner.collect(session, _store(a.db, create=False), job_ended=a.job_ended)
    return 1 if failed else 0  # as run: a failed run is not a clean exit


def cmd_trace2replay(a):
    return trace2replay.run(a.log, a.out, force=a.force)


def cmd_tune(a):
    extras.need("optuna")
    from .tune import tune, tune_answer, tune_spec

    paths.input_file("tune file", a.spec)
    if a.bin:
        paths.executable("--bin", a.bin)
    if not a.dry_run:
        _launcher_on_path(a.launcher)
    inv = _load_inventory(a.bin)
    tspec = tune_spec.load(a.spec, inv)
    if a.dry_run:
        for name, values in tspec.space.items():
            print(f"{name:<22} {', '.join(map(str, values))}")
        for name, why in tspec.inert.items():
            print(f"# {name}: not searched: {why}")
        over = tune.local_oversubscription(tspec.case.ranks, a.launcher)
        if over:
            print(
                f"# {record.oversubscribed_text(*over)} here: tune refuses it without "
                "--allow-oversubscribed"
            )
        grid = "grid" if tspec.use_grid() else "TPE"
        print(f"# dry run: {tspec.size} combinations ({grid}); nothing run or stored")
        return 0
    tune.check_cores(tspec, a.launcher, a.allow_oversubscribed)  # before the store
    paths.store_for_writing("--db", a.db)
    out = Path(a.out or Path("results") / tspec.campaign.name).resolve()
    earlier = None
    if a.resume and Path(a.db).exists():
        earlier = resumed.latest(_open("--db", a.db), tspec.campaign)
    if earlier:
        out = resumed.out_dir(earlier, a.out).resolve()
        done = _OPENED[-1].tunes(campaign=earlier["id"])
        if done:  # finished: its answer stands
            print(f"--resume: tune session {earlier['id']} has finished; its answer:")
            print(tune_answer.text(done[-1]))
            return 0
    elif a.resume:
        print(f"--resume: no session of tune {tspec.campaign.name} in {a.db}: starting one")
    _check_out(out, not a.no_report)
    store = _store(a.db)
    tuner = tune.Tuner(
        tspec,
        inv,
        store,
        out,
        a.launcher,
        resume=earlier,
        allow_oversubscribed=a.allow_oversubscribed,
    )
    try:
        answer = tuner.run()
    except KeyboardInterrupt as e:
        e.detail = (
            f"{len(tuner.trials)} trials of tune {tspec.campaign.name} (session "
            f"{tuner.session.id}) are kept in {paths.show(store.path)} and its folder; "
            "run it again with --resume to go on"
        )
        raise
    store.add_tune(tuner.session.id, answer)
    print(tune_answer.text(answer))
    if not a.no_report:
        path, _, _ = html_report.write(
            store,
            out / "report.html",
            campaign=tuner.session.id,
            title=f"iokernels tune {tspec.campaign.name}",
        )
        print(f"report:   {path.resolve()}")
    print(f"store:    {store.path} (campaign {tuner.session.id})")
    return 0


COMMANDS = {
    "tune": cmd_tune,
    "run": cmd_run,
    "list": cmd_list,
    "report": cmd_report,
    "compare": cmd_compare,
    "calibrate": cmd_calibrate,
    "export": cmd_export,
    "collect": cmd_collect,
    "trace2replay": cmd_trace2replay,
}


def _one_line(text):
    text = " ".join(str(text).split())
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
    return text if len(text) <= 600 else text[:580] + "..."


def _say(text):
    print(f"iokernels-campaign: error: {_one_line(text)}", file=sys.stderr)


def _utf8_mode(argv):
    """Python decodes file names with the locale's encoding: under a C
    locale with UTF-8 mode off (PYTHONUTF8=0) a non-ASCII --db or --out
    becomes text SQLite cannot store. The command runs again in UTF-8 mode
    (what Python itself does for a C locale when not told otherwise)."""
    if argv is not None or sys.flags.utf8_mode or sys.getfilesystemencoding() == "utf-8":
        return
    if os.environ.get("IOK_CAMPAIGN_UTF8_RETRY"):  # one attempt only
        return
    env = dict(os.environ, PYTHONUTF8="1", IOK_CAMPAIGN_UTF8_RETRY="1")
    os.execve(sys.executable, sys.orig_argv, env)


def _not_text(a):
    """A file argument whose name is not UTF-8 (bytes the store cannot keep)."""
    for dest, given in vars(a).items():
        for value in given if isinstance(given, list) else [given]:
            _one_text(a, dest, value)


def _one_text(a, dest, value):
    if not isinstance(value, str) or not any("\udc80" <= c <= "\udcff" for c in value):
        return
    positional = {"campaign", "campaigns", "spec", "session", "log", "a", "b", "case"}
    if a.command in ("list", "report", "export"):
        positional.add("db")
    flag = dest.upper() if dest in positional else "--" + dest.replace("_", "-")
    flag = "CAMPAIGN" if dest == "campaigns" else flag
    raise UsageError(
        f"{flag} {paths.show(value)}: the name is not UTF-8 text, which the results "
        "store keeps; rename it or give another path"
    )


def main(argv=None):
    _utf8_mode(argv)
    a = _parser().parse_args(argv)
    earlier_handlers = interrupt.install()
    try:
        _not_text(a)
        return COMMANDS[a.command](a)
    except (
        spec.CampaignError,
        inventory.InventoryError,
        StoreError,
        UsageError,
        paths.PathError,
        html_report.ReportError,
        runner.RunnerError,
        resumed.ResumeError,
        trace2replay.TraceError,
        darshan_log.LogError,
        extras.MissingExtra,
    ) as e:
        _say(e)
        return 2
    except runner.RunFailed as e:  # at run time, as a failed run of `run`
        _say(e)
        return 1
    except KeyboardInterrupt as e:  # SIGINT, and SIGTERM / SIGHUP (interrupt.py)
        interrupt.say(e)
        return interrupt.exit_code(e)
    except (MemoryError, OSError) as e:  # after the checks: a disk filling up, a folder removed
        if os.environ.get("IOK_CAMPAIGN_DEBUG"):
            traceback.print_exc()
        shown = paths.show(e.filename) if getattr(e, "filename", None) else None
        if limits.exhausted(e):
            _say(limits.out_of_memory(e))
        elif getattr(e, "errno", None) == errno.EFBIG:  # Python ignores SIGXFSZ: ulimit -f
            _say(limits.too_large(shown))
        else:
            _say(f"{shown + ': ' if shown else ''}{e.strerror or e}{limits.suspect(e)}")
        return 1
    except Exception as e:  # a backstop: every known failure has its own line
        if os.environ.get("IOK_CAMPAIGN_DEBUG"):
            traceback.print_exc()
        if isinstance(e, ModuleNotFoundError) and extras.missing(e):
            _say(extras.missing(e))  # an optional package: the extra that brings it
            return 2
        read = [s for s in _OPENED if s.readonly]
        if read and isinstance(e, DATA_ERRORS):  # SQLite keeps any value in any column
            names = " or ".join(paths.show(s.path) for s in read)
            _say(
                f"{names} holds values this tool cannot read ({type(e).__name__}: {e}): "
                "a damaged store, or one another program wrote? "
                "(IOK_CAMPAIGN_DEBUG=1 prints the traceback)"
            )
            return 2
        _say(
            f"unexpected {type(e).__name__}: {e}{limits.suspect(e)} "
            "(a bug: IOK_CAMPAIGN_DEBUG=1 prints the traceback)"
        )
        return 1
    finally:
        while _OPENED:
            _OPENED.pop().close()
        interrupt.restore(earlier_handlers)
