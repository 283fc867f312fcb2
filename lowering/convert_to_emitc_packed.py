"""TVM's packed calling conventions in ``convert-to-emitc``: ``tir.call packed``
and ``tir.call cpacked``, and the packed signature of the functions they call.

What TVM's ``LegalizePackedCalls``, ``LowerTVMBuiltin``, ``MakePackedAPI`` and
C host codegen do to an AOT main and its operators, as emitc ops (the names
and layouts of ``tvm/runtime/c_runtime_api.h`` and ``dlpack/dlpack.h``; the
library ships a minimal copy of both, ``usmp.lowering.tvm_runtime_header``):

* the caller gets, once, TVM's stacks (``DLTensor stack_array[N]``,
  ``TVMValue stack_value[N]``, ``int stack_tcode[N]``, ``int64_t
  stack_shape[S]``, sized for its largest call, reused by every call) and
  per call fills one ``DLTensor`` per buffer argument (data, CPU device,
  ndim, dtype, shape; no strides, byte offset 0), points
  ``stack_value[k].v_handle`` at it with type code ``kTVMDLTensorHandle``;
* ``cpacked`` (``tvm_call_cpacked``) calls the operator directly:
  ``fn(stack_value, stack_tcode, N, &ret_val, &ret_tcode, NULL)``;
* ``packed`` (``tvm_call_packed``) looks the operator up by name in the
  module's function table (``TVMBackendGetFuncFromEnv``) and calls it through
  ``TVMFuncCall``;
* either way a non-zero return value is returned at once (TVM's
  ``tvm_check_return``), so the caller returns ``int32_t`` (0 at the end);
* every function called packed gets the packed signature
  ``int32_t f(TVMValue* args, int* type_codes, int num_args, TVMValue*
  out_ret_value, int* out_ret_tcode, void* resource_handle)``: it returns -1
  unless ``num_args`` and every type code are what it expects, reads each
  buffer from its ``DLTensor``'s ``data``, and returns 0.

The callee keeps its symbol (TVM's global symbol is the packed function);
``PackedCalls.finish`` rewrites the converted functions once every op is
converted. The caller records the function table it needs in
``usmp.packed_functions`` (attribute of the caller: the names; the table
itself, ``<prefix>_packed_functions``, is written by the C library next to
the operators).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.builtin import (
    ArrayAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FunctionType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue, TypeAttribute
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint, Rewriter

from usmp.diagnostics import located_error
from usmp.dialects import emitc, tir
from usmp.lowering.convert_to_emitc_common import INDEX_TYPE, EmitcPattern, OpLowering
from usmp.lowering.convert_to_emitc_memref import first_element_pointer
from usmp.lowering.create import create

RUNTIME_HEADER = "tvm/runtime/c_runtime_api.h"
PACKED_FUNCTIONS_ATTR = "usmp.packed_functions"
"""Attribute of a function making ``packed`` calls: the names it looks up."""
PACKED_API_ATTR = "usmp.packed_api"
"""Attribute of a function with the packed signature."""
MAIN_SUFFIX = "___tvm_main__"

_INT = emitc.OpaqueType(StringAttr("int"))
_VOID_PTR = emitc.PointerType(emitc.OpaqueType(StringAttr("void")))
_TVM_VALUE = emitc.OpaqueType(StringAttr("TVMValue"))
_DL_TENSOR = emitc.OpaqueType(StringAttr("DLTensor"))
_DL_DEVICE = emitc.OpaqueType(StringAttr("DLDevice"))
_DL_DEVICE_TYPE = emitc.OpaqueType(StringAttr("DLDeviceType"))
_DL_DATA_TYPE = emitc.OpaqueType(StringAttr("DLDataType"))
_HANDLE = emitc.OpaqueType(StringAttr("TVMFunctionHandle"))
_U8 = IntegerType(8, Signedness.UNSIGNED)
_U16 = IntegerType(16, Signedness.UNSIGNED)
_U64 = IntegerType(64, Signedness.UNSIGNED)

PACKED_SIGNATURE = FunctionType.from_lists(
    [
        emitc.PointerType(_TVM_VALUE),
        emitc.PointerType(_INT),
        _INT,
        emitc.PointerType(_TVM_VALUE),
        emitc.PointerType(_INT),
        _VOID_PTR,
    ],
    [i32],
)
PACKED_ARG_NAMES = (
    "args",
    "type_codes",
    "num_args",
    "out_ret_value",
    "out_ret_tcode",
    "resource_handle",
)

# dlpack's DLDataTypeCode
_KDL_INT, _KDL_UINT, _KDL_FLOAT = 0, 1, 2


def dl_data_type(element: Attribute) -> tuple[int, int]:
    """(dlpack type code, bits) of a memref element type."""
    if isinstance(element, IntegerType):
        unsigned = element.signedness.data == Signedness.UNSIGNED
        width = element.width.data
        return (_KDL_UINT if unsigned or width == 1 else _KDL_INT), width
    if isinstance(element, Float16Type | Float32Type | Float64Type):
        return _KDL_FLOAT, element.bitwidth
    raise ValueError(f"no DLDataType for {element}")


def _prefix(symbol: str) -> str:
    """``tvmgen_<m>`` of ``tvmgen_<m>___tvm_main__`` (else the symbol)."""
    return symbol.removesuffix(MAIN_SUFFIX)


def packed_table_name(caller: str) -> str:
    """The function table a ``packed`` caller looks its callees up in."""
    return f"{_prefix(caller)}_packed_functions"


@dataclass
class _Stacks:
    """A caller's argument stacks (TVM's ``tvm_stack_alloca``), shared by its
    calls; ``ret_value``/``ret_tcode`` receive the callee's return value."""

    array: SSAValue
    value: SSAValue
    tcode: SSAValue
    shape: SSAValue | None
    ret_value: SSAValue
    ret_tcode: SSAValue


