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

Scales are whatever the file holds, 0, negative, NaN or infinite included
(TFLite Micro loads them all), and the arithmetic is IEEE's, as in C: a
division by 0 is an infinity or a NaN (``div``), not a Python exception. A
finite result is mirrored, 0 (``QuantizeMultiplier(0)`` is ``(0, 0)``) and
negative multipliers included; where TFLite Micro's result is undefined a
``ScaleError`` says why: a multiplier that is not finite (``frexp``'s
exponent is then unspecified and the conversion to an integer undefined
behaviour), a ``TFLITE_CHECK`` that aborts (``QuantizeMultiplierSmallerThan
OneExp``, ``...GreaterThanOne``), a bound of a fused activation that is no
int32. The importer turns it into an error naming the operator and the
scales of its tensors (``tflite_import``).

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


class ScaleError(ValueError):
    """The operator's scales give a computation TFLite Micro does not define
    (see the module doc); the message says which value and why."""


def div(a: float, b: float) -> float:
    """``a / b`` in IEEE double, as C divides: ``x / 0`` is an infinity (a
    NaN for ``0 / 0``) instead of Python's ``ZeroDivisionError``. Python's
    own division is that IEEE division for every other divisor (NaN and
    infinite operands, overflow to an infinity included), without numpy's
    error-state context (18,000 calls importing MobileNetV2)."""
    if b != 0.0:
        return float(a) / float(b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return float(np.float64(a) / np.float64(b))


def tflite_round(x: float) -> float:
    """``TfLiteRound`` (C ``round``): nearest, ties away from zero (exact: no
    ``floor(x + 0.5)``, which misrounds 0.49999999999999994)."""
    t = float(math.trunc(x))
    return t + math.copysign(1.0, x) if abs(x - t) >= 0.5 else t


def quantize_multiplier(
    real: float, formula: str = "the multiplier"
) -> tuple[int, int]:
    """``QuantizeMultiplier``: ``real ~= multiplier * 2**(shift - 31)``.

    Returns ``(multiplier, shift)`` with ``|multiplier|`` in ``[2**30,
    2**31]`` (or 0), exactly as TFLite (double-rounding build): ``frexp``,
    round ``q * 2**31`` half away from zero, carry ``2**31`` into the
    exponent, flush shifts below -31 to zero. A negative ``real`` gives a
    negative multiplier, as in TFLite. ``ScaleError`` for a ``real`` that is
    not finite (``formula`` names it in the message).
    """
    if real == 0.0:
        return 0, 0
    if not math.isfinite(real):
        raise ScaleError(
            f"{formula} is {real}, for which TFLite Micro's QuantizeMultiplier is "
            "undefined"
        )
    q, shift = math.frexp(real)
    q_fixed = int(tflite_round(q * float(1 << 31)))
    if q_fixed == 1 << 31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q_fixed, shift


def quantize_multiplier_smaller_than_one_exp(
    real: float, formula: str = "the multiplier"
) -> tuple[int, int]:
    """``QuantizeMultiplierSmallerThanOneExp``: as ``quantize_multiplier`` for
    ``0 < real < 1`` (the shift is then <= 0); TFLite Micro aborts for any
    other value, hence ``ScaleError``."""
    if not 0.0 < real < 1.0:
        raise ScaleError(
            f"{formula} is {real}; TFLite Micro's QuantizeMultiplierSmallerThanOneExp "
            "aborts unless it is in (0, 1)"
        )
    return quantize_multiplier(real, formula)


def f32(x: float) -> float:
    """Round a Python float to float32 (TFLite stores scales as float)."""
    return float(np.float32(x))


def conv_multipliers(
    input_scale: float, filter_scales: list[float], output_scale: float
) -> tuple[list[int], list[int]]:
    """Per-channel ``(multiplier, shift)`` of CONV_2D / DEPTHWISE_CONV_2D and
    per-channel FULLY_CONNECTED (``PopulateConvolutionQuantizationParams``):
    ``double(input_scale) * double(filter_scale) / double(output_scale)``.

    ``quantize_multiplier`` on every channel at once (thousands of channels
    per model): the same IEEE double operations (``frexp``, the scaling by
    ``2**31`` and the rounding are exact), so the same numbers; a scale that
    is not finite is the scalar code's error, at the first such channel."""
    formula = "input scale * filter scale / output scale"
    scales = np.array(filter_scales, dtype=np.float64)  # (Python floats: exact)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        reals = scales * float(input_scale) / np.float64(float(output_scale))
    if not np.isfinite(reals).all():
        for real in reals.tolist():
            quantize_multiplier(real, formula)  # raises ScaleError
    q, shifts = np.frexp(reals)
    scaled = q * float(1 << 31)
    t = np.trunc(scaled)
    rounded = np.where(np.abs(scaled - t) >= 0.5, t + np.copysign(1.0, scaled), t)
    fixed = rounded.astype(np.int64)
    carry = fixed == 1 << 31
    fixed[carry] //= 2
    shift = shifts.astype(np.int64) + carry
    flushed = (shift < -31) | (reals == 0.0)
    fixed[flushed] = 0
    shift[flushed] = 0
    return fixed.tolist(), shift.tolist()


def fully_connected_multiplier(
    input_scale: float, filter_scale: float, output_scale: float
) -> tuple[int, int]:
    """Per-tensor FULLY_CONNECTED and the LSTM's gates
    (``GetQuantizedConvolutionMultipler``): ``double(input_scale) *
    double(filter_scale) / double(output_scale)`` (the sources multiply in
    float32; the interpreter's build in double). TFLite Micro refuses a
    product that is not ``>= 0`` (``ScaleError``)."""
    product = float(input_scale) * float(filter_scale)
    if not product >= 0:
        raise ScaleError(
            f"input scale * filter scale is {product}; TFLite Micro refuses one that "
            "is negative or NaN (GetQuantizedConvolutionMultipler)"
        )
    return quantize_multiplier(
        div(product, output_scale), "input scale * filter scale / output scale"
    )


def leaky_relu_alpha_multiplier(
    input_scale: float, alpha: float, output_scale: float
) -> tuple[int, int]:
    """LEAKY_RELU's multiplier of negative inputs (``CalculateOpDataLeakyRelu``):
    ``double(input_scale) * double(alpha) / double(output_scale)``; ``alpha``
    is the option's float32."""
    return quantize_multiplier(
        div(float(input_scale) * float(np.float32(alpha)), output_scale),
        "input scale * alpha / output scale",
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
    with np.errstate(over="ignore", invalid="ignore"):
        hires = float(np.float32(np.float32(1.0 / 128.0) * np.float32(input_scale)))
    return (
        quantize_multiplier(
            div(hires, output_scale), "input scale / 128 / output scale"
        ),
        quantize_multiplier(
            div(hires, HARD_SWISH_RELUISH_SCALE), "input scale / 128 / (3 / 32768)"
        ),
    )


def div_multiplier(
    input1_scale: float, input2_scale: float, output_scale: float
) -> tuple[int, int]:
    """int8 DIV (``DivPrepare``): ``double(s1) / (double(s2) * double(s_out))``."""
    return quantize_multiplier(
        div(input1_scale, float(input2_scale) * float(output_scale)),
        "input 1 scale / (input 2 scale * output scale)",
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
            div(float(input_scale) * float(weights_feature_scale), state_scale),
            "input scale * weights_feature scale / state scale",
        ),
        quantize_multiplier(
            div(float(state_scale) * float(weights_time_scale), output_scale),
            "state scale * weights_time scale / output scale",
        ),
    )


def _quantize_f32(value: float, scale: float, zero_point: int) -> int:
    """kernel_util.cc ``Quantize``: ``zero_point + round(float(f) / scale)``
    with the division in float32; ``ScaleError`` where TFLite Micro refuses
    it (the rounded quotient is no int32: a NaN, an infinity)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        tmp = float(np.float32(value) / np.float32(scale))
    rounded = tflite_round(tmp) if math.isfinite(tmp) else tmp
    if not -(2.0**31) <= rounded <= 2.0**31 - 1:
        raise ScaleError(
            f"the fused activation's bound {value} / output scale {scale} is "
            f"{tmp}; TFLite Micro refuses a bound that is not an int32"
        )
    return zero_point + int(rounded)


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
    real1 = div(input1_scale, twice_max)
    real2 = div(input2_scale, twice_max)
    real_out = div(twice_max, float(1 << left_shift) * float(output_scale))
    return (
        quantize_multiplier_smaller_than_one_exp(
            real1, "input 1 scale / (2 * max input scale)"
        ),
        quantize_multiplier_smaller_than_one_exp(
            real2, "input 2 scale / (2 * max input scale)"
        ),
        quantize_multiplier_smaller_than_one_exp(
            real_out, f"2 * max input scale / (2**{left_shift} * output scale)"
        ),
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
    if not real > 1.0:
        raise ScaleError(
            f"beta * input scale * 2**{31 - bits} is {real}; TFLite Micro's "
            "QuantizeMultiplierGreaterThanOne aborts unless it is greater than one"
        )
    multiplier, left_shift = quantize_multiplier(real)
    radius = math.floor(
        1.0 * ((1 << bits) - 1) * float(1 << (31 - bits)) / float(1 << left_shift)
    )
    return multiplier, left_shift, -radius


def mul_multiplier(
    input1_scale: float, input2_scale: float, output_scale: float
) -> tuple[int, int]:
    """int8 and int16 MUL (``CalculateOpDataMul``) and PRELU's multiplier of
    negative inputs (``CalculatePreluParams``, the alpha tensor's scale as
    input 2): ``double(s1) * double(s2) / double(s_out)``."""
    return quantize_multiplier(
        div(float(input1_scale) * float(input2_scale), output_scale),
        "input 1 scale * input 2 scale / output scale",
    )


def squared_difference_multipliers(
    input1_scale: float, input2_scale: float, output_scale: float, left_shift: int
) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """int8 (``left_shift`` 7) and int16 (0) SQUARED_DIFFERENCE
    (``SquaredDifferencePrepare``): each input by ``s_i / (2 max(s1, s2))``
    (``QuantizeMultiplierSmallerThanOneExp``), the square by ``(2 max)**2 /
    (2**(2 left_shift) * s_out)``, in double."""
    twice_max = 2.0 * float(max(np.float32(input1_scale), np.float32(input2_scale)))
    square = div(twice_max * twice_max, float(1 << (2 * left_shift)) * output_scale)
    return (
        quantize_multiplier_smaller_than_one_exp(
            div(input1_scale, twice_max), "input 1 scale / (2 * max input scale)"
        ),
        quantize_multiplier_smaller_than_one_exp(
            div(input2_scale, twice_max), "input 2 scale / (2 * max input scale)"
        ),
        quantize_multiplier(
            square,
            f"(2 * max input scale)**2 / (2**{2 * left_shift} * output scale)",
        ),
    )


def requantize_multiplier(input_scale: float, output_scale: float) -> tuple[int, int]:
    """``QuantizeMultiplier(double(input_scale) / double(output_scale))``:
    integer -> integer QUANTIZE (``PrepareQuantizeReference``: int8, int16
    and int32 in and out), MEAN and SUM (``PrepareMeanOrSum``), RELU
    (``ReluPrepare``), ABS (``SetAbsOutputMultiplier``) and LEAKY_RELU's
    identity multiplier (``CalculateOpDataLeakyRelu``)."""
    return quantize_multiplier(
        div(input_scale, output_scale), "input scale / output scale"
    )


def checked_log2(x: float, what: str = "the scale") -> tuple[int, bool]:
    """``CheckedLog2``: (``round(log2(x))``, whether ``x`` is within 1e-3 of
    that power of two in log2), computed in float32 as TFLite does;
    ``ScaleError`` for an ``x`` whose float32 log is not finite (0, negative,
    NaN, infinite: TFLite Micro converts it to an int, undefined then)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log = np.float32(np.log(np.float32(x)))
    if not np.isfinite(log):
        raise ScaleError(
            f"{what} is {x}; TFLite Micro's CheckedLog2 converts its log to an int, "
            "undefined unless the scale is finite and positive"
        )
    log2 = log * (np.float32(1.0) / np.float32(np.log(np.float32(2.0))))
    rounded = tflite_round(float(np.float32(log2)))
    return int(rounded), abs(float(np.float32(log2) - np.float32(rounded))) < 1e-3


def logistic_tanh_int8_params(input_scale: float) -> tuple[int, int, int]:
    """int8 LOGISTIC and TANH (``CalculateArithmeticOpData*``): ``(multiplier,
    left_shift, input_range_radius)`` bringing the input to Q4.27:
    ``frexp(double(scale) * 2**27)``, the fraction rounded to 31 bits (no
    carry, as TFLite), ``CalculateInputRadius(4, left_shift, 31)``. A
    negative scale gives a negative multiplier, as in TFLite; ``ScaleError``
    for one that is not finite (``frexp``'s exponent is then unspecified)."""
    real = float(input_scale) * float(1 << 27)
    if not math.isfinite(real):
        raise ScaleError(
            f"the input scale is {input_scale}; TFLite Micro's int8 LOGISTIC/TANH "
            "takes frexp of it, undefined unless it is finite"
        )
    q, left_shift = math.frexp(real)
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
    log2, is_pot = checked_log2(input_scale, "the input scale")
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
    return quantize_multiplier(
        float(input_scale) * float(beta) / (10.0 / 65535.0),
        "input scale * beta / (10 / 65535)",
    )


def rsqrt_multiplier(input_scale: float, output_scale: float) -> tuple[int, int]:
    """int8 and int16 RSQRT (``SetRsqrtOutputMultiplier``): ``QuantizeMultiplier(1 /
    (sqrt(double(s_in)) * double(s_out)))``."""
    with np.errstate(invalid="ignore"):
        root = float(np.sqrt(np.float64(input_scale)))
    return quantize_multiplier(
        div(1.0, root * float(output_scale)),
        "1 / (sqrt(input scale) * output scale)",
    )
