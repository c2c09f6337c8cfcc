# SPDX-License-Identifier: BSD-3-Clause
"""--compute and --async on every kernel (issue 52; BTIO's own cases are in
test_compute_async.py): NetCDF-Bench, AMReX, E3SM G and F (F writes two
files, h0 and h1) and the replay write with a computation after each step,
each step posted and held through it, on mpiio, pnetcdf and adios2, and
--verify reads every value back; hdf5 and netcdf4 compute synchronously and
refuse --async in one line. A replay's traced gaps as its computation
(--compute traced): the record's computation is the trace's gaps."""

import pytest
from conftest import SHIPPED, need, run

MAP_G = SHIPPED / "e3sm" / "map_g_case_16p.nc"
MAP_F = SHIPPED / "e3sm" / "map_f_case_16p.nc"
SMALL = SHIPPED / "replay" / "small.replay"

# The smallest runs of the kernels' own tests, at 2 ranks: several write
# steps where the kernel has them (NetCDF-Bench's time steps, E3SM's -r 2
# records, the replay's operations) so that a held step meets the next
# step's wait, and several files per run (AMReX's particles, E3SM F's h0
# and h1, the replay's two traced files).
KERNELS = {
    "ncbench": ["ncbench", "-n=1", "-p=2", "-d", "4:8:12:3", "-w"],
    "amrex": ["amrex", "--ncells", "16", "--max_grid_size", "8", "--ncomp", "1", "--nlevs", "2"]
    + ["--nppc", "1", "--particles"],
    "e3sm-G": ["e3sm", "-r", "2", "-o", "g.nc", str(MAP_G)],
    "e3sm-F": ["e3sm", "-r", "2", "-o", "f.nc", str(MAP_F)],
    # F's h1 alone (-f 1): F h0 is 17 MB in ~400 variables, 5 to 10 s a run here
    "e3sm-F-h1": ["e3sm", "-r", "2", "-f", "1", "-o", "f.nc", str(MAP_F)],
    # small.replay traces 4 ranks: folded onto 2 (trace ranks 0 and 2 on rank 0)
    "replay": ["replay", str(SMALL), "--ranks-from-trace", "fold"],
}
COMPUTE = "0.01"


def write_passes(rec):
    return [p for p in rec["passes"] if p["op"] == "write"]


def assert_verified(r):
    assert r.rc == 0, r.err[-2000:]
    v = r.record["verify"]
    assert v["ok"] is True and v["values_mismatched"] == 0, v
    assert v["values_checked"] > 0, v


# E3SM F's h0 and h1 (two files, each its own pass) on pnetcdf, the
# original's library, and adios2 (a BP directory each, steps per record);
# on mpiio F h1 alone, to keep the file's time down (h0 is F's large file)
ASYNC = [
    (k, b)
    for b in ("mpiio", "pnetcdf", "adios2")
    for k in KERNELS
    if k != ("e3sm-F" if b == "mpiio" else "e3sm-F-h1")
]


@pytest.mark.parametrize("kernel,backend", ASYNC, ids=[f"{k}-{b}" for k, b in ASYNC])
def test_async_verify_on_every_kernel(tmp_path, built_backends, kernel, backend):
    """Each write pass computes after each of its steps, holds a step's
    buffers until its wait (pending_bytes_max > 0: some rank held a posted
    step), and the files read back equal."""
    need(backend, built_backends)
    args = [*KERNELS[kernel], "--backend", backend, "--compute", COMPUTE, "--async", "--verify"]
    r = run(2, args, tmp_path, timeout=120)
    assert_verified(r)
    rec = r.record
    assert rec["api"] == "nonblocking" and rec["options"]["core"]["async"] is True
    passes = write_passes(rec)
    assert passes
    for p in passes:
        posts = p["phases"]["post"]["count"]
        assert posts >= 1, p["phases"]
        # one computation after each of the application's steps (a replay's
        # fill of bytes it reads but never writes is the suite's, not one)
        assert p["phases"]["compute"]["count"] == posts, (p["path"], p["phases"])
        assert p["compute_seconds"]["min"] >= posts * float(COMPUTE), p["compute_seconds"]
        assert p["exposed_io_seconds"]["max"] > 0
        assert p["io_window_seconds"]["max"] >= p["exposed_io_seconds"]["max"]
        assert p["pending_bytes_max"] > 0, p["path"]
        assert p["phases"]["wait"]["count"] == posts
    if kernel == "e3sm-F":  # h0 and h1, each its own pass
        assert sorted(p["path"] for p in passes) == ["f_h0.nc", "f_h1.nc"], passes
    if kernel == "amrex":
        assert len(passes) == 2  # the plotfile and its particles


# netcdf4 makes one library call per subarray: E3SM F takes minutes on it
# (168 s at 2 ranks, measured), so F runs synchronously on hdf5 only, its
# h1 alone (h0 is F's large file; the async cases above write it)
SYNC = [(k, b) for b in ("hdf5", "netcdf4") for k in KERNELS if k != "e3sm-F"]
SYNC.remove(("e3sm-F-h1", "netcdf4"))
REFUSED = {
    "hdf5": "--async: the hdf5 backend has no asynchronous write (HDF5 1.10 has no "
    "asynchronous VOL): run without --async",
    "netcdf4": "--async: the netcdf4 backend has no asynchronous write (NetCDF-4 has none): "
    "run without --async",
}


