# SPDX-License-Identifier: BSD-3-Clause
"""The verdicts' thresholds are defined once, in src/core/measure/measure.h: the
binary writes them into every record ("thresholds") and the campaign tool
reads them from there, with the old margin only for records from before."""

import re

from conftest import REPO, record_of
from iokernels_campaign.report import aggregate
from iokernels_campaign.store import record

CORE_H = REPO / "src" / "core" / "measure" / "measure.h"


def defined():
    """{name: value} of the thresholds measure.h defines."""
    text = CORE_H.read_text()
    return {
        name: float(value)
        for name, value in re.findall(
            r"#define (IOK_CEILING_MARGIN|IOK_FROM_STORAGE_FRACTION) ([0-9.]+)", text
        )
    }


def test_the_record_carries_what_core_h_defines(tmp_path):
    want = defined()
    assert set(want) == {"IOK_CEILING_MARGIN", "IOK_FROM_STORAGE_FRACTION"}
    rec = record_of(tmp_path, "btio", "--grid", "16,16,16", "--dumps", "1")
    assert rec["thresholds"] == {
        "ceiling_margin": want["IOK_CEILING_MARGIN"],
        "from_storage_fraction": want["IOK_FROM_STORAGE_FRACTION"],
    }
    assert record.ceiling_margin(rec) == want["IOK_CEILING_MARGIN"]


def literal_copies(text):
    """Lines of C that write a threshold's value as a literal."""
    return [
        line
        for line in text.splitlines()
        if re.search(r"(?<![\w.])(1\.02|0\.9|0\.5)(?![\w.])", line)
        and not line.lstrip().startswith(("/*", "*", "//"))
    ]


def test_no_c_file_copies_a_threshold():
    copies = []
    for f in [*(REPO / "src" / "core").rglob("*.c")]:
        if f.name in ("cache.c", "ceiling_judge.c"):
            copies += [f"{f.name}: {x}" for x in literal_copies(f.read_text())]
    assert copies == []
    # what the two files held before: caught
    assert literal_copies("#define MARGIN 1.02\n    n->worst_fraction >= 0.5;")


def test_python_reads_the_margin_from_the_record():
    said = {"thresholds": {"ceiling_margin": 1.10, "from_storage_fraction": 0.9}}
    row = {"ceiling_margin": record.ceiling_margin(said)}
    assert aggregate.margin_of([row]) == 1.10
    # 1.05 of the ceiling: within a margin of 1.10, above the old 1.02
    assert aggregate.fraction_text(1.05, margin=aggregate.margin_of([row])) == "1.05"
    # a record from before the field: the old margin, the one fallback
    old = {"ceiling_margin": record.ceiling_margin({"summary": {}})}
    assert old["ceiling_margin"] is None
    assert aggregate.margin_of([old]) == aggregate.MARGIN_BEFORE_RECORDS_SAID == 1.02
    assert aggregate.fraction_text(1.05, margin=aggregate.margin_of([old])) == "1.05!"
    assert aggregate.fraction_text(1.05, margin=float("nan")) == "1.05!"
