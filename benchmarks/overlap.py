"""Workspace with and without allowed overlaps, against both lower bounds.

    python benchmarks/overlap.py [--models NAME ...] [--io | --no-io]
    python benchmarks/overlap.py --symbolic [--models NAME ...] [--mobilenet]

For each supported model in ``shared/models`` (``USMP_MODELS_DIR``), compiled
with ``usmp-compile --stop-after usmp`` (I/O in the workspace unless
``--no-io``, as the issue's targets count it):

* ``no-alias lb``: the liveness lower bound when every conflicting pair of
  buffers is disjoint (what placement alone can reach);
* ``finer lb``: the lower bound with the allowed overlaps (an operator's
  output over the input it reads for the last time, ``usmp_overlap``);
* ``ws``: the planned workspace with overlaps (the default), ``ws off``:
  with ``--usmp-overlap off``; ``saved``: what the overlaps save;
* ``reversed``: kernels run backwards to keep overlap chains from drifting
  (``usmp-kernel-direction``).

``--symbolic``: instead, the overlap facts from the access functions
(``usmp_kernel_symbolic``) against the enumerating tracer, the oracle
(``usmp.testing.symbolic_oracle``), on every kernel of each model lowered to
``aot-lower-main``, forwards and backwards: kernels, shift pairs compared,
fallbacks (kernels left to the tracer), differences (``safe``: a subset of
the oracle's shifts; ``UNSAFE``: more), and the CPU seconds of each
analysis. ``--mobilenet`` adds MobileNetV2 224 int8
(``usmp.testing.mobilenet_v2``). Every difference is listed below the table.

Nothing here is a test: it prints a table.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS


def _compile(path: Path, out: Path, *extra: str) -> dict[str, Any] | None:
    from usmp.tools.usmp_compile import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main([str(path), "-o", str(out), "-q", "--stop-after", "usmp", *extra])
    if status != 0:
        print(f"{path.name}: {err.getvalue().strip()}", file=sys.stderr)
        return None
    return json.loads((out / "metadata.json").read_text())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--models", nargs="*", default=SUPPORTED_MODELS)
    p.add_argument("--no-io", action="store_true", help="I/O outside the workspace")
    p.add_argument(
        "--symbolic", action="store_true", help="symbolic vs enumerating analysis"
    )
    p.add_argument("--mobilenet", action="store_true", help="with --symbolic")
    args = p.parse_args(argv)
    if args.symbolic:
        return _symbolic(args.models, args.mobilenet)
    io_flag = () if args.no_io else ("--use-workspace-io",)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, name in enumerate(args.models):
            on, off = Path(tmp) / f"on{k}", Path(tmp) / f"off{k}"
            meta_on = _compile(MODELS_DIR / name, on, *io_flag, "--dump-ir")
            meta_off = _compile(
                MODELS_DIR / name, off, *io_flag, "--usmp-overlap", "off"
            )
            if meta_on is None or meta_off is None:
                continue
            s_on, s_off = meta_on["memory_summary"], meta_off["memory_summary"]
            reversed_count = sum(
                f.read_text().count("usmp.reversed") for f in on.glob("ir/*-usmp.mlir")
            )
            rows.append(
                (
                    Path(name).stem,
                    s_on["workspace_no_alias_bound_bytes"],
                    s_on["workspace_lower_bound_bytes"],
                    s_on["workspace_bytes"],
                    s_off["workspace_bytes"],
                    s_off["workspace_bytes"] - s_on["workspace_bytes"],
                    reversed_count,
                )
            )
    head = ("model", "no-alias lb", "finer lb", "ws", "ws off", "saved", "reversed")
    print("| " + " | ".join(head) + " |")
    print("|---|" + "--:|" * (len(head) - 1))
    for row in rows:
        print(
            "| " + " | ".join(f"{v:,}" if isinstance(v, int) else v for v in row) + " |"
        )
    return 0


def _lowered(path: Path, out: Path) -> Any:
    from usmp.dialects import new_context
    from usmp.parsing import LocatingParser
    from usmp.tools.usmp_compile import main as compile_main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = compile_main(
            [str(path), "-o", str(out), "-q", "--stop-after", "aot-lower-main"]
        )
    if status != 0:
        print(f"{path.name}: {err.getvalue().strip()}", file=sys.stderr)
        return None
    text = next(out.glob("*.aot-lower-main.mlir")).read_text()
    return LocatingParser(new_context(), text, path.name).parse_module()


def _symbolic(models: list[str], mobilenet: bool) -> int:
    import time

    from usmp.passes.usmp_kernel_symbolic import summarize
    from usmp.passes.usmp_kernel_trace import trace_kernel_with_counts
    from usmp.testing.symbolic_oracle import compare_module, kernels

    head = (
        "model",
        "kernels",
        "pairs",
        "fallbacks",
        "equal",
        "safe",
        "UNSAFE",
        "symbolic s",
        "traced s",
    )
    print("| " + " | ".join(head) + " |")
    print("|---|" + "--:|" * (len(head) - 1))
    differences = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = [(Path(m).stem, MODELS_DIR / m) for m in models]
        if mobilenet:
            from usmp.testing.mobilenet_v2 import mobilenet_v2

            target = Path(tmp) / "mobilenet_v2_224_int8.tflite"
            target.write_bytes(mobilenet_v2(224))
            paths.append(("MobileNetV2 224 int8", target))
        for k, (name, path) in enumerate(paths):
            module = _lowered(path, Path(tmp) / f"m{k}")
            if module is None:
                continue
            c = compare_module(module)
            timing = [0.0, 0.0]
            for f in kernels(module):
                wanted = range(len(f.args))
                for backwards in (False, True):
                    start = time.process_time()
                    summarize(f, wanted, backwards)
                    middle = time.process_time()
                    trace_kernel_with_counts(f, wanted, reverse=backwards)
                    timing[0] += middle - start
                    timing[1] += time.process_time() - middle
            safe = sum(d.safe for d in c.differences)
            differences += [(name, d) for d in c.differences]
            row = (
                name,
                2 * c.kernels,
                c.pairs,
                len(c.fallbacks),
                c.pairs - len({d.what for d in c.differences}),
                safe,
                len(c.differences) - safe,
                f"{timing[0]:.2f}",
                f"{timing[1]:.2f}",
            )
            print(
                "| "
                + " | ".join(f"{v:,}" if isinstance(v, int) else v for v in row)
                + " |"
            )
            for fallback in c.fallbacks:
                print(f"  fallback: {fallback}", file=sys.stderr)
    for name, d in differences:
        print(
            f"{name}: {d.kernel}{' (backwards)' if d.backwards else ''} {d.what}: "
            f"oracle {d.oracle}, symbolic {d.symbolic} "
            f"({'safe' if d.safe else 'UNSAFE'})"
        )
    if not differences:
        print("no differences")
    return 0


if __name__ == "__main__":
    sys.exit(main())
