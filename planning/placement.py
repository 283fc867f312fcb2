"""Shared placement machinery of the planning algorithms.

Every algorithm in this package reduces to *decoding an order*: buffers are
visited one by one, each goes to the first of its candidate pools where an
offset is found, at an offset chosen among the already placed buffers it
conflicts with in that pool. Three offset rules exist:

* ``after_conflicts`` (TVM USMP's greedy rule): just past the highest end of
  the placed conflicting buffers, each end rounded up to its own buffer's
  alignment first; gaps below are never reused;
* ``first_fit`` / ``best_fit``: the lowest (resp. the tightest) gap between the
  placed conflicting buffers that holds the buffer, else the top.

Offsets are aligned to ``max(buffer.alignment, pool.alignment)`` and the pool's
``size_limit`` is honoured; a buffer that fits no candidate pool raises
:class:`PlanningError` naming it with each pool's limit.

The validator (``validate.py``) shares none of this code.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from typing import Literal

from usmp.planning.model import (
    Buffer,
    Placement,
    PlanningError,
    Problem,
    forbidden_shifts,
)

OffsetRule = Literal["after_conflicts", "first_fit", "best_fit"]
OFFSET_RULES: tuple[OffsetRule, ...] = ("after_conflicts", "first_fit", "best_fit")


def align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment if alignment > 1 else value


@dataclass(frozen=True)
class Indexed:
    """A problem flattened into integer indices, built once per algorithm run.

    ``neighbours[i]``: indices of the buffers conflicting with buffer ``i``
    (zero-size buffers conflict with nothing: they occupy no byte), computed
    on first use: a dense problem has hundreds of them per buffer, and the
    planners for large problems never ask (``degrees`` counts them).
    ``explicit[i]``: the sized buffers an explicit conflict links to a sized
    buffer ``i`` (either side listing the other), ascending.
    ``candidates[i]``: pool indices in order of preference.
    ``alignments[i][k]``: alignment of buffer ``i`` in its ``k``-th candidate.
    """

    problem: Problem
    names: tuple[str, ...]
    sizes: tuple[int, ...]
    explicit: tuple[tuple[int, ...], ...]
    candidates: tuple[tuple[int, ...], ...]
    alignments: tuple[tuple[int, ...], ...]
    limits: tuple[int | None, ...]
    forbidden: dict[tuple[int, int], tuple[int, int]]
    """``(i, j)`` of an allowed overlap -> the open interval ``(lo, hi)``
    that ``offset[i] - offset[j]`` must avoid (see ``model.Overlap``); every
    other conflicting pair avoids ``(-size[i], size[j])``."""

    @staticmethod
    def of(problem: Problem) -> Indexed:
        names = tuple(b.name for b in problem.buffers)
        index = {n: i for i, n in enumerate(names)}
        if len(index) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"duplicate buffer names: {', '.join(dup)}")
        pool_index = {p.name: k for k, p in enumerate(problem.pools)}
        sizes = tuple(b.size for b in problem.buffers)
        explicit: list[set[int]] = [set() for _ in names]
        for i, b in enumerate(problem.buffers):
            for other in b.conflicts:
                j = index.get(other)
                if j is not None and j != i and sizes[i] and sizes[j]:
                    explicit[i].add(j)
                    explicit[j].add(i)
        candidates: list[tuple[int, ...]] = []
        alignments: list[tuple[int, ...]] = []
        for b in problem.buffers:
            cands = problem.candidates(b)
            unknown = [c for c in cands if c not in pool_index]
            if unknown:
                raise ValueError(
                    f"buffer {b.name}: unknown candidate pool(s) {', '.join(unknown)}; "
                    f"pools are {', '.join(pool_index) or '(none)'}"
                )
            candidates.append(tuple(pool_index[c] for c in cands))
            alignments.append(
                tuple(
                    max(b.alignment, problem.pools[pool_index[c]].alignment, 1)
                    for c in cands
                )
            )
        return Indexed(
            problem=problem,
            names=names,
            sizes=sizes,
            explicit=tuple(tuple(sorted(e)) for e in explicit),
            candidates=tuple(candidates),
            alignments=tuple(alignments),
            limits=tuple(p.size_limit for p in problem.pools),
            forbidden={
                (index[a], index[b]): interval
                for (a, b), interval in forbidden_shifts(problem).items()
            },
        )

    def live(self) -> list[int]:
        """The buffers that conflict by lifetime: a size and a non-empty
        live interval; sorted by start (ties by index)."""
        b = self.problem.buffers
        return sorted(
            (i for i, x in enumerate(b) if x.size and x.start < x.end),
            key=lambda i: b[i].start,
        )

    @cached_property
    def neighbours(self) -> tuple[tuple[int, ...], ...]:
        b = self.problem.buffers
        live = self.live()
        starts = [b[i].start for i in live]
        rows: list[list[int]] = [[] for _ in self.names]
        for p, i in enumerate(live):
            # the live buffers starting during i's life, after it in start
            # order: every lifetime overlap once
            later = live[p + 1 : bisect_left(starts, b[i].end, p + 1)]
            rows[i].extend(later)
            for j in later:
                rows[j].append(i)
        for i, partners in enumerate(self.explicit):
            if partners:
                rows[i] = list(set(rows[i]).union(partners))
        return tuple(tuple(sorted(r)) for r in rows)

    @cached_property
    def degrees(self) -> tuple[int, ...]:
        """``len(neighbours[i])`` for every ``i``, counted in O(n log n)
        without listing the conflicts."""
        return self._conflict_sums(lambda i: 1)

    @cached_property
    def conflict_bytes(self) -> tuple[int, ...]:
        """``sizes[i] + sum(sizes[j] for j in neighbours[i])`` for every
        ``i``, in O(n log n) like ``degrees``."""
        sums = self._conflict_sums(self.sizes.__getitem__)
        return tuple(s + size for s, size in zip(sums, self.sizes, strict=True))

    def _conflict_sums(self, weight: Callable[[int], int]) -> tuple[int, ...]:
        """Per buffer, the total ``weight`` of its neighbours: the live
        buffers starting before its end minus those ended by its start
        (prefix sums over starts and ends), minus itself, plus the explicit
        conflicts whose lifetimes do not overlap its own."""
        b = self.problem.buffers
        live = self.live()
        starts = [b[i].start for i in live]
        by_end = sorted(live, key=lambda i: b[i].end)
        ends = [b[i].end for i in by_end]
        before_start = list(accumulate((weight(i) for i in live), initial=0))
        before_end = list(accumulate((weight(i) for i in by_end), initial=0))
        out = [0] * len(self.names)
        for i in live:
            out[i] = (
                before_start[bisect_left(starts, b[i].end)]
                - before_end[bisect_right(ends, b[i].start)]
                - weight(i)
            )
        for i, partners in enumerate(self.explicit):
            x = b[i]
            for j in partners:  # counted above when their lifetimes overlap
                y = b[j]
                overlapping = (
                    x.start < x.end
                    and y.start < y.end
                    and x.start < y.end
                    and y.start < x.end
                )
                if not overlapping:
                    out[i] += weight(j)
        return tuple(out)

    @property
    def buffers(self) -> tuple[Buffer, ...]:
        return self.problem.buffers

    def placements(
        self, pools: Sequence[int], offsets: Sequence[int]
    ) -> dict[str, Placement]:
        pool_names = [p.name for p in self.problem.pools]
        return {
            n: Placement(pool_names[pools[i]], offsets[i])
            for i, n in enumerate(self.names)
        }


def _offset_in_pool(
    occupied: list[tuple[int, int]],
    size: int,
    alignment: int,
    rule: OffsetRule,
    limit: int | None,
) -> int:
    """Offset for ``size`` bytes given the ``(offset, end)`` ranges it must avoid.

    ``best_fit`` takes the tightest gap that fits below ``limit`` (lowest on
    ties), else the top; ``first_fit`` the lowest gap, else the top."""
    if not occupied:
        return 0
    if rule == "after_conflicts":
        return align_up(max(e for _, e in occupied), alignment)
    occupied.sort()
    candidate = 0
    best = -1
    best_gap = -1
    for off, end in occupied:
        if candidate + size <= off:
            if rule == "first_fit":
                return candidate
            gap = off - candidate
            if (best < 0 or gap < best_gap) and (
                limit is None or candidate + size <= limit
            ):
                best, best_gap = candidate, gap
        if end > candidate:
            candidate = align_up(end, alignment)
    return best if best >= 0 else candidate


def decode(
    ix: Indexed,
    order: Sequence[int],
    rule: OffsetRule,
    *,
    start: int = 0,
    previous: tuple[Sequence[int], Sequence[int]] | None = None,
) -> tuple[list[int], list[int]]:
    """Place the buffers in ``order``; return per-buffer (pool index, offset).

    With ``start`` and ``previous`` (the result of decoding an order sharing
    ``order[:start]``), only ``order[start:]`` is placed again.
    Raises :class:`PlanningError` for the first buffer that fits no candidate.
    """
    n = len(ix.names)
    if previous is None or start == 0:
        pool_of = [-1] * n
        offset_of = [0] * n
        start = 0
    else:
        pool_of, offset_of = list(previous[0]), list(previous[1])
        for i in order[start:]:
            pool_of[i] = -1
    sizes = ix.sizes
    for pos in range(start, len(order)):
        i = order[pos]
        size = sizes[i]
        tried: list[tuple[str, int | None, int]] = []
        for k, pool in enumerate(ix.candidates[i]):
            if rule == "after_conflicts":  # TVM: ends rounded to their alignment
                pool_alignment = ix.problem.pools[pool].alignment
                occupied = [
                    (
                        offset_of[j],
                        align_up(
                            offset_of[j] + sizes[j],
                            max(ix.buffers[j].alignment, pool_alignment),
                        ),
                    )
                    for j in ix.neighbours[i]
                    if pool_of[j] == pool
                ]
            elif ix.forbidden:
                # an allowed overlap moves the range to avoid (see Indexed)
                occupied = []
                for j in ix.neighbours[i]:
                    if pool_of[j] != pool:
                        continue
                    lo, hi = ix.forbidden.get((i, j), (-size, sizes[j]))
                    occupied.append((offset_of[j] + lo + size, offset_of[j] + hi))
            else:
                occupied = [
                    (offset_of[j], offset_of[j] + sizes[j])
                    for j in ix.neighbours[i]
                    if pool_of[j] == pool
                ]
            limit = ix.limits[pool]
            offset = _offset_in_pool(occupied, size, ix.alignments[i][k], rule, limit)
            if limit is None or offset + size <= limit:
                pool_of[i] = pool
                offset_of[i] = offset
                break
            tried.append((ix.problem.pools[pool].name, limit, offset + size))
        else:
            raise PlanningError(ix.names[i], size, tried)
    return pool_of, offset_of


def pool_tops(ix: Indexed, pools: Sequence[int], offsets: Sequence[int]) -> list[int]:
    """Per pool, the highest end of a buffer placed in it."""
    tops = [0] * len(ix.limits)
    for i, size in enumerate(ix.sizes):
        end = offsets[i] + size
        if end > tops[pools[i]]:
            tops[pools[i]] = end
    return tops


def cost(
    ix: Indexed, pools: Sequence[int], offsets: Sequence[int]
) -> tuple[int, tuple[int, ...]]:
    """What planners minimise: total bytes; on ties, the plan using the earlier
    (preferred, typically faster) pools more wins."""
    tops = pool_tops(ix, pools, offsets)
    return sum(tops), tuple(-t for t in tops)


def total_bytes(ix: Indexed, pools: Sequence[int], offsets: Sequence[int]) -> int:
    """Sum over pools of the highest buffer end (the bytes the plan needs)."""
    return sum(pool_tops(ix, pools, offsets))


def lane_layout(ix: Indexed) -> tuple[list[int], list[int]] | None:
    """A valid layout in O(n log n), for when there is no time for a decode
    (which visits every conflict: hundreds per buffer on a dense problem).

    Each sized buffer goes to its first candidate pool, into a *lane* of its
    size class (its size rounded up to a power of two, then to its
    alignment): in start order, a buffer takes a lane whose buffers have all
    ended (interval colouring: a class gets as many lanes as it has buffers
    live at once); a lane holding a buffer with explicit conflicts (or an
    empty lifetime) is never taken again; the classes are stacked, largest
    first. Up to twice each class's peak: a floor, not a plan to keep.
    ``None`` with allowed overlaps (their intervals are the decode's) or
    when a pool's limit is exceeded."""
    if ix.forbidden:
        return None
    b = ix.buffers
    n = len(ix.names)
    pools = [c[0] if c else 0 for c in ix.candidates]
    offsets = [0] * n
    classes: dict[tuple[int, int, int], list[int]] = {}
    for i in range(n):
        size = ix.sizes[i]
        if size:
            align = ix.alignments[i][0]
            width = align_up(1 << (size - 1).bit_length(), align)
            classes.setdefault((pools[i], width, align), []).append(i)
    cursor = [0] * len(ix.limits)
    for (pool, width, align), members in sorted(
        classes.items(), key=lambda kv: (kv[0][0], -kv[0][1], kv[0][2])
    ):
        members.sort(key=lambda i: (b[i].start, i))
        free: list[tuple[int, int]] = []  # (end of its last buffer, lane)
        base = align_up(cursor[pool], align)
        lanes = 0
        for i in members:
            x = b[i]
            if free and free[0][0] <= x.start:
                lane = heapq.heappop(free)[1]
            else:
                lane = lanes
                lanes += 1
            if x.start < x.end and not ix.explicit[i]:
                heapq.heappush(free, (x.end, lane))
            offsets[i] = base + lane * width
        cursor[pool] = base + lanes * width
        limit = ix.limits[pool]
        if limit is not None and max(offsets[i] + ix.sizes[i] for i in members) > limit:
            return None
    return pools, offsets
