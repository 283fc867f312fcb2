"""Operators and options the real models do not exercise, on small
flatbuffers written here with the ``tflite`` package's builder functions,
compared tensor by tensor with TFLite Micro (``test_models.compare_with_tflm``):
MAX_POOL_2D, odd SAME padding, dilation, VALID padding, RELU6 / RELU_N1_TO_1,
depth multiplier 2 with per-channel weights, FULLY_CONNECTED with
keep_num_dims and per-channel weights, broadcasting int8 ADD, int8 -> int8
QUANTIZE, float SOFTMAX with beta; SUB, MUL, MAXIMUM, MINIMUM,
CONCATENATION, PAD/PADV2, RELU, RELU6 in float and int8 (also through the
full C path against the oracle). Plus the refusals that need a crafted
file (custom op after a supported one, unsupported fused activation).
Dynamic dimensions and extra subgraphs, which TFLite Micro runs, are
``test_tflm_accepts``'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.test_models import compare_with_tflm
from usmp.frontend.tflite_import import import_tflite_bytes
from usmp.frontend.tflite_reader import TFLiteImportError, read_model
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import run_module
from usmp.testing.tflite_builder import _TYPES, ModelBuilder  # noqa: F401 (re-exported)
from usmp.testing.tflm_reference import difference, random_inputs

RELU, RELU_N1_TO_1, RELU6, TANH = 1, 2, 3, 4
SAME, VALID = 0, 1
RNG = np.random.default_rng(20240613)


def weights_i8(*shape: int) -> np.ndarray:
    return RNG.integers(-127, 128, size=shape).astype(np.int8)


def check(builder: ModelBuilder, inputs: list[int], outputs: list[int]) -> None:
    compare_with_tflm(builder.build(inputs, outputs), "synthetic.tflite")


# ------------------------------------------------------------- comparisons


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_max_pool_same_padding_relu6(dtype: str) -> None:
    m = ModelBuilder()
    q: dict[str, Any] = dict(scale=0.05, zero_point=-10) if dtype == "int8" else {}
    x = m.tensor((1, 5, 7, 3), dtype, **q)
    y = m.tensor((1, 3, 4, 3), dtype, **q)
    m.op(
        "MAX_POOL_2D",
        [x],
        [y],
        (
            "Pool2DOptions",
            dict(
                Padding=SAME,
                StrideW=2,
                StrideH=2,
                FilterWidth=2,
                FilterHeight=3,
                FusedActivationFunction=RELU6,
            ),
        ),
    )
    check(m, [x], [y])


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_conv_dilation_valid_relu_n1_to_1(dtype: str) -> None:
    m = ModelBuilder()
    if dtype == "int8":
        x = m.tensor((1, 9, 8, 3), "int8", scale=0.02, zero_point=5)
        w = m.tensor((4, 3, 3, 3), "int8", weights_i8(4, 3, 3, 3), scale=0.01)
        bias = m.tensor((4,), "int32", RNG.integers(-500, 500, 4), scale=0.0002)
        y = m.tensor((1, 5, 4, 4), "int8", scale=0.01, zero_point=-3)
    else:
        x = m.tensor((1, 9, 8, 3), "float32")
        w = m.tensor((4, 3, 3, 3), "float32", RNG.standard_normal((4, 3, 3, 3)) * 0.3)
        bias = m.tensor((4,), "float32", RNG.standard_normal(4) * 0.1)
        y = m.tensor((1, 5, 4, 4), "float32")
    m.op(
        "CONV_2D",
        [x, w, bias],
        [y],
        (
            "Conv2DOptions",
            dict(
                Padding=VALID,
                StrideW=1,
                StrideH=1,
                DilationWFactor=2,
                DilationHFactor=2,
                FusedActivationFunction=RELU_N1_TO_1,
            ),
        ),
    )
    check(m, [x], [y])


def test_depthwise_multiplier_2_per_channel_same_stride_2() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 7, 6, 3), "int8", scale=0.05, zero_point=-128)
    scales = [0.004, 0.006, 0.005, 0.003, 0.007, 0.002]
    w = m.tensor((1, 3, 3, 6), "int8", weights_i8(1, 3, 3, 6), scale=scales, axis=3)
    bias = m.tensor(
        (6,), "int32", RNG.integers(-2000, 2000, 6), scale=[0.05 * s for s in scales]
    )
    y = m.tensor((1, 4, 3, 6), "int8", scale=0.04, zero_point=-20)
    m.op(
        "DEPTHWISE_CONV_2D",
        [x, w, bias],
        [y],
        (
            "DepthwiseConv2DOptions",
            dict(
                Padding=SAME,
                StrideW=2,
                StrideH=2,
                DepthMultiplier=2,
                DilationWFactor=1,
                DilationHFactor=1,
                FusedActivationFunction=RELU,
            ),
        ),
    )
    check(m, [x], [y])


def test_fully_connected_keep_num_dims_float() -> None:
    m = ModelBuilder()
    x = m.tensor((2, 3, 5), "float32")
    w = m.tensor((4, 5), "float32", RNG.standard_normal((4, 5)))
    y = m.tensor((2, 3, 4), "float32")
    m.op(
        "FULLY_CONNECTED",
        [x, w, -1],
        [y],
        ("FullyConnectedOptions", dict(KeepNumDims=True, FusedActivationFunction=RELU)),
    )
    check(m, [x], [y])


def test_fully_connected_per_channel_int8() -> None:
    m = ModelBuilder()
    x = m.tensor((2, 6), "int8", scale=0.1, zero_point=7)
    scales = [0.01, 0.02, 0.015]
    w = m.tensor((3, 6), "int8", weights_i8(3, 6), scale=scales, axis=0)
    bias = m.tensor(
        (3,), "int32", RNG.integers(-300, 300, 3), scale=[0.1 * s for s in scales]
    )
    y = m.tensor((2, 3), "int8", scale=0.2, zero_point=0)
    m.op("FULLY_CONNECTED", [x, w, bias], [y], ("FullyConnectedOptions", {}))
    check(m, [x], [y])


def test_add_int8_broadcast_relu() -> None:
    m = ModelBuilder()
    a = m.tensor((1, 4, 4, 3), "int8", scale=0.03, zero_point=-4)
    b = m.tensor((1, 1, 1, 3), "int8", scale=0.07, zero_point=11)
    y = m.tensor((1, 4, 4, 3), "int8", scale=0.05, zero_point=-128)
    m.op("ADD", [a, b], [y], ("AddOptions", dict(FusedActivationFunction=RELU)))
    check(m, [a, b], [y])


def test_quantize_float_then_requantize_int8() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 64), "float32")
    q1 = m.tensor((1, 64), "int8", scale=0.0125, zero_point=3)
    q2 = m.tensor((1, 64), "int8", scale=0.031, zero_point=-9)
    y = m.tensor((1, 64), "float32")
    m.op("QUANTIZE", [x], [q1])
    m.op("QUANTIZE", [q1], [q2])
    m.op("DEQUANTIZE", [q2], [y])
    check(m, [x], [y])


def test_float_softmax_with_beta() -> None:
    m = ModelBuilder()
    x = m.tensor((3, 7), "float32")
    y = m.tensor((3, 7), "float32")
    m.op("SOFTMAX", [x], [y], ("SoftmaxOptions", dict(Beta=0.5)))
    check(m, [x], [y])


def test_dynamic_batch_becomes_one() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 4), "float32", signature=(-1, 4))
    y = m.tensor((1, 2, 2), "float32", signature=(-1, 2, 2))
    m.op("RESHAPE", [x], [y])
    module = import_tflite_bytes(m.build([x], [y]))
    assert "(%t0: tensor<1x4xf32>) -> tensor<1x2x2xf32>" in str(module)


# ---------------------------------- elementwise and data-movement builtins
# Each builder returns ``(model, inputs, outputs)``; the same model is
# compared with TFLite Micro and, through the full C path, with the oracle.


def _q(dtype: str, scale: float, zero_point: int) -> dict[str, Any]:
    return dict(scale=scale, zero_point=zero_point) if dtype == "int8" else {}


def sub_model(dtype: str) -> tuple[ModelBuilder, list[int], list[int]]:
    m = ModelBuilder()
    a = m.tensor((1, 3, 4, 5), dtype, **_q(dtype, 0.045, -7))
    b = m.tensor((1, 1, 4, 5), dtype, **_q(dtype, 0.0625, 12))
    y = m.tensor((1, 3, 4, 5), dtype, **_q(dtype, 0.09, 3))
    m.op("SUB", [a, b], [y], ("SubOptions", dict(FusedActivationFunction=RELU6)))
    return m, [a, b], [y]


def mul_model(dtype: str) -> tuple[ModelBuilder, list[int], list[int]]:
    m = ModelBuilder()
    a = m.tensor((2, 3, 6), dtype, **_q(dtype, 0.05, 9))
    b = m.tensor((3, 1), dtype, **_q(dtype, 0.02, -20))
    # the product's range (about +-20) fits the output: a right shift
    y = m.tensor((2, 3, 6), dtype, **_q(dtype, 0.17, -5))
    m.op("MUL", [a, b], [y], ("MulOptions", dict(FusedActivationFunction=RELU)))
    # 0.05 * 0.02 / 0.0004 > 1: a left-shifting multiplier (mostly saturated)
    z = m.tensor((2, 3, 6), dtype, **_q(dtype, 0.0004, 3))
    m.op("MUL", [a, b], [z], ("MulOptions", {}))
    return m, [a, b], [y, z]


def extremum_model(
    opcode: str, dtype: str
) -> tuple[ModelBuilder, list[int], list[int]]:
    m = ModelBuilder()
    q = _q(dtype, 0.03, -2)
    a = m.tensor((1, 4, 6), dtype, **q)
    b = m.tensor((1, 6), dtype, **q)
    y = m.tensor((1, 4, 6), dtype, **q)
    m.op(opcode, [a, b], [y], ("MaximumMinimumOptions", {}))
    return m, [a, b], [y]


def concatenation_model(dtype: str) -> tuple[ModelBuilder, list[int], list[int]]:
    m = ModelBuilder()
    q = _q(dtype, 0.07, 4)
    a = m.tensor((1, 2, 3, 2), dtype, **q)
    b = m.tensor((1, 2, 3, 5), dtype, **q)
    c = m.tensor((1, 2, 3, 1), dtype, **q)
    y = m.tensor((1, 2, 3, 8), dtype, **q)
    m.op("CONCATENATION", [a, b, c], [y], ("ConcatenationOptions", dict(Axis=-1)))
    return m, [a, b, c], [y]


def pad_model(dtype: str) -> tuple[ModelBuilder, list[int], list[int]]:
    m = ModelBuilder()
    q = _q(dtype, 0.1, -33)
    x = m.tensor((1, 3, 2, 4), dtype, **q)
    paddings = m.tensor((4, 2), "int32", np.array([[0, 0], [1, 2], [2, 0], [0, 1]]))
    y = m.tensor((1, 6, 4, 5), dtype, **q)
    m.op("PAD", [x, paddings], [y], ("PadOptions", {}))
    return m, [x], [y]


def relu_model(opcode: str, dtype: str) -> tuple[ModelBuilder, list[int], list[int]]:
    m = ModelBuilder()
    # scale 0.04: 6.0 is inside the int8 range, RELU6 clamps at both ends
    q = _q(dtype, 0.04, -60)
    x = m.tensor((2, 5, 7), dtype, **q)
    y = m.tensor((2, 5, 7), dtype, **q)
    m.op(opcode, [x], [y])
    return m, [x], [y]


ELEMENTWISE_MODELS = {
    "SUB": sub_model,
    "MUL": mul_model,
    "MAXIMUM": lambda dtype: extremum_model("MAXIMUM", dtype),
    "MINIMUM": lambda dtype: extremum_model("MINIMUM", dtype),
    "CONCATENATION": concatenation_model,
    "PAD": pad_model,
    "RELU": lambda dtype: relu_model("RELU", dtype),
    "RELU6": lambda dtype: relu_model("RELU6", dtype),
}


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("opcode", sorted(ELEMENTWISE_MODELS))
def test_elementwise_matches_tflite_micro(opcode: str, dtype: str) -> None:
    check(*ELEMENTWISE_MODELS[opcode](dtype))


@pytest.mark.parametrize("opcode", sorted(ELEMENTWISE_MODELS))
def test_elementwise_c_matches_oracle(opcode: str) -> None:
    """int8 (bit for bit) and float (1e-5) in one model: both converters'
    output through fuse-ops, lower-ops, aot-lower-main, usmp and gcc."""
    for dtype in ("int8", "float32"):
        m, inputs, outputs = ELEMENTWISE_MODELS[opcode](dtype)
        data = m.build(inputs, outputs)
        module = import_tflite_bytes(data)
        model = read_model(data, "synthetic.tflite")
        values = random_inputs(model, seed=3)
        wanted = evaluate(module, values)
        results = run_module(
            module, values, passes="fuse-ops,lower-ops,aot-lower-main,usmp"
        )
        assert len(results) == len(wanted) == len(outputs)
        for got, want in zip(results, wanted, strict=True):
            assert difference(got, want) is None, f"{dtype}: {difference(got, want)}"


def test_int8_sub_multipliers_are_computed_in_double() -> None:
    """Scales where real multipliers computed in float32 (some TFLM
    versions) give different int8 results than in double (the installed
    TFLM, like ADD): the four input pairs that tell them apart."""
    m = ModelBuilder()
    a = m.tensor((4,), "int8", np.array([-33, -21, 21, 33]), scale=0.6944236755)
    b = m.tensor((4,), "int8", np.array([55, 35, -35, -55]), scale=0.1867861598)
    y = m.tensor((4,), "int8", scale=0.4022935926)
    m.op("SUB", [a, b], [y], ("SubOptions", {}))
    check(m, [], [y])


def test_padv2_constant_int8() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 2, 3), "int8", scale=0.1, zero_point=5)
    paddings = m.tensor((3, 2), "int32", np.array([[0, 0], [2, 1], [0, 3]]))
    value = m.tensor((), "int8", np.array(-77), scale=0.1, zero_point=5)
    y = m.tensor((1, 5, 6), "int8", scale=0.1, zero_point=5)
    m.op("PADV2", [x, paddings, value], [y], ("PadV2Options", {}))
    check(m, [x], [y])


# ---------------------------------------------------------------- refusals


def refusal(builder: ModelBuilder, inputs: list[int], outputs: list[int]) -> str:
    with pytest.raises(TFLiteImportError) as info:
        import_tflite_bytes(builder.build(inputs, outputs), "crafted.tflite")
    return str(info.value)


def test_custom_operator_after_a_supported_one() -> None:
    m = ModelBuilder()
    x, y, z = (m.tensor((1, 4), "float32") for _ in range(3))
    m.op("RESHAPE", [x], [y])
    m.op("CUSTOM", [y], [z], custom="MyKernel")
    assert refusal(m, [x], [z]) == (
        "crafted.tflite: error: operator 1 (CUSTOM 'MyKernel'): custom operator "
        "'MyKernel' (an application-defined kernel) has no kernel: supply its C "
        "function with --custom-op MyKernel=path/to/kernel.h[:function] "
        "(usmp.CustomOp in Python)"
    )


def test_unsupported_fused_activation() -> None:
    m = ModelBuilder()
    a, b, y = (m.tensor((1, 4), "float32") for _ in range(3))
    m.op("ADD", [a, b], [y], ("AddOptions", dict(FusedActivationFunction=TANH)))
    assert refusal(m, [a, b], [y]).endswith(
        "operator 0 (ADD): fused activation TANH is not supported"
    )


def test_int8_pooling_must_keep_quantisation() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 4, 4, 1), "int8", scale=0.1, zero_point=0)
    y = m.tensor((1, 2, 2, 1), "int8", scale=0.2, zero_point=0)
    m.op(
        "AVERAGE_POOL_2D",
        [x],
        [y],
        (
            "Pool2DOptions",
            dict(Padding=VALID, StrideW=2, StrideH=2, FilterWidth=2, FilterHeight=2),
        ),
    )
    assert refusal(m, [x], [y]).endswith(
        "operator 0 (AVERAGE_POOL_2D): int8 pooling needs the same input and output "
        "quantisation"
    )


@pytest.mark.parametrize("opcode", ["CONCATENATION", "RELU6"])
def test_int8_ops_that_need_one_quantisation(opcode: str) -> None:
    """(MAXIMUM, MINIMUM and PAD copy raw values whatever the quantisations,
    as TFLite Micro: ``test_import_tflite_raw_quantization.py``.)"""
    m = ModelBuilder()
    x = m.tensor((1, 4), "int8", scale=0.1, zero_point=0)
    y = m.tensor((1, 4), "int8", scale=0.1, zero_point=3)
    inputs = [x]
    options = {
        "CONCATENATION": ("ConcatenationOptions", dict(Axis=1)),
    }.get(opcode)
    m.op(opcode, inputs, [y], options)
    message = refusal(m, [x], [y])
    assert (
        f"operator 0 ({opcode}): int8 {opcode} needs every input quantised like the "
        "output"
    ) in message
    assert "input 0 't0' has scale 0.1" in message and "zero point 3" in message


def test_concatenation_with_fused_activation() -> None:
    m = ModelBuilder()
    a, b, y = (m.tensor(s, "float32") for s in ((1, 2), (1, 3), (1, 5)))
    m.op(
        "CONCATENATION",
        [a, b],
        [y],
        ("ConcatenationOptions", dict(Axis=1, FusedActivationFunction=RELU)),
    )
    assert refusal(m, [a, b], [y]).endswith(
        "operator 0 (CONCATENATION): a fused activation on CONCATENATION is not "
        "supported (TFLite Micro refuses it too)"
    )
