# SPDX-License-Identifier: BSD-3-Clause
"""man/iokernels-campaign.1 from the campaign tool's own parser (the JSON
of parser_json.py): every command and every argument as --help gives them,
with examples, the exit status and the release's version and date."""

from .manpage import head, roff


def _argument(a):
    if a["flags"]:
        head = ", ".join(f"\\fB{roff(f)}\\fR" for f in a["flags"])
        return head + (f" \\fI{roff(a['argument'])}\\fR" if a["argument"] else "")
    return f"\\fI{roff(a['argument'])}\\fR"


def _usage(c):
    parts = [f"\\fBiokernels\\-campaign {roff(c['name'])}\\fR"]
    for a in c["arguments"]:
        if not a["flags"]:
            parts.append(f"\\fI{roff(a['argument'])}\\fR")
        elif a["required"]:
            parts.append(_argument(dict(a, flags=a["flags"][:1])))
        else:
            parts.append(f"[{_argument(dict(a, flags=a['flags'][:1]))}]")
    return " ".join(parts)


EXAMPLES = [
    (
        "The default campaign (every kernel on every backend built, small), stored and reported:",
        "iokernels\\-campaign run campaigns/default.toml \\-\\-db results/iokernels.sqlite "
        "\\-\\-out results/default",
    ),
    (
        "The same campaign as one batch job on a Slurm cluster, then its results stored:",
        "iokernels\\-campaign run campaigns/default.toml \\-\\-launcher sbatch\n"
        "iokernels\\-campaign collect results/default/runs/SESSION",
    ),
    (
        "Two stores (two machines, or before and after a change) side by side, with a verdict "
        "per case:",
        "iokernels\\-campaign compare before.sqlite after.sqlite \\-\\-html compare.html",
    ),
    (
        "Search the settings that make one case fast (the [tune] extra); check the file first:",
        "iokernels\\-campaign tune campaigns/tune\\-small.toml \\-\\-dry\\-run",
    ),
    (
        "A Darshan DXT trace as a replay file, replayed on HDF5 (the [trace] extra):",
        "iokernels\\-campaign trace2replay app.darshan \\-\\-out app.replay\n"
        "mpiexec \\-n 4 iokernels replay app.replay \\-\\-backend hdf5 \\-\\-verify",
    ),
]


def page(parser, version, date):
    out = [
        *head("iokernels-campaign", "iokernels-campaign's parser", version, date),
        ".SH NAME",
        "iokernels\\-campaign \\- campaigns of iokernels runs: sweeps, a results store, "
        "reports, comparisons, tuning",
        ".SH SYNOPSIS",
    ]
    for i, c in enumerate(parser["commands"]):
        out += ([".br"] if i else []) + [_usage(c)]
    out += [
        ".SH DESCRIPTION",
        "A campaign file (TOML) names kernels, backends, rank counts and options; "
        "\\fBrun\\fR runs every case with \\fBiokernels\\fR(1) (through mpiexec, srun or one "
        "sbatch job), keeps every JSON record in a SQLite store and writes an HTML report. "
        "The other commands query, compare, export and tune from the stores. "
        "It never times anything itself: every figure is the binary's.",
        ".SH COMMANDS",
    ]
    for c in parser["commands"]:
        out += [f".SS {roff(c['name'])}", roff(c["summary"]) + "."]
        for a in c["arguments"]:
            out += [".TP", _argument(a), roff(a["help"] or "(no description)")]
    out.append(".SH EXAMPLES")
    for what, command in EXAMPLES:
        out += [".PP", roff(what), ".PP", ".RS 4", ".nf", command, ".fi", ".RE"]
    out += [
        ".SH EXIT STATUS",
        ".TP",
        "0",
        "success.",
        ".TP",
        "1",
        "some run failed (it is stored as failed), or a runtime error.",
        ".TP",
        "2",
        "bad campaign file, store, file argument or usage, or a missing optional package "
        "(the line names the extra that brings it): one line naming it and the fix.",
        ".TP",
        "128+N",
        "ended by signal N (SIGINT, SIGTERM, SIGHUP): the running launcher ended, finished "
        "runs stored.",
        ".SH ENVIRONMENT",
        ".TP",
        "\\fBIOKERNELS_BIN\\fR, \\fBIOK_BIN\\fR",
        "the iokernels binary when \\-\\-binary is not given (else build/iokernels of the "
        "source tree, else iokernels on PATH).",
        ".TP",
        "\\fBIOK_CAMPAIGN_DEBUG\\fR",
        "set: an unexpected error prints its traceback.",
        ".SH SEE ALSO",
        "\\fBiokernels\\fR(1); docs/campaigns.md and docs/reference/campaign.md of the source "
        "tree (the keys of a campaign file).",
    ]
    return "\n".join(out) + "\n"
