# SPDX-License-Identifier: BSD-3-Clause
"""bench/_ranks.py and the benches' --ranks (ctest bench.ranks): the
parsing, the defaults on a machine of N cores (IOK_BENCH_CORES), the
"oversubscribed (R ranks on C cores)" label in the header and on the rows,
and the refusal of a non-square count where BTIO runs."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(REPO / "python"))

import _ranks  # noqa: E402
from iokernels_campaign.store import record  # noqa: E402


def bench(script, *args, cores=None, timeout=300):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop(_ranks.ENV, None)
    if cores is not None:
        env[_ranks.ENV] = str(cores)
    cmd = [sys.executable, str(BENCH / script), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)


def test_parse():
    assert _ranks.parse("4,16,64") == [4, 16, 64]
    assert _ranks.parse("16,4,4") == [4, 16]
    for bad in ("", "4,,8", "x", "0", "4,-1"):
        with pytest.raises(ValueError, match="--ranks"):
            _ranks.parse(bad)


@pytest.mark.parametrize(
    ("cores", "plain", "square"),
    [
        (1, [1], [1]),
        (2, [1, 2], [1]),
        (4, [1, 2, 4], [1, 4]),
        (6, [1, 2, 4, 6], [1, 4]),
        (12, [1, 2, 4, 8, 12], [1, 4, 9]),
        (64, [1, 2, 4, 8, 16, 32, 64], [1, 4, 16, 64]),
    ],
)
def test_defaults_fit_the_cores(cores, plain, square):
    assert _ranks.defaults(cores) == plain
    assert _ranks.defaults(cores, square=True) == square
    assert all(_ranks.is_square(r) for r in square)


def test_usable_cores(monkeypatch):
    monkeypatch.setenv(_ranks.ENV, "64")
    assert _ranks.usable_cores() == 64
    monkeypatch.delenv(_ranks.ENV)
    n = _ranks.usable_cores()
    assert 1 <= n <= len(os.sched_getaffinity(0))


def test_label_is_the_records_words():
    assert _ranks.label(2, 2) == ""
    assert _ranks.label(4, 2) == "oversubscribed (4 ranks on 2 cores)"
    assert _ranks.label(3, 1) == "oversubscribed (3 ranks on 1 core)"
    for r, c in ((4, 2), (3, 1), (64, 16)):
        assert _ranks.label(r, c) == record.oversubscribed_text(r, c)
    head = _ranks.header([1, 2, 4, 8], 2)
    assert head.startswith("2 usable cores; rank counts 1,2,4,8: ")
    assert "oversubscribed (4 ranks on 2 cores); oversubscribed (8 ranks on 2 cores)" in head
    assert "none oversubscribed" in _ranks.header([1, 2], 2)


def test_originals_defaults_on_n_cores():
    """The default counts on a 64-core machine; the originals are not
    needed to print them (it says what is missing and runs nothing)."""
    p = bench("originals", "--no-env", cores=64)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == (
        "64 usable cores; rank counts 1,2,4,8,16,32,64 (none oversubscribed); BTIO's: 1,4,16,64"
    ), lines[0]
    assert "no case to run" in p.stdout


def test_originals_refuses_a_non_square_count_for_btio():
    p = bench("originals", "--no-env", "--ranks", "2,4", cores=2)
    assert p.returncode != 0
    err = p.stderr.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("bench/originals: --ranks 2,4: BTIO runs on square rank counts")
    assert "not 2:" in err[0] and "--ranks 1" in err[0] and "--only" in err[0]
    # without BTIO's cases the same counts are taken, 4 labelled
    p = bench("originals", "--no-env", "--ranks", "2,4", "--only", "NetCDF", cores=2)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == (
        "2 usable cores; rank counts 2,4: oversubscribed (4 ranks on 2 cores); BTIO's: 4"
    )


@pytest.mark.parametrize(
    "script", ["btio", "overhead", "write-check", "replay", "agreements", "overlap"]
)
def test_btio_benches_refuse_non_square(script):
    p = bench(script, "--ranks", "1,3", cores=2)
    assert p.returncode != 0
    assert p.stderr.strip() == (
        f"bench/{script}: --ranks 1,3: BTIO runs on square rank counts only (1, 4, 9, 16, ...), "
        "not 3: give square counts, e.g. --ranks 1"
    )


def test_overlap_rows_labelled_and_measured(tmp_path):
    """A real (tiny) bench/overlap on a pretended 1-core machine: each job's
    row carries an overlap from its ABBA record (4 iterations: untested),
    the 4-rank rows the oversubscribed label and the 1-rank rows none."""
    p = bench(
        "overlap", "--grid", "8,8,8", "--dumps", "2", "--iterations", "4", "--configs",
        "ompio-indep", "--ranks", "1,4", "--dir", str(tmp_path), cores=1,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert (
        lines[0] == "BTIO write, 1 usable core; rank counts 1,4: oversubscribed (4 ranks on 1 core)"
    )
    rows = [x for x in lines if x.split()[1:2] == ["ompio-indep"]]
    assert len(rows) == 10, lines  # 0x, then 0.5x and 2x, sleep and spin; per rank count
    for row in rows:
        assert "[untested]" in row and " untested " in row, row
        over = row.endswith(" oversubscribed (4 ranks on 1 core)")
        assert over == (row.split()[0] == "4"), row


def test_bad_list_refused():
    p = bench("amrex", "--ranks", "2,x")
    assert p.returncode != 0
    assert p.stderr.strip() == "bench/amrex: --ranks 2,x: give counts separated by commas " \
        "(--ranks 1,2,4)"  # fmt: skip


def test_ncbench_rows_labelled(tmp_path):
    """A real (tiny) run on a pretended 1-core machine: the header names the
    cores and the oversubscribed count, the 2-rank rows carry the label and
    the 1-rank rows do not."""
    p = bench("ncbench", "--geom", "2:8:8:2", "--ranks", "1,2", "--dir", str(tmp_path), cores=1)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == (
        "NetCDF-Bench, 1 usable core; rank counts 1,2: oversubscribed (2 ranks on 1 core)"
    )
    rows = [x for x in lines if x.split()[:2] in (["1", "netcdf4"], ["2", "netcdf4"])]
    assert len(rows) == 8, lines
    for row in rows:
        over = row.endswith(" oversubscribed (2 ranks on 1 core)")
        assert over == (row.split()[0] == "2"), row


def test_ncbench_uneven_nodes_refused():
    p = bench("ncbench", "--nn", "2", "--ranks", "2,3")
    assert p.returncode != 0
    assert "--ranks 3 on --nn 2 nodes" in p.stderr and "multiples of --nn" in p.stderr
