# SPDX-License-Identifier: BSD-3-Clause
"""Every example of the documentation runs as written, as a newcomer runs
them: every page in the site's order, in ONE copy of the repository, in one
bash session.

Each line of a fenced sh/bash/shell block in README.md and docs/**/*.md
(not docs/reference/, which is generated) runs exactly as written, page
after page in the order of mkdocs.yml's nav (README.md first, then any page
the nav does not list), in one bash session in one copy of the repository's
files (tracked and new, as `git ls-files` lists them: edits not yet
committed are tested too), with build/ and .venv linked in and .venv/bin and
build/ on PATH (bare `iokernels`, as an installed tree gives it). So
`export` lines carry over from page to page and a file one page writes is
there for the next, as in a newcomer's terminal; each page starts at the
top of the copy (its examples are written from there). Lines that build the
suite (`make`, `cmake`, `pip`: make test built it) are counted, not run.

Markers (CONTRIBUTING.md, "Examples in the documentation"):
- `# ... small: -n 4 --grid 16,16,16` ending a line at real size (the reader
  sees the smaller size): the value of each named option is replaced by the
  one given, and that runs;
- `<!-- examples: skip site: REASON -->` before a block that needs a site's
  resources (its cluster, modules, the originals' builds), or `skip
  elsewhere: REASON` for a block another target runs (make test-mpich,
  bench/tune): its lines are counted as skipped with the reason. Any other
  skip marker fails the test.
Lines with srun (and the Slurm sandbox's own lines) run on a Slurm sandbox
(python/tests/slurmcluster.py); without one the test fails unless the run
declares slurm missing (tests/declared.py)."""

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
OUTPUT_MARK = re.compile(r'<!--\s*examples:\s*output of "(.*?)"\s*-->')
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
SUITE = re.compile(r"^(\S*/)?(iokernels|iokernels-campaign)$|^(\./)?(scripts|bench)/")
LAUNCHERS = {"mpiexec", "mpirun", "mpiexec.mpich", "srun", "scripts/mpiexec.sh"}
STATE = {"export", "cd", "mkdir"}
SLURM_WORDS = (
    "srun",
    "slurm-sandbox.sh",
    "--launcher sbatch",
    "--launcher srun",
    "sinfo",
    "squeue",
)
# the build itself: make test built it (counted, not run)
BUILD = {"make", "cmake", "pip", "pip3"}
SKIP_CLASSES = ("site:", "elsewhere:")
SESSION_TIMEOUT = 1800


def nav_order():
    """The docs pages in the order of mkdocs.yml's nav (the site's order)."""
    text = (REPO / "mkdocs.yml").read_text().split("\nnav:", 1)[1]
    text = re.split(r"\n[A-Za-z_]+:", text, maxsplit=1)[0]
    return [REPO / "docs" / m for m in re.findall(r"([\w./-]+\.md)\s*$", text, re.M)]


def pages():
    """README.md, then the docs pages in the site's order, then any page the
    nav does not list; the generated reference left out."""
    listed = [p for p in nav_order() if "reference" not in p.relative_to(REPO / "docs").parts]
    rest = sorted(
        p for p in (REPO / "docs").rglob("*.md") if "reference" not in p.parts and p not in listed
    )
    return [REPO / "README.md", *listed, *rest]


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


