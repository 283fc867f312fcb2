"""Inference time of the transcendental / normalisation operators, ours vs
TFLite Micro's reference kernels, on single-operator models.

    python benchmarks/activations.py [--elements N] [--runs N] [--repeats N]

Each row is one operator on a (rows, 256) tensor of ``--elements`` values
(random over the type's range), built with the tests' flatbuffer builder:
TFLite Micro's ``invoke()`` time and our C library's ``run`` time, both
timed as ``benchmarks/models.py`` does (process CPU time of ``--runs``
inferences, fastest of ``--repeats``), and the ratio (``speedup`` = tflm /
ours). int16 RSQRT is left out: TFLite Micro fails on the negative half of
random int16 inputs. Nothing here is a test: it prints a table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE.parent), str(_HERE)]

from models import (  # noqa: E402  (benchmarks/models.py)
    c_inference_us,
    compile_model,
    tflm_inference_us,
)

from tests.test_import_tflite_synthetic import ModelBuilder  # noqa: E402


def _model(
    opcode: str,
    dtype: str,
    shape: tuple[int, ...],
    in_q: tuple[float, int] | None,
    out_q: tuple[float, int] | None,
    options: tuple[str, dict[str, Any]] | None = None,
) -> bytes:
    m = ModelBuilder()
    qx: dict[str, Any] = (
        {} if in_q is None else {"scale": in_q[0], "zero_point": in_q[1]}
    )
    qy: dict[str, Any] = (
        {} if out_q is None else {"scale": out_q[0], "zero_point": out_q[1]}
    )
    x = m.tensor(shape, dtype, **qx)
    y = m.tensor(shape, dtype, **qy)
    m.op(opcode, [x], [y], options)
    return m.build([x], [y])


CASES: list[tuple[str, str, tuple[float, int] | None, tuple[float, int] | None]] = [
    ("LOGISTIC", "int8", (0.05, -3), (1 / 256, -128)),
    ("TANH", "int8", (0.05, -3), (1 / 128, 0)),
    ("LOGISTIC", "int16", (1 / 3000, 0), (2.0**-15, 0)),
    ("TANH", "int16", (1 / 3000, 0), (2.0**-15, 0)),
    ("SOFTMAX", "int16", (0.001, 0), (1 / 32768, 0)),
    ("RSQRT", "int8", (0.05, -128), (0.05, 0)),
    ("L2_NORMALIZATION", "int8", (0.05, -3), (1 / 128, 0)),
    ("EXP", "float32", None, None),
    ("L2_NORMALIZATION", "float32", None, None),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Ours vs TFLite Micro on single-operator activation models."
    )
    parser.add_argument("--elements", type=int, default=16384)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    shape = (max(1, args.elements // 256), 256)
    print(f"{'operator':<26} {'tflm us':>10} {'ours us':>10} {'speedup':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for opcode, dtype, in_q, out_q in CASES:
            options = ("SoftmaxOptions", {"Beta": 1.0}) if opcode == "SOFTMAX" else None
            path = Path(tmp) / f"{opcode}_{dtype}.tflite"
            path.write_bytes(_model(opcode, dtype, shape, in_q, out_q, options))
            out = Path(tmp) / f"{opcode}_{dtype}"
            metadata, _, err = compile_model(path, out)
            interface = metadata.get("c_interface") if metadata else None
            ours, why = c_inference_us(out, interface, args.runs, args.repeats)
            tflm = tflm_inference_us(path, args.runs, args.repeats)
            name = f"{opcode} {dtype}"
            if ours is None:
                print(f"{name:<26} {tflm:>10.1f} {'-':>10} {'-':>8}  {why or err}")
                continue
            print(
                f"{name:<26} {tflm:>10.1f} {ours:>10.1f} {tflm / ours:>8.2f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
