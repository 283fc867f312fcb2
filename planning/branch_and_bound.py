"""Budgeted exact search for one pool (after MiniMalloc, Moffitt ASPLOS 2023).

Decision problem: place the buffers of one pool below ``capacity``. Any valid
layout can be pushed down until every buffer rests on a conflicting buffer (or
on 0); sorted by offset, such a *canonical* layout is produced by placing
buffers one at a time, each at its current minimum offset (the aligned highest
end of its placed conflicting buffers), in non-decreasing offset order. The
search enumerates exactly those orders, depth first, with MiniMalloc's rules:

* dynamic ordering: candidates by (minimum offset, static preorder rank);
* canonicity: offsets never decrease; at equal offsets preorder rank grows;
* dominance: a buffer is never placed at or above the lowest height some other
  unplaced buffer could reach (it would leave a gap that buffer fills);
* section inference: in every elementary time section, the floor (highest
  end placed there, and at least the current offset) plus the bytes of the
  unplaced buffers live there must stay within ``capacity`` (MiniMalloc's
  further "unallocated floor" rule and dynamic decomposition are not done).

The search is bounded by a deterministic *work* budget (sum over visited nodes
of the unplaced buffers scanned), never by wall-clock time, so a plan is the
same on every machine. :func:`minimize` turns the decision procedure into an
optimiser by probing capacities between a lower bound and a known layout.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Outcome(Enum):
    FOUND = "found"
    INFEASIBLE = "infeasible"
    ABORTED = "aborted"


@dataclass(frozen=True)
class PoolProblem:
    """One pool's buffers, indexed ``0..n-1``.

    ``neighbours`` must hold every conflict (interval and explicit);
    ``starts``/``ends`` give the sections used for inference (buffers with
    ``start == end`` take part only through ``neighbours``)."""

    sizes: Sequence[int]
    starts: Sequence[int]
    ends: Sequence[int]
    alignments: Sequence[int]
    neighbours: Sequence[Sequence[int]]


def _align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment if alignment > 1 else value


class _Search:
    def __init__(self, pp: PoolProblem, preorder: Sequence[int]):
        self.pp = pp
        n = len(pp.sizes)
        self.n = n
        self.rank = [0] * n
        for r, i in enumerate(preorder):
            self.rank[i] = r
        self.preorder = list(preorder)
        times = sorted(
            {t for i in range(n) if pp.sizes[i] for t in (pp.starts[i], pp.ends[i])}
        )
        where = {t: k for k, t in enumerate(times)}
        self.lo = [0] * n
        self.hi = [0] * n
        for i in range(n):
            if pp.sizes[i] and pp.starts[i] < pp.ends[i]:
                self.lo[i] = where[pp.starts[i]]
                self.hi[i] = where[pp.ends[i]]
        self.n_sections = max(len(times) - 1, 0)

    def run(self, capacity: int, budget: int) -> tuple[Outcome, list[int], int]:
        """Search a layout within ``capacity``; return (outcome, offsets, work)."""
        pp = self.pp
        sizes, aligns, nbrs = pp.sizes, pp.alignments, pp.neighbours
        lo, hi, rank = self.lo, self.hi, self.rank
        n = self.n
        off = [-1] * n
        min_off = [0] * n
        # Bytes of the unplaced buffers live in each section. Section
        # inference needs no floor array: placing ``i`` at ``o`` raises the
        # floor of its sections to ``o + size`` while removing ``size`` from
        # their totals, so "floor + total <= capacity" there is exactly
        # "o + total_before <= capacity", and offsets only grow afterwards.
        total = [0] * max(self.n_sections, 1)
        for i in range(n):
            for s in range(lo[i], hi[i]):
                total[s] += sizes[i]
        work = 0
        preorder = self.preorder

        def expand(last_off: int, last_rank: int) -> list[tuple[int, int, int]] | None:
            """Consistent candidates of the node; None when all are placed."""
            unplaced = [i for i in preorder if off[i] < 0]
            if not unplaced:
                return None
            # Dominance (below the lowest reachable height), canonicity (not
            # below the last offset) and section inference (room above the
            # fullest section), filtered before sorting the few that remain.
            highest = min(
                min(min_off[i] + sizes[i] for i in unplaced) - 1, capacity - max(total)
            )
            cands = sorted(
                (min_off[i], rank[i], i)
                for i in unplaced
                if last_off <= min_off[i] <= highest
                and min_off[i] + sizes[i] <= capacity
            )
            return [c for c in cands if c[0] > last_off or c[1] >= last_rank]

        def apply(i: int, o: int) -> list[tuple[int, int]]:
            """Place ``i`` at ``o``; return the minimum offsets it raised."""
            off[i] = o
            size = sizes[i]
            h = o + size
            raised: list[tuple[int, int]] = []
            for j in nbrs[i]:
                if off[j] < 0 and min_off[j] < h:
                    raised.append((j, min_off[j]))
                    min_off[j] = _align(h, aligns[j])
            a, b = lo[i], hi[i]
            total[a:b] = [t - size for t in total[a:b]]
            return raised

        def undo(i: int, raised: list[tuple[int, int]]) -> None:
            for j, old in raised:
                min_off[j] = old
            a, b = lo[i], hi[i]
            size = sizes[i]
            total[a:b] = [t + size for t in total[a:b]]
            off[i] = -1

        root = expand(0, -1)
        if root is None:
            return Outcome.FOUND, off, 0
        # Frame: [candidates, next index, placed buffer, undo log].
        stack: list[list[Any]] = [[root, 0, -1, None]]
        while stack:
            frame = stack[-1]
            if frame[3] is not None:
                undo(frame[2], frame[3])
                frame[3] = None
            cands = frame[0]
            if frame[1] >= len(cands):
                stack.pop()
                continue
            o, r, i = cands[frame[1]]
            frame[1] += 1
            frame[2], frame[3] = i, apply(i, o)
            work += n - len(stack) + len(frame[3]) + hi[i] - lo[i]
            if work > budget:
                return Outcome.ABORTED, off, work
            child = expand(o, r)
            if child is None:
                return Outcome.FOUND, list(off), work
            stack.append([child, 0, -1, None])
        return Outcome.INFEASIBLE, off, work


def preorders(pp: PoolProblem) -> list[list[int]]:
    """Static preorders (MiniMalloc's preordering heuristics, all descending):
    sections spanned / area / section total in the three orders MiniMalloc
    round-robins over, then start (latest first), then size."""
    n = len(pp.sizes)
    times = sorted({t for i in range(n) for t in (pp.starts[i], pp.ends[i])})
    where = {t: k for k, t in enumerate(times)}
    section_total = [0] * max(len(times), 1)
    for i in range(n):
        for s in range(where[pp.starts[i]], where[pp.ends[i]]):
            section_total[s] += pp.sizes[i]
    width = [where[pp.ends[i]] - where[pp.starts[i]] for i in range(n)]
    area = [pp.sizes[i] * (pp.ends[i] - pp.starts[i]) for i in range(n)]
    tot = [
        max(section_total[where[pp.starts[i]] : where[pp.ends[i]]], default=0)
        for i in range(n)
    ]
    keys = [
        lambda i: (-width[i], -area[i], -tot[i], i),
        lambda i: (-tot[i], -area[i], -width[i], i),
        lambda i: (-tot[i], -width[i], -area[i], i),
        lambda i: (-pp.starts[i], -area[i], i),
        lambda i: (-pp.sizes[i], -width[i], i),
    ]
    out: list[list[int]] = []
    for key in keys:
        order = sorted(range(n), key=key)
        if order not in out:
            out.append(order)
    return out


def _perturbed(order: list[int], rng: random.Random, spread: float) -> list[int]:
    """``order`` with each rank moved by Gaussian noise of ``spread * n``."""
    n = len(order)
    noise = [r + rng.gauss(0.0, spread * n) for r in range(n)]
    return [order[r] for r in sorted(range(n), key=lambda r: (noise[r], r))]


@dataclass(frozen=True)
class Minimized:
    offsets: list[int]
    top: int
    work: int
    optimal: bool


def minimize(
    pp: PoolProblem,
    offsets: Sequence[int],
    lower: int,
    budget: int,
    *,
    seed: int = 0,
) -> Minimized:
    """Lower the top of a valid layout ``offsets`` of one pool.

    First an exact search at ``lower`` (an eighth of the budget): success is
    optimal by definition. Then *squeezing*: capacity probes a step below the
    best top so far, each a small-budget search whose section inference steers
    the placement; success tightens the best top, failure halves the step, and
    exhausted steps move on to the next preorder (static ones, then seeded
    perturbations of the best one); a probe proven infeasible raises the
    bound, so small problems end proven optimal. Deterministic in ``seed``.
    """
    sizes = pp.sizes
    n = len(sizes)
    best = list(offsets)
    top = max((best[i] + sizes[i] for i in range(n)), default=0)
    if top <= lower or n == 0:
        return Minimized(best, top, 0, top <= lower)
    orders = preorders(pp)
    work = 0
    outcome, found, w = _Search(pp, orders[0]).run(lower, budget // 8)
    work += w
    if outcome is Outcome.FOUND:
        return Minimized(found, max(found[i] + sizes[i] for i in range(n)), work, True)
    if outcome is Outcome.INFEASIBLE:
        lower += 1  # proven: the optimum is above the bound
    rng = random.Random(seed)
    probe_budget = max(n * n, 1000)
    best_order = orders[0]
    k = 0
    while work < budget and top > lower:
        order = orders[k] if k < len(orders) else _perturbed(best_order, rng, 0.15)
        k += 1
        search = _Search(pp, order)
        step = max(1, (top - lower) // 4)
        while step >= max(1, (top - lower) // 16) and work < budget and top > lower:
            capacity = max(lower, top - step)
            outcome, found, w = search.run(capacity, min(probe_budget, budget - work))
            work += w
            if outcome is Outcome.FOUND:
                best, top, best_order = (
                    found,
                    max(found[i] + sizes[i] for i in range(n)),
                    order,
                )
            elif outcome is Outcome.INFEASIBLE:
                lower = capacity + 1  # proven, whatever the preorder
            else:
                step //= 2
    return Minimized(best, top, work, top <= lower)
