"""MiniMalloc's exact search for one pool (Moffitt, ASPLOS 2023), in Python.

A faithful re-implementation of ``google/minimalloc``'s ``Solver`` (decision
problem: place every buffer of one pool below ``capacity``), written from the
paper and the published algorithm, with every rule of its default
configuration:

* *canonical solutions*: buffers are placed one at a time at their current
  minimum offset (the aligned highest end of their placed conflicting
  buffers), offsets never decrease, and at equal offsets the static preorder
  index grows;
* *dynamic ordering*: candidates by (minimum offset, preorder index);
* *dominance*: no buffer is placed at or above the lowest height another
  unplaced buffer could reach (it would leave a gap that buffer fills);
* *sections* (the live sets just before each buffer end, i.e. the maximal
  cliques of the interval graph) carry a *floor* (highest end placed there,
  raised to the lowest minimum offset of its unplaced buffers: the
  "unallocated floor") and the *total* of its unplaced bytes; a node is
  pruned when ``max(offset, floor) + total > capacity`` in some section of
  its partition (monotonic floor + section inference);
* *dynamic decomposition*: when no unplaced buffer crosses the boundary
  between two sections any more, the two sides are solved independently
  (a failure on one side fails the node, no re-search of the other side);
* *static preorders* ``WAT``, ``TAW``, ``TWA`` (sections spanned, area,
  section total; all descending) raced round-robin with a node limit that
  doubles each round.

It returns FOUND (with offsets), INFEASIBLE (proven: the search finished) or
TIMEOUT (``deadline``, a ``time.process_time()`` value, passed, or the
``max_nodes`` budget spent). :class:`Search` runs the same search in C
(``minimalloc_search.c`` via ``minimalloc_native``) when it can be built:
node for node the same (tested), about 50 times faster. Explicit
conflicts between buffers that are not live together are honoured in
placement; decomposition is then turned off (their two sides are not
independent). No xDSL; deterministic except for where a timeout strikes.
"""

from __future__ import annotations

import sys
import time
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import compress

from usmp.planning.minimalloc_native import LIMIT, Prepared, fits, load, run


@dataclass(frozen=True)
class PoolProblem:
    """One pool's buffers, indexed ``0..n-1``.

    ``neighbours`` must hold every conflict (interval and explicit), each
    once;
    ``starts``/``ends`` give the sections used for inference (buffers with
    ``start == end`` take part only through ``neighbours``)."""

    sizes: Sequence[int]
    starts: Sequence[int]
    ends: Sequence[int]
    alignments: Sequence[int]
    neighbours: Sequence[Sequence[int]]


class Status(Enum):
    FOUND = "found"
    INFEASIBLE = "infeasible"
    TIMEOUT = "timeout"


_OK, _NOT_FOUND, _ABORTED, _TIMEOUT = 0, 1, 2, 3
_PLACED = 1 << 62  # the minimum offset of a placed buffer (see ``place``)
HEURISTICS = ("WAT", "TAW", "TWA")


class OutOfTime(Exception):
    """The deadline passed while a problem was being prepared for the search
    (its sections and conflict lists cost O(conflicts) on a dense problem)."""


# Work (conflicts visited) between two looks at the clock while preparing.
CHECK_EVERY = 50_000


def check_time(deadline: float | None) -> None:
    """Raise :class:`OutOfTime` once ``deadline`` (``time.process_time()``)
    has passed."""
    if deadline is not None and time.process_time() >= deadline:
        raise OutOfTime


@dataclass(frozen=True)
class Sweep:
    """Sections and per-buffer section ranges ``[lo, hi)`` of a pool problem."""

    sections: list[list[int]]
    lo: list[int]
    hi: list[int]
    independent: bool  # every conflict is an interval overlap of sectioned buffers

    @staticmethod
    def of(pp: PoolProblem, deadline: float | None = None) -> Sweep:
        """The sweep of ``pp``; :class:`OutOfTime` if ``deadline`` passes
        first."""
        n = len(pp.sizes)
        live = [pp.sizes[i] > 0 and pp.starts[i] < pp.ends[i] for i in range(n)]
        points = sorted(
            [(pp.ends[i], 0, i) for i in range(n) if live[i]]
            + [(pp.starts[i], 1, i) for i in range(n) if live[i]]
        )
        sections: list[list[int]] = []
        lo = [0] * n
        hi = [0] * n
        actives: set[int] = set()
        last: int | None = None
        for t, kind, i in points:
            if last is None:
                last = t
            if kind == 0:
                if last < t:
                    last = t
                    sections.append(sorted(actives))
                    if len(sections) % 256 == 0:
                        check_time(deadline)
                actives.discard(i)
                hi[i] = len(sections)
            else:
                actives.add(i)
                lo[i] = len(sections)
        # Independent: every neighbour is live and overlaps (no conflict
        # beyond the intervals). The neighbours hold every overlap, once:
        # so it is whether each buffer has as many as overlap it (counted
        # with sorted starts and ends, O(n log n)).
        starts = sorted(pp.starts[i] for i in range(n) if live[i])
        ends = sorted(pp.ends[i] for i in range(n) if live[i])
        independent = all(
            len(pp.neighbours[i])
            == (
                bisect_left(starts, pp.ends[i]) - bisect_right(ends, pp.starts[i]) - 1
                if live[i]
                else 0
            )
            for i in range(n)
        )
        return Sweep(sections, lo, hi, independent)


