# SPDX-License-Identifier: BSD-3-Clause
"""[[mix]] blocks: several kernels at once in one job (`iokernels mix`).

    [[mix]]
    label = "btio-vs-e3sm"          # names the block's cases (default: the members' labels)
    iterations = 4                  # alone/together pairs inside the job (mix --iterations)
    start = [0, 2.5]                # seconds each member starts after the others, together
    sweep = { start = [[0, 0], [0, 2.5]] }   # or swept: every value is a case
    timeout = 600                   # seconds for the whole job
    [[mix.member]]                  # one per member, in rank order: a [[kernel]] block
    name = "btio"
    ranks = 4                       # a list sweeps it
    backends = ["mpiio"]            # one case per backend
    options = { grid = "32,32,32", fsync = true, dir = "a" }
    [[mix.member]]
    name = "e3sm"
    ranks = 4
    backends = ["pnetcdf", "null"]
    options = { generate = "g:cells=1000,procs=4", out = "g.nc" }

Each member is checked as a [[kernel]] block (spec.py: its options, backends,
rank counts, input); the block's cases are every combination of the
members' cases (and of the swept starts). A case runs once, as one job of
the members' ranks together; the store keeps it as one run with each
member's runs (store.py, mix_runs)."""

import hashlib
import itertools
import json
from dataclasses import dataclass

from . import envvars, keys

MIX_KEYS = set(keys.names("[[mix]]"))


@dataclass(frozen=True)
class MixCase:
    """One mix: its members (spec.Case each: kernel, backend, ranks, options)
    run at once in one job, each alone and all together."""

    label: str
    members: tuple  # spec.Case, in rank order
    mix_iterations: int
    start: tuple  # seconds per member
    timeout: float
    variant: str = ""
    env: tuple = ()  # the members' variables: one job has one environment
    kernel = "mix"
    modes = ("write",)
    iterations = 1  # one job; the alone/together pairs are inside it
    input = ""
    lustre = ()

    @property
    def ranks(self):
        return sum(m.ranks for m in self.members)

    @property
    def backend(self):
        return "+".join(m.backend for m in self.members)

    @property
    def lustre_settings(self):
        return {}

    def environment(self, casedir, rundir, mode, iteration):
        """The job's variables ([campaign.env] and the members' [kernel.env]),
        placeholders filled in as for a single kernel's run."""
        return envvars.expand(self.env, self.dirname, casedir, rundir, mode, iteration)

    def member_label(self, i):
        """Member i's name in reports: its case's name (label backend nN ...)."""
        return self.members[i].name

    def argv(self, mode):
        """`mix --member-dirs --iterations N [--start ...] --part N:KERNEL its
        options ...` (without --json): each member in its own folder of the
        iteration's, so like members never share a file."""
        out = ["mix", "--member-dirs", "--iterations", str(self.mix_iterations)]
        if any(self.start):
            out += ["--start", ",".join(f"{s:g}" for s in self.start)]
        for m in self.members:
            argv = m.argv("write")
            # the member's options less --mode: a mix member writes
            i = argv.index("--mode")
            out += ["--part", f"{m.ranks}:{m.kernel}", *argv[1:i], *argv[i + 2 :]]
        return out

    def case_hash(self, mode):
        ident = {
            "mix": [m.case_hash("write") for m in self.members],
            "iterations": self.mix_iterations,
            "start": list(self.start),
        }
        return hashlib.sha256(json.dumps(ident).encode()).hexdigest()[:16]

    @property
    def name(self):
        parts = [self.label, self.backend, f"n{self.ranks}"]
        return " ".join(parts + ([self.variant] if self.variant else []))

    @property
    def dirname(self):
        raw = f"mix-{self.label}-n{self.ranks}-{self.case_hash('write')[:8]}"
        return "".join(c if c.isalnum() or c in "-_." else "_" for c in raw)

    def describe(self):
        return {
            "kind": "mix",
            "label": self.label,
            "members": [m.describe() for m in self.members],
            "mix_iterations": self.mix_iterations,
            "start": list(self.start),
            "timeout": self.timeout,
            "variant": self.variant,
        }

    @classmethod
    def from_description(cls, d, case_cls):
        return cls(
            d["label"],
            tuple(case_cls.from_description(m) for m in d["members"]),
            d["mix_iterations"],
            tuple(d["start"]),
            d["timeout"],
            d.get("variant", ""),
        )


