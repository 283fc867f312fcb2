"""Quantisation operators: fixed_point_multiply, quantize, dequantize
(``LowerQuantization``).

Bit-exact with ``usmp.oracle.quantization`` (TFLite's reference kernels):

* ``fixed_point_multiply`` is TFLite's ``MultiplyByQuantizedMultiplier`` with
  gemmlowp double rounding: ``x << left`` (wrapping in i32), then
  ``SaturatingRoundingDoublingHighMul`` in i64, then
  ``RoundingDivideByPOT``, as one ``emitc.call_opaque`` of a requantisation
  helper of the C prelude (``requant.py``); the C reads
  ``usmp_mbqm_right(acc, 1395864371, 8)``. The helper's name carries what is
  known at compile time: the shift direction (``usmp_mbqm_right``: right
  shifts 1..31, ``usmp_mbqm_left``: left shifts, ``usmp_mbqm``: signed
  shifts, both directions derived per element) and saturation of ``INT32_MIN *
  INT32_MIN`` (``_sat``, only when a multiplier can be ``INT32_MIN``). A
  per-tensor multiplier and shift are immediates (the C compiler folds them
  into the inlined helper). Per-axis parameters are constant tables, hoisted
  as ``tir.allocate_const`` so ``usmp`` places them in a constant pool like
  any weight: ``fixed_point_multiply_multiplier`` (i32 per channel) and one
  i8 table of shifts (sign-extended): when every shift is ``<= 0``
  (multipliers below one, the usual case)
  ``fixed_point_multiply_right_shift`` holds the right shifts ``-shift``
  (``usmp_mbqm_right``, or ``usmp_mbqm_right0`` when one is 0), when every
  shift is ``>= 0`` ``fixed_point_multiply_left_shift`` holds the left
  shifts (``usmp_mbqm_left``), else ``fixed_point_multiply_shift`` holds the
  signed shifts (``usmp_mbqm``). The channel is the output index along
  ``axis``. A parameter equal for all channels stays an
  immediate (no table). On an i64 operand (16x8 accumulators) it is TFLite's
  64-bit overload: ``(x * m16 + 2**(t-1)) >> t`` in i64 with the reduced
  16-bit multiplier ``m16`` and ``t = 15 - shift`` computed at compile time
  (per channel: ``fixed_point_multiply_reduced_multiplier``, i16, and
  ``fixed_point_multiply_total_shift``, i8). On a CPU with Arm's DSP
  extension (``lower-ops{mcpu=cortex-m4}``), when the operand's bound at
  compile time (``ranges``) and right shifts of 1..30 allow it, the same
  value in 32-bit arithmetic: ``smmulr`` of the doubled operand, then a
  rounding shift with the per-channel ``2**(e-1)`` from a table
  (``_fixed_point_multiply_dsp``).
* ``quantize``: ``clamp(round_half_away(x / f32(scale)) + zp)``, the division
  in f32 as TFLite Micro's ``AffineQuantize`` (``math.round``: C ``roundf``),
  then ``arith.fptosi``.
* ``dequantize``: ``f32(scale) * f32(x - zp)`` in f32 as TFLite Micro's
  ``Dequantize`` (the subtraction in i32, or in i64 for i32 inputs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerType,
    TensorType,
    f32,
    f64,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from usmp.dialects.relay_ops import DequantizeOp, FixedPointMultiplyOp, QuantizeOp
from usmp.dialects.relay_tflite_ops import QuantizedDivideOp
from usmp.lowering import dsp
from usmp.lowering.fixed_point import (
    INT32_MIN,
    multiply_by_quantized_multiplier,
    multiply_by_reduced_multiplier,
    reduced_multiplier,
)
from usmp.lowering.kernel import (
    ElementPattern,
    FusedKernel,
    Handler,
    Reads,
    element_type,
    shape_of,
)
from usmp.lowering.loops import Ix
from usmp.lowering.ops_divide import quantized_divide
from usmp.lowering.ops_elementwise import binary_reads, unary_reads
from usmp.lowering.ranges import magnitude
from usmp.lowering.scalar import int_bounds, is_unsigned


def _int_table(
    dtype: str, element: IntegerType, values: Sequence[int] | npt.NDArray[np.integer]
) -> DenseIntOrFPElementsAttr:
    """``values`` (in range of ``element``) as a dense 1-d attribute; the
    same as ``DenseIntOrFPElementsAttr.from_list``, ten times faster on the
    per-channel tables of a model."""
    data = np.asarray(values, dtype=dtype).tobytes()
    return DenseIntOrFPElementsAttr(_table_type(element, len(values)), BytesAttr(data))


@lru_cache(maxsize=256)
def _table_type(element: IntegerType, length: int) -> TensorType[IntegerType]:
    """``tensor<length x element>`` (xDSL's constructor checks its shape
    through ``isa``: once per table length, not per table)."""
    return TensorType(element, [length])


def _i32s(attr: Attribute) -> npt.NDArray[np.int32]:
    """The values of an ``array<i32: ...>`` property as a numpy view of its
    bytes: what ``get_values()`` returns, without a Python int per
    channel."""
    assert isinstance(attr, DenseArrayBase)
    return np.frombuffer(attr.data.data, dtype="<i4")


class _ChannelPlan(NamedTuple):
    """What ``fixed_point_multiply`` decides from the operator's per-channel
    multipliers and shifts (``shift_kind``: ``"one"`` shift for every
    channel, all ``"right"`` shifts, all ``"left"`` shifts, or ``"both"``)."""

    multiplier: int
    """The first channel's multiplier (every channel's without a table)."""
    shift: int
    """The first channel's shift (every channel's with ``"one"``)."""
    max_shift: int
    may_saturate: bool
    uniform: bool
    """One (multiplier, shift) pair for every channel."""
    multiplier_table: DenseIntOrFPElementsAttr | None
    shift_kind: str
    shift_table: DenseIntOrFPElementsAttr | None


def _channel_plan(op: FixedPointMultiplyOp) -> _ChannelPlan:
    """The plan of ``op``, from the bytes of its ``multiplier`` and
    ``shift`` (one value, or one per channel, each: the verifier's
    ``per_axis_length``), decided with numpy: the Python sets and tuples
    of a thousand channels cost more than the kernel's code."""
    multipliers = _i32s(op.properties["multiplier"])
    shifts = _i32s(op.properties["shift"])
    first_m, first_s = int(multipliers[0]), int(shifts[0])
    may_saturate = bool((multipliers == INT32_MIN).any())
    one_m = bool((multipliers == first_m).all())
    one_s = bool((shifts == first_s).all())
    top = int(shifts.max())
    if one_m and one_s:
        return _ChannelPlan(
            first_m, first_s, top, may_saturate, True, None, "one", None
        )
    m_table = None if one_m else _int_table("<i4", i32, multipliers)
    if one_s:
        kind, table = "one", None
    elif top <= 0:  # the usual case: multipliers below one
        kind, table = "right", _int_table("i1", i8, -shifts)
    elif int(shifts.min()) >= 0:
        kind, table = "left", _int_table("i1", i8, shifts)
    else:
        kind, table = "both", _int_table("i1", i8, shifts)
    return _ChannelPlan(
        first_m, first_s, top, may_saturate, False, m_table, kind, table
    )


