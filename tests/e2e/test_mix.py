# SPDX-License-Identifier: BSD-3-Clause
"""`iokernels mix`: several kernels at once on split communicators (#43).

Each member's report, alone and together, and its files verify; a null
aggressor is a tie; a bad member option, a failing member and a killed rank
end the job naming the member, the record keeping the runs done before."""

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import BIN, MPIEXEC, run, run_plain
from declared import missing

BOUND = 60  # seconds: a failure ends the job within this
SLOWDOWN = re.compile(
    r"^member (\d) (\w+): slowdown ([\d.]+) \(95% interval ([\d.]+)-([\d.]+)\): (\w+)$", re.M
)


def mix(np_, parts, cwd, mix_opts=(), env=None, timeout=240):
    args = ["mix", *mix_opts]
    for ranks, kernel, opts in parts:
        args += ["--part", f"{ranks}:{kernel}", *opts]
    return run(np_, args, cwd, timeout=timeout, env=env)


def sections(out):
    """(member, kernel, iteration, mode) of every report section printed."""
    return re.findall(
        r"^=== mix member (\d) (\w+), iteration (\d+), (alone|together) ===$", out, re.M
    )


def slowdowns(out):
    return {int(m[0]): m for m in SLOWDOWN.findall(out)}


def test_null_aggressor_is_a_tie(tmp_path):
    """The control: an aggressor on the null backend moves no data, so the
    victim (BTIO on MPI-IO, to a file) is tied with itself alone. A 95%
    interval misses the truth in 5% of mixes by construction (the machine's
    other jobs make every run's time vary), so a second mix is run when the
    first is not tied: a null aggressor that did cost the victim fails both.
    The verdict's other outcomes (slower, faster) on series built to differ:
    tests/unit/test_slowdown.c."""
    calls = []
    for attempt in ("a", "b"):
        (tmp_path / attempt).mkdir()
        (tmp_path / attempt / "n").mkdir()
        r = mix(
            2,
            [
                (1, "btio", ["--backend", "mpiio", "--grid", "32,32,32", "--dir", attempt]),
                (1, "btio", ["--backend", "null", "--grid", "8,8,8", "--dumps", "1"]),
            ],
            tmp_path,
            ["--iterations", "6"],
        )
        assert r.rc == 0, r.err
        victim = r.record["members"][0]["slowdown"]
        # the line and the record say the same, and the call follows the interval
        assert slowdowns(r.out)[1][5] == victim["call"], r.out[-2000:]
        inside = victim["low"] <= 1 <= victim["high"]
        assert (victim["call"] == "tied") == inside, victim
        assert (tmp_path / attempt / "btio.mpi").stat().st_size == 32**3 * 5 * 5 * 8
        assert not list(tmp_path.glob("btio.null*")), "the null member wrote a file"
        # the null member's own times are overhead: no call of its own
        control = r.record["members"][1]["slowdown"]
        assert control["call"] == "not judged", control
        assert "member 2 btio: slowdown not judged: its backend (null) moves no data" in r.out
        calls.append(victim)
        if victim["call"] == "tied":
            break
    assert calls[-1]["call"] == "tied", calls


