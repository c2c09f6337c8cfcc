# SPDX-License-Identifier: BSD-3-Clause
"""The tuner's search space: what each `[tune.space]` setting is, how it
reaches a run, which values it takes; checked before anything runs.

Every setting maps to something that exists already (SETTINGS below is the
one table of the mapping):

    hint    an MPI-IO or library hint, added to the run's --hints k=v,...
            (backends with the "hints" capability: mpiio, pnetcdf, hdf5, netcdf4)
    option  a backend option of the binary (--hdf5-alignment N, ...)
    param   an ADIOS2 engine parameter, added to --adios2-params K=V,...
    env     an environment variable of the MPI library (OMPI_MCA_fcoll, ...)
    core    the transfer mode (--collective / --independent), --api, --backend
    kernel  any other option of `iokernels KERNEL --help`, by its name

A backend's own setting applies to trials on that backend only (a trial on
another backend leaves it out: "n/a" in its settings). The value "default"
in any dimension means: leave the setting to the library."""

import dataclasses
import re
import shutil
import subprocess
from dataclasses import dataclass

from ..spec import optcheck, slurm
from ..spec.spec import RESERVED, CampaignError

DEFAULT = "default"
ROMIO_SWITCH = ("enable", "disable", "automatic")


@dataclass(frozen=True)
class Setting:
    kind: str  # hint, option, param, env, core
    target: str  # the hint key, option name, parameter, variable
    values: str  # posint, count (0 or more), switch, component, choice, transfer, backend
    backend: str | None = None  # the backend it belongs to (None: every one)
    lustre: bool = False  # a striping hint: only where the file system stripes
    direction: str | None = None  # "write" / "read": a hint only that direction uses


# the mapping, one row per setting a spec may name
SETTINGS = {
    "cb_buffer_size": Setting("hint", "cb_buffer_size", "posint"),
    "cb_nodes": Setting("hint", "cb_nodes", "posint"),
    "romio_cb_write": Setting("hint", "romio_cb_write", "switch", direction="write"),
    "romio_cb_read": Setting("hint", "romio_cb_read", "switch", direction="read"),
    "romio_ds_write": Setting("hint", "romio_ds_write", "switch", direction="write"),
    "romio_ds_read": Setting("hint", "romio_ds_read", "switch", direction="read"),
    "striping_factor": Setting("hint", "striping_factor", "posint", lustre=True),
    "striping_unit": Setting("hint", "striping_unit", "posint", lustre=True),
    "nc_var_align_size": Setting("hint", "nc_var_align_size", "posint", "pnetcdf"),
    "nc_header_align_size": Setting("hint", "nc_header_align_size", "posint", "pnetcdf"),
    "nc_ibuf_size": Setting("hint", "nc_ibuf_size", "posint", "pnetcdf"),
    "hdf5-alignment": Setting("option", "hdf5-alignment", "count", "hdf5"),
    "hdf5-layout": Setting("option", "hdf5-layout", "choice", "hdf5"),
    "hdf5-chunk-kib": Setting("option", "hdf5-chunk-kib", "posint", "hdf5"),
    "netcdf4-layout": Setting("option", "netcdf4-layout", "choice", "netcdf4"),
    "adios2-engine": Setting("option", "adios2-engine", "choice", "adios2"),
    "NumAggregators": Setting("param", "NumAggregators", "posint", "adios2"),
    "io": Setting("env", "OMPI_MCA_io", "component"),
    "fcoll": Setting("env", "OMPI_MCA_fcoll", "component"),
    "fbtl": Setting("env", "OMPI_MCA_fbtl", "component"),
    "transfer": Setting("core", "transfer", "transfer"),
    "api": Setting("core", "api", "choice"),
    "backend": Setting("core", "backend", "backend"),
}
# OMPIO's frameworks: only the ompio io component (OpenMPI's default) uses them
OMPIO_PARTS = ("fcoll", "fbtl")
# asked for, but no backend has it: said so rather than "unknown"
NOT_MAPPED = {
    "hdf5_metadata_cache": "the hdf5 backend sets no metadata cache (no such option)",
    "metadata_cache": "the hdf5 backend sets no metadata cache (no such option)",
    "nc_num_aggrs_per_node": "PnetCDF 1.14's hint: this build's PnetCDF may not have it",
}
# options a space may not vary: the tuner sets them, or they are not settings
NOT_TUNABLE = {**RESERVED, "hints": "give hints as settings of [tune.space]"}
NOT_TUNABLE |= {"mpiio-hints": NOT_TUNABLE["hints"], "collective": "use transfer"}
NOT_TUNABLE |= {"independent": "use transfer", "adios2-params": "use NumAggregators"}


