"""One fused group -> one loop nest: element requests and their patterns.

A primitive function is lowered by computing its *result* element by element
in a single loop nest over the result's shape. ``FusedKernel.at(value,
index)`` emits the scalar ops computing one element of any value of the
group at a given index. An element of a function argument is a
``memref.load`` from the matching buffer; any other is computed by a
pattern: ``at`` asks the element patterns, in order, for the element at
the current point of the loop nest; the first whose family computes the
value (``ElementPattern.matches``) emits its scalar code
(``located_element``), asking for its operands' elements the same way
(recursively, depth first: the code of an element is emitted where it is
needed, in registers). Each pattern is also an xDSL rewrite pattern that
replaces an element request ``lower_ops.element %value[index]``
(``ElementOp``, the analogue of a ``tensor.extract``) by the same code;
``at`` calls it directly instead of placing a request and running xDSL's
``GreedyRewritePatternApplier`` on it, which built, matched and erased an
op per element (15% of lower-ops on MobileNetV2) for the same IR. One
``ElementPattern`` per family:

* ``LowerConstantElement``: a constant of equal elements (scalar, splat) is
  an ``arith.constant``; any other constant a hoisted ``tir.allocate_const``
  (planned by ``usmp`` like any constant);
* one pattern per operator family (``ops_*.py``), which maps the index to
  its operands' indices (broadcasting, transpose, reshape, pad, concatenate)
  and combines their elements, or runs a reduction over a window (conv2d,
  dense, pooling, mean) in an ``scf.for`` nest with scalar ``iter_args``.

The patterns emit through the kernel's ``KernelBuilder`` (not at a
request), which places each op in the outermost block where its operands
exist and shares equal ones (``loops.py``), and stamp the producer's
location on what they emit. The IR never holds a placeholder between two
patterns.

The depth of that recursion would be the depth of the fused graph (a
10,000-operator elementwise chain is one group with ``fuse-ops{max_depth=
10000}``), so ``at`` does not recurse along chains: a family also declares,
per operator, the operand elements its handler reads first and
unconditionally (``reads``: the operand and its index, computed with pure
index arithmetic only, which the builder shares, so the handler computing
them again gets the same values). ``at`` walks those reads with an explicit
stack and computes the elements deepest first (the order the recursion
would emit them in); each handler then finds its operands remembered.
Python recursion is left only where a handler reads an operand element
under a condition or in a loop of its own (``pad``'s guarded branch,
``concatenate``, ``gather``, the reductions of an anchor), whose chains
nest the generated code too (an ``scf.if`` per pad); beyond
``MAX_NESTED_REQUESTS`` such a chain is a located error.

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
from functools import lru_cache
from types import MappingProxyType
from typing import ClassVar, TypeAlias, cast

import numpy as np
import numpy.typing as npt
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IndexType,
    MemRefType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from usmp.diagnostics import located_error
from usmp.dialects import relay, tir
from usmp.lowering.constant_args import constant_array, is_uniform, stored_elements
from usmp.lowering.create import create
from usmp.lowering.loops import Ix, KernelBuilder
from usmp.lowering.target import PORTABLE, TargetFeatures

Handler: TypeAlias = "Callable[[FusedKernel, Operation, Sequence[Ix]], SSAValue]"
JammedHandler: TypeAlias = (
    "Callable[[FusedKernel, Operation, Sequence[Sequence[Ix]]], list[SSAValue]]"
)
"""Elements of an anchor at several indices (differing in the innermost
coordinate only) computed by one reduction with one accumulator each."""
Reads: TypeAlias = "Callable[[FusedKernel, Operation, Sequence[Ix]], Sequence[tuple[SSAValue, Sequence[Ix]]]]"  # noqa: E501
"""The operand elements (operand, index) a handler reads before anything
else, whatever their values, computed with pure index arithmetic only
(see the module note)."""
RowStatistics: TypeAlias = (
    "Callable[[FusedKernel, Operation, Sequence[Ix]], tuple[SSAValue, ...]]"
)
"""Scalars a row operator (softmax) needs for every element of a row, given
the index of any element of the row."""


def shape_of(value: SSAValue | Attribute) -> tuple[int, ...]:
    kind = type(value)  # exact classes first: ``isinstance`` is an ABC check
    if kind is OpResult or kind is BlockArgument:
        t = value.type  # pyright: ignore[reportAttributeAccessIssue]
    else:
        t = value.type if isinstance(value, SSAValue) else value
    if type(t) is not TensorType and type(t) is not MemRefType:
        assert isinstance(t, TensorType | MemRefType)
    return tuple(t.get_shape())  # pyright: ignore[reportAttributeAccessIssue]


def element_type(value: SSAValue | Attribute) -> Attribute:
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, TensorType | MemRefType)
    return t.get_element_type()


@lru_cache(maxsize=4096)
def memref_of(t: Attribute) -> MemRefType:
    """The memref of a tensor type (types are immutable values: one per
    tensor type; xDSL's ``MemRefType`` constructor checks its shape against
    ``ArrayAttr[IntAttr]`` through ``isa``, a generic-alias walk per call)."""
    assert isinstance(t, TensorType)
    return MemRefType(t.get_element_type(), t.get_shape())


DYNAMIC = -(2**63)
"""A coordinate of ``ElementOp.static_index`` given by an operand (MLIR's
``ShapedType::kDynamic``)."""


@lru_cache(maxsize=4096)
def _static_index(static: tuple[int, ...]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, static)


@lru_cache(maxsize=4096)
def _static_values(static: DenseArrayBase) -> tuple[int, ...]:
    return static.get_values()  # type: ignore[return-value]


@irdl_op_definition
class ElementOp(IRDLOperation):
    """``lower_ops.element %tensor[static_index](%dynamic_index...)``: the
    element of a tensor of the primitive function at an index, each
    coordinate a constant or an ``index`` operand (where ``static_index``
    is ``DYNAMIC``). Exists only while an element pattern rewrites it."""

    name = "lower_ops.element"

    tensor = operand_def(TensorType)
    dynamic_index = var_operand_def(IndexType)
    static_index = prop_def(DenseArrayBase)
    result = result_def()

    @classmethod
    def get(cls, tensor: SSAValue, index: Sequence[Ix]) -> ElementOp:
        static = tuple(i if isinstance(i, int) else DYNAMIC for i in index)
        return cls.create(
            operands=[tensor, *(i for i in index if not isinstance(i, int))],
            properties={"static_index": _static_index(static)},
            result_types=[element_type(tensor)],
        )

    @property
    def index(self) -> tuple[Ix, ...]:
        # (the generic accessors: the IRDL ones are slow on this hot path)
        static = self.properties["static_index"]
        assert isinstance(static, DenseArrayBase)
        dynamic = iter(self.operands[1:])
        values = _static_values(static)
        return tuple(next(dynamic) if i == DYNAMIC else i for i in values)


_PUSHED, _UNKNOWN, _READ = 0, 1, 2
"""``FusedKernel.at``'s stack entries: an element to look up (it may have
been computed since it was pushed), one known not to be computed yet, one
whose reads are computed."""

MAX_NESTED_REQUESTS = 64
"""Element requests that may nest (each a handler asking for an operand
element its ``reads`` do not list: about ten Python frames, well inside
Python's default limit of 1,000 with the pass machinery around them)."""


class ElementPattern(RewritePattern):
    """Replaces an element request of a value its family computes by the
    scalar code of that element, emitted through the kernel's builder at
    the location of the value's producer.

    A family lists its operators in ``handlers`` (operator class -> element
    emitter of ``ops_*.py``: the lowering of an operator is registered by
    its op class); a pattern for values that are not operator results
    overrides ``computes`` and ``element``. Which family computes a value
    depends on its producer's class alone: the kernel finds it once per
    class (``FusedKernel._pattern_for``), not per element."""

    handlers: ClassVar[Mapping[type[Operation], Handler]] = MappingProxyType({})
    reads: ClassVar[Mapping[type[Operation], Reads]] = MappingProxyType({})
    """Operator class -> the operand elements its handler reads first (only
    for handlers that read them unconditionally, in the current block)."""

    def __init__(self, kernel: FusedKernel):
        self.kernel = kernel

    def computes(self, owner: type[Operation | Block]) -> bool:
        """Whether this family computes the values of an owner (producer)
        of this class."""
        return owner in self.handlers

    def matches(self, value: SSAValue) -> bool:
        """Whether ``value`` is this family's."""
        return self.computes(type(value.owner))

    def element(self, value: SSAValue, index: Sequence[Ix]) -> SSAValue:
        """The element of ``value`` (``matches``) at ``index``."""
        op = cast(Operation, value.owner)  # (``matches``: an operator)
        return self.handlers[type(op)](self.kernel, op, index)

    def located_element(self, value: SSAValue, index: Sequence[Ix]) -> SSAValue:
        """``element``, its ops at the location of ``value``'s producer."""
        producer = value.owner
        if type(producer) is Block:
            located = cast(Block, producer).parent_op()
        else:
            located = cast(Operation, producer)
        b = self.kernel.b
        outer = b.location
        b.location = located.location if located else None
        try:
            return self.element(value, index)
        finally:
            b.location = outer

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ElementOp, rewriter: PatternRewriter) -> None:
        value = op.operands[0]  # op.tensor (the IRDL accessor is slow)
        if self.matches(value):
            rewriter.replace(op, [], [self.located_element(value, op.index)])


