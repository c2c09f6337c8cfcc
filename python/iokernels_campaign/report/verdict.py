# SPDX-License-Identifier: BSD-3-Clause
"""Statistics before verdicts. One series is called faster than another
only where an exact two-sided Mann-Whitney (Wilcoxon rank-sum) test on the
runs' log figures gives p <= 5%: the p-value is the exact permutation
probability (every split of the pooled runs counted, ties as midranks), so
two series drawn from one distribution, whatever its shape, are called
different in at most 5% of cases. The size of the difference is the
Hodges-Lehmann ratio (the median of every a_i / b_j) with its exact 95%
interval (Moses): the interval excludes 1 exactly when the test rejects
(without ties). At 3 runs a side the smallest possible p is 0.10, so
naming a winner needs at least 4 runs a side (or 3 against 5); with fewer,
the pair is "untested". python/tests/test_verdict.py measures
the false-winner rate and the power by simulation.

Past EXACT_PAIRS pairs of runs (a store of tens of thousands of runs, where
the exact law would take memory quadratic in the runs) the p-value is the
normal approximation with the ties' correction, and the Hodges-Lehmann
ratio and its interval come from a fixed sample of EXACT_PAIRS pairs: the
text says so."""

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

ALPHA = 0.05
LEVEL = 1 - ALPHA
# beyond this many pairs a_i / b_j: the large-sample method (memory bounded)
EXACT_PAIRS = 250_000
SEED = 20261127  # the sample of pairs is the same at every call
MIN_RUNS = 4  # a side: 3 against 3 cannot reach p <= 0.05 (smallest p = 2/20)
RULE_SHORT = "exact two-sided Mann-Whitney test gives p<=0.05"
RULE = "exact Mann-Whitney test on log figures, p <= 0.05; Hodges-Lehmann ratio, exact 95% interval"


def can_reject(n_a, n_b, alpha=ALPHA):
    """Whether n_a against n_b runs can reach p <= alpha at all (the most
    extreme split has two-sided p = 2 / C(n_a + n_b, n_a))."""
    return n_a > 0 and n_b > 0 and 2 / math.comb(n_a + n_b, n_a) <= alpha


@dataclass
class Ratio:
    ratio: float  # median(a) / median(b): the shown medians' ratio
    low: float | None  # the Hodges-Lehmann interval (None: too few runs)
    high: float | None
    n_a: int
    n_b: int
    hl: float | None = None  # Hodges-Lehmann ratio: median of a_i / b_j
    p: float | None = None  # exact two-sided Mann-Whitney p-value
    exact: bool = True  # False: the large-sample method (module docstring)
    why: str | None = None  # "untested: ..." when the sides did not interleave in time (timing.py)

    @property
    def tested(self):
        return self.p is not None

    @property
    def call(self):
        """'higher', 'lower', 'tied', or 'untested' (too few runs)."""
        if not self.tested or self.why:
            return "untested"
        if self.p <= ALPHA and self.hl != 1:
            return "higher" if self.hl > 1 else "lower"
        return "tied"

    def text(self):
        if self.why:
            return f"{self.why}; as measured {self._text()}"
        return self._text()

    def _text(self):
        """'1.35 (Hodges-Lehmann 1.33, 95% interval 1.20-1.52; exact
        Mann-Whitney p=0.008, 5 and 5 runs)'."""
        if not self.tested:
            return (
                f"{self.ratio:.2f} ({self.n_a} and {self.n_b} runs: too few for the exact test "
                f"to reach p<={ALPHA:g}; at least {MIN_RUNS} runs a side name a winner)"
            )
        span = (
            f"{LEVEL:.0%} interval {self.low:.2f}-{self.high:.2f}"
            if self.low is not None
            else "no 95% interval"
        )
        test = (
            "exact Mann-Whitney"
            if self.exact
            else f"Mann-Whitney, normal approximation, {EXACT_PAIRS} pairs sampled,"
        )
        return (
            f"{self.ratio:.2f} (Hodges-Lehmann {self.hl:.2f}, {span}; "
            f"{test} p={self.p:.3g}, {self.n_a} and {self.n_b} runs)"
        )


def _clean(x):
    return np.asarray([v for v in x if v is not None and v == v and v > 0], dtype=float)


def _rank_sum_counts(doubled, m):
    """How many ways m of the pooled items (doubled midranks, integers)
    reach each doubled rank sum: counts[s] (float: the counts exceed 2^53
    only past ~60 runs, where relative precision is all a p-value needs)."""
    total = int(sum(doubled))
    counts = np.zeros((m + 1, total + 1))
    counts[0, 0] = 1.0
    for r in doubled:
        for k in range(m, 0, -1):  # each item used once: go down in k
            counts[k, r:] += counts[k - 1, : total + 1 - r]
    return counts[m]


