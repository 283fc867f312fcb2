"""TFLite/gemmlowp integer arithmetic of the oracle (usmp.oracle.quantization).

Expected values are either worked out by hand (comments show the arithmetic)
or computed from the mathematical definition with exact rationals
(``fractions.Fraction``), independently of the C++-shaped implementation.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from usmp.oracle.quantization import (
    INT32_MAX,
    INT32_MIN,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_int64,
    quantize_multiplier,
    reduced_multiplier,
    round_half_away_from_zero,
    rounding_divide,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
)

int32s = st.integers(INT32_MIN, INT32_MAX)


def round_away(q: Fraction) -> int:
    """Exact round-half-away-from-zero of a rational."""
    r = math.floor(abs(q) + Fraction(1, 2))
    return r if q >= 0 else -r


def round_half_up(q: Fraction) -> int:
    """Exact round-half-toward-+infinity of a rational (gemmlowp's SRDHM)."""
    return math.floor(q + Fraction(1, 2))


def wrap32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


# ------------------------------------------- SaturatingRoundingDoublingHighMul


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (INT32_MIN, INT32_MIN, INT32_MAX),  # the only overflow: saturates
        (INT32_MIN, INT32_MAX, -INT32_MAX),  # -2^31 (2^31 - 1) / 2^31
        (INT32_MAX, INT32_MAX, INT32_MAX - 1),  # (2^31-1)^2/2^31 = 2^31 - 2 + 2^-31
        (100, 1 << 30, 50),  # 100 * 0.5
        # ties round toward +inf (nudge 2^30, or 1 - 2^30 for negatives)
        (3, 1 << 30, 2),  # 1.5 -> 2
        (-3, 1 << 30, -1),  # -1.5 -> -1
        (1, 1 << 30, 1),  # 0.5 -> 1
        (-1, 1 << 30, 0),  # -0.5 -> 0
        (-5, 1 << 30, -2),  # -2.5 -> -2
        (1, 1 << 29, 0),  # 0.25 -> 0
        (-1, 1 << 29, 0),  # -0.25 -> 0
        (-3, 3 << 29, -2),  # -2.25 -> -2
        (-7, 1 << 29, -2),  # -1.75 -> -2
        (0, INT32_MIN, 0),
    ],
)
def test_srdhm_examples(a: int, b: int, expected: int) -> None:
    got = saturating_rounding_doubling_high_mul(a, b)
    assert got.dtype == np.int32
    assert int(got) == expected


@settings(max_examples=200, deadline=None)
@given(int32s, int32s)
def test_srdhm_is_rounded_doubled_high_product(a: int, b: int) -> None:
    expected = (
        INT32_MAX if a == b == INT32_MIN else round_half_up(Fraction(a * b, 2**31))
    )
    assert int(saturating_rounding_doubling_high_mul(a, b)) == expected


def test_srdhm_broadcasts() -> None:
    a = np.array([[1], [3], [-3]], dtype=np.int32)
    b = np.array([1 << 30, 1 << 29], dtype=np.int32)
    np.testing.assert_array_equal(
        # 0.5, 0.25; 1.5, 0.75; -1.5 -> -1, -0.75 -> -1
        saturating_rounding_doubling_high_mul(a, b),
        [[1, 0], [2, 1], [-1, -1]],
    )


def test_srdhm_rejects_non_int32_values() -> None:
    with pytest.raises(ValueError, match="int32"):
        saturating_rounding_doubling_high_mul(2**31, 1)


# ----------------------------------------------------------- RoundingDivideByPOT


@pytest.mark.parametrize(
    ("x", "e", "expected"),
    [
        (5, 1, 3),  # 2.5 -> 3
        (-5, 1, -3),  # -2.5 -> -3 (away from zero, not toward +inf)
        (6, 2, 2),  # 1.5 -> 2
        (-6, 2, -2),  # -1.5 -> -2
        (5, 2, 1),  # 1.25 -> 1
        (-5, 2, -1),  # -1.25 -> -1
        (7, 2, 2),  # 1.75 -> 2
        (-7, 2, -2),
        (12345, 0, 12345),  # exponent 0 is the identity
        (-12345, 0, -12345),
        (INT32_MAX, 31, 1),  # 0.99999... -> 1
        (INT32_MIN, 31, -1),  # -1 exactly
        (-(2**30), 31, -1),  # -0.5 -> -1
        (2**30, 31, 1),  # 0.5 -> 1
        (2**30 - 1, 31, 0),
    ],
)
def test_rounding_divide_by_pot_examples(x: int, e: int, expected: int) -> None:
    assert int(rounding_divide_by_pot(x, e)) == expected


@settings(max_examples=200, deadline=None)
@given(int32s, st.integers(0, 31))
def test_rounding_divide_by_pot_rounds_half_away(x: int, e: int) -> None:
    assert int(rounding_divide_by_pot(x, e)) == round_away(Fraction(x, 2**e))


