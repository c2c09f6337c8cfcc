# SPDX-License-Identifier: BSD-3-Clause
"""Every user mistake in a campaign file is one line and exit 2, never a
traceback: the default and the cluster example campaigns, mutated many ways
(deterministically), are
either accepted or refused with a CampaignError of one printable line; the
command line says it with exit 2."""

import random

import pytest
from conftest import REPO
from iokernels_campaign import cli, spec


def _absolute(name):
    """The campaign with its input path made absolute: the mutated copies live elsewhere."""
    text = (REPO / "campaigns" / name).read_text()
    return text.replace('"../data/e3sm/', f'"{REPO}/data/e3sm/')


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
