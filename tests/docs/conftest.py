# SPDX-License-Identifier: BSD-3-Clause
"""Paths for the tests of the generated reference (docs/reference/, man/)."""

import os
import sys
from pathlib import Path

# Skips are failures unless declared (tests/declared.py): registered once
# per session, whichever of the three test trees' conftests comes first.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
import declared  # noqa: E402


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("iok_declared"):
        config.pluginmanager.register(declared, "iok_declared")


REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("IOK_BIN", REPO / "build" / "iokernels")).resolve()
GEN = REPO / "scripts" / "gen-reference"
MAN = REPO / "man" / "iokernels.1"
CAMPAIGN_MAN = REPO / "man" / "iokernels-campaign.1"
