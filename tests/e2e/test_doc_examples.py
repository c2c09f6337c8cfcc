# SPDX-License-Identifier: BSD-3-Clause
"""Every example of the documentation runs as written.

Each line of a fenced sh/bash/shell block in README.md and docs/**/*.md
(not docs/reference/, which is generated) that starts a program of the
suite (build/iokernels, iokernels, iokernels-campaign, scripts/..., bench/...,
or mpiexec/srun running one of them) is run exactly as written, page by
page, in order, in one bash session per page, so that `export`, `cd` and
`mkdir` lines (also run) carry over. Each page runs in its own copy of the
repository's files (tracked and new, as `git ls-files` lists them: edits
not yet committed are tested too), with build/ and .venv linked in and
.venv/bin and build/ on PATH (bare `iokernels`, as an installed tree gives
it). A docs page's session starts with the `export` lines of the README
and of docs/getting-started.md, as a reader who followed them has them.

Markers (CONTRIBUTING.md, "Examples in the documentation"):
- `# ... small: -n 4 --grid 16,16,16` ending a line at real size: the value
  of each named option is replaced by the one given, and that runs;
- `<!-- examples: skip REASON -->` before a block: its lines are counted as
  skipped with the reason.
Lines with srun (and the Slurm sandbox's own lines) run on a Slurm sandbox
(python/tests/slurmcluster.py) when one can be started here, else they are
skipped with the reason. `make` lines are not run (make demo and make test
are what this test is part of)."""

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest
from conftest import BIN, REPO
from declared import is_declared, missing

sys.path.insert(0, str(REPO / "python" / "tests"))
import slurmcluster  # noqa: E402  (python/tests is not a package)

VENV = REPO / ".venv"
SHELL_LANGS = {"sh", "bash", "shell", "console"}
SKIP_MARK = re.compile(r"<!--\s*examples:\s*skip\s+(.*?)\s*-->")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
SUITE = re.compile(r"^(\S*/)?(iokernels|iokernels-campaign)$|^(\./)?(scripts|bench)/")
LAUNCHERS = {"mpiexec", "mpirun", "mpiexec.mpich", "srun", "scripts/mpiexec.sh"}
STATE = {"export", "cd", "mkdir"}
SLURM_WORDS = ("srun", "slurm-sandbox.sh", "--launcher sbatch", "--launcher srun")
PAGE_TIMEOUT = 600
TOTALS = {"run": 0, "small": 0, "skipped": {}}


def pages():
    """The pages with at least one example to run (a page without any has
    nothing to test: not a case, rather than a case that passes or skips)."""
    docs = sorted(p for p in (REPO / "docs").rglob("*.md") if "reference" not in p.parts)
    return [
        p for p in (REPO / "README.md", *docs) if any(k != "skip" for _, _, k, _ in examples(p))
    ]