class SpaceError(CampaignError):
    """A bad [tune] table: one line naming the file, line and key."""


def line_of(text, table, key):
    """The line number of `key = ...` under `[table]` in the TOML text, or None."""
    section = None
    for n, line in enumerate(text.splitlines(), 1):
        head = re.match(r"\s*\[\s*([^\]]+?)\s*\]", line)
        if head:
            section = head.group(1)
            if section == f"{table}.{key}":  # the key is a table of its own
                return n
            continue
        m = re.match(r"\s*\"?([^\"=\s]+)\"?\s*=", line)
        if section == table and m and m.group(1) == key:
            return n
    return None


def ompi_components(framework):
    """The installed components of an OpenMPI framework (ompi_info), or None
    when ompi_info is not there."""
    if not shutil.which("ompi_info"):
        return None
    p = subprocess.run(["ompi_info"], capture_output=True, text=True, timeout=60)
    pat = re.compile(rf"^\s*MCA {re.escape(framework)}: (\S+)", re.M)
    return sorted(set(pat.findall(p.stdout)))


class Checker:
    """Checks [tune.space] against the binary, the MPI and the file system."""

    def __init__(self, path, text, inventory, kernel, backends):
        self.path, self.text = path, text
        self.inventory, self.kernel = inventory, kernel
        self.backends = backends  # every backend a trial may use
        self.known = inventory.options(kernel)
        self._family = None

    def fail(self, key, msg, table="tune.space"):
        line = line_of(self.text, table, key) or line_of(self.text, table.split(".")[0], key)
        head = f"[{table}] " if table else ""
        where = f"{self.path}" + (f" line {line}" if line else "") + f": {head}{key}"
        raise SpaceError(f"{where}: {msg}")

    def family(self):
        if self._family is None:
            self._family = slurm.mpi_family(self.inventory.binary) or "unknown"
        return self._family

    def setting(self, name):
        """The Setting of a name: the table's, else a kernel option of the binary."""
        if name in SETTINGS:
            return SETTINGS[name]
        if name in NOT_MAPPED:
            self.fail(name, f"not a setting here: {NOT_MAPPED[name]}")
        if name in NOT_TUNABLE:
            self.fail(name, f"not a setting of the space: {NOT_TUNABLE[name]}")
        opt = self.known.get(name)
        if opt is None:
            self.fail(
                name,
                f"unknown setting (known: {', '.join(SETTINGS)}, or an option of "
                f"iokernels {self.kernel} --help)",
            )
        backend = opt.section if opt.section in self.inventory.backends else None
        return Setting("kernel", name, "option", backend)

    def values(self, name, values):
        """The dimension's values, each checked; "default" stays as it is."""
        if not isinstance(values, list) or not values:
            self.fail(name, f"must be a non-empty list of values, got {values!r}")
        s = self.setting(name)
        if s.backend and s.backend not in self.backends:
            self.fail(name, f"a {s.backend} setting, and the case runs on {self._bk()}")
        if s.kind == "hint" and not any(
            "hints" in self.inventory.caps.get(b, ()) for b in self.backends
        ):
            self.fail(
                name, f"an MPI-IO hint, and no backend of the case takes hints ({self._bk()})"
            )
        if s.lustre and not shutil.which("lfs"):
            self.fail(name, "a Lustre striping hint, and this file system has no striping (no lfs)")
        if s.kind == "env" and self.family() != "openmpi":
            self.fail(
                name,
                f"an OpenMPI component, and this binary uses {self.family()} "
                "(ROMIO only: tune the romio_* hints)",
            )
        out = []
        for v in values:
            out.append(v if v == DEFAULT else self.value(name, s, v))
        if len(set(map(str, out))) != len(out):
            self.fail(name, f"a value is given twice in {values!r}")
        return out

    def _bk(self):
        return ", ".join(self.backends)

    def value(self, name, s, v):
        shown = repr(v) if len(repr(v)) <= 60 else repr(v)[:57] + "..."
        if s.values in ("posint", "count"):
            low = 1 if s.values == "posint" else 0
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                what = "a whole number" + (" >= 1" if low else " >= 0")
                self.fail(name, f'value {shown} is not {what} (or "default")')
            return v
        if s.values == "switch":
            if v not in ROMIO_SWITCH:
                self.fail(name, f"value {shown} is not one of {', '.join(ROMIO_SWITCH)}, default")
            return v
        if s.values == "component":
            framework = s.target.removeprefix("OMPI_MCA_")
            have = ompi_components(framework)
            if have is None:
                self.fail(name, "ompi_info is not on PATH: cannot check the installed components")
            if v not in have:
                self.fail(
                    name,
                    f"value {shown}: no such {framework} component here "
                    f"(ompi_info lists {', '.join(have) or 'none'})",
                )
            return v
        if s.values == "transfer":
            if v not in ("collective", "independent"):
                self.fail(name, f"value {shown} is not collective or independent")
            return v
        if s.values == "backend":
            if v not in self.inventory.backends:
                self.fail(
                    name, f"value {shown}: this build has {', '.join(self.inventory.backends)}"
                )
            return v
        return self.option_value(name, s.target, v)

    def option_value(self, name, option, v):
        """A value of a binary's option, checked as a campaign checks it."""
        opt = self.known[option]
        if opt.is_flag:
            if not isinstance(v, bool):
                self.fail(name, f"a flag: give true or false, not {v!r}")
            return v
        if opt.choices:
            if v not in opt.choices:
                self.fail(name, f"value {v!r} is not one of {', '.join(opt.choices)}, default")
            return v
        try:
            return optcheck.text(opt, v)
        except optcheck.BadValue as e:
            self.fail(name, f"value {v!r}: expected {e} (--{option} {opt.meta})")


