# SPDX-License-Identifier: BSD-3-Clause
"""A campaign's option values and rank counts, checked before anything runs.

Each value against its type in `iokernels KERNEL --help --json` (whole
numbers in the C type's range, finite numbers, three whole numbers, one line
of text, a choice): what it takes to write the command line at all. Whether
the kernel accepts the values (ranges, rank rules, options that exclude each
other) only the binary says: refusal() asks it, `iokernels KERNEL --check
--ranks N ...`, once per distinct command line and rank count, and hands on
its one line. No range or rank rule is copied here."""

import concurrent.futures
import functools
import math
import re
import subprocess
import tempfile

INT_LIMITS = {"int": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
WHOLE = re.compile(r"[+-]?[0-9]+\Z")
INT3_SEP = re.compile(r"[,x\s]+")


class BadValue(Exception):
    """What the option expects (the value did not fit)."""


def _whole(opt, v):
    if isinstance(v, bool):
        raise BadValue(f"a whole number ({opt.meta})")
    if isinstance(v, str) and WHOLE.match(v.strip()):
        v = int(v.strip())
    if not isinstance(v, int):
        raise BadValue("a whole number")
    lo, hi = INT_LIMITS.get(opt.type, INT_LIMITS["int64"])
    if not lo <= v <= hi:
        raise BadValue(f"a whole number from {lo} to {hi}")
    return v


def _number(v):
    if isinstance(v, bool):
        raise BadValue("a number")
    if isinstance(v, str):
        try:
            v = float(v)
        except ValueError:
            raise BadValue("a number") from None
    if not isinstance(v, int | float) or not math.isfinite(v):
        raise BadValue("a finite number")
    return v


def text(opt, value):
    """The option's value as the command line takes it (a string), or
    BadValue naming what it expects. Flags and choices are checked by the
    caller."""
    if opt.type in INT_LIMITS:
        if isinstance(value, list):
            raise BadValue("one whole number")
        return str(_whole(opt, value))
    if opt.type == "double":
        if isinstance(value, list):
            raise BadValue("one number")
        x = _number(value)
        return str(value) if isinstance(value, str) else repr(x)
    if opt.type == "int3":
        parts = value if isinstance(value, list) else None
        if isinstance(value, str):
            parts = [p for p in INT3_SEP.split(value.strip()) if p]
        if parts is None or len(parts) != 3:
            raise BadValue('three whole numbers, "X,Y,Z" or [X, Y, Z]')
        try:
            nums = [_whole(opt, p) for p in parts]
        except BadValue:
            raise BadValue('three whole numbers, "X,Y,Z" or [X, Y, Z]') from None
        return ",".join(map(str, nums))
    if isinstance(value, list):
        if not value or not all(isinstance(v, int | float | str) for v in value):
            raise BadValue(f"a value ({opt.meta})")
        value = ",".join(str(v) for v in value)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise BadValue(f"a value ({opt.meta})")
    value = str(value)
    if not value.isprintable() or len(value) > 4096:
        raise BadValue("one line of printable text")
    return value


def refusal(binary, argv, ranks):
    """The binary's one line refusing the kernel's command line `argv` (as
    Case.argv gives it) at `ranks` ranks (a count, or a tuple of counts),
    or None when it accepts it. Asks `BINARY KERNEL --check --ranks N[,N...]
    ...` in an empty folder, as a case runs in its own: at 1 rank the binary
    configures and plans the run; at more it checks the options and the rank
    rules (the plan needs the ranks). Answers are kept: one call per
    distinct question."""
    counts = (ranks,) if isinstance(ranks, int) else tuple(ranks)
    return _refusal(str(binary), tuple(argv), ",".join(map(str, counts)))


@functools.cache
def _refusal(binary, argv, ranks):
    cmd = [binary, argv[0], "--check", "--ranks", ranks, *argv[1:]]
    with tempfile.TemporaryDirectory(prefix="iok-check-") as empty:
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=empty)
        except subprocess.TimeoutExpired:
            return f"{' '.join(cmd)} did not answer in 120 s"
        except OSError as e:
            return f"cannot run {binary}: {e.strerror}"
    if p.returncode == 0:
        return None
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    line = lines[-1] if lines else f"exited {p.returncode}"
    return line.removeprefix("iokernels: error: ")


def first_refusal(binary, questions):
    """The first (argv, ranks, line) of `questions` ((argv, ranks) pairs)
    the binary refuses, or None. The rank counts of one command line are
    asked in one call, the command lines side by side (each call mostly
    waits for MPI to start); a refused call is asked again count by count
    to name the count."""
    counts = {}
    for argv, n in questions:
        counts.setdefault(tuple(argv), []).append(n)
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        asked = pool.map(lambda a: refusal(binary, a, counts[a]), counts)
        answers = dict(zip(counts, asked, strict=True))
    for argv, n in questions:
        key = tuple(argv)
        why = answers[key] and (refusal(binary, argv, n) if len(counts[key]) > 1 else answers[key])
        if why:
            return argv, n, why
    for key, why in answers.items():  # refused for no one count: for all of them
        if why:
            return list(key), ",".join(map(str, counts[key])), why
    return None
