"""Planning at density: hundreds of buffers live at once (issue 27).

The C decode (``placement_decode.c``) places exactly as the Python
``placement.decode`` (every rule, allowed overlaps, size limits, fallback
pools, alignment, explicit conflicts, the error of a buffer that fits
nowhere); the counts ``best_fit`` orders by equal the conflict graph's;
``best_fit`` on a large dense problem never lists its conflicts (memory
linear in the buffers); ``optimal`` ends by its time limit, the heuristic
start and the preparation of a dense search included. The timings
themselves are in ``benchmarks/plan_memory.py --dense``.
"""

from __future__ import annotations

import random
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import replace

import pytest

from tests.test_planning_cases import (
    MINIMALLOC_DIR,
    MINIMALLOC_FILES,
    MODEL_CASES,
    minimalloc_problem,
    model_problem,
    random_problems,
)
from usmp.planning.algorithms import ALGORITHMS, TIMED_ALGORITHMS, get_algorithm
from usmp.planning.best_fit import BestFit, best_fit
from usmp.planning.exact import Optimal
from usmp.planning.lower_bound import lower_bound
from usmp.planning.minimalloc_solver import (
    OutOfTime,
    PoolProblem,
    Search,
    SearchResult,
    Status,
)
from usmp.planning.minimize import minimize_pool, pool_problem
from usmp.planning.model import Buffer, Overlap, Plan, PlanningError, Pool, Problem
from usmp.planning.placement import (
    OFFSET_RULES,
    Indexed,
    OffsetRule,
    decode,
    lane_layout,
)
from usmp.planning.placement_native import native_decoder
from usmp.planning.validate import validate_plan
from usmp.testing.planning_problems import dense_problem, max_live


