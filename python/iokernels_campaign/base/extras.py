# SPDX-License-Identifier: BSD-3-Clause
"""The optional packages some commands need, and the one line that says
which extra of iokernels-campaign brings a missing one (pyproject.toml's
[project.optional-dependencies]; docs/install.md lists them). The line
names the folder the tool was installed from when it was (an install
tree's share/iokernels/python), else the package's name."""

import importlib.util
import json
from importlib import metadata

# module -> (extra, what needs it)
EXTRAS = {
    "optuna": ("tune", "tune"),
    "darshan": ("trace", "trace2replay"),
    "pyarrow": ("parquet", "export --parquet"),
}
DIST = "iokernels-campaign"


class MissingExtra(Exception):
    """An optional package a command needs is not installed (exit 2)."""


def source():
    """What `pip install` took this tool from: a folder (install tree,
    source) or the package's name."""
    try:
        url = json.loads(metadata.distribution(DIST).read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError):
        return DIST
    where = url.get("url", "")
    return where.removeprefix("file://") if where.startswith("file://") else DIST


def message(module):
    extra, needs = EXTRAS[module]
    return (
        f"{needs} needs the {module} package, which is not installed: "
        f"pip install '{source()}[{extra}]' (or [all] for every command)"
    )


def need(module):
    """Raises MissingExtra when `module` cannot be found."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise MissingExtra(message(module))


def missing(error):
    """The MissingExtra for a ModuleNotFoundError of an optional package
    (its own or one it imports by that name), else None."""
    top = (error.name or "").split(".")[0]
    return MissingExtra(message(top)) if top in EXTRAS else None
