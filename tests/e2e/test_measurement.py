# SPDX-License-Identifier: BSD-3-Clause
"""Measurement you can trust (issue 8), checked through BTIO: iterations,
the null backend's empty timed regions, OS byte accounting, cache dropping
as root and not, shifted reads, and the ceiling probe."""

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import pytest
from conftest import BIN, MPIEXEC, REPO, SHIPPED, check_record, run, run_plain
from declared import missing

SMALL = ["--grid", "32,32,32", "--dumps", "2"]


def test_null_backend_calls_take_no_time(tmp_path):
    r = run(4, ["btio", *SMALL, "--backend", "null", "--iterations", "5"], tmp_path)
    assert r.rc == 0, r.err
    # each rank's own time per call: nothing but the (empty) call. The best
    # of the iterations is judged: 4 ranks on a loaded 2-core machine may
    # lose a scheduler tick (4 ms) inside any one timed region, never in all
    per_call = {}
    for p in r.record["passes"]:
        for name, ph in p["phases"].items():
            if ph["io"]:
                per_call.setdefault(name, []).append(ph["rank_seconds"]["max"] / ph["count"])
    assert per_call
    for name, seconds in per_call.items():
        assert len(seconds) == 5 and min(seconds) < 1e-3, (name, seconds)


@pytest.mark.parametrize(
    "backend",
    [["--method", "0"], ["--method", "3"], ["--backend", "hdf5"], ["--backend", "netcdf4"]],
    ids=["mpiio", "pnetcdf", "hdf5", "netcdf4"],
)
def test_os_counts_the_bytes_the_kernel_wrote(tmp_path, built_backends, backend):
    if backend[0] == "--backend" and backend[1] not in built_backends:
        missing(backend[1], "backend not built")
    r = run(4, ["btio", "--grid", "64,64,64", "--dumps", "2", *backend], tmp_path)
    assert r.rc == 0, r.err
    p = r.record["passes"][0]
    kernel, os_bytes = p["bytes"], p["os_bytes"]["write_bytes"]
    assert kernel == 64**3 * 5 * 8 * 2
    # the file's header and page alignment are all the OS may add
    assert 0 <= os_bytes - kernel <= 256 * 1024, (kernel, os_bytes)
    assert p["os_bytes"]["wchar"] >= kernel


