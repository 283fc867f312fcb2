"""numpy kernels of the relay ops in ``dialects/relay_tflite_ops.py``.

``quantized_softmax`` is TFLite Micro's reference int8 softmax
(``reference_ops::Softmax<int8_t, int8_t>``) on gemmlowp fixed point,
vectorised over rows. Every gemmlowp primitive it needs is a small function
below with the C++ name it mirrors; int32 raw values are carried in int64
arrays and wrapped to 32 bits wherever the C++ wraps.

Interpreter hook (keyed by op class in ``relay_interpreter``):
``QuantizedSoftmaxOp`` ->
``quantized_softmax(x, input_multiplier=, input_left_shift=, diff_min=, axis=-1)``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from usmp.oracle import quantization
from usmp.oracle.quantization import INT32_MAX, INT32_MIN, wrap_int32

I64 = npt.NDArray[np.int64]


class TFLiteKernelError(ValueError):
    """An operand or parameter the kernel cannot accept."""


def _wrap32(x: I64) -> I64:
    """Two's complement wrap to int32 (values kept in int64)."""
    return wrap_int32(x).astype(np.int64)


def _div_trunc(x: I64, d: int) -> I64:
    """C integer division (truncation toward zero) by a positive ``d``."""
    q = np.abs(x) // d
    return np.where(x < 0, -q, q)


def saturating_rounding_doubling_high_mul(a: I64, b: I64 | int) -> I64:
    """gemmlowp ``SaturatingRoundingDoublingHighMul`` (int32), kept in int64."""
    return quantization.saturating_rounding_doubling_high_mul(a, b).astype(np.int64)


def rounding_divide_by_pot(x: I64, exponent: I64 | int) -> I64:
    """gemmlowp ``RoundingDivideByPOT`` (``exponent`` in 0..31), kept in int64."""
    return quantization.rounding_divide_by_pot(x, exponent).astype(np.int64)


def saturating_rounding_multiply_by_pot(x: I64, exponent: int) -> I64:
    """gemmlowp ``SaturatingRoundingMultiplyByPOT<exponent>`` (int32)."""
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    shifted = _wrap32(x << exponent)
    return np.where(
        x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, shifted)
    )


def rescale(x: I64, src_integer_bits: int, dst_integer_bits: int) -> I64:
    """gemmlowp ``Rescale<dst>`` of a ``FixedPoint<int32, src>``."""
    return saturating_rounding_multiply_by_pot(x, src_integer_bits - dst_integer_bits)


def rounding_half_sum(a: I64, b: I64 | int) -> I64:
    """gemmlowp ``RoundingHalfSum`` (int32): ``(a + b + sign) / 2`` in C."""
    total = a + b
    sign = np.where(total >= 0, 1, -1)
    return _div_trunc(total + sign, 2)


def _exp_on_interval_between_negative_one_quarter_and_0_excl(a: I64) -> I64:
    """gemmlowp: ``exp(a)`` for ``a`` in [-1/4, 0), Q0.31 in and out."""
    constant_term = 1895147668  # exp(-1/8)
    constant_1_over_3 = 715827883
    x = _wrap32(a + (1 << 28))  # a + 1/8
    x2 = saturating_rounding_doubling_high_mul(x, x)
    x3 = saturating_rounding_doubling_high_mul(x2, x)
    x4 = saturating_rounding_doubling_high_mul(x2, x2)
    x4_over_4 = saturating_rounding_multiply_by_pot(x4, -2)
    poly = _wrap32(
        saturating_rounding_doubling_high_mul(
            _wrap32(x4_over_4 + x3), constant_1_over_3
        )
        + x2
    )
    x4_over_24_plus_x3_over_6_plus_x2_over_2 = saturating_rounding_multiply_by_pot(
        poly, -1
    )
    return _wrap32(
        constant_term
        + saturating_rounding_doubling_high_mul(
            np.asarray(constant_term, dtype=np.int64),
            _wrap32(x + x4_over_24_plus_x3_over_6_plus_x2_over_2),
        )
    )


# exp(-2**k) in Q0.31 for the barrel shifter of exp_on_negative_values.
_EXP_BARREL = (
    (-2, 1672461947),
    (-1, 1302514674),
    (0, 790015084),
    (1, 290630308),
    (2, 39332535),
    (3, 720401),
    (4, 242),
)


