"""Compile-time bounds of integer values in a fused group.

``magnitude(k, value)`` is a bound ``M`` with ``|v| <= M`` for every element
``v`` of ``value``, or None when nothing is known: from the element type of
a parameter, from the values of a constant (or of a parameter every call
binds to one, ``FusedKernel.constant_value``), and through the operators
whose result a bound of their operands bounds:

* ``conv2d``/``dense``: ``taps * max|x - izp| * max|w - kzp|``, or with
  known weights ``max|x - izp|`` times the largest per-channel sum of
  ``|w - kzp|`` (exact and often far tighter);
* ``add``/``subtract``: the sum of the operands' bounds.

A bound that does not fit in 62 bits counts as unknown. The DSP
requantisation (``ops_quant``) uses it to prove that 32-bit arithmetic
cannot overflow.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Operation, SSAValue

from usmp.dialects.relay_ops import AddOp, Conv2DOp, DenseOp, SubtractOp
from usmp.dialects.relay_shapes import conv2d_weight_dims
from usmp.lowering.kernel import FusedKernel, element_type, shape_of
from usmp.lowering.scalar import int_bounds

LIMIT = 1 << 62


def _type_bounds(value: SSAValue) -> tuple[int, int] | None:
    t = element_type(value)
    return int_bounds(t) if isinstance(t, IntegerType) else None


def _centred(value: SSAValue, zero_point: int) -> int | None:
    """``max |v - zero_point|`` over the element type of ``value``."""
    bounds = _type_bounds(value)
    if bounds is None:
        return None
    lo, hi = bounds
    return max(hi - zero_point, zero_point - lo)


def magnitude(k: FusedKernel, value: SSAValue) -> int | None:
    """A bound of ``|v|`` over the elements of ``value`` (module note)."""
    known = k.constant_value(value)
    if known is not None:
        return int(np.abs(known.astype(np.int64)).max(initial=0))
    op = value.owner
    if not isinstance(op, Operation):  # an unknown parameter: its type
        bounds = _type_bounds(value)
        return None if bounds is None else max(-bounds[0], bounds[1])
    found: int | None = None
    if isinstance(op, Conv2DOp | DenseOp):
        found = _reduction(k, op)
    elif isinstance(op, AddOp | SubtractOp):
        a, b = magnitude(k, op.lhs), magnitude(k, op.rhs)
        found = None if a is None or b is None else a + b
    return found if found is not None and found < LIMIT else None


def _reduction(k: FusedKernel, op: Conv2DOp | DenseOp) -> int | None:
    x = _centred(op.data, op.input_zero_point)
    if x is None:
        return None
    weights = k.constant_value(op.weight)
    if weights is not None:
        centred = np.abs(weights.astype(np.int64) - op.kernel_zero_point)
        if isinstance(op, DenseOp):
            per_output = centred.sum(axis=1)
        else:
            axis = op.kernel_layout.index("O")
            per_output = (
                np.moveaxis(centred, axis, 0)
                .reshape(centred.shape[axis], -1)
                .sum(axis=1)
            )
        return x * int(per_output.max(initial=0))
    w = _centred(op.weight, op.kernel_zero_point)
    if w is None:
        return None
    t = op.weight.type
    assert isinstance(t, TensorType)
    if isinstance(op, DenseOp):
        taps = shape_of(op.weight)[1]
    else:
        kh, kw, cg, _ = conv2d_weight_dims(shape_of(op.weight), op.kernel_layout)
        taps = kh * kw * cg
    return taps * x * w
