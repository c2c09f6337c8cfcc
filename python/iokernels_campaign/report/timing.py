# SPDX-License-Identifier: BSD-3-Clause
"""When the runs of a comparison ran. A machine drifts: two series whose
runs sit in separate stretches of time differ by whatever changed between
the stretches, and the rank test (verdict.py) cannot tell that from a
difference between the series. So a comparison names a winner only where
its two sides' runs interleave in time; otherwise it is "untested", with
the reason:

- the sides' spans of time do not overlap (two stores run one after the
  other, two campaigns): "the sides ran at different times (A 10:02-10:14,
  B 10:15-10:27)";
- they overlap but each side's runs come in one stretch (a blocked
  campaign: each case's iterations back to back): "blocked in time".

Interleaved means the runs alternate: ordered by start, the sequence of
sides changes at least min(n_a, n_b) - 1 times (twice at the least). Runs
in rounds (each round one run of each side, in any order) change side at
least once a round; a blocked pair changes once."""

import time

FIX = "iokernels-campaign run A.toml B.toml --interleave --db X"


def _times(runs):
    """(start, end) in seconds since the epoch of each run that says when it ran."""
    out = []
    for r in runs:
        start = r.get("started")
        if start is None or start != start:
            continue
        took = r.get("elapsed")
        out.append((float(start), float(start) + (took if took and took == took else 0.0)))
    return out


def clock(t, other):
    """hh:mm UTC; with the month and day where the spans fall on different days."""
    same_day = time.gmtime(t)[:3] == time.gmtime(other)[:3]
    return time.strftime("%H:%M" if same_day else "%m-%d %H:%M", time.gmtime(t))


def span_text(ta, tb, name_a="A", name_b="B"):
    a0, a1 = min(s for s, _ in ta), max(e for _, e in ta)
    b0, b1 = min(s for s, _ in tb), max(e for _, e in tb)
    lo = min(a0, b0)
    return f"{name_a} {clock(a0, lo)}-{clock(a1, lo)}, {name_b} {clock(b0, lo)}-{clock(b1, lo)} UTC"


def switches(ta, tb):
    """How often the side changes along the runs ordered by start. Runs that
    started at the same moment (copies of a store) are not apart in time:
    they alternate."""
    keyed = []
    for side, times in ((0, ta), (1, tb)):
        seen = {}
        for s, _ in times:
            seen[s] = seen.get(s, -1) + 1
            keyed.append((s, seen[s], side))
    seq = [side for _, _, side in sorted(keyed)]
    return sum(x != y for x, y in zip(seq, seq[1:], strict=False))


ORDER_FIX = '[campaign] order = "interleaved" (the default)'


def apart(runs_a, runs_b, name_a="A", name_b="B", one_campaign=False):
    """None when the two sides' runs interleave in time (or a side does not
    say when it ran: JSON Lines records, whose start is not kept); else the
    reason no winner is named, starting with "untested: ". one_campaign:
    series of one report (the report's fastest line), whose fix is the
    campaign's order, not two files run together."""
    ta, tb = _times(runs_a), _times(runs_b)
    if len(ta) < len(runs_a) or len(tb) < len(runs_b) or not ta or not tb:
        return None
    a0, a1 = min(s for s, _ in ta), max(e for _, e in ta)
    b0, b1 = min(s for s, _ in tb), max(e for _, e in tb)
    if one_campaign and (a1 <= b0 or b1 <= a0):
        return (
            f"untested: blocked in time ({span_text(ta, tb, name_a, name_b)}); "
            f"run the campaign with {ORDER_FIX}"
        )
    if a1 <= b0 or b1 <= a0:
        return (
            f"untested: the sides ran at different times ({span_text(ta, tb, name_a, name_b)}); "
            f"interleave them: {FIX}"
        )
    if switches(ta, tb) < max(2, min(len(ta), len(tb)) - 1):
        return (
            f"untested: blocked in time ({name_a}'s and {name_b}'s runs each in one stretch, "
            f"{switches(ta, tb)} alternation(s) in {len(ta) + len(tb)} runs); run the campaign "
            f"with {ORDER_FIX}"
        )
    return None
