#!/usr/bin/env python3
"""Benchmark every memory planning algorithm against the liveness lower bound.

Cases: the MiniMalloc CSVs (``shared/benchmarks/minimalloc``; planned into one
unbounded pool, so the table shows the bytes each algorithm needs) and every
JSON buffer set under ``benchmarks/cases/`` (format: ``planning/problem_json.py``).
Each plan is checked by the independent validator before it is reported.

    python benchmarks/plan_memory.py [--algorithm NAME ...] [--repeat N]

Prints a Markdown table: pool bytes (sum over pools), lower bound, ratio, and
the best planning CPU time over ``--repeat`` runs, in milliseconds (CPU time,
not wall time: the machines are shared).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from usmp.planning.algorithms import ALGORITHMS, get_algorithm
from usmp.planning.lower_bound import lower_bound
from usmp.planning.minimalloc import read_minimalloc
from usmp.planning.model import Problem
from usmp.planning.problem_json import read_problem_json
from usmp.planning.validate import check_plan

HERE = Path(__file__).resolve().parent
DEFAULT_MINIMALLOC = HERE.parents[1] / "shared" / "benchmarks" / "minimalloc"


def cases(minimalloc_dir: Path, cases_dir: Path) -> list[tuple[str, Problem]]:
    found: list[tuple[str, Problem]] = []
    for path in sorted(minimalloc_dir.glob("*/*.csv")):
        found.append(
            (f"minimalloc/{path.parent.name}/{path.stem}", read_minimalloc(path))
        )
    for path in sorted(cases_dir.glob("**/*.json")):
        found.append(
            (str(path.relative_to(cases_dir).with_suffix("")), read_problem_json(path))
        )
    return found


@dataclass(frozen=True)
class Row:
    case: str
    buffers: int
    algorithm: str
    total: int
    bound: int
    ms: float

    @property
    def ratio(self) -> str:
        return f"{self.total / self.bound:.3f}" if self.bound else "-"


def run(problem: Problem, case: str, name: str, repeat: int) -> Row:
    """Plan ``problem`` ``repeat`` times (best CPU time kept) and validate it."""
    algorithm = get_algorithm(name)
    best = float("inf")
    plan = None
    for _ in range(max(repeat, 1)):
        t0 = time.process_time()
        plan = algorithm(problem)
        best = min(best, time.process_time() - t0)
    assert plan is not None
    check_plan(problem, plan)
    total = sum(plan.pool_sizes(problem).values())
    return Row(
        case, len(problem.buffers), name, total, lower_bound(problem), best * 1e3
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--minimalloc-dir", type=Path, default=DEFAULT_MINIMALLOC)
    parser.add_argument("--cases-dir", type=Path, default=HERE / "cases")
    parser.add_argument(
        "--algorithm",
        action="append",
        choices=sorted(ALGORITHMS),
        help="algorithm(s) to run (default: all)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per cell; best time kept"
    )
    parser.add_argument(
        "--wide", action="store_true", help="one row per case, one column per algorithm"
    )
    args = parser.parse_args()
    names = args.algorithm or list(ALGORITHMS)

    if args.wide:
        print(
            "| case | buffers | lower bound | "
            + " | ".join(f"{n}: bytes (ratio, ms)" for n in names)
            + " |"
        )
        print("|---|--:|--:|" + "--:|" * len(names))
    else:
        print("| case | buffers | algorithm | pool bytes | lower bound | ratio | ms |")
        print("|---|--:|---|--:|--:|--:|--:|")
    for case, problem in cases(args.minimalloc_dir, args.cases_dir):
        rows = [run(problem, case, name, args.repeat) for name in names]
        if args.wide:
            cells = " | ".join(f"{r.total} ({r.ratio}, {r.ms:.1f})" for r in rows)
            print(f"| {case} | {rows[0].buffers} | {rows[0].bound} | {cells} |")
        else:
            for r in rows:
                print(
                    f"| {case} | {r.buffers} | {r.algorithm} | {r.total} | {r.bound} "
                    f"| {r.ratio} | {r.ms:.1f} |"
                )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
