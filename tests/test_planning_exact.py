"""The exact planner (``optimal``) and MiniMalloc's search against brute force.

Small seeded random one-pool problems (intervals, sizes, alignments, some
explicit conflicts) are solved by exhaustive enumeration of offsets; the
search must find a layout exactly at the optimum and prove the capacity just
below it infeasible, and ``optimal`` must return a valid plan of that size
with ``stats["optimal"] == 1``.
"""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path

import pytest

from usmp.planning import minimalloc_native
from usmp.planning.algorithms import get_algorithm
from usmp.planning.exact import Optimal
from usmp.planning.lower_bound import lower_bound
from usmp.planning.minimalloc_native import load
from usmp.planning.minimalloc_solver import PoolProblem, Search, Status, solve
from usmp.planning.minimize import window_bound
from usmp.planning.model import Buffer, PlanningError, Pool, Problem
from usmp.planning.placement import Indexed
from usmp.planning.validate import validate_plan

SEEDS = range(40)


def random_problem(seed: int) -> Problem:
    rng = random.Random(seed)
    n = rng.randint(2, 6)
    buffers = []
    for i in range(n):
        start = rng.randint(0, 5)
        buffers.append(
            Buffer(
                f"b{i}",
                size=rng.randint(1, 4),
                start=start,
                end=start + rng.randint(1, 4),
                alignment=rng.choice((1, 1, 2)),
            )
        )
    if seed % 4 == 3:  # an explicit conflict, whatever the intervals say
        a, b = buffers[0], buffers[-1]
        buffers[0] = Buffer(
            a.name, a.size, a.start, a.end, a.alignment, (), frozenset({b.name})
        )
    return Problem(tuple(buffers), (Pool("p", alignment=1),))


def pool_problem(problem: Problem) -> PoolProblem:
    ix = Indexed.of(problem)
    return PoolProblem(
        sizes=list(ix.sizes),
        starts=[b.start for b in problem.buffers],
        ends=[b.end for b in problem.buffers],
        alignments=[a[0] for a in ix.alignments],
        neighbours=[list(n) for n in ix.neighbours],
    )


def fits(pp: PoolProblem, capacity: int) -> bool:
    """Exhaustive: some offset for every buffer within ``capacity``."""
    n = len(pp.sizes)
    off = [0] * n

    def place(i: int) -> bool:
        if i == n:
            return True
        size, align = pp.sizes[i], pp.alignments[i]
        for o in range(0, capacity - size + 1, align):
            if all(
                o + size <= off[j] or off[j] + pp.sizes[j] <= o
                for j in pp.neighbours[i]
                if j < i
            ):
                off[i] = o
                if place(i + 1):
                    return True
        return False

    return place(0)


@cache
def brute_optimum(seed: int) -> int:
    pp = pool_problem(random_problem(seed))
    capacity = max(pp.sizes)
    while not fits(pp, capacity):
        capacity += 1
    return capacity


@pytest.mark.parametrize("native", [True, False], ids=["c", "python"])
@pytest.mark.parametrize("seed", SEEDS)
def test_search_decides_like_brute_force(seed: int, native: bool) -> None:
    pp = pool_problem(random_problem(seed))
    best = brute_optimum(seed)
    found = solve(pp, best, native=native)
    assert found.status is Status.FOUND
    assert max(o + s for o, s in zip(found.offsets, pp.sizes, strict=True)) <= best
    assert solve(pp, best - 1, native=native).status is Status.INFEASIBLE


def test_c_search_is_built() -> None:
    """The C search compiles here (CI has gcc): the fast path is tested."""
    assert load() is not None


def larger_problem(seed: int) -> Problem:
    """30-60 buffers, sizes in 1 KiB steps, some aligned, some explicit
    conflicts (every other seed): enough for backtracking and decomposition."""
    rng = random.Random(seed)
    n = rng.randint(30, 60)
    buffers = []
    for i in range(n):
        start = rng.randint(0, 30)
        conflicts = {f"b{rng.randrange(n)}"} - {f"b{i}"} if seed % 2 and i < 3 else ()
        buffers.append(
            Buffer(
                f"b{i}",
                size=rng.randint(1, 16) * 1024,
                start=start,
                end=start + rng.choice((1, 2, 3, 5, 8)),
                alignment=rng.choice((1, 1, 4096)),
                conflicts=frozenset(conflicts),
            )
        )
    return Problem(tuple(buffers), (Pool("p", alignment=1),))


@pytest.mark.parametrize("seed", range(12))
def test_c_search_is_the_python_search(seed: int) -> None:
    """Node for node: same outcome, offsets, nodes and backtracks at every
    capacity around the bound, with and without a node budget."""
    problem = larger_problem(seed)
    pp = pool_problem(problem)
    bound = lower_bound(problem)
    c, py = Search(pp), Search(pp, native=False)
    for capacity in (bound, bound + 1024, int(bound * 1.05), int(bound * 1.2)):
        for max_nodes in (3000, 50):
            a = c.solve(capacity, max_nodes=max_nodes)
            b = py.solve(capacity, max_nodes=max_nodes)
            assert (a.status, a.offsets, a.nodes, a.backtracks) == (
                b.status,
                b.offsets,
                b.nodes,
                b.backtracks,
            )