def open_quote(text):
    """Does a quote stay open at the end of this shell text?"""
    try:
        shlex.split(text, comments=True)
        return False
    except ValueError as e:
        return "quotation" in str(e)


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
            if mark:
                assert mark.group(1).startswith(SKIP_CLASSES), (
                    f"{page}:{number}: a skip marker says why with site: (a site's resources) "
                    f"or elsewhere: (another target runs it), not {mark.group(1)!r}"
                )
            pending = mark.group(1) if mark else (pending if not line.strip() else None)
            i += 1
            continue
        text = line
        # continued lines, and an open quote's, are one command (in a shell
        # block: an apostrophe in a text block's message opens nothing)
        while lang in SHELL_LANGS and i + 1 < len(lines):
            if text.endswith("\\"):
                text = text[:-1] + " " + lines[i + 1].strip()
            elif open_quote(text):
                text = text + "\n" + lines[i + 1]
            else:
                break
            i += 1
        i += 1
        if lang not in SHELL_LANGS or not text.strip() or text.lstrip().startswith("#"):
            continue
        command, comment = split_comment(text.strip())
        tokens = words(command)
        if tokens and tokens[0] in STATE:
            out.append((number, text, "skip" if skip else "state", skip))
            continue
        if skip:
            out.append((number, text, "skip", skip))
            continue
        if program(tokens) in BUILD:
            out.append((number, text, "build", None))
            continue
        small = re.search(r"small:\s*(.*)$", comment)
        if small:
            out.append((number, text, "small", shrink(tokens, words(small.group(1)), number)))
        else:
            out.append((number, text, "run", None))
    return out


def shown_outputs(page):
    """The output a page shows: a ```text block after `<!-- examples: output
    of "WORDS" -->` is what the page's last example line before it holding
    WORDS prints. [(that line's number, the block's first line number,
    [the shown lines])]."""
    lines, out, runnable = page.read_text().splitlines(), [], []
    by_number = {n: t for n, t, k, _ in examples(page) if k in ("run", "small")}
    i = 0
    while i < len(lines):
        if i + 1 in by_number:
            runnable.append((i + 1, by_number[i + 1]))
        mark = OUTPUT_MARK.search(lines[i])
        if mark:
            j = i + 1
            assert FENCE.match(lines[j]), f"{page}:{j + 1}: an output marker stands before a block"
            words = mark.group(1)
            after = [n for n, t in runnable if words in t]
            assert after, f"{page}:{i + 1}: no example line before it holds {words!r}"
            k = j + 1
            while not FENCE.match(lines[k]):
                k += 1
            out.append((after[-1], j + 1, lines[j + 1 : k]))
            i = k
        i += 1
    return out


def label(shown):
    """What an output line must start with: the shown line without its
    annotation (`<- ...`), up to its first colon (or its first two words)
    and before a parenthesis; None for an elision (`...`), an annotation
    alone, or a line annotated `<- only when ...` (the run may not print it)."""
    text, _, note = shown.partition("<-")
    text = text.rstrip()
    if not text.strip() or text.strip().startswith("...") or text.strip().endswith("..."):
        return None
    if note.strip().startswith("only when"):  # a line the run may not print
        return None
    head = text.split(":")[0] if ":" in text else " ".join(text.split()[:2])
    return head.split(" (")[0].strip()  # "importance (fANOVA, ...)": "importance"


def missing_lines(shown, printed):
    """The labels of the shown lines that no printed line starts with, runs
    of blanks counted as one (a table's header: "case   mode" is "case mode")."""
    starts = [" ".join(p.split()) for p in printed.splitlines()]
    return [
        lab
        for lab in filter(None, map(label, shown))
        if not any(p.startswith(" ".join(lab.split())) for p in starts)
    ]


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


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
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
    (root / "build").symlink_to(BIN.parent)
    (root / ".venv").symlink_to(VENV)
    return root


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(environment of a Slurm sandbox, None) or (None, why there is none)."""
    why = slurmcluster.why_not()
    if why:
        yield None, why
        return
    directory = tmp_path_factory.mktemp("slurm")
    try:
        c = slurmcluster.start(directory, nodes=1)
    except RuntimeError as e:
        yield None, f"the Slurm sandbox did not start: {e}"
        return
    yield {**c.env, "SLURM_MPI_TYPE": "pmix"}, None
    slurmcluster.stop(directory)


def free_port_base():
    """A base port for a sandbox that a page starts itself (slurm-sandbox.sh
    takes base + 1, 2, 306, 817, 819), away from the fixture's."""
    ports = (1, 2, 306, 817, 819)
    free = slurmcluster._port_free
    return next(b for b in range(17500, 18000, 20) if all(free(b + k) for k in ports))


