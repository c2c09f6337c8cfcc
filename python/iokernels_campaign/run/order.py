# SPDX-License-Identifier: BSD-3-Clause
"""The order in which a campaign's runs happen. A machine drifts (another
job, a file system filling, a CPU hog switched on): two cases whose runs
sit in different windows of time differ by the drift, which no test on
their figures can tell from a difference between them.

"interleaved" (the default): the campaign runs in rounds; round r runs
iteration r of every case that has it, each case once. The order inside a
round is a row of a Williams design (the cyclic Latin square whose first
row is 0, 1, n-1, 2, n-2, ...; with its mirror rows for an odd number of
cases): over the design's rows every case is as often first as any other,
and follows every other case equally often. Which case is which column and
which row a round takes are drawn from the seed, so the same seed gives the
same order (a resumed session, a batch script written again).

"blocked": each case's iterations back to back, case after case (the order
of campaigns before rounds: on request, to reproduce one)."""

import random
import secrets

ORDERS = ("interleaved", "blocked")


def draw_seed():
    """A seed for a campaign that names none (recorded in the store)."""
    return secrets.randbelow(2**31)


def williams(n):
    """The rows of a Williams design for n treatments (n rows when n is
    even, 2n when odd): lists of 0..n-1."""
    if n <= 1:
        return [list(range(n))]
    first, lo, hi = [0], 1, n - 1
    while len(first) < n:
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    rows = [[(x + i) % n for x in first] for i in range(n)]
    if n % 2:
        rows += [list(reversed(r)) for r in rows]
    return rows


def schedule(iterations, order, seed):
    """[(round, item index, iteration)] in the order they run: iterations is
    each item's (case's) iteration count. Blocked: round = iteration, item
    after item. Interleaved: round r holds iteration r of every item that
    has one, in the order of one row of the shuffled Williams design."""
    n = len(iterations)
    if order == "blocked":
        return [(it, i, it) for i in range(n) for it in range(1, iterations[i] + 1)]
    rng = random.Random(seed)
    label = list(range(n))
    rng.shuffle(label)  # which item is which treatment of the design
    rows = williams(n)
    out = []
    pending = []
    for r in range(1, max(iterations, default=0) + 1):
        if not pending:  # every row once before any row twice
            pending = list(range(len(rows)))
            rng.shuffle(pending)
        row = rows[pending.pop()]
        out += [(r, label[t], r) for t in row if iterations[label[t]] >= r]
    return out


def balance(runs):
    """(how often each item runs first in its round, {(item before, item):
    count}) of a schedule: the check that no item is always first or always
    after the same neighbour (the tests and `run --dry-run` use it)."""
    first, follows, last_round, prev = {}, {}, None, None
    for rnd, item, _ in runs:
        if rnd != last_round:
            first[item] = first.get(item, 0) + 1
            last_round, prev = rnd, None
        if prev is not None:
            follows[prev, item] = follows.get((prev, item), 0) + 1
        prev = item
    return first, follows
