# SPDX-License-Identifier: BSD-3-Clause
"""The machine in every figure (issue 51): the record's environment says how
many cores each node gives the run (online CPUs, the union of the ranks'
affinity masks, a cgroup quota) and whether the ranks outnumber them; the
report's headline lines and a mix's slowdown lines say so when they do. A
"58x" tuning gain was once mostly 16 ranks fighting over 2 cores.

Premises are built exactly, whatever mpiexec's binding: OpenMPI binds each
of 2 ranks to a core of its own and rebinds a job started under `taskset`
(a `taskset -c 0 mpiexec -n 2` job still gets both cores), so the masks are
set per rank (`mpiexec -n N taskset -c LIST iokernels ...`), after the
launcher's binding."""

import os
import re
import subprocess
import uuid
from pathlib import Path

from conftest import BIN, MPIEXEC, Run
from declared import missing, not_here

# the null backend: the run's figures, no file I/O to wait for
NCBENCH = ["ncbench", "--backend", "null"]
HEADLINE = re.compile(r"^write  \./testfn\.null: .* requests as executed(.*)$", re.M)


def online_cpus():
    text = Path("/sys/devices/system/cpu/online").read_text().strip()
    n = 0
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def launch(np_, args, cwd, prefix=(), shell_first=None):
    """iokernels ARGS on np_ ranks, each rank started through `prefix`
    (`taskset -c 0`); shell_first: a shell line run before mpiexec, in the
    same process (joining a cgroup)."""
    json_path = Path(cwd) / "run.jsonl"
    cmd = [str(MPIEXEC), "-n", str(np_), *prefix, str(BIN), *args, "--json", str(json_path)]
    if shell_first:
        cmd = ["sh", "-c", shell_first + ' && exec "$@"', "sh", *cmd]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
    r = Run(proc, json_path)
    assert r.rc == 0, (r.out, r.err)
    return r


def headline(out):
    """The write pass's headline line of a report."""
    m = HEADLINE.search(out)
    assert m, out
    return m.group(0)


def node(r):
    env = r.record["environment"]
    assert len(env["node_cores"]) == 1, env["node_cores"]
    return env, env["node_cores"][0]


def test_four_ranks_on_two_cores_are_oversubscribed(tmp_path):
    """Each rank's mask the CPUs 0 and 1: the node gives the run 2 cores."""
    assert online_cpus() >= 2, "premise: two CPUs online"
    r = launch(4, NCBENCH, tmp_path, prefix=["taskset", "-c", "0,1"])
    env, n = node(r)
    assert n["affinity_cpus"] == 2 and n["online_cpus"] == online_cpus(), n
    assert n["cgroup_cpus"] is None or n["cgroup_cpus"] >= 2, f"premise: no quota below 2: {n}"
    assert n["ranks"] == 4 and n["usable_cores"] == 2, n
    assert env["usable_cores_min"] == 2 and env["oversubscribed"] is True, env
    assert n["host"] == env["hostnames"][0]
    assert n["hw_threads_per_core"] >= 1
    assert headline(r.out).endswith("; oversubscribed (4 ranks on 2 cores)"), headline(r.out)
    assert re.search(r"^cores +: 2 usable for 4 ranks on .*: OVERSUBSCRIBED", r.out, re.M), r.out


