# SPDX-License-Identifier: BSD-3-Clause
"""compare on a large store (issue #44: 50,000 runs took 73 s and 925 MB;
bench/compare-store measures it): the bootstrap draws its resamples a block
at a time, and must give the interval one whole matrix gives; a stored
record is parsed once for what the run list shows of it."""

import json

import numpy as np
from iokernels_campaign import record, verdict


def test_blockwise_bootstrap_is_the_whole_matrix(monkeypatch):
    rng = np.random.default_rng(1)
    a, b = rng.lognormal(size=101), rng.lognormal(size=57)
    whole = verdict.ratio(a, b)
    monkeypatch.setattr(verdict, "CHUNK", 500)  # blocks of 4 and of 8 rows
    blocks = verdict.ratio(a, b)
    assert (blocks.low, blocks.high) == (whole.low, whole.high)
    # and the draws are the matrix's: one REPS x n matrix drawn at once
    rng = np.random.default_rng(verdict.SEED)
    ma = np.median(a[rng.integers(0, len(a), (verdict.REPS, len(a)))], axis=1)
    mb = np.median(b[rng.integers(0, len(b), (verdict.REPS, len(b)))], axis=1)
    low, _ = np.quantile(ma / mb, [(1 - verdict.LEVEL) / 2, 1 - (1 - verdict.LEVEL) / 2])
    assert blocks.low == float(low)


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
