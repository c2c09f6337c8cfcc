# SPDX-License-Identifier: BSD-3-Clause
"""Every range `--help --json` declares is the one the parser enforces.

For each option with a min or a max in any kernel's `--help --json` (each
table once: the core's and a backend's options are the same table under
every kernel), the binary is asked with `--check` at min-1 and max+1, which
it must refuse (exit 2, one error line naming the option and the range the
JSON says), and at min and max, which it must not refuse for the range. A
table entry that disagrees with the parser (a bound declared but not
enforced, or enforced at another value) fails here; the planted entry below
shows that it would."""

import concurrent.futures
import json
import subprocess
import tempfile

from conftest import BIN, run_plain


def _json(*args):
    return json.loads(subprocess.run([str(BIN), *args], capture_output=True, check=True).stdout)


def ranged_options():
    """(kernel, option dict) for every option with a range, each table once."""
    seen, out = set(), []
    for k in _json("--list", "--json")["kernels"]:
        for o in _json(k["name"], "--help", "--json")["options"]:
            key = (o["group"] if o["group"] != k["name"] else k["name"], o["name"])
            if (o["min"] is not None or o["max"] is not None) and key not in seen:
                seen.add(key)
                out.append((k["name"], o))
    return out


def _check(kernel, name, value):
    """(exit code, error lines) of `iokernels KERNEL --check --NAME VALUE`,
    in an empty folder."""
    with tempfile.TemporaryDirectory(prefix="iok-range-") as d:
        p = subprocess.run(
            [str(BIN), kernel, "--check", f"--{name}", value],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=d,
        )
    return p.returncode, [x for x in p.stderr.splitlines() if x.startswith("iokernels:")]


def _shown(o, x):
    if o["type"] == "double":
        return repr(float(x))
    return ",".join([str(x)] * 3) if o["type"] == "int3" else str(x)


def _range_words(o):
    lo, hi = (None if b is None else f"{b:g}" for b in (o["min"], o["max"]))
    text = (
        f"{lo} to {hi}"
        if lo is not None and hi is not None
        else (f"at least {lo}" if lo is not None else f"at most {hi}")
    )
    return ("three integers, each " if o["type"] == "int3" else "") + text


def disagreements(kernel, o, ask=_check):
    """What the binary does against what option `o` (its --help --json
    entry) declares: a list of lines, empty when they agree."""
    step = 0.001 if o["type"] == "double" else 1
    probes = []
    for bound, outside in ((o["min"], -step), (o["max"], step)):
        if bound is not None:
            probes += [(bound + outside, True), (bound, False)]
    bad = []
    words = f"--{o['name']}" + (f" (-{o['short']})" if o["short"] else "")
    for value, refused in probes:
        v = _shown(o, value)
        rc, errs = ask(kernel, o["name"], v)
        said = f"{kernel} --{o['name']} {v}: exit {rc}, {errs}"
        if refused:
            ok = rc == 2 and len(errs) == 1 and f"{words} takes {_range_words(o)}," in errs[0]
            if not ok:
                bad.append(f"not refused as declared ({_range_words(o)}): {said}")
        elif any(f"{words} takes" in e for e in errs):
            bad.append(f"refused at its declared bound: {said}")
    return bad


def test_every_declared_range_is_the_parsers():
    options = ranged_options()
    # the ranges issue #37 named as missing from the campaign tool's copy
    names = {(k, o["name"]) for k, o in options}
    for want in [("ceiling-samples"), ("records"), ("stride"), ("subfiles"), ("io-ranks")]:
        assert any(n == want for _, n in names), want
    assert ("amrex", "nlevs") in names and ("chombo", "ncomp") in names
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        found = list(pool.map(lambda ko: disagreements(*ko), options))
    bad = [line for lines in found for line in lines]
    print(f"{len(options)} ranged options checked at their bounds")
    assert len(options) >= 25, [o["name"] for _, o in options]
    assert not bad, "\n".join(bad)


def test_a_planted_wrong_entry_is_caught():
    """--dumps declares at least 1; a table saying at least 2 (or at most 3)
    disagrees with the parser, and the comparison says so."""
    (_, dumps) = next((k, o) for k, o in ranged_options() if o["name"] == "dumps")
    assert disagreements("btio", dumps) == []
    wrong_min = {**dumps, "min": 2}
    found = disagreements("btio", wrong_min)
    assert any("not refused as declared (at least 2)" in x for x in found), found
    wrong_max = {**dumps, "max": 3}
    found = disagreements("btio", wrong_max)
    assert any("--dumps 4: exit 0" in x for x in found), found


