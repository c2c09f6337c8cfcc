# SPDX-License-Identifier: BSD-3-Clause
"""The PML the test trees' MPI jobs start with (imported by the e2e and
campaign conftests, before any job).

OpenMPI's default PML on this machine is UCX, whose start-up costs about
0.2 s of every job on one node (measured: a 2-rank `iokernels --version`
takes 0.33 s, 0.14 s with ob1), and the test trees start a few thousand
jobs: tests/e2e/test_compute_async_kernels.py and test_btio.py took 84 s
against 46 s. So the jobs run on OpenMPI's own ob1 PML (shared memory
between ranks on one node, TCP between nodes, as UCX's transports are)
unless the environment names a PML already or sets IOK_TEST_DEFAULT_PML=1,
which `make test-sanitize` does: its subset of the end-to-end tests runs on
OpenMPI's default. What the tests check (the I/O libraries, MPI-IO and its
layers, the suite's own code) runs the same over either PML; MPICH ignores
the variable."""

import os


def choose_pml():
    if not os.environ.get("IOK_TEST_DEFAULT_PML"):
        os.environ.setdefault("OMPI_MCA_pml", "ob1")