@dataclass
class PackedCalls:
    """What the packed call patterns of one conversion share."""

    call_types: dict[str, str] = field(default_factory=dict[str, str])
    """Callee of a ``tir.call`` -> its call type."""
    callers: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    """Caller -> callees it looks up by name (``packed``), in call order."""
    stacks: dict[emitc.FuncOp, _Stacks] = field(
        default_factory=dict[emitc.FuncOp, _Stacks]
    )

    def finish(self, module: ModuleOp) -> None:
        """Give every callee the packed signature and every caller an
        ``int32_t`` result; record the function tables."""
        functions = {
            op.sym_name.data: op for op in module.ops if isinstance(op, emitc.FuncOp)
        }
        for f in self.stacks:
            return_status(f)
            names = self.callers.get(f.sym_name.data)
            if names:
                f.attributes[PACKED_FUNCTIONS_ATTR] = ArrayAttr(
                    StringAttr(n) for n in dict.fromkeys(names)
                )
        for name, call_type in self.call_types.items():
            if call_type != tir.CallType.UNPACKED:
                _make_packed_api(functions[name])


def _memref_operands(op: tir.CallOp) -> list[tuple[SSAValue, MemRefType]]:
    out: list[tuple[SSAValue, MemRefType]] = []
    for v in op.operands:
        if not isinstance(v.type, MemRefType):
            raise located_error(
                op,
                f"a {op.call_type.data} call passes buffers only (DLTensor "
                f"handles); operand of type {v.type} is not a memref",
            )
        out.append((v, v.type))
    return out


