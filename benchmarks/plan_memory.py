#!/usr/bin/env python3
"""Benchmark every memory planning algorithm against the liveness lower bound.

Cases: the MiniMalloc CSVs (``shared/benchmarks/minimalloc``; planned into one
unbounded pool, so the table shows the bytes each algorithm needs) and every
JSON buffer set under ``benchmarks/cases/`` (format: ``planning/problem_json.py``).
Each plan is checked by the independent validator before it is reported.

    python benchmarks/plan_memory.py [--algorithm NAME ...] [--repeat N]

Prints a Markdown table: pool bytes (sum over pools), lower bound, ratio, and
the best planning time over ``--repeat`` runs, in milliseconds.
"""

from __future__ import annotations

import argparse
import time
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
        found.append((f"minimalloc/{path.parent.name}/{path.stem}", read_minimalloc(path)))
    for path in sorted(cases_dir.glob("**/*.json")):
        found.append((str(path.relative_to(cases_dir).with_suffix("")), read_problem_json(path)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minimalloc-dir", type=Path, default=DEFAULT_MINIMALLOC)
    parser.add_argument("--cases-dir", type=Path, default=HERE / "cases")
    parser.add_argument(
        "--algorithm", action="append", choices=sorted(ALGORITHMS),
        help="algorithm(s) to run (default: all)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per cell; best time kept")
    args = parser.parse_args()
    names = args.algorithm or list(ALGORITHMS)

    print("| case | buffers | algorithm | pool bytes | lower bound | ratio | time (ms) |")
    print("|---|--:|---|--:|--:|--:|--:|")
    for case, problem in cases(args.minimalloc_dir, args.cases_dir):
        bound = lower_bound(problem)
        for name in names:
            algorithm = get_algorithm(name)
            best_time = float("inf")
            for _ in range(max(args.repeat, 1)):
                t0 = time.perf_counter()
                plan = algorithm(problem)
                best_time = min(best_time, time.perf_counter() - t0)
            check_plan(problem, plan)
            total = sum(plan.pool_sizes(problem).values())
            ratio = f"{total / bound:.3f}" if bound else "-"
            print(
                f"| {case} | {len(problem.buffers)} | {name} | {total} | {bound} "
                f"| {ratio} | {best_time * 1000:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
