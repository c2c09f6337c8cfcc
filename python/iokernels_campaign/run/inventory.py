# SPDX-License-Identifier: BSD-3-Clause
"""What an iokernels binary offers, as it describes itself in JSON: kernels
and backends from `iokernels --list --json`, each kernel's options from
`iokernels KERNEL --help --json`. Nothing here is hard-wired to a kernel, and
no help text is parsed."""

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..base import paths

REPO = Path(__file__).resolve().parents[3]

# how an option's type is shown in messages ("--grid takes a value (X,Y,Z)")
_META = {"int": "N", "int64": "N", "double": "X", "string": "TEXT", "int3": "X,Y,Z"}


class InventoryError(Exception):
    """The binary is missing or its output cannot be read."""


@dataclass(frozen=True)
class Option:
    name: str
    section: str  # "core", the kernel's name, or a backend's name
    type: str  # bool, int, int64, double, string, choice, int3
    choices: tuple | None = None
    default: object = None

    @property
    def is_flag(self):
        return self.type == "bool"

    @property
    def meta(self):
        return "|".join(self.choices) if self.choices else _META.get(self.type)


@dataclass
class Inventory:
    binary: Path
    kernels: dict[str, str]  # name -> summary
    backends: dict[str, str]  # name -> version
    caps: dict[str, set] = field(default_factory=dict)  # name -> capability words
    # kernel name -> {"flags": set ("shiftable", "tool"), "input": {"positional": ...}}
    kernel_info: dict[str, dict] = field(default_factory=dict)
    _options: dict[str, dict[str, Option]] = field(default_factory=dict)
    unloadable: dict[str, str] = field(default_factory=dict)  # backend -> why its module failed

    def options(self, kernel):
        """Every option `iokernels KERNEL --help --json` lists, by name."""
        if kernel not in self._options:
            cmd = [str(self.binary), kernel, "--help", "--json"]
            self._options[kernel] = _parsed(cmd, parse_options, _run_json(cmd))
        return self._options[kernel]


def default_binary():
    """$IOKERNELS_BIN (or the older $IOK_BIN), else the repository's
    build/iokernels, else iokernels on PATH."""
    for var in ("IOKERNELS_BIN", "IOK_BIN"):
        if os.environ.get(var):
            return Path(os.environ[var])
    built = REPO / "build" / "iokernels"
    if built.exists():
        return built
    found = shutil.which("iokernels")
    return Path(found) if found else built


def _run_json(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise InventoryError(f"{cmd[0]} not found: build it (make build) or pass --bin") from None
    except subprocess.TimeoutExpired:
        raise InventoryError(f"{' '.join(cmd)} did not answer in 60 s") from None
    except OSError as e:  # not executable, not a program
        raise InventoryError(f"cannot run {cmd[0]}: {e.strerror} (pass --bin)") from None
    if p.returncode != 0:
        raise InventoryError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError as e:
        raise InventoryError(f"{' '.join(cmd)} printed no JSON ({e}): an older binary?") from None


def _parsed(cmd, parse, desc):
    """parse(desc), or one line saying the binary's JSON is not as expected."""
    try:
        return parse(desc)
    except (KeyError, TypeError, AttributeError) as e:
        raise InventoryError(
            f"{' '.join(cmd)}: its JSON lacks {e} (not an iokernels binary, or another version?)"
        ) from None


def parse_list(desc):
    """(kernels {name: summary}, backends {name: version}, caps {name: set},
    unloadable {name: why}) from the object `iokernels --list --json` prints.
    A backend whose module cannot load is listed with its "error" and no
    version: it is set apart, so that campaigns not using it still run."""
    kernels = {k["name"]: k["summary"] for k in desc["kernels"]}
    unloadable = {b["name"]: str(b["error"]) for b in desc["backends"] if "error" in b}
    loaded = [b for b in desc["backends"] if b["name"] not in unloadable]
    backends = {b["name"]: b["version"] for b in loaded}
    caps = {b["name"]: set(b["caps"]) for b in loaded}
    return kernels, backends, caps, unloadable


def infer_type(default, choices=None):
    """An option's type from its default, for a binary that names none."""
    if choices:
        return "choice"
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int64"
    if isinstance(default, float):
        return "double"
    if isinstance(default, list) and len(default) == 3:
        return "int3"
    return "string"


def parse_kernel_info(desc):
    """{kernel: {"flags": set, "input": dict}} from `iokernels --list --json`
    (a binary that says nothing of them: no flags, input unknown)."""
    return {
        k["name"]: {"flags": set(k.get("flags") or ()), "input": k.get("input") or {}}
        for k in desc["kernels"]
    }


def parse_options(desc):
    """{option name: Option} from the object `iokernels KERNEL --help --json`
    prints; an option without a type gets the one its default suggests."""
    return {
        o["name"]: Option(
            o["name"],
            o["group"],
            o.get("type") or infer_type(o.get("default"), o.get("choices")),
            tuple(o["choices"]) if o.get("choices") else None,
            o.get("default"),
        )
        for o in desc["options"]
    }


def load(binary=None):
    label = "--bin" if binary else "$IOK_BIN" if os.environ.get("IOK_BIN") else "binary"
    binary = Path(binary) if binary else default_binary()
    if not binary.exists():
        raise InventoryError(f"{binary} not found: build it (make build) or pass --bin")
    try:
        paths.executable(label, binary)
    except paths.PathError as e:
        raise InventoryError(str(e)) from None
    cmd = [str(binary), "--list", "--json"]
    desc = _run_json(cmd)
    kernels, backends, caps, unloadable = _parsed(cmd, parse_list, desc)
    info = _parsed(cmd, parse_kernel_info, desc)
    if not kernels or not backends:
        raise InventoryError(f"{binary} --list --json names no kernels or no backends")
    return Inventory(
        binary.resolve(), kernels, backends, caps=caps, kernel_info=info, unloadable=unloadable
    )
