"""Structural ops of MLIR 22's ``emitc`` dialect that xDSL does not ship.

Functions (``emitc.func``, ``emitc.call``, ``emitc.return``,
``emitc.declare_func``), control flow (``emitc.for``, ``emitc.if``,
``emitc.yield``), ``emitc.include`` and ``emitc.verbatim``. Names, properties
and custom syntax are MLIR 22's (``mlir/include/mlir/Dialect/EmitC/IR/EmitC.td``),
so that what xDSL prints
parses with ``mlir-opt`` and translates with ``mlir-translate --mlir-to-cpp``.
Expressions are in ``emitc_expressions.py``; values, memory and globals in
``emitc.py``, which also assembles the dialect.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FlatSymbolRefAttrConstr,
    FunctionType,
    IndexType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    UnitAttr,
    i1,
)
from xdsl.dialects.emitc import EmitCTypeConstr
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    SingleBlockImplicitTerminator,
    SymbolOpInterface,
    ensure_terminator,
)
from xdsl.utils.exceptions import VerifyException

from usmp.dialects.op_definition import op_definition


@op_definition
class IncludeOp(IRDLOperation):
    """``emitc.include <"stdint.h">`` (system) or ``emitc.include "x.h"``."""

    name = "emitc.include"

    include = prop_def(StringAttr)
    is_standard_include = opt_prop_def(UnitAttr)

    def __init__(self, include: str, is_standard_include: bool = True):
        props: dict[str, Attribute] = {"include": StringAttr(include)}
        if is_standard_include:
            props["is_standard_include"] = UnitAttr()
        super().__init__(properties=props)

    @classmethod
    def parse(cls, parser: Parser) -> IncludeOp:
        standard = parser.parse_optional_punctuation("<") is not None
        include = parser.parse_str_literal("include file name")
        if standard:
            parser.parse_punctuation(">")
        op = cls(include, standard)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" <" if self.is_standard_include else " ")
        printer.print_string_literal(self.include.data)
        if self.is_standard_include:
            printer.print_string(">")
        printer.print_op_attributes(self.attributes)


@op_definition
class FuncOp(IRDLOperation):
    """A C function: ``emitc.func @f(%a: i32) -> i32 attributes {specifiers =
    ["static"]} { ... }``; without a body (``private``) it is a declaration."""

    name = "emitc.func"

    body = region_def()
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    specifiers = opt_prop_def(ArrayAttr[StringAttr])
    arg_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    res_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        function_type: FunctionType,
        region: Region | None = None,
        specifiers: Sequence[str] = (),
    ):
        if region is None:
            region = Region(Block(arg_types=function_type.inputs))
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "function_type": function_type,
        }
        if specifiers:
            props["specifiers"] = ArrayAttr(StringAttr(s) for s in specifiers)
        super().__init__(properties=props, regions=[region])

    @property
    def is_declaration(self) -> bool:
        return not self.body.blocks

    def verify_(self) -> None:
        if len(self.function_type.outputs) > 1:
            raise VerifyException("requires zero or exactly one result")
        if self.is_declaration:
            if self.attributes.get("sym_visibility") != StringAttr("private"):
                raise VerifyException("external function must be private")
            return
        if self.body.blocks.first.arg_types != self.function_type.inputs.data:  # pyright: ignore[reportOptionalMemberAccess]
            raise VerifyException("entry block arguments must match the function type")

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        visibility = parser.parse_optional_visibility_keyword()
        name, inputs, outputs, region, extra, arg_attrs, res_attrs = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type")
        )
        func = cls(name, FunctionType.from_lists(inputs, outputs), region)
        attrs = dict(extra.data) if extra is not None else {}
        if isinstance(spec := attrs.pop("specifiers", None), ArrayAttr):
            func.specifiers = spec  # pyright: ignore[reportAttributeAccessIssue]
        func.arg_attrs = arg_attrs  # pyright: ignore[reportAttributeAccessIssue]
        func.res_attrs = res_attrs  # pyright: ignore[reportAttributeAccessIssue]
        if visibility is not None:
            attrs["sym_visibility"] = visibility
        func.attributes |= attrs
        return func

    def print(self, printer: Printer) -> None:
        attrs = dict(self.attributes)
        if (visibility := attrs.pop("sym_visibility", None)) is not None:
            assert isinstance(visibility, StringAttr)
            printer.print_string(f" {visibility.data}")
        if self.specifiers is not None:
            attrs = {"specifiers": self.specifiers, **attrs}
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            attrs,
            arg_attrs=self.arg_attrs,
            res_attrs=self.res_attrs,
            reserved_attr_names=(),
        )


@op_definition
class ReturnOp(IRDLOperation):
    """``emitc.return`` / ``emitc.return %v : i32``."""

    name = "emitc.return"

    operand = opt_operand_def(EmitCTypeConstr)
    traits = traits_def(IsTerminator(), HasParent(FuncOp))
    assembly_format = "attr-dict ($operand^ `:` type($operand))?"

    def __init__(self, value: SSAValue | None = None):
        super().__init__(operands=[[value] if value is not None else []])


@op_definition
class CallOp(IRDLOperation):
    """``emitc.call @f(%a) : (i32) -> i32``: a call of an ``emitc.func``."""

    name = "emitc.call"

    callee = prop_def(FlatSymbolRefAttrConstr)
    arg_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    res_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    args = var_operand_def(EmitCTypeConstr)
    res = var_result_def(EmitCTypeConstr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$callee `(` $args `)` attr-dict `:` functional-type($args, results)"
    )

    def __init__(
        self,
        callee: str,
        args: Sequence[SSAValue],
        result_types: Sequence[Attribute] = (),
    ):
        super().__init__(
            operands=[args],
            result_types=[result_types],
            properties={"callee": SymbolRefAttr(callee)},
        )


@op_definition
class DeclareFuncOp(IRDLOperation):
    """``emitc.declare_func @f``: print ``f``'s prototype here."""

    name = "emitc.declare_func"

    sym_name = prop_def(FlatSymbolRefAttrConstr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$sym_name attr-dict"

    def __init__(self, callee: str):
        super().__init__(properties={"sym_name": SymbolRefAttr(callee)})


@op_definition
class YieldOp(IRDLOperation):
    """Terminator of ``emitc.for``, ``emitc.if`` (and ``emitc.expression``)."""

    name = "emitc.yield"

    result = opt_operand_def(EmitCTypeConstr)
    traits = traits_def(IsTerminator())
    assembly_format = "attr-dict ($result^ `:` type($result))?"

    def __init__(self, value: SSAValue | None = None):
        super().__init__(operands=[[value] if value is not None else []])

    def verify_(self) -> None:
        parent = self.parent_op()
        if not isinstance(parent, ForOp | IfOp):
            raise VerifyException(
                "expects parent op to be one of 'emitc.for, emitc.if'"
            )
        if self.result is not None:
            raise VerifyException("yields a value but its parent defines none")


@op_definition
class ForOp(IRDLOperation):
    """``emitc.for %i = %lb to %ub step %s : !emitc.ptrdiff_t { ... }``, i.e.
    ``for (T i = lb; i < ub; i += s)``; the type is omitted when it is
    ``index``. The body ends with an (implicit) ``emitc.yield``."""

    name = "emitc.for"

    lowerBound = operand_def(EmitCTypeConstr)
    upperBound = operand_def(EmitCTypeConstr)
    step = operand_def(EmitCTypeConstr)
    region = region_def("single_block")

    traits = traits_def(SingleBlockImplicitTerminator(YieldOp))

    def __init__(
        self, lb: SSAValue, ub: SSAValue, step: SSAValue, body: Region | None = None
    ):
        if body is None:
            body = Region(Block([YieldOp()], arg_types=[lb.type]))
        super().__init__(operands=[lb, ub, step], regions=[body])

    @property
    def induction_var(self) -> SSAValue:
        return self.region.block.args[0]

    def verify_(self) -> None:
        types = {self.lowerBound.type, self.upperBound.type, self.step.type}
        if len(types) != 1:
            raise VerifyException(
                "lower bound, upper bound and step must have one type"
            )
        args = self.region.block.args
        if len(args) != 1 or args[0].type != self.lowerBound.type:
            raise VerifyException(
                "the body must have exactly one argument, the induction variable, "
                "of the bounds' type"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.induction_var)
        printer.print_string(" = ")
        printer.print_ssa_value(self.lowerBound)
        printer.print_string(" to ")
        printer.print_ssa_value(self.upperBound)
        printer.print_string(" step ")
        printer.print_ssa_value(self.step)
        if not isinstance(self.lowerBound.type, IndexType):
            printer.print_string(" : ")
            printer.print_attribute(self.lowerBound.type)
        printer.print_string(" ")
        printer.print_region(
            self.region, print_entry_block_args=False, print_block_terminators=False
        )
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        indvar = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        lb = parser.parse_unresolved_operand()
        parser.parse_keyword("to")
        ub = parser.parse_unresolved_operand()
        parser.parse_keyword("step")
        step = parser.parse_unresolved_operand()
        type_: Attribute = IndexType()
        if parser.parse_optional_punctuation(":") is not None:
            type_ = parser.parse_type()
        body = parser.parse_region((indvar.resolve(type_),))
        op = cls(
            parser.resolve_operand(lb, type_),
            parser.resolve_operand(ub, type_),
            parser.resolve_operand(step, type_),
            body,
        )
        if parser.parse_optional_keyword("attributes"):
            op.attributes |= parser.parse_optional_attr_dict()
        for trait in op.get_traits_of_type(SingleBlockImplicitTerminator):
            ensure_terminator(op, trait)
        return op


@op_definition
class IfOp(IRDLOperation):
    """``emitc.if %cond { ... } else { ... }`` (no results; else optional)."""

    name = "emitc.if"

    condition = operand_def(i1)
    thenRegion = region_def("single_block")
    elseRegion = region_def()

    traits = traits_def(SingleBlockImplicitTerminator(YieldOp))

    def __init__(
        self,
        cond: SSAValue,
        then_region: Region | None = None,
        else_region: Region | None = None,
    ):
        super().__init__(
            operands=[cond],
            regions=[
                then_region or Region(Block([YieldOp()])),
                else_region if else_region is not None else Region(),
            ],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.condition)
        printer.print_string(" ")
        printer.print_region(self.thenRegion, print_block_terminators=False)
        if self.elseRegion.blocks:
            printer.print_string(" else ")
            printer.print_region(self.elseRegion, print_block_terminators=False)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> IfOp:
        cond = parser.resolve_operand(parser.parse_unresolved_operand(), i1)
        then_region = parser.parse_region()
        else_region = Region()
        if parser.parse_optional_keyword("else"):
            else_region = parser.parse_region()
        op = cls(cond, then_region, else_region)
        op.attributes |= parser.parse_optional_attr_dict()
        for region in (op.thenRegion, op.elseRegion):
            for block in region.blocks:
                if not isinstance(block.last_op, YieldOp):
                    block.add_op(YieldOp())
        return op


@op_definition
class VerbatimOp(IRDLOperation):
    """``emitc.verbatim "text {}" args %v : T``: text emitted as a line."""

    name = "emitc.verbatim"

    value = prop_def(StringAttr)
    fmtArgs = var_operand_def()
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$value (`args` $fmtArgs^ `:` type($fmtArgs))? attr-dict"

    def __init__(self, value: str, args: Sequence[SSAValue] = ()):
        super().__init__(properties={"value": StringAttr(value)}, operands=[args])
