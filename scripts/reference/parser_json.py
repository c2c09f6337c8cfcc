# SPDX-License-Identifier: BSD-3-Clause
"""Prints iokernels-campaign's command-line parser (cli._parser()) as JSON:
its commands, each one's arguments with their flags, argument name,
choices and help as --help shows them. scripts/gen-reference runs it with
a Python that has the campaign package's dependencies (the venv's) and
writes man/iokernels-campaign.1 from it (campaign_man.py)."""

import argparse
import json
import sys

from iokernels_campaign import cli


def argument(action, formatter):
    if action.option_strings:
        metavar = formatter._format_args(action, action.dest.upper()) if action.nargs != 0 else ""
    else:
        metavar = action.metavar or action.dest.upper()
    if action.choices:
        metavar = "|".join(map(str, action.choices))
    return {
        "flags": list(action.option_strings),
        "argument": metavar,
        "required": bool(action.required),
        "help": formatter._expand_help(action) if action.help else "",
    }


def describe(parser):
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    summaries = {c.dest: c.help for c in sub._choices_actions}
    commands = []
    for name, p in sub.choices.items():
        formatter = p._get_formatter()
        arguments = [
            argument(a, formatter) for a in p._actions if not isinstance(a, argparse._HelpAction)
        ]
        commands.append({"name": name, "summary": summaries.get(name, ""), "arguments": arguments})
    return {"prog": parser.prog, "description": parser.description, "commands": commands}


if __name__ == "__main__":
    json.dump(describe(cli._parser()), sys.stdout, indent=1)
    print()
