# SPDX-License-Identifier: BSD-3-Clause
"""ADIOS2 under an address-space limit (ulimit -v): a run either works or
ends with exit 1 and one line naming memory, never a signal. ADIOS2 2.12's
BP5 writer buffers even a step of 1 MiB in a chunk of 128 MiB, and when
that allocation failed it carried on without it: SIGSEGV in
ChunkV::AddToVec (BTIO 32^3 at 300,000 and 450,000 KiB, 64^3 at 450,000,
the replay). Each sweep spans the limits from too small for the ADIOS2
library to load to enough."""

import pytest
from conftest import SHIPPED, need
from test_fault_limits import launch

KIB = [250000, 325000, 400000, 475000, 700000]
SMALL = SHIPPED / "replay" / "small.replay"


def judge(r, kib, np_):
    """One run of the sweep: 'ok', 'memory', or 'below MPI' when the MPI
    library itself cannot start under that limit (nothing of the suite's
    ran: checked with --version under the same limit)."""
    assert r.rc >= 0 and r.rc < 128, (kib, r.rc, r.err[-3000:])  # not a signal
    assert "Segmentation fault" not in r.err and "received signal" not in r.err, r.err[-3000:]
    if r.rc == 0:
        return "ok"
    if r.rc == 1:
        line = r.one_line()
        assert "out of memory" in line and f"ulimit -v {kib}" in line, line
        return "memory"
    assert not r.lines(), (kib, r.rc, r.err[-3000:])
    assert launch(np_, ["--version"], ".", limit=f"-v {kib}").rc != 0, r.err[-3000:]
    return "below MPI"


def clear(d):
    """The datasets (folders) an earlier run of the sweep left in d."""
    for p in d.iterdir():
        if p.is_dir():
            for q in p.iterdir():
                q.unlink()
            p.rmdir()


def sweep(np_, args, cwd, out=None):
    seen = []
    for kib in KIB:
        clear(out or cwd)  # each run writes anew
        seen.append(judge(launch(np_, args, cwd, limit=f"-v {kib}", bound=120), kib, np_))
    # the sweep met the limit and got past it
    assert "memory" in seen and seen[-1] == "ok", list(zip(KIB, seen, strict=True))


@pytest.mark.parametrize("np_", [1, 4])
@pytest.mark.parametrize("grid", [32, 64])
def test_btio_under_ulimit_v(grid, np_, tmp_path, built_backends):
    need("adios2", built_backends)
    args = ["btio", "--grid", f"{grid},{grid},{grid}", "--dumps", "2", "--backend", "adios2"]
    sweep(np_, [*args, "--verify", "--dir", str(tmp_path)], tmp_path)


def test_ncbench_on_two_ranks_under_ulimit_v(tmp_path, built_backends):
    need("adios2", built_backends)
    args = ["ncbench", "-d", "4:64:64:16", "-f", str(tmp_path / "t"), "--backend", "adios2"]
    sweep(2, [*args, "--mode", "both", "--verify", "--api", "nonblocking"], tmp_path)


def test_a_replay_under_ulimit_v(tmp_path, built_backends):
    need("adios2", built_backends)
    out = tmp_path / "out"
    out.mkdir()
    args = ["replay", str(SMALL), "--dir", str(out), "--backend", "adios2", "--verify"]
    sweep(4, args, tmp_path, out)
