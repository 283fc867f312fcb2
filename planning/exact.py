"""The exact planner ``optimal``: MiniMalloc's search under a time limit.

1. *Start*: the default planner's plan (``best_fit``, given at most
   ``HEURISTIC_SHARE`` of the time: cut there, its best plan so far): its
   pool assignment is kept, and its layout is the first upper bound of
   every pool. When it
   fails a size limit and every buffer has a single candidate pool, each
   pool's limit is instead decided by the search (feasible: that layout is
   the start; proven infeasible or out of time: :class:`PlanningError`).
2. *Per pool*, the decision procedure of ``minimalloc_solver`` (MiniMalloc's
   canonical search, in C when a compiler is there) turns into an optimiser
   (``minimize.minimize_pool``, its ``descent`` schedule): rounds of a
   probe at the lower bound (half the effort, doubling), a galloping descent
   from the best top (doubling node budgets) and a sweep of every capacity
   in between at short budgets; a probe that finds a layout lowers the
   top to that layout's, a probe that finishes without one proves a higher
   bound, until the pool's share of the time is spent (``window_bound``'s
   twentieth and the search's preparation included). A pool with more than
   ``SEARCH_CONFLICTS`` conflicts keeps the start's layout.

Every phase ends by the time limit (CPU seconds, from the call): the
start, the bounds, the preparation of each pool's search (its conflict
lists and sections), the search itself. The start's first decode (which
visits every conflict) runs until a reserve before the limit; cut short, the
start is ``placement.lane_layout`` (linear time, up to twice the bytes): a
plan is always returned. Only a problem with allowed overlaps, where lanes
do not apply, still runs its first decode uncut.

The plan says what was proven, in ``stats``: ``lower_bound`` (liveness /
clique bound of the problem), ``proven_lower_bound`` (at least that, raised
by ``minimize.window_bound``, a fragmentation-aware bound from windows of the
problem, and by every capacity the search proved infeasible), ``optimal`` (1.0 when the
plan's bytes equal the proven lower bound), ``gap`` (bytes / proven bound - 1)
and ``heuristic_bytes`` (the start). Probes have node budgets, but the
whole run a CPU-time deadline (``time.process_time``), so a plan that is not
proven optimal can depend on the machine's speed (how many rounds fit); a
proven optimum cannot.

Allowed overlaps (``model.Overlap``): the start uses them, the search keeps
every conflicting pair disjoint (MiniMalloc's canonical solutions assume
it), so it only improves a pool that the start left above its no-alias
bound, and only the finer lower bound counts as proven.

Pools are laid out independently. With several candidate pools per buffer the
assignment is the heuristic's, and optimality is claimed only when the plan
reaches the problem's lower bound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from usmp.planning.best_fit import best_fit
from usmp.planning.lower_bound import lower_bound
from usmp.planning.minimalloc_solver import OutOfTime, Status, solve
from usmp.planning.minimize import minimize_pool, pool_problem, window_bound
from usmp.planning.model import Plan, PlanningError, Problem
from usmp.planning.placement import Indexed

DEFAULT_TIME_LIMIT = 10.0
# The share of a pool's time spent on ``window_bound`` (when the start is not
# at the liveness bound).
WINDOW_SHARE = 0.05
# The search runs on pools of at most this many conflicts (counted from
# both sides): its conflict lists and sections cost about 25 bytes each in
# Python and C (10 million: about 250 MB), and a node grows with them.
SEARCH_CONFLICTS = 10_000_000
# At most this share of the time limit goes to the heuristic start
# (``best_fit``, which stops once its deadline has passed).
HEURISTIC_SHARE = 0.5
# Its first plan (a decode visits every conflict, which a dense problem may
# not leave time for; cut short, it gives way to a lane layout in linear
# time) must end this many times the problem's indexing time before the
# limit: the lane layout, the bound and turning placements into the plan
# are linear too, together about four times the indexing (0.6 s at 50,000
# buffers here).
FINISH_RESERVE = 4.0


@dataclass(frozen=True)
class Optimal:
    """``Problem -> Plan``: MiniMalloc's exact search, ``time_limit`` CPU
    seconds in all (the heuristic start included)."""

    time_limit: float = DEFAULT_TIME_LIMIT

    def __call__(self, problem: Problem) -> Plan:
        start = time.process_time()
        deadline = start + self.time_limit
        ix = Indexed.of(problem)
        reserve = FINISH_RESERVE * (time.process_time() - start)
        n = len(ix.names)
        single = all(len(c) == 1 for c in ix.candidates)
        heuristic_deadline = start + HEURISTIC_SHARE * self.time_limit
        try:
            heuristic = best_fit(
                problem,
                heuristic_deadline,
                ix,
                first_by=max(deadline - reserve, heuristic_deadline),
            )
        except PlanningError as e:
            if not single:
                raise
            heuristic = self._decide(problem, ix, deadline, e)
        pool_index = {p.name: k for k, p in enumerate(problem.pools)}
        pools = [pool_index[heuristic.placements[x].pool] for x in ix.names]
        offsets = [heuristic.placements[x].offset for x in ix.names]
        heuristic_bytes = sum(heuristic.pool_sizes(problem).values())
        known = heuristic.stats.get("lower_bound")  # best_fit's, when it ran
        bound = int(known) if known is not None else lower_bound(problem)
        used = sorted({pools[i] for i in range(n) if ix.sizes[i]})
        if time.process_time() >= deadline:
            used = []  # no time to search: the start's layout
        conflicts = [0] * len(problem.pools)
        for i, degree in enumerate(ix.degrees if used else ()):
            conflicts[pools[i]] += degree
        proven = 0
        for x, k in enumerate(used):
            if conflicts[k] > SEARCH_CONFLICTS:
                continue  # too dense to search: the start's layout
            try:
                members, pp = pool_problem(ix, pools, k, deadline)
            except OutOfTime:  # this pool and the next keep the start's layout
                break
            now = time.process_time()
            share = max(deadline - now, 0.0) / (len(used) - x)
            sub = Problem(tuple(ix.buffers[i] for i in members), problem.pools)
            lower = (
                bound
                if len(members) == sum(1 for size in ix.sizes if size)
                and not problem.overlaps
                else lower_bound(sub)
            )
            start_offsets = [offsets[i] for i in members]
            if max(o + s for o, s in zip(start_offsets, pp.sizes, strict=True)) > lower:
                # Not at the bound: a twentieth of the time for a better one.
                lower = window_bound(pp, lower, now + WINDOW_SHARE * share)
            # the pool's share counts from its start: the bound's time included
            result = minimize_pool(pp, start_offsets, lower, now + share)
            proven += result.proven_lower
            for y, i in enumerate(members):
                offsets[i] = result.offsets[y]
        plan = Plan(ix.placements(pools, offsets), algorithm="optimal")
        total = sum(plan.pool_sizes(problem).values())
        # the search keeps every pair disjoint: with allowed overlaps only
        # the finer bound is proven
        proven = max(bound, proven) if single and not problem.overlaps else bound
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
            try:
                members, pp = pool_problem(ix, pools, k, deadline)
            except OutOfTime:
                raise error from None
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