@dataclass(frozen=True)
class PackedCallLowering(EmitcPattern):
    """``tir.call packed|cpacked @f(...)`` -> DLTensors on the caller's stacks,
    the packed call, its return value checked."""

    calls: PackedCalls

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.CallOp, rewriter: PatternRewriter) -> None:
        call_type = op.call_type.data
        callee = op.callee.root_reference.data
        known = self.calls.call_types.setdefault(callee, call_type)
        if known != call_type:
            raise located_error(
                op,
                f"@{callee} is called both {known} and {call_type}; one function "
                "has one calling convention",
            )
        if call_type == tir.CallType.UNPACKED:
            return  # CallOpLowering
        function = self.state.function
        assert function is not None
        args = _memref_operands(op)
        lw = self.lowering(op, rewriter)
        stacks = self.calls.stacks.get(function)
        if stacks is None:
            stacks = self.calls.stacks[function] = _new_stacks(op, lw)
        shape_at = 0
        for k, (value, type_) in enumerate(args):
            # a view at an offset (an aliased slice): its first element's address
            pointer = (
                first_element_pointer(lw, value, op)
                if type_.get_offset()
                else lw.value(value)
            )
            shape_at = _fill_tensor(lw, stacks, k, pointer, type_, shape_at)
        first_value = _address(lw, stacks.value, 0, _TVM_VALUE)
        first_tcode = _address(lw, stacks.tcode, 0, _INT)
        num_args = lw.result(emitc.LiteralOp(str(len(args)), _INT))
        ret_value = lw.result(_address_of(stacks.ret_value, _TVM_VALUE))
        ret_tcode = lw.result(_address_of(stacks.ret_tcode, _INT))
        if call_type == tir.CallType.CPACKED:
            null = lw.result(emitc.LiteralOp("NULL", _VOID_PTR))
            call = emitc.CallOp(
                callee,
                [first_value, first_tcode, num_args, ret_value, ret_tcode, null],
                [i32],
            )
            check_status(lw, lw.result(call))
        else:
            self.calls.callers.setdefault(function.sym_name.data, []).append(callee)
            handle = lw.result(
                emitc.VariableOp(
                    emitc.LValueType(_HANDLE), emitc.OpaqueAttr(StringAttr("NULL"))
                )
            )
            table = lw.result(
                emitc.LiteralOp(
                    packed_table_name(function.sym_name.data),
                    emitc.PointerType(
                        emitc.OpaqueType(StringAttr("const TVMFuncRegistryEntry"))
                    ),
                )
            )
            table = lw.result(emitc.CastOp(table, _VOID_PTR))
            name = lw.result(
                emitc.LiteralOp(
                    '"' + callee.replace("\\", "\\\\").replace('"', '\\"') + '"',
                    emitc.PointerType(emitc.OpaqueType(StringAttr("const char"))),
                )
            )
            handle.name_hint = f"{callee}_packed"
            handle_at = lw.result(_address_of(handle, _HANDLE))
            found = emitc.CallOpaqueOp(
                "TVMBackendGetFuncFromEnv", [table, name, handle_at], [i32]
            )
            check_status(lw, lw.result(found))
            loaded = lw.result(emitc.LoadOp(handle))
            called = emitc.CallOpaqueOp(
                "TVMFuncCall",
                [loaded, first_value, first_tcode, num_args, ret_value, ret_tcode],
                [i32],
            )
            check_status(lw, lw.result(called))
        lw.include(RUNTIME_HEADER)
        lw.replace()


def _new_stacks(op: tir.CallOp, lw: OpLowering) -> _Stacks:
    """The caller's stacks, sized for its largest packed call."""
    function = op.parent_op()
    while function is not None and not isinstance(function, emitc.FuncOp):
        function = function.parent_op()
    assert function is not None
    calls = [
        c
        for c in function.walk()
        if isinstance(c, tir.CallOp) and c.call_type.data != tir.CallType.UNPACKED
    ]
    most = max(len(c.operands) for c in calls)
    ranks = max(
        sum(len(_memref_operands(c)[k][1].get_shape()) for k in range(len(c.operands)))
        for c in calls
    )

    def array(n: int, element: Attribute, name: str) -> SSAValue:
        var = lw.emit(emitc.VariableOp(emitc.ArrayType([n], element)))  # pyright: ignore[reportArgumentType]
        var.results[0].name_hint = name
        return var.results[0]

    def scalar(type_: Attribute, name: str) -> SSAValue:
        var = lw.emit(emitc.VariableOp(emitc.LValueType(type_)))
        var.results[0].name_hint = name
        return var.results[0]

    return _Stacks(
        array=array(most, _DL_TENSOR, "stack_array"),
        value=array(most, _TVM_VALUE, "stack_value"),
        tcode=array(most, _INT, "stack_tcode"),
        shape=array(ranks, i64, "stack_shape") if ranks else None,
        ret_value=scalar(_TVM_VALUE, "ret_val"),
        ret_tcode=scalar(_INT, "ret_type_code"),
    )


def _address_of(lvalue: SSAValue, pointee: TypeAttribute) -> Operation:
    """``&lvalue`` (``emitc.apply "&"``)."""
    return emitc.ApplyOp(
        operands=[lvalue],
        properties={"applicableOperator": StringAttr("&")},
        result_types=[emitc.PointerType(pointee)],
    )


def _element(lw: OpLowering, array: SSAValue, k: int) -> SSAValue:
    return lw.result(emitc.SubscriptOp(array, [lw.index(k)]))


