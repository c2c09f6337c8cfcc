# SPDX-License-Identifier: BSD-3-Clause
"""Where the campaign tool finds iokernels: $IOKERNELS_BIN, the older
$IOK_BIN, the source tree's build/iokernels, then PATH."""

from pathlib import Path

from iokernels_campaign.run import inventory


def test_iokernels_bin_wins_then_iok_bin(monkeypatch, tmp_path):
    monkeypatch.setenv("IOKERNELS_BIN", "/opt/a/iokernels")
    monkeypatch.setenv("IOK_BIN", "/opt/b/iokernels")
    assert inventory.default_binary() == Path("/opt/a/iokernels")
    monkeypatch.delenv("IOKERNELS_BIN")
    assert inventory.default_binary() == Path("/opt/b/iokernels")


def test_path_when_no_variable_and_no_build_tree(monkeypatch, tmp_path):
    monkeypatch.delenv("IOKERNELS_BIN", raising=False)
    monkeypatch.delenv("IOK_BIN", raising=False)
    monkeypatch.setattr(inventory, "REPO", tmp_path / "installed")  # no build/ beside it
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "iokernels"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    assert inventory.default_binary() == exe
