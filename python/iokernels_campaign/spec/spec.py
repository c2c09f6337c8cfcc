# SPDX-License-Identifier: BSD-3-Clause
"""Campaign files (TOML) and the cases they expand to.

    [campaign]                      # defaults for every block
    name = "default"
    ranks = [1, 4]
    iterations = 2
    modes = ["write", "read"]       # run in order, in the same directory
    timeout = 300                   # seconds per run

    [campaign.env]                  # exported to every run ({rundir}, {mode}, ...: envvars.py)
    DARSHAN_LOGFILE = "{rundir}/{mode}.darshan"
    [campaign.lustre]               # lfs setstripe of each case directory (lustre.py)
    stripe_count = 4

    [slurm]                         # for --launcher sbatch / srun (slurm.py)
    nodes = 1
    time = "00:30:00"               # the whole campaign: one job, a step per run
    srun = []                       # extra srun arguments

    [[kernel]]                      # one block per kernel (or per kernel setup)
    name = "btio"
    backends = "all"                # every backend of the binary, or a list
    exclude = ["null"]              # backends of "all" left out (those built)
    options = { grid = "32,32,32", verify = true }   # --grid 32,32,32 --verify
    sweep = { independent = [false, true] }          # every combination is a case
    compute = [0, 0.05, 0.2]        # --compute SECONDS after each write step (0: none)
    async = [false, true]           # true: --async --async-reference, >= 8 iterations (ABBA)
    [kernel.backend.null]           # over the options, for that backend only
    verify = false
    [kernel.env]                    # over [campaign.env], for this block
    [kernel.lustre]                 # over [campaign.lustre], for this block

Options are any of `iokernels KERNEL --help` (core, kernel, backend), as
`--key value`; true is a bare flag, false leaves it out. Every name is
checked against the binary before anything runs."""

import hashlib
import itertools
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from . import envvars, keys, lustre, mixcase, optcheck, rules, slurm

RESERVED = {
    "backend": "use backends = [...] in the block",
    "json": "the runner passes --json itself",
    "mode": "use modes = [...] (the steps run in order in one directory)",
    "help": "it runs nothing",
}
# the keys each table accepts: keys.py declares them (and the reference page)
TOP_KEYS = set(keys.names("(top level)")) - {"tune"}  # tune_spec takes [tune] off first
CAMPAIGN_KEYS = set(keys.names("[campaign]"))
BLOCK_KEYS = set(keys.names("[[kernel]]"))
# a campaign's name names its folder (results/NAME) and its jobs: one plain name
PLAIN_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}\Z")
PLAIN_RULE = "letters, digits, -, _ and . (not first), at most 100; no / or .."


class CampaignError(Exception):
    """A campaign file that cannot run, with the reason: one printable line
    (the file's own characters that are not printable are escaped, a long
    quoted value cut), whatever the file holds."""

    def __init__(self, msg):
        text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in msg)
        super().__init__(text if len(text) <= 600 else text[:580] + "...")


