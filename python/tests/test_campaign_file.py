# SPDX-License-Identifier: BSD-3-Clause
"""Campaign files: what they expand to, and a clear error for each bad one."""

import dataclasses

import pytest
from conftest import REPO, cli
from iokernels_campaign.spec import spec

BLOCK = """
[[kernel]]
name = "btio"
backends = ["mpiio"]
options = { grid = "16,16,16" }
"""


def load(tmp_path, inv, text):
    path = tmp_path / "c.toml"
    path.write_text(text)
    return spec.load(path, inv)


def error(tmp_path, inv, text):
    with pytest.raises(spec.CampaignError) as e:
        load(tmp_path, inv, text)
    return str(e.value)


def test_default_campaign_covers_btio_on_every_built_backend(inv):
    c = spec.load(REPO / "campaigns" / "default.toml", inv)
    assert c.name == "default"
    assert {x.backend for x in c.cases if x.kernel == "btio"} == set(inv.backends)
    assert {x.ranks for x in c.cases} == {1, 4}
    null = [x for x in c.cases if x.backend == "null"]
    assert null and all("--verify" not in x.argv("write") for x in null)
    mpiio = next(x for x in c.cases if x.backend == "mpiio")
    argv = mpiio.argv("write")
    assert argv[:5] == ["btio", "--backend", "mpiio", "--mode", "write"]
    assert "--verify" in argv and "--ceiling" in argv
    assert argv[argv.index("--grid") + 1] == "32,32,32"
    assert mpiio.modes == ("write", "read")


def test_default_campaign_runs_5_iterations_and_null_with_btio_only(inv):
    c = spec.load(REPO / "campaigns" / "default.toml", inv)
    assert {x.iterations for x in c.cases} == {5}  # the exact test needs 4 a side
    assert {x.kernel for x in c.cases if x.backend == "null"} == {"btio"}
    for k in ("ncbench", "amrex", "chombo", "e3sm"):
        assert {x.backend for x in c.cases if x.kernel == k} == set(inv.backends) - {"null"}


EXCLUDE = """
[campaign]
name = "x"
ranks = [1]
[[kernel]]
name = "btio"
backends = BACKENDS
exclude = EXCLUDE
options = { grid = "8,8,8" }
[kernel.backend.null]
verify = false
"""


def test_exclude_leaves_backends_out_of_all(tmp_path, inv):
    text = EXCLUDE.replace("BACKENDS", '"all"')
    c = load(tmp_path, inv, text.replace("EXCLUDE", '["null"]'))
    assert {x.backend for x in c.cases} == set(inv.backends) - {"null"}
    msg = error(tmp_path, inv, text.replace("EXCLUDE", '"null"'))
    assert 'exclude must be a list of backend names, such as ["null"], got' in msg
    msg = error(tmp_path, inv, text.replace("EXCLUDE", repr(list(inv.backends)).replace("'", '"')))
    assert "exclude leaves no backend of" in msg
    listed = EXCLUDE.replace("BACKENDS", '["mpiio"]').replace("EXCLUDE", '["null"]')
    msg = error(tmp_path, inv, listed.replace("[kernel.backend.null]\nverify = false\n", ""))
    assert 'exclude goes with backends = "all": list the backends instead' in msg


def test_all_picks_up_a_backend_the_binary_lists(inv):
    # a build with an adios2 backend: the default campaign runs btio on it too
    more = dataclasses.replace(inv, backends={**inv.backends, "adios2": "ADIOS2 2.9"})
    more._options = dict(inv._options)
    c = spec.load(REPO / "campaigns" / "default.toml", more)
    assert "adios2" in {x.backend for x in c.cases}


def test_sweep_and_per_backend_options(tmp_path, inv):
    c = load(
        tmp_path,
        inv,
        """
[campaign]
ranks = [1, 4]
iterations = 3
[[kernel]]
name = "btio"
backends = ["mpiio", "hdf5"]
options = { grid = [16, 16, 16], dumps = 2 }
sweep = { independent = [false, true] }
[kernel.backend.hdf5]
hdf5-layout = "chunked"
""",
    )
    assert len(c.cases) == 2 * 2 * 2
    assert all(x.iterations == 3 for x in c.cases)
    hdf5 = [x for x in c.cases if x.backend == "hdf5"]
    assert all(("hdf5-layout", "chunked") in x.args for x in hdf5)
    assert all("--hdf5-layout" not in x.argv("write") for x in c.cases if x.backend == "mpiio")
    assert {x.variant for x in c.cases} == {"independent=off", "independent=on"}
    on = next(x for x in c.cases if x.variant == "independent=on")
    assert "--independent" in on.argv("write")
    assert on.argv("write")[on.argv("write").index("--grid") + 1] == "16,16,16"


