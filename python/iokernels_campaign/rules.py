"""Which option values a backend refuses, checked before anything runs.

`iokernels --list` does not print the backends' capability flags
(include/iokernels/backend.h), so the refusals of settle_core() in
src/core/main.c are mirrored here for the backends known today. A backend
not in this table (a new one) is not checked here: the run itself refuses,
and the case is stored as failed with the run's own error line."""

ALL_APIS = {"blocking", "nonblocking", "varn"}

# backend -> (API flavours it has, moves no data)
CAPS = {
    "null": (ALL_APIS, True),
    "mpiio": ({"blocking"}, False),
    "pnetcdf": (ALL_APIS, False),
    "hdf5": ({"blocking"}, False),
    "netcdf4": ({"blocking"}, False),
}


def refusal(backend, args):
    """Why `backend` cannot run with option values `args` (a dict), or None."""
    if backend not in CAPS:
        return None
    apis, noio = CAPS[backend]
    api = args.get("api")
    if api is not None and api not in apis:
        return f"it has no {api} API"
    if noio and args.get("verify") is True:
        return "it moves no data, so verify cannot check it (set verify = false for it)"
    return None


def moves_no_data(backend):
    return backend in CAPS and CAPS[backend][1]
