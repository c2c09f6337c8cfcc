# SPDX-License-Identifier: BSD-3-Clause
"""docs/trace-replay.md runs as written: its ```sh blocks, in order, from a
folder that stands for the repository root (data, scripts, .venv and build
linked in, results/ its own), and the output it shows is the output the
commands print. The ```bash blocks need Darshan at a site and are not run."""

import re
import shutil
import subprocess

import pytest
from conftest import BIN, REPO, cli

DOC = REPO / "docs" / "trace-replay.md"
TEXT = DOC.read_text()
BLOCKS = re.findall(r"^```sh\n(.*?)^```$", TEXT, flags=re.S | re.M)


def shown_after(first_words):
    """The indented lines the page shows, from the one starting with
    first_words to the next blank line."""
    lines = TEXT.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("    " + first_words))
    out = []
    for line in lines[start:]:
        if not line.strip():
            break
        out.append(line[4:])
    return out


@pytest.fixture
def root(tmp_path):
    """A stand-in for the repository root: its data and tools, a new results/."""
    for name in ("data", "scripts", ".venv"):
        (tmp_path / name).symlink_to(REPO / name)
    (tmp_path / "build").symlink_to(BIN.parent)
    return tmp_path


def sh(block, cwd):
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_the_page_has_its_examples():
    assert len(BLOCKS) == 3, BLOCKS
    assert "trace2replay data/darshan/ior_hdf5_example.darshan" in BLOCKS[0]
    assert "trace2replay data/darshan/dxt.darshan" in BLOCKS[0]
    assert "iokernels replay" in BLOCKS[1] and "fidelity" in BLOCKS[2]


def test_convert_example_prints_what_the_page_shows(root):
    p = sh(BLOCKS[0], root)
    assert p.returncode == 0, p.stderr
    shown = shown_after("results/ior.replay: ") + shown_after("results/dxt.replay: ")
    assert p.stdout.splitlines() == shown
    for name in ("ior.replay", "dxt.replay"):
        assert (root / "results" / name).read_text().startswith("iokernels-replay 2\n")
    # as the page says: never replaced without --force
    again = sh(BLOCKS[0], root)
    assert again.returncode == 2 and "exists: give another path, or --force" in again.stderr


def test_refusal_example_is_the_real_line(tmp_path):
    from darshan.examples import example_logs

    shutil.copy(f"{example_logs.__path__[0]}/example.darshan", tmp_path / "app.darshan")
    p = cli("trace2replay", "app.darshan", "--out", "x.replay", cwd=tmp_path, timeout=120)
    assert p.returncode == 2
    assert p.stderr.splitlines() == shown_after("iokernels-campaign: error: app.darshan")


def test_replay_and_fidelity_examples_run(root):
    for block in BLOCKS:
        p = sh(block, root)
        assert p.returncode == 0, (block, p.stdout, p.stderr)
    lines = p.stdout.splitlines()  # the fidelity block's: one line per backend
    assert [line.split()[0] for line in lines] == ["mpiio", "pnetcdf", "hdf5", "netcdf4", "adios2"]
    # exact on mpiio only: the other libraries set their own offsets and make
    # every call collective (the idle ranks join the independent ones)
    assert [line.split()[1] for line in lines] == ["exact"] + ["NOT"] * 4, p.stdout
