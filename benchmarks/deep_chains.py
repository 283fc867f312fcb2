"""Compile time of chains of elementwise operators as they grow: no step may
recurse along the chain, and none may cost more than linear time in it.

    python benchmarks/deep_chains.py [--sizes 1250,2500,5000,10000,20000]
        [--variants default,fused,unfused] [--markdown]

The graph is ``usmp.testing.scale_graphs.chain_graph(n)`` (one chain of
int8/int32 elementwise operators, as deep as it is long), compiled by one
``usmp-compile`` process per row (``--quiet --time-passes``; the process's
CPU seconds, machines being shared). Variants:

* ``default``: the relay main as it is; ``fuse-ops``' default depth (256)
  makes groups of 256 operators;
* ``fused``: the main after ``plan-devices,fuse-ops{max_depth=2n}``: one
  primitive function of the whole chain, one loop nest in C;
* ``unfused``: after ``fuse-ops{max_depth=1}``: one function per operator
  (slow: about 10 ms per operator).

Each row ends with the output's check: the library is built with gcc and run
on one input, and compared with ``chain_reference`` (``--no-run`` skips it).
The last columns are CPU ms per operator and its ratio to the smallest size's
(about 1 when the time is linear), the process's peak resident memory, and
the memory each operator adds: KB of peak RSS per operator over the previous
size (about constant when the memory is linear; the first row's is over
the empty process, start-up and imports included).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from compile_time import (  # noqa: E402
    _compile,  # pyright: ignore[reportPrivateUsage]
)

from usmp.testing.fuzz_graphs import print_module  # noqa: E402
from usmp.testing.run_c import run_pipeline  # noqa: E402
from usmp.testing.scale_graphs import (  # noqa: E402
    chain_graph,
    chain_reference,
    operator_count,
)

VARIANTS = ("default", "fused", "unfused")
X = np.arange(-128, 128, 4, dtype=np.int8).reshape(1, 4, 4, 4)


def _row(n: int, variant: str, folder: Path, run: bool) -> dict[str, float | str]:
    module = chain_graph(n)
    ops = operator_count(module)
    compiled = module
    if variant != "default":
        depth = 1 if variant == "unfused" else 2 * n
        compiled = run_pipeline(module, f"plan-devices,fuse-ops{{max_depth={depth}}}")
    source = folder / f"chain{n}-{variant}.mlir"
    source.write_text(print_module(compiled))
    out = folder / f"out{n}-{variant}"
    measured = _compile(source, out)
    total, steps = measured.cpu, measured.steps
    check = "-"
    if run:
        import usmp

        (y,) = usmp.Library(out).run([X])
        check = "ok" if np.array_equal(y, chain_reference(module, X)) else "WRONG"
    return {
        "n": ops,
        "variant": variant,
        "total": total,
        "lower-ops": steps.get("lower-ops", 0.0),
        "emit-c": steps.get("emit-c", 0.0),
        "peak": measured.peak_mb,
        "check": check,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", default="1250,2500,5000,10000")
    parser.add_argument("--variants", default="default,fused")
    parser.add_argument("--no-run", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    variants = args.variants.split(",")
    for v in variants:
        if v not in VARIANTS:
            raise SystemExit(f"unknown variant '{v}' (expected {', '.join(VARIANTS)})")
    sep = " | " if args.markdown else "  "
    head = ["operators", "variant", "CPU s", "lower-ops", "emit-c", "ms/op", "ratio"]
    head += ["peak MB", "KB/op added", "C output"]
    print(sep.join(head))
    if args.markdown:
        print("|".join(["---"] * len(head)))
    with tempfile.TemporaryDirectory() as tmp:
        for variant in variants:
            first: float | None = None
            before = (0, 0.0)  # (operators, peak MB) of the previous row
            for n in sizes:
                r = _row(n, variant, Path(tmp), not args.no_run)
                per_op = 1000 * float(r["total"]) / int(r["n"])
                ops, peak = int(r["n"]), float(r["peak"])
                added = 1024 * (peak - before[1]) / (ops - before[0])
                first = first or per_op
                cells = [
                    f"{r['n']:,}",
                    str(variant),
                    f"{r['total']:.2f}",
                    f"{r['lower-ops']:.2f}",
                    f"{r['emit-c']:.2f}",
                    f"{per_op:.2f}",
                    f"{per_op / first:.2f}",
                    f"{peak:.0f}",
                    f"{added:.1f}",
                    str(r["check"]),
                ]
                before = (ops, peak)
                print(sep.join(cells), flush=True)


if __name__ == "__main__":
    main()
