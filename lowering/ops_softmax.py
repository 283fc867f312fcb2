"""Softmax: f32 ``relay.softmax`` and TFLite's int8 ``relay.quantized_softmax``
(``LowerSoftmax``).

An element of a softmax needs statistics of its whole row: the f32 one the
row's max and the sum of ``exp(x - max)``, the int8 one those of
``ops_tflite``. ``ROW_STATISTICS`` gives them per operator; when the result
of the fused group is the softmax through shape-preserving elementwise ops,
``prim_func`` computes them once per row before the row's loop (see
``FusedKernel.row``), else each element recomputes them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import f32
from xdsl.ir import Operation, SSAValue

from usmp.dialects.relay_hybrid_ops import (
    DynamicQuantizeOp,
    DynamicQuantizeScaleOp,
    DynamicQuantizeZeroPointOp,
)
from usmp.dialects.relay_ops import SoftmaxOp
from usmp.dialects.relay_tflite_ops import (
    QuantizedL2NormalizeOp,
    QuantizedSoftmaxInt16Op,
    QuantizedSoftmaxOp,
)
from usmp.lowering.kernel import (
    ElementPattern,
    FusedKernel,
    Handler,
    RowStatistics,
    shape_of,
)
from usmp.lowering.loops import Ix
from usmp.lowering.ops_hybrid import (
    dynamic_quantize,
    dynamic_quantize_row,
    dynamic_quantize_scale,
    dynamic_quantize_zero_point,
)
from usmp.lowering.ops_tflite import (
    quantized_l2_normalize,
    quantized_l2_normalize_row,
    quantized_softmax,
    quantized_softmax_i16,
    quantized_softmax_i16_row,
    quantized_softmax_row,
)


def softmax_row(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> tuple[SSAValue, ...]:
    """(max, sum of exp(x - max)) of the row of ``index`` along the axis."""
    assert isinstance(op, SoftmaxOp)
    b = k.b
    axis = op.axis % len(index)
    extent = shape_of(op.data)[axis]

    def row(tap: Ix) -> list[Ix]:
        full = list(index)
        full[axis] = tap
        return full

    (peak,) = b.reduce(
        [(0, extent)],
        [b.const(-math.inf, f32)],
        lambda t, a: [b.max(a[0], k.at(op.data, row(t[0])))],
    )
    (total,) = b.reduce(
        [(0, extent)],
        [b.const(0.0, f32)],
        lambda t, a: [b.add(a[0], b.exp(b.sub(k.at(op.data, row(t[0])), peak)))],
    )
    return peak, total


def softmax(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, SoftmaxOp)
    b = k.b
    peak, total = k.row(op, index, op.axis % len(index), softmax_row)
    e = b.exp(b.sub(k.at(op.data, index), peak))
    return b.emit(arith.DivfOp(e, total))


class LowerSoftmax(ElementPattern):
    """An element of a row operator: ``softmax``, ``quantized_softmax``,
    ``quantized_softmax_i16``, ``quantized_l2_normalize`` or one of the
    ``dynamic_quantize`` operators (``ops_hybrid``)."""

    handlers: ClassVar[Mapping[type[Operation], Handler]] = MappingProxyType(
        {
            SoftmaxOp: softmax,
            QuantizedSoftmaxOp: quantized_softmax,
            QuantizedSoftmaxInt16Op: quantized_softmax_i16,
            QuantizedL2NormalizeOp: quantized_l2_normalize,
            DynamicQuantizeOp: dynamic_quantize,
            DynamicQuantizeScaleOp: dynamic_quantize_scale,
            DynamicQuantizeZeroPointOp: dynamic_quantize_zero_point,
        }
    )


ROW_STATISTICS: Mapping[type[Operation], RowStatistics] = MappingProxyType(
    {
        SoftmaxOp: softmax_row,
        QuantizedSoftmaxOp: quantized_softmax_row,
        QuantizedSoftmaxInt16Op: quantized_softmax_i16_row,
        QuantizedL2NormalizeOp: quantized_l2_normalize_row,
        DynamicQuantizeOp: dynamic_quantize_row,
        DynamicQuantizeScaleOp: dynamic_quantize_row,
        DynamicQuantizeZeroPointOp: dynamic_quantize_row,
    }
)
"""Operators whose elements need statistics of their whole row."""
