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
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import i32
from xdsl.ir import Operation, SSAValue

from usmp.dialects.relay_tflite_ops import QuantizedSoftmaxOp
from usmp.lowering import fixed_point as fx
from usmp.lowering.kernel import FusedKernel, element_type, shape_of
from usmp.lowering.loops import Ix

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
