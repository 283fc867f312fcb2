"""Data-movement operators: reshape, transpose, strided_slice, pad, concatenate
(``LowerDataMovement``).

They only map indices: an element of the result is an element of an operand
(or the pad value), so fused into a group they cost index arithmetic and no
buffer.

* reshape: the two shapes are split into groups of dimensions with equal
  products (size-1 dimensions fold away); only a group that really merges
  or splits dimensions pays a linearise/delinearise (``muli``/``divsi``/
  ``remsi`` on ``index``).
* transpose: a permutation of the index.
* strided_slice: ``begin + i * stride`` per axis (strides may be negative).
* broadcast_to: numpy broadcasting of the index (size-1 dimensions read 0).
* pad: ``in bounds ? operand[i - before] : pad_value`` as a value-yielding
  ``scf.if`` (the load happens only in bounds); dimensions without padding
  add no test.
* concatenate: a chain of ``scf.if`` on the index along ``axis``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

from xdsl.ir import Operation, SSAValue

from usmp.dialects.relay_ops import (
    BroadcastToOp,
    ConcatenateOp,
    PadOp,
    ReshapeOp,
    StridedSliceOp,
    TransposeOp,
)
from usmp.lowering.kernel import (
    ElementPattern,
    FusedKernel,
    Handler,
    Reads,
    element_type,
    shape_of,
)
from usmp.lowering.loops import Ix, KernelBuilder
from usmp.lowering.ops_elementwise import broadcast_index


def reshape_groups(
    result: Sequence[int], operand: Sequence[int]
) -> list[tuple[range, range]]:
    """Pairs (result dims, operand dims) of consecutive dimensions with equal
    element counts, covering both shapes in order."""
    groups: list[tuple[range, range]] = []
    i = j = 0
    while i < len(result) or j < len(operand):
        si, sj = i, j
        pr = pj = 1
        if i < len(result):
            pr, i = result[i], i + 1
        if j < len(operand):
            pj, j = operand[j], j + 1
        while pr != pj:
            if pr < pj and i < len(result):
                pr, i = pr * result[i], i + 1
            elif j < len(operand):
                pj, j = pj * operand[j], j + 1
            else:  # element counts differ: the verifier rejects this
                raise ValueError(f"cannot reshape {list(operand)} to {list(result)}")
        groups.append((range(si, i), range(sj, j)))
    return groups


def reshape_index(
    b: KernelBuilder, index: Sequence[Ix], result: Sequence[int], operand: Sequence[int]
) -> list[Ix]:
    """The operand index of a result index (row-major element order)."""
    mapped: list[Ix] = [0] * len(operand)
    for rdims, odims in reshape_groups(result, operand):
        linear: Ix = 0
        for d in rdims:
            linear = b.iadd(b.imul(linear, result[d]), index[d])
        for d in reversed(odims[1:]):
            mapped[d] = b.irem(linear, operand[d])
            linear = b.idiv(linear, operand[d])
        if odims:
            mapped[odims[0]] = linear
    return mapped


def reshape_reads(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> list[tuple[SSAValue, Sequence[Ix]]]:
    assert isinstance(op, ReshapeOp)
    source = op.data
    while isinstance(source.owner, ReshapeOp):  # reshape of reshape: one map
        source = source.owner.data
    operand = shape_of(source)
    return [(source, reshape_index(k.b, index, shape_of(op.result), operand))]


def transpose_reads(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> list[tuple[SSAValue, Sequence[Ix]]]:
    assert isinstance(op, TransposeOp)
    rank = len(index)
    axes = [a % rank for a in op.axes] or list(reversed(range(rank)))
    mapped: list[Ix] = [0] * rank
    for k_, axis in enumerate(axes):
        mapped[axis] = index[k_]
    return [(op.data, mapped)]


def strided_slice_reads(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> list[tuple[SSAValue, Sequence[Ix]]]:
    assert isinstance(op, StridedSliceOp)
    b = k.b
    mapped = [
        b.iadd(begin, b.imul(i, stride))
        for i, begin, stride in zip(index, op.begin, op.strides, strict=True)
    ]
    return [(op.data, mapped)]


def broadcast_to_reads(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> list[tuple[SSAValue, Sequence[Ix]]]:
    assert isinstance(op, BroadcastToOp)
    return [(op.data, broadcast_index(index, shape_of(op.data), shape_of(op.result)))]


def _read_one(reads: Reads) -> Handler:
    """The handler of an operator whose element is the one element of an
    operand that ``reads`` names (a view of it)."""

    def handler(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
        ((operand, mapped),) = reads(k, op, index)
        return k.at(operand, mapped)

    return handler


def pad(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, PadOp)
    b = k.b
    widths = op.pad_width
    operand = shape_of(op.data)
    mapped: list[Ix] = []
    conditions: list[SSAValue] = []
    for d, i in enumerate(index):
        before, after = widths[2 * d], widths[2 * d + 1]
        inner = b.isub(i, before)
        mapped.append(inner)
        if isinstance(inner, int):
            if not 0 <= inner < operand[d]:
                return b.const(op.pad_value, element_type(op.result))
            continue
        if before > 0:
            conditions.append(b.icmp("sge", i, before))
        if after > 0:
            conditions.append(b.icmp("slt", inner, operand[d]))
    if not conditions:
        return k.at(op.data, mapped)
    return b.select_if(
        b.i1_and(conditions),
        element_type(op.result),
        lambda: k.at(op.data, mapped),
        lambda: b.const(op.pad_value, element_type(op.result)),
    )


def concatenate(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, ConcatenateOp)
    b = k.b
    axis = op.axis % len(index)
    inputs = list(op.inputs)
    offsets = [0]
    for value in inputs:
        offsets.append(offsets[-1] + shape_of(value)[axis])
    position = index[axis]

    def element(n: int) -> SSAValue:
        mapped = list(index)
        mapped[axis] = b.isub(position, offsets[n])
        return k.at(inputs[n], mapped)

    if isinstance(position, int):
        n = next(n for n in range(len(inputs)) if position < offsets[n + 1])
        return element(n)

    def choose(n: int) -> SSAValue:
        if n == len(inputs) - 1:
            return element(n)
        return b.select_if(
            b.icmp("slt", position, offsets[n + 1]),
            element_type(op.result),
            lambda: element(n),
            lambda: choose(n + 1),
        )

    return choose(0)


class LowerDataMovement(ElementPattern):
    """An element of a ``reshape``, ``transpose``, ``strided_slice``,
    ``broadcast_to``, ``pad`` or
    ``concatenate``: an element of an operand (or the pad value)."""

    handlers: ClassVar[Mapping[str, Handler]] = MappingProxyType(
        {
            "relay.reshape": _read_one(reshape_reads),
            "relay.transpose": _read_one(transpose_reads),
            "relay.strided_slice": _read_one(strided_slice_reads),
            "relay.broadcast_to": _read_one(broadcast_to_reads),
            "relay.pad": pad,
            "relay.concatenate": concatenate,
        }
    )
    reads: ClassVar[Mapping[str, Reads]] = MappingProxyType(
        {
            "relay.reshape": reshape_reads,
            "relay.transpose": transpose_reads,
            "relay.strided_slice": strided_slice_reads,
            "relay.broadcast_to": broadcast_to_reads,
        }
    )
