"""The exact planner ``optimal``: MiniMalloc's search under a time limit.

1. *Start*: the default planner's plan (``best_fit``): its pool assignment
   is kept, and its layout is the first upper bound of every pool. When it
   fails a size limit and every buffer has a single candidate pool, each
   pool's limit is instead decided by the search (feasible: that layout is
   the start; proven infeasible or out of time: :class:`PlanningError`).
2. *Per pool*, the decision procedure of ``minimalloc_solver`` (MiniMalloc's
   canonical search) turns into an optimiser: first a probe at the lower
   bound with half the pool's time (found: optimal), then rounds of short
   probes between the proven lower bound and the best top so far (see
   :func:`minimize_pool`); a probe that finds a layout lowers the top to that
   layout's, a probe that finishes without one proves a higher bound.

The plan says what was proven, in ``stats``: ``lower_bound`` (liveness /
clique bound of the problem), ``proven_lower_bound`` (at least that, raised
by every capacity the search proved infeasible), ``optimal`` (1.0 when the
plan's bytes equal the proven lower bound), ``gap`` (bytes / proven bound - 1)
and ``heuristic_bytes`` (the start). Every probe has a CPU-time deadline
(``time.process_time``), so a plan that is not proven optimal can depend on
the machine's speed; a proven optimum cannot.

Pools are laid out independently. With several candidate pools per buffer the
assignment is the heuristic's, and optimality is claimed only when the plan
reaches the problem's lower bound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from math import gcd

from usmp.planning.best_fit import best_fit
from usmp.planning.branch_and_bound import PoolProblem
from usmp.planning.lower_bound import lower_bound
from usmp.planning.minimalloc_solver import Status, solve
from usmp.planning.model import Plan, PlanningError, Problem
from usmp.planning.placement import Indexed

DEFAULT_TIME_LIMIT = 10.0


def pool_problem(
    ix: Indexed, pools: list[int], k: int
) -> tuple[list[int], PoolProblem]:
    """The buffers ``pools`` puts in pool ``k`` (with a size) as a one-pool
    problem, with their indices in ``ix``."""
    members = [i for i in range(len(ix.names)) if pools[i] == k and ix.sizes[i]]
    local = {i: x for x, i in enumerate(members)}
    return members, PoolProblem(
        sizes=[ix.sizes[i] for i in members],
        starts=[ix.buffers[i].start for i in members],
        ends=[ix.buffers[i].end for i in members],
        alignments=[ix.alignments[i][ix.candidates[i].index(k)] for i in members],
        neighbours=[
            [local[j] for j in ix.neighbours[i] if j in local] for i in members
        ],
    )


def _top(pp: PoolProblem, offsets: list[int]) -> int:
    return max((o + s for o, s in zip(offsets, pp.sizes, strict=True)), default=0)


@dataclass(frozen=True)
class PoolResult:
    offsets: list[int]
    top: int
    proven_lower: int  # no layout of this pool ends below this
    probes: int


def minimize_pool(
    pp: PoolProblem,
    offsets: list[int],
    lower: int,
    deadline: float,
) -> PoolResult:
    """Lower the top of the valid layout ``offsets`` of one pool, down to
    ``lower`` at best, until ``deadline`` (a ``time.process_time()`` value)."""
    # Every offset and top is a multiple of ``grain``: heights are sums of
    # sizes, rounded up to alignments.
    grain = 0
    for v in (*pp.sizes, *(a for a in pp.alignments if a > 1)):
        grain = gcd(grain, v)
    grain = max(grain, 1)

    def up(v: int) -> int:
        return -(-v // grain) * grain

    best, top = list(offsets), _top(pp, offsets)
    lo = up(lower)
    probes = 0
    if top <= lo:
        return PoolResult(best, top, top, probes)
    # The bound first: often reached, and then nothing else is needed.
    now = time.process_time()
    r = solve(pp, lo, now + 0.5 * max(deadline - now, 0.0))
    probes += 1
    if r.status is Status.FOUND:
        return PoolResult(r.offsets, _top(pp, r.offsets), lo, probes)
    if r.status is Status.INFEASIBLE:
        lo += grain
    # Then rounds of probes under the best top, from the farthest (the
    # bound) to the nearest (one grain below), each with the round's CPU
    # budget; a layout found restarts the round under its top, a proof of
    # infeasibility raises the bound, and a round without progress doubles
    # the budget. (How hard a capacity is varies erratically with it, so many
    # short probes beat a few long ones.)
    budget = 0.25
    while top > lo:
        progress = False
        jumps = []
        k = 1
        while top - k * grain > lo:
            jumps.append(top - k * grain)
            k *= 2
        jumps.append(lo)
        for capacity in reversed(jumps):
            now = time.process_time()
            if now >= deadline:
                return PoolResult(best, top, min(lo, top), probes)
            r = solve(pp, capacity, min(deadline, now + budget))
            probes += 1
            if r.status is Status.FOUND:
                best, top = r.offsets, _top(pp, r.offsets)
                progress = True
                break
            if r.status is Status.INFEASIBLE:
                lo = capacity + grain
                progress = True
                break
        if not progress:
            budget *= 2
    return PoolResult(best, top, min(lo, top), probes)


@dataclass(frozen=True)
class Optimal:
    """``Problem -> Plan``: MiniMalloc's exact search, ``time_limit`` CPU
    seconds in all (the heuristic start included)."""

    time_limit: float = DEFAULT_TIME_LIMIT

    def __call__(self, problem: Problem) -> Plan:
        start = time.process_time()
        deadline = start + self.time_limit
        ix = Indexed.of(problem)
        n = len(ix.names)
        single = all(len(c) == 1 for c in ix.candidates)
        try:
            heuristic = best_fit(problem)
        except PlanningError as e:
            if not single:
                raise
            heuristic = self._decide(problem, ix, deadline, e)
        pool_index = {p.name: k for k, p in enumerate(problem.pools)}
        pools = [pool_index[heuristic.placements[x].pool] for x in ix.names]
        offsets = [heuristic.placements[x].offset for x in ix.names]
        heuristic_bytes = sum(heuristic.pool_sizes(problem).values())
        bound = lower_bound(problem)
        used = sorted({pools[i] for i in range(n) if ix.sizes[i]})
        proven = 0
        for x, k in enumerate(used):
            members, pp = pool_problem(ix, pools, k)
            share = (deadline - time.process_time()) / (len(used) - x)
            sub = Problem(tuple(ix.buffers[i] for i in members), problem.pools)
            result = minimize_pool(
                pp,
                [offsets[i] for i in members],
                lower_bound(sub),
                time.process_time() + max(share, 0.0),
            )
            proven += result.proven_lower
            for y, i in enumerate(members):
                offsets[i] = result.offsets[y]
        plan = Plan(ix.placements(pools, offsets), algorithm="optimal")
        total = sum(plan.pool_sizes(problem).values())
        proven = max(bound, proven) if single else bound
        return Plan(
            plan.placements,
            algorithm="optimal",
            stats={
                "lower_bound": float(bound),
                "proven_lower_bound": float(proven),
                "optimal": float(total <= proven),
                "gap": total / proven - 1 if proven else 0.0,
                "heuristic_bytes": float(heuristic_bytes),
                "cpu_seconds": time.process_time() - start,
            },
        )

    def _decide(
        self, problem: Problem, ix: Indexed, deadline: float, error: PlanningError
    ) -> Plan:
        """Every buffer has one candidate pool and the heuristic broke a
        limit: decide each pool's limit with the search; ``error`` (the
        heuristic's) when a limit is proven infeasible or the time is up."""
        pools = [c[0] for c in ix.candidates]
        offsets = [0] * len(ix.names)
        for k, pool in enumerate(problem.pools):
            members, pp = pool_problem(ix, pools, k)
            if not members:
                continue
            limit = pool.size_limit
            capacity = limit if limit is not None else sum(pp.sizes)
            r = solve(pp, capacity, deadline)
            if r.status is not Status.FOUND:
                raise error
            for y, i in enumerate(members):
                offsets[i] = r.offsets[y]
        return Plan(ix.placements(pools, offsets), algorithm="optimal")


optimal = Optimal()
