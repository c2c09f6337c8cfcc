# SPDX-License-Identifier: BSD-3-Clause
"""The statistics exist twice: the campaign's verdicts (report/verdict.py)
and a mix member's slowdown in the binary (src/core/measure/slowdown.c, through
build/iok_slowdown_cli). Both give the Hodges-Lehmann ratio and its exact
95% interval (Moses); checked live against each other on generated
samples, ties included, so that neither drifts alone."""

import subprocess

import numpy as np
import pytest
from conftest import BIN
from iokernels_campaign.report import verdict

CLI = BIN.parent / "iok_slowdown_cli"


def c_side(a, b):
    assert CLI.exists(), f"{CLI} is missing: cmake --build build builds it"
    text = " ".join(repr(float(x)) for x in a) + "\n" + " ".join(repr(float(x)) for x in b) + "\n"
    out = subprocess.run([str(CLI)], input=text, capture_output=True, text=True, check=True)
    hl, low, high, has, call = out.stdout.split()
    return float(hl), float(low), float(high), int(has), call


def samples(seed):
    rng = np.random.default_rng(seed)
    na, nb = (int(x) for x in rng.integers(3, 11, 2))
    shift = float(rng.choice([1.0, 1.0, 1.3, 2.0]))
    a = rng.lognormal(0.0, 0.3, na) * shift
    b = rng.lognormal(0.0, 0.3, nb)
    if seed % 4 == 0:  # ties, as rounded timings give them
        a, b = np.round(a, 1), np.round(b, 1)
    return a, b


@pytest.mark.parametrize("seed", range(60))
def test_the_two_implementations_agree(seed):
    a, b = samples(seed)
    r = verdict.ratio(a, b)
    hl, low, high, has, call = c_side(a, b)
    if r.low is None:  # no interval at this size (or a cut of 0)
        assert not has, (a, b, hl, low, high)
        assert call == "untested"
        return
    assert has, (a, b, r)
    assert hl == pytest.approx(r.hl, rel=1e-9)
    assert low == pytest.approx(r.low, rel=1e-9)
    assert high == pytest.approx(r.high, rel=1e-9)
    assert call == ("slower" if low > 1 else "faster" if high < 1 else "tied"), (call, low, high)


def test_a_planted_difference_is_seen():
    """The premise: the comparison can fail (a shifted C side differs)."""
    a, b = samples(1)
    r = verdict.ratio(a, b)
    hl, *_ = c_side(a * 1.01, b)
    assert r.hl is None or hl != pytest.approx(r.hl, rel=1e-9)
