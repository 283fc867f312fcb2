"""relay's integer requantization operators: fixed_point_multiply, quantize,
dequantize (registered through ``relay_ops.OPERATOR_OPS``).

Their arithmetic follows TFLite's reference kernels (see docs/relay-ops.md);
the verifiers check the element types and the parameter arrays/ranges.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import IntegerType, TensorType, f32, i8, i32, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import operand_def, traits_def

from usmp.dialects.relay_base import (
    UNARY_FORMAT,
    RelayOperator,
    fail,
    infer_shape,
    int_range,
    is_int,
    shape_of,
    tensor_of,
    tensor_type,
)
from usmp.dialects.relay_fusion import Fusion, OpPattern
from usmp.dialects.relay_props import (
    float_prop,
    i32s_prop,
    int_prop,
    relay_op_definition,
)
from usmp.dialects.relay_shapes import normalize_axis, per_axis_length

SHIFT_MIN, SHIFT_MAX = -31, 30
"""Shifts ``fixed_point_multiply`` accepts (TFLite's range; beyond it the
generated C would shift by the width of the type or more)."""
SHIFT_MAX_I64 = 7
"""The largest shift of an i64 ``fixed_point_multiply`` (TFLite's 64-bit
``MultiplyByQuantizedMultiplier`` asserts ``shift < 8``)."""


@relay_op_definition
class FixedPointMultiplyOp(RelayOperator):
    """Multiply i32 values by a Q31 fixed-point ``multiplier`` * 2^``shift``.

    Syntax::

        %r = relay.fixed_point_multiply %x {
               multiplier = array<i32: 1073741824, 1395864371>,
               shift = array<i32: -7, -8>, axis = 3 : i64}
               : tensor<1x4x4x2xi32> -> tensor<1x4x4x2xi32>

    ``multiplier`` and ``shift`` each have one value (per tensor) or one per
    index of dimension ``axis`` (default -1). Rounding as TFLite's
    ``MultiplyByQuantizedMultiplier``: on i32 its gemmlowp double rounding;
    on i64 (the accumulators of 16x8 convolutions) its 64-bit overload,
    ``(x * m16 + 2**(14 - shift)) >> (15 - shift)`` with the multiplier
    reduced to 16 bits, ``m16 = (m + 2**15) >> 16`` (``0x7FFF`` from
    ``0x7FFF0000`` on), and ``shift <= 7``. The result is i32 either way.
    """

    name = "relay.fixed_point_multiply"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "fixed_point_multiply"))

    data = operand_def(TensorType)
    multiplier = i32s_prop()
    shift = i32s_prop()
    axis = int_prop(default=-1)

    assembly_format = UNARY_FORMAT

    def __init__(
        self,
        data: SSAValue,
        multiplier: Sequence[int],
        shift: Sequence[int],
        axis: int | None = None,
    ):
        self._build([data], multiplier=multiplier, shift=shift, axis=axis)

    def infer_result_type(self) -> TensorType:
        name, axis, shift = self.name, self.axis, self.shift
        t = tensor_of(name, "operand", self.data)
        if t.element_type not in (i32, i64):
            fail(
                name,
                f"element type {t.element_type} is not supported, expected i32 or i64",
            )
        shift_max = SHIFT_MAX_I64 if t.element_type == i64 else SHIFT_MAX
        shape = shape_of(t)
        if shape:
            infer_shape(name, normalize_axis, axis, len(shape))
        for what, values in (("multiplier", self.multiplier), ("shift", shift)):
            if not values:
                fail(name, f"{what} is empty, expected 1 value or one per channel")
            infer_shape(name, per_axis_length, shape, axis, what, len(values))
        # TFLite's MultiplyByQuantizedMultiplier: x << max(shift, 0) in 32
        # bits, then a rounding right shift by max(-shift, 0) <= 31.
        bad = [s for s in shift if not SHIFT_MIN <= s <= shift_max]
        if bad:
            fail(
                name,
                f"shift {bad[0]} is out of range, expected {SHIFT_MIN}..{shift_max}",
            )
        return tensor_type(i32, shape)


def _check_quant_params(
    name: str, scale: float, zero_point: int, int_type: Attribute, divides: bool
) -> None:
    """``scale`` is any float where it multiplies (dequantize: IEEE products,
    as TFLite Micro's), and neither 0 nor NaN where it divides (quantize:
    every quotient would be infinite or NaN, with no integer to round to)."""
    if divides and (scale == 0 or math.isnan(scale)):
        fail(name, f"scale {scale} divides the input: it must be a number other than 0")
    assert isinstance(int_type, IntegerType)
    lo, hi = int_range(int_type)
    if not lo <= zero_point <= hi:
        fail(
            name,
            f"zero_point {zero_point} is out of range for {int_type} "
            f"(expected {lo}..{hi})",
        )


class AffineQuantOp(RelayOperator):
    """Base of quantize/dequantize: ``real = (q - zero_point) * scale``."""

    data = operand_def(TensorType)
    scale = float_prop()
    zero_point = int_prop()

    assembly_format = UNARY_FORMAT


@relay_op_definition
class QuantizeOp(AffineQuantOp):
    """f32 -> integer: ``clamp(round_half_away(x / scale) + zero_point)``.

    Syntax::

        %q = relay.quantize %x {scale = 0.5 : f64, zero_point = -1 : i64}
               : tensor<1x4xf32> -> tensor<1x4xi8>

    The result element type (i8 by default in the builder) is i8, i16, i32 or ui8.
    """

    name = "relay.quantize"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "qnn.quantize"))

    def __init__(
        self,
        data: SSAValue,
        scale: float,
        zero_point: int,
        element_type: Attribute = i8,
    ):
        t = tensor_of(self.name, "operand", data)
        result_type = tensor_type(element_type, t.get_shape())
        self._build([data], result_type, scale=scale, zero_point=zero_point)

    def verify_(self) -> None:
        src = tensor_of(self.name, "operand", self.data)
        dst = tensor_of(self.name, "result", self.result.type)
        if src.element_type != f32:
            fail(self.name, f"operand element type {src.element_type} is not f32")
        if not is_int(dst.element_type):
            fail(
                self.name,
                f"result element type {dst.element_type} is not an integer type "
                "(expected i8, i16, i32, i64 or ui8)",
            )
        expected = tensor_type(dst.element_type, src.get_shape())
        if dst != expected:
            fail(self.name, f"result type {dst} is wrong, expected {expected}")
        _check_quant_params(
            self.name, self.scale, self.zero_point, dst.element_type, divides=True
        )


@relay_op_definition
class DequantizeOp(AffineQuantOp):
    """integer -> f32: ``(x - zero_point) * scale``.

    Syntax::

        %x = relay.dequantize %q {scale = 0.5 : f64, zero_point = -1 : i64}
               : tensor<1x4xi8> -> tensor<1x4xf32>
    """

    name = "relay.dequantize"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "qnn.dequantize"))

    def __init__(self, data: SSAValue, scale: float, zero_point: int):
        self._build([data], scale=scale, zero_point=zero_point)

    def infer_result_type(self) -> TensorType:
        t = tensor_of(self.name, "operand", self.data)
        if not is_int(t.element_type):
            fail(
                self.name,
                f"operand element type {t.element_type} is not an integer type "
                "(expected i8, i16, i32, i64 or ui8)",
            )
        _check_quant_params(
            self.name, self.scale, self.zero_point, t.element_type, divides=False
        )
        return tensor_type(f32, t.get_shape())
