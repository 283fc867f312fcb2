"""Random planning problems for the planners' tests and benchmarks (no xDSL).

``dense_problem``: many buffers live at once, as a long model's activations
are not (a few dozen) but a whole-program or multi-model plan can be:
``n`` buffers whose lifetimes (exponential, mean ``MEAN_LIFETIME`` steps) are
spread over a time line sized so that about ``live`` of them are live at any
step, with sizes from 16 B to 64 KiB (log-uniform, multiples of 16). Seeded:
the same problem on every machine.
"""

from __future__ import annotations

import random

from usmp.planning.model import Buffer, Problem

MEAN_LIFETIME = 40


def dense_problem(n: int, live: int, seed: int = 0) -> Problem:
    """``n`` buffers, about ``live`` of them live at once (see module doc)."""
    rng = random.Random(seed)
    horizon = max(1, n * MEAN_LIFETIME // max(live, 1))
    buffers = []
    for i in range(n):
        start = rng.randrange(horizon)
        length = 1 + int(rng.expovariate(1 / MEAN_LIFETIME))
        size = 16 * max(1, int(2 ** rng.uniform(0, 12)))
        buffers.append(Buffer(f"t{i}", size, start, start + length))
    return Problem(tuple(buffers))


def max_live(problem: Problem) -> int:
    """The most buffers (with a size) live at one time."""
    events = sorted(
        (t, d)
        for b in problem.buffers
        if b.size and b.start < b.end
        for t, d in ((b.start, 1), (b.end, -1))
    )
    most = count = 0
    for _, d in events:
        count += d
        most = max(most, count)
    return most
