"""TFLite's prepare-time quantisation arithmetic, in plain Python.

The importer computes requantisation parameters exactly as TFLite Micro's
kernels do in their ``Prepare`` step (``quantization_util.cc``,
``kernel_util.cc``, ``*_common.cc``), so that the relay chain it emits is
bit-exact with the interpreter. Every function names the TFLite function it
mirrors. The precision of each intermediate (float32 vs double) decides the
last bits of a multiplier, and it is that of the reference, the
``tflite-micro`` package's interpreter: its build widens the float32 scales
to double before every product and quotient (read from the machine code of
its ``Prepare`` functions, ``cvtss2sd`` then ``mulsd``/``divsd``), also where
the C++ sources compute in float (``leaky_relu_common.cc``,
``hard_swish_common.cc``, ``svdf_common.cc``, ``GetQuantizedConvolution
Multipler``); the exceptions are spelled out (HARD_SWISH's high-resolution
input scale, the fused activations' ``Quantize``).
``tests/test_quantize_multipliers.py`` checks each formula against the
interpreter at scales where float32 and double disagree.

Nothing here imports xDSL.
"""

from __future__ import annotations

import math
from enum import IntEnum

import numpy as np


class Activation(IntEnum):
    """TFLite ``ActivationFunctionType``."""

    NONE = 0
    RELU = 1
    RELU_N1_TO_1 = 2
    RELU6 = 3
    TANH = 4
    SIGN_BIT = 5


def tflite_round(x: float) -> float:
    """``TfLiteRound`` (C ``round``): nearest, ties away from zero (exact: no
    ``floor(x + 0.5)``, which misrounds 0.49999999999999994)."""
    t = float(math.trunc(x))
    return t + math.copysign(1.0, x) if abs(x - t) >= 0.5 else t


def quantize_multiplier(real: float) -> tuple[int, int]:
    """``QuantizeMultiplier``: ``real ~= multiplier * 2**(shift - 31)``.

    Returns ``(multiplier, shift)`` with ``multiplier`` in ``[2**30, 2**31)``
    (or 0), exactly as TFLite (double-rounding build): ``frexp``, round
    ``q * 2**31`` half away from zero, carry ``2**31`` into the exponent,
    flush shifts below -31 to zero.
    """
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    q_fixed = int(tflite_round(q * float(1 << 31)))
    if q_fixed == 1 << 31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q_fixed, shift


def quantize_multiplier_smaller_than_one_exp(real: float) -> tuple[int, int]:
    """``QuantizeMultiplierSmallerThanOneExp``: as ``quantize_multiplier`` for
    ``0 < real < 1`` (the shift is then <= 0)."""
    if not 0.0 < real < 1.0:
        raise ValueError(f"multiplier {real} is not in (0, 1)")
    return quantize_multiplier(real)


def f32(x: float) -> float:
    """Round a Python float to float32 (TFLite stores scales as float)."""
    return float(np.float32(x))


def conv_multipliers(
    input_scale: float, filter_scales: list[float], output_scale: float
) -> tuple[list[int], list[int]]:
    """Per-channel ``(multiplier, shift)`` of CONV_2D / DEPTHWISE_CONV_2D and
    per-channel FULLY_CONNECTED (``PopulateConvolutionQuantizationParams``):
    ``double(input_scale) * double(filter_scale) / double(output_scale)``."""
    pairs = [
        quantize_multiplier(float(input_scale) * float(s) / float(output_scale))
        for s in filter_scales
    ]
    return [m for m, _ in pairs], [s for _, s in pairs]


def fully_connected_multiplier(
    input_scale: float, filter_scale: float, output_scale: float
) -> tuple[int, int]:
    """Per-tensor FULLY_CONNECTED and the LSTM's gates
    (``GetQuantizedConvolutionMultipler``): ``double(input_scale) *
    double(filter_scale) / double(output_scale)`` (the sources multiply in
    float32; the interpreter's build in double)."""
    return quantize_multiplier(
        float(input_scale) * float(filter_scale) / float(output_scale)
    )


def leaky_relu_alpha_multiplier(
    input_scale: float, alpha: float, output_scale: float
) -> tuple[int, int]:
    """LEAKY_RELU's multiplier of negative inputs (``CalculateOpDataLeakyRelu``):
    ``double(input_scale) * double(alpha) / double(output_scale)``; ``alpha``
    is the option's float32."""
    return quantize_multiplier(
        float(input_scale) * float(np.float32(alpha)) / float(output_scale)
    )


HARD_SWISH_RELUISH_SCALE = 3.0 / 32768.0
"""``reluish_scale`` of HARD_SWISH (exact in float32)."""


