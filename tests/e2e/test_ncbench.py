# SPDX-License-Identifier: BSD-3-Clause
"""NetCDF-Bench end to end: every rank count, transfer mode and storage on
NetCDF-4 and HDF5 writes, reads shifted and verifies; the header and report
match the original's; corruption exits 3; bad input exits 2 with one line."""

import csv
import io
import os
import re
import subprocess
import time

import pytest
from conftest import BIN, MPIEXEC, TESTDATA, Run, assert_ended_quickly, need, run, run_plain
from declared import missing

SAMPLES = TESTDATA / "netcdf-bench"
SAMPLES_NP4 = "sample_output_np4_coll_unlimited_chunked_w_r_verify.txt"
GEOM = "4:8:12:3"  # t:x:y:z, divisible by every layout below
ELEMS = 4 * 8 * 12 * 3
LAYOUT = {1: ["-n", "1", "-p", "1"], 2: ["-n=1", "-p=2"], 4: ["--nn", "2", "--ppn=2"]}
STORAGE = {"contiguous": [], "chunked": ["-c", "auto"], "unlimited": ["-u"]}


def nc(np_, args, cwd, **kw):
    return run(np_, ["ncbench", *args], cwd, **kw)


def header(path, cwd):
    return subprocess.run(
        ["ncdump", "-hs", str(path)], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


def sample_lines(name):
    """The original's output lines, without the command line and exit code."""
    lines = (SAMPLES / name).read_text().splitlines()
    return [ln for ln in lines if not ln.startswith("### ") and ln != "rc=0"]


@pytest.mark.parametrize("storage", list(STORAGE))
@pytest.mark.parametrize("iot", ["ind", "coll"])
@pytest.mark.parametrize("np_", [1, 2, 4])
@pytest.mark.parametrize("backend", ["netcdf4", "hdf5"])
def test_write_read_verify(tmp_path, built_backends, backend, np_, iot, storage):
    need(backend, built_backends)
    args = [*LAYOUT[np_], "-d", GEOM, "-w", "-r", "--verify", f"-t={iot}", *STORAGE[storage]]
    r = nc(np_, [*args, "--backend", backend, "-f", "t.file"], tmp_path)
    assert r.rc == 0, r.err
    rec = r.record
    assert (rec["kernel"], rec["backend"], rec["mode"]) == ("ncbench", backend, "both")
    assert rec["io"] == ("coll" if iot == "coll" else "indep")
    assert [p["op"] for p in rec["passes"]] == ["write", "read"]
    assert [p["bytes"] for p in rec["passes"]] == [ELEMS * 4, ELEMS * 4]
    assert rec["passes"][0]["requests"] == np_ * 4  # one call per rank and time step
    assert rec["verify"] == {
        "enabled": True,
        "values_checked": ELEMS,
        "values_mismatched": 0,
        "ok": True,
    }
    assert f"TEST PASSED: {ELEMS} values checked" in r.out
    assert r.out.count("benchmark:write") == 5 and r.out.count("benchmark:read") == 5
    if backend == "netcdf4":
        h = header("t.file", tmp_path)
        assert ("time = UNLIMITED ; // (4 currently)" in h) == (storage == "unlimited")
        stored = "contiguous" if storage == "contiguous" else "chunked"
        assert f'data:_Storage = "{stored}"' in h
        if storage == "chunked":  # auto: the block, (1, x/nn, y/ppn, z)
            nn, ppn = {1: (1, 1), 2: (1, 2), 4: (2, 2)}[np_]
            assert f"data:_ChunkSizes = 1, {8 // nn}, {12 // ppn}, 3 ;" in h
        assert 'data:_NoFill = "true"' in h


@pytest.mark.parametrize("backend", ["pnetcdf", "mpiio"])
def test_other_backends(tmp_path, built_backends, backend):
    need(backend, built_backends)
    for extra in ([], ["-u", "-t", "coll"]):
        r = nc(4, ["-d", GEOM, "-w", "-r", "--verify", "--backend", backend, *extra], tmp_path)
        assert r.rc == 0, r.err
        assert r.record["verify"]["values_checked"] == ELEMS and r.record["verify"]["ok"]
        ext = {"pnetcdf": ".nc", "mpiio": ".mpi"}[backend]
        assert r.record["files"] == [f"./testfn{ext}"]
        (tmp_path / f"testfn{ext}").unlink()


def test_header_and_report_match_original_np4(tmp_path):
    """The sample's run (4 ranks, 20:256:256:64, unlimited, chunked); 320 MiB
    written once and removed."""
    args = ["-n=2", "-p=2", "-d=20:256:256:64", "-w", "-t=coll", "-u", "-c=auto", "-f=t4u.nc"]
    r = nc(4, args, tmp_path, timeout=300)
    try:
        assert r.rc == 0, r.err
        want = (SAMPLES / "sample_ncdump_hs_np4_unlimited_chunked.txt").read_text()
        assert header("t4u.nc", tmp_path) == want
    finally:
        (tmp_path / "t4u.nc").unlink(missing_ok=True)
    sample = [ln for ln in sample_lines(SAMPLES_NP4) if "pretents" not in ln]
    ours = r.out.splitlines()
    assert ours[:11] == sample[:11]  # Benchtool ... File value: byte for byte
    assert ours[11] == "every rank writes its own block on file t4u.nc"
    check_table(ours[12:18], sample[11:17])


def check_table(ours, sample):
    """Same header line, same row labels and units in the same columns."""
    assert ours[0] == sample[0]
    for a, b in zip(ours[1:], sample[1:], strict=True):
        assert len(a) == len(b) == 145, (a, b)
        assert a[:62] == b[:62] and a[-21:] == b[-21:], (a, b)
        assert all(re.fullmatch(r"\s*\d+\.\d{10}", a[i : i + 20]) for i in (62, 83, 104)), a


def test_report_matches_original_np1_default(tmp_path):
    r = nc(1, ["-w", "-r", "--verify", "-t=ind", "-f=t1.nc"], tmp_path)
    assert r.rc == 0, r.err
    sample = sample_lines("sample_output_np1_default_ind_w_r_verify.txt")
    ours = r.out.splitlines()
    assert ours[:9] == sample[:9]  # defaults 100:100:100:10, block 1:100:100:10
    assert "pretents" in sample[9] and ours[9] == "every rank writes its own block on file t1.nc"
    check_table(ours[10:16], sample[10:16])
    assert ours[16] == "the only rank reads its own block on file t1.nc"
    check_table(ours[17:23], sample[17:23])
    assert ours[23] == "TEST PASSED: 10000000 values checked, all as written"
    assert ours[24] == "-- iokernels --"  # the core's block follows the original's lines
    assert (tmp_path / "t1.nc").stat().st_size > 40_000_000


def test_verify_only_like_the_original_np2(tmp_path):
    args = ["-n=1", "-p=2", "-d=10:64:64:64", "-t=coll", "-f=t2f.nc"]
    assert nc(2, [*args, "-w"], tmp_path).rc == 0
    r = nc(2, [*args, "--verify"], tmp_path)  # --verify alone: check the existing file
    assert r.rc == 0, r.err
    ours = r.out.splitlines()
    sample = sample_lines("sample_output_np2_verify_only.txt")
    assert ours[:9] == sample[:9]
    assert ours[9].startswith("rank r reads the block written by rank (r + 1) % 2 on file t2f.nc")
    assert ours[10] == f"TEST PASSED: {10 * 64 * 64 * 64} values checked, all as written"
    assert "benchmark:" not in r.out  # a check, not a benchmark, as in the original
    assert r.record["mode"] == "read" and r.record["verify"]["ok"]


def test_runs_without_parameters(tmp_path):
    r = nc(1, [], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["mode"] == "write" and r.record["io"] == "indep"
    assert r.record["backend"] == "netcdf4"
    assert r.record["files"] == ["./testfn.nc"]
    assert f"{'Datasize':<40} {40000000:>20} bytes" in r.out
    assert "benchmark:read" not in r.out
    assert set(r.record["passes"][0]["phases"]) >= {"open", "define", "post", "close"}


@pytest.mark.parametrize("np_", [1, 4])
def test_tiny_geometry_finishes(tmp_path, np_):
    """The original's size printer loops forever under 1000 bytes."""
    t0 = time.monotonic()
    r = nc(np_, ["-d=2:4:4:2", "-w", "-r", "--verify"], tmp_path, timeout=30)
    assert_ended_quickly(t0, np_, 20)
    assert r.rc == 0, r.err
    assert f"{'Datasize':<40} {256:>20} bytes" in r.out
    assert r.out.count("(256.0 B)") == 1
    assert r.record["verify"]["values_checked"] == 64


def corrupt_values(path, cwd, which):
    """Flips a bit of the elements of `data` at the given flat indices, each
    found in the file by its bytes."""
    dump = subprocess.run(["ncdump", "-v", "data", path], cwd=cwd, capture_output=True, text=True)
    values = [int(v) for v in re.findall(r"-?\d+", dump.stdout.split("data =")[-1])]
    raw = bytearray((cwd / path).read_bytes())
    for i in which:
        pattern = values[i].to_bytes(4, "little", signed=True)
        assert raw.count(pattern) == 1
        raw[raw.index(pattern)] ^= 0x01
    (cwd / path).write_bytes(bytes(raw))


@pytest.mark.parametrize("mode", [["-r", "--verify"], ["--verify"]], ids=["read", "verify-only"])
def test_corrupted_value_exits_3(tmp_path, mode):
    args = ["-d", "2:4:4:2", "-n=2", "-p=2", "-f", "c.nc"]
    assert nc(4, [*args, "-w"], tmp_path).rc == 0
    corrupt_values("c.nc", tmp_path, [-1])
    r = nc(4, [*args, *mode], tmp_path)
    line = r.error_line(3)
    assert "verify failed: 1 of 64 values differ in c.nc; first: data[1][3][3][1]" in line
    failed = r"^TEST FAILED: 1 of 64 values differ; first: data\[1\]\[3\]\[3\]\[1\]: read -?\d+, "
    assert re.search(failed + r"expected -?\d+$", r.out, re.M)
    assert r.record["exit_code"] == 3 and r.record["verify"]["values_mismatched"] == 1


def test_reads_are_shifted(tmp_path):
    """Blocks 0 and 3 corrupted (first and last element). The lowest rank that
    sees a mismatch names it: shifted, rank 2 reads block 3 (and rank 3 block
    0); unshifted, rank 0 would name data[0][0][0][0] of its own block."""
    args = ["-d", "2:4:4:2", "-n=2", "-p=2", "-f", "s.nc"]
    assert nc(4, [*args, "-w"], tmp_path).rc == 0
    corrupt_values("s.nc", tmp_path, [0, -1])
    r = nc(4, [*args, "-r", "--verify"], tmp_path)
    assert r.rc == 3, (r.rc, r.err)
    assert "2 of 64 values differ in s.nc; first: data[1][3][3][1]" in r.error_lines()[0]
    assert "rank r reads the block written by rank (r + 1) % 4 on file s.nc" in r.out


@pytest.mark.parametrize("iot", ["ind", "coll"])
def test_file_per_process(tmp_path, iot):
    args = ["-d", GEOM, "-n=2", "-p=2", "-t", iot, "--file-per-process", "-f", "p.nc"]
    r = nc(4, [*args, "-w", "-r", "--verify", "-c", "auto"], tmp_path)
    assert r.rc == 0, r.err
    assert r.record["verify"] == {
        "enabled": True,
        "values_checked": ELEMS,
        "values_mismatched": 0,
        "ok": True,
    }
    assert "rank r reads the file p.nc.((r + 1) % 4), written by another rank" in r.out
    for rank in range(4):  # each file: all time steps of one block (1:4:6:3)
        h = header(f"p.nc.{rank}", tmp_path)
        assert "time = 4 ;" in h and "dim_1 = 4 ;" in h and "dim_2 = 6 ;" in h
        assert "data:_ChunkSizes = 1, 4, 6, 3 ;" in h
    assert not (tmp_path / "p.nc").exists()
    # files 0 and 3 corrupted: shifted, rank 2 (reading file 3) is the lowest to see it
    for rank in (0, 3):
        corrupt_values(f"p.nc.{rank}", tmp_path, [-1])
    r = nc(4, [*args, "-r", "--verify"], tmp_path)
    assert r.rc == 3, r.err
    assert f"2 of {ELEMS} values differ in p.nc.3; first: data[3][3][5][2]" in r.error_lines()[0]
    # existing files are not overwritten
    before = (tmp_path / "p.nc.2").read_bytes()
    r = run_plain(4, ["ncbench", *args, "-w"], tmp_path)
    assert r.rc == 2 and "output file p.nc.0 exists" in r.err
    assert (tmp_path / "p.nc.2").read_bytes() == before


def test_option_spellings_agree(tmp_path):
    spellings = [
        ["-d=2:4:4:2", "-b=1:2:2:2", "-t=coll", "-x=human", "-f=a.nc", "-n=2", "-p=2"],
        ["-d", "2:4:4:2", "-b", "1:2:2:2", "-t", "coll", "-x", "human", "-f", "a.nc",
         "-n", "2", "-p", "2"],
        ["--data-geometry=2:4:4:2", "--block-geometry=1:2:2:2", "--io-type=coll",
         "--output-format=human", "--testfile=a.nc", "--nn=2", "--ppn=2"],
        ["--data-geometry", "2:4:4:2", "--block-geometry", "1:2:2:2", "--io-type", "coll",
         "--output-format", "human", "--testfile", "a.nc", "--nn", "2", "--ppn", "2"],
    ]  # fmt: skip
    seen = []
    for args in spellings:
        r = nc(4, [*args, "-w", "-u", "--overwrite"], tmp_path)
        assert r.rc == 0, r.err
        seen.append(r.record["options"]["kernel"])
        assert r.record["io"] == "coll"
    assert all(s == seen[0] for s in seen)
    assert seen[0]["data-geometry"] == "2:4:4:2" and seen[0]["unlimited"] is True


def test_parser_output_is_csv(tmp_path):
    r = nc(4, ["-d", GEOM, "-n=2", "-p=2", "-w", "-r", "--verify", "-x", "parser"], tmp_path)
    assert r.rc == 0, r.err
    rows = list(csv.DictReader(io.StringIO(r.out)))
    assert [(x["benchmark"], x["rank"]) for x in rows] == [
        (op, str(rank)) for op in ("write", "read") for rank in range(4)
    ]
    for x in rows:
        assert (x["nn"], x["ppn"], x["backend"], x["io_access"]) == (
            "2",
            "2",
            "netcdf4",
            "independent",
        )
        assert (x["data_x"], x["block_y"], x["chunk_t"]) == ("8", "6", "0")
        assert int(x["bytes"]) == ELEMS * 4
        assert float(x["io_s"]) > 0 and float(x["bandwidth_Bps"]) > 0
        assert float(x["io_bandwidth_Bps"]) == pytest.approx(ELEMS * 4 / float(x["io_s"]), rel=1e-3)
    assert {x["checked"] for x in rows} == {"", str(ELEMS)}
    assert "Benchtool" not in r.out
    # never clamped: each rank's I/O time is at least its own I/O calls' time
    # in the loop, so the least over ranks is at least the sum of the loop
    # phases' least per-rank times in the record
    assert {x["io_s_basis"] for x in rows} <= {"loop-less-suite", "own-io-calls"}
    for p in r.record["passes"]:
        if p["op"] in ("write", "read"):
            least = min(float(x["io_s"]) for x in rows if x["benchmark"] == p["op"])
            loop = ("exchange", "post", "wait", "flush")
            floor = sum(p["phases"][k]["rank_seconds"]["min"] for k in loop if k in p["phases"])
            assert least >= floor * (1 - 1e-6) and least > 0, (least, p["phases"])


def test_fill_and_deflate_are_in_the_file(tmp_path, built_backends):
    r = nc(2, ["-d", GEOM, "-w", "-r", "--verify", "-F", "-f", "fill.nc"], tmp_path)
    assert r.rc == 0, r.err
    assert "_NoFill" not in header("fill.nc", tmp_path)
    assert f"{'Fill value':<40} {'yes':>20}" in r.out
    r = nc(2, ["-d", GEOM, "-w", "-r", "--verify", "-z", "4", "-t", "coll", "-f", "z.nc"], tmp_path)
    assert r.rc == 0, r.err
    h = header("z.nc", tmp_path)
    # the original deflates without shuffle (nc_def_var_deflate(..., 0, 1, level))
    assert "data:_DeflateLevel = 4 ;" in h and "_Shuffle" not in h
    assert r.record["verify"]["ok"]
    if "hdf5" in built_backends:
        args = ["-d", GEOM, "-w", "-r", "--verify", "-z=2", "-t=coll", "-c=2:8:6:3"]
        r = nc(2, [*args, "--backend", "hdf5", "-f", "z.h5"], tmp_path)
        assert r.rc == 0, r.err
        dump = subprocess.run(
            ["h5dump", "-pH", "z.h5"], cwd=tmp_path, capture_output=True, text=True
        )
        assert "CHUNKED ( 2, 8, 6, 3 )" in dump.stdout
        assert "COMPRESSION DEFLATE { LEVEL 2 }" in dump.stdout
        assert "SHUFFLE" not in dump.stdout


def test_the_originals_spellings_of_compression_and_file_per_process(tmp_path):
    """--compression_level=N and -t=file-per-process, as the original takes them;
    the Storage line says what the file is (deflate makes it chunked)."""
    r = nc(2, ["-d", GEOM, "-w", "-r", "--verify", "--compression_level=1", "-t=coll"], tmp_path)
    assert r.rc == 0, r.err
    h = header("testfn.nc", tmp_path)
    assert "data:_DeflateLevel = 1 ;" in h and 'data:_Storage = "chunked"' in h
    assert "_Shuffle" not in h
    assert f"{'Storage':<40} {'chunked':>20}" in r.out
    assert r.record["verify"]["ok"]
    r = nc(2, ["-d", GEOM, "-w", "-r", "--verify", "-t=file-per-process", "-f=f.nc"], tmp_path)
    assert r.rc == 0, r.err
    assert f"{'I/O Access':<40} {'independent':>20}" in r.out
    assert f"{'Files':<40} {'one per process':>20}" in r.out
    assert sorted(p.name for p in tmp_path.glob("f.nc*")) == ["f.nc.0", "f.nc.1"]
    assert r.record["verify"]["ok"]


def test_deflate_without_chunks_takes_the_librarys_chunks(tmp_path):
    """-z without -c: the original asks NetCDF-4 for nothing but deflate, so
    the library picks the chunks; ours must too (ncdump -hs equal to a file
    ncgen makes with deflate alone)."""
    geom = "20:100:200:10"
    r = nc(2, ["-d", geom, "-w", "-z=1", "-t=coll", "-f=z.nc"], tmp_path)
    assert r.rc == 0, r.err
    (tmp_path / "ref.cdl").write_text(
        "netcdf ref {\ndimensions:\n time = 20 ; dim_1 = 100 ; dim_2 = 200 ; dim_3 = 10 ;\n"
        "variables:\n int v(time, dim_1, dim_2, dim_3) ;\n v:_DeflateLevel = 1 ;\n}\n"
    )
    subprocess.run(["ncgen", "-k", "nc4", "-o", "ref.nc", "ref.cdl"], cwd=tmp_path, check=True)
    chunks = [
        ln.split("=")[1] for ln in header("ref.nc", tmp_path).splitlines() if "_ChunkSizes" in ln
    ]
    ours = [ln.split("=")[1] for ln in header("z.nc", tmp_path).splitlines() if "_ChunkSizes" in ln]
    assert ours == chunks and len(chunks) == 1, (ours, chunks)


def test_slurm_environment_sets_the_layout(tmp_path):
    def go(env_extra, args):
        env = dict(os.environ, **env_extra)
        cmd = [str(MPIEXEC), "-n", "4", str(BIN), "ncbench", *args]
        return subprocess.run(
            cmd, cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env
        )

    p = go({"SLURM_NNODES": "2", "SLURM_NTASKS_PER_NODE": "2"}, ["-d", GEOM, "-x", "parser"])
    assert p.returncode == 0, p.stderr
    row = next(csv.DictReader(io.StringIO(p.stdout)))
    assert (row["nn"], row["ppn"], row["block_x"], row["block_y"]) == ("2", "2", "4", "6")
    p = go({"SLURM_NNODES": "1", "SLURM_NTASKS_PER_NODE": "3"}, ["-d", GEOM, "--overwrite"])
    assert p.returncode == 2
    assert "4 ranks but nn x ppn = 1 x 3" in p.stderr


def test_refuses_to_overwrite(tmp_path):
    assert nc(2, ["-d", GEOM, "-f", "keep.nc"], tmp_path).rc == 0
    before = (tmp_path / "keep.nc").read_bytes()
    r = run_plain(2, ["ncbench", "-d", GEOM, "-f", "keep.nc"], tmp_path)
    assert r.rc == 2 and "exists: pass --overwrite" in r.err
    assert (tmp_path / "keep.nc").read_bytes() == before


BAD = [
    ("three-parts", 1, ["-d", "2:4:4"], "-d/--data-geometry '2:4:4': expected t:x:y:z"),
    ("zero-part", 1, ["-d=2:4:4:0"], "four positive integers"),
    ("letters", 1, ["--data-geometry", "a:b:c:d"], "-d/--data-geometry 'a:b:c:d'"),
    ("block-parts", 1, ["-b", "1:2:2"], "-b/--block-geometry '1:2:2'"),
    ("chunk-parts", 1, ["-c", "1:2"], "-c/--chunk-geometry (or auto) '1:2'"),
    ("io-type", 1, ["-t", "both"], "-t/--io-type takes ind, coll or file-per-process, not 'both'"),
    ("format", 1, ["-x", "xml"], "--output-format takes one of human|parser"),
    ("level", 1, ["-z", "12", "-t", "coll"], "--compression_level (-z) takes 0 to 9, not '12'"),
    ("level-ind", 1, ["-z", "3"], "only with collective I/O: add -t coll"),
    ("nn-split", 4, ["-n", "3"], "4 ranks do not split over nn = 3"),
    ("nn-ppn", 4, ["-n", "2", "-p", "3"], "4 ranks but nn x ppn = 2 x 3"),
    ("x-nn", 4, ["-n=2", "-p=2", "-d=2:5:4:2"], "x = 5 is not a multiple of the number of nodes"),
    ("y-ppn", 4, ["-n=2", "-p=2", "-d=2:4:5:2"], "y = 5 is not a multiple of the processes"),
    ("t-block", 4, ["-n=2", "-p=2", "-d=3:4:4:2", "-b=2:2:2:2"], "t = 3 is not a multiple"),
    ("block-big", 4, ["-n=2", "-p=2", "-d=2:4:4:2", "-b=1:4:2:2"], "does not fit the data"),
    ("chunk-big", 1, ["-d=2:4:4:2", "-c=1:8:4:2"], "exceeds the data geometry 2:4:4:2 along x"),
    (
        "chunk-fpp",
        4,
        ["-d=2:4:4:2", "-c=1:4:4:2", "--file-per-process"],
        "exceeds a process's file",
    ),
    ("no-chunks", 1, ["--backend", "pnetcdf", "-c", "auto"], "backend pnetcdf has no chunked"),
    ("no-fill", 1, ["--backend", "mpiio", "-F"], "backend mpiio does not pre-fill"),
    ("no-deflate", 1, ["--backend", "pnetcdf", "-z", "1", "-t", "coll"], "does not compress"),
    ("read-missing", 1, ["-r", "-d=2:4:4:2"], "cannot read ./testfn.nc"),
    ("mode-conflict", 1, ["-w", "-r", "--mode", "write"], "-r/-w ask for 'both'"),
    ("io-conflict", 1, ["-t", "coll", "--independent"], "-t coll contradicts --independent"),
    ("unknown-long", 1, ["--nope"], "unknown option '--nope'"),
    ("unknown-short", 1, ["-q"], "unknown option '-q'"),
    ("missing-value", 1, ["-d"], "option '-d' needs a value"),
    ("positional", 1, ["in.txt"], "kernel ncbench takes no input file"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_input_exits_2_quickly(tmp_path, built_backends, case):
    _, np_, args, msg = case
    for b in ("pnetcdf", "mpiio"):
        if b in args and b not in built_backends:
            missing(b, "backend not built")
    t0 = time.monotonic()
    if np_ == 1:  # a singleton (no mpiexec): OpenMPI's launcher adds ~2 s to any failed job
        proc = subprocess.run(
            [str(BIN), "ncbench", *args], cwd=tmp_path, capture_output=True, text=True, timeout=30
        )
        r = Run(proc, None)
    else:
        r = run_plain(np_, ["ncbench", *args], tmp_path, timeout=30)
    assert_ended_quickly(t0, np_, 10)
    line = r.error_line()
    assert msg in line, line
    assert not any(tmp_path.iterdir())  # nothing written


def test_help_shows_both_spellings(tmp_path):
    r = run_plain(1, ["ncbench", "--help"], tmp_path)
    assert r.rc == 0
    for short, long in [("r", "read"), ("w", "write"), ("u", "unlimited"), ("F", "use-fill-value"),
                        ("n", "nn"), ("p", "ppn"), ("d", "data-geometry"), ("b", "block-geometry"),
                        ("c", "chunk-geometry"), ("t", "io-type"), ("f", "testfile"),
                        ("x", "output-format"), ("z", "compression_level")]:  # fmt: skip
        assert f"-{short}, --{long}" in r.out
    assert "--verify" in r.out and "--backend" in r.out


def test_per_rank_figures_are_each_ranks_own(tmp_path):
    """As the original: each rank reads its own clock where the ranks meet
    (around open, the I/O loop and close), so the per-rank rows differ by
    rank (they were one value printed three times); the CSV's rows agree
    with the table's min and max."""
    r = nc(4, ["-d", GEOM, "-n=2", "-p=2", "-w", "-x", "parser"], tmp_path)
    assert r.rc == 0, r.err
    rows = list(csv.DictReader(io.StringIO(r.out)))
    for col in ("open_s", "io_s", "close_s"):
        got = [float(x[col]) for x in rows]
        assert len(set(got)) > 1, (col, got)
    (tmp_path / "testfile.nc").unlink(missing_ok=True)
    for f in tmp_path.glob("*.nc"):
        f.unlink()
    t = nc(4, ["-d", GEOM, "-n=2", "-p=2", "-w"], tmp_path)
    assert t.rc == 0, t.err
    for label in ("Open time", "I/O time", "Close time"):
        line = next(x for x in t.out.splitlines() if f" {label} " in x)
        lo, avg, hi = (float(v) for v in re.findall(r"\d+\.\d{10}", line))
        assert lo <= avg <= hi and lo < hi, line
