# SPDX-License-Identifier: BSD-3-Clause
"""Slurm: the `[slurm]` table, the one batch script of a campaign (every run
a job step), and what became of a job that left runs without a status.

    [slurm]
    nodes = 2                       # #SBATCH --nodes
    ntasks-per-node = 32            # #SBATCH --ntasks-per-node; each step -N/-n/--ntasks-per-node
    partition = "regular"           # #SBATCH --partition
    account = "m1234"               # #SBATCH --account
    qos = "normal"                  # #SBATCH --qos
    constraint = "cpu"              # #SBATCH --constraint
    time = "01:00:00"               # #SBATCH --time: the whole campaign's limit
    prelude = ["module load cray-hdf5-parallel darshan"]   # shell lines before the steps
    sbatch = { mail-type = "END", exclusive = true }   # any other #SBATCH option; true: a flag
    srun = ["--cpu-bind=cores"]     # extra arguments of every srun
    mpi = "pmix"                    # srun --mpi of every step (default: pmix for OpenMPI
                                    # where srun --mpi=list has it, else the site's MpiDefault)

Before its first step the job starts one rank with that plugin (iokernels
--version) and, when it cannot, stops with one line naming the plugin and the
fix (job.end.json "error"). Before each step it compares the clock with the
job's end time (squeue %e, read once) and stops launching once the time is
up or srun refuses a step because the job is completing: the steps left get
a status saying "not run: job N reached its time limit"."""

import difflib
import math
import re
import shlex
import subprocess
from dataclasses import dataclass, field

from . import keys, lustre