def hard_swish_multipliers(
    input_scale: float, output_scale: float
) -> tuple[tuple[int, int], tuple[int, int]]:
    """int8 HARD_SWISH (``HardSwishPrepare``): the 32-bit ``(multiplier,
    exponent)`` of the output and of the "reluish" value, before
    ``DownScaleInt32ToInt16Multiplier``. The high-resolution input scale is
    the float32 product ``(1.0f / 128.0f) * input_scale``; the two quotients
    by the output scale and by ``3 / 32768`` are in double."""
    hires = float(np.float32(np.float32(1.0 / 128.0) * np.float32(input_scale)))
    return (
        quantize_multiplier(hires / float(output_scale)),
        quantize_multiplier(hires / HARD_SWISH_RELUISH_SCALE),
    )


def div_multiplier(
    input1_scale: float, input2_scale: float, output_scale: float
) -> tuple[int, int]:
    """int8 DIV (``DivPrepare``): ``double(s1) / (double(s2) * double(s_out))``."""
    return quantize_multiplier(
        float(input1_scale) / (float(input2_scale) * float(output_scale))
    )


def svdf_multipliers(
    input_scale: float,
    weights_feature_scale: float,
    weights_time_scale: float,
    state_scale: float,
    output_scale: float,
) -> tuple[tuple[int, int], tuple[int, int]]:
    """int8 SVDF (``PrepareSvdf``): ``effective_scale_1 = input ·
    weights_feature / state`` and ``effective_scale_2 = state · weights_time /
    output``, each in double (the sources compute them in float32; the
    interpreter's build in double)."""
    return (
        quantize_multiplier(
            float(input_scale) * float(weights_feature_scale) / float(state_scale)
        ),
        quantize_multiplier(
            float(state_scale) * float(weights_time_scale) / float(output_scale)
        ),
    )


def _quantize_f32(value: float, scale: float, zero_point: int) -> int:
    """kernel_util.cc ``Quantize``: ``zero_point + round(float(f) / scale)``
    with the division in float32."""
    tmp = float(np.float32(value) / np.float32(scale))
    return zero_point + int(tflite_round(tmp))


def activation_range_quantized(
    activation: Activation, scale: float, zero_point: int, qmin: int, qmax: int
) -> tuple[int, int]:
    """``CalculateActivationRangeQuantized``: the clamp of a fused activation
    on a quantised output."""
    if activation == Activation.RELU:
        return max(qmin, _quantize_f32(0.0, scale, zero_point)), qmax
    if activation == Activation.RELU6:
        return (
            max(qmin, _quantize_f32(0.0, scale, zero_point)),
            min(qmax, _quantize_f32(6.0, scale, zero_point)),
        )
    if activation == Activation.RELU_N1_TO_1:
        return (
            max(qmin, _quantize_f32(-1.0, scale, zero_point)),
            min(qmax, _quantize_f32(1.0, scale, zero_point)),
        )
    if activation == Activation.NONE:
        return qmin, qmax
    raise ValueError(f"fused activation {activation.name} has no quantised range")


def activation_range_float(activation: Activation) -> tuple[float, float] | None:
    """``CalculateActivationRange`` for float outputs; ``None`` = no clamp."""
    if activation == Activation.NONE:
        return None
    if activation == Activation.RELU:
        return 0.0, math.inf
    if activation == Activation.RELU6:
        return 0.0, 6.0
    if activation == Activation.RELU_N1_TO_1:
        return -1.0, 1.0
    raise ValueError(f"fused activation {activation.name} is not a clamp")


ADD_LEFT_SHIFT_INT8 = 20
"""``left_shift`` of int8 ADD and SUB (``add_common.cc``, ``sub_common.cc``)."""

ADD_LEFT_SHIFT_INT16 = 15
"""``left_shift`` of int16 ADD and SUB: ``65535 << 15`` still fits in int32."""


def add_multipliers(
    input1_scale: float,
    input2_scale: float,
    output_scale: float,
    left_shift: int = ADD_LEFT_SHIFT_INT8,
) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """int8 / int16 ADD and SUB (``CalculateOpDataAdd``): ``(multiplier,
    shift)`` of input 1, input 2 and the output, each by
    ``QuantizeMultiplierSmallerThanOneExp``; ``left_shift`` is 20 for int8
    and 15 for int16."""
    twice_max = 2.0 * float(max(np.float32(input1_scale), np.float32(input2_scale)))
    real1 = float(input1_scale) / twice_max
    real2 = float(input2_scale) / twice_max
    real_out = twice_max / (float(1 << left_shift) * float(output_scale))
    return (
        quantize_multiplier_smaller_than_one_exp(real1),
        quantize_multiplier_smaller_than_one_exp(real2),
        quantize_multiplier_smaller_than_one_exp(real_out),
    )


SOFTMAX_SCALED_DIFF_INTEGER_BITS = 5
"""``kScaledDiffIntegerBits`` of the int8 softmax (Q5.26 input differences)."""


