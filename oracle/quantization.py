"""TFLite / gemmlowp integer arithmetic, vectorised with numpy.

Every function here reproduces, bit for bit, the scalar C++ routine TFLite's
reference kernels (and TFLite Micro's default build) use for int8
requantisation. All functions take scalars or numpy arrays and broadcast
their arguments like numpy ufuncs; results are ``int32`` arrays (or, for
``quantize_multiplier``, Python ints when called with a scalar).

C++ originals (``tensorflow/lite/kernels/internal/``):

* ``saturating_rounding_doubling_high_mul`` — gemmlowp
  ``SaturatingRoundingDoublingHighMul`` (``fixedpoint.h``).
* ``rounding_divide_by_pot`` — gemmlowp ``RoundingDivideByPOT``.
* ``multiply_by_quantized_multiplier`` — ``MultiplyByQuantizedMultiplier``
  (``common.cc``, the double-rounding variant compiled when
  ``TFLITE_SINGLE_ROUNDING`` is not set, which is TFLite Micro's default).
* ``quantize_multiplier`` — ``QuantizeMultiplier`` (``quantization_util.cc``,
  the ``std::frexp`` variant).
* ``rounding_divide`` — the rounding division of the int8 ``AveragePool``
  reference kernel (``acc > 0 ? (acc + n/2)/n : (acc - n/2)/n``).

Undefined behaviour in the C++ (signed overflow of ``x * (1 << left_shift)``)
is given the two's complement wrap-around that every compiler the models
target produces.
"""

from __future__ import annotations

from typing import overload

import numpy as np
import numpy.typing as npt

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

ArrayLike = npt.ArrayLike
Int32Array = npt.NDArray[np.int32]


def wrap_int32(x: ArrayLike) -> Int32Array:
    """Reduce integers modulo 2**32 into int32 (two's complement wrap-around)."""
    return np.asarray(np.asarray(x, dtype=np.int64).astype(np.int32))


def _as_int32_values(x: ArrayLike, what: str) -> npt.NDArray[np.int64]:
    """``x`` as int64, checking every element is a valid int32."""
    a = np.asarray(x)
    if a.dtype.kind not in "iub":
        raise TypeError(f"{what} must be integers, got dtype {a.dtype}")
    a = a.astype(np.int64)
    if a.size and (a.min() < INT32_MIN or a.max() > INT32_MAX):
        raise ValueError(
            f"{what} must be int32 values, got range [{a.min()}, {a.max()}]"
        )
    return a


def _truncating_div_pow2(n: npt.NDArray[np.int64], bits: int) -> npt.NDArray[np.int64]:
    """C integer division ``n / 2**bits`` (rounds toward zero); ``n`` > INT64_MIN."""
    return np.where(n >= 0, n >> bits, -((-n) >> bits))


def saturating_rounding_doubling_high_mul(a: ArrayLike, b: ArrayLike) -> Int32Array:
    """gemmlowp ``SaturatingRoundingDoublingHighMul``: ``a * b / 2**31``
    rounded to nearest, ties toward +infinity.

    The 64-bit product gets a nudge of ``2**30`` (``1 - 2**30`` when
    negative) and is divided by ``2**31`` with C truncation; the asymmetric
    nudge makes ties round up (``1.5 -> 2`` but ``-1.5 -> -1``, ``-0.5 -> 0``).
    The only overflow, ``INT32_MIN * INT32_MIN``, saturates to ``INT32_MAX``.
    """
    a64 = _as_int32_values(a, "a")
    b64 = _as_int32_values(b, "b")
    ab = a64 * b64
    nudge = np.where(ab >= 0, np.int64(1 << 30), np.int64(1 - (1 << 30)))
    high = _truncating_div_pow2(ab + nudge, 31)
    overflow = (a64 == b64) & (a64 == INT32_MIN)
    return np.asarray(np.where(overflow, INT32_MAX, high)).astype(np.int32)


def rounding_divide_by_pot(x: ArrayLike, exponent: ArrayLike) -> Int32Array:
    """gemmlowp ``RoundingDivideByPOT``: ``x / 2**exponent`` rounded to nearest,
    ties away from zero (``-5 / 2 -> -3``, ``5 / 2 -> 3``).

    ``exponent`` must lie in ``[0, 31]``.
    """
    x64 = _as_int32_values(x, "x")
    e = np.asarray(exponent, dtype=np.int64)
    if e.size and (e.min() < 0 or e.max() > 31):
        raise ValueError(
            f"rounding_divide_by_pot: exponent must be in [0, 31], got {e}"
        )
    mask = (np.int64(1) << e) - 1
    remainder = x64 & mask
    threshold = (mask >> 1) + (x64 < 0)
    return np.asarray((x64 >> e) + (remainder > threshold)).astype(np.int32)


def multiply_by_quantized_multiplier(
    x: ArrayLike, multiplier: ArrayLike, shift: ArrayLike
) -> Int32Array:
    """TFLite ``MultiplyByQuantizedMultiplier`` (double rounding):
    ``x * multiplier * 2**(shift - 31)`` in fixed point.

    ``left = max(shift, 0)``, ``right = max(-shift, 0)``;
    result = ``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(
    x * 2**left, multiplier), right)``, where ``x * 2**left`` wraps in int32
    like the C++ (signed overflow). ``x``, ``multiplier`` and ``shift``
    broadcast against each other (per-channel requantisation passes
    per-channel arrays); ``shift`` must lie in ``[-31, 30]``.
    """
    x64 = _as_int32_values(x, "x")
    s = np.asarray(shift, dtype=np.int64)
    if s.size and (s.min() < -31 or s.max() > 30):
        raise ValueError(
            f"multiply_by_quantized_multiplier: shift must be in [-31, 30], got {s}"
        )
    left = np.maximum(s, 0)
    right = np.maximum(-s, 0)
    shifted = wrap_int32(x64 << left)
    return rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(shifted, multiplier), right
    )


