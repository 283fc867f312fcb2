"""``usmp.lowering.constant_args``: ``is_uniform`` and ``stored_elements``
read a ``dense<...>`` constant's bytes with numpy and agree with the Python
values xDSL decodes (``get_values``) on every element type, splats, NaN and
signed zeros included."""

from __future__ import annotations

import math
import struct

import pytest
from xdsl.dialects.builtin import (
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IntegerType,
    Signedness,
    TensorType,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute

from usmp.lowering.constant_args import is_uniform, stored_elements

UI8 = IntegerType(8, Signedness.UNSIGNED)


def _dense(
    element: Attribute, values: list[int] | list[float], shape: int
) -> DenseIntOrFPElementsAttr:
    fmt = element.format  # type: ignore[attr-defined]
    data = struct.pack(f"<{len(values)}{fmt[1:]}", *values)
    return DenseIntOrFPElementsAttr(TensorType(element, [shape]), BytesAttr(data))


def _reference(attr: DenseIntOrFPElementsAttr) -> bool:
    values = attr.get_values()
    return all(e == values[0] for e in values)


CASES = [
    (i8, [3, 3, 3, 3]),
    (i8, [3, 3, -3, 3]),
    (i8, [-128]),
    (UI8, [255, 255]),
    (UI8, [255, 254]),
    (i1, [1, 1, 1]),
    (i16, [-2, -2, -2]),
    (i32, [7] * 100),
    (i32, [7] * 99 + [8]),
    (i64, [2**40, 2**40]),
    (i64, [2**40, 2**40 + 1]),
    (f16, [0.5, 0.5]),
    (f32, [1.5, 1.5, 1.5]),
    (f32, [1.5, 1.5000001]),
    (f32, [0.0, -0.0]),  # equal numbers, different bytes: uniform
    (f32, [math.nan, math.nan]),  # same bytes, NaN equals nothing: not uniform
    (f32, [math.nan]),
    (f64, [math.inf, math.inf]),
    (f64, [1e300, -1e300]),
    (i8, []),
]


@pytest.mark.parametrize(("element", "values"), CASES, ids=lambda v: str(v))
def test_is_uniform_agrees_with_the_python_values(
    element: Attribute, values: list[int] | list[float]
) -> None:
    attr = _dense(element, values, len(values))
    assert is_uniform(attr) == _reference(attr)
    stored = stored_elements(attr)
    assert stored is not None
    got = [x.item() for x in stored]
    want = list(attr.get_values())
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert type(g) is type(w)
        assert g == w or (math.isnan(g) and math.isnan(w))


def test_a_splat_written_once_is_uniform() -> None:
    assert is_uniform(_dense(i8, [5], 64))
    assert is_uniform(_dense(f32, [2.0], 8))


def test_other_element_types_use_the_python_values() -> None:
    bf16 = BFloat16Type()
    attr = DenseIntOrFPElementsAttr(TensorType(bf16, [2]), BytesAttr(b"\x80\x3f" * 2))
    assert stored_elements(attr) is None
    assert is_uniform(attr) == _reference(attr)


def test_not_a_dense_attribute() -> None:
    assert not is_uniform(i8)
    assert not is_uniform(None)