def check_label(fail, label):
    """A [[kernel]], [[mix]] or [[mix.member]] label: it names the block's
    cases in progress lines, reports and the batch script's comment line
    (`# case 1/2: LABEL ...`), where a line break would start a line of the
    job script. So one line of printable characters, else fail(message)."""
    if not isinstance(label, str) or not label:
        fail(f"label must be a non-empty string, got {label!r}")
    bad = next((c for c in label if not c.isprintable()), None)
    if bad is not None:
        fail(
            f"label {label!r} holds {bad!r}: a label is one line of printable characters "
            "(no line break, tab or other control character); remove it"
        )
    return label


def _starts(fail, value, n):
    if (
        not isinstance(value, list)
        or len(value) != n
        or not all(isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in value)
    ):
        fail(f"start must list {n} numbers of seconds (one per member, 0 or more), got {value!r}")
    return tuple(float(v) for v in value)


def block_cases(where, block, defaults, inventory, member_cases, error):
    """The cases of one [[mix]] block. member_cases(where, block, defaults,
    inventory) -> [spec.Case]: the [[kernel]] block's checks and expansion;
    error: the exception a bad block raises (spec.CampaignError, handed in:
    spec imports this module, never the other way round)."""

    def fail(msg):
        raise error(f"{where}: {msg}")

    if not isinstance(block, dict):
        fail("must be a table")
    unknown = set(block) - MIX_KEYS
    if unknown:
        fail(f"unknown key {sorted(unknown)[0]!r} (known: {', '.join(sorted(MIX_KEYS))})")
    members = block.get("member")
    if not isinstance(members, list) or len(members) < 2:
        fail("give two or more [[mix.member]] blocks (each as a [[kernel]] block)")
    per_member = []
    for i, m in enumerate(members, 1):
        if not isinstance(m, dict):
            fail(f"[[mix.member]] {i} must be a table")
        for key in ("modes", "iterations", "timeout"):
            if key in m:
                fail(f"[[mix.member]] {i}: {key} belongs to the [[mix]] block, not to a member")
        inner = {**defaults, "iterations": 1, "modes": ["write"]}
        per_member.append(member_cases(f"{where} [[mix.member]] {i}", m, inner, inventory))
    iterations = block.get("iterations", max(defaults["iterations"], 4))
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        fail(f"iterations must be a whole number of at least 1, got {iterations!r}")
    timeout = block.get("timeout", defaults["timeout"])
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        fail(f"timeout must be a positive number of seconds, got {timeout!r}")
    sweep = block.get("sweep", {})
    if not isinstance(sweep, dict) or set(sweep) - {"start"}:
        fail(f"sweep takes start only (a list of start lists), got {sweep!r}")
    if "start" in sweep and "start" in block:
        fail("start is both given and swept: keep one")
    n = len(members)
    starts = (
        [_starts(fail, s, n) for s in sweep["start"]]
        if isinstance(sweep.get("start"), list) and sweep["start"]
        else [_starts(fail, block.get("start", [0] * n), n)]
    )
    if "start" in sweep and not (isinstance(sweep["start"], list) and sweep["start"]):
        fail(f"sweep start must be a non-empty list of start lists, got {sweep['start']!r}")
    label = block.get("label")
    if label is not None:
        check_label(fail, label)
    cases = []
    for combo in itertools.product(*per_member):
        env = {}
        for c in combo:
            for name, value in c.env:
                if env.setdefault(name, value) != value:
                    fail(
                        f"the members give {name} two values ({env[name]!r}, {value!r}): the"
                        " mix is one job with one environment; give it once in [campaign.env]"
                    )
        for start in starts:
            variant = f"start={','.join(f'{s:g}' for s in start)}" if "start" in sweep else ""
            cases.append(
                MixCase(
                    label or "+".join(c.label for c in combo),
                    tuple(combo),
                    iterations,
                    start,
                    float(timeout),
                    variant,
                    tuple(env.items()),
                )
            )
    return cases


def progress(record):
    """The runner's progress line's tail for a mix's record: each member's
    slowdown as the job printed it."""
    parts = []
    for m in record.get("members", []):
        sd = m.get("slowdown", {})
        ratio = sd.get("hodges_lehmann", sd.get("ratio_of_medians"))
        shown = f"{ratio:.2f}" if isinstance(ratio, int | float) else "-"
        parts.append(f"{m.get('kernel')} x{shown} {sd.get('call', '?')}")
    return "slowdown " + ", ".join(parts)
