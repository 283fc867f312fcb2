"""Convolution options the real models do not exercise, on single-operator
models written with ``ModelBuilder``, float and int8, every tensor compared
with TFLite Micro through the oracle and the C compared with TFLite Micro:
grouped CONV_2D (input channels = groups x filter channels), CONV_2D and
DEPTHWISE_CONV_2D with dilation and SAME padding, depth multiplier 3,
FULLY_CONNECTED on a rank-4 input with and without keep_num_dims.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.test_import_tflite_layout import Built, check
from tests.test_import_tflite_synthetic import ModelBuilder, weights_i8

SAME, VALID = 0, 1
RELU, RELU6 = 1, 3
RNG = np.random.default_rng(31)


def _weights(
    m: ModelBuilder, dtype: str, shape: tuple[int, ...], axis: int, in_scale: float
) -> tuple[int, int]:
    """(weights, bias) tensors, per-channel along ``axis`` for int8."""
    channels = shape[axis]
    if dtype == "float32":
        w = m.tensor(shape, dtype, RNG.standard_normal(shape) * 0.3)
        return w, m.tensor((channels,), dtype, RNG.standard_normal(channels))
    scales = list(RNG.uniform(0.003, 0.02, channels))
    w = m.tensor(shape, "int8", weights_i8(*shape), scale=scales, axis=axis)
    values = RNG.integers(-3000, 3000, channels)
    b = m.tensor((channels,), "int32", values, scale=[in_scale * s for s in scales])
    return w, b


def _io(m: ModelBuilder, dtype: str, shape: tuple[int, ...], out: bool) -> int:
    if dtype == "float32":
        return m.tensor(shape, dtype)
    return m.tensor(shape, dtype, scale=0.1 if out else 0.02, zero_point=-5)


def conv_model(
    dtype: str,
    x_shape: tuple[int, int, int, int],
    w_shape: tuple[int, int, int, int],
    y_shape: tuple[int, int, int, int],
    options: dict[str, Any],
) -> Built:
    m = ModelBuilder()
    x = _io(m, dtype, x_shape, out=False)
    w, b = _weights(m, dtype, w_shape, 0, 0.02)
    y = _io(m, dtype, y_shape, out=True)
    opts = {"StrideW": 1, "StrideH": 1, "DilationWFactor": 1, "DilationHFactor": 1}
    m.op("CONV_2D", [x, w, b], [y], ("Conv2DOptions", {**opts, **options}))
    return m, [x], [y]


def depthwise_model(
    dtype: str,
    x_shape: tuple[int, int, int, int],
    w_shape: tuple[int, int, int, int],
    y_shape: tuple[int, int, int, int],
    options: dict[str, Any],
) -> Built:
    m = ModelBuilder()
    x = _io(m, dtype, x_shape, out=False)
    w, b = _weights(m, dtype, w_shape, 3, 0.02)
    y = _io(m, dtype, y_shape, out=True)
    opts = {"StrideW": 1, "StrideH": 1, "DilationWFactor": 1, "DilationHFactor": 1}
    m.op(
        "DEPTHWISE_CONV_2D",
        [x, w, b],
        [y],
        ("DepthwiseConv2DOptions", {**opts, **options}),
    )
    return m, [x], [y]


def dense_model(
    dtype: str, x_shape: tuple[int, ...], units: int, y_shape: tuple[int, ...]
) -> Built:
    m = ModelBuilder()
    x = _io(m, dtype, x_shape, out=False)
    w, b = _weights(m, dtype, (units, x_shape[-1]), 0, 0.02)
    y = _io(m, dtype, y_shape, out=True)
    keep = len(y_shape) > 2
    options = {"KeepNumDims": keep, "FusedActivationFunction": RELU}
    m.op("FULLY_CONNECTED", [x, w, b], [y], ("FullyConnectedOptions", options))
    return m, [x], [y]


CASES = {
    "conv-groups-3": lambda d: conv_model(
        d, (1, 5, 6, 6), (9, 3, 3, 2), (1, 5, 6, 9), dict(Padding=SAME)
    ),
    "conv-groups-2-stride-2-relu6": lambda d: conv_model(
        d,
        (1, 7, 7, 4),
        (4, 3, 3, 2),
        (1, 4, 4, 4),
        dict(Padding=SAME, StrideW=2, StrideH=2, FusedActivationFunction=RELU6),
    ),
    "conv-dilation-same-stride": lambda d: conv_model(
        d,
        (1, 9, 10, 3),
        (4, 3, 2, 3),
        (1, 5, 5, 4),
        dict(Padding=SAME, StrideW=2, StrideH=2, DilationHFactor=2, DilationWFactor=3),
    ),
    "depthwise-multiplier-3-dilation": lambda d: depthwise_model(
        d,
        (1, 8, 7, 2),
        (1, 3, 3, 6),
        (1, 8, 7, 6),
        dict(Padding=SAME, DepthMultiplier=3, DilationHFactor=2, DilationWFactor=2),
    ),
    "depthwise-multiplier-2-valid-stride": lambda d: depthwise_model(
        d,
        (1, 9, 6, 3),
        (1, 3, 2, 6),
        (1, 4, 5, 6),
        dict(Padding=VALID, StrideH=2, DepthMultiplier=2),
    ),
    "fc-rank4-keep-num-dims": lambda d: dense_model(d, (1, 2, 3, 8), 5, (1, 2, 3, 5)),
    "fc-rank4-flattened": lambda d: dense_model(d, (2, 3, 2, 4), 3, (12, 3)),
}


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("case", CASES)
def test_convolution_option_matches_tflite_micro(case: str, dtype: str) -> None:
    check(CASES[case](dtype))