def test_check_creates_nothing_and_agrees_with_a_run(tmp_path):
    """--check plans and writes nothing; its refusal is the run's line."""
    ok = subprocess.run(
        [str(BIN), "btio", "--check", "--grid", "16,16,16"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert ok.returncode == 0 and "options OK for 1 rank (configured and planned" in ok.stdout
    assert list(tmp_path.iterdir()) == []
    args = ["btio", "--grid", "16,16,16", "--agree-every", "0"]
    run = subprocess.run([str(BIN), *args], capture_output=True, text=True, cwd=tmp_path)
    check = subprocess.run(
        [str(BIN), *args, "--check"], capture_output=True, text=True, cwd=tmp_path
    )
    assert run.returncode == check.returncode == 2
    assert run.stderr == check.stderr and "--agree-every takes at least 1" in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_check_ranks_applies_the_rank_rules_without_the_ranks(tmp_path):
    def check(*args):
        p = subprocess.run(
            [str(BIN), "btio", "--check", *args], capture_output=True, text=True, cwd=tmp_path
        )
        return p.returncode, p.stdout + p.stderr

    assert _json("btio", "--help", "--json")["ranks"] == "square"
    assert _json("amrex", "--help", "--json")["ranks"] == "any"
    rc, out = check("--ranks", "3")
    assert rc == 2 and "btio needs a square number of processes" in out and "not 3" in out
    rc, out = check("--ranks", "16", "--grid", "8,8,8")
    assert rc == 2 and "grid 8x8x8 is too small for 16 processes" in out
    rc, out = check("--ranks", "16")
    assert rc == 0 and "rank rules OK for 16 ranks (not planned" in out
    rc, out = check("--ranks", "1,4,9")  # several counts, one call; planned at the job's 1
    assert rc == 0 and "OK for 1,4,9 ranks (configured and planned at 1" in out
    rc, out = check("--ranks", "4,12")
    assert rc == 2 and "not 12" in out
    rc, out = check("--ranks", "4,0")
    assert rc == 2 and "--ranks takes rank counts" in out
    p = subprocess.run([str(BIN), "btio", "--ranks", "4"], capture_output=True, text=True)
    assert p.returncode == 2 and "--ranks goes with --check" in p.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_ceiling_subcommands_ranges_outside(tmp_path):
    """`iokernels ceiling` has no --check (a run is its probe): its ranged
    options are asked outside their range only, refused before any I/O."""
    opts = [o for o in _json("ceiling", "--help", "--json")["options"] if o["min"] is not None]
    assert [o["name"] for o in opts] == ["samples"]
    for o in opts:
        for value in (o["min"] - 1, o["max"] + 1):
            p = subprocess.run(
                [str(BIN), "ceiling", f"--{o['name']}", str(value), "--size", "1m"],
                capture_output=True,
                text=True,
                cwd=tmp_path,
                timeout=120,
            )
            assert p.returncode == 2
            assert f"--{o['name']} takes {_range_words(o)}, not '{value}'" in p.stderr
    assert list(tmp_path.iterdir()) == []


def test_check_on_the_jobs_ranks_plans_there_and_agrees(tmp_path):
    """On N ranks --check plans at N (all ranks agree: one line, exit 2 or
    0), as the run on N ranks would; nothing is written."""
    r = run_plain(4, ["btio", "--check", "--grid", "16,16,16"], tmp_path)
    assert r.rc == 0 and "options OK for 4 ranks (configured and planned at 4" in r.out, r.err
    r = run_plain(3, ["btio", "--check"], tmp_path)
    assert r.rc == 2 and len(r.error_lines()) == 1, r.err
    assert "btio needs a square number of processes (1, 4, 9, 16, ...), not 3" in r.err
    r = run_plain(4, ["btio", "--check", "--grid", "4,4,4"], tmp_path)
    assert r.rc == 2 and len(r.error_lines()) == 1 and "too small for 4 processes" in r.err
    assert list(tmp_path.iterdir()) == []
