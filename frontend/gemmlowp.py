"""gemmlowp / TFLite fixed point on Python ints: the importer's own copy.

Three int8 operators of TFLite Micro depend on their input value alone, so
the importer runs their kernel on the 256 int8 values at compile time and
emits ``relay.table_lookup`` of the results: LOGISTIC
(``reference_integer_ops::Logistic``), TANH (``reference_integer_ops::Tanh``)
and RSQRT (``RsqrtEvalQuantized``). This module computes those tables.

It is a scalar transliteration of the C++ (``gemmlowp/fixedpoint/
fixedpoint.h``, ``tensorflow/lite/kernels/internal/common.h``), one value at
a time, written apart from the numpy oracle (``usmp.oracle.
tflite_activations``, vectorised) on purpose: the compiler does not import
the oracle, and ``tests/test_independent_tables.py`` checks the two against
each other on every int8 input. int32 raw values are Python ints wrapped to
32 bits wherever the C++ wraps (signed overflow is given two's complement
wrap-around, as every compiler the models target produces).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


def wrap32(x: int) -> int:
    """``x`` modulo 2**32 as a signed int32."""
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _c_div(n: int, d: int) -> int:
    """C integer division (truncation toward zero), ``d > 0``."""
    q = abs(n) // d
    return q if n >= 0 else -q


def srdhm(a: int, b: int) -> int:
    """``SaturatingRoundingDoublingHighMul``."""
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    return _c_div(ab + nudge, 1 << 31)


def rounding_divide_by_pot(x: int, exponent: int) -> int:
    """``RoundingDivideByPOT`` (``exponent`` in 0..31)."""
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def saturating_multiply_by_pot(x: int, exponent: int) -> int:
    """``SaturatingRoundingMultiplyByPOT<exponent>``."""
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    if exponent == 0:
        return x
    threshold = (1 << (31 - exponent)) - 1
    if x > threshold:
        return INT32_MAX
    if x < -threshold:
        return INT32_MIN
    return wrap32(x << exponent)


def rescale(x: int, src_integer_bits: int, dst_integer_bits: int) -> int:
    """``Rescale<dst>`` of a ``FixedPoint<int32, src>``."""
    return saturating_multiply_by_pot(x, src_integer_bits - dst_integer_bits)


def multiply_by_quantized_multiplier(x: int, multiplier: int, shift: int) -> int:
    """``MultiplyByQuantizedMultiplier`` (the double-rounding build)."""
    left, right = max(shift, 0), max(-shift, 0)
    return rounding_divide_by_pot(srdhm(wrap32(x * (1 << left)), multiplier), right)


def _exp_on_interval_between_negative_one_quarter_and_0_excl(a: int) -> int:
    constant_term = 1895147668  # exp(-1/8), Q0.31
    constant_1_over_3 = 715827883
    x = wrap32(a + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = saturating_multiply_by_pot(x4, -2)
    inner = wrap32(srdhm(wrap32(x4_over_4 + x3), constant_1_over_3) + x2)
    x4_over_24_plus_x3_over_6_plus_x2_over_2 = saturating_multiply_by_pot(inner, -1)
    return wrap32(
        constant_term
        + srdhm(constant_term, wrap32(x + x4_over_24_plus_x3_over_6_plus_x2_over_2))
    )


def exp_on_negative_values(a: int, integer_bits: int) -> int:
    """``exp_on_negative_values`` of a ``FixedPoint<int32, integer_bits>``
    (``a <= 0``), Q0.31."""
    fractional_bits = 31 - integer_bits
    one_quarter = 1 << (fractional_bits - 2)
    a_mod_quarter_minus_one_quarter = wrap32((a & (one_quarter - 1)) - one_quarter)
    result = _exp_on_interval_between_negative_one_quarter_and_0_excl(
        rescale(a_mod_quarter_minus_one_quarter, integer_bits, 0)
    )
    remainder = wrap32(a_mod_quarter_minus_one_quarter - a)
    # GEMMLOWP_EXP_BARREL_SHIFTER(exponent, exp(-2^exponent) in Q0.31)
    for exponent, multiplier in (
        (-2, 1672461947),
        (-1, 1302514674),
        (0, 790015084),
        (1, 290630308),
        (2, 39332535),
        (3, 720401),
        (4, 242),
    ):
        if integer_bits > exponent and remainder & (1 << (fractional_bits + exponent)):
            result = srdhm(result, multiplier)
    if integer_bits > 5 and a < -(1 << (fractional_bits + 5)):  # below -32
        result = 0
    return INT32_MAX if a == 0 else result


def _half_sum(a: int, b: int) -> int:
    """``RoundingHalfSum``."""
    total = a + b
    return _c_div(total + (1 if total >= 0 else -1), 2)


def _reciprocal_q2(a: int) -> int:
    """The Newton-Raphson iterate of ``one_over_one_plus_x_for_x_in_0_1``:
    ``1 / ((1 + a) / 2)`` in Q2.29."""
    half_denominator = _half_sum(a, INT32_MAX)
    x = wrap32(1515870810 + srdhm(half_denominator, -1010580540))  # 48/17 - 32/17 d
    for _ in range(3):
        one_minus = wrap32((1 << 29) - srdhm(half_denominator, x))
        x = wrap32(x + rescale(srdhm(x, one_minus), 4, 2))
    return x


def one_over_one_plus_x_for_x_in_0_1(a: int) -> int:
    return rescale(_reciprocal_q2(a), 1, 0)


def one_minus_x_over_one_plus_x_for_x_in_0_1(a: int) -> int:
    return rescale(wrap32(_reciprocal_q2(a) - (1 << 29)), 2, 0)


def logistic(a: int, integer_bits: int) -> int:
    """gemmlowp ``logistic`` of a ``FixedPoint<int32, integer_bits>``, Q0.31."""
    if a == 0:
        return 1 << 30
    absolute = a if a > 0 else wrap32(-a)
    positive = one_over_one_plus_x_for_x_in_0_1(
        exp_on_negative_values(wrap32(-absolute), integer_bits)
    )
    return positive if a > 0 else wrap32(INT32_MAX - positive)


def tanh(a: int, integer_bits: int) -> int:
    """gemmlowp ``tanh`` of a ``FixedPoint<int32, integer_bits>``, Q0.31."""
    if a == 0:
        return 0
    negative = a < 0
    n = a if negative else wrap32(-a)
    # neg_tanh_on_negative_values: ExactMulByPot<1> keeps the raw value
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(
        exp_on_negative_values(n, integer_bits + 1)
    )
    return wrap32(-t) if negative else t


def _count_leading_zeros(x: int) -> int:
    """``CountLeadingZeros(uint32_t(x))``."""
    return 32 - (x & 0xFFFFFFFF).bit_length()


def inv_sqrt_quantized_multiplier_exp(
    value: int, reverse_shift: int
) -> tuple[int, int]:
    """``GetInvSqrtQuantizedMultiplierExp``: ``1 / sqrt(value)`` for an
    int32 ``value >= 0`` as ``(multiplier, shift)``."""
    if value <= 1:
        return INT32_MAX, 0
    shift = 11
    while value >= 1 << 29:
        value //= 4
        shift += 1
    pairs = (_count_leading_zeros(value) - 1) // 2 - 1
    shift -= pairs
    value <<= 2 * pairs
    half_input = saturating_multiply_by_pot(value >> 1, -1)  # F3
    half_three = (1 << 28) + (1 << 27)  # 1.5 in F3
    x = 1 << 28  # F3::One()
    for _ in range(5):
        x3 = rescale(srdhm(srdhm(x, x), x), 9, 3)
        x = rescale(wrap32(srdhm(half_three, x) - srdhm(half_input, x3)), 6, 3)
    x = srdhm(x, 1518500250)  # sqrt(2) / 2 in Q0.31
    if shift < 0:
        x, shift = wrap32(x << -shift), 0
    return x, shift * reverse_shift


_INT8_INPUT_INTEGER_BITS = 4


def _int8_table(
    function: Callable[[int, int], int],
    out_bits: int,
    offset: int,
    zero_point: int,
    radius: int,
    multiplier: int,
    left_shift: int,
) -> tuple[int, ...]:
    """``function`` (gemmlowp's fixed-point logistic or tanh, Q0.31 out) of
    every int8 input, -128 first, as TFLite's reference integer kernels
    compute it: saturated beyond ``radius``, else rescaled to Q4.27, then
    to ``out_bits`` fractional bits plus ``offset``, clamped to int8."""
    out: list[int] = []
    for x in range(-128, 128):
        v = x - zero_point
        if v <= -radius:
            out.append(-128)
        elif v >= radius:
            out.append(127)
        else:
            q4 = multiply_by_quantized_multiplier(v, multiplier, left_shift)
            q0 = function(q4, _INT8_INPUT_INTEGER_BITS)
            scaled = rounding_divide_by_pot(q0, 31 - out_bits) + offset
            out.append(min(max(scaled, -128), 127))
    return tuple(out)


@cache
def logistic_int8_table(
    zero_point: int, radius: int, multiplier: int, left_shift: int
) -> tuple[int, ...]:
    """``reference_integer_ops::Logistic`` of every int8 input, -128 first
    (output scale 1/256, zero point -128)."""
    return _int8_table(logistic, 8, -128, zero_point, radius, multiplier, left_shift)


@cache
def tanh_int8_table(
    zero_point: int, radius: int, multiplier: int, left_shift: int
) -> tuple[int, ...]:
    """``reference_integer_ops::Tanh`` of every int8 input, -128 first
    (output scale 1/128, zero point 0)."""
    return _int8_table(tanh, 7, 0, zero_point, radius, multiplier, left_shift)


_KSHIFT = 20
"""``kShift`` of ``RsqrtEvalQuantized``: extra bits of the inverse root."""


@cache
def rsqrt_int8_table(
    input_zero_point: int, output_zero_point: int, multiplier: int, shift: int
) -> tuple[int, ...]:
    """TFLite Micro's int8 RSQRT (``RsqrtEvalQuantized``) of every int8
    input, -128 first: 127 at the zero point and, where TFLite Micro
    refuses the input at run time, below it."""
    out: list[int] = []
    for x in range(-128, 128):
        value = x - input_zero_point
        if value <= 0:
            out.append(127)
            continue
        inv_sqrt, inv_shift = inv_sqrt_quantized_multiplier_exp(value, -1)
        data = multiply_by_quantized_multiplier(1, inv_sqrt, inv_shift + _KSHIFT)
        result = multiply_by_quantized_multiplier(data, multiplier, shift - _KSHIFT)
        out.append(min(max(result + output_zero_point, -128), 127))
    return tuple(out)