@dataclass(frozen=True)
class Case:
    """One kernel on one backend at one rank count with one set of options;
    each iteration runs its modes in order in one directory."""

    kernel: str
    label: str
    backend: str
    ranks: int
    args: tuple  # ((option, value), ...), value a bool or a string
    modes: tuple
    iterations: int
    timeout: float
    variant: str  # the swept values, "" when nothing is swept
    input: str = ""  # the kernel's positional input file (absolute path), "" for none
    env: tuple = ()  # ((name, value template), ...) exported to every run (envvars.py)
    lustre: tuple = ()  # ((key, value), ...) striping of the case directory (lustre.py)

    @property
    def lustre_settings(self):
        return dict(self.lustre)

    def environment(self, casedir, rundir, mode, iteration):
        """The variables of one run, placeholders filled in."""
        return envvars.expand(self.env, self.dirname, casedir, rundir, mode, iteration)

    def argv(self, mode):
        """The kernel's command line for one mode (without --json)."""
        out = [self.kernel, "--backend", self.backend, "--mode", mode]
        for key, value in self.args:
            if value is True:
                out.append(f"--{key}")
            elif value is not False:
                out += [f"--{key}", value]
        return out + ([self.input] if self.input else [])

    def case_hash(self, mode):
        """Identity of a run across machines and campaigns: kernel, ranks and
        options, never paths (the input file counts by its name)."""
        argv = self.argv(mode)[: -1 if self.input else None]
        pairs = sorted(" ".join(argv[i : i + 2]) for i in range(1, len(argv)))
        ident = {"kernel": self.kernel, "ranks": self.ranks, "argv": pairs}
        if self.input:
            ident["input"] = Path(self.input).name
        if self.env:  # by the values' file names: no paths, like the input
            ident["env"] = sorted(f"{k}={v.rstrip('/').rsplit('/', 1)[-1]}" for k, v in self.env)
        if self.lustre:
            ident["lustre"] = [
                self.lustre_settings.get("stripe_count"),
                self.lustre_settings.get("stripe_size"),
            ]
        key = json.dumps(ident)
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    @property
    def name(self):
        parts = [self.label, self.backend, f"n{self.ranks}"]
        if self.variant:
            parts.append(self.variant)
        return " ".join(parts)

    @property
    def dirname(self):
        raw = f"{self.label}-{self.backend}-n{self.ranks}-{self.case_hash(self.modes[0])[:8]}"
        return "".join(c if c.isalnum() or c in "-_." else "_" for c in raw)

    def describe(self):
        """The JSON-friendly description kept in each case directory."""
        return {
            "kernel": self.kernel,
            "label": self.label,
            "backend": self.backend,
            "ranks": self.ranks,
            "args": [list(a) for a in self.args],
            "modes": list(self.modes),
            "iterations": self.iterations,
            "timeout": self.timeout,
            "variant": self.variant,
            "input": self.input,
            "env": [list(e) for e in self.env],
            "lustre": self.lustre_settings,
        }

    @classmethod
    def from_description(cls, d):
        return cls(
            d["kernel"],
            d["label"],
            d["backend"],
            d["ranks"],
            tuple(tuple(a) for a in d["args"]),
            tuple(d["modes"]),
            d["iterations"],
            d["timeout"],
            d["variant"],
            d.get("input", ""),
            tuple(tuple(e) for e in d.get("env", [])),
            tuple(d.get("lustre", {}).items()),
        )


@dataclass
class Campaign:
    name: str
    description: str
    path: Path
    cases: list
    slurm: slurm.Slurm
    order: str = "interleaved"  # or "blocked" (run/order.py)
    seed: int | None = None  # None: drawn when it runs, recorded in the store
    notes: list = field(default_factory=list)  # lines run prints before its plan (async)


def _fail(where, msg):
    raise CampaignError(f"{where}: {msg}")


def _positive_ints(where, key, value):
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        _fail(where, f"{key} must be a whole number or a list of them, got {value!r}")
    bad = [v for v in values if v < 1]
    if bad:
        _fail(where, f"{key} must be at least 1, got {bad[0]}")
    return values


def _option_value(where, opt, value):
    """The value as passed on the command line: True/False for flags, else a string."""
    name = opt.name
    if opt.is_flag:
        if not isinstance(value, bool):
            _fail(where, f"{name} is a flag: give true or false, not {value!r}")
        return value
    if opt.choices:
        if not isinstance(value, str) or value not in opt.choices:
            _fail(where, f"{name} must be one of {', '.join(opt.choices)}, not {value!r}")
        return value
    try:
        return optcheck.text(opt, value)
    except optcheck.BadValue as e:
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
        _fail(where, f"option {name} = {shown}: expected {e} ({opt.type}, --{name} {opt.meta})")


def _check_option(where, kernel, known, backends, key, backend=None):
    if key in RESERVED:
        _fail(where, f"option {key} is not allowed: {RESERVED[key]}")
    opt = known.get(key)
    if opt is None:
        _fail(where, f"kernel {kernel} has no option --{key} (see iokernels {kernel} --help)")
    if opt.section in backends and opt.section != backend:
        _fail(
            where,
            f"--{key} belongs to backend {opt.section}: put it under "
            f"[kernel.backend.{opt.section}]",
        )
    return opt


def _modes(where, value, known):
    values = value if isinstance(value, list) else [value]
    choices = known["mode"].choices if "mode" in known else ["write", "read", "both"]
    if not values or any(v not in choices for v in values):
        _fail(where, f"modes must be a list of {', '.join(choices)}, got {value!r}")
    return tuple(values)


