"""The tables the compiler computes at compile time against the oracle's own
derivation of the same numbers (DESIGN: the reference stays independent).

The compiler (importer and lowering) and the oracle compute each table with
their own code: the int8 LOGISTIC / TANH / RSQRT tables of the importer
(``usmp.frontend.gemmlowp``, scalar) and the oracle's kernels (numpy); the
int16 SOFTMAX lookup tables (``usmp.lowering.tflite_luts``, a scalar loop;
the oracle's ``gen_lut_int16``, float32 arrays); the bilinear resize's
coordinates (``usmp.lowering.ops_image.bilinear_axis``, arrays; the oracle,
one output position at a time); the zero divisor's reciprocal of int8 DIV
(a constant of ``usmp.lowering.ops_divide``). Only TFLite's literal
``sigmoid_table_uint16`` is shared (``usmp.tflite_tables``). Both sides are
also compared with TFLite Micro by the operator tests.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from usmp.frontend import gemmlowp
from usmp.frontend import quantization as q
from usmp.lowering import ops_divide, ops_image, tflite_luts
from usmp.oracle import image_kernels, tflite_activations, tflite_kernels
from usmp.oracle import quantization as oq
from usmp.tflite_tables import SIGMOID_TABLE_UINT16

EVERY_INT8 = np.arange(-128, 128, dtype=np.int64)

# scales whose multipliers take every path: tiny (inputs saturate), the
# radius inside the int8 range, shifts of both signs
INT8_SCALES = (0.002, 0.01, 0.05, 0.0625, 0.1, 0.3, 1.0, 2.0, 1e-4)
ZERO_POINTS = (-128, -3, 0, 20, 127)


@pytest.mark.parametrize(
    ("scale", "zero_point"), list(itertools.product(INT8_SCALES, ZERO_POINTS))
)
def test_int8_logistic_and_tanh_tables(scale: float, zero_point: int) -> None:
    multiplier, shift, radius = q.logistic_tanh_int8_params(q.f32(scale))
    args = (zero_point, radius, multiplier, shift)
    logistic = tflite_activations.logistic_int8(EVERY_INT8, *args)
    tanh = tflite_activations.tanh_int8(EVERY_INT8, *args)
    assert list(gemmlowp.logistic_int8_table(*args)) == logistic.tolist()
    assert list(gemmlowp.tanh_int8_table(*args)) == tanh.tolist()


@pytest.mark.parametrize(
    ("in_scale", "out_scale", "zero_points"),
    [
        (0.05, 0.02, (-3, 5)),
        (1.0, 0.01, (0, 0)),
        (0.001, 0.5, (-128, 127)),
        (0.3, 0.004, (100, -100)),
        (0.02, 0.02, (-128, -128)),
    ],
)
def test_int8_rsqrt_table(
    in_scale: float, out_scale: float, zero_points: tuple[int, int]
) -> None:
    multiplier, shift = q.rsqrt_multiplier(q.f32(in_scale), q.f32(out_scale))
    want = tflite_activations.quantized_rsqrt(
        EVERY_INT8.astype(np.int8), *zero_points, multiplier, shift
    )
    got = gemmlowp.rsqrt_int8_table(*zero_points, multiplier, shift)
    assert list(got) == want.tolist()


def test_gemmlowp_primitives_on_random_int32() -> None:
    """The importer's scalar primitives against the oracle's vectorised ones,
    including the extremes where the C++ saturates or wraps."""
    rng = np.random.default_rng(25)
    values = [oq.INT32_MIN, oq.INT32_MIN + 1, -1, 0, 1, oq.INT32_MAX]
    values += rng.integers(oq.INT32_MIN, oq.INT32_MAX, 300, endpoint=True).tolist()
    a = np.array(values, np.int64)
    b = np.roll(a, 7)
    assert [gemmlowp.srdhm(x, y) for x, y in zip(values, b.tolist(), strict=True)] == (
        tflite_kernels.saturating_rounding_doubling_high_mul(a, b).tolist()
    )
    for exponent in (0, 1, 5, 30, 31):
        want = tflite_kernels.rounding_divide_by_pot(a, exponent).tolist()
        assert [gemmlowp.rounding_divide_by_pot(x, exponent) for x in values] == want
    for exponent in (-3, 0, 2, 6):
        want = tflite_kernels.saturating_rounding_multiply_by_pot(a, exponent)
        got = [gemmlowp.saturating_multiply_by_pot(x, exponent) for x in values]
        assert got == want.tolist()
    negative = -np.abs(a[a > oq.INT32_MIN])
    for integer_bits in (0, 4, 5, 6):
        want = tflite_kernels.exp_on_negative_values(negative, integer_bits)
        got = [gemmlowp.exp_on_negative_values(x, integer_bits) for x in negative]
        assert got == want.tolist()
    for x in (a[a >= 0].tolist() + [0, 1, 2, 3, 1 << 29, (1 << 29) - 1])[:60]:
        want_m, want_s = tflite_activations.inv_sqrt_quantized_multiplier_exp(x, -1)
        got_m, got_s = gemmlowp.inv_sqrt_quantized_multiplier_exp(x, -1)
        assert (got_m, got_s) == (int(want_m), int(want_s))


def test_int16_softmax_luts() -> None:
    np.testing.assert_array_equal(
        tflite_luts.softmax_exp_lut(), tflite_activations.SOFTMAX_EXP_LUT
    )
    np.testing.assert_array_equal(
        tflite_luts.softmax_one_over_one_plus_x_lut(),
        tflite_activations.SOFTMAX_ONE_OVER_ONE_PLUS_X_LUT,
    )


def test_zero_divisor_reciprocal() -> None:
    want = tflite_kernels.one_over_one_plus_x_for_x_in_0_1(
        np.array([oq.INT32_MIN], np.int64)
    )
    assert ops_divide._ZERO_DIVISOR_INVERSE == int(want[0])  # pyright: ignore[reportPrivateUsage]


SIZES = (1, 2, 3, 4, 5, 7, 8, 13, 16, 32)


@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize(
    ("align_corners", "half_pixel_centers"),
    [(False, False), (True, False), (False, True)],
)
def test_bilinear_coordinates(
    integer: bool, align_corners: bool, half_pixel_centers: bool
) -> None:
    for in_size, out_size in itertools.product(SIZES, SIZES):
        tables = ops_image.bilinear_axis(
            in_size, out_size, align_corners, half_pixel_centers, integer
        )
        lower, upper, weight = image_kernels._axis(  # pyright: ignore[reportPrivateUsage]
            in_size, out_size, align_corners, half_pixel_centers, integer
        )
        assert tables.lower.tolist() == lower
        assert tables.upper.tolist() == upper
        assert tables.weight.tolist() == weight.tolist()


def test_the_shared_sigmoid_table_is_tflites() -> None:
    """The one shared table is data: 256 increasing Q0.16 values of
    sigmoid(i / 24), each within 1.5 units of the formula (which does not
    reproduce it exactly), the last saturated."""
    table = list(SIGMOID_TABLE_UINT16)
    assert len(table) == 256 and table[0] == 32768 and table[-1] == 65535
    assert all(a <= b for a, b in itertools.pairwise(table))
    for i, v in enumerate(table[:-1]):
        assert abs(v - 65536 / (1 + math.exp(-i / 24))) <= 1.5
