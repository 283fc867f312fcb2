"""Located diagnostics: every error caused by input names ``file:line:col``.

* ``located_error(op, msg)`` builds the ``DiagnosticException`` passes raise.
* ``verify_located(module)`` verifies op by op and reports the first failure
  at the failing op's location (xDSL's own verifier dumps the whole module).

The parser that records those locations is ``usmp.parsing.LocatingParser``.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntegerAttr,
    NameLoc,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Operation
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from usmp.dialects.limits import alignment_error


def location_of(op: Operation | None) -> str:
    """``file:line:col`` of ``op`` or of its nearest located ancestor."""
    while op is not None:
        text = format_location(op.location)
        if text is not None:
            return text
        op = op.parent_op()
    return "<unknown>"


def format_location(loc: Attribute) -> str | None:
    """``file:line:col``; ``file:line`` for column 0 (no column: the TFLite
    importer's ``model.tflite:<operator index>``); a ``NameLoc`` adds its
    name, ``model.tflite:12 (CONV_2D)``; a name around a name (the tensor an
    op computes, ``usmp.frontend.builder``) is left out; a name around
    nothing (``loc("model.tflite")``, the TFLite importer's ``@main``) is
    the name. ``None`` for other locations."""
    if isinstance(loc, NameLoc) and isinstance(loc.location, NameLoc):
        return format_location(loc.location)
    if isinstance(loc, NameLoc) and isinstance(loc.location, UnknownLoc):
        return loc.desc.data
    if isinstance(loc, NameLoc):
        inner = format_location(loc.location)
        return None if inner is None else f"{inner} ({loc.desc.data})"
    if isinstance(loc, FileLineColLoc):
        where = f"{loc.filename.data}:{loc.line.data}"
        return f"{where}:{loc.column.data}" if loc.column.data else where
    return None


def tensor_location(loc: Attribute) -> tuple[str, str | None, int | None] | None:
    """The TFLite tensor an op computes, from the importer's
    ``loc("tensor"("OPCODE"("model.tflite":k:0)))``: ``(tensor, "OPCODE",
    k)``; ``None`` for any other location."""
    if not isinstance(loc, NameLoc) or not isinstance(loc.location, NameLoc):
        return None
    inner = loc.location
    if isinstance(inner.location, FileLineColLoc):
        return loc.desc.data, inner.desc.data, inner.location.line.data
    return loc.desc.data, inner.desc.data, None


def operator_location(loc: Attribute) -> tuple[str, int] | None:
    """``("OPCODE", k)`` of an op the TFLite importer emitted for operator
    ``k`` (named or not after its tensor); ``None`` otherwise."""
    if isinstance(loc, NameLoc) and isinstance(loc.location, NameLoc):
        loc = loc.location
    if isinstance(loc, NameLoc) and isinstance(loc.location, FileLineColLoc):
        return loc.desc.data, loc.location.line.data
    return None


class LocatedError(DiagnosticException):
    """An input error at a source location; ``str()`` is the full diagnostic."""

    def __init__(self, location: str, message: str):
        super().__init__(f"{location}: error: {message}")
        self.location = location
        self.message = message


def located_error(op: Operation | None, message: str) -> LocatedError:
    return LocatedError(location_of(op), message)


def verify_located(
    root: Operation, reached: Callable[[int, int, Operation], None] | None = None
) -> None:
    """Verify ``root`` and everything nested in it, raising a ``LocatedError``
    at the first op (in textual order) whose verifier fails. ``reached``
    hears ``(k, n, op)`` as the walk reaches the ``k``-th of the ``n`` ops
    directly inside ``root`` (progress)."""
    tops = (
        {
            op: k
            for region in root.regions
            for block in region.blocks
            for k, op in enumerate(block.ops)
        }
        if reached is not None
        else {}
    )
    for op in root.walk():
        if reached is not None and op in tops:
            reached(tops[op] + 1, len(tops), op)
        if op.has_trait(SymbolTable):
            _check_unique_symbols(op)
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            raise located_error(op, f"'{op.name}' op {e.args[0]}") from None
        # upstream ops (memref.alloc/alloca/global) accept any power of two
        alignment = op.properties.get("alignment")
        if isinstance(alignment, IntegerAttr):
            value = alignment.value.data
            if (error := alignment_error(value)) is not None:
                raise located_error(op, f"'{op.name}' op {error}")


def _check_unique_symbols(table: Operation) -> None:
    """A symbol defined twice, reported at its second definition (xDSL's
    ``SymbolTable`` verifier reports it at the table)."""
    seen: set[str] = set()
    for region in table.regions:
        for block in region.blocks:
            for op in block.ops:
                name = op.get_attr_or_prop("sym_name")
                if not isinstance(name, StringAttr):
                    continue
                if name.data in seen:
                    raise located_error(
                        op,
                        f'symbol "@{name.data}" is defined twice; every symbol of '
                        f"a '{table.name}' must have a unique name",
                    )
                seen.add(name.data)
