"""Fuzz the whole pipeline: random relay graphs -> C -> compared with the oracle.

    python benchmarks/fuzz.py [--examples N] [--seed S] [--jobs J]
                              [--batch B] [--out DIR]

Case ``i`` is ``usmp.testing.fuzz_graphs.generate_from_seed(S + i)`` (model
``fz<S+i>``); cases are compiled ``B`` at a time into one C program
(``usmp.testing.fuzz_run.run_batch``: ASan/UBSan, usmp-validate on every plan,
a too-small pool must give a located error), batches spread over ``J``
processes. Each failure prints its seed and writes a reproducer
(``DIR/fz<seed>.mlir`` with the pipeline in its header, ``.npz`` with the
inputs and the oracle's outputs); ``--seed <seed> --examples 1`` replays it.
Ends with a table: cases, how each ended, failures, time. Exit status 1 if
any case failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _batch(seeds: list[int], out: str) -> list[tuple[int, str, str, str, list[str]]]:
    """(seed, outcome, failure stage, message, operator kinds) per seed."""
    from usmp.testing.fuzz_graphs import generate_from_seed
    from usmp.testing.fuzz_run import reproducer, run_batch

    rows: list[tuple[int, str, str, str, list[str]]] = []
    cases = []
    for seed in seeds:
        try:
            cases.append(generate_from_seed(seed))
        except Exception as e:  # noqa: BLE001 - a generator bug is a finding too
            rows.append((seed, "failed", "generate", f"{type(e).__name__}: {e}", []))
    for seed, r in zip(
        [s for s in seeds if s not in {row[0] for row in rows}],
        run_batch(cases),
        strict=True,
    ):
        if r.failure is not None:
            replay = f"python benchmarks/fuzz.py --seed {seed} --examples 1"
            path = reproducer(r, Path(out), replay)
            rows.append(
                (
                    seed,
                    "failed",
                    r.failure.stage,
                    f"{r.failure.message}\n  -> {path}",
                    r.case.kinds,
                )
            )
        else:
            outcome = (
                "rejected (pool too small)" if r.rejected else "ran, matched oracle"
            )
            rows.append((seed, outcome, "", "", r.case.kinds))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--out", default="fuzz-failures")
    args = parser.parse_args(argv)
    seeds = list(range(args.seed, args.seed + args.examples))
    batches = [seeds[i : i + args.batch] for i in range(0, len(seeds), args.batch)]
    start = time.perf_counter()
    outcomes: Counter[str] = Counter()
    operators: Counter[str] = Counter()
    failures: list[tuple[int, str, str]] = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(_batch, b, args.out) for b in batches]
        done = 0
        for future in as_completed(futures):
            for seed, outcome, stage, message, kinds in future.result():
                outcomes[outcome] += 1
                operators.update(kinds)
                done += 1
                if outcome == "failed":
                    failures.append((seed, stage, message))
                    print(f"FAIL seed {seed} [{stage}] {message}", flush=True)
            print(
                f"  {done}/{len(seeds)} cases, {len(failures)} failures, "
                f"{time.perf_counter() - start:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    elapsed = time.perf_counter() - start
    print()
    print(
        "| cases | ran, matched oracle | rejected (pool too small) | failures "
        "| time s | s/case |"
    )
    print("|--:|--:|--:|--:|--:|--:|")
    print(
        f"| {len(seeds)} | {outcomes['ran, matched oracle']} "
        f"| {outcomes['rejected (pool too small)']} | {len(failures)} "
        f"| {elapsed:.1f} | {elapsed / max(1, len(seeds)):.2f} |"
    )
    if failures:
        print()
        print("| seed | stage | reproducer |")
        print("|--:|---|---|")
        for seed, stage, message in sorted(failures):
            print(f"| {seed} | {stage} | {message.rsplit('-> ', 1)[-1]} |")
    print()
    print(
        "operators generated:",
        ", ".join(f"{k} {v}" for k, v in operators.most_common()),
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
