# SPDX-License-Identifier: BSD-3-Clause
"""docs/reference/kernels/*.md from the binary's own description
(`iokernels --list --json`, `iokernels KERNEL --help --json`): one page per
kernel with its own options, and common.md with the options every kernel
has (the core's and each backend's)."""

from . import md


def split_default(help_text):
    """(description, default) from a help text ending in "(default: X)", as
    the core words it (src/core/lib/options.c iok_opt_help_text); default None
    when the help words its default elsewhere."""
    if not help_text.endswith(")"):
        return help_text, None
    depth = 0
    for i in range(len(help_text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(help_text[i], 0)
        if depth == 0:
            inner = help_text[i + 1 : -1]
            if inner.startswith("default: "):
                return help_text[:i].rstrip(), inner[len("default: ") :]
            return help_text, None
    return help_text, None


def _bound(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


def range_text(opt):
    """The range `--help --json` declares (min, max, unit), "" for none:
    the one the parser enforces (src/core/lib/options.c)."""
    lo, hi = opt.get("min"), opt.get("max")
    if lo is None and hi is None:
        return ""
    if lo is not None and hi is not None:
        text = f"{_bound(lo)} to {_bound(hi)}"
    else:
        text = f"at least {_bound(lo)}" if lo is not None else f"at most {_bound(hi)}"
    text = ("each " if opt["type"] == "int3" else "") + text
    return text + (f" ({opt['unit']})" if opt.get("unit") else "")


def _without_range(help_text):
    """The help text without the range the core appends to it (the table
    shows the range in its own column): "(default: 3; 0 to 3)" -> "(default:
    3)", "... (default: x) (1 to 16)" -> "... (default: x)"."""
    head, found, tail = help_text.rpartition("(default: ")
    if found and help_text.endswith(")") and "; " in tail:
        return f"{head}(default: {tail.rsplit('; ', 1)[0]})"
    return help_text


def default_text(opt):
    """The default as the reference shows it."""
    _, said = split_default(_without_range(opt["help"]))
    if said is not None:
        return said
    d = opt["default"]
    if isinstance(d, bool):
        return "on" if d else "off"
    if isinstance(d, list):
        return ",".join(str(v) for v in d)
    return "see description" if d is None else str(d)


def option_names(opt):
    """`-k`, `--name` as typed on the command line."""
    names = [f"--{opt['name']}"]
    if opt.get("short"):
        names.insert(0, f"-{opt['short']}")
    return names


def argument_text(opt):
    if opt.get("choices"):
        return " \\| ".join(md.code(c) for c in opt["choices"])
    return md.code(opt["argument"]) if opt.get("argument") else "(flag)"


def options_table(opts):
    rows = []
    for o in opts:
        desc, _ = split_default(_without_range(o["help"]))
        rows.append(
            (
                ", ".join(md.code(n) for n in option_names(o)),
                argument_text(o),
                md.text(default_text(o)),
                md.text(range_text(o)),
                md.text(desc),
            )
        )
    return md.table(("Option", "Argument", "Default", "Range", "Description"), rows)


def _input_line(k):
    inp = k["input"]
    if inp["read_by_ranks"]:
        return "Input file: a positional file, read in parallel by the ranks (each its own part)."
    if inp["default"]:
        return (
            f"Input file: {md.code(inp['default'])} when none is named "
            "(built-in defaults if it is absent); any other as the positional argument."
        )
    if inp["positional"]:
        return "Input file: optional, as the positional argument."
    return "Input file: none; every setting is an option."


def kernel_page(k):
    """The page of one kernel: what it is, its input, barriers, original
    hints and its own options."""
    name = k["kernel"]
    usage = f"iokernels {name} [options]" + (" [input-file]" if k["input"]["positional"] else "")
    out = md.header(f"iokernels {name}", f"build/iokernels {name} --help --json")
    out += md.text(k["summary"]) + "\n\n"
    out += f"Usage: {md.code(usage)}\n\n"
    out += _input_line(k) + "\n\n"
    tool = "tool" in k["flags"]
    if tool:
        out += "A tool, not a kernel: campaigns do not run it.\n\n"
    if "shiftable" in k["flags"]:
        out += "Its reads can be shifted: `--shift-ranks N` (IOR's `-C`).\n\n"
    if not tool:
        out += (
            f"Barriers by default: {md.code(k['barriers'])}, what its original does "
            "(`--barriers` changes it).\n\n"
        )
    if k.get("ranks", "any") != "any":  # the kernel's rule on the rank count
        out += (
            f"Rank count: {md.code(k['ranks'])} (checked before the plan; "
            "`--check --ranks N` checks it without N ranks).\n\n"
        )
    hints = k.get("original_hints") or []
    if hints:
        out += "Hints its original sets itself (applied before `--hints`; "
        out += "`--no-original-hints` leaves them out):\n\n"
        rows = [
            (md.code(h["key"]), md.code(h["value"]), md.text(h["backend"] or "every backend"))
            for h in hints
        ]
        out += md.table(("Hint", "Value", "Backend"), rows) + "\n"
    own = [o for o in k["options"] if o["group"] == name]
    out += f"## Options of {name}\n\n"
    out += options_table(own) if own else "None.\n"
    if any(o["group"] == "core" for o in k["options"]):
        out += (
            f"\n{name} also takes the core options and each backend's options: "
            "see [the options every kernel has](common.md).\n"
        )
    return out


def common_page(k, listing):
    """The core options and each backend's, from one kernel's help (they are
    the same for every kernel) and the list of backends."""
    out = md.header(
        "Options every kernel has", "build/iokernels --list --json and KERNEL --help --json"
    )
    out += (
        "The core's options, then each backend's (`--NAME-...`, used when that backend runs).\n\n"
    )
    out += "## Core options\n\n" + options_table([o for o in k["options"] if o["group"] == "core"])
    for b in listing["backends"]:
        out += f"\n## Backend {b['name']}\n\n{md.text(b.get('summary', ''))}\n\n"
        if b.get("extension"):
            out += f"File extension: {md.code(b['extension'])}. "
        caps = ", ".join(b.get("caps", ())) or "none"
        out += f"Capabilities: {md.text(caps)}.\n\n"
        opts = [o for o in k["options"] if o["group"] == b["name"]]
        out += options_table(opts) if opts else "No options of its own.\n"
    return out


def backend_names(listing):
    return [b["name"] for b in listing["backends"]]
