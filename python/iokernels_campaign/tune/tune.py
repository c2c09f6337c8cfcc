# SPDX-License-Identifier: BSD-3-Clause
"""iokernels-campaign tune: search the settings of one case with Optuna.

Every run is a normal run of the campaign store (its settings in the case's
argv, env and variant), so `report`, `list` and `compare` see each trial.

- Trial 1 is the defaults (the case as the file gives it); the budget counts it.
- A trial's value is its I/O time: the records' write_seconds + read_seconds,
  durable by default ([tune] objective = "durable": writes with --fsync,
  reads with --drop-caches; "io": as the case runs; tune_spec.OBJECTIVES).
- Noise: the best's band is [fastest, slowest] of its runs, widened to at
  least +-noise of its median. A trial whose first run is below the band's
  top is re-run until it has `repeats` runs; its value is their median. When
  that median falls inside the band, the best is re-run to `repeats` runs too.
- A trial the library refuses (the kernel exits 2, or the run fails) is stored
  as failed and is a FAIL of the study; a trial running past cut x the best's
  wall time is stopped and stored as failed ("cut: ..."), and the study is
  told the time it was cut at (a lower bound of its time: the sampler and
  the importance see how slow it was, where a pruned trial would count for
  nothing in either). Neither
  ends the tune.
- A trial is its effective configuration (Tuner.identity): the settings
  that differ from what the defaults' run had in effect (its record's
  transfer mode, api, backend, MPI-IO layer, hints in effect and options),
  "default" and "n/a" left out. A trial that comes out the same as an
  earlier one (the defaults included: transfer=collective where the
  defaults are collective, a backend's setting on another backend, OMPIO's
  fcoll under another io component) is not run again: it is that trial.
- The answer: the best and the defaults re-run `confirm` times each in ABBA
  order (defaults, best, best, defaults, ...), each run after an untimed
  sync (and a cache drop before reads), speedup = median(defaults) /
  median(best), called by verdict.py's exact test with the Hodges-Lehmann
  interval. The ready line lists only the settings that differ from the
  defaults."""

import dataclasses
import json
import os
import shutil
import socket
import statistics
import time
from pathlib import Path

import optuna

from ..report import verdict
from ..run import launch, outcome, runner
from ..spec import rules, slurm
from ..spec.spec import CampaignError
from ..store import record as store_record
from . import tune_resume, tune_space

CUT_FLOOR_S = 10.0  # a launcher alone can take seconds to start 16 ranks on 2 cores
MAX_SAME = 100  # settings already tried, in a row: the sampler has nothing new


class Refused(Exception):
    """A trial the library refused (its run failed)."""


class Oversubscribed(CampaignError):
    """A case with more ranks than cores, refused before (or at) its first
    trial: its times would be the ranks' contention for cores."""


LOCAL_LAUNCHERS = ("mpiexec",)  # the ranks run on this machine


def usable_cores():
    """The cores this process may run on (its affinity), as the binary counts them."""
    return len(os.sched_getaffinity(0))


def local_oversubscription(ranks, launcher, cores=None):
    """(ranks, cores) when a local launcher would start more ranks than this
    machine's usable cores, else None."""
    if launcher not in LOCAL_LAUNCHERS:
        return None
    cores = usable_cores() if cores is None else cores
    return (ranks, cores) if ranks > cores else None


def check_cores(tspec, launcher, allow):
    """Before any trial: the words for an oversubscribed case that is
    allowed, None for one that is not oversubscribed; Oversubscribed when
    it is and not allowed."""
    over = local_oversubscription(tspec.case.ranks, launcher)
    if over and not allow:
        raise refusal(tspec.campaign.name, *over)
    return store_record.oversubscribed_text(*over) if over else None


def refusal(name, ranks, cores):
    return Oversubscribed(
        f"tune {name}: {store_record.oversubscribed_text(ranks, cores)}: the trials would time "
        "the ranks' contention for cores, not the settings; give --allow-oversubscribed to "
        "tune it anyway (the answer then says so)"
    )