class _Solver:
    def __init__(
        self, pp: PoolProblem, sweep: Sweep, capacity: int, deadline: float | None
    ):
        self.pp = pp
        self.capacity = capacity
        self.deadline = deadline
        n = len(pp.sizes)
        self.n = n
        self.sections = sweep.sections
        self.lo, self.hi = sweep.lo, sweep.hi
        self.decompose = sweep.independent
        n_sec = len(self.sections)
        self.low = [0] * n_sec  # lowest minimum offset of a section's unplaced
        self.hatless = False  # of the last placement: no unplaced conflict
        self.logs: list[tuple[list[tuple[int, int]], list[tuple[int, int]]] | None] = []
        self.total = [0] * n_sec
        for s, members in enumerate(self.sections):
            self.total[s] = sum(pp.sizes[i] for i in members)
        self.cuts = [0] * max(n_sec - 1, 0)
        for i in range(n):
            for s in range(self.lo[i], self.hi[i] - 1):
                self.cuts[s] += 1
        self.off = [-1] * n
        self.solution = [-1] * n
        self.min_off = [0] * n
        self.nodes_left = 0
        self.nodes = 0
        self.backtracks = 0
        self.width = [pp.ends[i] - pp.starts[i] for i in range(n)]
        self.area = [pp.sizes[i] * (pp.ends[i] - pp.starts[i]) for i in range(n)]

    # -- the search ---------------------------------------------------------

    def top_partitions(self) -> list[tuple[list[int], int, int]]:
        """(buffers, first section, end section) of the independent parts."""
        n_sec = len(self.sections)
        # Zero-size buffers occupy nothing; with decomposition, buffers in no
        # section have no conflict either: all of those sit at offset 0.
        searched = []
        for i in range(self.n):
            if self.pp.sizes[i] == 0 or (self.decompose and self.lo[i] == self.hi[i]):
                self.solution[i] = 0
            else:
                searched.append(i)
        if not self.decompose:
            return [(searched, 0, n_sec)]
        cut_points = [0] + [s + 1 for s, c in enumerate(self.cuts) if c == 0] + [n_sec]
        return self._split(searched, cut_points)

    def _split(
        self, buffers: list[int], cut_points: list[int]
    ) -> list[tuple[list[int], int, int]]:
        out: list[tuple[list[int], int, int]] = []
        lo, hi = self.lo, self.hi
        for a, b in zip(cut_points, cut_points[1:], strict=False):
            members = [i for i in buffers if lo[i] < b and a < hi[i]]
            if members:
                out.append((members, a, b))
        return out

    def preorder(self, buffers: list[int], heuristic: str) -> list[int]:
        total, lo, hi = self.total, self.lo, self.hi
        tot = {i: max(total[lo[i] : hi[i]], default=0) for i in buffers}
        keys = {"W": self.width, "A": self.area}

        def key(i: int) -> tuple[int, ...]:
            return tuple(-(tot[i] if c == "T" else keys[c][i]) for c in heuristic) + (
                i,
            )

        return sorted(buffers, key=key)

    def sub_solve(self, part: tuple[list[int], int, int], heuristic: str) -> int:
        buffers, _, _ = part
        order = self.preorder(buffers, heuristic)
        return self.search(part, heuristic, order, list(range(len(order))), 0, 0)

    def search(
        self,
        part: tuple[list[int], int, int],
        heuristic: str,
        order: list[int],
        candidates: list[int],
        min_offset: int,
        min_rank: int,
    ) -> int:
        if self.nodes_left <= 0:
            return _ABORTED
        self.nodes_left -= 1
        self.nodes += 1
        if (
            self.deadline is not None
            and not self.nodes & 255
            and time.process_time() > self.deadline
        ):
            return _TIMEOUT
        off, min_off, sizes = self.off, self.min_off, self.pp.sizes
        ordering = sorted(
            (min_off[order[r]], r) for r in candidates if off[order[r]] < 0
        )
        if not ordering:
            for i in part[0]:
                self.solution[i] = off[i]
            return _OK
        min_height = min(o + sizes[order[r]] for o, r in ordering)
        remaining = [r for _, r in ordering]
        for o, r in ordering:
            if o >= min_height:
                break  # dominance; the ordering is by offset
            if o < min_offset or (o == min_offset and r < min_rank):
                continue  # canonicity
            i = order[r]
            status = _NOT_FOUND
            consistent = self.place(i, o, part)
            hatless = self.hatless
            if consistent:
                if self.decompose:
                    status = self.decomposed(part, heuristic, order, remaining, o, r, i)
                else:
                    status = self.search(part, heuristic, order, remaining, o, r)
            self.unplace(i)
            if status != _NOT_FOUND:
                return status
            if hatless:
                break  # nothing unplaced above ``i``: no other choice helps
        self.backtracks += 1
        return _NOT_FOUND

    def place(self, i: int, offset: int, part: tuple[list[int], int, int]) -> bool:
        """Place ``i`` at ``offset``, update the minimum offsets and section
        data (logged for :meth:`unplace`); whether the node stays consistent.

        A placed buffer's minimum offset is parked at ``_PLACED`` so that a
        section's lowest unplaced minimum offset (its floor: every placed
        buffer of a section ends at or below it) is a plain ``min``."""
        pp = self.pp
        off, min_off, lo, hi = self.off, self.min_off, self.lo, self.hi
        size = pp.sizes[i]
        height = offset + size
        off[i] = offset
        total, capacity = self.total, self.capacity
        a, b = part[1], part[2]
        lo_i, hi_i = lo[i], hi[i]
        # The monotonic floor check first, before anything is updated: the
        # bytes still to place in any section of the partition, once ``i`` is
        # placed, sit at ``offset`` or above (same outcome as checking after
        # the update, far cheaper when it fails).
        if height > capacity or (
            a < b
            and offset
            + max(
                max(total[a:lo_i], default=0),
                max(total[hi_i:b], default=0),
                max(total[lo_i:hi_i], default=size) - size,
            )
            > capacity
        ):
            self.logs.append(None)
            self.hatless = all(off[j] >= 0 for j in pp.neighbours[i])
            return False
        offset_log: list[tuple[int, int]] = [(i, min_off[i])]
        min_off[i] = _PLACED
        low, members = self.low, self.sections
        # Sections whose floor may rise: those of ``i`` and those where a
        # raised buffer was the lowest.
        affected: set[int] = set(range(lo_i, hi_i))
        aligns = pp.alignments
        hatless = True
        for j in pp.neighbours[i]:
            if off[j] >= 0:
                continue
            hatless = False
            old = min_off[j]
            if old < height:
                offset_log.append((j, old))
                al = aligns[j]
                min_off[j] = -(-height // al) * al if al > 1 else height
                lo_j = lo[j]
                affected.update(
                    compress(range(lo_j, hi[j]), map(old.__eq__, low[lo_j : hi[j]]))
                )
        for s in range(lo_i, hi_i):
            total[s] -= size
        section_log: list[tuple[int, int]] = []
        self.logs.append((offset_log, section_log))
        self.hatless = hatless
        for s in affected:
            lowest = min(map(min_off.__getitem__, members[s]))
            if lowest != low[s]:
                section_log.append((s, low[s]))
                low[s] = lowest
            if lowest + total[s] > capacity and total[s]:
                return False
        return True

    def unplace(self, i: int) -> None:
        self.off[i] = -1
        log = self.logs.pop()
        if log is None:  # rejected before any update
            return
        offset_log, section_log = log
        low, total, min_off = self.low, self.total, self.min_off
        for s, old in reversed(section_log):
            low[s] = old
        size = self.pp.sizes[i]
        for s in range(self.lo[i], self.hi[i]):
            total[s] += size
        for j, old in reversed(offset_log):
            min_off[j] = old

    def decomposed(
        self,
        part: tuple[list[int], int, int],
        heuristic: str,
        order: list[int],
        candidates: list[int],
        min_offset: int,
        min_rank: int,
        i: int,
    ) -> int:
        self.solution[i] = self.off[i]
        cuts = self.cuts
        cut_points = [part[1]]
        for s in range(self.lo[i], self.hi[i] - 1):
            cuts[s] -= 1
            if cuts[s] == 0:
                cut_points.append(s + 1)
        status = _OK
        if len(cut_points) == 1:
            status = self.search(
                part, heuristic, order, candidates, min_offset, min_rank
            )
        else:
            cut_points.append(part[2])
            unplaced = [j for j in part[0] if self.off[j] < 0]
            for sub in self._split(unplaced, cut_points):
                status = self.sub_solve(sub, heuristic)
                if status != _OK:
                    break
        for s in range(self.lo[i], self.hi[i] - 1):
            cuts[s] += 1
        return status


@dataclass(frozen=True)
class SearchResult:
    status: Status
    offsets: list[int]
    nodes: int
    backtracks: int


class Search:
    """MiniMalloc's search on one pool problem, prepared once (sections, the
    C side's arrays) for probes at many capacities."""

    def __init__(
        self, pp: PoolProblem, native: bool = True, deadline: float | None = None
    ):
        """:class:`OutOfTime` if ``deadline`` passes while preparing."""
        self.pp = pp
        self.sweep = Sweep.of(pp, deadline)
        n = len(pp.sizes)
        self.width = [pp.ends[i] - pp.starts[i] for i in range(n)]
        self.area = [pp.sizes[i] * self.width[i] for i in range(n)]
        self.lib = load() if native else None
        self.prepared: Prepared | None = None
        if self.lib is not None and fits(pp.sizes, self.area):
            check_time(deadline)
            self.prepared = Prepared(
                pp.sizes,
                pp.alignments,
                self.width,
                self.area,
                self.sweep.lo,
                self.sweep.hi,
                pp.neighbours,
                self.sweep.sections,
                self.sweep.independent,
            )

    def solve(
        self,
        capacity: int,
        deadline: float | None = None,
        max_nodes: int | None = None,
    ) -> SearchResult:
        """Place every buffer below ``capacity``; see :func:`solve`."""
        pp = self.pp
        if any(s > capacity for s in pp.sizes):
            return SearchResult(Status.INFEASIBLE, [], 0, 0)
        if self.lib is not None and self.prepared is not None and capacity < LIMIT:
            code, offsets, nodes, backtracks = run(
                self.lib, self.prepared, capacity, deadline, max_nodes
            )
            status = {0: Status.FOUND, 1: Status.INFEASIBLE}.get(code, Status.TIMEOUT)
            return SearchResult(
                status, offsets if status is Status.FOUND else [], nodes, backtracks
            )
        return self._python(capacity, deadline, max_nodes)

    def _python(
        self, capacity: int, deadline: float | None, max_nodes: int | None
    ) -> SearchResult:
        n = len(self.pp.sizes)
        solver = _Solver(self.pp, self.sweep, capacity, deadline)
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 4 * n + 1000))
        try:
            parts = solver.top_partitions()
            if not parts:  # nothing with a size to place
                return SearchResult(Status.FOUND, list(solver.solution), 0, 0)
            node_limit = max(n, 1)
            while True:
                node_limit *= 2
                status = _ABORTED
                for heuristic in HEURISTICS:
                    solver.nodes_left = node_limit
                    if max_nodes is not None:
                        if solver.nodes >= max_nodes:
                            return SearchResult(
                                Status.TIMEOUT, [], solver.nodes, solver.backtracks
                            )
                        solver.nodes_left = min(node_limit, max_nodes - solver.nodes)
                    for part in parts:
                        status = solver.sub_solve(part, heuristic)
                        if status != _OK:
                            break
                    if status != _ABORTED:
                        break
                if status == _OK:
                    return SearchResult(
                        Status.FOUND,
                        list(solver.solution),
                        solver.nodes,
                        solver.backtracks,
                    )
                if status == _NOT_FOUND:
                    return SearchResult(
                        Status.INFEASIBLE, [], solver.nodes, solver.backtracks
                    )
                if status == _TIMEOUT:
                    return SearchResult(
                        Status.TIMEOUT, [], solver.nodes, solver.backtracks
                    )
        finally:
            sys.setrecursionlimit(limit)


