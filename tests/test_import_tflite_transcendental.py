"""LOGISTIC and TANH (int8, int16, float) on single-operator models written
with the flatbuffer builder (``test_import_tflite_synthetic``), on inputs
holding every int8 / int16 value: the oracle and our C (fuse-ops, lower-ops,
aot-lower-main, usmp, gcc) against TFLite Micro, bit for bit for integers;
plus the refusals."""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_import_tflite_layout import Built, refusal
from tests.test_import_tflite_synthetic import ModelBuilder
from usmp.frontend.tflite_import import import_tflite_bytes
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import run_module
from usmp.testing.tflm_reference import difference, run_tflm

PASSES = "fuse-ops,lower-ops,aot-lower-main,usmp"


def every_value(dtype: str) -> np.ndarray:
    """Every value of an integer type, shuffled (seeded), as a 2-d array; a
    normal sample for float32."""
    rng = np.random.default_rng(0)
    if dtype == "float32":
        return (4.0 * rng.standard_normal((16, 32))).astype(np.float32)
    info = np.iinfo(dtype)
    values = rng.permutation(np.arange(info.min, info.max + 1)).astype(dtype)
    return values.reshape(-1, 128)


def matches_tflite_micro(built: Built, x: np.ndarray) -> str:
    """Oracle and C == TFLite Micro on ``x``; the relay module's text."""
    m, inputs, outputs = built
    data = m.build(inputs, outputs)
    module = import_tflite_bytes(data)
    (want,) = run_tflm(data, [x], outputs)
    (oracle,) = evaluate(module, [x])
    assert difference(oracle, want) is None, f"oracle: {difference(oracle, want)}"
    (got,) = run_module(module, [x], passes=PASSES)
    assert difference(got, want) is None, f"C: {difference(got, want)}"
    return str(module)


def unary(
    opcode: str,
    dtype: str,
    shape: tuple[int, ...],
    in_q: tuple[float, int] | None,
    out_q: tuple[float, int] | None,
) -> Built:
    m = ModelBuilder()
    qx = {} if in_q is None else dict(scale=in_q[0], zero_point=in_q[1])
    qy = {} if out_q is None else dict(scale=out_q[0], zero_point=out_q[1])
    x = m.tensor(shape, dtype, **qx)  # pyright: ignore[reportArgumentType]
    y = m.tensor(shape, dtype, **qy)  # pyright: ignore[reportArgumentType]
    m.op(opcode, [x], [y])
    return m, [x], [y]


OUT_Q8 = {"LOGISTIC": (1 / 256, -128), "TANH": (1 / 128, 0)}


@pytest.mark.parametrize(
    "in_q", [(0.05, -3), (0.1, 20), (0.002, -128), (1.0, 0), (0.0625, 5)]
)
@pytest.mark.parametrize("opcode", ["LOGISTIC", "TANH"])
def test_int8_matches_tflite_micro(opcode: str, in_q: tuple[float, int]) -> None:
    x = every_value("int8")
    text = matches_tflite_micro(unary(opcode, "int8", x.shape, in_q, OUT_Q8[opcode]), x)
    assert "relay.table_lookup" in text


# 2**-12: the table's scale (multiplier 0); 2**-11: multiplier 0 with shift 1
# for TANH, a multiplier for LOGISTIC; the others need a multiplier
@pytest.mark.parametrize("scale", [2.0**-12, 2.0**-11, 2.0**-15, 1 / 3000, 0.001])
@pytest.mark.parametrize("opcode", ["LOGISTIC", "TANH"])
def test_int16_matches_tflite_micro(opcode: str, scale: float) -> None:
    x = every_value("int16")
    built = unary(opcode, "int16", x.shape, (scale, 0), (2.0**-15, 0))
    text = matches_tflite_micro(built, x)
    assert "relay.quantized_" in text


@pytest.mark.parametrize("opcode", ["LOGISTIC", "TANH"])
def test_float_matches_tflite_micro(opcode: str) -> None:
    x = every_value("float32")
    matches_tflite_micro(unary(opcode, "float32", x.shape, None, None), x)


