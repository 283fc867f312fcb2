"""``relay.quantized_divide``: TFLite Micro's int8 DIV per element.

``reference_ops::DivElementwise`` on the centred i32 operands, bit for bit
with ``usmp.oracle.tflite_kernels.quantized_divide``: a negative divisor
flips both signs; the divisor's reciprocal is ``GetReciprocal`` (a
leading-zero count, the normalised divisor, gemmlowp's
``one_over_one_plus_x_for_x_in_0_1``), the dividend is normalised by its
leading sign bits, multiplied by the reciprocal, by the output multiplier,
and rounded by the data-dependent exponent. Every shift count stays in
0..31 in the C (a zero divisor and exponents from 32 on are computed as
TFLite Micro's x86-64 build computes them: a leading-zero count of 32, the
shift count modulo 32, an all-ones mask). No tables, no scratch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import i32
from xdsl.ir import Operation, SSAValue

from usmp.dialects.relay_tflite_ops import QuantizedDivideOp
from usmp.lowering import fixed_point as fx
from usmp.lowering.kernel import FusedKernel
from usmp.lowering.loops import Ix, KernelBuilder
from usmp.lowering.ops_elementwise import binary_reads
from usmp.oracle.tflite_kernels import one_over_one_plus_x_for_x_in_0_1

_ZERO_DIVISOR_INVERSE = int(
    one_over_one_plus_x_for_x_in_0_1(np.array([fx.INT32_MIN], np.int64))[0]
)
"""gemmlowp's ``one_over_one_plus_x_for_x_in_0_1(-1.0)`` (wrapping int32)."""


def _leading_sign_bits(b: KernelBuilder, x: SSAValue) -> SSAValue:
    """``CountLeadingSignBits`` (GCC's ``__builtin_clrsb``): 31 for 0, -1."""
    inverted = b.emit(arith.XOrIOp(x, b.const(-1, i32)))
    magnitude = fx.select(b, fx.cmp(b, "slt", x, 0), inverted, x)
    return fx.sub(b, fx.count_leading_zeros(b, magnitude), 1)


def _rounding_divide_by_any_pot(
    b: KernelBuilder, x: SSAValue, exponent: SSAValue
) -> SSAValue:
    """``RoundingDivideByPOT`` for any exponent >= 0 (see the module): the
    mask ``~(-1 << e)`` (all ones from 32 on), the shift ``e & 31``; no
    signed overflow."""
    all_ones = b.const(-1, i32)
    low_bits = b.emit(
        arith.XOrIOp(b.shl(all_ones, b.min(exponent, b.const(31, i32))), all_ones)
    )
    mask = fx.select(b, fx.cmp(b, "sgt", exponent, 31), all_ones, low_bits)
    negative = b.emit(arith.ExtUIOp(fx.cmp(b, "slt", x, 0), i32))
    threshold = b.add(b.shrsi(mask, b.const(1, i32)), negative)
    remainder = b.emit(arith.AndIOp(x, mask))
    round_up = b.emit(arith.ExtUIOp(fx.cmp(b, "sgt", remainder, threshold), i32))
    shift = b.emit(arith.AndIOp(exponent, b.const(31, i32)))
    return b.add(b.shrsi(x, shift), round_up)


def quantized_divide(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, QuantizedDivideOp)
    b = k.b
    lhs, rhs = (k.at(v, i) for v, i in binary_reads(k, op, index))
    negative = fx.cmp(b, "slt", rhs, 0)
    lhs = fx.select(b, negative, fx.sub(b, 0, lhs), lhs)
    rhs = fx.select(b, negative, fx.sub(b, 0, rhs), rhs)
    # GetReciprocal(rhs, 31): 32 leading zeros (rhs == 0) shift 0 by 0
    leading_zeros = fx.count_leading_zeros(b, rhs)
    normalised = b.shl(rhs, b.min(leading_zeros, b.const(31, i32)))
    # minus 2**31 modulo 2**32: the top bit flipped (no signed overflow in C);
    # a zero divisor gives -2**31, whose reciprocal gemmlowp computes with
    # wrapping sums: that constant, and a harmless 0 through the C
    zero = fx.cmp(b, "eq", rhs, 0)
    minus_one = b.emit(arith.XOrIOp(normalised, b.const(fx.INT32_MIN, i32)))
    inverse = fx.select(
        b,
        zero,
        _ZERO_DIVISOR_INVERSE,
        fx.one_over_one_plus_x_for_x_in_0_1(b, fx.select(b, zero, 0, minus_one)),
    )
    headroom = _leading_sign_bits(b, lhs)
    unscaled = fx.saturating_rounding_doubling_high_mul(
        b, b.shl(lhs, headroom), inverse
    )
    scaled = fx.saturating_rounding_doubling_high_mul(b, unscaled, op.output_multiplier)
    # headroom + (31 - leading_zeros) - output_shift
    exponent = fx.sub(b, headroom, fx.add(b, leading_zeros, op.output_shift - 31))
    return _rounding_divide_by_any_pot(b, scaled, exponent)
