# SPDX-License-Identifier: BSD-3-Clause
"""bench scripts' --results FILE (bench/resultfile.py): the page holds what
the script printed under a header with date, commit, machine, MPI, MPI-IO
layer and load; a file no bench script wrote is never replaced; the
results index (scripts/gen-reference) lists every table and goes stale
when one is added."""

import re
import subprocess
import sys

from conftest import BIN, GEN, REPO

BENCH = REPO / "bench" / "e3sm_gen"  # the quickest: one process, about 1 s
ARGS = ["--cases", "i:procs=16", "--records", "1"]


def bench(*args, cwd=None):
    return subprocess.run(
        [sys.executable, str(BENCH), *ARGS, *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def test_results_page_holds_the_printed_table_and_its_context(tmp_path):
    page = tmp_path / "e3sm_gen.md"
    out = bench("--results", str(page))
    assert out.returncode == 0, out.stderr
    printed = out.stdout.splitlines()
    assert printed[-1] == f"results written to {page}"
    text = page.read_text()
    header = dict(re.findall(r"^\| ([^|]+?) \| (.*) \|$", text, re.M))
    assert header["command"] == f"`bench/e3sm_gen {' '.join(ARGS)} --results {page}`"
    assert re.fullmatch(r"20\d\d-\d\d-\d\d \d\d:\d\d UTC", header["date"])
    assert re.fullmatch(r"`[0-9a-f]{7,}(-dirty)?`|`\S+-g[0-9a-f]+(-dirty)?`", header["commit"])
    assert re.search(r"\d+ cores, [\d.]+ GiB memory, Linux ", header["machine"])
    assert re.match(r"(Open MPI|MPICH|Intel|Cray) ", header["MPI"]), header["MPI"]
    # as the run's report words it: OpenMPI's io component, or MPICH's ROMIO
    assert re.match(r"OpenMPI io \w+|.* ROMIO", header["MPI-IO layer"]), header["MPI-IO layer"]
    load = r"[\d.]+ [\d.]+ [\d.]+"
    assert re.fullmatch(rf"{load} before, {load} after", header["load average (1, 5, 15 min)"])
    body = text.split("```text\n", 1)[1].rsplit("\n```", 1)[0]
    assert body.splitlines() == printed[:-1]  # exactly what was printed
    assert "i:procs=16" in body and "h0" in body


def test_a_page_a_bench_wrote_is_replaced_another_file_never(tmp_path):
    page = tmp_path / "mine.md"
    page.write_text("<!-- bench results: written by bench/btio --results -->\n\n# old\n")
    assert bench("--results", str(page)).returncode == 0
    assert "# E3SM decompositions generated at scale" in page.read_text()
    theirs = tmp_path / "notes.md"
    theirs.write_text("# my notes\n")
    out = bench("--results", str(theirs))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == (
        f"bench/e3sm_gen: --results {theirs} exists and no bench script wrote it: "
        "remove it or name another"
    )
    assert theirs.read_text() == "# my notes\n"
    out = bench("--results", str(tmp_path / "missing" / "x.md"))
    assert out.returncode == 2 and "does not exist" in out.stderr
    assert len(out.stderr.splitlines()) == 1 and "Traceback" not in out.stderr


def test_results_index_lists_every_table_and_goes_stale(tmp_path):
    results = tmp_path / "docs" / "results"
    results.mkdir(parents=True)
    assert bench("--results", str(results / "e3sm_gen.md")).returncode == 0
    gen = [sys.executable, str(GEN), "--bin", str(BIN)]
    assert subprocess.run([*gen, "--out", str(tmp_path)], capture_output=True).returncode == 0
    index = (results / "index.md").read_text()
    assert "- [E3SM decompositions generated at scale](e3sm_gen.md)" in index
    (results / "zz.md").write_text("# Another table\n")
    out = subprocess.run([*gen, "--check", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        "docs/results/index.md is stale: run scripts/gen-reference --bin build/iokernels --out ."
    ]