def _midranks(pooled):
    order = np.argsort(pooled, kind="stable")
    ranks = np.empty(len(pooled))
    sorted_v = pooled[order]
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and sorted_v[j + 1] == sorted_v[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def exact_p(a, b):
    """Exact two-sided p of the rank-sum of a among a + b (log figures or
    the figures themselves: ranks are the same), conditional on the ties."""
    pooled = np.concatenate([a, b])
    m = len(a)
    if len(np.unique(pooled)) == len(pooled):  # no ties: the cached law of U
        u = int((a[:, None] > b[None, :]).sum())
        law = _u_law(m, len(b))
        centre = m * len(b) / 2
        far = np.abs(np.arange(len(law)) - centre) >= abs(u - centre) - 1e-9
        return float(min(1.0, law[far].sum()))
    doubled = np.rint(2 * _midranks(pooled)).astype(int)
    counts = _rank_sum_counts(doubled, m)
    s = np.arange(len(counts))
    expected = m * (len(pooled) + 1)  # doubled expectation of the rank sum
    obs = int(doubled[:m].sum())
    far = np.abs(s - expected) >= abs(obs - expected) - 1e-9
    return float(min(1.0, counts[far].sum() / counts.sum()))


@lru_cache(maxsize=256)
def _u_law(n_a, n_b):
    """P(U = u), u = 0..n_a*n_b: the Mann-Whitney statistic's exact law
    under the null without ties."""
    counts = _rank_sum_counts(list(range(2, 2 * (n_a + n_b) + 1, 2)), n_a)
    base = n_a * (n_a + 1)  # doubled smallest rank sum: U = (S - base) / 2
    return counts[base::2] / counts.sum()


@lru_cache(maxsize=256)
def _critical(n_a, n_b, alpha=ALPHA):
    """The number c of pair differences cut from each end for the exact
    (1 - alpha) interval: the largest c with P(U < c) <= alpha / 2 under
    the null without ties (0: no interval at this size)."""
    cum = np.cumsum(_u_law(n_a, n_b))
    c = 0
    while c < len(cum) and cum[c] <= alpha / 2 + 1e-12:
        c += 1
    return c


def ratio(a, b):
    """Compares samples a and b (positive figures, higher or lower is the
    caller's reading): the ratio of medians, the Hodges-Lehmann ratio with
    its exact interval, and the exact Mann-Whitney p-value. None when a
    side is empty."""
    a, b = _clean(a), _clean(b)
    if not len(a) or not len(b):
        return None
    point = float(np.median(a) / np.median(b))
    if not can_reject(len(a), len(b)):
        return Ratio(point, None, None, len(a), len(b))
    la, lb = np.log(a), np.log(b)
    if len(a) * len(b) > EXACT_PAIRS:
        return _large(point, la, lb)
    diffs = np.sort((la[:, None] - lb[None, :]).ravel())
    hl = float(np.exp(np.median(diffs)))
    c = _critical(len(a), len(b))
    low = high = None
    if c > 0:
        low, high = float(np.exp(diffs[c - 1])), float(np.exp(diffs[len(diffs) - c]))
    return Ratio(point, low, high, len(a), len(b), hl=hl, p=exact_p(la, lb))


def _large(point, la, lb):
    """The large-sample method (module docstring) on log figures."""
    m, n = len(la), len(lb)
    pooled = np.concatenate([la, lb])
    ranks = _midranks(pooled)
    u = float(ranks[:m].sum()) - m * (m + 1) / 2
    _, ties = np.unique(pooled, return_counts=True)
    total = m + n
    var = m * n / 12 * ((total + 1) - float((ties**3 - ties).sum()) / (total * (total - 1)))
    z = (abs(u - m * n / 2) - 0.5) / math.sqrt(var) if var > 0 else 0.0
    p = math.erfc(max(z, 0.0) / math.sqrt(2))
    rng = np.random.default_rng(SEED)
    diffs = np.sort(la[rng.integers(0, m, EXACT_PAIRS)] - lb[rng.integers(0, n, EXACT_PAIRS)])
    # the interval's ends: Moses' order statistics, as fractions of the pairs
    cut = (m * n / 2 - 1.959964 * math.sqrt(m * n * (total + 1) / 12)) / (m * n)
    low, high = np.quantile(diffs, [max(cut, 0.0), min(1 - cut, 1.0)])
    hl = float(np.exp(np.median(diffs)))
    return Ratio(point, float(np.exp(low)), float(np.exp(high)), m, n, hl=hl, p=p, exact=False)