def test_iterations_each_recorded_with_ior_statistics(tmp_path):
    r = run(4, ["btio", *SMALL, "--iterations", "3", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    rec = r.record
    writes = [p for p in rec["passes"] if p["op"] == "write"]
    assert [p["iteration"] for p in writes] == [0, 1, 2]
    assert len([p for p in rec["passes"] if p["op"] == "verify"]) == 3
    mibs = [p["bytes"] / p["io_seconds"] / 2**20 for p in writes]
    times = [p["io_seconds"] for p in writes]
    w = rec["iterations"]["write"]
    assert w["iterations"] == 3
    bw, t = w["bandwidth_mib_s"], w["io_seconds"]
    assert bw["median"] == pytest.approx(statistics.median(mibs))
    assert bw["min"] == pytest.approx(min(mibs)) and bw["max"] == pytest.approx(max(mibs))
    assert bw["mean"] == pytest.approx(statistics.mean(mibs))
    # IOR's standard deviation: over the N values, divided by N
    assert bw["stddev"] == pytest.approx(statistics.pstdev(mibs))
    assert t["mean"] == pytest.approx(statistics.mean(times))
    assert t["stddev"] == pytest.approx(statistics.pstdev(times))
    # IOR's summary line, then its table
    m = re.search(r"^Max Write: ([0-9.]+) MiB/sec \(([0-9.]+) MB/sec\)$", r.out, re.M)
    assert m, r.out
    assert float(m.group(1)) == pytest.approx(max(mibs), abs=0.006)
    assert float(m.group(2)) == pytest.approx(max(mibs) * 2**20 / 1e6, abs=0.006)
    assert re.search(r"^Max Verify: [0-9.]+ MiB/sec", r.out, re.M)
    head = next(line for line in r.out.splitlines() if line.startswith("Operation"))
    assert head.split()[:6] == [
        "Operation",
        "Max(MiB)",
        "Min(MiB)",
        "Mean(MiB)",
        "StdDev",
        "Median(MiB)",
    ]
    row = next(line for line in r.out.splitlines() if line.startswith("write "))
    f = row.split()
    assert float(f[1]) == pytest.approx(max(mibs), abs=0.006)
    assert float(f[4]) == pytest.approx(statistics.pstdev(mibs), abs=0.006)
    assert f[-2:] == ["4", "3"]


def test_span_is_the_headline_time(tmp_path):
    r = run(4, ["btio", *SMALL, "--backend", "mpiio"], tmp_path)
    assert r.rc == 0, r.err
    rec = r.record
    p = rec["passes"][0]
    assert p["io_seconds"] == p["span_seconds"] > 0
    s = p["span_rank_seconds"]
    assert 0 < s["min"] <= s["avg"] <= s["max"] <= p["span_seconds"] * 1.0001
    # the job span holds every I/O phase of every rank
    io = [v["rank_seconds"]["max"] for v in p["phases"].values() if v["io"]]
    assert p["span_seconds"] >= max(io)
    assert p["io_phase_sum_seconds"] > 0
    assert p["bandwidth_mib_s"] == pytest.approx(p["bytes"] / p["span_seconds"] / 2**20)
    assert rec["barriers"] == "pass"  # BTIO's original: one barrier, before the open
    assert p["steps_done"] == p["steps_planned"] and p["stonewalled"] is False
    assert "time = open->close span" in r.out and "(barriers: pass)" in r.out
    # raw beside adjusted: the adjusted span is the raw one less at most what
    # the rank that did least of the suite's work did
    raw, suite = p["span_open_close_seconds"], p["span_suite_rank_seconds"]["min"]
    assert 0 <= raw - p["span_seconds"] <= suite + 1e-9, (raw, p["span_seconds"], suite)
    head = next(line for line in r.out.splitlines() if line.startswith("write "))
    assert f"in {p['span_seconds']:.4f} s (adjusted span)" in head, head
    assert f"raw open->close span {raw:.4f} s" in r.out


@pytest.mark.parametrize("mode", ["phase", "pass", "none"])
def test_barriers_option(tmp_path, mode):
    r = run(4, ["btio", *SMALL, "--barriers", mode, "--verify"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["barriers"] == mode and r.record["verify"]["ok"] is True


def test_barriers_default_is_the_originals_and_help_says_so(tmp_path):
    h = run_plain(1, ["btio", "--help"], tmp_path)
    assert "barriers: pass by default for btio" in h.out
    assert "phase|pass|none" in h.out
    h = run_plain(1, ["e3sm", "--help"], tmp_path)
    assert "barriers: phase by default for e3sm" in h.out
    bad = run_plain(1, ["btio", *SMALL, "--barriers", "sometimes"], tmp_path)
    assert bad.rc == 2 and "--barriers" in bad.err


def test_deadline_stonewalls_and_verify_checks_what_was_written(tmp_path):
    # one dump at least; then the deadline (1 microsecond) stops the pass
    r = run(
        4,
        ["btio", "--grid", "24,24,24", "--dumps", "5", "--deadline", "1e-6", "--verify"],
        tmp_path,
    )
    assert r.rc == 0, r.err
    rec = r.record
    w = next(p for p in rec["passes"] if p["op"] == "write")
    v = next(p for p in rec["passes"] if p["op"] == "verify")
    assert w["stonewalled"] is True and w["steps_planned"] == 5
    assert w["steps_done"] == 1 and w["bytes"] == 24**3 * 5 * 8
    assert v["steps_done"] == 1 and v["values_checked"] == 24**3 * 5 and v["values_mismatched"] == 0
    assert rec["deadline_seconds"] == pytest.approx(1e-6)
    assert "stonewalled: --deadline 1e-06 s stopped the pass after 1 of 5 steps" in r.out


def test_deadline_must_not_be_negative(tmp_path):
    r = run_plain(1, ["btio", *SMALL, "--deadline", "-1"], tmp_path)
    assert r.rc == 2 and "--deadline" in r.err


def test_iterations_must_be_positive(tmp_path):
    r = run_plain(1, ["btio", *SMALL, "--iterations", "0"], tmp_path)
    assert r.rc == 2 and "--iterations takes at least 1" in r.err


def test_drop_caches_as_root(tmp_path):
    if os.geteuid() != 0:
        missing("root", "dropping the page cache needs root")
    assert run(4, ["btio", *SMALL], tmp_path).rc == 0
    r = run(4, ["btio", *SMALL, "--mode", "read", "--drop-caches", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    how = r.record["passes"][0]["cache_drop_method"]
    assert how in ("drop_caches", "fadvise (drop_caches refused)")
    assert f"page cache dropped before the read: {how}" in r.out


def test_drop_caches_as_a_user(tmp_path):
    if os.geteuid() != 0 or not shutil.which("runuser"):
        missing("root", "becoming another user needs root and runuser")
    work = tempfile.mkdtemp(prefix="iok-nobody-")  # a directory nobody can use
    try:
        os.chmod(work, 0o777)
        assert run(1, ["btio", *SMALL, "--dir", work], tmp_path).rc == 0
        os.chmod(os.path.join(work, "btio.nc"), 0o644)
        cmd = ["runuser", "-u", "nobody", "--", str(MPIEXEC), "-n", "1", str(BIN), "btio"]
        cmd += [*SMALL, "--mode", "read", "--drop-caches", "--verify", "--dir", work]
        cmd += ["--json", os.path.join(work, "r.jsonl")]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=work)
        assert p.returncode == 0, p.stderr
        rec = json.loads(open(os.path.join(work, "r.jsonl")).read().splitlines()[-1])
        check_record(rec)
        assert rec["passes"][0]["cache_drop_method"] == "fadvise (not root)"
        assert rec["verify"]["ok"]
    finally:
        shutil.rmtree(work)


def test_shifted_reads_verify(tmp_path):
    assert run(4, ["btio", *SMALL], tmp_path).rc == 0
    r = run(4, ["btio", *SMALL, "--mode", "read", "--shift-ranks", "1", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["verify"]["ok"]
    assert r.record["options"]["core"]["shift-ranks"] == 1


def _check_ceiling(p, out, samples):
    """A pass's ceiling: every sample recorded, the best is the ceiling, the
    fraction against it, and a run above it flagged with its reason in the
    record and the report."""
    c = p["ceiling"]
    writing = p["op"] == "write"
    got = c["write_samples_mib_s"] if writing else c["read_samples_mib_s"]
    best = c["write_bandwidth_mib_s"] if writing else c["read_bandwidth_mib_s"]
    assert c["samples"] == samples and len(got) == samples and min(got) > 0
    assert best == max(got)
    assert abs(c["fraction"] - p["bandwidth_mib_s"] / best) < 1e-6 * c["fraction"]
    assert c["above"] is (c["fraction"] > 1.02)
    assert ("reason" in c) is c["above"]
    if c["above"]:
        assert "ABOVE ITS CEILING" in out and c["reason"] in out


@pytest.mark.parametrize(
    "extra, kind",
    [([], "cached"), (["--drop-caches", "--fsync"], "storage")],
    ids=["cached-read", "storage-read"],
)
def test_ceiling_samples_of_the_runs_kind(tmp_path, extra, kind):
    """Writes against writes of the same durability, reads against reads of
    the same kind: through the page cache, or past it after --drop-caches."""
    args = ["btio", "--grid", "32,32,32", "--dumps", "2", "--verify", "--ceiling", *extra]
    r = run(4, [*args, "--ceiling-samples", "4"], tmp_path)
    assert r.rc == 0, r.err
    w, v = r.record["passes"]
    assert w["ceiling"]["write_fsync"] is ("--fsync" in extra)
    assert w["ceiling"]["read_kind"] == "none" and w["ceiling"]["read_samples_mib_s"] == []
    assert v["ceiling"]["read_kind"] == kind
    for p in (w, v):
        _check_ceiling(p, r.out, 4)
    assert "best of 4 contiguous MPI-IO writes, " + ("synced" if extra else "buffered") in r.out
    words = (
        "reads through the page cache" if kind == "cached" else "reads from storage (pages dropped)"
    )
    assert v["ceiling"]["direct_read"] is False  # O_DIRECT: `iokernels ceiling` only
    assert f"best of 4 contiguous {words} of the same bytes" in r.out
    # the probe's files are its own, and gone
    assert not list(tmp_path.glob("*.ceiling*"))


def test_ceiling_samples_out_of_range(tmp_path):
    r = run_plain(1, ["btio", "--grid", "8,8,8", "--ceiling", "--ceiling-samples", "0"], tmp_path)
    assert r.rc == 2
    assert "--ceiling-samples takes 1 to 16, not '0'" in r.err


def test_ceiling_command(tmp_path):
    r = run(2, ["ceiling", "--size", "8m", "--dir", str(tmp_path)], tmp_path)
    assert r.rc == 0, r.err
    for label in ["write (MPI-IO, buffered)", "write + fsync", "read (page cache)"]:
        assert label in r.out
    rec = r.record
    assert rec["kernel"] == "ceiling" and rec["bytes"] == 8 * 1024 * 1024
    assert rec["bandwidth_mib_s"]["write"] > 0 and rec["bandwidth_mib_s"]["write_fsync"] > 0
    assert not list(tmp_path.glob("iokernels.ceiling*"))


def test_ceiling_command_bad_size(tmp_path):
    r = run_plain(2, ["ceiling", "--size", "lots"], tmp_path)
    assert r.rc == 2 and "--size takes an integer" in r.err


def test_progress_line_only_when_asked(tmp_path):
    quiet = run(4, ["btio", *SMALL], tmp_path)  # stderr is a pipe: no progress
    assert quiet.rc == 0 and "record" not in quiet.err
    cmd = [str(MPIEXEC), "-n", "4", str(BIN), "btio", *SMALL, "--overwrite"]
    env = {**os.environ, "IOK_PROGRESS": "1"}
    p = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    assert "write ./btio.nc: record 2 of 2" in p.stderr
    assert p.stderr.count("record 1 of 2") == 1  # rank 0 only


def test_peak_memory_of_the_whole_process(tmp_path):
    """Each pass resets VmHWM; the process's peak over all passes (what
    /usr/bin/time misses) is kept too, in the report and the record."""
    r = run(4, ["btio", *SMALL, "--iterations", "2", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    rec = r.record
    whole = rec["peak_rss_process_bytes"]
    assert 0 < whole["min"] <= whole["avg"] <= whole["max"]
    for p in rec["passes"]:
        assert p["peak_rss_process_bytes"]["max"] >= p["peak_rss_bytes"]["max"]
        assert whole["max"] >= p["peak_rss_process_bytes"]["max"]
    assert rec["passes"][-1]["peak_rss_process_bytes"] == whole
    assert whole["max"] >= max(p["peak_rss_bytes"]["max"] for p in rec["passes"])
    mib = whole["max"] / 2**20
    line = next(ln for ln in r.out.splitlines() if ln.startswith("peak memory of the process"))
    assert f"max {mib:.1f} (whole run; /usr/bin/time sees only the last pass's" in line


def _functions(text):
    """Top-level C function bodies of a file, by name."""
    heads = list(re.finditer(r"^([A-Za-z_][A-Za-z_0-9]*)\(", text, re.M))
    return {
        m.group(1): text[m.start() : heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        for i, m in enumerate(heads)
    }


def test_no_backend_agrees_inside_xfer_or_wait():
    """Agreement belongs to the core, once per step and untimed: nothing that
    a transfer (xfer, either direction) or wait reaches in a backend calls
    an MPI collective."""
    collectives = re.compile(r"\bMPI_(Allreduce|Allgather|Allgatherv|Bcast|Barrier|Reduce)\b")
    for src in sorted((REPO / "src" / "backends").glob("*.c")):
        text = src.read_text()
        funcs = _functions(text)
        todo = [
            m.group(2)
            for m in re.finditer(r"\.(xfer|wait|prepare)\s*=\s*(\w+)", text)
            if m.group(2) in funcs
        ]
        assert todo, f"{src.name}: no xfer/wait found"
        seen = set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            body = funcs[name]
            assert not collectives.search(body), f"{src.name}: {name} calls an MPI collective"
            todo += [c for c in re.findall(r"\b(\w+)\(", body) if c in funcs and c != name]


def test_e3sm_without_rearranger_times_no_exchange(tmp_path):
    r = run(4, ["e3sm", "-k", "-o", "g.nc", str(SHIPPED / "e3sm" / "map_g_case_16p.nc")], tmp_path)
    assert r.rc == 0, r.err
    phases = r.record["passes"][0]["phases"]
    assert "exchange" not in phases and phases["post"]["count"] == 1
    b = run(
        4,
        [
            "e3sm",
            "-k",
            "-o",
            "b.nc",
            "--rearrange",
            "box",
            str(SHIPPED / "e3sm" / "map_g_case_16p.nc"),
        ],
        tmp_path,
    )
    assert b.rc == 0, b.err
    assert b.record["passes"][0]["phases"]["exchange"]["count"] == 1


@pytest.mark.parametrize("bind", [True, False])
def test_bench_originals_table_with_a_stand_in_original(tmp_path, bind):
    """bench/originals with iokernels standing in for BTIO (it prints the
    original's report lines): one row per case with the medians, the fastest
    runs and their ratios, the runs listed, the placement and the MPI-IO
    layer named."""
    stand_in = tmp_path / "btio"
    stand_in.write_text(f'#!/bin/sh\nexec "{BIN}" btio "$@"\n')
    stand_in.chmod(0o755)
    cmd = [sys.executable, str(REPO / "bench" / "originals"), "--no-env", "--btio", str(stand_in)]
    cmd += ["--ranks", "4"]  # whatever the cores (the default: the counts that fit them)
    cmd += ["--bin", str(BIN), "--pairs", "2", "--only", "BTIO 4 ranks, method 0", "--dir"]
    cmd += [str(tmp_path / "work")] + ([] if bind else ["--no-bind"])
    # an OMPIO algorithm chosen outside the bench reaches both sides and is named
    env = {**os.environ, "OMPI_MCA_fcoll": "two_phase"}
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    num = r"\s+([0-9.]+)"
    # 4 ranks on fewer usable cores: the row says so, in the records' words
    cores = len(os.sched_getaffinity(0))
    over = f" oversubscribed (4 ranks on {cores} core{'s' if cores != 1 else ''})"
    over = re.escape(over) if cores < 4 else ""
    row = re.search(r"^BTIO 4 ranks, method 0, 128\^3 x 3" + num * 8 + over + "$", p.stdout, re.M)
    assert row, p.stdout
    to, t, ratio, bo, b, bratio, ro, r = (float(x) for x in row.groups())
    assert ratio == pytest.approx(t / to, abs=0.01) and bratio == pytest.approx(b / bo, abs=0.01)
    assert bo <= to and b <= t and ro > 1 and r > 1
    runs = re.search(r"runs, s: original ([0-9.]+) ([0-9.]+); ours ([0-9.]+) ([0-9.]+)", p.stdout)
    assert runs, p.stdout
    o1, o2, u1, u2 = (float(x) for x in runs.groups())
    assert bo == pytest.approx(min(o1, o2), abs=0.006) and b == pytest.approx(
        min(u1, u2), abs=0.006
    )
    placement = re.search(r"^placement, both sides: (.*)$", p.stdout, re.M)
    assert placement, p.stdout
    version = subprocess.run(["mpiexec", "--version"], capture_output=True, text=True)
    openmpi = re.search(r"open mpi|openrte", version.stdout + version.stderr, re.I)
    want = (
        "--bind-to core:overload-allowed --map-by core"
        if bind and openmpi and os.environ.get("MPIEXEC", "mpiexec") == "mpiexec"
        else "the launcher default"
    )
    assert placement.group(1) == want
    layer = re.search(r"^MPI-IO layer, both sides: (.*)$", p.stdout, re.M)
    assert layer, p.stdout
    if openmpi:
        # the sharedfp setting iokernels makes, given to the originals too
        want = "OpenMPI io ompio, fcoll two_phase, sharedfp ^lockedfile,individual; fbtl"
        assert layer.group(1).startswith(want), layer.group(1)
    else:
        assert layer.group(1) == "ROMIO (the MPI library has no other)"


def test_bench_originals_ours_extra_adds_a_row_run_with_them(tmp_path):
    """--ours-extra ARGS: each row of ours again with ARGS appended, as a
    row of its own whose JSON record shows they held (issue 40's
    comparison: --agree-every 1000000 beside the default); ARGS that
    iokernels refuses make that row fail and the bench exit 1."""
    stand_in = tmp_path / "btio"
    stand_in.write_text(f'#!/bin/sh\nexec "{BIN}" btio "$@"\n')
    stand_in.chmod(0o755)
    cmd = [sys.executable, str(REPO / "bench" / "originals"), "--no-env", "--btio", str(stand_in)]
    cmd += ["--ranks", "4"]
    cmd += ["--bin", str(BIN), "--pairs", "1", "--only", "BTIO 4 ranks, method 1, 128", "--dir"]
    cmd += [str(tmp_path / "work")]
    p = subprocess.run([*cmd, "--ours-extra", "--agree-every 1000000"], capture_output=True,
                       text=True, timeout=300)  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    name = r"^BTIO 4 ranks, method 1, 128\^3 x 3"
    num = r"\s+[0-9.]+" * 8 + r"(?: oversubscribed \(4 ranks on \d+ cores?\))?"
    assert re.search(name + num + "$", p.stdout, re.M), p.stdout
    assert re.search(name + " --agree-every 1000000" + num + "$", p.stdout, re.M), p.stdout
    every = re.findall(r"^  record, write pass: adjusted [0-9.]+ s .*agree_every_steps (\d+)$",
                       p.stdout, re.M)  # fmt: skip
    assert every == ["1", "1000000"], p.stdout
    bad = subprocess.run([*cmd, "--ours-extra", "--agree-every 0"], capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "iokernels failed: BTIO 4 ranks, method 1, 128^3 x 3 --agree-every 0" in bad.stdout


def test_values_once_writes_the_first_records_values_again(tmp_path):
    """--values once: every record holds the first record's values (the
    originals' buffer written again), generated once: a read expecting fresh
    values finds every other record wrong, a read with --values once on
    another rank count verifies, and the record says which values ran."""
    geom = ["-d", "5:16:16:8", "-f", "t.nc"]
    w = run(4, ["ncbench", *geom, "-w", "--values", "once", "--verify"], tmp_path)
    assert w.rc == 0, w.err
    assert w.record["options"]["core"]["values"] == "once" and w.record["verify"]["ok"]
    assert "(--values once: every record the first's)" in w.out
    fresh = run(4, ["ncbench", *geom, "-r", "--verify"], tmp_path)
    assert fresh.rc != 0
    n = 5 * 16 * 16 * 8
    want = f"verify failed: {n * 4 // 5} of {n} values differ in t.nc; first: data[1]"
    assert any(want in line for line in fresh.error_lines()), fresh.err
    again = run(2, ["ncbench", *geom, "-r", "--verify", "--values", "once", "-p", "2"], tmp_path)
    assert again.rc == 0 and again.record["verify"]["ok"], again.err


def test_values_once_on_a_record_variable(tmp_path):
    """BTIO's 5-D record variable: its dumps hold the first dump's values."""
    w = run(4, ["btio", *SMALL, "--values", "once", "--verify"], tmp_path)
    assert w.rc == 0 and w.record["verify"]["ok"], w.err
    fresh = run(4, ["btio", *SMALL, "--mode", "read", "--verify"], tmp_path)
    assert fresh.rc != 0
    assert any("verify failed" in line for line in fresh.error_lines()), fresh.err
    checked = re.search(r"verify failed: (\d+) of (\d+) values differ", fresh.err)
    assert checked and int(checked.group(1)) * 2 == int(checked.group(2)), fresh.err


def test_values_once_is_no_replay_export(tmp_path):
    args = [
        "btio",
        *SMALL,
        "--backend",
        "mpiio",
        "--values",
        "once",
        "--export-replay",
        "bt.replay",
    ]
    r = run_plain(4, args, tmp_path)
    assert r.rc != 0
    assert r.error_lines() == [
        "iokernels: error: --export-replay describes each record's own values: drop --values once"
    ], r.err
    assert not (tmp_path / "bt.replay").exists()