def test_case_hash_is_the_run_not_the_place(tmp_path, inv):
    a = load(tmp_path, inv, BLOCK).cases[0]
    other = tmp_path / "elsewhere"
    other.mkdir()
    b = load(other, inv, BLOCK).cases[0]
    assert a.case_hash("write") == b.case_hash("write")
    assert a.case_hash("write") != a.case_hash("read")
    c = load(tmp_path, inv, BLOCK.replace("16,16,16", "20,20,20")).cases[0]
    assert c.case_hash("write") != a.case_hash("write")


BAD = [
    ("unknown kernel", BLOCK.replace('"btio"', '"e3sm-nope"'), "unknown kernel 'e3sm-nope'"),
    (
        "backend not built",
        BLOCK.replace('["mpiio"]', '["posix"]'),
        "kernel btio cannot use backend 'posix': this build has null, mpiio",
    ),
    (
        "null cannot verify",
        BLOCK.replace('["mpiio"]', '["null"]').replace(
            '"16,16,16" }', '"16,16,16", verify = true }'
        ),
        "kernel btio cannot use backend null with these options: it moves no data",
    ),
    (
        "no nonblocking api",
        BLOCK.replace('["mpiio"]', '["hdf5"]').replace(
            '"16,16,16" }', '"16,16,16", api = "nonblocking" }'
        ),
        "kernel btio cannot use backend hdf5 with these options: it has no nonblocking API",
    ),
    ("ranks zero", "[campaign]\nranks = [1, 0]\n" + BLOCK, "ranks must be at least 1, got 0"),
    ("ranks negative", BLOCK + "ranks = -4\n", "ranks must be at least 1, got -4"),
    ("ranks not a number", BLOCK + 'ranks = ["four"]\n', "ranks must be a whole number"),
    ("iterations zero", BLOCK + "iterations = 0\n", "iterations must be at least 1"),
    ("unknown option", BLOCK.replace("grid", "gird"), "kernel btio has no option --gird"),
    ("reserved option", BLOCK.replace("grid", "mode"), "option mode is not allowed: use modes"),
    (
        "flag needs a bool",
        BLOCK.replace('"16,16,16" }', '"16,16,16", verify = "yes" }'),
        "verify is a flag: give true or false",
    ),
    (
        "bad choice",
        BLOCK.replace('"16,16,16" }', '"16,16,16", api = "async" }'),
        "api must be one of blocking, nonblocking, varn, not 'async'",
    ),
    ("bad mode", BLOCK + 'modes = ["write", "append"]\n', "modes must be a list of write, read"),
    (
        "backend option in options",
        BLOCK.replace('grid = "16,16,16"', 'hdf5-layout = "chunked"'),
        "--hdf5-layout belongs to backend hdf5: put it under [kernel.backend.hdf5]",
    ),
    ("empty sweep", BLOCK + "sweep = { dumps = [] }\n", "sweep dumps must be a non-empty list"),
    ("no blocks", "[campaign]\nname = 'x'\n", "no [[kernel]] or [[mix]] block"),
    ("unknown key", BLOCK + "rank = [1]\n", "unknown key 'rank'"),
    ("not toml", "[[kernel]\nname=", "not valid TOML"),
    (
        "int option given text",
        BLOCK.replace('"16,16,16" }', '"16,16,16", dumps = "many" }'),
        "option dumps = 'many': expected a whole number (int, --dumps N)",
    ),
    (
        "int option given a float",
        BLOCK.replace('"16,16,16" }', '"16,16,16", dumps = 2.5 }'),
        "option dumps = 2.5: expected a whole number",
    ),
    (
        "int option out of C range",
        BLOCK.replace('"16,16,16" }', '"16,16,16", dumps = 99999999999 }'),
        "option dumps = 99999999999: expected a whole number from -2147483648 to 2147483647",
    ),
    (
        "below the kernel's least",
        BLOCK.replace('"16,16,16" }', '"16,16,16", dumps = 0 }'),
        # the binary's own line (iokernels btio --check), not a copy of its rule
        "kernel btio on mpiio cannot run at 1 ranks (write): command line: --dumps takes at "
        "least 1, not '0'",
    ),
    (
        "above the kernel's most",
        BLOCK.replace('"16,16,16" }', '"16,16,16", method = 7 }'),
        "command line: --method takes 0 to 3, not '7'",
    ),
    (
        "int3 with two numbers",
        BLOCK.replace('"16,16,16"', '"16,16"'),
        "option grid = '16,16': expected three whole numbers",
    ),
    (
        "int3 not numbers",
        BLOCK.replace('"16,16,16"', '["a", "b", "c"]'),
        "option grid = ['a', 'b', 'c']: expected three whole numbers",
    ),
    (
        "double not finite",
        BLOCK.replace('"16,16,16" }', '"16,16,16", deadline = nan }'),
        "option deadline = nan: expected a finite number",
    ),
    (
        "swept value of the wrong type",
        BLOCK + 'sweep = { dumps = [1, "two"] }\n',
        "option dumps = 'two': expected a whole number",
    ),
    (
        "text with a control character",
        BLOCK.replace('"16,16,16" }', '"16,16,16", hints = "a\\u0000b" }'),
        "option hints = 'a\\x00b': expected one line of printable text",
    ),
    (  # the binary reads the hints file as a run would: refused before anything runs
        "hints file missing",
        BLOCK.replace('"16,16,16" }', '"16,16,16", hints-file = "no-such.hints" }'),
        "(write): cannot open hints file no-such.hints",
    ),
    (  # a range the campaign tool's old copy of the rules missed
        "ceiling samples above the core's most",
        BLOCK.replace('"16,16,16" }', '"16,16,16", ceiling-samples = 17 }'),
        "command line: --ceiling-samples takes 1 to 16, not '17'",
    ),
    (
        "btio at a non-square rank count",
        BLOCK + "ranks = [1, 2, 4]\n",
        "kernel btio on mpiio cannot run at 2 ranks (write): btio needs a square number of "
        "processes (1, 4, 9, 16, ...), not 2",
    ),
    (
        "btio grid too small for the ranks",
        BLOCK.replace('"16,16,16"', '"8,8,8"') + "ranks = [9]\n",
        "kernel btio on mpiio cannot run at 9 ranks (write): grid 8x8x8 is too small for 9 "
        "processes",
    ),
    (
        "btio default grid too small",
        BLOCK.replace('options = { grid = "16,16,16" }', "") + "ranks = [625]\n",
        "grid 64x64x64 is too small for 625 processes",
    ),
    (
        "btio both in one run",
        BLOCK + 'modes = ["both"]\n',
        "BTIO writes or reads in one run",
    ),
    (
        "more ranks than the allocation",
        "[slurm]\nnodes = 1\nntasks-per-node = 4\n" + BLOCK + "ranks = [1, 9]\n",
        "case 'btio mpiio n9' needs 9 ranks but nodes x ntasks-per-node is 1 x 4 = 4",
    ),
    ("name with ..", '[campaign]\nname = "../up"\n' + BLOCK, "[campaign]: name '../up' is not"),
    ("name with /", '[campaign]\nname = "a/b"\n' + BLOCK, "name 'a/b' is not a plain name"),
    ("name hidden", '[campaign]\nname = ".x"\n' + BLOCK, "name '.x' is not a plain name"),
    ("name not text", "[campaign]\nname = 5\n" + BLOCK, "name 5 is not a plain name"),
    ("name empty", '[campaign]\nname = ""\n' + BLOCK, "name '' is not a plain name"),
    ("description not text", "[campaign]\ndescription = 1\n" + BLOCK, "description must be"),
]