@dataclasses.dataclass
class Trial:
    number: int
    settings: dict  # {setting: value shown}
    case: object
    runs: list = dataclasses.field(default_factory=list)  # I/O seconds of the ok runs
    walls: list = dataclasses.field(default_factory=list)
    run_ids: list = dataclasses.field(default_factory=list)
    state: str = "ok"  # ok, refused, cut
    cut_at: float | None = None  # the limit (wall seconds) a cut trial was stopped at
    error: str | None = None
    params: dict = dataclasses.field(default_factory=dict)  # the sampler's values (tune_resume)
    record: dict | None = None  # the first ok run's first record: what was in effect

    @property
    def value(self):
        return statistics.median(self.runs) if self.runs else None

    def band(self, noise):
        m = self.value
        return min(min(self.runs), m * (1 - noise)), max(max(self.runs), m * (1 + noise))


def io_seconds(record):
    s = record["summary"]
    return sum(s.get(k) or 0.0 for k in ("write_seconds", "read_seconds"))


class Tuner:
    def __init__(
        self,
        tspec,
        inventory,
        store,
        out_dir,
        launcher="mpiexec",
        echo=print,
        resume=None,
        allow_oversubscribed=False,
    ):
        self.t, self.inv, self.store, self.echo = tspec, inventory, store, echo
        self.launcher = launcher
        self.allow_oversubscribed = allow_oversubscribed
        self.oversubscribed = check_cores(tspec, launcher, allow_oversubscribed)
        self.srun_extra = list(tspec.campaign.slurm.srun)
        if launcher == "srun":  # srun's --mpi, chosen as run chooses it
            family = slurm.mpi_family(inventory.binary)
            self.srun_extra += slurm.srun_mpi(tspec.campaign.slurm, family)
        self.resumed = resume is not None  # the store's row of the session resumed
        if resume:
            self.session = runner.Session(resume["id"], Path(out_dir) / "runs" / resume["id"])
        else:
            self.session = runner.new_session(tspec.campaign, out_dir)
        self.dirs, self.iters, self.seen = {}, {}, {}
        self.trials = []
        self.best = None
        if resume:
            self._restore(tune_resume.load(self.session.directory))
        self.started = time.monotonic()
        self.same = 0

    # --- one run -----------------------------------------------------------
    def _dir(self, case):
        key = case.case_hash(case.modes[0])
        if key not in self.dirs:
            d = self.session.directory / case.dirname
            d.mkdir(exist_ok=self.resumed)
            (d / "case.json").write_text(json.dumps(case.describe(), indent=1) + "\n")
            # resumed: after the iterations an earlier attempt made
            done = [int(p.name[4:]) for p in d.glob("iter*") if p.name[4:].isdigit()]
            self.dirs[key], self.iters[key] = d, max(done, default=0)
        self.iters[key] += 1
        return self.dirs[key], self.iters[key]

    def limit(self):
        """Seconds a trial's run may take: cut x the best's slowest wall time."""
        case_limit = self.t.case.timeout
        if not self.t.cut or self.best is None or not self.best.walls:
            return case_limit, False
        cut = max(self.t.cut * max(self.best.walls), CUT_FLOOR_S)
        return (cut, True) if cut < case_limit else (case_limit, False)

    def run_once(self, trial, limited=True):
        """Runs the trial's case once (its modes in order): its I/O seconds, or
        None when a run failed. A failed first run makes the trial refused (or
        cut); a failed repeat only ends its repeats."""
        case = trial.case
        cdir, it = self._dir(case)
        idir = cdir / f"iter{it}"
        idir.mkdir()
        timeout, is_cut = self.limit() if limited else (case.timeout, False)
        seconds, wall, error, broke, was_cut = 0.0, 0.0, None, None, False
        records = []
        for mode in case.modes:
            env = case.environment(cdir, idir, mode, it)
            if broke:
                res = outcome.not_run(idir, f"the {broke} step of this iteration failed")
            else:
                argv = [str(self.inv.binary), *case.argv(mode), "--json", f"{mode}.jsonl"]
                per_node = self.t.campaign.slurm.ntasks_per_node
                cmd, lenv = launch.command(
                    self.launcher, case.ranks, argv, self.srun_extra, env, per_node
                )
                res = runner.run_step(cmd, idir, mode, timeout, lenv)
                if res.status != "ok" and is_cut and res.error.startswith("killed: still running"):
                    res.error = (
                        f"cut: still running after {timeout:.0f} s ({self.t.cut:g}x the best's "
                        f"wall time, at least {CUT_FLOOR_S:g} s): stopped"
                    )
                    was_cut, trial.cut_at = True, timeout
            extra = runner.run_extra(env, None)
            trial.run_ids.append(self.store.add_run(self.session.id, case, mode, it, res, extra))
            if res.record:
                records.append(res.record)
                if trial.record is None and res.status == "ok":
                    trial.record = res.record
            if res.status == "ok":
                seconds += io_seconds(res.record)
                wall += res.elapsed or 0.0
            else:
                broke = broke or mode
                error = error or res.error
        _remove_outputs(idir, records)
        if error:
            if not trial.runs:
                trial.state = "cut" if was_cut else "refused"
            trial.error = error
            return None
        trial.runs.append(seconds)
        trial.walls.append(wall)
        return seconds

    # --- one trial ---------------------------------------------------------
    def evaluate(self, trial):
        """Runs a trial (repeated when within the noise of the best)."""
        first = self.run_once(trial)
        if first is not None and self.best is not None and self.best is not trial:
            low, high = self.best.band(self.t.noise)
            if first <= high:
                while len(trial.runs) < self.t.repeats and self.run_once(trial) is not None:
                    pass
                if trial.state == "ok" and low <= trial.value <= high:
                    while len(self.best.runs) < self.t.repeats:
                        if self.run_once(self.best, limited=False) is None:
                            break
        self.trials.append(trial)
        if trial.state == "ok" and (self.best is None or trial.value < self.best.value):
            self.best = trial
        for t in {trial.number: trial, self.best.number if self.best else 0: self.best}.values():
            if t is not None:
                tune_resume.write(self.session.directory, t)
        self._say(trial)
        return trial

    def _restore(self, entries):
        """The trials of the session resumed, as they were (tune_resume.py)."""
        for e in entries:
            case, _ = tune_space.apply(self.t.case, e["params"], self.inv.caps)
            fields = {
                k: e[k] for k in tune_resume.FIELDS if k in e and k not in ("number", "settings")
            }
            trial = Trial(e["number"], e["settings"], case, **fields)
            self.trials.append(trial)
            if trial.number == 1:  # the defaults: what every identity is taken against
                self.defaults = trial
            self.seen[() if trial.number == 1 else self.identity(trial.settings)] = trial
            if trial.state == "ok" and (self.best is None or trial.value < self.best.value):
                self.best = trial

    def _say(self, trial):
        n = len(self.trials)
        total = self.t.trials or "?"
        what = ", ".join(f"{k}={v}" for k, v in trial.settings.items()) or "defaults"
        if trial.state == "ok":
            reps = f" (median of {len(trial.runs)})" if len(trial.runs) > 1 else ""
            tail = f"{trial.value:8.3f} s{reps}"
        else:
            err = trial.error or ""
            tail = err if err.startswith(f"{trial.state}:") else f"{trial.state}: {err}"
        best = f"  best {self.best.value:.3f} s" if self.best else ""
        self.echo(f"[{n:>3}/{total}] {what:<58} {tail}{best}")

    # --- the search ----------------------------------------------------------
    def time_left(self):
        if self.t.minutes is None:
            return True
        return time.monotonic() - self.started < self.t.minutes * 60

    def budget_left(self):
        return self.t.trials is None or len(self.trials) < self.t.trials

    def in_effect(self):
        """{setting: value} the defaults' run had in effect, from its record:
        what a trial's setting is compared with (identity)."""
        rec = self.defaults.record or {}
        opts = rec.get("options") or {}
        out = {}
        for group in ("core", "kernel", "backend"):  # every option in effect (--values ...)
            out |= {k: _text(v) for k, v in (opts.get(group) or {}).items()}
        said = {
            "transfer": {"coll": "collective", "indep": "independent"}.get(rec.get("io")),
            "api": rec.get("api"),
            "backend": rec.get("backend"),
        }
        out |= {k: v for k, v in said.items() if v is not None}
        layer = (rec.get("environment") or {}).get("mpiio_layer") or {}
        out["io"] = layer.get("io_component")
        out |= {k: v for k, v in (layer.get("settings") or {}).items() if k != "io"}
        passes = rec.get("passes") or [{}]
        out |= {k: str(v) for k, v in (passes[0].get("hints_in_effect") or {}).items()}
        return {k: v for k, v in out.items() if v is not None}

    def identity(self, shown):
        """The trial's effective configuration: its settings that differ from
        the defaults' (in_effect), as a sorted tuple; () is the defaults."""
        base = Tuner.in_effect(self)
        backend = shown.get("backend", base.get("backend"))
        same_backend = backend == base.get("backend")
        differ = []
        for name, v in shown.items():
            if v in (tune_space.DEFAULT, "n/a"):
                continue
            if same_backend and base.get(name) == v:
                continue  # what the defaults had anyway
            differ.append((name, v))
        return tuple(sorted(differ))

    def objective(self, otrial):
        params = {k: otrial.suggest_categorical(k, v) for k, v in self.t.space.items()}
        case, shown = tune_space.apply(self.t.case, params, self.inv.caps)
        key = self.identity(shown)
        done = self.seen.get(key)
        if done is None:
            self.same = 0
            trial = Trial(len(self.trials) + 1, shown, case, params=params)
            done = self.seen[key] = self.evaluate(trial)
        else:
            self.same += 1
        otrial.set_user_attr("trial", done.number)
        if done.state == "cut":
            otrial.set_user_attr("cut", True)
            return done.cut_at
        if done.state != "ok":
            raise Refused(done.error)
        return done.value

    def stop_when_done(self, study, _trial):
        if not (self.budget_left() and self.time_left()) or self.same >= MAX_SAME:
            study.stop()

    def search(self):
        optuna.logging.set_verbosity(optuna.logging.ERROR)
        grid = self.t.use_grid()
        sampler = (
            optuna.samplers.GridSampler(self.t.space, seed=self.t.seed)
            if grid
            else optuna.samplers.TPESampler(seed=self.t.seed)
        )
        self.study = optuna.create_study(direction="minimize", sampler=sampler)
        self.sampler_name = "grid" if grid else "TPE"
        tune_resume.warm_start(self.study, self.t.space, self.trials)
        if self.budget_left() and self.time_left():
            self.study.optimize(
                self.objective,
                n_trials=self.t.size if grid else None,
                callbacks=[self.stop_when_done],
                catch=(Refused,),
            )

    def confirm(self):
        """ABBA: the defaults and the best, confirm times each, in pairs
        whose order alternates (defaults first in odd pairs, the best first
        in even ones), so that neither always follows the other's writeback;
        before every run an untimed sync, and a cache drop before reads."""
        a = Trial(0, {}, self.defaults.case)
        b = Trial(0, self.best.settings, self.best.case)
        self.settle_note = None
        for i in range(self.t.confirm):
            order = (a, b) if i % 2 == 0 else (b, a)
            got = {}
            for side in order:
                self.settle(side.case)
                got[id(side)] = _shown(self.run_once(side, limited=False))
            first = "defaults" if order[0] is a else "best"
            self.echo(
                f"confirm {i + 1}/{self.t.confirm} ({first} first): "
                f"defaults {got[id(a)]}, best {got[id(b)]}"
            )
        return a, b, verdict.ratio(a.runs, b.runs)

    def settle(self, case):
        """Untimed, before a confirmation run: sync (the previous run's dirty
        pages reach storage now, not inside this run), and for a case that
        reads, drop the page cache (root; otherwise the runs' own
        --drop-caches fadvise is all there is, and the answer says so)."""
        os.sync()
        if "read" not in case.modes:
            return
        try:
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3\n")
        except OSError as e:
            self.settle_note = f"page cache not dropped before reads ({e.strerror})"

    def run(self):
        """The whole tune; returns the answer (a dict, also stored)."""
        if not self.resumed:
            self.store.begin_campaign(
                self.session.id,
                self.t.campaign,
                self.launcher,
                self.inv.binary,
                self.session.directory.parent.parent,
                socket.gethostname(),
                runner.now_iso(),
            )
        case, _ = tune_space.apply(self.t.case, {}, self.inv.caps)
        self.echo(
            f"tune {self.t.campaign.name}: {case.kernel} on {case.ranks} ranks, "
            f"{len(self.t.space)} settings ({self.t.size} combinations), budget "
            + " and ".join(
                x
                for x in (
                    f"{self.t.trials} trials" if self.t.trials else "",
                    f"{self.t.minutes:g} minutes" if self.t.minutes else "",
                )
                if x
            )
            + f"; in {self.session.directory}"
        )
        restored = self.trials[0] if self.trials else None
        self.defaults = restored or self.evaluate(Trial(1, {}, case))
        self.seen[()] = self.defaults
        if self.defaults.state != "ok":
            self.store.finish_campaign(self.session.id, runner.now_iso())
            raise runner.RunFailed(
                f"the defaults' run failed, so nothing can be compared: {self.defaults.error}"
            )
        said = store_record.oversubscribed(self.defaults.record)  # the binary's own count
        if said:
            if not self.allow_oversubscribed:
                self.store.finish_campaign(self.session.id, runner.now_iso())
                raise refusal(self.t.campaign.name, *said)
            self.oversubscribed = store_record.oversubscribed_text(*said)
        self.search()
        searched = time.monotonic() - self.started
        a, b, ratio = (None, None, None)
        if self.best is not self.defaults and not self.unjudged():
            a, b, ratio = self.confirm()
        self.store.finish_campaign(self.session.id, runner.now_iso())
        return self.answer(searched, a, b, ratio)

    def unjudged(self):
        """The backend that moves no data (null) of the defaults or the best,
        or None: its times are the suite's own work, so no verdict."""
        for t in (self.defaults, self.best):
            if t is not None and rules.moves_no_data(t.case.backend):
                return t.case.backend
        return None

    def answer(self, searched, a, b, ratio):
        from . import tune_answer

        return tune_answer.build(self, searched, a, b, ratio)


def _remove_outputs(idir, records):
    """Removes the data files the runs of one iteration wrote (their records
    list them), once every mode has run: a tune runs many trials and their
    files can be large. Only paths inside the iteration's own folder; the
    runs' stdout, stderr, record and status stay."""
    idir = idir.resolve()
    for rec in records:
        paths = list(rec.get("files") or []) + [p.get("path") for p in rec.get("passes", [])]
        for name in {p for p in paths if isinstance(p, str) and p}:
            path = (idir / name).resolve()
            if path.parent != idir and idir not in path.parents:
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            elif path.exists() or path.is_symlink():
                path.unlink(missing_ok=True)


def _text(v):
    """A record's option value as a setting's value is shown."""
    if isinstance(v, list):
        return ",".join(str(x) for x in v)
    return str(v).lower() if isinstance(v, bool) else str(v)


def _shown(seconds):
    return "failed" if seconds is None else f"{seconds:.3f} s"
