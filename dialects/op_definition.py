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

``compile_formats_on_first_use()`` does the same for the op classes xDSL
defines (``arith``, ``math``, ``memref``, ...), from the moment it is called
to the end of the process: the console entry points call it before they
import xDSL's dialects, whose 106 formats took 15-25 ms of every
``usmp-compile`` (a compile prints only its relay module).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, TypeVar

from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation, irdl_op_definition
from xdsl.utils.exceptions import ParseError, PyRDLOpDefinitionError

if TYPE_CHECKING:
    from xdsl.irdl import OpDef
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
    for name, method in _format_methods(fmt, op_def).items():
        setattr(cls, name, method)
    return cls


def _format_methods(fmt: str, op_def: OpDef) -> dict[str, Any]:
    """The ``parse`` and ``print`` xDSL's ``irdl_op_definition`` gives an op
    with the format ``fmt``, the program compiled at the first call of
    either."""
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

    return {"parse": classmethod(parse_with_format), "print": print_with_format}


def compile_formats_on_first_use() -> bool:
    """From now on, every op class xDSL's ``irdl_op_definition`` defines
    compiles its assembly format when first parsed or printed (module note):
    xDSL's accessors of the op, built without the format, plus the
    ``_format_methods``. For a process that does one job and ends (the
    console entry points), called before xDSL's dialects are imported (their
    classes are defined then); calling it again changes nothing. Whether
    the deferral is in place (False if this xDSL has no
    ``get_accessors_from_op_def`` to wrap: formats compile as before)."""
    from xdsl.irdl import operations

    build = getattr(operations, "get_accessors_from_op_def", None)
    if build is None:
        return False
    if getattr(build, "formats_on_first_use", False):
        return True

    def accessors(op_def: OpDef, custom_verify: Any) -> dict[str, Any]:
        fmt = op_def.assembly_format
        if fmt is None:
            return build(op_def, custom_verify)
        op_def.assembly_format = None
        try:
            methods = build(op_def, custom_verify)
        finally:
            op_def.assembly_format = fmt
        return {**methods, **_format_methods(fmt, op_def)}

    accessors.formats_on_first_use = True  # pyright: ignore[reportFunctionMemberAccess]
    operations.get_accessors_from_op_def = accessors
    return True