def split_comment(line):
    """(command, comment) of one shell line: the comment starts at a # that
    follows a blank outside quotes."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1 :].strip()
    return line.rstrip(), ""


def words(command):
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def program(tokens):
    """The program a line starts, past VAR=value prefixes and a launcher
    with its options."""
    rest = [t for t in tokens]
    while rest and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", rest[0]):
        rest.pop(0)
    if rest and rest[0] in LAUNCHERS:
        return next((t for t in rest[1:] if SUITE.search(t)), rest[0])
    return rest[0] if rest else ""


def examples(page):
    """Per shell line: (line number, text, kind, detail). kind is 'run',
    'state', 'skip' (detail: the reason) or 'small' (detail: the line to run)."""
    out, lang, skip, pending, lines = [], None, None, None, page.read_text().splitlines()
    i = 0
    while i < len(lines):
        line, number = lines[i], i + 1
        m = FENCE.match(line)
        if lang is None and m:
            lang, skip, pending = m.group(3).lower(), pending, None
            i += 1
            continue
        if lang is not None and m and not m.group(3):
            lang = None
            i += 1
            continue
        if lang is None:
            mark = SKIP_MARK.search(line)
            pending = mark.group(1) if mark else (pending if not line.strip() else None)
            i += 1
            continue
        text = line
        while text.endswith("\\") and i + 1 < len(lines):  # continued lines are one command
            i += 1
            text = text[:-1] + " " + lines[i].strip()
        i += 1
        if lang not in SHELL_LANGS or not text.strip() or text.lstrip().startswith("#"):
            continue
        command, comment = split_comment(text.strip())
        tokens = words(command)
        if tokens and tokens[0] in STATE:
            out.append((number, text, "skip" if skip else "state", skip))
            continue
        if not SUITE.search(program(tokens)):
            continue
        if skip:
            out.append((number, text, "skip", skip))
            continue
        small = re.search(r"small:\s*(.*)$", comment)
        if small:
            out.append((number, text, "small", shrink(tokens, words(small.group(1)), number)))
        else:
            out.append((number, text, "run", None))
    return out


def shrink(tokens, pairs, number):
    """tokens with each option of `pairs` (OPT VALUE ...) given the value."""
    tokens = list(tokens)
    assert len(pairs) % 2 == 0, f"line {number}: small: wants OPTION VALUE pairs, got {pairs}"
    for opt, value in zip(pairs[::2], pairs[1::2], strict=True):
        for k, t in enumerate(tokens):
            if t == opt and k + 1 < len(tokens):
                tokens[k + 1] = value
                break
            if t.startswith(opt + "="):
                tokens[k] = f"{opt}={value}"
                break
        else:
            raise AssertionError(f"line {number}: small: names {opt}, which the line does not have")
    return shlex.join(tokens)


def reader_exports():
    """The export lines of the README and of docs/getting-started.md."""
    first = (REPO / "README.md", REPO / "docs" / "getting-started.md")
    return [
        t
        for page in first
        for _, t, kind, _ in examples(page)
        if kind == "state" and t.startswith("export ")
    ]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """The repository's files as a fresh clone has them, with build/ and .venv."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        missing("git", "not a git work tree: no list of the repository's files")
    root = tmp_path_factory.mktemp("clone")
    for name in listed.decode().split("\0"):
        src = REPO / name
        if name and src.is_file() and not name.startswith(("build/", ".venv/")):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / name)
    return root


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(environment of a Slurm sandbox, None) or (None, why there is none)."""
    why = slurmcluster.why_not()
    if why:
        return None, why
    directory = tmp_path_factory.mktemp("slurm")
    try:
        c = slurmcluster.start(directory, nodes=1)
    except RuntimeError as e:
        return None, f"the Slurm sandbox did not start: {e}"
    yield {**c.env, "SLURM_MPI_TYPE": "pmix"}, None
    slurmcluster.stop(directory)


@pytest.fixture(scope="module", autouse=True)
def summary(request):
    yield
    capture = request.config.pluginmanager.getplugin("capturemanager")
    skipped = sum(TOTALS["skipped"].values())
    lines = [
        f"documentation examples: {TOTALS['run'] + TOTALS['small']} ran "
        f"({TOTALS['small']} of them at their small size), {skipped} skipped"
    ] + [f"  skipped {n}: {why}" for why, n in sorted(TOTALS["skipped"].items())]
    with capture.global_and_fixture_disabled():  # shown also under pytest -q
        print("\n" + "\n".join(lines))


def free_port_base():
    """A base port for a sandbox that a page starts itself (slurm-sandbox.sh
    takes base + 1, 2, 306, 817, 819), away from the fixture's."""
    ports = (1, 2, 306, 817, 819)
    free = slurmcluster._port_free
    return next(b for b in range(17500, 18000, 20) if all(free(b + k) for k in ports))


