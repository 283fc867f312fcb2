"""Converters of the unary / piecewise-linear activation TFLite builtins.

``tflite_ops`` imports this module, which registers its converters. Every
converter composes existing relay ops (``fuse-ops`` makes each one loop
nest); int8 follows TFLite Micro's reference kernels bit for bit:

* ABS (``elementwise.cc``; int8, and int16 with zero points 0):
  ``|x - zp_in|`` in i32, then ``+ zp_out`` when the scales are equal, else
  ``MultiplyByQuantizedMultiplier`` by ``QuantizeMultiplier(double(s_in) /
  double(s_out))`` first; float is ``max(x, -x)``;
* NEG: float only (TFLite Micro's kernel refuses int8), ``x * -1``;
* RELU_N1_TO_1: ``clip(-1, 1)`` (float; int8 in the quantised domain with
  one quantisation, as RELU). TFLite Micro has no kernel: the oracle decides;
* LEAKY_RELU (``leaky_relu_common.cc``; int8 and int16, clamped to the
  output type): ``x >= 0`` scaled by the identity
  multiplier ``s_in / s_out``, ``x < 0`` by the alpha multiplier
  ``s_in * alpha / s_out``, both in double and ``MultiplyByQuantizedMultiplier``
  on ``x - zp_in`` (a negative alpha multiplier rounds as ``-fpm(x, |m|)``,
  measured on TFLite Micro); since each branch
  maps 0 to 0 this is
  ``fpm(max(x, 0)) + fpm(min(x, 0))``. Float: ``max(x, 0) + alpha * min(x, 0)``
  (exactly one term is non-zero, so it equals ``x > 0 ? x : alpha * x``);
* PRELU (``prelu_common.cc``): as LEAKY_RELU with a broadcast alpha tensor,
  the negative branch ``fpm((x - zp_in) * (alpha - zp_alpha))`` by
  ``double(s_in) * double(s_alpha) / double(s_out)``;
* DIV: float ``relay.divide``; int8 ``relay.quantized_divide`` (TFLite
  Micro's per-element reciprocal in fixed point, data-dependent shifts) on
  the centred operands by ``double(s1) / (double(s2) * double(s_out))``,
  then the output zero point and the clamp;
* HARD_SWISH: float ``x * clip(x + 3, 0, 6) * (1/6)`` (TFLite divides by 6:
  within an ulp); int8 is TFLite Micro's fixed-point ``reference_ops::
  HardSwish`` step by step on i32 values that stay in int16's range: the
  int16 ``SaturatingRoundingDoublingHighMul(a, m16)`` is the i32
  ``fixed_point_multiply`` by ``m16 << 16`` (same nudge, same truncation),
  ``RoundingDivideByPOT`` is ``((max(x, 0) + h) >> e) - ((max(-x, 0) + h) >>
  e)`` (ties away from zero), ``SaturatingLeftShift`` a multiply and a clip,
  ``SaturatingDoublingHighMul`` (truncating) a multiply and the same split
  shift without ``h``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from usmp.dialects.relay_ops import (
    AddOp,
    CastOp,
    ClipOp,
    DivideOp,
    FixedPointMultiplyOp,
    MaximumOp,
    MinimumOp,
    MultiplyOp,
    RightShiftOp,
    SubtractOp,
)
from usmp.dialects.relay_tflite_ops import QuantizedDivideOp
from usmp.frontend import quantization as q
from usmp.frontend.builder import RelayBuilder, element_type, int_range
from usmp.frontend.tflite_ops import (
    _float_activation,
    _per_tensor,
    _type,
    register,
)
from usmp.frontend.tflite_ops_elementwise import (
    _binary_kind,
    _bind,
    _centered_i32,
    _expect_symmetric,
    _fused_activation,
    _relu,
)

_INT8_MIN, _INT8_MAX = -128, 127


def _to_int8(b: RelayBuilder, acc: SSAValue, zero_point: int) -> SSAValue:
    """``acc + zero_point`` clamped to int8 and cast."""
    return _to_quantized(b, acc, zero_point, np.dtype("int8"))


def _to_quantized(
    b: RelayBuilder, acc: SSAValue, zero_point: int, dtype: np.dtype[Any]
) -> SSAValue:
    """``acc + zero_point`` clamped to the integer ``dtype`` and cast."""
    if zero_point:
        acc = b.emit(AddOp(acc, b.scalar(zero_point, "int32")))
    lo, hi = int_range(dtype)
    acc = b.emit(ClipOp(acc, float(lo), float(hi)))
    return b.emit(CastOp(acc, element_type(dtype)))


def _positive_negative(
    b: RelayBuilder, x: SSAValue, dtype: str
) -> tuple[SSAValue, SSAValue]:
    zero = b.scalar(0.0 if dtype == "float32" else 0, dtype)
    return b.emit(MaximumOp(x, zero)), b.emit(MinimumOp(x, zero))


def convert_abs(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    kind = _binary_kind(b, x, out, int16=True)
    if kind == "float":
        v = b.value(x)
        negated = b.emit(MultiplyOp(v, b.scalar(-1.0, "float32")))
        _bind(b, out, b.emit(MaximumOp(v, negated)))
        return
    in_q, out_q = _per_tensor(b, x, "input"), _per_tensor(b, out, "output")
    if kind == "int16":
        _expect_symmetric(b, [(x, in_q), (out, out_q)])
    centered = _centered_i32(b, x, in_q.zero_point)
    negated = b.emit(MultiplyOp(centered, b.scalar(-1, "int32")))
    acc = b.emit(MaximumOp(centered, negated))
    if q.f32(in_q.scale) != q.f32(out_q.scale):
        m, s = q.requantize_multiplier(in_q.scale, out_q.scale)
        acc = b.emit(FixedPointMultiplyOp(acc, [m], [s]))
    _bind(b, out, _to_quantized(b, acc, out_q.zero_point, np.dtype(out.dtype)))


def convert_neg(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    if _type(x) != "FLOAT32" or _type(out) != "FLOAT32":
        raise b.error(
            f"unsupported types {_type(x)}, {_type(out)} (FLOAT32 only, as "
            "TFLite Micro's NEG)"
        )
    _bind(b, out, b.emit(MultiplyOp(b.value(x), b.scalar(-1.0, "float32"))))


def convert_relu_n1_to_1(b: RelayBuilder) -> None:
    _relu(b, q.Activation.RELU_N1_TO_1)


def convert_leaky_relu(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    alpha = float(b.operator.options.Alpha()) if b.operator.options is not None else 0.0
    if _binary_kind(b, x, out, int16=True) == "float":
        pos, neg = _positive_negative(b, b.value(x), "float32")
        scaled = b.emit(MultiplyOp(neg, b.scalar(q.f32(alpha), "float32")))
        _bind(b, out, b.emit(AddOp(pos, scaled)))
        return
    in_q, out_q = _per_tensor(b, x, "input"), _per_tensor(b, out, "output")
    pos, neg = _positive_negative(b, _centered_i32(b, x, in_q.zero_point), "int32")
    # a negative alpha multiplier rounds as -fpm(x, |m|)
    m_alpha, s_alpha = q.leaky_relu_alpha_multiplier(in_q.scale, alpha, out_q.scale)
    scaled = b.emit(FixedPointMultiplyOp(neg, [abs(m_alpha)], [s_alpha]))
    if m_alpha < 0:
        scaled = b.emit(MultiplyOp(scaled, b.scalar(-1, "int32")))
    m_identity, s_identity = q.requantize_multiplier(in_q.scale, out_q.scale)
    identity = b.emit(FixedPointMultiplyOp(pos, [m_identity], [s_identity]))
    acc = b.emit(AddOp(identity, scaled))
    _bind(b, out, _to_quantized(b, acc, out_q.zero_point, np.dtype(out.dtype)))


def convert_prelu(b: RelayBuilder) -> None:
    x, alpha, out = b.required_input(0), b.required_input(1), b.output_tensor()
    if _binary_kind(b, x, alpha, out) == "float":
        pos, neg = _positive_negative(b, b.value(x), "float32")
        scaled = b.emit(MultiplyOp(neg, b.value(alpha)))
        _bind(b, out, b.emit(AddOp(pos, scaled)))
        return
    in_q, out_q = _per_tensor(b, x, "input"), _per_tensor(b, out, "output")
    alpha_q = _per_tensor(b, alpha, "alpha")
    pos, neg = _positive_negative(b, _centered_i32(b, x, in_q.zero_point), "int32")
    product = b.emit(MultiplyOp(neg, _centered_i32(b, alpha, alpha_q.zero_point)))
    m1, s1 = q.requantize_multiplier(in_q.scale, out_q.scale)
    m2, s2 = q.mul_multiplier(in_q.scale, alpha_q.scale, out_q.scale)
    acc = b.emit(
        AddOp(
            b.emit(FixedPointMultiplyOp(pos, [m1], [s1])),
            b.emit(FixedPointMultiplyOp(product, [m2], [s2])),
        )
    )
    _bind(b, out, _to_int8(b, acc, out_q.zero_point))


# -- HARD_SWISH ------------------------------------------------------------------

_INT16_MIN, _INT16_MAX = -32768, 32767


def _int16_multiplier(m32: int, exponent: int) -> tuple[int, int]:
    """``DownScaleInt32ToInt16Multiplier`` of a ``QuantizeMultiplier``."""
    if m32 >= (1 << 31) - 1 - (1 << 15):
        return _INT16_MAX, exponent
    return (m32 + (1 << 15)) >> 16, exponent


def _i32(b: RelayBuilder, value: int) -> SSAValue:
    return b.scalar(value, "int32")


def _shift_toward_zero(b: RelayBuilder, x: SSAValue, e: int, h: int) -> SSAValue:
    """``((max(x, 0) + h) >> e) - ((max(-x, 0) + h) >> e)``."""
    zero = _i32(b, 0)
    parts = []
    for v in (x, b.emit(MultiplyOp(x, _i32(b, -1)))):
        v = b.emit(MaximumOp(v, zero))
        if h:
            v = b.emit(AddOp(v, _i32(b, h)))
        parts.append(b.emit(RightShiftOp(v, _i32(b, e))))
    return b.emit(SubtractOp(parts[0], parts[1]))


def _rounding_divide_by_pot(b: RelayBuilder, x: SSAValue, e: int) -> SSAValue:
    return x if e == 0 else _shift_toward_zero(b, x, e, 1 << (e - 1))


def _saturating_left_shift(b: RelayBuilder, x: SSAValue, e: int) -> SSAValue:
    x = b.emit(MultiplyOp(x, _i32(b, 1 << e)))
    return b.emit(ClipOp(x, float(_INT16_MIN), float(_INT16_MAX)))


def _srdhm16(b: RelayBuilder, x: SSAValue, multiplier16: int) -> SSAValue:
    return b.emit(FixedPointMultiplyOp(x, [multiplier16 << 16], [0]))


def convert_hard_swish(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    if _binary_kind(b, x, out) == "float":
        v = b.value(x)
        relu6 = b.emit(ClipOp(b.emit(AddOp(v, b.scalar(3.0, "float32"))), 0.0, 6.0))
        product = b.emit(MultiplyOp(v, relu6))
        sixth = b.scalar(q.f32(1.0 / 6.0), "float32")
        _bind(b, out, b.emit(MultiplyOp(product, sixth)))
        return
    in_q, out_q = _per_tensor(b, x, "input"), _per_tensor(b, out, "output")
    out_m32, relu_m32 = q.hard_swish_multipliers(in_q.scale, out_q.scale)
    out_m16, out_exp = _int16_multiplier(*out_m32)
    relu_m16, relu_exp = _int16_multiplier(*relu_m32)
    if out_exp > 0:
        raise b.error(
            f"input scale {in_q.scale} / 128 over output scale {out_q.scale} is "
            "1 or more (TFLite Micro requires a smaller ratio)"
        )
    if not -15 <= relu_exp <= 16:
        raise b.error(
            f"input scale {in_q.scale} is out of the range int8 HARD_SWISH "
            "supports (its reluish multiplier exponent is not in [-15, 16])"
        )
    hires = b.emit(MultiplyOp(_centered_i32(b, x, in_q.zero_point), _i32(b, 128)))
    preshift = _srdhm16(b, hires, out_m16)
    reluish = hires
    if relu_exp > 1:
        reluish = _saturating_left_shift(b, reluish, relu_exp - 1)
    reluish = _srdhm16(b, reluish, relu_m16)
    if relu_exp > 0:
        reluish = _saturating_left_shift(b, reluish, 1)
    reluish = _rounding_divide_by_pot(b, reluish, max(0, -relu_exp))
    reluish = b.emit(AddOp(reluish, _i32(b, 1 << 15)))
    reluish = b.emit(RightShiftOp(reluish, _i32(b, 1)))  # in [0, 32767]
    product = b.emit(MultiplyOp(reluish, preshift))
    high = _shift_toward_zero(b, product, 15, 0)  # SaturatingDoublingHighMul
    acc = _rounding_divide_by_pot(b, high, -out_exp)
    _bind(b, out, _to_int8(b, acc, out_q.zero_point))


# -- SQUARED_DIFFERENCE -----------------------------------------------------------

_SQUARED_DIFFERENCE_LEFT_SHIFT = 7  # int8 (squared_difference.cc)


def convert_squared_difference(b: RelayBuilder) -> None:
    """Float ``(x1 - x2)^2``; int8 and int16 as TFLite Micro's
    ``SquaredDifference``: each input ``(x - zp) << 7`` (int16: no shift, zero
    points 0) scaled by ``s_i / (2 max(s1, s2))``, the
    difference squared in i32, then by ``(2 max)^2 / (2^14 s_out)``."""
    x1, x2, out = b.required_input(0), b.required_input(1), b.output_tensor()
    kind = _binary_kind(b, x1, x2, out, int16=True)
    if kind == "float":
        diff = b.emit(SubtractOp(b.value(x1), b.value(x2)))
        _bind(b, out, b.emit(MultiplyOp(diff, diff)))
        return
    q1, q2 = _per_tensor(b, x1, "input 1"), _per_tensor(b, x2, "input 2")
    out_q = _per_tensor(b, out, "output")
    shift = _SQUARED_DIFFERENCE_LEFT_SHIFT
    if kind == "int16":  # no left shift: 32767^2 already fills the i32
        _expect_symmetric(b, [(x1, q1), (x2, q2), (out, out_q)])
        shift = 0
    m1, m2, m_out = q.squared_difference_multipliers(
        q1.scale, q2.scale, out_q.scale, shift
    )
    scaled = []
    for t, quant, (m, e) in ((x1, q1, m1), (x2, q2, m2)):
        v = _centered_i32(b, t, quant.zero_point)
        v = b.emit(MultiplyOp(v, _i32(b, 1 << shift)))
        scaled.append(b.emit(FixedPointMultiplyOp(v, [m], [e])))
    diff = b.emit(SubtractOp(scaled[0], scaled[1]))
    square = b.emit(MultiplyOp(diff, diff))
    square = b.emit(FixedPointMultiplyOp(square, [m_out[0]], [m_out[1]]))
    result = _to_quantized(b, square, out_q.zero_point, np.dtype(out.dtype))
    _bind(b, out, result)


# -- DIV --------------------------------------------------------------------------


def convert_div(b: RelayBuilder) -> None:
    """Float ``x1 / x2`` (``relay.divide``) and the fused activation; int8 as
    TFLite Micro's ``DivElementwise``: ``quantized_divide(x1 - zp1, x2 -
    zp2)`` by ``QuantizeMultiplier(double(s1) / (double(s2) * double(s_out)))``,
    then ``+ zp_out``, clamped to the fused activation's range."""
    x1, x2, out = b.required_input(0), b.required_input(1), b.output_tensor()
    act = _fused_activation(b)
    types = [_type(t) for t in (x1, x2, out)]
    if types == ["FLOAT32"] * 3:
        quotient = b.emit(DivideOp(b.value(x1), b.value(x2)))
        _bind(b, out, _float_activation(b, quotient, act))
        return
    if types != ["INT8"] * 3:
        raise b.error(
            f"unsupported types {', '.join(types)} (all FLOAT32 or all INT8, "
            "as TFLite Micro)"
        )
    q1, q2 = _per_tensor(b, x1, "input 1"), _per_tensor(b, x2, "input 2")
    out_q = _per_tensor(b, out, "output")
    multiplier, shift = q.div_multiplier(q1.scale, q2.scale, out_q.scale)
    lowest = _lowest_div_exponent(q1.zero_point, q2.zero_point, shift)
    if lowest < 0:
        raise b.error(
            f"scales {q1.scale} / ({q2.scale} * {out_q.scale}) give TFLite "
            "Micro's int8 DIV a negative rounding exponent (its kernel is "
            "undefined there); supported: scales whose ratio keeps it >= 0"
        )
    quotient = b.emit(
        QuantizedDivideOp(
            _centered_i32(b, x1, q1.zero_point),
            _centered_i32(b, x2, q2.zero_point),
            multiplier,
            shift,
        )
    )
    lo, hi = q.activation_range_quantized(
        act, out_q.scale, out_q.zero_point, _INT8_MIN, _INT8_MAX
    )
    if out_q.zero_point:
        quotient = b.emit(AddOp(quotient, b.scalar(out_q.zero_point, "int32")))
    clipped = b.emit(ClipOp(quotient, float(lo), float(hi)))
    _bind(b, out, b.emit(CastOp(clipped, element_type(np.dtype("int8")))))


def _lowest_div_exponent(zp1: int, zp2: int, shift: int) -> int:
    """The smallest final rounding exponent of ``relay.quantized_divide``
    over every int8 operand pair (headroom of ``x1 - zp1`` plus the
    reciprocal's shift of ``|x2 - zp2|``, minus the output shift)."""
    values = np.arange(_INT8_MIN, _INT8_MAX + 1)
    lhs, rhs = values - zp1, np.abs(values - zp2)
    headroom = min(
        31 - int(v if v >= 0 else ~v).bit_length()
        for v in (int(lhs.min()), int(lhs.max()))
    )
    recip_shift = min(int(v).bit_length() - 1 for v in rhs)
    return headroom + recip_shift - shift


register(
    {
        "ABS": convert_abs,
        "DIV": convert_div,
        "HARD_SWISH": convert_hard_swish,
        "LEAKY_RELU": convert_leaky_relu,
        "NEG": convert_neg,
        "PRELU": convert_prelu,
        "RELU_N1_TO_1": convert_relu_n1_to_1,
        "SQUARED_DIFFERENCE": convert_squared_difference,
    }
)
