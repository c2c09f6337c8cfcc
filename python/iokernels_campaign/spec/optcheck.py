# SPDX-License-Identifier: BSD-3-Clause
"""A campaign's option values and rank counts, checked before anything runs.

Each value against its type in `iokernels KERNEL --help --json` (whole
numbers in the C type's range, finite numbers, three whole numbers, one line
of text, a choice). That JSON has types and choices but no ranges and no
rule on rank counts, and the binary has no option that checks a command
line without running it: the ranges and rank rules the kernels enforce only
once a job runs (configure() and plan() in src/kernels/*/, src/core/main.c)
are mirrored in RANGES and rank_refusal() below; keep them in step."""

import math
import re

INT_LIMITS = {"int": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
WHOLE = re.compile(r"[+-]?[0-9]+\Z")
INT3_SEP = re.compile(r"[,x\s]+")

# (section, option) -> (least, most), None: no bound. Section "core" holds
# for every kernel.
RANGES = {
    ("core", "iterations"): (1, None),
    ("core", "deadline"): (0, None),
    ("btio", "dumps"): (1, None),
    ("btio", "method"): (0, 3),
    ("btio", "grid"): (1, None),  # each of the three
    ("amrex", "ncells"): (1, None),
    ("amrex", "ncomp"): (1, None),
    ("chombo", "ncomp"): (1, None),
}


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


def _range(opt, values):
    lo, hi = RANGES.get((opt.section, opt.name), (None, None))
    for v in values:
        if lo is not None and v < lo or hi is not None and v > hi:
            if hi is None:
                raise BadValue(f"at least {lo}")
            raise BadValue(f"{lo} to {hi}")


def text(opt, value):
    """The option's value as the command line takes it (a string), or
    BadValue naming what it expects. Flags and choices are checked by the
    caller."""
    if opt.type in INT_LIMITS:
        if isinstance(value, list):
            raise BadValue("one whole number")
        n = _whole(opt, value)
        _range(opt, [n])
        return str(n)
    if opt.type == "double":
        if isinstance(value, list):
            raise BadValue("one number")
        x = _number(value)
        _range(opt, [x])
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
        _range(opt, nums)
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


def grid(args):
    """BTIO's grid as three ints from checked args, or None."""
    g = args.get("grid")
    return [int(x) for x in g.split(",")] if isinstance(g, str) else None


def rank_refusal(kernel, ranks, args, modes, options, has_input):
    """Why `kernel` refuses to run at `ranks` ranks with `args` (the checked
    command line values) and `modes`, or None."""
    if kernel != "btio":
        return None
    if "both" in modes:
        return 'BTIO writes or reads in one run: give modes = ["write", "read"]'
    q = math.isqrt(ranks)
    if q * q != ranks:
        return f"BTIO needs a square number of processes (1, 4, 9, 16, ...), not {ranks}"
    g = grid(args)
    if g is None and not has_input and "grid" in options:  # the built-in default
        default = options["grid"].default
        g = default if isinstance(default, list) and len(default) == 3 else None
    if g and min(g) // q < 3:
        return (
            f"grid {'x'.join(map(str, g))} is too small for {ranks} processes: cells need "
            f"at least 3 points per axis (smallest here {min(g) // q}); use a larger grid"
        )
    return None
