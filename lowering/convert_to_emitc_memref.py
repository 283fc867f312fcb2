"""``memref`` to ``emitc``: one pattern per op (the pure aliases share one).

A memref value is a pointer to its element type that points at the memref's
aligned base (see ``convert_to_emitc_common.py``); element ``m[i, j]`` is
``p[offset + i*s0 + j*s1]`` with the layout's static offset and strides,
folded at compile time where indices are constants. So:

* ``memref.view %pool[%off][]`` -> ``(T*)&pool[off]``;
* ``subview``/``reinterpret_cast``/``cast``/``collapse_shape``/
  ``expand_shape``/``assume_alignment`` -> the same pointer (the result type's
  layout says how to index it);
* ``memref.copy`` -> ``memcpy`` when both sides are contiguous, loops otherwise;
* an ``scf.for`` that ``lower-ops`` marked ``COPY_RUN`` (a gather's rows) and
  that is ``dst[.., i] = src[.., i]`` for ``0 <= i < n`` on unit innermost
  strides -> one ``memmove`` of the run (``copy_run``; memmove, not memcpy,
  because ``usmp`` may overlap the two buffers where the forward element
  loop is correct, which is exactly where memmove is);
* ``memref.alloca`` / static ``memref.alloc`` -> a local C array (never the
  heap); ``memref.dealloc`` -> nothing; a dynamically sized ``alloc`` is a
  located error (the generated C has no heap and no VLAs);
* ``memref.get_global`` -> ``&global[0]``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import MemRefType, ShapedType, StringAttr, i32
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable

from usmp.diagnostics import located_error
from usmp.dialects import emitc
from usmp.lowering import dsp
from usmp.lowering.convert_to_emitc_common import (
    INDEX_TYPE,
    ConversionState,
    EmitcPattern,
    OpLowering,
    assign_op,
    constant_value,
    convert_scalar_type,
    convert_type,
    load_op,
    static_layout,
)
from usmp.lowering.create import create

_ADDRESS_OF = StringAttr("&")


def address_of(lw: OpLowering, lvalue: SSAValue) -> SSAValue:
    """``&lvalue`` (``emitc.apply "&"``)."""
    assert isinstance(lvalue.type, emitc.LValueType)
    pointer = lw.state.pointer_type(lvalue.type.value_type)  # pyright: ignore[reportArgumentType]
    op = create(emitc.ApplyOp, (lvalue,), pointer, applicableOperator=_ADDRESS_OF)
    return lw.result(op)


def element_pointer(lw: OpLowering, memref_value: SSAValue, op: Operation) -> SSAValue:
    """The pointer of ``memref_value``, typed as its element type."""
    type_ = memref_value.type
    assert isinstance(type_, MemRefType)
    pointer = lw.value(memref_value)
    wanted, _ = lw.state.element_types(type_, op)
    # (converted pointers share ``pointer_to``'s types: the same object is
    # the common case, and the types' ``__eq__`` is a Python call)
    if (have := pointer.type) is not wanted and have != wanted:
        pointer = lw.result(create(emitc.CastOp, (pointer,), wanted))
    return pointer


def first_element_pointer(
    lw: OpLowering, memref_value: SSAValue, op: Operation
) -> SSAValue:
    """``&p[offset]``: the address of ``memref_value``'s first element (its
    pointer itself when its layout's offset is 0)."""
    type_ = memref_value.type
    assert isinstance(type_, MemRefType)
    offset, _ = static_layout(type_, op)
    pointer = element_pointer(lw, memref_value, op)
    if offset == 0:
        return pointer
    return address_of(lw, lw.result(emitc.SubscriptOp(pointer, [lw.index(offset)])))


def linear_index(
    lw: OpLowering, type_: MemRefType, indices: Sequence[SSAValue], op: Operation
) -> SSAValue:
    """``offset + sum(index_k * stride_k)`` with constants folded."""
    offset, strides = lw.state.layout(type_, op)
    constant = offset
    terms: list[SSAValue] = []
    for index, stride in zip(indices, strides, strict=True):
        if (known := constant_value(index)) is not None:
            constant += known * stride
        elif stride == 1:
            terms.append(index)
        else:
            product = create(emitc.MulOp, (index, lw.index(stride)), INDEX_TYPE)
            terms.append(lw.result(product))
    if not terms:
        return lw.index(constant)
    total = terms[0]
    for term in terms[1:]:
        total = lw.result(create(emitc.AddOp, (total, term), INDEX_TYPE))
    if constant > 0:
        operands = (total, lw.index(constant))
        total = lw.result(create(emitc.AddOp, operands, INDEX_TYPE))
    elif constant < 0:
        operands = (total, lw.index(-constant))
        total = lw.result(create(emitc.SubOp, operands, INDEX_TYPE))
    return total


