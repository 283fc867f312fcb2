"""int8 DIV as TFLite Micro's reference kernel (``DivElementwise``: a
fixed-point reciprocal per element), bit for bit: every pair of int8 values
(zero divisors included, where TFLite Micro only asserts in debug builds)
through the oracle and our C under ASan/UBSan, several quantisations and
fused activations; broadcast shapes on random inputs; the refusals."""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_import_tflite_layout import Built, check, refusal
from tests.test_import_tflite_synthetic import RELU, RELU6, ModelBuilder
from usmp.frontend.tflite_import import import_tflite_bytes
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import run_module
from usmp.testing.tflm_reference import run_tflm

PASSES = "fuse-ops,lower-ops,aot-lower-main,usmp"
Quant = tuple[float, int]


def div_model(
    shapes: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]],
    quants: tuple[Quant, Quant, Quant],
    activation: int = 0,
) -> Built:
    m = ModelBuilder()
    x1, x2, y = (
        m.tensor(shape, "int8", scale=s, zero_point=zp)
        for shape, (s, zp) in zip(shapes, quants, strict=True)
    )
    m.op("DIV", [x1, x2], [y], ("DivOptions", dict(FusedActivationFunction=activation)))
    return m, [x1, x2], [y]


QUANTS = [
    ((0.05, 0), (0.05, 0), (0.05, 0)),
    ((0.02, 3), (0.1, -7), (0.03, 5)),
    ((0.5, -128), (0.01, 127), (0.2, -128)),
    ((0.003, 10), (0.2, 0), (0.001, -3)),
]


@pytest.mark.parametrize(
    ("quants", "activation"),
    [(QUANTS[0], 0), (QUANTS[1], RELU), (QUANTS[2], 0), (QUANTS[3], RELU6)],
)
def test_every_int8_pair_equals_tflite_micro(
    quants: tuple[Quant, Quant, Quant], activation: int
) -> None:
    n = 256 * 256
    m, inputs, outputs = div_model(((n,), (n,), (n,)), quants, activation)
    data = m.build(inputs, outputs)
    values = np.arange(-128, 128)
    a = np.repeat(values, 256).astype(np.int8)
    b = np.tile(values, 256).astype(np.int8)
    (want,) = run_tflm(data, [a, b], outputs)
    module = import_tflite_bytes(data)
    (oracle,) = evaluate(module, [a, b])
    np.testing.assert_array_equal(oracle, want)
    (got,) = run_module(module, [a, b], passes=PASSES, sanitize=True)
    np.testing.assert_array_equal(got, want)
    assert "relay.quantized_divide" in str(module)


@pytest.mark.parametrize(
    "shapes",
    [
        ((1, 4, 8, 10), (10,), (1, 4, 8, 10)),
        ((1, 4, 1, 10), (1, 1, 8, 1), (1, 4, 8, 10)),
        ((3,), (2, 1), (2, 3)),
    ],
)
def test_broadcast_div_equals_tflite_micro(shapes) -> None:
    check(div_model(shapes, QUANTS[1]))


def test_scales_giving_a_negative_exponent_are_refused() -> None:
    built = div_model(((4,), (4,), (4,)), ((100.0, 0), (1e-4, 0), (1e-4, 0)))
    assert "negative rounding exponent" in refusal(built)


def test_mixed_types_are_refused() -> None:
    m = ModelBuilder()
    x1 = m.tensor((4,), "int8", scale=0.1, zero_point=0)
    x2 = m.tensor((4,), "float32")
    y = m.tensor((4,), "int8", scale=0.1, zero_point=0)
    m.op("DIV", [x1, x2], [y])
    assert refusal((m, [x1, x2], [y])).endswith(
        "operator 0 (DIV): unsupported types INT8, FLOAT32, INT8 (all FLOAT32 or "
        "all INT8, as TFLite Micro)"
    )