def _backends(where, kernel, value, inventory):
    built = list(inventory.backends)
    if value == "all":
        return built
    if not isinstance(value, list) or not value or not all(isinstance(b, str) for b in value):
        _fail(where, f'backends must be "all" or a list of names, got {value!r}')
    for b in value:
        if b in inventory.unloadable:
            _fail(where, f"backend '{b}' cannot be used: {inventory.unloadable[b]}")
        if b not in inventory.backends:
            _fail(
                where,
                f"kernel {kernel} cannot use backend '{b}': this build has {', '.join(built)}",
            )
    return value


def _block_cases(where, block, defaults, inventory, asked):
    unknown = set(block) - BLOCK_KEYS
    if unknown:
        _fail(where, f"unknown key {sorted(unknown)[0]!r} (known: {', '.join(sorted(BLOCK_KEYS))})")
    kernel = block.get("name")
    if not isinstance(kernel, str):
        _fail(where, 'name = "KERNEL" is missing')
    if kernel not in inventory.kernels:
        _fail(where, f"unknown kernel '{kernel}': this build has {', '.join(inventory.kernels)}")
    where = f"{where} ({kernel})"
    info = inventory.kernel_info.get(kernel, {})
    if "tool" in info.get("flags", ()):
        _fail(where, f"{kernel} is a tool (iokernels --list): it measures no I/O")
    if "input" in block and info.get("input", {}).get("positional") is False:
        _fail(where, f"kernel {kernel} takes no input file: drop input")
    known = inventory.options(kernel)
    backends = _backends(where, kernel, block.get("backends", "all"), inventory)
    exclude = block.get("exclude", [])
    if not isinstance(exclude, list) or not all(isinstance(b, str) for b in exclude):
        _fail(where, f'exclude must be a list of backend names, such as ["null"], got {exclude!r}')
    if exclude and block.get("backends", "all") != "all":
        _fail(where, 'exclude goes with backends = "all": list the backends instead')
    backends = [b for b in backends if b not in exclude]
    if not backends:
        _fail(where, f"exclude leaves no backend of {', '.join(inventory.backends)}")
    ranks = _positive_ints(where, "ranks", block.get("ranks", defaults["ranks"]))
    iterations = block.get("iterations", defaults["iterations"])
    if isinstance(iterations, list):
        _fail(where, f"iterations must be one whole number, got {iterations!r}")
    _positive_ints(where, "iterations", iterations)
    timeout = block.get("timeout", defaults["timeout"])
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        _fail(where, f"timeout must be a positive number of seconds, got {timeout!r}")
    modes = _modes(where, block.get("modes", defaults["modes"]), known)
    input_file = _input(where, block.get("input"), defaults.get("dir"))
    try:
        env = envvars.merge(defaults["env"], envvars.check(block.get("env", {}), "[kernel.env]"))
        block_lustre = lustre.check(block.get("lustre", {}), "[kernel.lustre]")
    except (envvars.EnvError, lustre.LustreError) as e:
        _fail(where, str(e))
    striping = tuple(lustre.merge(defaults["lustre"], block_lustre).items())
    if "lustre" in block and not striping:
        _fail(where, "[kernel.lustre]: give stripe_count, stripe_size or both")

    base = {}
    for key, value in _table(where, "options", block.get("options", {})).items():
        base[key] = _option_value(
            where, _check_option(where, kernel, known, inventory.backends, key), value
        )
    sweep = {}
    for key, values in _table(where, "sweep", block.get("sweep", {})).items():
        opt = _check_option(where, kernel, known, inventory.backends, key)
        if not isinstance(values, list) or not values:
            _fail(where, f"sweep {key} must be a non-empty list, got {values!r}")
        sweep[key] = [_option_value(where, opt, v) for v in values]
    for key, values in _compute_async_axes(where, block, known, base, sweep).items():
        sweep[key] = values
    per_backend = {}
    every = block.get("backends", "all") == "all"
    for b, table in _table(where, "backend", block.get("backend", {})).items():
        if every and (b not in inventory.backends or b in exclude):
            continue  # settings for a backend this build does not have
        if b not in backends:
            _fail(where, f"[kernel.backend.{b}]: backend {b} is not among this block's backends")
        per_backend[b] = {
            k: _option_value(
                where, _check_option(where, kernel, known, inventory.backends, k, b), v
            )
            for k, v in _table(where, f"backend.{b}", table).items()
        }

    cases = []
    label = mixcase.check_label(lambda msg: _fail(where, msg), block.get("label", kernel))
    for backend in backends:
        for combo in itertools.product(*sweep.values()):
            swept = dict(zip(sweep, combo, strict=True))
            args = {**base, **swept, **per_backend.get(backend, {})}
            variant = " ".join(_show(k, v) for k, v in swept.items())
            if args.get("async") is True:
                _async_case(where, kernel, backend, args, known, inventory, variant, defaults)
            why = rules.refusal(backend, args, inventory.caps)
            shift = args.get("shift-ranks", "0")
            if shift != "0" and info and "shiftable" not in info.get("flags", ()):
                why = f"shift-ranks = {shift}: the reads of {kernel} cannot be shifted"
            if why:
                _fail(
                    where, f"kernel {kernel} cannot use backend {backend} with these options: {why}"
                )
            for n in ranks:
                cases.append(
                    Case(
                        kernel,
                        label,
                        backend,
                        n,
                        tuple(args.items()),
                        modes,
                        iterations,
                        float(timeout),
                        variant,
                        input_file,
                        env,
                        striping,
                    )
                )
    asked.append((where, cases))  # for the binary's verdict, asked once for all (build)
    return cases


