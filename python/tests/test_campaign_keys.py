# SPDX-License-Identifier: BSD-3-Clause
"""The keys the reference documents (keys.py) are the keys the tool
accepts: a campaign that sets every declared key, each with a valid value,
loads; a key keys.py does not declare is refused, naming it."""

import pytest
from iokernels_campaign.spec import keys, spec
from iokernels_campaign.tune import tune_spec

# a valid value for every declared key (placeholders NAME and OPTION get a
# real name); a key added to keys.py needs its line here
VALUES = {
    ("(top level)", "campaign"): None,  # the tables below
    ("(top level)", "slurm"): None,
    ("(top level)", "kernel"): None,
    ("[campaign]", "name"): 'name = "allkeys"',
    ("[campaign]", "description"): 'description = "every key of keys.py"',
    ("[campaign]", "order"): 'order = "blocked"',
    ("[campaign]", "seed"): "seed = 3",
    ("[campaign]", "ranks"): "ranks = [1]",
    ("[campaign]", "iterations"): "iterations = 1",
    ("[campaign]", "modes"): 'modes = ["write", "read"]',
    ("[campaign]", "timeout"): "timeout = 60",
    ("[campaign]", "env"): None,
    ("[campaign]", "lustre"): None,
    ("[campaign.env]", "NAME"): 'IOK_TEST_DIR = "{rundir}/x"',
    ("[campaign.lustre]", "stripe_count"): "stripe_count = 1",
    ("[campaign.lustre]", "stripe_size"): 'stripe_size = "1M"',
    ("[campaign.lustre]", "required"): "required = false",
    ("[slurm]", "nodes"): "nodes = 1",
    ("[slurm]", "ntasks-per-node"): "ntasks-per-node = 4",
    ("[slurm]", "partition"): 'partition = "debug"',
    ("[slurm]", "account"): 'account = "m1234"',
    ("[slurm]", "qos"): 'qos = "normal"',
    ("[slurm]", "constraint"): 'constraint = "cpu"',
    ("[slurm]", "time"): 'time = "00:10:00"',
    ("[slurm]", "prelude"): 'prelude = ["module list"]',
    ("[slurm]", "sbatch"): 'sbatch = { mail-type = "END" }',
    ("[slurm]", "srun"): 'srun = ["--cpu-bind=cores"]',
    ("[slurm]", "mpi"): 'mpi = "pmix"',
    ("[[kernel]]", "name"): 'name = "btio"',
    ("[[kernel]]", "label"): 'label = "btio-small"',
    ("[[kernel]]", "backends"): 'backends = "all"',
    ("[[kernel]]", "exclude"): 'exclude = ["null"]',
    ("[[kernel]]", "ranks"): "ranks = [1, 4]",
    ("[[kernel]]", "iterations"): "iterations = 2",
    ("[[kernel]]", "modes"): 'modes = ["write"]',
    ("[[kernel]]", "timeout"): "timeout = 30",
    ("[[kernel]]", "options"): 'options = { grid = "8,8,8" }',
    ("[[kernel]]", "sweep"): "sweep = { dumps = [1, 2] }",
    ("[[kernel]]", "compute"): "compute = [0, 0.01]",
    ("[[kernel]]", "async"): "async = [false]",
    ("[[kernel]]", "backend"): None,
    ("[[kernel]]", "input"): 'input = "inputbt.data"',
    ("[[kernel]]", "env"): None,
    ("[[kernel]]", "lustre"): None,
    ("[kernel.backend.NAME]", "OPTION"): "seed = 7",
    ("[kernel.env]", "NAME"): 'IOK_TEST_MODE = "{mode}"',
    ("[kernel.lustre]", "stripe_count"): "stripe_count = 2",
    ("[kernel.lustre]", "stripe_size"): "stripe_size = 2097152",
    ("[kernel.lustre]", "required"): "required = false",
    ("(top level)", "mix"): None,
    ("[[mix]]", "label"): 'label = "pair"',
    ("[[mix]]", "iterations"): "iterations = 4",
    ("[[mix]]", "start"): "start = [0, 1.5]",
    ("[[mix]]", "sweep"): "sweep = {}",
    ("[[mix]]", "timeout"): "timeout = 30",
    ("[[mix]]", "member"): None,
    # two members: the placeholder's line, then a second member
    ("[[mix.member]]", "KEY"): 'name = "btio"\nbackends = ["null"]\n'
    '[[mix.member]]\nname = "btio"\nbackends = ["mpiio"]',
    # a tune file's tables (tune_text below)
    ("(top level)", "tune"): None,
    ("[tune]", "trials"): "trials = 4",
    ("[tune]", "minutes"): "minutes = 2.5",
    ("[tune]", "repeats"): "repeats = 2",
    ("[tune]", "noise"): "noise = 0.2",
    ("[tune]", "confirm"): "confirm = 6",
    ("[tune]", "cut"): "cut = 3",
    ("[tune]", "seed"): "seed = 9",
    ("[tune]", "sampler"): 'sampler = "grid"',
    ("[tune]", "objective"): 'objective = "io"',
    ("[tune]", "space"): None,
    ("[tune.space]", "SETTING"): 'transfer = ["collective", "independent"]',
}
TUNE_TABLES = ("[tune]", "[tune.space]")


