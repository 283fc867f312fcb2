"""The independent plan validator catches every kind of violation."""

from __future__ import annotations

import pytest

from usmp.planning.model import Buffer, Placement, Plan, Pool, Problem
from usmp.planning.validate import PlanValidationError, check_plan, validate_plan

PROBLEM = Problem(
    (
        Buffer("a", 32, 0, 2, alignment=16),
        Buffer("b", 32, 1, 3),
        Buffer("c", 16, 2, 4, pools=("sram",)),
        Buffer("d", 16, 5, 6, conflicts=frozenset({"a"})),
        Buffer("empty", 0, 0, 9),
    ),
    (Pool("sram", size_limit=64, alignment=16), Pool("dram", alignment=4)),
)


def plan(**placements: tuple[str, int]) -> Plan:
    valid = {
        "a": ("sram", 0),
        "b": ("sram", 32),
        "c": ("sram", 0),  # a is dead at 2: c may reuse its bytes
        "d": ("dram", 0),
        "empty": ("sram", 16),  # no bytes: overlaps nothing
    }
    valid.update(placements)
    return Plan({n: Placement(*p) for n, p in valid.items() if p[0]})


def test_valid_plan_has_no_violation() -> None:
    assert validate_plan(PROBLEM, plan()) == []
    check_plan(PROBLEM, plan())


def test_overlap_of_interval_conflicts() -> None:
    (v,) = validate_plan(PROBLEM, plan(b=("sram", 16)))
    assert "'a' [0, 32)" in v and "'b' [16, 48)" in v and "overlap in pool 'sram'" in v


def test_overlap_of_explicit_conflicts() -> None:
    (v,) = validate_plan(PROBLEM, plan(d=("sram", 16)))
    assert "'a'" in v and "'d'" in v and "overlap" in v


def test_disjoint_lifetimes_may_share_bytes_unless_conflicting() -> None:
    # b ends at 3, d starts at 5 and only conflicts with a explicitly.
    assert validate_plan(PROBLEM, plan(d=("sram", 32))) == []


def test_misalignment() -> None:
    violations = validate_plan(PROBLEM, plan(d=("dram", 6)))
    assert violations == ["buffer 'd' at offset 6 in 'dram' is not aligned to 4 B"]
    # the buffer's own alignment wins when larger than the pool's
    (v,) = validate_plan(PROBLEM, plan(a=("dram", 20)))
    assert v == "buffer 'a' at offset 20 in 'dram' is not aligned to 16 B"


def test_pool_limit() -> None:
    (v,) = validate_plan(PROBLEM, plan(b=("sram", 48)))
    assert v == "buffer 'b' [48, 80) exceeds pool 'sram' limit of 64 B"


def test_out_of_candidate_pools() -> None:
    (v,) = validate_plan(PROBLEM, plan(c=("dram", 0)))
    assert "'c' placed in pool 'dram', not one of its candidates (sram)" in v
    (v,) = validate_plan(PROBLEM, plan(c=("flash", 0)))
    assert "unknown pool 'flash'" in v


def test_missing_and_unknown_buffers() -> None:
    p = plan(b=("", 0))
    extra = Plan({**p.placements, "ghost": Placement("sram", 0)})
    assert validate_plan(PROBLEM, extra) == [
        "placement for unknown buffer 'ghost'",
        "buffer 'b' (32 B) is not placed",
    ]


def test_negative_offset_and_declared_pool_sizes() -> None:
    violations = validate_plan(PROBLEM, plan(d=("dram", -4)))
    assert "buffer 'd' at negative offset -4" in violations
    (v,) = validate_plan(PROBLEM, plan(), pool_sizes={"sram": 48, "dram": 16})
    assert v == "buffer 'b' [32, 64) exceeds the 48 B given for pool 'sram'"


def test_check_plan_raises_with_every_violation() -> None:
    with pytest.raises(PlanValidationError) as info:
        check_plan(PROBLEM, plan(b=("sram", 16), d=("dram", 6)))
    assert len(info.value.violations) == 2
    assert "2 violation(s)" in str(info.value)