# [slurm] key -> the #SBATCH option it becomes (in this order)
OPTIONS = ("nodes", "ntasks-per-node", "partition", "account", "qos", "constraint", "time")
KEYS = keys.names("[slurm]")  # OPTIONS first, then prelude, sbatch, srun, mpi
# #SBATCH options the tool writes itself, or that have their own key
OWNED = {
    "output": "the job's output goes to SESSION/slurm-%j.out",
    "error": "the job's output goes to SESSION/slurm-%j.out",
    "ntasks": "each step asks for its case's ranks; use nodes and ntasks-per-node",
    "array": "the campaign is one job whose steps are the runs",
}
OPTION = re.compile(r"[a-z][a-z0-9-]*")
PLUGIN = re.compile(r"[a-z][a-z0-9_]*")
# what each MPI's ranks need from srun (docs/slurm.md, "MPI under srun")
PLUGIN_FOR = {"openmpi": "pmix", "mpich": "pmi2"}
TIME = re.compile(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?")


class SlurmError(ValueError):
    """A bad [slurm] table: the message names the key and the fix."""


@dataclass
class Slurm:
    options: dict = field(default_factory=dict)  # #SBATCH name -> value, in order
    nodes: int | None = None
    ntasks_per_node: int | None = None
    time_seconds: int | None = None
    prelude: list = field(default_factory=list)
    srun: list = field(default_factory=list)
    mpi: str | None = None


def time_seconds(value):
    """Slurm's time formats: minutes, minutes:seconds, hours:minutes:seconds,
    days-hours, days-hours:minutes, days-hours:minutes:seconds."""
    m = TIME.fullmatch(value)
    if not m:
        return None
    d, a, b, c = (int(x) if x else None for x in m.groups())
    if d is not None:  # days-hours[:minutes[:seconds]]
        return d * 86400 + a * 3600 + (b or 0) * 60 + (c or 0)
    if c is not None:
        return a * 3600 + b * 60 + c
    if b is not None:
        return a * 60 + b
    return a * 60


def _unknown(key, known, where):
    near = difflib.get_close_matches(key.replace("_", "-"), known, 1)
    hint = f"did you mean {near[0]}? " if near else ""
    return SlurmError(
        f"{where}: unknown key {key!r} ({hint}known: {', '.join(known)}; "
        "any other #SBATCH option goes in sbatch = { ... })"
    )


def _count(where, key, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SlurmError(f"{where}: {key} must be a whole number, 1 or more, got {value!r}")
    return value


def check(table, where="[slurm]"):
    if not isinstance(table, dict):
        raise SlurmError(f"{where} must be a table, got {table!r}")
    for key in table:
        if key not in KEYS:
            raise _unknown(key, KEYS, where)
    s = Slurm()
    for key in OPTIONS:
        if key not in table:
            continue
        value = table[key]
        if key in ("nodes", "ntasks-per-node"):
            value = _count(where, key, value)
        elif key == "time":
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                value = str(value)  # minutes, as sbatch reads a bare number
            if not isinstance(value, str) or not time_seconds(value):
                raise SlurmError(
                    f'{where}: time must be a Slurm time such as "01:30:00", "90" (minutes) '
                    f'or "1-00:00:00", got {value!r}'
                )
            s.time_seconds = time_seconds(value)
        elif not isinstance(value, str) or not value.strip() or not value.isprintable():
            raise SlurmError(f"{where}: {key} must be a non-empty string, got {value!r}")
        s.options[key] = str(value)
    s.nodes = table.get("nodes")
    s.ntasks_per_node = table.get("ntasks-per-node")
    extra = table.get("sbatch", {})
    if not isinstance(extra, dict):
        raise SlurmError(f"{where}: sbatch must be a table of option = value, got {extra!r}")
    for key, value in extra.items():
        if not OPTION.fullmatch(key):
            raise SlurmError(
                f"{where}: sbatch.{key!r} is not an sbatch option name (such as mail-type)"
            )
        if key in OPTIONS:
            if key in table:
                raise SlurmError(f"{where}: {key} is given twice, as {key} and in sbatch")
            raise SlurmError(f"{where}: sbatch.{key}: write {key} = ... in [slurm] itself")
        if key in OWNED:
            raise SlurmError(f"{where}: sbatch.{key} is not allowed: {OWNED[key]}")
        if isinstance(value, bool):  # a flag: exclusive = true is #SBATCH --exclusive
            if value:
                s.options[key] = True
            continue
        if not isinstance(value, str | int | float) or not str(value):
            raise SlurmError(
                f"{where}: sbatch.{key} must be a value, or true for a flag, got {value!r}"
            )
        if not str(value).isprintable():
            raise SlurmError(f"{where}: sbatch.{key} must be one line of printable characters")
        s.options[key] = str(value)
    prelude = table.get("prelude", [])
    if isinstance(prelude, str):
        prelude = prelude.splitlines()
    if not isinstance(prelude, list) or not all(isinstance(x, str) for x in prelude):
        raise SlurmError(
            f'{where}: prelude must be a list of shell lines, such as ["module load hdf5"], '
            f"got {prelude!r}"
        )
    s.prelude = prelude
    srun = table.get("srun", [])
    if not isinstance(srun, list) or not all(isinstance(a, str) for a in srun):
        raise SlurmError(f"{where}: srun must be a list of arguments, got {srun!r}")
    s.srun = srun
    mpi = table.get("mpi")
    if mpi is not None and (not isinstance(mpi, str) or not PLUGIN.fullmatch(mpi)):
        raise SlurmError(
            f'{where}: mpi must be a plugin of srun --mpi=list such as "pmix" (OpenMPI) or '
            f'"pmi2" (MPICH), got {mpi!r}'
        )
    if mpi is not None and any(a.startswith("--mpi") for a in srun):
        raise SlurmError(f"{where}: srun has --mpi and mpi is given: keep mpi = {mpi!r} only")
    s.mpi = mpi
    return s


def member_placement(members, nodes, ntasks_per_node):
    """(nodes, ranks per node) that give each member of a mix (its rank
    counts, in rank order) whole nodes of its own under block distribution,
    or None. Only where the allocation's shape is known ([slurm] nodes and
    ntasks-per-node): the most ranks per node that divides every member's
    ranks and fits ntasks-per-node, when the nodes that takes are there."""
    if len(members) < 2 or not nodes or not ntasks_per_node:
        return None
    g = math.gcd(*members)
    per = max(d for d in range(1, min(g, ntasks_per_node) + 1) if g % d == 0)
    need = sum(members) // per
    return (need, per) if need <= nodes else None


def step_shape(ranks, ntasks_per_node, members=(), nodes=None):
    """The srun arguments that place `ranks` ranks: with ntasks-per-node,
    as few nodes as hold them at that many per node. A mix (members: its
    members' rank counts) gets nodes of its own per member where
    member_placement finds them: ranks given out in blocks of whole nodes,
    as the mix gives out its members' ranks (the first to member 1...)."""
    placed = member_placement(members, nodes, ntasks_per_node)
    if placed:
        n, per = placed
        return ["-n", str(ranks), "-N", str(n), f"--ntasks-per-node={per}", "--distribution=block"]
    if not ntasks_per_node:
        return ["-n", str(ranks)]
    per = min(ranks, ntasks_per_node)
    return ["-n", str(ranks), "-N", str(-(-ranks // per)), f"--ntasks-per-node={per}"]


def job_shape(slurm, max_ranks):
    """#SBATCH lines for the allocation: nodes and ntasks-per-node as given
    (nodes derived from the largest case when only ntasks-per-node is),
    else --ntasks for the largest case."""
    if slurm.ntasks_per_node and not slurm.nodes:
        return {"nodes": str(-(-max_ranks // slurm.ntasks_per_node))}
    if not slurm.ntasks_per_node:
        return {"ntasks": str(max_ranks)}
    return {}


STEP_FUNCTION = r"""iok_late() {  # STEP: the step's status when the job's time is up
  iok_over=1
  printf '{"exit_code": null, "not_run": "job %s reached its time limit%s %s"}\n' \
    "${SLURM_JOB_ID:-}" "$IOK_TIME" "before this step started" > "$1.status.json"
  return 1
}

iok_step() {  # DIR STEP LIMIT COMMAND...: COMMAND in DIR, its files STEP.*
  local dir=$1 step=$2 limit=$3 start end rc timed=null
  shift 3
  cd "$dir" || return 1
  # the time is up (or a step was refused for it): launch nothing more
  if [ "$iok_over" = 1 ] || { [ "$iok_end" -gt 0 ] && [ "$(date +%s)" -ge "$iok_end" ]; }; then
    iok_late "$step"
    return
  fi
  start=$(date +%s.%N)
  # the step named after its run (jobfate.STEP_NAME): sacct says its state
  if [ "$1" = srun ]; then
    shift
    set -- srun --job-name="iok:${dir#"$R"/}/$step" "$@"
  fi
  timeout -k 30 "$limit" "$@" > "$step.stdout" 2> "$step.stderr"
  rc=$?
  end=$(date +%s.%N)
  # srun refused the step: Slurm is ending the job (its time limit, checked periodically)
  if [ $rc -ne 0 ] && grep -q "already completing or completed" "$step.stderr"; then
    iok_late "$step"
    return
  fi
  # 124: timeout ended it; 137: it needed a KILL (after the limit, not an OOM kill)
  if [ $rc -eq 124 ] || { [ $rc -eq 137 ] && awk "BEGIN { exit !($end - $start >= $limit) }"; }
  then
    timed=$limit
  fi
  printf '{"exit_code": %d, "started": %s, "ended": %s, "timed_out": %s}\n' \
    "$rc" "$start" "$end" "$timed" > "$step.status.json"
  return $rc
}"""

# the job's end time, once (0: none known); steps are not launched after it
# (date -d "" is today's midnight: an empty answer must not become an end)
END_TIME = r"""iok_over=0
iok_end=$(squeue -h -j "${SLURM_JOB_ID:-0}" -o %e 2> /dev/null)
iok_end=$([ -n "$iok_end" ] && date -d "$iok_end" +%s 2> /dev/null) || iok_end=0"""

# One rank with the chosen plugin before the first step; when it cannot
# start, the job ends with one line (job.end.json "error") that collect
# gives every run.
PROBE = r"""iok_plugin=${SLURM_MPI_TYPE:-$(scontrol show config 2> /dev/null \
  | awk '$1 == "MpiDefault" { print $3 }')}
if ! srun -n 1 -N 1 PROBE > "$R"/mpi-probe.out 2> "$R"/mpi-probe.err; then
  why=$(grep -m1 -iE 'pmi|slurm|error' "$R"/mpi-probe.err || head -1 "$R"/mpi-probe.err)
  have=$(srun --mpi=list 2>&1 | awk 'NR > 1 && !/specific/ { printf "%s%s", s, $1; s = ", " }')
  msg="srun --mpi=$iok_plugin cannot start a rank of iokernels (${why:-no message}): set [slurm] \
mpi = \"FIX\" in the campaign (OpenMPI: pmix, MPICH: pmi2; this srun has: $have)"
  msg=$(printf '%s' "$msg" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g' | cut -c1-600)
  printf '{"exit_code": 1, "ended": %s, "error": "%s"}\n' "$(date +%s.%N)" "$msg" \
    > "$R"/job.end.json.part && mv -f "$R"/job.end.json.part "$R"/job.end.json
  echo "iokernels-campaign: $msg" >&2
  exit 1
fi"""


def mpi_choice(slurm, mpi_family):
    """Shell lines that choose srun's MPI plugin for every step (SLURM_MPI_TYPE,
    which srun reads as --mpi): [slurm] mpi, else pmix for OpenMPI where this
    srun has it, else the site's MpiDefault."""
    if slurm.mpi:
        return [f"export SLURM_MPI_TYPE={shlex.quote(slurm.mpi)}  # [slurm] mpi"]
    plugin = PLUGIN_FOR.get(mpi_family)
    if not plugin:
        return ["# MPI plugin: the site's MpiDefault (the suite's MPI is not known here)"]
    return [
        f"# the suite is built with {mpi_family}: {plugin}, where this srun has it",
        f"if srun --mpi=list 2>&1 | grep -qw {plugin}; then export SLURM_MPI_TYPE={plugin}; fi",
    ]


def srun_mpi(slurm, family):
    """srun's --mpi for the srun launcher (inside an allocation), chosen as
    the batch script chooses it: [slurm] mpi, else pmix for OpenMPI where
    srun --mpi=list has it, else nothing (the site's MpiDefault)."""
    if slurm.mpi:
        return [f"--mpi={slurm.mpi}"]
    plugin = PLUGIN_FOR.get(family)
    try:
        p = subprocess.run(["srun", "--mpi=list"], capture_output=True, text=True, timeout=60)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return []
    have = (p.stdout + p.stderr).split()
    return [f"--mpi={plugin}"] if plugin and plugin in have else []


def mpi_family(binary):
    """openmpi, mpich or None: the MPI library the binary is linked with."""
    try:
        p = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, timeout=30)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None
    libs = [x for x in p.stdout.splitlines() if "libmpi" in x]
    text = " ".join(libs).lower()
    if "openmpi" in text or "libmpi.so.40" in text:
        return "openmpi"
    if "mpich" in text or "libmpi.so.12" in text:
        return "mpich"
    return None


def script(name, session_dir, slurm, cases, max_ranks, binary="iokernels", family=None, runs=None):
    """The campaign's batch script (binary: the suite's, for the MPI probe;
    family: its MPI, openmpi or mpich, for the plugin). cases: [(title, casedir, lustre settings,
    iterations)], iterations: [[(directory, step, limit seconds, command)]],
    command the whole srun line (argv). Within an iteration a step runs only
    when the one before it succeeded (a read needs the write); a case whose
    required striping failed runs nothing. The job writes SESSION/job.start.json
    first and SESSION/job.end.json last (a job killed by its time limit has
    no end file). runs: [(case index, iteration index, round)] in the order
    they run (an interleaved campaign, run/order.py); None: each case's
    iterations back to back."""
    q = shlex.quote
    nruns = sum(len(s) for _, _, _, its in cases for s in its)
    lines = [
        "#!/bin/bash",
        f"# iokernels-campaign {_comment(name)}: {len(cases)} cases, {nruns} runs, "
        "one srun step per run",
        f"#SBATCH --job-name={q(('iok-' + name)[:64])}",
        f"#SBATCH --output={q(str(session_dir))}/slurm-%j.out",
    ]
    shape = job_shape(slurm, max_ranks)
    options = {**shape, **slurm.options} if "ntasks" in shape else {**slurm.options, **shape}
    lines += [f"#SBATCH --{k}" + ("" if v is True else f"={q(v)}") for k, v in options.items()]
    if slurm.prelude:  # before set -u: module scripts read unset variables
        lines += ["", "# [slurm] prelude", *slurm.prelude]
    lines += ["", "set -u"]
    session = '"$R"'
    lines += [
        "",
        f"R={q(str(session_dir))}  # the session directory",
        f'printf \'{{"job_id": "%s", "nodelist": "%s", "started": %s}}\\n\' '
        f'"${{SLURM_JOB_ID:-}}" "${{SLURM_JOB_NODELIST:-}}" "$(date +%s.%N)" '
        f"> {session}/job.start.json",
        f"rm -f {session}/job.end.json  # an earlier attempt's (a requeued job)",
        "",
        *mpi_choice(slurm, family),
        PROBE.replace("PROBE", _sh([binary, "--version"], session_dir)).replace(
            "FIX", PLUGIN_FOR.get(family, "pmix")
        ),
        "",
        "IOK_TIME=" + (q(f" (--time={slurm.options['time']})") if "time" in slurm.options else ""),
        END_TIME,
        "",
        STEP_FUNCTION,
    ]
    if any(settings for _, _, settings, _ in cases):
        lines += ["", lustre.SHELL_FUNCTION]
    lines += ["", "worst=0"]
    if runs is None:
        runs = [(i, j, None) for i, c in enumerate(cases) for j in range(len(c[3]))]
    seen = {}  # case index: the variable saying its striping worked (or "")
    last_round = None
    for i, j, rnd in runs:
        title, casedir, settings, iterations = cases[i]
        if rnd is not None and rnd != last_round:
            lines += ["", f"# round {rnd}"]
            last_round = rnd
        if i not in seen:
            lines += [""] if rnd is None else []
            lines.append(f"# case {i + 1}/{len(cases)}: {_comment(title)}")
            seen[i] = ""
            if settings:  # striped once, before the case's first run
                seen[i] = f"striped{i + 1}"
                call = _sh(lustre.shell_call(casedir, settings), session_dir)
                ok, failed = f"  {seen[i]}=1", f"  {seen[i]}=0; worst=1"
                lines += [f"if {call}; then", ok, "else", failed, "fi"]
        elif rnd is not None:
            lines.append(f"# {_comment(title)}, iteration {j + 1}")
        indent = ""
        if seen[i]:
            lines.append(f"if [ ${seen[i]} = 1 ]; then")
            indent = "  "
        lines.append(f"{indent}ok=1")
        for directory, step, limit, cmd in iterations[j]:
            call = _sh(["iok_step", directory, step, f"{limit:g}", *cmd], session_dir)
            lines.append(f"{indent}[ $ok = 1 ] && {{ {call} || {{ worst=$?; ok=0; }}; }}")
        if seen[i]:
            lines.append("fi")
    lines += [
        "",
        "# whole or absent: written under another name, then renamed",
        f'printf \'{{"exit_code": %d, "ended": %s}}\\n\' "$worst" "$(date +%s.%N)" '
        f"> {session}/job.end.json.part && mv -f {session}/job.end.json.part "
        f"{session}/job.end.json",
        "exit $worst",
        "",
    ]
    return "\n".join(lines)


def _comment(text):
    """Text for a comment line of the script: its characters that are not
    printable escaped (a line break would end the comment and start a line
    of shell). The campaign file's checks refuse such labels already."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def _sh(argv, session_dir):
    """A shell command line in which the session directory is "$R"."""
    prefix, out = str(session_dir), []
    for token in map(str, argv):
        parts = token.split(prefix)
        out.append('"$R"'.join(shlex.quote(p) if p else "" for p in parts))
    return " ".join(out)
