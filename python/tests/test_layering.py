# SPDX-License-Identifier: BSD-3-Clause
"""The campaign package's rooms (CONTRIBUTING.md, "The campaign package's rooms"):
each module lives in one room and imports only from its own room and the rooms
below it. The imports are read from the source (ast), function-local ones
included, so a report that starts to run jobs, a store that reaches for the
report, or two modules importing each other fail here, naming the line. Each
rule is also shown failing on a planted package built to break it."""

import ast
import tomllib
from pathlib import Path

import pytest

PACKAGE = "iokernels_campaign"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

# What each room may import besides itself. "top" is the command line (cli.py,
# __main__.py, __init__.py), which may use every room.
ALLOWED = {
    "base": set(),
    "store": {"base"},
    "spec": {"base"},
    "trace": {"base"},
    "run": {"base", "store", "spec"},
    "report": {"base", "spec"},
    "tune": {"base", "store", "spec", "run", "report"},
    "top": {"base", "store", "spec", "trace", "run", "report", "tune"},
}
TOP_MODULES = {"__init__", "__main__", "cli"}


def read_package(root=ROOT):
    """{dotted module name: source} of every .py under root."""
    sources = {}
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).with_suffix("")
        sources[".".join((PACKAGE, *rel.parts))] = p.read_text()
    return sources


def is_package(name, sources):
    return f"{name}.__init__" in sources or name == PACKAGE


def room_of(name, sources):
    """The room of a dotted module name (a subpackage's own name too), or None
    for a module without one (flat at the top but not the command line)."""
    name = name.removesuffix(".__init__")
    parts = name.split(".")[1:]
    if not parts:
        return "top"
    if len(parts) == 1 and not is_package(name, sources):
        return "top" if parts[0] in TOP_MODULES else None
    return parts[0]


def imports(name, text, sources):
    """(line, imported module) for every import of the package in text."""
    package = name if name.endswith(".__init__") else name.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith(PACKAGE)]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.split(".")[0] == PACKAGE:
                target = node.module
            else:
                continue
            # `from PKG import mod` imports the module PKG.mod
            subs = [f"{target}.{a.name}" for a in node.names]
            subs = [s for s in subs if s in sources or is_package(s, sources)]
            found += [(node.lineno, s) for s in subs] or [(node.lineno, target)]
    return found


def path_of(name):
    return "/".join(name.split(".")[1:]) + ".py"


def violations(sources, allowed=ALLOWED):
    """One line per import against the rooms' order, per module without a room,
    per circle between modules."""
    out = []
    graph = {}
    for name, text in sources.items():
        room = room_of(name, sources)
        if room is None or room not in allowed:
            out.append(
                f"{path_of(name)}: in no room; move it into one of "
                f"{', '.join(sorted(r for r in allowed if r != 'top'))}/ "
                f"(or add the room to ALLOWED and CONTRIBUTING.md)"
            )
            continue
        for line, target in imports(name, text, sources):
            graph.setdefault(name, set()).add(target)
            to = room_of(target, sources)
            if to == room or to is None:
                continue
            if to not in allowed[room]:
                may = ", ".join(sorted(allowed[room])) or "nothing outside itself"
                out.append(
                    f"{path_of(name)}:{line}: {room} imports {to} ({target}); {room} may use {may}"
                )
    out += [f"import circle: {' -> '.join(c)}" for c in circles(graph)]
    return out


def circles(graph):
    """Each circle of the import graph once (as the modules along it)."""
    found, seen, stack, on_stack = [], set(), [], set()

    def visit(n):
        seen.add(n)
        stack.append(n)
        on_stack.add(n)
        for m in sorted(graph.get(n, ())):
            if m in on_stack:
                found.append(stack[stack.index(m) :] + [m])
            elif m not in seen:
                visit(m)
        stack.pop()
        on_stack.discard(n)

    for n in sorted(graph):
        if n not in seen:
            visit(n)
    return found


def room_circles(allowed):
    return circles({r: set(uses) for r, uses in allowed.items()})


# --- the package as it is ---------------------------------------------------


def test_the_package_keeps_to_its_rooms():
    sources = read_package()
    assert len(sources) > 30, "the package was not found"
    assert violations(sources) == []


def test_the_rooms_order_has_no_circle():
    assert room_circles(ALLOWED) == []


def test_every_room_is_a_package_pip_installs():
    """pyproject.toml lists each room: one missing would be left out of a
    non-editable install (cmake --install then pip install)."""
    rooms = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert rooms == set(ALLOWED) - {"top"}
    meta = tomllib.loads((ROOT.parent / "pyproject.toml").read_text())
    listed = set(meta["tool"]["setuptools"]["packages"])
    assert listed == {PACKAGE} | {f"{PACKAGE}.{r}" for r in rooms}


# --- the checks shown failing on packages built to be wrong -----------------


def planted(module, text):
    """The real package with one module's text replaced (or added)."""
    sources = read_package()
    sources[f"{PACKAGE}.{module}"] = text
    return sources


def test_a_report_that_imports_the_runner_is_refused():
    bad = planted("report.plots", "import json\n\nfrom ..run import runner\n")
    assert violations(bad) == [
        "report/plots.py:3: report imports run (iokernels_campaign.run.runner); "
        "report may use base, spec"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "from ..report.aggregate import summarize\n",
        "from iokernels_campaign.report import aggregate\n",
        "def late():\n    from .. import report\n",
    ],
    ids=["relative-module", "absolute", "function-local-package"],
)
def test_a_store_that_reaches_above_itself_is_refused(text):
    bad = planted("store.record", text)
    (line,) = violations(bad)
    assert line.startswith("store/record.py:") and "store imports report" in line
    assert line.endswith("store may use base")


def test_the_floor_imports_no_room():
    # the store imports paths, so the planted import is also a circle
    bad = planted("base.paths", "from ..store import store\n")
    assert violations(bad) == [
        "base/paths.py:1: base imports store (iokernels_campaign.store.store); "
        "base may use nothing outside itself",
        "import circle: iokernels_campaign.base.paths -> "
        "iokernels_campaign.store.store -> iokernels_campaign.base.paths",
    ]


def test_two_modules_importing_each_other_are_a_circle():
    # tune_answer imports tune_space; planting the way back closes a circle
    bad = planted("tune.tune_space", "from . import tune_answer\n")
    assert violations(bad) == [
        "import circle: iokernels_campaign.tune.tune_answer -> "
        "iokernels_campaign.tune.tune_space -> iokernels_campaign.tune.tune_answer"
    ]


def test_a_flat_module_is_in_no_room():
    bad = planted("helpers", "X = 1\n")
    (line,) = violations(bad)
    assert line.startswith("helpers.py: in no room; move it into one of base, report,")


def test_a_circle_in_the_rooms_order_is_found():
    bad = {**ALLOWED, "store": {"base", "report"}, "report": {"base", "spec", "store"}}
    assert room_circles(bad) == [["report", "store", "report"]]