def test_int8_refuses_another_output_quantisation() -> None:
    built = unary("LOGISTIC", "int8", (1, 4), (0.05, 0), (1 / 128, 0))
    assert refusal(built).endswith(
        "operator 0 (LOGISTIC): output quantisation (scale 0.0078125, zero point 0)"
        " is not TFLite's for LOGISTIC (scale 0.00390625, zero point -128), which "
        "TFLite Micro's kernel assumes"
    )


def test_int16_refuses_a_zero_point_and_another_output_scale() -> None:
    built = unary("TANH", "int16", (1, 4), (2.0**-12, 3), (2.0**-15, 0))
    assert refusal(built).endswith(
        "operator 0 (TANH): int16 TANH needs zero points 0 (input 3, output 0), "
        "as TFLite Micro's kernel"
    )
    built = unary("TANH", "int16", (1, 4), (2.0**-12, 0), (2.0**-14, 0))
    assert refusal(built).endswith(
        "operator 0 (TANH): int16 TANH needs the output scale 2**-15 (got "
        "6.103515625e-05), as TFLite Micro's kernel"
    )


def test_mixed_types_are_refused() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 4), "int8", scale=0.05, zero_point=0)
    y = m.tensor((1, 4), "int16", scale=2.0**-15, zero_point=0)
    m.op("LOGISTIC", [x], [y])
    assert refusal((m, [x], [y])).endswith(
        "operator 0 (LOGISTIC): unsupported types INT8, INT16 (FLOAT32, INT8 or "
        "INT16, the same for input and output, as TFLite Micro's kernel)"
    )


def test_int8_softmax_of_a_flat_long_row_has_no_undefined_behaviour() -> None:
    """1,000 classes of nearly equal logits (input scale 0.01): the sum of
    the exponentials leaves the final RoundingDivideByPOT an exponent of 31,
    where ``(1 << 31) - 1`` overflowed int32 in the C (undefined behaviour,
    caught by UBSan; MobileNetV2's classifier hit it). Under ASan/UBSan, bit
    for bit with TFLite Micro."""
    m = ModelBuilder()
    x = m.tensor((1, 1000), "int8", scale=0.01, zero_point=0)
    y = m.tensor((1, 1000), "int8", scale=1 / 256, zero_point=-128)
    m.op("SOFTMAX", [x], [y], ("SoftmaxOptions", dict(Beta=1.0)))
    data = m.build([x], [y])
    v = np.random.default_rng(0).integers(-128, 128, (1, 1000)).astype(np.int8)
    (got,) = run_module(import_tflite_bytes(data), [v], passes=PASSES, sanitize=True)
    (want,) = run_tflm(data, [v], [y])
    assert difference(got, want) is None


def softmax16(shape: tuple[int, ...], scale: float, beta: float) -> Built:
    m = ModelBuilder()
    x = m.tensor(shape, "int16", scale=scale, zero_point=0)
    y = m.tensor(shape, "int16", scale=1 / 32768, zero_point=0)
    m.op("SOFTMAX", [x], [y], ("SoftmaxOptions", dict(Beta=beta)))
    return m, [x], [y]


# scale * beta from the table's resolution (10 / 65535) to beyond it; rows
# of 1, 3, 10 and 1,000 elements (long rows: the sum needs i64 rounding)
@pytest.mark.parametrize(
    ("shape", "scale", "beta"),
    [
        ((512, 128), 1 / 4096, 1.0),
        ((64, 1024), 0.001, 1.0),
        ((2, 5, 3), 0.0003, 2.0),
        ((8, 10), 0.01, 0.5),
        ((4, 1), 0.001, 1.0),
        ((65, 1000), 1e-5, 1.0),
    ],
)
def test_int16_softmax_matches_tflite_micro(
    shape: tuple[int, ...], scale: float, beta: float
) -> None:
    size = int(np.prod(shape))
    values = every_value("int16").reshape(-1)
    x = np.resize(values, size).reshape(shape)
    text = matches_tflite_micro(softmax16(shape, scale, beta), x)
    assert "relay.quantized_softmax_i16" in text


def test_int16_softmax_refuses_another_output_quantisation() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 4), "int16", scale=0.001, zero_point=0)
    y = m.tensor((1, 4), "int16", scale=1 / 16384, zero_point=0)
    m.op("SOFTMAX", [x], [y], ("SoftmaxOptions", dict(Beta=1.0)))
    assert refusal((m, [x], [y])).endswith(
        "operator 0 (SOFTMAX): int16 softmax output must have scale 1/32768 and "
        "zero point 0, got scale 6.103515625e-05 and zero point 0"
    )


