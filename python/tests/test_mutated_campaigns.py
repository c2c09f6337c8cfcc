# SPDX-License-Identifier: BSD-3-Clause
"""Every user mistake in a campaign file is one line and exit 2, never a
traceback: the default and the cluster example campaigns, mutated many ways
(deterministically), are
either accepted or refused with a CampaignError of one printable line; the
command line says it with exit 2."""

import random

import pytest
from conftest import REPO
from iokernels_campaign import cli
from iokernels_campaign.spec import spec


def _absolute(name):
    """The campaign with its input paths made absolute: the mutated copies live elsewhere."""
    text = (REPO / "campaigns" / name).read_text()
    return text.replace('"../data/', f'"{REPO}/data/')


DEFAULT = _absolute("default.toml")
CLUSTER = _absolute("cluster-example.toml")
VALUES = [
    '"x"',
    "-1",
    "0",
    "1e400",
    "true",
    "[]",
    '[1, "a"]',
    "{}",
    "{ a = 1 }",
    '"\\u0000"',
    "99999999999999999999",
    "[[1]]",
    '"' + "y" * 300 + '"',
    "nan",
    '""',
]


def mutations(n=300, seed=7, text=DEFAULT):
    rng = random.Random(seed)
    lines = text.splitlines()
    for _ in range(n):
        out = list(lines)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(out))
            op = rng.randrange(6)
            if op == 0:
                del out[i]
            elif op == 1:
                out.insert(i, out[rng.randrange(len(out))])
            elif op == 2 and "=" in out[i]:  # another value, of any type
                key = out[i].split("=", 1)[0]
                out[i] = f"{key}= {rng.choice(VALUES)}"
            elif op == 3 and "{" in out[i]:  # a value inside an inline table
                out[i] = (
                    out[i]
                    .replace("true", rng.choice(VALUES), 1)
                    .replace("3", rng.choice(VALUES), 1)
                )
            elif op == 4:  # a key renamed
                out[i] = out[i].replace("name", "nmae", 1).replace("ranks", "rank", 1)
            else:
                out[i] = out[i][: rng.randrange(len(out[i]) + 1)]
        text = "\n".join(out) + "\n"
        if rng.random() < 0.1:  # raw bytes
            b = bytearray(text.encode())
            b[rng.randrange(len(b))] = rng.randrange(256)
            yield bytes(b)
        else:
            yield text.encode()


@pytest.mark.parametrize("text", [DEFAULT, CLUSTER], ids=["default", "cluster-example"])
def test_mutated_campaign_files_are_refused_in_one_line(tmp_path, inv, text):
    accepted = refused = 0
    for k, data in enumerate(mutations(text=text)):
        f = tmp_path / f"m{k}.toml"
        f.write_bytes(data)
        try:
            spec.load(f, inv)
            accepted += 1
        except spec.CampaignError as e:
            msg = str(e)
            assert msg and "\n" not in msg and msg.isprintable(), (k, msg)
            refused += 1
    assert refused > 100 and accepted > 0, (accepted, refused)


