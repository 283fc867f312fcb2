"""``fold-explicit-padding``: a TFLite PAD before a convolution becomes the
convolution's padding; the C (``usmp-compile``, ASan) equals TFLite Micro bit
for bit and the padded copy's bytes leave the workspace. Pads that must stay
(another value than the zero point, a padded channel axis, a pooling
consumer) are left alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import usmp
from tests.test_import_tflite_synthetic import VALID, ModelBuilder, weights_i8
from usmp.frontend.tflite_reader import read_model
from usmp.testing.tflm_reference import random_inputs, run_tflm

RNG = np.random.default_rng(11)


def _pad_conv(
    dtype: str,
    paddings: list[list[int]],
    opcode: str = "CONV_2D",
    pad_zero_point: int = 7,
    padv2_value: int | None = None,
) -> tuple[bytes, int]:
    """PAD (or PADV2) -> CONV_2D / DEPTHWISE_CONV_2D / AVERAGE_POOL_2D;
    returns the model and the padded tensor's bytes."""
    m = ModelBuilder()
    q: dict[str, Any] = (
        dict(scale=0.05, zero_point=pad_zero_point) if dtype == "int8" else {}
    )
    x = m.tensor((1, 6, 5, 3), dtype, **q)
    shape = tuple(d + a + b for d, (a, b) in zip((1, 6, 5, 3), paddings, strict=True))
    padded = m.tensor(shape, dtype, **q)
    widths = m.tensor((4, 2), "int32", np.array(paddings))
    if padv2_value is None:
        m.op("PAD", [x, widths], [padded], ("PadOptions", {}))
    else:
        value = m.tensor((1,), dtype, np.array([padv2_value]), **q)
        m.op("PADV2", [x, widths, value], [padded], ("PadV2Options", {}))
    c = shape[3]
    h, w = shape[1] - 2, shape[2] - 2  # 3x3 window, VALID
    if opcode == "AVERAGE_POOL_2D":
        y = m.tensor((1, h, w, c), dtype, **q)
        options = dict(
            Padding=VALID, StrideW=1, StrideH=1, FilterWidth=3, FilterHeight=3
        )
        m.op(opcode, [padded], [y], ("Pool2DOptions", options))
        return m.build([x], [y]), int(np.prod(shape)) * np.dtype(dtype).itemsize
    out_c = c if opcode == "DEPTHWISE_CONV_2D" else 4
    wshape = (1, 3, 3, c) if opcode == "DEPTHWISE_CONV_2D" else (4, 3, 3, c)
    if dtype == "int8":
        wt = m.tensor(wshape, "int8", weights_i8(*wshape), scale=0.01)
        bias = m.tensor((out_c,), "int32", RNG.integers(-300, 300, out_c), scale=0.0005)
        y = m.tensor((1, h, w, out_c), "int8", scale=0.02, zero_point=-4)
    else:
        wt = m.tensor(wshape, "float32", RNG.standard_normal(wshape) * 0.3)
        bias = m.tensor((out_c,), "float32", RNG.standard_normal(out_c) * 0.1)
        y = m.tensor((1, h, w, out_c), "float32")
    common = dict(
        Padding=VALID, StrideW=1, StrideH=1, DilationWFactor=1, DilationHFactor=1
    )
    if opcode == "DEPTHWISE_CONV_2D":
        options = ("DepthwiseConv2DOptions", dict(common, DepthMultiplier=1))
    else:
        options = ("Conv2DOptions", common)
    m.op(opcode, [padded, wt, bias], [y], options)
    return m.build([x], [y]), int(np.prod(shape)) * np.dtype(dtype).itemsize


def _compile(data: bytes, tmp_path: Path, fold: str) -> usmp.Library:
    path = tmp_path / f"pad_{fold}.tflite"
    path.write_bytes(data)
    from usmp.tools.usmp_compile import main

    out = tmp_path / f"out_{fold}"
    assert main([str(path), "-o", str(out), "-q", "--fold-padding", fold]) == 0
    return usmp.Library(out)


def _check_against_tflm(data: bytes, lib: usmp.Library) -> None:
    model = read_model(data, "pad.tflite")
    for seed in (0, 1):
        inputs = random_inputs(model, seed)
        (want,) = run_tflm(data, inputs, model.outputs)
        (got,) = lib.run(inputs)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("dtype", "opcode"),
    [("int8", "CONV_2D"), ("int8", "DEPTHWISE_CONV_2D"), ("float32", "CONV_2D")],
)
def test_pad_folds_into_convolution(dtype: str, opcode: str, tmp_path: Path) -> None:
    data, padded_bytes = _pad_conv(dtype, [[0, 0], [1, 2], [2, 1], [0, 0]], opcode)
    folded = _compile(data, tmp_path, "on")
    kept = _compile(data, tmp_path, "off")
    _check_against_tflm(data, folded)
    assert folded.plan.workspace_bytes == kept.plan.workspace_bytes - padded_bytes


@pytest.mark.parametrize(
    ("paddings", "kwargs"),
    [
        ([[0, 0], [1, 1], [1, 1], [1, 0]], {}),  # the channel axis is padded
        ([[0, 0], [1, 1], [1, 1], [0, 0]], {"padv2_value": 9}),  # not the zero point
        ([[0, 0], [1, 1], [1, 1], [0, 0]], {"opcode": "AVERAGE_POOL_2D"}),
    ],
    ids=["channels", "value", "pooling"],
)
def test_pad_that_must_stay(
    paddings: list[list[int]], kwargs: dict[str, Any], tmp_path: Path
) -> None:
    data, _ = _pad_conv("int8", paddings, **kwargs)
    folded = _compile(data, tmp_path, "on")
    kept = _compile(data, tmp_path, "off")
    assert folded.plan.workspace_bytes == kept.plan.workspace_bytes
    _check_against_tflm(data, folded)
