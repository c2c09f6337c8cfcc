# SPDX-License-Identifier: BSD-3-Clause
"""The HTML report as a person sees it: a headless Chromium screenshot of the
page (Debian's chromium, installed by scripts/install-deps.sh)."""

import shutil
import subprocess
import tempfile

import numpy as np
import pytest
from conftest import cli
from matplotlib import image

WIDTH, HEIGHT = 1200, 2000


def chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot(page, png):
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
            f"--user-data-dir={profile}",
            f"--screenshot={png}",
            f"--window-size={WIDTH},{HEIGHT}",
            page.as_uri(),
        ]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not chromium(), reason="chromium is not installed (scripts/install-deps.sh)")
def test_report_screenshot_shows_tables_and_plots(tiny, tmp_path):
    d, db, _ = tiny
    page = tmp_path / "report.html"
    assert cli("report", db, "-o", page, cwd=d).returncode == 0
    png = tmp_path / "report.png"
    p = screenshot(page, png)
    assert p.returncode == 0 and png.exists(), p.stderr
    px = (image.imread(png)[:, :, :3] * 255).round().astype(int)
    assert px.shape[:2] == (HEIGHT, WIDTH)
    # the page is drawn: dark text on the light background in its first lines,
    # the summary's fastest backend highlighted (green) on the first screen,
    # and the kernel's figure further down (matplotlib's first colour: mpiio)
    assert (px[10:80].max(axis=2) < 90).sum() > 200, "no text in the page's first lines"
    first = {tuple(c) for c in (px[:900] // 4).reshape(-1, 3)}
    assert (0xD4 // 4, 0xF5 // 4, 0xD4 // 4) in first, "no highlighted best cell up top"
    colours = {tuple(c) for c in (px // 8).reshape(-1, 3)}
    assert (0x1F // 8, 0x77 // 8, 0xB4 // 8) in colours  # mpiio's bars
    assert np.mean(px) > 180  # a light page, not a black or error screen
