"""gemmlowp fixed-point primitives as scalar ``arith`` code (i32 raw values).

Bit-exact with ``usmp.oracle.quantization`` / ``usmp.oracle.tflite_kernels``
(TFLite's reference kernels): 64-bit products with a rounding nudge and
truncating division, arithmetic shifts with round-half-away-from-zero, and
two's complement wrap-around wherever the C++ wraps. An operand known at
compile time is an ``int`` (an immediate, and branches on it are decided
here, e.g. the saturation test of ``INT32_MIN * INT32_MIN``).

The code computes the same values with fewer operations than the C++ spells
them: the nudge and truncating division of the doubling high multiply are
one add and one arithmetic shift (proved where it is used).

``MultiplyByQuantizedMultiplier`` on i32 (requantisation) is not expanded
here: it is one call of a C helper (``requant.py``, ``usmp_mbqm*``) that
computes the same identities in C; its 64-bit overload (16x8 accumulators,
``multiply_by_reduced_multiplier``) stays ``arith``.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, i32, i64
from xdsl.ir import SSAValue

from usmp.lowering import requant
from usmp.lowering.create import create
from usmp.lowering.loops import KernelBuilder, cmpi

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


def _value(b: KernelBuilder, x: int | SSAValue) -> SSAValue:
    return b.const(x, i32) if isinstance(x, int) else x


def select(
    b: KernelBuilder, condition: SSAValue, a: int | SSAValue, c: int | SSAValue
) -> SSAValue:
    a, c = _value(b, a), _value(b, c)
    return b.emit(create(arith.SelectOp, (condition, a, c), a.type))


def _binary(
    b: KernelBuilder,
    kind: type[arith.SignlessIntegerBinaryOperation],
    x: SSAValue,
    y: SSAValue,
) -> SSAValue:
    """``kind(x, y)`` (an integer operator of ``x``'s type), built with
    ``create``."""
    return b.emit(create(kind, (x, y), x.type))


def _extui(b: KernelBuilder, x: SSAValue, t: IntegerType) -> SSAValue:
    return b.emit(create(arith.ExtUIOp, (x,), t))


def cmp(
    b: KernelBuilder, predicate: str, x: int | SSAValue, y: int | SSAValue
) -> SSAValue:
    return b.emit(cmpi(predicate, _value(b, x), _value(b, y)))


def add(b: KernelBuilder, x: int | SSAValue, y: int | SSAValue) -> SSAValue:
    """Wrapping i32 addition."""
    return b.add(_value(b, x), _value(b, y))


def sub(b: KernelBuilder, x: int | SSAValue, y: int | SSAValue) -> SSAValue:
    """Wrapping i32 subtraction."""
    return b.sub(_value(b, x), _value(b, y))


def saturating_rounding_doubling_high_mul(
    b: KernelBuilder, x: SSAValue, m: int | SSAValue, may_saturate: bool = True
) -> SSAValue:
    """``SaturatingRoundingDoublingHighMul``: ``round(x * m / 2**31)``, ties
    toward +infinity; ``INT32_MIN * INT32_MIN`` saturates (tested only when
    ``may_saturate`` and ``m`` can be ``INT32_MIN``)."""
    return b.convert(_doubling_high_mul_wide(b, x, m, may_saturate), i32)


def _doubling_high_mul_wide(
    b: KernelBuilder, x: SSAValue, m: int | SSAValue, may_saturate: bool
) -> SSAValue:
    """``SaturatingRoundingDoublingHighMul`` as an i64 holding the i32 result.

    gemmlowp adds a nudge of ``2**30`` (``1 - 2**30`` for a negative
    product ``p``) and divides by ``2**31`` truncating. Both cases equal
    ``floor((p + 2**30) / 2**31)``: for ``p < 0`` the truncating quotient of
    the negative ``p + 1 - 2**30`` is its ceiling, ``floor((p + 1 - 2**30 +
    2**31 - 1) / 2**31)``. So the rounding is one add and one arithmetic
    shift, without a sign test (``|p| <= 2**62``: no i64 overflow)."""
    m64 = b.const(m, i64) if isinstance(m, int) else b.convert(m, i64)
    product = b.mul(b.convert(x, i64), m64)
    high = b.shrsi(b.add(product, b.const(1 << 30, i64)), b.const(31, i64))
    if may_saturate and (not isinstance(m, int) or m == INT32_MIN):
        both_min = cmp(b, "eq", x, INT32_MIN)
        if m is not x and not isinstance(m, int):
            both_min = _binary(b, arith.AndIOp, cmp(b, "eq", x, m), both_min)
        saturated = b.const(INT32_MAX, i64)
        high = select(b, both_min, saturated, high)
    return high


def rounding_divide_by_pot(
    b: KernelBuilder, x: SSAValue, exponent: int | SSAValue
) -> SSAValue:
    """``RoundingDivideByPOT``: ``x / 2**exponent`` rounded to nearest, ties
    away from zero (``exponent`` in 0..31), on i32 as gemmlowp computes it:
    ``(x >> e) + ((x & mask) > (mask >> 1) + (x < 0))``."""
    t = x.type
    assert isinstance(t, IntegerType)
    if isinstance(exponent, int):
        if exponent == 0:
            return x
        mask = b.const((1 << exponent) - 1, t)
        half_mask = b.const(((1 << exponent) - 1) >> 1, t)
        shift = b.const(exponent, t)
    else:
        one = b.const(1, t)
        # ~(-1 << e): (1 << e) - 1 overflows (C's undefined behaviour) at
        # e = 31, where 1 << e is INT_MIN; shli is an unsigned shift in C
        all_ones = b.const(-1, t)
        mask = _binary(
            b, arith.XOrIOp, _binary(b, arith.ShLIOp, all_ones, exponent), all_ones
        )
        half_mask = b.shrsi(mask, one)
        shift = exponent
    remainder = _binary(b, arith.AndIOp, x, mask)
    negative = b.emit(cmpi("slt", x, b.const(0, t)))
    threshold = b.add(half_mask, _extui(b, negative, t))
    round_up = b.emit(cmpi("sgt", remainder, threshold))
    return b.add(b.shrsi(x, shift), _extui(b, round_up, t))


def saturating_rounding_multiply_by_pot(
    b: KernelBuilder, x: SSAValue, exponent: int
) -> SSAValue:
    """``SaturatingRoundingMultiplyByPOT<exponent>``: a saturating left shift
    for ``exponent > 0``, ``RoundingDivideByPOT`` for ``exponent < 0``."""
    if exponent <= 0:
        return rounding_divide_by_pot(b, x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    shifted = _binary(b, arith.ShLIOp, x, b.const(exponent, i32))
    low = select(b, cmp(b, "slt", x, -threshold), INT32_MIN, shifted)
    return select(b, cmp(b, "sgt", x, threshold), INT32_MAX, low)


def rescale(b: KernelBuilder, x: SSAValue, src_bits: int, dst_bits: int) -> SSAValue:
    """``Rescale<dst_bits>`` of a ``FixedPoint<int32, src_bits>``."""
    return saturating_rounding_multiply_by_pot(b, x, src_bits - dst_bits)


def rounding_half_sum(b: KernelBuilder, x: SSAValue, y: int) -> SSAValue:
    """``RoundingHalfSum``: ``(x + y + sign) / 2`` in 64 bits, C division."""
    total = b.add(b.convert(x, i64), b.const(y, i64))
    non_negative = b.emit(cmpi("sge", total, b.const(0, i64)))
    sign = select(b, non_negative, b.const(1, i64), b.const(-1, i64))
    half = _binary(b, arith.DivSIOp, b.add(total, sign), b.const(2, i64))
    return b.convert(half, i32)


def multiply_by_quantized_multiplier(
    b: KernelBuilder,
    x: SSAValue,
    multiplier: int | SSAValue,
    shift: int | SSAValue,
    may_saturate: bool,
    direction: str = "both",
) -> SSAValue:
    """TFLite ``MultiplyByQuantizedMultiplier`` (double rounding) on i32:
    ``RoundingDivideByPOT(SRDHM(x << max(shift, 0), m), max(-shift, 0))``,
    the left shift wrapping like the C++, as one call of a requantisation
    helper (``requant.py``). A constant ``shift`` picks the direction here
    (``usmp_mbqm_right`` for ``shift < 0``, else ``usmp_mbqm_left``); an
    ``SSAValue`` one is a right shift ``-shift`` in 1..31
    (``direction="right"``) or 0..31 (``"right0"``), a left shift
    (``"left"``) or the signed shift (``"both"``, ``usmp_mbqm``). The
    ``_sat`` helper (SRDHM saturates ``INT32_MIN * INT32_MIN``) only when
    ``may_saturate`` and the multiplier can be ``INT32_MIN``."""
    if isinstance(shift, int):  # usmp_mbqm_right takes 1..31: 0 is "left"
        direction = "right" if shift < 0 else "left"
        shift = abs(shift)
    saturate = may_saturate and (
        not isinstance(multiplier, int) or multiplier == INT32_MIN
    )
    suffix = "" if direction == "both" else f"_{direction}"
    name = f"usmp_mbqm{suffix}{'_sat' if saturate else ''}"
    return requant.call(b, name, x, _value(b, multiplier), _value(b, shift))


def reduced_multiplier(multiplier: int) -> int:
    """The 16-bit multiplier of TFLite's 64-bit ``MultiplyByQuantizedMultiplier``:
    ``(m + 2**15) >> 16``, saturated to ``0x7FFF`` from ``m >= 0x7FFF0000``."""
    return (multiplier + (1 << 15)) >> 16 if multiplier < 0x7FFF0000 else 0x7FFF


def multiply_by_reduced_multiplier(
    b: KernelBuilder,
    x: SSAValue,
    reduced: int | SSAValue,
    total_shift: int | SSAValue,
) -> SSAValue:
    """TFLite's 64-bit ``MultiplyByQuantizedMultiplier`` of an i64 ``x``
    with its 16-bit ``reduced`` multiplier (``reduced_multiplier``) and
    ``total_shift = 15 - shift`` (8..46):
    ``(x * reduced + 2**(total_shift - 1)) >> total_shift``, truncated to
    i32, all in i64 as the C++ (which asserts ``|x| < 2**47``, so the
    product cannot overflow)."""
    r = b.const(reduced, i64) if isinstance(reduced, int) else b.convert(reduced, i64)
    if isinstance(total_shift, int):
        half = b.const(1 << (total_shift - 1), i64)
        shift = b.const(total_shift, i64)
    else:
        shift = b.convert(total_shift, i64)
        one = b.const(1, i64)
        half = b.shl(one, b.sub(shift, one))
    return b.convert(b.shrsi(b.add(b.mul(x, r), half), shift), i32)


def _exp_on_interval_between_negative_one_quarter_and_0_excl(
    b: KernelBuilder, a: SSAValue
) -> SSAValue:
    constant_term = 1895147668  # exp(-1/8) in Q0.31
    constant_1_over_3 = 715827883
    x = add(b, a, 1 << 28)  # a + 1/8
    x2 = saturating_rounding_doubling_high_mul(b, x, x)
    x3 = saturating_rounding_doubling_high_mul(b, x2, x)
    x4 = saturating_rounding_doubling_high_mul(b, x2, x2)
    x4_over_4 = saturating_rounding_multiply_by_pot(b, x4, -2)
    poly = add(
        b,
        saturating_rounding_doubling_high_mul(
            b, add(b, x4_over_4, x3), constant_1_over_3
        ),
        x2,
    )
    tail = saturating_rounding_multiply_by_pot(b, poly, -1)
    scaled = saturating_rounding_doubling_high_mul(
        b, b.const(constant_term, i32), add(b, x, tail)
    )
    return add(b, scaled, constant_term)


EXP_BARREL = (
    (-2, 1672461947),
    (-1, 1302514674),
    (0, 790015084),
    (1, 290630308),
    (2, 39332535),
    (3, 720401),
    (4, 242),
)
"""``exp(-2**k)`` in Q0.31 for gemmlowp's barrel shifter."""


def exp_on_negative_values(
    b: KernelBuilder, a: SSAValue, integer_bits: int
) -> SSAValue:
    """gemmlowp ``exp_on_negative_values`` of a ``FixedPoint<int32,
    integer_bits>`` (``a <= 0``); the result is Q0.31."""
    fractional_bits = 31 - integer_bits
    one_quarter = 1 << (fractional_bits - 2)
    masked = b.emit(arith.AndIOp(a, b.const(one_quarter - 1, i32)))
    a_mod_quarter_minus_one_quarter = sub(b, masked, one_quarter)
    result = _exp_on_interval_between_negative_one_quarter_and_0_excl(
        b, rescale(b, a_mod_quarter_minus_one_quarter, integer_bits, 0)
    )
    remainder = sub(b, a_mod_quarter_minus_one_quarter, a)
    for exponent, multiplier in EXP_BARREL:
        if integer_bits > exponent:
            bit = 1 << (fractional_bits + exponent)
            has_bit = cmp(
                b, "ne", b.emit(arith.AndIOp(remainder, b.const(bit, i32))), 0
            )
            scaled = saturating_rounding_doubling_high_mul(b, result, multiplier)
            result = select(b, has_bit, scaled, result)
    if integer_bits > 5:
        result = select(b, cmp(b, "slt", a, -(1 << (36 - integer_bits))), 0, result)
    return select(b, cmp(b, "eq", a, 0), INT32_MAX, result)


def one_over_one_plus_x_for_x_in_0_1(b: KernelBuilder, a: SSAValue) -> SSAValue:
    """gemmlowp ``one_over_one_plus_x_for_x_in_0_1`` (Q0.31 in and out):
    Newton-Raphson in Q2.29, three iterations."""
    half_denominator = rounding_half_sum(b, a, INT32_MAX)
    x = add(
        b,
        saturating_rounding_doubling_high_mul(b, half_denominator, -1010580540),
        1515870810,
    )
    for _ in range(3):
        product = saturating_rounding_doubling_high_mul(b, half_denominator, x)
        one_minus = sub(b, 1 << 29, product)
        x = add(
            b,
            x,
            rescale(b, saturating_rounding_doubling_high_mul(b, x, one_minus), 4, 2),
        )
    return rescale(b, x, 1, 0)


def count_leading_zeros(b: KernelBuilder, x: SSAValue) -> SSAValue:
    """Leading zero bits of the 32-bit pattern of ``x`` (32 for 0), by a
    branch-free binary search on ``arith`` ops (no ``math.ctlz``, so every
    backend can emit it)."""
    count = b.const(0, i32)
    value = x
    for width in (16, 8, 4, 2, 1):
        high_mask = ((1 << width) - 1) << (32 - width)
        empty = cmp(b, "eq", b.emit(arith.AndIOp(value, b.const(high_mask, i32))), 0)
        count = select(b, empty, add(b, count, width), count)
        value = select(
            b, empty, b.emit(arith.ShLIOp(value, b.const(width, i32))), value
        )
    # value == 0 only when x == 0: one more zero than the search counted
    return select(b, cmp(b, "eq", value, 0), add(b, count, 1), count)