@pytest.mark.parametrize("members", [2, 3])
def test_order_is_abba_and_no_member_runs_alone_twice_in_a_row(tmp_path, members):
    """ABBA halves (alone first in odd iterations, together first in even
    ones), each member alone once per iteration, and where two alone
    halves meet another member goes first: mirroring the order (1 2 T,
    T 2 1, 1 2 T) put member 1 after itself every other iteration, and a
    run right after the same member's run was twice as slow (BTIO with
    --fsync on ext4), a bimodal "alone" for member 1 only."""
    parts = [(1, "btio", ["--backend", "null", "--grid", "8,8,8", "--dumps", "1"])] * members
    r = mix(members, parts, tmp_path, ["--iterations", "8", "--member-dirs"])
    assert r.rc == 0, r.err
    runs = []  # (iteration, "T" or the member alone), in the order run
    for m, _, it, mode in sections(r.out):
        run_ = (int(it), "T" if mode == "together" else int(m))
        if not runs or runs[-1] != run_ or run_[1] != "T":
            runs.append(run_)
    assert len(runs) == 8 * (members + 1), runs
    for it in range(1, 9):
        mine = [w for i, w in runs if i == it]
        assert sorted(mine, key=str) == sorted([*range(1, members + 1), "T"], key=str), mine
        assert (mine[0] == "T") == (it % 2 == 0), (it, mine)  # ABBA
    seq = [w for _, w in runs]
    assert all(a != b for a, b in zip(seq, seq[1:], strict=False) if a != "T"), seq
    # every member goes first in an alone half as often as the others
    halves = [[w for i, w in runs if i == it and w != "T"] for it in range(1, 9)]
    counts = {m: sum(h[0] == m for h in halves) for m in range(1, members + 1)}
    assert max(counts.values()) - min(counts.values()) <= 1, (counts, halves)


def test_btio_with_e3sm_g_at_8_ranks(tmp_path, built_backends):
    """#43's case: BTIO (4 ranks, MPI-IO, --fsync) with E3SM G (4 ranks,
    PnetCDF) on 8 ranks: each member's own report alone and together, a
    slowdown with its interval per member, every file verified."""
    if "pnetcdf" not in built_backends:
        missing("pnetcdf", "backend not built")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    btio = ["--backend", "mpiio", "--fsync", "--grid", "24,24,24", "--dir", "a", "--verify"]
    e3sm = ["--backend", "pnetcdf", "--generate", "g:cells=1000,procs=4", "-o", "b/g.nc"]
    r = mix(8, [(4, "btio", btio), (4, "e3sm", e3sm + ["--verify", "-k"])], tmp_path)
    assert r.rc == 0, r.err
    assert "mix member 1 btio: ranks 0-3" in r.out and "mix member 2 e3sm: ranks 4-7" in r.out
    seen = set(sections(r.out))
    for it in range(1, 5):
        for mode in ("alone", "together"):
            assert ("1", "btio", str(it), mode) in seen and ("2", "e3sm", str(it), mode) in seen
    # each section is the member's own report: BTIO's and E3SM's own lines
    assert r.out.count("-- BT-IO Benchmark") == 8
    assert set(slowdowns(r.out)) == {1, 2}, r.out[-3000:]
    assert len(re.findall(r"verify: \d+ values checked, 0 mismatches", r.out)) == 16
    assert "mismatches" not in r.out.replace(", 0 mismatches", "")
    rec = r.record
    assert rec["kernel"] == "mix" and rec["status"] == "ok" and rec["nprocs"] == 8
    for m in rec["members"]:
        assert len(m["alone_seconds"]) == len(m["together_seconds"]) == 4
        assert len(m["runs"]) == 8
        for run_ in m["runs"]:
            inner = run_["record"]
            assert inner["kernel"] == m["kernel"] and inner["nprocs"] == 4
            assert inner["verify"]["ok"], inner["verify"]
            checked = [p for p in inner["passes"] if p["op"] == "verify"]
            assert checked and all(
                p["values_mismatched"] == 0 and p["values_checked"] > 0 for p in checked
            )
    # the files are the members' own: BTIO's raw array and a CDF-5 file
    assert (tmp_path / "a" / "btio.mpi").stat().st_size == 24**3 * 5 * 5 * 8
    assert (tmp_path / "b" / "g.nc").read_bytes()[:3] == b"CDF"


def one_error_line(r):
    lines = r.error_lines()
    assert len(lines) == 1, r.err
    return lines[0]


def test_a_bad_member_option_is_one_line_naming_the_member(tmp_path):
    r = mix(
        2,
        [(1, "btio", ["--grid", "8,8,8"]), (1, "ncbench", ["--no-such-option"])],
        tmp_path,
    )
    assert r.rc == 2
    line = one_error_line(r)
    assert line.startswith("iokernels: error: member 2 (ncbench): ") and "--no-such-option" in line
    assert not list(tmp_path.glob("btio*")), "a member wrote before all were checked"


