# SPDX-License-Identifier: BSD-3-Clause
"""The generated reference (scripts/gen-reference): every option of every
kernel, tool and backend is in the pages and the man page, the man page
renders without a warning, every variable the sources read is documented,
the staleness check names a stale, missing or left-over file (the check of
the committed pages themselves is ctest docs.reference_fresh), the output is
the same twice and holds no path of this machine, bad input is one line."""

import importlib.machinery
import json
import os
import re
import shutil
import subprocess
import sys
import types

import pytest
from conftest import BIN, CAMPAIGN_MAN, GEN, MAN, REPO
from declared import missing

sys.path.insert(0, str(REPO / "scripts"))
from reference import environment  # noqa: E402

REF = REPO / "docs" / "reference"


def describe(*args):
    out = subprocess.run([str(BIN), *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def gen(*args):
    return subprocess.run(
        [sys.executable, str(GEN), "--bin", str(BIN), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def helps():
    listing = describe("--list", "--json")
    names = [k["name"] for k in listing["kernels"]] + [t["name"] for t in listing["tools"]]
    return {n: describe(n, "--help", "--json") for n in names}


def test_every_option_is_in_the_pages_and_the_man_page(helps):
    man = MAN.read_text()
    common = (REF / "kernels" / "common.md").read_text()
    for name, h in helps.items():
        page = (REF / "kernels" / f"{name}.md").read_text()
        for o in h["options"]:
            own = o["group"] == name
            where = page if own else common
            assert f"`--{o['name']}`" in where, (name, o["name"], o["group"])
            if o.get("short"):
                assert f"`-{o['short']}`, `--{o['name']}`" in where, (name, o["name"])
            for c in o.get("choices") or ():
                assert f"`{c}`" in where, (name, o["name"], c)
            roff_name = "\\-\\-" + o["name"].replace("-", "\\-")
            assert f"\\fB{roff_name}\\fR" in man, (name, o["name"])
        index = (REF / "index.md").read_text()
        assert f"(kernels/{name}.md)" in index


def rendered(page):
    """(groff -ww's warnings, man -l's warnings, the text) of a man page."""
    if not shutil.which("groff") or not shutil.which("man"):
        missing("groff", "groff or man not installed (scripts/install-deps.sh installs them)")
    warned = subprocess.run(
        ["groff", "-man", "-Tutf8", "-ww", "-z", str(page)], capture_output=True, text=True
    )
    env = {**os.environ, "MANWIDTH": "80", "MAN_KEEP_FORMATTING": "0"}
    man = subprocess.run(
        ["man", "--warnings=w", "-l", "-P", "cat", str(page)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert man.returncode == 0, man.stderr
    text = subprocess.run(
        ["groff", "-man", "-Tutf8", "-P-cbou", str(page)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return (
        warned.stderr + (f"(exit {warned.returncode})" if warned.returncode else ""),
        (man.stderr),
        text,
    )


def release_date():
    version = describe("--list", "--json")["version"]
    m = re.search(
        rf"^## \[{re.escape(version)}\] - (\S+)$", (REPO / "CHANGELOG.md").read_text(), re.M
    )
    assert m, f"CHANGELOG.md has no heading for {version}"
    return m.group(1)


@pytest.mark.parametrize(
    "page, sections",
    [
        (MAN, ("NAME", "SYNOPSIS", "KERNELS", "OPTIONS", "EXAMPLES", "ENVIRONMENT", "EXIT STATUS")),
        (CAMPAIGN_MAN, ("NAME", "SYNOPSIS", "COMMANDS", "EXAMPLES", "EXIT STATUS", "SEE ALSO")),
    ],
    ids=["iokernels.1", "iokernels-campaign.1"],
)
def test_man_page_renders_without_warnings(page, sections):
    groff_warnings, man_warnings, text = rendered(page)
    assert groff_warnings == "" and man_warnings == "", (groff_warnings, man_warnings)
    for section in sections:
        assert re.search(rf"^{section}$", text, re.M), section
    assert "--verify" in text or "--dry-run" in text  # \\- renders as a hyphen that can be copied
    # the release's date and version in the title line, not an empty date
    th = re.search(r'^\.TH \S+ 1 "([^"]*)" "iokernels ([^"]+)"', page.read_text(), re.M)
    assert th and th.group(1) == release_date(), th and th.group(0)


def test_the_render_check_sees_a_warning(tmp_path):
    """A page built to be wrong (an unknown macro, a section missing its
    text): the warnings reach the check."""
    bad = tmp_path / "bad.1"
    bad.write_text('.TH BAD 1 "" "x"\n.SH NAME\nbad \\- x\n.XX\n\\fBunclosed\n.SH\n')
    groff_warnings, _, _ = rendered(bad)
    assert "macro 'XX' not defined" in groff_warnings or "XX" in groff_warnings, groff_warnings


def test_every_argument_has_its_name(helps, generator):
    """No option's argument is TEXT (a string option declares its metavar),
    in the help and the man page; an option without one is refused, naming it."""
    module, files = generator
    assert module.manpage.untyped(helps.values()) == []
    assert "\\fITEXT\\fR" not in MAN.read_text()
    assert "\\fIFILE\\fR" in MAN.read_text() and "\\fIKEY=VALUE,...\\fR" in MAN.read_text()
    wrong = json.loads(json.dumps(helps["btio"]))
    next(o for o in wrong["options"] if o["name"] == "json")["argument"] = "TEXT"
    listing = describe("--list", "--json")
    with pytest.raises(
        module.manpage.Untyped, match="option btio --json takes an argument named TEXT"
    ):
        module.manpage.page(listing, {**helps, "btio": wrong}, {}, "2026-01-01")


def test_campaign_man_page_has_every_command_and_option(generator):
    """man/iokernels-campaign.1 says what the tool's parser says: every
    command and flag (ctest docs.reference_fresh checks it is current)."""
    module, _ = generator
    parser = module.campaign_parser(module.default_python())
    page = CAMPAIGN_MAN.read_text()
    assert len(parser["commands"]) >= 8
    for c in parser["commands"]:
        assert f".SS {c['name']}" in page, c["name"]
        for a in c["arguments"]:
            for flag in a["flags"]:
                roff_flag = flag.replace("-", "\\-")
                assert f"\\fB{roff_flag}\\fR" in page, (c["name"], flag)


def test_every_variable_the_sources_read_is_documented():
    read = set()
    for f in (REPO / "src").rglob("*.c"):
        found = re.findall(r'(?:getenv|env_count|slurm_id)\("([A-Z][A-Z0-9_]*)"\)', f.read_text())
        read |= set(found)
    assert {"IOK_FAULT", "SLURM_NNODES", "SLURM_JOB_ID"} <= read  # the pattern finds them
    man = MAN.read_text()
    for name in sorted(read - set(environment.INTERNAL)):
        assert name in man, f"{name} is read in src/ but not in scripts/reference/environment.py"
    for name, _ in environment.VARIABLES:
        assert f"\\fB{name}\\fR" in man, name


@pytest.fixture
def copy(tmp_path):
    """The generated files in a tree of their own."""
    shutil.copytree(REF, tmp_path / "docs" / "reference")
    shutil.copytree(REPO / "docs" / "results", tmp_path / "docs" / "results")
    (tmp_path / "man").mkdir()
    shutil.copy(MAN, tmp_path / "man")
    shutil.copy(CAMPAIGN_MAN, tmp_path / "man")
    return tmp_path


def test_check_names_a_stale_page_and_the_fix(copy):
    page = copy / "docs" / "reference" / "kernels" / "btio.md"
    page.write_text(page.read_text().replace("--dumps", "--dumpz"))
    out = gen("--check", str(copy))
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        "docs/reference/kernels/btio.md is stale: run "
        "scripts/gen-reference --bin build/iokernels --out ."
    ]


@pytest.fixture(scope="module")
def generator():
    """scripts/gen-reference as a module, and what it generates here."""
    loader = importlib.machinery.SourceFileLoader("gen_reference", str(GEN))
    module = types.ModuleType(loader.name)
    module.__file__ = str(GEN)
    loader.exec_module(module)
    return module, module.generate(BIN, REPO)


def test_check_names_a_missing_and_a_left_over_page(copy, generator, capsys):
    module, files = generator
    (copy / "man" / "iokernels.1").unlink()
    gone = copy / "docs" / "reference" / "kernels" / "oldkernel.md"
    gone.write_text((copy / "docs" / "reference" / "kernels" / "btio.md").read_text())
    assert (
        module.check(
            files, copy, module.kernels.backend_names(module.describe(BIN, "--list", "--json"))
        )
        == 1
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("man/iokernels.1 is missing: run scripts/gen-reference")
    assert lines[1].startswith("docs/reference/kernels/oldkernel.md is no longer generated")
    assert len(lines) == 2


def test_check_skips_a_build_with_other_backends(copy, generator, capsys):
    module, files = generator
    assert module.check(files, copy, ["null", "mpiio"]) == 77
    assert capsys.readouterr().out.startswith("skipped: this build has backends null, mpiio, the ")


def test_out_is_deterministic_and_holds_no_local_path(tmp_path, generator):
    _, files = generator  # a first generation, in this process
    assert gen("--out", str(tmp_path)).returncode == 0  # a second one
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written == sorted(files) and len(written) >= 12
    for rel in written:
        text = (tmp_path / rel).read_text()
        if rel != "docs/results/index.md":  # lists the tables present: none there
            assert text == files[rel], rel
        assert str(REPO) not in text and str(tmp_path) not in text, rel
        # no date but the release's (the man pages' title line)
        assert set(re.findall(r"20\d\d-\d\d-\d\d", text)) <= {release_date()}, rel


def test_out_removes_only_its_own_pages(copy, generator):
    module, files = generator
    mine = copy / "docs" / "reference" / "kernels" / "oldkernel.md"
    mine.write_text((copy / "docs" / "reference" / "kernels" / "btio.md").read_text())
    theirs = copy / "docs" / "reference" / "notes.md"
    theirs.write_text("# Notes written by hand\n")
    module.write(files, copy)
    assert not mine.exists()
    assert theirs.read_text() == "# Notes written by hand\n"
    assert (copy / "docs" / "reference" / "kernels" / "btio.md").read_text() == files[
        "docs/reference/kernels/btio.md"
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--bin", "/nonexistent/iokernels", "--out", "."], "cannot run /nonexistent/iokernels"),
        (["--bin", "/bin/true", "--out", "."], "printed no JSON: is it iokernels?"),
        (["--out", "/nonexistent-folder"], "/nonexistent-folder is not a folder"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    if "--bin" not in args:
        args = ["--bin", str(BIN), *args]
    out = subprocess.run(
        [sys.executable, str(GEN), *args], capture_output=True, text=True, cwd=tmp_path
    )
    assert out.returncode == 2
    assert len(out.stderr.splitlines()) == 1 and message in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and list(tmp_path.iterdir()) == []
