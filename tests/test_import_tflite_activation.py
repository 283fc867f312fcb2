"""ABS, NEG, RELU_N1_TO_1, LEAKY_RELU, PRELU, HARD_SWISH, SQUARED_DIFFERENCE,
DIV, LOGISTIC, TANH and
requantising RELU on single-operator models
written with the flatbuffer builder (``test_import_tflite_synthetic``):
compared with TFLite Micro through the oracle (every tensor) and through the
C path (fuse-ops, lower-ops, aot-lower-main, usmp, gcc), bit for bit for
int8 on inputs spread over the whole int8 range; RELU_N1_TO_1, which TFLite
Micro lacks, against numpy; plus the refusals.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.test_import_tflite_layout import Built, check, refusal
from tests.test_import_tflite_synthetic import RELU, RELU6, RELU_N1_TO_1, ModelBuilder
from usmp.frontend.tflite_import import import_tflite_bytes
from usmp.frontend.tflite_reader import read_model
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import run_module
from usmp.testing.tflm_reference import random_inputs

SHAPE = (1, 4, 8, 10)  # 320 elements: random int8 inputs hit nearly every value


def _q(dtype: str, scale: float, zero_point: int) -> dict[str, Any]:
    return dict(scale=scale, zero_point=zero_point) if dtype == "int8" else {}


def unary_model(
    opcode: str,
    dtype: str,
    out_q: tuple[float, int] = (0.05, -3),
    options: tuple[str, dict[str, Any]] | None = None,
) -> Built:
    m = ModelBuilder()
    x = m.tensor(SHAPE, dtype, **_q(dtype, 0.05, -3))
    y = m.tensor(SHAPE, dtype, **_q(dtype, *out_q))
    m.op(opcode, [x], [y], options)
    return m, [x], [y]


# same quantisation, a smaller output scale (saturates), a larger one
QUANTS = [(0.05, -3), (0.02, 7), (0.11, -128)]


@pytest.mark.parametrize("out_q", QUANTS)
@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_abs_matches_tflite_micro(dtype: str, out_q: tuple[float, int]) -> None:
    text = check(unary_model("ABS", dtype, out_q))
    assert "relay.maximum" in text


def test_neg_matches_tflite_micro() -> None:
    check(unary_model("NEG", "float32"))


def test_neg_refuses_int8() -> None:
    assert refusal(unary_model("NEG", "int8")).endswith(
        "operator 0 (NEG): unsupported types INT8, INT8 (FLOAT32 only, as TFLite "
        "Micro's NEG)"
    )


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_relu_n1_to_1_c_matches_numpy(dtype: str) -> None:
    m, inputs, outputs = unary_model("RELU_N1_TO_1", dtype)
    data = m.build(inputs, outputs)
    module = import_tflite_bytes(data)
    (x,) = random_inputs(read_model(data), seed=0)
    if dtype == "float32":
        want = np.clip(x, -1.0, 1.0)
    else:  # [-1, 1] quantised with scale 0.05, zero point -3
        want = np.clip(x, -23, 17).astype(np.int8)
    (oracle,) = evaluate(module, [x])
    np.testing.assert_array_equal(oracle, want)
    (got,) = run_module(module, [x], passes="fuse-ops,lower-ops,aot-lower-main,usmp")
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("alpha", [0.2, 1.7, -0.5, -0.3, -2.5])
@pytest.mark.parametrize("out_q", QUANTS[:2])
@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_leaky_relu_matches_tflite_micro(
    dtype: str, out_q: tuple[float, int], alpha: float
) -> None:
    check(
        unary_model("LEAKY_RELU", dtype, out_q, ("LeakyReluOptions", {"Alpha": alpha}))
    )


def prelu_model(
    dtype: str, alpha_shape: tuple[int, ...], constant: bool, out_q: tuple[float, int]
) -> Built:
    m = ModelBuilder()
    x = m.tensor(SHAPE, dtype, **_q(dtype, 0.05, -3))
    rng = np.random.default_rng(7)
    if dtype == "int8":
        values = rng.integers(-128, 128, size=alpha_shape)
    else:
        values = rng.uniform(-1.5, 1.5, size=alpha_shape)
    a = m.tensor(
        alpha_shape,
        dtype,
        values.astype(dtype) if constant else None,
        **_q(dtype, 0.01, 4),
    )
    y = m.tensor(SHAPE, dtype, **_q(dtype, *out_q))
    m.op("PRELU", [x, a], [y])
    return m, [x] if constant else [x, a], [y]


@pytest.mark.parametrize(
    ("alpha_shape", "constant"),
    [((10,), True), ((1, 1, 10), True), ((1, 4, 8, 10), False), ((1,), True)],
)
@pytest.mark.parametrize("out_q", QUANTS[:2])
@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_prelu_matches_tflite_micro(
    dtype: str,
    out_q: tuple[float, int],
    alpha_shape: tuple[int, ...],
    constant: bool,
) -> None:
    check(prelu_model(dtype, alpha_shape, constant, out_q))


@pytest.mark.parametrize(
    ("in_q", "out_q"),
    [
        ((0.05, -3), (0.05, -3)),
        ((0.05, -3), (0.02, 7)),
        ((0.1, 20), (0.03, -100)),  # reluish exponent > 1: saturating shifts
        ((0.002, -128), (0.0011, 5)),  # reluish exponent < 0: rounding shift
        ((0.3, 0), (0.3, -128)),
    ],
)
@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_hard_swish_matches_tflite_micro(
    dtype: str, in_q: tuple[float, int], out_q: tuple[float, int]
) -> None:
    m = ModelBuilder()
    x = m.tensor(SHAPE, dtype, **_q(dtype, *in_q))
    y = m.tensor(SHAPE, dtype, **_q(dtype, *out_q))
    m.op("HARD_SWISH", [x], [y])
    check((m, [x], [y]))


def test_hard_swish_refuses_an_output_multiplier_of_1_or_more() -> None:
    m = ModelBuilder()
    x = m.tensor(SHAPE, "int8", scale=1.0, zero_point=0)
    y = m.tensor(SHAPE, "int8", scale=0.005, zero_point=0)
    m.op("HARD_SWISH", [x], [y])
    assert refusal((m, [x], [y])).endswith(
        "operator 0 (HARD_SWISH): input scale 1.0 / 128 over output scale "
        "0.004999999888241291 is 1 or more (TFLite Micro requires a smaller ratio)"
    )


@pytest.mark.parametrize("out_q", [(0.05, -3), (0.02, 7), (0.11, -128), (0.05, 40)])
def test_int8_relu_requantises_as_tflite_micro(out_q: tuple[float, int]) -> None:
    check(unary_model("RELU", "int8", out_q))


def binary_model(
    opcode: str,
    dtype: str,
    shapes: tuple[tuple[int, ...], tuple[int, ...]],
    quants: tuple[tuple[float, int], tuple[float, int], tuple[float, int]],
) -> Built:
    m = ModelBuilder()
    x1 = m.tensor(shapes[0], dtype, **_q(dtype, *quants[0]))
    x2 = m.tensor(shapes[1], dtype, **_q(dtype, *quants[1]))
    y = m.tensor(SHAPE, dtype, **_q(dtype, *quants[2]))
    m.op(opcode, [x1, x2], [y])
    return m, [x1, x2], [y]


BINARY_SHAPES = [(SHAPE, SHAPE), (SHAPE, (10,)), ((1, 4, 1, 10), (1, 1, 8, 1))]
BINARY_QUANTS = [
    ((0.05, -3), (0.05, -3), (0.05, -3)),
    ((0.05, -3), (0.02, 9), (0.1, -128)),  # a large square saturates
    ((0.01, 100), (0.03, -7), (0.5, -128)),
]


@pytest.mark.parametrize("quants", BINARY_QUANTS)
@pytest.mark.parametrize("shapes", BINARY_SHAPES)
@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_squared_difference_matches_tflite_micro(
    dtype: str,
    shapes: tuple[tuple[int, ...], tuple[int, ...]],
    quants: tuple[tuple[float, int], tuple[float, int], tuple[float, int]],
) -> None:
    check(binary_model("SQUARED_DIFFERENCE", dtype, shapes, quants))


@pytest.mark.parametrize("activation", [0, RELU, RELU6, RELU_N1_TO_1])
@pytest.mark.parametrize("shapes", BINARY_SHAPES)
def test_float_div_matches_tflite_micro(
    shapes: tuple[tuple[int, ...], tuple[int, ...]], activation: int
) -> None:
    m, inputs, outputs = binary_model("DIV", "float32", shapes, BINARY_QUANTS[0])
    m.operators[0]["options"] = (
        "DivOptions",
        {"FusedActivationFunction": activation},
    )
    text = check((m, inputs, outputs))
    assert "relay.divide" in text


@pytest.mark.parametrize(("opcode", "op"), [("LOGISTIC", "sigmoid"), ("TANH", "tanh")])
def test_float_logistic_and_tanh_match_tflite_micro(opcode: str, op: str) -> None:
    m = ModelBuilder()
    x = m.tensor(SHAPE, "float32")
    y = m.tensor(SHAPE, "float32")
    m.op(opcode, [x], [y])
    text = check((m, [x], [y]))
    assert f"relay.{op}" in text


def test_logistic_and_tanh_c_over_a_wide_range() -> None:
    """Past TFLite's cut-offs (|x| up to 30) the C agrees with the oracle."""
    m = ModelBuilder()
    x = m.tensor((2, 61), "float32")
    y1, y2 = m.tensor((2, 61), "float32"), m.tensor((2, 61), "float32")
    m.op("LOGISTIC", [x], [y1])
    m.op("TANH", [x], [y2])
    module = import_tflite_bytes(m.build([x], [y1, y2]))
    values = np.linspace(-30, 30, 122, dtype=np.float32).reshape(2, 61)
    got = run_module(module, [values], passes="fuse-ops,lower-ops,aot-lower-main,usmp")
    want = evaluate(module, [values])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