def script(clone, plan):
    """One bash session: page after page, each from the top of the copy,
    each example announced, run, its exit code checked; the first failure
    ends the session. plan: [(page name, items)]."""
    body = ["set -o pipefail"]
    for name, items in plan:
        body += [f"cd {shlex.quote(str(clone))}", f"printf '\\n@@ page {name}\\n'"]
        for number, text, kind, detail in items:
            run = detail if kind == "small" else text
            body += [
                f"printf '\\n@@ example {name}:{number}\\n'",
                run,
                "rc=$?",
                f'if [ $rc -ne 0 ]; then printf "\\n@@ failed {name}:{number} %d\\n" $rc; '
                "exit 97; fi",
            ]
    return "\n".join(body) + "\n"


def test_every_page_in_the_sites_order_in_one_clone(clone, cluster, request):
    slurm_env, no_slurm = cluster
    plan, totals, skipped = [], {"run": 0, "small": 0, "state": 0, "build": 0}, {}
    for page in pages():
        name = str(page.relative_to(REPO))
        items = examples(page)
        needs_slurm = any(
            k not in ("skip", "build") and any(w in t for w in SLURM_WORDS) for _, t, k, _ in items
        )
        if no_slurm and needs_slurm and not is_declared("slurm"):
            missing("slurm", f"{name} has Slurm examples and {no_slurm}")
        run_items = []
        for number, text, kind, detail in items:
            if kind != "skip" and no_slurm and any(w in text for w in SLURM_WORDS):
                kind, detail = "skip", f"declared missing: slurm ({no_slurm})"
            if kind == "skip":
                skipped[detail] = skipped.get(detail, 0) + 1
                continue
            totals[kind] += 1
            if kind != "build":
                run_items.append((number, text, kind, detail))
        if run_items:
            plan.append((name, run_items))

    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_MCA_rmaps_base_oversubscribe"))
    }
    env["PATH"] = f"{clone / '.venv' / 'bin'}:{clone / 'build'}:{env['PATH']}"
    if slurm_env:
        env.update({k: v for k, v in slurm_env.items() if k != "PATH"})
        env["PATH"] += ":/usr/sbin:/sbin"
        # a sandbox a page starts itself gets ports no other cluster holds
        env["SANDBOX_PORT"] = str(free_port_base())
    try:
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-c", script(clone, plan)],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=SESSION_TIMEOUT,
        )
    finally:  # a sandbox a page started is stopped even when a line failed
        for _, items in plan:
            for _, text, _, _ in items:
                started = re.search(r"slurm-sandbox\.sh start (\S+)", text)
                if started:
                    stop = [str(clone / "scripts" / "slurm-sandbox.sh"), "stop", started.group(1)]
                    subprocess.run(stop, cwd=clone, env=env, capture_output=True, timeout=120)
    ran = totals["run"] + totals["small"]
    lines = [
        f"documentation examples, {len(plan)} pages in one clone: {ran} lines ran "
        f"({totals['small']} at the small size the page gives), {totals['state']} export/cd/mkdir, "
        f"{totals['build']} build lines not run (make test built it), "
        f"{sum(skipped.values())} skipped"
    ] + [f"  skipped {n}: {why}" for why, n in sorted(skipped.items())]
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():  # shown also under pytest -q
        print("\n" + "\n".join(lines))
    failed = re.search(r"@@ failed (\S+):(\d+) (\d+)", proc.stdout)
    if failed:
        where = f"{failed.group(1)}:{failed.group(2)}"
        tail = proc.stdout.split(f"@@ example {where}\n")[-1].split("@@ failed")[0]
        pytest.fail(
            f"{where}: exit {failed.group(3)} (pages before it ran in the same clone)"
            f"\n--- its output:\n{tail[-3000:]}\n--- stderr:\n{proc.stderr[-3000:]}"
        )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"the session ended with {proc.returncode}\n{out[-3000:]}"
    assert ran > 0, lines[0]
    # what the pages show, their programs print (each shown line's label)
    for page in pages():
        name = str(page.relative_to(REPO))
        for after, block, shown in shown_outputs(page):
            printed = proc.stdout.split(f"@@ example {name}:{after}\n")[-1].split("\n@@ ")[0]
            lost = missing_lines(shown, printed)
            assert not lost, f"{name}:{block}: shown but not printed by line {after}: {lost}"