def script(page, items, prelude):
    """The bash script of one page: each example announced, run, its exit
    code checked; the first failure ends the session."""
    body = ["set -o pipefail", *prelude]
    for number, text, kind, detail in items:
        run = detail if kind == "small" else text
        body += [
            f"printf '\\n@@ example {number}\\n'",
            run,
            "rc=$?",
            f'if [ $rc -ne 0 ]; then printf "\\n@@ failed {number} %d\\n" $rc; exit 97; fi',
        ]
    return "\n".join(body) + "\n"


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_examples_run_as_written(page, template, cluster, tmp_path):
    name = str(page.relative_to(REPO))
    items = examples(page)
    slurm_env, no_slurm = cluster
    slurm_lines = any(k != "skip" and any(w in t for w in SLURM_WORDS) for _, t, k, _ in items)
    if no_slurm and slurm_lines and not is_declared("slurm"):
        missing("slurm", f"{name} has Slurm examples and {no_slurm}")
    run_items = []
    for number, text, kind, detail in items:
        if kind != "skip" and no_slurm and any(w in text for w in SLURM_WORDS):
            kind, detail = "skip", f"no Slurm here ({no_slurm})"
        if kind == "skip":
            TOTALS["skipped"][detail] = TOTALS["skipped"].get(detail, 0) + 1
            continue
        run_items.append((number, text, kind, detail))
    if not any(kind in ("run", "small") for _, _, kind, _ in run_items):
        missing("slurm", f"{name}: every example needs Slurm ({no_slurm})")

    cwd = tmp_path / "clone"
    shutil.copytree(template, cwd, symlinks=True)
    (cwd / "build").symlink_to(BIN.parent)
    (cwd / ".venv").symlink_to(VENV)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_MCA_rmaps_base_oversubscribe"))
    }
    env["PATH"] = f"{cwd / '.venv' / 'bin'}:{cwd / 'build'}:{env['PATH']}"
    if slurm_env:
        env.update({k: v for k, v in slurm_env.items() if k != "PATH"})
        env["PATH"] += ":/usr/sbin:/sbin"
        # a sandbox a page starts itself gets ports no other cluster holds
        env["SANDBOX_PORT"] = str(free_port_base())
    own = page in (REPO / "README.md", REPO / "docs" / "getting-started.md")
    prelude = [] if own else reader_exports()
    try:
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-c", script(page, run_items, prelude)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=PAGE_TIMEOUT,
        )
    finally:  # a sandbox the page started is stopped even when a line failed
        for _, text, _, _ in run_items:
            started = re.search(r"slurm-sandbox\.sh start (\S+)", text)
            if started:
                stop = [str(cwd / "scripts" / "slurm-sandbox.sh"), "stop", started.group(1)]
                subprocess.run(stop, cwd=cwd, env=env, capture_output=True, timeout=120)
    out = proc.stdout + proc.stderr
    failed = re.search(r"@@ failed (\d+) (\d+)", proc.stdout)
    if failed:
        number = int(failed.group(1))
        text = next(t for n, t, _, _ in run_items if n == number)
        tail = proc.stdout.split(f"@@ example {number}\n")[-1].split("@@ failed")[0]
        pytest.fail(
            f"{name}:{number}: exit {failed.group(2)}: {text}\n--- its output:\n{tail[-3000:]}"
            f"\n--- stderr:\n{proc.stderr[-3000:]}"
        )
    assert proc.returncode == 0, f"{name}: the session ended with {proc.returncode}\n{out[-3000:]}"
    for _, _, kind, _ in run_items:
        if kind in ("run", "small"):
            TOTALS[kind] += 1


def test_markers_are_read_as_documented(tmp_path):
    """The conventions of CONTRIBUTING.md on a page of our own: suite lines
    only, continued lines joined, small: substituted, a skip block counted."""
    page = tmp_path / "page.md"
    page.write_text(
        "```sh\n"
        "export A=1\n"
        "cmake -S . -B build\n"
        "mpiexec -n 4 build/iokernels btio \\\n"
        "    --grid 64,64,64   # real; small: -n 2 --grid 8,8,8\n"
        "```\n\n"
        "<!-- examples: skip a site's paths -->\n"
        "```sh\n"
        "srun iokernels ncbench -d 4:8:8:8\n"
        "```\n"
        "```toml\n"
        "iokernels = 1\n"
        "```\n"
    )
    got = [(n, kind, detail) for n, _, kind, detail in examples(page)]
    assert got == [
        (2, "state", None),
        (4, "small", "mpiexec -n 2 build/iokernels btio --grid 8,8,8"),
        (10, "skip", "a site's paths"),
    ]
    page.write_text("```sh\nbuild/iokernels btio --dumps 3   # small: --grid 8,8,8\n```\n")
    with pytest.raises(AssertionError, match="small: names --grid, which the line does not have"):
        examples(page)
