# SPDX-License-Identifier: BSD-3-Clause
"""A replay file is replayed whole or not at all (issue 49, item 6). The
writers put the check lines at the end, so a file cut short lost them all
and its first half replayed as "exact"; format 2 ends with `end OPS
CHECKS`, and a file without it is refused naming its last line. A format 1
file (no `end`) still replays, never scored exact. A NUL byte, which ended
the text there (the operations after it dropped, exit 0), is refused naming
its line; so are the overlapping segments of one operation, which only
mpiio refused, at run time (MPI_File_set_view: MPI_ERR_TYPE)."""

import pytest
from conftest import SHIPPED, run, run_plain

SMALL = SHIPPED / "replay" / "small.replay"
BTIO = ["btio", "--method", "0", "--grid", "12,12,12", "--dumps", "2", "--mode", "write"]
CUT = (
    "cut? the replay file has no 'end' line (format 1), so a file cut short cannot be told "
    "from a whole one: convert the trace again (format 2)"
)


@pytest.fixture
def exported(tmp_path):
    """BTIO's requests on 4 ranks as a replay file: 8 ops, 4 check lines."""
    w = run(4, [*BTIO, "--export-replay", "bt.replay"], tmp_path)
    assert w.rc == 0, w.err
    (tmp_path / "out").mkdir()
    lines = (tmp_path / "bt.replay").read_text().splitlines(keepends=True)
    assert lines[0] == "iokernels-replay 2\n" and lines[-1] == "end 8 4\n", lines
    return lines


def nothing_written(tmp_path):
    return not list((tmp_path / "out").iterdir())


@pytest.mark.parametrize("at", ["a line", "a byte"])
def test_a_cut_file_is_refused_naming_its_last_line(tmp_path, exported, at):
    """Its first half, cut after a line or inside one (an op line then has
    fewer segments than it says: refused too, naming that line)."""
    text = "".join(exported)
    half = "".join(exported[: len(exported) // 2]) if at == "a line" else text[: len(text) // 2]
    (tmp_path / "half.replay").write_text(half)
    r = run_plain(4, ["replay", "half.replay", "--dir", "out"], tmp_path)
    line = r.error_line()
    last = len(half.splitlines())
    assert line.startswith(f"iokernels: error: half.replay line {last}: "), line
    if at == "a line":
        assert line.endswith(
            "the file ends here, without its last line 'end OPS CHECKS': it is cut short (a "
            "copy or a transfer that stopped?); copy or convert it again"
        ), line
    assert nothing_written(tmp_path)


def test_lost_lines_are_refused(tmp_path, exported):
    """A check line gone from the middle: the end line's counts say so."""
    lost = [x for x in exported if not x.startswith("check 2 ")]
    (tmp_path / "lost.replay").write_text("".join(lost))
    r = run_plain(4, ["replay", "lost.replay", "--dir", "out"], tmp_path)
    assert r.error_line() == (
        f"iokernels: error: lost.replay line {len(lost)}: 'end' counts 8 op and 4 check lines, "
        "but 8 and 3 come before it: lines are lost or added; copy or convert the file again"
    )
    assert nothing_written(tmp_path)


def test_a_format_1_file_is_never_exact(tmp_path, exported):
    """The same file as the writers wrote it before (format 1, no `end`)
    replays, but not exact, saying why: its first half, cut before its
    check lines, looks as whole as it does (it replayed as "exact")."""
    v1 = ["iokernels-replay 1\n", *exported[1:-1]]
    (tmp_path / "v1.replay").write_text("".join(v1))
    (tmp_path / "half.replay").write_text("".join(v1[: len(v1) // 2 + 2]))
    whole = run(4, ["replay", "bt.replay", "--dir", "out"], tmp_path)
    assert whole.rc == 0, whole.err
    assert whole.record["fidelity"]["exact"] is True, whole.record["fidelity"]
    for name in ("v1.replay", "half.replay"):
        r = run(4, ["replay", name, "--dir", "out", "--overwrite"], tmp_path)
        assert r.rc == 0, r.err
        fid = r.record["fidelity"]
        assert fid["exact"] is False and fid["reasons"] == [CUT], (name, fid)
        assert f"not exact: {CUT}" in r.out
        assert "Replay of " + name + " (replay format 1)" in r.out


def test_a_nul_byte_is_refused_naming_its_line(tmp_path):
    """A NUL at the end of line 10 of the shipped example (in format 1,
    where the text up to it was a whole file): refused, nothing written."""
    lines = SMALL.read_bytes().splitlines(keepends=True)
    assert lines[9].startswith(b"op ") and lines[-1].startswith(b"end ")
    lines = [b"iokernels-replay 1\n", *lines[1:-1]]
    at = len(b"".join(lines[:10])) - 1
    data = b"".join(lines[:10])[:-1] + b"\0\n" + b"".join(lines[10:])
    (tmp_path / "nul.replay").write_bytes(data)
    (tmp_path / "out").mkdir()
    r = run_plain(4, ["replay", "nul.replay", "--dir", "out"], tmp_path)
    assert r.error_line() == (
        f"iokernels: error: nul.replay line 10: a NUL byte (at byte {at}): the input file "
        "must be text; is it the right file, copied whole?"
    )
    assert nothing_written(tmp_path)


@pytest.mark.parametrize("kind", ["write", "read"])
def test_overlapping_segments_are_refused_at_parse(tmp_path, kind):
    (tmp_path / "o.replay").write_text(
        "iokernels-replay 2\nranks 1\nfile 0 0 /a\nop 0 0 write indep - - 1 0 200\n"
        f"op 0 0 {kind} indep - - 3 150 10 0 100 50 100\nend 2 0\n"
    )
    (tmp_path / "out").mkdir()
    r = run_plain(1, ["replay", "o.replay", "--dir", "out"], tmp_path)
    assert r.error_line() == (
        "iokernels: error: o.replay line 5: segments 2 (0+100) and 3 (50+100) overlap: one "
        "operation's segments must not share bytes (MPI-IO takes no such file view); merge "
        "them, or make two operations"
    )
    assert nothing_written(tmp_path)
