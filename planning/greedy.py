"""TVM USMP's greedy algorithms (``src/tir/usmp/algo/greedy.cc``).

Buffers are sorted, then each is placed just past the highest end of the
already placed buffers it conflicts with in the first candidate pool where it
fits (``after_conflicts``): gaps below are never reused, which is what makes
these planners fast and simple, and what the default ``best_fit`` improves on.

Unlike TVM, the size limit is checked on the final offset of each pool (TVM
can re-admit a pool it had rejected and overlap conflicting buffers) and the
offset is aligned to this buffer's alignment in that pool.
"""

from __future__ import annotations

from usmp.planning.model import Plan, Problem
from usmp.planning.placement import Indexed, decode


def _plan(ix: Indexed, order: list[int], name: str) -> Plan:
    pools, offsets = decode(ix, order, "after_conflicts")
    return Plan(ix.placements(pools, offsets), algorithm=name)


def greedy_by_size(problem: Problem) -> Plan:
    """Largest first; ties: more conflicts first, then by name."""
    ix = Indexed.of(problem)
    order = sorted(
        range(len(ix.names)),
        key=lambda i: (-ix.sizes[i], -len(ix.neighbours[i]), ix.names[i]),
    )
    return _plan(ix, order, "greedy_by_size")


def greedy_by_conflicts(problem: Problem) -> Plan:
    """Most conflicts first; ties: larger first, then by name."""
    ix = Indexed.of(problem)
    order = sorted(
        range(len(ix.names)),
        key=lambda i: (-len(ix.neighbours[i]), -ix.sizes[i], ix.names[i]),
    )
    return _plan(ix, order, "greedy_by_conflicts")