def test_markers_are_read_as_documented(tmp_path):
    """The conventions of CONTRIBUTING.md on a page of our own: every shell
    line (build lines counted apart), continued lines and an open quote's
    joined, small: substituted, a skip block counted, a skip without its
    class refused."""
    page = tmp_path / "page.md"
    page.write_text(
        "```sh\n"
        "export A=1\n"
        "cmake -S . -B build\n"
        "mpiexec -n 4 build/iokernels btio \\\n"
        "    --grid 64,64,64   # real; small: -n 2 --grid 8,8,8\n"
        "cmp a b\n"
        "python3 -c '\n"
        "print(1)\n"
        "'\n"
        "```\n\n"
        "<!-- examples: skip site: a site's paths -->\n"
        "```sh\n"
        "srun iokernels ncbench -d 4:8:8:8\n"
        "```\n"
        "```toml\n"
        "iokernels = 1\n"
        "```\n"
        "```text\n"
        "but OMPI was not built with SLURM's PMI support\n"
        "```\n"
        "```sh\n"
        "build/iokernels --list\n"
        "```\n"
    )
    got = [(n, kind, detail) for n, _, kind, detail in examples(page)]
    assert got == [
        (2, "state", None),
        (3, "build", None),
        (4, "small", "mpiexec -n 2 build/iokernels btio --grid 8,8,8"),
        (6, "run", None),
        (7, "run", None),
        (14, "skip", "site: a site's paths"),
        (23, "run", None),  # after a text block whose apostrophe opens no quote
    ]
    assert examples(page)[4][1] == "python3 -c '\nprint(1)\n'"
    page.write_text("```sh\nbuild/iokernels btio --dumps 3   # small: --grid 8,8,8\n```\n")
    with pytest.raises(AssertionError, match="small: names --grid, which the line does not have"):
        examples(page)
    page.write_text("<!-- examples: skip too slow -->\n```sh\nbuild/iokernels btio\n```\n")
    with pytest.raises(AssertionError, match="a skip marker says why with site:"):
        examples(page)


def test_shown_output_is_checked_by_its_lines_labels(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "```sh\n"
        "build/iokernels btio --grid 8,8,8\n"
        "build/iokernels --list\n"
        "```\n\n"
        '<!-- examples: output of "btio" -->\n'
        "```text\n"
        "Total I/O amount            :        30.00 MiB     <- an annotation\n"
        "...\n"
        "       time = open->close span less the suite's own work\n"
        "settings: --hints cb_nodes=2   <- only when a setting won\n"
        "```\n"
    )
    ((after, block, shown),) = shown_outputs(page)
    assert (after, block) == (2, 7)
    assert [label(x) for x in shown] == ["Total I/O amount", None, "time =", None]
    printed = "Total I/O amount            :        12.00 MiB\n  time = open->close 1 s\n"
    assert missing_lines(shown, printed) == []
    assert missing_lines(shown, "Total I/O amount : 1\n") == ["time ="]  # a line gone: caught
    # a table's header, its columns aligned by runs of blanks
    header = ["case             mode   A MiB/s", "---------------  -----  -------"]
    assert missing_lines(header, "case  mode  A MiB/s\n---------------  -----  ---\n") == []
    assert missing_lines(header, "kase mode\n") == ["case mode", "--------------- -----"]


def test_pages_follow_the_sites_nav():
    order = [str(p.relative_to(REPO)) for p in pages()]
    assert order[:3] == ["README.md", "docs/index.md", "docs/getting-started.md"], order
    assert order.index("docs/kernels/btio.md") < order.index("docs/install.md"), order
    assert not any("reference" in o for o in order)
