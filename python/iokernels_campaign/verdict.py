# SPDX-License-Identifier: BSD-3-Clause
"""Statistics before verdicts: one series is called faster than another
only where the difference exceeds the runs' spread, the bootstrap interval
of the ratio of their medians (numpy) excluding 1, over at least MIN_RUNS
runs each; otherwise they are tied (or, with fewer runs, untested)."""

from dataclasses import dataclass

import numpy as np

MIN_RUNS = 3
LEVEL = 0.95
REPS = 4000
SEED = 20261125  # fixed: the same runs give the same interval every time


@dataclass
class Ratio:
    ratio: float  # median(a) / median(b)
    low: float | None  # the interval (None: fewer than MIN_RUNS runs on a side)
    high: float | None
    n_a: int
    n_b: int

    @property
    def tested(self):
        return self.low is not None

    @property
    def call(self):
        """'higher', 'lower', 'tied', or 'untested' (too few runs)."""
        if not self.tested:
            return "untested"
        if self.low > 1:
            return "higher"
        if self.high < 1:
            return "lower"
        return "tied"

    def text(self):
        """'1.35 (95% interval 1.20-1.52, 3 and 3 runs)'."""
        if not self.tested:
            return f"{self.ratio:.2f} ({self.n_a} and {self.n_b} run(s): fewer than {MIN_RUNS})"
        return (
            f"{self.ratio:.2f} ({LEVEL:.0%} interval {self.low:.2f}-{self.high:.2f}, "
            f"{self.n_a} and {self.n_b} runs)"
        )


def ratio(a, b):
    """The ratio of the medians of samples a and b (positive numbers) and
    its percentile bootstrap interval: each side resampled with replacement
    REPS times."""
    a = np.asarray([x for x in a if x is not None and x == x], dtype=float)
    b = np.asarray([x for x in b if x is not None and x == x], dtype=float)
    if not len(a) or not len(b) or np.median(b) <= 0:
        return None
    point = float(np.median(a) / np.median(b))
    if len(a) < MIN_RUNS or len(b) < MIN_RUNS:
        return Ratio(point, None, None, len(a), len(b))
    rng = np.random.default_rng(SEED)
    ma, mb = _medians(a, rng), _medians(b, rng)
    low, high = np.quantile(ma / mb, [(1 - LEVEL) / 2, 1 - (1 - LEVEL) / 2])
    return Ratio(point, float(low), float(high), len(a), len(b))


CHUNK = 2_000_000  # resampled values at once: a series of 50,000 runs stays at ~30 MB


def _medians(x, rng):
    """The medians of REPS resamples of x, drawn a block of rows at a time
    (the same draws, in the same order, as one REPS x len(x) matrix)."""
    rows = max(1, CHUNK // len(x))
    return np.concatenate(
        [
            np.median(x[rng.integers(0, len(x), (min(rows, REPS - i), len(x)))], axis=1)
            for i in range(0, REPS, rows)
        ]
    )