@pytest.mark.parametrize(
    "opts, parts, words",
    [
        ([], [(1, "btio", [])], "two or more members"),
        ([], [(1, "btio", []), (2, "btio", [])], "the parts have 3 ranks in all but the job has 2"),
        (["--start", "0"], [(1, "btio", []), (1, "btio", [])], "1 value for 2 members"),
        (["--iterations", "0"], [(1, "btio", []), (1, "btio", [])], "--iterations 0"),
        ([], [(1, "nokernel", []), (1, "btio", [])], "unknown kernel nokernel"),
        ([], [(1, "btio", []), (1, "abrgen", [])], "abrgen is a tool"),
        ([], [(1, "btio", []), (1, "btio", ["--help"])], "member 2 (btio): --help"),
        (["--grid", "8,8,8"], [(1, "btio", []), (1, "btio", [])], "before the first --part"),
        (
            [],
            [
                (1, "btio", ["--backend", "mpiio"]),
                (1, "btio", ["--backend", "mpiio", "--dir", "."]),
            ],
            "members 1 (btio) and 2 (btio) both write one file: ./btio.mpi (member 1) and "
            "./btio.mpi (member 2) are ",
        ),
    ],
)
def test_bad_mix_options(opts, parts, words, tmp_path):
    r = mix(2, parts, tmp_path, opts)
    assert r.rc == 2
    assert words in one_error_line(r)


