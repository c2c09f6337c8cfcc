# SPDX-License-Identifier: BSD-3-Clause
"""`tune --resume`: a tune interrupted (Ctrl-C, SIGTERM, a time limit)
continues where it stopped. Each trial the tuner finished is kept in
OUT/runs/SESSION/trials.jsonl (one line per trial, its latest state last:
its settings, Optuna's parameters, its runs' I/O and wall seconds and store
ids); the resumed tune takes those trials back (their runs are not run
again), gives them to a new Optuna study as finished trials (the sampler
goes on from them), and runs the rest of the budget: a trial cut short by
the interruption is run again, as are the confirmation runs. The budget of
trials counts every trial; a budget of minutes starts again."""

import json
from pathlib import Path

import optuna

JOURNAL = "trials.jsonl"
FIELDS = (
    "number", "params", "settings", "state", "runs", "walls", "run_ids", "cut_at", "error",
    "record",  # the defaults' is what a resumed tune's identities are taken against
)  # fmt: skip


def write(directory, trial):
    """Appends a trial's current state to the session's journal."""
    entry = {k: getattr(trial, k) for k in FIELDS}
    with open(Path(directory) / JOURNAL, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def load(directory):
    """The journal's trials in order of their numbers (each its latest line);
    a line cut short by the interruption is ignored."""
    path = Path(directory) / JOURNAL
    if not path.exists():
        return []
    trials = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
            trials[int(entry["number"])] = entry
        except (ValueError, KeyError, TypeError):
            continue
    return [trials[n] for n in sorted(trials)]


def warm_start(study, space, trials):
    """Gives the study the finished trials of the session resumed."""
    dists = {k: optuna.distributions.CategoricalDistribution(v) for k, v in space.items()}
    for t in trials:
        if set(t.params) != set(space):  # the defaults: not a point of the space
            continue
        value = t.value if t.state == "ok" else t.cut_at if t.state == "cut" else None
        state = optuna.trial.TrialState.COMPLETE if value is not None else None
        study.add_trial(
            optuna.trial.create_trial(
                params=t.params,
                distributions=dists,
                value=value,
                state=state or optuna.trial.TrialState.FAIL,
                user_attrs={"trial": t.number, **({"cut": True} if t.state == "cut" else {})},
            )
        )
