# SPDX-License-Identifier: BSD-3-Clause
"""The process's limits (`ulimit -v`, `ulimit -f`): the line that names
one when it is what stopped the tool.

Memory. The tool loads numpy, pandas and matplotlib before any command.
Under an address-space limit too small for them and a report they fail in
ways Python cannot turn into a line: OpenBLAS ends the process itself
("OpenBLAS error: Memory allocation still failed"), a library's loader
crashes, PIL says "codec configuration error". So the entry point
(__main__.py) compares the limit with what the tool needs before it
imports them (too_little), loads numpy with one OpenBLAS thread unless the
user chose (one_blas_thread: OpenBLAS maps a buffer per thread, one thread
per core, far more than the tool's small arrays need) and has OpenBLAS map
its buffer at once (warm_blas). A MemoryError later (exhausted) is one line
naming the limit (out_of_memory); another failure under a limit says the
limit may be the cause (suspect).

File size. Python ignores SIGXFSZ, so a write past `ulimit -f` fails with
EFBIG: too_large names the file and the limit. SQLite says "disk I/O
error" (store.py names its file)."""

import contextlib
import errno
import os
import resource

# The address space the tool needs to start and write a report, measured
# (one OpenBLAS thread; numpy 2.4, pandas 3.1, matplotlib 3.11): the
# imports map about 370 MiB, the report of a small campaign fails below
# 530 MiB and passes from 550 MiB. Room for other versions and larger
# stores on top.
NEEDED = 640 * 2**20


def _limit(which):
    soft, _ = resource.getrlimit(which)
    return None if soft == resource.RLIM_INFINITY else soft


def address_space():
    """The address-space limit (RLIMIT_AS, ulimit -v) in bytes, or None."""
    return _limit(resource.RLIMIT_AS)


def file_size():
    """The file size limit (RLIMIT_FSIZE, ulimit -f) in bytes, or None."""
    return _limit(resource.RLIMIT_FSIZE)


def _kib(n):
    return n // 1024


def too_little():
    """The line saying the address-space limit is below what the tool
    needs, or None."""
    have = address_space()
    if have is None or have >= NEEDED:
        return None
    return (
        f"the address-space limit (ulimit -v {_kib(have)}, in KiB) is below the "
        f"{_kib(NEEDED)} KiB this tool needs to load numpy, pandas and matplotlib and "
        f"write a report: raise it (ulimit -v {_kib(NEEDED)} or more, or unlimited)"
    )


def exhausted(exc):
    """Whether exc says memory ran out: MemoryError, ENOMEM, or a compiled
    module the loader could not map."""
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, OSError) and exc.errno == errno.ENOMEM:
        return True
    text = str(exc)
    return isinstance(exc, ImportError) and (
        "failed to map segment" in text or "Cannot allocate memory" in text
    )


def out_of_memory(exc):
    """The line for exhausted(exc): the limit named when there is one."""
    have = address_space()
    if have is None:
        return f"out of memory ({type(exc).__name__}): free memory, or run where there is more"
    return (
        f"out of memory ({type(exc).__name__}) under the address-space limit of "
        f"{_kib(have)} KiB (ulimit -v): raise it, or unlimited"
    )


def suspect(exc):
    """For a failure a library does not explain (an OSError without errno,
    a SystemError) under an address-space limit: words saying the limit may
    be the cause; else ''."""
    have = address_space()
    if have is None or (isinstance(exc, OSError) and exc.errno is not None):
        return ""
    return f" (under an address-space limit of {_kib(have)} KiB, ulimit -v: raise it?)"


def too_large(path):
    """The line for EFBIG writing path (None: not known)."""
    what = path if path is not None else "a file"
    have = file_size()
    if have is None:
        return f"{what}: too large for its file system (File too large)"
    return (
        f"{what}: writing it went past the file size limit of {_kib(have)} KiB "
        "(ulimit -f): raise it (ulimit -f unlimited)"
    )


def warm_blas():
    """Has OpenBLAS map its buffer now (a product large enough to use it),
    while the address space is there: it keeps it for every later call,
    where failing to map it would end the process with OpenBLAS's own
    message instead of a line of the tool's."""
    import numpy

    a = numpy.ones((256, 256))
    a @ a


@contextlib.contextmanager
def one_blas_thread():
    """OPENBLAS_NUM_THREADS=1 for the block (numpy's import), unless the
    user set it; out of the environment again afterwards, so the runs the
    tool launches get the user's environment."""
    ours = "OPENBLAS_NUM_THREADS" not in os.environ
    if ours:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        if ours:
            os.environ.pop("OPENBLAS_NUM_THREADS", None)
