"""``memref``, ``func`` and ``tir.call`` to ``emitc``: one handler per op.

A memref value is a pointer to its element type that points at the memref's
aligned base (see ``convert_to_emitc.py``); element ``m[i, j]`` is
``p[offset + i*s0 + j*s1]`` with the layout's static offset and strides,
folded at compile time where indices are constants. So:

* ``memref.view %pool[%off][]`` -> ``(T*)&pool[off]``;
* ``subview``/``reinterpret_cast``/``cast``/``collapse_shape``/
  ``expand_shape``/``assume_alignment`` -> the same pointer (the result type's
  layout says how to index it);
* ``memref.copy`` -> ``memcpy`` when both sides are contiguous, loops otherwise;
* ``memref.alloca`` / static ``memref.alloc`` -> a local C array (never the
  heap); ``memref.dealloc`` -> nothing; a dynamically sized ``alloc`` is a
  located error (the generated C has no heap and no VLAs);
* ``memref.get_global`` -> ``&global[0]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType, ShapedType, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from usmp.diagnostics import located_error
from usmp.dialects import emitc, tir
from usmp.lowering.convert_to_emitc import (
    INDEX_TYPE,
    FunctionLowering,
    Handler,
    convert_scalar_type,
    convert_type,
    static_layout,
)


def address_of(fl: FunctionLowering, lvalue: SSAValue) -> SSAValue:
    """``&lvalue`` (``emitc.apply "&"``)."""
    assert isinstance(lvalue.type, emitc.LValueType)
    op = emitc.ApplyOp.create(
        operands=[lvalue],
        result_types=[emitc.PointerType(lvalue.type.value_type)],  # pyright: ignore
        properties={"applicableOperator": StringAttr("&")},
    )
    return fl.result(op)


def element_pointer(
    fl: FunctionLowering, memref_value: SSAValue, op: Operation
) -> SSAValue:
    """The lowered pointer of ``memref_value``, typed as its element type."""
    type_ = memref_value.type
    assert isinstance(type_, MemRefType)
    pointer = fl.value(memref_value)
    wanted = emitc.PointerType(convert_scalar_type(type_.get_element_type(), op))
    if pointer.type != wanted:
        pointer = fl.result(emitc.CastOp(pointer, wanted))
    return pointer


def linear_index(
    fl: FunctionLowering, type_: MemRefType, indices: Sequence[SSAValue], op: Operation
) -> SSAValue:
    """``offset + sum(index_k * stride_k)`` with constants folded."""
    offset, strides = static_layout(type_, op)
    constant = offset
    terms: list[SSAValue] = []
    for index, stride in zip(indices, strides, strict=True):
        if (known := fl.constant_of.get(index)) is not None:
            constant += known * stride
        elif stride == 1:
            terms.append(index)
        else:
            terms.append(fl.result(emitc.MulOp(index, fl.index(stride), INDEX_TYPE)))
    if not terms:
        return fl.index(constant)
    total = terms[0]
    for term in terms[1:]:
        total = fl.result(emitc.AddOp(total, term, INDEX_TYPE))
    if constant > 0:
        total = fl.result(emitc.AddOp(total, fl.index(constant), INDEX_TYPE))
    elif constant < 0:
        total = fl.result(emitc.SubOp(total, fl.index(-constant), INDEX_TYPE))
    return total


def element(
    fl: FunctionLowering,
    memref_value: SSAValue,
    indices: Sequence[SSAValue],
    op: Operation,
) -> SSAValue:
    """The lvalue ``p[linear index]`` of one element (``indices`` lowered)."""
    type_ = memref_value.type
    assert isinstance(type_, MemRefType)
    pointer = element_pointer(fl, memref_value, op)
    index = linear_index(fl, type_, indices, op)
    return fl.result(emitc.SubscriptOp(pointer, [index]))


def _load(fl: FunctionLowering, op: memref.LoadOp) -> None:
    lvalue = element(fl, op.memref, [fl.value(i) for i in op.indices], op)
    fl.bind(op.res, fl.result(emitc.LoadOp(lvalue)))


def _store(fl: FunctionLowering, op: memref.StoreOp) -> None:
    lvalue = element(fl, op.memref, [fl.value(i) for i in op.indices], op)
    fl.emit(emitc.AssignOp(lvalue, fl.value(op.value)))


def _view(fl: FunctionLowering, op: memref.ViewOp) -> None:
    if op.sizes:
        raise located_error(
            op, "memref.view with dynamic sizes cannot be emitted (no VLAs)"
        )
    source = fl.value(op.source)
    byte = fl.result(emitc.SubscriptOp(source, [fl.value(op.byte_shift)]))
    pointer = address_of(fl, byte)
    result_type = convert_type(op.result.type, op)
    if pointer.type != result_type:
        pointer = fl.result(emitc.CastOp(pointer, result_type))
    fl.bind(op.result, pointer)


def _alias(fl: FunctionLowering, op: Operation) -> None:
    """Ops that only reinterpret a memref: the pointer is unchanged."""
    result = op.results[0]
    assert isinstance(result.type, MemRefType)
    static_layout(result.type, op)  # the alias must be indexable statically
    fl.bind(result, fl.value(op.operands[0]))


def _assume_alignment(fl: FunctionLowering, op: Operation) -> None:
    if op.results:
        fl.bind(op.results[0], fl.value(op.operands[0]))


def _contiguous(type_: MemRefType, op: Operation) -> tuple[int, bool]:
    offset, strides = static_layout(type_, op)
    return offset, list(strides) == list(
        ShapedType.strides_for_shape(type_.get_shape())
    )


def _copy(fl: FunctionLowering, op: memref.CopyOp) -> None:
    src_t, dst_t = op.source.type, op.destination.type
    assert isinstance(src_t, MemRefType) and isinstance(dst_t, MemRefType)
    if src_t.get_shape() != dst_t.get_shape():
        raise located_error(op, f"memref.copy between shapes {src_t} and {dst_t}")
    (src_off, src_dense), (dst_off, dst_dense) = (
        _contiguous(src_t, op),
        _contiguous(dst_t, op),
    )
    count = math.prod(src_t.get_shape())
    if count == 0:
        return
    if src_dense and dst_dense:
        fl.include("string.h")

        def base(value: SSAValue, offset: int) -> SSAValue:
            pointer = element_pointer(fl, value, op)
            if offset == 0:
                return pointer
            return address_of(
                fl, fl.result(emitc.SubscriptOp(pointer, [fl.index(offset)]))
            )

        size = count * src_t.get_element_type().size  # pyright: ignore[reportAttributeAccessIssue]
        args = [base(op.destination, dst_off), base(op.source, src_off), fl.index(size)]
        fl.emit(emitc.CallOpaqueOp("memcpy", args, []))
        return
    _copy_loops(fl, op, src_t.get_shape())


def _copy_loops(fl: FunctionLowering, op: memref.CopyOp, shape: Sequence[int]) -> None:
    """``dst[i..] = src[i..]`` in a loop nest (copies between strided memrefs)."""
    outer = fl.block
    indices: list[BlockArgument] = []
    for extent in shape:
        body = Block(arg_types=[INDEX_TYPE])
        fl.emit(emitc.ForOp(fl.index(0), fl.index(extent), fl.index(1), Region(body)))
        indices.append(body.args[0])
        fl.block = body
    value = fl.result(emitc.LoadOp(element(fl, op.source, indices, op)))
    fl.emit(emitc.AssignOp(element(fl, op.destination, indices, op), value))
    for index in indices:
        index.block.add_op(emitc.YieldOp())
    fl.block = outer


def _alloc(fl: FunctionLowering, op: memref.AllocOp | memref.AllocaOp) -> None:
    type_ = op.memref.type
    assert isinstance(type_, MemRefType)
    if op.dynamic_sizes or any(d < 0 for d in type_.get_shape()):
        raise located_error(
            op,
            f"'{op.name}' of {type_} is dynamically sized: the generated C has no "
            "heap and no VLAs; give the buffer a static shape (usmp then plans it)",
        )
    count = max(1, math.prod(type_.get_shape()))
    elem = convert_scalar_type(type_.get_element_type(), op)
    array_type = emitc.ArrayType([count], elem)  # pyright: ignore[reportArgumentType]
    array = fl.result(emitc.VariableOp(array_type))
    first = fl.result(emitc.SubscriptOp(array, [fl.index(0)]))
    fl.bind(op.memref, address_of(fl, first))


def _dealloc(fl: FunctionLowering, op: Operation) -> None:
    """Local arrays need no freeing."""


def _get_global(fl: FunctionLowering, op: memref.GetGlobalOp) -> None:
    type_ = op.memref.type
    assert isinstance(type_, MemRefType)
    elem = convert_scalar_type(type_.get_element_type(), op)
    shape = list(type_.get_shape()) or [1]
    array = fl.result(
        emitc.GetGlobalOp(
            op.name_.root_reference.data,
            emitc.ArrayType(shape, elem),  # pyright: ignore[reportArgumentType]
        )
    )
    first = fl.result(emitc.SubscriptOp(array, [fl.index(0)] * len(shape)))
    fl.bind(op.memref, address_of(fl, first))


def _dim(fl: FunctionLowering, op: memref.DimOp) -> None:
    type_ = op.source.type
    index = fl.constant_of.get(fl.value(op.index))
    assert isinstance(type_, MemRefType)
    if index is None or type_.get_shape()[index] < 0:
        raise located_error(op, "memref.dim must be of a static dimension")
    fl.bind(op.result, fl.index(type_.get_shape()[index]))


def _return(fl: FunctionLowering, op: func.ReturnOp) -> None:
    value = fl.value(op.arguments[0]) if op.arguments else None
    fl.emit(emitc.ReturnOp(value))


def _call(fl: FunctionLowering, op: func.CallOp | tir.CallOp) -> None:
    if isinstance(op, tir.CallOp) and op.call_type.data != "unpacked":
        raise located_error(
            op,
            f"tir.call with call_type '{op.call_type.data}' needs the TVM C runtime "
            "(packed arguments), which the generated library does not use; "
            "lower with call_type unpacked",
        )
    callee = op.callee.root_reference.data
    if callee not in fl.info.functions:
        raise located_error(op, f"call of unknown function @{callee}")
    args = [fl.value(v) for v in op.operands]
    results = [convert_type(r.type, op) for r in op.results]
    call = fl.emit(emitc.CallOp(callee, args, results))
    for old, new in zip(op.results, call.results, strict=True):
        fl.bind(old, new)


def _unplanned(fl: FunctionLowering, op: tir.AllocateOp | tir.AllocateConstOp) -> None:
    raise located_error(
        op,
        f"buffer '{op.name_hint.data}' ('{op.name}') is not in a pool: run usmp "
        "before convert-to-emitc (the generated C has no heap and plans every "
        "static buffer into a pool)",
    )


HANDLERS: dict[type[Operation], Handler] = {
    tir.AllocateOp: _unplanned,
    tir.AllocateConstOp: _unplanned,
    memref.LoadOp: _load,
    memref.StoreOp: _store,
    memref.ViewOp: _view,
    memref.SubviewOp: _alias,
    memref.ReinterpretCastOp: _alias,
    memref.CastOp: _alias,
    memref.CollapseShapeOp: _alias,
    memref.ExpandShapeOp: _alias,
    memref.AssumeAlignmentOp: _assume_alignment,
    memref.CopyOp: _copy,
    memref.AllocOp: _alloc,
    memref.AllocaOp: _alloc,
    memref.DeallocOp: _dealloc,
    memref.GetGlobalOp: _get_global,
    memref.DimOp: _dim,
    func.ReturnOp: _return,
    func.CallOp: _call,
    tir.CallOp: _call,
}
