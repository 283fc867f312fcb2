"""Operators TFLite Micro runs on raw integer values whatever the inputs' and
the output's quantisations (it neither rescales nor checks them): MAXIMUM,
MINIMUM, PAD/PADV2 (int8 padded with the output's zero point), int16
CONCATENATION. They are accepted and give TFLite Micro's values bit for bit
(oracle, every tensor, and C). What TFLite Micro refuses stays refused with
its reason: int8 CONCATENATION of differently quantised tensors
(``concatenation.cc`` Prepare) and an int8 PADV2 constant quantised unlike
the output (``pad_common.cc``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.test_import_tflite_layout import check, refusal
from tests.test_import_tflite_synthetic import ModelBuilder

Q_A: dict[str, Any] = dict(scale=0.5, zero_point=0)
Q_B: dict[str, Any] = dict(scale=0.25, zero_point=5)
Q_OUT: dict[str, Any] = dict(scale=0.125, zero_point=-3)


@pytest.mark.parametrize("dtype", ["int8", "int16"])
@pytest.mark.parametrize("opcode", ["MAXIMUM", "MINIMUM"])
def test_extremum_of_differently_quantised_inputs(opcode: str, dtype: str) -> None:
    zero = {} if dtype == "int8" else dict(zero_point=0)
    m = ModelBuilder()
    a = m.tensor((2, 1, 5), dtype, **{**Q_A, **zero})
    b = m.tensor((3, 1), dtype, **{**Q_B, **zero})
    y = m.tensor((2, 3, 5), dtype, **{**Q_OUT, **zero})
    m.op(opcode, [a, b], [y], ("MaximumMinimumOptions", {}))
    check((m, [a, b], [y]))


@pytest.mark.parametrize("opcode", ["PAD", "PADV2"])
def test_int8_pad_of_a_differently_quantised_input(opcode: str) -> None:
    m = ModelBuilder()
    x = m.tensor((1, 3, 2, 4), "int8", **Q_A)
    paddings = m.tensor((4, 2), "int32", np.array([[0, 0], [1, 2], [2, 0], [0, 1]]))
    y = m.tensor((1, 6, 4, 5), "int8", **Q_OUT)
    inputs = [x, paddings]
    if opcode == "PADV2":
        inputs.append(m.tensor((), "int8", np.array(17), **Q_OUT))
    m.op(opcode, inputs, [y], (f"{opcode.title().replace('v', 'V')}Options", {}))
    check((m, [x], [y]))


def test_int16_concatenation_of_differently_quantised_inputs() -> None:
    m = ModelBuilder()
    a = m.tensor((2, 3), "int16", scale=0.001, zero_point=0)
    b = m.tensor((2, 4), "int16", scale=0.003, zero_point=0)
    y = m.tensor((2, 7), "int16", scale=0.002, zero_point=0)
    m.op("CONCATENATION", [a, b], [y], ("ConcatenationOptions", dict(Axis=1)))
    check((m, [a, b], [y]))


def test_what_tflite_micro_refuses() -> None:
    m = ModelBuilder()
    a = m.tensor((2, 3), "int8", **Q_A)
    y = m.tensor((2, 3), "int8", **Q_OUT)
    m.op("CONCATENATION", [a], [y], ("ConcatenationOptions", dict(Axis=1)))
    assert refusal((m, [a], [y])).endswith(
        "operator 0 (CONCATENATION): int8 CONCATENATION needs every input "
        "quantised like the output (TFLite Micro's Prepare checks the scale and "
        "zero point and copies the raw values): input 0 't0' has scale 0.5 and "
        "zero point 0, the output scale 0.125 and zero point -3"
    )
    m = ModelBuilder()
    x = m.tensor((2, 3), "int8", **Q_OUT)
    paddings = m.tensor((2, 2), "int32", np.array([[0, 0], [1, 1]]))
    value = m.tensor((), "int8", np.array(1), **Q_A)
    y = m.tensor((2, 5), "int8", **Q_OUT)
    m.op("PADV2", [x, paddings, value], [y], ("PadV2Options", {}))
    assert refusal((m, [x], [y])).endswith(
        "operator 0 (PADV2): constant_values 't2' has scale 0.5 and zero point 0; "
        "TFLite Micro requires the output's scale 0.125 and zero point -3"
    )
