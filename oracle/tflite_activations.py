"""TFLite Micro's integer LOGISTIC and TANH, bit for bit, vectorised with numpy.

C++ originals (``tensorflow/lite/kernels/internal/reference/integer_ops/``
``logistic.h`` and ``tanh.h``, gemmlowp ``fixedpoint.h``):

* ``logistic_int8`` / ``tanh_int8``: the int8 kernels. Inputs within the
  input radius are rescaled to Q4.27 (``MultiplyByQuantizedMultiplier``) and
  go through gemmlowp's fixed-point ``logistic`` / ``tanh``
  (``gemmlowp_logistic``, ``gemmlowp_tanh``: ``exp_on_negative_values`` and a
  Newton-Raphson reciprocal); the Q0.31 result is shifted to the output
  scale (1/256 with zero point -128 for LOGISTIC, 1/128 with zero point 0
  for TANH); inputs beyond the radius saturate.
* ``logistic_int16`` / ``tanh_int16``: the int16 kernels (also what TFLite
  Micro's integer LSTM calls on its gates, ``lstm_eval.cc``: ``Sigmoid`` is
  ``logistic_int16(x, 0, 0)`` on Q3.12 gates, ``Tanh`` is
  ``tanh_int16(x, m, s)`` with ``s = 12 + cell_state_scale_power`` and
  ``m = 0``, or ``s = -s`` and ``m = 3`` when that is negative). The input is
  brought to the scale 1/(3 * 4096) (``input_multiplier == 0`` means
  ``3 << input_left_shift``, the power-of-two case) and interpolated
  linearly in ``SIGMOID_TABLE_UINT16`` (sigmoid(i / 24) in Q0.16, 256
  entries; TANH reads it at twice the input, ``tanh(x) = 2 sigmoid(2x) -
  1``). The output is Q0.15.

The prepare-time parameters are ``usmp.frontend.quantization``'s
``logistic_tanh_int8_params`` and ``logistic_tanh_int16_params``. Every
function takes integer arrays and returns arrays of the kernel's type;
undefined behaviour of the C++ (signed overflow) is given two's complement
wrap-around.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from usmp.oracle import tflite_kernels
from usmp.oracle.quantization import (
    INT32_MAX,
    multiply_by_quantized_multiplier,
    wrap_int32,
)
from usmp.oracle.tflite_kernels import (
    exp_on_negative_values,
    one_minus_x_over_one_plus_x_for_x_in_0_1,
    one_over_one_plus_x_for_x_in_0_1,
    rounding_divide_by_pot,
)
from usmp.tflite_tables import SIGMOID_TABLE_UINT16 as SIGMOID_TABLE_UINT16_DATA

I64 = npt.NDArray[np.int64]


def _wrap32(x: I64) -> I64:
    return wrap_int32(x).astype(np.int64)


SIGMOID_TABLE_UINT16 = np.array(SIGMOID_TABLE_UINT16_DATA, dtype=np.uint16)
"""TFLite's ``sigmoid_table_uint16``: sigmoid(i / 24) in Q0.16 (65535 at the
end), the table of the int16 LOGISTIC and TANH: a literal of TFLite's C++
that no formula reproduces, read from ``usmp.tflite_tables`` like the
compiler does (the interpolation below is the oracle's own)."""


def gemmlowp_logistic(a: I64, integer_bits: int) -> I64:
    """gemmlowp ``logistic`` of a ``FixedPoint<int32, integer_bits>``; Q0.31."""
    positive = a > 0
    abs_input = np.where(positive, a, _wrap32(-a))
    if_positive = one_over_one_plus_x_for_x_in_0_1(
        exp_on_negative_values(_wrap32(-abs_input), integer_bits)
    )
    if_negative = _wrap32(INT32_MAX - if_positive)
    return np.where(a == 0, 1 << 30, np.where(positive, if_positive, if_negative))


def gemmlowp_tanh(a: I64, integer_bits: int) -> I64:
    """gemmlowp ``tanh`` of a ``FixedPoint<int32, integer_bits>``; Q0.31."""
    negative = a < 0
    n = np.where(negative, a, _wrap32(-a))
    # neg_tanh_on_negative_values: ExactMulByPot<1> keeps the raw value
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(
        exp_on_negative_values(n, integer_bits + 1)
    )
    return np.where(a == 0, 0, np.where(negative, _wrap32(-t), t))


_INT8_INPUT_INTEGER_BITS = 4


def _int8_kernel(
    x: npt.ArrayLike,
    input_zero_point: int,
    input_range_radius: int,
    input_multiplier: int,
    input_left_shift: int,
) -> tuple[I64, I64]:
    """(input minus its zero point, the Q4.27 rescaled input)."""
    v = np.asarray(x).astype(np.int64) - input_zero_point
    inside = np.clip(v, -input_range_radius, input_range_radius)
    q4 = multiply_by_quantized_multiplier(inside, input_multiplier, input_left_shift)
    return v, q4.astype(np.int64)


def logistic_int8(
    x: npt.ArrayLike,
    input_zero_point: int,
    input_range_radius: int,
    input_multiplier: int,
    input_left_shift: int,
) -> npt.NDArray[np.int8]:
    """``reference_integer_ops::Logistic`` (int8; output scale 1/256, zero
    point -128)."""
    v, q4 = _int8_kernel(
        x, input_zero_point, input_range_radius, input_multiplier, input_left_shift
    )
    q0 = gemmlowp_logistic(q4, _INT8_INPUT_INTEGER_BITS)
    out = np.clip(rounding_divide_by_pot(q0, 31 - 8) - 128, -128, 127)
    out = np.where(v <= -input_range_radius, -128, out)
    out = np.where(v >= input_range_radius, 127, out)
    return out.astype(np.int8)


def tanh_int8(
    x: npt.ArrayLike,
    input_zero_point: int,
    input_range_radius: int,
    input_multiplier: int,
    input_left_shift: int,
) -> npt.NDArray[np.int8]:
    """``reference_integer_ops::Tanh`` (int8; output scale 1/128, zero point
    0)."""
    v, q4 = _int8_kernel(
        x, input_zero_point, input_range_radius, input_multiplier, input_left_shift
    )
    q0 = gemmlowp_tanh(q4, _INT8_INPUT_INTEGER_BITS)
    out = np.clip(rounding_divide_by_pot(q0, 31 - 7), -128, 127)
    out = np.where(v <= -input_range_radius, -128, out)
    out = np.where(v >= input_range_radius, 127, out)
    return out.astype(np.int8)


def _table_input(
    x: npt.ArrayLike, input_multiplier: int, input_left_shift: int
) -> tuple[I64, I64]:
    """(the input at scale 1/(3 * 4096) as int32, its absolute value)."""
    if input_multiplier == 0:  # power of two case
        input_multiplier, input_left_shift = 3 << input_left_shift, 0
    if not 0 <= input_left_shift <= 31:
        raise ValueError(f"input_left_shift {input_left_shift} is not in 0..31")
    rounding = (1 << (input_left_shift - 1)) if input_left_shift > 0 else 0
    product = _wrap32(np.asarray(x).astype(np.int64) * input_multiplier + rounding)
    v = product >> input_left_shift
    return v, np.abs(v)


def _interpolate(
    abs_input: I64, fraction_bits: int
) -> tuple[I64, npt.NDArray[np.bool_]]:
    """(``(ua << bits) + ut * (ub - ua)`` at ``abs_input``, whether the index
    ``abs_input >> bits`` is past the table, 255 or more)."""
    uh = abs_input >> fraction_bits
    saturated = uh >= 255
    uh = np.minimum(uh, 254)
    table = SIGMOID_TABLE_UINT16.astype(np.int64)
    ua, ub = table[uh], table[uh + 1]
    ut = abs_input & ((1 << fraction_bits) - 1)
    return (ua << fraction_bits) + ut * (ub - ua), saturated


def logistic_int16(
    x: npt.ArrayLike, input_multiplier: int = 0, input_left_shift: int = 0
) -> npt.NDArray[np.int16]:
    """``reference_integer_ops::Logistic`` (int16 in, Q0.15 out)."""
    v, abs_input = _table_input(x, input_multiplier, input_left_shift)
    result, saturated = _interpolate(abs_input, 9)
    result = np.where(saturated, 0x7FFF << 10, result)
    result = np.where(
        v >= 0, result + (1 << 9), (1 << (16 + 9)) - result + (1 << 9) - 1
    )
    return (result >> 10).astype(np.int16)


def tanh_int16(
    x: npt.ArrayLike, input_multiplier: int = 0, input_left_shift: int = 0
) -> npt.NDArray[np.int16]:
    """``reference_integer_ops::Tanh`` (int16 in, Q0.15 out)."""
    v, abs_input = _table_input(x, input_multiplier, input_left_shift)
    result, saturated = _interpolate(abs_input, 8)
    result = np.where(saturated, 0xFFFF << 8, result)
    result = np.where(
        v >= 0,
        result - (1 << (14 + 9)) + (1 << (9 - 2)),
        -result + (1 << (14 + 9)) + (1 << (9 - 2)) - 1,
    )
    return (result >> (9 - 1)).astype(np.int16)


def table_lookup(x: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``relay.table_lookup``: ``table[x - min]`` for an 8-bit ``x``."""
    if x.dtype not in (np.int8, np.uint8) or table.shape != (256,):
        raise ValueError(
            f"table_lookup: an 8-bit input and 256 values required, got "
            f"{x.dtype} and shape {table.shape}"
        )
    return table[x.astype(np.int64) - np.iinfo(x.dtype).min]


# -- int16 SOFTMAX ------------------------------------------------------------


def _libm_expf() -> Callable[[float], float] | None:
    """The C library's ``expf`` (what TFLite Micro's ``std::exp(float)``
    calls), or ``None`` where it cannot be loaded."""
    name = ctypes.util.find_library("m")
    if name is None:
        return None
    try:
        expf = ctypes.CDLL(name).expf
    except (OSError, AttributeError):
        return None
    expf.restype, expf.argtypes = ctypes.c_float, [ctypes.c_float]
    return expf


_EXPF = _libm_expf()

F32Array = npt.NDArray[np.float32]


def _expf(x: F32Array) -> F32Array:
    """``std::exp(float)`` of every element (libm's ``expf``)."""
    if _EXPF is None:
        return np.exp(x).astype(np.float32)
    expf = _EXPF
    return np.array([expf(float(v)) for v in x.ravel()], np.float32).reshape(x.shape)


def _one_over_one_plus_x(x: F32Array) -> F32Array:
    return np.float32(1.0) / (np.float32(1.0) + x)


def _round_f32(x: F32Array) -> F32Array:
    """``TfLiteRound`` (``std::round``: nearest, ties away from zero) of
    every float32 element; exact (the fraction of a float32 is a float32)."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= np.float32(0.5), t + np.sign(x), t).astype(
        np.float32
    )


def gen_lut_int16(
    func: Callable[[F32Array], F32Array], input_min: float, input_max: float
) -> npt.NDArray[np.int16]:
    """TFLite's ``gen_lut<float, int16_t, int16_t>`` with the output range
    [-1, 1], all 512 steps at once in float32 arrays (each numpy float32
    operation rounds as the C++'s float arithmetic): the sample of ``func``
    at each step minus half the error of the linear interpolation at the
    step's midpoint, then ``func(input_max)`` as the 513th entry."""
    f32 = np.float32
    lo, hi = f32(input_min), f32(input_max)
    step = (hi - lo) / f32(512)
    scale = f32(65536) / f32(2)  # (int16 range + 1) / (output_max - output_min)
    at = lo + np.arange(513, dtype=np.float32) * step  # x_0 .. x_512
    values = func(at)
    midpoints = func(at[:512] + step / f32(2))
    sample = _round_f32(values[:512] * scale)
    interpolated = _round_f32((values[1:] * scale + sample) / f32(2))
    bias = _round_f32((interpolated - _round_f32(midpoints * scale)) / f32(2))
    last = _round_f32(func(np.array([hi], np.float32)) * scale)
    lut = np.concatenate([sample - bias, last])
    return np.clip(lut, -32768, 32767).astype(np.int16)


SOFTMAX_EXP_LUT = gen_lut_int16(_expf, -10.0, 0.0)
"""TFLite Micro's int16 SOFTMAX ``exp_lut``: exp over [-10, 0]."""
SOFTMAX_ONE_OVER_ONE_PLUS_X_LUT = gen_lut_int16(_one_over_one_plus_x, 0.0, 1.0)
"""TFLite Micro's int16 SOFTMAX ``one_over_one_plus_x_lut``: 1/(1+x) over [0, 1]."""


def lut_lookup_int16(value: I64, lut: npt.NDArray[np.int16]) -> I64:
    """TFLite's ``lut_lookup_with_interpolation`` (int16 in and out): linear
    interpolation between ``lut[256 + (value >> 7)]`` and the next entry."""
    index = 256 + (value >> 7)
    offset = value & 0x7F
    table = lut.astype(np.int64)
    base = table[index]
    slope = (table[index + 1] - base).astype(np.int16).astype(np.int64)
    delta = (slope * offset + 64) >> 7
    return (base + delta).astype(np.int16).astype(np.int64)


def _count_leading_zeros(x: I64) -> I64:
    """``CountLeadingZeros(uint32_t(x))`` for ``0 < x < 2**31``."""
    return 32 - np.frexp(x.astype(np.float64))[1].astype(np.int64)


def softmax_int16(
    x: npt.ArrayLike, input_multiplier: int, input_left_shift: int, axis: int = -1
) -> npt.NDArray[np.int16]:
    """``reference_ops::SoftmaxInt16`` over the last axis (output Q0.15):
    ``exp`` of the difference to the row max (rescaled so that [-65535, 0]
    is [-10, 0]) from ``SOFTMAX_EXP_LUT``, the sum's reciprocal from
    ``SOFTMAX_ONE_OVER_ONE_PLUS_X_LUT`` after normalising it by its leading
    zeros, and the rounded product."""
    v = np.asarray(x)
    if v.dtype != np.int16 or v.ndim == 0 or axis not in (-1, v.ndim - 1):
        raise ValueError(
            f"softmax_int16: an int16 input and its last axis required, got "
            f"{v.dtype} and axis {axis} of rank {v.ndim}"
        )
    v = v.astype(np.int64)
    diff = v - v.max(axis=-1, keepdims=True)
    scaled = multiply_by_quantized_multiplier(diff, input_multiplier, input_left_shift)
    symmetric = np.clip(scaled.astype(np.int64) + 32767, -32768, 32767)
    exp = lut_lookup_int16(symmetric, SOFTMAX_EXP_LUT)
    total = exp.sum(axis=-1, keepdims=True)
    headroom_plus_one = _count_leading_zeros(total)
    shifted = ((total << (headroom_plus_one - 1)) + (1 << 13)) >> 14
    centered = np.clip(shifted - ((1 << 15) + (1 << 16)), -32768, 32767)
    reciprocal = lut_lookup_int16(centered, SOFTMAX_ONE_OVER_ONE_PLUS_X_LUT)
    right_shift = 31 - headroom_plus_one
    rounding = np.left_shift(1, right_shift - 1)
    result = (exp * reciprocal + rounding) >> right_shift
    return np.clip(result, 0, 32767).astype(np.int16)


# -- RSQRT ---------------------------------------------------------------------


def inv_sqrt_quantized_multiplier_exp(
    value: npt.ArrayLike, reverse_shift: int
) -> tuple[I64, I64]:
    """TFLite's ``GetInvSqrtQuantizedMultiplierExp``, elementwise on int32
    ``value >= 0``: ``1 / sqrt(value)`` as ``(multiplier, shift)``, by five
    Newton-Raphson steps in Q3.28 (``(INT32_MAX, 0)`` for ``value <= 1``)."""
    value = np.asarray(value).astype(np.int64)
    small = value <= 1
    value = np.maximum(value, 2)
    shift = np.full(value.shape, 11, dtype=np.int64)
    for _ in range(2):  # while (value >= 2**29) value /= 4 (twice at most)
        large = value >= 1 << 29
        value = np.where(large, value // 4, value)
        shift = shift + large
    leading_zeros = 32 - np.frexp(value.astype(np.float64))[1].astype(np.int64)
    pairs = (leading_zeros - 1) // 2 - 1
    shift = shift - pairs
    value = value << (2 * pairs)
    half_input = tflite_kernels.rounding_divide_by_pot(value >> 1, 1)
    half_three = (1 << 28) + (1 << 27)
    srdhm = tflite_kernels.saturating_rounding_doubling_high_mul
    rescale = tflite_kernels.saturating_rounding_multiply_by_pot
    x = np.full(value.shape, 1 << 28, dtype=np.int64)  # F3::One()
    for _ in range(5):
        x3 = rescale(srdhm(srdhm(x, x), x), 6)  # Rescale<3> of an F9
        x = rescale(_wrap32(srdhm(x, half_three) - srdhm(half_input, x3)), 3)
    x = srdhm(x, 1518500250)  # sqrt(2) / 2 in Q0.31
    negative = shift < 0
    x = np.where(negative, _wrap32(x << np.where(negative, -shift, 0)), x)
    shift = np.where(negative, 0, shift)
    return (
        np.where(small, INT32_MAX, x),
        np.where(small, 0, shift * reverse_shift),
    )


def quantized_rsqrt(
    x: npt.ArrayLike,
    input_zero_point: int,
    output_zero_point: int,
    multiplier: int,
    shift: int,
) -> npt.NDArray[np.int8 | np.int16]:
    """TFLite Micro's int8 / int16 RSQRT (``RsqrtEvalQuantized``): ``1 /
    sqrt(x - zp_in)`` from ``GetInvSqrtQuantizedMultiplierExp`` with 20
    extra bits, rescaled by ``(multiplier, shift)`` = ``QuantizeMultiplier(1
    / (sqrt(s_in) * s_out))``, saturated to ``x``'s type; its largest value
    at the zero point. Inputs below the zero point, which TFLite Micro
    refuses at run time, give the largest value too."""
    v = np.asarray(x)
    low, high = np.iinfo(v.dtype).min, np.iinfo(v.dtype).max
    value = v.astype(np.int64) - input_zero_point
    inv_sqrt, inv_shift = inv_sqrt_quantized_multiplier_exp(np.maximum(value, 0), -1)
    data = multiply_by_quantized_multiplier(1, inv_sqrt, inv_shift + 20)
    result = multiply_by_quantized_multiplier(data, multiplier, shift - 20)
    out = np.clip(result.astype(np.int64) + output_zero_point, low, high)
    return np.where(value <= 0, high, out).astype(v.dtype)


# -- int8 L2_NORMALIZATION ------------------------------------------------------


def l2_normalize_int8(
    x: npt.ArrayLike, input_zero_point: int, axis: int = -1
) -> npt.NDArray[np.int8]:
    """``reference_integer_ops::L2Normalization`` over the last axis (output
    scale 1/128, zero point 0): per row the sum of squared centred inputs,
    its ``GetInvSqrtQuantizedMultiplierExp``, and each centred input times
    it with 7 more bits, saturated."""
    v = np.asarray(x)
    if v.dtype != np.int8 or v.ndim == 0 or axis not in (-1, v.ndim - 1):
        raise ValueError(
            f"l2_normalize_int8: an int8 input and its last axis required, got "
            f"{v.dtype} and axis {axis} of rank {v.ndim}"
        )
    centred = v.astype(np.int64) - input_zero_point
    rows = centred.reshape(-1, v.shape[-1])
    totals = wrap_int32((rows * rows).sum(axis=-1, keepdims=True))
    multiplier, shift = inv_sqrt_quantized_multiplier_exp(totals, -1)
    scaled = multiply_by_quantized_multiplier(rows, multiplier, shift + 7)
    out = np.clip(scaled, -128, 127).astype(np.int8)
    return out.reshape(v.shape)
