# SPDX-License-Identifier: BSD-3-Clause
"""The tuner's answer: the best settings, the speedup over the defaults with
its interval, each setting's importance, every trial, and the ready line
that reuses the best. A plain dict: printed, kept in the store (tunes
table) and drawn by the report."""

import os
import shlex
import statistics
import time

import optuna

from ..report import verdict
from ..run import launch
from . import tune_space, tune_spec

MIN_FANOVA = 4  # completed trials with different times before fANOVA says anything


def _importance(study):
    """(method, {setting: share}) or (reason why none, {})."""
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    if len(done) >= MIN_FANOVA and len({t.value for t in done}) > 1:
        try:
            return "fANOVA, optuna.importance", optuna.importance.get_param_importances(study)
        except (ValueError, RuntimeError):
            pass
    # too few trials: each setting's spread of its values' median times, as shares
    spread = {}
    for name in study.trials[0].params if study.trials else ():
        by = {}
        for t in done:
            by.setdefault(str(t.params.get(name)), []).append(t.value)
        meds = [statistics.median(v) for v in by.values()]
        spread[name] = max(meds) - min(meds) if len(meds) > 1 else 0.0
    total = sum(spread.values())
    if not total:
        return f"not computed: {len(done)} completed trial(s) differ too little", {}
    shares = {k: v / total for k, v in sorted(spread.items(), key=lambda kv: -kv[1])}
    return f"spread of each setting's median times ({len(done)} trials: too few for fANOVA)", shares


def _show_path(path):
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else str(path)


def ready_lines(tuner, case):
    """The command lines that run the best settings again, one per mode."""
    env = {k: v for k, v in case.env if k.startswith("OMPI_MCA_")}
    prefix = [f"{k}={v}" for k, v in env.items()]
    lines = []
    for mode in case.modes:
        argv = [_show_path(tuner.inv.binary), *case.argv(mode)]
        if case.input:
            argv[-1] = _show_path(case.input)
        cmd, _ = launch.command(tuner.launcher, case.ranks, argv)
        lines.append(shlex.join([*prefix, *cmd]))
    return lines


def _call(ratio):
    if ratio is None:
        return "no significant gain", "no setting beat the defaults"
    words = {
        "higher": "gain",
        "tied": "no significant gain",
        "lower": "slower than the defaults",
        "untested": "untested",
    }
    if ratio.tested:
        low = (
            f"Hodges-Lehmann {ratio.hl:.2f}x, {verdict.LEVEL:.0%} interval "
            f"{ratio.low:.2f}-{ratio.high:.2f}, exact Mann-Whitney p={ratio.p:.3f}, "
        )
    else:
        low = f"too few runs for the exact test (at least {verdict.MIN_RUNS} a side), "
    text = (
        f"speedup {ratio.ratio:.2f}x ({low}{ratio.n_a} runs of the defaults and "
        f"{ratio.n_b} of the best, in ABBA order)"
    )
    return words[ratio.call], text


NOT_JUDGED = "the {} backend moves no data, its times are the suite's own work"


