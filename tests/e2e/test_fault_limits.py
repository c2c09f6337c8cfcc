# SPDX-License-Identifier: BSD-3-Clause
"""The fault matrix, continued: paths of any length the OS takes, the
process's resource limits (ulimit -f, -n, -v) and bad values of the suite's
environment variables. Each case expects its exit code, the key words of its
one error line and a time bound (no hang); the backends rotate over the
kernels as in test_fault_matrix.py."""

import os
import subprocess
import time

import pytest
from conftest import BIN, MPIEXEC, SHIPPED, need
from test_fault_matrix import BACKENDS, BOUND, EXT, G_MAP, KERNELS, Job, kernel_args, rotate

GRID = SHIPPED.parent / "grids" / "s64x64x64L2r4b8-32.abr"


def launch(np_, args, cwd, limit=None, env=None, bound=BOUND):
    """The job under a time bound; `limit` ("-n 16"): a ulimit set on each
    rank alone (the launcher keeps its own)."""
    wrap = ["sh", "-c", f'ulimit {limit} && exec "$0" "$@"'] if limit else []
    cmd = [str(MPIEXEC), "-n", str(np_), *wrap, str(BIN), *args]
    t0 = time.monotonic()
    try:
        p = subprocess.run(
            cmd,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=bound,
            env={**os.environ, **(env or {})},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"no end within {bound} s (a hang): {args}")
    return Job(p.returncode, p.stdout, p.stderr, time.monotonic() - t0)


def deep(root, length):
    """A folder whose path has exactly `length` characters, of short
    components (what deep scratch trees look like), whatever the length of
    pytest's temporary folder on this machine (its counter grows with the
    machine's history: a test whose premise moved with it passed on a
    long-used machine and failed on a fresh one)."""
    p = str(root)
    assert len(p) + 2 <= length, (p, length)
    while length - len(p) >= 11:
        p += "/abcdefgh"
    p += "/" + "x" * (length - len(p) - 1)
    assert len(p) == length, (len(p), length)
    os.makedirs(p, exist_ok=True)
    return type(root)(p)


def long_path_args(kernel, d):
    """Each kernel's own output option, into folder d."""
    if kernel == "chombo":
        return ["chombo", "--ncomp", "2", "--grids", str(GRID), "--output", str(d / "phi")]
    return kernel_args(kernel, d)


# ---- long paths ----


@pytest.mark.parametrize("kernel,backend,np_", rotate(0) + rotate(2))
def test_a_long_output_path_runs(kernel, backend, np_, tmp_path, built_backends):
    """OpenMPI 4.1's OMPIO aborted (SIGABRT, "buffer overflow detected") on
    any path of 245 characters or more in its sharedfp lockedfile component,
    on every backend that opens through MPI-IO; the suite leaves that
    component out. Written and read back at about 300 characters."""
    need(backend, built_backends)
    d = deep(tmp_path, 300)
    args = [*long_path_args(kernel, d), "--backend", backend, "--mode", "both"]
    if kernel == "btio":
        args[args.index("--mode") + 1] = "write"
        args.append("--verify")
    r = launch(np_, args, d)
    assert r.rc == 0, (kernel, backend, r.err[-3000:])
    assert not r.lines(), r.err
    assert "buffer overflow" not in r.err
    written = [p for p in d.iterdir() if p.suffix not in (".txt",)]
    assert written and all(len(str(p)) > 245 for p in written), written


@pytest.mark.parametrize("backend", ["mpiio", "netcdf4"])
def test_a_replay_and_its_record_under_a_long_path(backend, tmp_path, built_backends):
    """A replay's flattened names, its --json record and its --export-replay
    file, all under a folder of about 300 characters."""
    need(backend, built_backends)
    d = deep(tmp_path, 300)
    small = SHIPPED / "replay" / "small.replay"
    args = ["replay", str(small), "--dir", str(d), "--backend", backend, "--verify"]
    r = launch(4, [*args, "--json", str(d / "r.jsonl"), "--export-replay", str(d / "x.replay")], d)
    if backend != "mpiio":  # --export-replay is the mpiio backend's
        r = launch(4, [*args, "--json", str(d / "r.jsonl")], d)
    assert r.rc == 0 and not r.lines(), r.err[-2000:]
    names = sorted(p.name for p in d.iterdir())
    assert f"scratch_app_out.dat{EXT[backend]}" in names and "r.jsonl" in names, names


