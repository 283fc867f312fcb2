"""Expression ops of MLIR 22's ``emitc`` dialect that xDSL does not ship.

Arithmetic, bitwise and logical operators, comparisons, casts and the
conditional operator, with MLIR 22's names, properties and syntax
(``EmitC.td``). Assembled into the dialect by ``emitc.py``.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IntegerAttr, i1, i64
from xdsl.dialects.emitc import EmitC_BinaryOperation, EmitCTypeConstr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    operand_def,
    prop_def,
    result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from usmp.dialects.op_definition import op_definition


class _BinaryOp(EmitC_BinaryOperation):
    """``%r = emitc.<op> %a, %b : (T, T) -> T``."""


@op_definition
class SubOp(_BinaryOp):
    """``a - b`` (also pointer - integer and pointer - pointer)."""

    name = "emitc.sub"


@op_definition
class MulOp(_BinaryOp):
    """``a * b``."""

    name = "emitc.mul"


@op_definition
class DivOp(_BinaryOp):
    """``a / b`` (C semantics: integer division truncates)."""

    name = "emitc.div"


@op_definition
class RemOp(_BinaryOp):
    """``a % b`` (integers only)."""

    name = "emitc.rem"


@op_definition
class BitwiseAndOp(_BinaryOp):
    """``a & b``."""

    name = "emitc.bitwise_and"


@op_definition
class BitwiseOrOp(_BinaryOp):
    """``a | b``."""

    name = "emitc.bitwise_or"


@op_definition
class BitwiseXorOp(_BinaryOp):
    """``a ^ b``."""

    name = "emitc.bitwise_xor"


@op_definition
class BitwiseLeftShiftOp(_BinaryOp):
    """``a << b``."""

    name = "emitc.bitwise_left_shift"


@op_definition
class BitwiseRightShiftOp(_BinaryOp):
    """``a >> b``."""

    name = "emitc.bitwise_right_shift"


class _UnaryOp(IRDLOperation):
    """``%r = emitc.<op> %a : (T) -> T``."""

    operand = operand_def(EmitCTypeConstr)
    result = result_def(EmitCTypeConstr)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: SSAValue, result_type: Attribute | None = None):
        super().__init__(operands=[operand], result_types=[result_type or operand.type])


@op_definition
class BitwiseNotOp(_UnaryOp):
    """``~a``."""

    name = "emitc.bitwise_not"


@op_definition
class UnaryMinusOp(_UnaryOp):
    """``-a``."""

    name = "emitc.unary_minus"


@op_definition
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


@op_definition
class LogicalAndOp(_LogicalBinaryOp):
    """``a && b``."""

    name = "emitc.logical_and"


@op_definition
class LogicalOrOp(_LogicalBinaryOp):
    """``a || b``."""

    name = "emitc.logical_or"


@op_definition
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
_PREDICATE_ATTRS = tuple(IntegerAttr(k, i64) for k in range(len(CMP_PREDICATES)))
"""Their attributes, built once (``convert-to-emitc`` builds a comparison
per ``arith.cmpi``)."""


@op_definition
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
            properties={"predicate": _PREDICATE_ATTRS[CMP_PREDICATES.index(predicate)]},
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


@op_definition
class CastOp(IRDLOperation):
    """``%r = emitc.cast %a : T to U``: a C-style cast ``(U) a``."""

    name = "emitc.cast"

    source = operand_def(EmitCTypeConstr)
    dest = result_def(EmitCTypeConstr)
    assembly_format = "$source attr-dict `:` type($source) `to` type($dest)"

    def __init__(self, source: SSAValue, dest_type: Attribute):
        super().__init__(operands=[source], result_types=[dest_type])


@op_definition
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