def _address(
    lw: OpLowering, array: SSAValue, k: int, element: TypeAttribute
) -> SSAValue:
    return lw.result(_address_of(_element(lw, array, k), element))


def _set(lw: OpLowering, target: SSAValue, value: SSAValue) -> None:
    lw.emit(emitc.AssignOp(target, value))


def _member(lw: OpLowering, of: SSAValue, name: str, type_: Attribute) -> SSAValue:
    return lw.result(emitc.MemberOp(of, name, type_))


def _int(lw: OpLowering, value: int, type_: IntegerType) -> SSAValue:
    return lw.constant(IntegerAttr(value, type_), type_)


def _fill_tensor(
    lw: OpLowering,
    stacks: _Stacks,
    k: int,
    pointer: SSAValue,
    type_: MemRefType,
    shape_at: int,
) -> int:
    """``stack_array[k]`` describes ``pointer`` (TVM's ``tvm_stack_make_array``)
    and ``stack_value[k]``/``stack_tcode[k]`` pass it; returns the next free
    slot of ``stack_shape``."""
    shape = type_.get_shape()
    for d, extent in enumerate(shape):
        assert stacks.shape is not None
        _set(lw, _element(lw, stacks.shape, shape_at + d), _int(lw, extent, i64))
    tensor = _element(lw, stacks.array, k)
    data = lw.result(emitc.CastOp(pointer, _VOID_PTR))
    _set(lw, _member(lw, tensor, "data", _VOID_PTR), data)
    device = _member(lw, tensor, "device", _DL_DEVICE)
    cpu = lw.result(emitc.LiteralOp("kDLCPU", _DL_DEVICE_TYPE))
    _set(lw, _member(lw, device, "device_type", _DL_DEVICE_TYPE), cpu)
    _set(lw, _member(lw, device, "device_id", i32), _int(lw, 0, i32))
    _set(lw, _member(lw, tensor, "ndim", i32), _int(lw, len(shape), i32))
    code, bits = dl_data_type(type_.get_element_type())
    dtype = _member(lw, tensor, "dtype", _DL_DATA_TYPE)
    _set(lw, _member(lw, dtype, "code", _U8), _int(lw, code, _U8))
    _set(lw, _member(lw, dtype, "bits", _U8), _int(lw, bits, _U8))
    _set(lw, _member(lw, dtype, "lanes", _U16), _int(lw, 1, _U16))
    shape_ptr = emitc.PointerType(i64)
    if shape:
        assert stacks.shape is not None
        first = lw.result(_address_of(_element(lw, stacks.shape, shape_at), i64))
    else:
        first = lw.result(emitc.LiteralOp("NULL", shape_ptr))
    _set(lw, _member(lw, tensor, "shape", shape_ptr), first)
    null = lw.result(emitc.LiteralOp("NULL", shape_ptr))
    _set(lw, _member(lw, tensor, "strides", shape_ptr), null)
    _set(lw, _member(lw, tensor, "byte_offset", _U64), _int(lw, 0, _U64))
    value = _element(lw, stacks.value, k)
    handle = lw.result(_address_of(tensor, _DL_TENSOR))
    handle = lw.result(emitc.CastOp(handle, _VOID_PTR))
    _set(lw, _member(lw, value, "v_handle", _VOID_PTR), handle)
    tcode = lw.result(emitc.LiteralOp("kTVMDLTensorHandle", _INT))
    _set(lw, _element(lw, stacks.tcode, k), tcode)
    return shape_at + len(shape)


def check_status(lw: OpLowering, status: SSAValue) -> None:
    """``if (status != 0) return status;`` (TVM's ``tvm_check_return``)."""
    failed = lw.result(emitc.CmpOp("ne", status, _int(lw, 0, i32)))
    then = Region(Block([emitc.VerbatimOp("return {};", [status]), emitc.YieldOp()]))
    lw.emit(emitc.IfOp(failed, then))