def test_four_ranks_as_launched_on_this_machine(tmp_path):
    """No mask of ours: what mpiexec gives (OpenMPI binds no rank of an
    oversubscribed job). On a 2-core machine: oversubscribed, 4 on 2."""
    r = launch(4, NCBENCH, tmp_path)
    env, n = node(r)
    online = online_cpus()
    assert n["online_cpus"] == online, n
    quota = n["cgroup_cpus"]
    want = min(online, n["affinity_cpus"], *([-int(-quota // 1)] if quota else []))
    assert n["usable_cores"] == want, n
    assert env["oversubscribed"] is (4 > want), env
    if online == 2 and quota is None:  # this machine (2 cores): the case of the issue
        assert n["affinity_cpus"] == 2, n
        assert headline(r.out).endswith("; oversubscribed (4 ranks on 2 cores)"), headline(r.out)


def test_two_ranks_on_two_cores_say_nothing(tmp_path):
    assert online_cpus() >= 2, "premise: two CPUs online"
    r = launch(2, NCBENCH, tmp_path)
    env, n = node(r)
    assert n["cgroup_cpus"] is None or n["cgroup_cpus"] >= 2, f"premise: no quota below 2: {n}"
    assert n["ranks"] == 2 and n["usable_cores"] >= 2, n
    assert env["oversubscribed"] is False, env
    assert "oversubscribed" not in r.out.lower(), r.out
    assert headline(r.out).endswith("requests as executed"), headline(r.out)


def test_one_core_by_affinity(tmp_path):
    """Both ranks bound to CPU 0 after the launcher's binding: 1 usable
    core, though the machine has more online."""
    assert online_cpus() >= 2, "premise: two CPUs online"
    r = launch(2, NCBENCH, tmp_path, prefix=["taskset", "-c", "0"])
    env, n = node(r)
    assert n["affinity_cpus"] == 1 and n["online_cpus"] == online_cpus(), n
    assert n["usable_cores"] == 1 and env["usable_cores_min"] == 1, n
    assert env["oversubscribed"] is True, env
    assert headline(r.out).endswith("; oversubscribed (2 ranks on 1 core)"), headline(r.out)


def _cpu_cgroup():
    """A fresh cgroup with a quota of one CPU (v1 cpu controller or v2
    cpu.max) and the shell line that joins it; None when this machine has
    neither."""
    if os.geteuid() != 0:
        missing("root", "cannot make a cgroup with a CPU quota")
    name = f"iok-test-{uuid.uuid4().hex[:8]}"
    v1 = Path("/sys/fs/cgroup/cpu")
    if (v1 / "cpu.cfs_quota_us").exists():
        g = v1 / name
        g.mkdir()
        (g / "cpu.cfs_period_us").write_text("100000")
        (g / "cpu.cfs_quota_us").write_text("100000")
        return g
    v2 = Path("/sys/fs/cgroup")
    control = v2 / "cgroup.subtree_control"
    if control.exists() and "cpu" in control.read_text().split():
        g = v2 / name
        g.mkdir()
        (g / "cpu.max").write_text("100000 100000")
        return g
    return None


def test_cgroup_quota_of_one_cpu(tmp_path):
    """The job in a cgroup whose quota is one CPU (100 ms per 100 ms): 1
    usable core, whatever the masks. The parsing of cpu.max (v2) and of
    cfs_quota_us (v1) under planted trees: tests/unit/test_cores.c."""
    g = _cpu_cgroup()
    if g is None:
        not_here("no cgroup v1 cpu controller and no cgroup v2 with cpu enabled")
    try:
        r = launch(2, NCBENCH, tmp_path, shell_first=f"echo $$ > {g}/cgroup.procs")
    finally:
        g.rmdir()  # its processes ended with the job
    env, n = node(r)
    assert n["cgroup_cpus"] == 1.0, n
    assert n["affinity_cpus"] >= 1 and n["usable_cores"] == 1, n
    assert env["oversubscribed"] is True, env
    assert headline(r.out).endswith("; oversubscribed (2 ranks on 1 core)"), headline(r.out)


def test_mix_members_sharing_a_node_say_so(tmp_path):
    """Two members of 2 ranks on the CPUs 0 and 1: the slowdown lines say
    that the members share the node's 2 cores; a member's record counts its
    own ranks alone (the other sleeps) and the whole job's together, and
    its report's headline says so together."""
    assert online_cpus() >= 2, "premise: two CPUs online"
    parts = ["--part", "2:ncbench", "--backend", "null"]
    r = launch(
        4,
        ["mix", "--iterations", "1", "--member-dirs", *parts, *parts],
        tmp_path,
        prefix=["taskset", "-c", "0,1"],
    )
    for i in (1, 2):
        assert re.search(
            rf"^member {i} ncbench: members share the node's 2 cores \(.*members 1, 2, 4 ranks\): "
            r"oversubscribed \(4 ranks on 2 cores\)",
            r.out,
            re.M,
        ), r.out[-3000:]
    for m in r.record["members"]:
        assert {run["mode"] for run in m["runs"]} == {"alone", "together"}, m["runs"]
        for run in m["runs"]:
            env = run["record"]["environment"]
            together = run["mode"] == "together"
            assert [n["ranks"] for n in env["node_cores"]] == [4 if together else 2], env
            assert env["usable_cores_min"] == 2 and env["oversubscribed"] is together, env
    for i in (1, 2):
        for mode, says in (("alone", False), ("together", True)):
            section = r.out.split(f"=== mix member {i} ncbench, iteration 1, {mode} ===")[1]
            line = headline(section.split("\n===")[0])
            assert line.endswith("; oversubscribed (4 ranks on 2 cores)") is says, (mode, line)
