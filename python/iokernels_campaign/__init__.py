# SPDX-License-Identifier: BSD-3-Clause
"""Campaigns of iokernels runs: sweeps over kernels x backends x ranks, a SQLite
results store, plots and one self-contained HTML report."""

__version__ = "0.2.0"
