"""Planning problems shared by the planning tests, and checks of their claims.

Seeded random interval sets (with and without size limits, multi-pool
fallback, alignment, explicit conflicts, zero-size and empty-lifetime
buffers), operator chains, the MiniMalloc CSVs of
``shared/benchmarks/minimalloc`` and the real models' buffer sets of
``benchmarks/cases``.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

from usmp.planning.lower_bound import lower_bound
from usmp.planning.minimalloc import capacity_from_name, read_minimalloc
from usmp.planning.model import Buffer, Placement, Plan, Pool, Problem
from usmp.planning.problem_json import read_problem_json
from usmp.planning.validate import validate_plan

MINIMALLOC_DIR = Path(
    os.environ.get(
        "USMP_MINIMALLOC_DIR",
        Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "minimalloc",
    )
)
MINIMALLOC_FILES = [MINIMALLOC_DIR / "examples" / "input.12.csv"] + sorted(
    (MINIMALLOC_DIR / "challenging").glob("*.csv")
)
# Buffer sets of real models dumped by the IR side (benchmarks/README.md).
MODEL_CASES = sorted(
    (Path(__file__).resolve().parents[1] / "benchmarks" / "cases").glob("*.json")
)


def minimalloc_problem(path: Path, *, with_capacity: bool = False) -> Problem:
    """The file's problem; its pool is unbounded unless ``with_capacity`` (the
    challenging capacities need an exact solver: see benchmarks/README.md)."""
    return read_minimalloc(
        path, capacity=capacity_from_name(path) if with_capacity else None
    )


def model_problem(path: Path) -> Problem:
    return read_problem_json(path)


def random_buffers(
    rng: random.Random, n: int, *, horizon: int = 40, pools: tuple[str, ...] = ()
) -> list[Buffer]:
    buffers: list[Buffer] = []
    for k in range(n):
        start = rng.randrange(horizon)
        end = min(horizon, start + rng.choice([0, 1, 1, 2, 3, 5, 8, 13]))
        size = rng.choice([0, 1, 3, 16, 48, 100, 256, 1000, 4096]) if k % 7 else 0
        alignment = rng.choice([1, 1, 4, 8, 16, 64])
        buffers.append(
            Buffer(f"b{k:03d}", size, start, end, alignment=alignment, pools=pools)
        )
    # a few explicit conflicts between buffers whose lifetimes are disjoint
    for _ in range(n // 6):
        a, b = rng.sample(range(n), 2) if n > 1 else (0, 0)
        if a != b:
            buffers[a] = Buffer(
                buffers[a].name,
                buffers[a].size,
                buffers[a].start,
                buffers[a].end,
                buffers[a].alignment,
                buffers[a].pools,
                buffers[a].conflicts | {buffers[b].name},
            )
    return buffers


def _slack(buffers: list[Buffer]) -> int:
    """Bytes every planner fits in: the sum of aligned sizes."""
    return sum(b.size + max(b.alignment, 16) for b in buffers)


def random_problems() -> dict[str, Problem]:
    problems: dict[str, Problem] = {}
    for seed, n in [(1, 1), (2, 5), (3, 12), (4, 30), (5, 60), (6, 150)]:
        rng = random.Random(seed)
        buffers = random_buffers(rng, n)
        problems[f"random{seed}-n{n}-unbounded"] = Problem(tuple(buffers))
        problems[f"random{seed}-n{n}-bounded"] = Problem(
            tuple(buffers), (Pool("sram", size_limit=_slack(buffers), alignment=8),)
        )
        # Small fast pool first, unbounded slow pool as fallback; some buffers
        # may only go to one of them.
        mixed = [
            Buffer(
                b.name,
                b.size,
                b.start,
                b.end,
                b.alignment,
                rng.choice([(), ("sram", "dram"), ("dram",), ("dram", "sram")]),
                b.conflicts,
            )
            for b in buffers
        ]
        tight = max(1, sum(b.size for b in buffers) // 5)
        problems[f"random{seed}-n{n}-fallback"] = Problem(
            tuple(mixed), (Pool("sram", size_limit=tight), Pool("dram", alignment=4))
        )
    return problems


def chain_problem(n: int, seed: int) -> Problem:
    """An operator chain: buffer ``i`` lives ``[i, i + 2)`` (input + output),
    whose lower bound is always reachable (even ones at 0, odd ones on top)."""
    rng = random.Random(seed)
    return Problem(
        tuple(
            Buffer(f"t{i:02d}", rng.randrange(1, 64) * 16, i, i + 2) for i in range(n)
        )
    )


def test_chain_lower_bound_is_reachable() -> None:
    """The layout ``chain_problem`` promises: even buffers at 0, odd on top."""
    pb = chain_problem(40, 0)
    bound = lower_bound(pb)
    plan = Plan(
        {
            b.name: Placement(pb.pools[0].name, 0 if k % 2 == 0 else bound - b.size)
            for k, b in enumerate(pb.buffers)
        }
    )
    assert validate_plan(pb, plan) == []
    assert plan.pool_sizes(pb) == {pb.pools[0].name: bound}


def test_random_problems_cover_the_features() -> None:
    problems = random_problems()
    buffers = [b for p in problems.values() for b in p.buffers]
    assert any(b.size == 0 for b in buffers)
    assert any(b.start == b.end for b in buffers)
    assert any(b.conflicts for b in buffers)
    assert {b.alignment for b in buffers} >= {1, 4, 8, 16, 64}
    fallback = [p for name, p in problems.items() if name.endswith("fallback")]
    assert all(p.pools[0].size_limit is not None for p in fallback)
    assert any(b.pools == ("dram",) for p in fallback for b in p.buffers)
