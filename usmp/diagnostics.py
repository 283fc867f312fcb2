"""Located diagnostics: every error caused by input names ``file:line:col``.

* ``LocatingParser`` attaches a ``FileLineColLoc`` to every operation it parses
  (unless the source gives an explicit ``loc(...)``), so that passes running
  long after parsing can still point at the line a user wrote.
* ``located_error(op, msg)`` builds the ``DiagnosticException`` passes raise.
* ``verify_located(module)`` verifies op by op and reports the first failure
  at the failing op's location (xDSL's own verifier dumps the whole module).

``LocatingParser`` also rejects, at the offending text, what the rest of the
compiler could not handle: bytes that are not UTF-8, nesting deeper than
``MAX_NESTING`` (operations in regions, or types/attributes in each other),
buffers larger than the C code can index (``usmp.dialects.limits``), literals
out of range of their type (``300 : i8``, ``1.0e39 : f32``) and resource
blobs that are not hex.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    f16,
    f32,
    f64,
)
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import DiagnosticException, VerifyException
from xdsl.utils.lexer import Position, Span

from usmp.dialects.limits import alignment_error, buffer_size_error

MAX_NESTING = 64
"""Deepest nesting accepted: of operations in regions, and of types and
attributes in each other. Real models nest about 10 deep; the parser, the
verifier, the passes and the printer all recurse, so a bound here keeps them
all within Python's recursion limit."""


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
    name, ``model.tflite:12 (CONV_2D)``. ``None`` for other locations."""
    if isinstance(loc, NameLoc):
        inner = format_location(loc.location)
        return None if inner is None else f"{inner} ({loc.desc.data})"
    if isinstance(loc, FileLineColLoc):
        where = f"{loc.filename.data}:{loc.line.data}"
        return f"{where}:{loc.column.data}" if loc.column.data else where
    return None


class LocatedError(DiagnosticException):
    """An input error at a source location; ``str()`` is the full diagnostic."""

    def __init__(self, location: str, message: str):
        super().__init__(f"{location}: error: {message}")
        self.location = location
        self.message = message


def located_error(op: Operation | None, message: str) -> LocatedError:
    return LocatedError(location_of(op), message)


def verify_located(root: Operation) -> None:
    """Verify ``root`` and everything nested in it, raising a ``LocatedError``
    at the first op (in textual order) whose verifier fails."""
    for op in root.walk():
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


def decode_source(data: bytes, name: str, line_offset: int = 0) -> str:
    """``data`` as UTF-8 text, or a ``LocatedError`` at the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1 + line_offset
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise LocatedError(
            f"{name}:{line}:{col}",
            f"byte 0x{data[e.start]:02x} is not valid UTF-8; MLIR source must be "
            "UTF-8 text",
        ) from None


