# SPDX-License-Identifier: BSD-3-Clause
"""Campaign files read and checked before anything runs: the cases they
expand to (spec), every key they may hold (keys), option values and rank
counts (optcheck), what a backend refuses (rules), exported variables
(envvars), and the [slurm] and [lustre] tables with what they become on the
machine (slurm: the batch script; lustre: lfs setstripe), which spec checks.
May use: base."""