@pytest.mark.parametrize(
    "content",
    [b'[campaign]\nname = "x\xff"\n', b"[campaign\n", b"[[kernel]]\nname = 5\n"],
    ids=["not-utf8", "bad-toml", "bad-type"],
)
def test_command_line_says_it_in_one_line_exit_2(tmp_path, capsys, content):
    f = tmp_path / "c.toml"
    f.write_bytes(content)
    rc = cli.main(["run", str(f), "--dry-run", "--db", str(tmp_path / "s.sqlite")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("iokernels-campaign: error:"), err


def test_a_path_too_long_is_one_line(tmp_path, capsys):
    rc = cli.main(["run", str(tmp_path / ("a" * 300 + ".toml")), "--dry-run"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "File name too long" in err[0], err


# values of another type or range for the options the campaigns set
OPTION_VALUES = ['"many"', "-3", "0", "2.5", "[1, 2]", '"1,2"', "true", '"x\\ny"', "1e999"]


def typed_mutations(n, seed, text):
    """The campaign with one option value or rank list replaced."""
    rng = random.Random(seed)
    lines = text.splitlines()
    spots = [i for i, x in enumerate(lines) if "options" in x or x.startswith("ranks")]
    for _ in range(n):
        out = list(lines)
        i = rng.choice(spots)
        if out[i].startswith("ranks"):
            out[i] = f"ranks = [{rng.choice([2, 3, 5, 8, 100000, 0])}]"
        else:
            key = rng.choice(["dumps", "grid", "deadline", "method", "iterations", "seed"])
            out[i] = out[i].replace("{ ", f"{{ {key} = {rng.choice(OPTION_VALUES)}, ", 1)
        yield ("\n".join(out) + "\n").encode()


@pytest.mark.parametrize("text", [DEFAULT, CLUSTER], ids=["default", "cluster-example"])
def test_command_line_on_mutated_campaigns_one_line_no_traceback(
    tmp_path, inv, capsys, monkeypatch, text
):
    """run --dry-run on mutated campaign files: exit 0, or exit 2 with one
    `iokernels-campaign: error:` line naming the file; never the backstop."""
    monkeypatch.setattr(cli.inventory, "load", lambda binary=None: inv)
    monkeypatch.chdir(tmp_path)
    cases = list(mutations(n=120, seed=11, text=text)) + list(typed_mutations(60, 5, text))
    codes = {0: 0, 2: 0}
    for k, data in enumerate(cases):
        name = f"m{k}.toml"
        (tmp_path / name).write_bytes(data)
        rc = cli.main(["run", name, "--dry-run", "--db", "s.sqlite"])
        out = capsys.readouterr()
        lines = out.err.strip().splitlines()
        assert "Traceback" not in out.err, (k, out.err)
        assert rc in codes, (k, rc, lines)
        codes[rc] += 1
        if rc == 0:
            assert lines == [] and "# dry run:" in out.out, (k, lines)
        else:
            assert len(lines) == 1, (k, lines)
            assert lines[0].startswith(f"iokernels-campaign: error: {name}"), (k, lines)
            assert "unexpected" not in lines[0], (k, lines)
    assert not (tmp_path / "s.sqlite").exists()  # a dry run stores nothing
    assert codes[0] > 0 and codes[2] > 60, codes


BTIO_ONLY = """
[campaign]
ranks = [1, 4]
[[kernel]]
name = "btio"
backends = ["null"]
options = { fsync = true }
"""
# each wrong for each of dumps, grid, method and iterations
ALWAYS_WRONG = ['"many"', "-3", "[1, 2]", '"1,2"', "true", '"x\\ny"', "1e999", "2.5"]


def test_typed_mutations_are_all_refused(tmp_path, inv):
    """Each option value of the wrong type or range, each rank count BTIO
    refuses: refused before anything runs, naming the option or the ranks."""
    rng = random.Random(3)
    for k in range(80):
        if k % 4 == 0:
            text = BTIO_ONLY.replace("ranks = [1, 4]", f"ranks = [{rng.choice([2, 3, 8, 0])}]")
            want = "ranks"
        else:
            key = rng.choice(["dumps", "grid", "method", "iterations"])
            value = rng.choice(ALWAYS_WRONG)
            text = BTIO_ONLY.replace("{ ", f"{{ {key} = {value}, ")
            # a value of the wrong type: the campaign's own line; one out of its
            # range: the binary's (iokernels btio --check)
            type_error = value != "-3" or key == "grid"  # -3 is no X,Y,Z: a type error
            want = f"option {key} = " if type_error else f"--{key} takes "
        f = tmp_path / f"t{k}.toml"
        f.write_text(text)
        with pytest.raises(spec.CampaignError) as e:
            spec.load(f, inv)
        assert str(e.value).startswith(f"{f}: [[kernel]] block 1 (btio): "), str(e.value)
        assert want in str(e.value), (text, str(e.value))
