# SPDX-License-Identifier: BSD-3-Clause
"""The verdict rule (verdict.py) calibrated by simulation: two samples drawn
from one distribution are called different in at most 5% of trials at 3, 5
and 10 runs a side, for normal, lognormal and bimodal figures (the 5-second
writeback rhythm gives bimodal ones); the same check fails the old rule (a
percentile bootstrap of the ratio of medians), and the power for a true
1.3x difference at 5 runs a side is printed."""

import math

import numpy as np
import pandas as pd
import pytest
from iokernels_campaign.report import frame, verdict

TRIALS = 20000
SEED = 39


def draw(rng, shape, n, scale=1.0):
    if shape == "normal":
        return scale * rng.normal(100, 10, n)
    if shape == "lognormal":
        return scale * 100 * np.exp(rng.normal(0, 0.3, n))
    # bimodal: 70% at full speed, 30% caught by a writeback flush at 40%
    fast = rng.random(n) < 0.7
    return scale * np.where(fast, rng.normal(100, 5, n), rng.normal(40, 5, n))


def winners(rule, shape, n, trials, scale=1.0, seed=SEED):
    """How often `rule(a, b)` names a winner (higher or lower) when b is
    drawn from `shape` and a from the same times `scale`."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(trials):
        a, b = draw(rng, shape, n, scale), draw(rng, shape, n)
        hits += rule(a, b) in ("higher", "lower")
    return hits / trials


def new_rule(a, b):
    return verdict.ratio(a, b).call


BOOT_RNG = np.random.default_rng(1)


def bootstrap_rule(a, b, reps=1000, rng=BOOT_RNG):
    """The rule this replaced: the 95% percentile bootstrap interval of the
    ratio of medians must exclude 1."""
    ma = np.median(a[rng.integers(0, len(a), (reps, len(a)))], axis=1)
    mb = np.median(b[rng.integers(0, len(b), (reps, len(b)))], axis=1)
    low, high = np.quantile(ma / mb, [0.025, 0.975])
    return "higher" if low > 1 else "lower" if high < 1 else "tied"


@pytest.mark.parametrize("n", [3, 5, 10])
@pytest.mark.parametrize("shape", ["normal", "lognormal", "bimodal"])
def test_false_winners_at_most_5_percent(shape, n):
    rate = winners(new_rule, shape, n, TRIALS)
    print(f"false winners {shape} {n} a side: {rate:.4f} over {TRIALS} pairs")
    assert rate <= 0.05
    # and exactly: the largest two-sided level the exact law can reach
    law = verdict._u_law(n, n)
    c = verdict._critical(n, n)
    assert 2 * law[:c].sum() <= 0.05


def test_the_check_fails_the_bootstrap_of_medians():
    """The same calibration, built to catch a wrong rule: the old bootstrap
    names a false winner in more than 5% of pairs at 3 runs a side."""
    rate = winners(bootstrap_rule, "lognormal", 3, 2000)
    print(f"bootstrap of the ratio of medians, 3 a side: {rate:.3f} false winners")
    assert rate > 0.05


def test_power_for_a_true_1_3x_at_5_runs():
    lines = []
    for sigma in (0.05, 0.10, 0.20):
        rng = np.random.default_rng(SEED)
        found = sum(
            verdict.ratio(
                1.3 * np.exp(rng.normal(0, sigma, 5)), np.exp(rng.normal(0, sigma, 5))
            ).call
            == "higher"
            for _ in range(4000)
        )
        lines.append(f"power 1.3x, 5 a side, lognormal spread {sigma:.0%}: {found / 4000:.3f}")
    print("\n".join(lines))
    # at the 10% spread the suite's runs usually show, most trials find it
    assert float(lines[1].rsplit(" ", 1)[1]) > 0.5


def test_three_a_side_is_untested_and_says_what_it_needs():
    r = verdict.ratio([1.0, 1.1, 1.2], [5.0, 5.1, 5.2])
    assert r.call == "untested"
    assert "at least 4 runs a side" in r.text()
    assert not verdict.can_reject(3, 3) and verdict.can_reject(4, 4)
    assert verdict.can_reject(3, 5) and not verdict.can_reject(3, 4)
    assert 2 / math.comb(6, 3) == pytest.approx(0.1)


def test_interval_matches_the_test():
    """Without ties the exact interval excludes 1 exactly when p <= 0.05."""
    rng = np.random.default_rng(7)
    for _ in range(2000):
        n, m = rng.integers(4, 9, 2)
        r = verdict.ratio(np.exp(rng.normal(0.3, 0.3, n)), np.exp(rng.normal(0, 0.3, m)))
        assert (r.p <= 0.05) == (r.low > 1 or r.high < 1)
        assert r.low <= r.hl <= r.high


def test_ties_use_the_exact_permutation_law():
    # all a above all b with ties inside each side: p is the extreme split's
    r = verdict.ratio([2, 2, 2, 2, 2], [1, 1, 1, 1, 1])
    assert r.p == pytest.approx(2 / math.comb(10, 5))
    assert r.call == "higher"
    r = verdict.ratio([1, 1, 1, 1], [1, 1, 1, 1])
    assert r.p == 1.0 and r.call == "tied"


def test_report_winner_among_many_identical_series():
    """frame.best names a clear winner (faster than every other series) among
    k identical series in at most 5% of cases."""
    rng = np.random.default_rng(SEED)
    for k in (3, 5):
        clear = 0
        for _ in range(1000):
            rows = [
                {"label": "x", "ranks": 4, "op": "write", "series": f"s{i}", "mib_s": v}
                for i in range(k)
                for v in draw(rng, "lognormal", 5)
            ]
            bw = pd.DataFrame(rows)
            stats = bw.groupby(["label", "series", "ranks", "op"], sort=False)["mib_s"]
            stats = stats.median().rename("median").reset_index().assign(cached=False)
            clear += next(iter(frame.best(stats, bw).values())).clear
        print(f"clear winner among {k} identical series, 5 runs each: {clear / 1000:.3f}")
        assert clear / 1000 <= 0.05
