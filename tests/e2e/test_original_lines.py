# SPDX-License-Identifier: BSD-3-Clause
"""Each kernel's report carries its original's timing lines, in the original's
order and format, line for line: compared by shape with the originals' sample
outputs (tests/data), numbers reduced to their field width and decimals."""

import re

import pytest
from conftest import SHIPPED, TESTDATA, run

NUM = re.compile(r" *-?[0-9]+(?:\.[0-9]+)?(?:e[-+][0-9]+)?")


def shape(line):
    """The line with every number (and the spaces before it) as <width.decimals>."""

    def field(m):
        s = m.group(0)
        dec = len(s.split(".")[1]) if "." in s and "e" not in s else 0
        return f"<{len(s)}.{dec}>"

    return NUM.sub(field, line.rstrip())


def block(text, first, last):
    """Lines from the one starting with `first` to the one starting with `last`."""
    lines = text.splitlines()
    i = next(k for k, x in enumerate(lines) if x.startswith(first))
    j = next(k for k in range(i, len(lines)) if lines[k].startswith(last))
    return lines[i : j + 1]


def numbers(line):
    return [float(x) for x in re.findall(r"-?[0-9]+\.[0-9]+", line)]


# ---- BTIO: pnetcdf_m/mpiio_m timers, the maximum over ranks -------------


@pytest.mark.parametrize(
    "method,mode,sample",
    [(0, "write", "m0_write"), (3, "write", "m3_write"), (2, "read", "m2_read")],
)
def test_btio_lines_are_the_originals(tmp_path, method, mode, sample):
    ref = (TESTDATA / "btio" / f"sample_report_p9_g128_n3_{sample}.txt").read_text()
    if mode == "read":
        w = run(
            9, ["btio", "--grid", "36,36,36", "--dumps", "3", "--method", str(method)], tmp_path
        )
        assert w.rc == 0, w.err
    r = run(
        9,
        ["btio", "--grid", "36,36,36", "--dumps", "3", "--method", str(method), "--mode", mode],
        tmp_path,
    )
    assert r.rc == 0, r.err
    want = block(ref, "-- BT-IO", "Using ")
    got = block(r.out, "-- BT-IO", "Using ")
    assert [shape(x) for x in got] == [shape(x) for x in want]
    assert got[-1] == want[-1]  # "Using MPI collective I/O method" and the others
    p = r.record["passes"][0]
    total = numbers(got[7])[0]
    # one barrier, open to close, the maximum over ranks of each rank's own span
    assert r.record["barriers"] == "pass"
    assert total == pytest.approx(p["span_rank_seconds"]["max"], abs=0.006)
    mib = p["bytes"] / 2**20
    bw = numbers(got[11])[0]
    assert bw == pytest.approx(mib / p["span_rank_seconds"]["max"], rel=0.01, abs=0.01)
    if method <= 1:  # the original's MPI-IO methods time neither create nor posts
        assert got[8:11] == want[8:11]
    else:
        post = p["phases"]["post"]["rank_seconds"]["max"]
        assert numbers(got[9])[0] == pytest.approx(post, abs=0.006)


# ---- E3SM-IO: its phases, the maximum over ranks --------------------------

E3SM_LINES = [  # the seed's sample output (the original's report), in order
    r"Total write amount                 = [0-9.]+ MiB = [0-9.]+ GiB",
    r"Max number of requests             = [0-9]+",
    r"Max Time of open \+ metadata define = [0-9]+\.[0-9]{4} sec",
    r"Max Time of I/O preparing          = [0-9]+\.[0-9]{4} sec",
    r"Max Time of ncmpi_iput_varn        = [0-9]+\.[0-9]{4} sec",
    r"Max Time of ncmpi_wait_all         = [0-9]+\.[0-9]{4} sec",
    r"Max Time of close                  = [0-9]+\.[0-9]{4} sec",
    r"Max Time of TOTAL                  = [0-9]+\.[0-9]{4} sec",
    r"I/O bandwidth \(open-to-close\)      = [0-9]+\.[0-9]{4} MiB/sec",
    r"I/O bandwidth \(write-only\)         = [0-9]+\.[0-9]{4} MiB/sec",
    r"-{59}",
]