class LowerConstantElement(ElementPattern):
    """An element of a ``relay.constant``: an immediate when all its
    elements are equal (scalar, splat), else a load from the constant as a
    hoisted ``tir.allocate_const``."""

    def computes(self, owner: type[Operation | Block]) -> bool:
        return issubclass(owner, relay.ConstantOp)

    def element(self, value: SSAValue, index: Sequence[Ix]) -> SSAValue:
        op = value.owner
        assert isinstance(op, relay.ConstantOp)
        k = self.kernel
        data = op.value
        el = element_type(op.result)
        if isinstance(data, DenseIntOrFPElementsAttr) and is_uniform(data):
            stored = stored_elements(data)  # scalar or splat
            scalar = data.get_values()[0] if stored is None else stored[0].item()
            assert isinstance(scalar, int | float)
            return k.b.const(scalar, el)
        assert isinstance(data, DenseIntOrFPElementsAttr | DenseResourceAttr)
        name = op.result.name_hint or "constant"
        return k.b.load(k.table(name, data, op), index)


@lru_cache(maxsize=16)
def _all_reads(
    patterns: tuple[type[ElementPattern], ...],
) -> Mapping[type[Operation | Block], Reads]:
    """The ``reads`` of all ``patterns`` (the last one's per class), merged
    once per set of patterns, not per kernel."""
    return MappingProxyType(
        {kind: reads for pattern in patterns for kind, reads in pattern.reads.items()}
    )


