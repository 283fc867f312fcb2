"""int16 activations with int8 weights ("16x8") for CONV_2D,
DEPTHWISE_CONV_2D and FULLY_CONNECTED, on single-operator models written
with ``ModelBuilder``: every tensor compared with TFLite Micro through the
oracle, and the C (fuse-ops, lower-ops, aot-lower-main, usmp, gcc) compared
with TFLite Micro on seeded inputs over the whole int16 range and on the
extremes; the accumulator TFLite Micro picks (int64 with an INT64 bias,
int32 for CONV_2D / FULLY_CONNECTED without one or with an INT32 one); TFLM's
seanet CONV_2D integration model against its golden CSV; the refusals.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import usmp
from tests.test_import_tflite_layout import Built, check, refusal
from tests.test_import_tflite_synthetic import ModelBuilder, weights_i8
from tests.test_models import compare_with_tflm
from usmp.frontend.tflite_import import import_tflite_bytes
from usmp.frontend.tflite_reader import read_model
from usmp.testing.run_c import run_module
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import difference, run_tflm

RELU, RELU_N1_TO_1, RELU6 = 1, 2, 3
SAME, VALID = 0, 1
RNG = np.random.default_rng(1608)


def _bias(
    m: ModelBuilder, dtype: str | None, in_scale: float, scales: list[float]
) -> int:
    """A bias tensor of ``dtype`` (``None``: omitted, -1), values large
    enough to matter against int16 x int8 sums."""
    if dtype is None:
        return -1
    values = RNG.integers(-3_000_000, 3_000_000, len(scales))
    return m.tensor((len(scales),), dtype, values, scale=[in_scale * s for s in scales])


def _weight_scales(per_channel: bool, channels: int) -> list[float]:
    if per_channel:
        return list(RNG.uniform(0.004, 0.02, channels))
    return [0.01] * channels


def conv_model(
    x_shape: tuple[int, int, int, int],
    filters: tuple[int, int, int, int],
    out_shape: tuple[int, int, int, int],
    options: dict[str, Any],
    bias: str | None = "int64",
    per_channel: bool = True,
    out_scale: float = 0.02,
) -> Built:
    m = ModelBuilder()
    x = m.tensor(x_shape, "int16", scale=0.0005)
    scales = _weight_scales(per_channel, filters[0])
    w = m.tensor(
        filters,
        "int8",
        weights_i8(*filters),
        scale=scales if per_channel else scales[0],
    )
    b = _bias(m, bias, 0.0005, scales)
    y = m.tensor(out_shape, "int16", scale=out_scale)
    opts = {"DilationWFactor": 1, "DilationHFactor": 1, **options}
    m.op("CONV_2D", [x, w, b], [y], ("Conv2DOptions", opts))
    return m, [x], [y]


def depthwise_model(
    x_shape: tuple[int, int, int, int],
    multiplier: int,
    kernel: tuple[int, int],
    out_shape: tuple[int, int, int, int],
    options: dict[str, Any],
    bias: str | None = "int64",
    per_channel: bool = True,
) -> Built:
    m = ModelBuilder()
    x = m.tensor(x_shape, "int16", scale=0.0005)
    channels = x_shape[3] * multiplier
    scales = _weight_scales(per_channel, channels)
    shape = (1, *kernel, channels)
    w = m.tensor(
        shape,
        "int8",
        weights_i8(*shape),
        scale=scales if per_channel else scales[0],
        axis=3,
    )
    b = _bias(m, bias, 0.0005, scales)
    y = m.tensor(out_shape, "int16", scale=0.003)
    # no bias: two inputs (TFLite Micro's 16x8 depthwise crashes on a -1 one)
    inputs = [x, w] if b < 0 else [x, w, b]
    opts = {
        "DepthMultiplier": multiplier,
        "StrideW": 1,
        "StrideH": 1,
        "DilationWFactor": 1,
        "DilationHFactor": 1,
        **options,
    }
    m.op("DEPTHWISE_CONV_2D", inputs, [y], ("DepthwiseConv2DOptions", opts))
    return m, [x], [y]


def dense_model(
    x_shape: tuple[int, ...],
    units: int,
    out_shape: tuple[int, ...],
    bias: str | None = "int64",
    per_channel: bool = False,
    out_scale: float = 0.05,
    activation: int = 0,
    keep_num_dims: bool = False,
) -> Built:
    m = ModelBuilder()
    depth = x_shape[-1]
    x = m.tensor(x_shape, "int16", scale=0.0005)
    scales = _weight_scales(per_channel, units)
    w = m.tensor(
        (units, depth),
        "int8",
        weights_i8(units, depth),
        scale=scales if per_channel else scales[0],
    )
    b = _bias(m, bias, 0.0005, scales)
    y = m.tensor(out_shape, "int16", scale=out_scale)
    options = dict(FusedActivationFunction=activation, KeepNumDims=keep_num_dims)
    m.op("FULLY_CONNECTED", [x, w, b], [y], ("FullyConnectedOptions", options))
    return m, [x], [y]


def extremes_match_tflm(built: Built) -> None:
    """Our C == TFLite Micro on all-minimum, all-maximum and alternating
    inputs (the largest accumulators, both signs)."""
    m, inputs, outputs = built
    data = m.build(inputs, outputs)
    model = read_model(data)
    (shape,) = [model.tensors[i].shape for i in model.inputs]
    alternating = np.where(np.indices(shape).sum(axis=0) % 2, -32768, 32767)
    module = import_tflite_bytes(data)
    for x in (np.full(shape, -32768), np.full(shape, 32767), alternating):
        values = [x.astype(np.int16)]
        (got,) = run_module(
            module, values, passes="fuse-ops,lower-ops,aot-lower-main,usmp"
        )
        (want,) = run_tflm(data, values, outputs)
        assert difference(got, want) is None, difference(got, want)


# --------------------------------------------------------------------- CONV_2D

CONVS: dict[str, Built] = {
    "same-stride2-relu": conv_model(
        (1, 7, 9, 3),
        (4, 3, 3, 3),
        (1, 4, 5, 4),
        dict(Padding=SAME, StrideW=2, StrideH=2, FusedActivationFunction=RELU),
    ),
    "valid-dilation2-per-tensor": conv_model(
        (1, 9, 8, 2),
        (3, 3, 2, 2),
        (1, 5, 7, 3),
        dict(Padding=VALID, StrideW=1, StrideH=1, DilationHFactor=2),
        per_channel=False,
    ),
    "same-even-kernel-relu6": conv_model(
        (2, 5, 6, 2),
        (5, 4, 2, 2),
        (2, 3, 6, 5),
        dict(Padding=SAME, StrideW=1, StrideH=2, FusedActivationFunction=RELU6),
        out_scale=0.001,
    ),
    "groups2-size1": conv_model(
        (1, 1, 5, 4),
        (6, 1, 3, 2),
        (1, 1, 5, 6),
        dict(Padding=SAME, StrideW=1, StrideH=1),
    ),
    "no-bias": conv_model(
        (1, 6, 6, 3),
        (4, 3, 3, 3),
        (1, 6, 6, 4),
        dict(Padding=SAME, StrideW=1, StrideH=1, FusedActivationFunction=RELU_N1_TO_1),
        bias=None,
        out_scale=0.00005,
    ),
    "int32-bias": conv_model(
        (1, 5, 5, 3),
        (4, 3, 3, 3),
        (1, 3, 3, 4),
        dict(Padding=VALID, StrideW=1, StrideH=1),
        bias="int32",
    ),
}


@pytest.mark.parametrize("case", CONVS)
def test_conv_16x8_matches_tflite_micro(case: str) -> None:
    text = check(CONVS[case])
    assert "relay.conv2d" in text
    int64 = re.search(r"relay\.fixed_point_multiply .* : tensor<[0-9x]+xi64>", text)
    assert bool(int64) == (case != "int32-bias")


@pytest.mark.parametrize("case", ["same-stride2-relu", "no-bias"])
def test_conv_16x8_extreme_inputs(case: str) -> None:
    extremes_match_tflm(CONVS[case])


def test_conv_16x8_accumulates_in_i64() -> None:
    m, inputs, outputs = CONVS["same-stride2-relu"]
    text = str(import_tflite_bytes(m.build(inputs, outputs)))
    assert "(tensor<1x7x9x3xi16>, tensor<4x3x3x3xi8>) -> tensor<1x4x5x4xi64>" in text
    assert (
        "relay.fixed_point_multiply" in text and "xi64> -> tensor<1x4x5x4xi32>" in text
    )


# ----------------------------------------------------------- DEPTHWISE_CONV_2D

DEPTHWISES: dict[str, Built] = {
    "multiplier2-same-stride2": depthwise_model(
        (1, 7, 6, 3),
        2,
        (3, 3),
        (1, 4, 3, 6),
        dict(Padding=SAME, StrideW=2, StrideH=2, FusedActivationFunction=RELU),
    ),
    "valid-no-bias": depthwise_model(
        (1, 6, 5, 4), 1, (3, 2), (1, 4, 4, 4), dict(Padding=VALID), bias=None
    ),
    "per-tensor": depthwise_model(
        (1, 5, 6, 2), 2, (3, 3), (1, 5, 6, 4), dict(Padding=SAME), per_channel=False
    ),
    "single-row": depthwise_model(
        (1, 1, 9, 2), 3, (1, 4), (1, 1, 9, 6), dict(Padding=SAME, StrideW=1)
    ),
}


@pytest.mark.parametrize("case", DEPTHWISES)
def test_depthwise_16x8_matches_tflite_micro(case: str) -> None:
    check(DEPTHWISES[case])


def test_depthwise_16x8_extreme_inputs() -> None:
    extremes_match_tflm(DEPTHWISES["multiplier2-same-stride2"])


def test_depthwise_16x8_refuses_an_int32_bias() -> None:
    built = depthwise_model((1, 4, 4, 2), 1, (3, 3), (1, 4, 4, 2), {}, bias="int32")
    assert refusal(built).endswith(
        "operator 0 (DEPTHWISE_CONV_2D): bias 't2' is INT32, expected INT64 for "
        "int16 input with int8 weights"
    )


# ------------------------------------------------------------- FULLY_CONNECTED

DENSES: dict[str, Built] = {
    "per-tensor": dense_model((3, 40), 7, (3, 7)),
    "per-channel-relu": dense_model(
        (2, 33), 5, (2, 5), per_channel=True, activation=RELU
    ),
    "multiplier-above-one": dense_model((1, 16), 4, (1, 4), out_scale=0.0000015),
    "keep-num-dims": dense_model((2, 3, 9), 4, (2, 3, 4), keep_num_dims=True),
    "no-bias": dense_model((4, 20), 6, (4, 6), bias=None, out_scale=0.02),
    "int32-bias": dense_model((2, 24), 3, (2, 3), bias="int32"),
}


@pytest.mark.parametrize("case", DENSES)
def test_fully_connected_16x8_matches_tflite_micro(case: str) -> None:
    text = check(DENSES[case])
    assert "relay.dense" in text


def test_fully_connected_16x8_extreme_inputs() -> None:
    extremes_match_tflm(DENSES["per-tensor"])


@pytest.mark.parametrize("kind", ["conv", "dense"])
def test_16x8_without_bias_rounds_as_tflite_micro(kind: str) -> None:
    """No bias: TFLite Micro requantises the int64 accumulator (a 16-bit
    multiplier, one rounding), not an int32 one (gemmlowp's two roundings,
    as with an INT32 bias). The two differ on a value or two of most random
    weight sets with a small output scale (large multipliers): 8 sets each,
    every one bit-exact."""
    for seed in range(8):
        rng = np.random.default_rng(seed)
        m = ModelBuilder()
        if kind == "conv":
            x = m.tensor((1, 6, 6, 3), "int16", scale=0.0005)
            w = m.tensor(
                (4, 3, 3, 3),
                "int8",
                rng.integers(-127, 128, (4, 3, 3, 3)),
                scale=list(rng.uniform(0.004, 0.02, 4)),
            )
            y = m.tensor((1, 6, 6, 4), "int16", scale=0.00005)
            opts = dict(Padding=SAME, StrideW=1, StrideH=1)
            m.op("CONV_2D", [x, w, -1], [y], ("Conv2DOptions", opts))
        else:
            x = m.tensor((4, 20), "int16", scale=0.0005)
            w = m.tensor((6, 20), "int8", rng.integers(-127, 128, (6, 20)), scale=0.01)
            y = m.tensor((4, 6), "int16", scale=0.00005)
            m.op("FULLY_CONNECTED", [x, w, -1], [y], ("FullyConnectedOptions", {}))
        compare_with_tflm(m.build([x], [y]), f"{kind}-no-bias-{seed}.tflite")


# ------------------------------------------------------------------ refusals


def test_16x8_refuses_an_int16_zero_point() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 8), "int16", scale=0.001, zero_point=3)
    w = m.tensor((2, 8), "int8", weights_i8(2, 8), scale=0.01)
    y = m.tensor((1, 2), "int16", scale=0.01)
    m.op("FULLY_CONNECTED", [x, w, -1], [y], ("FullyConnectedOptions", {}))
    assert refusal((m, [x], [y])).endswith(
        "operator 0 (FULLY_CONNECTED): int16 input 't0' has zero point 3; 16x8 "
        "operators need 0 (symmetric), as TFLite Micro"
    )


def test_16x8_refuses_int16_weights() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 8), "int16", scale=0.001)
    w = m.tensor((2, 8), "int16", np.ones((2, 8)), scale=0.01)
    y = m.tensor((1, 2), "int16", scale=0.01)
    m.op("FULLY_CONNECTED", [x, w, -1], [y], ("FullyConnectedOptions", {}))
    assert refusal((m, [x], [y])).endswith(
        "operator 0 (FULLY_CONNECTED): unsupported types: input INT16 with weights "
        "INT16 (supported: FLOAT32 x FLOAT32, INT8 x INT8, INT16 x INT8)"
    )


# --------------------------------------------------------------------- seanet


def test_seanet_conv_reproduces_the_golden_output(tmp_path: Path) -> None:
    """TFLM's own int16 CONV_2D integration-test model (7x7 kernel, per-channel
    weights, INT64 bias): through ``usmp.compile`` and gcc, the golden CSV
    exactly, and TFLite Micro on a random input."""
    folder = MODELS_DIR / "tflite_micro/seanet/conv"
    path = folder / "conv0.tflite"
    data = path.read_bytes()
    model = read_model(data, path.name)
    (index,) = model.inputs
    shape = model.tensors[index].shape
    x = np.loadtxt(folder / "conv0_input0_int16.csv", delimiter=",")
    golden = np.loadtxt(folder / "conv0_golden_int16.csv", delimiter=",")
    lib = usmp.compile(path, output_dir=tmp_path / "out")
    (got,) = lib.run([x.astype(np.int16).reshape(shape)])
    assert got.dtype == np.int16
    np.testing.assert_array_equal(got.reshape(-1), golden.astype(np.int16))
    random = RNG.integers(-32768, 32768, shape).astype(np.int16)
    (got,) = lib.run([random])
    np.testing.assert_array_equal(got, run_tflm(data, [random], model.outputs)[0])
