"""The quantisation the ``.tflite`` reader returns (``_read_quantization``):
float32 scales as Python floats with every NaN the one ``math.nan`` (so
equal quantisations compare equal), zero points as Python ints (one stored
value given to every channel), and a zero point out of its type's range
refused with the tensor named."""

from __future__ import annotations

import math

import numpy as np
import pytest

from usmp.frontend.tflite_reader import read_model
from usmp.frontend.tflite_verify import TFLiteImportError
from usmp.testing.tflite_builder import ModelBuilder


def _model(scale: list[float], zero_point: int | list[int], dtype: str = "int8"):
    m = ModelBuilder()
    x = m.tensor((1, 3), dtype, scale=scale, zero_point=zero_point, axis=1)
    y = m.tensor((1, 3), dtype, scale=scale, zero_point=zero_point, axis=1)
    m.op("RESHAPE", [x], [y], ("ReshapeOptions", dict(NewShape=[1, 3])))
    return read_model(m.build([x], [y]))


def test_scales_and_zero_points_are_python_values() -> None:
    stored = [0.1, math.nan, float("inf")]
    q = _model(stored, [-3, 0, 127]).tensors[0].quantization
    assert q is not None
    assert q.scales[0] == float(np.float32(0.1)) and type(q.scales[0]) is float
    assert q.scales[1] is math.nan and q.scales[2] == math.inf
    assert q.zero_points == (-3, 0, 127)
    assert all(type(z) is int for z in q.zero_points)
    assert q.axis == 1
    again = _model(stored, [-3, 0, 127]).tensors[0].quantization
    assert again == q  # the NaNs are the same object


def test_one_zero_point_for_every_channel() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 3), "int8", scale=[0.5, 0.25, 0.125], zero_point=0, axis=1)
    m.tensors[x]["zps"] = np.array([7], np.int64)  # TFLite Micro's short form
    y = m.tensor((1, 3), "int8", scale=0.5)
    m.op("RESHAPE", [x], [y], ("ReshapeOptions", dict(NewShape=[1, 3])))
    q = read_model(m.build([x], [y])).tensors[0].quantization
    assert q is not None and q.zero_points == (7, 7, 7)


@pytest.mark.parametrize("zero_point", [-129, 128, [0, 200, 0]])
def test_zero_point_out_of_range(zero_point: int | list[int]) -> None:
    with pytest.raises(
        TFLiteImportError,
        match=r"tensor 0 .t0.: zero points .* out of range for INT8 \(expected -128\.\.127\)",
    ):
        _model([0.5, 0.5, 0.5], zero_point)