@pytest.mark.parametrize("case", BAD, ids=[b[0] for b in BAD])
def test_bad_campaign_files(tmp_path, inv, case):
    _, text, msg = case
    assert msg in error(tmp_path, inv, text)


def test_error_names_file_and_block(tmp_path, inv):
    msg = error(tmp_path, inv, BLOCK + BLOCK.replace("grid", "gird"))
    assert msg.startswith(f"{tmp_path / 'c.toml'}: [[kernel]] block 2 (btio): ")


def test_same_run_twice_is_refused(tmp_path, inv):
    assert "the same run twice" in error(tmp_path, inv, BLOCK + BLOCK)


def test_missing_file_exits_2_with_one_line(tmp_path):
    p = cli("run", "nope.toml", "--db", "x.sqlite", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.strip() == "iokernels-campaign: error: campaign file nope.toml not found"
    assert not (tmp_path / "x.sqlite").exists()


def test_bad_file_runs_nothing(tmp_path):
    (tmp_path / "c.toml").write_text(BLOCK.replace('["mpiio"]', '["posix"]'))
    p = cli("run", "c.toml", "--db", "x.sqlite", "--out", "out", cwd=tmp_path)
    assert p.returncode == 2
    assert "cannot use backend 'posix'" in p.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "x.sqlite").exists()


