# SPDX-License-Identifier: BSD-3-Clause
"""bench/pio (issue 53) without PIO: its table of one case, from runs given
by hand (the runs themselves need NCAR's PIO, built outside the suite)."""

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def load():
    sys.path.insert(0, str(REPO / "bench"))  # its resultfile.py
    path = str(REPO / "bench" / "pio")
    loader = importlib.machinery.SourceFileLoader("bench_pio", path)
    spec = importlib.util.spec_from_loader("bench_pio", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def test_table_rows_per_file_and_whole_case():
    """A row per history file and one for the case, whose times are the
    files' sums run by run; medians per side; a failed run (None) left out;
    ours / PIO with the verdict module's interval once 5 runs a side."""
    b = load()
    pio = [[1.0, 0.1], [1.2, 0.1], [1.1, 0.2], [0.9, 0.1], [1.0, 0.1]]
    ours = [[2.0, 0.2], [2.4, 0.2], [2.2, 0.4], [1.8, 0.2], None]
    counts = dict.fromkeys(b.COUNTS, 1) | {"mpi_bytes": 2 * b.MiB}
    rows = b.table_rows(["F_h0", "F_h1"], pio, ours, ours, counts, None, [10.0, 12.0], [30.0])
    assert [r["name"] for r in rows] == ["F_h0", "F_h1", "whole case"]
    assert rows[0]["pio"] == 1.0 and rows[0]["ours"] == 2.1
    assert rows[2]["pio"] == 1.1 and rows[2]["pio_runs"][2] == 1.3
    assert rows[2]["ours_runs"][4] is None and abs(rows[2]["ours"] - 2.4) < 1e-9
    assert rows[0]["requests"][0] == (
        "varn 1 [1], vara 1, bput 1, wait_all 1",
        "1 (2.00 MiB); exchanges: 1 MPI_Alltoallv/w, 1 sends; "
        "small collectives: 1 MPI_Bcast, 1 MPI_Allreduce",
    )
    assert rows[2]["pio_best"] == 1.0 and abs(rows[2]["ours_best"] - 2.0) < 1e-9
    assert rows[0]["requests"][1] == ("-", "-") and rows[0]["rss"] == (11.0, 30.0)
    assert "95% interval" in rows[0]["ratio"] or "ratio of medians" in rows[0]["ratio"]
    assert rows[0]["ratio"].startswith("2.10")


def test_one_file_case_has_no_whole_row():
    b = load()
    rows = b.table_rows(["G"], [[1.0]], [[0.5]], [[0.6]], None, None, [None], [None])
    assert [r["name"] for r in rows] == ["G"] and rows[0]["ours_raw"] == 0.6


def test_phases_summed_over_files_then_medians():
    b = load()
    out = (
        "PIO phases, max over ranks: create+define 0.1 write_darray/put_vara 0.2 "
        "close (flush) 0.3 sec\nPIO phases, max over ranks: create+define 0.1 "
        "write_darray/put_vara 0.0 close (flush) 0.1 sec\n"
    )
    ph = b.pio_phases(out)
    assert [round(x, 6) for x in ph] == [0.2, 0.2, 0.4] and b.pio_phases("") is None
    text = b.phases_text([ph, None], [{"exchange": 0.5, "wait": 0.1}, {}])
    assert text.startswith("PIO create+define 0.200, write_darray/put_vara 0.200, close")
    assert "ours open -, define -, exchange 0.500, post -, wait 0.100, close -" in text
