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

* With ``overlaps`` (``model.Overlap``) a pair may share bytes: at each
  instant the bound is the live bytes minus, for each allowed pair live
  then, the most bytes the pair can share (Bonferroni: the union of sets is
  at least the sum of sizes minus the pairwise intersections), the *finer*
  bound; ``no_alias_bound`` is the bound without the overlaps.

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


def overlap_saving(
    source: int, target: int, max_shift: int, min_shift: int | None = None
) -> int:
    """The most bytes a source and a target buffer of these sizes can share
    when ``target - source <= max_shift`` or ``>= min_shift``."""
    if max_shift >= min(0, source - target):
        span = max(source, target)
    else:
        span = max(source - max_shift, target)
    if min_shift is not None:
        if min_shift <= max(0, source - target):
            span = max(source, target)
        else:
            span = min(span, min_shift + target)
    return max(0, source + target - span)


def no_alias_bound(problem: Problem) -> int:
    """The bound with every conflicting pair disjoint (overlaps ignored)."""
    return lower_bound(Problem(problem.buffers, problem.pools))


def _finer_bound(problem: Problem, buffers: list[Buffer]) -> int:
    """The heaviest instant: live bytes minus the savings of the allowed
    pairs live then, at each start (a sweep over start, end and pair
    events: O((n + overlaps) log n), never the live sets themselves)."""
    by_name = {b.name: b for b in buffers}
    events: list[tuple[int, int]] = []
    for b in buffers:
        if _live(b):
            events.append((b.start, b.size))
            events.append((b.end, -b.size))
    for o in problem.overlaps:
        s, t = by_name.get(o.source), by_name.get(o.target)
        if s is None or t is None:
            continue
        saved = overlap_saving(s.size, t.size, o.max_shift, o.min_shift)
        first, last = max(s.start, t.start), min(s.end, t.end)
        if saved and _live(s) and _live(t) and first < last:
            events.append((first, -saved))
            events.append((last, saved))
    starts = {b.start for b in buffers if _live(b)}
    events.sort(key=lambda e: e[0])
    best = max((b.size for b in buffers), default=0)
    weight = 0
    k = 0
    while k < len(events):
        time = events[k][0]
        while k < len(events) and events[k][0] == time:
            weight += events[k][1]
            k += 1
        if time in starts:
            best = max(best, weight)
    return best


def lower_bound(problem: Problem) -> int:
    """A clique weight of the problem's conflict graph (see module doc)."""
    buffers = [b for b in problem.buffers if b.size > 0]
    if problem.overlaps:
        return _finer_bound(problem, buffers)
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
        names = {b.name for b in placed}
        overlaps = tuple(
            o for o in problem.overlaps if o.source in names and o.target in names
        )
        out[pool.name] = (
            lower_bound(Problem(placed, problem.pools, overlaps)) if placed else 0
        )
    return out