def test_a_failing_member_ends_the_mix_and_the_record_keeps_the_others(tmp_path):
    """IOK_FAULT fails member 2's put (rank 1 of the job): its line names
    it, the job ends with 1, and the record keeps member 1's alone run."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    parts = [(1, "btio", ["--backend", "mpiio", "--grid", "16,16,16", "--dir", d]) for d in "ab"]
    r = mix(2, parts, tmp_path, ["--iterations", "2"], env={"IOK_FAULT": "put:1"}, timeout=BOUND)
    assert r.rc == 1
    line = one_error_line(r)
    assert line.startswith("iokernels: error: member 2 (btio): ") and "IOK_FAULT" in line
    rec = r.record
    assert rec["status"] == "failed"
    assert rec["failed"] == {"member": 2, "kernel": "btio", "iteration": 1, "mode": "alone"}
    kept = rec["members"][0]["runs"]
    assert [(k["iteration"], k["mode"]) for k in kept] == [(1, "alone")]
    assert kept[0]["record"]["passes"][0]["bytes"] == 16**3 * 5 * 5 * 8


def rank_pid(job, rank):
    """The pid of the job's rank `rank` (OpenMPI or MPICH's environment)."""
    todo = [job.pid]
    while todo:
        p = subprocess.run(["pgrep", "-P", str(todo.pop())], capture_output=True, text=True)
        for child in map(int, p.stdout.split()):
            todo.append(child)
            try:
                env = Path(f"/proc/{child}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if f"OMPI_COMM_WORLD_RANK={rank}".encode() in env or f"PMI_RANK={rank}".encode() in env:
                if Path(f"/proc/{child}/comm").read_text().strip() == "iokernels":
                    return child
    return None


def test_a_killed_member_rank_ends_the_job_naming_the_member(tmp_path):
    """SIGKILL of one rank of member 2 mid-mix: the job ends (no hang), the
    start-up lines map the rank to its member, the member's surviving rank
    names it, and the record keeps the runs done before ("incomplete")."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    json_path = tmp_path / "mix.jsonl"
    args = ["mix", "--iterations", "50", "--json", str(json_path)]
    args += ["--part", "1:btio", "--backend", "mpiio", "--grid", "16,16,16", "--dir", "a"]
    args += ["--part", "2:e3sm", "--backend", "mpiio", "--generate", "g:cells=2000,procs=2"]
    args += ["-o", "b/g.nc"]
    job = subprocess.Popen(
        [str(MPIEXEC), "-n", "3", str(BIN), *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    t0 = time.monotonic()
    while time.monotonic() - t0 < 30:  # until some runs are in the record
        time.sleep(0.5)
        if json_path.exists() and '"together"' in json_path.read_text():
            break
    victim = rank_pid(job, 2)
    assert victim, "rank 2 did not start"
    os.kill(victim, signal.SIGKILL)
    try:
        out, err = job.communicate(timeout=BOUND)
    except subprocess.TimeoutExpired:
        job.kill()
        pytest.fail(f"the job still ran {BOUND} s after a rank was killed")
    assert job.returncode != 0
    assert "mix member 2 e3sm: ranks 1-2 of the job" in out
    assert "rank 2" in err or "member 2 (e3sm): terminated" in err, err
    rec = json.loads(json_path.read_text().splitlines()[-1])
    assert rec["status"] == "incomplete"
    assert all(m["runs"] for m in rec["members"]), "the runs done before the kill are kept"


def test_start_offset_moves_the_aggressor_out_of_the_victims_window(tmp_path):
    """Two like members: started together, each moves bytes inside the
    other's windows; the second started 10 s later (far past the first's
    run), neither does."""

    def parts(v, a):
        (tmp_path / v).mkdir()
        (tmp_path / a).mkdir()
        like = ["--backend", "mpiio", "--grid", "96,96,96", "--dumps", "10", "--dir"]
        return [(1, "btio", [*like, v]), (1, "btio", [*like, a])]

    apart = mix(2, parts("a", "b"), tmp_path, ["--iterations", "1", "--start", "0,10"])
    assert apart.rc == 0, apart.err
    first, second = apart.record["members"]
    assert first["start_seconds"] == 0 and second["start_seconds"] == 10
    assert first["overlap"][0]["bytes_inside_its_windows"] == 0
    assert second["overlap"][0]["bytes_inside_its_windows"] == 0
    assert "untested" in apart.out  # one iteration: no interval
    same = mix(2, parts("c", "d"), tmp_path, ["--iterations", "1", "--start", "0,0"])
    assert same.rc == 0, same.err
    for m in same.record["members"]:
        assert 0 < m["overlap"][0]["bytes_inside_its_windows"] <= m["together_bytes"], m


def test_a_traced_application_is_a_member(tmp_path):
    """#43 item 3: a replay file (here BTIO's own, exported) as one member,
    BTIO as the other, each in its own folder (--member-dirs): both write
    and verify their files."""
    exported = run(
        1,
        ["btio", "--backend", "mpiio", "--grid", "16,16,16", "--export-replay", "bt.replay"],
        tmp_path,
    )
    assert exported.rc == 0, exported.err
    (tmp_path / "btio.mpi").unlink()
    replay = ["--backend", "mpiio", str(tmp_path / "bt.replay"), "--verify"]
    btio = ["--backend", "mpiio", "--grid", "16,16,16", "--verify"]
    r = mix(2, [(1, "replay", replay), (1, "btio", btio)], tmp_path, ["--member-dirs"])
    assert r.rc == 0, r.err
    assert ("1", "replay", "4", "together") in set(sections(r.out))
    assert set(slowdowns(r.out)) == {1, 2}
    for m in r.record["members"]:
        assert all(run_["record"]["verify"]["ok"] for run_ in m["runs"]), m["kernel"]
    size = 16**3 * 5 * 5 * 8
    assert (tmp_path / "member1" / "btio.mpi").stat().st_size == size
    assert (tmp_path / "member2" / "btio.mpi").stat().st_size == size


def test_mix_help_names_its_options(tmp_path):
    r = run_plain(1, ["mix", "--help"], tmp_path)
    assert r.rc == 0
    for opt in ("--part N1:KERNEL", "--iterations N", "--start S1", "--member-dirs", "--json"):
        assert opt in r.out, opt