def with_overlaps(problem: Problem, rng: random.Random) -> Problem:
    """``problem`` with random allowed overlaps between its sized buffers
    (shifts below, above, and both: inverted ranges included)."""
    sized = [b for b in problem.buffers if b.size]
    overlaps = []
    for _ in range(len(sized) // 3 if len(sized) > 1 else 0):
        a, b = rng.sample(sized, 2)
        min_shift = rng.choice([None, rng.randint(-20, a.size + 20)])
        overlaps.append(
            Overlap(a.name, b.name, rng.randint(-b.size - 20, 20), min_shift)
        )
    return replace(problem, overlaps=tuple(overlaps))


def _problems() -> dict[str, Problem]:
    rng = random.Random(27)
    problems = dict(random_problems())
    for name, p in list(problems.items()):
        problems[f"{name}-overlaps"] = with_overlaps(p, rng)
    problems["dense-600"] = dense_problem(600, 300, seed=1)
    problems["dense-600-overlaps"] = with_overlaps(problems["dense-600"], rng)
    return problems


PROBLEMS = _problems()


Decode = Callable[[list[int], OffsetRule], tuple[list[int], list[int]]]


def _decoded(run: Decode, order: list[int], rule: OffsetRule) -> object:
    """The placements, or the error's message."""
    try:
        return run(order, rule)
    except PlanningError as e:
        return str(e)


@pytest.mark.parametrize("case", sorted(PROBLEMS))
def test_c_decode_is_the_python_decode(case: str) -> None:
    problem = PROBLEMS[case]
    ix = Indexed.of(problem)
    native = native_decoder(ix)
    assert native is not None
    rng = random.Random(case)
    n = len(ix.names)
    orders = [sorted(range(n), key=lambda i: (-ix.sizes[i], i))]
    orders += [rng.sample(range(n), n) for _ in range(3)]
    failures = 0
    for order in orders:
        for rule in OFFSET_RULES:
            python = _decoded(lambda o, r: decode(ix, o, r), order, rule)
            assert _decoded(native.decode, order, rule) == python, (order, rule)
            failures += isinstance(python, str)
    if "bounded" in case or "fallback" in case or "dense" in case:
        return
    assert failures == 0  # unbounded pools: every order fits


def test_dense_case_is_dense() -> None:
    """The case above exercises the C decode's long conflict lists (its
    radix sort and the runs of equal offsets)."""
    assert max_live(PROBLEMS["dense-600"]) >= 200


@pytest.mark.parametrize(
    "problem",
    [*PROBLEMS.values()]
    + [minimalloc_problem(p) for p in MINIMALLOC_FILES]
    + [model_problem(p) for p in MODEL_CASES],
)
def test_conflict_counts_match_the_conflict_graph(problem: Problem) -> None:
    ix = Indexed.of(problem)
    graph = problem.conflict_graph()
    index = {n: i for i, n in enumerate(ix.names)}
    expected = tuple(
        tuple(sorted(index[m] for m in graph[b.name] if ix.sizes[index[m]]))
        if b.size
        else ()
        for b in problem.buffers
    )
    assert ix.neighbours == expected
    assert ix.degrees == tuple(len(row) for row in expected)
    assert ix.conflict_bytes == tuple(
        ix.sizes[i] + sum(ix.sizes[j] for j in row) for i, row in enumerate(expected)
    )


@pytest.mark.parametrize("case", ["dense-600", "dense-600-overlaps"])
def test_large_mode_plans_are_valid(case: str) -> None:
    """``best_fit``'s linear mode (forced here by a low threshold) honours
    allowed overlaps like the portfolio does."""
    problem = PROBLEMS[case]
    plan = BestFit(large=100)(problem)
    assert validate_plan(problem, plan) == []
    assert plan.stats["search_nodes"] == 0


def test_large_best_fit_never_lists_the_conflicts() -> None:
    """3,000 buffers, ~1,500 live at once: millions of conflicting pairs;
    ``best_fit``'s Python allocations stay below one byte per pair (a list
    of them would take eight)."""
    problem = dense_problem(3_000, 1_500, seed=2)
    pairs = sum(Indexed.of(problem).degrees)
    assert pairs > 5_000_000
    tracemalloc.start()
    try:
        plan = best_fit(problem)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < pairs
    assert sum(plan.pool_sizes(problem).values()) >= lower_bound(problem)


def test_optimal_ends_by_its_time_limit() -> None:
    """A dense problem where ``best_fit`` alone (portfolio, hill climb,
    search) and preparing the exact search take seconds: ``optimal`` with
    1 CPU s ends within 2 CPU s (a margin of 100%, so that it cannot
    flake), with a plan; so does
    the decision at a pool limit just above the lower bound (feasible or
    not: either a plan or the error, in time)."""
    problem = dense_problem(2_000, 1_000, seed=3)
    limit = lower_bound(problem) * 1005 // 1000
    for p in (problem, replace(problem, pools=(Pool("p", size_limit=limit),))):
        t0 = time.process_time()
        try:
            plan = Optimal(time_limit=1.0)(p)
        except PlanningError:
            plan = None
        assert time.process_time() - t0 < 2.0
        if plan is not None:  # (valid: the validator is quadratic, too slow here)
            assert sum(plan.pool_sizes(p).values()) >= lower_bound(p)


def test_best_fit_past_its_deadline_returns_a_lane_layout() -> None:
    """No time for a decode: the lane layout, valid; with allowed overlaps
    (no lanes) the first decode, uncut."""
    for case in ("dense-600", "dense-600-overlaps"):
        problem = PROBLEMS[case]
        plan = best_fit(problem, time.process_time())
        assert validate_plan(problem, plan) == []
        assert plan.stats["search_nodes"] == 0
        ix = Indexed.of(problem)
        lanes = lane_layout(ix)
        offsets = [plan.placements[x].offset for x in ix.names]
        assert (lanes is not None and offsets == lanes[1]) == (not problem.overlaps)


@pytest.mark.parametrize("case", sorted(PROBLEMS))
def test_lane_layout_is_valid(case: str) -> None:
    """Every pool limit, alignment, explicit conflict and fallback pool of
    the random problems: a valid layout, or ``None`` (allowed overlaps, or
    a limit the lanes exceed); never below the bound."""
    problem = PROBLEMS[case]
    ix = Indexed.of(problem)
    lanes = lane_layout(ix)
    if problem.overlaps:
        assert lanes is None
        return
    if lanes is None:
        assert "bounded" in case or "fallback" in case
        return
    plan = Plan(ix.placements(*lanes), algorithm="lanes")
    assert validate_plan(problem, plan) == []
    assert sum(plan.pool_sizes(problem).values()) >= lower_bound(problem)


def test_lane_layout_keeps_explicit_conflicts_apart() -> None:
    """Lifetimes one after the other, each buffer in explicit conflict with
    the one before (and one with an empty lifetime): no lane is shared
    along a conflict."""
    buffers = [
        Buffer(f"b{k}", 48, k, k + 1, conflicts=(f"b{k - 1}",) if k else ())
        for k in range(6)
    ] + [Buffer("empty", 48, 3, 3, conflicts=("b3",)), Buffer("free", 48, 9, 10)]
    problem = Problem(tuple(buffers))
    ix = Indexed.of(problem)
    lanes = lane_layout(ix)
    assert lanes is not None
    plan = Plan(ix.placements(*lanes), algorithm="lanes")
    assert validate_plan(problem, plan) == []


def test_c_decode_stops_at_its_deadline() -> None:
    ix = Indexed.of(PROBLEMS["dense-600"])
    native = native_decoder(ix)
    assert native is not None
    order = list(range(len(ix.names)))
    with pytest.raises(OutOfTime):
        native.decode(order, "first_fit", time.process_time() - 1.0)
    # no deadline, or one far off: the same placements as the Python decode
    far = time.process_time() + 3600.0
    assert native.decode(order, "first_fit", far) == decode(ix, order, "first_fit")


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_algorithm_plans_a_small_dense_problem(name: str) -> None:
    """400 buffers, ~200 live at once: a valid plan, not below the bound
    (``optimal`` within its time limit)."""
    problem = dense_problem(400, 200, seed=5)
    assert max_live(problem) >= 150
    algorithm = get_algorithm(
        name, time_limit=0.5 if name in TIMED_ALGORITHMS else None
    )
    t0 = time.process_time()
    plan = algorithm(problem)
    assert time.process_time() - t0 < 5.0
    assert validate_plan(problem, plan) == []
    assert sum(plan.pool_sizes(problem).values()) >= lower_bound(problem)


def _search_pool(problem: Problem) -> tuple[PoolProblem, list[int], int]:
    """The one pool of ``problem`` as the search sees it, ``best_fit``'s
    layout of it and the liveness bound."""
    ix = Indexed.of(problem)
    pp = pool_problem(ix, [0] * len(ix.names), 0)[1]
    plan = best_fit(problem)
    offsets = [plan.placements[n].offset for n in ix.names]
    return pp, offsets, lower_bound(problem)


def test_minimisation_never_ends_above_a_capacity_it_found_feasible(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every capacity a probe of ``minimize_pool`` finds a layout for bounds
    its result; and with more search nodes the result is never larger
    (budgets are deterministic: a larger one replays the smaller's probes
    first)."""
    problem = minimalloc_problem(MINIMALLOC_DIR / "challenging" / "D.1048576.csv")
    pp, offsets, lower = _search_pool(problem)
    found: list[int] = []
    solve = Search.solve

    def recording(
        self: Search, capacity: int, deadline: float | None, max_nodes: int | None
    ) -> SearchResult:
        result = solve(self, capacity, deadline, max_nodes)
        if result.status is Status.FOUND:
            found.append(capacity)
        return result

    monkeypatch.setattr(Search, "solve", recording)
    tops = []
    for nodes in (4_000, 16_000, 64_000):
        found.clear()
        result = minimize_pool(pp, offsets, lower, None, nodes)
        assert result.top <= min(found, default=result.top)
        ix = Indexed.of(problem)
        plan = Plan(ix.placements([0] * len(ix.names), result.offsets), "minimized")
        assert validate_plan(problem, plan) == []
        tops.append(result.top)
    assert tops == sorted(tops, reverse=True)
    assert tops[-1] < tops[0]  # the budgets matter here