def test_nothing_to_place_is_found() -> None:
    """Only zero-length lifetimes: no section, nothing to search."""
    pp = PoolProblem([4, 8], [3, 5], [3, 5], [1, 1], [[], []])
    for native in (True, False):
        r = solve(pp, 8, native=native)
        assert r.status is Status.FOUND
        assert r.offsets == [0, 0]


@pytest.mark.parametrize("seed", SEEDS)
def test_optimal_matches_brute_force(seed: int) -> None:
    problem = random_problem(seed)
    plan = Optimal(time_limit=5)(problem)
    assert validate_plan(problem, plan) == []
    assert plan.pool_sizes(problem)["p"] == brute_optimum(seed)
    assert plan.stats["optimal"] == 1.0
    assert plan.stats["proven_lower_bound"] >= lower_bound(problem)


@pytest.mark.parametrize("seed", SEEDS[:10])
def test_capacity_is_decided(seed: int) -> None:
    """A pool limit at the optimum is met; one byte less is refused."""
    problem = random_problem(seed)
    best = brute_optimum(seed)
    for limit, feasible in ((best, True), (best - 1, False)):
        bounded = Problem(problem.buffers, (Pool("p", size_limit=limit, alignment=1),))
        if feasible:
            plan = Optimal(time_limit=5)(bounded)
            assert validate_plan(bounded, plan) == []
        else:
            with pytest.raises(PlanningError):
                Optimal(time_limit=5)(bounded)


def test_timeout_returns_the_heuristic_plan() -> None:
    """A problem too hard for the time given still gets a valid plan, with
    its gap to the proven bound."""
    rng = random.Random(7)
    buffers = []
    for i in range(60):
        start = rng.randint(0, 40)
        buffers.append(
            Buffer(f"t{i}", rng.randint(1, 64) * 8, start, start + rng.randint(1, 12))
        )
    problem = Problem(tuple(buffers), (Pool("p", alignment=1),))
    plan = Optimal(time_limit=0.05)(problem)
    assert validate_plan(problem, plan) == []
    assert plan.stats["gap"] >= 0.0
    assert plan.stats["optimal"] in (0.0, 1.0)


def test_time_limit_only_for_optimal() -> None:
    assert isinstance(get_algorithm("optimal", time_limit=3), Optimal)
    with pytest.raises(ValueError, match="only to algorithm optimal"):
        get_algorithm("best_fit", time_limit=3)
    with pytest.raises(ValueError, match="must be > 0"):
        get_algorithm("optimal", time_limit=0)


def test_optimal_is_deterministic_when_proven() -> None:
    for seed in SEEDS[:10]:
        problem = random_problem(seed)
        first, again = Optimal()(problem), Optimal()(problem)
        assert first.stats["optimal"] == 1.0
        assert dict(first.placements) == dict(again.placements)


@pytest.mark.parametrize("seed", SEEDS)
def test_window_bound_is_a_lower_bound(seed: int) -> None:
    """Never above the optimum, never below the liveness peak; above the peak
    where fragmentation forces it (seed 0: peak 8, optimum 9)."""
    problem = random_problem(seed)
    peak = lower_bound(problem)
    bound = window_bound(pool_problem(problem), peak)
    assert peak <= bound <= brute_optimum(seed)
    if seed == 0:
        assert (peak, bound) == (8, 9)


def test_window_bound_proves_optimal() -> None:
    """The exact mode reports the fragmentation bound: proven optimal above
    the liveness peak."""
    problem = random_problem(0)
    plan = Optimal(time_limit=5)(problem)
    assert plan.stats["lower_bound"] == 8.0
    assert plan.stats["proven_lower_bound"] == 9.0
    assert plan.stats["optimal"] == 1.0


def test_c_search_in_a_deep_stack_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Big pools run the C search in a thread with a larger stack (one level
    of recursion per placed buffer; 50,000 buffers in one partition crashed
    the main thread's 8 MiB): same result on that path."""
    problem = larger_problem(1)
    pp = pool_problem(problem)
    capacity = int(lower_bound(problem) * 1.2)
    direct = Search(pp).solve(capacity, max_nodes=3000)
    monkeypatch.setattr(minimalloc_native, "DEEP", 10)
    threaded = Search(pp).solve(capacity, max_nodes=3000)
    assert direct.status is Status.FOUND
    assert (threaded.status, threaded.offsets, threaded.nodes) == (
        direct.status,
        direct.offsets,
        direct.nodes,
    )


def test_a_changed_c_source_gets_a_library_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cached library's name carries the source's version: an edited
    file is built again, an unchanged one is found under the same name."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("USMP_NATIVE_PLANNER", raising=False)
    if minimalloc_native._compiler() is None:
        pytest.skip("no C compiler")
    sources = []
    for directory, body in (("a", "1"), ("b", "2"), ("c", "1")):
        source = tmp_path / directory / "probe.c"
        source.parent.mkdir()
        source.write_text(f"int probe(void) {{ return {body}; }}\n")
        sources.append(source)
    for source in sources:
        lib = minimalloc_native.compiled(source)
        assert lib is not None
    names = sorted(p.name for p in (tmp_path / "cache" / "usmp-opt").glob("*.so"))
    assert len(names) == 2, names
    assert all(n.startswith("probe-") for n in names)