def test_values_reach_the_command_line_as_the_binary_takes_them(tmp_path, inv):
    c = load(
        tmp_path,
        inv,
        BLOCK.replace('"16,16,16" }', '"16 16 16", dumps = "3", deadline = 2 }') + "ranks = [4]\n",
    )
    argv = c.cases[0].argv("write")
    assert argv[argv.index("--grid") + 1] == "16,16,16"
    assert argv[argv.index("--dumps") + 1] == "3"
    assert argv[argv.index("--deadline") + 1] == "2"


def test_name_from_the_file_must_be_plain_too(tmp_path, inv):
    path = tmp_path / ".hidden.toml"
    path.write_text(BLOCK)
    with pytest.raises(spec.CampaignError) as e:
        spec.load(path, inv)
    assert "the file name '.hidden' is no plain campaign name" in str(e.value)
    assert 'give [campaign] name = "..."' in str(e.value)
    ok = tmp_path / "my-run_1.toml"
    ok.write_text(BLOCK)
    assert spec.load(ok, inv).name == "my-run_1"


def test_a_bad_name_writes_nothing_outside(tmp_path):
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "c.toml").write_text('[campaign]\nname = "../../escape"\n' + BLOCK)
    p = cli("run", "c.toml", "--db", "x.sqlite", cwd=tmp_path / "w")
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("iokernels-campaign: error: c.toml: [campaign]: name '../../escape'")
    assert sorted(x.name for x in tmp_path.rglob("*")) == ["c.toml", "w"]


def test_an_option_without_a_type_is_checked_by_its_default():
    from iokernels_campaign.run import inventory
    from iokernels_campaign.spec import optcheck

    desc = {
        "options": [
            {"name": "n", "group": "k", "default": 4},
            {"name": "x", "group": "k", "default": 0.5},
            {"name": "g", "group": "k", "default": [8, 8, 8]},
            {"name": "f", "group": "k", "default": False},
            {"name": "s", "group": "k", "default": None},
        ]
    }
    opts = inventory.parse_options(desc)
    assert {k: o.type for k, o in opts.items()} == {
        "n": "int64",
        "x": "double",
        "g": "int3",
        "f": "bool",
        "s": "string",
    }
    assert optcheck.text(opts["g"], [1, 2, 3]) == "1,2,3"
    with pytest.raises(optcheck.BadValue, match="a whole number"):
        optcheck.text(opts["n"], "many")
    with pytest.raises(optcheck.BadValue, match="three whole numbers"):
        optcheck.text(opts["g"], "1,2")


@pytest.mark.parametrize(
    "text, expected",
    [
        (BLOCK.replace('"btio"', '"abrgen"').replace('grid = "16,16,16"', ""), "abrgen is a tool"),
        (
            BLOCK.replace('"btio"', '"ncbench"').replace('grid = "16,16,16"', "")
            + 'input = "c.toml"\n',
            "kernel ncbench takes no input file: drop input",
        ),
        (
            BLOCK.replace('"btio"', '"amrex"').replace('grid = "16,16,16"', "shift-ranks = 1"),
            "shift-ranks = 1: the reads of amrex cannot be shifted",
        ),
    ],
    ids=["tool", "no-input", "not-shiftable"],
)
def test_what_the_binary_says_of_its_kernels(tmp_path, inv, text, expected):
    assert expected in error(tmp_path, inv, text)