def element(
    lw: OpLowering, memref_value: SSAValue, indices: Sequence[SSAValue], op: Operation
) -> SSAValue:
    """The lvalue ``p[linear index]`` of one element (``indices`` converted)."""
    type_ = memref_value.type
    assert isinstance(type_, MemRefType)
    pointer = element_pointer(lw, memref_value, op)
    index = linear_index(lw, type_, indices, op)
    _, lvalue = lw.state.element_types(type_, op)  # (``pointer``'s pointee's)
    return lw.result(create(emitc.SubscriptOp, (pointer, index), lvalue))


class LoadOpLowering(EmitcPattern):
    """``p[index]``; the first load of a packed byte read (``dsp.PACKED``,
    found by ``find_packed_reads``) also reads the word:
    ``usmp_read_s8x4(&p[index])`` replaces the packed value (its loads and
    shifts are then dead and erased)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter) -> None:
        lw = self.lowering(op, rewriter)
        memref_value, *indices = op._operands  # (``memref``, ``indices``'s fields)  # pyright: ignore[reportPrivateUsage]
        lvalue = element(lw, memref_value, indices, op)
        assert isinstance(lvalue.type, emitc.LValueType)
        root = self.state.packed.pop(op, None)
        if root is not None:
            read = emitc.CallOpaqueOp(dsp.READ_S8X4, [address_of(lw, lvalue)], [i32])
            rewriter.replace_all_uses_with(root.results[0], lw.result(read))
            self.state.helpers.add(dsp.READ_S8X4)
        lw.replace_by(emitc.LoadOp, (lvalue,), lvalue.type.value_type)


def find_packed_reads(ops: Iterable[Operation]) -> dict[Operation, Operation]:
    """Among ``ops`` (a walk of the module): the first load of each packed
    byte read whose loads read consecutive elements (``dsp.packed_loads``)
    -> the op computing its word."""
    found: dict[Operation, Operation] = {}
    for op in ops:
        if dsp.PACKED in op.attributes and (loads := dsp.packed_loads(op)):
            found[loads[0]] = op
    return found


class StoreOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter) -> None:
        lw = self.lowering(op, rewriter)
        value, memref_value, *indices = op._operands  # (the descriptors' fields)  # pyright: ignore[reportPrivateUsage]
        lvalue = element(lw, memref_value, indices, op)
        lw.emit(create(emitc.AssignOp, (lvalue, lw.value(value))))
        lw.replace()


class ViewOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.ViewOp, rewriter: PatternRewriter) -> None:
        if op.sizes:
            raise located_error(
                op, "memref.view with dynamic sizes cannot be emitted (no VLAs)"
            )
        lw = self.lowering(op, rewriter)
        pool = lw.value(op.source)
        if type(pool.type) is emitc.PointerType:  # a pool argument: T*
            lvalue = lw.state.lvalue_type(pool.type.pointee_type)  # pyright: ignore[reportAttributeAccessIssue]
            byte = lw.result(create(emitc.SubscriptOp, (pool, op.byte_shift), lvalue))
        else:
            byte = lw.result(emitc.SubscriptOp(pool, [op.byte_shift]))
        pointer = address_of(lw, byte)
        result_type = convert_type(op.result.type, op)
        if pointer.type != result_type:
            pointer = lw.result(create(emitc.CastOp, (pointer,), result_type))
        lw.replace(pointer)


_ALIASES = (
    memref.SubviewOp,
    memref.ReinterpretCastOp,
    memref.CastOp,
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
)


class AliasOpLowering(EmitcPattern):
    """Ops that only reinterpret a memref: the pointer is unchanged."""

    op_classes = _ALIASES

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, _ALIASES):
            return
        result = op.results[0]
        assert isinstance(result.type, MemRefType)
        static_layout(result.type, op)  # the alias must be indexable statically
        lw = self.lowering(op, rewriter)
        lw.replace(lw.value(op.operands[0]))


class AssumeAlignmentOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: memref.AssumeAlignmentOp, rewriter: PatternRewriter
    ) -> None:
        lw = self.lowering(op, rewriter)
        lw.replace(*(lw.value(op.operands[0]) for _ in op.results))


def _contiguous(type_: MemRefType, op: Operation) -> bool:
    _, strides = static_layout(type_, op)
    return list(strides) == list(ShapedType.strides_for_shape(type_.get_shape()))


COPY_RUN = "lower_ops.copy_run"
"""Unit attribute of an ``scf.for`` that ``lower-ops`` allows to become one
``memmove`` (``copy_run``)."""


def copy_run(lw: OpLowering, loop: scf.ForOp) -> bool:
    """Emit ``loop`` as ``memmove(&dst[.., 0], &src[.., 0], n * size)`` when
    it is marked ``COPY_RUN`` and is exactly ``dst[.., i] = src[.., i]`` over
    ``0 <= i < n`` with the other indices defined outside it and unit
    innermost strides; False (nothing emitted) otherwise."""
    if COPY_RUN not in loop.attributes or loop.iter_args:
        return False
    if (constant_value(loop.lb), constant_value(loop.step)) != (0, 1):
        return False
    count = constant_value(loop.ub)
    body = loop.body.block
    ops = list(body.ops)
    if count is None or count <= 0 or len(ops) != 3:
        return False
    load, store, _ = ops
    iv = body.args[0]
    if not (
        isinstance(load, memref.LoadOp)
        and isinstance(store, memref.StoreOp)
        and store.value is load.res
    ):
        return False
    sides = ((store.memref, list(store.indices)), (load.memref, list(load.indices)))
    for value, indices in sides:
        type_ = value.type
        assert isinstance(type_, MemRefType)
        _, strides = static_layout(type_, loop)
        if not indices or indices[-1] is not iv or iv in indices[:-1]:
            return False
        if strides[-1] != 1:
            return False
    element_t = load.memref.type.get_element_type()  # pyright: ignore[reportAttributeAccessIssue]
    if element_t != store.memref.type.get_element_type():  # pyright: ignore[reportAttributeAccessIssue]
        return False
    dst, src = (
        address_of(lw, element(lw, value, [*indices[:-1], lw.index(0)], loop))
        for value, indices in sides
    )
    lw.include("string.h")
    size = lw.index(count * element_t.size)
    lw.emit(emitc.CallOpaqueOp("memmove", [dst, src, size], []))
    return True


class CopyOpLowering(EmitcPattern):
    """``memcpy`` between contiguous memrefs, an element loop nest otherwise."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CopyOp, rewriter: PatternRewriter) -> None:
        src_t, dst_t = op.source.type, op.destination.type
        assert isinstance(src_t, MemRefType) and isinstance(dst_t, MemRefType)
        if src_t.get_shape() != dst_t.get_shape():
            raise located_error(op, f"memref.copy between shapes {src_t} and {dst_t}")
        src_dense, dst_dense = _contiguous(src_t, op), _contiguous(dst_t, op)
        lw = self.lowering(op, rewriter)
        count = math.prod(src_t.get_shape())
        if count and src_dense and dst_dense:
            lw.include("string.h")
            size = count * src_t.get_element_type().size  # pyright: ignore[reportAttributeAccessIssue]
            dst = first_element_pointer(lw, op.destination, op)
            src = first_element_pointer(lw, op.source, op)
            lw.emit(emitc.CallOpaqueOp("memcpy", [dst, src, lw.index(size)], []))
        elif count:
            _copy_loops(lw, op, src_t.get_shape())
        lw.replace()


