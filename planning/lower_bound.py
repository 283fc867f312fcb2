"""Lower bounds on the bytes a plan needs.

Buffers that conflict pairwise form a *clique* of the conflict graph; they must
occupy disjoint bytes, in one pool or spread over several, so the weight (sum
of sizes) of any clique bounds the total bytes of every valid plan from below.

* With interval conflicts only, the conflict graph is an interval graph, whose
  maximum-weight clique is the set of buffers live at one instant: the bound
  is the *liveness peak*, exact, computed by a sweep (``interval_peak``).
* Explicit ``conflicts`` make the graph general (maximum-weight clique is
  NP-hard). ``lower_bound`` then returns the heaviest clique it finds by
  extending each instant's live set, and each buffer with explicit conflicts,
  greedily (heaviest compatible buffer first): still a valid bound, at least
  the liveness peak, but not necessarily the maximum clique.

Alignment padding is not counted (a bound, not an estimate). The bound of the
whole problem bounds the *sum* of all pool sizes; ``pool_lower_bounds`` gives,
for a plan's pool assignment, the bound of the buffers placed in each pool.
"""

from __future__ import annotations

from collections.abc import Iterable

from usmp.planning.model import Buffer, Plan, Problem


def _live(b: Buffer) -> bool:
    return b.size > 0 and b.start < b.end


def interval_peak(buffers: Iterable[Buffer]) -> int:
    """Peak over time of the total size of live buffers (half-open intervals)."""
    events: list[tuple[int, int]] = []
    for b in buffers:
        if _live(b):
            events.append((b.start, b.size))
            events.append((b.end, -b.size))
    # At equal times ends (negative) come first: [s, t) and [t, u) never meet.
    events.sort()
    peak = live = 0
    for _, delta in events:
        live += delta
        peak = max(peak, live)
    return peak


def _instant_cliques(buffers: list[Buffer]) -> list[list[Buffer]]:
    """The live set at each interval start (the maximal interval cliques)."""
    live = sorted((b for b in buffers if _live(b)), key=lambda b: (b.start, b.name))
    cliques: list[list[Buffer]] = []
    active: list[Buffer] = []
    for k, b in enumerate(live):
        active = [a for a in active if a.end > b.start]
        active.append(b)
        if k + 1 == len(live) or live[k + 1].start != b.start:
            cliques.append(list(active))
    return cliques


def lower_bound(problem: Problem) -> int:
    """A clique weight of the problem's conflict graph (see module doc)."""
    buffers = [b for b in problem.buffers if b.size > 0]
    peak = interval_peak(buffers)
    if not any(b.conflicts for b in buffers):
        return peak
    graph = problem.conflict_graph()
    seeds = _instant_cliques(buffers)
    seeds += [[b] for b in buffers if b.conflicts]
    size = {b.name: b.size for b in buffers}
    best = peak
    for seed in seeds:
        weight = sum(b.size for b in seed)
        common = set.intersection(*(graph[b.name] for b in seed)) & size.keys()
        # Heaviest first among the buffers adjacent to every member so far.
        for name in sorted(common, key=lambda m: (-size[m], m)):
            if name in common:
                weight += size[name]
                common &= graph[name]
        best = max(best, weight)
    return best


def pool_lower_bounds(problem: Problem, plan: Plan) -> dict[str, int]:
    """Per pool, the lower bound of the buffers ``plan`` places in it."""
    out: dict[str, int] = {}
    for pool in problem.pools:
        placed = tuple(
            b for b in problem.buffers if plan.placements[b.name].pool == pool.name
        )
        out[pool.name] = lower_bound(Problem(placed, problem.pools)) if placed else 0
    return out
