# SPDX-License-Identifier: BSD-3-Clause
"""`--results FILE` for every bench script: what the script prints, also
written as a Markdown page (for docs/results/) under a header saying when,
where and on what it ran: date, commit (git describe), machine (CPU model,
cores, memory, kernel release), the MPI library and its MPI-IO layer (as
the suite's JSON record reports them, from a one-rank probe run), and the
load average before and after.

A script adds the option with add_option(parser) and runs its main through
run(main, title): the page is written when main returns, whatever its exit
code (a failed case is in the table). A FILE that exists is replaced only
when a bench script wrote it (it carries MARK); written under docs/results/,
that folder's index is refreshed too."""

import contextlib
import datetime
import io
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import _ranks  # bench/_ranks.py: the usable cores

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / "build" / "iokernels"
MPIEXEC = REPO / "scripts" / "mpiexec.sh"
MARK = "<!-- bench results: written by bench/"


def add_option(ap):
    ap.add_argument(
        "--results",
        metavar="FILE",
        help="also write what is printed to FILE as Markdown, with the date, commit, machine, "
        "MPI-IO layer and load average (docs/results/NAME.md)",
    )


class _Tee(io.TextIOBase):
    """Writes to the terminal and keeps a copy."""

    def __init__(self, out):
        self.out, self.kept = out, io.StringIO()

    def write(self, s):
        self.kept.write(s)
        return self.out.write(s)

    def flush(self):
        self.out.flush()


def _refusal(path):
    """Why the page cannot be written there, or None (checked before the runs)."""
    if not path.parent.is_dir():
        return f"--results {path}: folder {path.parent} does not exist"
    if path.is_dir():
        return f"--results {path} is a folder: name a file such as docs/results/btio.md"
    if path.exists() and MARK not in path.read_text(errors="replace")[:200]:
        return f"--results {path} exists and no bench script wrote it: remove it or name another"
    return None


def _git_describe():
    """The commit, "-dirty" when a tracked file differs from it; the tables
    under docs/results/ (this run's own output) do not count."""
    git = ["git", "-C", str(REPO)]
    p = subprocess.run([*git, "describe", "--always", "--tags"], capture_output=True, text=True)
    if p.returncode != 0:
        return "unknown (not a git work tree)"
    changed = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs/results"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return p.stdout.strip() + ("-dirty" if changed else "")


def _machine():
    cpu = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = ""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f", {int(line.split()[1]) / 1048576:.1f} GiB memory"
    cores = f"{os.cpu_count()} cores"
    usable = _ranks.usable_cores()
    if usable != os.cpu_count():  # an affinity mask or a cgroup quota: what the ranks get
        cores += f" ({usable} usable)"
    return f"{cpu}, {cores}{mem}, {platform.system()} {platform.release()}"


def mpi_layer(binary=BIN):
    """(MPI library, MPI-IO layer) of a one-rank MPI-IO write in the bench's
    own environment (the same OMPI_MCA_* and ROMIO_HINTS): the library from
    its JSON record, the layer as its report words it ("OpenMPI io ompio,
    fcoll two_phase; ..."), both made from the record's mpiio_layer."""
    with tempfile.TemporaryDirectory(prefix="iok-bench-layer-") as d:
        rec = Path(d) / "layer.jsonl"
        cmd = [str(MPIEXEC), "-n", "1", str(binary), "btio", "--backend", "mpiio", "--grid"]
        cmd += ["4,4,4", "--dumps", "1", "--dir", d, "--json", str(rec)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0 or not rec.is_file():
            return "unknown (iokernels did not run)", "unknown (iokernels did not run)"
        env = json.loads(rec.read_text().splitlines()[-1])["environment"]
    line = re.search(r"^MPI-IO layer\s*: (.*)$", p.stdout, re.M)
    layer = env.get("mpiio_layer")
    mpi = layer["mpi"] if layer else env["mpi_library_version"].splitlines()[0]
    return mpi, line.group(1) if line else "unknown (neither OpenMPI nor an MPICH-derived MPI)"


def _load():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _page(title, script, argv, started, load0, load1, mpi, layer, text):
    rows = [
        ("command", f"`{shlex.join([f'bench/{script}', *argv])}`"),
        ("date", started.strftime("%Y-%m-%d %H:%M UTC")),
        ("commit", f"`{_git_describe()}`"),
        ("machine", _machine()),
        ("MPI", mpi),
        ("MPI-IO layer", layer),
        ("load average (1, 5, 15 min)", f"{load0} before, {load1} after"),
    ]
    head = "\n".join(f"| {k} | {v.replace('|', '/')} |" for k, v in rows)
    fence = "~~~~" if "```" in text else "```"
    return (
        f"{MARK}{script} --results -->\n\n# {title}\n\n| | |\n|---|---|\n{head}\n\n"
        f"{fence}text\n{text.rstrip()}\n{fence}\n"
    )


def run(main, title, argv=None):
    """Runs main() (which parses sys.argv, --results among its options) and
    writes the page when --results names one. Returns main's exit code."""
    argv = sys.argv[1:] if argv is None else argv
    script = Path(sys.argv[0]).name
    path = None
    for i, arg in enumerate(argv):
        if arg == "--results" and i + 1 < len(argv):
            path = Path(argv[i + 1])
        elif arg.startswith("--results="):
            path = Path(arg.split("=", 1)[1])
    if path is None:
        return main()
    why = _refusal(path)
    if why:
        print(f"bench/{script}: {why}", file=sys.stderr)
        return 2
    binary = argv[argv.index("--bin") + 1] if "--bin" in argv[:-1] else BIN
    started = datetime.datetime.now(datetime.UTC)
    load0 = _load()
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        code = main()
    load1 = _load()
    mpi, layer = mpi_layer(binary)
    path.write_text(
        _page(title, script, argv, started, load0, load1, mpi, layer, tee.kept.getvalue())
    )
    _refresh_index(path)
    print(f"results written to {path}")
    return code


def _refresh_index(path):
    """docs/results/index.md, when the page went there."""
    folder = (REPO / "docs" / "results").resolve()
    if path.resolve().parent != folder:
        return
    sys.path.insert(0, str(REPO / "scripts"))
    from reference import results

    (folder / "index.md").write_text(results.index_page(folder))