def _copy_loops(lw: OpLowering, op: memref.CopyOp, shape: Sequence[int]) -> None:
    """``dst[i..] = src[i..]`` in a loop nest (copies between strided memrefs)."""
    outer = lw.at
    indices: list[BlockArgument] = []
    for extent in shape:
        body = Block(arg_types=[INDEX_TYPE])
        lw.emit(emitc.ForOp(lw.index(0), lw.index(extent), lw.index(1), Region(body)))
        indices.append(body.args[0])
        lw.at = InsertPoint.at_end(body)
    value = lw.result(load_op(element(lw, op.source, indices, op)))
    lw.emit(assign_op(element(lw, op.destination, indices, op), value))
    for index in indices:
        lw.rewriter.insert(emitc.YieldOp(), InsertPoint.at_end(index.block))
    lw.at = outer


class AllocOpLowering(EmitcPattern):
    """A static ``alloc``/``alloca``: a local C array (no heap, no VLAs)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: memref.AllocOp | memref.AllocaOp, rewriter: PatternRewriter
    ) -> None:
        type_ = op.memref.type
        assert isinstance(type_, MemRefType)
        if op.dynamic_sizes or any(d < 0 for d in type_.get_shape()):
            raise located_error(
                op,
                f"'{op.name}' of {type_} is dynamically sized: the generated C has "
                "no heap and no VLAs; give the buffer a static shape (usmp then "
                "plans it)",
            )
        lw = self.lowering(op, rewriter)
        count = max(1, math.prod(type_.get_shape()))
        elem = convert_scalar_type(type_.get_element_type(), op)
        array_type = emitc.ArrayType([count], elem)  # pyright: ignore[reportArgumentType]
        array = lw.result(emitc.VariableOp(array_type))
        first = lw.result(emitc.SubscriptOp(array, [lw.index(0)]))
        lw.replace(address_of(lw, first))


class DeallocOpLowering(EmitcPattern):
    """Local arrays need no freeing."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: memref.DeallocOp, rewriter: PatternRewriter
    ) -> None:
        self.lowering(op, rewriter).replace()


class GetGlobalOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: memref.GetGlobalOp, rewriter: PatternRewriter
    ) -> None:
        type_ = op.memref.type
        assert isinstance(type_, MemRefType)
        lw = self.lowering(op, rewriter)
        elem = convert_scalar_type(type_.get_element_type(), op)
        shape = list(type_.get_shape()) or [1]
        array_type = emitc.ArrayType(shape, elem)  # pyright: ignore[reportArgumentType]
        name = op.name_.root_reference.data
        array = lw.result(emitc.GetGlobalOp(name, array_type))
        first = lw.result(emitc.SubscriptOp(array, [lw.index(0)] * len(shape)))
        pointer = address_of(lw, first)
        if _is_constant_global(op):
            _refuse_writes(op)
            # ``&table[0]`` points to const: a declared ``T*`` takes it by
            # an explicit cast, as a constant pool's views do (C99 refuses
            # the implicit one)
            pointer = lw.result(create(emitc.CastOp, (pointer,), pointer.type))
        lw.replace(pointer)


def _refuse_writes(op: memref.GetGlobalOp) -> None:
    """A located error for a ``memref.store`` or ``memref.copy`` into the
    constant global ``op`` reads (directly or through views): its C array
    is ``static const``, in flash on a microcontroller."""
    values: list[SSAValue] = [op.memref]
    while values:
        value = values.pop()
        for use in value.uses:
            user = use.operation
            if isinstance(user, _ALIASES):
                values.extend(user.results)
            elif isinstance(user, memref.StoreOp | memref.CopyOp) and use.index == 1:
                raise located_error(
                    user,
                    f"writes into the constant global @{op.name_.root_reference.data}"
                    " (its C array is static const); write into a buffer, or drop "
                    "'constant' from the memref.global",
                )


def _is_constant_global(op: memref.GetGlobalOp) -> bool:
    """Whether the global ``op`` names is ``constant`` (still a
    ``memref.global``, or already its ``emitc.global``)."""
    try:  # from the closest symbol table around op
        target = SymbolTable.lookup_symbol(op, op.name_)
    except ValueError:  # none around it
        return False
    if isinstance(target, memref.GlobalOp):
        return target.constant is not None
    return isinstance(target, emitc.GlobalOp) and target.const_specifier is not None


class DimOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DimOp, rewriter: PatternRewriter) -> None:
        type_ = op.source.type
        index = constant_value(op.index)
        assert isinstance(type_, MemRefType)
        if index is None or type_.get_shape()[index] < 0:
            raise located_error(op, "memref.dim must be of a static dimension")
        lw = self.lowering(op, rewriter)
        lw.replace(lw.index(type_.get_shape()[index]))


def memref_patterns(state: ConversionState) -> list[RewritePattern]:
    """The memref patterns, the most frequent ops first."""
    return [
        LoadOpLowering(state),
        StoreOpLowering(state),
        ViewOpLowering(state),
        AliasOpLowering(state),
        CopyOpLowering(state),
        AllocOpLowering(state),
        DeallocOpLowering(state),
        GetGlobalOpLowering(state),
        DimOpLowering(state),
        AssumeAlignmentOpLowering(state),
    ]
