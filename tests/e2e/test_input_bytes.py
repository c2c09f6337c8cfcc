# SPDX-License-Identifier: BSD-3-Clause
"""Binary bytes in an input file or an option: every parser quotes what it
read escaped (non-printable bytes as \\xNN) and cut at about 60 characters,
so that the error stays one short line on the terminal (issue 14)."""

import shutil

import pytest
from conftest import SHIPPED, run_plain

JUNK = b"\x01\x1b[31m\x07\xfe\r" + b"A" * 200


def check_one_line(r, expect):
    assert r.rc == 2, (r.rc, r.err)
    errs = r.error_lines()
    assert len(errs) == 1, r.err
    line = errs[0]
    assert expect in line, line
    assert all(32 <= ord(c) < 127 for c in line), repr(line)
    assert len(line) < 400, len(line)
    return line


# the quoted junk as iok_quote prints it: escaped, then cut with "..."
QUOTED = "\\x01\\x1B[31m\\x07\\xFE\\x0D" + "A" * 36 + "..."


def test_btio_inputbt_data(tmp_path):
    (tmp_path / "inputbt.data").write_bytes(b"w" + JUNK + b"\n3\n5\n16 16 16\n.\n")
    r = run_plain(4, ["btio", "inputbt.data"], tmp_path, timeout=30)
    check_one_line(r, f"inputbt.data line 1: expected the I/O mode: w or r, got 'w{QUOTED[:-4]}...")


def test_amrex_inputs(tmp_path):
    (tmp_path / "inputs").write_bytes(b"ncells = " + JUNK + b"\n")
    r = run_plain(1, ["amrex", "inputs"], tmp_path, timeout=30)
    check_one_line(r, f"inputs line 1: --ncells takes an integer, not '{QUOTED}'")


def test_chombo_input_and_abr_grid(tmp_path):
    (tmp_path / "input").write_bytes(JUNK + b" = 1\n")
    r = run_plain(1, ["chombo", "input"], tmp_path, timeout=30)
    check_one_line(r, f"input line 1: unknown key '{QUOTED}'")
    (tmp_path / "input").unlink()
    grid = b"ABR file format version 0.1\nNumber of Levels = " + JUNK + b"\nRefinement Ratio =\n"
    (tmp_path / "bad.abr").write_bytes(grid)
    r = run_plain(1, ["chombo", "--grids", "bad.abr"], tmp_path, timeout=30)
    check_one_line(
        r, f"bad.abr line 2: Number of Levels must be an integer from 1 to 8, got {QUOTED}"
    )


def test_ncbench_option(tmp_path):
    # a geometry within the option's 127 characters reaches the parser, which
    # quotes it escaped; a longer one is refused by its length, unquoted
    short = JUNK[:80].decode("latin-1")
    r = run_plain(1, ["ncbench", "-d", short], tmp_path, timeout=30)
    check_one_line(r, "-d/--data-geometry '\\x01\\x1B[31m\\x07\\xC3\\xBE\\x0DAAAA")
    r = run_plain(1, ["ncbench", "-d", JUNK.decode("latin-1")], tmp_path, timeout=30)
    check_one_line(r, "--data-geometry is 210 characters, more than the 127 an option holds")


def test_unknown_option_with_escape_bytes(tmp_path):
    r = run_plain(1, ["btio", "--\x1b]0;pwned\x07"], tmp_path, timeout=30)
    check_one_line(r, "unknown option '--\\x1B]0;pwned\\x07'")


def test_e3sm_cdl(tmp_path):
    schema = tmp_path / "schema"
    shutil.copytree(SHIPPED / "e3sm", schema, ignore=shutil.ignore_patterns("*.nc"))
    cdl = schema / "g_case.cdl"
    text = cdl.read_bytes()
    assert b"\tdouble " in text
    cdl.write_bytes(text.replace(b"\tdouble ", b"\tdou\x1bble ", 1))
    args = [
        "e3sm",
        "--schema-dir",
        str(schema),
        "-o",
        "g.nc",
        str(SHIPPED / "e3sm/map_g_case_16p.nc"),
    ]
    r = run_plain(1, args, tmp_path, timeout=60)
    check_one_line(r, "unknown type 'dou\\x1Bble'")
    assert not (tmp_path / "g.nc").exists()


@pytest.mark.parametrize("nul", [b"\x00", b"\xff\xfe"])
def test_btio_binary_file(tmp_path, nul):
    (tmp_path / "inputbt.data").write_bytes(nul * 50 + b"\n" + JUNK * 3)
    r = run_plain(1, ["btio", "inputbt.data"], tmp_path, timeout=30)
    check_one_line(r, "inputbt.data line 1")