def check_space(checker, space):
    """{name: [values]} of [tune.space], in file order, every value checked."""
    if not isinstance(space, dict) or not space:
        checker.fail("space", "is empty: give at least one setting and its values", table="tune")
    out = {name: checker.values(name, values) for name, values in space.items()}
    if "backend" in out and len(checker.backends) > 1:
        checker.fail("backend", "the block lists backends too: give them in one place")
    return out


def inert(space, modes):
    """{setting: why} of the space's settings the case's pattern cannot use:
    a read hint (romio_cb_read, romio_ds_read) on a case that only writes,
    a write hint on one that only reads. They are not searched."""
    out = {}
    for name in space:
        s = SETTINGS.get(name)
        if s is not None and s.direction and s.direction not in modes:
            only = " and ".join(m for m in modes if m != s.direction) or "nothing"
            out[name] = f"a {s.direction} hint, and the case only {_verb(only)}"
    return out


def _verb(modes):
    return {"write": "writes", "read": "reads"}.get(modes, modes)


def apply(case, settings, caps):
    """(the case with one trial's settings, {name: value shown}): hints into
    --hints, options, ADIOS2 parameters, variables; "n/a" for a backend's
    setting on another backend, "default" for what is left to the library."""
    args = dict(case.args)
    env = dict(case.env)
    backend = settings.get("backend", case.backend)
    if backend == DEFAULT:
        backend = case.backend
    hints = [args.pop("hints")] if args.get("hints") else []
    params = [args.pop("adios2-params")] if args.get("adios2-params") else []
    shown = {}
    for name, v in settings.items():
        s = SETTINGS.get(name) or Setting("kernel", name, "option")
        if v == DEFAULT or name == "backend":
            shown[name] = str(v if name != "backend" else backend)
            continue
        if s.backend and s.backend != backend:
            shown[name] = "n/a"
            continue
        if s.kind == "hint" and "hints" not in caps.get(backend, ()):
            shown[name] = "n/a"
            continue
        if name in OMPIO_PARTS and settings.get("io", DEFAULT) not in (DEFAULT, "ompio"):
            shown[name] = "n/a"  # another io component: OMPIO's parts are not used
            continue
        shown[name] = str(v)
        if s.kind == "hint":
            hints.append(f"{s.target}={v}")
        elif s.kind == "param":
            params.append(f"{s.target}={v}")
        elif s.kind == "env":
            env[s.target] = str(v)
        elif s.target == "transfer":
            args.pop("collective", None)
            args.pop("independent", None)
            args[v] = True
        else:
            args[s.target] = v if isinstance(v, bool) else str(v)
    if hints:
        args["hints"] = ",".join(hints)
    if params:
        args["adios2-params"] = ",".join(params)
    variant = " ".join(f"{k}={v}" for k, v in shown.items() if v not in (DEFAULT, "n/a"))
    trial = dataclasses.replace(
        case,
        backend=backend,
        args=tuple(args.items()),
        env=tuple(env.items()),
        variant=variant or "defaults",
    )
    return trial, shown
