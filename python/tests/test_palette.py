# SPDX-License-Identifier: BSD-3-Clause
"""One colour and one order per series in every figure and table of a
report, the same words in the terminal, HTML and CSV, the scaling figure,
and verdicts only beyond the runs' spread (tied otherwise)."""

import matplotlib.colors as mcolors
from conftest import run_row
from iokernels_campaign.report import frame, palette, plots, tables, verdict
from iokernels_campaign.report.aggregate import summarize

# two kernels whose series appear in different orders and sets
CASES = [
    ("btio", "hdf5", "", 1, 100),
    ("btio", "mpiio", "independent=off", 1, 200),
    ("btio", "mpiio", "independent=on", 1, 150),
    ("btio", "hdf5", "", 4, 300),
    ("btio", "mpiio", "independent=off", 4, 500),
    ("btio", "mpiio", "independent=on", 4, 450),
    ("e3sm", "pnetcdf", "", 1, 80),
    ("e3sm", "mpiio", "", 1, 90),
    ("e3sm", "hdf5", "", 1, 70),
    ("e3sm", "pnetcdf", "", 4, 160),
    ("e3sm", "mpiio", "", 4, 180),
    ("e3sm", "hdf5", "", 4, 140),
]


def runs(iterations=1, jitter=0.0):
    out = []
    for it in range(iterations):
        for label, backend, variant, ranks, bw in CASES:
            for mode in ("write", "read"):
                f = 1 + jitter * ((it % 3) - 1)
                out.append(run_row(len(out), label, backend, variant, ranks, mode, bw * f, 1000))
    return out


def test_each_series_keeps_its_colour_and_order_in_every_figure(monkeypatch, tmp_path):
    s = summarize(runs())
    kept = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: kept.append(fig) or path)
    seen = {}
    for k in ("btio", "e3sm"):
        mine = [x for x in s if x.label == k]
        assert plots.bandwidth_vs_ranks(mine, tmp_path / f"s-{k}.png")
        fig = kept[-1]
        for ax in fig.axes:
            names = [ln.get_label() for ln in ax.lines if not ln.get_label().startswith("_")]
            assert names == palette.ordered(names), names  # the palette's order
            for ln in ax.lines:
                if ln.get_label().startswith("_"):
                    continue
                seen.setdefault(ln.get_label(), set()).add(mcolors.to_hex(ln.get_color()))
            # the ceiling as a band
            assert (
                any(
                    type(c).__name__ in ("PolyCollection", "FillBetweenPolyCollection")
                    for c in ax.collections
                )
                or "read" in ax.get_title()
            )
        stats = frame.case_stats(frame.bandwidths([r for r in runs() if r["label"] == k]))
        path = plots.kernel_figure(stats, k, tmp_path / f"k-{k}.png")
        assert path and path.exists()
    # hdf5 and mpiio appear in both kernels: one colour each, the palette's
    for name, colours in seen.items():
        assert colours == {palette.colour(name).lower()}, (name, colours)
    assert palette.colour("hdf5") != palette.colour("mpiio")
    assert palette.colour("mpiio coll") == palette.colour("mpiio indep")
    assert palette.style("mpiio coll") != palette.style("mpiio indep")


def test_the_same_series_words_in_terminal_html_and_csv():
    s = summarize(runs())
    text = tables.cases_table(s)
    assert "mpiio coll" in text and "mpiio indep" in text
    assert "independent=off" not in text and "independent=on" not in text
    bw = frame.bandwidths(runs())
    assert {"mpiio coll", "mpiio indep"} <= set(bw["series"])
    # one order: per kernel and ranks, mpiio before hdf5 (the palette's)
    btio1 = [x.series for x in s if x.label == "btio" and x.ranks == 1 and x.mode == "write"]
    assert btio1 == ["mpiio coll", "mpiio indep", "hdf5"]


def test_a_winner_only_beyond_the_runs_spread():
    # 4 runs each, 500 vs 450 with a 20% spread: tied; without spread: called
    noisy = frame.bandwidths(runs(4, jitter=0.2))
    best = frame.best(frame.case_stats(noisy), noisy)
    w = best[("btio", 4, "write")]
    assert w.series == "mpiio coll" and not w.clear and w.ties == ["mpiio indep"]
    assert w.ratio.call == "tied" and w.ratio.low < 1 < w.ratio.high
    steady = frame.bandwidths(runs(4))
    w = frame.best(frame.case_stats(steady), steady)[("btio", 4, "write")]
    assert w.clear and w.ratio.call == "higher" and w.ratio.low > 1
    # 3 runs each cannot reach p <= 0.05 however steady: untested, and says so
    three = frame.bandwidths(runs(3))
    w = frame.best(frame.case_stats(three), three)[("btio", 4, "write")]
    assert not w.clear and w.ratio.call == "untested" and "at least 4 runs" in w.ratio.text()
    # one run each is never a verdict
    one = frame.bandwidths(runs(1))
    w = frame.best(frame.case_stats(one), one)[("btio", 4, "write")]
    assert not w.clear and w.ratio.call == "untested"


def test_exact_test_interval():
    r = verdict.ratio([10, 11, 12, 13], [5, 6, 7, 8])
    assert r.call == "higher" and 1 < r.low <= r.hl <= r.high
    assert verdict.ratio([10, 11, 12, 13], [10, 11, 12, 13]).call == "tied"
    assert verdict.ratio([10, 11, 12], [5, 6, 7]).call == "untested"
    assert verdict.ratio([10], [5]).call == "untested"
    assert verdict.ratio([], [5]) is None
    assert "95% interval" in verdict.ratio([10, 11, 12, 13], [5, 6, 7, 8]).text()
    assert "Mann-Whitney" in verdict.ratio([10, 11, 12, 13], [5, 6, 7, 8]).text()