@pytest.mark.parametrize("length", [1100, 4000])
def test_a_path_past_the_option_limit_is_refused_naming_it(length, tmp_path, built_backends):
    d = deep(tmp_path, length)
    r = launch(1, ["ncbench", "-d", "4:8:8:8", "-f", str(d / "t"), "--backend", "mpiio"], tmp_path)
    assert r.rc == 2, r.err[-2000:]
    line = r.one_line()
    assert "value of --testfile is" in line and "more than the 1023 an option holds" in line, line
    assert r.took < BOUND


def test_a_btio_dir_that_leaves_no_room_for_its_file_is_refused(tmp_path):
    """--dir fits the option but not with "/btio.nc" after it: refused, never
    cut to another path."""
    d = deep(tmp_path, 1018)
    # the premise, asserted: the folder fits an option (1023), its file does not
    assert len(str(d)) <= 1023 < len(str(d / "btio.nc")), len(str(d))
    r = launch(1, ["btio", "--grid", "8,8,8", "--dumps", "1", "--dir", str(d)], tmp_path)
    assert r.rc == 2, r.err[-2000:]
    assert "is too long for its file btio" in r.one_line()
    assert not list(d.iterdir())


def test_a_file_name_past_name_max_is_refused_before_any_file(tmp_path, built_backends):
    for backend in ("hdf5", "mpiio"):
        if backend not in built_backends:
            continue
        r = launch(
            1, ["chombo", "--ncomp", "2", "--output", "x" * 256, "--backend", backend], tmp_path
        )
        assert r.rc == 2, r.err[-2000:]
        assert "its name is 256 bytes, more than NAME_MAX (255)" in r.one_line()
        assert not list(tmp_path.glob("xxx*"))


@pytest.mark.parametrize("backend", ["mpiio", "adios2", "hdf5"])
def test_a_replay_name_past_name_max_is_refused_at_parse_time(backend, tmp_path, built_backends):
    need(backend, built_backends)
    traced = "/" + "/".join(["abcdefghijklmno"] * 16)
    f = tmp_path / "long.replay"
    f.write_text(
        f"iokernels-replay 1\nranks 1\nfile 0 0 {traced}\nop 0 0 write indep - - 1 0 4096\n"
    )
    r = launch(1, ["replay", str(f), "--backend", backend], tmp_path)
    assert r.rc == 2, r.err[-2000:]
    line = r.one_line()
    assert "flattens to the name abcdefghijklmno_" in line and "more than NAME_MAX (255)" in line
    assert [p.name for p in tmp_path.iterdir()] == ["long.replay"]


def test_a_users_sharedfp_setting_is_kept_and_a_path_it_cannot_take_refused(
    tmp_path, built_backends
):
    """OMPI_MCA_sharedfp set by the user wins over the suite's default; when
    it keeps lockedfile, a path that component would overflow on is refused
    up front (exit 2 naming the limit) instead of aborting the job."""
    d = deep(tmp_path, 260)
    args = ["ncbench", "-d", "4:8:8:8", "-f", str(d / "t"), "--backend", "mpiio"]
    r = launch(1, args, tmp_path, env={"OMPI_MCA_sharedfp": "lockedfile"})
    launcher = os.environ.get("MPIEXEC", "mpiexec").split()
    version = subprocess.run([*launcher, "--version"], capture_output=True, text=True).stdout
    if "open mpi" not in version.lower() and "openrte" not in version.lower():
        assert r.rc == 0, r.err[-2000:]  # MPICH: no such component, nothing refused
        return
    assert r.rc == 2, r.err[-2000:]
    line = r.one_line()
    assert "sharedfp lockedfile" in line and "'lockedfile'" in line and "more than 244" in line
    assert "buffer overflow" not in r.err and not list(d.iterdir())


# ---- ulimit -f ----


