# SPDX-License-Identifier: BSD-3-Clause
"""The ceiling probe (src/core/measure/ceiling.c) as strace sees it: it runs after
the kernel's last pass, never between a write and its read, and writes
incompressible bytes (its last sample's file, kept by faking its unlink,
does not shrink under zlib). Each check is also shown failing on a case
built wrong."""

import os
import re
import shutil
import subprocess
import zlib

from conftest import BIN

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
ARGS = ["btio", "--backend", "mpiio", "--grid", "32,32,32", "--dumps", "1", "--ceiling"]


def strace(tmp_path, extra, args):
    assert shutil.which("strace"), "strace is needed to watch the probe's files"
    cmd = ["strace", "-f", "-o", str(tmp_path / "trace.txt"), *extra, str(BIN), *args]
    p = subprocess.run(cmd, cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return (tmp_path / "trace.txt").read_text().splitlines()


def probe_after_passes(lines, name):
    """Whether every open of the probe's files follows the last open of the
    kernel's file `name` (and there is one of each)."""
    opens = [m.group(1) for x in lines for m in [re.search(r'openat\([^"]*"\./([^"]+)"', x)] if m]
    kernel = [i for i, f in enumerate(opens) if f == name]
    probe = [i for i, f in enumerate(opens) if f.startswith(name + ".ceiling")]
    return bool(kernel and probe) and max(kernel) < min(probe)


def incompressible(data):
    return len(zlib.compress(data, 6)) >= 0.99 * len(data)


def test_the_probe_runs_after_the_write_and_its_read(tmp_path):
    lines = strace(tmp_path, ["-e", "trace=openat"], [*ARGS, "--verify"])
    opens = [x for x in lines if '"./btio.mpi"' in x]
    assert any("O_RDONLY" in x for x in opens) and any("O_CREAT" in x for x in opens)
    assert probe_after_passes(lines, "btio.mpi"), "\n".join(x for x in lines if "btio" in x)
    # built wrong: the probe between the write and the read
    write = next(x for x in lines if '"./btio.mpi"' in x and "O_CREAT" in x)
    read = next(x for x in lines if '"./btio.mpi"' in x and "O_RDONLY" in x)
    probe = next(x for x in lines if '"./btio.mpi.ceiling0"' in x)
    assert not probe_after_passes([write, probe, read], "btio.mpi")


def test_the_probe_writes_incompressible_bytes(tmp_path):
    # the last sample's file is kept for the reads, then unlinked: fake that
    # one unlink (strace -P: only that path's calls) so the file stays
    fake = ["-e", "trace=unlink", "-e", "inject=unlink:retval=0", "-P", "./btio.mpi.ceiling2"]
    strace(tmp_path, fake, ARGS)
    data = (tmp_path / "btio.mpi.ceiling2").read_bytes()
    assert len(data) >= 1 << 20 and incompressible(data)
    # built wrong: constant bytes, as the probe wrote before, compress to nothing
    assert not incompressible(bytes([0xA5]) * len(data))
