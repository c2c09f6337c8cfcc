# SPDX-License-Identifier: BSD-3-Clause
"""The report's figures, as drawn (issue 51 item 6): no caption, legend,
title or label cut at the figure's edge (each text's window extent inside
the figure), and bars of MiB/s under a ceiling of GiB/s still tall enough
to read."""

import matplotlib
import pytest
from conftest import run_row
from iokernels_campaign.report import frame, plots
from iokernels_campaign.report.aggregate import summarize
from matplotlib.patches import Rectangle

MIN_BAR_PX = 8


@pytest.fixture
def drawn(monkeypatch):
    """The figures the report's functions close, kept open for the test."""
    figs = []
    close = plots.plt.close

    def keep(fig=None):
        figs.append(fig)

    monkeypatch.setattr(plots.plt, "close", keep)
    yield figs
    for f in figs:
        close(f)


def _runs(series, ranks, bw, ceiling):
    runs, i = [], 0
    for name in series:
        backend, _, variant = name.partition(" ")
        for n in ranks:
            for mode in ("write", "read"):
                for it in range(3):
                    i += 1
                    r = run_row(i, "btio", backend, variant, n, mode, bw * (1 + 0.1 * it), ceiling)
                    runs.append(r | {"ceiling_read_bandwidth": ceiling and ceiling * 1048576.0})
    return runs


SMALL = _runs(["mpiio", "hdf5"], [1], 100.0, 3000.0)
WIDE = _runs(
    [f"mpiio cb_nodes={k} romio_cb_write=enable romio_ds_write=disable" for k in range(1, 9)],
    [1, 4, 16],
    50.0,
    None,
)


def _outside(fig):
    """Every visible text of the figure whose drawn extent leaves the figure
    (tick labels: those the axes draw, within their views)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    spare, shown = set(), set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                spare |= {id(tick.label1), id(tick.label2)}
            lo, hi = sorted(axis.get_view_interval())
            i = 0 if axis is ax.xaxis else 1
            shown |= {
                id(t)
                for t in axis.get_ticklabels(which="both")
                if lo * (1 - 1e-9) - 1e-12 <= t.get_position()[i] <= hi * (1 + 1e-9) + 1e-12
            }
    out = []
    for t in fig.findobj(matplotlib.text.Text):
        if not t.get_visible() or not t.get_text().strip():
            continue
        if id(t) in spare and id(t) not in shown:
            continue
        e = t.get_window_extent(renderer)
        if e.x0 < box.x0 - 1 or e.x1 > box.x1 + 1 or e.y0 < box.y0 - 1 or e.y1 > box.y1 + 1:
            out.append((t.get_text()[:40], [round(v) for v in e.extents]))
    return out


@pytest.mark.parametrize("runs", [SMALL, WIDE], ids=["two-backends-one-rank", "eight-long-names"])
def test_no_text_of_any_figure_is_cut(tmp_path, drawn, runs):
    stats = frame.case_stats(frame.bandwidths(runs))
    assert plots.kernel_figure(stats, "btio", tmp_path / "kernel.png")
    assert plots.draw_all(summarize(runs), tmp_path)
    assert len(drawn) >= 2  # the kernel's figure, memory (and scaling where ranks vary)
    for fig in drawn:
        assert _outside(fig) == [], fig.texts[:1]


def test_bars_far_under_the_ceiling_stay_readable(tmp_path, drawn):
    """Bars of 6 and 100 MiB/s under a ceiling of 4 GiB/s: each at least
    MIN_BAR_PX pixels tall (on a linear axis the ceiling set, under one)."""
    runs = _runs(["mpiio"], [1], 6.0, 4096.0) + [
        r | {"id": r["id"] + 1000} for r in _runs(["hdf5"], [1], 100.0, 4096.0)
    ]
    stats = frame.case_stats(frame.bandwidths(runs))
    assert plots.kernel_figure(stats, "btio", tmp_path / "kernel.png")
    (fig,) = drawn
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    bars = [
        p
        for ax in fig.axes
        for c in ax.containers
        for p in c
        if isinstance(p, Rectangle) and p.get_height() > 0
    ]
    assert len(bars) == 4  # write and read of two backends
    heights = sorted(b.get_window_extent(renderer).height for b in bars)
    assert heights[0] >= MIN_BAR_PX, heights
