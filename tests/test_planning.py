"""Every memory planning algorithm, checked by the independent validator.

One parametrized test runs every name in ``ALGORITHMS`` over seeded random
problems and the MiniMalloc CSVs; the others check the contracts shared by
all algorithms (default is best, errors name the buffer, determinism).
"""

from __future__ import annotations

import math
from functools import cache

import pytest

from tests.test_planning_cases import (
    MINIMALLOC_FILES,
    MODEL_CASES,
    chain_problem,
    minimalloc_problem,
    model_problem,
    random_problems,
)
from usmp.planning import best_fit as best_fit_module
from usmp.planning import minimalloc_solver
from usmp.planning.algorithms import (
    ALGORITHMS,
    DEFAULT_ALGORITHM,
    TIMED_ALGORITHMS,
    get_algorithm,
)
from usmp.planning.lower_bound import lower_bound
from usmp.planning.model import Algorithm, Buffer, Plan, PlanningError, Pool, Problem
from usmp.planning.validate import validate_plan

RANDOM = random_problems()
CASES = (
    sorted(RANDOM)
    + [f"minimalloc/{p.parent.name}/{p.name}" for p in MINIMALLOC_FILES]
    + [f"model/{p.name}" for p in MODEL_CASES]
)


@cache
def problem(case: str) -> Problem:
    if case.startswith("model/"):
        return model_problem(next(p for p in MODEL_CASES if case.endswith(p.name)))
    if case.startswith("minimalloc/"):
        return minimalloc_problem(
            next(p for p in MINIMALLOC_FILES if case.endswith(p.name))
        )
    return RANDOM[case]


def configured(algorithm: str) -> Algorithm:
    """The algorithm, with a short time limit for the exact one (its search
    is tested against brute force in ``test_planning_exact``)."""
    if algorithm in TIMED_ALGORITHMS:
        return get_algorithm(algorithm, time_limit=0.3)
    return get_algorithm(algorithm)


@cache
def plan(algorithm: str, case: str) -> Plan:
    return configured(algorithm)(problem(case))


def total(case: str, p: Plan) -> int:
    return sum(p.pool_sizes(problem(case)).values())


def test_minimalloc_cases_exist() -> None:
    assert len(MINIMALLOC_FILES) == 8, MINIMALLOC_FILES


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_algorithm_plan_is_valid(algorithm: str, case: str) -> None:
    p = plan(algorithm, case)
    assert validate_plan(problem(case), p) == []
    assert total(case, p) >= lower_bound(problem(case))


@pytest.mark.parametrize("case", CASES)
def test_default_is_never_worse(case: str) -> None:
    """... than any heuristic; the exact mode is never worse than its start,
    the default's plan (as far as the default got in half the time limit:
    all of it here unless its search was cut)."""
    best = total(case, plan(DEFAULT_ALGORITHM, case))
    for name in ALGORITHMS:
        p = plan(name, case)
        if name in TIMED_ALGORITHMS:
            assert total(case, p) <= p.stats["heuristic_bytes"], name
        else:
            assert best <= total(case, p), name


@pytest.mark.parametrize(
    "case", ["random3-n12-unbounded", "random3-n12-fallback", "random4-n30-fallback"]
)
def test_exact_mode_starts_from_the_default(case: str) -> None:
    """With time enough for the whole default planner (these end in
    milliseconds), the exact mode starts from its plan, and is never worse."""
    best = total(case, plan(DEFAULT_ALGORITHM, case))
    p = get_algorithm("optimal", time_limit=10.0)(problem(case))
    assert p.stats["heuristic_bytes"] == best
    assert total(case, p) <= best


def test_default_beats_tvm_greedy_on_minimalloc() -> None:
    """Gap reuse + search: well under TVM's greedy on the hard instances."""
    for path in MINIMALLOC_FILES[1:]:
        case = f"minimalloc/{path.parent.name}/{path.name}"
        bound = lower_bound(problem(case))
        assert total(case, plan(DEFAULT_ALGORITHM, case)) <= 1.3 * bound
        assert total(case, plan("greedy_by_size", case)) >= 1.5 * bound


def test_default_geomean_on_challenging_minimalloc() -> None:
    """The issue's target: geomean <= 1.10x the bound on the challenging set
    (measured 1.085; plans are deterministic: a fixed node budget)."""
    ratios = []
    for path in MINIMALLOC_FILES[1:]:
        case = f"minimalloc/{path.parent.name}/{path.name}"
        ratios.append(
            total(case, plan(DEFAULT_ALGORITHM, case)) / lower_bound(problem(case))
        )
    assert len(ratios) == 7
    assert math.exp(sum(map(math.log, ratios)) / len(ratios)) <= 1.10