@pytest.mark.parametrize("kernel,backend", SYNC, ids=[f"{k}-{b}" for k, b in SYNC])
def test_sync_backends_compute_and_refuse_async(tmp_path, built_backends, kernel, backend):
    """No asynchronous write: the computation runs between synchronous
    steps and --verify passes; --async is refused with the backend's one
    line, exit 2, before any file."""
    need(backend, built_backends)
    args = [*KERNELS[kernel], "--backend", backend, "--compute", COMPUTE]
    (tmp_path / "refused").mkdir()
    r = run(2, [*args, "--async"], tmp_path / "refused")
    assert REFUSED[backend] in r.error_line(2)
    assert [f.name for f in (tmp_path / "refused").iterdir()] == []
    r = run(2, [*args, "--verify"], tmp_path)
    assert_verified(r)
    for p in write_passes(r.record):
        assert p["phases"]["compute"]["count"] == p["phases"]["post"]["count"] >= 1
        assert p["compute_seconds"]["min"] > 0
        assert p["pending_bytes_max"] == 0  # nothing held: each step waited at once


# Two ranks, one file, three collective writes each; the traced gaps after
# each rank's writes (its next operation's start less the write's end):
# rank 0: 0.2, 0.1, none after its last; rank 1: 0.05, 0.35.
GAPS = {0: 0.2 + 0.1, 1: 0.05 + 0.35}
TRACE = """iokernels-replay 2
ranks 2
file 0 0 /a
op 0 0 write coll 0.0 0.05 1 0 4096
op 1 0 write coll 0.0 0.05 1 4096 4096
op 0 0 write coll 0.25 0.3 1 8192 4096
op 1 0 write coll 0.1 0.15 1 12288 4096
op 0 0 write coll 0.4 0.45 1 16384 4096
op 1 0 write coll 0.5 0.55 1 20480 4096
end 6 0
"""


@pytest.mark.parametrize("backend", ["mpiio", "pnetcdf", "adios2"])
def test_compute_traced_is_the_traced_gaps(tmp_path, built_backends, backend):
    """--compute traced: each rank computes the gap its trace shows after
    each write (min over ranks rank 0's 0.3 s, max rank 1's 0.4 s), the
    writes held through it with --async, and verified."""
    need(backend, built_backends)
    (tmp_path / "t.replay").write_text(TRACE)
    args = ["replay", "t.replay", "--backend", backend, "--compute", "traced", "--async"]
    r = run(2, [*args, "--verify"], tmp_path)
    assert_verified(r)
    (p,) = write_passes(r.record)
    c = p["compute_seconds"]
    assert min(GAPS.values()) <= c["min"] < min(GAPS.values()) + 0.1, c
    assert max(GAPS.values()) <= c["max"] < max(GAPS.values()) + 0.1, c
    assert p["phases"]["compute"]["count"] == 2  # nothing after a rank's last write
    assert p["pending_bytes_max"] == 4096
    assert r.record["options"]["core"]["compute"] == "traced"
    assert "compute (not I/O, sleep): its traced gap after each step" in r.out


def test_compute_traced_in_an_interleaved_group(tmp_path):
    """Two files open together, a file read among its writes: one pass on
    mpiio (read-write); each write's traced gap computed (0.05 s after
    each of the three writes followed by another operation), the reads
    waiting for the held write before them, every value verified."""
    ops = [("a", "write"), ("b", "write"), ("a", "write"), ("a", "read"), ("a", "write")]
    lines = []
    for k, (f, kind) in enumerate(ops):
        for rank in range(2):
            off = (k * 2 + rank) * 1024 if kind == "write" else (1 - rank) * 1024
            lines.append(
                f"op {rank} {'ab'.index(f)} {kind} indep {k / 10} {k / 10 + 0.05} 1 {off} 1024"
            )
    body = "ranks 2\nfile 0 10240 /a\nfile 1 10240 /b\n" + "\n".join(lines) + "\n"
    (tmp_path / "m.replay").write_text(f"iokernels-replay 2\n{body}end {len(lines)} 0\n")
    args = ["replay", "m.replay", "--compute", "traced", "--async", "--verify"]
    r = run(2, args, tmp_path)
    assert_verified(r)
    assert "Order: as traced; 1 group of files open at the same time" in r.out
    p = r.record["passes"][0]  # the group's; b's read-back after it
    assert p["op"] == "write" and p["path"] == "./a.mpi + ./b.mpi"
    assert p["phases"]["compute"]["count"] == 3
    assert 0.15 <= p["compute_seconds"]["min"] < 0.15 + 0.1, p["compute_seconds"]
    assert p["pending_bytes_max"] == 1024


@pytest.mark.parametrize(
    "args,text",
    [
        ([*KERNELS["ncbench"], "--backend", "null", "--compute", "traced"],
         "--compute traced: only the replay has traced gaps; give seconds"),
        (["replay", "t.replay", "--compute", "traced", "--pace", "traced"],
         "--compute traced and --pace traced both spend the traced gaps"),
        (["replay", "t.replay", "--compute", "traced", "--compute-spread", "0.5"],
         "--compute-spread: --compute traced computes each rank's own traced gaps"),
    ],
    ids=["no-trace", "with-pace", "with-spread"],
)  # fmt: skip
def test_compute_traced_refused(tmp_path, args, text):
    (tmp_path / "t.replay").write_text(TRACE)
    r = run(2, args, tmp_path)
    assert text in r.error_line(2)
    assert not (tmp_path / "a.mpi").exists()
