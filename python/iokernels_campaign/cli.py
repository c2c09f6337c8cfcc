# SPDX-License-Identifier: BSD-3-Clause
"""iokernels-campaign: run campaigns, query the results store, write reports.

    iokernels-campaign run campaigns/default.toml [--db DB] [--out DIR] [--launcher L] [--dry-run]
    iokernels-campaign list DB [--kernel K] [--backend B] [--campaign C] [--failed]
    iokernels-campaign report DB [-o report.html] [--campaign C]
    iokernels-campaign compare A.sqlite B.sqlite [--html FILE] [--campaign-a C] [--campaign-b C]
    iokernels-campaign export DB --csv FILE [--parquet FILE] [--campaign C]
    iokernels-campaign collect OUT/runs/SESSION --db DB [--job-ended]   (after the sbatch job)

Exit codes: 0 success, 1 some run failed (they are stored as failed), 2 bad
campaign file, store or usage."""

import argparse
import importlib.util
import shlex
import shutil
import sys
from pathlib import Path

from . import html_report, inventory, launch, lustre, runner, spec, tables
from .aggregate import summarize
from .store import Store, StoreError

DEFAULT_DB = "results/iokernels.sqlite"


class UsageError(Exception):
    pass


def _parser():
    ap = argparse.ArgumentParser(prog="iokernels-campaign", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run every case of a campaign file, store, report")
    r.add_argument("campaign", help="campaign file (TOML)")
    r.add_argument("--db", default=DEFAULT_DB, help=f"results store (default {DEFAULT_DB})")
    r.add_argument(
        "--out", help="directory of case directories and report (default results/CAMPAIGN-NAME)"
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
        help="iokernels binary (default $IOKERNELS_BIN or $IOK_BIN, else build/iokernels of the "
        "source tree, else iokernels on PATH)",
    )
    r.add_argument("--no-report", action="store_true", help="store only, write no report")

    li = sub.add_parser("list", help="list the runs in a store")
    li.add_argument("db", help="results store (SQLite file)")
    li.add_argument("--kernel", help="only runs of this kernel")
    li.add_argument("--backend", help="only runs on this backend")
    li.add_argument("--campaign", help="campaign id or name")
    li.add_argument("--failed", action="store_true", help="only failed runs")

    rep = sub.add_parser("report", help="write the HTML report of a store")
    rep.add_argument("db", help="results store (SQLite file)")
    rep.add_argument(
        "-o", "--output", default="results/report.html", help="HTML file (default %(default)s)"
    )
    rep.add_argument("--campaign", help="campaign id or name (default: every run)")

    c = sub.add_parser("compare", help="the cases two stores share, side by side")
    c.add_argument("a", help="results store taken as the reference")
    c.add_argument("b", help="results store compared with it (bandwidth ratios b / a)")
    c.add_argument("--html", help="also write the compare page (B/A per case, better / worse)")
    c.add_argument("--campaign-a", help="only this campaign (id or name) of A")
    c.add_argument("--campaign-b", help="only this campaign (id or name) of B")

    ex = sub.add_parser("export", help="runs, passes and phases as one table: a row per pass")
    ex.add_argument("db", help="results store (SQLite file)")
    ex.add_argument("--csv", help="CSV file to write")
    ex.add_argument("--parquet", help="Parquet file to write (needs pyarrow)")
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
    return ap


def _open(path):
    return Store(path, create=False)


def cmd_run(a):
    inv = inventory.load(a.bin)
    campaign = spec.load(a.campaign, inv)
    out = Path(a.out or Path("results") / campaign.name).resolve()
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
    needs = "sbatch" if a.launcher == "sbatch" else a.launcher
    if not a.dry_run and not shutil.which(needs):
        raise UsageError(f"{needs} not found on PATH: is this the right machine (--launcher)?")
    if a.launcher == "sbatch":
        store = None if a.dry_run else Store(a.db)
        runner.write_sbatch(campaign, inv, out, store, submit=not a.dry_run)
        return 0
    store = Store(a.db)
    session = runner.run_cases(campaign, inv, store, a.launcher, out)
    runs = store.runs(campaign=session.id)
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


def cmd_list(a):
    store = _open(a.db)
    runs = store.runs(
        campaign=a.campaign,
        kernel=a.kernel,
        backend=a.backend,
        status="failed" if a.failed else None,
    )
    print(tables.runs_table(runs) if runs else "no runs match")
    return 0


def cmd_report(a):
    store = _open(a.db)
    if not store.runs(campaign=a.campaign):
        raise UsageError(f"{a.db}: no runs" + (f" of campaign {a.campaign}" if a.campaign else ""))
    path, pngs, summaries = html_report.write(store, a.output, campaign=a.campaign)
    print(tables.cases_table(summaries))
    print(f"\nreport: {path.resolve()} ({len(pngs)} plots)")
    return 0


def cmd_compare(a):
    ra, rb = _open(a.a).runs(campaign=a.campaign_a), _open(a.b).runs(campaign=a.campaign_b)
    name_a = a.a + (f" (campaign {a.campaign_a})" if a.campaign_a else "")
    name_b = a.b + (f" (campaign {a.campaign_b})" if a.campaign_b else "")
    text, common = tables.compare_table(ra, rb, "A", "B")
    print(f"A = {name_a}\nB = {name_b}")
    print(text)
    if a.html:
        path, _ = html_report.write_compare(ra, rb, a.html, name_a, name_b)
        print(f"compare page: {path.resolve()}")
    return 0 if common else 1


def cmd_export(a):
    if not a.csv and not a.parquet:
        raise UsageError("export needs --csv FILE or --parquet FILE")
    if a.parquet and importlib.util.find_spec("pyarrow") is None:
        raise UsageError("--parquet needs pyarrow, which is not installed: use --csv")
    from . import frame

    df, failed = frame.export(_open(a.db), campaign=a.campaign)
    if df.empty:
        raise UsageError(f"{a.db}: no successful runs to export")
    for path, write in ((a.csv, df.to_csv), (a.parquet, df.to_parquet)):
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            write(path, index=False)
            runs = df["run_id"].nunique()
            print(f"{path}: {len(df)} passes of {runs} runs, {df.shape[1]} columns")
    if failed:
        print(f"{failed} failed run(s) have no passes and are not exported (list --failed)")
    return 0


def cmd_collect(a):
    session = Path(a.session)
    if not (session / "campaign.json").exists():
        raise UsageError(
            f"{a.session}: not a session directory (OUT/runs/SESSION of run --launcher sbatch)"
        )
    _, _, failed = runner.collect(session, _open(a.db), job_ended=a.job_ended)
    return 1 if failed else 0  # as run: a failed run is not a clean exit


COMMANDS = {
    "run": cmd_run,
    "list": cmd_list,
    "report": cmd_report,
    "compare": cmd_compare,
    "export": cmd_export,
    "collect": cmd_collect,
}


def main(argv=None):
    a = _parser().parse_args(argv)
    try:
        return COMMANDS[a.command](a)
    except (
        spec.CampaignError,
        inventory.InventoryError,
        StoreError,
        UsageError,
        html_report.ReportError,
        runner.RunnerError,
    ) as e:
        print(f"iokernels-campaign: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("iokernels-campaign: interrupted", file=sys.stderr)
        return 130
