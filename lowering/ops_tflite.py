"""TFLite-specific operators (``dialects/relay_tflite_ops.py``).

``relay.quantized_softmax``: TFLite Micro's reference int8 softmax, bit-exact
with ``usmp.oracle.tflite_kernels``. Like the C++ it makes three passes over
a row and keeps only scalars: the row max; the sum of exponentials (each
``exp`` is gemmlowp's ``exp_on_negative_values`` of the Q5.26 scaled
difference, rescaled to Q12.19); the reciprocal of the sum
(``GetReciprocal``: a leading-zero count and
``one_over_one_plus_x_for_x_in_0_1``); then, per element, the exponential
again (recomputed, as TFLite does, instead of stored) times the reciprocal,
shifted to the 1/256 output scale, minus 128, saturated. Entries whose
difference to the max is below ``diff_min`` contribute nothing and give -128.
No scratch buffer. ``ops_softmax.LowerSoftmax`` lowers it.

``relay.quantized_softmax_i16``: TFLite Micro's int16 softmax
(``reference_ops::SoftmaxInt16``), bit-exact with
``usmp.oracle.tflite_activations.softmax_int16``: per row the max, the sum of
the exponentials (each from TFLite's 513-entry interpolated exp table, two
loads) and the reciprocal (leading zeros, then the 1/(1+x) table); per
element the exponential again (TFLite caches it in the output buffer; here
it is recomputed, so the output is written once) times the reciprocal,
rounded by the row's shift in i64, saturated to [0, 32767]. The two tables
are hoisted i16 constants (1,026 B each), no scratch.

``relay.quantized_l2_normalize``: TFLite Micro's int8 L2 normalisation
(``reference_integer_ops::L2Normalization``), bit-exact with
``usmp.oracle.tflite_activations.l2_normalize_int8``: per row the sum of
squares and its ``GetInvSqrtQuantizedMultiplierExp`` (computed once per row
in ``arith``, branch-free) as scalars; per element one
``MultiplyByQuantizedMultiplier`` by them. No scratch.

``relay.quantized_rsqrt``: TFLite Micro's int16 RSQRT, the same inverse
square root per element (TFLite Micro's cost), then two requantisations.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, i16, i32, i64
from xdsl.ir import Operation, SSAValue

from usmp.dialects.relay_tflite_ops import (
    QuantizedL2NormalizeOp,
    QuantizedRsqrtOp,
    QuantizedSoftmaxInt16Op,
    QuantizedSoftmaxOp,
)
from usmp.lowering import fixed_point as fx
from usmp.lowering.kernel import FusedKernel, element_type, shape_of
from usmp.lowering.loops import Ix, KernelBuilder
from usmp.lowering.ops_quant import _int_table  # pyright: ignore[reportPrivateUsage]
from usmp.lowering.tflite_luts import (
    softmax_exp_lut,
    softmax_one_over_one_plus_x_lut,
)

_SCALED_DIFF_INTEGER_BITS = 5
_ACCUMULATION_INTEGER_BITS = 12


def _exp(
    k: FusedKernel, op: QuantizedSoftmaxOp, index: Sequence[Ix], peak: SSAValue
) -> tuple[SSAValue, SSAValue]:
    """(exp of the scaled difference to the row max, diff >= diff_min)."""
    b = k.b
    diff = fx.sub(b, b.convert(k.at(op.data, index), i32), peak)
    valid = fx.cmp(b, "sge", diff, op.diff_min)
    shifted = b.shl(diff, op.input_left_shift)
    rescaled = fx.saturating_rounding_doubling_high_mul(b, shifted, op.input_multiplier)
    return fx.exp_on_negative_values(b, rescaled, _SCALED_DIFF_INTEGER_BITS), valid


def quantized_softmax_row(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> tuple[SSAValue, ...]:
    """Row statistics: (max as i32, reciprocal of the sum, output exponent)."""
    assert isinstance(op, QuantizedSoftmaxOp)
    b = k.b
    axis = len(index) - 1
    extent = shape_of(op.data)[axis]

    def row(tap: Ix) -> list[Ix]:
        return [*index[:axis], tap]

    lowest = b.const(-128, element_type(op.data))
    (peak8,) = b.reduce(
        [(0, extent)], [lowest], lambda t, a: [b.max(a[0], k.at(op.data, row(t[0])))]
    )
    peak = b.convert(peak8, i32)

    def accumulate(taps: list[Ix], accs: Sequence[SSAValue]) -> list[SSAValue]:
        exp, valid = _exp(k, op, row(taps[0]), peak)
        term = fx.rescale(b, exp, 0, _ACCUMULATION_INTEGER_BITS)
        return [fx.add(b, accs[0], fx.select(b, valid, term, 0))]

    (total,) = b.reduce([(0, extent)], [b.const(0, i32)], accumulate)
    headroom_plus_one = fx.count_leading_zeros(b, total)
    shifted = b.shl(total, headroom_plus_one)
    reciprocal = fx.one_over_one_plus_x_for_x_in_0_1(
        b, fx.sub(b, shifted, fx.INT32_MIN)
    )
    # exponent = num_bits_over_unit + 31 - output_bits
    exponent = fx.sub(
        b, _ACCUMULATION_INTEGER_BITS + 31 - op.output_bits, headroom_plus_one
    )
    return peak, reciprocal, exponent


def quantized_softmax(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, QuantizedSoftmaxOp)
    b = k.b
    peak, reciprocal, exponent = k.row(op, index, len(index) - 1, quantized_softmax_row)
    exp, valid = _exp(k, op, index, peak)
    product = fx.saturating_rounding_doubling_high_mul(b, reciprocal, exp, False)
    unsaturated = fx.rounding_divide_by_pot(b, product, exponent)
    low = -(1 << (op.output_bits - 1))
    shifted = fx.add(b, unsaturated, low)
    clamped = b.min(b.max(shifted, b.const(low, i32)), b.const(-low - 1, i32))
    return b.convert(fx.select(b, valid, clamped, low), element_type(op.result))


# -- int16 softmax -------------------------------------------------------------


def _int16_table(k: FusedKernel, name: str, values: npt.NDArray[np.int16]) -> SSAValue:
    return k.table(name, _int_table("<i2", i16, values.tolist()))


def _lut_lookup(b: KernelBuilder, table: SSAValue, value: SSAValue) -> SSAValue:
    """``lut_lookup_with_interpolation`` of an i32 ``value`` in [-32768,
    32767]: ``base + (slope * (value & 127) + 64) >> 7``. The slope of the
    two tables is well inside int16 (``tflite_luts``), so no wrap."""
    position = b.emit(
        arith.IndexCastOp(fx.add(b, b.shrsi(value, b.const(7, i32)), 256), IndexType())
    )
    base = b.convert(b.load(table, [position]), i32)
    following = b.convert(b.load(table, [b.iadd(position, 1)]), i32)
    offset = b.emit(arith.AndIOp(value, b.const(0x7F, i32)))
    delta = b.mul(fx.sub(b, following, base), offset)
    return fx.add(b, base, b.shrsi(fx.add(b, delta, 64), b.const(7, i32)))


def _clamp16(b: KernelBuilder, x: SSAValue) -> SSAValue:
    return b.min(b.max(x, b.const(-32768, i32)), b.const(32767, i32))


def _exp16(
    k: FusedKernel, op: QuantizedSoftmaxInt16Op, index: Sequence[Ix], peak: SSAValue
) -> SSAValue:
    """``SoftMaxCalculateExp``: the exp table at the rescaled difference."""
    b = k.b
    diff = fx.sub(b, b.convert(k.at(op.data, index), i32), peak)
    scaled = fx.multiply_by_quantized_multiplier(
        b, diff, op.input_multiplier, op.input_left_shift, False
    )
    table = _int16_table(k, "softmax_exp_lut", softmax_exp_lut())
    return _lut_lookup(b, table, _clamp16(b, fx.add(b, scaled, 32767)))


def quantized_softmax_i16_row(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> tuple[SSAValue, ...]:
    """Row statistics: (max as i32, reciprocal of the sum, right shift)."""
    assert isinstance(op, QuantizedSoftmaxInt16Op)
    b = k.b
    axis = len(index) - 1
    extent = shape_of(op.data)[axis]

    def row(tap: Ix) -> list[Ix]:
        return [*index[:axis], tap]

    (peak16,) = b.reduce(
        [(0, extent)],
        [b.const(-32768, i16)],
        lambda t, a: [b.max(a[0], k.at(op.data, row(t[0])))],
    )
    peak = b.convert(peak16, i32)
    (total,) = b.reduce(
        [(0, extent)],
        [b.const(0, i32)],
        lambda t, a: [fx.add(b, a[0], _exp16(k, op, row(t[0]), peak))],
    )
    headroom_plus_one = fx.count_leading_zeros(b, total)
    # ((int64(sum) << (headroom_plus_one - 1)) + 2**13) >> 14, in i64
    wide = b.shl(b.convert(total, i64), b.convert(fx.sub(b, headroom_plus_one, 1), i64))
    shifted = b.convert(
        b.shrsi(b.add(wide, b.const(1 << 13, i64)), b.const(14, i64)), i32
    )
    centered = _clamp16(b, fx.sub(b, shifted, (1 << 15) + (1 << 16)))
    table = _int16_table(
        k, "softmax_one_over_one_plus_x_lut", softmax_one_over_one_plus_x_lut()
    )
    reciprocal = _lut_lookup(b, table, centered)
    return peak, reciprocal, fx.sub(b, 31, headroom_plus_one)


def quantized_softmax_i16(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> SSAValue:
    assert isinstance(op, QuantizedSoftmaxInt16Op)
    b = k.b
    peak, reciprocal, right_shift = k.row(
        op, index, len(index) - 1, quantized_softmax_i16_row
    )
    exp = _exp16(k, op, index, peak)
    product = b.convert(b.mul(exp, reciprocal), i64)
    shift = b.convert(right_shift, i64)
    rounding = b.shl(b.const(1, i64), b.sub(shift, b.const(1, i64)))
    result = b.convert(b.shrsi(b.add(product, rounding), shift), i32)
    clamped = b.min(b.max(result, b.const(0, i32)), b.const(32767, i32))
    return b.convert(clamped, i16)


# -- int8 L2 normalisation -------------------------------------------------------


def inv_sqrt_quantized_multiplier_exp(
    b: KernelBuilder, value: SSAValue
) -> tuple[SSAValue, SSAValue]:
    """TFLite's ``GetInvSqrtQuantizedMultiplierExp(value, kReverseShift)``
    on an i32 ``value >= 0``, branch-free: ``(multiplier, shift)``. The C++
    divides by 4 while ``value >= 2**29`` (at most twice for an i32: two
    selects), normalises by whole bit pairs after a leading-zero count, runs
    five Newton-Raphson steps in Q3.28, and returns ``(INT32_MAX, 0)`` for
    ``value <= 1``."""
    original = value
    shift = b.const(11, i32)
    for _ in range(2):
        large = fx.cmp(b, "sge", value, 1 << 29)
        value = fx.select(b, large, b.shrsi(value, b.const(2, i32)), value)
        shift = fx.select(b, large, fx.add(b, shift, 1), shift)
    leading_zeros = fx.count_leading_zeros(b, value)
    pairs = fx.sub(b, b.shrsi(fx.sub(b, leading_zeros, 1), b.const(1, i32)), 1)
    shift = fx.sub(b, shift, pairs)
    value = b.shl(value, b.shl(pairs, 1))
    half_input = fx.rounding_divide_by_pot(b, b.shrsi(value, b.const(1, i32)), 1)
    half_three = (1 << 28) + (1 << 27)
    x = b.const(1 << 28, i32)
    srdhm = fx.saturating_rounding_doubling_high_mul
    for _ in range(5):
        x3 = fx.saturating_rounding_multiply_by_pot(b, srdhm(b, srdhm(b, x, x), x), 6)
        difference = fx.sub(b, srdhm(b, x, half_three), srdhm(b, x3, half_input))
        x = fx.saturating_rounding_multiply_by_pot(b, difference, 3)
    x = srdhm(b, x, 1518500250)
    negative = fx.cmp(b, "slt", shift, 0)
    x = fx.select(b, negative, b.shl(x, fx.sub(b, 0, shift)), x)
    shift = fx.select(b, negative, 0, fx.sub(b, 0, shift))  # reversed
    small = fx.cmp(b, "sle", original, 1)
    return fx.select(b, small, fx.INT32_MAX, x), fx.select(b, small, 0, shift)


def quantized_l2_normalize_row(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> tuple[SSAValue, ...]:
    """Row statistics: the inverse square root of the sum of squares as
    (multiplier, shift + 7)."""
    assert isinstance(op, QuantizedL2NormalizeOp)
    b = k.b
    axis = len(index) - 1
    extent = shape_of(op.data)[axis]

    def accumulate(taps: list[Ix], accs: Sequence[SSAValue]) -> list[SSAValue]:
        x = _centred(k, op, [*index[:axis], taps[0]])
        return [fx.add(b, accs[0], b.mul(x, x))]

    (total,) = b.reduce([(0, extent)], [b.const(0, i32)], accumulate)
    multiplier, shift = inv_sqrt_quantized_multiplier_exp(b, total)
    return multiplier, fx.add(b, shift, 7)


def _centred(
    k: FusedKernel, op: QuantizedL2NormalizeOp, index: Sequence[Ix]
) -> SSAValue:
    b = k.b
    return fx.sub(b, b.convert(k.at(op.data, index), i32), op.input_zero_point)


def quantized_l2_normalize(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> SSAValue:
    assert isinstance(op, QuantizedL2NormalizeOp)
    b = k.b
    multiplier, shift = k.row(op, index, len(index) - 1, quantized_l2_normalize_row)
    scaled = fx.multiply_by_quantized_multiplier(
        b, _centred(k, op, index), multiplier, shift, True
    )
    clamped = b.min(b.max(scaled, b.const(-128, i32)), b.const(127, i32))
    return b.convert(clamped, element_type(op.data))


# -- int16 RSQRT -------------------------------------------------------------------


def quantized_rsqrt(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    """TFLite Micro's ``RsqrtEvalQuantized`` (zero points 0) per element:
    ``GetInvSqrtQuantizedMultiplierExp`` of ``x``, 20 extra bits, the
    output multiplier; 32767 for ``x <= 0``."""
    assert isinstance(op, QuantizedRsqrtOp)
    b = k.b
    x = b.convert(k.at(op.data, index), i32)
    inv_sqrt, inv_shift = inv_sqrt_quantized_multiplier_exp(b, x)
    data = fx.multiply_by_quantized_multiplier(
        b, b.const(1, i32), inv_sqrt, fx.add(b, inv_shift, 20), True
    )
    result = fx.multiply_by_quantized_multiplier(
        b, data, op.multiplier, op.shift - 20, False
    )
    clamped = b.min(b.max(result, b.const(-32768, i32)), b.const(32767, i32))
    positive = fx.cmp(b, "sgt", x, 0)
    return b.convert(fx.select(b, positive, clamped, 32767), i16)
