# SPDX-License-Identifier: BSD-3-Clause
"""docs/results/index.md: a link to every table the bench scripts wrote
there (bench/<name> --results docs/results/<name>.md) and to any other page
of that folder, by its title. Written by scripts/gen-reference and by the
bench scripts themselves (bench/resultfile.py) after they add a table."""

from . import md


def title(path):
    """A page's first heading, else its file name."""
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem


def index_page(folder):
    """The index of the Markdown files of `folder` (sorted by name)."""
    out = md.header("Results", "the tables under docs/results/")
    out += (
        "Measurements live here, never in the prose: each table was written by a bench "
        "script (`bench/NAME --results docs/results/NAME.md`) with the date, the commit, the "
        "machine, the MPI library and MPI-IO layer and the load average around the run. "
        "Figures from another machine, MPI or load are not comparable with them.\n\n"
    )
    pages = (
        sorted(p for p in folder.glob("*.md") if p.name != "index.md") if folder.is_dir() else []
    )
    if not pages:
        return out + "No table yet.\n"
    for p in pages:
        out += f"- [{md.text(title(p))}]({p.name})\n"
    return out