@pytest.mark.parametrize("backend", BACKENDS)
def test_data_past_the_file_size_limit(backend, tmp_path, built_backends):
    """Data larger than ulimit -f: refused before the file exists (exit 2
    naming the limit); ADIOS2, whose subfiles' sizes are unknown ahead, meets
    it at run time: exit 1 naming EFBIG, never SIGXFSZ's silent exit 153."""
    need(backend, built_backends)
    args = ["btio", "--grid", "32,32,32", "--dumps", "2", "--backend", backend]
    r = launch(1, args, tmp_path, limit="-f 512")
    line = r.one_line()
    if backend == "adios2":
        assert r.rc == 1, r.err[-2000:]
        assert "File too large, EFBIG" in line and "ulimit -f" in line, line
    else:
        assert r.rc == 2, r.err[-2000:]
        assert "more than the process's file size limit of" in line and "ulimit -f" in line
        assert not list(tmp_path.glob("btio*"))
    assert r.took < BOUND


@pytest.mark.parametrize("backend", ["hdf5", "netcdf4"])
def test_a_header_past_the_file_size_limit_is_efbig(backend, tmp_path, built_backends):
    """The data fit, the format's metadata do not: the write fails with EFBIG
    (SIGXFSZ is ignored) and the line names the file and the limit."""
    need(backend, built_backends)
    args = ["btio", "--grid", "32,32,32", "--dumps", "2", "--backend", backend]
    # the data and 2 KiB (ulimit -f counts 512-byte blocks in sh): less than HDF5's metadata
    limit = (32**3 * 5 * 8 * 2 + 2048) // 512
    r = launch(1, args, tmp_path, limit=f"-f {limit}")
    assert r.rc == 1, r.err[-2000:]
    line = r.one_line()
    assert "File too large, EFBIG" in line and f"btio{EXT[backend]} reached" in line, line
    assert "ulimit -f" in line, line


# ---- ulimit -n ----


def first_failure(args, cwd):
    """The run under the smallest descriptor limit at which the process
    starts (MPI_Init needs its own) but its files do not open."""
    for n in range(14, 48):
        r = launch(1, args, cwd, limit=f"-n {n}")
        if r.lines() or r.rc == 0:
            return n, r
    pytest.fail("no descriptor limit made the run fail after MPI_Init")


@pytest.mark.parametrize("kernel,backend", [("ncbench", b) for b in BACKENDS] + [("e3sm", "mpiio")])
def test_too_many_open_files_is_named(kernel, backend, tmp_path, built_backends):
    """Out of descriptors: 'too many open files (ulimit -n N)', exit 1, on
    every backend and for the E3SM map file (was exit 2 'cannot open', or
    'Permission denied')."""
    need(backend, built_backends)
    args = {
        "ncbench": ["ncbench", "-d", "4:8:8:8", "-f", "t"],
        "e3sm": ["e3sm", str(G_MAP), "-o", "g.nc"],
    }[kernel]
    n, r = first_failure([*args, "--backend", backend], tmp_path)
    assert r.rc == 1, (n, r.err[-2000:])
    assert f"too many open files (ulimit -n {n})" in r.one_line(), r.err[-2000:]


# ---- ulimit -v ----


@pytest.mark.parametrize("backend", ["mpiio", "adios2"])
def test_out_of_memory_creates_and_truncates_nothing(backend, tmp_path, built_backends):
    """Under an address-space limit a step's buffers that cannot be had end
    the run before any file is created, and an earlier file is not
    truncated even with --overwrite; ADIOS2 (whose BP5 copy of a step
    crashed on a failed allocation) counts that copy."""
    need(backend, built_backends)
    good = tmp_path / f"btio{EXT[backend]}"
    # a step of 5 GiB: far more than 2,000,000 KiB leave, with room for
    # any MPI library's start-up
    args = ["btio", "--grid", "512,512,512", "--dumps", "1", "--backend", backend]
    kib = 2000000
    r = launch(1, args, tmp_path, limit=f"-v {kib}")
    assert r.rc == 1, r.err[-2000:]
    line = r.one_line()
    assert "out of memory" in line and f"ulimit -v {kib}" in line and "nothing was created" in line
    assert not good.exists()
    if backend == "mpiio":
        good.write_text("a good file\n")
        r = launch(1, [*args, "--overwrite"], tmp_path, limit=f"-v {kib}")
        assert r.rc == 1 and good.read_text() == "a good file\n", r.err[-2000:]


