"""Memory below the liveness bound (issue 15): what each technique saves.

    python benchmarks/below_bound.py [--models NAME ...] [--json FILE]

For each supported model in ``shared/models`` (``USMP_MODELS_DIR``) it runs
``usmp-compile`` with the techniques switched on one after the other, I/O in
the workspace (as TFLite Micro's arena holds it), and prints per model:

* ``today``: the workspace with every technique off (the source order,
  disjoint buffers: the liveness lower bound the planner reached before);
* ``no-alias lb`` and ``finer lb``: the lower bounds of the final plan's
  buffers without and with its allowed overlaps (usmp's report:
  ``no_alias_bound``, ``lower_bound``);
* ``ws+io`` and ``ws``: the workspace achieved with everything on, with the
  model's I/O inside the workspace and provided by the application;
* ``order``, ``slices/pad``, ``overlap``, ``patch``: bytes (incl. I/O) each
  technique saves when switched on after the ones to its left (so the
  columns add up to ``today - ws+io``): the memory-aware operator order
  (``--operator-order``), concatenations written in place and pads folded
  (``--concat-slices``, ``--fold-padding``), in-place and overlapping buffers
  (``--usmp-overlap``), patch-based execution of the first stage
  (``--patch auto``);
* ``extra MACs``: the recomputation patching adds (``metadata.json``'s
  ``patch``), as a share of the model's MACs.

A technique this build does not have (its flag is not in
``usmp-compile --help``) shows ``n/a`` and is left off. Nothing here is a
test: numbers are printed as a Markdown table (and optionally as JSON).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS


@dataclass(frozen=True)
class Switch:
    flag: str
    """A ``usmp-compile`` flag (looked up in ``--help``)."""
    off: str
    on: str


@dataclass(frozen=True)
class Technique:
    name: str
    switches: tuple[Switch, ...]


TECHNIQUES = (
    Technique("order", (Switch("--operator-order", "source", "memory"),)),
    Technique(
        "slices/pad",
        (Switch("--concat-slices", "off", "on"), Switch("--fold-padding", "off", "on")),
    ),
    Technique("overlap", (Switch("--usmp-overlap", "off", "on"),)),
    Technique("patch", (Switch("--patch", "off", "auto"),)),
)


@dataclass
class Row:
    model: str
    today: int | None = None
    no_alias_bound: int | None = None
    finer_bound: int | None = None
    workspace_io: int | None = None
    workspace: int | None = None
    saved: dict[str, int | None] = field(default_factory=dict[str, int | None])
    extra_macs: float | None = None
    notes: list[str] = field(default_factory=list[str])


def available(techniques: tuple[Technique, ...]) -> list[Technique]:
    """The techniques (with the switches) this ``usmp-compile`` knows."""
    from usmp.tools.usmp_compile import parser

    text = parser().format_help()
    found: list[Technique] = []
    for t in techniques:
        switches = tuple(s for s in t.switches if s.flag in text)
        if switches:
            found.append(Technique(t.name, switches))
    return found


def _flags(techniques: list[Technique], on: int) -> list[str]:
    """The flags with the first ``on`` techniques switched on."""
    flags: list[str] = []
    for i, t in enumerate(techniques):
        for s in t.switches:
            flags += [s.flag, s.on if i < on else s.off]
    return flags


def compile_model(path: Path, *extra: str) -> tuple[dict[str, Any] | None, str]:
    """``usmp-compile`` in process into a temporary folder: its metadata."""
    from usmp.tools.usmp_compile import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = main([str(path), "-o", str(out), "-q", *extra])
        metadata = out / "metadata.json"
        if status != 0 or not metadata.is_file():
            return None, err.getvalue().strip()
        return json.loads(metadata.read_text()), ""


def _workspace(metadata: dict[str, Any]) -> int:
    return int(metadata["memory_summary"]["workspace_bytes"])


def measure(model: str, techniques: list[Technique]) -> Row:
    row = Row(model)
    path = MODELS_DIR / model
    metadata, error = compile_model(path, "--use-workspace-io", *_flags(techniques, 0))
    if metadata is None:
        row.notes.append(error.splitlines()[-1] if error else "failed")
        return row
    row.today = previous = _workspace(metadata)
    flags: list[str] = []
    for k, t in enumerate(techniques, 1):
        flags = _flags(techniques, k)
        metadata, error = compile_model(path, "--use-workspace-io", *flags)
        if metadata is None:
            row.saved[t.name] = None
            row.notes.append(f"{t.name}: {error.splitlines()[-1] if error else '?'}")
            continue
        now = _workspace(metadata)
        row.saved[t.name] = previous - now
        previous = now
        final = metadata
        row.workspace_io = now
        summary = final["memory_summary"]
        row.finer_bound = summary.get("workspace_lower_bound_bytes")
        row.no_alias_bound = summary.get(
            "workspace_no_alias_bound_bytes", row.finer_bound
        )
        patch = final.get("patch")
        if isinstance(patch, dict) and patch.get("model_macs"):
            row.extra_macs = patch.get("extra_macs", 0) / patch["model_macs"]
    metadata, _ = compile_model(path, *flags)
    if metadata is not None:
        row.workspace = _workspace(metadata)
    return row


def _n(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def table(rows: list[Row], techniques: list[Technique]) -> str:
    names = [t.name for t in techniques]
    missing = [t.name for t in TECHNIQUES if t.name not in names]
    header = [
        "model",
        "today",
        "no-alias lb",
        "finer lb",
        "ws+io",
        "ws",
        *(t.name for t in TECHNIQUES),
        "extra MACs",
    ]
    lines = [
        "| " + " | ".join(header) + " |",
        "|---|" + "--:|" * (len(header) - 1),
    ]
    for r in rows:
        cells = [
            Path(r.model).stem,
            _n(r.today),
            _n(r.no_alias_bound),
            _n(r.finer_bound),
            _n(r.workspace_io),
            _n(r.workspace),
            *(
                "n/a" if t.name in missing else _n(r.saved.get(t.name))
                for t in TECHNIQUES
            ),
            "—" if r.extra_macs is None else f"{100 * r.extra_macs:+.1f}%",
        ]
        lines.append("| " + " | ".join(cells) + " |")
        if r.notes:
            lines.append(f"<!-- {r.model}: {'; '.join(r.notes)} -->")
    return "\n".join(lines)


def generated_table(blocks: list[int]) -> str:
    """The memory-aware order on ``inception_graph(n)`` (breadth-first
    inception blocks, as a converter may write them): workspace (I/O outside)
    in source order and in the order chosen, the liveness peaks the order
    minimised, whether it is proven minimal, and the order's CPU time."""
    import time

    from xdsl.dialects.func import FuncOp

    from usmp.dialects.tir import POOLS
    from usmp.passes.aot_order import order_main
    from usmp.testing.run_c import run_pipeline
    from usmp.testing.scale_graphs import inception_graph, operator_count

    lines = [
        "| blocks | operators | ws source | ws memory | peak source | peak memory "
        "| minimal | order s |",
        "|--:|--:|--:|--:|--:|--:|---|--:|",
    ]
    for n in blocks:
        module = inception_graph(n)
        sizes: dict[str, int] = {}
        for order in ("source", "memory"):
            passes = f"fuse-ops,lower-ops,aot-lower-main{{order={order}}},usmp"
            lowered = run_pipeline(module, passes)
            pools = lowered.attributes[POOLS]
            sizes[order] = sum(
                p.size.data  # pyright: ignore
                for p in pools.data  # pyright: ignore
                if p.kind.data == "workspace"  # pyright: ignore
            )
        lowered = run_pipeline(module, "fuse-ops,lower-ops")
        functions = {f.sym_name.data: f for f in lowered.ops if isinstance(f, FuncOp)}
        start = time.process_time()
        result = order_main(functions["main"], functions)
        seconds = time.process_time() - start
        lines.append(
            f"| {n} | {operator_count(module)} | {sizes['source']:,} | "
            f"{sizes['memory']:,} | {result.source_peak:,} | {result.peak:,} | "
            f"{'yes' if result.exact else 'no'} | {seconds:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--models", nargs="*", default=list(SUPPORTED_MODELS))
    p.add_argument("--json", type=Path, help="also write the rows as JSON")
    p.add_argument(
        "--generated",
        type=int,
        nargs="*",
        metavar="BLOCKS",
        help="instead: the operator order on inception_graph(BLOCKS) graphs",
    )
    args = p.parse_args(argv)
    if args.generated is not None:
        print(generated_table(args.generated or [1, 4, 16, 64]))
        return 0
    techniques = available(TECHNIQUES)
    rows: list[Row] = []
    for model in args.models:
        row = measure(model, techniques)
        rows.append(row)
        print(f"{model}: done", file=sys.stderr)
    print(table(rows, techniques))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