def solve(
    pp: PoolProblem,
    capacity: int,
    deadline: float | None = None,
    max_nodes: int | None = None,
    native: bool = True,
) -> SearchResult:
    """Place every buffer of ``pp`` below ``capacity`` (MiniMalloc's search).

    ``deadline``: a ``time.process_time()`` value after which the search stops
    with ``Status.TIMEOUT``; ``max_nodes``: a budget of search nodes (over the
    whole round robin) after which it stops the same way (deterministic);
    ``native``: run the C version of the search when it is available
    (``minimalloc_native``: the same nodes, offsets and outcome). Probing
    many capacities: :class:`Search` prepares the problem once."""
    try:
        search = Search(pp, native, deadline)
    except OutOfTime:
        return SearchResult(Status.TIMEOUT, [], 0, 0)
    return search.solve(capacity, deadline, max_nodes)


def pool_problem_offsets_valid(pp: PoolProblem, offsets: Sequence[int]) -> bool:
    """Whether ``offsets`` keep every conflicting pair apart (a cheap check)."""
    sizes = pp.sizes
    return all(
        offsets[i] + sizes[i] <= offsets[j] or offsets[j] + sizes[j] <= offsets[i]
        for i in range(len(sizes))
        for j in pp.neighbours[i]
        if sizes[i] and sizes[j]
    )
