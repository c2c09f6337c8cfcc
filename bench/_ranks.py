# SPDX-License-Identifier: BSD-3-Clause
"""`--ranks 4,16,64` for every bench script that launches MPI ranks: the
rank counts to run, checked, with defaults that fit this machine.

Usable cores are counted as src/core/measure/cores.c counts the record's
usable_cores: the CPUs this process may run on (its affinity mask, as
`nproc` says), lowered to a cgroup CPU quota (rounded up) when one is set.
IOK_BENCH_CORES=N pretends the machine has N (the tests use it).

Default rank counts: the powers of two up to the usable cores, and the
cores themselves (1,2 on 2 cores; 1,2,4,6 on 6); for a kernel that needs
square counts (BTIO), the squares of those powers of two up to the cores
and the largest square below them (1 on 2 cores; 1,4 on 4; 1,4,9 on 12).
An explicit count above the cores runs (scripts/mpiexec.sh passes
--oversubscribe to OpenMPI) and is labelled with the words the binary's
headlines and the records use: "oversubscribed (4 ranks on 2 cores)".

A script adds the option with add_option(parser), reads a.ranks with
counts(a, ...), prints header(counts, cores) and labels each row with
label(r, cores)."""

import contextlib
import math
import os
import sys
from pathlib import Path

ENV = "IOK_BENCH_CORES"


def cgroup_cpus():
    """The least CPU quota (quota / period) of this process's cgroup and its
    parents, v2 or v1, or None (cores.c's iok_cpus_cgroup)."""
    best = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            hid, ctrl, cg = (line.split(":", 2) + ["", ""])[:3]
            v2 = hid == "0" and not ctrl
            if not v2 and "cpu" not in ctrl.split(","):
                continue
            mounts = (
                ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
                if v2
                else ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"]
            )
            for mnt in mounts:
                d = Path(mnt + (cg if cg != "/" else ""))
                while len(str(d)) >= len(mnt):
                    q = None
                    with contextlib.suppress(OSError, ValueError):
                        if v2:  # "max 100000": no quota
                            quota, period = (d / "cpu.max").read_text().split()
                        else:
                            quota = (d / "cpu.cfs_quota_us").read_text()
                            period = (d / "cpu.cfs_period_us").read_text()
                        quota, period = float(quota), float(period)
                        q = quota / period if quota > 0 and period > 0 else None
                    if q and (best is None or q < best):
                        best = q
                    if d.parent == d:
                        break
                    d = d.parent
    return best


def usable_cores():
    """The cores the bench's ranks may run on (cores.c's usable_cores)."""
    env = os.environ.get(ENV, "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:
        n = os.cpu_count() or 1
    q = cgroup_cpus()
    if q:
        n = min(n, max(1, math.ceil(q - 1e-9)))
    return n


def is_square(n):
    return math.isqrt(n) ** 2 == n


def defaults(cores, square=False):
    """The rank counts that fit `cores` without oversubscription."""
    if square:
        out = {p * p for p in _powers(math.isqrt(cores))} | {math.isqrt(cores) ** 2}
    else:
        out = set(_powers(cores)) | {cores}
    return sorted(out)


def _powers(n):
    p = 1
    while p <= n:
        yield p
        p *= 2


def parse(text):
    """ "4,16,64" -> [4, 16, 64]; ValueError with the reason otherwise."""
    try:
        out = [int(x) for x in text.split(",")]
    except ValueError:
        msg = f"--ranks {text}: give counts separated by commas (--ranks 1,2,4)"
        raise ValueError(msg) from None
    if not out or min(out) < 1:
        raise ValueError(f"--ranks {text}: rank counts are at least 1")
    return sorted(set(out))


def add_option(ap, square=False, what="the runs"):
    more = ", square counts (BTIO)" if square else ""
    ap.add_argument(
        "--ranks",
        metavar="R1,R2,...",
        help=f"rank counts of {what}{more} (default: those that fit this machine's usable "
        "cores without oversubscription; more than the cores runs oversubscribed, labelled)",
    )


def counts(a, script, square=False, cores=None):
    """a.ranks parsed, or the defaults; a wrong list exits with a one-line error."""
    cores = usable_cores() if cores is None else cores
    if a.ranks is None:
        return defaults(cores, square)
    try:
        out = parse(a.ranks)
    except ValueError as e:
        sys.exit(f"bench/{script}: {e}")
    if square:
        bad = [r for r in out if not is_square(r)]
        if bad:
            sys.exit(f"bench/{script}: {square_refusal(a.ranks, bad, cores)}")
    return out


def square_refusal(text, bad, cores):
    fit = ",".join(str(r) for r in defaults(cores, True))
    return (
        f"--ranks {text}: BTIO runs on square rank counts only (1, 4, 9, 16, ...), not "
        f"{', '.join(str(r) for r in bad)}: give square counts, e.g. --ranks {fit}"
    )


def label(ranks, cores):
    """ "oversubscribed (R ranks on C cores)" when ranks outnumber cores, else ""."""
    if ranks <= cores:
        return ""
    return f"oversubscribed ({ranks} ranks on {cores} core{'s' if cores != 1 else ''})"


def header(rank_counts, cores):
    """The header line: the usable cores, the rank counts, and each count
    that oversubscribes them."""
    line = (
        f"{cores} usable core{'s' if cores != 1 else ''}; rank counts "
        f"{','.join(str(r) for r in rank_counts)}"
    )
    over = [label(r, cores) for r in rank_counts if r > cores]
    return line + (": " + "; ".join(over) if over else " (none oversubscribed)")
