"""``op_definition``: xDSL's ``irdl_op_definition`` with the op's
declarative assembly format compiled when the op is first parsed or
printed, not when its class is defined.

xDSL compiles an ``assembly_format`` (lexes and parses it into a
``FormatProgram``) inside ``irdl_op_definition``: for the project's 91
formatted ops that was a fifth of loading its dialects (about 15 ms of
every ``usmp-compile`` and ``usmp-opt`` process), for formats most runs
never use: a ``.tflite`` compile builds its relay ops and prints none.
Here the class is defined without its format, then gets the ``parse`` and
``print`` xDSL would have given it, each compiling the program once on
first call. Parsed and printed text, the op definition (its
``assembly_format`` included) and the check that an op does not define
both a format and its own ``parse``/``print`` are xDSL's; only a format
that does not compile fails later, at the first use, instead of at import
(``tests/test_op_definition.py`` compiles every format of every dialect).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, TypeVar

from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation, irdl_op_definition
from xdsl.utils.exceptions import ParseError, PyRDLOpDefinitionError

if TYPE_CHECKING:
    from xdsl.irdl.declarative_assembly_format import FormatProgram
    from xdsl.parser import Parser
    from xdsl.printer import Printer

_OpT = TypeVar("_OpT", bound=IRDLOperation)

_UNSET = object()


def op_definition(cls: type[_OpT]) -> type[_OpT]:
    """``irdl_op_definition(cls)``, its assembly format compiled on first use
    (module note)."""
    fmt: str | None = cls.assembly_format
    if fmt is None:
        return irdl_op_definition(cls)
    if (
        cls.print != Operation.print
        or not inspect.ismethod(cls.parse)
        or cls.parse.__func__ != Operation.parse.__func__
    ):  # xDSL's own check (OpDef.from_pyrdl), which sees no format below
        raise PyRDLOpDefinitionError(
            "Cannot define both an assembly format (with the assembly_format "
            "variable) and the print and parse methods."
        )
    own = cls.__dict__.get("assembly_format", _UNSET)
    cls.assembly_format = None
    try:
        cls = irdl_op_definition(cls)
    finally:
        if own is _UNSET:
            del cls.assembly_format
        else:
            cls.assembly_format = fmt
    op_def = cls.get_irdl_definition()
    op_def.assembly_format = fmt
    compiled: list[FormatProgram] = []

    def program() -> FormatProgram:
        if not compiled:
            from xdsl.irdl.declarative_assembly_format import FormatProgram

            try:
                compiled.append(FormatProgram.from_str(fmt, op_def))
            except ParseError as e:
                raise PyRDLOpDefinitionError(
                    "Error during the parsing of the assembly format: ", e.args
                ) from e
        return compiled[0]

    def parse_with_format(kind: type[_OpT], parser: Parser) -> _OpT:
        return program().parse(parser, kind)

    def print_with_format(self: IRDLOperation, printer: Printer) -> None:
        return program().print(printer, self)

    # what xDSL's irdl_op_definition sets with a format
    setattr(cls, "parse", classmethod(parse_with_format))  # noqa: B010
    setattr(cls, "print", print_with_format)  # noqa: B010
    return cls