def test_e3sm_lines_are_the_originals(tmp_path):
    r = run(4, ["e3sm", "-k", "-o", "g.nc", str(SHIPPED / "e3sm" / "map_g_case_16p.nc")], tmp_path)
    assert r.rc == 0, r.err
    got = block(r.out, "Total write amount", "-----")
    assert len(got) == len(E3SM_LINES), got
    for line, pat in zip(got, E3SM_LINES, strict=True):
        assert re.fullmatch(pat, line), (line, pat)
    p = r.record["passes"][0]
    assert r.record["barriers"] == "phase"  # e3sm_io: a barrier before every phase
    val = {x.split("=")[0].strip(): numbers(x) for x in got}
    wait = val["Max Time of ncmpi_wait_all"][0]
    assert wait == pytest.approx(p["phases"]["wait"]["rank_seconds"]["max"], abs=6e-5)
    total = val["Max Time of TOTAL"][0]
    # each rank's open to close with its request preparation, the maximum over ranks
    assert p["span_rank_seconds"]["max"] <= total + 6e-5
    mib = p["bytes"] / 2**20
    assert val["I/O bandwidth (open-to-close)"][0] == pytest.approx(mib / total, rel=0.01)


# ---- NetCDF-Bench: barriers around open, the I/O loop and close ----------


def test_ncbench_table_is_the_originals_and_timed_its_way(tmp_path):
    ref = TESTDATA / "netcdf-bench" / "sample_output_np4_coll_unlimited_chunked_w_r_verify.txt"
    want = block(ref.read_text(), " " * 20, "benchmark:write      I/O Performance  ")
    args = ["-n=2", "-p=2", "-d=8:64:64:16", "-w", "-t=coll", "-u", "-c=auto", "-f=t.nc"]
    r = run(4, ["ncbench", *args], tmp_path)
    assert r.rc == 0, r.err
    got = block(r.out, " " * 20, "benchmark:write      I/O Performance  ")
    assert [shape(x) for x in got] == [shape(x) for x in want]
    assert [x[:61] for x in got] == [x[:61] for x in want]
    io = numbers(got[2])
    pure = numbers(got[4])
    # every rank's I/O time runs to the end of the slowest rank's loop, as the
    # original's barriers make it: the per-rank figures agree with the pass's
    p = r.record["passes"][0]
    assert r.record["barriers"] == "pass"
    assert io[2] <= p["span_seconds"] * 1.0001
    mib = p["bytes"] / 2**20
    assert pure[0] == pytest.approx(mib / io[2], rel=0.01)
    # even the fastest rank's figure covers the slowest rank's transfer calls, less
    # what it subtracts as its own suite work (values, requests) and the skew of
    # leaving a barrier (rank A's loop is t1 - t0 - suite_A, rank B's calls at most
    # t1 - t0 - suite_B, the t's a barrier's exit on each rank). The skew is a few
    # microseconds on an idle machine, a scheduler slice (milliseconds) on a loaded
    # one: hence 5% and 1 ms.
    ph = p["phases"]
    suite = ph["datagen"]["rank_seconds"]["max"] + ph["requests"]["rank_seconds"]["max"]
    assert io[0] >= (ph["post"]["rank_seconds"]["max"] - suite) * 0.95 - 1e-3
    # and no rank's figure is below its own transfer calls
    assert io[0] >= ph["post"]["rank_seconds"]["min"] - 1e-9


# ---- AMReX: its step timers, ReduceRealMax of each rank's durations -------

AMREX_LINES = [  # the seed's sample output, in order
    "Write_NCHEADER_time_1_2_0",
    "Write_NCATT_time_1_3",
    "Write_NCINIT_time_1",
    "Write_NCATT_time_2",
    "Write_NCATT_time_3",
    "Write_NCVAR_time_4",
    "Write_NCATT_time",
    "::---- calling NCPUT for the grid data on level 0",
    "Write_NCATT_time_5",
    "Write_NCVARPUT_time",
    "Write_NCVARPUT_time_since",
    "Write_NC_time_7_closing",
    "Write_PNETCDF_time",
]


def test_amrex_lines_are_the_originals(tmp_path):
    r = run(4, ["amrex", "--ncells", "32", "--max_grid_size", "16", "--ncomp", "2"], tmp_path)
    assert r.rc == 0, r.err
    got = block(r.out, "Write_NCHEADER_time_1_2_0", "Write_PNETCDF_time")
    assert [x.split(" = ")[0] for x in got] == AMREX_LINES
    for x in got:
        if x.startswith("::"):
            continue
        if x.startswith("Write_NCVARPUT_time_since"):
            assert re.fullmatch(r"Write_NCVARPUT_time_since = [0-9.e+-]+", x), x
        else:
            assert re.fullmatch(r"\S+ = [0-9.e+-]+  seconds\.", x), x
    val = {x.split(" = ")[0]: float(x.split(" = ")[1].split()[0]) for x in got if " = " in x}
    # seconds since the start of the run, not a stamp since the epoch
    assert 0 < val["Write_NCVARPUT_time_since"] < 300
    p = r.record["passes"][0]
    assert val["Write_PNETCDF_time"] == pytest.approx(p["span_rank_seconds"]["max"], rel=1e-6)
    assert val["Write_NCINIT_time_1"] >= val["Write_NCHEADER_time_1_2_0"]