@pytest.mark.parametrize("opcode", ["EXP", "LOG", "SQRT", "RSQRT"])
def test_float_functions_match_tflite_micro(opcode: str) -> None:
    x = every_value("float32")
    if opcode != "EXP":  # LOG, SQRT, RSQRT of positive values
        x = np.abs(x) + np.float32(1e-3)
    text = matches_tflite_micro(unary(opcode, "float32", x.shape, None, None), x)
    assert f"relay.{opcode.lower()}" in text


# equal scales; output finer and coarser; zero point at both ends
@pytest.mark.parametrize(
    ("in_q", "out_q"),
    [
        ((0.05, 0), (0.05, 0)),
        ((0.1, -128), (0.02, -100)),
        ((0.003, -128), (0.5, 3)),
        ((1.0, -128), (0.01, -128)),
        ((0.02, 10), (0.1, 0)),
    ],
)
def test_int8_rsqrt_matches_tflite_micro(
    in_q: tuple[float, int], out_q: tuple[float, int]
) -> None:
    # every value from the zero point up (TFLite Micro fails on smaller ones)
    x = np.arange(in_q[1], 128).astype(np.int8).reshape(1, -1)
    text = matches_tflite_micro(unary("RSQRT", "int8", x.shape, in_q, out_q), x)
    assert "relay.table_lookup" in text


@pytest.mark.parametrize("opcode", ["EXP", "LOG", "SQRT"])
def test_int8_exp_log_sqrt_are_refused(opcode: str) -> None:
    assert refusal(unary(opcode, "int8", (1, 4), (0.05, 0), (0.05, 0))).endswith(
        f"operator 0 ({opcode}): unsupported types INT8, INT8 (FLOAT32 only, as "
        f"TFLite Micro's {opcode})"
    )


def l2_model(shape: tuple[int, ...], dtype: str, in_q: tuple[float, int]) -> Built:
    m = ModelBuilder()
    quant = dtype == "int8"
    x = m.tensor(
        shape, dtype, **(dict(scale=in_q[0], zero_point=in_q[1]) if quant else {})
    )  # pyright: ignore[reportArgumentType]
    y = m.tensor(shape, dtype, **(dict(scale=1 / 128, zero_point=0) if quant else {}))  # pyright: ignore[reportArgumentType]
    m.op("L2_NORMALIZATION", [x], [y])
    return m, [x], [y]


# rows of 1 to 300 elements; zero points at both ends and inside
@pytest.mark.parametrize(
    ("shape", "in_q"),
    [
        ((4, 64), (0.05, 0)),
        ((3, 5, 16), (0.1, -7)),
        ((2, 1), (0.02, 3)),
        ((8, 300), (0.01, -128)),
        ((1, 256), (0.1, 127)),
    ],
)
@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_l2_normalization_matches_tflite_micro(
    dtype: str, shape: tuple[int, ...], in_q: tuple[float, int]
) -> None:
    size = int(np.prod(shape))
    values = every_value(dtype).reshape(-1)
    x = np.resize(values, size).reshape(shape)
    text = matches_tflite_micro(l2_model(shape, dtype, in_q), x)
    want = "relay.quantized_l2_normalize" if dtype == "int8" else "relay.sqrt"
    assert want in text


def test_int8_l2_normalization_of_a_constant_row() -> None:
    """A row equal to the zero point: sum 0, TFLite's (INT32_MAX, 0) case."""
    x = np.full((2, 8), 5, np.int8)
    x[1, 3] = 6  # sum 1: the same case
    matches_tflite_micro(l2_model(x.shape, "int8", (0.1, 5)), x)


@pytest.mark.parametrize(("in_scale", "out_scale"), [(1 / 4096, 1 / 256), (0.05, 1e-4)])
def test_int16_rsqrt_matches_tflite_micro(in_scale: float, out_scale: float) -> None:
    x = np.arange(0, 32768).astype(np.int16).reshape(256, 128)  # 0 and up
    built = unary("RSQRT", "int16", x.shape, (in_scale, 0), (out_scale, 0))
    text = matches_tflite_micro(built, x)
    assert "relay.quantized_rsqrt" in text