def softmax_params(beta: float, input_scale: float) -> tuple[int, int, int]:
    """int8 SOFTMAX (``CalculateSoftmaxParams``): ``(input_multiplier,
    input_left_shift, diff_min)`` via ``PreprocessSoftmaxScaling`` and
    ``CalculateInputRadius`` (double-rounding build)."""
    bits = SOFTMAX_SCALED_DIFF_INTEGER_BITS
    max_real_multiplier = float((1 << 31) - 1)
    real = min(
        float(beta) * float(input_scale) * float(1 << (31 - bits)), max_real_multiplier
    )
    multiplier, left_shift = quantize_multiplier(real)
    if real <= 1.0 or left_shift < 0:
        raise ValueError(
            f"softmax input multiplier {real} must be greater than one "
            "(QuantizeMultiplierGreaterThanOne)"
        )
    radius = math.floor(
        1.0 * ((1 << bits) - 1) * float(1 << (31 - bits)) / float(1 << left_shift)
    )
    return multiplier, left_shift, -radius


def requantize_multiplier(input_scale: float, output_scale: float) -> tuple[int, int]:
    """``QuantizeMultiplier(double(input_scale) / double(output_scale))``:
    integer -> integer QUANTIZE (``PrepareQuantizeReference``: int8, int16
    and int32 in and out), MEAN and SUM (``PrepareMeanOrSum``), RELU
    (``ReluPrepare``), ABS (``SetAbsOutputMultiplier``) and LEAKY_RELU's
    identity multiplier (``CalculateOpDataLeakyRelu``)."""
    return quantize_multiplier(float(input_scale) / float(output_scale))


def checked_log2(x: float) -> tuple[int, bool]:
    """``CheckedLog2``: (``round(log2(x))``, whether ``x`` is within 1e-3 of
    that power of two in log2), computed in float32 as TFLite does."""
    log2 = np.float32(np.log(np.float32(x))) * (
        np.float32(1.0) / np.float32(np.log(np.float32(2.0)))
    )
    rounded = tflite_round(float(np.float32(log2)))
    return int(rounded), abs(float(np.float32(log2) - np.float32(rounded))) < 1e-3


def logistic_tanh_int8_params(input_scale: float) -> tuple[int, int, int]:
    """int8 LOGISTIC and TANH (``CalculateArithmeticOpData*``): ``(multiplier,
    left_shift, input_range_radius)`` bringing the input to Q4.27:
    ``frexp(double(scale) * 2**27)``, the fraction rounded to 31 bits (no
    carry, as TFLite), ``CalculateInputRadius(4, left_shift, 31)``."""
    q, left_shift = math.frexp(float(input_scale) * float(1 << 27))
    multiplier = int(tflite_round(q * float(1 << 31)))
    if not 0 <= left_shift <= 30 or multiplier >= 1 << 31:
        raise ValueError(
            f"input scale {input_scale} is out of the range TFLite Micro's int8 "
            "LOGISTIC/TANH supports (2**-28 to 8)"
        )
    radius = math.floor(15.0 * float(1 << 27) / float(1 << left_shift))
    return multiplier, left_shift, radius


def logistic_tanh_int16_params(input_scale: float, tanh: bool) -> tuple[int, int]:
    """int16 LOGISTIC (``tanh=False``) and TANH: ``(input_multiplier,
    input_left_shift)`` of TFLite Micro's Prepare. A power-of-two scale with
    ``left_shift = 12 + log2(scale)`` equal to 0 (or 1 for TANH) gives
    ``(0, left_shift)`` (the kernel multiplies by ``3 << left_shift``);
    any other scale ``int(scale * 3 * 4096 * 2**left_shift)`` with the
    smallest ``left_shift`` that brings it above 32767 / 2."""
    log2, is_pot = checked_log2(input_scale)
    left_shift = 12 + log2
    if is_pot and left_shift in ((0, 1) if tanh else (0,)):
        return 0, left_shift
    multiplier = float(input_scale) * 4096.0 * 3.0
    left_shift = 0
    while multiplier <= 32767.0 / 2.0 and left_shift <= 30:
        left_shift += 1
        multiplier *= 2.0
    if multiplier > 32767.0:
        raise ValueError(
            f"input scale {input_scale} is too large for TFLite Micro's int16 "
            "LOGISTIC/TANH (at most 32767 / (3 * 4096))"
        )
    return int(multiplier), left_shift


def softmax_int16_params(beta: float, input_scale: float) -> tuple[int, int]:
    """int16 SOFTMAX (``CalculateSoftmaxParams``): ``QuantizeMultiplier(
    double(scale) * double(beta) / (10 / 65535))``, which maps input
    differences of [-65535, 0] to [-10, 0] (the ``exp`` table's range)."""
    return quantize_multiplier(float(input_scale) * float(beta) / (10.0 / 65535.0))


def rsqrt_multiplier(input_scale: float, output_scale: float) -> tuple[int, int]:
    """int8 and int16 RSQRT (``SetRsqrtOutputMultiplier``): ``QuantizeMultiplier(1 /
    (sqrt(double(s_in)) * double(s_out)))``."""
    return quantize_multiplier(
        1.0 / (math.sqrt(float(input_scale)) * float(output_scale))
    )