def return_status(f: emitc.FuncOp) -> None:
    """``f`` returns ``int32_t``: 0 where it returned nothing."""
    ftype = f.function_type
    if ftype.outputs.data:
        return
    f.function_type = FunctionType.from_lists(ftype.inputs.data, [i32])
    if f.is_declaration:
        return
    for ret in [o for o in f.walk() if isinstance(o, emitc.ReturnOp)]:
        zero = emitc.ConstantOp(IntegerAttr(0, i32))
        zero.location = ret.location
        Rewriter.insert_op(zero, InsertPoint.before(ret))
        Rewriter.replace_op(ret, emitc.ReturnOp(zero.results[0]))
    block = f.body.block
    if not isinstance(block.last_op, emitc.ReturnOp):
        zero = emitc.ConstantOp(IntegerAttr(0, i32))
        block.add_ops([zero, emitc.ReturnOp(zero.results[0])])


def _make_packed_api(f: emitc.FuncOp) -> None:
    """``f`` takes TVM's packed arguments (TVM's ``MakePackedAPI``)."""
    if PACKED_API_ATTR in f.attributes:
        return
    old_inputs = list(f.function_type.inputs.data)
    f.attributes[PACKED_API_ATTR] = ArrayAttr(old_inputs)
    if tir.POOL_ARGS in f.attributes:  # the pools are DLTensors of ``args`` now
        del f.attributes[tir.POOL_ARGS]
    if f.is_declaration:
        f.function_type = PACKED_SIGNATURE
        f.arg_attrs = None  # pyright: ignore[reportAttributeAccessIssue]
        return
    if f.function_type.outputs.data:
        raise located_error(
            f, f"@{f.sym_name.data} returns a value; a packed function returns status"
        )
    return_status(f)
    f.function_type = PACKED_SIGNATURE
    f.arg_attrs = None  # pyright: ignore[reportAttributeAccessIssue]
    block = f.body.block
    old_args = list(block.args)
    new_args = [
        block.insert_arg(t, len(block.args)) for t in PACKED_SIGNATURE.inputs.data
    ]
    for arg, name in zip(new_args, PACKED_ARG_NAMES, strict=True):
        arg.name_hint = name
    args, type_codes, num_args, ret_value, ret_tcode, resource = new_args
    prologue: list[Operation] = []

    def add(op: Operation) -> SSAValue:
        op.location = f.location
        prologue.append(op)
        return op.results[0]

    def literal(text: str, type_: Attribute) -> SSAValue:
        return add(emitc.LiteralOp(text, type_))

    indices: dict[int, SSAValue] = {}

    def index(k: int) -> SSAValue:
        if k not in indices:
            indices[k] = add(
                create(
                    emitc.ConstantOp,
                    (),
                    INDEX_TYPE,
                    value=IntegerAttr.from_index_int_value(k),
                )
            )
        return indices[k]

    for unused in (ret_value, ret_tcode, resource):
        prologue.append(emitc.VerbatimOp("(void){};", [unused]))
    failed = add(emitc.CmpOp("ne", num_args, literal(str(len(old_args)), _INT)))
    handle_code = literal("kTVMDLTensorHandle", _INT)
    for k in range(len(old_args)):
        code = add(emitc.LoadOp(add(emitc.SubscriptOp(type_codes, [index(k)]))))
        wrong = add(emitc.CmpOp("ne", code, handle_code))
        failed = add(emitc.LogicalOrOp(failed, wrong))
    then = Region(Block([emitc.VerbatimOp("return -1;"), emitc.YieldOp()]))
    prologue.append(emitc.IfOp(failed, then))
    tensor_ptr = emitc.PointerType(_DL_TENSOR)
    for k, old in enumerate(old_args):
        value = add(emitc.SubscriptOp(args, [index(k)]))
        handle = add(emitc.LoadOp(add(emitc.MemberOp(value, "v_handle", _VOID_PTR))))
        tensor = add(emitc.VariableOp(emitc.LValueType(tensor_ptr)))
        prologue.append(emitc.AssignOp(tensor, add(emitc.CastOp(handle, tensor_ptr))))
        data = add(emitc.LoadOp(add(emitc.MemberOfPtrOp(tensor, "data", _VOID_PTR))))
        pointer = add(emitc.CastOp(data, old.type))
        if old.name_hint is not None:
            pointer.name_hint = old.name_hint
            tensor.name_hint = f"{old.name_hint}_tensor"
        old.replace_all_uses_with(pointer)
    first = block.first_op
    if first is None:
        block.add_ops(prologue)
    else:
        block.insert_ops_before(prologue, first)
    for old in old_args:
        block.erase_arg(old)
