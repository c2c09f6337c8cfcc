# SPDX-License-Identifier: BSD-3-Clause
"""A/A calibration (`iokernels-campaign calibrate`): one case compared with
itself. Any winner named is a false one, so the share of pairs that name one
is the comparison's real false-winner rate on this machine, against the 5%
the test promises on a machine that does not drift.

The runs come as one series in time order. In an A/A pair A and B are the
same command, so a design is how the series is labelled: pair p takes 2k
consecutive runs; "blocked" calls the first k A and the next k B (two
campaigns run one after the other), "interleaved" labels them A B B A A B B
A ... (a campaign in rounds). Labelling the same runs both ways puts both
designs on the same drift. Each pair is decided by verdict.py's rule (the
exact Mann-Whitney test, p <= 0.05), nothing else.

Drift: the log bandwidths cut into windows of k consecutive runs (the
blocked sides); k times the variance of the windows' means over the mean
variance within a window (one-way ANOVA's F). About 1 on a machine whose
runs are exchangeable in time; well above 1 when the machine changes
between windows."""

import math
from dataclasses import dataclass

import numpy as np

from . import verdict

DESIGNS = ("blocked", "interleaved")


def labels(design, n):
    """'A'/'B' of the n = 2k runs of one pair, in time order."""
    if design == "blocked":
        return ["A"] * (n // 2) + ["B"] * (n // 2)
    return ["ABBA"[j % 4] for j in range(n)]


def _binom_cdf(x, n, p):
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(x + 1))


def _solve(f, target, increasing):
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if (f(mid) < target) == increasing:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(x, n, level=0.95):
    """The exact (Clopper-Pearson) interval of a binomial proportion x / n."""
    if n == 0:
        return 0.0, 1.0
    a = (1 - level) / 2
    # lower: P(X >= x; p) = a; upper: P(X <= x; p) = a
    low = 0.0 if x == 0 else _solve(lambda p: 1 - _binom_cdf(x - 1, n, p), a, True)
    high = 1.0 if x == n else _solve(lambda p: _binom_cdf(x, n, p), a, False)
    return low, high


@dataclass
class Result:
    design: str
    pairs: int  # pairs decided (each side at least verdict.MIN_RUNS runs that succeeded)
    false: int  # pairs that named a winner
    low: float
    high: float

    @property
    def rate(self):
        return self.false / self.pairs if self.pairs else None

    def text(self):
        if not self.pairs:
            return f"{self.design:<12} no pair decided (too few successful runs a side)"
        return (
            f"{self.design:<12} false winners {self.false}/{self.pairs} = {self.rate:.0%} "
            f"(95% interval {self.low:.0%}-{self.high:.0%})"
        )


def decide(values, runs_a_side, design):
    """Result of one design over values (bandwidths in time order, None for
    a failed run), cut into pairs of 2 * runs_a_side runs."""
    n = 2 * runs_a_side
    pairs = false = 0
    for p in range(len(values) // n):
        chunk = values[p * n : (p + 1) * n]
        side = labels(design, n)
        a = [v for v, s in zip(chunk, side, strict=True) if s == "A"]
        b = [v for v, s in zip(chunk, side, strict=True) if s == "B"]
        r = verdict.ratio(b, a)
        if r is None or not r.tested:
            continue
        pairs += 1
        false += r.call in ("higher", "lower")
    return Result(design, pairs, false, *clopper_pearson(false, pairs))


def drift(values, window):
    """k * var(window means) / mean(var within windows) of the log figures
    (None with fewer than two windows)."""
    logs = [math.log(v) if v and v > 0 else None for v in values]
    groups = []
    for i in range(0, len(logs) - window + 1, window):
        g = [x for x in logs[i : i + window] if x is not None]
        if len(g) >= 2:
            groups.append(g)
    if len(groups) < 2:
        return None
    means = np.array([np.mean(g) for g in groups])
    within = float(np.mean([np.var(g, ddof=1) for g in groups]))
    between = window * float(np.var(means, ddof=1))
    if within == 0:
        return math.inf if between > 0 else None
    return between / within


def report(values, runs_a_side, designs, title):
    """The lines calibrate prints."""
    lines = [title]
    f = drift(values, runs_a_side)
    lines.append(
        "drift: "
        + (
            "not measured (fewer than two windows)"
            if f is None
            else f"F = {f:.2f}: the variance of log bandwidth between windows of "
            f"{runs_a_side} consecutive runs over the variance within them "
            "(about 1 on a machine that does not drift)"
        )
    )
    results = [decide(values, runs_a_side, d) for d in designs]
    lines += [r.text() for r in results]
    lines.append(
        f"each pair: {runs_a_side} runs a side, a winner named where the "
        f"{verdict.RULE_SHORT} (compare's rule without its time check); "
        f"a sound design names one in at most {verdict.ALPHA:.0%} of A/A pairs"
    )
    return "\n".join(lines), results, f
