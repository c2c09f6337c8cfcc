# SPDX-License-Identifier: BSD-3-Clause
"""The HTML report as a person sees it: Debian's headless Chromium
(installed by scripts/install-deps.sh) opens the page; no JavaScript error
in its console, the summary inside the first 1400 x 900 screen, each
backend in its palette colour in the figures. The screenshots are kept as
test artefacts (test-artifacts/ at the top of the repository, or
$IOK_TEST_ARTIFACTS)."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, report_of
from declared import missing
from iokernels_campaign.report import palette
from matplotlib import image

SCREEN = (1400, 900)
TALL = (1400, 2400)
ARTIFACTS = Path(os.environ.get("IOK_TEST_ARTIFACTS", REPO / "test-artifacts"))


def chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def open_page(page, png, size):
    """Chromium's screenshot of `page` at `size`; its console on stderr."""
    with tempfile.TemporaryDirectory(prefix="iok-chromium-") as profile:
        cmd = [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            f"--user-data-dir={profile}",
            f"--screenshot={png}",
            f"--window-size={size[0]},{size[1]}",
            page.as_uri(),
        ]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def js_errors(stderr):
    """Console lines of uncaught errors and console.error calls."""
    return [
        x for x in stderr.splitlines() if "CONSOLE" in x and ("Uncaught" in x or ":ERROR:" in x)
    ]


def pixels(png):
    return (image.imread(png)[:, :, :3] * 255).round().astype(int)


def has_colour(px, hex_colour, tolerance=6):
    want = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)])
    return bool((np.abs(px - want).max(axis=2) <= tolerance).any())


@pytest.fixture
def needs_chromium():
    if not chromium():
        missing("chromium", "not installed (scripts/install-deps.sh installs it)")


@pytest.mark.usefixtures("needs_chromium")
def test_the_console_check_sees_a_javascript_error(tmp_path):
    """The check below can fail: a page with an error is caught."""
    page = tmp_path / "bad.html"
    page.write_text("<html><body>x<script>undefinedFunction();</script></body></html>")
    p = open_page(page, tmp_path / "bad.png", SCREEN)
    assert js_errors(p.stderr), p.stderr[-2000:]


@pytest.mark.usefixtures("needs_chromium")
def test_report_in_a_browser(tiny, tmp_path):
    d, db, _ = tiny
    page = tmp_path / "report.html"
    report_of(d, db, page)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    first, tall = ARTIFACTS / "report-first-screen.png", ARTIFACTS / "report-tall.png"
    for png, size in ((first, SCREEN), (tall, TALL)):
        png.unlink(missing_ok=True)  # an earlier run's picture is not this run's
        p = open_page(page, png, size)
        assert p.returncode == 0 and png.exists(), p.stderr[-2000:]
        assert not js_errors(p.stderr), js_errors(p.stderr)
    px = pixels(first)
    assert px.shape[:2] == (SCREEN[1], SCREEN[0])
    # the first screen: text in its first lines, the summary table's header
    # (#eef) and its fastest (or tied) cell highlighted
    assert (px[10:80].max(axis=2) < 90).sum() > 200, "no text in the page's first lines"
    assert has_colour(px, "#eeeeff", 2), "no table header on the first screen"
    assert has_colour(px, "#d4f5d4", 2) or has_colour(px, "#e8f4e8", 2), "no summary cell up top"
    # further down, the figures: mpiio in its palette colour
    tall_px = pixels(tall)
    assert has_colour(tall_px, palette.colour("mpiio"))
    assert np.mean(tall_px) > 180  # a light page, not a black or error screen
