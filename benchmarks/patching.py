"""Patch-based execution (``--patch auto``) per model: workspace and MACs.

    python benchmarks/patching.py [--models NAME ...] [--mobilenet-v2 SIZE ...]
                                  [--budget F]

For each shared CNN model (default: every supported model with a 4-D
input) and the generated MobileNetV2 (``usmp.testing.mobilenet_v2``, int8,
random weights; default size 224), compiled by ``usmp.compile`` with
``--patch off`` and ``--patch auto``, I/O outside the workspace (``ws``) and
inside it (``ws+io``): the planned workspace bytes, the model's MACs, the
extra MACs of the recomputed halos (the decision of the I/O-outside compile)
and the decision (layers patched of those available, grid, or why not).
``auto`` never plans more than ``off`` (the planned-workspace check of
``patch-stage{evaluate}``). Nothing here is a test: a table is printed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import usmp
from usmp.testing.mobilenet_v2 import mobilenet_v2
from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS


def _compile(
    path: Path, patch: str, io: bool, budget: float
) -> tuple[int, dict[str, Any], float]:
    start = time.perf_counter()
    lib = usmp.compile(path, patch=patch, use_workspace_io=io, patch_budget=budget)
    seconds = time.perf_counter() - start
    metadata = lib.metadata
    return lib.plan.workspace_bytes, metadata.get("patch", {}), seconds


def _decision(d: dict[str, Any]) -> str:
    if not d:
        return "no decision"
    if d.get("applied"):
        grid = "x".join(str(g) for g in d["grid"])
        return f"{d['depth']} of {d['layers']} layers, {grid} tiles"
    return "not applied: " + str(d.get("reason", ""))[:70]


def _four_d_input(path: Path) -> bool:
    from usmp.frontend.tflite_reader import read_model_file

    model = read_model_file(path)
    return any(len(model.tensors[i].shape) == 4 for i in model.inputs)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--models", nargs="*", help="shared models (relative paths)")
    parser.add_argument("--mobilenet-v2", nargs="*", type=int, default=[224])
    parser.add_argument("--budget", type=float, default=0.10)
    args = parser.parse_args()
    paths = [
        MODELS_DIR / m
        for m in (args.models if args.models is not None else SUPPORTED_MODELS)
    ]
    paths = [p for p in paths if _four_d_input(p)]
    tmp = Path(tempfile.mkdtemp(prefix="patching-"))
    for size in args.mobilenet_v2:
        out = tmp / f"mobilenet_v2_{size}_int8.tflite"
        out.write_bytes(mobilenet_v2(size, 1.0))
        paths.append(out)
    print(
        "| model | ws off | ws auto | ws+io off | ws+io auto | MACs | extra MACs "
        "| decision (I/O outside) | compile auto s |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|---|--:|")
    for path in paths:
        off, _, _ = _compile(path, "off", False, args.budget)
        auto, d, seconds = _compile(path, "auto", False, args.budget)
        off_io, _, _ = _compile(path, "off", True, args.budget)
        auto_io, _, _ = _compile(path, "auto", True, args.budget)
        macs = d.get("model_macs")
        extra = d.get("extra_macs", 0) if d.get("applied") else 0
        share = f" (+{100 * extra / macs:.1f}%)" if macs and extra else ""
        print(
            f"| {path.stem} | {off:,} | {auto:,} | {off_io:,} | {auto_io:,} "
            f"| {f'{macs:,}' if macs else '—'} | {extra:,}{share} | {_decision(d)} "
            f"| {seconds:.1f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
