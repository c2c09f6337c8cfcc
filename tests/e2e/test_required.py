# SPDX-License-Identifier: BSD-3-Clause
"""The backends this platform's install brings are built: CMake leaves an
optional backend out when it does not find its library (build/backends.txt
says why), and without this test every test of that backend would merely
not run. A run that means to go without one declares it
(IOK_ALLOW_MISSING=adios2): then this test is a counted, named skip."""

import json
import subprocess

import pytest
from conftest import BIN
from declared import missing

# scripts/install-deps.sh installs PnetCDF, HDF5 and NetCDF; make venv builds ADIOS2
PLATFORM_BACKENDS = ("mpiio", "null", "pnetcdf", "hdf5", "netcdf4", "adios2")


def listed():
    """{backend: version} as the binary lists them; a module that does not
    load (its library gone since the build) has no version."""
    out = subprocess.run([str(BIN), "--list", "--json"], capture_output=True, check=True).stdout
    return {b["name"]: b.get("version") for b in json.loads(out)["backends"]}


@pytest.mark.parametrize("backend", PLATFORM_BACKENDS)
def test_the_platforms_backends_are_built_and_load(backend):
    have = listed()
    if backend not in have:
        missing(backend, f"backend not built (the reason is in {BIN.parent / 'backends.txt'})")
    if have[backend] is None:
        missing(backend, "built, but its module does not load (iokernels --list says why)")
