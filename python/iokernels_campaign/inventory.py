"""What an iokernels binary offers, read from its own output: kernels and
backends from `iokernels --list`, each kernel's options from `iokernels
KERNEL --help`. Nothing here is hard-wired to a kernel."""

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# "      --grid X,Y,Z     global grid points..." / "  -h, --help    this help"
_OPTION = re.compile(r"^\s+(?:-\w, )?--([A-Za-z0-9][\w-]*)(?: (\S+))?\s{2,}")
_SECTION = re.compile(r"^(\S+) options:$")


class InventoryError(Exception):
    """The binary is missing or its output cannot be read."""


@dataclass(frozen=True)
class Option:
    name: str
    section: str  # "core", the kernel's name, or a backend's name
    meta: str | None  # None for a flag; "a|b|c" for a choice; TEXT, N, X,Y,Z...

    @property
    def is_flag(self):
        return self.meta is None

    @property
    def choices(self):
        return self.meta.split("|") if self.meta and "|" in self.meta else None


@dataclass
class Inventory:
    binary: Path
    kernels: dict[str, str]  # name -> summary
    backends: dict[str, str]  # name -> version
    caps: dict[str, set] = field(default_factory=dict)  # name -> capability words
    _options: dict[str, dict[str, Option]] = field(default_factory=dict)

    def options(self, kernel):
        """Every option `iokernels KERNEL --help` lists, by name."""
        if kernel not in self._options:
            out = _run([str(self.binary), kernel, "--help"])
            self._options[kernel] = parse_help(out)
        return self._options[kernel]


def default_binary():
    """$IOK_BIN, else the repository's build/iokernels, else iokernels on PATH."""
    if os.environ.get("IOK_BIN"):
        return Path(os.environ["IOK_BIN"])
    built = REPO / "build" / "iokernels"
    if built.exists():
        return built
    found = shutil.which("iokernels")
    return Path(found) if found else built


def _run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise InventoryError(f"{cmd[0]} not found: build it (make build) or pass --bin") from None
    if p.returncode != 0:
        raise InventoryError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def parse_list(text):
    """(kernels {name: summary}, backends {name: version}) from `--list`."""
    kernels, backends, _ = parse_list_caps(text)
    return kernels, backends


def parse_list_caps(text):
    """As parse_list, plus {backend: set of capability words} (backend.h's
    flags as `--list` names them: collective, nonblocking, varn, noio...)."""
    kernels, backends, caps, section = {}, {}, {}, None
    for line in text.splitlines():
        if line in ("kernels:", "backends:", "capabilities:"):
            section = line[:-1]
        elif section and line.startswith("  ") and line.strip():
            name, _, rest = line.strip().partition(" ")
            if section == "kernels":
                kernels[name] = rest.strip()
            elif section == "backends":
                m = re.search(r"\[([^\]]*)\]\s*$", rest)
                backends[name] = m.group(1) if m else ""
            else:
                caps[name] = set(rest.split())
    return kernels, backends, caps


def parse_help(text):
    """{option name: Option} from `iokernels KERNEL --help`."""
    opts, section = {}, None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            section = m.group(1)
            continue
        m = _OPTION.match(line)
        if m and section:
            opts[m.group(1)] = Option(m.group(1), section, m.group(2))
    return opts


def load(binary=None):
    binary = Path(binary) if binary else default_binary()
    if not binary.exists():
        raise InventoryError(f"{binary} not found: build it (make build) or pass --bin")
    kernels, backends, caps = parse_list_caps(_run([str(binary), "--list"]))
    if not kernels or not backends:
        raise InventoryError(f"{binary} --list names no kernels or no backends")
    return Inventory(binary.resolve(), kernels, backends, caps=caps)
