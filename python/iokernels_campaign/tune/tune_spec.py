# SPDX-License-Identifier: BSD-3-Clause
"""Tune files: a campaign file of one [[kernel]] block (one case: one rank
count, one backend or several) and a [tune] table:

    [tune]
    trials = 40          # budget: settings tried, the defaults included
    minutes = 10         # and/or: no new trial after this many minutes
    repeats = 3          # runs of a trial that lands within the noise of the best
    noise = 0.10         # the best's band: its runs' spread, at least +-10% of its median
    confirm = 5          # ABBA re-runs of the defaults and the best (at least 5)
    objective = "durable"  # writes --fsync, reads --drop-caches; "io": as the case runs
    cut = 5              # stop a trial past 5x the best's wall time (0: never)
    seed = 1             # the sampler's seed
    sampler = "auto"     # auto: grid when the space has <= trials - 1 points, else tpe

    [tune.space]         # each setting a list of values (tune_space.SETTINGS)
    fcoll = ["two_phase", "vulcan"]
    cb_nodes = ["default", 2, 4]

Everything is checked before anything runs: one line naming the file, the
line and the key."""

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

from ..spec import keys, rules, spec
from . import tune_space

KEYS = keys.names("[tune]")
SAMPLERS = ("auto", "tpe", "grid")
# what a trial's time is: its name -> what the answer says it timed
OBJECTIVES = {
    "durable": "durable I/O time (writes with --fsync: the data reached storage; "
    "reads with --drop-caches: from storage)",
    "io": "I/O time as the case runs it (no --fsync added: the page cache may absorb writes)",
}
MIN_CONFIRM = 5


def objective_text(objective, backend, modes, fs_type=None):
    """What a trial's time is, in words that name what the backend does: the
    null backend moves no data (its times are the suite's own work), a
    write-only case has no reads to drop, tmpfs has no storage below it."""
    if rules.moves_no_data(backend):
        return (
            f"the suite's own work per run: the {backend} backend moves no data "
            "(no --fsync or cache drop reaches anything)"
        )
    if objective != "durable":
        return OBJECTIVES[objective]
    where = "storage" if fs_type != "tmpfs" else "tmpfs (memory: no storage below)"
    parts = []
    if "write" in modes:
        parts.append(f"writes with --fsync: the data reached {where}")
    if "read" in modes:
        parts.append(f"reads with --drop-caches: from {where}")
    what = " and ".join(m for m in ("write", "read") if m in modes) or "I/O"
    return f"durable {what} time ({'; '.join(parts)})"


@dataclass
class TuneSpec:
    campaign: spec.Campaign
    case: spec.Case  # the defaults: the block's case on its first backend
    space: dict  # {setting: [values]}
    trials: int | None
    minutes: float | None
    repeats: int
    noise: float
    confirm: int
    cut: float
    seed: int
    sampler: str
    objective: str = "durable"
    inert: dict = dataclasses.field(default_factory=dict)  # {setting: why}: not searched

    @property
    def size(self):
        return math.prod(len(v) for v in self.space.values())

    def use_grid(self):
        if self.sampler != "auto":
            return self.sampler == "grid"
        return self.trials is not None and self.size <= self.trials - 1


def _number(chk, key, value, low, whole, default, above=False):
    if value is None:
        return default
    kind = int if whole else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind) or not math.isfinite(value):
        chk.fail(key, f"must be a {'whole ' if whole else ''}number, got {value!r}", table="tune")
    if value < low or (above and value == low):
        chk.fail(key, f"must be {'above' if above else 'at least'} {low}, got {value!r}", "tune")
    return value


