# SPDX-License-Identifier: BSD-3-Clause
"""--agree-every K (issue 40): the ranks meet every K steps instead of every
step where no library call needs them to (independent transfers, a file per
process); collective transfers on a shared file still agree every step. A
failure on one rank between meetings still ends the whole job."""

import time

import pytest
from conftest import assert_ended_quickly, run, run_plain

SMALL = ["btio", "--grid", "32,32,32", "--dumps", "6"]


def write_pass(rec):
    return next(p for p in rec["passes"] if p["op"] == "write")


@pytest.mark.parametrize("io,expected", [("--independent", 4), ("--collective", 1)])
def test_meetings_every_k_steps_where_allowed(tmp_path, io, expected):
    r = run(4, [*SMALL, io, "--agree-every", "4", "--verify", "--dir", str(tmp_path)], tmp_path)
    assert r.rc == 0, r.err
    assert write_pass(r.record)["agree_every_steps"] == expected
    assert r.record["verify"]["ok"] is True
    assert r.record["options"]["core"]["agree-every"] == 4


@pytest.mark.parametrize("k", [1, 4])
@pytest.mark.parametrize("phase", ["put", "wait"])
def test_a_failure_between_meetings_ends_the_job(tmp_path, k, phase):
    """The wrong case, built: rank 1's call fails at a step where the ranks
    do not meet; it posts nothing more and says so at the next meeting (or
    the last): the job ends with its line and exit 1, no hang, no record."""
    env = {"IOK_FAULT": f"{phase}:1", "IOK_AGREE_SECONDS": "3"}
    t0 = time.monotonic()
    args = [*SMALL, "--independent", "--backend", "mpiio", "--agree-every", str(k)]
    r = run(4, [*args, "--dir", str(tmp_path)], tmp_path, env=env, timeout=60)
    assert r.rc == 1, (r.rc, r.err[-2000:])
    lines = r.error_lines()
    assert any(f"the backend's {phase} of" in line for line in lines), r.err[-2000:]
    assert_ended_quickly(t0, 4, 15)
    assert not r.records


def test_agree_every_must_be_positive(tmp_path):
    r = run_plain(1, [*SMALL, "--agree-every", "0"], tmp_path)
    assert r.rc == 2 and "--agree-every takes at least 1" in r.err
