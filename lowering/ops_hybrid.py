"""Dynamic-range quantisation (``dialects/relay_hybrid_ops.py``) as loops.

Row operators, lowered like ``quantized_l2_normalize``: the statistics of a
row (its min and max in one pass, then the scale, the inverse scale and the
zero point as scalars, ``dynamic_quantize_row``) are computed once before
the row's loop when the fused group's result is the operator
(``ops_softmax.ROW_STATISTICS``), then each element is one multiply, one
``roundf`` (plus the zero point) and a clamp. The asymmetric scale and zero
point are computed in ``double``, as LiteRT's ``AsymmetricQuantizeFloats``.
Degenerate rows (all zeros) take a finite denominator and the results
LiteRT gives them (scale 1, zero point 0, ``q`` 0), so no ``NaN`` or
infinity is ever converted to an integer. No scratch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import f32, f64, i8, i32
from xdsl.ir import Operation, SSAValue

from usmp.dialects.relay_hybrid_ops import (
    DynamicQuantizeBase,
    DynamicQuantizeOp,
    DynamicQuantizeScaleOp,
    DynamicQuantizeZeroPointOp,
)
from usmp.lowering.kernel import FusedKernel, shape_of
from usmp.lowering.loops import Ix, KernelBuilder


def _select(b: KernelBuilder, cond: SSAValue, a: SSAValue, c: SSAValue) -> SSAValue:
    return b.emit(arith.SelectOp(cond, a, c))


def _cmp(b: KernelBuilder, predicate: str, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.emit(arith.CmpfOp(x, y, predicate))


def _div(b: KernelBuilder, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.emit(arith.DivfOp(x, y))


def _abs(b: KernelBuilder, x: SSAValue) -> SSAValue:
    return b.emit(xmath.AbsFOp(x))


def dynamic_quantize_row(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> tuple[SSAValue, ...]:
    """What ``op`` needs of the row of ``index``, and nothing more (unused
    scalars would be unused C variables): ``dynamic_quantize`` the inverse
    scale (f32) and the zero point (f32), ``dynamic_quantize_scale`` the
    scale (f32), ``dynamic_quantize_zero_point`` the zero point (i32)."""
    assert isinstance(op, DynamicQuantizeBase)
    b = k.b
    extent = shape_of(op.data)[1]

    def minmax(taps: list[Ix], accs: Sequence[SSAValue]) -> list[SSAValue]:
        x = k.at(op.data, [index[0], taps[0]])
        return [b.min(accs[0], x), b.max(accs[1], x)]

    low, high = b.reduce(
        [(0, extent)], [b.const(math.inf, f32), b.const(-math.inf, f32)], minmax
    )
    if not op.asymmetric:
        value_range = b.max(_abs(b, low), _abs(b, high))
        zero = _cmp(b, "oeq", value_range, b.const(0.0, f32))
        value_range = _select(b, zero, b.const(127.0, f32), value_range)
        if isinstance(op, DynamicQuantizeScaleOp):
            return (_div(b, value_range, b.const(127.0, f32)),)
        if isinstance(op, DynamicQuantizeZeroPointOp):
            return (b.const(0, i32),)
        return _div(b, b.const(127.0, f32), value_range), b.const(0.0, f32)
    rmin = b.min(b.const(0.0, f32), low)
    rmax = b.max(b.const(0.0, f32), high)
    zero = _cmp(b, "oeq", rmin, rmax)
    width = _select(b, zero, b.const(255.0, f32), b.sub(rmax, rmin))
    scale_d = _div(b, b.convert(width, f64), b.const(255.0, f64))
    scale = b.convert(scale_d, f32)
    if isinstance(op, DynamicQuantizeScaleOp):
        return (scale,)
    from_low = _div(b, b.convert(rmin, f64), scale_d)
    from_high = _div(b, b.convert(rmax, f64), scale_d)
    error_low = b.add(b.const(128.0, f64), _abs(b, from_low))
    error_high = b.add(b.const(127.0, f64), _abs(b, from_high))
    candidate = _select(
        b,
        _cmp(b, "olt", error_low, error_high),
        b.sub(b.const(-128.0, f64), from_low),
        b.sub(b.const(127.0, f64), from_high),
    )
    # clamping round(z) equals LiteRT's clamp-then-round of z to -128..127
    rounded = b.emit(xmath.RoundOp(candidate))
    clamped = b.min(b.max(rounded, b.const(-128.0, f64)), b.const(127.0, f64))
    zero_point = _select(b, zero, b.const(0, i32), b.convert(clamped, i32))
    if isinstance(op, DynamicQuantizeZeroPointOp):
        return (zero_point,)
    inverse = b.convert(_div(b, b.const(1.0, f64), b.convert(scale, f64)), f32)
    return inverse, b.convert(zero_point, f32)


def _row(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> tuple[SSAValue, ...]:
    return k.row(op, index, 1, dynamic_quantize_row)


def dynamic_quantize(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, DynamicQuantizeOp)
    b = k.b
    inverse, zero_point = _row(k, op, index)
    y = b.mul(k.at(op.data, index), inverse)
    rounded = b.emit(xmath.RoundOp(y))
    if op.asymmetric:  # after the rounding, as LiteRT (relay_hybrid_ops.py)
        rounded = b.add(zero_point, rounded)
    lowest = -128.0 if op.asymmetric else -127.0
    clamped = b.min(b.max(rounded, b.const(lowest, f32)), b.const(127.0, f32))
    return b.convert(clamped, i8)


def dynamic_quantize_scale(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> SSAValue:
    assert isinstance(op, DynamicQuantizeScaleOp)
    return _row(k, op, index)[0]


def dynamic_quantize_zero_point(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> SSAValue:
    assert isinstance(op, DynamicQuantizeZeroPointOp)
    return _row(k, op, index)[0]
