"""Fit ``usmp.planning.patch_speed``'s coefficients on an emulated Cortex-M4.

    python benchmarks/patch_speed_fit.py [--work DIR] [--opt O2]

Builds single-operator int8 TFLite models (``ModelBuilder``, seeded random
weights) of each kernel kind patching uses, from tile-sized shapes (a few
rows and columns: the calls a grid makes) to whole early feature maps:
``conv`` (CONV_2D 1x1 and 3x3, strides 1 and 2), ``depthwise``
(DEPTHWISE_CONV_2D 3x3, strides 1 and 2), ``pool`` (AVERAGE_POOL_2D and
MAX_POOL_2D), ``elementwise`` (ADD), ``copy`` (CONCATENATION along H,
STRIDED_SLICE of a tile). Each is compiled like ``benchmarks/cortex_m.py``
compiles ours (``usmp-compile --use-workspace-io --target "c
-mcpu=cortex-m4"``), built with ``arm-none-eabi-gcc`` and run under QEMU
(``usmp.testing.cortex_m``); its instructions per inference are one call
of the kernel (and the entry point's few instructions). Per kind, a least
squares fit of ``instructions = a * MACs + b * output elements + c``
(non-negative; MACs: multiply-accumulates, window reads for pooling) is
printed with each sample's residual, and the ``COEFFICIENTS`` literal to
paste into ``planning/patch_speed.py``. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from usmp.testing.cortex_m import BOARDS, Builder, library_program
from usmp.testing.cortex_m import missing_tools as cortex_m_missing
from usmp.testing.tflite_builder import ModelBuilder
from usmp.testing.tflm_reference import random_inputs, run_tflm
from usmp.tools.usmp_compile import main as usmp_compile

# (kind, operator, (h, w, c_in), (c_out, kernel, stride)); SAME padding
SAMPLES: list[tuple[str, str, tuple[int, int, int], tuple[int, int, int]]] = [
    ("conv", "CONV_2D", (2, 4, 8), (16, 1, 1)),
    ("conv", "CONV_2D", (6, 12, 8), (16, 1, 1)),
    ("conv", "CONV_2D", (8, 24, 16), (32, 1, 1)),
    ("conv", "CONV_2D", (12, 12, 32), (32, 1, 1)),
    ("conv", "CONV_2D", (5, 9, 3), (8, 3, 2)),
    ("conv", "CONV_2D", (19, 48, 3), (8, 3, 2)),
    ("conv", "CONV_2D", (8, 8, 16), (16, 3, 1)),
    ("depthwise", "DEPTHWISE_CONV_2D", (3, 4, 8), (8, 3, 1)),
    ("depthwise", "DEPTHWISE_CONV_2D", (9, 24, 16), (16, 3, 1)),
    ("depthwise", "DEPTHWISE_CONV_2D", (24, 24, 32), (32, 3, 1)),
    ("depthwise", "DEPTHWISE_CONV_2D", (7, 13, 16), (16, 3, 2)),
    ("depthwise", "DEPTHWISE_CONV_2D", (48, 48, 8), (8, 3, 2)),
    ("pool", "AVERAGE_POOL_2D", (4, 4, 8), (8, 2, 2)),
    ("pool", "AVERAGE_POOL_2D", (16, 32, 16), (16, 3, 1)),
    ("pool", "MAX_POOL_2D", (8, 8, 32), (32, 3, 2)),
    ("pool", "MAX_POOL_2D", (24, 24, 8), (8, 2, 2)),
    ("elementwise", "ADD", (2, 4, 8), (8, 1, 1)),
    ("elementwise", "ADD", (12, 12, 16), (16, 1, 1)),
    ("elementwise", "ADD", (24, 48, 16), (16, 1, 1)),
    ("copy", "CONCATENATION", (2, 4, 8), (8, 1, 1)),
    ("copy", "CONCATENATION", (12, 24, 16), (16, 1, 1)),
    ("copy", "CONCATENATION", (24, 48, 8), (8, 1, 1)),
    ("copy", "STRIDED_SLICE", (6, 8, 3), (3, 1, 1)),
    ("copy", "STRIDED_SLICE", (48, 48, 16), (16, 1, 1)),
]


def build(operator: str, shape: tuple[int, int, int], extra: tuple[int, int, int]):
    """A single-operator model, its MACs and its output elements."""
    rng = np.random.default_rng(0)
    h, w, cin = shape
    cout, k, s = extra
    m = ModelBuilder()

    def act(dims: tuple[int, ...]) -> int:
        return m.tensor(dims, "int8", scale=0.05, zero_point=-3)

    x = act((1, h, w, cin))
    inputs = [x]
    oh, ow = -(-h // s), -(-w // s)
    if operator in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        dw = operator == "DEPTHWISE_CONV_2D"
        wshape = (1, k, k, cin) if dw else (cout, k, k, cin)
        scales = list(rng.uniform(0.003, 0.02, cout))
        weights = m.tensor(
            wshape,
            "int8",
            rng.integers(-127, 128, wshape).astype(np.int8),
            scale=scales,
            axis=3 if dw else 0,
        )
        bias = m.tensor(
            (cout,),
            "int32",
            rng.integers(-300, 300, cout),
            scale=[0.05 * v for v in scales],
        )
        out = (1, oh, ow, cout)
        y = act(out)
        options = {
            "Padding": 0,
            "StrideW": s,
            "StrideH": s,
            "FusedActivationFunction": 3,
            "DilationWFactor": 1,
            "DilationHFactor": 1,
        }
        if dw:
            m.op(
                operator,
                [x, weights, bias],
                [y],
                ("DepthwiseConv2DOptions", options | {"DepthMultiplier": 1}),
            )
            macs = oh * ow * cout * k * k
        else:
            m.op(operator, [x, weights, bias], [y], ("Conv2DOptions", options))
            macs = oh * ow * cout * k * k * cin
    elif operator in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        out = (1, oh, ow, cin)
        y = act(out)
        options = {
            "Padding": 0,
            "StrideW": s,
            "StrideH": s,
            "FilterWidth": k,
            "FilterHeight": k,
            "FusedActivationFunction": 0,
        }
        m.op(operator, [x], [y], ("Pool2DOptions", options))
        macs = oh * ow * cin * k * k
    elif operator == "ADD":
        other = act((1, h, w, cin))
        inputs.append(other)
        out = (1, h, w, cin)
        y = act(out)
        m.op("ADD", [x, other], [y], ("AddOptions", {}))
        macs = 0
    elif operator == "CONCATENATION":
        other = act((1, h, w, cin))
        inputs.append(other)
        out = (1, 2 * h, w, cin)
        y = act(out)
        m.op("CONCATENATION", [x, other], [y], ("ConcatenationOptions", {"Axis": 1}))
        macs = 0
    else:  # STRIDED_SLICE: the middle half of the columns (not contiguous)
        begin = m.tensor((4,), "int32", np.array([0, 0, w // 4, 0]))
        end = m.tensor((4,), "int32", np.array([1, h, w // 4 + w // 2, cin]))
        strides = m.tensor((4,), "int32", np.array([1, 1, 1, 1]))
        out = (1, h, w // 2, cin)
        y = act(out)
        m.op(
            "STRIDED_SLICE", [x, begin, end, strides], [y], ("StridedSliceOptions", {})
        )
        macs = 0
    elements = int(np.prod(out))
    return m.build(inputs, [y]), macs, elements


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="keep the builds here")
    parser.add_argument("--opt", default="O2", help="gcc level without the dash")
    args = parser.parse_args(argv)
    if (missing := cortex_m_missing()) is not None:
        print(f"cannot measure: {missing} (scripts/setup.sh)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="usmp-patch-speed-") as tmp:
        return _fit(args.work or Path(tmp), f"-{args.opt.lstrip('-')}")


def _fit(work: Path, opt: str) -> int:
    board = BOARDS["m4"]
    builder = Builder(board, opt, work / "build")
    rows: dict[str, list[tuple[str, int, int, int]]] = {}
    for n, (kind, operator, shape, extra) in enumerate(SAMPLES):
        data, macs, elements = build(operator, shape, extra)
        path = work / f"s{n}.tflite"
        path.write_bytes(data)
        out = work / f"s{n}"
        argv = [str(path), "-o", str(out), "-q", "--module-name", f"s{n}"]
        argv += ["--use-workspace-io", "--target", f"c -mcpu={board.cpu}"]
        if usmp_compile(argv) != 0:
            raise SystemExit(f"usmp-compile {' '.join(argv)} failed")
        from usmp.frontend.tflite_reader import read_model_file

        model = read_model_file(path)
        inputs = random_inputs(model, 0)
        reference = [r.tobytes() for r in run_tflm(data, inputs, model.outputs)]
        measured = builder.measure(f"s{n}", library_program(out, inputs), profile=False)
        if measured.outputs != reference:
            raise SystemExit(f"sample {n} ({operator} {shape}): not bit-exact")
        label = f"{operator} {shape} -> {extra}"
        rows.setdefault(kind, []).append((label, macs, elements, measured.instructions))
        print(
            f"{kind:12} {label:45} MACs {macs:>8} elements {elements:>7} "
            f"instructions {measured.instructions:>9}",
            file=sys.stderr,
            flush=True,
        )
    fitted: dict[str, tuple[float, float, float]] = {}
    for kind, samples in rows.items():
        a_matrix = np.array([[m, e, 1.0] for _, m, e, _ in samples], dtype=float)
        y = np.array([i for *_, i in samples], dtype=float)
        if not any(m for _, m, _, _ in samples):
            a_matrix[:, 0] = 0.0
        coef = _nonnegative_lstsq(a_matrix, y)
        fitted[kind] = (round(coef[0], 3), round(coef[1], 3), round(coef[2], 1))
        print(
            f"\n{kind}: instructions = {coef[0]:.3f} * MACs + {coef[1]:.3f} * "
            f"elements + {coef[2]:.1f}"
        )
        for (label, _m, _e, i), estimate in zip(samples, a_matrix @ coef, strict=True):
            print(
                f"  {label:45} measured {i:>9} estimated {estimate:>11.0f} "
                f"({100 * (estimate - i) / i:+.1f}%)"
            )
    print("\nCOEFFICIENTS: dict[str, tuple[float, float, float]] = {")
    for kind, (a, b, c) in fitted.items():
        print(f'    "{kind}": ({a}, {b}, {c}),')
    print("}")
    return 0


def _nonnegative_lstsq(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares with every coefficient >= 0 (the columns that come
    out negative dropped, refitted), relative to each sample's size so
    the small calls weigh as much as the large ones."""
    weights = 1.0 / np.maximum(y, 1.0)
    keep = [j for j in range(a.shape[1]) if a[:, j].any()]
    while True:
        coef = np.zeros(a.shape[1])
        solved, *_ = np.linalg.lstsq(a[:, keep] * weights[:, None], y * weights)
        coef[keep] = solved
        negative = [j for j in keep if coef[j] < 0]
        if not negative:
            return coef
        keep = [j for j in keep if j not in negative]


if __name__ == "__main__":
    sys.exit(main())