# async = true: each case carries its own synchronous reference, iterations
# alternating async and synchronous in ABBA order in one job (--async-reference),
# at least this many (an even number: whole ABBA quartets)
ASYNC_ITERATIONS = 8


def _compute_async_axes(where, block, known, base, sweep):
    """The block's compute = [...] and async = [...] as swept option values:
    compute as the command line takes it (0: False, no --compute), async as
    a flag. Each may be given once: as the axis, an option or a sweep."""
    axes = {}
    for key in ("compute", "async"):
        if key not in block:
            continue
        if key in base or key in sweep:
            _fail(where, f"{key} is given twice: as {key} = [...] and in options or sweep")
        if key not in known:
            _fail(where, f"{key} = ...: this binary has no --{key} (see iokernels --help)")
        raw = block[key]
        values = raw if isinstance(raw, list) else [raw]
        if not values:
            _fail(where, f"{key} must be a non-empty list, got {raw!r}")
        if key == "async":
            if not all(isinstance(v, bool) for v in values):
                _fail(where, f"async must be true, false or a list of them, got {raw!r}")
            axes[key] = list(dict.fromkeys(values))
            continue
        out = []
        for v in values:
            if isinstance(v, int | float) and not isinstance(v, bool):
                if v < 0 or v != v or v == float("inf"):
                    _fail(where, f"compute = {v!r}: seconds must be a finite number, at least 0")
                out.append(False if v == 0 else (str(v) if isinstance(v, int) else repr(v)))
            elif isinstance(v, str):  # "0.1,0.5": a time per step, as --compute takes it
                out.append(_option_value(where, known["compute"], v))
            else:
                _fail(where, f"compute must be seconds (a number or a list of them), got {v!r}")
        axes[key] = list(dict.fromkeys(out))
    return axes


def _async_case(where, kernel, backend, args, known, inventory, variant, defaults):
    """An async case: refused at once on a backend without an asynchronous
    write (naming the case and the fix); otherwise given --async-reference
    and at least ASYNC_ITERATIONS iterations, an even number (a note says so)."""
    name = f"{kernel} {backend}" + (f" {variant}" if variant else "")
    apis = rules.apis(backend, inventory.caps)
    if apis is not None and "nonblocking" not in apis:
        _fail(
            where,
            f"case '{name}': backend {backend} has no asynchronous write (no nonblocking API; "
            f"iokernels refuses --async on it): give this block async = [false], or move "
            f"{backend} to a block without async = true",
        )
    if "async-reference" not in known:
        _fail(
            where,
            f"case '{name}': async = true runs --async --async-reference (the synchronous "
            f"reference, interleaved ABBA in the same job), which {inventory.binary} lacks: "
            "build a newer iokernels, or give async = [false]",
        )
    args["async-reference"] = True
    given = _whole_iterations(where, args.get("iterations", "1"))
    want = max(given, ASYNC_ITERATIONS)
    want += want % 2
    if want != given:
        args["iterations"] = str(want)
        note = (
            f"{where}: async cases run --iterations {want} (they had {given}): "
            f"asynchronous and synchronous iterations alternate ABBA in one job, at least "
            f"{ASYNC_ITERATIONS} and an even number"
        )
        if note not in defaults.setdefault("notes", []):
            defaults["notes"].append(note)