def reduced_multiplier(multiplier: ArrayLike) -> npt.NDArray[np.int64]:
    """The 16-bit multiplier of TFLite's 64-bit
    ``MultiplyByQuantizedMultiplier``: ``(m + 2**15) >> 16``, or ``0x7FFF``
    for ``m >= 0x7FFF0000`` (where the rounding would reach ``2**15``)."""
    m = np.asarray(multiplier, dtype=np.int64)
    return np.asarray(np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF))


def multiply_by_quantized_multiplier_int64(
    x: ArrayLike, multiplier: ArrayLike, shift: ArrayLike
) -> Int32Array:
    """TFLite ``MultiplyByQuantizedMultiplier(int64_t x, ...)``, the overload
    of 16x8 (int16 activations, int64 accumulator) kernels, the same in the
    single- and double-rounding builds: with ``m16 = reduced_multiplier(m)``
    and ``t = 15 - shift``, ``(x * m16 + 2**(t - 1)) >> t`` in int64,
    truncated to int32. ``shift`` must lie in ``[-31, 7]`` (TFLite asserts
    it); ``x * m16`` wraps in int64 like the C++ (TFLite asserts
    ``|x| < 2**47``, which rules that out), and so does the final truncation.
    """
    x64 = np.asarray(x)
    if x64.dtype.kind not in "iub":
        raise TypeError(f"x must be integers, got dtype {x64.dtype}")
    x64 = x64.astype(np.int64)
    s = np.asarray(shift, dtype=np.int64)
    if s.size and (s.min() < -31 or s.max() > 7):
        raise ValueError(
            "multiply_by_quantized_multiplier_int64: shift must be in [-31, 7], "
            f"got {s}"
        )
    total = 15 - s
    with np.errstate(over="ignore"):
        result = (
            x64 * reduced_multiplier(multiplier) + (np.int64(1) << (total - 1))
        ) >> total
    return wrap_int32(result)


@overload
def quantize_multiplier(real: float) -> tuple[int, int]: ...
@overload
def quantize_multiplier(
    real: npt.NDArray[np.floating],
) -> tuple[Int32Array, Int32Array]: ...
def quantize_multiplier(
    real: float | npt.NDArray[np.floating],
) -> tuple[int, int] | tuple[Int32Array, Int32Array]:
    """TFLite ``QuantizeMultiplier``: ``real ≈ m * 2**(shift - 31)``.

    ``q, shift = frexp(real)`` (``0.5 <= |q| < 1``),
    ``m = round_half_away(q * 2**31)``; ``m == 2**31`` becomes ``2**30`` with
    ``shift + 1``; a ``shift < -31`` flushes to ``(0, 0)``, as does
    ``real == 0``. Scalars give Python ints, arrays give int32 arrays
    (elementwise). Feed the result to ``multiply_by_quantized_multiplier``.
    """
    r = np.asarray(real, dtype=np.float64)
    if not np.all(np.isfinite(r)):
        raise ValueError(f"quantize_multiplier: multiplier must be finite, got {real}")
    q, e = np.frexp(r)
    q_fixed = round_half_away_from_zero(q * float(1 << 31)).astype(np.int64)
    e = e.astype(np.int64)
    carry = q_fixed == (1 << 31)
    q_fixed = np.where(carry, q_fixed // 2, q_fixed)
    e = np.where(carry, e + 1, e)
    # frexp(0) is (0, 0) already; tiny multipliers flush to zero
    flush = e < -31
    q_fixed = np.where(flush, 0, q_fixed)
    e = np.where(flush, 0, e)
    if np.ndim(real) == 0:
        return int(q_fixed), int(e)
    return q_fixed.astype(np.int32), e.astype(np.int32)


def round_half_away_from_zero(x: ArrayLike) -> npt.NDArray[np.floating]:
    """C ``std::round`` (TFLite's ``TfLiteRound``): nearest integer, ties away
    from zero. Exact: no ``floor(x + 0.5)`` double rounding."""
    a = np.asarray(x)
    if a.dtype.kind != "f":
        a = a.astype(np.float64)
    t = np.trunc(a)
    frac = a - t  # exact for binary floating point
    return np.asarray(np.where(np.abs(frac) >= 0.5, t + np.sign(a), t))


def rounding_divide(acc: ArrayLike, count: ArrayLike) -> npt.NDArray[np.int64]:
    """Integer average of TFLite's int8 ``AveragePool``: ``acc / count``
    rounded to nearest, ties away from zero, computed as in C::

        acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count

    with truncating division. ``count`` must be positive. Returns int64
    (callers narrow to their element type; the result lies between the
    smallest and largest averaged value).
    """
    a = np.asarray(acc, dtype=np.int64)
    n = np.asarray(count, dtype=np.int64)
    if n.size and n.min() <= 0:
        raise ValueError(f"rounding_divide: count must be positive, got {n}")
    num = np.where(a > 0, a + n // 2, a - n // 2)
    q = np.abs(num) // n
    return np.asarray(np.where(num < 0, -q, q))
