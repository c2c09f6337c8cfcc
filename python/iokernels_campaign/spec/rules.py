# SPDX-License-Identifier: BSD-3-Clause
"""Which option values a backend refuses, checked before anything runs.

The binary says what each backend can do (`iokernels --list`, section
"capabilities": the flags of include/iokernels/backend.h); the refusals
mirror settle_core() in src/core/cmd/main.c. CAPS below is only the fallback for
stored results read without the binary that made them (plots)."""

ALL_APIS = {"blocking", "nonblocking", "varn"}

# backend -> (API flavours it has, moves no data)
CAPS = {
    "null": (ALL_APIS, True),
    "mpiio": ({"blocking", "nonblocking"}, False),
    "pnetcdf": (ALL_APIS, False),
    "hdf5": ({"blocking"}, False),
    "netcdf4": ({"blocking"}, False),
    "adios2": ({"blocking", "nonblocking"}, False),
}


def _from_words(words):
    """(API flavours, moves no data) from `--list` capability words."""
    apis = {"blocking"} | {a for a in ("nonblocking", "varn") if a in words}
    return apis, "noio" in words


def apis(backend, caps=None):
    """The API flavours of `backend` (the binary's caps when known, else
    CAPS), or None for a backend neither knows."""
    if caps and backend in caps:
        return _from_words(caps[backend])[0]
    return CAPS[backend][0] if backend in CAPS else None


def refusal(backend, args, caps=None):
    """Why `backend` cannot run with option values `args` (a dict), or None.
    `caps`: {backend: capability words} from the binary, when known."""
    if caps and backend in caps:
        apis, noio = _from_words(caps[backend])
    elif backend in CAPS:
        apis, noio = CAPS[backend]
    else:
        return None
    api = args.get("api")
    if api is not None and api not in apis:
        return f"it has no {api} API"
    if noio and args.get("verify") is True:
        return "it moves no data, so verify cannot check it (set verify = false for it)"
    return None


def moves_no_data(backend):
    return backend in CAPS and CAPS[backend][1]