def _whole_iterations(where, value):
    try:
        return int(value)
    except (TypeError, ValueError):
        _fail(where, f"iterations = {value!r}: a whole number")


def _binary_check(binary, asked):
    """The binary's own verdict on each case and mode of `asked` ((where,
    cases) of each block, in order), all asked in one call
    (optcheck.refusals): the first refusal ends the campaign with the
    binary's line."""
    questions = [(w, c.argv(m), c.ranks) for w, cases in asked for c in cases for m in c.modes]
    answers = optcheck.refusals(binary, [(argv, n) for _, argv, n in questions])
    for (w, argv, n), why in zip(questions, answers, strict=True):
        if why:
            _fail(w, f"kernel {argv[0]} on {argv[2]} cannot run at {n} ranks ({argv[4]}): {why}")


def _input(where, value, base):
    """The block's positional input file: absolute, or relative to the
    campaign file; it must exist."""
    if value is None:
        return ""
    if not isinstance(value, str) or not value:
        _fail(where, f"input must be a file name, got {value!r}")
    path = Path(value)
    if not path.is_absolute() and base is not None:
        path = Path(base) / path
    if not path.is_file():
        _fail(where, f"input file {value} not found (relative paths start at the campaign file)")
    return str(path.resolve())


def _show(key, value):
    if key == "compute" and value is False:
        return "compute=0"
    if isinstance(value, bool):
        return f"{key}={'on' if value else 'off'}"
    return f"{key}={value}"


def _table(where, key, value):
    if not isinstance(value, dict):
        _fail(where, f"{key} must be a table of key = value, got {value!r}")
    return value


def _short(path):
    """A path for a one-line message: long ones keep their head and tail."""
    s = str(path).encode("unicode_escape").decode("ascii")
    return s if len(s) <= 80 else f"{s[:38]}...{s[-38:]}"


def load(path, inventory):
    """Reads and checks a campaign file against the binary's inventory."""
    return build(Path(path), read_toml(path), inventory)


