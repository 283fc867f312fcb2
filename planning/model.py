"""Data model of static memory planning (no xDSL: plain typed Python).

This is the one interface between the IR side of ``usmp`` (analysis and
rewrite passes) and the planning algorithms, after TVM USMP's
``BufferInfo`` / ``PoolInfo`` / ``PoolAllocation``:

* a ``Problem`` is a set of ``Buffer``s (size, alignment, ordered candidate
  pools, live interval over main's call order, explicit conflicts) and the
  ``Pool``s they may go to;
* an algorithm is a function ``Problem -> Plan``;
* a ``Plan`` maps every buffer name to a ``Placement`` (pool, offset).

Two buffers *conflict* when their half-open live intervals overlap, or when one
names the other in ``conflicts`` (used for scratch buffers whose liveness is
finer or coarser than an interval). Conflicting buffers in the same pool must
not overlap in address -- unless an ``Overlap`` allows it: an operator that
reads ``source`` for the last time and writes ``target`` in an order where
``target`` placed at most ``max_shift`` bytes above ``source``'s start
(negative: below it) never overwrites a byte before its last read. Such a
pair may then sit at any relative offset ``target - source <= max_shift``, or
apart as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Pool:
    """A memory pool. ``size_limit`` None means unbounded."""

    name: str
    size_limit: int | None = None
    alignment: int = 16


@dataclass(frozen=True)
class Buffer:
    """One statically sized buffer to place.

    ``start``/``end``: half-open live interval ``[start, end)`` in abstract time
    (main's call index). ``pools``: candidate pools in order of preference
    (empty = every pool of the problem, in the problem's order).
    ``conflicts``: names of buffers this one must not overlap whatever the
    intervals say (symmetric: a conflict listed on either side counts).
    """

    name: str
    size: int
    start: int
    end: int
    alignment: int = 1
    pools: tuple[str, ...] = ()
    conflicts: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.size < 0:
            raise ValueError(f"buffer {self.name}: negative size {self.size}")
        if self.end < self.start:
            raise ValueError(
                f"buffer {self.name}: live range [{self.start}, {self.end}) "
                "ends before it starts"
            )


@dataclass(frozen=True)
class Overlap:
    """``target`` may overlap ``source`` when ``target.offset - source.offset
    <= max_shift`` or ``>= min_shift`` (both in one pool; ``None``: only
    disjoint above); any disjoint placement stays allowed. A kernel writing
    in ascending address order gives a ``max_shift`` (its output at or below
    its input), one writing in descending order a ``min_shift``."""

    source: str
    target: str
    max_shift: int
    min_shift: int | None = None


def forbidden_shifts(
    problem: Problem,
) -> dict[tuple[str, str], tuple[int, int]]:
    """For each ordered pair (a, b) of an ``Overlap``: the open interval
    ``(lo, hi)`` that ``a.offset - b.offset`` must avoid (instead of the
    usual ``(-a.size, b.size)``). Overlaps that allow nothing beyond
    disjointness are left out."""
    sizes = {b.name: b.size for b in problem.buffers}
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for o in problem.overlaps:
        if o.source not in sizes or o.target not in sizes:
            continue
        s, t = sizes[o.source], sizes[o.target]
        lo = max(o.max_shift, -t)
        hi = s if o.min_shift is None else min(o.min_shift, s)
        if (lo == -t and hi == s) or s == 0 or t == 0:
            continue
        hi = max(hi, lo + 1)
        out[(o.target, o.source)] = (lo, hi)
        out[(o.source, o.target)] = (-hi, -lo)
    return out


@dataclass(frozen=True)
class Placement:
    pool: str
    offset: int


@dataclass(frozen=True)
class Problem:
    buffers: tuple[Buffer, ...]
    pools: tuple[Pool, ...] = (Pool("global_workspace"),)
    overlaps: tuple[Overlap, ...] = ()
    """Conflicting pairs allowed to overlap in a safe direction (see
    ``Overlap``)."""

    def pool(self, name: str) -> Pool:
        for p in self.pools:
            if p.name == name:
                return p
        raise KeyError(name)

    def candidates(self, buffer: Buffer) -> tuple[str, ...]:
        return buffer.pools or tuple(p.name for p in self.pools)

    def conflict_graph(self) -> dict[str, set[str]]:
        """Symmetric adjacency: buffer name -> names of conflicting buffers.

        Interval conflicts are found with a sweep (O(n log n + edges))."""
        graph: dict[str, set[str]] = {b.name: set() for b in self.buffers}
        events = sorted(self.buffers, key=lambda b: (b.start, b.end, b.name))
        active: list[Buffer] = []
        for b in events:
            active = [a for a in active if a.end > b.start]
            for a in active:
                if b.size and a.size and b.start < b.end:
                    graph[a.name].add(b.name)
                    graph[b.name].add(a.name)
            if b.start < b.end:
                active.append(b)
        for b in self.buffers:
            for other in b.conflicts:
                if other in graph and other != b.name:
                    graph[b.name].add(other)
                    graph[other].add(b.name)
        return graph


@dataclass(frozen=True)
class Plan:
    placements: Mapping[str, Placement]
    algorithm: str = ""
    stats: Mapping[str, float] = field(default_factory=dict)

    def pool_sizes(self, problem: Problem) -> dict[str, int]:
        """Bytes each pool must have: the highest end of a buffer placed in it."""
        sizes = {p.name: 0 for p in problem.pools}
        for b in problem.buffers:
            p = self.placements[b.name]
            sizes[p.pool] = max(sizes[p.pool], p.offset + b.size)
        return sizes


Algorithm = Callable[[Problem], Plan]


class PlanningError(Exception):
    """No valid plan: a buffer fits no candidate pool within its size limit.

    ``buffer``/``size`` name the buffer and its bytes; ``pools`` gives each
    candidate pool's (name, limit, bytes already used where it was tried)."""

    def __init__(
        self, buffer: str, size: int, pools: Iterable[tuple[str, int | None, int]]
    ):
        self.buffer = buffer
        self.size = size
        self.pools = tuple(pools)
        detail = "; ".join(
            f"pool '{name}' limit {'unbounded' if limit is None else limit} B, "
            f"would need {needed} B"
            for name, limit, needed in self.pools
        )
        super().__init__(
            f"buffer '{buffer}' ({size} B) fits in no candidate pool: {detail}"
        )
