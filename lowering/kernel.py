"""One fused group -> one loop nest: the element-on-demand emitter.

A primitive function is lowered by computing its *result* element by element
in a single loop nest over the result's shape. ``FusedKernel.at(value,
index)`` emits the scalar ops computing one element of any value of the
group at a given index, recursively:

* a function argument is a ``memref.load`` from the matching buffer;
* a constant of equal elements (scalar, splat) is an ``arith.constant``;
  any other constant a hoisted ``tir.allocate_const`` (planned by ``usmp``
  like any constant);
* an operator asks its handler (``ops_*.py``), which maps the index to its
  operands' indices (broadcasting, transpose, reshape, pad, concatenate) and
  combines their elements, or runs a reduction over a window (conv2d,
  dense, pooling, mean) in an ``scf.for`` nest with scalar ``iter_args``.

So an anchor and its epilogue are computed in registers per output element
and no intermediate tensor exists. Elements are memoised per (value, index)
within a block (a value used twice at the same index is computed once);
scopes follow the builder's blocks.

Row operators (softmax) need statistics of their row (max, sum): when the
result is the row operator through shape-preserving elementwise ops (what
``fuse-ops`` produces), the loop nest puts the row's axis innermost and
computes them once per row, as scalars, before the row's loop (``rows``).
Elsewhere the handler recomputes them per element.

An anchor reached the same way can also compute several neighbouring
elements in one reduction (``jam``: unroll-and-jam of the result's innermost
loop, one accumulator per element); the elements are remembered, and the
epilogue of each is then emitted as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeAlias

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    MemRefType,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from usmp.diagnostics import located_error
from usmp.dialects import relay, tir
from usmp.lowering.loops import Ix, KernelBuilder

Handler: TypeAlias = "Callable[[FusedKernel, Operation, Sequence[Ix]], SSAValue]"
JammedHandler: TypeAlias = (
    "Callable[[FusedKernel, Operation, Sequence[Sequence[Ix]]], list[SSAValue]]"
)
"""Elements of an anchor at several indices (differing in the innermost
coordinate only) computed by one reduction with one accumulator each."""
RowStatistics: TypeAlias = (
    "Callable[[FusedKernel, Operation, Sequence[Ix]], tuple[SSAValue, ...]]"
)
"""Scalars a row operator (softmax) needs for every element of a row, given
the index of any element of the row."""


def shape_of(value: SSAValue | Attribute) -> tuple[int, ...]:
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, TensorType | MemRefType)
    return tuple(t.get_shape())


def element_type(value: SSAValue | Attribute) -> Attribute:
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, TensorType | MemRefType)
    return t.get_element_type()


def memref_of(t: Attribute) -> MemRefType:
    assert isinstance(t, TensorType)
    return MemRefType(t.get_element_type(), t.get_shape())


class FusedKernel:
    """Emits elements of the values of one primitive function."""

    def __init__(
        self,
        builder: KernelBuilder,
        buffers: Mapping[SSAValue, SSAValue],
        handlers: Mapping[str, Handler],
    ):
        self.b = builder
        self.buffers = buffers
        self.handlers = handlers
        self._tables: dict[Hashable, SSAValue] = {}
        self._names: set[str] = set()
        self.rows: dict[Operation, tuple[tuple[Ix, ...], tuple[SSAValue, ...]]] = {}
        """Row operator -> (index without the axis, statistics) of the row the
        result loop nest is in (see ``row``)."""

    def row(
        self, op: Operation, index: Sequence[Ix], axis: int, statistics: RowStatistics
    ) -> tuple[SSAValue, ...]:
        """The statistics of the row of ``index`` along ``axis``: those the
        result loop nest computed before the row's loop when it is this row,
        else computed here (per element: correct but quadratic)."""
        outer = (*index[:axis], *index[axis + 1 :])
        known = self.rows.get(op)
        if known is not None and known[0] == outer:
            return known[1]
        return statistics(self, op, index)

    # -- elements --------------------------------------------------------------

    def at(self, value: SSAValue, index: Sequence[Ix]) -> SSAValue:
        """The element of ``value`` at ``index`` (one ``Ix`` per dimension)."""
        key = (value, tuple(index))
        result = self.b.lookup(key)
        if result is None:
            result = self._compute(value, key[1])
            self.b.remember(key, result)
        return result

    def jam(
        self, op: Operation, indices: Sequence[Sequence[Ix]], handler: JammedHandler
    ) -> None:
        """Compute the elements of ``op``'s result at ``indices`` together
        (``handler``) and remember them for ``at`` in the current block."""
        for index, value in zip(indices, handler(self, op, indices), strict=True):
            self.b.remember((op.results[0], tuple(index)), value)

    def _compute(self, value: SSAValue, index: tuple[Ix, ...]) -> SSAValue:
        buffer = self.buffers.get(value)
        if buffer is not None:
            return self.b.load(buffer, index)
        op = value.owner
        assert isinstance(op, Operation)
        if isinstance(op, relay.ConstantOp):
            return self._constant(op, index)
        handler = self.handlers.get(op.name)
        if handler is None:
            raise located_error(op, f"'{op.name}' has no lowering")
        return handler(self, op, index)

    def _constant(self, op: relay.ConstantOp, index: tuple[Ix, ...]) -> SSAValue:
        value = op.value
        el = element_type(op.result)
        if isinstance(value, DenseIntOrFPElementsAttr):
            elements = value.get_values()
            if all(e == elements[0] for e in elements):  # scalar or splat
                scalar = elements[0]
                assert isinstance(scalar, int | float)
                return self.b.const(scalar, el)
        buffer = self._tables.get(op)
        if buffer is None:
            assert isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr)
            name = self._unique(op.result.name_hint or "constant")
            alloc = tir.AllocateConstOp(memref_of(op.result.type), name, value)
            alloc.location = op.location
            buffer = self.b.hoist(alloc)
            self._tables[op] = buffer
        return self.b.load(buffer, index)

    def _unique(self, name: str) -> str:
        """``name``, or ``name_N``, unused by this function's constants."""
        unique, n = name, 0
        while unique in self._names:
            n += 1
            unique = f"{name}_{n}"
        self._names.add(unique)
        return unique

    def table(self, name: str, values: DenseIntOrFPElementsAttr) -> SSAValue:
        """A constant table (e.g. per-channel multipliers) as a hoisted
        ``tir.allocate_const`` named ``name`` (made unique in the function);
        identical tables are shared."""
        key = (name, values)
        buffer = self._tables.get(key)
        if buffer is None:
            alloc = tir.AllocateConstOp(
                memref_of(values.type), self._unique(name), values
            )
            buffer = self.b.hoist(alloc)
            self._tables[key] = buffer
        return buffer
