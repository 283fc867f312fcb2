"""MiniMalloc CSV reading/writing and the liveness lower bound."""

from __future__ import annotations

import pytest

from tests.test_planning_cases import MINIMALLOC_FILES, minimalloc_problem
from usmp.planning.lower_bound import interval_peak, lower_bound, pool_lower_bounds
from usmp.planning.minimalloc import (
    capacity_from_name,
    format_minimalloc,
    parse_minimalloc,
    read_minimalloc,
)
from usmp.planning.model import Buffer, Placement, Plan, Pool, Problem
from usmp.planning.validate import validate_plan

TOY = "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n"


def test_read_toy_example() -> None:
    pb = read_minimalloc(MINIMALLOC_FILES[0], capacity=12)
    assert [b.name for b in pb.buffers] == ["b1", "b2", "b3", "b4", "b5"]
    assert pb.buffers[1] == Buffer("b2", 4, 3, 9, pools=("minimalloc",))
    assert pb.pools == (Pool("minimalloc", size_limit=12, alignment=1),)
    assert capacity_from_name(MINIMALLOC_FILES[0]) == 12
    assert capacity_from_name("problem.csv") is None


def test_solution_round_trip() -> None:
    pb, none = parse_minimalloc(TOY)
    assert none is None
    solution = Plan(
        {
            n: Placement("minimalloc", o)
            for n, o in zip(
                ["b1", "b2", "b3", "b4", "b5"], [0, 0, 4, 0, 8], strict=True
            )
        }
    )
    text = format_minimalloc(pb, solution)
    assert text.splitlines()[0] == "id,lower,upper,size,offset"
    again, plan = parse_minimalloc(text, capacity=12)
    assert again.buffers == pb.buffers and plan is not None
    assert dict(plan.placements) == dict(solution.placements)
    assert validate_plan(again, plan) == []
    assert format_minimalloc(pb) == TOY


def test_bad_csv_is_reported_with_location() -> None:
    with pytest.raises(ValueError, match="missing column"):
        parse_minimalloc("id,lower,size\n1,0,4\n")
    with pytest.raises(ValueError, match=r"<csv>:3: "):
        parse_minimalloc("id,lower,upper,size\na,0,1,4\nb,0,x,4\n")
    with pytest.raises(ValueError, match="no MiniMalloc CSV form"):
        format_minimalloc(Problem((Buffer("a", 4, 0, 1, alignment=8),)))


def test_lower_bound_of_published_instances() -> None:
    """The published bounds (``docs/measurements.md``): 2^20 except D and
    J."""
    expected = {
        "A": 1048576,
        "B": 1048576,
        "D": 986112,
        "E": 1048576,
        "G": 1048576,
        "H": 1048576,
        "J": 989184,
    }
    for path in MINIMALLOC_FILES[1:]:
        assert lower_bound(minimalloc_problem(path)) == expected[path.name[0]]
    assert lower_bound(minimalloc_problem(MINIMALLOC_FILES[0])) == 12


def test_interval_peak_is_half_open() -> None:
    assert interval_peak([Buffer("a", 5, 0, 2), Buffer("b", 7, 2, 4)]) == 7
    assert interval_peak([Buffer("a", 5, 0, 3), Buffer("b", 7, 2, 4)]) == 12
    assert interval_peak([Buffer("a", 5, 1, 1), Buffer("z", 0, 0, 9)]) == 0


def test_explicit_conflicts_raise_the_bound() -> None:
    # Disjoint lifetimes, pairwise explicit conflicts: a clique of 3.
    pb = Problem(
        (
            Buffer("a", 10, 0, 1, conflicts=frozenset({"b", "c"})),
            Buffer("b", 20, 1, 2, conflicts=frozenset({"c"})),
            Buffer("c", 30, 2, 3),
            Buffer("d", 25, 0, 3),
        )
    )
    assert interval_peak(pb.buffers) == 55
    assert lower_bound(pb) == 85


def test_pool_lower_bounds_follow_the_plan() -> None:
    pb = Problem(
        (Buffer("a", 8, 0, 2), Buffer("b", 8, 1, 3), Buffer("c", 4, 1, 2)),
        (Pool("sram"), Pool("dram")),
    )
    plan = Plan(
        {
            "a": Placement("sram", 0),
            "b": Placement("dram", 0),
            "c": Placement("sram", 8),
        }
    )
    assert pool_lower_bounds(pb, plan) == {"sram": 12, "dram": 8}
