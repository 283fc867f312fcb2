"""The project's default planner: best of a portfolio, then a budgeted search.

1. *Portfolio.* The buffers are placed in several orders (size, conflicts,
   lifetime, area, start, conflicting bytes; ties by name) with the
   gap-reusing ``first_fit`` and ``best_fit`` offset rules, plus TVM's
   greedy-by-size and greedy-by-conflicts (``after_conflicts``), plus TVM's
   seeded hill climb (not with allowed overlaps: see below). The cheapest
   plan (total bytes; on ties, the one using the preferred pools more) wins,
   so this planner is never worse than any other in ``ALGORITHMS`` (without
   overlaps), and it succeeds whenever any of those orders fits the size
   limits.
   Above ``large`` buffers (2,000) only the size order's first-fit and
   best-fit decodes run (no hill climb, no search): O(n log n + conflicts).
   Allowed overlaps (``model.Overlap``) shape every gap-reusing decode.
2. *Search.* While a pool of that plan is above its lower bound, its buffers
   are re-laid out (pool assignment kept) by MiniMalloc's search
   (``minimize.minimize_pool`` over ``minimalloc_solver``, in C when a
   compiler is there): probes at capacities between the bound and the best
   top. The budget counts search nodes, not seconds, so the plan is the
   same on every machine (that has a C compiler: see ``PYTHON_SLOWDOWN``).
   The search treats allowed overlaps as conflicts (its target is the
   no-alias bound of the pool): it only runs while the portfolio's plan is
   above that bound, and keeps the portfolio's plan unless it finds a lower
   one.

``stats`` of the plan: ``lower_bound`` (of the whole problem),
``portfolio_bytes`` (before the search), ``search_nodes``, and
``pools_optimal``: 1.0 when the layout of every pool is optimal for the
buffers assigned to it (it reached their lower bound, or the search proved
that nothing lower fits).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from usmp.planning.hill_climb import HillClimb
from usmp.planning.lower_bound import lower_bound
from usmp.planning.minimalloc_native import load
from usmp.planning.minimize import minimize_pool, pool_problem
from usmp.planning.model import Plan, PlanningError, Problem
from usmp.planning.placement import OFFSET_RULES, Indexed, OffsetRule, cost, decode

# How much slower the Python search is than the C one (both run the same
# nodes): the budget is divided by it when the C search cannot be built.
PYTHON_SLOWDOWN = 30

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
    orders = [(sorted(range(n), key=key), rules) for key, rules in keys]
    if ix.forbidden:
        orders += [
            (targets_first(ix, order, depth), gap_rules)
            for depth in (1, len(ix.names))
            for order, _ in list(orders)
        ]
    return orders


def targets_first(ix: Indexed, order: list[int], depth: int) -> list[int]:
    """``order`` with the upper buffer of each allowed overlap moved after
    the lower one, and so on ``depth`` levels deep: an overlap puts the
    target below its source (``max_shift``; or above it, ``min_shift``), and
    the lower one placed first leaves the upper one room just above it,
    where the upper one placed first (say at 0) leaves none."""
    index = {name: i for i, name in enumerate(ix.names)}
    targets: dict[int, list[int]] = {}
    for o in ix.problem.overlaps:
        if o.source in index and o.target in index:
            s, t = index[o.source], index[o.target]
            if o.min_shift is not None and o.max_shift <= -ix.sizes[t]:
                s, t = t, s  # the target goes above: its source first
            targets.setdefault(s, []).append(t)
    out: list[int] = []
    done: set[int] = set()
    for first in order:
        stack = [(first, False, 0)]
        while stack:  # depth first, targets before their source
            i, expanded, level = stack.pop()
            if i in done:
                continue
            if expanded or level >= depth:
                done.add(i)
                out.append(i)
                continue
            stack.append((i, True, level))
            stack.extend(
                (t, False, level + 1)
                for t in reversed(targets.get(i, ()))
                if t not in done
            )
    return out


@dataclass(frozen=True)
class BestFit:
    """``Problem -> Plan``. ``search_work``: the search phase's budget per
    pool, in nodes times buffers (4 million: about 0.1-0.5 s of the C
    search on a few hundred buffers); ``hill_climb``: the hill climb run in
    the portfolio (by default the one registered as ``hill_climb``)."""

    search_work: int = 4_000_000
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
        # The hill climb re-decodes hundreds of times, until the lower bound:
        # with allowed overlaps (whose finer bound it seldom reaches, and
        # whose orders it does not know) it would spend its whole budget.
        if not large and not ix.forbidden:
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

        nodes = 0
        optimal = True
        native = load() is not None
        for k in range(len(problem.pools)):
            members, pp = pool_problem(ix, pools, k)
            if not members:
                continue
            subset = tuple(ix.buffers[i] for i in members)
            # A work budget (nodes x buffers: the cost of a node grows with
            # the buffers); the Python search is far slower, so without the
            # C one the budget shrinks (the plan then differs).
            budget = self.search_work // len(members)
            if not native:
                budget //= PYTHON_SLOWDOWN
            if large:
                budget = 0
            result = minimize_pool(
                pp,
                [offsets[i] for i in members],
                lower_bound(Problem(subset, problem.pools)),
                None,
                max_nodes=budget,
            )
            nodes += result.nodes
            # The search keeps every conflicting pair disjoint: with allowed
            # overlaps its infeasibility proofs do not bound this pool, only
            # the finer bound does.
            names = {b.name for b in subset}
            finer = tuple(
                o for o in problem.overlaps if o.source in names and o.target in names
            )
            proven = (
                lower_bound(Problem(subset, problem.pools, finer))
                if finer
                else result.proven_lower
            )
            optimal = optimal and result.top <= proven
            for x, i in enumerate(members):
                offsets[i] = result.offsets[x]
        return Plan(
            ix.placements(pools, offsets),
            algorithm="best_fit",
            stats={
                "lower_bound": float(lower_bound(problem)),
                "portfolio_bytes": float(portfolio_bytes),
                "search_nodes": float(nodes),
                "pools_optimal": float(optimal),
            },
        )


best_fit = BestFit()