def test_default_without_the_c_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """No C compiler: the Python search runs, with a smaller budget."""
    monkeypatch.setattr(best_fit_module, "load", lambda: None)
    monkeypatch.setattr(minimalloc_solver, "load", lambda: None)
    case = f"minimalloc/{MINIMALLOC_FILES[1].parent.name}/{MINIMALLOC_FILES[1].name}"
    pb = problem(case)
    p = best_fit_module.BestFit()(pb)
    assert validate_plan(pb, p) == []
    budget = best_fit_module.BestFit().search_work // len(pb.buffers)
    assert 0 < p.stats["search_nodes"] <= budget // best_fit_module.PYTHON_SLOWDOWN
    assert total(case, p) <= p.stats["portfolio_bytes"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_default_reaches_lower_bound_on_chains(seed: int) -> None:
    pb = chain_problem(40, seed)
    p = get_algorithm(DEFAULT_ALGORITHM)(pb)
    assert validate_plan(pb, p) == []
    assert sum(p.pool_sizes(pb).values()) == lower_bound(pb)
    assert p.stats["pools_optimal"] == 1.0


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_toy_minimalloc_example_fits_its_capacity(algorithm: str) -> None:
    pb = minimalloc_problem(MINIMALLOC_FILES[0], with_capacity=True)
    assert pb.pools[0].size_limit == 12
    p = get_algorithm(algorithm)(pb)
    assert validate_plan(pb, p) == []
    assert p.pool_sizes(pb) == {"minimalloc": 12}


@pytest.mark.parametrize("algorithm", sorted(set(ALGORITHMS) - set(TIMED_ALGORITHMS)))
def test_deterministic(algorithm: str) -> None:
    for case in ("random5-n60-fallback", "random6-n150-unbounded"):
        again = get_algorithm(algorithm)(problem(case))
        assert dict(plan(algorithm, case).placements) == dict(again.placements)


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_fallback_to_next_candidate_pool(algorithm: str) -> None:
    pb = Problem(
        (
            Buffer("big", 600, 0, 2),
            Buffer("mid", 500, 1, 3),
            Buffer("tiny", 8, 2, 4, pools=("dram",)),
        ),
        (Pool("sram", size_limit=1000), Pool("dram")),
    )
    p = get_algorithm(algorithm)(pb)
    assert validate_plan(pb, p) == []
    # big and mid conflict, 1100 B > 1000 B: one of them falls back to dram
    assert {p.placements["big"].pool, p.placements["mid"].pool} == {"sram", "dram"}
    assert p.placements["tiny"].pool == "dram"


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_alignment_is_max_of_buffer_and_pool(algorithm: str) -> None:
    pb = Problem(
        (Buffer("a", 10, 0, 2, alignment=4), Buffer("b", 10, 0, 2, alignment=64)),
        (Pool("ws", alignment=16),),
    )
    p = get_algorithm(algorithm)(pb)
    assert validate_plan(pb, p) == []
    offsets = sorted((p.placements[n].offset, n) for n in "ab")
    assert offsets[0][0] == 0
    assert offsets[1][0] in (16, 64)
    assert (
        p.placements[offsets[1][1]].offset % (64 if offsets[1][1] == "b" else 16) == 0
    )


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_planning_error_names_buffer_and_limits(algorithm: str) -> None:
    pb = Problem(
        (Buffer("weights", 100, 0, 3), Buffer("huge_scratch", 5000, 1, 2)),
        (Pool("sram", size_limit=4096), Pool("flash", size_limit=1024)),
    )
    with pytest.raises(PlanningError) as info:
        get_algorithm(algorithm)(pb)
    err = info.value
    assert err.buffer == "huge_scratch" and err.size == 5000
    message = str(err)
    assert "'huge_scratch' (5000 B)" in message
    assert "pool 'sram' limit 4096 B" in message
    assert "pool 'flash' limit 1024 B" in message


def test_unknown_algorithm_lists_valid_names() -> None:
    with pytest.raises(ValueError) as info:
        get_algorithm("tetris")
    for name in ALGORITHMS:
        assert name in str(info.value)
    assert DEFAULT_ALGORITHM in ALGORITHMS


def test_unknown_candidate_pool_is_rejected() -> None:
    pb = Problem((Buffer("a", 4, 0, 1, pools=("nowhere",)),))
    with pytest.raises(ValueError, match="unknown candidate pool"):
        get_algorithm(DEFAULT_ALGORITHM)(pb)