class FusedKernel:
    """Emits elements of the values of one primitive function."""

    def __init__(
        self,
        builder: KernelBuilder,
        buffers: Mapping[SSAValue, SSAValue],
        patterns: Sequence[type[ElementPattern]],
        features: TargetFeatures = PORTABLE,
        constants: Mapping[SSAValue, relay.ConstantOp] | None = None,
    ):
        self.b = builder
        self.buffers = buffers
        self.features = features
        """What the target CPU offers (``lower-ops``' ``mcpu``)."""
        self.constants: Mapping[SSAValue, relay.ConstantOp] = constants or {}
        """Parameters of the primitive function bound to one constant at
        every call (``constant_args.constant_arguments``)."""
        self.flat_views: dict[SSAValue, SSAValue] = {}
        """Argument buffer -> its hoisted one-dimensional view
        (``ops_nn_dsp``)."""
        self._element_patterns = [pattern(self) for pattern in patterns]
        self._patterns: dict[type[Operation | Block], ElementPattern | None] = {}
        """Producer class -> the first pattern that computes its values
        (``_pattern_for``)."""
        self._reads: Mapping[type[Operation | Block], Reads] = _all_reads(
            tuple(patterns)
        )
        self._nested = 0
        """Element requests under way (a handler asking for an element its
        ``reads`` do not cover recurses; see ``MAX_NESTED_REQUESTS``)."""
        self._tables: dict[Hashable, SSAValue] = {}
        self._table_ids: dict[tuple[str, int], tuple[Attribute, SSAValue]] = {}
        """``table``'s tables by name and the ``id`` of the attribute object
        (kept alive by the entry): a handler asks for its operator's tables
        at every element it emits, and hashing a dense attribute hashes its
        bytes through Python ``__hash__``es; an equal attribute built apart
        is found in ``_tables``."""
        self._names: set[str] = set()
        self.plans: dict[Operation, object] = {}
        """Operator -> what its handler decided from the operator alone, the
        same at every element (e.g. ``ops_quant``'s per-channel tables): a
        jammed kernel asks for several elements of each operator."""
        self.rows: dict[Operation, tuple[tuple[Ix, ...], tuple[SSAValue, ...]]] = {}
        """Row operator -> (index without the axis, statistics) of the row the
        result loop nest is in (see ``row``)."""

    def constant_value(self, value: SSAValue) -> npt.NDArray[np.generic] | None:
        """The values of ``value`` when it is known at compile time (a
        ``relay.constant``, or a parameter every call binds to one), as a
        numpy array; None otherwise (``constant_args.constant_array``)."""
        owner = value.owner
        if not isinstance(owner, relay.ConstantOp):
            owner = self.constants.get(value)
        return None if owner is None else constant_array(owner.value)

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
        """The element of ``value`` at ``index`` (one ``Ix`` per dimension).

        Elements the handlers read first (``ElementPattern.reads``) are
        computed before the element that reads them, deepest first, from an
        explicit stack: no Python recursion along a chain of operators.

        An element taken off the stack is looked up once: when its reads
        are computed and it comes off again, it is still unknown (its reads
        never compute it: the group is acyclic), and so is an element about
        to be remembered (``KernelBuilder.remember_new``)."""
        b = self.b
        lookup = b.lookup
        root = tuple(index)
        known = lookup((value, root))
        if known is not None:
            return known
        remember = b.remember_new
        buffers, all_reads = self.buffers, self._reads
        result: SSAValue | None = None
        stack: list[tuple[SSAValue, tuple[Ix, ...], int]] = [(value, root, _UNKNOWN)]
        while stack:
            v, i, state = stack.pop()
            if state == _READ:  # its reads are computed
                result = self._request(v, i)
                remember((v, i), result)
                continue
            if state == _PUSHED and lookup((v, i)) is not None:
                continue
            buffer = buffers.get(v)
            if buffer is not None:  # an argument: a load, no request
                result = b.load(buffer, i)
                remember((v, i), result)
                continue
            reads = all_reads.get(type(v.owner))  # (by operator class)
            if reads is None:
                result = self._request(v, i)
                remember((v, i), result)
                continue
            stack.append((v, i, _READ))
            op = cast(Operation, v.owner)
            for operand, at in reversed(reads(self, op, i)):
                at = tuple(at)
                if lookup((operand, at)) is None:
                    stack.append((operand, at, _PUSHED))
        assert result is not None  # (the root's, computed last)
        return result

    def jam(
        self, op: Operation, indices: Sequence[Sequence[Ix]], handler: JammedHandler
    ) -> None:
        """Compute the elements of ``op``'s result at ``indices`` together
        (``handler``) and remember them for ``at`` in the current block."""
        for index, value in zip(indices, handler(self, op, indices), strict=True):
            self.b.remember((op.results[0], tuple(index)), value)

    def _request(self, value: SSAValue, index: tuple[Ix, ...]) -> SSAValue:
        """The element of the first pattern whose family computes ``value``
        (what the patterns' ``match_and_rewrite`` would replace a
        ``lower_ops.element`` request placed here by)."""
        op = value.owner
        if self._nested >= MAX_NESTED_REQUESTS:
            assert isinstance(op, Operation)
            raise located_error(
                op,
                f"'{op.name}' is reached through more than {MAX_NESTED_REQUESTS} "
                "nested operators whose elements are read conditionally or in a "
                "loop (pad, concatenate, gather, reductions) in one primitive "
                "function; lower-ops accepts at most that nesting (fuse smaller "
                "groups: fuse-ops{max_depth=N})",
            )
        kind = type(op)
        patterns = self._patterns
        pattern = patterns[kind] if kind in patterns else self._pattern_for(kind)
        if pattern is None:
            assert isinstance(op, Operation)
            raise located_error(op, f"'{op.name}' has no lowering")
        self._nested += 1
        try:
            return pattern.located_element(value, index)
        finally:
            self._nested -= 1

    def _pattern_for(self, kind: type[Operation | Block]) -> ElementPattern | None:
        """The first of the element patterns that computes the values of a
        producer of class ``kind`` (None: none does), remembered."""
        found = next((p for p in self._element_patterns if p.computes(kind)), None)
        self._patterns[kind] = found
        return found

    def _unique(self, name: str) -> str:
        """``name``, or ``name_N``, unused by this function's constants."""
        unique, n = name, 0
        while unique in self._names:
            n += 1
            unique = f"{name}_{n}"
        self._names.add(unique)
        return unique

    def table(
        self,
        name: str,
        values: DenseIntOrFPElementsAttr | DenseResourceAttr,
        source: Operation | None = None,
    ) -> SSAValue:
        """A constant table (e.g. per-channel multipliers, or the data of
        the constant ``source``) as a hoisted ``tir.allocate_const`` named
        ``name`` (made unique in the function); the same constant, or an
        identical table, is shared."""
        if source is None:  # a table: by identity first (see ``_table_ids``)
            known = self._table_ids.get((name, id(values)))
            if known is not None:
                return known[1]
        key: Hashable = source if source is not None else (name, values)
        buffer = self._tables.get(key)
        if buffer is None:
            alloc = create(  # (the IRDL constructor costs five times the op)
                tir.AllocateConstOp,
                (),
                memref_of(values.type),
                name_hint=StringAttr(self._unique(name)),
                value=values,
            )
            if source is not None:
                alloc.location = source.location
            buffer = self.b.hoist(alloc)
            self._tables[key] = buffer
        if source is None:
            self._table_ids[name, id(values)] = (values, buffer)
        return buffer
