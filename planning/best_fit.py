"""The project's default planner: best of a portfolio, then a budgeted search.

1. *Portfolio.* The buffers are placed in several orders (size, conflicts,
   lifetime, area, start, conflicting bytes; ties by name) with the
   gap-reusing ``first_fit`` and ``best_fit`` offset rules, plus TVM's
   greedy-by-size and greedy-by-conflicts (``after_conflicts``), plus TVM's
   seeded hill climb. The cheapest plan (total bytes; on ties, the one using
   the preferred pools more) wins, so this planner is never worse than any
   other in ``ALGORITHMS``, and it succeeds whenever any of those orders fits
   the size limits.
   Above ``large`` buffers (2,000) only the size order's first-fit and
   best-fit decodes run (no hill climb, no search): O(n log n + conflicts).
2. *Search.* While a pool of that plan is above its liveness lower bound, its
   buffers are re-laid out (pool assignment kept) by the MiniMalloc-style
   branch and bound of ``branch_and_bound.py``: an exact search at the lower
   bound, then capacity squeezing. The budget counts work, not seconds, so
   the plan is the same on every machine.

``stats`` of the plan: ``lower_bound`` (of the whole problem),
``portfolio_bytes`` (before the search), ``search_work``, and
``pools_optimal``: 1.0 when the layout of every pool is optimal for the
buffers assigned to it (it reached their lower bound, or the search proved
that nothing lower fits).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from usmp.planning.branch_and_bound import PoolProblem, minimize
from usmp.planning.hill_climb import HillClimb
from usmp.planning.lower_bound import lower_bound
from usmp.planning.model import Plan, PlanningError, Problem
from usmp.planning.placement import OFFSET_RULES, Indexed, OffsetRule, cost, decode

_OrderKey = Callable[[int], tuple[object, ...]]


def _orders(ix: Indexed) -> list[tuple[list[int], tuple[OffsetRule, ...]]]:
    """(order, offset rules to decode it with) of the portfolio."""
    n = len(ix.names)
    b = ix.buffers
    sizes, names, nbrs = ix.sizes, ix.names, ix.neighbours
    conflict_bytes = [sum(sizes[j] for j in nbrs[i]) + sizes[i] for i in range(n)]
    gap_rules: tuple[OffsetRule, ...] = ("first_fit", "best_fit")
    keys: list[tuple[_OrderKey, tuple[OffsetRule, ...]]] = [
        (lambda i: (-sizes[i], -len(nbrs[i]), names[i]), OFFSET_RULES),
        (lambda i: (-len(nbrs[i]), -sizes[i], names[i]), OFFSET_RULES),
        (lambda i: (-conflict_bytes[i], -sizes[i], names[i]), gap_rules),
        (lambda i: (-(b[i].end - b[i].start), -sizes[i], names[i]), gap_rules),
        (
            lambda i: (-sizes[i] * (b[i].end - b[i].start), -sizes[i], names[i]),
            gap_rules,
        ),
        (lambda i: (b[i].start, -sizes[i], names[i]), gap_rules),
    ]
    return [(sorted(range(n), key=key), rules) for key, rules in keys]


@dataclass(frozen=True)
class BestFit:
    """``Problem -> Plan``. ``search_budget``: work units for the search phase
    (about 3 million per second of CPython), at most ``search_per_buffer2``
    times the square of the number of buffers, so small problems stay fast;
    ``seed``: for the search's randomness; ``hill_climb``: the hill climb run
    in the portfolio (by default the one registered as ``hill_climb``)."""

    search_budget: int = 3_000_000
    search_per_buffer2: int = 100
    seed: int = 0
    hill_climb: HillClimb = field(default_factory=HillClimb)
    large: int = 2_000

    def __call__(self, problem: Problem) -> Plan:
        ix = Indexed.of(problem)
        best: tuple[tuple[int, tuple[int, ...]], list[int], list[int]] | None = None
        first_error: PlanningError | None = None
        large = len(ix.names) > self.large
        orders = _orders(ix)
        if large:  # linear time: the two gap-reusing decodes of the size order
            gap_rules: tuple[OffsetRule, ...] = ("first_fit", "best_fit")
            orders = [(orders[0][0], gap_rules)]
        for order, rules in orders:
            for rule in rules:
                try:
                    pools, offsets = decode(ix, order, rule)
                except PlanningError as e:
                    first_error = first_error or e
                    continue
                c = cost(ix, pools, offsets)
                if best is None or c < best[0]:
                    best = (c, pools, offsets)
        climbed: Plan | None = None
        if not large:  # the hill climb re-decodes hundreds of times
            try:
                climbed = self.hill_climb(problem)
            except PlanningError as e:
                first_error = first_error or e
        if climbed is not None:
            pool_index = {p.name: k for k, p in enumerate(problem.pools)}
            pools = [pool_index[climbed.placements[n].pool] for n in ix.names]
            offsets = [climbed.placements[n].offset for n in ix.names]
            c = cost(ix, pools, offsets)
            if best is None or c < best[0]:
                best = (c, pools, offsets)
        if best is None:
            assert first_error is not None
            raise first_error
        portfolio_bytes, pools, offsets = best[0][0], best[1], list(best[2])

        work = 0
        budget = min(self.search_budget, self.search_per_buffer2 * len(ix.names) ** 2)
        if large:
            budget = 0
        optimal = True
        for k in range(len(problem.pools)):
            members = [i for i in range(len(ix.names)) if pools[i] == k and ix.sizes[i]]
            if not members:
                continue
            local = {i: x for x, i in enumerate(members)}
            subset = tuple(ix.buffers[i] for i in members)
            bound = lower_bound(Problem(subset, problem.pools))
            pp = PoolProblem(
                sizes=[ix.sizes[i] for i in members],
                starts=[ix.buffers[i].start for i in members],
                ends=[ix.buffers[i].end for i in members],
                alignments=[
                    ix.alignments[i][ix.candidates[i].index(k)] for i in members
                ],
                neighbours=[
                    [local[j] for j in ix.neighbours[i] if j in local] for i in members
                ],
            )
            result = minimize(
                pp,
                [offsets[i] for i in members],
                bound,
                max(budget - work, 0),
                seed=self.seed,
            )
            work += result.work
            optimal = optimal and result.optimal
            for x, i in enumerate(members):
                offsets[i] = result.offsets[x]
        return Plan(
            ix.placements(pools, offsets),
            algorithm="best_fit",
            stats={
                "lower_bound": float(lower_bound(problem)),
                "portfolio_bytes": float(portfolio_bytes),
                "search_work": float(work),
                "pools_optimal": float(optimal),
            },
        )


best_fit = BestFit()
