# SPDX-License-Identifier: BSD-3-Clause
"""`iokernels --check-batch` answers each case as `iokernels KERNEL --check`
does, byte for byte.

The campaign tool asks the batch instead of one process per command line,
so the batch is only as good as this comparison: good and bad cases of
several kernels, each answered by the batch and by its own single --check,
every answer compared. Cases are ordered so that state left over from one
case (an option, an error, a failed agreement) would change the next one's
answer; a planted mismatch shows the comparison fails."""

import json
import subprocess
import tempfile

import pytest
from conftest import BIN, REPO

REPLAY = str(REPO / "data" / "replay" / "small.replay")
GRID = ["--grid", "16,16,16"]

# [RANKS, KERNEL, ARG...]: good and bad, of several kernels; each bad case
# is followed by a good one of the same kernel (a leftover error would show)
CASES = [
    ["1", "btio", *GRID],
    ["1", "btio", *GRID, "--dumps", "0"],  # out of range
    ["1", "btio", *GRID, "--dumps", "2"],
    ["2", "btio", *GRID],  # not a square
    ["1,4", "btio", *GRID],
    ["1", "btio", *GRID, "--backend", "pnetcdf", "--api", "varn"],
    ["1", "btio", *GRID, "--backend", "mpiio"],  # a leftover --api would be refused here
    ["1", "btio", *GRID, "--backend", "mpiio", "--api", "varn"],  # refused
    ["1", "btio", *GRID, "--collective", "--independent"],
    ["1", "btio", *GRID, "--independent"],
    ["1", "btio", *GRID, "--bogus"],
    ["", "ncbench"],
    ["1", "ncbench", "--compression", "10"],  # out of range
    ["4", "ncbench"],
    ["1", "amrex"],
    ["1", "amrex", "--ncomp", "0"],
    ["1", "amrex", "--backend", "hdf5"],
    ["1", "chombo"],
    ["1", "chombo", "--backend", "nosuch"],
    ["1", "chombo"],
    ["1", "e3sm"],  # no -o or -i
    ["1", "e3sm", "-o", "x"],  # no decomposition
    ["1", "e3sm", "-o", "x", "--generate", "f:ne=4"],
    ["1", "replay", REPLAY],  # 4 traced ranks
    ["4", "replay", REPLAY],
    ["1", "replay", REPLAY, "--ranks-from-trace", "fold"],
    ["1", "replay", REPLAY, "extra-input"],
    ["1", "replay", "/nonexistent/x.replay"],
    ["1", "replay", REPLAY, "--backend", "null", "--verify"],
    ["", "nosuchkernel"],
    ["1", "btio", *GRID, "--deadline", "-5"],
    ["1", "btio", *GRID],
]


def single(case):
    """What `iokernels KERNEL --check [--ranks RANKS] ARG...` answers, in an
    empty folder: "ok" (exit 0), or its stderr's last line."""
    ranks, kernel, *args = case
    cmd = [str(BIN), kernel, "--check", *(["--ranks", ranks] if ranks else []), *args]
    with tempfile.TemporaryDirectory(prefix="iok-single-") as d:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=d)
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert p.returncode == 0 or lines, f"{cmd}: exit {p.returncode} with no line"
    return "ok" if p.returncode == 0 else lines[-1]


def batch(cases, cwd):
    """The batch's process and its answers to `cases`."""
    text = "".join(json.dumps(c) + "\n" for c in cases)
    p = subprocess.run(
        [str(BIN), "--check-batch"],
        input=text,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )
    return p, p.stdout.splitlines()


def mismatches(cases, answers, singles):
    """The cases whose batch answer is not, byte for byte, the single's."""
    assert len(answers) == len(cases), f"{len(answers)} answers to {len(cases)} cases"
    return [(c, a, s) for c, a, s in zip(cases, answers, singles, strict=True) if a != s]


@pytest.fixture(scope="module")
def singles():
    return [single(c) for c in CASES]


def test_each_answer_is_the_single_checks(tmp_path, singles):
    p, answers = batch(CASES, tmp_path)
    assert p.returncode == 0, p.stderr
    assert mismatches(CASES, answers, singles) == []
    # the cases are what they were meant to be: good and bad of every kernel
    assert answers.count("ok") >= 10
    bad = [a for a in answers if a != "ok"]
    assert len(bad) >= 12 and all(a.startswith("iokernels: error: ") for a in bad)
    assert "--dumps" in answers[1] and answers[2] == "ok"  # a good case after a bad one
    assert answers[6] == "ok" and "varn" in answers[7]  # --api not carried over
    assert list(tmp_path.iterdir()) == []  # no I/O, no file


def test_a_planted_difference_is_caught(tmp_path, singles):
    """The comparison fails when an answer is not the single's: a case asked
    of the batch with another value than the single was asked with."""
    planted = [list(c) for c in CASES]
    planted[2] = ["1", "btio", *GRID, "--dumps", "0"]  # the single asked --dumps 2
    _, answers = batch(planted, tmp_path)
    assert [c for c, _, _ in mismatches(CASES, answers, singles)] == [CASES[2]]


def test_reversed_order_gives_the_same_answers(tmp_path, singles):
    """Each case's answer is its own, whatever came before it."""
    p, answers = batch(CASES[::-1], tmp_path)
    assert p.returncode == 0, p.stderr
    assert answers == singles[::-1]


def test_a_malformed_line_is_named_by_its_number(tmp_path):
    text = json.dumps(CASES[0]) + "\n\n" + '["1", "btio", 3]\n' + json.dumps(CASES[0]) + "\n"
    p = subprocess.run(
        [str(BIN), "--check-batch"], input=text, capture_output=True, text=True, cwd=tmp_path
    )
    assert p.returncode == 2
    assert p.stdout.splitlines() == ["ok"]  # the lines before it are answered
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert lines == [
        "iokernels: error: --check-batch line 3: every item must be a string: "
        "[RANKS, KERNEL, ARG...]"
    ]
    p = subprocess.run(
        [str(BIN), "--check-batch"], input="not json\n", capture_output=True, text=True
    )
    assert p.returncode == 2 and "--check-batch line 1: expected a JSON array" in p.stderr
