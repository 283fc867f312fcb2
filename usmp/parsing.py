"""The MLIR parser of usmp-opt: xDSL's ``Parser`` plus source locations and
input checks. This is the one module that extends xDSL's parser; it uses only
its public surface (``pos``, ``lexer``, ``raise_error`` and the overridable
``parse_optional_*``/``parse_module`` entry points) — if a future xDSL moves
those, this file is the place to adapt.

* ``LocatingParser`` attaches a ``FileLineColLoc`` to every operation it parses
  (unless the source gives an explicit ``loc(...)``, which is kept: e.g. the
  TFLite operator of ``usmp-import-tflite --print-debuginfo``), so that
  passes running long after parsing can still point at the line a user
  wrote.
* It reads the custom forms MLIR 22 prints for upstream ops that xDSL parses
  only in generic form (``memref.global``), so ``mlir-opt``'s output of any
  stage reads back.
* It rejects, at the offending text, what the rest of the compiler could not
  handle: bytes that are not UTF-8, nesting deeper than ``MAX_NESTING``
  (operations in regions, or types/attributes in each other), buffers larger
  than the C code can index (``usmp.dialects.limits``), literals out of range
  of their type (``300 : i8``, ``1.0e39 : f32``) and resource blobs that are
  not hex.
* It reads MLIR's hexadecimal float form bit for bit: in a float context
  (``0x7FC00000 : f32``, ``dense<[0x7F800000, 1.0]> : tensor<2xf32>``) a
  hexadecimal integer literal is the bit pattern of the float type (f16,
  bf16, f32, f64), NaN payloads and infinities included, as MLIR's
  ``parseFloatFromIntegerLiteral``; xDSL reads it as the integer's value in a
  dense literal. A leading minus or more bits than the type has are errors,
  with MLIR's messages. A scalar float attribute holds a Python float, which
  cannot carry every pattern (a signalling f32 NaN is quieted, an f16 NaN
  loses its payload): such a literal is an error at the literal, and a
  ``dense<...>`` (bytes) holds it exactly.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    BytesAttr,
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
    UnknownLoc,
    bf16,
    f16,
    f32,
    f64,
)
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.lexer import Position, Span

from usmp.diagnostics import LocatedError
from usmp.dialects.float_bits import exponent_mask, float_bits
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
_FLOAT_TYPE_NAME = re.compile(r"(?<![0-9A-Za-wyz_])(bf16|f16|f32|f64)(?![0-9A-Za-z_])")
_FLOAT_TYPES: dict[str, Attribute] = {"bf16": bf16, "f16": f16, "f32": f32, "f64": f64}
_HEX_LITERAL = re.compile(r"(-?)\s*0[xX]([0-9a-fA-F]+)")
"""A hexadecimal integer literal, as a float's bit pattern in a float
context (the minus sign only to reject it, as MLIR does)."""
_HEX_BLOB = re.compile(r"0x(?:[0-9a-fA-F]{2}){4,}")


def _largest_finite(t: Attribute) -> float | None:
    """The largest finite value of a float type (None for non-floats)."""
    if not isinstance(t, AnyFloat):
        return None
    bits = t.bitwidth
    if bits == 64:
        return struct.unpack("<d", bytes.fromhex("ffffffffffffef7f"))[0]
    if isinstance(t, BFloat16Type):  # 0x7F7F: f32's exponent, 7 mantissa bits
        return struct.unpack("<f", bytes.fromhex("00007f7f"))[0]
    if bits == 32:
        return struct.unpack("<f", bytes.fromhex("ffff7f7f"))[0]
    if bits == 16:
        return 65504.0
    return None


def _infinity_bits(t: AnyFloat, negative: bool) -> str:
    """MLIR's hexadecimal spelling of +-infinity in ``t``."""
    exponent = exponent_mask(t) | (1 << (t.bitwidth - 1) if negative else 0)
    return f"0x{exponent:0{t.bitwidth // 4}X}"


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
        # Elements of the dense literal being parsed: how many, and the
        # hexadecimal ones (index, value, negative, span); see
        # ``parse_dense_int_or_fp_elements_attr``.
        self._dense_elements = 0
        self._hex_elements: list[tuple[int, int, bool, Span[str]]] | None = None
        # The resource keys written in this input -> the keys they were
        # declared as (see ``_parse_dialect_resource_handle``).
        self._resource_keys: dict[tuple[str, str], str] = {}

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
        if isinstance(module.location, UnknownLoc):
            module.location = self._file_loc(start)
        self._check_resource_blobs()
        return module

    def _parse_dialect_resource_handle(
        self, dialect_name: str, interface: OpAsmDialectInterface
    ) -> str:
        """xDSL's, with each key declared once per input. xDSL keeps the
        blobs in the dialect object, shared by the whole process, and
        declares a key this parser has not declared under a new name if
        another input took it (``w`` -> ``w_0``) -- also the key of the
        blob in ``{-# dialect_resources #-}``, which then fills a third
        name, not the one the ops use: the second module of a process
        with the same key had no data. Here every use of a key in this
        input, its blob included, is the one name it was declared as."""
        name = self.parse_identifier(" for resource handle")
        key = self._resource_keys.get((dialect_name, name))
        if key is None:
            key = interface.declare_resource(name)
            self._resource_keys[dialect_name, name] = key
            self.dialect_resources.add((dialect_name, key))
        return key

    def _check_resource_blobs(self) -> None:
        """Every ``dialect_resources`` blob is ``0x`` + hex bytes, starting with
        the 4-byte alignment MLIR writes (xDSL accepts any ``0x...`` text)."""
        for (dialect_name, name), key in sorted(self._resource_keys.items()):
            dialect = self.ctx.get_optional_dialect(dialect_name)
            interface = (
                dialect.get_interface(OpAsmDialectInterface) if dialect else None
            )
            blob = interface.lookup(key) if interface else None
            if not blob or _HEX_BLOB.fullmatch(blob):
                continue
            text = self.lexer.input.content
            found = re.search(
                rf"(?<![\w$.-]){re.escape(name)}\s*:\s*\"", text[text.rfind("{-#") :]
            )
            at = text.rfind("{-#") + found.start() if found else 0
            self.raise_error(
                f"resource blob '{name}' is not valid; expected \"0x\" followed by "
                "hex digit pairs: a 4-byte alignment, then the data",
                at,
                at + len(name),
            )

    def parse_optional_operation(self) -> Operation | None:
        start = self.pos
        with self._nested("operations"):
            op = (
                self._parse_optional_mlir_custom() or super().parse_optional_operation()
            )
        if op is not None and isinstance(op.location, UnknownLoc):
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
            self._check_hex_float(start, None)
            self.raise_error(str(e), start, self._end_of(start))
        if isinstance(attr, FloatAttr):
            self._check_float_literals(start, attr.type)
            self._check_hex_float(start, attr)
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
                assert isinstance(type_, AnyFloat)
                negative = m.group().startswith("-")
                self.raise_error(
                    f"float literal {m.group()} is out of range for {type_} "
                    f"(largest finite value {largest:.9g}); write "
                    f"{'-' if negative else ''}infinity as the hexadecimal bit "
                    f"pattern {_infinity_bits(type_, negative)}",
                    at,
                    at + len(m.group()),
                )

    def _check_hex_float(self, start: Position, attr: FloatAttr | None) -> None:
        """A scalar hexadecimal float literal (``0x7FC00000 : f32``) is a bit
        pattern: no minus sign, no more bits than the type, and one the
        attribute holds exactly. ``attr`` None: xDSL could not build it; its
        type is read from the text."""
        text = self.lexer.input.content[start : self.pos]
        m = _HEX_LITERAL.match(text)
        if m is None:
            return
        names = _FLOAT_TYPE_NAME.findall(text[m.end() :])
        type_ = (
            attr.type
            if attr is not None
            else _FLOAT_TYPES.get(names[0], None)
            if names
            else None
        )
        if not isinstance(type_, AnyFloat):
            return
        bits = int(m.group(2), 16)
        self._check_hex_bits(bits, bool(m.group(1)), type_, start, start + m.end())
        value = attr.value.data if attr is not None else None
        if value is not None and float_bits(value, type_) != bits:
            self.raise_error(
                f"hexadecimal float literal {m.group()} (a NaN) cannot be held "
                f"exactly in a scalar {type_} attribute (it would read as "
                f"0x{float_bits(value, type_) or 0:X}); a dense<...> constant "
                "holds any bit pattern",
                start,
                start + m.end(),
            )

    def _check_hex_bits(
        self, bits: int, negative: bool, type_: AnyFloat, start: Position, end: Position
    ) -> None:
        if negative:
            self.raise_error(
                "hexadecimal float literal should not have a leading minus "
                "(it is the bit pattern: set the sign bit)",
                start,
                end,
            )
        if bits >> type_.bitwidth:
            self.raise_error(
                f"hexadecimal float constant out of range for type {type_} "
                f"(a bit pattern of at most {type_.bitwidth} bits)",
                start,
                end,
            )

    def parse_dense_int_or_fp_elements_attr(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, type: Any
    ) -> DenseIntOrFPElementsAttr:
        """xDSL's dense literal, with hexadecimal elements of a float type read
        as bit patterns (MLIR's rule; xDSL reads their integer value)."""
        outer = (self._dense_elements, self._hex_elements)
        self._dense_elements, self._hex_elements = 0, []
        try:
            attr = super().parse_dense_int_or_fp_elements_attr(type)
            count, hexes = self._dense_elements, self._hex_elements
        finally:
            self._dense_elements, self._hex_elements = outer
        if not hexes:
            return attr
        return self._with_hex_elements(attr, count, hexes)

    def _parse_tensor_literal_element(self):  # pyright: ignore[reportIncompatibleMethodOverride]
        # An element of a dense literal, before its type is known: a
        # hexadecimal one is recorded and stands as 0 until the type says
        # whether it is an integer or a float's bits.
        element = super()._parse_tensor_literal_element()  # pyright: ignore[reportPrivateUsage]
        m = _HEX_LITERAL.fullmatch(element.span.text)
        if m is not None and self._hex_elements is not None:
            self._hex_elements.append(
                (
                    self._dense_elements,
                    int(m.group(2), 16),
                    bool(m.group(1)),
                    element.span,
                )  # pyright: ignore[reportArgumentType]
            )
            element = replace(element, value=0, is_negative=False)
        self._dense_elements += 1
        return element

    def _with_hex_elements(
        self,
        attr: DenseIntOrFPElementsAttr,
        count: int,
        hexes: list[tuple[int, int, bool, Span[str]]],
    ) -> DenseIntOrFPElementsAttr:
        """``attr`` with its hexadecimal elements (placeholders so far) set:
        a float's bit pattern, an integer's value."""
        element = attr.get_element_type()
        n = len(attr)
        splat = count == 1 and n != 1

        def indices(index: int) -> range:
            return range(n) if splat else range(index, index + 1)

        if isinstance(element, AnyFloat):
            size = element.bitwidth // 8
            data = bytearray(attr.data.data)
            for index, bits, negative, span in hexes:
                self._check_hex_bits(bits, negative, element, span.start, span.end)
                for i in indices(index):
                    data[i * size : (i + 1) * size] = bits.to_bytes(size, "little")
            return DenseIntOrFPElementsAttr(attr.type, BytesAttr(bytes(data)))
        values = list(attr.get_values())
        for index, value, negative, _ in hexes:
            for i in indices(index):
                values[i] = -value if negative else value
        try:
            return DenseIntOrFPElementsAttr.from_list(attr.type, values)  # pyright: ignore
        except (ValueError, OverflowError, VerifyException) as e:
            span = hexes[0][3]
            self.raise_error(str(e), span.start, span.end)

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
