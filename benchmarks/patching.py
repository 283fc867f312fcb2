"""Patch-based execution (``--patch auto``) per model: workspace and MACs.

    python benchmarks/patching.py [--models NAME ...] [--mobilenet-v2 SIZE ...]
                                  [--budget F] [--cortex-m]

For each shared CNN model (default: every supported model with a 4-D
input) and the generated MobileNetV2 (``usmp.testing.mobilenet_v2``, int8,
random weights; default size 224), compiled by ``usmp.compile`` with
``--patch off`` and ``--patch auto``, I/O outside the workspace (``ws``) and
inside it (``ws+io``): the planned workspace bytes, the model's MACs, the
extra MACs of the recomputed halos (the decision of the I/O-outside compile)
and the decision (layers patched of those available, grid, or why not).
``auto`` never plans more than ``off`` (the planned-workspace check of
``patch-stage{evaluate}``). Nothing here is a test: a table is printed.

``--cortex-m`` prints a second table, I/O outside the workspace, patched
(``auto``) and not (``off``): the workspace, the MACs and extra MACs, the
decision's estimated instructions of the stage (``patch_speed``) and the
instructions per inference on an emulated Cortex-M4 (``usmp-compile
--target "c -mcpu=cortex-m4"``, ``arm-none-eabi-gcc -O2``, QEMU
``mps2-an386 -icount shift=0``: ``benchmarks/cortex_m.py``'s machinery),
with whether the outputs equal TFLite Micro's (seeded input 0).
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


def _agrees(outputs: list[bytes], reference: list[Any]) -> str:
    """``yes`` when the outputs are TFLite Micro's: int8 bit for bit, float
    within ``FLOAT_OUTPUT_RTOL`` (``tflm_reference.difference``)."""
    import numpy as np

    from usmp.testing.tflm_reference import FLOAT_OUTPUT_RTOL, difference

    for got, want in zip(outputs, reference, strict=True):
        want = np.asarray(want)
        if difference(np.frombuffer(got, want.dtype).copy(), want) is not None:
            return "NO"
    return (
        "yes"
        if reference[0].dtype.kind in "iub"
        else f"yes (float, {FLOAT_OUTPUT_RTOL:g})"
    )


def _four_d_input(path: Path) -> bool:
    from usmp.frontend.tflite_reader import read_model_file

    model = read_model_file(path)
    return any(len(model.tensors[i].shape) == 4 for i in model.inputs)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--models", nargs="*", help="shared models (relative paths)")
    parser.add_argument("--mobilenet-v2", nargs="*", type=int, default=[224])
    parser.add_argument("--budget", type=float, default=0.10)
    parser.add_argument(
        "--cortex-m",
        action="store_true",
        help="instructions per inference on an emulated Cortex-M4, patched and not",
    )
    args = parser.parse_args()
    paths = [
        MODELS_DIR / m
        for m in (args.models if args.models is not None else SUPPORTED_MODELS)
    ]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(
            f"no such model: {', '.join(missing)} (--models takes paths relative "
            f"to {MODELS_DIR}, e.g. mlperf_tiny/vww_96_int8.tflite)"
        )
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
    if args.cortex_m:
        return _cortex_m(paths, tmp, args.budget)
    return 0


def _cortex_m(paths: list[Path], tmp: Path, budget: float) -> int:
    from usmp.frontend.tflite_reader import read_model_file
    from usmp.testing.cortex_m import BOARDS, Builder, CortexMError, library_program
    from usmp.testing.cortex_m import missing_tools as cortex_m_missing
    from usmp.testing.tflm_reference import random_inputs, run_tflm

    if (missing := cortex_m_missing()) is not None:
        print(f"cannot measure: {missing} (scripts/setup.sh)", file=sys.stderr)
        return 1
    board = BOARDS["m4"]
    print(
        "\n| model | patch | ws | MACs | extra MACs | decision | est. stage "
        "instructions | Cortex-M4 instructions | vs off | bit-exact |"
    )
    print("|---|---|--:|--:|--:|---|--:|--:|--:|---|")
    for path in paths:
        model = read_model_file(path)
        inputs = random_inputs(model, 0)
        reference = run_tflm(path.read_bytes(), inputs, model.outputs)
        builder = Builder(board, "-O2", tmp / f"{path.stem}_m4")
        (tmp / f"{path.stem}_m4").mkdir(exist_ok=True)
        base = 0
        for patch in ("off", "auto"):
            out = tmp / f"{path.stem}_{patch}_m4"
            lib = usmp.compile(
                path,
                output_dir=out,
                patch=patch,
                patch_budget=budget,
                target=f"c -mcpu={board.cpu}",
            )
            d = lib.metadata.get("patch", {}) if patch == "auto" else {}
            macs = d.get("model_macs")
            extra = d.get("extra_macs", 0) if d.get("applied") else 0
            estimate = (
                f"{d['instructions_before']:,} -> {d['instructions_after']:,}"
                if d.get("applied")
                else "—"
            )
            try:
                measured = builder.measure(
                    f"{path.stem}_{patch}", library_program(out, inputs), profile=False
                )
            except CortexMError as e:
                first = str(e).strip().splitlines()[0][:80]
                print(
                    f"| {path.stem} | {patch} | {lib.plan.workspace_bytes:,} | — | — "
                    f"| — | — | does not run: {first} | — | — |",
                    flush=True,
                )
                continue
            n = measured.instructions
            base = base or n
            print(
                f"| {path.stem} | {patch} | {lib.plan.workspace_bytes:,} "
                f"| {f'{macs:,}' if macs else '—'} | {extra:,} "
                f"| {_decision(d) if patch == 'auto' else 'unpatched'} | {estimate} "
                f"| {n:,} | {n / base:.3f} "
                f"| {_agrees(measured.outputs, reference)} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
