"""Inference time of GATHER and RESIZE_NEAREST_NEIGHBOR, ours vs TFLite
Micro's reference kernels, on single-operator models.

    python benchmarks/gather.py [--runs N] [--repeats N]

Each row is one operator built with the tests' flatbuffer builder: TFLite
Micro's ``invoke()`` time and our C library's ``run`` time, both timed as
``benchmarks/models.py`` does (process CPU time of ``--runs`` inferences,
fastest of ``--repeats``), and the ratio (``speedup`` = tflm / ours). Both
copy rows: TFLM with ``memcpy``, ours with one ``memmove`` per contiguous run
(``convert_to_emitc_memref.copy_run``). Nothing here is a test: it prints a
table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE.parent), str(_HERE)]

from models import (  # noqa: E402  (benchmarks/models.py)
    c_inference_us,
    compile_model,
    tflm_inference_us,
)

from tests.test_import_tflite_image import (  # noqa: E402
    gather_model,
    resize_model,
)


def _cases() -> list[tuple[str, bytes]]:
    rng = np.random.default_rng(0)
    cases: list[tuple[str, bytes]] = []
    for dtype in ("int8", "float32"):
        positions = rng.integers(0, 128, 128).astype(np.int32)
        m, ins, outs = gather_model((128, 256), positions, 0, 0, dtype)
        cases.append((f"GATHER 128x256 {dtype}", m.build(ins, outs)))
    positions = rng.integers(0, 64, (4, 32)).astype(np.int32)
    m, ins, outs = gather_model((4, 64, 64), positions, 1, 1, "int8")
    cases.append(("GATHER 4x64x64 batch int8", m.build(ins, outs)))
    for dtype in ("int8", "float32"):
        m, ins, outs = resize_model(
            "RESIZE_NEAREST_NEIGHBOR", (1, 24, 32, 16), (48, 64), dtype, False, False
        )
        cases.append((f"RESIZE_NEAREST 1x24x32x16->48x64 {dtype}", m.build(ins, outs)))
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Ours vs TFLite Micro on GATHER / RESIZE_NEAREST_NEIGHBOR."
    )
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"{'operator':<40} {'tflm us':>10} {'ours us':>10} {'speedup':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, model) in enumerate(_cases()):
            path = Path(tmp) / f"m{k}.tflite"
            path.write_bytes(model)
            out = Path(tmp) / f"m{k}"
            metadata, _, err = compile_model(path, out)
            interface = metadata.get("c_interface") if metadata else None
            ours, why = c_inference_us(out, interface, args.runs, args.repeats)
            tflm = tflm_inference_us(path, args.runs, args.repeats)
            if ours is None:
                print(f"{name:<40} {tflm:>10.2f} {'-':>10} {'-':>8}  {why or err}")
                continue
            print(
                f"{name:<40} {tflm:>10.2f} {ours:>10.2f} {tflm / ours:>8.2f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
