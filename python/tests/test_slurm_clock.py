# SPDX-License-Identifier: BSD-3-Clause
"""One clock for the job across nodes (issue 40): on the two-node Slurm
sandbox (slurmcluster.py), the ranks of node n2 run with their clock 4 s
ahead (tests/clock/clock_shift.c by host name): the corrected span stays
the unshifted run's, the record finds the offset, and the span the ranks'
own clocks give is 4 s longer. The shift is large beside the runs' own
times so that a loaded machine, which makes one run several times slower
than another, cannot pass for the shift nor hide it."""

import json

from conftest import BIN

SHIM = BIN.parent / "libiok_clock_shift.so"
SHIFT = 4.0


def _write(cluster, out, shifted):
    out.mkdir()
    env = (
        [
            "env",
            f"LD_PRELOAD={SHIM}",
            "IOK_TEST_CLOCK_SHIFT_HOST=n2",
            f"IOK_TEST_CLOCK_SHIFT={SHIFT}",
        ]
        if shifted
        else []
    )
    js = out / "run.jsonl"
    p = cluster.run(
        "srun", "-N2", "-n4", "--mpi=pmix", *env, BIN, "btio", "--backend", "mpiio",
        "--grid", "32,32,32", "--dumps", "2", "--dir", out, "--quiet", "--json", js,
        timeout=180,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    rec = json.loads(js.read_text().splitlines()[-1])
    assert rec["environment"]["nodes"] == 2 and "n2" in rec["environment"]["hostnames"], rec[
        "environment"
    ]
    return rec


def test_one_nodes_clock_shifted(slurm_cluster):
    assert SHIM.exists(), f"{SHIM} is missing: cmake --build build builds it"
    d = slurm_cluster.directory / "clock"
    d.mkdir()
    plain, shifted = (
        _write(slurm_cluster, d / "plain", False),
        _write(slurm_cluster, d / "shifted", True),
    )
    c0, c1 = plain["clock"], shifted["clock"]
    assert abs(c1["offset_max_seconds"] - SHIFT) < 0.1 + c0["offset_spread_seconds"], c1
    p0, p1 = plain["passes"][0], shifted["passes"][0]
    # the wrong case, kept beside: each rank's own clock puts the shift in the span
    assert abs(p1["span_unsynced_seconds"] - p1["span_seconds"] - SHIFT) < 0.1, p1
    # the corrected span holds none of the shift (the runs' own times, even
    # slowed several times by a busy machine, stay far below it)
    assert p1["span_seconds"] < 3 * p0["span_seconds"] + SHIFT / 2, (p0["span_seconds"], p1)