def exp_on_negative_values(a: I64, integer_bits: int) -> I64:
    """gemmlowp ``exp_on_negative_values`` of a ``FixedPoint<int32,
    integer_bits>`` (``a <= 0``); the result is Q0.31."""
    fractional_bits = 31 - integer_bits
    one_quarter = 1 << (fractional_bits - 2)
    mask = one_quarter - 1
    a_mod_quarter_minus_one_quarter = (a & mask) - one_quarter
    result = _exp_on_interval_between_negative_one_quarter_and_0_excl(
        rescale(a_mod_quarter_minus_one_quarter, integer_bits, 0)
    )
    remainder = _wrap32(a_mod_quarter_minus_one_quarter - a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            bit = 1 << (fractional_bits + exponent)
            result = np.where(
                (remainder & bit) != 0,
                saturating_rounding_doubling_high_mul(result, multiplier),
                result,
            )
    if integer_bits > 5:
        clamp = -(1 << (36 - integer_bits))  # -32.0
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, INT32_MAX, result)


def _newton_raphson_reciprocal(a: I64) -> I64:
    """``1 / ((1 + a) / 2)`` in Q2.29 for ``a`` in Q0.31 (gemmlowp's
    Newton-Raphson division, shared by the two functions below)."""
    half_denominator = rounding_half_sum(a, INT32_MAX)
    constant_48_over_17 = 1515870810
    constant_neg_32_over_17 = -1010580540
    one_q2 = 1 << 29
    x = _wrap32(
        constant_48_over_17
        + saturating_rounding_doubling_high_mul(
            half_denominator, constant_neg_32_over_17
        )
    )
    for _ in range(3):
        half_denominator_times_x = saturating_rounding_doubling_high_mul(
            half_denominator, x
        )
        one_minus = _wrap32(one_q2 - half_denominator_times_x)
        x = _wrap32(
            x + rescale(saturating_rounding_doubling_high_mul(x, one_minus), 4, 2)
        )
    return x


def one_over_one_plus_x_for_x_in_0_1(a: I64) -> I64:
    """gemmlowp ``one_over_one_plus_x_for_x_in_0_1`` (Q0.31 in and out),
    Newton-Raphson in Q2.29."""
    x = _newton_raphson_reciprocal(a)
    return rescale(x, 1, 0)  # ExactMulByPot<-1> then Rescale<0>


def one_minus_x_over_one_plus_x_for_x_in_0_1(a: I64) -> I64:
    """gemmlowp ``one_minus_x_over_one_plus_x_for_x_in_0_1`` (Q0.31 in and
    out): ``Rescale<0>(x - F2::One())`` of the same reciprocal."""
    x = _newton_raphson_reciprocal(a)
    return rescale(_wrap32(x - (1 << 29)), 2, 0)


def _count_leading_zeros_u32(x: I64) -> I64:
    """``CountLeadingZeros(static_cast<uint32_t>(x))`` (32 for 0)."""
    u = x & 0xFFFFFFFF
    _, bit_length = np.frexp(u.astype(np.float64))  # exact below 2**53
    return 32 - bit_length.astype(np.int64)


def get_reciprocal(x: I64, x_integer_digits: int) -> tuple[I64, I64]:
    """TFLite ``GetReciprocal``: ``(1 / x`` in Q0.31 scaled by a power of
    two, ``num_bits_over_unit)``."""
    headroom_plus_one = _count_leading_zeros_u32(x)
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted = ((x & 0xFFFFFFFF) << headroom_plus_one) & 0xFFFFFFFF
    shifted_sum_minus_one = _wrap32(shifted - (1 << 31))
    return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one), num_bits_over_unit


_SCALED_DIFF_INTEGER_BITS = 5
_ACCUMULATION_INTEGER_BITS = 12


