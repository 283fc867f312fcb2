"""The ``emitc`` dialect: MLIR 22's ops for emitting C, as far as usmp-opt needs.

xDSL ships ``emitc.add``, ``emitc.apply``, ``emitc.call_opaque`` and the types
(``!emitc.ptr``, ``!emitc.lvalue``, ``!emitc.array``, ``!emitc.opaque``,
``!emitc.ptrdiff_t``, ``!emitc.size_t``); this module adds the rest with
MLIR 22's names, properties and syntax (``EmitC.td``), so that our output is
accepted by ``mlir-opt`` and ``mlir-translate --mlir-to-cpp``. Values, memory
and globals are defined here; operators in ``emitc_expressions.py``;
functions, control flow, includes and verbatim text in ``emitc_structure.py``.

The MLIR 22 lvalue model is kept: ``emitc.variable``, ``emitc.subscript``,
``emitc.get_global`` (scalar) and ``emitc.member`` produce
``!emitc.lvalue<T>``; ``emitc.load`` reads one into an SSA value and
``emitc.assign`` writes one.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    AnyFloat,
    FlatSymbolRefAttrConstr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
)
from xdsl.dialects.emitc import (
    EmitC_AddOp,
    EmitC_ApplyOp,
    EmitC_ArrayType,
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
from xdsl.ir import Attribute, Dialect, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    base,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from usmp.dialects.emitc_expressions import (
    BitwiseAndOp,
    BitwiseLeftShiftOp,
    BitwiseNotOp,
    BitwiseOrOp,
    BitwiseRightShiftOp,
    BitwiseXorOp,
    CastOp,
    CmpOp,
    ConditionalOp,
    DivOp,
    LogicalAndOp,
    LogicalNotOp,
    LogicalOrOp,
    MulOp,
    RemOp,
    SubOp,
    UnaryMinusOp,
    UnaryPlusOp,
)
from usmp.dialects.emitc_structure import (
    CallOp,
    DeclareFuncOp,
    ForOp,
    FuncOp,
    IfOp,
    IncludeOp,
    ReturnOp,
    VerbatimOp,
    YieldOp,
)
from usmp.dialects.op_definition import op_definition

# xDSL's names for the ops and types it ships, under MLIR's C++ names.
AddOp = EmitC_AddOp
ApplyOp = EmitC_ApplyOp
CallOpaqueOp = EmitC_CallOpaqueOp
ArrayType = EmitC_ArrayType
LValueType = EmitC_LValueType
OpaqueAttr = EmitC_OpaqueAttr
_UNINITIALISED = EmitC_OpaqueAttr(StringAttr(""))
"""The value of a variable declared without one (built once)."""
OpaqueType = EmitC_OpaqueType
PointerType = EmitC_PointerType
PtrDiffT = EmitC_PtrDiffT
SignedSizeT = EmitC_SignedSizeT
SizeT = EmitC_SizeT


@op_definition
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


@op_definition
class VariableOp(IRDLOperation):
    """A local variable: ``%v = "emitc.variable"() <{value = #emitc.opaque<"">}>
    : () -> !emitc.lvalue<f32>`` (uninitialised) or an array
    ``: () -> !emitc.array<16xi8>``. Generic syntax only, as in MLIR."""

    name = "emitc.variable"

    value = prop_def()
    result = result_def(base(EmitC_LValueType) | base(EmitC_ArrayType))

    def __init__(self, result_type: Attribute, value: Attribute | None = None):
        super().__init__(
            properties={"value": value or _UNINITIALISED},
            result_types=[result_type],
        )


@op_definition
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


def parse_lvalue_type(parser: Parser) -> Attribute:
    """``!emitc.lvalue<T>``, or the short ``<T>`` MLIR 22 prints where the
    op's format fixes the type to an lvalue (``emitc.load``, ``emitc.assign``)."""
    if parser.parse_optional_punctuation("<") is None:
        return parser.parse_type()
    value_type = parser.parse_type()
    parser.parse_punctuation(">")
    return EmitC_LValueType(value_type)


@op_definition
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
        op = cls(parser.resolve_operand(unresolved, parse_lvalue_type(parser)))
        op.attributes |= attrs
        return op


@op_definition
class AssignOp(IRDLOperation):
    """``emitc.assign %v : T to %lv : !emitc.lvalue<T>``: ``lv = v;``."""

    name = "emitc.assign"

    var = operand_def(EmitC_LValueType)
    value = operand_def(EmitCTypeConstr)

    def __init__(self, var: SSAValue, value: SSAValue):
        super().__init__(operands=[var, value])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        printer.print_string(" to ")
        printer.print_ssa_value(self.var)
        printer.print_string(" : ")
        printer.print_attribute(self.var.type)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> AssignOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        value_type = parser.parse_type()
        parser.parse_keyword("to")
        var = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        var_type = parse_lvalue_type(parser)
        attrs = parser.parse_optional_attr_dict()
        op = cls(
            parser.resolve_operand(var, var_type),
            parser.resolve_operand(value, value_type),
        )
        op.attributes |= attrs
        return op

    def verify_(self) -> None:
        assert isinstance(self.var.type, EmitC_LValueType)
        if self.var.type.value_type != self.value.type:
            raise VerifyException(
                f"value of type {self.value.type} cannot be assigned to {self.var.type}"
            )


@op_definition
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


@op_definition
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


@op_definition
class MemberOp(_MemberOp):
    """``s.member`` (generic syntax only)."""

    name = "emitc.member"


@op_definition
class MemberOfPtrOp(_MemberOp):
    """``p->member`` (generic syntax only)."""

    name = "emitc.member_of_ptr"


def _initializer_type(type_: Attribute) -> Attribute:
    """The type MLIR gives an initial value written without one."""
    if isinstance(type_, EmitC_ArrayType):
        return TensorType(type_.element_type, type_.get_shape())
    return type_


def _parse_initializer(parser: Parser, implied: Attribute) -> Attribute:
    """An attribute whose ``: type`` may be left out when it is ``implied``."""
    if isinstance(implied, TensorType) and parser.parse_optional_keyword("dense"):
        value = parser.parse_dense_int_or_fp_elements_attr(
            implied  # pyright: ignore[reportArgumentType]
        )
        if parser.parse_optional_punctuation(":") is not None:
            parser.parse_type()
        return value
    if isinstance(implied, IntegerType | IndexType):
        if (value := parser.parse_optional_integer()) is not None:
            if parser.parse_optional_punctuation(":") is not None:
                implied = parser.parse_type()
            return IntegerAttr(value, implied)  # pyright: ignore
    if isinstance(implied, AnyFloat):
        if (number := parser.parse_optional_number()) is not None:
            if parser.parse_optional_punctuation(":") is not None:
                implied = parser.parse_type()
            return FloatAttr(float(number), implied)  # pyright: ignore
    return parser.parse_attribute()


@op_definition
class GlobalOp(IRDLOperation):
    """``emitc.global [extern] [static] [const] @x : T [= value]``."""

    name = "emitc.global"

    sym_name = prop_def(SymbolNameConstraint())
    type = prop_def(TypeAttribute)
    initial_value = opt_prop_def(Attribute)
    extern_specifier = opt_prop_def(UnitAttr)
    static_specifier = opt_prop_def(UnitAttr)
    const_specifier = opt_prop_def(UnitAttr)

    traits = traits_def(SymbolOpInterface())

    def __init__(
        self,
        name: str,
        type_: Attribute,
        initial_value: Attribute | None = None,
        *,
        extern: bool = False,
        static: bool = False,
        const: bool = False,
    ):
        props: dict[str, Attribute | None] = {
            "sym_name": StringAttr(name),
            "type": type_,
            "initial_value": initial_value,
        }
        for key, flag in (("extern", extern), ("static", static), ("const", const)):
            if flag:
                props[f"{key}_specifier"] = UnitAttr()
        super().__init__(properties=props)

    def verify_(self) -> None:
        if self.extern_specifier is not None and self.static_specifier is not None:
            raise VerifyException("cannot have both static and extern specifiers")
        if self.extern_specifier is not None and self.initial_value is not None:
            raise VerifyException("extern global must not have an initial value")
        if isinstance(self.type, EmitC_LValueType):
            raise VerifyException("global type must not be an lvalue")

    def print(self, printer: Printer) -> None:
        for key in ("extern", "static", "const"):
            if getattr(self, f"{key}_specifier") is not None:
                printer.print_string(f" {key}")
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" : ")
        printer.print_attribute(self.type)
        if self.initial_value is not None:
            printer.print_string(" = ")
            value = self.initial_value
            if getattr(value, "type", None) == _initializer_type(self.type) and hasattr(
                value, "print_without_type"
            ):
                value.print_without_type(printer)  # pyright: ignore[reportAttributeAccessIssue]
            else:
                printer.print_attribute(value)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> GlobalOp:
        flags = {
            key: parser.parse_optional_keyword(key) is not None
            for key in ("extern", "static", "const")
        }
        name = parser.parse_symbol_name().data
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        initial: Attribute | None = None
        if parser.parse_optional_punctuation("=") is not None:
            initial = _parse_initializer(parser, _initializer_type(type_))
        op = cls(name, type_, initial, **flags)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


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
