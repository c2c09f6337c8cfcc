# SPDX-License-Identifier: BSD-3-Clause
"""Labels reach the campaign's batch script: each case's comment line
(`# case 1/2: LABEL null n1`). A label holding a line break would end that
comment and make the rest of it lines of the job script, so a [[kernel]],
[[mix]] or [[mix.member]] label that is not one line of printable
characters is refused when the campaign is read (one line naming the file,
the block, the key and the fix; exit 2; nothing written). A printable
label, however odd ($(...), backticks, quotes, ;, |, >), stays text: the
script generated from it is run, with a stand-in srun (fakeslurm.py) that
records its calls, and nothing runs but srun. A label that gets past the
check (a case built in code) is escaped in the comment all the same."""

import dataclasses
import json
import os
import shlex
import subprocess

import fakeslurm
import pytest
from conftest import BIN, cli
from iokernels_campaign.run import runner
from iokernels_campaign.spec import spec

KERNEL = """
[campaign]
name = "labels"
order = "blocked"  # the cases' comments in the order written
[[kernel]]
name = "btio"
label = {label}
backends = ["null"]
ranks = [1]
options = {{ grid = "16,16,16", dumps = 2 }}
"""

MIX = """
[[mix]]
label = {label}
iterations = 1
[[mix.member]]
name = "btio"
label = {member}
ranks = 1
backends = ["null"]
options = {{ grid = "16,16,16", dumps = 2 }}
[[mix.member]]
name = "btio"
ranks = 1
backends = ["null"]
options = {{ grid = "16,16,16", dumps = 3 }}
"""


def toml(text):
    """A TOML basic string holding text (JSON's escapes are TOML's)."""
    return json.dumps(text)


def campaign_text(kernel="plain", mix=None, member="m"):
    text = KERNEL.format(label=toml(kernel))
    if mix is not None:
        text += MIX.format(label=toml(mix), member=toml(member))
    return text


def sbatch_dry_run(tmp_path, text):
    """`run --launcher sbatch --dry-run` of text: (process, the script or None)."""
    (tmp_path / "c.toml").write_text(text)
    p = cli("run", "c.toml", "--launcher", "sbatch", "--dry-run", "--out", "out", cwd=tmp_path)
    scripts = list((tmp_path / "out" / "runs").glob("*/job.sbatch"))
    return p, scripts[0] if scripts else None


BREAKS = {
    "LF": "x\ntouch pwned\n",
    "CR": "a\rb",
    "tab": "tab\there",
    "escape": "\x1b]0;title\x07",
    "U+2028": "a\u2028b",
}
REFUSED = [
    pytest.param(campaign_text(kernel=text), "[[kernel]] block 1 (btio)", id=f"kernel-{name}")
    for name, text in BREAKS.items()
] + [
    pytest.param(campaign_text(mix=BREAKS["LF"]), "[[mix]] block 1", id="mix-LF"),
    pytest.param(
        campaign_text(mix="m", member=BREAKS["LF"]),
        "[[mix]] block 1 [[mix.member]] 1 (btio)",
        id="member-LF",
    ),
]


@pytest.mark.parametrize("text, block", REFUSED)
def test_a_label_that_is_not_one_printable_line_is_refused(text, block, tmp_path):
    p, script = sbatch_dry_run(tmp_path, text)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert script is None and not (tmp_path / "out").exists()  # nothing written
    (line,) = p.stderr.splitlines()
    assert line.startswith(f"iokernels-campaign: error: c.toml: {block}: label "), line
    assert line.endswith(
        "a label is one line of printable characters "
        "(no line break, tab or other control character); remove it"
    ), line
    assert line.isprintable() and not (tmp_path / "pwned").exists()


def run_script(tmp_path, script):
    """Runs the batch script as the job would, with fakeslurm's srun first
    on PATH (no Slurm here): (process, srun's calls as argument lists)."""
    env = dict(os.environ, **fakeslurm.install(tmp_path, tools=("srun",)))
    work = tmp_path / "job-cwd"
    work.mkdir()
    p = subprocess.run(
        ["bash", str(script)], cwd=work, env=env, capture_output=True, text=True, timeout=300
    )
    log = tmp_path / "log" / "srun"
    calls = [shlex.split(x) for x in log.read_text().splitlines()] if log.exists() else []
    return p, calls


def steps_of(calls):
    """The srun calls that launch a run (not --mpi=list, not the plugin probe)."""
    return [c for c in calls if c[:1] != ["--mpi=list"] and "--version" not in c]


PIECES = ("dollar", "backtick", "semicolon", "amp", "pipe", "redirect", "and")


def odd_label(tag):
    """Printable text a shell would run, were it not quoted: each piece
    would create the file TAG-PIECE where it ran (below tmp_path)."""
    return (
        f'{tag} it\'s "q" $(touch {tag}-dollar) `touch {tag}-backtick` ; touch {tag}-semicolon '
        f"& touch {tag}-amp | touch {tag}-pipe > {tag}-redirect \\ ${{IFS}} '#' && touch {tag}-and"
    )


def made_by_labels(tmp_path):
    """Files a label's text created (odd_label's, or newline-made)."""
    names = {f"{t}-{p}" for t in ("kernel", "mix", "member") for p in PIECES} | {"newline-made"}
    return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.name in names)


def test_an_odd_printable_label_stays_text_when_the_script_runs(tmp_path):
    text = campaign_text(
        kernel=odd_label("kernel"),
        mix=odd_label("mix"),
        member=odd_label("member"),
    )
    p, script = sbatch_dry_run(tmp_path, text)
    assert p.returncode == 0, p.stderr
    lines = script.read_text().splitlines()
    comments = [x for x in lines if x.startswith("# case ")]
    assert len(comments) == 2, comments
    assert comments[0] == f"# case 1/2: {odd_label('kernel')} null n1"
    assert comments[1] == f"# case 2/2: {odd_label('mix')} null+null n2"

    job, calls = run_script(tmp_path, script)
    assert job.returncode == 0, job.stderr
    assert made_by_labels(tmp_path) == []  # no text of a label ran
    steps = steps_of(calls)
    assert len(steps) == 2, calls  # one step per run, and srun ran them
    assert all(str(BIN) in s for s in steps), steps
    assert ["mix", "--member-dirs"] == steps[1][steps[1].index(str(BIN)) + 1 :][:2], steps[1]
    (end,) = (tmp_path / "out" / "runs").glob("*/job.end.json")
    assert json.loads(end.read_text())["exit_code"] == 0


def test_a_label_past_the_checks_is_escaped_in_the_script(tmp_path, inv):
    """Defence in depth: a case whose label holds a line break (built in
    code: the campaign file's check refuses it) is one comment line still."""
    (tmp_path / "c.toml").write_text(campaign_text())
    c = spec.load(tmp_path / "c.toml", inv)
    label = "x\ntouch newline-made\necho newline-ran"
    c = dataclasses.replace(c, cases=[dataclasses.replace(c.cases[0], label=label)])
    runner.write_sbatch(c, inv, tmp_path / "out", echo=lambda text: None)
    (script,) = (tmp_path / "out" / "runs").glob("*/job.sbatch")
    job, calls = run_script(tmp_path, script)
    assert job.returncode == 0, job.stderr
    assert made_by_labels(tmp_path) == [] and "newline-ran" not in job.stdout
    assert len(steps_of(calls)) == 1, calls
    comments = [x for x in script.read_text().splitlines() if x.startswith("# case ")]
    assert comments == ["# case 1/1: x\\ntouch newline-made\\necho newline-ran null n1"]
