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
   best-fit decodes run (no hill climb, no search). The decodes run in C
   (``placement_native``: the Python decode's placements, found from the
   live intervals, never from a list of every conflicting pair), and the
   orders' keys are counted with prefix sums, so a large problem costs
   O(n log n) memory and C time per conflict, however many buffers are
   live at once (50,000 buffers, ~500 live: about 2 s). The hill climb
   runs only where one of its decodes fits its work budget (on a dense
   problem it could not finish one attempt).
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

With a ``deadline`` (``time.process_time()``; what ``optimal`` gives its
start) every phase stops once it has passed: the portfolio after its first
plan, the hill climb after an attempt, the search after a probe or while
it is being prepared.

``stats`` of the plan: ``lower_bound`` (of the whole problem),
``portfolio_bytes`` (before the search), ``search_nodes``, and
``pools_optimal``: 1.0 when the layout of every pool is optimal for the
buffers assigned to it (it reached their lower bound, or the search proved
that nothing lower fits).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from usmp.planning.hill_climb import HillClimb
from usmp.planning.lower_bound import lower_bound
from usmp.planning.minimalloc_native import load
from usmp.planning.minimalloc_solver import OutOfTime
from usmp.planning.minimize import grain_of, minimize_pool, pool_problem
from usmp.planning.model import Plan, PlanningError, Problem
from usmp.planning.placement import (
    OFFSET_RULES,
    Indexed,
    OffsetRule,
    cost,
    decode,
    lane_layout,
)
from usmp.planning.placement_native import native_decoder

# How much slower the Python search is than the C one (both run the same
# nodes): the budget is divided by it when the C search cannot be built.
PYTHON_SLOWDOWN = 30

_OrderKey = Callable[[int], tuple[object, ...]]


def _size_order(ix: Indexed) -> list[int]:
    """Largest first; ties: more conflicts first, then by name."""
    sizes, names, degrees = ix.sizes, ix.names, ix.degrees
    return sorted(range(len(names)), key=lambda i: (-sizes[i], -degrees[i], names[i]))


