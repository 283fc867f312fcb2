"""The schedule of ``minimize.minimize_pool``, on scripted searches.

How hard a capacity is for MiniMalloc's search varies erratically with it
(MiniMalloc's challenging D: 2^20 - 14,336 B is found in 339 nodes, its
neighbours not in 150,000). These tests replace the search by a script: a
capacity is found (or proven infeasible) once a probe gives it at least its
number of nodes, and times out otherwise, as the real search does (it is
deterministic: a probe with fewer nodes replays a prefix of one with more).
The real search under the schedule: ``test_planning_density.py`` (never above
a capacity found feasible, monotone in the budget) and
``test_planning_exact.py`` (optimal against brute force).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from usmp.planning import minimize
from usmp.planning.minimalloc_solver import PoolProblem, SearchResult, Status
from usmp.planning.minimize import minimize_pool

# One buffer of one byte: a layout of top ``c`` is the offset ``c - 1``, and
# the grain is 1 (every capacity counts).
ONE = PoolProblem(sizes=[1], starts=[0], ends=[1], alignments=[1], neighbours=[[]])
N_UNIT = 2  # the schedule's unit: 2 nodes a buffer


@dataclass
class Script:
    """Capacity -> (status once answered, nodes it takes); unlisted
    capacities at or above ``feasible`` are found in ``default`` nodes,
    those below never answer."""

    feasible: int
    answers: dict[int, tuple[Status, int]]
    default: int
    calls: list[tuple[int, int]] = field(default_factory=lambda: [])

    def search(self, pp: PoolProblem, deadline: float | None = None) -> _Scripted:
        return _Scripted(pp, self)


@dataclass
class _Scripted:
    pp: PoolProblem
    script: Script

    def solve(
        self,
        capacity: int,
        deadline: float | None = None,
        max_nodes: int | None = None,
    ) -> SearchResult:
        s = self.script
        assert max_nodes is not None
        s.calls.append((capacity, max_nodes))
        default = (Status.FOUND, s.default) if capacity >= s.feasible else None
        status, nodes = s.answers.get(capacity, default or (Status.TIMEOUT, 0))
        if status is Status.TIMEOUT or nodes > max_nodes:
            return SearchResult(Status.TIMEOUT, [], max_nodes, 0)
        offsets = [capacity - 1] if status is Status.FOUND else []
        return SearchResult(status, offsets, nodes, 0)


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Callable[[Script], Script]:
    def use(script: Script) -> Script:
        monkeypatch.setattr(minimize, "Search", script.search)
        return script

    return use


def test_an_easy_capacity_far_below_the_top_is_found(
    scripted: Callable[[Script], Script],
) -> None:
    """Capacities 1,000..1,299 are feasible but every one takes a million
    nodes except 1,040, found in one unit: the minimiser reaches it within
    a budget of a few probes of every capacity (the old schedule, a binary
    search and 64 capacities spread evenly, never probed it)."""
    script = scripted(Script(1_000, {1_040: (Status.FOUND, N_UNIT)}, default=1_000_000))
    result = minimize_pool(ONE, [1_299], 900, None, max_nodes=400 * 300 * N_UNIT)
    assert result.top <= 1_040
    assert all(nodes <= 400 * 300 * N_UNIT for _, nodes in script.calls)


def test_the_descent_reaches_a_capacity_just_under_the_top(
    scripted: Callable[[Script], Script],
) -> None:
    """Feasible from 5,000 up, every capacity in 2,000 nodes (a thousand
    units), infeasibility never proven: the galloping descent, whose probe
    budget doubles each round, gets to 5,000 within a small multiple of
    what a search told the answer would spend (log of the range probes of
    2,000 nodes, twice for the doubling, twice for the bound's half)."""
    scripted(Script(5_000, {}, default=2_000))
    result = minimize_pool(ONE, [9_000], 100, None, max_nodes=200_000)
    assert result.top == 5_000


def test_a_reachable_bound_is_proven_with_doubling_probes(
    scripted: Callable[[Script], Script],
) -> None:
    """The bound (1,000) is feasible in 100,000 nodes; nothing else below
    the start answers: the bound's probes double, so the proof costs a
    bounded multiple of those 100,000 nodes (at most four times: the
    bound's own doubling probes, and as much again above it)."""
    script = scripted(Script(2_000, {1_000: (Status.FOUND, 100_000)}, default=10**9))
    result = minimize_pool(ONE, [1_500], 1_000, None, max_nodes=800_000)
    assert result.top == 1_000 == result.proven_lower
    assert result.nodes <= 8 * 100_000
    assert max(nodes for c, nodes in script.calls if c == 1_000) < 4 * 100_000


def test_a_capacity_that_timed_out_is_not_probed_again_with_as_few_nodes(
    scripted: Callable[[Script], Script],
) -> None:
    script = scripted(Script(10**6, {}, default=1))
    minimize_pool(ONE, [300], 100, None, max_nodes=100_000)
    seen: dict[int, int] = {}
    for capacity, nodes in script.calls:
        assert nodes > seen.get(capacity, 0), (capacity, nodes)
        seen[capacity] = nodes


def test_an_infeasible_capacity_raises_the_bound(
    scripted: Callable[[Script], Script],
) -> None:
    """A proof of infeasibility at 1,999 makes 2,000 the bound; the best
    layout found is there."""
    scripted(
        Script(
            2_000,
            {c: (Status.INFEASIBLE, 10) for c in range(1_500, 2_000)},
            default=10,
        )
    )
    result = minimize_pool(ONE, [2_500], 1_000, None, max_nodes=1_000_000)
    assert result.top == 2_000
    assert result.proven_lower == 2_000