def test_rounding_divide_by_pot_per_element_exponents() -> None:
    x = np.array([5, -5, 5, -5], dtype=np.int32)
    e = np.array([0, 1, 2, 3])
    # 5, -2.5 -> -3, 1.25 -> 1, -0.625 -> -1
    np.testing.assert_array_equal(rounding_divide_by_pot(x, e), [5, -3, 1, -1])


@pytest.mark.parametrize("e", [-1, 32])
def test_rounding_divide_by_pot_rejects_bad_exponent(e: int) -> None:
    with pytest.raises(ValueError, match=r"\[0, 31\]"):
        rounding_divide_by_pot(1, e)


# ------------------------------------------------ MultiplyByQuantizedMultiplier


@pytest.mark.parametrize(
    ("x", "m", "shift", "expected"),
    [
        (100, 1 << 30, 0, 50),  # * 0.5
        (100, 1 << 30, -1, 25),  # * 0.25
        (100, 1 << 30, 2, 200),  # * 2: left shift before the high mul
        # double rounding: srdhm(5, 0.5) = round(2.5) = 3, then 3/2 = 1.5 -> 2
        # (a single rounding of 5 * 0.25 = 1.25 would give 1)
        (5, 1 << 30, -1, 2),
        # srdhm(-5, 0.5) = -2.5 -> -2, then -2 / 2 = -1
        (-5, 1 << 30, -1, -1),
        # srdhm(-3, 0.5) = -1.5 -> -1, then -1 / 2 = -0.5 -> -1 (away from zero)
        (-3, 1 << 30, -1, -1),
        (0, 1 << 30, -5, 0),
        # 2^20 * 2^12 = 2^32 wraps to 0 in int32 (the C++ signed overflow)
        (1 << 20, 1 << 30, 12, 0),
        # 3 * 2^30 wraps to -2^30; -2^30 * 0.5 = -2^29
        (3, 1 << 30, 30, -(1 << 29)),
        (INT32_MIN, INT32_MIN, 0, INT32_MAX),  # saturation inside
        (INT32_MIN, INT32_MIN, -31, 1),  # INT32_MAX / 2^31 -> 1
    ],
)
def test_multiply_by_quantized_multiplier_examples(
    x: int, m: int, shift: int, expected: int
) -> None:
    assert int(multiply_by_quantized_multiplier(x, m, shift)) == expected


@settings(max_examples=200, deadline=None)
@given(int32s, st.integers(0, INT32_MAX), st.integers(-31, 30))
def test_multiply_by_quantized_multiplier_is_double_rounding(
    x: int, m: int, shift: int
) -> None:
    left, right = max(shift, 0), max(-shift, 0)
    shifted = wrap32(x * 2**left)
    high = (
        INT32_MAX
        if shifted == m == INT32_MIN
        else round_half_up(Fraction(shifted * m, 2**31))
    )
    expected = round_away(Fraction(high, 2**right))
    assert int(multiply_by_quantized_multiplier(x, m, shift)) == expected


@settings(max_examples=200, deadline=None)
@given(
    st.integers(-(2**20), 2**20), st.integers(1 << 30, INT32_MAX), st.integers(-31, 0)
)
def test_multiply_by_quantized_multiplier_approximates_real_product(
    x: int, m: int, shift: int
) -> None:
    # without overflow the result is within one unit of x * m * 2^(shift-31)
    exact = Fraction(x * m, 2 ** (31 - shift))
    assert abs(int(multiply_by_quantized_multiplier(x, m, shift)) - exact) <= 1


def test_multiply_by_quantized_multiplier_per_channel() -> None:
    x = np.array([[100, 100, 100], [-7, -7, -7]], dtype=np.int32)
    m = np.array([1 << 30, 1 << 30, 3 << 29])  # 0.5, 0.5, 0.75
    s = np.array([0, -1, 1])
    # row 0: 50, 25, 150
    # row 1: -3.5 -> -3; srdhm = -3 then -1.5 -> -2; -14 * 0.75 = -10.5 -> -10
    np.testing.assert_array_equal(
        multiply_by_quantized_multiplier(x, m, s), [[50, 25, 150], [-3, -2, -10]]
    )


@pytest.mark.parametrize("shift", [-32, 31])
def test_multiply_by_quantized_multiplier_rejects_bad_shift(shift: int) -> None:
    with pytest.raises(ValueError, match=r"\[-31, 30\]"):
        multiply_by_quantized_multiplier(1, 1 << 30, shift)


# ------------------------------------------- 64-bit MultiplyByQuantizedMultiplier


@pytest.mark.parametrize(
    ("x", "m", "shift", "expected"),
    [
        (1000, 1 << 30, 0, 500),
        (1001, 1 << 30, 0, 501),  # 500.5: ties toward +infinity ...
        (-1001, 1 << 30, 0, -500),  # ... not away from zero (the i32 one: -501)
        (1 << 40, 1 << 30, -20, 1 << 19),  # a sum beyond int32
        (3, INT32_MAX, 7, 384),  # reduced to 0x7FFF: 3 * (2^15 - 1) / 2^8
        (1 << 25, 1 << 30, 7, INT32_MIN),  # 2^31 wraps in the truncation to int32
    ],
)
def test_multiply_by_quantized_multiplier_int64_examples(
    x: int, m: int, shift: int, expected: int
) -> None:
    got = multiply_by_quantized_multiplier_int64(np.int64(x), m, shift)
    assert got.dtype == np.int32 and int(got) == expected


