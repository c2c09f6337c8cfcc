# SPDX-License-Identifier: BSD-3-Clause
"""A campaign's option values and rank counts, checked before anything runs.

Each value against its type in `iokernels KERNEL --help --json` (whole
numbers in the C type's range, finite numbers, three whole numbers, one line
of text, a choice): what it takes to write the command line at all. Whether
the kernel accepts the values (ranges, rank rules, options that exclude each
other) only the binary says: refusals() asks it, `iokernels --check-batch`
with one `KERNEL --check --ranks N ...` question a line, all of a campaign's
in one process, and hands on its one line. No range or rank rule is copied
here."""

import json
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


def refusals(binary, questions):
    """The binary's one line refusing each of `questions` ((argv, ranks)
    pairs: the kernel's command line as Case.argv gives it, a rank count or
    a tuple of counts), or None where it accepts it; in order. One process
    answers them all: `BINARY --check-batch`, a question a line, each
    answered as `BINARY KERNEL --check --ranks N[,N...] ...` would (its
    error line, byte for byte), in an empty folder as a case runs in its
    own: at 1 rank the binary configures and plans the run; at more it
    checks the options and the rank rules (the plan needs the ranks).
    Answers are kept: each distinct question is asked once."""
    binary = str(binary)
    keys = [(tuple(argv), _counts(n)) for argv, n in questions]
    todo = list(dict.fromkeys(k for k in keys if (binary, k) not in _answers))
    while todo:  # a case that ends the process is answered, then the rest asked again
        got = _batch(binary, todo)
        for key, why in zip(todo, got, strict=False):
            _answers[binary, key] = why
        todo = todo[len(got) :]
    return [_answers[binary, k] for k in keys]


_answers = {}  # (binary, (argv, counts)): the binary's line, or None


def _counts(ranks):
    return ",".join(map(str, (ranks,) if isinstance(ranks, int) else ranks))


def _batch(binary, todo):
    """Answers for a prefix of `todo`, at least one: the last one the
    process's own line when it ended before answering them all."""
    lines = "".join(json.dumps([counts, *argv]) + "\n" for argv, counts in todo)
    with tempfile.TemporaryDirectory(prefix="iok-check-") as empty:
        try:
            p = subprocess.run(
                [binary, "--check-batch"],
                input=lines,
                capture_output=True,
                text=True,
                timeout=120 * len(todo),
                cwd=empty,
            )
        except subprocess.TimeoutExpired:
            return [f"{binary} --check-batch did not answer in {120 * len(todo)} s"] * len(todo)
        except OSError as e:
            return [f"cannot run {binary}: {e.strerror}"] * len(todo)
    got = [None if a == "ok" else _line(a) for a in p.stdout.splitlines()[: len(todo)]]
    if len(got) < len(todo):  # the process ended at the next case: its line
        said = [x for x in p.stderr.splitlines() if x.strip()]
        got.append(_line(said[-1]) if said else f"exited {p.returncode}")
    return got


def _line(line):
    return line.removeprefix("iokernels: error: ")
