#!/usr/bin/env python3
"""Benchmark every memory planning algorithm against the lower bounds.

Cases: the MiniMalloc CSVs (``shared/benchmarks/minimalloc``; planned into one
unbounded pool, so the table shows the bytes each algorithm needs; the
challenging files are meant for a capacity of 2^20), every JSON buffer set
under ``benchmarks/cases/`` (format: ``planning/problem_json.py``), and
generated problems of 1,000 / 10,000 / 50,000 buffers (``--scale``) for the
planning time. Each plan is checked by the independent validator first
(up to 10,000 buffers: the validator is quadratic on purpose).

    python benchmarks/plan_memory.py [--algorithm NAME ...] [--repeat N]
        [--time-limit S] [--scale N ...] [--wide]
        [--dense N:LIVE ...] [--dense-time-limit S] [--dense-only]

A second table, *dense* problems (``usmp.testing.planning_problems``:
``N`` buffers, about ``LIVE`` live at once, seeded; default 1,000 / 10,000 /
50,000 buffers with ~500 live, 10,000 and 50,000 with ~2,000): ``best_fit``
and ``optimal`` (``--dense-time-limit`` CPU s, default 10), each run in a
process of its own for its peak resident memory; validated up to 2,000
buffers.

Per case and algorithm: pool bytes (sum over pools), the liveness lower bound,
the proven lower bound (the fragmentation-aware ``minimize.window_bound`` of
the case, and for ``optimal`` also raised by its infeasibility proofs),
the ratio bytes / liveness bound, whether the plan is proven optimal, whether
it fits the file's capacity (MiniMalloc files) and the planning CPU time
(best of ``--repeat``; CPU, not wall time: the machines are shared).
``optimal`` runs with ``--time-limit`` CPU seconds (default 60).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from usmp.planning.algorithms import (
    ALGORITHMS,
    DEFAULT_ALGORITHM,
    TIMED_ALGORITHMS,
    get_algorithm,
)
from usmp.planning.lower_bound import lower_bound
from usmp.planning.minimalloc import capacity_from_name, read_minimalloc
from usmp.planning.minimize import pool_problem, window_bound
from usmp.planning.model import Buffer, Problem
from usmp.planning.placement import Indexed
from usmp.planning.problem_json import read_problem_json
from usmp.planning.validate import check_plan
from usmp.testing.planning_problems import dense_problem, max_live

HERE = Path(__file__).resolve().parent
# The independent validator compares every pair of buffers (on purpose: it
# shares no code with the planners' sweep), so the 50,000-buffer plan is not
# checked (10,000 buffers: about a minute).
VALIDATE_UP_TO = 10_000
DEFAULT_MINIMALLOC = HERE.parents[1] / "shared" / "benchmarks" / "minimalloc"


def cases(
    minimalloc_dir: Path, cases_dir: Path
) -> list[tuple[str, Problem, int | None]]:
    """(name, problem, capacity the file is meant for) of every case file."""
    found: list[tuple[str, Problem, int | None]] = []
    for path in sorted(minimalloc_dir.glob("*/*.csv")):
        found.append(
            (
                f"minimalloc/{path.parent.name}/{path.stem}",
                read_minimalloc(path),
                capacity_from_name(path),
            )
        )
    for path in sorted(cases_dir.glob("**/*.json")):
        found.append(
            (
                str(path.relative_to(cases_dir).with_suffix("")),
                read_problem_json(path),
                None,
            )
        )
    return found


def generated(n: int, seed: int = 0) -> Problem:
    """``n`` buffers of 16 B .. 4 KiB, live 1..20 steps over ``n / 4`` steps
    (about two dozen live at once, like a long model's activations)."""
    rng = random.Random(seed)
    buffers = []
    for i in range(n):
        start = rng.randint(0, n // 4)
        length = rng.choice((1, 1, 2, 3, 5, 8, 20))
        buffers.append(Buffer(f"t{i}", rng.randint(1, 256) * 16, start, start + length))
    return Problem(tuple(buffers))


@dataclass(frozen=True)
class Row:
    case: str
    buffers: int
    algorithm: str
    total: int
    bound: int
    proven: int
    optimal: bool
    capacity: int | None
    seconds: float

    @property
    def ratio(self) -> str:
        return f"{self.total / self.bound:.3f}" if self.bound else "-"

    @property
    def fits(self) -> str:
        if self.capacity is None:
            return "-"
        return "yes" if self.total <= self.capacity else "no"


def fragmentation_bound(problem: Problem, bound: int) -> int:
    """``minimize.window_bound`` of a one-pool problem (up to 2,000 buffers;
    else, or with several pools, ``bound``): the liveness peak raised where
    windows of the problem are proven not to fit."""
    if len(problem.pools) != 1 or len(problem.buffers) > 2_000:
        return bound
    ix = Indexed.of(problem)
    return window_bound(pool_problem(ix, [0] * len(ix.names), 0)[1], bound)


def run(
    problem: Problem,
    case: str,
    name: str,
    repeat: int,
    time_limit: float,
    capacity: int | None = None,
    bound: int | None = None,
) -> Row:
    """Plan ``problem`` ``repeat`` times (best CPU time kept) and validate it."""
    algorithm = get_algorithm(
        name, time_limit=time_limit if name in TIMED_ALGORITHMS else None
    )
    best = float("inf")
    plan = None
    for _ in range(max(repeat, 1)):
        t0 = time.process_time()
        plan = algorithm(problem)
        best = min(best, time.process_time() - t0)
    assert plan is not None
    if len(problem.buffers) <= VALIDATE_UP_TO:
        check_plan(problem, plan)
    total = sum(plan.pool_sizes(problem).values())
    peak = lower_bound(problem)
    if bound is None:
        bound = peak
    proven = max(int(plan.stats.get("proven_lower_bound", peak)), bound)
    single_pool = len(problem.pools) == 1
    optimal = total <= proven or (
        single_pool and plan.stats.get("pools_optimal", 0.0) == 1.0
    )
    return Row(
        case,
        len(problem.buffers),
        name,
        total,
        peak,
        proven,
        optimal,
        capacity,
        best,
    )


DENSE = ((1_000, 500), (10_000, 500), (50_000, 500), (10_000, 2_000), (50_000, 2_000))
DENSE_ALGORITHMS = (DEFAULT_ALGORITHM, "optimal")
VALIDATE_DENSE_UP_TO = 2_000


def dense_cell(n: int, live: int, name: str, time_limit: float, repeat: int) -> None:
    """Plan one dense problem (in this process, started for it alone) and
    print the row's figures as JSON (peak RSS: the whole process's)."""
    problem = dense_problem(n, live)
    algorithm = get_algorithm(
        name, time_limit=time_limit if name in TIMED_ALGORITHMS else None
    )
    best = float("inf")
    plan = None
    for _ in range(max(repeat, 1)):
        t0 = time.process_time()
        plan = algorithm(problem)
        best = min(best, time.process_time() - t0)
    assert plan is not None
    if n <= VALIDATE_DENSE_UP_TO:
        check_plan(problem, plan)
    figures = {
        "bytes": sum(plan.pool_sizes(problem).values()),
        "bound": lower_bound(problem),
        "max_live": max_live(problem),
        "seconds": best,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    print(json.dumps(figures))


def dense_rows(
    sizes: list[tuple[int, int]], names: list[str], time_limit: float, repeat: int
) -> None:
    print()
    print(
        "| problem | buffers | max live | algorithm | bytes | lower bound | ratio "
        "| CPU s | peak RSS MB |"
    )
    print("|---|--:|--:|---|--:|--:|--:|--:|--:|")
    for n, live in sizes:
        for name in names:
            cell = [str(n), str(live), name, str(time_limit), str(repeat)]
            proc = subprocess.run(
                [sys.executable, __file__, "--dense-cell", *cell],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                print(
                    f"| dense-{n}-{live} | {n} | | {name} | failed: "
                    f"{proc.stderr.strip().splitlines()[-1:]} | | | | |"
                )
                continue
            f = json.loads(proc.stdout.strip().splitlines()[-1])
            label = (
                name if name not in TIMED_ALGORITHMS else f"{name} ({time_limit:g} s)"
            )
            print(
                f"| dense-{n}-{live} | {n} | {f['max_live']} | {label} | "
                f"{f['bytes']} | {f['bound']} | {f['bytes'] / f['bound']:.3f} | "
                f"{f['seconds']:.2f} | {f['rss_mb']:.0f} |"
            )
            sys.stdout.flush()


def _dense_size(text: str) -> tuple[int, int]:
    if text == "0":
        return (0, 0)
    n, _, live = text.partition(":")
    return int(n), int(live)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[1])
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
        "--time-limit", type=float, default=60.0, help="CPU s for 'optimal'"
    )
    parser.add_argument(
        "--scale",
        type=int,
        action="append",
        help="generated problem sizes (default 1000 10000 50000; 0: none); "
        "planned by the default algorithm only",
    )
    parser.add_argument(
        "--wide", action="store_true", help="one row per case, one column per algorithm"
    )
    parser.add_argument(
        "--dense",
        type=_dense_size,
        action="append",
        metavar="N:LIVE",
        help="dense problems: N buffers, ~LIVE live at once (default "
        + " ".join(f"{n}:{live}" for n, live in DENSE)
        + "; 0: none)",
    )
    parser.add_argument(
        "--dense-time-limit", type=float, default=10.0, help="CPU s for 'optimal'"
    )
    parser.add_argument(
        "--dense-only", action="store_true", help="only the dense problems' table"
    )
    parser.add_argument("--dense-cell", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dense_cell:
        n, live, name, limit, repeat = args.dense_cell
        dense_cell(int(n), int(live), name, float(limit), int(repeat))
        return
    names = args.algorithm or list(ALGORITHMS)
    dense_sizes = [d for d in (args.dense or DENSE) if d[0] > 0]
    dense_names = [n for n in DENSE_ALGORITHMS if n in names]
    if args.dense_only:
        dense_rows(dense_sizes, dense_names, args.dense_time_limit, args.repeat)
        return

    if args.wide:
        print(
            "| case | buffers | lower bound | "
            + " | ".join(f"{n}: bytes (ratio, s)" for n in names)
            + " |"
        )
        print("|---|--:|--:|" + "--:|" * len(names))
    else:
        print(
            "| case | buffers | algorithm | bytes | lower bound | proven bound "
            "| ratio | proven optimal | fits 2^20 | CPU s |"
        )
        print("|---|--:|---|--:|--:|--:|--:|---|---|--:|")

    def report(rows: list[Row]) -> None:
        if args.wide:
            cells = " | ".join(
                f"{r.total} ({r.ratio}{'*' if r.optimal else ''}, {r.seconds:.2f})"
                for r in rows
            )
            print(f"| {rows[0].case} | {rows[0].buffers} | {rows[0].bound} | {cells} |")
        else:
            for r in rows:
                print(
                    f"| {r.case} | {r.buffers} | {r.algorithm} | {r.total} | "
                    f"{r.bound} | {r.proven} | {r.ratio} | "
                    f"{'yes' if r.optimal else 'no'} | {r.fits} | {r.seconds:.2f} |"
                )
        sys.stdout.flush()

    for case, problem, capacity in cases(args.minimalloc_dir, args.cases_dir):
        bound = fragmentation_bound(problem, lower_bound(problem))
        rows = [
            run(problem, case, name, args.repeat, args.time_limit, capacity, bound)
            for name in names
        ]
        if capacity is not None and not args.wide:
            # The exact mode given the file's capacity as the pool's limit:
            # it decides feasibility at the limit first, then minimises.
            bounded = Problem(
                problem.buffers,
                tuple(replace(p, size_limit=capacity) for p in problem.pools),
            )
            for name in names:
                if name in TIMED_ALGORITHMS:
                    row = run(
                        bounded,
                        case,
                        name,
                        args.repeat,
                        args.time_limit,
                        capacity,
                        bound,
                    )
                    rows.append(replace(row, algorithm=f"{name} (limit {capacity})"))
        report(rows)
    for n in args.scale or [1000, 10000, 50000]:
        if n > 0:
            report(
                [
                    run(
                        generated(n),
                        f"generated-{n}",
                        DEFAULT_ALGORITHM,
                        args.repeat,
                        args.time_limit,
                    )
                ]
            )
    dense_rows(dense_sizes, dense_names, args.dense_time_limit, args.repeat)


if __name__ == "__main__":
    main()