def test_btio_reads_may_be_shifted(tmp_path, inv):
    c = load(tmp_path, inv, BLOCK.replace('"16,16,16" }', '"16,16,16", shift-ranks = 1 }'))
    assert "--shift-ranks" in c.cases[0].argv("read")


def test_a_refusal_is_the_binarys_own_line(tmp_path, inv):
    """The campaign hands on what `iokernels KERNEL --check` prints, word
    for word (so a rule changed in the C changes the campaign's answer)."""
    import subprocess

    p = subprocess.run(
        [str(inv.binary), "btio", "--check", "--grid", "16,16,16", "--dumps", "0"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    line = p.stderr.strip().removeprefix("iokernels: error: ")
    assert p.returncode == 2 and "--dumps" in line
    text = BLOCK.replace('"16,16,16" }', '"16,16,16", dumps = 0 }')
    assert error(tmp_path, inv, text).endswith(f"(write): {line}")


def test_the_binarys_refusal_of_an_earlier_block_comes_first(tmp_path, inv):
    """All blocks are asked of the binary in one call at the end; an error
    of a later block does not hide the refusal of an earlier one (the
    order of the errors is the file's), nor does it come first."""
    refused = BLOCK.replace('"16,16,16" }', '"16,16,16", dumps = 0 }')
    broken = BLOCK.replace('name = "btio"', 'name = "btio"\nnosuchkey = 1')
    assert "--dumps" in error(tmp_path, inv, refused + broken)
    assert "[[kernel]] block 1" in error(tmp_path, inv, refused + broken)
    # the other way round: the static error of block 1 comes first
    assert "nosuchkey" in error(tmp_path, inv, broken + refused)
    assert "block 2" in error(tmp_path, inv, BLOCK + refused)


def test_a_batch_that_ends_early_is_asked_again(tmp_path):
    """A case that ends the --check-batch process (a crash) gets the
    process's last line; the cases after it are asked again, not lost. A
    fake binary: ends at a line naming "crash", answers "ok" otherwise, and
    refuses what names "bad"."""
    from iokernels_campaign.spec import optcheck

    fake = tmp_path / "iokernels"
    fake.write_text(
        "#!/bin/sh\n"
        "while read -r line; do\n"
        '  case "$line" in\n'
        '    *crash*) echo "iokernels: error: ended" >&2; exit 1;;\n'
        '    *bad*) echo "iokernels: error: refused";;\n'
        "    *) echo ok;;\n"
        "  esac\n"
        "done\n"
    )
    fake.chmod(0o755)
    asked = [(["k", "a"], 1), (["k", "crash"], 1), (["k", "bad"], 2), (["k", "b"], 1)]
    assert optcheck.refusals(fake, asked) == [None, "ended", "refused", None]
    # the same questions again: answered from what was kept
    fake.write_text("#!/bin/sh\nexit 3\n")
    assert optcheck.refusals(fake, asked[:1]) == [None]


def rules_in(source):
    """What in a module's source looks like a copied option rule: a number
    other than the few the type checks need, the word square, a table of
    ranges, an option name of the binary's as a literal."""
    import ast

    # type limits, an int3's three, text length, timeout, workers
    allowed = {0, 1, 2, 3, 8, 31, 63, 120, 4096}
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            if not isinstance(node.value, bool) and node.value not in allowed:
                found.append(f"number {node.value!r}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if "square" in node.value.lower() or node.value in RULED_NAMES:
                found.append(f"text {node.value!r}")
        if isinstance(node, ast.Name) and node.id in ("RANGES", "rank_refusal"):
            found.append(node.id)
    return found


# options with a range or a rank rule in the binary (any would do: a copied
# rule names its option)
RULED_NAMES = {"grid", "dumps", "method", "ncomp", "nlevs", "records", "ceiling-samples"}


def test_optcheck_holds_no_rule_of_its_own():
    from pathlib import Path

    import iokernels_campaign.spec.optcheck as optcheck

    assert rules_in(Path(optcheck.__file__).read_text()) == []
    # what the module held before: caught
    planted = 'RANGES = {("btio", "dumps"): (1, None)}\nq = "a square number"\n'
    assert {"RANGES", "text 'dumps'", "text 'a square number'"} <= set(rules_in(planted))
