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


def _pairwise_reference(problem: Problem, plan: Plan) -> list[str]:
    """The byte-sharing violations as every pair of buffers finds them (the
    validator visits only the pairs sharing an address range)."""
    from usmp.planning.validate import _conflict  # pyright: ignore[reportPrivateUsage]

    allowed = {
        (o.source, o.target): (o.max_shift, o.min_shift) for o in problem.overlaps
    }

    def allows(source: str, target: str, shift: int) -> bool:
        below, above = allowed.get((source, target), (None, None))
        if below is None:
            return False
        return shift <= below or (above is not None and shift >= above)

    placed = [
        (b, plan.placements[b.name].pool, plan.placements[b.name].offset)
        for b in problem.buffers
    ]
    out: list[str] = []
    for x, (a, pool_a, off_a) in enumerate(placed):
        for b, pool_b, off_b in placed[x + 1 :]:
            if pool_a != pool_b or not _conflict(a, b):
                continue
            if allows(a.name, b.name, off_b - off_a) or allows(
                b.name, a.name, off_a - off_b
            ):
                continue
            if max(off_a, off_b) < min(off_a + a.size, off_b + b.size):
                out.append(
                    f"conflicting buffers '{a.name}' [{off_a}, {off_a + a.size}) and "
                    f"'{b.name}' [{off_b}, {off_b + b.size}) overlap in pool '{pool_a}'"
                )
    return out


@pytest.mark.parametrize("seed", range(40))
def test_sharing_pairs_are_every_pair_that_shares_bytes(seed: int) -> None:
    """Random plans (two pools, equal offsets, empty buffers, explicit
    conflicts, overlaps allowed below or above): the validator's byte
    conflicts are exactly, and in the order, those of comparing every pair."""
    import random

    from usmp.planning.model import Overlap

    rng = random.Random(seed)
    n = rng.randint(2, 30)
    names = [f"b{i}" for i in range(n)]
    buffers = []
    for name in names:
        start = rng.randint(0, 8)
        conflicts = frozenset(rng.sample(names, rng.randint(0, 2))) - {name}
        size = rng.choice((0, 1, 4, 8, 16, 40))
        buffers.append(
            Buffer(name, size, start, start + rng.randint(0, 4), 1, (), conflicts)
        )
    overlaps = tuple(
        Overlap(a, b, rng.randint(-8, 8), rng.choice((None, rng.randint(0, 16))))
        for a, b in (rng.sample(names, 2) for _ in range(rng.randint(0, 6)))
    )
    problem = Problem(tuple(buffers), (Pool("p"), Pool("q")), overlaps)
    placements = {
        name: Placement(rng.choice("pq"), rng.randrange(0, 64, 4)) for name in names
    }
    plan_ = Plan(placements)
    expected = _pairwise_reference(problem, plan_)
    found = [v for v in validate_plan(problem, plan_) if v.startswith("conflicting")]
    assert found == expected
    if seed == 0:
        assert any(expected), "some random plan must conflict"
