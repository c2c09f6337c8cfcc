# SPDX-License-Identifier: BSD-3-Clause
"""Runs launched and watched: the runner, the launchers (launch), what
became of a batch job (jobfate), what a step left (outcome), --resume
(resumed), what the binary offers (inventory). May use: base, store, spec."""