def build(tuner, searched, a, b, ratio):
    t, best = tuner.t, tuner.best
    call, text = _call(ratio)
    unjudged = tuner.unjudged()
    if unjudged:
        call, text = "not judged", NOT_JUDGED.format(unjudged)
    if call == "gain":  # a difference the search can attribute to its settings
        method, shares = _importance(tuner.study)
    else:
        why = text if unjudged else "the best is not judged better than the defaults"
        method, shares = f"not shown: {why}", {}
    if tuner.oversubscribed:
        text += f"; {tuner.oversubscribed}: the times include the ranks' contention for cores"
    rec = tuner.defaults.record or {}
    fs_type = (rec.get("filesystem") or {}).get("type")
    # the best as the settings that differ from the defaults' (tune.identity)
    differ = dict(tuner.identity(best.settings))
    params = {k: v for k, v in best.params.items() if k in differ}
    case = tune_space.apply(t.case, params, tuner.inv.caps)[0] if params else t.case
    hints = dict(case.args).get("hints", "")
    return {
        "name": t.campaign.name,
        "kernel": t.case.kernel,
        "label": t.case.label,
        "ranks": t.case.ranks,
        "backend": t.case.backend,
        "sampler": tuner.sampler_name,
        "objective": t.objective,
        "objective_text": tune_spec.objective_text(
            t.objective, t.case.backend, t.case.modes, fs_type
        ),
        "inert": dict(t.inert),
        "oversubscribed": tuner.oversubscribed,
        "space": {k: [str(v) for v in vals] for k, vals in t.space.items()},
        "budget": {"trials": t.trials, "minutes": t.minutes},
        "search_seconds": round(searched, 1),
        "total_seconds": round(time.monotonic() - tuner.started, 1),
        "trials": [
            {
                "number": x.number,
                "settings": x.settings,
                "variant": x.case.variant,
                "backend": x.case.backend,
                "state": x.state,
                "seconds": x.value,
                "runs": x.runs,
                "error": x.error,
                "run_ids": x.run_ids,
            }
            for x in tuner.trials
        ],
        "defaults": {"seconds": tuner.defaults.value, "runs": tuner.defaults.runs},
        "best": {
            "number": best.number,
            "settings": differ,
            "variant": best.case.variant,
            "seconds": best.value,
            "runs": best.runs,
            "hints": hints,
            "env": {k: v for k, v in case.env if k.startswith("OMPI_MCA_")},
        },
        "confirm": {
            "defaults": a.runs if a else [],
            "best": b.runs if b else [],
            "speedup": ratio.ratio if ratio else None,
            "low": ratio.low if ratio else None,
            "high": ratio.high if ratio else None,
            "call": call,
            "text": text,
            "order": "ABBA" if a else "",
            "settle": getattr(tuner, "settle_note", None)
            or ("untimed sync before every run" if a else ""),
        },
        "importance": {"method": method, "shares": shares},
        "ready": ready_lines(tuner, case),
    }


def text(ans):
    """The answer as the terminal shows it."""
    trials = ans["trials"]
    states = [x["state"] for x in trials]
    repeated = sum(len(x["runs"]) > 1 for x in trials)
    best = ans["best"]
    settings = ", ".join(f"{k}={v}" for k, v in best["settings"].items()) or "the defaults"
    lines = [
        "",
        f"tune {ans['name']}: {len(trials)} trials ({ans['sampler']}; "
        f"{states.count('refused')} refused, {states.count('cut')} cut, {repeated} repeated) "
        f"in {ans['search_seconds'] / 60:.1f} min, {ans['total_seconds'] / 60:.1f} min with "
        "the confirmation",
        f"objective: {ans.get('objective_text') or 'I/O time'}",
        f"defaults: {ans['defaults']['seconds']:.3f} s",
        f"best:     trial {best['number']}: {settings}: {best['seconds']:.3f} s "
        f"(median of {len(best['runs'])})",
        f"answer:   {ans['confirm']['call']}: {ans['confirm']['text']}",
    ]
    imp = ans["importance"]
    if imp["shares"]:
        shares = ", ".join(f"{k} {v:.2f}" for k, v in imp["shares"].items())
        lines.append(f"importance ({imp['method']}): {shares}")
    else:
        lines.append(f"importance: {imp['method']}")
    inert = ans.get("inert") or {}
    if inert:
        lines.append(
            "inert:    " + "; ".join(f"{k} not searched ({why})" for k, why in inert.items())
        )
    if best["settings"]:
        hints = f"--hints {best['hints']}" if best["hints"] else "no hints"
        env = " ".join(f"{k}={v}" for k, v in best["env"].items()) or "no variables"
        lines.append(f"settings: {hints}; {env}")
    lines += [f"ready:    {line}" for line in ans["ready"]]
    return "\n".join(lines)


def settings_table_rows():
    """The mapping as rows (setting, how it reaches a run, values, backend)."""
    how = {
        "hint": "--hints {t}=V",
        "option": "--{t} V",
        "param": "--adios2-params {t}=V",
        "env": "{t}=V",
        "core": "--{t}",
    }
    return [
        (name, how[s.kind].format(t=s.target), s.values, s.backend or "any")
        for name, s in tune_space.SETTINGS.items()
    ]
