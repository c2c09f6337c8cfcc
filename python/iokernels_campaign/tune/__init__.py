# SPDX-License-Identifier: BSD-3-Clause
"""The tuner: tune files (tune_spec), the search space (tune_space), the
search (tune), its answer (tune_answer) and --resume (tune_resume). May use:
base, store, spec, run, report."""
