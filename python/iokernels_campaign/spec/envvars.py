# SPDX-License-Identifier: BSD-3-Clause
"""Environment variables a campaign exports to its runs: `[campaign.env]` and
`[kernel.env]` tables (Darshan's LD_PRELOAD and DARSHAN_*, ROMIO_HINTS,
PNETCDF_HINTS, HDF5_*, ...).

Values are literal strings (no $VAR expansion) in which these placeholders
are filled in for each run; `{{` and `}}` are literal braces:

    {case}       the case's directory name
    {casedir}    the case's directory (absolute)
    {rundir}     the directory the run runs in: CASEDIR/iterN (absolute)
    {mode}       write, read, ...
    {iteration}  1, 2, ...

The store keeps the variables each run had, names and values, except the
values of names that look like secrets (see SECRET), kept as REDACTED."""

import re
import string

PLACEHOLDERS = ("case", "casedir", "rundir", "mode", "iteration")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SECRET = re.compile(
    r"(^|_)(TOKEN|SECRET|PASSWORD|PASSWD|PASS|KEY|APIKEY|CREDENTIALS?|AUTH|COOKIE|SESSION)(_|$)",
    re.IGNORECASE,
)
REDACTED = "<redacted>"


class EnvError(ValueError):
    """A bad env table entry: the message names the variable and the fix."""


def check(table, where_key):
    """The table as ((name, template), ...) in file order; where_key names
    the table in messages ("[campaign.env]")."""
    if not isinstance(table, dict):
        raise EnvError(f'{where_key} must be a table of NAME = "value", got {table!r}')
    out = []
    for name, value in table.items():
        if not NAME.fullmatch(name):
            raise EnvError(
                f"{where_key}: {name!r} is not an environment variable name "
                "(letters, digits and _, not starting with a digit)"
            )
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise EnvError(
                f'{where_key}: {name} must be a string such as "1" or "/path", got {value!r}'
            )
        value = str(value)
        if not value.isprintable():
            raise EnvError(f"{where_key}: {name} must be one line of printable characters")
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(value) if f is not None]
        except ValueError as e:
            raise EnvError(
                f"{where_key}: {name} = {value!r}: {e} (write {{{{ and }}}} for literal braces)"
            ) from None
        for f in fields:
            if f not in PLACEHOLDERS:
                known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
                raise EnvError(
                    f"{where_key}: {name} uses an unknown placeholder {{{f}}} (known: {known}; "
                    "write {{ and }} for literal braces)"
                )
        out.append((name, value))
    return tuple(out)


def merge(*tables):
    """Later tables win, names keep their first position."""
    out = {}
    for t in tables:
        out.update(dict(t))
    return tuple(out.items())


def expand(env, case, casedir, rundir, mode, iteration):
    """{name: value} with the placeholders filled in for one run."""
    values = {
        "case": case,
        "casedir": str(casedir),
        "rundir": str(rundir),
        "mode": mode,
        "iteration": str(iteration),
    }
    return {name: template.format(**values) for name, template in env}


def redact(env):
    """The variables as the store keeps them: secret-looking values hidden."""
    return {k: (REDACTED if SECRET.search(k) else v) for k, v in env.items()}
