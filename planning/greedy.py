"""TVM USMP's greedy algorithms (``src/tir/usmp/algo/greedy.cc``).

Buffers are sorted as TVM sorts them, then each is placed just past the
highest end of the already placed buffers it conflicts with in the first
candidate pool where it fits (``after_conflicts``): gaps below are never
reused, which is what makes these planners fast and simple, and what the
default ``best_fit`` improves on.

As in TVM: ``greedy_by_size`` orders by size, then number of conflicts;
``greedy_by_conflicts`` by number of conflicts, then size; both descending,
remaining ties by name *descending* (TVM compares ``name_a > name_b``). A
buffer's number of conflicts is the length of TVM's conflict list: the
buffers live with it plus those it lists itself (``Buffer.conflicts``, a
self-conflict included), not those that only list it. Each conflicting
buffer's end is rounded up to *that* buffer's alignment before the highest is
taken (TVM's ``round_up_to_byte_alignment(next_offset, conflict.alignment)``).

Unlike TVM, on purpose (TVM's plans can be invalid there): a conflict counts
from either side (TVM only looks at the list of the buffer being placed, so
two buffers of which only one lists the other can overlap); the offset is
also aligned to the buffer's own alignment; the size limit is checked on the
final offset of each pool (TVM can re-admit a pool it had rejected for one
conflict when a later conflict lies in the same pool, and overlap the two).
On TVM's own unit cases (``tests/test_planning_tvm.py``) the plans are TVM's
wherever TVM's are valid.
"""

from __future__ import annotations

from dataclasses import replace

from usmp.planning.model import Plan, Problem
from usmp.planning.placement import Indexed, decode


def tvm_conflict_counts(problem: Problem) -> list[int]:
    """Length of each buffer's conflict list as TVM's analysis builds it."""
    live = Problem(
        tuple(replace(b, conflicts=frozenset()) for b in problem.buffers),
        problem.pools,
    ).conflict_graph()
    return [len(live[b.name] | b.conflicts) for b in problem.buffers]


def tvm_order(ix: Indexed, by: str) -> list[int]:
    """TVM's sort: ``by`` "size" (size, conflicts) or "conflicts"
    (conflicts, size), descending; ties by name, descending."""
    counts = tvm_conflict_counts(ix.problem)
    sizes = ix.sizes
    by_name = sorted(range(len(ix.names)), key=ix.names.__getitem__, reverse=True)
    if by == "size":
        return sorted(by_name, key=lambda i: (-sizes[i], -counts[i]))
    return sorted(by_name, key=lambda i: (-counts[i], -sizes[i]))


def _plan(ix: Indexed, order: list[int], name: str) -> Plan:
    pools, offsets = decode(ix, order, "after_conflicts")
    return Plan(ix.placements(pools, offsets), algorithm=name)


def greedy_by_size(problem: Problem) -> Plan:
    """Largest first; ties: more conflicts first, then by name descending."""
    ix = Indexed.of(problem)
    return _plan(ix, tvm_order(ix, "size"), "greedy_by_size")


def greedy_by_conflicts(problem: Problem) -> Plan:
    """Most conflicts first; ties: larger first, then by name descending."""
    ix = Indexed.of(problem)
    return _plan(ix, tvm_order(ix, "conflicts"), "greedy_by_conflicts")
