# SPDX-License-Identifier: BSD-3-Clause
"""The Spack package's test (test_spack.py): skips are failures unless declared."""

import sys
from pathlib import Path

# Skips are failures unless declared (tests/declared.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import declared  # noqa: E402


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("iok_declared"):
        config.pluginmanager.register(declared, "iok_declared")
