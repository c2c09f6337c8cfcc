# SPDX-License-Identifier: BSD-3-Clause
"""docs/reference/campaign.md from the campaign tool's own table of keys
(python/iokernels_campaign/spec/keys.py), the one its validators use; its
descriptions are Markdown already."""

from . import md


def page(keys):
    out = md.header("Campaign files", "python/iokernels_campaign/spec/keys.py")
    out += (
        "A campaign file is TOML, read by `iokernels-campaign run FILE`. These are every "
        "table and key it accepts; any other is refused with a line naming it. Kernel "
        "options are those of `iokernels KERNEL --help` ([kernel options](kernels/common.md)).\n\n"
    )
    for table, about in keys.TABLES.items():
        title = "Top level" if table.startswith("(") else md.code(table)
        out += f"## {title}\n\n{about}\n\n"
        rows = [
            (
                md.code(k.name),
                md.text(k.type),
                k.default or "none",
                k.description.replace("|", "\\|"),
            )
            for k in keys.KEYS
            if k.table == table
        ]
        out += md.table(("Key", "Type", "Default", "Description"), rows) + "\n"
    return out