def fixed_point_multiply(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> SSAValue:
    assert isinstance(op, FixedPointMultiplyOp)
    b = k.b
    x = k.at(op.data, index)
    if x.type == i64:
        return _fixed_point_multiply_i64(k, op, index, x)
    if k.features.dsp and (r := _fixed_point_multiply_dsp(k, op, index, x)):
        return r
    plan = k.plans.get(op)
    if plan is None:
        plan = k.plans[op] = _channel_plan(op)
    assert isinstance(plan, _ChannelPlan)
    may_saturate = plan.may_saturate
    if plan.uniform:
        return multiply_by_quantized_multiplier(
            b, x, plan.multiplier, plan.shift, may_saturate
        )
    rank = len(shape_of(op.data))
    channel = index[op.axis % rank]
    m: int | SSAValue = plan.multiplier
    if plan.multiplier_table is not None:
        m_table = k.table("fixed_point_multiply_multiplier", plan.multiplier_table)
        m = b.load(m_table, [channel])
    if plan.shift_kind == "one":
        return multiply_by_quantized_multiplier(b, x, m, plan.shift, may_saturate)
    assert plan.shift_table is not None
    name = {
        "right": "fixed_point_multiply_right_shift",
        "left": "fixed_point_multiply_left_shift",
        "both": "fixed_point_multiply_shift",
    }[plan.shift_kind]
    shift = b.convert(b.load(k.table(name, plan.shift_table), [channel]), i32)
    direction = plan.shift_kind
    if direction == "right" and plan.max_shift == 0:
        direction = "right0"  # usmp_mbqm_right takes right shifts of 1..31
    return multiply_by_quantized_multiplier(b, x, m, shift, may_saturate, direction)


DSP_MAGNITUDE = (1 << 30) - 1
"""The largest ``|x|`` whose double fits in an i32 (``usmp_smmulr``)."""


def _fixed_point_multiply_dsp(
    k: FusedKernel, op: FixedPointMultiplyOp, index: Sequence[Ix], x: SSAValue
) -> SSAValue | None:
    """``MultiplyByQuantizedMultiplier`` in 32-bit arithmetic on a CPU with
    Arm's DSP extension, when every shift is a right shift ``e`` in
    ``1..30`` and ``|x| <= 2**30 - 1`` at compile time (``ranges``); else
    None. ``SaturatingRoundingDoublingHighMul(x, m) = floor((x*m + 2**30) /
    2**31)`` is ``smmulr(2x, m) = floor((2x*m + 2**31) / 2**32)`` (the double
    fits, and no saturation: ``m`` is never ``INT32_MIN``), so ``|h| <=
    |x| + 1 < 2**30``; ``RoundingDivideByPOT(h, e) = floor((h + 2**(e-1) -
    (h < 0)) / 2**e)`` is ``(h + 2**(e-1) + (h >> 31)) >> e``, whose sum
    cannot overflow either. Per-channel ``2**(e-1)`` is a table
    (``fixed_point_multiply_round``, i32) next to the right shifts."""
    multipliers, shifts = op.multiplier, op.shift
    if INT32_MIN in multipliers or any(not -30 <= s <= -1 for s in shifts):
        return None
    bound = magnitude(k, op.data)
    if bound is None or bound > DSP_MAGNITUDE:
        return None
    b = k.b
    channel = index[op.axis % len(shape_of(op.data))]
    m: SSAValue = b.const(multipliers[0], i32)
    if len(set(multipliers)) > 1:
        m_table = k.table(
            "fixed_point_multiply_multiplier", _int_table("<i4", i32, multipliers)
        )
        m = b.load(m_table, [channel])
    h = dsp.call(b, "usmp_smmulr", b.add(x, x), m)
    if len(set(shifts)) == 1:
        e: SSAValue = b.const(-shifts[0], i32)
        half = b.const(1 << (-shifts[0] - 1), i32)
    else:
        table = k.table(
            "fixed_point_multiply_right_shift",
            _int_table("i1", i8, [-s for s in shifts]),
        )
        e = b.convert(b.load(table, [channel]), i32)
        rounding = k.table(
            "fixed_point_multiply_round",
            _int_table("<i4", i32, [1 << (-s - 1) for s in shifts]),
        )
        half = b.load(rounding, [channel])
    sign = b.shrsi(h, b.const(31, i32))
    return b.shrsi(b.add(b.add(h, half), sign), e)


def _fixed_point_multiply_i64(
    k: FusedKernel, op: FixedPointMultiplyOp, index: Sequence[Ix], x: SSAValue
) -> SSAValue:
    """TFLite's 64-bit ``MultiplyByQuantizedMultiplier`` (16x8 accumulators):
    the 16-bit reduced multipliers and the total shifts ``15 - shift`` are
    computed here; per-channel ones are an i16 and an i8 table."""
    b = k.b
    reduced = [reduced_multiplier(m) for m in op.multiplier]
    totals = [15 - s for s in op.shift]
    channel = index[op.axis % len(shape_of(op.data))] if len(reduced) > 1 else 0
    r: int | SSAValue = reduced[0]
    if len(set(reduced)) > 1:
        table = k.table(
            "fixed_point_multiply_reduced_multiplier", _int_table("<i2", i16, reduced)
        )
        r = b.load(table, [channel])
    t: int | SSAValue = totals[0]
    if len(set(totals)) > 1:
        table = k.table(
            "fixed_point_multiply_total_shift", _int_table("i1", i8, totals)
        )
        t = b.load(table, [channel])
    return multiply_by_reduced_multiplier(b, x, r, t)


def quantize(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, QuantizeOp)
    b = k.b
    target = element_type(op.result)
    assert isinstance(target, IntegerType)
    lo, hi = int_bounds(target)
    x = k.at(op.data, index)
    q = b.emit(arith.DivfOp(x, b.const(op.scale, f32)))
    # round(q) is an integer: exact in f32 and f64. Up to 16 bits the sum
    # with the zero point and the clamp stay in f32 (exact below 2**24, and
    # anything larger saturates anyway); i32 results need f64 bounds.
    wide = f32 if target.width.data <= 16 else f64
    r = b.convert(b.emit(math.RoundOp(q)), wide)
    r = b.add(r, b.const(op.zero_point, wide))
    r = b.min(b.max(r, b.const(lo, wide)), b.const(hi, wide))
    if is_unsigned(target):
        return b.emit(arith.FPToUIOp(r, target))
    return b.emit(arith.FPToSIOp(r, target))


def dequantize(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, DequantizeOp)
    b = k.b
    x = k.at(op.data, index)
    source = x.type
    assert isinstance(source, IntegerType)
    wide = i64 if source.width.data >= 32 else i32
    centred = b.convert(x, wide)
    if op.zero_point:
        centred = b.sub(centred, b.const(op.zero_point, wide))
    return b.mul(b.const(op.scale, f32), b.convert(centred, f32))


class LowerQuantization(ElementPattern):
    """An element of a ``fixed_point_multiply``, ``quantize``,
    ``dequantize`` or ``quantized_divide`` (``ops_divide``)."""

    handlers: ClassVar[Mapping[type[Operation], Handler]] = MappingProxyType(
        {
            FixedPointMultiplyOp: fixed_point_multiply,
            QuantizeOp: quantize,
            DequantizeOp: dequantize,
            QuantizedDivideOp: quantized_divide,
        }
    )
    reads: ClassVar[Mapping[type[Operation], Reads]] = MappingProxyType(
        {
            **dict.fromkeys(
                (FixedPointMultiplyOp, QuantizeOp, DequantizeOp), unary_reads
            ),
            QuantizedDivideOp: binary_reads,
        }
    )
