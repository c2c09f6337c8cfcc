# SPDX-License-Identifier: BSD-3-Clause
"""A clone stands on its own: nothing outside docs reads data beside the clone, and the
reference files the tests compare against are the originals' bytes."""

import hashlib
import subprocess

from conftest import REPO, TESTDATA
from declared import missing

# Prose may tell where data came from; code, tests and scripts may not read it.
DOC_SUFFIXES = (".md",)
# spelled in two pieces so that this file does not name it itself
NEEDLES = (b".." + b"/shared", b'"shared" / ' + b'"data"')


def tracked_files():
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        missing("git", "not a git work tree (an unpacked archive): nothing to list")
    return [REPO / p for p in out.decode().split("\0") if p]


def test_no_file_reaches_outside_the_clone():
    offenders = []
    for path in tracked_files():
        if path.suffix in DOC_SUFFIXES or not path.is_file():
            continue
        data = path.read_bytes()
        if any(n in data for n in NEEDLES):
            offenders.append(str(path.relative_to(REPO)))
    assert offenders == [], f"these read data beside the repository (a clone has none): {offenders}"


def test_reference_data_unchanged():
    sums = (TESTDATA / "sha256sums").read_text().splitlines()
    assert len(sums) >= 30
    for line in sums:
        want, name = line.split("  ", 1)
        got = hashlib.sha256((TESTDATA / name).read_bytes()).hexdigest()
        assert got == want, f"tests/data/{name} differs from the original's file"
