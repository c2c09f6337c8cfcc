# SPDX-License-Identifier: BSD-3-Clause
"""Lustre striping of each case directory: `[campaign.lustre]` (and
`[kernel.lustre]`, over it for one block):

    stripe_count = 8        # -c: OSTs per file, -1 every OST
    stripe_size = "4M"      # -S: bytes, or with k/M/G (a multiple of 64 KiB)
    required = false        # true: no lfs, or lfs failing, is an error

`lfs setstripe` sets the directory's default layout, which the files and
iteration directories made in it inherit. Where `lfs` is missing (a laptop,
a file system that is not Lustre) the runs go on, a line says striping was
skipped, and every run of the case is stored with that outcome; required =
true turns that into an error instead. The outcome is CASEDIR/lustre.json:
{"stripe_count", "stripe_size_bytes", "status": applied|skipped|failed,
"message"} (applied: with the layout `lfs getstripe -d` reads back),
written by the runner or, under sbatch, by the batch script."""

import difflib
import json
import re
import shutil
import socket
import subprocess
from pathlib import Path

from . import keys

KEYS = keys.names("[campaign.lustre]")  # [kernel.lustre] has the same
SIZE = re.compile(r"(\d+)\s*([kKmMgG]?)[iI]?[bB]?")
UNIT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
FILE = "lustre.json"


class LustreError(ValueError):
    """A bad lustre table: the message names the key and the fix."""


def check(table, where_key):
    """{"stripe_count": int, "stripe_size": bytes, "required": bool}, each
    only when the table gives it; where_key names the table in messages."""
    if not isinstance(table, dict):
        raise LustreError(f"{where_key} must be a table (stripe_count, stripe_size), got {table!r}")
    for key in table:
        if key not in KEYS:
            near = difflib.get_close_matches(key.replace("-", "_"), KEYS, 1)
            hint = f"did you mean {near[0]}? " if near else ""
            raise LustreError(f"{where_key}: unknown key {key!r} ({hint}known: {', '.join(KEYS)})")
    out = {}
    count = table.get("stripe_count")
    if count is not None:
        if isinstance(count, bool) or not isinstance(count, int) or count == 0 or count < -1:
            raise LustreError(
                f"{where_key}: stripe_count must be a whole number of OSTs (1 or more, "
                f"-1 for every OST), got {count!r}"
            )
        out["stripe_count"] = count
    size = table.get("stripe_size")
    if size is not None:
        out["stripe_size"] = _size(size, where_key)
    if "required" in table:
        if not isinstance(table["required"], bool):
            raise LustreError(
                f"{where_key}: required must be true or false, got {table['required']!r}"
            )
        out["required"] = table["required"]
    return out


def _size(value, where_key):
    nbytes = None
    if isinstance(value, int) and not isinstance(value, bool):
        nbytes = value
    elif isinstance(value, str) and (m := SIZE.fullmatch(value.strip())):
        nbytes = int(m.group(1)) * UNIT[m.group(2).lower()]
    if nbytes is None or nbytes <= 0 or nbytes % 65536:
        raise LustreError(
            f'{where_key}: stripe_size must be bytes or a size such as "1M" or "4M", '
            f"a multiple of 64 KiB, got {value!r}"
        )
    return nbytes


def merge(base, over):
    """A block's table over the campaign's (either may be empty)."""
    if not base and not over:
        return {}
    out = {"required": False, **(base or {})}
    out.update(over or {})
    if "stripe_count" not in out and "stripe_size" not in out:
        return {}
    return out


def describe(settings):
    parts = []
    if "stripe_count" in settings:
        parts.append(f"count {settings['stripe_count']}")
    if "stripe_size" in settings:
        parts.append(f"size {settings['stripe_size'] // 1024} KiB")
    return ", ".join(parts)


def lfs_args(settings):
    args = []
    if "stripe_count" in settings:
        args += ["-c", str(settings["stripe_count"])]
    if "stripe_size" in settings:
        args += ["-S", str(settings["stripe_size"])]
    return args


def outcome(settings, status, message):
    return {
        "stripe_count": settings.get("stripe_count"),
        "stripe_size_bytes": settings.get("stripe_size"),
        "status": status,
        "message": message,
    }


def apply(directory, settings):
    """Stripes the directory now; returns and writes the outcome."""
    directory = Path(directory)
    lfs = shutil.which("lfs")
    if lfs is None:
        res = outcome(
            settings,
            "skipped",
            f"lfs not found on {socket.gethostname()}: the directory keeps the file system's "
            "default layout",
        )
    else:
        cmd = [lfs, "setstripe", *lfs_args(settings), str(directory)]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            ok, text = p.returncode == 0, (p.stderr or p.stdout).strip()
        except subprocess.TimeoutExpired:
            ok, text = False, "lfs setstripe still running after 120 s"
        status = "applied" if ok else "failed"
        message = "lfs setstripe " + " ".join(lfs_args(settings))
        if not ok:
            message += ": " + (" ".join(text.split()) or f"exit code {p.returncode}")
        else:
            message += "; lfs getstripe -d: " + _layout(lfs, directory)
        res = outcome(settings, status, message)
    (directory / FILE).write_text(json.dumps(res) + "\n")
    return res


def _layout(lfs, directory):
    """The directory's layout as Lustre has it now (a count of -1 becomes the
    OSTs there are), on one line."""
    try:
        p = subprocess.run(
            [lfs, "getstripe", "-d", str(directory)], capture_output=True, text=True, timeout=120
        )
        return " ".join((p.stdout or p.stderr).split()) or f"exit code {p.returncode}"
    except subprocess.TimeoutExpired:
        return "still running after 120 s"


def read(casedir):
    """The outcome a case directory holds, None when it was not striped."""
    path = Path(casedir) / FILE
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        return {"status": "failed", "message": f"{path} is not JSON"}


# The batch script's version of apply(): DIR COUNT SIZE REQUIRED ("-" for
# unset); returns non-zero only when required and not applied.
SHELL_FUNCTION = r"""iok_stripe() {  # DIR COUNT SIZE REQUIRED: lfs setstripe, DIR/lustre.json
  local dir=$1 count=$2 size=$3 required=$4 status msg layout args=()
  [ "$count" != - ] && args+=(-c "$count")
  [ "$size" != - ] && args+=(-S "$size")
  if ! command -v lfs > /dev/null 2>&1; then
    status=skipped
    msg="lfs not found on $(hostname): the directory keeps the file system's default layout"
  elif msg=$(lfs setstripe "${args[@]}" "$dir" 2>&1); then
    status=applied layout=$(lfs getstripe -d "$dir" 2>&1 | tr -s ' \n\t"\\' ' ')
    msg="lfs setstripe ${args[*]}; lfs getstripe -d: ${layout% }"
  else
    status=failed msg="lfs setstripe ${args[*]}: $(printf '%s' "$msg" | tr '"\\\n\t' '    ')"
  fi
  [ "$count" = - ] && count=null
  [ "$size" = - ] && size=null
  printf '{"stripe_count": %s, "stripe_size_bytes": %s, "status": "%s", "message": "%s"}\n' \
    "$count" "$size" "$status" "$msg" > "$dir/lustre.json"
  echo "lustre: $dir: $status: $msg" >&2
  [ "$status" = applied ] || [ "$required" = 0 ]
}"""


def shell_call(directory, settings):
    """The script's call of SHELL_FUNCTION, as argv."""
    return [
        "iok_stripe",
        str(directory),
        str(settings.get("stripe_count", "-")),
        str(settings.get("stripe_size", "-")),
        "1" if settings.get("required") else "0",
    ]
