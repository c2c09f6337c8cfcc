"""Measurement you can trust (issue 8), checked through BTIO: iterations,
the null backend's empty timed regions, OS byte accounting, cache dropping
as root and not, shifted reads, and the ceiling probe."""

import json
import os
import shutil
import statistics
import subprocess
import tempfile

import pytest
from conftest import BIN, MPIEXEC, check_record, run, run_plain

SMALL = ["--grid", "32,32,32", "--dumps", "2"]


def test_null_backend_calls_take_no_time(tmp_path):
    r = run(4, ["btio", *SMALL, "--backend", "null", "--iterations", "3"], tmp_path)
    assert r.rc == 0, r.err
    for p in r.record["passes"]:
        for name, ph in p["phases"].items():
            if ph["io"]:  # each rank's own time per call: nothing but the (empty) call
                assert ph["rank_seconds"]["max"] / ph["count"] < 1e-3, (name, ph)


@pytest.mark.parametrize(
    "backend",
    [["--method", "0"], ["--method", "3"], ["--backend", "hdf5"], ["--backend", "netcdf4"]],
    ids=["mpiio", "pnetcdf", "hdf5", "netcdf4"],
)
def test_os_counts_the_bytes_the_kernel_wrote(tmp_path, built_backends, backend):
    if backend[0] == "--backend" and backend[1] not in built_backends:
        pytest.skip("not built")
    r = run(4, ["btio", "--grid", "64,64,64", "--dumps", "2", *backend], tmp_path)
    assert r.rc == 0, r.err
    p = r.record["passes"][0]
    kernel, os_bytes = p["bytes"], p["os_bytes"]["write_bytes"]
    assert kernel == 64**3 * 5 * 8 * 2
    # the file's header and page alignment are all the OS may add
    assert 0 <= os_bytes - kernel <= 256 * 1024, (kernel, os_bytes)
    assert p["os_bytes"]["wchar"] >= kernel


def test_iterations_each_recorded_with_median(tmp_path):
    r = run(4, ["btio", *SMALL, "--iterations", "3", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    rec = r.record
    writes = [p for p in rec["passes"] if p["op"] == "write"]
    assert [p["iteration"] for p in writes] == [0, 1, 2]
    assert len([p for p in rec["passes"] if p["op"] == "verify"]) == 3
    bws = [p["bandwidth_mib_s"] for p in writes]
    spread = rec["iterations"]["write"]["bandwidth_mib_s"]
    assert spread["median"] == pytest.approx(statistics.median(bws))
    assert spread["min"] == pytest.approx(min(bws)) and spread["max"] == pytest.approx(max(bws))
    assert "write  over 3 iterations: bandwidth MiB/s min" in r.out


def test_iterations_must_be_positive(tmp_path):
    r = run_plain(1, ["btio", *SMALL, "--iterations", "0"], tmp_path)
    assert r.rc == 2 and "--iterations must be at least 1" in r.err


def test_drop_caches_as_root(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root")
    assert run(4, ["btio", *SMALL], tmp_path).rc == 0
    r = run(4, ["btio", *SMALL, "--mode", "read", "--drop-caches", "--verify"], tmp_path)
    assert r.rc == 0, r.err
    how = r.record["passes"][0]["cache_drop_method"]
    assert how in ("drop_caches", "fadvise (drop_caches refused)")
    assert f"page cache dropped before the read: {how}" in r.out


def test_drop_caches_as_a_user(tmp_path):
    if os.geteuid() != 0 or not shutil.which("runuser"):
        pytest.skip("needs root to become another user")
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


def test_ceiling_flags_reads_faster_than_the_device(tmp_path):
    r = run(4, ["btio", "--grid", "64,64,64", "--dumps", "2", "--verify", "--ceiling"], tmp_path)
    assert r.rc == 0, r.err
    w, v = r.record["passes"]
    assert w["ceiling"]["write_bandwidth_mib_s"] > 0
    c = v["ceiling"]
    if c["direct_read"]:
        assert c["read_bandwidth_mib_s"] > 0
        suspect = v["bandwidth_mib_s"] > 1.1 * c["read_bandwidth_mib_s"]
        assert v["page_cache_suspect"] is suspect
        assert ("probably served from the page cache" in r.out) is suspect


def test_ceiling_command(tmp_path):
    r = run(2, ["ceiling", "--size", "8m", "--dir", str(tmp_path)], tmp_path)
    assert r.rc == 0, r.err
    for label in ["write (MPI-IO, buffered)", "write + fsync", "read (page cache)"]:
        assert label in r.out
    rec = r.record
    assert rec["kernel"] == "ceiling" and rec["bytes"] == 8 * 1024 * 1024
    assert rec["bandwidth_mib_s"]["write"] > 0 and rec["bandwidth_mib_s"]["write_fsync"] > 0
    assert not list(tmp_path.glob("iokernels.ceiling"))


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
    /usr/bin/time sees) is kept too, in the report and the record."""
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
    assert f"max {mib:.1f} (all passes, as /usr/bin/time sees it)" in line
