# SPDX-License-Identifier: BSD-3-Clause
"""compare on a large store (issue #44: 50,000 runs took 73 s and 925 MB;
bench/compare-store measures it): past verdict.EXACT_PAIRS pairs of runs the
test takes the normal approximation and a fixed sample of pairs, in memory
that does not grow with the runs, and keeps its false-winner rate; a stored
record is parsed once for what the run list shows of it."""

import json
import resource

import numpy as np
from iokernels_campaign.report import verdict
from iokernels_campaign.store import record


def test_a_large_series_is_compared_in_bounded_memory():
    rng = np.random.default_rng(1)
    a, b = rng.lognormal(0, 0.2, 12_500), rng.lognormal(0, 0.2, 12_500)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    same = verdict.ratio(a, b)
    slower = verdict.ratio(a, b * 1.05)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 200, grown_mib  # the whole a_i / b_j matrix would be 1.2 GB
    assert not same.exact and "normal approximation" in same.text()
    assert same.call == "tied" and slower.call == "lower", (same.text(), slower.text())
    assert slower.low < 1 / 1.05 < slower.high, slower.text()
    assert verdict.ratio(a, b).text() == same.text()  # the sample of pairs is fixed


def test_the_large_sample_method_keeps_its_false_winner_rate():
    rng = np.random.default_rng(7)
    trials = 400
    wrong = sum(
        verdict.ratio(rng.lognormal(0, 0.3, 501), rng.lognormal(0, 0.3, 501)).call != "tied"
        for _ in range(trials)
    )
    assert wrong / trials <= 0.08, wrong / trials  # 5% expected; 0.08 is 2.5 sd above


def test_record_readers_take_the_parsed_record():
    rec = {
        "kernel": "btio",
        "argv": ["--grid", "8,8,8", "--backend", "mpiio"],
        "environment": {"mpiio_layer": None},
        "passes": [],
    }
    text = json.dumps(rec)
    for fn in (record.what_ran, record.mpiio_layer, record.ceiling_above):
        assert fn(record.parsed(text)) == fn(text)
    assert record.what_ran(rec) == "btio --grid 8,8,8"
    assert record.parsed("not json") is None and record.parsed("[1]") is None