def quantized_softmax(
    x: npt.NDArray[np.int8],
    *,
    input_multiplier: int,
    input_left_shift: int,
    diff_min: int,
    axis: int = -1,
    output_bits: int = 8,
) -> np.ndarray:
    """TFLite reference int8 softmax over the last axis (output scale 1/256,
    zero point -128; with ``output_bits=16``: int16, 1/65536, -32768)."""
    if x.dtype != np.int8:
        raise TFLiteKernelError(
            f"quantized_softmax: int8 input required, got {x.dtype}"
        )
    if x.ndim == 0 or axis not in (-1, x.ndim - 1):
        raise TFLiteKernelError(
            f"quantized_softmax: axis {axis} is not the last axis of a "
            f"rank-{x.ndim} input"
        )
    if not 0 <= input_left_shift <= 31:
        raise TFLiteKernelError(
            f"quantized_softmax: input_left_shift {input_left_shift} is not in 0..31"
        )
    v = x.astype(np.int64)
    diff = v - v.max(axis=-1, keepdims=True)
    valid = diff >= diff_min
    rescaled = saturating_rounding_doubling_high_mul(
        _wrap32(diff << input_left_shift), input_multiplier
    )
    exp = exp_on_negative_values(rescaled, _SCALED_DIFF_INTEGER_BITS)
    contributions = np.where(valid, rescale(exp, 0, _ACCUMULATION_INTEGER_BITS), 0)
    sum_of_exps = _wrap32(contributions.sum(axis=-1, keepdims=True))
    shifted_scale, num_bits_over_unit = get_reciprocal(
        sum_of_exps, _ACCUMULATION_INTEGER_BITS
    )
    exponent = num_bits_over_unit + 31 - output_bits
    if np.any((exponent < 0) | (exponent > 31)):
        raise TFLiteKernelError("quantized_softmax: reciprocal exponent out of 0..31")
    product = saturating_rounding_doubling_high_mul(
        np.broadcast_to(shifted_scale, exp.shape), exp
    )
    unsat = rounding_divide_by_pot(product, exponent)
    low, high = -(1 << (output_bits - 1)), (1 << (output_bits - 1)) - 1
    out = np.clip(unsat + low, low, high)
    return np.where(valid, out, low).astype(np.int16 if output_bits == 16 else np.int8)


def _count_leading_sign_bits(x: I64) -> I64:
    """``CountLeadingSignBits`` of int32 values (GCC's ``__builtin_clrsb``;
    31 for 0 and -1)."""
    return _count_leading_zeros_u32(np.where(x < 0, ~x, x)) - 1


def _rounding_divide_by_pot_any(x: I64, exponent: I64) -> I64:
    """gemmlowp ``RoundingDivideByPOT`` for any exponent >= 0, as TFLite
    Micro's x86-64 build computes it: the mask ``(1ll << e) - 1`` truncated
    to int32 (all ones from 32 on) and the shift count taken modulo 32."""
    mask = _wrap32((np.int64(1) << np.minimum(exponent, 62)) - 1)
    threshold = (mask >> 1) + (x < 0)
    return _wrap32((x >> (exponent & 31)) + ((x & mask) > threshold))


def quantized_divide(
    lhs: np.ndarray,
    rhs: np.ndarray,
    *,
    output_multiplier: int,
    output_shift: int,
) -> np.ndarray:
    """``relay.quantized_divide``: TFLite Micro's int8 DIV
    (``reference_ops::DivElementwise``) on centred int32 operands, before
    the output zero point (numpy broadcasting)."""
    if lhs.dtype != np.int32 or rhs.dtype != np.int32:
        raise TFLiteKernelError(
            f"quantized_divide: int32 operands required, got {lhs.dtype}, {rhs.dtype}"
        )
    a, b = np.broadcast_arrays(lhs.astype(np.int64), rhs.astype(np.int64))
    negative = b < 0
    a, b = np.where(negative, -a, a), np.where(negative, -b, b)
    inverse, recip_shift = get_reciprocal(b, 31)
    headroom = _count_leading_sign_bits(a)
    unscaled = saturating_rounding_doubling_high_mul(_wrap32(a << headroom), inverse)
    exponent = headroom + recip_shift - output_shift
    if np.any(exponent < 0):
        raise TFLiteKernelError("quantized_divide: negative rounding exponent")
    scaled = saturating_rounding_doubling_high_mul(unscaled, output_multiplier)
    return _rounding_divide_by_pot_any(scaled, exponent).astype(np.int32)
