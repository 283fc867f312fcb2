"""The MLIR parser of usmp-opt: xDSL's ``Parser`` plus source locations and
input checks. This is the one module that extends xDSL's parser; it uses only
its public surface (``pos``, ``lexer``, ``raise_error`` and the overridable
``parse_optional_*``/``parse_module`` entry points) — if a future xDSL moves
those, this file is the place to adapt.

* ``LocatingParser`` attaches a ``FileLineColLoc`` to every operation it parses
  (unless the source gives an explicit ``loc(...)``), so that passes running
  long after parsing can still point at the line a user wrote.
* It reads the custom forms MLIR 22 prints for upstream ops that xDSL parses
  only in generic form (``memref.global``), so ``mlir-opt``'s output of any
  stage reads back.
* It rejects, at the offending text, what the rest of the compiler could not
  handle: bytes that are not UTF-8, nesting deeper than ``MAX_NESTING``
  (operations in regions, or types/attributes in each other), buffers larger
  than the C code can index (``usmp.dialects.limits``), literals out of range
  of their type (``300 : i8``, ``1.0e39 : f32``) and resource blobs that are
  not hex.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f16,
    f32,
    f64,
)
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.lexer import Position, Span

from usmp.diagnostics import LocatedError
from usmp.dialects.limits import buffer_size_error

MAX_NESTING = 64
"""Deepest nesting accepted: of operations in regions, and of types and
attributes in each other. Real models nest about 10 deep; the parser, the
verifier, the passes and the printer all recurse, so a bound here keeps them
all within Python's recursion limit."""


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
        # Line of the last located position, so that locating the next op
        # counts only the newlines in between (xDSL's Span.get_location counts
        # from the start of the file: quadratic over a whole module).
        self._line_at: tuple[Position, int] = (0, 1)

    def current_token_span(self) -> Span[str] | Span[bytes]:
        """The (empty) span at the next token, for errors raised by callers."""
        return Span(self.pos, self.pos, self.lexer.input)

    def _file_loc(self, at: Position) -> FileLineColLoc:
        text = self.lexer.input.content
        last, line = self._line_at
        if at < last:  # rare (never in a forward parse): count from the start
            last, line = 0, 1
        line += text.count("\n", last, at)
        self._line_at = (at, line)
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        return FileLineColLoc(
            StringAttr(self.lexer.input.name),
            IntAttr(line + self.line_offset),
            IntAttr(column),
        )

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
        start = self.pos
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
            module.location = self._file_loc(start)
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
        start = self.pos
        with self._nested("operations"):
            op = (
                self._parse_optional_mlir_custom() or super().parse_optional_operation()
            )
        if op is not None and not isinstance(op.location, FileLineColLoc):
            op.location = self._file_loc(start)
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

    def _parse_optional_mlir_custom(self) -> Operation | None:
        """Custom forms MLIR 22 prints for upstream ops xDSL parses only in
        generic form (so that ``mlir-opt``'s output reads back)."""
        if self.parse_optional_keyword("memref.global") is not None:
            return self._parse_memref_global()
        if self.parse_optional_keyword("memref.copy") is not None:
            return self._parse_memref_copy()
        return None

    def _parse_memref_copy(self) -> memref.CopyOp:
        """``memref.copy %source, %target {attrs} : memref<...> to memref<...>``."""
        source = self.parse_unresolved_operand()
        self.parse_punctuation(",")
        target = self.parse_unresolved_operand()
        attrs = self.parse_optional_attr_dict()
        self.parse_punctuation(":")
        source_type = self.parse_type()
        self.parse_keyword("to")
        target_type = self.parse_type()
        op = memref.CopyOp(
            self.resolve_operand(source, source_type),
            self.resolve_operand(target, target_type),
        )
        op.attributes.update(attrs)
        return op

    def _parse_memref_global(self) -> memref.GlobalOp:
        """``memref.global ["private"|"public"|"nested"] [constant] @sym :
        memref<...> [= dense<...> | = uninitialized] {attrs}`` (the dense
        literal without its type: it is the memref's shape as a tensor)."""
        visibility = self.parse_optional_str_literal() or "public"
        constant = self.parse_optional_keyword("constant") is not None
        name = self.parse_symbol_name()
        self.parse_punctuation(":")
        type_start = self.pos
        type_ = self.parse_type()
        if not isinstance(type_, MemRefType):
            self.raise_error(
                f"memref.global: expected a memref type, got {type_}",
                type_start,
                self.pos,
            )
        initial: Attribute = UnitAttr()
        if self.parse_optional_punctuation("=") is not None:
            if self.parse_optional_keyword("uninitialized") is None:
                self.parse_keyword("dense")
                tensor = TensorType(type_.element_type, type_.get_shape())
                initial = self.parse_dense_int_or_fp_elements_attr(tensor)
        attrs = self.parse_optional_attr_dict()
        alignment = attrs.pop("alignment", None)
        op = memref.GlobalOp.get(
            name,
            type_,
            initial,
            StringAttr(visibility),
            UnitAttr() if constant else None,
            alignment if isinstance(alignment, IntegerAttr) else None,
        )
        if alignment is not None and not isinstance(alignment, IntegerAttr):
            attrs["alignment"] = alignment  # the verifier reports it
        op.attributes |= attrs
        return op
