"""Lowering the top of one pool's layout with MiniMalloc's search.

:func:`minimize_pool` turns the decision procedure of ``minimalloc_solver``
(place every buffer below a capacity) into an optimiser: rounds of probes at
capacities between the proven lower bound and the best top so far, each with
a node budget; a probe that finds a layout lowers the top to that layout's, a
probe that finishes without one proves a higher bound. Which capacities,
with how many nodes: the schedule (see :func:`minimize_pool`). The default
planner (``best_fit``) runs it with a node budget (the ``spread`` schedule),
the exact planner (``optimal``) with a time limit (``descent``). No xDSL.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import gcd

from usmp.planning.minimalloc_solver import (
    CHECK_EVERY,
    OutOfTime,
    PoolProblem,
    Search,
    Status,
    Sweep,
    check_time,
)
from usmp.planning.model import Buffer, Pool, Problem
from usmp.planning.placement import Indexed


def pool_problem(
    ix: Indexed, pools: list[int], k: int, deadline: float | None = None
) -> tuple[list[int], PoolProblem]:
    """The buffers ``pools`` puts in pool ``k`` (with a size) as a one-pool
    problem, with their indices in ``ix``; :class:`OutOfTime` if
    ``deadline`` passes while their conflicts are listed (a dense pool has
    hundreds per buffer)."""
    members = [i for i in range(len(ix.names)) if pools[i] == k and ix.sizes[i]]
    local = {i: x for x, i in enumerate(members)}
    b = ix.buffers
    starts = [b[i].start for i in members]
    ends = [b[i].end for i in members]
    rows: list[list[int]] = [[] for _ in members]
    live = sorted(
        (x for x in range(len(members)) if starts[x] < ends[x]),
        key=starts.__getitem__,
    )
    live_starts = [starts[x] for x in live]
    work = 0
    for p, x in enumerate(live):
        # the members starting during x's life, after it in start order
        later = live[p + 1 : bisect_left(live_starts, ends[x], p + 1)]
        work += len(later) + 1
        if work > CHECK_EVERY:
            check_time(deadline)
            work = 0
        rows[x].extend(later)
        for y in later:
            rows[y].append(x)
    for x, i in enumerate(members):
        work += len(rows[x]) + 1
        if work > CHECK_EVERY:
            check_time(deadline)
            work = 0
        partners = [local[j] for j in ix.explicit[i] if j in local]
        rows[x] = sorted(set(rows[x]).union(partners)) if partners else sorted(rows[x])
    return members, PoolProblem(
        sizes=[ix.sizes[i] for i in members],
        starts=starts,
        ends=ends,
        alignments=[ix.alignments[i][ix.candidates[i].index(k)] for i in members],
        neighbours=rows,
    )


def _top(pp: PoolProblem, offsets: list[int]) -> int:
    return max((o + s for o, s in zip(offsets, pp.sizes, strict=True)), default=0)


@dataclass(frozen=True)
class PoolResult:
    offsets: list[int]
    top: int
    proven_lower: int  # no layout of this pool ends below this
    probes: int
    nodes: int  # search nodes spent


# The sweep's probes a round at most (the capacities it visits in turn);
# the spread schedule's scan as many.
SWEEP_PROBES = 64


def _bit_reversed(x: int, bits: int) -> int:
    """``x`` with its ``bits`` low bits in reverse order: ``0, 1, 2, ...``
    become a van der Corput sequence (every prefix spread evenly over
    ``0 .. 2**bits - 1``, each value once per ``2**bits`` terms)."""
    return int(f"{x:0{bits}b}"[::-1], 2)


def _luby(i: int) -> int:
    """The ``i``-th term (from 1) of Luby's universal restart sequence:
    1 1 2 1 1 2 4 1 1 2 1 1 2 4 8 ..."""
    while True:
        k = i.bit_length()
        if i == (1 << k) - 1:
            return 1 << (k - 1)
        i -= (1 << (k - 1)) - 1


def _spread(lo: int, top: int, grain: int, most: int) -> list[int]:
    """Up to ``most`` multiples of ``grain`` in ``[lo, top)`` (``lo`` one of
    them), ascending: all of them, or evenly spread."""
    count = (top - lo) // grain
    if count <= most:
        return list(range(lo, top, grain))
    return sorted({lo + (count * k // most) * grain for k in range(most)})


class _Stop(Exception):
    """The time or node budget of :func:`minimize_pool` ran out."""


@dataclass
class _Minimizer:
    """The state of :func:`minimize_pool`: the best layout, the proven bound
    and what is spent; :meth:`probe` runs one capacity."""

    search: Search
    best: list[int]
    top: int
    lo: int
    grain: int
    deadline: float | None
    max_nodes: int | None
    used: int = 0
    probes: int = 0
    # the most nodes a capacity was searched with, without an answer: the
    # search is deterministic, so as many nodes or fewer again would not
    # answer either
    timed_out: dict[int, int] = field(default_factory=lambda: {})
    remember: bool = True  # skip such probes (the spread schedule does not)
    cursor: int = 0  # where the sweep goes on
    swept: int = 0  # the sweep's probes so far

    def probe(self, capacity: int, nodes: int) -> Status:
        known = self.timed_out.get(capacity, 0) if self.remember else 0
        if self.max_nodes is not None and self.max_nodes - self.used < nodes:
            nodes = self.max_nodes - self.used
            if known >= nodes:  # the last nodes could not answer here
                raise _Stop
        if nodes <= 0 or (
            self.deadline is not None and time.process_time() >= self.deadline
        ):
            raise _Stop
        if known >= nodes:
            return Status.TIMEOUT
        r = self.search.solve(capacity, self.deadline, max_nodes=nodes)
        self.used += r.nodes
        self.probes += 1
        if r.status is Status.FOUND:
            top = _top(self.search.pp, r.offsets)
            if top < self.top:
                self.best, self.top = r.offsets, top
        elif r.status is Status.INFEASIBLE:
            self.lo = max(self.lo, capacity + self.grain)
        elif r.nodes >= nodes and self.remember:  # the budget, not the deadline
            self.timed_out[capacity] = nodes
        return r.status

    def round(self, budget: int, lo_budget: int, scan: int) -> int:
        """One round at ``budget`` nodes a probe (``lo_budget`` for the
        bound, ``scan`` capacities at most in the scan); the nodes spent on
        capacities above the bound."""
        grain = self.grain
        self.probe(self.lo, lo_budget)
        start = self.used
        tried = {self.lo}
        # A binary search first (a good top in a few probes), ...
        a = self.lo + grain
        while a < self.top:
            mid = a + ((self.top - a) // grain // 2) * grain
            tried.add(mid)
            if self.probe(mid, budget) is not Status.FOUND:
                a = max(mid + grain, self.lo)
        # ... then every capacity under the best top, lowest first (how hard
        # a capacity is varies erratically with it: some are solved in a few
        # hundred nodes, their neighbours not in thousands).
        for capacity in _spread(self.lo, self.top, grain, scan):
            if capacity not in tried and capacity < self.top:
                if self.probe(capacity, budget) is Status.FOUND:
                    break
        return self.used - start

    def descend(self, budget: int) -> None:
        """Galloping search down from the best top at ``budget`` nodes a
        probe: the capacities ``top - grain * 2**j`` down to halfway to the
        bound and the halfway point, lowest first, up to the first that is
        found; then a binary search between it and the rung below it; again
        from the new top, until no rung is found."""
        grain = self.grain
        while True:
            top = self.top
            # halfway to the bound at most: below, capacities as hard as the
            # bound (the bound's probe and the sweep go there)
            half = self.lo + (top - self.lo) // grain // 2 * grain
            rungs: list[int] = [half] if half > self.lo else []
            step = grain
            while top - step > half:
                rungs.append(top - step)
                step *= 2
            below = self.lo
            for capacity in sorted(rungs):
                if self.probe(capacity, budget) is Status.FOUND:
                    break
                below = capacity
            else:
                return
            a = max(below, self.lo) + grain
            while a < self.top:
                mid = a + ((self.top - a) // grain // 2) * grain
                if self.probe(mid, budget) is not Status.FOUND:
                    a = max(mid + grain, self.lo + grain)

    def sweep(self, budget: int, allowance: int) -> None:
        """Probes at the capacities strictly between the bound and the best
        top, in turn (``_bit_reversed`` order, from where the last sweep
        stopped), the ``i``-th of all sweeps with ``budget`` times
        ``_luby(i)`` nodes, ``SWEEP_PROBES`` at most and until ``allowance``
        nodes are spent."""
        count = (self.top - self.lo) // self.grain - 1
        if count <= 0:
            return
        bits = max((count - 1).bit_length(), 1)
        start = self.used
        probes = 0
        while probes < min(SWEEP_PROBES, count):
            spent = self.used - start
            if spent >= allowance:
                return
            x = _bit_reversed(self.cursor % (1 << bits), bits)
            self.cursor += 1
            capacity = self.lo + self.grain * (1 + x)
            if x < count and capacity < self.top:
                probes += 1
                self.swept += 1
                nodes = budget * _luby(self.swept)
                self.probe(capacity, min(nodes, allowance - spent))


SCHEDULES = ("descent", "spread")


def minimize_pool(
    pp: PoolProblem,
    offsets: list[int],
    lower: int,
    deadline: float | None,
    max_nodes: int | None = None,
    schedule: str = "descent",
) -> PoolResult:
    """Lower the top of the valid layout ``offsets`` of one pool, down to
    ``lower`` at best, until ``deadline`` (a ``time.process_time()`` value)
    or after ``max_nodes`` search nodes in all (``None``: no such limit).

    ``schedule`` ``"descent"`` (``optimal``'s): rounds ``k = 0, 1, ...`` of
    three kinds of probes, each a different bet on where a better top is:

    * *the bound* (a layout there is optimal): one probe whose budget
      doubles each round and is at least what the rest of the previous
      round spent (at least half the effort: where the bound is reachable,
      the search there is strongly pruned and reaching it is the proof);
    * *the descent* (a layout just under the best top is likely: any
      capacity above a feasible one is feasible): a galloping search down
      from the best top (:meth:`_Minimizer.descend`) at a budget a probe
      that doubles each round;
    * *the sweep* (how hard a capacity is varies erratically with it: some
      are solved in a few hundred nodes, their neighbours not in
      thousands; probes at other capacities act as restarts): every
      capacity between the bound and the top in turn, the ``i``-th probe
      of the sweep with ``2n`` times the ``i``-th term of Luby's universal
      restart sequence (mostly short probes, and every budget in time), as
      many nodes a round as the descent spent.

    A capacity that did not answer with ``b`` nodes is not probed again
    with ``b`` or fewer (the search is deterministic).

    ``"spread"`` (``best_fit``'s, for its small fixed node budget): rounds
    of a bound probe (as many nodes as the rest of the previous round), a
    binary search and a scan of up to ``SWEEP_PROBES`` capacities spread
    evenly, lowest first, at a budget a probe that doubles each round.

    Node budgets make the result deterministic until ``deadline`` cuts in
    (also while the search is prepared: a dense pool costs O(conflicts) to
    prepare); the rounds do not depend on ``max_nodes``, so a larger one
    replays a smaller one's probes first and never ends higher."""
    if schedule not in SCHEDULES:
        raise ValueError(
            f"unknown schedule {schedule!r}; valid: {', '.join(SCHEDULES)}"
        )
    grain = _grain(pp)
    top = _top(pp, offsets)
    lo = -(-lower // grain) * grain
    if top <= lo or (max_nodes is not None and max_nodes <= 0):
        return PoolResult(list(offsets), top, min(lo, top), 0, 0)
    try:
        search = Search(pp, deadline=deadline)
    except OutOfTime:
        return PoolResult(list(offsets), top, min(lo, top), 0, 0)
    m = _Minimizer(search, list(offsets), top, lo, grain, deadline, max_nodes)
    try:
        if schedule == "spread":
            m.remember = False
            _spread_rounds(m)
        else:
            _descent_rounds(m)
    except _Stop:
        pass
    return PoolResult(m.best, m.top, min(m.lo, m.top), m.probes, m.used)


def _descent_rounds(m: _Minimizer) -> None:
    unit = 2 * max(len(m.search.pp.sizes), 1)
    bound = unit
    above = 0
    k = 0
    while m.top > m.lo:
        bound = max(2 * bound if k else unit, above)
        m.probe(m.lo, bound)
        start = m.used
        if m.top > m.lo:
            m.descend(unit << k)
            m.sweep(unit, max(m.used - start, unit))
        above = m.used - start
        k += 1


def _spread_rounds(m: _Minimizer) -> None:
    budget = 2 * max(len(m.search.pp.sizes), 1)
    spent_above = budget
    scan = 2
    while m.top > m.lo:
        spent_above = m.round(budget, max(spent_above, budget), scan)
        budget *= 2
        scan = min(2 * scan, SWEEP_PROBES)


def grain_of(sizes: Sequence[int], alignments: Sequence[int]) -> int:
    """Every offset and top of a layout of buffers of these sizes and
    alignments is a multiple of this: heights are sums of sizes, rounded up
    to alignments."""
    grain = 0
    for v in (*sizes, *(a for a in alignments if a > 1)):
        grain = gcd(grain, v)
    return max(grain, 1)


def _grain(pp: PoolProblem) -> int:
    return grain_of(pp.sizes, pp.alignments)


def _clipped(
    pp: PoolProblem, sweep: Sweep, a: int, b: int, deadline: float | None = None
) -> PoolProblem:
    """The buffers live in sections ``[a, b)``, their lifetimes cut to those
    sections (section ``k`` is the time ``[k, k + 1)``)."""
    inside = [i for i in range(len(pp.sizes)) if sweep.lo[i] < b and a < sweep.hi[i]]
    problem = Problem(
        tuple(
            Buffer(
                str(x),
                pp.sizes[i],
                max(sweep.lo[i], a),
                min(sweep.hi[i], b),
                pp.alignments[i],
            )
            for x, i in enumerate(inside)
        ),
        (Pool("window", alignment=1),),
    )
    ix = Indexed.of(problem)
    return pool_problem(ix, [0] * len(inside), 0, deadline)[1]


def window_bound(
    pp: PoolProblem,
    lower: int,
    deadline: float | None = None,
    max_nodes: int = 200_000,
    heaviest: int = 4,
) -> int:
    """A lower bound on the top of every layout of ``pp``, at least ``lower``
    (a valid bound, e.g. the liveness peak): fragmentation-aware.

    Cutting the lifetimes of the buffers live in a window of consecutive
    sections down to the window only removes conflicts: no layout of the
    window's problem needs more than a layout of the whole. So a capacity
    the exact search *proves* infeasible for a window (the search finished
    without a layout: a proof, not a time-out) is infeasible for the whole,
    and the bound rises above it. Windows of 3, 5, 9, ... sections (up to all
    of them: the whole problem) centred on the ``heaviest`` sections, each
    probed at the bound until it is not proven infeasible, within
    ``max_nodes`` search nodes in all (deterministic) and ``deadline``.
    Problems with explicit conflicts (not an interval graph): ``lower``."""
    grain = _grain(pp)
    bound = -(-lower // grain) * grain
    try:
        sweep = Sweep.of(pp, deadline)
    except OutOfTime:
        return lower
    n_sec = len(sweep.sections)
    if not sweep.independent or n_sec < 3:
        return lower
    totals = [sum(pp.sizes[i] for i in members) for members in sweep.sections]
    centres = sorted(range(n_sec), key=lambda s: (-totals[s], s))[:heaviest]
    per_probe = max(max_nodes // (4 * heaviest * max(n_sec.bit_length(), 1)), 1)
    used = 0
    width = 3
    while True:
        for c in centres:
            a, b = max(0, c - width // 2), min(n_sec, c + width // 2 + 1)
            try:
                search = Search(_clipped(pp, sweep, a, b, deadline), deadline=deadline)
            except OutOfTime:
                return max(lower, bound)
            while used < max_nodes:
                if deadline is not None and time.process_time() >= deadline:
                    return max(lower, bound)
                r = search.solve(bound, deadline, min(per_probe, max_nodes - used))
                used += r.nodes
                if r.status is not Status.INFEASIBLE:
                    break
                bound += grain
        if width >= n_sec or used >= max_nodes:
            return max(lower, bound)
        width = 2 * width - 1