def read_toml(path):
    """The TOML tables of a campaign file, or one line saying why not."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CampaignError(f"campaign file {_short(path)} not found") from None
    except OSError as e:  # a directory, no permission, a name too long
        raise CampaignError(f"cannot read campaign file {_short(path)}: {e.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise CampaignError(
            f"{_short(path)} line {line}: byte 0x{raw[e.start]:02x} is not UTF-8 "
            "(TOML files are UTF-8 text)"
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CampaignError(f"{_short(path)}: not valid TOML: {e}") from None
    return data


def build(path, data, inventory):
    """The campaign of a file's TOML tables (read_toml), checked against the
    binary's inventory."""
    where = str(path)
    unknown = set(data) - TOP_KEYS
    if unknown:
        if "tune" in unknown:
            _fail(where, "a [tune] table: this is a tune file (iokernels-campaign tune FILE)")
        _fail(where, f"unknown table {sorted(unknown)[0]!r} (known: campaign, slurm, kernel, mix)")
    head = _table(f"{where}: [campaign]", "campaign", data.get("campaign", {}))
    unknown = set(head) - CAMPAIGN_KEYS
    if unknown:
        _fail(
            f"{where}: [campaign]",
            f"unknown key {sorted(unknown)[0]!r} (known: {', '.join(sorted(CAMPAIGN_KEYS))})",
        )
    try:
        campaign_env = envvars.check(head.get("env", {}), "[campaign.env]")
        campaign_lustre = lustre.check(head.get("lustre", {}), "[campaign.lustre]")
        if "lustre" in head and not lustre.merge(campaign_lustre, {}):
            raise lustre.LustreError("[campaign.lustre]: give stripe_count, stripe_size or both")
        settings = slurm.check(data.get("slurm", {}))
    except (envvars.EnvError, lustre.LustreError, slurm.SlurmError) as e:
        _fail(where, str(e))
    name = _campaign_name(where, head, path)
    description = head.get("description", "")
    if not isinstance(description, str):
        _fail(f"{where}: [campaign]", f"description must be a string, got {description!r}")
    defaults = {
        "ranks": head.get("ranks", [1]),
        "iterations": head.get("iterations", 1),
        "modes": head.get("modes", ["write"]),
        "timeout": head.get("timeout", 600),
        "dir": path.resolve().parent,  # where relative input paths start
        "env": campaign_env,
        "lustre": campaign_lustre if "lustre" in head else {},
        "notes": [],  # what the tool changed in a case, said before it runs
    }
    blocks = data.get("kernel", [])
    mixes = data.get("mix", [])
    if not isinstance(blocks, list) or not isinstance(mixes, list) or not (blocks or mixes):
        _fail(where, "no [[kernel]] or [[mix]] block: nothing to run")
    cases, asked = [], []

    def kernel_cases(w, block, defaults, inventory):
        return _block_cases(w, block, defaults, inventory, asked)

    try:
        for i, block in enumerate(blocks, 1):
            block = _table(where, "kernel", block)
            cases += kernel_cases(f"{where}: [[kernel]] block {i}", block, defaults, inventory)
        for i, block in enumerate(mixes, 1):  # several kernels at once (mixcase.py)
            w = f"{where}: [[mix]] block {i}"
            cases += mixcase.block_cases(w, block, defaults, inventory, kernel_cases, CampaignError)
    except CampaignError:  # the binary's refusal of an earlier block comes first, as it did
        _binary_check(inventory.binary, asked)
        raise
    _binary_check(inventory.binary, asked)
    seen = {}
    for c in cases:
        key = (c.case_hash(c.modes[0]), c.modes)
        if key in seen:
            _fail(where, f"cases '{seen[key]}' and '{c.name}' are the same run twice")
        seen[key] = c.name
    _check_allocation(where, settings, cases)
    order = head.get("order", "interleaved")
    if order not in ("interleaved", "blocked"):
        _fail(f"{where}: [campaign]", f'order must be "interleaved" or "blocked", got {order!r}')
    seed = head.get("seed")
    if seed is not None and (
        not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63
    ):
        _fail(f"{where}: [campaign]", f"seed must be a whole number from 0 to 2^63-1, got {seed!r}")
    return Campaign(
        name=name,
        description=description,
        path=path,
        cases=cases,
        slurm=settings,
        order=order,
        seed=seed,
        notes=defaults["notes"],
    )


def _campaign_name(where, head, path):
    """[campaign] name, else the file's stem: a plain name either way."""
    if "name" not in head:
        if PLAIN_NAME.match(path.stem) and ".." not in path.stem:
            return path.stem
        _fail(
            where,
            f"the file name {path.stem!r} is no plain campaign name ({PLAIN_RULE}): "
            'give [campaign] name = "..."',
        )
    name = head["name"]
    if not isinstance(name, str) or not PLAIN_NAME.match(name) or ".." in name:
        _fail(
            f"{where}: [campaign]",
            f"name {name!r} is not a plain name: {PLAIN_RULE}",
        )
    return name


def _check_allocation(where, settings, cases):
    """Every case fits the allocation [slurm] asks for; env is not given twice."""
    if settings.nodes and settings.ntasks_per_node:
        room = settings.nodes * settings.ntasks_per_node
        big = max(cases, key=lambda c: c.ranks)
        if big.ranks > room:
            _fail(
                f"{where}: [slurm]",
                f"case '{big.name}' needs {big.ranks} ranks but nodes x ntasks-per-node is "
                f"{settings.nodes} x {settings.ntasks_per_node} = {room}: raise nodes",
            )
    if any(a.startswith("--export") for a in settings.srun) and any(c.env for c in cases):
        _fail(
            f"{where}: [slurm]",
            "srun has --export and the campaign sets env: the tool writes --export=ALL,... "
            "itself; drop --export from srun",
        )
