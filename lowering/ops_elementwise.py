"""Elementwise operators: broadcasting binaries, clip, relu, cast
(``LowerElementwise``).

Each handler computes one element from its operands' elements at the same
(broadcast) index; integers stay in their own width (``i8 + i8`` wraps in
``i8``, as the contract says), nothing is widened.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import IntegerType, i32
from xdsl.ir import Operation, SSAValue

from usmp.dialects.relay_ops import (
    AddOp,
    BinaryElementwiseOp,
    CastOp,
    ClipOp,
    DivideOp,
    ExpOp,
    LogOp,
    MaximumOp,
    MinimumOp,
    MultiplyOp,
    ReluOp,
    RightShiftOp,
    RsqrtOp,
    SigmoidOp,
    SqrtOp,
    SubtractOp,
    TanhOp,
)
from usmp.lowering import dsp
from usmp.lowering.kernel import (
    ElementPattern,
    FusedKernel,
    Handler,
    Reads,
    element_type,
    shape_of,
)
from usmp.lowering.loops import Ix, KernelBuilder
from usmp.lowering.scalar import int_bounds, is_unsigned


def broadcast_index(
    index: Sequence[Ix], operand: Sequence[int], result: Sequence[int]
) -> list[Ix]:
    """numpy broadcasting: the operand's index for a result index (size-1
    operand dimensions read element 0, missing leading ones are dropped)."""
    offset = len(result) - len(operand)
    return [0 if d == 1 else index[k + offset] for k, d in enumerate(operand)]


def _divide(b: KernelBuilder, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.emit(arith.DivfOp(x, y))


def _shift_right(b: KernelBuilder, x: SSAValue, amount: SSAValue) -> SSAValue:
    if is_unsigned(x.type):
        return b.emit(arith.ShRUIOp(x, amount))
    return b.shrsi(x, amount)


_BINARY: dict[
    type[Operation], Callable[[KernelBuilder, SSAValue, SSAValue], SSAValue]
] = {
    AddOp: KernelBuilder.add,
    SubtractOp: KernelBuilder.sub,
    MultiplyOp: KernelBuilder.mul,
    MaximumOp: KernelBuilder.max,
    MinimumOp: KernelBuilder.min,
    RightShiftOp: _shift_right,
    DivideOp: _divide,
}


def unary_reads(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> list[tuple[SSAValue, Sequence[Ix]]]:
    """What an elementwise handler of one operand (``data``, the first
    operand) reads first: its element at the same index."""
    return [(op.operands[0], index)]


def binary_reads(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> list[tuple[SSAValue, Sequence[Ix]]]:
    """What a broadcasting binary reads first: ``lhs`` then ``rhs``, each at
    its broadcast index (``broadcast_index``, planned once per operator:
    the shapes are the operator's, the same at every element)."""
    plan = k.plans.get(op)
    if plan is None:
        plan = k.plans[op] = _broadcast_plan(op)
    (lhs, lhs_axes), (rhs, rhs_axes) = plan  # type: ignore[misc]
    return [
        (
            lhs,
            index if lhs_axes is None else [0 if a < 0 else index[a] for a in lhs_axes],
        ),
        (
            rhs,
            index if rhs_axes is None else [0 if a < 0 else index[a] for a in rhs_axes],
        ),
    ]


def _broadcast_plan(
    op: Operation,
) -> tuple[tuple[SSAValue, tuple[int, ...] | None], ...]:
    """Per operand of a broadcasting binary, the result axis each of its
    axes reads (-1: a size-1 axis, element 0), or None when it reads the
    result's index as it is (the same shape)."""
    assert isinstance(op, BinaryElementwiseOp)
    # (the fields behind ``lhs``, ``rhs`` and ``result``: a descriptor read
    # is a Python call and a match per access)
    (result,) = op.results
    shape = shape_of(result)
    plan: list[tuple[SSAValue, tuple[int, ...] | None]] = []
    for operand in op._operands:  # pyright: ignore[reportPrivateUsage]
        dims = shape_of(operand)
        offset = len(shape) - len(dims)
        axes = tuple(-1 if d == 1 else k + offset for k, d in enumerate(dims))
        same = offset == 0 and axes == tuple(range(len(shape)))
        plan.append((operand, None if same else axes))
    return tuple(plan)


def binary(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    lhs, rhs = (k.at(v, i) for v, i in binary_reads(k, op, index))
    return _BINARY[type(op)](k.b, lhs, rhs)


def clamp(
    b: KernelBuilder, x: SSAValue, low: float | None, high: float | None
) -> SSAValue:
    """``min(max(x, low), high)``; a bound the type already implies is
    skipped. Integer bounds act as ``ceil(low)`` / ``floor(high)``."""
    t = x.type
    if isinstance(t, IntegerType):
        tmin, tmax = int_bounds(t)
        lo = tmin if low is None else max(tmin, math.ceil(low))
        hi = tmax if high is None else min(tmax, math.floor(high))
        if lo > tmin:
            x = b.max(x, b.const(lo, t))
        if hi < tmax:
            x = b.min(x, b.const(hi, t))
        return x
    if low is not None and low != -math.inf:
        x = b.max(x, b.const(low, t))
    if high is not None and high != math.inf:
        x = b.min(x, b.const(high, t))
    return x


def clip(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, ClipOp)
    x = k.at(op.data, index)
    if k.features.dsp and x.type == i32:
        # one ``ssat`` when the clamp lies within an 8 or 16-bit range (the
        # requantisation's), then the tighter bounds if any
        lo, hi = math.ceil(op.a_min), math.floor(op.a_max)
        for bits in (8, 16):
            low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
            if low <= lo and hi <= high:
                x = dsp.call(k.b, f"usmp_ssat{bits}", x)
                tighter_lo = lo if lo > low else None
                tighter_hi = hi if hi < high else None
                return clamp(k.b, x, tighter_lo, tighter_hi)
    return clamp(k.b, x, op.a_min, op.a_max)


def relu(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, ReluOp)
    x = k.at(op.data, index)
    if is_unsigned(x.type):
        return x
    return k.b.max(x, k.b.const(0, x.type))


def cast(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, CastOp)
    return k.b.convert(k.at(op.data, index), element_type(op.result))


def sigmoid(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    """``1 / (1 + exp(-x))``."""
    assert isinstance(op, SigmoidOp)
    x = k.at(op.data, index)
    one = k.b.const(1.0, x.type)
    e = k.b.exp(k.b.emit(arith.NegfOp(x)))
    return k.b.emit(arith.DivfOp(one, k.b.add(one, e)))


def tanh(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, TanhOp)
    return k.b.emit(mathd.TanhOp(k.at(op.data, index)))


# relay op -> ``math`` op (libm in C: expf, logf, sqrtf, 1.0f / sqrtf)
_MATH: dict[
    type[Operation], type[mathd.ExpOp | mathd.LogOp | mathd.SqrtOp | mathd.RsqrtOp]
] = {
    ExpOp: mathd.ExpOp,
    LogOp: mathd.LogOp,
    SqrtOp: mathd.SqrtOp,
    RsqrtOp: mathd.RsqrtOp,
}


def math_function(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    x = k.at(op.operands[0], index)
    return k.b.emit(_MATH[type(op)](x))


class LowerElementwise(ElementPattern):
    """An element of a broadcasting binary, ``clip``, ``relu`` or ``cast``."""

    handlers: ClassVar[Mapping[type[Operation], Handler]] = MappingProxyType(
        {
            **{name: binary for name in _BINARY},
            ClipOp: clip,
            ReluOp: relu,
            CastOp: cast,
            SigmoidOp: sigmoid,
            TanhOp: tanh,
            **{name: math_function for name in _MATH},
        }
    )
    reads: ClassVar[Mapping[type[Operation], Reads]] = MappingProxyType(
        {
            **dict.fromkeys(_BINARY, binary_reads),
            **dict.fromkeys(
                (ClipOp, ReluOp, CastOp, SigmoidOp, TanhOp, *_MATH), unary_reads
            ),
        }
    )
