# SPDX-License-Identifier: BSD-3-Clause
"""Paths for the tests of the generated reference (docs/reference/, man/)."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("IOK_BIN", REPO / "build" / "iokernels")).resolve()
GEN = REPO / "scripts" / "gen-reference"
MAN = REPO / "man" / "iokernels.1"
