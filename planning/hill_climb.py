"""TVM USMP's hill climb (``src/tir/usmp/algo/hill_climb.cc``), seeded.

Starts from TVM's greedy-by-size order (``greedy.tvm_order``: ties by name
descending) and repeatedly swaps two buffers of the order, re-placing every
buffer with first fit (TVM's hill-climb allocator does reuse gaps, unlike its
greedy ones): pick at random one buffer ending at the top of a pool, one of
its conflicting buffers placed before it ("first level") and, three times in
four, a conflicting buffer placed before that one ("second level"), else
another first-level one; swap the two. A result no worse than the current one
is kept; a worse one is kept with probability ``1 / (2 * attempt)`` (TVM's
decaying random acceptance), and the best plan ever seen is returned. Stops
at the lower bound (TVM's "memory pressure"), after ``max_attempts``
attempts, or once ``work_budget`` neighbour visits have been spent (so 400
buffers stay well under a second).

Differences from TVM, on purpose: randomness comes from ``random.Random(seed)``
(same plan on every run and platform; TVM draws from ``rand_r`` seeded 0,
keeps an equal result only by chance and returns the last accepted plan, not
the best, so its plans are not reproduced draw for draw; on TVM's unit cases
the results are TVM's, ``tests/test_planning_tvm.py``); only the suffix of the
order after the first swapped position is re-placed (same result, less work);
an order whose decoding exceeds a pool's limit is rejected instead of kept.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from usmp.planning.greedy import tvm_order
from usmp.planning.lower_bound import lower_bound
from usmp.planning.model import Plan, PlanningError, Problem
from usmp.planning.placement import Indexed, cost, decode, pool_tops


@dataclass(frozen=True)
class HillClimb:
    """``Problem -> Plan``; options are the search budget and the seed."""

    seed: int = 0
    max_attempts: int = 500
    work_budget: int = 1_000_000

    def __call__(self, problem: Problem, deadline: float | None = None) -> Plan:
        """The best plan seen; with ``deadline`` (``time.process_time()``)
        no attempt starts after it."""
        ix = Indexed.of(problem)
        n = len(ix.names)
        order = tvm_order(ix, "size")
        # Infeasible initial order: the error names the buffer (as greedy would).
        pools, offsets = decode(ix, order, "first_fit")
        current = best = cost(ix, pools, offsets)
        best_state = (pools, offsets)
        target = lower_bound(problem)
        rng = random.Random(self.seed)
        position = {b: k for k, b in enumerate(order)}
        work = attempts = 0
        while (
            attempts < self.max_attempts
            and work < self.work_budget
            and best[0] > target
            and (deadline is None or time.process_time() < deadline)
        ):
            attempts += 1
            pool_top = pool_tops(ix, pools, offsets)
            tops = [
                t
                for t in range(n)
                if ix.sizes[t] and offsets[t] + ix.sizes[t] == pool_top[pools[t]]
            ]
            if not tops:
                break  # nothing placed has a size: nothing to improve
            top = rng.choice(tops)
            first = sorted(
                (j for j in ix.neighbours[top] if position[j] < position[top]),
                key=position.__getitem__,
            )
            if not first:
                continue
            second = sorted(
                {
                    k
                    for j in first
                    for k in ix.neighbours[j]
                    if position[k] < position[j]
                },
                key=position.__getitem__,
            )
            a = rng.choice(first)
            pool = second if second and rng.random() < 0.75 else first
            b = rng.choice(pool)
            if a == b:
                continue
            pa, pb = position[a], position[b]
            order[pa], order[pb] = b, a
            position[a], position[b] = pb, pa
            start = min(pa, pb)
            work += sum(len(ix.neighbours[i]) for i in order[start:]) + 1
            try:
                state = decode(
                    ix, order, "first_fit", start=start, previous=(pools, offsets)
                )
            except PlanningError:
                state = None
            new = cost(ix, *state) if state is not None else None
            if (
                state is not None
                and new is not None
                and (new <= current or rng.random() < 1 / (2 * attempts))
            ):
                (pools, offsets), current = state, new
                if new < best:
                    best, best_state = new, state
            else:  # roll back the swap
                order[pa], order[pb] = a, b
                position[a], position[b] = pa, pb
        plan_pools, plan_offsets = best_state
        return Plan(
            ix.placements(plan_pools, plan_offsets),
            algorithm="hill_climb",
            stats={"attempts": attempts, "work": work},
        )


hill_climb = HillClimb()