_DECIMAL_FLOAT = re.compile(r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?")
_FLOAT_TYPE_NAME = re.compile(r"(?<![b0-9A-Za-wyz_])(f16|f32|f64)(?![0-9A-Za-z_])")
_FLOAT_TYPES: dict[str, Attribute] = {"f16": f16, "f32": f32, "f64": f64}
_HEX_BLOB = re.compile(r"0x(?:[0-9a-fA-F]{2}){4,}")


def _largest_finite(t: Attribute) -> float | None:
    """The largest finite value of a float type (None for non-floats)."""
    if not isinstance(t, AnyFloat):
        return None
    bits = t.bitwidth
    if bits == 64:
        return struct.unpack("<d", bytes.fromhex("ffffffffffffef7f"))[0]
    if bits == 32:
        return struct.unpack("<f", bytes.fromhex("ffff7f7f"))[0]
    if bits == 16:
        return 65504.0
    return None


class LocatingParser(Parser):
    """An xDSL parser that records where each operation was written.

    ``line_offset`` is added to line numbers (for ``--split-input-file``
    chunks, so locations name lines of the whole file)."""

    def __init__(
        self, ctx: Context, input: str | bytes, name: str, line_offset: int = 0
    ):
        if isinstance(input, bytes):
            input = decode_source(input, name, line_offset)
        super().__init__(ctx, input, name)
        self.line_offset = line_offset
        self.op_depth = 0
        self.attr_depth = 0

    def current_token_span(self) -> Span[str] | Span[bytes]:
        return self._current_token.span

    def _end_of(self, start: Position) -> Position:
        """End of the text parsed since ``start`` (trailing blanks excluded)."""
        text = self.lexer.input.content[start : self.pos]
        return start + len(text.rstrip())

    @contextmanager
    def _nested(self, what: str) -> Iterator[None]:
        depth = self.op_depth if what == "operations" else self.attr_depth
        if depth >= MAX_NESTING:
            self.raise_error(
                f"{what} are nested more than {MAX_NESTING} levels deep; at most "
                f"{MAX_NESTING} levels are accepted"
            )
        if what == "operations":
            self.op_depth += 1
        else:
            self.attr_depth += 1
        try:
            yield
        finally:
            if what == "operations":
                self.op_depth -= 1
            else:
                self.attr_depth -= 1

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        start = self._current_token.span
        try:
            module = super().parse_module(allow_implicit_module)
        except RecursionError:
            # Nesting the depth counters do not see (e.g. the brackets of a
            # dense literal): the recursive-descent parser ran out of stack.
            self.raise_error(
                f"input is nested too deeply to parse; at most {MAX_NESTING} "
                "levels of nesting are accepted"
            )
        if not isinstance(module.location, FileLineColLoc):
            where = start.get_location()
            module.location = FileLineColLoc(
                StringAttr(self.lexer.input.name),
                IntAttr(where.line + self.line_offset),
                IntAttr(where.col),
            )
        self._check_resource_blobs()
        return module

    def _check_resource_blobs(self) -> None:
        """Every ``dialect_resources`` blob is ``0x`` + hex bytes, starting with
        the 4-byte alignment MLIR writes (xDSL accepts any ``0x...`` text)."""
        for dialect_name, key in sorted(self.dialect_resources):
            dialect = self.ctx.get_optional_dialect(dialect_name)
            interface = (
                dialect.get_interface(OpAsmDialectInterface) if dialect else None
            )
            blob = interface.lookup(key) if interface else None
            if not blob or _HEX_BLOB.fullmatch(blob):
                continue
            text = self.lexer.input.content
            found = re.search(
                rf"(?<![\w$.-]){re.escape(key)}\s*:\s*\"", text[text.rfind("{-#") :]
            )
            at = text.rfind("{-#") + found.start() if found else 0
            self.raise_error(
                f"resource blob '{key}' is not valid; expected \"0x\" followed by "
                "hex digit pairs: a 4-byte alignment, then the data",
                at,
                at + len(key),
            )

    def parse_optional_operation(self) -> Operation | None:
        span = self._current_token.span
        with self._nested("operations"):
            op = super().parse_optional_operation()
        if op is not None and not isinstance(op.location, FileLineColLoc):
            where = span.get_location()
            op.location = FileLineColLoc(
                StringAttr(self.lexer.input.name),
                IntAttr(where.line + self.line_offset),
                IntAttr(where.col),
            )
        return op

    def parse_optional_type(self):  # pyright: ignore[reportIncompatibleMethodOverride]
        start = self.pos
        with self._nested("types and attributes"):
            t = super().parse_optional_type()
        if t is not None and (error := buffer_size_error(t)) is not None:
            self.raise_error(error, start, self._end_of(start))
        return t

    def parse_optional_attribute(self) -> Attribute | None:
        start = self.pos
        try:
            with self._nested("types and attributes"):
                attr = super().parse_optional_attribute()
        except (ValueError, OverflowError, VerifyException) as e:
            # an attribute constructor rejected a parsed value (e.g. 300 : i8)
            self._check_float_literals(start, None)
            self.raise_error(str(e), start, self._end_of(start))
        if isinstance(attr, FloatAttr):
            self._check_float_literals(start, attr.type)
        elif isinstance(attr, DenseIntOrFPElementsAttr):
            self._check_float_literals(start, attr.get_element_type())
        return attr

    def _check_float_literals(self, start: Position, type_: Attribute | None) -> None:
        """A decimal float literal must be finite in its type: ``1.0e39 : f32``
        would silently become infinity (hexadecimal literals may spell it).
        ``type_`` None: the attribute could not be built; its float type is
        read from the text."""
        text = self.lexer.input.content[start : self.pos]
        if type_ is None:
            names = _FLOAT_TYPE_NAME.findall(text)
            type_ = _FLOAT_TYPES.get(names[-1]) if names else None
        largest = _largest_finite(type_) if type_ is not None else None
        if largest is None:
            return
        for m in _DECIMAL_FLOAT.finditer(text):
            if abs(float(m.group())) > largest:
                at = start + m.start()
                self.raise_error(
                    f"float literal {m.group()} is out of range for {type_} "
                    f"(largest finite value {largest:.9g}); infinities are "
                    "written as hexadecimal literals",
                    at,
                    at + len(m.group()),
                )