def _orders(ix: Indexed) -> list[tuple[list[int], tuple[OffsetRule, ...]]]:
    """(order, offset rules to decode it with) of the portfolio."""
    n = len(ix.names)
    b = ix.buffers
    sizes, names, degrees = ix.sizes, ix.names, ix.degrees
    conflict_bytes = ix.conflict_bytes
    gap_rules: tuple[OffsetRule, ...] = ("first_fit", "best_fit")
    keys: list[tuple[_OrderKey, tuple[OffsetRule, ...]]] = [
        (lambda i: (-degrees[i], -sizes[i], names[i]), OFFSET_RULES),
        (lambda i: (-conflict_bytes[i], -sizes[i], names[i]), gap_rules),
        (lambda i: (-(b[i].end - b[i].start), -sizes[i], names[i]), gap_rules),
        (
            lambda i: (-sizes[i] * (b[i].end - b[i].start), -sizes[i], names[i]),
            gap_rules,
        ),
        (lambda i: (b[i].start, -sizes[i], names[i]), gap_rules),
    ]
    orders = [(_size_order(ix), OFFSET_RULES)]
    orders += [(sorted(range(n), key=key), rules) for key, rules in keys]
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

    def __call__(
        self,
        problem: Problem,
        deadline: float | None = None,
        ix: Indexed | None = None,
        first_by: float | None = None,
    ) -> Plan:
        """The plan; with ``deadline`` (a ``time.process_time()`` value) each
        phase stops once it has passed (the portfolio after its first plan,
        the hill climb after an attempt, the search after a probe), so the
        plan is then the best found by that time. A first decode that the
        deadline (or ``first_by``, when given) cuts short, or that would
        start after it, gives way to ``lane_layout`` (linear time, up
        to twice the bytes) where that applies. ``ix``: the problem indexed
        already (by the caller)."""
        ix = ix or Indexed.of(problem)
        best: tuple[tuple[int, tuple[int, ...]], list[int], list[int]] | None = None
        first_error: PlanningError | None = None
        large = len(ix.names) > self.large
        gap_rules: tuple[OffsetRule, ...] = ("first_fit", "best_fit")
        first_by = deadline if first_by is None else first_by
        # no time left for a decode (or for its orders): lanes, if they apply
        quick = lane_layout(ix) if _past(first_by) else None
        orders = []
        if quick is None:  # linear time when large: the size order's two decodes
            orders = [(_size_order(ix), gap_rules)] if large else _orders(ix)
            quick = lane_layout(ix) if _past(first_by) else None
        if quick is not None:
            best = (cost(ix, *quick), *quick)
            orders = []
        native = native_decoder(ix) if orders else None
        for order, rules in orders:
            for rule in rules:
                if best is not None and _past(deadline):
                    break
                try:
                    if native is not None:
                        pools, offsets = native.decode(
                            order, rule, first_by if best is None else deadline
                        )
                    else:
                        pools, offsets = decode(ix, order, rule)
                except PlanningError as e:
                    first_error = first_error or e
                    continue
                except OutOfTime:
                    if best is not None:
                        break
                    # the first plan cut short: a layout is needed
                    quick = lane_layout(ix)
                    if quick is None:  # no such layout: the decode, uncut
                        assert native is not None
                        pools, offsets = native.decode(order, rule)
                    else:
                        pools, offsets = quick
                c = cost(ix, pools, offsets)
                if best is None or c < best[0]:
                    best = (c, pools, offsets)
        climbed: Plan | None = None
        # The hill climb re-decodes hundreds of times, until the lower bound:
        # with allowed overlaps (whose finer bound it seldom reaches, and
        # whose orders it does not know) it would spend its whole budget, and
        # so it would where a single decode (visiting every conflict) costs
        # more than its whole budget.
        if (
            not large
            and not ix.forbidden
            and sum(ix.degrees) <= self.hill_climb.work_budget
            and not _past(deadline)
        ):
            try:
                climbed = self.hill_climb(problem, deadline)
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
        searching = load() is not None
        whole = lower_bound(problem)
        sized = sum(1 for size in ix.sizes if size)
        for k in range(len(problem.pools)):
            members = [i for i in range(len(ix.names)) if pools[i] == k and ix.sizes[i]]
            if not members:
                continue
            subset = tuple(ix.buffers[i] for i in members)
            # one pool holding every sized buffer: the problem's own bound
            lower = (
                whole
                if len(members) == sized and not problem.overlaps
                else lower_bound(Problem(subset, problem.pools))
            )
            pp = None
            if not large:  # large: no search, the layout as decoded
                try:
                    pp = pool_problem(ix, pools, k, deadline)[1]
                except OutOfTime:
                    pass
            if pp is None:
                top = max(offsets[i] + ix.sizes[i] for i in members)
                grain = grain_of(
                    [ix.sizes[i] for i in members],
                    [ix.alignments[i][ix.candidates[i].index(k)] for i in members],
                )
                proven = min(-(-lower // grain) * grain, top)
            else:
                # A work budget (nodes x buffers: the cost of a node grows
                # with the buffers); the Python search is far slower, so
                # without the C one the budget shrinks (the plan then
                # differs).
                budget = self.search_work // len(members)
                if not searching:
                    budget //= PYTHON_SLOWDOWN
                result = minimize_pool(
                    pp,
                    [offsets[i] for i in members],
                    lower,
                    deadline,
                    budget,
                    schedule="spread",
                )
                nodes += result.nodes
                top, proven = result.top, result.proven_lower
                for x, i in enumerate(members):
                    offsets[i] = result.offsets[x]
            # The search keeps every conflicting pair disjoint: with allowed
            # overlaps its infeasibility proofs do not bound this pool, only
            # the finer bound does.
            names = {b.name for b in subset}
            finer = tuple(
                o for o in problem.overlaps if o.source in names and o.target in names
            )
            if finer:
                proven = lower_bound(Problem(subset, problem.pools, finer))
            optimal = optimal and top <= proven
        return Plan(
            ix.placements(pools, offsets),
            algorithm="best_fit",
            stats={
                "lower_bound": float(whole),
                "portfolio_bytes": float(portfolio_bytes),
                "search_nodes": float(nodes),
                "pools_optimal": float(optimal),
            },
        )


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.process_time() >= deadline


best_fit = BestFit()