def load(path, inventory):
    """The checked tune file, or a CampaignError naming what is wrong."""
    path = Path(path)
    data = spec.read_toml(path)
    text = path.read_text(encoding="utf-8")
    if "tune" not in data:
        raise spec.CampaignError(f"{path}: no [tune] table: this is a campaign (use run)")
    tune = data.pop("tune")
    blocks = data.get("kernel")
    if not isinstance(blocks, list) or len(blocks) != 1:
        raise spec.CampaignError(f"{path}: a tune file has exactly one [[kernel]] block (one case)")
    if blocks[0].get("sweep"):
        raise spec.CampaignError(f"{path}: [[kernel]] sweep: the tune varies [tune.space] instead")
    campaign = spec.build(path, data, inventory)
    cases = campaign.cases
    if len({c.ranks for c in cases}) != 1:
        raise spec.CampaignError(f"{path}: [[kernel]] ranks: a tune runs one rank count")
    if cases[0].iterations != 1:
        raise spec.CampaignError(
            f"{path}: iterations: the tune repeats runs itself ([tune] repeats)"
        )
    backends = [c.backend for c in cases]
    chk = tune_space.Checker(path, text, inventory, cases[0].kernel, backends)
    if not isinstance(tune, dict):
        chk.fail("tune", "must be a table", table="")
    for key in tune:
        if key not in KEYS:
            chk.fail(key, f"unknown key (known: {', '.join(KEYS)})", table="tune")
    trials = _number(chk, "trials", tune.get("trials"), 1, True, None)
    minutes = _number(chk, "minutes", tune.get("minutes"), 0, False, None, above=True)
    if trials is None and minutes is None:
        chk.fail("trials", "no budget: give trials = N, minutes = M or both", table="tune")
    sampler = tune.get("sampler", "auto")
    if sampler not in SAMPLERS:
        chk.fail("sampler", f"must be one of {', '.join(SAMPLERS)}, got {sampler!r}", "tune")
    if "space" not in tune:
        chk.fail("space", "is missing: give [tune.space] with settings and values", table="tune")
    space = tune_space.check_space(chk, tune["space"])
    objective = tune.get("objective", "durable")
    if objective not in OBJECTIVES:
        chk.fail("objective", f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}", "tune")
    case = cases[0]
    inert = tune_space.inert(space, case.modes)
    if inert and len(inert) == len(space):
        name = next(iter(inert))
        chk.fail(name, f"{inert[name]}: no setting of the space can act on this case")
    space = {k: v for k, v in space.items() if k not in inert}
    if objective == "durable":  # the time to storage, not to the page cache
        args = dict(case.args)  # the objective wins over an option's false
        if "write" in case.modes:
            args["fsync"] = True
        if "read" in case.modes:
            args["drop-caches"] = True
        case = dataclasses.replace(case, args=tuple(args.items()))
    if len(backends) > 1:
        space = {"backend": backends, **space}
    out = TuneSpec(
        campaign=campaign,
        case=case,
        space=space,
        trials=trials,
        minutes=minutes,
        repeats=_number(chk, "repeats", tune.get("repeats"), 1, True, 3),
        noise=_number(chk, "noise", tune.get("noise"), 0, False, 0.10),
        confirm=_number(chk, "confirm", tune.get("confirm"), MIN_CONFIRM, True, MIN_CONFIRM),
        cut=_number(chk, "cut", tune.get("cut"), 0, False, 5.0),
        seed=_number(chk, "seed", tune.get("seed"), 0, True, 1),
        sampler=sampler,
        objective=objective,
        inert=inert,
    )
    if out.noise >= 1:
        chk.fail(
            "noise", f"must be below 1 (a fraction of the best's time), got {out.noise}", "tune"
        )
    if 0 < out.cut <= 1:
        chk.fail(
            "cut", f"must be above 1 (a multiple of the best's time) or 0, got {out.cut}", "tune"
        )
    if sampler == "grid" and trials is not None and out.size > trials - 1:
        chk.fail(
            "sampler",
            f"grid: the space has {out.size} points and trials = {trials} leaves "
            f"{trials - 1} after the defaults: raise trials or use tpe",
            "tune",
        )
    return out