@settings(max_examples=200, deadline=None)
@given(st.integers(-(2**47), 2**47 - 1), st.integers(0, INT32_MAX), st.integers(-31, 7))
def test_multiply_by_quantized_multiplier_int64_rounds_half_up(
    x: int, m: int, shift: int
) -> None:
    m16 = 0x7FFF if m >= 0x7FFF0000 else round_half_up(Fraction(m, 2**16))
    assert int(reduced_multiplier(m)) == m16
    expected = wrap32(round_half_up(Fraction(x * m16, 2 ** (15 - shift))))
    assert int(multiply_by_quantized_multiplier_int64(np.int64(x), m, shift)) == (
        expected
    )


@pytest.mark.parametrize("shift", [-32, 8])
def test_multiply_by_quantized_multiplier_int64_rejects_bad_shift(shift: int) -> None:
    with pytest.raises(ValueError, match=r"\[-31, 7\]"):
        multiply_by_quantized_multiplier_int64(1, 1 << 30, shift)


# ---------------------------------------------------------- QuantizeMultiplier


@pytest.mark.parametrize(
    ("real", "expected"),
    [
        (0.0, (0, 0)),
        (0.5, (1 << 30, 0)),
        (1.0, (1 << 30, 1)),
        (0.25, (1 << 30, -1)),
        (0.75, (3 << 29, 0)),
        (3.0, (3 << 29, 2)),
        (-0.5, (-(1 << 30), 0)),
        # q * 2^31 rounds up to 2^31: halved, shift incremented
        (1.0 - 2.0**-40, (1 << 30, 1)),
        (2.0**-31, (1 << 30, -30)),
        (2.0**-32, (1 << 30, -31)),
        (2.0**-33, (0, 0)),  # shift < -31 flushes to zero
    ],
)
def test_quantize_multiplier_examples(real: float, expected: tuple[int, int]) -> None:
    got = quantize_multiplier(real)
    assert got == expected
    assert all(type(v) is int for v in got)


@settings(max_examples=200, deadline=None)
@given(st.floats(2.0**-31, 2.0**20, allow_nan=False, allow_infinity=False))
def test_quantize_multiplier_reconstructs_the_real(real: float) -> None:
    m, shift = quantize_multiplier(real)
    assert (1 << 30) <= m <= INT32_MAX
    # m / 2^31 is q rounded to 31 fraction bits: error at most half a unit
    err = abs(Fraction(m) * Fraction(2) ** (shift - 31) - Fraction(real))
    assert err <= Fraction(2) ** (shift - 32)


def test_quantize_multiplier_arrays() -> None:
    m, s = quantize_multiplier(np.array([0.5, 0.75, 0.0, 1.0]))
    assert m.dtype == np.int32 and s.dtype == np.int32
    np.testing.assert_array_equal(m, [1 << 30, 3 << 29, 0, 1 << 30])
    np.testing.assert_array_equal(s, [0, 0, 0, 1])


def test_quantize_multiplier_rejects_non_finite() -> None:
    with pytest.raises(ValueError, match="finite"):
        quantize_multiplier(float("inf"))


# ------------------------------------------------------------------- rounding


def test_round_half_away_from_zero() -> None:
    x = np.array([0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, 2.4, -2.6])
    np.testing.assert_array_equal(
        round_half_away_from_zero(x), [1, -1, 2, -2, 3, -3, 0, 2, -3]
    )


@pytest.mark.parametrize(
    ("acc", "n", "expected"),
    [
        (5, 2, 3),  # 2.5 -> 3
        (-5, 2, -3),  # -2.5 -> -3
        (7, 2, 4),
        (-7, 2, -4),
        (4, 3, 1),  # (4 + 1) / 3 = 1
        (-4, 3, -1),  # (-4 - 1) / 3 = -1 (C truncation)
        (6, 4, 2),  # 1.5 -> 2
        (-6, 4, -2),
        (5, 4, 1),  # 1.25 -> 1
        (0, 9, 0),
        (-1, 9, 0),
        (-128 * 9, 9, -128),
    ],
)
def test_rounding_divide_examples(acc: int, n: int, expected: int) -> None:
    assert int(rounding_divide(acc, n)) == expected


@settings(max_examples=200, deadline=None)
@given(int32s, st.integers(1, 10_000))
def test_rounding_divide_rounds_half_away(acc: int, n: int) -> None:
    assert int(rounding_divide(acc, n)) == round_away(Fraction(acc, n))


def test_rounding_divide_rejects_non_positive_count() -> None:
    with pytest.raises(ValueError, match="positive"):
        rounding_divide(3, 0)