def file_text(tables, extra=None, head=()):
    """`head`, then each table with every key keys.py declares for it, in
    keys.py's order; `extra` = (table, line) adds a line to a table."""
    out = list(head)
    for table in tables:
        out.append(table.replace("NAME", "mpiio"))
        out += [VALUES[(k.table, k.name)] for k in keys.KEYS if k.table == table]
        if extra and extra[0] == table:
            out.append(extra[1])
    return "\n".join(line for line in out if line) + "\n"


def campaign_text(extra=None):
    """A campaign file: every table but the top level and a tune file's."""
    skip = ("(top level)", *TUNE_TABLES)
    return file_text([t for t in keys.TABLES if t not in skip], extra)


def test_every_declared_key_has_a_value_here():
    assert set(VALUES) == {(k.table, k.name) for k in keys.KEYS}


# a BTIO input file the binary's --check reads (mode, method, dumps, grid, dir)
INPUTBT = "w\n0\n2\n16 16 16\n.\n"


def test_a_campaign_with_every_declared_key_loads(tmp_path, inv):
    (tmp_path / "inputbt.data").write_text(INPUTBT)
    path = tmp_path / "c.toml"
    path.write_text(campaign_text())
    c = spec.load(path, inv)
    assert c.name == "allkeys" and c.description == "every key of keys.py"
    assert (c.order, c.seed) == ("blocked", 3)
    mpiio = [x for x in c.cases if x.backend == "mpiio"]
    assert {x.ranks for x in mpiio} == {1, 4} and {x.iterations for x in mpiio} == {2}
    assert ("seed", "7") in mpiio[0].args and mpiio[0].label == "btio-small"
    assert {dict(x.args).get("compute") for x in mpiio} == {False, "0.01"}
    assert dict(mpiio[0].env) == {"IOK_TEST_DIR": "{rundir}/x", "IOK_TEST_MODE": "{mode}"}
    assert mpiio[0].lustre_settings["stripe_count"] == 2
    assert "null" not in {x.backend for x in c.cases}
    assert c.slurm.mpi == "pmix" and c.slurm.ntasks_per_node == 4
    (mix,) = [x for x in c.cases if x.kernel == "mix"]
    assert mix.label == "pair" and mix.mix_iterations == 4 and mix.start == (0, 1.5)
    assert mix.backend == "null+mpiio" and mix.timeout == 30


@pytest.mark.parametrize(
    "table, line, named",
    [
        ("[campaign]", "ranks_per_node = 2", "'ranks_per_node'"),
        ("[[kernel]]", "backends_all = true", "'backends_all'"),
        ("[slurm]", "node = 2", "'node'"),
        ("[campaign.lustre]", "stripes = 2", "'stripes'"),
    ],
)
def test_an_undeclared_key_is_refused_by_name(tmp_path, inv, table, line, named):
    (tmp_path / "inputbt.data").write_text("")
    path = tmp_path / "c.toml"
    path.write_text(campaign_text((table, line)))
    with pytest.raises(spec.CampaignError) as e:
        spec.load(path, inv)
    assert f"unknown key {named}" in str(e.value)


def tune_text(extra=None):
    """A tune file: one block of one case, and every [tune] key."""
    block = '[[kernel]]\nname = "btio"\nbackends = ["mpiio"]\noptions = { grid = "8,8,8" }'
    return file_text(TUNE_TABLES, extra, head=[block])


def test_a_tune_file_with_every_declared_key_loads(tmp_path, inv):
    path = tmp_path / "t.toml"
    path.write_text(tune_text())
    t = tune_spec.load(path, inv)
    assert (t.trials, t.minutes, t.repeats, t.noise) == (4, 2.5, 2, 0.2)
    assert (t.confirm, t.cut, t.seed, t.sampler) == (6, 3, 9, "grid")
    assert t.space == {"transfer": ["collective", "independent"]}


def test_an_undeclared_tune_key_is_refused_by_name(tmp_path, inv):
    path = tmp_path / "t.toml"
    path.write_text(tune_text(("[tune]", "budget = 3")))
    with pytest.raises(spec.CampaignError) as e:
        tune_spec.load(path, inv)
    assert "budget: unknown key" in str(e.value) and "t.toml line" in str(e.value)
