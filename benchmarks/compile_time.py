"""Compile time of ``usmp-compile``, per step, on the shared models and on
generated graphs of growing size.

    python benchmarks/compile_time.py [--repeat N] [--sizes 100,1000,10000]
        [--models-only | --graphs-only] [--markdown]

Each row is one ``usmp-compile`` process (``--quiet --time-passes``), the
fastest of ``N`` runs by total CPU time: the CPU seconds of every step (from
``--time-passes``; ``verify`` is the input's and the final IR's
verification), ``total`` (the whole process's user + system time, start-up
and imports included), operators (relay operators after import, every
``relay.*`` op but constants) per CPU second and CPU milliseconds per
operator. CPU rather than wall time, because the machines are shared.

Generated graphs are ``usmp.testing.scale_graphs.scale_graph(n)`` (int8
chains, diamonds, residual blocks and wide fan-out of fixed-size tensors),
written as MLIR and compiled from the file like a model.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS
from usmp.tools.usmp_compile import PIPELINE

STEPS = (*PIPELINE, "verify")
_ROW = re.compile(r"^\s+([0-9.]+) \(\s*[0-9.]+%\)\s+[0-9.]+ \(\s*[0-9.]+%\)  (\S.*)$")


def _run(model: Path, out: Path) -> tuple[float, dict[str, float]]:
    """One usmp-compile process: (its CPU seconds, CPU seconds per step)."""
    cmd = [sys.executable, "-m", "usmp.tools.usmp_compile", str(model)]
    cmd += ["-o", str(out), "--quiet", "--time-passes"]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"usmp-compile failed on {model}:\n{stderr}")
    steps: dict[str, float] = {}
    for line in stderr.splitlines():
        if (m := _ROW.match(line)) and m.group(2) in STEPS:
            steps[m.group(2)] = float(m.group(1))
    return usage.ru_utime + usage.ru_stime, steps


def _operators_tflite(path: Path) -> int:
    from usmp.frontend.tflite_import import import_model
    from usmp.frontend.tflite_reader import read_model_file
    from usmp.testing.scale_graphs import operator_count

    return operator_count(import_model(read_model_file(path)))


def _best(model: Path, repeat: int, tmp: Path) -> tuple[float, dict[str, float]]:
    runs = [_run(model, tmp / "out") for _ in range(repeat)]
    return min(runs, key=lambda r: r[0])


def _row(name: str, ops: int, total: float, steps: dict[str, float]) -> list[str]:
    cells = [name, f"{ops:,}"]
    cells += [f"{steps.get(s, 0.0):.2f}" for s in STEPS]
    cells += [f"{total:.2f}", f"{ops / total:,.0f}", f"{1000 * total / ops:.2f}"]
    return cells


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=3, help="runs per row (fastest kept)")
    p.add_argument("--sizes", default="100,1000,10000", help="generated graph sizes")
    p.add_argument("--models-only", action="store_true")
    p.add_argument("--graphs-only", action="store_true")
    args = p.parse_args()
    header = ["model", "operators", *STEPS, "total", "ops/s", "ms/op"]
    print("| " + " | ".join(header) + " |")
    print("|---|" + "--:|" * (len(header) - 1))
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if not args.graphs_only:
            for model in SUPPORTED_MODELS:
                path = MODELS_DIR / model
                total, steps = _best(path, args.repeat, tmp)
                row = _row(path.stem, _operators_tflite(path), total, steps)
                print("| " + " | ".join(row) + " |", flush=True)
        if not args.models_only:
            from usmp.testing.fuzz_graphs import print_module
            from usmp.testing.scale_graphs import operator_count, scale_graph

            for size in (int(s) for s in args.sizes.split(",")):
                module = scale_graph(size)
                path = tmp / f"generated_{size}.mlir"
                path.write_text(print_module(module))
                total, steps = _best(path, args.repeat, tmp)
                row = _row(f"generated {size}", operator_count(module), total, steps)
                print("| " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
