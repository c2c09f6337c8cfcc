# SPDX-License-Identifier: BSD-3-Clause
"""Every key a campaign file may hold, declared once as data: the validators
(spec.py, slurm.py, lustre.py) take their lists of known keys from here and
scripts/gen-reference writes docs/reference/campaign.md from it, so the page
cannot list a key the tool refuses or miss one it accepts.

Stdlib only (the generator runs without the package's dependencies)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Key:
    table: str  # the TOML table as written in the file: "[campaign]", "[[kernel]]"
    name: str  # the key; an upper-case placeholder (NAME, OPTION) when any name goes
    type: str  # the TOML value it takes
    default: str  # what holds when the key is absent (Markdown); "" when nothing does
    description: str  # Markdown (the reference page shows it as is)


# Each table once, in the order the page shows them, with what it is for.
TABLES = {
    "(top level)": "The tables of a campaign file; anything else is refused.",
    "[campaign]": "Defaults for every `[[kernel]]` block, and the campaign's name.",
    "[campaign.env]": "Environment variables exported to every run.",
    "[campaign.lustre]": "Lustre striping (`lfs setstripe`) of every case directory.",
    "[slurm]": "The one batch job of `--launcher sbatch` (and the steps of `srun`).",
    "[[kernel]]": "One block per kernel setup: every combination of its backends, "
    "swept values and rank counts is a case.",
    "[kernel.backend.NAME]": "Options for backend NAME only, over the block's `options`.",
    "[kernel.env]": "Environment variables of this block's runs, over `[campaign.env]`.",
    "[kernel.lustre]": "Striping of this block's case directories, over `[campaign.lustre]`.",
    "[[mix]]": "Several kernels at once in one job (`iokernels mix`, see "
    "[Workload mixes](../mixes.md)): every combination of its members' cases (and swept "
    "starts) is a case.",
    "[[mix.member]]": "One member of the mix, in rank order: a `[[kernel]]` block (name, "
    "label, ranks, backends, options, sweep, input, backend, env) without modes, "
    "iterations or timeout.",
    "[tune]": "Only in a tune file (`iokernels-campaign tune`, see [Tuning](../tune.md)): "
    "its one `[[kernel]]` block, one rank count, no `sweep`, is the case tuned.",
    "[tune.space]": "The settings a tune varies, each with its values; the value "
    '`"default"` in any list leaves that setting to the library.',
}

_ENV = (
    "string",
    "",
    '`NAME = "value"`: exported to each run; the placeholders `{case}`, `{casedir}`, '
    "`{rundir}`, `{mode}` and `{iteration}` are filled in per run, `{{` and `}}` are "
    "literal braces",
)
_LUSTRE = (
    ("stripe_count", "integer", "", "OSTs per file (`lfs setstripe -c`), -1 for every OST"),
    (
        "stripe_size",
        "integer or string",
        "",
        'bytes per stripe (`-S`), or a size such as "4M"; a multiple of 64 KiB',
    ),
    (
        "required",
        "boolean",
        "`false`",
        "true: no `lfs`, or `lfs` failing, is an error instead of a skipped striping",
    ),
)
# [campaign] and [[kernel]] share these; the block's value wins
_RUN = (
    ("ranks", "integer or list of integers", "`[1]`", "rank counts; each is a case"),
    ("iterations", "integer", "`1`", "iterations of every case"),
    (
        "modes",
        "list of strings",
        '`["write"]`',
        "write, read or both, run in order in one directory per iteration",
    ),
    ("timeout", "number", "`600`", "seconds per run before it is ended"),
)

_ROWS = (
    ("(top level)", "campaign", "table", "", "the `[campaign]` table"),
    ("(top level)", "slurm", "table", "", "the `[slurm]` table"),
    (
        "(top level)",
        "kernel",
        "array of tables",
        "",
        "the `[[kernel]]` blocks; at least one, or a `[[mix]]` block",
    ),
    ("(top level)", "mix", "array of tables", "", "the `[[mix]]` blocks"),
    (
        "(top level)",
        "tune",
        "table",
        "",
        "the `[tune]` table: in a tune file only, refused by `run`",
    ),
    (
        "[campaign]",
        "name",
        "string",
        "the file's stem",
        "names the results folder and the jobs: letters, digits, `-`, `_` and `.` (not "
        "first), at most 100",
    ),
    ("[campaign]", "description", "string", '`""`', "one line shown in the report"),
    (
        "[campaign]",
        "order",
        "string",
        '`"interleaved"`',
        '"interleaved": the campaign runs in rounds, each round every case once, in an order '
        "rotated per round (a Williams design, its cases and rows shuffled from `seed`); "
        '"blocked": each case\'s iterations back to back, case after case',
    ),
    (
        "[campaign]",
        "seed",
        "integer",
        "drawn and recorded in the store",
        "the seed of the interleaved order: the same seed, the same order",
    ),
    *(("[campaign]",) + r for r in _RUN),
    ("[campaign]", "env", "table", "`{}`", "see `[campaign.env]`"),
    ("[campaign]", "lustre", "table", "", "see `[campaign.lustre]`"),
    ("[campaign.env]", "NAME", *_ENV),
    *(("[campaign.lustre]",) + r for r in _LUSTRE),
    ("[slurm]", "nodes", "integer", "", "`#SBATCH --nodes`"),
    (
        "[slurm]",
        "ntasks-per-node",
        "integer",
        "",
        "`#SBATCH --ntasks-per-node`; each step asks for `-N`, `-n` and `--ntasks-per-node`",
    ),
    ("[slurm]", "partition", "string", "", "`#SBATCH --partition`"),
    ("[slurm]", "account", "string", "", "`#SBATCH --account`"),
    ("[slurm]", "qos", "string", "", "`#SBATCH --qos`"),
    ("[slurm]", "constraint", "string", "", "`#SBATCH --constraint`"),
    (
        "[slurm]",
        "time",
        "string or integer",
        "",
        '`#SBATCH --time`, the whole campaign\'s limit: "01:30:00", "1-00:00:00" or minutes',
    ),
    ("[slurm]", "prelude", "list of strings", "`[]`", "shell lines run before the first step"),
    (
        "[slurm]",
        "sbatch",
        "table",
        "`{}`",
        "any other `#SBATCH` option, option = value; true for a flag",
    ),
    ("[slurm]", "srun", "list of strings", "`[]`", "extra arguments of every srun"),
    (
        "[slurm]",
        "mpi",
        "string",
        "`pmix` for OpenMPI when `srun --mpi=list` has it, else the site's MpiDefault",
        "`srun --mpi` plugin of every step",
    ),
    ("[[kernel]]", "name", "string", "", "the kernel (`iokernels --list`); required"),
    ("[[kernel]]", "label", "string", "the kernel's name", "names the block's cases"),
    (
        "[[kernel]]",
        "backends",
        'string "all" or list of strings',
        '`"all"`',
        "backends to run on; all: every backend of the binary",
    ),
    (
        "[[kernel]]",
        "exclude",
        "list of strings",
        "`[]`",
        'backends left out of backends = "all"',
    ),
    *(("[[kernel]]", n, t, "`[campaign]`'s", d) for n, t, _, d in _RUN),
    (
        "[[kernel]]",
        "options",
        "table",
        "`{}`",
        "options of `iokernels KERNEL --help` as key = value: true is a bare flag, false "
        "leaves it out; backend, json, mode and help are refused",
    ),
    (
        "[[kernel]]",
        "sweep",
        "table of lists",
        "`{}`",
        "option = [values]: every combination is a case",
    ),
    (
        "[[kernel]]",
        "compute",
        "number or list of numbers",
        "none",
        "seconds of computation after each write step (`--compute`), each a case; 0 passes "
        "no `--compute` ([Computation and asynchronous writes](../compute-async.md))",
    ),
    (
        "[[kernel]]",
        "async",
        "boolean or list of booleans",
        "`false`",
        "true runs `--async --async-reference`: asynchronous and synchronous iterations "
        "interleaved (ABBA) in one job, at least 8 (`--iterations` raised to 8, even)",
    ),
    ("[[kernel]]", "backend", "table of tables", "`{}`", "see `[kernel.backend.NAME]`"),
    (
        "[[kernel]]",
        "input",
        "string",
        "",
        "the kernel's input file, relative to the campaign file",
    ),
    ("[[kernel]]", "env", "table", "`{}`", "see `[kernel.env]`"),
    ("[[kernel]]", "lustre", "table", "", "see `[kernel.lustre]`"),
    (
        "[kernel.backend.NAME]",
        "OPTION",
        "as the option",
        "",
        "an option of the kernel or of backend NAME, for that backend's cases only",
    ),
    ("[kernel.env]", "NAME", *_ENV),
    *(("[kernel.lustre]",) + r for r in _LUSTRE),
    ("[[mix]]", "label", "string", "the members' labels joined by +", "names the block's cases"),
    (
        "[[mix]]",
        "iterations",
        "integer",
        "`[campaign]`'s, at least 4",
        "alone/together pairs inside the job (`mix --iterations`); 4 is the fewest for an interval",
    ),
    (
        "[[mix]]",
        "start",
        "list of numbers",
        "all 0",
        "seconds each member starts after the common start, together (`mix --start`)",
    ),
    ("[[mix]]", "sweep", "table", "`{}`", "`start = [[0, 0], [0, 2.5]]`: each list is a case"),
    ("[[mix]]", "timeout", "number", "`[campaign]`'s", "seconds for the whole job"),
    ("[[mix]]", "member", "array of tables", "", "see `[[mix.member]]`; two or more"),
    ("[[mix.member]]", "KEY", "as in `[[kernel]]`", "", "the keys of a `[[kernel]]` block"),
    ("[tune]", "trials", "integer", "", "budget: settings tried, the defaults included"),
    (
        "[tune]",
        "minutes",
        "number",
        "",
        "budget: no new trial starts after this many minutes (the confirmation comes "
        "after); give `trials`, `minutes` or both",
    ),
    (
        "[tune]",
        "repeats",
        "integer",
        "`3`",
        "runs of a trial that lands within the noise of the best",
    ),
    (
        "[tune]",
        "noise",
        "number",
        "`0.10`",
        "the best's band: the spread of its runs, at least this fraction of its median "
        "either side; below 1",
    ),
    (
        "[tune]",
        "confirm",
        "integer",
        "`5`",
        "re-runs of the defaults and of the best, in ABBA order, each after an untimed "
        "sync (and cache drop for reads) (at least 5)",
    ),
    (
        "[tune]",
        "objective",
        "string",
        '`"durable"`',
        'what a trial\'s time is: `"durable"`, writes with `--fsync` (the data reached '
        'storage) and reads with `--drop-caches`; `"io"`, the I/O time as the case runs '
        "it (the page cache may serve it)",
    ),
    (
        "[tune]",
        "cut",
        "number",
        "`5`",
        "a trial's run is stopped past this multiple of the best's slowest wall time "
        "(at least 10 s); 0: never",
    ),
    (
        "[tune]",
        "seed",
        "integer",
        "`1`",
        "the sampler's seed: the same file tries the same settings",
    ),
    (
        "[tune]",
        "sampler",
        "string",
        '`"auto"`',
        "`auto`: a grid (Optuna's GridSampler) when the space has at most `trials` - 1 "
        "points, else TPE; or `grid`, `tpe`",
    ),
    ("[tune]", "space", "table", "", "see `[tune.space]`; required"),
    (
        "[tune.space]",
        "SETTING",
        "list",
        "",
        "a setting of [Tuning](../tune.md#the-settings) (an MPI-IO or library hint, a "
        "backend option, an ADIOS2 parameter, an MPI environment variable, the transfer "
        "mode, or a kernel option by its name) and the values tried",
    ),
)

KEYS = tuple(Key(*row) for row in _ROWS)


def names(table):
    """The keys of `table`, in their declared order."""
    return tuple(k.name for k in KEYS if k.table == table)