# ---- environment ----

BAD_ENV = [
    ("IOK_AGREE_SECONDS", "abc", "expected whole seconds from 1 to 86400"),
    ("IOK_AGREE_SECONDS", "-1", "expected whole seconds from 1 to 86400"),
    ("IOK_AGREE_SECONDS", "0", "expected whole seconds from 1 to 86400"),
    ("IOK_AGREE_SECONDS", "99999999999999999999", "expected whole seconds from 1 to 86400"),
    ("IOK_PROGRESS", "yes", "expected 1"),
    ("IOK_FAULT", "put:99", "rank 99, but the job has 4 ranks (0 to 3)"),
    ("IOK_FAULT", "put", "expected PHASE:RANK"),
    # were atoi and "anything but 0": ran silently
    ("IOK_CLOCK_ROUNDS", "abc", "expected a whole number of clock ping-pong rounds"),
    ("IOK_CLOCK_ROUNDS", "-5", "per rank from 1 to 1000 (unset: 10)"),
    ("IOK_CLOCK_ROUNDS", "1e99", "per rank from 1 to 1000 (unset: 10)"),
    ("IOK_CLOCK_ROUNDS", "0", "per rank from 1 to 1000 (unset: 10)"),
    ("IOK_CLOCK_ROUNDS", "1001", "per rank from 1 to 1000 (unset: 10)"),
    ("IOK_REWRITE_IN_PLACE", "no", "expected 1 (a later iteration rewrites"),
    ("IOK_REWRITE_IN_PLACE", "false", "or 0 (it starts from a removed file); unset: 0"),
    ("IOK_REWRITE_IN_PLACE", "yes", "or 0 (it starts from a removed file); unset: 0"),
]


@pytest.mark.parametrize("name,value,words", BAD_ENV)
def test_a_bad_environment_value_is_refused(name, value, words, tmp_path):
    kernel = KERNELS[len(value) % len(KERNELS)]
    args = [*kernel_args(kernel, tmp_path), "--backend", "mpiio"]
    r = launch(4, args, tmp_path, env={name: value})
    assert r.rc == 2, (r.rc, r.err[-2000:])
    line = r.one_line()
    assert f"{name}={value}" in line and words in line, line
    assert not [p for p in tmp_path.iterdir() if p.suffix != ".txt"], list(tmp_path.iterdir())
    assert r.took < BOUND


def test_a_good_environment_value_is_taken(tmp_path):
    """The values the variables take still work: a fault on the job's last
    rank is injected within 5 s of waiting, and IOK_PROGRESS=1 prints
    progress without a terminal."""
    args = ["btio", "--grid", "16,16,16", "--dumps", "2", "--backend", "mpiio"]
    r = launch(4, args, tmp_path, env={"IOK_AGREE_SECONDS": "5s", "IOK_FAULT": "put:3"})
    assert r.rc == 1 and "IOK_FAULT=put:3" in r.one_line(), r.err[-2000:]
    r = launch(4, [*args, "--overwrite"], tmp_path, env={"IOK_PROGRESS": "1"})
    assert r.rc == 0 and "record 2 of 2" in r.err, r.err[-2000:]


def test_the_clock_and_rewrite_variables_take_their_values(tmp_path):
    """IOK_CLOCK_ROUNDS=1000 and IOK_REWRITE_IN_PLACE=1 and 0 are taken: the
    second iteration's state says whether the file was rewritten in place."""
    for value, words in (("1", "file rewritten in place"), ("0", "file removed (untimed)")):
        d = tmp_path / value
        d.mkdir()
        args = ["btio", "--grid", "16,16,16", "--dumps", "1", "--dir", str(d), "--iterations", "2"]
        env = {"IOK_CLOCK_ROUNDS": "1000", "IOK_REWRITE_IN_PLACE": value}
        r = launch(4, [*args, "--backend", "mpiio", "--json", str(d / "r.jsonl")], d, env=env)
        assert r.rc == 0 and not r.lines(), r.err[-2000:]
        states = (d / "r.jsonl").read_text()
        assert f"previous iteration's {words}" in states, (value, states[-2000:])
