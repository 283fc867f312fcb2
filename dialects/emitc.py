"""The ``emitc`` dialect: MLIR 22's ops for emitting C, as far as usmp-opt needs.

xDSL ships ``emitc.add``, ``emitc.apply``, ``emitc.call_opaque`` and the types
(``!emitc.ptr``, ``!emitc.lvalue``, ``!emitc.array``, ``!emitc.opaque``,
``!emitc.ptrdiff_t``, ``!emitc.size_t``); this module adds the rest with
MLIR 22's names, properties and syntax (``EmitC.td``), so that our output is
accepted by ``mlir-opt`` and ``mlir-translate --mlir-to-cpp``. Expression-level
ops are defined here; functions, control flow and file-level ops are in
``emitc_structure.py``.

The MLIR 22 lvalue model is kept: ``emitc.variable``, ``emitc.subscript``,
``emitc.get_global`` (scalar) and ``emitc.member`` produce
``!emitc.lvalue<T>``; ``emitc.load`` reads one into an SSA value and
``emitc.assign`` writes one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    FlatSymbolRefAttrConstr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    i1,
    i64,
)
from xdsl.dialects.emitc import (
    EmitC_AddOp,
    EmitC_ApplyOp,
    EmitC_ArrayType,
    EmitC_BinaryOperation,
    EmitC_CallOpaqueOp,
    EmitC_LValueType,
    EmitC_OpaqueAttr,
    EmitC_OpaqueType,
    EmitC_PointerType,
    EmitC_PtrDiffT,
    EmitC_SignedSizeT,
    EmitC_SizeT,
    EmitCTypeConstr,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from usmp.dialects.emitc_structure import (
    CallOp,
    DeclareFuncOp,
    ForOp,
    FuncOp,
    GlobalOp,
    IfOp,
    IncludeOp,
    ReturnOp,
    VerbatimOp,
    YieldOp,
)

# xDSL's names for the ops and types it ships, under MLIR's C++ names.
AddOp = EmitC_AddOp
ApplyOp = EmitC_ApplyOp
CallOpaqueOp = EmitC_CallOpaqueOp
ArrayType = EmitC_ArrayType
LValueType = EmitC_LValueType
OpaqueAttr = EmitC_OpaqueAttr
OpaqueType = EmitC_OpaqueType
PointerType = EmitC_PointerType
PtrDiffT = EmitC_PtrDiffT
SignedSizeT = EmitC_SignedSizeT
SizeT = EmitC_SizeT


class _BinaryOp(EmitC_BinaryOperation):
    """``%r = emitc.<op> %a, %b : (T, T) -> T``."""


@irdl_op_definition
class SubOp(_BinaryOp):
    """``a - b`` (also pointer - integer and pointer - pointer)."""

    name = "emitc.sub"


@irdl_op_definition
class MulOp(_BinaryOp):
    """``a * b``."""

    name = "emitc.mul"


@irdl_op_definition
class DivOp(_BinaryOp):
    """``a / b`` (C semantics: integer division truncates)."""

    name = "emitc.div"


@irdl_op_definition
class RemOp(_BinaryOp):
    """``a % b`` (integers only)."""

    name = "emitc.rem"


@irdl_op_definition
class BitwiseAndOp(_BinaryOp):
    """``a & b``."""

    name = "emitc.bitwise_and"


@irdl_op_definition
class BitwiseOrOp(_BinaryOp):
    """``a | b``."""

    name = "emitc.bitwise_or"


@irdl_op_definition
class BitwiseXorOp(_BinaryOp):
    """``a ^ b``."""

    name = "emitc.bitwise_xor"


@irdl_op_definition
class BitwiseLeftShiftOp(_BinaryOp):
    """``a << b``."""

    name = "emitc.bitwise_left_shift"


@irdl_op_definition
class BitwiseRightShiftOp(_BinaryOp):
    """``a >> b``."""

    name = "emitc.bitwise_right_shift"


class _UnaryOp(IRDLOperation):
    """``%r = emitc.<op> %a : (T) -> T``."""

    operand = operand_def(EmitCTypeConstr)
    result = result_def(EmitCTypeConstr)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: SSAValue, result_type: Attribute | None = None):
        super().__init__(
            operands=[operand], result_types=[result_type or operand.type]
        )


@irdl_op_definition
class BitwiseNotOp(_UnaryOp):
    """``~a``."""

    name = "emitc.bitwise_not"


@irdl_op_definition
class UnaryMinusOp(_UnaryOp):
    """``-a``."""

    name = "emitc.unary_minus"


@irdl_op_definition
class UnaryPlusOp(_UnaryOp):
    """``+a``."""

    name = "emitc.unary_plus"


class _LogicalBinaryOp(IRDLOperation):
    """``%r = emitc.logical_<op> %a, %b : T, T`` (result ``i1``)."""

    lhs = operand_def(EmitCTypeConstr)
    rhs = operand_def(EmitCTypeConstr)
    result = result_def(i1)
    assembly_format = "operands attr-dict `:` type(operands)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[i1])


@irdl_op_definition
class LogicalAndOp(_LogicalBinaryOp):
    """``a && b``."""

    name = "emitc.logical_and"


@irdl_op_definition
class LogicalOrOp(_LogicalBinaryOp):
    """``a || b``."""

    name = "emitc.logical_or"


@irdl_op_definition
class LogicalNotOp(IRDLOperation):
    """``!a``: ``%r = emitc.logical_not %a : T`` (result ``i1``)."""

    name = "emitc.logical_not"

    operand = operand_def(EmitCTypeConstr)
    result = result_def(i1)
    assembly_format = "operands attr-dict `:` type(operands)"

    def __init__(self, operand: SSAValue):
        super().__init__(operands=[operand], result_types=[i1])


CMP_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge", "three_way")
"""``emitc.cmp`` predicates in the order of their integer values."""


@irdl_op_definition
class CmpOp(IRDLOperation):
    """``%r = emitc.cmp lt, %a, %b : (T, T) -> i1``; the predicate is stored as
    its ``i64`` value (eq=0, ne, lt, le, gt, ge, three_way=6)."""

    name = "emitc.cmp"

    predicate = prop_def(IntegerAttr)
    lhs = operand_def(EmitCTypeConstr)
    rhs = operand_def(EmitCTypeConstr)
    result = result_def(EmitCTypeConstr)

    def __init__(
        self,
        predicate: str,
        lhs: SSAValue,
        rhs: SSAValue,
        result_type: Attribute = i1,
    ):
        super().__init__(
            operands=[lhs, rhs],
            result_types=[result_type],
            properties={
                "predicate": IntegerAttr(CMP_PREDICATES.index(predicate), i64)
            },
        )

    @property
    def predicate_name(self) -> str:
        return CMP_PREDICATES[self.predicate.value.data]

    def verify_(self) -> None:
        if not 0 <= self.predicate.value.data < len(CMP_PREDICATES):
            raise VerifyException(
                f"predicate {self.predicate.value.data} is not one of 0..6 "
                f"({', '.join(CMP_PREDICATES)})"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.predicate_name}, ")
        printer.print_list(self.operands, printer.print_ssa_value)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_function_type(self.operand_types, self.result_types)

    @classmethod
    def parse(cls, parser: Parser) -> CmpOp:
        name = parser.parse_identifier("comparison predicate")
        if name not in CMP_PREDICATES:
            parser.raise_error(
                f"unknown predicate '{name}' (expected one of "
                f"{', '.join(CMP_PREDICATES)})"
            )
        parser.parse_punctuation(",")
        unresolved = [parser.parse_unresolved_operand()]
        parser.parse_punctuation(",")
        unresolved.append(parser.parse_unresolved_operand())
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        ftype = parser.parse_function_type()
        lhs, rhs = parser.resolve_operands(unresolved, ftype.inputs.data, pos)
        op = cls(name, lhs, rhs, ftype.outputs.data[0])
        op.attributes |= attrs
        return op


@irdl_op_definition
class CastOp(IRDLOperation):
    """``%r = emitc.cast %a : T to U``: a C-style cast ``(U) a``."""

    name = "emitc.cast"

    source = operand_def(EmitCTypeConstr)
    dest = result_def(EmitCTypeConstr)
    assembly_format = "$source attr-dict `:` type($source) `to` type($dest)"

    def __init__(self, source: SSAValue, dest_type: Attribute):
        super().__init__(operands=[source], result_types=[dest_type])


@irdl_op_definition
class ConditionalOp(IRDLOperation):
    """``%r = emitc.conditional %c, %a, %b : T``: ``c ? a : b``."""

    name = "emitc.conditional"

    T: ClassVar = VarConstraint("T", EmitCTypeConstr)
    condition = operand_def(i1)
    true_value = operand_def(T)
    false_value = operand_def(T)
    result = result_def(T)
    assembly_format = "operands attr-dict `:` type($result)"

    def __init__(self, cond: SSAValue, true_value: SSAValue, false_value: SSAValue):
        super().__init__(
            operands=[cond, true_value, false_value], result_types=[true_value.type]
        )


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """``%c = "emitc.constant"() <{value = 4 : index}> : () -> !emitc.ptrdiff_t``
    (generic syntax only, as in MLIR). An ``index`` value may initialise a
    pointer-wide type (``size_t``, ``ssize_t``, ``ptrdiff_t``)."""

    name = "emitc.constant"

    value = prop_def()
    result = result_def(EmitCTypeConstr)

    def __init__(self, value: Attribute, result_type: Attribute | None = None):
        if result_type is None:
            result_type = value.type  # pyright: ignore[reportAttributeAccessIssue]
        super().__init__(properties={"value": value}, result_types=[result_type])

    def verify_(self) -> None:
        if isinstance(self.value, EmitC_OpaqueAttr):
            if not self.value.value.data:
                raise VerifyException("value must not be empty")
            return
        if not hasattr(self.value, "type"):
            raise VerifyException("value must be a typed attribute or #emitc.opaque")


@irdl_op_definition
class VariableOp(IRDLOperation):
    """A local variable: ``%v = "emitc.variable"() <{value = #emitc.opaque<"">}>
    : () -> !emitc.lvalue<f32>`` (uninitialised) or an array
    ``: () -> !emitc.array<16xi8>``. Generic syntax only, as in MLIR."""

    name = "emitc.variable"

    value = prop_def()
    result = result_def(base(EmitC_LValueType) | base(EmitC_ArrayType))

    def __init__(self, result_type: Attribute, value: Attribute | None = None):
        super().__init__(
            properties={"value": value or EmitC_OpaqueAttr(StringAttr(""))},
            result_types=[result_type],
        )


@irdl_op_definition
class LiteralOp(IRDLOperation):
    """``%p = emitc.literal "M_PI" : f32``: a C expression used verbatim."""

    name = "emitc.literal"

    value = prop_def(StringAttr)
    result = result_def(EmitCTypeConstr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$value attr-dict `:` type($result)"

    def __init__(self, value: str, result_type: Attribute):
        super().__init__(
            properties={"value": StringAttr(value)}, result_types=[result_type]
        )

    def verify_(self) -> None:
        if not self.value.data:
            raise VerifyException("value must not be empty")


@irdl_op_definition
class LoadOp(IRDLOperation):
    """``%v = emitc.load %lv : !emitc.lvalue<T>``: read an lvalue."""

    name = "emitc.load"

    operand = operand_def(EmitC_LValueType)
    result = result_def()

    def __init__(self, operand: SSAValue):
        assert isinstance(operand.type, EmitC_LValueType)
        super().__init__(operands=[operand], result_types=[operand.type.value_type])

    def verify_(self) -> None:
        assert isinstance(self.operand.type, EmitC_LValueType)
        if self.result.type != self.operand.type.value_type:
            raise VerifyException("result type must be the lvalue's value type")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.operand.type)

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        unresolved = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls(parser.resolve_operand(unresolved, parser.parse_type()))
        op.attributes |= attrs
        return op


@irdl_op_definition
class AssignOp(IRDLOperation):
    """``emitc.assign %v : T to %lv : !emitc.lvalue<T>``: ``lv = v;``."""

    name = "emitc.assign"

    var = operand_def(EmitC_LValueType)
    value = operand_def(EmitCTypeConstr)
    assembly_format = "$value `:` type($value) `to` $var `:` type($var) attr-dict"

    def __init__(self, var: SSAValue, value: SSAValue):
        super().__init__(operands=[var, value])

    def verify_(self) -> None:
        assert isinstance(self.var.type, EmitC_LValueType)
        if self.var.type.value_type != self.value.type:
            raise VerifyException(
                f"value of type {self.value.type} cannot be assigned to "
                f"{self.var.type}"
            )


@irdl_op_definition
class SubscriptOp(IRDLOperation):
    """``%lv = emitc.subscript %p[%i] : (!emitc.ptr<T>, index) ->
    !emitc.lvalue<T>``: ``p[i]`` on an array, pointer or opaque value."""

    name = "emitc.subscript"

    value = operand_def(
        base(EmitC_ArrayType) | base(EmitC_OpaqueType) | base(EmitC_PointerType)
    )
    indices = var_operand_def(EmitCTypeConstr)
    result = result_def(EmitC_LValueType)
    assembly_format = (
        "$value `[` $indices `]` attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, value: SSAValue, indices: Sequence[SSAValue]):
        vtype = value.type
        if isinstance(vtype, EmitC_PointerType):
            element = vtype.pointee_type
        elif isinstance(vtype, EmitC_ArrayType):
            element = vtype.element_type
        else:
            raise ValueError("subscript of an opaque value needs an explicit type")
        super().__init__(
            operands=[value, indices], result_types=[EmitC_LValueType(element)]
        )

    def verify_(self) -> None:
        vtype = self.value.type
        assert isinstance(self.result.type, EmitC_LValueType)
        if isinstance(vtype, EmitC_PointerType):
            if len(self.indices) != 1:
                raise VerifyException("pointer subscript takes exactly one index")
            if self.result.type.value_type != vtype.pointee_type:
                raise VerifyException("result must be an lvalue of the pointee type")
        elif isinstance(vtype, EmitC_ArrayType):
            if len(self.indices) != vtype.get_num_dims():
                raise VerifyException("array subscript takes one index per dimension")


@irdl_op_definition
class GetGlobalOp(IRDLOperation):
    """``%x = emitc.get_global @x : !emitc.array<4xi8>`` (or an lvalue)."""

    name = "emitc.get_global"

    global_name = prop_def(FlatSymbolRefAttrConstr, prop_name="name")
    result = result_def(base(EmitC_ArrayType) | base(EmitC_LValueType))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$name `:` type($result) attr-dict"

    def __init__(self, name: str, result_type: Attribute):
        super().__init__(
            properties={"name": SymbolRefAttr(name)}, result_types=[result_type]
        )


class _MemberOp(IRDLOperation):
    member = prop_def(StringAttr)
    operand = operand_def(EmitC_LValueType)
    result = result_def(EmitC_LValueType)

    def __init__(self, operand: SSAValue, member: str, member_type: Attribute):
        super().__init__(
            operands=[operand],
            properties={"member": StringAttr(member)},
            result_types=[EmitC_LValueType(member_type)],
        )


@irdl_op_definition
class MemberOp(_MemberOp):
    """``s.member`` (generic syntax only)."""

    name = "emitc.member"


@irdl_op_definition
class MemberOfPtrOp(_MemberOp):
    """``p->member`` (generic syntax only)."""

    name = "emitc.member_of_ptr"


EmitC = Dialect(
    "emitc",
    [
        AddOp,
        ApplyOp,
        AssignOp,
        BitwiseAndOp,
        BitwiseLeftShiftOp,
        BitwiseNotOp,
        BitwiseOrOp,
        BitwiseRightShiftOp,
        BitwiseXorOp,
        CallOp,
        CallOpaqueOp,
        CastOp,
        CmpOp,
        ConditionalOp,
        ConstantOp,
        DeclareFuncOp,
        DivOp,
        ForOp,
        FuncOp,
        GetGlobalOp,
        GlobalOp,
        IfOp,
        IncludeOp,
        LiteralOp,
        LoadOp,
        LogicalAndOp,
        LogicalNotOp,
        LogicalOrOp,
        MemberOfPtrOp,
        MemberOp,
        MulOp,
        RemOp,
        ReturnOp,
        SubOp,
        SubscriptOp,
        UnaryMinusOp,
        UnaryPlusOp,
        VariableOp,
        VerbatimOp,
        YieldOp,
    ],
    [
        ArrayType,
        LValueType,
        OpaqueAttr,
        OpaqueType,
        PointerType,
        PtrDiffT,
        SignedSizeT,
        SizeT,
    ],
)
